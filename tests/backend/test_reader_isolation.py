"""Reader isolation on the local backend: reads through the namespace at "latest"
(DescribeTable, ListTableVersions, CountTableRows, QueryTable) resolve to the last committed
state while a batch applies, until its commit point; then to all of it at once.

The batch is held right before its commit point (a fault hook on its commit step) while another
namespace object reads; the 50-publish test runs the reader in its own process, polling three
tables while batches publish a different number of rows in each.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest
from lance_namespace import (
    CountTableRowsRequest,
    CreateNamespaceRequest,
    DescribeTableRequest,
    ListTableVersionsRequest,
    QueryTableRequest,
)
from lance_namespace.errors import TableNotFoundError

import backend
from backend.local import batch
from backend.rules import version_ranges
from backend.services import batch_builder as bb
from backend.services import table_watch
from tests.support import create_table

TABLES = [["lake", f"t{i}"] for i in range(3)]
START_ROWS = 5
CHILD = Path(__file__).with_name("reader_poll_child.py")


def rows(start: int, n: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64())})


def make_tables(ns: Any) -> None:
    ns.create_namespace(CreateNamespaceRequest(id=["lake"]))
    for t in TABLES:
        create_table(ns, t, rows(0, START_ROWS))


def seen(ns: Any, table_id: list[str]) -> dict[str, Any]:
    """Every read at "latest" the namespace offers, for one table."""
    desc = ns.describe_table(DescribeTableRequest(id=table_id, load_detailed_metadata=True))
    query = ns.query_table_arrow(QueryTableRequest(id=table_id, k=1000, vector={}))
    return {
        "version": desc.version,
        "count": ns.count_table_rows(CountTableRowsRequest(id=table_id)).count,
        "queried": query.num_rows,
        "versions": [
            v.version
            for v in ns.list_table_versions(ListTableVersionsRequest(id=table_id)).versions
        ],
    }


class Held:
    """A batch committing in a thread, held right before its commit point."""

    def __init__(self, ns: Any, operations: list[dict[str, Any]]) -> None:
        self.reached = threading.Event()
        self.release = threading.Event()
        self.error: BaseException | None = None

        def hook(step: int, phase: str, detail: str) -> None:
            if phase in ("commit.record", "commit.decide"):
                self.reached.set()
                assert self.release.wait(60)

        batch.set_fault_hook(hook)

        def run() -> None:
            try:
                bb.commit(ns, operations)
            except BaseException as exc:  # noqa: BLE001 - reported by finish()
                self.error = exc

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert self.reached.wait(60), "the batch never reached its commit point"

    def finish(self) -> None:
        self.release.set()
        self.thread.join(60)
        batch.set_fault_hook(None)
        if self.error is not None:
            raise self.error


@pytest.fixture
def held_batch() -> Iterator[list[Held]]:
    made: list[Held] = []
    yield made
    for h in made:
        h.release.set()
    batch.set_fault_hook(None)


@pytest.fixture(params=["file", "s3"])
def namespaces(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Any, Any]:
    """A writer's namespace and an independent reader's, on one root."""
    if request.param == "file":
        root = tmp_path / "root"
        root.mkdir()
        return backend.connect(str(root)), backend.connect(str(root))
    s3 = request.getfixturevalue("s3_root")
    return s3.ns, backend.connect(s3.target, storage_options=s3.server.storage_options)


def test_a_batch_in_flight_is_invisible_until_its_commit_point(
    namespaces: tuple[Any, Any], held_batch: list[Held]
) -> None:
    writer, reader = namespaces
    make_tables(writer)
    # t0 gets a second version, so that the batch can delete its first one
    bb.commit(writer, [bb.staged_op(bb.stage_change(writer, TABLES[0], append=rows(50, 1)))])
    staged = [bb.stage_change(writer, t, append=rows(100, i + 1)) for i, t in enumerate(TABLES)]
    operations = [bb.staged_op(s) for s in staged]
    operations.append(bb.delete_versions_op(TABLES[0], version_ranges.parse("1")))
    operations.append(bb.declare_op(["lake", "fresh"]))
    before = {tuple(t): seen(reader, t) for t in TABLES}
    assert before[tuple(TABLES[0])]["versions"] == [1, 2]
    held = Held(writer, operations)
    held_batch.append(held)
    # every change of the batch is on disk now: a reader opening the files sees them...
    location = reader.describe_table(DescribeTableRequest(id=TABLES[1])).location
    direct = lance.dataset(location, storage_options=reader.storage_options or None)
    assert direct.version == 2 and direct.count_rows() == START_ROWS + 2
    # ... readers through the namespace do not
    assert {tuple(t): seen(reader, t) for t in TABLES} == before
    poll = table_watch.poll(reader, TABLES)
    assert poll.consistent and poll.isolated
    assert poll.versions == {tuple(t): before[tuple(t)]["version"] for t in TABLES}
    with pytest.raises(TableNotFoundError, match="batch in flight"):
        reader.describe_table(
            DescribeTableRequest(id=["lake", "fresh"], load_detailed_metadata=True)
        )
    held.finish()
    after = {tuple(t): seen(reader, t) for t in TABLES}
    for i, t in enumerate(TABLES):
        old = before[tuple(t)]
        new = after[tuple(t)]
        assert new["version"] == old["version"] + 1
        assert new["count"] == new["queried"] == old["count"] + i + 1
    assert after[tuple(TABLES[0])]["versions"] == [2, 3]


# -- an independent reader process during 50 publishes --------------------------------------------
PUBLISHES = 50


def expected_rows(table: int, version: int) -> int:
    """Publish k adds (table + 1) * k rows to table ``table``: its rows at version 1 + k."""
    k = version - 1
    return START_ROWS + (table + 1) * k * (k + 1) // 2


@pytest.mark.slow
def test_an_independent_reader_never_sees_a_mixed_state(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    ns = backend.connect(str(root))
    make_tables(ns)
    out, stop = tmp_path / "polls.jsonl", tmp_path / "stop"
    job = {"root": str(root), "tables": TABLES, "out": str(out), "stop": str(stop)}
    reader = subprocess.Popen(
        [sys.executable, str(CHILD)], stdin=subprocess.PIPE, text=True, cwd=str(tmp_path)
    )
    assert reader.stdin is not None
    reader.stdin.write(json.dumps(job))
    reader.stdin.close()

    def slow_apply(step: int, phase: str, detail: str) -> None:
        """Each batch applies slowly: a pause after each table's new version is linked and
        before the commit point, so that readers poll while batches are half-applied."""
        if phase in ("apply.version.link", "commit.record"):
            time.sleep(0.02)

    batch.set_fault_hook(slow_apply)
    try:
        deadline = time.monotonic() + 60
        while not (out.exists() and out.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        next_id = 1000
        for k in range(1, PUBLISHES + 1):
            staged = []
            for i, t in enumerate(TABLES):
                staged.append(bb.stage_change(ns, t, append=rows(next_id, (i + 1) * k)))
                next_id += (i + 1) * k
            bb.commit(ns, [bb.staged_op(s) for s in staged])
        time.sleep(0.3)  # a few polls of the final state
    finally:
        batch.set_fault_hook(None)
        stop.touch()
        reader.wait(60)
    assert reader.returncode == 0
    polls = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    mixed = []
    direct_mixed = 0
    states = set()
    for p in polls:
        versions, counts = p["ns"]["versions"], p["ns"]["rows"]
        state = tuple(versions)
        states.add(state)
        same_batch = len(set(versions)) == 1
        counts_match = all(counts[i] == expected_rows(i, versions[i]) for i in range(len(TABLES)))
        if not (same_batch and counts_match and p["ns"]["consistent"]):
            mixed.append(p)
        direct_versions = [v for v, _ in p["direct"]]
        if len(set(direct_versions)) != 1:
            direct_mixed += 1
    final = ns.open_dataset(TABLES[0]).version
    print(
        f"\nreader process: {len(polls)} polls through the namespace during {PUBLISHES} "
        f"publishes of {len(TABLES)} tables, {len(states)} distinct states seen, "
        f"{len(mixed)} mixed; a direct reader (lance.dataset) saw {direct_mixed} mixed"
    )
    assert final == 1 + PUBLISHES
    assert len(polls) >= PUBLISHES  # the reader polled throughout
    assert len(states) >= 10  # it saw the tables move, many times
    assert mixed == []
