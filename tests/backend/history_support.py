"""Tables with a history of versions for the change-log and row-compare tests, and the
independent computation of what changed between two versions (pyarrow anti-joins, rows
compared in Python)."""

from __future__ import annotations

from typing import Any

import lance
import pyarrow as pa
from lance_namespace import CreateNamespaceRequest

from tests.support import create_table, table_location

TID = ["a", "t"]


def base_rows(n: int = 10) -> pa.Table:
    return pa.table({"id": list(range(n)), "v": [f"r{i}" for i in range(n)]})


def new_table(ns: Any, table: pa.Table | None = None) -> str:
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    create_table(ns, TID, base_rows() if table is None else table)
    return str(table_location(ns, TID))


def at(location: str, version: int) -> pa.Table:
    return lance.dataset(location, version=version).to_table()


def by_key(old: pa.Table, new: pa.Table, key: str = "id") -> dict[str, Any]:
    """Inserted / deleted keys by pyarrow anti-joins, updated keys with their changed columns
    by comparing the rows of each key in Python."""
    inserted = new.join(old.select([key]), key, join_type="left anti").column(key).to_pylist()
    deleted = old.join(new.select([key]), key, join_type="left anti").column(key).to_pylist()
    before = {r[key]: r for r in old.to_pylist()}
    common = [c for c in new.column_names if c in old.column_names and c != key]
    updated = {}
    for r in new.to_pylist():
        if r[key] in before:
            diff = sorted(c for c in common if r[c] != before[r[key]][c])
            if diff:
                updated[r[key]] = diff
    return {"inserted": sorted(inserted), "deleted": sorted(deleted), "updated": updated}
