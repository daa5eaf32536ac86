"""Pieces of the Indexes page: cached reads, the index table, the create panel, build progress,
drop, details.

Cached reads are keyed by :func:`components.connection.connection_key` and the table id, and
forgotten after every write (:func:`components.common.clear_read_caches`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st
from lance_namespace import CreateTableIndexRequest

from backend import indexes as ix
from backend.capabilities import BackendCapabilities
from components import state
from components.common import (
    clear_read_caches,
    error_text,
    render_json,
    render_python_snippet,
    render_typed_confirmation,
)
from components.connection import connection_key, get_namespace
from components.transactions import remember_transaction

# The Indexes page's tabs (labels: the e2e tests and deep links open them by name).
TAB_CREATE = "Create an index"
TAB_SELECTED = "Selected index"
TAB_STATS = "Statistics"

# --------------------------------------------------------------------------------------------
# Cached reads
# --------------------------------------------------------------------------------------------


@st.cache_data(ttl=30, show_spinner=False, max_entries=256)
def _overview(conn: str, table_id: tuple[str, ...], _ns: Any) -> pd.DataFrame:
    return ix.index_overview(_ns, list(table_id))


@st.cache_data(ttl=60, show_spinner=False, max_entries=256)
def _columns(conn: str, table_id: tuple[str, ...], _ns: Any) -> list[ix.ColumnInfo]:
    return ix.table_columns(_ns, list(table_id))


@st.cache_data(ttl=30, show_spinner=False, max_entries=256)
def _num_rows(conn: str, table_id: tuple[str, ...], _ns: Any) -> int | None:
    return ix.table_num_rows(_ns, list(table_id))


@st.cache_data(ttl=60, show_spinner=False, max_entries=64)
def _history(conn: str, table_id: tuple[str, ...], max_versions: int, _ns: Any) -> pd.DataFrame:
    return ix.coverage_history(_ns, list(table_id), max_versions=max_versions)


def index_overview(table_id: Sequence[str]) -> pd.DataFrame:
    """:func:`backend.indexes.index_overview`, cached per connection and table."""
    return _overview(connection_key(), tuple(table_id), get_namespace())


def table_columns(table_id: Sequence[str]) -> list[ix.ColumnInfo]:
    return _columns(connection_key(), tuple(table_id), get_namespace())


def table_num_rows(table_id: Sequence[str]) -> int | None:
    return _num_rows(connection_key(), tuple(table_id), get_namespace())


def coverage_history(table_id: Sequence[str], max_versions: int) -> pd.DataFrame:
    return _history(connection_key(), tuple(table_id), int(max_versions), get_namespace())


# --------------------------------------------------------------------------------------------
# The index table, the selected index, the lag hint
# --------------------------------------------------------------------------------------------


def _human_bytes(n: Any) -> str:
    if n is None or pd.isna(n):
        return ""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


def render_index_table(overview: pd.DataFrame, *, key_prefix: str) -> None:
    """The table's indexes: type, columns, status, rows, coverage, size, segments, distance."""
    if overview.empty:
        st.info("This table has no indexes yet. Create one below.", icon=":material/info:")
        return
    shown = overview.drop(columns=["details", "uuid"]).copy()
    shown["size"] = [_human_bytes(v) for v in overview["size_bytes"]]
    shown = shown.drop(columns=["size_bytes"])
    # Scalar and full-text indexes have no distance: show a dash, not "None".
    shown["distance_type"] = shown["distance_type"].fillna("—")
    st.dataframe(
        shown,
        hide_index=True,
        key=f"{key_prefix}.table",
        column_order=[
            "name",
            "type",
            "columns",
            "status",
            "indexed_rows",
            "unindexed_rows",
            "coverage",
            "size",
            "segments",
            "distance_type",
            "created_at",
        ],
        column_config={
            "name": st.column_config.TextColumn("Index"),
            "type": st.column_config.TextColumn("Type"),
            "columns": st.column_config.TextColumn("Columns"),
            "status": st.column_config.TextColumn("Status"),
            "indexed_rows": st.column_config.NumberColumn("Indexed rows", format="%d"),
            "unindexed_rows": st.column_config.NumberColumn("Unindexed rows", format="%d"),
            "coverage": st.column_config.ProgressColumn(
                "Coverage", min_value=0.0, max_value=1.0, format="percent"
            ),
            "size": st.column_config.TextColumn("Size"),
            "segments": st.column_config.NumberColumn("Segments", format="%d"),
            "distance_type": st.column_config.TextColumn("Distance"),
            "created_at": st.column_config.DatetimeColumn("Created"),
        },
    )


def render_lag_warning(overview: pd.DataFrame) -> None:
    """``st.warning`` naming every index that lags behind the data."""
    lag = ix.lagging_indexes(overview)
    if lag.empty:
        return
    parts = [f"`{r.name}` ({int(r.unindexed_rows):,} unindexed rows)" for r in lag.itertuples()]
    st.warning(
        "Index lags behind the data: "
        + ", ".join(parts)
        + ". Queries scan the unindexed rows without the index. Optimize the indexes "
        "(pylance: `dataset.optimize.optimize_indices()`) to add the new rows, or drop and "
        "rebuild them.",
        icon=":material/warning:",
    )


def _sync_index_query_param(key: str) -> None:
    """on_change of the index picker: the picked index becomes the ``?index=`` deep link."""
    picked = st.session_state.get(key)
    if picked:
        st.query_params[state.QP_INDEX] = picked


def render_index_picker(names: Sequence[str], *, key_prefix: str) -> str | None:
    """Selectbox of the table's indexes, deep-linked through ``?index=``; returns the name.

    The widget key is stable (``<key_prefix>.name``): the query parameter the widget writes is
    not part of it, so a second pick sticks. ``?index=`` preselects on the first run (or when
    the remembered pick is no longer an index of this table); the pick updates ``?index=``.
    """
    key = f"{key_prefix}.name"
    if not names:
        st.session_state.pop(key, None)
        if state.QP_INDEX in st.query_params:
            del st.query_params[state.QP_INDEX]
        return None
    options = list(names)
    wanted = st.query_params.get(state.QP_INDEX)
    if st.session_state.get(key) not in options:
        st.session_state[key] = wanted if wanted in options else options[0]
    chosen = st.selectbox(
        "Index",
        options,
        key=key,
        on_change=_sync_index_query_param,
        args=(key,),
    )
    if chosen and chosen != wanted:
        st.query_params[state.QP_INDEX] = chosen
    return chosen


def render_index_details(row: pd.Series, *, key_prefix: str) -> None:
    """One index: its figures and the backend's opaque JSON details."""
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Type", str(row["type"] or "?"))
    indexed = row["indexed_rows"]
    c2.metric("Indexed rows", "?" if pd.isna(indexed) else f"{int(indexed):,}")
    unindexed = row["unindexed_rows"]
    c3.metric("Unindexed rows", "?" if pd.isna(unindexed) else f"{int(unindexed):,}")
    c4.metric("Size", _human_bytes(row["size_bytes"]) or "?")
    st.caption(
        f"UUID `{row['uuid']}` · columns `{row['columns']}` · status {row['status']}"
        + (f" · distance {row['distance_type']}" if row["distance_type"] else "")
    )
    details = ix.index_details_dict(row["details"])
    if details:
        render_json(details, key_prefix=f"{key_prefix}.details", label="Index details")


# --------------------------------------------------------------------------------------------
# Create: one panel whose fields follow the chosen kind
# --------------------------------------------------------------------------------------------

DEFAULT_SAMPLE_TEXT = "The Running Dogs jumped over the Café fences in 2024"


def _column_label(columns: dict[str, ix.ColumnInfo]) -> Any:
    def fmt(name: str) -> str:
        c = columns[name]
        return f"{name} · {c.arrow_type_str}"

    return fmt


def _type_label(index_type: str) -> str:
    return f"{index_type} - {ix.INDEX_TYPE_HELP.get(index_type, '')}"


def _backend_note(caps: BackendCapabilities, param: str) -> str:
    honoured = caps.honoured_index_params
    if honoured is None:
        return "sent as the spec defines; the server decides"
    return "honoured" if param in honoured else "not applied by this backend"


def render_vector_fields(
    index_type: str,
    column: ix.ColumnInfo,
    num_rows: int | None,
    caps: BackendCapabilities,
    *,
    key_prefix: str,
) -> tuple[str, dict[str, Any]]:
    """Distance type and the build parameters that apply to ``index_type``.

    Empty fields mean "the effective default" shown next to them. Returns
    ``(distance_type, params)``.
    """
    distances = ix.distance_types_for(column)
    distance = st.selectbox(
        "Distance type",
        distances,
        key=f"{key_prefix}.distance.{column.kind}",
        help="hamming is offered only for binary (uint8) vectors, and is their only choice.",
    )
    defaults = ix.vector_param_defaults(index_type, column.dim, num_rows)
    names = ix.vector_params_for(index_type)
    params: dict[str, Any] = {}
    cols = st.columns(3)
    for i, name in enumerate(names):
        default = defaults.get(name)
        with cols[i % 3]:
            params[name] = st.number_input(
                name,
                min_value=1,
                value=None,
                step=1,
                placeholder=f"default: {default}" if default is not None else "server default",
                key=f"{key_prefix}.p.{index_type}.{name}",
                help=f"{ix.VECTOR_PARAM_HELP[name]}. Backend: {_backend_note(caps, name)}.",
            )
    table = pd.DataFrame(
        [
            {
                "parameter": n,
                "your value": "" if params[n] is None else str(params[n]),
                "effective default": "" if defaults.get(n) is None else str(defaults[n]),
                "backend": _backend_note(caps, n),
            }
            for n in names
        ]
    )
    with st.expander("Effective values and what the backend honours", expanded=False):
        st.dataframe(table, hide_index=True, key=f"{key_prefix}.defaults.{index_type}")
        st.caption(
            f"Defaults for {index_type} on {num_rows if num_rows is not None else '?'} rows, "
            f"dimension {column.dim}: pylance 14 picks num_partitions = rows // "
            f"{ix.DEFAULT_TARGET_PARTITION_SIZE[index_type]:,} (1 to 4096)"
            + (
                "; num_sub_vectors has no pylance default, so the console sends dim/16 "
                "(or dim/8, else 1) when left empty"
                if "num_sub_vectors" in names
                else ""
            )
            + "."
        )
        if caps.honoured_index_params is None:
            st.caption(
                "This backend sends the parameters as the spec defines; whether the server "
                "applies them is its decision."
            )
    return distance, params


def render_fts_fields(*, key_prefix: str) -> dict[str, Any]:
    """Full-text options with pylance's defaults, followed by a live tokenizer preview."""
    tokenizers = list(ix.available_tokenizers())
    c1, c2, c3 = st.columns(3)
    with c1:
        base = st.selectbox(
            "Base tokenizer",
            tokenizers,
            key=f"{key_prefix}.fts.base",
            help="jieba / lindera appear when their language models are installed.",
        )
    defaults = ix.fts_param_defaults(base)
    with c2:
        language = st.selectbox(
            "Language",
            list(ix.FTS_LANGUAGES),
            index=list(ix.FTS_LANGUAGES).index(defaults["language"]),
            key=f"{key_prefix}.fts.language",
            help=ix.FTS_PARAM_HELP["language"],
        )
    with c3:
        max_len = st.number_input(
            "Max token length",
            min_value=1,
            value=defaults["max_token_length"],
            step=1,
            key=f"{key_prefix}.fts.max_token_length",
            help=ix.FTS_PARAM_HELP["max_token_length"],
        )
    flags = st.columns(5)
    values: dict[str, Any] = {}
    for col, name, label in zip(
        flags,
        ("lower_case", "stem", "remove_stop_words", "ascii_folding", "with_position"),
        ("Lower case", "Stemming", "Stop words", "ASCII folding", "Positions"),
        strict=True,
    ):
        with col:
            values[name] = st.checkbox(
                label,
                value=defaults[name],
                key=f"{key_prefix}.fts.{base}.{name}",
                help=ix.FTS_PARAM_HELP[name],
            )
    params = {
        "base_tokenizer": base,
        "language": language,
        "max_token_length": int(max_len) if max_len is not None else None,
        **values,
    }
    render_tokenizer_preview(params, key_prefix=key_prefix)
    return params


def render_tokenizer_preview(params: dict[str, Any], *, key_prefix: str) -> list[ix.Token]:
    """Tokens of a sample text under ``params`` (pylance's ``lance.tokenize``), live."""
    text = st.text_input(
        "Tokenizer preview: sample text",
        value=DEFAULT_SAMPLE_TEXT,
        key=state.INDEXES_PREVIEW_TEXT,
    )
    try:
        tokens = ix.tokenize_preview(text, params)
    except ValueError as err:
        st.warning(f"The tokenizer rejects these options: {err}", icon=":material/warning:")
        return []
    if tokens:
        chips = " ".join(f"`{t.text}`" for t in tokens)
        st.markdown(f"**Tokens:** {chips}")
        st.caption(
            f"{len(tokens)} tokens; positions {', '.join(str(t.position) for t in tokens)}"
            " (gaps: removed stop words)"
        )
    else:
        st.markdown("**Tokens:** *(none)*")
    return tokens


def _render_create_snippet(
    table_id: Sequence[str],
    column: ix.ColumnInfo,
    index_type: str,
    distance: str | None,
    params: dict[str, Any],
    num_rows: int | None,
    *,
    key_prefix: str,
) -> None:
    """ "Copy as Python" for the request the current values make (name left to the default)."""
    try:
        request = ix.build_index_request(
            table_id,
            column.name,
            index_type,
            distance_type=distance,
            params=params,
            dim=column.dim,
            num_rows=num_rows,
        )
    except (ValueError, TypeError):
        return
    operation = (
        "create_table_scalar_index"
        if ix.index_category(index_type) == "scalar"
        else "create_table_index"
    )
    render_python_snippet(operation, request, key_prefix=f"{key_prefix}.snippet")


def render_create_panel(
    table_id: Sequence[str],
    columns: list[ix.ColumnInfo],
    num_rows: int | None,
    existing_names: Sequence[str],
    caps: BackendCapabilities,
    *,
    read_only: bool,
    key_prefix: str,
) -> CreateTableIndexRequest | None:
    """Column, then only the index types that fit it, then the fields of that kind.

    Returns a validated CreateTableIndexRequest when "Create index" is pressed and the input is
    good; otherwise ``None`` (problems are shown, nothing is called).
    """
    if not columns:
        st.info("The table reports no columns.")
        return None
    by_name = {c.name: c for c in columns}
    indexable = [c.name for c in columns if c.fitting_types]
    if not indexable:
        st.info("No column of this table fits an index type.")
        return None
    column_name = st.selectbox(
        "Column",
        indexable,
        format_func=_column_label(by_name),
        key=f"{key_prefix}.column",
    )
    column = by_name[column_name]
    fitting = column.fitting_types
    index_type = st.selectbox(
        "Index type",
        fitting,
        format_func=_type_label,
        key=f"{key_prefix}.type.{column.name}",
        help=f"Only the types that fit {column.arrow_type_str} are offered.",
    )
    kind = ix.index_category(index_type)
    distance: str | None = None
    params: dict[str, Any] = {}
    if kind == "vector":
        distance, params = render_vector_fields(
            index_type, column, num_rows, caps, key_prefix=key_prefix
        )
    elif kind == "fts":
        params = render_fts_fields(key_prefix=key_prefix)
    else:
        st.caption(f"{index_type}: {ix.INDEX_TYPE_HELP[index_type]}. No build parameters.")

    _render_create_snippet(
        table_id, column, index_type, distance, params, num_rows, key_prefix=key_prefix
    )
    form_version = st.session_state.get(state.INDEXES_FORM_VERSION, 0)
    with st.form(f"{key_prefix}.form{form_version}"):
        name = st.text_input(
            "Index name",
            placeholder=ix.default_index_name(column.name, index_type),
            key=f"{key_prefix}.form{form_version}.name",
            help="Empty: the default name shown.",
        )
        submitted = st.form_submit_button(
            f"Create {index_type} index",
            type="primary",
            icon=":material/add:",
            disabled=read_only,
        )
    if not submitted:
        return None
    try:
        request = ix.build_index_request(
            table_id,
            column.name,
            index_type,
            name=name or None,
            distance_type=distance,
            params=params,
            dim=column.dim,
            num_rows=num_rows,
        )
    except (ValueError, TypeError) as err:
        st.error(f"Invalid input: {err}", icon=":material/error:")
        return None
    names = set(existing_names) | {j.index_name for j in ix.JOBS.running(table_id)}
    problems = ix.validate_index_request(request, column, num_rows=num_rows, existing_names=names)
    if problems:
        st.error(
            "Not created - fix these first:\n\n" + "\n".join(f"- {p}" for p in problems),
            icon=":material/error:",
        )
        return None
    return request


# --------------------------------------------------------------------------------------------
# Builds in progress
# --------------------------------------------------------------------------------------------


def start_build(request: CreateTableIndexRequest) -> str:
    """Start the build in the background and remember the job for this session."""
    job_id = ix.start_build(get_namespace(), request)
    st.session_state.setdefault(state.INDEXES_JOBS, []).append(job_id)
    return job_id


def _session_jobs(table_id: Sequence[str]) -> list[ix.BuildJob]:
    ids = st.session_state.get(state.INDEXES_JOBS, [])
    jobs = [ix.JOBS.get(j) for j in reversed(ids)]
    return [j for j in jobs if j is not None and j.table_id == tuple(table_id)]


def _job_title(job: ix.BuildJob) -> str:
    icon = {"running": ":material/sync:", "succeeded": ":material/check_circle:"}.get(
        job.status, ":material/error:"
    )
    return (
        f"{icon} **{job.index_name}** ({job.index_type} on `{job.column}`) - {job.status}, "
        f"{job.elapsed:.1f}s"
    )


def _handle_finished(job: ix.BuildJob) -> bool:
    """First time a finished job is seen: forget cached reads, log its transaction."""
    seen = st.session_state.setdefault(state.INDEXES_JOBS_SEEN, [])
    if job.job_id in seen:
        return False
    seen.append(job.job_id)
    clear_read_caches()
    txn = getattr(job.response, "transaction_id", None)
    if job.status == "succeeded":
        st.session_state[state.INDEXES_LAST_RESULT] = (
            "success",
            f"Index `{job.index_name}` built in {job.elapsed:.1f}s.",
        )
        if txn:
            remember_transaction(
                [*job.table_id, txn], source=f"create index {job.index_name}", status="Succeeded"
            )
    return True


def render_job(job: ix.BuildJob, *, key_prefix: str) -> None:
    st.markdown(_job_title(job))
    if job.status == "failed" and job.error is not None:
        st.error(error_text(job.error, action=f"Building {job.index_name}"))
        return
    if job.status == "running":
        if job.mode == "events":
            label = job.stage or "starting"
            if job.fraction is not None:
                st.progress(job.fraction, text=f"{label}: {job.fraction:.0%}")
            else:
                st.progress(0.0, text=f"{label}...")
        else:
            seen = (job.observed or {}).get("status", "not polled yet")
            st.progress(0.0, text=f"waiting for the server (index: {seen})")
    if job.events:
        with st.expander(f"Progress events ({len(job.events)})"):
            frame = pd.DataFrame(job.events[-50:])
            if "at" in frame:
                frame["at"] = [time.strftime("%H:%M:%S", time.localtime(t)) for t in frame["at"]]
            st.dataframe(frame, hide_index=True, key=f"{key_prefix}.{job.job_id}.events")


def render_build_jobs(table_id: Sequence[str], *, key_prefix: str) -> None:
    """Builds of this table started in this session; refreshes every second while one runs."""
    jobs = _session_jobs(table_id)
    if not jobs:
        return
    running = any(not j.done for j in jobs)

    def panel() -> None:
        current = _session_jobs(table_id)
        changed = False
        with st.container(border=True):
            st.caption("Index builds")
            for job in current[:5]:
                render_job(job, key_prefix=key_prefix)
                if job.done and _handle_finished(job):
                    changed = True
        if changed:
            st.rerun(scope="app")

    st.fragment(panel, run_every=1.0 if running else None)()


# --------------------------------------------------------------------------------------------
# Drop
# --------------------------------------------------------------------------------------------


def render_drop_form(name: str | None, *, read_only: bool, key_prefix: str) -> str | None:
    """Typed confirmation for dropping ``name``; returns the name when confirmed and submitted."""
    if not name:
        st.caption("No index to drop.")
        return None
    form_version = st.session_state.get(state.INDEXES_FORM_VERSION, 0)
    with st.form(f"{key_prefix}.form{form_version}"):
        st.markdown(f"Drop index **{name}**. The table's data is not touched.")
        confirmed = render_typed_confirmation(
            name, key_prefix=f"{key_prefix}.form{form_version}.{name}"
        )
        submitted = st.form_submit_button(
            "Drop index", icon=":material/delete:", disabled=read_only
        )
    if not submitted:
        return None
    if not confirmed:
        st.error(f"Type `{name}` exactly to confirm.", icon=":material/error:")
        return None
    return name


def after_write(kind: str, message: str) -> None:
    """Forget cached reads, reset forms, keep a one-shot result message, rerun."""
    clear_read_caches()
    st.session_state[state.INDEXES_FORM_VERSION] = (
        st.session_state.get(state.INDEXES_FORM_VERSION, 0) + 1
    )
    st.session_state[state.INDEXES_LAST_RESULT] = (kind, message)
    st.rerun()


def render_last_result() -> None:
    last = st.session_state.pop(state.INDEXES_LAST_RESULT, None)
    if last:
        kind, message = last
        (st.success if kind == "success" else st.info)(message)


def capabilities_caption(caps: BackendCapabilities) -> str:
    if caps.kind == "local":
        return "Local backend: build parameters are honoured and builds report progress events."
    if caps.kind == "rest":
        return (
            "REST backend: parameters are sent as the spec defines (the server decides); "
            "progress is followed by polling ListTableIndices."
        )
    return "Backend capabilities unknown: parameters are sent as given."


__all__ = [
    "TAB_CREATE",
    "TAB_SELECTED",
    "TAB_STATS",
    "after_write",
    "capabilities_caption",
    "coverage_history",
    "index_overview",
    "render_build_jobs",
    "render_create_panel",
    "render_drop_form",
    "render_fts_fields",
    "render_index_details",
    "render_index_picker",
    "render_index_table",
    "render_lag_warning",
    "render_last_result",
    "render_tokenizer_preview",
    "render_vector_fields",
    "start_build",
    "table_columns",
    "table_num_rows",
]
