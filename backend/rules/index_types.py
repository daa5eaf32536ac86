"""The index types lance builds, by name, and which of them fit a column of an Arrow type
(the table measured in ``backend.rules.index_rules``' docstring). Below the rest of the index
rules so that a column (``backend.rules.columns.ColumnInfo``) can say which types fit it.
"""

from __future__ import annotations

from typing import Any

from backend.arrow.types import STRING_TYPES, column_kind, parse_arrow_type

VECTOR_INDEX_TYPES: tuple[str, ...] = (
    "IVF_FLAT",
    "IVF_SQ",
    "IVF_PQ",
    "IVF_RQ",
    "IVF_HNSW_FLAT",
    "IVF_HNSW_SQ",
    "IVF_HNSW_PQ",
)
FTS = "FTS"
SCALAR_INDEX_TYPES: tuple[str, ...] = (
    "BTREE",
    "BITMAP",
    "LABEL_LIST",
    "NGRAM",
    "ZONEMAP",
    "BLOOMFILTER",
)
ALL_INDEX_TYPES: tuple[str, ...] = (*VECTOR_INDEX_TYPES, FTS, *SCALAR_INDEX_TYPES)

_FITTING: dict[str, tuple[str, ...]] = {
    "binary_vector": ("IVF_FLAT", "IVF_HNSW_FLAT"),
    "multivector": ("IVF_FLAT", "IVF_PQ", "IVF_SQ", "IVF_HNSW_SQ"),
    "string": (FTS, "BTREE", "BITMAP", "NGRAM", "ZONEMAP", "BLOOMFILTER"),
    "integer": ("BTREE", "BITMAP", "ZONEMAP", "BLOOMFILTER"),
    "float": ("BTREE", "BITMAP", "ZONEMAP", "BLOOMFILTER"),
    "temporal": ("BTREE", "BITMAP", "ZONEMAP", "BLOOMFILTER"),
    "binary": ("BTREE", "BITMAP", "ZONEMAP", "BLOOMFILTER"),
    "decimal": ("BTREE", "BITMAP", "ZONEMAP"),
    "fixed_binary": ("BTREE", "BITMAP", "ZONEMAP"),
    "boolean": ("BITMAP", "BTREE", "ZONEMAP"),
    "dictionary": ("ZONEMAP",),
}


def fitting_index_types(arrow_type: Any) -> list[str]:
    """Index types that fit a column of this Arrow type, most useful first (module docstring)."""
    t = parse_arrow_type(arrow_type)
    kind = column_kind(t)
    if kind == "vector":
        return [x for x in VECTOR_INDEX_TYPES if x != "IVF_RQ" or (t.length or 1) % 8 == 0]
    if kind == "list":
        strings = t.child is not None and t.child.base in STRING_TYPES
        return ["LABEL_LIST", FTS] if strings else ["LABEL_LIST"]
    return list(_FITTING.get(kind, ()))
