"""Where the console keeps its job records (``backend.services.jobs``): one JSON document per
job, beside the transaction records, through the same object I/O (``txn_store``).

* a namespace with a root of the console's (the local backend on a path, ``file://``,
  ``memory://`` or an object store): ``<root>/_console/jobs/<job id>.json`` (atomic replace
  and a file lock on local roots, one PUT per record on object stores; ``txn_store``'s
  rules), so every console process on that root sees the same jobs;
* a REST namespace (no root of the console's): the console's local state directory, like the
  audit log: ``$LANCE_CONSOLE_JOBS_DIR`` or ``~/.local/state/lance-console/jobs``, one folder
  per server (``<host>-<digest of the URL>``), so the console processes of one machine that
  open the same server see the same jobs.

A cancel request is its own small record under ``<jobs>/cancel/`` (written only by whoever
cancels, read only by the process running the job): the runner rewrites the job's record
every few seconds, and on an object store two writers of one record could lose one's write.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import txn_store

JOBS_DIR = "_console/jobs"
CANCEL_DIR = f"{JOBS_DIR}/cancel"


def local_state_dir() -> Path:
    """Where the job records of REST namespaces live (``$LANCE_CONSOLE_JOBS_DIR`` or
    ``~/.local/state/lance-console/jobs``)."""
    raw = os.environ.get("LANCE_CONSOLE_JOBS_DIR")
    if raw:
        return Path(raw).expanduser()
    return Path("~/.local/state/lance-console/jobs").expanduser()


def _server_folder(url: str) -> str:
    """``127.0.0.1-2333-1a2b3c4d5e6f``: readable, and one per server URL (credentials and
    trailing slashes do not make another)."""
    parts = urlsplit(url)
    host = parts.hostname or "server"
    port = f"-{parts.port}" if parts.port else ""
    normal = f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"
    digest = hashlib.sha256(normal.encode()).hexdigest()[:12]
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"{host}{port}") + f"-{digest}"


class JobStore:
    """The job records of one namespace (see the module docstring). Records are plain JSON
    objects with their ``id``; the store adds ``updated_at`` (epoch millis)."""

    def __init__(self, records: txn_store.TxnStore, cancels: txn_store.TxnStore) -> None:
        self._records = records
        self._cancels = cancels
        self.location = records.location

    @staticmethod
    def _out(record: dict[str, Any] | None) -> dict[str, Any] | None:
        if record is None:
            return None
        out = dict(record)
        out["id"] = out.pop("txn_id", out.get("id"))
        return out

    def get(self, job_id: str) -> dict[str, Any] | None:
        return self._out(self._records.get(job_id))

    def put(self, job_id: str, record: dict[str, Any]) -> dict[str, Any]:
        body = {k: v for k, v in record.items() if k != "id"}
        return self._out(self._records.put(job_id, body)) or {}

    def update(
        self, job_id: str, fn: Callable[[dict[str, Any] | None], dict[str, Any] | None]
    ) -> dict[str, Any] | None:
        """Read-modify-write of one record (``txn_store.TxnStore.update``): ``fn`` gets the
        record (or ``None``) and returns the new one, or ``None`` to leave it."""

        def change(current: dict[str, Any] | None) -> dict[str, Any] | None:
            new = fn(self._out(current))
            return None if new is None else {k: v for k, v in new.items() if k != "id"}

        return self._out(self._records.update(job_id, change))

    def delete(self, job_id: str) -> bool:
        self._cancels.delete(job_id)
        return self._records.delete(job_id)

    def list(self) -> builtins.list[dict[str, Any]]:
        """Every readable record."""
        return [r for r in (self._out(x) for x in self._records.list()) if r is not None]

    def request_cancel(self, job_id: str, who: str) -> None:
        self._cancels.put(job_id, {"who": who})

    def cancel_requested(self, job_id: str) -> bool:
        return self._cancels.get(job_id) is not None

    def __repr__(self) -> str:
        return f"JobStore({self.location!r})"


def open_job_store(ns: Any) -> JobStore:
    """The job records of namespace ``ns`` (gated or not): under its root when it has one of
    the console's, else in the local state directory, one folder per server."""
    root = getattr(ns, "root", None)
    if isinstance(getattr(ns, "txn_store", None), txn_store.TxnStore) and isinstance(root, str):
        options = dict(getattr(ns, "storage_options", None) or {})
        return JobStore(
            txn_store.open_store(root, options, directory=JOBS_DIR),
            txn_store.open_store(root, options, directory=CANCEL_DIR),
        )
    url = getattr(ns, "uri", None)
    if not isinstance(url, str) or not url:
        url = str(getattr(ns, "target", None) or "unknown")
    folder = local_state_dir() / _server_folder(url)
    return JobStore(txn_store.FileTxnStore(folder), txn_store.FileTxnStore(folder / "cancel"))
