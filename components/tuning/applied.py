"""The Index parameters panel: the build parameters asked for against those lance applied."""

from __future__ import annotations

from typing import Any

import streamlit as st

from backend import capabilities
from backend.services.search.table import SearchTable
from backend.services.tuning.applied import requested_vs_applied
from components import feedback, state
from components.common import dataframe


def render_requested_vs_applied(ns: Any, info: SearchTable) -> None:
    frame = feedback.run(
        requested_vs_applied, ns, info.table_id, action="Reading the index details"
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
        words=True,
        column_config={"differs": st.column_config.CheckboxColumn("Differs")},
    )
