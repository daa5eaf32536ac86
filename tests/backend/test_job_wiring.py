"""Jobs wired to the maintenance plans, the branches and the Ray executor
(``backend.services.jobs``): a plan run as one job is listed by a second process with its true
state and per-table results, and a cancel stops it between tables; a job on a branch records
the branch, a second process runs it again on that branch, and duplicates are per branch; the
Ray executor refuses a branch (nothing done), records a job whose address does not answer as
failed, and compacts with the rows of the local executor (a local Ray, ``slow``). Figures are
checked against lance and pyarrow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from lance_namespace import InsertIntoTableRequest
from lance_namespace.errors import (
    ConcurrentModificationError,
    UnsupportedOperationError,
)

import backend
from backend import access, audit
from backend.branch_view import on_branch
from backend.gate import Actor, gate
from backend.local.job_store import open_job_store
from backend.services import branches, jobs, ray_executor
from backend.services import maintenance as mt
from backend.services.maintenance import planning
from tests.support import create_table, free_port, ipc_stream_bytes, table_location

ROOT = Path(__file__).resolve().parents[2]
FRAGMENTS = 6
ROWS_EACH = 20


@pytest.fixture(autouse=True)
def quick_heartbeats(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LANCE_CONSOLE_JOB_HEARTBEAT", "0.1")
    monkeypatch.setenv("LANCE_CONSOLE_JOBS_DIR", str(tmp_path / "state-jobs"))


def rows(start: int, n: int = ROWS_EACH) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "word": [f"w{i % 7}" for i in range(start, start + n)],
        }
    )


def append(ns: Any, tid: list[str], data: pa.Table) -> None:
    ns.insert_into_table(InsertIntoTableRequest(id=tid, mode="append"), ipc_stream_bytes(data))


def fragmented(ns: Any, tid: list[str], fragments: int = FRAGMENTS) -> pa.Table:
    """``tid`` written in ``fragments`` appends; every row written."""
    create_table(ns, tid, rows(0))
    for i in range(1, fragments):
        append(ns, tid, rows(i * ROWS_EACH))
    return pa.concat_tables([rows(i * ROWS_EACH) for i in range(fragments)])


def shape(ds: Any) -> tuple[int, int, pa.Table]:
    """Version, fragments and rows (sorted): what "unchanged" compares."""
    return ds.version, len(ds.get_fragments()), ds.to_table().sort_by("id")


def run_child(code: str, *args: str) -> Any:
    """``code`` in a second Python process (this checkout importable); its last line as JSON."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- a maintenance plan as one job --------------------------------------------------------------------
LIST_PLANS = """
import json, sys, backend
from backend.services import jobs, maintenance as mt
ns = backend.connect(sys.argv[1])
out = {}
for job in jobs.list_jobs(ns, kinds=["plan"]):
    report = mt.report_of(job)
    out[job.id] = {
        "state": job.state, "target": list(job.table_id), "who": job.who,
        "results": [[list(r.table_id), r.kind, r.status, r.message] for r in report.results],
        "not_run": report.not_run,
    }
print(json.dumps(out))
"""


@pytest.mark.slow
def test_a_plan_run_as_a_job_is_listed_by_a_second_process_with_its_results(
    local_root: Path,
) -> None:
    ns = backend.connect(str(local_root))
    written = {name: fragmented(ns, [name]) for name in ("a", "b")}
    create_table(ns, ["c"], rows(0, 50))  # one fragment: nothing to do
    before = {name: lance.dataset(table_location(ns, [name])) for name in "ab"}
    plan = mt.plan(ns, [])
    assert [(s.table_id, s.kind) for s in plan.runnable] == [
        (("a",), "compact"),
        (("b",), "compact"),
    ]
    job = mt.submit_plan(ns, plan)
    assert (job.kind, job.table_id, job.branch) == ("plan", (), None)
    done = jobs.wait(ns, job.id, timeout=120)
    assert done.state == jobs.SUCCEEDED, done.error_text
    after = {name: lance.dataset(table_location(ns, [name])) for name in "ab"}
    for name in "ab":
        assert len(after[name].get_fragments()) == 1
        assert after[name].to_table().sort_by("id").equals(written[name])
    seen = run_child(LIST_PLANS, str(local_root))
    assert list(seen) == [job.id]
    listed = seen[job.id]
    assert (listed["state"], listed["target"], listed["not_run"]) == ("succeeded", [], 0)
    assert listed["results"] == [
        [[name], "compact", "done", f"version {before[name].version} → {after[name].version}; "
         f"{len(before[name].get_fragments())} fragments → 1 fragment"]
        for name in "ab"
    ]  # fmt: skip
    # the namespace's job is not a table's
    assert jobs.list_jobs(ns, []) == [] and jobs.list_jobs(ns, [], kinds=["plan"])[0].id == job.id


def test_a_cancelled_plan_job_stops_before_the_next_table(
    local_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ns = backend.connect(str(local_root))
    for name in ("a", "b"):
        fragmented(ns, [name])
    untouched = shape(lance.dataset(table_location(ns, ["b"])))
    plan = mt.plan(ns, [])
    go = threading.Event()
    run_step = planning.run_step

    def held(ns: Any, step: Any) -> Any:  # the real step, once the test has asked to cancel
        assert go.wait(timeout=60)
        return run_step(ns, step)

    monkeypatch.setattr(planning, "run_step", held)
    job = mt.submit_plan(ns, plan)
    deadline = time.monotonic() + 30
    while jobs.get(ns, job.id).stage != "compact a" and time.monotonic() < deadline:
        time.sleep(0.02)
    asked = jobs.cancel(ns, job.id)
    assert asked.cancel_requested
    go.set()
    done = jobs.wait(ns, job.id, timeout=120)
    assert done.state == jobs.CANCELLED
    assert "cancelled after 1 table of 2: 1 action not run" in (done.error_text or "")
    report = mt.report_of(done)
    assert report is not None and report.not_run == 1
    assert [(r.table_id, r.status) for r in report.results] == [(("a",), "done")]
    assert len(lance.dataset(table_location(ns, ["a"])).get_fragments()) == 1
    after = shape(lance.dataset(table_location(ns, ["b"])))
    assert after[:2] == untouched[:2] and after[2].equals(untouched[2])


# -- branches -----------------------------------------------------------------------------------------
RERUN = """
import json, sys, backend
from backend.services import jobs
ns = backend.connect(sys.argv[1])
again = jobs.wait(ns, jobs.rerun(ns, sys.argv[2]).id, timeout=120)
print(json.dumps({"branch": again.branch, "state": again.state, "rerun_of": again.rerun_of,
                  "error": again.error_text, "result": again.result}))
"""


@pytest.mark.slow
def test_a_branch_job_records_its_branch_and_runs_again_on_it_from_another_process(
    local_root: Path,
) -> None:
    ns = backend.connect(str(local_root))
    main_rows = fragmented(ns, ["t"])
    branches.create_branch(ns, ["t"], "dev")
    dev = on_branch(ns, "dev")
    extra = [rows(1000 + i * ROWS_EACH) for i in range(3)]
    for data in extra:
        append(dev, ["t"], data)
    main_before = shape(ns.open_dataset(["t"]))
    job = jobs.wait(ns, jobs.submit(dev, "compact", ["t"], {}).id, timeout=120)
    assert (job.state, job.branch) == (jobs.SUCCEEDED, "dev"), job.error_text
    assert len(ns.branch_dataset(["t"], "dev").get_fragments()) == 1
    more = [rows(2000 + i * ROWS_EACH) for i in range(2)]
    for data in more:
        append(dev, ["t"], data)
    fragments = len(ns.branch_dataset(["t"], "dev").get_fragments())
    assert fragments == 3
    # a second process, with no branch view, runs it again: on dev
    again = run_child(RERUN, str(local_root), job.id)
    assert (again["branch"], again["state"], again["rerun_of"]) == ("dev", "succeeded", job.id)
    assert (again["result"]["fragments_before"], again["result"]["fragments_after"]) == (3, 1)
    on_dev = ns.branch_dataset(["t"], "dev")
    expected = pa.concat_tables([main_rows, *extra, *more]).sort_by("id")
    assert len(on_dev.get_fragments()) == 1 and on_dev.to_table().sort_by("id").equals(expected)
    main_after = shape(ns.open_dataset(["t"]))
    assert main_after[:2] == main_before[:2] and main_after[2].equals(main_before[2])
    assert [j.branch for j in jobs.list_jobs(ns, ["t"])] == ["dev", "dev"]
    assert jobs.list_jobs(ns, ["t"], branch="main") == []
    assert len(jobs.list_jobs(ns, ["t"], branch="dev")) == 2


def test_duplicates_and_resumed_checkpoints_are_per_branch(local_root: Path) -> None:
    ns = backend.connect(str(local_root))
    fragmented(ns, ["t"])
    branches.create_branch(ns, ["t"], "dev")
    store = open_job_store(ns)
    now = time.time()
    common = {
        "kind": "compact", "label": "compaction", "table_id": ["t"], "params": {},
        "who": "someone@example.com", "created_at": now - 5, "heartbeat_at": now,
        "host": "elsewhere.example", "pid": 1, "cancellable": True, "executor": "local",
    }  # fmt: skip
    # another console compacts main; a cancelled run on main left a checkpoint (the newest
    # compaction of the table: a compaction of main would take it over)
    store.put("main-running", {**common, "state": "running", "branch": None})
    store.put(
        "main-cancelled",
        {**common, "state": "cancelled", "created_at": now - 1, "checkpoint": {"tasks": [1]}},
    )
    with pytest.raises(ConcurrentModificationError, match="already running"):
        jobs.submit(ns, "compact", ["t"], {})
    on_dev = jobs.submit(on_branch(ns, "dev"), "compact", ["t"], {})
    assert on_dev.branch == "dev" and on_dev.resumed_from is None
    assert jobs.wait(ns, on_dev.id, timeout=120).state == jobs.SUCCEEDED
    store.put("dev-running", {**common, "state": "running", "branch": "dev"})
    with pytest.raises(ConcurrentModificationError, match="on branch dev is already running"):
        jobs.submit(on_branch(ns, "dev"), "compact", ["t"], {})


# -- the Ray executor ---------------------------------------------------------------------------------
def editor(ns: Any, tmp_path: Path) -> Any:
    return gate(
        ns,
        actor=Actor("ed@example.com", access.EDITOR),
        connection="test",
        log=audit.AuditLog(tmp_path / "audit"),
    )


def test_a_ray_job_on_a_branch_is_refused_and_the_branch_unchanged(
    local_root: Path, tmp_path: Path
) -> None:
    ns = backend.connect(str(local_root))
    fragmented(ns, ["t"])
    branches.create_branch(ns, ["t"], "dev")
    append(on_branch(ns, "dev"), ["t"], rows(500))
    gated = editor(ns, tmp_path)
    dev = on_branch(gated, "dev")

    def both() -> tuple[Any, ...]:
        main, branch = ns.open_dataset(["t"]), ns.branch_dataset(["t"], "dev")
        return (*shape(main), *shape(branch), [i.name for i in branch.describe_indices()])

    before = both()
    build = {"column": "id", "index_type": "BTREE"}
    attempts = [
        lambda: jobs.submit(dev, "compact", ["t"], {}, executor="ray"),
        lambda: jobs.submit(gated, "create_index", ["t"], {**build, "branch": "dev"}, "ray"),
        lambda: jobs.submit(dev, "create_index", ["t"], build, executor="ray"),
        lambda: ray_executor.compact(dev, ["t"]),
        lambda: ray_executor.create_index(dev, ["t"], "id", "BTREE"),
        # a job's parameters naming the branch (once dropped silently, building on main)
        lambda: ray_executor.run(gated, "create_index", ["t"], {**build, "branch": "dev"}),
    ]
    for attempt in attempts:
        with pytest.raises(UnsupportedOperationError) as refused:
            attempt()
        assert "the Ray executor cannot act on branch 'dev'" in str(refused.value)
        assert "nothing was done" in str(refused.value)
    after = both()
    assert after[0:2] == before[0:2] and after[2].equals(before[2])
    assert after[3:5] == before[3:5] and after[5].equals(before[5]) and after[6] == before[6] == []
    assert jobs.list_jobs(ns) == []
    refused = [e for e in gated.audit_log.entries() if e.outcome == audit.REFUSED]
    assert len(refused) == len(attempts)
    assert all("cannot act on branch" in (e.error_message or "") for e in refused)


def test_a_ray_job_whose_address_does_not_answer_is_recorded_failed(
    local_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ns = backend.connect(str(local_root))
    fragmented(ns, ["t"])
    before = shape(ns.open_dataset(["t"]))
    gated = editor(ns, tmp_path)
    address = f"127.0.0.1:{free_port()}"
    job = jobs.submit(gated, "compact", ["t"], {}, executor="ray", ray_address=address)
    assert job.executor == "ray" and job.executor_options == {"ray_address": address}
    assert not job.cancellable and "no progress" in (job.note or "")
    assert "cannot be cancelled" in (job.note or "")
    done = jobs.wait(ns, job.id, timeout=120)
    assert done.state == jobs.FAILED
    text = done.error_text or ""
    assert f"the Ray cluster at {address} does not answer" in text, text
    assert "nothing was changed" in text
    after = shape(ns.open_dataset(["t"]))
    assert after[:2] == before[:2] and after[2].equals(before[2])
    # without the extra the executor is not there, and the error says how to install it
    monkeypatch.delitem(jobs.EXECUTORS, "ray")
    with pytest.raises(UnsupportedOperationError, match=r"pip install 'lance-namespace-console\["):
        jobs.submit(gated, "compact", ["t"], {}, executor="ray")


@pytest.mark.slow
def test_a_compaction_job_on_ray_keeps_the_rows_of_the_local_one(
    local_root: Path, tmp_path: Path, local_ray: Any
) -> None:
    ns = backend.connect(str(local_root))
    for name in ("on_ray", "local"):
        written = fragmented(ns, [name])
        lance.dataset(table_location(ns, [name])).delete("id % 5 = 0")
    expected = written.filter(pc.not_equal(pc.remainder(written["id"], 5), 0)).sort_by("id")
    gated = editor(ns, tmp_path)
    on_ray = jobs.submit(gated, "compact", ["on_ray"], {}, executor="ray", num_workers=2)
    local = jobs.submit(gated, "compact", ["local"], {})
    on_ray, local = (jobs.wait(ns, j.id, timeout=300) for j in (on_ray, local))
    assert on_ray.state == local.state == jobs.SUCCEEDED, [
        j.error_text or j.interrupted for j in (on_ray, local)
    ]
    assert on_ray.result["executor"] == "ray" and on_ray.result["workers"] == 2
    assert on_ray.stage == "done" and not on_ray.cancellable
    ray_ds, local_ds = (lance.dataset(table_location(ns, [n])) for n in ("on_ray", "local"))
    assert ray_ds.to_table().sort_by("id").equals(expected)
    assert local_ds.to_table().sort_by("id").equals(expected)
    assert len(ray_ds.get_fragments()) == len(local_ds.get_fragments()) == 1
    assert on_ray.result["fragments_before"] == local.result["fragments_before"] == FRAGMENTS
    compacted = [e for e in gated.audit_log.entries() if e.operation == "compact_files"]
    assert {e.request.get("executor") for e in compacted if e.ids == ["on_ray"]} == {"ray"}


def test_a_cleanup_job_is_main_only(local_root: Path) -> None:
    """As the Versions page: a cleanup on a branch view is refused, nothing recorded; on main
    (by age alone) it is lance's own cleanup, which leaves the latest version."""
    ns = backend.connect(str(local_root))
    written = fragmented(ns, ["t"])
    branches.create_branch(ns, ["t"], "dev", from_version=2)
    written = written.slice(0, 2 * ROWS_EACH)
    dev_versions = [v["version"] for v in ns.branch_dataset(["t"], "dev").versions()]
    with pytest.raises(UnsupportedOperationError, match="not branch 'dev'; nothing was done"):
        jobs.submit(on_branch(ns, "dev"), "cleanup", ["t"], {"older_than_days": 0})
    assert jobs.list_jobs(ns) == []
    before = [v["version"] for v in ns.open_dataset(["t"]).versions()]
    job = jobs.wait(ns, jobs.submit(ns, "cleanup", ["t"], {"older_than_days": 0}).id, 60)
    assert job.state == jobs.SUCCEEDED, job.error_text
    after = [v["version"] for v in ns.open_dataset(["t"]).versions()]
    assert job.result["deleted_versions"] == sorted(set(before) - set(after))
    assert after[-1] == before[-1] and job.result["bytes_removed"] >= 0
    on_dev = ns.branch_dataset(["t"], "dev")
    assert [v["version"] for v in on_dev.versions()] == dev_versions
    assert on_dev.to_table().sort_by("id").equals(written)  # the branch still reads
