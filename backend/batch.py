"""Atomic ``BatchCommitTables`` and batch transaction records on the local backend.

``commit_batch(ns, request)`` applies a mix of DeclareTable, CreateTableVersion,
DeleteTableVersions and DeregisterTable operations, across tables and nested namespaces, all or
none. ``ns`` is a ``backend.local.LocalNamespace`` (this module uses its ``_inner``
``DirectoryNamespace``, ``root``, ``local_path``, ``storage_options``, ``_session`` and
``txn_store``).

The protocol (details, recovery rules and limits: ``docs/batch-commit.md``):

1. *Validate*, without a lock and without writing: every operation is checked in order against
   a simulation of the namespace (catalog rows of ``__manifest``, ``_versions`` listings, staged
   manifests). A refusal names the operation's index and raises the matching
   ``lance_namespace.errors`` class; nothing has been written.
2. *Begin*, under the namespace lock (``<root>/_console/namespace.lock``, ``flock``): recover
   crashed batches, compare what validation saw of every touched table with what is there now
   (a difference: ``ConcurrentModificationError`` and a FAILED record), write the *journal*
   (``_console/batch/pending/<id>.json``: the plan and its undo information), then the RUNNING
   transaction record (``txn_store``).
3. *Apply*, every step undoable: table directories and ``.lance-reserved`` files, new
   manifests linked into ``_versions`` (put-if-absent), deleted versions' manifests moved into
   the transaction's work directory (hidden, not yet deleted), then one Lance commit of the
   catalog (declared rows inserted, deregistered rows removed). Everything is fsynced.
4. *Commit point*: the transaction record goes from RUNNING to SUCCEEDED in one atomic write
   (temporary file, fsync, rename, directory fsync).
5. *Clean up*: consumed staging manifests and the work directory (the hidden manifests: the
   deferred physical delete) are removed, then the journal.

A failure before the commit point rolls every step back and leaves the record FAILED with the
reason. A process killed at any point leaves a journal; the next ``recover(ns)`` (on open, and
before every guarded write) rolls it back (record RUNNING or missing) or finishes its clean-up
(record SUCCEEDED). ``memory://`` roots use pylance's own operations under a process-local lock.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import errno
import hashlib
import json
import os
import re
import secrets
import shutil
import socket
import struct
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import lance
import pyarrow as pa
from lance.namespace import DirectoryNamespace
from lance_namespace import (
    AlterTransactionRequest,
    AlterTransactionResponse,
    BatchCommitTablesRequest,
    BatchCommitTablesResponse,
    BatchDeleteTableVersionsResponse,
    CommitTableResult,
    CreateNamespaceRequest,
    CreateTableVersionResponse,
    DeclareTableRequest,
    DeclareTableResponse,
    DeregisterTableRequest,
    DeregisterTableResponse,
    DescribeTransactionRequest,
    DescribeTransactionResponse,
    DropNamespaceRequest,
    ListTableVersionsRequest,
)
from lance_namespace.errors import ErrorCode, LanceNamespaceError
from lance_namespace_urllib3_client.models import TableVersion

from . import txn_store
from .errors import error_from_code

try:  # POSIX only
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

CONSOLE_DIR = "_console"
LOCK_FILE = f"{CONSOLE_DIR}/namespace.lock"
PENDING_DIR = f"{CONSOLE_DIR}/batch/pending"
WORK_DIR = f"{CONSOLE_DIR}/batch/work"
MANIFEST_TABLE = "__manifest"
RESERVED_FILE = ".lance-reserved"
RESERVED_BYTES = b"reserved"  # what pylance's DeclareTable writes
DELIMITER = "$"  # pylance's object-id delimiter in __manifest
TXN_PREFIX = "batch-"
RECORD_KIND = "batch"
LOCK_TIMEOUT_SECONDS = 120.0
U64_MAX = 2**64 - 1
_TXN_ID_RE = re.compile(r"^batch-[0-9a-f]{32}$")

KINDS: tuple[str, ...] = (
    "declare_table",
    "create_table_version",
    "delete_table_versions",
    "deregister_table",
)
# Properties the batch writes itself; AlterTransaction may not change or remove them.
SYSTEM_PROPERTIES: tuple[str, ...] = (
    "operation",
    "operation_count",
    *(f"{k}_count" for k in KINDS),
    "tables_touched",
    "tables",
    "namespaces",
    "committer",
    "started_at",
    "finished_at",
    "duration_ms",
    "reason",
    "recovered",
)

# -- fault injection -------------------------------------------------------------------------
# ``hook(step, phase, detail)`` runs before every file change of the protocol (and at a few
# named points: "validated", "guard.wait"). Tests use it to SIGKILL the process at write #k,
# to inject an I/O error, or to hold a process at a barrier. None in production.
FaultHook = Callable[[int, str, str], None]
_fault_hook: FaultHook | None = None


def set_fault_hook(hook: FaultHook | None) -> FaultHook | None:
    """Install ``hook`` (or remove it with ``None``); returns the previous hook."""
    global _fault_hook
    previous, _fault_hook = _fault_hook, hook
    return previous


class _Steps:
    """Numbers the protocol's file changes so that a test can stop at any of them."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self, phase: str, detail: str = "") -> None:
        self.n += 1
        hook = _fault_hook
        if hook is not None:
            hook(self.n, phase, detail)


def _fire(phase: str, detail: str = "") -> None:
    hook = _fault_hook
    if hook is not None:
        hook(0, phase, detail)


# -- errors ----------------------------------------------------------------------------------
def _error(
    code: ErrorCode, message: str, *, index: int | None = None, detail: str | None = None
) -> LanceNamespaceError:
    err = error_from_code(int(code), message, detail=detail)
    err.operation_index = index  # type: ignore[attr-defined]
    return err


def _unsupported(message: str) -> LanceNamespaceError:
    return _error(ErrorCode.UNSUPPORTED, message)


class _Canceled(Exception):
    """The transaction record left RUNNING before the commit point (AlterTransaction)."""

    def __init__(self, status: str | None):
        super().__init__(f"transaction status changed to {status} before the commit point")
        self.status = status


# -- small helpers -----------------------------------------------------------------------------
def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _oid(table_id: Sequence[str]) -> str:
    return DELIMITER.join(table_id)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_sha256(path: Path) -> str | None:
    try:
        return _sha256(path.read_bytes())
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def manifest_name(version: int, naming_scheme: str | None = None) -> str:
    """``_versions`` file name of ``version``: V2 (default, inverted, 20 digits) or V1."""
    if (naming_scheme or "V2").upper() == "V1":
        return f"{version}.manifest"
    return f"{U64_MAX - version:020d}.manifest"


def parse_manifest_name(name: str) -> int | None:
    """The version a ``_versions`` file name stands for (V1 or V2), or None."""
    if not name.endswith(".manifest"):
        return None
    stem = name[: -len(".manifest")]
    if not stem.isdigit():
        return None
    number = int(stem)
    return U64_MAX - number if len(stem) == 20 else number


def manifest_version(data: bytes) -> int | None:
    """The version recorded inside a Lance manifest file, or None if it is not one.

    Layout: protobuf ``Manifest`` (u32 length prefix) at the offset given by the 16-byte
    footer ``<u64 offset><u16 major><u16 minor>LANC``; ``version`` is field 3 (varint).
    """
    if len(data) < 20 or data[-4:] != b"LANC":
        return None
    (pos,) = struct.unpack_from("<Q", data, len(data) - 16)
    if pos + 4 > len(data) - 16:
        return None
    (length,) = struct.unpack_from("<I", data, pos)
    msg = data[pos + 4 : pos + 4 + length]
    if len(msg) != length:
        return None
    i, version = 0, 0

    def varint() -> int:
        nonlocal i
        shift = result = 0
        while True:
            if i >= len(msg) or shift > 63:
                raise ValueError("truncated varint")
            b = msg[i]
            i += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    try:
        while i < len(msg):
            key = varint()
            field, wire = key >> 3, key & 7
            if wire == 0:
                value = varint()
                if field == 3:
                    version = value
            elif wire == 1:
                i += 8
            elif wire == 2:
                size = varint()  # not "i += varint()": that would add to the old i
                i += size
            elif wire == 5:
                i += 4
            else:
                return None
            if i > len(msg):
                return None
    except ValueError:
        return None
    return version


def _local_etag(path: Path) -> str:
    """The ETag object_store's local filesystem reports (inode-mtime_us-size, hex)."""
    st = path.stat()
    return f'"{st.st_ino:x}-{st.st_mtime_ns // 1000:x}-{st.st_size:x}"'


def _store_path(path: Path) -> str:
    """A path the way pylance's version operations report it (object-store path, no leading /)."""
    return str(path).lstrip("/")


# -- durability --------------------------------------------------------------------------------
def _fsync_path(path: Path, *, directory: bool = False) -> None:
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    except OSError as e:  # some filesystems refuse fsync on directories
        if not directory or e.errno not in (errno.EINVAL, errno.EBADF, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


def _write_new(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Create ``path`` (it must not exist) with ``data``; fsynced unless ``sync=False``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


_FSYNC_THREADS = 16  # fsync releases the GIL; the filesystem journal batches concurrent ones


class _Durable:
    """Files and directories changed since the last barrier; ``flush()`` makes them durable.

    Nothing in the apply phase needs ordering among its own writes (the journal, durable
    before the first change, says how to undo any subset of them); what matters is that all of
    them are durable before the commit record (or, rolling back, before the FAILED record).
    So they are fsynced together at that barrier, in parallel: cost proportional to this
    batch's own writes (``syncfs(2)`` would also wait for every other writer's dirty data).
    """

    def __init__(self) -> None:
        self.paths: dict[Path, bool] = {}  # path -> is a directory

    def file(self, path: Path) -> None:
        self.paths.setdefault(path, False)

    def dir(self, path: Path) -> None:
        self.paths[path] = True

    def flush(self) -> None:
        paths, self.paths = self.paths, {}
        if len(paths) < 4:
            for p, is_dir in paths.items():
                _fsync_path(p, directory=is_dir)
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(_FSYNC_THREADS, len(paths))) as pool:
            for future in [
                pool.submit(_fsync_path, p, directory=is_dir) for p, is_dir in paths.items()
            ]:
                future.result()


def _write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically and durably (tmp, fsync, rename, dir fsync)."""
    tmp = path.with_name(f".tmp-{uuid.uuid4().hex}-{path.name}")
    try:
        _write_new(tmp, data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_path(path.parent, directory=True)


def _move(src: Path, dst: Path) -> None:
    """Move a file; atomic rename on one filesystem, else copy + fsync + unlink."""
    try:
        os.rename(src, dst)
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
        with contextlib.suppress(FileNotFoundError):
            os.unlink(dst)
        _write_new(dst, src.read_bytes())
        os.unlink(src)


# -- the namespace behind a LocalNamespace -----------------------------------------------------
@dataclasses.dataclass
class _Ctx:
    ns: Any
    directory: DirectoryNamespace
    root: str
    local_path: Path | None
    storage_options: dict[str, str]
    session: Any
    store: txn_store.TxnStore

    @property
    def is_file(self) -> bool:
        return self.local_path is not None

    @property
    def key(self) -> str:
        return f"file:{self.local_path}" if self.local_path is not None else f"mem:{self.root}"

    def path(self, rel: str) -> Path:
        assert self.local_path is not None
        return self.local_path / rel

    def manifest_uri(self) -> str:
        if self.local_path is not None:
            return str(self.local_path / MANIFEST_TABLE)
        return f"{self.root.rstrip('/')}/{MANIFEST_TABLE}"

    def table_path(self, location: str) -> Path:
        """The local directory of a catalog location (relative to the root, or absolute)."""
        assert self.local_path is not None
        parsed = urlparse(location)
        if parsed.scheme == "file":
            return Path(unquote(parsed.path))
        if parsed.scheme and len(parsed.scheme) > 1:
            raise _unsupported(
                f"table location {location!r} is not on the local filesystem; batch commits "
                "on a local namespace only handle tables stored under file paths"
            )
        return Path(location) if os.path.isabs(location) else self.local_path / location

    def table_uri(self, location: str) -> str:
        """The location as pylance's single-table operations report it."""
        if self.local_path is None:
            if "://" in location:
                return location
            return f"{self.root.rstrip('/')}/{location}"
        return "file://" + str(self.table_path(location))


def _context(ns: Any) -> _Ctx:
    """What this module needs from a LocalNamespace; UnsupportedOperationError otherwise."""
    directory = ns if isinstance(ns, DirectoryNamespace) else getattr(ns, "_inner", None)
    root = getattr(ns, "root", None)
    if not isinstance(directory, DirectoryNamespace) or not isinstance(root, str):
        raise _unsupported(
            "batch commit needs a local namespace (backend.local.LocalNamespace): "
            f"{type(ns).__name__} has no DirectoryNamespace/root"
        )
    local_path = getattr(ns, "local_path", None)
    scheme = urlparse(root).scheme.lower()
    if local_path is None and scheme in ("", "file"):
        local_path = Path(unquote(urlparse(root).path) if scheme == "file" else root).resolve()
    if local_path is None and scheme != "memory":
        raise _unsupported(
            f"batch commit is not supported on {scheme}:// namespaces: the all-or-none "
            "protocol needs a cross-process lock and atomic rename/link (put-if-absent) of "
            "files, which this object store does not offer to the console; use a file:// "
            "(local or mounted POSIX filesystem) or memory:// namespace"
        )
    if local_path is not None and fcntl is None:  # pragma: no cover - Windows
        raise _unsupported("batch commit on local directories needs POSIX flock (fcntl)")
    so = dict(getattr(ns, "storage_options", None) or {})
    store = getattr(ns, "txn_store", None)
    if not isinstance(store, txn_store.TxnStore):
        store = txn_store.open_store(root, so)
    return _Ctx(
        ns=ns,
        directory=directory,
        root=root,
        local_path=Path(local_path) if local_path is not None else None,
        storage_options=so,
        session=getattr(ns, "_session", None),
        store=store,
    )


# -- the namespace lock ------------------------------------------------------------------------
_TLS = threading.local()
_MEMORY_LOCKS: dict[str, threading.RLock] = {}
_MEMORY_LOCKS_GUARD = threading.Lock()


def _held() -> dict[str, int]:
    held = getattr(_TLS, "held", None)
    if held is None:
        held = _TLS.held = {}
    return held


class _NamespaceLock:
    """Exclusive writer lock of one namespace root.

    file: ``flock`` on ``<root>/_console/namespace.lock`` (released by the kernel when the
    process dies); memory: a process-wide ``RLock`` per root. Re-entrant per thread.
    """

    def __init__(self, ctx: _Ctx):
        self.ctx = ctx
        self.key = ctx.key
        self._fd: int | None = None
        self._mem: threading.RLock | None = None
        self._reentered = False

    def _try(self) -> bool:
        if self.ctx.local_path is None:
            with _MEMORY_LOCKS_GUARD:
                self._mem = _MEMORY_LOCKS.setdefault(self.key, threading.RLock())
            return self._mem.acquire(blocking=False)
        if self._fd is None:
            path = self.ctx.path(LOCK_FILE)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def acquire(self, *, blocking: bool = True, timeout: float | None = None) -> bool:
        held = _held()
        if held.get(self.key):
            held[self.key] += 1
            self._reentered = True
            return True
        deadline = time.monotonic() + (LOCK_TIMEOUT_SECONDS if timeout is None else timeout)
        delay = 0.002
        while not self._try():
            if not blocking:
                self._close()
                return False
            if time.monotonic() >= deadline:
                self._close()
                raise _error(
                    ErrorCode.SERVICE_UNAVAILABLE,
                    f"timed out waiting for the write lock of namespace {self.ctx.root} "
                    "(another writer holds it); try again",
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        held[self.key] = 1
        return True

    def release(self) -> None:
        held = _held()
        held[self.key] -= 1
        if self._reentered or held[self.key]:
            return
        del held[self.key]
        if self._mem is not None:
            self._mem.release()
        self._close()

    def _close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    @property
    def reentered(self) -> bool:
        return self._reentered


@contextlib.contextmanager
def _locked(ctx: _Ctx) -> Iterator[_NamespaceLock]:
    lock = _NamespaceLock(ctx)
    lock.acquire()
    try:
        yield lock
    finally:
        lock.release()


# -- reading the namespace -------------------------------------------------------------------------
@dataclasses.dataclass
class _Catalog:
    rows: dict[str, dict[str, Any]]
    schema: pa.Schema | None

    def namespace_exists(self, ns_id: Sequence[str]) -> bool:
        if not ns_id:
            return True
        row = self.rows.get(_oid(ns_id))
        return row is not None and row.get("object_type") == "namespace"


def _open_catalog(ctx: _Ctx) -> lance.LanceDataset | None:
    try:
        return lance.dataset(
            ctx.manifest_uri(), storage_options=ctx.storage_options or None, session=ctx.session
        )
    except (ValueError, OSError) as e:
        if "not found" in str(e).lower():
            return None
        raise


def _read_catalog(ctx: _Ctx) -> _Catalog:
    ds = _open_catalog(ctx)
    if ds is None:
        return _Catalog(rows={}, schema=None)
    rows = {r["object_id"]: r for r in ds.to_table().to_pylist()}
    return _Catalog(rows=rows, schema=ds.schema)


@dataclasses.dataclass
class _TableState:
    object_id: str
    row: dict[str, Any] | None
    path: Path | None  # local directory (file roots)
    versions: dict[int, str]  # version -> manifest file name ("" on memory roots)
    latest_stat: tuple[int, int] | None

    @property
    def is_table(self) -> bool:
        return self.row is not None and self.row.get("object_type") == "table"

    def token(self) -> tuple[Any, ...]:
        row = self.row or {}
        return (
            row.get("object_type"),
            row.get("location"),
            tuple(sorted(self.versions)),
            self.latest_stat,
        )


def _list_versions(path: Path) -> tuple[dict[int, str], tuple[int, int] | None]:
    try:
        names = os.listdir(path / "_versions")
    except (FileNotFoundError, NotADirectoryError):
        return {}, None
    versions: dict[int, str] = {}
    for name in names:
        v = parse_manifest_name(name)
        if v is not None:
            versions[v] = name
    stat = None
    if versions:
        with contextlib.suppress(FileNotFoundError):
            st = (path / "_versions" / versions[max(versions)]).stat()
            stat = (st.st_size, st.st_mtime_ns)
    return versions, stat


class _Reader:
    """One consistent-enough read of the catalog plus lazily listed table versions."""

    def __init__(self, ctx: _Ctx):
        self.ctx = ctx
        self.catalog = _read_catalog(ctx)
        self._states: dict[str, _TableState] = {}

    def state(self, object_id: str) -> _TableState:
        if object_id in self._states:
            return self._states[object_id]
        row = self.catalog.rows.get(object_id)
        path = None
        versions: dict[int, str] = {}
        stat = None
        if row is not None and row.get("object_type") == "table":
            if self.ctx.is_file:
                path = self.ctx.table_path(row["location"])
                versions, stat = _list_versions(path)
            else:
                versions = self._api_versions(object_id)
        st = _TableState(object_id, row, path, versions, stat)
        self._states[object_id] = st
        return st

    def _api_versions(self, object_id: str) -> dict[int, str]:
        try:
            resp = self.ctx.directory.list_table_versions(
                ListTableVersionsRequest(id=object_id.split(DELIMITER))
            )
        except LanceNamespaceError as e:
            if e.code == ErrorCode.TABLE_NOT_FOUND:  # declared only: no dataset yet
                return {}
            raise
        return {v.version: "" for v in resp.versions}

    def tokens(self, object_ids: Sequence[str]) -> dict[str, tuple[Any, ...]]:
        return {oid: self.state(oid).token() for oid in object_ids}


# -- operations and validation ---------------------------------------------------------------------
@dataclasses.dataclass
class _Op:
    index: int
    kind: str
    table_id: list[str]
    request: Any

    @property
    def object_id(self) -> str:
        return _oid(self.table_id)

    def label(self) -> str:
        return f"operation {self.index} ({self.kind} {_oid(self.table_id)})"


def _parse_operations(request: BatchCommitTablesRequest) -> list[_Op]:
    operations = list(request.operations or [])
    if not operations:
        raise _error(ErrorCode.INVALID_INPUT, "a batch commit needs at least one operation")
    ops = []
    for i, op in enumerate(operations):
        given = [k for k in KINDS if getattr(op, k, None) is not None]
        if len(given) != 1:
            raise _error(
                ErrorCode.INVALID_INPUT,
                f"operation {i}: exactly one of {', '.join(KINDS)} must be set, got "
                f"{', '.join(given) or 'none'}",
                index=i,
            )
        kind = given[0]
        req = getattr(op, kind)
        table_id = list(req.id or [])
        if (
            not table_id
            or any(not isinstance(p, str) or not p for p in table_id)
            or any(DELIMITER in p for p in table_id)
        ):
            raise _error(
                ErrorCode.INVALID_INPUT,
                f"operation {i} ({kind}): a table id must be a non-empty list of non-empty "
                f"names without {DELIMITER!r}, got {table_id!r}",
                index=i,
            )
        ops.append(_Op(i, kind, table_id, req))
    return ops


@dataclasses.dataclass
class _Sim:
    """A table as the batch sees it after the operations validated so far."""

    exists: bool
    location: str | None
    versions: set[int]
    row: dict[str, Any] | None = None
    created: dict[int, int] = dataclasses.field(default_factory=dict)  # version -> op index
    declared_by: int | None = None
    deregistered_by: int | None = None


@dataclasses.dataclass
class _Plan:
    ops: list[_Op]
    declares: list[dict[str, Any]]
    versions: list[dict[str, Any]]
    deletes: list[dict[str, Any]]
    deregisters: list[dict[str, Any]]
    tokens: dict[str, tuple[Any, ...]]
    namespaces: dict[str, bool]
    staged_bytes: dict[int, bytes]  # op index -> staged manifest bytes (file roots)
    needs_catalog: bool


def _staged_path(manifest_path: str) -> Path:
    """Where pylance's CreateTableVersion reads ``manifest_path`` from on a local root."""
    parsed = urlparse(manifest_path)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    if parsed.scheme and len(parsed.scheme) > 1:
        raise ValueError(f"not a local path: {manifest_path}")
    return Path("/" + manifest_path.lstrip("/"))


def _validate(ctx: _Ctx, ops: list[_Op]) -> _Plan:
    reader = _Reader(ctx)
    catalog = reader.catalog
    sims: dict[str, _Sim] = {}
    plan = _Plan(ops, [], [], [], [], {}, {}, {}, False)

    def fail(op: _Op, code: ErrorCode, message: str) -> LanceNamespaceError:
        return _error(code, f"{op.label()}: {message}", index=op.index)

    def sim(op: _Op) -> _Sim:
        oid = op.object_id
        if oid not in sims:
            st = reader.state(oid)
            plan.tokens[oid] = st.token()
            sims[oid] = _Sim(
                exists=st.is_table,
                location=(st.row or {}).get("location") if st.is_table else None,
                versions=set(st.versions),
                row=st.row,
            )
        return sims[oid]

    def contradiction(op: _Op, s: _Sim) -> LanceNamespaceError | None:
        if s.deregistered_by is not None:
            return fail(
                op,
                ErrorCode.INVALID_INPUT,
                f"contradicts operation {s.deregistered_by}, which deregisters the table "
                "earlier in this batch (DeregisterTable must be the last operation on a table)",
            )
        return None

    for op in ops:
        ns_id = op.table_id[:-1]
        if ns_id:
            ns_key = _oid(ns_id)
            exists = catalog.namespace_exists(ns_id)
            plan.namespaces.setdefault(ns_key, exists)
            if not exists:
                raise fail(op, ErrorCode.NAMESPACE_NOT_FOUND, f"namespace {ns_key} not found")
        s = sim(op)
        err = contradiction(op, s)
        if err is not None:
            raise err
        req = op.request
        if op.kind == "declare_table":
            if s.declared_by is not None:
                raise fail(
                    op,
                    ErrorCode.INVALID_INPUT,
                    f"contradicts operation {s.declared_by}, which declares the same table",
                )
            if s.exists or (s.row is not None and s.row.get("object_type") != "table"):
                what = (s.row or {}).get("object_type") or "table"
                raise fail(
                    op,
                    ErrorCode.TABLE_ALREADY_EXISTS,
                    f"a {what} named {op.object_id} already exists",
                )
            location = (
                f"{op.table_id[0]}.lance"
                if len(op.table_id) == 1
                else f"{secrets.randbits(32):08x}_{op.object_id}"
            )
            if req.location and not (
                len(op.table_id) == 1
                and req.location.rstrip("/") in (location, ctx.table_uri(location))
            ):
                raise fail(
                    op,
                    ErrorCode.INVALID_INPUT,
                    f"cannot declare the table at location {req.location!r}: the directory "
                    "namespace chooses table locations itself",
                )
            entry: dict[str, Any] = {
                "index": op.index,
                "id": op.table_id,
                "object_id": op.object_id,
                "location": location,
                "properties": dict(req.properties) if req.properties is not None else None,
            }
            existing: set[int] = set()
            if ctx.is_file:
                path = ctx.table_path(location)
                entry["path"] = str(path)
                existing = set(_list_versions(path)[0])  # a root-level leftover is reused
            plan.declares.append(entry)
            s.exists, s.location, s.versions = True, location, existing
            s.declared_by = op.index
        elif not s.exists:
            raise fail(op, ErrorCode.TABLE_NOT_FOUND, f"table {op.object_id} not found")
        elif op.kind == "create_table_version":
            _validate_version(ctx, op, s, plan, fail)
        elif op.kind == "delete_table_versions":
            _validate_delete(ctx, op, s, plan, fail)
        else:  # deregister_table
            if s.declared_by is not None:
                raise fail(
                    op,
                    ErrorCode.INVALID_INPUT,
                    f"contradicts operation {s.declared_by}, which declares the table in this "
                    "batch",
                )
            if s.created:
                first = min(s.created.values())
                raise fail(
                    op,
                    ErrorCode.INVALID_INPUT,
                    f"contradicts operation {first}, which creates a version of the table in "
                    "this batch",
                )
            row = dict(s.row or {})
            plan.deregisters.append(
                {
                    "index": op.index,
                    "id": op.table_id,
                    "object_id": op.object_id,
                    "row": row,
                    "location": s.location,
                }
            )
            s.deregistered_by = op.index
            s.exists = False
    plan.needs_catalog = bool(plan.declares or plan.deregisters)
    return plan


def _refuse_branch(op: _Op) -> None:
    """Version operations on a branch other than main are not part of the batch protocol."""
    if op.request.branch not in (None, "", "main"):
        raise _error(
            ErrorCode.UNSUPPORTED,
            f"{op.label()}: branches are not supported in a batch commit",
            index=op.index,
        )


def _validate_version(
    ctx: _Ctx, op: _Op, s: _Sim, plan: _Plan, fail: Callable[..., LanceNamespaceError]
) -> None:
    req = op.request
    _refuse_branch(op)
    version = req.version
    if not isinstance(version, int) or version < 1:
        raise fail(op, ErrorCode.INVALID_INPUT, f"version must be >= 1, got {version!r}")
    scheme = (req.naming_scheme or "V2").upper()
    if scheme not in ("V1", "V2"):
        raise fail(op, ErrorCode.INVALID_INPUT, f"unknown naming scheme {req.naming_scheme!r}")
    if version in s.created:
        raise fail(
            op,
            ErrorCode.INVALID_INPUT,
            f"contradicts operation {s.created[version]}, which creates version {version} too",
        )
    latest = max(s.versions) if s.versions else None
    expected = (latest or 0) + 1
    if version != expected:
        raise fail(
            op,
            ErrorCode.CONCURRENT_MODIFICATION,
            f"version {version} is not the next version of the table: expected {expected} "
            f"(latest {latest if latest is not None else 'none'})",
        )
    entry: dict[str, Any] = {
        "index": op.index,
        "id": op.table_id,
        "object_id": op.object_id,
        "version": version,
        "naming_scheme": scheme,
        "manifest_path": req.manifest_path,
    }
    if ctx.is_file:
        if not req.manifest_path:
            raise fail(op, ErrorCode.INVALID_INPUT, "manifest_path is required")
        try:
            staged = _staged_path(req.manifest_path)
        except ValueError as e:
            raise fail(op, ErrorCode.INVALID_INPUT, f"staged manifest: {e}") from None
        try:
            data = staged.read_bytes()
        except FileNotFoundError:
            raise fail(
                op,
                ErrorCode.INVALID_INPUT,
                f"staged manifest not found at {req.manifest_path!r} for version {version}",
            ) from None
        except OSError as e:
            raise fail(
                op,
                ErrorCode.INVALID_INPUT,
                f"staged manifest {req.manifest_path!r} is unreadable: {e}",
            ) from None
        found = manifest_version(data)
        if found is None:
            raise fail(
                op,
                ErrorCode.INVALID_INPUT,
                f"{req.manifest_path!r} is not a readable Lance manifest",
            )
        if found != version:
            raise fail(
                op,
                ErrorCode.INVALID_INPUT,
                f"the staged manifest {req.manifest_path!r} is for version {found}, not {version}",
            )
        if req.manifest_size is not None and req.manifest_size != len(data):
            raise fail(
                op,
                ErrorCode.INVALID_INPUT,
                f"manifest_size {req.manifest_size} does not match the staged manifest "
                f"({len(data)} bytes)",
            )
        table_path = ctx.table_path(s.location or "")
        final = table_path / "_versions" / manifest_name(version, scheme)
        if staged == final:
            raise fail(op, ErrorCode.INVALID_INPUT, "the staged manifest is the final path")
        entry.update(
            staged=str(staged),
            final=str(final),
            table_path=str(table_path),
            sha256=_sha256(data),
            size=len(data),
        )
        plan.staged_bytes[op.index] = data
    plan.versions.append(entry)
    s.versions.add(version)
    s.created[version] = op.index


def _validate_delete(
    ctx: _Ctx, op: _Op, s: _Sim, plan: _Plan, fail: Callable[..., LanceNamespaceError]
) -> None:
    req = op.request
    _refuse_branch(op)
    ranges = list(req.ranges or [])
    if not ranges:
        raise fail(op, ErrorCode.INVALID_INPUT, "no version ranges to delete")
    latest = max(s.versions) if s.versions else None
    chosen: set[int] = set()
    for r in ranges:
        start, end = r.start_version, r.end_version
        if start < 0:
            raise fail(op, ErrorCode.INVALID_INPUT, f"start_version must be >= 0, got {start}")
        if end < -1:
            raise fail(
                op,
                ErrorCode.INVALID_INPUT,
                f"end_version must be -1 (through the latest) or >= 1, got {end}",
            )
        if end != -1 and end <= start:
            raise fail(
                op,
                ErrorCode.INVALID_INPUT,
                f"empty or inverted version range [{start}, {end}): the start is inclusive "
                "and the end exclusive",
            )
        if latest is not None and start <= latest and (end == -1 or latest < end):
            raise fail(
                op,
                ErrorCode.INVALID_INPUT,
                f"range [{start}, {end}) covers version {latest}, the latest version of the "
                "table; the table would roll back or become unreadable",
            )
        hi = (latest + 1) if end == -1 and latest is not None else end
        chosen.update(v for v in s.versions if start <= v < hi)
    for v in sorted(chosen):
        if v in s.created:
            raise fail(
                op,
                ErrorCode.INVALID_INPUT,
                f"contradicts operation {s.created[v]}, which creates version {v} in this batch",
            )
    already = set()
    for d in plan.deletes:  # versions an earlier operation of this batch already deletes
        if d["object_id"] == op.object_id:
            already.update(m["version"] for m in d["moves"])
    moves = []
    if ctx.is_file:
        table_path = ctx.table_path(s.location or "")
        names, _ = _list_versions(table_path)
        for v in sorted(chosen - already):
            moves.append(
                {
                    "version": v,
                    "src": str(table_path / "_versions" / names[v]),
                }
            )
    else:
        moves = [{"version": v} for v in sorted(chosen - already)]
    plan.deletes.append(
        {
            "index": op.index,
            "id": op.table_id,
            "object_id": op.object_id,
            "ranges": [
                {"start_version": r.start_version, "end_version": r.end_version} for r in ranges
            ],
            "moves": moves,
            "deleted_count": len(chosen - already),
        }
    )
    s.versions -= chosen


# -- records -----------------------------------------------------------------------------------------
def _new_txn_id() -> str:
    return f"{TXN_PREFIX}{uuid.uuid4().hex}"


def is_batch_transaction_id(parts: Sequence[str] | None) -> bool:
    """True for a one-part id this module issued (``batch-<32 hex digits>``)."""
    return (
        parts is not None
        and len(parts) == 1
        and isinstance(parts[0], str)
        and bool(_TXN_ID_RE.match(parts[0]))
    )


def _base_record(plan: _Plan, txn_id: str, started_at: str) -> dict[str, Any]:
    counts = dict.fromkeys(KINDS, 0)
    for op in plan.ops:
        counts[op.kind] += 1
    tables = list(dict.fromkeys(op.object_id for op in plan.ops))
    namespaces = sorted({_oid(op.table_id[:-1]) for op in plan.ops if len(op.table_id) > 1})
    props = {
        "operation": "BatchCommitTables",
        "operation_count": str(len(plan.ops)),
        **{f"{k}_count": str(v) for k, v in counts.items()},
        "tables_touched": str(len(tables)),
        "tables": json.dumps(tables),
        "namespaces": json.dumps(namespaces),
        "committer": f"{socket.gethostname()}:{os.getpid()}",
        "started_at": started_at,
    }
    return {
        "kind": RECORD_KIND,
        "id": [txn_id],
        "status": txn_store.RUNNING,
        "properties": props,
        "readonly_properties": list(SYSTEM_PROPERTIES),
    }


def _finish_props(rec: dict[str, Any], reason: str | None, *, recovered: bool = False) -> None:
    props = rec.setdefault("properties", {})
    finished = _now_iso()
    props["finished_at"] = finished
    started = props.get("started_at")
    if started:
        with contextlib.suppress(ValueError):
            t0 = datetime.fromisoformat(started.replace("Z", "+00:00"))
            t1 = datetime.fromisoformat(finished.replace("Z", "+00:00"))
            props["duration_ms"] = str(int((t1 - t0).total_seconds() * 1000))
    if reason:
        props["reason"] = reason
    if recovered:
        props["recovered"] = "true"


def _fsync_store(ctx: _Ctx) -> None:
    directory = getattr(ctx.store, "directory", None)
    if ctx.is_file and isinstance(directory, Path):
        _fsync_path(directory, directory=True)


def _put_final(
    ctx: _Ctx,
    txn_id: str,
    base: dict[str, Any],
    status: str,
    reason: str | None,
    *,
    recovered: bool = False,
) -> dict[str, Any]:
    """Write the record's terminal status, keeping properties AlterTransaction added."""

    def fn(rec: dict[str, Any] | None) -> dict[str, Any]:
        rec = rec or copy.deepcopy(base)
        current = txn_store.normalize_status(rec.get("status") or txn_store.RUNNING)
        final = txn_store.CANCELED if current == txn_store.CANCELED else status
        rec["status"] = final
        _finish_props(rec, reason, recovered=recovered)
        return rec

    new = ctx.store.update(txn_id, fn)
    _fsync_store(ctx)
    assert new is not None
    return new


def _commit_point(ctx: _Ctx, txn_id: str) -> dict[str, Any]:
    """RUNNING -> SUCCEEDED in one atomic write; _Canceled if the status was changed."""

    def fn(rec: dict[str, Any] | None) -> dict[str, Any]:
        status = txn_store.normalize_status((rec or {}).get("status") or "FAILED")
        if rec is None or status != txn_store.RUNNING:
            raise _Canceled(status if rec is not None else None)
        rec["status"] = txn_store.SUCCEEDED
        _finish_props(rec, None)
        return rec

    new = ctx.store.update(txn_id, fn)
    _fsync_store(ctx)
    assert new is not None
    return new


# -- the file protocol --------------------------------------------------------------------------------
def _journal_path(ctx: _Ctx, txn_id: str) -> Path:
    return ctx.path(PENDING_DIR) / f"{txn_id}.json"


def _work_path(ctx: _Ctx, txn_id: str) -> Path:
    return ctx.path(WORK_DIR) / txn_id


def _alt_tmp(table_path: str, txn_id: str, index: int) -> Path:
    """Staging next to the table when the work directory is on another filesystem."""
    return Path(table_path) / f".lance-console-{txn_id}-{index}.tmp"


def _make_journal(ctx: _Ctx, plan: _Plan, txn_id: str, record: dict[str, Any]) -> dict[str, Any]:
    work = _work_path(ctx, txn_id)
    declares = []
    for d in plan.declares:
        path = Path(d["path"])
        declares.append(
            {
                **d,
                "dir_existed": path.exists(),
                "reserved_existed": (path / RESERVED_FILE).exists(),
            }
        )
    versions = []
    for v in plan.versions:
        versions.append(
            {
                **v,
                "tmp": str(work / f"v{v['index']}.manifest"),
                "alt_tmp": str(_alt_tmp(v["table_path"], txn_id, v["index"])),
                "versions_dir_existed": (Path(v["table_path"]) / "_versions").is_dir(),
            }
        )
    deletes = []
    for d in plan.deletes:
        moves = [
            {**m, "trash": str(work / f"d{d['index']}-{m['version']}.manifest")} for m in d["moves"]
        ]
        deletes.append({**d, "moves": moves})
    return {
        "format": 1,
        "txn_id": txn_id,
        "record": record,
        "declares": declares,
        "versions": versions,
        "deletes": deletes,
        "deregisters": plan.deregisters,
    }


def _catalog_rows(schema: pa.Schema, rows: list[dict[str, Any]]) -> pa.Table:
    names = schema.names
    return pa.Table.from_pylist([{n: r.get(n) for n in names} for r in rows], schema=schema)


def _in_predicate(ids: Sequence[str]) -> str:
    quoted = ", ".join("'" + i.replace("'", "''") + "'" for i in ids)
    return f"object_id IN ({quoted})"


def _bootstrap_catalog(ctx: _Ctx) -> None:
    """Have pylance create ``__manifest`` (it does so lazily, on the first write)."""
    if _open_catalog(ctx) is not None:
        return
    name = f"__lance_console_bootstrap_{uuid.uuid4().hex[:8]}"
    ctx.directory.create_namespace(CreateNamespaceRequest(id=[name]))
    ctx.directory.drop_namespace(DropNamespaceRequest(id=[name]))


def _declared_row(d: dict[str, Any]) -> dict[str, Any]:
    props = d.get("properties")
    return {
        "object_id": d["object_id"],
        "object_type": "table",
        "location": d["location"],
        "metadata": json.dumps(props, separators=(",", ":")) if props else None,
        "base_objects": None,
    }


def _catalog_commit(ctx: _Ctx, journal: dict[str, Any]) -> None:
    """One Lance commit of ``__manifest``: insert declared rows, delete deregistered rows."""
    ds = _open_catalog(ctx)
    if ds is None:
        raise _error(ErrorCode.INTERNAL, "the namespace catalog (__manifest) disappeared")
    new_rows = [_declared_row(d) for d in journal["declares"]]
    gone = [d["object_id"] for d in journal["deregisters"]]
    try:
        if new_rows:
            builder = ds.merge_insert("object_id").when_matched_fail().when_not_matched_insert_all()
            if gone:
                builder = builder.when_not_matched_by_source_delete(_in_predicate(gone))
            stats = builder.execute(_catalog_rows(ds.schema, new_rows))
            inserted, deleted = stats["num_inserted_rows"], stats["num_deleted_rows"]
        else:
            inserted, deleted = 0, ds.delete(_in_predicate(gone))["num_deleted_rows"]
    except OSError as e:
        if "found matching row" in str(e):
            raise _error(
                ErrorCode.CONCURRENT_MODIFICATION,
                f"a declared table appeared in the catalog while the batch committed: {e}",
            ) from e
        raise
    if inserted != len(new_rows) or deleted != len(gone):
        raise _error(
            ErrorCode.CONCURRENT_MODIFICATION,
            f"the catalog changed while the batch committed: inserted {inserted} of "
            f"{len(new_rows)} rows, deleted {deleted} of {len(gone)}",
        )


def _catalog_undo(ctx: _Ctx, journal: dict[str, Any], steps: _Steps, dur: _Durable) -> None:
    """Make the catalog hold what it held before, whatever part of the commit happened."""
    if not journal["declares"] and not journal["deregisters"]:
        return
    ds = _open_catalog(ctx)
    if ds is None:
        return
    rows = {r["object_id"]: r for r in ds.to_table().to_pylist()}
    ours = [
        d["object_id"]
        for d in journal["declares"]
        if rows.get(d["object_id"], {}).get("location") == d["location"]
    ]
    back = [d["row"] for d in journal["deregisters"] if d["object_id"] not in rows]
    if not ours and not back:
        return
    before = _catalog_files(ctx)
    if ours:
        steps("undo.catalog.delete", f"{len(ours)} rows")
        ds.delete(_in_predicate(ours))
    if back:
        steps("undo.catalog.insert", f"{len(back)} rows")
        ds = _open_catalog(ctx)
        assert ds is not None
        ds.merge_insert("object_id").when_not_matched_insert_all().execute(
            _catalog_rows(ds.schema, back)
        )
    _catalog_changes(ctx, before, dur)


def _catalog_changes(ctx: _Ctx, before: set[str], dur: _Durable) -> None:
    """Hand the files a catalog commit added (and their directories) to ``dur``."""
    base = ctx.path(MANIFEST_TABLE)
    dur.dir(base)
    for sub in ("_versions", "data", "_transactions", "_deletions"):
        d = base / sub
        if not d.is_dir():
            continue
        dur.dir(d)
        for name in os.listdir(d):
            if f"{sub}/{name}" not in before:
                dur.file(d / name)


def _catalog_files(ctx: _Ctx) -> set[str]:
    base = ctx.path(MANIFEST_TABLE)
    out = set()
    for sub in ("_versions", "data", "_transactions", "_deletions"):
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            out.update(f"{sub}/{n}" for n in os.listdir(base / sub))
    return out


def _apply_file(
    ctx: _Ctx, journal: dict[str, Any], staged: dict[int, bytes], steps: _Steps, dur: _Durable
) -> None:
    """Every change of the batch; each one undoable from the journal (``_undo_file``)."""
    for d in journal["declares"]:
        path = Path(d["path"])
        if not path.exists():
            steps("apply.declare.mkdir", d["object_id"])
            path.mkdir()
            dur.dir(path.parent)
        reserved = path / RESERVED_FILE
        if not reserved.exists():
            steps("apply.declare.reserve", d["object_id"])
            _write_new(reserved, RESERVED_BYTES, sync=False)
            dur.file(reserved)
            dur.dir(path)
    work = _work_path(ctx, journal["txn_id"])
    for v in journal["versions"]:
        vdir = Path(v["final"]).parent
        if not vdir.is_dir():
            steps("apply.version.mkdir", v["object_id"])
            vdir.mkdir(parents=True)
            dur.dir(vdir.parent)
        work.mkdir(parents=True, exist_ok=True)
        tmp = Path(v["tmp"])
        steps("apply.version.stage", f"{v['object_id']} v{v['version']}")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        _write_new(tmp, staged[v["index"]], sync=False)
        dur.file(tmp)  # the same inode as the published manifest
        steps("apply.version.link", f"{v['object_id']} v{v['version']}")
        try:
            _link(tmp, Path(v["final"]), Path(v["alt_tmp"]), dur)
        except FileExistsError:
            raise _error(
                ErrorCode.CONCURRENT_MODIFICATION,
                f"version {v['version']} of table {v['object_id']} appeared while the batch "
                "committed",
            ) from None
        dur.dir(vdir)
        dur.dir(work)
    for d in journal["deletes"]:
        for m in d["moves"]:
            if not m.get("src"):
                continue
            src, trash = Path(m["src"]), Path(m["trash"])
            work.mkdir(parents=True, exist_ok=True)
            steps("apply.delete.hide", f"{d['object_id']} v{m['version']}")
            try:
                _move(src, trash)
            except FileNotFoundError:
                raise _error(
                    ErrorCode.CONCURRENT_MODIFICATION,
                    f"version {m['version']} of table {d['object_id']} disappeared while the "
                    "batch committed",
                ) from None
            dur.dir(src.parent)
            dur.dir(trash.parent)
    if journal["declares"] or journal["deregisters"]:
        before = _catalog_files(ctx)
        steps("apply.catalog", f"+{len(journal['declares'])} -{len(journal['deregisters'])}")
        _catalog_commit(ctx, journal)
        _catalog_changes(ctx, before, dur)
    dur.flush()  # everything durable before the commit record


def _link(tmp: Path, final: Path, alt_tmp: Path, dur: _Durable) -> None:
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
        _write_new(alt_tmp, tmp.read_bytes(), sync=False)
        dur.file(alt_tmp)
        dur.dir(alt_tmp.parent)
        try:
            os.link(alt_tmp, final)
        except FileExistsError:
            raise FileExistsError(str(final)) from None
        except OSError as e2:
            raise _unsupported(
                f"the filesystem of {final.parent} supports no hard links, which the batch "
                f"commit uses as its put-if-absent: {e2}"
            ) from e2


def _ours(final: Path, v: dict[str, Any]) -> bool:
    for tmp in (Path(v["tmp"]), Path(v["alt_tmp"])):
        with contextlib.suppress(OSError):
            if os.path.samefile(tmp, final):
                return True
    return _file_sha256(final) == v["sha256"]


def _undo_file(ctx: _Ctx, journal: dict[str, Any], steps: _Steps, dur: _Durable) -> None:
    """Roll back whatever part of ``journal`` was applied. Idempotent; ends durable."""
    _catalog_undo(ctx, journal, steps, dur)
    for d in reversed(journal["deletes"]):
        for m in reversed(d["moves"]):
            if not m.get("src"):
                continue
            src, trash = Path(m["src"]), Path(m["trash"])
            if not trash.exists():
                continue
            if src.exists():  # a copy across filesystems that stopped before its unlink
                steps("undo.delete.drop-copy", f"{d['object_id']} v{m['version']}")
                os.unlink(trash)
            else:
                steps("undo.delete.restore", f"{d['object_id']} v{m['version']}")
                _move(trash, src)
                dur.file(src)
            dur.dir(src.parent)
    for v in reversed(journal["versions"]):
        final = Path(v["final"])
        if final.exists() and _ours(final, v):
            steps("undo.version.unlink", f"{v['object_id']} v{v['version']}")
            os.unlink(final)
            dur.dir(final.parent)
        alt = Path(v["alt_tmp"])
        if alt.exists():
            steps("undo.version.alt-tmp", v["object_id"])
            os.unlink(alt)
            dur.dir(alt.parent)
        vdir = final.parent
        if not v["versions_dir_existed"] and vdir.is_dir() and not any(vdir.iterdir()):
            steps("undo.version.rmdir", v["object_id"])
            vdir.rmdir()
            dur.dir(vdir.parent)
    for d in reversed(journal["declares"]):
        path = Path(d["path"])
        reserved = path / RESERVED_FILE
        if not d["reserved_existed"] and reserved.exists():
            steps("undo.declare.unreserve", d["object_id"])
            os.unlink(reserved)
            dur.dir(path)
        if not d["dir_existed"] and path.is_dir() and not any(path.iterdir()):
            steps("undo.declare.rmdir", d["object_id"])
            path.rmdir()
            dur.dir(path.parent)
    dur.flush()  # the rollback is durable before the FAILED record says so


def _cleanup_file(ctx: _Ctx, journal: dict[str, Any], steps: _Steps, *, committed: bool) -> None:
    """After the outcome is recorded: drop consumed staging files, the work dir, the journal.

    Nothing here changes what the namespace shows, so a crash anywhere in it is harmless:
    recovery repeats it (it is idempotent) as long as the journal exists.
    """
    if committed:
        for v in journal["versions"]:
            staged = Path(v["staged"])
            if _file_sha256(staged) == v["sha256"]:  # pylance consumes the staging manifest too
                steps("cleanup.staged", str(staged))
                os.unlink(staged)
            alt = Path(v["alt_tmp"])
            if alt.exists():
                steps("cleanup.alt-tmp", str(alt))
                os.unlink(alt)
    work = _work_path(ctx, journal["txn_id"])
    if work.exists():
        steps("cleanup.work", str(work))  # the hidden manifests: the deferred physical delete
        shutil.rmtree(work)
    journal_file = _journal_path(ctx, journal["txn_id"])
    if journal_file.exists():
        steps("cleanup.journal", journal["txn_id"])
        os.unlink(journal_file)
        _fsync_path(journal_file.parent, directory=True)


def _load_journals(ctx: _Ctx) -> list[tuple[Path, dict[str, Any] | None]]:
    pending = ctx.path(PENDING_DIR)
    try:
        names = sorted(os.listdir(pending))
    except FileNotFoundError:
        return []
    out: list[tuple[Path, dict[str, Any] | None]] = []
    for name in names:
        path = pending / name
        if name.startswith(".tmp-"):  # a journal write that never reached its rename
            out.append((path, None))
            continue
        if not name.endswith(".json"):
            continue
        try:
            out.append((path, json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError):
            out.append((path, None))
    return out


def _has_pending(ctx: _Ctx) -> bool:
    if not ctx.is_file:
        return False
    try:
        return bool(os.listdir(ctx.path(PENDING_DIR)))
    except FileNotFoundError:
        return False


def _recover_locked(ctx: _Ctx) -> list[str]:
    """Finish or roll back every journal left by a dead process. Caller holds the lock."""
    if not _has_pending(ctx):
        return []
    done = []
    steps = _Steps()
    for path, journal in _load_journals(ctx):
        if journal is None:
            steps("recover.drop-partial", path.name)
            os.unlink(path)
            continue
        txn_id = journal["txn_id"]
        rec = ctx.store.get(txn_id)
        status = txn_store.normalize_status(rec["status"]) if rec and rec.get("status") else None
        if status == txn_store.SUCCEEDED:
            _cleanup_file(ctx, journal, steps, committed=True)
        else:
            _undo_file(ctx, journal, steps, _Durable())
            steps("recover.record", txn_id)
            _put_final(
                ctx,
                txn_id,
                journal["record"],
                txn_store.FAILED,
                "the committing process stopped before the commit point (crash or kill); "
                "rolled back on recovery",
                recovered=True,
            )
            _cleanup_file(ctx, journal, steps, committed=False)
        done.append(txn_id)
    return done


def _conflicts(ctx: _Ctx, plan: _Plan) -> str | None:
    """What changed since validation among the tables and namespaces the batch touches."""
    fresh = _Reader(ctx)
    changed = [oid for oid, tok in plan.tokens.items() if fresh.state(oid).token() != tok]
    changed += [
        f"namespace {ns}"
        for ns, existed in plan.namespaces.items()
        if fresh.catalog.namespace_exists(ns.split(DELIMITER)) != existed
    ]
    if not changed:
        return None
    shown = ", ".join(changed[:10]) + (
        f" and {len(changed) - 10} more" if len(changed) > 10 else ""
    )
    return f"concurrent modification: {shown} changed between validation and commit"


def _commit_file(ctx: _Ctx, plan: _Plan) -> tuple[str, dict[str, Any]]:
    txn_id = _new_txn_id()
    steps = _Steps()
    started = _now_iso()
    with _locked(ctx) as lock:
        if not lock.reentered:
            _recover_locked(ctx)
        base = _base_record(plan, txn_id, started)
        conflict = _conflicts(ctx, plan)
        if conflict:
            steps("begin.conflict-record", txn_id)
            _put_final(ctx, txn_id, base, txn_store.FAILED, conflict)
            raise _error(
                ErrorCode.CONCURRENT_MODIFICATION, f"batch {txn_id} not applied: {conflict}"
            )
        try:
            if plan.needs_catalog:
                _bootstrap_catalog(ctx)
            journal = _make_journal(ctx, plan, txn_id, base)
            jpath = _journal_path(ctx, txn_id)
            jpath.parent.mkdir(parents=True, exist_ok=True)
            steps("begin.journal", txn_id)
            _write_atomic(jpath, json.dumps(journal).encode())
        except Exception as exc:  # nothing applied yet: record why, change nothing else
            _put_final(ctx, txn_id, base, txn_store.FAILED, f"not started: {_reason(exc)}")
            raise _as_namespace_error(exc, txn_id) from exc
        try:
            steps("begin.record", txn_id)
            ctx.store.put(txn_id, base)
            _fsync_store(ctx)
            _apply_file(ctx, journal, plan.staged_bytes, steps, _Durable())
            steps("commit.record", txn_id)
            record = _commit_point(ctx, txn_id)
        except BaseException as exc:
            _rollback_file(ctx, journal, steps, exc)
            if not isinstance(exc, Exception):
                raise  # KeyboardInterrupt / SystemExit: rolled back, propagated as they are
            raise _as_namespace_error(exc, txn_id) from exc
        with contextlib.suppress(Exception):  # committed; recovery finishes what this leaves
            _cleanup_file(ctx, journal, steps, committed=True)
    return txn_id, record


def _rollback_file(ctx: _Ctx, journal: dict[str, Any], steps: _Steps, exc: BaseException) -> None:
    txn_id = journal["txn_id"]
    reason = _reason(exc)
    try:
        _undo_file(ctx, journal, steps, _Durable())
        steps("rollback.record", txn_id)
        status = txn_store.FAILED
        _put_final(ctx, txn_id, journal["record"], status, f"rolled back: {reason}")
        _cleanup_file(ctx, journal, steps, committed=False)
    except Exception as undo_exc:
        # The journal stays: the next recover() (open, or any guarded write) retries the undo.
        raise _error(
            ErrorCode.INTERNAL,
            f"batch {txn_id} failed ({reason}) and its rollback failed too ({undo_exc}); "
            "the rollback is retried on the next open or write of this namespace",
        ) from undo_exc


def _reason(exc: BaseException) -> str:
    if isinstance(exc, _Canceled):
        return str(exc)
    if isinstance(exc, LanceNamespaceError):
        return f"{type(exc).__name__}: {getattr(exc, 'server_message', None) or exc}"
    if isinstance(exc, OSError):
        return f"I/O error: {exc}"
    return f"{type(exc).__name__}: {exc}"


def _as_namespace_error(exc: Exception, txn_id: str) -> LanceNamespaceError:
    if isinstance(exc, _Canceled):
        return _error(
            ErrorCode.CONCURRENT_MODIFICATION,
            f"batch {txn_id} not applied: {exc}; everything was rolled back",
        )
    code = exc.code if isinstance(exc, LanceNamespaceError) else ErrorCode.INTERNAL
    return _error(
        ErrorCode(int(code)),
        f"batch {txn_id} not applied, everything was rolled back: {_reason(exc)}",
    )


# -- the memory:// path ---------------------------------------------------------------------------------
def _commit_memory(ctx: _Ctx, plan: _Plan) -> tuple[str, dict[str, Any], dict[int, Any]]:
    """pylance's own operations under a process-local lock; undone in reverse on failure."""
    txn_id = _new_txn_id()
    steps = _Steps()
    answers: dict[int, Any] = {}
    with _locked(ctx):
        base = _base_record(plan, txn_id, _now_iso())
        conflict = _conflicts(ctx, plan)
        if conflict:
            _put_final(ctx, txn_id, base, txn_store.FAILED, conflict)
            raise _error(
                ErrorCode.CONCURRENT_MODIFICATION, f"batch {txn_id} not applied: {conflict}"
            )
        ctx.store.put(txn_id, base)
        undo: list[Callable[[], None]] = []
        d = ctx.directory
        try:
            for e in plan.declares:
                steps("apply.declare", e["object_id"])
                answers[e["index"]] = d.declare_table(
                    DeclareTableRequest(id=e["id"], properties=e["properties"])
                )
                undo.append(lambda e=e: d.deregister_table(DeregisterTableRequest(id=e["id"])))
            for v in plan.versions:
                steps("apply.version", f"{v['object_id']} v{v['version']}")
                answers[v["index"]] = d.create_table_version(
                    {
                        "id": v["id"],
                        "version": v["version"],
                        "manifest_path": v["manifest_path"],
                        "naming_scheme": v["naming_scheme"],
                    }
                )
                undo.append(
                    lambda v=v: d.batch_delete_table_versions(
                        {
                            "id": v["id"],
                            "ranges": [
                                {"start_version": v["version"], "end_version": v["version"] + 1}
                            ],
                        }
                    )
                )
            for g in plan.deregisters:
                steps("apply.deregister", g["object_id"])
                answers[g["index"]] = d.deregister_table(DeregisterTableRequest(id=g["id"]))
                undo.append(lambda g=g: _restore_rows(ctx, [g["row"]]))
            # Deleting a manifest cannot be undone through pylance's API: deletes go last.
            for x in plan.deletes:
                steps("apply.delete", x["object_id"])
                if x["moves"]:
                    d.batch_delete_table_versions(
                        {
                            "id": x["id"],
                            "ranges": [
                                {"start_version": m["version"], "end_version": m["version"] + 1}
                                for m in x["moves"]
                            ],
                        }
                    )
            steps("commit.record", txn_id)
            record = _commit_point(ctx, txn_id)
        except BaseException as exc:
            problems = []
            for fn in reversed(undo):
                try:
                    fn()
                except Exception as undo_exc:  # keep undoing the rest
                    problems.append(str(undo_exc))
            reason = f"rolled back: {_reason(exc)}"
            if problems:
                reason += f"; rollback incomplete: {'; '.join(problems)}"
            _put_final(ctx, txn_id, base, txn_store.FAILED, reason)
            if not isinstance(exc, Exception):
                raise
            raise _as_namespace_error(exc, txn_id) from exc
    return txn_id, record, answers


def _restore_rows(ctx: _Ctx, rows: list[dict[str, Any]]) -> None:
    ds = _open_catalog(ctx)
    assert ds is not None
    ds.merge_insert("object_id").when_not_matched_insert_all().execute(
        _catalog_rows(ds.schema, rows)
    )


# -- public API ----------------------------------------------------------------------------------------
def commit_batch(ns: Any, request: BatchCommitTablesRequest) -> BatchCommitTablesResponse:
    """Apply every operation of ``request`` or none of them; see the module docstring."""
    ctx = _context(ns)
    if not isinstance(request, BatchCommitTablesRequest):
        request = BatchCommitTablesRequest.model_validate(request)
    ops = _parse_operations(request)
    plan = _validate(ctx, ops)
    _fire("validated", str(len(ops)))
    if ctx.is_file:
        txn_id, _record = _commit_file(ctx, plan)
        answers: dict[int, Any] = {}
    else:
        txn_id, _record, answers = _commit_memory(ctx, plan)
    return BatchCommitTablesResponse(
        transaction_id=txn_id, results=_results(ctx, plan, txn_id, answers)
    )


def _results(
    ctx: _Ctx, plan: _Plan, txn_id: str, answers: dict[int, Any]
) -> list[CommitTableResult]:
    by_index: dict[int, CommitTableResult] = {}
    for d in plan.declares:
        location = ctx.table_uri(d["location"])
        answer = answers.get(d["index"])
        if answer is not None and getattr(answer, "location", None):
            location = answer.location
        by_index[d["index"]] = CommitTableResult(
            declare_table=DeclareTableResponse(
                transaction_id=txn_id, location=location, properties=d["properties"]
            )
        )
    for v in plan.versions:
        if ctx.is_file:
            final = Path(v["final"])
            tv = TableVersion(
                version=v["version"],
                manifest_path=_store_path(final),
                manifest_size=v["size"],
                e_tag=_local_etag(final) if final.exists() else None,
            )
        else:
            raw = (answers.get(v["index"]) or {}).get("version") or {}
            tv = TableVersion(
                version=v["version"],
                manifest_path=raw.get("manifest_path") or v["manifest_path"],
                manifest_size=raw.get("manifest_size"),
                e_tag=raw.get("e_tag"),
            )
        by_index[v["index"]] = CommitTableResult(
            create_table_version=CreateTableVersionResponse(transaction_id=txn_id, version=tv)
        )
    for x in plan.deletes:
        by_index[x["index"]] = CommitTableResult(
            delete_table_versions=BatchDeleteTableVersionsResponse(
                transaction_id=txn_id, deleted_count=x["deleted_count"]
            )
        )
    for g in plan.deregisters:
        metadata = (g["row"] or {}).get("metadata")
        props = None
        if metadata:
            with contextlib.suppress(ValueError, TypeError):
                props = {str(k): str(v) for k, v in json.loads(metadata).items()}
        by_index[g["index"]] = CommitTableResult(
            deregister_table=DeregisterTableResponse(
                transaction_id=txn_id,
                id=g["id"],
                location=ctx.table_uri(g["location"]),
                properties=props,
            )
        )
    return [by_index[i] for i in range(len(plan.ops))]


def recover(ns: Any) -> list[str]:
    """Roll back or finish batches a dead process left behind; call when opening a namespace.

    Cheap when there is nothing to do (one directory listing). Never waits: if another live
    writer holds the namespace lock, it recovers before its own work. Returns the ids handled.
    """
    try:
        ctx = _context(ns)
    except LanceNamespaceError:
        return []
    if not _has_pending(ctx) or _held().get(ctx.key):
        return []  # nothing to do, or this thread is the committer: its journal is live
    lock = _NamespaceLock(ctx)
    if not lock.acquire(blocking=False):
        return []
    try:
        return _recover_locked(ctx)
    finally:
        lock.release()


@contextlib.contextmanager
def guard_single_op(ns: Any, tables: Sequence[Sequence[str]]) -> Iterator[None]:
    """Serialise a single-operation write with batch commits (``local_txn.write_guard``).

    Takes the namespace lock and recovers crashed batches first. If the lock was busy, what the
    caller's tables looked like before waiting is compared with what they look like once the
    lock is held: a batch (or another write) changed them meanwhile ->
    ``ConcurrentModificationError`` and the operation does not run.
    """
    try:
        ctx = _context(ns)
    except LanceNamespaceError:
        yield  # not a batch-capable root (s3://, ...): single operations run unguarded
        return
    lock = _NamespaceLock(ctx)
    if _held().get(lock.key):
        lock.acquire()
        try:
            yield
        finally:
            lock.release()
        return
    oids = [_oid(t) for t in tables if t]
    if lock.acquire(blocking=False):
        before = None
    else:
        before = _Reader(ctx).tokens(oids)
        _fire("guard.wait", ", ".join(oids))
        lock.acquire()
    try:
        _recover_locked(ctx)
        if before is not None:
            after = _Reader(ctx).tokens(oids)
            changed = [o for o in oids if before[o] != after[o]]
            if changed:
                raise _error(
                    ErrorCode.CONCURRENT_MODIFICATION,
                    f"{', '.join(changed)} changed while this write waited for a concurrent "
                    "batch commit; nothing was applied, re-read and retry",
                )
        yield
    finally:
        lock.release()


def _try_recover(ctx: _Ctx) -> None:
    if not _has_pending(ctx) or _held().get(ctx.key):
        return
    lock = _NamespaceLock(ctx)
    if lock.acquire(blocking=False):
        try:
            _recover_locked(ctx)
        finally:
            lock.release()


def _batch_record(ctx: _Ctx, txn_id: str) -> dict[str, Any]:
    rec = ctx.store.get(txn_id)
    if rec is None or rec.get("kind") != RECORD_KIND:
        raise _error(ErrorCode.TRANSACTION_NOT_FOUND, f"Transaction not found: {txn_id}")
    return rec


def describe_batch_transaction(
    ns: Any, request: DescribeTransactionRequest
) -> DescribeTransactionResponse | None:
    """DescribeTransaction of a batch id; None when the id is not one (pylance's ids)."""
    if not is_batch_transaction_id(request.id):
        return None
    try:
        ctx = _context(ns)
    except LanceNamespaceError:
        return None
    _try_recover(ctx)
    rec = _batch_record(ctx, request.id[0])
    return DescribeTransactionResponse(
        status=txn_store.normalize_status(rec.get("status") or txn_store.RUNNING),
        properties={str(k): str(v) for k, v in (rec.get("properties") or {}).items()},
    )


_SET_MODES = ("OVERWRITE", "FAIL", "SKIP")
_UNSET_MODES = ("SKIP", "FAIL")


def _mode(value: str | None, default: str, allowed: Sequence[str], what: str, i: int) -> str:
    if value is None:
        return default
    mode = value.strip().replace("-", "_").replace("_", "").upper()
    if mode not in allowed:
        raise _error(
            ErrorCode.INVALID_INPUT,
            f"action {i}: unknown {what} mode {value!r}; valid: "
            + ", ".join(m.capitalize() for m in allowed),
        )
    return mode


def _parse_actions(request: AlterTransactionRequest) -> list[tuple[str, dict[str, Any]]]:
    actions = list(request.actions or [])
    if not actions:
        raise _error(ErrorCode.INVALID_INPUT, "AlterTransaction needs at least one action")
    parsed = []
    for i, a in enumerate(actions):
        given = [
            (k, getattr(a, f"{k}_action"))
            for k in ("set_status", "set_property", "unset_property")
            if getattr(a, f"{k}_action", None) is not None
        ]
        if len(given) != 1:
            raise _error(
                ErrorCode.INVALID_INPUT,
                f"action {i}: exactly one of setStatusAction, setPropertyAction, "
                "unsetPropertyAction must be set",
            )
        kind, body = given[0]
        if kind == "set_status":
            if body.status is None:
                raise _error(ErrorCode.INVALID_INPUT, f"action {i}: setStatusAction needs a status")
            parsed.append((kind, {"status": txn_store.normalize_status(body.status), "i": i}))
            continue
        if not body.key:
            raise _error(ErrorCode.INVALID_INPUT, f"action {i}: a property action needs a key")
        if kind == "set_property":
            if body.value is None:
                raise _error(
                    ErrorCode.INVALID_INPUT, f"action {i}: setPropertyAction needs a value"
                )
            mode = _mode(body.mode, "OVERWRITE", _SET_MODES, "set-property", i)
            parsed.append((kind, {"key": body.key, "value": body.value, "mode": mode, "i": i}))
        else:
            mode = _mode(body.mode, "SKIP", _UNSET_MODES, "unset-property", i)
            parsed.append((kind, {"key": body.key, "mode": mode, "i": i}))
    return parsed


def _apply_actions(
    rec: dict[str, Any], actions: list[tuple[str, dict[str, Any]]], txn_id: str
) -> dict[str, Any]:
    status = txn_store.normalize_status(rec.get("status") or txn_store.RUNNING)
    props = {str(k): str(v) for k, v in (rec.get("properties") or {}).items()}
    readonly = set(rec.get("readonly_properties") or SYSTEM_PROPERTIES)
    for kind, a in actions:
        i = a["i"]
        if kind == "set_status":
            new = a["status"]
            if new == status:
                continue
            if status == txn_store.RUNNING and new == txn_store.CANCELED:
                status = new  # the committing process sees it at its commit point and rolls back
                continue
            if status in txn_store.TERMINAL_STATUSES:
                why = f"{status} is final: the batch's outcome cannot change"
            else:
                why = "only cancelling a running batch is possible; its outcome is decided by the commit"
            raise _error(
                ErrorCode.INVALID_INPUT,
                f"action {i}: batch {txn_id} cannot change status from {status} to {new}: {why}",
            )
        key = a["key"]
        if key in readonly:
            raise _error(
                ErrorCode.INVALID_INPUT,
                f"action {i}: property {key!r} is recorded by the batch commit and cannot be "
                "changed or removed",
            )
        if kind == "set_property":
            if key in props and a["mode"] == "SKIP":
                continue
            if key in props and a["mode"] == "FAIL":
                raise _error(
                    ErrorCode.INVALID_INPUT,
                    f"action {i}: property {key!r} already exists (mode Fail); nothing changed",
                )
            props[key] = a["value"]
        elif key in props:
            del props[key]
        elif a["mode"] == "FAIL":
            raise _error(
                ErrorCode.INVALID_INPUT,
                f"action {i}: property {key!r} does not exist (mode Fail); nothing changed",
            )
    rec["status"] = status
    rec["properties"] = props
    history = list(rec.get("history") or [])[-49:]
    history.append({"at": int(time.time() * 1000), "actions": [k for k, _ in actions]})
    rec["history"] = history
    return rec


def alter_batch_transaction(
    ns: Any, request: AlterTransactionRequest
) -> AlterTransactionResponse | None:
    """AlterTransaction of a batch id (all actions or none); None when the id is not one.

    Properties the batch records (``SYSTEM_PROPERTIES``) are read-only. Status: setting the
    current status is a no-op; RUNNING -> CANCELED cancels a batch still before its commit
    point (it rolls back); every other change is refused (a batch's outcome is final).
    """
    if not is_batch_transaction_id(request.id):
        return None
    try:
        ctx = _context(ns)
    except LanceNamespaceError:
        return None
    actions = _parse_actions(request)
    _try_recover(ctx)
    txn_id = request.id[0]

    def fn(rec: dict[str, Any] | None) -> dict[str, Any]:
        if rec is None or rec.get("kind") != RECORD_KIND:
            raise _error(ErrorCode.TRANSACTION_NOT_FOUND, f"Transaction not found: {txn_id}")
        return _apply_actions(rec, actions, txn_id)

    new = ctx.store.update(txn_id, fn)
    _fsync_store(ctx)
    assert new is not None
    return AlterTransactionResponse(
        status=txn_store.normalize_status(new["status"]),
        properties={str(k): str(v) for k, v in (new.get("properties") or {}).items()},
    )


__all__ = [
    "CONSOLE_DIR",
    "LOCK_FILE",
    "PENDING_DIR",
    "SYSTEM_PROPERTIES",
    "WORK_DIR",
    "alter_batch_transaction",
    "commit_batch",
    "describe_batch_transaction",
    "guard_single_op",
    "is_batch_transaction_id",
    "manifest_name",
    "manifest_version",
    "parse_manifest_name",
    "recover",
    "set_fault_hook",
]
