"""The "bare" baseline of benchmarks/bench_ui_pages.py: the same rows as a console page, shown by
one ``st.dataframe(df)`` call.

``?view=versions|tables|rows|indexes`` (``rows``: the table names, like ``tables``); ``BENCH_TARGET`` (namespace root or REST URL),
``BENCH_NS_<VIEW>`` (namespace name) and ``BENCH_TABLE_<VIEW>`` come from the environment. The rows are fetched with the
same client the console uses (``backend.connect``) and cached with ``st.cache_data`` like a
real page would, so after the warm-up run the bare page costs one script run plus the grid.

``&figures=1`` (``rows``): each table's figures beside its name, the columns the console's
tables list shows (rows, size, latest version, indexes, last change, health), read through
``backend.services.table_stats`` and cached like the names.

``&limit=N``: only the first page of the listing, read with ``limit=N`` (one request): the
rows a console page shows of a catalog too big to list whole (bench_ui_pages.py ``--catalog``).

``&widget=1``: a "Version" number input above the grid, whose change is the baseline of a
widget change (benchmarks/bench_ui_interactions.py).

``&frame=1``: the same grid as the page of the console's own frame (app/nav.py: page settings,
the navigation over every route, the connection sidebar and health banner), served at the
console page's path. It separates what the frame costs from what a page's content costs.
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd
import streamlit as st
from lance_namespace import (
    ListTableIndicesRequest,
    ListTablesRequest,
    ListTableVersionsRequest,
)

import backend

TARGET = os.environ["BENCH_TARGET"]


@st.cache_resource
def _ns() -> Any:
    return backend.connect(TARGET)


def _pages(call: Any, request_type: Any, field: str, limit: int | None, **kwargs: Any) -> list[Any]:
    out: list[Any] = []
    token = None
    while True:
        resp = call(request_type(**kwargs, page_token=token, limit=limit))
        out.extend(getattr(resp, field) or [])
        token = getattr(resp, "page_token", None)
        if not token or limit:  # with a limit: its first page only
            return out


@st.cache_data
def load(view: str, namespace: str, table: str, limit: int | None = None) -> pd.DataFrame:
    ns = _ns()
    if view == "versions":
        rows = _pages(
            ns.list_table_versions,
            ListTableVersionsRequest,
            "versions",
            limit,
            id=[namespace, table],
            descending=True,
        )
        return pd.DataFrame([v.model_dump(exclude={"metadata"}) for v in rows])
    if view in ("tables", "rows"):
        return pd.DataFrame(
            {"table": _pages(ns.list_tables, ListTablesRequest, "tables", limit, id=[namespace])}
        )
    if view == "figures":  # the rows' tables with their figures, as the console's list has them
        from backend.services import table_stats as tstats

        names = list(load("rows", namespace, table, limit)["table"])
        memo = tstats.VersionMemo()
        known = {n: tstats.read_stats(ns, [namespace, n], memo) for n in names}
        return tstats.stats_frame(names, known).drop(columns=["state"])
    if view == "indexes":
        resp = ns.list_table_indices(ListTableIndicesRequest(id=[namespace, table]))
        return pd.DataFrame([i.model_dump() for i in resp.indexes])
    raise ValueError(f"unknown view {view!r}")


def bare_grid() -> None:
    view = st.query_params.get("view", "tables")
    env = os.environ
    if st.query_params.get("widget"):  # a widget above the grid (bench_ui_interactions.py)
        st.number_input("Version", min_value=1, value=50, key="bench.version")
    limit = int(st.query_params.get("limit") or 0) or None
    st.dataframe(
        load(
            "figures" if view == "rows" and st.query_params.get("figures") else view,
            env[f"BENCH_NS_{view.upper()}"],
            env.get(f"BENCH_TABLE_{view.upper()}", ""),
            limit,
        )
    )


if st.query_params.get("frame"):
    from app.nav import console_pages, run_frame

    run_frame(console_pages(lambda route: bare_grid))
else:
    st.set_page_config(layout="wide")  # like the console
    bare_grid()
