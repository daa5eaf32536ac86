"""Staged changes: a table's next version, written where readers cannot see it, published
later by a CreateTableVersion (alone or in a BatchCommitTables): write-audit-publish.

pylance 14.0.2 has no "build the next manifest but do not commit it" call, but it has every
piece: the data change is written the way lance's own writers write it, then committed twice
from one ``lance.Transaction`` with lance's true operation (``Append``, ``Delete``, ``Update``,
``Overwrite``), neither time as the table's next version:

1. the change's files, in the table's own directories, referenced by no version yet:
   ``lance.fragment.write_fragments`` (new rows: append, overwrite, the new values of an
   update) and ``LanceFragment.delete`` (deletion files of the rows a delete or an update
   removes; it "does not commit the changes");
2. a **detached** commit on the table (``LanceDataset.commit(..., detached=True)``): a
   manifest ``_versions/d<N>.manifest`` that never becomes the latest version and is listed by
   no one, but opens by its number (``preview_version``): what the audit reads. It also writes
   the transaction file (``_transactions/<base>-<uuid>.txn``);
3. a commit of the same transaction on a scratch copy of the base version's manifest under
   ``<root>/_staging/scratch-<id>/``: lance writes version base+1 there (the scratch holds no
   data, the manifest only refers to the table's files by relative path). That manifest is
   copied to ``<root>/_staging/<id>.manifest``, where the staged-manifest rule accepts it, and
   the scratch is removed.

``create_table_version`` (or a batch) later puts the staged manifest in the table's
``_versions`` as version base+1: readers then see the change, with its true operation in the
table's history. Local and object-store roots alike (the same lance calls; the root's files
through the filesystem or the console's object-store layer).

Each staged change is recorded under ``<root>/_console/staged/<id>.json`` with every file it
wrote (relative to the table). :func:`discard` removes them; :func:`sweep` (run by the
console's cleanup) removes what changes that were never published left, and only the preview
manifest of those that were. Neither ever removes a file a version of the table refers to
(``LanceDataset.tracked_files``), and both run under the namespace's writer lock (file roots)
or lease (object stores), so that a batch publishing a staged change and a discard of it do
not interleave (a batch also refuses a staged manifest that changed or vanished since it
validated it).

A process killed while staging can leave data files that no version and no record names;
lance's ``cleanup_old_versions`` removes such files once they are older than its grace period.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import shutil
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import MISSING, asdict, dataclass, fields
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
from lance import LanceOperation
from lance.dataset import Transaction
from lance.fragment import FragmentMetadata, write_fragments
from lance_namespace.errors import ErrorCode, LanceNamespaceError

from backend.rules import ids

from ..errors import invalid, make
from ..locations import to_local_path
from ..rules.location_rules import CONSOLE_DIR, STAGING_DIR
from ..spec.fields import epoch_time, is_texts, whole_number
from ..text import plural
from . import txn_store
from .batch import context, manifest_name
from .batch.catalog import U64_MAX
from .batch.context import Ctx
from .batch.durable import write_atomic
from .batch.objects import Store, is_object_root, leased, store_for
from .batch.staged_files import fragment_files
from .left_out import LeftOut

REGISTRY_DIR = f"{CONSOLE_DIR}/staged"
SCRATCH_PREFIX = "scratch-"
APPEND, DELETE, UPDATE, OVERWRITE = "append", "delete", "update", "overwrite"
KINDS = (APPEND, DELETE, UPDATE, OVERWRITE)
LANCE_OPERATIONS = {APPEND: "Append", DELETE: "Delete", UPDATE: "Update", OVERWRITE: "Overwrite"}
# How long a staged change that could still be published is kept by the console's cleanup.
KEEP_UNPUBLISHED = timedelta(days=1)


@dataclass(frozen=True)
class Change:
    """A data change to stage, already checked (``backend.services.batch_builder``)."""

    kind: str
    data: pa.Table | None = None  # append, overwrite
    predicate: str | None = None  # delete, update (None: every row, update only)
    updates: tuple[tuple[str, str], ...] = ()  # update: (column, SQL expression)


@dataclass(frozen=True)
class StagedChange:
    """A staged next version of a table: what ``create_version_op`` publishes
    (``table_id``, ``version``, ``manifest_path``, ``manifest_size``), what it changes, and
    what staging wrote."""

    table_id: tuple[str, ...]
    version: int  # the version it becomes when published (based_on + 1)
    manifest_path: str  # the staged manifest (a path on file roots, a URI on object stores)
    manifest_size: int
    based_on: int  # the committed version it was built on
    kind: str  # append, delete, update, overwrite
    operation: str  # lance's operation: Append, Delete, Update, Overwrite
    rows_before: int  # rows of the base version
    rows_after: int  # rows once published
    preview_version: int  # the detached version holding the same change (opens by number)
    id: str
    location: str  # the table's location
    files: tuple[str, ...]  # what staging wrote, relative to the table
    sha256: str  # of the staged manifest
    staged_at: str  # ISO 8601, UTC
    summary: str  # e.g. "append 3 rows"
    predicate: str | None = None  # the filter of a delete or an update

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["table_id"] = list(self.table_id)
        out["files"] = list(self.files)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StagedChange:
        """A staged change from its record, every value checked (:func:`record_problem`):
        records lie under the root, where other writers reach."""
        known = {f.name for f in fields(cls)}
        required = {f.name for f in fields(cls) if f.default is MISSING}
        missing = sorted(required - set(data))
        if missing:
            raise invalid(f"not a staged change (missing {', '.join(missing)})")
        problem = record_problem(data)
        if problem is not None:
            raise invalid(f"not a staged change of this console: {problem}")
        values = {k: data[k] for k in known if k in data}
        values["table_id"] = tuple(data["table_id"])
        values["files"] = tuple(data["files"])
        return cls(**values)


_STAGING_ID = re.compile(r"[0-9a-f]{32}")  # uuid4().hex: the id of a staging and its files
# What staging writes, relative to the table: data files, deletion files, the transaction
# file and the preview manifest (a detached version).
_STAGED_FILE = re.compile(
    r"data/[^/]+|_deletions/[^/]+|_transactions/[^/]+\.txn|_versions/d[0-9]+\.manifest"
)
_COUNTS = ("version", "based_on", "manifest_size", "rows_before", "rows_after")
_TEXTS = ("manifest_path", "location", "sha256", "staged_at", "summary", "operation", "kind")


def is_staging_id(value: Any) -> bool:
    return isinstance(value, str) and _STAGING_ID.fullmatch(value) is not None


def record_problem(data: dict[str, Any]) -> str | None:
    """Why a staged change's record is not one this console wrote (``None``: it is): its
    id, its table's id, its counts (whole numbers, a version from 1), its texts, its time
    (ISO 8601 with a zone), its kind, and each file it names (a path relative to the table,
    of a kind staging writes: never ``..``, never outside the table)."""
    if not is_staging_id(data.get("id")):
        return "its id"
    if not is_texts(data.get("table_id")):
        return "its table id"
    try:
        ids.check_id(data["table_id"])
    except LanceNamespaceError:
        return "its table id"
    for name in _COUNTS:
        if whole_number(data.get(name)) is None or isinstance(data.get(name), str):
            return f"its {name}"
    preview = data.get("preview_version")
    # a detached version's number has its high bit set: up to u64
    if not isinstance(preview, int) or isinstance(preview, bool) or not 1 <= preview <= U64_MAX:
        return "its preview_version"
    if data["version"] < 1:
        return "its version"
    for name in _TEXTS:
        if not isinstance(data.get(name), str):
            return f"its {name}"
    if data["kind"] not in KINDS:
        return "its kind"
    if not isinstance(data.get("predicate"), (str, type(None))):
        return "its predicate"
    try:
        at = datetime.fromisoformat(data["staged_at"])
    except ValueError:
        return "its time"
    if at.tzinfo is None:
        return "its time"
    files = data.get("files")
    if not isinstance(files, list):
        return "its files"
    for rel in files:
        if not (isinstance(rel, str) and _STAGED_FILE.fullmatch(rel)) or any(
            part in (".", "..") for part in rel.split("/")
        ):
            return f"the file {rel!r}"
    return None


# -- the root's files: local paths or object keys ----------------------------------------------
class _Files:
    """Files of the root, named as the root's kind needs: absolute paths on file roots, keys
    relative to the root on object stores."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx
        self.local = ctx.local_path
        self.store: Store | None = None if self.local is not None else store_for(ctx)

    def table(self, location: str) -> str:
        if self.local is not None:
            path = to_local_path(location, self.local)
            if path is None:
                raise make(ErrorCode.UNSUPPORTED, f"the table location {location!r} is not local")
            return str(path)
        assert self.store is not None
        return self.store.key(location)

    def root(self, rel: str) -> str:
        return str(self.local / rel) if self.local is not None else rel

    @staticmethod
    def join(base: str, rel: str) -> str:
        return f"{base.rstrip('/')}/{rel}"

    def uri(self, name: str) -> str:
        """What lance opens: the path, or the root's URI joined with the key."""
        return name if self.local is not None else f"{self.ctx.root.rstrip('/')}/{name}"

    def read(self, name: str) -> bytes | None:
        if self.local is not None:
            try:
                return Path(name).read_bytes()
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                return None
        assert self.store is not None
        got = self.store.get(name)
        return got[0] if got is not None else None

    def write(self, name: str, data: bytes) -> None:
        if self.local is not None:
            Path(name).parent.mkdir(parents=True, exist_ok=True)
            write_atomic(Path(name), data)
            return
        assert self.store is not None
        if self.store.create(name, data) is None:
            raise make(ErrorCode.CONCURRENT_MODIFICATION, f"{name} exists already")

    def delete(self, name: str) -> bool:
        if self.local is not None:
            try:
                os.unlink(name)
            except (FileNotFoundError, NotADirectoryError):
                return False
            return True
        assert self.store is not None
        if self.store.get(name) is None:
            return False
        self.store.delete(name)
        return True

    def list(self, prefix: str) -> list[str]:
        if self.local is not None:
            top = Path(prefix)
            if not top.is_dir():
                return []
            return sorted(str(p) for p in top.rglob("*") if p.is_file())
        assert self.store is not None
        return sorted(self.store.list(prefix.rstrip("/") + "/"))

    def remove_tree(self, prefix: str) -> None:
        if self.local is not None:
            shutil.rmtree(prefix, ignore_errors=True)
            return
        for name in self.list(prefix):
            self.delete(name)


def _ctx(ns: Any) -> Ctx:
    ctx = context(ns, catalog_only=True)
    if not ctx.is_file and not is_object_root(ctx.root):
        raise make(
            ErrorCode.UNSUPPORTED,
            "staging a change needs a root other processes can read (a folder or an object "
            "store); a memory:// namespace lives in this process only",
        )
    return ctx


def _registry(ctx: Ctx) -> txn_store.TxnStore:
    return txn_store.open_store(ctx.root, ctx.storage_options, directory=REGISTRY_DIR)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@contextlib.contextmanager
def _exclusive(ns: Any, ctx: Ctx, table_ids: Sequence[Sequence[str]]) -> Iterator[None]:
    """The namespace's writer lock (file roots, as single writes take it) or its lease (object
    stores, as batches take it): no batch applies meanwhile."""
    if ctx.is_file:
        with ns.write_guard(*[list(t) for t in table_ids]):
            yield
    else:
        with leased(ctx):
            yield


# -- staging ------------------------------------------------------------------------------------
def _operation(
    ds: lance.LanceDataset, location: str, change: Change, so: dict[str, str] | None
) -> LanceOperation.BaseOperation:
    """The change as lance's operation; its new files are written in the table now."""
    if change.kind == APPEND:
        assert change.data is not None
        return LanceOperation.Append(_fragments(change.data, location, so))
    if change.kind == OVERWRITE:
        assert change.data is not None
        new = _fragments(change.data, location, so, mode="overwrite")
        return LanceOperation.Overwrite(change.data.schema, new)
    predicate = change.predicate
    if change.kind == DELETE:
        assert predicate
        updated, removed = _delete_rows(ds, predicate)
        return LanceOperation.Delete(updated, removed, predicate)
    # update: the matched rows' new values as new fragments, the old rows deleted
    assignments = dict(change.updates)
    columns = {f.name: assignments.get(f.name, f.name) for f in ds.schema}
    rows = ds.to_table(columns=columns, filter=predicate).cast(ds.schema)
    updated, removed = _delete_rows(ds, predicate or "true")
    modified = [f.id() for f in ds.lance_schema.fields() if f.name() in assignments]
    return LanceOperation.Update(
        removed_fragment_ids=removed,
        updated_fragments=updated,
        new_fragments=_fragments(rows, location, so),
        fields_modified=modified,
    )


def _fragments(
    data: pa.Table, location: str, so: dict[str, str] | None, *, mode: str = "append"
) -> list[FragmentMetadata]:
    if data.num_rows == 0:
        return []
    return list(write_fragments(data, location, mode=mode, storage_options=so))


def _delete_rows(
    ds: lance.LanceDataset, predicate: str
) -> tuple[list[FragmentMetadata], list[int]]:
    """Deletion files for the rows ``predicate`` matches (written, committed by no one):
    ``(fragments with a new deletion file, ids of fragments left empty)``."""
    updated: list[FragmentMetadata] = []
    removed: list[int] = []
    for fragment in ds.get_fragments():
        before = fragment.metadata.deletion_file
        after = fragment.delete(predicate)
        if after is None:
            removed.append(fragment.fragment_id)
        elif after.deletion_file is not None and (
            before is None
            or (after.deletion_file.id, after.deletion_file.read_version)
            != (before.id, before.read_version)
        ):
            updated.append(after)
    return updated, removed


def _operation_files(op: Any) -> set[str]:
    """The files an operation's new fragments and deletion files name (relative to the
    table): what to remove when staging fails half-way."""
    out: set[str] = set()
    for name in ("fragments", "new_fragments", "updated_fragments"):
        for frag in getattr(op, name, None) or []:
            out |= fragment_files(frag, data=name != "updated_fragments")
    return out


def _manifest_key(files: _Files, table: str, version: int) -> str | None:
    """The name of ``version``'s manifest in a dataset's ``_versions`` (V1 or V2)."""
    for scheme in ("V2", "V1"):
        name = files.join(table, f"_versions/{manifest_name(version, scheme)}")
        if files.read(name) is not None:
            return name
    return None


def stage(ns: Any, table_id: Sequence[str], change: Change) -> StagedChange:
    """Stage ``change`` as the next version of the table (see the module docstring). ``ns``
    is the ``LocalNamespace`` (ungated; the caller went through the gate)."""
    ctx = _ctx(ns)
    if change.kind not in KINDS:
        raise invalid(f"unknown change {change.kind!r}; expected one of {', '.join(KINDS)}")
    tid = ids.check_id(list(table_id))
    location = ns.table_location(tid)
    base = ns.committed_version(tid)
    if base is None:
        raise make(
            ErrorCode.INVALID_TABLE_STATE,
            f"table {ids.display_id(tid)} has no version to stage a change on (declared only)",
        )
    so = ctx.storage_options or None
    files = _Files(ctx)
    table = files.table(location)
    registry = _registry(ctx)
    sid = uuid.uuid4().hex
    staged_at = _now()
    registry.put(sid, {"state": "staging", "table_id": tid, "location": location})
    ds = ns.open_dataset(tid, base)
    scratch = files.root(f"{STAGING_DIR}/{SCRATCH_PREFIX}{sid}")
    staged_name = files.root(f"{STAGING_DIR}/{sid}.manifest")
    written: set[str] = set()
    try:
        op = _operation(ds, location, change, so)
        written |= _operation_files(op)
        txn = Transaction(base, op)
        written.add(f"_transactions/{base}-{txn.uuid}.txn")
        preview = lance.LanceDataset.commit(location, txn, detached=True, storage_options=so)
        written.add(f"_versions/d{preview.version}.manifest")
        base_manifest = _manifest_key(files, table, base)
        base_bytes = files.read(base_manifest) if base_manifest else None
        if base_manifest is None or base_bytes is None:
            raise make(
                ErrorCode.CONCURRENT_MODIFICATION,
                f"version {base} of {ids.display_id(tid)} disappeared while staging",
            )
        files.write(
            files.join(scratch, f"_versions/{base_manifest.rsplit('/', 1)[-1]}"), base_bytes
        )
        new = lance.LanceDataset.commit(files.uri(scratch), txn, storage_options=so)
        if int(new.version) != base + 1:
            raise make(
                ErrorCode.INTERNAL, f"staging produced version {new.version}, not {base + 1}"
            )
        tracked = new.tracked_files().read_all().to_pylist()
        by_version: dict[int, set[str]] = {}
        for row in tracked:
            if row["type"] != "manifest":
                by_version.setdefault(int(row["version"]), set()).add(str(row["path"]))
        written |= by_version.get(base + 1, set()) - by_version.get(base, set())
        new_manifest = _manifest_key(files, scratch, base + 1)
        data = files.read(new_manifest) if new_manifest else None
        if data is None:
            raise make(ErrorCode.INTERNAL, "staging wrote no manifest")
        files.write(staged_name, data)
        staged = StagedChange(
            table_id=tuple(tid),
            version=base + 1,
            manifest_path=files.uri(staged_name),
            manifest_size=len(data),
            based_on=base,
            kind=change.kind,
            operation=LANCE_OPERATIONS[change.kind],
            rows_before=int(ds.count_rows()),
            rows_after=int(preview.count_rows()),
            preview_version=int(preview.version),
            id=sid,
            location=location,
            files=tuple(sorted(written)),
            sha256=hashlib.sha256(data).hexdigest(),
            staged_at=staged_at,
            summary=_summary(change, int(ds.count_rows()), int(preview.count_rows())),
            predicate=change.predicate,
        )
        registry.put(sid, {"state": "staged", **staged.to_dict()})
        return staged
    except BaseException:
        with contextlib.suppress(Exception):
            files.delete(staged_name)
        with contextlib.suppress(Exception):
            _remove_unreferenced(files, table, location, so, written)
        with contextlib.suppress(Exception):
            registry.delete(sid)
        raise
    finally:
        with contextlib.suppress(Exception):
            files.remove_tree(scratch)


def _summary(change: Change, before: int, after: int) -> str:
    if change.kind == APPEND:
        return f"append {plural(after - before, 'row')}"
    if change.kind == OVERWRITE:
        return f"overwrite with {plural(after, 'row')} (was {before:,})"
    if change.kind == DELETE:
        return f"delete {plural(before - after, 'row')} where {change.predicate}"
    sets = ", ".join(f"{c} = {e}" for c, e in change.updates)
    where = f" where {change.predicate}" if change.predicate else " (every row)"
    return f"update{where}: set {sets}"


def open_preview(ns: Any, staged: StagedChange) -> lance.LanceDataset:
    """The staged change as a dataset (its detached version): rows, schema, counts, checks,
    read before anything is published."""
    ctx = _ctx(ns)
    _check_owned(ns, staged)
    return lance.dataset(
        staged.location, version=staged.preview_version, storage_options=ctx.storage_options
    )


def _table_location(ns: Any, staged: StagedChange) -> str | None:
    """The location of ``staged``'s table now (``None``: the table is gone)."""
    try:
        return str(ns.table_location(list(staged.table_id)))
    except LanceNamespaceError:
        return None


def _owned_problem(ns: Any, staged: StagedChange, location: str | None = None) -> str | None:
    """Why ``staged`` is not a change of its table here (``None``: it is): its table is gone,
    or its record names another location than the table's (a record written by hand could
    name any dataset). ``location``: the table's, when already read."""
    location = location or _table_location(ns, staged)
    if location is None:
        return f"table {ids.display_id(list(staged.table_id))} is not found"
    if staged.location != location:
        return f"its record names {staged.location!r}, not the table's location"
    return None


def _check_owned(ns: Any, staged: StagedChange) -> None:
    problem = _owned_problem(ns, staged)
    if problem is not None:
        raise invalid(f"the staged change {staged.id} is not this table's: {problem}")


def _others_files(ctx: Ctx, staged: StagedChange) -> set[str]:
    """The files other staged changes of the same table name: never removed with this one
    (a record copying another's files must not take them)."""
    out: set[str] = set()
    for entry in _entries(ctx):
        same_table = entry.get("location") == staged.location and entry.get("state") == "staged"
        if same_table and entry.get("id") != staged.id and isinstance(entry.get("files"), list):
            out.update(str(f) for f in entry["files"])
    return out


# -- discard and cleanup -------------------------------------------------------------------------
def _referenced(location: str, so: dict[str, str] | None) -> set[str] | None:
    """Every file a version of the table refers to (relative to the table); ``None`` when the
    table cannot be read (then nothing of it is removed)."""
    try:
        ds = lance.dataset(location, storage_options=so)
        table = ds.tracked_files().read_all()
    except (ValueError, OSError):
        return None
    return {str(p) for p in table.column("path").to_pylist()}


def _remove_unreferenced(
    files: _Files, table: str, location: str, so: dict[str, str] | None, names: set[str]
) -> list[str]:
    """Remove ``names`` (relative to the table) that no version refers to; returns those
    removed."""
    if not names:
        return []
    referenced = _referenced(location, so)
    if referenced is None:
        return []
    removed = []
    for rel in sorted(names - referenced):
        if files.delete(files.join(table, rel)):
            removed.append(rel)
    return removed


def _published(files: _Files, table: str, staged: StagedChange) -> bool:
    """The staged manifest is version ``staged.version`` of the table now (published)."""
    name = _manifest_key(files, table, staged.version)
    data = files.read(name) if name else None
    return data is not None and hashlib.sha256(data).hexdigest() == staged.sha256


def _manifest_name(files: _Files, staged: StagedChange) -> str | None:
    """The staged manifest's own name (path or key) when it lies in the root's ``_staging``."""
    ref = staged.manifest_path
    if files.local is not None:
        path = Path(ref)
        return str(path) if path.parent == files.local / STAGING_DIR else None
    prefix = f"{files.ctx.root.rstrip('/')}/"
    if not ref.startswith(prefix):
        return None
    key = ref[len(prefix) :]
    return key if key.startswith(f"{STAGING_DIR}/") and key.count("/") == 1 else None


def _drop(files: _Files, staged: StagedChange, *, published: bool) -> list[str]:
    """What a staged change left: everything when it was never published, the preview
    manifest only when it was (the rest belongs to the table now)."""
    so = files.ctx.storage_options or None
    table = files.table(staged.location)
    names = set(staged.files) - _others_files(files.ctx, staged)
    if published:
        names = {f"_versions/d{staged.preview_version}.manifest"} & names
    removed = _remove_unreferenced(files, table, staged.location, so, names)
    manifest = _manifest_name(files, staged)
    if manifest is not None:
        data = files.read(manifest)
        if data is not None and hashlib.sha256(data).hexdigest() == staged.sha256:
            files.delete(manifest)
            removed.append(manifest)
    return removed


def _entries(ctx: Ctx) -> list[dict[str, Any]]:
    return list(_registry(ctx).list())


def list_staged(ns: Any, table_id: Sequence[str] | None = None) -> list[StagedChange]:
    """The staged changes recorded under the root (of one table), oldest first."""
    ctx = _ctx(ns)
    key = tuple(table_id) if table_id else None
    out = []
    for entry in _entries(ctx):
        if entry.get("state") != "staged":
            continue
        with contextlib.suppress(Exception):
            staged = StagedChange.from_dict(entry)
            if (key is None or staged.table_id == key) and _owned_problem(ns, staged) is None:
                out.append(staged)
    return sorted(out, key=lambda s: (s.staged_at, s.id))


def discard(ns: Any, staged: StagedChange) -> list[str]:
    """Remove every file ``staged`` wrote (data, deletion and transaction files, the preview
    and the staged manifests) and its record. ``InvalidInputError`` when it was published
    (its files are the table's now); nothing is removed then. Returns what was removed."""
    ctx = _ctx(ns)
    files = _Files(ctx)
    registry = _registry(ctx)
    with _exclusive(ns, ctx, [staged.table_id]):
        _check_owned(ns, staged)
        table = files.table(staged.location)
        if _published(files, table, staged):
            raise invalid(
                f"the staged change {staged.id} ({staged.summary}) was published as version "
                f"{staged.version} of {ids.display_id(list(staged.table_id))}: its files are "
                "the table's now; nothing was discarded"
            )
        removed = _drop(files, staged, published=False)
        registry.delete(staged.id)
    return removed


@dataclass(frozen=True)
class Swept:
    """What :func:`sweep` did: staged changes removed (never published), records closed
    (published: only their preview manifest went), and the files removed."""

    discarded: tuple[str, ...]
    published: tuple[str, ...]
    kept: tuple[str, ...]
    files: tuple[str, ...]


def sweep(
    ns: Any,
    table_id: Sequence[str] | None = None,
    *,
    keep_unpublished: timedelta | None = KEEP_UNPUBLISHED,
    now: datetime | None = None,
) -> Swept:
    """The console's cleanup of staged changes (of one table, or all): a change that was
    published keeps its files (only its preview manifest and record go); one that can no
    longer be published (its version is taken by another manifest, or its table is gone)
    and one staged longer than ``keep_unpublished`` ago (``None``: kept while publishable) are
    removed whole. Never a file a version of the table refers to."""
    ctx = _ctx(ns)
    files = _Files(ctx)
    registry = _registry(ctx)
    wanted = tuple(table_id) if table_id else None
    now = now or datetime.now(UTC)
    discarded: list[str] = []
    published: list[str] = []
    kept: list[str] = []
    removed: list[str] = []
    entries = []
    for entry in _entries(ctx):
        if entry.get("state") != "staged":
            if _abandoned(entry, now) and (wanted is None or tuple(entry["table_id"]) == wanted):
                removed += _drop_abandoned(files, registry, entry)
                discarded.append(str(entry["txn_id"]))
            continue  # else being staged now, or not a staging of this console
        try:
            staged = StagedChange.from_dict(entry)
        except LanceNamespaceError as err:  # not a staged change of this console: left alone
            _leave(entry, str(err))
            continue
        if wanted is None or staged.table_id == wanted:
            entries.append(staged)
    if not entries:
        return Swept(tuple(discarded), (), (), tuple(removed))
    with _exclusive(ns, ctx, [s.table_id for s in entries]):
        for staged in entries:
            location = _table_location(ns, staged)
            if location is None:  # the table is gone, and its files with it
                registry.delete(staged.id)
                discarded.append(staged.id)
                continue
            problem = _owned_problem(ns, staged, location)
            if problem is not None:  # a record naming another dataset: left alone
                _leave({"id": staged.id}, problem)
                continue
            table = files.table(staged.location)
            if _published(files, table, staged):
                removed += _drop(files, staged, published=True)
                registry.delete(staged.id)
                published.append(staged.id)
                continue
            if _publishable(ns, files, staged) and not _expired(staged, keep_unpublished, now):
                kept.append(staged.id)
                continue
            removed += _drop(files, staged, published=False)
            registry.delete(staged.id)
            discarded.append(staged.id)
    return Swept(tuple(discarded), tuple(published), tuple(kept), tuple(removed))


def _abandoned(entry: dict[str, Any], now: datetime) -> bool:
    """A staging of this console (its id names its files) that never finished (its process
    died) a day ago or more."""
    updated = epoch_time(entry.get("updated_at"))
    if updated is None or not is_staging_id(entry.get("txn_id")):
        return False
    return is_texts(entry.get("table_id")) and now - updated > KEEP_UNPUBLISHED


_LEFT = LeftOut(logging.getLogger(__name__), "staged-change record")  # said once each


def _leave(entry: dict[str, Any], why: str) -> None:
    _LEFT.say(str(entry.get("id") or entry.get("txn_id")), why)


def _drop_abandoned(
    files: _Files, registry: txn_store.TxnStore, entry: dict[str, Any]
) -> list[str]:
    """What an unfinished staging is known to have written: its scratch copy and its staged
    manifest (its data files, unknown, are lance's cleanup's: no version refers to them)."""
    sid = str(entry["txn_id"])
    removed = []
    manifest = files.root(f"{STAGING_DIR}/{sid}.manifest")
    if files.delete(manifest):
        removed.append(manifest)
    files.remove_tree(files.root(f"{STAGING_DIR}/{SCRATCH_PREFIX}{sid}"))
    registry.delete(sid)
    return removed


def _publishable(ns: Any, files: _Files, staged: StagedChange) -> bool:
    """Version ``staged.version`` is still free and the table still at ``based_on``."""
    try:
        latest = ns.committed_version(list(staged.table_id))
    except Exception:  # noqa: BLE001 - the table is gone: never publishable
        return False
    manifest = _manifest_name(files, staged)
    return latest == staged.based_on and manifest is not None and files.read(manifest) is not None


def _expired(staged: StagedChange, keep: timedelta | None, now: datetime) -> bool:
    if keep is None:
        return False
    try:
        at = datetime.fromisoformat(staged.staged_at)
    except ValueError:
        return True
    return now - at > keep
