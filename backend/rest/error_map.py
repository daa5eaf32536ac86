"""A REST server's error answers (and transport failures) as namespace errors.

A JSON error body (``{"error": ..., "code": n}``, ``{"error": {"message", "code"}}``, or the
spec's ``{"type", "title", "detail", "instance", "code"}``) maps by its spec code through
``backend.errors``; a body without one, or with a code the spec does not define, maps by
HTTP status (:data:`STATUS_TO_CODE`). The server is not trusted: control characters are
removed, source locations trimmed and known secrets masked (``backend.errors.clean_text``);
a message in the engine's words or longer than a line becomes one readable line, its full
text (up to ``ENGINE_TEXT_CHARS``) kept as ``engine_message``
(``backend.errors.keep_engine_text``). Other texts are cut to :data:`MAX_MESSAGE_CHARS`.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from lance_namespace.errors import InternalError, LanceNamespaceError

from backend.text import is_digits

from ..errors import (
    ENGINE_TEXT_CHARS,
    ERROR_CLASSES,
    NamespaceConnectionError,
    NamespaceTimeoutError,
    attach_error_details,
    clean_text,
    error_from_code,
    keep_engine_text,
)
from ..redaction import redact_url
from .routes import Route

# Error code for an error answer without a JSON error body, by HTTP status.
STATUS_TO_CODE: dict[int, int] = {
    400: 13,  # InvalidInput
    401: 16,  # Unauthenticated
    403: 15,  # PermissionDenied
    404: 0,  # no such route on this server -> Unsupported
    405: 0,
    406: 0,
    409: 14,  # ConcurrentModification
    413: 13,
    422: 13,
    429: 21,  # Throttling
    501: 0,
    503: 17,  # ServiceUnavailable
}
MAX_MESSAGE_CHARS = 2000


def clean(text: Any, limit: int = MAX_MESSAGE_CHARS) -> str:
    """Server text made safe to show (``backend.errors.clean_text``: no source locations, no
    control characters, known secrets masked), at most ``limit`` characters."""
    return clean_text(text, limit)


def error_from_response(route: Route, response: httpx.Response) -> LanceNamespaceError:
    status = response.status_code
    url = redact_url(str(response.request.url))
    raw = response.content
    body: Any = None
    if raw:
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, or nested too deeply to read
            body = None
    if isinstance(body, dict) and any(
        k in body for k in ("error", "code", "message", "detail", "type")
    ):
        err = body.get("error")
        code = body.get("code")
        if isinstance(err, dict):  # {"error": {"message": ..., "code": ...}}
            code = err.get("code", code)
            message = err.get("message") or json.dumps(err)
        else:
            message = err or body.get("message") or body.get("title") or body.get("detail")
        if isinstance(code, str) and is_digits(code.strip()):
            code = int(code)
        if not isinstance(code, int) or isinstance(code, bool) or code not in ERROR_CLASSES:
            # no code, or one the spec does not define: the HTTP status says what failed
            code = STATUS_TO_CODE.get(status, 18)
        if not message:
            message = f"HTTP {status} (code {code}) from {url}"
        detail = body.get("detail")
        instance = body.get("instance")
        # the server's text in full for the expander; the message one readable line
        mapped = error_from_code(
            code,
            clean(message, ENGINE_TEXT_CHARS),
            status=status,
            detail=None if detail is None else clean(detail),
            instance=None if instance is None else clean(instance, 500),
            error_type=None if body.get("type") is None else clean(body.get("type"), 500),
            url=url,
            raw=body,
        )
        return keep_engine_text(mapped)
    snippet = clean(" ".join(raw[:400].decode("utf-8", errors="replace").split()), 200)
    reason = response.reason_phrase or ""
    ctype = response.headers.get("content-type", "")
    message = f"HTTP {status} {reason} from {url} ({route.op}): {snippet or '(empty body)'}"
    if ctype:
        message += f" [{clean(ctype.split(';')[0], 100)}]"
    if status == 404 and not snippet:
        message += " - the server has no such route (operation not implemented?)"
    return error_from_code(
        STATUS_TO_CODE.get(status, 18), message, status=status, url=url, raw=snippet
    )


def malformed(route: Route, response: httpx.Response, why: str) -> LanceNamespaceError:
    """A success status whose body does not hold the response model."""
    snippet = clean(response.content[:200].decode("utf-8", errors="replace"), 200)
    url = redact_url(str(response.request.url))
    err = InternalError(
        f"{route.op}: malformed response from {url} (HTTP {response.status_code}): "
        f"{clean(why, 500)}: {snippet!r}"
    )
    return attach_error_details(err, status=response.status_code, message=str(err), url=url)


def too_large(route: Route, response: httpx.Response, limit: int) -> LanceNamespaceError:
    """An answer larger than the client reads (``limit`` bytes): refused, not read further."""
    url = redact_url(str(response.request.url))
    err = InternalError(
        f"{route.op}: the answer from {url} (HTTP {response.status_code}) is larger than "
        f"{limit // (1024 * 1024)} MiB, the most the console reads of one answer; "
        "it was not read further"
    )
    return attach_error_details(err, status=response.status_code, message=str(err), url=url)


def transport_error(
    route: Route, url: str, exc: httpx.TransportError, timeout: float | None
) -> LanceNamespaceError:
    """A connection failure or timeout, naming the (redacted) URL."""
    shown = redact_url(url)
    if isinstance(exc, httpx.TimeoutException):
        message = f"{route.op}: no answer from {shown} within {timeout} s ({type(exc).__name__})"
        cls: type[LanceNamespaceError] = NamespaceTimeoutError
    else:
        message = f"{route.op}: cannot reach {shown}: {type(exc).__name__}: {clean(exc, 300)}"
        cls = NamespaceConnectionError
    return attach_error_details(cls(message), message=message, url=shown)
