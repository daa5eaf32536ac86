"""The Audit page's pieces: who may see it, filters over the audit log, the entries as a table
(a long write's ``started`` entry with no end says so), CSV export.

The entries are already redacted when written (``backend.audit``); nothing here unmasks them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from backend import access, audit
from backend.gate import Actor
from backend.text import plural
from components.common import dataframe

ADMINS_ONLY = "The audit log is shown to admins only."


def denial(actor: Actor) -> str | None:
    """Why ``actor`` may not see the audit log (``None``: they may). Admins only, and never
    anonymous visitors: on a console exposed without sign-in every visitor acts as the OS
    user (an admin), so nobody is shown it there."""
    from components import session

    address = session.exposed_without_sign_in()
    if address:
        return (
            f"The audit log is not shown here: the console listens on {address} without "
            "sign-in, so its visitors are anonymous. Configure sign-in to see it in the "
            "console, or read the log on the server."
        )
    if access.rank(actor.role or "") < access.rank(access.ADMIN):
        return ADMINS_ONLY
    return None


def entries_frame(
    entries: Sequence[audit.AuditEntry], *, open_ops: set[str] | None = None
) -> pd.DataFrame:
    """The entries as rows, newest first (the time as a timestamp); a ``started`` entry of
    ``open_ops`` (default: those of ``entries`` with no end) reads "started, no end
    recorded"."""
    rows = audit.to_rows(entries, open_ops=open_ops)
    frame = pd.DataFrame(rows, columns=list(audit.CSV_COLUMNS))
    if not frame.empty:
        frame["ts"] = pd.to_datetime(frame["ts"], utc=True)
        text = ["role", "target", "op_id", "error_class", "error_message", "transaction_id"]
        frame[text] = frame[text].fillna("")  # blank, not "None", where a write had none
        frame = frame.iloc[::-1].reset_index(drop=True)
    return frame


def render_filters(entries: Sequence[audit.AuditEntry], *, key_prefix: str) -> dict[str, Any]:
    """User, operation, table, outcome and a date range; returns ``filter_entries`` kwargs."""
    users = sorted({e.user for e in entries if e.user})
    ops = sorted({e.operation for e in entries})
    c1, c2, c3 = st.columns(3)
    user = c1.selectbox("User", ["(any)", *users], key=f"{key_prefix}.user")
    operation = c2.multiselect("Operation", ops, key=f"{key_prefix}.operation")
    table = c3.text_input(
        "Table or namespace",
        key=f"{key_prefix}.table",
        placeholder="any part of the id",
        help="Matches the id a write addresses and every table a batch touches.",
    )
    c4, c5 = st.columns([1, 2])
    outcome = c4.selectbox("Outcome", ["(any)", *audit.OUTCOMES], key=f"{key_prefix}.out")
    today = dt.datetime.now(dt.UTC).date()
    first = min((e.ts[:10] for e in entries), default=today.isoformat())
    span = c5.date_input(
        "Between",
        value=(dt.date.fromisoformat(first), today),
        key=f"{key_prefix}.span",
        help="Days in UTC, both included.",
    )
    since = until = None
    if isinstance(span, (tuple, list)) and span:
        since = dt.datetime.combine(span[0], dt.time.min, tzinfo=dt.UTC)
        end = span[1] if len(span) > 1 else span[0]
        until = dt.datetime.combine(end, dt.time.max, tzinfo=dt.UTC)
    return {
        "user": None if user == "(any)" else user,
        "operation": operation or None,
        "table": table or None,
        "outcome": None if outcome == "(any)" else outcome,
        "since": since,
        "until": until,
    }


# The grid's order: who did what to which table, how it ended and how long it took first;
# the rest (where it came from, the request) in the CSV's order (``audit.CSV_COLUMNS``,
# which the CSV keeps), so a column added to the log shows in the grid too.
GRID_FIRST = (
    "ts",
    "user",
    "role",
    "operation",
    "ids",
    "outcome",
    "error_class",
    "error_message",
    "duration_ms",
)
GRID_ORDER = GRID_FIRST + tuple(c for c in audit.CSV_COLUMNS if c not in GRID_FIRST)


# Headers in words, as every grid's; a column added to the log without one here is headed
# by its field name in words (the one rule: ``components.common.header_in_words``).
GRID_LABELS = {
    "ts": "Time (UTC)",
    "ids": "Table or namespace",
    "error_class": "Error",
    "error_message": "Message",
    "transaction_id": "Transaction",
    "duration_ms": "ms",
    "target": "Target (masked)",
    "op_id": "Operation id",
    "tables": "Tables (of a batch)",
    "request": "Request (redacted)",
}


def grid_columns() -> dict[str, Any]:
    """The grid's header and format of the columns that have their own (the others are
    headed by their field names in words: ``dataframe(..., words=True)``)."""
    columns: dict[str, Any] = dict(GRID_LABELS)
    columns |= {
        "ts": st.column_config.DatetimeColumn(GRID_LABELS["ts"], format="YYYY-MM-DD HH:mm:ss"),
        "duration_ms": st.column_config.NumberColumn(GRID_LABELS["duration_ms"], format="%.1f"),
        "target": st.column_config.TextColumn(GRID_LABELS["target"], width="medium"),
        "op_id": st.column_config.TextColumn(
            GRID_LABELS["op_id"], help="A long write's started entry and its end share it."
        ),
        "tables": st.column_config.TextColumn(GRID_LABELS["tables"], width="medium"),
        "request": st.column_config.TextColumn(GRID_LABELS["request"], width="large"),
    }
    return columns


def render_entries(
    entries: Sequence[audit.AuditEntry],
    total: int,
    *,
    key_prefix: str,
    open_ops: set[str] | None = None,
) -> None:
    """The matching entries, newest first, and their CSV; ``open_ops``: the ``started``
    entries of the whole log that no final entry follows (``audit.unfinished``)."""
    st.caption(f"{plural(len(entries), 'entry', 'entries')} of {total}")
    frame = entries_frame(entries, open_ops=open_ops)
    dataframe(
        frame,
        hide_index=True,
        width="stretch",
        column_order=GRID_ORDER,
        column_config=grid_columns(),
        words=True,
        key=f"{key_prefix}.table",
    )
    st.download_button(
        "Export CSV",
        data=audit.to_csv(entries, open_ops=open_ops),
        file_name="lance-console-audit.csv",
        mime="text/csv",
        icon=":material/download:",
        key=f"{key_prefix}.csv",
        disabled=not entries,
    )
