"""Pieces of the Search & tune page that query a table: data preview, vector and full-text
search, the query history, query plans, and the query settings the tuning panels share
(``components.tuning``: recall, sweep, Build A/B, requested against applied).

The logic is ``backend.services.search`` (queries, plans); the query rule is
``backend.rules.query_rules``. Each panel keeps its last result per table in the session
(``state.result``) so switching tabs does not lose it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

import pandas as pd
import streamlit as st
from lance_namespace.errors import InvalidInputError

from backend.branch_view import MAIN, on_branch
from backend.rules import query_rules
from backend.services import search, tuning
from backend.services.charts import (
    plan_figure,
)
from backend.services.index_overview import tokenize_preview
from backend.text import human_bytes, plural
from components import feedback, state
from components.cache import cached, table_scope
from components.common import render_whole_number

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
DISTANCES = ("l2", "cosine", "dot", "hamming")
AUTO = "index"  # the Distance select box's default: the metric of the column's index
DEFAULT_GRID = {"nprobes": "1, 2, 4, 8, 16, 32", "refine_factor": "none, 4", "ef": ""}


# --------------------------------------------------------------------------------------------
# Cached reads, tabs, shared links
# --------------------------------------------------------------------------------------------


@cached(lambda table_id, branch=MAIN: table_scope(table_id), ttl=30)
def search_table(ns: Any, table_id: tuple[str, ...], branch: str = MAIN) -> search.SearchTable:
    """What the page knows of the table's ``branch`` (``SearchTable.branch`` says which)."""
    return search.search_table(on_branch(ns, branch), table_id)


@cached(
    lambda table_id, version, columns, filter, offset, limit, branch=MAIN: table_scope(table_id),
    ttl=30,
)
def preview(
    ns: Any,
    table_id: tuple[str, ...],
    version: int | None,
    columns: tuple[str, ...],
    filter: str,
    offset: int,
    limit: int,
    branch: str = MAIN,
) -> search.Preview:
    return search.preview(
        on_branch(ns, branch), table_id, version=version, columns=columns, filter=filter,
        offset=offset, limit=limit,
    )  # fmt: skip


def open_tabs() -> Any:
    """The page's stateful tabs (only the open one is computed); ``?tab=`` opens one."""
    slug = st.query_params.get(state.QP_TAB)
    if not state.has(state.Search.TABS) and slug in TAB_SLUGS:
        state.put(state.Search.TABS, TAB_SLUGS[slug])
    return st.tabs(list(TABS), default=TAB_PREVIEW, key=state.Search.TABS, on_change="rerun")


def apply_shared_setting() -> None:
    """A shared link's setting (``?column=&k=&nprobes=...``) fills the vector search and
    recall forms, once per link."""
    query = {k: str(st.query_params.get(k)) for k in tuning.SHARE_KEYS if k in st.query_params}
    fingerprint = urlencode(sorted(query.items()))
    if not query or state.get(state.Search.SHARED) == fingerprint:
        return
    state.put(state.Search.SHARED, fingerprint)
    try:
        setting = tuning.parse_share_params(query)
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


def share_url(
    table_id: Sequence[str],
    column: str,
    k: int,
    params: Mapping[str, Any],
    text: str | None = None,
    branch: str | None = None,
) -> str:
    """A link to this page's vector search with a setting filled in (``text``: the query
    vector is that text, embedded; ``branch``: on that branch)."""
    query: list[tuple[str, str]] = [(state.QP_NAMESPACE, part) for part in table_id[:-1]]
    query += [(state.QP_TABLE, table_id[-1])]
    if branch and branch != MAIN:
        query.append((state.QP_BRANCH, branch))
    query.append((state.QP_TAB, "vector"))
    query += list(tuning.share_params(column, k, params, text=text).items())
    base = str(getattr(st.context, "url", "") or "").split("?")[0]
    return f"{base}?{urlencode(query)}"


def render_table_summary(info: search.SearchTable) -> None:
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


def render_version_input(info: search.SearchTable) -> int | None:
    """The version every panel reads (empty: the latest), bound to ``?version=``."""
    latest = info.latest_version
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


# --------------------------------------------------------------------------------------------
# Data preview
# --------------------------------------------------------------------------------------------


def render_preview(info: search.SearchTable, version: int | None, *, key_prefix: str) -> None:
    """Rows at a version: a column picker, an SQL filter, paging, the matching row count."""
    names = [c.name for c in info.columns]
    c1, c2, c3 = st.columns([3, 3, 1])
    columns = c1.multiselect("Columns", names, default=names, key=f"{key_prefix}.columns")
    filter_text = c2.text_input(
        "Filter (SQL)", key=f"{key_prefix}.filter", placeholder="e.g. module = 'json'"
    )
    size = c3.selectbox("Rows per page", (25, 50, 100, 250), index=1, key=f"{key_prefix}.size")
    branch = info.branch or MAIN
    page_key = f"{key_prefix}.page.{info.table_id}.{branch}.{version}.{filter_text}"
    page = int(state.get(page_key, 1))
    result = feedback.run(
        preview,
        info.table_id,
        version,
        tuple(columns),
        filter_text.strip(),
        (page - 1) * size,
        size,
        branch,
        action="Reading rows",
    )
    if result is None:
        return
    total = result.total or 0
    pages = max(1, -(-total // size))
    first = result.offset + 1 if len(result.rows) else 0
    st.caption(
        f"{plural(total, 'row')} match"
        + (f" · rows {first}–{result.offset + len(result.rows)}" if total else "")
        + (f" · version {version}" if version else " · latest version")
    )
    st.dataframe(result.rows, hide_index=True, key=f"{key_prefix}.grid")
    if pages > 1:
        c1, c2, c3 = st.columns([1, 2, 1], vertical_alignment="center")
        # callbacks: the page number changes before the rows are read
        c1.button(
            "Previous", key=f"{key_prefix}.prev", disabled=page <= 1,
            on_click=state.put, args=(page_key, page - 1),
        )  # fmt: skip
        c2.caption(f"Page {page} of {pages}")
        c3.button(
            "Next", key=f"{key_prefix}.next", disabled=page >= pages,
            on_click=state.put, args=(page_key, page + 1),
        )  # fmt: skip


# --------------------------------------------------------------------------------------------
# Vector search settings (shared by vector search, recall and sweep)
# --------------------------------------------------------------------------------------------


def _seed(key: str, default: Any) -> None:
    """A form widget's value lives in the session, seeded with ``default`` when absent; the
    widget is drawn without a default of its own, so a value put back through the session
    ("re-apply", a shared link) makes Streamlit log no default-and-session-state warning."""
    if not state.has(key):
        state.put(key, default)


def _column_default(info: search.SearchTable) -> str | None:
    indexed = [c for c in info.vector_columns if c in info.vector_indexes]
    found = indexed or info.vector_columns
    return found[0] if found else None


def render_column_and_k(
    info: search.SearchTable, *, panel: str, problems: list[str], k_default: int = 10
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
    _seed(state.search_key(panel, "k"), str(k_default))
    low, high = query_rules.RANGES["k"]
    k = render_whole_number(
        "k",
        key=state.search_key(panel, "k"),
        bounds=(low, high if panel == "vec" else tuning.MAX_K),
        problems=problems,
        required=True,
        where=c2,
        persist_state=state.KEEP_WHILE_ON_PAGE,
    )
    return str(column), k if k is not None else k_default


def render_distance(info: search.SearchTable, column: str, *, panel: str, where: Any) -> str:
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


def chosen_distance(info: search.SearchTable, column: str, value: str) -> str | None:
    """The ``distance_type`` to send for the select box's ``value``: ``None`` for the
    column's own metric (the backend resolves it the same way), else the choice."""
    if value == AUTO or value == info.metric_for(column).metric:
        return None
    return value


def render_index_in_use(info: search.SearchTable, column: str, *, panel: str) -> None:
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
        help=search.CANNOT_CHOOSE_INDEX,
    )
    listed = ", ".join(f"{c['name']} ({c['type']})" for c in choices)
    feedback.show(
        "info",
        f"{column} has {len(choices)} vector indexes: {listed}. Searches use {used['name']} "
        f"(the index the query plan names): {search.CANNOT_CHOOSE_INDEX}.",
    )


def render_query_settings(
    info: search.SearchTable, column: str, *, panel: str, problems: list[str]
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


# --------------------------------------------------------------------------------------------
# Vector search
# --------------------------------------------------------------------------------------------

SOURCE_ROW = "A row, by id"
SOURCE_NUMBERS = "Pasted numbers"
SOURCE_TEXT = "Text, embedded"


def _query_vector(
    ns: Any, info: search.SearchTable, column: str, source: str, value: Any, version: int | None
) -> list[float]:
    if source == SOURCE_ROW:
        vector, _row = search.row_vector(
            ns, info.table_id, column, filter=f"{info.id_column} = {int(value)}", version=version
        )
        return vector
    if source == SOURCE_TEXT:
        return search.embed_text(info.properties, str(value or ""))
    dim = info.column(column).dim if info.column(column) is not None else None  # type: ignore[union-attr]
    return search.parse_vector(str(value or ""), dim)


def render_vector_search(ns: Any, info: search.SearchTable, version: int | None) -> None:
    """The vector search form and its result: rows with distances, p50/p95 latency."""
    if not info.vector_columns:
        st.info("This table has no vector column.", icon=":material/info:")
        return
    sources = [SOURCE_ROW, SOURCE_NUMBERS] + ([SOURCE_TEXT] if info.embedding else [])
    if state.get(state.Search.VEC_SOURCE) not in sources:
        state.put(state.Search.VEC_SOURCE, sources[-1])
    source = st.segmented_control(
        "Query vector", sources, default=None, key=state.Search.VEC_SOURCE,
        persist_state=state.KEEP_WHILE_ON_PAGE,
        help=None if info.embedding else "Text queries need the table to name its embedding "
        "(property embedding.function).",
    ) or sources[-1]  # fmt: skip
    problems: list[str] = []
    with st.form(state.Search.VEC_FORM):
        column, k = render_column_and_k(info, panel="vec", problems=problems)
        if source == SOURCE_ROW:
            _seed(state.Search.VEC_ROW, "0")
            value: Any = render_whole_number(
                f"Row id ({info.id_column})",
                name="Row id",
                key=state.Search.VEC_ROW,
                bounds=query_rules.RANGES["row"],
                problems=problems,
                required=True,
                persist_state=state.KEEP_WHILE_ON_PAGE,
            )
        elif source == SOURCE_NUMBERS:
            value = st.text_area(
                "Numbers",
                key=state.Search.VEC_NUMBERS,
                persist_state=state.KEEP_WHILE_ON_PAGE,
                height=68,
                placeholder="0.1, -0.2, 0.05, …",
            )
        else:
            value = st.text_input(
                "Text",
                key=state.Search.VEC_TEXT,
                persist_state=state.KEEP_WHILE_ON_PAGE,
                placeholder="e.g. parse command line arguments",
                help=f"Embedded with the table's own {info.embedding}",
            )
        params = render_query_settings(info, column, panel="vec", problems=problems)
        c1, c2, c3 = st.columns([3, 1, 1], vertical_alignment="top")
        where = c1.text_input(
            "Filter (SQL)", key=state.Search.VEC_FILTER, persist_state=state.KEEP_WHILE_ON_PAGE
        )
        prefilter = c2.checkbox(
            "Prefilter", key=state.Search.VEC_PREFILTER, persist_state=state.KEEP_WHILE_ON_PAGE
        )
        _seed(state.Search.VEC_REPEATS, "5")
        repeats = render_whole_number(
            "Repeats",
            key=state.Search.VEC_REPEATS,
            bounds=query_rules.RANGES["repeats"],
            problems=problems,
            required=True,
            where=c3,
            persist_state=state.KEEP_WHILE_ON_PAGE,
        )
        submitted = st.form_submit_button("Search", type="primary", icon=":material/search:")
    if problems:  # refused as typed (said under the field): nothing runs, the last result stays
        last = state.result(info.table_id, "vector")
        if last:
            st.caption("The result of the last search run (the form above has not run):")
            render_vector_result(info.table_id, last, branch=info.branch)
        render_history(info.table_id, "vector")
        return
    repeats = int(repeats or 1)
    # the settings this run's result must have been made with (else it is not shown)
    settings = (
        version, source, str(value), column, k, tuple(sorted(clean(params).items())),
        where.strip(), bool(prefilter), repeats,
    )  # fmt: skip
    if submitted:
        extra = {"filter": where.strip() or None, "prefilter": True if prefilter else None}

        def go_search() -> search.SearchResult:
            vector = _query_vector(ns, info, column, source, value, version)
            return search.vector_search(
                ns, info.table_id, vector, column=column, k=k, repeats=repeats,
                version=version, **clean(params), **extra,
            )  # fmt: skip

        record_run(info.table_id, "vector", VECTOR_KEYS, vector_summary(
            source, value, column, k, clean(params), where.strip(), bool(prefilter), version
        ))  # fmt: skip
        found = feedback.run(go_search, action="Vector search")
        if found is None:  # the error stands alone: no older rows under it
            state.clear_result(info.table_id, "vector")
        else:
            text = str(value) if source == SOURCE_TEXT else None  # what the link re-embeds
            state.set_result(
                info.table_id, "vector", (found, column, k, clean(params), text), settings
            )
    last = state.result(info.table_id, "vector", settings)
    if last:
        render_vector_result(info.table_id, last, branch=info.branch)
    render_history(info.table_id, "vector")


def render_vector_result(
    table_id: Sequence[str], last: tuple[Any, ...], *, branch: str | None = None
) -> None:
    """A kept vector search result: rows, latencies, Copy as Python and the link (a query
    by text reproduces the text, embedded; on ``branch``: the snippets and link name it)."""
    found, column, k, params, text = last
    render_search_result(found, score=search.DISTANCE, key_prefix=state.Search.VEC_RESULT)
    render_setting_snippets(table_id, column, k, params, text=text, branch=branch)


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


def render_search_result(found: search.SearchResult, *, score: str, key_prefix: str) -> None:
    c1, c2, c3 = st.columns(3)
    c1.metric("Rows", len(found.rows))
    c2.metric("p50 latency", f"{found.p50_ms:.1f} ms")
    c3.metric("p95 latency", f"{found.p95_ms:.1f} ms")
    st.caption(search.describe_latencies(found.latencies_ms))
    render_metric_note(found.metric, bypass=bool(found.request.bypass_vector_index))
    rows = found.rows
    if score in rows.columns:
        rows = rows[[score, *[c for c in rows.columns if c != score]]]
    st.dataframe(rows, hide_index=True, key=f"{key_prefix}.grid")


def render_setting_snippets(
    table_id: Sequence[str],
    column: str,
    k: int,
    params: Mapping[str, Any],
    *,
    text: str | None = None,
    branch: str | None = None,
) -> None:
    """Copy as Python (the backend call and plain pylance) and a shareable link; ``text``:
    the query vector is that text embedded with the table's embedding (the snippets embed
    it the same way, the link carries it); ``branch``: the setting's branch (the snippets
    and the link name it)."""
    from components.session import snippet_connection
    from components.snippets import connect_args

    args = ", ".join(connect_args(snippet_connection()))
    console, pylance = tuning.python_snippets(
        f"ns = backend.connect({args})", table_id, column, k, params, text=text, branch=branch
    )
    with st.expander("Copy as Python · share", icon=":material/code:"):
        st.caption("With the backend (any connection):")
        st.code(console, language="python")
        st.caption("With plain pylance, next to the data:")
        st.code(pylance, language="python")
        st.caption("A link to this setting:")
        link = share_url(table_id, column, k, params, text, branch=branch)
        st.code(link, language=None, wrap_lines=True)


# --------------------------------------------------------------------------------------------
# Query history (per table, this session): each search run, and "re-apply"
# --------------------------------------------------------------------------------------------

_VECTOR_FIELDS = (
    "column", "k", "distance_type", "nprobes", "minimum_nprobes", "maximum_nprobes",
    "refine_factor", "ef", "fast_search", "bypass_vector_index",
)  # fmt: skip
VECTOR_KEYS = (
    state.Search.VEC_SOURCE, state.Search.VEC_ROW, state.Search.VEC_NUMBERS, state.Search.VEC_TEXT,
    *(state.search_key("vec", name) for name in _VECTOR_FIELDS),
    state.Search.VEC_FILTER, state.Search.VEC_PREFILTER, state.Search.VEC_REPEATS,
)  # fmt: skip
FTS_KEYS = (
    state.Search.FTS_TEXT,
    state.Search.FTS_MODE,
    state.Search.FTS_COLUMNS,
    state.Search.FTS_K,
)
HISTORY_LABEL = {"vector": "Vector searches run", "fts": "Full-text searches run"}


def _at_version(version: int | None) -> str:
    return f" · v{version}" if version is not None else ""


def vector_summary(
    source: str, value: Any, column: str, k: int, params: Mapping[str, Any], where: str,
    prefilter: bool, version: int | None,
) -> str:  # fmt: skip
    """One line naming a vector search's settings."""
    shown = str(value)
    shown = shown if len(shown) <= 40 else shown[:39] + "…"
    what = f"row {shown}" if source == SOURCE_ROW else repr(shown)
    parts = [f"{what} on {column}", f"k={k}"]
    parts += [f"{name}={v}" for name, v in params.items() if name != "distance_type"]
    if params.get("distance_type"):
        parts.append(f"distance {params['distance_type']}")
    if where:
        parts.append(("prefilter " if prefilter else "filter ") + where)
    return " · ".join(parts) + _at_version(version)


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
    with st.expander(f"{HISTORY_LABEL[kind]} ({len(runs)})", icon=":material/history:"):
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


# --------------------------------------------------------------------------------------------
# Full-text search
# --------------------------------------------------------------------------------------------


# A matched word: coloured bold text. Not a ``-background`` directive: Streamlit pads those
# (2px 4px), which shows "Command-line" as "Command - line"; text colour adds no space.
MATCH_MARK = ":orange[**{}**]"


def highlighted(text: str, query: str, options: dict[str, Any], *, width: int = 400) -> str:
    """Markdown of ``text`` (cut around the first match) with the matched words marked; the
    text itself is kept exactly (every character, no space added around a mark)."""
    pieces = search.highlight(text, query, options)
    first = next((i for i, (_, hit) in enumerate(pieces) if hit), 0)
    start = max(0, first - 20)
    out, size = [], 0
    for piece, hit in pieces[start:]:
        if size > width:
            out.append("…")
            break
        shown = feedback.as_text(piece)
        out.append(MATCH_MARK.format(shown) if hit else shown)
        size += len(piece)
    return ("… " if start else "") + "".join(out)


def render_fts_search(ns: Any, info: search.SearchTable, version: int | None) -> None:
    """Match or phrase queries with BM25 scores and the matched terms highlighted; the query
    as the index's own tokenizer sees it."""
    if not info.text_columns:
        st.info("This table has no text column.", icon=":material/info:")
        return
    indexed = [c for c in info.text_columns if c in info.fts_indexes]
    if not indexed:
        feedback.show(
            "info",
            "No full-text index on this table yet: create one on the Indexes page (FTS); "
            "without it a query has nothing to search.",
        )
        return
    problems: list[str] = []
    with st.form(state.Search.FTS_FORM):
        c1, c2, c3, c4 = st.columns([4, 1, 2, 1], vertical_alignment="top")
        text = c1.text_input(
            "Search for",
            key=state.Search.FTS_TEXT,
            persist_state=state.KEEP_WHILE_ON_PAGE,
            placeholder="e.g. parse command line",
        )
        mode = c2.radio(
            "Query",
            ("Match", "Phrase"),
            key=state.Search.FTS_MODE,
            persist_state=state.KEEP_WHILE_ON_PAGE,
        )
        if not set(state.get(state.Search.FTS_COLUMNS) or []) <= set(indexed):
            state.drop(state.Search.FTS_COLUMNS)  # an index gone since (a re-applied search)
        _seed(state.Search.FTS_COLUMNS, indexed[:1])
        columns = c3.multiselect(
            "Columns",
            indexed,
            default=None,
            key=state.Search.FTS_COLUMNS,
            persist_state=state.KEEP_WHILE_ON_PAGE,
        )
        _seed(state.Search.FTS_K, "10")
        typed_k = render_whole_number(
            "k",
            key=state.Search.FTS_K,
            bounds=query_rules.RANGES["k"],
            problems=problems,
            required=True,
            where=c4,
            persist_state=state.KEEP_WHILE_ON_PAGE,
        )
        submitted = st.form_submit_button("Search", type="primary", icon=":material/search:")
    if problems or typed_k is None:  # refused as typed (said under the field): nothing
        kept = state.result(info.table_id, "fts")
        render_history(info.table_id, "fts")
        if kept:
            st.caption("The matches of the last search run (the form above has not run):")
            render_fts_matches(info, kept)
        return
    k = typed_k
    settings = (version, text, mode, tuple(columns), int(k))
    if submitted:
        shown = f"{mode.lower()} {text!r} in {', '.join(columns) or '(no column)'} · k={int(k)}"
        record_run(info.table_id, "fts", FTS_KEYS, shown + _at_version(version))
        found = feedback.run(
            search.fts_search, ns, info.table_id, text, columns=columns, k=int(k),
            phrase=mode == "Phrase", version=version, action="Full-text search",
        )  # fmt: skip
        if found is None:  # the error stands alone: no older matches under it
            state.clear_result(info.table_id, "fts")
        else:
            state.set_result(info.table_id, "fts", (found, text, list(columns)), settings)
    last = state.result(info.table_id, "fts", settings)
    render_history(info.table_id, "fts")
    if last:
        render_fts_matches(info, last)


def render_fts_matches(info: search.SearchTable, last: tuple[Any, ...]) -> None:
    """A kept full-text search result: the query's tokens, the matches highlighted."""
    found, text, columns = last
    options = info.fts_indexes[columns[0]]["options"]
    render_query_tokens(text, options, key_prefix=state.Search.FTS_TOKENS)
    c1, c2 = st.columns(2)
    c1.metric("Matches shown", len(found.rows))
    c2.metric("Latency", f"{found.p50_ms:.1f} ms")
    with st.container(border=True, gap="small"):
        for i, row in found.rows.head(50).iterrows():
            score = row.get(search.SCORE)
            head = f"`{i + 1}.` :gray-badge[BM25 {score:.2f}]" if score is not None else ""
            for column in columns:
                st.markdown(f"{head} {highlighted(str(row.get(column) or ''), text, options)}")
                head = ""
    with st.expander("All columns"):
        st.dataframe(found.rows, hide_index=True, key=state.Search.FTS_GRID)


def render_query_tokens(text: str, options: dict[str, Any], *, key_prefix: str) -> None:
    """The query's tokens under the index's tokenizer, beside a live tokenizer preview."""
    c1, c2 = st.columns(2)
    with c1:
        st.markdown("**The query, as the index tokenizes it**")
        try:
            tokens = tokenize_preview(text, options)
        except ValueError as err:
            feedback.show("warning", f"The tokenizer refuses this text: {err}")
            tokens = []
        st.markdown(" ".join(f"`{t.text.replace('`', '')}`" for t in tokens) or "*(no tokens)*")
        shown = {k: v for k, v in options.items() if v is not None}
        st.caption(feedback.as_text(", ".join(f"{k}={v}" for k, v in shown.items())))
    with c2:
        st.markdown("**Tokenizer preview**")
        sample = st.text_input(
            "Sample text",
            value="Running runners ran quickly",
            key=f"{key_prefix}.sample",
            persist_state=state.KEEP_WHILE_ON_PAGE,
        )
        try:
            preview_tokens = tokenize_preview(sample, options)
        except ValueError as err:
            feedback.show("warning", f"The tokenizer refuses this text: {err}")
            preview_tokens = []
        st.markdown(
            " ".join(f"`{t.text.replace('`', '')}`" for t in preview_tokens) or "*(no tokens)*"
        )


# --------------------------------------------------------------------------------------------
# Query plan
# --------------------------------------------------------------------------------------------

PLAN_VECTOR = "The last vector search"
PLAN_FTS = "The last full-text search"
PLAN_SCAN = "A filtered scan"


def render_plan(ns: Any, info: search.SearchTable, version: int | None) -> None:
    """Explain or analyze a query; the plan drawn readably, the raw text one click away."""
    choices = [PLAN_SCAN]
    if state.result(info.table_id, "fts"):
        choices.insert(0, PLAN_FTS)
    if state.result(info.table_id, "vector"):
        choices.insert(0, PLAN_VECTOR)
    c1, c2 = st.columns([2, 3])
    which = c1.radio("Plan of", choices, key=state.Search.PLAN_WHICH)
    where = c2.text_input(
        "Filter of the scan (SQL)", key=state.Search.PLAN_FILTER, disabled=which != PLAN_SCAN
    )
    c1, c2, _ = st.columns([1, 1, 4])
    explain = c1.button("Explain", key=state.Search.PLAN_EXPLAIN, icon=":material/account_tree:")
    analyze = c2.button("Analyze", key=state.Search.PLAN_ANALYZE, icon=":material/speed:")
    if explain or analyze:
        metric = None
        if which == PLAN_VECTOR:
            found = state.result(info.table_id, "vector")[0]
            request, metric = found.request, found.metric
        elif which == PLAN_FTS:
            request = state.result(info.table_id, "fts")[0].request
        else:
            request = feedback.run(
                search.query_request, info.table_id, k=100, version=version,
                filter=where.strip() or None, action="Building the query",
            )  # fmt: skip
        if request is not None:
            run = search.analyze if analyze else search.explain
            text = feedback.run(run, ns, request, action="Analyze" if analyze else "Explain")
            if text is not None:
                bypass = bool(request.bypass_vector_index)
                state.set_result(
                    info.table_id, "plan", (text, bool(analyze), which, metric, bypass)
                )
    last = state.result(info.table_id, "plan")
    if last:
        render_plan_text(*last)


def render_plan_text(
    text: str,
    analyzed: bool,
    which: str,
    metric: query_rules.QueryMetric | None = None,
    bypass: bool = False,
) -> None:
    nodes = search.parse_plan(text)
    summary = search.plan_summary(nodes)
    c1, c2, c3, c4 = st.columns(4)
    if summary["index_used"]:
        c1.metric("Index used", "yes")
        c1.caption(feedback.as_text(", ".join(summary["index_nodes"])))
    else:
        c1.metric("Index used", "no")
        c1.caption("brute force" if summary["brute_force"] else "a scan")
    render_metric_note(metric, bypass=bypass)
    if analyzed:
        rows, read = summary["rows_scanned"], summary["bytes_read"]
        c2.metric("Rows scanned", "—" if rows is None else f"{rows:,}")
        c3.metric("Bytes read", "—" if read is None else human_bytes(read))
        total = summary["elapsed_ms"]
        c4.metric("Total time", "—" if total is None else f"{total:.2f} ms")
    else:
        c2.caption("Explain shows the plan only: Analyze runs it and measures every step.")
    if which == PLAN_FTS and not any(
        n.name.startswith(("MatchQuery", "PhraseQuery", "FlatMatch", "BooleanQuery")) for n in nodes
    ):
        feedback.show(
            "warning",
            "This plan has no full-text step: the server planned the query without its "
            "full-text part (pylance's DirectoryNamespace does this), so it does not show "
            "how the search runs.",
        )
    if analyzed:
        st.plotly_chart(plan_figure(nodes), key=state.Search.PLAN_CHART)
    st.dataframe(
        plan_table(search.plan_frame(nodes)),
        hide_index=True,
        key=state.Search.PLAN_GRID,
        column_config={
            "step": st.column_config.TextColumn("Step", width=200),
            "ms": st.column_config.NumberColumn("Time (ms)", width=90),
            "rows": st.column_config.NumberColumn("Rows out", width=80),
            "bytes_read": st.column_config.NumberColumn("Bytes read", width=90),
            "detail": st.column_config.TextColumn("Detail"),
        },
    )
    with st.expander("Raw plan"):
        st.code(text, language=None)


PLAN_FORMATS = {"ms": "{:.3f}", "rows": "{:.0f}", "bytes_read": "{:.0f}"}


def plan_table(frame: pd.DataFrame) -> Any:
    """The plan's rows for the grid: a step without a figure (no time, rows or bytes
    reported) shows an empty cell, not "None"; the numbers stay numbers (sortable)."""
    numbers = {c: pd.to_numeric(frame[c], errors="coerce") for c in PLAN_FORMATS}
    frame = frame.assign(**numbers, detail=frame["detail"].fillna(""))
    return frame.style.format(PLAN_FORMATS, na_rep="")


__all__ = [
    "AUTO",
    "DEFAULT_GRID",
    "DISTANCES",
    "FTS_KEYS",
    "HISTORY_LABEL",
    "MATCH_MARK",
    "PLAN_FORMATS",
    "PLAN_FTS",
    "PLAN_SCAN",
    "PLAN_VECTOR",
    "SOURCE_NUMBERS",
    "SOURCE_ROW",
    "SOURCE_TEXT",
    "TABS",
    "TAB_AB",
    "TAB_FTS",
    "TAB_PARAMS",
    "TAB_PLAN",
    "TAB_PREVIEW",
    "TAB_RECALL",
    "TAB_SLUGS",
    "TAB_SWEEP",
    "TAB_VECTOR",
    "VECTOR_KEYS",
    "apply_shared_setting",
    "chosen_distance",
    "clean",
    "highlighted",
    "open_tabs",
    "plan_table",
    "preview",
    "record_run",
    "render_column_and_k",
    "render_distance",
    "render_fts_matches",
    "render_fts_search",
    "render_history",
    "render_index_in_use",
    "render_metric_note",
    "render_plan",
    "render_plan_text",
    "render_preview",
    "render_query_settings",
    "render_query_tokens",
    "render_search_result",
    "render_setting_snippets",
    "render_table_summary",
    "render_vector_search",
    "render_vector_result",
    "render_version_input",
    "search_table",
    "share_url",
    "vector_summary",
]
