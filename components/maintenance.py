"""The Maintenance page's panels: a namespace's policy (edited and saved by admins), its
dry run (which tables would be compacted, optimized or cleaned up, and why) and running it as
one job (the ``plan`` kind of ``backend.services.jobs``: every console on the namespace sees
it, a dead process leaves it interrupted, a cancel stops it before the next table), followed
with its per-table results (``backend.services.maintenance``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from backend.rules import ids
from backend.services import maintenance as mt
from backend.services.health import TARGET_ROWS_PER_FRAGMENT
from backend.services.maintenance.plan_jobs import KIND as PLAN_KIND  # the job kind of a plan run
from backend.text import capital, plural, some_of
from components import feedback, polling, state
from components.cache import cached, invalidate, invalidate_tables
from components.common import dataframe, lazy_expander, render_role_lock
from components.jobs import JobAction, render_plan_results
from components.session import role_lock
from components.tables.catalog import namespace_names
from components.versions.reads import version_facts
from components.writes import JobRequest, Write

INHERIT, ON, OFF = "as the namespace", "on", "off"
# The editable settings of each kind: (setting, label, percent?, lowest, highest)
FIELDS: dict[str, tuple[tuple[str, str, bool, int, int], ...]] = {
    mt.COMPACT: (
        ("small_share", "small fragments beyond (%)", True, 0, 100),
        ("deleted_share", "deleted rows beyond (%)", True, 0, 100),
        ("small_fragment_rows", "small: fewer rows than", False, 1, TARGET_ROWS_PER_FRAGMENT),
    ),
    mt.OPTIMIZE: (("unindexed_share", "unindexed rows beyond (%)", True, 0, 100),),
    mt.CLEANUP: (("older_than_days", "keep the last (days)", False, 0, mt.policy.MAX_DAYS),),
}
KIND_LABELS = {
    mt.COMPACT: "Compact files",
    mt.OPTIMIZE: "Optimize indexes",
    mt.CLEANUP: "Clean up old versions",
}


def policy_scope(namespace_id: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    return ("maintenance_policy", tuple(namespace_id))


@cached(policy_scope, ttl=10)
def namespace_policy(ns: Any, namespace_id: tuple[str, ...]) -> mt.SavedPolicy:
    """The namespace's saved policy (else the default); read again after a save here, and
    every 10 s (another console or ``lance-console maintain`` may save one)."""
    return mt.load_policy(ns, list(namespace_id))


def policy_saved(namespace_id: Sequence[str]) -> None:
    """After a save or a reset: the policy and the dry run of this namespace are read anew."""
    invalidate(policy_scope(namespace_id))
    state.set_maintenance_plan(None)
    state.reset_forms(state.Maintenance.PAGE)


# -- the policy form ------------------------------------------------------------------------------


def _shown(setting: str, value: Any, percent: bool) -> Any:
    if value is None:
        return None
    return round(float(value) * 100, 6) if percent else int(value)


def overrides_frame(policy: mt.Policy) -> pd.DataFrame:
    """The per-table overrides as the editor's rows: per kind ``on`` / ``off`` / ``as the
    namespace``, and the settings given (shares in %)."""
    rows = []
    for table, override in sorted(policy.tables.items()):
        row: dict[str, Any] = {"table": table}
        for kind, fields in FIELDS.items():
            given = override.get(kind, {}) if kind in override else None
            row[kind] = INHERIT if kind not in override else (OFF if given is None else ON)
            for setting, _label, percent, _lo, _hi in fields:
                value = (given or {}).get(setting)
                row[f"{kind}.{setting}"] = _shown(setting, value, percent)
        rows.append(row)
    columns = ["table", *[c for k, f in FIELDS.items() for c in (k, *[f"{k}.{s[0]}" for s in f])]]
    return pd.DataFrame(rows, columns=columns)


def _number(value: Any) -> float | None:
    if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NA:
        return None
    return float(value)


def overrides_from_frame(frame: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """The editor's rows as the stored form's ``tables`` (rows without a table are left out;
    the backend checks the rest)."""
    out: dict[str, dict[str, Any]] = {}
    for row in frame.to_dict("records"):
        table = row.get("table")
        if table is None or (isinstance(table, float) and pd.isna(table)) or not str(table):
            continue
        kinds: dict[str, Any] = {}
        for kind, fields in FIELDS.items():
            mode = row.get(kind) or INHERIT
            settings: dict[str, Any] = {}
            for setting, _label, percent, _lo, _hi in fields:
                value = _number(row.get(f"{kind}.{setting}"))
                if value is not None:
                    settings[setting] = value / 100 if percent else value
            if mode == OFF:
                kinds[kind] = False
            elif mode == ON or settings:
                kinds[kind] = settings
        out[str(table)] = kinds
    return out


def _kind_fields(kind: str, rule: Any, key: str) -> tuple[bool, dict[str, Any]]:
    """A kind's switch and its settings (the default's when the kind is off)."""
    default = mt.policy.RULES[kind]()
    on = st.checkbox(KIND_LABELS[kind], value=rule is not None, key=f"{key}.{kind}")
    values: dict[str, Any] = {}
    for setting, label, percent, low, high in FIELDS[kind]:
        current = getattr(rule or default, setting)
        bounds: tuple[Any, Any] = (float(low), float(high)) if percent else (low, high)
        typed = st.number_input(
            capital(label),
            min_value=bounds[0],
            max_value=bounds[1],
            value=_shown(setting, current, percent),
            step=0.5 if percent else 1,
            key=f"{key}.{kind}.{setting}",
        )
        values[setting] = typed / 100 if percent else int(typed)
    return on, values


def render_policy(
    ns: Any, saved: mt.SavedPolicy, table_names: Sequence[str], *, read_only: bool
) -> Write | None:
    """The namespace's policy in words, where it is kept, and (for admins) its form: the
    three kinds with their thresholds and per-table overrides; returns the save (or the
    reset to the default) to perform."""
    nsid = list(saved.namespace_id)
    st.caption(feedback.as_text(saved.describe() + "."))
    st.markdown("\n".join(f"- {feedback.as_text(line)}" for line in saved.policy.describe()))
    locked = role_lock(mt.store.SAVE, read_only)
    disabled = read_only or locked is not None
    key = state.maintenance_form(nsid)
    asked: Write | None = None
    with st.expander(
        "Edit the policy",
        icon=":material/edit:",
        expanded=False,
        key=state.Maintenance.EDIT_POLICY_OPEN,
    ):
        with st.form(key, border=False):
            columns = st.columns(3)
            kinds: dict[str, Any] = {}
            for column, kind in zip(columns, mt.KINDS, strict=True):
                with column:
                    on, values = _kind_fields(kind, saved.policy.rules.get(kind), key)
                    kinds[kind] = values if on else False
            st.caption(
                "Per-table overrides: a kind on or off for one table, and its own settings "
                "(empty: the namespace's)."
            )
            choices = sorted(set(table_names) | set(saved.policy.tables))
            column_config: dict[str, Any] = {
                "table": st.column_config.SelectboxColumn("Table", options=choices, required=True)
            }
            for kind, fields in FIELDS.items():
                column_config[kind] = st.column_config.SelectboxColumn(
                    kind.capitalize(), options=[INHERIT, ON, OFF], default=INHERIT
                )
                for setting, label, _percent, low, high in fields:
                    column_config[f"{kind}.{setting}"] = st.column_config.NumberColumn(
                        f"{kind}: {label}", min_value=low, max_value=high
                    )
            edited = st.data_editor(
                overrides_frame(saved.policy),
                num_rows="dynamic",
                hide_index=True,
                column_config=column_config,
                key=f"{key}.tables",
            )
            submitted = st.form_submit_button(
                "Save the policy", icon=":material/save:", type="primary", disabled=disabled
            )
            render_role_lock(locked)
        if submitted and not disabled:
            form = {"kinds": kinds, "tables": overrides_from_frame(edited)}
            asked = Write(
                mt.save_policy,
                (ns, nsid, form),
                f"Saving the maintenance policy of {ids.display_id(nsid)}",
                f"Maintenance policy of {ids.display_id(nsid)} saved.",
            )
        if saved.source == mt.SAVED and st.button(
            "Back to the default policy",
            key=state.Maintenance.RESET,
            icon=":material/restart_alt:",
            disabled=disabled,
        ):
            asked = Write(
                mt.delete_policy,
                (ns, nsid),
                f"Forgetting the maintenance policy of {ids.display_id(nsid)}",
                f"The default policy applies to {ids.display_id(nsid)} again.",
            )
    return asked


# -- the plan and its run -------------------------------------------------------------------------


def plan_column_config() -> dict[str, Any]:
    pct = "%.1f%%"
    return {
        "table": st.column_config.TextColumn("Table"),
        "action": st.column_config.TextColumn("Action"),
        "run": st.column_config.CheckboxColumn("Would run"),
        "why": st.column_config.TextColumn("Why", width="large"),
        "effect": st.column_config.TextColumn("Expected effect", width="large"),
        "blocked": st.column_config.TextColumn("Cannot run here"),
        "fragments": st.column_config.NumberColumn("Fragments", format="localized"),
        "small_fragments": st.column_config.NumberColumn("Small", format="localized"),
        "small_share": st.column_config.NumberColumn("Small (%)", format=pct),
        "deleted_share": st.column_config.NumberColumn("Deleted (%)", format=pct),
        "unindexed_share": st.column_config.NumberColumn("Unindexed (%)", format=pct),
        "old_versions": st.column_config.NumberColumn("Old versions", format="localized"),
        "old_bytes": st.column_config.NumberColumn("Held by old versions"),  # a size
        "error": st.column_config.TextColumn("Error"),
    }


def plan_view(plan: mt.Plan) -> pd.DataFrame:
    """The plan's frame with its shares in percent."""
    frame = plan.frame()
    for col in ("small_share", "deleted_share", "unindexed_share"):
        frame[col] = frame[col] * 100
    return frame


TEXT_FIELDS = ("action", "why", "effect", "blocked")  # a plan row's texts (None when empty)


def plan_reasons(view: pd.DataFrame) -> list[str]:
    """Each row of the plan's grid (``view``, :func:`plan_view`) as a line of markdown with
    its reason, expected effect and why it cannot run here in full (the grid's cells cut long
    ones): "**table · action** (would run): why; expected effect: …"."""
    lines = []
    for row in view.to_dict("records"):
        text = {k: row[k] if isinstance(row[k], str) and row[k] else None for k in TEXT_FIELDS}
        head = feedback.as_text(row["table"])
        if text["action"]:
            head += f" · {feedback.as_text(text['action'])}"
        line = f"- **{head}** ({'would run' if row['run'] else 'would not run'}): "
        line += feedback.as_text(text["why"] or "")
        if text["effect"]:
            line += f"; expected effect: {feedback.as_text(text['effect'])}"
        if text["blocked"]:
            line += f"; cannot run here: {feedback.as_text(text['blocked'])}"
        lines.append(line)
    return lines


def plan_jobs(ns: Any, namespace_id: tuple[str, ...], limit: int = 1) -> list[Any]:
    """The latest plan jobs of the namespace (any console's), newest first; a running one is
    followed by this session."""
    from backend.services import jobs

    found = jobs.list_jobs(ns, list(namespace_id), kinds=(PLAN_KIND,), limit=limit)
    for job in found:
        if not job.done:
            state.follow_job(job.id)
    return found


def no_tables_here(namespace_id: Sequence[str]) -> str:
    """What a plan of a namespace without tables of its own says: a plan covers one
    namespace's tables, not those of the namespaces inside it (named, to pick instead)."""
    where = ids.display_id(namespace_id)
    inside = feedback.run(namespace_names, tuple(namespace_id), action="Listing the namespaces")
    text = (
        f"{where} holds no tables of its own (a plan covers the tables of one namespace, not "
        "those of the namespaces inside it)."
    )
    if inside:
        names = [ids.display_id([*namespace_id, n]) for n in sorted(inside)]
        text += f" Pick one of the namespaces inside it in the Namespace box: {some_of(names, 5)}."
    return text


def render_plan(ns: Any, namespace_id: Sequence[str], *, read_only: bool) -> JobRequest | None:
    """ "Make the plan (dry run)", the plan (kept for the session), and "Run the plan";
    returns the job to submit (a ``plan`` job of this namespace)."""
    nsid = list(namespace_id)
    latest = feedback.run(plan_jobs, ns, tuple(nsid), action="Reading the plan's jobs") or []
    running = any(not j.done for j in latest)
    if st.button(
        "Make the plan (dry run)", key=state.Maintenance.PLAN_GO, icon=":material/checklist:"
    ):
        made = feedback.run(
            mt.plan, ns, nsid, facts=version_facts(), action="Planning the maintenance"
        )
        state.set_maintenance_plan(nsid, made)
    plan: mt.Plan | None = state.maintenance_plan(nsid)
    if plan is None:
        st.caption("The plan reads every table's health (no scan of the data) and changes nothing.")
        return None
    source = "the saved policy" if plan.source == mt.SAVED else "the default policy"
    if not plan.tables:  # no grid and no run of nothing: where the tables are instead
        feedback.show(
            "info",
            f"Dry run of {source} at {plan.made_at:%H:%M:%S} UTC: "
            f"{no_tables_here(nsid)} Nothing was changed.",
        )
        return None
    feedback.show(
        "info",
        f"Dry run of {source} at {plan.made_at:%H:%M:%S} UTC: {plan.summary()}. Nothing was "
        "changed.",
    )
    view = plan_view(plan)
    dataframe(
        view,
        sizes=["old_bytes"],
        hide_index=True,
        key=f"{state.Maintenance.PLAN}.grid",
        column_config=plan_column_config(),
    )
    if box := lazy_expander("Every reason in full", key=state.Maintenance.REASONS_OPEN):
        box.markdown("\n".join(plan_reasons(view)))
    runnable = plan.runnable
    blocked = {s.blocked for s in plan.todo if s.blocked}
    for reason in sorted(blocked):
        st.caption(":material/block: " + feedback.as_text(f"Cannot run here: {reason}"))
    locked = role_lock(mt.plan_jobs.OPERATION, read_only)
    why_not = (
        "read-only connection"
        if read_only
        else locked
        if locked
        else "a run of this namespace is going on"
        if running
        else "nothing to run"
        if not runnable
        else None
    )
    if st.button(
        f"Run the plan ({plural(len(runnable), 'action')})",
        key=state.Maintenance.RUN,
        icon=":material/play_arrow:",
        type="primary",
        disabled=why_not is not None,
        help=f"Disabled: {why_not}." if why_not else "Runs as one job, listed on the Jobs page.",
    ):
        label = f"Maintenance of {ids.display_id(nsid)}"
        return JobRequest(PLAN_KIND, tuple(nsid), {"plan": plan.to_dict()}, label)
    return None


def render_results(ns: Any, namespace_id: Sequence[str]) -> JobAction | None:
    """The namespace's latest plan job, whichever console started it: its progress and the
    results so far while it runs, with Cancel; then every action's result (the first time
    this session sees a run it followed end, the tables' reads and the dry run are dropped).
    The page draws it in a fragment read again every second while the job runs. Returns the
    cancel asked for."""
    found = plan_jobs(ns, tuple(namespace_id))
    if not found:
        return None
    job = found[0]
    title = f"Maintenance of {ids.display_id(namespace_id)}"
    who = f"job {job.id}, started by {job.who}"
    asked: JobAction | None = None
    if not job.done:
        text = f"{title}: {job.stage or job.state} ({job.elapsed:.0f} s; {who})"
        st.progress(job.fraction or 0.0, text=feedback.as_text(text))
        locked = role_lock(jobs_operation(job), False)
        if st.button(
            "Cancel the run",
            key=f"{state.Maintenance.RUN}.cancel",
            icon=":material/cancel:",
            disabled=bool(job.cancel_requested or locked),
            help=locked or "The run stops before its next table.",
        ):
            asked = JobAction("cancel", job.id, title)
        if job.cancel_requested:
            st.caption("Cancel asked: the run stops before its next table.")
        render_plan_results(job, key_prefix=state.Maintenance.RUN)
        return asked
    if job.id in state.followed_jobs() and state.first_time_finished(job.id):
        state.set_maintenance_plan(None)  # the tables changed: plan again
        report = mt.report_of(job)
        invalidate_tables([list(r.table_id) for r in (report.results if report else ())])
        polling.rerun_page()
    when = f"({job.elapsed:.1f} s; {who})"
    if job.state == "succeeded":
        report = mt.report_of(job)
        ok = report is None or report.ok
        summary = report.summary() if report else "nothing to do"
        feedback.show("success" if ok else "warning", f"{title}: {summary} {when}.")
    elif job.state == "interrupted":
        feedback.show("warning", f"{title} was interrupted: {job.interrupted} {when}.")
    elif job.state == "cancelled":
        feedback.show("info", f"{title}: {job.error_text or 'cancelled'} {when}.")
    elif (error := job.exception()) is not None:
        feedback.show_error(error, action=title)
    render_plan_results(job, key_prefix=state.Maintenance.RUN)
    return None


def jobs_operation(job: Any) -> str:
    from backend.services import jobs

    return jobs.operation_of(job)
