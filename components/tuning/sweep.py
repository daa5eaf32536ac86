"""The Sweep panel: a grid of query parameters measured for recall and latency, the cheapest
setting that reaches a target recall, with Copy as Python and a link."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st
from lance_namespace.errors import InvalidInputError

from backend.rules import query_rules
from backend.services.charts import sweep_figure
from backend.services.search.table import SearchTable
from backend.services.tuning.measure import interval_text
from backend.services.tuning.sweeps import (
    cheapest,
    fastest,
    grid_points,
    pareto_front,
    parse_grid_values,
    result_json,
    setting_params,
    setting_text,
    sweep,
)
from backend.text import plural
from components import feedback, state
from components.common import dataframe
from components.search.settings import chosen_distance, render_distance, render_metric_note
from components.search.share_url import render_setting_snippets
from components.tuning.recall import drawn_among_text, render_sample_inputs

DEFAULT_GRID = {"nprobes": "1, 2, 4, 8, 16, 32", "refine_factor": "none, 4", "ef": ""}

# the sweep grid's measured columns, labelled for what they are (the query parameters keep
# their API names: they are what a query sends)
SWEEP_COLUMN_LABELS = {
    "recall": st.column_config.NumberColumn(
        "Recall", help="Mean recall@k over the sample's queries", format="%.3f"
    ),
    "recall_std": st.column_config.NumberColumn(
        "Recall SD",
        help="Standard deviation of the per-query recalls (a spread, not an interval)",
        format="%.3f",
    ),
    "recall_low": st.column_config.NumberColumn(
        "95% interval low", help="95% confidence interval of the mean recall", format="%.3f"
    ),
    "recall_high": st.column_config.NumberColumn(
        "95% interval high", help="95% confidence interval of the mean recall", format="%.3f"
    ),
    "queries": st.column_config.NumberColumn("Queries", help="Queries measured"),
    "p50_ms": st.column_config.NumberColumn(
        "p50 (ms)", help="Median latency (each search timed on its second sending)", format="%.2f"
    ),
    "p95_ms": st.column_config.NumberColumn(
        "p95 (ms)", help="95th percentile latency (timed as p50)", format="%.2f"
    ),
    "metric": st.column_config.TextColumn("Distance"),
    "brute_force": st.column_config.CheckboxColumn(
        "Brute force", help="The query ran without the index"
    ),
    "pareto": st.column_config.CheckboxColumn(
        "Pareto front",
        help="No other indexed setting is as good in recall and p50 latency and better in one",
    ),
}


def render_sweep(ns: Any, info: SearchTable, version: int | None) -> None:
    """A grid of query parameters measured for recall and latency; the cheapest setting that
    reaches a target recall, with copy as Python and a link."""
    if not info.vector_columns:
        st.info("This table has no vector column.", icon=":material/info:")
        return
    problems: list[str] = []
    with st.form(state.Search.SWEEP_FORM):
        column, k, sample, seed = render_sample_inputs(
            info, panel="sweep", sample=50, problems=problems
        )
        distance = chosen_distance(
            info, column, render_distance(info, column, panel="sweep", where=st)
        )
        st.caption("Values to try, comma-separated; `none` = not sent (the backend's default).")
        grid_text = {
            name: col.text_input(
                name,
                value=default,
                key=state.search_key("sweep", f"grid.{name}"),
                persist_state=state.KEEP_WHILE_ON_PAGE,
            )
            for col, (name, default) in zip(st.columns(3), DEFAULT_GRID.items(), strict=True)
        }
        submitted = st.form_submit_button("Run the sweep", type="primary", icon=":material/tune:")
    if submitted and not problems:  # a number refused as typed: said under it, nothing runs
        try:
            grid = {n: parse_grid_values(n, t) for n, t in grid_text.items()}
            grid = {n: v for n, v in grid.items() if v}
            points = len(grid_points(grid))
        except InvalidInputError as err:
            feedback.show_error(err, action="Reading the grid")
            return
        bar = st.progress(0.0, text=f"Measuring {plural(points, 'setting')}…")

        def tick(done: int, total: int) -> None:
            bar.progress(done / total, text=f"{done} of {plural(total, 'setting')} measured")

        frame = feedback.run(
            sweep, ns, info.table_id, column=column, k=k, sample=int(sample),
            seed=int(seed), grid=grid, progress=tick, version=version, distance_type=distance,
            action="Sweeping",
        )  # fmt: skip
        bar.empty()
        if frame is not None:
            metric = info.metric_for(column, distance)
            state.set_result(info.table_id, "sweep", (frame, list(grid), column, k, metric))
    last = state.result(info.table_id, "sweep")
    if last:
        render_sweep_result(info, *last)


def render_sweep_result(
    info: SearchTable,
    frame: pd.DataFrame,
    keys: list[str],
    column: str,
    k: int,
    metric: query_rules.QueryMetric | None = None,
) -> None:
    target = st.slider(
        "Target recall", min_value=0.5, max_value=1.0, value=0.95, step=0.01,
        key=state.Search.TARGET, persist_state=state.KEEP_WHILE_ON_PAGE,
    )  # fmt: skip
    render_metric_note(metric)
    if (among := frame.attrs.get("drawn_among")) is not None:
        st.caption(
            feedback.as_text(
                f"Each setting searched the same sampled rows, {drawn_among_text(among)}"
                + (f", at version {frame.attrs['version']}" if frame.attrs.get("version") else "")
                + "."
            )
        )
    st.plotly_chart(sweep_figure(frame, keys, target), key=state.Search.SWEEP_CHART)
    best = cheapest(frame, target)
    indexed = frame[~frame["brute_force"].astype(bool)] if "brute_force" in frame else frame
    if best is None and indexed.empty:
        feedback.show(
            "warning",
            "Every setting ran as brute force (lance searched without the index): there is "
            "no index setting to pick.",
        )
    elif best is None:
        top = indexed.loc[indexed["recall"].idxmax()]
        bound = (
            f", its interval {interval_text(top['recall_low'], top['recall_high'])}"
            if "recall_low" in indexed.columns
            else ""
        )
        feedback.show(
            "warning",
            f"No setting reaches recall {target:.2f} with 95% confidence (best "
            f"{top['recall']:.3f}{bound}): try more queries, more probes, a refine factor, "
            "or a finer index.",
        )
    else:
        params = setting_params(best, keys)
        if metric is not None and metric.chosen and "distance_type" not in params:
            params["distance_type"] = metric.metric  # the sweep's own choice, kept in the link
        text = ", ".join(f"{k}={v}" for k, v in params.items()) or "the defaults"
        quick = fastest(frame, target)
        spread = ""
        if quick is not None and quick.name != best.name:  # more work, measured quicker
            spread = (
                f" {setting_text(quick, keys)} measured quicker (p50 {quick['p50_ms']:.1f} ms) "
                "but asks for more work on the same queries: that difference is the "
                "measurement's spread."
            )
        feedback.show(
            "success",
            f"Cheapest setting reaching recall {target:.2f} with 95% confidence: {text} "
            f"(recall {best['recall']:.3f}, interval {best['recall_low']:.3f}-"
            f"{best['recall_high']:.3f}, p50 {best['p50_ms']:.1f} ms, p95 {best['p95_ms']:.1f} ms)."
            + spread,
        )
        render_setting_snippets(info.table_id, column, k, params, branch=info.branch)
    indexed_rows = frame[~frame["brute_force"].astype(bool)] if "brute_force" in frame else frame
    shown = frame.assign(pareto=pareto_front(indexed_rows).reindex(frame.index, fill_value=False))
    dataframe(
        shown, hide_index=True, key=state.Search.SWEEP_GRID, column_config=SWEEP_COLUMN_LABELS
    )
    st.download_button(
        "Download the sweep (JSON)", result_json(frame), file_name="sweep.json",
        mime="application/json", key=state.Search.SWEEP_DOWNLOAD, icon=":material/download:",
    )  # fmt: skip
