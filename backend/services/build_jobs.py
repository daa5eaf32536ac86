"""The work of a ``create_index`` job of ``backend.services.jobs`` (:func:`run_build_job`): an
index build run in the job's thread by a :class:`BuildRun`, its stages and latest events kept
in the job's record (:func:`job_details`) and shown again from it (:func:`from_job`). Index
builds are durable jobs like every long operation, so every console on the namespace sees them.

On backends that report progress (``capabilities.progress_events``, the local backend) events
arrive through the progress callable; otherwise a second thread polls ListTableIndices every
``poll_interval`` seconds and records what the server shows for the index.

A build that reports progress can be cancelled (:meth:`BuildRun.cancel`, the job's cancel) and
has a time limit (``time_limit``, default :data:`BUILD_TIME_LIMIT_SECONDS`, or
``LANCE_CONSOLE_BUILD_TIME_LIMIT`` seconds): its next progress event raises
``errors.OperationStopped``, lance ends the build without committing, the backend removes its
partial directory, and the job ends ``cancelled`` or ``timed out``. A polled build runs on
the server, which the spec gives no way to stop.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from lance_namespace import CreateTableIndexRequest, CreateTableIndexResponse, LanceNamespace
from lance_namespace.errors import LanceNamespaceError
from pydantic import ValidationError

from backend.rules.index_rules import build_operation, default_index_name, requested_build_fields
from backend.spec.fields import field_of

from .. import capabilities
from ..branch_view import branch_name, branch_of
from ..errors import OperationStopped, invalid, validation_text
from ..gate import static_problem
from ..rules.ids import delimiter_of
from . import jobs
from .index_overview import create_index, list_indexes

BUILD_TIME_LIMIT_SECONDS = 3600.0


def build_time_limit() -> float:
    """The time limit of a build, in seconds (``LANCE_CONSOLE_BUILD_TIME_LIMIT`` or one
    hour)."""
    try:
        value = float(os.environ.get("LANCE_CONSOLE_BUILD_TIME_LIMIT", BUILD_TIME_LIMIT_SECONDS))
    except ValueError:
        return BUILD_TIME_LIMIT_SECONDS
    return value if value > 0 else BUILD_TIME_LIMIT_SECONDS


LANCE_EVENTS = ("start", "progress", "complete")  # the events lance reports a stage with


@dataclass(frozen=True)
class StageProgress:
    """One stage of a build as lance reported it (``train_ivf``, ``train_quantizer``,
    ``shuffle``, ``merge_partitions``, ``load_data``, ``tokenize_docs``...): its place among
    the stages seen so far (1 for the first), whether it is still running, and its latest
    ``completed`` of ``total`` (``unit``: iterations, rows, partitions...)."""

    name: str
    number: int
    done: bool = False
    completed: int | None = None
    total: int | None = None
    unit: str | None = None

    @property
    def fraction(self) -> float | None:
        """How far the stage is: 1.0 once complete, ``completed / total`` while running, and
        ``None`` (indeterminate: running, no figure) when lance gives it no total."""
        if self.done:
            return 1.0
        if self.total and self.completed is not None:
            return min(max(float(self.completed) / float(self.total), 0.0), 1.0)
        return None


def _stage_after(stage: StageProgress, e: dict[str, Any]) -> StageProgress:
    """``stage`` updated by the lance event ``e`` (a ``start`` begins it again)."""
    completed, total = e.get("completed"), e.get("total")
    return replace(
        stage,
        done=e.get("event") == "complete",
        completed=int(completed) if completed is not None else stage.completed,
        total=int(total) if total else (None if e.get("event") == "start" else stage.total),
        unit=e.get("unit") or stage.unit,
    )


def _event_dict(event: Any) -> dict[str, Any]:
    """A progress event (dict or pylance ``IndexProgress``) as a plain dict with a timestamp."""
    if isinstance(event, dict):
        out = dict(event)
    else:
        out = {k: getattr(event, k, None) for k in ("event", "stage", "completed", "total", "unit")}
    out.setdefault("at", time.time())
    return out


@dataclass(kw_only=True)
class BuildJob:
    """One index build, running or finished (``result`` is the build's response): what the
    build's panel shows, from a :class:`BuildRun` or a job's record (:func:`from_job`)."""

    task_id: str
    label: str
    table_id: tuple[str, ...]
    status: str = "running"  # running | succeeded | failed | cancelled | timed out | interrupted
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    result: Any = None
    error: BaseException | None = None
    kind: str = "index_build"
    stage: str | None = None  # the latest stage lance reported (or the poll saw)
    fraction: float | None = None
    index_name: str = ""
    index_type: str = ""
    column: str = ""
    branch: str | None = None  # the branch the index is built on (None: main)
    mode: str = "events"  # "events": the backend reports progress; "polling": we poll
    events: list[dict[str, Any]] = field(default_factory=list)
    events_total: int = 0  # every event recorded (``events`` keeps the latest ``max_events``)
    dropped_at: float | None = None  # the index this job built was dropped since
    observed: dict[str, Any] | None = None  # last poll: status / rows of the index
    deadline: float | None = None  # time.time() past which the build stops (events mode)
    cancel_requested: bool = False
    # lance's stages in the order first reported; ``current`` the one of the latest event
    build_stages: list[StageProgress] = field(default_factory=list)
    current: int | None = None
    # after a successful vector build: the parameters applied otherwise than requested
    # (rows of ``tuning.requested_vs_applied``: parameter, requested, applied, note)
    param_differences: list[dict[str, str]] = field(default_factory=list)
    who: str = ""  # who started it (a job's record says)
    cancellable: bool = True  # a job's record: whether a running build can be stopped

    @property
    def done(self) -> bool:
        return self.status != "running"

    @property
    def elapsed(self) -> float:
        return (self.finished_at or time.time()) - self.started_at

    @property
    def job_id(self) -> str:
        return self.task_id

    @property
    def response(self) -> Any:
        """The CreateTableIndex / CreateTableScalarIndex response of a finished build."""
        return self.result

    @property
    def outcome(self) -> str:
        """What the panel says of the job: running | succeeded | failed | dropped (built, then
        dropped)."""
        return "dropped" if self.dropped_at is not None else self.status

    @property
    def stages(self) -> list[str]:
        """The names of the stages lance reported, in the order first reported."""
        return [s.name for s in self.build_stages]

    @property
    def current_stage(self) -> StageProgress | None:
        """The stage of lance's latest event (``None`` before the first one)."""
        return self.build_stages[self.current] if self.current is not None else None


def param_differences(
    ns: LanceNamespace, request: CreateTableIndexRequest, index_name: str
) -> list[dict[str, str]]:
    """The build parameters of ``index_name`` that the backend applied otherwise than asked
    (``tuning.requested_vs_applied`` against what was sent, or the backend's own record of
    the build when it keeps one); empty for other indexes or when nothing can be read."""
    from backend.services.tuning.applied import requested_vs_applied

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


class BuildRun:
    """One index build run in the caller's thread (:meth:`run`), followed from others: a
    consistent copy of its :class:`BuildJob` (:meth:`get`), a cancel (:meth:`cancel`).
    :meth:`prepare` makes the run of a request; ``max_events``: the latest progress events
    kept."""

    def __init__(self, job: BuildJob, max_events: int = 500) -> None:
        self._lock = threading.Lock()
        self.job = job
        self._max_events = max_events

    @classmethod
    def prepare(
        cls, ns: LanceNamespace, request: CreateTableIndexRequest, *, time_limit: float | None
    ) -> BuildRun:
        """The run of a build of ``request`` on ``ns``, not started."""
        caps = capabilities(ns)
        branch = branch_name(request.branch) or branch_of(ns)
        name = request.name or default_index_name(request.column)
        limit = build_time_limit() if time_limit is None else float(time_limit)
        job = BuildJob(
            task_id=uuid.uuid4().hex[:12],
            label=f"index {name}",
            table_id=tuple(request.id or ()),
            index_name=name,
            index_type=request.index_type,
            column=request.column,
            branch=branch,
            mode="events" if caps.progress_events else "polling",
            deadline=time.time() + limit if caps.progress_events else None,
        )
        return cls(job)

    def get(self) -> BuildJob:
        """A copy that later updates of the build do not change."""
        with self._lock:
            job = self.job
            return replace(
                job,
                events=list(job.events),
                build_stages=list(job.build_stages),  # StageProgress is frozen: replaced
                observed=dict(job.observed or {}) or None,
            )

    def _finish(self, status: str, **outcome: Any) -> None:
        """The build's end: ``succeeded`` (fraction 1) or ``failed``, ``cancelled``, ``timed
        out``, with ``result`` / ``error`` and any other field (``stage``...)."""
        with self._lock:
            for name, value in outcome.items():
                setattr(self.job, name, value)
            self.job.status = status
            self.job.finished_at = time.time()
            if status == "succeeded":
                self.job.fraction = 1.0

    def _record(self, event: Any) -> None:
        if isinstance(event, dict) and event.get("event") == "heartbeat":
            return  # a child build's sign of life: a chance to stop, no news to keep
        e = _event_dict(event)
        with self._lock:
            job = self.job
            job.events.append(e)
            job.events_total += 1
            if len(job.events) > self._max_events:
                del job.events[: len(job.events) - self._max_events]
            if e.get("stage") and not job.cancel_requested:
                job.stage = e["stage"]
            if e.get("event") in LANCE_EVENTS and e.get("stage"):
                self._record_stage(job, e)

    @staticmethod
    def _record_stage(job: BuildJob, e: dict[str, Any]) -> None:
        """A lance event: its stage (new ones numbered in the order seen) takes the event's
        figures; ``job.fraction`` is that stage's fraction (``None`` without a total)."""
        name = str(e["stage"])
        at = next((i for i, s in enumerate(job.build_stages) if s.name == name), None)
        if at is None:
            job.build_stages.append(StageProgress(name, len(job.build_stages) + 1))
            at = len(job.build_stages) - 1
        job.build_stages[at] = _stage_after(job.build_stages[at], e)
        job.current = at
        job.fraction = job.build_stages[at].fraction

    def cancel(self) -> bool:
        """Ask a running build to stop at lance's next progress event; ``False`` when there
        is nothing to stop (finished, or a server-side build the client polls)."""
        with self._lock:
            job = self.job
            if job.done or job.mode != "events":
                return False
            job.cancel_requested = True
            job.stage = "cancelling"
            return True

    def _check_stop(self) -> None:
        with self._lock:
            job = self.job
            cancelled, deadline = job.cancel_requested, job.deadline
        if cancelled:
            raise OperationStopped(
                f"the build of index {job.index_name} was cancelled; nothing was committed",
                "cancelled",
            )
        if deadline is not None and time.time() > deadline:
            raise OperationStopped(
                f"the build of index {job.index_name} passed its time limit of "
                f"{round(deadline - job.started_at)} s and was stopped; nothing was committed",
                "timed out",
            )

    def run(
        self, ns: LanceNamespace, request: CreateTableIndexRequest, *, poll_interval: float = 1.0
    ) -> BuildJob:
        """Build the index in this thread (over REST with a poll of the index listing in
        another); the build as it ended (never raises: the error is kept on it)."""
        if self.job.mode == "polling":
            poll = threading.Thread(
                target=self._poll, args=(ns, poll_interval), daemon=True, name="index-poll"
            )
            poll.start()

        def progress(event: Any) -> None:
            self._record(event)
            self._check_stop()

        try:
            response = create_index(
                ns, request, progress=progress if self.job.mode == "events" else None
            )
        except OperationStopped as err:
            self._finish(err.reason, error=err, stage=err.reason)
            return self.get()
        except BaseException as err:  # noqa: BLE001 - kept on the build for its job
            self._finish("failed", error=err)
            return self.get()
        differences = param_differences(ns, request, self.job.index_name)
        self._finish("succeeded", result=response, param_differences=differences)
        return self.get()

    def _poll(self, ns: LanceNamespace, interval: float) -> None:
        job = self.job
        while True:
            time.sleep(interval)
            with self._lock:
                if job.done:
                    return
            try:
                found = [
                    ix
                    for ix in list_indexes(ns, job.table_id)
                    if field_of(ix, "index_name") == job.index_name
                ]
            except Exception as err:  # noqa: BLE001 - polling is best effort
                self._record({"event": "poll", "stage": "polling", "error": str(err)})
                continue
            if found:
                ix = found[0]
                observed = {
                    "status": field_of(ix, "status"),
                    "indexed_rows": field_of(ix, "num_indexed_rows"),
                    "unindexed_rows": field_of(ix, "num_unindexed_rows"),
                }
                stage = f"server reports {observed['status']}"
            else:
                observed = {"status": "not listed yet"}
                stage = "waiting for the server"
            with self._lock:
                job.observed = observed
            self._record({"event": "poll", "stage": stage, **observed})


# -- index builds as jobs of ``backend.services.jobs`` (kind ``create_index``) -----------------------

EVENTS_IN_RECORD = 200  # the latest progress events a job's record keeps
_NOT_PARAMS = frozenset({"id", "identity", "context"})  # a build's target and credentials
_STATUS_OF_STATE = {
    "queued": "running",
    "running": "running",
    "succeeded": "succeeded",
    "cancelled": "cancelled",
    "interrupted": "interrupted",
}


def build_params(request: CreateTableIndexRequest) -> dict[str, Any]:
    """The parameters of a ``create_index`` job building ``request`` (its fields but the
    table id, identity and context)."""
    return request.model_dump(mode="json", exclude_none=True, exclude=set(_NOT_PARAMS))


def build_request(table_id: Sequence[str], params: Mapping[str, Any]) -> CreateTableIndexRequest:
    """The CreateTableIndex request of a ``create_index`` job."""
    return CreateTableIndexRequest(id=list(table_id), **dict(params))


def check_build_params(
    ns: LanceNamespace, table_id: Sequence[str], params: Mapping[str, Any]
) -> dict[str, Any]:
    """The parameters of an index build checked: known fields of CreateTableIndex, a column
    and an index type, the spec's static rules (``gate.static_problem``); else
    ``InvalidInputError`` in the user's terms."""
    allowed = set(CreateTableIndexRequest.model_fields) - _NOT_PARAMS
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise invalid(
            f"an index build takes the fields of CreateTableIndex; {', '.join(unknown)} is not one"
        )
    if not params.get("column") or not params.get("index_type"):
        raise invalid("an index build needs a column and an index type")
    try:
        request = build_request(table_id, params)
    except ValidationError as exc:
        raise invalid(f"the index build's parameters: {validation_text(exc)}") from None
    operation = build_operation(request.index_type)
    delimiter = delimiter_of(ns)
    problem = static_problem(operation, request, delimiter)
    if problem:
        raise invalid(f"{operation}: {problem}")
    return build_params(request)


def job_details(job: BuildJob) -> dict[str, Any]:
    """What a job's record keeps of a build (its stages, its latest events, the poll's
    view): :func:`from_job` makes the build's panel from it again."""
    return {
        "index_name": job.index_name,
        "index_type": job.index_type,
        "column": job.column,
        "mode": job.mode,
        "events": job.events[-EVENTS_IN_RECORD:],
        "events_total": job.events_total,
        "observed": job.observed,
        "build_stages": [asdict(stage) for stage in job.build_stages],
        "current": job.current,
        "cancel_requested": job.cancel_requested,
        "param_differences": job.param_differences,
    }


def from_job(job: Any) -> BuildJob:
    """The build of a ``create_index`` job (``backend.services.jobs.Job``) as the build
    panel shows it: status ``running`` (queued or running), ``succeeded``, ``failed``,
    ``cancelled``, ``timed out`` or ``interrupted``."""
    d = dict(job.details or {})
    params = dict(job.params or {})
    status = _STATUS_OF_STATE.get(job.state, "failed")
    if job.state == "failed" and job.stopped == "timed out":
        status = "timed out"
    result = job.result if isinstance(job.result, dict) else None
    response = (
        CreateTableIndexResponse(
            transaction_id=result.get("transaction_id"), context=result.get("context")
        )
        if result is not None
        else None
    )
    column = str(d.get("column") or params.get("column") or "")
    return BuildJob(
        task_id=job.id,
        label=job.label,
        table_id=tuple(job.table_id or ()),
        status=status,
        stage=job.stage,
        fraction=job.fraction,
        started_at=job.started_at or job.created_at,
        finished_at=job.finished_at or (job.heartbeat_at if job.done else None),
        result=response,
        error=job.exception(),
        index_name=str(d.get("index_name") or params.get("name") or default_index_name(column)),
        index_type=str(d.get("index_type") or params.get("index_type") or ""),
        column=column,
        mode=str(d.get("mode") or "events"),
        events=list(d.get("events") or []),
        events_total=int(d.get("events_total") or 0),
        dropped_at=d.get("dropped_at"),
        observed=d.get("observed"),
        cancel_requested=bool(job.cancel_requested or d.get("cancel_requested")),
        build_stages=[StageProgress(**stage) for stage in d.get("build_stages") or []],
        current=d.get("current"),
        param_differences=list((result or {}).get("param_differences") or []),
        branch=branch_name(params.get("branch")),
        who=job.who,
        cancellable=bool(job.cancellable),
    )


def run_build_job(
    ns: LanceNamespace, table_id: Sequence[str], params: Mapping[str, Any], ctx: Any
) -> dict[str, Any]:
    """The work of a ``create_index`` job (``backend.services.jobs``): the build runs in the
    job's thread (:class:`BuildRun`: progress events, a cancel at lance's next event, the
    time limit; over REST a poll of the index listing), its stages and latest events shown
    in the job's record."""
    request = build_request(table_id, params)
    build = BuildRun.prepare(ns, request, time_limit=None)

    def shown() -> dict[str, Any]:
        now = build.get()
        return {"stage": now.stage, "fraction": now.fraction, "details": job_details(now)}

    ctx.snapshot(shown)
    ctx.on_cancel(build.cancel)
    final = build.run(ns, request)
    if final.status != "succeeded":
        raise final.error or RuntimeError(f"the build of index {final.index_name} failed")
    response = final.response
    return {
        "index_name": final.index_name,
        "transaction_id": getattr(response, "transaction_id", None),
        "context": dict(getattr(response, "context", None) or {}),
        "param_differences": final.param_differences,
    }


def mark_dropped(ns: LanceNamespace, table_id: Sequence[str], index_name: str) -> int:
    """The index ``index_name`` of the table (on ``ns``'s branch, a branch view's) was
    dropped: the jobs that built it there say so from now on (their record's ``dropped_at``;
    :attr:`BuildJob.outcome`). Returns how many job records were marked."""

    on = branch_of(ns)
    marked = 0
    for job in jobs.list_jobs(ns, table_id, kinds=("create_index",), states=("succeeded",)):
        built = from_job(job)
        if job.details.get("dropped_at") is None and (built.index_name, built.branch) == (
            index_name,
            on,
        ):
            jobs.annotate(ns, job.id, dropped_at=time.time())
            marked += 1
    return marked


def _create_index(ns: Any, table_id: Any, params: dict[str, Any], ctx: Any) -> Any:
    return run_build_job(ns, table_id, params, ctx)


def _check_create_index(ns: Any, table_id: Any, params: dict[str, Any]) -> dict[str, Any]:
    return check_build_params(ns, table_id, params)


def _index_operation(params: Mapping[str, Any]) -> str:
    return build_operation(str(params.get("index_type") or ""))


def _index_key(params: Mapping[str, Any]) -> str | None:
    return str(params.get("name") or default_index_name(str(params.get("column") or "")))


# An index build as a job kind (``backend.services.jobs``; imported with the services package).
jobs.register_kind(
    "create_index", _create_index, operation=_index_operation, label="index build",
    validate=_check_create_index, key=_index_key,
    cancellable=lambda ns: capabilities(ns).progress_events,
)  # fmt: skip
