"""The namespace's writer lock, shared by batch commits and single-operation writes.

file roots: ``flock`` on ``<root>/_console/namespace.lock`` (the kernel releases it when the
process dies, so a crashed writer never blocks the next one); memory roots: a process-wide
``RLock`` per root. Re-entrant per thread.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator

from lance_namespace.errors import ErrorCode

from ...locations import CONSOLE_DIR
from .context import Ctx, error

try:  # POSIX only
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = f"{CONSOLE_DIR}/namespace.lock"
LOCK_TIMEOUT_SECONDS = 120.0

_TLS = threading.local()
_MEMORY_LOCKS: dict[str, threading.RLock] = {}
_MEMORY_LOCKS_GUARD = threading.Lock()


def held() -> dict[str, int]:
    """Locks this thread holds: root key -> depth."""
    found = getattr(_TLS, "held", None)
    if found is None:
        found = _TLS.held = {}
    return found


class NamespaceLock:
    """Exclusive writer lock of one namespace root (see the module docstring)."""

    def __init__(self, ctx: Ctx):
        self.ctx = ctx
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
                    f"timed out waiting for the write lock of namespace {self.ctx.root} "
                    "(another writer holds it); try again",
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        depth[self.key] = 1
        return True

    def release(self) -> None:
        depth = held()
        depth[self.key] -= 1
        if self.reentered or depth[self.key]:
            return
        del depth[self.key]
        if self._mem is not None:
            self._mem.release()
        self._close()

    def _close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


@contextlib.contextmanager
def locked(ctx: Ctx) -> Iterator[NamespaceLock]:
    lock = NamespaceLock(ctx)
    lock.acquire()
    try:
        yield lock
    finally:
        lock.release()


__all__ = ["LOCK_FILE", "LOCK_TIMEOUT_SECONDS", "NamespaceLock", "held", "locked"]
