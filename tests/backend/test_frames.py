"""backend.services.frames on both backends (``ns``: a real local namespace and a real RestAdapter):
tables in as Arrow / a reader / pandas, results out as Arrow / pandas, the vector column
inferred, versions and tags as DataFrames; RecallResult's summary repr."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from lance_namespace import CreateNamespaceRequest, CreateTableIndexRequest
from lance_namespace.errors import InvalidInputError, TableNotFoundError

from backend.services import frames
from backend.services import tags as tagsv
from backend.services.tuning.measure import RecallResult
from tests.support import make_table, search_rows

T = ["docs", "points"]


def _vectors(table: pa.Table, column: str = "vec") -> np.ndarray:
    return np.stack(table[column].to_numpy(zero_copy_only=False))


def test_create_and_insert_take_arrow_readers_and_pandas(ns) -> None:
    ns.create_namespace(CreateNamespaceRequest(id=["docs"]))
    first = make_table(6)
    frames.create_table(ns, ["docs", "t"], first, properties={"owner": "me"})
    reader = pa.RecordBatchReader.from_batches(
        first.schema, make_table(4, start=100).to_batches(max_chunksize=2)
    )
    frames.insert_into_table(ns, ["docs", "t"], reader)
    frames.insert_into_table(ns, ["docs", "t"], make_table(3, start=200).to_pandas())
    got = frames.query(ns, ["docs", "t"], k=100)
    assert isinstance(got, pa.Table)
    assert sorted(got["id"].to_pylist()) == [*range(6), *range(100, 104), *range(200, 203)]
    df = frames.query_df(ns, ["docs", "t"], k=100, filter="id >= 200", columns=["id", "cat"])
    assert isinstance(df, pd.DataFrame) and list(df.columns) == ["id", "cat"]
    assert sorted(df["id"]) == [200, 201, 202]
    frames.insert_into_table(ns, ["docs", "t"], make_table(2, start=900), mode="overwrite")
    assert sorted(frames.query(ns, ["docs", "t"], k=100)["id"].to_pylist()) == [900, 901]
    with pytest.raises(InvalidInputError, match="pandas DataFrame"):
        frames.create_table(ns, ["docs", "bad"], {"id": [1]})
    with pytest.raises(TableNotFoundError):
        frames.insert_into_table(ns, ["docs", "missing"], first)


def test_vector_column_inferred_and_results_match_numpy(ns) -> None:
    ns.create_namespace(CreateNamespaceRequest(id=["docs"]))
    rows = search_rows(64, dim=8)
    frames.create_table(ns, T, rows)
    query = _vectors(rows)[5]
    got = frames.query(ns, T, query, k=4)  # no column named: the only vector column
    expected = np.argsort(((_vectors(rows) - query) ** 2).sum(axis=1))[:4]
    assert got["id"].to_pylist() == rows["id"].to_numpy()[expected].tolist()
    assert got["_distance"].to_pylist() == pytest.approx(
        sorted(((_vectors(rows) - query) ** 2).sum(axis=1))[:4], rel=1e-4
    )
    two = rows.append_column("vec2", rows["vec"])
    frames.create_table(ns, ["docs", "two"], two)
    with pytest.raises(
        InvalidInputError, match=r"must name its vector_column \(its vector columns: vec, vec2\)"
    ):
        frames.query(ns, ["docs", "two"], query, k=3)
    named = frames.query_df(ns, ["docs", "two"], query, column="vec2", k=1)
    assert named["id"].tolist() == [5]
    frames.create_table(ns, ["docs", "plain"], make_table(3))
    with pytest.raises(InvalidInputError, match="no vector column"):
        frames.query(ns, ["docs", "plain"], [0.1, 0.2], k=1)


def test_full_text_search_uses_the_indexed_column(ns) -> None:
    ns.create_namespace(CreateNamespaceRequest(id=["docs"]))
    rows = search_rows(40, dim=4)
    frames.create_table(ns, T, rows)
    ns.create_table_index(CreateTableIndexRequest(id=T, column="text", index_type="FTS"))
    got = frames.query_df(ns, T, text="mountain", k=50)
    expected = {
        i
        for i, t in zip(rows["id"].to_pylist(), rows["text"].to_pylist(), strict=True)
        if "mountain" in t.split()
    }
    assert set(got["id"]) == expected and "_score" in got.columns
    with pytest.raises(InvalidInputError, match="not both"):
        frames.query(ns, T, [0.0] * 4, text="x")
    frames.create_table(ns, ["docs", "plain"], make_table(3))
    with pytest.raises(InvalidInputError, match="no full-text index"):
        frames.query(ns, ["docs", "plain"], text="row")
    named = frames.query(ns, ["docs", "plain"], text="row", text_columns=["text"], k=5)
    assert sorted(named["id"].to_pylist()) == [0, 1, 2]  # named: searched without an index


def test_versions_and_tags_frames(ns) -> None:
    ns.create_namespace(CreateNamespaceRequest(id=["docs"]))
    frames.create_table(ns, ["docs", "t"], make_table(3))
    frames.insert_into_table(ns, ["docs", "t"], make_table(2, start=10))
    tagsv.create_tag(ns, ["docs", "t"], "first", 1)
    tagsv.create_tag(ns, ["docs", "t"], "also-first", 1)
    v = frames.versions(ns, ["docs", "t"])
    assert v["version"].tolist() == [2, 1]
    assert v["tags"].tolist() == [[], ["also-first", "first"]]
    assert str(v["timestamp"].dtype) == "datetime64[ns, UTC]" or "UTC" in str(v["timestamp"].dtype)
    now = pd.Timestamp.now(tz="UTC")
    assert all((now - t).total_seconds() < 600 for t in v["timestamp"])
    assert all(t == t.floor("s") for t in v["timestamp"])  # to the second
    t = frames.tags(ns, ["docs", "t"])
    assert t["tag"].tolist() == ["also-first", "first"] and t["version"].tolist() == [1, 1]
    assert (t["timestamp"] == v.loc[v["version"] == 1, "timestamp"].iloc[0]).all()


def test_recall_result_repr_is_a_summary() -> None:
    per_query = [1.0, 0.9, 0.8, 1.0] * 25
    result = RecallResult(
        k=10, per_query=per_query, ann_ms=[1.0] * 100, exact_ms=[3.0] * 100,
        query_params={"nprobes": 4},
    )  # fmt: skip
    text = repr(result)
    assert text.startswith("RecallResult(recall@10 ")
    sd = np.std(per_query, ddof=1)
    assert f"{np.mean(per_query):.2f} (standard deviation {sd:.2f}) over 100 queries" in text
    assert "nprobes=4" in text and "ANN p50 1.00 ms" in text
    assert "[" not in text and len(text) < 250  # not every per-query float
    assert str(result) == text
    assert "no queries" in repr(RecallResult(k=5, per_query=[], ann_ms=[], exact_ms=[]))
