"""Processes racing batch commits and single operations on one local namespace.

Each racer is a separate Python process (batch_race_child.py) with its own LocalNamespace.
Races are made deterministic with the protocol's fault hook: a racer can stop at a named point
("validated": checked, lock not taken yet; "apply.catalog": lock held, changes half made) until
the test says go, and can drop a marker when it reaches a point ("guard.wait": a single
operation found the lock busy). One free-running race (no barrier) checks for lost updates.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import lance
import pytest
from lance_namespace import BatchCommitTablesRequest, ListTablesRequest, ListTableVersionsRequest

import backend
from tests.support import (
    batch_records,
    build_namespace,
    console_leftovers,
    op_declare,
    op_delete,
    op_version,
    stage,
    table_location,
)

pytestmark = pytest.mark.slow

CHILD = Path(__file__).with_name("batch_race_child.py")
TIMEOUT = 180.0


@pytest.fixture
def setup(tmp_path: Path):
    root = tmp_path / "ns"
    root.mkdir()
    ns = backend.connect(str(root))
    build_namespace(ns, tables=3, versions=4)
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    return root, ns, barrier


def start(root: Path, barrier: Path, name: str, **job: Any) -> subprocess.Popen:
    spec = {"root": str(root), "name": name, "barrier": str(barrier), **job}
    if "batch" in spec and isinstance(spec["batch"], BatchCommitTablesRequest):
        path = barrier / f"request-{name}.json"
        path.write_text(spec["batch"].to_json())
        spec["batch"] = str(path)
    job_file = barrier / f"job-{name}.json"
    job_file.write_text(json.dumps(spec))
    return subprocess.Popen([sys.executable, str(CHILD), str(job_file)], cwd=str(CHILD.parents[2]))


def wait_for(*paths: Path) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not all(p.exists() for p in paths):
        assert time.monotonic() < deadline, f"timed out waiting for {paths}"
        time.sleep(0.02)


def finish(barrier: Path, procs: dict[str, subprocess.Popen]) -> dict[str, dict[str, Any]]:
    results = {}
    for name, proc in procs.items():
        assert proc.wait(timeout=TIMEOUT) == 0, f"racer {name} crashed"
        results[name] = json.loads((barrier / f"result-{name}.json").read_text())
    return results


def versions_of(ns, table_id: list[str]) -> list[int]:
    resp = ns.list_table_versions(ListTableVersionsRequest(id=table_id))
    return sorted(v.version for v in resp.versions)


def tables_in(ns, ns_id: list[str]) -> set[str]:
    return set(ns.list_tables(ListTablesRequest(id=ns_id)).tables)


def rows_at(ns, table_id: list[str], version: int) -> int:
    return lance.dataset(str(table_location(ns, table_id)), version=version).count_rows()


def test_same_table_exactly_one_wins(setup) -> None:
    root, ns, barrier = setup
    names = ["p0", "p1", "p2"]
    staged = {
        n: stage(ns, ["a", "t0"], rows=i + 1, start=100 * (i + 1)) for i, n in enumerate(names)
    }
    procs = {}
    for n in names:
        ops = [op_declare(["a", f"{n}_{i}"]) for i in range(20)]
        ops += [op_version(["a", "t0"], staged[n]), op_delete(["a", "t1"], (1, 2))]
        procs[n] = start(
            root, barrier, n, batch=BatchCommitTablesRequest(operations=ops), pause_at="validated"
        )
    wait_for(*(barrier / f"ready-{n}" for n in names))  # all validated against the same state
    (barrier / "go").touch()
    results = finish(barrier, procs)

    winners = [n for n, r in results.items() if r["ok"]]
    assert len(winners) == 1, results
    (winner,) = winners
    for n, r in results.items():
        if n != winner:
            assert r["error"] == "ConcurrentModificationError", r
    assert versions_of(ns, ["a", "t0"]) == [1, 2, 3, 4, 5]
    assert rows_at(ns, ["a", "t0"], 5) == 12 + names.index(winner) + 1  # the winner's rows
    assert versions_of(ns, ["a", "t1"]) == [2, 3, 4]
    declared = {t for t in tables_in(ns, ["a"]) if "_" in t}
    assert declared == {f"{winner}_{i}" for i in range(20)}
    for n in names:  # losers keep their staging; the winner's was consumed
        assert Path(staged[n].manifest_path).exists() == (n != winner)
    statuses = sorted(r["status"] for r in batch_records(root).values())
    assert statuses == ["FAILED", "FAILED", "SUCCEEDED"]
    assert console_leftovers(root) == []


def test_disjoint_batches_all_win(setup) -> None:
    root, ns, barrier = setup
    names = ["q0", "q1", "q2"]
    procs = {}
    for i, n in enumerate(names):
        ops = [op_declare(["a", "b", f"{n}_{j}"]) for j in range(20)]
        ops += [
            op_version(["a", f"t{i}"], stage(ns, ["a", f"t{i}"], rows=i + 1)),
            op_delete(["a", "b", f"u{i}"], (1, 3)),
        ]
        procs[n] = start(
            root, barrier, n, batch=BatchCommitTablesRequest(operations=ops), pause_at="validated"
        )
    wait_for(*(barrier / f"ready-{n}" for n in names))
    (barrier / "go").touch()
    results = finish(barrier, procs)

    assert all(r["ok"] for r in results.values()), results
    for i, n in enumerate(names):
        assert versions_of(ns, ["a", f"t{i}"]) == [1, 2, 3, 4, 5]
        assert rows_at(ns, ["a", f"t{i}"], 5) == 12 + i + 1
        assert versions_of(ns, ["a", "b", f"u{i}"]) == [3, 4]
        assert {f"{n}_{j}" for j in range(20)} <= tables_in(ns, ["a", "b"])
    assert sorted(r["status"] for r in batch_records(root).values()) == ["SUCCEEDED"] * 3


def test_single_op_first_then_batch_fails(setup) -> None:
    """The batch validated, then a single operation changed its table: the batch applies nothing."""
    root, ns, barrier = setup
    ops = [op_declare(["a", "x"]), op_version(["a", "t0"], stage(ns, ["a", "t0"], rows=3))]
    proc = start(
        root, barrier, "b", batch=BatchCommitTablesRequest(operations=ops), pause_at="validated"
    )
    wait_for(barrier / "ready-b")
    single = stage(ns, ["a", "t0"], rows=1)
    ns.create_table_version(
        {"id": ["a", "t0"], "version": 5, "manifest_path": single.manifest_path}
    )
    (barrier / "go").touch()
    (result,) = finish(barrier, {"b": proc}).values()

    assert result["error"] == "ConcurrentModificationError", result
    assert "x" not in tables_in(ns, ["a"])
    assert versions_of(ns, ["a", "t0"]) == [1, 2, 3, 4, 5]
    assert rows_at(ns, ["a", "t0"], 5) == 13  # the single operation's version
    (rec,) = batch_records(root).values()
    assert rec["status"] == "FAILED"


@pytest.mark.parametrize("same_table", [True, False], ids=["same-table", "other-table"])
def test_single_op_waiting_on_a_batch(setup, same_table: bool) -> None:
    """The batch holds the lock mid-apply; a single operation arrives and waits for it."""
    root, ns, barrier = setup
    ops = [op_declare(["a", "x"]), op_version(["a", "t0"], stage(ns, ["a", "t0"], rows=3))]
    target = ["a", "t0"] if same_table else ["a", "t1"]
    single = stage(ns, target, rows=1)
    batch_proc = start(
        root, barrier, "b", batch=BatchCommitTablesRequest(operations=ops), pause_at="apply.catalog"
    )
    wait_for(barrier / "ready-b")  # lock held, version 5 of t0 already linked, catalog not yet
    single_proc = start(
        root,
        barrier,
        "s",
        single={
            "method": "create_table_version",
            "request": {"id": target, "version": 5, "manifest_path": single.manifest_path},
        },
        mark_at="guard.wait",
    )
    wait_for(barrier / "guard.wait-s")  # the single operation is blocked on the lock
    (barrier / "go").touch()
    results = finish(barrier, {"b": batch_proc, "s": single_proc})

    assert results["b"]["ok"], results
    assert "x" in tables_in(ns, ["a"])
    assert rows_at(ns, ["a", "t0"], 5) == 15  # the batch's version
    if same_table:
        assert results["s"]["error"] == "ConcurrentModificationError", results
        assert versions_of(ns, ["a", "t0"]) == [1, 2, 3, 4, 5]
        assert Path(single.manifest_path).exists()  # nothing of it was applied
    else:
        assert results["s"]["ok"], results
        assert versions_of(ns, ["a", "t1"]) == [1, 2, 3, 4, 5]
        assert rows_at(ns, ["a", "t1"], 5) == 13


def test_no_lost_updates_free_running(setup) -> None:
    """Three processes keep committing version latest+1 of one table, retrying on conflict."""
    root, ns, barrier = setup
    script = barrier / "loop.py"
    script.write_text(
        f"""
import json, sys
sys.path.insert(0, {str(CHILD.parents[2])!r})
import backend
from lance_namespace import BatchCommitTablesRequest, ListTableVersionsRequest
from lance_namespace.errors import ConcurrentModificationError
from tests.support import op_declare, op_version, stage
name, wins, tries, conflicts = sys.argv[1], [], 0, 0
ns = backend.connect({str(root)!r})
while len(wins) < 2 and tries < 40:
    tries += 1
    staged = stage(ns, ["a", "t0"], rows=1, start=tries)
    ops = [op_version(["a", "t0"], staged), op_declare(["a", f"{{name}}_{{tries}}"])]
    try:
        ns.batch_commit_tables(BatchCommitTablesRequest(operations=ops))
        wins.append([staged.version, f"{{name}}_{{tries}}"])
    except ConcurrentModificationError:
        conflicts += 1
print(json.dumps({{"wins": wins, "conflicts": conflicts}}))
"""
    )
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), f"w{i}"],
            stdout=subprocess.PIPE,
            text=True,
            cwd=str(CHILD.parents[2]),
        )
        for i in range(3)
    ]
    outs = [json.loads(p.communicate(timeout=TIMEOUT)[0]) for p in procs]
    wins = [w for o in outs for w in o["wins"]]
    assert len(wins) == 6, outs
    # Every successful commit is a distinct version; none was lost or overwritten.
    assert sorted(v for v, _ in wins) == list(range(5, 11))
    assert versions_of(ns, ["a", "t0"]) == list(range(1, 11))
    assert rows_at(ns, ["a", "t0"], 10) == 12 + 6
    assert {t for _, t in wins} <= tables_in(ns, ["a"])
    declared = {t for t in tables_in(ns, ["a"]) if t.startswith("w")}
    assert declared == {t for _, t in wins}  # a losing attempt declared nothing
    statuses = [r["status"] for r in batch_records(root).values()]
    assert statuses.count("SUCCEEDED") == 6
    assert statuses.count("FAILED") <= sum(o["conflicts"] for o in outs)
    assert console_leftovers(root) == []
