"""The filter rule: a filter (a SQL predicate) is one complete boolean expression and nothing
else. It is the one check of every path that takes a filter, on both backends: preview,
export, vector and full-text search filters, counts, delete and update by predicate,
merge-insert conditions and the raw spec calls (``request_rules`` applies it per request
field; services that hand a filter to lance directly call :func:`check_filter`).

Why: lance (pylance 14) parses ``SELECT 1 FROM t WHERE <filter>`` and keeps the WHERE
expression of the first statement, silently ignoring what follows it. ``amount < 10; AND
customer = 'Bob'``, ``amount < 10 -- AND ...``, ``amount < 10 /* AND ... */`` and
``amount < 10 customer`` all count the rows of ``amount < 10``. A delete by such a filter
deletes more than the text says.

The check is a real tokenizer and parser (sqlglot, with MySQL's quoting, which is lance's:
``'...'`` and ``"..."`` are strings, backticks quote names), not a substring test: a ``;``,
``--`` or ``/*`` inside a string literal is part of the string. Refused: a ``;`` outside a
string literal, SQL comments, and any text left over after one complete expression. Text
sqlglot cannot read at all is left to lance, which reports it in its own terms (translated by
``filter_errors``): the rule refuses only what lance would silently cut.
"""

from __future__ import annotations

import functools

from lance_namespace.errors import InvalidInputError
from sqlglot import exp
from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.tokens import Token, TokenType

_DIALECT = MySQL()
_LEFTOVER = "Invalid expression / Unexpected token"
_SHOWN = 80  # characters of the ignored text quoted in a message


def _quoted(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > _SHOWN:
        text = text[: _SHOWN - 1] + "…"
    return f"«{text}»"


def _first_comment(text: str, tokens: list[Token]) -> str | None:
    """The first comment of ``text`` as written (``-- ...``, ``# ...`` or ``/* ... */``): the
    tokenizer reads everything but whitespace and comments into tokens, so any other text
    between two tokens (or before the first, after the last) is one."""
    bounds = [0] + [i for t in tokens for i in (t.start, t.end + 1)] + [len(text)]
    for start, end in zip(bounds[0::2], bounds[1::2], strict=True):
        gap = text[start:end].strip()
        if gap:
            return gap
    return None


def _leftover(text: str, tokens: list[Token], err: ParseError) -> str | None:
    """The text after the end of the expression, when ``err`` says the parse stopped there."""
    for found in err.errors:
        if found.get("description") != _LEFTOVER:
            continue
        line, col = found.get("line"), found.get("col")
        for token in tokens:
            if token.line == line and token.col == col:
                return text[token.start :]
    return None


@functools.lru_cache(maxsize=1024)
def filter_problem(text: str | None) -> str | None:
    """Why lance would not use ``text`` as written (``None``: it would, or lance itself will
    say what is wrong with it)."""
    if text is None or not text.strip():
        return None
    try:
        tokens = _DIALECT.tokenize(text)
    except TokenError:
        return None  # an unterminated string or comment: lance refuses it in its own terms
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            rest = text[token.end + 1 :].strip()
            if not rest:
                return "remove the ';' at the end of the filter"
            return (
                f"a ';' ends the filter early: lance would ignore {_quoted(rest)}; join "
                "conditions with AND or OR"
            )
    comment = _first_comment(text, tokens)
    if comment is not None:
        return (
            f"SQL comments are not allowed in a filter: lance would ignore {_quoted(comment)}; "
            "remove it"
        )
    if not tokens:
        return None
    try:
        _DIALECT.parser(error_level=ErrorLevel.RAISE).parse_into(exp.Condition, tokens, sql=text)
    except ParseError as err:
        leftover = _leftover(text, tokens, err)
        if leftover is not None:
            return (
                f"the filter ends before {_quoted(leftover)}: lance would ignore it; join "
                "conditions with AND or OR, and quote strings ('...')"
            )
    return None


# The request fields holding a filter, on any operation (QueryTable, CountTableRows,
# DeleteFromTable, UpdateTable, MergeInsertIntoTable, the query of a plan).
FILTER_FIELDS = (
    "filter",
    "predicate",
    "when_matched_update_all_filt",
    "when_not_matched_by_source_delete_filt",
)


def check_filter(text: str | None, *, what: str = "filter") -> None:
    """``InvalidInputError`` naming what lance would ignore of ``text`` (``what``: the field
    or the form's word for it)."""
    problem = filter_problem(text)
    if problem:
        raise InvalidInputError(problem if what == "filter" else f"{what}: {problem}")
