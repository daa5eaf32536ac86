"""kill -9 at many points of a large batch commit: the next open shows all or nothing.

A template namespace gets a batch of 253 operations (240 DeclareTable across the root, ``a`` and
``a$b``, 5 CreateTableVersion, 4 DeleteTableVersions, 4 DeregisterTable). A counting run
records every checkpoint of the protocol (one before each file change, plus "validated");
kill points are then chosen from a fixed seed so that every phase is hit (its first and last
checkpoint, plus random ones in between). For each point a fresh copy of the template runs the
batch in a child process that SIGKILLs itself there; the test then opens the namespace with
``backend.connect`` (which recovers) and checks that

* the logical state (catalog rows, every file of every table, staging files) is exactly the
  template's (killed before the commit point) or exactly the counting run's (killed after it),
  and which one is decided by where the kill happened;
* the transaction record agrees: SUCCEEDED after the commit point, FAILED (recovered) or absent
  before it; no journal or work directory is left.

Also covered: a second kill during recovery itself, and a kill during the rollback of a batch
that failed with an I/O error. Checkpoints are counted by the protocol's fault hook
(``backend.local.batch.set_fault_hook``), not guessed from outside.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lance_namespace import BatchCommitTablesRequest, DescribeTransactionRequest, ListTablesRequest

import backend
from tests.support import (
    ZygoteChild,
    batch_records,
    build_namespace,
    console_leftovers,
    logical_state,
    op_declare,
    op_delete,
    op_deregister,
    op_version,
    stage,
)

pytestmark = pytest.mark.slow

SEED = int(os.environ.get("BATCH_CRASH_SEED", "20251130"))
KILL_POINTS = int(os.environ.get("BATCH_CRASH_POINTS", "36"))
CHILD = Path(__file__).with_name("batch_crash_child.py")


@pytest.fixture(scope="module")
def child() -> Iterator[ZygoteChild]:
    c = ZygoteChild(CHILD)
    try:
        yield c
    finally:
        c.close()


class Scenario:
    def __init__(self, base: Path):
        self.base = base
        self.template = base / "template"
        self.template.mkdir()
        ns = backend.connect(str(self.template))
        build_namespace(ns, tables=3, versions=3)
        ops = [
            op_version(["a", "t0"], stage(ns, ["a", "t0"])),
            op_version(["a", "b", "u0"], stage(ns, ["a", "b", "u0"], rows=4)),
            op_version(["r"], stage(ns, ["r"], rows=1)),
        ]
        for i in range(240):
            table_id = (
                [f"c{i}"] if i % 3 == 0 else ["a", f"c{i}"] if i % 3 == 1 else ["a", "b", f"c{i}"]
            )
            ops.append(op_declare(table_id, properties={"n": str(i)} if i % 7 == 0 else None))
            if i == 100:
                ops += [op_delete(["a", "t1"], (1, 3)), op_deregister(["a", "t2"])]
        ops += [
            op_version(["a", "t1"], stage(ns, ["a", "t1"], rows=2, start=77)),
            op_version(["a", "b", "u1"], stage(ns, ["a", "b", "u1"])),
            op_delete(["a", "b", "u2"], (1, 2), (2, 3)),
            op_delete(["a", "t0"], (2, 3)),
            op_delete(["r"], (1, 2)),
            op_deregister(["a", "b", "u2"]),
            op_deregister(["a", "d"]),
            op_deregister(["a", "b", "d"]),
        ]
        self.request = BatchCommitTablesRequest(operations=ops)
        self.request_json = self.request.to_json()
        self.known = sorted(os.listdir(self.template))
        self.before = logical_state(self.template, self.known)
        self.runs = 0
        self.calls: list[list] = []  # filled by the counting run
        self.after: dict[str, Any] = {}
        self.commit_index = 0

    def fresh(self, name: str) -> tuple[Path, Path]:
        """A copy of the template and the request rewritten to its staging paths."""
        root = self.base / name
        shutil.copytree(self.template, root, symlinks=True)
        request = self.base / f"{name}.json"
        request.write_text(self.request_json.replace(str(self.template), str(root)))
        self.runs += 1
        return root, request

    def state(self, root: Path) -> dict[str, Any]:
        # Same top-level names as the template (the copy keeps them).
        return logical_state(root, self.known)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory, child: ZygoteChild) -> Scenario:
    s = Scenario(tmp_path_factory.mktemp("batch-crash"))
    root, request = s.fresh("count")
    log = s.base / "count.log"
    assert child.run(mode="count", root=str(root), request=str(request), log=str(log)) == {
        "exit": 0
    }, log.read_text()
    s.calls = json.loads(log.read_text())["calls"]
    s.after = s.state(root)
    assert s.after != s.before
    assert len(s.after["catalog"]) == len(s.before["catalog"]) + 240 - 4
    s.commit_index = next(i for i, _, phase in s.calls if phase == "commit.record")
    return s


def check_outcome(s: Scenario, root: Path, *, committed: bool, where: str) -> str:
    ns = backend.connect(str(root))  # recovery happens here
    state = s.state(root)
    expected = s.after if committed else s.before
    assert state == expected, f"{where}: not exactly {'after' if committed else 'before'}"
    assert console_leftovers(root) == [], where
    records = batch_records(root)
    if committed:
        assert [r["status"] for r in records.values()] == ["SUCCEEDED"], where
    else:
        assert [r["status"] for r in records.values()] in ([], ["FAILED"]), where
    for txn in records:
        described = ns.describe_transaction(DescribeTransactionRequest(id=[txn]))
        assert described.status == records[txn]["status"], where
    # A reader through the API agrees with the files.
    listed = set(ns.list_tables(ListTablesRequest(id=["a", "b"])).tables)
    in_catalog = {
        oid.split("$")[2]
        for oid, r in expected["catalog"].items()
        if r["type"] == "table" and oid.startswith("a$b$")
    }
    assert listed == in_catalog, where
    return "after" if committed else "before"


def choose_points(calls: list[list], count: int, seed: int) -> list[int]:
    """First and last checkpoint of every phase, then seeded random ones taken round-robin
    across phases (so that the few version/delete checkpoints are not drowned by the
    hundreds of declare ones), ``count`` in all."""
    by_phase: dict[str, list[int]] = defaultdict(list)
    for index, _step, phase in calls:
        by_phase[phase].append(index)
    chosen: set[int] = set()
    for indexes in by_phase.values():
        chosen.update({indexes[0], indexes[-1]})
    rng = random.Random(seed)
    pools = {p: [i for i in ix if i not in chosen] for p, ix in sorted(by_phase.items())}
    for pool in pools.values():
        rng.shuffle(pool)
    while len(chosen) < count and any(pools.values()):
        for pool in pools.values():
            if pool and len(chosen) < count:
                chosen.add(pool.pop())
    return sorted(chosen)


def test_kill_at_every_phase(scenario: Scenario, child: ZygoteChild) -> None:
    s = scenario
    phases = {phase for _, _, phase in s.calls}
    assert {
        "validated",
        "begin.journal",
        "begin.record",
        "apply.declare.mkdir",
        "apply.declare.reserve",
        "apply.version.stage",
        "apply.version.link",
        "apply.delete.hide",
        "apply.catalog",
        "commit.record",
        "cleanup.staged",
        "cleanup.work",
        "cleanup.journal",
    } <= phases
    points = choose_points(s.calls, KILL_POINTS, SEED)
    assert len(points) >= 30
    phase_of = {i: phase for i, _, phase in s.calls}
    outcomes: dict[str, list[str]] = defaultdict(list)
    for k in points:
        root, request = s.fresh(f"kill-{k}")
        got = child.run(mode="kill", root=str(root), request=str(request), kill_at=k)
        assert got == {"signal": 9}, f"kill at {k} ({phase_of[k]}): {got}"
        committed = k > s.commit_index
        outcomes[phase_of[k]].append(
            check_outcome(s, root, committed=committed, where=f"kill at {k} ({phase_of[k]})")
        )
        shutil.rmtree(root)
    print(f"\nbatch crash: {len(points)} kill points (seed {SEED}) over {len(s.calls)} checkpoints")
    for phase, got in sorted(outcomes.items()):
        print(f"  {phase:24s} {len(got):3d} kills -> {sorted(set(got))}")
    assert {"before", "after"} == {o for got in outcomes.values() for o in got}


def test_kill_during_recovery(scenario: Scenario, child: ZygoteChild) -> None:
    """Killed mid-batch, then killed again while the next open rolls back (or finishes)."""
    s = scenario
    by_phase: dict[str, list[int]] = defaultdict(list)
    for i, _, phase in s.calls:
        by_phase[phase].append(i)
    cases = [
        (by_phase["apply.catalog"][0], 2),  # catalog not yet committed
        (by_phase["commit.record"][0], 3),  # catalog committed, record RUNNING
        (by_phase["apply.delete.hide"][-1], 5),
        (by_phase["cleanup.work"][0], 1),  # committed; recovery only finishes the clean-up
        (by_phase["cleanup.journal"][0], 1),
    ]
    for first, second in cases:
        root, request = s.fresh(f"rekill-{first}-{second}")
        assert child.run(mode="kill", root=str(root), request=str(request), kill_at=first) == {
            "signal": 9
        }
        got = child.run(mode="open", root=str(root), kill_at=second)
        assert got in ({"signal": 9}, {"exit": 0}), got
        check_outcome(
            s, root, committed=first > s.commit_index, where=f"kill at {first}, then {second}"
        )
        shutil.rmtree(root)


def test_kill_during_rollback_of_a_failed_batch(scenario: Scenario, child: ZygoteChild) -> None:
    """An I/O error starts the rollback; a kill interrupts it; the next open completes it."""
    s = scenario
    by_phase: dict[str, list[int]] = defaultdict(list)
    for i, _, phase in s.calls:
        by_phase[phase].append(i)
    for fail_phase, undo_kill in (
        ("apply.catalog", 3),
        ("commit.record", 4),
        ("apply.delete.hide", 2),
        ("apply.version.link", 1),
    ):
        fail_at = by_phase[fail_phase][-1]
        root, request = s.fresh(f"undo-{fail_at}")
        got = child.run(
            mode="fail_then_kill",
            root=str(root),
            request=str(request),
            fail_at=fail_at,
            kill_at=fail_at + undo_kill,
        )
        assert got == {"signal": 9}, f"{fail_phase}: {got}"
        check_outcome(s, root, committed=False, where=f"rollback from {fail_phase} killed")
        shutil.rmtree(root)
    print(f"\nbatch crash: {s.runs} namespace copies run in this module")


def test_a_journal_the_console_did_not_write_is_left_as_it_is(tmp_path: Path) -> None:
    """Recovery acts only on a journal it can read and whose every path is below the root.
    A journal written by hand into ``_console/batch/pending`` naming files elsewhere (it asked
    to remove one and to move another over a third) changes nothing outside the root, and no
    FAILED record is made for it; a journal of another format is not deleted either. Both are
    left where they are."""
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    elsewhere.mkdir()
    victims = {name: elsewhere / name for name in ("important.txt", "secret.txt")}
    for name, path in victims.items():
        path.write_text(name)
    backend.connect(str(root), audit=False)  # the namespace, with its _console folder
    txn = "batch-0000000000000000000000000000dead"
    forged = {
        "format": 1, "txn_id": txn, "record": {"kind": "batch", "properties": {}},
        "declares": [], "deregisters": [],
        "versions": [{
            "index": 0, "id": ["x"], "object_id": "x", "version": 1, "naming_scheme": "V2",
            "manifest_path": "/nowhere", "final": str(root / "x" / "final"),
            "alt_tmp": str(victims["important.txt"]),
        }],
        "deletes": [{
            "index": 0, "id": ["x"], "object_id": "x", "ranges": [], "deleted_count": 0,
            "moves": [{"version": 1, "src": str(elsewhere / "moved.txt"),
                       "trash": str(victims["secret.txt"])}],
        }],
    }  # fmt: skip
    pending = root / "_console" / "batch" / "pending"
    pending.mkdir(parents=True, exist_ok=True)
    (pending / f"{txn}.json").write_text(json.dumps(forged))
    (pending / "batch-newer.json").write_text(json.dumps({"format": 99, "txn_id": "b"}))
    ns = backend.connect(str(root), audit=False)  # recovery runs as a namespace opens
    ns.list_tables(ListTablesRequest(id=[]))
    assert sorted(p.name for p in elsewhere.iterdir()) == ["important.txt", "secret.txt"]
    assert {n: p.read_text() for n, p in victims.items()} == {n: n for n in victims}
    assert {p.name for p in pending.iterdir()} == {"batch-newer.json", f"{txn}.json"}
    assert not (root / "_console" / "transactions" / f"{txn}.json").exists()
