"""A selectable grid of names, one page at a time (the namespaces and tables lists)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import pandas as pd

from backend.spec.paging import Listing
from components import state
from components.common import (
    dataframe,
)
from components.pager import pager_key, render_listing_pager, render_pager


class Pick(NamedTuple):
    """A click in a :func:`render_name_list`: the name picked, or ``None`` when deselected."""

    name: str | None


def render_name_list(
    names: Sequence[str] | Listing,
    *,
    key_prefix: str,
    column: str = "name",
    selected: str | None = None,
    reset_on: tuple[Any, ...] = (),
    frame: Callable[[list[str]], pd.DataFrame] | None = None,
    column_config: dict[str, Any] | None = None,
    sizes: Sequence[str] = (),
) -> Pick | None:
    """One page of ``names`` as a single selectable grid, with the pager. Returns a
    :class:`Pick` when the user selected (or deselected) a row. The grid is made anew (fresh
    highlight) when ``reset_on``, the page, or ``selected`` changed by anything but a click.
    ``frame``: the grid's rows for the names of the page (one row per name, in order; the
    default is the one ``column`` of names), shown with ``column_config`` (``sizes``: its
    columns of byte counts, ``components.common.dataframe``). ``names`` may be
    an open-ended :class:`~backend.spec.paging.Listing`: only the pages shown are read."""
    if isinstance(names, Listing):
        if not names.known:
            return None
        page = render_listing_pager(
            names, key_prefix=key_prefix, reset_on=reset_on, noun=column + "s"
        )
    elif not names:
        return None
    else:
        page = render_pager(names, key_prefix=key_prefix, reset_on=reset_on, noun=column + "s")
    items = list(page.items)
    memo_key = f"{key_prefix}.memo"
    memo = state.get(memo_key) or {}
    epoch = memo.get("epoch", 0) + (1 if memo.get("selected", "") != selected else 0)
    key = pager_key(f"{key_prefix}.grid", *reset_on, page.number, epoch)
    on_page = selected if selected in items else None
    shown = memo.get("shown") if memo.get("key") == key else on_page
    default = {"selection": {"rows": [items.index(on_page)], "columns": []}} if on_page else None
    event = dataframe(
        frame(items) if frame is not None else pd.DataFrame({column: items}),
        key=key,
        column_config=column_config,
        sizes=sizes,
        on_select="rerun",
        selection_mode="single-row",
        selection_default=default,
        hide_index=True,
        width="stretch",
    )
    rows = list(event.selection.rows) if event is not None else []
    picked = items[rows[0]] if rows and 0 <= rows[0] < len(items) else None
    changed = picked != shown
    state.put(
        memo_key,
        {"epoch": epoch, "key": key, "shown": picked, "selected": picked if changed else selected},
    )
    return Pick(picked) if changed else None
