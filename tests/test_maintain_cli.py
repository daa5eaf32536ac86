"""``lance-console maintain TARGET [--dry-run] [--namespace NS] [--job]`` run as a child process
on a temporary local namespace, as cron would run it: a dry run changes nothing (versions and
files unchanged) and says what it would do; a real run compacts and exits 0 (checked with lance),
with ``--job`` as a job the consoles list. An action that cannot run exits 1 and bad input exits 2
with the reason: those refusals are checked through the command's own ``main`` in this process
(its exit code, its output and its errors), one child process each adding only its start-up."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import lance
import pyarrow as pa
import pytest
from lance_namespace import CreateNamespaceRequest, DropTableRequest

import backend
from backend.gate import Actor
from backend.services import jobs
from backend.services import maintenance as mt
from tests.support import create_table, table_location, tree_digest

REPO = Path(__file__).resolve().parents[1]
T = ["a", "t"]


def rows(start: int, n: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64())})


def command_env(audit_dir: Path, env: dict[str, str] | None) -> dict[str, str]:
    """What the command's environment adds: the audit log's folder, then ``env``."""
    return {"LANCE_CONSOLE_AUDIT_DIR": str(audit_dir), **(env or {})}


def maintain(*args: str, audit_dir: Path, env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, "-m", "backend.launcher.cli", "maintain", *args],
        env={**os.environ, "PYTHONPATH": str(REPO), **command_env(audit_dir, env)},
        capture_output=True,
        text=True,
        timeout=240,
    )


def maintain_here(
    *args: str, audit_dir: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``lance-console maintain ARGS`` through ``backend.launcher.maintain.main`` in this process
    (usage errors are argparse's, on stderr), the environment set as for :func:`maintain` for
    the call only: its exit code, output and errors."""
    from backend.launcher import maintain as command

    with mock.patch.dict(os.environ, command_env(audit_dir, env)):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err):
            code = command.main(list(args), out=out, err=err)
    return subprocess.CompletedProcess(["maintain", *args], code, out.getvalue(), err.getvalue())


@pytest.fixture
def crafted(tmp_path: Path) -> tuple[Path, Path]:
    """A root whose table ``a$t`` has four small fragments (four versions); its path."""
    root = tmp_path / "lake"
    root.mkdir()
    ns = backend.connect(str(root))
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    create_table(ns, T, rows(0, 50))
    path = table_location(ns, T)
    for i in range(1, 4):
        lance.write_dataset(rows(50 * i, 50), str(path), mode="append")
    return root, path


def versions(path: Path) -> list[int]:
    return [v["version"] for v in lance.dataset(str(path)).versions()]


@pytest.mark.slow
def test_dry_run_changes_nothing_then_the_run_compacts(crafted, tmp_path: Path) -> None:
    root, path = crafted
    audit_dir = tmp_path / "audit"
    before, files = versions(path), tree_digest(root)
    dry = maintain(str(root), "--dry-run", audit_dir=audit_dir)
    assert dry.returncode == 0, dry.stderr
    assert versions(path) == before and tree_digest(root) == files
    assert not audit_dir.exists()  # nothing written, nothing to record
    out = dry.stdout
    assert "(dry run, nothing is changed)" in out
    assert "namespace a: no saved policy, the default applies" in out
    assert "a › t  compact: would run. Why: 4 of 4 fragments are small" in out
    assert "Expected: the compaction plan rewrites 4 fragments" in out
    assert "1 action would run in 2 namespaces" in out

    run = maintain(str(root), audit_dir=audit_dir)
    assert run.returncode == 0, run.stdout + run.stderr
    ds = lance.dataset(str(path))
    assert len(ds.get_fragments()) == 1 and ds.count_rows() == 200
    after = versions(path)  # lance's compaction commits its version(s) after the old ones
    assert after[: len(before)] == before and after[-1] == ds.version > before[-1]
    assert (
        f"a › t  compact: done: version {before[-1]} → {ds.version}; 4 fragments → 1 fragment"
        in (run.stdout)
    )
    entries = [json.loads(line) for line in (audit_dir / "audit.jsonl").read_text().splitlines()]
    assert [(e["operation"], e["outcome"], e["source"]) for e in entries] == [
        ("compact_files", "started", "cli"),
        ("compact_files", "ok", "cli"),
    ]
    again = maintain(str(root), "--namespace", "a", audit_dir=audit_dir)
    assert again.returncode == 0 and "a › t: nothing to do" in again.stdout
    assert "0 actions ran in 1 namespace" in again.stdout


@pytest.mark.slow
def test_a_run_recorded_as_a_job_is_listed_by_the_consoles(crafted, tmp_path: Path) -> None:
    """``--job``: the namespace's run is one job of kind plan, which this (another) process
    lists with its true state and per-table results; the table is compacted."""
    root, path = crafted
    before = versions(path)
    fragments = len(lance.dataset(str(path)).get_fragments())
    run = maintain(str(root), "--job", audit_dir=tmp_path / "audit")
    assert run.returncode == 0, run.stdout + run.stderr
    ns = backend.connect(str(root))
    (job,) = jobs.list_jobs(ns, kinds=["plan"])  # the root has nothing to do: no job
    assert f"recorded as job {job.id}" in run.stdout
    assert (job.state, job.table_id, job.kind) == ("succeeded", ("a",), "plan")
    assert job.who == Actor.os_user().user and job.pid != os.getpid()
    ds = lance.dataset(str(path))
    assert len(ds.get_fragments()) == 1 and ds.count_rows() == 200
    report = mt.report_of(job)
    assert report is not None and report.ok
    assert [(r.table_id, r.kind, r.status, r.message) for r in report.results] == [
        (("a", "t"), "compact", "done",
         f"version {before[-1]} → {ds.version}; {fragments} fragments → 1 fragment"),
    ]  # fmt: skip
    assert f"a › t  compact: done: {report.results[0].message}" in run.stdout


@pytest.mark.slow
def test_failures_exit_non_zero(crafted, tmp_path: Path) -> None:
    root, path = crafted
    audit_dir = tmp_path / "audit"
    before = versions(path)
    # a write the gate refuses (read-only): the action is not run, exit 1
    refused = maintain_here(str(root), audit_dir=audit_dir, env={"LANCE_CONSOLE_READ_ONLY": "1"})
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "a › t  compact: skipped: LANCE_CONSOLE_READ_ONLY is set" in refused.stdout
    assert versions(path) == before
    # a saved policy naming a table since dropped: bad input, exit 2, nothing run
    ns = backend.connect(str(root))
    create_table(ns, ["a", "gone"], rows(0, 5))
    mt.save_policy(ns, ["a"], {"kinds": {"compact": {}}, "tables": {"gone": {"compact": False}}})
    ns.drop_table(DropTableRequest(id=["a", "gone"]))
    stale = maintain_here(str(root), audit_dir=audit_dir)
    assert stale.returncode == 2
    assert "names a table it does not have (dropped or renamed?): gone" in stale.stderr
    assert "Traceback" not in stale.stderr and versions(path) == before
    # bad targets and options
    missing = maintain_here(str(tmp_path / "nowhere"), audit_dir=audit_dir)
    assert missing.returncode == 2 and "does not exist; nothing was created" in missing.stderr
    assert not (tmp_path / "nowhere").exists()
    unknown = maintain_here(str(root), "--namespace", "zz", audit_dir=audit_dir)
    assert unknown.returncode == 2 and "namespace zz does not exist" in unknown.stderr
    usage = maintain_here(audit_dir=audit_dir)
    assert usage.returncode == 2 and "usage: lance-console maintain" in usage.stderr
