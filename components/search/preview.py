"""The data preview panel: rows at a version, a column picker, an SQL filter, paging."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import streamlit as st

from backend.branch_view import MAIN, on_branch
from backend.rules.columns import ColumnInfo
from backend.services.search import preview as search_preview
from backend.services.search.preview import Preview
from backend.services.search.table import SearchTable
from backend.text import plural
from components import feedback, state
from components.cache import cached, table_scope


@cached(
    lambda table_id, version, columns, filter, offset, limit, branch=MAIN: table_scope(table_id),
    ttl=30,
)
def preview(
    ns: Any,
    table_id: tuple[str, ...],
    version: int | None,
    columns: tuple[str, ...],
    filter: str,
    offset: int,
    limit: int,
    branch: str = MAIN,
) -> Preview:
    return search_preview.preview(
        on_branch(ns, branch), table_id, version=version, columns=columns, filter=filter,
        offset=offset, limit=limit,
    )  # fmt: skip


_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# an example condition per kind of column, on the column named
_EXAMPLES = {
    "integer": "{} > 10",
    "float": "{} > 0.5",
    "string": "{} LIKE 'a%'",
    "boolean": "{} = true",
}


def filter_example(columns: Sequence[ColumnInfo]) -> str:
    """The filter box's placeholder: a condition on one of the table's own columns (the first
    that is a number, a string or a boolean with a plain name), or a general hint."""
    for column in columns:
        example = _EXAMPLES.get(column.kind)
        if example and _PLAIN_NAME.fullmatch(column.name):
            return "e.g. " + example.format(column.name)
    return "a condition on the columns, in SQL"


def render_preview(info: SearchTable, version: int | None, *, key_prefix: str) -> None:
    """Rows at a version: a column picker, an SQL filter, paging, the matching row count."""
    names = [c.name for c in info.columns]
    c1, c2, c3 = st.columns([3, 3, 1])
    columns = c1.multiselect("Columns", names, default=names, key=f"{key_prefix}.columns")
    filter_text = c2.text_input(
        "Filter (SQL)", key=f"{key_prefix}.filter", placeholder=filter_example(info.columns)
    )
    size = c3.selectbox("Rows per page", (25, 50, 100, 250), index=1, key=f"{key_prefix}.size")
    branch = info.branch or MAIN
    page_key = f"{key_prefix}.page.{info.table_id}.{branch}.{version}.{filter_text}"
    page = int(state.get(page_key, 1))
    result = feedback.run(
        preview,
        info.table_id,
        version,
        tuple(columns),
        filter_text.strip(),
        (page - 1) * size,
        size,
        branch,
        action="Reading rows",
    )
    if result is None:
        return
    total = result.total or 0
    pages = max(1, -(-total // size))
    first = result.offset + 1 if len(result.rows) else 0
    st.caption(
        f"{plural(total, 'row')} match"
        + (f" · rows {first}–{result.offset + len(result.rows)}" if total else "")
        + (f" · version {version}" if version else " · latest version")
    )
    st.dataframe(result.rows, hide_index=True, key=f"{key_prefix}.grid")
    if pages > 1:
        c1, c2, c3 = st.columns([1, 2, 1], vertical_alignment="center")
        # callbacks: the page number changes before the rows are read
        c1.button(
            "Previous", key=f"{key_prefix}.prev", disabled=page <= 1,
            on_click=state.put, args=(page_key, page - 1),
        )  # fmt: skip
        c2.caption(f"Page {page} of {pages}")
        c3.button(
            "Next", key=f"{key_prefix}.next", disabled=page >= pages,
            on_click=state.put, args=(page_key, page + 1),
        )  # fmt: skip
