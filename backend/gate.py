"""The one gate on the write path: read-only launches, roles and the audit log.

:class:`GatedNamespace` wraps a connected namespace (either backend) for one actor. Every
operation goes through it; a write is

1. refused when the gate is read-only (``PermissionDeniedError`` naming why),
2. refused when the actor's role may not run it (``backend.access``, the one classification),
3. run, timed and recorded in the audit log (``backend.audit``), whether it succeeds or fails;
   the entry names the object the write addresses, or every table a batch touches with the
   kinds of its operations (``audit.batch_tables``).

Reads pass straight through for every role; an actor without a role (the roles file gives the
user none, or cannot be read) reads nothing either: every operation but the few that read no
data (``access.NO_DATA_OPS``) is refused with a ``PermissionDeniedError``. The wrapped client may be shared by many actors (the console
caches one client per connection); the gate is per actor and cheap to make. Services take the
gate where they take a namespace (they are duck-typed), so a page or a component has no other
way to a write.

Writes that happen outside the spec's operations (an import writing through lance under
``write_guard``) are recorded by their service with :meth:`GatedNamespace.record`.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import getpass
import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from lance_namespace.errors import ErrorCode, LanceNamespaceError

from . import access, audit
from .errors import make
from .rest.routes import ROUTES

# A lance dataset handed out by ``open_dataset`` reads freely; anything else it can do (insert,
# delete, index, tag, restore...) runs only inside a write the gate checked and records
# (:meth:`GatedNamespace.record`), so that no page reaches a write around the gate.
DATASET_READS: frozenset[str] = frozenset(
    {
        "all_files", "base_paths", "centroids", "checkout_latest", "config", "count_rows",
        "data_storage_version", "delta", "describe_indices", "explain_cleanup_old_versions",
        "filter", "fragment_ids", "get_fragment", "get_fragments", "get_ivf_model",
        "get_transactions", "get_version", "has_index", "has_stable_row_ids", "head",
        "index_statistics", "initial_storage_options", "io_stats_incremental",
        "io_stats_snapshot", "join", "join_asof", "lance_schema", "latest_storage_options",
        "latest_version", "list_indices", "max_field_id", "metadata", "partition_expression",
        "prewarm_index", "read_blob_ranges", "read_blobs", "read_transaction", "sample",
        "scanner", "schema", "schema_metadata", "session", "slice", "sort_by", "sql", "stats",
        "take", "take_blobs", "to_batches", "to_pandas", "to_table", "tracked_files", "uri",
        "validate", "version", "version_refs", "versions",
    }
)  # fmt: skip
TAG_READS: frozenset[str] = frozenset({"list", "get_version", "list_ordered"})
_IN_WRITE: contextvars.ContextVar[bool] = contextvars.ContextVar("gate_in_write", default=False)


class _Guarded:
    """A lance object whose reads pass and whose other members run only inside a write the
    gate recorded; ``unwrap`` gives the object itself to code already inside such a write."""

    __slots__ = ("_obj", "_reads", "_what")

    def __init__(self, obj: Any, reads: frozenset[str], what: str) -> None:
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_reads", reads)
        object.__setattr__(self, "_what", what)

    def unwrap(self) -> Any:
        if not _IN_WRITE.get():
            raise refusal(self._what, "the console writes only through its own operations")
        return self._obj

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._obj, name)
        if name == "tags" and self._reads is DATASET_READS:
            return _Guarded(value, TAG_READS, "a tag change through the dataset")
        if name == "checkout_version" and self._reads is DATASET_READS:
            return lambda *a, **k: _Guarded(value(*a, **k), DATASET_READS, self._what)
        if name in self._reads or name.startswith("_") or _IN_WRITE.get():
            return value
        raise refusal(
            f"{name} ({self._what})", "the console writes only through its own operations"
        )

    def __setattr__(self, name: str, value: Any) -> None:
        raise refusal(f"setting {name} ({self._what})", "the dataset is read-only here")

    def __repr__(self) -> str:
        return f"read-only {self._obj!r}"


def unwrap(dataset: Any) -> Any:
    """The lance dataset behind a gated ``open_dataset`` (inside a recorded write only; any
    other object is returned as it is)."""
    return dataset.unwrap() if isinstance(dataset, _Guarded) else dataset


# Methods that run the operation named by their first argument (REST ``call``, ``exists``).
DISPATCHERS: frozenset[str] = frozenset({"call", "exists"})
# The request context entry that carries the actor to a REST server (sent as the header
# ``x-lance-ctx-console-user``), so that the server can audit too.
USER_CONTEXT_KEY = "console-user"


@dataclasses.dataclass(frozen=True)
class Actor:
    """Who acts: the signed-in user (or the OS user in a notebook) and their role."""

    user: str
    role: str | None = access.ADMIN
    source: str = "console"  # console | notebook

    @classmethod
    def os_user(cls) -> Actor:
        try:
            name = getpass.getuser()
        except Exception:  # noqa: BLE001 - no login name (containers): the uid
            name = f"uid {os.getuid()}"
        return cls(user=name, role=access.ADMIN, source="notebook")


def refusal(operation: str, reason: str) -> LanceNamespaceError:
    """The ``PermissionDeniedError`` a refused write raises: why, and that nothing changed."""
    return make(
        ErrorCode.PERMISSION_DENIED,
        f"{reason}: {operation} changes the namespace and is refused; nothing was written",
    )


def read_refusal(operation: str, reason: str) -> LanceNamespaceError:
    """The ``PermissionDeniedError`` a refused read raises (an actor without a role)."""
    return make(ErrorCode.PERMISSION_DENIED, f"{reason}: {operation} is refused")


def _ids(request: Any) -> list[str]:
    if isinstance(request, (list, tuple)) and all(isinstance(p, str) for p in request):
        return list(request)  # the console's own writes take a table id
    raw = request.get("id") if isinstance(request, dict) else getattr(request, "id", None)
    return [str(p) for p in raw] if isinstance(raw, (list, tuple)) else []


def _txn_id(result: Any) -> str | None:
    txn = getattr(result, "transaction_id", None)
    if txn is None and isinstance(result, dict):
        txn = result.get("transaction_id")
    return str(txn) if txn else None


class GatedNamespace:
    """A namespace seen through the write gate (see the module docstring)."""

    def __init__(
        self,
        inner: Any,
        *,
        actor: Actor,
        connection: str,
        read_only: str | None = None,
        log: audit.AuditLog | None = None,
    ) -> None:
        self._inner = inner
        self._actor = actor
        self._connection = connection
        self._read_only = read_only
        self._log = log
        # Over REST every request carries the actor (the local backend has no one to tell).
        self._tell_server = callable(getattr(inner, "call", None))

    # -- what the UI asks before drawing a button ----------------------------------------------
    @property
    def inner(self) -> Any:
        return self._inner

    @property
    def actor(self) -> Actor:
        return self._actor

    @property
    def read_only(self) -> str | None:
        """Why every write is refused (``None``: writes are allowed, per role)."""
        return self._read_only

    def denial(self, operation: str, request: Any = None) -> str | None:
        """Why ``operation`` would be refused for this actor (``None``: it would run). A read is
        refused only to an actor without a role."""
        if not access.is_write(operation):
            return access.denial(self._actor.role, operation, request)
        if self._read_only:
            return self._read_only
        return access.denial(self._actor.role, operation, request)

    def check(self, operation: str, request: Any = None) -> None:
        reason = self.denial(operation, request)
        if reason:
            if not access.is_write(operation):
                raise read_refusal(operation, reason)
            raise refusal(operation, reason)

    # -- the wrapped operations ----------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if not callable(value) or name.startswith("_"):
            return value
        if name in DISPATCHERS:
            return self._dispatcher(value)
        if name == "write_guard":
            return self._guarded_context(value)
        if name == "open_dataset":
            return self._dataset_opener(value)
        if name in ROUTES or access.is_write(name):  # an unknown method counts as a write
            return self._operation(name, value)
        if name not in access.NO_DATA_OPS:  # the console's own reads (rows, locations ...)
            return self._read(name, value)
        return value

    def _with_user(self, request: Any) -> Any:
        """``request`` with the actor in its context (REST only; the caller's copy is kept)."""
        if not self._tell_server or request is None:
            return request
        if isinstance(request, dict):
            context = {**(request.get("context") or {}), USER_CONTEXT_KEY: self._actor.user}
            return {**request, "context": context}
        if hasattr(request, "model_copy") and "context" in type(request).model_fields:
            context = {**(request.context or {}), USER_CONTEXT_KEY: self._actor.user}
            return request.model_copy(update={"context": context})
        return request

    def _operation(self, operation: str, method: Callable[..., Any]) -> Callable[..., Any]:
        # ``wraps``: callers that look at the signature (does it take ``progress``?) see the
        # wrapped method's.
        @functools.wraps(method)
        def run(request: Any = None, *args: Any, **kwargs: Any) -> Any:
            sent = self._with_user(request)
            call_args = (sent, *args) if request is not None or args else ()
            if not access.is_write(operation):
                self.check(operation, request)  # refused only to an actor without a role
                return method(*call_args, **kwargs)
            with self.record(operation, request) as out:
                out["result"] = method(*call_args, **kwargs)
                return out["result"]

        return run

    def _read(self, operation: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def read(*args: Any, **kwargs: Any) -> Any:
            self.check(operation)
            return method(*args, **kwargs)

        return read

    def _dispatcher(self, method: Callable[..., Any]) -> Callable[..., Any]:
        def call(op: str, request: Any = None, *args: Any, **kwargs: Any) -> Any:
            sent = self._with_user(request)
            if not access.is_write(op):
                self.check(op, request)
                return method(op, sent, *args, **kwargs)
            with self.record(op, request) as out:
                out["result"] = method(op, sent, *args, **kwargs)
                return out["result"]

        return call

    def _dataset_opener(self, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def open_dataset(*args: Any, **kwargs: Any) -> Any:
            if not _IN_WRITE.get():
                self.check("open_dataset")
            dataset = method(*args, **kwargs)
            if _IN_WRITE.get():
                return dataset  # opened by a write the gate checked and records
            return _Guarded(dataset, DATASET_READS, "a write through the dataset")

        return open_dataset

    def _guarded_context(self, method: Callable[..., Any]) -> Callable[..., Any]:
        def guard(*table_ids: Sequence[str] | None) -> Any:
            self.check("write_guard")
            return method(*table_ids)

        return guard

    @contextlib.contextmanager
    def record(
        self, operation: str, request: Any = None, *, ids: Sequence[str] | None = None
    ) -> Iterator[dict[str, Any]]:
        """Check, run the body, and record one audit entry for ``operation`` (a refusal too);
        the body may put ``transaction_id`` (or ``result``) into the yielded dict."""
        outcome: dict[str, Any] = {}
        started = time.perf_counter()
        entry = audit.AuditEntry(
            user=self._actor.user,
            source=self._actor.source,
            connection=self._connection,
            operation=operation,
            ids=list(ids) if ids is not None else _ids(request),
            tables=audit.batch_tables(operation, request),
            request=request,
        )
        token = None
        try:
            self.check(operation, request)
            token = _IN_WRITE.set(True)
            yield outcome
        except BaseException as exc:
            entry.outcome = audit.FAILED
            entry.error_class = type(exc).__name__
            entry.error_message = str(getattr(exc, "server_message", None) or exc)
            raise
        finally:
            if token is not None:
                _IN_WRITE.reset(token)
            entry.duration_ms = round((time.perf_counter() - started) * 1000, 1)
            entry.transaction_id = outcome.get("transaction_id") or _txn_id(outcome.get("result"))
            if self._log is not None:
                with contextlib.suppress(OSError):  # a full disk must not fail the write itself
                    self._log.append(entry)

    def __repr__(self) -> str:
        return f"GatedNamespace({self._inner!r}, user={self._actor.user!r})"


def recorded(
    ns: Any, operation: str, request: Any = None, *, ids: Sequence[str] | None = None
) -> contextlib.AbstractContextManager[dict[str, Any]]:
    """For a service's write that bypasses the namespace's operations (an import writing
    through lance): checked and recorded by the gate when ``ns`` is gated, else just run."""
    if isinstance(ns, GatedNamespace):
        return ns.record(operation, request, ids=ids)
    return contextlib.nullcontext({})


def require_writable(ns: Any, operation: str) -> None:
    """For writes that bypass the namespace's methods (files written directly, such as a staged
    manifest): the gate's refusal, when ``ns`` is gated and may not write."""
    if isinstance(ns, GatedNamespace):
        ns.check(operation)


def gate(
    ns: Any,
    *,
    actor: Actor | None = None,
    connection: str = "",
    read_only: str | None = None,
    log: audit.AuditLog | None = None,
) -> GatedNamespace:
    """``ns`` behind the write gate (an already gated namespace is re-gated on its inner one)."""
    inner = ns.inner if isinstance(ns, GatedNamespace) else ns
    return GatedNamespace(
        inner,
        actor=actor or Actor.os_user(),
        connection=connection,
        read_only=read_only,
        log=log,
    )


__all__ = [
    "Actor",
    "GatedNamespace",
    "gate",
    "recorded",
    "read_refusal",
    "refusal",
    "require_writable",
    "unwrap",
]
