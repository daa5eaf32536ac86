"""Requests the spec has no bulk form for, a few in flight at once.

A page that needs one answer per item (DescribeTableIndexStats per index, DescribeTransaction
per version) waits for a few round trips rather than one per item: :data:`IN_FLIGHT` requests
at once, on one pool shared by the process. Each runs in a copy of the caller's context (the
request log and the session's identity are context variables). A call made from one of the
pool's own threads runs its items one by one there: waiting on the pool from inside it could
take every thread and wait forever.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

IN_FLIGHT = 4  # requests at once: their round trips overlap; a server on 2 cores still answers

_PREFIX = "spec-fanout"
_POOL = ThreadPoolExecutor(max_workers=IN_FLIGHT, thread_name_prefix=_PREFIX)

T = TypeVar("T")
R = TypeVar("R")


def each(call: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``[call(item) for item in items]``, in order, with up to :data:`IN_FLIGHT` calls at
    once. An exception is raised as a plain loop would raise it: the first in order, once
    every call has ended (none is left running behind the caller)."""
    items = list(items)
    if len(items) < 2 or threading.current_thread().name.startswith(_PREFIX):
        return [call(item) for item in items]
    pending = [_POOL.submit(contextvars.copy_context().run, call, item) for item in items]
    errors = [future.exception() for future in pending]  # waits for each
    for error in errors:
        if error is not None:
            raise error
    return [future.result() for future in pending]


__all__ = ["IN_FLIGHT", "each"]
