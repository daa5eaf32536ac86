"""kill -9 during RenameTable and DropNamespace CASCADE on the local backend: after the next
open (which recovers), the namespace is exactly as before or exactly as after, never between.

A template namespace holds ``a$t`` (2 versions) and a tree under ``top`` (child namespaces,
tables with data, a declared table) next to ``other$keep``. A counting run records the
protocol's checkpoints (``backend.local.batch``'s fault hook); the kills then land

* at every checkpoint (before the catalog commit, after it, between the data deletes), and
* at seeded random delays inside the operation (``BATCH_CRASH_SEED``), which also hit Lance's
  own commit of the catalog, between its data file and its manifest.

The state compared is ``tests.support.logical_state``: the catalog rows and every file of
every table, read straight from disk; a reader through the API must agree.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lance_namespace import CreateNamespaceRequest, DeclareTableRequest, ListTablesRequest

import backend
from tests.support import (
    ZygoteChild,
    console_leftovers,
    create_table,
    logical_state,
    make_table,
    with_versions,
)

pytestmark = pytest.mark.slow

SEED = int(os.environ.get("BATCH_CRASH_SEED", "20251130"))
TIMED_KILLS = int(os.environ.get("LIFECYCLE_CRASH_POINTS", "12"))
CHILD = Path(__file__).with_name("lifecycle_crash_child.py")


@pytest.fixture(scope="module")
def child() -> Iterator[ZygoteChild]:
    c = ZygoteChild(CHILD)
    try:
        yield c
    finally:
        c.close()


class Scenario:
    def __init__(self, base: Path, op: str, child: ZygoteChild):
        self.base, self.op, self.child = base, op, child
        self.template = base / "template"
        self.template.mkdir()
        ns = backend.connect(str(self.template))
        for n in (["a"], ["b"], ["top"], ["top", "mid"], ["top", "mid", "low"], ["other"]):
            ns.create_namespace(CreateNamespaceRequest(id=n))
        with_versions(ns, ["a", "t"], 2)
        create_table(ns, ["top", "t1"], make_table(20))
        with_versions(ns, ["top", "mid", "t2"], 3)
        ns.declare_table(DeclareTableRequest(id=["top", "mid", "low", "d"]))
        create_table(ns, ["other", "keep"], make_table(4))
        self.known = sorted(os.listdir(self.template))
        self.before = logical_state(self.template, self.known)
        self.runs = 0
        root = self.fresh("count")
        log = base / "count.log"
        assert child.run(mode="count", op=op, root=str(root), log=str(log)) == {"exit": 0}
        counted = json.loads(log.read_text())
        self.duration_ms: float = counted["ms"]  # the operation's own time
        self.calls: list[list[Any]] = counted["calls"]
        self.after = logical_state(root, self.known)
        assert self.after != self.before

    def fresh(self, name: str) -> Path:
        root = self.base / name
        shutil.copytree(self.template, root, symlinks=True)
        self.runs += 1
        return root

    def outcome(self, root: Path, where: str) -> str:
        """Open (recovers), then: exactly before or exactly after; nothing left behind."""
        ns = backend.connect(str(root))
        ns.list_tables(ListTablesRequest(id=["other"]))  # a guarded read path works
        state = logical_state(root, self.known)
        assert state in (self.before, self.after), f"{where}: neither before nor after"
        assert console_leftovers(root) == [], where
        committed = state == self.after
        if self.op == "rename":
            a = set(ns.list_tables(ListTablesRequest(id=["a"])).tables)
            b = set(ns.list_tables(ListTablesRequest(id=["b"])).tables)
            assert (a, b) == ((set(), {"moved"}) if committed else ({"t"}, set())), where
        else:
            listed = set(ns.list_tables(ListTablesRequest(id=["other"])).tables)
            assert listed == {"keep"}, where
        return "after" if committed else "before"


@pytest.fixture(scope="module", params=["rename", "cascade"])
def scenario(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, child: ZygoteChild
) -> Scenario:
    return Scenario(tmp_path_factory.mktemp(f"lifecycle-{request.param}"), request.param, child)


def test_kill_at_every_checkpoint(scenario: Scenario, child: ZygoteChild) -> None:
    phases = [phase for _, _, phase in scenario.calls]
    assert any(p.endswith(".catalog") for p in phases), phases
    commit = next(i for i, _, p in scenario.calls if p.endswith(".catalog"))
    seen = []
    for index, _step, phase in scenario.calls:
        root = scenario.fresh(f"kill-{index}")
        answer = child.run(mode="kill", op=scenario.op, root=str(root), kill_at=index)
        assert answer == {"signal": 9}, (index, phase, answer)
        where = f"killed at checkpoint {index} ({phase})"
        got = scenario.outcome(root, where)
        # Before the catalog commit nothing has happened; after it, everything has.
        assert got == ("before" if index <= commit else "after"), where
        seen.append(got)
    assert "before" in seen and "after" in seen


def test_kill_at_random_moments(scenario: Scenario, child: ZygoteChild) -> None:
    rng = random.Random(f"{SEED}-{scenario.op}")
    # Over the operation's own time as the counting run measured it, and a little after.
    span = max(scenario.duration_ms * 1.2, 5.0)
    outcomes = []
    for i in range(TIMED_KILLS):
        delay = rng.uniform(0.0, span)
        root = scenario.fresh(f"timer-{i}")
        answer = child.run(mode="timer", op=scenario.op, root=str(root), delay_ms=delay)
        assert answer in ({"signal": 9}, {"exit": 0}), answer
        outcomes.append(scenario.outcome(root, f"killed after {delay:.1f} ms"))
    assert set(outcomes) <= {"before", "after"}


def test_a_second_kill_during_recovery_still_converges(
    scenario: Scenario, child: ZygoteChild
) -> None:
    """Killed after the catalog commit (the cascade's data deletes still pending), then killed
    again while the next open recovers: a third open finishes the job."""
    last = scenario.calls[-1][0]
    root = scenario.fresh("kill-twice")
    assert child.run(mode="kill", op=scenario.op, root=str(root), kill_at=last) == {"signal": 9}
    answer = child.run(mode="timer", op="open", root=str(root), delay_ms=1.0)
    assert answer in ({"signal": 9}, {"exit": 0})
    assert scenario.outcome(root, "after a second kill") == "after"
