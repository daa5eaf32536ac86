"""Data preview: one page of a table's rows at a version, with the number matching a filter."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from lance_namespace import LanceNamespace, QueryTableRequest
from lance_namespace.errors import InvalidInputError

from backend.services.search.query import abbreviate, count_rows, query_request, run_query

MAX_PREVIEW_ROWS = 1000


@dataclass
class Preview:
    rows: pd.DataFrame  # abbreviated for display
    total: int | None  # rows matching the filter at that version
    offset: int
    request: QueryTableRequest


def preview(
    ns: LanceNamespace,
    table_id: Sequence[str],
    *,
    version: int | None = None,
    columns: Sequence[str] | None = None,
    filter: str | None = None,
    offset: int = 0,
    limit: int = 50,
) -> Preview:
    """One page of rows (``offset``, ``limit`` at most :data:`MAX_PREVIEW_ROWS`) at
    ``version``, with the number of rows matching ``filter``."""
    if not 1 <= int(limit) <= MAX_PREVIEW_ROWS:
        raise InvalidInputError(f"show 1 to {MAX_PREVIEW_ROWS} rows at a time")
    request = query_request(
        table_id,
        k=int(limit),
        offset=int(offset) or None,
        version=version,
        columns=list(columns) if columns else None,
        filter=(filter or "").strip() or None,
    )
    rows = run_query(ns, request)
    total = count_rows(ns, table_id, version=version, filter=request.filter)
    return Preview(abbreviate(rows), total, int(offset), request)
