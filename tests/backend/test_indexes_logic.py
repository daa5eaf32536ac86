"""backend/indexes.py: column types, fitting types, defaults, validation, overview, history, builds.

Pure functions are tested directly; everything touching a namespace runs on both backends
through the ``ns`` fixture (a real local directory and a real ``RestAdapter`` server).
"""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest
from lance_namespace import CreateNamespaceRequest, LanceNamespace
from lance_namespace.errors import LanceNamespaceError

import backend
from backend import indexes as ix
from tests.support import append_rows, create_table, make_table, table_location

NS = ["a"]


def tid(name: str) -> list[str]:
    return [*NS, name]


@pytest.fixture
def ns_a(ns: LanceNamespace) -> LanceNamespace:
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    return ns


@pytest.fixture
def local_ns(local_root) -> LanceNamespace:
    ns = backend.connect(str(local_root))
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    return ns


def mixed_table(n: int = 40) -> pa.Table:
    vec = pa.FixedSizeListArray.from_arrays(pa.array([0.5] * (n * 8), pa.float32()), 8)
    bits = pa.FixedSizeListArray.from_arrays(pa.array([7] * (n * 4), pa.uint8()), 4)
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "text": pa.array([f"doc {i}" for i in range(n)]),
            "tags": pa.array([["a", "b"]] * n, pa.list_(pa.string())),
            "flag": pa.array([i % 2 == 0 for i in range(n)]),
            "day": pa.array([19000 + i for i in range(n)], pa.date32()),
            "vec": vec,
            "bits": bits,
        }
    )


# --------------------------------------------------------------------------- types (pure)


@pytest.mark.parametrize(
    ("arrow_type", "expected"),
    [
        (pa.list_(pa.float32(), 16), list(ix.VECTOR_INDEX_TYPES)),
        (pa.list_(pa.float32(), 12), [t for t in ix.VECTOR_INDEX_TYPES if t != "IVF_RQ"]),
        (pa.list_(pa.uint8(), 8), ["IVF_FLAT", "IVF_HNSW_FLAT"]),
        (pa.string(), ["FTS", "INVERTED", "BTREE", "BITMAP", "NGRAM", "ZONEMAP", "BLOOMFILTER"]),
        (
            pa.large_string(),
            ["FTS", "INVERTED", "BTREE", "BITMAP", "NGRAM", "ZONEMAP", "BLOOMFILTER"],
        ),
        (pa.list_(pa.string()), ["LABEL_LIST", "FTS", "INVERTED"]),
        (pa.list_(pa.int32()), ["LABEL_LIST"]),
        (pa.int64(), ["BTREE", "BITMAP", "ZONEMAP", "BLOOMFILTER"]),
        (pa.float64(), ["BTREE", "BITMAP", "ZONEMAP", "BLOOMFILTER"]),
        (pa.date32(), ["BTREE", "BITMAP", "ZONEMAP", "BLOOMFILTER"]),
        (pa.timestamp("us"), ["BTREE", "BITMAP", "ZONEMAP", "BLOOMFILTER"]),
        (pa.bool_(), ["BITMAP", "BTREE", "ZONEMAP"]),
        (pa.struct([("x", pa.int32())]), []),
    ],
)
def test_fitting_index_types(arrow_type: pa.DataType, expected: list[str]) -> None:
    assert ix.fitting_index_types(arrow_type) == expected
    # the same answer from the JSON type string shown in the UI
    assert ix.fitting_index_types(ix.arrow_type_str(arrow_type)) == expected


def test_parse_json_arrow_types() -> None:
    fsl = {
        "type": "fixed_size_list",
        "length": 16,
        "fields": [{"name": "item", "nullable": True, "type": {"type": "float32"}}],
    }
    assert ix.arrow_type_str(fsl) == "fixed_size_list<float32>[16]"
    assert ix.column_kind(fsl) == "vector"
    assert ix.vector_dimension(fsl) == 16
    lst = {"type": "list", "fields": [{"name": "item", "nullable": True, "type": {"type": "utf8"}}]}
    assert ix.arrow_type_str(lst) == "list<utf8>"
    assert ix.column_kind({"type": "bool"}) == "boolean"
    assert ix.column_kind("fixed_size_list<item: uint8>[8]") == "binary_vector"
    assert ix.distance_types_for("fixed_size_list<item: uint8>[8]") == ["hamming"]
    assert ix.distance_types_for(pa.list_(pa.float32(), 4)) == ["l2", "cosine", "dot"]


def test_table_columns(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("m"), mixed_table())
    cols = {c.name: c for c in ix.table_columns(ns_a, tid("m"))}
    assert list(cols) == ["id", "text", "tags", "flag", "day", "vec", "bits"]
    assert cols["vec"].kind == "vector" and cols["vec"].dim == 8
    assert cols["vec"].arrow_type_str == "fixed_size_list<float32>[8]"
    assert cols["bits"].kind == "binary_vector"
    assert cols["text"].fitting_types[0] == "FTS"
    assert cols["tags"].fitting_types == ["LABEL_LIST", "FTS", "INVERTED"]
    assert cols["flag"].fitting_types == ["BITMAP", "BTREE", "ZONEMAP"]
    assert cols["day"].kind == "temporal"
    assert ix.table_num_rows(ns_a, tid("m")) == 40


# --------------------------------------------------------------------------- defaults (pure)


def test_vector_param_defaults() -> None:
    d = ix.vector_param_defaults("IVF_PQ", 32, 40_000)
    assert d == {
        "num_partitions": 4,  # 40000 // 8192
        "num_sub_vectors": 2,  # 32 / 16
        "num_bits": 8,
        "sample_rate": 256,
        "max_iterations": 50,
        "target_partition_size": 8192,
    }
    assert ix.vector_param_defaults("IVF_FLAT", 16, 40_000)["num_partitions"] == 9  # // 4096
    assert ix.vector_param_defaults("IVF_RQ", 16, 40_000)["num_bits"] == 5
    hnsw = ix.vector_param_defaults("IVF_HNSW_SQ", 16, 40_000)
    assert hnsw["num_partitions"] == 1 and hnsw["m"] == 20 and hnsw["ef_construction"] == 150
    assert "num_sub_vectors" not in hnsw
    assert ix.vector_param_defaults("IVF_FLAT", 8, 100)["num_partitions"] == 1
    assert ix.vector_param_defaults("IVF_FLAT", 8, 10**9)["num_partitions"] == 4096
    assert ix.default_num_sub_vectors(24) == 3 and ix.default_num_sub_vectors(12) == 1
    assert ix.vector_params_for("IVF_FLAT") == [
        "num_partitions",
        "sample_rate",
        "max_iterations",
        "target_partition_size",
    ]
    assert "m" in ix.vector_params_for("IVF_HNSW_PQ") and "num_sub_vectors" in ix.vector_params_for(
        "IVF_HNSW_PQ"
    )


def test_default_partitions_match_pylance(local_ns: LanceNamespace) -> None:
    """The num_partitions rule shown in the form is what pylance builds with empty fields."""
    rows, dim = 9000, 8  # 9000 // 4096 = 2 partitions for IVF_FLAT
    create_table(local_ns, tid("big"), make_table(rows, dim=dim))
    req = ix.build_index_request(tid("big"), "vec", "IVF_FLAT", name="f", dim=dim, num_rows=rows)
    ix.create_index(local_ns, req)
    built = lance.dataset(str(table_location(local_ns, tid("big")))).stats.index_stats("f")
    expected = ix.vector_param_defaults("IVF_FLAT", dim, rows)["num_partitions"]
    assert built["indices"][0]["num_partitions"] == expected == 2


# --------------------------------------------------------------------------- request + validation


def col(arrow_type: pa.DataType, name: str = "c") -> ix.ColumnInfo:
    info = ix.parse_arrow_type(arrow_type)
    return ix.ColumnInfo(
        name, str(info), ix.column_kind(info), dim=ix.vector_dimension(info), type_info=info
    )


def test_build_request_fills_required_and_drops_foreign_params() -> None:
    req = ix.build_index_request(
        ["a", "t"],
        "vec",
        "IVF_PQ",
        distance_type="cosine",
        params={"num_partitions": 2, "m": 10, "num_sub_vectors": None},
        dim=32,
        num_rows=600,
    )
    assert req.num_sub_vectors == 2 and req.num_partitions == 2 and req.m is None
    assert req.distance_type == "cosine" and req.name is None
    fts = ix.build_index_request(
        ["a", "t"], "text", "fts", name="ft", params={"stem": False, "max_token_length": 12}
    )
    assert (fts.index_type, fts.stem, fts.max_token_length, fts.num_partitions) == (
        "FTS",
        False,
        12,
        None,
    )
    with pytest.raises(ValueError):
        ix.build_index_request(["a", "t"], "c", "NOPE")


@pytest.mark.parametrize(
    ("column", "index_type", "kwargs", "num_rows", "needle"),
    [
        (pa.list_(pa.float32(), 16), "IVF_PQ", {"num_sub_vectors": 5}, 600, "must divide"),
        (pa.list_(pa.float32(), 16), "IVF_FLAT", {"num_partitions": 700}, 600, "exceeds"),
        (pa.list_(pa.float32(), 16), "IVF_FLAT", {"distance_type": "hamming"}, 600, "binary"),
        (pa.list_(pa.uint8(), 16), "IVF_FLAT", {"distance_type": "l2"}, 600, "hamming"),
        (
            pa.list_(pa.float32(), 16),
            "IVF_FLAT",
            {"num_partitions": 2, "target_partition_size": 100},
            600,
            "not both",
        ),
        (pa.list_(pa.float32(), 16), "IVF_PQ", {"num_sub_vectors": 4}, 100, "256 rows"),
        (
            pa.list_(pa.float32(), 16),
            "IVF_PQ",
            {"num_bits": 6, "num_sub_vectors": 4},
            600,
            "4 or 8",
        ),
        (pa.list_(pa.float32(), 16), "IVF_PQ", {"num_bits": 4, "num_sub_vectors": 1}, 600, "even"),
        (pa.list_(pa.float32(), 12), "IVF_RQ", {}, 600, "does not fit"),
        (pa.int64(), "IVF_FLAT", {}, 600, "does not fit"),
        (pa.string(), "LABEL_LIST", {}, 600, "does not fit"),
        (pa.string(), "FTS", {"language": "Klingon"}, 600, "Unknown language"),
        (pa.string(), "FTS", {"max_token_length": 0}, 600, "at least 1"),
        (pa.list_(pa.float32(), 16), "IVF_FLAT", {}, 0, "no rows"),
    ],
)
def test_validate_rejects(column, index_type, kwargs, num_rows, needle) -> None:
    from lance_namespace import CreateTableIndexRequest

    req = CreateTableIndexRequest(id=["a", "t"], column="c", index_type=index_type, **kwargs)
    problems = ix.validate_index_request(req, col(column), num_rows=num_rows)
    assert any(needle in p for p in problems), problems


def test_request_hints() -> None:
    req = ix.build_index_request(
        ["a", "t"], "c", "IVF_PQ", params={"num_partitions": 2}, dim=16, num_rows=300
    )
    assert ix.validate_index_request(req, col(pa.list_(pa.float32(), 16)), num_rows=300) == []
    (hint,) = ix.index_request_hints(req, 300)
    assert "about 512 rows" in hint
    assert ix.index_request_hints(req, 600) == []


def test_validate_accepts_and_names() -> None:
    req = ix.build_index_request(
        ["a", "t"], "c", "IVF_HNSW_SQ", distance_type="dot", params={"m": 8}, dim=16, num_rows=50
    )
    assert ix.validate_index_request(req, col(pa.list_(pa.float32(), 16)), num_rows=50) == []
    named = ix.build_index_request(["a", "t"], "c", "BTREE", name="by id")
    assert any("Index name" in p for p in ix.validate_index_request(named, col(pa.int64())))
    dup = ix.build_index_request(["a", "t"], "c", "BTREE", name="c_idx")
    problems = ix.validate_index_request(dup, col(pa.int64()), existing_names=["c_idx"])
    assert any("already exists" in p for p in problems)
    assert ix.validate_index_request(dup, None) == ["Column 'c' does not exist in this table."]


# --------------------------------------------------------------------------- tokenizer preview


def test_tokenize_preview_follows_options() -> None:
    text = "The Running Dogs of Café"
    default = [t.text for t in ix.tokenize_preview(text, ix.fts_param_defaults())]
    assert default == ["run", "dog", "cafe"]
    plain = ix.tokenize_preview(
        text,
        {"base_tokenizer": "whitespace", "lower_case": False, "stem": False,
         "remove_stop_words": False, "ascii_folding": False},
    )  # fmt: skip
    assert [t.text for t in plain] == ["The", "Running", "Dogs", "of", "Café"]
    assert [t.position for t in plain] == [0, 1, 2, 3, 4]
    short = ix.tokenize_preview(text, {"max_token_length": 4, "stem": False})
    assert "running" not in [t.text for t in short]
    grams = ix.tokenize_preview("lance", ix.fts_param_defaults("ngram"))
    assert "lan" in [t.text for t in grams]
    with pytest.raises(ValueError, match="Klingon"):
        ix.tokenize_preview(text, {"language": "Klingon", "stem": True})
    assert {"simple", "whitespace", "raw", "ngram"} <= set(ix.available_tokenizers())


# --------------------------------------------------------------------------- overview, drop


def test_index_overview_and_lag(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("t"), make_table(50))
    ix.create_index(ns_a, ix.build_index_request(tid("t"), "id", "BTREE", name="by_id"))
    ix.create_index(
        ns_a,
        ix.build_index_request(
            tid("t"), "text", "FTS", name="ft", params={"with_position": True, "stem": False}
        ),
    )
    df = ix.index_overview(ns_a, tid("t"))
    assert list(df.columns) == list(ix.OVERVIEW_COLUMNS)
    rows = df.set_index("name")
    assert rows.loc["by_id", "type"] == "BTREE"
    assert rows.loc["ft", "type"] == "INVERTED"
    assert rows.loc["by_id", "columns"] == "id"
    assert int(rows.loc["by_id", "indexed_rows"]) == 50
    assert int(rows.loc["by_id", "unindexed_rows"]) == 0
    assert float(rows.loc["by_id", "coverage"]) == 1.0
    details = ix.index_details_dict(rows.loc["ft", "details"])
    assert details.get("with_position") is True and details.get("stem") is False
    assert ix.lagging_indexes(df).empty

    append_rows(ns_a, tid("t"), make_table(7, start=50))
    df = ix.index_overview(ns_a, tid("t"))
    lag = ix.lagging_indexes(df)
    assert set(lag["name"]) == {"by_id", "ft"}
    assert int(lag.set_index("name").loc["by_id", "unindexed_rows"]) == 7

    ix.drop_index(ns_a, tid("t"), "by_id")
    assert list(ix.index_overview(ns_a, tid("t"))["name"]) == ["ft"]


def test_overview_distance_type(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("v"), make_table(60, dim=8))
    req = ix.build_index_request(
        tid("v"),
        "vec",
        "IVF_FLAT",
        name="flat",
        distance_type="cosine",
        params={"num_partitions": 2},
    )
    ix.create_index(ns_a, req)
    row = ix.index_overview(ns_a, tid("v")).set_index("name").loc["flat"]
    assert row["type"] == "IVF_FLAT"
    assert row["distance_type"] == "cosine"


def test_empty_overview(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("e"), make_table(3))
    df = ix.index_overview(ns_a, tid("e"))
    assert df.empty and list(df.columns) == list(ix.OVERVIEW_COLUMNS)


# --------------------------------------------------------------------------- coverage history


def test_coverage_history(ns_a: LanceNamespace, backend_kind: str) -> None:
    create_table(ns_a, tid("h"), make_table(20))  # v1
    ix.create_index(ns_a, ix.build_index_request(tid("h"), "id", "BTREE", name="by_id"))  # v2
    append_rows(ns_a, tid("h"), make_table(5, start=20))  # v3
    append_rows(ns_a, tid("h"), make_table(5, start=25))  # v4
    df = ix.coverage_history(ns_a, tid("h"), max_versions=30)
    assert list(df.columns) == list(ix.HISTORY_COLUMNS)
    by_version = df[df.index_name == "by_id"].set_index("version")
    assert sorted(by_version.index) == [2, 3, 4]
    if backend_kind == "local":
        assert df.attrs["source"] == "pylance"
        assert by_version.loc[4, "unindexed_rows"] == 10
        assert by_version.loc[4, "total_rows"] == 30
        assert by_version.loc[2, "coverage"] == 1.0
    else:
        assert df.attrs["source"] == "namespace"
    # bounded
    last2 = ix.coverage_history(ns_a, tid("h"), max_versions=2)
    assert sorted(set(last2.version)) == [3, 4]
    with pytest.raises(ValueError):
        ix.coverage_history(ns_a, tid("h"), max_versions=0)


# --------------------------------------------------------------------------- background builds


def test_build_job_vector(ns_a: LanceNamespace, backend_kind: str) -> None:
    rows = 2 * ix.PQ_ROWS_PER_PARTITION  # PQ trains one partition per 256 rows at most
    create_table(ns_a, tid("v"), make_table(rows, dim=16))
    req = ix.build_index_request(
        tid("v"), "vec", "IVF_PQ", name="pq", params={"num_partitions": 2}, dim=16, num_rows=rows
    )
    assert ix.index_request_hints(req, rows) == []
    registry = ix.BuildJobRegistry()
    job_id = registry.start(ns_a, req, poll_interval=0.05)
    job = registry.wait(job_id, timeout=120)
    assert job.status == "succeeded", job.error
    assert job.index_name == "pq" and job.fraction == 1.0
    if backend_kind == "local":
        assert job.mode == "events"
        assert job.events and {"start", "complete"} <= {e.get("event") for e in job.events}
        assert job.stages
    else:
        assert job.mode == "polling"
    assert [j.job_id for j in registry.jobs(tid("v"))] == [job_id]
    assert registry.running() == []
    row = ix.index_overview(ns_a, tid("v")).set_index("name").loc["pq"]
    assert int(row["indexed_rows"]) == rows


def test_build_job_failure_is_reported(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("t"), make_table(10))
    ix.create_index(ns_a, ix.build_index_request(tid("t"), "id", "BTREE", name="dup"))
    registry = ix.BuildJobRegistry()
    job_id = registry.start(ns_a, ix.build_index_request(tid("t"), "id", "BTREE", name="dup"))
    job = registry.wait(job_id, timeout=60)
    assert job.status == "failed"
    assert isinstance(job.error, LanceNamespaceError)
    info = backend.describe_error(job.error)
    assert info["code_name"] == "TABLE_INDEX_ALREADY_EXISTS"
    registry.forget(job_id)
    assert registry.get(job_id) is None
