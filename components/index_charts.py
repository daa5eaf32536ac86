"""Plotly charts of index statistics.

Figure builders are plain functions (tested without streamlit):

* :func:`coverage_figure` - per index, indexed vs unindexed rows (stacked bars);
* :func:`size_figure` - index size on disk per index;
* :func:`segments_figure` - index segments (deltas) per index;
* :func:`history_figure` - coverage per index across the table's recent versions;
* :func:`recall_histogram` - recall per query of a recall measurement, bins inside [0, 1].

:func:`render_index_charts` lays them out on a page.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

INDEXED_COLOR = "#2e7d32"
UNINDEXED_COLOR = "#ef6c00"


def _layout(fig: go.Figure, title: str, *, height: int = 320) -> go.Figure:
    fig.update_layout(
        title={"text": title, "x": 0, "xanchor": "left"},
        height=height,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def coverage_figure(overview: pd.DataFrame) -> go.Figure:
    """Stacked horizontal bars: indexed and unindexed rows per index."""
    df = overview.fillna({"indexed_rows": 0, "unindexed_rows": 0})
    names = list(df["name"])
    fig = go.Figure(
        [
            go.Bar(
                name="indexed rows",
                y=names,
                x=[int(v) for v in df["indexed_rows"]],
                orientation="h",
                marker_color=INDEXED_COLOR,
            ),
            go.Bar(
                name="unindexed rows",
                y=names,
                x=[int(v) for v in df["unindexed_rows"]],
                orientation="h",
                marker_color=UNINDEXED_COLOR,
            ),
        ]
    )
    fig.update_layout(barmode="stack", xaxis_title="rows", yaxis={"autorange": "reversed"})
    return _layout(
        fig, "Coverage: indexed vs unindexed rows", height=max(220, 60 + 40 * len(names))
    )


def size_figure(overview: pd.DataFrame) -> go.Figure:
    """Index size on disk (bytes) per index; indexes without a recorded size are left out."""
    df = overview[overview["size_bytes"].notna()]
    fig = go.Figure(
        go.Bar(
            x=list(df["name"]),
            y=[int(v) for v in df["size_bytes"]],
            marker_color="#1565c0",
            hovertemplate="%{x}: %{y:,} bytes<extra></extra>",
        )
    )
    fig.update_layout(yaxis_title="bytes")
    return _layout(fig, "Size on disk")


def segments_figure(overview: pd.DataFrame) -> go.Figure:
    """Number of index segments (deltas) per index: more segments, slower queries."""
    df = overview[overview["segments"].notna()]
    fig = go.Figure(
        go.Bar(
            x=list(df["name"]),
            y=[int(v) for v in df["segments"]],
            marker_color="#6a1b9a",
        )
    )
    fig.update_layout(yaxis_title="segments", yaxis={"dtick": 1})
    return _layout(fig, "Segments")


def history_figure(history: pd.DataFrame) -> go.Figure:
    """Coverage (%) per index across versions, with unindexed rows in the hover."""
    fig = go.Figure()
    for name, group in history.groupby("index_name", sort=True):
        group = group.sort_values("version")
        coverage = [None if pd.isna(c) else round(float(c) * 100, 2) for c in group["coverage"]]
        fig.add_trace(
            go.Scatter(
                name=str(name),
                x=list(group["version"]),
                y=coverage,
                mode="lines+markers",
                customdata=[
                    [None if pd.isna(u) else int(u), None if pd.isna(t) else int(t)]
                    for u, t in zip(group["unindexed_rows"], group["total_rows"], strict=True)
                ],
                hovertemplate=(
                    "v%{x}: %{y}% indexed<br>unindexed rows: %{customdata[0]}"
                    "<br>total rows: %{customdata[1]}<extra>%{fullData.name}</extra>"
                ),
            )
        )
    fig.update_layout(
        xaxis=version_axis(history["version"]),
        yaxis_title="coverage (%)",
        yaxis={"range": [0, 105]},
    )
    fig = _layout(fig, "Coverage across versions", height=360)
    # A legend beside the plot never covers the axis, however many indexes there are.
    fig.update_layout(
        legend={"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"},
        margin={"l": 10, "r": 10, "t": 50, "b": 40},
    )
    return fig


def version_axis(versions: pd.Series, *, max_ticks: int = 12) -> dict:
    """A linear x axis of whole table versions: ticks every ``dtick`` (an integer >= 1, so at
    most about ``max_ticks`` labels) starting at the oldest version, labels without decimals."""
    values = [int(v) for v in versions.dropna()]
    low, high = (min(values), max(values)) if values else (0, 0)
    dtick = max(1, math.ceil((high - low + 1) / max_ticks))
    return {
        "title": {"text": "table version"},
        "tickmode": "linear",
        "tick0": low,
        "dtick": dtick,
        "tickformat": "d",
    }


RECALL_BINS = 10


def recall_histogram(per_query: Sequence[float], k: int) -> go.Figure:
    """Queries per recall bin: ten bins of width 0.1 covering exactly [0, 1], the last one
    closed (recall 1.0 falls in [0.9, 1.0]), drawn as bars, so no bin reaches past 1.0 on an
    axis that ends at 1.0. A recall on an edge (3/10) counts in the bin it starts (rounded
    before the floor: 0.3 * 10 is 2.9999999999999996 in floating point)."""
    values = np.clip(np.asarray(per_query, dtype=float), 0.0, 1.0)
    bins = np.minimum(np.floor(np.round(values * RECALL_BINS, 9)).astype(int), RECALL_BINS - 1)
    counts = np.bincount(bins, minlength=RECALL_BINS)
    edges = np.arange(RECALL_BINS + 1) / RECALL_BINS
    labels = [
        f"[{lo:.1f}, {hi:.1f}{']' if i == RECALL_BINS - 1 else ')'}"
        for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:], strict=True))
    ]
    width = 1.0 / RECALL_BINS
    fig = go.Figure(
        go.Bar(
            x=(edges[:-1] + width / 2).tolist(), y=counts.tolist(), width=width * 0.95,
            customdata=labels, marker_color="#4C78A8",
            hovertemplate="recall %{customdata}<br>%{y} queries<extra></extra>",
        )
    )  # fmt: skip
    fig.update_layout(
        title={"text": "Recall per query", "font": {"size": 14}},
        xaxis={"title": f"recall@{k}", "range": [0.0, 1.0], "dtick": width},
        yaxis={"title": "queries"},
        height=300,
        margin={"l": 10, "r": 10, "t": 40, "b": 40},
    )
    return fig


def render_index_charts(
    overview: pd.DataFrame, history: pd.DataFrame | None, *, key_prefix: str
) -> None:
    """Coverage, size and segments of the current indexes; coverage history when given."""
    if overview.empty:
        st.caption("No indexes yet: nothing to chart.")
        return
    st.plotly_chart(coverage_figure(overview), key=f"{key_prefix}.coverage")
    left, right = st.columns(2)
    with left:
        if overview["size_bytes"].notna().any():
            st.plotly_chart(size_figure(overview), key=f"{key_prefix}.size")
        else:
            st.caption("The backend reports no index sizes.")
    with right:
        if overview["segments"].notna().any():
            st.plotly_chart(segments_figure(overview), key=f"{key_prefix}.segments")
        else:
            st.caption("The backend reports no segment counts.")
    if history is None:
        return
    if history.empty:
        st.caption("No index existed in the recent versions.")
        return
    st.plotly_chart(history_figure(history), key=f"{key_prefix}.history")
    source = history.attrs.get("source")
    if source == "namespace":
        st.caption(
            "Per-version figures come from ListTableIndices with `version`; whether the server "
            "honours `version` is up to the server."
        )


__all__ = [
    "coverage_figure",
    "history_figure",
    "recall_histogram",
    "render_index_charts",
    "segments_figure",
    "size_figure",
    "version_axis",
]
