"""The console's figures as plain functions (no streamlit): the pages and notebooks draw the
same charts from the services' data.

* index statistics (``index_overview``): :func:`coverage_figure` (indexed vs unindexed rows),
  :func:`size_figure` (size on disk), :func:`segments_figure`, :func:`history_figure`
  (coverage across versions);
* recall (``tuning.measure.recall``): :func:`recall_histogram`, :func:`latency_figure`;
* the sweep (``tuning.sweeps.sweep``): :func:`sweep_figure`, its Pareto front, the target line and
  the cheapest setting reaching it;
* query plans (``search.plans.analyze``): :func:`plan_figure`, time per step;
* build A/B (``tuning.builds.build_ab``): :func:`ab_figure`;
* versions (``versions.timeline_frame``): :func:`timeline_chart` (Vega-Lite, via Altair);
* the transaction demo's reader (``table_watch.states_frame``): :func:`reader_figure`, what
  each poll saw of each table, before or after the batch.

Plotly figures and Altair charts both render inline in Jupyter.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from backend.services import versions as vsv
from backend.services.tuning.measure import interval_text
from backend.services.tuning.sweeps import cheapest, pareto_front, setting_text
from backend.text import byte_unit, human_bytes

if TYPE_CHECKING:
    from backend.services.search.plans import PlanNode

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
    """Index size on disk per index, in the unit of the largest (``backend.text.byte_unit``:
    the axis reads as the index list's sizes do); each bar's hover gives its size in its own
    unit. Indexes without a recorded size are left out."""
    df = overview[overview["size_bytes"].notna()]
    sizes = [int(v) for v in df["size_bytes"]]
    unit, per = byte_unit(max(sizes, default=0))
    fig = go.Figure(
        go.Bar(
            x=list(df["name"]),
            y=[v / per for v in sizes],
            customdata=[human_bytes(v) for v in sizes],
            marker_color="#1565c0",
            hovertemplate="%{x}: %{customdata}<extra></extra>",
        )
    )
    fig.update_layout(yaxis_title=unit)
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
    """Coverage (%) per index across versions: one line per index (``index_id``, its identity
    across versions, never its name), with no point where the index did not exist (before it
    was created, after it was dropped: the line stops there, it is not drawn across). Two
    indexes that had the same name one after the other are two lines, each labelled with the
    first version it is shown at ("vec_idx (from v5)").

    Indexes whose figures are the same at every version shown (made before the history starts
    and optimized together) share one line named after all of them: separate lines would lie
    exactly on top of each other and show only the last one drawn. Lines that meet for part of
    the history are told apart in the hover, which lists every line at the version under the
    pointer with its unindexed and total rows."""
    fig = go.Figure()
    versions = sorted({int(v) for v in history["version"]})
    for line, (names, group) in enumerate(_same_history_groups(history)):
        at = {int(r.version): r for r in group.itertuples(index=False)}
        coverage = [
            None
            if v not in at or pd.isna(at[v].coverage)
            else round(float(at[v].coverage) * 100, 2)
            for v in versions
        ]
        listed = "<br>".join(
            ", ".join(html.escape(n) for n in names[i : i + HOVER_NAMES_PER_LINE])
            for i in range(0, len(names), HOVER_NAMES_PER_LINE)
        )
        fig.add_trace(
            go.Scatter(
                name=html.escape(_legend_name(names)),
                x=versions,
                y=coverage,
                mode="lines+markers",
                # each line its own dash and marker: where lines meet for part of the
                # history, the one drawn later does not hide the others
                line={"dash": LINE_DASHES[line % len(LINE_DASHES)]},
                marker={"symbol": MARKER_SYMBOLS[line % len(MARKER_SYMBOLS)], "size": 8},
                connectgaps=False,  # no line across versions where the index did not exist
                customdata=[
                    [_whole(at[v].unindexed_rows), _whole(at[v].total_rows), listed]
                    if v in at
                    else [None, None, listed]
                    for v in versions
                ],
                hovertemplate=(
                    "<b>%{customdata[2]}</b>: %{y}% indexed<br>unindexed rows: "
                    "%{customdata[0]} of %{customdata[1]}<extra></extra>"
                ),
            )
        )
    fig.update_layout(
        xaxis=version_axis(history["version"]) | {"unifiedhovertitle": {"text": "v%{x:d}"}},
        yaxis_title="coverage (%)",
        yaxis={"range": [0, 105]},
        hovermode="x unified",
        showlegend=True,  # also for a single (shared) line: the legend names its indexes
    )
    fig = _layout(fig, "Coverage across versions", height=360)
    # A legend beside the plot never covers the axis, however many indexes there are.
    fig.update_layout(
        legend={"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"},
        margin={"l": 10, "r": 10, "t": 50, "b": 40},
    )
    return fig


def _whole(value: Any) -> int | None:
    return None if pd.isna(value) else int(value)


LINE_DASHES = ("solid", "dash", "dot", "dashdot", "longdash")
MARKER_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x")
LEGEND_NAMES = 3  # index names spelled out in one legend entry before "and N more"
HOVER_NAMES_PER_LINE = 4  # the hover lists every name of a shared line, this many a line


def history_labels(history: pd.DataFrame) -> dict[str, str]:
    """``index_id`` -> the index's label: its name, followed by "(from v<N>)", the first
    version it is shown at, when another index shown had the same name."""
    first = history.groupby("index_id", sort=False).agg(
        name=("index_name", "first"), since=("version", "min")
    )
    shared = first["name"].duplicated(keep=False)
    return {
        str(ident): f"{name} (from v{int(since)})" if is_shared else str(name)
        for ident, name, since, is_shared in zip(
            first.index, first["name"], first["since"], shared, strict=True
        )
    }


def _same_history_groups(history: pd.DataFrame) -> list[tuple[list[str], pd.DataFrame]]:
    """``history`` per index (``index_id``) in version order, indexes with the very same
    figures at the very same versions merged: (their labels; the shared rows), by index name
    and then first version shown (an older index of a name before a newer one)."""
    labels = history_labels(history)
    series = sorted(
        (
            (labels[str(ident)], group.sort_values("version"))
            for ident, group in history.groupby("index_id", sort=False)
        ),
        key=lambda pair: (str(pair[1]["index_name"].iloc[0]), int(pair[1]["version"].min())),
    )
    groups: dict[tuple, tuple[list[str], pd.DataFrame]] = {}
    for label, rows in series:
        figures = tuple(
            tuple(None if pd.isna(v) else v for v in row)
            for row in rows[["version", "coverage", "unindexed_rows", "total_rows"]].itertuples(
                index=False
            )
        )
        names, _ = groups.setdefault(figures, ([], rows))
        names.append(label)
    return list(groups.values())


def _legend_name(names: list[str]) -> str:
    shown = ", ".join(names[:LEGEND_NAMES])
    more = len(names) - LEGEND_NAMES
    return shown if more <= 0 else f"{shown} and {more} more"


def version_axis(versions: pd.Series, *, max_ticks: int = 12) -> dict:
    """A linear x axis of whole table versions: the ticks of :func:`version_ticks` (every
    ``dtick``, a round whole step, so at most ``max_ticks`` labels), labels without
    decimals."""
    low, _, dtick = _version_steps(versions, max_ticks)
    return {
        "title": {"text": "table version"},
        "tickmode": "linear",
        "tick0": _first_tick(low, dtick),
        "dtick": dtick,
        "tickformat": "d",
    }


def _version_steps(versions: pd.Series, max_ticks: int) -> tuple[int, int, int]:
    """The oldest and newest versions, and the step between version ticks: the smallest
    round one (1, 2 or 5 times a power of ten; never a fraction: there is no version 2.5)
    that keeps at most ``max_ticks`` of them."""
    values = [int(v) for v in versions.dropna()]
    low, high = (min(values), max(values)) if values else (0, 0)
    least = max(1, math.ceil((high - low + 1) / max_ticks))
    power = 10 ** (len(str(least)) - 1)
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= least)
    return low, high, step


def version_ticks(versions: pd.Series, *, max_ticks: int = 12) -> list[int]:
    """Whole version numbers to label on a version axis: the multiples of the round step
    between the oldest and the newest version (10,000, 20,000, … rather than 1, 8,335,
    16,669, …); the oldest alone when no multiple lies between."""
    low, high, step = _version_steps(versions, max_ticks)
    return list(range(_first_tick(low, step), high + 1, step)) or [low]


def _first_tick(low: int, step: int) -> int:
    """The first multiple of ``step`` at or above the oldest version ``low``."""
    return -(-low // step) * step


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


def latency_figure(ann_ms: Sequence[float], exact_ms: Sequence[float]) -> go.Figure:
    """Latency per query of a recall measurement: the ANN and the exact searches as boxes."""
    fig = go.Figure()
    fig.add_trace(go.Box(y=list(ann_ms), name="ANN", boxpoints=False))
    fig.add_trace(go.Box(y=list(exact_ms), name="exact", boxpoints=False))
    fig.update_layout(
        title={"text": "Latency per query", "font": {"size": 14}},
        yaxis={"title": "ms", "rangemode": "tozero"},
        height=300,
        margin={"l": 10, "r": 10, "t": 40, "b": 40},
        showlegend=False,
    )
    return fig


def sweep_figure(frame: pd.DataFrame, keys: Sequence[str], target: float) -> go.Figure:
    """Recall against p50 latency, one point per setting, the Pareto front drawn, the target
    as a line and the cheapest setting reaching it circled."""
    labels = {i: setting_text(row, keys) for i, row in frame.iterrows()}
    brute = (
        frame["brute_force"].astype(bool)
        if "brute_force" in frame
        else pd.Series(False, index=frame.index)
    )
    ann = frame[~brute]  # settings that used the index; brute-force ones drawn apart
    front = pareto_front(ann)
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=ann["p50_ms"], y=ann["recall"], mode="markers", name="setting",
            text=[labels[i] for i in ann.index], marker={"size": 9, "color": "#9ecae1"},
            error_y={
                "type": "data", "symmetric": False, "visible": True, "thickness": 1,
                "array": ann["recall_high"] - ann["recall"],
                "arrayminus": ann["recall"] - ann["recall_low"],
            },
            customdata=[
                [interval_text(low, high)]
                for low, high in zip(ann["recall_low"], ann["recall_high"], strict=True)
            ],
            hovertemplate="%{text}<br>recall %{y:.3f} (95% interval %{customdata[0]})"
            "<br>p50 %{x:.2f} ms<extra></extra>",
        )
    )  # fmt: skip
    if brute.any():
        forced = frame[brute]
        fig.add_trace(
            go.Scatter(
                x=forced["p50_ms"], y=forced["recall"], mode="markers",
                name="brute force (no index)", text=[labels[i] for i in forced.index],
                marker={"size": 9, "color": "#969696", "symbol": "x"},
                hovertemplate="%{text}<br>brute force<br>recall %{y:.3f}<br>p50 %{x:.2f} ms"
                "<extra></extra>",
            )
        )  # fmt: skip
    on_front = ann[front].sort_values("p50_ms")
    fig.add_trace(
        go.Scatter(
            x=on_front["p50_ms"], y=on_front["recall"], mode="lines+markers", name="Pareto front",
            line={"color": "#08519c", "shape": "hv"}, marker={"size": 10, "color": "#08519c"},
            text=[labels[i] for i in on_front.index],
            hovertemplate="%{text}<br>recall %{y:.3f}<br>p50 %{x:.2f} ms<extra></extra>",
        )
    )  # fmt: skip
    fig.add_hline(
        y=target, line={"dash": "dash", "color": "#d62728"},
        annotation_text=f"target {target:.2f}", annotation_position="bottom right",
    )  # fmt: skip
    best = cheapest(frame, target)
    if best is not None:
        fig.add_trace(
            go.Scatter(
                x=[best["p50_ms"]], y=[best["recall"]], mode="markers", name="cheapest ≥ target",
                marker={"size": 18, "symbol": "circle-open", "color": "#d62728", "line": {"width": 3}},
            )
        )  # fmt: skip
    fig.update_layout(
        height=420,
        margin={"l": 10, "r": 10, "t": 40, "b": 40},
        title={"text": "Recall against latency", "font": {"size": 14}},
        xaxis={"title": "p50 latency (ms)", "rangemode": "tozero"},
        yaxis={"title": "recall", "range": [0, 1.05]},
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def ab_figure(frame: pd.DataFrame) -> go.Figure:
    """Build A/B: recall against p50 latency, one point (trace) per build, the marker's area
    growing with the index size. Builds are named in the legend below the plot, not next to
    their points: close points would stack their labels on each other and the plot's edges
    would cut them."""
    largest = max(1, int(frame["size_bytes"].max())) if len(frame) else 1
    fig = go.Figure()
    for _, row in frame.iterrows():
        fig.add_trace(
            go.Scatter(
                x=[row["p50_ms"]], y=[row["recall"]], mode="markers", name=str(row["config"]),
                marker={"size": 10 + 26 * (row["size_bytes"] / largest) ** 0.5, "opacity": 0.75},
                hovertemplate=f"{row['config']}<br>recall %{{y:.3f}}<br>p50 %{{x:.2f}} ms"
                "<extra></extra>",
            )
        )  # fmt: skip
    fig.update_layout(
        height=380,
        margin={"l": 10, "r": 10, "t": 40, "b": 40},
        title={"text": "Recall against latency (marker size: index size)", "font": {"size": 14}},
        xaxis={"title": "p50 latency (ms)", "rangemode": "tozero"},
        yaxis={"title": "recall", "range": [0, 1.1]},
        showlegend=True,
        legend={"orientation": "h", "y": -0.25, "title": {"text": "Build"}},
    )
    return fig


def plan_figure(nodes: Sequence[PlanNode]) -> go.Figure:
    """Time per node (analyze), the plan's steps top to bottom."""
    labels = [f"{'· ' * n.depth}{n.name}" for n in nodes]
    times = [n.elapsed_ms or 0.0 for n in nodes]
    fig = go.Figure(go.Bar(x=times, y=labels, orientation="h", marker_color="#4C78A8"))
    fig.update_layout(
        height=max(160, 34 * len(nodes) + 60),
        margin={"l": 10, "r": 10, "t": 30, "b": 30},
        title={"text": "Time per step (ms, inclusive)", "font": {"size": 14}},
        yaxis={"autorange": "reversed"},
        xaxis={"title": "ms"},
    )
    return fig


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


TICKS = 5


def _datetime(ts: pd.Timestamp) -> alt.DateTime:
    """A UTC instant as a Vega-Lite DateTime (millisecond precision)."""
    return alt.DateTime(
        year=ts.year, month=ts.month, date=ts.day, hours=ts.hour, minutes=ts.minute,
        seconds=ts.second, milliseconds=ts.microsecond // 1000, utc=True,
    )  # fmt: skip


def time_axis(span_seconds: float, start: pd.Timestamp | None = None) -> alt.Axis:
    """A readable time axis for versions ``span_seconds`` apart: milliseconds when they are
    within a minute (the demo's are within a second), seconds within a day, dates beyond.
    Within a minute Vega draws one or two ticks at most, so with ``start`` the axis gets
    :data:`TICKS` evenly spaced tick values (UTC DateTimes)."""
    values = None
    if span_seconds < 60:
        fmt = "%H:%M:%S.%L"
        if start is not None:
            first = pd.Timestamp(start)
            first = first.tz_localize("UTC") if first.tzinfo is None else first.tz_convert("UTC")
            step = pd.Timedelta(milliseconds=max(span_seconds * 1000.0, 1.0) / (TICKS - 1))
            values = [_datetime(first + i * step) for i in range(TICKS)]
    elif span_seconds < 86_400:
        fmt = "%H:%M:%S"
    else:
        fmt = "%b %d %H:%M"
    extra = {"values": values} if values else {"tickCount": 6}
    return alt.Axis(format=fmt, labelAngle=-30, labelOverlap="greedy", title=None, **extra)


def timeline_chart(frame: pd.DataFrame, *, highlight: Sequence[int] = ()) -> alt.LayerChart:
    """Vega-Lite scatter of versions over time, coloured by operation; the versions on the
    current page are shaded as a band when the chart shows more than them."""
    data = frame[["version", "timestamp", "operation"]].copy()
    data["version"] = data["version"].astype("int64")
    points = (
        alt.Chart(data)
        .mark_circle(size=36, opacity=0.85)
        .encode(
            x=alt.X(
                "timestamp:T",
                axis=time_axis(
                    vsv.time_span_seconds(data),
                    pd.to_datetime(data["timestamp"]).min() if len(data) else None,
                ),
            ),
            y=alt.Y(
                "version:Q",
                title="version",
                scale=alt.Scale(zero=False),
                axis=alt.Axis(format="d", values=version_ticks(data["version"])),
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
    chart: alt.LayerChart = alt.layer(*layers).properties(height=320)  # type: ignore[assignment]
    return chart


READER_COLORS = {"before": "#90a4ae", "published": INDEXED_COLOR, "other": UNINDEXED_COLOR}
READER_LABELS = {
    "before": "as before the batch",
    "published": "batch published",
    "other": "changed by another writer",
}
MIXED_COLOR = "#d62728"


def _merged_marks(marks: Sequence[tuple[float, str]], near: float = 0.3) -> list[tuple[float, str]]:
    """``"x started"`` followed within ``near`` seconds by ``"x ended"``: one mark ``"x (N
    ms)"`` (two labels would print over each other)."""
    out: list[tuple[float, str]] = []
    for at, label in marks:
        if out and label.endswith(" ended") and out[-1][1] == label[: -len(" ended")] + " started":
            began, _ = out[-1]
            if at - began <= near:
                out[-1] = (began, f"{label[: -len(' ended')]} ({(at - began) * 1000:.0f} ms)")
                continue
        out.append((at, label))
    return out


def reader_figure(
    states: pd.DataFrame, marks: Sequence[tuple[float, str]] = (), *, start: float | None = None
) -> go.Figure:
    """What a reader saw, poll by poll: one row of squares per table (x: seconds since the
    first poll), grey while the table is as before the batch, green once the batch is
    published, orange once another writer changed it (``table_watch.states_frame``); a poll that saw some tables of the batch published and others not (a mixed
    state) is outlined in red. ``marks``: ``(time.time(), label)`` moments drawn as dashed
    lines (``start``: the first poll's time, to place them)."""
    fig = go.Figure()
    for state in ("before", "published", "other"):
        part = states[states["state"] == state]
        if part.empty:
            continue
        fig.add_trace(
            go.Scatter(
                x=part["seconds"], y=part["table"], mode="markers", name=READER_LABELS[state],
                marker={
                    "symbol": "square", "size": 11, "color": READER_COLORS[state],
                    "line": {
                        "width": [2 if m else 0 for m in part["mixed"]],
                        "color": MIXED_COLOR,
                    },
                },
                customdata=list(zip(part["version"].astype(object), part["rows"].astype(object),
                                    part["poll"], strict=True)),
                hovertemplate="%{y}<br>poll %{customdata[2]} at %{x:.2f} s<br>version "
                "%{customdata[0]} · %{customdata[1]:,} rows<extra></extra>",
            )
        )  # fmt: skip
    if start is not None:
        for at, label in _merged_marks(marks):
            fig.add_vline(
                x=round(at - start, 3), line={"dash": "dash", "color": "#616161", "width": 1},
                annotation={"text": label, "font": {"size": 11}}, annotation_position="top",
            )  # fmt: skip
    tables = list(dict.fromkeys(states["table"]))
    fig.update_layout(
        height=150 + 34 * max(1, len(tables)),
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        xaxis={"title": "seconds since the first poll", "rangemode": "tozero"},
        yaxis={"categoryorder": "array", "categoryarray": tables[::-1], "title": None},
        legend={"orientation": "h", "y": -0.35},
        showlegend=True,
    )
    return fig
