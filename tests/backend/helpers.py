"""Builders shared by the backend conformance tests: small Arrow tables, IPC bytes, staging.

Everything here talks to real storage: tables are created through the namespace under test,
extra versions are written by lance itself (the way an engine writing to the table would), and a
``CreateTableVersion`` is staged exactly as a writer using namespace-managed commits does it:
data files are written next to the table's existing ones and the new version's manifest is
written to a staging path outside ``_versions``; only the namespace call makes it visible.
"""

from __future__ import annotations

import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

import lance
import numpy as np
import pyarrow as pa
from lance_namespace import (
    CreateTableRequest,
    CreateTableResponse,
    DescribeTableRequest,
    LanceNamespace,
)

U64_MAX = 2**64 - 1


def make_table(
    n: int, *, dim: int | None = None, start: int = 0, seed: int = 0, categories: int = 5
) -> pa.Table:
    """``id`` int64 (start..start+n), ``cat`` utf8 (``c0``..), ``text`` utf8, optional ``vec``."""
    ids = pa.array(range(start, start + n), pa.int64())
    columns: dict[str, pa.Array] = {
        "id": ids,
        "cat": pa.array([f"c{i % categories}" for i in range(start, start + n)]),
        "text": pa.array([f"row {i} about lance namespaces" for i in range(start, start + n)]),
    }
    if dim is not None:
        rng = np.random.default_rng(seed)
        flat = pa.array(rng.random(n * dim, dtype=np.float32))
        columns["vec"] = pa.FixedSizeListArray.from_arrays(flat, dim)
    return pa.table(columns)


def ipc_stream_bytes(table: pa.Table) -> bytes:
    """The Arrow IPC *stream* encoding that CreateTable carries as its body."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def create_table(ns: LanceNamespace, table_id: list[str], table: pa.Table) -> CreateTableResponse:
    return ns.create_table(CreateTableRequest(id=table_id), ipc_stream_bytes(table))


def local_path(location: str) -> Path:
    """A ``file://`` URI or plain path, as a local ``Path``."""
    if location.startswith("file://"):
        return Path(unquote(urlparse(location).path))
    return Path(location)


def table_location(ns: LanceNamespace, table_id: list[str]) -> Path:
    location = ns.describe_table(DescribeTableRequest(id=table_id)).location
    assert location, f"describe_table({table_id}) returned no location"
    return local_path(location)


def append_rows(ns: LanceNamespace, table_id: list[str], table: pa.Table) -> int:
    """Append ``table`` with lance directly (an engine's write); returns the new version."""
    ds = lance.write_dataset(table, str(table_location(ns, table_id)), mode="append")
    return ds.version


def with_versions(ns: LanceNamespace, table_id: list[str], count: int, rows: int = 3) -> int:
    """Create ``table_id`` with ``rows`` rows and append until it has ``count`` versions."""
    create_table(ns, table_id, make_table(rows))
    version = 1
    for i in range(1, count):
        version = append_rows(ns, table_id, make_table(rows, start=i * rows))
    assert version == count
    return version


def manifest_file(versions_dir: Path, version: int) -> Path:
    """The manifest of ``version`` in a ``_versions`` directory (V2 or V1 naming scheme)."""
    for name in (f"{U64_MAX - version:020d}.manifest", f"{version}.manifest"):
        candidate = versions_dir / name
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"no manifest for version {version} in {versions_dir}")


@dataclass(frozen=True)
class StagedVersion:
    version: int
    manifest_path: str
    manifest_size: int
    num_rows: int  # rows the table has once this version is committed


def stage_version(ns: LanceNamespace, table_id: list[str], rows: pa.Table) -> StagedVersion:
    """Stage version latest+1 of ``table_id`` = latest + ``rows`` appended, without committing.

    A scratch clone of the table (under ``<root>/_staging``) receives the append; its new data
    and transaction files are copied into the table directory, where no manifest references
    them yet, and the clone's new manifest is copied to ``<root>/_staging/<uuid>.manifest``.
    The table itself is untouched until ``CreateTableVersion`` publishes the manifest.
    """
    location = table_location(ns, table_id)
    staging = location.parent / "_staging"
    staging.mkdir(exist_ok=True)
    clone = staging / f"clone-{uuid.uuid4().hex}"
    shutil.copytree(location, clone)
    ds = lance.write_dataset(rows, str(clone), mode="append")
    for sub in ("data", "_transactions"):
        src_dir = clone / sub
        if not src_dir.is_dir():
            continue
        (location / sub).mkdir(exist_ok=True)
        for f in src_dir.iterdir():
            target = location / sub / f.name
            if not target.exists():
                shutil.copy2(f, target)
    manifest = staging / f"{uuid.uuid4().hex}.manifest"
    shutil.copy2(manifest_file(clone / "_versions", ds.version), manifest)
    num_rows = ds.count_rows()
    shutil.rmtree(clone)
    return StagedVersion(
        version=ds.version,
        manifest_path=str(manifest),
        manifest_size=manifest.stat().st_size,
        num_rows=num_rows,
    )
