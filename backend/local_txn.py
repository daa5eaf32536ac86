"""Hook between single-operation writes of the local backend and batch commits.

``write_guard(ns, tables)`` is entered by every single-operation write of ``LocalNamespace``
(declare, create/delete versions, deregister, create table, index writes) so that a write
racing a batch commit gets the batch's guarantees. The batch-commit module replaces the body.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any


@contextlib.contextmanager
def write_guard(ns: Any, tables: Sequence[Sequence[str]]) -> Iterator[None]:
    yield
