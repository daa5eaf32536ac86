"""Errors raised by the operations module.

Every failure is a ``lance_namespace.errors.LanceNamespaceError`` subclass, chosen by one
mapping table from the spec's error code (0-23). Transport failures (connection refused, DNS,
timeouts) are ``NamespaceConnectionError`` / ``NamespaceTimeoutError``: they are not namespace
answers, so they live in their own branch but still derive from ``ServiceUnavailableError`` so
that ``except LanceNamespaceError`` catches everything the backend raises.
"""

from __future__ import annotations

from typing import Any

from lance_namespace import errors as ln_errors
from lance_namespace.errors import (
    ErrorCode,
    InternalError,
    LanceNamespaceError,
    ServiceUnavailableError,
    UnsupportedOperationError,
)

# One table: spec error code -> exception class.
ERROR_CLASSES: dict[int, type[LanceNamespaceError]] = {
    int(code): cls
    for code, cls in ln_errors._ERROR_CODE_TO_EXCEPTION.items()  # noqa: SLF001 - the spec's table
}
# The table above is lance_namespace's own; pin what we rely on so a change there shows up here.
assert len(ERROR_CLASSES) == 24, "lance_namespace error table changed: review backend/errors.py"


class NamespaceConnectionError(ServiceUnavailableError):
    """The server could not be reached (refused, reset, DNS failure, TLS failure)."""


class NamespaceTimeoutError(NamespaceConnectionError):
    """The server did not answer within the configured timeout."""


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
    err.raw = raw  # type: ignore[attr-defined]
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
    """Build the exception for a spec error code; unknown codes become ``InternalError``.

    A server that says "not supported / not implemented" under the generic internal code
    (pylance's adapter answers 18 for that) is reported as ``UnsupportedOperationError``.
    """
    cls = ERROR_CLASSES.get(code, InternalError) if isinstance(code, int) else InternalError
    if cls is InternalError and _looks_unsupported(message):
        cls = UnsupportedOperationError
    err = cls(message)
    return attach_error_details(
        err,
        status=status,
        message=message,
        detail=detail,
        instance=instance,
        error_type=error_type,
        url=url,
        raw=raw,
    )


def _looks_unsupported(message: str) -> bool:
    m = (message or "").lower()
    return m.startswith("not supported") or "not implemented" in m or "unsupported operation" in m


def describe_error(err: BaseException) -> dict[str, Any]:
    """A UI-friendly summary of any error: code name, message, detail, status."""
    if isinstance(err, LanceNamespaceError):
        code = getattr(err, "code", ErrorCode.INTERNAL)
        return {
            "code": int(code),
            "code_name": ErrorCode(code).name if int(code) in ERROR_CLASSES else str(code),
            "kind": type(err).__name__,
            "message": getattr(err, "server_message", None) or str(err),
            "detail": getattr(err, "detail", None),
            "instance": getattr(err, "instance", None),
            "status": getattr(err, "status", None),
        }
    return {
        "code": int(ErrorCode.INTERNAL),
        "code_name": "INTERNAL",
        "kind": type(err).__name__,
        "message": str(err) or type(err).__name__,
        "detail": None,
        "instance": None,
        "status": None,
    }


__all__ = [
    "ERROR_CLASSES",
    "NamespaceConnectionError",
    "NamespaceTimeoutError",
    "attach_error_details",
    "error_from_code",
    "describe_error",
    "LanceNamespaceError",
]
