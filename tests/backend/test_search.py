"""Querying (``backend.services.search``): exact search on both backends, the query rule and
the metric rule, query plans (vector and full-text), full-text search and highlighting, data
preview, query vectors and embeddings, local QueryTable on tables kept open, numbers as typed.

Most tests run on both backends through the ``ns`` fixture (``tests/conftest.py``): a real
local directory namespace and a real ``lance.namespace.RestAdapter`` server. Where the REST
server (pylance's ``DirectoryNamespace`` behind the adapter) legitimately differs, the test
says what it asserts for each backend: pylance's server plans full-text queries as plain scans.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from types import SimpleNamespace

import lance
import numpy as np
import pyarrow as pa
import pytest
from lance_namespace import (
    AnalyzeTableQueryPlanRequest,
    CreateNamespaceRequest,
    CreateTableIndexRequest,
    CreateTableRequest,
    DescribeTableRequest,
    DropTableRequest,
    ExplainTableQueryPlanRequest,
    LanceNamespace,
    RenameTableRequest,
)
from lance_namespace.errors import InvalidInputError, LanceNamespaceError, TableNotFoundError

import backend
from backend.demo import embedding as demo
from backend.local.open_tables import versions_dir
from backend.rules import query_rules
from backend.services.search.embedding import embed_text, embedding_of
from backend.services.search.fulltext import fts_request, fts_search, highlight
from backend.services.search.plans import analyze, explain, parse_plan, plan_frame, plan_summary
from backend.services.search.preview import MAX_PREVIEW_ROWS, preview
from backend.services.search.query import DISTANCE, ROW_ID, SCORE, query_request, run_query
from backend.services.search.vector import parse_vector, row_vector, vector_search
from backend.services.tuning.measure import recall, sample_queries
from tests.backend.search_support import DIM, NS, T, query, vector_index, vectors_of
from tests.support import append_rows, create_table, ipc_stream_bytes, make_table, table_location


def test_exact_search_is_the_same_on_both_backends(local_root: Path, rest_server) -> None:
    local = backend.connect(str(local_root))
    rest = backend.connect(rest_server.url)
    try:
        table = make_table(1500, dim=DIM, seed=21)
        for ns in (local, rest):
            ns.create_namespace(CreateNamespaceRequest(id=NS))
            create_table(ns, T, table)
            vector_index(ns, T, "IVF_PQ", num_partitions=4, num_sub_vectors=4)
        picked_local = sample_queries(local, T, "vec", 8, 3)
        picked_rest = sample_queries(rest, T, "vec", 8, 3)
        assert [(q.row_id, q.vector) for q in picked_local] == [
            (q.row_id, q.vector) for q in picked_rest
        ]
        for q in picked_local:
            found = [
                vector_search(
                    ns, T, q.vector, column="vec", k=10, bypass_vector_index=True, columns=["id"]
                ).table
                for ns in (local, rest)
            ]
            assert found[0].column("id").to_pylist() == found[1].column("id").to_pylist()
            np.testing.assert_allclose(
                found[0].column(DISTANCE).to_numpy(),
                found[1].column(DISTANCE).to_numpy(),
                rtol=1e-6,
            )
        exact = [
            recall(ns, T, column="vec", k=10, sample=8, seed=3, bypass_vector_index=True)
            for ns in (local, rest)
        ]
        assert exact[0].per_query == exact[1].per_query == [1.0] * 8
    finally:
        rest.close()


@pytest.mark.parametrize(
    ("index_metric", "requested", "kind", "expected"),
    [
        ("cosine", None, "vector", ("cosine", "the index's", False)),
        ("COSINE", "cosine", "vector", ("cosine", "the index's", False)),
        ("dot", "l2", "vector", ("l2", "chosen", True)),
        ("l2", "Euclidean", "vector", ("l2", "the index's", False)),
        (None, None, "vector", ("l2", "lance's default", False)),
        (None, None, "binary_vector", ("hamming", "lance's default", False)),
        (None, "dot", "vector", ("dot", "chosen", False)),
    ],
)
def test_query_metric_rule(index_metric, requested, kind, expected) -> None:
    metric = query_rules.query_metric(index_metric, requested, column_kind=kind)
    assert (metric.metric, metric.source, metric.mismatch) == expected
    reason = metric.brute_force_reason()
    assert (reason is not None) == (metric.mismatch or index_metric is None)


def test_query_metric_rule_refuses_an_unknown_distance() -> None:
    with pytest.raises(InvalidInputError, match="unknown distance 'manhattan'"):
        query_rules.query_metric("l2", "manhattan")


# -- the query rule on both backends ----------------------------------------------------------------
BAD_QUERIES = {
    "k=0": ({"k": 0}, "k must be"),
    "nprobes=0": ({"nprobes": 0}, "nprobes must be"),
    "min>max": ({"minimum_nprobes": 5, "maximum_nprobes": 2}, "minimum_nprobes"),
    "nan": ({"vector": {"single_vector": [math.nan] + [0.5] * (DIM - 1)}}, "finite"),
    "distance": ({"distance_type": "manhattan"}, "unknown distance"),
}


# A query vector as the rule sees it: refused when any number is not finite, whatever the
# numbers add up to; finite numbers whose sum overflows, integers and numpy arrays pass.
VECTORS = {
    "inf": ([math.inf] + [0.5] * (DIM - 1), False),
    "-inf": ([0.5] * (DIM - 1) + [-math.inf], False),
    "inf and -inf": ([math.inf, -math.inf] + [0.5] * (DIM - 2), False),
    "nan last": ([0.5] * (DIM - 1) + [math.nan], False),
    "huge, sum overflows": ([1e308] * DIM, True),
    "integers": (list(range(DIM)), True),
    "numpy float32": (np.full(DIM, 0.25, dtype=np.float32), True),
    "numpy with nan": (np.array([math.nan] + [0.5] * (DIM - 1)), False),
    "text": (["0.5"] * DIM, False),
    "nested": ([[0.5]] * DIM, False),
}


@pytest.mark.parametrize("case", list(VECTORS))
def test_query_vector_rule(case: str) -> None:
    values, accepted = VECTORS[case]
    # as a client hands it over, before pydantic has coerced anything
    vector = SimpleNamespace(single_vector=values, multi_vector=None)
    problems = query_rules.query_problems(SimpleNamespace(vector=vector))
    if accepted:
        assert problems == []
    else:
        assert problems == ["the query vector must hold finite numbers only"]


@pytest.mark.parametrize("case", list(BAD_QUERIES))
def test_query_rule_refuses_before_sending(
    ns_a: LanceNamespace, backend_kind: str, case: str
) -> None:
    create_table(ns_a, T, make_table(50, dim=DIM))
    fields, message = BAD_QUERIES[case]
    bad = query(T, **fields)
    calls = {
        "query_table": lambda: ns_a.query_table(bad),
        "explain_table_query_plan": lambda: ns_a.explain_table_query_plan(
            ExplainTableQueryPlanRequest(id=T, query=bad)
        ),
        "analyze_table_query_plan": lambda: ns_a.analyze_table_query_plan(
            AnalyzeTableQueryPlanRequest.model_validate(bad.model_dump(exclude_none=True))
        ),
    }
    rest = backend_kind == "rest"
    for op, call in calls.items():
        if rest:
            ns_a.wire_log.clear()
        with pytest.raises(InvalidInputError, match=message) as caught:
            call()
        assert op in str(caught.value)
        if rest:
            assert len(ns_a.wire_log) == 0, f"{op} was sent: {[e.op for e in ns_a.wire_log]}"
    # the same request with the bad field fixed goes through (and over REST, is sent)
    good = query(T)
    if rest:
        ns_a.wire_log.clear()
    assert run_query(ns_a, good).num_rows == 5
    if rest:
        assert [e.op for e in ns_a.wire_log] == ["query_table"]


# -- query plans --------------------------------------------------------------------------------------
def test_vector_plan_shows_the_index(ns_a: LanceNamespace) -> None:
    create_table(ns_a, T, make_table(1000, dim=DIM, seed=6))
    plain = query_request(T, vector=[0.5] * DIM, vector_column="vec", k=5)
    before = plan_summary(parse_plan(explain(ns_a, plain)))
    assert before["index_used"] is False and before["brute_force"] is True
    vector_index(ns_a, T, "IVF_PQ", num_partitions=2, num_sub_vectors=4)

    text = explain(ns_a, plain)
    summary = plan_summary(parse_plan(text))
    assert summary["index_used"] is True
    assert {"ANNIvfPartition", "ANNSubIndex"} <= set(summary["index_nodes"])
    assert summary["brute_force"] is False
    nodes = parse_plan(text)
    frame = plan_frame(nodes)
    assert len(frame) == len(nodes) and {"step", "rows", "detail"} <= set(frame.columns)
    assert [step.strip() for step in frame["step"]] == [n.name for n in nodes]
    assert "ANNSubIndex" in [n.name for n in nodes]

    bypass = query_request(
        T, vector=[0.5] * DIM, vector_column="vec", k=5, bypass_vector_index=True
    )
    exact = plan_summary(parse_plan(explain(ns_a, bypass)))
    assert exact["index_used"] is False
    assert exact["brute_force"] is True

    analyzed = analyze(ns_a, plain)
    nodes = parse_plan(analyzed)
    assert plan_summary(nodes)["index_used"] is True
    assert any(n.metrics.get("output_rows") == "5" for n in nodes)


def test_full_text_plans(ns_a: LanceNamespace, backend_kind: str) -> None:
    create_table(ns_a, T, make_table(200))
    ns_a.create_table_index(
        CreateTableIndexRequest(id=T, column="text", index_type="FTS", with_position=True)
    )
    match = fts_request(T, "lance", columns=["text"])
    phrase = fts_request(T, "lance namespaces", columns=["text"], phrase=True)
    found = fts_search(ns_a, T, "lance", columns=["text"], k=5)
    assert found.table.num_rows == 5
    assert SCORE in found.table.column_names
    assert all(s > 0 for s in found.table.column(SCORE).to_pylist())
    if backend_kind == "local":
        analyzed = analyze(ns_a, match)
        nodes = parse_plan(analyzed)
        assert "MatchQuery" in [n.name for n in nodes]
        summary = plan_summary(nodes)
        assert summary["index_used"] is True and summary["index_nodes"] == ["MatchQuery"]
        assert "MatchQuery" in explain(ns_a, match)
        phrased = plan_summary(parse_plan(analyze(ns_a, phrase)))
        assert phrased["index_used"] is True and phrased["index_nodes"] == ["PhraseQuery"]
    else:
        # pylance's DirectoryNamespace behind the adapter plans full-text queries without
        # their full-text part (a plain LanceRead); what the console can check is that the
        # server answers with a plan and that the search itself uses the index.
        for request in (match, phrase):
            for text in (explain(ns_a, request), analyze(ns_a, request)):
                assert isinstance(text, str) and text.strip()
                assert parse_plan(text)


def _plan_rows(text: str) -> int:
    """Rows out of the plan's top node that reports them (analyze)."""
    top = next(n for n in parse_plan(text) if "output_rows" in n.metrics)
    return int(top.metrics["output_rows"])


@pytest.mark.parametrize("case", ["scan offset", "vector offset", "distance range", "prefilter"])
def test_analyze_runs_the_query_that_query_table_runs(ns_a: LanceNamespace, case: str) -> None:
    """AnalyzeTableQueryPlan executes the request: its plan returns the rows QueryTable
    returns for the same request (the local backend plans it itself, ``query_plans``)."""
    create_table(ns_a, T, make_table(600, dim=DIM, seed=1))
    vector = [0.5] * DIM
    nearest = (
        run_query(ns_a, query_request(T, vector=vector, vector_column="vec", k=5, columns=["id"]))
        .column(DISTANCE)
        .to_pylist()
    )
    fields = {
        "scan offset": {"k": 5, "offset": 3},
        "vector offset": {"vector": vector, "vector_column": "vec", "k": 5, "offset": 3},
        "distance range": {
            "vector": vector, "vector_column": "vec", "k": 5,
            "lower_bound": 0.0, "upper_bound": (nearest[1] + nearest[2]) / 2,
        },
        "prefilter": {
            "vector": vector, "vector_column": "vec", "k": 5, "filter": "cat = 'c1'",
            "prefilter": True,
        },
    }[case]  # fmt: skip
    request = query_request(T, columns=["id"], **fields)
    expected = run_query(ns_a, request).num_rows
    assert expected == {"scan offset": 5, "vector offset": 2, "distance range": 2}.get(case, 5)
    assert _plan_rows(analyze(ns_a, request)) == expected


# -- full-text search and highlighting --------------------------------------------------------------
def test_a_full_text_search_of_a_column_it_cannot_search_is_refused_in_words(
    ns_a: LanceNamespace,
) -> None:
    """A column that does not exist or holds no text: the same refusal on both backends (the
    local backend before running the query, over REST from the server's failure), not lance's
    'FTS field path ... does not exist in the dataset schema' or its list of Arrow types."""
    table = pa.table(
        {"id": pa.array(range(12), pa.int64()), "text": [f"doc {i} about lance" for i in range(12)]}
    )
    create_table(ns_a, T, table)
    ns_a.create_table_index(CreateTableIndexRequest(id=T, column="text", index_type="FTS"))
    cases = [
        (["nosuch"], False, "a full-text search cannot search 'nosuch': no such column"),
        (["id"], False, "a full-text search cannot search 'id': it holds no text"),
        (["id"], True, "a full-text search cannot search 'id': it holds no text"),
    ]
    for columns, phrase, said in cases:
        with pytest.raises(InvalidInputError) as err:
            fts_search(ns_a, T, "lance", columns=columns, phrase=phrase)
        assert str(err.value) == f"{said} (its text columns: text)"
    assert len(fts_search(ns_a, T, "lance", columns=["text"], k=20).table) == 12


def test_fts_scores_descend(ns_a: LanceNamespace) -> None:
    n = 40
    texts = [f"doc {i} " + "vector " * (i % 5) + "filler words" for i in range(n)]
    table = pa.table({"id": pa.array(range(n), pa.int64()), "text": pa.array(texts)})
    create_table(ns_a, T, table)
    ns_a.create_table_index(CreateTableIndexRequest(id=T, column="text", index_type="FTS"))
    found = fts_search(ns_a, T, "vector", columns=["text"], k=20)
    rows = found.table.to_pylist()
    assert len(rows) == 20
    scores = [r[SCORE] for r in rows]
    assert scores == sorted(scores, reverse=True)
    assert all("vector" in r["text"] for r in rows)
    assert rows[0]["text"].count("vector") == 4
    assert found.p50_ms > 0 and len(found.latencies_ms) == 1


def test_highlight_follows_the_tokenizer() -> None:
    text = "Namespaces hold tables; every namespace has a name."
    stemmed = {"base_tokenizer": "simple", "lower_case": True, "stem": True, "language": "English"}
    pieces = highlight(text, "namespace", stemmed)
    assert "".join(p for p, _ in pieces) == text
    marked = [p for p, hit in pieces if hit]
    assert marked == ["Namespaces", "namespace"]
    unstemmed = {**stemmed, "stem": False}
    assert [p for p, hit in highlight(text, "namespace", unstemmed) if hit] == ["namespace"]
    cased = {**unstemmed, "lower_case": False}
    assert [p for p, hit in highlight(text, "Namespaces", cased) if hit] == ["Namespaces"]


# -- data preview -------------------------------------------------------------------------------------
def test_preview_pages_columns_filter_and_version(ns_a: LanceNamespace) -> None:
    create_table(ns_a, T, make_table(100, dim=DIM))
    page = preview(ns_a, T, limit=10, offset=20)
    assert page.rows["id"].tolist() == list(range(20, 30))
    assert page.total == 100 and page.offset == 20
    assert page.request.k == 10 and page.request.offset == 20
    assert preview(ns_a, T, limit=10, offset=95).rows["id"].tolist() == list(range(95, 100))

    some = preview(ns_a, T, columns=["id", "cat"], limit=3)
    assert list(some.rows.columns) == ["id", "cat"]

    filtered = preview(ns_a, T, filter="cat = 'c1'", limit=5)
    assert filtered.total == 20
    assert set(filtered.rows["cat"]) == {"c1"} and len(filtered.rows) == 5

    append_rows(ns_a, T, make_table(30, dim=DIM, start=100, seed=9))
    assert preview(ns_a, T, limit=1000).total == 130
    old = preview(ns_a, T, version=1, limit=1000)
    assert old.total == 100 and len(old.rows) == 100
    assert old.rows["id"].max() == 99


def test_preview_abbreviates_vectors(ns_a: LanceNamespace) -> None:
    table = make_table(5, dim=DIM, seed=3)
    create_table(ns_a, T, table)
    shown = preview(ns_a, T, columns=["id", "vec"], limit=5).rows["vec"].tolist()
    data = vectors_of(table)
    expected = [
        "[" + ", ".join(f"{float(x):.3g}" for x in row[:3]) + f", … {DIM} dims]" for row in data
    ]
    assert shown == expected


@pytest.mark.parametrize("limit", [0, MAX_PREVIEW_ROWS + 1])
def test_preview_limit_is_checked(ns_a: LanceNamespace, limit: int) -> None:
    create_table(ns_a, T, make_table(10))
    with pytest.raises(InvalidInputError):
        preview(ns_a, T, limit=limit)


# -- query vectors ------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["1, 2.5, -3", "[1 2.5 -3]", "(1;2.5;-3)", " [1,\n 2.5 , -3e0] "])
def test_parse_vector_reads_pasted_numbers(text: str) -> None:
    assert parse_vector(text, 3) == [1.0, 2.5, -3.0]
    assert parse_vector(text, None) == [1.0, 2.5, -3.0]


@pytest.mark.parametrize(
    "text", ["1, 2", "1, 2, 3, 4", "1, x, 3", "nan, 1, 2", "1, inf, 2", "", "[]"]
)
def test_parse_vector_refuses(text: str) -> None:
    with pytest.raises(InvalidInputError):
        parse_vector(text, 3)


def test_row_vector_by_filter(ns_a: LanceNamespace) -> None:
    table = make_table(20, dim=DIM, seed=8)
    create_table(ns_a, T, table)
    vector, row = row_vector(ns_a, T, "vec", filter="_rowid = 5")
    assert row["id"] == 5 and row[ROW_ID] == 5
    assert vector == [float(x) for x in vectors_of(table)[5]]
    _, third = row_vector(ns_a, T, "vec", filter="cat = 'c2'", offset=1)
    assert third["id"] == 7
    with pytest.raises(InvalidInputError):
        row_vector(ns_a, T, "vec", filter="id = 1000")


# -- embeddings -------------------------------------------------------------------------------------
def test_embedding_from_the_table_property(ns_a: LanceNamespace) -> None:
    ns_a.create_table(
        CreateTableRequest(id=T, properties={"embedding.function": demo.EMBEDDING_FUNCTION}),
        ipc_stream_bytes(make_table(5)),
    )
    create_table(ns_a, ["a", "plain"], make_table(5))
    props = ns_a.describe_table(DescribeTableRequest(id=T)).properties
    assert embedding_of(props) == demo.EMBEDDING_FUNCTION
    text = "create a namespace and list its tables"
    vector = embed_text(props, text)
    assert len(vector) == 64 and all(isinstance(x, float) for x in vector)
    assert vector == [float(x) for x in demo.embed([text])[0]]
    assert math.isclose(float(np.linalg.norm(vector)), 1.0, rel_tol=1e-5)

    plain = ns_a.describe_table(DescribeTableRequest(id=["a", "plain"])).properties
    assert embedding_of(plain) is None
    with pytest.raises(InvalidInputError):
        embed_text(plain, text)
    assert embedding_of({"embedding.function": "someone/else"}) is None
    with pytest.raises(InvalidInputError):
        embed_text({"embedding.function": "someone/else"}, text)


# -- local QueryTable on tables kept open ----------------------------------------------------------
def _ids(ns: LanceNamespace, table_id: list[str], **fields) -> list[int]:
    request = query_request(table_id, k=100, columns=["id"], **fields)
    return sorted(run_query(ns, request).column("id").to_pylist())


def test_local_query_sees_writes_of_other_processes(local_ns: LanceNamespace) -> None:
    """A query after a write by another handle (another process, pylance) reads the new
    version, and a version asked for is read as it was."""
    create_table(local_ns, T, make_table(5))
    assert _ids(local_ns, T) == [0, 1, 2, 3, 4]
    lance.dataset(str(table_location(local_ns, T))).insert(make_table(2, start=5))
    assert _ids(local_ns, T) == list(range(7))
    assert _ids(local_ns, T, version=1) == [0, 1, 2, 3, 4]
    assert _ids(local_ns, T, filter="id >= 5") == [5, 6]


def test_local_query_follows_the_catalog(local_ns: LanceNamespace) -> None:
    """Dropping a table and creating another under the same name: the query reads the new
    table, not the one kept open."""
    create_table(local_ns, T, make_table(3))
    assert _ids(local_ns, T) == [0, 1, 2]
    local_ns.drop_table(DropTableRequest(id=T))
    create_table(local_ns, T, make_table(2, start=100))
    assert _ids(local_ns, T) == [100, 101]


def test_local_query_follows_catalog_changes_of_other_processes(local_root: Path) -> None:
    """Another handle (another process) renames the table, creates another one under its
    name and drops the renamed one, each change followed by a quiet while (the catalog's
    ``_versions`` directory's time stamp set back, as if seconds had passed: the open-table
    cache then reads the catalog's state from that stamp): every next query sees the change."""
    ours = backend.connect(str(local_root))
    ours.create_namespace(CreateNamespaceRequest(id=NS))
    create_table(ours, T, make_table(3))
    versions = local_root / "__manifest" / "_versions"
    other = backend.connect(str(local_root))
    moved = [*NS, "moved"]

    def quiet(seconds_ago: float) -> None:
        when = time.time() - seconds_ago
        os.utime(versions, (when, when))

    quiet(60)
    assert _ids(ours, T) == [0, 1, 2]
    assert _ids(ours, T) == [0, 1, 2]  # the catalog unchanged: the table kept open
    other.rename_table(RenameTableRequest(id=T, new_table_name="moved"))
    quiet(50)
    with pytest.raises(TableNotFoundError):
        run_query(ours, query_request(T, k=5))
    assert _ids(ours, moved) == [0, 1, 2]
    create_table(other, T, make_table(2, start=100))
    quiet(40)
    assert _ids(ours, T) == [100, 101]
    other.drop_table(DropTableRequest(id=moved))
    quiet(30)
    with pytest.raises(TableNotFoundError):
        run_query(ours, query_request(moved, k=5))
    create_table(other, T[:1] + ["third"], make_table(1, start=7))  # right after: not quiet
    assert _ids(ours, [*NS, "third"]) == [7]


def test_a_query_checks_the_catalog_once(local_root: Path, monkeypatch) -> None:
    """A query at "latest" finds the table's committed version, then reads at that version:
    one check of the catalog serves both (on an object store each check is a LIST request),
    and the next query checks again."""
    from backend.local.open_tables import OpenTables

    ns = backend.connect(str(local_root))
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    create_table(ns, T, make_table(3))
    checks: list[int] = []
    check = OpenTables._current_catalog_version

    def counted(self: OpenTables) -> int | None:
        checks.append(1)
        return check(self)

    monkeypatch.setattr(OpenTables, "_current_catalog_version", counted)
    assert _ids(ns, T) == [0, 1, 2]
    assert len(checks) == 1
    lance.dataset(str(table_location(ns, T))).insert(make_table(2, start=3))
    assert _ids(ns, T) == [0, 1, 2, 3, 4]  # the next query: checked again, the write seen
    assert len(checks) == 2


def test_time_stamps_stand_for_versions_on_local_file_systems_only(local_root: Path) -> None:
    assert versions_dir("s3://bucket/root/__manifest") is None
    assert versions_dir("memory://root/__manifest") is None
    local = versions_dir(str(local_root / "__manifest"))
    assert local == str(local_root / "__manifest" / "_versions")
    assert versions_dir(f"file://{local_root}/a.lance") == str(local_root / "a.lance" / "_versions")


def test_local_query_sees_appends_of_other_processes_after_quiet_periods(
    local_ns: LanceNamespace,
) -> None:
    """Another process appends to, deletes from and restores a table kept open, each change
    after a quiet while (the table's ``_versions`` directory's time stamp set back, as if
    seconds had passed: the open table is then taken as the latest while that stamp holds):
    every next query reads the new version."""
    create_table(local_ns, T, make_table(3))
    location = str(table_location(local_ns, T))
    versions = Path(location.removeprefix("file://")) / "_versions"

    def quiet(seconds_ago: float) -> None:
        when = time.time() - seconds_ago
        os.utime(versions, (when, when))

    quiet(60)
    assert _ids(local_ns, T) == [0, 1, 2]
    assert _ids(local_ns, T) == [0, 1, 2]  # unchanged: the open version stands
    other = lance.dataset(location)
    other.insert(make_table(2, start=3))
    quiet(50)
    assert _ids(local_ns, T) == [0, 1, 2, 3, 4]
    other = lance.dataset(location)
    other.delete("id < 2")
    quiet(40)
    assert _ids(local_ns, T) == [2, 3, 4]
    lance.dataset(location, version=1).restore()
    assert _ids(local_ns, T) == [0, 1, 2]  # right after: not quiet


def test_local_query_errors_are_pylances(local_ns: LanceNamespace) -> None:
    create_table(local_ns, T, make_table(3))
    with pytest.raises(LanceNamespaceError) as bad_filter:
        run_query(local_ns, query_request(T, k=5, filter="no_such_column > 1"))
    assert "no_such_column" in str(bad_filter.value)
    with pytest.raises(LanceNamespaceError):
        run_query(local_ns, query_request(T, k=5, version=99))
    with pytest.raises(TableNotFoundError):
        run_query(local_ns, query_request(["a", "missing"], k=5))


# -- numbers as typed ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "value", "problem"),
    [
        ("7", 7, None),
        (" 10000 ", 10_000, None),
        ("", None, None),
        ("0", None, "k must be between 1 and 10,000, got 0"),
        ("-5", None, "k must be between 1 and 10,000, got -5"),
        ("100000", None, "k must be between 1 and 10,000, got 100,000"),
        (
            "99999999999999999999",
            None,
            "k must be between 1 and 10,000, got 99,999,999,999,999,999,999",
        ),
        ("1e3", None, "k must be a whole number between 1 and 10,000, got '1e3'"),
        ("9" * 50, None, "k must be between 1 and 10,000, got a number of 50 digits"),
    ],
)
def test_whole_numbers_are_read_as_typed(typed: str, value, problem) -> None:
    from backend.rules import numbers

    low, high = query_rules.RANGES["k"]
    assert numbers.whole_number("k", typed, low, high) == (value, problem)


def counted_opens(monkeypatch, tables) -> list[str]:
    """The locations ``tables`` (a namespace's ``OpenTables``) opens from now on, in order."""
    opened: list[str] = []
    real_open = tables._open
    monkeypatch.setattr(
        tables, "_open", lambda location: opened.append(location) or real_open(location)
    )
    return opened


def opens_of(opened: list[str], name: str) -> list[str]:
    """Those of ``opened`` at the location whose last part is ``name``."""
    return [o for o in opened if o.rstrip("/").endswith(name)]


def test_a_read_of_a_declared_table_leaves_the_other_tables_open(
    local_root: Path, monkeypatch
) -> None:
    """A declared table has no data to open: its read fails each time (the detailed describe
    reports it as declared), after one open per read. The tables kept open stay open: the
    next query of another table opens nothing of it again (on an object store an open costs
    requests)."""
    from lance_namespace import DeclareTableRequest, DescribeTableRequest

    ns = backend.connect(str(local_root))
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    create_table(ns, T, make_table(3))
    declared = [*NS, "later"]
    ns.declare_table(DeclareTableRequest(id=declared))
    assert _ids(ns, T) == [0, 1, 2]  # T open
    tables = ns._open_tables
    opened = counted_opens(monkeypatch, tables)
    for _ in range(2):  # the second read with the declared table's location kept
        described = ns.describe_table(
            DescribeTableRequest(id=declared, load_detailed_metadata=True)
        )
        assert described.version is None  # declared: no version
    location = str(table_location(ns, T))
    assert _ids(ns, T) == [0, 1, 2]
    later = Path(table_location(ns, declared)).name
    # the declared table's open tried once per read: at the location the catalog gives, a
    # second try would do the same
    assert len(opens_of(opened, later)) == 2
    assert not opens_of(opened, Path(location).name)


def test_a_kept_location_the_catalog_no_longer_gives_is_tried_again(local_root: Path) -> None:
    """Within one operation the catalog is checked once, so a table dropped and made again
    by another process meanwhile is looked for at its old, kept location: that open fails,
    and the table is opened again at the location the catalog gives now."""
    from lance_namespace import DropTableRequest

    ns = backend.connect(str(local_root))
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    create_table(ns, T, make_table(3))
    tables = ns._open_tables
    with tables.one_read():
        old = tables.table(T).ds.uri  # location kept, catalog checked for the operation
        tables._tables.clear()  # the open dataset given up (as beyond MAX_OPEN): the location stays
        other = backend.connect(str(local_root))  # another process's writes
        other.drop_table(DropTableRequest(id=T))
        create_table(other, T, make_table(5))
        again = tables.table(T)
    assert again.ds.uri != old
    assert again.ds.count_rows() == 5


def test_a_version_the_table_does_not_have_is_looked_for_once(
    local_root: Path, monkeypatch
) -> None:
    """A read of a version the table lacks fails where the catalog says the table is: not
    tried again with everything forgotten and the table opened anew (on an object store an
    open costs requests), whether the table was open (its location kept) or not. The
    error is lance's own, as before, and the latest version reads as ever after it."""
    ns = backend.connect(str(local_root))
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    create_table(ns, T, make_table(3))
    tables = ns._open_tables
    opened = counted_opens(monkeypatch, tables)
    name = Path(table_location(ns, T)).name
    for warm in (False, True):  # cold: nothing kept; warm: the table open, its location kept
        if not warm:
            tables.clear()
        else:
            assert tables.table(T).version == 1
        opened.clear()
        with pytest.raises(OSError, match="99.manifest was not found"):
            tables.table(T, 99)
        assert len(opens_of(opened, name)) == (0 if warm else 1), opened
    assert tables.table(T).ds.count_rows() == 3
