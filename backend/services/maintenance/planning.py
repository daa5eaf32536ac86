"""A namespace's maintenance plan (a dry run) and running it.

:func:`plan` reads every table of a namespace (``health.table_health`` with the thresholds of
the table's rules, no scan of the data) and decides, per table and per kind that is on for
it, whether the policy calls for it and why:

* ``compact``: the health verdict's compaction action under the policy's thresholds (the
  share of small fragments, of deleted rows, and lance's compaction plan, which must have a
  task): its reason and its expected effect are health's;
* ``optimize``: an index misses more than the policy's share of the rows (health's figures);
* ``cleanup``: lance's own dry run, ``explain_cleanup_old_versions(older_than=N days)``
  (tagged versions kept), finds old versions to remove, with the bytes they hold; over REST
  the versions listing and the tags (``lifecycle.cleanup_plan``) say which versions are
  older than N days.

A step the policy calls for may be blocked: over REST the spec has no operation for any of
the three (``tuning.optimize.MAINTENANCE_UNSUPPORTED``), and a gated namespace says when the actor's
role (cleanup is an admin's) or a read-only connection refuses it.

:func:`run_plan` runs the steps the policy calls for, table by table (optimize, then compact,
then cleanup: :data:`RUN_ORDER`), each through its service function (``tuning.optimize.compact_files``,
``optimize_indexes``, ``cleanup_old_versions``: the gate checks and records each one), and
reports each step: ``done`` with what it changed, ``failed`` or ``refused`` with the error in
the user's terms, ``skipped`` (blocked). One table's failure does not stop the others. It is a
plain function taking ``progress(stage, fraction)``, ``stop()`` (asked before each table: the
run ends there, the remaining tables untouched) and ``on_result(result)`` (each step's result
as it comes), so a job system runs a plan as one job (``.jobs``: the ``plan`` kind of
``backend.services.jobs``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd
from lance_namespace import LanceNamespace
from lance_namespace.errors import LanceNamespaceError, PermissionDeniedError

from backend.errors import describe_error
from backend.rules import ids
from backend.text import human_bytes, plural

from ... import capabilities
from .. import health, lifecycle
from .. import namespaces as nsv
from ..tuning.optimize import (
    MAINTENANCE_UNSUPPORTED,
    cleanup_old_versions,
    compact_files,
    optimize_indexes,
)
from ..versions import VersionFacts
from .policy import CLEANUP, COMPACT, KINDS, OPTIMIZE, CleanupRule, Policy, Rules, policy_from_dict
from .store import SavedPolicy, check_scope, load_policy

Progress = Callable[[str, float], None]

# The console's operation behind each kind (the gate's classification: ``backend.access``).
OPERATIONS = {
    COMPACT: "compact_files",
    OPTIMIZE: "optimize_indexes",
    CLEANUP: "cleanup_old_versions",
}
DONE, FAILED, REFUSED, SKIPPED = "done", "failed", "refused", "skipped"
# The order of a table's steps: the indexes first (lance's compaction keeps fragments an index
# covers apart from those it does not, so compacting after the optimize leaves fewer
# fragments), then the compaction, then the cleanup (which then also removes the files the
# compaction replaced, once they are older than the days kept).
RUN_ORDER = (OPTIMIZE, COMPACT, CLEANUP)


@dataclass(frozen=True)
class Step:
    """One kind of maintenance for one table: whether the policy calls for it (``run``),
    why (or why not), its expected effect, and why it cannot run here (``blocked``)."""

    table_id: tuple[str, ...]
    kind: str
    run: bool
    reason: str
    effect: str | None = None
    blocked: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def table(self) -> str:
        return self.table_id[-1]


@dataclass(frozen=True)
class TableFigures:
    """What the plan read of one table (``None``: not known on this backend), or ``error``."""

    table_id: tuple[str, ...]
    rows: int | None = None
    fragments: int | None = None
    small_fragments: int | None = None
    deleted_rows: int | None = None
    deleted_share: float | None = None
    unindexed_rows: int | None = None  # the most any index misses
    unindexed_share: float | None = None
    versions: int | None = None
    old_versions: int | None = None  # what the cleanup would remove
    old_bytes: int | None = None
    note: str | None = None  # e.g. declared only
    error: str | None = None

    @property
    def small_share(self) -> float | None:
        if self.fragments is None or self.small_fragments is None:
            return None
        return self.small_fragments / self.fragments if self.fragments else 0.0


@dataclass(frozen=True)
class Plan:
    """A namespace's maintenance plan: the policy it applied (and where it came from), what
    it read of each table, and the steps."""

    namespace_id: tuple[str, ...]
    policy: Policy
    source: str  # "saved" | "default" | "given"
    tables: tuple[TableFigures, ...]
    steps: tuple[Step, ...]
    made_at: datetime
    backend: str = "local"

    @property
    def todo(self) -> list[Step]:
        """The steps the policy calls for (blocked ones included)."""
        return [s for s in self.steps if s.run]

    @property
    def runnable(self) -> list[Step]:
        return [s for s in self.steps if s.run and not s.blocked]

    @property
    def errors(self) -> dict[str, str]:
        """Table name -> why it could not be read."""
        return {t.table_id[-1]: t.error for t in self.tables if t.error}

    def frame(self) -> pd.DataFrame:
        """One row per step (and per table without any: why), with the table's figures."""
        figures = {t.table_id: t for t in self.tables}
        rows: list[dict[str, Any]] = []
        stepped = {s.table_id for s in self.steps}
        for step in self.steps:
            rows.append(_row(figures[step.table_id], step))
        for t in self.tables:
            if t.table_id not in stepped:
                rows.append(_row(t, None))
        frame = pd.DataFrame(rows, columns=list(PLAN_COLUMNS))
        for col in ("fragments", "small_fragments", "old_versions", "old_bytes"):
            frame[col] = frame[col].astype("Int64")
        for col in ("small_share", "deleted_share", "unindexed_share"):
            frame[col] = frame[col].astype("Float64")
        for col in ("effect", "blocked", "error"):
            frame[col] = frame[col].astype(object).where(frame[col].notna(), None)
        return frame

    def summary(self) -> str:
        todo, runnable = self.todo, self.runnable
        if not todo:
            text = f"nothing to do in {plural(len(self.tables), 'table')}"
        else:
            kinds = ", ".join(
                f"{sum(s.kind == k for s in todo)} {k}"
                for k in KINDS
                if any(s.kind == k for s in todo)
            )
            text = f"{plural(len(todo), 'action')} ({kinds}) in {plural(len(self.tables), 'table')}"
            if len(runnable) < len(todo):
                text += f"; {len(todo) - len(runnable)} cannot run here"
        if self.errors:
            text += f"; {plural(len(self.errors), 'table')} could not be read"
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (a job's parameters)."""
        return {
            "namespace_id": list(self.namespace_id),
            "policy": self.policy.to_dict(),
            "source": self.source,
            "tables": [asdict(t) | {"table_id": list(t.table_id)} for t in self.tables],
            "steps": [asdict(s) | {"table_id": list(s.table_id)} for s in self.steps],
            "made_at": self.made_at.isoformat(),
            "backend": self.backend,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Plan:
        return cls(
            namespace_id=tuple(data["namespace_id"]),
            policy=policy_from_dict(data["policy"]),
            source=str(data["source"]),
            tables=tuple(
                TableFigures(**{**t, "table_id": tuple(t["table_id"])}) for t in data["tables"]
            ),
            steps=tuple(Step(**{**s, "table_id": tuple(s["table_id"])}) for s in data["steps"]),
            made_at=datetime.fromisoformat(data["made_at"]),
            backend=str(data.get("backend") or "local"),
        )


PLAN_COLUMNS: tuple[str, ...] = (
    "table",
    "action",
    "run",
    "why",
    "effect",
    "blocked",
    "fragments",
    "small_fragments",
    "small_share",
    "deleted_share",
    "unindexed_share",
    "old_versions",
    "old_bytes",
    "error",
)


def _row(t: TableFigures, step: Step | None) -> dict[str, Any]:
    return {
        "table": t.table_id[-1],
        "action": step.kind if step else None,
        "run": bool(step and step.run),
        "why": step.reason if step else (t.error or t.note or "every kind is off for it"),
        "effect": step.effect if step else None,
        "blocked": step.blocked if step else None,
        "fragments": t.fragments,
        "small_fragments": t.small_fragments,
        "small_share": t.small_share,
        "deleted_share": t.deleted_share,
        "unindexed_share": t.unindexed_share,
        "old_versions": t.old_versions,
        "old_bytes": t.old_bytes,
        "error": t.error,
    }


# -- planning -------------------------------------------------------------------------------------


def _pct(share: float | None) -> str:
    return (
        "?" if share is None else f"{share:.0%}" if share >= 0.01 or share == 0 else f"{share:.2%}"
    )


def _blocked(ns: Any, kind: str) -> str | None:
    """Why ``kind`` cannot run on ``ns`` (``None``: it can)."""
    operation = OPERATIONS[kind]
    if not callable(getattr(ns, operation, None)):
        return MAINTENANCE_UNSUPPORTED
    denial = getattr(ns, "denial", None)
    if callable(denial):
        reason = denial(operation)
        if reason:
            return f"{reason} ({operation} is refused)"
    return None


def _compact_step(h: health.TableHealth, rule: Any, tid: tuple[str, ...]) -> Step:
    action = next((a for a in h.actions if a.kind == COMPACT), None)
    settings = asdict(rule)
    if action is not None:
        return Step(tid, COMPACT, True, action.reason, action.effect, settings=settings)
    small, frags = h.small_fragments, h.fragments
    share = (small / frags if frags else 0.0) if small is not None and frags is not None else None
    parts = []
    if share is not None:
        parts.append(
            f"{small} of {plural(frags or 0, 'fragment')} small ({_pct(share)}; the policy "
            f"compacts beyond {_pct(rule.small_share)} and at least 2)"
        )
    else:
        parts.append("the small fragments are not known")
    if h.deleted_share is not None:
        parts.append(
            f"{_pct(h.deleted_share)} of the rows deleted (beyond {_pct(rule.deleted_share)})"
        )
    passes = (share is not None and (small or 0) >= 2 and share > rule.small_share) or (
        h.deleted_share is not None and h.deleted_share > rule.deleted_share
    )
    why = "; ".join(parts)
    if passes and h.compaction_tasks == 0:
        why += "; lance's compaction plan has nothing to rewrite"
    return Step(tid, COMPACT, False, why, settings=settings)


def _optimize_step(h: health.TableHealth, rule: Any, tid: tuple[str, ...]) -> Step:
    settings = asdict(rule)
    if h.unindexed_rows is None:
        return Step(
            tid, OPTIMIZE, False, "the indexes' unindexed rows are not known", settings=settings
        )
    if not h.unindexed_rows:
        return Step(tid, OPTIMIZE, False, "the table has no index", settings=settings)
    action = next((a for a in h.actions if a.kind == OPTIMIZE), None)
    if action is not None and action.recommended:
        return Step(tid, OPTIMIZE, True, action.reason, action.effect, settings=settings)
    missing = max((v or 0) for v in h.unindexed_rows.values())
    share = missing / h.rows if h.rows else 0.0
    why = (
        f"the indexes miss {plural(missing, 'row')} ({_pct(share)}; the policy optimizes "
        f"beyond {_pct(rule.unindexed_share)})"
        if missing
        else "the indexes cover every row"
    )
    return Step(tid, OPTIMIZE, False, why, settings=settings)


def _cleanup_figures(
    ns: Any, h: health.TableHealth, tid: tuple[str, ...], rule: CleanupRule
) -> tuple[int, int | None]:
    """``(old versions, their bytes)`` a cleanup keeping ``rule``'s days would remove: the
    health's figures of that cleanup (lance's own dry run, on the local backend: ``h`` was
    read with the rule's days), else the versions listing and tags (bytes not known)."""
    if h.cleanup_versions is not None and h.cleanup_keep_days == rule.older_than_days:
        return h.cleanup_versions, h.cleanup_bytes
    keep = timedelta(days=rule.older_than_days)
    return len(lifecycle.cleanup_plan(ns, list(tid), older_than=keep).delete), None


def _cleanup_step(
    ns: Any, h: health.TableHealth, rule: CleanupRule, tid: tuple[str, ...]
) -> tuple[Step, int | None, int | None]:
    settings = asdict(rule)
    count, size = _cleanup_figures(ns, h, tid, rule)
    days = plural(rule.older_than_days, "day")
    if not count:
        why = f"no version older than {days} to remove (the latest and tagged ones stay)"
        return Step(tid, CLEANUP, False, why, settings=settings), count, size
    held = f", holding {human_bytes(size)}" if size else ""
    why = f"{plural(count, 'version')} older than {days}, not tagged{held}"
    effect = (
        f"removes {plural(count, 'old version')}"
        + (f", freeing {human_bytes(size)}" if size else "")
        + "; time travel to them ends"
    )
    return Step(tid, CLEANUP, True, why, effect, settings=settings), count, size


def _table_plan(
    ns: Any, tid: tuple[str, ...], rules: Rules, facts: VersionFacts | None
) -> tuple[TableFigures, list[Step]]:
    h = health.table_health(ns, list(tid), rules.thresholds(), facts=facts)
    missing = [v for v in (h.unindexed_rows or {}).values() if v is not None]
    worst = max(missing) if missing else None
    figures = TableFigures(
        table_id=tid,
        rows=h.rows,
        fragments=h.fragments,
        small_fragments=h.small_fragments,
        deleted_rows=h.deleted_rows,
        deleted_share=h.deleted_share,
        unindexed_rows=worst,
        unindexed_share=(worst / h.rows if h.rows else 0.0) if worst is not None else None,
        versions=h.versions,
    )
    if h.fragments is None and h.rows is None and h.versions is None:
        note = "; ".join(h.notes) or "nothing known of this table"
        return replace(figures, note=note), []
    steps: list[Step] = []  # in the order they run (RUN_ORDER)
    if rules.optimize is not None:
        steps.append(_optimize_step(h, rules.optimize, tid))
    if rules.compact is not None:
        steps.append(_compact_step(h, rules.compact, tid))
    if rules.cleanup is not None:
        step, count, size = _cleanup_step(ns, h, rules.cleanup, tid)
        figures = replace(figures, old_versions=count, old_bytes=size)
        steps.append(step)
    blocked = {kind: _blocked(ns, kind) for kind in KINDS}
    steps = [replace(s, blocked=blocked[s.kind]) if s.run else s for s in steps]
    return figures, steps


def _error_text(err: BaseException) -> str:
    found = describe_error(err)
    return f"{found['title']}: {found['message']}"


def plan(
    ns: LanceNamespace,
    namespace_id: Sequence[str] | None = None,
    policy: Policy | SavedPolicy | dict[str, Any] | None = None,
    *,
    progress: Progress | None = None,
    facts: VersionFacts | None = None,
) -> Plan:
    """The dry run of ``policy`` (default: the namespace's saved policy, else the default
    policy; a :class:`~.store.SavedPolicy` already loaded) on every table of ``namespace_id`` (default: the root). A policy naming a table
    the namespace does not have is a ``TableNotFoundError``; a table that cannot be read
    gives its error in the plan (the others are planned). ``facts`` keeps the operations of
    the versions each table's health reads (``health.table_health``), for the next plan."""
    nsid = ids.check_id(list(namespace_id or []), what="namespace", allow_root=True)
    if policy is None:
        saved = load_policy(ns, nsid)
        chosen, source = saved.policy, saved.source
    elif isinstance(policy, SavedPolicy):
        chosen, source = policy.policy, policy.source
    else:
        chosen, source = policy_from_dict(policy), "given"
    check_scope(ns, nsid, chosen)
    names = nsv.list_table_names(ns, nsid)
    tables: list[TableFigures] = []
    steps: list[Step] = []
    for i, name in enumerate(names):
        if progress is not None:
            progress(f"reading {ids.display_id([*nsid, name])}", i / max(len(names), 1))
        tid = (*nsid, name)
        try:
            figures, found = _table_plan(ns, tid, chosen.rules_for(name), facts)
        except (LanceNamespaceError, OSError, ValueError, RuntimeError) as err:
            figures, found = TableFigures(table_id=tid, error=_error_text(err)), []
        tables.append(figures)
        steps += found
    if progress is not None:
        progress("planned", 1.0)
    return Plan(
        tuple(nsid),
        chosen,
        source,
        tuple(tables),
        tuple(steps),
        datetime.now(UTC),
        capabilities(ns).kind,
    )


# -- running --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepResult:
    """What running one step did: ``status`` (done, failed, refused, skipped), a message in
    the user's terms, the service's answer (``details``) and how long it took."""

    table_id: tuple[str, ...]
    kind: str
    status: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def table(self) -> str:
        return self.table_id[-1]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (a job's record); the service's answer as JSON text where it is not."""
        return {
            "table_id": list(self.table_id),
            "kind": self.kind,
            "status": self.status,
            "message": self.message,
            "details": json.loads(json.dumps(self.details, default=str)),
            "seconds": self.seconds,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StepResult:
        return cls(
            table_id=tuple(data["table_id"]),
            kind=str(data["kind"]),
            status=str(data["status"]),
            message=str(data.get("message") or ""),
            details=dict(data.get("details") or {}),
            seconds=float(data.get("seconds") or 0.0),
        )


@dataclass(frozen=True)
class RunReport:
    """The results of :func:`run_plan`, in the order the steps ran; ``not_run``: the steps a
    stop left out."""

    namespace_id: tuple[str, ...]
    results: tuple[StepResult, ...]
    started_at: datetime
    finished_at: datetime
    not_run: int = 0

    @property
    def ok(self) -> bool:
        """No step failed, was refused, skipped or left out by a stop."""
        return all(r.status == DONE for r in self.results) and not self.not_run

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.results)

    def summary(self) -> str:
        if not self.results and not self.not_run:
            return "nothing to do"
        parts = [f"{self.count(s)} {s}" for s in (DONE, FAILED, REFUSED, SKIPPED) if self.count(s)]
        if self.not_run:
            parts.append(f"{self.not_run} not run (stopped)")
        total = len(self.results) + self.not_run
        return f"{plural(total, 'action')}: " + ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (a job's result)."""
        return {
            "namespace_id": list(self.namespace_id),
            "results": [r.to_dict() for r in self.results],
            "started_at": self.started_at.isoformat(),
            "finished_at": self.finished_at.isoformat(),
            "not_run": self.not_run,
            "ok": self.ok,
            "summary": self.summary(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunReport:
        return cls(
            namespace_id=tuple(data["namespace_id"]),
            results=tuple(StepResult.from_dict(r) for r in data.get("results") or []),
            started_at=datetime.fromisoformat(data["started_at"]),
            finished_at=datetime.fromisoformat(data["finished_at"]),
            not_run=int(data.get("not_run") or 0),
        )

    def frame(self) -> pd.DataFrame:
        rows = [
            {
                "table": r.table,
                "action": r.kind,
                "status": r.status,
                "result": r.message,
                "seconds": round(r.seconds, 2),
            }
            for r in self.results
        ]
        return pd.DataFrame(rows, columns=["table", "action", "status", "result", "seconds"])


def _said(kind: str, out: dict[str, Any]) -> str:
    """What a service's answer changed, in words."""
    if kind == CLEANUP:
        removed = out.get("removed_versions") or []
        if not removed and not out.get("bytes_removed"):
            return "nothing to remove"
        return (
            f"removed {plural(len(removed), 'version')}, freed "
            f"{human_bytes(int(out.get('bytes_removed') or 0))}; "
            f"{plural(int(out.get('versions_after') or 0), 'version')} left"
        )
    before, after = out.get("version_before"), out.get("version_after")
    if before == after:
        return "nothing to do"
    text = f"version {before} → {after}"
    if kind == COMPACT:
        text += (
            f"; {plural(int(out.get('fragments_before') or 0), 'fragment')} → "
            f"{plural(int(out.get('fragments_after') or 0), 'fragment')}"
        )
    return text


def run_step(ns: LanceNamespace, step: Step) -> StepResult:
    """One step through its service function; its failure as a result, never raised."""
    started = time.perf_counter()
    if step.blocked:
        return StepResult(step.table_id, step.kind, SKIPPED, step.blocked)
    tid = list(step.table_id)
    try:
        if step.kind == COMPACT:
            out = compact_files(ns, tid)
        elif step.kind == OPTIMIZE:
            out = optimize_indexes(ns, tid)
        else:
            days = int(step.settings.get("older_than_days", CleanupRule().older_than_days))
            out = cleanup_old_versions(ns, tid, days)
    except PermissionDeniedError as err:
        status, message, out = REFUSED, _error_text(err), {}
    except Exception as err:  # noqa: BLE001 - every failure is this step's result
        status, message, out = FAILED, _error_text(err), {}
    else:
        status, message = DONE, _said(step.kind, out)
    return StepResult(
        step.table_id, step.kind, status, message, dict(out), time.perf_counter() - started
    )


def run_plan(
    ns: LanceNamespace,
    plan: Plan,
    progress: Progress | None = None,
    *,
    stop: Callable[[], bool] | None = None,
    on_result: Callable[[StepResult], None] | None = None,
) -> RunReport:
    """Run the steps ``plan`` calls for (see the module docstring); ``progress(stage,
    fraction)`` hears of each step before it runs; ``stop()`` is asked before each table's
    first step (true: the run ends, the steps left are counted in ``not_run``);
    ``on_result`` gets each step's result."""
    started = datetime.now(UTC)
    todo = plan.todo
    results: list[StepResult] = []
    previous: tuple[str, ...] | None = None
    for i, step in enumerate(todo):
        if step.table_id != previous and stop is not None and stop():
            return RunReport(
                plan.namespace_id, tuple(results), started, datetime.now(UTC), len(todo) - i
            )
        previous = step.table_id
        if progress is not None:
            progress(f"{step.kind} {ids.display_id(step.table_id)}", i / len(todo))
        result = run_step(ns, step)
        results.append(result)
        if on_result is not None:
            on_result(result)
    if progress is not None:
        progress("done", 1.0)
    return RunReport(plan.namespace_id, tuple(results), started, datetime.now(UTC))
