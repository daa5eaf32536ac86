"""Bad filters said in the user's terms (``backend.rules.filter_errors``) on every path that runs a
filter, on both backends (``ns``: a real local namespace and a real REST server): preview,
vector search, full-text search, export, count, delete by predicate. The engine's own text
stays available (``engine_message``) and never leaks internal ``_row...`` columns into the
message."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest
from lance_namespace import CreateTableIndexRequest, DeleteFromTableRequest
from lance_namespace.errors import InvalidInputError

import backend
from backend.rules import filter_errors
from backend.services import exports, rows
from backend.services.search.fulltext import fts_search
from backend.services.search.preview import preview
from backend.services.search.query import count_rows
from backend.services.search.vector import vector_search
from tests.support import create_table, search_rows

T = ["t"]


def _table() -> pa.Table:
    rows = search_rows(40, dim=8)
    return rows.append_column("module", pa.array(["json" if i % 2 else "os" for i in range(40)]))


@pytest.fixture
def table_ns(ns: Any) -> Any:
    create_table(ns, T, _table())
    ns.create_table_index(
        CreateTableIndexRequest(id=T, column="text", index_type="FTS", with_position=True)
    )
    return ns


def _paths(ns: Any, flt: str) -> dict[str, Callable[[], Any]]:
    return {
        "preview": lambda: preview(ns, T, filter=flt),
        "vector": lambda: vector_search(ns, T, [0.5] * 8, column="vec", filter=flt),
        "fts": lambda: fts_search(ns, T, "lance", columns=["text"], filter=flt),
        "export": lambda: exports.export_table(ns, T, "parquet", io.BytesIO(), filter=flt),
        "count": lambda: count_rows(ns, T, version=None, filter=flt),
        "delete": lambda: ns.delete_from_table(DeleteFromTableRequest(id=T, predicate=flt)),
        "delete rows": lambda: rows.delete_rows(ns, T, flt),
        "update preview": lambda: rows.preview_update(ns, T, {"module": "'x'"}, flt),
        "update": lambda: rows.update_rows(ns, T, {"module": "'x'"}, flt),
    }


def _message(call: Callable[[], Any]) -> tuple[str, str]:
    with pytest.raises(InvalidInputError) as caught:
        call()
    info = backend.describe_error(caught.value)
    return info["message"], info["engine_message"] or ""


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        (
            "module = json",
            "the filter module = json: no column named json (did you mean the string "
            "'json'?); the table's columns: id, text, vec, module",
        ),
        (
            "modul = 'json'",
            "the filter modul = 'json': no column named modul (did you mean the column "
            "module?); the table's columns: id, text, vec, module",
        ),
        (
            "module = 5",
            "the filter module = 5: 5 is an integer, but column module holds strings: "
            "quote the value ('5')",
        ),
        (
            "id = 'abc'",
            "the filter id = 'abc': 'abc' is a string, but column id holds integers: write "
            "the number without quotes",
        ),
        # failures while lance runs the filter on the rows or plans it: not an internal error
        # naming the table's path
        ("id % 0 = 1", "the filter id % 0 = 1: it divides by zero for some rows"),
        (
            "regexp_like(module, '(')",
            "the filter regexp_like(module, '('): the regular expression is not valid "
            "(unclosed group)",
        ),
        (
            "id = 1e400",
            "the filter id = 1e400: a number in it is beyond the largest a column holds (about "
            "1.8e308)",
        ),
        (
            "cast('abc' as int) = id",
            "the filter cast('abc' as int) = id: the value 'abc' cannot be cast to an integer: "
            "TRY_CAST(... AS ...) gives NULL where a value does not convert",
        ),
    ],
)
def test_every_filter_path_says_what_is_wrong(table_ns: Any, flt: str, expected: str) -> None:
    for path, call in _paths(table_ns, flt).items():
        message, engine = _message(call)
        assert message == expected, (path, message)
        assert "_row" not in message and "InvalidInput {" not in message, (path, message)
        # the engine's text is kept (for the UI's expander), without source locations
        assert engine and engine != message, path
        assert ".rs:" not in engine, (path, engine)
    # nothing was deleted or updated by the refused writes
    assert count_rows(table_ns, T, version=None, filter=None) == 40
    assert count_rows(table_ns, T, version=None, filter="module = 'x'") == 0


def test_a_value_the_filter_cannot_convert_is_named(table_ns: Any) -> None:
    flt = "cast(module as int) = 1"
    said = re.compile(
        r"the filter cast\(module as int\) = 1: a row's value '(json|os)' cannot be cast to an "
        r"integer: TRY_CAST\(\.\.\. AS \.\.\.\) gives NULL where a value does not convert"
    )
    for path, call in _paths(table_ns, flt).items():
        message, engine = _message(call)
        assert said.fullmatch(message), (path, message)
        assert "Cast error" in engine, (path, engine)
    assert count_rows(table_ns, T, version=None, filter=None) == 40
    assert count_rows(table_ns, T, version=None, filter="module = 'x'") == 0
    # what the message suggests works
    assert count_rows(table_ns, T, version=None, filter="try_cast(module as int) IS NULL") == 40


def test_a_good_filter_and_other_errors_are_left_alone(table_ns: Any) -> None:
    assert count_rows(table_ns, T, version=None, filter="module = 'json'") == 20
    # a wrong vector dimension is not a filter error: not rewritten as one
    with pytest.raises(Exception) as caught:
        vector_search(table_ns, T, [0.5] * 3, column="vec", filter="id > 1")
    assert "the filter" not in str(caught.value)
    assert not getattr(caught.value, "in_user_terms", False)
    # the engine's words made one readable line (its own text kept behind the expander)
    assert "query dim(3) doesn't match the column vec vector dim(8)" in str(caught.value)
    assert "InvalidInput {" not in str(caught.value)


ENGINE_FIELD_NOT_FOUND = (
    "Failed to execute query: InvalidInput { source: SchemaError(FieldNotFound { field: Column "
    '{ relation: None, name: "json" }, valid_fields: [Column { relation: None, name: "id" }, '
    'Column { relation: None, name: "module" }, Column { relation: None, name: "_rowid" }, '
    'Column { relation: None, name: "_rowaddr" }, Column { relation: None, name: '
    '"_row_last_updated_at_version" }, Column { relation: None, name: "_distance" }] }, '
    'Some("")) }'
)


def test_explain_filter_error_uses_the_schema_or_the_engine_list() -> None:
    # without a schema: the engine's list, internal and result columns left out
    assert filter_errors.explain_filter_error(ENGINE_FIELD_NOT_FOUND, filter="module = json") == (
        "no column named json (did you mean the string 'json'?); the table's columns: id, module"
    )
    schema = pa.schema([("id", pa.int64()), ("module", pa.string()), ("extra", pa.int32())])
    assert filter_errors.explain_filter_error(
        ENGINE_FIELD_NOT_FOUND, schema, filter="module = json"
    ) == (
        "no column named json (did you mean the string 'json'?); the table's columns: id, "
        "module, extra"
    )
    # a missing column on the left of a comparison is not offered as a string
    text = filter_errors.explain_filter_error(ENGINE_FIELD_NOT_FOUND, filter="json = 'x'")
    assert text is not None and "the string" not in text
    assert filter_errors.explain_filter_error("table not found: t", filter="id > 1") is None


def test_type_errors_of_other_kinds() -> None:
    boolean = (
        "Invalid user input: Error resolving filter expression flag = 'x': Invalid user input: "
        "Received literal Utf8(\"x\") and could not convert to literal of type 'Boolean'"
    )
    assert filter_errors.explain_filter_error(boolean) == (
        "'x' is a string, but column flag holds booleans (true / false)"
    )
    like = (
        "Error optimizing sql filter: m LIKE 5 (Invalid user input: Error during planning: "
        "There isn't a common type to coerce Utf8 and Int64 in LIKE expression)"
    )
    assert filter_errors.explain_filter_error(like) == (
        "a string and an integer cannot be compared in LIKE: use values of the column's type"
    )
    function = "Error parsing function: Error during planning: Invalid function 'nosuch'.\\nDid you mean 'cosh'?"
    assert filter_errors.explain_filter_error(function) == (
        "no function named nosuch (did you mean cosh?)"
    )


# lance's text of a filter failing on the rows (an internal error naming the table's path) and
# while it is planned
ON_ROWS = (
    "Internal error: Failed to count rows for table at 'file:///data/x/t.lance': Execution {{ "
    'message: "Error applying filter expression to batch: Arrow error: {}" }}'
)
PLANNING = (
    "count_table_rows: Failed to count rows for table at 'file:///data/x/t.lance': Error "
    "optimizing sql filter: {}"
)


@pytest.mark.parametrize(
    ("engine", "expected"),
    [
        (
            ON_ROWS.format(
                "Cast error: Cannot cast string 'it's' to value of Decimal128(38, 10) type"
            ),
            "a row's value 'it''s' cannot be cast to a decimal: TRY_CAST(... AS ...) gives NULL "
            "where a value does not convert",
        ),
        (
            ON_ROWS.format("Parser error: Error parsing timestamp from 'soon': error parsing date"),
            "a row's value 'soon' cannot be read as a timestamp",
        ),
        (
            ON_ROWS.format(
                "Compute error: Regular expression did not compile: Syntax(\\n~~~~\\nregex "
                "parse error:\\n    (\\n    ^\\nerror: unclosed group\\n~~~~\\n)"
            ),
            "the regular expression is not valid (unclosed group)",
        ),
        (ON_ROWS.format("Divide by zero error"), "it divides by zero for some rows"),
        (
            ON_ROWS.format("Compute error: Overflow happened on: 9223372036854775807 * 2"),
            "it failed on the table's rows: Compute error: Overflow happened on: "
            "9223372036854775807 * 2",
        ),
        (
            PLANNING.format("x = 1 (Something new: not planned)"),
            "lance cannot use it: x = 1 (Something new: not planned)",
        ),
        (
            "Received literal Float64(100000000000000000000000000000000000000000000000000) and "
            "could not convert to literal of type 'Int64'",
            "1e+50 is a number with a fraction, but the column holds integers: compare with a "
            "whole number",
        ),
    ],
)
def test_failures_on_the_rows_and_in_planning(engine: str, expected: str) -> None:
    said = filter_errors.explain_filter_error(engine, filter="x = 1")
    assert said == expected
    assert "file:" not in said and "t.lance" not in said
