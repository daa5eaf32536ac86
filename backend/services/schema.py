"""Schema evolution of a table: add, alter (rename, nullable, cast) and drop columns, each
previewed before anything is written, each one new version, on both backends.

* :func:`add_columns` - ``{name: sql_expression}`` (values computed from the row's columns),
  or ``{name: type}`` (a ``pyarrow.DataType``, the spec's JSON type, or type text with
  ``all_null=[name]``) for a column of nulls;
* :func:`alter_columns` - ``[{"path": ..., "rename": ..., "nullable": ..., "data_type": ...}]``;
* :func:`drop_columns` - ``[names]``.

Each goes through the spec's operation (AlterTableAddColumns, AlterTableAlterColumns,
AlterTableDropColumns), so through the write gate, the roles of ``backend.access`` (add and
alter: editor; drop: admin) and the audit log. Bad input is refused by
``backend.rules.schema_rules`` before anything is written (the refusal recorded in the audit
log), and what lance itself refuses (an expression over a missing column, a cast it cannot do)
reaches the caller as an ``InvalidInputError`` in the user's terms, lance's text kept in
``engine_message``; nothing is changed then.

``preview_add`` / ``preview_alter`` / ``preview_drop`` say before anything is written: the new
schema, the rows that will be written (an expression: every row; all-null, rename, nullable:
none, they change the schema only; a cast: every row) and the indexes lance drops with the
change (those on a dropped column; a rename or a nullable change keeps them; lance refuses a
cast of an indexed column, so the preview refuses it too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from lance_namespace import (
    AlterTableAddColumnsRequest,
    AlterTableAlterColumnsRequest,
    AlterTableDropColumnsRequest,
    DescribeTableRequest,
    LanceNamespace,
)
from lance_namespace.errors import ErrorCode, LanceNamespaceError

from backend import gate
from backend.rules import ids, request_rules, schema_rules
from backend.rules.columns import ColumnInfo, columns_from_schema
from backend.rules.filter_errors import echo, explain_filter_error

from ..errors import (
    in_user_terms,
    make,
    raw_text,
    readable_line,
)
from ..spec import catalog_views
from ..text import plural
from . import index_overview

ADD = "alter_table_add_columns"
ALTER = "alter_table_alter_columns"
DROP = "alter_table_drop_columns"


@dataclass(frozen=True)
class SchemaPreview:
    """What a schema change will do, read before anything is written."""

    operation: str  # ADD / ALTER / DROP
    table_id: tuple[str, ...]
    version: int | None  # the version previewed
    schema: pd.DataFrame  # the new schema: column, type, nullable, change
    rows: int  # the table's rows
    rows_rewritten: int  # the rows whose data lance writes
    indexes_dropped: tuple[str, ...]  # the indexes lance drops with the change
    request: Any = field(repr=False, default=None)  # the spec request the change sends

    @property
    def summary(self) -> str:
        written = (
            f"rewrites {plural(self.rows_rewritten, 'row')}"
            if self.rows_rewritten
            else "rewrites no row (the schema only)"
        )
        dropped = (
            f"drops the index {', '.join(self.indexes_dropped)}"
            if self.indexes_dropped
            else "drops no index"
        )
        return f"Writes one new version; {written}; {dropped}."


@dataclass(frozen=True)
class SchemaChanged:
    table_id: tuple[str, ...]
    operation: str
    columns: tuple[str, ...]
    version: int | None

    def __str__(self) -> str:
        verb = {ADD: "Added", ALTER: "Altered", DROP: "Dropped"}[self.operation]
        at = f" as v{self.version}" if self.version is not None else ""
        return f"{verb} {plural(len(self.columns), 'column')} ({', '.join(self.columns)}){at}."


# -- reads ------------------------------------------------------------------------------------


def table_schema(ns: LanceNamespace, table_id: Sequence[str]) -> list[ColumnInfo]:
    """The table's top-level columns at its latest version."""
    answer = ns.describe_table(DescribeTableRequest(id=list(table_id), load_detailed_metadata=True))
    return columns_from_schema(getattr(answer, "var_schema", None))


def indexes_by_column(ns: LanceNamespace, table_id: Sequence[str]) -> dict[str, list[str]]:
    """Column name -> the names of the indexes on it (ListTableIndices)."""
    out: dict[str, list[str]] = {}
    for index in index_overview.list_indexes(ns, table_id):
        get = index.get if isinstance(index, dict) else lambda k, i=index: getattr(i, k, None)
        name = str(get("index_name") or get("name") or "")
        for column in get("columns") or []:
            out.setdefault(str(column), []).append(name)
    return out


def _rows(ns: LanceNamespace, table_id: Sequence[str]) -> int:
    return int(index_overview.table_num_rows(ns, table_id) or 0)


def _frame(rows: list[tuple[str, str, bool, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["column", "type", "nullable", "change"])


def _unchanged(columns: Sequence[ColumnInfo]) -> list[tuple[str, str, bool, str]]:
    return [(c.name, c.arrow_type_str, c.nullable, "") for c in columns]


# -- add --------------------------------------------------------------------------------------


def _add_request(table_id: Sequence[str], new: Sequence[schema_rules.NewColumn]) -> Any:
    return AlterTableAddColumnsRequest.model_validate(
        {
            "id": list(table_id),
            "new_columns": [{"name": c.name, "expression": c.expression} for c in new],
        }
    )


def preview_add(
    ns: LanceNamespace,
    table_id: Sequence[str],
    columns: Mapping[str, Any],
    *,
    all_null: Sequence[str] = (),
) -> SchemaPreview:
    """What :func:`add_columns` with these arguments will do (nothing is written). A new
    column's type, when computed from an expression, is known only once lance computed it
    (``from the expression``)."""
    tid = ids.check_id(list(table_id))
    existing = table_schema(ns, tid)
    new = schema_rules.check_new_columns(columns, existing, null_types=all_null)
    request = _add_request(tid, new)
    request_rules.check_request(ADD, request, delimiter=ids.delimiter_of(ns))
    rows = _rows(ns, tid)
    schema = _unchanged(existing) + [
        (
            c.name,
            str(c.null_type) if c.null_type is not None else "from the expression",
            True,
            "added, all null" if c.all_null else f"added: {echo(c.expression)}",
        )
        for c in new
    ]
    written = 0 if all(c.all_null for c in new) else rows
    return SchemaPreview(
        ADD,
        tuple(tid),
        catalog_views.latest_version(ns, tid),
        _frame(schema),
        rows,
        written,
        (),
        request,
    )


def add_columns(
    ns: LanceNamespace,
    table_id: Sequence[str],
    columns: Mapping[str, Any],
    *,
    all_null: Sequence[str] = (),
) -> SchemaChanged:
    """Add columns as one new version: ``{name: sql_expression}`` computes each row's value
    from the row (``"price * 2"``); ``{name: pa.int64()}`` (or a JSON type, or type text with
    its name in ``all_null``) adds a column of nulls of that type."""
    asked = {
        "id": [str(p) for p in table_id],
        "new_columns": [{"name": str(k), "expression": str(v)} for k, v in columns.items()],
    }
    with gate.refusals(ns, ADD, asked):
        preview = preview_add(ns, table_id, columns, all_null=all_null)
    request = preview.request
    try:
        answer = ns.alter_table_add_columns(request)
    except LanceNamespaceError as err:
        raise _add_error(err, request) from err
    return _changed(ns, preview, [str(name) for name in columns], answer)


def _is_bad_input(err: BaseException) -> bool:
    """Lance refused the input (also when it says so inside an internal error)."""
    code = int(getattr(err, "code", -1))
    if code == ErrorCode.INVALID_INPUT:
        return True
    raw = raw_text(err)
    return code == ErrorCode.INTERNAL and "invalid" in raw.lower()


def _add_error(err: LanceNamespaceError, request: Any) -> BaseException:
    """A refused expression in the user's terms: the column, its expression, what is wrong."""
    if getattr(err, "in_user_terms", False):
        return err
    raw = raw_text(err)
    # a value the expression fails on (a cast, a division by zero) is bad input too, though
    # lance reports it as an internal error
    if not _is_bad_input(err) and explain_filter_error(raw) is None:
        return err
    entries = list(request.new_columns or [])
    if len(entries) == 1:
        what = f"the expression for {entries[0].name} ({echo(str(entries[0].expression))})"
    else:
        what = "the expressions"
    explained = explain_filter_error(raw) or _engine_words(raw)
    return in_user_terms(err, f"{what}: {explained}; nothing was changed", raw)


def _engine_words(raw: str) -> str:
    line = readable_line(raw)
    for prefix in (f"{ADD}: ", f"{ALTER}: ", "add_columns: ", "alter_columns: "):
        line = line.removeprefix(prefix)
    return line


# -- alter ------------------------------------------------------------------------------------


def preview_alter(
    ns: LanceNamespace, table_id: Sequence[str], alterations: Sequence[Mapping[str, Any]]
) -> SchemaPreview:
    """What :func:`alter_columns` will do (nothing is written)."""
    tid = ids.check_id(list(table_id))
    existing = table_schema(ns, tid)
    indexed = indexes_by_column(ns, tid)
    checked = schema_rules.check_alterations(alterations, existing, indexed)
    rows = _rows(ns, tid)
    for checked_change in checked:
        if checked_change.nullable is False:
            nulls = _null_count(ns, tid, checked_change.path)
            if nulls:
                raise make(
                    ErrorCode.INVALID_INPUT,
                    f"the column {checked_change.path} holds {plural(nulls, 'null')}: it cannot be "
                    "made non-nullable; nothing was changed",
                )
    by_path = {c.path: c for c in checked}
    schema = []
    for column in existing:
        change = by_path.get(column.name)
        if change is None:
            schema.append((column.name, column.arrow_type_str, column.nullable, ""))
            continue
        words = []
        if change.rename is not None:
            words.append(f"renamed from {column.name}")
        if change.data_type is not None:
            words.append(f"cast from {column.arrow_type_str}")
        if change.nullable is not None:
            words.append("nullable" if change.nullable else "not nullable")
        schema.append(
            (
                change.rename or column.name,
                str(change.data_type) if change.data_type is not None else column.arrow_type_str,
                column.nullable if change.nullable is None else change.nullable,
                "; ".join(words),
            )
        )
    cast = any(c.data_type is not None for c in checked)
    request = AlterTableAlterColumnsRequest.model_validate(
        {"id": tid, "alterations": [c.request_entry() for c in checked]}
    )
    request_rules.check_request(ALTER, request, delimiter=ids.delimiter_of(ns))
    return SchemaPreview(
        ALTER,
        tuple(tid),
        catalog_views.latest_version(ns, tid),
        _frame(schema),
        rows,
        rows if cast else 0,
        (),  # a rename or a nullable change keeps the indexes; a cast of an indexed column
        # is refused above
        request,
    )


def _null_count(ns: LanceNamespace, table_id: list[str], column: str) -> int:
    from backend.services.search.query import count_rows

    return int(count_rows(ns, table_id, version=None, filter=f"`{column}` IS NULL"))


def alter_columns(
    ns: LanceNamespace, table_id: Sequence[str], alterations: Sequence[Mapping[str, Any]]
) -> SchemaChanged:
    """Rename a column, change whether it may hold nulls, or cast it to another type of its
    kind (integers, floating-point numbers, strings, binary), as one new version."""
    asked = {"id": [str(p) for p in table_id], "alterations": [dict(a) for a in alterations]}
    with gate.refusals(ns, ALTER, _jsonable(asked)):
        preview = preview_alter(ns, table_id, alterations)
    request = preview.request
    try:
        answer = ns.alter_table_alter_columns(request)
    except LanceNamespaceError as err:
        raise _alter_error(err) from err
    return _changed(ns, preview, [str(a.get("path")) for a in alterations], answer)


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _alter_error(err: LanceNamespaceError) -> BaseException:
    if getattr(err, "in_user_terms", False) or not _is_bad_input(err):
        return err
    raw = raw_text(err)
    if "must be a JSON string" in raw:
        return in_user_terms(
            err,
            "this server does not take a new column type in the spec's form (a JSON type): "
            "it cannot cast columns; nothing was changed",
            raw,
            code=ErrorCode.UNSUPPORTED,
        )
    return in_user_terms(err, f"{_engine_words(raw)}; nothing was changed", raw)


# -- drop -------------------------------------------------------------------------------------


def preview_drop(
    ns: LanceNamespace, table_id: Sequence[str], columns: Sequence[str]
) -> SchemaPreview:
    """What :func:`drop_columns` will do (nothing is written): lance drops every index on a
    dropped column; no row is rewritten (the columns leave the schema)."""
    tid = ids.check_id(list(table_id))
    existing = table_schema(ns, tid)
    names = schema_rules.check_drop(columns, existing)
    indexed = indexes_by_column(ns, tid)
    dropped = tuple(sorted({i for name in names for i in indexed.get(name, [])}))
    schema = [
        (c.name, c.arrow_type_str, c.nullable, "dropped" if c.name in names else "")
        for c in existing
    ]
    request = AlterTableDropColumnsRequest(id=tid, columns=names)
    request_rules.check_request(DROP, request, delimiter=ids.delimiter_of(ns))
    return SchemaPreview(
        DROP,
        tuple(tid),
        catalog_views.latest_version(ns, tid),
        _frame(schema),
        _rows(ns, tid),
        0,
        dropped,
        request,
    )


def drop_columns(
    ns: LanceNamespace, table_id: Sequence[str], columns: Sequence[str]
) -> SchemaChanged:
    """Drop columns as one new version (admin); the indexes on them go with them."""
    asked = {"id": [str(p) for p in table_id], "columns": [str(c) for c in columns or []]}
    with gate.refusals(ns, DROP, asked):
        preview = preview_drop(ns, table_id, columns)
    answer = ns.alter_table_drop_columns(preview.request)
    return _changed(ns, preview, list(preview.request.columns), answer)


def _changed(
    ns: LanceNamespace, preview: SchemaPreview, columns: Sequence[str], answer: Any
) -> SchemaChanged:
    version = getattr(answer, "version", None)
    if not version:
        version = catalog_views.latest_version(ns, list(preview.table_id))
    return SchemaChanged(preview.table_id, preview.operation, tuple(columns), version)
