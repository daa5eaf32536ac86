"""ListTableIndices and DescribeTableIndexStats of a table's branch, for the local backend.

pylance 14's ``DirectoryNamespace`` answers both for **main** whatever the request's
``branch``. Here they are answered from the branch's own dataset (``describe_indices`` and
``stats.index_stats``), in the shape pylance gives for main: the same index type names
(``BTree``, ``Inverted``, ``IVF_PQ``), details as JSON, one status (``SUCCEEDED``: lance lists
committed indexes only), rows indexed and not yet indexed.
"""

from __future__ import annotations

import json
from typing import Any

import lance
from lance_namespace import (
    DescribeTableIndexStatsRequest,
    DescribeTableIndexStatsResponse,
    ListTableIndicesRequest,
    ListTableIndicesResponse,
)
from lance_namespace.errors import ErrorCode
from lance_namespace_urllib3_client.models import IndexContent

from ..errors import invalid, make
from ..rules.index_rules import normalize_distance

SYSTEM_PREFIX = "__"  # lance's internal indexes (fragment reuse ...): never listed


def _details_json(details: Any) -> str:
    return json.dumps(details if details is not None else {}, separators=(",", ":"))


def _indexes(ds: lance.LanceDataset) -> list[Any]:
    return sorted(
        (ix for ix in ds.describe_indices() if not ix.name.startswith(SYSTEM_PREFIX)),
        key=lambda ix: ix.name,
    )


def _content(ds: lance.LanceDataset, ix: Any) -> IndexContent:
    stats = ds.stats.index_stats(ix.name)
    segments = list(ix.segments)
    newest = max(segments, key=lambda s: s.created_at or 0) if segments else None
    return IndexContent(
        index_name=ix.name,
        index_uuid=str(segments[0].uuid) if segments else "",
        columns=list(ix.field_names),
        status="SUCCEEDED",
        index_type=str(ix.index_type),
        type_url=ix.type_url,
        num_indexed_rows=int(stats.get("num_indexed_rows", ix.num_rows_indexed or 0)),
        num_unindexed_rows=int(stats.get("num_unindexed_rows", 0)),
        size_bytes=int(ix.total_size_bytes or 0),
        num_segments=len(segments),
        created_at=getattr(newest, "created_at", None),
        index_version=getattr(newest, "index_version", None),
        index_details=_details_json(getattr(ix, "details", None)),
    )


def list_indices(ds: lance.LanceDataset, req: ListTableIndicesRequest) -> ListTableIndicesResponse:
    """The indexes of ``ds`` (a branch at its version), by name, paged by ``limit`` and
    ``page_token`` (the name of the first index of the next page)."""
    found = _indexes(ds)
    if req.page_token:
        found = [ix for ix in found if ix.name >= req.page_token]
    if req.limit is not None and req.limit < 0:
        raise invalid(f"list_table_indices: limit must be 0 or more, got {req.limit}")
    limit = req.limit if req.limit else len(found)
    page, rest = found[:limit], found[limit:]
    return ListTableIndicesResponse(
        indexes=[_content(ds, ix) for ix in page], page_token=rest[0].name if rest else None
    )


def index_stats(
    ds: lance.LanceDataset, req: DescribeTableIndexStatsRequest, *, table: str, branch: str
) -> DescribeTableIndexStatsResponse:
    """DescribeTableIndexStats of one index of ``ds`` (a branch at its version)."""
    known = {ix.name: ix for ix in _indexes(ds)}
    ix = known.get(str(req.index_name))
    if ix is None:
        names = ", ".join(sorted(known)) or "none"
        raise make(
            ErrorCode.TABLE_INDEX_NOT_FOUND,
            f"branch {branch!r} of table {table} has no index {req.index_name!r} "
            f"(its indexes: {names})",
        )
    stats = ds.stats.index_stats(ix.name)
    details = getattr(ix, "details", None) or {}
    metric = details.get("metric_type") if isinstance(details, dict) else None
    return DescribeTableIndexStatsResponse(
        index_type=str(ix.index_type),
        num_indexed_rows=int(stats.get("num_indexed_rows", 0)),
        num_unindexed_rows=int(stats.get("num_unindexed_rows", 0)),
        num_indices=int(stats.get("num_indices", len(list(ix.segments)))),
        distance_type=normalize_distance(metric) if isinstance(metric, str) else None,
    )
