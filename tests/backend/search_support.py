"""Tables, fixtures and helpers the search and tuning tests share (``test_search.py``,
``test_tuning.py``, ``test_snippets_run.py``): a namespace ``a`` with a table ``a.t`` of
``DIM``-dimensional vectors, numpy ground truth, index builds, raw QueryTable requests."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from lance_namespace import (
    CreateNamespaceRequest,
    CreateTableIndexRequest,
    LanceNamespace,
    QueryTableRequest,
)

NS = ["a"]
T = ["a", "t"]
DIM = 16


def namespace_a(ns: LanceNamespace) -> LanceNamespace:
    """``ns`` with the namespace ``a`` the tables ``T`` live in (the ``ns_a`` and ``local_ns``
    fixtures of ``tests/backend/conftest.py``)."""
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
    """A QueryTableRequest built directly (not through ``search.query.query_request``, which would
    refuse a bad one before any backend sees it)."""
    body = {"id": table_id, "vector": {"single_vector": [0.5] * DIM}, "vector_column": "vec"}
    body["k"] = 5
    body.update(fields)
    return QueryTableRequest.model_validate(body)
