"""Conveniences for notebooks and scripts, on any backend (local or REST), in the shape a
lancedb or pylance user expects: tables in as Arrow or pandas, results out as Arrow or pandas.

* :func:`create_table` / :func:`insert_into_table` take a ``pa.Table``, a ``RecordBatch``, a
  ``RecordBatchReader`` or a pandas ``DataFrame`` (``backend.arrow.ipc.to_ipc_stream`` turns
  any of them into the request body: no IPC code of your own);
* :func:`query` answers a scan, a vector search or a full-text search as a ``pa.Table``;
  :func:`query_df` as a DataFrame. A vector search without ``column=`` uses the table's only
  vector column (``backend.rules.query_rules.resolve_vector_column``);
* :func:`versions` / :func:`tags` are DataFrames with readable UTC timestamps (to the second)
  and, for versions, the tags of each.

Every call goes through the namespace's own operations (so the same checks apply and only
namespace errors come out).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import pyarrow as pa
from lance_namespace import (
    CreateTableRequest,
    CreateTableResponse,
    DescribeTableRequest,
    InsertIntoTableRequest,
    InsertIntoTableResponse,
    LanceNamespace,
)
from lance_namespace.errors import InvalidInputError

from backend.arrow.ipc import to_ipc_stream
from backend.errors import guarded
from backend.rules import ids, query_rules
from backend.rules.columns import columns_from_schema
from backend.services.versions import list_versions


@guarded("create_table")
def create_table(
    ns: LanceNamespace,
    table_id: Sequence[str],
    data: Any,
    *,
    mode: str | None = None,
    properties: dict[str, str] | None = None,
) -> CreateTableResponse:
    """CreateTable with ``data`` (Arrow table, batch, reader or pandas DataFrame); ``mode``:
    ``create`` (default), ``exist_ok`` or ``overwrite``."""
    fields: dict[str, Any] = {"id": ids.check_id(table_id)}
    if mode is not None:
        fields["mode"] = mode
    if properties:
        fields["properties"] = dict(properties)
    return ns.create_table(CreateTableRequest(**fields), to_ipc_stream(data))


@guarded("insert_into_table")
def insert_into_table(
    ns: LanceNamespace, table_id: Sequence[str], data: Any, *, mode: str | None = None
) -> InsertIntoTableResponse:
    """InsertIntoTable with ``data`` (as :func:`create_table`); ``mode``: ``append`` (default)
    or ``overwrite``."""
    fields: dict[str, Any] = {"id": ids.check_id(table_id)}
    if mode is not None:
        fields["mode"] = mode
    return ns.insert_into_table(InsertIntoTableRequest(**fields), to_ipc_stream(data))


def vector_column(ns: LanceNamespace, table_id: Sequence[str], column: str | None = None) -> str:
    """``column``, or the table's only vector column (``InvalidInputError`` naming the
    candidates when there are none or several)."""
    if column:
        return column
    desc = ns.describe_table(
        DescribeTableRequest(id=ids.check_id(table_id), load_detailed_metadata=True)
    )
    kinds = {c.name: c.kind for c in columns_from_schema(desc.var_schema)}
    return query_rules.resolve_vector_column(kinds, None)


@guarded("query_table")
def query(
    ns: LanceNamespace,
    table_id: Sequence[str],
    vector: Sequence[float] | Any | None = None,
    *,
    column: str | None = None,
    text: str | None = None,
    text_columns: Sequence[str] | None = None,
    k: int = 10,
    filter: str | None = None,
    columns: Sequence[str] | None = None,
    **params: Any,
) -> pa.Table:
    """The rows of a QueryTable as a ``pa.Table``: a scan (neither ``vector`` nor ``text``),
    the ``k`` nearest neighbours of ``vector`` (with ``_distance``; ``column`` inferred when
    the table has one vector column) or a full-text search for ``text`` (with ``_score``) over
    ``text_columns`` (default: the columns with a full-text index). ``columns``: the columns
    returned.
    ``params``: other QueryTable fields (``nprobes``, ``refine_factor``, ``distance_type``,
    ``version``, ``offset``, ``prefilter``, ...)."""
    from backend.services.search.query import query_request, run_query
    from backend.services.search.table import search_table

    tid = ids.check_id(table_id)
    if text is not None and vector is not None:
        raise InvalidInputError(
            "give a vector or a text, not both (hybrid search is not supported)"
        )
    if text is not None:
        searched = list(text_columns or search_table(ns, tid).fts_indexes)
        if not searched:
            raise InvalidInputError("the table has no full-text index: name text_columns=[...]")
        params["full_text_query"] = {"string_query": {"query": text, "columns": searched}}
    if vector is not None:
        values = [float(x) for x in (vector.tolist() if hasattr(vector, "tolist") else vector)]
        params["vector"] = values
        params["vector_column"] = vector_column(ns, tid, column)
    request = query_request(tid, k=int(k), filter=filter, columns=columns, **params)
    return run_query(ns, request)


def query_df(
    ns: LanceNamespace, table_id: Sequence[str], *args: Any, **kwargs: Any
) -> pd.DataFrame:
    """:func:`query` as a pandas DataFrame."""
    return query(ns, table_id, *args, **kwargs).to_pandas()


def _readable(times: pd.Series) -> pd.Series:
    """UTC timestamps to the second (what a person reads; ``pd.Timestamp`` values still)."""
    return pd.to_datetime(times, utc=True).dt.floor("s")


def versions(ns: LanceNamespace, table_id: Sequence[str]) -> pd.DataFrame:
    """Every version, newest first: version, timestamp (UTC, to the second), tags (a list),
    manifest_size, metadata (JSON text)."""
    from backend.services import tags as tagsv

    frame = list_versions(ns, table_id)
    tagged = tagsv.tagged_versions(tagsv.list_tags(ns, table_id))
    out = pd.DataFrame(
        {
            "version": frame["version"],
            "timestamp": _readable(frame["timestamp"]),
            "tags": [sorted(tagged.get(int(v), [])) for v in frame["version"]],
            "manifest_size": frame["manifest_size"],
            "metadata": frame["metadata"],
        }
    )
    return out.reset_index(drop=True)


def tags(ns: LanceNamespace, table_id: Sequence[str]) -> pd.DataFrame:
    """Every tag: tag, version, timestamp (of the tagged version, UTC, to the second),
    manifest_size; sorted by version, then tag."""
    from backend.services import tags as tagsv

    frame = tagsv.list_tags(ns, table_id)
    when = dict(
        zip(*(list_versions(ns, table_id)[c] for c in ("version", "timestamp")), strict=True)
    )
    frame.insert(2, "timestamp", _readable(pd.Series([when.get(int(v)) for v in frame["version"]])))
    return frame
