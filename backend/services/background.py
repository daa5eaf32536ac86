"""Background readers stopped before the interpreter ends.

A daemon thread still inside lance (native code) when the interpreter finalizes is stopped
there, which aborts the process: "FATAL: exception not rethrown", exit 134. A reader that
runs in the background (the tables list's figures, a table watch) registers itself with
:func:`stop_at_exit`; as the process ends, every registered reader is told to stop (it starts
no more reads) and the reads under way are waited for, :data:`EXIT_WAIT_S` seconds at most in
all.
"""

from __future__ import annotations

import atexit
import time
import weakref
from typing import Protocol

EXIT_WAIT_S = 5.0  # how long a process's exit waits for the background reads under way


class Stoppable(Protocol):
    def stop(self) -> None:
        """Start no more reads (those under way end by themselves)."""

    def join(self, timeout: float | None = None) -> None:
        """Wait up to ``timeout`` seconds for the reads under way to end."""


_READERS: weakref.WeakSet[Stoppable] = weakref.WeakSet()


def stop_at_exit(reader: Stoppable) -> None:
    """Have ``reader`` stopped, and its reads waited for, when the process ends."""
    _READERS.add(reader)


@atexit.register
def stop_all(timeout: float = EXIT_WAIT_S) -> None:
    """Stop every registered reader, then wait for their reads (``timeout`` in all)."""
    readers = list(_READERS)
    for reader in readers:
        reader.stop()
    deadline = time.monotonic() + timeout
    for reader in readers:
        reader.join(max(0.0, deadline - time.monotonic()))


__all__ = ["EXIT_WAIT_S", "Stoppable", "stop_all", "stop_at_exit"]
