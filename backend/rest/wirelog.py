"""Recent HTTP exchanges of the REST client: an httpx transport layer, a ring buffer,
copy-as-curl. Secrets are redacted by ``backend.redaction`` in every view.

:class:`WireLogTransport` wraps the client's real transport: every request that reaches the
network (each retry included) is recorded as a :class:`WireEntry` in a bounded
:class:`WireLog`, newest last. Recording keeps references to the bytes on the wire; an entry
renders them (decode, truncate, redact) only when somebody looks, so logging costs almost
nothing. :func:`to_curl` turns an entry into a shell command in which the API key and bearer
token are the shell variables ``$LANCE_API_KEY`` / ``$LANCE_AUTH_TOKEN``.
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
    redact_headers,
    redact_json,
    redact_text,
    redact_url,
)
from .routes import ARROW_FILE, ARROW_STREAM

DEFAULT_MAX_ENTRIES = 200
DEFAULT_MAX_BODY_CHARS = 16_384
ARROW_CONTENT_TYPES = (ARROW_STREAM, ARROW_FILE)
OP_EXTENSION = "lance_console.op"  # request extension naming the operation
ATTEMPT_EXTENSION = "lance_console.attempt"


def _content_type(headers: Mapping[str, str]) -> str:
    for k, v in headers.items():
        if k.lower() == "content-type":
            return v.split(";")[0].strip().lower()
    return ""


def render_body(raw: bytes | None, content_type: str, max_chars: int) -> Any:
    """A body for display: JSON (redacted, or truncated text when huge), a summary for binary
    bodies, ``None`` when empty."""
    if not raw:
        return None
    n = len(raw)
    if content_type in ARROW_CONTENT_TYPES:
        kind = "file" if content_type.endswith("file") else "ipc"
        return f"<{n} bytes arrow {kind}>"
    if n > max_chars:
        try:
            text = json.dumps(redact_json(json.loads(raw)), ensure_ascii=False)
        except ValueError:
            text = redact_text(raw.decode("utf-8", errors="replace"))
        return f"{text[:max_chars]}... <truncated, {n} bytes>"
    try:
        return redact_json(json.loads(raw))
    except ValueError:
        pass
    try:
        return redact_text(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return f"<{n} bytes binary>"


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
        self._request_raw = request_body
        self._response_raw = response_body
        self._views: dict[str, Any] = {}

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
                self._request_raw, _content_type(self.request_headers), self.max_body_chars
            ),
        )

    @property
    def response_body(self) -> Any:
        return self._view(
            "rsb",
            lambda: render_body(
                self._response_raw, _content_type(self.response_headers), self.max_body_chars
            ),
        )

    @property
    def request_bytes(self) -> int:
        return len(self._request_raw or b"")

    @property
    def response_bytes(self) -> int:
        return len(self._response_raw or b"")

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
            response.read()
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
        self.log.record(
            op=op,
            method=request.method,
            url=str(request.url),
            request_headers=request.headers,
            request_body=body,
            status=response.status_code,
            response_headers=response.headers,
            response_body=response.content,
            elapsed_ms=(time.perf_counter() - started) * 1000.0,
            attempt=attempt,
        )
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
