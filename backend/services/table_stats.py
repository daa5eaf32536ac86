"""Per-table figures of a tables list (rows, size on disk, latest version, indexes, last
change, health), read without opening every table on every page view.

:func:`read_stats` reads one table: on the local backend the dataset at its latest version
(the manifest's own summary, the index list, the files under the table's folder); over REST
what the spec's answers give (``None`` where the server gives nothing): the version
(DescribeTable), the rows (the manifest summary in DescribeTable's metadata, else
CountTableRows: the live rows, as locally), the size (the summary, else GetTableStats'
``total_bytes``: the latest version's data as the server counts it, not the folder) and the
last change (DescribeTableVersion of the latest version). The health is
``backend.services.health.glance`` (no listing of versions): local, from the same opened
dataset; over REST, GetTableStats and the index stats. What a version costs to read is kept
per ``(location, version)``: a table is read again only when it has a new version.

:class:`StatsFill` fills figures in the background (one thread locally, a few at once over
REST): :meth:`StatsFill.lookup` returns the figures known (``None`` for pending ones) and
queues the missing or stale tables, in the order asked for, so the tables on screen come
first.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from lance_namespace import (
    CountTableRowsRequest,
    DescribeTableRequest,
    LanceNamespace,
)
from lance_namespace.errors import InvalidTableStateError, LanceNamespaceError

from ..capabilities import opens_datasets
from ..errors import describe_error
from ..rules.connect_options import object_store_kind
from ..spec import catalog_views
from ..spec.fanout import IN_FLIGHT
from ..spec.fields import epoch_time, whole_number
from . import health as hs
from . import versions as vsv
from .background import stop_at_exit

TableId = tuple[str, ...]


@dataclass(frozen=True)
class TableStats:
    """The figures of one table; ``None``: not known (declared only, or not given by the
    server). ``problem``: why the table could not be read."""

    rows: int | None = None
    size_bytes: int | None = None
    version: int | None = None
    indexes: int | None = None
    last_change: datetime | None = None
    health: str | None = None
    repairs: tuple[str, ...] = ()
    declared: bool = False
    problem: str | None = None

    @property
    def state(self) -> str:
        """What the list says of the table besides its figures."""
        if self.problem:
            return "unreadable"
        return "declared only" if self.declared else ""

    @property
    def verdict(self) -> str:
        """The Health column: the state when there is one (declared only, unreadable), else
        ``"healthy"``, the recommended action (``"compact"``, ``"optimize"``), the first of
        them and how many more (``"optimize +1"``), or ``"unknown"``."""
        if self.state:
            return self.state
        if self.health != hs.NEEDS_ATTENTION:
            return self.health or hs.UNKNOWN
        first, *more = self.repairs or ("needs attention",)
        return f"{first} +{len(more)}" if more else first

    @property
    def health_order(self) -> int | None:
        """Where the Health column sorts the table, worst first: ``-n`` when it needs
        attention (``n`` recommended actions, at least 1), ``0`` when healthy; ``None``
        without a verdict (declared only, unreadable, unknown)."""
        if self.state or self.health not in (hs.HEALTHY, hs.NEEDS_ATTENTION):
            return None
        return 0 if self.health == hs.HEALTHY else -max(len(self.repairs), 1)


def _glance(ns: Any, table_id: list[str], dataset: Any = None) -> hs.TableHealth | None:
    """``backend.services.health.glance`` of the table; ``None`` when the health cannot be
    read (a server without GetTableStats): the other figures stay."""
    try:
        return hs.glance(ns, table_id, dataset=dataset)
    except (LanceNamespaceError, OSError, ValueError, RuntimeError):
        return None


def _health_fields(found: hs.TableHealth | None) -> dict[str, Any]:
    """The ``health`` and ``repairs`` (recommended actions) of :class:`TableStats`; none
    (health unknown) without a glance."""
    if found is None:
        return {}
    return {
        "health": found.verdict,
        "repairs": tuple(a.kind for a in found.actions if a.recommended),
    }


def _counted_rows(ns: LanceNamespace, table_id: list[str]) -> int | None:
    """CountTableRows of the table's latest version (the live rows); ``None`` when the server
    does not count them."""
    try:
        resp = ns.count_table_rows(CountTableRowsRequest(id=table_id))
    except LanceNamespaceError:
        return None
    return whole_number(resp.count)


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class VersionMemo:
    """What was read of a table's version, by :func:`version_key`, at most ``size`` of them
    (oldest out)."""

    def __init__(self, size: int = 4096):
        self._lock = threading.Lock()
        self._items: OrderedDict[Hashable, TableStats] = OrderedDict()
        self._size = size

    def get(self, key: Hashable) -> TableStats | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def put(self, key: Hashable, stats: TableStats) -> None:
        with self._lock:
            self._items[key] = stats
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


def version_key(table_id: Sequence[str], location: str, version: int, made: Any) -> Hashable:
    """What names one version of one table for good: the table, its location, the version's
    number and ``made``, what tells that version from another of the same number at the same
    place (a table dropped and made again starts at version 1 again): locally the version's
    commit time, over REST the manifest summary DescribeTable gives (its rows, files and
    sizes; a table made again with the same ones and the same number is not told apart)."""
    return (tuple(table_id), location, int(version), made)


def _local_stats(ns: Any, table_id: list[str], memo: VersionMemo) -> TableStats:
    """The dataset at its latest version: rows and last change from the manifest's summary,
    the index count, and the bytes of every file under the table's folder (all versions,
    indexes and manifests: what the table takes on disk)."""
    try:
        ds = ns.open_dataset(table_id)
    except InvalidTableStateError:
        return TableStats(declared=True)
    version = int(ds.version)
    info = ds.get_version()  # the opened manifest's: no read
    key = version_key(table_id, str(ds.uri), version, info.get("timestamp"))
    known = memo.get(key)
    if known is not None:
        return known
    summary = info.get("metadata") or {}
    rows = whole_number(summary.get("total_rows"))
    if rows is None:
        rows = ds.count_rows()
    indexes = sum(1 for i in ds.describe_indices() if not i.name.startswith("__"))
    size = 0
    for batch in ds.all_files():
        size += sum(v for v in batch.column("size_bytes").to_pylist() if v)
    stats = TableStats(
        rows=rows,
        size_bytes=size,
        version=version,
        indexes=indexes,
        last_change=_utc(info.get("timestamp")),
        **_health_fields(_glance(ns, table_id, ds)),
    )
    memo.put(key, stats)
    return stats


def _rest_stats(ns: LanceNamespace, table_id: list[str], memo: VersionMemo) -> TableStats:
    """What the spec's answers give: the version (DescribeTable); the rows: the manifest
    summary's ``total_rows`` when DescribeTable's metadata carries it, else CountTableRows
    (both the live rows; GetTableStats' ``num_rows`` is not used: pylance's server counts the
    deleted rows in it); the size: the summary's ``total_files_size``, else GetTableStats'
    ``total_bytes`` (read with the health): the latest version's data as the server counts
    it; the index count: the indexes the health lists (ListTableIndices, the internal ones
    left out as locally); the last change: the latest version's commit time
    (DescribeTableVersion). A figure no answer gives stays ``None`` (never 0). Read once per
    version (:func:`version_key`)."""
    resp = ns.describe_table(DescribeTableRequest(id=table_id, load_detailed_metadata=True))
    if catalog_views.is_declared_only(resp):
        return TableStats(declared=True)
    meta: Mapping[str, Any] = resp.metadata or {}
    location = resp.location or "/".join(table_id)
    key = (
        version_key(table_id, location, resp.version, tuple(sorted(meta.items())))
        if resp.version is not None
        else None
    )
    if key is not None and (known := memo.get(key)) is not None:
        return known
    found = _glance(ns, table_id)
    rows = whole_number(meta.get("total_rows"))
    if rows is None:
        rows = _counted_rows(ns, table_id)
    size = whole_number(meta.get("total_files_size"))
    if size is None and found is not None:
        size = whole_number(found.total_bytes)
    listed = found.unindexed_rows if found is not None else None
    stats = TableStats(
        rows=rows,
        size_bytes=size,
        version=resp.version,
        indexes=len(listed) if listed is not None else None,
        last_change=_committed(ns, table_id, resp.version),
        **_health_fields(found),
    )
    if key is not None:
        memo.put(key, stats)
    return stats


def _committed(ns: LanceNamespace, table_id: list[str], version: int | None) -> datetime | None:
    """The commit time of ``version`` (DescribeTableVersion); ``None`` when the server does
    not say."""
    if version is None:
        return None
    try:
        described = vsv.describe_version(ns, table_id, version)
    except LanceNamespaceError:
        return None
    return epoch_time(described.get("timestamp_millis"))


def fill_workers(ns: Any) -> int:
    """Threads a :class:`StatsFill` of ``ns`` reads with: one where a read is this machine's
    own work (a local folder, memory); :data:`backend.spec.fanout.IN_FLIGHT` where it is
    round trips that overlap: REST, and a local namespace on an object store (the page's
    other requests go four at once too)."""
    if opens_datasets(ns) and object_store_kind(getattr(ns, "root", "")) is None:
        return 1
    return IN_FLIGHT


def read_stats(ns: LanceNamespace, table_id: Sequence[str], memo: VersionMemo) -> TableStats:
    """One table's figures; a failure is the figures' ``problem``, never raised."""
    tid = list(table_id)
    try:
        if opens_datasets(ns):
            return _local_stats(ns, tid, memo)
        return _rest_stats(ns, tid, memo)
    except LanceNamespaceError as err:
        return TableStats(problem=describe_error(err)["message"])
    except (OSError, ValueError, RuntimeError) as err:
        return TableStats(problem=str(err) or type(err).__name__)


@dataclass(frozen=True)
class _Entry:
    stats: TableStats
    generation: Hashable
    read_at: float


def _behind(entry: _Entry | None, generation: Hashable) -> bool:
    """A figure not read under ``generation``: never read, or read before its table's last
    write."""
    return entry is None or entry.generation != generation


class StatsFill:
    """Figures of tables, filled in the background by up to ``workers`` threads at once
    (:func:`fill_workers`), never two reads of one table at once.

    ``read(table_id)`` reads one table. A figure is *stale* when it was read more than
    ``max_age`` seconds ago or under another ``generation`` (the caller's invalidation count
    of that table); a stale figure is still returned while it is read again."""

    def __init__(
        self,
        read: Callable[[TableId], TableStats],
        *,
        max_age: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        workers: int = 1,
    ):
        self._read = read
        self._max_age = max_age
        self._clock = clock
        self._workers = max(1, int(workers))
        self._lock = threading.Lock()
        self._filled = threading.Condition(self._lock)  # notified as each figure comes in
        self._known: dict[TableId, _Entry] = {}
        self._queue: deque[tuple[TableId, Hashable]] = deque()
        self._reading: set[TableId] = set()  # being read now (by one thread each)
        self._threads: set[threading.Thread] = set()  # threads draining the queue
        self._stopped = False
        stop_at_exit(self)  # reads under way at the process's end are waited for

    def lookup(
        self, wanted: Iterable[tuple[TableId, Hashable]]
    ) -> dict[TableId, TableStats | None]:
        """The figures of ``wanted`` (``(table id, generation)`` pairs) known now, ``None`` for
        those never read; the missing and stale ones are queued, in the order given, ahead
        of what was queued before."""
        return self.lookup_behind(wanted)[0]

    def lookup_behind(
        self, wanted: Iterable[tuple[TableId, Hashable]]
    ) -> tuple[dict[TableId, TableStats | None], list[TableId]]:
        """:meth:`lookup`, and those of the figures returned that are behind their generation
        (never read, or read before the table's last write), judged on the same reading of
        the figures: a figure that comes in between the two is not missed."""
        now = self._clock()
        out: dict[TableId, TableStats | None] = {}
        todo: list[tuple[TableId, Hashable]] = []
        behind: list[TableId] = []
        with self._lock:
            for tid, generation in wanted:
                entry = self._known.get(tid)
                out[tid] = entry.stats if entry is not None else None
                late = _behind(entry, generation)
                if late:
                    behind.append(tid)
                if late or entry is None or now - entry.read_at > self._max_age:
                    todo.append((tid, generation))
            if todo:
                ahead = {tid for tid, _ in todo}
                rest = [item for item in self._queue if item[0] not in ahead]
                self._queue = deque([*todo, *rest])
                self._start_threads()
        return out, behind

    def _start_threads(self) -> None:
        """Threads up to ``workers``, and no more than the queue has tables for (called under
        the lock)."""
        while not self._stopped and len(self._threads) < min(self._workers, len(self._queue)):
            thread = threading.Thread(target=self._drain, daemon=True, name="table-stats")
            self._threads.add(thread)
            thread.start()

    def stop(self) -> None:
        """Forget what is queued and start no more reads (those under way end)."""
        with self._lock:
            self._stopped = True
            self._queue.clear()

    def join(self, timeout: float | None = None) -> None:
        """Wait up to ``timeout`` seconds for the reads under way to end."""
        with self._lock:
            threads = list(self._threads)
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))

    def behind(self, wanted: Iterable[tuple[TableId, Hashable]]) -> list[TableId]:
        """Those of ``wanted`` (``(table id, generation)`` pairs) not read under that
        generation yet: never read, or read before the table's last write (whose figures
        :meth:`lookup` still returns while they are read again)."""
        with self._lock:
            return [tid for tid, generation in wanted if _behind(self._known.get(tid), generation)]

    def settle(self, wanted: Iterable[tuple[TableId, Hashable]], timeout: float) -> list[TableId]:
        """Wait up to ``timeout`` seconds (of the monotonic clock) for the figures of
        ``wanted`` to be read under their generations (queued by :meth:`lookup` before);
        returns those still behind."""
        pairs = list(wanted)
        deadline = time.monotonic() + timeout
        with self._filled:
            while True:
                late = [tid for tid, gen in pairs if _behind(self._known.get(tid), gen)]
                left = deadline - time.monotonic()
                if not late or left <= 0:
                    return late
                self._filled.wait(left)

    def pending(self) -> int:
        """How many tables are queued (or being read)."""
        with self._lock:
            return len({tid for tid, _ in self._queue} | self._reading)

    def wait(self, timeout: float = 30.0) -> bool:
        """Until the queue is empty (``True``) or ``timeout`` seconds (of the monotonic clock)
        passed (``False``); woken as each figure comes in, as :meth:`settle` is."""
        with self._filled:
            return self._filled.wait_for(lambda: not self._queue and not self._reading, timeout)

    def _next(self) -> tuple[TableId, Hashable] | None:
        """The first queued table no other thread is reading, taken off the queue (called
        under the lock); ``None``: none."""
        for i, item in enumerate(self._queue):
            if item[0] not in self._reading:
                del self._queue[i]
                self._reading.add(item[0])
                return item
        return None

    def _drain(self) -> None:
        while True:
            with self._lock:
                item = self._next()
                if item is None:  # the queue is empty, or its tables are being read
                    self._threads.discard(threading.current_thread())
                    return
            tid, generation = item
            try:
                stats = self._read(tid)
            except Exception as err:  # noqa: BLE001 - read_stats raises none; a figure says it
                stats = TableStats(problem=str(err) or type(err).__name__)
            with self._lock:
                self._reading.discard(tid)
                self._known[tid] = _Entry(stats, generation, self._clock())
                self._start_threads()  # a table queued again while it was read
                self._filled.notify_all()


# The list's columns (after the name) and what each sorts by.
STAT_COLUMNS = ("rows", "size_bytes", "version", "indexes", "last_change")
SORTS = {
    "name": "Name",
    "rows": "Rows",
    "size_bytes": "Size on disk",
    "version": "Latest version",
    "indexes": "Indexes",
    "last_change": "Last change",
    "health": "Health",
}
# The tables list's orders, as its one "Sort by" box offers them: option -> (SORTS key,
# descending, label). Each figure both ways, the usual direction's words for it.
SORT_ORDERS: dict[str, tuple[str, bool, str]] = {
    "name": ("name", False, "Name (A to Z)"),
    "name:desc": ("name", True, "Name (Z to A)"),
    "rows": ("rows", False, "Rows (fewest first)"),
    "rows:desc": ("rows", True, "Rows (most first)"),
    "size_bytes": ("size_bytes", False, "Size (smallest first)"),
    "size_bytes:desc": ("size_bytes", True, "Size (largest first)"),
    "version": ("version", False, "Version (lowest first)"),
    "version:desc": ("version", True, "Version (highest first)"),
    "indexes": ("indexes", False, "Indexes (fewest first)"),
    "indexes:desc": ("indexes", True, "Indexes (most first)"),
    "last_change": ("last_change", False, "Last change (oldest first)"),
    "last_change:desc": ("last_change", True, "Last change (newest first)"),
    "health": ("health", False, "Health (worst first)"),
    "health:desc": ("health", True, "Health (healthy first)"),
}
PENDING = "pending"


def sort_names(
    names: Sequence[str],
    stats: Mapping[str, TableStats | None],
    by: str,
    *,
    descending: bool = False,
) -> list[str]:
    """``names`` sorted by ``by`` (``"name"``, one of :data:`STAT_COLUMNS` or ``"health"``:
    by :attr:`TableStats.health_order`, worst first, healthy last; descending: healthy
    first); tables without that figure (pending, declared only, not given, no verdict) come
    last either way, by name. Ties keep the order of ``names``."""
    if by == "name":
        return sorted(names, reverse=descending)
    field = "health_order" if by == "health" else by
    have: list[tuple[Any, str]] = []
    lacking: list[str] = []
    for name in names:
        one = stats.get(name)
        value = getattr(one, field, None) if one is not None else None
        if value is None:
            lacking.append(name)
        else:
            have.append((value, name))
    have.sort(key=lambda pair: pair[0], reverse=descending)
    return [name for _, name in have] + sorted(lacking)


def stats_frame(names: Sequence[str], stats: Mapping[str, TableStats | None]) -> Any:
    """The list's rows: ``table``, the :data:`STAT_COLUMNS` (nullable), ``health``
    (:attr:`TableStats.verdict`) and ``state``; both :data:`PENDING` while a table's figures
    are being read."""
    import pandas as pd

    rows = []
    for name in names:
        one = stats.get(name)
        row: dict[str, Any] = {"table": name}
        row.update({col: getattr(one, col) if one is not None else None for col in STAT_COLUMNS})
        row["health"] = PENDING if one is None else one.verdict
        row["state"] = PENDING if one is None else one.state
        rows.append(row)
    frame = pd.DataFrame(rows, columns=["table", *STAT_COLUMNS, "health", "state"])
    for col in ("rows", "size_bytes", "version", "indexes"):
        frame[col] = frame[col].astype("Int64")
    frame["last_change"] = pd.to_datetime(frame["last_change"], utc=True)
    return frame
