"""Full-text search: match and phrase queries with BM25 scores, and the words a query
matches (by the index's own tokenizer)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from lance_namespace import LanceNamespace, QueryTableRequest
from lance_namespace.errors import InvalidInputError

from backend.services.index_overview import tokenize_preview
from backend.services.search.query import SearchResult, query_request, timed


def fts_request(
    table_id: Sequence[str],
    text: str,
    *,
    columns: Sequence[str],
    k: int = 10,
    phrase: bool = False,
    **params: Any,
) -> QueryTableRequest:
    """A full-text QueryTable: a match over ``columns``, or a phrase (one column)."""
    fts: dict[str, Any]
    if phrase:
        if len(columns) != 1:
            raise InvalidInputError("a phrase query searches one column")
        fts = {"structured_query": {"query": {"phrase": {"column": columns[0], "terms": text}}}}
    else:
        fts = {"string_query": {"query": text, "columns": list(columns)}}
    return query_request(table_id, k=int(k), full_text_query=fts, **params)


def fts_search(
    ns: LanceNamespace,
    table_id: Sequence[str],
    text: str,
    *,
    columns: Sequence[str],
    k: int = 10,
    phrase: bool = False,
    repeats: int = 1,
    **params: Any,
) -> SearchResult:
    """Rows matching ``text`` with their BM25 ``_score``, best first."""
    return timed(
        ns, fts_request(table_id, text, columns=columns, k=k, phrase=phrase, **params), repeats
    )


def highlight(text: str, query: str, options: dict[str, Any]) -> list[tuple[str, bool]]:
    """``text`` cut into ``(piece, matched)`` pieces: a word is matched when the FTS
    tokenizer (``options``: the index's own configuration) turns it into a token the query
    also has, so stemming and case folding count as they do in the index."""
    wanted = {t.text for t in tokenize_preview(query, options)}
    pieces: list[tuple[str, bool]] = []
    cache: dict[str, bool] = {}
    for part in re.split(r"(\w+)", text or ""):
        if not part:
            continue
        if not re.fullmatch(r"\w+", part):
            pieces.append((part, False))
            continue
        if part not in cache:
            cache[part] = any(t.text in wanted for t in tokenize_preview(part, options))
        pieces.append((part, cache[part]))
    return pieces
