"""Tables kept open for queries on the local backend.

Opening a table for every QueryTable costs a catalog lookup (DescribeTable on ``__manifest``)
and a dataset open, often more than the query itself. :class:`OpenTables` keeps each
table's location and an open dataset, and checks two things on every call:

* the catalog: when it moved, a table may have been created, dropped, renamed or
  re-registered, so every location is looked up again. On a root on a local file system
  this is one ``stat`` of the catalog's ``_versions`` directory (every commit, by any writer,
  adds a manifest there, which changes the directory's modification time): while the
  directory is as it was when the catalog's version was last read, and that state was
  already :data:`SETTLED_SECONDS` old when it was seen (so a later commit cannot share its
  time stamp, however coarse the file system's clock), the catalog has not moved. Otherwise,
  and on object stores, the catalog's ``latest_version`` is read;
* the table's latest version: a query without a version reads the newest one, as a fresh open
  would (writes by other processes included). On a local file system this is the same
  ``stat``, of the table's own ``_versions`` directory; otherwise the dataset's
  ``latest_version``.

Both are needed: a write to a table does not move the catalog, and a rename or a
re-registration does not move the table. What a table's catalog entry alone decides (where its
versions are kept, :meth:`OpenTables.kept`) is kept by the same check of the catalog. What is
derived from a dataset's schema (the kind of each column, :attr:`OpenTable.kinds`) is kept
with the open dataset, so it is worked out once per version of a table, not per query.

Any error from a cached dataset drops the caches and the query is retried once from scratch.

One operation checks the catalog once: within :meth:`OpenTables.one_read` (a read at "latest"
first finds the table's committed version, then reads at it), the first check's answer stands
for the operation's later lookups on the same thread. On an object store each check is a LIST
request; the operation's reads are of the catalog as that check found it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar, cast

import lance

from backend.arrow.types import column_kind

T = TypeVar("T")
MAX_OPEN = 64
# How old a ``_versions`` directory's last change must be before its time stamp stands for the
# dataset's version (coarser than any file system's time stamps: ext3 and HFS+ keep seconds).
SETTLED_SECONDS = 2.5
# File systems whose directory time stamps this host's clock sets: no attribute caching and
# no clock of another machine in between (network file systems read the catalog every time).
LOCAL_FILE_SYSTEMS = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs", "f2fs", "ramfs"}
)
_OCTAL = re.compile(r"\\([0-7]{3})")


@functools.lru_cache(maxsize=256)
def _file_system(path: str) -> str | None:
    """The type of the file system ``path`` is on (Linux ``/proc/self/mountinfo``; ``None``
    elsewhere or when unreadable). Kept per path: a dataset does not move between mounts."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as mounts:
            lines = mounts.read().splitlines()
    except OSError:
        return None
    path = os.path.realpath(path)
    best, found = -1, None
    for line in lines:
        left, _, right = line.partition(" - ")
        fields = left.split()
        if len(fields) < 5 or not right:
            continue
        point = _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), fields[4])  # \040: a space
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if inside and len(point) > best:
            best, found = len(point), right.split()[0]
    return found


def versions_dir(dataset_uri: str) -> str | None:
    """A dataset's ``_versions`` directory when its time stamps can stand for the dataset's
    version (a local path, or ``file://`` URI, on a :data:`LOCAL_FILE_SYSTEMS` file system),
    else ``None``."""
    if dataset_uri.startswith("file://"):
        dataset_uri = dataset_uri.removeprefix("file://")
    if "://" in dataset_uri:
        return None
    return (
        os.path.join(dataset_uri, "_versions")
        if _file_system(dataset_uri) in LOCAL_FILE_SYSTEMS
        else None
    )


Stamp = tuple[int, int, int]


def settled_stamp(directory: str | None) -> Stamp | None:
    """``directory``'s (device, inode, modification time) when it last changed more than
    :data:`SETTLED_SECONDS` ago; ``None`` otherwise (or when there is no such directory).
    Taken before a dataset's version is read, an equal stamp later means no commit since."""
    if directory is None:
        return None
    try:
        st = os.stat(directory)
    except OSError:
        return None
    if time.time() - st.st_mtime < SETTLED_SECONDS:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns)


class OpenTable:
    """One version of a table, open, with the kind of each of its columns (worked out on
    first use; a dataset object is one version, so its schema never changes), and the stamp
    of its ``_versions`` directory when that version was known to be the latest."""

    __slots__ = ("_kinds", "ds", "stamp", "version", "versions_dir")

    def __init__(
        self,
        ds: lance.LanceDataset,
        versions_dir: str | None = None,
        stamp: Stamp | None = None,
    ):
        self.ds = ds
        self.version = int(ds.version)  # read once: a dataset object is one version
        self.versions_dir = versions_dir
        self.stamp = stamp
        self._kinds: dict[str, str] | None = None

    @property
    def kinds(self) -> dict[str, str]:
        """Column name -> ``backend.arrow.types.column_kind`` of the dataset's schema."""
        if self._kinds is None:
            self._kinds = {f.name: column_kind(f.type) for f in self.ds.schema}
        return self._kinds

    def latest(self) -> OpenTable:
        """This table at its latest version: itself while its ``_versions`` directory has
        not changed since that was known, else after one ``latest_version`` read."""
        stamp = settled_stamp(self.versions_dir)  # before the read: a later commit changes it
        if stamp is not None and stamp == self.stamp:
            return self
        latest = self.ds.latest_version
        if latest == self.version:
            self.stamp = stamp
            return self
        return OpenTable(self.ds.checkout_version(latest), self.versions_dir, stamp)


class _NoRetry(Exception):
    """A table's read that failed at the location the catalog gives now (its open, or its
    checkout of a version it does not have): :meth:`OpenTables.table` does not try it
    again, which would do the same."""

    def __init__(self, error: ValueError | OSError):
        super().__init__(str(error))
        self.error = error


class OpenTables:
    def __init__(
        self,
        open_dataset: Callable[[str], lance.LanceDataset],
        resolve_location: Callable[[Sequence[str]], str],
        catalog_uri: str,
    ):
        self._open = open_dataset
        self._resolve = resolve_location
        self._catalog_uri = catalog_uri
        self._catalog: OpenTable | None = None  # the catalog is a dataset like the tables
        self._catalog_version: int | None = None  # the version the locations were read at
        self._locations: dict[tuple[str, ...], str] = {}
        self._kept: dict[tuple[str, ...], object] = {}  # :meth:`kept`'s answers, per table id
        self._tables: dict[str, OpenTable] = {}
        self._lock = threading.Lock()
        self._operation = threading.local()  # one_read's scope: depth, the catalog's answer

    @contextlib.contextmanager
    def one_read(self) -> Iterator[None]:
        """One operation's lookups (this thread's, until the block ends): the catalog is
        checked by the first that needs it, and its answer stands for the others. Nested
        blocks join the outer one."""
        depth = getattr(self._operation, "depth", 0)
        if depth == 0:
            self._operation.checked = None
        self._operation.depth = depth + 1
        try:
            yield
        finally:
            self._operation.depth = depth
            if depth == 0:
                self._operation.checked = None

    def clear(self) -> None:
        with self._lock:
            self._locations.clear()
            self._kept.clear()
            self._tables.clear()
            self._catalog = None
            self._catalog_version = None
        self._operation.checked = None  # this thread's operation checks the catalog again

    def _open_table(self, location: str) -> OpenTable:
        """The dataset at ``location``, open at its latest version, with the stamp of its
        ``_versions`` directory taken before the open (which reads the latest version)."""
        directory = versions_dir(location)
        stamp = settled_stamp(directory)
        return OpenTable(self._open(location), directory, stamp)

    def _current_catalog_version(self) -> int | None:
        if self._catalog is None:
            try:
                self._catalog = self._open_table(self._catalog_uri)
            except (ValueError, OSError):
                return None  # no catalog yet: nothing is cached by id
        else:
            self._catalog = self._catalog.latest()
        return self._catalog.version

    def _checked_catalog(self) -> int | None:
        """The catalog's version; what was kept by table id is forgotten when it moved (or
        there is no catalog). Within :meth:`one_read`, read once per operation. Called with
        the lock held."""
        in_operation = int(getattr(self._operation, "depth", 0)) > 0
        checked = getattr(self._operation, "checked", None) if in_operation else None
        if checked is not None:
            return cast(int | None, checked[0])
        catalog_version = self._current_catalog_version()
        if catalog_version is None or catalog_version != self._catalog_version:
            self._locations.clear()
            self._kept.clear()
            self._catalog_version = catalog_version
        if in_operation:
            self._operation.checked = (catalog_version,)
        return catalog_version

    def kept(self, table_id: Sequence[str], read: Callable[[Sequence[str]], T]) -> T:
        """``read(table_id)``, a fact of the table's catalog entry alone (its location, whether
        the catalog manages its versions), kept until the catalog moves (a table created,
        dropped, renamed or re-registered, by any writer); read every time where there is no
        catalog. A failure of ``read`` is not kept."""
        key = tuple(table_id)
        try:
            with self._lock:
                catalog_version = self._checked_catalog()
                if key in self._kept:
                    return cast(T, self._kept[key])
        except (ValueError, OSError):
            self.clear()
            return read(table_id)
        found = read(table_id)  # after the check: a later move of the catalog forgets it
        with self._lock:
            if catalog_version is not None and catalog_version == self._catalog_version:
                self._kept[key] = found
        return found

    def _table(self, table_id: Sequence[str], version: int | None) -> OpenTable:
        key = tuple(table_id)
        with self._lock:
            catalog_version = self._checked_catalog()
            location = self._locations.get(key)
            table = self._tables.get(location) if location is not None else None
        fresh = location is None
        if location is None:
            location = self._resolve(table_id)
            with self._lock:
                if catalog_version is not None:
                    self._locations[key] = location
                table = self._tables.get(location)
        if table is None:
            try:
                table = self._open_table(location)
            except (ValueError, OSError) as err:
                raise self._failed_at(table_id, location, fresh=fresh, error=err) from None
        elif version is None:
            table = table.latest()  # the one check of the table's freshness
        if version is not None and table.version != version:
            try:
                return OpenTable(table.ds.checkout_version(version), table.versions_dir)
            except (ValueError, OSError) as err:  # a version the table does not have
                raise self._failed_at(table_id, location, fresh=fresh, error=err) from None
        if version is None:
            with self._lock:
                if len(self._tables) >= MAX_OPEN and location not in self._tables:
                    self._tables.clear()
                self._tables[location] = table
        return table

    def _failed_at(
        self, table_id: Sequence[str], location: str, *, fresh: bool, error: ValueError | OSError
    ) -> Exception:
        """What a read that failed at ``location`` raises: ``error`` itself, for
        :meth:`table` to try again, when the location was kept and the catalog, read afresh,
        no longer gives it; else :class:`_NoRetry`, since a second try at the same location
        would fail the same way (an open, or a checkout of a version the table lacks)."""
        if not fresh:  # a kept location: is it still the one the catalog gives?
            self._forget(table_id)
            if self._resolve(table_id) != location:
                return error  # no: tried again at the new one
        return _NoRetry(error)

    def table(self, table_id: Sequence[str], version: int | None = None) -> OpenTable:
        """The table at ``version`` (``None``: its latest version), open. A read that fails
        using what was kept of this table (a location the catalog no longer gives, its open
        dataset) or the catalog's handle is tried once more with those forgotten
        (:meth:`_forget`); the other tables stay open. An open, or a checkout of a version,
        that failed at the location the catalog gives now is not tried again: a declared
        table, which has no data to open, is opened once per read, and a version the table
        does not have (deleted, or never made) is looked for once."""
        for retry in (False, True):
            try:
                return self._table(table_id, version)
            except _NoRetry as failed:
                error = failed.error  # tried again it would do the same
                break
            except (ValueError, OSError):
                if retry:
                    raise
                self._forget(table_id)
        raise error  # outside the handler: the read's own error, as it was raised

    def _forget(self, table_id: Sequence[str]) -> None:
        """Forget the location and the open dataset kept for ``table_id`` and the catalog's
        open handle (opened again at its latest version by the next check, which compares
        its version as ever)."""
        key = tuple(table_id)
        with self._lock:
            location = self._locations.pop(key, None)
            self._kept.pop(key, None)
            if location is not None:
                self._tables.pop(location, None)
            self._catalog = None
        self._operation.checked = None  # this thread's operation checks the catalog again

    def dataset(self, table_id: Sequence[str], version: int | None = None) -> lance.LanceDataset:
        """The table's dataset at ``version`` (``None``: its latest version)."""
        return self.table(table_id, version).ds
