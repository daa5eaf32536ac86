"""Shared by the batch-commit tests: namespace fixtures, requests, and state fingerprints.

Fingerprints compare namespaces without trusting the code under test:

* ``tree_digest(root)``: every file (sha256) and directory under ``root``, byte for byte;
* ``logical_state(root)``: what a reader of the namespace can observe, read straight from disk
  with lance: the catalog rows of ``__manifest`` (minus the random part of new locations), each
  table's directory listing with file hashes, every other file under the root. Two namespaces
  with the same logical state answer every list/describe/read identically, even when the
  ``__manifest`` dataset has more Lance versions (a rolled-back catalog commit adds two).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import lance
from lance_namespace import (
    BatchCommitTablesRequest,
    BatchDeleteTableVersionsRequest,
    CommitTableOperation,
    CreateNamespaceRequest,
    CreateTableVersionRequest,
    DeclareTableRequest,
    DeregisterTableRequest,
    LanceNamespace,
)
from lance_namespace_urllib3_client.models import VersionRange

from tests.backend.helpers import StagedVersion, make_table, stage_version, with_versions

CONSOLE = "_console"
CATALOG = "__manifest"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def tree_digest(root: Path, *, exclude: Iterable[str] = ()) -> dict[str, str]:
    """``relative path -> sha256`` for files, ``-> "<dir>"`` for directories."""
    skip = tuple(exclude)
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        for d in dirnames:
            rel = os.path.normpath(os.path.join(rel_dir, d))
            if not rel.startswith(skip) or not skip:
                out[rel + "/"] = "<dir>"
        for f in filenames:
            rel = os.path.normpath(os.path.join(rel_dir, f))
            if skip and rel.startswith(skip):
                continue
            out[rel] = sha256_file(Path(dirpath) / f)
    return out


def catalog_rows(root: Path) -> dict[str, dict[str, Any]]:
    try:
        ds = lance.dataset(str(root / CATALOG))
    except (ValueError, OSError):
        return {}
    return {r["object_id"]: r for r in ds.to_table().to_pylist()}


def logical_state(root: Path, known_dirs: Iterable[str] = ()) -> dict[str, Any]:
    """What the namespace shows (see module docstring).

    ``known_dirs``: top-level directories that existed before (their names are kept); any
    other table directory is named after its catalog row, so two runs that declared the same
    tables under different random locations compare equal.
    """
    known = set(known_dirs)
    rows = catalog_rows(root)
    rename: dict[str, str] = {}
    catalog = {}
    for oid, row in rows.items():
        loc = row.get("location")
        catalog[oid] = {
            "type": row["object_type"],
            "metadata": row.get("metadata"),
            "location": loc if (loc in known or loc is None) else "@new",
        }
        if loc and loc not in known:
            rename[loc] = f"@{oid}"
    files = {}
    for rel, digest in tree_digest(root).items():
        top = rel.split("/", 1)[0]
        if top in (CONSOLE, CATALOG) or rel.startswith((CONSOLE + "/", CATALOG + "/")):
            continue
        if top in rename:
            rel = rename[top] + rel[len(top) :]
        files[rel] = digest
    return {"catalog": catalog, "files": files}


def console_leftovers(root: Path) -> list[str]:
    """Journals and work directories a finished (or recovered) batch must not leave."""
    out = []
    for sub in ("batch/pending", "batch/work"):
        d = root / CONSOLE / sub
        if d.is_dir():
            out += [f"{sub}/{n}" for n in os.listdir(d)]
    return out


def batch_records(root: Path) -> dict[str, dict[str, Any]]:
    d = root / CONSOLE / "transactions"
    out = {}
    if d.is_dir():
        for p in d.glob("batch-*.json"):
            rec = json.loads(p.read_text())
            out[rec["txn_id"]] = rec
    return out


# -- requests ------------------------------------------------------------------------------------
def op_declare(table_id: list[str], **kw: Any) -> CommitTableOperation:
    return CommitTableOperation(declare_table=DeclareTableRequest(id=table_id, **kw))


def op_version(table_id: list[str], staged: StagedVersion, **kw: Any) -> CommitTableOperation:
    return CommitTableOperation(
        create_table_version=CreateTableVersionRequest(
            id=table_id,
            version=kw.pop("version", staged.version),
            manifest_path=kw.pop("manifest_path", staged.manifest_path),
            **kw,
        )
    )


def op_delete(table_id: list[str], *ranges: tuple[int, int]) -> CommitTableOperation:
    return CommitTableOperation(
        delete_table_versions=BatchDeleteTableVersionsRequest(
            id=table_id,
            ranges=[VersionRange(start_version=s, end_version=e) for s, e in ranges],
        )
    )


def op_deregister(table_id: list[str]) -> CommitTableOperation:
    return CommitTableOperation(deregister_table=DeregisterTableRequest(id=table_id))


def batch(*ops: CommitTableOperation) -> BatchCommitTablesRequest:
    return BatchCommitTablesRequest(operations=list(ops))


# -- a namespace to work on -------------------------------------------------------------------------
def build_namespace(ns: LanceNamespace, *, tables: int = 3, versions: int = 4) -> None:
    """Namespaces ``a`` and ``a$b``; tables ``a$t0..``, ``a$b$u0..`` (``versions`` each),
    root table ``r`` (2 versions), declared-only ``a$d`` and ``a$b$d``."""
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    ns.create_namespace(CreateNamespaceRequest(id=["a", "b"]))
    for i in range(tables):
        with_versions(ns, ["a", f"t{i}"], versions)
        with_versions(ns, ["a", "b", f"u{i}"], versions)
    with_versions(ns, ["r"], 2)
    ns.declare_table(DeclareTableRequest(id=["a", "d"]))
    ns.declare_table(DeclareTableRequest(id=["a", "b", "d"]))


def stage(
    ns: LanceNamespace, table_id: list[str], rows: int = 2, start: int = 1000
) -> StagedVersion:
    return stage_version(ns, table_id, make_table(rows, start=start))


def rebase_request(request_json: str, old_root: Path, new_root: Path) -> BatchCommitTablesRequest:
    """The same request with staged manifest paths moved from one root copy to another."""
    return BatchCommitTablesRequest.from_json(request_json.replace(str(old_root), str(new_root)))
