"""Namespace/table selection (shared by all pages), cached listings, and table panels.

Selection (deep-linked through ``?ns=a&ns=b&table=t``):

* :func:`sync_selection` - call at the top of a page: query parameters win, else the session's
  selection is written to the URL;
* :func:`get_selection` / :func:`set_selection` / :func:`selected_table_id`;
* :func:`render_table_picker` - a compact namespace + table chooser for other pages.

Cached reads (keyed by :func:`components.connection.connection_key`, cleared after writes):
:func:`namespace_names`, :func:`table_names`, :func:`table_detail`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st
from lance_namespace.errors import LanceNamespaceError

from backend import browse
from components import state
from components.common import mask_mapping, masked_dump, render_json, show_error
from components.connection import connection_key, require_namespace

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
    """Root › a › b as buttons; returns the path clicked (a prefix of ``path``), else ``None``."""
    crumbs = [("(root)", [])] + [(name, list(path[: i + 1])) for i, name in enumerate(path)]
    clicked = None
    row = st.container(horizontal=True, gap="small", vertical_alignment="center")
    for i, (label, target) in enumerate(crumbs):
        is_last = i == len(crumbs) - 1
        with row:
            if st.button(
                label,
                key=f"{key_prefix}.crumb.{i}",
                type="tertiary",
                icon=":material/home:" if i == 0 else ":material/chevron_right:",
                disabled=is_last,
            ):
                clicked = target
    return clicked


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


def render_table_detail(detail: browse.TableDetail, *, key_prefix: str) -> None:
    """Header, metrics, location and tabs (schema, properties, storage options, metadata)."""
    badge = ":orange-badge[declared only]" if detail.declared_only else ":green-badge[materialised]"
    st.subheader(f"{detail.name}", anchor=False)
    st.markdown(f"{badge} in `{display_path(detail.namespace)}`")
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Version", "—" if detail.version is None else detail.version)
    c2.metric("Rows", "—" if detail.row_count is None else f"{detail.row_count:,}")
    c3.metric("Columns", len(detail.schema) if not detail.schema.empty else "—")
    c4.metric("Fragments", "—" if detail.num_fragments is None else detail.num_fragments)
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
    "display_path",
    "empty_kv_frame",
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
