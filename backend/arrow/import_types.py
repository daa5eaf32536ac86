"""The type rules of an import: column types typed by a person (read by
``backend.arrow.types``, the one parser) as pyarrow types, a schema with some types edited,
and what keeps an upload from fitting a table (every difference named)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

import pandas as pd
import pyarrow as pa
from lance_namespace.errors import LanceNamespaceError

from backend.arrow.types import arrow_type_str, column_kind
from backend.errors import invalid

MAX_TYPE_TEXT = 200  # characters of a type typed for a column
MAX_TYPE_DEPTH = 8  # lists nested in a type typed for a column
MAX_LIST_SIZE = 2**31 - 1  # Arrow's largest fixed-size list


_LIST_FORM = re.compile(r"\s*([A-Za-z_]+)\s*<(.*)>\s*(?:\[\s*([0-9]+)\s*\])?\s*", re.S)
_FIELD_NAME = re.compile(r"\s*[A-Za-z_][A-Za-z_0-9]*\s*:(.*)", re.S)  # ``item: float32``
_LIST_BASES = {"list": "list", "large_list": "large_list", "largelist": "large_list"}
_FIXED_BASES = ("fixed_size_list", "fixedsizelist")
_SCALAR_ALIASES = {"date": "date32", "utf8_view": "string_view", "halffloat16": "float16"}
_TIMESTAMPS = ("timestamp", "timestamp[s]", "timestamp[ms]", "timestamp[us]", "timestamp[ns]")
_UNSET_KINDS = ("decimal", "struct", "map", "dictionary")


def _unknown(text: str) -> LanceNamespaceError:
    return invalid(
        f"unknown Arrow type {text!r} (e.g. int64, float64, utf8, bool, date32, timestamp, "
        "list<int64>, fixed_size_list<float32>[128])"
    )


def _typed(text: str, whole: str) -> pa.DataType:
    """The pyarrow type of ``text``, read whole: every part of it names the type (a part it
    cannot read is refused, never dropped). ``whole``: the text as typed, for messages."""
    form = _LIST_FORM.fullmatch(text)
    if form is not None:
        base, inner, length = form.group(1).lower(), form.group(2), form.group(3)
        if base.startswith(_UNSET_KINDS):
            raise invalid(f"{whole!r}: {base} types cannot be set here; convert the file first")
        if base not in _LIST_BASES and base not in _FIXED_BASES:
            raise _unknown(whole)
        named = _FIELD_NAME.fullmatch(inner)
        item = named.group(1) if named is not None else inner
        if not item.strip():
            raise invalid(f"{whole!r}: give the item type, e.g. list<int64>")
        child = _typed(item, whole)
        if base in _FIXED_BASES:
            if length is None:
                raise invalid(f"{whole!r}: give the length, e.g. fixed_size_list<float32>[128]")
            if not 1 <= int(length) <= MAX_LIST_SIZE:
                raise invalid(f"{whole!r}: the length is 1 to {MAX_LIST_SIZE:,} (Arrow's limit)")
            return pa.list_(child, int(length))
        if length is not None:
            raise invalid(f"{whole!r}: a length is for fixed_size_list<...>[n] only")
        return pa.large_list(child) if _LIST_BASES[base] == "large_list" else pa.list_(child)
    name = text.strip().lower().replace(" ", "")
    if name in _LIST_BASES or name in _FIXED_BASES:
        raise invalid(f"{whole!r}: give the item type, e.g. list<int64>")
    if name.startswith(_UNSET_KINDS):
        kind = next(k for k in _UNSET_KINDS if name.startswith(k))
        raise invalid(f"{whole!r}: {kind} types cannot be set here; convert the file first")
    if name.startswith("timestamp"):
        if name not in _TIMESTAMPS:
            raise invalid(
                f"{whole!r}: write timestamp, timestamp[s], timestamp[ms], timestamp[us] or "
                "timestamp[ns]"
            )
        return pa.timestamp("us") if name == "timestamp" else pa.type_for_alias(name)
    try:
        return pa.type_for_alias(_SCALAR_ALIASES.get(name, name))
    except (ValueError, KeyError):
        raise _unknown(whole) from None


def arrow_type(text: str) -> pa.DataType:
    """The pyarrow type a type text names (``int64``, ``utf8``, ``timestamp[ms]``,
    ``list<date64>``, ``fixed_size_list<float32>[128]``...). Every part of the text counts: a
    unit, a length or an item type it cannot read is an ``InvalidInputError``, never a
    nearby type."""
    text = str(text or "").strip()
    if not text:
        raise invalid("the type is empty")
    return _typed(text, text)


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
        if text == printed:
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
    """Why an upload's column names cannot name a table's columns (empty: they can): no
    column at all, a column without a name (lance writes it, then cannot read the table
    back), a name given twice, a name with '.' (lance takes it for a nested column's path).
    The one check of an upload's names: its preview, its import, its fit to a table."""
    if not names:
        return ["the upload has no columns"]
    problems = []
    unnamed = [str(i + 1) for i, n in enumerate(names) if not n.strip()]
    if unnamed:
        problems.append(
            "columns without a name (column " + ", ".join(unnamed) + "): name them in the file "
            "(pandas writes its index so; to_csv(index=False) leaves it out)"
        )
    counts = Counter(names)
    duplicates = sorted(n for n, count in counts.items() if count > 1 and n.strip())
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
