"""Secrets: one classifier, one mask, and the places secrets could leak through.

:func:`is_secret_name` decides, for a header name, JSON key, query parameter, storage option or
property name, whether its value is a secret. Every path uses it: the wire log, copy-as-curl,
copy-as-Python, the connections file, the UI's JSON viewers and error messages.

* :func:`mask_value` - the one mask (``<redacted>``);
* :func:`redact_json` - a JSON value (or pydantic model) with secret values masked, recursively;
* :func:`redact_url` - a URL without its password, secret query parameters, or secrets inside
  JSON-valued query parameters (``storage_options``, ``properties``);
* :func:`redact_headers` - headers with secret values masked (the auth scheme kept);
* :func:`redact_text` - free text (an exception message, a log line) without any secret value
  registered with :func:`register_secret` and without URL passwords;
* :class:`RedactingFilter` / :func:`install_log_filter` - the same for the records httpx,
  httpcore and the console log.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

REDACTED = "<redacted>"

# Words that make a name secret wherever they appear (names are split into lower-case words at
# non-alphanumerics and camelCase boundaries: "aws_secret_access_key" -> aws, secret, access, key).
_SECRET_WORDS = frozenset(
    {
        "token",
        "tokens",
        "secret",
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "credential",
        "credentials",
        "authorization",
        "auth",
        "cookie",
        "signature",
        "sig",
        "sas",
        "bearer",
        "apikey",
        "session",
        "jwt",
    }
)
# "<word> key" pairs whose value is a key in the cryptographic sense ("client_key", "x-api-key").
_KEY_QUALIFIERS = frozenset(
    {
        "api",
        "access",
        "secret",
        "private",
        "account",
        "client",
        "master",
        "encryption",
        "signing",
        "shared",
        "storage",
        "service",
        "sas",
        "app",
        "license",
        "subscription",
        "x",
    }
)
# Names that are credentials although no word of theirs says so.
_SECRET_NAMES = frozenset({"aws_access_key_id", "access_key_id", "client_id_secret"})
# Names that the rules above would mask but that hold no secret.
_NOT_SECRET = frozenset(
    {
        "page_token",
        "next_page_token",
        "max_token_length",
        "base_tokenizer",
        "session_name",
        "expires_at_millis",
        "token_expires_at_millis",
        "with_position",
    }
)
# Query parameters whose value is a JSON object that may hold secrets (CreateTable).
JSON_QUERY_PARAMS = frozenset({"storage_options", "properties"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", _CAMEL.sub("_", name).lower()) if w]


def is_secret_name(name: Any) -> bool:
    """Whether the value under ``name`` (header, JSON key, query parameter, storage option,
    property) is a secret. ``*_env`` names hold environment-variable names, not secrets."""
    text = str(name).strip()
    words = _words(text)
    joined = "_".join(words)
    if not words or joined in _NOT_SECRET or words[-1] == "env":
        return False
    if joined in _SECRET_NAMES:
        return True
    if any(w in _SECRET_WORDS for w in words):
        return True
    if words[-1] in ("key", "keys") and len(words) > 1:
        return words[-2] in _KEY_QUALIFIERS
    return "apikey" in "".join(words) or "privatekey" in "".join(words)


def mask_value(value: Any) -> str:
    """The mask shown instead of a secret value (empty stays empty)."""
    return "" if value is None or value == "" else REDACTED


def is_masked(value: Any) -> bool:
    return value in (None, "", REDACTED)


def redact_mapping(data: Mapping[str, Any] | None) -> dict[str, Any]:
    """A copy of a flat mapping with the values of secret names masked."""
    return {str(k): (mask_value(v) if is_secret_name(k) else v) for k, v in (data or {}).items()}


# Deeper than this, a JSON value is shown as a marker (:data:`TOO_DEEP`) by
# :func:`redact_json`: what a server answers is not trusted, and a value nested thousands deep
# would exhaust the interpreter's stack. Schemas and properties nest a few tens of levels.
MAX_JSON_DEPTH = 100
TOO_DEEP = f"<nested deeper than {MAX_JSON_DEPTH} levels>"


def redact_json(value: Any, _depth: int = 0) -> Any:
    """A JSON-ready copy of a model/dict/list with every secret value masked, recursively:
    the values under secret names, and known secrets inside any text (:func:`redact_text`: a
    server echoing a key in an error body).

    Pydantic models (``lance_namespace`` requests and responses) are dumped with
    ``exclude_none``; bytes become ``<N bytes>``; an object or list nested deeper than
    :data:`MAX_JSON_DEPTH` becomes :data:`TOO_DEEP`.
    """
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, (Mapping, list, tuple)) and _depth >= MAX_JSON_DEPTH:
        return TOO_DEEP
    if isinstance(value, Mapping):
        return {
            str(k): _mask_all(v, _depth + 1) if is_secret_name(k) else redact_json(v, _depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [redact_json(v, _depth + 1) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"
    if isinstance(value, str):
        return redact_text(value)
    return value


def _mask_all(value: Any, _depth: int = 0) -> Any:
    """Everything under a secret name masked: a scalar, and every value inside an object or a
    list (``{"credentials": {"user": ..., "value": ...}}``), keeping the shape (keys, lengths)
    so a reader still sees what is there. Booleans and nulls say nothing secret and stay;
    deeper than :data:`MAX_JSON_DEPTH`: :data:`TOO_DEEP`."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, (Mapping, list, tuple)) and _depth >= MAX_JSON_DEPTH:
        return TOO_DEEP
    if isinstance(value, Mapping):
        return {str(k): _mask_all(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_mask_all(v, _depth + 1) for v in value]
    if value is None or isinstance(value, bool):
        return value
    return mask_value(value)


def redact_header(name: str, value: str) -> str:
    """A header's value as shown: masked under a secret name (``Authorization``: its scheme
    kept), else with known secrets masked inside it (a server echoing a key)."""
    if not is_secret_name(name):
        return redact_text(value)
    if name.lower() in ("authorization", "proxy-authorization"):
        scheme, _, rest = value.partition(" ")
        if rest and scheme.isalpha():
            return f"{scheme} {REDACTED}"
    return mask_value(value)


def redact_headers(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> dict[str, str]:
    items = headers.items() if isinstance(headers, Mapping) else headers
    return {str(k): redact_header(str(k), str(v)) for k, v in items}


def display_target(target: str) -> str:
    """A target as shown or printed: a URL with any password and secret query parameters
    masked (:func:`redact_url`), a path as it is."""
    return redact_url(target) if "://" in target else target


def redact_url(url: str) -> str:
    """The URL without a password, with secret query parameters masked (also inside the
    JSON-valued ``storage_options`` / ``properties`` parameters)."""
    try:
        parts = urlsplit(str(url))
    except ValueError:
        return redact_text(str(url))
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:{REDACTED}@{host}" if ":" in userinfo else f"{REDACTED}@{host}"
    query = parts.query
    if query:
        pieces, changed = [], False
        for key, val in parse_qsl(query, keep_blank_values=True):
            new = val
            if is_secret_name(key):
                new = mask_value(val)
            elif key in JSON_QUERY_PARAMS:
                try:
                    parsed = json.loads(val)
                except ValueError:
                    parsed = None
                if isinstance(parsed, dict):
                    redacted = redact_json(parsed)
                    if redacted != parsed:
                        new = json.dumps(redacted, separators=(",", ":"))
            changed = changed or new != val
            pieces.append(f"{quote(key, safe='')}={quote(new, safe='')}")
        if changed:
            query = "&".join(pieces)
    return urlunsplit(parts._replace(netloc=netloc, query=query))


# -- known secret values --------------------------------------------------------------------------

_KNOWN: set[str] = set()
_KNOWN_LOCK = threading.Lock()
_MIN_SECRET_LEN = 4  # shorter values would mask ordinary words
# A scheme starts where a run of scheme characters starts (the look-behind): tried from every
# letter of a long word, the search took the square of its length (80,000 letters: 5.7 s).
_URL_PASSWORD = re.compile(
    r"(?<![a-zA-Z0-9+.-])(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<user>[^:/@\s]*):[^@/\s]+@"
)


def register_secret(value: Any) -> None:
    """Remember a secret value (an API key, a token, a storage credential) so that
    :func:`redact_text` removes it from any text: exception messages and log records."""
    text = str(value) if value is not None else ""
    if len(text) >= _MIN_SECRET_LEN:
        with _KNOWN_LOCK:
            _KNOWN.add(text)


def register_secrets(mapping: Mapping[str, Any] | None) -> None:
    """:func:`register_secret` for every secret-named value of ``mapping``."""
    for k, v in (mapping or {}).items():
        if is_secret_name(k):
            register_secret(v)


def redact_text(text: str) -> str:
    """``text`` with every registered secret and URL password masked."""
    if not text:
        return text
    with _KNOWN_LOCK:
        known = sorted(_KNOWN, key=len, reverse=True)
    for secret in known:
        if secret in text:
            text = text.replace(secret, REDACTED)
        else:
            shown = repr(secret)[1:-1]  # as it appears inside a repr (escapes)
            if shown != secret and shown in text:
                text = text.replace(shown, REDACTED)
    return _URL_PASSWORD.sub(lambda m: f"{m['scheme']}{m['user']}:{REDACTED}@", text)


class RedactingFilter(logging.Filter):
    """Masks URLs, URL passwords and registered secrets in every record it sees."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args:
            args = record.args if isinstance(record.args, tuple) else (record.args,)
            record.args = tuple(_redact_arg(a) for a in args)
        if isinstance(record.msg, str):
            record.msg = redact_text(record.msg)
        return True


def _redact_arg(arg: Any) -> Any:
    if isinstance(arg, (int, float)) or arg is None:
        return arg
    text = str(arg)
    if "://" in text:
        return redact_text(redact_url(text))
    return redact_text(text)


_LOGGERS = (
    "httpx",
    "httpcore",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "lance_console",
)
_FILTER = RedactingFilter()


def install_log_filter(names: Iterable[str] = _LOGGERS) -> None:
    """Attach the redacting filter to the loggers of the libraries the console calls and to
    their handlers' records (idempotent)."""
    for name in names:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
