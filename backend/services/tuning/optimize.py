"""Index and file maintenance calls (local backend): optimize indexes, compact files, clean up
old versions; over REST the spec has no operation for them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lance_namespace import LanceNamespace
from lance_namespace.errors import UnsupportedOperationError

MAINTENANCE_UNSUPPORTED = (
    "The Lance Namespace spec has no operation to optimize indexes, compact files or clean up "
    "old versions' files: over REST this is the server's job (or run it with pylance next to "
    "the data)."
)


def optimize_indexes(ns: LanceNamespace, table_id: Sequence[str]) -> dict[str, Any]:
    """Add the rows the indexes do not cover yet (local backend)."""
    method = getattr(ns, "optimize_indexes", None)
    if method is None:
        raise UnsupportedOperationError(MAINTENANCE_UNSUPPORTED)
    return method(list(table_id))


def compact_files(
    ns: LanceNamespace,
    table_id: Sequence[str],
    *,
    options: Mapping[str, Any] | None = None,
    progress: Callable[[dict[str, Any]], None] | None = None,
    resume: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Merge small data files (local backend): lance's compaction ``options``, progress per
    task, stopped between tasks when ``progress`` raises ``OperationStopped``, resumed from
    the checkpoint of an earlier run (``backend.local.compaction``)."""
    method = getattr(ns, "compact_files", None)
    if method is None:
        raise UnsupportedOperationError(MAINTENANCE_UNSUPPORTED)
    if options is None and progress is None and resume is None:
        return method(list(table_id))
    return method(list(table_id), options=options, progress=progress, resume=resume)


def cleanup_old_versions(
    ns: LanceNamespace, table_id: Sequence[str], older_than_days: int
) -> dict[str, Any]:
    """Remove the files of versions older than ``older_than_days`` days, never the latest
    nor a tagged version (local backend; admins only: time travel to them ends)."""
    method = getattr(ns, "cleanup_old_versions", None)
    if method is None:
        raise UnsupportedOperationError(MAINTENANCE_UNSUPPORTED)
    return method({"id": list(table_id), "older_than_days": older_than_days})
