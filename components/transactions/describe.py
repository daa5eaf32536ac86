"""Describe a transaction by id and alter it (the actions go in one AlterTransaction request;
the page performs it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from backend.errors import LanceNamespaceError
from backend.rules import alter_actions as aa
from backend.rules import ids
from backend.services import transactions as txsv
from backend.text import plural
from components import feedback, state
from components.common import dataframe
from components.transactions.history import remember_transaction


@dataclass(frozen=True)
class Alter:
    """The user asked to apply these actions to a transaction in one request."""

    txn_id: list[str]
    actions: list[dict[str, Any]]


def show_transaction(txn_id: Sequence[str], response: Any) -> None:
    """Make a Describe/AlterTransaction answer the transaction on display."""
    state.put(
        state.Txn.DESCRIBED,
        {"id": list(txn_id), "status": response.status, "properties": response.properties},
    )


def render_describe_form(
    delimiter: str, *, context: Sequence[str] | None = None
) -> list[str] | None:
    """The transaction id; its parts when "Describe" is pressed and the id parses. A bare
    id (the uuid alone, as builds answer with it) is looked up in ``context``, the table
    picked, when the backend does not know it on its own."""
    where = ids.display_id(context) if context else None
    with st.form(f"{state.Txn.DESCRIBE}.form", border=False):
        text = st.text_input(
            "Transaction id", key=state.Txn.ID_INPUT,
            placeholder="namespace › table › <transaction uuid or version>, or batch-<id>",
            help=f"Split by › (or by the connection's delimiter {delimiter}). Table transactions are the "
            "table id + the transaction uuid (or the version)"
            + (f"; a bare uuid or version is looked up in {where}." if where else "."),
        )  # fmt: skip
        if where:
            st.caption(feedback.as_text(f"A bare transaction id is looked up in {where}."))
        submitted = st.form_submit_button("Describe", icon=":material/search:")
    if not submitted:
        return None
    try:
        return txsv.parse_transaction_id(text, delimiter)
    except LanceNamespaceError as err:
        feedback.show("error", str(err))
        return None


def render_transaction(described: dict[str, Any], delimiter: str) -> None:
    st.markdown(
        f"Transaction {feedback.as_text(ids.display_id(described['id']))}: status **{described['status']}**"
    )
    frame = txsv.properties_frame(described.get("properties"))
    if frame.empty:
        st.caption("No properties.")
    else:
        dataframe(frame, hide_index=True, key=f"{state.Txn.CURRENT}.props", words=True)


_ACTION_LABELS = {
    aa.SET_STATUS: "Set status",
    aa.SET_PROPERTY: "Set property",
    aa.UNSET_PROPERTY: "Unset property",
}


# The fields of each action kind's form, with the value each starts from.
_ALTER_FIELDS: dict[str, dict[str, Any]] = {
    aa.SET_STATUS: {},
    aa.SET_PROPERTY: {"key": "", "value": ""},
    aa.UNSET_PROPERTY: {"key": ""},
}


def _add_action(kind: str) -> None:
    """ "Add action" (a callback, before the page draws the pending actions): the form's
    action joins them and the form is emptied; a refused one leaves the form as typed and
    says why (:data:`state.Txn.ALTER_REFUSED`)."""

    def value(field: str) -> Any:
        return state.get(state.txn_alter_key(kind, field))

    if kind == aa.SET_STATUS:
        new = aa.set_status_action(value("status"))
    elif kind == aa.SET_PROPERTY:
        new = aa.set_property_action(
            (value("key") or "").strip(), value("value") or "", value("mode")
        )
    else:
        new = aa.unset_property_action((value("key") or "").strip(), value("mode"))
    actions = [*state.alter_actions(), new]
    if problems := aa.action_problems(actions):
        state.put(state.Txn.ALTER_REFUSED, "Not added: " + " ".join(problems))
        return
    state.set_alter_actions(actions)
    for field, start in _ALTER_FIELDS[kind].items():
        state.put(state.txn_alter_key(kind, field), start)


def render_alter_builder(*, read_only: bool) -> None:
    """Pending AlterTransaction actions: add one, remove one (callbacks). Every list is
    checked by ``backend.rules.alter_actions``, exactly as the backends check it."""
    actions = state.alter_actions()
    kind = st.segmented_control(
        "Action", list(aa.ACTION_KINDS), default=aa.SET_PROPERTY, format_func=lambda k: _ACTION_LABELS[k],
        key=f"{state.Txn.ALTER}.kind", required=True,
    ) or aa.SET_PROPERTY  # fmt: skip

    def key(field: str) -> str:
        return state.txn_alter_key(kind, field)

    with st.form(state.txn_alter_key(kind), border=False):
        if kind == aa.SET_STATUS:
            st.selectbox(
                "Status", [s.capitalize() for s in aa.TRANSACTION_STATUSES], key=key("status")
            )
        elif kind == aa.SET_PROPERTY:
            c1, c2, c3 = st.columns(3)
            c1.text_input("Key", key=key("key"))
            c2.text_input("Value", key=key("value"))
            c3.selectbox(
                "If the key exists", [m.capitalize() for m in aa.SET_MODES], key=key("mode")
            )
        else:
            c1, c2 = st.columns([2, 1])
            c1.text_input("Key", key=key("key"))
            c2.selectbox(
                "If the key is missing", [m.capitalize() for m in aa.UNSET_MODES], key=key("mode")
            )
        st.form_submit_button(
            "Add action", icon=":material/add:", disabled=read_only,
            on_click=_add_action, args=(kind,),
        )  # fmt: skip
    if refused := state.drop(state.Txn.ALTER_REFUSED):
        feedback.show("error", refused)
    for i, action in enumerate(actions):
        c1, c2 = st.columns([12, 1], vertical_alignment="center")
        c1.markdown(f"{i + 1}. " + feedback.as_text(aa.describe_action(action, i + 1)))
        c2.button(
            f"Remove action {i + 1}", icon=":material/close:",
            key=f"{state.Txn.ALTER}.action.{i}.remove", help="Remove",
            on_click=state.set_alter_actions, args=([a for j, a in enumerate(actions) if j != i],),
        )  # fmt: skip


def render_apply_form(count: int, *, read_only: bool) -> bool:
    with st.form(state.Txn.APPLY, border=False):
        return st.form_submit_button(
            f"Apply {plural(count, 'action')} in one request", type="primary", icon=":material/edit:",
            disabled=read_only or not count,
        )  # fmt: skip


def render_describe_alter(ns: Any, delimiter: str, *, read_only: bool) -> Alter | None:
    """Describe a transaction by id (or the one picked in the history), show it, collect
    alter actions. Returns the alter the user asked for (a write: the page performs it),
    else ``None``."""
    st.subheader("Describe", anchor=False)
    path, table = state.selection()
    context = [*path, table] if table else None
    txn_id = render_describe_form(delimiter, context=context)
    if (picked := state.drop(state.Txn.DESCRIBE_NOW)) is not None:
        described = feedback.run(
            txsv.describe_transaction, ns, picked, action="DescribeTransaction"
        )
        if described is not None:
            show_transaction(picked, described)
    elif txn_id is not None:
        found = feedback.run(
            txsv.describe_transaction_in, ns, txn_id, context, delimiter=delimiter,
            action="DescribeTransaction",
        )  # fmt: skip
        if found is not None:
            txn_id, described = found
            show_transaction(txn_id, described)
            remember_transaction(
                txn_id, source="described", status=described.status, made_here=False,
                operation=(described.properties or {}).get("operation"),
            )  # fmt: skip
    current = state.get(state.Txn.DESCRIBED)
    if not current:
        return None
    feedback.render_flash("txn")
    render_transaction(current, delimiter)
    st.subheader("Alter", anchor=False)
    st.caption("All actions go in one AlterTransaction request: all apply, or none.")
    render_alter_builder(read_only=read_only)
    actions = state.alter_actions()
    if render_apply_form(len(actions), read_only=read_only):
        return Alter(list(current["id"]), actions)
    return None


def altered(txn_id: list[str], response: Any) -> None:
    """After a successful alter: the new state on display, the actions emptied."""
    show_transaction(txn_id, response)
    count = len(state.alter_actions())
    feedback.flash(
        "txn",
        "success",
        f"Altered transaction {ids.display_id(txn_id)}: {plural(count, 'action')} applied; "
        f"status {response.status}.",
    )
    state.set_alter_actions([])
    remember_transaction(
        txn_id, source="altered", status=response.status, made_here=False,
        operation=(response.properties or {}).get("operation"),
    )  # fmt: skip
