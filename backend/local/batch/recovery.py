"""Recovery of batches a dead process left behind, and the guard single writes go through.

A killed committer leaves its journal in ``_console/batch/pending`` (a killed cascade drop, its
drop intent: ``catalog_ops``). :func:`recover` (on open,
and before every guarded write) finishes its clean-up when the record says SUCCEEDED (the
commit point was reached), else rolls it back and records FAILED.

:func:`guard_single_op` serialises a single-operation write with batch commits: it takes the
namespace lock, recovers crashed batches first, and, when the lock was busy, compares what the
write's tables looked like before waiting with what they look like once the lock is held: a
batch (or another write) that changed them meanwhile makes the write fail with
``ConcurrentModificationError`` and nothing is applied.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from lance_namespace.errors import ErrorCode, LanceNamespaceError

from backend.rules import alter_actions as aa

from .apply import PENDING_DIR, cleanup_file, undo_file
from .catalog import Reader
from .catalog_ops import DROP_PREFIX, finish_drop, pending_drops
from .context import Ctx, context, error, oid
from .durable import Durable
from .faults import Steps, fire
from .journals import file_journal
from .lock import NamespaceLock, held
from .objects import is_object_root, recover_on_open
from .plan import Journal
from .records import put_final, record_status

RECOVERED_REASON = (
    "the committing process stopped before the commit point (crash or kill); rolled back on "
    "recovery"
)


def load_journals(ctx: Ctx) -> list[tuple[Path, Journal | None]]:
    """The journals to act on: ``(path, journal)``, or ``(path, None)`` for a journal write
    that never reached its rename (a ``.tmp-`` file: dropped). A file that is not one of this
    console's journals (``journals.file_journal``) is left where it is."""
    pending = ctx.path(PENDING_DIR)
    try:
        names = sorted(os.listdir(pending))
    except FileNotFoundError:
        return []
    out: list[tuple[Path, Journal | None]] = []
    for name in names:
        path = pending / name
        if name.startswith(".tmp-"):  # a journal write that never reached its rename
            out.append((path, None))
            continue
        if not name.endswith(".json") or name.startswith(DROP_PREFIX):
            continue  # drop intents: catalog_ops.finish_drop
        journal = file_journal(ctx, path)
        if journal is not None:
            out.append((path, journal))
    return out


def has_pending(ctx: Ctx) -> bool:
    if not ctx.is_file:
        return False
    try:
        return bool(os.listdir(ctx.path(PENDING_DIR)))
    except FileNotFoundError:
        return False


def recover_locked(ctx: Ctx) -> list[str]:
    """Finish or roll back every journal left by a dead process. Caller holds the lock."""
    if not has_pending(ctx):
        return []
    done = []
    steps = Steps()
    for intent in pending_drops(ctx):
        finish_drop(ctx, intent, steps)
        done.append(intent.name)
    for path, journal in load_journals(ctx):
        if journal is None:
            steps("recover.drop-partial", path.name)
            os.unlink(path)
            continue
        if record_status(ctx, journal.txn_id) == aa.SUCCEEDED:
            cleanup_file(ctx, journal, steps, committed=True)
        else:
            undo_file(ctx, journal, steps, Durable())
            steps("recover.record", journal.txn_id)
            put_final(
                ctx, journal.txn_id, journal.record, aa.FAILED, RECOVERED_REASON, recovered=True
            )
            cleanup_file(ctx, journal, steps, committed=False)
        done.append(journal.txn_id)
    return done


def recover(ns: Any) -> list[str]:
    """Roll back or finish batches a dead process left behind; call when opening a namespace.

    Cheap when there is nothing to do (one directory listing). Never waits: if another live
    writer holds the namespace lock, it recovers before its own work. Returns the ids handled.
    """
    try:
        ctx = context(ns, catalog_only=True)
    except LanceNamespaceError:
        return []
    return try_recover(ctx)


def try_recover(ctx: Ctx) -> list[str]:
    if is_object_root(ctx.root):
        try:
            return recover_on_open(ctx)
        except Exception:  # unreachable store: the next batch recovers under its lease
            return []
    if not has_pending(ctx) or held().get(ctx.key):
        return []  # nothing to do, or this thread is the committer: its journal is live
    lock = NamespaceLock(ctx)
    if not lock.acquire(blocking=False):
        return []
    try:
        return recover_locked(ctx)
    finally:
        lock.release()


@contextlib.contextmanager
def guard_single_op(ns: Any, tables: Sequence[Sequence[str]]) -> Iterator[None]:
    """Serialise a single-operation write with batch commits (see the module docstring)."""
    oids = [oid(t) for t in tables if t]
    try:
        ctx = context(ns)
    except LanceNamespaceError:
        yield  # not a batch-capable root (s3://, ...): single operations run unguarded
        return
    lock = NamespaceLock(ctx, f"a write to {', '.join(oids)}" if oids else "a write")
    if held().get(lock.key):
        lock.acquire()
        try:
            yield
        finally:
            lock.release()
        return
    if lock.acquire(blocking=False):
        before = None
    else:
        before = Reader(ctx).tokens(oids)
        fire("guard.wait", ", ".join(oids))
        lock.acquire()
    try:
        recover_locked(ctx)
        if before is not None:
            after = Reader(ctx).tokens(oids)
            changed = [o for o in oids if before[o] != after[o]]
            if changed:
                raise error(
                    ErrorCode.CONCURRENT_MODIFICATION,
                    f"{', '.join(changed)} changed while this write waited for a concurrent "
                    "batch commit; nothing was applied, re-read and retry",
                )
        yield
    finally:
        lock.release()
