"""The operations of the batch-commit builder: the add form of each kind, the batch list
(reorder, remove), its problems, the request preview and "Clear".

Builder operations are the spec's operation dicts (``backend.services.batch_builder``); they
live in ``components.state``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from backend.errors import LanceNamespaceError
from backend.rules import batch_rules, ids, version_ranges
from backend.rules import properties as props
from backend.rules.ids import parse_id
from backend.services import batch_builder as bb
from backend.text import plural
from components import feedback, state

# What the empty table field of the add form shows (no table picked).
TABLE_PLACEHOLDER = f"namespace{ids.DISPLAY_SEPARATOR}table"


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


def _move(index: int, delta: int) -> None:
    """A button's callback: the batch as it is when clicked, one operation moved (each
    button holds its index only: copies of the batch per button grew as its square)."""
    state.set_operations(bb.move(state.operations(), index, delta))


def _remove(index: int) -> None:
    state.set_operations(bb.remove(state.operations(), index))


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
                on_click=_move, args=(i, -1),
            )  # fmt: skip
            last = i == len(operations) - 1
            down.button(
                f"Move operation {i + 1} down", icon=":material/arrow_downward:", key=f"{at}.down",
                disabled=last, help="Move down",
                on_click=_move, args=(i, +1),
            )  # fmt: skip
            rm.button(
                f"Remove operation {i + 1}", icon=":material/close:", key=f"{at}.remove",
                help="Remove", on_click=_remove, args=(i,),
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
    with st.expander(
        "Request JSON (as sent: POST /v1/table/batch-commit)", key=state.Txn.REQUEST_OPEN
    ):
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
