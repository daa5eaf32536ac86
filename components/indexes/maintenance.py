"""Optimize the indexes and compact the files of a table, as jobs, with the latest one followed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from backend.capabilities import BackendCapabilities
from components import feedback
from components.health import ACTION_LABELS, follow_latest, latest_jobs
from components.session import role_lock
from components.writes import JobRequest

MAINTENANCE_KINDS = ("optimize", "compact")


def render_maintenance(
    ns: Any,
    table_id: Sequence[str],
    *,
    lagging: bool,
    caps: BackendCapabilities,
    read_only: bool,
    key_prefix: str,
    page: str = "indexes",
    has_indexes: bool = True,
) -> JobRequest | None:
    """Compact files (every table) and optimize the indexes (cover unindexed rows; a table
    with indexes), as jobs (``backend.services.jobs``), with progress; the table's latest
    maintenance job (on ``ns``'s branch) is followed here, whichever console started it, and
    the table's reads are refreshed when one this session followed ends
    (``health.follow_latest``). Over REST: why not. Returns the job a button asked for (the
    page submits it: ``components.writes.submit_job``). The Indexes page offers these in its
    Health panel (``components.health.render_actions``, with Clean up)."""
    from backend.services.tuning.optimize import MAINTENANCE_UNSUPPORTED

    tid = tuple(table_id)
    if not caps.maintenance:
        if lagging:
            st.caption(":material/info: " + feedback.as_text(MAINTENANCE_UNSUPPORTED))
        return None
    asked: JobRequest | None = None
    latest = (
        feedback.run(latest_jobs, ns, tid, MAINTENANCE_KINDS, action="Reading the table's jobs")
        or []
    )
    running = any(not j.done for j in latest)
    c1, c2, _ = st.columns([1, 1, 3])
    actions = {"compact": (c1, ACTION_LABELS["compact"], ":material/compress:")}
    if has_indexes:
        actions = {
            "optimize": (c1, ACTION_LABELS["optimize"], ":material/auto_fix_high:"),
            "compact": (c2, ACTION_LABELS["compact"], ":material/compress:"),
        }
    for kind, (col, label, icon) in actions.items():
        locked = role_lock("compact_files" if kind == "compact" else "optimize_indexes", read_only)
        if col.button(
            label,
            key=f"{key_prefix}.{kind}",
            icon=icon,
            type="primary" if kind == "optimize" and lagging else "secondary",
            disabled=read_only or running or locked is not None,
            help="Disabled: read-only connection" if read_only else locked,
        ):
            asked = JobRequest(kind, tid, {}, label)
    if latest:
        follow_latest(ns, tid, MAINTENANCE_KINDS, page=page)
    return asked
