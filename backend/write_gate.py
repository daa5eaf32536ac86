"""The one write gate: which namespace operations write, and a namespace that refuses them.

:data:`READ_OPERATIONS` and :data:`WRITE_OPERATIONS` classify every operation of the Lance
Namespace spec and every extra method of the console's two backends (``LocalNamespace``,
``RestNamespaceClient``); a spec operation is a read when the REST route table says so.
:func:`is_write` is the rule: an operation that is not a known read
counts as a write (a method added later is refused until someone classifies it).

:func:`read_only` wraps a connected namespace so that every write raises
``PermissionDeniedError`` before anything is sent or written, whoever calls it (a page, a
service, a background task); reads pass through unchanged. Code that writes files without a
namespace operation (staging a manifest) asks :func:`require_writable` first. A read-only
launch, the sidebar switch and (later) sign-in roles all go through this module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lance_namespace.errors import ErrorCode, LanceNamespaceError

from .errors import make
from .rest.routes import READ_ONLY_OPS, ROUTES

# Extra methods of the console's backends, beyond the spec operations of the route table.
_CONSOLE_READS = frozenset(
    {
        "build_url",  # the URL a request would go to (nothing is sent)
        "capabilities",
        "close",
        "format_id",
        "index_requests",
        "namespace_id",
        "open_dataset",
        "query_table_arrow",
        "supports_batch_commit",  # probes that change nothing (an empty batch)
        "supports_rename",  # (a rename of a table that does not exist)
        "table_location",
    }
)
_CONSOLE_WRITES = frozenset(
    {
        "compact_files",
        "create_empty_table",  # deprecated spec operation (no REST route)
        "optimize_indexes",
        "write_guard",  # the guard writers outside the backend take (imports)
    }
)
# Spec operations: the route table's read-only flag (``backend.rest.routes``) is the rule.
READ_OPERATIONS: frozenset[str] = READ_ONLY_OPS | _CONSOLE_READS
WRITE_OPERATIONS: frozenset[str] = (frozenset(ROUTES) - READ_ONLY_OPS) | _CONSOLE_WRITES
# Methods that run the operation named by their first argument (REST client).
_BY_OPERATION = frozenset({"call", "exists"})
DEFAULT_REASON = "the console is read-only"


def is_write(operation: str) -> bool:
    """Whether ``operation`` (a method or spec operation name) changes anything. Unknown
    names count as writes."""
    return operation not in READ_OPERATIONS


def refusal(operation: str, reason: str = DEFAULT_REASON) -> LanceNamespaceError:
    """The ``PermissionDeniedError`` a refused write raises."""
    return make(
        ErrorCode.PERMISSION_DENIED,
        f"{reason}: {operation} changes the namespace and is refused; nothing was written",
    )


class ReadOnlyNamespace:
    """A connected namespace whose writes are refused (see the module docstring). Reads,
    properties (``root``, ``delimiter``, ``wire_log`` ...) and private attributes are the
    wrapped namespace's own."""

    read_only = True

    def __init__(self, inner: Any, reason: str = DEFAULT_REASON) -> None:
        self._gated = inner
        self._reason = reason

    @property
    def reason(self) -> str:
        return self._reason

    def __getattr__(self, name: str) -> Any:
        if name in ("_gated", "_reason"):  # not set yet (copy/unpickle): no recursion
            raise AttributeError(name)
        value = getattr(self._gated, name)
        if name.startswith("_") or not callable(value):
            return value
        if name in _BY_OPERATION:
            return self._by_operation(value)
        if is_write(name):
            return self._refuser(name)
        return value

    def _refuser(self, name: str) -> Callable[..., Any]:
        reason = self._reason

        def refused(*_args: Any, **_kwargs: Any) -> Any:
            raise refusal(name, reason)

        refused.__name__ = name
        return refused

    def _by_operation(self, method: Callable[..., Any]) -> Callable[..., Any]:
        reason = self._reason

        def checked(op: str, *args: Any, **kwargs: Any) -> Any:
            if is_write(str(op)):
                raise refusal(str(op), reason)
            return method(op, *args, **kwargs)

        return checked

    def __repr__(self) -> str:
        return f"ReadOnlyNamespace({self._gated!r})"


def read_only(ns: Any, reason: str = DEFAULT_REASON) -> ReadOnlyNamespace:
    """``ns`` with every write refused (an already read-only view is returned as is)."""
    return ns if isinstance(ns, ReadOnlyNamespace) else ReadOnlyNamespace(ns, reason)


def is_read_only(ns: Any) -> bool:
    return isinstance(ns, ReadOnlyNamespace)


def require_writable(ns: Any, operation: str) -> None:
    """For writes that bypass the namespace's methods (files written directly): refuse on a
    read-only view."""
    if isinstance(ns, ReadOnlyNamespace):
        raise refusal(operation, ns.reason)


__all__ = [
    "READ_OPERATIONS",
    "WRITE_OPERATIONS",
    "ReadOnlyNamespace",
    "is_read_only",
    "is_write",
    "read_only",
    "refusal",
    "require_writable",
]
