"""Jobs: long operations (index builds, compaction, index optimization, cleanup, and any kind
registered later, such as a maintenance plan) recorded in the namespace, so that every
console process on it, a restarted one too, sees them with their true state.

``submit(ns, kind, table_id, params)`` checks the request (the kind's rules, the actor's role
and a read-only launch, through the gate: a refusal is audited and nothing is written),
writes the job's record (``backend.local.job_store``: under the namespace root beside the
console's other records, or in the console's local state directory over REST), and hands the
job to an executor. The local executor runs it in a thread of this process (at most
:func:`worker_count` at once; the others wait ``queued``). The work runs through the gate
(role-checked, and audited with a ``started`` entry first: ``gate.long_operations``).

While it runs, the process rewrites the record every :func:`heartbeat_seconds` with its
progress (stage, fraction, the kind's details and checkpoint) and a heartbeat, and reads
whether someone asked to cancel it. A job's state is one of :data:`STATES`; a record that
says queued or running but whose process is gone is reported ``interrupted`` (never
running forever):

* same host: the process (pid, and its start time where ``/proc`` tells it) no longer
  exists, or is this process after a restart;
* any host: no heartbeat for :func:`stale_seconds`.

An interrupted (or failed, cancelled, finished) job can be run again: :func:`rerun`, or
:func:`submit` with the same parameters. A compaction resumes from the tasks the earlier run
finished (lance's plan / execute / commit steps: ``backend.local.compaction``): its record
keeps a checkpoint, which the next compaction of the same table takes over.

Cancel (:func:`cancel`) from any process writes a cancel request beside the record; the
process running the job sees it at its next heartbeat (at once in the same process), and the
job stops where lance allows: an index build at lance's next progress event (nothing
committed, its partial files removed), a compaction between tasks (nothing committed). An
index optimization or a cleanup cannot be stopped once started (a queued one can), nor can an
index build a REST server runs.

A job submitted with a branch view (``backend.branch_view.on_branch``), or an index build
whose parameters name a branch, records that branch (``branch``; ``None``: main): it runs on
it, :func:`rerun` (from any process) runs it on it again, two jobs of one kind on one table
are duplicates only on the same branch, and a compaction resumes only a checkpoint of its
own branch.

Kinds: :data:`KINDS`, each registered (:func:`register_kind`) by the module that does its
work, imported with the services package: ``compact``, ``optimize``, ``cleanup``
(``backend.services.maintenance.table_jobs``), ``create_index``
(``backend.services.build_jobs``), ``build_ab``: a comparison of vector index builds on a
scratch copy (``backend.services.tuning.ab_jobs``), ``plan``: a namespace's maintenance plan
(``backend.services.maintenance.plan_jobs``). Executors: :data:`EXECUTORS` (``local``; ``ray``
when the ``[ray]`` extra is importable: registered at import, loaded at its first use, so that
importing this module never imports Ray); :func:`register_executor` adds one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.util
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from lance_namespace.errors import ErrorCode, LanceNamespaceError

from .. import html_tables, redaction
from ..branch_view import branch_name, branch_of, on_branch, unbranched
from ..errors import OperationStopped, describe_error, error_from_code, invalid, make
from ..gate import Actor, GatedNamespace, long_operations, recorded, refusals
from ..local.job_store import JobStore, open_job_store
from ..local.left_out import LeftOut
from ..rules import ids
from ..spec.fields import is_number, is_texts

LOG = logging.getLogger(__name__)


QUEUED, RUNNING, SUCCEEDED, FAILED, INTERRUPTED, CANCELLED = (
    "queued",
    "running",
    "succeeded",
    "failed",
    "interrupted",
    "cancelled",
)
STATES: tuple[str, ...] = (QUEUED, RUNNING, SUCCEEDED, FAILED, INTERRUPTED, CANCELLED)
ACTIVE: frozenset[str] = frozenset({QUEUED, RUNNING})
ANY_BRANCH = "*"  # list_jobs: the jobs of every branch (not a branch name)
MAX_RECORDS = 500  # finished jobs beyond this many (the oldest) are forgotten at a submit

HOST = socket.gethostname()
PROCESS_TOKEN = uuid.uuid4().hex  # this process, told from a later one with the same pid


def _env_seconds(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


def heartbeat_seconds() -> float:
    """How often a running job's record is rewritten (``LANCE_CONSOLE_JOB_HEARTBEAT``, 2 s)."""
    return _env_seconds("LANCE_CONSOLE_JOB_HEARTBEAT", 2.0)


def stale_seconds() -> float:
    """A job with no heartbeat for this long is interrupted whatever host ran it
    (``LANCE_CONSOLE_JOB_STALE``, 60 s; at least three heartbeats)."""
    return max(_env_seconds("LANCE_CONSOLE_JOB_STALE", 60.0), 3 * heartbeat_seconds())


def worker_count() -> int:
    """Jobs the local executor runs at once in one process (``LANCE_CONSOLE_JOB_WORKERS``,
    2); the others wait, ``queued``."""
    try:
        return max(1, int(os.environ.get("LANCE_CONSOLE_JOB_WORKERS", "2")))
    except ValueError:
        return 2


def _process_start(pid: int) -> str | None:
    """The start time of process ``pid`` (Linux: ``/proc/<pid>/stat``), to tell a process
    from a later one given the same pid; ``None`` where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


PROCESS_START = _process_start(os.getpid())


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: it exists
    except OSError:
        return False
    return True


# -- the job ----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Job(html_tables.FieldsTable):
    """A job as its record says, with the state derived from it (see the module docstring).
    Times are epoch seconds; ``error`` is ``errors.describe_error`` of the failure (the user's
    terms, the engine's text apart); ``details`` what the kind shows of its progress."""

    id: str
    kind: str
    table_id: tuple[str, ...] | None
    params: dict[str, Any]
    state: str
    who: str
    role: str | None = None
    label: str = ""
    executor: str = "local"
    executor_options: dict[str, Any] = dataclasses.field(default_factory=dict)
    branch: str | None = None  # the branch it acts on (None: main)
    note: str | None = None  # what its executor cannot do (no progress, no cancel...)
    created_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    heartbeat_at: float | None = None
    stage: str | None = None
    fraction: float | None = None
    result: Any = None
    error: dict[str, Any] | None = None
    stopped: str | None = None  # "cancelled" | "timed out": why a stopped job stopped
    interrupted: str | None = None  # why the job is reported interrupted
    cancel_requested: bool = False
    cancellable: bool = True
    host: str = ""
    pid: int | None = None
    rerun_of: str | None = None
    resumed_from: str | None = None
    has_checkpoint: bool = False
    details: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def done(self) -> bool:
        return self.state not in ACTIVE

    @property
    def elapsed(self) -> float:
        """Seconds since it started (or was queued), up to its end or last heartbeat."""
        start = self.started_at or self.created_at
        end = self.finished_at or (self.heartbeat_at if self.done else time.time())
        return max(0.0, (end or start) - start)

    @property
    def target(self) -> str:
        return "/".join(self.table_id) if self.table_id else ""

    @property
    def error_text(self) -> str | None:
        """The failure in one line of the user's terms (``None``: no failure)."""
        if not self.error:
            return None
        title, message = self.error.get("title"), self.error.get("message")
        return f"{title}: {message}" if title and message else str(message or title or "")

    def exception(self) -> LanceNamespaceError | None:
        """The failure as a namespace error again, for the UI's error display (its engine
        text kept apart); an interruption or a stop too."""
        if self.state == INTERRUPTED and self.interrupted:
            return make(ErrorCode.SERVICE_UNAVAILABLE, self.interrupted)
        if not self.error:
            return None
        if self.stopped:
            return OperationStopped(str(self.error.get("message") or ""), self.stopped)
        err = error_from_code(
            self.error.get("code"),
            str(self.error.get("message") or ""),
            detail=self.error.get("detail"),
        )
        if self.error.get("engine_message"):
            err.engine_message = self.error["engine_message"]  # type: ignore[attr-defined]
        return err

    @classmethod
    def from_record(
        cls,
        record: Mapping[str, Any],
        now: float | None = None,
        live: Collection[str] | None = None,
    ) -> Job:
        """The job of ``record``. ``live``: the ids of this process's jobs still running
        when the record was read, taken before the read (see :func:`_live_ids`); default:
        now."""
        why = _interruption(record, time.time() if now is None else now, live)
        fields = {f.name for f in dataclasses.fields(cls)}
        data = {k: v for k, v in record.items() if k in fields}
        table = record.get("table_id")
        data["table_id"] = tuple(table) if isinstance(table, list) else None
        data["params"] = dict(record.get("params") or {})
        data["details"] = dict(record.get("details") or {})
        data["executor_options"] = dict(record.get("executor_options") or {})
        data["has_checkpoint"] = bool(record.get("checkpoint"))
        if why is not None:
            data["state"] = INTERRUPTED
            data["interrupted"] = why
        return cls(**data)


def _interruption(
    record: Mapping[str, Any], now: float, live: Collection[str] | None = None
) -> str | None:
    """Why a job the record says is queued or running is not (``None``: it may be).
    ``live``: this process's running jobs, taken before ``record`` was read."""
    if record.get("state") not in ACTIVE:
        return None
    host, pid = record.get("host"), record.get("pid")
    where = f"pid {pid} on {host}"
    if host == HOST and isinstance(pid, int):
        if record.get("process") == PROCESS_TOKEN:
            if record.get("id") in (_live_ids() if live is None else live):
                return None
            return f"its thread in this console process ({where}) ended without an outcome"
        if pid == os.getpid() or not _pid_alive(pid):
            return f"the process that ran it ({where}) has ended"
        started = record.get("process_start")
        if started and _process_start(pid) not in (None, started):
            return f"the process that ran it ({where}) has ended"
    beat = record.get("heartbeat_at") or record.get("created_at") or 0
    if now - float(beat) > stale_seconds():
        return f"no sign of life from the process that ran it ({where}) for {now - beat:.0f} s"
    return None


# -- what a kind's work sees ------------------------------------------------------------------------


class JobContext:
    """What a kind's function gets besides the namespace, the table and the parameters: a
    way to report progress (:meth:`progress`, :meth:`details`, :meth:`snapshot`), keep a
    checkpoint for a later run (:meth:`checkpoint`; the earlier run's is :attr:`resume`),
    and learn that the job was cancelled (:attr:`cancelled`, :meth:`check`,
    :meth:`on_cancel`)."""

    def __init__(self, run: _Run) -> None:
        self._run = run
        self.job_id: str = run.job_id
        self.kind: str = run.record["kind"]
        self.executor: str = run.record.get("executor") or "local"
        self.executor_options: dict[str, Any] = dict(run.options)
        self.resume: dict[str, Any] | None = run.record.get("resume")

    def progress(self, stage: str | None = None, fraction: float | None = None) -> None:
        """Where the job is: ``stage`` in words, ``fraction`` done (``None``: not known). A new
        stage is written to the record at once (at most once a second), the rest at the
        next heartbeat."""
        with self._run.lock:
            changed = stage is not None and str(stage) != self._run.stage
            if stage is not None:
                self._run.stage = str(stage)
            self._run.fraction = None if fraction is None else max(0.0, min(1.0, float(fraction)))
        if changed:
            self._run.flush_soon()

    def details(self, **fields: Any) -> None:
        with self._run.lock:
            self._run.details.update(_jsonable(fields))

    def snapshot(self, provider: Callable[[], Mapping[str, Any]]) -> None:
        """``provider()`` is asked at every heartbeat and at the end for ``stage``,
        ``fraction`` and ``details`` (e.g. an index build's stages, kept by its own tracker)."""
        self._run.providers.append(provider)

    def checkpoint(self, data: Mapping[str, Any]) -> None:
        with self._run.lock:
            self._run.checkpoint = _jsonable(dict(data))

    @property
    def cancelled(self) -> bool:
        return self._run.cancel.is_set()

    def check(self) -> None:
        """``OperationStopped`` once the job was cancelled."""
        if self.cancelled:
            raise OperationStopped(f"the {self.kind} job {self.job_id} was cancelled", "cancelled")

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` when the job is cancelled (at once when it already is)."""
        self._run.callbacks.append(callback)
        if self.cancelled:
            callback()


KindFn = Callable[[Any, "tuple[str, ...] | None", dict[str, Any], JobContext], Any]


@dataclasses.dataclass(frozen=True)
class Kind:
    """A kind of job: ``fn(ns, table_id, params, ctx)`` does the work and returns its result
    (made JSON); ``operation`` names the gate operation whose role it needs (or computes it
    from the parameters); ``validate(ns, table_id, params)`` returns the parameters checked
    and normalised, or raises a namespace error in the user's terms; ``supported(ns)`` says
    why the namespace cannot run it (``None``: it can); ``cancellable(ns)`` whether a running
    job of it can be stopped; ``key(params)`` tells jobs of one table apart (two with the
    same key never run at once: an index name); ``needs_table``: its target is a table
    (``False``: a namespace id or nothing, e.g. a maintenance plan)."""

    name: str
    fn: KindFn
    operation: str | Callable[[Mapping[str, Any]], str]
    label: str
    validate: Callable[[Any, tuple[str, ...] | None, dict[str, Any]], dict[str, Any]] | None = None
    supported: Callable[[Any], str | None] | None = None
    cancellable: bool | Callable[[Any], bool] = True
    key: Callable[[Mapping[str, Any]], str | None] | None = None
    needs_table: bool = True

    def operation_for(self, params: Mapping[str, Any]) -> str:
        return self.operation(params) if callable(self.operation) else self.operation

    def can_cancel(self, ns: Any) -> bool:
        return bool(self.cancellable(ns) if callable(self.cancellable) else self.cancellable)


KINDS: dict[str, Kind] = {}


def register_kind(
    name: str,
    fn: KindFn,
    *,
    operation: str | Callable[[Mapping[str, Any]], str],
    label: str | None = None,
    validate: Callable[[Any, tuple[str, ...] | None, dict[str, Any]], dict[str, Any]] | None = None,
    supported: Callable[[Any], str | None] | None = None,
    cancellable: bool | Callable[[Any], bool] = True,
    key: Callable[[Mapping[str, Any]], str | None] | None = None,
    needs_table: bool = True,
) -> Kind:
    """Add (or replace) a kind of job (:class:`Kind` says what each argument is)."""
    kind = Kind(
        name, fn, operation, label or name.replace("_", " "), validate, supported, cancellable,
        key, needs_table,
    )  # fmt: skip
    KINDS[name] = kind
    return kind


def only_keys(kind: str, params: Mapping[str, Any], allowed: Iterable[str]) -> None:
    """``InvalidInputError`` when ``params`` (of a ``kind`` job) has a key not in ``allowed``:
    for a kind's ``validate``."""
    known = set(allowed)
    unknown = sorted(set(params) - known)
    if unknown:
        takes = f"takes {', '.join(sorted(known))}" if known else "takes no parameters"
        raise invalid(f"a {kind} job {takes}; {', '.join(unknown)} is not one of them")


# -- executors --------------------------------------------------------------------------------------


class Executor:
    """Where jobs run. The local executor runs each in a thread of this process, at most
    :func:`worker_count` at once. Another (the ``ray`` one) overrides :meth:`check` (its
    options, e.g. ``ray_address``), :meth:`implementation` (the work of a kind on it) and
    may override :meth:`supported`, :meth:`admit` (a job it cannot run, refused before
    anything is recorded), :meth:`cancellable`, :meth:`note` and :meth:`start`; the record,
    heartbeats, cancel and outcome stay this module's (``run()`` does them)."""

    name = "local"

    def __init__(self) -> None:
        self._slots = threading.BoundedSemaphore(worker_count())

    def check(self, kind: Kind, options: Mapping[str, Any]) -> dict[str, Any]:
        """The executor's options checked (``InvalidInputError`` otherwise)."""
        if options:
            raise invalid(
                f"the {self.name} executor takes no options, got {', '.join(sorted(options))}"
            )
        return {}

    def supported(self, kind: Kind, ns: Any) -> str | None:
        """Why ``ns`` cannot run ``kind`` on this executor (``None``: it can)."""
        return kind.supported(ns) if kind.supported is not None else None

    def admit(
        self, ns: Any, kind: Kind, target: tuple[str, ...] | None, params: Mapping[str, Any]
    ) -> None:
        """Refuse (a namespace error) a job this executor cannot run, its parameters checked;
        nothing is recorded yet."""

    def cancellable(self, kind: Kind, ns: Any) -> bool:
        """Whether a running job of ``kind`` can be stopped on this executor."""
        return kind.can_cancel(ns)

    def note(self, kind: Kind) -> str | None:
        """What the job's record says this executor does not give (``None``: nothing)."""
        return None

    def implementation(self, kind: Kind) -> KindFn:
        return kind.fn

    def start(self, run: Callable[[], None], job_id: str) -> None:
        def work() -> None:
            with self._slots:
                run()

        threading.Thread(target=work, daemon=True, name=f"job-{job_id}").start()


class ExtraExecutor(Executor):
    """The executor of an extra, registered at import when the extra's packages are importable
    and loaded from ``module`` (its ``executor()``) at first use: importing this module
    imports none of them (``import ray`` takes seconds)."""

    def __init__(self, name: str, module: str) -> None:
        self.name = name
        self._module = module
        self._loaded: Executor | None = None
        self._lock = threading.Lock()

    def loaded(self) -> Executor:
        with self._lock:
            if self._loaded is None:
                self._loaded = importlib.import_module(self._module).executor()
            return self._loaded

    def check(self, kind: Kind, options: Mapping[str, Any]) -> dict[str, Any]:
        return self.loaded().check(kind, options)

    def supported(self, kind: Kind, ns: Any) -> str | None:
        return self.loaded().supported(kind, ns)

    def admit(
        self, ns: Any, kind: Kind, target: tuple[str, ...] | None, params: Mapping[str, Any]
    ) -> None:
        self.loaded().admit(ns, kind, target, params)

    def cancellable(self, kind: Kind, ns: Any) -> bool:
        return self.loaded().cancellable(kind, ns)

    def note(self, kind: Kind) -> str | None:
        return self.loaded().note(kind)

    def implementation(self, kind: Kind) -> KindFn:
        return self.loaded().implementation(kind)

    def start(self, run: Callable[[], None], job_id: str) -> None:
        self.loaded().start(run, job_id)


EXECUTORS: dict[str, Executor] = {"local": Executor()}
# Executors that come with an extra: what to install for them, the packages that must be
# importable, and the module whose ``executor()`` makes it.
EXTRA_EXECUTORS: dict[str, str] = {
    "ray": "the Ray executor needs the [ray] extra: pip install 'lance-namespace-console[ray]'",
}
EXTRA_MODULES: dict[str, tuple[tuple[str, ...], str]] = {
    "ray": (("ray", "lance_ray"), "backend.services.ray_executor"),
}


def register_executor(name: str, executor: Executor) -> None:
    """Make ``executor`` available as ``submit(..., executor=name)``."""
    EXECUTORS[name] = executor


def _importable(*modules: str) -> bool:
    """Whether every module can be imported (found, not imported)."""
    try:
        return all(importlib.util.find_spec(m) is not None for m in modules)
    except (ImportError, ValueError):
        return False


def _register_extras() -> None:
    for name, (packages, module) in EXTRA_MODULES.items():
        if name not in EXECUTORS and _importable(*packages):
            register_executor(name, ExtraExecutor(name, module))


def _executor(name: str) -> Executor:
    if not isinstance(name, str):
        raise invalid(f"an executor is named by a text, got {name!r}")
    found = EXECUTORS.get(name)
    if found is not None:
        return found
    if name in EXTRA_EXECUTORS:
        raise make(ErrorCode.UNSUPPORTED, EXTRA_EXECUTORS[name])
    raise invalid(f"unknown executor {name!r} (executors: {', '.join(sorted(EXECUTORS))})")


# -- running ----------------------------------------------------------------------------------------

_LIVE: dict[str, _Run] = {}  # the jobs of this process not finished yet
_LIVE_LOCK = threading.Lock()
_BEATING = threading.Event()  # the heartbeat thread runs


def _live_ids() -> frozenset[str]:
    """The ids of this process's jobs not finished yet. Taken before a record is read: a
    job of this process whose thread ends between the read and the check would otherwise
    read interrupted (its record read while it ran, its thread gone when checked)."""
    with _LIVE_LOCK:
        return frozenset(_LIVE)


def _jsonable(value: Any) -> Any:
    """``value`` as JSON data (pydantic models, dataclasses and frames as their fields)."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", exclude_none=True)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    elif hasattr(value, "to_dict") and hasattr(value, "columns"):
        value = value.to_dict("records")
    return json.loads(json.dumps(value, default=str))


def _with_retries(fn: Callable[[], Any], attempts: int = 3) -> Any:
    for attempt in range(attempts):
        try:
            return fn()
        except Exception:  # noqa: BLE001 - an object store that blinks: try again
            if attempt == attempts - 1:
                raise
            time.sleep(0.2 * (attempt + 1))
    return None


class _Run:
    """One job of this process: its progress in memory, written to the record at every
    heartbeat and at the end."""

    def __init__(
        self,
        ns: Any,
        store: JobStore,
        record: dict[str, Any],
        fn: KindFn,
        options: Mapping[str, Any],
    ) -> None:
        self.ns = ns
        self.store = store
        self.record = record
        self.job_id: str = record["id"]
        self.fn = fn
        self.options = dict(options)
        self.lock = threading.Lock()
        self.stage: str | None = "queued"
        self.fraction: float | None = None
        self.details: dict[str, Any] = {}
        self.checkpoint: dict[str, Any] | None = None
        self.providers: list[Callable[[], Mapping[str, Any]]] = []
        self.callbacks: list[Callable[[], None]] = []
        self.cancel = threading.Event()
        self.done = threading.Event()
        self.told_at = float("-inf")  # when :meth:`flush_soon` last wrote

    def request_cancel(self) -> None:
        if self.cancel.is_set():
            return
        self.cancel.set()
        for callback in list(self.callbacks):
            with contextlib.suppress(Exception):
                callback()

    def _progress_fields(self) -> dict[str, Any]:
        for provider in self.providers:
            with contextlib.suppress(Exception):  # a display that breaks must not stop the job
                shown = dict(provider())
                with self.lock:
                    if "stage" in shown:
                        self.stage = shown["stage"]
                    if "fraction" in shown:
                        self.fraction = shown["fraction"]
                    self.details.update(_jsonable(shown.get("details") or {}))
        with self.lock:
            out: dict[str, Any] = {
                "stage": self.stage,
                "fraction": self.fraction,
                "details": dict(self.details),
                "heartbeat_at": time.time(),
            }
            if self.checkpoint is not None:
                out["checkpoint"] = self.checkpoint
        return out

    def flush_soon(self) -> None:
        """:meth:`flush` now, unless the last one this asked for was less than a second ago."""
        now = time.monotonic()
        if now - self.told_at < 1.0:
            return
        self.told_at = now
        with contextlib.suppress(Exception):  # the next heartbeat tries again
            self.flush()

    def flush(self, **extra: Any) -> None:
        """Write the progress and a heartbeat (and ``extra``) to the record while it is
        active; pick up a cancel request."""
        fields = {**self._progress_fields(), **extra}

        def change(record: dict[str, Any] | None) -> dict[str, Any] | None:
            if record is None or record.get("state") not in ACTIVE:
                return None
            return {**record, **fields}

        self.store.update(self.job_id, change)
        if not self.cancel.is_set() and self.store.cancel_requested(self.job_id):
            self.request_cancel()

    def finish(self, state: str, **fields: Any) -> None:
        now = time.time()
        final = {**self._progress_fields(), **fields, "state": state, "finished_at": now}
        if state == SUCCEEDED:
            final["fraction"] = 1.0
            final["checkpoint"] = None  # nothing to resume

        def change(record: dict[str, Any] | None) -> dict[str, Any]:
            return {**(record or self.record), **final}

        _with_retries(lambda: self.store.update(self.job_id, change))

    def run(self) -> None:
        """The job, start to end: running, the kind's work inside the gate's long
        operations, the outcome recorded (never raises)."""
        try:
            if self.cancel.is_set() or self.store.cancel_requested(self.job_id):
                self.finish(
                    CANCELLED, stopped="cancelled", error=_stopped_error("before it started")
                )
                return
            with self.lock:
                self.stage = "starting"
            self.flush(state=RUNNING, started_at=time.time())
            context = JobContext(self)
            table = self.record.get("table_id")
            with long_operations():
                result = self.fn(
                    self.ns,
                    tuple(table) if table is not None else None,
                    dict(self.record.get("params") or {}),
                    context,
                )
        except OperationStopped as err:
            state = CANCELLED if err.reason == "cancelled" else FAILED
            self._finish_safely(state, stopped=err.reason, error=describe_error(err))
        except BaseException as err:  # noqa: BLE001 - the outcome is the record's
            self._finish_safely(FAILED, error=describe_error(err))
        else:
            self._finish_safely(SUCCEEDED, result=_jsonable(result), stage="done")
        finally:
            with _LIVE_LOCK:
                _LIVE.pop(self.job_id, None)
            self.done.set()

    def _finish_safely(self, state: str, **fields: Any) -> None:
        with contextlib.suppress(Exception):  # the store is gone: the job reads interrupted
            self.finish(state, **fields)


def _stopped_error(when: str) -> dict[str, Any]:
    return describe_error(OperationStopped(f"cancelled {when}; nothing was done", "cancelled"))


def _beat_forever() -> None:
    while True:
        time.sleep(heartbeat_seconds())
        with _LIVE_LOCK:
            runs = list(_LIVE.values())
        for run in runs:
            with contextlib.suppress(Exception):  # the next beat tries again
                run.flush()


def _start_heartbeat() -> None:
    with _LIVE_LOCK:
        if _BEATING.is_set():
            return
        _BEATING.set()
    threading.Thread(target=_beat_forever, daemon=True, name="job-heartbeat").start()


# -- the API ----------------------------------------------------------------------------------------


def _gated(ns: Any) -> GatedNamespace | None:
    """The gate of ``ns`` (seen through a branch view), or ``None``."""
    found = unbranched(ns)
    return found if isinstance(found, GatedNamespace) else None


def _actor(ns: Any) -> tuple[str, str | None]:
    gated = _gated(ns)
    if gated is not None:
        return gated.actor.user, gated.actor.role
    actor = Actor.os_user()
    return actor.user, actor.role


def _check_read(ns: Any) -> None:
    gated = _gated(ns)
    if gated is not None:
        gated.check("list_jobs")


def _job_branch(ns: Any, params: Mapping[str, Any]) -> str | None:
    """The branch a job acts on: the one its parameters name (an index build's request), else
    a branch view's; ``None``: main."""
    named = params.get("branch") if isinstance(params, Mapping) else None
    return branch_name(named) if named else branch_of(ns)


def _kind(name: str) -> Kind:
    found = KINDS.get(name)
    if found is None:
        raise invalid(f"unknown job kind {name!r} (kinds: {', '.join(sorted(KINDS))})")
    return found


def _target(kind: Kind, table_id: Sequence[str] | None) -> tuple[str, ...] | None:
    if kind.needs_table:
        return tuple(ids.check_id(table_id))
    return (
        None
        if table_id is None
        else tuple(ids.check_id(table_id, what="namespace", allow_root=True))
    )


_TEXT_FIELDS = ("who", "role", "label", "executor", "branch", "note", "stage", "stopped")
_TIME_FIELDS = ("created_at", "started_at", "finished_at", "heartbeat_at", "fraction")
_MAPPING_FIELDS = ("params", "details", "executor_options", "error")


def record_problem(record: Any) -> str | None:
    """Why a job record cannot be read as a job (``None``: it can). The records are files
    in the namespace's folder, which other writers and tools reach too: a damaged one is
    left out of the lists (and said so where it is asked for by id), so that one record does
    not stop every job of the namespace from being listed or submitted."""
    if not isinstance(record, Mapping):
        return "it is not a record"
    for name in ("id", "kind", "state"):
        if not isinstance(record.get(name), str) or not record.get(name):
            return f"its {name} is not a text"
    for name in _TEXT_FIELDS:
        if record.get(name) is not None and not isinstance(record.get(name), str):
            return f"its {name} is not a text"
    for name in _TIME_FIELDS:
        if record.get(name) is not None and not is_number(record.get(name)):
            return f"its {name} is not a number"
    for name in _MAPPING_FIELDS:
        if record.get(name) is not None and not isinstance(record.get(name), Mapping):
            return f"its {name} is not a mapping"
    if record.get("table_id") is not None and not is_texts(record.get("table_id")):
        return "its table is not a list of names"
    pid = record.get("pid")
    if pid is not None and (isinstance(pid, bool) or not isinstance(pid, int)):
        return "its pid is not a whole number"
    return None


_SKIPPED = LeftOut(LOG, "job record")  # left out of the lists, said once each


def _records(store: JobStore) -> list[dict[str, Any]]:
    """The job records of ``store`` newest first, those that cannot be read as jobs left out
    (:func:`record_problem`; a warning in the log, once each)."""
    out = []
    for record in store.list():
        problem = record_problem(record)
        if problem is None:
            out.append(record)
            continue
        _SKIPPED.say(f"{store.location}/{record.get('txn_id')}", problem)
    return sorted(out, key=lambda r: float(r.get("created_at") or 0), reverse=True)


def _prune(store: JobStore, records: list[dict[str, Any]]) -> None:
    finished = [r for r in records if r.get("state") not in ACTIVE]
    for old in finished[MAX_RECORDS:]:
        with contextlib.suppress(Exception):
            store.delete(old["id"])


def _busy(
    records: Iterable[dict[str, Any]],
    live: Collection[str],
    kind: Kind,
    target: Any,
    key: str | None,
    branch: str | None,
) -> Job | None:
    now = time.time()
    for record in records:
        if record.get("kind") != kind.name or record.get("state") not in ACTIVE:
            continue
        job = Job.from_record(record, now, live)
        if job.done or list(job.table_id or ()) != list(target or ()) or job.branch != branch:
            continue
        if kind.key is None or kind.key(job.params) == key:
            return job
    return None


def _resume_point(
    records: Iterable[dict[str, Any]],
    live: Collection[str],
    kind: str,
    target: Any,
    branch: str | None,
) -> dict[str, Any]:
    """The checkpoint of the latest job of ``kind`` on ``target`` (on ``branch``) when that
    job was interrupted or cancelled (a new run takes it over), else nothing."""
    now = time.time()
    for record in records:
        if record.get("kind") != kind or list(record.get("table_id") or ()) != list(target or ()):
            continue
        if (record.get("branch") or None) != branch:
            continue
        job = Job.from_record(record, now, live)
        if job.state in (INTERRUPTED, CANCELLED) and record.get("checkpoint"):
            return {"resume": record["checkpoint"], "resumed_from": job.id}
        return {}
    return {}


def submit(
    ns: Any,
    kind: str,
    table_id: Sequence[str] | None,
    params: Mapping[str, Any] | None = None,
    executor: str = "local",
    **executor_options: Any,
) -> Job:
    """Record a job of ``kind`` on ``table_id`` with ``params`` and start it on
    ``executor``; returns the job (its ``id``, state ``queued`` or already further). Bad
    input, an unsupported backend, the actor's role or a read-only launch: a namespace error
    in the user's terms, recorded as a refusal, and nothing written. ``ns`` a branch view:
    the job acts on its branch (and records it)."""
    return _submit(ns, kind, table_id, params, executor, executor_options)


def _submit(
    ns: Any,
    kind_name: str,
    table_id: Sequence[str] | None,
    params: Mapping[str, Any] | None,
    executor_name: str,
    executor_options: Mapping[str, Any],
    rerun_of: str | None = None,
) -> Job:
    with refusals(ns, "submit_job", {"kind": kind_name}, ids=list(table_id or [])):
        kind = _kind(kind_name)
        if params is not None and not isinstance(params, Mapping):
            raise invalid(f"the parameters of a {kind.name} job are a mapping, got {params!r}")
    given = dict(params or {})
    operation = kind.operation_for(given)
    request = {"kind": kind.name, "params": given}
    with refusals(ns, operation, request, ids=list(table_id or [])):
        target = _target(kind, table_id)
        gated = _gated(ns)
        if gated is not None:
            gated.check(operation, request)
        place = _executor(executor_name)
        options = place.check(kind, dict(executor_options))
        why = place.supported(kind, ns)
        if why:
            raise make(ErrorCode.UNSUPPORTED, why)
        checked = kind.validate(ns, target, given) if kind.validate is not None else given
        checked = _jsonable(checked)
        branch = _job_branch(ns, checked)
        place.admit(ns, kind, target, checked)
        store = open_job_store(ns)
        live = _live_ids()
        records = _records(store)
        key = kind.key(checked) if kind.key is not None else None
        running = _busy(records, live, kind, target, key, branch)
        if running is not None:
            where = f" on branch {branch}" if branch else ""
            raise make(
                ErrorCode.CONCURRENT_MODIFICATION,
                f"{running.label} of {running.target or 'the namespace'}{where} is already "
                f"{running.state} (job {running.id}, started by {running.who}); wait for it "
                "or cancel it",
            )
    who, role = _actor(ns)
    now = time.time()
    job_id = f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime(now))}-{uuid.uuid4().hex[:8]}"
    label = kind.label + (f" {key}" if key else "")
    record: dict[str, Any] = {
        "id": job_id,
        "kind": kind.name,
        "label": label,
        "table_id": list(target) if target is not None else None,
        "params": checked,
        "state": QUEUED,
        "who": who,
        "role": role,
        "executor": executor_name,
        "executor_options": redaction.redact_json(options),
        "branch": branch,
        "note": place.note(kind),
        "created_at": now,
        "heartbeat_at": now,
        "stage": "queued",
        "fraction": None,
        "host": HOST,
        "pid": os.getpid(),
        "process": PROCESS_TOKEN,
        "process_start": PROCESS_START,
        "cancellable": place.cancellable(kind, ns),
        "cancel_requested": False,
        "rerun_of": rerun_of,
        **_resume_point(records, live, kind.name, target, branch),
    }
    store.put(job_id, record)
    _prune(store, records)
    run = _Run(ns, store, record, place.implementation(kind), options)
    with _LIVE_LOCK:
        _LIVE[job_id] = run
    _start_heartbeat()
    try:
        place.start(run.run, job_id)
    except Exception as err:
        run._finish_safely(FAILED, error=describe_error(err))
        with _LIVE_LOCK:
            _LIVE.pop(job_id, None)
        run.done.set()
    return get(ns, job_id)


def get(ns: Any, job_id: str) -> Job:
    """The job ``job_id`` with its true state; ``InvalidInputError`` for an unknown one."""
    _check_read(ns)
    if not isinstance(job_id, str) or not job_id:
        raise invalid(f"a job id is a non-empty text, got {job_id!r}")
    store = open_job_store(ns)
    live = _live_ids()
    record = store.get(job_id)
    if record is None:
        raise invalid(f"there is no job {job_id} (the jobs of this namespace: {store.location})")
    if (problem := record_problem(record)) is not None:
        raise make(
            ErrorCode.INTERNAL,
            f"the record of job {job_id} cannot be read: {problem} (in {store.location})",
        )
    return Job.from_record(record, live=live)


def list_jobs(
    ns: Any,
    table_id: Sequence[str] | None = None,
    *,
    kinds: Iterable[str] | None = None,
    states: Iterable[str] | None = None,
    limit: int | None = None,
    branch: str | None = ANY_BRANCH,
) -> list[Job]:
    """The namespace's jobs, newest first, with their true states: of one table (a
    namespace's own jobs, such as a plan, only when ``kinds`` names them), of some kinds, in
    some states, on one ``branch`` (``None`` or ``"main"``: main; default: every branch), the
    first ``limit``."""
    _check_read(ns)
    on = branch if branch == ANY_BRANCH else branch_name(branch)
    wanted_kinds = set(kinds) if kinds is not None else None
    wanted_states = set(states) if states is not None else None
    if wanted_states is not None and not wanted_states <= set(STATES):
        unknown = ", ".join(sorted(wanted_states - set(STATES)))
        raise invalid(f"unknown job state {unknown} (states: {', '.join(STATES)})")
    target = list(table_id) if table_id is not None else None
    now = time.time()
    out: list[Job] = []
    live = _live_ids()
    for record in _records(open_job_store(ns)):
        if wanted_kinds is not None and record.get("kind") not in wanted_kinds:
            continue
        if target is not None and list(record.get("table_id") or []) != target:
            continue
        if target is not None and wanted_kinds is None:
            found = KINDS.get(str(record.get("kind")))
            if found is not None and not found.needs_table:
                continue  # a namespace's job, not a table's
        if on != ANY_BRANCH and (record.get("branch") or None) != on:
            continue
        try:
            job = Job.from_record(record, now, live)
        except (TypeError, ValueError):
            continue  # a record this version cannot read
        if wanted_states is not None and job.state not in wanted_states:
            continue
        out.append(job)
        if limit is not None and len(out) >= limit:
            break
    return out


def operation_of(job: Job) -> str:
    """The gate operation whose role the job's kind needs (to start, cancel or rerun it)."""
    found = KINDS.get(job.kind)
    return found.operation_for(job.params) if found is not None else "submit_job"


def cancel(ns: Any, job_id: str) -> Job:
    """Ask job ``job_id`` to stop (see the module docstring for where it stops); returns the
    job as it is now. A finished job, or a running one its kind cannot stop: a namespace
    error saying so. Needs the role the job's kind needs; audited (``cancel_job``)."""
    job = get(ns, job_id)
    operation = operation_of(job)
    request = {"job_id": job.id, "kind": job.kind}
    with refusals(ns, "cancel_job", request, ids=list(job.table_id or [])):
        gated = _gated(ns)
        if gated is not None:
            gated.check(operation, job.params)
        if job.done:
            raise invalid(f"job {job.id} ({job.label}) is {job.state}: there is nothing to cancel")
        if job.state == RUNNING and not job.cancellable:
            why = job.note or "lance gives no way to"
            raise make(
                ErrorCode.UNSUPPORTED,
                f"{job.label} of {job.target or 'the namespace'} cannot be stopped once it "
                f"started ({why}); it ends by itself",
            )
    who, _ = _actor(ns)
    store = open_job_store(ns)
    with recorded(ns, "cancel_job", request, ids=list(job.table_id or [])):
        store.request_cancel(job.id, who)

        def flag(record: dict[str, Any] | None) -> dict[str, Any] | None:
            if record is None or record.get("state") not in ACTIVE:
                return None
            return {**record, "cancel_requested": True, "stage": "cancelling"}

        store.update(job.id, flag)
    with _LIVE_LOCK:
        run = _LIVE.get(job.id)
    if run is not None:
        run.request_cancel()
    return get(ns, job.id)


def rerun(ns: Any, job_id: str) -> Job:
    """Run job ``job_id`` again with its kind, target, parameters, executor and branch (a
    finished, failed, cancelled or interrupted one), whatever branch ``ns`` is a view of; a
    compaction resumes from the tasks the earlier run finished. A job still queued or
    running: ``InvalidInputError``."""
    job = get(ns, job_id)
    if not job.done:
        raise invalid(f"job {job.id} ({job.label}) is still {job.state}: wait for it or cancel it")
    options = {k: v for k, v in job.executor_options.items() if not redaction.is_masked(v)}
    on = on_branch(ns, job.branch)
    return _submit(on, job.kind, job.table_id, job.params, job.executor, options, rerun_of=job.id)


def wait(ns: Any, job_id: str, timeout: float = 120.0) -> Job:
    """Block until job ``job_id`` is done (succeeded, failed, cancelled or interrupted);
    ``TimeoutError`` when it is not within ``timeout`` seconds."""
    deadline = time.monotonic() + float(timeout)
    while True:
        job = get(ns, job_id)
        if job.done:
            return job
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"{job.label} (job {job.id}) still {job.state} after {timeout} s")
        with _LIVE_LOCK:
            run = _LIVE.get(job_id)
        if run is not None:
            run.done.wait(min(left, 1.0))
        else:
            time.sleep(min(left, 0.25))


def annotate(ns: Any, job_id: str, **details: Any) -> None:
    """Add ``details`` to a job's record (what happened since: an index it built was
    dropped). Changes nothing of the namespace's data."""
    details = _jsonable(details)

    def change(record: dict[str, Any] | None) -> dict[str, Any] | None:
        if record is None:
            return None
        return {**record, "details": {**(record.get("details") or {}), **details}}

    open_job_store(ns).update(job_id, change)


_register_extras()


__all__ = [
    "ACTIVE",
    "ANY_BRANCH",
    "CANCELLED",
    "EXECUTORS",
    "EXTRA_EXECUTORS",
    "EXTRA_MODULES",
    "FAILED",
    "INTERRUPTED",
    "KINDS",
    "QUEUED",
    "RUNNING",
    "STATES",
    "SUCCEEDED",
    "Executor",
    "ExtraExecutor",
    "Job",
    "JobContext",
    "Kind",
    "annotate",
    "cancel",
    "get",
    "heartbeat_seconds",
    "list_jobs",
    "only_keys",
    "operation_of",
    "register_executor",
    "register_kind",
    "rerun",
    "stale_seconds",
    "submit",
    "wait",
    "worker_count",
]
