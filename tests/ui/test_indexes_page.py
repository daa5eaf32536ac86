"""AppTest of the Indexes page on a real local namespace (``tests/ui/conftest.py``).

Each test adds a small table ``sales$docs`` (300 rows: int, text, tags, flag, 16-d float vector,
8-byte binary vector) to its private copy of the sample namespace, then drives the page.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from lance_namespace import (
    CreateTableRequest,
    DescribeTableIndexStatsRequest,
    DescribeTableRequest,
    ListTableIndicesRequest,
)

import backend
from backend import indexes as ix
from components import state
from tests.ui.conftest import assert_no_exception, texts

DOCS = ["sales", "docs"]
ROWS = 300
DIM = 16
QP = {"ns": "sales", "table": "docs"}


def docs_table(n: int = ROWS, start: int = 0) -> pa.Table:
    rng = np.random.default_rng(start)
    vec = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * DIM, dtype=np.float32)), DIM)
    bits = pa.FixedSizeListArray.from_arrays(
        pa.array(rng.integers(0, 255, n * 8).astype(np.uint8)), 8
    )
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "text": pa.array(
                [f"Running dogs number {i} in the park" for i in range(start, start + n)]
            ),
            "tags": pa.array([["a", "b"] if i % 2 else ["c"] for i in range(n)]),
            "flag": pa.array([i % 2 == 0 for i in range(n)]),
            "vec": vec,
            "bits": bits,
        }
    )


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


@pytest.fixture
def docs_ns(ui_env: Path):
    ns = backend.connect(str(ui_env))
    ns.create_table(CreateTableRequest(id=DOCS), _ipc(docs_table()))
    return ns


def listed(ns) -> dict[str, object]:
    return {
        i.index_name: i for i in ns.list_table_indices(ListTableIndicesRequest(id=DOCS)).indexes
    }


def choose(at, column: str, index_type: str):
    at.selectbox(key="indexes.create.column").set_value(column).run()
    assert_no_exception(at)
    at.selectbox(key=f"indexes.create.type.{column}").set_value(index_type).run()
    assert_no_exception(at)
    return at


def create_button(at):
    return next(b for b in at.button if b.label.startswith("Create "))


def wait_for_builds(at) -> None:
    for job_id in at.session_state[state.INDEXES_JOBS]:
        ix.JOBS.wait(job_id, timeout=120)
    at.run()  # the build panel notices, clears caches, reruns the page
    assert_no_exception(at)


def open_tab(at, label: str):
    """Open a tab of the page's stateful ``st.tabs`` (as a click on it would) and rerun."""
    at.session_state[state.INDEXES_TABS] = label
    at.run()
    assert_no_exception(at)
    return at


def overview(at):
    """The index table shown on the page (an empty frame when the table has no index)."""
    for frame in at.dataframe:
        value = frame.value
        if "indexed_rows" in value.columns and "status" in value.columns:
            return value
    return pd.DataFrame(columns=["name"])


# --------------------------------------------------------------------------------------------


def test_only_fitting_types_are_offered(docs_ns, make_app) -> None:
    at = make_app("indexes", query_params=QP)
    assert_no_exception(at)
    column = at.selectbox(key="indexes.create.column")
    assert [o.split(" · ")[0] for o in column.options] == [
        "id",
        "text",
        "tags",
        "flag",
        "vec",
        "bits",
    ]

    def offered(col: str) -> list[str]:
        at.selectbox(key="indexes.create.column").set_value(col).run()
        return [o.split(" - ")[0] for o in at.selectbox(key=f"indexes.create.type.{col}").options]

    assert offered("vec") == list(ix.VECTOR_INDEX_TYPES)
    assert offered("bits") == ["IVF_FLAT", "IVF_HNSW_FLAT"]
    assert offered("text") == [
        "FTS",
        "INVERTED",
        "BTREE",
        "BITMAP",
        "NGRAM",
        "ZONEMAP",
        "BLOOMFILTER",
    ]
    assert offered("tags") == ["LABEL_LIST", "FTS", "INVERTED"]
    assert offered("flag") == ["BITMAP", "BTREE", "ZONEMAP"]
    assert offered("id") == ["BTREE", "BITMAP", "ZONEMAP", "BLOOMFILTER"]
    # binary vectors: hamming is the only distance
    at.selectbox(key="indexes.create.column").set_value("bits").run()
    assert at.selectbox(key="indexes.create.distance.binary_vector").options == ["hamming"]


def test_fields_follow_the_kind(docs_ns, make_app) -> None:
    at = make_app("indexes", query_params=QP)
    labels = lambda kind: {w.label for w in getattr(at, kind)}  # noqa: E731

    choose(at, "vec", "IVF_HNSW_PQ")
    numbers = labels("number_input")
    assert {"num_partitions", "num_sub_vectors", "num_bits", "m", "ef_construction"} <= numbers
    assert "Base tokenizer" not in {s.label for s in at.selectbox}
    sub = at.number_input(key="indexes.create.p.IVF_HNSW_PQ.num_sub_vectors")
    assert sub.value is None and "default: 1" in sub.proto.placeholder  # 16 / 16

    choose(at, "vec", "IVF_FLAT")
    numbers = labels("number_input")
    assert "num_partitions" in numbers and "num_sub_vectors" not in numbers and "m" not in numbers
    assert (
        "default: 1"
        in at.number_input(key="indexes.create.p.IVF_FLAT.num_partitions").proto.placeholder
    )

    choose(at, "text", "FTS")
    assert {"Base tokenizer", "Language"} <= {s.label for s in at.selectbox}
    assert {"Lower case", "Stemming", "Stop words", "ASCII folding", "Positions"} <= labels(
        "checkbox"
    )
    assert not any(n.startswith("num_") for n in labels("number_input"))

    choose(at, "id", "BTREE")
    assert "Base tokenizer" not in {s.label for s in at.selectbox}
    assert not any(n.startswith("num_") for n in labels("number_input"))
    assert "No build parameters" in texts(at)


def test_tokenizer_preview_is_live(docs_ns, make_app) -> None:
    at = choose(make_app("indexes", query_params=QP), "text", "FTS")
    at.text_input(key=state.INDEXES_PREVIEW_TEXT).set_value("The Running Dogs of Café").run()
    assert "`run` `dog` `cafe`" in texts(at)
    at.checkbox(key="indexes.create.fts.simple.stem").uncheck().run()
    assert "`running` `dogs` `cafe`" in texts(at)
    at.checkbox(key="indexes.create.fts.simple.ascii_folding").uncheck().run()
    assert "`running` `dogs` `café`" in texts(at)
    at.selectbox(key="indexes.create.fts.base").set_value("raw").run()
    # options reset to that tokenizer's defaults (ascii folding on): one token, folded
    assert "`the running dogs of cafe`" in texts(at)


def test_invalid_params_rejected_nothing_created(docs_ns, make_app) -> None:
    at = choose(make_app("indexes", query_params=QP), "vec", "IVF_PQ")
    at.number_input(key="indexes.create.p.IVF_PQ.num_sub_vectors").set_value(5).run()
    at.number_input(key="indexes.create.p.IVF_PQ.num_partitions").set_value(ROWS + 1).run()
    create_button(at).click().run()
    assert_no_exception(at)
    errors = " ".join(e.value for e in at.error)
    assert "Not created" in errors
    assert "must divide the dimension (16)" in errors
    assert f"exceeds the table's rows ({ROWS})" in errors
    assert (
        not at.session_state[state.INDEXES_JOBS] if state.INDEXES_JOBS in at.session_state else True
    )
    assert listed(docs_ns) == {}

    # a bad index name is refused too
    choose(at, "id", "BTREE")
    at.text_input(key="indexes.create.form0.name").set_value("bad name!")
    create_button(at).click().run()
    assert "Index name 'bad name!'" in " ".join(e.value for e in at.error)
    assert listed(docs_ns) == {}


def test_fts_index_with_options_created_and_listed(docs_ns, make_app) -> None:
    at = choose(make_app("indexes", query_params=QP), "text", "FTS")
    at.checkbox(key="indexes.create.fts.simple.stem").uncheck()
    at.checkbox(key="indexes.create.fts.simple.with_position").check()
    at.selectbox(key="indexes.create.fts.language").set_value("French")
    at.number_input(key="indexes.create.fts.max_token_length").set_value(12)
    at.text_input(key="indexes.create.form0.name").set_value("ft")
    create_button(at).click().run()
    assert_no_exception(at)
    assert "**ft** (FTS on `text`)" in texts(at)  # the build panel
    wait_for_builds(at)
    df = overview(at)
    row = df.set_index("name").loc["ft"]
    assert row["type"] == "INVERTED" and int(row["indexed_rows"]) == ROWS
    details = json.loads(listed(docs_ns)["ft"].index_details)
    assert details["stem"] is False and details["with_position"] is True
    assert details["language"] == "French" and details["max_token_length"] == 12
    # the index build's transaction is in the session's history
    assert any(h["source"] == "create index ft" for h in at.session_state[state.TXN_HISTORY])


def test_vector_index_built_with_progress(docs_ns, make_app) -> None:
    at = choose(make_app("indexes", query_params=QP), "vec", "IVF_FLAT")
    at.selectbox(key="indexes.create.distance.vector").set_value("cosine")
    at.number_input(key="indexes.create.p.IVF_FLAT.num_partitions").set_value(2)
    at.text_input(key="indexes.create.form0.name").set_value("vflat")
    create_button(at).click().run()
    assert_no_exception(at)
    (job_id,) = at.session_state[state.INDEXES_JOBS]
    job = ix.JOBS.wait(job_id, timeout=120)
    assert job.status == "succeeded" and job.mode == "events" and job.events
    wait_for_builds(at)
    assert "vflat" in texts(at) or "vflat" in set(overview(at)["name"])
    row = overview(at).set_index("name").loc["vflat"]
    assert row["type"] == "IVF_FLAT" and row["distance_type"] == "cosine"
    stats = docs_ns.describe_table_index_stats(
        DescribeTableIndexStatsRequest(id=DOCS, index_name="vflat")
    )
    assert stats.num_indexed_rows == ROWS
    # charts are drawn for the new index, once the Statistics tab is open (not before)
    assert len(at.get("plotly_chart")) == 0
    open_tab(at, "Statistics")
    assert len(at.get("plotly_chart")) >= 2


def test_drop_needs_typed_confirmation(docs_ns, make_app) -> None:
    ix.create_index(docs_ns, ix.build_index_request(DOCS, "id", "BTREE", name="by_id"))
    ix.create_index(docs_ns, ix.build_index_request(DOCS, "flag", "BITMAP", name="by_flag"))
    at = make_app("indexes", query_params={**QP, "index": "by_flag"})
    assert_no_exception(at)
    assert (
        at.selectbox(key=next(s.key for s in at.selectbox if s.label == "Index")).value == "by_flag"
    )
    drop = next(b for b in at.button if b.label == "Drop index")
    confirm = next(t for t in at.text_input if t.key and t.key.endswith(".by_flag.confirm"))
    confirm.set_value("by_id")
    drop.click().run()
    assert "Type `by_flag` exactly" in " ".join(e.value for e in at.error)
    assert set(listed(docs_ns)) == {"by_id", "by_flag"}
    confirm = next(t for t in at.text_input if t.key and t.key.endswith(".by_flag.confirm"))
    confirm.set_value("by_flag")
    next(b for b in at.button if b.label == "Drop index").click().run()
    assert_no_exception(at)
    assert set(listed(docs_ns)) == {"by_id"}
    assert "Index `by_flag` dropped." in texts(at)
    assert list(overview(at)["name"]) == ["by_id"]


def test_tabs_keep_their_place_and_picks_stick(docs_ns, make_app) -> None:
    ix.create_index(docs_ns, ix.build_index_request(DOCS, "id", "BTREE", name="by_id"))
    ix.create_index(docs_ns, ix.build_index_request(DOCS, "flag", "BITMAP", name="by_flag"))
    at = make_app("indexes", query_params=QP)
    assert at.session_state[state.INDEXES_TABS] == "Create an index"  # the default tab
    open_tab(at, "Selected index")
    picker = at.selectbox(key="indexes.selected.name")
    first = picker.value
    second = next(n for n in picker.options if n != first)
    # pick one index, then another: each pick sticks and becomes the ?index= deep link
    for name in (second, first, second):
        at.selectbox(key="indexes.selected.name").set_value(name).run()
        assert_no_exception(at)
        assert at.selectbox(key="indexes.selected.name").value == name
        assert at.query_params[state.QP_INDEX] == name
        assert f"Drop index **{name}**" in texts(at)
    # a rerun keeps the open tab (it does not fall back to the default)
    at.run()
    assert at.session_state[state.INDEXES_TABS] == "Selected index"
    choose(at, "text", "FTS")  # widgets of another tab still work; the tab stays
    assert at.session_state[state.INDEXES_TABS] == "Selected index"


def test_lag_warning_and_history(docs_ns, ui_env, make_app) -> None:
    import lance

    ix.create_index(docs_ns, ix.build_index_request(DOCS, "id", "BTREE", name="by_id"))
    location = docs_ns.describe_table(DescribeTableRequest(id=DOCS)).location
    lance.write_dataset(docs_table(20, start=ROWS), location, mode="append")
    at = make_app("indexes", query_params=QP)
    assert_no_exception(at)
    warning = " ".join(w.value for w in at.warning)
    assert "lags behind the data" in warning and "`by_id` (20 unindexed rows)" in warning
    assert "optimize" in warning.lower()
    assert len(at.get("plotly_chart")) == 0  # statistics are computed only when opened
    open_tab(at, "Statistics")
    assert len(at.get("plotly_chart")) >= 3  # coverage, size, segments, history


def test_read_only_disables_writes(docs_ns, make_app) -> None:
    ix.create_index(docs_ns, ix.build_index_request(DOCS, "id", "BTREE", name="by_id"))
    at = make_app("indexes", query_params=QP)
    at.session_state[state.READ_ONLY] = True
    at.run()
    assert_no_exception(at)
    assert "Read-only connection" in texts(at)
    assert create_button(at).disabled
    assert next(b for b in at.button if b.label == "Drop index").disabled


# --------------------------------------------------------------------------- chart builders


def test_chart_figures() -> None:
    from components import index_charts as charts

    frame = pd.DataFrame(
        {
            "name": ["a", "b"],
            "indexed_rows": pd.array([10, 4], dtype="Int64"),
            "unindexed_rows": pd.array([0, 6], dtype="Int64"),
            "size_bytes": pd.array([100, None], dtype="Int64"),
            "segments": pd.array([1, 3], dtype="Int64"),
        }
    )
    cov = charts.coverage_figure(frame)
    assert cov.layout.barmode == "stack"
    assert [t.name for t in cov.data] == ["indexed rows", "unindexed rows"]
    assert list(cov.data[0].x) == [10, 4] and list(cov.data[1].x) == [0, 6]
    size = charts.size_figure(frame)
    assert list(size.data[0].x) == ["a"]  # b has no recorded size
    assert list(charts.segments_figure(frame).data[0].y) == [1, 3]
    history = pd.DataFrame(
        {
            "version": [2, 3, 3],
            "index_name": ["a", "a", "b"],
            "unindexed_rows": [0, 5, 0],
            "total_rows": [10, 15, 15],
            "coverage": [1.0, 2 / 3, 1.0],
        }
    )
    fig = charts.history_figure(history)
    assert [t.name for t in fig.data] == ["a", "b"]
    assert list(fig.data[0].y) == [100.0, 66.67]
    # whole versions only on the x axis (no 2.5 tick between versions 2 and 3)
    axis = fig.layout.xaxis
    assert axis.tickmode == "linear" and axis.tick0 == 2 and axis.dtick == 1
    assert axis.tickformat == "d"
    wide = history.assign(version=[1, 100, 250])
    dtick = charts.history_figure(wide).layout.xaxis.dtick
    assert isinstance(dtick, int) and dtick > 1 and (250 - 1) / dtick <= 12
