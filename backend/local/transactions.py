"""DescribeTransaction and AlterTransaction on a local namespace.

Two kinds of transaction ids:

* ``batch-<hex>``: a batch commit of this namespace (``backend.local.batch.records``);
* a table id plus a transaction uuid or version (``["sales", "orders", "3"]``): pylance's own
  per-table transaction. AlterTransaction validates every action with ``backend.rules.alter_actions``
  (table policy; the properties Lance records are read-only), then sends the actions that change
  something, in the spec's JSON shape, to pylance's core, which persists them in
  ``<table>/_alter_transactions/<uuid>.json`` where pylance's REST adapter keeps them too.
  (pylance 14's Python wrapper sends snake_case keys and so drops every action.)

Statuses are reported upper-case (``SUCCEEDED``), as pylance reports them.
"""

from __future__ import annotations

import threading
from typing import Any

from lance_namespace import (
    AlterTransactionRequest,
    AlterTransactionResponse,
    DescribeTransactionRequest,
    DescribeTransactionResponse,
)
from lance_namespace.errors import ErrorCode, LanceNamespaceError

from backend.rules import alter_actions as aa

from ..errors import make, to_namespace_error
from .batch import context, is_batch_transaction_id, try_recover
from .batch import records as batch_records

# Properties pylance derives from the commit itself; its core refuses to change them too.
RESERVED_TXN_PROPERTIES: tuple[str, ...] = ("uuid", "version", "read_version", "operation")
_ALTER_LOCKS: dict[str, threading.Lock] = {}
_ALTER_LOCKS_GUARD = threading.Lock()


def _alter_lock(root: str) -> threading.Lock:
    with _ALTER_LOCKS_GUARD:
        return _ALTER_LOCKS.setdefault(root, threading.Lock())


def _batch_ctx(ns: Any, parts: list[str]) -> Any:
    if not is_batch_transaction_id(parts):
        return None
    try:
        ctx = context(ns, catalog_only=True)
    except LanceNamespaceError:
        return None
    try_recover(ctx)
    return ctx


def _describe_table_transaction(ns: Any, parts: list[str]) -> DescribeTransactionResponse:
    if len(parts) < 2:
        raise make(
            ErrorCode.TRANSACTION_NOT_FOUND,
            f"Transaction not found: {ns.format_id(parts)} (local table transactions are "
            "addressed as table id + transaction uuid or version)",
        )
    try:
        resp = ns._inner.describe_transaction(DescribeTransactionRequest(id=parts))
    except Exception as exc:  # pylance: bare exceptions for a missing table or version
        raise to_namespace_error(exc, "describe_transaction") from exc
    resp.status = aa.normalize_status(resp.status)
    return resp


def describe(ns: Any, request: DescribeTransactionRequest) -> DescribeTransactionResponse:
    parts = list(request.id or [])
    ctx = _batch_ctx(ns, parts)
    if ctx is not None:
        return batch_records.describe(ctx, request)
    return _describe_table_transaction(ns, parts)


def alter(ns: Any, request: AlterTransactionRequest) -> AlterTransactionResponse:
    """All actions or none; see the module docstring."""
    parts = list(request.id or [])
    ctx = _batch_ctx(ns, parts)
    if ctx is not None:
        return batch_records.alter(ctx, request)
    actions = aa.parse_actions(request.actions)
    core = getattr(ns._inner, "_inner", None)
    if core is None or not hasattr(core, "alter_transaction"):
        raise make(ErrorCode.UNSUPPORTED, "this pylance build cannot alter transactions")
    with _alter_lock(ns.root):
        current = _describe_table_transaction(ns, parts)
        props = dict(current.properties or {})
        _status, _props, effective = aa.apply_actions(
            actions,
            current.status or aa.SUCCEEDED,
            props,
            readonly=RESERVED_TXN_PROPERTIES,
            policy=aa.table_policy,
            subject=f"transaction {ns.format_id(parts)}",
        )
        if effective:
            try:
                core.alter_transaction({"id": parts, "actions": [a.to_wire() for a in effective]})
            except Exception as exc:
                raise to_namespace_error(exc, "alter_transaction") from exc
        after = _describe_table_transaction(ns, parts)
    return AlterTransactionResponse(status=after.status, properties=after.properties)
