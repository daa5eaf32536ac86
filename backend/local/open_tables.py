"""Tables kept open for queries on the local backend.

Opening a table for every QueryTable costs a catalog lookup (DescribeTable on ``__manifest``)
and a dataset open, often more than the query itself. :class:`OpenTables` keeps each
table's location and an open dataset, and checks two cheap things on every query:

* the catalog's latest version (a listing of ``__manifest/_versions``): when it moved, a
  table may have been created, dropped, renamed or re-registered, so every location is
  looked up again;
* the table's latest version: a query without a version reads the newest one, as a fresh
  open would (writes by other processes included).

Any error from a cached dataset drops the caches and the query is retried once from scratch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import lance

MAX_OPEN = 64


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
        self._datasets: dict[str, lance.LanceDataset] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._locations.clear()
            self._datasets.clear()
            self._catalog = None
            self._catalog_version = None

    def _current_catalog_version(self) -> int | None:
        if self._catalog is None:
            try:
                self._catalog = self._open(self._catalog_uri)
            except (ValueError, OSError):
                return None  # no catalog yet: nothing is cached by id
        return int(self._catalog.latest_version)

    def _dataset(self, table_id: Sequence[str], version: int | None) -> lance.LanceDataset:
        key = tuple(table_id)
        with self._lock:
            catalog_version = self._current_catalog_version()
            if catalog_version is None or catalog_version != self._catalog_version:
                self._locations.clear()
                self._catalog_version = catalog_version
            location = self._locations.get(key)
        if location is None:
            location = self._resolve(table_id)
            if catalog_version is not None:
                with self._lock:
                    self._locations[key] = location
        with self._lock:
            ds = self._datasets.get(location)
        if ds is None:
            ds = self._open(location)
        if version is None:
            latest = ds.latest_version
            if latest != ds.version:
                ds = ds.checkout_version(latest)
        with self._lock:
            if len(self._datasets) >= MAX_OPEN and location not in self._datasets:
                self._datasets.clear()
            if version is None:
                self._datasets[location] = ds
        return ds if version is None or ds.version == version else ds.checkout_version(version)

    def dataset(self, table_id: Sequence[str], version: int | None = None) -> lance.LanceDataset:
        """The table at ``version`` (``None``: its latest version)."""
        try:
            return self._dataset(table_id, version)
        except (ValueError, OSError):
            self.clear()
            return self._dataset(table_id, version)


__all__ = ["OpenTables"]
