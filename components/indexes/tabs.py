"""The Indexes page's tabs: create, selected index, statistics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from components import state

TAB_CREATE = "Create an index"


TAB_SELECTED = "Selected index"


TAB_STATS = "Statistics"


def open_tabs(names: Sequence[str]) -> tuple[Any, Any, Any]:
    """The page's stateful tabs (a rerun keeps the open one; only the open one is computed);
    a deep link ``?index=`` opens "Selected index" on the session's first run."""
    if not state.has(state.Indexes.TABS) and st.query_params.get(state.QP_INDEX) in names:
        state.put(state.Indexes.TABS, TAB_SELECTED)
    create_tab, index_tab, stats_tab = st.tabs(
        [TAB_CREATE, TAB_SELECTED, TAB_STATS],
        default=TAB_CREATE,
        key=state.Indexes.TABS,
        on_change="rerun",
    )
    return create_tab, index_tab, stats_tab
