"""Index builds in background threads, followed by the UI.

``BuildJobRegistry.start`` returns at once; the build runs in a daemon thread. On backends
that report progress (``capabilities.progress_events``, the local backend) events arrive
through the progress callable; otherwise a second thread polls ListTableIndices every
``poll_interval`` seconds and records what the server shows for the index. Finished jobs are
kept (the most recent ``max_jobs``) so the page can show their outcome.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from lance_namespace import CreateTableIndexRequest, LanceNamespace
from lance_namespace.errors import LanceNamespaceError

from .. import capabilities
from ..index_rules import default_index_name, requested_build_fields
from .index_overview import create_index, list_indexes


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _event_dict(event: Any) -> dict[str, Any]:
    """A progress event (dict or pylance ``IndexProgress``) as a plain dict with a timestamp."""
    if isinstance(event, dict):
        out = dict(event)
    else:
        out = {k: getattr(event, k, None) for k in ("event", "stage", "completed", "total", "unit")}
    out.setdefault("at", time.time())
    return out


@dataclass
class BuildJob:
    """One index build running (or finished) in a background thread."""

    job_id: str
    table_id: tuple[str, ...]
    index_name: str
    index_type: str
    column: str
    mode: str  # "events": the backend reports progress; "polling": we poll the index listing
    status: str = "running"  # running | succeeded | failed
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    events_total: int = 0  # every event recorded (``events`` keeps the latest ``max_events``)
    dropped_at: float | None = None  # the index this job built was dropped since
    stage: str | None = None
    fraction: float | None = None
    observed: dict[str, Any] | None = None  # last poll: status / rows of the index
    response: Any = None
    error: BaseException | None = None
    # after a successful vector build: the parameters applied otherwise than requested
    # (rows of ``tuning.requested_vs_applied``: parameter, requested, applied, note)
    param_differences: list[dict[str, str]] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.status != "running"

    @property
    def outcome(self) -> str:
        """What the panel says of the job: running | succeeded | failed | dropped (built, then
        dropped)."""
        return "dropped" if self.dropped_at is not None else self.status

    @property
    def elapsed(self) -> float:
        return (self.finished_at or time.time()) - self.started_at

    @property
    def stages(self) -> list[str]:
        seen: list[str] = []
        for e in self.events:
            s = e.get("stage")
            if s and s not in seen:
                seen.append(s)
        return seen


def param_differences(
    ns: LanceNamespace, request: CreateTableIndexRequest, index_name: str
) -> list[dict[str, str]]:
    """The build parameters of ``index_name`` that the backend applied otherwise than asked
    (``tuning.requested_vs_applied`` against what was sent, or the backend's own record of
    the build when it keeps one); empty for other indexes or when nothing can be read."""
    from ..tuning import requested_vs_applied

    recorded = getattr(ns, "index_requests", None)
    asked = (recorded(list(request.id or [])) if callable(recorded) else {}).get(index_name)
    asked = asked or requested_build_fields(request)
    if not asked:
        return []
    try:
        frame = requested_vs_applied(ns, list(request.id or []), {index_name: asked})
    except LanceNamespaceError:
        return []  # the build stands; what was applied could not be read
    rows = frame[(frame["index"] == index_name) & frame["differs"].astype(bool)]
    return [
        {k: str(r[k]) for k in ("parameter", "requested", "applied", "note")}
        for r in rows.to_dict("records")
    ]


def describe_differences(differences: Sequence[dict[str, str]]) -> str:
    """``num_sub_vectors 8 requested, 16 applied (the server did not apply the parameter)``."""
    return "; ".join(
        f"{d['parameter']} {d['requested']} requested, {d['applied']} applied ({d['note']})"
        for d in differences
    )


class BuildJobRegistry:
    """Index builds keyed by job id. Thread-safe; keeps the most recent ``max_jobs`` jobs.

    ``start`` returns at once; the build runs in a daemon thread. On backends that report
    progress (``capabilities.progress_events``) events arrive through the progress callable;
    otherwise a second thread polls ListTableIndices every ``poll_interval`` seconds and records
    what the server shows for the index.
    """

    def __init__(self, max_jobs: int = 50, max_events: int = 500):
        self._lock = threading.Lock()
        self._jobs: dict[str, BuildJob] = {}
        self._order: deque[str] = deque()
        self._max_jobs = max_jobs
        self._max_events = max_events

    def start(
        self,
        ns: LanceNamespace,
        request: CreateTableIndexRequest,
        *,
        poll_interval: float = 1.0,
    ) -> str:
        caps = capabilities(ns)
        job = BuildJob(
            job_id=uuid.uuid4().hex[:12],
            table_id=tuple(request.id or ()),
            index_name=request.name or default_index_name(request.column),
            index_type=request.index_type,
            column=request.column,
            mode="events" if caps.progress_events else "polling",
        )
        with self._lock:
            self._jobs[job.job_id] = job
            self._order.append(job.job_id)
            finished = [i for i in self._order if self._jobs[i].done]
            while len(self._order) > self._max_jobs and finished:
                oldest = finished.pop(0)
                self._order.remove(oldest)
                self._jobs.pop(oldest, None)
        worker = threading.Thread(
            target=self._run,
            args=(ns, request, job.job_id),
            daemon=True,
            name=f"index-{job.job_id}",
        )
        worker.start()
        if job.mode == "polling":
            poller = threading.Thread(
                target=self._poll,
                args=(ns, job.job_id, poll_interval),
                daemon=True,
                name=f"index-poll-{job.job_id}",
            )
            poller.start()
        return job.job_id

    # -- worker threads --------------------------------------------------------------------

    def _record(self, job_id: str, event: Any) -> None:
        e = _event_dict(event)
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return
            job.events.append(e)
            job.events_total += 1
            if len(job.events) > self._max_events:
                del job.events[: len(job.events) - self._max_events]
            if e.get("stage"):
                job.stage = e["stage"]
            completed, total = e.get("completed"), e.get("total")
            if completed is not None and total:
                job.fraction = min(float(completed) / float(total), 1.0)
            elif e.get("event") == "start":
                job.fraction = None
            elif e.get("event") == "complete":
                job.fraction = 1.0

    def _run(self, ns: LanceNamespace, request: CreateTableIndexRequest, job_id: str) -> None:
        job = self._jobs[job_id]

        def progress(event: Any) -> None:
            self._record(job_id, event)

        try:
            response = create_index(
                ns, request, progress=progress if job.mode == "events" else None
            )
        except BaseException as err:  # noqa: BLE001 - reported to the UI, never re-raised
            with self._lock:
                job.error = err
                job.status = "failed"
                job.finished_at = time.time()
            return
        differences = param_differences(ns, request, job.index_name)
        with self._lock:
            job.response = response
            job.param_differences = differences
            job.status = "succeeded"
            job.finished_at = time.time()
            job.fraction = 1.0

    def _poll(self, ns: LanceNamespace, job_id: str, interval: float) -> None:
        job = self._jobs[job_id]
        while True:
            time.sleep(interval)
            with self._lock:
                if job.done:
                    return
            try:
                found = [
                    ix
                    for ix in list_indexes(ns, job.table_id)
                    if _get(ix, "index_name") == job.index_name
                ]
            except Exception as err:  # noqa: BLE001 - polling is best effort
                self._record(job_id, {"event": "poll", "stage": "polling", "error": str(err)})
                continue
            if found:
                ix = found[0]
                observed = {
                    "status": _get(ix, "status"),
                    "indexed_rows": _get(ix, "num_indexed_rows"),
                    "unindexed_rows": _get(ix, "num_unindexed_rows"),
                }
                stage = f"server reports {observed['status']}"
            else:
                observed = {"status": "not listed yet"}
                stage = "waiting for the server"
            with self._lock:
                job.observed = observed
            self._record(job_id, {"event": "poll", "stage": stage, **observed})

    # -- queries ----------------------------------------------------------------------------

    def get(self, job_id: str) -> BuildJob | None:
        """A consistent copy of the job (events copied), or ``None`` if unknown."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return None
            return replace(job, events=list(job.events), observed=dict(job.observed or {}) or None)

    def jobs(self, table_id: Sequence[str] | None = None) -> list[BuildJob]:
        """Copies of the known jobs (newest first), optionally for one table."""
        with self._lock:
            ids = list(self._order)
        out = [j for j in (self.get(i) for i in reversed(ids)) if j is not None]
        if table_id is not None:
            out = [j for j in out if j.table_id == tuple(table_id)]
        return out

    def running(self, table_id: Sequence[str] | None = None) -> list[BuildJob]:
        return [j for j in self.jobs(table_id) if not j.done]

    def wait(self, job_id: str, timeout: float = 60.0, interval: float = 0.05) -> BuildJob:
        """Block until the job finishes (tests, scripts); raises ``TimeoutError``."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            job = self.get(job_id)
            if job is None:
                raise KeyError(job_id)
            if job.done:
                return job
            time.sleep(interval)
        raise TimeoutError(f"index build {job_id} still running after {timeout}s")

    def mark_dropped(self, table_id: Sequence[str], index_name: str) -> int:
        """The index ``index_name`` of the table was dropped: its finished, successful builds
        say so from now on (:attr:`BuildJob.outcome`). Returns how many jobs were marked."""
        marked = 0
        with self._lock:
            for job in self._jobs.values():
                if (
                    job.table_id == tuple(table_id)
                    and job.index_name == index_name
                    and job.status == "succeeded"
                    and job.dropped_at is None
                ):
                    job.dropped_at = time.time()
                    marked += 1
        return marked

    def forget(self, job_id: str) -> None:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is not None and job.done:
                self._jobs.pop(job_id, None)
                with contextlib.suppress(ValueError):
                    self._order.remove(job_id)


JOBS = BuildJobRegistry()


def start_build(
    ns: LanceNamespace, request: CreateTableIndexRequest, *, poll_interval: float = 1.0
) -> str:
    """Start an index build in the background (module-wide registry :data:`JOBS`)."""
    return JOBS.start(ns, request, poll_interval=poll_interval)


__all__ = [
    "JOBS",
    "BuildJob",
    "BuildJobRegistry",
    "describe_differences",
    "param_differences",
    "start_build",
]
