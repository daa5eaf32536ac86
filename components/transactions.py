"""Pieces of the Transactions page: the batch-commit builder (add, reorder, remove, validate,
preview, commit), describe/alter a transaction, and this session's transactions.

Builder operations are the spec's operation dicts (``backend.services.batch_builder``); they
and the staged manifests the batch may use live in ``components.state``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from backend.errors import LanceNamespaceError
from backend.rules import alter_actions as aa
from backend.rules import batch_rules, ids, version_ranges
from backend.rules import properties as props
from backend.rules.ids import parse_id
from backend.services import batch_builder as bb
from backend.text import plural
from components import feedback, staged, state, txn_demo
from components.cache import CATALOG, cached
from components.common import dataframe, render_json
from components.versions import latest_version

HISTORY_LIMIT = 50
# What the empty table field of the add form shows (no table picked).
TABLE_PLACEHOLDER = f"namespace{ids.DISPLAY_SEPARATOR}table"


@dataclass(frozen=True)
class Commit:
    """The user asked to commit these operations; they passed the batch rules just now.
    ``watch``: a reader watches the batch's tables while it commits."""

    operations: list[dict[str, Any]]
    watch: bool = False

    @property
    def tables(self) -> list[list[str]]:
        return [bb.body_of(op)["id"] for op in self.operations]


@dataclass(frozen=True)
class Alter:
    """The user asked to apply these actions to a transaction in one request."""

    txn_id: list[str]
    actions: list[dict[str, Any]]


# Icon-only buttons carry a text label for assistive technology (and Playwright's
# get_by_role("button", name=...)); this style hides the label visually, the icon stays.
_ICON_ONLY_KEYS = ("txn-ops-", "txn-alter-action-", "txn-history-")
ICON_ONLY_CSS = (
    "<style>"
    + ",".join(f'[class*="st-key-{k}"] button p' for k in _ICON_ONLY_KEYS)
    + "{position:absolute!important;width:1px!important;height:1px!important;overflow:hidden"
    "!important;clip:rect(0 0 0 0)!important;white-space:nowrap!important;margin:-1px"
    "!important;padding:0!important;border:0!important}</style>"
)


TAB_BUILDER = "Batch commit builder"
TAB_DESCRIBE = "Describe / alter a transaction"
TAB_NAMESPACE = "Namespace transactions"
TAB_GUIDE = "Guided demo"
TABS = (TAB_BUILDER, TAB_DESCRIBE, TAB_NAMESPACE, TAB_GUIDE)
TAB_SLUGS = {"builder": TAB_BUILDER, "describe": TAB_DESCRIBE, "namespace": TAB_NAMESPACE,
             "demo": TAB_GUIDE}  # fmt: skip


def open_tabs() -> Any:
    """The page's tabs (the guided demo is drawn only while open); ``?tab=demo`` opens it (a
    presenter's link)."""
    slug = st.query_params.get(state.QP_TAB)
    if not state.has(state.Txn.TABS) and slug in TAB_SLUGS:
        state.put(state.Txn.TABS, TAB_SLUGS[slug])
    return st.tabs(list(TABS), default=TAB_BUILDER, key=state.Txn.TABS, on_change="rerun")


def render_icon_only_style() -> None:
    st.html(ICON_ONLY_CSS)


def fingerprint(operations: Sequence[dict[str, Any]]) -> str:
    return hashlib.sha1(json.dumps(list(operations), sort_keys=True).encode()).hexdigest()


# --------------------------------------------------------------------------------------------
# History of this session
# --------------------------------------------------------------------------------------------


def remember_transaction(
    transaction_id: Sequence[str],
    *,
    source: str,
    status: str | None = None,
    made_here: bool = True,
    operation: str | None = None,
) -> None:
    """Add a transaction id to this session's history (newest first, no duplicates).

    ``made_here``: this session made it (a batch commit, an index build or drop, named by
    ``source``); otherwise the session only described or altered it (``source`` says which)
    and ``operation`` is the transaction's own origin as it says (``CreateIndex``,
    ``BatchCommitTables``). A transaction seen again keeps its origin: one made here and
    then described stays "made here", with its latest status."""
    parts = [str(p) for p in transaction_id]
    before = next((h for h in state.history() if h["id"] == parts), None)
    entry = {
        "id": parts,
        "source": source,
        "status": status,
        "at": time.strftime("%H:%M:%S"),
        "made_here": made_here,
        "operation": operation,
    }
    if before is not None and before.get("made_here") and not made_here:
        entry.update(
            source=before["source"], made_here=True, at=before["at"], seen=source,
            operation=operation or before.get("operation"),
        )  # fmt: skip
    elif before is not None and not operation:
        entry["operation"] = before.get("operation")
    items = [h for h in state.history() if h["id"] != parts]
    items.insert(0, entry)
    state.set_history(items[:HISTORY_LIMIT])


def history_origin(item: dict[str, Any]) -> str:
    """Where a transaction of the history comes from, as the list says it: made in this
    session (by what), or only described / altered here (and what the transaction is)."""
    status = f" - {item['status']}" if item.get("status") else ""
    if item.get("made_here", True):
        seen = f", then {item['seen']}" if item.get("seen") else ""
        return f"{item['at']} · made in this session: {item['source']}{seen}{status}"
    what = f" · {item['operation']}" if item.get("operation") else ""
    return f"{item['at']} · {item['source']} here, made elsewhere{what}{status}"


def show_transaction(txn_id: Sequence[str], response: Any) -> None:
    """Make a Describe/AlterTransaction answer the transaction on display."""
    state.put(
        state.Txn.DESCRIBED,
        {"id": list(txn_id), "status": response.status, "properties": response.properties},
    )


# --------------------------------------------------------------------------------------------
# The builder
# --------------------------------------------------------------------------------------------


def render_batch_support(notice: str | None, supported: bool | None, kind: str) -> bool:
    """Say up front, before Validate, when the backend cannot commit batches
    (``bb.batch_commit_notice``: a server profile, or a refusal earlier in this session);
    returns whether it can (or may)."""
    if notice:
        feedback.show(
            "warning",
            f"{notice} You can build and preview a batch here; Validate reports the same, and "
            "a commit is refused without being sent.",
        )
        return False
    if supported is None:
        st.caption(
            "Whether this server implements BatchCommitTables is unknown until it answers a "
            "commit (a connection's server profile can say): if it does not, it refuses and "
            "nothing changes."
        )
    return supported is not False


def sync_table_field(field_key: str, picked: Sequence[str] | None) -> bool:
    """Keep the form's table field in step with the table picker: the field shows the picked
    table when the form first renders and again each time the picker changes to a table (what
    the user typed stays until then). With no table picked the field starts empty, never the
    root's label or a table picked before: unpicking empties a field that still shows the
    table the picker put there, and keeps what the user typed. True when the field was set."""
    shown = ids.display_id(picked) if picked else ""
    before = state.get(state.Txn.PICKED)
    current = state.get(field_key)
    if current is None:
        written = True
    elif before == shown:
        written = False
    else:
        written = bool(shown) or current == before
    if written:
        state.put(field_key, shown)
    state.put(state.Txn.PICKED, shown)
    return written


# The fields of each operation kind's add form, with the value each starts from (``None``:
# the version field, which starts from the table's next version).
_ADD_FIELDS: dict[str, dict[str, Any]] = {
    bb.DECLARE: {"location": "", "properties": ""},
    bb.CREATE_VERSION: {
        "version": None, "size": None, "manifest": "", "scheme": "", "etag": "", "metadata": "",
    },
    bb.DELETE_VERSIONS: {"ranges": ""},
    bb.DEREGISTER: {},
}  # fmt: skip


def _reset_add_form(kind: str, next_version: int | None) -> None:
    """The add form of ``kind`` empty again, its table field showing the picked table."""
    state.put(state.txn_add_key(kind, "table"), state.get(state.Txn.PICKED) or "")
    for field, start in _ADD_FIELDS[kind].items():
        value = (next_version or 1) if field == "version" else start
        state.put(state.txn_add_key(kind, field), value)


def _add_operation(kind: str, delimiter: str, next_version: int | None) -> None:
    """ "Add to batch" (a callback, before the page draws the batch): the form's operation
    joins the batch and the form is emptied; a refused one leaves the form as typed and
    says why (:data:`state.Txn.ADD_REFUSED`)."""
    values = {f: state.get(state.txn_add_key(kind, f)) for f in ("table", *_ADD_FIELDS[kind])}
    try:
        table_id = parse_id(values["table"] or "", delimiter, "table")
        if kind == bb.DECLARE:
            op = bb.declare_op(
                table_id, location=(values["location"] or "").strip() or None,
                properties_=props.from_lines(values["properties"] or ""), delimiter=delimiter,
            )  # fmt: skip
        elif kind == bb.CREATE_VERSION:
            size = values["size"]
            op = bb.create_version_op(
                table_id, int(values["version"] or 0), values["manifest"] or "",
                manifest_size=int(size) if size is not None else None,
                e_tag=(values["etag"] or "").strip() or None,
                metadata=props.from_lines(values["metadata"] or "") or None,
                naming_scheme=values["scheme"] or None, delimiter=delimiter,
            )  # fmt: skip
        elif kind == bb.DELETE_VERSIONS:
            op = bb.delete_versions_op(
                table_id, version_ranges.parse(values["ranges"] or ""), delimiter=delimiter
            )
        else:
            op = bb.deregister_op(table_id, delimiter=delimiter)
    except LanceNamespaceError as err:
        state.put(state.Txn.ADD_REFUSED, f"Not added: {err}")
        return
    state.set_operations([*state.operations(), op])
    _reset_add_form(kind, next_version)


def render_add_operation(
    default_table: Sequence[str] | None, delimiter: str, *, next_version: int | None
) -> None:
    """An operation kind and its form; "Add to batch" adds the operation (checked by the
    batch rules' builders) to the batch in its callback. Whether it fits the namespace is
    for "Validate"."""
    kind = st.segmented_control(
        "Operation", list(bb.OPERATION_KINDS), default=bb.DECLARE, format_func=lambda k: bb.OPERATION_LABELS[k],
        key=f"{state.Txn.ADD}.kind", required=True,
    ) or bb.DECLARE  # fmt: skip

    def key(field: str) -> str:
        return state.txn_add_key(kind, field)

    synced = sync_table_field(key("table"), default_table)
    if kind == bb.CREATE_VERSION and (synced or not state.has(key("version"))):
        state.put(key("version"), next_version or 1)  # the version follows the picked table
    with st.form(state.txn_add_key(kind)):
        st.text_input(
            "Table id", key=key("table"), placeholder=TABLE_PLACEHOLDER,
            help="Namespace path and table name joined by › (or by the connection's delimiter "
            f"{delimiter}), e.g. sales › orders",
        )  # fmt: skip
        if kind == bb.DECLARE:
            st.text_input(
                "Location (optional)", key=key("location"), help="Empty: the namespace decides."
            )
            st.text_area(
                "Properties (key=value per line, optional)", key=key("properties"), height=80
            )
        elif kind == bb.CREATE_VERSION:
            c1, c2 = st.columns(2)
            c1.number_input(
                "Version", min_value=1, value="min", step=1, key=key("version"),
                help="Must be the table's latest version + 1.",
            )  # fmt: skip
            c2.number_input(
                "Manifest size (bytes, optional)", min_value=0, value=None, step=1, key=key("size")
            )
            st.text_input(
                "Staged manifest path",
                key=key("manifest"),
                help="The manifest your writer staged for this version.",
            )
            c3, c4 = st.columns(2)
            c3.selectbox(
                "Naming scheme", ["", *batch_rules.NAMING_SCHEMES],
                format_func=lambda s: s or "(not sent)", key=key("scheme"),
            )  # fmt: skip
            c4.text_input("ETag (optional)", key=key("etag"))
            st.text_area("Metadata (key=value per line, optional)", key=key("metadata"), height=68)
        elif kind == bb.DELETE_VERSIONS:
            st.text_input(
                "Versions", placeholder="2-5, 8", key=key("ranges"),
                help="Inclusive ranges, as on the Versions page; sent as the spec's end-exclusive ranges.",
            )  # fmt: skip
        else:
            st.caption("Deregister: the table leaves the namespace; its data stays in storage.")
        st.form_submit_button(
            "Add to batch", icon=":material/playlist_add:",
            on_click=_add_operation, args=(kind, delimiter, next_version),
        )  # fmt: skip
    if refused := state.drop(state.Txn.ADD_REFUSED):
        feedback.show("error", refused)


def render_operation_list(
    operations: Sequence[dict[str, Any]], problems: Sequence[bb.Problem] | None, delimiter: str
) -> None:
    """Each operation (numbered from 1) with up / down / remove (callbacks: the batch changes
    before the page draws it)."""
    if not operations:
        st.caption("No operations yet: add some above.")
        return
    by_index: dict[int, list[bb.Problem]] = {}
    for p in problems or []:
        if p.index is not None:
            by_index.setdefault(p.index, []).append(p)
    for i, op in enumerate(operations):
        at = f"{state.Txn.OPS}.{i}"
        with st.container(border=True):
            text_col, up, down, rm = st.columns([12, 1, 1, 1], vertical_alignment="center")
            text_col.markdown(
                f"**{i + 1}.** " + feedback.as_text(bb.describe_operation(op, delimiter))
            )
            for p in by_index.get(i, []):
                icon = ":material/error:" if p.severity == "error" else ":material/warning:"
                text_col.markdown(f"{icon} " + feedback.as_text(feedback.readable(p.message)))
            up.button(
                f"Move operation {i + 1} up", icon=":material/arrow_upward:", key=f"{at}.up",
                disabled=i == 0, help="Move up",
                on_click=state.set_operations, args=(bb.move(operations, i, -1),),
            )  # fmt: skip
            last = i == len(operations) - 1
            down.button(
                f"Move operation {i + 1} down", icon=":material/arrow_downward:", key=f"{at}.down",
                disabled=last, help="Move down",
                on_click=state.set_operations, args=(bb.move(operations, i, +1),),
            )  # fmt: skip
            rm.button(
                f"Remove operation {i + 1}", icon=":material/close:", key=f"{at}.remove",
                help="Remove", on_click=state.set_operations, args=(bb.remove(operations, i),),
            )  # fmt: skip


UNKNOWN_SUPPORT = (
    "No problem found against the current namespace. Whether this server runs batch commits "
    "is unknown until it answers one (a connection's server profile can say): it may still "
    "refuse the commit, changing nothing."
)


def render_problems(problems: Sequence[bb.Problem], *, supported: bool | None = True) -> None:
    """The outcome of a validation: valid, or errors and warnings (numbered from 1). "Valid"
    only where the backend is known to run batches (``supported``); a server that has not
    said so gets no promise."""
    if not problems:
        if supported is None:
            feedback.show("info", UNKNOWN_SUPPORT)
        else:
            feedback.show("success", "Valid against the current namespace.")
        return
    errors = [p for p in problems if p.severity == "error"]
    warnings = [p for p in problems if p.severity != "error"]
    if errors:
        verb = "blocks" if len(errors) == 1 else "block"
        feedback.show_problems(f"{plural(len(errors), 'problem')} {verb} the commit:", errors)
    if warnings:
        feedback.show_problems(f"{plural(len(warnings), 'warning')}:", warnings, kind="warning")


def render_request_preview(operations: Sequence[dict[str, Any]]) -> None:
    """The exact JSON body of the BatchCommitTables request (the spec's ranges, end-exclusive)."""
    with st.expander("Request JSON (as sent: POST /v1/table/batch-commit)"):
        st.code(bb.request_json(bb.to_request(operations)), language="json")


def render_clear_button() -> None:
    """ "Clear the batch" with a confirmation (callbacks: the batch is emptied before the page
    draws it; staged changes stay, to be discarded explicitly)."""
    at = state.Txn.CLEAR
    if not state.get(state.Txn.CONFIRM_CLEAR):
        st.button(
            "Clear the batch", icon=":material/delete_sweep:", key=f"{at}.ask",
            on_click=state.put, args=(state.Txn.CONFIRM_CLEAR, True),
        )  # fmt: skip
        return
    st.caption(
        "Remove every operation from the batch? Staged changes stay staged (listed below) until "
        "you discard them."
    )
    yes, no = st.columns(2)
    no.button(
        "Keep the batch", key=f"{at}.no", on_click=state.drop, args=(state.Txn.CONFIRM_CLEAR,)
    )
    yes.button(
        "Clear", type="primary", key=f"{at}.yes", icon=":material/delete_sweep:",
        on_click=_clear_batch,
    )  # fmt: skip


def _clear_batch() -> None:
    state.drop(state.Txn.CONFIRM_CLEAR)
    state.set_operations([])


def render_commit_form(
    count: int, *, enabled: bool, staged: int = 0, blockers: Sequence[str] = ()
) -> None:
    """ "Commit atomically": its callback asks the next run to validate the batch, then to
    commit it when nothing blocks it (:data:`state.Txn.CHECK`). A failed check of a staged
    change the batch publishes blocks it (``blockers``: which, and why)."""
    if blockers:
        feedback.show_problems("Publish blocked: a check of a staged change fails.", blockers)
    with st.form(state.Txn.COMMIT, border=False):
        published = f", publishing {plural(staged, 'staged change')}" if staged else ""
        st.caption(
            f"{plural(count, 'operation')}{published}, committed atomically in one "
            "BatchCommitTables: all succeed or none is applied."
        )
        st.form_submit_button(
            "Commit atomically", type="primary", icon=":material/done_all:",
            disabled=not enabled or bool(blockers),
            on_click=state.put, args=(state.Txn.CHECK, "commit"),
        )  # fmt: skip


def render_commit_result(last: dict[str, Any], delimiter: str) -> None:
    txn = last.get("transaction_id")
    feedback.show("success", "Committed." + (f" Transaction {ids.display_id(txn)}." if txn else ""))
    dataframe(pd.DataFrame(last["results"]), hide_index=True, key=f"{state.Txn.LAST}.results")
    render_json(last["response"], key_prefix=f"{state.Txn.LAST}.json", label="Response")


# --------------------------------------------------------------------------------------------
# Describe / alter
# --------------------------------------------------------------------------------------------


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
        return bb.parse_transaction_id(text, delimiter)
    except LanceNamespaceError as err:
        feedback.show("error", str(err))
        return None


def render_transaction(described: dict[str, Any], delimiter: str) -> None:
    st.markdown(
        f"Transaction {feedback.as_text(ids.display_id(described['id']))}: status **{described['status']}**"
    )
    frame = bb.properties_frame(described.get("properties"))
    if frame.empty:
        st.caption("No properties.")
    else:
        dataframe(frame, hide_index=True, key=f"{state.Txn.CURRENT}.props")


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


def _describe_from_history(txn_id: list[str]) -> None:
    """A "Describe" in the history (a callback): the id fills the id field, and this run
    describes it."""
    state.put(state.Txn.ID_INPUT, ids.display_id(txn_id))
    state.put(state.Txn.DESCRIBE_NOW, list(txn_id))


def render_history(delimiter: str) -> None:
    """The transactions this session made, described or altered, newest first, each with
    its origin (:func:`history_origin`); "Describe" shows one (and fills the id)."""
    items = state.history()
    if not items:
        st.caption(
            "Transactions committed, described or made by index builds in this session appear here."
        )
        return
    for i, h in enumerate(items):
        c1, c2 = st.columns([12, 2], vertical_alignment="center")
        text_id = ids.display_id(h["id"])
        c1.markdown(feedback.as_text(text_id) + "  \n" + feedback.as_text(history_origin(h)))
        c2.button(
            f"Describe {text_id}", key=f"{state.Txn.HISTORY}.{i}.describe",
            icon=":material/search:", help="Describe this transaction",
            on_click=_describe_from_history, args=(list(h["id"]),),
        )  # fmt: skip


@cached(lambda: CATALOG, ttl=15)
def namespace_transactions(ns: Any) -> list[bb.BatchTransaction]:
    """The namespace's batch commits, newest first (read again after a commit of this
    connection, and at least every 15 seconds for other writers' commits)."""
    return bb.list_batch_transactions(ns)


def render_namespace_transactions(items: Sequence[bb.BatchTransaction]) -> None:
    """The namespace's batch commits (``bb.list_batch_transactions``), newest first, paged:
    id, status, start, duration, operations, tables, and why a batch did not commit."""
    from components.pager import render_pager

    if not items:
        st.caption("No batch commit in this namespace yet.")
        return
    page = render_pager(
        list(items), key_prefix=state.Txn.NS_LIST, reset_on=(len(items),), noun="batch commits"
    )
    frame = bb.batch_transactions_frame(page.items)
    dataframe(
        frame, hide_index=True, key=f"{state.Txn.NS_LIST}.grid",
        column_config={
            "started": st.column_config.TextColumn("started (UTC)"),
            "duration_ms": st.column_config.NumberColumn("duration (ms)"),
        },
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# The builder tab and the describe/alter column, as the page shows them
# --------------------------------------------------------------------------------------------


def _validate(ns: Any, operations: list[dict[str, Any]], delimiter: str) -> list[bb.Problem] | None:
    found = feedback.run(bb.validate, ns, operations, delimiter=delimiter, action="Validating")
    if found is not None:
        state.put(state.Txn.PROBLEMS, (fingerprint(operations), found))
    return found


def keep_batch_in_link() -> list[dict[str, Any]]:
    """The batch of this session, restored from the link (``?batch=``) when the session has
    none yet (a reload); the link then follows the batch while it is small enough
    (``bb.encode_batch``), larger batches stay in the session only."""
    if state.get(state.Txn.OPERATIONS) is None and (text := st.query_params.get(state.QP_BATCH)):
        try:
            state.set_operations(bb.decode_batch(text))
        except LanceNamespaceError as err:
            state.set_operations([])
            feedback.show("warning", str(err))
    operations = state.operations()
    encoded = bb.encode_batch(operations)
    if encoded is None:
        if state.QP_BATCH in st.query_params:
            del st.query_params[state.QP_BATCH]
    elif st.query_params.get(state.QP_BATCH) != encoded:
        st.query_params[state.QP_BATCH] = encoded
    return operations


def demo_denial(ns: Any, read_only: bool) -> str | None:
    """Why this session may not use the demo tools (``None``: it may): admins only, never on
    a read-only connection (the gate's ``denial``)."""
    from components.session import write_denial

    denial = getattr(ns, "denial", None)
    if callable(denial):
        return denial(DEMO_TOOL)
    return write_denial(DEMO_TOOL) if not read_only else "the connection is read-only"


DEMO_TOOL = "demo_fault_commit"

Asked = Commit | staged.StageChange | staged.Discard | txn_demo.FaultRun | txn_demo.RaceRun


def render_builder(ns: Any, caps: Any, delimiter: str, *, read_only: bool) -> Asked | None:
    """The builder: add operations, stage changes (write-audit-publish: each staged change's
    audit and checks), list, validate, clear, preview, commit with a reader watching, and the
    demo tools. Returns what the user asked the page to write (stage, discard, commit, a demo
    tool), else ``None``; everything is drawn first. Buttons that change the batch do so in
    their callbacks; "Validate" and "Commit atomically" validate here, before the batch is
    drawn, so that the problems show next to their operations in this run."""
    from components import tables as tbl
    from components.snippets import render_python_snippet

    operations = keep_batch_in_link()
    st.caption(
        "Operations are sent together as one BatchCommitTables request: all of them are "
        "applied, or none."
    )
    local = caps.kind == "local"
    notice = bb.batch_commit_notice(ns)
    can_commit = render_batch_support(notice, caps.batch_commit, caps.kind)
    st.subheader("Add an operation", anchor=False)
    table_id = tbl.render_table_picker(key_prefix=state.Txn.PICKER)
    latest = latest_version(tuple(table_id)) if table_id else None
    render_add_operation(table_id, delimiter, next_version=(latest or 0) + 1)
    st.subheader("Stage a change", anchor=False)
    asked: Asked | None = staged.render_stage_form(ns, table_id, local=local, read_only=read_only)
    results = staged.all_check_results(ns) if local else {}
    discard = staged.render_staged_list(ns, operations, results, read_only=read_only)
    asked = asked or discard
    check = state.drop(state.Txn.CHECK)
    found = _validate(ns, operations, delimiter) if check and operations else None
    count = plural(len(operations), "operation")
    st.subheader(f"Batch ({count})", anchor=False)
    saved = state.get(state.Txn.PROBLEMS)
    problems = saved[1] if saved and saved[0] == fingerprint(operations) else None
    render_operation_list(operations, problems, delimiter)
    if not operations:
        tool = txn_demo.render_demo_tools([], locked=demo_denial(ns, read_only), local=local)
        return asked or tool
    c1, c2 = st.columns(2)
    c1.button(
        "Validate", icon=":material/rule:", key=state.Txn.VALIDATE,
        on_click=state.put, args=(state.Txn.CHECK, "validate"),
    )  # fmt: skip
    with c2:
        render_clear_button()
    if problems is not None:
        render_problems(problems, supported=None if caps.batch_commit is None else True)
    render_request_preview(operations)
    render_python_snippet(
        "batch_commit_tables", bb.to_request(operations), key_prefix=state.Txn.SNIPPET
    )
    blockers = staged.publish_blockers(ns, operations, results)
    publishes = len(set(staged.in_batch(operations)) & {s.manifest_path for s in staged.held()})
    watch = txn_demo.render_watch_switch(local=local) if local else False
    render_commit_form(
        len(operations), enabled=can_commit and not read_only, staged=publishes, blockers=blockers
    )
    tool = txn_demo.render_demo_tools(operations, locked=demo_denial(ns, read_only), local=local)
    asked = asked or tool
    if check == "commit" and can_commit and not read_only and found is not None:
        if bb.has_errors(found):
            bb.record_refused_commit(ns, operations, found)  # refused: in the audit log
            return asked
        if blockers:
            return asked
        return asked or Commit(operations, watch=watch)
    return asked


def committed(operations: list[dict[str, Any]], response: Any, delimiter: str) -> None:
    """After a successful commit: its results on display, the builder emptied."""
    txn = [response.transaction_id] if response.transaction_id else None
    if txn:
        remember_transaction(txn, source="batch commit", status="SUCCEEDED")
    state.put(
        state.Txn.LAST_COMMIT,
        {
            "transaction_id": txn,
            "results": bb.results_frame(operations, response, delimiter).to_dict("records"),
            "response": response.model_dump(mode="json", exclude_none=True),
        },
    )
    staged.published(operations)
    state.set_operations([])


def render_last_commit(delimiter: str) -> None:
    last = state.get(state.Txn.LAST_COMMIT)
    if last:
        st.subheader("Last commit", anchor=False)
        render_commit_result(last, delimiter)


def render_describe_alter(ns: Any, delimiter: str, *, read_only: bool) -> Alter | None:
    """Describe a transaction by id (or the one picked in the history), show it, collect
    alter actions. Returns the alter the user asked for (a write: the page performs it),
    else ``None``."""
    st.subheader("Describe", anchor=False)
    path, table = state.selection()
    context = [*path, table] if table else None
    txn_id = render_describe_form(delimiter, context=context)
    if (picked := state.drop(state.Txn.DESCRIBE_NOW)) is not None:
        described = feedback.run(bb.describe_transaction, ns, picked, action="DescribeTransaction")
        if described is not None:
            show_transaction(picked, described)
    elif txn_id is not None:
        found = feedback.run(
            bb.describe_transaction_in, ns, txn_id, context, delimiter=delimiter,
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


__all__ = [
    "Alter",
    "Asked",
    "TABS",
    "open_tabs",
    "Commit",
    "DEMO_TOOL",
    "UNKNOWN_SUPPORT",
    "demo_denial",
    "altered",
    "committed",
    "render_builder",
    "render_describe_alter",
    "render_last_commit",
    "fingerprint",
    "latest_version",
    "remember_transaction",
    "render_add_operation",
    "render_alter_builder",
    "render_apply_form",
    "render_batch_support",
    "render_clear_button",
    "render_commit_form",
    "render_commit_result",
    "render_describe_form",
    "history_origin",
    "render_history",
    "namespace_transactions",
    "render_namespace_transactions",
    "render_icon_only_style",
    "render_operation_list",
    "render_problems",
    "render_request_preview",
    "render_transaction",
    "show_transaction",
]
