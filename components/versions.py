"""Version listing, timeline, details and comparison panels (data from ``backend.browse``).

Cached reads keyed by the connection key: :func:`versions_frame` (the whole listing, metadata
only), :func:`operations_for` (``DescribeTransaction`` for the versions on screen only),
:func:`comparison`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

import backend
from backend import browse
from components.common import render_json
from components.connection import connection_key, require_namespace

# --------------------------------------------------------------------------------------------
# Cached reads
# --------------------------------------------------------------------------------------------


@st.cache_data(ttl=30, show_spinner=False, max_entries=64)
def _versions(conn: str, table_id: tuple[str, ...], _ns: Any) -> pd.DataFrame:
    return browse.list_versions(_ns, table_id)


@st.cache_data(ttl=300, show_spinner=False, max_entries=512)
def _operations(conn: str, table_id: tuple[str, ...], versions: tuple[int, ...], _ns: Any):
    return browse.version_operations(_ns, table_id, versions)


@st.cache_data(ttl=300, show_spinner=False, max_entries=64)
def _comparison(
    conn: str,
    table_id: tuple[str, ...],
    a: int,
    b: int,
    local: bool,
    location: str | None,
    _storage: dict[str, str] | None,
    _ns: Any,
) -> browse.VersionComparison:
    return browse.compare_versions(
        _ns, table_id, a, b, local=local, location=location, storage_options=_storage
    )


@st.cache_data(ttl=300, show_spinner=False, max_entries=256)
def _version_info(conn: str, table_id: tuple[str, ...], version: int, _ns: Any) -> dict[str, Any]:
    return browse.describe_version(_ns, table_id, version)


def versions_frame(table_id: Sequence[str]) -> pd.DataFrame:
    """Every version of the table, newest first (cached per connection)."""
    return _versions(connection_key(), tuple(table_id), require_namespace())


def operations_for(table_id: Sequence[str], versions: Sequence[int]) -> pd.DataFrame:
    """Operation behind each of ``versions`` (cached; failures per row)."""
    return _operations(
        connection_key(), tuple(table_id), tuple(int(v) for v in versions), require_namespace()
    )


def version_info(table_id: Sequence[str], version: int) -> dict[str, Any]:
    """``DescribeTableVersion`` of one version as a dict (cached)."""
    return _version_info(connection_key(), tuple(table_id), int(version), require_namespace())


def is_local_backend(ns: Any) -> bool:
    """True unless the namespace is a REST client (local datasets can be opened directly)."""
    kind = backend.capabilities(ns).kind
    if kind != "unknown":
        return kind == "local"
    return not hasattr(ns, "wire_log")


def comparison(
    table_id: Sequence[str],
    a: int,
    b: int,
    *,
    location: str | None,
    storage_options: dict[str, str] | None = None,
) -> browse.VersionComparison:
    """:func:`backend.browse.compare_versions` for the active connection (cached)."""
    ns = require_namespace()
    return _comparison(
        connection_key(),
        tuple(table_id),
        int(a),
        int(b),
        is_local_backend(ns),
        location,
        storage_options,
        ns,
    )


# --------------------------------------------------------------------------------------------
# Panels
# --------------------------------------------------------------------------------------------


GRID_ROW_PX = 35  # st.dataframe's default row height (the header row is as tall)
GRID_MAX_ROWS = 20  # taller pages scroll inside the grid


def grid_height(rows: int, *, max_rows: int = GRID_MAX_ROWS) -> int:
    """Pixel height showing ``rows`` rows (at most ``max_rows``) and the header, no scrolling."""
    return GRID_ROW_PX * (min(max(rows, 1), max_rows) + 1) + 3


def render_version_table(rows: pd.DataFrame, *, key_prefix: str) -> None:
    """One page of versions with their operations (newest first)."""
    cols = ["version", "operation", "timestamp", "manifest_size", "e_tag", "metadata"]
    cols += ["manifest_path", "read_version", "error"]
    shown = rows[[c for c in cols if c in rows.columns]]
    st.dataframe(
        shown,
        hide_index=True,
        key=f"{key_prefix}.grid",
        height=grid_height(len(shown)),
        column_config={
            "version": st.column_config.NumberColumn("Version", format="%d"),
            "operation": st.column_config.TextColumn("Operation"),
            "timestamp": st.column_config.DatetimeColumn(
                "Timestamp (UTC)", format="YYYY-MM-DD HH:mm:ss.SSS"
            ),
            "manifest_size": st.column_config.NumberColumn("Manifest bytes", format="%d"),
            "e_tag": st.column_config.TextColumn("E-tag"),
            "metadata": st.column_config.TextColumn("Metadata"),
            "manifest_path": st.column_config.TextColumn("Manifest path"),
            "read_version": st.column_config.NumberColumn("Read version", format="%d"),
            "error": st.column_config.TextColumn("Lookup error"),
        },
    )


NOT_LOADED_COLOR = "#b0b0b0"
UNKNOWN_COLOR = "#d62728"
_OPERATION_COLORS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
)  # fmt: skip


def _operation_scale(operations: Sequence[str]) -> alt.Scale:
    """Fixed colours: "(not loaded)" grey, "?" red, the rest in a stable palette order."""
    domain = sorted(set(operations), key=lambda o: (o in ("(not loaded)", "?"), o))
    colors, i = [], 0
    for op in domain:
        if op == "(not loaded)":
            colors.append(NOT_LOADED_COLOR)
        elif op == "?":
            colors.append(UNKNOWN_COLOR)
        else:
            colors.append(_OPERATION_COLORS[i % len(_OPERATION_COLORS)])
            i += 1
    return alt.Scale(domain=domain, range=colors)


def timeline_chart(frame: pd.DataFrame, *, highlight: Sequence[int] = ()) -> alt.LayerChart:
    """Vega-Lite scatter of versions over time, coloured by operation.

    ``frame``: a :func:`backend.browse.timeline_frame` (thin it first with
    :func:`backend.browse.thin_timeline` for big tables). ``highlight``: the versions on the
    current page, shaded as a band when the chart shows more than them.
    """
    data = frame[["version", "timestamp", "operation"]].copy()
    data["version"] = data["version"].astype("int64")
    points = (
        alt.Chart(data)
        .mark_circle(size=36, opacity=0.85)
        .encode(
            x=alt.X("timestamp:T", title=None),
            y=alt.Y(
                "version:Q",
                title="version",
                scale=alt.Scale(zero=False),
                axis=alt.Axis(format="d", tickMinStep=1),
            ),
            color=alt.Color(
                "operation:N",
                scale=_operation_scale(data["operation"].tolist()),
                legend=alt.Legend(orient="bottom", title=None),
            ),
            tooltip=[
                alt.Tooltip("version:Q", format="d"),
                alt.Tooltip("operation:N"),
                alt.Tooltip("timestamp:T", format="%Y-%m-%d %H:%M:%S.%L"),
            ],
        )
    )
    layers: list[Any] = []
    if highlight and len(highlight) < len(frame):
        band = pd.DataFrame(
            {"y0": [min(highlight) - 0.5], "y1": [max(highlight) + 0.5], "label": ["this page"]}
        )
        layers.append(
            alt.Chart(band)
            .mark_rect(color="#7f7f7f", opacity=0.12)
            .encode(y="y0:Q", y2="y1:Q", tooltip=[alt.Tooltip("label:N", title="band")])
        )
    layers.append(points)
    return alt.layer(*layers).properties(height=320)


def render_timeline(frame: pd.DataFrame, *, key_prefix: str, highlight: Sequence[int] = ()) -> None:
    """The versions-over-time chart (operation known for the versions looked up so far).

    Big tables are thinned to :data:`backend.browse.TIMELINE_MAX_POINTS` points (the current
    page, the oldest and newest, an even sample of the rest); a caption says so.
    """
    shown = browse.thin_timeline(frame, keep=highlight)
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
        st.caption(f"Timestamp: {info.get('timestamp', '—')} · e-tag: `{info.get('e_tag', '—')}`")
        st.caption("Manifest path")
        st.code(info.get("manifest_path") or "—", language=None, wrap_lines=True)
        if info.get("metadata"):
            render_json(info["metadata"], key_prefix=f"{key_prefix}.meta", label="Metadata")
    if operation:
        if operation.get("error"):
            st.caption(f":orange[Transaction lookup failed: {operation['error']}]")
        else:
            render_json(
                {k: v for k, v in operation.items() if v is not None and not pd.isna(v)},
                key_prefix=f"{key_prefix}.txn",
                label="Transaction",
            )


def render_comparison(cmp: browse.VersionComparison, *, key_prefix: str) -> None:
    """Metric table, schema changes, and what could not be compared."""
    st.dataframe(cmp.summary, hide_index=True, key=f"{key_prefix}.summary")
    if cmp.a.schema is None or cmp.b.schema is None:
        st.caption("Schema changes: unavailable.")
    elif cmp.schema_changes.empty:
        st.caption(f"Schema: no changes between v{cmp.a.version} and v{cmp.b.version}.")
    else:
        st.caption("Schema changes")
        st.dataframe(cmp.schema_changes, hide_index=True, key=f"{key_prefix}.schema")
    for item in cmp.unavailable:
        st.caption(f":orange[Unavailable: {item}]")


__all__ = [
    "comparison",
    "grid_height",
    "is_local_backend",
    "operations_for",
    "render_comparison",
    "render_timeline",
    "render_version_details",
    "render_version_table",
    "timeline_chart",
    "version_info",
    "versions_frame",
]
