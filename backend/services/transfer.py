"""Import and export of table data, on any backend.

Import: CSV, Parquet, Arrow IPC (file or stream) and JSON Lines uploads (bytes or a binary
file object, never a server path), at most :func:`max_import_bytes` (1 GiB unless
``LANCE_CONSOLE_MAX_IMPORT_BYTES`` says otherwise; checked before anything is read).

* :func:`inspect_upload` - the inferred schema, the row count (one streaming pass), a sample;
* :func:`apply_types` - the schema with some column types edited (type text read by
  ``backend.arrow_types``, the one parser);
* :func:`import_table` - into a new table (``create``), appended (``append``: InsertIntoTable)
  or merged on key columns (``merge``: MergeInsertIntoTable: matched rows updated, the others
  inserted). An upload that does not fit the table is refused before anything is written, with
  every difference named; a value that cannot be read midway leaves nothing either (no new
  version; a table created for the import is dropped again).

  The local backend streams record batches into lance under the namespace's write lock
  (memory stays bounded by a few blocks of the file); the REST backend sends one Arrow IPC
  stream request (the upload cap bounds it).

Export (:func:`export_table`): Parquet, CSV or Arrow IPC file, streamed in batches: the local
backend scans the dataset at the version asked for; the REST backend pages through QueryTable
(``services.search.iter_rows``). CSV cannot hold vector, list or struct columns: they are
refused by name unless the caller asks to leave them out.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

import lance
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq
from lance_namespace import (
    CreateTableRequest,
    DeclareTableRequest,
    DeregisterTableRequest,
    DescribeTableRequest,
    DropTableRequest,
    InsertIntoTableRequest,
    LanceNamespace,
    MergeInsertIntoTableRequest,
    NamespaceExistsRequest,
)
from lance_namespace.errors import ErrorCode, LanceNamespaceError, TableNotFoundError

from .. import filter_errors, gate, ids, query_rules, request_rules, version_ranges
from ..arrow_ipc import MAX_BODY_BYTES
from ..arrow_types import ArrowTypeInfo, arrow_type_str, column_kind, parse_arrow_type
from ..errors import guarded, invalid, make
from . import search

Progress = Callable[[int, "int | None"], None]
Source = bytes | bytearray | memoryview | IO[bytes]

IMPORT_FORMATS: tuple[str, ...] = ("csv", "parquet", "arrow", "jsonl")
EXPORT_FORMATS: tuple[str, ...] = ("parquet", "csv", "arrow")
FORMAT_NAMES = {"csv": "CSV", "parquet": "Parquet", "arrow": "Arrow IPC", "jsonl": "JSON Lines"}
EXTENSIONS = {
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".arrow": "arrow",
    ".ipc": "arrow",
    ".feather": "arrow",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}
EXPORT_EXTENSION = {"parquet": "parquet", "csv": "csv", "arrow": "arrow"}
EXPORT_MIME = {
    "parquet": "application/vnd.apache.parquet",
    "csv": "text/csv",
    "arrow": "application/vnd.apache.arrow.file",
}
MODES: tuple[str, ...] = ("create", "append", "merge")

MAX_IMPORT_ENV = "LANCE_CONSOLE_MAX_IMPORT_BYTES"
DEFAULT_MAX_IMPORT_BYTES = 1 << 30
SAMPLE_ROWS = 20
# CSV / JSON Lines: types are inferred from the first INFER_BYTES, then the file is read
# BLOCK_BYTES at a time; an import writes lance data files of at most IMPORT_ROWS_PER_FILE rows
# (lance's writer holds more of a file in memory the more rows it has: bounded memory).
INFER_BYTES = 8 << 20
BLOCK_BYTES = 1 << 20
IMPORT_ROWS_PER_FILE = 256 * 1024
PARQUET_BATCH_ROWS = 64 * 1024
EXPORT_BATCH_ROWS = 8 * 1024
# Column kinds (backend.arrow_types.column_kind) a CSV file cannot hold.
CSV_UNWRITABLE_KINDS = frozenset(
    {"vector", "binary_vector", "multivector", "list", "struct", "other"}
)
_IPC_FILE_MAGIC = b"ARROW1"
_READ_ERRORS = (pa.ArrowException, ValueError, OSError, UnicodeError)


def _cap_from_env() -> int:
    text = os.environ.get(MAX_IMPORT_ENV, "").strip().replace("_", "")
    if not text:
        return DEFAULT_MAX_IMPORT_BYTES
    if not text.isdigit() or int(text) < 1:
        raise invalid(f"{MAX_IMPORT_ENV} must be a positive number of bytes, got {text!r}")
    return int(text)


def max_import_bytes() -> int:
    """The largest upload accepted, in bytes: ``$LANCE_CONSOLE_MAX_IMPORT_BYTES`` or 1 GiB."""
    return _cap_from_env()


def _initial_cap() -> int:
    try:
        return _cap_from_env()
    except LanceNamespaceError:
        return DEFAULT_MAX_IMPORT_BYTES


MAX_IMPORT_BYTES: int = _initial_cap()  # at import time; max_import_bytes() reads it anew


def human_bytes(n: int) -> str:
    """``1.5 MiB``-style size."""
    value = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} bytes"  # pragma: no cover


# -- formats -----------------------------------------------------------------------------------
def format_of(filename: str) -> str:
    """The import/export format of a file name, by extension: ``csv``, ``parquet`` (.parquet,
    .pq), ``arrow`` (.arrow, .ipc, .feather) or ``jsonl`` (.jsonl, .ndjson)."""
    ext = os.path.splitext(str(filename or ""))[1].lower()
    if ext not in EXTENSIONS:
        known = ", ".join(sorted(EXTENSIONS))
        raise invalid(f"cannot tell the format of {filename!r}: use one of {known}")
    return EXTENSIONS[ext]


def _check_format(fmt: str, allowed: Sequence[str], what: str) -> str:
    name = str(fmt or "").lower()
    if name not in allowed:
        raise invalid(f"{what} formats: {', '.join(allowed)}; got {fmt!r}")
    return name


def export_file_name(table_id: Sequence[str], version: int | None, fmt: str) -> str:
    """``<table>-v<version>.<ext>`` (characters a file name cannot hold become ``_``)."""
    name = re.sub(r"[\\/\x00-\x1f\x7f]", "_", str(table_id[-1]) if table_id else "table")
    suffix = f"-v{version}" if version is not None else ""
    return f"{name}{suffix}.{EXPORT_EXTENSION[_check_format(fmt, EXPORT_FORMATS, 'export')]}"


# -- types ---------------------------------------------------------------------------------------
def _to_pyarrow(info: ArrowTypeInfo, text: str) -> pa.DataType:
    base = info.base
    if base in ("list", "large_list", "fixed_size_list"):
        if info.child is None:
            raise invalid(f"{text!r}: give the item type, e.g. list<int64>")
        child = _to_pyarrow(info.child, str(info.child))
        if base == "fixed_size_list":
            if not info.length:
                raise invalid(f"{text!r}: give the length, e.g. fixed_size_list<float32>[128]")
            return pa.list_(child, int(info.length))
        return pa.large_list(child) if base == "large_list" else pa.list_(child)
    if base in ("decimal", "struct", "map", "dictionary"):
        raise invalid(f"{text!r}: {base} types cannot be set here; convert the file first")
    if base == "utf8_view":
        return pa.string_view()
    if base == "timestamp":
        raw = text.strip().lower().replace(" ", "")
        if raw == "timestamp":
            return pa.timestamp("us")
        try:
            return pa.type_for_alias(raw)
        except (ValueError, KeyError):
            raise invalid(
                f"{text!r}: write timestamp, timestamp[s], timestamp[ms], timestamp[us] or "
                "timestamp[ns]"
            ) from None
    try:
        return pa.type_for_alias(base)
    except (ValueError, KeyError):
        raise invalid(
            f"unknown Arrow type {text!r} (e.g. int64, float64, utf8, bool, date32, timestamp, "
            "list<int64>, fixed_size_list<float32>[128])"
        ) from None


def arrow_type(text: str) -> pa.DataType:
    """The pyarrow type a type text names (``int64``, ``utf8``, ``timestamp[ms]``,
    ``fixed_size_list<float32>[128]``...), read by ``backend.arrow_types.parse_arrow_type``."""
    text = str(text or "").strip()
    if not text:
        raise invalid("the type is empty")
    try:
        info = parse_arrow_type(text)
    except TypeError as exc:  # pragma: no cover - text always parses to something
        raise invalid(f"unknown Arrow type {text!r}: {exc}") from None
    return _to_pyarrow(info, text)


def apply_types(schema: pa.Schema, overrides: Mapping[str, str]) -> pa.Schema:
    """``schema`` with the types of ``overrides`` (column -> type text). A text that prints
    like the column's current type keeps it as it is; an unknown column or type is an
    ``InvalidInputError`` naming every problem."""
    fields = list(schema)
    problems = []
    for name, text in (overrides or {}).items():
        if name not in schema.names:
            problems.append(f"no column {name!r} in the upload")
            continue
        text = str(text or "").strip()
        index = schema.get_field_index(name)
        current = fields[index]
        printed = arrow_type_str(current.type)
        if not text:
            problems.append(f"column {name}: the type is empty")
            continue
        if text == printed or (str(parse_arrow_type(text)) == printed and "[" not in text):
            continue
        try:
            fields[index] = current.with_type(arrow_type(text))
        except LanceNamespaceError as exc:
            problems.append(f"column {name}: {exc}")
    if problems:
        raise invalid("; ".join(problems))
    return pa.schema(fields, metadata=schema.metadata)


def type_rows(schema: pa.Schema) -> pd.DataFrame:
    """The columns of a schema as rows: ``column``, ``type`` (the one printed form)."""
    return pd.DataFrame(
        {"column": list(schema.names), "type": [arrow_type_str(t) for t in schema.types]},
        columns=["column", "type"],
    )


def _fits(src: pa.DataType, dst: pa.DataType) -> bool:
    """Whether values of ``src`` can be written to a ``dst`` column (checked value by value
    when the batches are cast: an integer too large for the column fails then)."""
    t = pa.types
    if src.equals(dst) or t.is_null(src):
        return True
    if t.is_dictionary(src):
        return _fits(src.value_type, dst)
    listy = (t.is_list, t.is_large_list, t.is_fixed_size_list)
    if any(f(src) for f in listy) and any(f(dst) for f in listy):
        both_fixed = t.is_fixed_size_list(src) and t.is_fixed_size_list(dst)
        if both_fixed and src.list_size != dst.list_size:
            return False
        return _fits(src.value_type, dst.value_type)
    if t.is_struct(src) and t.is_struct(dst):
        names = [f.name for f in dst]
        return [f.name for f in src] == names and all(
            _fits(src.field(n).type, dst.field(n).type) for n in names
        )
    for family in (t.is_timestamp, t.is_date, t.is_time, t.is_duration):
        if family(dst):
            return family(src)
    try:
        ks, kd = column_kind(src), column_kind(dst)
    except TypeError:  # pragma: no cover
        return False
    allowed = {
        "integer": {"integer"},
        "float": {"integer", "float"},
        "decimal": {"integer", "decimal"},
        "string": {"string"},
        "binary": {"binary"},
        "boolean": {"boolean"},
    }
    return ks in allowed.get(kd, set())


def schema_differences(upload: pa.Schema, table: pa.Schema, *, on: Sequence[str] = ()) -> list[str]:
    """Why rows of ``upload`` cannot go into a table of schema ``table`` (empty: they can):
    missing and extra columns, types that do not fit, key columns absent."""
    problems = []
    duplicates = sorted({n for n in upload.names if upload.names.count(n) > 1})
    if duplicates:
        problems.append("columns named twice in the upload: " + ", ".join(duplicates))
    missing = [n for n in table.names if n not in upload.names]
    extra = [n for n in upload.names if n not in table.names]
    if missing:
        problems.append("missing columns (in the table, not in the upload): " + ", ".join(missing))
    if extra:
        problems.append("extra columns (not in the table): " + ", ".join(extra))
    for f in table:
        if f.name in upload.names and f.name not in duplicates:
            src = upload.field(f.name).type
            if not _fits(src, f.type):
                problems.append(
                    f"column {f.name}: the table holds {arrow_type_str(f.type)}, the upload "
                    f"{arrow_type_str(src)}"
                )
    for key in on:
        if key not in table.names:
            problems.append(f"key column {key} is not a column of the table")
        elif key not in upload.names:
            problems.append(f"key column {key} is not in the upload")
    return problems


# -- sources ----------------------------------------------------------------------------------------
def source_size(source: Source) -> int:
    """The size of an upload in bytes, without reading it."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return memoryview(source).nbytes
    try:
        position = source.tell()
        end = source.seek(0, os.SEEK_END)
        source.seek(position)
    except (AttributeError, OSError, ValueError):
        raise invalid("an upload must be bytes or a seekable binary file object") from None
    return int(end)


def check_size(source: Source) -> int:
    """The upload's size; ``InvalidInputError`` when it is over the cap (nothing read)."""
    size = source_size(source)
    cap = max_import_bytes()
    if size > cap:
        raise invalid(
            f"the upload is {size:,} bytes ({human_bytes(size)}); the import limit is "
            f"{cap:,} bytes ({human_bytes(cap)}), set by {MAX_IMPORT_ENV}. Nothing was read"
        )
    if size == 0:
        raise invalid("the upload is empty")
    return size


class _Unclosable:
    """A binary file object pyarrow reads without closing it."""

    def __init__(self, raw: IO[bytes]):
        self.raw = raw
        self.closed = False

    def read(self, n: int = -1) -> bytes:
        return self.raw.read(n)

    def readinto(self, buffer: Any) -> int:
        readinto = getattr(self.raw, "readinto", None)
        if readinto is not None:
            return int(readinto(buffer))
        data = self.raw.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.raw.seek(offset, whence)

    def tell(self) -> int:
        return self.raw.tell()

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


def _input(source: Source) -> pa.NativeFile:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return pa.BufferReader(pa.py_buffer(source))
    if isinstance(source, io.BytesIO):
        # Streamlit's uploads: getvalue() hands over the bytes the BytesIO was made from
        # (getbuffer() would copy them first).
        return pa.BufferReader(pa.py_buffer(source.getvalue()))
    source.seek(0)
    return pa.PythonFile(_Unclosable(source), mode="r")


def _not_readable(fmt: str, exc: BaseException) -> LanceNamespaceError:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return invalid(f"the file is not readable as {FORMAT_NAMES[fmt]}: {text}")


@dataclass
class _Upload:
    schema: pa.Schema
    batches: Iterator[pa.RecordBatch]
    total: int | None


def _null_as_string(schema: pa.Schema) -> pa.Schema:
    """A column empty at the start of the file is read as text (its type can be edited)."""
    return pa.schema([f.with_type(pa.string()) if pa.types.is_null(f.type) else f for f in schema])


def _head(source: Source, size: int) -> pa.Buffer:
    """The first ``size`` bytes, cut after the last line break (unless the file ends
    sooner): whole lines, which is what CSV and JSON Lines rows are."""
    if isinstance(source, (bytes, bytearray, memoryview, io.BytesIO)):
        whole = _input(source).read_buffer()
        head = whole.slice(0, min(size, whole.size))
        data = head.to_pybytes() if whole.size > size else None
    else:
        source.seek(0)
        data = source.read(size + 1)
        source.seek(0)
        head = pa.py_buffer(data[:size])
        data = data if len(data) > size else None
    if data is None:
        return head
    cut = data.rfind(b"\n", 0, size)
    return head.slice(0, cut + 1) if cut >= 0 else head


def _inferred_schema(source: Source, open_reader: Any, read_options: Any) -> pa.Schema:
    """The columns pyarrow's streaming reader (CSV or JSON) infers from the file's first
    :data:`INFER_BYTES` (whole lines), all-null columns as strings."""
    head = _head(source, INFER_BYTES)
    probe = open_reader(
        pa.BufferReader(head),
        read_options=read_options(block_size=max(head.size, 1), use_threads=False),
    )
    return _null_as_string(probe.schema)


def _csv(source: Source, schema: pa.Schema | None) -> _Upload:
    """Types inferred from the first lines (the file's columns either way), then the file
    streamed in small blocks, parsed as ``schema``'s types when given."""
    inferred = _inferred_schema(source, pacsv.open_csv, pacsv.ReadOptions)
    wanted = schema if schema is not None else inferred
    types = dict(zip(wanted.names, wanted.types, strict=True))

    def stream() -> Iterator[pa.RecordBatch]:  # opened when first read
        yield from pacsv.open_csv(
            _input(source),
            read_options=pacsv.ReadOptions(block_size=BLOCK_BYTES, use_threads=True),
            convert_options=pacsv.ConvertOptions(column_types=types),
        )

    return _Upload(inferred if schema is not None else wanted, stream(), None)


def _json_parse_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_fixed_size_list(t):  # JSON arrays are read as lists, then cast
        return pa.list_(_json_parse_type(t.value_type))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(_json_parse_type(t.value_type))
    return t


def _jsonl(source: Source, schema: pa.Schema | None) -> _Upload:
    """Like :func:`_csv` (JSON arrays are parsed as lists and cast afterwards)."""
    inferred = _inferred_schema(source, pajson.open_json, pajson.ReadOptions)
    wanted = schema if schema is not None else inferred
    explicit = pa.schema([f.with_type(_json_parse_type(f.type)) for f in wanted])
    parse = pajson.ParseOptions(explicit_schema=explicit, unexpected_field_behavior="error")

    def stream() -> Iterator[pa.RecordBatch]:  # opened when first read
        yield from pajson.open_json(
            _input(source),
            read_options=pajson.ReadOptions(block_size=BLOCK_BYTES, use_threads=True),
            parse_options=parse,
        )

    return _Upload(inferred if schema is not None else explicit, stream(), None)


def _parquet(source: Source) -> _Upload:
    pf = pq.ParquetFile(_input(source))
    return _Upload(
        pf.schema_arrow, pf.iter_batches(batch_size=PARQUET_BATCH_ROWS), pf.metadata.num_rows
    )


def _arrow(source: Source) -> _Upload:
    f = _input(source)
    head = f.read(len(_IPC_FILE_MAGIC))
    f.seek(0)
    if head == _IPC_FILE_MAGIC:
        reader = pa.ipc.open_file(f)
        count = reader.num_record_batches
        return _Upload(reader.schema, (reader.get_batch(i) for i in range(count)), None)
    stream = pa.ipc.open_stream(f)
    return _Upload(stream.schema, iter(stream), None)


def _open_upload(source: Source, fmt: str, schema: pa.Schema | None = None) -> _Upload:
    """The upload's batches, typed as ``schema`` when given (CSV and JSON values are parsed
    as those types; the other formats' batches are cast)."""
    try:
        if fmt == "csv":
            upload = _csv(source, schema)
        elif fmt == "jsonl":
            upload = _jsonl(source, schema)
        elif fmt == "parquet":
            upload = _parquet(source)
        else:
            upload = _arrow(source)
    except _READ_ERRORS as exc:
        raise _not_readable(fmt, exc) from None
    if schema is not None:
        if sorted(schema.names) != sorted(upload.schema.names):
            raise invalid(
                f"the schema given names the columns {', '.join(schema.names)}; the upload's "
                f"are {', '.join(upload.schema.names)}"
            )
        upload = _Upload(schema, _conform(upload.batches, schema), upload.total)
    return upload


def _conform(batches: Iterator[pa.RecordBatch], target: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Batches with ``target``'s column order and types (a value that does not fit fails)."""
    for batch in batches:
        if batch.schema.names != target.names:
            batch = batch.select(target.names)
        if not batch.schema.equals(target):
            batch = batch.cast(target, safe=True)
        yield batch


def _close(batches: Iterator[pa.RecordBatch]) -> None:
    """Stop reading (a streaming reader left open would keep reading ahead)."""
    close = getattr(batches, "close", None)
    if callable(close):
        close()


# -- inspect -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ImportPreview:
    """What an upload holds: its format, inferred schema, rows, a sample, its size."""

    format: str
    schema: pa.Schema
    num_rows: int
    sample: pd.DataFrame
    size: int

    def types(self) -> pd.DataFrame:
        """``column`` / ``type`` rows of the inferred schema."""
        return type_rows(self.schema)


def _count_rows(source: Source, fmt: str, schema: pa.Schema) -> int:
    if fmt == "csv" and schema.names:
        # Tokenise everything, convert one column as text: the cheapest full pass.
        first = schema.names[0]
        reader = pacsv.open_csv(
            _input(source),
            read_options=pacsv.ReadOptions(block_size=BLOCK_BYTES, use_threads=True),
            convert_options=pacsv.ConvertOptions(
                include_columns=[first], column_types={first: pa.string()}
            ),
        )
        return sum(b.num_rows for b in reader)
    upload = _open_upload(source, fmt)
    if upload.total is not None:
        return upload.total
    return sum(b.num_rows for b in upload.batches)


@guarded("inspect_upload")
def inspect_upload(source: Source, fmt: str, *, sample_rows: int = SAMPLE_ROWS) -> ImportPreview:
    """The upload's inferred schema (CSV and JSON Lines: from its first block), row count
    (one streaming pass), first ``sample_rows`` rows and byte size."""
    size = check_size(source)
    fmt = _check_format(fmt, IMPORT_FORMATS, "import")
    upload = _open_upload(source, fmt)
    try:
        first = next(upload.batches, None)
        _close(upload.batches)
        rows = _count_rows(source, fmt, upload.schema)
    except _READ_ERRORS as exc:
        raise _not_readable(fmt, exc) from None
    head = (
        pa.Table.from_batches([first.slice(0, sample_rows)])
        if first is not None
        else upload.schema.empty_table()
    )
    sample = search.abbreviate(head).copy(deep=True)  # no view into the upload's memory
    return ImportPreview(fmt, upload.schema, rows, sample, size)


# -- import --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ImportResult:
    table_id: tuple[str, ...]
    mode: str
    rows: int  # rows read from the upload and written
    version: int | None  # the table's version after the import
    inserted: int | None = None  # merge: rows inserted
    updated: int | None = None  # merge: rows updated


class _Feed:
    """The batches handed to a writer: counted, reported, the first read failure kept."""

    def __init__(
        self,
        schema: pa.Schema,
        batches: Iterator[pa.RecordBatch],
        total: int | None,
        progress: Progress | None,
    ):
        self.schema = schema
        self._batches = batches
        self.total = total
        self._progress = progress
        self.rows = 0
        self.error: BaseException | None = None

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        try:
            for batch in self._batches:
                self.rows += batch.num_rows
                if self._progress is not None:
                    self._progress(self.rows, self.total)
                yield batch
        except BaseException as exc:
            self.error = exc
            raise

    def reader(self) -> pa.RecordBatchReader:
        return pa.RecordBatchReader.from_batches(self.schema, iter(self))

    def failure(self, fmt: str, *, inferred: bool) -> BaseException | None:
        """What to raise for the failure while reading (``None``: reading did not fail)."""
        exc = self.error
        if exc is None:
            return None
        if not isinstance(exc, _READ_ERRORS):
            return exc
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        hint = ""
        if (
            inferred
            and fmt in ("csv", "jsonl")
            and ("conversion" in text.lower() or "changed" in text)
        ):
            hint = (
                f" (types are inferred from the first {human_bytes(INFER_BYTES)} of the file: "
                "set that column's type and import again)"
            )
        return invalid(
            f"the upload could not be read after row {self.rows:,}: {text}{hint}; "
            "nothing was written"
        )


def _delimiter(ns: LanceNamespace) -> str:
    return str(getattr(ns, "delimiter", None) or ids.DEFAULT_DELIMITER)


def _writes_locally(ns: LanceNamespace) -> bool:
    """The local backend: datasets can be opened and written under the namespace lock."""
    return callable(getattr(ns, "open_dataset", None)) and callable(
        getattr(ns, "write_guard", None)
    )


def _name(ns: LanceNamespace, table_id: Sequence[str]) -> str:
    return ids.format_id(list(table_id), _delimiter(ns))


def _exists(ns: LanceNamespace, table_id: list[str]) -> bool:
    try:
        ns.describe_table(DescribeTableRequest(id=table_id))
    except TableNotFoundError:
        return False
    return True


def _check_new_table(ns: LanceNamespace, table_id: list[str]) -> None:
    request_rules.check_request(
        "create_table", CreateTableRequest(id=table_id), delimiter=_delimiter(ns)
    )
    if len(table_id) > 1:
        ns.namespace_exists(NamespaceExistsRequest(id=table_id[:-1]))
    if _exists(ns, table_id):
        raise make(
            ErrorCode.TABLE_ALREADY_EXISTS,
            f"table {_name(ns, table_id)} already exists: append or merge into it, or pick "
            "another name",
        )


def table_arrow_schema(ns: LanceNamespace, table_id: Sequence[str]) -> pa.Schema:
    """The table's exact Arrow schema (local: the dataset's; REST: a QueryTable answer's,
    which carries units and sizes that DescribeTable's JSON schema leaves out)."""
    table_id = list(table_id)
    open_dataset = getattr(ns, "open_dataset", None)
    if _writes_locally(ns) and open_dataset is not None:
        return open_dataset(table_id).schema  # declared only: InvalidTableStateError
    if version_ranges.latest_version(ns, table_id) is None:
        raise make(
            ErrorCode.INVALID_TABLE_STATE,
            f"table {_name(ns, table_id)} is declared but holds no data yet",
        )
    return search.run_query(ns, search.query_request(table_id, k=1)).schema


def _keys(mode: str, on: Sequence[str] | None) -> list[str]:
    keys = [str(k) for k in (on or [])]
    if mode == "merge" and not keys:
        raise invalid("a merge needs key columns (on): rows with the same keys are updated")
    if mode != "merge" and keys:
        raise invalid(f"key columns (on) are for a merge, not a {mode}")
    return keys


def _rollback_create(ns: Any, table_id: list[str]) -> None:
    """Drop the table an import created (deregister it when its data cannot be dropped)."""
    try:
        ns.drop_table(DropTableRequest(id=table_id))
    except LanceNamespaceError:
        with contextlib.suppress(LanceNamespaceError):
            ns.deregister_table(DeregisterTableRequest(id=table_id))


def _write_local(
    ns: Any, table_id: list[str], mode: str, feed: _Feed, keys: list[str], checked: pa.Schema
) -> tuple[int | None, dict[str, Any]]:
    options = dict(getattr(ns, "storage_options", None) or {}) or None
    session = getattr(ns, "session", None)
    summary = {"id": table_id, "mode": mode, "on": keys or None}
    with gate.recorded(ns, "import_table", summary), ns.write_guard(table_id):
        if mode == "create":
            declared = ns.declare_table(DeclareTableRequest(id=table_id))
            try:
                ds = lance.write_dataset(
                    feed.reader(),
                    declared.location,
                    mode="create",
                    max_rows_per_file=IMPORT_ROWS_PER_FILE,
                    storage_options=options,
                    session=session,
                )
            except BaseException:
                _rollback_create(ns, table_id)
                raise
            return ds.version, {}
        ds = ns.open_dataset(table_id)
        if not ds.schema.equals(checked):
            raise make(
                ErrorCode.CONCURRENT_MODIFICATION,
                f"the schema of {_name(ns, table_id)} changed during the import; nothing was "
                "written, try again",
            )
        if mode == "append":
            ds = lance.write_dataset(
                feed.reader(),
                ds,
                mode="append",
                max_rows_per_file=IMPORT_ROWS_PER_FILE,
                storage_options=options,
            )
            return ds.version, {}
        stats = (
            ds.merge_insert(keys)
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute(feed.reader())
        )
        return ds.version, dict(stats or {})


def _write_rest(
    ns: LanceNamespace, table_id: list[str], mode: str, feed: _Feed, keys: list[str]
) -> tuple[int | None, dict[str, Any]]:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, feed.schema) as writer:
        for batch in feed:
            writer.write_batch(batch)
            if sink.tell() > MAX_BODY_BYTES:
                raise invalid(
                    f"the upload makes an Arrow body over {human_bytes(MAX_BODY_BYTES)}; "
                    "nothing was sent"
                )
    body = sink.getvalue().to_pybytes()
    if mode == "create":
        created = ns.create_table(CreateTableRequest(id=table_id), body)
        return created.version, {}
    if mode == "append":
        inserted = ns.insert_into_table(InsertIntoTableRequest(id=table_id, mode="append"), body)
        return inserted.version, {"num_inserted_rows": inserted.num_inserted_rows}
    merged = ns.merge_insert_into_table(
        MergeInsertIntoTableRequest(
            id=table_id,
            on=keys,
            when_matched_update_all=True,
            when_not_matched_insert_all=True,
        ),
        body,
    )
    return merged.version, {
        "num_inserted_rows": merged.num_inserted_rows,
        "num_updated_rows": merged.num_updated_rows,
    }


@guarded("import_table")
def import_table(
    ns: LanceNamespace,
    table_id: Sequence[str],
    source: Source,
    fmt: str,
    *,
    mode: str = "create",
    on: list[str] | None = None,
    schema: pa.Schema | None = None,
    progress: Progress | None = None,
    total_rows: int | None = None,
) -> ImportResult:
    """Import an upload into ``table_id`` (see the module docstring).

    ``schema``: the upload's schema with edited types (:func:`apply_types`); default: as
    inferred. ``progress(rows_done, rows_total_or_None)`` is called per batch; ``total_rows``
    (e.g. :attr:`ImportPreview.num_rows`) fills in the total when the format does not tell.
    """
    check_size(source)
    fmt = _check_format(fmt, IMPORT_FORMATS, "import")
    if mode not in MODES:
        raise invalid(f"import modes: {', '.join(MODES)}; got {mode!r}")
    keys = _keys(mode, on)
    table_id = ids.check_id(list(table_id))
    table_schema: pa.Schema | None = None
    if mode == "create":
        _check_new_table(ns, table_id)
    else:
        table_schema = table_arrow_schema(ns, table_id)
    upload = _open_upload(source, fmt, schema)
    target = upload.schema
    batches = upload.batches
    if table_schema is not None:
        problems = schema_differences(upload.schema, table_schema, on=keys)
        if problems:
            raise invalid(
                f"the upload does not fit table {_name(ns, table_id)}; nothing was written: "
                + "; ".join(problems)
            )
        target = table_schema
        batches = _conform(batches, table_schema)
    else:
        duplicates = sorted({n for n in target.names if target.names.count(n) > 1})
        if duplicates:
            raise invalid("columns named twice in the upload: " + ", ".join(duplicates))
    total = upload.total if upload.total is not None else total_rows
    feed = _Feed(target, batches, total, progress)
    try:
        if _writes_locally(ns):
            version, stats = _write_local(ns, table_id, mode, feed, keys, target)
        else:
            version, stats = _write_rest(ns, table_id, mode, feed, keys)
    except BaseException:
        failure = feed.failure(fmt, inferred=schema is None)
        if failure is not None:
            raise failure from None
        raise
    return ImportResult(
        table_id=tuple(table_id),
        mode=mode,
        rows=feed.rows,
        version=version,
        inserted=stats.get("num_inserted_rows") if mode == "merge" else None,
        updated=stats.get("num_updated_rows") if mode == "merge" else None,
    )


# -- export --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExportResult:
    rows: int
    bytes: int
    version: int | None
    format: str
    columns: tuple[str, ...]
    file_name: str


class _Counter:
    """A write-only file object counting the bytes written to ``out`` (never closes it)."""

    def __init__(self, out: IO[bytes]):
        self.out = out
        self.count = 0
        self.closed = False

    def write(self, data: Any) -> int:
        view = memoryview(data)
        self.out.write(view)
        self.count += view.nbytes
        return view.nbytes

    def flush(self) -> None:
        flush = getattr(self.out, "flush", None)
        if flush is not None:
            flush()

    def tell(self) -> int:
        return self.count

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


def csv_unwritable(schema: Any) -> list[str]:
    """Columns of ``schema`` (pyarrow or JSON) a CSV file cannot hold: vectors, lists,
    structs, maps."""
    from ..arrow_types import columns_from_schema

    return [c.name for c in columns_from_schema(schema) if c.kind in CSV_UNWRITABLE_KINDS]


def _pick_columns(
    schema: pa.Schema, columns: list[str] | None, fmt: str, drop_nested: bool, name: str
) -> list[str]:
    chosen = list(columns) if columns else list(schema.names)
    unknown = [c for c in chosen if c not in schema.names]
    if unknown:
        raise invalid(
            f"no column {', '.join(unknown)} in {name}; its columns: {', '.join(schema.names)}"
        )
    if fmt == "csv":
        nested = [c for c in csv_unwritable(schema) if c in chosen]
        if nested and not drop_nested:
            raise invalid(
                f"CSV cannot hold the vector/list/struct column(s) {', '.join(nested)}: export "
                "Parquet or Arrow, or leave those columns out"
            )
        chosen = [c for c in chosen if c not in nested]
        if not chosen:
            raise invalid("no column left to write as CSV")
    return chosen


def _open_writer(fmt: str, sink: pa.NativeFile, schema: pa.Schema) -> Any:
    if fmt == "parquet":
        return pq.ParquetWriter(sink, schema)
    if fmt == "csv":
        return pacsv.CSVWriter(sink, schema)
    return pa.ipc.new_file(sink, schema)


@guarded("export_table")
def export_table(
    ns: LanceNamespace,
    table_id: Sequence[str],
    fmt: str,
    out: IO[bytes],
    *,
    version: int | None = None,
    filter: str | None = None,
    columns: list[str] | None = None,
    progress: Progress | None = None,
    drop_nested: bool = False,
) -> ExportResult:
    """Write the rows of ``table_id`` (at ``version``, default the latest; matching
    ``filter``, a SQL predicate; ``columns``, default all) to ``out`` as ``fmt`` (parquet,
    csv, arrow), in batches. CSV refuses vector/list/struct columns by name unless
    ``drop_nested`` leaves them out. ``progress(rows_done, rows_total)`` per batch."""
    fmt = _check_format(fmt, EXPORT_FORMATS, "export")
    table_id = ids.check_id(list(table_id))
    filter = (filter or "").strip() or None
    name = _name(ns, table_id)
    batches: Iterator[pa.RecordBatch]
    total: int | None = None
    if _writes_locally(ns):
        ds = ns.open_dataset(table_id, version)  # type: ignore[attr-defined]
        version = ds.version
        chosen = _pick_columns(ds.schema, columns, fmt, drop_nested, name)
        try:  # a bad filter fails here, in lance's terms: said in the user's
            scanner = ds.scanner(columns=chosen, filter=filter, batch_size=EXPORT_BATCH_ROWS)
            schema = scanner.projected_schema
            if progress is not None:
                total = scanner.count_rows()
            batches = iter(scanner.to_reader())
        except Exception as exc:
            mapped = filter_errors.translate(exc, filter, ds.schema)
            if mapped is exc:
                raise
            raise mapped from exc
    else:
        if version is None:
            version = version_ranges.latest_version(ns, table_id)
            if version is None:
                raise make(
                    ErrorCode.INVALID_TABLE_STATE, f"table {name} is declared but holds no data"
                )
        full = search.run_query(ns, search.query_request(table_id, k=1, version=version)).schema
        chosen = _pick_columns(full, columns, fmt, drop_nested, name)
        total = search.count_rows(ns, table_id, version=version, filter=filter)
        if total > query_rules.MAX_OFFSET:
            raise invalid(
                f"{total:,} rows: QueryTable pages reach offset {query_rules.MAX_OFFSET:,} at "
                "most; narrow the export with a filter"
            )
        schema = pa.schema([full.field(c) for c in chosen])
        pages = search.iter_rows(ns, table_id, columns=chosen, version=version, filter=filter)
        batches = (b for page in pages for b in _conform(iter(page.to_batches()), schema))
    counter = _Counter(out)
    sink = pa.PythonFile(counter, mode="w")
    writer = _open_writer(fmt, sink, schema)
    rows = 0
    try:
        for batch in batches:
            writer.write_batch(batch)
            rows += batch.num_rows
            if progress is not None:
                progress(rows, total)
    finally:
        writer.close()
    counter.flush()
    return ExportResult(
        rows=rows,
        bytes=counter.count,
        version=version,
        format=fmt,
        columns=tuple(chosen),
        file_name=export_file_name(table_id, version, fmt),
    )


__all__ = [
    "DEFAULT_MAX_IMPORT_BYTES",
    "EXPORT_FORMATS",
    "EXPORT_MIME",
    "FORMAT_NAMES",
    "IMPORT_FORMATS",
    "MAX_IMPORT_BYTES",
    "MAX_IMPORT_ENV",
    "MODES",
    "ExportResult",
    "ImportPreview",
    "ImportResult",
    "apply_types",
    "arrow_type",
    "check_size",
    "csv_unwritable",
    "export_file_name",
    "export_table",
    "format_of",
    "human_bytes",
    "import_table",
    "inspect_upload",
    "max_import_bytes",
    "schema_differences",
    "source_size",
    "table_arrow_schema",
    "type_rows",
]
