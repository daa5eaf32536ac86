"""The "Selected index" tab: one index's figures and details, and the drop form."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st
from lance_namespace.errors import LanceNamespaceError

from backend.rules import index_rules as rules
from backend.services import build_jobs
from backend.services import index_overview as ixs
from backend.text import human_bytes
from components import feedback, state
from components.common import (
    dataframe,
    render_json,
    render_role_lock,
    render_typed_confirmation,
)
from components.session import role_lock
from components.writes import Write

_log = logging.getLogger(__name__)


def render_index_picker(names: Sequence[str]) -> str | None:
    """The table's indexes, bound to ``?index=`` (a reload or a link keeps the pick)."""
    if not names:
        return None
    if state.get(state.QP_INDEX) not in names:
        state.put(state.QP_INDEX, names[0])  # a dropped index, or one of another table
    return st.selectbox("Index", list(names), key=state.QP_INDEX, bind="query-params")


def render_index_details(row: pd.Series, *, key_prefix: str) -> None:
    """One index: its figures, and its details (FTS options as built; secrets masked)."""
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Type", str(row["type"] or "?"))
    indexed, unindexed = row["indexed_rows"], row["unindexed_rows"]
    c2.metric("Indexed rows", "?" if pd.isna(indexed) else f"{int(indexed):,}")
    c3.metric("Unindexed rows", "?" if pd.isna(unindexed) else f"{int(unindexed):,}")
    c4.metric("Size", human_bytes(row["size_bytes"]) or "?")
    facts = [f"UUID {row['uuid']}", f"columns {row['columns']}", f"status {row['status']}"]
    distance = row["distance_type"]
    if isinstance(distance, str) and distance:
        facts.append(f"distance {distance}")
    st.caption(feedback.as_text(" · ".join(facts)))
    details = ixs.index_details_dict(row["details"])
    fts = rules.fts_options(details) if row["type"] == rules.FTS else {}
    if fts:
        st.caption("Full-text options as built")
        dataframe(
            pd.DataFrame({"option": list(fts), "value": [str(v) for v in fts.values()]}),
            hide_index=True,
            key=f"{key_prefix}.fts",
            words=True,
        )
    if details:
        render_json(details, key_prefix=f"{key_prefix}.details", label="Index details")


def render_drop_form(name: str | None, *, read_only: bool, key_prefix: str) -> str | None:
    """Typed confirmation for dropping ``name``; the name when confirmed and submitted."""
    if not name:
        st.caption("No index to drop.")
        return None
    fv = state.form_version("indexes")
    locked = role_lock("drop_table_index", read_only)
    read_only = read_only or locked is not None
    with st.form(f"{key_prefix}.form{fv}"):
        st.markdown(f"Drop index **{feedback.as_text(name)}**. The table's data is not touched.")
        confirmed = render_typed_confirmation(name, key_prefix=f"{key_prefix}.form{fv}.{name}")
        submitted = st.form_submit_button(
            "Drop index", icon=":material/delete:", disabled=read_only
        )
        render_role_lock(locked)
    if not submitted:
        return None
    if not confirmed:
        feedback.show("error", f"Type {name} exactly to confirm.")
        return None
    return name


def render_selected_tab(overview: pd.DataFrame, *, read_only: bool) -> str | None:
    """One index's details and the drop form; the name to drop when confirmed."""
    names = list(overview["name"])
    selected = render_index_picker(names)
    if selected:
        render_index_details(
            overview[overview["name"] == selected].iloc[0], key_prefix=state.Indexes.SELECTED
        )
        st.divider()
    return render_drop_form(selected, read_only=read_only, key_prefix=state.Indexes.DROP)


def _drop_index(ns: Any, table_id: Sequence[str], name: str) -> Any:
    """DropTableIndex of ``name``, then the jobs that built it say so
    (``build_jobs.mark_dropped``: a failure to note it is logged, the drop stands)."""
    response = ns.drop_table_index(ixs.drop_index_request(table_id, name))
    try:
        build_jobs.mark_dropped(ns, table_id, name)
    except LanceNamespaceError as err:
        _log.warning("the drop of index %s was not noted in its jobs: %s", name, err)
    return response


def drop_write(ns: Any, table_id: Sequence[str], name: str, where: str = "") -> Write:
    """Drop the index ``name`` (``where``: " from branch b", said with the result); its
    result is DropTableIndex's response."""
    return Write(
        _drop_index,
        (ns, list(table_id), name),
        f"Dropping {name}",
        f"Index {name} dropped{where}.",
        [list(table_id)],
    )
