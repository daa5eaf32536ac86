"""Vector search: query vectors (pasted, a row's), the vector index a search uses and its
metric, and the search itself with its latencies."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from lance_namespace import DescribeTableRequest, LanceNamespace
from lance_namespace.errors import InvalidInputError

from backend.rules import query_rules
from backend.rules.columns import columns_from_schema
from backend.rules.index_rules import VECTOR_INDEX_TYPES, normalize_index_type
from backend.rules.query_rules import QueryMetric
from backend.services.index_overview import distance_from_details, list_indexes
from backend.services.search.plans import explain
from backend.services.search.query import SearchResult, query_request, run_query, timed


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
