"""Tables kept open for queries on the local backend.

Opening a table for every QueryTable costs a catalog lookup (DescribeTable on ``__manifest``)
and a dataset open, often more than the query itself. :class:`OpenTables` keeps each
table's location and an open dataset, and checks two cheap things on every call (each one
``latest_version``: lance reads the version hint next to the manifests):

* the catalog's latest version: when it moved, a table may have been created, dropped,
  renamed or re-registered, so every location is looked up again;
* the table's latest version: a query without a version reads the newest one, as a fresh
  open would (writes by other processes included).

Both are needed: a write to a table does not move the catalog, and a rename or a
re-registration does not move the table. What is derived from a dataset's schema (the kind of
each column, :attr:`OpenTable.kinds`) is kept with the open dataset, so it is worked out once
per version of a table, not per query.

Any error from a cached dataset drops the caches and the query is retried once from scratch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import lance

from backend.arrow.types import column_kind

MAX_OPEN = 64


class OpenTable:
    """One version of a table, open, with the kind of each of its columns (worked out on
    first use; a dataset object is one version, so its schema never changes)."""

    __slots__ = ("_kinds", "ds")

    def __init__(self, ds: lance.LanceDataset):
        self.ds = ds
        self._kinds: dict[str, str] | None = None

    @property
    def kinds(self) -> dict[str, str]:
        """Column name -> ``backend.arrow.types.column_kind`` of the dataset's schema."""
        if self._kinds is None:
            self._kinds = {f.name: column_kind(f.type) for f in self.ds.schema}
        return self._kinds


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
        self._catalog: lance.LanceDataset | None = None
        self._catalog_version: int | None = None
        self._locations: dict[tuple[str, ...], str] = {}
        self._tables: dict[str, OpenTable] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._locations.clear()
            self._tables.clear()
            self._catalog = None
            self._catalog_version = None

    def _current_catalog_version(self) -> int | None:
        if self._catalog is None:
            try:
                self._catalog = self._open(self._catalog_uri)
            except (ValueError, OSError):
                return None  # no catalog yet: nothing is cached by id
        return int(self._catalog.latest_version)

    def _table(self, table_id: Sequence[str], version: int | None) -> OpenTable:
        key = tuple(table_id)
        with self._lock:
            catalog_version = self._current_catalog_version()
            if catalog_version is None or catalog_version != self._catalog_version:
                self._locations.clear()
                self._catalog_version = catalog_version
            location = self._locations.get(key)
            table = self._tables.get(location) if location is not None else None
        if location is None:
            location = self._resolve(table_id)
            with self._lock:
                if catalog_version is not None:
                    self._locations[key] = location
                table = self._tables.get(location)
        if table is None:
            table = OpenTable(self._open(location))
        elif version is None:
            latest = table.ds.latest_version  # the one check of the table's freshness
            if latest != table.ds.version:
                table = OpenTable(table.ds.checkout_version(latest))
        if version is not None and table.ds.version != version:
            return OpenTable(table.ds.checkout_version(version))
        if version is None:
            with self._lock:
                if len(self._tables) >= MAX_OPEN and location not in self._tables:
                    self._tables.clear()
                self._tables[location] = table
        return table

    def table(self, table_id: Sequence[str], version: int | None = None) -> OpenTable:
        """The table at ``version`` (``None``: its latest version), open."""
        try:
            return self._table(table_id, version)
        except (ValueError, OSError):
            self.clear()
            return self._table(table_id, version)

    def dataset(self, table_id: Sequence[str], version: int | None = None) -> lance.LanceDataset:
        """The table's dataset at ``version`` (``None``: its latest version)."""
        return self.table(table_id, version).ds


__all__ = ["OpenTable", "OpenTables"]
