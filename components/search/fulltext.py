"""The full-text search panel: match and phrase queries, BM25 scores, the matched words
highlighted, the query as the index's tokenizer sees it."""

from __future__ import annotations

from typing import Any

import streamlit as st

from backend.rules import query_rules
from backend.services.index_overview import tokenize_preview
from backend.services.search.fulltext import fts_search, highlight
from backend.services.search.query import SCORE
from backend.services.search.table import SearchTable
from components import feedback, state
from components.search.history import at_version, record_run, render_history
from components.search.settings import render_kept_number, render_search_button, seed_default

FTS_KEYS = (
    state.Search.FTS_TEXT,
    state.Search.FTS_MODE,
    state.Search.FTS_COLUMNS,
    state.Search.FTS_K,
)


# A matched word: coloured bold text. Not a ``-background`` directive: Streamlit pads those
# (2px 4px), which shows "Command-line" as "Command - line"; text colour adds no space.
MATCH_MARK = ":orange[**{}**]"


def highlighted(text: str, query: str, options: dict[str, Any], *, width: int = 400) -> str:
    """Markdown of ``text`` (cut around the first match) with the matched words marked; the
    text itself is kept exactly (every character, no space added around a mark)."""
    pieces = highlight(text, query, options)
    first = next((i for i, (_, hit) in enumerate(pieces) if hit), 0)
    start = max(0, first - 20)
    out, size = [], 0
    for piece, hit in pieces[start:]:
        if size > width:
            out.append("…")
            break
        shown = feedback.as_text(piece)
        out.append(MATCH_MARK.format(shown) if hit else shown)
        size += len(piece)
    return ("… " if start else "") + "".join(out)


def render_fts_search(ns: Any, info: SearchTable, version: int | None) -> None:
    """Match or phrase queries with BM25 scores and the matched terms highlighted; the query
    as the index's own tokenizer sees it."""
    if not info.text_columns:
        st.info("This table has no text column.", icon=":material/info:")
        return
    indexed = [c for c in info.text_columns if c in info.fts_indexes]
    if not indexed:
        feedback.show(
            "info",
            "No full-text index on this table yet: create one on the Indexes page (FTS); "
            "without it a query has nothing to search.",
        )
        return
    problems: list[str] = []
    with st.form(state.Search.FTS_FORM):
        c1, c2, c3, c4 = st.columns([4, 1, 2, 1], vertical_alignment="top")
        text = c1.text_input(
            "Search for",
            key=state.Search.FTS_TEXT,
            persist_state=state.KEEP_WHILE_ON_PAGE,
            placeholder="e.g. parse command line",
        )
        mode = c2.radio(
            "Query",
            ("Match", "Phrase"),
            key=state.Search.FTS_MODE,
            persist_state=state.KEEP_WHILE_ON_PAGE,
        )
        if not set(state.get(state.Search.FTS_COLUMNS) or []) <= set(indexed):
            state.drop(state.Search.FTS_COLUMNS)  # an index gone since (a re-applied search)
        seed_default(state.Search.FTS_COLUMNS, indexed[:1])
        columns = c3.multiselect(
            "Columns",
            indexed,
            default=None,
            key=state.Search.FTS_COLUMNS,
            persist_state=state.KEEP_WHILE_ON_PAGE,
        )
        typed_k = render_kept_number(
            "k",
            key=state.Search.FTS_K,
            default="10",
            bounds=query_rules.RANGES["k"],
            problems=problems,
            where=c4,
        )
        submitted = render_search_button()
    if problems or typed_k is None:  # refused as typed (said under the field): nothing
        kept = state.result(info.table_id, "fts")
        render_history(info.table_id, "fts")
        if kept:
            st.caption("The matches of the last search run (the form above has not run):")
            render_fts_matches(info, kept)
        return
    k = typed_k
    settings = (version, text, mode, tuple(columns), int(k))
    if submitted:
        shown = f"{mode.lower()} {text!r} in {', '.join(columns) or '(no column)'} · k={int(k)}"
        record_run(info.table_id, "fts", FTS_KEYS, shown + at_version(version))
        found = feedback.run(
            fts_search, ns, info.table_id, text, columns=columns, k=int(k),
            phrase=mode == "Phrase", version=version, action="Full-text search",
        )  # fmt: skip
        if found is None:  # the error stands alone: no older matches under it
            state.clear_result(info.table_id, "fts")
        else:
            state.set_result(info.table_id, "fts", (found, text, list(columns)), settings)
    last = state.result(info.table_id, "fts", settings)
    render_history(info.table_id, "fts")
    if last:
        render_fts_matches(info, last)


def render_fts_matches(info: SearchTable, last: tuple[Any, ...]) -> None:
    """A kept full-text search result: the query's tokens, the matches highlighted."""
    found, text, columns = last
    options = info.fts_indexes[columns[0]]["options"]
    render_query_tokens(text, options, key_prefix=state.Search.FTS_TOKENS)
    c1, c2 = st.columns(2)
    c1.metric("Matches shown", len(found.rows))
    c2.metric("Latency", f"{found.p50_ms:.1f} ms")
    with st.container(border=True, gap="small"):
        for i, row in found.rows.head(50).iterrows():
            score = row.get(SCORE)
            head = f"`{i + 1}.` :gray-badge[BM25 {score:.2f}]" if score is not None else ""
            for column in columns:
                st.markdown(f"{head} {highlighted(str(row.get(column) or ''), text, options)}")
                head = ""
    with st.expander("All columns"):
        st.dataframe(found.rows, hide_index=True, key=state.Search.FTS_GRID)


def render_query_tokens(text: str, options: dict[str, Any], *, key_prefix: str) -> None:
    """The query's tokens under the index's tokenizer, beside a live tokenizer preview."""
    c1, c2 = st.columns(2)
    with c1:
        st.markdown("**The query, as the index tokenizes it**")
        try:
            tokens = tokenize_preview(text, options)
        except ValueError as err:
            feedback.show("warning", f"The tokenizer refuses this text: {err}")
            tokens = []
        st.markdown(" ".join(f"`{t.text.replace('`', '')}`" for t in tokens) or "*(no tokens)*")
        shown = {k: v for k, v in options.items() if v is not None}
        st.caption(feedback.as_text(", ".join(f"{k}={v}" for k, v in shown.items())))
    with c2:
        st.markdown("**Tokenizer preview**")
        sample = st.text_input(
            "Sample text",
            value="Running runners ran quickly",
            key=f"{key_prefix}.sample",
            persist_state=state.KEEP_WHILE_ON_PAGE,
        )
        try:
            preview_tokens = tokenize_preview(sample, options)
        except ValueError as err:
            feedback.show("warning", f"The tokenizer refuses this text: {err}")
            preview_tokens = []
        st.markdown(
            " ".join(f"`{t.text.replace('`', '')}`" for t in preview_tokens) or "*(no tokens)*"
        )
