"""Cleanup by policy: the versions a policy would remove, previewed, and the write that removes
them (``backend.services.lifecycle``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import pandas as pd
import streamlit as st

from backend.rules import ids
from backend.services import lifecycle as lc
from backend.text import human_bytes, plural
from components import feedback, state
from components.common import (
    dataframe,
)
from components.writes import (
    Write,
    render_confirmed_form,
    runs,
)


def cleanup_write(ns: Any, table_id: Sequence[str], plan: lc.CleanupPlan) -> Write:
    return Write(
        lc.run_cleanup, (ns, plan), "Cleaning up",
        lambda done: cleanup_said(done, table_id, plan.policy),
        leaves_tags=True,  # never a tagged version
    )  # fmt: skip


def cleanup_said(done: lc.CleanupDone, table_id: Sequence[str], policy: str) -> str:
    """What a cleanup did: the versions deleted, what it freed on disk (or, over REST, that
    the data files are the server's to remove), the listed versions the table kept."""
    table = ids.display_id(table_id)
    which = f"{runs(done.deleted)}; " if done.deleted else ""
    text = f"Deleted {plural(len(done.deleted), 'version')} of {table} ({which}{policy})"
    if done.bytes_freed is None:
        text += ": their data files are the server's to remove."
    else:
        files = plural(done.files_removed or 0, "file")
        text += f", freeing {human_bytes(done.bytes_freed)} ({files})."
    if done.kept:
        text += f" Kept {runs(done.kept)}: lance keeps a version a branch of the table starts from."
    if done.failed_deletes:
        text += f" {plural(done.failed_deletes, 'file')} could not be deleted."
    if done.staged_files:
        text += (
            f" Also removed {plural(done.staged_files, 'file')} of staged changes never published."
        )
    return text


def render_cleanup(
    ns: Any,
    table_id: Sequence[str],
    versions: pd.DataFrame,
    *,
    key_prefix: str,
    read_only: bool,
    on_submit: Callable[[lc.CleanupPlan, str], None] | None = None,
) -> lc.CleanupPlan | None:
    """A policy (keep the newest N, older than D days, or both), its dry run (kept on the
    session per table: every version with what happens to it), then "Delete N versions"
    with a typed confirmation. Returns the plan to run once confirmed; with ``on_submit`` it
    is handed over from the button's callback instead (``on_submit(plan, failure_key)``, the
    page's write: the page then draws once, after it) and nothing is returned."""
    st.caption(
        "A version goes when it is outside the newest N and older than D days (both when both "
        "are given). The latest version and every tagged version always stay."
    )
    with st.form(f"{key_prefix}.policy", border=False):
        c1, c2, c3 = st.columns([1, 1, 1], vertical_alignment="bottom")
        keep = c1.number_input(
            "Keep the newest", min_value=1, value=None, step=1, placeholder="any number",
            key=f"{key_prefix}.keep",
        )  # fmt: skip
        days = c2.number_input(
            "Older than (days)", min_value=0, value=None, step=1, placeholder="any age",
            key=f"{key_prefix}.days",
        )  # fmt: skip
        dry_run = c3.form_submit_button("Dry run", icon=":material/checklist:")
    if dry_run:
        plan = feedback.run(
            lc.cleanup_plan,
            ns,
            list(table_id),
            keep_last=int(keep) if keep is not None else None,
            older_than=timedelta(days=int(days)) if days is not None else None,
            action="Dry run",
        )
        state.set_cleanup_plan(list(table_id), plan)
    plan = state.cleanup_plan(list(table_id))
    if plan is None:
        return None
    latest = int(versions["version"].max())
    if plan.latest != latest or not set(plan.delete) <= set(versions["version"]):
        feedback.show(
            "warning",
            f"The table changed since the dry run (its latest version was v{plan.latest}, now "
            f"v{latest}): run it again.",
        )
        return None
    render_cleanup_plan(plan, versions, key_prefix=key_prefix)
    if not plan.delete:
        return None
    table = table_id[-1]
    confirmed = render_confirmed_form(
        f"{key_prefix}.run",
        table,
        what="table",
        button=f"Delete {plural(len(plan.delete), 'version')}",
        icon=":material/delete_sweep:",
        not_done="Nothing deleted",
        read_only=read_only,
        operation="batch_delete_table_versions",
        on_submit=(lambda failure_key: on_submit(plan, failure_key)) if on_submit else None,
    )
    return plan if confirmed else None


def plan_frame(plan: lc.CleanupPlan, versions: pd.DataFrame) -> pd.DataFrame:
    """Every version (newest first) with what the plan does to it, and why."""
    going = set(plan.delete)

    def fate(v: int) -> str:
        if v in going:
            return "to delete"
        if v == plan.latest:
            return "kept: latest"
        if v in plan.protected:
            return "kept: tagged " + ", ".join(plan.protected[v])
        return "kept: policy"

    rows = versions[["version", "timestamp"]].copy()
    rows["version"] = rows["version"].astype(int)
    rows["fate"] = [fate(int(v)) for v in rows["version"]]
    return rows.reset_index(drop=True)


def render_cleanup_plan(plan: lc.CleanupPlan, versions: pd.DataFrame, *, key_prefix: str) -> None:
    """The dry run: one line saying what goes and what is protected, and the versions."""
    tagged = ", ".join(f"v{v} ({', '.join(t)})" for v, t in sorted(plan.protected.items()))
    head = f"Dry run ({plan.policy}): "
    if plan.delete:
        head += f"deletes {plural(len(plan.delete), 'version')} ({runs(plan.delete)})"
        head += f", keeps {plural(len(plan.keep), 'version')}"
    else:
        head += "deletes nothing"
    head += f". Kept because tagged: {tagged}." if tagged else ". No tagged version is affected."
    feedback.show("info", head)
    dataframe(
        plan_frame(plan, versions),
        hide_index=True,
        key=f"{key_prefix}.plan",
        width="content",
        height=35 * (min(len(versions), 10) + 1) + 3,
        column_config={
            "version": st.column_config.NumberColumn("Version", format="%d", width=80),
            "timestamp": st.column_config.DatetimeColumn(
                "Created (UTC)", format="YYYY-MM-DD HH:mm:ss", width=170
            ),
            "fate": st.column_config.TextColumn("Dry run", width=220),
        },
    )
