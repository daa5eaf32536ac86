"""The one pager: a page of a longer list, its pagination widget, and where it sits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from backend.spec.paging import PAGE_SIZE, Listing, Page, listing_page, page_count, paginate
from components import state
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


def render_listing_pager(
    listing: Listing,
    *,
    key_prefix: str,
    reset_on: tuple[Any, ...] = (),
    page_size: int = PAGE_SIZE,
    noun: str = "items",
    hint: str = "",
) -> Page:
    """One page of an open-ended ``listing`` (``backend.spec.paging.Listing``), read only as far
    as that page: a pagination widget over the pages known (one more while the listing goes
    on, so that the next is a click away; it resets when ``reset_on`` changes), and a caption
    ``51–100 of 300 <noun>.``, or ``of the first 1,000 <noun> listed; more follow.`` while more
    may follow, then ``hint`` (a sentence on how to use the list) in the same caption."""
    key = pager_key(key_prefix, "listing", *reset_on)
    page = listing_page(listing, state.get(key) or 1, page_size)
    if page.count > 1:
        number = st.pagination(page.count, key=key, max_visible_pages=7)
        if number != page.number:
            page = listing_page(listing, number, page_size)
    said = ""
    if page.complete and page.count > 1:
        said = f"{page.first_row:,}–{page.last_row:,} of {page.total:,} {noun}."
    elif not page.complete:
        said = (
            f"{page.first_row:,}–{page.last_row:,} of the first {page.total:,} {noun} listed; "
            "more follow."
        )
    if said or hint:
        st.caption(" ".join(part for part in (said, hint) if part))
    return page
