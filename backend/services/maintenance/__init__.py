"""Maintenance plans and policies of a namespace: which tables to compact, whose indexes to
optimize, which old versions to clean up, and why; saved per namespace, planned as a dry
run, then run table by table through the console's own operations (gate and audit).

* :mod:`.policy` - the :class:`Policy` model, its stored form and its checks, and the
  documented :data:`DEFAULT_POLICY`;
* :mod:`.store` - where a namespace's policy is kept (beside the console's records under the
  root; on the console's host for REST) and saving it (admins only, audited);
* :mod:`.planning` - :func:`plan` (the dry run, from the tables' health and lance's own dry
  runs) and :func:`run_plan` (a plain function with a ``progress(stage, fraction)``);
* :mod:`.plan_jobs` - a plan run as one job (the ``plan`` kind of ``backend.services.jobs``):
  :func:`submit_plan`, and :func:`report_of` a plan job;
* :mod:`.table_jobs` - one table's compaction, index optimization and cleanup as jobs (the
  ``compact``, ``optimize`` and ``cleanup`` kinds).
"""

from __future__ import annotations

from .plan_jobs import KIND as PLAN_KIND
from .plan_jobs import report_of, submit_plan
from .planning import (
    DONE,
    FAILED,
    PLAN_COLUMNS,
    REFUSED,
    SKIPPED,
    Plan,
    RunReport,
    Step,
    StepResult,
    TableFigures,
    plan,
    run_plan,
    run_step,
)
from .policy import (
    CLEANUP,
    COMPACT,
    DEFAULT_POLICY,
    KINDS,
    OPTIMIZE,
    CleanupRule,
    CompactRule,
    OptimizeRule,
    Policy,
    Rules,
    policy_from_dict,
    policy_problems,
)
from .store import (
    DEFAULT,
    SAVED,
    SavedPolicy,
    check_scope,
    delete_policy,
    load_policy,
    policy_store,
    save_policy,
)

__all__ = [
    "CLEANUP",
    "COMPACT",
    "DEFAULT",
    "DEFAULT_POLICY",
    "DONE",
    "FAILED",
    "KINDS",
    "OPTIMIZE",
    "PLAN_COLUMNS",
    "PLAN_KIND",
    "REFUSED",
    "SAVED",
    "SKIPPED",
    "CleanupRule",
    "CompactRule",
    "OptimizeRule",
    "Plan",
    "Policy",
    "Rules",
    "RunReport",
    "SavedPolicy",
    "Step",
    "StepResult",
    "TableFigures",
    "check_scope",
    "delete_policy",
    "load_policy",
    "plan",
    "policy_from_dict",
    "policy_problems",
    "policy_store",
    "report_of",
    "run_plan",
    "run_step",
    "save_policy",
    "submit_plan",
]
