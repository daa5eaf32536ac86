"""Per-table figures of the tables list (backend.services.table_stats) on both backends,
checked against the dataset itself (lance) and the files on disk (os.walk)."""

from __future__ import annotations

import os
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import lance
import pyarrow as pa
from lance_namespace import (
    CreateNamespaceRequest,
    CreateTableRequest,
    DeclareTableRequest,
    DescribeTableRequest,
    DropTableRequest,
)

import backend
from backend import capabilities
from backend.services import table_stats as ts
from tests.support import data_bytes, ipc_stream_bytes


def _folder_bytes(location: str) -> int:
    path = location.removeprefix("file://")
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def test_figures_of_a_table_a_declared_one_and_a_missing_one(ns) -> None:
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    data = pa.table({"id": pa.array(range(40), pa.int64())})
    ns.create_table(CreateTableRequest(id=["a", "t"]), ipc_stream_bytes(data))
    location = ns.describe_table(DescribeTableRequest(id=["a", "t"])).location
    ds = lance.dataset(location)
    ds.insert(pa.table({"id": pa.array(range(40, 50), pa.int64())}))  # v2
    ds.delete("id < 5")  # v3
    ds.create_scalar_index("id", "BTREE")  # v4
    ns.declare_table(DeclareTableRequest(id=["a", "d"]))
    memo = ts.VersionMemo()

    got = ts.read_stats(ns, ["a", "t"], memo)
    ds = lance.dataset(location)
    assert got.problem is None and not got.declared
    assert got.version == ds.version == 4
    if capabilities(ns).kind == "local":
        assert got.rows == ds.count_rows() == 45
        assert got.size_bytes == _folder_bytes(location)
        assert got.indexes == len(ds.describe_indices()) == 1
        assert got.last_change == ds.versions()[-1]["timestamp"].astimezone(got.last_change.tzinfo)
        assert ts.read_stats(ns, ["a", "t"], memo) is got  # same version: read once
    else:  # the live rows (CountTableRows) and the latest version's data as pylance's server
        # counts it (GetTableStats' total_bytes: the columns' bytes on disk); its num_rows
        # (50: the deleted rows too) is not the Rows figure
        assert got.rows == ds.count_rows() == 45
        assert got.size_bytes == data_bytes(ds) > 0
        assert got.indexes == len(ds.describe_indices()) == 1  # ListTableIndices, read with
        # the health; the commit time: DescribeTableVersion's, which pylance's server takes
        # from the version's manifest file (its time to the millisecond), written as lance
        # commits (the time in the manifest itself within a few milliseconds of it)
        manifest = (
            Path(location.removeprefix("file://")) / "_versions" / f"{2**64 - 1 - 4}.manifest"
        )
        written = datetime.fromtimestamp(manifest.stat().st_mtime_ns // 10**6 / 1000, tz=UTC)
        assert got.last_change == written
        committed = ds.versions()[-1]["timestamp"].astimezone(UTC)
        assert abs(written - committed) < timedelta(milliseconds=50)
        assert ts.read_stats(ns, ["a", "t"], memo) is got  # same version: read once

    declared = ts.read_stats(ns, ["a", "d"], memo)
    assert declared.declared and declared.state == "declared only" and declared.version is None
    missing = ts.read_stats(ns, ["a", "nope"], memo)
    assert missing.state == "unreadable" and "nope" in (missing.problem or "")


def test_a_table_dropped_and_made_again_is_read_again(ns) -> None:
    """A table of the root namespace dropped and made again is written at the same place
    (``t.lance``) and starts at version 1 again: its figures are its own (they were the first
    table's: the figures were kept by location and version number alone). Counted by lance
    on the table's files."""
    memo = ts.VersionMemo()
    counted, places = [], set()
    for rows in (3, 5):
        data = pa.table({"id": pa.array(range(rows), pa.int64())})
        ns.create_table(CreateTableRequest(id=["t"]), ipc_stream_bytes(data))
        location = ns.describe_table(DescribeTableRequest(id=["t"])).location
        places.add(location)
        got = ts.read_stats(ns, ["t"], memo)
        assert got.version == lance.dataset(location).version == 1
        counted.append((got.rows, lance.dataset(location).count_rows()))
        if rows == 3:
            ns.drop_table(DropTableRequest(id=["t"]))
    assert len(places) == 1  # the same place both times
    assert counted == [(3, 3), (5, 5)]


def test_sort_puts_tables_without_the_figure_last() -> None:
    stats = {
        "a": ts.TableStats(rows=5),
        "b": ts.TableStats(rows=50),
        "c": None,  # pending
        "d": ts.TableStats(declared=True),
        "e": ts.TableStats(rows=7),
    }
    names = list(stats)
    assert ts.sort_names(names, stats, "rows") == ["a", "e", "b", "c", "d"]
    assert ts.sort_names(names, stats, "rows", descending=True) == ["b", "e", "a", "c", "d"]
    assert ts.sort_names(names, stats, "name", descending=True) == ["e", "d", "c", "b", "a"]
    frame = ts.stats_frame(names, stats)
    assert list(frame["state"]) == ["", "", ts.PENDING, "declared only", ""]
    assert str(frame["rows"].dtype) == "Int64" and frame["rows"].isna().sum() == 2


def test_sort_by_health_puts_the_worst_first() -> None:
    """Needs attention before healthy, more recommended actions first; tables without a
    verdict (pending, declared only, unreadable, unknown) last either way, by name; ties keep
    the order given."""
    attention = "needs attention"
    stats = {
        "a": ts.TableStats(health="healthy"),
        "b": ts.TableStats(health=attention, repairs=("compact",)),
        "c": None,  # pending
        "d": ts.TableStats(declared=True),
        "e": ts.TableStats(health=attention, repairs=("optimize", "compact")),
        "f": ts.TableStats(rows=3),  # health unknown
        "g": ts.TableStats(problem="gone"),
        "h": ts.TableStats(health="healthy"),
        "i": ts.TableStats(health=attention, repairs=("optimize",)),
    }
    names = list(stats)
    assert [stats["f"].verdict, stats["g"].verdict] == ["unknown", "unreadable"]  # type: ignore[union-attr]
    assert ts.sort_names(names, stats, "health") == ["e", "b", "i", "a", "h", "c", "d", "f", "g"]
    assert ts.sort_names(names, stats, "health", descending=True) == [
        "a", "h", "b", "i", "e", "c", "d", "f", "g",
    ]  # fmt: skip
    assert "health" in ts.SORTS


def test_the_sort_box_offers_every_order_both_ways_under_distinct_names() -> None:
    orders = [(by, desc) for by, desc, _ in ts.SORT_ORDERS.values()]
    assert sorted(orders) == sorted((by, desc) for by in ts.SORTS for desc in (False, True))
    labels = [label for *_, label in ts.SORT_ORDERS.values()]
    assert len(set(labels)) == len(labels)
    assert list(ts.SORT_ORDERS)[0] == "name" and ts.SORT_ORDERS["name"][:2] == ("name", False)


def test_fill_reads_in_the_background_once_per_generation(tmp_path: Path) -> None:
    reads: list[tuple[str, ...]] = []
    gate = threading.Event()

    def read(tid: tuple[str, ...]) -> ts.TableStats:
        gate.wait(5)
        reads.append(tid)
        return ts.TableStats(rows=len(tid[-1]))

    now = [0.0]
    fill = ts.StatsFill(read, max_age=60, clock=lambda: now[0])
    wanted = [(("n", "x"), 0), (("n", "yy"), 0)]
    assert fill.lookup(wanted) == {("n", "x"): None, ("n", "yy"): None}  # pending
    assert fill.pending() == 2
    gate.set()
    assert fill.wait(10)
    assert [s.rows for s in fill.lookup(wanted).values()] == [1, 2]  # type: ignore[union-attr]
    assert reads == [("n", "x"), ("n", "yy")] and fill.pending() == 0  # nothing read again
    gate.clear()  # the next read waits: the figure stays behind while it is read
    known, behind = fill.lookup_behind([(("n", "x"), 1), (("n", "yy"), 0)])
    assert known[("n", "x")] is not None  # a write's old figure: still shown...
    assert behind == [("n", "x")] == fill.behind([(("n", "x"), 1), (("n", "yy"), 0)])
    gate.set()
    assert fill.wait(10) and reads[-1] == ("n", "x") and len(reads) == 3  # ...and read again
    assert fill.behind([(("n", "x"), 1)]) == []  # now of that generation
    now[0] = 61.0  # too old: read again
    fill.lookup([(("n", "yy"), 0)])
    assert fill.wait(10) and len(reads) == 4
    assert fill.behind([(("n", "x"), 1), (("n", "zzz"), 0)]) == [("n", "zzz")]  # never read


def test_fill_reads_a_few_tables_at_once_never_one_table_twice_at_once() -> None:
    """``workers=3``: three reads in flight while six tables are queued, each table read
    once per generation; a table queued again (a write) while it is read is read again after
    that read, not beside it. The figures are those one thread reads."""
    lock = threading.Lock()
    now_reading: list[tuple[str, ...]] = []
    most = [0]
    overlaps: list[tuple[str, ...]] = []
    reads: list[tuple[str, ...]] = []
    gate = threading.Event()

    def read(tid: tuple[str, ...]) -> ts.TableStats:
        with lock:
            if tid in now_reading:
                overlaps.append(tid)
            now_reading.append(tid)
            most[0] = max(most[0], len(now_reading))
        gate.wait(5)
        with lock:
            now_reading.remove(tid)
            reads.append(tid)
        return ts.TableStats(rows=len(tid[-1]))

    names = ["a", "bb", "ccc", "dddd", "eeeee", "ffffff"]
    wanted = [(("n", name), 0) for name in names]
    fill = ts.StatsFill(read, workers=3)
    fill.lookup(wanted)
    deadline = time.monotonic() + 5
    while most[0] < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert most[0] == 3 and fill.pending() == 6  # three in flight, none done
    fill.lookup([(("n", "a"), 1)])  # "a" written while it is read: queued again
    gate.set()
    assert fill.wait(10)
    assert most[0] == 3 and overlaps == []
    assert sorted(reads) == sorted([("n", n) for n in names] + [("n", "a")])  # "a" twice
    assert fill.behind([*wanted[1:], (("n", "a"), 1)]) == []
    one = ts.StatsFill(lambda tid: ts.TableStats(rows=len(tid[-1])))
    one.lookup(wanted)
    assert one.wait(10)
    assert fill.lookup(wanted[1:]) == one.lookup(wanted[1:])


def test_a_read_that_raises_is_the_tables_problem_and_the_fill_goes_on() -> None:
    def read(tid: tuple[str, ...]) -> ts.TableStats:
        if tid[-1] == "bad":
            raise TypeError("not a table")
        return ts.TableStats(rows=1)

    for workers in (1, 2):
        fill = ts.StatsFill(read, workers=workers)
        wanted = [(("n", "bad"), 0), (("n", "ok"), 0)]
        fill.lookup(wanted)
        assert fill.wait(10)
        got = fill.lookup(wanted)
        assert got[("n", "bad")].state == "unreadable"  # type: ignore[union-attr]
        assert got[("n", "ok")].rows == 1  # type: ignore[union-attr]


EXIT_SCRIPT = """
import atexit, sys, time
import lance, pyarrow as pa
started = []
atexit.register(lambda: print("reads started", len(started), flush=True))  # runs last
from backend.services import table_stats as ts
path = sys.argv[1]
lance.write_dataset(pa.table({"id": pa.array(range(1000))}), path)
def read(tid):
    started.append(tid)
    ds = lance.dataset(path)
    end = time.monotonic() + 0.5
    while time.monotonic() < end:  # in lance most of the time
        ds.count_rows("id > 5")
    return ts.TableStats(rows=1)
fill = ts.StatsFill(read, workers=2)
fill.lookup([(("n", str(i)), 0) for i in range(20)])
while len(started) < 2:
    time.sleep(0.01)
"""


def _exits_cleanly(script: str, arg: str) -> str:
    """Run ``script`` (with ``arg``) in a Python process of its own from the repository;
    assert it exited 0 without glibc's abort message; its output."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", script, arg],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "FATAL" not in done.stderr
    return done.stdout


WATCH_SCRIPT = """
import atexit, sys, time
import pyarrow as pa
polled = []
atexit.register(lambda: print("watch alive", watch.alive, flush=True))  # runs last
import backend
from backend.services import table_watch as tw
from tests.support import create_table
ns = backend.connect(sys.argv[1])
create_table(ns, ["t"], pa.table({"id": pa.array(range(1000))}))
watch = tw.Watcher(ns, [["t"]], interval=0.0, max_seconds=600).start()
"""


def test_a_process_ending_while_a_table_watch_polls_exits_cleanly(tmp_path: Path) -> None:
    """The transaction demo's table watch, polling without a pause when the process ends: it
    is stopped and waited for (the same rule as the figures' reads), and the process exits 0."""
    root = tmp_path / "root"
    root.mkdir()
    assert "watch alive False" in _exits_cleanly(WATCH_SCRIPT, str(root))


def test_a_process_ending_while_figures_are_read_exits_cleanly(tmp_path: Path) -> None:
    """A console process that ends (Ctrl-C, a stop) while the figures are being read: the
    reads under way end, the queued ones are not started, and the process exits 0. A read
    thread still inside lance when the interpreter ends aborted the process (exit 134,
    "FATAL: exception not rethrown")."""
    out = _exits_cleanly(EXIT_SCRIPT, str(tmp_path / "t.lance"))
    started = int(out.split("reads started")[-1])
    assert 2 <= started < 20  # the queue was forgotten, not read to its end


def test_fill_workers_one_on_a_folder_a_few_over_the_network(ns, s3_root, tmp_path) -> None:
    """One thread on a local folder (the reads are this machine's work), four where they are
    round trips: REST, a local namespace on an object store (moto's S3), also behind the
    console's gate."""
    from backend.gate import Actor, GatedNamespace
    from backend.spec.fanout import IN_FLIGHT

    expected = 1 if capabilities(ns).kind == "local" else IN_FLIGHT
    assert ts.fill_workers(ns) == expected
    assert ts.fill_workers(s3_root.ns) == IN_FLIGHT
    assert ts.fill_workers(backend.connect(f"memory://{tmp_path.name}")) == 1
    gated = GatedNamespace(s3_root.ns, actor=Actor.os_user(), connection="s3")
    assert ts.fill_workers(gated) == IN_FLIGHT


def test_settle_waits_for_the_figures_asked_and_no_longer_than_told() -> None:
    """``settle``: back as soon as the figures asked for are read under their generations
    (not waiting for the rest of the queue); those still behind after the timeout."""
    gate = threading.Event()

    def read(tid: tuple[str, ...]) -> ts.TableStats:
        if tid[-1] == "slow":
            gate.wait(5)
        return ts.TableStats(rows=len(tid[-1]))

    fill = ts.StatsFill(read)
    quick, slow = (("n", "ab"), 0), (("n", "slow"), 0)
    fill.lookup([quick, slow])
    assert fill.settle([quick], timeout=5) == []
    assert fill.lookup([quick])[("n", "ab")].rows == 2  # type: ignore[union-attr]
    started = time.monotonic()
    assert fill.settle([slow, quick], timeout=0.2) == [("n", "slow")]
    assert 0.2 <= time.monotonic() - started < 4  # the timeout, not the slow read
    assert fill.settle([(("n", "ab"), 1)], timeout=0) == [("n", "ab")]  # another generation
    gate.set()
    assert fill.settle([slow], timeout=5) == []


def test_figures_a_rest_server_does_not_give_are_not_known(rest_server) -> None:
    """A server whose GetTableStats answer lacks ``total_bytes`` (the client rejects it) and
    whose CountTableRows answer has no count, and whose DescribeTableVersion gives a commit
    time beyond the calendar, played by a proxy in front of the real server: Rows, Size and
    the last change are not known (``None``, never 0), the health could not be read
    (``"unknown"``); the version is still given."""
    from tests.support import RewritingProxy

    def no_total_bytes(route: str, answer: dict) -> dict:
        answer.pop("total_bytes", None)
        return answer

    def far_future(route: str, answer: dict) -> dict:
        answer["version"]["timestamp_millis"] = 2**62  # beyond any calendar
        return answer

    proxy = RewritingProxy(
        rest_server.url,
        {
            "/stats": no_total_bytes,
            "/count_rows": lambda route, answer: {},
            "/version/describe": far_future,
        },
    )
    try:
        ns = backend.connect(proxy.url)
        ns.create_namespace(CreateNamespaceRequest(id=["a"]))
        data = pa.table({"id": pa.array(range(40), pa.int64())})
        ns.create_table(CreateTableRequest(id=["a", "t"]), ipc_stream_bytes(data))
        got = ts.read_stats(ns, ["a", "t"], ts.VersionMemo())
        assert got.problem is None and got.version == 1
        assert (got.rows, got.size_bytes, got.last_change) == (None, None, None)
        assert got.health is None and got.verdict == "unknown"
        frame = ts.stats_frame(["t"], {"t": got})
        assert frame[["rows", "size_bytes"]].isna().all(axis=None)
        assert frame.loc[0, "health"] == "unknown"
    finally:
        proxy.stop()
