"""The namespace's writer lock, shared by batch commits and single-operation writes.

file roots: ``flock`` on ``<root>/_console/namespace.lock`` (the kernel releases it when the
process dies, so a crashed writer never blocks the next one); memory roots: a process-wide
``RLock`` per root. Re-entrant per thread.

The holder says who it is and what for (:func:`holder`: process, host, purpose, since): in
``<root>/_console/namespace.lock.holder`` on a file root, written once the lock is taken and
emptied before it is let go; in this process's memory on a memory root. A writer that times
out waiting names the holder.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

from lance_namespace.errors import ErrorCode

from ...rules.location_rules import CONSOLE_DIR
from ...spec.fields import epoch_time, is_number
from .context import Ctx, error

try:  # POSIX only
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = f"{CONSOLE_DIR}/namespace.lock"
HOLDER_FILE = f"{LOCK_FILE}.holder"
LOCK_TIMEOUT_SECONDS = 120.0

_TLS = threading.local()
_MEMORY_LOCKS: dict[str, threading.RLock] = {}
_MEMORY_LOCKS_GUARD = threading.Lock()
_MEMORY_HOLDERS: dict[str, dict[str, Any]] = {}


def held() -> dict[str, int]:
    """Locks this thread holds: root key -> depth."""
    found = getattr(_TLS, "held", None)
    if found is None:
        found = _TLS.held = {}
    return found


class NamespaceLock:
    """Exclusive writer lock of one namespace root (see the module docstring)."""

    def __init__(self, ctx: Ctx, purpose: str = "a write"):
        self.ctx = ctx
        self.purpose = purpose
        self.key = ctx.key
        self._fd: int | None = None
        self._mem: threading.RLock | None = None
        self.reentered = False

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
        depth = held()
        if depth.get(self.key):
            depth[self.key] += 1
            self.reentered = True
            return True
        deadline = time.monotonic() + (LOCK_TIMEOUT_SECONDS if timeout is None else timeout)
        delay = 0.002
        while not self._try():
            if not blocking:
                self._close()
                return False
            if time.monotonic() >= deadline:
                self._close()
                raise error(
                    ErrorCode.SERVICE_UNAVAILABLE,
                    f"timed out waiting for the write lock of namespace {self.ctx.root}: "
                    f"{describe_holder(holder(self.ctx))}; try again",
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        depth[self.key] = 1
        self._write_holder(
            {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "purpose": self.purpose,
                "since": time.time(),
            }
        )
        return True

    def _write_holder(self, info: dict[str, Any] | None) -> None:
        if self.ctx.local_path is None:
            with _MEMORY_LOCKS_GUARD:
                if info is None:
                    _MEMORY_HOLDERS.pop(self.key, None)
                else:
                    _MEMORY_HOLDERS[self.key] = info
            return
        with contextlib.suppress(OSError):  # who holds it is news, never a reason to fail
            self.ctx.path(HOLDER_FILE).write_text(
                json.dumps(info) if info is not None else "", encoding="utf-8"
            )

    def release(self) -> None:
        depth = held()
        depth[self.key] -= 1
        if self.reentered or depth[self.key]:
            return
        del depth[self.key]
        self._write_holder(None)
        if self._mem is not None:
            self._mem.release()
        self._close()

    def _close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def holder(ctx: Ctx) -> dict[str, Any] | None:
    """Who holds the namespace's lock, as its holder wrote it (``None``: nobody said)."""
    if ctx.local_path is None:
        with _MEMORY_LOCKS_GUARD:
            found = _MEMORY_HOLDERS.get(ctx.key)
        return dict(found) if found else None
    try:
        data = json.loads(ctx.path(HOLDER_FILE).read_text(encoding="utf-8") or "null")
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def describe_holder(info: dict[str, Any] | None, now: float | None = None) -> str:
    """The holder in words: its purpose, process and how long it has held the lock."""
    if not info:
        return "another writer holds it"
    since = info.get("since")
    when = ""
    # the holder's file is another process's: only a time is read as one
    at = epoch_time(round(since * 1000)) if is_number(since) else None
    if at is not None:
        held_for = max(0, round((time.time() if now is None else now) - at.timestamp()))
        when = f" since {at:%H:%M:%S} UTC ({held_for} s)"
    return (
        f"held by {info.get('purpose') or 'a write'} (process {info.get('pid', '?')} on "
        f"{info.get('host', '?')}){when}"
    )


@contextlib.contextmanager
def locked(ctx: Ctx, purpose: str = "a write") -> Iterator[NamespaceLock]:
    lock = NamespaceLock(ctx, purpose)
    lock.acquire()
    try:
        yield lock
    finally:
        lock.release()
