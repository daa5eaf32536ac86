"""RenameTable and DropNamespace CASCADE on a local namespace, on the batch machinery.

Both are one Lance commit of the catalog (``__manifest``), so a crash leaves the catalog as it
was or as it is after, never in between:

* rename: one ``merge_insert`` that inserts the row under its new object id (same location,
  same properties) and deletes the old row. The table's data is not touched.
* cascade drop: one delete of every row of the namespace's subtree (the namespace, its child
  namespaces, their tables). The tables' directories are deleted after the commit; which ones
  is written durably *before* the commit as a drop intent in the batch protocol's pending
  directory, so recovery (on open and before every guarded write) finishes the deletes of a
  process killed after the commit, and discards the intent of one killed before it.

Both run under the namespace lock (the caller's ``guard_single_op``), after recovery. Rename
also runs on object stores (``s3://``...): Lance commits the catalog there with a conditional
write, which is the whole of its atomicity. A cascade drop needs the drop intent on a file
root (or a memory:// root, where nothing survives a crash).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lance_namespace.errors import ErrorCode

from backend.rules import ids

from ...locations import TableDirs, is_table_folder, location_problem
from .apply import PENDING_DIR
from .catalog import catalog_commit, read_catalog
from .context import DELIMITER, Ctx, error, oid
from .durable import fsync_path, write_atomic
from .faults import Steps

DROP_PREFIX = "drop-"


@dataclass(frozen=True)
class Subtree:
    """Everything under a namespace, as the catalog lists it (object ids, deepest last)."""

    namespaces: list[list[str]]  # child namespaces (not the namespace itself)
    tables: list[list[str]]
    locations: dict[str, str]  # table object id -> catalog location


def subtree(rows: dict[str, dict[str, Any]], namespace_id: Sequence[str]) -> Subtree:
    """The child namespaces and tables of ``namespace_id`` (every level) among the catalog's
    ``rows``."""
    prefix = oid(namespace_id) + DELIMITER
    namespaces, tables, locations = [], [], {}
    for key in sorted(rows):
        if not key.startswith(prefix):
            continue
        row = rows[key]
        parts = ids.parse_object_id(key)
        if row.get("object_type") == "namespace":
            namespaces.append(parts)
        elif row.get("object_type") == "table":
            tables.append(parts)
            if row.get("location"):
                locations[key] = row["location"]
    return Subtree(namespaces=namespaces, tables=tables, locations=locations)


def rename(ctx: Ctx, old_id: Sequence[str], new_id: Sequence[str]) -> None:
    """Move the catalog row of table ``old_id`` to ``new_id`` in one catalog commit."""
    steps = Steps()
    catalog = read_catalog(ctx)
    row = catalog.rows.get(oid(old_id))
    if row is None or row.get("object_type") != "table":
        raise error(ErrorCode.TABLE_NOT_FOUND, f"table {oid(old_id)} not found")
    missing = ids.missing_parent(new_id, catalog.namespace_exists)
    if missing:
        raise error(ErrorCode.NAMESPACE_NOT_FOUND, missing)
    if oid(new_id) in catalog.rows:
        what = "table" if catalog.rows[oid(new_id)].get("object_type") == "table" else "object"
        code = ErrorCode.TABLE_ALREADY_EXISTS
        raise error(code, f"a {what} named {oid(new_id)} already exists")
    steps("rename.catalog", f"{oid(old_id)} -> {oid(new_id)}")
    catalog_commit(ctx, [{**row, "object_id": oid(new_id)}], [oid(old_id)])
    steps("rename.committed", oid(new_id))


def drop_cascade(ctx: Ctx, namespace_id: Sequence[str]) -> Subtree:
    """Drop ``namespace_id`` with everything under it in one catalog commit, then delete the
    tables' directories (crash-safe through a drop intent). Returns what was dropped."""
    steps = Steps()
    catalog = read_catalog(ctx)
    if not catalog.namespace_exists(list(namespace_id)):
        raise error(ErrorCode.NAMESPACE_NOT_FOUND, f"namespace {oid(namespace_id)} not found")
    tree = subtree(catalog.rows, namespace_id)
    gone = [oid(namespace_id)] + [oid(n) for n in tree.namespaces] + [oid(t) for t in tree.tables]
    intent = None
    if ctx.is_file:
        refused = _not_owned(
            ctx, tree.locations, catalog.table_dirs(ctx.local_path, skip=tree.locations)
        )
        if refused:
            raise error(
                ErrorCode.INVALID_INPUT,
                f"drop_namespace: refusing to drop {oid(namespace_id)} with CASCADE: it would "
                f"delete data its tables do not own ({'; '.join(refused)}); deregister "
                f"{'that table' if len(refused) == 1 else 'those tables'} first. Nothing was "
                "dropped",
            )
        paths = [str(ctx.table_path(loc)) for loc in tree.locations.values()]
        intent = ctx.path(PENDING_DIR) / f"{DROP_PREFIX}{uuid.uuid4().hex}.json"
        intent.parent.mkdir(parents=True, exist_ok=True)
        steps("drop.intent", intent.name)
        write_atomic(intent, json.dumps({"object_ids": gone, "paths": paths}).encode())
    steps("drop.catalog", f"{len(gone)} rows")
    catalog_commit(ctx, [], gone)  # refuses a catalog that disappeared
    steps("drop.committed", oid(namespace_id))
    if intent is not None:
        finish_drop(ctx, intent, steps)
    return tree


def finish_drop(ctx: Ctx, intent: Path, steps: Steps) -> None:
    """Complete (catalog rows gone) or discard (rows still there) a drop intent."""
    try:
        data = json.loads(intent.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    if isinstance(data, dict):
        catalog = read_catalog(ctx)
        committed = not any(o in catalog.rows for o in data.get("object_ids") or [])
        if committed:
            root = ctx.path("")
            tables = TableDirs(catalog.table_dirs(ctx.local_path), root=ctx.local_path)
            for raw in data.get("paths") or []:
                path = Path(str(raw))
                if path.parent != root.resolve() and path.parent != root:
                    continue  # only table directories directly under the root
                if location_problem(root, path, other_tables=tables) or not (
                    is_table_folder(path) or not path.exists()
                ):
                    # an intent naming what no dropped table owned (a catalog table's
                    # directory, the catalog, someone's folder): written by another process
                    steps("drop.refused", path.name)
                    continue
                steps("drop.data", path.name)
                shutil.rmtree(path, ignore_errors=True)
    steps("drop.forget", intent.name)
    try:
        os.unlink(intent)
        fsync_path(intent.parent, directory=True)
    except FileNotFoundError:
        pass


def _not_owned(ctx: Ctx, locations: dict[str, str], others: list[str]) -> list[str]:
    """``"<table>: <problem>"`` for each of the tables (object id -> catalog location) whose
    directory a cascade may not delete: the location rule against the ``others`` tables."""
    assert ctx.local_path is not None
    tables = TableDirs(others, root=ctx.local_path)
    out = []
    for key, location in sorted(locations.items()):
        problem = location_problem(ctx.local_path, location, other_tables=tables)
        if problem:
            out.append(f"{key}: {problem}")
    return out


def pending_drops(ctx: Ctx) -> list[Path]:
    try:
        names = sorted(os.listdir(ctx.path(PENDING_DIR)))
    except FileNotFoundError:
        return []
    return [
        ctx.path(PENDING_DIR) / n
        for n in names
        if n.startswith(DROP_PREFIX) and n.endswith(".json")
    ]
