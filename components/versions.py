"""Versions of a table: cached reads, the listing, the timeline, one version's details, the
comparison of two, and the delete form (data from ``backend.services.versions``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pandas as pd
import streamlit as st
from lance_namespace import BatchDeleteTableVersionsRequest
from lance_namespace.errors import TableVersionNotFoundError

from backend.errors import LanceNamespaceError
from backend.rules import version_ranges
from backend.services import versions as vsv
from backend.services.charts import time_axis, timeline_chart
from backend.spec.paging import PAGE_SIZE, Listing
from components import feedback, state
from components.cache import cached, shared, table_scope
from components.common import (
    dataframe,
    lazy_expander,
    render_json,
    render_path,
    render_typed_confirmation,
)
from components.connection import render_role_lock, role_lock

# --------------------------------------------------------------------------------------------
# Cached reads (per connection and table)
# --------------------------------------------------------------------------------------------


@cached(table_scope, ttl=3, max_entries=256)
def _latest_recent(ns: Any, table_id: tuple[str, ...]) -> int | None:
    return vsv.latest_version(ns, list(table_id))


@cached(lambda table_id, stamp: table_scope(table_id), ttl=600, max_entries=256)
def _latest_at(ns: Any, table_id: tuple[str, ...], stamp: Any) -> int | None:
    return vsv.latest_version(ns, list(table_id))


def latest_version(table_id: tuple[str, ...]) -> int | None:
    """The table's newest version: read again whenever the backend's stamp of the table's
    versions changes (the local backend: its ``_versions`` directory, a ``stat``), else a few
    seconds fresh (one DescribeTable)."""
    from components.connection import get_namespace

    stamp = vsv.version_stamp(get_namespace(), table_id)
    if stamp is None:
        return _latest_recent(table_id)
    return _latest_at(table_id, stamp)


@shared(lambda table_id, latest: table_scope(table_id), ttl=600, max_entries=64)
def _listing_at(ns: Any, table_id: tuple[str, ...], latest: int | None) -> Listing:
    return vsv.version_listing(ns, table_id)


def newest_versions(table_id: tuple[str, ...]) -> Listing:
    """The table's versions newest first, read as far as the first page of the list (a
    request of ``LIST_BATCH`` versions: a small table's whole history). Checking the latest
    version takes milliseconds: the listing is kept, and read further page by page, while the
    latest version is unchanged (a new commit lists again; our writes clear it; old versions
    deleted by another process show within ten minutes)."""
    return _listing_at(table_id, latest_version(table_id)).ensure(PAGE_SIZE + 1)


def listed_latest(versions: Listing) -> int:
    """The newest version of a non-empty :func:`newest_versions` listing."""
    return int(versions.items(0, 1)[0].version)


@shared(table_scope, ttl=600, max_entries=32)
def _index(ns: Any, table_id: tuple[str, ...]) -> vsv.VersionIndex:
    return vsv.VersionIndex(ns, table_id)


def versions_frame(table_id: tuple[str, ...]) -> pd.DataFrame:
    """Every version's number and commit time (``version``, ``timestamp``), newest first:
    the whole history, for the panels that need it (timeline, compare, cleanup, deletes,
    exports). Read once (with a spinner), then only the versions newer than those known."""
    index = _index(table_id)
    latest = latest_version(table_id)
    if index.peek() is None:
        with st.spinner(f"Reading every version of {table_id[-1]}…"):
            return index.frame(latest)
    return index.frame(latest)


def known_versions(table_id: tuple[str, ...], latest: int) -> pd.DataFrame | None:
    """The whole history when it was read already and is up to date (nothing is read)."""
    known = _index(table_id).peek()
    if known is None or not len(known) or int(known["version"].iloc[0]) != latest:
        return None
    return known


@cached(lambda table_id, version: table_scope(table_id), ttl=300, max_entries=256)
def _has_version(ns: Any, table_id: tuple[str, ...], version: int) -> bool:
    try:
        vsv.describe_version(ns, table_id, version)
    except TableVersionNotFoundError:
        return False
    return True


def has_version(table_id: tuple[str, ...], versions: Listing, version: int) -> bool:
    """Whether ``version`` exists: listed already, else not when the listing is whole, else
    DescribeTableVersion of that one version."""
    if version in {int(v.version) for v in versions.items()}:
        return True
    if versions.complete or not 1 <= version <= listed_latest(versions):
        return False
    return _has_version(table_id, version)


@cached(lambda table_id, versions: table_scope(table_id), ttl=300, max_entries=512)
def operations_for(ns: Any, table_id: tuple[str, ...], versions: tuple[int, ...]) -> pd.DataFrame:
    """The operation behind each of ``versions`` (failures per row)."""
    return vsv.version_operations(ns, table_id, versions)


@cached(lambda table_id, versions: table_scope(table_id), ttl=300, max_entries=512)
def rows_for(
    ns: Any, table_id: tuple[str, ...], versions: tuple[int, ...]
) -> dict[int, int | None]:
    """The row count of each of ``versions`` (``None``: not known; ``vsv.version_rows``)."""
    return vsv.version_rows(ns, table_id, versions)


@st.cache_resource(max_entries=16, show_spinner=False)
def _facts(conn: str) -> vsv.VersionFacts:
    return vsv.VersionFacts()


def page_facts(
    table_id: tuple[str, ...], rows: pd.DataFrame
) -> tuple[pd.DataFrame, dict[int, int | None]]:
    """The operation and row count of each version of a page of the list (its rows, with
    their manifest e-tags): kept per version (``vsv.VersionFacts``), so that a write to the
    table (another version, a delete) looks up only the versions not seen yet."""
    from components.cache import epoch
    from components.connection import connection_key, get_namespace

    conn = connection_key()
    read = epoch(conn, table_scope(table_id))  # a version without an e-tag: this read's
    identities = {
        int(v): (tag if isinstance(tag, str) and tag else ("read", read))
        for v, tag in zip(rows["version"], rows["e_tag"], strict=True)
    }
    return _facts(conn).page(get_namespace(), table_id, identities)


@cached(lambda table_id, version: table_scope(table_id), ttl=300)
def version_info(ns: Any, table_id: tuple[str, ...], version: int) -> dict[str, Any]:
    return vsv.describe_version(ns, table_id, version)


@cached(lambda table_id, a, b: table_scope(table_id), ttl=300, max_entries=64)
def comparison(ns: Any, table_id: tuple[str, ...], a: int, b: int) -> vsv.VersionComparison:
    return vsv.compare_versions(ns, table_id, a, b)


# --------------------------------------------------------------------------------------------
# Panels
# --------------------------------------------------------------------------------------------

GRID_ROW_PX = 35  # st.dataframe's default row height (the header row is as tall)
GRID_MAX_ROWS = 20  # taller pages scroll inside the grid


def grid_height(rows: int, *, max_rows: int = GRID_MAX_ROWS) -> int:
    """Pixel height showing ``rows`` rows (at most ``max_rows``) and the header."""
    return GRID_ROW_PX * (min(max(rows, 1), max_rows) + 1) + 3


def render_summary(table_id: tuple[str, ...], versions: Listing) -> None:
    """How many versions (exact when listed whole or read for the timeline; else those
    listed so far), the latest, the oldest (when known) and the last commit."""
    newest = versions.items(0, 1)[0]
    whole = known_versions(table_id, int(newest.version))
    count: int | None = None
    oldest: int | None = None
    if versions.complete:
        count, oldest = versions.known, min(int(v.version) for v in versions.items())
    elif whole is not None:
        count, oldest = len(whole), int(whole["version"].min())
    c1, c2, c3, c4 = st.columns(4)
    c1.metric(
        "Versions",
        f"{count:,}" if count is not None else f"{versions.known:,}+",
        help=None
        if count is not None
        else "Listed so far (newest first); the timeline reads them all",
    )
    c2.metric("Latest", int(newest.version))
    c3.metric("Oldest", oldest if oldest is not None else "—")
    stamp = newest.timestamp_millis
    c4.metric(
        "Last commit (UTC)",
        pd.Timestamp(stamp, unit="ms", tz="UTC").strftime("%b %d, %H:%M") if stamp else "—",
    )


def _selected_rows(grid_state: Any) -> list[int]:
    """The selected rows of a grid's session state (its state, or a selection set before)."""
    selection = (grid_state or {}).get("selection") or {}
    return [int(r) for r in selection.get("rows") or []]


def _grid_picked(grid_key: str, versions: tuple[int, ...]) -> None:
    """The versions list's selection callback: the row picked opens its version (the
    version already shown is left as it is: the list echoing the picker's choice)."""
    picked = _selected_rows(state.get(grid_key))
    if (
        picked
        and 0 <= picked[0] < len(versions)
        and versions[picked[0]] != state.selected_version()
    ):
        state.pick_version(versions[picked[0]])


def _sync_grid(grid_key: str, versions: Sequence[int], picked: int | None) -> Any:
    """Before the list renders: its selected row is the version shown (none when that version
    is not on this page), so the list and the picker never disagree. Returns the list's
    ``selection_default`` on its first run; later, a list out of step (another version
    picked, typed, or another page) is set through the session."""
    want = [i for i, v in enumerate(versions) if v == picked][:1]
    now = state.get(grid_key)
    if now is None:
        return {"selection": {"rows": want, "columns": []}} if want else None
    if _selected_rows(now) != want:
        state.put(grid_key, {"selection": {"rows": want, "columns": []}})
    return None


def tags_width(tags: pd.Series | None, *, px_per_char: int = 8, most: int = 280) -> int:
    """The Tags column's width: its longest cell (or header) whole, at most ``most`` pixels."""
    longest = max([len("Tags"), *(len(str(t)) for t in (tags if tags is not None else []) if t)])
    return min(most, max(60, longest * px_per_char + 24))


def render_version_table(rows: pd.DataFrame, *, key_prefix: str, picked: int | None = None) -> None:
    """One page of versions with their operations, tags and row counts (newest first); every
    column fits the page at 1440 px (the manifest path is in the version's details). A click on a row opens that version (``picked``: the one shown, the
    row selected)."""
    cols = ["version", "operation", "tags", "rows", "timestamp", "manifest_size", "read_version"]
    cols = [c for c in cols if c in rows.columns]
    if "error" in rows.columns and rows["error"].notna().any():
        cols.append("error")
    # the manifest path (kept in the data), e-tag and metadata: in the version's details
    shown = rows[[*cols, "manifest_path"]].reset_index(drop=True)
    grid_key = f"{key_prefix}.grid"
    listed = tuple(int(v) for v in shown["version"])
    default = _sync_grid(grid_key, listed, picked)
    dataframe(
        shown,
        hide_index=True,
        key=grid_key,
        height=grid_height(len(shown)),
        on_select=partial(_grid_picked, grid_key, listed),
        selection_mode="single-row",
        selection_default=default,
        column_order=cols,
        column_config={
            "version": st.column_config.NumberColumn("Version", format="%d", width=70),
            "operation": st.column_config.TextColumn("Operation", width=110),
            "tags": st.column_config.TextColumn(
                "Tags", width=tags_width(shown.get("tags")), help="The tags naming this version"
            ),
            "rows": st.column_config.NumberColumn(
                "Rows", format="localized", width=90, help="Rows in this version (empty: not known)"
            ),
            "timestamp": st.column_config.DatetimeColumn(
                "Created (UTC)", format="YYYY-MM-DD HH:mm:ss.SSS", width=190
            ),
            "manifest_size": st.column_config.NumberColumn(
                "Manifest bytes", format="%d", width=110
            ),
            "e_tag": st.column_config.TextColumn("E-tag", width=110),
            "metadata": st.column_config.TextColumn("Metadata", width=110),
            "manifest_path": st.column_config.TextColumn("Manifest path", width=300),
            "read_version": st.column_config.NumberColumn("Read version", format="%d", width=100),
            "error": st.column_config.TextColumn("Lookup error", width=120),
        },
    )


def render_timeline(frame: pd.DataFrame, *, key_prefix: str, highlight: Sequence[int] = ()) -> None:
    """The versions-over-time chart; big tables are thinned (a caption says so)."""
    shown = vsv.thin_timeline(frame, keep=highlight)
    st.altair_chart(
        timeline_chart(shown, highlight=highlight), key=f"{key_prefix}.chart", width="stretch"
    )
    if len(shown) < len(frame):
        st.caption(
            f"Plotted {len(shown):,} of {len(frame):,} versions: every version of this page, "
            "the oldest and the newest, and an evenly spaced sample of the rest."
        )


def render_version_details(
    info: dict[str, Any] | None, operation: dict[str, Any] | None, *, key_prefix: str
) -> None:
    """One version: timestamp, manifest, e-tag, metadata and the transaction behind it."""
    if info:
        c1, c2, c3 = st.columns(3)
        c1.metric("Version", info.get("version"))
        c2.metric("Manifest bytes", info.get("manifest_size", "—"))
        c3.metric("Operation", (operation or {}).get("operation") or "?")
        st.caption(
            feedback.as_text(
                f"Created {info.get('timestamp', '—')} · e-tag {info.get('e_tag', '—')}"
            )
        )
        st.caption("Manifest path")
        render_path(info.get("manifest_path") or "—")
        if info.get("metadata"):
            render_json(info["metadata"], key_prefix=f"{key_prefix}.meta", label="Metadata")
    if operation:
        if operation.get("error"):
            st.caption(
                ":orange["
                + feedback.as_text(f"Transaction lookup failed: {operation['error']}")
                + "]"
            )
        else:
            render_json(
                {k: v for k, v in operation.items() if v is not None and not pd.isna(v)},
                key_prefix=f"{key_prefix}.txn",
                label="Transaction",
            )


def render_comparison(cmp: vsv.VersionComparison, *, key_prefix: str) -> None:
    """Metric table, schema changes, and what could not be compared."""
    dataframe(cmp.summary, hide_index=True, key=f"{key_prefix}.summary")
    if cmp.a.schema is None or cmp.b.schema is None:
        st.caption("Schema changes: unavailable.")
    elif cmp.schema_changes.empty:
        st.caption(f"Schema: no changes between v{cmp.a.version} and v{cmp.b.version}.")
    else:
        st.caption("Schema changes")
        dataframe(cmp.schema_changes, hide_index=True, key=f"{key_prefix}.schema")
    for item in cmp.unavailable:
        st.caption(":orange[" + feedback.as_text(f"Unavailable: {item}") + "]")


def render_compare_form(
    versions: pd.DataFrame, picked: int, *, key_prefix: str
) -> tuple[int, int] | None:
    """Two version numbers; the pair when "Compare" is pressed and both exist."""
    existing = set(versions["version"])
    older = sorted(v for v in existing if v < picked)
    with st.form(key_prefix, border=False):
        ca, cb, cc = st.columns([1, 1, 1], vertical_alignment="bottom")
        va = ca.number_input(
            "Version A", min_value=1, value=older[-1] if older else picked, key=f"{key_prefix}.a"
        )
        vb = cb.number_input("Version B", min_value=1, value=picked, key=f"{key_prefix}.b")
        go = cc.form_submit_button("Compare", icon=":material/compare_arrows:")
    if not go:
        return None
    missing = [v for v in (int(va), int(vb)) if v not in existing]
    if missing:
        feedback.show("error", f"Version {missing[0]} does not exist.")
        return None
    return int(va), int(vb)


@dataclass(frozen=True)
class RangeDelete:
    """A confirmed "Delete by range": the inclusive spans, their request (for Copy as
    Python), and the tags that go with them (``version -> tags``; non-empty only when the
    user ticked "also delete their tags")."""

    spans: list[version_ranges.Span]
    request: BatchDeleteTableVersionsRequest
    tags: dict[int, list[str]] = field(default_factory=dict)


DELETE_TAGS_LABEL = "Also delete the tags of tagged versions in the range"


def render_delete_form(
    table_id: Sequence[str],
    versions: pd.DataFrame,
    *,
    key_prefix: str,
    read_only: bool,
    tagged: Mapping[int, Sequence[str]] | None = None,
) -> RangeDelete | None:
    """Inclusive ranges (``2-5, 8``), a typed confirmation; what to delete when everything
    checks out (``backend.rules.version_ranges``: never the latest version, never a tagged one
    unless the box naming the tags is ticked). ``tagged``: the table's tags by version; the
    listed versions that carry one are said before anything is submitted."""
    table = table_id[-1]
    locked = role_lock("batch_delete_table_versions", read_only)
    read_only = read_only or locked is not None
    latest = int(versions["version"].max())
    listed = set(versions["version"].astype(int))
    tags = {int(v): sorted(t) for v, t in (tagged or {}).items() if int(v) in listed}
    with st.form(key_prefix, border=False):
        st.caption(
            f"Versions as ranges like 2-5, 8 (inclusive). The latest version (v{latest}) is never "
            "deleted. Time travel to deleted versions is no longer possible."
        )
        if tags:
            st.caption(
                feedback.as_text(
                    f"Tagged: {version_ranges.describe_tags(tags)}. A range covering a tagged "
                    "version is refused unless its tags are deleted with it."
                )
            )
        text = st.text_input("Versions to delete", key=f"{key_prefix}.ranges")
        with_tags = bool(tags) and st.checkbox(
            f"{DELETE_TAGS_LABEL} (of {version_ranges.describe_tags(tags)})",
            key=f"{key_prefix}.tags",
        )
        confirmed = render_typed_confirmation(
            table, key_prefix=key_prefix, label=f"Type the table name {table} to confirm"
        )
        submitted = st.form_submit_button("Delete versions", type="primary", disabled=read_only)
        render_role_lock(locked)
    if not submitted:
        return None
    try:
        spans = version_ranges.parse(text)
    except LanceNamespaceError as err:
        feedback.show("error", f"Nothing deleted. {err}")
        return None
    spec = version_ranges.to_spec(spans)
    problems = vsv.delete_problems(spans, latest=latest, existing=listed)
    doomed = version_ranges.covered_tags(spec, tags, latest)
    if not problems and doomed and not with_tags:
        problems = version_ranges.tag_problems(
            spec, tags, latest, opt_in=f"tick {DELETE_TAGS_LABEL!r}"
        )
        problems = [p.removesuffix(" Nothing deleted.") for p in problems]
    if read_only:
        feedback.show("error", "The connection is read-only.")
    elif problems:
        feedback.show("error", "Nothing deleted. " + " ".join(problems))
    elif not confirmed:
        feedback.show("error", f"Nothing deleted: type {table} exactly to confirm.")
    else:
        return RangeDelete(spans, vsv.delete_request(table_id, spans), doomed)
    return None


def render_listing(
    table_id: tuple[str, ...],
    versions: Listing,
    *,
    tagged: Mapping[int, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """One page of versions (read only as far as that page) with their operations, tags
    (``tagged``: version -> tags; ``None``: not listed) and row counts, and the timeline;
    returns the operations looked up (for the versions on this page). A click on a row opens
    that version."""
    from components.pager import render_listing_pager

    st.subheader("All versions", anchor=False)
    page = render_listing_pager(
        versions, key_prefix=state.Versions.LIST, reset_on=table_id, noun="versions"
    )
    rows = vsv.version_rows_frame(page.items)
    ops, counts = page_facts(table_id, rows)
    render_version_table(
        vsv.with_rows_and_tags(vsv.with_operations(rows, ops), counts, tagged),
        key_prefix=state.Versions.LIST,
        picked=shown_version(listed_latest(versions)),
    )
    st.caption("Click a row to open that version below.")
    if box := lazy_expander(
        "Timeline", key=state.Versions.TIMELINE_OPEN, icon=":material/timeline:"
    ):
        with box:
            history = feedback.run(
                versions_frame, table_id, action=f"Listing the versions of {table_id[-1]}"
            )
            if history is not None:
                render_timeline(
                    vsv.timeline_frame(history, ops),
                    key_prefix=state.Versions.TIMELINE,
                    highlight=rows["version"].tolist(),
                )
                st.caption("Operations are looked up for the versions on the current page only.")
    return ops


def shown_version(latest: int) -> int:
    """The version the picker shows (before it renders): the one picked, else ``latest``."""
    picked = state.selected_version()
    if picked is None:  # a first run: the picker takes ``?version=`` when it renders
        link = str(st.query_params.get(state.QP_VERSION) or "")
        picked = int(link) if link.isdigit() else None
    return int(picked) if picked is not None else latest


def _tag_picked(tags: Mapping[str, int]) -> None:
    tag = state.get(state.Versions.OPEN_BY_TAG)
    if isinstance(tag, str) and tag in tags:
        state.pick_version(tags[tag], tag=tag)


def _version_typed() -> None:
    state.put(state.Versions.OPEN_BY_TAG, None)  # a typed version is no tag's


def render_open_by_tag(tagged: Mapping[int, Sequence[str]] | None, *, where: Any = st) -> None:
    """ "Open by tag": the table's tags; choosing one opens its version in the picker."""
    by_name = {t: int(v) for v, names in (tagged or {}).items() for t in names}
    current = state.get(state.Versions.OPEN_BY_TAG)
    if current is not None and current not in by_name:
        state.put(state.Versions.OPEN_BY_TAG, None)
    where.selectbox(
        "Open by tag",
        sorted(by_name),
        index=None,
        key=state.Versions.OPEN_BY_TAG,
        on_change=_tag_picked,
        args=(by_name,),
        placeholder=f"pick one of {len(by_name)} tags" if by_name else "no tags",
        disabled=not by_name,
        format_func=lambda t: f"{t} (v{by_name[t]})",
    )


def render_details_section(
    table_id: tuple[str, ...],
    versions: Listing,
    ops: pd.DataFrame,
    *,
    tagged: Mapping[int, Sequence[str]] | None = None,
) -> int:
    """The version picker (bound to ``?version=``) beside "Open by tag", and that version's
    details; returns the version picked."""

    st.subheader("Version details", anchor=False)
    latest = listed_latest(versions)
    c1, c2 = st.columns(2)
    render_open_by_tag(tagged, where=c2)
    # The picker's value lives in the session (a row or tag picked, a ?tag= link, a write,
    # else the latest) or comes from ``?version=``; it has no default of its own: Streamlit
    # warns about a widget given both, and a browser resets a widget whose default changes.
    if state.selected_version() is None and state.QP_VERSION not in st.query_params:
        state.put(state.QP_VERSION, latest)
    chosen = c1.number_input(
        "Version",
        min_value=1,
        value=None,
        step=1,
        key=state.QP_VERSION,
        bind="query-params",
        on_change=_version_typed,
    )
    picked = int(chosen) if chosen is not None else latest
    if not has_version(table_id, versions, picked):
        feedback.show(
            "warning",
            f"Version {picked} does not exist (deleted, or never written); the latest is {latest}.",
        )
        return latest
    info = feedback.run(version_info, table_id, picked, action=f"Describing version {picked}")
    one = ops[ops["version"] == picked]
    if one.empty:
        one = operations_for(table_id, (picked,))
    render_version_details(
        info, one.iloc[0].to_dict() if not one.empty else None, key_prefix=state.Versions.ONE
    )
    return picked


MANAGE_TABS = (
    "Compare",
    "Tags",
    "Clean up by policy",
    "Delete by range",
    "Delete rows",
    "Update rows",
    "Upsert from a file",
)
TAGS_TAB = MANAGE_TABS[1]
MANAGE_LABEL = "Manage versions: compare, tags, clean up, delete, edit rows"


def manage_tabs() -> Sequence[Any] | None:
    """The "Manage versions" tabs (compare, tags, cleanup, delete by range, delete rows by a
    filter) in an expander:
    ``None`` while it is closed. Only the open tab's content is to be built (``tab.open``);
    the expander and the open tab are kept per session. Closed, they cost a page load
    nothing but the expander."""
    box = lazy_expander(MANAGE_LABEL, key=state.Versions.MANAGE_OPEN, icon=":material/tune:")
    if box is None:
        return None
    with box:
        return st.tabs(MANAGE_TABS, key=state.Versions.MANAGE_TAB, on_change="rerun")


def render_compare_section(table_id: list[str], versions: pd.DataFrame, picked: int) -> None:
    """Two version numbers, and their comparison once asked for."""
    tid = tuple(table_id)
    pair = render_compare_form(versions, picked, key_prefix=f"{state.Versions.COMPARE_FORM}.{tid}")
    if pair:
        state.set_compare_pair(table_id, *pair)
    pair = state.compare_pair(table_id)
    cmp = feedback.run(comparison, tid, *pair, action="Comparing versions") if pair else None
    if cmp is not None:
        render_comparison(cmp, key_prefix=state.Versions.CMP)


__all__ = [
    "DELETE_TAGS_LABEL",
    "RangeDelete",
    "MANAGE_LABEL",
    "MANAGE_TABS",
    "TAGS_TAB",
    "manage_tabs",
    "render_compare_section",
    "render_details_section",
    "render_listing",
    "render_open_by_tag",
    "rows_for",
    "shown_version",
    "comparison",
    "grid_height",
    "operations_for",
    "page_facts",
    "render_compare_form",
    "render_comparison",
    "render_delete_form",
    "render_summary",
    "render_timeline",
    "render_version_details",
    "render_version_table",
    "time_axis",
    "timeline_chart",
    "version_info",
    "has_version",
    "known_versions",
    "latest_version",
    "listed_latest",
    "newest_versions",
    "versions_frame",
]
