"""A reader watching tables (no streamlit): each table's version and row count, read through the
namespace, as one consistent snapshot per poll.

One poll reads every table (DescribeTable with its detailed metadata: the version and its row
count), then reads each table's version again. When no version moved between the two passes,
the readings are one state of the namespace: on the local backend every read at "latest" is the
last committed version (``LocalNamespace.committed_version``: a batch in flight is not seen
before its commit point), committed versions only grow, so each table's version held from its
read to its second read, and all of them at the moment the last table was read. When a version
moved (a commit landed during the poll), the poll is read again (up to ``attempts`` times).

A batch that commits therefore shows in a poll for all its tables or for none: the reader panel
of the transaction demo charts :func:`frame` of its polls, and :func:`mixed` finds the polls
that saw some tables of a batch published and others not (none, on the local backend).

Over REST the server decides what a read at "latest" sees (``isolated`` is False): the poll is
still read twice, but a batch that applies step by step on the server can show half-applied.

This reader goes through the namespace. A reader that opens a table's files itself
(``lance.dataset(location)``) bypasses it and can see a batch half-applied
(``docs/batch-commit.md``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from lance_namespace import DescribeTableRequest, LanceNamespace
from lance_namespace.errors import LanceNamespaceError

from backend import capabilities
from backend.rules import ids

from . import search

POLL_ATTEMPTS = 5
FRAME_COLUMNS = ["at", "poll", "table", "version", "rows"]


@dataclass(frozen=True)
class Reading:
    """One table in one poll: its version and row count (``None`` with ``error`` when it could
    not be read, e.g. not found)."""

    table_id: tuple[str, ...]
    version: int | None
    rows: int | None
    error: str | None = None


@dataclass(frozen=True)
class Poll:
    """One snapshot of the watched tables. ``consistent``: no version moved while it was read
    (else the last attempt's readings); ``isolated``: the backend hides batches in flight
    (local backend); ``attempts``: reads it took."""

    at: float  # time.time() when the poll ended
    readings: tuple[Reading, ...]
    attempts: int
    consistent: bool
    isolated: bool

    @property
    def versions(self) -> dict[tuple[str, ...], int | None]:
        return {r.table_id: r.version for r in self.readings}

    @property
    def rows(self) -> dict[tuple[str, ...], int | None]:
        return {r.table_id: r.rows for r in self.readings}


def _read(ns: LanceNamespace, table_id: list[str]) -> Reading:
    try:
        desc = ns.describe_table(DescribeTableRequest(id=table_id, load_detailed_metadata=True))
    except LanceNamespaceError as err:
        return Reading(tuple(table_id), None, None, str(err))
    version = int(desc.version) if desc.version is not None else None
    total = (desc.metadata or {}).get("total_rows")
    if total is not None:
        rows = int(total)
    else:  # a server that reports no detail: count at the version read
        rows = search.count_rows(ns, table_id, version=version, filter=None)
    return Reading(tuple(table_id), version, rows)


def _version(ns: LanceNamespace, table_id: list[str]) -> int | None:
    committed = getattr(ns, "committed_version", None)
    try:
        if callable(committed):
            return committed(table_id)
        desc = ns.describe_table(DescribeTableRequest(id=table_id, load_detailed_metadata=True))
    except LanceNamespaceError:
        return None
    return int(desc.version) if desc.version is not None else None


def poll(
    ns: LanceNamespace, table_ids: Sequence[Sequence[str]], *, attempts: int = POLL_ATTEMPTS
) -> Poll:
    """One consistent snapshot of ``table_ids`` (see the module docstring)."""
    tids = [ids.check_id(list(t)) for t in table_ids]
    isolated = capabilities(ns).kind == "local"
    readings: tuple[Reading, ...] = ()
    tries = 0
    for tries in range(1, max(1, int(attempts)) + 1):
        readings = tuple(_read(ns, t) for t in tids)
        again = [_version(ns, t) for t in tids]
        if all(r.version == v for r, v in zip(readings, again, strict=True)):
            return Poll(time.time(), readings, tries, True, isolated)
    return Poll(time.time(), readings, tries, False, isolated)


def frame(polls: Sequence[Poll]) -> pd.DataFrame:
    """The polls as a long table for a chart: one row per poll and table (``at`` as a
    timestamp, ``table`` as ``a › b``)."""
    rows = [
        {
            "at": pd.Timestamp(p.at, unit="s", tz="UTC"),
            "poll": i,
            "table": ids.display_id(list(r.table_id)),
            "version": r.version,
            "rows": r.rows,
        }
        for i, p in enumerate(polls)
        for r in p.readings
    ]
    out = pd.DataFrame(rows, columns=FRAME_COLUMNS)
    for column in ("version", "rows"):
        out[column] = out[column].astype("Int64")
    return out


Versions = Mapping[tuple[str, ...], tuple[int, int]]


def mixed(polls: Sequence[Poll], published: Versions) -> list[Poll]:
    """The polls that saw a batch half-published: ``published`` maps each table of the batch
    to ``(version before, version after)``; a poll is mixed when some of those tables are at
    or past their version after while others are still at or before their version before."""
    out = []
    keys = {tuple(k): v for k, v in published.items()}
    for p in polls:
        seen = p.versions
        after = before = False
        for key, (old, new) in keys.items():
            v = seen.get(key)
            if v is None:
                continue
            after |= v >= new
            before |= v <= old
        if after and before:
            out.append(p)
    return out


def watch(
    ns: LanceNamespace,
    table_ids: Sequence[Sequence[str]],
    *,
    seconds: float,
    interval: float = 0.2,
    stop: Any = None,
) -> list[Poll]:
    """Poll every ``interval`` seconds for ``seconds`` (or until ``stop()`` is true)."""
    polls: list[Poll] = []
    end = time.monotonic() + float(seconds)
    while time.monotonic() < end and not (stop is not None and stop()):
        polls.append(poll(ns, table_ids))
        time.sleep(max(0.0, float(interval)))
    return polls


__all__ = [
    "FRAME_COLUMNS",
    "POLL_ATTEMPTS",
    "Poll",
    "Reading",
    "frame",
    "mixed",
    "poll",
    "watch",
]
