"""Arrow column types, read from whatever carries them: a ``pyarrow.DataType``, the spec's
``JsonArrowDataType`` (model or dict) or a type string. One normal form
(:class:`ArrowTypeInfo`), one way to print it (``int64``, ``utf8``, ``list<utf8>``,
``fixed_size_list<float32>[128]``, ``struct<a: int64, b: utf8>``, ``map<utf8, int32>``), and
what a column holds (:func:`column_kind`) for the index rules and the search page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from backend.text import is_digits

INT_TYPES = frozenset(f"{s}int{b}" for s in ("", "u") for b in (8, 16, 32, 64))
FLOAT_TYPES = frozenset({"float16", "float32", "float64"})
STRING_TYPES = frozenset({"utf8", "large_utf8", "utf8_view"})
BINARY_TYPES = frozenset({"binary", "large_binary", "binary_view"})
TEMPORAL_PREFIXES = ("date", "timestamp", "time", "duration", "interval")
LIST_TYPES = frozenset({"list", "large_list", "list_view", "large_list_view"})
_BASE_ALIASES = {
    "float": "float32",
    "double": "float64",
    "halffloat": "float16",
    "halffloat16": "float16",
    "string": "utf8",
    "large_string": "large_utf8",
    "string_view": "utf8_view",
    "boolean": "bool",
    "largelist": "large_list",
    "fixedsizelist": "fixed_size_list",
}


@dataclass(frozen=True)
class ArrowTypeInfo:
    """A normalised Arrow type: base name, child type (lists, dictionaries), fixed length,
    and named children (structs, maps)."""

    base: str
    child: ArrowTypeInfo | None = None
    length: int | None = None
    fields: tuple[tuple[str, ArrowTypeInfo], ...] = field(default=())

    def __str__(self) -> str:
        if self.base == "fixed_size_list" and self.child is not None:
            return f"fixed_size_list<{self.child}>[{self.length}]"
        if self.base == "struct" and self.fields:
            return "struct<" + ", ".join(f"{n}: {t}" for n, t in self.fields) + ">"
        if self.base == "map" and len(self.fields) == 2:
            return f"map<{self.fields[0][1]}, {self.fields[1][1]}>"
        if self.child is not None:
            return f"{self.base}<{self.child}>"
        if self.length is not None:
            return f"{self.base}[{self.length}]"
        return self.base


def _norm_base(name: str) -> str:
    n = name.strip().lower().replace(" ", "")
    n = _BASE_ALIASES.get(n, n)
    for prefix in ("decimal", "timestamp", "dictionary"):
        if n.startswith(prefix):
            return prefix
    return n


def _split_top(text: str) -> tuple[str, str | None, str | None]:
    """``fixed_size_list<item: float>[16]`` -> (``fixed_size_list``, ``item: float``, ``16``)."""
    m = re.match(r"^\s*([A-Za-z_0-9]+)\s*(?:\((.*)\))?\s*(?:<(.*)>)?\s*(?:\[(\d+)\])?\s*$", text)
    if not m:
        return text.strip(), None, None
    base, paren, inner, length = m.groups()
    if base.lower() in ("fixed_size_list", "fixedsizelist") and paren and inner is None:
        parts = [p.strip() for p in paren.rsplit(",", 1)]
        if len(parts) == 2 and is_digits(parts[1]):
            return base, parts[0], parts[1]
    return base, inner, length


def _from_pyarrow(value: Any) -> ArrowTypeInfo:
    import pyarrow as pa

    if pa.types.is_fixed_size_list(value):
        return ArrowTypeInfo("fixed_size_list", _from_pyarrow(value.value_type), value.list_size)
    if pa.types.is_list(value) or pa.types.is_large_list(value):
        base = "large_list" if pa.types.is_large_list(value) else "list"
        return ArrowTypeInfo(base, _from_pyarrow(value.value_type))
    if pa.types.is_fixed_size_binary(value):
        return ArrowTypeInfo("fixed_size_binary", None, value.byte_width)
    if pa.types.is_dictionary(value):
        return ArrowTypeInfo("dictionary", _from_pyarrow(value.value_type))
    if pa.types.is_struct(value):
        return ArrowTypeInfo("struct", fields=tuple((f.name, _from_pyarrow(f.type)) for f in value))
    if pa.types.is_map(value):
        return ArrowTypeInfo(
            "map",
            fields=(
                ("key", _from_pyarrow(value.key_type)),
                ("value", _from_pyarrow(value.item_type)),
            ),
        )
    return ArrowTypeInfo(_norm_base(str(value)))


def _from_json(value: dict[str, Any]) -> ArrowTypeInfo:
    base = _norm_base(str(value.get("type", "")))
    children = value.get("fields") or []

    def child_type(f: Any) -> ArrowTypeInfo | None:
        t = f.get("type") if isinstance(f, dict) else None
        return parse_arrow_type(t) if t is not None else None

    if base in LIST_TYPES | {"fixed_size_list"}:
        child = child_type(children[0]) if children else None
        return ArrowTypeInfo(base, child, value.get("length"))
    if base == "struct":
        named = tuple((str(f.get("name")), t) for f in children if (t := child_type(f)) is not None)
        return ArrowTypeInfo(base, fields=named)
    if base == "map" and children:
        entries = (children[0].get("type") or {}).get("fields") or []
        if len(entries) == 2:
            kt, vt = child_type(entries[0]), child_type(entries[1])
            if kt is not None and vt is not None:
                return ArrowTypeInfo(base, fields=(("key", kt), ("value", vt)))
    return ArrowTypeInfo(base, None, value.get("length"))


def parse_arrow_type(value: Any) -> ArrowTypeInfo:
    """Normalise a ``pyarrow.DataType``, a JsonArrowDataType (model or dict) or a type string.
    ``TypeError`` for anything else."""
    if isinstance(value, ArrowTypeInfo):
        return value
    carried = getattr(value, "type_info", None)  # a column (``backend.rules.columns``)
    if isinstance(carried, ArrowTypeInfo):
        return carried
    if type(value).__module__.startswith("pyarrow"):
        return _from_pyarrow(value)
    if hasattr(value, "model_dump"):
        value = value.model_dump(exclude_none=True)
    if isinstance(value, dict):
        return _from_json(value)
    if isinstance(value, str):
        base, inner, length = _split_top(value)
        base = _norm_base(base)
        if base.startswith("date"):
            return ArrowTypeInfo(base if base in ("date32", "date64") else "date32")
        child = None
        if inner is not None and base in LIST_TYPES | {"fixed_size_list"}:
            inner = inner.split(":", 1)[1] if ":" in inner.split("<", 1)[0] else inner
            child = parse_arrow_type(inner.strip())
        return ArrowTypeInfo(base, child, int(length) if length else None)
    raise TypeError(f"cannot read an Arrow type from {type(value).__name__}")


def arrow_type_str(value: Any) -> str:
    """The one printed form of a type (see the module docstring); ``?`` when unreadable."""
    if value is None:
        return "?"
    try:
        return str(parse_arrow_type(value))
    except TypeError:
        return "?"


def is_scalar_base(base: str) -> bool:
    return (
        base in STRING_TYPES
        or base in INT_TYPES
        or base in FLOAT_TYPES
        or base == "bool"
        or base.startswith(TEMPORAL_PREFIXES)
    )


def column_kind(value: Any) -> str:
    """What a column holds: ``vector``, ``binary_vector``, ``multivector`` (a list of float
    vectors), ``string``, ``list``, ``integer``,
    ``float``, ``decimal``, ``temporal``, ``boolean``, ``binary``, ``fixed_binary``,
    ``dictionary``, ``struct`` or ``other``."""
    t = parse_arrow_type(value)
    base = t.base
    if base == "fixed_size_list" and t.child is not None:
        if t.child.base in FLOAT_TYPES:
            return "vector"
        return "binary_vector" if t.child.base == "uint8" else "other"
    if base in LIST_TYPES:
        child = t.child
        if child is not None and child.base == "fixed_size_list" and child.child is not None:
            return "multivector" if child.child.base in FLOAT_TYPES else "other"
        return "list" if child is not None and is_scalar_base(child.base) else "other"
    kinds = {"decimal": "decimal", "bool": "boolean", "fixed_size_binary": "fixed_binary"}
    if base in kinds:
        return kinds[base]
    if base in ("dictionary", "struct"):
        return base
    if base in STRING_TYPES:
        return "string"
    if base in INT_TYPES:
        return "integer"
    if base in FLOAT_TYPES:
        return "float"
    if base.startswith(TEMPORAL_PREFIXES):
        return "temporal"
    return "binary" if base in BINARY_TYPES else "other"


def vector_dimension(value: Any) -> int | None:
    """The dimension of a vector (or multivector) column, else ``None``."""
    t = parse_arrow_type(value)
    if t.base in LIST_TYPES and t.child is not None:
        t = t.child
    return t.length if t.base == "fixed_size_list" else None
