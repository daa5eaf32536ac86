"""The Health panel of a table: the figures of ``backend.services.health``, the verdict and the
recommended maintenance with its reasons and expected effect (the page's Compact / Optimize
buttons sit beside it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from backend.branch_view import MAIN, on_branch
from backend.services import health as hs
from backend.text import human_bytes
from components import feedback
from components.cache import cached, table_scope
from components.common import dataframe

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


@cached(lambda table_id, version, branch=MAIN: table_scope(table_id), ttl=60)
def table_health(
    ns: Any, table_id: tuple[str, ...], version: int | None, branch: str = MAIN
) -> hs.TableHealth:
    """The health of the table's ``branch`` at ``version`` (its latest: a new version is read
    anew)."""
    return hs.table_health(on_branch(ns, branch), list(table_id))


def _count(value: int | None) -> str:
    return "not known" if value is None else f"{value:,}"


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
        unindexed = ", ".join(
            f"{name}: {_count(rows)}" for name, rows in sorted(health.unindexed_rows.items())
        )
    old = "not known" if health.old_version_bytes is None else human_bytes(health.old_version_bytes)

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
    table_id: Sequence[str], version: int | None, *, key_prefix: str, branch: str = MAIN
) -> hs.TableHealth | None:
    """The panel (of the table's ``branch``): verdict, figures, recommended actions (reason
    and effect), notes. Returns the health read (``None`` when it could not be read: the
    error is shown)."""
    health = feedback.run(
        table_health, tuple(table_id), version, branch, action="Reading table health"
    )
    if health is None:
        return None
    with st.container(border=True, key=f"{key_prefix}.panel"):  # its own CSS class
        icon = VERDICT_ICONS.get(health.verdict, "")
        st.markdown(f"**Health:** {icon} {feedback.as_text(health.verdict)}")
        dataframe(
            {
                "figure": [label for label, _ in figure_lines(health)],
                "value": [value for _, value in figure_lines(health)],
            },
            hide_index=True,
            width="stretch",
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
    return health


__all__ = ["ACTION_LABELS", "figure_lines", "render_health", "table_health"]
