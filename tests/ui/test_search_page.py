"""AppTest of the Search & tune page on a real local namespace (``tests/ui/conftest.py``).

The sample namespace has no table worth searching, so this module adds two, once, to a copy
of it (``ui_root`` is overridden below: every test still gets its own private copy):

* ``sales$vecs`` - 600 rows: ``id`` int64, ``text`` (six words drawn from a small vocabulary),
  ``vec`` 16-d float32; an IVF_PQ index (4 partitions asked, 4 sub-vectors) and an FTS index
  on ``text`` with positions. 600 rows are too few for 4 partitions: lance trains 2, and the
  page says so.
* ``sales$emb`` - 200 rows whose 64-d vectors are ``backend.launcher.embedding.embed(text)``, with the table
  property ``embedding.function``: the only table offering text queries.
* ``sales$cos`` and ``sales$dot`` - 1,000 rows of 16-d vectors of strongly varied norms
  (``tests.support.varied_norm_rows``) with an IVF_PQ index built for cosine / dot: the
  tables where a measurement with lance's default (l2) would be wrong.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import threading
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from lance_namespace import (
    CreateTableIndexRequest,
    CreateTableRequest,
    DescribeTableRequest,
    QueryTableRequest,
)

import backend
from backend.demo import embedding
from backend.services import jobs, tuning
from backend.services.search import vector as search_vector
from backend.services.search.plans import explain
from backend.services.search.query import run_query
from backend.services.search.vector import plan_vector_index
from backend.services.tuning import optimize as tuning_optimize
from backend.services.tuning.measure import MAX_K, sample_queries
from backend.text import human_bytes
from components import state
from components.search.fulltext import highlighted
from components.search.history import HISTORY_LABEL
from components.search.plans import PLAN_SCAN, PLAN_VECTOR
from components.search.settings import AUTO
from components.search.tabs import (
    TAB_AB,
    TAB_FTS,
    TAB_PARAMS,
    TAB_PLAN,
    TAB_PREVIEW,
    TAB_RECALL,
    TAB_SWEEP,
    TAB_VECTOR,
)
from components.search.vector import SOURCE_NUMBERS, SOURCE_ROW, SOURCE_TEXT
from components.tuning import build_ab as build_ab_ui
from components.tuning.build_ab import AB_DEFAULT, ab_configs
from tests.support import (
    append_rows,
    ipc_stream_bytes,
    metric_distances,
    metric_neighbours,
    search_rows,
    varied_norm_rows,
)
from tests.ui.conftest import alerts, assert_no_exception, displayed, plain, sources, texts

VECS = ("sales", "vecs")
EMB = ("sales", "emb")
ROWS = 600
DIM = 16
QP = {"ns": "sales", "table": "vecs"}
METRIC_TABLES = {"cosine": ("sales", "cos"), "dot": ("sales", "dot")}
METRIC_ROWS = 1000
PAGE = "views/search.py"


@pytest.fixture(scope="module")
def search_template(sample_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample namespace plus ``sales$vecs`` and ``sales$emb``, built once per module."""
    root = tmp_path_factory.mktemp("ui-search") / "root"
    shutil.copytree(sample_template, root)
    ns = backend.connect(str(root))
    ns.create_table(CreateTableRequest(id=list(VECS)), ipc_stream_bytes(search_rows(ROWS)))
    with pytest.warns(UserWarning, match="instead of 4"):  # 600 rows: lance trains 2
        ns.create_table_index(
            CreateTableIndexRequest(
                id=list(VECS), column="vec", index_type="IVF_PQ", num_partitions=4,
                num_sub_vectors=4,
            )
        )  # fmt: skip
    ns.create_table_index(
        CreateTableIndexRequest(id=list(VECS), column="text", index_type="FTS", with_position=True)
    )
    ns.create_table(
        CreateTableRequest(
            id=list(EMB), properties={"embedding.function": embedding.EMBEDDING_FUNCTION}
        ),
        ipc_stream_bytes(search_rows(200, seed=1, embedded=True)),
    )
    for metric, table_id in METRIC_TABLES.items():
        ns.create_table(
            CreateTableRequest(id=list(table_id)),
            ipc_stream_bytes(varied_norm_rows(METRIC_ROWS, dim=DIM, seed=9)),
        )
        ns.create_table_index(
            CreateTableIndexRequest(
                id=list(table_id), column="vec", index_type="IVF_PQ", num_partitions=2,
                num_sub_vectors=4, distance_type=metric,
            )
        )  # fmt: skip
    return root


@pytest.fixture
def ui_root(search_template: Path, tmp_path: Path) -> Path:
    """A private copy of the sample namespace with the search tables (overrides conftest's)."""
    root = tmp_path / "ui-root"
    shutil.copytree(search_template, root)
    return root


# --------------------------------------------------------------------------------------------
# helpers


def search_page(make_app, **query: str):
    at = make_app(PAGE, query_params={**QP, **query})
    assert_no_exception(at)
    return at


def open_tab(at, label: str):
    """Open a tab of the page's stateful ``st.tabs`` (as a click on it would) and rerun."""
    at.session_state[state.Search.TABS] = label
    at.run()
    assert_no_exception(at)
    return at


def submit(at, form: str, label: str):
    """Click the submit button ``label`` of the form keyed ``form`` and rerun."""
    at.button(key=f"FormSubmitter:{form}-{label}").click().run()
    assert_no_exception(at)
    return at


def metrics(at) -> dict[str, str]:
    return {plain(m.label): str(m.value) for m in at.metric}


def grid_with(at, column: str):
    (frame,) = [d.value for d in at.dataframe if column in d.value.columns]
    return frame


def found_version(ui_env, table_id) -> int:
    """The table's latest version, as lance reads it at its location."""
    location = (
        backend.connect(str(ui_env), audit=False)
        .describe_table(DescribeTableRequest(id=list(table_id)))
        .location
    )
    return lance.dataset(location).version


def result(at, table_id, what: str):
    """The last result a panel kept in the session (``components.state.result``)."""
    if state.Search.RESULTS not in at.session_state:
        return None
    return (at.session_state[state.Search.RESULTS] or {}).get((tuple(table_id), what))


def vector_search(at, source: str = SOURCE_ROW, **settings):
    """Run a vector search from the Vector search tab: query ``source``, then ``settings``
    (widget key suffix -> value)."""
    open_tab(at, TAB_VECTOR)
    at.segmented_control(key="search.vec.source").set_value(source).run()
    assert_no_exception(at)
    for name, value in settings.items():
        widgets = [w for kind in ("number_input", "text_area", "text_input", "checkbox")
                   for w in getattr(at, kind) if w.key == f"search.vec.{name}"]  # fmt: skip
        assert len(widgets) == 1, name
        typed = widgets[0].type == "text_input" and isinstance(value, int)
        widgets[0].set_value(str(value) if typed else value)  # number fields are text boxes
    return submit(at, "search.vec.form", "Search")


# --------------------------------------------------------------------------------------------
# the page, the summary, the preview


def test_no_table_picked_shows_the_info(make_app) -> None:
    at = make_app(PAGE)
    assert_no_exception(at)
    assert alerts(at, "info") == ["Pick a table to search it and tune its indexes."]
    assert not at.tabs


def test_summary_caption(make_app) -> None:
    at = search_page(make_app)
    caption = plain(at.caption[0].value)
    assert caption == (
        f"{ROWS} rows · version 3 · vector index on vec (IVF_PQ) · full-text index on text"
    )
    emb = make_app(PAGE, query_params={"ns": "sales", "table": "emb"})
    assert_no_exception(emb)
    assert plain(emb.caption[0].value) == (
        f"200 rows · version 1 · embedding {embedding.EMBEDDING_FUNCTION}"
    )


def test_preview_rows_filter_and_abbreviated_vectors(make_app) -> None:
    at = search_page(make_app)
    assert at.session_state[state.Search.TABS] == TAB_PREVIEW
    assert f"{ROWS} rows match · rows 1–50 · latest version" in texts(at)
    frame = grid_with(at, "vec")
    assert len(frame) == 50 and list(frame.columns) == ["id", "text", "vec"]
    assert list(frame["id"]) == list(range(50))
    assert all(re.fullmatch(r"\[.+, … 16 dims\]", v) for v in frame["vec"]), frame["vec"][0]
    assert "Page 1 of 12" in texts(at)
    at.button(key="search.preview.next").click().run()  # its callback turns the page
    assert_no_exception(at)
    assert list(grid_with(at, "vec")["id"]) == list(range(50, 100)) and "Page 2 of 12" in texts(at)
    at.button(key="search.preview.prev").click().run()
    assert list(grid_with(at, "vec")["id"]) == list(range(50)) and "Page 1 of 12" in texts(at)

    at.text_input(key="search.preview.filter").set_value("id < 10").run()
    assert_no_exception(at)
    assert "10 rows match · rows 1–10 · latest version" in texts(at)
    assert list(grid_with(at, "vec")["id"]) == list(range(10))
    assert "Page 1 of" not in texts(at)  # one page: no paging buttons

    at.multiselect(key="search.preview.columns").set_value(["id", "text"]).run()
    assert_no_exception(at)
    assert list(grid_with(at, "text").columns) == ["id", "text"]

    # the filter's example is on this table's own columns, and works as typed
    box = at.text_input(key="search.preview.filter")
    assert box.placeholder == "e.g. id > 10"
    box.set_value(box.placeholder.removeprefix("e.g. ")).run()
    assert_no_exception(at)
    assert f"{ROWS - 11} rows match" in texts(at)  # ids 11..599


def test_filter_example_names_a_column_of_the_table() -> None:
    from backend.rules.columns import ColumnInfo
    from components.search.preview import filter_example

    def col(name: str, kind: str) -> ColumnInfo:
        return ColumnInfo(name=name, arrow_type_str="", kind=kind)

    assert filter_example([col("vec", "vector"), col("title", "string")]) == (
        "e.g. title LIKE 'a%'"
    )
    # a name that would need quoting is passed over; no usable column: a general hint
    assert filter_example([col("my col", "integer"), col("ok", "boolean")]) == "e.g. ok = true"
    assert filter_example([col("vec", "vector")]) == "a condition on the columns, in SQL"


def test_preview_bad_filter_is_a_readable_error_box(make_app) -> None:
    at = search_page(make_app)
    at.text_input(key="search.preview.filter").set_value("id >").run()
    assert_no_exception(at)
    (error,) = alerts(at, "error")
    assert error.startswith("Reading rows failed.")
    assert "id >" in error
    assert "rows match" not in texts(at)
    # The console's own rule for error boxes (``backend.describe_error``): no source paths.
    # Lance's message carries a Rust ``Location { file: ".../sql.rs", line: .. }``.
    assert not re.search(r"\.rs\b", error), error
    assert "backtrace" not in error.lower(), error


def test_preview_filter_on_a_missing_column_says_so_the_engine_text_behind_an_expander(
    make_app,
) -> None:
    at = search_page(make_app)
    at.text_input(key="search.preview.filter").set_value("text = json").run()
    assert_no_exception(at)
    (error,) = alerts(at, "error")
    assert "no column named json (did you mean the string 'json'?)" in error, error
    assert "the table's columns: id, text, vec" in error, error
    assert "_row" not in error and "FieldNotFound" not in error, error
    (expander,) = [e for e in at.expander if plain(e.label) == "The engine's message"]
    (engine,) = expander.code
    assert "FieldNotFound" in engine.value and "_rowaddr" in engine.value


# --------------------------------------------------------------------------------------------
# vector search


def test_vector_search_by_row_id_passes_the_settings(make_app) -> None:
    at = search_page(make_app)
    at = vector_search(at, source=SOURCE_ROW, row=5, k=7, nprobes=2, refine_factor=3, n=3)
    assert alerts(at, "error") == []
    shown = metrics(at)
    assert shown["Rows"] == "7"
    assert re.fullmatch(r"\d+\.\d ms", shown["p50 latency"])
    assert re.fullmatch(r"\d+\.\d ms", shown["p95 latency"])
    assert "over 3 runs" in texts(at)
    rows = grid_with(at, "_distance")
    assert list(rows.columns)[0] == "_distance"  # the score first
    assert len(rows) == 7
    distances = list(rows["_distance"])
    assert distances == sorted(distances)
    assert 5 in list(rows["id"])  # the row itself is among its nearest neighbours

    found, column, k, params, text = result(at, VECS, "vector")
    assert (column, k) == ("vec", 7)
    assert params == {"nprobes": 2, "refine_factor": 3} and text is None  # a row, not a text
    assert found.request.nprobes == 2 and found.request.refine_factor == 3 and found.request.k == 7
    assert len(found.latencies_ms) == 3
    code = "\n".join(str(c.value) for c in at.code)
    assert "nprobes=2" in code and "refine_factor=3" in code
    assert "'nprobes': 2" in code  # the plain pylance call
    assert "tab=vector&column=vec&k=7&nprobes=2&refine_factor=3" in code  # the link


def test_a_search_result_belongs_to_the_settings_that_made_it(make_app) -> None:
    at = search_page(make_app)
    at = vector_search(at, source=SOURCE_ROW, row=5, k=7)
    assert alerts(at, "error") == [] and metrics(at)["Rows"] == "7"

    # a search that fails: its error alone, the older rows are gone
    at = vector_search(at, source=SOURCE_ROW, row=5, k=7, filter="cat = c1")
    [error] = alerts(at, "error")
    assert "no column named cat" in error and "the table's columns: id, text, vec" in error
    assert "Rows" not in metrics(at) and result(at, VECS, "vector") is None
    assert not [d for d in at.dataframe if "_distance" in d.value.columns]

    # a result, then another query source (a setting outside the form): not shown any more
    at = vector_search(at, source=SOURCE_ROW, row=5, k=7, filter="")
    assert metrics(at)["Rows"] == "7"
    at.segmented_control(key="search.vec.source").set_value(SOURCE_NUMBERS).run()
    assert_no_exception(at)
    assert "Rows" not in metrics(at) and result(at, VECS, "vector") is None

    # full-text search: a failed search (empty text) clears the older matches too
    open_tab(at, TAB_FTS)
    at.text_input(key="search.fts.text").set_value("Running dogs")
    submit(at, "search.fts.form", "Search")
    assert metrics(at)["Matches shown"] == "10"
    at.text_input(key="search.fts.text").set_value("   ")
    submit(at, "search.fts.form", "Search")
    assert alerts(at, "error")
    assert "Matches shown" not in metrics(at) and result(at, VECS, "fts") is None


def test_two_vector_indexes_the_one_in_use_is_shown_and_why_there_is_no_choice(
    ui_env, make_app
) -> None:
    ns = backend.connect(str(ui_env))
    two = ["sales", "two"]
    ns.create_table(CreateTableRequest(id=two), ipc_stream_bytes(search_rows(300, dim=8)))
    for name, index_type in (("z_flat", "IVF_FLAT"), ("a_hnsw", "IVF_HNSW_SQ")):
        ns.create_table_index(
            CreateTableIndexRequest(
                id=two, column="vec", index_type=index_type, name=name, num_partitions=2
            )
        )
    at = search_page(make_app, table="two")
    caption = plain(at.caption[0].value)
    assert "vector index on vec (z_flat, IVF_FLAT: the one searches use of 2)" in caption
    open_tab(at, TAB_VECTOR)
    (picker,) = [s for s in at.selectbox if plain(s.label) == "Vector index"]
    assert picker.value == "z_flat" and picker.disabled
    assert picker.options == ["a_hnsw · IVF_HNSW_SQ · l2", "z_flat · IVF_FLAT · l2"]
    (note,) = [a for a in alerts(at, "info") if "vector indexes" in a]
    assert "Searches use z_flat (the index the query plan names)" in note
    assert "its query takes no index name" in note
    # ef belongs to HNSW: the index in use is not one
    (ef,) = [n for n in at.text_input if n.key == "search.vec.ef"]
    assert "no effect: the index in use, z_flat, is IVF_FLAT" in ef.help
    # the plan of a search names the index shown
    at = vector_search(at, source=SOURCE_ROW, row=3, k=5)
    assert alerts(at, "error") == []
    found = result(at, two, "vector")[0]
    assert plan_vector_index(explain(ns, found.request)) == "z_flat"


def test_vector_settings_survive_a_tab_switch(make_app) -> None:
    """Only the open tab is computed; the form a user filled in must still be filled in (and
    match the result shown under it) after a look at another tab."""
    at = search_page(make_app)
    vector_search(at, source=SOURCE_ROW, row=5, nprobes=2)
    assert result(at, VECS, "vector")[3] == {"nprobes": 2}
    open_tab(at, TAB_PLAN)
    open_tab(at, TAB_VECTOR)
    assert metrics(at)["Rows"] == "10"  # the result is kept...
    # ...and so is the setting that produced it
    assert at.segmented_control(key="search.vec.source").value == SOURCE_ROW
    assert at.text_input(key="search.vec.nprobes").value == "2"
    assert at.text_input(key="search.vec.row").value == "5"


def test_pasted_numbers_are_checked(make_app) -> None:
    at = search_page(make_app)
    at = vector_search(at, source=SOURCE_NUMBERS, numbers="0.1, 0.2, 0.3")
    (error,) = alerts(at, "error")
    assert (
        error
        == "Vector search failed. Invalid input: the column has 16 dimensions; 3 numbers given"
    )
    assert result(at, VECS, "vector") is None
    assert not [m for m in at.metric if m.label == "Rows"]

    at.text_area(key="search.vec.numbers").set_value("0.1, x, 0.3")
    submit(at, "search.vec.form", "Search")
    assert alerts(at, "error") == [
        "Vector search failed. Invalid input: the query vector must be numbers separated by commas"
    ]

    at.text_area(key="search.vec.numbers").set_value("[" + ", ".join(["0.5"] * DIM) + "]")
    submit(at, "search.vec.form", "Search")
    assert alerts(at, "error") == []
    assert metrics(at)["Rows"] == "10"
    assert len(grid_with(at, "_distance")) == 10


def test_text_query_only_with_an_embedding(make_app) -> None:
    at = search_page(make_app)
    open_tab(at, TAB_VECTOR)
    source = at.segmented_control(key="search.vec.source")
    assert source.options == [SOURCE_ROW, SOURCE_NUMBERS]
    assert "embedding.function" in source.help

    at = make_app(PAGE, query_params={"ns": "sales", "table": "emb", "tab": "vector"})
    assert_no_exception(at)
    source = at.segmented_control(key="search.vec.source")
    assert source.options == [SOURCE_ROW, SOURCE_NUMBERS, SOURCE_TEXT]
    assert source.value == SOURCE_TEXT  # the default when offered
    at.text_input(key="search.vec.text").set_value("river mountain")
    submit(at, "search.vec.form", "Search")
    assert alerts(at, "error") == []
    rows = grid_with(at, "_distance")
    assert len(rows) == 10
    top = str(rows["text"].iloc[0])
    assert "river" in top or "mountain" in top, top
    found = result(at, EMB, "vector")[0]
    assert found.request.vector.single_vector == [
        float(x) for x in embedding.embed(["river mountain"])[0]
    ]


# --------------------------------------------------------------------------------------------
# full-text search


def test_full_text_highlights_scores_and_tokens(make_app) -> None:
    at = search_page(make_app, tab="fts")
    assert at.session_state[state.Search.TABS] == TAB_FTS
    at.text_input(key="search.fts.text").set_value("Running dogs")
    submit(at, "search.fts.form", "Search")
    assert alerts(at, "error") == []
    assert metrics(at)["Matches shown"] == "10"
    hits = [s for s in sources(at) if "BM25" in s]
    assert len(hits) == 10
    for line in hits:
        assert re.match(r"`\d+\.` :gray-badge\[BM25 \d+\.\d\d\] ", line), line
        assert ":orange[**running**]" in line or ":orange[**dogs**]" in line
    scores = [float(re.search(r"BM25 (\d+\.\d+)", s).group(1)) for s in hits]
    assert scores == sorted(scores, reverse=True)
    # the words not asked for stay plain
    assert not any(":orange[**lance**]" in s for s in hits)
    # the query as the index's tokenizer sees it: lower-cased and stemmed
    assert "`run` `dog`" in texts(at)
    assert "**The query, as the index tokenizes it**" in sources(at)
    found = result(at, VECS, "fts")[0]
    assert found.request.full_text_query.string_query.query == "Running dogs"

    at.radio(key="search.fts.mode").set_value("Phrase")
    submit(at, "search.fts.form", "Search")
    assert alerts(at, "error") == []
    hits = [s for s in sources(at) if "BM25" in s]
    assert hits
    for line in hits:  # both words, next to each other
        assert ":orange[**running**] :orange[**dogs**]" in line, line


def test_highlighting_keeps_the_text_exactly() -> None:
    options = {"base_tokenizer": "simple", "lower_case": True, "stem": True}
    text = "Command-line tools: parse command-line (args), re-run"
    shown = highlighted(text, "command line", options)
    assert shown.startswith(r":orange[**Command**]\-:orange[**line**] tools")
    # no padded marker (Streamlit pads ``-background`` spans: "Command - line")
    assert "-background[" not in shown
    # the marks taken away and the escapes undone: the very same text
    plain_text = re.sub(r":orange\[\*\*(.*?)\*\*\]", r"\1", shown)
    assert re.sub(r"\\(.)", r"\1", plain_text) == text
    marked = re.findall(r":orange\[\*\*(.*?)\*\*\]", shown)
    assert marked == ["Command", "line", "command", "line"]


# --------------------------------------------------------------------------------------------
# query plan


def test_plan_analyze_shows_the_index_and_bypass(make_app) -> None:
    at = search_page(make_app)
    vector_search(at, source=SOURCE_ROW, row=3)
    open_tab(at, TAB_PLAN)
    which = at.radio(key="search.plan.which")
    assert which.options == [PLAN_VECTOR, PLAN_SCAN]
    assert which.value == PLAN_VECTOR
    at.button(key="search.plan.analyze").click().run()
    assert_no_exception(at)
    assert alerts(at, "error") == []
    shown = metrics(at)
    assert shown["Index used"] == "yes"
    assert {"Rows scanned", "Bytes read", "Total time"} <= set(shown)
    assert re.fullmatch(r"\d+\.\d\d ms", shown["Total time"])
    assert "ANNSubIndex" in texts(at)
    assert [e.label for e in at.expander] == ["Raw plan"]
    raw = "\n".join(str(c.value) for c in at.expander[0].code)
    assert "ANNSubIndex" in raw and "metrics=" in raw
    assert len(at.get("plotly_chart")) == 1  # time per step

    vector_search(at, row=3, bypass_vector_index=True)
    assert result(at, VECS, "vector")[0].request.bypass_vector_index is True
    open_tab(at, TAB_PLAN)
    at.button(key="search.plan.analyze").click().run()
    assert_no_exception(at)
    assert metrics(at)["Index used"] == "no"
    assert "brute force" in texts(at)

    # Explain: the plan only, no timings
    at.button(key="search.plan.explain").click().run()
    assert_no_exception(at)
    assert "Rows scanned" not in metrics(at)
    assert "Analyze runs it" in texts(at)


# --------------------------------------------------------------------------------------------
# recall, sweep


def test_recall_small_sample_and_bypass(ui_env, make_app) -> None:
    at = search_page(make_app, tab="recall")
    assert at.session_state[state.Search.TABS] == TAB_RECALL
    at.number_input(key="search.recall.sample").set_value(20)
    submit(at, "search.recall.form", "Measure recall")
    assert alerts(at, "error") == []
    value = metrics(at)["recall@10"]
    assert re.fullmatch(r"\d\.\d{3}", value), value
    assert 0.0 < float(value) < 1.0  # PQ on 4 sub-vectors is approximate
    found = re.search(r"95% interval (\d\.\d{3})-(\d\.\d{3})", texts(at))
    assert found, texts(at)
    low, high = float(found.group(1)), float(found.group(2))
    assert low < float(value) < high
    # the t interval of the 20 per-query recalls (numpy; t(0.975, 19) = 2.093 from the table)
    per_query = result(at, VECS, "recall").per_query
    assert (low, high) == pytest.approx(numpy_t_interval(per_query, 2.0930), abs=1.5e-3)
    (shown,) = [m for m in at.metric if plain(m.label) == "recall@10"]
    sd = np.std(per_query, ddof=1)
    assert f"Standard deviation of the per-query recalls: {sd:.3f}." in shown.proto.help
    assert (
        f"95% confidence interval of the mean (Student's t, from the per-query recalls): "
        f"{low:.3f}-{high:.3f}." in shown.proto.help
    )
    assert "±" not in shown.proto.help and "spread" not in shown.proto.help
    assert {"ANN p50", "Exact p50", "Speed-up"} <= set(metrics(at))
    assert (
        f"20 sampled rows, each searched without itself, at version {found_version(ui_env, VECS)}; "
        "settings: defaults" in texts(at)
    )
    assert len(at.get("plotly_chart")) == 2
    assert len(result(at, VECS, "recall").per_query) == 20

    at.checkbox(key="search.recall.bypass_vector_index").check()
    submit(at, "search.recall.form", "Measure recall")
    assert metrics(at)["recall@10"] == "1.000"
    # 20 perfect queries: no spread, the interval is the point
    assert result(at, VECS, "recall").per_query == [1.0] * 20
    assert "95% interval 1.000-1.000" in texts(at)
    assert "settings: bypass_vector_index=True" in texts(at)


def numpy_t_interval(values: list[float], t: float) -> tuple[float, float]:
    """mean ± t·s/√n of ``values`` with numpy (s with n - 1), clipped to [0, 1]."""
    half = t * np.std(values, ddof=1) / np.sqrt(len(values))
    return max(0.0, np.mean(values) - half), min(1.0, np.mean(values) + half)


def interval_shown(at) -> tuple[float, float]:
    found = re.search(r"95% interval (\d\.\d{3})-(\d\.\d{3})", texts(at))
    assert found, texts(at)
    return float(found.group(1)), float(found.group(2))


def test_more_queries_add_a_batch_to_the_measurement(ui_env, make_app) -> None:
    at = search_page(make_app, tab="recall")
    at.number_input(key="search.recall.sample").set_value(20)
    at.text_input(key="search.recall.nprobes").set_value("1")
    submit(at, "search.recall.form", "Measure recall")
    first = result(at, VECS, "recall")
    low1, high1 = interval_shown(at)
    more = at.button(key="search.recall.more")
    assert more.label == "More queries (+20)"
    more.click().run()
    assert_no_exception(at)
    assert alerts(at, "error") == []
    merged = result(at, VECS, "recall")
    assert merged.query_rows[:20] == first.query_rows
    assert len(set(merged.query_rows)) == len(merged.per_query) == 40  # 20 new rows
    # the result's own settings, and the version its first batch read (the second's too)
    assert merged.query_params == {"nprobes": 1, "version": found_version(ui_env, VECS)}
    assert metrics(at)["recall@10"] == f"{statistics.fmean(merged.per_query):.3f}"
    assert (
        f"40 sampled rows, each searched without itself, at version {found_version(ui_env, VECS)}; "
        "settings: nprobes=1" in texts(at)
    )
    # each interval from its own per-query recalls: t(0.975, 19) = 2.093, t(0.975, 39) = 2.023
    assert (low1, high1) == pytest.approx(numpy_t_interval(first.per_query, 2.0930), abs=1.5e-3)
    low2, high2 = interval_shown(at)
    assert (low2, high2) == pytest.approx(numpy_t_interval(merged.per_query, 2.0227), abs=1.5e-3)
    at.run()  # kept: a rerun measures nothing more
    assert len(result(at, VECS, "recall").per_query) == 40


def test_sweep_grid_target_and_bad_values(make_app) -> None:
    at = search_page(make_app, tab="sweep")
    at.number_input(key="search.sweep.sample").set_value(20)
    at.text_input(key="search.sweep.grid.nprobes").set_value("1, 4")
    at.text_input(key="search.sweep.grid.refine_factor").set_value("none")
    submit(at, "search.sweep.form", "Run the sweep")
    assert alerts(at, "error") == []
    frame = grid_with(at, "recall")
    assert len(frame) == 2
    assert list(frame["nprobes"]) == [1, 4]
    assert {"recall", "recall_std", "p50_ms", "p95_ms", "pareto"} <= set(frame.columns)
    assert len(at.get("plotly_chart")) == 1
    best = float(frame["recall"].max())
    assert 0.5 <= best < 1.0
    assert (frame["recall_low"] < frame["recall"]).all() and (frame["queries"] == 20).all()
    # the statistics columns are labelled for what they are
    (grid,) = [d for d in at.dataframe if "recall_std" in d.value.columns]
    labels = {name: c.get("label") for name, c in json.loads(grid.proto.columns).items()}
    assert labels["recall_std"] == "Recall SD"
    assert labels["recall_low"] == "95% interval low"
    # every measured column in words (the query parameters keep their API names)
    assert {labels[c] for c in ("recall", "p50_ms", "p95_ms", "brute_force", "pareto")} == {
        "Recall", "p50 (ms)", "p95 (ms)", "Brute force", "Pareto front",
    }  # fmt: skip
    assert "nprobes" not in labels  # no column config: its name

    # reachable target (judged on the interval's lower bound): the cheapest setting, with snippets
    at.slider(key=state.Search.TARGET).set_value(0.5).run()
    assert_no_exception(at)
    assert float(frame["recall_low"].max()) >= 0.5
    (ok,) = alerts(at, "success")
    assert ok.startswith("Cheapest setting reaching recall 0.50 with 95% confidence: nprobes=")
    assert "Copy as Python · share" in [e.label for e in at.expander]
    # unreachable target: a warning naming the best recall
    at.slider(key=state.Search.TARGET).set_value(1.0).run()
    assert alerts(at, "success") == []
    (warning,) = alerts(at, "warning")
    assert warning.startswith(
        f"No setting reaches recall 1.00 with 95% confidence (best {best:.3f}, its interval "
    )

    at.text_input(key="search.sweep.grid.nprobes").set_value("1, abc")
    submit(at, "search.sweep.form", "Run the sweep")
    assert alerts(at, "error") == [
        "Reading the grid failed. Invalid input: nprobes: 'abc' is not a whole number or none"
    ]


# --------------------------------------------------------------------------------------------
# shared links


def test_shared_link_fills_the_vector_and_recall_forms(make_app) -> None:
    at = search_page(make_app, tab="vector", column="vec", k="7", nprobes="3")
    assert at.session_state[state.Search.TABS] == TAB_VECTOR
    # applied without a word about the link (3 probes of the index's 2 partitions are warned of)
    assert not [w for w in alerts(at, "warning") if "link" in w]
    assert at.selectbox(key="search.vec.column").value == "vec"
    assert at.text_input(key="search.vec.k").value == "7"
    assert at.text_input(key="search.vec.nprobes").value == "3"
    at.segmented_control(key="search.vec.source").set_value(SOURCE_ROW).run()
    assert at.text_input(key="search.vec.nprobes").value == "3"  # kept
    submit(at, "search.vec.form", "Search")
    found = result(at, VECS, "vector")[0]
    assert (found.request.k, found.request.nprobes) == (7, 3)
    open_tab(at, TAB_RECALL)
    assert at.text_input(key="search.recall.k").value == "7"
    assert at.text_input(key="search.recall.nprobes").value == "3"


def test_shared_link_with_a_bad_value_warns(make_app) -> None:
    at = search_page(make_app, tab="vector", column="vec", k="7", nprobes="0")
    assert_no_exception(at)
    (warning,) = alerts(at, "warning")
    assert warning.startswith("The link's search setting was not applied:")
    assert "nprobes" in warning
    assert at.session_state[state.Search.TABS] == TAB_VECTOR
    assert at.text_input(key="search.vec.nprobes").value == ""
    assert at.text_input(key="search.vec.k").value == "10"
    # once per link: the next run does not warn again
    at.run()
    assert alerts(at, "warning") == []


# --------------------------------------------------------------------------------------------
# index parameters, maintenance


def test_requested_against_applied_parameters(make_app) -> None:
    at = search_page(make_app, tab="params")
    assert at.session_state[state.Search.TABS] == TAB_PARAMS
    frame = grid_with(at, "requested").set_index("parameter")
    assert set(frame["index"]) == {"vec_idx"}  # the FTS index is not a vector index
    parts = frame.loc["num_partitions"]
    assert (parts["requested"], parts["applied"], bool(parts["differs"])) == ("4", "2", True)
    assert "fewer partitions" in parts["note"]
    subs = frame.loc["num_sub_vectors"]
    assert (subs["requested"], subs["applied"], bool(subs["differs"])) == ("4", "4", False)
    (warning,) = alerts(at, "warning")
    assert warning.startswith("Applied differs from requested: vec_idx num_partitions 4 → 2")
    assert "Requested: what the console asked for" in texts(at)
    (grid,) = [d for d in at.dataframe if "requested" in d.value.columns]
    labels = [json.loads(grid.proto.columns)[c]["label"] for c in grid.value.columns]
    assert labels == ["Index", "Type", "Parameter", "Requested", "Applied", "Differs", "Note"]
    # maintenance on the local backend: both buttons, nothing lags
    assert "Maintenance" in texts(at)
    optimize = at.button(key="search.maint.optimize")
    assert optimize.label == "Optimize indexes" and not optimize.disabled
    assert optimize.proto.type == "secondary"  # not urged: nothing to add
    assert not at.button(key="search.maint.compact").disabled


def test_lagging_index_optimized_in_the_background(ui_env, make_app, monkeypatch) -> None:
    ns = backend.connect(str(ui_env))
    # the real optimize, held until the page has shown it running (a small table can finish
    # before the click's own rerun draws the panel, which then shows the outcome there)
    release = threading.Event()
    optimize_indexes = tuning_optimize.optimize_indexes

    def held(*args: Any, **kwargs: Any) -> Any:
        assert release.wait(timeout=60)
        return optimize_indexes(*args, **kwargs)

    monkeypatch.setattr(tuning_optimize, "optimize_indexes", held)
    append_rows(ns, list(VECS), search_rows(30, start=ROWS, seed=3))
    at = search_page(make_app, tab="params")
    lag = [w for w in alerts(at, "warning") if w.startswith("Index lags behind the data")]
    assert lag == [
        "Index lags behind the data: text_idx (30 unindexed rows), vec_idx (30 unindexed rows). "
        "Queries scan the unindexed rows without the index. Optimize the indexes to add the "
        "new rows."
    ]
    optimize = at.button(key="search.maint.optimize")
    assert optimize.proto.type == "primary"  # urged
    optimize.click().run()
    assert_no_exception(at)
    (job_id,) = at.session_state[state.Jobs.FOLLOWED]  # components.state.follow_job()
    deadline = time.monotonic() + 30  # the job writes its stage as it reaches it
    while (
        not (jobs.get(ns, job_id).stage or "").startswith("adding") and time.monotonic() < deadline
    ):
        time.sleep(0.05)
    at.run()
    (running,) = at.get("progress")
    assert plain(running.proto.text).startswith(
        "Optimize indexes: adding the unindexed rows to the indexes ("
    )
    assert alerts(at, "success") == []
    release.set()
    job = jobs.wait(ns, job_id, timeout=60)
    assert job.state == "succeeded", job.error
    at.run()  # the panel sees the finished task, flashes its outcome, reruns the page
    assert_no_exception(at)
    (done,) = alerts(at, "success")
    assert re.fullmatch(r"Optimize indexes: version 4 → 5 \(\d+\.\d s\)\.", done), done
    assert not [w for w in alerts(at, "warning") if w.startswith("Index lags")]
    assert plain(at.caption[0].value).startswith(f"{ROWS + 30} rows · version 5")
    at.run()  # shown once
    assert alerts(at, "success") == []


def test_read_only_disables_maintenance(make_app) -> None:
    at = search_page(make_app, tab="params", ro="true")
    assert at.toggle(key="ro").value is True
    assert "read-only" in texts(at)
    for name in ("optimize", "compact"):
        button = at.button(key=f"search.maint.{name}")
        assert button.disabled
        assert button.help == "Disabled: read-only connection"
    # reading still works
    vector_search(at, source=SOURCE_ROW, row=1)
    assert metrics(at)["Rows"] == "10"


def _bin(value: float) -> int:
    """The recall bin of ``value`` in exact arithmetic: [0, 0.1), ..., [0.9, 1.0]."""
    return min(int(Fraction(value).limit_denominator(10_000) * 10), 9)


def test_recall_histogram_bins_lie_inside_zero_one(make_app) -> None:
    """The recall histogram's bins cover exactly [0, 1] on an axis that ends at 1.0 (no bin
    past it), recall 1.0 in the last bin, every query counted in its own bin (3/10 in
    [0.3, 0.4), where floating point would put it in [0.2, 0.3))."""
    at = search_page(make_app, tab="recall")
    at.number_input(key="search.recall.sample").set_value(30)
    submit(at, "search.recall.form", "Measure recall")
    per_query = result(at, VECS, "recall").per_query
    assert len(set(per_query)) > 1  # PQ: recalls vary, several bins in use
    (chart,) = [c for c in at.get("plotly_chart") if "Recall per query" in c.proto.spec]
    spec = json.loads(chart.proto.spec)
    (trace,) = spec["data"]
    assert spec["layout"]["xaxis"]["range"] == [0.0, 1.0]
    lefts = [x - w / 2 for x, w in zip(trace["x"], [trace["width"]] * 10, strict=True)]
    rights = [x + trace["width"] / 2 for x in trace["x"]]
    assert min(lefts) >= 0.0 and max(rights) <= 1.0 + 1e-9
    expected = [0] * 10
    for value in per_query:
        expected[_bin(value)] += 1
    assert trace["y"] == expected
    assert trace["customdata"][-1] == "[0.9, 1.0]" and trace["customdata"][3] == "[0.3, 0.4)"


def test_recall_histogram_counts_edge_values() -> None:
    from backend.services.charts import recall_histogram

    values = [0.0, 0.3, 0.3, 0.7, 0.95, 1.0, 1.0]
    (trace,) = recall_histogram(values, 10).data
    assert list(trace.y) == [1, 0, 0, 2, 0, 0, 0, 1, 0, 3]
    assert sum(trace.y) == len(values)


# --------------------------------------------------------------------------------------------
# the index's metric: recall, sweep, exact search and plans on cosine and dot indexes


def metric_page(make_app, metric: str, tab: str):
    table_id = METRIC_TABLES[metric]
    return search_page(make_app, ns=table_id[0], table=table_id[1], tab=tab)


def numpy_recall(ns: Any, table_id: tuple[str, ...], metric: str, k: int, sample: int, **fields):
    """recall@k of lance's ANN answers (QueryTable without distance_type: the index's own
    metric) against numpy's exact neighbours under ``metric``, over the rows the console
    samples (``tuning.measure.sample_queries``, the same seed)."""
    data = varied_norm_rows(METRIC_ROWS, dim=DIM, seed=9).column("vec").combine_chunks()
    data = data.flatten().to_numpy().reshape(METRIC_ROWS, DIM)
    values = []
    for q in sample_queries(ns, table_id, "vec", sample, 0):
        request = QueryTableRequest.model_validate(
            {"id": list(table_id), "vector": {"single_vector": q.vector}, "vector_column": "vec",
             "k": k + 1, "columns": {"column_names": ["id"]}, **fields}
        )  # fmt: skip
        ids = [i for i in run_query(ns, request).column("id").to_pylist() if i != q.row_id]
        truth = set(metric_neighbours(data, q.row_id, k, metric))
        values.append(len(set(ids[:k]) & truth) / k)
    return statistics.fmean(values)


@pytest.mark.parametrize("metric", ["cosine", "dot"])
def test_recall_and_sweep_on_the_index_metric(ui_env, make_app, metric: str) -> None:
    """The Recall and Sweep tabs measure with the index's metric without being told: the
    figure the page shows matches numpy ground truth, and the page names the metric."""
    table_id = METRIC_TABLES[metric]
    at = metric_page(make_app, metric, "recall")
    distance = at.selectbox(key="search.recall.distance_type")
    assert distance.value == AUTO
    assert distance.format_func(AUTO) == f"the index's ({metric})"
    at.number_input(key="search.recall.sample").set_value(20)
    at.text_input(key="search.recall.nprobes").set_value("1")
    submit(at, "search.recall.form", "Measure recall")
    assert alerts(at, "error") == [] and alerts(at, "warning") == []
    found = result(at, table_id, "recall")
    assert (found.metric, found.index_metric, found.brute_force) == (metric, metric, None)
    assert f"distance {metric} (the index's)" in texts(at)
    shown = float(metrics(at)["recall@10"].split(" ± ")[0])
    ns = backend.connect(str(ui_env))
    expected = numpy_recall(ns, table_id, metric, 10, 20, nprobes=1)
    assert abs(shown - expected) <= 0.05, (shown, expected)
    # the check has teeth: measured against l2 neighbours the figure would be another
    assert abs(expected - numpy_recall(ns, table_id, "l2", 10, 20, nprobes=1)) > 0.05

    open_tab(at, TAB_SWEEP)
    assert at.selectbox(key="search.sweep.distance_type").value == AUTO
    at.number_input(key="search.sweep.sample").set_value(20)
    at.text_input(key="search.sweep.grid.nprobes").set_value("1, 2")
    at.text_input(key="search.sweep.grid.refine_factor").set_value("none")
    submit(at, "search.sweep.form", "Run the sweep")
    assert alerts(at, "error") == []
    frame = grid_with(at, "recall")
    assert frame["metric"].tolist() == [metric, metric]
    assert frame["brute_force"].tolist() == [False, False]
    assert f"distance {metric} (the index's)" in texts(at)
    for probes, recall in zip(frame["nprobes"], frame["recall"], strict=True):
        by_numpy = numpy_recall(ns, table_id, metric, 10, 20, nprobes=int(probes))
        assert abs(recall - by_numpy) <= 0.05, (probes, recall, by_numpy)
    assert frame.loc[0, "recall"] == pytest.approx(shown, abs=1e-3)  # the Recall tab's figure


def test_exact_search_and_plan_on_a_cosine_index(make_app) -> None:
    """'Bypass index' searches with the index's metric (cosine distances, numpy's); another
    distance chosen is flagged as brute force in the result and in its plan."""
    at = metric_page(make_app, "cosine", "vector")
    vector_search(at, source=SOURCE_ROW, row=7, bypass_vector_index=True)
    assert alerts(at, "warning") == []
    rows = grid_with(at, "_distance")
    data = varied_norm_rows(METRIC_ROWS, dim=DIM, seed=9).column("vec").combine_chunks()
    data = data.flatten().to_numpy().reshape(METRIC_ROWS, DIM)
    expected = metric_distances(data, data[7], "cosine")
    np.testing.assert_allclose(
        rows["_distance"].to_numpy(), expected[rows["id"].to_numpy()], rtol=1e-3, atol=1e-4
    )
    assert set(rows["id"]) == {7, *metric_neighbours(data, 7, 9, "cosine")}
    assert "distance cosine (the index's)" in texts(at)

    at.selectbox(key="search.vec.distance_type").set_value("l2")
    submit(at, "search.vec.form", "Search")
    found = result(at, METRIC_TABLES["cosine"], "vector")[0]
    assert found.request.distance_type == "l2"
    (warning,) = alerts(at, "warning")
    assert warning.startswith("Brute force, not the index: the query's metric (l2) is not")
    assert "incompatible with index metric" in warning
    rows = grid_with(at, "_distance")
    assert set(rows["id"]) == {7, *metric_neighbours(data, 7, 9, "l2")}

    open_tab(at, TAB_PLAN)
    at.button(key="search.plan.analyze").click().run()
    assert_no_exception(at)
    assert metrics(at)["Index used"] == "no"
    (warning,) = alerts(at, "warning")
    assert "incompatible with index metric" in warning


def _display_values(element: Any) -> pa.Table:
    """The cells a styled grid shows (its Styler's display values)."""
    data = element.proto.arrow_data.styler.display_values
    return pa.ipc.open_stream(data).read_all()


def test_plan_grid_has_no_none_cells(make_app) -> None:
    """Explain reports no times: those cells are empty, not "None" (so are missing rows and
    bytes in Analyze); the figures stay numbers."""
    at = search_page(make_app)
    vector_search(at, source=SOURCE_ROW, row=3)
    open_tab(at, TAB_PLAN)
    for button in ("search.plan.explain", "search.plan.analyze"):
        at.button(key=button).click().run()
        assert_no_exception(at)
        (grid,) = [d for d in at.dataframe if "step" in d.value.columns]
        shown = _display_values(grid).to_pandas()
        cells = [str(v) for c in ("ms", "rows", "bytes_read", "detail") for v in shown[c]]
        assert not [c for c in cells if c in ("None", "nan", "NaN", "<NA>")], cells
        assert pd.api.types.is_numeric_dtype(grid.value["ms"])
    assert any(v for v in shown["ms"])  # Analyze: times shown


def test_build_ab_measures_builds_with_the_index_metric(ui_env, make_app) -> None:
    """The Build A/B tab: a build without a distance takes the table's index metric (cosine
    here), shown per build; the editor's Distance column is read as text."""
    rows = pd.DataFrame(
        [
            {"index_type": "IVF_FLAT", "num_partitions": 2.0, "distance_type": None},
            {"index_type": "IVF_FLAT", "num_partitions": 2.0, "distance_type": "dot"},
        ]
    )
    assert ab_configs(rows) == [
        {"index_type": "IVF_FLAT", "num_partitions": 2},
        {"index_type": "IVF_FLAT", "num_partitions": 2, "distance_type": "dot"},
    ]
    at = metric_page(make_app, "cosine", "ab")
    assert "A build without a distance uses the metric of the table's own index" in texts(at)
    at.number_input(key="search.ab.rows").set_value(1000)
    at.number_input(key="search.ab.queries").set_value(5)
    submit(at, "search.ab.form", "Compare builds")
    ns = backend.connect(str(ui_env))
    (job,) = jobs.list_jobs(ns, METRIC_TABLES["cosine"], kinds=("build_ab",))  # a durable job
    assert jobs.wait(ns, job.id, timeout=120).state == jobs.SUCCEEDED
    at.run()
    assert_no_exception(at)
    frame = grid_with(at, "config")
    assert frame["metric"].tolist() == ["cosine"] * len(AB_DEFAULT)
    (grid,) = [d for d in at.dataframe if "config" in d.value.columns]
    drawn = displayed(grid)["size_bytes"].tolist()  # numbers, drawn in the one size form
    assert (
        drawn == [human_bytes(v) for v in frame["size_bytes"]] and frame["size_bytes"].gt(0).all()
    )
    assert not frame["brute_force"].any()
    assert frame["recall"].between(0.0, 1.0).all()


# --------------------------------------------------------------------------------------------
# query history: each search run kept per table, newest first, capped; "Re-apply"
# --------------------------------------------------------------------------------------------


def history_lines(at, kind: str) -> list[str]:
    label = HISTORY_LABEL[kind]
    boxes = [e for e in at.expander if e.label.startswith(label)]
    if not boxes:
        return []
    return [plain(c.value) for c in boxes[0].caption if re.match(r"\d+\. ", plain(c.value))]


def test_vector_history_and_reapply(make_app) -> None:
    import logging

    from streamlit.elements.lib import policies

    at = search_page(make_app)
    vector_search(at, row=5, k=7, nprobes=2, filter="id > 3")
    vector_search(at, row=9, k=4)
    assert history_lines(at, "vector") == [
        "1. row 9 on vec · k=4 · nprobes=2 · filter id > 3",
        "2. row 5 on vec · k=7 · nprobes=2 · filter id > 3",
    ]
    # one key per table and kind while the label counts the runs: an open list stays open
    # when a search runs
    box = state.panel_key(f"{state.Search.HISTORY_OPEN}.vector", VECS)
    assert at.get_by_key(box).label == f"{HISTORY_LABEL['vector']} (2)"
    runs = at.session_state[state.Search.HISTORY][VECS]
    assert [r.kind for r in runs] == ["vector", "vector"]
    assert runs[1].settings["search.vec.k"] == "7" and runs[1].settings["search.vec.row"] == "5"

    # "Re-apply" the older one: its settings are back in the form, before it is drawn,
    # without Streamlit's default-and-session-state warning
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger(policies.__name__)
    logger.addHandler(handler)
    policies._shown_default_value_warning = False
    try:
        at.button(key="search.history.vector.1").click().run()
        assert_no_exception(at)
    finally:
        logger.removeHandler(handler)
    assert not [r for r in records if "Session State API" in r.getMessage()]
    assert at.text_input(key="search.vec.row").value == "5"
    assert at.text_input(key="search.vec.k").value == "7"
    assert at.text_input(key="search.vec.nprobes").value == "2"
    assert at.text_input(key="search.vec.filter").value == "id > 3"
    submit(at, "search.vec.form", "Search")
    assert metrics(at)["Rows"] == "7"
    assert history_lines(at, "vector")[0] == "1. row 5 on vec · k=7 · nprobes=2 · filter id > 3"
    assert len(history_lines(at, "vector")) == 3
    assert at.get_by_key(box).label == f"{HISTORY_LABEL['vector']} (3)"


def test_history_is_capped_per_table_and_fts_reapplies(make_app) -> None:
    at = search_page(make_app)
    open_tab(at, TAB_FTS)
    for i in range(state.QUERY_HISTORY_CAP + 2):
        at.text_input(key="search.fts.text").set_value(f"dogs {i}")
        at.text_input(key="search.fts.k").set_value(str(3 if i == 0 else 5))
        submit(at, "search.fts.form", "Search")
    lines = history_lines(at, "fts")
    assert len(lines) == state.QUERY_HISTORY_CAP  # the oldest two are gone
    assert lines[0] == f"1. match 'dogs {state.QUERY_HISTORY_CAP + 1}' in text · k=5"
    assert lines[-1] == "20. match 'dogs 2' in text · k=5"
    assert history_lines(at, "vector") == []  # another kind: not listed under vector search
    at.button(key="search.history.fts.19").click().run()
    assert_no_exception(at)
    assert at.text_input(key="search.fts.text").value == "dogs 2"
    at.radio(key="search.fts.mode").set_value("Phrase")
    at.text_input(key="search.fts.k").set_value("2")
    submit(at, "search.fts.form", "Search")
    assert history_lines(at, "fts")[0] == "1. phrase 'dogs 2' in text · k=2"
    # per table: another table has its own (empty) history
    assert state.QUERY_HISTORY_CAP == 20
    assert set(at.session_state[state.Search.HISTORY]) == {VECS}


# --------------------------------------------------------------------------------------------
# numbers read as typed: refused out of range, nothing runs, the last result stays


def kept_ids(at) -> list[int]:
    return [int(i) for i in grid_with(at, "_distance")["id"]]


@pytest.mark.parametrize("typed", ["0", "-5", "100000", "99999999999999999999", "7.5"])
@pytest.mark.parametrize(
    ("field", "allowed"), [("k", "1 and 10,000"), ("nprobes", "1 and 100,000")]
)
def test_a_number_out_of_range_is_refused_and_the_last_result_stays(
    ui_env, make_app, field: str, allowed: str, typed: str
) -> None:
    at = search_page(make_app)
    at = vector_search(at, source=SOURCE_ROW, row=5, k=7)
    before = kept_ids(at)
    found = result(at, VECS, "vector")[0]
    # the rows shown are lance's own answer to that query, read without the page
    ns = backend.connect(str(ui_env))
    assert before == run_query(ns, found.request).column("id").to_pylist()
    if field == "nprobes" and typed == "100000":
        typed = "100001"  # nprobes goes up to 100,000
    at = vector_search(at, source=SOURCE_ROW, **{field: typed})
    (error,) = alerts(at, "error")
    assert error.startswith(f"{field} must be ") and f"between {allowed}" in error, error
    # nothing ran: the earlier search is still the result, shown as it was
    assert result(at, VECS, "vector")[0] is found
    assert metrics(at)["Rows"] == "7" and kept_ids(at) == before
    assert "the form above has not run" in texts(at)
    assert len(history_lines(at, "vector")) == 1
    # once fixed, the search runs with the value typed
    good = "3"
    at = vector_search(at, source=SOURCE_ROW, **{field: good})
    assert alerts(at, "error") == []
    assert getattr(result(at, VECS, "vector")[0].request, field) == 3


@pytest.mark.parametrize("typed", ["0", "-5", "100000"])
def test_full_text_k_out_of_range_is_refused(make_app, typed: str) -> None:
    at = open_tab(search_page(make_app), TAB_FTS)
    at.text_input(key="search.fts.text").set_value("Running dogs")
    submit(at, "search.fts.form", "Search")
    found = result(at, VECS, "fts")[0]
    assert metrics(at)["Matches shown"] == "10"
    at.text_input(key="search.fts.k").set_value(typed)
    submit(at, "search.fts.form", "Search")
    assert alerts(at, "error") == [f"k must be between 1 and 10,000, got {int(typed):,}"]
    assert result(at, VECS, "fts")[0] is found and metrics(at)["Matches shown"] == "10"


def test_recall_refuses_a_number_out_of_range(make_app) -> None:
    at = open_tab(search_page(make_app), TAB_RECALL)
    at.number_input(key="search.recall.sample").set_value(20)
    at.text_input(key="search.recall.k").set_value("0")
    submit(at, "search.recall.form", "Measure recall")
    assert alerts(at, "error") == [f"k must be between 1 and {MAX_K:,}, got 0"]
    assert result(at, VECS, "recall") is None  # nothing measured (not with k 10)


# --------------------------------------------------------------------------------------------
# a query by text: the snippets and the link reproduce it


def test_a_text_query_link_restores_the_text_and_reproduces_the_rows(make_app) -> None:
    from urllib.parse import parse_qsl, urlsplit

    qp = {"ns": "sales", "table": "emb", "tab": "vector"}
    at = make_app(PAGE, query_params=qp)
    at.text_input(key="search.vec.text").set_value("river mountain")
    submit(at, "search.vec.form", "Search")
    rows = kept_ids(at)
    assert result(at, EMB, "vector")[4] == "river mountain"
    code = [str(c.value) for c in at.code]
    assert any("= embed_text(table.properties, 'river mountain')" in c for c in code)
    (link,) = [c for c in code if "tab=vector" in c]
    params = dict(parse_qsl(urlsplit(link).query))
    assert params["text"] == "river mountain"

    # the link opened in a new session: the text source, the text, the same rows
    again = make_app(PAGE, query_params=params)
    assert_no_exception(again)
    assert again.segmented_control(key="search.vec.source").value == SOURCE_TEXT
    assert again.text_input(key="search.vec.text").value == "river mountain"
    submit(again, "search.vec.form", "Search")
    assert kept_ids(again) == rows
    # the same vector as the demo's embedding of the text, computed here
    expected = [float(x) for x in embedding.embed(["river mountain"])[0]]
    assert result(again, EMB, "vector")[0].request.vector.single_vector == expected


# --------------------------------------------------------------------------------------------
# nprobes beyond the index's partitions


def test_nprobes_beyond_the_partitions_is_warned_of_and_still_runs(ui_env, make_app) -> None:
    import lance
    from lance_namespace import DescribeTableRequest

    ns = backend.connect(str(ui_env))
    table_id = ["sales", "three"]
    ns.create_table(CreateTableRequest(id=table_id), ipc_stream_bytes(search_rows(600, dim=8)))
    ns.create_table_index(
        CreateTableIndexRequest(
            id=table_id, column="vec", index_type="IVF_FLAT", name="p3", num_partitions=3
        )
    )
    location = ns.describe_table(DescribeTableRequest(id=table_id)).location
    stats = lance.dataset(location).stats.index_stats("p3")
    assert [s["num_partitions"] for s in stats["indices"]] == [3]  # as built, read directly

    at = search_page(make_app, table="three")
    at = vector_search(at, source=SOURCE_ROW, row=5, nprobes=3)
    assert not [w for w in alerts(at, "warning") if "partitions" in w]
    at = vector_search(at, source=SOURCE_ROW, row=5, nprobes=8)
    (warning,) = [w for w in alerts(at, "warning") if "partitions" in w]
    assert warning.startswith("nprobes 8: the index has 3 IVF partitions")
    assert "lance probes at most 3 partitions" in warning
    found = result(at, table_id, "vector")[0]
    assert found.request.nprobes == 8 and metrics(at)["Rows"] == "10"  # the search ran
    # every partition probed: the exact neighbours
    exact = search_vector.vector_search(
        ns, table_id, found.request.vector.single_vector, column="vec", k=10,
        bypass_vector_index=True,
    )  # fmt: skip
    assert kept_ids(at) == [int(i) for i in exact.rows["id"]]


# --------------------------------------------------------------------------------------------
# Build A/B: the button is enabled as soon as the builds are done


def test_build_ab_button_enabled_by_the_run_that_sees_the_builds_done(
    ui_env, make_app, monkeypatch
) -> None:
    at = open_tab(search_page(make_app), TAB_AB)
    ns = backend.connect(str(ui_env))
    release = threading.Event()
    real_build = tuning.build_ab

    def held_build(*args: Any, **kwargs: Any) -> pd.DataFrame:
        release.wait(60)
        return real_build(*args, **kwargs)

    monkeypatch.setattr(tuning, "build_ab", held_build)
    params = {"column": "vec", "configs": [{"index_type": "IVF_FLAT", "num_partitions": 2}],
              "sample_rows": 300, "queries": 3, "k": 5}  # fmt: skip
    job = jobs.submit(ns, "build_ab", VECS, params)
    at.run()
    button = at.button(key="FormSubmitter:search.ab.form-Compare builds")
    assert button.disabled  # drawn while the builds run

    # the builds finish once the form is drawn (its button disabled), before the progress
    # panel looks: the run in which the panel sees them done must redraw the whole page
    real = build_ab_ui.render_ab_tasks

    def finish_first(*args: Any, **kwargs: Any) -> None:
        release.set()
        jobs.wait(ns, job.id, timeout=60)
        real(*args, **kwargs)

    monkeypatch.setattr(build_ab_ui, "render_ab_tasks", finish_first)
    at.run()
    assert_no_exception(at)
    assert jobs.get(ns, job.id).state == jobs.SUCCEEDED
    assert len(grid_with(at, "config")) == 1  # the comparison's outcome, drawn by that run
    assert not at.button(key="FormSubmitter:search.ab.form-Compare builds").disabled


def test_another_table_picked_reads_its_latest_not_the_version_in_the_url(make_app) -> None:
    """The version typed for one table is not carried to the next: ``?version=2`` of
    sales/orders, then sales/vecs picked: the version box is empty (the latest) and the URL
    names no version."""
    at = search_page(make_app, ns="sales", table="orders", version="2")
    assert at.number_input(key="version").value == 2
    at.selectbox(key=f"{state.Search.PICKER}.table").set_value("vecs").run()
    assert_no_exception(at)
    assert at.number_input(key="version").value is None
    assert "version" not in at.query_params


def sweep_result_page() -> None:
    """The sweep's result alone, on a hand-made frame: nprobes 1 and 4 both reach the target,
    and 4, which asks for more work, measured quicker."""
    from types import SimpleNamespace

    import pandas as pd
    import streamlit as st

    from components.tuning.sweep import render_sweep_result

    frame = pd.DataFrame(
        {
            "nprobes": [1, 4],
            "recall": [0.99, 0.99],
            "recall_std": [0.03, 0.03],
            "recall_low": [0.97, 0.97],
            "recall_high": [1.0, 1.0],
            "queries": [20, 20],
            "p50_ms": [11.98, 7.96],
            "p95_ms": [20.0, 12.0],
            "metric": ["l2", "l2"],
            "brute_force": [False, False],
        }
    )
    if st.session_state.get("drawn_among"):
        frame.attrs.update(version=4, drawn_among=(10_000_001, 13_489_334))
    info = SimpleNamespace(table_id=["sales", "vecs"], branch=None)
    render_sweep_result(info, frame, ["nprobes"], "vec", 10)


def test_a_sweep_drawn_among_the_first_rows_says_so(ui_env) -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(sweep_result_page, default_timeout=60)
    at.run()
    assert "drawn among" not in texts(at)
    at.session_state["drawn_among"] = True
    at.run()
    assert_no_exception(at)
    assert (
        "Each setting searched the same sampled rows, drawn among the first 10,000,001 of "
        "13,489,334 rows, at version 4."
    ) in texts(at)


def test_the_cheapest_setting_is_never_more_work_for_a_quicker_p50(ui_env) -> None:
    """Two settings reach the target; the one with more probes measured quicker (on the
    same queries, the measurement's spread): the fewer probes are named the cheapest, and the
    message says why the quicker one is not."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(sweep_result_page, default_timeout=60)
    at.session_state[state.Search.TARGET] = 0.5
    at.run()
    assert_no_exception(at)
    (ok,) = alerts(at, "success")
    assert ok.startswith("Cheapest setting reaching recall 0.50 with 95% confidence: nprobes=1 ")
    assert "p50 12.0 ms" in ok
    assert ok.endswith(
        "nprobes=4 measured quicker (p50 8.0 ms) but asks for more work on the same queries: "
        "that difference is the measurement's spread."
    )


def drawn_among_page() -> None:
    """A recall result whose queries were drawn among the first rows of a longer table."""
    from backend.services.tuning.measure import RecallResult
    from components.tuning.recall import render_recall_result

    render_recall_result(
        RecallResult(
            5, [1.0, 0.8], [1.0, 1.2], [3.0, 3.1], {"version": 4, "nprobes": 8},
            metric="l2", index_metric="l2", drawn_among=(10_000_001, 13_489_334),
        )
    )  # fmt: skip


def test_a_sample_drawn_among_the_first_rows_says_so() -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(drawn_among_page, default_timeout=30)
    at.run()
    assert_no_exception(at)
    assert (
        "2 sampled rows (drawn among the first 10,000,001 of 13,489,334 rows), each searched "
        "without itself, at version 4; settings: nprobes=8"
    ) in texts(at)


@pytest.mark.parametrize("linked", ["١", "1.9", "inf", "1e999", "99999", "0"])
def test_a_linked_version_that_is_no_version_reads_the_latest_and_says_so(
    make_app, linked: str
) -> None:
    """The version box parsed ``?version=`` with Python's ``float``: "١" (Arabic-Indic one)
    and "1.9" showed version 1's rows with no word, "inf" raised ``OverflowError``, and
    "99999" or "0" left the link silently. The link's version is read by the one rule now:
    the latest is read, and a warning says why."""
    at = search_page(make_app, ns="sales", table="orders", version=linked)
    assert at.number_input(key="version").value is None
    assert "version" not in at.query_params
    said = " ".join(alerts(at, "warning"))
    assert f"{linked} is not a version number" in said or f"Version {linked} does not exist" in (
        said
    ), said
    assert "latest version" in texts(at)  # the preview reads the latest


def test_a_linked_version_with_spaces_reads_as_its_number(make_app) -> None:
    at = search_page(make_app, ns="sales", table="orders", version=" 2 ")
    assert at.number_input(key="version").value == 2
    assert at.query_params["version"] in ("2", ["2"])
    assert not alerts(at, "warning")


def test_a_declared_table_is_said_to_be_declared_only_not_an_engine_error(make_app) -> None:
    """Search & tune and Indexes showed lance's "Table not found: Failed to open table at
    'file:///…'" for a declared-only table, which the other pages call declared only."""
    for page in (PAGE, "indexes"):
        at = make_app(page, query_params={"ns": "sales", "table": "pending"})
        assert_no_exception(at)
        assert not alerts(at, "error"), alerts(at, "error")
        assert any("sales › pending is declared only" in i for i in alerts(at, "info"))


@pytest.mark.parametrize("value", ["٣", "1_0", " 7 ", "+2"])
def test_a_shared_setting_takes_ascii_digits_only(value: str) -> None:
    from lance_namespace.errors import InvalidInputError

    from components.search.share_url import parse_share_params

    with pytest.raises(InvalidInputError, match="must be a whole number"):
        parse_share_params({"column": "vec", "k": value})
