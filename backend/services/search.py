"""Querying a table, on any backend through QueryTable / ExplainTableQueryPlan /
AnalyzeTableQueryPlan: data preview, vector search, full-text search, query plans.

Everything here builds the spec's ``QueryTableRequest`` (checked by ``backend.rules.request_rules``
like any request) and reads the Arrow answer; the local backend and a REST server answer the
same requests, so the page and the tuning helpers work on both.
"""

from __future__ import annotations

import math
import re
import statistics
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from lance_namespace import (
    AnalyzeTableQueryPlanRequest,
    CountTableRowsRequest,
    DescribeTableRequest,
    ExplainTableQueryPlanRequest,
    LanceNamespace,
    QueryTableRequest,
)
from lance_namespace.errors import InvalidInputError

from backend.arrow.ipc import ipc_file_to_table
from backend.demo import embedding
from backend.rules import query_rules
from backend.rules.columns import ColumnInfo, columns_from_schema
from backend.rules.index_rules import (
    VECTOR_INDEX_TYPES,
    fts_options,
    index_category,
    normalize_index_type,
)
from backend.rules.query_rules import QueryMetric

from ..branch_view import branch_of
from ..errors import guarded
from .index_overview import (
    distance_from_details,
    index_details_dict,
    ivf_partitions,
    list_indexes,
    tokenize_preview,
)

ROW_ID = "_rowid"
DISTANCE = "_distance"
SCORE = "_score"
MAX_PREVIEW_ROWS = 1000

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


# -- data preview ---------------------------------------------------------------------------------
@dataclass
class Preview:
    rows: pd.DataFrame  # abbreviated for display
    total: int | None  # rows matching the filter at that version
    offset: int
    request: QueryTableRequest


def count_rows(
    ns: LanceNamespace,
    table_id: Sequence[str],
    *,
    version: int | None,
    filter: str | None,
    branch: str | None = None,
) -> int:
    req = CountTableRowsRequest(
        id=list(table_id), version=version, predicate=filter or None, branch=branch or None
    )
    return int(ns.count_table_rows(req).count or 0)


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


def abbreviate(table: pa.Table) -> pd.DataFrame:
    """Rows for display: vectors as ``[0.12, -0.5, 0.3, … 64 dims]``, binary as
    ``<12 bytes>``, everything else as it is."""
    frame = table.to_pandas()
    for name in frame.columns:
        t = table.schema.field(name).type
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


# -- vectors ----------------------------------------------------------------------------------------
def parse_vector(text: str, dim: int | None) -> list[float]:
    """Pasted numbers (commas, spaces, brackets) as a query vector of ``dim`` floats."""
    numbers = [n for n in re.split(r"[\s,;\[\]()]+", text or "") if n]
    try:
        values = [float(n) for n in numbers]
    except ValueError:
        raise InvalidInputError("the query vector must be numbers separated by commas") from None
    if not values:
        raise InvalidInputError("paste the query vector's numbers")
    if dim is not None and len(values) != dim:
        raise InvalidInputError(f"the column has {dim} dimensions; {len(values)} numbers given")
    if not all(math.isfinite(v) for v in values):
        raise InvalidInputError("the query vector holds a NaN or an infinity")
    return values


def row_vector(
    ns: LanceNamespace,
    table_id: Sequence[str],
    column: str,
    *,
    filter: str | None = None,
    offset: int = 0,
    version: int | None = None,
) -> tuple[list[float], dict[str, Any]]:
    """The ``column`` vector of the first row matching ``filter`` (after ``offset``), with the
    row itself; ``InvalidInputError`` when no row matches."""
    request = query_request(
        table_id,
        k=1,
        offset=offset or None,
        filter=filter or None,
        version=version,
        with_row_id=True,
    )
    table = run_query(ns, request)
    if table.num_rows == 0:
        raise InvalidInputError("no row matches: pick another row")
    row = table.slice(0, 1).to_pylist()[0]
    vector = row.get(column)
    if vector is None:
        raise InvalidInputError(f"the row has no {column} vector")
    return [float(x) for x in vector], row


def embedding_of(properties: dict[str, str] | None) -> str | None:
    """The embedding a table declares in its ``embedding.function`` property, if the console
    can run it here (``backend.demo.embedding``'s feature hashing)."""
    name = (properties or {}).get("embedding.function")
    return name if name in EMBEDDINGS else None


def embed_text(properties: dict[str, str] | None, text: str) -> list[float]:
    """``text`` embedded with the table's own embedding (see :func:`embedding_of`)."""
    name = embedding_of(properties)
    if name is None:
        raise InvalidInputError(
            "this table does not say how its vectors were made (no known embedding.function "
            "property): pick a row or paste a vector"
        )
    return EMBEDDINGS[name](text)


def _feature_hash(text: str) -> list[float]:
    return [float(x) for x in embedding.embed([text])[0]]


EMBEDDINGS = {embedding.EMBEDDING_FUNCTION: _feature_hash}


# -- the metric of a vector query ------------------------------------------------------------------
# Lance picks the vector index of a query itself: ``nearest`` takes no index name (only
# ``use_index``: an index or none), so with several vector indexes on a column the one a
# query uses is the one its plan names.
CANNOT_CHOOSE_INDEX = (
    "lance picks the index of a vector search itself: its query takes no index name, only "
    "whether to use an index at all (use_index / bypass), so another index on the column "
    "cannot be chosen; drop the one in use to search with another"
)
_PLAN_INDEX = re.compile(r"ANNSubIndex: name=([^,\s]+)")


def plan_vector_index(plan: str) -> str | None:
    """The vector index a query plan searches (its ``ANNSubIndex`` node), else ``None``."""
    found = _PLAN_INDEX.search(plan or "")
    return found.group(1) if found else None


def vector_indexes_on(
    ns: LanceNamespace, table_id: Sequence[str], column: str, *, version: int | None = None
) -> list[Any]:
    """The vector indexes on ``column`` (IndexContent, in listing order)."""
    return [
        ix
        for ix in list_indexes(ns, table_id, version=version)
        if normalize_index_type(ix.index_type) in VECTOR_INDEX_TYPES
        and column in (ix.columns or [])
    ]


def index_in_use(
    ns: LanceNamespace,
    table_id: Sequence[str],
    column: str,
    candidates: Sequence[Any],
    *,
    dim: int | None = None,
    version: int | None = None,
) -> Any | None:
    """Which of the vector indexes on ``column`` (``candidates``) a vector search uses: the
    only one, else the one the query plan names (ExplainTableQueryPlan of a search with the
    index's own metric, both backends); the first listed when the plan does not say."""
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    if dim is None:
        desc = ns.describe_table(
            DescribeTableRequest(id=list(table_id), version=version, load_detailed_metadata=True)
        )
        dim = next((c.dim for c in columns_from_schema(desc.var_schema) if c.name == column), None)
    try:
        request = query_request(
            table_id, vector=[0.5] * int(dim or 1), vector_column=column, k=1, version=version
        )
        name = plan_vector_index(explain(ns, request))
    except Exception:  # noqa: BLE001 - a backend without plans: the listing's first
        name = None
    return next((ix for ix in candidates if ix.index_name == name), candidates[0])


def index_metric(
    ns: LanceNamespace, table_id: Sequence[str], column: str, *, version: int | None = None
) -> str | None:
    """The metric of the vector index a search on ``column`` uses (at ``version``:
    :func:`index_in_use`), from ListTableIndices' details (both backends report
    ``metric_type`` there); ``None`` when the column has none."""
    candidates = vector_indexes_on(ns, table_id, column, version=version)
    used = index_in_use(ns, table_id, column, candidates, version=version)
    return distance_from_details(used.index_details) if used is not None else None


def query_metric(
    ns: LanceNamespace,
    table_id: Sequence[str],
    column: str,
    requested: str | None = None,
    *,
    version: int | None = None,
    column_kind: str | None = None,
) -> QueryMetric:
    """The metric a vector query on ``column`` runs with (``query_rules.query_metric``, the
    one rule): ``requested``, else the index's, else lance's default for the column's type
    (``column_kind``; read from the schema when needed and not given)."""
    indexed = index_metric(ns, table_id, column, version=version)
    if column_kind is None and indexed is None and not requested:
        desc = ns.describe_table(
            DescribeTableRequest(id=list(table_id), version=version, load_detailed_metadata=True)
        )
        found = {c.name: c.kind for c in columns_from_schema(desc.var_schema)}
        column_kind = found.get(column)
    return query_rules.query_metric(indexed, requested, column_kind=column_kind or "vector")


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


def vector_search(
    ns: LanceNamespace,
    table_id: Sequence[str],
    vector: Sequence[float],
    *,
    column: str,
    k: int = 10,
    repeats: int = 1,
    **params: Any,
) -> SearchResult:
    """Nearest neighbours of ``vector`` in ``column``: the rows with their ``_distance`` and
    the latency over ``repeats`` runs. ``params``: QueryTable fields (``distance_type``,
    ``nprobes``, ``refine_factor``, ``ef``, ``filter``, ``prefilter``, ``fast_search``,
    ``bypass_vector_index``, ``columns``, ``version``...). Without ``distance_type`` the
    search (exact ones too) uses the metric of the column's index (:func:`query_metric`)."""
    metric = query_metric(
        ns, table_id, column, params.pop("distance_type", None), version=params.get("version")
    )
    request = query_request(
        table_id, vector=vector, vector_column=column, k=int(k), distance_type=metric.metric,
        **params,
    )  # fmt: skip
    found = timed(ns, request, repeats)
    found.metric = metric
    return found


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


# -- query plans ------------------------------------------------------------------------------------
@dataclass
class PlanNode:
    depth: int
    name: str
    detail: str
    metrics: dict[str, str] = field(default_factory=dict)

    @property
    def elapsed(self) -> str | None:
        return self.metrics.get("elapsed") or self.metrics.get("elapsed_compute")

    @property
    def elapsed_ms(self) -> float | None:
        """The node's time (inclusive of its children) in milliseconds."""
        return duration_ms(self.elapsed)


_DURATION_UNITS = (("ns", 1e-6), ("µs", 1e-3), ("us", 1e-3), ("ms", 1.0), ("s", 1000.0))


def duration_ms(text: str | None) -> float | None:
    """A DataFusion duration (``4.68ms``, ``862.7µs``, ``1.2s``) in milliseconds."""
    for unit, factor in _DURATION_UNITS:
        if text and text.endswith(unit):
            try:
                return float(text[: -len(unit)]) * factor
            except ValueError:
                return None
    return None


# Plan nodes that show a vector index (IVF partitions, HNSW, PQ) or a full-text index at work.
_INDEX_NODES = (
    "ANNSubIndex",
    "ANNIvfPartition",
    "ANNIvf",
    "MatchQuery",
    "PhraseQuery",
    "FlatMatch",
    "ScalarIndex",
    "MaterializeIndex",
    "BooleanQuery",
)
_BRUTE_FORCE = ("KNNVectorDistance",)


def explain(ns: LanceNamespace, request: QueryTableRequest, *, verbose: bool = False) -> str:
    return ns.explain_table_query_plan(
        ExplainTableQueryPlanRequest(id=request.id, query=request, verbose=verbose)
    )


def analyze(ns: LanceNamespace, request: QueryTableRequest) -> str:
    body = request.model_dump(exclude_none=True, exclude={"identity", "context"})
    return ns.analyze_table_query_plan(AnalyzeTableQueryPlanRequest.model_validate(body))


_METRICS = re.compile(r"metrics=\[(.*?)\]")


def parse_plan(text: str) -> list[PlanNode]:
    """A DataFusion/Lance plan (explain or analyze) as nodes with their depth, name, the rest
    of their line, and their metrics (``elapsed``, ``output_rows``, ``bytes_read``...)."""
    nodes = []
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        body = line.strip()
        name, _, rest = body.partition(":")
        name = name.split(",")[0].split(" ")[0]
        metrics: dict[str, str] = {}
        m = _METRICS.search(rest)
        if m:
            for item in m.group(1).split(", "):
                key, _, value = item.partition("=")
                if key and value:
                    metrics[key.strip()] = value.strip()
            rest = _METRICS.sub("", rest)
        head_elapsed = re.search(r"elapsed=([\d.]+\w+)", body.split("metrics=")[0])
        if head_elapsed and "elapsed" not in metrics:
            metrics["elapsed"] = head_elapsed.group(1)
        nodes.append(PlanNode(depth, name, rest.strip().strip(","), metrics))
    return nodes


def plan_summary(nodes: Sequence[PlanNode]) -> dict[str, Any]:
    """What matters in a plan: whether an index is used (and which nodes say so), rows and
    bytes read, the total time."""
    names = [n.name for n in nodes]
    used = [n for n in names if n.startswith(_INDEX_NODES)]
    brute = [n for n in names if n.startswith(_BRUTE_FORCE)]
    scans = [n for n in nodes if n.name.startswith(("LanceRead", "LanceScan"))]
    rows = sum(_number(n.metrics.get("rows_scanned", n.metrics.get("output_rows"))) for n in scans)
    bytes_read = sum(_size(n.metrics.get("bytes_read")) for n in nodes)
    return {
        "index_used": bool(used),
        "index_nodes": sorted(set(used)),
        "brute_force": bool(brute) and not used,
        "rows_scanned": rows if scans else None,
        "bytes_read": bytes_read if scans else None,
        "elapsed": nodes[0].elapsed if nodes else None,
        "elapsed_ms": nodes[0].elapsed_ms if nodes else None,
    }


def _number(value: str | None) -> int:
    try:
        return int(float(str(value).replace(",", "")))
    except (TypeError, ValueError):
        return 0


_UNITS = {
    "B": 1, "K": 1e3, "KB": 1e3, "M": 1e6, "MB": 1e6, "G": 1e9, "GB": 1e9,
    "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3,
}  # fmt: skip


def _size(value: str | None) -> int:
    if not value:
        return 0
    m = re.fullmatch(r"([\d.]+)\s*([KMG]i?B|[KMG]|B)?", value.strip())
    if not m:
        return _number(value)
    return int(float(m.group(1)) * _UNITS.get(m.group(2) or "B", 1))


def plan_frame(nodes: Sequence[PlanNode]) -> pd.DataFrame:
    """The plan as rows: an indented step, its time (ms), rows out, bytes read, the rest of
    its line (timings left out)."""
    return pd.DataFrame(
        [
            {
                "step": "\u2003" * n.depth + n.name,
                "ms": n.elapsed_ms,
                "rows": _number(n.metrics["output_rows"]) if "output_rows" in n.metrics else None,
                "bytes_read": _size(n.metrics["bytes_read"]) if "bytes_read" in n.metrics else None,
                "detail": re.sub(r"^elapsed=[^,]*,?\s*", "", n.detail)[:300],
            }
            for n in nodes
        ],
        columns=["step", "ms", "rows", "bytes_read", "detail"],
    )


@dataclass(frozen=True)
class SearchTable:
    """What the search page needs to know about a table: its columns, properties, rows, the
    latest version, and which columns have a vector or full-text index."""

    table_id: tuple[str, ...]
    columns: tuple[ColumnInfo, ...]
    properties: dict[str, str]
    num_rows: int | None
    latest_version: int | None
    # column -> the index in use: name, type, distance, partitions (IVF; None: not known)
    vector_indexes: dict[str, dict[str, Any]]
    fts_indexes: dict[str, dict[str, Any]]  # column -> name, tokenizer options
    # column -> every vector index on it (listing order; more than one: lance picks)
    vector_index_choices: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    branch: str | None = None  # the branch read (``backend.branch_view``; None: main)

    def other_vector_indexes(self, column: str) -> list[dict[str, Any]]:
        """The vector indexes on ``column`` a search does not use (lance picks one)."""
        used = (self.vector_indexes.get(column) or {}).get("name")
        return [c for c in self.vector_index_choices.get(column, []) if c["name"] != used]

    @property
    def vector_columns(self) -> list[str]:
        return [c.name for c in self.columns if c.kind in ("vector", "binary_vector")]

    @property
    def text_columns(self) -> list[str]:
        return [c.name for c in self.columns if c.kind == "string"]

    @property
    def embedding(self) -> str | None:
        return embedding_of(self.properties)

    def column(self, name: str) -> ColumnInfo | None:
        return next((c for c in self.columns if c.name == name), None)

    def distance_for(self, column: str) -> str | None:
        """The metric of the vector index on ``column`` (``None``: no vector index)."""
        return (self.vector_indexes.get(column) or {}).get("distance")

    def metric_for(self, column: str, requested: str | None = None) -> QueryMetric:
        """The metric a query on ``column`` runs with (``query_rules.query_metric``)."""
        info = self.column(column)
        kind = info.kind if info is not None else "vector"
        return query_rules.query_metric(self.distance_for(column), requested, column_kind=kind)

    @property
    def id_column(self) -> str:
        """The column a row is picked by: an integer ``id`` column, else ``_rowid``."""
        info = self.column("id")
        return "id" if info is not None and info.kind == "integer" else ROW_ID


def search_table(ns: LanceNamespace, table_id: Sequence[str]) -> SearchTable:
    desc = ns.describe_table(DescribeTableRequest(id=list(table_id), load_detailed_metadata=True))
    columns = tuple(columns_from_schema(desc.var_schema))
    dims = {c.name: c.dim for c in columns}
    found: dict[str, list[Any]] = {}
    fts: dict[str, dict[str, Any]] = {}
    for ix in list_indexes(ns, table_id):
        kind = normalize_index_type(ix.index_type) or ""
        try:
            category = index_category(kind)
        except ValueError:  # a type this console does not know: not searchable here
            continue
        details = index_details_dict(ix.index_details)
        for column in ix.columns or []:
            if category == "vector":
                found.setdefault(column, []).append(ix)
            elif category == "fts":
                fts.setdefault(column, {"name": ix.index_name, "options": fts_options(details)})

    def entry(ix: Any) -> dict[str, Any]:
        kind = normalize_index_type(ix.index_type) or ""
        return {
            "name": ix.index_name,
            "type": kind,
            "distance": distance_from_details(ix.index_details),
        }

    vector: dict[str, dict[str, Any]] = {}
    for column, candidates in found.items():
        used = index_in_use(ns, table_id, column, candidates, dim=dims.get(column))
        # the IVF partitions of the index in use, where lance's stats are readable
        shown = entry(used)
        vector[column] = {**shown, "partitions": ivf_partitions(ns, table_id, shown["name"])}
    try:
        rows: int | None = count_rows(ns, table_id, version=None, filter=None)
    except InvalidInputError:
        rows = None
    return SearchTable(
        table_id=tuple(table_id),
        columns=columns,
        properties=dict(desc.properties or {}),
        num_rows=rows,
        latest_version=desc.version,
        vector_indexes=vector,
        fts_indexes=fts,
        vector_index_choices={c: [entry(ix) for ix in ixs] for c, ixs in found.items()},
        branch=branch_of(ns),
    )


def describe_latencies(values: Sequence[float]) -> str:
    if not values:
        return "no runs"
    if len(values) == 1:
        return f"{values[0]:.1f} ms"
    return (
        f"p50 {percentile(values, 50):.1f} ms · p95 {percentile(values, 95):.1f} ms over "
        f"{len(values)} runs (mean {statistics.fmean(values):.1f} ms)"
    )


__all__ = [
    "CANNOT_CHOOSE_INDEX",
    "DISTANCE",
    "EMBEDDINGS",
    "ROW_ID",
    "SCORE",
    "VECTOR_QUERY_PARAMS",
    "PlanNode",
    "Preview",
    "SearchTable",
    "SearchResult",
    "abbreviate",
    "analyze",
    "count_rows",
    "describe_latencies",
    "embed_text",
    "embedding_of",
    "explain",
    "search_table",
    "fts_request",
    "fts_search",
    "highlight",
    "index_in_use",
    "index_metric",
    "plan_vector_index",
    "iter_rows",
    "parse_plan",
    "parse_vector",
    "percentile",
    "plan_frame",
    "plan_summary",
    "preview",
    "query_metric",
    "query_request",
    "read_rows",
    "row_vector",
    "run_query",
    "timed",
    "vector_indexes_on",
    "vector_search",
]
