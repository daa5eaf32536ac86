"""The Health panel of a table: the figures of ``backend.services.health``, the verdict and the
recommended maintenance with its reasons and expected effect, and (given an :class:`Offer`)
its actions: Optimize indexes, Compact files and Clean up old versions on every table, each
submitted as a job (``backend.services.jobs``; the page submits the request returned), with
the table's latest maintenance job followed under them whichever console started it. A
button that cannot act says why (read-only, the role: a cleanup is an admin's, the backend:
over REST the spec has no compaction or optimize, no index to optimize, a job running). With a
Ray address given at launch, a compaction can run on Ray."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from backend.branch_view import MAIN, branch_of, on_branch
from backend.capabilities import BackendCapabilities
from backend.services import health as hs
from backend.services import jobs
from backend.services.maintenance.policy import MAX_DAYS
from backend.text import human_bytes, plural
from components import feedback, polling, state
from components.cache import cached, invalidate_tables, table_scope
from components.common import dataframe, render_role_lock
from components.jobs import maintenance_outcome, outcome_text, render_executor_choice
from components.session import role_lock
from components.versions.reads import version_facts
from components.writes import JobRequest, table_jobs

VERDICT_ICONS = {
    hs.HEALTHY: ":material/check_circle:",
    hs.NEEDS_ATTENTION: ":material/warning:",
    hs.UNKNOWN: ":material/help:",
}
ACTION_LABELS = {
    "compact": "Compact files",
    "optimize": "Optimize indexes",
    "cleanup": "Clean up old versions",
}
ACTION_ICONS = {
    "optimize": ":material/auto_fix_high:",
    "compact": ":material/compress:",
    "cleanup": ":material/cleaning_services:",
}
KINDS = ("optimize", "compact", "cleanup")  # the panel's actions, in the order shown


@dataclass(frozen=True)
class Offer:
    """What the panel's actions need: the namespace (a branch view acts on its branch), its
    capabilities, whether the connection is read-only, whether the table has indexes and
    whether they lag, the page (for the outcome's message) and the buttons' key prefix."""

    ns: Any
    caps: BackendCapabilities
    read_only: bool
    key_prefix: str
    has_indexes: bool = True
    lagging: bool = False
    page: str = "indexes"


@dataclass(frozen=True)
class HealthPanel:
    """What the panel read (``None``: it could not) and the job a button asked for."""

    health: hs.TableHealth | None
    asked: JobRequest | None = None


@cached(lambda table_id, version, branch=MAIN, unindexed=None: table_scope(table_id), ttl=60)
def table_health(
    ns: Any,
    table_id: tuple[str, ...],
    version: int | None,
    branch: str = MAIN,
    unindexed: tuple[tuple[str, int | None], ...] | None = None,
) -> hs.TableHealth:
    """The health of the table's ``branch`` at ``version`` (its latest: a new version is read
    anew; the operations of versions read before come from ``version_facts``). ``unindexed``:
    each index's unindexed rows at ``version``, read already (``hs.table_health``'s
    ``unindexed_rows``)."""
    return hs.table_health(
        on_branch(ns, branch), list(table_id), facts=version_facts(), unindexed_rows=unindexed
    )


def _count(value: int | None) -> str:
    return "not known" if value is None else f"{value:,}"


def unindexed_text(unindexed: Mapping[str, int | None]) -> str:
    """Each index's unindexed rows, ``name: count``; the same count for every one of several
    indexes (built and optimized together) said once, which a list of them would repeat past
    the cell's width."""
    counts = set(unindexed.values())
    if len(unindexed) > 1 and len(counts) == 1 and None not in counts:
        (count,) = counts
        return f"{_count(count)} in each of its {len(unindexed)} indexes"
    return ", ".join(f"{name}: {_count(rows)}" for name, rows in sorted(unindexed.items()))


def figure_lines(health: hs.TableHealth) -> list[tuple[str, str]]:
    """(label, value) of every figure the panel lists, as text."""
    small = health.small_fragments
    deleted = _count(health.deleted_rows)
    if health.deleted_share is not None and health.deleted_rows is not None:
        deleted += f" ({health.deleted_share:.1%})"
    if health.unindexed_rows is None:
        unindexed = "not known"
    elif not health.unindexed_rows:
        unindexed = "no index"
    else:
        unindexed = unindexed_text(health.unindexed_rows)
    old = "not known" if health.old_version_bytes is None else human_bytes(health.old_version_bytes)
    freed = health.cleanup_bytes
    if health.old_version_bytes and freed is not None and freed < health.old_version_bytes:
        old += f" ({human_bytes(freed)} older than {plural(health.cleanup_keep_days, 'day')})"

    def event(e: hs.Event | None) -> str:
        if e is None:
            return "none seen"
        when = f" ({e.at:%Y-%m-%d %H:%M} UTC)" if e.at is not None else ""
        return f"version {e.version}{when}"

    return [
        ("Rows", _count(health.rows)),
        ("Fragments", f"{_count(health.fragments)} ({_count(small)} small)"),
        ("Deleted rows", deleted),
        ("Unindexed rows", unindexed),
        ("Versions", _count(health.versions)),
        ("Held by old versions", old),
        ("Last compaction", event(health.last_compaction)),
        ("Last index build or optimize", event(health.last_optimize)),
        ("Last cleanup", "not recorded by lance"),
    ]


def render_health(
    table_id: Sequence[str],
    version: int | None,
    *,
    key_prefix: str,
    branch: str = MAIN,
    offer: Offer | None = None,
    unindexed: tuple[tuple[str, int | None], ...] | None = None,
) -> HealthPanel:
    """The panel (of the table's ``branch``): verdict, figures, recommended actions (reason
    and effect), notes, and with ``offer`` the actions' buttons (:func:`render_actions`).
    ``unindexed``: each index's unindexed rows at ``version``, when the page has read them
    (:func:`table_health`). Returns the health read (``None`` when it could not be read: the
    error is shown; the buttons are offered still) and the job asked for."""
    health = feedback.run(
        table_health, tuple(table_id), version, branch, unindexed, action="Reading table health"
    )
    if health is None:
        asked = render_actions(offer, table_id, None) if offer is not None else None
        return HealthPanel(None, asked)
    with st.container(border=True, key=f"{key_prefix}.panel"):  # its own CSS class
        icon = VERDICT_ICONS.get(health.verdict, "")
        st.markdown(f"**Health:** {icon} {feedback.as_text(health.verdict)}")
        lines = figure_lines(health)
        dataframe(
            {"figure": [label for label, _ in lines], "value": [value for _, value in lines]},
            hide_index=True,
            width="stretch",
            words=True,
        )
        for action in health.actions:
            grade = "Recommended" if action.recommended else "Optional"
            label = ACTION_LABELS.get(action.kind, action.kind)
            st.markdown(
                feedback.as_text(f"{grade}: {label}. Why: {action.reason}. ")
                + feedback.as_text(f"Expected effect: {action.effect}.")
            )
        if not health.actions:
            st.caption("No maintenance needed.")
        if health.notes:
            st.caption(feedback.as_text("Notes: " + "; ".join(health.notes) + "."))
        asked = render_actions(offer, table_id, health) if offer is not None else None
    return HealthPanel(health, asked)


def _operation(kind: str) -> str:
    """The gate operation whose role a job of ``kind`` needs."""
    return jobs.KINDS[kind].operation_for({})


def _why_not(kind: str, offer: Offer, executor: str) -> str | None:
    """Why the button of ``kind`` cannot act on this backend or table (``None``: it can)."""
    from backend.services.tuning.optimize import MAINTENANCE_UNSUPPORTED

    if kind == "optimize" and not offer.has_indexes:
        return "the table has no index"
    if kind in ("optimize", "compact") and not offer.caps.maintenance and executor == "local":
        return MAINTENANCE_UNSUPPORTED
    on = branch_of(offer.ns)
    if kind == "cleanup" and on is not None:
        return f"a cleanup acts on the table's main, not branch {on}: pick main to clean up"
    return None


def render_actions(
    offer: Offer, table_id: Sequence[str], health: hs.TableHealth | None
) -> JobRequest | None:
    """Optimize indexes, Compact files and Clean up old versions (keeping the versions of the
    last days chosen, the latest and the tagged ones: lance's ``cleanup_old_versions``), each
    a job; the one health recommends is primary; the latest maintenance job of the table's
    branch is followed under them. Returns the job asked for."""
    tid = tuple(table_id)
    prefix = offer.key_prefix
    latest = feedback.run(latest_jobs, offer.ns, tid, KINDS, action="Reading the table's jobs")
    running = any(not j.done for j in latest or [])
    executor, options = render_executor_choice(key=f"{prefix}.ray", branch=branch_of(offer.ns))
    urged = {a.kind for a in (health.actions if health else ()) if a.recommended}
    if offer.lagging:
        urged.add("optimize")
    columns = st.columns([1, 1, 1.3, 0.8], vertical_alignment="bottom")
    with columns[3]:
        days = st.number_input(
            "Clean up: keep (days)",
            min_value=0,
            max_value=MAX_DAYS,
            value=health.cleanup_keep_days if health else hs.CLEANUP_KEEP_DAYS,
            step=1,
            key=f"{prefix}.cleanup_days",
            help="Clean up old versions keeps the versions of the last this many days, the "
            "latest and the tagged ones, and removes the others with the files only they need; "
            "time travel to them ends.",
        )
    asked: JobRequest | None = None
    locks: list[str] = []
    for column, kind in zip(columns, KINDS, strict=False):
        runs_on = executor if kind == "compact" else "local"
        why = _why_not(kind, offer, runs_on)
        locked = role_lock(_operation(kind), offer.read_only)
        if locked and locked not in locks:
            locks.append(locked)
        reason = (
            "Disabled: read-only connection"
            if offer.read_only
            else f"Disabled: {locked or why}"
            if locked or why
            else "Disabled: a maintenance job of this table is running"
            if running
            else None
        )
        label = ACTION_LABELS[kind]
        if column.button(
            label,
            key=f"{prefix}.{kind}",
            icon=ACTION_ICONS[kind],
            type="primary" if kind in urged and reason is None else "secondary",
            disabled=reason is not None,
            help=reason,
        ):
            params = {"older_than_days": int(days)} if kind == "cleanup" else {}
            ray = runs_on == "ray"
            asked = JobRequest(
                kind, tid, params, label + (" on Ray" if ray else ""),
                executor=runs_on, executor_options=options if ray else {},
            )  # fmt: skip
    for lock in locks:
        render_role_lock(lock)
    if latest:
        follow_latest(offer.ns, tid, KINDS, page=offer.page)
    return asked


def latest_jobs(ns: Any, table_id: tuple[str, ...], kinds: Sequence[str]) -> list[jobs.Job]:
    """The table's latest job of ``kinds`` on ``ns``'s branch (any console's), followed by
    this session while it runs."""
    on = branch_of(ns)
    found = [j for j in table_jobs(ns, table_id, kinds, limit=5) if j.branch == on]
    return found[:1]


def follow_latest(ns: Any, table_id: tuple[str, ...], kinds: Sequence[str], *, page: str) -> None:
    """The table's latest maintenance job: its progress while it runs (read again every
    second), then, once, its outcome (the table's reads refreshed) when this session followed
    it; a failure's error."""

    def panel() -> None:
        found = latest_jobs(ns, table_id, kinds)
        if not found:
            return
        job = found[0]
        label = ACTION_LABELS.get(job.kind, job.label)
        if job.executor == "ray":
            label += " on Ray"
        if not job.done:
            who = f", started by {job.who}" if job.who else ""
            st.progress(
                job.fraction or 0.0,
                text=feedback.as_text(f"{label}: {job.stage} ({job.elapsed:.0f} s{who})"),
            )
            return
        if job.id not in state.followed_jobs():
            return  # ended before this session saw it: the Jobs page tells it
        if job.state == "succeeded":
            if state.first_time_finished(job.id):
                invalidate_tables([list(table_id)])
                result = job.result if isinstance(job.result, dict) else {}
                change = (
                    maintenance_outcome(result)
                    if job.kind in ("compact", "optimize")
                    else outcome_text(job) or "done"
                )
                feedback.flash(page, "success", f"{label}: {change} ({job.elapsed:.1f} s).")
                polling.rerun_page()
        elif (error := job.exception()) is not None:
            feedback.show_error(error, action=label)

    active = any(not j.done for j in latest_jobs(ns, table_id, kinds))
    polling.fragment(panel, every=1.0 if active else None)
