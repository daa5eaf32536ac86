"""Long writes never hold the namespace: an index build (and optimize, compaction) does its
work without the namespace lock, so other writers, in this process or another, go on while
it runs; a build can be cancelled and has a time limit, and a stopped build leaves no index
and no partial index directory; a writer that times out waiting for the lock is told who
holds it and for what."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from lance_namespace import CreateTableIndexRequest, CreateTableTagRequest
from lance_namespace.errors import ServiceUnavailableError

import backend
from backend.errors import OperationStopped
from backend.local.batch import lock as ns_lock
from backend.local.batch.context import context
from backend.services import build_jobs, index_overview
from backend.spec import catalog_views
from tests.support import append_rows, create_table, search_rows, table_location

PAUSE_SECONDS = 60.0  # a paused build waits at most this long for the test to let it go


def _index_dirs(ns: Any, table_id: list[str]) -> list[str]:
    found = table_location(ns, table_id) / "_indices"
    return sorted(p.name for p in found.iterdir()) if found.is_dir() else []


@pytest.fixture
def two_tables(local_root: Path) -> Any:
    ns = backend.connect(str(local_root))
    create_table(ns, ["vecs"], search_rows(600, dim=8))
    create_table(ns, ["other"], search_rows(20, dim=8))
    return ns


class _PausedBuild:
    """An IVF_PQ build of ``vecs`` in a thread, held at its first progress event until
    :meth:`go`: the build is under way for as long as the test needs."""

    def __init__(self, ns: Any):
        self.started = threading.Event()
        self.release = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None

        def progress(event: dict[str, Any]) -> None:
            self.started.set()
            self.release.wait(PAUSE_SECONDS)

        def run() -> None:
            try:
                self.result = index_overview.create_index(
                    ns,
                    CreateTableIndexRequest(
                        id=["vecs"], column="vec", index_type="IVF_PQ", num_partitions=2
                    ),
                    progress=progress,
                )
            except BaseException as exc:  # noqa: BLE001 - asserted by the test
                self.error = exc

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert self.started.wait(PAUSE_SECONDS), "the build reported no progress"

    def go(self) -> None:
        self.release.set()
        self.thread.join(PAUSE_SECONDS)
        assert not self.thread.is_alive()


def test_other_writes_go_on_while_a_build_runs(two_tables: Any) -> None:
    ns = two_tables
    build = _PausedBuild(ns)
    try:
        # in this process: a tag on another table, an append to the table being indexed
        ns.create_table_tag(CreateTableTagRequest(id=["other"], tag="during", version=1))
        append_rows(ns, ["vecs"], search_rows(10, start=600, dim=8))
        assert ns_lock.holder(context(ns)) is None  # nobody holds the lock meanwhile
    finally:
        build.go()
    assert build.error is None, build.error
    names = [i.index_name for i in index_overview.list_indexes(ns, ["vecs"])]
    assert names == ["vec_idx"]
    # lance rebased the build over the append: the index covers the rows it trained on
    assert catalog_views.latest_version(ns, ["vecs"]) == 3


@pytest.mark.slow
def test_another_process_tags_a_table_while_a_build_runs(two_tables: Any, local_root: Path) -> None:
    ns = two_tables
    build = _PausedBuild(ns)
    try:
        code = (
            "import sys, backend\n"
            "from lance_namespace import CreateTableTagRequest\n"
            "ns = backend.connect(sys.argv[1])\n"
            "ns.create_table_tag(CreateTableTagRequest(id=['other'], tag='from-child', version=1))\n"
        )
        # the lock's own timeout is 120 s: a child that had to wait for the build would fail
        # or outlive this limit; it finishes while the build is still held
        done = subprocess.run(
            [sys.executable, "-c", code, str(local_root)], capture_output=True, timeout=100
        )
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        assert build.thread.is_alive()
    finally:
        build.go()
    assert build.error is None


def test_a_cancelled_build_leaves_no_index_and_no_directory(two_tables: Any) -> None:
    ns = two_tables
    before = _index_dirs(ns, ["vecs"])
    request = CreateTableIndexRequest(
        id=["vecs"], column="vec", index_type="IVF_PQ", num_partitions=2
    )
    build = build_jobs.BuildRun.prepare(ns, request, time_limit=None)
    gate = threading.Event()
    original = build._record

    def slow_record(event: Any) -> None:  # hold the build at its first event
        original(event)
        gate.wait(PAUSE_SECONDS)

    build._record = slow_record  # type: ignore[method-assign]
    ran: list[Any] = []
    thread = threading.Thread(target=lambda: ran.append(build.run(ns, request)), daemon=True)
    thread.start()
    assert build.cancel()
    gate.set()
    thread.join(PAUSE_SECONDS)
    (job,) = ran
    assert job.status == "cancelled"
    assert isinstance(job.error, OperationStopped) and "cancelled" in str(job.error)
    assert index_overview.list_indexes(ns, ["vecs"]) == []
    assert _index_dirs(ns, ["vecs"]) == before
    assert catalog_views.latest_version(ns, ["vecs"]) == 1
    assert not build.cancel()  # finished: nothing to stop


def test_a_build_past_its_time_limit_is_stopped(two_tables: Any) -> None:
    ns = two_tables
    request = CreateTableIndexRequest(
        id=["vecs"], column="vec", index_type="IVF_PQ", num_partitions=2
    )
    job = build_jobs.BuildRun.prepare(ns, request, time_limit=1e-9).run(ns, request)
    assert job.status == "timed out"
    assert "time limit" in str(job.error)
    assert index_overview.list_indexes(ns, ["vecs"]) == []
    assert _index_dirs(ns, ["vecs"]) == []


def test_a_waiting_writer_is_told_who_holds_the_lock(two_tables: Any) -> None:
    ns = two_tables
    ctx = context(ns)
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with ns_lock.locked(ctx, "a batch commit of the test"):
            taken.set()
            release.wait(PAUSE_SECONDS)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert taken.wait(PAUSE_SECONDS)
    try:
        with pytest.raises(ServiceUnavailableError) as caught:
            ns_lock.NamespaceLock(ctx, "a tag").acquire(timeout=0.05)
        text = str(caught.value)
        assert "held by a batch commit of the test" in text
        assert f"process {__import__('os').getpid()}" in text
    finally:
        release.set()
        holder.join(PAUSE_SECONDS)
    assert ns_lock.holder(ctx) is None


def test_compaction_reports_fragments_and_bytes(two_tables: Any) -> None:
    ns = two_tables
    for i in range(3):
        append_rows(ns, ["other"], search_rows(5, start=100 + 5 * i, dim=8))
    ds = ns.open_dataset(["other"])
    fragments = len(ds.get_fragments())
    size = sum(f.file_size_bytes for fr in ds.get_fragments() for f in fr.metadata.files)
    out = ns.compact_files(["other"])
    assert out["fragments_before"] == fragments == 4
    assert out["fragments_after"] == len(ns.open_dataset(["other"]).get_fragments()) == 1
    assert out["data_bytes_before"] == size
    assert out["data_bytes_after"] > 0


@pytest.fixture
def child_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Vector builds in a child process whatever their size (the path of large builds)."""
    monkeypatch.setenv("LANCE_CONSOLE_BUILD_PROCESS", "child")


@pytest.mark.slow
def test_a_build_in_a_child_process_reports_lances_stages(
    two_tables: Any, child_builds: None
) -> None:
    ns = two_tables
    request = CreateTableIndexRequest(
        id=["vecs"], column="vec", index_type="IVF_PQ", num_partitions=2, num_sub_vectors=2
    )
    job = build_jobs.BuildRun.prepare(ns, request, time_limit=None).run(ns, request)
    assert job.status == "succeeded", job.error
    stages = [e["stage"] for e in job.events if e.get("source") == "lance log"]
    for stage in ("train_ivf", "train_quantizer", "merge_partitions"):
        assert stage in stages, stages
    quantizer = [e for e in job.events if e.get("stage") == "train_quantizer" and e["total"]]
    assert quantizer[-1]["completed"] == quantizer[-1]["total"] == 2
    (index,) = index_overview.list_indexes(ns, ["vecs"])
    assert index.index_name == "vec_idx"
    ds = ns.open_dataset(["vecs"])
    stats = ds.stats.index_stats("vec_idx")
    assert stats["indices"][0]["num_partitions"] == 2
    assert stats["num_indexed_rows"] == ds.count_rows() == 600


def test_a_cancelled_child_build_is_ended_and_leaves_nothing(
    two_tables: Any, child_builds: None
) -> None:
    ns = two_tables
    before = _index_dirs(ns, ["vecs"])
    request = CreateTableIndexRequest(
        id=["vecs"], column="vec", index_type="IVF_PQ", num_partitions=2
    )
    build = build_jobs.BuildRun.prepare(ns, request, time_limit=None)
    assert build.cancel()  # before the child's first sign of life
    job = build.run(ns, request)
    assert job.status == "cancelled"
    assert index_overview.list_indexes(ns, ["vecs"]) == []
    assert _index_dirs(ns, ["vecs"]) == before
    assert catalog_views.latest_version(ns, ["vecs"]) == 1


def test_a_failed_child_build_says_why(two_tables: Any, child_builds: None) -> None:
    ns = two_tables
    request = CreateTableIndexRequest(
        id=["vecs"], column="vec", index_type="IVF_PQ", num_partitions=2, num_sub_vectors=3
    )
    job = build_jobs.BuildRun.prepare(ns, request, time_limit=None).run(ns, request)
    assert job.status == "failed"
    assert "sub" in str(job.error).lower(), job.error  # 8 dimensions do not split in 3
    assert index_overview.list_indexes(ns, ["vecs"]) == []
    assert _index_dirs(ns, ["vecs"]) == []
