"""With two vector indexes on a column, the one a search uses (``search.vector.index_in_use``: the
one the query plan names; lance takes no index name) is what the search page and the metric
rule report, on both backends (``ns``: a real local namespace and a real REST server)."""

from __future__ import annotations

from typing import Any

import numpy as np
from lance_namespace import CreateTableIndexRequest

from backend.services.search.plans import explain
from backend.services.search.query import query_request
from backend.services.search.table import search_table
from backend.services.search.vector import (
    index_metric,
    plan_vector_index,
    vector_indexes_on,
    vector_search,
)
from tests.support import create_table, search_rows

T = ["t"]


def _two_indexes(ns: Any) -> None:
    create_table(ns, T, search_rows(300, dim=8))
    # built first: the one lance searches with; its name sorts last in the listing
    for name, metric in (("z_cosine", "cosine"), ("a_l2", "l2")):
        ns.create_table_index(
            CreateTableIndexRequest(
                id=T, column="vec", index_type="IVF_FLAT", name=name, distance_type=metric,
                num_partitions=2,
            )
        )  # fmt: skip


def test_the_index_a_search_uses_is_the_one_reported(ns: Any) -> None:
    _two_indexes(ns)
    names = [ix.index_name for ix in vector_indexes_on(ns, T, "vec")]
    assert sorted(names) == ["a_l2", "z_cosine"]
    assert names[0] == "a_l2"  # the listing names the other one first

    # what the plan of a plain vector search names (no metric: the index's own)
    request = query_request(T, vector=[0.5] * 8, vector_column="vec", k=3)
    used = plan_vector_index(explain(ns, request))
    assert used == "z_cosine"

    info = search_table(ns, T)
    assert info.vector_indexes["vec"]["name"] == used
    assert info.distance_for("vec") == "cosine"
    assert [c["name"] for c in info.other_vector_indexes("vec")] == ["a_l2"]
    assert index_metric(ns, T, "vec") == "cosine"

    # a search without a metric runs with the used index's metric: its distances are
    # cosine distances (checked against numpy) and its plan names that index
    rows = search_rows(300, dim=8)
    data = np.asarray(rows["vec"].to_pylist(), dtype=np.float64)
    query = data[7]
    found = vector_search(ns, T, query.tolist(), column="vec", k=5, nprobes=2)
    assert found.metric is not None and found.metric.metric == "cosine"
    assert found.brute_force_reason is None
    cosine = 1 - data @ query / (np.linalg.norm(data, axis=1) * np.linalg.norm(query))
    got = dict(
        zip(found.table["id"].to_pylist(), found.table["_distance"].to_pylist(), strict=True)
    )
    for row_id, distance in got.items():
        assert abs(distance - cosine[row_id]) < 1e-4
    assert plan_vector_index(explain(ns, found.request)) == used


def test_one_index_needs_no_plan(ns: Any) -> None:
    create_table(ns, T, search_rows(300, dim=8))
    ns.create_table_index(
        CreateTableIndexRequest(id=T, column="vec", index_type="IVF_FLAT", name="only",
                                distance_type="dot", num_partitions=2)
    )  # fmt: skip
    info = search_table(ns, T)
    assert info.vector_indexes["vec"]["name"] == "only"
    assert info.other_vector_indexes("vec") == []
    assert plan_vector_index("ANNSubIndex: name=only, k=5, deltas=1") == "only"
    assert plan_vector_index("KNNVectorDistance: metric=l2") is None
