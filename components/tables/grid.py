"""The tables column of "Namespaces & tables": the tables of a namespace with their figures
(read in the background), a search and a sort.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

import backend
from backend.rules import ids
from backend.services import namespaces as nsv
from backend.services import table_stats as tstats
from backend.spec.paging import Listing, filter_names
from backend.text import plural, verb
from components import feedback, polling, state
from components.cache import table_scope
from components.session import get_namespace
from components.tables.catalog import listed_tables
from components.tables.name_list import render_name_list
from components.tables.selection import go_to


@st.cache_resource(show_spinner=False, max_entries=16)
def _stats_fill(conn: str, _ns: Any) -> tstats.StatsFill:
    """The background fill of the tables lists' figures, one per connection (its reads of a
    table's version are kept per version: ``table_stats.version_key``)."""
    memo = tstats.VersionMemo()
    return tstats.StatsFill(
        lambda tid: tstats.read_stats(_ns, tid, memo), workers=tstats.fill_workers(_ns)
    )


def stats_fill() -> tstats.StatsFill:
    """The fill of the active connection."""
    from components.session import connection_key, get_namespace

    return _stats_fill(connection_key(), get_namespace())


def _wanted(path: Sequence[str], names: Sequence[str]) -> list[tuple[tuple[str, ...], int]]:
    """``(table id, generation)`` of each of ``names``: the generation is the count of the
    console's writes of the table (``components.cache.epoch``)."""
    from components.cache import epoch
    from components.session import connection_key

    conn = connection_key()
    return [((*path, n), epoch(conn, table_scope((*path, n)))) for n in names]


SETTLE_FEW = 3  # at most this many figures behind: the page waits a moment for them
SETTLE_S = 0.2  # how long it waits (then draws them as pending, as for more)


def table_stats(
    path: Sequence[str], names: Sequence[str]
) -> tuple[dict[str, tstats.TableStats | None], list[str]]:
    """The figures known of ``names`` in ``path`` (``None``: never read) and the names being
    read: not read yet, or read before the table's last write (whose old figures are
    returned meanwhile); those are queued (in the order given). When only a few are behind
    (a table just written, declared, created), their reads are waited for, up to
    :data:`SETTLE_S`: the page is drawn once with their figures rather than drawn with them
    pending and again when they come in."""
    fill = stats_fill()
    wanted = _wanted(path, names)
    known, behind = fill.lookup_behind(wanted)
    if behind and len(behind) <= SETTLE_FEW:
        generations = dict(wanted)
        late = fill.settle([(tid, generations[tid]) for tid in behind], SETTLE_S)
        if len(late) < len(behind):
            known, behind = fill.lookup_behind(wanted)
    return {tid[-1]: value for tid, value in known.items()}, [tid[-1] for tid in behind]


STATS_POLL_S = 1.0  # how often a list with pending figures looks for them


def _poll_stats(path: tuple[str, ...], pending: tuple[str, ...]) -> None:
    """While figures on screen are being read (never read, or read before a write of this
    console): every second, rerun the page once they are in. Without it, a table's old
    figures would stay on screen after its write until the next click."""

    def poll() -> None:
        if not stats_fill().behind(_wanted(path, pending)):
            feedback.keep_flash("tables")
            polling.rerun_page()

    polling.fragment(poll, every=STATS_POLL_S)


def stats_column_config(*, figures: bool) -> dict[str, Any]:
    """How the tables list shows its figures (widths fit the right-hand column; without
    ``figures``, those the connection cannot read say so; the state, pending, declared only
    or unreadable, is shown in the Health column)."""
    rows_help = "Rows of the latest version (deleted rows not counted)" + (
        "" if figures else " (over REST: CountTableRows; n/a when the server does not count)"
    )
    size_help = (
        "Size on disk: every file under the table's folder (all versions, indexes, manifests)"
        if figures
        else "Size of the latest version's data as the server counts it (GetTableStats; not "
        "the old versions, indexes or manifests); n/a when the server does not say"
    )
    # Widths in pixels, short labels (the long meaning in ``help``): every column, the row
    # checkbox and the border fit the page's right-hand column at 1440 px without clipping.
    return {
        "table": st.column_config.TextColumn("Table", width=130),
        "rows": st.column_config.NumberColumn(
            "Rows",
            format="localized",
            width=70,
            help=rows_help,
        ),
        "size_bytes": st.column_config.NumberColumn(  # drawn by human_bytes (SIZE_COLUMNS)
            "Size", width=75, help=size_help
        ),
        "version": st.column_config.NumberColumn(
            "Version", format="%d", width=62, help="Latest version"
        ),
        "indexes": st.column_config.NumberColumn(
            "Indexes",
            format="%d",
            width=62,
            help="How many indexes the table has"
            + (
                ""
                if figures
                else " (over REST: ListTableIndices; n/a when the server does not say)"
            ),
        ),
        "last_change": st.column_config.DatetimeColumn(
            "Changed (UTC)",
            format="YYYY-MM-DD HH:mm",
            width=125,
            help="When the latest version was committed (UTC)"
            + ("" if figures else " (over REST: DescribeTableVersion)"),
        ),
        "health": st.column_config.TextColumn(
            "Health",
            width=93,
            help="The table's health verdict, by the rule of its Health panel: healthy, or the "
            "recommended action (compact, optimize; +1: one more), read from the latest "
            "version's fragment and index figures"
            + ("" if figures else " (GetTableStats and the index stats)")
            + ". Versions and the bytes old versions hold (Clean up) are checked on the "
            "table's Health panel. pending: being read; declared only: no data yet; "
            "unreadable: the table could not be read; unknown: the health could not be read",
        ),
        "state": None,  # said by the Health column
    }


SIZE_COLUMNS = ("size_bytes",)  # byte counts, in the one size form
SORT_BOX_PX = 230  # the "Sort by" box: its longest option whole
SORT_SCOPE = nsv.LIST_BATCH  # tables a sort by a figure orders at a time (more on request)


def _widen_sort(key: str) -> None:
    """ "Sort N more" (a callback): the sort by a figure takes in the next tables."""
    state.put(key, int(state.get(key) or SORT_SCOPE) + SORT_SCOPE)


def render_tables_column(path: Sequence[str], table: str | None) -> None:
    """The tables of ``path`` with their figures, a search and a sort (picking one
    navigates). By name, the list is read a page at a time (the server's order, pylance's by
    name); a search or a descending name order reads every name; a sort by a figure orders
    the first :data:`SORT_SCOPE` tables by name (more on request), and says so when there
    are more. Figures are read in the background (the tables on screen first, then those a
    sort orders) and kept per table version."""
    st.subheader(f"Tables in {feedback.as_text(ids.display_id(path))}", anchor=False)
    # one row (a horizontal container: fewer elements to draw than columns)
    row = st.container(horizontal=True, vertical_alignment="bottom")
    search = row.text_input(
        "Search tables",
        key=state.Tables.SEARCH,
        placeholder="part of a name, or a glob like orders_*",
        icon=":material/search:",
    )
    # the order in a menu whose button says it (a closed menu's box costs the page nothing)
    now = state.get(state.Tables.SORT)
    shown_order = tstats.SORT_ORDERS[now if now in tstats.SORT_ORDERS else "name"][2]
    with row.popover(shown_order, icon=":material/sort:"):
        order: str = (
            st.selectbox(
                "Sort by",
                list(tstats.SORT_ORDERS),
                format_func=lambda o: tstats.SORT_ORDERS[o][2],
                key=state.Tables.SORT,
                width=SORT_BOX_PX,
            )
            or "name"
        )
    by, descending, _label = tstats.SORT_ORDERS[order]
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
            f"{verb(len(shown), 'matches', 'match')} {feedback.as_text(search)}."
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

    figures = backend.capabilities(get_namespace()).table_figures
    pick = render_name_list(
        source,
        key_prefix=state.Tables.LIST,
        column="table",
        selected=table,
        reset_on=(tuple(path), search, by, descending, scope),
        frame=frame,
        column_config=stats_column_config(figures=figures),
        sizes=SIZE_COLUMNS,
    )
    if pick:  # the page runs again at once, with the pick's table opened below the list
        if pick.name:  # its details open below the list: brought into view once drawn
            state.put(state.Tables.SCROLL_TO_DETAIL, True)
        go_to(path, pick.name)
    if pending:
        st.caption(f"Reading the figures of {plural(len(pending), 'table')}…")
        _poll_stats(tuple(path), tuple(pending))
    elif not figures and known:
        st.caption(
            "Over REST the list shows what the spec's answers give: the latest version, the "
            "rows (CountTableRows), the size of the latest version's data (GetTableStats), "
            "the indexes (ListTableIndices) and the last change (DescribeTableVersion). The "
            "health is judged from GetTableStats and the index stats."
        )
