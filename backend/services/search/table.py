"""What the search page knows about a table: columns, properties, rows, latest version, and
the vector and full-text indexes searches use."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lance_namespace import DescribeTableRequest, LanceNamespace
from lance_namespace.errors import InvalidInputError

from backend.branch_view import branch_of
from backend.rules import query_rules
from backend.rules.columns import ColumnInfo, columns_from_schema
from backend.rules.index_rules import fts_options, index_category, normalize_index_type
from backend.rules.query_rules import QueryMetric
from backend.services.index_overview import (
    distance_from_details,
    index_details_dict,
    ivf_partitions,
    list_indexes,
)
from backend.services.search.embedding import embedding_of
from backend.services.search.query import ROW_ID, count_rows
from backend.services.search.vector import index_in_use


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
