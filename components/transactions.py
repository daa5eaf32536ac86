"""Pieces of the Transactions page: the batch-commit builder (add, reorder, remove, validate,
preview, commit), describe/alter a transaction, and the session's transaction history.

Builder state: ``st.session_state[state.TXN_OPERATIONS]`` (list of operation dicts, see
``backend.txn_builder``). History: ``st.session_state[state.TXN_HISTORY]``.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from backend import txn_builder as tb
from components import state
from components.common import error_text, render_json
from components.connection import connection_key, get_namespace

HISTORY_LIMIT = 50
T = TypeVar("T")

# --------------------------------------------------------------------------------------------
# Errors: server messages without the server's source locations
# --------------------------------------------------------------------------------------------

# A trailing ", /path/to/namespace.rs:385:13" (or "at src/x.py:12"): where in its own source the
# server raised the error, noise for the user.
_SOURCE_LOCATION = re.compile(
    r"(?:[,;][ \t]*|[ \t]+)(?:at[ \t]+)?[\w./\\~-]*\.(?:rs|py|java|go|cc|cpp|c|h|ts|js):\d+(?::\d+)?"
    r"(?=[ \t]*$)",  # keep trailing spaces: "  " before a newline is a markdown line break
    re.MULTILINE,
)


def trim_source_locations(text: str) -> str:
    """``text`` without trailing source locations (``, /src/namespace.rs:385:13``) on any line."""
    previous = None
    while previous != text:
        previous, text = text, _SOURCE_LOCATION.sub("", text)
    return text


def show_error(err: BaseException, *, action: str | None = None) -> None:
    """``st.error`` with the server's source locations trimmed; the full text in an expander."""
    full = error_text(err, action=action)
    short = trim_source_locations(full)
    st.error(short, icon=":material/error:")
    if short != full:
        with st.expander("Server said", icon=":material/dns:"):
            st.code(full, language=None, wrap_lines=True)


def run_op(fn: Callable[..., T], *args: Any, action: str | None = None, **kwargs: Any) -> T | None:
    """:func:`components.common.run_op` for this page: errors shown with :func:`show_error`."""
    from lance_namespace.errors import LanceNamespaceError

    try:
        return fn(*args, **kwargs)
    except (LanceNamespaceError, ValueError, OSError, RuntimeError) as err:
        show_error(err, action=action)
        return None


# Icon-only buttons carry a text label for assistive technology (and Playwright's
# get_by_role("button", name=...)); this style hides the label visually, the icon stays.
_ICON_ONLY_KEYS = ("txn-ops-", "txn-alter-action-", "txn-history-")
ICON_ONLY_CSS = (
    "<style>"
    + ",".join(f'[class*="st-key-{k}"] button p' for k in _ICON_ONLY_KEYS)
    + (
        "{position:absolute!important;width:1px!important;height:1px!important;overflow:hidden"
        "!important;clip:rect(0 0 0 0)!important;white-space:nowrap!important;margin:-1px"
        "!important;padding:0!important;border:0!important}"
    )
    + "</style>"
)


def render_icon_only_style() -> None:
    """Visually hide the text labels of this page's icon-only buttons (call once per run)."""
    st.html(ICON_ONLY_CSS)


# --------------------------------------------------------------------------------------------
# Session state
# --------------------------------------------------------------------------------------------


def get_operations() -> list[dict[str, Any]]:
    return list(st.session_state.get(state.TXN_OPERATIONS) or [])


def set_operations(operations: Sequence[dict[str, Any]]) -> None:
    st.session_state[state.TXN_OPERATIONS] = list(operations)
    st.session_state.pop(state.TXN_PROBLEMS, None)


def bump_form_version() -> None:
    st.session_state[state.TXN_FORM_VERSION] = st.session_state.get(state.TXN_FORM_VERSION, 0) + 1


def form_version() -> int:
    return int(st.session_state.get(state.TXN_FORM_VERSION, 0))


def fingerprint(operations: Sequence[dict[str, Any]]) -> str:
    return hashlib.sha1(json.dumps(list(operations), sort_keys=True).encode()).hexdigest()


@st.cache_data(ttl=30, show_spinner=False, max_entries=256)
def _latest_version(conn: str, table_id: tuple[str, ...], _ns: Any) -> int:
    return tb.latest_version(_ns, list(table_id))


def latest_version(table_id: Sequence[str]) -> int:
    """The table's latest version (cached per connection; 0 when it has none)."""
    return _latest_version(connection_key(), tuple(table_id), get_namespace())


def show_transaction(txn_id: Sequence[str], response: Any) -> None:
    """Make ``response`` (DescribeTransaction / AlterTransaction) the transaction on display."""
    st.session_state[state.TXN_DESCRIBED] = {
        "id": txn_id,
        "status": response.status,
        "properties": response.properties,
    }


def remember_transaction(
    transaction_id: Sequence[str], *, source: str, status: str | None = None
) -> None:
    """Add a transaction id to this session's history (newest first, no duplicates)."""
    parts = [str(p) for p in transaction_id]
    history = [h for h in st.session_state.get(state.TXN_HISTORY) or [] if h["id"] != parts]
    history.insert(
        0,
        {"id": parts, "source": source, "status": status, "at": time.strftime("%H:%M:%S")},
    )
    st.session_state[state.TXN_HISTORY] = history[:HISTORY_LIMIT]


def get_history() -> list[dict[str, Any]]:
    return list(st.session_state.get(state.TXN_HISTORY) or [])


# --------------------------------------------------------------------------------------------
# Adding operations
# --------------------------------------------------------------------------------------------


def _table_field(default: str, *, key: str, help: str | None = None) -> str:
    return st.text_input("Table id", value=default, key=key, help=help)


def render_add_operation(
    default_table: Sequence[str] | None,
    delimiter: str,
    *,
    next_version: int | None,
    key_prefix: str,
) -> dict[str, Any] | None:
    """Pick an operation kind, fill its form; returns the new operation dict on "Add".

    Syntax errors (empty id parts, malformed ranges or properties) are shown and nothing is
    added; whether the operation makes sense against the namespace is for "Validate".
    """
    kind = st.segmented_control(
        "Operation",
        list(tb.OPERATION_KINDS),
        default=tb.DECLARE,
        format_func=lambda k: tb.OPERATION_LABELS[k],
        key=f"{key_prefix}.kind",
        required=True,
    )
    kind = kind or tb.DECLARE
    fv = form_version()
    default_text = delimiter.join(default_table or [])
    help_id = f"Namespace path and table name joined by {delimiter!r}, e.g. sales{delimiter}orders"
    fk = f"{key_prefix}.{kind}.{fv}"
    with st.form(fk):
        table_text = _table_field(default_text, key=f"{fk}.table", help=help_id)
        values: dict[str, Any] = {}
        if kind == tb.DECLARE:
            values["location"] = st.text_input(
                "Location (optional)", key=f"{fk}.location", help="Empty: the namespace decides."
            )
            values["properties"] = st.text_area(
                "Properties (key=value per line, optional)", key=f"{fk}.properties", height=80
            )
        elif kind == tb.CREATE_VERSION:
            c1, c2 = st.columns(2)
            with c1:
                values["version"] = st.number_input(
                    "Version",
                    min_value=1,
                    value=next_version or 1,
                    step=1,
                    key=f"{fk}.version",
                    help="Must be the table's latest version + 1.",
                )
            with c2:
                values["manifest_size"] = st.number_input(
                    "Manifest size (bytes, optional)",
                    min_value=0,
                    value=None,
                    step=1,
                    key=f"{fk}.size",
                )
            values["manifest_path"] = st.text_input(
                "Staged manifest path",
                key=f"{fk}.manifest",
                help="The manifest your writer staged for this version.",
            )
            c3, c4 = st.columns(2)
            with c3:
                values["naming_scheme"] = st.selectbox(
                    "Naming scheme",
                    [None, *tb.NAMING_SCHEMES],
                    format_func=lambda s: "(not sent)" if s is None else s,
                    key=f"{fk}.scheme",
                )
            with c4:
                values["e_tag"] = st.text_input("ETag (optional)", key=f"{fk}.etag")
            values["metadata"] = st.text_area(
                "Metadata (key=value per line, optional)", key=f"{fk}.metadata", height=68
            )
        elif kind == tb.DELETE_VERSIONS:
            values["ranges"] = st.text_input(
                "Version ranges",
                placeholder="1:3, 5:7",
                key=f"{fk}.ranges",
                help="start:end with start inclusive and end exclusive (as the spec defines); "
                "end -1 means through the latest version.",
            )
        else:
            st.caption("Deregister: the table leaves the namespace; its data stays in storage.")
        added = st.form_submit_button("Add to batch", icon=":material/playlist_add:")
    if not added:
        return None
    try:
        table_id = tb.parse_object_id(table_text, delimiter, "table")
        if kind == tb.DECLARE:
            return tb.declare_op(
                table_id,
                location=(values["location"] or "").strip() or None,
                properties=tb.parse_properties(values["properties"]),
            )
        if kind == tb.CREATE_VERSION:
            path = (values["manifest_path"] or "").strip()
            if not path:
                raise ValueError("Enter the staged manifest path.")
            size = values["manifest_size"]
            return tb.create_version_op(
                table_id,
                int(values["version"]),
                path,
                manifest_size=int(size) if size is not None else None,
                e_tag=(values["e_tag"] or "").strip() or None,
                metadata=tb.parse_properties(values["metadata"]) or None,
                naming_scheme=values["naming_scheme"],
            )
        if kind == tb.DELETE_VERSIONS:
            return tb.delete_versions_op(table_id, tb.parse_ranges(values["ranges"]))
        return tb.deregister_op(table_id)
    except ValueError as err:
        st.error(f"Not added: {err}", icon=":material/error:")
        return None


def render_stage_helper(
    table_id: Sequence[str] | None,
    delimiter: str,
    *,
    local: bool,
    read_only: bool,
    key_prefix: str,
) -> bool:
    """The "stage next version from current" button (local backend only); True when pressed."""
    if not local:
        st.caption(
            "CreateTableVersion needs a manifest your writer staged: enter its path above. "
            "(Staging a copy of the latest version is offered on the local backend.)"
        )
        return False
    label = delimiter.join(table_id) if table_id else "the selected table"
    st.caption(
        f"Demo helper: stage version latest+1 of **{label}** as a copy of its latest version "
        "(written under the namespace's `_staging/`), and add its CreateTableVersion."
    )
    return st.button(
        "Stage next version from current",
        icon=":material/content_copy:",
        key=f"{key_prefix}.stage",
        disabled=read_only or not table_id,
    )


# --------------------------------------------------------------------------------------------
# The ordered list
# --------------------------------------------------------------------------------------------


def render_operation_list(
    operations: Sequence[dict[str, Any]],
    problems: Sequence[tb.Problem] | None,
    delimiter: str,
    *,
    key_prefix: str,
) -> list[dict[str, Any]] | None:
    """Each operation with up / down / remove; returns the new list when one was pressed."""
    if not operations:
        st.caption("No operations yet: add some above.")
        return None
    by_index: dict[int, list[tb.Problem]] = {}
    for p in problems or []:
        if p.index is not None:
            by_index.setdefault(p.index, []).append(p)
    result: list[dict[str, Any]] | None = None
    for i, op in enumerate(operations):
        with st.container(border=True):
            text_col, up, down, rm = st.columns([12, 1, 1, 1], vertical_alignment="center")
            with text_col:
                st.markdown(f"**{i + 1}.** {tb.describe_operation(op, delimiter)}")
                for p in by_index.get(i, []):
                    icon = ":material/error:" if p.severity == "error" else ":material/warning:"
                    st.markdown(f"{icon} {p.message}")
            if up.button(
                f"Move operation {i + 1} up",
                icon=":material/arrow_upward:",
                key=f"{key_prefix}.{i}.up",
                disabled=i == 0,
                help="Move up",
            ):
                result = tb.move(operations, i, -1)
            if down.button(
                f"Move operation {i + 1} down",
                icon=":material/arrow_downward:",
                key=f"{key_prefix}.{i}.down",
                disabled=i == len(operations) - 1,
                help="Move down",
            ):
                result = tb.move(operations, i, +1)
            if rm.button(
                f"Remove operation {i + 1}",
                icon=":material/close:",
                key=f"{key_prefix}.{i}.remove",
                help="Remove",
            ):
                result = tb.remove(operations, i)
    return result


def render_problems(problems: Sequence[tb.Problem]) -> None:
    """Summary of a validation: success, or errors/warnings listed."""
    if not problems:
        st.success("Valid against the current namespace.", icon=":material/check_circle:")
        return
    errors = [p for p in problems if p.severity == "error"]
    warnings = [p for p in problems if p.severity != "error"]
    if errors:
        st.error(
            f"{len(errors)} problem(s) block the commit:\n\n" + "\n".join(f"- {p}" for p in errors),
            icon=":material/error:",
        )
    if warnings:
        st.warning("\n".join(f"- {p}" for p in warnings), icon=":material/warning:")


def render_request_preview(operations: Sequence[dict[str, Any]], *, key_prefix: str) -> str | None:
    """The exact JSON body of the BatchCommitTables request; returns it."""
    if not operations:
        return None
    try:
        body = tb.request_json(tb.to_request(operations))
    except (ValueError, TypeError) as err:
        st.error(f"The request cannot be built: {err}", icon=":material/error:")
        return None
    with st.expander("Request JSON (as sent: POST /v1/table/batch-commit)", expanded=False):
        st.code(body, language="json")
    return body


def render_commit_form(
    operations: Sequence[dict[str, Any]], *, read_only: bool, key_prefix: str
) -> bool:
    """The commit button (validates first); True when pressed."""
    with st.form(f"{key_prefix}.{form_version()}", border=False):
        st.caption(
            f"{len(operations)} operation(s), committed atomically: all succeed or none is applied."
        )
        return st.form_submit_button(
            "Commit atomically",
            type="primary",
            icon=":material/done_all:",
            disabled=read_only or not operations,
        )


def render_commit_result(last: dict[str, Any], delimiter: str, *, key_prefix: str) -> None:
    """The last commit: transaction id, each operation with its result."""
    txn = last.get("transaction_id")
    st.success(
        "Committed." + (f" Transaction `{delimiter.join(txn)}`." if txn else ""),
        icon=":material/check_circle:",
    )
    st.dataframe(pd.DataFrame(last["results"]), hide_index=True, key=f"{key_prefix}.results")
    render_json(last["response"], key_prefix=f"{key_prefix}.json", label="Response")


# --------------------------------------------------------------------------------------------
# Describe / alter
# --------------------------------------------------------------------------------------------


def render_describe_form(delimiter: str, *, key_prefix: str) -> list[str] | None:
    """Transaction id input; returns its parts when "Describe" is pressed and the id parses."""
    with st.form(f"{key_prefix}.form", border=False):
        text = st.text_input(
            "Transaction id",
            key=state.TXN_ID_INPUT,
            placeholder=f"namespace{delimiter}table{delimiter}<transaction uuid or version>",
            help=f"Split by the connection's delimiter {delimiter!r}. Local table transactions "
            "are addressed as table id + transaction uuid (or version).",
        )
        submitted = st.form_submit_button("Describe", icon=":material/search:")
    if not submitted:
        return None
    try:
        return tb.parse_transaction_id(text, delimiter)
    except ValueError as err:
        st.error(str(err), icon=":material/error:")
        return None


def render_transaction(described: dict[str, Any], delimiter: str, *, key_prefix: str) -> None:
    """Status and properties of a described (or altered) transaction."""
    st.markdown(
        f"Transaction `{delimiter.join(described['id'])}` - status **{described['status']}**"
    )
    props = tb.properties_frame(described.get("properties"))
    if props.empty:
        st.caption("No properties.")
    else:
        st.dataframe(props, hide_index=True, key=f"{key_prefix}.props")


def get_alter_actions() -> list[dict[str, Any]]:
    return list(st.session_state.get(state.TXN_ALTER_ACTIONS) or [])


def render_alter_builder(*, read_only: bool, key_prefix: str) -> list[dict[str, Any]] | None:
    """Pending AlterTransaction actions: add (set status / set property / unset property),
    remove; returns the new list when changed."""
    actions = get_alter_actions()
    kind = st.segmented_control(
        "Action",
        list(tb.ALTER_ACTION_KINDS),
        default="set_property",
        format_func=lambda k: {
            "set_status": "Set status",
            "set_property": "Set property",
            "unset_property": "Unset property",
        }[k],
        key=f"{key_prefix}.kind",
        required=True,
    )
    kind = kind or "set_property"
    fk = f"{key_prefix}.{kind}.{form_version()}.{len(actions)}"
    new: dict[str, Any] | None = None
    with st.form(fk, border=False):
        if kind == "set_status":
            status = st.selectbox("Status", list(tb.TRANSACTION_STATUSES), key=f"{fk}.status")
        elif kind == "set_property":
            # The mode column is as wide as the others: "Overwrite" and its label fit.
            c1, c2, c3 = st.columns(3)
            key = c1.text_input("Key", key=f"{fk}.key")
            value = c2.text_input("Value", key=f"{fk}.value")
            mode = c3.selectbox("If the key exists", list(tb.SET_PROPERTY_MODES), key=f"{fk}.mode")
        else:
            c1, c2 = st.columns([2, 1])
            key = c1.text_input("Key", key=f"{fk}.key")
            mode = c2.selectbox(
                "If the key is missing", list(tb.UNSET_PROPERTY_MODES), key=f"{fk}.mode"
            )
        if st.form_submit_button("Add action", icon=":material/add:", disabled=read_only):
            if kind == "set_status":
                new = tb.set_status_action(status)
            elif kind == "set_property":
                new = tb.set_property_action(key.strip(), value, mode)
            else:
                new = tb.unset_property_action(key.strip(), mode)
    if new is not None:
        problems = tb.validate_alter_actions([*actions, new])
        if problems:
            st.error("Not added: " + " ".join(problems), icon=":material/error:")
            return None
        return [*actions, new]
    for i, action in enumerate(actions):
        c1, c2 = st.columns([12, 1], vertical_alignment="center")
        c1.markdown(f"{i + 1}. {tb.describe_action(action)}")
        if c2.button(
            f"Remove action {i + 1}",
            icon=":material/close:",
            key=f"{key_prefix}.action.{i}.remove",
            help="Remove",
        ):
            return [a for j, a in enumerate(actions) if j != i]
    return None


def render_apply_form(
    actions: Sequence[dict[str, Any]], *, read_only: bool, key_prefix: str
) -> bool:
    with st.form(f"{key_prefix}.{form_version()}", border=False):
        return st.form_submit_button(
            f"Apply {len(actions)} action(s) in one request",
            type="primary",
            icon=":material/edit:",
            disabled=read_only or not actions,
        )


def render_history(delimiter: str, *, key_prefix: str) -> list[str] | None:
    """This session's transactions, newest first; returns an id when its "Describe" is pressed."""
    history = get_history()
    if not history:
        st.caption(
            "Transactions committed, described or created by index builds in this session "
            "appear here."
        )
        return None
    picked: list[str] | None = None
    for i, h in enumerate(history):
        c1, c2 = st.columns([12, 2], vertical_alignment="center")
        status = f" - {h['status']}" if h.get("status") else ""
        text_id = delimiter.join(h["id"])
        c1.markdown(f"`{text_id}`  \n{h['at']} · {h['source']}{status}")
        if c2.button(
            f"Describe {text_id}",
            key=f"{key_prefix}.{i}.describe",
            icon=":material/search:",
            help="Describe this transaction",
        ):
            picked = list(h["id"])
    return picked


__all__ = [
    "ICON_ONLY_CSS",
    "fingerprint",
    "get_alter_actions",
    "get_history",
    "get_operations",
    "latest_version",
    "remember_transaction",
    "render_add_operation",
    "render_alter_builder",
    "render_apply_form",
    "render_commit_form",
    "render_commit_result",
    "render_describe_form",
    "render_history",
    "render_operation_list",
    "render_problems",
    "render_request_preview",
    "render_stage_helper",
    "render_icon_only_style",
    "render_transaction",
    "run_op",
    "set_operations",
    "show_error",
    "trim_source_locations",
]
