"""Long operations in background threads (build A/B comparisons, index maintenance), followed
by the UI: ``start`` returns a task id at once; the work reports ``(stage, fraction)`` through
the ``progress`` callable it is given; the result or the error is kept on the task.

Index builds have their own registry (``build_jobs``: progress events, server polling); this
one is for plain functions.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

Progress = Callable[[str, float], None]


@dataclass
class Task:
    task_id: str
    kind: str  # "build_ab" | "optimize" | "compact" | ...
    label: str
    table_id: tuple[str, ...]
    status: str = "running"  # running | succeeded | failed
    stage: str = "starting"
    fraction: float = 0.0
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


class TaskRegistry:
    """Tasks keyed by id, thread-safe; keeps the most recent ``max_tasks`` finished ones."""

    def __init__(self, max_tasks: int = 50):
        self._lock = threading.Lock()
        self._tasks: dict[str, Task] = {}
        self._order: deque[str] = deque()
        self._max = max_tasks

    def start(
        self,
        kind: str,
        label: str,
        table_id: Sequence[str],
        work: Callable[[Progress], Any],
    ) -> str:
        """Run ``work(progress)`` in a daemon thread; returns the task id."""
        task = Task(uuid.uuid4().hex[:12], kind, label, tuple(table_id))
        with self._lock:
            self._tasks[task.task_id] = task
            self._order.append(task.task_id)
            finished = [i for i in self._order if self._tasks[i].done]
            while len(self._order) > self._max and finished:
                oldest = finished.pop(0)
                self._order.remove(oldest)
                self._tasks.pop(oldest, None)
        threading.Thread(
            target=self._run, args=(task.task_id, work), daemon=True, name=f"task-{kind}"
        ).start()
        return task.task_id

    def _progress(self, task_id: str) -> Progress:
        def report(stage: str, fraction: float) -> None:
            with self._lock:
                task = self._tasks.get(task_id)
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
            self._finish(task_id, "succeeded", result=result)

    def _finish(self, task_id: str, status: str, **outcome: Any) -> None:
        with self._lock:
            task = self._tasks[task_id]
            for name, value in outcome.items():
                setattr(task, name, value)
            task.status = status
            task.finished_at = time.time()
            if status == "succeeded":
                task.stage, task.fraction = "done", 1.0

    def get(self, task_id: str) -> Task | None:
        """A copy of the task, or ``None`` when unknown (or forgotten)."""
        with self._lock:
            task = self._tasks.get(task_id)
            return replace(task) if task is not None else None

    def wait(self, task_id: str, timeout: float = 120.0) -> Task:
        """Block until the task finishes (tests, scripts); ``TimeoutError`` otherwise."""
        deadline = time.monotonic() + timeout
        while (task := self.get(task_id)) is not None and not task.done:
            if time.monotonic() > deadline:
                raise TimeoutError(f"task {task_id} still running after {timeout} s")
            time.sleep(0.05)
        if task is None:
            raise KeyError(task_id)
        return task


TASKS = TaskRegistry()

__all__ = ["TASKS", "Progress", "Task", "TaskRegistry"]
