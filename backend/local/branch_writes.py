"""Writes and reads on a table's branch, for the local backend.

pylance 14's ``DirectoryNamespace`` ignores ``branch`` on most operations that carry it:
InsertIntoTable, MergeInsertIntoTable, UpdateTable, DeleteFromTable, AlterTable*Columns,
CreateTableTag, UpdateTableTag, CreateTableIndex, DropTableIndex (and DescribeTable, QueryTable,
ListTableIndices, DescribeTableIndexStats, ExplainTableQueryPlan, AnalyzeTableQueryPlan among
the reads) act on **main** and report success (UpdateTableTag: on main's version of that
number). So a request naming a branch other than main never reaches pylance's write path
here: it runs on the branch's own dataset (lance's ``checkout_version((branch, None))``),
and a write kind that cannot be done on a branch is refused (``UnsupportedOperationError``)
rather than applied to main.

pylance does honour the branch on RestoreTable, CountTableRows, GetTableStats,
ListTableVersions and DescribeTableVersion (:data:`PYLANCE_HONOURS` for the writes): those go
to pylance unchanged. The reads are answered in ``backend.local.namespace`` (the branch's
dataset, ``branch_indexes``); index builds run on the branch's dataset there too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import lance
import lance_namespace as ln
import pyarrow as pa
from lance_namespace.errors import ErrorCode

from ..arrow.ipc import to_ipc_stream
from ..capabilities import LANCE_DIR
from ..errors import make

MAIN = "main"
# Writes pylance 14's directory namespace runs on the request's branch itself (what the
# ``lance-dir`` server profile says of pylance behind its REST adapter).
PYLANCE_HONOURS: frozenset[str] = LANCE_DIR.branch_writes_kept


def target_branch(request: Any) -> str | None:
    """The branch a request names, ``None`` for main (absent, empty or ``"main"``)."""
    branch = getattr(request, "branch", None)
    if not branch or branch == MAIN:
        return None
    return str(branch)


def open_branch(
    main: lance.LanceDataset, branch: str, table: str, version: int | None = None
) -> lance.LanceDataset:
    """``main``'s table checked out at ``branch`` (its latest version, or ``version`` of the
    branch). A branch the table does not have: ``TableBranchNotFoundError`` naming the ones
    it has."""
    known = main.branches.list()
    if branch not in known:
        names = ", ".join(sorted(known)) or "none"
        raise make(
            ErrorCode.TABLE_BRANCH_NOT_FOUND,
            f"table {table} has no branch {branch!r} (its branches: {names})",
        )
    try:
        return main.checkout_version((branch, version))
    except (ValueError, OSError) as exc:
        if version is not None and "not found" in str(exc).lower():
            raise make(
                ErrorCode.TABLE_VERSION_NOT_FOUND,
                f"branch {branch!r} of table {table} has no version {version}",
            ) from exc
        raise


def _reader(data: Any) -> pa.RecordBatchReader:
    return pa.ipc.open_stream(pa.BufferReader(to_ipc_stream(data)))


def _insert(ds: lance.LanceDataset, req: ln.InsertIntoTableRequest, data: Any) -> Any:
    mode = (req.mode or "append").lower()
    if mode not in ("append", "overwrite"):
        raise make(ErrorCode.INVALID_INPUT, f"insert_into_table: unknown mode {req.mode!r}")
    table = _reader(data).read_all()
    ds.insert(table, mode=mode)
    return ln.InsertIntoTableResponse(num_inserted_rows=table.num_rows, version=ds.version)


def _merge_insert(ds: lance.LanceDataset, req: ln.MergeInsertIntoTableRequest, data: Any) -> Any:
    builder = ds.merge_insert(list(req.on or []))
    if req.when_matched_update_all:
        builder = builder.when_matched_update_all(req.when_matched_update_all_filt or None)
    if req.when_not_matched_insert_all:
        builder = builder.when_not_matched_insert_all()
    if req.when_not_matched_by_source_delete:
        builder = builder.when_not_matched_by_source_delete(
            req.when_not_matched_by_source_delete_filt or None
        )
    stats = builder.execute(_reader(data).read_all())
    return ln.MergeInsertIntoTableResponse(
        num_updated_rows=int(stats.get("num_updated_rows", 0)),
        num_inserted_rows=int(stats.get("num_inserted_rows", 0)),
        num_deleted_rows=int(stats.get("num_deleted_rows", 0)),
        version=_latest(ds),
    )


def _update(ds: lance.LanceDataset, req: ln.UpdateTableRequest, data: Any) -> Any:
    updates = {str(pair[0]): str(pair[1]) for pair in (req.updates or [])}
    stats: dict[str, Any] = dict(ds.update(updates, where=req.predicate or None))
    return ln.UpdateTableResponse(
        updated_rows=int(stats.get("num_updated_rows", stats.get("num_rows_updated", 0))),
        version=_latest(ds),
    )


def _delete(ds: lance.LanceDataset, req: ln.DeleteFromTableRequest, data: Any) -> Any:
    ds.delete(req.predicate or "")
    return ln.DeleteFromTableResponse(version=_latest(ds))


def _add_columns(ds: lance.LanceDataset, req: ln.AlterTableAddColumnsRequest, data: Any) -> Any:
    transforms: dict[str, str] = {}
    for entry in req.new_columns or []:
        if getattr(entry, "virtual_column", None) is not None or not entry.expression:
            raise make(
                ErrorCode.UNSUPPORTED,
                f"alter_table_add_columns: only columns from SQL expressions can be added on a "
                f"branch by the local backend ({entry.name!r} has none)",
            )
        transforms[entry.name] = entry.expression
    ds.add_columns(transforms)
    return ln.AlterTableAddColumnsResponse(version=_latest(ds))


def _alter_columns(ds: lance.LanceDataset, req: ln.AlterTableAlterColumnsRequest, data: Any) -> Any:
    alterations: list[dict[str, Any]] = []
    for entry in req.alterations or []:
        if getattr(entry, "virtual_column", None) is not None:
            raise make(
                ErrorCode.UNSUPPORTED,
                "alter_table_alter_columns: virtual columns cannot be altered on a branch by "
                "the local backend",
            )
        change: dict[str, Any] = {"path": entry.path}
        if entry.rename is not None:
            change["name"] = entry.rename
        if entry.nullable is not None:
            change["nullable"] = entry.nullable
        if entry.data_type is not None:
            raise make(
                ErrorCode.UNSUPPORTED,
                f"alter_table_alter_columns: changing the type of {entry.path!r} on a branch is "
                "not supported by the local backend (rename and nullability are)",
            )
        alterations.append(change)
    ds.alter_columns(*alterations)  # type: ignore[arg-type]  # lance's AlterColumn: a dict
    return ln.AlterTableAlterColumnsResponse(version=_latest(ds))


def _drop_columns(ds: lance.LanceDataset, req: ln.AlterTableDropColumnsRequest, data: Any) -> Any:
    ds.drop_columns(list(req.columns or []))
    return ln.AlterTableDropColumnsResponse(version=_latest(ds))


def _create_tag(ds: lance.LanceDataset, req: ln.CreateTableTagRequest, data: Any) -> Any:
    branch = target_branch(req)
    version = req.version if req.version is not None else ds.version
    ds.tags.create(req.tag, (branch, version))
    return ln.CreateTableTagResponse()


def _drop_index(ds: lance.LanceDataset, req: ln.DropTableIndexRequest, data: Any) -> Any:
    names = sorted(ix.name for ix in ds.describe_indices() if not ix.name.startswith("__"))
    if req.index_name not in names:
        raise make(
            ErrorCode.TABLE_INDEX_NOT_FOUND,
            f"branch {target_branch(req)!r} has no index {req.index_name!r} (its indexes: "
            f"{', '.join(names) or 'none'}); nothing was dropped",
        )
    ds.drop_index(str(req.index_name))
    txn = ds.read_transaction(ds.version)
    return ln.DropTableIndexResponse(transaction_id=getattr(txn, "uuid", None))


def _update_tag(ds: lance.LanceDataset, req: ln.UpdateTableTagRequest, data: Any) -> Any:
    ds.tags.update(req.tag, (target_branch(req), req.version))
    return ln.UpdateTableTagResponse()


def _latest(ds: lance.LanceDataset) -> int:
    """The version the write left on ``ds``'s branch."""
    return int(ds.version)


WRITERS: dict[str, Callable[[lance.LanceDataset, Any, Any], Any]] = {
    "insert_into_table": _insert,
    "merge_insert_into_table": _merge_insert,
    "update_table": _update,
    "delete_from_table": _delete,
    "alter_table_add_columns": _add_columns,
    "alter_table_alter_columns": _alter_columns,
    "alter_table_drop_columns": _drop_columns,
    "create_table_tag": _create_tag,
    "drop_table_index": _drop_index,
    "update_table_tag": _update_tag,
}


def refuse(op: str, branch: str) -> Exception:
    """The refusal of a write kind the local backend cannot run on a branch."""
    return make(
        ErrorCode.UNSUPPORTED,
        f"{op} on branch {branch!r} is not supported by the local backend; nothing was "
        "written (neither to the branch nor to main)",
    )


def write(
    op: str, main: lance.LanceDataset, branch: str, req: Any, data: Any, *, table: str
) -> Any:
    """Run write ``op`` on ``branch`` of ``main``'s table (the caller holds the write
    guard). ``op`` without a branch writer: refused, nothing written."""
    writer = WRITERS.get(op)
    if writer is None:
        raise refuse(op, branch)
    ds = open_branch(main, branch, table)
    return writer(ds, req, data)
