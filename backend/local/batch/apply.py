"""Apply and undo: every change of a batch on a file root, each undoable from the journal.

Apply: table directories and ``.lance-reserved`` files (declares), new manifests linked into
``_versions`` (a hard link: atomic put-if-absent), deleted versions' manifests moved into the
transaction's work directory (hidden, not yet deleted), then one Lance commit of the catalog.
Everything is fsynced at one barrier before the commit point.

Undo (idempotent, for a failure or for recovery) reverses whatever part was applied; cleanup,
after the outcome is recorded, removes consumed staging manifests, the work directory (the
deferred physical delete) and the journal.

``memory://`` roots use pylance's own operations under the namespace lock, undone in reverse.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lance_namespace import (
    DeclareTableRequest,
    DeregisterTableRequest,
)
from lance_namespace.errors import ErrorCode

from ...rules.location_rules import CONSOLE_DIR
from .catalog import (
    Expected,
    catalog_changes,
    catalog_commit,
    catalog_files,
    catalog_rows,
    catalog_undo,
    declared_row,
    open_catalog,
)
from .context import RESERVED_BYTES, RESERVED_FILE, Ctx, error, unsupported
from .durable import Durable, fsync_path, move, run_all, write_new
from .faults import Steps
from .plan import DeclareStep, Journal, Plan

PENDING_DIR = f"{CONSOLE_DIR}/batch/pending"
WORK_DIR = f"{CONSOLE_DIR}/batch/work"
DECLARE_THREADS = 2  # mkdir + create in two slices: on 2 cores, more threads only add contention


def journal_path(ctx: Ctx, txn_id: str) -> Path:
    return ctx.path(PENDING_DIR) / f"{txn_id}.json"


def work_path(ctx: Ctx, txn_id: str) -> Path:
    return ctx.path(WORK_DIR) / txn_id


def _alt_tmp(table_path: str, txn_id: str, index: int) -> Path:
    """Staging next to the table when the work directory is on another filesystem."""
    return Path(table_path) / f".lance-console-{txn_id}-{index}.tmp"


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def make_journal(ctx: Ctx, plan: Plan, txn_id: str, record: dict[str, Any]) -> Journal:
    """The plan plus what undoing each step needs."""
    work = work_path(ctx, txn_id)
    for d in plan.declares:  # strings, not pathlib: thousands per batch
        assert d.path is not None
        d.dir_existed = os.path.exists(d.path)
        d.reserved_existed = d.dir_existed and os.path.exists(_reserved(d.path))
    for v in plan.versions:
        assert v.table_path is not None
        v.tmp = str(work / f"v{v.index}.manifest")
        v.alt_tmp = str(_alt_tmp(v.table_path, txn_id, v.index))
        v.versions_dir_existed = (Path(v.table_path) / "_versions").is_dir()
    for x in plan.deletes:
        for m in x.moves:
            m.trash = str(work / f"d{x.index}-{m.version}.manifest")
    return Journal(txn_id, record, plan.declares, plan.versions, plan.deletes, plan.deregisters)


def _catalog_apply(ctx: Ctx, journal: Journal, expected: Expected | None) -> int:
    new_rows = [declared_row(d.object_id, d.location, d.properties) for d in journal.declares]
    return catalog_commit(
        ctx, new_rows, [g.object_id for g in journal.deregisters], expected=expected
    )


def apply_file(
    ctx: Ctx,
    journal: Journal,
    staged: dict[int, bytes],
    steps: Steps,
    dur: Durable,
    expected: Expected | None = None,
) -> int | None:
    """Every change of the batch (see the module docstring). The catalog commit, lost to
    another writer, is judged again with ``expected`` and retried
    (``catalog.catalog_commit``). Returns its retries (``None``: no catalog commit)."""
    retries = None
    todo = [d for d in journal.declares if not (d.dir_existed and d.reserved_existed)]
    run_all(lambda d: _declare_dir(d, steps, dur), todo, threads=DECLARE_THREADS, sliced=True)
    work = work_path(ctx, journal.txn_id)
    for v in journal.versions:
        final = Path(str(v.final))
        vdir = final.parent
        if not vdir.is_dir():
            steps("apply.version.mkdir", v.object_id)
            vdir.mkdir(parents=True)
            dur.dir(vdir.parent)
        work.mkdir(parents=True, exist_ok=True)
        tmp = Path(str(v.tmp))
        steps("apply.version.stage", f"{v.object_id} v{v.version}")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        write_new(tmp, staged[v.index], sync=False)
        dur.file(tmp)  # the same inode as the published manifest
        steps("apply.version.link", f"{v.object_id} v{v.version}")
        try:
            _link(tmp, final, Path(str(v.alt_tmp)), dur)
        except FileExistsError:
            raise error(
                ErrorCode.CONCURRENT_MODIFICATION,
                f"version {v.version} of table {v.object_id} appeared while the batch committed",
            ) from None
        dur.dir(vdir)
        dur.dir(work)
    for x in journal.deletes:
        for m in x.moves:
            if not m.src:
                continue
            src, trash = Path(m.src), Path(str(m.trash))
            work.mkdir(parents=True, exist_ok=True)
            steps("apply.delete.hide", f"{x.object_id} v{m.version}")
            try:
                move(src, trash)
            except FileNotFoundError:
                raise error(
                    ErrorCode.CONCURRENT_MODIFICATION,
                    f"version {m.version} of table {x.object_id} disappeared while the batch "
                    "committed",
                ) from None
            dur.dir(src.parent)
            dur.dir(trash.parent)
    if journal.declares or journal.deregisters:
        before = catalog_files(ctx)
        steps("apply.catalog", f"+{len(journal.declares)} -{len(journal.deregisters)}")
        retries = _catalog_apply(ctx, journal, expected)
        catalog_changes(ctx, before, dur)
    dur.flush()  # everything durable before the commit record
    return retries


def _reserved(table_dir: str) -> str:
    return os.path.join(table_dir, RESERVED_FILE)


def _declare_dir(d: DeclareStep, steps: Steps, dur: Durable) -> None:
    """A declared table's directory and ``.lance-reserved``; what the journal found there
    stays as it was. Paths as strings: ``pathlib`` costs more per table than the ``mkdir``."""
    path = str(d.path)
    if not d.dir_existed:
        steps("apply.declare.mkdir", d.object_id)
        with contextlib.suppress(FileExistsError):  # appeared since: kept
            os.mkdir(path)
        dur.dir(os.path.dirname(path))
    if not d.reserved_existed:
        steps("apply.declare.reserve", d.object_id)
        reserved = _reserved(path)
        with contextlib.suppress(FileExistsError):
            write_new(reserved, RESERVED_BYTES, sync=False)
        dur.file(reserved)
        dur.dir(path)


def _link(tmp: Path, final: Path, alt_tmp: Path, dur: Durable) -> None:
    """Publish ``tmp`` at ``final`` if nothing is there (hard link: atomic put-if-absent)."""
    try:
        os.link(tmp, final)
    except OSError as e:
        if e.errno == errno.EEXIST:
            raise FileExistsError(str(final)) from None
        if e.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP):
            raise
        # The table is on another filesystem than the root: stage next to it instead.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(alt_tmp)
        write_new(alt_tmp, tmp.read_bytes(), sync=False)
        dur.file(alt_tmp)
        dur.dir(alt_tmp.parent)
        try:
            os.link(alt_tmp, final)
        except FileExistsError:
            raise FileExistsError(str(final)) from None
        except OSError as e2:
            raise unsupported(
                f"the filesystem of {final.parent} supports no hard links, which the batch "
                f"commit uses as its put-if-absent: {e2}"
            ) from e2


def _ours(final: Path, tmp: str | None, alt_tmp: str | None, sha256: str | None) -> bool:
    for candidate in (tmp, alt_tmp):
        if candidate:
            with contextlib.suppress(OSError):
                if os.path.samefile(candidate, final):
                    return True
    return _sha256(final) == sha256


def undo_file(
    ctx: Ctx, journal: Journal, steps: Steps, dur: Durable, *, catalog: bool = True
) -> None:
    """Roll back whatever part of ``journal`` was applied. Idempotent; ends durable.
    ``catalog=False``: the catalog commit is known not to have landed (it lost to another
    writer), so the catalog is left alone; a row another writer made under a declared name
    (and, at the root, the same location) is then not taken for the batch's."""
    if catalog:
        catalog_undo(ctx, journal.catalog_declared, journal.catalog_restored, steps, dur)
    for x in reversed(journal.deletes):
        for m in reversed(x.moves):
            if not m.src or not m.trash:
                continue
            src, trash = Path(m.src), Path(m.trash)
            if not trash.exists():
                continue
            if src.exists():  # a copy across filesystems that stopped before its unlink
                steps("undo.delete.drop-copy", f"{x.object_id} v{m.version}")
                os.unlink(trash)
            else:
                steps("undo.delete.restore", f"{x.object_id} v{m.version}")
                move(trash, src)
                dur.file(src)
            dur.dir(src.parent)
    for v in reversed(journal.versions):
        final = Path(str(v.final))
        if final.exists() and _ours(final, v.tmp, v.alt_tmp, v.sha256):
            steps("undo.version.unlink", f"{v.object_id} v{v.version}")
            os.unlink(final)
            dur.dir(final.parent)
        alt = Path(str(v.alt_tmp))
        if alt.exists():
            steps("undo.version.alt-tmp", v.object_id)
            os.unlink(alt)
            dur.dir(alt.parent)
        vdir = final.parent
        if not v.versions_dir_existed and vdir.is_dir() and not any(vdir.iterdir()):
            steps("undo.version.rmdir", v.object_id)
            vdir.rmdir()
            dur.dir(vdir.parent)
    for d in reversed(journal.declares):
        path = Path(str(d.path))
        reserved = path / RESERVED_FILE
        if not d.reserved_existed and reserved.exists():
            steps("undo.declare.unreserve", d.object_id)
            os.unlink(reserved)
            dur.dir(path)
        if not d.dir_existed and path.is_dir() and not any(path.iterdir()):
            steps("undo.declare.rmdir", d.object_id)
            path.rmdir()
            dur.dir(path.parent)
    dur.flush()  # the rollback is durable before the FAILED record says so


def cleanup_file(ctx: Ctx, journal: Journal, steps: Steps, *, committed: bool) -> None:
    """After the outcome is recorded: drop consumed staging files, the work dir, the journal.

    Nothing here changes what the namespace shows, so a crash anywhere in it is harmless:
    recovery repeats it (it is idempotent) as long as the journal exists. Only files the
    journal names and that are still what the batch checked (same SHA-256) are removed; they
    were checked to lie inside the table's staging areas.
    """
    if committed:
        for v in journal.versions:
            staged = Path(str(v.staged))
            if v.staged and _sha256(staged) == v.sha256:
                steps("cleanup.staged", str(staged))
                os.unlink(staged)
            alt = Path(str(v.alt_tmp))
            if v.alt_tmp and alt.exists():
                steps("cleanup.alt-tmp", str(alt))
                os.unlink(alt)
    work = work_path(ctx, journal.txn_id)
    if work.exists():
        steps("cleanup.work", str(work))  # the hidden manifests: the deferred physical delete
        shutil.rmtree(work)
    journal_file = journal_path(ctx, journal.txn_id)
    if journal_file.exists():
        steps("cleanup.journal", journal.txn_id)
        os.unlink(journal_file)
        fsync_path(journal_file.parent, directory=True)


# -- memory:// ------------------------------------------------------------------------------------
def apply_memory(
    ctx: Ctx, plan: Plan, steps: Steps, undo: list[Callable[[], Any]]
) -> dict[int, Any]:
    """pylance's own operations; returns their answers by operation index. ``undo`` receives
    one step per change made (the caller runs them in reverse on failure)."""
    answers: dict[int, Any] = {}
    d = ctx.directory
    for e in plan.declares:
        steps("apply.declare", e.object_id)
        answers[e.index] = d.declare_table(DeclareTableRequest(id=e.id, properties=e.properties))
        undo.append(functools.partial(d.deregister_table, DeregisterTableRequest(id=e.id)))
    for v in plan.versions:
        steps("apply.version", f"{v.object_id} v{v.version}")
        answers[v.index] = d.create_table_version(
            {
                "id": v.id,
                "version": v.version,
                "manifest_path": v.manifest_path,
                "naming_scheme": v.naming_scheme,
            }
        )
        one = {"start_version": v.version, "end_version": v.version + 1}
        undo.append(functools.partial(d.batch_delete_table_versions, {"id": v.id, "ranges": [one]}))
    for g in plan.deregisters:
        steps("apply.deregister", g.object_id)
        answers[g.index] = d.deregister_table(DeregisterTableRequest(id=g.id))
        undo.append(functools.partial(_restore_rows, ctx, [g.row]))
    # Deleting a manifest cannot be undone through pylance's API: deletes go last.
    for x in plan.deletes:
        steps("apply.delete", x.object_id)
        if x.moves:
            d.batch_delete_table_versions(
                {
                    "id": x.id,
                    "ranges": [
                        {"start_version": m.version, "end_version": m.version + 1} for m in x.moves
                    ],
                }
            )
    return answers


def _restore_rows(ctx: Ctx, rows: list[dict[str, Any]]) -> None:
    ds = open_catalog(ctx)
    assert ds is not None
    ds.merge_insert("object_id").when_not_matched_insert_all().execute(
        catalog_rows(ds.schema, rows)
    )
