"""The console and lancedb on one namespace, on file:// and on S3 (moto's server).

lancedb runs as its own process (``lancedb_app.py``, through ``lancedb.connect_namespace("dir",
...)``), without the console's lock, as another program would:

* tables lancedb makes are listed, counted and searched by the console;
* tables and batches the console makes are listed and read by lancedb;
* lancedb creates 60 tables while the console commits 20 batches of 3 declares: the console's
  catalog commit, lost to lancedb's, is judged again and retried (docs/batch-commit.md,
  "Conflicts with other writers"): (nearly) every batch lands, none is torn, none of lancedb's
  tables is lost;
* lancedb appends to a table while the console publishes staged versions of it: each console
  version lands or is refused with ``ConcurrentModificationError``, no append is lost.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pytest
from lance_namespace import (
    CountTableRowsRequest,
    CreateNamespaceRequest,
    DescribeTableRequest,
    DescribeTransactionRequest,
    ListTablesRequest,
)
from lance_namespace.errors import ConcurrentModificationError

import backend
from backend.errors import is_commit_conflict
from backend.services.search.query import DISTANCE
from backend.services.search.vector import vector_search
from backend.spec.paging import list_all
from tests.backend.lancedb_app import rows as app_rows
from tests.backend.s3_support import stage_version_s3_isolated
from tests.support import batch, create_table, op_declare, op_version, stage_version

APP = Path(__file__).with_name("lancedb_app.py")
NS = "lake"


@dataclass
class Target:
    """One namespace root both programs use."""

    kind: str  # "file" or "s3"
    root: str
    ns: Any  # the console's LocalNamespace
    storage_options: dict[str, str]
    server: Any = None  # the S3 server (s3 only)

    def stage(self, table_id: list[str], rows: Any) -> Any:
        if self.kind == "s3":
            return stage_version_s3_isolated(self.ns, self.server, table_id, rows)
        return stage_version(self.ns, table_id, rows)

    def dataset(self, table_id: list[str]) -> lance.LanceDataset:
        location = self.ns.describe_table(DescribeTableRequest(id=table_id)).location
        return lance.dataset(location, storage_options=self.storage_options or None)


@pytest.fixture(params=["file", "s3"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    if request.param == "file":
        root = tmp_path / "root"
        root.mkdir()
        t = Target("file", str(root), backend.connect(str(root)), {})
    else:
        s3_root = request.getfixturevalue("s3_root")
        t = Target("s3", s3_root.target, s3_root.ns, s3_root.server.storage_options)
        t.server = s3_root.server
    t.ns.create_namespace(CreateNamespaceRequest(id=[NS]))
    return t


def app_job(target: Target, tmp: Path, name: str, action: str, **args: Any) -> dict[str, Any]:
    job = {
        "root": target.root,
        "storage_options": target.storage_options,
        "namespace": NS,
        "action": action,
        "out": str(tmp / f"{name}.out.json"),
        **args,
    }
    path = tmp / f"{name}.job.json"
    path.write_text(json.dumps(job))
    job["path"] = str(path)
    return job


def run_app(job: dict[str, Any]) -> dict[str, Any]:
    subprocess.run([sys.executable, str(APP), job["path"]], check=True, timeout=180)
    return json.loads(Path(job["out"]).read_text())


def start_app(job: dict[str, Any]) -> subprocess.Popen[bytes]:
    """Start the writer and wait until it is connected (it then waits for ``go``)."""
    proc = subprocess.Popen([sys.executable, str(APP), job["path"]])
    deadline = time.monotonic() + 60
    while not Path(job["ready"]).exists():
        assert proc.poll() is None, "the lancedb writer died before it was ready"
        assert time.monotonic() < deadline, "the lancedb writer never got ready"
        time.sleep(0.01)
    return proc


def finish_app(proc: subprocess.Popen[bytes], job: dict[str, Any]) -> dict[str, Any]:
    assert proc.wait(timeout=180) == 0
    return json.loads(Path(job["out"]).read_text())


def console_tables(ns: Any) -> set[str]:
    """The table names of the namespace, as the console lists them (every page)."""
    return set(list_all(ns.list_tables, ListTablesRequest(id=[NS]), "tables"))


def vectors_of(table: Any) -> np.ndarray:
    return np.array(table.column("vector").to_pylist(), dtype=np.float64)


# -- each side sees the other's tables -----------------------------------------------------------
@pytest.mark.slow
def test_console_sees_and_searches_lancedb_tables(target: Target, tmp_path: Path) -> None:
    out = run_app(app_job(target, tmp_path, "make", "create", prefix="ldb", count=3, rows=6))
    assert out["created"] == ["ldb0", "ldb1", "ldb2"]
    assert console_tables(target.ns) == {"ldb0", "ldb1", "ldb2"}
    for i, name in enumerate(out["created"]):
        assert target.ns.count_table_rows(CountTableRowsRequest(id=[NS, name])).count == 6
        data = target.dataset([NS, name]).to_table()
        assert data.column("id").to_pylist() == list(range(i * 10, i * 10 + 6))
    # a vector query through the console, against a brute-force nearest neighbour
    table = [NS, "ldb1"]
    data = target.dataset(table).to_table()
    query = [12.2, 5.1, 0.2, 1.0]
    found = vector_search(
        target.ns, table, query, column="vector", k=3, distance_type="l2", columns=["id"]
    )
    distances = ((vectors_of(data) - np.array(query)) ** 2).sum(axis=1)
    expected = [data.column("id").to_pylist()[i] for i in np.argsort(distances)[:3]]
    assert found.table.column("id").to_pylist() == expected
    np.testing.assert_allclose(
        found.table.column(DISTANCE).to_numpy(), np.sort(distances)[:3], rtol=1e-5
    )


@pytest.mark.slow
def test_lancedb_sees_and_reads_console_tables(target: Target, tmp_path: Path) -> None:
    made = app_rows(100, 8)
    create_table(target.ns, [NS, "made"], made)
    resp = target.ns.batch_commit_tables(batch(op_declare([NS, "d1"]), op_declare([NS, "d2"])))
    assert resp.transaction_id.startswith("batch-")
    staged = target.stage([NS, "made"], app_rows(200, 3))
    target.ns.batch_commit_tables(batch(op_version([NS, "made"], staged)))
    query = [202.2, 6.0, 1.0, 1.0]  # nearest: row 202 (vector [202, 6, 1, 1])
    out = run_app(
        app_job(
            target,
            tmp_path,
            "read",
            "read",
            count=["made"],
            table="made",
            query=query,
            column="vector",
        )
    )
    assert out["tables"] == ["d1", "d2", "made"]
    assert out["counts"] == {"made": 11}
    every = target.dataset([NS, "made"]).to_table()
    distances = ((vectors_of(every) - np.array(query)) ** 2).sum(axis=1)
    assert out["nearest"] == every.column("id").to_pylist()[int(np.argmin(distances))]
    assert out["nearest"] == 202


# -- concurrent writers --------------------------------------------------------------------------
BATCHES, PER_BATCH, LANCEDB_TABLES = 20, 3, 60


@pytest.mark.slow
def test_batches_land_while_lancedb_creates_tables(target: Target, tmp_path: Path) -> None:
    job = app_job(
        target,
        tmp_path,
        "writer",
        "create",
        prefix="ldb",
        count=LANCEDB_TABLES,
        rows=2,
        go=str(tmp_path / "go"),
        ready=str(tmp_path / "ready"),
    )
    proc = start_app(job)
    Path(job["go"]).touch()
    landed: dict[int, str] = {}
    refused: dict[int, ConcurrentModificationError] = {}
    started = time.monotonic()
    for b in range(BATCHES):
        request = batch(*[op_declare([NS, f"c{b}_{i}"]) for i in range(PER_BATCH)])
        try:
            landed[b] = target.ns.batch_commit_tables(request).transaction_id
        except ConcurrentModificationError as e:
            refused[b] = e
    out = finish_app(proc, job)
    elapsed = time.monotonic() - started

    tables = console_tables(target.ns)
    retries = [
        int(
            target.ns.describe_transaction(DescribeTransactionRequest(id=[txn])).properties[
                "catalog_retries"
            ]
        )
        for txn in landed.values()
    ]
    print(
        f"\n[{target.kind}] batches landed {len(landed)}/{BATCHES}, refused {len(refused)}, "
        f"catalog retries min {min(retries, default=0)} max {max(retries, default=0)} "
        f"total {sum(retries)}, lancedb tables {len(out['created'])}, {elapsed:.1f} s"
    )
    for b, e in refused.items():
        print(f"  refused batch {b}: {e}")
    assert len(landed) >= BATCHES - 1
    for b in range(BATCHES):
        present = {f"c{b}_{i}" in tables for i in range(PER_BATCH)}
        assert present == {b in landed}, f"batch {b} torn or wrong: {present}"
    assert out["created"] == [f"ldb{i}" for i in range(LANCEDB_TABLES)]
    assert {f"ldb{i}" for i in range(LANCEDB_TABLES)} <= tables
    assert len(tables) == LANCEDB_TABLES + PER_BATCH * len(landed)
    # lancedb's tables are intact tables, not just catalog rows
    for i in (0, LANCEDB_TABLES // 2, LANCEDB_TABLES - 1):
        ids = target.dataset([NS, f"ldb{i}"]).to_table().column("id").to_pylist()
        assert ids == [i * 10, i * 10 + 1]


@pytest.mark.slow
def test_staged_versions_race_lancedb_appends(target: Target, tmp_path: Path) -> None:
    table = [NS, "shared"]
    create_table(target.ns, table, app_rows(0, 5))
    job = app_job(
        target,
        tmp_path,
        "appender",
        "append",
        table="shared",
        times=12,
        rows=2,
        start=1000,
        pause=0.05,
        go=str(tmp_path / "go"),
        ready=str(tmp_path / "ready"),
    )
    proc = start_app(job)
    Path(job["go"]).touch()
    landed: list[list[int]] = []
    refused: list[list[int]] = []
    for k in range(10):
        ids = list(range(5000 + 10 * k, 5000 + 10 * k + 3))
        staged = target.stage(table, app_rows(ids[0], 3))
        try:
            target.ns.batch_commit_tables(batch(op_version(table, staged)))
            landed.append(ids)
        except ConcurrentModificationError:
            refused.append(ids)
    out = finish_app(proc, job)
    # with the writer done, a staged version built on its appends lands
    ids = [7000, 7001, 7002]
    target.ns.batch_commit_tables(batch(op_version(table, target.stage(table, app_rows(7000, 3)))))
    landed.append(ids)
    final = target.dataset(table).to_table().column("id").to_pylist()
    print(
        f"\n[{target.kind}] console versions landed {len(landed)}, refused {len(refused)}; "
        f"lancedb appended {len(out['appended'])} rows; table has {len(final)} rows"
    )
    assert len(final) == len(set(final))
    assert set(out["appended"]) <= set(final)  # no append lost
    for ids in landed:
        assert set(ids) <= set(final)
    for ids in refused:
        assert not set(ids) & set(final)
    assert sorted(final) == sorted(
        list(range(5)) + out["appended"] + [i for ids in landed for i in ids]
    )


# -- the conflict predicate, on a real lost commit -----------------------------------------------
def test_is_commit_conflict_recognises_a_lost_lance_commit(tmp_path: Path) -> None:
    uri = str(tmp_path / "t.lance")
    lance.write_dataset(app_rows(0, 4), uri)
    stale = lance.dataset(uri)
    lance.write_dataset(app_rows(10, 4), uri, mode="overwrite")  # another writer's commit
    with pytest.raises(Exception) as lost:
        stale.merge_insert("id").when_matched_update_all().execute(app_rows(0, 2))
    assert is_commit_conflict(lost.value)
    assert lance.dataset(uri).to_table().column("id").to_pylist() == list(range(10, 14))
    assert not is_commit_conflict(ConcurrentModificationError("commit conflict"))
    assert not is_commit_conflict(OSError("No such file or directory"))
