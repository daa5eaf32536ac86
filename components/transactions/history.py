"""The transactions this session made, described or altered (newest first), and the list of them."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import streamlit as st

from backend.rules import ids
from components import feedback, state

HISTORY_LIMIT = 50


def remember_transaction(
    transaction_id: Sequence[str],
    *,
    source: str,
    status: str | None = None,
    made_here: bool = True,
    operation: str | None = None,
) -> None:
    """Add a transaction id to this session's history (newest first, no duplicates).

    ``made_here``: this session made it (a batch commit, an index build or drop, named by
    ``source``); otherwise the session only described or altered it (``source`` says which)
    and ``operation`` is the transaction's own origin as it says (``CreateIndex``,
    ``BatchCommitTables``). A transaction seen again keeps its origin: one made here and
    then described stays "made here", with its latest status."""
    parts = [str(p) for p in transaction_id]
    before = next((h for h in state.history() if h["id"] == parts), None)
    entry = {
        "id": parts,
        "source": source,
        "status": status,
        "at": time.strftime("%H:%M:%S"),
        "made_here": made_here,
        "operation": operation,
    }
    if before is not None and before.get("made_here") and not made_here:
        entry.update(
            source=before["source"], made_here=True, at=before["at"], seen=source,
            operation=operation or before.get("operation"),
        )  # fmt: skip
    elif before is not None and not operation:
        entry["operation"] = before.get("operation")
    items = [h for h in state.history() if h["id"] != parts]
    items.insert(0, entry)
    state.set_history(items[:HISTORY_LIMIT])


def history_origin(item: dict[str, Any]) -> str:
    """Where a transaction of the history comes from, as the list says it: made in this
    session (by what), or only described / altered here (and what the transaction is)."""
    status = f" - {item['status']}" if item.get("status") else ""
    if item.get("made_here", True):
        seen = f", then {item['seen']}" if item.get("seen") else ""
        return f"{item['at']} · made in this session: {item['source']}{seen}{status}"
    what = f" · {item['operation']}" if item.get("operation") else ""
    return f"{item['at']} · {item['source']} here, made elsewhere{what}{status}"


def _describe_from_history(txn_id: list[str]) -> None:
    """A "Describe" in the history (a callback): the id fills the id field, and this run
    describes it."""
    state.put(state.Txn.ID_INPUT, ids.display_id(txn_id))
    state.put(state.Txn.DESCRIBE_NOW, list(txn_id))


def render_history(delimiter: str) -> None:
    """The transactions this session made, described or altered, newest first, each with
    its origin (:func:`history_origin`); "Describe" shows one (and fills the id)."""
    items = state.history()
    if not items:
        st.caption(
            "Transactions committed, described or made by index builds in this session appear here."
        )
        return
    for i, h in enumerate(items):
        c1, c2 = st.columns([12, 2], vertical_alignment="center")
        text_id = ids.display_id(h["id"])
        c1.markdown(feedback.as_text(text_id) + "  \n" + feedback.as_text(history_origin(h)))
        c2.button(
            f"Describe {text_id}", key=f"{state.Txn.HISTORY}.{i}.describe",
            icon=":material/search:", help="Describe this transaction",
            on_click=_describe_from_history, args=(list(h["id"]),),
        )  # fmt: skip
