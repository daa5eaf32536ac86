"""Demo tools for the transaction demo: failures a presenter can show, and what the batch
protocol does about them. Admin only (``backend.access.DEMO_OPS``), audited, off unless called;
local backend (folders and object stores), never over REST.

* :func:`commit_with_fault` - commit a batch with a fault switched on, in a separate process
  (the protocol's fault points, ``backend.local.batch.faults``, are process-wide: a fault
  switched on in the console's own process would hit every user's commits):

  - :func:`fail_at_operation` ``(n)``: an I/O error is injected when the batch applies
    operation *n* (the operations before it are applied by then); the batch rolls itself back
    and reports the error;
  - :func:`kill_during_apply` ``(n=None)``: the committing process is killed (SIGKILL) when the
    batch applies operation *n*, or, by default, right before its commit point, when every
    change is on disk; recovery (run here, as the next open of the namespace would) rolls the
    batch back from its journal.

  The outcome (:class:`FaultOutcome`) holds every touched table's version, row count and
  version list before and after: ``unchanged`` says the batch left no trace.
* :func:`concurrent_append` - a second process appends rows to a table through lance directly
  (as another engine would, without the console's lock): run it between Validate and Commit,
  and the commit refuses the batch with ``ConcurrentModificationError`` and publishes nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lance_namespace import BatchCommitTablesRequest, ListTableVersionsRequest
from lance_namespace.errors import ErrorCode

from backend import gate
from backend.rules import batch_rules, ids

from ..errors import make
from ..local import LocalNamespace, batch
from ..local.batch import context
from ..local.batch.isolation import in_flight
from ..services import batch_builder, table_watch
from ..spec.paging import list_all

FAIL, KILL = "fail", "kill"
MODES = (FAIL, KILL)
COMMIT_POINT = "commit.record"  # the step that makes a batch count (file and object roots)
COMMIT_POINTS = (COMMIT_POINT, "commit.decide")  # file roots, object stores
DEMO_COMMIT = "demo_fault_commit"
DEMO_WRITER = "demo_concurrent_writer"
CHILD_LEASE_SECONDS = 2.0  # an object-store child's lease: recovery may take over soon after a kill
TIMEOUT = 120.0
# The protocol's steps that apply one operation, by kind (file roots and object stores).
_APPLY_PHASES = {
    batch_rules.DECLARE: ("apply.declare.mkdir", "apply.declare.reserve"),
    batch_rules.CREATE_VERSION: ("apply.version.link", "apply.version.put"),
    batch_rules.DELETE_VERSIONS: ("apply.delete.hide",),
    batch_rules.DEREGISTER: ("apply.catalog",),
}


@dataclass(frozen=True)
class Fault:
    """Where a demo batch fails. ``mode``: ``fail`` (an injected I/O error: the batch rolls
    back) or ``kill`` (the process dies: recovery rolls back). ``operation`` (from 1): when the
    batch applies that operation; else ``phase``: at the first step of that phase of the
    protocol (e.g. ``begin.journal``, ``apply.version.link``, ``commit.record``); else
    ``step``: the protocol's n-th file change."""

    mode: str
    operation: int | None = None
    phase: str | None = None
    step: int | None = None

    def describe(self) -> str:
        what = "an injected I/O error" if self.mode == FAIL else "the committing process killed"
        if self.operation is not None:
            return f"{what} while the batch applies operation {self.operation}"
        if self.phase == COMMIT_POINT:
            return f"{what} right before the commit point (every change on disk)"
        if self.phase:
            return f"{what} at {self.phase}"
        return f"{what} at step {self.step}"


def fail_at_operation(n: int) -> Fault:
    """An I/O error when the batch applies operation ``n`` (from 1)."""
    return Fault(FAIL, operation=int(n))


def kill_during_apply(operation: int | None = None) -> Fault:
    """The committing process killed when the batch applies ``operation`` (from 1), or, by
    default, right before its commit point."""
    if operation is None:
        return Fault(KILL, phase=COMMIT_POINT)
    return Fault(KILL, operation=int(operation))


def check_fault(fault: Fault, operations: int) -> None:
    """``InvalidInputError`` for a fault that cannot be placed in a batch of ``operations``."""
    if fault.mode not in MODES:
        raise make(ErrorCode.INVALID_INPUT, f"fault mode {fault.mode!r}: expected fail or kill")
    places = [p for p in (fault.operation, fault.phase, fault.step) if p is not None]
    if len(places) != 1:
        raise make(
            ErrorCode.INVALID_INPUT, "a fault is placed at one operation, one phase or one step"
        )
    if fault.operation is not None and not 1 <= fault.operation <= operations:
        raise make(
            ErrorCode.INVALID_INPUT,
            f"operation {fault.operation}: the batch has operations 1 to {operations}",
        )
    if fault.step is not None and fault.step < 1:
        raise make(ErrorCode.INVALID_INPUT, "steps are numbered from 1")


def _target(request: BatchCommitTablesRequest, n: int) -> tuple[tuple[str, ...], str, str | None]:
    """``(phases, object id, version)`` of the steps that apply operation ``n``."""
    ops, _ = batch_rules.operations_of(request)
    op = ops[n - 1]
    version = None
    if op.kind == batch_rules.CREATE_VERSION:
        version = str(op.request.version)
    return _APPLY_PHASES[op.kind], ids.object_id(op.table_id), version


def hook_for(fault: Fault, request: BatchCommitTablesRequest, on_fire: Any = None) -> Any:
    """The fault hook (``backend.local.batch.set_fault_hook``) that fires ``fault`` once:
    ``on_fire(step, phase, detail)`` first, then raise an I/O error or SIGKILL the process."""
    target = _target(request, fault.operation) if fault.operation is not None else None
    fired: list[bool] = []

    def matches(step: int, phase: str, detail: str) -> bool:
        if step == 0:
            return False  # named points outside the numbered steps
        if target is not None:
            phases, object_id, version = target
            if phase not in phases:
                return False
            if phase == "apply.catalog":
                return True
            if version is not None:
                return detail == f"{object_id} v{version}"
            return detail == object_id or detail.startswith(f"{object_id} v")
        if fault.phase == COMMIT_POINT:
            return phase in COMMIT_POINTS  # file roots' record flip, object stores' decision
        if fault.phase is not None:
            return phase == fault.phase
        return step == fault.step

    def hook(step: int, phase: str, detail: str) -> None:
        if fired or not matches(step, phase, detail):
            return
        fired.append(True)
        if on_fire is not None:
            on_fire(step, phase, detail)
        if fault.mode == KILL:
            os.kill(os.getpid(), signal.SIGKILL)
        raise OSError(5, f"demo fault: injected I/O error at {phase} {detail}".strip())

    return hook


# -- the child process ---------------------------------------------------------------------------
def _project_root() -> str:
    return str(Path(__file__).resolve().parents[2])


def _run_child(job: dict[str, Any], *, timeout: float, env: dict[str, str] | None = None) -> Any:
    """Run ``backend.demo.txn_child`` with ``job`` on stdin (storage options never on the
    command line); returns ``(returncode, answers)``: the JSON lines it printed."""
    child_env = {**os.environ, **(env or {})}
    child_env["PYTHONPATH"] = os.pathsep.join(
        p for p in (_project_root(), child_env.get("PYTHONPATH", "")) if p
    )
    child_env.setdefault("LANCE_LOG", "error")
    # run as a script, not ``-m``: an append imports lance only, not the backend package
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("txn_child.py"))],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env,
        check=False,
    )
    answers = []
    for line in proc.stdout.splitlines():
        with contextlib.suppress(ValueError):
            answers.append(json.loads(line))
    if not answers and proc.returncode not in (0, -signal.SIGKILL):
        tail = proc.stderr.strip().splitlines()[-1:] if proc.stderr else []
        raise make(
            ErrorCode.INTERNAL,
            f"the demo process stopped with exit code {proc.returncode}"
            + (f": {tail[0]}" if tail else ""),
        )
    return proc.returncode, answers


def _local(ns: Any) -> Any:
    inner = ns.inner if isinstance(ns, gate.GatedNamespace) else ns
    if not isinstance(inner, LocalNamespace) or inner.root.startswith("memory:"):
        raise make(
            ErrorCode.UNSUPPORTED,
            "the demo tools run a second process on the namespace's files: local backend only "
            "(a folder or an object store), not over REST or on memory://",
        )
    return inner


def _job(local: Any) -> dict[str, Any]:
    return {"root": local.root, "storage_options": dict(local.storage_options or {})}


# -- state of the tables ---------------------------------------------------------------------------
@dataclass(frozen=True)
class TableState:
    """A table as readers of the namespace see it: ``exists``, its version, row count and
    every version number."""

    exists: bool
    version: int | None = None
    rows: int | None = None
    versions: tuple[int, ...] = ()


def table_state(ns: Any, table_id: Sequence[str]) -> TableState:
    tid = list(table_id)
    reading = table_watch.poll(ns, [tid]).readings[0]
    if reading.error is not None:
        return TableState(False)
    listed = list_all(ns.list_table_versions, ListTableVersionsRequest(id=tid), "versions")
    return TableState(
        True, reading.version, reading.rows, tuple(sorted(int(v.version) for v in listed))
    )


def _touched(request: BatchCommitTablesRequest) -> list[tuple[str, ...]]:
    ops, _ = batch_rules.operations_of(request)
    return list(dict.fromkeys(tuple(op.table_id) for op in ops))


# -- commit with a fault ---------------------------------------------------------------------------
@dataclass(frozen=True)
class FaultOutcome:
    """What a demo commit with a fault did. ``fired``: where the fault fired (``None``: the
    batch never reached it and committed); ``killed``: the process died there; ``error``: what
    the commit raised (class and message); ``committed``: the batch passed its commit point;
    the transaction's ``status`` and ``reason`` after recovery; every touched table
    ``before`` and ``after``."""

    fault: Fault
    fired: str | None
    killed: bool
    committed: bool
    error_class: str | None
    error: str | None
    transaction_id: str | None
    status: str | None
    reason: str | None
    recovered: bool
    recovered_by_console: tuple[str, ...]
    before: dict[tuple[str, ...], TableState] = field(default_factory=dict)
    after: dict[tuple[str, ...], TableState] = field(default_factory=dict)

    @property
    def unchanged(self) -> bool:
        """Every touched table is as it was before the batch."""
        return self.before == self.after


def commit_with_fault(
    ns: Any,
    operations: Sequence[dict[str, Any]] | BatchCommitTablesRequest,
    fault: Fault,
    *,
    timeout: float = TIMEOUT,
) -> FaultOutcome:
    """Commit the batch in a separate process with ``fault`` switched on, recover, and say what
    happened (see the module docstring). A demo tool: an admin's write (``demo_fault_commit``),
    audited."""
    request = (
        operations
        if isinstance(operations, BatchCommitTablesRequest)
        else batch_builder.to_request(operations)
    )
    asked = {
        "operations": request.model_dump(mode="json", by_alias=True, exclude_none=True)[
            "operations"
        ],
        "fault": fault.describe(),
    }
    with gate.refusals(ns, DEMO_COMMIT, asked):
        local = _local(ns)
        check_fault(fault, len(request.operations or []))
    touched = _touched(request)
    with gate.recorded(ns, DEMO_COMMIT, asked) as out:
        before = {t: table_state(local, t) for t in touched}
        job = {
            **_job(local),
            "action": "commit",
            "request": request.model_dump(mode="json", by_alias=True, exclude_none=True),
            "fault": {
                "mode": fault.mode,
                "operation": fault.operation,
                "phase": fault.phase,
                "step": fault.step,
            },
        }
        env = {"LANCE_CONSOLE_LEASE_SECONDS": str(CHILD_LEASE_SECONDS)}
        code, answers = _run_child(job, timeout=timeout, env=env)
        fired = next((a for a in answers if "fired" in a), None)
        done: dict[str, Any] = next((a for a in answers if "done" in a), {})
        killed = code == -signal.SIGKILL
        txn = (fired or {}).get("transaction_id") or done.get("transaction_id")
        recovered = _recover(local, batch, txn) if killed else ()
        record = _record(local, txn, (fired or done).get("pid"))
        txn = txn or (record or {}).get("txn_id")
        out["transaction_id"] = txn
        props = (record or {}).get("properties") or {}
        status = str((record or {}).get("status") or "").upper() or None
        local._open_tables.clear()
        after = {t: table_state(local, t) for t in touched}
        return FaultOutcome(
            fault=fault,
            fired=(fired or {}).get("fired"),
            killed=killed,
            committed=status == "SUCCEEDED",
            error_class=done.get("error_class"),
            error=done.get("error"),
            transaction_id=txn,
            status=status,
            reason=props.get("reason"),
            recovered=str(props.get("recovered", "")).lower() == "true",
            recovered_by_console=tuple(recovered),
            before=before,
            after=after,
        )


def _recover(local: Any, batch: Any, txn: str | None, *, wait: float = 30.0) -> list[str]:
    """Recovery after a kill, as the next open of the namespace runs it; on an object store
    it waits for the dead process's lease to expire (``CHILD_LEASE_SECONDS``)."""
    done: list[str] = []
    deadline = time.monotonic() + wait
    while True:
        done += batch.recover(local)
        if not _pending(local, txn) or time.monotonic() > deadline:
            return done
        time.sleep(0.25)


def _pending(local: Any, txn: str | None) -> bool:
    view = in_flight(context(local, catalog_only=True))
    return bool(view.transactions) if txn is None else txn in view.transactions


def _record(local: Any, txn: str | None, pid: int | None) -> dict[str, Any] | None:
    store = local.txn_store
    if txn:
        return store.get(txn)
    if pid is None:
        return None
    mine = [
        r
        for r in store.list()
        if str((r.get("properties") or {}).get("committer", "")).endswith(f":{pid}")
    ]
    return max(mine, key=lambda r: r.get("updated_at") or 0) if mine else None


# -- a concurrent writer ---------------------------------------------------------------------------
@dataclass(frozen=True)
class AppendDone:
    """What the second process appended: ``rows`` rows (copies of the table's first rows) as
    ``version``."""

    table_id: tuple[str, ...]
    version: int
    rows: int


def concurrent_append(
    ns: Any, table_id: Sequence[str], *, rows: int = 1, timeout: float = TIMEOUT
) -> AppendDone:
    """A second process appends ``rows`` copies of the table's first rows through lance
    directly, as another engine would (without the console's lock), and waits for it. Between
    a batch's Validate and its Commit this makes the commit refuse the batch
    (``ConcurrentModificationError``). A demo tool: an admin's write
    (``demo_concurrent_writer``), audited."""
    tid = [str(p) for p in table_id]
    asked = {"id": tid, "rows": rows}
    with gate.refusals(ns, DEMO_WRITER, asked):
        local = _local(ns)
        ids.check_id(tid)
        if not isinstance(rows, int) or isinstance(rows, bool) or not 1 <= rows <= 1000:
            raise make(ErrorCode.INVALID_INPUT, "rows: 1 to 1,000 rows to append")
        location = local.table_location(tid)
    with gate.recorded(ns, DEMO_WRITER, asked):
        job = {**_job(local), "action": "append", "location": location, "rows": rows}
        _, answers = _run_child(job, timeout=timeout)
        done: dict[str, Any] = next((a for a in answers if "done" in a), {})
        if done.get("error"):
            raise make(ErrorCode.INTERNAL, f"the concurrent writer failed: {done['error']}")
        if "version" not in done:
            raise make(ErrorCode.INTERNAL, "the concurrent writer answered nothing")
        local._open_tables.clear()
        return AppendDone(tuple(tid), int(done["version"]), int(done["rows"]))
