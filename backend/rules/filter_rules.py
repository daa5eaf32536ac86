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
``--`` or ``/*`` inside a string literal is part of the string; a backslash is an ordinary
character, as in lance. Refused: a ``;`` outside a string literal, SQL comments (``--`` with or without a space), any text left over after one
complete expression, tokens lance stops at or panics on (``?``, ``{``, ``MOD``, ``N'...'``,
``B'...'``), two adjacent string literals, a number running into a word (``5MB``). The check
fails closed: text it cannot read completely (an unclosed string, an incomplete expression,
nesting too deep for the parser) is refused too, so what passes is what lance evaluates.
"""

from __future__ import annotations

import functools

from lance_namespace.errors import InvalidInputError
from sqlglot import exp
from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.tokens import Token, TokenType


class _Lance(MySQL):
    """MySQL's quoting as lance reads it: a backslash is an ordinary character in a string
    (only ``''`` is a quote inside one)."""

    class Tokenizer(MySQL.Tokenizer):
        STRING_ESCAPES = ["'"]


_DIALECT = _Lance()
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


# Tokens sqlglot reads that lance (pylance 14) does not read the same way: lance stops at them
# (``?``, ``$1``, ``:x``, ``@x``, ``{``, ``MOD``, ``GLOB``) or panics on them (``N'...'``,
# ``B'...'``).
_PLAIN_STRING = "write a plain '...' string (two quotes '' for a quote inside it)"
_UNREAD = {  # token -> (what it is, what to write instead)
    TokenType.PLACEHOLDER: ("a parameter placeholder", "write the value itself"),
    TokenType.PARAMETER: ("a parameter", "write the value itself"),
    TokenType.L_BRACE: ("a brace", "group conditions with parentheses"),
    TokenType.R_BRACE: ("a brace", "group conditions with parentheses"),
    TokenType.MOD: ("MOD", "write % for the remainder"),
    TokenType.DIV: ("DIV", "write / for a division"),
    TokenType.GLOB: ("GLOB", "write LIKE, with % for any text and _ for one character"),
    TokenType.NATIONAL_STRING: ("an N'...' string", _PLAIN_STRING),
    TokenType.BIT_STRING: ("a B'...' bit string", "write the number it stands for"),
    TokenType.BYTE_STRING: ("a byte string", _PLAIN_STRING),
    TokenType.RAW_STRING: ("a raw string", _PLAIN_STRING),
    TokenType.HEREDOC_STRING: ("a $$...$$ string", _PLAIN_STRING),
    TokenType.UNICODE_STRING: ("a U&'...' string", _PLAIN_STRING),
}
_WORDS = {TokenType.MOD, TokenType.DIV, TokenType.GLOB}  # refused as operators, not as calls
_STRINGS = {
    TokenType.STRING,
    TokenType.NATIONAL_STRING,
    TokenType.BIT_STRING,
    TokenType.HEX_STRING,
    TokenType.BYTE_STRING,
    TokenType.RAW_STRING,
}


def _cut_at(text: str, start: int, unread: tuple[str, str]) -> str:
    what, instead = unread
    return (
        f"lance cannot read {what} in a filter: it would stop at {_quoted(text[start:])}; {instead}"
    )


def _token_problem(text: str, tokens: list[Token]) -> str | None:
    """A token lance reads differently from sqlglot, or two tokens that lance does not read
    as two (``--`` without a space is a comment; ``5MB`` is the number 5 and a word)."""
    for before, token in zip([None, *tokens], tokens, strict=False):
        kind = token.token_type
        if kind in _UNREAD and not (kind in _WORDS and _as_symbol_or_call(text, token)):
            return _cut_at(text, token.start, _UNREAD[kind])
        if kind == TokenType.VAR and token.text[:1].isdigit():
            return (
                f"a number runs into a word at {_quoted(token.text)}: lance would read the "
                "number and ignore the rest; put a space or an operator between them, or quote "
                "a name with backticks (`...`)"
            )
        if before is None:
            continue
        if kind == TokenType.DASH == before.token_type and before.end + 1 == token.start:
            rest = text[before.start :]
            return (
                f"SQL comments are not allowed in a filter: lance would ignore {_quoted(rest)}; "
                "remove it (or put a space between the two minus signs)"
            )
        if kind in _STRINGS and before.token_type in _STRINGS:
            return (
                f"two strings follow each other at {_quoted(text[before.start :])}: lance "
                "would keep only the first; write one string, or join them with ||"
            )
    return None


def _as_symbol_or_call(text: str, token: Token) -> bool:
    """Whether an operator token lance reads is written as a symbol (``%``) or is a function
    name (followed by ``(``): lance stops only at the operator words."""
    return not token.text[:1].isalpha() or text[token.end + 1 :].lstrip().startswith("(")


@functools.lru_cache(maxsize=1024)
def filter_problem(text: str | None) -> str | None:
    """Why lance would not use ``text`` as written (``None``: it reads all of it). Fails
    closed: text the check cannot read completely, as lance reads it, is refused."""
    if text is None or not text.strip():
        return None
    try:
        return _problem(text)
    except RecursionError:
        return "the filter nests too deeply (too many parentheses or NOTs); simplify it"


def _problem(text: str) -> str | None:
    try:
        tokens = _DIALECT.tokenize(text)
    except TokenError:
        return (
            "the filter cannot be read: a string ('...') or a quoted name (`...`) is not "
            "closed; close it (write '' for a quote inside a string)"
        )
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
    problem = _token_problem(text, tokens)
    if problem:
        return problem
    try:
        _DIALECT.parser(error_level=ErrorLevel.RAISE).parse_into(exp.Condition, tokens, sql=text)
    except ParseError as err:
        leftover = _leftover(text, tokens, err)
        if leftover is not None:
            return (
                f"the filter ends before {_quoted(leftover)}: lance would ignore it; join "
                "conditions with AND or OR, and quote strings ('...')"
            )
        return (
            f"the filter is not one complete condition{_near(text, tokens, err)}; check its "
            "operators, parentheses and quotes"
        )
    return None


def _near(text: str, tokens: list[Token], err: ParseError) -> str:
    """`` near «...»``: the text from the token where the parse failed, when known."""
    for found in err.errors:
        line, col = found.get("line"), found.get("col")
        for token in tokens:
            if token.line == line and token.col == col:
                if token is tokens[-1]:
                    return f": {_quoted(text)} ends where a value or an expression is expected"
                return f" near {_quoted(text[token.start :])}"
    return ""


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
