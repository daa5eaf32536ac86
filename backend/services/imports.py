"""Import of table data, on any backend (export: ``backend.services.exports``; the type rules
of an import: ``backend.arrow.import_types``).

Import: CSV, Parquet, Arrow IPC (file or stream) and JSON Lines uploads (bytes or a binary
file object, never a server path), at most :func:`max_import_bytes` (1 GiB unless
``LANCE_CONSOLE_MAX_IMPORT_BYTES`` says otherwise; checked before anything is read).

* :func:`inspect_upload` - the inferred schema, the row count (one streaming pass), a sample;
* :func:`apply_types` - the schema with some column types edited (type text read by
  ``backend.arrow.types``, the one parser);
* :func:`import_table` - into a new table (``create``), appended (``append``: InsertIntoTable)
  or merged on key columns (``merge``: MergeInsertIntoTable: matched rows updated, the others
  inserted). An upload that does not fit the table is refused before anything is written, with
  every difference named; a value that cannot be read midway leaves nothing either (no new
  version; a table created for the import is dropped again).

  The local backend streams record batches into lance under the namespace's write lock
  (memory stays bounded by a few blocks of the file); the REST backend sends one Arrow IPC
  stream request (the upload cap bounds it).

  On a branch view of the namespace (``backend.branch_view.on_branch``) an append or a merge
  goes to that branch of the table (its schema is the one checked); a new table has only main,
  so ``create`` is refused there. Over REST a server that applies the write to main instead is
  reported as an error (``backend.rest.client``).

"""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

import lance
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
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

from backend import gate
from backend.arrow.import_types import name_problems, schema_differences, type_rows
from backend.arrow.ipc import MAX_BODY_BYTES
from backend.capabilities import writes_datasets
from backend.rules import ids, request_rules
from backend.services.search.query import abbreviate, query_request, run_query
from backend.spec import catalog_views
from backend.text import human_bytes, is_digits

from ..branch_view import branch_of
from ..errors import guarded, invalid, make

Progress = Callable[[int, "int | None"], None]
Source = bytes | bytearray | memoryview | IO[bytes]

IMPORT_FORMATS: tuple[str, ...] = ("csv", "parquet", "arrow", "jsonl")
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
# Column kinds (backend.arrow.types.column_kind) a CSV file cannot hold.
_IPC_FILE_MAGIC = b"ARROW1"
_READ_ERRORS = (pa.ArrowException, ValueError, OSError, UnicodeError)


def _cap_from_env() -> int:
    text = os.environ.get(MAX_IMPORT_ENV, "").strip().replace("_", "")
    if not text:
        return DEFAULT_MAX_IMPORT_BYTES
    if not is_digits(text) or int(text) < 1:
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


# -- formats -----------------------------------------------------------------------------------
def format_of(filename: str) -> str:
    """The import/export format of a file name, by extension: ``csv``, ``parquet`` (.parquet,
    .pq), ``arrow`` (.arrow, .ipc, .feather) or ``jsonl`` (.jsonl, .ndjson)."""
    ext = os.path.splitext(str(filename or ""))[1].lower()
    if ext not in EXTENSIONS:
        known = ", ".join(sorted(EXTENSIONS))
        raise invalid(f"cannot tell the format of {filename!r}: use one of {known}")
    return EXTENSIONS[ext]


def check_format(fmt: str, allowed: Sequence[str], what: str) -> str:
    name = str(fmt or "").lower()
    if name not in allowed:
        raise invalid(f"{what} formats: {', '.join(allowed)}; got {fmt!r}")
    return name


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


def _inferred_schema(source: Source, fmt: str) -> pa.Schema:
    """The columns pyarrow's streaming reader (CSV or JSON) infers from the file's first
    :data:`INFER_BYTES` (whole lines), all-null columns as strings, whole numbers beyond
    int64 as :func:`_whole_numbers` reads them."""
    head = _head(source, INFER_BYTES)
    return _whole_numbers(head, fmt, _null_as_string(_probe(head, fmt).schema))


def _probe(head: pa.Buffer, fmt: str, types: dict[str, pa.DataType] | None = None) -> Any:
    """A reader of ``head`` in one block (``types``: these columns parsed as these types)."""
    if fmt == "csv":
        return pacsv.open_csv(
            pa.BufferReader(head),
            read_options=pacsv.ReadOptions(block_size=max(head.size, 1), use_threads=False),
            convert_options=pacsv.ConvertOptions(column_types=types or {}),
        )
    return pajson.open_json(
        pa.BufferReader(head),
        read_options=pajson.ReadOptions(block_size=max(head.size, 1), use_threads=False),
        parse_options=pajson.ParseOptions(explicit_schema=pa.schema(list((types or {}).items()))),
    )


# A run of 19 digits or more, not in a fraction or an exponent: the only way a whole number
# beyond int64 (19 digits at most) is written.
_LONG_WHOLE = re.compile(rb"(?<![0-9.eE])[0-9]{19,}(?![0-9.eE])")


def _parses_as(head: pa.Buffer, fmt: str, name: str, type_: pa.DataType) -> pa.Array | None:
    """Column ``name`` of ``head`` parsed as ``type_``; ``None`` where a value does not fit."""
    try:
        return _probe(head, fmt, {name: type_}).read_all().column(name)
    except _READ_ERRORS:
        return None


def _whole_numbers(head: pa.Buffer, fmt: str, schema: pa.Schema) -> pa.Schema:
    """``schema`` with the columns pyarrow infers as float64 because they hold whole numbers
    beyond int64 typed so that their digits are kept: uint64 where every value fits it, and
    in CSV text where some do not (float64 would round them: 18446744073709551615 read as
    1.8446744073709552e+19). A column with a fraction or an exponent stays float64, as does
    JSON beyond uint64 (JSON's numbers are floats to most readers). The head is read again
    only when it holds such a number."""
    doubles = [f.name for f in schema if pa.types.is_float64(f.type)]
    if not doubles or _LONG_WHOLE.search(memoryview(head)) is None:
        return schema
    fields = list(schema)
    for name in doubles:
        index = schema.get_field_index(name)
        if _parses_as(head, fmt, name, pa.uint64()) is not None:
            fields[index] = fields[index].with_type(pa.uint64())
        elif fmt == "csv":
            text = _parses_as(head, fmt, name, pa.string())
            if (
                text is not None
                and pc.all(pc.match_substring_regex(text, r"^\s*([+-]?[0-9]+)?\s*$")).as_py()
            ):
                fields[index] = fields[index].with_type(pa.string())
    return pa.schema(fields, metadata=schema.metadata)


def _csv(source: Source, schema: pa.Schema | None) -> _Upload:
    """Types inferred from the first lines (the file's columns either way), then the file
    streamed in small blocks, parsed as ``schema``'s types when given."""
    inferred = _inferred_schema(source, "csv")
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
    inferred = _inferred_schema(source, "jsonl")
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
    upload = _Upload(upload.schema, _checked(upload.batches), upload.total)
    if schema is not None:
        if sorted(schema.names) != sorted(upload.schema.names):
            raise invalid(
                f"the schema given names the columns {', '.join(schema.names)}; the upload's "
                f"are {', '.join(upload.schema.names)}"
            )
        upload = _Upload(schema, conform(upload.batches, schema), upload.total)
    return upload


def _checked(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The batches, each checked whole (Arrow's full validation) before anything reads it:
    the JSON, Parquet and Arrow readers hand text on without checking that it is UTF-8 (the
    CSV reader checks), and lance writes it as it is, leaving a table that cannot be read
    back. A batch that fails is a read error naming its column (the import then writes
    nothing). Closing this closes the reader under it."""
    try:
        for batch in batches:
            try:
                batch.validate(full=True)
            except pa.ArrowInvalid as exc:
                bad = next(
                    (
                        n
                        for n, c in zip(batch.schema.names, batch.columns, strict=True)
                        if not _valid(c)
                    ),
                    None,
                )
                where = f"column {bad!r}" if bad is not None else "a column"
                raise pa.ArrowInvalid(
                    f"{where} holds a value Arrow refuses ({str(exc).splitlines()[0]}): text "
                    "must be UTF-8"
                ) from None
            yield batch
    finally:
        _close(batches)


def _valid(column: pa.Array) -> bool:
    try:
        column.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def conform(batches: Iterator[pa.RecordBatch], target: pa.Schema) -> Iterator[pa.RecordBatch]:
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
    fmt = check_format(fmt, IMPORT_FORMATS, "import")
    upload = _open_upload(source, fmt)
    if problems := name_problems(upload.schema.names):
        _close(upload.batches)
        raise invalid("; ".join(problems))
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
    sample = abbreviate(head).copy(deep=True)  # no view into the upload's memory
    return ImportPreview(fmt, upload.schema, rows, sample, size)


UPSERT_FORMATS: tuple[str, ...] = ("csv", "parquet", "arrow")


def read_upload(source: Source, fmt: str, schema: pa.Schema | None = None) -> pa.Table:
    """A whole upload (CSV, Parquet or Arrow IPC, within :func:`max_import_bytes`) as one
    table: typed as ``schema`` when the upload has exactly its columns (CSV values parsed as
    those types), else as read (the caller's rules say what does not fit)."""
    check_size(source)
    fmt = check_format(fmt, UPSERT_FORMATS, "upsert")
    upload = _open_upload(source, fmt)
    if schema is not None and sorted(schema.names) == sorted(upload.schema.names):
        _close(upload.batches)
        if isinstance(source, io.IOBase):
            source.seek(0)
        upload = _open_upload(source, fmt, schema)
    try:
        return pa.Table.from_batches(list(upload.batches), schema=upload.schema)
    except _READ_ERRORS as exc:
        raise _not_readable(fmt, exc) from None


# -- import --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ImportResult:
    table_id: tuple[str, ...]
    mode: str
    rows: int  # rows read from the upload and written
    version: int | None  # the table's version after the import
    inserted: int | None = None  # merge: rows inserted
    updated: int | None = None  # merge: rows updated
    branch: str | None = None  # the branch written (None: main)


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


def table_name(ns: LanceNamespace, table_id: Sequence[str]) -> str:
    return ids.format_id(list(table_id), ids.delimiter_of(ns))


def _exists(ns: LanceNamespace, table_id: list[str]) -> bool:
    try:
        ns.describe_table(DescribeTableRequest(id=table_id))
    except TableNotFoundError:
        return False
    return True


def _check_new_table(ns: LanceNamespace, table_id: list[str]) -> None:
    request_rules.check_request(
        "create_table", CreateTableRequest(id=table_id), delimiter=ids.delimiter_of(ns)
    )
    if len(table_id) > 1:
        ns.namespace_exists(NamespaceExistsRequest(id=table_id[:-1]))
    if _exists(ns, table_id):
        raise make(
            ErrorCode.TABLE_ALREADY_EXISTS,
            f"table {table_name(ns, table_id)} already exists: append or merge into it, or pick "
            "another name",
        )


def table_arrow_schema(ns: LanceNamespace, table_id: Sequence[str]) -> pa.Schema:
    """The table's exact Arrow schema (local: the dataset's; REST: a QueryTable answer's,
    which carries units and sizes that DescribeTable's JSON schema leaves out)."""
    table_id = list(table_id)
    if writes_datasets(ns):
        # declared only: InvalidTableStateError
        return ns.open_dataset(table_id).schema  # type: ignore[attr-defined]  # declared only: InvalidTableStateError
    if catalog_views.latest_version(ns, table_id) is None:
        raise make(
            ErrorCode.INVALID_TABLE_STATE,
            f"table {table_name(ns, table_id)} is declared but holds no data yet",
        )
    return run_query(ns, query_request(table_id, k=1)).schema


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
    summary: dict[str, Any] = {"id": table_id, "mode": mode, "on": keys or None}
    if branch_of(ns) is not None:
        summary["branch"] = branch_of(ns)
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
                f"the schema of {table_name(ns, table_id)} changed during the import; nothing was "
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
    branch = branch_of(ns)
    asked: dict[str, Any] = {"id": [str(p) for p in table_id], "mode": mode, "on": on or None}
    if branch is not None:
        asked["branch"] = branch
    # A check that fails before anything is written is a refusal, in the audit log as one.
    with gate.refusals(ns, "import_table", asked):
        if branch is not None and mode == "create":
            raise invalid(
                f"a new table has only main: import into a new table without a branch (branch "
                f"{branch} belongs to another table); nothing was written"
            )
        check_size(source)
        fmt = check_format(fmt, IMPORT_FORMATS, "import")
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
                    f"the upload does not fit table {table_name(ns, table_id)}; nothing was written: "
                    + "; ".join(problems)
                )
            target = table_schema
            batches = conform(batches, table_schema)
        elif problems := name_problems(target.names):
            raise invalid("; ".join(problems) + "; nothing was written")
    total = upload.total if upload.total is not None else total_rows
    feed = _Feed(target, batches, total, progress)
    try:
        if writes_datasets(ns):
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
        branch=branch,
    )
