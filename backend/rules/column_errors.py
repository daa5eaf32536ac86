"""Column errors in the user's terms: a schema change naming a column the table does not have
(``alter_table_drop_columns``, ``alter_table_alter_columns``), on both backends.

Lance says ``InvalidInput { source: "Column nope does not exist in the dataset" }`` (the local
backend wraps it in ``Internal error: drop_columns: ...``; a REST server answers it as a 500).
:func:`translate` turns that into an ``InvalidInputError`` saying ``column nope not found in
table t; columns: a, b``, the engine's text kept in ``engine_message`` (the UI shows it behind
an expander).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from typing import Any

from backend.errors import in_user_terms

from .filter_errors import (
    _names,
    engine_text,
    explaining,
    read_schema,
    request_table,
)
from .ids import display_id

# The request field naming the columns, per operation (a list of names, or of entries whose
# ``path`` is the name).
COLUMN_FIELDS: dict[str, str] = {
    "alter_table_drop_columns": "columns",
    "alter_table_alter_columns": "alterations",
}

_MISSING = re.compile(r'Column (\\?"(?:[^"\\]|\\.)*?\\?"|[^\s"]+) does not exist in the dataset')
# Columns named in a message before the list is cut (a wide table has hundreds).
_LISTED = 20


def _unquote(name: str) -> str:
    name = name.replace('\\"', '"')
    if len(name) >= 2 and name[0] == name[-1] == '"':
        return name[1:-1]
    return name


def columns_text(columns: list[str]) -> str:
    """``columns: a, b`` (the first 20, then ``… (n more)``); ``the table has no columns``."""
    if not columns:
        return "the table has no columns"
    shown = ", ".join(columns[:_LISTED])
    more = f", … ({len(columns) - _LISTED} more)" if len(columns) > _LISTED else ""
    return f"columns: {shown}{more}"


def explain_column_error(message: str, table: list[str], columns: Any = None) -> str | None:
    """``column nope not found in table t; columns: a, b`` (with a likely meaning when a
    column's name is close) from the engine's ``message``; ``None`` when ``message`` is not a
    missing column. ``columns``: the table's schema or names (``None``: not listed)."""
    m = _MISSING.search(str(message or ""))
    if not m:
        return None
    name = _unquote(m.group(1))
    text = f"column {name} not found in table {display_id(table)}"
    names = _names(columns)
    if names is None:
        return text
    close = difflib.get_close_matches(name, names, 1, 0.75)
    if not close:
        lowered = {c.lower(): c for c in names}
        close = [lowered[name.lower()]] if name.lower() in lowered else []
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"{text}{hint}; {columns_text(names)}"


def translate(
    err: BaseException, operation: str, request: Any, schema: Any = None
) -> BaseException:
    """``err`` as an ``InvalidInputError`` naming the missing column of ``request`` (an
    ``operation`` of :data:`COLUMN_FIELDS`) and the table's columns (``schema``: the table's,
    or a function returning it, called only for such an error), the engine's text in
    ``engine_message``; ``err`` itself when it is something else."""
    raw = engine_text(err) if operation in COLUMN_FIELDS else None
    table = request_table(request)[0]
    if raw is None or explain_column_error(raw, table) is None:
        return err
    return in_user_terms(err, explain_column_error(raw, table, read_schema(schema)) or "", raw)


def explains_columns(
    operation: str, schema_of: Callable[[Any, Any], Any] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator of a namespace method taking a request: a missing column of the request
    leaves it as :func:`translate` says (``schema_of(self, request)``: the table's schema,
    read only then)."""
    return explaining(
        lambda exc, request, schema: translate(exc, operation, request, schema), schema_of
    )
