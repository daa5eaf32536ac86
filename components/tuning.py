"""Pieces of the Search & tune page that tune an index: recall with its interval (and more
queries), the parameter sweep against a target, Build A/B on a scratch copy, and the build
parameters lance applied. The logic is ``backend.services.tuning``; the query settings are the
search panels' own (``components.search``). Build A/B returns a task for the page to start.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st
from lance_namespace.errors import InvalidInputError

from backend import capabilities
from backend.rules import index_rules, query_rules
from backend.services import search, tuning
from backend.services.charts import (
    ab_figure,
    latency_figure,
    recall_histogram,
    sweep_figure,
)
from backend.text import human_bytes, plural
from components import feedback, state
from components.common import dataframe
from components.search import (
    DEFAULT_GRID,
    DISTANCES,
    chosen_distance,
    clean,
    render_column_and_k,
    render_distance,
    render_metric_note,
    render_query_settings,
    render_setting_snippets,
)
from components.writes import JobRequest, table_jobs

# --------------------------------------------------------------------------------------------
# Recall
# --------------------------------------------------------------------------------------------


def render_sample_inputs(
    info: search.SearchTable, *, panel: str, sample: int, problems: list[str]
) -> tuple[str, int, int, int]:
    """Column, k, sample size and seed of a measurement (recall, sweep); a number refused as
    typed is added to ``problems`` (the form then runs nothing)."""
    column, k = render_column_and_k(info, panel=panel, problems=problems)
    c1, c2 = st.columns(2)
    size = c1.number_input(
        "Sample (rows)", min_value=1, max_value=tuning.MAX_SAMPLE, value=sample,
        key=state.search_key(panel, "sample"), persist_state=state.KEEP_WHILE_ON_PAGE,
    )  # fmt: skip
    seed = c2.number_input(
        "Seed",
        min_value=0,
        value=0,
        key=state.search_key(panel, "seed"),
        persist_state=state.KEEP_WHILE_ON_PAGE,
    )
    return column, k, int(size), int(seed)


def render_recall(ns: Any, info: search.SearchTable, version: int | None) -> None:
    """recall@k of ANN against exact search over a seeded sample of the table's own rows."""
    if not info.vector_columns:
        st.info("This table has no vector column.", icon=":material/info:")
        return
    problems: list[str] = []
    with st.form(state.Search.RECALL_FORM):
        column, k, sample, seed = render_sample_inputs(
            info, panel="recall", sample=100, problems=problems
        )
        params = render_query_settings(info, column, panel="recall", problems=problems)
        submitted = st.form_submit_button(
            "Measure recall", type="primary", icon=":material/target:"
        )
    if submitted and not problems:  # a number refused as typed: said under it, nothing runs
        with st.spinner(f"Searching {plural(int(sample), 'sampled row')} twice (ANN, exact)…"):
            found = feedback.run(
                tuning.recall, ns, info.table_id, column=column, k=k, sample=int(sample),
                seed=int(seed), version=version, **clean(params), action="Measuring recall",
            )  # fmt: skip
        if found is not None:
            state.set_result(info.table_id, "recall", found)
    found = state.result(info.table_id, "recall")
    if not found:
        return
    more = st.button(
        f"More queries (+{int(sample)})",
        key=state.Search.RECALL_MORE,
        icon=":material/add:",
        disabled=not found.positions,
        help="Measure another batch of rows, none sampled before, with this result's settings, "
        "and add them: the mean and its interval are then computed from every query.",
    )
    if more:
        with st.spinner(f"Searching {plural(int(sample), 'more sampled row')} twice…"):
            merged = feedback.run(
                tuning.more_queries, ns, info.table_id, found, sample=int(sample),
                action="Measuring more queries",
            )  # fmt: skip
        if merged is not None:
            state.set_result(info.table_id, "recall", merged)
            found = merged
    render_recall_result(found)


# the sweep grid's statistics columns, labelled for what they are
SWEEP_COLUMN_LABELS = {
    "recall_std": st.column_config.NumberColumn(
        "recall standard deviation",
        help="Standard deviation of the per-query recalls (a spread, not an interval)",
        format="%.3f",
    ),
    "recall_low": st.column_config.NumberColumn(
        "95% interval low", help="95% confidence interval of the mean recall", format="%.3f"
    ),
    "recall_high": st.column_config.NumberColumn(
        "95% interval high", help="95% confidence interval of the mean recall", format="%.3f"
    ),
}


def recall_metric(found: tuning.RecallResult) -> query_rules.QueryMetric | None:
    """The metric a recall measurement used (``None`` for a result without one)."""
    if found.metric is None:
        return None
    chosen = found.query_params.get("distance_type") is not None
    return query_rules.QueryMetric(found.metric, found.index_metric, chosen)


def render_recall_result(found: tuning.RecallResult) -> None:
    c1, c2, c3, c4 = st.columns(4)
    interval = tuning.interval_text(*found.interval)
    c1.metric(
        f"recall@{found.k}",
        f"{found.mean:.3f}",
        help=f"Mean over the sampled rows. 95% confidence interval of the mean (Student's t, "
        f"from the per-query recalls): {interval}. Standard deviation of the per-query "
        f"recalls: {found.std:.3f}.",
    )
    c1.caption(f"95% interval {interval}")
    c2.metric("ANN p50", f"{found.ann_p50_ms:.1f} ms")
    c3.metric("Exact p50", f"{found.exact_p50_ms:.1f} ms")
    speed = found.exact_p50_ms / found.ann_p50_ms if found.ann_p50_ms else float("nan")
    c4.metric("Speed-up", f"{speed:.1f}×")
    settings = ", ".join(f"{k}={v}" for k, v in found.query_params.items()) or "defaults"
    st.caption(
        feedback.as_text(
            f"{plural(len(found.per_query), 'sampled row')}, each searched without itself; "
            f"settings: {settings}"
        )
    )
    render_metric_note(
        recall_metric(found), bypass=bool(found.query_params.get("bypass_vector_index"))
    )
    c1, c2 = st.columns(2)
    c1.plotly_chart(recall_histogram(found.per_query, found.k), key=state.Search.RECALL_HIST)
    c2.plotly_chart(latency_figure(found.ann_ms, found.exact_ms), key=state.Search.RECALL_LATENCY)


# --------------------------------------------------------------------------------------------
# Sweep
# --------------------------------------------------------------------------------------------


def render_sweep(ns: Any, info: search.SearchTable, version: int | None) -> None:
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
            grid = {n: tuning.parse_grid_values(n, t) for n, t in grid_text.items()}
            grid = {n: v for n, v in grid.items() if v}
            points = len(tuning.grid_points(grid))
        except InvalidInputError as err:
            feedback.show_error(err, action="Reading the grid")
            return
        bar = st.progress(0.0, text=f"Measuring {plural(points, 'setting')}…")

        def tick(done: int, total: int) -> None:
            bar.progress(done / total, text=f"{done} of {plural(total, 'setting')} measured")

        frame = feedback.run(
            tuning.sweep, ns, info.table_id, column=column, k=k, sample=int(sample),
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
    info: search.SearchTable,
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
    st.plotly_chart(sweep_figure(frame, keys, target), key=state.Search.SWEEP_CHART)
    best = tuning.cheapest(frame, target)
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
            f", its interval {tuning.interval_text(top['recall_low'], top['recall_high'])}"
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
        params = tuning.setting_params(best, keys)
        if metric is not None and metric.chosen and "distance_type" not in params:
            params["distance_type"] = metric.metric  # the sweep's own choice, kept in the link
        text = ", ".join(f"{k}={v}" for k, v in params.items()) or "the defaults"
        feedback.show(
            "success",
            f"Cheapest setting reaching recall {target:.2f} with 95% confidence: {text} "
            f"(recall {best['recall']:.3f}, interval {best['recall_low']:.3f}-"
            f"{best['recall_high']:.3f}, p50 {best['p50_ms']:.1f} ms, p95 {best['p95_ms']:.1f} ms).",
        )
        render_setting_snippets(info.table_id, column, k, params, branch=info.branch)
    indexed_rows = frame[~frame["brute_force"].astype(bool)] if "brute_force" in frame else frame
    shown = frame.assign(
        pareto=tuning.pareto_front(indexed_rows).reindex(frame.index, fill_value=False)
    )
    dataframe(
        shown, hide_index=True, key=state.Search.SWEEP_GRID, column_config=SWEEP_COLUMN_LABELS
    )
    st.download_button(
        "Download the sweep (JSON)", tuning.result_json(frame), file_name="sweep.json",
        mime="application/json", key=state.Search.SWEEP_DOWNLOAD, icon=":material/download:",
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# Build A/B
# --------------------------------------------------------------------------------------------

AB_DEFAULT = pd.DataFrame(
    [
        {"index_type": "IVF_PQ", "num_partitions": 16, "num_sub_vectors": 8, "m": None},
        {"index_type": "IVF_PQ", "num_partitions": 64, "num_sub_vectors": 16, "m": None},
        {"index_type": "IVF_HNSW_SQ", "num_partitions": 4, "num_sub_vectors": None, "m": 16},
    ]
).assign(distance_type=pd.Series([None] * 3, dtype=object))
_AB_TEXT = frozenset({"index_type", "distance_type"})


def ab_configs(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """The editor's rows as build configurations (empty cells left out: no distance is the
    metric of the table's own index)."""
    configs = []
    for _, row in rows.iterrows():
        config = {
            key: (int(value) if key not in _AB_TEXT else str(value))
            for key, value in row.items()
            if value is not None
            and not (isinstance(value, float) and pd.isna(value))
            and str(value) != ""
        }
        if config.get("index_type"):
            configs.append(config)
    return configs


def render_task(job: Any) -> bool:
    """A job's progress or outcome; True once it has finished."""
    if not job.done:
        text = f"{job.label}: {job.stage} ({job.elapsed:.0f} s)"
        st.progress(job.fraction or 0.0, text=feedback.as_text(text))
        return False
    if (error := job.exception()) is not None:
        feedback.show_error(error, action=job.label)
    return True


def ab_jobs(ns: Any, table_id: tuple[str, ...]) -> list[Any]:
    """The table's latest build comparison (a job, any console's), newest first."""
    return table_jobs(ns, table_id, ("build_ab",), limit=1)


def render_build_ab(ns: Any, info: search.SearchTable) -> JobRequest | None:
    """Compare vector index builds on a scratch copy of a sample, in the background: the job
    "Compare builds" asks for (the page submits it: ``components.writes.perform``), and the
    progress and outcome of the table's latest comparison."""
    if not info.vector_columns:
        st.info("This table has no vector column.", icon=":material/info:")
        return None
    st.caption(tuning.SCRATCH_NOTE)
    with st.form(state.Search.AB_FORM):
        st.caption(
            "A build without a distance uses the metric of the table's own index on the "
            "column; each build is measured against exact search with its own metric."
        )
        problems: list[str] = []
        column, k = render_column_and_k(info, panel="ab", problems=problems)
        c1, c2 = st.columns(2)
        rows = c1.number_input(
            "Sample (rows copied)", min_value=100, max_value=200_000, value=20_000, step=1000,
            key=state.Search.AB_ROWS, persist_state=state.KEEP_WHILE_ON_PAGE,
        )  # fmt: skip
        queries = c2.number_input(
            "Queries",
            min_value=1,
            max_value=500,
            value=50,
            key=state.Search.AB_QUERIES,
            persist_state=state.KEEP_WHILE_ON_PAGE,
        )
        edited = st.data_editor(
            AB_DEFAULT,
            num_rows="dynamic",
            hide_index=True,
            key=state.Search.AB_CONFIGS,
            column_config={
                "index_type": st.column_config.SelectboxColumn(
                    "Index type", options=list(index_rules.VECTOR_INDEX_TYPES), required=True
                ),
                "num_partitions": st.column_config.NumberColumn("Partitions", min_value=1),
                "num_sub_vectors": st.column_config.NumberColumn("Sub-vectors", min_value=1),
                "distance_type": st.column_config.SelectboxColumn(
                    "Distance", options=list(DISTANCES), required=False
                ),
                "m": st.column_config.NumberColumn("HNSW m", min_value=index_rules.MIN_HNSW_M),
            },
        )
        latest = ab_jobs(ns, info.table_id)
        running = any(not j.done for j in latest)
        submitted = st.form_submit_button(
            "Compare builds", type="primary", icon=":material/compare_arrows:", disabled=running
        )
    if submitted and not problems:  # a number refused as typed: said under it, nothing runs
        configs = ab_configs(edited)
        params = {
            "column": column, "configs": configs, "sample_rows": int(rows),
            "queries": int(queries), "k": int(k),
        }  # fmt: skip
        label = f"Comparing {plural(len(configs), 'build')}"
        return JobRequest("build_ab", tuple(info.table_id), params, label)
    render_ab_tasks(ns, info.table_id, latest, button_disabled=running)
    return None


def render_ab_tasks(
    ns: Any, table_id: tuple[str, ...], latest: list[Any], *, button_disabled: bool = False
) -> None:
    """The newest comparison of the table: progress (refreshed every second), then its
    outcome. The form's button was drawn disabled while it ran (``button_disabled``): the
    run that sees the comparison finished reruns the whole page, so the button is enabled
    as soon as the builds are done (a fragment's own run redraws only the fragment)."""
    if not latest:
        return

    def panel() -> None:
        now = ab_jobs(ns, table_id) or latest
        job = now[0]
        done = render_task(job)
        if button_disabled and all(j.done for j in now):
            st.rerun(scope="app")
        if done and job.state == "succeeded":
            render_ab_result(pd.DataFrame(job.result))

    st.fragment(panel, run_every=1.0 if not latest[0].done else None)()


def render_ab_result(frame: pd.DataFrame) -> None:
    dataframe(
        frame.assign(size=[human_bytes(v) for v in frame["size_bytes"]]).drop(
            columns=["size_bytes"]
        ),
        hide_index=True,
        key=state.Search.AB_GRID,
        column_config={
            "config": st.column_config.TextColumn("Build", width="large"),
            "recall": st.column_config.ProgressColumn(
                "Recall", min_value=0.0, max_value=1.0, width=110
            ),
            "p50_ms": st.column_config.NumberColumn("p50 (ms)", format="%.2f", width=75),
            "size": st.column_config.TextColumn("Index size", width=85),
            "build_s": st.column_config.NumberColumn("Build (s)", format="%.2f", width=75),
            "rows": st.column_config.NumberColumn("Rows", format="localized", width=70),
            "metric": st.column_config.TextColumn("Distance", width=75),
            "brute_force": st.column_config.CheckboxColumn(
                "Brute force", width=85, help="The query ran without the index"
            ),
        },
    )
    st.plotly_chart(ab_figure(frame), key=state.Search.AB_CHART)


# --------------------------------------------------------------------------------------------
# Requested against applied, maintenance
# --------------------------------------------------------------------------------------------


def render_requested_vs_applied(ns: Any, info: search.SearchTable) -> None:
    frame = feedback.run(
        tuning.requested_vs_applied, ns, info.table_id, action="Reading the index details"
    )
    if frame is None:
        return
    if frame.empty:
        st.info("This table has no vector index.", icon=":material/info:")
        return
    if capabilities(ns).kind == "rest":
        st.caption(
            "Requested: what this console sent in this session (the spec does not keep it); "
            "applied: what the server's index details say."
        )
    else:
        st.caption("Requested: what the console asked for (and chose); applied: lance's record.")
    differs = frame[frame["differs"]]
    if not differs.empty:
        feedback.show(
            "warning",
            "Applied differs from requested: "
            + "; ".join(
                f"{r.index} {r.parameter} {r.requested} → {r.applied} ({r.note})"
                for r in differs.itertuples()
            ),
        )
    dataframe(
        frame,
        hide_index=True,
        key=state.Search.PARAMS_GRID,
        column_config={"differs": st.column_config.CheckboxColumn("Differs")},
    )


__all__ = [
    "AB_DEFAULT",
    "ab_configs",
    "recall_metric",
    "render_ab_result",
    "render_ab_tasks",
    "render_build_ab",
    "render_recall",
    "render_recall_result",
    "render_requested_vs_applied",
    "render_sample_inputs",
    "render_sweep",
    "render_sweep_result",
    "render_task",
]
