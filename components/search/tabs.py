"""The Search & tune page's frame: its tabs (``?tab=`` opens one), a shared link's setting
put in the forms, the table's summary and the version every panel reads."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import streamlit as st
from lance_namespace.errors import InvalidInputError

from backend.branch_view import MAIN, on_branch
from backend.services.search import table as search_tables
from backend.services.search.table import SearchTable
from backend.text import plural
from components import feedback, state
from components.cache import cached, table_scope
from components.search.share_url import SHARE_KEYS, parse_share_params
from components.search.vector import SOURCE_TEXT
from components.tables.selection import drop_linked_value

TAB_PREVIEW = "Data preview"
TAB_VECTOR = "Vector search"
TAB_FTS = "Full-text search"
TAB_PLAN = "Query plan"
TAB_RECALL = "Recall"
TAB_SWEEP = "Sweep"
TAB_AB = "Build A/B"
TAB_PARAMS = "Index parameters"
TABS = (TAB_PREVIEW, TAB_VECTOR, TAB_FTS, TAB_PLAN, TAB_RECALL, TAB_SWEEP, TAB_AB, TAB_PARAMS)
# ``?tab=`` values of shared links.
TAB_SLUGS = {
    "preview": TAB_PREVIEW,
    "vector": TAB_VECTOR,
    "fts": TAB_FTS,
    "plan": TAB_PLAN,
    "recall": TAB_RECALL,
    "sweep": TAB_SWEEP,
    "ab": TAB_AB,
    "params": TAB_PARAMS,
}


@cached(lambda table_id, branch=MAIN: table_scope(table_id), ttl=30)
def search_table(ns: Any, table_id: tuple[str, ...], branch: str = MAIN) -> SearchTable:
    """What the page knows of the table's ``branch`` (``SearchTable.branch`` says which)."""
    return search_tables.search_table(on_branch(ns, branch), table_id)


def open_tabs() -> Any:
    """The page's stateful tabs (only the open one is computed); ``?tab=`` opens one."""
    slug = st.query_params.get(state.QP_TAB)
    if not state.has(state.Search.TABS) and slug in TAB_SLUGS:
        state.put(state.Search.TABS, TAB_SLUGS[slug])
    return st.tabs(list(TABS), default=TAB_PREVIEW, key=state.Search.TABS, on_change="rerun")


def apply_shared_setting() -> None:
    """A shared link's setting (``?column=&k=&nprobes=...``) fills the vector search and
    recall forms, once per link."""
    query = {k: str(st.query_params.get(k)) for k in SHARE_KEYS if k in st.query_params}
    fingerprint = urlencode(sorted(query.items()))
    if not query or state.get(state.Search.SHARED) == fingerprint:
        return
    state.put(state.Search.SHARED, fingerprint)
    try:
        setting = parse_share_params(query)
    except InvalidInputError as err:
        feedback.show("warning", f"The link's search setting was not applied: {err}")
        return
    text = setting.pop("text", None)
    if text is not None:  # the query vector: this text, embedded (vector search only)
        state.put(state.Search.VEC_SOURCE, SOURCE_TEXT)
        state.put(state.Search.VEC_TEXT, text)
    for panel in ("vec", "recall"):
        for name, value in setting.items():
            # the number fields are text boxes (``render_whole_number``): their text goes in
            shown = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
            state.put(state.search_key(panel, name), shown)


def render_table_summary(info: SearchTable) -> None:
    parts = [plural(info.num_rows, "row") if info.num_rows is not None else "rows unknown"]
    if info.latest_version is not None:
        parts.append(f"version {info.latest_version}")
    if info.vector_indexes:
        parts.append(
            "vector index on "
            + ", ".join(
                f"{c} ({v['type']})"
                if not info.other_vector_indexes(c)
                else f"{c} ({v['name']}, {v['type']}: the one searches use of "
                f"{len(info.vector_index_choices[c])})"
                for c, v in info.vector_indexes.items()
            )
        )
    if info.fts_indexes:
        parts.append("full-text index on " + ", ".join(info.fts_indexes))
    if info.embedding:
        parts.append(f"embedding {info.embedding}")
    st.caption(feedback.as_text(" · ".join(parts)))


def _check_linked_version(latest: int | None) -> None:
    """``?version=`` read by the one rule of a linked version (``state.as_version``) before
    the number box parses it: the box takes whatever Python's ``float`` takes ("١" or "1.9"
    as version 1, "inf" as an error). A number that is no version, or beyond the latest,
    leaves the link with a warning (the latest is read); " 1 " or "v1" reads as "1"."""
    raw = st.query_params.get(state.QP_VERSION)
    if raw is None:
        return
    number = state.as_version(raw)
    if number is not None and (latest is None or number <= latest):
        if raw != str(number):
            st.query_params[state.QP_VERSION] = str(number)
        return
    drop_linked_value(state.QP_VERSION)
    reads = f"the latest ({latest}) is read" if latest else "the latest is read"
    if number is None:
        feedback.show("warning", f"{raw} is not a version number (1, 2, 3, …); {reads}.")
    else:
        feedback.show("warning", f"Version {number} does not exist; {reads}.")


def render_version_input(info: SearchTable) -> int | None:
    """The version every panel reads (empty: the latest), bound to ``?version=``."""
    latest = info.latest_version
    _check_linked_version(latest)
    value = st.columns([1, 3])[0].number_input(
        "Version (empty: latest)",
        min_value=1,
        max_value=latest or None,
        value=None,
        step=1,
        key=state.QP_VERSION,
        bind="query-params",
        placeholder=f"latest ({latest})" if latest else "latest",
    )
    return int(value) if value else None
