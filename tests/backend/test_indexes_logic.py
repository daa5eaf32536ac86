"""Index rules and the Indexes page's services: column types, fitting types (checked against
what pylance builds), defaults, validation, overview, history, builds.

* ``backend.rules.index_rules`` (with the Arrow type helpers it re-exports) is tested directly;
* ``backend.services.index_overview`` and ``backend.services.build_jobs`` run on both backends
  through the ``ns`` fixture (a real local directory and a real ``RestAdapter`` server).
"""

from __future__ import annotations

import json
import uuid

import numpy as np
import pyarrow as pa
import pytest
from lance_namespace import (
    CreateNamespaceRequest,
    CreateTableIndexRequest,
    InsertIntoTableRequest,
    LanceNamespace,
)
from lance_namespace.errors import InvalidInputError, LanceNamespaceError

import backend
from backend.arrow.types import arrow_type_str, parse_arrow_type, vector_dimension
from backend.redaction import REDACTED, is_secret_name, redact_json
from backend.rules import index_rules as rules
from backend.rules.index_types import fitting_index_types
from backend.services import build_jobs
from backend.services import index_overview as ov
from tests.support import (
    append_rows,
    create_table,
    ipc_stream_bytes,
    make_table,
    table_location,
)

NS = ["a"]
STRING_TYPES = ["FTS", "BTREE", "BITMAP", "NGRAM", "ZONEMAP", "BLOOMFILTER"]
NUMERIC_TYPES = ["BTREE", "BITMAP", "ZONEMAP", "BLOOMFILTER"]


def tid(name: str) -> list[str]:
    return [*NS, name]


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
        (pa.list_(pa.float32(), 16), list(rules.VECTOR_INDEX_TYPES)),
        (pa.list_(pa.float32(), 12), [t for t in rules.VECTOR_INDEX_TYPES if t != "IVF_RQ"]),
        (pa.list_(pa.uint8(), 8), ["IVF_FLAT", "IVF_HNSW_FLAT"]),
        (pa.string(), STRING_TYPES),
        (pa.large_string(), STRING_TYPES),
        (pa.list_(pa.string()), ["LABEL_LIST", "FTS"]),
        (pa.list_(pa.int32()), ["LABEL_LIST"]),
        (pa.int64(), NUMERIC_TYPES),
        (pa.float64(), NUMERIC_TYPES),
        (pa.date32(), NUMERIC_TYPES),
        (pa.timestamp("us"), NUMERIC_TYPES),
        (pa.binary(), NUMERIC_TYPES),
        (pa.bool_(), ["BITMAP", "BTREE", "ZONEMAP"]),
        (pa.binary(4), ["BTREE", "BITMAP", "ZONEMAP"]),
        (pa.decimal128(10, 2), ["BTREE", "BITMAP", "ZONEMAP"]),
        (pa.dictionary(pa.int32(), pa.string()), ["ZONEMAP"]),
        (pa.struct([("x", pa.int32())]), []),
    ],
)
def test_fitting_index_types(arrow_type: pa.DataType, expected: list[str]) -> None:
    assert fitting_index_types(arrow_type) == expected
    # the same answer from the type string shown in the UI
    assert fitting_index_types(arrow_type_str(arrow_type)) == expected
    assert "INVERTED" not in expected  # one type, shown as FTS


def test_fts_and_inverted_are_one_type() -> None:
    assert rules.normalize_index_type("INVERTED") == "FTS"
    assert rules.normalize_index_type("Inverted") == "FTS"
    assert rules.normalize_index_type("fts") == "FTS"
    assert rules.normalize_index_type("BTree") == "BTREE"
    assert rules.normalize_index_type("ivf_pq") == "IVF_PQ"
    assert rules.index_category("INVERTED") == rules.index_category("FTS") == "fts"
    assert rules.lance_index_type("FTS") == "INVERTED"
    assert "INVERTED" not in rules.ALL_INDEX_TYPES
    req = rules.build_index_request(["a", "t"], "text", "INVERTED")
    assert req.index_type == "FTS"


@pytest.mark.parametrize(
    ("index_type", "params", "said"),
    [
        ("IVF_HNSW_SQ", {"num_partitions": 2, "m": 0}, "m: Input should be greater than or equal"),
        ("IVF_PQ", {"num_sub_vectors": 2, "max_iterations": 0}, "max_iterations: Input should"),
    ],
)
def test_a_parameter_outside_the_specs_range_is_bad_input_in_words(
    index_type: str, params: dict[str, int], said: str
) -> None:
    with pytest.raises(InvalidInputError) as err:
        rules.build_index_request(["t"], "vec", index_type, params=params)
    text = str(err.value)
    assert text.startswith(f"cannot build {index_type} on column 'vec': {said}"), text
    assert "pydantic" not in text and "type=" not in text and "\n" not in text


def test_parse_json_arrow_types() -> None:
    fsl = {
        "type": "fixed_size_list",
        "length": 16,
        "fields": [{"name": "item", "nullable": True, "type": {"type": "float32"}}],
    }
    assert arrow_type_str(fsl) == "fixed_size_list<float32>[16]"
    assert rules.column_kind(fsl) == "vector"
    assert vector_dimension(fsl) == 16
    lst = {"type": "list", "fields": [{"name": "item", "nullable": True, "type": {"type": "utf8"}}]}
    assert arrow_type_str(lst) == "list<utf8>"
    assert rules.column_kind({"type": "bool"}) == "boolean"
    assert rules.column_kind(pa.binary(16)) == "fixed_binary"
    assert rules.column_kind(pa.dictionary(pa.int8(), pa.string())) == "dictionary"
    assert rules.column_kind("fixed_size_list<item: uint8>[8]") == "binary_vector"
    assert rules.distance_types_for("fixed_size_list<item: uint8>[8]") == ["hamming"]
    assert rules.distance_types_for(pa.list_(pa.float32(), 4)) == ["l2", "cosine", "dot"]
    assert rules.distance_types_for(pa.int64()) == []


def test_table_columns(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("m"), mixed_table())
    cols = {c.name: c for c in ov.table_columns(ns_a, tid("m"))}
    assert list(cols) == ["id", "text", "tags", "flag", "day", "vec", "bits"]
    assert cols["vec"].kind == "vector" and cols["vec"].dim == 8
    assert cols["vec"].arrow_type_str == "fixed_size_list<float32>[8]"
    assert cols["bits"].kind == "binary_vector"
    assert cols["bits"].fitting_types == ["IVF_FLAT", "IVF_HNSW_FLAT"]
    assert cols["text"].fitting_types == STRING_TYPES
    assert cols["tags"].fitting_types == ["LABEL_LIST", "FTS"]
    assert cols["flag"].fitting_types == ["BITMAP", "BTREE", "ZONEMAP"]
    assert cols["day"].kind == "temporal"
    assert ov.table_num_rows(ns_a, tid("m")) == 40


# --------------------------------------------------------------------------- fit table vs pylance


def built_types(ds, column: str, candidates, build) -> list[str]:
    """The candidates lance builds on ``column`` (each under its own name)."""
    out = []
    for i, candidate in enumerate(candidates):
        try:
            build(ds, column, candidate, f"probe_{i}")
        except Exception:  # noqa: BLE001 - lance refuses with ValueError/OSError/RuntimeError
            continue
        out.append(candidate)
    return out


def test_fit_table_matches_pylance_for_dictionary_columns(local_ns: LanceNamespace) -> None:
    n = 60
    data = pa.table({"cat": pa.array([f"c{i % 5}" for i in range(n)]).dictionary_encode()})
    create_table(local_ns, tid("d"), data)
    ds = local_ns.open_dataset(tid("d"))
    assert pa.types.is_dictionary(ds.schema.field("cat").type)

    def build(ds, column, index_type, name):
        ds.create_scalar_index(column, rules.lance_index_type(index_type), name=name)

    candidates = [*rules.SCALAR_INDEX_TYPES, "FTS"]
    fitting = fitting_index_types(ds.schema.field("cat").type)
    assert built_types(ds, "cat", candidates, build) == fitting == ["ZONEMAP"]

    # The local backend applies the same table: ZONEMAP builds, the others are refused first.
    ov.create_index(local_ns, rules.build_index_request(tid("d"), "cat", "ZONEMAP", name="z"))
    with pytest.raises(InvalidInputError, match="fitting types: ZONEMAP"):
        ov.create_index(local_ns, rules.build_index_request(tid("d"), "cat", "BTREE", name="b"))


def test_fit_table_matches_pylance_for_uint8_vectors(local_ns: LanceNamespace) -> None:
    # At least 256 rows: with fewer, lance skips PQ training and "builds" PQ on anything.
    n, dim = rules.PQ_ROWS_PER_PARTITION + 44, 16
    rng = np.random.default_rng(0)
    bits = pa.FixedSizeListArray.from_arrays(
        pa.array(rng.integers(0, 256, n * dim, dtype=np.uint8)), dim
    )
    create_table(local_ns, tid("b"), pa.table({"bits": bits}))
    ds = local_ns.open_dataset(tid("b"))
    column_type = ds.schema.field("bits").type

    def build(ds, column, combo, name):
        index_type, metric = combo
        extra = {"num_sub_vectors": 2} if index_type in rules.PQ_TYPES else {}
        ds.create_index(column, index_type, name=name, metric=metric, num_partitions=1, **extra)

    combos = [(t, m) for t in rules.VECTOR_INDEX_TYPES for m in rules.DISTANCE_TYPES]
    expected = [
        (t, m)
        for t in fitting_index_types(column_type)
        for m in rules.distance_types_for(column_type)
    ]
    assert built_types(ds, "bits", combos, build) == expected
    assert expected == [("IVF_FLAT", "hamming"), ("IVF_HNSW_FLAT", "hamming")]

    with pytest.raises(InvalidInputError, match="only the hamming distance fits"):
        local_ns.create_table_index(
            CreateTableIndexRequest(id=tid("b"), column="bits", index_type="IVF_FLAT")
        )
    resp = local_ns.create_table_index(
        CreateTableIndexRequest(
            id=tid("b"), column="bits", index_type="IVF_FLAT", distance_type="hamming", name="h"
        )
    )
    assert resp.transaction_id
    assert (
        local_ns.describe_table_index_stats({"id": tid("b"), "index_name": "h"}).distance_type
        == "hamming"
    )


# --------------------------------------------------------------------------- defaults (pure)


def test_vector_param_defaults() -> None:
    d = rules.vector_param_defaults("IVF_PQ", 32, 40_000)
    assert d == {
        "num_partitions": 156,  # sqrt(40000) = 200, at most 40000 // 256 = 156 for PQ
        "num_sub_vectors": 4,  # 32 / 8 (16-dim sub-vectors from 128 dims up)
        "num_bits": 8,
        "sample_rate": 256,
        "max_iterations": 50,
        "target_partition_size": 8192,
    }
    assert rules.vector_param_defaults("IVF_FLAT", 16, 40_000)["num_partitions"] == 200  # sqrt
    assert rules.vector_param_defaults("IVF_PQ", 16, 300)["num_partitions"] == 1  # 300 // 256
    assert rules.vector_param_defaults("IVF_RQ", 16, 40_000)["num_bits"] == 5
    hnsw = rules.vector_param_defaults("IVF_HNSW_SQ", 16, 40_000)
    assert hnsw["num_partitions"] == 1 and hnsw["m"] == 20 and hnsw["ef_construction"] == 150
    assert "num_sub_vectors" not in hnsw
    assert rules.vector_param_defaults("IVF_HNSW_FLAT", 16, 5 * 2**20)["num_partitions"] == 5
    assert rules.vector_param_defaults("IVF_FLAT", 8, 100)["num_partitions"] == 10
    assert rules.vector_param_defaults("IVF_FLAT", 8, 0)["num_partitions"] == 1
    assert rules.vector_param_defaults("IVF_FLAT", 8, 10**9)["num_partitions"] == 4096
    assert rules.vector_param_defaults("IVF_FLAT", 8, None)["num_partitions"] is None
    assert rules.default_num_sub_vectors(24) == 3 and rules.default_num_sub_vectors(12) == 1
    assert rules.default_num_sub_vectors(16) == 2 and rules.default_num_sub_vectors(64) == 8
    assert rules.default_num_sub_vectors(128) == 8 and rules.default_num_sub_vectors(768) == 48
    assert rules.vector_params_for("IVF_FLAT") == [
        "num_partitions",
        "sample_rate",
        "max_iterations",
        "target_partition_size",
    ]
    assert "m" in rules.vector_params_for("IVF_HNSW_PQ")
    assert "num_sub_vectors" in rules.vector_params_for("IVF_HNSW_PQ")
    with pytest.raises(ValueError):
        rules.vector_param_defaults("BTREE", None, 10)


def test_chosen_build_params() -> None:
    def chosen(index_type: str, **kw):
        req = CreateTableIndexRequest(id=["t"], column="v", index_type=index_type, **kw)
        return rules.chosen_build_params(req, 32, 1000)

    assert chosen("IVF_FLAT") == {"num_partitions": 31}
    assert chosen("IVF_PQ") == {"num_partitions": 3, "num_sub_vectors": 4}
    assert chosen("IVF_PQ", num_partitions=2) == {"num_sub_vectors": 4}
    assert chosen("IVF_FLAT", target_partition_size=100) == {}
    assert chosen("IVF_HNSW_SQ") == {"num_partitions": 1}
    assert chosen("BTREE") == {}


def test_vector_request_without_parameters_uses_the_chosen_partitions(
    local_ns: LanceNamespace,
) -> None:
    """num_partitions left empty: the local backend builds with the console's documented
    choice (index_rules.default_num_partitions) and reports it."""
    rows, dim = 1000, 8
    create_table(local_ns, tid("big"), make_table(rows, dim=dim))
    req = rules.build_index_request(tid("big"), "vec", "IVF_FLAT", name="f", dim=dim, num_rows=rows)
    assert req.num_partitions is None
    resp = ov.create_index(local_ns, req)
    expected = rules.vector_param_defaults("IVF_FLAT", dim, rows)["num_partitions"]
    assert expected == rules.default_num_partitions("IVF_FLAT", rows) == 31  # isqrt(1000)
    built = local_ns.open_dataset(tid("big")).stats.index_stats("f")
    assert built["indices"][0]["num_partitions"] == expected
    assert resp.context["chosen.num_partitions"] == str(expected)


def test_plain_ivf_pq_request_builds_on_the_local_backend(local_ns: LanceNamespace) -> None:
    """An IVF_PQ request with no build parameters at all (this used to fail with
    "num_partitions and num_sub_vectors are required")."""
    rows, dim = 600, 16
    create_table(local_ns, tid("pq"), make_table(rows, dim=dim))
    events: list[dict] = []
    resp = local_ns.create_table_index(
        CreateTableIndexRequest(id=tid("pq"), column="vec", index_type="IVF_PQ"),
        progress=events.append,
    )
    assert resp.context == {"chosen.num_partitions": "2", "chosen.num_sub_vectors": "2"}
    assert {"num_partitions": 2, "num_sub_vectors": 2} in [
        e.get("chosen") for e in events if e.get("event") == "params"
    ]
    (stats,) = local_ns.open_dataset(tid("pq")).stats.index_stats("vec_idx")["indices"]
    assert stats["num_partitions"] == 2
    assert stats["sub_index"]["num_sub_vectors"] == 2


# --------------------------------------------------------------------------- request + validation


def col(arrow_type: pa.DataType, name: str = "c") -> rules.ColumnInfo:
    info = parse_arrow_type(arrow_type)
    return rules.ColumnInfo(
        name, str(info), rules.column_kind(info), dim=vector_dimension(info), type_info=info
    )


def test_build_request_fills_required_and_drops_foreign_params() -> None:
    req = rules.build_index_request(
        ["a", "t"],
        "vec",
        "IVF_PQ",
        distance_type="cosine",
        params={"num_partitions": 2, "m": 10, "num_sub_vectors": None},
        dim=32,
        num_rows=600,
    )
    assert req.num_sub_vectors == 4 and req.num_partitions == 2 and req.m is None
    assert req.distance_type == "cosine" and req.name is None
    fts = rules.build_index_request(
        ["a", "t"], "text", "fts", name="ft", params={"stem": False, "max_token_length": 12}
    )
    assert (fts.index_type, fts.stem, fts.max_token_length, fts.num_partitions) == (
        "FTS",
        False,
        12,
        None,
    )
    with pytest.raises(ValueError):
        rules.build_index_request(["a", "t"], "c", "NOPE")


@pytest.mark.parametrize(
    ("column", "index_type", "kwargs", "num_rows", "needle"),
    [
        (pa.list_(pa.float32(), 16), "IVF_PQ", {"num_sub_vectors": 5}, 600, "must divide"),
        (pa.list_(pa.float32(), 16), "IVF_FLAT", {"num_partitions": 700}, 600, "exceeds"),
        (pa.list_(pa.float32(), 16), "IVF_FLAT", {"distance_type": "hamming"}, 600, "binary"),
        (pa.list_(pa.uint8(), 16), "IVF_FLAT", {"distance_type": "l2"}, 600, "hamming"),
        (pa.list_(pa.uint8(), 16), "IVF_PQ", {"distance_type": "hamming"}, 600, "does not fit"),
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
        (pa.bool_(), "BLOOMFILTER", {}, 600, "does not fit"),
        (pa.binary(8), "BLOOMFILTER", {}, 600, "does not fit"),
        (pa.dictionary(pa.int32(), pa.string()), "BITMAP", {}, 600, "does not fit"),
        (pa.string(), "FTS", {"language": "Klingon"}, 600, "Unknown language"),
        (pa.string(), "FTS", {"max_token_length": 0}, 600, "at least 1"),
        (pa.string(), "BTREE", {"name": "bad name"}, 600, "index name"),
        (pa.list_(pa.float32(), 16), "IVF_FLAT", {}, 0, "no rows"),
    ],
)
def test_validate_rejects(column, index_type, kwargs, num_rows, needle) -> None:
    req = CreateTableIndexRequest(id=["a", "t"], column="c", index_type=index_type, **kwargs)
    problems = rules.validate_index_request(req, col(column), num_rows=num_rows)
    assert any(needle.lower() in p.lower() for p in problems), problems


def test_request_hints() -> None:
    req = rules.build_index_request(
        ["a", "t"], "c", "IVF_PQ", params={"num_partitions": 2}, dim=16, num_rows=300
    )
    assert rules.validate_index_request(req, col(pa.list_(pa.float32(), 16)), num_rows=300) == []
    (hint,) = rules.index_request_hints(req, 300)
    assert "about 512 rows" in hint
    assert rules.index_request_hints(req, 600) == []


def test_validate_accepts_and_names() -> None:
    req = rules.build_index_request(
        ["a", "t"], "c", "IVF_HNSW_SQ", distance_type="dot", params={"m": 8}, dim=16, num_rows=50
    )
    assert rules.validate_index_request(req, col(pa.list_(pa.float32(), 16)), num_rows=50) == []
    named = rules.build_index_request(["a", "t"], "c", "BTREE", name="by id")
    problems = rules.validate_index_request(named, col(pa.int64()))
    assert any("index name 'by id'" in p for p in problems), problems
    assert rules.request_problems(named) == problems
    dup = rules.build_index_request(["a", "t"], "c", "BTREE", name="c_idx")
    problems = rules.validate_index_request(dup, col(pa.int64()), existing_names=["c_idx"])
    assert any("already exists" in p for p in problems)
    assert rules.validate_index_request(dup, None) == ["Column 'c' does not exist in this table."]
    assert rules.column_problems(dup, None, None) == ["Column 'c' does not exist in this table."]


def test_index_names_follow_the_creation_rule(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("t"), make_table(10))
    for bad in ("by id", "café", "-x", "a/b", "x" * 129):
        with pytest.raises(InvalidInputError):
            ov.create_index(ns_a, CreateTableIndexRequest(
                id=tid("t"), column="id", index_type="BTREE", name=bad
            ))  # fmt: skip
    assert ov.index_overview(ns_a, tid("t")).empty
    ov.create_index(ns_a, rules.build_index_request(tid("t"), "id", "BTREE", name="by_id.v1-x"))
    assert list(ov.index_overview(ns_a, tid("t"))["name"]) == ["by_id.v1-x"]


# --------------------------------------------------------------------------- tokenizer preview


def test_tokenize_preview_follows_options() -> None:
    text = "The Running Dogs of Café"
    default = [t.text for t in ov.tokenize_preview(text, rules.fts_param_defaults())]
    assert default == ["run", "dog", "cafe"]
    plain = ov.tokenize_preview(
        text,
        {"base_tokenizer": "whitespace", "lower_case": False, "stem": False,
         "remove_stop_words": False, "ascii_folding": False},
    )  # fmt: skip
    assert [t.text for t in plain] == ["The", "Running", "Dogs", "of", "Café"]
    assert [t.position for t in plain] == [0, 1, 2, 3, 4]
    short = ov.tokenize_preview(text, {"max_token_length": 4, "stem": False})
    assert "running" not in [t.text for t in short]
    grams = ov.tokenize_preview("lance", rules.fts_param_defaults("ngram"))
    assert "lan" in [t.text for t in grams]
    with pytest.raises(ValueError, match="Klingon"):
        ov.tokenize_preview(text, {"language": "Klingon", "stem": True})
    assert {"simple", "whitespace", "raw", "ngram"} <= set(ov.available_tokenizers())


# --------------------------------------------------------------------------- overview, drop


def test_index_overview_and_lag(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("t"), make_table(50))
    ov.create_index(ns_a, rules.build_index_request(tid("t"), "id", "BTREE", name="by_id"))
    ov.create_index(
        ns_a,
        rules.build_index_request(
            tid("t"), "text", "FTS", name="ft", params={"with_position": True, "stem": False}
        ),
    )
    df = ov.index_overview(ns_a, tid("t"))
    assert list(df.columns) == list(ov.OVERVIEW_COLUMNS)
    rows = df.set_index("name")
    assert rows.loc["by_id", "type"] == "BTREE"
    assert rows.loc["ft", "type"] == "FTS"  # lance's INVERTED, shown as FTS
    assert rows.loc["by_id", "columns"] == "id"
    assert int(rows.loc["by_id", "indexed_rows"]) == 50
    assert int(rows.loc["by_id", "unindexed_rows"]) == 0
    assert float(rows.loc["by_id", "coverage"]) == 1.0
    details = ov.index_details_dict(rows.loc["ft", "details"])
    assert details.get("with_position") is True and details.get("stem") is False
    assert ov.lagging_indexes(df).empty

    append_rows(ns_a, tid("t"), make_table(7, start=50))
    df = ov.index_overview(ns_a, tid("t"))
    lag = ov.lagging_indexes(df)
    assert set(lag["name"]) == {"by_id", "ft"}
    assert int(lag.set_index("name").loc["by_id", "unindexed_rows"]) == 7

    ov.drop_index(ns_a, tid("t"), "by_id")
    assert list(ov.index_overview(ns_a, tid("t"))["name"]) == ["ft"]
    assert [i.index_name for i in ov.list_indexes(ns_a, tid("t"))] == ["ft"]


def test_fts_details_stay_readable_after_redaction(local_ns: LanceNamespace) -> None:
    """FTS options are not secrets: the JSON viewer's redaction must leave them readable."""
    for name in ("base_tokenizer", "max_token_length", "page_token", "key"):
        assert not is_secret_name(name), name
    create_table(local_ns, tid("t"), make_table(20))
    ov.create_index(
        local_ns,
        rules.build_index_request(
            tid("t"),
            "text",
            "FTS",
            name="ft",
            params={"base_tokenizer": "whitespace", "max_token_length": 12},
        ),
    )
    row = ov.index_overview(local_ns, tid("t")).set_index("name").loc["ft"]
    details = ov.index_details_dict(row["details"])
    assert (details["base_tokenizer"], details["max_token_length"]) == ("whitespace", 12)
    shown = redact_json(details)
    assert shown == details
    assert (shown["base_tokenizer"], shown["max_token_length"]) == ("whitespace", 12)
    assert REDACTED not in json.dumps(redact_json(row.to_dict()), default=str)
    assert redact_json({**details, "api_token": "s3cret"})["api_token"] == REDACTED


def test_overview_distance_type(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("v"), make_table(60, dim=8))
    req = rules.build_index_request(
        tid("v"),
        "vec",
        "IVF_FLAT",
        name="flat",
        distance_type="cosine",
        params={"num_partitions": 2},
    )
    ov.create_index(ns_a, req)
    row = ov.index_overview(ns_a, tid("v")).set_index("name").loc["flat"]
    assert row["type"] == "IVF_FLAT"
    assert row["distance_type"] == "cosine"


def test_empty_overview(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("e"), make_table(3))
    df = ov.index_overview(ns_a, tid("e"))
    assert df.empty and list(df.columns) == list(ov.OVERVIEW_COLUMNS)


# --------------------------------------------------------------------------- coverage history


def test_coverage_history(ns_a: LanceNamespace, backend_kind: str) -> None:
    create_table(ns_a, tid("h"), make_table(20))  # v1
    ov.create_index(ns_a, rules.build_index_request(tid("h"), "id", "BTREE", name="by_id"))  # v2
    append_rows(ns_a, tid("h"), make_table(5, start=20))  # v3
    append_rows(ns_a, tid("h"), make_table(5, start=25))  # v4
    df = ov.coverage_history(ns_a, tid("h"), max_versions=30)
    assert list(df.columns) == list(ov.HISTORY_COLUMNS)
    by_version = df[df.index_name == "by_id"].set_index("version")
    assert sorted(by_version.index) == [2, 3, 4]
    assert set(by_version["index_type"]) == {"BTREE"}
    if backend_kind == "local":
        assert df.attrs["source"] == "pylance"
        assert by_version.loc[4, "unindexed_rows"] == 10
        assert by_version.loc[4, "total_rows"] == 30
        assert by_version.loc[2, "coverage"] == 1.0
    else:
        assert df.attrs["source"] == "namespace"
    # bounded
    last2 = ov.coverage_history(ns_a, tid("h"), max_versions=2)
    assert sorted(set(last2.version)) == [3, 4]
    with pytest.raises(ValueError):
        ov.coverage_history(ns_a, tid("h"), max_versions=0)


def lance_history(location: str) -> dict[int, dict[str, frozenset[str]]]:
    """version -> index name -> its segment uuids, from lance's own describe_indices."""
    import lance

    ds = lance.dataset(location)
    return {
        int(v["version"]): {
            ix.name: frozenset(s.uuid for s in ix.segments)
            for ix in ds.checkout_version(v["version"]).describe_indices()
        }
        for v in ds.versions()
    }


def test_coverage_history_tells_indexes_apart_by_identity(ns_a: LanceNamespace) -> None:
    """An index keeps one id across appends and an optimize that merges its segments into new
    ones; an index dropped and created again under the same name is another index (another
    id) with no row at the versions between; the uuids are lance's own."""
    import lance

    create_table(ns_a, tid("h"), make_table(20))  # v1
    build = rules.build_index_request
    ov.create_index(ns_a, build(tid("h"), "id", "BTREE", name="by_id"))  # v2
    ov.create_index(ns_a, build(tid("h"), "text", "BTREE", name="by_text"))  # v3
    append_rows(ns_a, tid("h"), make_table(5, start=20))  # v4
    location = str(table_location(ns_a, tid("h")))
    lance.dataset(location).optimize.optimize_indices()  # v5: new segments, same indexes
    ov.drop_index(ns_a, tid("h"), "by_id")  # v6
    append_rows(ns_a, tid("h"), make_table(5, start=25))  # v7
    ov.create_index(ns_a, build(tid("h"), "id", "BTREE", name="by_id"))  # v8
    truth = lance_history(location)
    assert truth[4]["by_id"].isdisjoint(truth[5]["by_id"])  # the optimize made new segments
    df = ov.coverage_history(ns_a, tid("h"))
    for row in df.itertuples():
        assert row.index_uuid in truth[row.version][row.index_name]
    present = {n: sorted(set(df[df.index_name == n].version)) for n in ("by_id", "by_text")}
    assert present == {"by_id": [2, 3, 4, 5, 8], "by_text": [3, 4, 5, 6, 7, 8]}
    ids = df.groupby("index_name")["index_id"].agg(lambda s: sorted(set(s)))
    old_by_id = df[(df.index_name == "by_id") & (df.version == 2)].index_uuid.item()
    new_by_id = df[(df.index_name == "by_id") & (df.version == 8)].index_uuid.item()
    assert old_by_id in truth[2]["by_id"] and new_by_id in truth[8]["by_id"]
    assert ids["by_id"] == sorted([old_by_id, new_by_id])
    assert len(ids["by_text"]) == 1
    # bounded by the version the index table was read at
    upto = ov.coverage_history(ns_a, tid("h"), up_to=6)
    assert max(upto.version) == 6 and set(upto[upto.version == 6].index_name) == {"by_text"}


def test_overview_and_history_see_indexes_made_with_lance(ns_a: LanceNamespace) -> None:
    """Indexes created with lance directly (not through the console) are in the overview and
    the history, as lance's describe_indices lists them, at the version the overview is read
    at; an overview read at an older version lists that version's indexes."""
    import lance

    create_table(ns_a, tid("x"), make_table(30, dim=8))  # v1
    ov.create_index(ns_a, rules.build_index_request(tid("x"), "id", "BTREE", name="by_id"))
    location = str(table_location(ns_a, tid("x")))
    ds = lance.dataset(location)
    ds.create_scalar_index("text", "INVERTED", name="ext_fts")
    ds.create_index("vec", "IVF_FLAT", num_partitions=1, name="ext_vec")
    ds = lance.dataset(location)
    latest = ds.version
    described = {ix.name: ix for ix in ds.describe_indices()}
    assert set(described) == {"by_id", "ext_fts", "ext_vec"}
    df = ov.index_overview(ns_a, tid("x"), version=latest)
    assert df.attrs["version"] == latest
    rows = df.set_index("name")
    assert set(rows.index) == set(described)
    for name, ix in described.items():
        assert rows.loc[name, "uuid"] in {s.uuid for s in ix.segments}
        assert int(rows.loc[name, "indexed_rows"]) == ix.num_rows_indexed
    assert rows.loc["ext_vec", "type"] == "IVF_FLAT" and rows.loc["ext_fts", "type"] == "FTS"
    history = ov.coverage_history(ns_a, tid("x"), up_to=latest)
    at_latest = history[history.version == latest]
    assert set(at_latest.index_name) == set(described)
    assert set(at_latest.index_uuid) == set(rows["uuid"])
    before = ov.index_overview(ns_a, tid("x"), version=latest - 1)
    older = lance.dataset(location, version=latest - 1).describe_indices()
    assert set(before["name"]) == {ix.name for ix in older} == {"by_id", "ext_fts"}


def test_coverage_history_on_a_memory_namespace() -> None:
    """memory:// data lives in the namespace's lance session: history must read through it."""
    ns = backend.connect(f"memory://coverage-{uuid.uuid4().hex}")
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    create_table(ns, tid("h"), make_table(20))  # v1
    ov.create_index(ns, rules.build_index_request(tid("h"), "id", "BTREE", name="by_id"))  # v2
    ns.insert_into_table(
        InsertIntoTableRequest(id=tid("h"), mode="append"),
        ipc_stream_bytes(make_table(5, start=20)),
    )  # v3
    df = ov.coverage_history(ns, tid("h"))
    assert df.attrs["source"] == "pylance"
    by_version = df[df.index_name == "by_id"].set_index("version")
    assert sorted(by_version.index) == [2, 3]
    assert (by_version.loc[3, "indexed_rows"], by_version.loc[3, "total_rows"]) == (20, 25)
    assert by_version.loc[3, "unindexed_rows"] == 5
    assert by_version.loc[2, "coverage"] == 1.0


# --------------------------------------------------------------------------- background builds


def test_build_job_vector(ns_a: LanceNamespace, backend_kind: str) -> None:
    rows = 2 * rules.PQ_ROWS_PER_PARTITION  # PQ trains one partition per 256 rows at most
    create_table(ns_a, tid("v"), make_table(rows, dim=16))
    req = rules.build_index_request(
        tid("v"), "vec", "IVF_PQ", name="pq", params={"num_partitions": 2}, dim=16, num_rows=rows
    )
    assert rules.index_request_hints(req, rows) == []
    job = build_jobs.BuildRun.prepare(ns_a, req, time_limit=None).run(ns_a, req, poll_interval=0.05)
    assert job.status == "succeeded", job.error
    assert job.index_name == "pq" and job.fraction == 1.0
    if backend_kind == "local":
        assert job.mode == "events"
        assert job.events and {"start", "complete"} <= {e.get("event") for e in job.events}
        assert job.stages
    else:
        assert job.mode == "polling"
    row = ov.index_overview(ns_a, tid("v")).set_index("name").loc["pq"]
    assert int(row["indexed_rows"]) == rows


def lance_stage_events(location: str, column: str, index_type: str, **kwargs) -> list[dict]:
    """lance's own progress events of a build, captured with a progress_callback of ours."""
    import lance

    events: list[dict] = []

    def capture(e) -> None:
        events.append(
            {"event": e.event, "stage": e.stage, "completed": e.completed, "total": e.total,
             "unit": e.unit}
        )  # fmt: skip

    lance.dataset(location).create_index(column, index_type, progress_callback=capture, **kwargs)
    return events


def test_build_job_records_every_stage_lance_reports(local_ns, tmp_path) -> None:
    """An IVF_PQ build's job records the stages lance reports (train_ivf, train_quantizer,
    shuffle, merge_partitions...), in order, each with lance's own total and unit and done at
    the end; fed lance's events one by one, the job's fraction follows each event: completed
    / total within the stage, None (running, no figure) for a stage without a total, 1 once
    the stage completes."""
    import shutil

    rows = 2 * rules.PQ_ROWS_PER_PARTITION
    create_table(local_ns, tid("v"), make_table(rows, dim=16))
    copy = tmp_path / "copy.lance"
    shutil.copytree(table_location(local_ns, tid("v")), copy)
    params = {"num_partitions": 2, "num_sub_vectors": 4}
    req = rules.build_index_request(
        tid("v"), "vec", "IVF_PQ", name="pq", params=params, dim=16, num_rows=rows
    )
    job = build_jobs.BuildRun.prepare(local_ns, req, time_limit=None).run(local_ns, req)
    assert job.status == "succeeded", job.error
    theirs = lance_stage_events(str(copy), "vec", "IVF_PQ", name="pq", metric="l2", **params)
    order = list(dict.fromkeys(e["stage"] for e in theirs))
    assert {"train_ivf", "train_quantizer", "shuffle", "merge_partitions"} <= set(order)
    assert job.stages == order
    for recorded in job.build_stages:
        last = [e for e in theirs if e["stage"] == recorded.name][-1]
        assert recorded.done and last["event"] == "complete"
        assert (recorded.total, recorded.unit) == (last["total"] or None, last["unit"] or None)
        assert recorded.number == order.index(recorded.name) + 1
    assert job.current_stage is not None and job.current_stage.name == order[-1]

    # the figure follows every event lance reports
    replay = build_jobs.BuildRun(
        build_jobs.BuildJob(task_id="replay", label="x", table_id=tuple(tid("v")))
    )
    fractions = []
    for e in theirs:
        replay._record(e)
        now = replay.get()
        assert now.current_stage is not None
        assert now.current_stage.name == e["stage"]
        assert now.stages == list(dict.fromkeys(x["stage"] for x in theirs[: len(fractions) + 1]))
        if e["event"] == "complete":
            expected = 1.0
        elif e["total"]:
            expected = min(e["completed"] / e["total"], 1.0)
        else:
            expected = None
        assert now.fraction == expected and now.current_stage.fraction == expected
        fractions.append(now.fraction)
    assert None in fractions  # train_quantizer: no total, shown as running, not 0 %
    moving = [f for e, f in zip(theirs, fractions, strict=True) if e["stage"] == "merge_partitions"]
    assert moving == sorted(moving) and len(set(moving)) > 2


def test_build_job_failure_is_reported(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("t"), make_table(10))
    ov.create_index(ns_a, rules.build_index_request(tid("t"), "id", "BTREE", name="dup"))
    req = rules.build_index_request(tid("t"), "id", "BTREE", name="dup")
    job = build_jobs.BuildRun.prepare(ns_a, req, time_limit=None).run(ns_a, req)
    assert job.status == "failed"
    assert isinstance(job.error, LanceNamespaceError)
    info = backend.describe_error(job.error)
    assert info["code_name"] == "TABLE_INDEX_ALREADY_EXISTS"
