"""What reaches the user when an operation fails: bad input as InvalidInputError, a defect in
code as an InternalError that names its type (and is logged with its traceback), never the other
way round. Exercised through a real namespace's guarded operations and through the mapping.
An error in the engine's words (a Rust debug dump, thousands of echoed values) is shown as one
readable line in the user's terms, the engine's text kept for the expander, on both backends."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest
from lance_namespace import (
    AlterTableAddColumnsRequest,
    AlterTableAlterColumnsRequest,
    AlterTableDropColumnsRequest,
    CountTableRowsRequest,
    ListTablesRequest,
    QueryTableRequest,
)
from lance_namespace.errors import InternalError, InvalidInputError

import backend
from backend import errors
from tests.support import create_table, table_location


def test_bad_values_are_invalid_input() -> None:
    mapped = errors.to_namespace_error(ValueError("limit must be positive"), "list_tables")
    assert isinstance(mapped, InvalidInputError)
    assert str(mapped) == "list_tables: limit must be positive"
    # pylance's bare Exception for a malformed request (serde's words)
    serde = errors.to_namespace_error(Exception("missing field `id`"), "declare_table")
    assert isinstance(serde, InvalidInputError)


@pytest.mark.parametrize(
    "defect",
    [KeyError("vector"), TypeError("'NoneType' object is not iterable"), AttributeError("x")],
)
def test_defects_are_internal_errors_that_keep_their_type(
    defect: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="backend.errors"):
        mapped = errors.to_namespace_error(defect, "describe_table")
    assert isinstance(mapped, InternalError)
    assert f"describe_table: {type(defect).__name__}: " in str(mapped)
    (record,) = [r for r in caplog.records if r.name == "backend.errors"]
    assert record.exc_info is not None and record.exc_info[1] is defect  # the traceback kept


def test_a_defect_inside_a_guarded_operation_reaches_the_caller_as_internal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ns = backend.connect(str(tmp_path))
    original = type(ns).list_tables.__wrapped__  # the guarded method's own code

    def broken(self, request):  # a programming error below the boundary
        return original(self, request)["no such key"]

    monkeypatch.setattr(type(ns), "list_tables", errors.guarded("list_tables")(broken))
    with pytest.raises(InternalError, match=r"list_tables: TypeError: "):
        ns.list_tables(ListTablesRequest(id=[]))


# --- engine text: one readable line, the engine's own text behind the expander ---------------

LONG_LIST = list(range(1500))


def _table(ns: Any) -> pa.Table:
    data = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "a": ["x", "y", "z"]})
    create_table(ns, ["t"], data)
    return data


def _shown(err: BaseException) -> tuple[str, str]:
    """The message the UI shows and the engine's text behind its expander."""
    info = errors.describe_error(err)
    assert info["engine_message"], info
    return info["message"], info["engine_message"]


def _one_readable_line(message: str) -> None:
    assert "\n" not in message and len(message) <= errors.MESSAGE_CHARS, message
    for raw in ("InvalidInput {", "Internal error", "source:", "location:", ".rs"):
        assert raw not in message, message


def test_dropping_a_missing_column_names_the_table_and_its_columns(ns: Any) -> None:
    data = _table(ns)
    with pytest.raises(InvalidInputError) as caught:
        ns.alter_table_drop_columns(AlterTableDropColumnsRequest(id=["t"], columns=["nope"]))
    message, engine = _shown(caught.value)
    assert message == f"column nope not found in table t; columns: {', '.join(data.column_names)}"
    assert str(caught.value) == message
    assert "Column nope does not exist in the dataset" in engine  # lance's own words kept
    # nothing was dropped
    assert [f.name for f in lance.dataset(table_location(ns, ["t"])).schema] == data.column_names


def test_a_close_column_name_is_suggested(ns: Any) -> None:
    _table(ns)
    with pytest.raises(InvalidInputError) as caught:
        ns.alter_table_alter_columns(
            AlterTableAlterColumnsRequest(id=["t"], alterations=[{"path": "ids", "rename": "x"}])
        )
    assert str(caught.value) == "column ids not found in table t (did you mean id?); columns: id, a"


@pytest.mark.parametrize(
    ("filter", "explained"),
    [
        (
            f"id IN (SELECT {', '.join(map(str, LONG_LIST))})",
            "lance filters take no subqueries (IN (SELECT ...)): list the values instead",
        ),
        (
            f"a IN ({','.join(map(str, LONG_LIST))})",
            "0 is an integer, but column a holds strings: quote the value ('0')",
        ),
        (
            f"id IN ({','.join(repr(str(i)) for i in LONG_LIST)})",
            "'0' is a string, but column id holds integers: write the number without quotes",
        ),
    ],
    ids=["subquery", "ints-for-strings", "strings-for-ints"],
)
def test_a_long_rejected_filter_is_one_short_line(ns: Any, filter: str, explained: str) -> None:
    _table(ns)
    for run in (
        lambda: ns.count_table_rows(CountTableRowsRequest(id=["t"], predicate=filter)),
        lambda: ns.query_table(QueryTableRequest(id=["t"], k=3, vector={}, filter=filter)),
    ):
        with pytest.raises(InvalidInputError) as caught:
            run()
        message, engine = _shown(caught.value)
        _one_readable_line(message)
        assert message.endswith(": " + explained), message
        # the echoed list is cut to its ends and its length (counted here independently)
        assert f"… ({len(LONG_LIST):,} values), " in message, message
        assert len(engine) > 4000 and ", 1498" in engine.replace("'", "").replace(",1498", ", 1498")


def test_a_server_500_in_rust_debug_form_is_one_line(ns: Any) -> None:
    """A column expression over a missing column: lance answers with a nested Rust dump
    (``InvalidInput { source: SchemaError(FieldNotFound { ... }) }``, a 500 over REST)."""
    _table(ns)
    with pytest.raises(InvalidInputError) as caught:
        ns.alter_table_add_columns(
            AlterTableAddColumnsRequest(
                id=["t"], new_columns=[{"name": "b", "expression": "nope + 1"}]
            )
        )
    message, engine = _shown(caught.value)
    _one_readable_line(message)
    assert message.endswith("invalid input: schema error: field not found: nope"), message
    assert "FieldNotFound" in engine and '"nope"' in engine


def test_readable_line_unwraps_cuts_and_keeps_plain_messages() -> None:
    raw = (
        'Internal error: drop_columns: InvalidInput { source: "Column \\"x\\" does not exist", '
        'location: Location { file: "/home/runner/work/lance/src/x.rs", line: 9, column: 1 } }'
    )
    assert errors.readable_line(raw) == 'drop_columns: Column "x" does not exist'
    long = "values: " + ", ".join(map(str, range(5000))) + " are refused\nsecond line"
    line = errors.readable_line(long)
    assert line == "values: 0, 1, 2, … (5,000 values), 4999 are refused second line"
    huge = "word " * 1000
    assert len(errors.readable_line(huge)) == errors.MESSAGE_CHARS
    assert errors.readable_line(huge).endswith("…")
    plain = "table t not found"
    assert errors.readable_line(plain) == plain and not errors.is_engine_text(plain)
    # a short list stays whole
    assert errors.readable_line("columns: a, b, c, d, e, f, g, h, i") == (
        "columns: a, b, c, d, e, f, g, h, i"
    )


def test_a_read_at_a_version_the_table_lacks_is_said_in_words(ns: Any) -> None:
    """pylance answers a read at a missing version with the table's location and its manifest
    path ("Failed to checkout version 9 for table at 'file:///...' during query_table: Dataset
    at path .../_versions/9.manifest was not found"), locally and behind its REST server. The
    message says the version is not there; pylance's text is kept behind the expander."""
    from backend.services import versions as vsv
    from backend.services.search.query import query_request, run_query

    create_table(ns, ["t"], pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    latest = lance.dataset(str(table_location(ns, ["t"]))).version
    missing = latest + 7
    with pytest.raises(errors.LanceNamespaceError) as caught:
        run_query(ns, query_request(["t"], k=3, version=missing, columns=["id"]))
    err = caught.value
    assert type(err).__name__ == "TableVersionNotFoundError"
    said = errors.describe_error(err)
    assert said["message"] == (
        f"version {missing} of the table does not exist (never made, or removed by a cleanup "
        "or a version delete since)"
    )
    assert f"_versions/{missing}.manifest" in said["engine_message"]
    assert "file://" not in said["message"]
    # DescribeTableVersion's own words ("version 9 for table table id 'a$t'") too
    with pytest.raises(errors.LanceNamespaceError) as caught:
        vsv.describe_version(ns, ["t"], missing)
    assert errors.describe_error(caught.value)["message"] == said["message"]
