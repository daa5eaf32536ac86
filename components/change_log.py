"""The Versions page's change log (what each version did, and who) and its row-level compare
of two versions (counts, then the rows inserted, updated and deleted, paged; the columns an
update changed; the method used). Data from ``backend.services.change_log``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from backend.services import change_log as cl
from backend.services import search as ssv
from components import feedback, state
from components.cache import cached, table_scope
from components.common import dataframe, lazy_expander
from components.connection import get_namespace
from components.pager import render_pager

PAGE_ROWS = 50
KINDS = ("updated", "inserted", "deleted")


@cached(lambda table_id, versions: table_scope(table_id), ttl=300, max_entries=128)
def change_log_for(ns: Any, table_id: tuple[str, ...], versions: tuple[int, ...]) -> pd.DataFrame:
    """The change log of ``versions`` (the audit user matched through the gated namespace)."""
    return cl.change_log(ns, list(table_id), versions=versions)


def render_change_log_table(frame: pd.DataFrame, *, key_prefix: str) -> None:
    """One row per version (newest first): operation, rows added / deleted / updated,
    fragments, who and when; the backend's note under it."""
    cols = [
        "version",
        "operation",
        "rows_added",
        "rows_deleted",
        "rows_updated",
        "rows",
        "fragments_added",
        "fragments_removed",
        "user",
        "timestamp",
        "note",
    ]
    shown = frame.sort_values("version", ascending=False)[cols].reset_index(drop=True)
    number = lambda label, w=90: st.column_config.NumberColumn(label, format="%d", width=w)  # noqa: E731
    dataframe(
        shown,
        hide_index=True,
        key=f"{key_prefix}.grid",
        column_config={
            "version": number("Version", 70),
            "operation": st.column_config.TextColumn("Operation", width=160),
            "rows_added": number("Added"),
            "rows_deleted": number("Deleted"),
            "rows_updated": number("Updated"),
            "rows": number("Rows after"),
            "fragments_added": number("Fragments +", 95),
            "fragments_removed": number("Fragments −", 95),
            "user": st.column_config.TextColumn(
                "By (console)", width=150, help="The audit log's user, where the console wrote it"
            ),
            "timestamp": st.column_config.DatetimeColumn(
                "Created (UTC)", format="YYYY-MM-DD HH:mm:ss", width=160
            ),
            "note": st.column_config.TextColumn("Note", width=200),
        },
    )
    if frame.attrs.get("note"):
        st.caption(feedback.as_text(str(frame.attrs["note"])))


def render_change_log_panel(table_id: tuple[str, ...], versions: pd.DataFrame) -> None:
    """The "Change log" expander: the versions in pages (newest first), each one's change."""
    box = lazy_expander(
        "Change log: what each version did",
        key=state.Versions.CHANGE_LOG_OPEN,
        icon=":material/list_alt:",
    )
    if box is None:
        return
    with box:
        listed = sorted((int(v) for v in versions["version"]), reverse=True)
        page = render_pager(
            listed, key_prefix=state.Versions.CHANGE_LOG, reset_on=table_id, noun="versions"
        )
        on_page = tuple(page.items)
        frame = feedback.run(change_log_for, table_id, on_page, action="Reading the change log")
        if frame is not None:
            render_change_log_table(frame, key_prefix=state.Versions.CHANGE_LOG)


def _columns(table_id: Sequence[str]) -> list[str]:
    """The latest version's column names (none when they cannot be read: the compare then
    says why it needs a key, or what is wrong with it)."""
    from components.indexes import table_columns

    found = feedback.run(table_columns, tuple(table_id), action="Reading the columns")
    return [c.name for c in found or []]


def render_row_changes_form(
    table_id: Sequence[str], versions: pd.DataFrame, picked: int, columns: Sequence[str]
) -> tuple[int, int, list[str]] | None:
    """Two versions (older first) and the key columns; the request when pressed."""
    existing = sorted(int(v) for v in versions["version"])
    older = [v for v in existing if v < picked]
    prefix = f"{state.Versions.ROW_CHANGES_FORM}.{tuple(table_id)}"
    with st.form(prefix, border=False):
        st.caption(
            "Which rows changed between two versions. Without key columns lance's delta is "
            "used, which needs a table with stable row ids; otherwise pick the columns that "
            "identify a row."
        )
        ca, cb, cc = st.columns([1, 1, 2])
        va = ca.number_input(
            "From version", min_value=1, value=older[-1] if older else picked, key=f"{prefix}.a"
        )
        vb = cb.number_input("To version", min_value=1, value=picked, key=f"{prefix}.b")
        key = cc.multiselect("Key columns", list(columns), key=f"{prefix}.key")
        go = st.form_submit_button("Compare rows", icon=":material/difference:")
    if not go:
        return None
    missing = [v for v in (int(va), int(vb)) if v not in set(existing)]
    if missing:
        feedback.show("error", f"Version {missing[0]} does not exist.")
        return None
    return int(va), int(vb), list(key)


def changed_frame(changes: cl.RowChanges, kind: str) -> pd.DataFrame:
    """The rows of one kind as a frame; updated rows carry ``changed`` (the columns whose
    values changed, comma-joined) first, then the newer values."""
    table = getattr(changes, kind)
    if kind != "updated":
        return ssv.abbreviate(table)
    changed = [", ".join(c) for c in table.column(cl.CHANGED).to_pylist()]
    frame = ssv.abbreviate(table.drop_columns([cl.CHANGED]))
    frame.insert(0, "changed", changed)
    return frame


def render_row_changes(
    changes: cl.RowChanges, *, key_prefix: str, first_with_rows: bool = False
) -> None:
    """Counts, the method used, then one kind of rows at a time, paged (``first_with_rows``:
    the kind shown first is the first that has rows, not "updated")."""
    counts = changes.counts
    c1, c2, c3 = st.columns(3)
    c1.metric("Inserted", f"{counts['inserted']:,}")
    c2.metric("Updated", f"{counts['updated']:,}")
    c3.metric("Deleted", f"{counts['deleted']:,}")
    st.caption(
        feedback.as_text(f"v{changes.from_version} → v{changes.to_version}, {changes.method_text}.")
    )
    if changes.added_columns or changes.dropped_columns:
        parts = []
        if changes.added_columns:
            parts.append(f"added {', '.join(changes.added_columns)}")
        if changes.dropped_columns:
            parts.append(f"dropped {', '.join(changes.dropped_columns)}")
        st.caption(
            feedback.as_text(
                f"Columns {'; '.join(parts)}: an update is a changed value in a column both "
                "versions have."
            )
        )
    first = KINDS[0]
    if first_with_rows:
        first = next((k for k in KINDS if counts[k]), KINDS[0])
    kind = st.segmented_control(
        "Rows", KINDS, default=first, key=f"{key_prefix}.kind", format_func=str.capitalize
    )
    kind = kind or KINDS[0]
    frame = changed_frame(changes, kind)
    if frame.empty:
        st.caption(f"No rows {kind}.")
        return
    page = render_pager(
        list(range(len(frame))),
        key_prefix=f"{key_prefix}.{kind}",
        reset_on=(changes.from_version, changes.to_version),
        page_size=PAGE_ROWS,
        noun=f"rows {kind}",
    )
    dataframe(
        frame.iloc[page.start : page.start + len(page.items)],
        hide_index=True,
        key=f"{key_prefix}.{kind}.grid",
    )
    if kind == "updated":
        st.caption("Changed: the columns whose value differs from the older version.")


def render_row_changes_section(
    table_id: Sequence[str], versions: pd.DataFrame, picked: int
) -> None:
    """The row compare form, the compare (with a progress bar) and its last result."""
    tid = tuple(table_id)
    asked = render_row_changes_form(table_id, versions, picked, _columns(table_id))
    if asked:
        a, b, key = asked
        bar = st.progress(0.0, text="Reading the two versions")

        def progress(done: int, total: int) -> None:
            bar.progress(
                min(1.0, done / total) if total else 1.0, text=f"{done:,} of {total:,} rows read"
            )

        changes = feedback.run(
            cl.row_changes,
            get_namespace(),
            list(tid),
            a,
            b,
            key or None,
            progress=progress,
            action="Comparing rows",
        )
        bar.empty()
        state.set_row_changes(tid, changes)
    changes = state.row_changes(tid)
    if changes is not None:
        render_row_changes(changes, key_prefix=state.Versions.ROW_CHANGES_VIEW)


__all__ = [
    "change_log_for",
    "changed_frame",
    "render_change_log_panel",
    "render_change_log_table",
    "render_row_changes",
    "render_row_changes_form",
    "render_row_changes_section",
]
