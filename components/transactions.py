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
from components import feedback, state
from components.common import render_json
from components.versions import latest_version

HISTORY_LIMIT = 50


@dataclass(frozen=True)
class Stage:
    """The user asked to stage version latest+1 of a table (a write: the page performs it)."""

    table_id: list[str]


@dataclass(frozen=True)
class Commit:
    """The user asked to commit these operations; they passed the batch rules just now."""

    operations: list[dict[str, Any]]

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


def render_icon_only_style() -> None:
    st.html(ICON_ONLY_CSS)


def fingerprint(operations: Sequence[dict[str, Any]]) -> str:
    return hashlib.sha1(json.dumps(list(operations), sort_keys=True).encode()).hexdigest()


# --------------------------------------------------------------------------------------------
# History of this session
# --------------------------------------------------------------------------------------------


def remember_transaction(
    transaction_id: Sequence[str], *, source: str, status: str | None = None
) -> None:
    """Add a transaction id to this session's history (newest first, no duplicates)."""
    parts = [str(p) for p in transaction_id]
    items = [h for h in state.history() if h["id"] != parts]
    items.insert(
        0, {"id": parts, "source": source, "status": status, "at": time.strftime("%H:%M:%S")}
    )
    state.set_history(items[:HISTORY_LIMIT])


def show_transaction(txn_id: Sequence[str], response: Any) -> None:
    """Make a Describe/AlterTransaction answer the transaction on display."""
    state.put(
        state.Txn.DESCRIBED,
        {"id": list(txn_id), "status": response.status, "properties": response.properties},
    )


# --------------------------------------------------------------------------------------------
# The builder
# --------------------------------------------------------------------------------------------


def render_batch_support(supported: bool | None, kind: str) -> bool:
    """Say up front when the backend cannot commit batches; returns whether it can (or may)."""
    if supported is False:
        where = "This REST server" if kind == "rest" else "This namespace"
        feedback.show(
            "warning",
            f"{where} does not implement BatchCommitTables (its server profile, or its answer "
            "to a batch commit, says so): you can build, validate and preview a batch, but not "
            "commit it.",
        )
    elif supported is None:
        st.caption(
            "Whether this server implements BatchCommitTables is unknown until it answers a "
            "commit (a connection's server profile can say): if it does not, it refuses and "
            "nothing changes."
        )
    return supported is not False


def sync_table_field(field_key: str, picked: Sequence[str] | None) -> None:
    """Keep the form's table field in step with the table picker: the field shows the picked
    table when the form first renders and again each time the picker changes (what the user
    typed stays until then)."""
    shown = ids.display_id(picked or [])
    if state.get(field_key) is None or state.get(state.Txn.PICKED) != shown:
        state.put(field_key, shown)
    state.put(state.Txn.PICKED, shown)


def render_add_operation(
    default_table: Sequence[str] | None,
    delimiter: str,
    *,
    next_version: int | None,
    key_prefix: str,
) -> dict[str, Any] | None:
    """An operation kind and its form; the operation (checked by the batch rules' builders)
    when "Add" is pressed. Whether it fits the namespace is for "Validate"."""
    kind = st.segmented_control(
        "Operation", list(bb.OPERATION_KINDS), default=bb.DECLARE, format_func=lambda k: bb.OPERATION_LABELS[k],
        key=f"{key_prefix}.kind", required=True,
    ) or bb.DECLARE  # fmt: skip
    fk = f"{key_prefix}.{kind}.{state.form_version('txn')}"
    sync_table_field(f"{fk}.table", default_table)
    values: dict[str, Any] = {}
    with st.form(fk):
        table_text = st.text_input(
            "Table id", key=f"{fk}.table",
            help="Namespace path and table name joined by › (or by the connection's delimiter "
            f"{delimiter}), e.g. sales › orders",
        )  # fmt: skip
        if kind == bb.DECLARE:
            values["location"] = st.text_input(
                "Location (optional)", key=f"{fk}.location", help="Empty: the namespace decides."
            )
            values["properties"] = st.text_area(
                "Properties (key=value per line, optional)", key=f"{fk}.properties", height=80
            )
        elif kind == bb.CREATE_VERSION:
            c1, c2 = st.columns(2)
            values["version"] = c1.number_input(
                "Version", min_value=1, value=next_version or 1, step=1, key=f"{fk}.version",
                help="Must be the table's latest version + 1.",
            )  # fmt: skip
            values["manifest_size"] = c2.number_input(
                "Manifest size (bytes, optional)", min_value=0, value=None, step=1, key=f"{fk}.size"
            )
            values["manifest_path"] = st.text_input(
                "Staged manifest path",
                key=f"{fk}.manifest",
                help="The manifest your writer staged for this version.",
            )
            c3, c4 = st.columns(2)
            values["naming_scheme"] = c3.selectbox(
                "Naming scheme", [None, *batch_rules.NAMING_SCHEMES],
                format_func=lambda s: "(not sent)" if s is None else s, key=f"{fk}.scheme",
            )  # fmt: skip
            values["e_tag"] = c4.text_input("ETag (optional)", key=f"{fk}.etag")
            values["metadata"] = st.text_area(
                "Metadata (key=value per line, optional)", key=f"{fk}.metadata", height=68
            )
        elif kind == bb.DELETE_VERSIONS:
            values["ranges"] = st.text_input(
                "Versions", placeholder="2-5, 8", key=f"{fk}.ranges",
                help="Inclusive ranges, as on the Versions page; sent as the spec's end-exclusive ranges.",
            )  # fmt: skip
        else:
            st.caption("Deregister: the table leaves the namespace; its data stays in storage.")
        added = st.form_submit_button("Add to batch", icon=":material/playlist_add:")
    if not added:
        return None
    try:
        table_id = parse_id(table_text, delimiter, "table")
        if kind == bb.DECLARE:
            return bb.declare_op(
                table_id, location=(values["location"] or "").strip() or None,
                properties_=props.from_lines(values["properties"]), delimiter=delimiter,
            )  # fmt: skip
        if kind == bb.CREATE_VERSION:
            size = values["manifest_size"]
            return bb.create_version_op(
                table_id, int(values["version"]), values["manifest_path"] or "",
                manifest_size=int(size) if size is not None else None,
                e_tag=(values["e_tag"] or "").strip() or None,
                metadata=props.from_lines(values["metadata"]) or None,
                naming_scheme=values["naming_scheme"], delimiter=delimiter,
            )  # fmt: skip
        if kind == bb.DELETE_VERSIONS:
            return bb.delete_versions_op(
                table_id, version_ranges.parse(values["ranges"]), delimiter=delimiter
            )
        return bb.deregister_op(table_id, delimiter=delimiter)
    except LanceNamespaceError as err:
        feedback.show("error", f"Not added: {err}")
        return None


def render_stage_helper(
    table_id: Sequence[str] | None, delimiter: str, *, local: bool, read_only: bool, key_prefix: str
) -> bool:
    """The "stage the next version" button (local backend only); True when pressed."""
    if not local:
        st.caption(
            "CreateTableVersion needs a manifest your writer staged: enter its path above. "
            "(Staging a copy of the latest version is offered on the local backend.)"
        )
        return False
    label = ids.display_id(table_id) if table_id else "the selected table"
    st.caption(
        f"Demo helper: stage version latest+1 of {feedback.as_text(label)} as a copy of its latest "
        "version (written under the namespace's _staging/), and add its CreateTableVersion."
    )
    return st.button(
        "Stage next version from current", icon=":material/content_copy:", key=f"{key_prefix}.stage",
        disabled=read_only or not table_id,
    )  # fmt: skip


def render_operation_list(
    operations: Sequence[dict[str, Any]],
    problems: Sequence[bb.Problem] | None,
    delimiter: str,
    *,
    key_prefix: str,
) -> list[dict[str, Any]] | None:
    """Each operation (numbered from 1) with up / down / remove; the new list when pressed."""
    if not operations:
        st.caption("No operations yet: add some above.")
        return None
    by_index: dict[int, list[bb.Problem]] = {}
    for p in problems or []:
        if p.index is not None:
            by_index.setdefault(p.index, []).append(p)
    result: list[dict[str, Any]] | None = None
    for i, op in enumerate(operations):
        with st.container(border=True):
            text_col, up, down, rm = st.columns([12, 1, 1, 1], vertical_alignment="center")
            text_col.markdown(
                f"**{i + 1}.** " + feedback.as_text(bb.describe_operation(op, delimiter))
            )
            for p in by_index.get(i, []):
                icon = ":material/error:" if p.severity == "error" else ":material/warning:"
                text_col.markdown(f"{icon} " + feedback.as_text(feedback.readable(p.message)))
            if up.button(
                f"Move operation {i + 1} up",
                icon=":material/arrow_upward:",
                key=f"{key_prefix}.{i}.up",
                disabled=i == 0,
                help="Move up",
            ):
                result = bb.move(operations, i, -1)
            if down.button(
                f"Move operation {i + 1} down", icon=":material/arrow_downward:", key=f"{key_prefix}.{i}.down",
                disabled=i == len(operations) - 1, help="Move down",
            ):  # fmt: skip
                result = bb.move(operations, i, +1)
            if rm.button(
                f"Remove operation {i + 1}",
                icon=":material/close:",
                key=f"{key_prefix}.{i}.remove",
                help="Remove",
            ):
                result = bb.remove(operations, i)
    return result


def render_problems(problems: Sequence[bb.Problem]) -> None:
    """The outcome of a validation: valid, or errors and warnings (numbered from 1)."""
    if not problems:
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


def render_clear_button(*, key_prefix: str) -> bool:
    """ "Clear the batch" with a confirmation; True once confirmed."""
    if not state.get(state.Txn.CONFIRM_CLEAR):
        if st.button("Clear the batch", icon=":material/delete_sweep:", key=f"{key_prefix}.ask"):
            state.put(state.Txn.CONFIRM_CLEAR, True)
            st.rerun()
        return False
    st.caption("Remove every operation, and the manifests staged for them?")
    yes, no = st.columns(2)
    if no.button("Keep the batch", key=f"{key_prefix}.no"):
        state.drop(state.Txn.CONFIRM_CLEAR)
        st.rerun()
    if yes.button("Clear", type="primary", key=f"{key_prefix}.yes", icon=":material/delete_sweep:"):
        state.drop(state.Txn.CONFIRM_CLEAR)
        return True
    return False


def render_commit_form(count: int, *, enabled: bool, key_prefix: str) -> bool:
    with st.form(f"{key_prefix}.{state.form_version('txn')}", border=False):
        st.caption(
            f"{plural(count, 'operation')}, committed atomically: all succeed or none is applied."
        )
        return st.form_submit_button(
            "Commit atomically", type="primary", icon=":material/done_all:", disabled=not enabled
        )


def render_commit_result(last: dict[str, Any], delimiter: str, *, key_prefix: str) -> None:
    txn = last.get("transaction_id")
    feedback.show("success", "Committed." + (f" Transaction {ids.display_id(txn)}." if txn else ""))
    st.dataframe(pd.DataFrame(last["results"]), hide_index=True, key=f"{key_prefix}.results")
    render_json(last["response"], key_prefix=f"{key_prefix}.json", label="Response")


def unused_staged(
    operations: Sequence[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(kept, unused)``: staged manifests some operation uses, and those none uses."""
    used = {bb.body_of(op).get("manifest_path") for op in operations}
    kept = [s for s in state.staged() if s["manifest_path"] in used]
    return kept, [s for s in state.staged() if s["manifest_path"] not in used]


# --------------------------------------------------------------------------------------------
# Describe / alter
# --------------------------------------------------------------------------------------------


def render_describe_form(
    delimiter: str, *, key_prefix: str, context: Sequence[str] | None = None
) -> list[str] | None:
    """The transaction id; its parts when "Describe" is pressed and the id parses. A bare
    id (the uuid alone, as builds answer with it) is looked up in ``context``, the table
    picked, when the backend does not know it on its own."""
    where = ids.display_id(context) if context else None
    with st.form(f"{key_prefix}.form", border=False):
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


def render_transaction(described: dict[str, Any], delimiter: str, *, key_prefix: str) -> None:
    st.markdown(
        f"Transaction {feedback.as_text(ids.display_id(described['id']))}: status **{described['status']}**"
    )
    frame = bb.properties_frame(described.get("properties"))
    if frame.empty:
        st.caption("No properties.")
    else:
        st.dataframe(frame, hide_index=True, key=f"{key_prefix}.props")


_ACTION_LABELS = {
    aa.SET_STATUS: "Set status",
    aa.SET_PROPERTY: "Set property",
    aa.UNSET_PROPERTY: "Unset property",
}


def render_alter_builder(*, read_only: bool, key_prefix: str) -> list[dict[str, Any]] | None:
    """Pending AlterTransaction actions: add one, remove one; the new list when changed.
    Every list is checked by ``backend.rules.alter_actions``, exactly as the backends check it."""
    actions = state.alter_actions()
    kind = st.segmented_control(
        "Action", list(aa.ACTION_KINDS), default=aa.SET_PROPERTY, format_func=lambda k: _ACTION_LABELS[k],
        key=f"{key_prefix}.kind", required=True,
    ) or aa.SET_PROPERTY  # fmt: skip
    fk = f"{key_prefix}.{kind}.{state.form_version('txn')}.{len(actions)}"
    new: dict[str, Any] | None = None
    with st.form(fk, border=False):
        if kind == aa.SET_STATUS:
            status = st.selectbox(
                "Status", [s.capitalize() for s in aa.TRANSACTION_STATUSES], key=f"{fk}.status"
            )
        elif kind == aa.SET_PROPERTY:
            c1, c2, c3 = st.columns(3)
            key = c1.text_input("Key", key=f"{fk}.key")
            value = c2.text_input("Value", key=f"{fk}.value")
            mode = c3.selectbox(
                "If the key exists", [m.capitalize() for m in aa.SET_MODES], key=f"{fk}.mode"
            )
        else:
            c1, c2 = st.columns([2, 1])
            key = c1.text_input("Key", key=f"{fk}.key")
            mode = c2.selectbox(
                "If the key is missing", [m.capitalize() for m in aa.UNSET_MODES], key=f"{fk}.mode"
            )
        if st.form_submit_button("Add action", icon=":material/add:", disabled=read_only):
            if kind == aa.SET_STATUS:
                new = aa.set_status_action(status)
            elif kind == aa.SET_PROPERTY:
                new = aa.set_property_action(key.strip(), value, mode)
            else:
                new = aa.unset_property_action(key.strip(), mode)
    if new is not None:
        problems = aa.action_problems([*actions, new])
        if problems:
            feedback.show("error", "Not added: " + " ".join(problems))
            return None
        return [*actions, new]
    for i, action in enumerate(actions):
        c1, c2 = st.columns([12, 1], vertical_alignment="center")
        c1.markdown(f"{i + 1}. " + feedback.as_text(aa.describe_action(action, i + 1)))
        if c2.button(
            f"Remove action {i + 1}",
            icon=":material/close:",
            key=f"{key_prefix}.action.{i}.remove",
            help="Remove",
        ):
            return [a for j, a in enumerate(actions) if j != i]
    return None


def render_apply_form(count: int, *, read_only: bool, key_prefix: str) -> bool:
    with st.form(f"{key_prefix}.{state.form_version('txn')}", border=False):
        return st.form_submit_button(
            f"Apply {plural(count, 'action')} in one request", type="primary", icon=":material/edit:",
            disabled=read_only or not count,
        )  # fmt: skip


def render_history(ns: Any, delimiter: str, *, key_prefix: str) -> None:
    """This session's transactions, newest first; "Describe" shows one (and fills the id)."""
    picked = _history_list(delimiter, key_prefix=key_prefix)
    if picked is not None:
        described = feedback.run(bb.describe_transaction, ns, picked, action="DescribeTransaction")
        if described is not None:
            show_transaction(picked, described)
        state.put(state.Txn.PENDING_ID, ids.display_id(picked))
        st.rerun()


def _history_list(delimiter: str, *, key_prefix: str) -> list[str] | None:
    items = state.history()
    if not items:
        st.caption(
            "Transactions committed, described or made by index builds in this session appear here."
        )
        return None
    picked: list[str] | None = None
    for i, h in enumerate(items):
        c1, c2 = st.columns([12, 2], vertical_alignment="center")
        status = f" - {h['status']}" if h.get("status") else ""
        text_id = ids.display_id(h["id"])
        c1.markdown(
            feedback.as_text(text_id)
            + "  \n"
            + feedback.as_text(f"{h['at']} · {h['source']}{status}")
        )
        if c2.button(
            f"Describe {text_id}",
            key=f"{key_prefix}.{i}.describe",
            icon=":material/search:",
            help="Describe this transaction",
        ):
            picked = list(h["id"])
    return picked


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


def _set_and_discard(operations: list[dict[str, Any]]) -> None:
    """New operations; manifests staged for operations no longer in the batch are removed."""
    state.set_operations(operations)
    kept, unused = unused_staged(operations)
    bb.discard_staged(unused)
    state.set_staged(kept)


def render_builder(ns: Any, caps: Any, delimiter: str, *, read_only: bool) -> Stage | Commit | None:
    """The builder: add, list, validate, clear, preview, commit. Returns what the user asked
    the page to write (stage a version, commit), else ``None``."""
    from components import tables as tbl
    from components.snippets import render_python_snippet

    operations = keep_batch_in_link()
    st.caption(
        "Operations are sent together as one BatchCommitTables request: all of them are "
        "applied, or none."
    )
    can_commit = render_batch_support(caps.batch_commit, caps.kind)
    st.subheader("Add an operation", anchor=False)
    table_id = tbl.render_table_picker(key_prefix="txn.picker")
    latest = latest_version(tuple(table_id)) if table_id else None
    new_op = render_add_operation(
        table_id, delimiter, next_version=(latest or 0) + 1, key_prefix="txn.add"
    )
    if new_op is not None:
        state.set_operations([*operations, new_op])
        state.reset_forms("txn")
        st.rerun()
    local = caps.kind == "local"
    if render_stage_helper(
        table_id, delimiter, local=local, read_only=read_only, key_prefix="txn.stage"
    ):
        return Stage(list(table_id or []))
    count = plural(len(operations), "operation")
    st.subheader(f"Batch ({count})", anchor=False)
    saved = state.get(state.Txn.PROBLEMS)
    problems = saved[1] if saved and saved[0] == fingerprint(operations) else None
    changed = render_operation_list(operations, problems, delimiter, key_prefix="txn.ops")
    if changed is not None:
        _set_and_discard(changed)
        st.rerun()
    if not operations:
        return None
    c1, c2 = st.columns(2)
    with c1:
        if (
            st.button("Validate", icon=":material/rule:", key="txn.validate")
            and _validate(ns, operations, delimiter) is not None
        ):
            st.rerun()
    with c2:
        if render_clear_button(key_prefix="txn.clear"):
            _set_and_discard([])
            st.rerun()
    if problems is not None:
        render_problems(problems)
    render_request_preview(operations)
    render_python_snippet(
        "batch_commit_tables", bb.to_request(operations), key_prefix="txn.snippet"
    )
    if not render_commit_form(
        len(operations), enabled=can_commit and not read_only, key_prefix="txn.commit"
    ):
        return None
    found = _validate(ns, operations, delimiter)
    if found is None:
        return None
    if bb.has_errors(found):
        st.rerun()  # the problems show once, next to their operations and in the summary
    return Commit(operations)


def add_staged(staged: bb.StagedManifest) -> None:
    """A manifest the page staged: remember it (so an abandoned batch removes it) and add its
    CreateTableVersion to the batch."""
    state.set_staged([*state.staged(), staged.__dict__])
    op = bb.create_version_op(
        staged.table_id, staged.version, staged.manifest_path, manifest_size=staged.manifest_size
    )
    state.set_operations([*state.operations(), op])


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
    state.set_operations([])
    state.set_staged([])
    state.reset_forms("txn")


def render_last_commit(delimiter: str) -> None:
    last = state.get(state.Txn.LAST_COMMIT)
    if last:
        st.subheader("Last commit", anchor=False)
        render_commit_result(last, delimiter, key_prefix="txn.last")


def render_describe_alter(ns: Any, delimiter: str, *, read_only: bool) -> Alter | None:
    """Describe a transaction by id, show it, collect alter actions. Returns the alter the
    user asked for (a write: the page performs it), else ``None``."""
    pending = state.drop(state.Txn.PENDING_ID)
    if pending is not None:
        state.put(state.Txn.ID_INPUT, pending)  # a "Describe" in the history fills the id field
    st.subheader("Describe", anchor=False)
    path, table = state.selection()
    context = [*path, table] if table else None
    txn_id = render_describe_form(delimiter, key_prefix="txn.describe", context=context)
    if txn_id is not None:
        found = feedback.run(
            bb.describe_transaction_in, ns, txn_id, context, delimiter=delimiter,
            action="DescribeTransaction",
        )  # fmt: skip
        if found is not None:
            txn_id, described = found
            show_transaction(txn_id, described)
            remember_transaction(txn_id, source="described", status=described.status)
    current = state.get(state.Txn.DESCRIBED)
    if not current:
        return None
    feedback.render_flash("txn")
    render_transaction(current, delimiter, key_prefix="txn.current")
    st.subheader("Alter", anchor=False)
    st.caption("All actions go in one AlterTransaction request: all apply, or none.")
    new_actions = render_alter_builder(read_only=read_only, key_prefix="txn.alter")
    if new_actions is not None:
        state.set_alter_actions(new_actions)
        st.rerun()
    actions = state.alter_actions()
    if render_apply_form(len(actions), read_only=read_only, key_prefix="txn.apply"):
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
    remember_transaction(txn_id, source="altered", status=response.status)
    state.reset_forms("txn")


__all__ = [
    "Alter",
    "Commit",
    "Stage",
    "add_staged",
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
    "render_history",
    "render_icon_only_style",
    "render_operation_list",
    "render_problems",
    "render_request_preview",
    "render_stage_helper",
    "render_transaction",
    "show_transaction",
    "unused_staged",
]
