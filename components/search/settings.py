"""The vector query settings the search and tuning panels share: column and k, distance, the
index in use, probes, refine factor, ef, fast search and bypass, and the metric note."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from backend.rules import query_rules
from backend.services.search.table import SearchTable
from backend.services.search.vector import CANNOT_CHOOSE_INDEX
from backend.services.tuning.measure import MAX_K
from components import feedback, state
from components.common import render_whole_number

DISTANCES = ("l2", "cosine", "dot", "hamming")
AUTO = "index"  # the Distance select box's default: the metric of the column's index


def seed_default(key: str, default: Any) -> None:
    """A form widget's value lives in the session, seeded with ``default`` when absent; the
    widget is drawn without a default of its own, so a value put back through the session
    ("re-apply", a shared link) makes Streamlit log no default-and-session-state warning."""
    if not state.has(key):
        state.put(key, default)


def render_kept_number(
    label: str,
    *,
    key: str,
    default: str,
    bounds: tuple[int, int],
    problems: list[str],
    name: str | None = None,
    where: Any = None,
) -> int | None:
    """A required whole-number field of a search form (``render_whole_number``), its text kept
    while on the page and seeded with ``default`` (:func:`seed_default`): the number, or
    ``None`` with its problem added to ``problems`` (the form must run nothing)."""
    seed_default(key, default)
    return render_whole_number(
        label,
        name=name,
        key=key,
        bounds=bounds,
        problems=problems,
        required=True,
        where=where,
        persist_state=state.KEEP_WHILE_ON_PAGE,
    )


def render_search_button() -> bool:
    """The Search button of a search panel's form: whether it was pressed."""
    return st.form_submit_button("Search", type="primary", icon=":material/search:")


def _column_default(info: SearchTable) -> str | None:
    indexed = [c for c in info.vector_columns if c in info.vector_indexes]
    found = indexed or info.vector_columns
    return found[0] if found else None


def render_column_and_k(
    info: SearchTable, *, panel: str, problems: list[str], k_default: int = 10
) -> tuple[str, int]:
    """The vector column and k of a panel's form. k is read as typed: a value out of range
    (``query_rules.RANGES``; a measurement asks for k + 1, so its k stops one below) is
    added to ``problems`` and the form must run nothing (``k_default`` is then returned)."""
    columns = info.vector_columns
    key = state.search_key(panel, "column")
    if state.get(key) not in columns:
        state.put(key, _column_default(info))
    c1, c2 = st.columns([3, 1])
    column = c1.selectbox("Vector column", columns, key=key, persist_state=state.KEEP_WHILE_ON_PAGE)
    low, high = query_rules.RANGES["k"]
    k = render_kept_number(
        "k",
        key=state.search_key(panel, "k"),
        default=str(k_default),
        bounds=(low, high if panel == "vec" else MAX_K),
        problems=problems,
        where=c2,
    )
    return str(column), k if k is not None else k_default


def render_distance(info: SearchTable, column: str, *, panel: str, where: Any) -> str:
    """The Distance select box: :data:`AUTO` (the default) is the metric of the column's
    index (``query_rules.query_metric``), shown with its name; another choice is sent as
    ``distance_type``."""
    key = state.search_key(panel, "distance_type")
    if state.get(key) not in (AUTO, *DISTANCES):
        state.put(key, AUTO)
    metric = info.metric_for(column)
    auto = f"the index's ({metric.metric})" if metric.index_metric else f"default ({metric.metric})"
    indexed = info.distance_for(column)
    return str(
        where.selectbox(
            "Distance",
            (AUTO, *DISTANCES),
            key=key,
            persist_state=state.KEEP_WHILE_ON_PAGE,
            format_func=lambda v: auto if v == AUTO else v,
            help=(
                f"The index was built with {indexed}: another distance makes lance search "
                "without the index (brute force), and exact searches use the chosen one."
                if indexed
                else "The column has no vector index: every search is exact."
            ),
        )
    )


def chosen_distance(info: SearchTable, column: str, value: str) -> str | None:
    """The ``distance_type`` to send for the select box's ``value``: ``None`` for the
    column's own metric (the backend resolves it the same way), else the choice."""
    if value == AUTO or value == info.metric_for(column).metric:
        return None
    return value


def render_index_in_use(info: SearchTable, column: str, *, panel: str) -> None:
    """The vector index a search on ``column`` uses; with several on the column, the choice
    (offered as lance allows it: not at all, and why)."""
    used = info.vector_indexes.get(column)
    others = info.other_vector_indexes(column)
    if used is None or not others:
        return
    choices = info.vector_index_choices[column]
    names = [c["name"] for c in choices]
    st.selectbox(
        "Vector index",
        names,
        index=names.index(used["name"]),
        format_func=lambda n: next(
            f"{n} · {c['type']} · {c['distance'] or '?'}" for c in choices if c["name"] == n
        ),
        key=state.search_key(panel, f"index.{column}"),
        disabled=True,
        help=CANNOT_CHOOSE_INDEX,
    )
    listed = ", ".join(f"{c['name']} ({c['type']})" for c in choices)
    feedback.show(
        "info",
        f"{column} has {len(choices)} vector indexes: {listed}. Searches use {used['name']} "
        f"(the index the query plan names): {CANNOT_CHOOSE_INDEX}.",
    )


def render_query_settings(
    info: SearchTable, column: str, *, panel: str, problems: list[str]
) -> dict[str, Any]:
    """Distance, probes, refine factor, ef, fast search and bypass: QueryTable fields (empty
    ones left out: the backend's default; no distance: the index's metric). The parameters
    are those of the index in use (:func:`render_index_in_use`). A number out of its range
    (``query_rules.RANGES``) is added to ``problems``: the form must run nothing. Probes
    beyond the index's IVF partitions are warned of (the search still runs)."""
    render_index_in_use(info, column, panel=panel)
    used = info.vector_indexes.get(column) or {}
    used_type = str(used.get("type") or "")
    hnsw = "HNSW" in used_type
    ef_help = "HNSW search breadth" + (
        f" (no effect: the index in use, {used['name']}, is {used_type})"
        if used and not hnsw
        else ""
    )
    c1, c2, c3, c4 = st.columns(4)
    distance = render_distance(info, column, panel=panel, where=c1)
    params: dict[str, Any] = {"distance_type": chosen_distance(info, column, distance)}
    c5, c6, c7, c8 = st.columns(4)
    number_fields = (
        (c2, "nprobes", "IVF partitions to search (both bounds)"),
        (c3, "minimum_nprobes", "Search at least this many partitions"),
        (c4, "maximum_nprobes", "Search at most this many partitions"),
        (c5, "refine_factor", "Re-rank k × refine_factor candidates with exact distances"),
        (c6, "ef", ef_help),
    )
    for col, name, help_text in number_fields:
        low, high = query_rules.RANGES[name]
        params[name] = render_whole_number(
            name,
            key=state.search_key(panel, name),
            bounds=(low, high),
            problems=problems,
            where=col,
            placeholder="default",
            persist_state=state.KEEP_WHILE_ON_PAGE,
            help=f"{help_text}; {low:,} to {high:,}, empty: the backend's default",
        )
    params["fast_search"] = c7.checkbox(
        "fast_search",
        key=state.search_key(panel, "fast_search"),
        persist_state=state.KEEP_WHILE_ON_PAGE,
        help="Skip unindexed rows",
    )
    params["bypass_vector_index"] = c8.checkbox(
        "Bypass index (exact)",
        key=state.search_key(panel, "bypass_vector_index"),
        persist_state=state.KEEP_WHILE_ON_PAGE,
    )
    beyond = query_rules.probes_beyond_partitions(params, used.get("partitions"))
    if beyond:
        feedback.show("warning", f"{beyond}.")
    return {k: v for k, v in params.items() if v is not None and v is not False}


def clean(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: int(v) if isinstance(v, float) else v for k, v in params.items()}


def render_metric_note(metric: query_rules.QueryMetric | None, *, bypass: bool = False) -> None:
    """The metric a vector search (or measurement) used, and a warning when a metric other
    than the index's made lance search without the index."""
    if metric is None:
        return
    reason = metric.brute_force_reason(bypass)
    text = metric.describe()
    if reason and not metric.mismatch:
        text += f" · brute force: {reason}"
    st.caption(feedback.as_text(text))
    if metric.mismatch:
        feedback.show("warning", f"Brute force, not the index: {reason}.")
