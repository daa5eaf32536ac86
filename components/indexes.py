"""Pieces of the Indexes page: cached reads, the index table, the create panel (vector, FTS and
scalar fields), build progress, one index's details, the drop form.

The rules (types, fit, parameters, defaults) are ``backend.rules.index_rules``; the panel returns a
validated request and the page starts the build.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import pandas as pd
import streamlit as st
from lance_namespace import CreateTableIndexRequest

from backend.branch_view import MAIN, branch_name, on_branch
from backend.capabilities import BackendCapabilities
from backend.rules import index_rules as rules
from backend.rules.columns import ColumnInfo
from backend.services import build_jobs
from backend.services import index_overview as ixs
from backend.services import versions as vsv
from backend.text import human_bytes, plural
from components import feedback, state
from components.cache import cached, invalidate_tables, table_scope
from components.common import dataframe, render_json, render_typed_confirmation, render_whole_number
from components.connection import get_namespace, render_role_lock, role_lock
from components.health import ACTION_LABELS, follow_latest, latest_jobs
from components.jobs import ray_address, render_executor_choice
from components.snippets import render_python_snippet
from components.writes import JobRequest, table_jobs

TAB_CREATE = "Create an index"
TAB_SELECTED = "Selected index"
TAB_STATS = "Statistics"

# --------------------------------------------------------------------------------------------
# Cached reads
# --------------------------------------------------------------------------------------------


def index_overview(table_id: tuple[str, ...], branch: str = MAIN) -> pd.DataFrame:
    """The index table at the latest version of the table's ``branch``, read fresh on every
    run (one DescribeTable): a commit from anywhere (the console, lance itself, another
    process) is seen at once, and the overview of a version already read comes from the
    cache. The version read is ``df.attrs["version"]``: :func:`render_statistics` charts the
    history up to that same version, so the table and the charts show the same indexes."""
    version = vsv.latest_version(on_branch(get_namespace(), branch), list(table_id))
    return _overview_at(table_id, version, branch)


@cached(lambda table_id, version, branch: table_scope(table_id), ttl=300)
def _overview_at(
    ns: Any, table_id: tuple[str, ...], version: int | None, branch: str
) -> pd.DataFrame:
    return ixs.index_overview(on_branch(ns, branch), list(table_id), version=version)


@cached(lambda table_id, branch=MAIN: table_scope(table_id))
def table_columns(ns: Any, table_id: tuple[str, ...], branch: str = MAIN) -> list[ColumnInfo]:
    return ixs.table_columns(on_branch(ns, branch), list(table_id))


@cached(lambda table_id, branch=MAIN: table_scope(table_id), ttl=30)
def table_num_rows(ns: Any, table_id: tuple[str, ...], branch: str = MAIN) -> int | None:
    return ixs.table_num_rows(on_branch(ns, branch), list(table_id))


@cached(lambda table_id, max_versions, up_to, branch=MAIN: table_scope(table_id), max_entries=64)
def coverage_history(
    ns: Any, table_id: tuple[str, ...], max_versions: int, up_to: int | None, branch: str = MAIN
) -> pd.DataFrame:
    return ixs.coverage_history(
        on_branch(ns, branch), list(table_id), max_versions=max_versions, up_to=up_to
    )


# --------------------------------------------------------------------------------------------
# The index table, the selected index, the lag hint
# --------------------------------------------------------------------------------------------


def render_index_table(overview: pd.DataFrame, *, key_prefix: str) -> None:
    """The table's indexes: type, columns, status, rows, coverage, size, segments, distance."""
    if overview.empty:
        st.info("This table has no indexes yet. Create one below.", icon=":material/info:")
        return
    shown = overview.drop(columns=["details", "uuid"]).copy()
    shown["size"] = [human_bytes(v) for v in overview["size_bytes"]]
    # scalar and FTS indexes have no distance: "—", as every value not known or not set
    dataframe(
        shown.drop(columns=["size_bytes"]),
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
        ],  # fmt: skip
        column_config={  # widths: every column fits a 1440 px window
            "name": st.column_config.TextColumn("Index", width=130),
            "type": st.column_config.TextColumn("Type", width=85),
            "columns": st.column_config.TextColumn("Columns", width=90),
            "status": st.column_config.TextColumn("Status", width=85),
            "indexed_rows": st.column_config.NumberColumn("Indexed", format="%d", width=75),
            "unindexed_rows": st.column_config.NumberColumn("Unindexed", format="%d", width=80),
            "coverage": st.column_config.ProgressColumn(
                "Coverage", min_value=0.0, max_value=1.0, format="percent", width=105
            ),
            "size": st.column_config.TextColumn("Size", width=75),
            "segments": st.column_config.NumberColumn("Segments", format="%d", width=70),
            "distance_type": st.column_config.TextColumn("Distance", width=70),
            "created_at": st.column_config.DatetimeColumn(
                "Created", format="MM-DD HH:mm", width=95
            ),
        },
    )


def render_lag_warning(overview: pd.DataFrame) -> bool:
    """A warning naming every index that lags behind the data; True when one lags."""
    lag = ixs.lagging_indexes(overview)
    if lag.empty:
        return False
    parts = [
        f"{r.name} ({plural(int(r.unindexed_rows), 'unindexed row')})" for r in lag.itertuples()
    ]
    feedback.show(
        "warning",
        "Index lags behind the data: " + ", ".join(parts) + ". Queries scan the unindexed rows "
        "without the index. Optimize the indexes to add the new rows.",
    )
    return True


MAINTENANCE_KINDS = ("optimize", "compact")


def render_maintenance(
    ns: Any,
    table_id: Sequence[str],
    *,
    lagging: bool,
    caps: BackendCapabilities,
    read_only: bool,
    key_prefix: str,
    page: str = "indexes",
    has_indexes: bool = True,
) -> JobRequest | None:
    """Compact files (every table) and optimize the indexes (cover unindexed rows; a table
    with indexes), as jobs (``backend.services.jobs``), with progress; the table's latest
    maintenance job (on ``ns``'s branch) is followed here, whichever console started it, and
    the table's reads are refreshed when one this session followed ends
    (``health.follow_latest``). Over REST: why not. Returns the job a button asked for (the
    page submits it: ``components.writes.submit_job``). The Indexes page offers these in its
    Health panel (``components.health.render_actions``, with Clean up)."""
    from backend.services import tuning

    tid = tuple(table_id)
    if caps.kind != "local":
        if lagging:
            st.caption(":material/info: " + feedback.as_text(tuning.MAINTENANCE_UNSUPPORTED))
        return None
    asked: JobRequest | None = None
    latest = (
        feedback.run(latest_jobs, ns, tid, MAINTENANCE_KINDS, action="Reading the table's jobs")
        or []
    )
    running = any(not j.done for j in latest)
    c1, c2, _ = st.columns([1, 1, 3])
    actions = {"compact": (c1, ACTION_LABELS["compact"], ":material/compress:")}
    if has_indexes:
        actions = {
            "optimize": (c1, ACTION_LABELS["optimize"], ":material/auto_fix_high:"),
            "compact": (c2, ACTION_LABELS["compact"], ":material/compress:"),
        }
    for kind, (col, label, icon) in actions.items():
        locked = role_lock("compact_files" if kind == "compact" else "optimize_indexes", read_only)
        if col.button(
            label,
            key=f"{key_prefix}.{kind}",
            icon=icon,
            type="primary" if kind == "optimize" and lagging else "secondary",
            disabled=read_only or running or locked is not None,
            help="Disabled: read-only connection" if read_only else locked,
        ):
            asked = JobRequest(kind, tid, {}, label)
    if latest:
        follow_latest(ns, tid, MAINTENANCE_KINDS, page=page)
    return asked


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
        st.dataframe(
            pd.DataFrame({"option": list(fts), "value": [str(v) for v in fts.values()]}),
            hide_index=True,
            key=f"{key_prefix}.fts",
        )
    if details:
        render_json(details, key_prefix=f"{key_prefix}.details", label="Index details")


# --------------------------------------------------------------------------------------------
# Create: one panel whose fields follow the chosen type
# --------------------------------------------------------------------------------------------

DEFAULT_SAMPLE_TEXT = "The Running Dogs jumped over the Café fences in 2024"


def backend_note(caps: BackendCapabilities, param: str) -> str:
    honoured = caps.honoured_index_params
    if honoured is None:
        return "sent as the spec defines; the server decides"
    return "honoured" if param in honoured else "not applied by this backend"


def existing_vector_indexes(overview: pd.DataFrame | None) -> dict[str, list[dict[str, Any]]]:
    """Column -> the vector indexes already on it (name, type, distance), from the overview."""
    out: dict[str, list[dict[str, Any]]] = {}
    if overview is None or overview.empty:
        return out
    for row in overview.itertuples():
        if rules.normalize_index_type(str(row.type or "")) not in rules.VECTOR_INDEX_TYPES:
            continue
        distance = row.distance_type if isinstance(row.distance_type, str) else None
        for column in [c.strip() for c in str(row.columns or "").split(",") if c.strip()]:
            out.setdefault(column, []).append(
                {"name": row.name, "type": row.type, "distance": distance}
            )
    return out


def render_existing_vector_warning(column: str, existing: Sequence[dict[str, Any]]) -> None:
    """A column that already has a vector index: what another one on it means."""
    if not existing:
        return
    listed = ", ".join(f"{e['name']} ({e['type']}, {e['distance'] or '?'})" for e in existing)
    feedback.show(
        "warning",
        f"{column} already has a vector index: {listed}. Another one is built beside it, but "
        "a search uses one index only, the one lance picks (the query plan names it; Search "
        "& tune shows it): a query cannot name the index. Drop the old index to replace it.",
    )


def render_vector_fields(
    index_type: str,
    column: ColumnInfo,
    num_rows: int | None,
    caps: BackendCapabilities,
    *,
    key_prefix: str,
    problems: list[str],
    existing: Sequence[dict[str, Any]] = (),
) -> tuple[str, dict[str, Any]]:
    """Distance type (first offered: the metric of the column's existing vector index) and
    the build parameters of ``index_type`` (empty: the default shown), read as typed: a
    value out of ``index_rules.param_range`` is said under its field and added to
    ``problems`` (nothing is built while one is there)."""
    render_existing_vector_warning(column.name, existing)
    options = rules.distance_types_for(column.type_info)
    first = rules.default_distance(column.type_info, [e["distance"] for e in existing])
    # a column with an index of its own keeps its own choice (its default differs)
    key = f"{key_prefix}.distance.{column.kind}" + (f".{column.name}" if existing else "")
    distance = st.selectbox(
        "Distance type",
        options,
        index=options.index(first) if first in options else 0,
        key=key,
        persist_state=state.KEEP_WHILE_ON_PAGE,
        help="hamming is offered only for binary (uint8) vectors, and is their only choice."
        + (f" First offered: {first}, the metric of the column's index." if existing else ""),
    )
    defaults = rules.vector_param_defaults(index_type, column.dim, num_rows)
    names = rules.vector_params_for(index_type)
    params: dict[str, Any] = {}
    cols = st.columns(3)
    for i, name in enumerate(names):
        default = defaults.get(name)
        low, high = rules.param_range(name)
        params[name] = render_whole_number(
            name,
            key=f"{key_prefix}.p.{index_type}.{name}",
            bounds=(low, high),
            problems=problems,
            where=cols[i % 3],
            placeholder=f"default: {default}" if default is not None else "server default",
            persist_state=state.KEEP_WHILE_ON_PAGE,
            help=f"{rules.VECTOR_PARAM_HELP[name]}; {low:,} to {high:,}. "
            f"Backend: {backend_note(caps, name)}.",
        )
    with st.expander("Defaults and what the backend honours"):
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "parameter": n,
                        "your value": "" if params[n] is None else str(params[n]),
                        "default": "" if defaults.get(n) is None else str(defaults[n]),
                        "backend": backend_note(caps, n),
                    }
                    for n in names
                ]
            ),
            hide_index=True,
            key=f"{key_prefix}.defaults.{index_type}",
        )
        st.caption(
            f"For {num_rows if num_rows is not None else '?'} rows of dimension {column.dim}: "
            "num_partitions about √rows (PQ types at most rows/256, HNSW types one per 2²⁰ rows); "
            "num_sub_vectors so that each sub-vector has 16 (or 8) dimensions. The local backend "
            "sends these when the fields are empty and reports what it chose."
        )
    return distance, params


def render_fts_fields(*, key_prefix: str, problems: list[str]) -> dict[str, Any]:
    """Full-text options with pylance's defaults, and a live tokenizer preview; a max token
    length refused as typed is added to ``problems``."""
    c1, c2, c3 = st.columns(3)
    base = c1.selectbox(
        "Base tokenizer",
        list(ixs.available_tokenizers()),
        key=f"{key_prefix}.fts.base",
        persist_state=state.KEEP_WHILE_ON_PAGE,
        help="jieba / lindera appear when their language models are installed.",
    )
    defaults = rules.fts_param_defaults(base)
    language = c2.selectbox(
        "Language",
        list(rules.FTS_LANGUAGES),
        index=list(rules.FTS_LANGUAGES).index(defaults["language"]),
        key=f"{key_prefix}.fts.language",
        persist_state=state.KEEP_WHILE_ON_PAGE,
        help=rules.FTS_PARAM_HELP["language"],
    )
    low, high = rules.param_range("max_token_length")
    max_len_key = f"{key_prefix}.fts.max_token_length"
    if not state.has(max_len_key):
        state.put(max_len_key, str(defaults["max_token_length"]))
    max_len = render_whole_number(
        "Max token length",
        name="max_token_length",
        key=max_len_key,
        bounds=(low, high),
        problems=problems,
        required=True,
        where=c3,
        persist_state=state.KEEP_WHILE_ON_PAGE,
        help=f"{rules.FTS_PARAM_HELP['max_token_length']}; {low:,} to {high:,}",
    )
    values: dict[str, Any] = {}
    flags = ("lower_case", "stem", "remove_stop_words", "ascii_folding", "with_position")
    labels = ("Lower case", "Stemming", "Stop words", "ASCII folding", "Positions")
    for col, name, label in zip(st.columns(5), flags, labels, strict=True):
        values[name] = col.checkbox(
            label,
            value=defaults[name],
            key=f"{key_prefix}.fts.{base}.{name}",
            persist_state=state.KEEP_WHILE_ON_PAGE,
            help=rules.FTS_PARAM_HELP[name],
        )
    params = {
        "base_tokenizer": base,
        "language": language,
        **values,
    }
    if max_len is not None:
        params["max_token_length"] = max_len
    render_tokenizer_preview(params)
    return params


def render_tokenizer_preview(params: dict[str, Any]) -> list[ixs.Token]:
    """Tokens of a sample text under ``params`` (pylance's ``lance.tokenize``), live."""
    text = st.text_input(
        "Tokenizer preview: sample text",
        value=DEFAULT_SAMPLE_TEXT,
        key=state.Indexes.PREVIEW_TEXT,
        persist_state=state.KEEP_WHILE_ON_PAGE,
    )
    try:
        tokens = ixs.tokenize_preview(text, params)
    except ValueError as err:
        feedback.show("warning", f"The tokenizer refuses these options: {err}")
        return []
    if tokens:
        st.markdown("**Tokens:** " + " ".join(f"`{t.text.replace('`', '')}`" for t in tokens))
        positions = [t.position for t in tokens]
        gaps = any(b - a > 1 for a, b in zip(positions, positions[1:], strict=False))
        st.caption(
            f"{plural(len(tokens), 'token')}; positions {', '.join(str(p) for p in positions)}"
            + (" (gaps: removed stop words)" if gaps or (positions and positions[0] > 0) else "")
        )
    else:
        st.markdown("**Tokens:** *(none)*")
    return tokens


def render_create_panel(
    table_id: Sequence[str],
    columns: list[ColumnInfo],
    num_rows: int | None,
    existing_names: Sequence[str],
    caps: BackendCapabilities,
    *,
    read_only: bool,
    key_prefix: str,
    vector_indexes: Mapping[str, Sequence[dict[str, Any]]] | None = None,
    branch: str = MAIN,
) -> BuildAsk | None:
    """Column, then only the index types that fit it, then the fields of that type, and with a
    Ray address given at launch "Run on Ray (address)" (BTREE, FTS and IVF_PQ on main).
    Returns a request that passed ``backend.rules.index_rules`` and where to run it when
    "Create" is pressed, else ``None``. ``vector_indexes``: column -> the vector indexes
    already on it (a warning, the distance first offered); ``branch``: the branch the index is
    built on (in the request)."""
    by_name = {c.name: c for c in columns}
    indexable = [c.name for c in columns if c.fitting_types]
    if not indexable:
        st.info(
            "No column of this table fits an index type."
            if columns
            else "The table reports no columns."
        )
        return None
    column = by_name[
        st.selectbox(
            "Column",
            indexable,
            format_func=lambda n: f"{n} · {by_name[n].arrow_type_str}",
            key=f"{key_prefix}.column",
            persist_state=state.KEEP_WHILE_ON_PAGE,
        )
    ]
    index_type = st.selectbox(
        "Index type",
        column.fitting_types,
        format_func=lambda t: f"{t} - {rules.INDEX_TYPE_HELP.get(t, '')}",
        key=f"{key_prefix}.type.{column.name}",
        persist_state=state.KEEP_WHILE_ON_PAGE,
        help=f"Only the types that fit {column.arrow_type_str} are offered.",
    )
    kind = rules.index_category(index_type)
    distance: str | None = None
    params: dict[str, Any] = {}
    problems: list[str] = []  # numbers refused as typed (each said under its field)
    if kind == "vector":
        distance, params = render_vector_fields(
            index_type, column, num_rows, caps, key_prefix=key_prefix, problems=problems,
            existing=list((vector_indexes or {}).get(column.name, [])),
        )  # fmt: skip
    elif kind == "fts":
        params = render_fts_fields(key_prefix=key_prefix, problems=problems)
    else:
        st.caption(f"{index_type}: {rules.INDEX_TYPE_HELP[index_type]}. No build parameters.")
    executor, executor_options = render_executor_choice(
        key=f"{key_prefix}.ray", branch=branch, unsupported=_ray_refusal(index_type)
    )

    def request_for(name: str | None) -> CreateTableIndexRequest:
        request = rules.build_index_request(
            table_id, column.name, index_type, name=name, distance_type=distance, params=params,
            dim=column.dim, num_rows=num_rows,
        )  # fmt: skip
        on = branch_name(branch)
        return request if on is None else request.model_copy(update={"branch": on})

    fv = state.form_version("indexes")
    # outside the form: the snippet below shows the name as typed
    name = st.text_input(
        "Index name",
        placeholder=rules.default_index_name(column.name),
        key=f"{key_prefix}.form{fv}.name",
        help="Empty: the default name shown.",
    )
    if not problems:  # a refused number has no request to show
        render_python_snippet(
            rules.build_operation(index_type),
            request_for((name or "").strip() or None),
            key_prefix=f"{key_prefix}.snippet",
        )
    with st.form(f"{key_prefix}.form{fv}"):
        submitted = st.form_submit_button(
            f"Create {index_type} index", type="primary", icon=":material/add:", disabled=read_only
        )
    if not submitted:
        return None
    if problems:
        feedback.show(
            "error",
            f"Not created: {plural(len(problems), 'number')} above "
            f"{'is' if len(problems) == 1 else 'are'} out of range or not a whole number.",
        )
        return None
    request = request_for(name.strip() or None)
    busy = set(existing_names) | set(running_builds(get_namespace(), table_id, branch))
    problems = rules.validate_index_request(request, column, num_rows=num_rows, existing_names=busy)
    if problems:
        feedback.show_problems("Not created. Fix these first:", problems)
        return None
    return BuildAsk(request, num_rows, executor, executor_options)


class BuildAsk(NamedTuple):
    """An index build asked for: the request, the table's rows (for the hints), and where it
    runs (``jobs.submit``'s executor and its options)."""

    request: CreateTableIndexRequest
    num_rows: int | None
    executor: str = "local"
    executor_options: dict[str, Any] = {}  # noqa: RUF012 - a NamedTuple default, never changed


def _ray_refusal(index_type: str) -> str | None:
    """Why an index of ``index_type`` cannot be built on Ray (``None``: it can)."""
    if ray_address() is None:
        return None
    from backend.services.ray_executor import INDEX_TYPES

    if index_type in INDEX_TYPES:
        return None
    return f"Ray builds {', '.join(INDEX_TYPES)} indexes, not {index_type}: runs on this console"


# --------------------------------------------------------------------------------------------
# Builds in progress
# --------------------------------------------------------------------------------------------


BUILDS_SHOWN = 5  # the latest builds of the table the panel lists
RECENT_SECONDS = 15 * 60  # a build that ended longer ago is listed only if followed


def table_builds(ns: Any, table_id: Sequence[str], branch: str = MAIN) -> list[build_jobs.BuildJob]:
    """The latest builds on the table's ``branch`` (jobs of kind ``create_index``, whoever
    started them), as the panel shows them: the running ones, those this session followed,
    and those that ended in the last :data:`RECENT_SECONDS`."""
    followed = set(state.followed_jobs())
    now = time.time()
    on = branch_name(branch)
    shown = []
    for job in table_jobs(ns, table_id, ("create_index",), limit=BUILDS_SHOWN):
        ended = job.finished_at or job.heartbeat_at or job.created_at
        build = build_jobs.from_job(job)
        if build.branch != on:
            continue
        if not job.done or job.id in followed or now - ended < RECENT_SECONDS:
            shown.append(build)
    return shown


def running_builds(ns: Any, table_id: Sequence[str], branch: str = MAIN) -> list[str]:
    """The index names the queued or running builds on the table's ``branch`` will create
    (any console's)."""
    from backend.services import jobs

    active = jobs.list_jobs(ns, table_id, kinds=("create_index",), states=sorted(jobs.ACTIVE))
    builds = [build_jobs.from_job(j) for j in active]
    return [b.index_name for b in builds if b.branch == branch_name(branch)]


def _chosen(job: build_jobs.BuildJob) -> str:
    context = getattr(job.response, "context", None) or {}
    chosen = {
        k[len(rules.CHOSEN_PREFIX) :]: v
        for k, v in context.items()
        if k.startswith(rules.CHOSEN_PREFIX)
    }
    return ", ".join(f"{k} {v}" for k, v in chosen.items())


def differences_text(job: build_jobs.BuildJob) -> str:
    """What the backend applied otherwise than the build asked for."""
    n = len(job.param_differences)
    return (
        f"The backend applied {'a parameter' if n == 1 else f'{n} parameters'} otherwise than "
        f"requested: {build_jobs.describe_differences(job.param_differences)}."
    )


def _finish(job: build_jobs.BuildJob) -> bool:
    """The first time a finished job this session followed is seen: the table's reads go
    stale, the outcome is kept."""
    if job.job_id not in state.followed_jobs() or not state.first_time_finished(job.job_id):
        return False
    invalidate_tables([list(job.table_id)])
    if job.status == "succeeded":
        chosen = _chosen(job)
        where = f" on branch {job.branch}" if job.branch else ""
        text = f"Index {job.index_name} built{where} in {job.elapsed:.1f} s."
        text += f" Chosen: {chosen}." if chosen else ""
        if job.param_differences:
            text += " " + differences_text(job)
        feedback.flash("indexes", "warning" if job.param_differences else "success", text)
        txn = getattr(job.response, "transaction_id", None)
        if txn:
            from components.transactions import remember_transaction

            remember_transaction(
                [*job.table_id, txn], source=f"create index {job.index_name}", status="SUCCEEDED"
            )
    return True


EVENTS_SHOWN = 50  # progress events listed before "Show all"


def _cancel_build(job_id: str) -> None:
    from backend.services import jobs

    feedback.run(jobs.cancel, get_namespace(), job_id, action="Cancelling the build")


def render_job(job: build_jobs.BuildJob, *, key_prefix: str) -> None:
    icon = {
        "running": ":material/sync:",
        "succeeded": ":material/check_circle:",
        "dropped": ":material/delete:",
        "cancelled": ":material/cancel:",
        "timed out": ":material/timer_off:",
        "interrupted": ":material/link_off:",
    }.get(job.outcome, ":material/error:")
    outcome = "built, then dropped" if job.outcome == "dropped" else job.outcome
    who = f", by {job.who}" if job.who else ""
    st.markdown(
        f"{icon} **{feedback.as_text(job.index_name)}** ({job.index_type} on "
        f"{feedback.as_text(job.column)}"
        + (f", branch {feedback.as_text(job.branch)}" if job.branch else "")
        + f") - {outcome}, {job.elapsed:.1f} s"
        + feedback.as_text(who)
    )
    if job.status in ("cancelled", "timed out") and job.error is not None:
        feedback.show("info", str(job.error))
        return
    if job.status == "interrupted" and job.error is not None:
        feedback.show(
            "warning",
            f"Interrupted: {job.error}. Nothing of it was committed after its last step; "
            "run it again from the Jobs page.",
        )
        return
    if job.status == "failed" and job.error is not None:
        feedback.show_error(job.error, action=f"Building {job.index_name}")
        return
    if job.outcome == "succeeded" and job.param_differences:
        feedback.show("warning", differences_text(job))
    if job.status == "running":
        if job.mode == "events":
            render_stage_progress(job)
            locked = role_lock("cancel_job", False) or role_lock(
                rules.build_operation(job.index_type), False
            )
            st.button(
                "Cancel build",
                key=f"{key_prefix}.{job.job_id}.cancel",
                icon=":material/cancel:",
                disabled=job.cancel_requested or not job.cancellable or locked is not None,
                help="Stops the build at lance's next progress event; nothing is committed and "
                "its partial files are removed.",
                on_click=_cancel_build,
                args=(job.job_id,),
            )
        else:
            seen = (job.observed or {}).get("status", "not polled yet")
            st.progress(0.0, text=f"waiting for the server (index: {seen})")
    if job.events:
        with st.expander(f"Progress events ({job.events_total or len(job.events)})"):
            render_events(job, key_prefix=f"{key_prefix}.{job.job_id}")


def _count(value: int, unit: str | None) -> str:
    return f"{value:,} {unit}".strip()


def stage_progress_text(job: build_jobs.BuildJob) -> str:
    """Where a running build is, as lance reports it: the stage, its place among the stages
    seen so far, and how far it is (``completed of total unit (n %)``), or ``running`` when
    lance gives the stage no total (with the count so far, when it reports one)."""
    stage = job.current_stage
    if stage is None:
        return "Starting: lance has reported no stage yet"
    seen = len(job.stages)
    text = f"Stage {stage.number} of {seen} seen so far: {stage.name}"
    if stage.done:
        return f"{text} - done"
    fraction = stage.fraction
    if fraction is None or stage.total is None or stage.completed is None:
        so_far = f", {_count(stage.completed, stage.unit)} so far" if stage.completed else ""
        return f"{text} - running{so_far} (lance reports no total for this stage)"
    return f"{text} - {stage.completed:,} of {_count(stage.total, stage.unit)} ({fraction:.0%})"


def render_stage_progress(job: build_jobs.BuildJob) -> None:
    """The running build's stage (:func:`stage_progress_text`): a bar filled to the stage's
    fraction when lance gives the stage a total; without one, no bar (a bar would sit at 0 %
    while the stage runs), the stage said to be running. The stages seen so far follow."""
    text = feedback.as_text(stage_progress_text(job))
    stage = job.current_stage
    if stage is not None and stage.fraction is not None:
        st.progress(stage.fraction, text=text)
    else:
        st.markdown(f":material/progress_activity: {text}")
    if job.cancel_requested:
        st.caption("Cancelling: the build stops at lance's next progress event.")
    if len(job.build_stages) > 1:
        st.caption(
            "Stages: "
            + " → ".join(
                feedback.as_text(f"{s.name} ({'done' if s.done else 'running'})")
                for s in job.build_stages
            )
        )


def render_events(job: build_jobs.BuildJob, *, key_prefix: str) -> None:
    """The latest :data:`EVENTS_SHOWN` progress events, saying how many there are, with a
    switch to list every event kept."""
    total = max(job.events_total, len(job.events))
    kept = len(job.events)
    show_all = False
    if total > EVENTS_SHOWN:
        shown_text = f"Showing the latest {EVENTS_SHOWN} of {total} events."
        show_all = st.toggle(
            f"Show all {kept} events" + (f" kept (of {total})" if kept < total else ""),
            key=f"{key_prefix}.all",
        )
        if show_all:
            shown_text = (
                f"Showing all {total} events."
                if kept == total
                else f"Showing the latest {kept} of {total} events (older ones are not kept)."
            )
        st.caption(shown_text)
    events = job.events if show_all else job.events[-EVENTS_SHOWN:]
    frame = pd.DataFrame(events)
    if "at" in frame:
        frame["at"] = [time.strftime("%H:%M:%S", time.localtime(t)) for t in frame["at"]]
    st.dataframe(frame.astype(str), hide_index=True, key=f"{key_prefix}.events")


def render_build_jobs(table_id: Sequence[str], *, key_prefix: str, branch: str = MAIN) -> None:
    """The latest builds on the table's ``branch``, whichever console started them
    (:func:`table_builds`); refreshes every second while one runs."""
    ns = get_namespace()
    builds = feedback.run(table_builds, ns, table_id, branch, action="Reading the table's builds")
    if not builds:
        return

    def panel() -> None:
        changed = False
        with st.container(border=True):
            st.caption("Index builds")
            for job in table_builds(ns, table_id, branch):
                render_job(job, key_prefix=key_prefix)
                changed = (job.done and _finish(job)) or changed
        if changed:
            st.rerun(scope="app")

    st.fragment(panel, run_every=1.0 if any(not j.done for j in builds) else None)()


# --------------------------------------------------------------------------------------------
# Drop
# --------------------------------------------------------------------------------------------


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


def render_statistics(
    overview: pd.DataFrame, table_id: tuple[str, ...], branch: str = MAIN
) -> None:
    """The Statistics tab: coverage, size and segments charts, and coverage across versions
    (of ``branch``)."""
    from components import index_charts as charts

    history = None
    if not overview.empty:
        depth = st.number_input(
            "Versions in the coverage history",
            min_value=1,
            max_value=200,
            value=30,
            step=5,
            key=state.Indexes.HISTORY_MAX,
        )
        history = feedback.run(
            coverage_history,
            table_id,
            int(depth),
            overview.attrs.get("version"),  # the version the index table shows
            branch,
            action="Reading the coverage history",
        )
    charts.render_index_charts(overview, history, key_prefix=state.Indexes.CHARTS)


def render_create_tab(
    table_id: list[str],
    names: Sequence[str],
    caps: BackendCapabilities,
    *,
    read_only: bool,
    overview: pd.DataFrame | None = None,
    branch: str = MAIN,
) -> BuildAsk | None:
    """The create panel on the columns and rows of the table's ``branch`` (``overview``: its
    indexes); the build asked for on submit."""
    tid = tuple(table_id)
    columns = feedback.run(table_columns, tid, branch, action="Reading the schema") or []
    num_rows = table_num_rows(tid, branch)
    return render_create_panel(
        table_id, columns, num_rows, names, caps, read_only=read_only, key_prefix=state.Indexes.CREATE,
        vector_indexes=existing_vector_indexes(overview), branch=branch,
    )  # fmt: skip


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


def open_tabs(names: Sequence[str]) -> tuple[Any, Any, Any]:
    """The page's stateful tabs (a rerun keeps the open one; only the open one is computed);
    a deep link ``?index=`` opens "Selected index" on the session's first run."""
    if not state.has(state.Indexes.TABS) and st.query_params.get(state.QP_INDEX) in names:
        state.put(state.Indexes.TABS, TAB_SELECTED)
    create_tab, index_tab, stats_tab = st.tabs(
        [TAB_CREATE, TAB_SELECTED, TAB_STATS],
        default=TAB_CREATE,
        key=state.Indexes.TABS,
        on_change="rerun",
    )
    return create_tab, index_tab, stats_tab


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
    "BuildAsk",
    "TAB_CREATE",
    "TAB_SELECTED",
    "TAB_STATS",
    "capabilities_caption",
    "coverage_history",
    "index_overview",
    "render_stage_progress",
    "stage_progress_text",
    "render_build_jobs",
    "render_create_panel",
    "render_drop_form",
    "render_index_details",
    "render_index_picker",
    "render_index_table",
    "render_lag_warning",
    "render_maintenance",
    "table_columns",
    "table_num_rows",
]
