"""Staged changes for write-audit-publish (no streamlit): stage a real change of a table as its
next version that readers do not see, audit it, publish it with the batch builder, or discard it.

* :func:`stage_change` - one change (append, delete by filter, update by filter, overwrite) as
  an uncommitted version: ``backend.local.staging`` (local backend, file and object-store
  roots); its result is what ``batch_builder.create_version_op`` (or
  ``batch_builder.staged_op``) publishes;
* the audit, before anything is published: :func:`staged_rows`, :func:`staged_count` (a
  predicate that must hold), :func:`staged_schema`, :func:`staged_row_changes` (the rows
  inserted, updated and deleted, from the change itself), :func:`check_staged` (a
  presenter's checks: predicates, row-count ranges);
* :func:`discard_change`, :func:`list_staged`, :func:`cleanup_staged`.

Every write passes the gate (``stage_change``, ``discard_staged``, ``cleanup_staged``) and is
audited; a staged delete or overwrite is an admin's, as DeleteFromTable. Filters go through the
filter rule, update assignments through the update rules (``backend.services.rows``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import lance
import pyarrow as pa
from lance_namespace import LanceNamespace
from lance_namespace.errors import ErrorCode, LanceNamespaceError

from backend import gate
from backend.rules import filter_rules, ids, row_rules
from backend.services.search.query import count_rows
from backend.text import plural

from ..errors import guarded, invalid, make
from ..local import LocalNamespace, staging
from ..local.staging import StagedChange
from . import row_changes, rows

STAGE = "stage_change"  # the audit log's name (and role) of staging a change
DISCARD = "discard_staged"
CLEANUP_STAGED = "cleanup_staged"
STAGE_KINDS = staging.KINDS


def _local(ns: Any, what: str) -> Any:
    """The ``LocalNamespace`` behind ``ns`` (gated or not); ``UnsupportedOperationError``
    elsewhere."""
    inner = ns.inner if isinstance(ns, gate.GatedNamespace) else ns
    if not isinstance(inner, LocalNamespace):
        raise make(
            ErrorCode.UNSUPPORTED,
            f"{what} needs direct access to the table's files: local backend only (a folder "
            "or an object store opened by the console). Over REST, enter the path of a "
            "manifest your writer staged.",
        )
    return inner


def _pairs(assignments: Any) -> dict[str, str]:
    """``{column: expression}`` from a mapping, pairs, or ``SET`` lines (``col = expr``)."""
    if isinstance(assignments, str):
        return row_rules.parse_assignments(assignments)
    if isinstance(assignments, Mapping):
        return {str(c): str(e) for c, e in assignments.items()}
    try:
        return {str(c): str(e) for c, e in assignments}
    except (TypeError, ValueError):
        raise make(
            ErrorCode.INVALID_INPUT,
            "update is a pair (assignments, filter): assignments as {column: SQL expression}",
        ) from None


def _matched(ns: Any, table_id: list[str], predicate: str | None, verb: str) -> int:
    count = count_rows(ns, table_id, version=None, filter=predicate)
    if count == 0:
        raise make(
            ErrorCode.INVALID_INPUT,
            f"no row of {ids.display_id(table_id)} matches the filter: nothing to {verb}",
        )
    return count


def _change(ns: Any, table_id: list[str], kind: str, value: Any) -> staging.Change:
    """The change, checked with the rules the single writes use: the filter rule (through the
    DeleteFromTable / UpdateTable request rules), the update rules, the table's schema."""
    if kind == staging.APPEND:
        data = rows.as_table(value, "append")
        if data.num_rows == 0:
            raise make(ErrorCode.INVALID_INPUT, "append: the data has no rows; nothing to stage")
        schema = rows.table_schema(ns, table_id)
        missing = [n for n in schema.names if n not in data.column_names]
        extra = [n for n in data.column_names if n not in schema.names]
        if missing or extra:
            said = [
                f"lacks {', '.join(missing)}" if missing else "",
                f"has {', '.join(extra)}" if extra else "",
            ]
            raise make(
                ErrorCode.INVALID_INPUT,
                f"append: the data {' and '.join(p for p in said if p)}; the table's columns are "
                f"{', '.join(schema.names)} (overwrite to change them)",
            )
        return staging.Change(kind, data=rows.conformed(data, schema))
    if kind == staging.OVERWRITE:
        data = rows.as_table(value, "overwrite")
        if not data.schema.names:
            raise make(ErrorCode.INVALID_INPUT, "overwrite: the data has no columns")
        return staging.Change(kind, data=data)
    if kind == staging.DELETE:
        if not isinstance(value, str):
            raise make(ErrorCode.INVALID_INPUT, "delete is a filter (a SQL predicate)")
        predicate = str(rows.check_filter(ns, table_id, value).predicate)
        _matched(ns, table_id, predicate, "delete")
        return staging.Change(kind, predicate=predicate)
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise make(
            ErrorCode.INVALID_INPUT,
            "update is a pair (assignments, filter), e.g. ({'price': 'price * 2'}, 'id < 10')",
        )
    assignments, where = value
    schema = rows.table_schema(ns, table_id)
    request = rows.update_request(ns, table_id, _pairs(assignments), where, schema, all_rows=False)
    pairs = tuple((str(c), str(e)) for c, e in request.updates or [])
    rows.check_values(ns, table_id, schema, pairs)
    _matched(ns, table_id, request.predicate, "update")
    return staging.Change(kind, predicate=request.predicate, updates=pairs)


def _stage_request(table_id: list[str], kind: str | None, change: Any = None) -> dict[str, Any]:
    """What the audit log records of a staging (and what the role depends on: ``kind``)."""
    request: dict[str, Any] = {"id": table_id, "kind": kind}
    if isinstance(change, staging.Change):
        if change.predicate:
            request["predicate"] = change.predicate
        if change.updates:
            request["updates"] = [list(p) for p in change.updates]
        if change.data is not None:
            request["rows"] = change.data.num_rows
    return request


@guarded(STAGE)
def stage_change(
    ns: LanceNamespace,
    table_id: Sequence[str],
    *,
    append: Any = None,
    delete: str | None = None,
    update: tuple[Any, str | None] | None = None,
    overwrite: Any = None,
) -> staging.StagedChange:
    """Stage one real change of a table as its next version, uncommitted: readers of the table
    do not see it until a CreateTableVersion (:func:`create_version_op` of the result, alone or
    in a batch) publishes it. Exactly one of:

    * ``append``: rows (pyarrow Table or pandas DataFrame), cast to the table's schema;
    * ``delete``: a filter (the filter rule, as DeleteFromTable);
    * ``update``: ``(assignments, filter)``, assignments ``{column: SQL expression}``
      (the update rules, as UpdateTable; a filter is required);
    * ``overwrite``: rows that replace every row (their schema becomes the table's).

    The staged version is written with lance's own operation (Append, Delete, Update,
    Overwrite): see ``backend.local.staging``. Staging writes files, so it passes the gate
    as a write (``stage_change``; a delete or an overwrite is an admin's, as DeleteFromTable)
    and is audited. Local backend only (file and object-store roots)."""
    tid = [str(p) for p in table_id]
    given = {
        k: v
        for k, v in (
            (staging.APPEND, append),
            (staging.DELETE, delete),
            (staging.UPDATE, update),
            (staging.OVERWRITE, overwrite),
        )
        if v is not None
    }
    kind = next(iter(given)) if len(given) == 1 else None
    with gate.refusals(ns, STAGE, _stage_request(tid, kind)):
        if kind is None:
            shown = ", ".join(given) or "none"
            raise make(
                ErrorCode.INVALID_INPUT,
                f"stage one change at a time: append, delete, update or overwrite (given: {shown})",
            )
        local = _local(ns, "Staging a change")
        ids.check_id(tid)
        change = _change(ns, tid, kind, given[kind])
    with gate.recorded(ns, STAGE, _stage_request(tid, kind, change)):
        return staging.stage(local, tid, change)


@guarded(DISCARD)
def discard_change(ns: LanceNamespace, staged: StagedChange) -> list[str]:
    """Remove every file ``staged`` wrote and its record (``backend.local.staging.discard``:
    never a file a version of the table refers to; a published change is refused). A write
    through the gate (``discard_staged``), audited. Returns the files removed."""
    request = {"id": list(staged.table_id), "staged": staged.id, "version": staged.version}
    with gate.refusals(ns, DISCARD, request):
        local = _local(ns, "Discarding a staged change")
    with gate.recorded(ns, DISCARD, request):
        return staging.discard(local, staged)


def list_staged(
    ns: LanceNamespace, table_id: Sequence[str] | None = None
) -> list[staging.StagedChange]:
    """The staged changes recorded in the namespace (of one table), oldest first: the ones a
    page lost track of, to publish or discard (local backend; ``[]`` elsewhere)."""
    try:
        local = _local(ns, "Listing staged changes")
    except LanceNamespaceError:
        return []
    return staging.list_staged(local, table_id)


def cleanup_staged(
    ns: LanceNamespace,
    table_id: Sequence[str] | None = None,
    *,
    keep_unpublished: timedelta | None = staging.KEEP_UNPUBLISHED,
) -> staging.Swept:
    """The cleanup of staged changes (``backend.local.staging.sweep``), run by the console's
    cleanup: what changes that were never published left, and the preview manifest of those
    that were; never a file a version refers to. An admin's write (``cleanup_staged``),
    audited. Over REST: nothing to clean (``Swept`` of nothing)."""
    try:
        local = _local(ns, "Cleaning up staged changes")
    except LanceNamespaceError:
        return staging.Swept((), (), (), ())
    request = {"id": list(table_id) if table_id else []}
    with gate.recorded(ns, CLEANUP_STAGED, request):
        return staging.sweep(local, table_id, keep_unpublished=keep_unpublished)


# -- the audit: what a staged change holds, before it is published ------------------------------
AUDIT_ROWS = 1000  # rows a preview of a staged version reads at most, by default


def _preview(ns: LanceNamespace, staged: StagedChange) -> lance.LanceDataset:
    return staging.open_preview(_local(ns, "Reading a staged change"), staged)


def _base(ns: LanceNamespace, staged: StagedChange) -> lance.LanceDataset:
    local = _local(ns, "Reading a staged change")
    return local.open_dataset(list(staged.table_id), staged.based_on)


@guarded("query_table")
def staged_rows(
    ns: LanceNamespace,
    staged: StagedChange,
    *,
    filter: str | None = None,
    columns: Sequence[str] | None = None,
    limit: int | None = AUDIT_ROWS,
) -> pa.Table:
    """The rows of the staged version (as it would read once published), filtered (the filter
    rule) and limited."""
    if filter:
        filter_rules.check_filter(filter)
    return _preview(ns, staged).to_table(
        columns=list(columns) if columns else None, filter=filter or None, limit=limit
    )


@guarded("count_table_rows")
def staged_count(ns: LanceNamespace, staged: StagedChange, filter: str | None = None) -> int:
    """How many rows of the staged version match ``filter`` (every row without one)."""
    if filter:
        filter_rules.check_filter(filter)
    return int(_preview(ns, staged).count_rows(filter=filter or None))


def staged_schema(ns: LanceNamespace, staged: StagedChange) -> pa.Schema:
    """The staged version's schema (an overwrite may change it)."""
    return _preview(ns, staged).schema


@guarded("row_changes")
def staged_row_changes(
    ns: LanceNamespace, staged: StagedChange, *, max_rows: int = row_changes.ROW_CHANGES_MAX_ROWS
) -> row_changes.RowChanges:
    """The rows the staged change inserts, updates and deletes, from the change itself (its
    operation says which rows; no key and no stable row ids needed): an append inserts its new
    fragments' rows; a delete deletes the base rows its filter matches; an update replaces
    them with its new fragments' rows (the same rows, in the same order); an overwrite
    deletes every row and inserts its own. Beyond ``max_rows`` rows: refused."""
    base, preview = _base(ns, staged), _preview(ns, staged)
    old_ids = {f.fragment_id for f in base.get_fragments()}
    new_frags = [f for f in preview.get_fragments() if f.fragment_id not in old_ids]
    if staged.kind == staging.OVERWRITE:
        new_frags = list(preview.get_fragments())
    inserted = _fragment_rows(preview, new_frags)
    removed = base.schema.empty_table()
    predicate = staged.predicate
    if staged.kind in (staging.DELETE, staging.UPDATE):
        removed = base.to_table(filter=predicate)
    elif staged.kind == staging.OVERWRITE:
        removed = base.to_table()
    for what, table in (("inserted", inserted), ("deleted", removed)):
        if table.num_rows > max_rows:
            raise invalid(
                f"the staged change {what} {table.num_rows:,} rows, more than the "
                f"{max_rows:,} a row compare reads (max_rows)"
            )
    empty_new = preview.schema.empty_table()
    if staged.kind == staging.UPDATE:
        updated, before = row_changes.updated_rows(removed, inserted, inserted.column_names)
        inserted, removed = empty_new, base.schema.empty_table()
    else:
        updated, before = row_changes.updated_rows(empty_new, empty_new, [])
    return row_changes.RowChanges(
        from_version=staged.based_on,
        to_version=staged.version,
        method=row_changes.STAGED,
        inserted=inserted,
        updated=updated,
        deleted=removed,
        updated_before=before,
    )


def _fragment_rows(ds: lance.LanceDataset, fragments: Sequence[Any]) -> pa.Table:
    tables = [f.to_table() for f in fragments]
    return pa.concat_tables(tables) if tables else ds.schema.empty_table()


@dataclass(frozen=True)
class Check:
    """A presenter's check of a staged change: a SQL ``predicate`` every row must satisfy
    (its rows that do not are counted), and/or a row count range ``[min_rows, max_rows]``."""

    name: str
    predicate: str | None = None
    min_rows: int | None = None
    max_rows: int | None = None


@dataclass(frozen=True)
class CheckResult:
    check: Check
    passed: bool
    detail: str  # what was found, in words


def check_staged(
    ns: LanceNamespace, staged: StagedChange, checks: Sequence[Check]
) -> list[CheckResult]:
    """Each check against the staged version: a predicate holds when no row fails it (rows
    where it is false or null); a range when the staged row count lies in it. A failed check
    blocks the publish (the page's rule: :func:`all_passed`)."""
    out = []
    total = staged_count(ns, staged)
    for check in checks:
        problems = []
        if check.predicate:
            failing = staged_count(
                ns, staged, f"NOT ({check.predicate}) OR ({check.predicate}) IS NULL"
            )
            if failing:
                verb = "fails" if failing == 1 else "fail"
                problems.append(f"{failing:,} of {plural(total, 'row')} {verb} {check.predicate}")
        if check.min_rows is not None and total < check.min_rows:
            problems.append(f"{plural(total, 'row')}, fewer than {check.min_rows:,}")
        if check.max_rows is not None and total > check.max_rows:
            problems.append(f"{plural(total, 'row')}, more than {check.max_rows:,}")
        detail = "; ".join(problems) if problems else f"holds ({plural(total, 'row')})"
        out.append(CheckResult(check, not problems, detail))
    return out


def all_passed(results: Sequence[CheckResult]) -> bool:
    return all(r.passed for r in results)
