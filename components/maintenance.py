"""The Maintenance page's panels: a namespace's policy (edited and saved by admins), its
dry run (which tables would be compacted, optimized or cleaned up, and why) and running it in
the background with its results (``backend.services.maintenance``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from backend.rules import ids
from backend.services import maintenance as mt
from backend.services.health import TARGET_ROWS_PER_FRAGMENT
from backend.text import plural
from components import feedback, state
from components.cache import cached, invalidate, invalidate_tables
from components.common import dataframe
from components.connection import render_role_lock, role_lock
from components.writes import TaskRequest, Write, session_tasks

TASK_KIND = "maintenance_plan"
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
            label[:1].upper() + label[1:],
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
    with st.expander("Edit the policy", icon=":material/edit:", expanded=False):
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
        "fragments": st.column_config.NumberColumn("Fragments", format="%d"),
        "small_fragments": st.column_config.NumberColumn("Small", format="%d"),
        "small_share": st.column_config.NumberColumn("Small (%)", format=pct),
        "deleted_share": st.column_config.NumberColumn("Deleted (%)", format=pct),
        "unindexed_share": st.column_config.NumberColumn("Unindexed (%)", format=pct),
        "old_versions": st.column_config.NumberColumn("Old versions", format="%d"),
        "old_bytes": st.column_config.NumberColumn("Old versions' bytes", format="%d"),
        "error": st.column_config.TextColumn("Error"),
    }


def plan_view(plan: mt.Plan) -> pd.DataFrame:
    """The plan's frame with its shares in percent."""
    frame = plan.frame()
    for col in ("small_share", "deleted_share", "unindexed_share"):
        frame[col] = frame[col] * 100
    return frame


def _tasks(namespace_id: Sequence[str]) -> list[Any]:
    return session_tasks((TASK_KIND,), namespace_id)


def render_plan(ns: Any, namespace_id: Sequence[str], *, read_only: bool) -> TaskRequest | None:
    """ "Make the plan (dry run)", the plan (kept for the session), and "Run the plan";
    returns the run to start in the background."""
    from backend.services.tasks import TASKS

    nsid = list(namespace_id)
    # a run of this namespace going on in this console (any session)
    running = any(t.kind == TASK_KIND for t in TASKS.running(tuple(nsid)))
    if st.button(
        "Make the plan (dry run)", key=state.Maintenance.PLAN_GO, icon=":material/checklist:"
    ):
        made = feedback.run(mt.plan, ns, nsid, action="Planning the maintenance")
        state.set_maintenance_plan(nsid, made)
    plan: mt.Plan | None = state.maintenance_plan(nsid)
    if plan is None:
        st.caption("The plan reads every table's health (no scan of the data) and changes nothing.")
        return None
    source = "the saved policy" if plan.source == mt.SAVED else "the default policy"
    feedback.show(
        "info",
        f"Dry run of {source} at {plan.made_at:%H:%M:%S} UTC: {plan.summary()}. Nothing was "
        "changed.",
    )
    dataframe(
        plan_view(plan),
        hide_index=True,
        key=f"{state.Maintenance.PLAN}.grid",
        column_config=plan_column_config(),
    )
    runnable = plan.runnable
    blocked = {s.blocked for s in plan.todo if s.blocked}
    for reason in sorted(blocked):
        st.caption(":material/block: " + feedback.as_text(f"Cannot run here: {reason}"))
    why_not = (
        "read-only connection"
        if read_only
        else "a run is going on"
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
        help=f"Disabled: {why_not}." if why_not else None,
    ):

        def work(progress: Any, plan: mt.Plan = plan) -> mt.RunReport:
            return mt.run_plan(ns, plan, progress)

        label = f"Maintenance of {ids.display_id(nsid)}"
        return TaskRequest(TASK_KIND, label, tuple(nsid), work)
    return None


def render_results(namespace_id: Sequence[str]) -> None:
    """The latest run of this namespace in this session: its progress while it runs, then
    every action's result."""
    nsid = list(namespace_id)
    if not _tasks(nsid):
        return

    def panel() -> None:
        task = _tasks(nsid)[0]
        if not task.done:
            st.progress(
                task.fraction or 0.0, text=f"{task.label}: {task.stage} ({task.elapsed:.0f} s)"
            )
            return
        if task.status == "failed":
            feedback.show_error(task.error, action=task.label)
            return
        report: mt.RunReport = task.result
        if state.first_time_finished(task.task_id):
            state.set_maintenance_plan(None)  # the tables changed: plan again
            invalidate_tables([list(r.table_id) for r in report.results])
            st.rerun(scope="app")
        kind = "success" if report.ok else "warning"
        feedback.show(kind, f"{task.label}: {report.summary()} ({task.elapsed:.1f} s).")
        dataframe(
            report.frame(),
            hide_index=True,
            key=f"{state.Maintenance.RUN}.grid",
            column_config={
                "table": st.column_config.TextColumn("Table"),
                "action": st.column_config.TextColumn("Action"),
                "status": st.column_config.TextColumn("Status"),
                "result": st.column_config.TextColumn("Result", width="large"),
                "seconds": st.column_config.NumberColumn("Seconds", format="%.2f"),
            },
        )

    running = not _tasks(nsid)[0].done
    st.fragment(panel, run_every=1.0 if running else None)()


__all__ = [
    "FIELDS",
    "TASK_KIND",
    "namespace_policy",
    "overrides_frame",
    "overrides_from_frame",
    "plan_view",
    "policy_saved",
    "render_plan",
    "render_policy",
    "render_results",
]
