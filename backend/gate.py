"""The one gate on the write path: read-only launches, roles and the audit log.

:class:`GatedNamespace` wraps a connected namespace (either backend) for one actor. Every
operation goes through it; a write is

1. refused when the gate is read-only (``PermissionDeniedError`` naming why),
2. refused when the actor's role may not run it (``backend.access``, the one classification),
3. refused when the request breaks a static rule (``rules.request_rules``, the check both
   backends make on entry: the same ``InvalidInputError``),
4. run, timed and recorded in the audit log (``backend.audit``), whether it succeeds or fails;
   the entry names the actor's role, the target and the connection, the object the write
   addresses, or every table a batch touches with the kinds of its operations
   (``audit.batch_tables``).

A refusal is recorded too, with outcome ``refused`` and the reason. A long write (an index
build, maintenance, an import: :data:`LONG_OPS`, and every write of a background task, inside
:func:`long_operations`) first writes a ``started`` entry, durable before the work begins; its
final entry has the same ``op_id``, so a process killed midway leaves a ``started`` entry with
no end. A refusal decided outside the gate (a batch's preflight) is recorded with
:func:`record_refusal`.

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
import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from lance_namespace.errors import ErrorCode, InvalidInputError, LanceNamespaceError

from . import access, audit
from .branch_view import unbranched
from .errors import make
from .rules import ids as id_rules
from .rules import request_rules
from .spec.operations import OPERATIONS

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
# Writes that may run for minutes: each writes a ``started`` entry before it begins.
LONG_OPS: frozenset[str] = frozenset(
    {
        "create_table_index",
        "create_table_scalar_index",
        "optimize_indexes",
        "compact_files",
        "cleanup_old_versions",
        "import_table",
    }
)
_LONG: contextvars.ContextVar[bool] = contextvars.ContextVar("gate_long", default=False)


@contextlib.contextmanager
def long_operations() -> Iterator[None]:
    """Every write recorded inside (in this thread or task: a context variable) is a long
    one: a ``started`` entry first (background tasks run their work inside)."""
    token = _LONG.set(True)
    try:
        yield
    finally:
        _LONG.reset(token)


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
_LOG = logging.getLogger(__name__)
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


def static_problem(operation: str, request: Any, delimiter: str) -> str | None:
    """Why ``request`` breaks a static rule of the spec operation ``operation``
    (``rules.request_rules``, as the backends check it on entry); ``None`` when it does not,
    or when the request is not one the rules read (the backend then judges it)."""
    spec_op = OPERATIONS.get(operation)
    if spec_op is None or request is None:
        return None
    model: Any = request
    if not isinstance(request, spec_op.request):
        try:
            if isinstance(request, dict):
                model = spec_op.request.from_dict(dict(request))  # type: ignore[attr-defined]
            elif hasattr(request, "model_dump"):
                model = spec_op.request.from_dict(  # type: ignore[attr-defined]
                    request.model_dump(by_alias=True, exclude_none=True)
                )
            else:
                return None
        except Exception:  # noqa: BLE001 - not a request the rules read: the backend judges
            return None
        if model is None:
            return None
    try:
        return request_rules.request_problem(operation, model, delimiter=delimiter)
    except Exception:  # noqa: BLE001 - a half-built model (model_construct): the backend judges
        return None


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
        target: str | None = None,
        read_only: str | None = None,
        log: audit.AuditLog | None = None,
    ) -> None:
        self._inner = inner
        self._actor = actor
        if target is None:  # the REST client's URL, the local backend's root
            found = getattr(inner, "uri", None) or getattr(inner, "root", None)
            target = str(found) if isinstance(found, str) else ""
        self._target = audit.mask_target(target)
        self._connection = connection or audit.target_name(target)
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
    def connection(self) -> str:
        """The connection's name the entries record."""
        return self._connection

    @property
    def target(self) -> str:
        """The namespace root or server URL the entries record (credentials masked)."""
        return self._target

    @property
    def audit_log(self) -> audit.AuditLog | None:
        """The log this gate records into (``None``: none), read by the change log."""
        return self._log

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
        if name in ("open_dataset", "branch_dataset"):  # a dataset that reads, never writes
            return self._dataset_opener(value)
        if name in OPERATIONS or access.is_write(name):  # an unknown method counts as a write
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
            if kwargs.get("branch"):  # the console's own write on a branch (optimize ...)
                request = {"id": _ids(request), "branch": kwargs["branch"]}
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

    def _delimiter(self) -> str:
        return str(getattr(self._inner, "delimiter", None) or id_rules.DEFAULT_DELIMITER)

    def _entry(self, operation: str, request: Any, ids: Sequence[str] | None) -> audit.AuditEntry:
        return audit.AuditEntry(
            user=self._actor.user,
            role=self._actor.role,
            source=self._actor.source,
            connection=self._connection,
            target=self._target,
            operation=operation,
            ids=list(ids) if ids is not None else _ids(request),
            tables=audit.batch_tables(operation, request),
            request=request,
            op_id=audit.new_op_id(),
        )

    def _append(self, entry: audit.AuditEntry) -> None:
        if self._log is not None:
            try:
                self._log.append(entry)
            except OSError as e:  # a full disk must not fail the write itself: said in the log
                _LOG.warning(
                    "audit entry of %s not recorded in %s: %s",
                    entry.operation,
                    self._log.directory,
                    e.strerror or type(e).__name__,
                )

    @contextlib.contextmanager
    def record(
        self,
        operation: str,
        request: Any = None,
        *,
        ids: Sequence[str] | None = None,
        long: bool | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Check, run the body, and record one audit entry for ``operation`` (a refusal too,
        outcome ``refused``); the body may put ``transaction_id`` (or ``result``) into the
        yielded dict. A long write (``long``; default: :data:`LONG_OPS` or inside
        :func:`long_operations`) first records a ``started`` entry with the same ``op_id``."""
        outcome: dict[str, Any] = {}
        started = time.perf_counter()
        entry = self._entry(operation, request, ids)
        token = None
        checked = False
        try:
            self.check(operation, request)
            problem = static_problem(operation, request, self._delimiter())
            if problem:
                raise InvalidInputError(f"{operation}: {problem}")
            checked = True
            if long if long is not None else (operation in LONG_OPS or _LONG.get()):
                self._append(dataclasses.replace(entry, outcome=audit.STARTED))
            token = _IN_WRITE.set(True)
            yield outcome
        except BaseException as exc:
            entry.outcome = audit.FAILED if checked else audit.REFUSED
            entry.error_class = type(exc).__name__
            entry.error_message = str(getattr(exc, "server_message", None) or exc)
            raise
        finally:
            if token is not None:
                _IN_WRITE.reset(token)
            entry.duration_ms = round((time.perf_counter() - started) * 1000, 1)
            entry.transaction_id = outcome.get("transaction_id") or _txn_id(outcome.get("result"))
            self._append(entry)

    def refuse(
        self,
        operation: str,
        request: Any,
        reason: str,
        *,
        ids: Sequence[str] | None = None,
        error_class: str = "Refused",
    ) -> None:
        """Record that ``operation`` was refused before anything was sent (a batch's
        preflight found a problem), with the reason."""
        entry = self._entry(operation, request, ids)
        entry.outcome = audit.REFUSED
        entry.error_class = error_class
        entry.error_message = reason
        entry.duration_ms = 0.0
        self._append(entry)

    def __repr__(self) -> str:
        return f"GatedNamespace({self._inner!r}, user={self._actor.user!r})"


def recorded(
    ns: Any,
    operation: str,
    request: Any = None,
    *,
    ids: Sequence[str] | None = None,
    long: bool | None = None,
) -> contextlib.AbstractContextManager[dict[str, Any]]:
    """For a service's write that bypasses the namespace's operations (an import writing
    through lance): checked and recorded by the gate when ``ns`` is gated (a branch view of
    a gated namespace too: ``backend.branch_view``), else just run."""
    ns = unbranched(ns)
    if isinstance(ns, GatedNamespace):
        return ns.record(operation, request, ids=ids, long=long)
    return contextlib.nullcontext({})


def record_refusal(
    ns: Any,
    operation: str,
    request: Any,
    reason: str | BaseException,
    *,
    ids: Sequence[str] | None = None,
) -> None:
    """Record a refusal decided outside the gate (a batch's preflight, a service's own
    checks) when ``ns`` is gated: outcome ``refused``, the reason (an error's class and
    message); nothing otherwise."""
    ns = unbranched(ns)
    if not isinstance(ns, GatedNamespace):
        return
    if isinstance(reason, BaseException):
        text = str(getattr(reason, "server_message", None) or reason)
        ns.refuse(operation, request, text, ids=ids, error_class=type(reason).__name__)
    else:
        ns.refuse(operation, request, reason, ids=ids)


@contextlib.contextmanager
def refusals(
    ns: Any, operation: str, request: Any = None, *, ids: Sequence[str] | None = None
) -> Iterator[None]:
    """The checks a service makes before a write it performs itself (an import, a row
    delete): a ``LanceNamespaceError`` raised inside is recorded as a refusal of
    ``operation`` (nothing was written yet), then raised."""
    try:
        yield
    except LanceNamespaceError as err:
        record_refusal(ns, operation, request, err, ids=ids)
        raise


def require_writable(ns: Any, operation: str) -> None:
    """For writes that bypass the namespace's methods (files written directly, such as a staged
    manifest): the gate's refusal, when ``ns`` is gated and may not write."""
    ns = unbranched(ns)
    if isinstance(ns, GatedNamespace):
        ns.check(operation)


def gate(
    ns: Any,
    *,
    actor: Actor | None = None,
    connection: str = "",
    target: str | None = None,
    read_only: str | None = None,
    log: audit.AuditLog | None = None,
) -> GatedNamespace:
    """``ns`` behind the write gate (an already gated namespace is re-gated on its inner one).
    ``target``: the namespace root or server URL the entries name (default: the backend's
    own); ``connection``: the connection's name (default: one derived from the target)."""
    inner = ns.inner if isinstance(ns, GatedNamespace) else ns
    return GatedNamespace(
        inner,
        actor=actor or Actor.os_user(),
        connection=connection,
        target=target,
        read_only=read_only,
        log=log,
    )
