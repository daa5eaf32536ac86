"""How a failed batch is told: one line of reason (:func:`reason_of`) and the namespace error
the commit raises (:func:`as_namespace_error`), shared by the file and the object-store commit.
"""

from __future__ import annotations

from lance_namespace.errors import ErrorCode, LanceNamespaceError

from ...errors import trim_source_locations
from .context import error
from .records import Canceled


def reason_of(exc: BaseException) -> str:
    """Why a batch failed, in one line of the journal and the error (source locations cut)."""
    if isinstance(exc, Canceled):
        return str(exc)
    if isinstance(exc, LanceNamespaceError):
        text = getattr(exc, "server_message", None) or str(exc)
        return f"{type(exc).__name__}: {trim_source_locations(str(text))}"
    if isinstance(exc, OSError):
        return f"I/O error: {exc}"
    return f"{type(exc).__name__}: {trim_source_locations(str(exc))}"


def as_namespace_error(exc: Exception, txn_id: str) -> LanceNamespaceError:
    """The namespace error a failed batch raises: rolled back, and why."""
    if isinstance(exc, Canceled):
        return error(
            ErrorCode.CONCURRENT_MODIFICATION,
            f"batch {txn_id} not applied: {exc}; everything was rolled back",
        )
    code = exc.code if isinstance(exc, LanceNamespaceError) else ErrorCode.INTERNAL
    err = error(
        ErrorCode(int(code)),
        f"batch {txn_id} not applied, everything was rolled back: {reason_of(exc)}",
    )
    err.operation_index = getattr(exc, "operation_index", None)  # type: ignore[attr-defined]
    return err
