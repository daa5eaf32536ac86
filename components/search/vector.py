"""The vector search panel: the query vector (a row, pasted numbers, a text embedded), the
settings, the rows with their distances and latencies, Copy as Python and the link."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from backend.rules import query_rules
from backend.services.search.embedding import embed_text
from backend.services.search.query import DISTANCE, SearchResult, describe_latencies
from backend.services.search.table import SearchTable
from backend.services.search.vector import parse_vector, row_vector, vector_search
from components import feedback, state
from components.search.history import at_version, record_run, render_history
from components.search.settings import (
    clean,
    render_column_and_k,
    render_kept_number,
    render_metric_note,
    render_query_settings,
    render_search_button,
)
from components.search.share_url import render_setting_snippets

SOURCE_ROW = "A row, by id"
SOURCE_NUMBERS = "Pasted numbers"
SOURCE_TEXT = "Text, embedded"


def _query_vector(
    ns: Any, info: SearchTable, column: str, source: str, value: Any, version: int | None
) -> list[float]:
    if source == SOURCE_ROW:
        vector, _row = row_vector(
            ns, info.table_id, column, filter=f"{info.id_column} = {int(value)}", version=version
        )
        return vector
    if source == SOURCE_TEXT:
        return embed_text(info.properties, str(value or ""))
    dim = info.column(column).dim if info.column(column) is not None else None  # type: ignore[union-attr]
    return parse_vector(str(value or ""), dim)


def render_vector_search(ns: Any, info: SearchTable, version: int | None) -> None:
    """The vector search form and its result: rows with distances, p50/p95 latency."""
    if not info.vector_columns:
        st.info("This table has no vector column.", icon=":material/info:")
        return
    sources = [SOURCE_ROW, SOURCE_NUMBERS] + ([SOURCE_TEXT] if info.embedding else [])
    if state.get(state.Search.VEC_SOURCE) not in sources:
        state.put(state.Search.VEC_SOURCE, sources[-1])
    source = st.segmented_control(
        "Query vector", sources, default=None, key=state.Search.VEC_SOURCE,
        persist_state=state.KEEP_WHILE_ON_PAGE,
        help=None if info.embedding else "Text queries need the table to name its embedding "
        "(property embedding.function).",
    ) or sources[-1]  # fmt: skip
    problems: list[str] = []
    with st.form(state.Search.VEC_FORM):
        column, k = render_column_and_k(info, panel="vec", problems=problems)
        if source == SOURCE_ROW:
            value: Any = render_kept_number(
                f"Row id ({info.id_column})",
                name="Row id",
                key=state.Search.VEC_ROW,
                default="0",
                bounds=query_rules.RANGES["row"],
                problems=problems,
            )
        elif source == SOURCE_NUMBERS:
            value = st.text_area(
                "Numbers",
                key=state.Search.VEC_NUMBERS,
                persist_state=state.KEEP_WHILE_ON_PAGE,
                height=68,
                placeholder="0.1, -0.2, 0.05, …",
            )
        else:
            value = st.text_input(
                "Text",
                key=state.Search.VEC_TEXT,
                persist_state=state.KEEP_WHILE_ON_PAGE,
                placeholder="e.g. parse command line arguments",
                help=f"Embedded with the table's own {info.embedding}",
            )
        params = render_query_settings(info, column, panel="vec", problems=problems)
        c1, c2, c3 = st.columns([3, 1, 1], vertical_alignment="top")
        where = c1.text_input(
            "Filter (SQL)", key=state.Search.VEC_FILTER, persist_state=state.KEEP_WHILE_ON_PAGE
        )
        prefilter = c2.checkbox(
            "Prefilter", key=state.Search.VEC_PREFILTER, persist_state=state.KEEP_WHILE_ON_PAGE
        )
        repeats = render_kept_number(
            "Repeats",
            key=state.Search.VEC_REPEATS,
            default="5",
            bounds=query_rules.RANGES["repeats"],
            problems=problems,
            where=c3,
        )
        submitted = render_search_button()
    if problems:  # refused as typed (said under the field): nothing runs, the last result stays
        last = state.result(info.table_id, "vector")
        if last:
            st.caption("The result of the last search run (the form above has not run):")
            render_vector_result(info.table_id, last, branch=info.branch)
        render_history(info.table_id, "vector")
        return
    repeats = int(repeats or 1)
    # the settings this run's result must have been made with (else it is not shown)
    settings = (
        version, source, str(value), column, k, tuple(sorted(clean(params).items())),
        where.strip(), bool(prefilter), repeats,
    )  # fmt: skip
    if submitted:
        extra = {"filter": where.strip() or None, "prefilter": True if prefilter else None}

        def go_search() -> SearchResult:
            vector = _query_vector(ns, info, column, source, value, version)
            return vector_search(
                ns, info.table_id, vector, column=column, k=k, repeats=repeats,
                version=version, **clean(params), **extra,
            )  # fmt: skip

        record_run(info.table_id, "vector", VECTOR_KEYS, vector_summary(
            source, value, column, k, clean(params), where.strip(), bool(prefilter), version
        ))  # fmt: skip
        found = feedback.run(go_search, action="Vector search")
        if found is None:  # the error stands alone: no older rows under it
            state.clear_result(info.table_id, "vector")
        else:
            text = str(value) if source == SOURCE_TEXT else None  # what the link re-embeds
            state.set_result(
                info.table_id, "vector", (found, column, k, clean(params), text), settings
            )
    last = state.result(info.table_id, "vector", settings)
    if last:
        render_vector_result(info.table_id, last, branch=info.branch)
    render_history(info.table_id, "vector")


def render_vector_result(
    table_id: Sequence[str], last: tuple[Any, ...], *, branch: str | None = None
) -> None:
    """A kept vector search result: rows, latencies, Copy as Python and the link (a query
    by text reproduces the text, embedded; on ``branch``: the snippets and link name it)."""
    found, column, k, params, text = last
    render_search_result(found, score=DISTANCE, key_prefix=state.Search.VEC_RESULT)
    render_setting_snippets(table_id, column, k, params, text=text, branch=branch)


def render_search_result(found: SearchResult, *, score: str, key_prefix: str) -> None:
    c1, c2, c3 = st.columns(3)
    c1.metric("Rows", len(found.rows))
    c2.metric("p50 latency", f"{found.p50_ms:.1f} ms")
    c3.metric("p95 latency", f"{found.p95_ms:.1f} ms")
    st.caption(describe_latencies(found.latencies_ms))
    render_metric_note(found.metric, bypass=bool(found.request.bypass_vector_index))
    rows = found.rows
    if score in rows.columns:
        rows = rows[[score, *[c for c in rows.columns if c != score]]]
    st.dataframe(rows, hide_index=True, key=f"{key_prefix}.grid")


_VECTOR_FIELDS = (
    "column", "k", "distance_type", "nprobes", "minimum_nprobes", "maximum_nprobes",
    "refine_factor", "ef", "fast_search", "bypass_vector_index",
)  # fmt: skip
VECTOR_KEYS = (
    state.Search.VEC_SOURCE, state.Search.VEC_ROW, state.Search.VEC_NUMBERS, state.Search.VEC_TEXT,
    *(state.search_key("vec", name) for name in _VECTOR_FIELDS),
    state.Search.VEC_FILTER, state.Search.VEC_PREFILTER, state.Search.VEC_REPEATS,
)  # fmt: skip


def vector_summary(
    source: str, value: Any, column: str, k: int, params: Mapping[str, Any], where: str,
    prefilter: bool, version: int | None,
) -> str:  # fmt: skip
    """One line naming a vector search's settings."""
    shown = str(value)
    shown = shown if len(shown) <= 40 else shown[:39] + "…"
    what = f"row {shown}" if source == SOURCE_ROW else repr(shown)
    parts = [f"{what} on {column}", f"k={k}"]
    parts += [f"{name}={v}" for name, v in params.items() if name != "distance_type"]
    if params.get("distance_type"):
        parts.append(f"distance {params['distance_type']}")
    if where:
        parts.append(("prefilter " if prefilter else "filter ") + where)
    return " · ".join(parts) + at_version(version)
