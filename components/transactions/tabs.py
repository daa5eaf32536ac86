"""The Transactions page's tabs (``?tab=demo`` opens the guided demo) and the style of its
icon-only buttons.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from components import state

# Icon-only buttons carry a text label for assistive technology (and Playwright's
# get_by_role("button", name=...)); this style hides the label visually, the icon stays.
_ICON_ONLY_KEYS = ("txn-ops-", "txn-alter-action-", "txn-history-")


ICON_ONLY_CSS = (
    "<style>"
    + ",".join(f'[class*="st-key-{k}"] button p' for k in _ICON_ONLY_KEYS)
    + "{position:absolute!important;width:1px!important;height:1px!important;overflow:hidden"
    "!important;clip:rect(0 0 0 0)!important;white-space:nowrap!important;margin:-1px"
    "!important;padding:0!important;border:0!important}</style>"
)


TAB_BUILDER = "Batch commit builder"


TAB_DESCRIBE = "Describe / alter a transaction"


TAB_NAMESPACE = "Namespace transactions"


TAB_GUIDE = "Guided demo"


TABS = (TAB_BUILDER, TAB_DESCRIBE, TAB_NAMESPACE, TAB_GUIDE)


TAB_SLUGS = {"builder": TAB_BUILDER, "describe": TAB_DESCRIBE, "namespace": TAB_NAMESPACE,
             "demo": TAB_GUIDE}  # fmt: skip


def open_tabs() -> Any:
    """The page's tabs (the guided demo is drawn only while open); ``?tab=demo`` opens it (a
    presenter's link)."""
    slug = st.query_params.get(state.QP_TAB)
    if not state.has(state.Txn.TABS) and slug in TAB_SLUGS:
        state.put(state.Txn.TABS, TAB_SLUGS[slug])
    return st.tabs(list(TABS), default=TAB_BUILDER, key=state.Txn.TABS, on_change="rerun")


def render_icon_only_style() -> None:
    st.html(ICON_ONLY_CSS)
