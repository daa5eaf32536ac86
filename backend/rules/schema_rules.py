"""Schema changes checked before anything is written: the names of new columns, the type of an
all-null column, the alterations of a column (rename, nullable, cast) and the columns to drop.

Every check takes the table's current columns (``ColumnInfo``: name, type, nullability) and
raises ``InvalidInputError`` in the user's terms; nothing here reads the namespace.

* A new column's name follows the name rule of ``rules.ids`` (letters, digits, ``_``, ``-``;
  no ``.``: a dot separates the parts of a nested column's path), is given once, and is not
  a column of the table already.
* An all-null column's type is one lance can add from SQL (:data:`NULL_TYPES`): read from a
  ``pyarrow.DataType``, the spec's JSON type or type text (``backend.arrow.types``).
* A cast stays within one kind of value (integers, floating-point numbers, strings, binary):
  lance refuses any other cast, and refuses a cast of a column with an index (the index would
  no longer match the data).
* A drop keeps at least one column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lance_namespace.errors import InvalidInputError

from ..arrow.types import (
    FLOAT_TYPES,
    INT_TYPES,
    ArrowTypeInfo,
    parse_arrow_type,
)
from .columns import ColumnInfo
from .filter_rules import filter_problem
from .ids import label_problem

# The types an all-null column can have: the normal form of backend.arrow.types -> the SQL type
# lance's expression parser turns into it (``CAST(NULL AS <sql>)``).
NULL_TYPES: dict[str, str] = {
    "int8": "TINYINT",
    "int16": "SMALLINT",
    "int32": "INT",
    "int64": "BIGINT",
    "uint8": "TINYINT UNSIGNED",
    "uint16": "SMALLINT UNSIGNED",
    "uint32": "INT UNSIGNED",
    "uint64": "BIGINT UNSIGNED",
    "float32": "FLOAT",
    "float64": "DOUBLE",
    "utf8": "STRING",
    "bool": "BOOLEAN",
    "date32": "DATE",
    "binary": "BINARY",
}

# The kinds of value a cast stays within, and the type names the spec's JSON form carries.
_CAST_FAMILIES: tuple[tuple[str, frozenset[str]], ...] = (
    ("integers", INT_TYPES),
    ("floating-point numbers", FLOAT_TYPES),
    ("strings", frozenset({"utf8", "large_utf8"})),
    ("binary data", frozenset({"binary", "large_binary"})),
)
CAST_TYPES: frozenset[str] = frozenset().union(*(types for _, types in _CAST_FAMILIES))


def _names(columns: Sequence[ColumnInfo]) -> list[str]:
    return [c.name for c in columns]


def _listed(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"


def new_column_problem(name: Any, existing: Sequence[str]) -> str | None:
    """Why ``name`` cannot name a new column of a table with the columns ``existing``."""
    if not isinstance(name, str) or not name.strip():
        return "a new column needs a name"
    problem = label_problem(name, what="column", create=True)
    if problem:
        return problem
    if "." in name:
        return (
            f"the column name {name} contains '.', which separates the parts of a nested "
            "column's path: use '_' instead"
        )
    if name in existing:
        return f"the table already has a column named {name}"
    lowered = {e.lower(): e for e in existing}
    if name.lower() in lowered:
        return (
            f"the table already has a column named {lowered[name.lower()]} (SQL expressions "
            "do not tell names apart by case)"
        )
    return None


def _check_new_names(names: Sequence[Any], existing: Sequence[str]) -> None:
    if not names:
        raise InvalidInputError("no column to add: give at least one name and its values")
    seen: set[str] = set()
    for name in names:
        problem = new_column_problem(name, existing)
        if problem:
            raise InvalidInputError(f"{problem}; nothing was changed")
        key = str(name).lower()
        if key in seen:
            raise InvalidInputError(f"the column {name} is given twice; nothing was changed")
        seen.add(key)


def null_type(value: Any) -> ArrowTypeInfo:
    """The type of an all-null column from a ``pyarrow.DataType``, the spec's JSON type or
    type text; ``InvalidInputError`` for a type lance cannot add as nulls."""
    text = str(value).strip() if isinstance(value, str) else None
    if text is not None and not text:
        raise InvalidInputError("an all-null column needs a type (for example int64 or utf8)")
    try:
        info = parse_arrow_type(value)
    except TypeError:
        info = None
    if info is None or str(info) not in NULL_TYPES:
        shown = text if text is not None else str(value)
        raise InvalidInputError(
            f"{shown} is not a type an all-null column can have; use one of {', '.join(NULL_TYPES)}"
        )
    return info


@dataclass(frozen=True)
class NewColumn:
    """One column to add: its SQL expression, and its type when it is all-null."""

    name: str
    expression: str
    null_type: ArrowTypeInfo | None = None

    @property
    def all_null(self) -> bool:
        return self.null_type is not None


def is_type_value(value: Any) -> bool:
    """``value`` names a type (an all-null column) rather than a SQL expression: a
    ``pyarrow.DataType``, a JSON type or ``ArrowTypeInfo``."""
    return not isinstance(value, str)


def check_new_columns(
    columns: Mapping[str, Any], existing: Sequence[ColumnInfo], *, null_types: Sequence[str] = ()
) -> list[NewColumn]:
    """The columns to add, checked: ``columns`` maps each new name to a SQL expression (text),
    or to a type (a ``pyarrow.DataType`` / JSON type, or text when the name is in
    ``null_types``) for an all-null column."""
    names = _names(existing)
    _check_new_names(list(columns), names)
    out = []
    for name, value in columns.items():
        if name in null_types or is_type_value(value):
            info = null_type(value)
            out.append(NewColumn(name, f"CAST(NULL AS {NULL_TYPES[str(info)]})", info))
            continue
        expression = str(value or "").strip()
        if not expression:
            raise InvalidInputError(
                f"the column {name} needs a SQL expression for its values (or a type, to add "
                "it all-null); nothing was changed"
            )
        problem = filter_problem(expression)
        if problem:
            problem = problem.replace("the filter", "the expression").replace(" a filter", "")
            raise InvalidInputError(f"the expression for {name}: {problem}; nothing was changed")
        out.append(NewColumn(name, expression))
    return out


def _family(info: ArrowTypeInfo) -> str | None:
    for word, types in _CAST_FAMILIES:
        if info.base in types:
            return word
    return None


def cast_problem(column: ColumnInfo, target: ArrowTypeInfo) -> str | None:
    """Why lance cannot change ``column`` to ``target`` (``None``: it can)."""
    source = column.type_info
    if str(source) == str(target):
        return f"the column {column.name} is already {target}"
    if str(target) not in CAST_TYPES:
        return (
            f"{target} is not a type the console can cast to; use one of "
            f"{', '.join(sorted(CAST_TYPES))}"
        )
    kind = _family(source)
    if kind is None or kind != _family(target):
        what = f"holds {kind}" if kind else f"is {source}"
        return (
            f"lance cannot change the column {column.name} from {source} to {target}: a cast "
            f"stays within one kind of value (the column {what})"
        )
    return None


def cast_type(value: Any) -> ArrowTypeInfo:
    """A cast's target type from a ``pyarrow.DataType``, the spec's JSON type or type text."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InvalidInputError("a cast needs a type (for example int64 or float32)")
    try:
        return parse_arrow_type(value)
    except TypeError as err:
        raise InvalidInputError(f"{value!r} is not a type") from err


@dataclass(frozen=True)
class Alteration:
    """One column's change, checked: its path, and what changes (``None``: unchanged)."""

    path: str
    rename: str | None = None
    nullable: bool | None = None
    data_type: ArrowTypeInfo | None = None

    def request_entry(self) -> dict[str, Any]:
        """The spec's AlterColumnsEntry (``data_type`` in its JSON form)."""
        entry: dict[str, Any] = {"path": self.path}
        if self.rename is not None:
            entry["rename"] = self.rename
        if self.nullable is not None:
            entry["nullable"] = self.nullable
        if self.data_type is not None:
            entry["data_type"] = {"type": str(self.data_type)}
        return entry


_ALTER_KEYS = frozenset({"path", "rename", "nullable", "data_type"})


def check_alterations(
    alterations: Sequence[Mapping[str, Any]],
    existing: Sequence[ColumnInfo],
    indexed: Mapping[str, Sequence[str]] | None = None,
) -> list[Alteration]:
    """The alterations, checked against the table's columns; ``indexed``: column name -> the
    names of the indexes on it (a cast of an indexed column is refused, as lance refuses it)."""
    if not alterations:
        raise InvalidInputError("no column to alter: name a column and what changes")
    by_name = {c.name: c for c in existing}
    names = list(by_name)
    out: list[Alteration] = []
    seen: set[str] = set()
    after = set(names)
    for raw in alterations:
        unknown = sorted(set(raw) - _ALTER_KEYS)
        if unknown:
            raise InvalidInputError(
                f"unknown key {', '.join(unknown)} in an alteration; use path, rename, nullable "
                "and data_type"
            )
        path = str(raw.get("path") or "").strip()
        if not path:
            raise InvalidInputError("an alteration needs the column's name (path)")
        column = by_name.get(path)
        if column is None:
            raise InvalidInputError(
                f"column {path} not found; columns: {_listed(names)}; nothing was changed"
            )
        if path in seen:
            raise InvalidInputError(f"the column {path} is altered twice; give one alteration")
        seen.add(path)
        rename = raw.get("rename")
        rename = str(rename).strip() if rename is not None and str(rename).strip() else None
        nullable = raw.get("nullable")
        if nullable is not None and not isinstance(nullable, bool):
            raise InvalidInputError(f"nullable for {path} must be true or false")
        target = cast_type(raw["data_type"]) if raw.get("data_type") is not None else None
        if rename is None and nullable is None and target is None:
            raise InvalidInputError(
                f"nothing to change for {path}: give a new name, nullable or a type"
            )
        if rename is not None and rename != path:
            problem = new_column_problem(rename, sorted(after - {path}))
            if problem:
                raise InvalidInputError(f"renaming {path}: {problem}; nothing was changed")
            after.discard(path)
            after.add(rename)
        elif rename == path:
            rename = None
        if nullable is not None and nullable == column.nullable:
            nullable = None  # already so: nothing to change
        if target is not None:
            problem = cast_problem(column, target)
            if problem:
                raise InvalidInputError(f"{problem}; nothing was changed")
            on = list((indexed or {}).get(path) or [])
            if on:
                raise InvalidInputError(
                    f"the column {path} has the index {', '.join(on)}: lance refuses to cast an "
                    "indexed column (the index would no longer match); drop the index first; "
                    "nothing was changed"
                )
        if rename is None and nullable is None and target is None:
            raise InvalidInputError(f"nothing to change: the column {path} is already so")
        out.append(Alteration(path, rename, nullable, target))
    return out


def check_drop(columns: Sequence[Any], existing: Sequence[ColumnInfo]) -> list[str]:
    """The columns to drop, checked: named, existing, given once, not every column."""
    names = _names(existing)
    wanted = [str(c).strip() for c in columns or []]
    if not wanted or not all(wanted):
        raise InvalidInputError("no column to drop: name at least one column")
    for name in wanted:
        if name not in names:
            raise InvalidInputError(
                f"column {name} not found; columns: {_listed(names)}; nothing was changed"
            )
    if len(set(wanted)) != len(wanted):
        raise InvalidInputError("a column is named twice in the columns to drop")
    if set(wanted) >= set(names):
        raise InvalidInputError(
            "a table keeps at least one column: dropping every column is refused (drop the "
            "table instead); nothing was changed"
        )
    return wanted
