"""Jobs (``backend.services.jobs``): recorded in the namespace, seen with their true state by
another process, interrupted when their process dies (the table intact), cancelled from
another process, resumed (compaction), with the same results as the service called directly;
on a local root, a REST server (records in the local state directory) and an S3 root (moto).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest
from lance.optimize import Compaction
from lance_namespace import (
    InsertIntoTableRequest,
    ListTableIndicesRequest,
    ListTableVersionsRequest,
)
from lance_namespace.errors import (
    InternalError,
    InvalidInputError,
    PermissionDeniedError,
    UnsupportedOperationError,
)

import backend
from backend import access, audit
from backend.gate import Actor, gate
from backend.local.job_store import JobStore, open_job_store
from backend.services import build_jobs, jobs
from tests.support import create_table, ipc_stream_bytes, search_rows, table_location

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("jobs_child.py")
TID = ["t"]
FRAGMENTS = 8  # of ROWS_EACH rows: a compaction to 2 * ROWS_EACH rows has 4 tasks
ROWS_EACH = 10
COMPACT = {"target_rows_per_fragment": 2 * ROWS_EACH, "num_threads": 1}


@pytest.fixture(autouse=True)
def quick_heartbeats(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LANCE_CONSOLE_JOB_HEARTBEAT", "0.1")
    monkeypatch.setenv("LANCE_CONSOLE_JOBS_DIR", str(tmp_path / "state-jobs"))


def rows(start: int, n: int = ROWS_EACH) -> pa.Table:
    return search_rows(n, start=start, dim=8, seed=start)


def fragmented(ns: Any, table_id: list[str] = TID) -> pa.Table:
    """``table_id`` written in :data:`FRAGMENTS` appends; returns every row written."""
    create_table(ns, table_id, rows(0))
    for i in range(1, FRAGMENTS):
        ns.insert_into_table(
            InsertIntoTableRequest(id=table_id, mode="append"),
            ipc_stream_bytes(rows(i * ROWS_EACH)),
        )
    return pa.concat_tables([rows(i * ROWS_EACH) for i in range(FRAGMENTS)])


def content(ns: Any, table_id: list[str] = TID) -> pa.Table:
    return ns.open_dataset(table_id).to_table().sort_by("id")


def latest(ns: Any, table_id: list[str] = TID) -> int:
    listed = ns.list_table_versions(ListTableVersionsRequest(id=table_id)).versions
    return max(int(v.version) for v in listed)


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def start_child(tmp_path: Path, root: str, options: dict | None, **spec: Any) -> tuple[Any, dict]:
    """The child (``jobs_child.py``) holding a job; returns it and ``{"job", "pid"}``."""
    ready = tmp_path / f"ready-{time.monotonic_ns()}.json"
    body = {"root": root, "options": options or {}, "ready": str(ready), **spec}
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), json.dumps(body)],
        env=child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 90
    while not ready.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"the child did not get ready: {proc.stderr.read().decode()}")
        time.sleep(0.02)
    return proc, json.loads(ready.read_text())


def listed_by_another_process(root: str, options: dict | None) -> dict[str, str]:
    code = (
        "import json, sys, backend\n"
        "from backend.services import jobs\n"
        "ns = backend.connect(sys.argv[1], storage_options=json.loads(sys.argv[2]) or None)\n"
        "print(json.dumps({j.id: j.state for j in jobs.list_jobs(ns)}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, root, json.dumps(options or {})],
        env=child_env(),
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return json.loads(done.stdout.decode().strip().splitlines()[-1])


def kill(proc: Any) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)


# ---------------------------------------------------------------------------- results


def test_a_compaction_job_gives_what_lance_gives(local_root: Path) -> None:
    """A compact job's outcome equals lance's own compaction of a copy of the table: the same
    fragments, the same rows; its record says who ran it, when, and what it did."""
    ns = backend.connect(str(local_root))
    written = fragmented(ns)
    copy = local_root.parent / "copy.lance"
    shutil.copytree(table_location(ns, TID), copy)
    expected = lance.dataset(str(copy))
    expected.optimize.compact_files(**COMPACT)
    expected = lance.dataset(str(copy))

    job = jobs.wait(ns, jobs.submit(ns, "compact", TID, COMPACT).id, timeout=60)
    assert job.state == jobs.SUCCEEDED, job.error
    ds = ns.open_dataset(TID)
    assert len(ds.get_fragments()) == len(expected.get_fragments()) == FRAGMENTS // 2
    assert content(ns).equals(written.sort_by("id"))
    assert job.result["fragments_before"] == FRAGMENTS
    assert job.result["fragments_after"] == FRAGMENTS // 2
    assert job.result["tasks"] == FRAGMENTS // 2 and job.result["resumed_tasks"] == 0
    assert job.result["version_after"] == ds.version
    assert (job.kind, job.table_id, job.params) == ("compact", tuple(TID), COMPACT)
    assert job.who and job.fraction == 1.0 and job.finished_at >= job.started_at
    assert not job.has_checkpoint  # nothing to resume after a success


def test_an_index_build_job_equals_the_direct_build(ns: Any, backend_kind: str) -> None:
    """A create_index job builds what ``index_overview.create_index`` builds, on both
    backends (over REST its record lives in the console's local state directory)."""
    create_table(ns, TID, rows(0, 300))
    job = jobs.submit(ns, "create_index", TID, {"column": "id", "index_type": "BTREE"})
    assert job.label == "index build id_idx" and job.cancellable == (backend_kind == "local")
    job = jobs.wait(ns, job.id, timeout=60)
    assert job.state == jobs.SUCCEEDED, job.error
    listed = ns.list_table_indices(ListTableIndicesRequest(id=TID)).indexes
    assert [i.index_name for i in listed] == ["id_idx"]
    build = build_jobs.from_job(job)
    assert (build.status, build.index_name, build.column) == ("succeeded", "id_idx", "id")
    assert build.mode == ("events" if backend_kind == "local" else "polling")
    assert job.result["transaction_id"] == build.response.transaction_id
    store = open_job_store(ns)
    if backend_kind == "rest":
        assert str(store.location).startswith(os.environ["LANCE_CONSOLE_JOBS_DIR"])
    assert store.get(job.id)["state"] == "succeeded"


def test_a_cleanup_job_deletes_what_the_plan_lists(local_root: Path) -> None:
    from backend.services import lifecycle

    ns = backend.connect(str(local_root))
    fragmented(ns)
    plan = lifecycle.cleanup_plan(ns, TID, keep_last=3)
    where = table_location(ns, TID)
    before = {p: p.stat().st_size for p in where.rglob("*") if p.is_file()}
    job = jobs.wait(ns, jobs.submit(ns, "cleanup", TID, {"keep_last": 3}).id, timeout=60)
    assert job.state == jobs.SUCCEEDED, job.error
    assert job.result["deleted_versions"] == plan.delete and plan.delete
    gone = [p for p in before if not p.exists()]
    assert job.result["bytes_removed"] == sum(before[p] for p in gone) > 0
    assert job.result["files_removed"] == len(gone)
    left = {
        int(v.version) for v in ns.list_table_versions(ListTableVersionsRequest(id=TID)).versions
    }
    assert left == set(plan.keep)


def test_a_build_comparison_is_a_job_with_its_progress_and_rows(local_root: Path) -> None:
    """Build A/B runs as a job like every long operation: a viewer may run it (it reads the
    table and builds on a scratch copy), its stages reach the record, its rows are its
    result; bad parameters are refused before anything runs."""
    ns = backend.connect(str(local_root))
    create_table(ns, TID, search_rows(300, dim=8))
    viewer = gate(ns, actor=Actor("vi@example.com", access.VIEWER), connection="c")
    params = {"column": "vec", "configs": [{"index_type": "IVF_FLAT", "num_partitions": 2}],
              "sample_rows": 300, "queries": 3, "k": 5}  # fmt: skip
    job = jobs.wait(viewer, jobs.submit(viewer, "build_ab", TID, params).id, timeout=120)
    assert job.state == jobs.SUCCEEDED, job.error
    assert job.label == "build comparison" and job.fraction == 1.0
    (row,) = job.result
    assert 0.0 <= row["recall"] <= 1.0 and row["rows"] == 300 and "IVF_FLAT" in row["config"]
    for bad, text in (
        ({**params, "speed": 1}, "speed is not one"),
        ({**params, "configs": "IVF_FLAT"}, "list of build parameters"),
        ({**params, "k": 0}, "k is a whole number"),
        ({k: v for k, v in params.items() if k != "column"}, "vector column"),
    ):
        with pytest.raises(InvalidInputError, match=text):
            jobs.submit(viewer, "build_ab", TID, bad)
    assert len(jobs.list_jobs(ns, kinds=("build_ab",))) == 1


# ---------------------------------------------------------------------------- bad input, roles


def test_bad_requests_are_refused_and_write_no_record(local_root: Path, tmp_path: Path) -> None:
    ns = backend.connect(str(local_root))
    create_table(ns, TID, rows(0))
    log = audit.AuditLog(tmp_path / "audit")
    viewer = gate(ns, actor=Actor("vi@example.com", access.VIEWER), connection="c", log=log)
    editor = gate(ns, actor=Actor("ed@example.com", access.EDITOR), connection="c", log=log)
    cases = [
        (editor, ("nonsense", TID, {}), {}, InvalidInputError, "unknown job kind 'nonsense'"),
        (editor, ("compact", TID, {"speed": 3}), {}, InvalidInputError, "speed is not one"),
        (editor, ("compact", TID, {"num_threads": 0}), {}, InvalidInputError, "1 or more"),
        (editor, ("compact", ["t", ""], {}), {}, InvalidInputError, "empty"),
        (editor, ("optimize", TID, {"x": 1}), {}, InvalidInputError, "takes no parameters"),
        (editor, ("create_index", TID, {"column": "id"}), {}, InvalidInputError, "index type"),
        (editor, ("create_index", TID, {"column": "id", "index_type": "BTREE", "num_bits": "x"}),
         {}, InvalidInputError, "num_bits"),
        (viewer, ("compact", TID, {}), {}, PermissionDeniedError, "viewer role may not"),
        (editor, ("cleanup", TID, {"keep_last": 2}), {}, PermissionDeniedError, "admins only"),
        (editor, ("compact", TID, {}), {"executor": "ray", "ray_address": "http://head:8265"},
         InvalidInputError, "web address"),
        (editor, ("optimize", TID, {}), {"executor": "ray"}, UnsupportedOperationError,
         "runs compact, create_index jobs"),
        (editor, ("compact", TID, {}), {"executor": "moon"}, InvalidInputError,
         "unknown executor 'moon'"),
        (editor, ("compact", TID, {}), {"ray_address": "x"}, InvalidInputError,
         "takes no options"),
    ]  # fmt: skip
    for who, args, options, error, text in cases:
        with pytest.raises(error) as caught:
            jobs.submit(who, *args, **options)
        assert text in str(caught.value), (args, str(caught.value))
    admin = gate(ns, actor=Actor("ad@example.com", access.ADMIN), connection="c", log=log)
    with pytest.raises(InvalidInputError, match="keep_last must be 1 or more"):
        jobs.submit(admin, "cleanup", TID, {"keep_last": 0})
    assert jobs.list_jobs(ns) == []
    assert not (local_root / "_console" / "jobs").exists() or not list(
        (local_root / "_console" / "jobs").glob("*.json")
    )
    refused = [e for e in log.entries() if e.outcome == audit.REFUSED]
    assert len(refused) == len(cases) + 1
    nobody = gate(ns, actor=Actor("no@example.com", None), connection="c")
    with pytest.raises(PermissionDeniedError):
        jobs.list_jobs(nobody)


def test_compaction_is_refused_over_rest(rest_server: Any) -> None:
    ns = backend.connect(rest_server.url)
    create_table(ns, TID, rows(0))
    with pytest.raises(UnsupportedOperationError, match="no operation to optimize"):
        jobs.submit(ns, "compact", TID, {})
    assert jobs.list_jobs(ns) == []


def test_a_job_runs_through_the_gate_and_is_audited(local_root: Path, tmp_path: Path) -> None:
    ns = backend.connect(str(local_root))
    fragmented(ns)
    log = audit.AuditLog(tmp_path / "audit")
    editor = gate(ns, actor=Actor("ed@example.com", access.EDITOR), connection="c", log=log)
    job = jobs.wait(editor, jobs.submit(editor, "compact", TID, {}).id, timeout=60)
    assert job.state == jobs.SUCCEEDED and (job.who, job.role) == ("ed@example.com", "editor")
    started, ended = log.entries()
    assert started.operation == ended.operation == "compact_files"
    assert (started.outcome, ended.outcome) == (audit.STARTED, audit.OK)
    assert started.op_id == ended.op_id and ended.user == "ed@example.com"


def hold_builds(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Index builds started from now on wait, at their first progress report, until the
    event returned is set (at most a minute)."""
    gate_open = threading.Event()
    original = build_jobs.BuildRun._record

    def held(self: Any, event: Any) -> None:
        original(self, event)
        gate_open.wait(60)

    monkeypatch.setattr(build_jobs.BuildRun, "_record", held)
    return gate_open


def test_the_same_job_twice_at_once_is_refused(local_root: Path, monkeypatch) -> None:
    """A second build of the same index (or compaction of the same table) while one runs is
    refused, naming who runs the first; another index builds alongside."""
    ns = backend.connect(str(local_root))
    create_table(ns, TID, search_rows(600, dim=8))
    gate_open = hold_builds(monkeypatch)
    params = {"column": "vec", "index_type": "IVF_PQ", "num_partitions": 2, "name": "v"}
    first = jobs.submit(ns, "create_index", TID, params)
    try:
        with pytest.raises(Exception, match=f"already .*job {first.id}"):
            jobs.submit(ns, "create_index", TID, params)
        other = jobs.submit(ns, "create_index", TID, {"column": "id", "index_type": "BTREE"})
    finally:
        gate_open.set()
    assert jobs.wait(ns, first.id, 60).state == jobs.SUCCEEDED
    assert jobs.wait(ns, other.id, 60).state == jobs.SUCCEEDED


# ---------------------------------------------------------------------------- interrupted


def _record(state: str, **fields: Any) -> dict[str, Any]:
    now = time.time()
    return {
        "id": "x", "kind": "compact", "table_id": ["t"], "params": {}, "state": state,
        "who": "w", "created_at": now - 100, "heartbeat_at": now, **fields,
    }  # fmt: skip


def test_a_job_whose_process_is_gone_is_interrupted() -> None:
    """Same host: a pid that no longer runs, or this pid after a restart (another process
    token), is interrupted at once; another host: when its heartbeat is older than the
    stale limit; finished jobs keep their state."""
    here = {"host": jobs.HOST}
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert jobs.Job.from_record(_record("running", **here, pid=dead.pid)).state == "interrupted"
    restarted = _record("running", **here, pid=os.getpid(), process="an earlier process")
    assert jobs.Job.from_record(restarted).state == "interrupted"
    alive = _record("running", **here, pid=os.getppid(), process="p")
    assert jobs.Job.from_record(alive).state == "running"
    away = {"host": "elsewhere.example", "pid": 1}
    assert jobs.Job.from_record(_record("queued", **away)).state == "queued"
    stale = _record("running", **away, heartbeat_at=time.time() - jobs.stale_seconds() - 1)
    job = jobs.Job.from_record(stale)
    assert job.state == "interrupted" and "no sign of life" in job.interrupted
    assert "no sign of life" in str(job.exception())
    assert jobs.Job.from_record(_record("succeeded", **away, heartbeat_at=0)).state == "succeeded"


def test_a_job_that_ends_while_its_record_is_read_is_not_interrupted(
    local_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job of this process whose thread ends after its record was read (running) but
    before the reader checks for its thread reads running, as it was: never interrupted."""
    ns = backend.connect(str(local_root))
    create_table(ns, TID, search_rows(300, dim=8))
    gate_open = hold_builds(monkeypatch)
    job = jobs.submit(ns, "create_index", TID, {"column": "id", "index_type": "BTREE"})
    read = JobStore.get

    def read_then_let_it_end(self: Any, job_id: str) -> dict[str, Any] | None:
        record = read(self, job_id)
        if record is not None and record["state"] in jobs.ACTIVE and not gate_open.is_set():
            gate_open.set()
            while job_id in jobs._LIVE:  # the thread ends before the check
                time.sleep(0.01)
        return record

    monkeypatch.setattr(JobStore, "get", read_then_let_it_end)
    seen = jobs.get(ns, job.id)
    assert gate_open.is_set() and job.id not in jobs._LIVE
    assert seen.state in jobs.ACTIVE and seen.interrupted is None, seen.interrupted
    assert jobs.get(ns, job.id).state == jobs.SUCCEEDED
    assert [j.state for j in jobs.list_jobs(ns, TID)] == [jobs.SUCCEEDED]


# ---------------------------------------------------------------------------- other processes


@pytest.mark.slow
def test_a_second_process_lists_the_jobs_with_their_true_state(local_root: Path) -> None:
    ns = backend.connect(str(local_root))
    fragmented(ns)
    done = jobs.wait(ns, jobs.submit(ns, "compact", TID, {}).id, timeout=60)
    failed = jobs.wait(
        ns, jobs.submit(ns, "create_index", TID, {"column": "nope", "index_type": "BTREE"}).id
    )
    assert failed.state == jobs.FAILED and "nope" in (failed.error_text or "")
    assert listed_by_another_process(str(local_root), None) == {
        done.id: "succeeded",
        failed.id: "failed",
    }


@pytest.mark.slow
@pytest.mark.parametrize("where", ["local", "s3"])
def test_a_killed_job_is_interrupted_and_leaves_the_table_intact(
    where: str, local_root: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A compaction held after two of its four tasks, in a child process killed by pid: the
    table keeps its version and rows, the job is interrupted (for this process and a third
    one), and running it again resumes from the two tasks done: the result equals lance's
    compaction of the untouched table."""
    if where == "s3":
        s3 = request.getfixturevalue("s3_root")
        ns, root, options = s3.ns, s3.target, s3.server.storage_options
    else:
        ns, root, options = backend.connect(str(local_root)), str(local_root), None
    written = fragmented(ns)
    version = latest(ns)
    proc, held = start_child(
        tmp_path, root, options, kind="compact", table=TID, params=COMPACT, hold="compact",
        hold_at=2,
    )  # fmt: skip
    store = open_job_store(ns)
    deadline = time.monotonic() + 30
    while len(((store.get(held["job"]) or {}).get("checkpoint") or {}).get("done") or []) < 2:
        assert time.monotonic() < deadline, store.get(held["job"])
        time.sleep(0.05)
    assert jobs.get(ns, held["job"]).state == "running"
    kill(proc)
    job = jobs.get(ns, held["job"])
    assert job.state == "interrupted" and f"pid {held['pid']}" in job.interrupted
    assert job.has_checkpoint
    assert listed_by_another_process(root, options) == {job.id: "interrupted"}
    assert latest(ns) == version
    assert content(ns).equals(written.sort_by("id"))
    ns.open_dataset(TID).validate()

    again = jobs.wait(ns, jobs.rerun(ns, job.id).id, timeout=60)
    assert again.state == jobs.SUCCEEDED, again.error
    assert (again.rerun_of, again.resumed_from) == (job.id, job.id)
    assert again.result["resumed_tasks"] == 2 and again.result["tasks"] == 4
    assert again.result["resume_note"] is None
    assert len(ns.open_dataset(TID).get_fragments()) == FRAGMENTS // 2
    assert content(ns).equals(written.sort_by("id"))


@pytest.mark.slow
def test_a_build_is_cancelled_from_another_process(local_root: Path, tmp_path: Path) -> None:
    """A build held at lance's progress events in a child; this process cancels it: the
    child's job stops at the next event, nothing is committed, no index is left."""
    ns = backend.connect(str(local_root))
    create_table(ns, TID, search_rows(600, dim=8))
    version = latest(ns)
    params = {"column": "vec", "index_type": "IVF_PQ", "num_partitions": 2}
    proc, held = start_child(
        tmp_path, str(local_root), None, kind="create_index", table=TID, params=params,
        hold="build",
    )  # fmt: skip
    try:
        asked = jobs.cancel(ns, held["job"])
        assert asked.cancel_requested and asked.state == "running"
        job = jobs.wait(ns, held["job"], timeout=60)
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            kill(proc)
    assert job.state == "cancelled" and job.stopped == "cancelled"
    assert "cancelled" in (job.error_text or "")
    assert ns.list_table_indices(ListTableIndicesRequest(id=TID)).indexes == []
    assert latest(ns) == version
    with pytest.raises(InvalidInputError, match="nothing to cancel"):
        jobs.cancel(ns, job.id)


def test_a_cancelled_compaction_commits_nothing_and_resumes(local_root: Path, monkeypatch) -> None:
    """Cancelled between tasks (in this process): no new version; the next compaction of
    the table takes the tasks done over."""
    from backend.local import compaction

    ns = backend.connect(str(local_root))
    written = fragmented(ns)
    version = latest(ns)
    original = compaction.compact
    box: dict[str, Any] = {}

    def compact(ds: Any, **kwargs: Any) -> Any:
        report = kwargs["progress"]

        def progress(event: dict[str, Any]) -> None:
            if event.get("completed") == 1:
                deadline = time.monotonic() + 30
                while "job" not in box and time.monotonic() < deadline:
                    time.sleep(0.01)
                jobs.cancel(ns, box["job"])
            report(event)

        return original(ds, **{**kwargs, "progress": progress})

    monkeypatch.setattr(compaction, "compact", compact)
    job = jobs.submit(ns, "compact", TID, COMPACT)
    box["job"] = job.id
    job = jobs.wait(ns, job.id, timeout=60)
    assert job.state == "cancelled" and job.has_checkpoint
    assert latest(ns) == version
    monkeypatch.setattr(compaction, "compact", original)
    again = jobs.wait(ns, jobs.submit(ns, "compact", TID, COMPACT).id, timeout=60)
    assert again.state == jobs.SUCCEEDED and again.resumed_from == job.id
    assert again.result["resumed_tasks"] >= 1
    assert content(ns).equals(written.sort_by("id"))
    plan = Compaction.plan(ns.open_dataset(TID), COMPACT)
    assert plan.num_tasks() == 0  # nothing left to compact


def test_damaged_job_records_are_left_out_and_jobs_still_run(local_root: Path) -> None:
    """The job records are files in the namespace's folder, which other writers and tools
    reach. One that is not JSON, not an object, not UTF-8, or whose fields are of other
    types (a creation time "abc": the list's sort failed on it) was a raw ValueError or
    TypeError from the jobs list and from every new job's submit. Such records are now left
    out of the list; asked for by id, each is an error naming its problem; a new job runs."""
    ns = backend.connect(str(local_root))
    fragmented(ns)
    done = jobs.wait(ns, jobs.submit(ns, "compact", TID, COMPACT).id, timeout=60)
    folder = Path(open_job_store(ns).location.removeprefix("file://"))
    bad = {
        "job-time": json.dumps({"txn_id": "job-time", "kind": "compact", "state": "succeeded",
                                "created_at": "abc"}).encode(),
        "job-params": json.dumps({"txn_id": "job-params", "kind": "compact",
                                  "state": "succeeded", "created_at": 1.0,
                                  "params": [1]}).encode(),
        # a whole number beyond any float: OverflowError from the check of its kind
        "job-huge": b'{"txn_id": "job-huge", "kind": "compact", "state": "succeeded", '
        b'"created_at": 1' + b"0" * 400 + b"}",
        "job-list": b"[1, 2]",
        "job-cut": b'{"txn_id": "job-cut", "ki',
        "job-latin": b'{"txn_id": "job-latin", "kind": "caf\xe9", "state": "x"}',
    }  # fmt: skip
    for name, data in bad.items():
        (folder / f"{name}.json").write_bytes(data)
    assert [j.id for j in jobs.list_jobs(ns)] == [done.id]
    with pytest.raises(InternalError, match="job-time cannot be read: its created_at is not a"):
        jobs.get(ns, "job-time")
    with pytest.raises(InternalError, match="job-huge cannot be read: its created_at is not a"):
        jobs.get(ns, "job-huge")
    with pytest.raises(InternalError, match="job-params cannot be read: its params is not a"):
        jobs.get(ns, "job-params")
    with pytest.raises(InternalError, match="job-cut in .* cannot be read: it is not a JSON"):
        jobs.get(ns, "job-cut")
    again = jobs.wait(ns, jobs.submit(ns, "compact", TID, COMPACT).id, timeout=60)
    assert again.state == jobs.SUCCEEDED, again.error
    assert {j.id for j in jobs.list_jobs(ns)} == {done.id, again.id}
