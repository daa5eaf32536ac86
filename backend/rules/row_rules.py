"""Row edits: the checks of an update (``SET col = expr WHERE filter``) and of a merge-insert
(upsert on key columns), pure: they read nothing, the caller passes the table's and the
data's schemas and the counts it measured. Each returns ``InvalidInputError`` in the user's
terms (raised by the ``check_*`` functions) before anything is written.

* An update names at least one column, each once, each a column of the table; each value is
  one complete SQL expression (the filter rule's parser: ``;``, comments and text left over
  are refused, as lance would silently cut them); an empty filter updates every row only when
  the caller says so (``all_rows``).
* A merge-insert has at least one clause; its key columns are in both the table and the data;
  the data has rows, only the table's columns and all of them, with types the table's columns
  can hold; no key is null or repeated in the data (pylance 14 inserts both rows of a repeated
  key that matches nothing, and fails on one that matches: the result would depend on the
  table's content).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lance_namespace.errors import InvalidInputError

from . import filter_rules

SET_HINT = "one assignment per line: column = SQL expression (e.g. price = price * 1.1)"


def _names(names: Sequence[str]) -> str:
    return ", ".join(names)


def parse_assignments(text: str | None) -> dict[str, str]:
    """``col = expr`` lines (blank lines skipped) as ``{col: expr}``; the first ``=`` splits a
    line, so an expression may hold ``=`` (``flag = id = 3``). A line without ``=``, an empty
    side, or a column set twice is refused."""
    updates: dict[str, str] = {}
    for number, line in enumerate((text or "").splitlines(), start=1):
        if not line.strip():
            continue
        column, sep, expr = line.partition("=")
        column, expr = column.strip().strip("`"), expr.strip()
        if not sep or not column or not expr:
            raise InvalidInputError(f"line {number} ({line.strip()!r}) is not {SET_HINT}")
        if column in updates:
            raise InvalidInputError(f"the column {column} is set twice; set each column once")
        updates[column] = expr
    return updates


def update_problem(
    updates: Mapping[str, str], columns: Sequence[str], filter: str | None, *, all_rows: bool
) -> str | None:
    """Why the update ``updates`` (``{column: SQL expression}``) of a table with ``columns``
    cannot be sent as it stands (``None``: it can)."""
    if not updates:
        return f"nothing to update: give at least one column to set ({SET_HINT})"
    unknown = [str(c) for c in updates if str(c) not in columns]
    if unknown:
        return (
            f"no column named {_names(unknown)} in the table; its columns: {_names(columns)} "
            "(an update changes values; add a column with a schema change)"
        )
    for column, expr in updates.items():
        text = str(expr or "").strip()
        if not text:
            return f"the value of {column} is empty: give a SQL expression (e.g. NULL, 0, 'x')"
        problem = filter_rules.filter_problem(text)
        if problem:
            return f"the value of {column} ({text}): {problem.replace('filter', 'expression')}"
    text = (filter or "").strip()
    if not text and not all_rows:
        return (
            "a filter is required to update rows (an empty filter would update every row; say "
            "so explicitly to update them all); nothing was updated"
        )
    if text and (problem := filter_rules.filter_problem(text)):
        return problem
    return None


def check_update(
    updates: Mapping[str, str], columns: Sequence[str], filter: str | None, *, all_rows: bool
) -> None:
    problem = update_problem(updates, columns, filter, all_rows=all_rows)
    if problem:
        raise InvalidInputError(problem)


def merge_problem(
    table_schema: Any,
    data_schema: Any,
    on: Sequence[str],
    *,
    rows: int,
    when_matched_update: bool,
    when_not_matched_insert: bool,
    when_not_matched_by_source_delete: bool,
) -> str | None:
    """Why a merge-insert of data with ``data_schema`` (``rows`` rows) into a table with
    ``table_schema`` on the key columns ``on`` cannot be sent (``None``: it can). The schemas
    are ``pyarrow.Schema``-like (``.names``, ``.field(name).type``); a type that differs is
    left to :func:`type_problem` after the caller tried to cast it."""
    if not (when_matched_update or when_not_matched_insert or when_not_matched_by_source_delete):
        return (
            "choose at least one clause: update matched rows, insert new rows, or delete the "
            "table's rows the data does not hold"
        )
    keys = [str(k) for k in on or []]
    if not keys:
        return "choose the key columns (on) that match the data's rows to the table's"
    if len(set(keys)) != len(keys):
        return "a key column is named twice"
    table_names, data_names = list(table_schema.names), list(data_schema.names)
    missing_keys = [k for k in keys if k not in table_names or k not in data_names]
    if missing_keys:
        where = [
            f"{k} ({'not in the table' if k not in table_names else 'not in the data'})"
            for k in missing_keys
        ]
        return f"the key columns must be in both the table and the data: {_names(where)}"
    if rows <= 0:
        return "the data has no rows: nothing to upsert"
    unknown = [n for n in data_names if n not in table_names]
    if unknown:
        return (
            f"the data has columns the table lacks: {_names(unknown)}; the table's columns: "
            f"{_names(table_names)}"
        )
    lacking = [n for n in table_names if n not in data_names]
    if lacking:
        return (
            f"the data lacks the table's columns {_names(lacking)}: an upsert writes whole "
            "rows, so every column is needed"
        )
    if len(set(data_names)) != len(data_names):
        return "the data names a column twice"
    return None


def type_problem(column: str, data_type: Any, table_type: Any, detail: str = "") -> str:
    """A data column whose values the table's column cannot hold."""
    why = f" ({detail})" if detail else ""
    return (
        f"the column {column} holds {data_type} values in the data, which the table's {column} "
        f"({table_type}) cannot hold{why}"
    )


def key_problem(on: Sequence[str], *, null_rows: int, repeated: int, example: str = "") -> str:
    """Keys the data cannot be merged on: ``null_rows`` rows with a null key, ``repeated``
    keys held by more than one row (``example``: one of them)."""
    keys = _names(on)
    if null_rows:
        return (
            f"{null_rows:,} row(s) of the data have a null key ({keys}): a null key matches "
            "nothing; fill or remove them"
        )
    shown = f", e.g. {example}" if example else ""
    return (
        f"{repeated:,} key(s) ({keys}) appear more than once in the data{shown}: each key may "
        "appear once, or the result would depend on which row wins; remove the duplicates"
    )


def check_merge(table_schema: Any, data_schema: Any, on: Sequence[str], **kwargs: Any) -> None:
    problem = merge_problem(table_schema, data_schema, on, **kwargs)
    if problem:
        raise InvalidInputError(problem)
