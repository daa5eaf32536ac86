"""The query history (per table, this session): each search run, and "Re-apply"."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from components import feedback, state

HISTORY_LABEL = {"vector": "Vector searches run", "fts": "Full-text searches run"}


def at_version(version: int | None) -> str:
    return f" · v{version}" if version is not None else ""


def record_run(table_id: tuple[str, ...], kind: str, keys: Sequence[str], summary: str) -> None:
    """Keep a search run in the table's history: the form's values (those set) and a line."""
    settings = {key: state.get(key) for key in keys if state.has(key)}
    state.record_query(table_id, state.QueryRun(kind, settings, summary))


def _reapply(run: state.QueryRun) -> None:
    """A history entry's "Re-apply" (a callback: before the form's widgets are drawn)."""
    for key, value in run.settings.items():
        state.put(key, value)


def render_history(table_id: tuple[str, ...], kind: str) -> None:
    """This session's searches of ``kind`` on the table, newest first, each with "Re-apply"
    (its settings back in the form above; run them with the form's button)."""
    runs = state.query_history(table_id, kind)
    if not runs:
        return
    # keyed: its label counts the runs, and a new run (or the result drawn above it) would
    # shut an open list that Streamlit knows only by its place and label
    with st.expander(
        f"{HISTORY_LABEL[kind]} ({len(runs)})",
        icon=":material/history:",
        key=state.panel_key(f"{state.Search.HISTORY_OPEN}.{kind}", table_id),
    ):
        for i, run in enumerate(runs):
            c1, c2 = st.columns([6, 1], vertical_alignment="center")
            c1.caption(feedback.as_text(f"{i + 1}. {run.summary}"))
            c2.button(
                "Re-apply",
                key=f"{state.Search.HISTORY}.{kind}.{i}",
                on_click=_reapply,
                args=(run,),
                help="Put these settings back in the form above",
            )
        st.caption(
            f"Newest first; the last {state.QUERY_HISTORY_CAP} searches of this table are kept "
            "for this session."
        )
