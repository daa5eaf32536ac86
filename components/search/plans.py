"""The query plan panel: explain or analyze the last search or a filtered scan; the plan
drawn readably, the raw text one click away."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from backend.rules import query_rules
from backend.services.charts import plan_figure
from backend.services.search import plans as query_plans
from backend.services.search.query import query_request
from backend.services.search.table import SearchTable
from backend.text import human_bytes
from components import feedback, state
from components.search.settings import render_metric_note

PLAN_VECTOR = "The last vector search"
PLAN_FTS = "The last full-text search"
PLAN_SCAN = "A filtered scan"


def render_plan(ns: Any, info: SearchTable, version: int | None) -> None:
    """Explain or analyze a query; the plan drawn readably, the raw text one click away."""
    choices = [PLAN_SCAN]
    if state.result(info.table_id, "fts"):
        choices.insert(0, PLAN_FTS)
    if state.result(info.table_id, "vector"):
        choices.insert(0, PLAN_VECTOR)
    c1, c2 = st.columns([2, 3])
    which = c1.radio("Plan of", choices, key=state.Search.PLAN_WHICH)
    where = c2.text_input(
        "Filter of the scan (SQL)", key=state.Search.PLAN_FILTER, disabled=which != PLAN_SCAN
    )
    c1, c2, _ = st.columns([1, 1, 4])
    explain = c1.button("Explain", key=state.Search.PLAN_EXPLAIN, icon=":material/account_tree:")
    analyze = c2.button("Analyze", key=state.Search.PLAN_ANALYZE, icon=":material/speed:")
    if explain or analyze:
        metric = None
        if which == PLAN_VECTOR:
            found = state.result(info.table_id, "vector")[0]
            request, metric = found.request, found.metric
        elif which == PLAN_FTS:
            request = state.result(info.table_id, "fts")[0].request
        else:
            request = feedback.run(
                query_request, info.table_id, k=100, version=version,
                filter=where.strip() or None, action="Building the query",
            )  # fmt: skip
        if request is not None:
            run = query_plans.analyze if analyze else query_plans.explain
            text = feedback.run(run, ns, request, action="Analyze" if analyze else "Explain")
            if text is not None:
                bypass = bool(request.bypass_vector_index)
                state.set_result(
                    info.table_id, "plan", (text, bool(analyze), which, metric, bypass)
                )
    last = state.result(info.table_id, "plan")
    if last:
        render_plan_text(*last)


def render_plan_text(
    text: str,
    analyzed: bool,
    which: str,
    metric: query_rules.QueryMetric | None = None,
    bypass: bool = False,
) -> None:
    nodes = query_plans.parse_plan(text)
    summary = query_plans.plan_summary(nodes)
    c1, c2, c3, c4 = st.columns(4)
    if summary["index_used"]:
        c1.metric("Index used", "yes")
        c1.caption(feedback.as_text(", ".join(summary["index_nodes"])))
    else:
        c1.metric("Index used", "no")
        c1.caption("brute force" if summary["brute_force"] else "a scan")
    render_metric_note(metric, bypass=bypass)
    if analyzed:
        rows, read = summary["rows_scanned"], summary["bytes_read"]
        c2.metric("Rows scanned", "—" if rows is None else f"{rows:,}")
        c3.metric("Bytes read", "—" if read is None else human_bytes(read))
        total = summary["elapsed_ms"]
        c4.metric("Total time", "—" if total is None else f"{total:.2f} ms")
    else:
        c2.caption("Explain shows the plan only: Analyze runs it and measures every step.")
    if which == PLAN_FTS and not any(
        n.name.startswith(("MatchQuery", "PhraseQuery", "FlatMatch", "BooleanQuery")) for n in nodes
    ):
        feedback.show(
            "warning",
            "This plan has no full-text step: the server planned the query without its "
            "full-text part (pylance's DirectoryNamespace does this), so it does not show "
            "how the search runs.",
        )
    if analyzed:
        st.plotly_chart(plan_figure(nodes), key=state.Search.PLAN_CHART)
    st.dataframe(
        plan_table(query_plans.plan_frame(nodes)),
        hide_index=True,
        key=state.Search.PLAN_GRID,
        column_config={
            "step": st.column_config.TextColumn("Step", width=200),
            "ms": st.column_config.NumberColumn("Time (ms)", width=90),
            "rows": st.column_config.NumberColumn("Rows out", width=80),
            "bytes_read": st.column_config.NumberColumn("Bytes read", width=90),
            "detail": st.column_config.TextColumn("Detail"),
        },
    )
    with st.expander("Raw plan"):
        st.code(text, language=None)


PLAN_FORMATS = {"ms": "{:.3f}", "rows": "{:.0f}", "bytes_read": "{:.0f}"}


def plan_table(frame: pd.DataFrame) -> Any:
    """The plan's rows for the grid: a step without a figure (no time, rows or bytes
    reported) shows an empty cell, not "None"; the numbers stay numbers (sortable)."""
    numbers = {c: pd.to_numeric(frame[c], errors="coerce") for c in PLAN_FORMATS}
    frame = frame.assign(**numbers, detail=frame["detail"].fillna(""))
    return frame.style.format(PLAN_FORMATS, na_rep="")
