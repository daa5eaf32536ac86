"""Filter (SQL predicate) errors in the user's terms: the one translation of every path that
runs a filter (preview, vector and full-text search, counts, export, delete and update by
predicate, query plans) on both backends.

Lance reports a bad filter in its engine's terms: ``InvalidInput { source: SchemaError(
FieldNotFound { field: Column { relation: None, name: "json" }, valid_fields: [...] }) }``,
with internal columns (``_rowaddr``, ``_row_last_updated_at_version``...) among the "valid
fields". :func:`explain_filter_error` says what is wrong (``no column named json (did you
mean the string 'json'?)``) followed by the table's own columns; :func:`translate` turns an
error into an ``InvalidInputError`` with that text, the engine's text kept in
``engine_message`` (the UI shows it behind an expander).

A filter can also fail once lance runs it on the rows (a value a CAST cannot convert, a
division by zero, a regular expression that does not compile): lance reports that as an
internal error naming the table's path (``Failed to count rows for table at '/data/...':
Error applying filter expression to batch: Arrow error: ...``). It is bad input all the same,
said as one (``a row's value 'alpha' cannot be cast to an integer``), and the write it was
part of changes nothing.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import math
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from lance_namespace.errors import ErrorCode, LanceNamespaceError

from backend.errors import in_user_terms, raw_text, readable_line

# Columns every lance table has besides its own; the scan adds the result columns.
_INTERNAL_PREFIX = "_row"
_RESULT_COLUMNS = frozenset({"_distance", "_score", "_relevance_score"})

# The request field holding a filter, per operation (both backends, any request form).
FILTER_FIELDS: dict[str, str] = {
    "query_table": "filter",
    "query_table_arrow": "filter",
    "count_table_rows": "predicate",
    "delete_from_table": "predicate",
    "update_table": "predicate",
    "analyze_table_query_plan": "filter",
    "explain_table_query_plan": "query.filter",
}

_FIELD_NOT_FOUND = re.compile(
    r'FieldNotFound \{ field: Column \{ relation: [^,]*, name: "((?:[^"\\]|\\.)*)" \}, '
    r"valid_fields: \[(.*?)\] \}",
    re.DOTALL,
)
_VALID_FIELD = re.compile(r'name: "((?:[^"\\]|\\.)*)"')
_NO_FIELD = re.compile(
    r"No field named (\"[^\"]+\"|[^\s.]+(?:\.[^\s.]+)*)\.\s*"
    r"(?:Valid fields are (.*?)\.(?:\s|,|$)|Did you mean '([^']+)'\?)",
    re.DOTALL,
)
_LITERAL = re.compile(
    r"Received literal (?P<ltype>\w+)\((?P<value>.*?)\) and could not convert to literal "
    r"of type '(?P<ctype>[^']*)'",
    re.DOTALL,
)
_EXPRESSION = re.compile(r"Error resolving filter expression (.*?): Invalid user input", re.DOTALL)
_COERCE = re.compile(
    r"(?:There isn't a common type to coerce (\w+) and (\w+) in (\w+) expression"
    r"|Cannot coerce arithmetic expression (\w+) (\S+) (\w+) to valid types)"
)
_FUNCTION = re.compile(r"Invalid function '([^']+)'\.?(?:\\n|\s)*(?:Did you mean '([^']+)'\?)?")
_PARSER = re.compile(r"sql parser error: ([^)]*)")
_UNSUPPORTED_SQL = re.compile(r"Expression '(.*)' is not supported SQL in lance", re.DOTALL)
# Errors met while the filter runs on the rows (lance reports them as internal errors, with
# the table's path) or while lance plans it: a value that does not convert, a bad regular
# expression, a division by zero.
_APPLYING = re.compile(
    r"Error applying filter expression to batch: (?:Arrow error: )?(.*?)(?:\"\s*\}|$)", re.DOTALL
)
_PLANNING = re.compile(r"Error optimizing sql filter: (.*?)(?:\"\s*\}|$)", re.DOTALL)
_CAST_VALUE = re.compile(r"Cannot cast (?:string|value) '(.*?)' to value of (\w+)", re.DOTALL)
_PARSE_VALUE = re.compile(r"Error parsing (\w+) from '(.*?)'", re.DOTALL)
_BAD_REGEX = re.compile(r"regex parse error:.*?error: ((?:(?!\\n)[^\n~\")])+)", re.DOTALL)
# the regex engine's own error (lance's regexp_like): ``Parse(Error { kind: GroupUnclosed, ...``
_REGEX_KIND = re.compile(r"Parse\(Error \{ kind: (\w+), pattern: ")
_DIVIDE_BY_ZERO = "Divide by zero error"
# How much of a filter a message echoes (a filter can hold thousands of values).
_ECHO_CHARS = 120
# How much of a row's value a message repeats.
_VALUE_CHARS = 60

_TYPE_WORDS: tuple[tuple[str, str, str], ...] = (
    # engine type prefix, "a ..." for a value, "holds ..." for a column
    ("Utf8", "a string", "strings"),
    ("LargeUtf8", "a string", "strings"),
    ("Boolean", "a boolean", "booleans (true / false)"),
    ("Int", "an integer", "integers"),
    ("UInt", "an integer", "integers"),
    ("Float", "a number with a fraction", "floating-point numbers"),
    ("Decimal", "a decimal", "decimals"),
    ("Timestamp", "a timestamp", "timestamps"),
    ("Date", "a date", "dates"),
    ("Time", "a time", "times"),
    ("FixedSizeList", "a vector", "vectors"),
    ("List", "a list", "lists"),
    ("LargeList", "a list", "lists"),
    ("Struct", "a struct", "structs"),
    ("Binary", "binary data", "binary data"),
)


def _type_word(engine_type: str, *, column: bool) -> str:
    for prefix, value_word, column_word in sorted(_TYPE_WORDS, key=lambda t: -len(t[0])):
        if engine_type.startswith(prefix):
            return column_word if column else value_word
    return engine_type


def _names(schema: Any) -> list[str] | None:
    """The table's own column names from a pyarrow schema, a JsonArrowSchema or names."""
    if schema is None:
        return None
    names = getattr(schema, "names", None)
    if isinstance(names, list):
        return [str(n) for n in names]
    fields = getattr(schema, "fields", None)
    if fields is None and isinstance(schema, dict):
        fields = schema.get("fields")
    if fields is not None:
        out = []
        for f in fields:
            name = f.get("name") if isinstance(f, dict) else getattr(f, "name", None)
            if name is not None:
                out.append(str(name))
        return out
    if isinstance(schema, Sequence) and not isinstance(schema, str):
        return [str(n) for n in schema]
    return None


def table_columns(valid: Sequence[str]) -> list[str]:
    """The engine's "valid fields" without lance's internal and result columns."""
    return [n for n in valid if not n.startswith(_INTERNAL_PREFIX) and n not in _RESULT_COLUMNS]


def _unquote(name: str) -> str:
    name = name.strip()
    if len(name) >= 2 and name[0] == name[-1] and name[0] in '"`':
        return name[1:-1]
    return name.replace('\\"', '"')


def _columns_text(columns: Sequence[str]) -> str:
    if not columns:
        return "the table has no columns"
    return "the table's columns: " + ", ".join(columns)


def _as_operand(name: str, filter: str | None) -> bool:
    """``name`` stands unquoted where a value goes: after a comparison, in an IN list."""
    if not filter:
        return True
    word = re.escape(name)
    value_spot = rf"(?:=|==|!=|<>|<=|>=|<|>|\bLIKE|\bIN\s*\(|,)\s*{word}\b"
    return re.search(value_spot, filter, re.IGNORECASE) is not None


def _missing_column(
    name: str, columns: Sequence[str], filter: str | None, suggestion: str | None = None
) -> str:
    hints = []
    close = [suggestion] if suggestion else difflib.get_close_matches(name, columns, 1, 0.75)
    if not close:
        lowered = {c.lower(): c for c in columns}
        close = [lowered[name.lower()]] if name.lower() in lowered else []
    if close:
        hints.append(f"the column {_unquote(close[0])}")
    if _as_operand(name, filter) and name not in columns:
        hints.append(f"the string '{name}'")
    hint = f" (did you mean {' or '.join(hints)}?)" if hints else ""
    return f"no column named {name}{hint}; {_columns_text(columns)}"


def _literal_text(value: str, ltype: str) -> str:
    value = value.strip().replace('\\"', '"')
    if ltype.startswith("Utf8"):
        return "'" + _unquote(value).replace("'", "''") + "'"
    if ltype.startswith("Float"):
        # the engine writes a float with all its digits (1e308: 309 of them)
        with contextlib.suppress(ValueError):
            return repr(float(value))
    return value


def _infinite(m: re.Match[str]) -> bool:
    """The literal is a float beyond any float (1e400 is read as infinity)."""
    try:
        return m.group("ltype").startswith("Float") and math.isinf(float(m.group("value")))
    except ValueError:
        return False


def _compared_column(expr: str | None, columns: Sequence[str] | None) -> str | None:
    if not expr:
        return None
    if columns:
        for name in sorted(columns, key=len, reverse=True):
            if re.search(rf"(?<![\w'])`?{re.escape(name)}`?(?![\w'])", expr):
                return name
    m = re.match(r"\s*`?([A-Za-z_][\w.]*)`?", expr)
    return m.group(1) if m else None


def _type_mismatch(m: re.Match[str], columns: Sequence[str] | None) -> str:
    found = _EXPRESSION.search(m.string)
    expr = found.group(1).strip() if found else None
    ltype, ctype = m.group("ltype"), m.group("ctype")
    if _infinite(m):
        return "a number in it is beyond the largest a column holds (about 1.8e308)"
    value = _literal_text(m.group("value"), ltype)
    column = _compared_column(expr, columns)
    what = f"column {column}" if column else "the column"
    text = (
        f"{value} is {_type_word(ltype, column=False)}, but {what} holds "
        f"{_type_word(ctype, column=True)}"
    )
    if ctype.startswith(("Utf8", "LargeUtf8")):
        text += f": quote the value ('{_unquote(m.group('value').strip())}')"
    elif ltype.startswith("Utf8") and ctype.startswith(("Int", "UInt", "Float", "Decimal")):
        text += ": write the number without quotes"
    elif ltype.startswith("Utf8") and ctype.startswith(("Timestamp", "Date")):
        text += ": write it as '2024-01-31' or '2024-01-31 12:00:00'"
    elif ltype.startswith("Float") and ctype.startswith(("Int", "UInt")):
        text += ": compare with a whole number"
    return text


def explain_filter_error(
    message: str, schema: Any = None, *, filter: str | None = None
) -> str | None:
    """What is wrong with a filter, in the user's terms, from the engine's ``message``:
    a missing column (with a likely meaning and the table's own columns: from ``schema``
    when given, else the engine's list without lance's internal ``_row...`` columns), a value
    of the wrong type for its column, an unknown function, SQL that does not parse.
    ``None`` when ``message`` is not a filter error this knows."""
    text = str(message or "")
    own = _names(schema)
    m = _FIELD_NOT_FOUND.search(text)
    if m:
        valid = [v.replace('\\"', '"') for v in _VALID_FIELD.findall(m.group(2))]
        columns = own if own is not None else table_columns(valid)
        return _missing_column(m.group(1).replace('\\"', '"'), columns, filter)
    m = _NO_FIELD.search(text)
    if m:
        name = _unquote(m.group(1))
        valid = [_unquote(v) for v in (m.group(2) or "").split(",") if v.strip()]
        columns = own if own is not None else table_columns(valid)
        suggestion = _unquote(m.group(3)) if m.group(3) else None
        return _missing_column(name, columns, filter, suggestion)
    m = _LITERAL.search(text)
    if m:
        return _type_mismatch(m, own)
    m = _COERCE.search(text)
    if m:
        if m.group(1):
            a, b, where = m.group(1), m.group(2), m.group(3)
            return (
                f"{_type_word(a, column=False)} and {_type_word(b, column=False)} cannot be "
                f"compared in {where}: use values of the column's type"
            )
        a, op, b = m.group(4), m.group(5), m.group(6)
        return (
            f"{_type_word(a, column=False)} {op} {_type_word(b, column=False)} cannot be "
            "computed: both sides need a number type"
        )
    m = _FUNCTION.search(text)
    if m:
        hint = f" (did you mean {m.group(2)}?)" if m.group(2) else ""
        return f"no function named {m.group(1)}{hint}"
    m = _UNSUPPORTED_SQL.search(text)
    if m:
        if re.search(r"\bSELECT\b", m.group(1), re.IGNORECASE):
            return "lance filters take no subqueries (IN (SELECT ...)): list the values instead"
        return f"lance filters do not support {echo(m.group(1))}"
    m = _PARSER.search(text)
    if m:
        detail = m.group(1).strip()
        if detail.endswith("found: EOF"):
            return "the filter ends where a value or an expression is expected"
        return f"the filter is not valid SQL ({detail})"
    return _failed_on_values(text)


def _quoted_value(value: str) -> str:
    return "'" + readable_line(value, _VALUE_CHARS).replace("'", "''") + "'"


def _failed_on_values(text: str) -> str | None:
    """What went wrong while lance planned the filter or ran it on the rows (a value that does
    not convert, a bad regular expression, a division by zero), else what lance said, without
    the table's path; ``None`` when ``text`` is neither."""
    # a failure not met while planning is met on the rows (a vector search's prefilter says
    # only "Failed to execute query")
    on_rows = "Error optimizing sql filter" not in text
    whose = "a row's value" if on_rows else "the value"
    m = _CAST_VALUE.search(text)
    if m:
        return (
            f"{whose} {_quoted_value(m.group(1))} cannot be cast to "
            f"{_type_word(m.group(2), column=False)}: TRY_CAST(... AS ...) gives NULL where a "
            "value does not convert"
        )
    m = _PARSE_VALUE.search(text)
    if m:
        return (
            f"{whose} {_quoted_value(m.group(2))} cannot be read as "
            f"{_type_word(m.group(1).capitalize(), column=False)}"
        )
    m = _BAD_REGEX.search(text)
    if m:
        return f"the regular expression is not valid ({m.group(1).strip()})"
    m = _REGEX_KIND.search(text)
    if m:
        words = re.sub(r"(?<!^)(?=[A-Z])", " ", m.group(1)).lower()
        return f"the regular expression is not valid ({words})"
    if _DIVIDE_BY_ZERO in text:
        return "it divides by zero" + (" for some rows" if on_rows else "")
    m = _APPLYING.search(text) if on_rows else _PLANNING.search(text)
    if m:
        detail = readable_line(m.group(1).replace("\\n", " "), _ECHO_CHARS)
        return ("it failed on the table's rows: " if on_rows else "lance cannot use it: ") + detail
    return None


def echo(text: str) -> str:
    """A filter (or part of one) as a message repeats it: one line, long lists of values
    shortened, at most 120 characters (``backend.errors.readable_line``)."""
    return readable_line(text, _ECHO_CHARS)


def _field(request: Any, path: str) -> Any:
    value: Any = request
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else getattr(value, part, None)
        if value is None:
            return None
    return value


def request_table(request: Any) -> tuple[list[str], int | None]:
    """The table id and version a request (or the query inside it) addresses."""
    version = _field(request, "version") or _field(request, "query.version")
    return list(_field(request, "id") or _field(request, "query.id") or []), version


def request_filter(operation: str, request: Any) -> str | None:
    """The filter a request of ``operation`` carries (a model or a dict), else ``None``."""
    path = FILTER_FIELDS.get(operation)
    if path is None or request is None:
        return None
    value = _field(request, path)
    return None if value is None else str(value).strip() or None


def engine_text(err: BaseException) -> str | None:
    """The engine's text of ``err`` when it may be said again in the user's terms (an
    invalid-input or internal error, or any other exception, not said so already); ``None``
    otherwise. The one gate of :func:`translate` here and in ``column_errors``."""
    if getattr(err, "in_user_terms", False):
        return None
    if isinstance(err, LanceNamespaceError) and int(getattr(err, "code", -1)) not in (
        ErrorCode.INVALID_INPUT,
        ErrorCode.INTERNAL,
    ):
        return None
    return raw_text(err)


def read_schema(schema: Any) -> Any:
    """``schema``, or what it returns when it is a function (called only once the error is
    known to be one to explain); ``None`` when reading it fails."""
    if not callable(schema):
        return schema
    try:
        return schema()
    except Exception:  # noqa: BLE001 - the message then names the engine's columns, or none
        return None


def translate(err: BaseException, filter: str | None, schema: Any = None) -> BaseException:
    """``err`` as an ``InvalidInputError`` saying what is wrong with ``filter`` (the engine's
    text in ``engine_message``), or ``err`` itself when it is not a filter error. ``schema``
    (the table's; or a function returning it, called only for a filter error) names the
    table's columns."""
    if not filter:
        return err
    raw = engine_text(err)
    if raw is None or explain_filter_error(raw, None, filter=filter) is None:
        return err
    explained = explain_filter_error(raw, read_schema(schema), filter=filter) or ""
    return in_user_terms(err, f"the filter {echo(filter)}: {explained}", raw)


@contextlib.contextmanager
def translated(filter: str | None, schema: Any = None) -> Iterator[None]:
    """A block whose failure caused by ``filter`` leaves it as :func:`translate` says (any
    other failure as it is); ``schema`` as there."""
    try:
        yield
    except Exception as exc:
        mapped = translate(exc, filter, schema)
        if mapped is exc:
            raise
        raise mapped from exc


def explaining(
    map_error: Callable[[BaseException, Any, Any], BaseException],
    schema_of: Callable[[Any, Any], Any] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator of a namespace method taking a request: an exception leaves it as
    ``map_error(exc, request, schema)`` says (itself: raised as it is), where ``schema`` is a
    function reading the table's schema (``schema_of(self, request)``) only when called."""

    def decorate(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def wrapper(self: Any, request: Any = None, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, request, *args, **kwargs)
            except Exception as exc:
                schema = (lambda: schema_of(self, request)) if schema_of is not None else None
                mapped = map_error(exc, request, schema)
                if mapped is exc:
                    raise
                raise mapped from exc

        return wrapper

    return decorate


def explains_filters(
    operation: str, schema_of: Callable[[Any, Any], Any] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator of a namespace method taking a request: a failure caused by the request's
    filter leaves it as :func:`translate` says (``schema_of(self, request)``: the table's
    schema, read only then)."""
    return explaining(
        lambda exc, request, schema: translate(exc, request_filter(operation, request), schema),
        schema_of,
    )
