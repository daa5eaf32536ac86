"""AppTest of the Indexes page on a real local namespace (``tests/ui/conftest.py``).

Each test adds a small table ``sales$docs`` (300 rows: int, text, tags, flag, 16-d float vector,
8-byte binary vector) to its private copy of the sample namespace, then drives the page.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import streamlit as st
from lance_namespace import (
    CreateTableRequest,
    DescribeTableIndexStatsRequest,
    DescribeTableRequest,
    ListTableIndicesRequest,
)

import backend
from backend.local.job_store import open_job_store
from backend.redaction import REDACTED
from backend.rules import index_rules as rules
from backend.services import build_jobs
from backend.services import index_overview as ixs
from backend.services import jobs as job_service
from backend.text import human_bytes
from components import state
from tests.support import ipc_stream_bytes, local_path
from tests.ui.conftest import alerts, assert_no_exception, button, displayed, plain, texts

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


@pytest.fixture
def docs_ns(ui_env: Path):
    ns = backend.connect(str(ui_env))
    ns.create_table(CreateTableRequest(id=DOCS), ipc_stream_bytes(docs_table()))
    return ns


def create_index(ns, column: str, index_type: str, name: str, **kw) -> None:
    ixs.create_index(ns, rules.build_index_request(DOCS, column, index_type, name=name, **kw))


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


def jobs(at) -> list[str]:
    """The jobs the page's session started (or saw running)."""
    return list(at.session_state.get(state.Jobs.FOLLOWED, []))


def page_ns():
    """The namespace the page is connected to (its jobs are recorded there)."""
    return backend.connect(os.environ["LANCE_CONSOLE_TARGET"])


def wait_build(job_id: str) -> build_jobs.BuildJob:
    return build_jobs.from_job(job_service.wait(page_ns(), job_id, timeout=120))


def wait_for_builds(at) -> None:
    for job_id in jobs(at):
        job_service.wait(page_ns(), job_id, timeout=120)
    at.run()  # the build panel notices, clears caches, reruns the page
    assert_no_exception(at)


def open_tab(at, label: str):
    """Open a tab of the page's stateful ``st.tabs`` (as a click on it would) and rerun."""
    at.session_state[state.Indexes.TABS] = label
    at.run()
    assert_no_exception(at)
    return at


def overview(at, *, shown: bool = False):
    """The index table on the page (an empty frame when the table has no index); ``shown``:
    the text of its cells rather than the data behind them."""
    for frame in at.dataframe:
        value = frame.value
        if "indexed_rows" in value.columns and "status" in value.columns:
            return displayed(frame) if shown else value
    return pd.DataFrame(columns=["name"])


def details_caption(at) -> str:
    (caption,) = [plain(c.value) for c in at.caption if plain(c.value).startswith("UUID ")]
    return caption


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

    assert offered("vec") == list(rules.VECTOR_INDEX_TYPES)
    assert offered("bits") == ["IVF_FLAT", "IVF_HNSW_FLAT"]
    # FTS and INVERTED are one type: offered once, as FTS
    assert offered("text") == ["FTS", "BTREE", "BITMAP", "NGRAM", "ZONEMAP", "BLOOMFILTER"]
    assert offered("tags") == ["LABEL_LIST", "FTS"]
    assert offered("flag") == ["BITMAP", "BTREE", "ZONEMAP"]
    assert offered("id") == ["BTREE", "BITMAP", "ZONEMAP", "BLOOMFILTER"]
    # binary vectors: hamming is the only distance
    at.selectbox(key="indexes.create.column").set_value("bits").run()
    assert at.selectbox(key="indexes.create.distance.binary_vector").options == ["hamming"]


def test_the_create_panel_counts_rows_another_writer_adds_at_once(
    docs_ns, make_app, monkeypatch
) -> None:
    """The create panel's row count (its checks and hints use it) after another process
    appends rows (lance itself): the next run counts them (the count is kept while the
    table's versions do not change, read again as soon as one is committed; it was kept
    30 s whatever happened). Reruns without a commit count nothing again."""
    import lance

    from backend.local import namespace as local
    from backend.local.namespace import LocalNamespace

    monkeypatch.setattr(local, "STAMP_SETTLE_NS", 0)  # a commit's stamp at once (RAM disk)
    counts: list[object] = []
    real = LocalNamespace.count_table_rows
    at = choose(make_app("indexes", query_params=QP), "vec", "IVF_PQ")
    assert f"For {ROWS} rows of dimension {DIM}" in texts(at)
    monkeypatch.setattr(
        LocalNamespace, "count_table_rows", lambda self, r: counts.append(r) or real(self, r)
    )
    at.run()
    at.run()
    assert counts == []  # nothing committed: the count is kept
    location = docs_ns.describe_table(DescribeTableRequest(id=DOCS)).location
    lance.write_dataset(docs_table(20, start=ROWS), location, mode="append")
    at.run()
    assert_no_exception(at)
    assert f"For {ROWS + 20} rows of dimension {DIM}" in texts(at)
    assert lance.dataset(location).count_rows() == ROWS + 20
    assert len(counts) == 1


def test_fields_follow_the_kind(docs_ns, make_app) -> None:
    at = make_app("indexes", query_params=QP)
    labels = lambda kind: {w.label for w in getattr(at, kind)}  # noqa: E731

    choose(at, "vec", "IVF_HNSW_PQ")
    numbers = labels("text_input")
    assert {"num_partitions", "num_sub_vectors", "num_bits", "m", "ef_construction"} <= numbers
    assert "Base tokenizer" not in {s.label for s in at.selectbox}
    sub = at.text_input(key="indexes.create.p.IVF_HNSW_PQ.num_sub_vectors")
    assert sub.value == "" and "default: 2" in sub.proto.placeholder  # 16 / 8

    choose(at, "vec", "IVF_FLAT")
    numbers = labels("text_input")
    assert "num_partitions" in numbers and "num_sub_vectors" not in numbers and "m" not in numbers
    assert (
        "default: 1"
        in at.text_input(key="indexes.create.p.IVF_FLAT.num_partitions").proto.placeholder
    )

    choose(at, "text", "FTS")
    assert {"Base tokenizer", "Language"} <= {s.label for s in at.selectbox}
    assert {"Lower case", "Stemming", "Stop words", "ASCII folding", "Positions"} <= labels(
        "checkbox"
    )
    assert not any(n.startswith("num_") for n in labels("text_input"))

    choose(at, "id", "BTREE")
    assert "Base tokenizer" not in {s.label for s in at.selectbox}
    assert not any(n.startswith("num_") for n in labels("text_input"))
    assert "No build parameters" in texts(at)


def test_tokenizer_preview_is_live(docs_ns, make_app) -> None:
    at = choose(make_app("indexes", query_params=QP), "text", "FTS")
    at.text_input(key=state.Indexes.PREVIEW_TEXT).set_value("The Running Dogs of Café").run()
    assert "`run` `dog` `cafe`" in texts(at)
    at.checkbox(key="indexes.create.fts.simple.stem").uncheck().run()
    assert "`running` `dogs` `cafe`" in texts(at)
    at.checkbox(key="indexes.create.fts.simple.ascii_folding").uncheck().run()
    assert "`running` `dogs` `café`" in texts(at)
    at.selectbox(key="indexes.create.fts.base").set_value("raw").run()
    # options reset to that tokenizer's defaults (ascii folding on): one token, folded
    assert "`the running dogs of cafe`" in texts(at)
    assert "1 token;" in texts(at)  # not "1 tokens"


def test_invalid_params_rejected_nothing_created(docs_ns, make_app) -> None:
    at = choose(make_app("indexes", query_params=QP), "vec", "IVF_PQ")
    at.text_input(key="indexes.create.p.IVF_PQ.num_sub_vectors").set_value("5").run()
    at.text_input(key="indexes.create.p.IVF_PQ.num_partitions").set_value(str(ROWS + 1)).run()
    create_button(at).click().run()
    assert_no_exception(at)
    (errors,) = alerts(at, "error")  # every problem, in one box
    assert errors.startswith("Not created. Fix these first:")
    assert "must divide the dimension (16)" in errors
    assert f"exceeds the table's rows ({ROWS})" in errors
    assert jobs(at) == []
    assert listed(docs_ns) == {}

    # a bad index name is refused too
    choose(at, "id", "BTREE")
    at.text_input(key="indexes.create.form0.name").set_value("bad name!")
    create_button(at).click().run()
    assert "The index name 'bad name!' is not valid" in " ".join(alerts(at, "error"))
    assert listed(docs_ns) == {}


@pytest.mark.parametrize(
    ("field", "typed", "said"),
    [
        ("num_partitions", "99999999999999999999", "got 99,999,999,999,999,999,999"),
        ("num_partitions", "0", "got 0"),
        ("num_partitions", "-5", "got -5"),
        ("num_sub_vectors", "two", "got 'two'"),
    ],
)
def test_a_build_parameter_out_of_range_is_refused_inline(
    docs_ns, make_app, field: str, typed: str, said: str
) -> None:
    at = choose(make_app("indexes", query_params=QP), "vec", "IVF_PQ")
    at.text_input(key=f"indexes.create.p.IVF_PQ.{field}").set_value(typed).run()
    assert_no_exception(at)
    high = rules.param_range(field)[1]
    (inline,) = alerts(at, "error")  # under the field, as soon as it is typed
    assert inline.startswith(f"{field} must be ") and f"between 1 and {high:,}" in inline
    assert said in inline
    create_button(at).click().run()
    assert any(e.startswith("Not created: 1 number above") for e in alerts(at, "error"))
    assert jobs(at) == []  # nothing built (not with the default either)
    assert listed(docs_ns) == {}


def test_more_partitions_than_rows_is_refused_not_defaulted(docs_ns, make_app) -> None:
    """100000 is a whole number in range: the request's own rule refuses it for 300 rows."""
    at = choose(make_app("indexes", query_params=QP), "vec", "IVF_FLAT")
    at.text_input(key="indexes.create.p.IVF_FLAT.num_partitions").set_value("100000").run()
    assert alerts(at, "error") == []
    create_button(at).click().run()
    (error,) = alerts(at, "error")
    assert f"num_partitions (100000) exceeds the table's rows ({ROWS})" in error
    assert jobs(at) == [] and listed(docs_ns) == {}


def test_max_token_length_out_of_range_is_refused(docs_ns, make_app) -> None:
    at = choose(make_app("indexes", query_params=QP), "text", "FTS")
    at.text_input(key="indexes.create.fts.max_token_length").set_value("0").run()
    high = rules.param_range("max_token_length")[1]
    assert alerts(at, "error") == [f"max_token_length must be between 1 and {high:,}, got 0"]
    create_button(at).click().run()
    assert jobs(at) == [] and listed(docs_ns) == {}


def test_fts_index_with_options_created_and_listed(docs_ns, make_app) -> None:
    at = choose(make_app("indexes", query_params=QP), "text", "FTS")
    at.checkbox(key="indexes.create.fts.simple.stem").uncheck()
    at.checkbox(key="indexes.create.fts.simple.with_position").check()
    at.selectbox(key="indexes.create.fts.language").set_value("French")
    at.text_input(key="indexes.create.fts.max_token_length").set_value("12")
    at.text_input(key="indexes.create.form0.name").set_value("ft")
    create_button(at).click().run()
    assert_no_exception(at)
    # "building" until the build is seen to finish (a fast build may already be done)
    said = alerts(at, "info") + alerts(at, "success")
    assert any(
        m.startswith(("Building FTS index ft in the background.", "Index ft built")) for m in said
    )
    assert "**ft** (FTS on text)" in texts(at)  # the build panel
    wait_for_builds(at)
    said += alerts(at, "success")  # the outcome is shown once, whenever the panel sees it
    row = overview(at).set_index("name").loc["ft"]
    assert row["type"] == "FTS" and int(row["indexed_rows"]) == ROWS
    details = json.loads(listed(docs_ns)["ft"].index_details)
    assert details["stem"] is False and details["with_position"] is True
    assert details["language"] == "French" and details["max_token_length"] == 12
    # the index build's transaction is in the session's history
    assert any(h["source"] == "create index ft" for h in at.session_state[state.Txn.HISTORY])
    assert sum(m.startswith("Index ft built in") for m in said) == 1


def test_fts_details_show_options_unmasked(docs_ns, make_app) -> None:
    create_index(
        docs_ns,
        "text",
        "FTS",
        "ft",
        params={"base_tokenizer": "whitespace", "max_token_length": 12},
    )
    at = make_app("indexes", query_params={**QP, "index": "ft"})
    assert_no_exception(at)
    assert at.session_state[state.Indexes.TABS] == "Selected index"  # the deep link opens it
    assert "distance" not in details_caption(at)
    options = next(d.value for d in at.dataframe if list(d.value.columns) == ["option", "value"])
    shown = dict(zip(options["option"], options["value"], strict=True))
    assert shown["base_tokenizer"] == "whitespace"
    assert shown["max_token_length"] == "12"
    assert not at.json  # the JSON viewer is built once "Index details" is opened
    at.session_state["indexes.selected.details.open"] = True
    at.run()
    (details,) = [j.value for j in at.json if "max_token_length" in str(j.value)]
    details = json.loads(details) if isinstance(details, str) else details
    assert details["max_token_length"] == 12 and details["base_tokenizer"] == "whitespace"
    assert REDACTED not in json.dumps(details)


def test_details_caption_has_distance_only_for_vector_indexes(docs_ns, make_app) -> None:
    create_index(docs_ns, "id", "BTREE", "by_id")
    create_index(
        docs_ns, "vec", "IVF_FLAT", "v", distance_type="cosine", params={"num_partitions": 2}
    )
    at = make_app("indexes", query_params={**QP, "index": "by_id"})
    assert_no_exception(at)
    caption = details_caption(at)
    assert "columns id" in caption and "distance" not in caption
    grid = overview(at, shown=True).set_index("name")
    assert grid.loc["by_id", "distance_type"] == "—" and grid.loc["v", "distance_type"] == "cosine"
    at.selectbox(key="index").set_value("v").run()
    assert "distance cosine" in details_caption(at)
    assert "distance nan" not in texts(at).lower()


def test_a_second_vector_index_is_warned_and_starts_with_the_column_metric(
    docs_ns, make_app
) -> None:
    # no vector index yet: no warning, lance's first fitting distance
    at = choose(make_app("indexes", query_params=QP), "vec", "IVF_FLAT")
    assert not [w for w in alerts(at, "warning") if "already has a vector index" in w]
    assert at.selectbox(key="indexes.create.distance.vector").value == "l2"

    create_index(
        docs_ns, "vec", "IVF_FLAT", "v_dot", distance_type="dot", params={"num_partitions": 2}
    )
    st.cache_data.clear()  # built outside the page: its cached listing is older
    at = choose(make_app("indexes", query_params=QP), "vec", "IVF_PQ")
    (warning,) = [w for w in alerts(at, "warning") if "already has a vector index" in w]
    assert "vec already has a vector index: v_dot (IVF_FLAT, dot)" in warning
    assert "a query cannot name the index" in warning
    # the distance first offered is the existing index's metric
    (distance,) = [s for s in at.selectbox if plain(s.label) == "Distance type"]
    assert distance.value == "dot"
    # another column (no vector index on it) has neither
    assert rules.default_distance(pa.list_(pa.float32(), DIM)) == "l2"
    assert rules.default_distance(pa.list_(pa.float32(), DIM), ["cosine"]) == "cosine"
    assert rules.default_distance(pa.list_(pa.uint8(), DIM), ["cosine"]) == "hamming"


def test_vector_index_built_with_progress(docs_ns, make_app) -> None:
    at = choose(make_app("indexes", query_params=QP), "vec", "IVF_FLAT")
    at.selectbox(key="indexes.create.distance.vector").set_value("cosine")
    at.text_input(key="indexes.create.p.IVF_FLAT.num_partitions").set_value("2")
    at.text_input(key="indexes.create.form0.name").set_value("vflat")
    create_button(at).click().run()
    assert_no_exception(at)
    (job_id,) = jobs(at)
    job = wait_build(job_id)
    assert job.status == "succeeded" and job.mode == "events" and job.events
    wait_for_builds(at)
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


def test_build_panel_shows_each_stage_lance_reports(docs_ns, ui_env, tmp_path, make_app) -> None:
    """A running IVF_PQ build's panel says the stage lance is in, which stage it is of those
    seen so far and how far within it; a stage without a total is running (no bar at 0 %).
    The events are lance's own, captured from a build of a copy of the table, fed to a job
    of the page one by one: the figure shown moves with each event."""
    import shutil

    import lance

    location = docs_ns.describe_table(DescribeTableRequest(id=DOCS)).location
    copy = tmp_path / "copy.lance"
    shutil.copytree(local_path(location), copy)
    events: list[dict] = []

    def capture(e) -> None:
        events.append({"event": e.event, "stage": e.stage, "completed": e.completed,
                       "total": e.total, "unit": e.unit})  # fmt: skip

    lance.dataset(str(copy)).create_index(
        "vec", "IVF_PQ", num_partitions=1, num_sub_vectors=4, progress_callback=capture
    )
    # a build another console runs (another host, a fresh heartbeat), its record written as
    # the job's heartbeat writes it, event after event
    store = open_job_store(docs_ns)
    job = build_jobs.BuildJob(
        task_id=f"stages-{tmp_path.name}", label="index build pq", table_id=tuple(DOCS),
        index_name="pq", index_type="IVF_PQ", column="vec",
    )  # fmt: skip
    build = build_jobs.BuildRun(job)

    def write_record() -> None:
        now = build.get()
        store.put(
            job.job_id,
            {
                "kind": "create_index", "label": "index build pq", "table_id": DOCS,
                "params": {"column": "vec", "index_type": "IVF_PQ", "name": "pq"},
                "state": "running", "who": "someone@example.com", "created_at": time.time(),
                "heartbeat_at": time.time(), "host": "elsewhere.example", "pid": 1,
                "stage": now.stage, "fraction": now.fraction,
                "details": build_jobs.job_details(now), "cancellable": True,
            },
        )  # fmt: skip

    write_record()
    try:
        at = make_app("indexes", query_params=QP)
        assert "Starting: lance has reported no stage yet" in texts(at)
        assert "by someone@example.com" in texts(at)
        stages: list[str] = []
        shown = []
        labels: list[str] = []
        for e in events:
            build._record(e)
            write_record()
            stages = list(dict.fromkeys([*stages, e["stage"]]))
            at.run()
            assert_no_exception(at)
            head = f"Stage {stages.index(e['stage']) + 1} of {len(stages)} seen so far: "
            bars = [(p.value, plain(p.text)) for p in at.get("progress")]
            if e["event"] == "complete":
                assert bars == [(100, head + f"{e['stage']} - done")]
            elif e["total"]:
                percent = round(100 * e["completed"] / e["total"])
                unit = f"{e['total']:,} {e['unit']}".strip()
                text = f"{e['completed']:,} of {unit} ({percent}%)"
                assert bars == [(percent, head + f"{e['stage']} - {text}")]
            else:  # no total: running, no bar
                assert bars == []
                (line,) = [t for t in texts(at).splitlines() if head in t]
                assert f"{e['stage']} - running" in line
            shown.append(bars)
            # the events list keeps one key while its label counts them: an open list stays
            # open as events come in
            labels.append(at.get_by_key(f"indexes.jobs.{job.job_id}.events.open").label)
        assert len({str(b) for b in shown}) > len(stages)  # the figure moved within stages
        assert labels[-1] == f"Progress events ({len(events)})" and len(set(labels)) > 2
        assert {"train_ivf", "train_quantizer", "shuffle", "merge_partitions"} <= set(stages)
    finally:
        store.delete(job.job_id)


def test_build_flags_parameters_the_server_changed(docs_ns, make_app, monkeypatch) -> None:
    """pylance's REST server ignores vector build parameters: the build asked for
    num_sub_vectors 8 and the server applied its own; the Indexes page says so where the
    build finishes."""
    from backend.services.index_overview import index_details_dict
    from tests.conftest import RestServer

    server = RestServer(Path(docs_ns.local_path))
    try:
        monkeypatch.setenv("LANCE_CONSOLE_TARGET", server.url)
        at = choose(make_app("indexes", query_params=QP), "vec", "IVF_PQ")
        at.text_input(key="indexes.create.p.IVF_PQ.num_partitions").set_value("2")
        at.text_input(key="indexes.create.p.IVF_PQ.num_sub_vectors").set_value("8")
        at.text_input(key="indexes.create.form0.name").set_value("vpq")
        create_button(at).click().run()
        assert_no_exception(at)
        (job_id,) = jobs(at)
        assert wait_build(job_id).status == "succeeded"
        # what the server applied, read independently from its index listing
        rest = backend.connect(server.url)
        listing = rest.list_table_indices(ListTableIndicesRequest(id=DOCS)).indexes
        details = index_details_dict(
            next(i for i in listing if i.index_name == "vpq").index_details
        )
        applied = details["compression"]["num_sub_vectors"]
        assert applied != 8
        wait_for_builds(at)
        (warning,) = [w for w in alerts(at, "warning") if w.startswith("Index vpq built in")]
        assert (
            f"The backend applied a parameter otherwise than requested: num_sub_vectors 8 "
            f"requested, {applied} applied (the server did not apply the parameter)."
        ) in warning
        assert not [s for s in alerts(at, "success") if "vpq" in s]
    finally:
        server.stop()


def test_drop_needs_typed_confirmation(docs_ns, make_app) -> None:
    create_index(docs_ns, "id", "BTREE", "by_id")
    create_index(docs_ns, "flag", "BITMAP", "by_flag")
    at = make_app("indexes", query_params={**QP, "index": "by_flag"})
    assert_no_exception(at)
    assert at.selectbox(key="index").value == "by_flag"
    confirm = next(t for t in at.text_input if t.key and t.key.endswith(".by_flag.confirm"))
    confirm.set_value("by_id")
    button(at, "Drop index").click().run()
    assert alerts(at, "error") == ["Type by_flag exactly to confirm."]
    assert set(listed(docs_ns)) == {"by_id", "by_flag"}
    confirm = next(t for t in at.text_input if t.key and t.key.endswith(".by_flag.confirm"))
    confirm.set_value("by_flag")
    button(at, "Drop index").click().run()
    assert_no_exception(at)
    assert set(listed(docs_ns)) == {"by_id"}
    assert alerts(at, "success") == ["Index by_flag dropped."]
    assert list(overview(at)["name"]) == ["by_id"]


def test_tabs_keep_their_place_and_picks_stick(docs_ns, make_app) -> None:
    create_index(docs_ns, "id", "BTREE", "by_id")
    create_index(docs_ns, "flag", "BITMAP", "by_flag")
    at = make_app("indexes", query_params=QP)
    assert at.session_state[state.Indexes.TABS] == "Create an index"  # the default tab
    open_tab(at, "Selected index")
    picker = at.selectbox(key="index")
    assert picker.proto.query_param_key == "index"  # bound to ?index=
    first = picker.value
    second = next(n for n in picker.options if n != first)
    for name in (second, first, second):
        at.selectbox(key="index").set_value(name).run()
        assert_no_exception(at)
        assert at.selectbox(key="index").value == name
        assert f"Drop index **{name}**" in texts(at)
    # a rerun keeps the open tab (it does not fall back to the default)
    at.run()
    assert at.session_state[state.Indexes.TABS] == "Selected index"
    # only the open tab is drawn; what was picked in a tab is there again when it reopens
    assert not [s for s in at.selectbox if s.key == "indexes.create.column"]
    open_tab(at, "Create an index")
    assert not [s for s in at.selectbox if s.key == "index"]
    choose(at, "text", "FTS")
    at.checkbox(key="indexes.create.fts.simple.stem").uncheck().run()
    open_tab(at, "Selected index")
    assert at.selectbox(key="index").value == second
    open_tab(at, "Create an index")
    assert at.selectbox(key="indexes.create.column").value == "text"
    assert at.selectbox(key="indexes.create.type.text").value == "FTS"
    assert at.checkbox(key="indexes.create.fts.simple.stem").value is False


def test_lag_warning_and_history(docs_ns, ui_env, make_app) -> None:
    import lance

    create_index(docs_ns, "id", "BTREE", "by_id")
    create_index(docs_ns, "flag", "BITMAP", "by_flag")
    location = docs_ns.describe_table(DescribeTableRequest(id=DOCS)).location
    lance.write_dataset(docs_table(20, start=ROWS), location, mode="append")
    lance.write_dataset(docs_table(1, start=ROWS + 20), location, mode="append")
    at = make_app("indexes", query_params=QP)
    assert_no_exception(at)
    (warning,) = alerts(at, "warning")
    assert "lags behind the data" in warning
    assert "by_id (21 unindexed rows)" in warning and "by_flag (21 unindexed rows)" in warning
    assert "optimize" in warning.lower()
    assert len(at.get("plotly_chart")) == 0  # statistics are computed only when opened
    open_tab(at, "Statistics")
    assert len(at.get("plotly_chart")) >= 3  # coverage, size, segments, history


def plotly_figures(at) -> dict[str, dict]:
    """The page's plotly charts as drawn: title -> figure spec."""
    figures = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    return {f["layout"]["title"]["text"]: f for f in figures}


def test_an_index_made_with_lance_is_in_the_table_and_the_charts(docs_ns, make_app) -> None:
    """An index created with lance directly while the page is open is listed in the index
    table at the next run, as lance's describe_indices lists it, and the charts of the same
    page show the very same indexes."""
    import lance

    create_index(docs_ns, "id", "BTREE", "by_id")
    at = make_app("indexes", query_params=QP)
    assert list(overview(at)["name"]) == ["by_id"]
    location = docs_ns.describe_table(DescribeTableRequest(id=DOCS)).location
    lance.dataset(location).create_scalar_index("flag", "BITMAP", name="ext_flag")
    ds = lance.dataset(location)
    described = {ix.name: ix.num_rows_indexed for ix in ds.describe_indices()}
    assert set(described) == {"by_id", "ext_flag"}
    at.run()
    assert_no_exception(at)
    shown = overview(at).set_index("name")
    assert set(shown.index) == set(described)
    assert {n: int(shown.loc[n, "indexed_rows"]) for n in described} == described
    # row counts drawn as every grid draws them (1,035, not 1035)
    (grid,) = [d for d in at.dataframe if "indexed_rows" in d.value.columns]
    config = json.loads(grid.proto.columns)
    formats = {config[c]["type_config"]["format"] for c in ("indexed_rows", "unindexed_rows")}
    assert formats == {"localized"}
    # sizes: numbers (sorted as numbers) drawn in the one size form, as the page's text says them
    sizes = grid.value.set_index("name")["size_bytes"]
    assert sizes.notna().all() and pd.api.types.is_numeric_dtype(sizes)
    drawn = displayed(grid).set_index("name")["size_bytes"]
    assert {n: drawn[n] for n in described} == {n: human_bytes(sizes[n]) for n in described}
    open_tab(at, "Statistics")
    figures = plotly_figures(at)
    assert set(figures["Coverage: indexed vs unindexed rows"]["data"][0]["y"]) == set(described)
    history = figures["Coverage across versions"]["data"]
    at_latest = {t["name"] for t in history if t["x"][-1] == ds.version and t["y"][-1] is not None}
    assert at_latest == set(described)
    assert max(x for t in history for x in t["x"]) == ds.version


def test_one_unindexed_row_is_singular(docs_ns, ui_env, make_app) -> None:
    import lance

    create_index(docs_ns, "id", "BTREE", "by_id")
    location = docs_ns.describe_table(DescribeTableRequest(id=DOCS)).location
    lance.write_dataset(docs_table(1, start=ROWS), location, mode="append")
    at = make_app("indexes", query_params=QP)
    (warning,) = alerts(at, "warning")
    assert "by_id (1 unindexed row)" in warning


def test_read_only_disables_writes(docs_ns, make_app) -> None:
    create_index(docs_ns, "id", "BTREE", "by_id")
    at = make_app("indexes", query_params={**QP, "ro": "true", "index": "by_id"})
    assert_no_exception(at)
    assert "Read-only connection" in texts(at)
    assert button(at, "Drop index").disabled  # the ?index= link opened "Selected index"
    open_tab(at, "Create an index")
    assert create_button(at).disabled


# --------------------------------------------------------------------------- chart builders


def test_chart_figures() -> None:
    from backend.services import charts

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
            "index_id": ["uuid-a", "uuid-a", "uuid-b"],
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
    # the coverage legend sits beside the plot (right of it), never over the axis
    legend = fig.layout.legend
    assert legend.orientation == "v" and legend.x > 1 and legend.xanchor == "left"


def test_build_panel_says_dropped_and_how_many_events(docs_ns, make_app) -> None:
    """A build whose index was dropped since shows as dropped, not succeeded; the events list
    says how many of how many it shows, and "Show all" lists every event."""
    at = choose(make_app("indexes", query_params=QP), "id", "BTREE")
    at.text_input(key="indexes.create.form0.name").set_value("by_id")
    create_button(at).click().run()
    assert_no_exception(at)
    (job_id,) = jobs(at)
    built = wait_build(job_id)
    assert built.status == "succeeded"
    wait_for_builds(at)
    job_line = next(m.value for m in at.markdown if "**by\\_id**" in m.value)
    assert "succeeded" in job_line
    # more events than the panel lists at first, in the job's record
    extra = [
        {"event": "poll", "stage": f"extra {i}", "at": time.time()}
        for i in range(88 - built.events_total)
    ]
    job_service.annotate(docs_ns, job_id, events=[*built.events, *extra], events_total=88)
    assert wait_build(job_id).events_total == 88
    at.run()
    assert "Showing the latest 50 of 88 events." in texts(at)
    events = next(d for d in at.dataframe if "extra 80" in set(d.value.get("stage", [])))
    assert len(events.value) == 50
    at.toggle(key=f"indexes.jobs.{job_id}.all").set_value(True).run()
    assert "Showing all 88 events." in texts(at)
    events = next(d for d in at.dataframe if "extra 0" in set(d.value.get("stage", [])))
    assert len(events.value) == 88

    open_tab(at, "Selected index")
    confirm = next(t for t in at.text_input if t.key and t.key.endswith(".by_id.confirm"))
    confirm.set_value("by_id")
    button(at, "Drop index").click().run()
    assert_no_exception(at)
    assert listed(docs_ns) == {}
    job_line = next(m.value for m in at.markdown if "**by\\_id**" in m.value)
    assert "built, then dropped" in job_line and "succeeded" not in job_line
    assert build_jobs.from_job(job_service.get(docs_ns, job_id)).outcome == "dropped"


def test_copy_as_python_has_the_typed_index_name(docs_ns, make_app) -> None:
    """The snippet builds the index under the name typed (not the default)."""
    at = choose(make_app("indexes", query_params=QP), "id", "BTREE")
    at.text_input(key="indexes.create.form0.name").set_value("typed_name").run()
    assert_no_exception(at)
    opened = next(k for k in at.session_state if str(k).endswith(".snippet.open"))
    at.session_state[opened] = True
    at.run()
    (code,) = [c.value for c in at.code if c.language == "python"]
    assert "name='typed_name'" in code and "create_table_scalar_index" in code


def test_a_table_without_indexes_can_be_compacted(docs_ns, ui_env, make_app) -> None:
    """Compact files is offered on every table (optimize is disabled without indexes), and
    its result says fragments and bytes of data before and after, as lance counts them."""
    import lance

    location = docs_ns.describe_table(DescribeTableRequest(id=DOCS)).location
    for i in range(2):
        lance.write_dataset(docs_table(5, start=ROWS + 5 * i), location, mode="append")
    before = lance.dataset(location)
    size = sum(f.file_size_bytes for fr in before.get_fragments() for f in fr.metadata.files)
    at = make_app("indexes", query_params=QP)
    assert_no_exception(at)
    assert overview(at).empty
    (optimize,) = [b for b in at.button if b.label == "Optimize indexes"]
    assert optimize.disabled and optimize.help == "Disabled: the table has no index"
    button(at, "Compact files").click().run()
    assert_no_exception(at)

    # the outcome is flashed once, by the run that first sees the job finished: the click's
    # own run when the compaction was quick enough, else the run after it ends
    shown_runs = [alerts(at, "success")]
    for job_id in jobs(at):
        job_service.wait(page_ns(), job_id, timeout=120)
    at.run()
    assert_no_exception(at)
    shown_runs.append(alerts(at, "success"))
    assert len(lance.dataset(location).get_fragments()) == 1
    shown = " ".join(a for run in shown_runs for a in run)
    assert f"3 fragments → 1 fragment, {human_bytes(size)} → " in shown, shown


def health_figures(at) -> dict[str, str]:
    (frame,) = [d.value for d in at.dataframe if list(d.value.columns) == ["figure", "value"]]
    return dict(zip(frame["figure"], frame["value"], strict=True))


def test_over_rest_the_health_read_again_sends_no_index_stats(
    docs_ns, ui_env: Path, monkeypatch, make_app
) -> None:
    """Over REST the health takes each index's unindexed rows from the index table of the same
    version (read once, kept five minutes): read again a minute later, it sends GetTableStats
    and no DescribeTableIndexStats; its unindexed rows are those of the table."""
    import lance

    from components import cache
    from tests.ui.conftest import rest_target_rewritten

    create_index(docs_ns, "id", "BTREE", "by_id")
    create_index(docs_ns, "text", "FTS", "words")
    # the table grows past its indexes: 20 unindexed rows in each
    location = local_path(docs_ns.describe_table(DescribeTableRequest(id=DOCS)).location)
    lance.write_dataset(docs_table(20, start=ROWS), str(location), mode="append")
    routes: list[str] = []

    def seen(route: str, answer: dict) -> dict:
        routes.append(route)
        return answer

    with rest_target_rewritten(ui_env, monkeypatch, {"/stats": seen}):
        at = make_app("indexes", query_params=QP)
        assert_no_exception(at)
        grid = next(d.value for d in at.dataframe if "unindexed_rows" in d.value.columns)
        assert dict(zip(grid["name"], grid["unindexed_rows"], strict=True)) == {
            "by_id": 20,
            "words": 20,
        }
        assert health_figures(at)["Unindexed rows"] == "20 in each of its 2 indexes"
        # a minute later: the health's read has expired, the index table's has not
        real = time.monotonic
        monkeypatch.setattr(cache.time, "monotonic", lambda: real() + 61)
        routes.clear()
        at.run()
        assert_no_exception(at)
        assert "/v1/table/sales%24docs/stats" in routes  # the health was read again
        assert [r for r in routes if "/index/" in r] == []
        assert health_figures(at)["Unindexed rows"] == "20 in each of its 2 indexes"


def test_the_index_table_of_a_version_is_read_once_and_a_commit_reads_it_anew(
    docs_ns, monkeypatch, make_app
) -> None:
    """Locally the index table is kept by the version and the stamp of the table's versions:
    read once, not again five minutes later; a commit from another process is read at once."""
    import lance

    from components import cache

    create_index(docs_ns, "id", "BTREE", "by_id")
    reads: list[int | None] = []
    real_overview = ixs.index_overview

    def counted(ns, table_id, *, version=None):
        reads.append(version)
        return real_overview(ns, table_id, version=version)

    monkeypatch.setattr(ixs, "index_overview", counted)
    location = local_path(docs_ns.describe_table(DescribeTableRequest(id=DOCS)).location)
    latest = lance.dataset(str(location)).version
    # a table last changed a minute ago (a directory changed in the last seconds gives no stamp)
    minute_ago = time.time_ns() - 60 * 10**9
    os.utime(location / "_versions", ns=(minute_ago, minute_ago))
    at = make_app("indexes", query_params=QP)
    assert_no_exception(at)
    assert reads == [latest]
    real_clock = time.monotonic
    monkeypatch.setattr(cache.time, "monotonic", lambda: real_clock() + 301)
    at.run()
    assert_no_exception(at)
    assert reads == [latest]  # five minutes on: the same version, not read again
    lance.write_dataset(docs_table(20, start=ROWS), str(location), mode="append")
    at.run()
    assert reads == [latest, latest + 1]
    grid = next(d.value for d in at.dataframe if "unindexed_rows" in d.value.columns)
    assert grid.set_index("name").loc["by_id", "unindexed_rows"] == 20
