"""Index builds in progress on a table: their stage, progress events and outcome, Cancel."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from backend.branch_view import MAIN, branch_name
from backend.rules import index_rules as rules
from backend.services import build_jobs
from components import feedback, polling, state
from components.cache import invalidate_tables
from components.common import dataframe
from components.session import get_namespace, role_lock
from components.writes import Write, perform, table_jobs

BUILDS_SHOWN = 5  # the latest builds of the table the panel lists


RECENT_SECONDS = 15 * 60  # a build that ended longer ago is listed only if followed


def table_builds(ns: Any, table_id: Sequence[str], branch: str = MAIN) -> list[build_jobs.BuildJob]:
    """The latest builds on the table's ``branch`` (jobs of kind ``create_index``, whoever
    started them), as the panel shows them: the running ones, those this session followed,
    and those that ended in the last :data:`RECENT_SECONDS`."""
    followed = set(state.followed_jobs())
    now = time.time()
    on = branch_name(branch)
    shown = []
    for job in table_jobs(ns, table_id, ("create_index",), limit=BUILDS_SHOWN):
        ended = job.finished_at or job.heartbeat_at or job.created_at
        build = build_jobs.from_job(job)
        if build.branch != on:
            continue
        if not job.done or job.id in followed or now - ended < RECENT_SECONDS:
            shown.append(build)
    return shown


def running_builds(ns: Any, table_id: Sequence[str], branch: str = MAIN) -> list[str]:
    """The index names the queued or running builds on the table's ``branch`` will create
    (any console's)."""
    from backend.services import jobs

    active = jobs.list_jobs(ns, table_id, kinds=("create_index",), states=sorted(jobs.ACTIVE))
    builds = [build_jobs.from_job(j) for j in active]
    return [b.index_name for b in builds if b.branch == branch_name(branch)]


def _chosen(job: build_jobs.BuildJob) -> str:
    context = getattr(job.response, "context", None) or {}
    chosen = {
        k[len(rules.CHOSEN_PREFIX) :]: v
        for k, v in context.items()
        if k.startswith(rules.CHOSEN_PREFIX)
    }
    return ", ".join(f"{k} {v}" for k, v in chosen.items())


def differences_text(job: build_jobs.BuildJob) -> str:
    """What the backend applied otherwise than the build asked for."""
    n = len(job.param_differences)
    return (
        f"The backend applied {'a parameter' if n == 1 else f'{n} parameters'} otherwise than "
        f"requested: {build_jobs.describe_differences(job.param_differences)}."
    )


def _finish(job: build_jobs.BuildJob) -> bool:
    """The first time a finished job this session followed is seen: the table's reads go
    stale, the outcome is kept."""
    if job.job_id not in state.followed_jobs() or not state.first_time_finished(job.job_id):
        return False
    invalidate_tables([list(job.table_id)])
    if job.status == "succeeded":
        chosen = _chosen(job)
        where = f" on branch {job.branch}" if job.branch else ""
        text = f"Index {job.index_name} built{where} in {job.elapsed:.1f} s."
        text += f" Chosen: {chosen}." if chosen else ""
        if job.param_differences:
            text += " " + differences_text(job)
        feedback.flash("indexes", "warning" if job.param_differences else "success", text)
        txn = getattr(job.response, "transaction_id", None)
        if txn:
            from components.transactions.history import remember_transaction

            remember_transaction(
                [*job.table_id, txn], source=f"create index {job.index_name}", status="SUCCEEDED"
            )
    return True


EVENTS_SHOWN = 50  # progress events listed before "Show all"


def _cancel_build(job_id: str) -> None:
    from backend.services import jobs

    write = Write(jobs.cancel, (get_namespace(), job_id), "Cancelling the build", "")
    perform(write, page="indexes", reset=False, rerun=False)


def render_job(job: build_jobs.BuildJob, *, key_prefix: str) -> None:
    icon = {
        "running": ":material/sync:",
        "succeeded": ":material/check_circle:",
        "dropped": ":material/delete:",
        "cancelled": ":material/cancel:",
        "timed out": ":material/timer_off:",
        "interrupted": ":material/link_off:",
    }.get(job.outcome, ":material/error:")
    outcome = "built, then dropped" if job.outcome == "dropped" else job.outcome
    who = f", by {job.who}" if job.who else ""
    st.markdown(
        f"{icon} **{feedback.as_text(job.index_name)}** ({job.index_type} on "
        f"{feedback.as_text(job.column)}"
        + (f", branch {feedback.as_text(job.branch)}" if job.branch else "")
        + f") - {outcome}, {job.elapsed:.1f} s"
        + feedback.as_text(who)
    )
    if job.status in ("cancelled", "timed out") and job.error is not None:
        feedback.show("info", str(job.error))
        return
    if job.status == "interrupted" and job.error is not None:
        feedback.show(
            "warning",
            f"Interrupted: {job.error}. Nothing of it was committed after its last step; "
            "run it again from the Jobs page.",
        )
        return
    if job.status == "failed" and job.error is not None:
        feedback.show_error(job.error, action=f"Building {job.index_name}")
        return
    if job.outcome == "succeeded" and job.param_differences:
        feedback.show("warning", differences_text(job))
    if job.status == "running":
        if job.mode == "events":
            render_stage_progress(job)
            locked = role_lock("cancel_job", False) or role_lock(
                rules.build_operation(job.index_type), False
            )
            st.button(
                "Cancel build",
                key=f"{key_prefix}.{job.job_id}.cancel",
                icon=":material/cancel:",
                disabled=job.cancel_requested or not job.cancellable or locked is not None,
                help="Stops the build at lance's next progress event; nothing is committed and "
                "its partial files are removed.",
                on_click=_cancel_build,
                args=(job.job_id,),
            )
        else:
            seen = (job.observed or {}).get("status", "not polled yet")
            st.progress(0.0, text=f"waiting for the server (index: {seen})")
    if job.events:
        # keyed: its label counts the events, and each event that comes in while the build
        # runs would shut an open list that Streamlit knows only by its place and label
        with st.expander(
            f"Progress events ({job.events_total or len(job.events)})",
            key=f"{key_prefix}.{job.job_id}.events.open",
        ):
            render_events(job, key_prefix=f"{key_prefix}.{job.job_id}")


def _count(value: int, unit: str | None) -> str:
    return f"{value:,} {unit}".strip()


def stage_progress_text(job: build_jobs.BuildJob) -> str:
    """Where a running build is, as lance reports it: the stage, its place among the stages
    seen so far, and how far it is (``completed of total unit (n %)``), or ``running`` when
    lance gives the stage no total (with the count so far, when it reports one)."""
    stage = job.current_stage
    if stage is None:
        return "Starting: lance has reported no stage yet"
    seen = len(job.stages)
    text = f"Stage {stage.number} of {seen} seen so far: {stage.name}"
    if stage.done:
        return f"{text} - done"
    fraction = stage.fraction
    if fraction is None or stage.total is None or stage.completed is None:
        so_far = f", {_count(stage.completed, stage.unit)} so far" if stage.completed else ""
        return f"{text} - running{so_far} (lance reports no total for this stage)"
    return f"{text} - {stage.completed:,} of {_count(stage.total, stage.unit)} ({fraction:.0%})"


def render_stage_progress(job: build_jobs.BuildJob) -> None:
    """The running build's stage (:func:`stage_progress_text`): a bar filled to the stage's
    fraction when lance gives the stage a total; without one, no bar (a bar would sit at 0 %
    while the stage runs), the stage said to be running. The stages seen so far follow."""
    text = feedback.as_text(stage_progress_text(job))
    stage = job.current_stage
    if stage is not None and stage.fraction is not None:
        st.progress(stage.fraction, text=text)
    else:
        st.markdown(f":material/progress_activity: {text}")
    if job.cancel_requested:
        st.caption("Cancelling: the build stops at lance's next progress event.")
    if len(job.build_stages) > 1:
        st.caption(
            "Stages: "
            + " → ".join(
                feedback.as_text(f"{s.name} ({'done' if s.done else 'running'})")
                for s in job.build_stages
            )
        )


def render_events(job: build_jobs.BuildJob, *, key_prefix: str) -> None:
    """The latest :data:`EVENTS_SHOWN` progress events, saying how many there are, with a
    switch to list every event kept."""
    total = max(job.events_total, len(job.events))
    kept = len(job.events)
    show_all = False
    if total > EVENTS_SHOWN:
        shown_text = f"Showing the latest {EVENTS_SHOWN} of {total} events."
        show_all = st.toggle(
            f"Show all {kept} events" + (f" kept (of {total})" if kept < total else ""),
            key=f"{key_prefix}.all",
        )
        if show_all:
            shown_text = (
                f"Showing all {total} events."
                if kept == total
                else f"Showing the latest {kept} of {total} events (older ones are not kept)."
            )
        st.caption(shown_text)
    events = job.events if show_all else job.events[-EVENTS_SHOWN:]
    frame = pd.DataFrame(events)
    if "at" in frame:
        frame["at"] = [time.strftime("%H:%M:%S", time.localtime(t)) for t in frame["at"]]
    dataframe(frame.astype(str), hide_index=True, key=f"{key_prefix}.events", words=True)


def render_build_jobs(table_id: Sequence[str], *, key_prefix: str, branch: str = MAIN) -> None:
    """The latest builds on the table's ``branch``, whichever console started them
    (:func:`table_builds`); refreshes every second while one runs."""
    ns = get_namespace()
    builds = feedback.run(table_builds, ns, table_id, branch, action="Reading the table's builds")
    if not builds:
        return

    def panel() -> None:
        changed = False
        with st.container(border=True):
            st.caption("Index builds")
            for job in table_builds(ns, table_id, branch):
                render_job(job, key_prefix=key_prefix)
                changed = (job.done and _finish(job)) or changed
        if changed:
            polling.rerun_page()

    polling.fragment(panel, every=1.0 if any(not j.done for j in builds) else None)
