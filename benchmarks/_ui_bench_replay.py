"""The baseline of benchmarks/bench_ui_interactions.py: console pages, recorded, drawn again
inside the console's own frame (app/nav.py) with none of the console's logic.

``BENCH_REPLAY`` names a pickle written by the benchmark::

    {"states": {name: [Node, ...]},                 # recorded pages (benchmarks/_ui_replay.py)
     "cases": {case: {"start": {route: state},       # what each route shows first
                      "moves": [{"from": state, "widget": id, "idle": value,
                                 "to": state, "op": name or None, "inputs": {name: id}}]}}}

``?case=<case>`` picks the case (kept for the session: a page switch drops the query). Each run
draws the route's current state; when the browser sent a value for a move's widget that is not
its ``idle`` value (a button pressed, a box changed), the move's data operation runs first
(``op``: the same read or write the console makes, through pylance alone, with the values the
browser sent for ``inputs``), then the move's state is drawn in the same run.

``BENCH_TARGET``: the namespace root the operations act on (a copy of the console's data).
"""

from __future__ import annotations

import os
import pickle
import re
import sys
from pathlib import Path
from typing import Any

import streamlit as st

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks._ui_replay import draw, widget_value  # noqa: E402

SCENARIO: dict[str, Any] = pickle.loads(Path(os.environ["BENCH_REPLAY"]).read_bytes())
TARGET = os.environ["BENCH_TARGET"]


@st.cache_resource
def _pylance() -> Any:
    from lance.namespace import DirectoryNamespace

    return DirectoryNamespace(root=TARGET)


def _spans(text: str) -> list[tuple[int, int]]:
    out = []
    for part in re.split(r"\s*,\s*", text.strip()):
        a, _, b = part.partition("-")
        out.append((int(a), int(b or a)))
    return out


def run_op(op: str, args: dict[str, Any], values: dict[str, Any]) -> None:
    """The data work of a move, through pylance alone (no checks, gate, audit, caches)."""
    import lance
    from lance_namespace import (
        BatchDeleteTableVersionsRequest,
        DeclareTableRequest,
        DescribeTableRequest,
    )
    from lance_namespace_urllib3_client.models import VersionRange

    ns = _pylance()
    table = list(args.get("table") or [])
    if op == "preview":  # a filter's count and first rows
        location = ns.describe_table(DescribeTableRequest(id=table)).location
        ds = lance.dataset(location)
        where = str(values.get("filter") or "")
        ds.count_rows(filter=where)
        ds.to_table(filter=where, limit=20)
    elif op == "delete_range":
        ranges = [
            VersionRange(start_version=a, end_version=b + 1)
            for a, b in _spans(str(values.get("ranges") or ""))
        ]
        request = BatchDeleteTableVersionsRequest(id=table, ranges=ranges)
        ns.batch_delete_table_versions(request.model_dump())  # pylance takes it as a dict
    elif op == "declare":
        namespace = list(args.get("namespace") or [])
        ns.declare_table(DeclareTableRequest(id=[*namespace, str(values.get("name") or "")]))
    else:
        raise ValueError(f"unknown operation {op!r}")


def body(route: str) -> None:
    if "case" in st.query_params:
        st.session_state["replay.case"] = st.query_params["case"]
    case = SCENARIO["cases"][st.session_state.get("replay.case") or next(iter(SCENARIO["cases"]))]
    key = f"replay.state.{route}"
    current = st.session_state.get(key) or case["start"].get(route)
    if current is None:
        st.title("(not recorded)")
        return
    for move in case["moves"]:
        if move["from"] != current:
            continue
        value = widget_value(move["widget"])
        if value is None or value == move["idle"]:
            continue
        if move.get("op"):
            values = {name: widget_value(wid) for name, wid in move.get("inputs", {}).items()}
            run_op(move["op"], move.get("args") or {}, values)
        current = move["to"]
        break
    st.session_state[key] = current
    draw(SCENARIO["states"][current])


def page(route: Any) -> Any:
    def view() -> None:
        body(route.url_path)

    view.__name__ = f"replay_{route.url_path}"
    return view


from app.nav import console_pages, run_frame  # noqa: E402

run_frame(console_pages(page))
