"""A small store of transaction records under a namespace root: the batch commits' records.

Per-table transactions are pylance's own: their AlterTransaction changes live where pylance's
core keeps them (``<table>/_alter_transactions/<uuid>.json``), see
``backend.local.transactions``. One JSON document per transaction id:

* a local root (path or ``file://``): ``<root>/_console/transactions/<quoted id>.json``, written
  atomically (temporary file in the same directory, fsync, ``os.replace``); ``put``/``update``
  hold an in-process lock and, where ``fcntl`` exists, an exclusive lock on
  ``<root>/_console/transactions/.lock`` so that processes sharing the root serialise too;
* ``memory://...``: an in-process dict per root (memory roots only live in this process);
* any other URI (``s3://``, ``gs://``, ``az://``, ...): the console's object-store layer
  (``backend.local.object_store``: obstore with lance's options and environment), one object
  per record (an object PUT is atomic, no directory marker is written); the lock is
  in-process only.

Records are plain JSON objects; the store adds ``txn_id`` and ``updated_at`` (epoch millis).
What a record holds is ``backend.local.batch.records``' business.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import functools
import hashlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlparse

from lance_namespace.errors import InternalError, InvalidInputError

try:  # POSIX only; elsewhere the in-process lock is all we have
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

STORE_DIR = "_console/transactions"


def _now_ms() -> int:
    return int(time.time() * 1000)


def _file_name(txn_id: str) -> str:
    name = quote(txn_id, safe="-_.")
    if name.startswith("."):
        name = "%2E" + name[1:]
    if len(name) > 180:  # keep under common file-name limits; the id is inside the record
        digest = hashlib.sha256(txn_id.encode()).hexdigest()[:16]
        name = f"{name[:160]}-{digest}"
    return name + ".json"


def _encode(txn_id: str, record: dict[str, Any]) -> str:
    if not isinstance(record, dict):
        raise TypeError(f"a transaction record must be a dict, got {type(record).__name__}")
    body = dict(record)
    body["txn_id"] = txn_id
    body.setdefault("updated_at", _now_ms())
    return json.dumps(body, sort_keys=True, indent=1)


def _decode(raw: str) -> dict[str, Any] | None:
    """A record's text as the record, or ``None`` where it is not one: not JSON, not an
    object, or nested deeper than Python reads."""
    try:
        record = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


class TxnStore:
    """Transaction records under one namespace root. Thread-safe; see module docstring."""

    location: str

    def get(self, txn_id: str) -> dict[str, Any] | None:
        """The record of ``txn_id`` (``None``: there is none). A file there that does not read
        as a record (damaged, or not one of the console's: the records are files in the
        namespace's folder, which other writers reach) is an ``InternalError`` naming it:
        never taken for no record."""
        raw = self._read(self._check_id(txn_id))
        return None if raw is None else self._record(txn_id, raw)

    def _record(self, txn_id: str, raw: str) -> dict[str, Any]:
        record = _decode(raw)
        if record is None:
            raise InternalError(
                f"the record {txn_id} in {self.location} cannot be read: it is not a JSON "
                "object (damaged, or not written by the console)"
            )
        return record

    def put(self, txn_id: str, record: dict[str, Any]) -> dict[str, Any]:
        txn_id = self._check_id(txn_id)
        data = _encode(txn_id, {**record, "updated_at": _now_ms()})
        with self._locked():
            self._write(txn_id, data)
        return json.loads(data)

    def update(
        self, txn_id: str, fn: Callable[[dict[str, Any] | None], dict[str, Any] | None]
    ) -> dict[str, Any] | None:
        """Read-modify-write under the store lock.

        ``fn`` gets a copy of the current record (or ``None``) and returns the new record, or
        ``None`` to leave the store unchanged. If ``fn`` raises, nothing is written.
        """
        txn_id = self._check_id(txn_id)
        with self._locked():
            raw = self._read(txn_id)
            current = None if raw is None else self._record(txn_id, raw)
            new = fn(copy.deepcopy(current))
            if new is None:
                return current
            data = _encode(txn_id, {**new, "updated_at": _now_ms()})
            self._write(txn_id, data)
            return json.loads(data)

    def delete(self, txn_id: str) -> bool:
        txn_id = self._check_id(txn_id)
        with self._locked():
            return self._remove(txn_id)

    def list(self) -> builtins.list[dict[str, Any]]:
        """Every record, sorted by ``txn_id``. Unreadable documents are skipped."""
        out: builtins.list[dict[str, Any]] = []
        for raw in self._read_all():
            rec = _decode(raw)
            if rec is not None and isinstance(rec.get("txn_id"), str):
                out.append(rec)
        return sorted(out, key=lambda r: r["txn_id"])

    # -- backend hooks ----------------------------------------------------------------------
    @staticmethod
    def _check_id(txn_id: str) -> str:
        if not isinstance(txn_id, str) or not txn_id:
            raise InvalidInputError("a transaction id must be a non-empty string")
        return txn_id

    def _locked(self) -> contextlib.AbstractContextManager[Any]:
        raise NotImplementedError

    def _read(self, txn_id: str) -> str | None:
        raise NotImplementedError

    def _write(self, txn_id: str, data: str) -> None:
        raise NotImplementedError

    def _remove(self, txn_id: str) -> bool:
        raise NotImplementedError

    def _read_all(self) -> builtins.list[str]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location!r})"


_LOCKS: dict[str, threading.RLock] = {}
_LOCKS_GUARD = threading.Lock()


def _lock_for(key: str) -> threading.RLock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(key, threading.RLock())


class FileTxnStore(TxnStore):
    """Records as files in a local directory; atomic replace, process-safe updates."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.directory = Path(directory)
        self.location = str(self.directory)
        self._lock = _lock_for("file:" + str(self.directory.resolve()))
        self._depth = threading.local()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with self._lock:
            depth = getattr(self._depth, "n", 0)
            if depth or fcntl is None:
                self._depth.n = depth + 1
                try:
                    yield
                finally:
                    self._depth.n = depth
                return
            self.directory.mkdir(parents=True, exist_ok=True)
            with open(self.directory / ".lock", "a+") as fh:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
                self._depth.n = 1
                try:
                    yield
                finally:
                    self._depth.n = 0
                    fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _path(self, txn_id: str) -> Path:
        return self.directory / _file_name(txn_id)

    def _read(self, txn_id: str) -> str | None:
        try:
            return _text(self._path(txn_id).read_bytes())
        except FileNotFoundError:
            return None

    def _write(self, txn_id: str, data: str) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self._path(txn_id))
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise

    def _remove(self, txn_id: str) -> bool:
        try:
            self._path(txn_id).unlink()
            return True
        except FileNotFoundError:
            return False

    def _read_all(self) -> list[str]:
        if not self.directory.is_dir():
            return []
        out = []
        for p in sorted(self.directory.glob("*.json")):
            if p.name.startswith(".tmp-"):
                continue
            try:
                out.append(_text(p.read_bytes()))
            except OSError:  # removed meanwhile, or not a file (a directory named *.json)
                continue
        return out


def _text(data: bytes) -> str:
    """A record file's bytes as text: the console writes UTF-8; bytes another writer left that
    are not are read as replacement characters (the record then reads, or is left out as not
    JSON), never a UnicodeDecodeError."""
    return data.decode("utf-8", errors="replace")


_MEMORY: dict[str, dict[str, str]] = {}


class MemoryTxnStore(TxnStore):
    """Records in a process-wide dict keyed by root (for ``memory://`` roots)."""

    def __init__(self, root: str, directory: str = STORE_DIR):
        self.location = root if directory == STORE_DIR else f"{root}/{directory}"
        self._lock = _lock_for("memory:" + self.location)
        with _LOCKS_GUARD:
            self._docs = _MEMORY.setdefault(self.location, {})

    def _locked(self) -> contextlib.AbstractContextManager[Any]:
        return self._lock

    def _read(self, txn_id: str) -> str | None:
        with self._lock:
            return self._docs.get(txn_id)

    def _write(self, txn_id: str, data: str) -> None:
        self._docs[txn_id] = data

    def _remove(self, txn_id: str) -> bool:
        return self._docs.pop(txn_id, None) is not None

    def _read_all(self) -> list[str]:
        with self._lock:
            return list(self._docs.values())


class ObjectTxnStore(TxnStore):
    """Records as objects under ``<root>/_console/transactions/`` (or another ``directory``
    of the root) of an object store, through the console's one object-store layer
    (``backend.local.object_store``: obstore, the same options and environment as lance). One
    PUT per record; no directory marker objects."""

    def __init__(
        self,
        root: str,
        storage_options: dict[str, str] | None = None,
        directory: str = STORE_DIR,
    ):
        from . import object_store

        self._errors = functools.partial(object_store.store_error, storage_options=storage_options)
        self.root = root.rstrip("/")
        self.directory = directory.strip("/")
        self.location = f"{self.root}/{self.directory}"
        self.store = object_store.open_root(self.root, storage_options)
        self._lock = _lock_for(f"objects:{self.location}")

    def _locked(self) -> contextlib.AbstractContextManager[Any]:
        return self._lock

    @contextlib.contextmanager
    def _calls(self, action: str) -> Iterator[None]:
        # obstore's failures (unreachable endpoint, refused credentials) as namespace errors
        try:
            yield
        except FileNotFoundError:
            raise
        except Exception as exc:  # noqa: BLE001 - only namespace errors leave the backend
            raise self._errors(exc, self.root, action) from None

    def _key(self, txn_id: str) -> str:
        return f"{self.directory}/{_file_name(txn_id)}"

    def _read(self, txn_id: str) -> str | None:
        import obstore

        with self._calls("read a transaction record"):
            try:
                return _text(bytes(obstore.get(self.store, self._key(txn_id)).bytes()))
            except FileNotFoundError:
                return None

    def _write(self, txn_id: str, data: str) -> None:
        import obstore

        with self._calls("write a transaction record"):
            obstore.put(self.store, self._key(txn_id), data.encode("utf-8"))

    def _remove(self, txn_id: str) -> bool:
        import obstore

        with self._calls("delete a transaction record"):
            if self._read(txn_id) is None:
                return False
            obstore.delete(self.store, self._key(txn_id))
            return True

    def _read_all(self) -> list[str]:
        """Every record: one LIST, then a GET of each record that changed since this process
        last read it (its ETag: a console that lists every second does not read every
        record every second)."""
        import obstore

        out = []
        cache = _LISTED.setdefault(self.location, {})
        with self._calls("list the transaction records"):
            found = sorted(
                (
                    (m["path"], m.get("e_tag") or "")
                    for batch in obstore.list(self.store, self.directory + "/")
                    for m in batch
                    if m["path"].endswith(".json")
                    and "/" not in m["path"][len(self.directory) + 1 :]
                ),
            )
            for key, tag in found:
                kept = cache.get(key)
                if tag and kept is not None and kept[0] == tag:
                    out.append(kept[1])
                    continue
                with contextlib.suppress(FileNotFoundError):
                    text = _text(bytes(obstore.get(self.store, key).bytes()))
                    cache[key] = (tag, text)
                    out.append(text)
        for key in set(cache) - {key for key, _ in found}:
            cache.pop(key, None)
        return out


# Records of object stores as last read by this process: location -> key -> (ETag, text).
_LISTED: dict[str, dict[str, tuple[str, str]]] = {}


def open_store(
    root: str, storage_options: dict[str, str] | None = None, *, directory: str = STORE_DIR
) -> TxnStore:
    """The store for a namespace root (a local path, ``file://``, ``memory://`` or object-store
    URI): the transaction records, or the console's records kept in another ``directory``
    under the root (e.g. ``_console/rebuild_answers``)."""
    storage_options = dict(storage_options or {})
    parsed = urlparse(root)
    scheme = parsed.scheme.lower()
    if scheme == "memory":
        return MemoryTxnStore(root.rstrip("/"), directory)
    if scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt"):
        path = unquote(parsed.path) if scheme == "file" else root
        return FileTxnStore(Path(path) / directory)
    return ObjectTxnStore(root, storage_options, directory)
