"""The Build A/B panel: vector index builds compared on a scratch copy of a sample, in the
background (a job the page submits: ``components.writes.perform``)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from backend.rules import index_rules
from backend.services.charts import ab_figure
from backend.services.search.table import SearchTable
from backend.services.tuning.builds import SCRATCH_NOTE
from backend.text import plural
from components import feedback, polling, state
from components.common import dataframe
from components.search.settings import DISTANCES, render_column_and_k
from components.writes import JobRequest, table_jobs

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


def render_build_ab(ns: Any, info: SearchTable) -> JobRequest | None:
    """Compare vector index builds on a scratch copy of a sample, in the background: the job
    "Compare builds" asks for (the page submits it: ``components.writes.perform``), and the
    progress and outcome of the table's latest comparison."""
    if not info.vector_columns:
        st.info("This table has no vector column.", icon=":material/info:")
        return None
    st.caption(SCRATCH_NOTE)
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
            polling.rerun_page()
        if done and job.state == "succeeded":
            render_ab_result(pd.DataFrame(job.result))

    polling.fragment(panel, every=1.0 if not latest[0].done else None)


def render_ab_result(frame: pd.DataFrame) -> None:
    dataframe(
        frame,
        sizes=["size_bytes"],
        hide_index=True,
        key=state.Search.AB_GRID,
        column_config={
            "config": st.column_config.TextColumn("Build", width="large"),
            "recall": st.column_config.ProgressColumn(
                "Recall", min_value=0.0, max_value=1.0, width=110
            ),
            "p50_ms": st.column_config.NumberColumn("p50 (ms)", format="%.2f", width=75),
            "size_bytes": st.column_config.NumberColumn("Index size", width=85),
            "build_s": st.column_config.NumberColumn("Build (s)", format="%.2f", width=75),
            "rows": st.column_config.NumberColumn("Rows", format="localized", width=70),
            "metric": st.column_config.TextColumn("Distance", width=75),
            "brute_force": st.column_config.CheckboxColumn(
                "Brute force", width=85, help="The query ran without the index"
            ),
        },
    )
    st.plotly_chart(ab_figure(frame), key=state.Search.AB_CHART)
