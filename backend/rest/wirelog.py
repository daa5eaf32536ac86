"""Recent HTTP exchanges of the REST client: an httpx transport layer, a ring buffer,
copy-as-curl. Secrets are redacted by ``backend.redaction`` in every view.

:class:`WireLogTransport` wraps the client's real transport: every request that reaches the
network (each retry included) is recorded as a :class:`WireEntry` in a bounded
:class:`WireLog`, newest last. Recording keeps references to the bytes on the wire; an entry
renders them (decode, truncate, redact) only when somebody looks, so logging costs almost
nothing. Each entry keeps at most :data:`MAX_KEPT_BODY_BYTES` of a body (and its full size):
a huge answer is not held whole by the log. :func:`to_curl` turns an entry into a shell
command in which the API key and bearer token are the shell variables ``$LANCE_API_KEY`` /
``$LANCE_AUTH_TOKEN``.
"""

from __future__ import annotations

import json
import re
import shlex
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import httpx

from ..redaction import (
    REDACTED,
    is_secret_name,
    redact_headers,
    redact_json,
    redact_text,
    redact_url,
)
from .routes import ARROW_FILE, ARROW_STREAM

DEFAULT_MAX_ENTRIES = 200
DEFAULT_MAX_BODY_CHARS = 16_384
# The head of a body an entry keeps (the rest is counted, not kept): more than the Inspector
# shows (DEFAULT_MAX_BODY_CHARS), so a body up to this size renders as it always did.
MAX_KEPT_BODY_BYTES = 64 * 1024
ARROW_CONTENT_TYPES = (ARROW_STREAM, ARROW_FILE)
OP_EXTENSION = "lance_console.op"  # request extension naming the operation
ATTEMPT_EXTENSION = "lance_console.attempt"
# response extension: the entry recording the exchange, for the reader of the body
# (:meth:`WireEntry.finish`)
ENTRY_EXTENSION = "lance_console.wire_entry"


def _content_type(headers: Mapping[str, str]) -> str:
    for k, v in headers.items():
        if k.lower() == "content-type":
            return v.split(";")[0].strip().lower()
    return ""


def render_body(
    raw: bytes | None, content_type: str, max_chars: int, size: int | None = None
) -> Any:
    """A body for display: JSON (redacted, or truncated text when huge), a summary for binary
    bodies, ``None`` when empty. ``raw`` may be the head of a body of ``size`` bytes; a head,
    or JSON nested too deeply to parse, is shown as text with the values under secret names
    masked (:func:`_redact_json_text`)."""
    if not raw:
        return None
    n = max(len(raw), size or 0)
    if content_type in ARROW_CONTENT_TYPES:
        kind = "file" if content_type.endswith("file") else "ipc"
        return f"<{n} bytes arrow {kind}>"
    parsed: Any = _UNREADABLE
    if n == len(raw):
        try:
            parsed = redact_json(json.loads(raw))
        except (ValueError, RecursionError):
            parsed = _UNREADABLE
    if n > max_chars:
        if parsed is not _UNREADABLE:
            text = json.dumps(parsed, ensure_ascii=False)
        else:
            head = raw[: max_chars * 4].decode("utf-8", errors="replace")
            text = _redact_json_text(head, max_chars)
        return f"{text[:max_chars]}... <truncated, {n} bytes>"
    if parsed is not _UNREADABLE:
        return parsed
    try:
        return _redact_json_text(raw.decode("utf-8"), max_chars)
    except UnicodeDecodeError:
        return f"<{n} bytes binary>"


_UNREADABLE = object()
# A JSON token: a string (or the unterminated rest of one), punctuation, a run of other
# characters (numbers, literals, anything else), whitespace; together they cover any text.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[{}\[\]:,]|[^\s{}\[\]:,"]+|\s+', re.S)
_SAYS_NOTHING = frozenset({"null", "true", "false"})


def _redact_json_text(text: str, limit: int) -> str:
    """``text`` (JSON, possibly cut short or nested too deeply to parse; or any text) as it
    is, up to about ``limit`` characters, with every value under a secret name masked as
    :func:`backend.redaction.redact_json` masks it (objects and lists under one too), and
    known secrets masked (:func:`redact_text`). One pass, no recursion."""
    out: list[str] = []
    length = 0
    stack: list[tuple[bool, bool]] = []  # per open container: (an object, all secret)
    expect_key = False
    key_secret = False
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        in_object, inherited = stack[-1] if stack else (False, False)
        secret = inherited or (in_object and key_secret)
        if token in "{[":
            stack.append((token == "{", secret))
            expect_key = token == "{"
            key_secret = False
        elif token in "}]":
            if stack:
                stack.pop()
            expect_key = key_secret = False
        elif token == ",":
            expect_key, key_secret = in_object, False
        elif token == ":" or token.isspace():
            pass
        elif expect_key and token.startswith('"'):
            key_secret = is_secret_name(token[1:-1] if token.endswith('"') else token[1:])
            expect_key = False
        elif secret and token not in _SAYS_NOTHING:
            token = json.dumps(REDACTED)
        out.append(token)
        length += len(token)
        if length > limit:
            break
    return redact_text("".join(out))


class WireEntry:
    """One HTTP exchange; every public view is redacted, rendered on first access, cached."""

    __slots__ = (
        "op",
        "method",
        "status",
        "elapsed_ms",
        "error",
        "attempt",
        "started_at",
        "max_body_chars",
        "_t0",
        "_request_size",
        "_response_size",
        "_url",
        "_request_headers",
        "_response_headers",
        "_request_raw",
        "_response_raw",
        "_views",
    )

    def __init__(
        self,
        *,
        op: str,
        method: str,
        url: str,
        request_headers: Mapping[str, str] | None = None,
        status: int | None = None,
        response_headers: Mapping[str, str] | None = None,
        elapsed_ms: float = 0.0,
        error: str | None = None,
        attempt: int = 1,
        started_at: float | None = None,
        max_body_chars: int = DEFAULT_MAX_BODY_CHARS,
        request_body: bytes | None = None,
        response_body: bytes | None = None,
    ):
        self.op = op
        self.method = method
        self.status = status
        self.elapsed_ms = elapsed_ms
        self.error = redact_text(error) if error else error
        self.attempt = attempt
        self.started_at = time.time() if started_at is None else started_at
        self.max_body_chars = max_body_chars
        self._url = url
        self._request_headers = request_headers
        self._response_headers = response_headers
        self._t0 = time.perf_counter()
        self._request_raw, self._request_size = _kept(request_body)
        self._response_raw, self._response_size = _kept(response_body)
        self._views: dict[str, Any] = {}

    def finish(self, body: bytes | None, error: str | None = None) -> None:
        """The response's body (its head is kept), or why it was not read in full, once the
        reader of the body is done: the time it took counts from the request's start."""
        self._response_raw, self._response_size = _kept(body)
        self.elapsed_ms = (time.perf_counter() - self._t0) * 1000.0
        if error:
            self.error = redact_text(error)
        self._views.pop("rsb", None)

    def _view(self, name: str, render: Callable[[], Any]) -> Any:
        views = self._views
        if name not in views:
            views[name] = render()
        return views[name]

    @property
    def url(self) -> str:
        return self._view("url", lambda: redact_url(self._url))

    @property
    def request_headers(self) -> dict[str, str]:
        return self._view("rqh", lambda: redact_headers(self._request_headers or {}))

    @property
    def response_headers(self) -> dict[str, str]:
        return self._view("rsh", lambda: redact_headers(self._response_headers or {}))

    @property
    def request_body(self) -> Any:
        return self._view(
            "rqb",
            lambda: render_body(
                self._request_raw,
                _content_type(self.request_headers),
                self.max_body_chars,
                self._request_size,
            ),
        )

    @property
    def response_body(self) -> Any:
        return self._view(
            "rsb",
            lambda: render_body(
                self._response_raw,
                _content_type(self.response_headers),
                self.max_body_chars,
                self._response_size,
            ),
        )

    @property
    def request_bytes(self) -> int:
        """The request body's full size (the entry keeps its head)."""
        return self._request_size

    @property
    def response_bytes(self) -> int:
        """The response body's size as read (the entry keeps its head)."""
        return self._response_size

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready, redacted view (for tables, downloads and the UI)."""
        return {
            "op": self.op,
            "method": self.method,
            "url": self.url,
            "status": self.status,
            "elapsed_ms": round(self.elapsed_ms, 3),
            "attempt": self.attempt,
            "error": self.error,
            "started_at": self.started_at,
            "request_headers": dict(self.request_headers),
            "request_body": self.request_body,
            "response_headers": dict(self.response_headers),
            "response_body": self.response_body,
        }

    def to_curl(self) -> str:
        return to_curl(self)

    def __repr__(self) -> str:
        return (
            f"WireEntry(op={self.op!r}, {self.method} {self.url}, status={self.status}, "
            f"elapsed_ms={self.elapsed_ms:.1f}, error={self.error!r})"
        )

    def __getstate__(self) -> dict[str, Any]:
        # Pickling (a session-state snapshot, say) keeps the redacted views only.
        return self.as_dict()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(  # type: ignore[misc]
            op=state["op"],
            method=state["method"],
            url=state["url"],
            request_headers=state["request_headers"],
            status=state["status"],
            response_headers=state["response_headers"],
            elapsed_ms=state["elapsed_ms"],
            error=state["error"],
            attempt=state["attempt"],
            started_at=state["started_at"],
        )
        self._views["rqb"] = state["request_body"]
        self._views["rsb"] = state["response_body"]


def _kept(body: bytes | None) -> tuple[bytes | None, int]:
    """The head of ``body`` an entry keeps, and its full size."""
    if not body:
        return body, 0
    return bytes(body[:MAX_KEPT_BODY_BYTES]), len(body)


class WireLog:
    """A thread-safe ring buffer of the last ``max_entries`` exchanges, newest last."""

    def __init__(
        self, max_entries: int = DEFAULT_MAX_ENTRIES, max_body_chars: int = DEFAULT_MAX_BODY_CHARS
    ):
        self.max_entries = max(0, int(max_entries))
        self.max_body_chars = int(max_body_chars)
        self._entries: deque[WireEntry] = deque(maxlen=self.max_entries or 1)
        self._lock = threading.Lock()
        # requests by operation since the last clear(), older entries dropped included
        self._counts: Counter[str] = Counter()

    @property
    def enabled(self) -> bool:
        return self.max_entries > 0

    def record(self, **fields: Any) -> WireEntry | None:
        """Add one exchange (the keyword arguments of :class:`WireEntry`)."""
        op = str(fields.get("op") or "?")
        if not self.max_entries:
            with self._lock:
                self._counts[op] += 1
            return None
        entry = WireEntry(max_body_chars=self.max_body_chars, **fields)
        with self._lock:
            self._entries.append(entry)
            self._counts[op] += 1
        return entry

    def counts(self) -> dict[str, int]:
        """How many requests went out, by operation, since the last :meth:`clear` (every
        retry counts; entries the ring buffer has dropped, or never kept when it is
        disabled, still count)."""
        with self._lock:
            return dict(self._counts)

    def total(self) -> int:
        """How many requests went out since the last :meth:`clear`."""
        with self._lock:
            return sum(self._counts.values())

    def entries(self) -> list[WireEntry]:
        with self._lock:
            return list(self._entries)

    def last(self) -> WireEntry | None:
        with self._lock:
            return self._entries[-1] if self._entries else None

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._counts.clear()

    def __iter__(self) -> Iterator[WireEntry]:
        return iter(self.entries())

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, index: int) -> WireEntry:
        return self.entries()[index]

    def __repr__(self) -> str:
        return f"WireLog({len(self)}/{self.max_entries} entries)"


class WireLogTransport(httpx.BaseTransport):
    """An httpx transport that records every exchange of the transport it wraps."""

    def __init__(self, inner: httpx.BaseTransport, log: WireLog):
        self.inner = inner
        self.log = log

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if not self.log.enabled:
            self.log.record(op=str(request.extensions.get(OP_EXTENSION, "")))  # counted only
            return self.inner.handle_request(request)
        started = time.perf_counter()
        op = str(request.extensions.get(OP_EXTENSION, ""))
        attempt = int(request.extensions.get(ATTEMPT_EXTENSION, 1))
        body = request.content
        try:
            response = self.inner.handle_request(request)
        except httpx.TransportError as exc:
            self.log.record(
                op=op,
                method=request.method,
                url=str(request.url),
                request_headers=request.headers,
                request_body=body,
                elapsed_ms=(time.perf_counter() - started) * 1000.0,
                error=f"{type(exc).__name__}: {exc}",
                attempt=attempt,
            )
            raise
        # the body is the reader's (the client reads it within its limits): it hands the
        # entry what it read (WireEntry.finish)
        entry = self.log.record(
            op=op,
            method=request.method,
            url=str(request.url),
            request_headers=request.headers,
            request_body=body,
            status=response.status_code,
            response_headers=response.headers,
            elapsed_ms=(time.perf_counter() - started) * 1000.0,
            attempt=attempt,
        )
        response.extensions = {**response.extensions, ENTRY_EXTENSION: entry}
        return response

    def close(self) -> None:
        self.inner.close()


def _shell_var_for(name: str) -> str:
    lowered = name.lower()
    if lowered == "x-api-key":
        return "$LANCE_API_KEY"
    if lowered in ("authorization", "proxy-authorization"):
        return "$LANCE_AUTH_TOKEN"
    return "$LANCE_" + re.sub(r"[^A-Za-z0-9]", "_", name).upper()


def to_curl(entry: WireEntry) -> str:
    """A copy-pasteable ``curl`` command for an entry.

    Redacted headers become shell variables (``$LANCE_API_KEY``, ``$LANCE_AUTH_TOKEN``,
    ``$LANCE_<HEADER_NAME>``) inside double quotes so the shell expands them; the real values
    are never part of the output. Arrow bodies are referenced as ``@request.arrow``.
    """
    parts = ["curl", "-sS", "-X", entry.method, shlex.quote(entry.url)]
    for name, value in entry.request_headers.items():
        lowered = name.lower()
        if lowered in ("content-length", "host", "accept-encoding", "connection", "user-agent"):
            continue
        if REDACTED in value:
            var = _shell_var_for(name)
            shown = value.replace(REDACTED, var)
            if lowered == "authorization" and shown == var:
                shown = f"Bearer {var}"
            parts += ["-H", f'"{name}: {shown}"']
        else:
            parts += ["-H", shlex.quote(f"{name}: {value}")]
    if entry.request_bytes:
        ctype = _content_type(entry.request_headers)
        if ctype in ARROW_CONTENT_TYPES:
            parts += ["--data-binary", "@request.arrow"]
            cmd = " ".join(parts)
            return f"# body: {entry.request_body} - save it as request.arrow\n{cmd}"
        body = entry.request_body
        text = body if isinstance(body, str) else json.dumps(body, separators=(",", ":"))
        parts += ["--data-raw", shlex.quote(text)]
    return " ".join(parts)
