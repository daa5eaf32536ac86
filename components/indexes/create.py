"""The "Create an index" tab: one panel whose fields follow the chosen type; it returns a
validated build request (:class:`BuildAsk`) and the page starts the build.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import pandas as pd
import streamlit as st
from lance_namespace import CreateTableIndexRequest

from backend.branch_view import MAIN, branch_name
from backend.capabilities import BackendCapabilities
from backend.rules import index_rules as rules
from backend.rules.columns import ColumnInfo
from backend.text import plural, verb
from components import feedback, state
from components.indexes.builds import running_builds
from components.indexes.fields import render_fts_fields, render_vector_fields
from components.indexes.reads import table_columns, table_num_rows
from components.jobs import ray_address, render_executor_choice
from components.session import get_namespace
from components.snippets import render_python_snippet


def existing_vector_indexes(overview: pd.DataFrame | None) -> dict[str, list[dict[str, Any]]]:
    """Column -> the vector indexes already on it (name, type, distance), from the overview."""
    out: dict[str, list[dict[str, Any]]] = {}
    if overview is None or overview.empty:
        return out
    # the overview's types are the console's names already (``index_overview``)
    for row in overview[overview["type"].isin(rules.VECTOR_INDEX_TYPES)].itertuples():
        distance = row.distance_type if isinstance(row.distance_type, str) else None
        for column in [c.strip() for c in str(row.columns or "").split(",") if c.strip()]:
            out.setdefault(column, []).append(
                {"name": row.name, "type": row.type, "distance": distance}
            )
    return out


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
            f"{verb(len(problems), 'is', 'are')} out of range or not a whole number.",
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


def capabilities_caption(caps: BackendCapabilities) -> str:
    if caps.progress_events:
        return "Local backend: build parameters are honoured and builds report progress events."
    if caps.server:
        return (
            "REST backend: parameters are sent as the spec defines (the server decides); "
            "progress is followed by polling ListTableIndices."
        )
    return "Backend capabilities unknown: parameters are sent as given."
