"""The "Manage versions" tabs (compare, tags, clean up, delete, edit rows) in an expander."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from components import state
from components.common import (
    lazy_expander,
)

MANAGE_TABS = (
    "Compare",
    "Tags",
    "Clean up by policy",
    "Delete by range",
    "Delete rows",
    "Update rows",
    "Upsert from a file",
)


TAGS_TAB = MANAGE_TABS[1]


MANAGE_LABEL = "Manage versions: compare, tags, clean up, delete, edit rows"


def manage_tabs() -> Sequence[Any] | None:
    """The "Manage versions" tabs (compare, tags, cleanup, delete by range, delete rows by a
    filter) in an expander:
    ``None`` while it is closed. Only the open tab's content is to be built (``tab.open``);
    the expander and the open tab are kept per session. Closed, they cost a page load
    nothing but the expander."""
    box = lazy_expander(MANAGE_LABEL, key=state.Versions.MANAGE_OPEN, icon=":material/tune:")
    if box is None:
        return None
    with box:
        return st.tabs(MANAGE_TABS, key=state.Versions.MANAGE_TAB, on_change="rerun")
