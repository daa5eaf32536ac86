"""Deleting a table's rows by a filter, previewed first, as one new version, on both backends.

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
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from lance_namespace import DeleteFromTableRequest, LanceNamespace
from lance_namespace.errors import ErrorCode

from backend import gate
from backend.rules import ids, request_rules
from backend.services import catalog_views

from ..errors import guarded, invalid, make
from ..text import plural
from . import search

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


def _delimiter(ns: Any) -> str:
    return str(getattr(ns, "delimiter", None) or ids.DEFAULT_DELIMITER)


def _name(ns: Any, table_id: Sequence[str]) -> str:
    return ids.format_id(list(table_id), _delimiter(ns))


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
    request_rules.check_request(OPERATION, request, delimiter=_delimiter(ns))
    return request


@guarded("count_table_rows")
def preview_delete(
    ns: LanceNamespace, table_id: Sequence[str], filter: str | None, *, sample: int = SAMPLE_ROWS
) -> DeletePreview:
    """How many rows ``filter`` matches at the latest version, and up to ``sample`` of them."""
    request = check_filter(ns, table_id, filter)
    shown = search.preview(ns, list(table_id), filter=request.predicate, limit=sample)
    return DeletePreview(int(shown.total or 0), shown.rows)


def _check_count(ns: Any, table_id: list[str], count: int, expected: int | None) -> None:
    if expected is not None and count != expected:
        raise make(
            ErrorCode.CONCURRENT_MODIFICATION,
            f"the filter now matches {plural(count, 'row')} of {_name(ns, table_id)}, not the "
            f"{expected:,} previewed: the table changed; nothing was deleted, preview again",
        )
    if count == 0:
        raise invalid(f"no row of {_name(ns, table_id)} matches the filter: nothing to delete")


def _writes_locally(ns: Any) -> bool:
    return callable(getattr(ns, "open_dataset", None)) and callable(
        getattr(ns, "write_guard", None)
    )


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
    if _writes_locally(ns):
        local: Any = ns
        with gate.recorded(ns, OPERATION, request), local.write_guard(tid):
            dataset = local.open_dataset(tid)
            count = int(dataset.count_rows(filter=text))
            _check_count(ns, tid, count, expected_count)
            # no retry on a commit conflict: a rebased delete could take other rows
            done = dataset.delete(text, conflict_retries=0)
            deleted = int((done or {}).get("num_deleted_rows", count))
            return RowsDeleted(tuple(tid), text, deleted, int(dataset.version))
    count = search.count_rows(ns, tid, version=None, filter=text)
    _check_count(ns, tid, count, expected_count)
    answer = ns.delete_from_table(request)
    version = answer.version if answer.version is not None else None
    if version is None:
        version = catalog_views.latest_version(ns, tid)
    return RowsDeleted(tuple(tid), text, count, version)


__all__ = [
    "OPERATION",
    "SAMPLE_ROWS",
    "DeletePreview",
    "RowsDeleted",
    "check_filter",
    "delete_rows",
    "preview_delete",
]
