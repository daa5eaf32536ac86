"""Import and export of table data (``backend.services.transfer``) on both backends (``ns``:
a real local directory namespace and a real REST server): every format round-trips, append
and merge, refusals that leave the table untouched, the size cap, type overrides, exports at
an older version / with a filter, CSV and vector columns."""

from __future__ import annotations

import gc
import io
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from lance_namespace import (
    CreateNamespaceRequest,
    DescribeTableRequest,
    ListTablesRequest,
    ListTableVersionsRequest,
)
from lance_namespace.errors import (
    InvalidInputError,
    NamespaceNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
)

from backend.arrow import import_types
from backend.services import exports, imports
from backend.services.search.query import abbreviate, iter_rows, read_rows
from tests.support import local_path, run_python

NS = ["data"]


def source_table(n: int, *, start: int = 0) -> pa.Table:
    ids = np.arange(start, start + n, dtype=np.int64)
    return pa.table(
        {
            "id": pa.array(ids),
            "name": pa.array([f"item {i}" for i in ids]),
            "score": pa.array(ids / 4.0),
            "flag": pa.array(ids % 3 == 0),
            "ts": pa.array(1_700_000_000_000 + ids * 1000, pa.timestamp("ms")),
        }
    )


def vector_table(n: int, dim: int = 8) -> pa.Table:
    rng = np.random.default_rng(3)
    flat = pa.array(rng.random(n * dim, dtype=np.float32))
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "label": pa.array([f"v{i}" for i in range(n)]),
            "vec": pa.FixedSizeListArray.from_arrays(flat, dim),
        }
    )


def encode(table: pa.Table, fmt: str) -> bytes:
    """``table`` as the bytes of a file of ``fmt`` (arrow: IPC file; arrow-stream: stream)."""
    sink = io.BytesIO()
    if fmt == "csv":
        pacsv.write_csv(table, sink)
    elif fmt == "parquet":
        pq.write_table(table, sink)
    elif fmt == "arrow":
        with pa.ipc.new_file(sink, table.schema) as w:
            w.write_table(table)
    elif fmt == "arrow-stream":
        with pa.ipc.new_stream(sink, table.schema) as w:
            w.write_table(table)
    elif fmt == "jsonl":
        for row in table.to_pylist():
            row = {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()}
            sink.write((json.dumps(row) + "\n").encode())
    return sink.getvalue()


def decode(data: bytes, fmt: str) -> pa.Table:
    if fmt == "parquet":
        return pq.read_table(io.BytesIO(data))
    if fmt == "csv":
        return pacsv.read_csv(io.BytesIO(data))
    return pa.ipc.open_file(pa.py_buffer(data)).read_all()


def same_rows(got: pa.Table, want: pa.Table) -> None:
    """Equal values, compared in ``want``'s types and ``id`` order."""
    got = got.select(want.column_names).cast(want.schema).sort_by("id")
    assert got.equals(want.sort_by("id")), (got.slice(0, 3), want.slice(0, 3))


def export(ns: Any, table_id: list[str], fmt: str, **kw: Any) -> tuple[bytes, exports.ExportResult]:
    out = io.BytesIO()
    result = exports.export_table(ns, table_id, fmt, out, **kw)
    assert result.bytes == len(out.getvalue())
    return out.getvalue(), result


def versions(ns: Any, table_id: list[str]) -> list[int]:
    listing = ns.list_table_versions(ListTableVersionsRequest(id=table_id))
    return sorted(v.version for v in listing.versions)


def all_rows(ns: Any, table_id: list[str]) -> pa.Table:
    return read_rows(ns, table_id, limit=100_000)


def tables_in(ns: Any, namespace: list[str]) -> list[str]:
    return list(ns.list_tables(ListTablesRequest(id=namespace, include_declared=True)).tables)


@pytest.fixture
def data_ns(ns: Any) -> Any:
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    return ns


# --- pure helpers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("a.csv", "csv"),
        ("A.CSV", "csv"),
        ("x.parquet", "parquet"),
        ("x.pq", "parquet"),
        ("x.arrow", "arrow"),
        ("x.ipc", "arrow"),
        ("x.feather", "arrow"),
        ("x.jsonl", "jsonl"),
        ("x.ndjson", "jsonl"),
    ],
)
def test_format_of(name: str, fmt: str) -> None:
    assert imports.format_of(name) == fmt


@pytest.mark.parametrize("name", ["x.json", "x.txt", "x", "", "csv"])
def test_format_of_unknown(name: str) -> None:
    with pytest.raises(InvalidInputError, match="cannot tell the format"):
        imports.format_of(name)


def test_apply_types() -> None:
    schema = pa.schema([("a", pa.int64()), ("b", pa.timestamp("s")), ("c", pa.string())])
    out = import_types.apply_types(
        schema, {"a": "float32", "b": "timestamp", "c": "fixed_size_list<float32>[4]"}
    )
    # "timestamp" prints like b's current type: b keeps its unit.
    assert out.types == [pa.float32(), pa.timestamp("s"), pa.list_(pa.float32(), 4)]
    assert import_types.apply_types(schema, {"b": "timestamp[ms]", "c": "string"}).types == [
        pa.int64(),
        pa.timestamp("ms"),
        pa.string(),
    ]
    assert import_types.apply_types(schema, {"a": "list<int32>"}).field("a").type == pa.list_(
        pa.int32()
    )
    with pytest.raises(InvalidInputError) as err:
        import_types.apply_types(schema, {"zz": "int64", "a": "int65", "c": ""})
    text = str(err.value)
    assert "no column 'zz'" in text and "int65" in text and "column c: the type is empty" in text
    with pytest.raises(InvalidInputError, match="decimal"):
        import_types.apply_types(schema, {"a": "decimal128(10, 2)"})
    # a type typed that Arrow cannot make: said, not an OverflowError or a RecursionError
    with pytest.raises(InvalidInputError, match=r"the length is 1 to 2,147,483,647"):
        import_types.apply_types(schema, {"c": "fixed_size_list<float32>[99999999999]"})
    deep = "list<" * 5000 + "int64" + ">" * 5000
    with pytest.raises(InvalidInputError, match="nests at most 8 lists"):
        import_types.apply_types(schema, {"a": deep})


def test_a_typed_type_is_read_whole() -> None:
    """Every part of a typed type counts: a unit, a length or an item type is kept or the
    text is refused, never read as a nearby type."""
    schema = pa.schema([("d", pa.date32()), ("t", pa.list_(pa.int64()))])
    made = import_types.apply_types(schema, {"d": "date64[ms]", "t": "list<timestamp[ms]>"}).types
    assert made == [pa.date64(), pa.list_(pa.timestamp("ms"))]
    assert import_types.apply_types(schema, {"t": "large_list<item: date64[ms]>"}).field(
        "t"
    ).type == pa.large_list(pa.date64())
    for text, words in [
        ("dateXYZ", "unknown Arrow type 'dateXYZ'"),
        ("int64[5]", "unknown Arrow type 'int64[5]'"),
        ("int64<utf8>", "unknown Arrow type"),
        ("list<int64>[3]", "a length is for fixed_size_list"),
        ("list<timestamp[ms, tz=UTC]>", "write timestamp, timestamp[s]"),
        ("list<struct<a: int64>>", "struct types cannot be set here"),
        ("list<>", "give the item type"),
    ]:
        with pytest.raises(InvalidInputError, match=re.escape(words)):
            import_types.apply_types(schema, {"d": text})


def test_schema_differences_names_every_problem() -> None:
    table = pa.schema([("id", pa.int64()), ("name", pa.string()), ("score", pa.float64())])
    upload = pa.schema([("id", pa.string()), ("score", pa.int32()), ("extra", pa.bool_())])
    problems = import_types.schema_differences(upload, table, on=["key"])
    text = "; ".join(problems)
    assert "missing columns (in the table, not in the upload): name" in text
    assert "extra columns (not in the table): extra" in text
    assert "column id: the table holds int64, the upload utf8" in text
    assert "score" not in text.split("column id")[1]  # int32 fits a float64 column
    assert "key column key is not a column of the table" in text
    assert import_types.schema_differences(table, table, on=["id"]) == []


# --- inspect --------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["csv", "parquet", "arrow", "arrow-stream", "jsonl"])
def test_inspect_upload(fmt: str) -> None:
    table = source_table(1234)
    data = encode(table, fmt)
    preview = imports.inspect_upload(data, "arrow" if fmt.startswith("arrow") else fmt)
    assert preview.num_rows == 1234
    assert preview.size == len(data)
    assert preview.schema.names == table.column_names
    assert list(preview.sample["id"])[:3] == [0, 1, 2]
    assert len(preview.sample) == imports.SAMPLE_ROWS
    types = dict(zip(preview.types()["column"], preview.types()["type"], strict=True))
    assert types["id"] == "int64" and types["name"] == "utf8" and types["score"] == "float64"
    # A file object (a BytesIO like Streamlit's uploads, or any other) is read the same way,
    # and left open.
    for handle in (io.BytesIO(data), io.BufferedReader(io.BytesIO(data))):
        again = imports.inspect_upload(handle, "arrow" if fmt.startswith("arrow") else fmt)
        assert again.num_rows == 1234 and not handle.closed
        assert again.schema == preview.schema


def test_inspect_refuses_garbage() -> None:
    with pytest.raises(InvalidInputError, match="not readable as Parquet"):
        imports.inspect_upload(b"not a parquet file at all", "parquet")
    with pytest.raises(InvalidInputError, match="import formats"):
        imports.inspect_upload(b"a,b\n1,2\n", "xlsx")
    with pytest.raises(InvalidInputError, match="empty"):
        imports.inspect_upload(b"", "csv")


# --- round trips ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["csv", "parquet", "arrow", "arrow-stream", "jsonl"])
def test_each_format_round_trips(data_ns: Any, fmt: str) -> None:
    ns = data_ns
    table = source_table(3000)
    table_id = [*NS, f"rt_{fmt.replace('-', '_')}"]
    seen: list[tuple[int, int | None]] = []
    result = imports.import_table(
        ns,
        table_id,
        encode(table, fmt),
        "arrow" if fmt.startswith("arrow") else fmt,
        progress=lambda done, total: seen.append((done, total)),
        total_rows=3000,
    )
    assert (result.rows, result.mode, result.version) == (3000, "create", 1)
    assert seen and seen[-1] == (3000, 3000)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert versions(ns, table_id) == [1]
    same_rows(all_rows(ns, table_id), table)
    for out_fmt in exports.EXPORT_FORMATS:
        data, exported = export(ns, table_id, out_fmt)
        assert (exported.rows, exported.version) == (3000, 1)
        assert exported.file_name == f"{table_id[-1]}-v1.{out_fmt}"
        same_rows(decode(data, out_fmt), table)


def test_import_from_a_file_object(data_ns: Any, tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_bytes(encode(source_table(500), "csv"))
    with open(path, "rb") as handle:
        result = imports.import_table(data_ns, [*NS, "from_file"], handle, "csv")
        assert not handle.closed
    assert result.rows == 500
    same_rows(all_rows(data_ns, [*NS, "from_file"]), source_table(500))


def test_create_is_a_real_table(data_ns: Any) -> None:
    imports.import_table(data_ns, [*NS, "real"], encode(source_table(10), "parquet"), "parquet")
    desc = data_ns.describe_table(DescribeTableRequest(id=[*NS, "real"]))
    assert not desc.is_only_declared
    assert versions(data_ns, [*NS, "real"]) == [1]
    assert "real" in tables_in(data_ns, NS)


def test_vector_columns_round_trip_and_csv_refuses_them(data_ns: Any) -> None:
    ns = data_ns
    table = vector_table(300)
    table_id = [*NS, "vectors"]
    imports.import_table(ns, table_id, encode(table, "arrow"), "arrow")
    for fmt in ("parquet", "arrow"):
        data, _ = export(ns, table_id, fmt)
        assert decode(data, fmt).schema.field("vec").type == pa.list_(pa.float32(), 8)
        same_rows(decode(data, fmt), table)
    out = io.BytesIO()
    with pytest.raises(InvalidInputError, match="CSV cannot hold .*vec") as err:
        exports.export_table(ns, table_id, "csv", out)
    assert "label" not in str(err.value)
    assert out.getvalue() == b""
    data, result = export(ns, table_id, "csv", drop_nested=True)
    assert result.columns == ("id", "label")
    same_rows(decode(data, "csv"), table.select(["id", "label"]))
    # Columns picked without the vector: CSV is fine.
    data, result = export(ns, table_id, "csv", columns=["label", "id"])
    assert decode(data, "csv").column_names == ["label", "id"]


def test_jsonl_vectors_into_a_vector_column(data_ns: Any) -> None:
    ns = data_ns
    table = vector_table(50)
    imports.import_table(ns, [*NS, "vj"], encode(table, "arrow"), "arrow")
    more = vector_table(60).slice(50)
    lines = "".join(json.dumps(r) + "\n" for r in more.to_pylist()).encode()
    result = imports.import_table(ns, [*NS, "vj"], lines, "jsonl", mode="append")
    assert (result.rows, result.version) == (10, 2)
    rows = all_rows(ns, [*NS, "vj"])
    assert rows.schema.field("vec").type == pa.list_(pa.float32(), 8)
    same_rows(rows, vector_table(60))


# --- append and merge -------------------------------------------------------------------------


def test_append_and_merge(data_ns: Any) -> None:
    ns = data_ns
    table_id = [*NS, "orders"]
    imports.import_table(ns, table_id, encode(source_table(100), "parquet"), "parquet")
    appended = imports.import_table(
        ns, table_id, encode(source_table(50, start=100), "csv"), "csv", mode="append"
    )
    assert (appended.rows, appended.version, appended.mode) == (50, 2, "append")
    same_rows(all_rows(ns, table_id), source_table(150))

    changed = source_table(20, start=140)
    changed = changed.set_column(1, "name", pa.array([f"new {i}" for i in range(140, 160)]))
    merged = imports.import_table(
        ns, table_id, encode(changed, "jsonl"), "jsonl", mode="merge", on=["id"]
    )
    assert (merged.rows, merged.version, merged.mode) == (20, 3, "merge")
    assert (merged.updated, merged.inserted) == (10, 10)
    rows = all_rows(ns, table_id).sort_by("id")
    assert rows.num_rows == 160
    names = dict(zip(rows["id"].to_pylist(), rows["name"].to_pylist(), strict=True))
    assert names[139] == "item 139" and names[140] == "new 140" and names[159] == "new 159"
    assert versions(ns, table_id) == [1, 2, 3]


def test_append_casts_to_the_table_types(data_ns: Any) -> None:
    ns = data_ns
    table_id = [*NS, "typed"]
    imports.import_table(ns, table_id, encode(source_table(10), "parquet"), "parquet")
    narrow = source_table(5, start=10)
    narrow = narrow.set_column(0, "id", narrow["id"].cast(pa.int32()))
    narrow = narrow.set_column(4, "ts", narrow["ts"].cast(pa.timestamp("s")))
    narrow = narrow.select(["ts", "name", "id", "flag", "score"])  # another column order
    imports.import_table(ns, table_id, encode(narrow, "arrow"), "arrow", mode="append")
    rows = all_rows(ns, table_id)
    assert rows.schema.field("id").type == pa.int64()
    same_rows(rows, source_table(15))


# --- refusals that write nothing -----------------------------------------------------------------


def test_schema_mismatch_is_refused_and_writes_nothing(data_ns: Any) -> None:
    ns = data_ns
    table_id = [*NS, "strict"]
    imports.import_table(ns, table_id, encode(source_table(20), "parquet"), "parquet")
    before = versions(ns, table_id)
    wrong = pa.table(
        {
            "id": pa.array([f"x{i}" for i in range(5)]),
            "name": pa.array(["a"] * 5),
            "score": pa.array([1.0] * 5),
            "colour": pa.array(["red"] * 5),
        }
    )
    for fmt in ("csv", "parquet"):
        with pytest.raises(InvalidInputError) as err:
            imports.import_table(ns, table_id, encode(wrong, fmt), fmt, mode="append")
        text = str(err.value)
        assert "nothing was written" in text
        assert "missing columns (in the table, not in the upload): flag, ts" in text
        assert "extra columns (not in the table): colour" in text
        assert "column id: the table holds int64, the upload utf8" in text
    with pytest.raises(InvalidInputError) as err:
        imports.import_table(
            ns,
            table_id,
            encode(source_table(5).drop_columns(["id"]), "arrow"),
            "arrow",
            mode="merge",
            on=["id"],
        )
    assert "key column id is not in the upload" in str(err.value)
    with pytest.raises(InvalidInputError, match="key columns"):
        imports.import_table(ns, table_id, encode(source_table(5), "csv"), "csv", mode="merge")
    assert versions(ns, table_id) == before
    same_rows(all_rows(ns, table_id), source_table(20))


def test_create_refusals(data_ns: Any) -> None:
    ns = data_ns
    imports.import_table(ns, [*NS, "taken"], encode(source_table(3), "csv"), "csv")
    with pytest.raises(TableAlreadyExistsError):
        imports.import_table(ns, [*NS, "taken"], encode(source_table(3), "csv"), "csv")
    with pytest.raises(NamespaceNotFoundError):
        imports.import_table(ns, ["nowhere", "t"], encode(source_table(3), "csv"), "csv")
    with pytest.raises(InvalidInputError):
        imports.import_table(ns, [*NS, "bad name"], encode(source_table(3), "csv"), "csv")
    with pytest.raises(TableNotFoundError):
        imports.import_table(
            ns, [*NS, "absent"], encode(source_table(3), "csv"), "csv", mode="append"
        )
    assert tables_in(ns, NS) == ["taken"]
    assert versions(ns, [*NS, "taken"]) == [1]


def wide_csv(rows: int, bad_row: int | None = None) -> bytes:
    """A CSV of several 1 MiB reading blocks (long text), ``x`` as the id of ``bad_row``."""
    pad = "p" * 200
    lines = ["id,name,pad"]
    for i in range(rows):
        lines.append(f"{'x' if i == bad_row else i},item {i},{pad}")
    return ("\n".join(lines) + "\n").encode()


def test_bad_value_midway_writes_nothing(data_ns: Any, backend_kind: str) -> None:
    ns = data_ns
    data = wide_csv(10_000, bad_row=9_000)
    assert len(data) > 2 * imports.BLOCK_BYTES
    schema = import_types.apply_types(
        imports.inspect_upload(wide_csv(100), "csv").schema, {"id": "int64"}
    )
    seen: list[int] = []
    # create: the table declared for the import is dropped again
    with pytest.raises(InvalidInputError) as err:
        imports.import_table(
            ns, [*NS, "midway"], data, "csv", schema=schema, progress=lambda d, t: seen.append(d)
        )
    assert "invalid value 'x'" in str(err.value) and "nothing was written" in str(err.value)
    assert seen and 0 < seen[-1] < 9_000  # some batches were read (and handed on) first
    assert "midway" not in tables_in(ns, NS)
    with pytest.raises(TableNotFoundError):
        ns.describe_table(DescribeTableRequest(id=[*NS, "midway"]))
    if backend_kind == "local":
        root = local_path(ns.root)
        assert not [p for p in root.iterdir() if "midway" in p.name]
    # append: no new version
    imports.import_table(ns, [*NS, "target"], wide_csv(100), "csv", schema=schema)
    with pytest.raises(InvalidInputError, match="invalid value 'x'"):
        imports.import_table(ns, [*NS, "target"], data, "csv", schema=schema, mode="append")
    assert versions(ns, [*NS, "target"]) == [1]
    assert all_rows(ns, [*NS, "target"]).num_rows == 100


def _latin1_upload(fmt: str) -> bytes:
    """One row whose text column holds "café" in latin-1: bytes that are not UTF-8, which the
    JSON, Parquet and Arrow readers hand on unchecked (the CSV reader checks)."""
    if fmt == "jsonl":
        return b'{"id": 1, "name": "caf\xe9"}\n'
    raw = pa.array([b"caf\xe9"], pa.binary()).view(pa.string())  # not UTF-8, typed as text
    table = pa.table({"id": pa.array([1], pa.int64()), "name": raw})
    sink = io.BytesIO()
    if fmt == "parquet":
        pq.write_table(table, sink)
    else:
        with pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
    return sink.getvalue()


@pytest.mark.parametrize("fmt", ["jsonl", "parquet", "arrow"])
def test_text_that_is_not_utf8_is_refused_and_writes_nothing(data_ns: Any, fmt: str) -> None:
    """An upload whose text is not UTF-8 was imported, and the table it made could not be
    read back (Arrow refuses the bytes at every read): the preview and the import now refuse
    it, naming the column, and write nothing."""
    ns = data_ns
    data = _latin1_upload(fmt)
    with pytest.raises(InvalidInputError, match="column 'name' holds a value Arrow refuses"):
        imports.inspect_upload(data, fmt)
    with pytest.raises(InvalidInputError) as err:
        imports.import_table(ns, [*NS, "latin"], data, fmt)
    assert "column 'name'" in str(err.value) and "text must be UTF-8" in str(err.value)
    assert "nothing was written" in str(err.value)
    assert "latin" not in tables_in(ns, NS)
    imports.import_table(ns, [*NS, "target"], b'{"id": 1, "name": "ok"}\n', "jsonl")
    with pytest.raises(InvalidInputError, match="text must be UTF-8"):
        imports.import_table(ns, [*NS, "target"], data, fmt, mode="append")
    assert versions(ns, [*NS, "target"]) == [1]
    assert all_rows(ns, [*NS, "target"]).column("name").to_pylist() == ["ok"]


@pytest.mark.parametrize(
    ("fmt", "data", "kept"),
    [
        # beyond int64, within uint64: uint64, digits kept (a null among them too)
        ("csv", b"id,n\n1,18446744073709551615\n2,\n3,9223372036854775808\n", "uint64"),
        (
            "jsonl",
            b'{"id": 1, "n": 18446744073709551615}\n{"id": 2}\n{"id": 3, "n": 5}\n',
            "uint64",
        ),
        # beyond uint64 or below int64: CSV keeps the digits as text
        ("csv", b"id,n\n1,123456789012345678901234\n2,-9223372036854775809\n", "string"),
    ],
)
def test_whole_numbers_beyond_int64_keep_their_digits(
    data_ns: Any, fmt: str, data: bytes, kept: str
) -> None:
    """pyarrow infers such a column as float64, which rounds every value
    (18446744073709551615 read as 1.8446744073709552e+19): the preview and the import now
    type it so that each value is the one in the file, as Python's own parser reads it."""
    if fmt == "csv":
        expected = [
            (None if not v else int(v) if kept == "uint64" else v)
            for v in (line.split(",")[1] for line in data.decode().splitlines()[1:])
        ]
    else:
        expected = [json.loads(line).get("n") for line in data.decode().splitlines()]
    preview = imports.inspect_upload(data, fmt)
    assert str(preview.schema.field("n").type) == kept
    imports.import_table(data_ns, [*NS, "wide"], data, fmt)
    stored = all_rows(data_ns, [*NS, "wide"]).sort_by("id")
    assert stored.column("n").to_pylist() == expected
    # the preview's rows show the same values (a null among integers keeps them integers)
    shown = preview.sample["n"].tolist()
    assert [None if pd.isna(v) else v for v in shown] == expected


def test_fractions_and_exponents_stay_float64() -> None:
    data = b"id,a,b\n1,1234567890123456789012.5,1e25\n2,3,12345678901234567890123\n"
    preview = imports.inspect_upload(data, "csv")
    assert preview.schema.field("a").type == pa.float64()
    assert preview.schema.field("b").type == pa.float64()


def test_an_integer_column_with_nulls_is_shown_as_integers() -> None:
    """Rows on screen (previews, search results, the row browser) went through NumPy, which
    makes an integer column holding a null floats: 9007199254740993 was shown as
    9007199254740992.0."""
    table = pa.table(
        {
            "big": pa.array([9007199254740993, None]),
            "u": pa.array([2**64 - 1, None], pa.uint64()),
            "whole": pa.array([1, 2]),
        }
    )
    frame = abbreviate(table)
    assert frame["big"].tolist()[0] == 9007199254740993
    assert frame["u"].tolist()[0] == 2**64 - 1
    assert pd.isna(frame["big"].tolist()[1])
    assert frame["whole"].tolist() == [1, 2]


@pytest.mark.parametrize(
    ("header", "said"),
    [
        (b"a,a", "columns named twice in the upload: a"),
        (
            b"user.id,b",
            "column names with '.', which lance reads as a nested column's path: user.id",
        ),
    ],
)
def test_column_names_no_table_can_have_are_refused_at_the_preview(
    data_ns: Any, header: bytes, said: str
) -> None:
    """The preview said "InternalError: KeyError" for a name given twice (its sample read
    the column by name) and the import "InternalError: OSError" for a name with '.' (lance's
    refusal): both are now said in words, by one check, and the import writes nothing."""
    data = header + b"\n1,2\n"
    with pytest.raises(InvalidInputError) as err:
        imports.inspect_upload(data, "csv")
    assert str(err.value).endswith(said)
    with pytest.raises(InvalidInputError, match=re.escape(said)):
        imports.import_table(data_ns, [*NS, "named"], data, "csv")
    assert "named" not in tables_in(data_ns, NS)


def test_an_upload_without_columns_or_with_an_unnamed_one_is_refused(data_ns: Any) -> None:
    """A CSV column without a name was imported, and lance could not read the table back
    ("No field named ."); a Parquet file of no columns made a table of no columns."""
    empty = io.BytesIO()
    pq.write_table(pa.table({}), empty)
    for data, fmt, said in [
        (b"a,,b\n1,2,3\n", "csv", "columns without a name (column 2)"),
        (empty.getvalue(), "parquet", "the upload has no columns"),
    ]:
        with pytest.raises(InvalidInputError, match=re.escape(said)):
            imports.inspect_upload(data, fmt)
        with pytest.raises(InvalidInputError, match=re.escape(said)):
            imports.import_table(data_ns, [*NS, "odd"], data, fmt)
        assert "odd" not in tables_in(data_ns, NS)


def test_value_too_large_for_the_column_writes_nothing(data_ns: Any) -> None:
    ns = data_ns
    small = pa.table({"id": pa.array([1, 2], pa.int32())})
    imports.import_table(ns, [*NS, "narrow"], encode(small, "parquet"), "parquet")
    big = pa.table({"id": pa.array([3, 2**40], pa.int64())})
    with pytest.raises(InvalidInputError, match="not in range"):
        imports.import_table(ns, [*NS, "narrow"], encode(big, "parquet"), "parquet", mode="append")
    assert versions(ns, [*NS, "narrow"]) == [1]


class Unreadable(io.RawIOBase):
    """A file object of a given size whose bytes must never be read."""

    def __init__(self, size: int):
        self.size = size
        self.position = 0
        self.reads = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        self.position = {0: 0, 1: self.position, 2: self.size}[whence] + offset
        return self.position

    def tell(self) -> int:
        return self.position

    def readinto(self, buffer: Any) -> int:
        self.reads += 1
        raise AssertionError("the upload was read")


def test_size_cap_refuses_before_reading(data_ns: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    assert imports.MAX_IMPORT_BYTES == imports.DEFAULT_MAX_IMPORT_BYTES == 1 << 30
    monkeypatch.setenv(imports.MAX_IMPORT_ENV, "1000")
    assert imports.max_import_bytes() == 1000
    source = Unreadable(1001)
    with pytest.raises(InvalidInputError) as err:
        imports.import_table(data_ns, [*NS, "capped"], source, "csv")
    text = str(err.value)
    assert (
        "1,001 bytes" in text and "limit is 1,000 bytes" in text and imports.MAX_IMPORT_ENV in text
    )
    assert "Nothing was read" in text
    with pytest.raises(InvalidInputError, match="limit is 1,000 bytes"):
        imports.inspect_upload(source, "csv")
    with pytest.raises(InvalidInputError, match="limit"):
        imports.import_table(data_ns, [*NS, "capped"], b"x" * 1001, "csv")
    assert source.reads == 0
    assert tables_in(data_ns, NS) == []
    # At the cap: accepted.
    monkeypatch.setenv(imports.MAX_IMPORT_ENV, str(len(encode(source_table(3), "csv"))))
    assert imports.import_table(
        data_ns, [*NS, "capped"], encode(source_table(3), "csv"), "csv"
    ).rows
    monkeypatch.setenv(imports.MAX_IMPORT_ENV, "lots")
    with pytest.raises(InvalidInputError, match="positive number of bytes"):
        imports.max_import_bytes()


def test_type_overrides(data_ns: Any) -> None:
    ns = data_ns
    csv = b"code,amount,when\n007,1.5,2024-01-02T03:04:05\n010,2.25,2024-02-03T04:05:06\n"
    preview = imports.inspect_upload(csv, "csv")
    assert [str(t) for t in preview.schema.types] == ["int64", "double", "timestamp[s]"]
    schema = import_types.apply_types(
        preview.schema, {"code": "utf8", "amount": "float32", "when": "timestamp[ms]"}
    )
    imports.import_table(ns, [*NS, "codes"], csv, "csv", schema=schema)
    rows = all_rows(ns, [*NS, "codes"])
    assert rows.schema.field("code").type == pa.string()
    assert rows.schema.field("amount").type == pa.float32()
    assert rows.schema.field("when").type == pa.timestamp("ms")
    assert rows["code"].to_pylist() == ["007", "010"]
    # A type the values do not fit fails, nothing written.
    with pytest.raises(InvalidInputError, match="nothing was written"):
        imports.import_table(
            ns,
            [*NS, "codes2"],
            csv,
            "csv",
            schema=import_types.apply_types(preview.schema, {"when": "bool"}),
        )
    assert "codes2" not in tables_in(ns, NS)
    # A schema naming other columns than the file's is refused.
    other = pa.schema([("code", pa.string()), ("total", pa.float64())])
    with pytest.raises(InvalidInputError, match="the schema given names the columns code, total"):
        imports.import_table(ns, [*NS, "codes3"], csv, "csv", schema=other)
    assert "codes3" not in tables_in(ns, NS)


# --- export ----------------------------------------------------------------------------------------


def test_export_an_older_version_with_a_filter_and_columns(data_ns: Any) -> None:
    ns = data_ns
    table_id = [*NS, "history"]
    imports.import_table(ns, table_id, encode(source_table(100), "parquet"), "parquet")
    imports.import_table(
        ns, table_id, encode(source_table(50, start=100), "parquet"), "parquet", mode="append"
    )
    data, result = export(ns, table_id, "parquet", version=1)
    assert (result.rows, result.version, result.file_name) == (100, 1, "history-v1.parquet")
    same_rows(decode(data, "parquet"), source_table(100))
    data, result = export(ns, table_id, "arrow")
    assert (result.rows, result.version) == (150, 2)
    seen: list[tuple[int, int | None]] = []
    data, result = export(
        ns,
        table_id,
        "csv",
        version=2,
        filter="id >= 95 AND id < 105",
        columns=["id", "name"],
        progress=lambda d, t: seen.append((d, t)),
    )
    assert result.rows == 10 and seen[-1] == (10, 10)
    same_rows(decode(data, "csv"), source_table(105).slice(95).select(["id", "name"]))
    data, result = export(ns, table_id, "parquet", version=1, filter="id >= 95")
    assert result.rows == 5
    data, result = export(ns, table_id, "parquet", filter="id < 0")
    assert result.rows == 0 and decode(data, "parquet").column_names == source_table(1).column_names
    with pytest.raises(InvalidInputError, match="no column nope"):
        export(ns, table_id, "parquet", columns=["id", "nope"])
    with pytest.raises(InvalidInputError, match="export formats"):
        export(ns, table_id, "xlsx")


FORMULAS = ["=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\tx", "\rx", "plain", None,
            "a=b", "", " =x"]  # fmt: skip


def test_a_csv_export_can_keep_spreadsheet_formulas_inert(data_ns: Any) -> None:
    """With ``inert``, a CSV export writes each text cell that begins as a spreadsheet
    formula (=, +, -, @, tab, carriage return) with a leading ``'``, and counts them; numbers,
    other texts and empty cells as they are. Without it, and in other formats, the values as
    the table holds them."""
    table = pa.table(
        {
            "id": pa.array(range(len(FORMULAS)), pa.int64()),
            "note": pa.array(FORMULAS),
            "delta": pa.array([i - 5 for i in range(len(FORMULAS))], pa.int64()),
        }
    )
    imports.import_table(data_ns, [*NS, "notes"], encode(table, "parquet"), "parquet")
    starts = ("=", "+", "-", "@", "\t", "\r")
    expected = [v if v is None or not v.startswith(starts) else "'" + v for v in FORMULAS]
    data, result = export(data_ns, [*NS, "notes"], "csv", inert=True)
    assert result.inert == sum(1 for v in FORMULAS if v and v.startswith(starts)) == 6
    got = pacsv.read_csv(
        io.BytesIO(data), convert_options=pacsv.ConvertOptions(strings_can_be_null=True)
    ).sort_by("id")
    assert got["note"].to_pylist() == [v if v != "" else None for v in expected]
    assert got["delta"].to_pylist() == table["delta"].to_pylist()
    data, result = export(data_ns, [*NS, "notes"], "csv")
    assert result.inert == 0
    plain = pacsv.read_csv(
        io.BytesIO(data), convert_options=pacsv.ConvertOptions(strings_can_be_null=True)
    ).sort_by("id")
    assert plain["note"].to_pylist() == [v if v != "" else None for v in FORMULAS]
    data, result = export(data_ns, [*NS, "notes"], "parquet", inert=True)
    assert result.inert == 0
    same_rows(decode(data, "parquet"), table)


def test_formulas_are_made_inert_in_every_text_encoding() -> None:
    """Plain, large and dictionary-encoded text columns alike (each keeps its type); a number
    column as it is; the count is of cells, a dictionary's repeated value counted each time."""
    values = [*FORMULAS, "=1+1"]
    batch = pa.record_batch(
        {
            "s": pa.array(values),
            "l": pa.array(values, pa.large_string()),
            "d": pa.array(values).dictionary_encode(),
            "n": pa.array(range(len(values)), pa.int64()),
        }
    )
    out, inert = exports.inert_formulas(batch)
    starts = ("=", "+", "-", "@", "\t", "\r")
    expected = [v if v is None or not v.startswith(starts) else "'" + v for v in values]
    assert out.schema == batch.schema
    assert [out.column(i).to_pylist() for i in range(3)] == [expected] * 3
    assert out.column(3).equals(batch.column(3))
    assert inert == 3 * sum(1 for v in values if v and v.startswith(starts)) == 21


@pytest.mark.parametrize("version", [2**70, 0, -1, True])
def test_an_export_at_no_version_is_refused_in_words(data_ns: Any, version: Any) -> None:
    """A version no table has (beyond 2^63 - 1: an OverflowError from lance; True: exported
    version 1) is refused by the one version rule, and nothing is written."""
    imports.import_table(data_ns, [*NS, "t"], b'{"id": 1}\n', "jsonl")
    out = io.BytesIO()
    with pytest.raises(InvalidInputError, match="version must be a version number"):
        exports.export_table(data_ns, [*NS, "t"], "csv", out, version=version)
    assert out.getvalue() == b""


def test_export_pages_through_query_pages(data_ns: Any) -> None:
    ns = data_ns
    table = source_table(10_000)  # REST: one full QueryTable page, then an empty one
    imports.import_table(ns, [*NS, "big"], encode(table, "parquet"), "parquet")
    data, result = export(ns, [*NS, "big"], "arrow")
    assert result.rows == 10_000
    same_rows(decode(data, "arrow"), table)
    pages = list(iter_rows(ns, [*NS, "big"], page_size=3_000, filter="id >= 10"))
    assert [p.num_rows for p in pages] == [3_000, 3_000, 3_000, 990]
    same_rows(pa.concat_tables(pages), table.slice(10))
    assert read_rows(ns, [*NS, "big"], limit=4_321).num_rows == 4_321


# -- the temporary file of a prepared export ---------------------------------------------------
def test_an_export_file_is_removed_once_nothing_holds_it() -> None:
    kept = exports.ExportFile("csv")
    assert kept.path.endswith(".csv") and os.path.isfile(kept.path)
    kept.remove()
    assert not os.path.exists(kept.path)
    kept.remove()  # at most once: a file already gone is not an error

    dropped = exports.ExportFile("parquet")
    path = dropped.path
    del dropped  # the session that held it ended
    gc.collect()
    assert not os.path.exists(path)

    with pytest.raises(InvalidInputError, match="export formats: parquet, csv, arrow"):
        exports.ExportFile("exe")  # refused before any file is made


EXIT_CHILD = """
from backend.services import exports
kept = exports.ExportFile("arrow")
print(kept.path, flush=True)
"""


@pytest.mark.slow  # a child process
def test_an_export_file_still_held_is_removed_when_the_process_exits() -> None:
    done = run_python(EXIT_CHILD)
    assert done.returncode == 0, done.stderr[-2000:]
    path = done.stdout.strip().splitlines()[-1]
    assert path.endswith(".arrow") and "lance-console-export-" in path
    assert not os.path.exists(path)


class _FullDisk(io.RawIOBase):
    """A file whose writes fail as a full disk does."""

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        raise OSError(28, "No space left on device")


def test_an_export_failing_to_write_is_a_namespace_error(data_ns: Any) -> None:
    """What export_table raises is a namespace error with the operation's name, whatever
    failed (here the file written to), as every guarded operation's."""
    from lance_namespace.errors import LanceNamespaceError

    table_id = [*NS, "full_disk"]
    imports.import_table(data_ns, table_id, encode(source_table(10), "csv"), "csv")
    with pytest.raises(LanceNamespaceError) as err:
        exports.export_table(data_ns, table_id, "csv", _FullDisk())
    assert "export_table" in str(err.value) and "No space left" in str(err.value)
