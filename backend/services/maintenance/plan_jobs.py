"""A maintenance plan run as one job: the ``plan`` kind of ``backend.services.jobs``.

:func:`submit_plan` records a job of kind ``plan`` whose target is the plan's namespace and
whose parameters are the plan itself (``Plan.to_dict``: the steps decided by the dry run the
user saw, not a new one). The job runs :func:`~.planning.run_plan` table by table; while it
runs its record shows the step under way (``stage``, ``fraction``) and every step's result so
far (``details["results"]``), so every console on the namespace follows it. A cancel stops the
run before the next table (the table under way finishes its steps); the job then reads
``cancelled`` and its details keep what was done. A plan that ran to its end ``succeeded``,
whatever its steps' outcomes: its result (``RunReport.to_dict``) says which steps were done,
failed, refused or skipped (:func:`report_of`), as ``lance-console maintain`` prints them.

The job needs the role of ``run_maintenance_plan`` (an editor's); each step is checked by the
gate on its own (a cleanup is an admin's: refused for an editor, said in its result). A plan is
of main: a branch view is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from lance_namespace.errors import ErrorCode

from backend.branch_view import branch_of
from backend.errors import OperationStopped, invalid, make
from backend.rules import ids
from backend.text import plural

from .. import jobs
from .planning import Plan, RunReport, StepResult, run_plan

KIND = "plan"
OPERATION = "run_maintenance_plan"  # the gate's name of running a plan (``backend.access``)


def check_plan_params(
    ns: Any, target: tuple[str, ...] | None, params: Mapping[str, Any]
) -> dict[str, Any]:
    """The parameters of a ``plan`` job checked: ``{"plan": Plan.to_dict()}`` of the job's
    namespace; ``InvalidInputError`` otherwise, ``UnsupportedOperationError`` on a branch."""
    unknown = sorted(set(params) - {"plan"})
    if unknown:
        raise invalid(f"a plan job takes the plan only; {', '.join(unknown)} is not one of them")
    raw = params.get("plan")
    if not isinstance(raw, Mapping):
        raise invalid("a plan job needs the plan (Plan.to_dict()) to run")
    try:
        plan = Plan.from_dict(dict(raw))
    except (KeyError, TypeError, ValueError) as exc:
        raise invalid(f"the plan of a plan job cannot be read: {exc}") from None
    namespace = tuple(target or ())
    if plan.namespace_id != namespace:
        raise invalid(
            f"the plan is of namespace {ids.display_id(plan.namespace_id)}, the job's target is "
            f"{ids.display_id(namespace)}"
        )
    on = branch_of(ns)
    if on is not None:
        raise make(
            ErrorCode.UNSUPPORTED,
            f"a maintenance plan maintains the tables' main, not branch {on!r}; nothing was "
            "done. Pick main to run it",
        )
    return {"plan": plan.to_dict()}


def run_plan_job(
    ns: Any, target: tuple[str, ...] | None, params: Mapping[str, Any], ctx: Any
) -> dict[str, Any]:
    """The work of a ``plan`` job (see the module docstring)."""
    plan = Plan.from_dict(dict(params["plan"]))
    todo = plan.todo
    tables = len({s.table_id for s in todo})
    done: list[dict[str, Any]] = []
    ctx.details(results=[], actions=len(todo), tables=tables)

    def said(result: StepResult) -> None:
        done.append(result.to_dict())
        ctx.details(results=list(done))

    report = run_plan(ns, plan, ctx.progress, stop=lambda: ctx.cancelled, on_result=said)
    if report.not_run:
        ran = len({r.table_id for r in report.results})
        raise OperationStopped(
            f"the maintenance of {ids.display_id(plan.namespace_id)} was cancelled after "
            f"{plural(ran, 'table')} of {tables}: {plural(report.not_run, 'action')} not run "
            f"({report.summary()})",
            "cancelled",
        )
    return report.to_dict()


def submit_plan(ns: Any, plan: Plan) -> Any:
    """Run ``plan`` as one job (``backend.services.jobs.submit``); returns the job."""
    return jobs.submit(ns, KIND, list(plan.namespace_id), {"plan": plan.to_dict()})


def report_of(job: Any) -> RunReport | None:
    """What a ``plan`` job did: its result when it ran to its end, else the steps its record
    says were done so far (running, cancelled, failed, interrupted); ``None``: nothing yet."""
    if isinstance(job.result, Mapping) and "results" in job.result:
        return RunReport.from_dict(dict(job.result))
    results = (job.details or {}).get("results")
    if not results:
        return None
    start = datetime.fromtimestamp(job.started_at or job.created_at, UTC)
    end = datetime.fromtimestamp(job.finished_at or job.heartbeat_at or job.created_at, UTC)
    steps = tuple(StepResult.from_dict(r) for r in results)
    total = int((job.details or {}).get("actions") or len(steps))
    left = max(total - len(steps), 0) if job.done else 0
    return RunReport(tuple(job.table_id or ()), steps, start, end, left)


# A namespace's plan as a job kind (``backend.services.jobs``; imported with the services
# package).
jobs.register_kind(
    KIND, run_plan_job, operation=OPERATION, label="maintenance plan",
    validate=check_plan_params, needs_table=False,
)  # fmt: skip
