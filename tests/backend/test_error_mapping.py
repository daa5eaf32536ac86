"""What reaches the user when an operation fails: bad input as InvalidInputError, a defect in
code as an InternalError that names its type (and is logged with its traceback), never the other
way round. Exercised through a real namespace's guarded operations and through the mapping."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from lance_namespace import ListTablesRequest
from lance_namespace.errors import InternalError, InvalidInputError

import backend
from backend import errors


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
