"""Querying a table through QueryTable, on any backend: the request (checked by the query
rule), its Arrow answer, rows in pages, row counts, rows abbreviated for display, and timed runs
(latency percentiles).

Everything builds the spec's ``QueryTableRequest`` (checked by ``backend.rules.request_rules``
like any request) and reads the Arrow answer; the local backend and a REST server answer the
same requests, so the page and the tuning helpers work on both.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from lance_namespace import CountTableRowsRequest, LanceNamespace, QueryTableRequest
from lance_namespace.errors import InternalError, InvalidInputError

from backend.arrow.ipc import ipc_file_to_table
from backend.errors import guarded
from backend.rules import query_rules
from backend.rules.query_rules import QueryMetric
from backend.spec.fields import whole_number

ROW_ID = "_rowid"
DISTANCE = "_distance"
SCORE = "_score"

# QueryTableRequest fields that tune a vector search (the page's settings, the sweep's grid).
VECTOR_QUERY_PARAMS: tuple[str, ...] = (
    "nprobes",
    "minimum_nprobes",
    "maximum_nprobes",
    "refine_factor",
    "ef",
    "fast_search",
    "bypass_vector_index",
    "prefilter",
)


def _table(answer: Any) -> pa.Table:
    data = getattr(answer, "data", answer)
    return ipc_file_to_table(bytes(data or b""))


@guarded("query_table")
def query_request(table_id: Sequence[str], **fields: Any) -> QueryTableRequest:
    """A QueryTableRequest; ``None`` values are left out, ``columns`` may be a list of names,
    ``vector`` a list of floats (or ``None`` for a plain scan)."""
    fields = {k: v for k, v in fields.items() if v is not None}
    vector = fields.pop("vector", None)
    fields["vector"] = {} if vector is None else {"single_vector": [float(x) for x in vector]}
    columns = fields.pop("columns", None)
    if columns is not None:
        fields["columns"] = {"column_names": list(columns)}
    request = QueryTableRequest.model_validate({"id": list(table_id), **fields})
    problems = query_rules.query_problems(request)
    if problems:
        raise InvalidInputError(problems[0])
    return request


def run_query(ns: LanceNamespace, request: QueryTableRequest) -> pa.Table:
    """QueryTable, its Arrow answer as a table (the local backend hands the table over
    without encoding it)."""
    direct = getattr(ns, "query_table_arrow", None)
    if direct is not None:
        return direct(request)
    return _table(ns.query_table(request))


def iter_rows(
    ns: LanceNamespace,
    table_id: Sequence[str],
    *,
    limit: int | None = None,
    columns: Sequence[str] | None = None,
    version: int | None = None,
    filter: str | None = None,
    page_size: int = query_rules.MAX_K,
    branch: str | None = None,
) -> Iterator[pa.Table]:
    """Rows in scan order as pages of at most ``page_size`` (``query_rules.MAX_K`` at most),
    up to ``limit`` rows (``None``: to the end), of ``branch`` (``None``: main). The first
    page is always yielded, empty or not, so the caller learns the schema."""
    page_size = max(1, min(int(page_size), query_rules.MAX_K))
    offset = 0
    while limit is None or offset < limit:
        size = page_size if limit is None else min(page_size, limit - offset)
        page = run_query(
            ns,
            query_request(
                table_id,
                k=size,
                offset=offset or None,
                columns=columns,
                version=version,
                filter=filter or None,
                branch=branch or None,
            ),
        )
        yield page
        offset += page.num_rows
        if page.num_rows < size:
            break


def read_rows(
    ns: LanceNamespace,
    table_id: Sequence[str],
    *,
    limit: int,
    columns: Sequence[str] | None = None,
    version: int | None = None,
) -> pa.Table:
    """Up to ``limit`` rows in scan order, read in pages of at most ``query_rules.MAX_K``
    (:func:`iter_rows`)."""
    pages = list(iter_rows(ns, table_id, limit=limit, columns=columns, version=version))
    return pa.concat_tables(pages) if pages else pa.table({})


def count_rows(
    ns: LanceNamespace,
    table_id: Sequence[str],
    *,
    version: int | None,
    filter: str | None,
    branch: str | None = None,
) -> int:
    """The rows of the table (at ``version``, on ``branch``) matching ``filter``: CountTableRows'
    count. An answer without a count is an ``InternalError``, never 0: a delete, a staged
    change or a recall sample would otherwise report no rows where the table has some."""
    req = CountTableRowsRequest(
        id=list(table_id), version=version, predicate=filter or None, branch=branch or None
    )
    count = whole_number(ns.count_table_rows(req).count)
    if count is None:
        raise InternalError("the server answered CountTableRows without a row count")
    return count


def _short(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    if isinstance(value, (list, tuple, np.ndarray)):
        items = list(value)
        if items and isinstance(items[0], (list, tuple, np.ndarray)):
            return f"[{len(items)} vectors]"
        if len(items) > 4 and all(isinstance(x, (int, float, np.number)) for x in items[:4]):
            head = ", ".join(f"{float(x):.3g}" for x in items[:3])
            return f"[{head}, … {len(items)} dims]"
        return str(items)
    return value


_nullable_integers = {
    pa.int8(): pd.Int8Dtype(),
    pa.int16(): pd.Int16Dtype(),
    pa.int32(): pd.Int32Dtype(),
    pa.int64(): pd.Int64Dtype(),
    pa.uint8(): pd.UInt8Dtype(),
    pa.uint16(): pd.UInt16Dtype(),
    pa.uint32(): pd.UInt32Dtype(),
    pa.uint64(): pd.UInt64Dtype(),
}


def abbreviate(table: pa.Table) -> pd.DataFrame:
    """Rows for display: vectors as ``[0.12, -0.5, 0.3, … 64 dims]``, binary as
    ``<12 bytes>``, everything else as it is. An integer column holding nulls keeps its
    integers (pandas' nullable integers; NumPy's conversion makes them floats, and rounds
    those beyond 2^53: 9007199254740993 shown as 9007199254740992.0)."""
    frame = table.to_pandas()
    for name in frame.columns:
        t = table.schema.field(name).type
        if pa.types.is_integer(t) and table.column(name).null_count:
            frame[name] = table.column(name).to_pandas(types_mapper=_nullable_integers.get)
            continue
        if (
            pa.types.is_list(t)
            or pa.types.is_large_list(t)
            or pa.types.is_fixed_size_list(t)
            or pa.types.is_binary(t)
            or pa.types.is_large_binary(t)
            or pa.types.is_fixed_size_binary(t)
        ):
            frame[name] = [_short(v) for v in frame[name]]
    return frame


@dataclass
class SearchResult:
    rows: pd.DataFrame
    table: pa.Table
    latencies_ms: list[float]
    request: QueryTableRequest
    metric: QueryMetric | None = None  # a vector search's metric, and why it is that one

    @property
    def brute_force_reason(self) -> str | None:
        """Why this vector search ran without its index (``None``: it used it, or it is not
        a vector search)."""
        if self.metric is None:
            return None
        return self.metric.brute_force_reason(bool(self.request.bypass_vector_index))

    @property
    def p50_ms(self) -> float:
        return percentile(self.latencies_ms, 50)

    @property
    def p95_ms(self) -> float:
        return percentile(self.latencies_ms, 95)


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    return float(np.percentile(np.asarray(values, dtype=float), q))


def timed(ns: LanceNamespace, request: QueryTableRequest, repeats: int = 1) -> SearchResult:
    """Run ``request`` ``repeats`` times (1 to 100); the rows of the last run and every
    latency."""
    repeats = max(1, min(int(repeats), query_rules.MAX_REPEATS))
    latencies = []
    table = pa.table({})
    for _ in range(repeats):
        started = time.perf_counter()
        table = run_query(ns, request)
        latencies.append((time.perf_counter() - started) * 1000.0)
    return SearchResult(abbreviate(table), table, latencies, request)


def describe_latencies(values: Sequence[float]) -> str:
    if not values:
        return "no runs"
    if len(values) == 1:
        return f"{values[0]:.1f} ms"
    return (
        f"p50 {percentile(values, 50):.1f} ms · p95 {percentile(values, 95):.1f} ms over "
        f"{len(values)} runs (mean {statistics.fmean(values):.1f} ms)"
    )
