"""Namespace/table selection (shared by all pages), cached listings, and table panels.

Selection (deep-linked through ``?ns=a&ns=b&table=t``):

* :func:`sync_selection` - call at the top of a page: query parameters win, else the session's
  selection is written to the URL;
* :func:`get_selection` / :func:`set_selection` / :func:`selected_table_id`;
* :func:`render_table_picker` - a compact namespace + table chooser for other pages.

Cached reads (keyed by :func:`components.connection.connection_key`, cleared after writes):
:func:`namespace_names`, :func:`table_names`, :func:`table_detail`.

Panels of "Namespaces & tables": :func:`render_breadcrumbs`, :func:`render_name_list` (one
selectable grid per page of names), :func:`render_table_detail`; writes as forms that collect,
validate, call ``backend.browse`` and return a :class:`WriteOutcome` (:func:`render_create_namespace_form`,
:func:`render_declare_table_form`, :func:`render_deregister_form`), the first two shown in
dialogs (:func:`render_dialog_button` / :func:`render_open_dialog`); :func:`finish_write` and
:func:`render_last_result` report a write after the rerun.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import pandas as pd
import streamlit as st
from lance_namespace.errors import LanceNamespaceError

from backend import browse
from components import state
from components.common import (
    clear_read_caches,
    mask_mapping,
    masked_dump,
    python_snippet,
    render_json,
    render_typed_confirmation,
    run_op,
    show_error,
)
from components.connection import connection_key, require_namespace, snippet_connection

# --------------------------------------------------------------------------------------------
# Selection + deep links
# --------------------------------------------------------------------------------------------


def _qp_namespace() -> list[str] | None:
    if state.QP_NAMESPACE not in st.query_params:
        return None
    return [p for p in st.query_params.get_all(state.QP_NAMESPACE) if p]


def sync_selection() -> None:
    """Reconcile selection and URL: query parameters (a deep link or reload) win; otherwise the
    session's selection is written to the URL so the page can be bookmarked."""
    qp_ns = _qp_namespace()
    qp_table = st.query_params.get(state.QP_TABLE)
    qp_version = st.query_params.get(state.QP_VERSION)
    if qp_ns is not None or qp_table:
        new_ns = qp_ns if qp_ns is not None else []
        if new_ns != st.session_state.get(state.SEL_NAMESPACE) or qp_table != st.session_state.get(
            state.SEL_TABLE
        ):
            st.session_state[state.SEL_NAMESPACE] = new_ns
            st.session_state[state.SEL_TABLE] = qp_table or None
            st.session_state[state.SEL_VERSION] = None
        if qp_version and str(qp_version).isdigit():
            st.session_state[state.SEL_VERSION] = int(qp_version)
        return
    _write_query_params()


def _write_query_params() -> None:
    ns = st.session_state.get(state.SEL_NAMESPACE) or []
    table = st.session_state.get(state.SEL_TABLE)
    version = st.session_state.get(state.SEL_VERSION)
    if ns:
        st.query_params[state.QP_NAMESPACE] = list(ns)
    elif state.QP_NAMESPACE in st.query_params:
        del st.query_params[state.QP_NAMESPACE]
    if table:
        st.query_params[state.QP_TABLE] = table
    elif state.QP_TABLE in st.query_params:
        del st.query_params[state.QP_TABLE]
    if table and version is not None:
        st.query_params[state.QP_VERSION] = str(version)
    elif state.QP_VERSION in st.query_params:
        del st.query_params[state.QP_VERSION]


def get_selection() -> tuple[list[str], str | None]:
    """``(namespace path, table name or None)`` currently selected."""
    return list(st.session_state.get(state.SEL_NAMESPACE) or []), st.session_state.get(
        state.SEL_TABLE
    )


def selected_table_id() -> list[str] | None:
    """The selected table's id (namespace path + name), or ``None``."""
    ns, table = get_selection()
    return [*ns, table] if table else None


def set_selection(namespace: Sequence[str], table: str | None = None) -> None:
    """Select a namespace (and optionally a table); updates the URL too."""
    st.session_state[state.SEL_NAMESPACE] = list(namespace)
    st.session_state[state.SEL_TABLE] = table
    st.session_state[state.SEL_VERSION] = None
    _write_query_params()


def set_selected_version(version: int | None) -> None:
    """Select a version of the selected table (deep-linked as ``?version=``)."""
    st.session_state[state.SEL_VERSION] = version
    _write_query_params()


def get_selected_version() -> int | None:
    """The selected version number, if any."""
    v = st.session_state.get(state.SEL_VERSION)
    return int(v) if v is not None else None


def display_path(path: Sequence[str]) -> str:
    """``sales › eu`` (``(root)`` for the empty path)."""
    return " › ".join(path) if path else "(root)"


# --------------------------------------------------------------------------------------------
# Cached reads
# --------------------------------------------------------------------------------------------


@st.cache_data(ttl=60, show_spinner=False, max_entries=512)
def _namespace_names(conn: str, parent: tuple[str, ...], _ns: Any) -> list[str]:
    return browse.list_namespace_names(_ns, parent)


@st.cache_data(ttl=60, show_spinner=False, max_entries=512)
def _namespace_exists(conn: str, path: tuple[str, ...], _ns: Any) -> bool:
    return browse.namespace_exists(_ns, path)


@st.cache_data(ttl=60, show_spinner=False, max_entries=512)
def _table_names(conn: str, namespace: tuple[str, ...], _ns: Any) -> list[str]:
    return browse.list_table_names(_ns, namespace)


@st.cache_data(ttl=60, show_spinner=False, max_entries=256)
def _table_detail(conn: str, table_id: tuple[str, ...], _ns: Any) -> browse.TableDetail:
    return browse.describe_table(_ns, table_id)


def namespace_names(parent: Sequence[str]) -> list[str]:
    """Child namespace names of ``parent`` (cached per connection)."""
    return _namespace_names(connection_key(), tuple(parent), require_namespace())


def namespace_exists(path: Sequence[str]) -> bool:
    """Whether namespace ``path`` exists (cached per connection)."""
    return _namespace_exists(connection_key(), tuple(path), require_namespace())


def table_names(namespace: Sequence[str]) -> list[str]:
    """Table names in ``namespace`` (cached per connection; names only)."""
    return _table_names(connection_key(), tuple(namespace), require_namespace())


def table_detail(table_id: Sequence[str]) -> browse.TableDetail:
    """:func:`backend.browse.describe_table` of one table (cached per connection)."""
    return _table_detail(connection_key(), tuple(table_id), require_namespace())


# --------------------------------------------------------------------------------------------
# Panels
# --------------------------------------------------------------------------------------------


def render_breadcrumbs(path: Sequence[str], *, key_prefix: str) -> list[str] | None:
    """Root › a › b as one compact row of small buttons; returns the path clicked (a prefix of
    ``path``), else ``None``."""
    crumbs = [("(root)", [])] + [(name, list(path[: i + 1])) for i, name in enumerate(path)]
    clicked = None
    with st.container(horizontal=True, gap=None, vertical_alignment="center"):
        for i, (label, target) in enumerate(crumbs):
            if st.button(
                label,
                key=f"{key_prefix}.crumb.{i}",
                type="tertiary",
                icon=":material/home:" if i == 0 else ":material/chevron_right:",
                disabled=i == len(crumbs) - 1,
            ):
                clicked = target
    return clicked


NAMESPACE_BUTTONS_MAX = 20  # more child namespaces than this: a selectable grid, not buttons


def _page_key(key_prefix: str, *parts: Any) -> str:
    digest = hashlib.sha1(repr(parts).encode()).hexdigest()[:10]
    return f"{key_prefix}.page.{digest}"


def render_name_grid(
    names: Sequence[str],
    *,
    key_prefix: str,
    icon: str,
    selected: str | None = None,
    page_size: int = browse.PAGE_SIZE,
    reset_on: tuple[Any, ...] = (),
    columns: int = 3,
) -> str | None:
    """One page of ``names`` as buttons in a grid, with a pager; returns the name clicked.

    The pager resets when ``reset_on`` (e.g. namespace, search text), the connection or the
    number of pages changes.
    """
    if not names:
        return None
    count = browse.page_count(len(names), page_size)
    number = 1
    if count > 1:
        key = _page_key(key_prefix, connection_key(), count, *reset_on)
        number = st.pagination(count, key=key, max_visible_pages=7)
    page = browse.paginate(names, number, page_size)
    clicked = None
    cols = st.columns(columns)
    for i, name in enumerate(page.items):
        with cols[i % columns]:
            if st.button(
                name,
                key=f"{key_prefix}.open.{name}",
                icon=icon,
                type="primary" if name == selected else "tertiary",
            ):
                clicked = name
    if count > 1:
        st.caption(f"{page.first_row}–{page.last_row} of {page.total}")
    return clicked


class Pick(NamedTuple):
    """A click in a :func:`render_name_list`: the name picked, or ``None`` when deselected."""

    name: str | None


def render_name_list(
    names: Sequence[str],
    *,
    key_prefix: str,
    column: str = "name",
    selected: str | None = None,
    page_size: int = browse.PAGE_SIZE,
    reset_on: tuple[Any, ...] = (),
) -> Pick | None:
    """One page of ``names`` as a single selectable grid (one row per name), with a pager.

    Returns a :class:`Pick` when the user selected (or deselected) a row, else ``None``. The
    row of ``selected`` is highlighted when it is on the page shown. The grid is re-created
    (fresh highlight) when ``reset_on``, the connection, the page, or ``selected`` changed by
    anything other than this grid; a click keeps the same grid (no flicker, scroll kept).
    """
    if not names:
        return None
    count = browse.page_count(len(names), page_size)
    number = 1
    if count > 1:
        key = _page_key(key_prefix, connection_key(), count, *reset_on)
        number = st.pagination(count, key=key, max_visible_pages=7)
    page = browse.paginate(names, number, page_size)
    items = list(page.items)
    memo_key = f"{key_prefix}.memo"
    memo = st.session_state.get(memo_key) or {}
    epoch = memo.get("epoch", 0) + (1 if memo.get("selected", "") != selected else 0)
    key = _page_key(f"{key_prefix}.grid", connection_key(), *reset_on, number, epoch)
    on_page = selected if selected in items else None
    shown = memo.get("shown") if memo.get("key") == key else on_page
    default = {"selection": {"rows": [items.index(on_page)], "columns": []}} if on_page else None
    event = st.dataframe(
        pd.DataFrame({column: items}),
        key=key,
        on_select="rerun",
        selection_mode="single-row",
        selection_default=default,
        hide_index=True,
        width="stretch",
    )
    rows = list(event.selection.rows) if event is not None else []
    picked = items[rows[0]] if rows and 0 <= rows[0] < len(items) else None
    changed = picked != shown
    st.session_state[memo_key] = {
        "epoch": epoch,
        "key": key,
        "shown": picked,
        "selected": picked if changed else selected,
    }
    if count > 1:
        st.caption(f"{page.first_row}–{page.last_row} of {page.total}")
    return Pick(picked) if changed else None


def render_namespace_list(
    children: Sequence[str], path: Sequence[str], *, key_prefix: str
) -> list[str] | None:
    """The child namespaces of ``path``: buttons when few, a selectable grid when many (more
    than :data:`NAMESPACE_BUTTONS_MAX`). Returns the path of the child opened, else ``None``."""
    if not children:
        st.caption(f"No namespaces inside {display_path(path)}.")
        return None
    if len(children) <= NAMESPACE_BUTTONS_MAX:
        picked = render_name_grid(
            children,
            key_prefix=key_prefix,
            icon=":material/folder:",
            reset_on=(tuple(path),),
            columns=1,
        )
    else:
        pick = render_name_list(
            children, key_prefix=key_prefix, column="namespace", reset_on=(tuple(path),)
        )
        picked = pick.name if pick else None
    return [*path, picked] if picked else None


def render_table_detail(detail: browse.TableDetail, *, key_prefix: str) -> None:
    """Header, metrics, location and tabs (schema, properties, storage options, metadata)."""
    badge = ":orange-badge[declared only]" if detail.declared_only else ":green-badge[materialised]"
    st.subheader(f"{detail.name}", anchor=False)
    st.markdown(f"{badge} in `{display_path(detail.namespace)}`")
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Version", "—" if detail.version is None else detail.version)
    c2.metric("Rows", "—" if detail.row_count is None else f"{detail.row_count:,}")
    c3.metric("Columns", len(detail.schema) if not detail.schema.empty else "—")
    if detail.num_fragments is not None:
        c4.metric("Fragments", f"{detail.num_fragments:,}")
    elif detail.declared_only:
        c4.metric("Fragments", "—", help="Declared only: no data files yet.")
    else:
        c4.metric("Fragments", "n/a", help="This namespace does not report fragment counts.")
    st.caption("Location")
    st.code(detail.location or "(none)", language=None, wrap_lines=True)
    if detail.managed_versioning is not None:
        st.caption(f"Managed versioning: {'yes' if detail.managed_versioning else 'no'}")
    for problem in detail.problems:
        st.caption(f":orange[{problem}]")
    schema_tab, props_tab, storage_tab, meta_tab = st.tabs(
        ["Schema", "Properties", "Storage options", "Metadata"]
    )
    with schema_tab:
        if detail.schema.empty:
            st.info(
                "No schema yet: the table is declared but has no data."
                if detail.declared_only
                else "The namespace returned no schema."
            )
        else:
            st.dataframe(detail.schema, hide_index=True, key=f"{key_prefix}.schema")
    with props_tab:
        render_mapping(detail.properties, empty="No properties.", key_prefix=f"{key_prefix}.props")
    with storage_tab:
        render_mapping(
            mask_mapping(detail.storage_options),
            empty="No storage options returned.",
            key_prefix=f"{key_prefix}.storage",
        )
    with meta_tab:
        render_mapping(detail.metadata, empty="No metadata.", key_prefix=f"{key_prefix}.meta")


def render_mapping(data: dict[str, Any], *, empty: str, key_prefix: str) -> None:
    """A key/value table (secret values must already be masked), or ``empty`` as a caption."""
    if not data:
        st.caption(empty)
        return
    frame = pd.DataFrame({"key": list(data), "value": [str(v) for v in data.values()]})
    st.dataframe(frame, hide_index=True, key=f"{key_prefix}.grid")


def empty_kv_frame() -> pd.DataFrame:
    """An empty ``key``/``value`` frame for ``st.data_editor`` grids."""
    return pd.DataFrame({"key": pd.Series([], dtype="str"), "value": pd.Series([], dtype="str")})


def response_summary(title: str, response: Any) -> dict[str, Any]:
    """A response model as a JSON-ready dict with secrets masked, for showing after a rerun."""
    return {"title": title, "body": masked_dump(response)}


def render_write_result(result: dict[str, Any] | None, *, key_prefix: str) -> None:
    """Show the outcome of the last write (from :func:`response_summary`)."""
    if not result:
        return
    st.success(result["title"], icon=":material/check_circle:")
    body = result.get("body") or {}
    if "location" in body or "storage_options" in body or "managed_versioning" in body:
        c1, c2 = st.columns([3, 1])
        c1.caption("Location")
        c1.code(body.get("location") or "(none)", language=None, wrap_lines=True)
        managed = body.get("managed_versioning")
        c2.metric("Managed versioning", "—" if managed is None else ("yes" if managed else "no"))
        storage = body.get("storage_options") or {}
        if storage:
            st.caption("Storage options (secret values masked)")
            render_mapping(storage, empty="", key_prefix=f"{key_prefix}.storage")
        else:
            st.caption("No storage options (no vended credentials) in the response.")
    render_json(body, key_prefix=f"{key_prefix}.json", label="Response")


# --------------------------------------------------------------------------------------------
# Writes: forms that collect, validate, call backend.browse and return what happened
# --------------------------------------------------------------------------------------------


@dataclass
class WriteOutcome:
    """A successful write: what to report, and what to select afterwards."""

    title: str
    response: Any
    snippet: str | None = None
    select: tuple[list[str], str | None] | None = None  # (namespace, table) to select


def form_version() -> int:
    """Suffix of the write forms' keys; bumped after each successful write (clears them)."""
    return int(st.session_state.get(state.TABLES_FORM_VERSION, 0))


def go_to(namespace: Sequence[str], table: str | None = None) -> None:
    """Select ``namespace`` (and ``table``) and rerun the page."""
    set_selection(namespace, table)
    st.rerun()


def finish_write(outcome: WriteOutcome) -> None:
    """After a successful write: forget cached reads, reset the forms, close the dialog,
    select what the write made, and rerun to show the result (:func:`render_last_result`)."""
    clear_read_caches()
    result = response_summary(outcome.title, outcome.response)
    result["snippet"] = outcome.snippet
    st.session_state[state.TABLES_LAST_RESULT] = result
    st.session_state[state.TABLES_FORM_VERSION] = form_version() + 1
    st.session_state.pop(state.TABLES_DIALOG, None)
    if outcome.select is not None:
        set_selection(*outcome.select)
    st.rerun()


def render_last_result(*, key_prefix: str) -> None:
    """The outcome of the write made before the last rerun (shown once)."""
    last = st.session_state.pop(state.TABLES_LAST_RESULT, None)
    if not last:
        return
    render_write_result(last, key_prefix=key_prefix)
    if last.get("snippet"):
        with st.expander("Copy as Python", icon=":material/code:"):
            st.code(last["snippet"], language="python")


def render_missing_namespace(path: Sequence[str], *, key: str) -> bool:
    """Warn when namespace ``path`` does not exist (offering the root); True when it exists."""
    if not path or run_op(namespace_exists, path, action="Checking the namespace") is not False:
        return True
    st.warning(f"Namespace {display_path(path)} does not exist (deleted, or a stale link).")
    if st.button("Back to the root namespace", key=key):
        go_to([])
    return False


def _properties(rows: Any) -> tuple[dict[str, str], str | None]:
    try:
        return browse.properties_from_rows(rows), None
    except ValueError as err:
        return {}, str(err)


def _refused(problem: str | None, read_only: bool) -> bool:
    """Show why a submitted form is refused (read-only, invalid input); True if refused."""
    if read_only:
        st.error("The connection is read-only.")
    elif problem:
        st.error(problem)
    return read_only or bool(problem)


def render_create_namespace_form(
    ns: Any, path: Sequence[str], *, key_prefix: str, read_only: bool
) -> WriteOutcome | None:
    """Name + properties of a child namespace of ``path``; creates it on submit."""
    with st.form(key_prefix, border=False):
        st.caption(f"Inside {display_path(path)}")
        name = st.text_input("Name", key=f"{key_prefix}.name")
        rows = st.data_editor(
            empty_kv_frame(), num_rows="dynamic", hide_index=True, key=f"{key_prefix}.props"
        )
        submitted = st.form_submit_button("Create namespace", disabled=read_only)
    if not submitted:
        return None
    props, bad_props = _properties(rows)
    if _refused(browse.validate_identifier(name, "namespace") or bad_props, read_only):
        return None
    resp = run_op(browse.create_namespace, ns, path, name, props, action="Creating the namespace")
    if resp is None:
        return None
    return WriteOutcome(f"Created namespace {display_path([*path, name])}.", resp)


def render_declare_table_form(
    ns: Any, path: Sequence[str], *, key_prefix: str, read_only: bool
) -> WriteOutcome | None:
    """Name, location, properties of a table to declare in ``path``; declares it on submit
    (the outcome selects the new table and carries a copy-as-Python snippet)."""
    from lance_namespace import DeclareTableRequest

    with st.form(key_prefix, border=False):
        st.caption(f"Registers a name (and location) in {display_path(path)}; no data yet.")
        name = st.text_input("Table name", key=f"{key_prefix}.name")
        location = st.text_input(
            "Location (optional)",
            key=f"{key_prefix}.location",
            placeholder="chosen by the namespace when empty",
        )
        st.caption("Properties")
        rows = st.data_editor(
            empty_kv_frame(), num_rows="dynamic", hide_index=True, key=f"{key_prefix}.props"
        )
        vend = st.toggle("Vend credentials", key=f"{key_prefix}.vend")
        submitted = st.form_submit_button("Declare table", type="primary", disabled=read_only)
    if not submitted:
        return None
    props, bad_props = _properties(rows)
    if _refused(browse.validate_identifier(name, "table") or bad_props, read_only):
        return None
    resp = run_op(
        browse.declare_table,
        ns,
        path,
        name,
        location=location,
        properties=props,
        vend_credentials=vend,
        action="Declaring the table",
    )
    if resp is None:
        return None
    request = DeclareTableRequest(
        id=[*path, name],
        location=location.strip() or None,
        properties=props or None,
        vend_credentials=True if vend else None,
    )
    return WriteOutcome(
        f"Declared table {display_path([*path, name])}.",
        resp,
        python_snippet("declare_table", request, snippet_connection()),
        select=(list(path), name),
    )


def render_deregister_form(
    ns: Any, table_id: Sequence[str], *, key_prefix: str, read_only: bool
) -> WriteOutcome | None:
    """ "Deregister table" in an expander, guarded by typing the table name."""
    table_id = list(table_id)
    name = table_id[-1]
    with (
        st.expander("Deregister table", icon=":material/link_off:"),
        st.form(key_prefix, border=False),
    ):
        st.caption("Removes the table from the namespace; its files stay at the location above.")
        confirmed = render_typed_confirmation(
            name, key_prefix=key_prefix, label=f"Type the table name `{name}` to confirm"
        )
        submitted = st.form_submit_button("Deregister", disabled=read_only)
    if not submitted:
        return None
    problem = None if confirmed else f"Not deregistered: type `{name}` exactly to confirm."
    if _refused(problem, read_only):
        return None
    resp = run_op(browse.deregister_table, ns, table_id, action="Deregistering")
    if resp is None:
        return None
    return WriteOutcome(
        f"Deregistered table {display_path(table_id)}.", resp, select=(table_id[:-1], None)
    )


# The write dialogs of "Namespaces & tables": name -> (title, icon). Only the open one is
# rendered (their data editors cost a lot even when hidden in an expander).
_DIALOGS = {
    "create_ns": ("Create a namespace", ":material/create_new_folder:"),
    "declare": ("Declare a table", ":material/add_box:"),
}


def _open(name: str) -> None:
    st.session_state.pop(state.CONN_DIALOG, None)  # one dialog at a time
    st.session_state[state.TABLES_DIALOG] = name


def _close() -> None:
    st.session_state.pop(state.TABLES_DIALOG, None)


def render_dialog_button(name: str, *, key_prefix: str, read_only: bool) -> None:
    """The button opening write dialog ``name`` (``"create_ns"`` | ``"declare"``)."""
    title, icon = _DIALOGS[name]
    st.button(
        title,
        key=f"{key_prefix}.{name}.open",
        icon=icon,
        on_click=_open,
        args=(name,),
        disabled=read_only,
        help="The connection is read-only." if read_only else None,
        width="stretch",
    )


@st.dialog("Create a namespace", width="medium", on_dismiss=_close)
def _create_namespace_dialog(ns: Any, path: list[str], key_prefix: str, read_only: bool) -> None:
    outcome = render_create_namespace_form(ns, path, key_prefix=key_prefix, read_only=read_only)
    if outcome is not None:
        finish_write(outcome)


@st.dialog("Declare a table", width="medium", on_dismiss=_close)
def _declare_table_dialog(ns: Any, path: list[str], key_prefix: str, read_only: bool) -> None:
    outcome = render_declare_table_form(ns, path, key_prefix=key_prefix, read_only=read_only)
    if outcome is not None:
        finish_write(outcome)


def render_open_dialog(ns: Any, path: Sequence[str], *, key_prefix: str, read_only: bool) -> None:
    """Render the write dialog opened by :func:`render_dialog_button`, if any. Its form keys
    are ``<key_prefix>.<name><form version>`` (``tables.declare0``)."""
    name = st.session_state.get(state.TABLES_DIALOG)
    if st.session_state.get(state.CONN_DIALOG):
        return  # the sidebar's "Connect to…" is open: one dialog at a time
    if name == "create_ns":
        _create_namespace_dialog(
            ns, list(path), f"{key_prefix}.create_ns{form_version()}", read_only
        )
    elif name == "declare":
        _declare_table_dialog(ns, list(path), f"{key_prefix}.declare{form_version()}", read_only)


def render_table_picker(*, key_prefix: str) -> list[str] | None:
    """Namespace + table selectboxes bound to the shared selection; returns the table id.

    For pages other than "Namespaces & tables" (versions, indexes, transactions). The table
    list of the chosen namespace is listed by name only (no describe). Listing errors are shown
    readably (returns ``None``).
    """
    current_ns, current_table = get_selection()
    c1, c2 = st.columns(2)
    # Namespace: one selectbox per level would be deep; offer the current path's siblings and
    # children as full paths instead.
    parent = current_ns[:-1] if current_ns else []
    candidates: list[tuple[str, ...]] = [tuple(current_ns)]
    try:
        if not namespace_exists(current_ns):
            st.warning(f"Namespace {display_path(current_ns)} does not exist.")
            if st.button("Back to the root namespace", key=f"{key_prefix}.reset"):
                set_selection([], None)
                st.rerun()
            return None
        if current_ns:
            candidates.append(tuple(parent))
            candidates += [(*parent, n) for n in namespace_names(parent)]
        candidates += [(*current_ns, n) for n in namespace_names(current_ns)]
        names = table_names(current_ns)
    except LanceNamespaceError as err:
        show_error(err, action=f"Listing {display_path(current_ns)}")
        if current_ns and st.button("Back to the root namespace", key=f"{key_prefix}.reset"):
            set_selection([], None)
            st.rerun()
        return None
    seen: list[tuple[str, ...]] = []
    for c in candidates:
        if c not in seen:
            seen.append(c)
    with c1:
        chosen = st.selectbox(
            "Namespace",
            seen,
            index=seen.index(tuple(current_ns)),
            format_func=display_path,
            key=f"{key_prefix}.ns.{'/'.join(current_ns)}",
        )
    if list(chosen) != current_ns:
        set_selection(list(chosen), None)
        st.rerun()
    with c2:
        if not names:
            st.selectbox(
                "Table", ["(no tables here)"], disabled=True, key=f"{key_prefix}.table.none"
            )
            return None
        index = names.index(current_table) if current_table in names else None
        table = st.selectbox(
            "Table",
            names,
            index=index,
            placeholder="Pick a table",
            key=f"{key_prefix}.table.{'/'.join(current_ns)}.{current_table}",
        )
    if table and table != current_table:
        set_selection(current_ns, table)
        st.rerun()
    return [*current_ns, table] if table else None


__all__ = [
    "Pick",
    "WriteOutcome",
    "display_path",
    "empty_kv_frame",
    "finish_write",
    "form_version",
    "go_to",
    "render_create_namespace_form",
    "render_declare_table_form",
    "render_deregister_form",
    "render_dialog_button",
    "render_last_result",
    "render_missing_namespace",
    "render_name_list",
    "render_namespace_list",
    "render_open_dialog",
    "get_selected_version",
    "get_selection",
    "namespace_exists",
    "namespace_names",
    "render_breadcrumbs",
    "render_mapping",
    "render_name_grid",
    "render_table_detail",
    "render_table_picker",
    "render_write_result",
    "response_summary",
    "selected_table_id",
    "set_selected_version",
    "set_selection",
    "sync_selection",
    "table_detail",
    "table_names",
]
