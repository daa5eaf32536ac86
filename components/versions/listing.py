"""The versions of a table as the page lists them: the summary, the grid (a click opens a
version), the timeline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import pandas as pd
import streamlit as st

from backend.services import versions as vsv
from backend.services.charts import timeline_chart
from backend.spec.fields import epoch_millis
from backend.spec.paging import Listing
from components import feedback, polling, state
from components.common import dataframe, lazy_expander, render_figures
from components.versions.reads import (
    facts_reading,
    known_versions,
    listed_latest,
    page_rows,
    versions_frame,
)

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
    stamp = epoch_millis(newest.timestamp_millis)
    render_figures(
        [
            ("Versions", f"{count:,}" if count is not None else f"{versions.known:,}+"),
            ("Latest", int(newest.version)),
            ("Oldest", oldest if oldest is not None else "—"),
            (
                "Last commit (UTC)",
                pd.Timestamp(stamp, unit="ms", tz="UTC").strftime("%b %d, %H:%M")
                if stamp is not None
                else "—",
            ),
        ],
        help=None
        if count is not None
        else "Versions: those listed so far (newest first); the timeline reads them all.",
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
    ``selection_default``, that row, in every run: what a list drawn anew starts from, on
    the first run and after runs without the list (a branch's page, a table without
    versions: a run ended by ``st.stop()`` keeps the session's value of a grid it did not
    draw, which a grid drawn anew ignores). A list out of step (another version picked,
    typed, or another page) is set through the session."""
    rows = [i for i, v in enumerate(versions) if v == picked][:1]
    selection = {"selection": {"rows": rows, "columns": []}}
    now = state.get(grid_key)
    if now is not None and _selected_rows(now) != rows:
        state.put(grid_key, selection)
    return selection if rows else None


def tags_width(tags: pd.Series | None, *, px_per_char: int = 8, most: int = 280) -> int:
    """The Tags column's width: its longest cell (or header) whole, at most ``most`` pixels."""
    longest = max([len("Tags"), *(len(str(t)) for t in (tags if tags is not None else []) if t)])
    return min(most, max(60, longest * px_per_char + 24))


def render_version_table(rows: pd.DataFrame, *, key_prefix: str, picked: int | None = None) -> None:
    """One page of versions with their operations, tags and row counts (newest first); every
    column fits the page at 1440 px (the manifest path is in the version's details). A click
    on a row opens that version (``picked``: the one shown, the row selected)."""
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
                "Manifest bytes", format="localized", width=110
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

    # no heading of its own: the summary line above says what the list is
    page = render_listing_pager(
        versions,
        key_prefix=state.Versions.LIST,
        reset_on=table_id,
        noun="versions",
        hint="Click a row to open that version below.",
    )
    rows, ops, reading = page_rows(table_id, versions, page, tagged)
    render_version_table(
        rows,
        key_prefix=state.Versions.LIST,
        picked=shown_version(listed_latest(versions)),
    )
    if reading is not None:
        render_facts_reading(reading, len(rows))
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


FACTS_POLL_S = 1.0  # how often a list whose facts are being read looks for them


def render_facts_reading(reading: tuple[Any, ...], versions: int) -> None:
    """Says that the operations and row counts of the page's ``versions`` are being read
    (those not in yet: Operation "(not loaded)", Rows empty), and every second, once the read
    (:func:`page_facts`' ``reading``) is done, draws the page again with them."""
    st.caption(
        f":material/hourglass_top: Reading the operations and row counts of the {versions} "
        "versions on this page: the list is drawn again once they are in."
    )

    def poll() -> None:
        if not facts_reading(reading):
            polling.rerun_page()

    polling.fragment(poll, every=FACTS_POLL_S)


def shown_version(latest: int) -> int:
    """The version the picker shows (before it renders): the one picked, else ``latest``."""
    picked = state.selected_version()
    if picked is None:  # a first run: the picker takes ``?version=`` when it renders
        picked = state.as_version(st.query_params.get(state.QP_VERSION))
    return picked if picked is not None else latest
