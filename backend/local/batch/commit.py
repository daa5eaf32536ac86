"""BatchCommitTables on a local namespace: the protocol's phases in order.

1. *Validate* (``validate.plan_batch``), without a lock and without writing.
2. *Begin*, under the namespace lock: recover crashed batches, compare what validation saw of
   every touched table with what is there now (a difference: ``ConcurrentModificationError``
   and a FAILED record), write the journal, then the RUNNING record.
3. *Apply* (``apply.apply_file``), every step undoable, all durable at one barrier.
4. *Commit point*: the record goes RUNNING -> SUCCEEDED in one atomic write.
5. *Clean up*: consumed staging manifests, the work directory, then the journal.

A failure before the commit point rolls every step back and leaves the record FAILED with the
reason. Once the commit point is passed, the batch is applied and nothing reports an error:
building the answer cannot fail the caller.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lance_namespace import (
    BatchCommitTablesRequest,
    BatchCommitTablesResponse,
    BatchDeleteTableVersionsResponse,
    CommitTableResult,
    CreateTableVersionResponse,
    DeclareTableResponse,
    DeregisterTableResponse,
)
from lance_namespace.errors import ErrorCode
from lance_namespace_urllib3_client.models import TableVersion

from backend.rules import alter_actions as aa

from .apply import apply_file, apply_memory, cleanup_file, journal_path, make_journal, undo_file
from .catalog import (
    Expected,
    Reader,
    bootstrap_catalog,
    catalog_unapplied,
    namespace_changes,
    shown,
)
from .context import Ctx, context, error
from .durable import Durable, write_atomic
from .failures import as_namespace_error, reason_of
from .faults import Steps, fire
from .lock import locked
from .objects import commit_objects, is_object_root, store_for
from .plan import Journal, Plan
from .records import (
    base_record,
    catalog_retries_props,
    commit_point,
    new_txn_id,
    now_iso,
    put_final,
    put_running,
)
from .recovery import recover_locked
from .validate import plan_batch


def commit_batch(ns: Any, request: BatchCommitTablesRequest) -> BatchCommitTablesResponse:
    """Apply every operation of ``request`` or none of them; see the module docstring."""
    ctx = context(ns, catalog_only=True)
    if not isinstance(request, BatchCommitTablesRequest):
        request = BatchCommitTablesRequest.model_validate(request)
    plan = plan_batch(ctx, request)
    fire("validated", str(len(plan.ops)))
    answers: dict[int, Any] = {}
    if ctx.is_file:
        txn_id = _commit_file(ctx, plan)
    elif is_object_root(ctx.root):
        txn_id = commit_objects(ctx, plan, _conflicts)
    else:
        txn_id, answers = _commit_memory(ctx, plan)
    try:
        results = _results(ctx, plan, txn_id, answers)
    except Exception:  # applied: the answer is the transaction id, results are best effort
        results = []
    return BatchCommitTablesResponse(transaction_id=txn_id, results=results)


def _conflicts(ctx: Ctx, plan: Plan) -> str | None:
    """What changed since validation among the tables and namespaces the batch touches."""
    fresh = Reader(ctx)
    changed = [o for o, tok in plan.tokens.items() if fresh.state(o).token() != tok]
    changed += namespace_changes(fresh.catalog, plan.namespaces)
    changed += _staged_gone(ctx, plan)
    if not changed:
        return None
    return f"concurrent modification: {shown(changed)} changed between validation and commit"


def _staged_gone(ctx: Ctx, plan: Plan) -> list[str]:
    """The staged manifests validation read that are gone or changed since (discarded: a
    discard removes the staged change's data files too, so its manifest must not be published
    from the bytes validation kept). File and object-store roots."""
    out = []
    for v in plan.versions:
        if v.staged is None or v.sha256 is None:
            continue
        if ctx.is_file:
            try:
                data: bytes | None = Path(v.staged).read_bytes()
            except OSError:
                data = None
        else:
            got = store_for(ctx).get(v.staged)
            data = got[0] if got is not None else None
        if data is None or hashlib.sha256(data).hexdigest() != v.sha256:
            out.append(f"the staged manifest of {v.object_id} v{v.version}")
    return out


def _refuse_conflict(ctx: Ctx, plan: Plan, txn_id: str, base: dict[str, Any], steps: Steps) -> None:
    conflict = _conflicts(ctx, plan)
    if conflict:
        steps("begin.conflict-record", txn_id)
        put_final(ctx, txn_id, base, aa.FAILED, conflict)
        raise error(ErrorCode.CONCURRENT_MODIFICATION, f"batch {txn_id} not applied: {conflict}")


def _commit_file(ctx: Ctx, plan: Plan) -> str:
    txn_id = new_txn_id()
    steps = Steps()
    started = now_iso()
    with locked(ctx, f"batch commit {txn_id}") as lock:
        if not lock.reentered:
            recover_locked(ctx)
        base = base_record(plan, txn_id, started)
        _refuse_conflict(ctx, plan, txn_id, base, steps)
        try:
            if plan.needs_catalog:
                bootstrap_catalog(ctx)
            journal = make_journal(ctx, plan, txn_id, base)
            jpath = journal_path(ctx, txn_id)
            jpath.parent.mkdir(parents=True, exist_ok=True)
            steps("begin.journal", txn_id)
            write_atomic(jpath, json.dumps(journal.to_json()).encode())
        except Exception as exc:  # nothing applied yet: record why, change nothing else
            put_final(ctx, txn_id, base, aa.FAILED, f"not started: {reason_of(exc)}")
            raise as_namespace_error(exc, txn_id) from exc
        try:
            steps("begin.record", txn_id)
            put_running(ctx, txn_id, base)
            retries = apply_file(
                ctx,
                journal,
                plan.staged_bytes,
                steps,
                Durable(),
                Expected.of(plan.tokens, plan.namespaces),
            )
            steps("commit.record", txn_id)
            commit_point(ctx, txn_id, catalog_retries_props(retries))
        except BaseException as exc:
            _rollback_file(ctx, journal, steps, exc)
            if not isinstance(exc, Exception):
                raise  # KeyboardInterrupt / SystemExit: rolled back, propagated as they are
            raise as_namespace_error(exc, txn_id) from exc
        with contextlib.suppress(Exception):  # committed; recovery finishes what this leaves
            cleanup_file(ctx, journal, steps, committed=True)
    return txn_id


def _rollback_file(ctx: Ctx, journal: Journal, steps: Steps, exc: BaseException) -> None:
    reason = reason_of(exc)
    try:
        undo_file(ctx, journal, steps, Durable(), catalog=not catalog_unapplied(exc))
        steps("rollback.record", journal.txn_id)
        put_final(
            ctx,
            journal.txn_id,
            journal.record,
            aa.FAILED,
            f"rolled back: {reason}",
            extra=catalog_retries_props(getattr(exc, "catalog_retries", None)),
        )
        cleanup_file(ctx, journal, steps, committed=False)
    except Exception as undo_exc:
        # The journal stays: the next recover() (open, or any guarded write) retries the undo.
        raise error(
            ErrorCode.INTERNAL,
            f"batch {journal.txn_id} failed ({reason}) and its rollback failed too "
            f"({undo_exc}); the rollback is retried on the next open or write of this namespace",
        ) from undo_exc


def _commit_memory(ctx: Ctx, plan: Plan) -> tuple[str, dict[int, Any]]:
    """pylance's own operations under a process-local lock; undone in reverse on failure."""
    txn_id = new_txn_id()
    steps = Steps()
    with locked(ctx, f"batch commit {txn_id}"):
        base = base_record(plan, txn_id, now_iso())
        _refuse_conflict(ctx, plan, txn_id, base, steps)
        put_running(ctx, txn_id, base)
        undo: list[Callable[[], Any]] = []
        try:
            answers = apply_memory(ctx, plan, steps, undo)
            steps("commit.record", txn_id)
            commit_point(ctx, txn_id)
        except BaseException as exc:
            problems = []
            for fn in reversed(undo):
                try:
                    fn()
                except Exception as undo_exc:  # keep undoing the rest
                    problems.append(str(undo_exc))
            reason = f"rolled back: {reason_of(exc)}"
            if problems:
                reason += f"; rollback incomplete: {'; '.join(problems)}"
            put_final(ctx, txn_id, base, aa.FAILED, reason)
            if not isinstance(exc, Exception):
                raise
            raise as_namespace_error(exc, txn_id) from exc
    return txn_id, answers


def _local_etag(path: Path) -> str:
    """The ETag object_store's local filesystem reports (inode-mtime_us-size, hex)."""
    st = path.stat()
    return f'"{st.st_ino:x}-{st.st_mtime_ns // 1000:x}-{st.st_size:x}"'


def _results(ctx: Ctx, plan: Plan, txn_id: str, answers: dict[int, Any]) -> list[CommitTableResult]:
    by_index: dict[int, CommitTableResult] = {}
    for d in plan.declares:
        location = ctx.table_uri(d.location)
        answer = answers.get(d.index)
        if answer is not None and getattr(answer, "location", None):
            location = answer.location
        by_index[d.index] = CommitTableResult(
            declare_table=DeclareTableResponse(
                transaction_id=txn_id, location=location, properties=d.properties
            )
        )
    for v in plan.versions:
        if ctx.is_file:
            final = Path(str(v.final))
            tv = TableVersion(
                version=v.version,
                manifest_path=str(final),
                manifest_size=v.size,
                e_tag=_local_etag(final) if final.exists() else None,
            )
        else:
            raw = (answers.get(v.index) or {}).get("version") or {}
            tv = TableVersion(
                version=v.version,
                manifest_path=raw.get("manifest_path") or v.manifest_path,
                manifest_size=raw.get("manifest_size"),
                e_tag=raw.get("e_tag"),
            )
        by_index[v.index] = CommitTableResult(
            create_table_version=CreateTableVersionResponse(transaction_id=txn_id, version=tv)
        )
    for x in plan.deletes:
        by_index[x.index] = CommitTableResult(
            delete_table_versions=BatchDeleteTableVersionsResponse(
                transaction_id=txn_id, deleted_count=x.deleted_count
            )
        )
    for g in plan.deregisters:
        metadata = (g.row or {}).get("metadata")
        props = None
        if metadata:
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                props = {str(k): str(v) for k, v in json.loads(metadata).items()}
        by_index[g.index] = CommitTableResult(
            deregister_table=DeregisterTableResponse(
                transaction_id=txn_id,
                id=g.id,
                location=ctx.table_uri(g.location) if g.location else None,
                properties=props,
            )
        )
    return [by_index[i] for i in range(len(plan.ops))]
