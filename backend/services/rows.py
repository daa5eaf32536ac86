"""Row edits on both backends, each one new version: deleting rows by a filter, updating
them (``SET col = expr WHERE filter``), both previewed first, and merge-insert (upsert).

:func:`preview_delete` counts the rows a filter matches and reads a sample of them (QueryTable
and CountTableRows, so nothing is written). :func:`delete_rows` deletes them, refusing

* an empty filter (no "delete everything" by accident: ``InvalidInputError``),
* a filter that matches nothing (no empty version is written),
* a count that moved since the preview (``expected_count``: ``ConcurrentModificationError``);

nothing is deleted then. The write is the spec's DeleteFromTable, an admin operation
(``backend.access``): over REST the request itself; on the local backend lance's
``dataset.delete`` under the namespace's write guard, where the count is checked again under
the lock, so that the rows deleted are exactly the rows counted. Over REST the count is read
just before the request (a write by another client in between cannot be excluded).
Either way the write passes the gate (``backend.gate``) and is recorded in the audit log as
``delete_from_table``.

:func:`preview_update` and :func:`update_rows` follow the same pattern for UpdateTable (an
editor's write: the values are changed, the old ones stay in earlier versions): the count and a
sample with the new values, then the update with ``expected_count``; an empty filter updates
every row only with ``all_rows=True``. :func:`merge_insert` is MergeInsertIntoTable with its
three clauses (a delete of the rows the data lacks makes it an admin's), or with ``dry_run``
the counts each clause would touch, computed by joining the keys with pyarrow. The checks of
both are ``backend.rules.row_rules``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from lance_namespace import (
    DeleteFromTableRequest,
    LanceNamespace,
    MergeInsertIntoTableRequest,
    UpdateTableRequest,
)
from lance_namespace.errors import ErrorCode, LanceNamespaceError
from lance_namespace_urllib3_client.models.query_table_request_columns import (
    QueryTableRequestColumns,
)

from backend import gate
from backend.arrow import ipc
from backend.capabilities import writes_datasets
from backend.rules import filter_errors, ids, request_rules, row_rules
from backend.services.search.preview import preview
from backend.services.search.query import (
    abbreviate,
    count_rows,
    iter_rows,
    query_request,
    run_query,
)
from backend.spec import catalog_views

from ..errors import clean_text, guarded, in_user_terms, invalid, make, raw_text
from ..text import plural
from . import imports

OPERATION = "delete_from_table"  # the spec's operation: its role and its audit name
SAMPLE_ROWS = 20


@dataclass(frozen=True)
class DeletePreview:
    """The rows a filter matches now: how many, and a sample of them (abbreviated); unpacks
    as ``count, sample``."""

    count: int
    sample: pd.DataFrame

    def __iter__(self) -> Iterator[Any]:
        return iter((self.count, self.sample))


@dataclass(frozen=True)
class RowsDeleted:
    table_id: tuple[str, ...]
    filter: str
    deleted: int
    version: int | None  # the new version

    def __str__(self) -> str:
        at = f" as v{self.version}" if self.version is not None else ""
        return f"Deleted {plural(self.deleted, 'row')} where {self.filter}{at}."


def _name(ns: Any, table_id: Sequence[str]) -> str:
    return ids.format_id(list(table_id), ids.delimiter_of(ns))


def check_filter(ns: Any, table_id: Sequence[str], filter: str | None) -> DeleteFromTableRequest:
    """The DeleteFromTable request for ``filter`` (stripped), after the static rules; an
    empty filter is refused."""
    text = (filter or "").strip()
    if not text:
        raise invalid(
            "a filter is required to delete rows (an empty filter would delete every row); "
            "nothing was deleted"
        )
    request = DeleteFromTableRequest(id=ids.check_id(list(table_id)), predicate=text)
    request_rules.check_request(OPERATION, request, delimiter=ids.delimiter_of(ns))
    return request


@guarded("count_table_rows")
def preview_delete(
    ns: LanceNamespace, table_id: Sequence[str], filter: str | None, *, sample: int = SAMPLE_ROWS
) -> DeletePreview:
    """How many rows ``filter`` matches at the latest version, and up to ``sample`` of them."""
    request = check_filter(ns, table_id, filter)
    shown = preview(ns, list(table_id), filter=request.predicate, limit=sample)
    return DeletePreview(int(shown.total or 0), shown.rows)


def _check_count(
    ns: Any, table_id: list[str], count: int, expected: int | None, action: str = "delete"
) -> None:
    """The rows a filter matches now, before a write (``action``: "delete" or "update")
    of them: the count previewed (else ``ConcurrentModificationError``), and at least one."""
    if expected is not None and count != expected:
        raise make(
            ErrorCode.CONCURRENT_MODIFICATION,
            f"the filter now matches {plural(count, 'row')} of {_name(ns, table_id)}, not the "
            f"{expected:,} previewed: the table changed; nothing was {action}d, preview again",
        )
    if count == 0:
        raise invalid(f"no row of {_name(ns, table_id)} matches the filter: nothing to {action}")


@guarded(OPERATION)
def delete_rows(
    ns: LanceNamespace,
    table_id: Sequence[str],
    filter: str | None,
    expected_count: int | None = None,
) -> RowsDeleted:
    """Delete the rows ``filter`` matches as one new version (see the module docstring);
    ``expected_count``: the previewed count, refused when it no longer holds."""
    asked = {"id": [str(p) for p in table_id], "predicate": filter}
    with gate.refusals(ns, OPERATION, asked):  # a filter the rules refuse: in the audit log
        request = check_filter(ns, table_id, filter)
    tid = list(request.id or [])
    text = str(request.predicate)
    if writes_datasets(ns):
        local: Any = ns
        with (
            filter_errors.translated(text, lambda: table_schema(ns, tid)),
            gate.recorded(ns, OPERATION, request),
            local.write_guard(tid),
        ):
            dataset = local.open_dataset(tid)
            count = int(dataset.count_rows(filter=text))
            _check_count(ns, tid, count, expected_count)
            # no retry on a commit conflict: a rebased delete could take other rows
            done = dataset.delete(text, conflict_retries=0)
            deleted = int((done or {}).get("num_deleted_rows", count))
            return RowsDeleted(tuple(tid), text, deleted, int(dataset.version))
    count = count_rows(ns, tid, version=None, filter=text)
    _check_count(ns, tid, count, expected_count)
    answer = ns.delete_from_table(request)
    version = answer.version if answer.version is not None else None
    if version is None:
        version = catalog_views.latest_version(ns, tid)
    return RowsDeleted(tuple(tid), text, count, version)


# -- update ---------------------------------------------------------------------------------------
UPDATE = "update_table"  # the spec's UpdateTable: an editor's write
MERGE = "merge_insert_into_table"  # the spec's MergeInsertIntoTable (admin with a delete clause)
DRY_RUN_MAX_ROWS = 5_000_000  # the rows a merge dry run reads the keys of, at most
DRY_RUN_PAGE_ROWS = 64 * 1024  # rows per page of keys read by a dry run (local backend)
_NEW = "new "  # the preview sample's column of a column's new value: "new <column>"
_UPDATE_EXPR = re.compile(r"Invalid update expression for column '([^']*)': (.*)", re.DOTALL)


@dataclass(frozen=True)
class UpdatePreview(DeletePreview):
    """The rows an update would change now: how many, and a sample of them with each set
    column's new value beside it (``new <column>``); unpacks as ``count, sample``."""


@dataclass(frozen=True)
class RowsUpdated:
    table_id: tuple[str, ...]
    updates: tuple[tuple[str, str], ...]
    filter: str  # "" : every row
    updated: int
    version: int | None  # the new version

    def __str__(self) -> str:
        sets = ", ".join(f"{c} = {e}" for c, e in self.updates)
        where = f" where {self.filter}" if self.filter else " (every row)"
        at = f" as v{self.version}" if self.version is not None else ""
        return f"Updated {plural(self.updated, 'row')}{where}: set {sets}{at}."


def table_schema(ns: LanceNamespace, table_id: Sequence[str]) -> pa.Schema:
    """The table's Arrow schema (``imports.table_arrow_schema``)."""
    return imports.table_arrow_schema(ns, table_id)


def update_request(
    ns: Any,
    table_id: Sequence[str],
    updates: Mapping[str, str],
    filter: str | None,
    schema: pa.Schema,
    *,
    all_rows: bool,
) -> UpdateTableRequest:
    """The UpdateTable request, after the update rules (``row_rules``) and the static rules."""
    clean = {str(c): str(e or "").strip() for c, e in (updates or {}).items()}
    row_rules.check_update(clean, schema.names, filter, all_rows=all_rows)
    text = (filter or "").strip()
    request = UpdateTableRequest(
        id=ids.check_id(list(table_id)),
        predicate=text or None,
        updates=[[c, e] for c, e in clean.items()],
    )
    request_rules.check_request(UPDATE, request, delimiter=ids.delimiter_of(ns))
    return request


def _explained(
    err: BaseException, column: str, expr: str, raw: str, schema: pa.Schema | None
) -> LanceNamespaceError:
    """A bad value expression in the user's terms (the engine's text kept aside)."""
    said = filter_errors.explain_filter_error(raw, schema, filter=expr) or clean_text(raw, 300)
    return in_user_terms(err, f"the value of {column} ({expr}): {said}; nothing was updated", raw)


def _update_error(
    exc: BaseException, updates: Sequence[Sequence[str]], schema: pa.Schema | None
) -> BaseException:
    """lance's refusal of an update's value expression in the user's terms (else ``exc``)."""
    if getattr(exc, "in_user_terms", False):
        return exc
    raw = raw_text(exc)
    m = _UPDATE_EXPR.search(raw)
    if not m:
        return exc
    exprs = {str(c): str(e) for c, e in updates}
    column = m.group(1)
    return _explained(exc, column, exprs.get(column, "?"), m.group(2), schema)


def _projection(
    ns: Any,
    table_id: list[str],
    schema: pa.Schema,
    updates: Sequence[Sequence[str]],
    *,
    filter: str | None,
    limit: int,
) -> pa.Table:
    """Up to ``limit`` rows matching ``filter`` with every column and each set column's new
    value (``_new_<i>``), evaluated by the engine (QueryTable's column aliases)."""
    aliases = {name: name for name in schema.names}
    aliases.update({f"_new_{i}": str(e) for i, (_, e) in enumerate(updates)})
    request = query_request(table_id, k=max(1, limit), filter=filter or None)
    request.columns = QueryTableRequestColumns(column_aliases=aliases)
    return run_query(ns, request)


def check_values(
    ns: Any, table_id: list[str], schema: pa.Schema, updates: Sequence[Sequence[str]]
) -> None:
    """Each value expression evaluates on the table (one row, no filter: an error is the
    expression's) to values its column can hold."""
    for column, expr in updates:
        try:
            got = _projection(ns, table_id, schema, [(column, expr)], filter=None, limit=1)
        except Exception as exc:
            raise _explained(exc, column, expr, raw_text(exc), schema) from None
        _check_cast(column, expr, got["_new_0"], schema.field(column).type)


def _check_cast(column: str, expr: str, values: Any, target: pa.DataType) -> None:
    if values.type == target or values.type == pa.null():
        return
    try:
        values.cast(target, safe=True)
    except (pa.ArrowException, ValueError) as exc:
        raise invalid(
            f"the value of {column} ({expr}) is {values.type}, which {column} ({target}) cannot "
            f"hold: {clean_text(str(exc), 200)}; nothing was updated"
        ) from None


@guarded("count_table_rows")
def preview_update(
    ns: LanceNamespace,
    table_id: Sequence[str],
    updates: Mapping[str, str],
    filter: str | None,
    *,
    all_rows: bool = False,
    sample: int = SAMPLE_ROWS,
) -> UpdatePreview:
    """How many rows ``filter`` matches at the latest version (every row with ``all_rows``
    and no filter), and up to ``sample`` of them with the new values beside the old."""
    tid = list(table_id)
    schema = table_schema(ns, tid)
    request = update_request(ns, tid, updates, filter, schema, all_rows=all_rows)
    pairs = [(str(c), str(e)) for c, e in request.updates or []]
    check_values(ns, tid, schema, pairs)
    where = request.predicate
    count = count_rows(ns, tid, version=None, filter=where)
    shown = _projection(ns, tid, schema, pairs, filter=where, limit=sample)
    for i, (column, expr) in enumerate(pairs):
        _check_cast(column, expr, shown[f"_new_{i}"], schema.field(column).type)
    frame = abbreviate(shown)
    frame = frame.rename(columns={f"_new_{i}": f"{_NEW}{c}" for i, (c, _) in enumerate(pairs)})
    order: list[str] = []
    for name in schema.names:
        order.append(name)
        if any(c == name for c, _ in pairs):
            order.append(f"{_NEW}{name}")
    return UpdatePreview(count, frame[[c for c in order if c in frame.columns]])


@guarded(UPDATE)
def update_rows(
    ns: LanceNamespace,
    table_id: Sequence[str],
    updates: Mapping[str, str],
    filter: str | None,
    expected_count: int | None = None,
    *,
    all_rows: bool = False,
) -> RowsUpdated:
    """Set each column of ``updates`` (``{column: SQL expression}``, evaluated on each row's
    current values) on the rows ``filter`` matches, as one new version. An empty filter is
    refused unless ``all_rows`` says every row; ``expected_count``: the previewed count,
    refused when it no longer holds. UpdateTable over REST; lance's ``dataset.update`` under
    the write guard locally, the count checked again under the lock."""
    tid = [str(p) for p in table_id]
    asked = {"id": tid, "predicate": filter, "updates": [[c, e] for c, e in updates.items()]}
    with gate.refusals(ns, UPDATE, asked):  # refused by the rules: in the audit log
        schema = table_schema(ns, tid)
        request = update_request(ns, tid, updates, filter, schema, all_rows=all_rows)
        pairs = tuple((str(c), str(e)) for c, e in request.updates or [])
        check_values(ns, tid, schema, pairs)
    where = request.predicate
    try:
        if writes_datasets(ns):
            local: Any = ns
            with gate.recorded(ns, UPDATE, request), local.write_guard(tid):
                dataset = local.open_dataset(tid)
                count = int(dataset.count_rows(filter=where))
                _check_count(ns, tid, count, expected_count, "update")
                # no retry on a commit conflict: a rebased update could take other rows
                done = dataset.update(dict(pairs), where=where, conflict_retries=0)
                updated = int((done or {}).get("num_rows_updated", count))
                return RowsUpdated(tuple(tid), pairs, where or "", updated, int(dataset.version))
        count = count_rows(ns, tid, version=None, filter=where)
        _check_count(ns, tid, count, expected_count, "update")
        answer = ns.update_table(request)
    except Exception as exc:
        mapped = _update_error(exc, pairs, schema)
        if mapped is exc:
            mapped = filter_errors.translate(exc, where, schema)
        if mapped is exc:
            raise
        raise mapped from exc
    version = answer.version
    if version is None:
        version = catalog_views.latest_version(ns, tid)
    updated = int(answer.updated_rows if answer.updated_rows is not None else count)
    return RowsUpdated(tuple(tid), pairs, where or "", updated, version)


# -- merge-insert (upsert) ------------------------------------------------------------------------
@dataclass(frozen=True)
class MergeCounts:
    """What a merge-insert did (or, ``dry_run``, would do): table rows updated (matched),
    data rows inserted (not matched), table rows deleted (not matched by the data)."""

    table_id: tuple[str, ...]
    on: tuple[str, ...]
    updated: int
    inserted: int
    deleted: int
    version: int | None  # the new version (a dry run: the version it read)
    dry_run: bool = False

    def __str__(self) -> str:
        parts = [
            f"{plural(self.updated, 'row')} updated",
            f"{plural(self.inserted, 'row')} inserted",
            f"{plural(self.deleted, 'row')} deleted",
        ]
        keys = ", ".join(self.on)
        if self.dry_run:
            at = f" (v{self.version})" if self.version is not None else ""
            return f"Dry run on {keys}{at}: {', '.join(parts)}; nothing was written."
        at = f" as v{self.version}" if self.version is not None else ""
        return f"Upserted on {keys}: {', '.join(parts)}{at}."


def as_table(data: Any, what: str = "the data to upsert") -> pa.Table:
    """``data`` (a pyarrow Table or RecordBatch, or a pandas DataFrame) as a pyarrow Table."""
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pd.DataFrame):
        return pa.Table.from_pandas(data, preserve_index=False)
    raise invalid(f"{what} is a pyarrow Table or a pandas DataFrame, not {type(data).__name__}")


def conformed(data: pa.Table, schema: pa.Schema) -> pa.Table:
    """``data`` in the table's column order and types (a value that does not fit: refused)."""
    data = data.select(schema.names)
    columns = []
    for field in schema:
        column = data[field.name]
        if column.type != field.type:
            try:
                column = column.cast(field.type, safe=True)
            except (pa.ArrowException, ValueError) as exc:
                detail = clean_text(str(exc), 200)
                raise invalid(
                    row_rules.type_problem(field.name, column.type, field.type, detail)
                ) from None
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema)


def _check_keys(data: pa.Table, on: Sequence[str]) -> None:
    keys = data.select(list(on))
    nulls = 0
    for name in on:
        nulls = max(nulls, int(keys[name].null_count))
    if nulls:
        mask = pc.is_null(keys[on[0]])
        for name in on[1:]:
            mask = pc.or_(mask, pc.is_null(keys[name]))
        nulls = int(pc.sum(mask.cast(pa.int64())).as_py() or 0)
        raise invalid(row_rules.key_problem(on, null_rows=nulls, repeated=0))
    counts = keys.group_by(list(on)).aggregate([([], "count_all")])
    repeated = counts.filter(pc.greater(counts["count_all"], 1))
    if repeated.num_rows:
        first = repeated.slice(0, 1).to_pylist()[0]
        example = ", ".join(f"{k} = {first[k]!r}" for k in on)
        raise invalid(
            row_rules.key_problem(on, null_rows=0, repeated=repeated.num_rows, example=example)
        )


def _key_pages(ns: Any, table_id: list[str], on: list[str], version: int) -> Iterator[pa.Table]:
    """The table's key columns at ``version``, in pages (local: a lance scan; REST: QueryTable
    pages)."""
    if writes_datasets(ns):
        dataset = ns.open_dataset(table_id, version)
        for batch in dataset.to_batches(columns=on, batch_size=DRY_RUN_PAGE_ROWS):
            yield pa.Table.from_batches([batch])
        return
    yield from iter_rows(ns, table_id, columns=on, version=version)


def _dry_run(ns: Any, table_id: list[str], data: pa.Table, on: list[str]) -> tuple[int, ...]:
    """(matched table rows, unmatched data rows, table rows the data does not match, the
    version read): pyarrow joins of the data's keys with the table's, page by page."""
    version = catalog_views.latest_version(ns, table_id)
    if version is None:
        raise make(ErrorCode.INVALID_TABLE_STATE, f"{_name(ns, table_id)} holds no data yet")
    total = count_rows(ns, table_id, version=version, filter=None)
    if total > DRY_RUN_MAX_ROWS:
        raise invalid(
            f"{_name(ns, table_id)} has {total:,} rows: a dry run reads the key columns of every "
            f"row, and reads at most {DRY_RUN_MAX_ROWS:,}; run the upsert without a dry run"
        )
    row = "_data_row"
    source = data.select(on).append_column(row, pa.array(range(data.num_rows), pa.int64()))
    seen = np.zeros(data.num_rows, dtype=bool)
    matched = unmatched = 0
    for page in _key_pages(ns, table_id, on, version):
        if page.num_rows == 0:
            continue
        page = page.select(on)
        hits = page.join(source, keys=on, join_type="left semi").num_rows
        matched += hits
        unmatched += page.num_rows - hits
        found = source.join(page, keys=on, join_type="left semi")[row]
        seen[found.to_numpy()] = True
    inserted = int(data.num_rows - int(seen.sum()))
    return matched, inserted, unmatched, version


@guarded(MERGE)
def merge_insert(
    ns: LanceNamespace,
    table_id: Sequence[str],
    data: Any,
    on: Sequence[str],
    when_matched_update: bool = True,
    when_not_matched_insert: bool = True,
    when_not_matched_by_source_delete: bool = False,
    dry_run: bool = False,
) -> MergeCounts:
    """Upsert ``data`` (a pyarrow Table or pandas DataFrame) into the table on the key columns
    ``on``: the table's rows whose keys the data holds are replaced by the data's
    (``when_matched_update``), the data's other rows are added (``when_not_matched_insert``),
    the table's rows whose keys the data lacks are deleted
    (``when_not_matched_by_source_delete``: an admin's). MergeInsertIntoTable on both
    backends, one new version; the counts lance reports. ``dry_run``: nothing is written, the
    counts each chosen clause would touch, from pyarrow joins of the keys."""
    tid = [str(p) for p in table_id]
    keys = [str(k) for k in on or []]
    flags = {
        "when_matched_update_all": bool(when_matched_update),
        "when_not_matched_insert_all": bool(when_not_matched_insert),
        "when_not_matched_by_source_delete": bool(when_not_matched_by_source_delete),
    }
    asked = {"id": tid, "on": keys, **flags}
    with gate.refusals(ns, MERGE, asked):  # refused by the rules: in the audit log
        table = as_table(data)
        schema = table_schema(ns, tid)
        row_rules.check_merge(
            schema,
            table.schema,
            keys,
            rows=table.num_rows,
            when_matched_update=when_matched_update,
            when_not_matched_insert=when_not_matched_insert,
            when_not_matched_by_source_delete=when_not_matched_by_source_delete,
        )
        table = conformed(table, schema)
        _check_keys(table, keys)
        request = MergeInsertIntoTableRequest.model_validate(
            {"id": ids.check_id(tid), "on": keys, **flags}
        )
        request_rules.check_request(MERGE, request, delimiter=ids.delimiter_of(ns))
    if dry_run:
        matched, inserted, unmatched, read = _dry_run(ns, tid, table, keys)
        return MergeCounts(
            tuple(tid),
            tuple(keys),
            matched if when_matched_update else 0,
            inserted if when_not_matched_insert else 0,
            unmatched if when_not_matched_by_source_delete else 0,
            read,
            dry_run=True,
        )
    answer = ns.merge_insert_into_table(request, ipc.to_ipc_stream(table))
    version = answer.version
    if version is None:
        version = catalog_views.latest_version(ns, tid)
    return MergeCounts(
        tuple(tid),
        tuple(keys),
        int(answer.num_updated_rows or 0),
        int(answer.num_inserted_rows or 0),
        int(answer.num_deleted_rows or 0),
        version,
    )
