"""The background task registry (``backend.services.tasks``): tasks run, report and are
forgotten once old and finished."""

from __future__ import annotations

import threading
import time

import pytest

from backend.services.tasks import TaskRegistry

T = ["a", "t"]  # the table a task is about


def test_task_registry() -> None:
    tasks = TaskRegistry()
    release, reported = threading.Event(), threading.Event()

    def blocked(progress):
        progress("halfway", 0.5)
        reported.set()
        assert release.wait(10)
        progress("almost", 0.9)
        return {"answer": 42}

    task_id = tasks.start("build_ab", "blocked task", T, blocked)
    assert reported.wait(10)
    running = tasks.get(task_id)
    assert running is not None and running.status == "running" and not running.done
    assert (running.stage, running.fraction) == ("halfway", 0.5)
    assert running.table_id == tuple(T) and running.kind == "build_ab"
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        tasks.wait(task_id, timeout=0.2)
    assert time.monotonic() - started < 5
    release.set()
    done = tasks.wait(task_id, timeout=10)
    assert done.status == "succeeded" and done.done
    assert done.result == {"answer": 42} and done.error is None
    assert (done.stage, done.fraction) == ("done", 1.0)
    assert done.finished_at is not None and done.elapsed >= 0

    def failing(progress):
        progress("going", 0.3)
        raise ValueError("boom")

    failed = tasks.wait(tasks.start("optimize", "failing task", T, failing), timeout=10)
    assert failed.status == "failed" and failed.done
    assert isinstance(failed.error, ValueError) and str(failed.error) == "boom"
    assert failed.result is None
    assert failed.fraction == pytest.approx(0.3)

    assert tasks.get("no-such-task") is None
    with pytest.raises(KeyError):
        tasks.wait("no-such-task", timeout=1)


def test_task_registry_forgets_old_finished_tasks_only() -> None:
    tasks = TaskRegistry(max_tasks=2)
    done = [
        tasks.wait(tasks.start("x", f"t{i}", T, lambda p, i=i: i), timeout=10) for i in range(3)
    ]
    assert [t.result for t in done] == [0, 1, 2]
    fourth = tasks.start("x", "t3", T, lambda p: 3)
    assert tasks.wait(fourth, timeout=10).result == 3
    kept = [tasks.get(t.task_id) is not None for t in done]
    assert kept == [False, False, True]

    tasks = TaskRegistry(max_tasks=1)
    release = threading.Event()
    blocked = tasks.start("x", "blocked", T, lambda p: release.wait(10))
    quick = tasks.start("x", "quick", T, lambda p: "quick")
    tasks.wait(quick, timeout=10)
    tasks.start("x", "another", T, lambda p: "another")
    running = tasks.get(blocked)
    assert running is not None and running.status == "running"  # never dropped while running
    assert tasks.get(quick) is None
    release.set()
    assert tasks.wait(blocked, timeout=10).result is True
