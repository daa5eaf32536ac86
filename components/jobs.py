"""The jobs of a namespace (``backend.services.jobs``): the grid of the Jobs page and of a table
page's own jobs, one job's details (a maintenance plan's per-table results), and its Cancel and
Run again buttons (role-checked: the role the job's kind needs). The panels return what was
asked (:class:`JobAction`); the page sends it (:func:`action_write`). And the choice of where a
job runs (:func:`render_executor_choice`): on Ray when the console was launched with
``--ray-address``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import streamlit as st

from backend.branch_view import branch_name
from backend.config import launch
from backend.services import jobs
from backend.services import maintenance as mt
from backend.text import capital, human_bytes, plural
from components import feedback
from components.common import dataframe, lazy_expander, render_role_lock
from components.session import write_denial
from components.writes import Write

STATE_ICONS = {
    jobs.QUEUED: ":material/schedule:",
    jobs.RUNNING: ":material/sync:",
    jobs.SUCCEEDED: ":material/check_circle:",
    jobs.FAILED: ":material/error:",
    jobs.INTERRUPTED: ":material/link_off:",
    jobs.CANCELLED: ":material/cancel:",
}
LISTED = 200  # jobs the Jobs page lists at most (newest first)
TABLE_LISTED = 10  # jobs a table page lists
COLUMNS = (
    "id", "kind", "table", "branch", "state", "progress", "stage", "who", "created", "elapsed_s",
)  # fmt: skip
RESULT_COLUMNS = {
    "table": st.column_config.TextColumn("Table"),
    "action": st.column_config.TextColumn("Action"),
    "status": st.column_config.TextColumn("Status"),
    "result": st.column_config.TextColumn("Result", width="large"),
    "seconds": st.column_config.NumberColumn("Seconds", format="%.2f"),
}


@dataclass(frozen=True)
class JobAction:
    """What a button asked: ``cancel`` or ``rerun`` job ``job_id``."""

    action: str
    job_id: str
    label: str


def _when(seconds: float | None) -> datetime | None:
    return datetime.fromtimestamp(seconds, UTC) if seconds else None


def jobs_frame(found: Sequence[jobs.Job]) -> pd.DataFrame:
    """One row per job: id, kind, table (a namespace's own job: the namespace), branch (empty:
    main), state, progress (0..1, ``None`` when not known), stage, who, created (UTC),
    elapsed_s."""
    rows = [
        {
            "id": j.id,
            "kind": j.kind,
            "table": target_text(j),
            "branch": j.branch or "",
            "state": j.state,
            "progress": 1.0 if j.state == jobs.SUCCEEDED else j.fraction,
            "stage": j.stage,
            "who": j.who,
            "created": _when(j.created_at),
            "elapsed_s": round(j.elapsed, 1),
        }
        for j in found
    ]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def maintenance_outcome(result: dict[str, Any]) -> str:
    """What a compaction or an optimize did: versions, and for a compaction the fragments and
    bytes of data before and after (and the tasks taken over from an earlier run)."""
    before, after = result.get("version_before"), result.get("version_after")
    if before == after:
        return "nothing to do"
    text = f"version {before} → {after}"
    if "fragments_before" in result:
        text += (
            f"; {plural(result['fragments_before'], 'fragment')} → "
            f"{plural(result['fragments_after'], 'fragment')}, "
            f"{human_bytes(result['data_bytes_before'])} → "
            f"{human_bytes(result['data_bytes_after'])} of data"
        )
    if result.get("resumed_tasks"):
        text += f"; resumed {plural(result['resumed_tasks'], 'task')} of an earlier run"
    return text


def target_text(job: jobs.Job) -> str:
    """What a job acts on: its table, or for a namespace's own job (a plan) the namespace."""
    found = jobs.KINDS.get(job.kind)
    if found is not None and not found.needs_table:
        return f"namespace {job.target or '(root)'}"
    return job.target


def outcome_text(job: jobs.Job) -> str | None:
    """What a succeeded job did, in words (``None`` for the others and unknown kinds)."""
    if job.state != jobs.SUCCEEDED:
        return None
    result = job.result if isinstance(job.result, dict) else {}
    if job.kind in ("compact", "optimize"):
        return maintenance_outcome(result)
    if job.kind == "cleanup":
        deleted = result.get("deleted_versions") or []
        if not deleted:
            return "nothing to delete"
        freed = result.get("bytes_removed")
        return f"deleted {plural(len(deleted), 'version')}" + (
            f", freed {human_bytes(int(freed))}" if freed else ""
        )
    if job.kind == mt.plan_jobs.KIND and result.get("summary"):
        return str(result["summary"])
    if job.kind == "create_index" and result.get("index_name"):
        return f"index {result['index_name']} built"
    return None


# Each column's width (px), chosen so that the columns shown fit the main area at 1440 px
# (~980 px) beside the sidebar without scrolling: the job id whole, the rest of each cell
# shortened with an ellipsis where it runs longer.
JOB_COLUMN_WIDTHS = {
    "id": 178, "kind": 85, "table": 115, "branch": 75, "state": 85, "progress": 95,
    "stage": 130, "who": 92, "created": 120, "elapsed_s": 60,
}  # fmt: skip


def job_columns(found: Sequence[jobs.Job], *, one_table: bool = False) -> list[str]:
    """The grid's columns for ``found``: the branch only when a job ran on one (most run on
    main), the table not when the grid lists one table's jobs (its page says which)."""
    shown = list(COLUMNS)
    if not any(j.branch for j in found):
        shown.remove("branch")
    if one_table:
        shown.remove("table")
    return shown


def render_jobs_table(
    found: Sequence[jobs.Job], *, key_prefix: str, one_table: bool = False
) -> jobs.Job | None:
    """The grid of ``found`` and a picker of one of them; the job picked. ``one_table``: the
    jobs are one table's (the grid leaves out the table)."""
    if not found:
        st.info("No jobs yet.", icon=":material/info:")
        return None
    width = JOB_COLUMN_WIDTHS
    dataframe(
        jobs_frame(found),
        hide_index=True,
        key=f"{key_prefix}.grid",
        column_order=job_columns(found, one_table=one_table),
        column_config={
            "id": st.column_config.TextColumn("Job", width=width["id"]),
            "kind": st.column_config.TextColumn("Kind", width=width["kind"]),
            "table": st.column_config.TextColumn("Table", width=width["table"]),
            "branch": st.column_config.TextColumn("Branch", width=width["branch"]),
            "state": st.column_config.TextColumn("State", width=width["state"]),
            "progress": st.column_config.ProgressColumn(
                "Progress", min_value=0.0, max_value=1.0, format="percent", width=width["progress"]
            ),
            "stage": st.column_config.TextColumn("Stage", width=width["stage"]),
            "who": st.column_config.TextColumn("Who", width=width["who"]),
            "created": st.column_config.DatetimeColumn(
                "Created (UTC)", format="MM-DD HH:mm:ss", width=width["created"]
            ),
            "elapsed_s": st.column_config.NumberColumn(
                "Seconds", format="%.1f", width=width["elapsed_s"]
            ),
        },
    )
    by_id = {j.id: j for j in found}
    # An option names the job, not its state: the box keeps the text of the option picked,
    # which would still say "running" after the job has succeeded (the grid and the details
    # say the state).
    picked = st.selectbox(
        "Job",
        list(by_id),
        key=f"{key_prefix}.pick",
        format_func=lambda i: (
            f"{i} · {by_id[i].label} · {target_text(by_id[i])}"
            + (f" · branch {by_id[i].branch}" if by_id[i].branch else "")
        ),
    )
    return by_id.get(picked) if picked else None


def _locks(job: jobs.Job, *extra: str) -> str | None:
    """Why this session may not act on ``job`` (a read-only connection, the role its kind
    needs), or ``None``."""
    for operation in (jobs.operation_of(job), *extra):
        denied = write_denial(operation)
        if denied:
            return denied
    return None


def render_job_details(job: jobs.Job, *, key_prefix: str) -> JobAction | None:
    """One job: state, who and when, progress, outcome or error, parameters; Cancel (a
    queued or running job its kind can stop) and Run again (a finished one). Returns what a
    button asked (disabled, with the reason, when this session may not: a read-only
    connection, the role the job's kind needs)."""
    icon = STATE_ICONS.get(job.state, "")
    where = f" on branch {job.branch}" if job.branch else ""
    st.markdown(
        f"{icon} **{feedback.as_text(job.label)}** of "
        f"{feedback.as_text((target_text(job) or '—') + where)}: {job.state}"
    )
    facts = [f"job {job.id}", f"by {job.who}" + (f" ({job.role})" if job.role else "")]
    ray = job.executor_options.get("ray_address") if job.executor == "ray" else None
    executor = f"executor {job.executor}" + (f" at {ray}" if ray else "")
    facts.append(f"{executor}, pid {job.pid} on {job.host}")
    if job.rerun_of:
        facts.append(f"run again from {job.rerun_of}")
    if job.resumed_from:
        facts.append(f"resumes {job.resumed_from}")
    st.caption(feedback.as_text(" · ".join(facts)))
    if job.note:
        st.caption(":material/info: " + feedback.as_text(capital(job.note) + "."))
    if not job.done:
        text = feedback.as_text(f"{job.stage or job.state} ({job.elapsed:.0f} s)")
        if job.fraction is not None:
            st.progress(job.fraction, text=text)
        else:
            st.markdown(f":material/progress_activity: {text}")
        if job.cancel_requested:
            st.caption("Cancel asked: the job stops where lance allows it.")
    elif job.state == jobs.SUCCEEDED:
        said = outcome_text(job)
        st.markdown(
            feedback.as_text(f"Done in {job.elapsed:.1f} s" + (f": {said}." if said else "."))
        )
    elif job.state == jobs.INTERRUPTED:
        feedback.show(
            "warning",
            f"Interrupted: {job.interrupted}. What lance had not committed was left out; "
            + ("Run again resumes from the tasks done." if job.has_checkpoint else "run it again."),
        )
    elif job.state == jobs.CANCELLED:
        feedback.show("info", job.error_text or "Cancelled.")
    else:
        error = job.exception()
        if error is not None:
            feedback.show_error(error, action=job.label.capitalize())
    if job.kind == mt.plan_jobs.KIND:
        render_plan_results(job, key_prefix=key_prefix)
    elif job.params:
        st.caption("Parameters")
        st.code(json.dumps(job.params, indent=1, sort_keys=True), language="json")
    asked: JobAction | None = None
    if not job.done:
        locked = _locks(job, "cancel_job")
        stoppable = job.cancellable or job.state == jobs.QUEUED
        if st.button(
            "Cancel",
            key=f"{key_prefix}.{job.id}.cancel",
            icon=":material/cancel:",
            disabled=locked is not None or not stoppable or job.cancel_requested,
            help=None if stoppable else "This job cannot be stopped once it started.",
        ):
            asked = JobAction("cancel", job.id, job.label)
    else:
        locked = _locks(job)
        if st.button(
            "Run again",
            key=f"{key_prefix}.{job.id}.rerun",
            icon=":material/replay:",
            disabled=locked is not None,
        ):
            asked = JobAction("rerun", job.id, job.label)
    render_role_lock(locked)
    return asked


def render_plan_results(job: jobs.Job, *, key_prefix: str) -> mt.RunReport | None:
    """A plan job's per-table results so far (all of them once it ended), with its summary;
    returns them (``None``: none yet)."""
    report = mt.report_of(job)
    plan = (job.params or {}).get("plan") or {}
    planned = sum(1 for s in plan.get("steps") or [] if s.get("run"))
    if report is None:
        st.caption(f"The plan: {plural(planned, 'action')}; no result yet.")
        return None
    st.caption(feedback.as_text(f"Results: {report.summary()}"))
    dataframe(
        report.frame(), hide_index=True, key=f"{key_prefix}.{job.id}.results",
        column_config=RESULT_COLUMNS,
    )  # fmt: skip
    return report


def ray_address() -> str | None:
    """The Ray cluster the console was launched with (``--ray-address``) when the Ray
    executor is available, else ``None`` (the pages offer no choice then)."""
    address = launch.launch_ray_address()
    return address if address and "ray" in jobs.EXECUTORS else None


def render_executor_choice(
    *, key: str, branch: str | None = None, unsupported: str | None = None
) -> tuple[str, dict[str, Any]]:
    """ "Run on Ray (address)", offered only when the console was launched with a Ray address
    (:func:`ray_address`); disabled with the reason on a branch (Ray cannot act on one) or
    when ``unsupported`` says why the job cannot run there. Returns the executor and its
    options for ``jobs.submit``."""
    address = ray_address()
    if address is None:
        return "local", {}
    on = branch_name(branch)
    why = (
        f"Ray cannot act on branch {on} (lance-ray commits to main): runs on this console"
        if on
        else unsupported
    )
    picked = st.checkbox(
        f"Run on Ray ({address})",
        key=key,
        disabled=why is not None,
        help=why
        or "The work runs on the Ray cluster's workers (lance-ray): no progress while it "
        "works, no cancel once it started. Off: on this console.",
    )
    if picked and why is None:
        return "ray", {"ray_address": address}
    return "local", {}


def render_table_jobs(ns: Any, table_id: Sequence[str], *, key_prefix: str) -> JobAction | None:
    """A table page's own jobs (every kind, whoever started them) in an expander, drawn only
    while open: the grid, one job's details and its buttons. Returns what a button asked."""
    found = feedback.run(
        jobs.list_jobs, ns, table_id, limit=TABLE_LISTED, action="Reading the table's jobs"
    )
    if not found:
        return None
    active = sum(1 for j in found if not j.done)
    label = f"Jobs of this table ({len(found)}{f', {active} running' if active else ''})"
    box = lazy_expander(label, key=f"{key_prefix}.open", icon=":material/work_history:")
    if box is None:
        return None
    with box:
        picked = render_jobs_table(found, key_prefix=key_prefix, one_table=True)
        if picked is not None:
            return render_job_details(picked, key_prefix=key_prefix)
    return None


def action_write(ns: Any, asked: JobAction) -> Write:
    """The write a button asked for: ``jobs.cancel`` or ``jobs.rerun`` (the session follows
    the job: its end is told once)."""
    if asked.action == "cancel":
        return Write(
            jobs.cancel,
            (ns, asked.job_id),
            f"Cancelling {asked.label}",
            f"Cancel asked for {asked.label} (job {asked.job_id}): it stops where lance allows.",
            follow=True,
        )
    return Write(
        jobs.rerun,
        (ns, asked.job_id),
        f"Running {asked.label} again",
        lambda job: f"{asked.label.capitalize()} started again as job {job.id}.",
        follow=True,
    )
