"""Errors raised by the operations module: one mapping table, one boundary.

Every failure that leaves ``backend`` is a ``lance_namespace.errors.LanceNamespaceError``
subclass, chosen by one table from the spec's error code (0-23). Transport failures
(connection refused, DNS, timeouts) are :class:`NamespaceConnectionError` /
:class:`NamespaceTimeoutError`: not namespace answers, so they have their own branch, but they
derive from ``ServiceUnavailableError`` so that ``except LanceNamespaceError`` catches
everything a backend raises.

:func:`to_namespace_error` maps any other exception (pylance's bare ``Exception``,
``ValueError``, pydantic ``ValidationError``, ``OSError``...) to a namespace error, and
:func:`namespace_boundary` applies it to every operation of a ``LanceNamespace`` class, so no
raw exception crosses the boundary. :func:`describe_error` gives the UI one readable summary,
without the server's source locations.
"""

from __future__ import annotations

import functools
import inspect
import logging
import re
import unicodedata
from collections.abc import Callable
from typing import Any, TypeVar

from lance_namespace import LanceNamespace
from lance_namespace import errors as ln_errors
from lance_namespace.errors import (
    ErrorCode,
    InternalError,
    LanceNamespaceError,
    ServiceUnavailableError,
    UnsupportedOperationError,
)

from .redaction import REDACTED, is_secret_name, redact_json, redact_text
from .text import capital

# One table: spec error code -> exception class (lance_namespace's own table).
ERROR_CLASSES: dict[int, type[LanceNamespaceError]] = {
    int(code): cls
    for code, cls in ln_errors._ERROR_CODE_TO_EXCEPTION.items()  # noqa: SLF001 - the spec's table
}
if len(ERROR_CLASSES) != 24:  # pinned: a change upstream must be reviewed here
    raise ImportError("lance_namespace error table changed: review backend/errors.py")


class NamespaceConnectionError(ServiceUnavailableError):
    """The server could not be reached (refused, reset, DNS failure, TLS failure)."""

    title = "Connection failed"


class NamespaceTimeoutError(NamespaceConnectionError):
    """The server did not answer within the configured timeout."""

    title = "Timed out"


class OperationStopped(ServiceUnavailableError):
    """A long operation (an index build) stopped before it finished: cancelled by the user
    (``reason="cancelled"``) or past its time limit (``reason="timed out"``). Nothing of it
    was committed."""

    title = "Stopped"

    def __init__(self, message: str, reason: str = "cancelled"):
        super().__init__(message)
        self.reason = reason


def attach_error_details(
    err: LanceNamespaceError,
    *,
    status: int | None = None,
    message: str,
    detail: str | None = None,
    instance: str | None = None,
    error_type: str | None = None,
    url: str | None = None,
    raw: Any = None,
) -> LanceNamespaceError:
    """Set the attributes every backend error carries (status, server message, detail, ...)."""
    err.status = status  # type: ignore[attr-defined]
    err.server_message = message  # type: ignore[attr-defined]
    err.detail = detail  # type: ignore[attr-defined]
    err.instance = instance  # type: ignore[attr-defined]
    err.error_type = error_type  # type: ignore[attr-defined]
    err.url = url  # type: ignore[attr-defined]
    # the server's body as it came, known secrets and secret-named values masked (what is
    # kept on an error may be logged or shown by whoever catches it)
    err.raw = redact_json(raw) if raw is not None else None  # type: ignore[attr-defined]
    return err


def error_from_code(
    code: int | None,
    message: str,
    *,
    status: int | None = None,
    detail: str | None = None,
    instance: str | None = None,
    error_type: str | None = None,
    url: str | None = None,
    raw: Any = None,
) -> LanceNamespaceError:
    """The exception for a spec error code; unknown codes become ``InternalError``.

    A server that says "not supported / not implemented" under the generic internal code
    (pylance's adapter answers 18 for that) is reported as ``UnsupportedOperationError``.
    """
    cls = ERROR_CLASSES.get(code, InternalError) if isinstance(code, int) else InternalError
    if cls is InternalError and looks_unsupported(message):
        cls = UnsupportedOperationError
    return attach_error_details(
        cls(message),
        status=status,
        message=message,
        detail=detail,
        instance=instance,
        error_type=error_type,
        url=url,
        raw=raw,
    )


def make(code: ErrorCode, message: str, **details: Any) -> LanceNamespaceError:
    """A namespace error of ``code`` with the attributes of :func:`attach_error_details`."""
    return error_from_code(int(code), message, **details)


def invalid(message: str) -> LanceNamespaceError:
    """``InvalidInputError(message)`` with the standard attributes."""
    return make(ErrorCode.INVALID_INPUT, message)


def looks_unsupported(message: str) -> bool:
    m = (message or "").lower()
    return m.startswith("not supported") or "not implemented" in m or "unsupported operation" in m


_log = logging.getLogger(__name__)

# What lance says when a commit lost to a concurrent commit of the same dataset (its own
# retries exhausted, or a transaction it cannot rebase): nothing of the losing commit landed.
_COMMIT_CONFLICT_HINTS = (
    "incompatible transaction",
    "retryable commit conflict",
    "commit conflict",
    "too many concurrent writ",
)


def is_commit_conflict(exc: BaseException) -> bool:
    """Whether ``exc`` is lance's refusal of a commit that lost to a concurrent writer.

    Only lance's own errors (``OSError``/``RuntimeError``/``ValueError``... raised by pylance)
    count; a namespace error is an answer already and never is one."""
    if isinstance(exc, LanceNamespaceError):
        return False
    text = str(exc).lower()
    return any(hint in text for hint in _COMMIT_CONFLICT_HINTS)


# Errors a malformed request produces inside pylance (serde) or pydantic.
_INPUT_HINTS = ("missing field", "unknown field", "invalid type", "invalid value", "invalid user")
# The exceptions that mean bad input: a value that does not parse or decode. ``TypeError``,
# ``KeyError``, ``AttributeError`` and the rest mean a defect in code, reported as an internal
# error that names its type (and logged with its traceback), never as "invalid input".
_INPUT_ERRORS: tuple[type[BaseException], ...] = (ValueError, UnicodeError)


def to_namespace_error(exc: BaseException, operation: str) -> LanceNamespaceError:
    """Any exception as a ``LanceNamespaceError`` (namespace errors pass, with details).

    ``NotImplementedError`` -> ``UnsupportedOperationError``; value, unicode and pydantic
    validation errors -> ``InvalidInputError``; pylance's bare ``Exception`` ->
    ``InvalidInputError`` when it reports a malformed request, else ``InternalError``; anything
    else (``OSError``, ``TypeError``, ``KeyError``...) -> ``InternalError`` whose message keeps
    the exception's type, logged with its traceback.
    """
    if isinstance(exc, LanceNamespaceError):
        engine = getattr(exc, "engine_message", None) or str(exc)
        if int(getattr(exc, "code", -1)) == ErrorCode.INTERNAL and "InvalidInput {" in engine:
            # pylance (and a REST server over it) reports a bad filter or expression as an
            # internal error
            mapped = invalid(f"{operation}: {clean_text(engine, ENGINE_TEXT_CHARS)}")
            for attr in ("status", "url", "instance"):
                setattr(mapped, attr, getattr(exc, attr, None))
            return keep_engine_text(mapped)
        _scrub(exc)
        if not hasattr(exc, "server_message"):
            attach_error_details(exc, message=str(exc))
        return keep_engine_text(_missing_version_in_words(exc), markers_only=True)
    text = clean_text(str(exc).strip(), ENGINE_TEXT_CHARS) or type(exc).__name__
    if isinstance(exc, NotImplementedError):
        return keep_engine_text(make(ErrorCode.UNSUPPORTED, f"Not supported: {operation} ({text})"))
    if type(exc).__name__ == "ValidationError" and hasattr(exc, "errors"):
        return invalid(f"{operation}: {validation_text(exc)}")
    if isinstance(exc, _INPUT_ERRORS):
        return keep_engine_text(invalid(f"{operation}: {text}"))
    if text.lower().startswith(_INPUT_HINTS):  # lance's words for bad input (OSError too)
        return keep_engine_text(invalid(f"{operation}: {text}"))
    _log.error("%s failed with %s", operation, type(exc).__name__, exc_info=exc)
    kind = "" if type(exc) is Exception else f"{type(exc).__name__}: "
    return keep_engine_text(make(ErrorCode.INTERNAL, f"{operation}: {kind}{text}"))


# pylance's words for a version the table does not have (locally, and behind its REST
# server): a read's (the table's location and lance's manifest path) and DescribeTableVersion's
# ("version 9 for table table id 'a$t'"), not the user's terms.
_CHECKOUT_MISSING = re.compile(
    r"Failed to checkout version '?(?P<version>[^\s']+?)'? for table at "
    r"|\bversion (?P<described>\d+) for table table id "
)


def _missing_version_in_words(err: LanceNamespaceError) -> LanceNamespaceError:
    """A ``TableVersionNotFoundError`` in pylance's words (``Failed to checkout version 9 for
    table at 'file:///...' during query_table: Dataset at path .../_versions/9.manifest was
    not found``) said as ``version 9 of the table does not exist ...``; pylance's text moves
    to ``engine_message`` (behind the UI's expander). In place; returns ``err``."""
    if int(getattr(err, "code", -1)) != ErrorCode.TABLE_VERSION_NOT_FOUND:
        return err
    text = str(getattr(err, "server_message", None) or err)
    found = _CHECKOUT_MISSING.search(text)
    if found is None:
        return err
    version = found["version"] or found["described"]
    line = (
        f"version {version} of the table does not exist (never made, or removed by a cleanup "
        "or a version delete since)"
    )
    return reworded(err, line, text)


def validation_text(exc: Any) -> str:
    """A pydantic ``ValidationError`` as one short line per field: ``k: Input should be a
    valid integer (got 'x')`` (no documentation links, values cut at 60 characters); any
    other exception as its text."""
    if not callable(getattr(exc, "errors", None)):
        return str(exc)
    parts = []
    for error in exc.errors()[:5]:
        loc = [str(p) for p in error.get("loc", ())]
        where = ".".join(loc) or "request"
        value = repr(error.get("input"))
        if any(is_secret_name(p) for p in loc):
            value = REDACTED
        value = value if len(value) <= 60 else value[:57] + "..."
        parts.append(f"{where}: {error.get('msg', 'invalid')} (got {value})")
    return "; ".join(parts)


_NamespaceT = TypeVar("_NamespaceT", bound=type)
_OPERATIONS = frozenset(
    name
    for name, member in vars(LanceNamespace).items()
    if callable(member) and not name.startswith("_") and name != "namespace_id"
)


def namespace_boundary(cls: _NamespaceT) -> _NamespaceT:
    """Wrap every ``LanceNamespace`` operation ``cls`` defines so that only namespace errors
    leave it (see :func:`to_namespace_error`); ``KeyboardInterrupt`` and friends pass."""
    for name in _OPERATIONS:
        method = cls.__dict__.get(name)
        if method is None or not inspect.isfunction(method):
            continue
        setattr(cls, name, _guarded(method, name))
    return cls


OperationName = str | Callable[..., str]


def guarded(name: OperationName) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: the method's exceptions leave it as namespace errors (operation ``name``,
    or ``name(*args, **kwargs)``: the operation a generic method was asked to run)."""
    return lambda method: _guarded(method, name)


def _guarded(method: Callable[..., Any], name: OperationName) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except Exception as exc:
            operation = name if isinstance(name, str) else name(*args, **kwargs)
            mapped = to_namespace_error(exc, operation)
            if mapped is exc:
                raise
            raise mapped from exc

    return wrapper


# A trailing ", /path/to/namespace.rs:385:13" (or "at src/x.py:12"): where in its own source a
# server or pylance raised the error; noise for the user.
_SOURCE_LOCATION = re.compile(
    r"(?:[,;][ \t]*|(?<![ \t])[ \t]+)(?:at[ \t]+)?"
    r"[\w./\\~-]*\.(?:rs|py|java|go|cc|cpp|c|h|ts|js):\d+(?::\d+)?"
    r"(?=[ \t'\")\]]*$)",
    re.MULTILINE,
)


# How many trailing source locations :func:`trim_source_locations` removes from one line.
_SOURCE_LOCATION_PASSES = 8


# Rust's debug form of an error: ``, location: Location { file: "...", line: 1, column: 2 }``
# and ``, backtrace: MaybeBacktrace``. A match starts where a run of blanks begins (the
# lookbehinds), so a long run is scanned once.
_RUST_LOCATION = re.compile(
    r",?(?<!\s)\s*location:\s*Location\s*\{[^}]*\}|,?(?<!\s)\s*backtrace:\s*\w+(?:\s*\{[^}]*\})?"
)


# A Rust ``{:?}`` dump of a nested error (``ProviderError(ProviderError { source: ... })``):
# the readable message is what comes before it.
_RUST_DEBUG_DUMP = re.compile(r"\b[A-Z]\w*\((?:[A-Z]\w*\s*)?\{\s*\w+:|\b[A-Z]\w* \{\s*\w+: ")


_RUST_HTTP_DUMP = re.compile(r"\bResponse \{|\bheaders: \{|\bSdkBody\b")


# A Rust source file anywhere in a text: a path with a directory (``/home/runner/work/lance/
# .../builder.rs``, ``src/x.rs``) or a file with its line (``x.rs:12``), quoted or not. A bare
# name such as a table called ``data.rs`` is left alone.
# A match starts only where a run of blanks or a path begins (the lookbehinds): tried from
# inside a long run, it would scan the run's rest from every position (quadratic time).
_RUST_SOURCE = re.compile(
    r"(?:[,;][ \t]*|(?<![ \t])[ \t]+)?(?:at[ \t]+)?\"?(?<![\w.~@+/\\-])"
    r"(?:[\w.~@+-]*[/\\][\w./\\~@+-]*\.rs(?::\d+)*|[\w.~@+-]+\.rs(?::\d+)+)"
    r"\"?(?![\w./\\])"
)


def trim_source_locations(text: str) -> str:
    """``text`` without source locations: Rust source files anywhere (``/home/runner/.../x.rs``,
    ``x.rs:12:5``), trailing ones of other languages (``, at src/x.py:12``) on any line, and
    Rust's ``location: Location { file: ... }`` / ``backtrace: ...`` fields; a Rust debug dump
    holding an HTTP response (status, headers, body) is cut to ``(…)``; other dumps stay (they
    name the field, the statement, ...)."""
    text = _RUST_SOURCE.sub("", _RUST_LOCATION.sub("", text))
    # Each pass removes the last location of each line; a line ends with a few at most, and
    # the passes are bounded so that a text of thousands of them is cleaned in linear time.
    for _ in range(_SOURCE_LOCATION_PASSES):
        previous, text = text, _SOURCE_LOCATION.sub("", text)
        if text == previous:
            break
    dump = _RUST_DEBUG_DUMP.search(text)
    if dump and _RUST_HTTP_DUMP.search(text, dump.start()):
        # A nested HTTP response (status, headers, body): its summary is the message; the
        # dump is noise and can carry headers.
        text = text[: dump.start()].rstrip(" :") + " (…)"
    return text


# How much of a text :func:`clean_text` cleans, in multiples of its limit: enough for the
# source locations it removes, bounded so that a huge message is cleaned in linear time.
_PROCESSED_CHARS = 4


def clean_text(text: Any, limit: int | None = None) -> str:
    """Error text made safe to show, the one rule of every message (local errors, REST
    answers, :func:`describe_error`): no source locations (:func:`trim_source_locations`), no
    control characters (line breaks and tabs kept), known secrets masked, at most ``limit``
    characters."""
    s = str(text)
    # Only a head is cleaned: what is cut off is never shown, and the patterns' time grows
    # with the text's length.
    head = len(s) if limit is None else _PROCESSED_CHARS * max(limit, 1)
    dropped = max(len(s) - head, 0)
    s = trim_source_locations(s[:head])
    s = "".join(c if c in "\n\t" or unicodedata.category(c)[0] != "C" else " " for c in s)
    if limit is not None and len(s) + dropped > limit:
        s = s[:limit] + f"… ({len(s) + dropped - limit} more characters)"
    return redact_text(s)


# What the UI shows of an error: one line of at most this many characters; the engine's full
# text (kept up to ENGINE_TEXT_CHARS) goes behind the error's expander.
MESSAGE_CHARS = 300
ENGINE_TEXT_CHARS = 20_000

# A Rust ``{:?}`` error variant carrying its message: ``InvalidInput { source: "..." }``,
# ``Internal { message: "...", ... }``; the message is the readable part.
_RUST_VARIANT = re.compile(
    r"\b[A-Z]\w*\s*\{\s*(?:source|message|msg|error|reason|details?):\s*"
    r'"((?:[^"\\]|\\.)*)"[^{}]*\}'
)
_ENGINE_PREFIX = re.compile(r"\b(?:Internal error|LanceError\(\w+\)):\s*")
# A comma-separated list of at least 8 short items (an IN list, the values of a literal).
_LIST_ITEM = r"""(?:'[^'\n]{0,58}'|"[^"\n]{0,58}"|[^,()\[\]{}'"\n]{1,60})"""
_LONG_LIST = re.compile(rf"(?:{_LIST_ITEM},[ \t]*){{7,}}{_LIST_ITEM}")
_LONG_LIST_CHARS = 80


def _shorten_list(match: re.Match[str]) -> str:
    """``0, 1, 2, 3, ..., 1499`` (thousands of characters) -> ``0, 1, 2, … (1,500 values), 1499``."""
    text = match.group(0)
    if len(text) <= _LONG_LIST_CHARS:
        return text
    items = [item.strip() for item in text.split(",")]
    lead = " " if text[:1].isspace() else ""
    return f"{lead}{', '.join(items[:3])}, … ({len(items):,} values), {items[-1]}"


def has_engine_markers(text: str) -> bool:
    """Whether ``text`` holds an engine's own wording: a Rust debug dump (``InvalidInput {
    source: ... }``) or an ``Internal error:`` chain."""
    return (
        _RUST_VARIANT.search(text) is not None
        or _RUST_DEBUG_DUMP.search(text) is not None
        or _ENGINE_PREFIX.search(text) is not None
    )


def is_engine_text(text: str) -> bool:
    """Whether ``text`` is too raw to show as the message: engine wording
    (:func:`has_engine_markers`) or more than :data:`MESSAGE_CHARS` characters."""
    return len(text) > MESSAGE_CHARS or has_engine_markers(text)


_VARIANT_NAME = re.compile(r"\b([A-Z][A-Za-z0-9]*)\s*[({]")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _dump_in_words(head: str, dump: str) -> str:
    """``InvalidInput { source: SchemaError(FieldNotFound { field: Column { name: "x" ...``
    -> ``invalid input: schema error: field not found: x`` after ``head``."""
    words: list[str] = []
    for name in _VARIANT_NAME.findall(dump):
        word = " ".join(w.lower() for w in _CAMEL_WORD.findall(name))
        if word not in words:
            words.append(word)
        if len(words) == 3:
            break
    value = _QUOTED.search(dump)
    parts = [head, *words, value.group(1).replace('\\"', '"') if value else ""]
    return ": ".join(p for p in parts if p)


def readable_line(text: Any, limit: int = MESSAGE_CHARS) -> str:
    """An engine's text as one readable line of at most ``limit`` characters: safe
    (:func:`clean_text`), Rust variants unwrapped to their message (``InvalidInput { source:
    "Column x does not exist" }`` -> ``Column x does not exist``; a nested dump in words:
    ``invalid input: schema error: field not found: x``), ``Internal error:`` dropped,
    long lists of values shortened (``0, 1, 2, … (1,500 values), 1499``), whitespace collapsed,
    the rest cut with ``…``. The one rule of every message the UI shows in one line."""
    s = clean_text(text)
    previous = None
    while previous != s:
        previous = s
        s = _RUST_VARIANT.sub(lambda m: m.group(1).replace('\\"', '"').replace("\\n", " "), s)
    s = _ENGINE_PREFIX.sub("", s)
    s = " ".join(s.split())
    dump = _RUST_DEBUG_DUMP.search(s)
    if dump:  # a nested dump left: its variants in words and the first value it names
        s = _dump_in_words(s[: dump.start()].rstrip(" :"), s[dump.start() :])
    s = _LONG_LIST.sub(_shorten_list, s)
    if len(s) > limit:
        s = s[: limit - 1].rstrip(" ,;:") + "…"
    return s


def keep_engine_text(
    err: LanceNamespaceError, *, markers_only: bool = False
) -> LanceNamespaceError:
    """``err`` with a message the user can read (:func:`readable_line`) when its text is the
    engine's (:func:`is_engine_text`; with ``markers_only``, only when it holds engine wording:
    the check for an error raised as a namespace error already): that full text moves to
    ``err.engine_message`` (the UI shows it behind an expander) unless the error carries one
    already. In place; returns ``err``."""
    message = getattr(err, "server_message", None) or str(err)
    if not isinstance(message, str):
        return err
    if not (has_engine_markers(message) if markers_only else is_engine_text(message)):
        return err
    return reworded(err, readable_line(message), message)


def reworded(err: LanceNamespaceError, line: str, raw: str) -> LanceNamespaceError:
    """``err`` saying ``line``, the engine's ``raw`` text kept in ``err.engine_message``
    (behind the UI's expander) unless it carries one already. In place; returns ``err``: the
    one way an error is said again in the user's terms (here, and where a service knows more
    of what failed than the boundary does)."""
    if not getattr(err, "engine_message", None):
        err.engine_message = clean_text(raw, ENGINE_TEXT_CHARS)  # type: ignore[attr-defined]
    err.args = (line, *err.args[1:]) if err.args else (line,)
    err.server_message = line  # type: ignore[attr-defined]
    return err


def raw_text(err: BaseException) -> str:
    """The engine's or the server's own text of ``err``, what a service says again in the
    user's terms: its ``engine_message`` (kept by the boundary), else its ``server_message``
    (a REST server's), else ``str(err)``."""
    return str(getattr(err, "engine_message", None) or getattr(err, "server_message", None) or err)


def in_user_terms(
    err: BaseException,
    message: str,
    raw: str | None = None,
    *,
    code: ErrorCode = ErrorCode.INVALID_INPUT,
) -> LanceNamespaceError:
    """A new error of ``code`` replacing ``err``: ``message`` in the user's terms, ``err``'s
    HTTP details, the engine's text (``raw``, else :func:`raw_text` of ``err``) kept in
    ``engine_message`` behind the expander, and marked ``in_user_terms`` so that no later
    rewording says it again. :func:`reworded` says an error again in place."""
    new = make(code, message)
    attach_error_details(
        new,
        status=getattr(err, "status", None),
        message=message,
        instance=getattr(err, "instance", None),
        url=getattr(err, "url", None),
    )
    text = raw_text(err) if raw is None else raw
    new.engine_message = clean_text(text, ENGINE_TEXT_CHARS)  # type: ignore[attr-defined]
    new.in_user_terms = True  # type: ignore[attr-defined]
    return new


def _scrub(err: LanceNamespaceError) -> None:
    """An error raised elsewhere (pylance, a server) with its texts through :func:`clean_text`,
    in place: ``str(err)``, ``repr(err)``, the server message and the detail."""
    err.args = tuple(clean_text(a) if isinstance(a, str) else a for a in err.args)
    for attr in ("server_message", "detail"):
        value = getattr(err, attr, None)
        if isinstance(value, str):
            setattr(err, attr, clean_text(value))


_CODE_PREFIX = re.compile(r"^\s*(?:(?:Error code )?\[?([A-Z][A-Z_]+)\]?:\s+)+")
_CAMEL_WORD = re.compile(r"[A-Z][a-z0-9]*|[a-z0-9]+")


def error_title(err: BaseException | type[BaseException]) -> str:
    """A readable title from the error's class: ``NamespaceNotEmptyError`` -> "Namespace not
    empty", ``UnsupportedOperationError`` -> "Unsupported operation"."""
    cls = err if isinstance(err, type) else type(err)
    if isinstance(getattr(cls, "title", None), str):
        return str(cls.title)  # type: ignore[attr-defined]
    name = cls.__name__.removesuffix("Error") or cls.__name__
    words = _CAMEL_WORD.findall(name) or [name]
    text = " ".join(w.lower() for w in words)
    return capital(text)


def strip_code_prefix(message: str) -> str:
    """``"NAMESPACE_NOT_EMPTY: namespace a is not empty"`` -> ``"namespace a is not empty"``:
    a spec error code written in front of a message (the title says it)."""
    match = _CODE_PREFIX.match(message)
    if match and all(
        m in ErrorCode.__members__ for m in re.findall(r"[A-Z][A-Z_]+", match.group(0))
    ):
        return message[match.end() :]
    return message


def _without_title(message: str, title: str) -> str:
    """The message without the title repeated in front of it ("Table not found: ...")."""
    head = title.lower() + ":"
    return message[len(head) :].lstrip() if message.lower().startswith(head) else message


def describe_error(err: BaseException) -> dict[str, Any]:
    """A UI-friendly summary of any error: code name, message (no source paths), detail,
    status. The text is plain: the UI shows it as text, never as markdown."""
    if not isinstance(err, LanceNamespaceError):
        err = to_namespace_error(err, "operation")
    code = int(getattr(err, "code", ErrorCode.INTERNAL))
    message = clean_text(getattr(err, "server_message", None) or str(err), ENGINE_TEXT_CHARS)
    engine = getattr(err, "engine_message", None)
    if is_engine_text(message):  # one readable line; the engine's text behind the expander
        engine = engine or message
        message = readable_line(message)
    detail = getattr(err, "detail", None)
    return {
        "code": code,
        "code_name": ErrorCode(code).name if code in ERROR_CLASSES else str(code),
        "kind": type(err).__name__,
        "title": error_title(err),
        "message": _without_title(strip_code_prefix(message), error_title(err)),
        "detail": (readable_line(detail) if is_engine_text(detail) else clean_text(detail))
        if isinstance(detail, str) and detail
        else None,
        "instance": getattr(err, "instance", None),
        "status": getattr(err, "status", None),
        # the engine's own text of an error said in the user's terms (``filter_errors``,
        # ``column_errors``) or shortened to one line (:func:`keep_engine_text`)
        "engine_message": clean_text(engine, ENGINE_TEXT_CHARS) if engine else None,
    }
