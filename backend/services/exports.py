"""Export of table data, on any backend: Parquet, CSV or Arrow IPC file, streamed in batches.
The local backend scans the dataset at the version asked for; the REST backend pages through
QueryTable (``services.search.query.iter_rows``). CSV cannot hold vector, list or struct columns:
they are refused by name unless the caller asks to leave them out. A CSV export can keep the
formulas a spreadsheet would run inert (``inert_formulas``, the rule of
``backend.rules.csv_cells``): such a text cell gets a leading ``'``."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from lance_namespace import (
    LanceNamespace,
)
from lance_namespace.errors import ErrorCode

from backend.rules import (
    csv_cells,
    filter_errors,
    filter_rules,
    ids,
    query_rules,
    version_ranges,
)
from backend.rules.columns import columns_from_schema
from backend.services.search.query import count_rows, iter_rows, query_request, run_query
from backend.spec import catalog_views

from ..branch_view import branch_name, branch_of
from ..capabilities import writes_datasets
from ..errors import guarded, invalid, make
from .imports import Progress, check_format, conform, table_name

EXPORT_FORMATS: tuple[str, ...] = ("parquet", "csv", "arrow")
EXPORT_BATCH_ROWS = 8 * 1024
EXPORT_EXTENSION = {"parquet": "parquet", "csv": "csv", "arrow": "arrow"}
EXPORT_MIME = {
    "parquet": "application/vnd.apache.parquet",
    "csv": "text/csv",
    "arrow": "application/vnd.apache.arrow.file",
}
CSV_UNWRITABLE_KINDS = frozenset(
    {"vector", "binary_vector", "multivector", "list", "struct", "other"}
)


def export_file_name(
    table_id: Sequence[str], version: int | None, fmt: str, branch: str | None = None
) -> str:
    """``<table>-v<version>.<ext>``, ``<table>-<branch>-v<version>.<ext>`` for a branch other
    than main (characters a file name cannot hold become ``_``)."""
    on = branch_name(branch)
    name = str(table_id[-1]) if table_id else "table"
    name = re.sub(r"[\\/\x00-\x1f\x7f]", "_", name if on is None else f"{name}-{on}")
    suffix = f"-v{version}" if version is not None else ""
    return f"{name}{suffix}.{EXPORT_EXTENSION[check_format(fmt, EXPORT_FORMATS, 'export')]}"


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


class ExportFile:
    """A temporary file an export is written to before its download, removed as soon as
    nothing holds it any more: when :meth:`remove` is called (another export replaced it,
    the settings changed), when the last reference is dropped (the console's session ended:
    Streamlit drops a closed tab's session two minutes after it disconnected), and at the
    latest when the process exits. An export is as large as a table, so a file kept for a
    session nobody will come back to would fill the server's temporary folder."""

    def __init__(self, fmt: str) -> None:
        ext = EXPORT_EXTENSION[check_format(fmt, EXPORT_FORMATS, "export")]
        handle, self.path = tempfile.mkstemp(prefix="lance-console-export-", suffix=f".{ext}")
        os.close(handle)
        self._finalizer = weakref.finalize(self, _remove, self.path)

    def remove(self) -> None:
        """Remove the file now (at most once; a file already gone is not an error)."""
        self._finalizer()

    def __repr__(self) -> str:
        return f"ExportFile({self.path!r})"


@dataclass(frozen=True)
class ExportResult:
    rows: int
    bytes: int
    version: int | None
    format: str
    columns: tuple[str, ...]
    file_name: str
    inert: int = 0  # text cells written with a leading ' (``inert_formulas``)


def _is_text(kind: pa.DataType) -> bool:
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def _inert_text(column: pa.Array) -> tuple[pa.Array, pa.Array]:
    """The text ``column`` with formulas quoted, and where they were (null where empty)."""
    formula = pc.match_substring_regex(column, csv_cells.FORMULA_PATTERN)
    quote, nothing = pa.scalar(csv_cells.QUOTE, column.type), pa.scalar("", column.type)
    quoted = pc.binary_join_element_wise(quote, column, nothing)
    return pc.if_else(formula, quoted, column), formula


def inert_formulas(batch: pa.RecordBatch) -> tuple[pa.RecordBatch, int]:
    """``batch`` with each text cell a spreadsheet would run as a formula written with a
    leading ``'`` (shown, and kept, as text), and how many cells there were. Other columns,
    and empty cells, as they are; a dictionary-encoded text column keeps its encoding."""
    columns, inert = [], 0
    for column in batch.columns:
        kind = column.type
        if _is_text(kind):
            column, formula = _inert_text(column)
        elif pa.types.is_dictionary(kind) and _is_text(kind.value_type):
            values, formula = _inert_text(column.dictionary)
            formula = pc.take(formula, column.indices)
            column = pa.DictionaryArray.from_arrays(column.indices, values)
        else:
            columns.append(column)
            continue
        inert += int(pc.sum(formula).as_py() or 0)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema), inert


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


def _read_said(reader: Any, filter: str | None, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The reader's batches; a failure of ``filter`` on the rows (a value it cannot cast, a
    division by zero) said in the user's terms."""
    with filter_errors.translated(filter, schema):
        yield from reader


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
    inert: bool = False,
) -> ExportResult:
    """Write the rows of ``table_id`` (at ``version``, default the latest; matching
    ``filter``, a SQL predicate; ``columns``, default all) to ``out`` as ``fmt`` (parquet,
    csv, arrow), in batches. CSV refuses vector/list/struct columns by name unless
    ``drop_nested`` leaves them out; with ``inert`` it writes the text cells a spreadsheet
    would run as formulas with a leading ``'`` (:func:`inert_formulas`; the result counts
    them). ``progress(rows_done, rows_total)`` per batch. On a
    branch view of the namespace (``backend.branch_view.on_branch``) the branch's rows, at
    its ``version``; the file is named after the branch too."""
    fmt = check_format(fmt, EXPORT_FORMATS, "export")
    table_id = ids.check_id(list(table_id))
    if version is not None and (problem := version_ranges.version_problem(version)):
        raise invalid(problem)
    filter = (filter or "").strip() or None
    filter_rules.check_filter(filter)
    name = table_name(ns, table_id)
    batches: Iterator[pa.RecordBatch]
    total: int | None = None
    if writes_datasets(ns):
        ds = ns.open_dataset(table_id, version)  # type: ignore[attr-defined]
        version = ds.version
        chosen = _pick_columns(ds.schema, columns, fmt, drop_nested, name)
        # a bad filter fails while planned or on the rows, in lance's terms: said in the user's
        with filter_errors.translated(filter, ds.schema):
            scanner = ds.scanner(columns=chosen, filter=filter, batch_size=EXPORT_BATCH_ROWS)
            schema = scanner.projected_schema
            if progress is not None:
                total = scanner.count_rows()
            reader = scanner.to_reader()
        batches = _read_said(reader, filter, ds.schema)
    else:
        if version is None:
            version = catalog_views.latest_version(ns, table_id)
            if version is None:
                raise make(
                    ErrorCode.INVALID_TABLE_STATE, f"table {name} is declared but holds no data"
                )
        full = run_query(ns, query_request(table_id, k=1, version=version)).schema
        chosen = _pick_columns(full, columns, fmt, drop_nested, name)
        total = count_rows(ns, table_id, version=version, filter=filter)
        if total > query_rules.MAX_OFFSET:
            raise invalid(
                f"{total:,} rows: QueryTable pages reach offset {query_rules.MAX_OFFSET:,} at "
                "most; narrow the export with a filter"
            )
        schema = pa.schema([full.field(c) for c in chosen])
        pages = iter_rows(ns, table_id, columns=chosen, version=version, filter=filter)
        batches = (b for page in pages for b in conform(iter(page.to_batches()), schema))
    counter = _Counter(out)
    sink = pa.PythonFile(counter, mode="w")
    writer = _open_writer(fmt, sink, schema)
    rows = quoted = 0
    try:
        for batch in batches:
            if inert and fmt == "csv":
                batch, found = inert_formulas(batch)
                quoted += found
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
        file_name=export_file_name(table_id, version, fmt, branch_of(ns)),
        inert=quoted,
    )
