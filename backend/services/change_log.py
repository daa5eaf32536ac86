"""What each version of a table did, and which rows changed between two versions.

:func:`change_log`: one row per version with its operation, the rows it added, deleted and
updated, the fragments it added and removed, when, and, where the console wrote it, who (the
audit log's user) and its transaction id.

* Local and object-store roots: the operation is lance's transaction kind (DescribeTransaction);
  the counts come from the fragments of version ``v`` and of the version before it
  (``v - 1``), read from their manifests: rows added are the physical rows of the fragments
  new in ``v`` (plus rows whose deletion was undone, e.g. by a restore), rows deleted are the
  deletion-file counts that grew plus the live rows of the fragments removed. An Update
  (``dataset.update``, merge-insert) deletes the old copy of each row it changes and writes
  the new one: of its new rows, as many as it deleted count as updated, the rest as added
  (the rest of its deletions as deleted). A merge insert the console wrote is split by its
  clauses instead (the audit entry's request): one that may update, insert and delete, and
  did write and remove rows, has no count (``None``, with a note): its fragments cannot tell
  an update from an insert and a delete. A compaction (Rewrite) moves rows without changing
  them: nothing is added, deleted or updated. Where ``v - 1`` was deleted the counts are not
  known (``None``, with a note).
* REST: the operation (DescribeTransaction), the timestamp (ListTableVersions) and the rows
  of each version (the cheapest count the server gives, ``versions.version_rows``); rows
  added / deleted / updated and fragments are not exposed there (``None``, and the frame's
  ``attrs["note"]`` says so).
* The audit log (the gated namespace's, or ``entries``): an entry of a write to this table
  whose span (from its start to its end, give or take a few milliseconds) holds the version's
  commit time: the one whose transaction id is the version's lance uuid first, else the
  nearest.

Row-level compares of two versions: ``backend.services.row_changes``.

On a branch (``branch=``) the change log reads the branch's own versions. Lance numbers them
on from the version the branch was made at: a branch made from main's version 2 has versions 2 (its own
copy of main's, a shallow clone sharing its fragments and row ids), 3, 4... The change log
lists them from there; the first one is counted against the parent at that version (nothing
added or deleted) and says where the branch was made from. Over REST the operations are not
available on a branch (DescribeTransaction has no branch: it would answer main's version of
that number).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from lance_namespace import LanceNamespace
from lance_namespace.errors import LanceNamespaceError

from backend import audit
from backend.capabilities import opens_datasets
from backend.rules import ids
from backend.text import plural

from ..errors import guarded
from . import branches as brs
from . import versions as vsv

Progress = Callable[[int, int], None]


CHANGE_LOG_COLUMNS = [
    "version",
    "timestamp",
    "operation",
    "lance_operation",
    "rows",
    "rows_added",
    "rows_deleted",
    "rows_updated",
    "fragments_added",
    "fragments_removed",
    "user",
    "audit_operation",
    "transaction_id",
    "uuid",
    "note",
]


COUNT_COLUMNS = (
    "rows",
    "rows_added",
    "rows_deleted",
    "rows_updated",
    "fragments_added",
    "fragments_removed",
)


# lance's transaction kinds in the user's words (any other kind: its own name, lower case)
OPERATION_LABELS = {
    "Append": "append",
    "Delete": "delete",
    "Update": "update",
    "Overwrite": "overwrite",
    "CreateIndex": "index",
    "Rewrite": "compaction",
    "ReserveFragments": "compaction (fragment ids reserved)",
    "Merge": "schema change (columns added)",
    "Project": "schema change",
    "Restore": "restore",
    "UpdateConfig": "config change",
    "DataReplacement": "data replacement",
    "Clone": "clone",
}


# the console's audit operations that name an operation more precisely than lance's kind
AUDIT_LABELS = {
    "merge_insert_into_table": "merge insert",
    "update_table": "update",
    "delete_from_table": "delete",
    "restore_table": "restore",
    "alter_table_add_columns": "schema change (columns added)",
    "alter_table_alter_columns": "schema change (columns altered)",
    "alter_table_drop_columns": "schema change (columns dropped)",
}


REST_NOTE = (
    "Over REST the server gives each version's operation, time and row count; rows added, "
    "deleted and updated and fragments are not exposed by the REST API."
)


REST_BRANCH_NOTE = (
    "Over REST, on a branch, the server gives each version's time and row count; its "
    "operation is not available (the REST API's DescribeTransaction addresses main's versions "
    "only), nor are rows added, deleted and updated and fragments."
)


BRANCH_CREATED = "branch created"  # the operation of a branch's first version


# how far a version's commit time may lie outside a write's span and still be that write's:
# times are kept to the millisecond, and a REST server's version times are coarser (pylance's
# come in steps of several milliseconds)
AUDIT_SLACK_MS = 16.0


def _label(kind: str) -> str:
    return OPERATION_LABELS.get(kind, kind.lower() if kind and kind != "?" else "?")


@dataclass(frozen=True)
class _Fragment:
    physical: int
    deleted: int
    files: tuple[str, ...]

    @property
    def live(self) -> int:
        return self.physical - self.deleted


def _fragments(ds: Any) -> dict[int, _Fragment]:
    """The fragments of one version (from its manifest): id -> physical rows, deleted rows,
    data files."""
    out = {}
    for frag in ds.get_fragments():
        meta = frag.metadata
        deletion = meta.deletion_file
        deleted = getattr(deletion, "num_deleted_rows", None) if deletion is not None else 0
        if deleted is None:  # an old deletion file without its count: count the live rows
            deleted = int(meta.physical_rows) - int(frag.count_rows())
        files = tuple(sorted(f.path for f in meta.files))
        out[int(meta.id)] = _Fragment(int(meta.physical_rows), int(deleted), files)
    return out


def _counts(kind: str, before: dict[int, _Fragment], after: dict[int, _Fragment]) -> dict[str, Any]:
    """Rows and fragments one transaction of ``kind`` changed, from the fragments before and
    after it (see the module docstring)."""
    added_ids = after.keys() - before.keys()
    removed_ids = before.keys() - after.keys()
    new_rows = sum(after[i].physical for i in added_ids)
    grown = undone = 0
    rewritten = False
    for i in after.keys() & before.keys():
        step = after[i].deleted - before[i].deleted
        grown += max(step, 0)
        undone += max(-step, 0)
        rewritten |= after[i].files != before[i].files
    deleted = grown + sum(before[i].live for i in removed_ids)
    added = new_rows - sum(after[i].deleted for i in added_ids) + undone
    out: dict[str, Any] = {
        "rows": sum(f.live for f in after.values()),
        "fragments_added": len(added_ids),
        "fragments_removed": len(removed_ids),
        "note": None,
    }
    if kind in ("Rewrite", "ReserveFragments", "CreateIndex"):
        out.update(rows_added=0, rows_deleted=0, rows_updated=0)
    elif kind == "Update":
        updated = min(added, deleted)
        out.update(rows_added=added - updated, rows_deleted=deleted - updated, rows_updated=updated)
        if rewritten and not added and not deleted:
            out["rows_updated"] = None
            out["note"] = "columns rewritten in place: the rows updated are not counted"
    else:
        out.update(rows_added=added, rows_deleted=deleted, rows_updated=0)
    return out


def _branch_of(
    ns: Any, table_id: list[str], branch: str | None
) -> tuple[str | None, dict[str, Any] | None]:
    """``(branch, its row of branches.list_branches)``; ``(None, None)`` for main. A branch
    the table does not have: ``TableBranchNotFoundError``."""
    if not branch or branch == brs.MAIN:
        return None, None
    info = brs.branch_info(ns, table_id, branch)
    return str(branch), info


def _parent(info: dict[str, Any]) -> tuple[str | None, int]:
    """The branch (``None``: main) and version a branch was made from."""
    parent = info.get("parent_branch")
    return (None if not parent or parent == "main" else str(parent)), int(info["parent_version"])


def _entry_branch(e: audit.AuditEntry) -> str | None:
    """The branch a write's entry addresses (``None``: main); a branch's creation counts as
    its own."""
    req = e.request if isinstance(e.request, dict) else {}
    if e.operation == "create_table_branch":
        return str(req.get("name") or "") or None
    branch = req.get("branch")
    return None if not branch or branch == "main" else str(branch)


def _table_entries(
    entries: Iterable[audit.AuditEntry], table_id: Sequence[str], branch: str | None = None
) -> list[Any]:
    """The successful entries of writes to ``table_id`` (its own, or a batch's naming it) on
    ``branch`` (``None``: main)."""
    tid = list(table_id)
    out = []
    for e in entries:
        if e.outcome != audit.OK or _entry_branch(e) != branch:
            continue
        named = list(e.ids or []) == tid or any(
            isinstance(t, dict) and list(t.get("id") or []) == tid for t in e.tables or []
        )
        if named:
            out.append(e)
    return out


def _entry_window(e: audit.AuditEntry) -> tuple[float, float] | None:
    try:
        start = pd.Timestamp(e.ts).value / 1e6
    except (TypeError, ValueError):
        return None
    return start, start + float(e.duration_ms or 0.0)


def match_audit(
    frame: pd.DataFrame,
    entries: Iterable[audit.AuditEntry],
    table_id: Sequence[str],
    branch: str | None = None,
) -> pd.DataFrame:
    """``frame`` (a change log) with ``user``, ``audit_operation`` and ``transaction_id`` of
    the console's write behind each version. A write's candidates are the versions committed
    within its span (start to end, widened by :data:`AUDIT_SLACK_MS`); pairs are taken best
    first (the version's lance uuid is the write's transaction id, then the nearest: a span
    holding the time is nearest, then the shortest write), each write and each version at
    most once: one write, one version, so an engine's commit just before a console write is
    not credited to it. Only the writes to ``branch`` (``None``: main) count."""
    out = frame.copy()
    mine = _table_entries(entries, table_id, branch)
    windows = [(w, e) for e in mine if (w := _entry_window(e)) is not None]
    pairs = []
    for row, (uuid, ts) in enumerate(zip(out["uuid"], out["timestamp"], strict=True)):
        if ts is None or pd.isna(ts):
            continue
        at = pd.Timestamp(ts).value / 1e6
        for n, (w, e) in enumerate(windows):
            if w[0] - AUDIT_SLACK_MS <= at <= w[1] + AUDIT_SLACK_MS:
                rank = (e.transaction_id != uuid, max(w[0] - at, at - w[1], 0.0), w[1] - w[0])
                pairs.append((rank, row, n))
    hits: dict[int, Any] = {}
    taken: set[int] = set()
    for _rank, row, n in sorted(pairs):
        if row not in hits and n not in taken:
            hits[row] = windows[n][1]
            taken.add(n)
    users, ops, txns = [], [], []
    for row, uuid in enumerate(out["uuid"]):
        hit = hits.get(row)
        users.append(hit.user if hit else None)
        ops.append(hit.operation if hit else None)
        txns.append((hit.transaction_id or uuid) if hit else None)
    out["user"], out["audit_operation"], out["transaction_id"] = users, ops, txns
    for row, hit in hits.items():
        if hit.operation == "merge_insert_into_table" and isinstance(hit.request, dict):
            _split_merge(out, row, hit.request)
    precise = out["audit_operation"].map(lambda o: AUDIT_LABELS.get(o) if o else None)
    out["operation"] = precise.where(precise.notna(), out["operation"])
    return out


def _split_merge(frame: pd.DataFrame, row: int, request: dict[str, Any]) -> None:
    """The rows a console's merge insert (``request``: its clauses) updated, inserted and
    deleted, from the rows it wrote (``n``: updated + inserted) and removed (``d``: updated
    + deleted); :func:`_counts` assumed a merge inserts or deletes, not both. With all three
    clauses and both ``n`` and ``d``, the split is not known from the fragments (``None``)."""
    at = frame.index[row]
    added, deleted, updated = (
        frame.at[at, c] for c in ("rows_added", "rows_deleted", "rows_updated")
    )
    if any(pd.isna(v) for v in (added, deleted, updated)):
        return
    n, d = int(added) + int(updated), int(deleted) + int(updated)
    update = request.get("when_matched_update_all", True)
    insert = request.get("when_not_matched_insert_all", True)
    delete = request.get("when_not_matched_by_source_delete", False)
    split: tuple[int, int, int] | None
    if not update or not n or not d:
        split = (n, d, 0)
    elif not delete:
        split = (n - d, 0, d) if n >= d else None
    elif not insert:
        split = (0, d - n, n) if d >= n else None
    else:
        split = None
    if split is None:
        frame.at[at, "rows_added"] = frame.at[at, "rows_deleted"] = pd.NA
        frame.at[at, "rows_updated"] = pd.NA
        keys = ", ".join(str(k) for k in request.get("on") or []) or "its key"
        frame.at[at, "note"] = (
            f"a merge insert with all three clauses wrote {plural(n, 'row')} and removed "
            f"{d:,}: how many were updates its fragments do not tell; compare rows on {keys} "
            "for the exact counts"
        )
    else:
        frame.at[at, "rows_added"], frame.at[at, "rows_deleted"], frame.at[at, "rows_updated"] = (
            split
        )


def _audit_entries(ns: Any, entries: Iterable[audit.AuditEntry] | None) -> list[Any]:
    if entries is not None:
        return list(entries)
    log = getattr(type(ns), "audit_log", None) and ns.audit_log
    if isinstance(log, audit.AuditLog):
        try:
            return log.entries()
        except OSError:
            return []
    return []


@guarded("change_log")
def change_log(
    ns: LanceNamespace,
    table_id: Sequence[str],
    branch: str | None = None,
    *,
    versions: Iterable[int] | None = None,
    entries: Iterable[audit.AuditEntry] | None = None,
) -> pd.DataFrame:
    """One row per version (``versions``, default every one; oldest first) of ``branch``
    (``None``/"main": main; a branch's own versions, from the one it was made at): the columns
    of :data:`CHANGE_LOG_COLUMNS` (see the module docstring). ``entries``: the audit entries to
    match (default: the gated namespace's audit log, if any). ``attrs``: ``note``, what the
    backend cannot tell (REST), else ``None``; ``branch``, ``parent_branch`` and
    ``parent_version`` (where a branch was made from; ``None`` on main)."""
    tid = ids.check_id(list(table_id))
    name, info = _branch_of(ns, tid, branch)
    parent, made_at = _parent(info) if info is not None else (None, None)
    listed = vsv.list_versions(ns, tid, name)
    stamps = dict(zip(listed["version"].astype(int), listed["timestamp"], strict=True))
    wanted = sorted({int(v) for v in versions} if versions is not None else set(stamps))
    wanted = [v for v in wanted if v in stamps]
    ops = vsv.version_operations(ns, tid, wanted, name).set_index("version")
    rows: list[dict[str, Any]] = []
    local = opens_datasets(ns)
    ds: Any = _dataset(ns, tid, name) if local and wanted else None
    states: dict[int, dict[int, _Fragment] | None] = {0: {}}

    def state(v: int) -> dict[int, _Fragment] | None:
        if v not in states:
            try:
                states[v] = (
                    _fragments(ds.checkout_version(v)) if ds is not None and v in stamps else None
                )
            except (OSError, ValueError, RuntimeError):
                states[v] = None
        return states[v]

    def before(v: int) -> dict[int, _Fragment] | None:
        """The fragments the transaction of ``v`` started from: on a branch's first version
        (made at ``made_at``), the parent's at that version."""
        if v != made_at:
            return state(v - 1)
        try:
            return _fragments(_dataset(ns, tid, parent, made_at))
        except (OSError, ValueError, RuntimeError, LanceNamespaceError):
            return None

    totals = {} if local else vsv.version_rows(ns, tid, wanted, listed, name)
    for v in wanted:
        op = ops.loc[v]
        kind = str(op["operation"] or "?")
        row: dict[str, Any] = dict.fromkeys(CHANGE_LOG_COLUMNS)
        row.update(version=v, timestamp=stamps[v], lance_operation=kind, operation=_label(kind))
        row["uuid"] = op["uuid"]
        if op["error"] and (local or name is None):
            row["note"] = f"transaction: {op['error']}"
        if local:
            after, prior = state(v), before(v)
            if after is None:
                row["note"] = "this version's manifest could not be read"
            elif prior is None:
                row["rows"] = sum(f.live for f in after.values())
                row["note"] = f"version {v - 1} was deleted: what v{v} changed is not known"
            else:
                counted = _counts(kind, prior, after)
                note = counted.pop("note")
                row.update(counted)
                row["note"] = row["note"] or note
        else:
            row["rows"] = totals.get(v)
        if v == made_at:
            row["operation"] = BRANCH_CREATED
            row["note"] = f"branch {name} made from {parent or 'main'} at version {made_at}"
        rows.append(row)
    frame = pd.DataFrame(rows, columns=CHANGE_LOG_COLUMNS)
    for col in COUNT_COLUMNS:
        frame[col] = pd.array(frame[col].tolist(), dtype="Int64")
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True)
    frame = match_audit(frame, _audit_entries(ns, entries), tid, name)
    frame.attrs["note"] = None if local else (REST_BRANCH_NOTE if name else REST_NOTE)
    frame.attrs["branch"] = name
    frame.attrs["parent_branch"] = (parent or "main") if name else None
    frame.attrs["parent_version"] = made_at
    return frame


def _dataset(ns: Any, table_id: list[str], branch: str | None, version: int | None = None) -> Any:
    """The table's dataset (local backend) on ``branch`` (``None``: main), at ``version`` of
    that branch (``None``: its latest)."""
    if branch is None:
        return ns.open_dataset(table_id, version)
    return ns.branch_dataset(table_id, branch, version)
