"""One table's maintenance as jobs: the ``compact``, ``optimize`` and ``cleanup`` kinds of
``backend.services.jobs`` (registered when imported, with the services package).

* ``compact`` - lance's compaction of the table's files (``tuning.optimize.compact_files``),
  by plan / execute / commit tasks: its progress says the tasks done, its checkpoint lets a
  rerun resume from the tasks an earlier run finished, and a cancel stops it between tasks;
  its parameters are lance's compaction options (``backend.local.compaction.OPTION_TYPES``);
* ``optimize`` - the unindexed rows added to the table's indexes
  (``tuning.optimize.optimize_indexes``); no parameters, and no cancel once started;
* ``cleanup`` - old versions removed by a policy (``keep_last``, ``older_than_days``: the
  rules of ``lifecycle.check_cleanup_policy``); a cleanup by age alone where the namespace
  has it is lance's own ``cleanup_old_versions`` by age, else the versions
  ``lifecycle.cleanup_plan`` picks are deleted (``lifecycle.run_cleanup``: lance's cleanup of
  those versions where the namespace has it). Either way, on the local backend, the files no
  version left needs go too. Main's only.

Compaction and index optimization need the local backend (``MAINTENANCE_UNSUPPORTED`` over
REST).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from lance_namespace.errors import ErrorCode

from backend.branch_view import branch_of
from backend.errors import invalid, make
from backend.local.compaction import OPTION_TYPES
from backend.text import plural

from .. import jobs, lifecycle
from ..tuning import optimize as maintenance_calls


def _local_only(ns: Any) -> str | None:
    return (
        None
        if callable(getattr(ns, "compact_files", None))
        else maintenance_calls.MAINTENANCE_UNSUPPORTED
    )


def _check_compact(ns: Any, table_id: Any, params: dict[str, Any]) -> dict[str, Any]:
    jobs.only_keys("compact", params, OPTION_TYPES)
    out: dict[str, Any] = {}
    for name, value in params.items():
        if value is None:
            continue
        want = OPTION_TYPES[name]
        if want is bool:
            if not isinstance(value, bool):
                raise invalid(f"{name} is true or false, got {value!r}")
        elif want is int:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise invalid(f"{name} is a whole number of 1 or more, got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise invalid(f"{name} is a share between 0 and 1, got {value!r}")
        out[name] = value
    return out


def _compact(ns: Any, table_id: Any, params: dict[str, Any], ctx: jobs.JobContext) -> Any:

    def progress(event: Mapping[str, Any]) -> None:
        if event.get("checkpoint"):
            ctx.checkpoint(event["checkpoint"])
        done, total = event.get("completed"), event.get("total")
        if total:
            ctx.progress(f"compacting: {done} of {plural(int(total), 'task')} done", done / total)
        else:
            ctx.progress("compacting: nothing to rewrite", 1.0)
        ctx.check()

    ctx.progress("planning the compaction", 0.0)
    return maintenance_calls.compact_files(
        ns, list(table_id), options=params, progress=progress, resume=ctx.resume
    )


def _optimize(ns: Any, table_id: Any, params: dict[str, Any], ctx: jobs.JobContext) -> Any:

    ctx.progress("adding the unindexed rows to the indexes", None)
    return maintenance_calls.optimize_indexes(ns, list(table_id))


def _check_empty(kind: str) -> Callable[[Any, Any, dict[str, Any]], dict[str, Any]]:
    def check(ns: Any, table_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        jobs.only_keys(kind, params, ())
        return {}

    return check


def _cleanup_policy(params: Mapping[str, Any]) -> tuple[int | None, timedelta | None]:
    keep_last, days = params.get("keep_last"), params.get("older_than_days")
    if days is not None and (isinstance(days, bool) or not isinstance(days, (int, float))):
        raise invalid(f"older_than_days is a number of days of zero or more, got {days!r}")
    return keep_last, (timedelta(days=days) if days is not None else None)


def _check_cleanup(ns: Any, table_id: Any, params: dict[str, Any]) -> dict[str, Any]:
    jobs.only_keys("cleanup", params, ("keep_last", "older_than_days"))
    on = branch_of(ns)
    if on is not None:  # as the Versions page: a cleanup by policy is main's only
        raise make(
            ErrorCode.UNSUPPORTED,
            f"a cleanup of old versions acts on the table's main, not branch {on!r}; nothing "
            "was done. Pick main to clean up",
        )
    keep_last, older_than = _cleanup_policy(params)
    lifecycle.check_cleanup_policy(keep_last, older_than)
    return {k: v for k, v in params.items() if v is not None}


def _lance_cleanup(ns: Any, params: Mapping[str, Any]) -> bool:
    """Whether a cleanup runs as lance's own ``cleanup_old_versions`` (which also removes the
    files no version left needs): a cleanup by age alone where the namespace has it (the local
    backend; a cleanup is main's)."""
    return (
        set(params) == {"older_than_days"}
        and isinstance(params["older_than_days"], int)
        and callable(getattr(ns, "cleanup_old_versions", None))
    )


def _cleanup(ns: Any, table_id: Any, params: dict[str, Any], ctx: jobs.JobContext) -> Any:
    keep_last, older_than = _cleanup_policy(params)
    if _lance_cleanup(ns, params):
        days = params["older_than_days"]
        ctx.progress(f"removing the versions older than {plural(days, 'day')}", None)
        out = maintenance_calls.cleanup_old_versions(ns, list(table_id), days)
        return {
            "deleted_versions": list(out.get("removed_versions") or []),
            "kept_versions": out.get("versions_after"),
            "bytes_removed": out.get("bytes_removed"),
            "policy": f"versions older than {plural(days, 'day')} (lance's cleanup: the files "
            "no version left needs too); never the latest or a tagged version",
        }
    ctx.progress("listing the versions to delete", None)
    plan = lifecycle.cleanup_plan(ns, list(table_id), keep_last=keep_last, older_than=older_than)
    ctx.details(delete=plan.delete, keep=len(plan.keep), policy=plan.policy)
    if not plan.delete:
        return {"deleted_versions": [], "kept_versions": len(plan.keep), "policy": plan.policy}
    ctx.check()
    ctx.progress(f"deleting {plural(len(plan.delete), 'version')}", None)
    done = lifecycle.run_cleanup(ns, plan)
    return {
        "deleted_versions": done.deleted,
        "kept_versions": len(plan.keep) + len(done.kept),
        "bytes_removed": done.bytes_freed,
        "files_removed": done.files_removed,
        "policy": plan.policy,
        "transaction_id": done.transaction_id,
    }


jobs.register_kind(
    "compact", _compact, operation="compact_files", label="compaction",
    validate=_check_compact, supported=_local_only,
)  # fmt: skip
jobs.register_kind(
    "optimize", _optimize, operation="optimize_indexes", label="index optimization",
    validate=_check_empty("optimize"), supported=_local_only, cancellable=False,
)  # fmt: skip
jobs.register_kind(
    "cleanup", _cleanup, operation="batch_delete_table_versions", label="cleanup",
    validate=_check_cleanup, cancellable=False,
)  # fmt: skip
