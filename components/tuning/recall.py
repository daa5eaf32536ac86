"""The Recall panel: recall@k of ANN against exact search over a seeded sample of the
table's own rows, its 95% interval, and more queries merged in."""

from __future__ import annotations

from typing import Any

import streamlit as st

from backend.rules import query_rules
from backend.services.charts import latency_figure, recall_histogram
from backend.services.search.table import SearchTable
from backend.services.tuning.measure import (
    MAX_SAMPLE,
    RecallResult,
    interval_text,
    more_queries,
    recall,
)
from backend.text import plural
from components import feedback, state
from components.search.settings import (
    clean,
    render_column_and_k,
    render_metric_note,
    render_query_settings,
)


def render_sample_inputs(
    info: SearchTable, *, panel: str, sample: int, problems: list[str]
) -> tuple[str, int, int, int]:
    """Column, k, sample size and seed of a measurement (recall, sweep); a number refused as
    typed is added to ``problems`` (the form then runs nothing)."""
    column, k = render_column_and_k(info, panel=panel, problems=problems)
    c1, c2 = st.columns(2)
    size = c1.number_input(
        "Sample (rows)", min_value=1, max_value=MAX_SAMPLE, value=sample,
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


def render_recall(ns: Any, info: SearchTable, version: int | None) -> None:
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
        with st.spinner(
            f"Searching {plural(int(sample), 'sampled row')} with and without the index "
            "(each search timed warm)…"
        ):
            found = feedback.run(
                recall, ns, info.table_id, column=column, k=k, sample=int(sample),
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
        with st.spinner(
            f"Searching {plural(int(sample), 'more sampled row')} with and without the index…"
        ):
            merged = feedback.run(
                more_queries, ns, info.table_id, found, sample=int(sample),
                action="Measuring more queries",
            )  # fmt: skip
        if merged is not None:
            state.set_result(info.table_id, "recall", merged)
            found = merged
    render_recall_result(found)


def recall_metric(found: RecallResult) -> query_rules.QueryMetric | None:
    """The metric a recall measurement used (``None`` for a result without one)."""
    if found.metric is None:
        return None
    chosen = found.query_params.get("distance_type") is not None
    return query_rules.QueryMetric(found.metric, found.index_metric, chosen)


def drawn_among_text(drawn: tuple[int, int]) -> str:
    """Where a sample's queries were drawn, ``(among, rows)`` (``RecallResult.drawn_among``),
    as recall and sweeps say it."""
    return f"drawn among the first {drawn[0]:,} of {drawn[1]:,} rows"


def render_recall_result(found: RecallResult) -> None:
    c1, c2, c3, c4 = st.columns(4)
    interval = interval_text(*found.interval)
    c1.metric(
        f"recall@{found.k}",
        f"{found.mean:.3f}",
        help=f"Mean over the sampled rows. 95% confidence interval of the mean (Student's t, "
        f"from the per-query recalls): {interval}. Standard deviation of the per-query "
        f"recalls: {found.std:.3f}.",
    )
    c1.caption(f"95% interval {interval}")
    warm = "Median latency of the sampled rows' searches, each timed on its second sending"
    c2.metric("ANN p50", f"{found.ann_p50_ms:.1f} ms", help=f"{warm} (with the index).")
    c3.metric("Exact p50", f"{found.exact_p50_ms:.1f} ms", help=f"{warm} (without the index).")
    speed = found.exact_p50_ms / found.ann_p50_ms if found.ann_p50_ms else float("nan")
    c4.metric("Speed-up", f"{speed:.1f}×")
    params = dict(found.query_params)
    version = params.pop("version", None)
    settings = ", ".join(f"{k}={v}" for k, v in params.items()) or "defaults"
    at = f", at version {version}" if version is not None else ""
    among = f" ({drawn_among_text(found.drawn_among)})" if found.drawn_among else ""
    st.caption(
        feedback.as_text(
            f"{plural(len(found.per_query), 'sampled row')}{among}, each searched without "
            f"itself{at}; settings: {settings}"
        )
    )
    render_metric_note(
        recall_metric(found), bypass=bool(found.query_params.get("bypass_vector_index"))
    )
    c1, c2 = st.columns(2)
    c1.plotly_chart(recall_histogram(found.per_query, found.k), key=state.Search.RECALL_HIST)
    c2.plotly_chart(latency_figure(found.ann_ms, found.exact_ms), key=state.Search.RECALL_LATENCY)
