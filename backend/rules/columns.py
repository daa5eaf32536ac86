"""The columns of a table: each column's name, Arrow type and kind, vector dimension and
the index types that fit it (:class:`ColumnInfo`), read from a schema however it is carried
(:func:`columns_from_schema`, :func:`find_column`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend.arrow.types import ArrowTypeInfo, column_kind, parse_arrow_type, vector_dimension
from backend.rules.index_types import fitting_index_types
from backend.spec.fields import field_of


@dataclass(frozen=True)
class ColumnInfo:
    """One column of a table."""

    name: str
    arrow_type_str: str
    kind: str
    nullable: bool = True
    dim: int | None = None
    type_info: ArrowTypeInfo = field(default_factory=lambda: ArrowTypeInfo("null"), repr=False)

    @property
    def fitting_types(self) -> list[str]:
        """The index types that fit this column, most useful first."""
        return fitting_index_types(self.type_info)

    @classmethod
    def of(cls, name: str, arrow_type: Any, nullable: bool = True) -> ColumnInfo:
        try:
            info = parse_arrow_type(arrow_type)
        except TypeError:
            info = ArrowTypeInfo("other")
        return cls(
            name=name,
            arrow_type_str=str(info),
            kind=column_kind(info),
            nullable=nullable,
            dim=vector_dimension(info),
            type_info=info,
        )


def columns_from_schema(schema: Any) -> list[ColumnInfo]:
    """``ColumnInfo`` of every top-level field of a JsonArrowSchema (model or dict) or a
    ``pyarrow.Schema``."""
    if schema is None:
        return []
    if type(schema).__module__.startswith("pyarrow"):
        return [ColumnInfo.of(f.name, f.type, f.nullable) for f in schema]
    return [
        ColumnInfo.of(
            str(field_of(f, "name")), field_of(f, "type"), bool(field_of(f, "nullable", True))
        )
        for f in field_of(schema, "fields") or []
    ]


def find_column(schema: Any, column: str) -> ColumnInfo | None:
    """A top-level column of a ``pyarrow.Schema``, else a dot-separated path through structs."""
    import pyarrow as pa

    if column in schema.names:
        f = schema.field(column)
        return ColumnInfo.of(column, f.type, f.nullable)
    fields: list[pa.Field] = list(schema)
    found = None
    for part in column.split("."):
        part = part.strip("`")
        found = next((f for f in fields if f.name == part), None)
        if found is None:
            return None
        fields = list(found.type) if pa.types.is_struct(found.type) else []
    return ColumnInfo.of(column, found.type, found.nullable) if found is not None else None
