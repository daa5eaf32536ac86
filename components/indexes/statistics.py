"""The Statistics tab of the Indexes page: coverage, size and segments charts, and coverage
across versions.

The figures are ``backend.services.charts`` (plain functions, also what a notebook draws):
:func:`render_index_charts` lays them out.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.branch_view import MAIN
from backend.services.charts import (
    coverage_figure,
    history_figure,
    segments_figure,
    size_figure,
)
from components import feedback, state
from components.indexes.reads import coverage_history


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


def render_statistics(
    overview: pd.DataFrame, table_id: tuple[str, ...], branch: str = MAIN
) -> None:
    """The Statistics tab: coverage, size and segments charts, and coverage across versions
    (of ``branch``)."""
    history = None
    if not overview.empty:
        depth = st.number_input(
            "Versions in the coverage history",
            min_value=1,
            max_value=200,
            value=30,
            step=5,
            key=state.Indexes.HISTORY_MAX,
        )
        history = feedback.run(
            coverage_history,
            table_id,
            int(depth),
            overview.attrs.get("version"),  # the version the index table shows
            branch,
            action="Reading the coverage history",
        )
    render_index_charts(overview, history, key_prefix=state.Indexes.CHARTS)
