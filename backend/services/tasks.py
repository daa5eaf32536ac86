"""Long operations in background threads of this process, followed by the UI.

:class:`Registry` keeps jobs by id (thread-safe, the most recent ``max_tasks`` finished ones
kept), hands out consistent copies, waits for one and forgets one. Two kinds of job use it:

* :class:`TaskRegistry` (:data:`TASKS`) - a plain function (build A/B comparisons):
  ``start`` returns a task id at once; the work reports ``(stage, fraction)``
  through the ``progress`` callable it is given; the result or the error is kept on the task;
* ``build_jobs.BuildJobRegistry`` (``build_jobs.JOBS``) - an index build, with lance's progress
  events or, on backends without them, a poll of the index listing.

Both live in this process only. Index builds, compaction, index optimization and cleanup
started from the pages are jobs recorded with the namespace instead (``backend.services.jobs``),
seen by every console on it.

Every job runs inside ``gate.long_operations()``: each write it makes through the gate writes
a ``started`` audit entry before it begins, and its final entry refers to it (the same
``op_id``), so a process killed mid-job leaves a ``started`` entry with no end.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from backend.gate import long_operations

Progress = Callable[[str, float], None]


@dataclass
class Task:
    """One job running (or finished) in a background thread."""

    task_id: str
    kind: str  # "build_ab" | "optimize" | "compact" | "index_build" ...
    label: str
    table_id: tuple[str, ...]
    status: str = "running"  # running | succeeded | failed | cancelled | timed out
    stage: str | None = "starting"
    fraction: float | None = 0.0
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    result: Any = None
    error: BaseException | None = None

    @property
    def done(self) -> bool:
        return self.status != "running"

    @property
    def elapsed(self) -> float:
        return (self.finished_at or time.time()) - self.started_at


def new_id() -> str:
    return uuid.uuid4().hex[:12]


T = TypeVar("T", bound=Task)


class Registry(Generic[T]):
    """Jobs keyed by id, thread-safe; keeps the most recent ``max_tasks`` finished ones (a
    running job is never forgotten)."""

    def __init__(self, max_tasks: int = 50) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, T] = {}
        self._order: deque[str] = deque()
        self._max = max_tasks

    # -- for the kinds of job ----------------------------------------------------------------
    def _add(self, job: T) -> None:
        with self._lock:
            self._items[job.task_id] = job
            self._order.append(job.task_id)
            finished = [i for i in self._order if self._items[i].done]
            while len(self._order) > self._max and finished:
                oldest = finished.pop(0)
                self._order.remove(oldest)
                self._items.pop(oldest, None)

    @staticmethod
    def _spawn(name: str, target: Callable[..., None], *args: Any) -> None:
        """Run ``target(*args)`` in a daemon thread, its writes recorded as long ones (a
        ``started`` audit entry first: ``gate.long_operations``)."""

        def run() -> None:
            with long_operations():
                target(*args)

        threading.Thread(target=run, daemon=True, name=name).start()

    def _finish(self, task_id: str, status: str, **outcome: Any) -> None:
        """The job's end: ``succeeded`` (fraction 1) or ``failed``, with ``result`` /
        ``error`` and any other field the kind keeps (``stage``...)."""
        with self._lock:
            job = self._items[task_id]
            for name, value in outcome.items():
                setattr(job, name, value)
            job.status = status
            job.finished_at = time.time()
            if status == "succeeded":
                job.fraction = 1.0

    def _copy(self, job: T) -> T:
        """A copy that later updates of the job do not change (kinds copy their lists)."""
        return replace(job)

    # -- queries ---------------------------------------------------------------------------
    def get(self, task_id: str) -> T | None:
        """A consistent copy of the job, or ``None`` when unknown (or forgotten)."""
        with self._lock:
            job = self._items.get(task_id)
            return self._copy(job) if job is not None else None

    def jobs(self, table_id: Sequence[str] | None = None) -> list[T]:
        """Copies of the known jobs (newest first), optionally of one table."""
        with self._lock:
            order = list(self._order)
        out = [j for j in (self.get(i) for i in reversed(order)) if j is not None]
        return out if table_id is None else [j for j in out if j.table_id == tuple(table_id)]

    def running(self, table_id: Sequence[str] | None = None) -> list[T]:
        return [j for j in self.jobs(table_id) if not j.done]

    def wait(self, task_id: str, timeout: float = 120.0, interval: float = 0.05) -> T:
        """Block until the job finishes (tests, scripts); ``TimeoutError`` otherwise,
        ``KeyError`` for an unknown job."""
        deadline = time.monotonic() + timeout
        while (job := self.get(task_id)) is not None and not job.done:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{job.kind} {task_id} still running after {timeout} s")
            time.sleep(interval)
        if job is None:
            raise KeyError(task_id)
        return job

    def forget(self, task_id: str) -> None:
        """Drop a finished job (a running one stays)."""
        with self._lock:
            job = self._items.get(task_id)
            if job is not None and job.done:
                self._items.pop(task_id, None)
                with contextlib.suppress(ValueError):
                    self._order.remove(task_id)


class TaskRegistry(Registry[Task]):
    """Plain functions run in the background (see the module docstring)."""

    def start(
        self,
        kind: str,
        label: str,
        table_id: Sequence[str],
        work: Callable[[Progress], Any],
    ) -> str:
        """Run ``work(progress)`` in a daemon thread; returns the task id."""
        task = Task(new_id(), kind, label, tuple(table_id))
        self._add(task)
        self._spawn(f"task-{kind}", self._run, task.task_id, work)
        return task.task_id

    def _progress(self, task_id: str) -> Progress:
        def report(stage: str, fraction: float) -> None:
            with self._lock:
                task = self._items.get(task_id)
                if task is not None and not task.done:
                    task.stage = str(stage)
                    task.fraction = max(0.0, min(1.0, float(fraction)))

        return report

    def _run(self, task_id: str, work: Callable[[Progress], Any]) -> None:
        try:
            result = work(self._progress(task_id))
        except BaseException as err:  # noqa: BLE001 - kept on the task for the UI
            self._finish(task_id, "failed", error=err)
        else:
            self._finish(task_id, "succeeded", result=result, stage="done")


TASKS = TaskRegistry()

__all__ = ["TASKS", "Progress", "Registry", "Task", "TaskRegistry", "new_id"]
