"""The type rules of an import: column types typed by a person (read by
``backend.arrow.types``, the one parser) as pyarrow types, a schema with some types edited,
and what keeps an upload from fitting a table (every difference named)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
import pyarrow as pa
from lance_namespace.errors import LanceNamespaceError

from backend.arrow.types import ArrowTypeInfo, arrow_type_str, column_kind, parse_arrow_type
from backend.errors import invalid

MAX_TYPE_TEXT = 200  # characters of a type typed for a column
MAX_TYPE_DEPTH = 8  # lists nested in a type typed for a column
MAX_LIST_SIZE = 2**31 - 1  # Arrow's largest fixed-size list


def _to_pyarrow(info: ArrowTypeInfo, text: str) -> pa.DataType:
    base = info.base
    if base in ("list", "large_list", "fixed_size_list"):
        if info.child is None:
            raise invalid(f"{text!r}: give the item type, e.g. list<int64>")
        child = _to_pyarrow(info.child, str(info.child))
        if base == "fixed_size_list":
            if not info.length:
                raise invalid(f"{text!r}: give the length, e.g. fixed_size_list<float32>[128]")
            if not 1 <= int(info.length) <= MAX_LIST_SIZE:
                raise invalid(f"{text!r}: the length is 1 to {MAX_LIST_SIZE:,} (Arrow's limit)")
            return pa.list_(child, int(info.length))
        return pa.large_list(child) if base == "large_list" else pa.list_(child)
    if base in ("decimal", "struct", "map", "dictionary"):
        raise invalid(f"{text!r}: {base} types cannot be set here; convert the file first")
    if base == "utf8_view":
        return pa.string_view()
    if base == "timestamp":
        raw = text.strip().lower().replace(" ", "")
        if raw == "timestamp":
            return pa.timestamp("us")
        try:
            return pa.type_for_alias(raw)
        except (ValueError, KeyError):
            raise invalid(
                f"{text!r}: write timestamp, timestamp[s], timestamp[ms], timestamp[us] or "
                "timestamp[ns]"
            ) from None
    try:
        return pa.type_for_alias(base)
    except (ValueError, KeyError):
        raise invalid(
            f"unknown Arrow type {text!r} (e.g. int64, float64, utf8, bool, date32, timestamp, "
            "list<int64>, fixed_size_list<float32>[128])"
        ) from None


def arrow_type(text: str) -> pa.DataType:
    """The pyarrow type a type text names (``int64``, ``utf8``, ``timestamp[ms]``,
    ``fixed_size_list<float32>[128]``...), read by ``backend.arrow.types.parse_arrow_type``."""
    text = str(text or "").strip()
    if not text:
        raise invalid("the type is empty")
    try:
        info = parse_arrow_type(text)
    except TypeError as exc:  # pragma: no cover - text always parses to something
        raise invalid(f"unknown Arrow type {text!r}: {exc}") from None
    return _to_pyarrow(info, text)


def apply_types(schema: pa.Schema, overrides: Mapping[str, str]) -> pa.Schema:
    """``schema`` with the types of ``overrides`` (column -> type text). A text that prints
    like the column's current type keeps it as it is; an unknown column or type is an
    ``InvalidInputError`` naming every problem."""
    fields = list(schema)
    problems = []
    for name, text in (overrides or {}).items():
        if name not in schema.names:
            problems.append(f"no column {name!r} in the upload")
            continue
        text = str(text or "").strip()
        index = schema.get_field_index(name)
        current = fields[index]
        printed = arrow_type_str(current.type)
        if not text:
            problems.append(f"column {name}: the type is empty")
            continue
        if len(text) > MAX_TYPE_TEXT or text.count("<") > MAX_TYPE_DEPTH:
            problems.append(
                f"column {name}: a type is written in at most {MAX_TYPE_TEXT} characters and "
                f"nests at most {MAX_TYPE_DEPTH} lists"
            )
            continue
        if text == printed or (str(parse_arrow_type(text)) == printed and "[" not in text):
            continue
        try:
            fields[index] = current.with_type(arrow_type(text))
        except LanceNamespaceError as exc:
            problems.append(f"column {name}: {exc}")
    if problems:
        raise invalid("; ".join(problems))
    return pa.schema(fields, metadata=schema.metadata)


def type_rows(schema: pa.Schema) -> pd.DataFrame:
    """The columns of a schema as rows: ``column``, ``type`` (the one printed form)."""
    return pd.DataFrame(
        {"column": list(schema.names), "type": [arrow_type_str(t) for t in schema.types]},
        columns=["column", "type"],
    )


def _fits(src: pa.DataType, dst: pa.DataType) -> bool:
    """Whether values of ``src`` can be written to a ``dst`` column (checked value by value
    when the batches are cast: an integer too large for the column fails then)."""
    t = pa.types
    if src.equals(dst) or t.is_null(src):
        return True
    if t.is_dictionary(src):
        return _fits(src.value_type, dst)
    listy = (t.is_list, t.is_large_list, t.is_fixed_size_list)
    if any(f(src) for f in listy) and any(f(dst) for f in listy):
        both_fixed = t.is_fixed_size_list(src) and t.is_fixed_size_list(dst)
        if both_fixed and src.list_size != dst.list_size:
            return False
        return _fits(src.value_type, dst.value_type)
    if t.is_struct(src) and t.is_struct(dst):
        names = [f.name for f in dst]
        return [f.name for f in src] == names and all(
            _fits(src.field(n).type, dst.field(n).type) for n in names
        )
    for family in (t.is_timestamp, t.is_date, t.is_time, t.is_duration):
        if family(dst):
            return family(src)
    try:
        ks, kd = column_kind(src), column_kind(dst)
    except TypeError:  # pragma: no cover
        return False
    allowed = {
        "integer": {"integer"},
        "float": {"integer", "float"},
        "decimal": {"integer", "decimal"},
        "string": {"string"},
        "binary": {"binary"},
        "boolean": {"boolean"},
    }
    return ks in allowed.get(kd, set())


def name_problems(names: Sequence[str]) -> list[str]:
    """Why an upload's column names cannot name a table's columns (empty: they can): a name
    given twice, a name with '.' (lance takes it for a nested column's path).
    The one check of an upload's names: its preview, its import, its fit to a table."""
    problems = []
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        problems.append("columns named twice in the upload: " + ", ".join(duplicates))
    dotted = [n for n in names if "." in n]
    if dotted:
        problems.append(
            "column names with '.', which lance reads as a nested column's path: "
            + ", ".join(dotted)
        )
    return problems


def schema_differences(upload: pa.Schema, table: pa.Schema, *, on: Sequence[str] = ()) -> list[str]:
    """Why rows of ``upload`` cannot go into a table of schema ``table`` (empty: they can):
    its names (:func:`name_problems`), missing and extra columns, types that do not fit, key
    columns absent."""
    problems = name_problems(upload.names)
    missing = [n for n in table.names if n not in upload.names]
    extra = [n for n in upload.names if n not in table.names]
    if missing:
        problems.append("missing columns (in the table, not in the upload): " + ", ".join(missing))
    if extra:
        problems.append("extra columns (not in the table): " + ", ".join(extra))
    for f in table:
        if f.name in upload.names and upload.names.count(f.name) == 1:
            src = upload.field(f.name).type
            if not _fits(src, f.type):
                problems.append(
                    f"column {f.name}: the table holds {arrow_type_str(f.type)}, the upload "
                    f"{arrow_type_str(src)}"
                )
    for key in on:
        if key not in table.names:
            problems.append(f"key column {key} is not a column of the table")
        elif key not in upload.names:
            problems.append(f"key column {key} is not in the upload")
    return problems
