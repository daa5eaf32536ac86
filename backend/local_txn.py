"""Hook between single-operation writes of the local backend and batch commits.

``write_guard(ns, tables)`` is entered by every single-operation write of ``LocalNamespace``
(declare, create/delete versions, deregister, create table, index writes) so that a write
racing a batch commit gets the batch's guarantees:

* it runs under the namespace's writer lock (``<root>/_console/namespace.lock``, ``flock``;
  a process-local lock on ``memory://``), the lock batch commits hold from their validation
  re-check to their commit point, so a write never lands in the middle of a batch;
* batches a dead process left half-done are rolled back (or finished) first;
* if the lock was busy, the write's tables are compared before and after waiting: a batch that
  changed them meanwhile makes the write fail with ``ConcurrentModificationError`` (nothing
  applied), exactly as a batch racing a batch would.

Namespaces on other stores (``s3://``, ...) have no batch commit; their writes run unguarded.
The logic lives in ``backend.batch.guard_single_op``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any


@contextlib.contextmanager
def write_guard(ns: Any, tables: Sequence[Sequence[str]]) -> Iterator[None]:
    from .batch import guard_single_op

    with guard_single_op(ns, tables):
        yield
