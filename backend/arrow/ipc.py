"""Arrow IPC bodies: the one writer and the one cheap check before anything reads them.

CreateTable, InsertIntoTable and MergeInsertIntoTable carry their rows as an Arrow IPC
*stream*. :func:`to_ipc_stream` turns a pyarrow Table / RecordBatch / RecordBatchReader, a
pandas DataFrame (or bytes) into checked stream bytes; :func:`check_ipc_stream` verifies bytes with pyarrow
(zero-copy over the buffer: no allocation proportional to what a header claims) before pylance
or a server sees them. Garbage is refused in well under a millisecond; an Arrow IPC *file* is
recognised by its magic and converted to a stream.
"""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa
from lance_namespace.errors import InvalidInputError

STREAM_CONTINUATION = b"\xff\xff\xff\xff"
FILE_MAGIC = b"ARROW1"
MAX_BODY_BYTES = 1 << 30  # 1 GiB: larger uploads go through a writer, not one request body


def _stream_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _is_data_frame(data: Any) -> bool:
    return type(data).__name__ == "DataFrame" and type(data).__module__.startswith("pandas")


def from_pandas(frame: Any) -> pa.Table:
    """A pandas DataFrame as an Arrow table, its index left out. pandas' string columns
    (``str`` dtype, Arrow-backed ``large_string``) become ``string``, the type pyarrow gives a
    list of Python strings, so that rows from a DataFrame append to a table made from Arrow."""
    try:
        table = pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowException, ValueError, TypeError) as exc:
        raise InvalidInputError(f"the DataFrame cannot be converted to Arrow: {exc}") from None
    narrow = {pa.large_string(): pa.string(), pa.large_binary(): pa.binary()}
    fields = [field.with_type(narrow.get(field.type, field.type)) for field in table.schema]
    schema = pa.schema(fields, metadata=table.schema.metadata)
    return table if schema.equals(table.schema) else table.cast(schema)


def to_ipc_stream(data: Any) -> bytes:
    """Arrow IPC stream bytes for ``data``: a pyarrow Table, RecordBatch, RecordBatchReader
    (its batches written as they are read), a pandas DataFrame (its index left out), or IPC
    bytes, which are checked with :func:`check_ipc_stream`."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return check_ipc_stream(bytes(data))
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    elif isinstance(data, pa.RecordBatchReader):
        sink = io.BytesIO()
        with pa.ipc.new_stream(sink, data.schema) as writer:
            for batch in data:
                writer.write_batch(batch)
        return sink.getvalue()
    elif _is_data_frame(data):
        data = from_pandas(data)
    if not isinstance(data, pa.Table):
        raise InvalidInputError(
            "table data must be a pyarrow Table / RecordBatch / RecordBatchReader, a pandas "
            f"DataFrame or Arrow IPC stream bytes, not {type(data).__name__}"
        )
    return _stream_bytes(data)


def check_ipc_stream(data: bytes, *, max_bytes: int = MAX_BODY_BYTES) -> bytes:
    """``data`` if it is a well-formed Arrow IPC stream; an IPC file is converted to a stream;
    anything else is ``InvalidInputError``. Cost: proportional to the batch count, not the
    sizes a header claims."""
    if not data:
        raise InvalidInputError("the Arrow IPC body is empty")
    if len(data) > max_bytes:
        raise InvalidInputError(
            f"the Arrow IPC body is {len(data):,} bytes; the limit is {max_bytes:,} bytes"
        )
    buffer = pa.py_buffer(data)
    if data[:6] == FILE_MAGIC:
        try:
            reader = pa.ipc.open_file(buffer)
            table = reader.read_all()
            for batch in table.to_batches():
                batch.validate()
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise InvalidInputError(
                f"the body starts like an Arrow IPC file but is not a readable one: {exc}"
            ) from None
        return _stream_bytes(table)
    if data[:4] != STREAM_CONTINUATION:
        raise InvalidInputError(
            "the body is not an Arrow IPC stream (it does not start with the stream's "
            "continuation marker 0xFFFFFFFF)"
        )
    try:
        reader = pa.ipc.open_stream(buffer)
        for batch in reader:
            batch.validate()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InvalidInputError(f"the body is not a readable Arrow IPC stream: {exc}") from None
    return data


def to_ipc_file(table: pa.Table) -> bytes:
    """A table as an Arrow IPC *file* (QueryTable's answer format)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def read_ipc(data: bytes) -> pa.Table:
    """A checked IPC stream (or file) as a pyarrow Table."""
    return pa.ipc.open_stream(pa.py_buffer(check_ipc_stream(data))).read_all()


def ipc_file_to_table(data: Any) -> pa.Table:
    """An Arrow IPC *file* (QueryTable's answer) as a Table; ``InvalidInputError`` if not."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InvalidInputError(f"not Arrow IPC data: {type(data).__name__}")
    try:
        table = pa.ipc.open_file(pa.py_buffer(data)).read_all()
    except (pa.ArrowException, OSError, ValueError):
        try:
            table = pa.ipc.open_stream(pa.py_buffer(data)).read_all()
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise InvalidInputError(f"not Arrow IPC data: {exc}") from None
    # A full check of every buffer (offsets within the data, valid UTF-8, ...): a table whose
    # offsets point past its data reads without error and crashes the process when used.
    try:
        table.validate(full=True)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InvalidInputError(f"not Arrow IPC data: {exc}") from None
    return table
