"""The one pager: a page of a longer list, its pagination widget, and where it sits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from backend.paging import PAGE_SIZE, Page, page_count, paginate
from components.state import pager_key


def render_pager(
    items: Sequence[Any],
    *,
    key_prefix: str,
    reset_on: tuple[Any, ...] = (),
    page_size: int = PAGE_SIZE,
    noun: str = "items",
) -> Page:
    """One page of ``items``: a pagination widget when there are several pages (it resets when
    ``reset_on`` or the number of pages changes), and a caption ``51–100 of 300 <noun>``."""
    count = page_count(len(items), page_size)
    number = 1
    if count > 1:
        number = st.pagination(
            count, key=pager_key(key_prefix, count, *reset_on), max_visible_pages=7
        )
    page = paginate(items, number, page_size)
    if count > 1:
        st.caption(f"{page.first_row:,}–{page.last_row:,} of {page.total:,} {noun}")
    return page


__all__ = ["pager_key", "render_pager"]
