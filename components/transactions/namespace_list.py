"""The namespace's batch commits, newest first, paged."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from backend.services import transactions as txsv
from components import state
from components.cache import CATALOG, cached
from components.common import dataframe


@cached(lambda: CATALOG, ttl=15)
def namespace_transactions(ns: Any) -> list[txsv.BatchTransaction]:
    """The namespace's batch commits, newest first (read again after a commit of this
    connection, and at least every 15 seconds for other writers' commits)."""
    return txsv.list_batch_transactions(ns)


def render_namespace_transactions(items: Sequence[txsv.BatchTransaction]) -> None:
    """The namespace's batch commits (``txsv.list_batch_transactions``), newest first, paged:
    id, status, start, duration, operations, tables, and why a batch did not commit."""
    from components.pager import render_pager

    if not items:
        st.caption("No batch commit in this namespace yet.")
        return
    page = render_pager(
        list(items), key_prefix=state.Txn.NS_LIST, reset_on=(len(items),), noun="batch commits"
    )
    frame = txsv.batch_transactions_frame(page.items)
    dataframe(
        frame, hide_index=True, key=f"{state.Txn.NS_LIST}.grid",
        words=True,
        column_config={
            "started": st.column_config.TextColumn("Started (UTC)"),
            "duration_ms": st.column_config.NumberColumn("Duration (ms)", format="localized"),
            "reason": st.column_config.TextColumn("Why not committed"),
        },
    )  # fmt: skip
