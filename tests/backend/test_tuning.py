"""Tuning (``backend.services.tuning``): recall against numpy ground truth, the metric every
measurement uses, sweeps and the cheapest setting, bad arguments, index build defaults,
requested against applied build parameters, index maintenance, build A/B comparisons, recall
intervals and more queries, and the demo's passages table.

Most tests run on both backends through the ``ns`` fixture (``tests/conftest.py``): a real
local directory namespace and a real ``lance.namespace.RestAdapter`` server. Where the REST
server (pylance's ``DirectoryNamespace`` behind the adapter) legitimately differs, the test
says what it asserts for each backend: the server ignores vector build parameters (it builds one IVF
partition and its own number of PQ sub-vectors whatever is asked).
"""

from __future__ import annotations

import re
import statistics
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import lance
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from lance_namespace import (
    CreateNamespaceRequest,
    CreateTableIndexRequest,
    DescribeTableIndexStatsRequest,
    DescribeTableRequest,
    LanceNamespace,
    ListTableIndicesRequest,
    ListTableVersionsRequest,
    QueryTableRequest,
)
from lance_namespace.errors import (
    InvalidInputError,
    TableVersionNotFoundError,
    UnsupportedOperationError,
)

import backend
from backend.demo import data as demo
from backend.rules import index_rules as rules
from backend.rules import query_rules
from backend.services.index_overview import index_details_dict, index_overview
from backend.services.search.embedding import embed_text
from backend.services.search.plans import explain, parse_plan, plan_summary
from backend.services.search.query import DISTANCE, count_rows, query_request, run_query
from backend.services.search.vector import index_metric, vector_search
from backend.services.tuning import measure as measure_module
from backend.services.tuning.applied import requested_vs_applied
from backend.services.tuning.builds import build_ab
from backend.services.tuning.measure import (
    MAX_K,
    RecallResult,
    _neighbours,
    more_queries,
    recall,
    recall_interval,
    sample_queries,
    vector_column,
)
from backend.services.tuning.optimize import (
    MAINTENANCE_UNSUPPORTED,
    compact_files,
    optimize_indexes,
)
from backend.services.tuning.sweeps import (
    MAX_GRID_POINTS,
    SWEEP_COLUMNS,
    cheapest,
    fastest,
    grid_points,
    less_work,
    pareto_front,
    setting_params,
    sweep,
)
from components.search.share_url import parse_share_params, share_params
from components.snippets import search_snippets
from tests import support as tests_support
from tests.backend.search_support import (
    DIM,
    NS,
    T,
    numpy_neighbours,
    vector_index,
    vectors_of,
)
from tests.support import append_rows, create_table, demo_copy, make_table, table_location


# -- recall against numpy ground truth ------------------------------------------------------------
def test_a_table_of_one_row_has_no_recall_to_measure(ns_a: LanceNamespace) -> None:
    """Each sampled row is searched without itself: in a table of one row it has no neighbour,
    and its recall would be 0 of 0 (it was shown as 0.00). Refused, saying why."""
    create_table(ns_a, T, make_table(1, dim=DIM, seed=1))
    with pytest.raises(InvalidInputError, match="the table has 1 row: recall searches each"):
        recall(ns_a, T, column="vec", k=5, sample=3, bypass_vector_index=True)


def test_queries_of_a_table_longer_than_a_position_reaches_are_drawn_among_its_first_rows(
    ns_a: LanceNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row is sampled by its position (QueryTable's offset, ``query_rules.MAX_OFFSET`` at
    most): a longer table's queries are drawn among its first rows, and the result says how
    many of how many (a table of 13 million rows was refused with "offset must be between 0
    and 10,000,000"). The same rule with a bound of 40 rows, on 300."""
    table = make_table(300, dim=DIM, seed=2)
    create_table(ns_a, T, table)
    monkeypatch.setattr(measure_module, "SAMPLED_ROWS_AT_MOST", 40)
    result = recall(ns_a, T, column="vec", k=5, sample=30, seed=1, bypass_vector_index=True)
    assert len(result.positions) == 30 and max(result.positions) < 40
    assert result.drawn_among == (40, 300)
    assert result.per_query == [1.0] * 30  # exact against exact, over the whole table
    assert result.query_rows == result.positions  # row ids are positions in a new table
    swept = sweep(ns_a, T, column="vec", k=5, sample=30, seed=1, grid={"nprobes": [1]})
    assert swept.attrs["drawn_among"] == (40, 300)
    assert swept.attrs["version"] == result.query_params["version"]
    monkeypatch.setattr(measure_module, "SAMPLED_ROWS_AT_MOST", 300)
    whole = recall(ns_a, T, column="vec", k=5, sample=30, seed=1, bypass_vector_index=True)
    assert whole.drawn_among is None
    swept = sweep(ns_a, T, column="vec", k=5, sample=30, seed=1, grid={"nprobes": [1]})
    assert swept.attrs["drawn_among"] is None


def test_exact_recall_matches_numpy_ground_truth(ns_a: LanceNamespace) -> None:
    table = make_table(2000, dim=DIM, seed=11)
    data = vectors_of(table)
    create_table(ns_a, T, table)
    vector_index(
        ns_a, T, "IVF_PQ", num_partitions=4, num_sub_vectors=4, distance_type="l2"
    )  # a REST server may ignore the build parameters: exact search does not care
    k, sample, seed = 10, 12, 5

    queries = sample_queries(ns_a, T, "vec", sample, seed)
    assert len(queries) == sample
    assert len({q.row_id for q in queries}) == sample
    for q in queries:  # row ids are positions in a freshly written table: check the mapping
        assert q.vector == [float(x) for x in data[q.row_id]]
        truth = numpy_neighbours(data, q.row_id, k)
        ids, ms = _neighbours(ns_a, T, q, "vec", k, {"bypass_vector_index": True})
        assert ms > 0
        assert q.row_id not in ids
        assert set(ids) == set(truth)
        # the distances lance reports are the squared L2 distances numpy computes
        found = vector_search(ns_a, T, q.vector, column="vec", k=k + 1, bypass_vector_index=True)
        got = found.table.column(DISTANCE).to_numpy()
        expected = np.sort(((data.astype(np.float64) - data[q.row_id]) ** 2).sum(axis=1))[: k + 1]
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)

    result = recall(ns_a, T, column="vec", k=k, sample=sample, seed=seed, bypass_vector_index=True)
    assert result.k == k
    assert len(result.per_query) == sample
    assert all(isinstance(v, float) for v in result.per_query)
    assert result.per_query == [1.0] * sample
    assert result.mean == 1.0
    assert result.std == 0.0
    assert result.ann_p50_ms > 0 and result.exact_p50_ms > 0
    assert len(result.ann_ms) == len(result.exact_ms) == sample
    # every search read one version, the latest as the measurement started (lance's own)
    latest = lance.dataset(str(table_location(ns_a, T))).version
    assert result.query_params == {"bypass_vector_index": True, "version": latest}


# -- weak settings, monotone probes ---------------------------------------------------------------------
def test_more_probes_never_lose_recall(ns_a: LanceNamespace, backend_kind: str) -> None:
    """IVF_FLAT keeps the raw vectors: probing more partitions only adds exact candidates, so
    recall cannot drop, and probing every partition is exact search."""
    create_table(ns_a, T, make_table(2000, dim=DIM, seed=2))
    vector_index(ns_a, T, "IVF_FLAT", num_partitions=16)
    probes = [1, 2, 4, 8, 16]
    frame = sweep(ns_a, T, column="vec", k=10, sample=20, seed=1, grid={"nprobes": probes})
    assert frame["nprobes"].tolist() == probes
    recalls = frame["recall"].tolist()
    assert all(a <= b + 1e-12 for a, b in zip(recalls, recalls[1:], strict=False)), recalls
    assert recalls[-1] == 1.0  # every partition probed (the server's single one included)
    weak = recall(ns_a, T, column="vec", k=10, sample=20, seed=1, nprobes=1)
    assert weak.mean == pytest.approx(recalls[0])
    if backend_kind == "local":
        # 16 partitions really built: one probe misses neighbours in the other partitions
        assert weak.mean < 1.0
        assert min(weak.per_query) < 1.0


# -- every measurement uses the metric of the index being measured -----------------------------------
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
    ids = run_query(ns, request).column("id").to_pylist()
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
    assert index_metric(ns_a, T, "vec") == metric
    k, sample, seed = 10, 20, 3
    queries = sample_queries(ns_a, T, "vec", sample, seed)

    # exact search (bypass) without a distance: the index's metric, its distances numpy's
    for q in queries[:5]:
        found = vector_search(
            ns_a, T, q.vector, column="vec", k=k + 1, bypass_vector_index=True, columns=["id"]
        )
        assert found.metric is not None and found.metric.metric == metric
        assert found.metric.source == "the index's"
        assert found.request.distance_type == metric
        ids = [i for i in found.table.column("id").to_pylist() if i != q.row_id][:k]
        assert set(ids) == set(tests_support.metric_neighbours(data, q.row_id, k, metric))
        expected = np.sort(tests_support.metric_distances(data, data[q.row_id], metric))
        got = found.table.column(DISTANCE).to_numpy()
        np.testing.assert_allclose(got, expected[: k + 1], rtol=1e-3, atol=1e-3)

    # recall: the console's figure against numpy ground truth of the same ANN answers
    result = recall(ns_a, T, column="vec", k=k, sample=sample, seed=seed, nprobes=1)
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
    frame = sweep(ns_a, T, column="vec", k=k, sample=sample, seed=seed, grid={"nprobes": [1]})
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
    result = recall(ns_a, T, column="vec", k=k, sample=10, seed=1, distance_type="l2")
    assert (result.metric, result.index_metric) == ("l2", metric)
    assert result.brute_force is not None and "incompatible with index metric" in result.brute_force
    assert result.per_query == [1.0] * 10  # brute force against brute force
    frame = sweep(
        ns_a, T, column="vec", k=k, sample=5, seed=1, grid={"distance_type": [None, "l2"]}
    )
    assert frame["metric"].tolist() == [metric, "l2"]
    assert frame["brute_force"].tolist() == [False, True]
    assert cheapest(frame, 0.0)["metric"] == metric  # brute force is no index setting

    q = sample_queries(ns_a, T, "vec", 1, 0)[0]
    found = vector_search(ns_a, T, q.vector, column="vec", k=k, distance_type="l2")
    assert found.metric is not None and found.metric.mismatch
    assert "incompatible with index metric" in (found.brute_force_reason or "")
    ids = [int(i) for i in found.table.column("id").to_pylist()]
    assert set(ids) - {q.row_id} <= set(tests_support.metric_neighbours(data, q.row_id, k, "l2"))
    plan = plan_summary(parse_plan(explain(ns_a, found.request)))
    assert plan["brute_force"] is True and plan["index_used"] is False
    own = vector_search(ns_a, T, q.vector, column="vec", k=k)
    assert own.brute_force_reason is None
    assert plan_summary(parse_plan(explain(ns_a, own.request)))["index_used"]


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
    frame = build_ab(
        ns_a, T, column="vec", configs=configs, sample_rows=1000, queries=10,
        query_params={"nprobes": 2},
    )  # fmt: skip
    assert frame["metric"].tolist() == ["cosine", "dot"]
    assert frame["recall"].tolist() == [1.0, 1.0]
    assert frame["brute_force"].tolist() == [False, False]
    other = build_ab(
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
    q = sample_queries(local_ns, T, "vec", 1, 4)[0]
    found = vector_search(local_ns, T, q.vector, column="vec", k=10, bypass_vector_index=True)
    assert found.metric is not None and found.metric.metric == "hamming"
    expected = np.sort(tests_support.metric_distances(data, data[q.row_id], "hamming"))[:10]
    np.testing.assert_array_equal(found.table.column(DISTANCE).to_numpy(), expected)
    result = recall(local_ns, T, column="vec", k=5, sample=5, nprobes=2)
    assert (result.metric, result.index_metric, result.brute_force) == ("hamming", "hamming", None)
    assert 0.0 <= result.mean <= 1.0


# -- sweep frames, Pareto front, cheapest setting ---------------------------------------------------
@pytest.fixture
def flat_table(ns_a: LanceNamespace) -> LanceNamespace:
    create_table(ns_a, T, make_table(600, dim=DIM, seed=4))
    vector_index(ns_a, T, "IVF_FLAT", num_partitions=4)
    return ns_a


def test_sweep_frame_has_one_row_per_combination(flat_table: LanceNamespace) -> None:
    grid = {"nprobes": [1, 4, None], "refine_factor": [None, 2]}
    calls: list[tuple[int, int]] = []
    frame = sweep(
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
    frame = sweep(flat_table, T, column="vec", k=5, sample=4, grid={"nprobes": [1, None]})
    params = setting_params(frame.iloc[0], keys)
    assert params == {"nprobes": 1}
    assert type(params["nprobes"]) is int, f"nprobes came back as {params['nprobes']!r}"
    request = query_request(T, vector=[0.5] * DIM, vector_column="vec", k=5, **params)
    assert request.nprobes == 1
    assert parse_share_params(share_params("vec", 5, params))["nprobes"] == 1
    search_snippets("ns = backend.connect('x')", T, "vec", 5, params)
    assert setting_params(frame.iloc[1], keys) == {}


def test_sweep_without_a_grid_measures_the_base_setting(flat_table: LanceNamespace) -> None:
    frame = sweep(flat_table, T, column="vec", k=5, sample=4, nprobes=4)
    assert list(frame.columns) == list(SWEEP_COLUMNS)
    assert len(frame) == 1
    assert frame.loc[0, "recall"] == 1.0  # 4 probes of 4 IVF_FLAT partitions: exact


class ColdFirstReads:
    """The namespace under test, with every search slow the first time it is sent (the same
    vector with the same fields): what an engine pays to read an index's partitions, or a
    server its copy of the table, before they are cached. Every other call goes through."""

    # several times a warm search on a loaded machine (a warm REST search took 41 ms while
    # other suites ran beside this one): warm and cold are told apart by far
    COLD_S = 0.15

    def __init__(self, inner: LanceNamespace) -> None:
        self._inner = inner
        self._seen: set[str] = set()

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def _first(self, request: QueryTableRequest) -> None:
        if request.vector is not None:
            seen = request.model_dump_json()
            if seen not in self._seen:
                self._seen.add(seen)
                time.sleep(self.COLD_S)

    def query_table_arrow(self, request: QueryTableRequest) -> pa.Table:
        self._first(request)
        return run_query(self._inner, request)

    def query_table(self, request: QueryTableRequest) -> bytes:
        self._first(request)
        return self._inner.query_table(request)


def test_latencies_are_timed_warm_whatever_goes_first(flat_table: LanceNamespace) -> None:
    """A search is slow the first time (``ColdFirstReads``): every setting of a sweep, and a
    recall's ANN and exact searches, are timed warm, so the setting measured first is not the
    slower for going first (the sweep's cheapest would be picked by the order)."""
    cold_ms = ColdFirstReads.COLD_S * 1000
    frame = sweep(
        ColdFirstReads(flat_table), T, column="vec", k=5, sample=2, grid={"nprobes": [1, 4]}
    )
    assert (frame["p95_ms"] < cold_ms).all(), frame[["nprobes", "p50_ms", "p95_ms"]]
    measured = recall(ColdFirstReads(flat_table), T, column="vec", k=5, sample=2, nprobes=1)
    assert max(measured.ann_ms) < cold_ms and max(measured.exact_ms) < cold_ms
    assert len(measured.ann_ms) == len(measured.exact_ms) == 2


def test_sweep_grid_is_checked(flat_table: LanceNamespace) -> None:
    with pytest.raises(InvalidInputError, match="bogus"):
        sweep(flat_table, T, column="vec", sample=3, grid={"bogus": [1]})
    with pytest.raises(InvalidInputError, match="at most"):
        sweep(
            flat_table, T, column="vec", sample=3,
            grid={"nprobes": list(range(1, 21)), "refine_factor": list(range(1, 12))},
        )  # fmt: skip
    with pytest.raises(InvalidInputError):
        grid_points({"nprobes": list(range(1, MAX_GRID_POINTS + 2))})
    assert len(grid_points({"nprobes": [1, 2], "ef": [10, 20, None]})) == 6
    assert grid_points({}) == [{}]


def test_pareto_front_and_cheapest_on_a_hand_made_frame() -> None:
    frame = pd.DataFrame(
        {
            "nprobes": [1, 4, 2, 8, 32, 1],
            "recall": [0.80, 0.90, 0.85, 0.90, 0.99, 0.80],
            "p50_ms": [1.0, 2.0, 3.0, 2.5, 5.0, 1.0],
        },
        index=[10, 11, 12, 13, 14, 15],
    )
    mask = pareto_front(frame)
    assert list(mask.index) == list(frame.index)
    # 12 is beaten by 11 (more recall, less time), 13 by 11 (same recall, less time);
    # 10 and 15 are equal: neither beats the other
    assert mask.tolist() == [True, True, False, False, True, True]
    best = cheapest(frame, 0.9)
    assert best is not None and best.name == 11
    assert best["recall"] == 0.90 and best["p50_ms"] == 2.0
    top = cheapest(frame, 0.99)
    assert top is not None and top.name == 14
    low = cheapest(frame, 0.5)
    assert low is not None and low["p50_ms"] == 1.0
    assert cheapest(frame, 0.995) is None


def test_cheapest_never_more_work_for_a_quicker_p50() -> None:
    """Settings that reach the target: one asking for more work (more probes, a larger refine
    factor, the rest the same) is not the cheaper one for a lower p50 (the same queries cannot
    take less time with more work: two settings doing the same work measure apart under load);
    settings that are not comparable (a default against a value, another metric) are judged
    on p50 alone."""
    rows = [
        # nprobes, refine_factor, distance_type, p50
        (1, None, "l2", 12.0),  # 0: least work, measured slowest
        (4, None, "l2", 8.0),  # 1: more probes than 0, measured quicker: noise
        (4, 2, "l2", 6.0),  # 2: more work than 0 and 1
        (None, None, "l2", 5.0),  # 3: the backend's default probes: not comparable
        (1, None, "cosine", 4.0),  # 4: another metric: not comparable
    ]
    frame = pd.DataFrame(
        [
            {
                "nprobes": n,
                "refine_factor": r,
                "distance_type": d,
                "recall": 0.99,
                "recall_low": 0.97,
                "recall_high": 1.0,
                "p50_ms": p,
                "brute_force": False,
            }
            for n, r, d, p in rows
        ]  # fmt: skip
    )
    keys = ["nprobes", "refine_factor", "distance_type"]
    records = frame[keys].to_dict("records")
    assert less_work(records[0], records[1], keys) and less_work(records[1], records[2], keys)
    assert not less_work(records[1], records[0], keys)
    assert not less_work(records[0], records[3], keys)  # a value against the default
    assert not less_work(records[0], records[4], keys)  # another metric
    assert not less_work(records[0], records[0], keys)  # not less than itself
    # among 0-2 only: the least work wins over the quicker p50s
    assert cheapest(frame.loc[[0, 1, 2]], 0.9).name == 0
    assert fastest(frame.loc[[0, 1, 2]], 0.9).name == 2
    # the not comparable ones stay in the race, judged on p50
    assert cheapest(frame, 0.9).name == 4 and fastest(frame, 0.9).name == 4
    assert cheapest(frame.loc[[0, 1, 3]], 0.9).name == 3
    # a setting with less work that does not reach the target does not rule the others out
    short = frame.loc[[0, 1]].assign(recall_low=[0.5, 0.97])
    assert cheapest(short, 0.9).name == 1


# -- bad arguments of recall and sweep --------------------------------------------------------------
@pytest.mark.parametrize("column", ["text", "id", "missing"])
def test_recall_and_sweep_need_a_vector_column(ns_a: LanceNamespace, column: str) -> None:
    create_table(ns_a, T, make_table(50, dim=DIM))
    with pytest.raises(InvalidInputError, match=column):
        recall(ns_a, T, column=column, sample=3)
    with pytest.raises(InvalidInputError, match=column):
        sweep(ns_a, T, column=column, sample=3, grid={"nprobes": [1]})


@pytest.mark.parametrize("bad", [{"k": 0}, {"sample": 0}, {"k": MAX_K + 1}])
def test_recall_and_sweep_refuse_empty_k_and_sample(ns_a: LanceNamespace, bad: dict) -> None:
    create_table(ns_a, T, make_table(50, dim=DIM))
    with pytest.raises(InvalidInputError):
        recall(ns_a, T, column="vec", **{"k": 5, "sample": 3, **bad})
    with pytest.raises(InvalidInputError):
        sweep(ns_a, T, column="vec", grid={"nprobes": [1]}, **{"k": 5, "sample": 3, **bad})


# -- build defaults (local) ---------------------------------------------------------------------------
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
    frame = requested_vs_applied(local_ns, T)
    for name, value in chosen.items():
        row = frame[frame["parameter"] == name].iloc[0]
        assert (row["requested"], row["applied"], row["differs"]) == (str(value), str(value), False)
    found = vector_search(local_ns, T, [0.5] * dim, column="vec", k=3)
    assert found.table.num_rows == 3


# -- requested against applied ------------------------------------------------------------------------
def test_requested_vs_applied_local(local_ns: LanceNamespace) -> None:
    create_table(local_ns, T, make_table(2500, dim=DIM, seed=1))
    vector_index(local_ns, T, "IVF_PQ", num_partitions=8, num_sub_vectors=4, distance_type="L2")
    frame = requested_vs_applied(local_ns, T)
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
    frame = requested_vs_applied(local_ns, small)
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

        frame = requested_vs_applied(ns, T)
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


# -- maintenance --------------------------------------------------------------------------------------
def test_optimize_and_compact(ns_a: LanceNamespace, backend_kind: str) -> None:
    create_table(ns_a, T, make_table(500, dim=DIM, seed=1))
    vector_index(ns_a, T, "IVF_FLAT", num_partitions=4)
    append_rows(ns_a, T, make_table(100, dim=DIM, start=500, seed=2))
    append_rows(ns_a, T, make_table(100, dim=DIM, start=600, seed=3))
    if backend_kind == "rest":
        with pytest.raises(UnsupportedOperationError) as caught:
            optimize_indexes(ns_a, T)
        assert str(caught.value) == MAINTENANCE_UNSUPPORTED
        with pytest.raises(UnsupportedOperationError) as caught:
            compact_files(ns_a, T)
        assert str(caught.value) == MAINTENANCE_UNSUPPORTED
        return
    overview = index_overview(ns_a, T)
    assert overview.loc[0, "unindexed_rows"] == 200 and overview.loc[0, "indexed_rows"] == 500
    stats = ns_a.describe_table_index_stats(
        DescribeTableIndexStatsRequest(id=T, index_name="vec_idx")
    )
    assert stats.num_unindexed_rows == 200

    done = optimize_indexes(ns_a, T)
    assert done["version_after"] > done["version_before"]
    stats = ns_a.describe_table_index_stats(
        DescribeTableIndexStatsRequest(id=T, index_name="vec_idx")
    )
    assert (stats.num_indexed_rows, stats.num_unindexed_rows) == (700, 0)
    assert index_overview(ns_a, T).loc[0, "unindexed_rows"] == 0

    fragments_before = len(ns_a.open_dataset(T).get_fragments())
    assert fragments_before == 3
    compacted = compact_files(ns_a, T)
    assert isinstance(compacted, dict)
    assert compacted["fragments_removed"] == 3 and compacted["fragments_added"] == 1
    assert len(ns_a.open_dataset(T).get_fragments()) == 1
    assert count_rows(ns_a, T, version=None, filter=None) == 700
    ids = run_query(ns_a, query_request(T, k=1000, columns=["id"]))
    assert sorted(ids.column("id").to_pylist()) == list(range(700))
    found = vector_search(ns_a, T, [0.5] * DIM, column="vec", k=5)
    assert found.table.num_rows == 5


# -- build A/B on a scratch copy ----------------------------------------------------------------------
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
    frame = build_ab(
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
    frame = build_ab(
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
    frame = build_ab(
        ns_a, T, column="vec", configs=[{"index_type": "IVF_FLAT", "num_partitions": 2}],
        sample_rows=250, queries=5,
    )  # fmt: skip
    assert frame["rows"].tolist() == [250]


def test_build_ab_refuses_bad_configs(ns_a: LanceNamespace, own_tempdir: Path) -> None:
    create_table(ns_a, T, make_table(300, dim=DIM))
    scratch_before = _scratch_dirs()
    with pytest.raises(InvalidInputError):
        build_ab(ns_a, T, column="vec", configs=[])
    with pytest.raises(InvalidInputError):
        build_ab(ns_a, T, column="text", configs=[{"index_type": "IVF_FLAT"}])
    with pytest.raises(InvalidInputError):
        build_ab(
            ns_a, T, column="vec", configs=[{"index_type": "IVF_FLAT", "num_sub_vectors": 4}],
            sample_rows=300, queries=5,
        )  # fmt: skip
    assert not (_scratch_dirs() - scratch_before)


# -- the demo's passages table ----------------------------------------------------------------------
@pytest.mark.slow
def test_demo_passages_table_tunes(tmp_path: Path) -> None:
    summary = demo.create_demo_namespace(demo_copy(tmp_path / "demo"))
    assert demo.PASSAGES_ID in summary.tables
    ns = backend.connect(str(tmp_path / "demo"))
    table_id = demo.PASSAGES_ID
    desc = ns.describe_table(DescribeTableRequest(id=table_id, load_detailed_metadata=True))
    assert (desc.properties or {}).get("embedding.function") == demo.EMBEDDING_FUNCTION
    assert count_rows(ns, table_id, version=None, filter=None) >= 20_000
    info = vector_column(ns, table_id, "vector")
    assert info.kind == "vector" and info.dim == 64
    types = {
        rules.normalize_index_type(i.index_type)
        for i in ns.list_table_indices(ListTableIndicesRequest(id=table_id)).indexes
    }
    assert {"IVF_PQ", "FTS"} <= types

    frame = sweep(ns, table_id, column="vector", grid={"nprobes": [1, 32]}, sample=20, k=10)
    by_probes = dict(zip(frame["nprobes"].tolist(), frame["recall"].tolist(), strict=True))
    assert by_probes[32] > by_probes[1]

    # a query embedded the table's own way finds the passages that say it
    vector = embed_text(desc.properties, "regular expression pattern")
    found = vector_search(ns, table_id, vector, column="vector", k=5, nprobes=32)
    assert found.table.num_rows == 5
    assert re.search(
        r"regular|expression|pattern", " ".join(found.table.column("passage").to_pylist())
    )


# -- recall intervals ----------------------------------------------------------------------------------
def test_recall_interval_is_the_t_interval_and_holds_its_mean() -> None:
    # 50 queries, 45 perfect and 5 at 0.5: mean 0.95, s by numpy, t(0.975, 49) = 2.010 (table)
    per_query = [1.0] * 45 + [0.5] * 5
    low, high = recall_interval(per_query)
    half = 2.0096 * np.std(per_query, ddof=1) / np.sqrt(50)
    assert low == pytest.approx(0.95 - half, abs=1e-4)
    assert high == pytest.approx(0.95 + half, abs=1e-4)
    # 50 perfect queries: no spread, the point itself
    assert recall_interval([1.0] * 50) == (1.0, 1.0)
    low, high = recall_interval([0.5] * 4 + [0.0, 1.0])
    assert 0.0 <= low < 0.5 < high <= 1.0
    assert all(np.isnan(recall_interval([])))
    assert all(np.isnan(recall_interval([0.9])))  # one query: no interval
    with pytest.raises(InvalidInputError):
        recall_interval([1.0, 0.5], level=1.5)
    # the interval holds its mean for every sample size, inside [0, 1]
    rng = np.random.default_rng(5)
    for n in range(2, 201):
        for per_query in ([1.0] * n, [0.0] * n, [0.9975] * n, list(rng.integers(0, 11, n) / 10)):
            low, high = recall_interval(per_query)
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
            low, high = recall_interval(per_query.tolist())
            covered += low <= true_p <= high
        assert 0.93 <= covered / 2000 <= 0.97, (true_p, covered)


def test_cheapest_is_judged_on_the_lower_bound() -> None:
    # a setting at exactly the target over 50 queries is not "reaching" it with confidence
    at_target = [1.0] * 45 + [0.5] * 5  # mean 0.95
    safe = [1.0] * 48 + [0.9] * 2  # mean 0.996
    rows = []
    for nprobes, per_query, p50 in ((4, at_target, 1.0), (16, safe, 3.0)):
        low, high = recall_interval(per_query)
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
    best = cheapest(frame, 0.95)
    assert best is not None and best["nprobes"] == 16
    assert cheapest(frame, 0.991) is None  # neither lower bound reaches it
    # a setting measured on one query has no interval and reaches nothing
    single = pd.DataFrame([{**rows[1], "recall_low": np.nan, "recall_high": np.nan}])
    assert cheapest(single, 0.5) is None


def test_a_measurement_reads_one_version_while_another_writer_appends(
    ns_a: LanceNamespace,
) -> None:
    """Another writer appends a copy of every row between a recall measurement's exact
    searches (the ground truth) and its ANN searches, and after the first point of a sweep
    (whose ground truth is its first point's). Each still reads the version it started at, the
    version its result names: exact searches on both sides find the same neighbours (recall
    1.0 for every query). Read at the latest, the ANN searches found the copies (distance 0)
    that the ground truth, read before them, does not have."""
    table = make_table(300, dim=DIM, seed=4)
    create_table(ns_a, T, table)
    location = str(table_location(ns_a, T))
    started = lance.dataset(location).version
    appended: list[int] = []

    def append_copies() -> None:
        copy = table.set_column(0, "id", pa.array(range(300, 600), pa.int64()))
        appended.append(lance.write_dataset(copy, location, mode="append").version)

    def after_the_truth(done: int, total: int) -> None:
        if done == total // 2:  # the exact searches sent (twice each), no ANN search yet
            append_copies()

    exact = {"bypass_vector_index": True}
    result = recall(ns_a, T, column="vec", k=5, sample=8, seed=2, progress=after_the_truth, **exact)
    assert appended == [started + 1]  # the writer committed during the measurement
    assert result.per_query == [1.0] * 8
    assert result.query_params == {**exact, "version": started}

    appended.clear()
    now = lance.dataset(location).version
    frame = sweep(
        ns_a, T, column="vec", k=5, sample=8, seed=2, grid={"nprobes": [1, 2, 4]},
        progress=lambda done, total: append_copies() if done == 1 else None, **exact,
    )  # fmt: skip
    assert appended == [now + 1]  # after the first point, before the second
    assert frame["recall"].tolist() == [1.0, 1.0, 1.0]
    assert lance.dataset(location).count_rows() == 900  # the writes landed


def test_more_queries_at_a_version_cleaned_up_since_say_so(ns_a: LanceNamespace) -> None:
    """More queries read the version the measurement read; after another writer's append and
    a cleanup that removed that version, they are refused in the user's terms (the engine's
    text kept aside), and the measurement is not extended with rows of another version."""
    create_table(ns_a, T, make_table(300, dim=DIM, seed=4))
    location = str(table_location(ns_a, T))
    first = recall(ns_a, T, column="vec", k=5, sample=5, seed=1, bypass_vector_index=True)
    read = first.query_params["version"]
    lance.write_dataset(make_table(10, dim=DIM, start=300), location, mode="append")
    lance.dataset(location).cleanup_old_versions(
        older_than=timedelta(0), error_if_tagged_old_versions=False
    )
    assert read not in [v["version"] for v in lance.dataset(location).versions()]
    with pytest.raises(TableVersionNotFoundError) as caught:
        more_queries(ns_a, T, first, sample=5)
    assert str(caught.value) == (
        f"version {read} of a › t, which this measurement read, no longer exists (cleaned up "
        "since): measure recall again"
    )
    assert "_versions" in caught.value.engine_message  # lance's own words, behind the expander


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
    first = recall(ns_a, T, column="vec", k=k, sample=15, seed=3, **params)
    assert len(first.query_rows) == len(set(first.query_rows)) == 15
    seen: list[tuple[int, int]] = []
    merged = more_queries(ns_a, T, first, sample=45, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (180, 180)  # the new batch only: exact, then ANN, of each row, twice
    rows = merged.query_rows
    assert rows[:15] == first.query_rows and merged.per_query[:15] == first.per_query
    assert len(rows) == len(set(rows)) == len(merged.per_query) == 60  # none used twice
    pinned = {**params, "version": lance.dataset(str(table_location(ns_a, T))).version}
    assert merged.k == k and merged.query_params == pinned and merged.metric == "l2"
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

    again = more_queries(ns_a, T, first, sample=45)  # the same batch: reproducible
    assert again.query_rows == merged.query_rows


def test_more_queries_needs_rows_left_and_recorded_queries(ns_a: LanceNamespace) -> None:
    create_table(ns_a, T, make_table(30, dim=DIM, seed=1))
    first = recall(ns_a, T, column="vec", k=3, sample=20, seed=0, bypass_vector_index=True)
    rest = more_queries(ns_a, T, first, sample=50)  # only 10 rows left: all of them
    assert sorted(rest.query_rows) == list(range(30)) and rest.mean == 1.0
    with pytest.raises(InvalidInputError, match="already a query"):
        more_queries(ns_a, T, rest, sample=5)
    bare = RecallResult(k=3, per_query=[1.0], ann_ms=[1.0], exact_ms=[1.0])
    with pytest.raises(InvalidInputError, match="does not record its queries"):
        more_queries(ns_a, T, bare, sample=5)


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
