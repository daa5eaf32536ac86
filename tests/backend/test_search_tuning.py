"""Search & tune backend: recall against numpy ground truth, sweeps, the query rule on both
backends, query plans (vector and full-text), full-text search and highlighting, data preview,
query vectors and embeddings, index build defaults, requested against applied build
parameters, index maintenance, build A/B comparisons, shareable settings and snippets, the
background task registry, and the demo's passages table.

Most tests run on both backends through the ``ns`` fixture (``tests/conftest.py``): a real
local directory namespace and a real ``lance.namespace.RestAdapter`` server. Where the REST
server (pylance's ``DirectoryNamespace`` behind the adapter) legitimately differs, the test
says what it asserts for each backend: the server ignores vector build parameters (it builds
one IVF partition and its own number of PQ sub-vectors whatever is asked) and plans full-text
queries as plain scans.
"""

from __future__ import annotations

import math
import os
import re
import statistics
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import lance
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from lance_namespace import (
    AnalyzeTableQueryPlanRequest,
    CreateNamespaceRequest,
    CreateTableIndexRequest,
    CreateTableRequest,
    DescribeTableIndexStatsRequest,
    DescribeTableRequest,
    DropTableRequest,
    ExplainTableQueryPlanRequest,
    LanceNamespace,
    ListTableIndicesRequest,
    ListTableVersionsRequest,
    QueryTableRequest,
    RenameTableRequest,
)
from lance_namespace.errors import (
    InvalidInputError,
    LanceNamespaceError,
    TableNotFoundError,
    UnsupportedOperationError,
)

import backend
from backend.demo import data as demo
from backend.demo import embedding
from backend.local.open_tables import versions_dir
from backend.rules import index_rules as rules
from backend.rules import query_rules
from backend.services import search, tuning
from backend.services.index_overview import index_details_dict, index_overview
from backend.services.tasks import TaskRegistry
from tests import support as tests_support
from tests.support import (
    append_rows,
    create_table,
    demo_copy,
    ipc_stream_bytes,
    make_table,
    table_location,
)

NS = ["a"]
T = ["a", "t"]
DIM = 16


@pytest.fixture
def ns_a(ns: LanceNamespace) -> LanceNamespace:
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    return ns


@pytest.fixture
def local_ns(local_root: Path) -> LanceNamespace:
    ns = backend.connect(str(local_root))
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    return ns


def vectors_of(table: pa.Table, column: str = "vec") -> np.ndarray:
    """The table's vectors as an ``(n, dim)`` float32 array."""
    values = table.column(column).combine_chunks()
    return values.flatten().to_numpy().reshape(len(table), -1)


def numpy_neighbours(data: np.ndarray, row: int, k: int) -> list[int]:
    """The exact ``k`` nearest rows of ``data[row]`` (L2), the row itself left out."""
    d = ((data.astype(np.float64) - data[row].astype(np.float64)) ** 2).sum(axis=1)
    d[row] = np.inf
    return [int(i) for i in np.argsort(d, kind="stable")[:k]]


def vector_index(
    ns: LanceNamespace, table_id: list[str], index_type: str, **params
) -> CreateTableIndexRequest:
    request = CreateTableIndexRequest(id=table_id, column="vec", index_type=index_type, **params)
    ns.create_table_index(request)
    return request


def query(table_id: list[str], **fields) -> QueryTableRequest:
    """A QueryTableRequest built directly (not through ``search.query_request``, which would
    refuse a bad one before any backend sees it)."""
    body = {"id": table_id, "vector": {"single_vector": [0.5] * DIM}, "vector_column": "vec"}
    body["k"] = 5
    body.update(fields)
    return QueryTableRequest.model_validate(body)


# -- 1. recall against numpy ground truth ------------------------------------------------------------
def test_exact_recall_matches_numpy_ground_truth(ns_a: LanceNamespace) -> None:
    table = make_table(2000, dim=DIM, seed=11)
    data = vectors_of(table)
    create_table(ns_a, T, table)
    vector_index(
        ns_a, T, "IVF_PQ", num_partitions=4, num_sub_vectors=4, distance_type="l2"
    )  # a REST server may ignore the build parameters: exact search does not care
    k, sample, seed = 10, 12, 5

    queries = tuning.sample_queries(ns_a, T, "vec", sample, seed)
    assert len(queries) == sample
    assert len({q.row_id for q in queries}) == sample
    for q in queries:  # row ids are positions in a freshly written table: check the mapping
        assert q.vector == [float(x) for x in data[q.row_id]]
        truth = numpy_neighbours(data, q.row_id, k)
        ids, ms = tuning._neighbours(ns_a, T, q, "vec", k, {"bypass_vector_index": True})
        assert ms > 0
        assert q.row_id not in ids
        assert set(ids) == set(truth)
        # the distances lance reports are the squared L2 distances numpy computes
        found = search.vector_search(
            ns_a, T, q.vector, column="vec", k=k + 1, bypass_vector_index=True
        )
        got = found.table.column(search.DISTANCE).to_numpy()
        expected = np.sort(((data.astype(np.float64) - data[q.row_id]) ** 2).sum(axis=1))[: k + 1]
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)

    result = tuning.recall(
        ns_a, T, column="vec", k=k, sample=sample, seed=seed, bypass_vector_index=True
    )
    assert result.k == k
    assert len(result.per_query) == sample
    assert all(isinstance(v, float) for v in result.per_query)
    assert result.per_query == [1.0] * sample
    assert result.mean == 1.0
    assert result.std == 0.0
    assert result.ann_p50_ms > 0 and result.exact_p50_ms > 0
    assert len(result.ann_ms) == len(result.exact_ms) == sample
    assert result.query_params == {"bypass_vector_index": True}


# -- 2. weak settings, monotone probes, both backends agree on exact search ----------------------------
def test_more_probes_never_lose_recall(ns_a: LanceNamespace, backend_kind: str) -> None:
    """IVF_FLAT keeps the raw vectors: probing more partitions only adds exact candidates, so
    recall cannot drop, and probing every partition is exact search."""
    create_table(ns_a, T, make_table(2000, dim=DIM, seed=2))
    vector_index(ns_a, T, "IVF_FLAT", num_partitions=16)
    probes = [1, 2, 4, 8, 16]
    frame = tuning.sweep(ns_a, T, column="vec", k=10, sample=20, seed=1, grid={"nprobes": probes})
    assert frame["nprobes"].tolist() == probes
    recalls = frame["recall"].tolist()
    assert all(a <= b + 1e-12 for a, b in zip(recalls, recalls[1:], strict=False)), recalls
    assert recalls[-1] == 1.0  # every partition probed (the server's single one included)
    weak = tuning.recall(ns_a, T, column="vec", k=10, sample=20, seed=1, nprobes=1)
    assert weak.mean == pytest.approx(recalls[0])
    if backend_kind == "local":
        # 16 partitions really built: one probe misses neighbours in the other partitions
        assert weak.mean < 1.0
        assert min(weak.per_query) < 1.0


def test_exact_search_is_the_same_on_both_backends(local_root: Path, rest_server) -> None:
    local = backend.connect(str(local_root))
    rest = backend.connect(rest_server.url)
    try:
        table = make_table(1500, dim=DIM, seed=21)
        for ns in (local, rest):
            ns.create_namespace(CreateNamespaceRequest(id=NS))
            create_table(ns, T, table)
            vector_index(ns, T, "IVF_PQ", num_partitions=4, num_sub_vectors=4)
        picked_local = tuning.sample_queries(local, T, "vec", 8, 3)
        picked_rest = tuning.sample_queries(rest, T, "vec", 8, 3)
        assert [(q.row_id, q.vector) for q in picked_local] == [
            (q.row_id, q.vector) for q in picked_rest
        ]
        for q in picked_local:
            found = [
                search.vector_search(
                    ns, T, q.vector, column="vec", k=10, bypass_vector_index=True, columns=["id"]
                ).table
                for ns in (local, rest)
            ]
            assert found[0].column("id").to_pylist() == found[1].column("id").to_pylist()
            np.testing.assert_allclose(
                found[0].column(search.DISTANCE).to_numpy(),
                found[1].column(search.DISTANCE).to_numpy(),
                rtol=1e-6,
            )
        exact = [
            tuning.recall(ns, T, column="vec", k=10, sample=8, seed=3, bypass_vector_index=True)
            for ns in (local, rest)
        ]
        assert exact[0].per_query == exact[1].per_query == [1.0] * 8
    finally:
        rest.close()


# -- 2b. every measurement uses the metric of the index being measured -----------------------------------
METRICS = ("cosine", "dot", "l2")
VARIED_ROWS = 2000


def true_neighbour_sets(data: np.ndarray, rows: list[int], k: int) -> dict[str, list[set[int]]]:
    return {m: [set(tests_support.metric_neighbours(data, r, k, m)) for r in rows] for m in METRICS}


@pytest.fixture(scope="module")
def varied() -> tuple[pa.Table, np.ndarray]:
    """2,000 × 16 vectors of strongly varied norms, on which the three metrics disagree
    (checked here, so that a test measuring with the wrong metric cannot pass)."""
    table = tests_support.varied_norm_rows(VARIED_ROWS, dim=DIM, seed=5)
    data = vectors_of(table)
    rows = list(range(0, VARIED_ROWS, 100))
    sets = true_neighbour_sets(data, rows, 10)
    for a, b in (("cosine", "l2"), ("dot", "l2"), ("cosine", "dot")):
        differ = sum(x != y for x, y in zip(sets[a], sets[b], strict=True))
        assert differ >= 0.9 * len(rows), f"{a} and {b} agree on too many rows"
    return table, data


def ann_ids(ns: LanceNamespace, row: int, vector: list[float], k: int, **fields) -> list[int]:
    """ANN neighbours of a sampled row (itself left out) by a QueryTable built here, without
    distance_type: lance searches with the index's own metric."""
    request = QueryTableRequest.model_validate(
        {"id": T, "vector": {"single_vector": vector}, "vector_column": "vec", "k": k + 1,
         "columns": {"column_names": ["id"]}, **fields}
    )  # fmt: skip
    ids = search.run_query(ns, request).column("id").to_pylist()
    return [int(i) for i in ids if int(i) != row][:k]


@pytest.mark.parametrize("metric", METRICS)
def test_recall_sweep_and_exact_search_use_the_index_metric(
    ns_a: LanceNamespace, varied: tuple[pa.Table, np.ndarray], metric: str
) -> None:
    """On a cosine / dot / l2 index: exact search, recall and sweep compute the exact
    neighbours with that metric (numpy ground truth), without being told it."""
    table, data = varied
    create_table(ns_a, T, table)
    vector_index(ns_a, T, "IVF_PQ", num_partitions=4, num_sub_vectors=4, distance_type=metric)
    assert search.index_metric(ns_a, T, "vec") == metric
    k, sample, seed = 10, 20, 3
    queries = tuning.sample_queries(ns_a, T, "vec", sample, seed)

    # exact search (bypass) without a distance: the index's metric, its distances numpy's
    for q in queries[:5]:
        found = search.vector_search(
            ns_a, T, q.vector, column="vec", k=k + 1, bypass_vector_index=True, columns=["id"]
        )
        assert found.metric is not None and found.metric.metric == metric
        assert found.metric.source == "the index's"
        assert found.request.distance_type == metric
        ids = [i for i in found.table.column("id").to_pylist() if i != q.row_id][:k]
        assert set(ids) == set(tests_support.metric_neighbours(data, q.row_id, k, metric))
        expected = np.sort(tests_support.metric_distances(data, data[q.row_id], metric))
        got = found.table.column(search.DISTANCE).to_numpy()
        np.testing.assert_allclose(got, expected[: k + 1], rtol=1e-3, atol=1e-3)

    # recall: the console's figure against numpy ground truth of the same ANN answers
    result = tuning.recall(ns_a, T, column="vec", k=k, sample=sample, seed=seed, nprobes=1)
    assert (result.metric, result.index_metric, result.brute_force) == (metric, metric, None)
    truth = [set(tests_support.metric_neighbours(data, q.row_id, k, metric)) for q in queries]
    ann = [set(ann_ids(ns_a, q.row_id, q.vector, k, nprobes=1)) for q in queries]
    by_numpy = statistics.fmean(len(a & t) / k for a, t in zip(ann, truth, strict=True))
    assert abs(result.mean - by_numpy) <= 0.05, (result.mean, by_numpy)
    if metric != "l2":  # the check has teeth: against l2 neighbours the figure is another
        l2_truth = [set(tests_support.metric_neighbours(data, q.row_id, k, "l2")) for q in queries]
        by_l2 = statistics.fmean(len(a & t) / k for a, t in zip(ann, l2_truth, strict=True))
        assert abs(by_numpy - by_l2) > 0.05, (by_numpy, by_l2)

    # the sweep takes the same metric and reports it
    frame = tuning.sweep(
        ns_a, T, column="vec", k=k, sample=sample, seed=seed, grid={"nprobes": [1]}
    )
    assert frame["metric"].tolist() == [metric]
    assert frame["brute_force"].tolist() == [False]
    assert frame.loc[0, "recall"] == pytest.approx(result.mean)


@pytest.mark.parametrize("metric", ["cosine", "dot"])
def test_another_metric_than_the_index_is_brute_force(
    ns_a: LanceNamespace, varied: tuple[pa.Table, np.ndarray], metric: str
) -> None:
    """A metric other than the index's makes lance search without the index ('incompatible
    with index metric'): recall, sweep and the plan say so instead of measuring it as ANN,
    and the ground truth is computed with the metric chosen."""
    table, data = varied
    create_table(ns_a, T, table)
    vector_index(ns_a, T, "IVF_PQ", num_partitions=4, num_sub_vectors=4, distance_type=metric)
    k = 10
    result = tuning.recall(ns_a, T, column="vec", k=k, sample=10, seed=1, distance_type="l2")
    assert (result.metric, result.index_metric) == ("l2", metric)
    assert result.brute_force is not None and "incompatible with index metric" in result.brute_force
    assert result.per_query == [1.0] * 10  # brute force against brute force
    frame = tuning.sweep(
        ns_a, T, column="vec", k=k, sample=5, seed=1, grid={"distance_type": [None, "l2"]}
    )
    assert frame["metric"].tolist() == [metric, "l2"]
    assert frame["brute_force"].tolist() == [False, True]
    assert tuning.cheapest(frame, 0.0)["metric"] == metric  # brute force is no index setting

    q = tuning.sample_queries(ns_a, T, "vec", 1, 0)[0]
    found = search.vector_search(ns_a, T, q.vector, column="vec", k=k, distance_type="l2")
    assert found.metric is not None and found.metric.mismatch
    assert "incompatible with index metric" in (found.brute_force_reason or "")
    ids = [int(i) for i in found.table.column("id").to_pylist()]
    assert set(ids) - {q.row_id} <= set(tests_support.metric_neighbours(data, q.row_id, k, "l2"))
    plan = search.plan_summary(search.parse_plan(search.explain(ns_a, found.request)))
    assert plan["brute_force"] is True and plan["index_used"] is False
    own = search.vector_search(ns_a, T, q.vector, column="vec", k=k)
    assert own.brute_force_reason is None
    assert search.plan_summary(search.parse_plan(search.explain(ns_a, own.request)))["index_used"]


def test_build_ab_measures_each_build_with_its_metric(
    ns_a: LanceNamespace, varied: tuple[pa.Table, np.ndarray]
) -> None:
    """IVF_FLAT probing every partition is exact search: its recall is 1.0 exactly when the
    ground truth uses the build's metric. A build without a distance takes the table's
    index metric (cosine here)."""
    table, _ = varied
    create_table(ns_a, T, table)
    vector_index(ns_a, T, "IVF_FLAT", num_partitions=2, distance_type="cosine")
    configs = [
        {"index_type": "IVF_FLAT", "num_partitions": 2},
        {"index_type": "IVF_FLAT", "num_partitions": 2, "distance_type": "dot"},
    ]
    frame = tuning.build_ab(
        ns_a, T, column="vec", configs=configs, sample_rows=1000, queries=10,
        query_params={"nprobes": 2},
    )  # fmt: skip
    assert frame["metric"].tolist() == ["cosine", "dot"]
    assert frame["recall"].tolist() == [1.0, 1.0]
    assert frame["brute_force"].tolist() == [False, False]
    other = tuning.build_ab(
        ns_a, T, column="vec", configs=configs[:1], sample_rows=1000, queries=5,
        query_params={"nprobes": 2, "distance_type": "l2"},
    )  # fmt: skip
    assert other["metric"].tolist() == ["l2"] and other["brute_force"].tolist() == [True]
    assert other["recall"].tolist() == [1.0]


def test_hamming_index_on_binary_vectors(local_ns: LanceNamespace) -> None:
    """uint8 vectors with an IVF_FLAT hamming index (local backend): exact search and recall
    use hamming, with numpy's bit counts. Over REST the query vector travels as floats (the
    spec's ``single_vector``) and pylance's server refuses it for a uint8 column, so the
    REST side is not measured here."""
    rng = np.random.default_rng(2)
    data = rng.integers(0, 256, size=(800, 8), dtype=np.uint8)
    table = pa.table(
        {
            "id": pa.array(range(800), pa.int64()),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(data.reshape(-1)), 8),
        }
    )
    create_table(local_ns, T, table)
    vector_index(local_ns, T, "IVF_FLAT", num_partitions=2, distance_type="hamming")
    q = tuning.sample_queries(local_ns, T, "vec", 1, 4)[0]
    found = search.vector_search(
        local_ns, T, q.vector, column="vec", k=10, bypass_vector_index=True
    )
    assert found.metric is not None and found.metric.metric == "hamming"
    expected = np.sort(tests_support.metric_distances(data, data[q.row_id], "hamming"))[:10]
    np.testing.assert_array_equal(found.table.column(search.DISTANCE).to_numpy(), expected)
    result = tuning.recall(local_ns, T, column="vec", k=5, sample=5, nprobes=2)
    assert (result.metric, result.index_metric, result.brute_force) == ("hamming", "hamming", None)
    assert 0.0 <= result.mean <= 1.0


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


# -- 3. sweep frames, Pareto front, cheapest setting ---------------------------------------------------
@pytest.fixture
def flat_table(ns_a: LanceNamespace) -> LanceNamespace:
    create_table(ns_a, T, make_table(600, dim=DIM, seed=4))
    vector_index(ns_a, T, "IVF_FLAT", num_partitions=4)
    return ns_a


def test_sweep_frame_has_one_row_per_combination(flat_table: LanceNamespace) -> None:
    grid = {"nprobes": [1, 4, None], "refine_factor": [None, 2]}
    calls: list[tuple[int, int]] = []
    frame = tuning.sweep(
        flat_table, T, column="vec", k=5, sample=6, grid=grid,
        progress=lambda done, total: calls.append((done, total)),
    )  # fmt: skip
    assert list(frame.columns) == [
        "nprobes", "refine_factor", "recall", "recall_std", "recall_low", "recall_high",
        "queries", "p50_ms", "p95_ms", "metric", "brute_force",
    ]  # fmt: skip
    assert len(frame) == 6
    assert (frame["queries"] == 6).all()
    assert (
        (frame["recall_low"] <= frame["recall"]) & (frame["recall"] <= frame["recall_high"])
    ).all()
    assert frame["metric"].tolist() == ["l2"] * 6  # the IVF_FLAT index's (lance's default)
    assert not frame["brute_force"].any()
    assert calls == [(i, 6) for i in range(1, 7)]
    pairs = [
        (None if pd.isna(a) else a, None if pd.isna(b) else b)
        for a, b in zip(frame["nprobes"], frame["refine_factor"], strict=True)
    ]
    assert pairs == [(1, None), (1, 2), (4, None), (4, 2), (None, None), (None, 2)]
    assert frame["nprobes"].isna().tolist() == [False, False, False, False, True, True]
    assert frame["refine_factor"].isna().tolist() == [True, False] * 3
    assert frame["recall"].between(0.0, 1.0).all()
    assert (frame["recall_std"] >= 0).all()
    assert (frame["p50_ms"] > 0).all()
    assert (frame["p95_ms"] >= frame["p50_ms"]).all()


def test_sweep_setting_with_a_default_can_be_run_again(flat_table: LanceNamespace) -> None:
    """A sweep row's setting (what the page shows, shares and turns into snippets) carries the
    grid's own values: ``nprobes=1`` stays the integer 1 when another point of the grid leaves
    nprobes at its default (``None``)."""
    keys = ["nprobes"]
    frame = tuning.sweep(flat_table, T, column="vec", k=5, sample=4, grid={"nprobes": [1, None]})
    params = tuning.setting_params(frame.iloc[0], keys)
    assert params == {"nprobes": 1}
    assert type(params["nprobes"]) is int, f"nprobes came back as {params['nprobes']!r}"
    request = search.query_request(T, vector=[0.5] * DIM, vector_column="vec", k=5, **params)
    assert request.nprobes == 1
    assert tuning.parse_share_params(tuning.share_params("vec", 5, params))["nprobes"] == 1
    tuning.python_snippets("ns = backend.connect('x')", T, "vec", 5, params)
    assert tuning.setting_params(frame.iloc[1], keys) == {}


def test_sweep_without_a_grid_measures_the_base_setting(flat_table: LanceNamespace) -> None:
    frame = tuning.sweep(flat_table, T, column="vec", k=5, sample=4, nprobes=4)
    assert list(frame.columns) == list(tuning.SWEEP_COLUMNS)
    assert len(frame) == 1
    assert frame.loc[0, "recall"] == 1.0  # 4 probes of 4 IVF_FLAT partitions: exact


def test_sweep_grid_is_checked(flat_table: LanceNamespace) -> None:
    with pytest.raises(InvalidInputError, match="bogus"):
        tuning.sweep(flat_table, T, column="vec", sample=3, grid={"bogus": [1]})
    with pytest.raises(InvalidInputError, match="at most"):
        tuning.sweep(
            flat_table, T, column="vec", sample=3,
            grid={"nprobes": list(range(1, 21)), "refine_factor": list(range(1, 12))},
        )  # fmt: skip
    with pytest.raises(InvalidInputError):
        tuning.grid_points({"nprobes": list(range(1, tuning.MAX_GRID_POINTS + 2))})
    assert len(tuning.grid_points({"nprobes": [1, 2], "ef": [10, 20, None]})) == 6
    assert tuning.grid_points({}) == [{}]


def test_pareto_front_and_cheapest_on_a_hand_made_frame() -> None:
    frame = pd.DataFrame(
        {
            "nprobes": [1, 4, 2, 8, 32, 1],
            "recall": [0.80, 0.90, 0.85, 0.90, 0.99, 0.80],
            "p50_ms": [1.0, 2.0, 3.0, 2.5, 5.0, 1.0],
        },
        index=[10, 11, 12, 13, 14, 15],
    )
    mask = tuning.pareto_front(frame)
    assert list(mask.index) == list(frame.index)
    # 12 is beaten by 11 (more recall, less time), 13 by 11 (same recall, less time);
    # 10 and 15 are equal: neither beats the other
    assert mask.tolist() == [True, True, False, False, True, True]
    best = tuning.cheapest(frame, 0.9)
    assert best is not None and best.name == 11
    assert best["recall"] == 0.90 and best["p50_ms"] == 2.0
    top = tuning.cheapest(frame, 0.99)
    assert top is not None and top.name == 14
    low = tuning.cheapest(frame, 0.5)
    assert low is not None and low["p50_ms"] == 1.0
    assert tuning.cheapest(frame, 0.995) is None


# -- 4. bad arguments of recall and sweep --------------------------------------------------------------
@pytest.mark.parametrize("column", ["text", "id", "missing"])
def test_recall_and_sweep_need_a_vector_column(ns_a: LanceNamespace, column: str) -> None:
    create_table(ns_a, T, make_table(50, dim=DIM))
    with pytest.raises(InvalidInputError, match=column):
        tuning.recall(ns_a, T, column=column, sample=3)
    with pytest.raises(InvalidInputError, match=column):
        tuning.sweep(ns_a, T, column=column, sample=3, grid={"nprobes": [1]})


@pytest.mark.parametrize("bad", [{"k": 0}, {"sample": 0}, {"k": tuning.MAX_K + 1}])
def test_recall_and_sweep_refuse_empty_k_and_sample(ns_a: LanceNamespace, bad: dict) -> None:
    create_table(ns_a, T, make_table(50, dim=DIM))
    with pytest.raises(InvalidInputError):
        tuning.recall(ns_a, T, column="vec", **{"k": 5, "sample": 3, **bad})
    with pytest.raises(InvalidInputError):
        tuning.sweep(ns_a, T, column="vec", grid={"nprobes": [1]}, **{"k": 5, "sample": 3, **bad})


# -- 5. the query rule on both backends ----------------------------------------------------------------
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
    assert search.run_query(ns_a, good).num_rows == 5
    if rest:
        assert [e.op for e in ns_a.wire_log] == ["query_table"]


# -- 6. query plans --------------------------------------------------------------------------------------
def test_vector_plan_shows_the_index(ns_a: LanceNamespace) -> None:
    create_table(ns_a, T, make_table(1000, dim=DIM, seed=6))
    plain = search.query_request(T, vector=[0.5] * DIM, vector_column="vec", k=5)
    before = search.plan_summary(search.parse_plan(search.explain(ns_a, plain)))
    assert before["index_used"] is False and before["brute_force"] is True
    vector_index(ns_a, T, "IVF_PQ", num_partitions=2, num_sub_vectors=4)

    text = search.explain(ns_a, plain)
    summary = search.plan_summary(search.parse_plan(text))
    assert summary["index_used"] is True
    assert {"ANNIvfPartition", "ANNSubIndex"} <= set(summary["index_nodes"])
    assert summary["brute_force"] is False
    nodes = search.parse_plan(text)
    frame = search.plan_frame(nodes)
    assert len(frame) == len(nodes) and {"step", "rows", "detail"} <= set(frame.columns)
    assert [step.strip() for step in frame["step"]] == [n.name for n in nodes]
    assert "ANNSubIndex" in [n.name for n in nodes]

    bypass = search.query_request(
        T, vector=[0.5] * DIM, vector_column="vec", k=5, bypass_vector_index=True
    )
    exact = search.plan_summary(search.parse_plan(search.explain(ns_a, bypass)))
    assert exact["index_used"] is False
    assert exact["brute_force"] is True

    analyzed = search.analyze(ns_a, plain)
    nodes = search.parse_plan(analyzed)
    assert search.plan_summary(nodes)["index_used"] is True
    assert any(n.metrics.get("output_rows") == "5" for n in nodes)


def test_full_text_plans(ns_a: LanceNamespace, backend_kind: str) -> None:
    create_table(ns_a, T, make_table(200))
    ns_a.create_table_index(
        CreateTableIndexRequest(id=T, column="text", index_type="FTS", with_position=True)
    )
    match = search.fts_request(T, "lance", columns=["text"])
    phrase = search.fts_request(T, "lance namespaces", columns=["text"], phrase=True)
    found = search.fts_search(ns_a, T, "lance", columns=["text"], k=5)
    assert found.table.num_rows == 5
    assert search.SCORE in found.table.column_names
    assert all(s > 0 for s in found.table.column(search.SCORE).to_pylist())
    if backend_kind == "local":
        analyzed = search.analyze(ns_a, match)
        nodes = search.parse_plan(analyzed)
        assert "MatchQuery" in [n.name for n in nodes]
        summary = search.plan_summary(nodes)
        assert summary["index_used"] is True and summary["index_nodes"] == ["MatchQuery"]
        assert "MatchQuery" in search.explain(ns_a, match)
        phrased = search.plan_summary(search.parse_plan(search.analyze(ns_a, phrase)))
        assert phrased["index_used"] is True and phrased["index_nodes"] == ["PhraseQuery"]
    else:
        # pylance's DirectoryNamespace behind the adapter plans full-text queries without
        # their full-text part (a plain LanceRead); what the console can check is that the
        # server answers with a plan and that the search itself uses the index.
        for request in (match, phrase):
            for text in (search.explain(ns_a, request), search.analyze(ns_a, request)):
                assert isinstance(text, str) and text.strip()
                assert search.parse_plan(text)


def _plan_rows(text: str) -> int:
    """Rows out of the plan's top node that reports them (analyze)."""
    top = next(n for n in search.parse_plan(text) if "output_rows" in n.metrics)
    return int(top.metrics["output_rows"])


@pytest.mark.parametrize("case", ["scan offset", "vector offset", "distance range", "prefilter"])
def test_analyze_runs_the_query_that_query_table_runs(ns_a: LanceNamespace, case: str) -> None:
    """AnalyzeTableQueryPlan executes the request: its plan returns the rows QueryTable
    returns for the same request (the local backend plans it itself, ``query_plans``)."""
    create_table(ns_a, T, make_table(600, dim=DIM, seed=1))
    vector = [0.5] * DIM
    nearest = (
        search.run_query(
            ns_a, search.query_request(T, vector=vector, vector_column="vec", k=5, columns=["id"])
        )
        .column(search.DISTANCE)
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
    request = search.query_request(T, columns=["id"], **fields)
    expected = search.run_query(ns_a, request).num_rows
    assert expected == {"scan offset": 5, "vector offset": 2, "distance range": 2}.get(case, 5)
    assert _plan_rows(search.analyze(ns_a, request)) == expected


# -- 7. full-text search and highlighting --------------------------------------------------------------
def test_fts_scores_descend(ns_a: LanceNamespace) -> None:
    n = 40
    texts = [f"doc {i} " + "vector " * (i % 5) + "filler words" for i in range(n)]
    table = pa.table({"id": pa.array(range(n), pa.int64()), "text": pa.array(texts)})
    create_table(ns_a, T, table)
    ns_a.create_table_index(CreateTableIndexRequest(id=T, column="text", index_type="FTS"))
    found = search.fts_search(ns_a, T, "vector", columns=["text"], k=20)
    rows = found.table.to_pylist()
    assert len(rows) == 20
    scores = [r[search.SCORE] for r in rows]
    assert scores == sorted(scores, reverse=True)
    assert all("vector" in r["text"] for r in rows)
    assert rows[0]["text"].count("vector") == 4
    assert found.p50_ms > 0 and len(found.latencies_ms) == 1


def test_highlight_follows_the_tokenizer() -> None:
    text = "Namespaces hold tables; every namespace has a name."
    stemmed = {"base_tokenizer": "simple", "lower_case": True, "stem": True, "language": "English"}
    pieces = search.highlight(text, "namespace", stemmed)
    assert "".join(p for p, _ in pieces) == text
    marked = [p for p, hit in pieces if hit]
    assert marked == ["Namespaces", "namespace"]
    unstemmed = {**stemmed, "stem": False}
    assert [p for p, hit in search.highlight(text, "namespace", unstemmed) if hit] == ["namespace"]
    cased = {**unstemmed, "lower_case": False}
    assert [p for p, hit in search.highlight(text, "Namespaces", cased) if hit] == ["Namespaces"]


# -- 8. data preview -------------------------------------------------------------------------------------
def test_preview_pages_columns_filter_and_version(ns_a: LanceNamespace) -> None:
    create_table(ns_a, T, make_table(100, dim=DIM))
    page = search.preview(ns_a, T, limit=10, offset=20)
    assert page.rows["id"].tolist() == list(range(20, 30))
    assert page.total == 100 and page.offset == 20
    assert page.request.k == 10 and page.request.offset == 20
    assert search.preview(ns_a, T, limit=10, offset=95).rows["id"].tolist() == list(range(95, 100))

    some = search.preview(ns_a, T, columns=["id", "cat"], limit=3)
    assert list(some.rows.columns) == ["id", "cat"]

    filtered = search.preview(ns_a, T, filter="cat = 'c1'", limit=5)
    assert filtered.total == 20
    assert set(filtered.rows["cat"]) == {"c1"} and len(filtered.rows) == 5

    append_rows(ns_a, T, make_table(30, dim=DIM, start=100, seed=9))
    assert search.preview(ns_a, T, limit=1000).total == 130
    old = search.preview(ns_a, T, version=1, limit=1000)
    assert old.total == 100 and len(old.rows) == 100
    assert old.rows["id"].max() == 99


def test_preview_abbreviates_vectors(ns_a: LanceNamespace) -> None:
    table = make_table(5, dim=DIM, seed=3)
    create_table(ns_a, T, table)
    shown = search.preview(ns_a, T, columns=["id", "vec"], limit=5).rows["vec"].tolist()
    data = vectors_of(table)
    expected = [
        "[" + ", ".join(f"{float(x):.3g}" for x in row[:3]) + f", … {DIM} dims]" for row in data
    ]
    assert shown == expected


@pytest.mark.parametrize("limit", [0, search.MAX_PREVIEW_ROWS + 1])
def test_preview_limit_is_checked(ns_a: LanceNamespace, limit: int) -> None:
    create_table(ns_a, T, make_table(10))
    with pytest.raises(InvalidInputError):
        search.preview(ns_a, T, limit=limit)


# -- 9. query vectors ------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["1, 2.5, -3", "[1 2.5 -3]", "(1;2.5;-3)", " [1,\n 2.5 , -3e0] "])
def test_parse_vector_reads_pasted_numbers(text: str) -> None:
    assert search.parse_vector(text, 3) == [1.0, 2.5, -3.0]
    assert search.parse_vector(text, None) == [1.0, 2.5, -3.0]


@pytest.mark.parametrize(
    "text", ["1, 2", "1, 2, 3, 4", "1, x, 3", "nan, 1, 2", "1, inf, 2", "", "[]"]
)
def test_parse_vector_refuses(text: str) -> None:
    with pytest.raises(InvalidInputError):
        search.parse_vector(text, 3)


def test_row_vector_by_filter(ns_a: LanceNamespace) -> None:
    table = make_table(20, dim=DIM, seed=8)
    create_table(ns_a, T, table)
    vector, row = search.row_vector(ns_a, T, "vec", filter="_rowid = 5")
    assert row["id"] == 5 and row[search.ROW_ID] == 5
    assert vector == [float(x) for x in vectors_of(table)[5]]
    _, third = search.row_vector(ns_a, T, "vec", filter="cat = 'c2'", offset=1)
    assert third["id"] == 7
    with pytest.raises(InvalidInputError):
        search.row_vector(ns_a, T, "vec", filter="id = 1000")


# -- 10. embeddings -------------------------------------------------------------------------------------
def test_embedding_from_the_table_property(ns_a: LanceNamespace) -> None:
    ns_a.create_table(
        CreateTableRequest(id=T, properties={"embedding.function": embedding.EMBEDDING_FUNCTION}),
        ipc_stream_bytes(make_table(5)),
    )
    create_table(ns_a, ["a", "plain"], make_table(5))
    props = ns_a.describe_table(DescribeTableRequest(id=T)).properties
    assert search.embedding_of(props) == embedding.EMBEDDING_FUNCTION
    text = "create a namespace and list its tables"
    vector = search.embed_text(props, text)
    assert len(vector) == 64 and all(isinstance(x, float) for x in vector)
    assert vector == [float(x) for x in embedding.embed([text])[0]]
    assert math.isclose(float(np.linalg.norm(vector)), 1.0, rel_tol=1e-5)

    plain = ns_a.describe_table(DescribeTableRequest(id=["a", "plain"])).properties
    assert search.embedding_of(plain) is None
    with pytest.raises(InvalidInputError):
        search.embed_text(plain, text)
    assert search.embedding_of({"embedding.function": "someone/else"}) is None
    with pytest.raises(InvalidInputError):
        search.embed_text({"embedding.function": "someone/else"}, text)


# -- 11. build defaults (local) ---------------------------------------------------------------------------
@pytest.mark.parametrize("index_type", ["IVF_PQ", "IVF_HNSW_PQ", "IVF_SQ", "IVF_HNSW_SQ"])
def test_local_default_build_params(local_ns: LanceNamespace, index_type: str) -> None:
    dim, rows = 32, 1000
    create_table(local_ns, T, make_table(rows, dim=dim, seed=5))
    request = CreateTableIndexRequest(id=T, column="vec", index_type=index_type)
    response = local_ns.create_table_index(request)
    context = response.context or {}
    chosen = {
        k[len(rules.CHOSEN_PREFIX) :]: int(v)
        for k, v in context.items()
        if k.startswith(rules.CHOSEN_PREFIX)
    }
    expected_keys = {"num_partitions"} | (
        {"num_sub_vectors"} if index_type in rules.PQ_TYPES else set()
    )
    assert set(chosen) == expected_keys
    assert chosen == rules.chosen_build_params(request, dim, rows)
    defaults = rules.vector_param_defaults(index_type, dim, rows)
    assert chosen["num_partitions"] == defaults["num_partitions"]
    assert chosen["num_partitions"] == rules.default_num_partitions(index_type, rows)
    if index_type in rules.PQ_TYPES:
        assert chosen["num_sub_vectors"] == defaults["num_sub_vectors"]
        assert dim % chosen["num_sub_vectors"] == 0
    assert local_ns.index_requests(T) == {"vec_idx": chosen}
    # lance built what was chosen
    frame = tuning.requested_vs_applied(local_ns, T)
    for name, value in chosen.items():
        row = frame[frame["parameter"] == name].iloc[0]
        assert (row["requested"], row["applied"], row["differs"]) == (str(value), str(value), False)
    found = search.vector_search(local_ns, T, [0.5] * dim, column="vec", k=3)
    assert found.table.num_rows == 3


# -- 12. requested against applied ------------------------------------------------------------------------
def test_requested_vs_applied_local(local_ns: LanceNamespace) -> None:
    create_table(local_ns, T, make_table(2500, dim=DIM, seed=1))
    vector_index(local_ns, T, "IVF_PQ", num_partitions=8, num_sub_vectors=4, distance_type="L2")
    frame = tuning.requested_vs_applied(local_ns, T)
    assert list(frame.columns) == [
        "index", "type", "parameter", "requested", "applied", "differs", "note",
    ]  # fmt: skip
    by_name = {r["parameter"]: r for r in frame.to_dict("records")}
    for name, value in (("num_sub_vectors", "4"), ("num_partitions", "8"), ("distance_type", "l2")):
        row = by_name[name]
        assert (row["requested"], row["applied"], row["differs"]) == (value, value, False), row
        assert row["note"] == "as asked"
    assert by_name["num_bits"]["requested"] == "" and by_name["num_bits"]["applied"] == "8"
    assert not frame["differs"].any()

    small = ["a", "small"]
    create_table(local_ns, small, make_table(300, dim=DIM, seed=2))
    with pytest.warns(UserWarning, match="instead of 64"):
        vector_index(local_ns, small, "IVF_PQ", num_partitions=64, num_sub_vectors=4)
    frame = tuning.requested_vs_applied(local_ns, small)
    row = frame[frame["parameter"] == "num_partitions"].iloc[0]
    assert row["requested"] == "64"
    assert int(row["applied"]) < 64
    assert bool(row["differs"]) is True
    assert "fewer partitions" in row["note"]
    nsv = frame[frame["parameter"] == "num_sub_vectors"].iloc[0]
    assert (nsv["requested"], nsv["applied"], bool(nsv["differs"])) == ("4", "4", False)


def test_requested_vs_applied_rest_records_what_was_sent(rest_server) -> None:
    ns = backend.connect(rest_server.url)
    try:
        ns.create_namespace(CreateNamespaceRequest(id=NS))
        create_table(ns, T, make_table(2500, dim=DIM, seed=1))
        assert ns.index_requests(T) == {}
        request = vector_index(
            ns, T, "IVF_PQ", num_partitions=8, num_sub_vectors=4, distance_type="L2"
        )
        ns.create_table_index(CreateTableIndexRequest(id=T, column="text", index_type="FTS"))
        sent = {"num_partitions": 8, "num_sub_vectors": 4, "distance_type": "l2"}
        assert ns.index_requests(T) == {"vec_idx": sent}
        assert rules.requested_build_fields(request) == sent

        frame = tuning.requested_vs_applied(ns, T)
        assert set(frame["index"]) == {"vec_idx"}  # the FTS index is not a vector index
        by_name = {r["parameter"]: r for r in frame.to_dict("records")}
        for name, value in sent.items():
            assert by_name[name]["requested"] == str(value)
        # applied: what the server's index details say, compared honestly
        listing = ns.list_table_indices(ListTableIndicesRequest(id=T)).indexes
        details = index_details_dict(
            next(i for i in listing if i.index_name == "vec_idx").index_details
        )
        applied_nsv = details["compression"]["num_sub_vectors"]
        row = by_name["num_sub_vectors"]
        assert row["applied"] == str(applied_nsv)
        assert bool(row["differs"]) is (applied_nsv != 4)
        # the spec's answers carry no partition count: unknown, not "as asked"
        assert by_name["num_partitions"]["applied"] == "?"
        assert by_name["num_partitions"]["note"] == "not reported by this backend"

        other = backend.connect(rest_server.url)  # another session: no record
        try:
            assert other.index_requests(T) == {}
        finally:
            other.close()
    finally:
        ns.close()


# -- 13. maintenance --------------------------------------------------------------------------------------
def test_optimize_and_compact(ns_a: LanceNamespace, backend_kind: str) -> None:
    create_table(ns_a, T, make_table(500, dim=DIM, seed=1))
    vector_index(ns_a, T, "IVF_FLAT", num_partitions=4)
    append_rows(ns_a, T, make_table(100, dim=DIM, start=500, seed=2))
    append_rows(ns_a, T, make_table(100, dim=DIM, start=600, seed=3))
    if backend_kind == "rest":
        with pytest.raises(UnsupportedOperationError) as caught:
            tuning.optimize_indexes(ns_a, T)
        assert str(caught.value) == tuning.MAINTENANCE_UNSUPPORTED
        with pytest.raises(UnsupportedOperationError) as caught:
            tuning.compact_files(ns_a, T)
        assert str(caught.value) == tuning.MAINTENANCE_UNSUPPORTED
        return
    overview = index_overview(ns_a, T)
    assert overview.loc[0, "unindexed_rows"] == 200 and overview.loc[0, "indexed_rows"] == 500
    stats = ns_a.describe_table_index_stats(
        DescribeTableIndexStatsRequest(id=T, index_name="vec_idx")
    )
    assert stats.num_unindexed_rows == 200

    done = tuning.optimize_indexes(ns_a, T)
    assert done["version_after"] > done["version_before"]
    stats = ns_a.describe_table_index_stats(
        DescribeTableIndexStatsRequest(id=T, index_name="vec_idx")
    )
    assert (stats.num_indexed_rows, stats.num_unindexed_rows) == (700, 0)
    assert index_overview(ns_a, T).loc[0, "unindexed_rows"] == 0

    fragments_before = len(ns_a.open_dataset(T).get_fragments())
    assert fragments_before == 3
    compacted = tuning.compact_files(ns_a, T)
    assert isinstance(compacted, dict)
    assert compacted["fragments_removed"] == 3 and compacted["fragments_added"] == 1
    assert len(ns_a.open_dataset(T).get_fragments()) == 1
    assert search.count_rows(ns_a, T, version=None, filter=None) == 700
    ids = search.run_query(ns_a, search.query_request(T, k=1000, columns=["id"]))
    assert sorted(ids.column("id").to_pylist()) == list(range(700))
    found = search.vector_search(ns_a, T, [0.5] * DIM, column="vec", k=5)
    assert found.table.num_rows == 5


# -- 14. build A/B on a scratch copy ----------------------------------------------------------------------
def _scratch_dirs() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("lance-console-ab-*")}


@pytest.fixture
def own_tempdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's own temporary folder for Build A/B's scratch copies: another test worker's
    comparison, running meanwhile in the shared one, is not counted as this test's leftover."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_build_ab_leaves_the_table_alone(ns_a: LanceNamespace, own_tempdir: Path) -> None:
    create_table(ns_a, T, make_table(1500, dim=DIM, seed=7))
    vector_index(ns_a, T, "IVF_FLAT", num_partitions=2)

    def state() -> tuple[list, list]:
        indexes = ns_a.list_table_indices(ListTableIndicesRequest(id=T)).indexes
        versions = ns_a.list_table_versions(ListTableVersionsRequest(id=T)).versions
        return (
            sorted((i.index_name, i.index_uuid, i.num_indexed_rows) for i in indexes),
            sorted((v.version, v.manifest_path) for v in versions),
        )

    before, scratch_before = state(), _scratch_dirs()
    progress: list[tuple[str, float]] = []
    seen_during: set[str] = set()

    def report(stage: str, fraction: float) -> None:
        progress.append((stage, fraction))
        seen_during.update(_scratch_dirs() - scratch_before)

    configs = [
        {"index_type": "IVF_PQ", "num_partitions": 4, "num_sub_vectors": 4},
        {"index_type": "IVF_FLAT", "num_partitions": 4},
    ]
    frame = tuning.build_ab(
        ns_a, T, column="vec", configs=configs, sample_rows=1000, queries=10, progress=report
    )
    assert list(frame.columns) == [
        "config", "recall", "p50_ms", "size_bytes", "build_s", "rows", "metric", "brute_force",
    ]  # fmt: skip
    assert frame["metric"].tolist() == ["l2", "l2"]  # the table's own index: lance's default
    assert not frame["brute_force"].any()
    assert frame["config"].tolist() == ["IVF_PQ 4×4", "IVF_FLAT num_partitions=4"]
    assert frame["recall"].between(0.0, 1.0).all()
    assert frame.loc[1, "recall"] >= frame.loc[0, "recall"]  # raw vectors vs 4 sub-vectors
    assert (frame["size_bytes"] > 0).all() and (frame["build_s"] > 0).all()
    assert (frame["p50_ms"] > 0).all()
    assert frame["rows"].tolist() == [1000, 1000]

    assert state() == before
    assert seen_during, "no scratch directory was seen while the comparison ran"
    assert not (_scratch_dirs() - scratch_before)
    fractions = [f for _, f in progress]
    assert fractions[0] == 0.0 and fractions[-1] == 1.0
    assert fractions == sorted(fractions)


def test_build_ab_default_sample_on_a_small_table(ns_a: LanceNamespace) -> None:
    """The default sample (20,000 rows) is more than one QueryTable may return (k at most
    ``query_rules.MAX_K``): a smaller table is copied whole."""
    create_table(ns_a, T, make_table(1500, dim=DIM, seed=7))
    frame = tuning.build_ab(
        ns_a, T, column="vec", configs=[{"index_type": "IVF_FLAT", "num_partitions": 2}],
        queries=5,
    )  # fmt: skip
    assert frame["rows"].tolist() == [1500]
    assert 0.0 <= frame.loc[0, "recall"] <= 1.0


def test_build_ab_reads_the_sample_in_pages(
    ns_a: LanceNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sample larger than one QueryTable answer is read in several queries (the cap is
    lowered here so that a small table needs three pages)."""
    monkeypatch.setattr(query_rules, "MAX_K", 100)
    create_table(ns_a, T, make_table(300, dim=DIM, seed=7))
    frame = tuning.build_ab(
        ns_a, T, column="vec", configs=[{"index_type": "IVF_FLAT", "num_partitions": 2}],
        sample_rows=250, queries=5,
    )  # fmt: skip
    assert frame["rows"].tolist() == [250]


def test_build_ab_refuses_bad_configs(ns_a: LanceNamespace, own_tempdir: Path) -> None:
    create_table(ns_a, T, make_table(300, dim=DIM))
    scratch_before = _scratch_dirs()
    with pytest.raises(InvalidInputError):
        tuning.build_ab(ns_a, T, column="vec", configs=[])
    with pytest.raises(InvalidInputError):
        tuning.build_ab(ns_a, T, column="text", configs=[{"index_type": "IVF_FLAT"}])
    with pytest.raises(InvalidInputError):
        tuning.build_ab(
            ns_a, T, column="vec", configs=[{"index_type": "IVF_FLAT", "num_sub_vectors": 4}],
            sample_rows=300, queries=5,
        )  # fmt: skip
    assert not (_scratch_dirs() - scratch_before)


# -- 15. shareable settings and snippets --------------------------------------------------------------------
def test_share_params_round_trip() -> None:
    params = {
        "distance_type": "cosine", "nprobes": 8, "minimum_nprobes": 2, "maximum_nprobes": 16,
        "refine_factor": 3, "ef": 64, "fast_search": True, "bypass_vector_index": False,
        "prefilter": True,
    }  # fmt: skip
    shared = tuning.share_params("vec", 10, {**params, "refine_factor": 3, "unknown": 1})
    assert all(isinstance(v, str) for v in shared.values())
    assert shared["fast_search"] == "true" and shared["bypass_vector_index"] == "false"
    assert "unknown" not in shared
    assert tuning.parse_share_params(shared) == {"column": "vec", "k": 10, **params}
    assert tuning.parse_share_params({**shared, "page": "search", "nprobes": ""})["k"] == 10
    assert "nprobes" not in tuning.parse_share_params({**shared, "nprobes": ""})
    assert tuning.share_params("vec", 5, {"nprobes": None}) == {"column": "vec", "k": "5"}


@pytest.mark.parametrize(
    "bad",
    [
        {"nprobes": "0"}, {"nprobes": "abc"}, {"nprobes": "1.5"}, {"fast_search": "maybe"},
        {"k": "0"}, {"distance_type": "manhattan"},
        {"minimum_nprobes": "9", "maximum_nprobes": "3"},
    ],
)  # fmt: skip
def test_parse_share_params_refuses(bad: dict) -> None:
    with pytest.raises(InvalidInputError):
        tuning.parse_share_params({"column": "vec", "k": "10", **bad})


@pytest.mark.parametrize(
    "params",
    [
        {"nprobes": 2, "refine_factor": 2},
        {"nprobes": 2, "fast_search": False, "prefilter": True},
        {"bypass_vector_index": True},
        {"distance_type": "cosine"},
        {},
    ],
)
def test_python_snippets_run(local_ns: LanceNamespace, local_root: Path, params: dict) -> None:
    create_table(local_ns, T, make_table(200, dim=DIM, seed=3))
    vector_index(local_ns, T, "IVF_FLAT", num_partitions=2)
    k = 7
    connect = f"ns = backend.connect({str(local_root)!r})"
    console, pylance = tuning.python_snippets(connect, T, "vec", k, params)
    assert "search.query_request" in console and connect in console
    assert "lance.dataset(location)" in pylance

    # as pasted: nothing predefined (every name the snippets use, they define)
    scope: dict = {}
    exec(compile(pylance, "<pylance snippet>", "exec"), scope)
    plain = scope["rows"]
    assert plain.num_rows == k and search.DISTANCE in plain.column_names
    assert scope["location"].rstrip("/").endswith(table_location(local_ns, T).name)

    scope = {}
    exec(compile(console, "<console snippet>", "exec"), scope)
    ours = scope["rows"]
    assert ours.num_rows == k
    assert ours.column("id").to_pylist() == plain.column("id").to_pylist()


# -- 16. background tasks --------------------------------------------------------------------------------
def test_task_registry() -> None:
    tasks = TaskRegistry()
    release, reported = threading.Event(), threading.Event()

    def blocked(progress):
        progress("halfway", 0.5)
        reported.set()
        assert release.wait(10)
        progress("almost", 0.9)
        return {"answer": 42}

    task_id = tasks.start("build_ab", "blocked task", T, blocked)
    assert reported.wait(10)
    running = tasks.get(task_id)
    assert running is not None and running.status == "running" and not running.done
    assert (running.stage, running.fraction) == ("halfway", 0.5)
    assert running.table_id == tuple(T) and running.kind == "build_ab"
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        tasks.wait(task_id, timeout=0.2)
    assert time.monotonic() - started < 5
    release.set()
    done = tasks.wait(task_id, timeout=10)
    assert done.status == "succeeded" and done.done
    assert done.result == {"answer": 42} and done.error is None
    assert (done.stage, done.fraction) == ("done", 1.0)
    assert done.finished_at is not None and done.elapsed >= 0

    def failing(progress):
        progress("going", 0.3)
        raise ValueError("boom")

    failed = tasks.wait(tasks.start("optimize", "failing task", T, failing), timeout=10)
    assert failed.status == "failed" and failed.done
    assert isinstance(failed.error, ValueError) and str(failed.error) == "boom"
    assert failed.result is None
    assert failed.fraction == pytest.approx(0.3)

    assert tasks.get("no-such-task") is None
    with pytest.raises(KeyError):
        tasks.wait("no-such-task", timeout=1)


def test_task_registry_forgets_old_finished_tasks_only() -> None:
    tasks = TaskRegistry(max_tasks=2)
    done = [
        tasks.wait(tasks.start("x", f"t{i}", T, lambda p, i=i: i), timeout=10) for i in range(3)
    ]
    assert [t.result for t in done] == [0, 1, 2]
    fourth = tasks.start("x", "t3", T, lambda p: 3)
    assert tasks.wait(fourth, timeout=10).result == 3
    kept = [tasks.get(t.task_id) is not None for t in done]
    assert kept == [False, False, True]

    tasks = TaskRegistry(max_tasks=1)
    release = threading.Event()
    blocked = tasks.start("x", "blocked", T, lambda p: release.wait(10))
    quick = tasks.start("x", "quick", T, lambda p: "quick")
    tasks.wait(quick, timeout=10)
    tasks.start("x", "another", T, lambda p: "another")
    running = tasks.get(blocked)
    assert running is not None and running.status == "running"  # never dropped while running
    assert tasks.get(quick) is None
    release.set()
    assert tasks.wait(blocked, timeout=10).result is True


# -- 17. the demo's passages table ----------------------------------------------------------------------
@pytest.mark.slow
def test_demo_passages_table_tunes(tmp_path: Path) -> None:
    summary = demo.create_demo_namespace(demo_copy(tmp_path / "demo"))
    assert demo.PASSAGES_ID in summary.tables
    ns = backend.connect(str(tmp_path / "demo"))
    table_id = demo.PASSAGES_ID
    desc = ns.describe_table(DescribeTableRequest(id=table_id, load_detailed_metadata=True))
    assert (desc.properties or {}).get("embedding.function") == embedding.EMBEDDING_FUNCTION
    assert search.count_rows(ns, table_id, version=None, filter=None) >= 20_000
    info = tuning.vector_column(ns, table_id, "vector")
    assert info.kind == "vector" and info.dim == 64
    types = {
        rules.normalize_index_type(i.index_type)
        for i in ns.list_table_indices(ListTableIndicesRequest(id=table_id)).indexes
    }
    assert {"IVF_PQ", "FTS"} <= types

    frame = tuning.sweep(ns, table_id, column="vector", grid={"nprobes": [1, 32]}, sample=20, k=10)
    by_probes = dict(zip(frame["nprobes"].tolist(), frame["recall"].tolist(), strict=True))
    assert by_probes[32] > by_probes[1]

    # a query embedded the table's own way finds the passages that say it
    vector = search.embed_text(desc.properties, "regular expression pattern")
    found = search.vector_search(ns, table_id, vector, column="vector", k=5, nprobes=32)
    assert found.table.num_rows == 5
    assert re.search(
        r"regular|expression|pattern", " ".join(found.table.column("passage").to_pylist())
    )


# -- local QueryTable on tables kept open ----------------------------------------------------------
def _ids(ns: LanceNamespace, table_id: list[str], **fields) -> list[int]:
    request = search.query_request(table_id, k=100, columns=["id"], **fields)
    return sorted(search.run_query(ns, request).column("id").to_pylist())


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
        search.run_query(ours, search.query_request(T, k=5))
    assert _ids(ours, moved) == [0, 1, 2]
    create_table(other, T, make_table(2, start=100))
    quiet(40)
    assert _ids(ours, T) == [100, 101]
    other.drop_table(DropTableRequest(id=moved))
    quiet(30)
    with pytest.raises(TableNotFoundError):
        search.run_query(ours, search.query_request(moved, k=5))
    create_table(other, T[:1] + ["third"], make_table(1, start=7))  # right after: not quiet
    assert _ids(ours, [*NS, "third"]) == [7]


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
        search.run_query(local_ns, search.query_request(T, k=5, filter="no_such_column > 1"))
    assert "no_such_column" in str(bad_filter.value)
    with pytest.raises(LanceNamespaceError):
        search.run_query(local_ns, search.query_request(T, k=5, version=99))
    with pytest.raises(TableNotFoundError):
        search.run_query(local_ns, search.query_request(["a", "missing"], k=5))


# -- recall intervals ----------------------------------------------------------------------------------
def test_recall_interval_is_the_t_interval_and_holds_its_mean() -> None:
    # 50 queries, 45 perfect and 5 at 0.5: mean 0.95, s by numpy, t(0.975, 49) = 2.010 (table)
    per_query = [1.0] * 45 + [0.5] * 5
    low, high = tuning.recall_interval(per_query)
    half = 2.0096 * np.std(per_query, ddof=1) / np.sqrt(50)
    assert low == pytest.approx(0.95 - half, abs=1e-4)
    assert high == pytest.approx(0.95 + half, abs=1e-4)
    # 50 perfect queries: no spread, the point itself
    assert tuning.recall_interval([1.0] * 50) == (1.0, 1.0)
    low, high = tuning.recall_interval([0.5] * 4 + [0.0, 1.0])
    assert 0.0 <= low < 0.5 < high <= 1.0
    assert all(np.isnan(tuning.recall_interval([])))
    assert all(np.isnan(tuning.recall_interval([0.9])))  # one query: no interval
    with pytest.raises(InvalidInputError):
        tuning.recall_interval([1.0, 0.5], level=1.5)
    # the interval holds its mean for every sample size, inside [0, 1]
    rng = np.random.default_rng(5)
    for n in range(2, 201):
        for per_query in ([1.0] * n, [0.0] * n, [0.9975] * n, list(rng.integers(0, 11, n) / 10)):
            low, high = tuning.recall_interval(per_query)
            mean = statistics.fmean(per_query)
            assert 0.0 <= low <= mean <= high <= 1.0, (n, mean, low, high)


def test_recall_interval_covers_the_true_mean() -> None:
    # per-query recall@10 drawn from a known distribution (binomial hits / 10): the 95% interval
    # must cover the true mean in 93-97% of 2000 independent samples of 50 queries
    rng = np.random.default_rng(7)
    for true_p in (0.6, 0.9, 0.95):
        covered = 0
        for _ in range(2000):
            per_query = rng.binomial(10, true_p, size=50) / 10
            low, high = tuning.recall_interval(per_query.tolist())
            covered += low <= true_p <= high
        assert 0.93 <= covered / 2000 <= 0.97, (true_p, covered)


def test_cheapest_is_judged_on_the_lower_bound() -> None:
    # a setting at exactly the target over 50 queries is not "reaching" it with confidence
    at_target = [1.0] * 45 + [0.5] * 5  # mean 0.95
    safe = [1.0] * 48 + [0.9] * 2  # mean 0.996
    rows = []
    for nprobes, per_query, p50 in ((4, at_target, 1.0), (16, safe, 3.0)):
        low, high = tuning.recall_interval(per_query)
        rows.append(
            {"nprobes": nprobes, "recall": float(np.mean(per_query)), "recall_low": low,
             "recall_high": high, "p50_ms": p50, "brute_force": False}
        )  # fmt: skip
    frame = pd.DataFrame(rows)
    assert frame["recall"].iloc[0] == pytest.approx(0.95)
    # the safe setting's lower bound: 0.996 - t(0.975, 49)·s/√50 (numpy, table t 2.0096)
    safe_low = 0.996 - 2.0096 * np.std(safe, ddof=1) / np.sqrt(50)
    assert frame["recall_low"].iloc[1] == pytest.approx(safe_low, abs=1e-4)
    assert frame["recall_low"].iloc[0] < 0.95 < safe_low < 0.991
    best = tuning.cheapest(frame, 0.95)
    assert best is not None and best["nprobes"] == 16
    assert tuning.cheapest(frame, 0.991) is None  # neither lower bound reaches it
    # a setting measured on one query has no interval and reaches nothing
    single = pd.DataFrame([{**rows[1], "recall_low": np.nan, "recall_high": np.nan}])
    assert tuning.cheapest(single, 0.5) is None


# -- more queries: another batch merged into a recall measurement ------------------------------------
def test_more_queries_merge_into_the_measurement(ns_a: LanceNamespace, backend_kind: str) -> None:
    """A second batch of rows never sampled before, measured with the first's settings: the
    merged mean is the brute-force (numpy) recall of the ANN search over all those rows, and
    the 95% interval is the t interval of all of their per-query recalls."""
    table = make_table(2000, dim=DIM, seed=11)
    data = vectors_of(table)
    create_table(ns_a, T, table)
    vector_index(ns_a, T, "IVF_PQ", num_partitions=8, num_sub_vectors=4, distance_type="l2")
    k, params = 10, {"nprobes": 2}
    first = tuning.recall(ns_a, T, column="vec", k=k, sample=15, seed=3, **params)
    assert len(first.query_rows) == len(set(first.query_rows)) == 15
    seen: list[tuple[int, int]] = []
    merged = tuning.more_queries(
        ns_a, T, first, sample=45, progress=lambda d, t: seen.append((d, t))
    )
    assert seen[-1] == (90, 90)  # the new batch only: exact, then ANN, of each new row
    rows = merged.query_rows
    assert rows[:15] == first.query_rows and merged.per_query[:15] == first.per_query
    assert len(rows) == len(set(rows)) == len(merged.per_query) == 60  # none used twice
    assert merged.k == k and merged.query_params == params and merged.metric == "l2"
    assert len(merged.ann_ms) == len(merged.exact_ms) == 60

    # independent ground truth: numpy's exact neighbours, and the ANN answers asked here (row
    # ids are positions and ids in a freshly written table)
    expected = []
    for row in rows:
        truth = set(numpy_neighbours(data, row, k))
        found = ann_ids(ns_a, row, [float(x) for x in data[row]], k, **params)
        expected.append(len(truth & set(found)) / k)
    assert merged.mean == pytest.approx(float(np.mean(expected)), abs=1e-12)
    assert merged.mean == pytest.approx(statistics.fmean(merged.per_query))
    if backend_kind == "local":
        assert merged.mean < 1.0  # 8 partitions, 2 probed: a real ANN figure, not exact search

    # the 95% intervals: mean ± t·s/√n of numpy's per-query recalls, the first 15 (t(0.975, 14)
    # = 2.1448 from the table) and all 60 (t(0.975, 59) = 2.0010), clipped to [0, 1]
    for result, values, t in ((first, expected[:15], 2.1448), (merged, expected, 2.0010)):
        half = t * np.std(values, ddof=1) / np.sqrt(len(values))
        bounds = (max(0.0, np.mean(values) - half), min(1.0, np.mean(values) + half))
        assert result.interval == pytest.approx(bounds, abs=1e-4)

    again = tuning.more_queries(ns_a, T, first, sample=45)  # the same batch: reproducible
    assert again.query_rows == merged.query_rows


def test_more_queries_needs_rows_left_and_recorded_queries(ns_a: LanceNamespace) -> None:
    create_table(ns_a, T, make_table(30, dim=DIM, seed=1))
    first = tuning.recall(ns_a, T, column="vec", k=3, sample=20, seed=0, bypass_vector_index=True)
    rest = tuning.more_queries(ns_a, T, first, sample=50)  # only 10 rows left: all of them
    assert sorted(rest.query_rows) == list(range(30)) and rest.mean == 1.0
    with pytest.raises(InvalidInputError, match="already a query"):
        tuning.more_queries(ns_a, T, rest, sample=5)
    bare = tuning.RecallResult(k=3, per_query=[1.0], ann_ms=[1.0], exact_ms=[1.0])
    with pytest.raises(InvalidInputError, match="does not record its queries"):
        tuning.more_queries(ns_a, T, bare, sample=5)


# -- numbers as typed, probes beyond the partitions, a text in a shared link ----------------------


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


def test_probes_beyond_the_partitions_of_an_index(ns_a) -> None:
    ns = ns_a
    from backend.services.index_overview import ivf_partitions

    create_table(ns, T, make_table(600, dim=8, seed=2))
    ns.create_table_index(
        rules.build_index_request(T, "vec", "IVF_FLAT", params={"num_partitions": 3}, dim=8)
    )
    known = ivf_partitions(ns, T, "vec_idx")
    if backend.capabilities(ns).kind == "local":
        location = ns.describe_table(DescribeTableRequest(id=T)).location
        assert (
            known
            == lance.dataset(location).stats.index_stats("vec_idx")["indices"][0]["num_partitions"]
            == 3
        )
    else:
        assert known is None  # the spec's index stats carry no partition count: no warning
    assert query_rules.probes_beyond_partitions({"nprobes": 3}, 3) is None
    note = query_rules.probes_beyond_partitions({"nprobes": 8, "minimum_nprobes": 4}, 3)
    assert note is not None and note.startswith("nprobes 8 and minimum_nprobes 4: the index has 3")
    assert query_rules.probes_beyond_partitions({"nprobes": 8}, None) is None


def test_a_shared_text_round_trips() -> None:
    shared = tuning.share_params("vec", 5, {"nprobes": 2}, text="river mountain")
    assert shared["text"] == "river mountain"
    assert tuning.parse_share_params(shared) == {
        "column": "vec", "k": 5, "nprobes": 2, "text": "river mountain",
    }  # fmt: skip
    with pytest.raises(InvalidInputError, match="longer than"):
        tuning.parse_share_params({**shared, "text": "x" * (query_rules.MAX_QUERY_TEXT + 1)})
