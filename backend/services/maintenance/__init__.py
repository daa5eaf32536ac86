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

from .plan_jobs import report_of as report_of
from .plan_jobs import submit_plan as submit_plan
from .planning import DONE as DONE
from .planning import FAILED as FAILED
from .planning import REFUSED as REFUSED
from .planning import SKIPPED as SKIPPED
from .planning import Plan as Plan
from .planning import RunReport as RunReport
from .planning import plan as plan
from .planning import run_plan as run_plan
from .policy import CLEANUP as CLEANUP
from .policy import COMPACT as COMPACT
from .policy import DEFAULT_POLICY as DEFAULT_POLICY
from .policy import KINDS as KINDS
from .policy import OPTIMIZE as OPTIMIZE
from .policy import CleanupRule as CleanupRule
from .policy import CompactRule as CompactRule
from .policy import OptimizeRule as OptimizeRule
from .policy import Policy as Policy
from .policy import Rules as Rules
from .policy import policy_from_dict as policy_from_dict
from .policy import policy_problems as policy_problems
from .store import DEFAULT as DEFAULT
from .store import SAVED as SAVED
from .store import SavedPolicy as SavedPolicy
from .store import delete_policy as delete_policy
from .store import load_policy as load_policy
from .store import save_policy as save_policy
