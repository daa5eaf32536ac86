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

:class:`Watcher` is the same reader in a background thread: it polls into a buffer every
``interval`` seconds while a commit runs (:func:`watching` wraps one) and for a while after,
so that a page draws the buffer as it grows and a notebook reads it once the watch is over;
:func:`summarize` says what the watch saw (polls, mixed states, versions that moved).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from lance_namespace import DescribeTableRequest, LanceNamespace
from lance_namespace.errors import LanceNamespaceError

from backend import capabilities
from backend.rules import ids
from backend.services.background import stop_at_exit
from backend.services.search.query import count_rows

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
        rows = count_rows(ns, table_id, version=version, filter=None)
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

BEFORE, PUBLISHED, OTHER = "before", "published", "other"
STATE_COLUMNS = ["seconds", "poll", "table", "version", "rows", "state", "mixed"]


def states_frame(polls: Sequence[Poll], published: Versions | None = None) -> pd.DataFrame:
    """One row per poll and table for the reader chart: ``seconds`` since the first poll, the
    version and row count read, and the ``state`` of the table in that poll: for a table of
    ``published``, ``before`` (at or before its version before the batch) or ``published``
    (at or past its version after); for any other table, ``before`` while it is at the
    version the first poll read, ``other`` once something else changed it (another writer).
    ``mixed``: the poll saw the batch half published (:func:`mixed`)."""
    keys = {tuple(k): v for k, v in (published or {}).items()}
    bad = {id(p) for p in mixed(polls, keys)} if keys else set()
    start = polls[0].at if polls else 0.0
    first = polls[0].versions if polls else {}
    rows = []
    for i, p in enumerate(polls):
        for r in p.readings:
            span = keys.get(r.table_id)
            state = BEFORE
            if r.version is not None and span is not None:
                state = (
                    PUBLISHED if r.version >= span[1] else BEFORE if r.version <= span[0] else OTHER
                )
            elif r.version != first.get(r.table_id):
                state = OTHER
            rows.append(
                {
                    "seconds": round(p.at - start, 3),
                    "poll": i,
                    "table": ids.display_id(list(r.table_id)),
                    "version": r.version,
                    "rows": r.rows,
                    "state": state,
                    "mixed": id(p) in bad,
                }
            )
    out = pd.DataFrame(rows, columns=STATE_COLUMNS)
    for column in ("version", "rows"):
        out[column] = out[column].astype("Int64")
    return out


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


# -- a reader in the background ----------------------------------------------------------------
WATCH_INTERVAL = 0.05  # seconds between two polls of a background watch
WATCH_AFTER = 3.0  # seconds a watch goes on after the commit it watched
MAX_WATCH_SECONDS = 120.0  # a watch nobody stops ends by itself
MAX_POLLS = 2000  # polls a watch keeps at most (the oldest go first)


class Watcher:
    """A reader polling ``table_ids`` (:func:`poll`) every ``interval`` seconds in a daemon
    thread, into a buffer that :meth:`polls` copies. It runs from :meth:`start` until
    :meth:`stop`, the deadline :meth:`stop_after` sets, or ``max_seconds``; :meth:`mark`
    notes a moment (a commit starting, ending) for the chart. A poll that raises ends the
    watch (``error`` says why)."""

    def __init__(
        self,
        ns: LanceNamespace,
        table_ids: Sequence[Sequence[str]],
        *,
        interval: float = WATCH_INTERVAL,
        max_seconds: float = MAX_WATCH_SECONDS,
    ) -> None:
        self.table_ids = [ids.check_id(list(t)) for t in table_ids]
        self.interval = max(0.01, float(interval))
        self.error: str | None = None
        self._ns = ns
        self._polls: list[Poll] = []
        self._marks: list[tuple[float, str]] = []
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._deadline = time.monotonic() + float(max_seconds)
        self._thread = threading.Thread(target=self._run, name="table-watch", daemon=True)

    def start(self, *, first: int = 2, timeout: float = 5.0) -> Watcher:
        """Start polling; returns once ``first`` polls are in (at most ``timeout`` seconds), so
        that the buffer holds the state before what the caller does next."""
        stop_at_exit(self)  # a watch still polling when the process ends is stopped first
        self._thread.start()
        end = time.monotonic() + timeout
        with self._changed:
            while len(self._polls) < first and self.alive and time.monotonic() < end:
                self._changed.wait(max(0.0, end - time.monotonic()))
        return self

    def _run(self) -> None:
        while True:
            with self._lock:
                if time.monotonic() >= self._deadline:
                    break
            try:
                found = poll(self._ns, self.table_ids)
            except Exception as err:  # noqa: BLE001 - the watch ends and says why
                self.error = f"{type(err).__name__}: {err}"
                break
            with self._changed:
                self._polls.append(found)
                del self._polls[:-MAX_POLLS]
                self._changed.notify_all()
                left = self._deadline - time.monotonic()
            time.sleep(max(0.0, min(self.interval, left)))
        with self._changed:
            self._deadline = min(self._deadline, time.monotonic())
            self._changed.notify_all()

    def mark(self, label: str) -> None:
        with self._lock:
            self._marks.append((time.time(), str(label)))

    def stop_after(self, seconds: float) -> None:
        """End the watch ``seconds`` from now (never later than it would end anyway)."""
        with self._lock:
            self._deadline = min(self._deadline, time.monotonic() + max(0.0, float(seconds)))

    def stop(self) -> None:
        self.stop_after(0.0)

    def join(self, timeout: float | None = None) -> None:
        """Wait for the watch to end (``stop_after`` sets when)."""
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def polls(self) -> list[Poll]:
        with self._lock:
            return list(self._polls)

    def marks(self) -> list[tuple[float, str]]:
        with self._lock:
            return list(self._marks)


@contextlib.contextmanager
def watching(
    ns: LanceNamespace,
    table_ids: Sequence[Sequence[str]],
    *,
    label: str = "commit",
    interval: float = WATCH_INTERVAL,
    after: float = WATCH_AFTER,
    first: int = 2,
) -> Iterator[Watcher]:
    """A :class:`Watcher` that polls before the block (``first`` polls), during it and
    ``after`` seconds after it, in the background: the block's start and end are marked
    (``"<label> started"``, ``"<label> ended"``)."""
    watcher = Watcher(ns, table_ids, interval=interval).start(first=first)
    watcher.mark(f"{label} started")
    try:
        yield watcher
    finally:
        watcher.mark(f"{label} ended")
        watcher.stop_after(after)


@dataclass(frozen=True)
class WatchSummary:
    """What a watch saw: ``polls`` (and over how many ``seconds``: ``rate`` polls a second),
    ``mixed`` (polls that saw ``published`` half done, :func:`mixed`), ``inconsistent`` (polls
    whose tables moved while read, every attempt), and each table's first and last version
    and row count (``moved``: the tables whose version changed during the watch)."""

    polls: int
    seconds: float
    mixed: int
    inconsistent: int
    first: dict[tuple[str, ...], tuple[int | None, int | None]] = field(default_factory=dict)
    last: dict[tuple[str, ...], tuple[int | None, int | None]] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.polls / self.seconds if self.seconds > 0 else 0.0

    @property
    def moved(self) -> list[tuple[str, ...]]:
        return [t for t, (v, _) in self.last.items() if v != self.first.get(t, (None, None))[0]]

    @property
    def flat(self) -> bool:
        """No table's version or row count changed during the watch."""
        return self.first == self.last


def summarize(polls: Sequence[Poll], published: Versions | None = None) -> WatchSummary:
    """The :class:`WatchSummary` of ``polls``; ``published`` as for :func:`mixed` (``None``:
    no batch to judge, no mixed poll)."""
    if not polls:
        return WatchSummary(0, 0.0, 0, 0)

    def state(p: Poll) -> dict[tuple[str, ...], tuple[int | None, int | None]]:
        return {r.table_id: (r.version, r.rows) for r in p.readings}

    return WatchSummary(
        polls=len(polls),
        seconds=max(0.0, polls[-1].at - polls[0].at),
        mixed=len(mixed(polls, published)) if published else 0,
        inconsistent=sum(not p.consistent for p in polls),
        first=state(polls[0]),
        last=state(polls[-1]),
    )
