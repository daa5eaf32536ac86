"""Namespaces and tables: the shared selection (deep-linked), cached listings, the panels of
"Namespaces & tables", and the table picker of the other pages (the lifecycle panels: drop,
deregister, rename, schema metadata, drop namespace, are in ``components.table_actions``).

Selection is in the URL as ``?ns=a&ns=b&table=t&branch=dev`` (:func:`sync_selection`: a deep
link or a reload wins, otherwise the session's selection is written to the URL; no ``branch``:
main). The branch belongs to the table: picking another table goes back to main. Write forms return the
request to send; the page sends it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import pandas as pd
import streamlit as st
from lance_namespace import CreateNamespaceRequest, DeclareTableRequest

import backend
from backend.errors import LanceNamespaceError
from backend.rules import ids
from backend.rules import properties as props
from backend.services import namespaces as nsv
from backend.services import table_stats as tstats
from backend.services.lifecycle import PROPERTIES_READ_ONLY
from backend.spec.paging import Listing, filter_names, paginate
from backend.text import plural
from components import feedback, state
from components.cache import CATALOG, cached, invalidate, shared, table_scope
from components.common import (
    dataframe,
    empty_kv_frame,
    render_json,
    render_mapping,
    render_path,
    scroll_into_view,
)
from components.connection import get_namespace
from components.pager import pager_key, render_listing_pager, render_pager

# --------------------------------------------------------------------------------------------
# Selection + deep links
# --------------------------------------------------------------------------------------------


def sync_selection() -> None:
    """Reconcile selection and URL: query parameters (a deep link, a reload) win, the branch
    with them (a link without ``branch``: main); otherwise the session's selection is written
    to the URL so the page can be bookmarked."""
    qp_ns = (
        st.query_params.get_all(state.QP_NAMESPACE)
        if state.QP_NAMESPACE in st.query_params
        else None
    )
    qp_table = st.query_params.get(state.QP_TABLE)
    if qp_ns is not None or qp_table:
        new_ns = [p for p in (qp_ns or []) if p]
        if (new_ns, qp_table or None) != state.selection():
            state.set_selection(new_ns, qp_table or None)
        state.set_branch(st.query_params.get(state.QP_BRANCH) or None)
        return
    _write_query_params()


def _write_query_params() -> None:
    namespace, table = state.selection()
    branch = state.selected_branch()
    if namespace:
        st.query_params[state.QP_NAMESPACE] = list(namespace)
    elif state.QP_NAMESPACE in st.query_params:
        del st.query_params[state.QP_NAMESPACE]
    if table:
        st.query_params[state.QP_TABLE] = table
    elif state.QP_TABLE in st.query_params:
        del st.query_params[state.QP_TABLE]
    if table and branch != state.MAIN_BRANCH:
        st.query_params[state.QP_BRANCH] = branch
    elif state.QP_BRANCH in st.query_params:
        del st.query_params[state.QP_BRANCH]


def set_selection(namespace: Sequence[str], table: str | None = None) -> None:
    """Select a namespace (and a table); updates the URL too. The version picked for the
    previous table is forgotten, and so are a ``?tag=`` link to it and its branch (the new
    table is shown on main)."""
    if (list(namespace), table) != state.selection():
        state.drop(state.QP_VERSION)
        state.drop(state.QP_INDEX)
        state.set_branch(None)
        if state.QP_TAG in st.query_params:
            del st.query_params[state.QP_TAG]
    state.set_selection(list(namespace), table)
    _write_query_params()


def set_branch(branch: str | None) -> None:
    """Pick a branch of the selected table (``None`` / ``"main"``: main); updates the URL too.
    The version picked on another branch is forgotten."""
    if (branch or state.MAIN_BRANCH) != state.selected_branch():
        state.drop(state.QP_VERSION)
        state.drop(state.QP_INDEX)
    state.set_branch(branch)
    _write_query_params()


def go_to(namespace: Sequence[str], table: str | None = None) -> None:
    set_selection(namespace, table)
    st.rerun()


def selected_table_id() -> list[str] | None:
    namespace, table = state.selection()
    return [*namespace, table] if table else None


# --------------------------------------------------------------------------------------------
# Cached reads
# --------------------------------------------------------------------------------------------


@cached(lambda parent: CATALOG)
def namespace_names(ns: Any, parent: tuple[str, ...]) -> list[str]:
    return nsv.list_namespace_names(ns, parent)


@cached(lambda path: CATALOG)
def namespace_exists(ns: Any, path: tuple[str, ...]) -> bool:
    return nsv.namespace_exists(ns, path)


@cached(lambda namespace: CATALOG)
def table_names(ns: Any, namespace: tuple[str, ...]) -> list[str]:
    return nsv.list_table_names(ns, namespace)


@shared(lambda namespace: CATALOG)
def table_listing(ns: Any, namespace: tuple[str, ...]) -> Listing:
    """The tables of ``namespace``, read page by page as far as asked (shared by the
    sessions of the connection; read anew after a minute or a write to the catalog)."""
    return nsv.table_listing(ns, namespace)


def listed_tables(path: Sequence[str], count: int | None) -> Listing | None:
    """The tables of ``path`` read at least as far as ``count`` (``None``: every one);
    ``None`` when listing failed (the error is shown)."""
    return feedback.run(table_listing(tuple(path)).ensure, count, action="Listing tables")


@cached(lambda table_id: CATALOG)
def table_exists(ns: Any, table_id: tuple[str, ...]) -> bool:
    return nsv.table_exists(ns, table_id)


@cached(lambda: CATALOG)
def namespace_tree(ns: Any) -> nsv.NamespaceTree:
    return nsv.namespace_tree(ns, max_nodes=TREE_MAX_NODES)


@cached(lambda table_id, branch="main": table_scope(table_id))
def table_detail(ns: Any, table_id: tuple[str, ...], branch: str = "main") -> nsv.TableDetail:
    """The table's details (of ``branch``: its version, schema and counts)."""
    from backend.branch_view import on_branch

    return nsv.describe_table(on_branch(ns, branch), table_id)


# --------------------------------------------------------------------------------------------
# Panels
# --------------------------------------------------------------------------------------------


def render_breadcrumbs(path: Sequence[str], *, key_prefix: str) -> None:
    """Root › a › b as one row of small buttons; a click opens that namespace (a callback)."""
    crumbs: list[tuple[str, list[str]]] = [("(root)", [])]
    crumbs += [(name, list(path[: i + 1])) for i, name in enumerate(path)]
    with st.container(horizontal=True, gap=None, vertical_alignment="center"):
        for i, (label, target) in enumerate(crumbs):
            st.button(
                feedback.as_text(label),
                key=f"{key_prefix}.crumb.{i}",
                type="tertiary",
                icon=":material/home:" if i == 0 else ":material/chevron_right:",
                disabled=i == len(crumbs) - 1,
                on_click=set_selection,
                args=(target,),
            )


class Pick(NamedTuple):
    """A click in a :func:`render_name_list`: the name picked, or ``None`` when deselected."""

    name: str | None


def render_name_list(
    names: Sequence[str] | Listing,
    *,
    key_prefix: str,
    column: str = "name",
    selected: str | None = None,
    reset_on: tuple[Any, ...] = (),
    frame: Callable[[list[str]], pd.DataFrame] | None = None,
    column_config: dict[str, Any] | None = None,
) -> Pick | None:
    """One page of ``names`` as a single selectable grid, with the pager. Returns a
    :class:`Pick` when the user selected (or deselected) a row. The grid is made anew (fresh
    highlight) when ``reset_on``, the page, or ``selected`` changed by anything but a click.
    ``frame``: the grid's rows for the names of the page (one row per name, in order; the
    default is the one ``column`` of names), shown with ``column_config``. ``names`` may be
    an open-ended :class:`~backend.spec.paging.Listing`: only the pages shown are read."""
    if isinstance(names, Listing):
        if not names.known:
            return None
        page = render_listing_pager(
            names, key_prefix=key_prefix, reset_on=reset_on, noun=column + "s"
        )
    elif not names:
        return None
    else:
        page = render_pager(names, key_prefix=key_prefix, reset_on=reset_on, noun=column + "s")
    items = list(page.items)
    memo_key = f"{key_prefix}.memo"
    memo = state.get(memo_key) or {}
    epoch = memo.get("epoch", 0) + (1 if memo.get("selected", "") != selected else 0)
    key = pager_key(f"{key_prefix}.grid", *reset_on, page.number, epoch)
    on_page = selected if selected in items else None
    shown = memo.get("shown") if memo.get("key") == key else on_page
    default = {"selection": {"rows": [items.index(on_page)], "columns": []}} if on_page else None
    event = dataframe(
        frame(items) if frame is not None else pd.DataFrame({column: items}),
        key=key,
        column_config=column_config,
        on_select="rerun",
        selection_mode="single-row",
        selection_default=default,
        hide_index=True,
        width="stretch",
    )
    rows = list(event.selection.rows) if event is not None else []
    picked = items[rows[0]] if rows and 0 <= rows[0] < len(items) else None
    changed = picked != shown
    state.put(
        memo_key,
        {"epoch": epoch, "key": key, "shown": picked, "selected": picked if changed else selected},
    )
    return Pick(picked) if changed else None


TREE_MAX_NODES = 200  # namespaces the tree on the page shows at most (one button each)
TREE_INDENT_PX = 14  # indentation per level of the tree


def _pick_namespace(path: tuple[str, ...]) -> None:
    """A tree node's callback: the same selection as opening a namespace elsewhere."""
    set_selection(list(path))


def render_namespace_tree(path: Sequence[str], *, key_prefix: str) -> None:
    """Every namespace from the root as an indented list; the selected one in bold and
    open. Clicking one selects it (a callback: the breadcrumbs, lists and pickers follow)."""
    tree = feedback.run(namespace_tree, action="Reading the namespace tree")
    if tree is None:
        return
    current = tuple(path)
    if (
        current
        and not tree.capped
        and all(node.path != current for _, node in tree.rows())
        and feedback.run(namespace_exists, current, action="Reading the namespace")
    ):
        # Another writer made the namespace after the tree was read: the catalog's listings
        # of this connection are out of date; read them again.
        invalidate(CATALOG)
        tree = feedback.run(namespace_tree, action="Reading the namespace tree")
        if tree is None:
            return
    nodes = [(0, nsv.NamespaceNode("(root)", ()))] + tree.rows()
    box = st.container(gap=None)
    for depth, node in nodes:
        here = node.path == current
        label = feedback.as_text(node.name)
        with box.container(horizontal=True, gap=None, vertical_alignment="center"):
            if depth:
                st.space(TREE_INDENT_PX * depth)
            st.button(
                f"**{label}**" if here else label,
                key=state.panel_key(f"{key_prefix}.node", node.path),
                type="tertiary",
                icon=(
                    ":material/home:"
                    if not node.path
                    else ":material/folder_open:"
                    if here
                    else ":material/folder:"
                ),
                help=ids.display_id(node.path),
                on_click=_pick_namespace,
                args=(node.path,),
            )
    if note := tree.capped_note():
        st.caption(":orange[" + feedback.as_text(note) + "]")
    elif not tree.count:
        st.caption("No namespaces below the root.")


NAMESPACE_BUTTONS_MAX = 20  # more child namespaces than this: a selectable grid, not buttons


def render_namespace_list(
    children: Sequence[str], path: Sequence[str], *, key_prefix: str
) -> list[str] | None:
    """The child namespaces of ``path``: buttons when few (a click opens the child: a
    callback), a grid when many. Returns the path of the child picked in the grid, else
    ``None``."""
    if not children:
        st.caption(f"No namespaces inside {feedback.as_text(ids.display_id(path))}.")
        return None
    if len(children) > NAMESPACE_BUTTONS_MAX:
        pick = render_name_list(
            children, key_prefix=key_prefix, column="namespace", reset_on=(tuple(path),)
        )
        return [*path, pick.name] if pick and pick.name else None
    page = paginate(children, 1, NAMESPACE_BUTTONS_MAX)
    for name in page.items:
        st.button(
            feedback.as_text(name),
            key=f"{key_prefix}.open.{name}",
            icon=":material/folder:",
            type="tertiary",
            on_click=set_selection,
            args=([*path, name],),
        )
    return None


# The schema grid: the type takes the room (nested types are long), the full text on hover.
SCHEMA_COLUMNS: dict[str, Any] = {
    "column": st.column_config.TextColumn("Column", width=200),
    "type": st.column_config.TextColumn(
        "Type", width=560, help="Arrow type (a long nested type: hover a cell for all of it)"
    ),
    "nullable": st.column_config.CheckboxColumn("Nullable", width=80),
}


def render_table_detail(detail: nsv.TableDetail, *, key_prefix: str) -> None:
    """Header, metrics, location and tabs (schema, properties, storage options, metadata)."""
    badge = ":orange-badge[declared only]" if detail.declared_only else ":green-badge[materialised]"
    st.subheader(feedback.as_text(detail.name), anchor=False)
    st.markdown(f"{badge} in {feedback.as_text(ids.display_id(detail.namespace))}")
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Version", "—" if detail.version is None else detail.version)
    c2.metric("Rows", "—" if detail.row_count is None else f"{detail.row_count:,}")
    c3.metric("Columns", len(detail.schema) if not detail.schema.empty else "—")
    if detail.num_fragments is not None:
        c4.metric("Fragments", f"{detail.num_fragments:,}")
    else:
        c4.metric("Fragments", "—" if detail.declared_only else "n/a")
    st.caption("Location")
    render_path(detail.location or "(none)")
    if detail.managed_versioning is not None:
        st.caption(f"Managed versioning: {'yes' if detail.managed_versioning else 'no'}")
    for problem in detail.problems:
        st.caption(":orange[" + feedback.as_text(problem) + "]")
    schema_tab, props_tab, storage_tab, meta_tab = st.tabs(
        [
            "Schema",
            f"Properties ({len(detail.properties)})",
            f"Storage options ({len(detail.storage_options)})",
            f"Metadata ({len(detail.metadata)})",
        ]
    )
    with schema_tab:
        if detail.schema.empty:
            st.info(
                "No schema yet: the table is declared but has no data."
                if detail.declared_only
                else "The namespace returned no schema."
            )
        else:
            st.dataframe(
                detail.schema,
                hide_index=True,
                key=f"{key_prefix}.schema",
                width="stretch",
                column_config=SCHEMA_COLUMNS,
            )
    with props_tab:
        render_mapping(detail.properties, empty="No properties.", key_prefix=f"{key_prefix}.props")
        st.caption(PROPERTIES_READ_ONLY)
    with storage_tab:
        render_mapping(
            detail.storage_options,
            empty="No storage options returned.",
            key_prefix=f"{key_prefix}.storage",
        )
    with meta_tab:
        render_mapping(detail.metadata, empty="No metadata.", key_prefix=f"{key_prefix}.meta")


def render_write_result(item: dict[str, Any] | None, *, key_prefix: str) -> None:
    """The response kept with a write's flash message (location, storage options, JSON)."""
    body = (item or {}).get("body")
    if not body:
        return
    if "location" in body:
        st.caption("Location")
        render_path(body.get("location") or "(none)")
    render_json(body, key_prefix=f"{key_prefix}.json", label="Response")


# --------------------------------------------------------------------------------------------
# Write forms: they return the request; the page sends it
# --------------------------------------------------------------------------------------------


def _refused(problem: str | None, read_only: bool) -> bool:
    if read_only:
        feedback.show("error", "The connection is read-only.")
    elif problem:
        feedback.show("error", problem)
    return read_only or bool(problem)


def _properties(rows: Any) -> tuple[dict[str, str], str | None]:
    try:
        return props.from_rows(rows), None
    except LanceNamespaceError as err:
        return {}, str(err)


def _request(make: Callable[[], Any]) -> tuple[Any, str | None]:
    try:
        return make(), None
    except LanceNamespaceError as err:
        return None, str(err)


def render_create_namespace_form(
    path: Sequence[str], *, key_prefix: str, read_only: bool
) -> CreateNamespaceRequest | None:
    """Name + properties of a child namespace of ``path``; the request on submit."""
    with st.form(key_prefix, border=False):
        st.caption(f"Inside {feedback.as_text(ids.display_id(path))}")
        name = st.text_input("Name", key=f"{key_prefix}.name")
        rows = st.data_editor(
            empty_kv_frame(), num_rows="dynamic", hide_index=True, key=f"{key_prefix}.props"
        )
        submitted = st.form_submit_button("Create namespace", disabled=read_only)
    if not submitted:
        return None
    properties, bad = _properties(rows)
    problem = ids.name_problem(name, "namespace") or bad
    request, bad_request = (
        (None, None)
        if problem
        else _request(lambda: nsv.create_namespace_request(path, name, properties))
    )
    return None if _refused(problem or bad_request, read_only) else request


def render_declare_table_form(
    path: Sequence[str], *, key_prefix: str, read_only: bool
) -> DeclareTableRequest | None:
    """Name, location, properties of a table to declare in ``path``; the request on submit."""
    with st.form(key_prefix, border=False):
        st.caption(
            f"Registers a name (and location) in {feedback.as_text(ids.display_id(path))}; no data yet."
        )
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
    properties, bad = _properties(rows)
    problem = ids.name_problem(name, "table") or bad
    request, bad_request = (
        (None, None)
        if problem
        else _request(
            lambda: nsv.declare_table_request(
                path, name, location=location, properties=properties, vend_credentials=vend
            )
        )
    )
    return None if _refused(problem or bad_request, read_only) else request


# The write dialogs of "Namespaces & tables": name -> (title, icon, form). Only the open one
# is rendered (their data editors cost a lot even when hidden).
_DIALOGS: dict[str, tuple[str, str, Callable[..., Any]]] = {
    "create_ns": (
        "Create a namespace",
        ":material/create_new_folder:",
        render_create_namespace_form,
    ),
    "declare": ("Declare a table", ":material/add_box:", render_declare_table_form),
}


def render_dialog_button(name: str, *, key_prefix: str, read_only: bool) -> None:
    title, icon, _form = _DIALOGS[name]
    st.button(
        title,
        key=f"{key_prefix}.{name}.open",
        icon=icon,
        on_click=state.open_dialog,
        args=(name,),
        disabled=read_only,
        help="The connection is read-only." if read_only else None,
        width="stretch",
    )


def render_open_dialog(
    path: Sequence[str], *, key_prefix: str, read_only: bool, submit: Callable[[Any], bool]
) -> None:
    """The write dialog opened by :func:`render_dialog_button`, if any. Its form's request goes
    to ``submit`` (the page's write; it returns whether the write succeeded)."""
    name = state.dialog()
    if name not in _DIALOGS:
        return
    title, _icon, form = _DIALOGS[name]

    @st.dialog(title, width="medium", on_dismiss=lambda: state.open_dialog(None))
    def body() -> None:
        key = state.form_key("tables", f"{key_prefix}.{name}")
        request = form(path, key_prefix=key, read_only=read_only)
        if request is not None and submit(request):
            state.open_dialog(None)
            st.rerun()

    body()


# --------------------------------------------------------------------------------------------
# The sections of "Namespaces & tables"
# --------------------------------------------------------------------------------------------


def render_header(path: Sequence[str], *, read_only: bool) -> None:
    """Breadcrumbs, the read-only notice, a stale link to a missing namespace (stops the page),
    and the result of the last write."""
    from components.common import render_read_only_notice
    from components.snippets import render_code

    render_breadcrumbs(path, key_prefix=state.Tables.CRUMBS)
    if read_only:
        render_read_only_notice()
    exists = feedback.run(namespace_exists, tuple(path), action="Checking the namespace")
    if path and exists is False:
        feedback.show(
            "warning",
            f"Namespace {ids.display_id(path)} does not exist (deleted, or a stale link).",
        )
        _back_to_root(state.Tables.RESET)
        st.stop()
    flashed = feedback.render_flash("tables")
    if flashed:
        render_write_result(flashed, key_prefix=state.Tables.RESULT)
        render_code(flashed.get("snippet"))


def render_namespaces_column(path: Sequence[str], *, read_only: bool) -> None:
    """The child namespaces (opening one navigates) and "Create a namespace"."""
    st.subheader("Namespaces", anchor=False)
    children = feedback.run(namespace_names, tuple(path), action="Listing namespaces") or []
    child = render_namespace_list(children, path, key_prefix=state.Tables.NS)
    if child is not None:
        go_to(child)
    render_dialog_button("create_ns", key_prefix=state.Tables.DIALOGS, read_only=read_only)


@st.cache_resource(show_spinner=False, max_entries=16)
def _stats_fill(conn: str, _ns: Any) -> tstats.StatsFill:
    """The background fill of the tables lists' figures, one per connection (its reads of a
    table's version are kept per location and version)."""
    memo = tstats.VersionMemo()
    return tstats.StatsFill(lambda tid: tstats.read_stats(_ns, tid, memo))


def stats_fill() -> tstats.StatsFill:
    """The fill of the active connection."""
    from components.connection import connection_key, get_namespace

    return _stats_fill(connection_key(), get_namespace())


def table_stats(
    path: Sequence[str], names: Sequence[str]
) -> tuple[dict[str, tstats.TableStats | None], list[str]]:
    """The figures known of ``names`` in ``path`` (``None``: pending) and the names still
    pending; those not read yet, or read before the table's last write, are queued (in the
    order given)."""
    from components.cache import epoch
    from components.connection import connection_key

    conn = connection_key()
    wanted = [((*path, n), epoch(conn, table_scope((*path, n)))) for n in names]
    known = stats_fill().lookup(wanted)
    out = {tid[-1]: value for tid, value in known.items()}
    return out, [name for name, value in out.items() if value is None]


STATS_POLL_S = 1.0  # how often a list with pending figures looks for them


def _poll_stats(path: tuple[str, ...], pending: tuple[str, ...]) -> None:
    """While figures on screen are pending: every second, rerun the page once they are in."""

    @st.fragment(run_every=STATS_POLL_S)
    def poll() -> None:
        if not stats_fill().missing([(*path, n) for n in pending]):
            feedback.keep_flash("tables")
            st.rerun()

    poll()


def stats_column_config(*, rest: bool) -> dict[str, Any]:
    """How the tables list shows its figures (widths fit the right-hand column)."""
    na = " (n/a over REST: DescribeTable does not give it)" if rest else ""
    # Widths in pixels, short labels (the long meaning in ``help``): every column, the row
    # checkbox and the border fit the page's right-hand column at 1440 px without clipping.
    return {
        "table": st.column_config.TextColumn("Table", width=130),
        "rows": st.column_config.NumberColumn(
            "Rows", format="localized", width=70, help="Rows of the latest version" + na
        ),
        "size_bytes": st.column_config.NumberColumn(
            "Size",
            format="bytes",
            width=75,
            help="Size on disk: every file under the table's folder (all versions, indexes, "
            "manifests)" + na,
        ),
        "version": st.column_config.NumberColumn(
            "Version", format="%d", width=62, help="Latest version"
        ),
        "indexes": st.column_config.NumberColumn(
            "Indexes", format="%d", width=62, help="How many indexes the table has" + na
        ),
        "last_change": st.column_config.DatetimeColumn(
            "Changed (UTC)",
            format="YYYY-MM-DD HH:mm",
            width=125,
            help="When the latest version was committed (UTC)" + na,
        ),
        "state": st.column_config.TextColumn(
            "State", width=90, help="pending: being read; declared only: no data yet"
        ),
    }


SORT_SCOPE = nsv.LIST_BATCH  # tables a sort by a figure orders at a time (more on request)


def _widen_sort(key: str) -> None:
    """ "Sort N more" (a callback): the sort by a figure takes in the next tables."""
    state.put(key, int(state.get(key) or SORT_SCOPE) + SORT_SCOPE)


def render_tables_column(path: Sequence[str], table: str | None, *, read_only: bool) -> None:
    """The tables of ``path`` with their figures, a search and a sort (picking one
    navigates), and "Declare a table". By name, the list is read a page at a time (the
    server's order, pylance's by name); a search or a descending name order reads every name;
    a sort by a figure orders the first :data:`SORT_SCOPE` tables by name (more on request),
    and says so when there are more. Figures are read in the background (the tables on
    screen first, then those a sort orders) and kept per table version."""
    st.subheader(f"Tables in {feedback.as_text(ids.display_id(path))}", anchor=False)
    c_search, c_sort, c_desc = st.columns([5, 3, 2], vertical_alignment="bottom")
    search = c_search.text_input(
        "Search tables",
        key=state.Tables.SEARCH,
        placeholder="part of a name, or a glob like orders_*",
        icon=":material/search:",
    )
    sorts: list[str] = list(tstats.SORTS)
    by: str = (
        c_sort.selectbox(
            "Sort by", sorts, format_func=lambda s: tstats.SORTS[s], key=state.Tables.SORT
        )
        or "name"
    )
    descending = c_desc.toggle("Descending", key=state.Tables.SORT_DESC)
    every_name = bool(search) or (by == "name" and descending)
    listing = listed_tables(path, None if every_name else SORT_SCOPE)
    scope_key = state.panel_key(state.Tables.SORT_SCOPE, tuple(path))
    scope = int(state.get(scope_key) or SORT_SCOPE)
    if listing is not None and by != "name" and not listing.complete:
        listing = listed_tables(path, scope)
    names: list[str] = []
    if listing is not None and (listing.complete or by != "name"):
        names = listing.items()
        if listing.complete:
            names = sorted(set(names))
    known = listing.known if listing is not None else 0
    listed = f"{known:,}" if listing is None or listing.complete else f"{known:,}+"
    shown = filter_names(names, search)
    if search:
        st.caption(
            f"{len(shown)} of {listed} {'table' if listed == '1' else 'tables'} "
            f"{'matches' if len(shown) == 1 else 'match'} {feedback.as_text(search)}."
        )
    elif listing is not None and not known:
        st.caption("No tables here.")
    pending: list[str] = []
    source: list[str] | Listing = shown
    if by != "name" and shown:
        scoped = shown[:scope]
        every, pending = table_stats(path, scoped)
        source = tstats.sort_names(scoped, every, by, descending=descending)
        whole = listing is None or listing.complete or bool(search)
        if len(shown) > scope or not whole:
            of = f" of {len(shown):,}" if whole else ""
            st.caption(
                f"Sorted by {tstats.SORTS[by].lower()} among the first {len(scoped):,}{of} "
                f"tables by name{'' if whole else ' (more follow)'}: the order is partial "
                "(figures are read for these only)."
            )
            st.button(
                f"Sort {SORT_SCOPE:,} more",
                key=f"{state.Tables.LIST}.more",
                on_click=_widen_sort,
                args=(scope_key,),
                type="tertiary",
                icon=":material/unfold_more:",
            )
    elif descending:
        source = sorted(shown, reverse=True)
    elif listing is not None and not listing.complete and not search:
        source = listing  # by name: read a page at a time

    def frame(items: list[str]) -> pd.DataFrame:
        known, missing = table_stats(path, items)
        pending.extend(n for n in missing if n not in pending)
        return tstats.stats_frame(items, known)

    rest = backend.capabilities(get_namespace()).kind == "rest"
    pick = render_name_list(
        source,
        key_prefix=state.Tables.LIST,
        column="table",
        selected=table,
        reset_on=(tuple(path), search, by, descending, scope),
        frame=frame,
        column_config=stats_column_config(rest=rest),
    )
    if pending:
        st.caption(f"Reading the figures of {plural(len(pending), 'table')}…")
        _poll_stats(tuple(path), tuple(pending))
    elif rest and known:
        st.caption(
            "Over REST the list shows what DescribeTable returns: the latest version; rows, "
            "size, indexes and last change are n/a unless the server's answer carries them."
        )
    if pick:
        if pick.name:  # its details open below the list: brought into view once drawn
            state.put(state.Tables.SCROLL_TO_DETAIL, True)
        go_to(path, pick.name)
    render_dialog_button("declare", key_prefix=state.Tables.DIALOGS, read_only=read_only)


def render_table_section(table_id: list[str]) -> nsv.TableDetail | None:
    """One table: details, copy as Python and a link to its versions; returns the detail
    (``None`` when it could not be read). Its lifecycle panels: ``components.table_actions``."""
    from lance_namespace import DescribeTableRequest

    from components.snippets import render_python_snippet

    st.divider()
    with st.container(key=state.Tables.DETAIL_BOX):
        detail = feedback.run(table_detail, tuple(table_id), action=f"Describing {table_id[-1]}")
        if detail is not None:
            render_table_detail(detail, key_prefix=state.Tables.DETAIL)
            render_python_snippet(
                "describe_table",
                DescribeTableRequest(id=table_id, load_detailed_metadata=True),
                key_prefix=state.Tables.DETAIL_SNIPPET,
            )
            if st.button("Versions", icon=":material/history:", key=state.Tables.TO_VERSIONS):
                st.switch_page("views/versions.py")
    if state.drop(state.Tables.SCROLL_TO_DETAIL):  # picked in the list: its details (or why
        scroll_into_view(state.Tables.DETAIL_BOX)  # they cannot be read) come into view
    return detail


# --------------------------------------------------------------------------------------------
# The table picker of the other pages
# --------------------------------------------------------------------------------------------


def nearby_namespaces(current: list[str]) -> list[tuple[str, ...]]:
    """The current namespace, its parent, its siblings and its children, as full paths."""
    parent = current[:-1]
    found: list[tuple[str, ...]] = [tuple(current)]
    if current:
        found.append(tuple(parent))
        found += [(*parent, n) for n in namespace_names(tuple(parent))]
    found += [(*current, n) for n in namespace_names(tuple(current))]
    return list(dict.fromkeys(found))


def _back_to_root(key: str) -> None:
    """ "Back to the root namespace" (a callback selects the root)."""
    st.button("Back to the root namespace", key=key, on_click=set_selection, args=([],))


def _picker_namespace(key: str) -> None:
    """The picker's namespace changed (a callback): it becomes the shared selection."""
    set_selection(list(state.get(key) or ()))


def _picker_table(key: str, namespace: list[str]) -> None:
    """The picker's table changed (a callback): it becomes the shared selection."""
    if picked := state.get(key):
        set_selection(namespace, picked)


PICKER_OPTIONS = nsv.LIST_BATCH  # names a table picker offers at most (a search finds others)


def _picker_options(
    listing: Listing, query: str, table: str | None, namespace: Sequence[str]
) -> tuple[list[str], str]:
    """The names a big namespace's picker offers (the first :data:`PICKER_OPTIONS` by name,
    or of those matching ``query``: every name is read then; the table picked stays
    offered while it exists) and what to say about them."""
    if query:
        matches = filter_names(sorted(set(listing.read_all())), query)
        said = f"{plural(len(matches), 'table')} of {listing.known:,} match."
    else:
        matches = listing.items(0, PICKER_OPTIONS)
        said = (
            f"The first {len(matches):,} tables by name (more follow); type part of a name "
            "to find another."
        )
    options = matches[:PICKER_OPTIONS]
    if query and len(matches) > len(options):
        said += f" The first {len(options):,} are offered: type more of the name."
    if table and table not in options and table_exists((*namespace, table)):
        options = [table, *options]
    return options, said


def _nearby(current: list[str], key_prefix: str) -> list[tuple[str, ...]] | None:
    """The namespaces a picker offers around ``current`` (:func:`nearby_namespaces`), or
    ``None`` when ``current`` does not exist or cannot be listed (said, with a way back to
    the root)."""
    try:
        if not namespace_exists(tuple(current)):
            feedback.show("warning", f"Namespace {ids.display_id(current)} does not exist.")
            _back_to_root(f"{key_prefix}.reset")
            return None
        return nearby_namespaces(current)
    except LanceNamespaceError as err:
        feedback.show_error(err, action=f"Listing {ids.display_id(current)}")
        if current:
            _back_to_root(f"{key_prefix}.reset")
        return None


def _namespace_box(where: Any, spaces: list[tuple[str, ...]], current: list[str], key: str) -> None:
    """The picker's namespace selectbox (its key set to the selection before it is drawn; a
    pick becomes the shared selection in its callback)."""
    state.put(key, tuple(current))
    where.selectbox(
        "Namespace",
        spaces,
        format_func=ids.display_id,
        key=key,
        on_change=_picker_namespace,
        args=(key,),
    )


def render_namespace_picker(*, key_prefix: str) -> list[str] | None:
    """The namespace selectbox of :func:`render_table_picker` alone (pages about a whole
    namespace); returns the namespace id (``[]``: the root), ``None`` when it does not exist
    or cannot be listed."""
    current, _table = state.selection()
    spaces = _nearby(current, key_prefix)
    if spaces is None:
        return None
    _namespace_box(st, spaces, current, f"{key_prefix}.ns")
    return list(current)


def render_table_picker(*, key_prefix: str) -> list[str] | None:
    """Namespace + table selectboxes bound to the shared selection; returns the table id.
    Their keys are stable (``<prefix>.ns``, ``<prefix>.table``): each run they are set to the
    selection before they are drawn, and a pick changes the selection in its callback. A
    namespace of more than :data:`PICKER_OPTIONS` tables is read only as far as the first of
    them, and a "Find a table" search (``<prefix>.find``) beside the box offers the others."""
    current, table = state.selection()
    spaces = _nearby(current, key_prefix)
    if spaces is None:
        return None
    try:
        listing = table_listing(tuple(current)).ensure(PICKER_OPTIONS)
        big = not listing.complete or listing.known > PICKER_OPTIONS
        find_key = f"{key_prefix}.find"
        query = str(state.get(find_key) or "").strip() if big else ""
        if big:
            names, said = _picker_options(listing, query, table, current)
        else:
            names, said = sorted(set(listing.items())), ""
    except LanceNamespaceError as err:
        feedback.show_error(err, action=f"Listing {ids.display_id(current)}")
        if current:
            _back_to_root(f"{key_prefix}.reset")
        return None
    c1, *rest = st.columns(3 if big else 2)
    table_key = f"{key_prefix}.table"
    _namespace_box(c1, spaces, current, f"{key_prefix}.ns")
    if big:
        rest[0].text_input(
            "Find a table",
            key=find_key,
            placeholder="part of a name, or a glob like orders_*",
            icon=":material/search:",
        )
    c2 = rest[-1]
    if not names:
        none = "(no match)" if query else "(no tables here)"
        c2.selectbox("Table", [none], disabled=True, key=f"{key_prefix}.table.none")
        if said:
            st.caption(feedback.as_text(said))
        return None
    picked = table if table in names else None
    state.put(table_key, picked)
    c2.selectbox(
        "Table",
        names,
        index=None,
        placeholder=f"Pick one of {plural(len(names), 'table')}",
        key=table_key,
        on_change=_picker_table,
        args=(table_key, list(current)),
    )
    if said:
        st.caption(feedback.as_text(said))
    return [*current, picked] if picked else None


__all__ = [
    "Pick",
    "go_to",
    "namespace_exists",
    "namespace_names",
    "namespace_tree",
    "nearby_namespaces",
    "render_breadcrumbs",
    "render_create_namespace_form",
    "render_declare_table_form",
    "render_dialog_button",
    "render_name_list",
    "render_namespace_list",
    "render_namespace_picker",
    "render_namespace_tree",
    "render_open_dialog",
    "render_table_detail",
    "render_table_picker",
    "render_write_result",
    "selected_table_id",
    "set_branch",
    "set_selection",
    "sync_selection",
    "table_detail",
    "table_exists",
    "table_listing",
    "table_names",
]
