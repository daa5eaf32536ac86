"""Transaction records of batch commits, and DescribeTransaction / AlterTransaction on them.

A record (``backend.local.txn_store``) is written RUNNING when a batch begins; its flip to
SUCCEEDED, one atomic write, is the batch's commit point; a batch that did not reach it ends
FAILED with the reason. AlterTransaction follows ``backend.rules.alter_actions`` with the batch
policy: the properties the batch records are read-only, and the only status change is
RUNNING -> CANCELED, which makes a batch still before its commit point roll back.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import socket
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lance_namespace import (
    AlterTransactionRequest,
    AlterTransactionResponse,
    DescribeTransactionRequest,
    DescribeTransactionResponse,
)
from lance_namespace.errors import ErrorCode

from backend.rules import alter_actions as aa
from backend.rules import batch_rules

from .context import Ctx, error, oid
from .durable import fsync_path
from .plan import Plan

TXN_PREFIX = "batch-"
RECORD_KIND = "batch"
HISTORY_LIMIT = 50
_TXN_ID_RE = re.compile(r"^batch-[0-9a-f]{32}$")
# Properties the batch writes itself; AlterTransaction may not change or remove them.
SYSTEM_PROPERTIES: tuple[str, ...] = (
    "operation",
    "operation_count",
    *(f"{k}_count" for k in batch_rules.OPERATION_KINDS),
    "tables_touched",
    "tables",
    "namespaces",
    "committer",
    "started_at",
    "finished_at",
    "duration_ms",
    "reason",
    "recovered",
    "catalog_retries",
)


class Canceled(Exception):
    """The record left RUNNING before the commit point (AlterTransaction cancelled it)."""

    def __init__(self, status: str | None):
        super().__init__(f"transaction status changed to {status} before the commit point")
        self.status = status


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_txn_id() -> str:
    return f"{TXN_PREFIX}{uuid.uuid4().hex}"


def is_batch_transaction_id(parts: Sequence[str] | None) -> bool:
    """True for a one-part id this module issued (``batch-<32 hex digits>``)."""
    return (
        parts is not None
        and len(parts) == 1
        and isinstance(parts[0], str)
        and bool(_TXN_ID_RE.match(parts[0]))
    )


def base_record(plan: Plan, txn_id: str, started_at: str) -> dict[str, Any]:
    counts = dict.fromkeys(batch_rules.OPERATION_KINDS, 0)
    for op in plan.ops:
        counts[op.kind] += 1
    tables = list(dict.fromkeys(oid(op.table_id) for op in plan.ops))
    namespaces = sorted({oid(op.table_id[:-1]) for op in plan.ops if len(op.table_id) > 1})
    props = {
        "operation": "BatchCommitTables",
        "operation_count": str(len(plan.ops)),
        **{f"{k}_count": str(v) for k, v in counts.items()},
        "tables_touched": str(len(tables)),
        "tables": json.dumps(tables),
        "namespaces": json.dumps(namespaces),
        "committer": f"{socket.gethostname()}:{os.getpid()}",
        "started_at": started_at,
    }
    return {
        "kind": RECORD_KIND,
        "id": [txn_id],
        "status": aa.RUNNING,
        "properties": props,
        "readonly_properties": list(SYSTEM_PROPERTIES),
    }


def _finish_props(
    rec: dict[str, Any],
    reason: str | None,
    *,
    recovered: bool = False,
    extra: dict[str, str] | None = None,
) -> None:
    props = rec.setdefault("properties", {})
    props.update(extra or {})
    finished = now_iso()
    props["finished_at"] = finished
    started = props.get("started_at")
    if started:
        with contextlib.suppress(ValueError):
            t0 = datetime.fromisoformat(started.replace("Z", "+00:00"))
            t1 = datetime.fromisoformat(finished.replace("Z", "+00:00"))
            props["duration_ms"] = str(int((t1 - t0).total_seconds() * 1000))
    if reason:
        props["reason"] = reason
    if recovered:
        props["recovered"] = "true"


def fsync_store(ctx: Ctx) -> None:
    directory = getattr(ctx.store, "directory", None)
    if ctx.is_file and isinstance(directory, Path):
        fsync_path(directory, directory=True)


def catalog_retries_props(retries: int | None) -> dict[str, str] | None:
    """The record's ``catalog_retries`` (batches that commit the catalog only)."""
    return None if retries is None else {"catalog_retries": str(retries)}


def put_running(ctx: Ctx, txn_id: str, base: dict[str, Any]) -> None:
    ctx.store.put(txn_id, base)
    fsync_store(ctx)


def put_final(
    ctx: Ctx,
    txn_id: str,
    base: dict[str, Any],
    status: str,
    reason: str | None,
    *,
    recovered: bool = False,
    extra: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Write the record's terminal status, keeping properties AlterTransaction added;
    ``extra``: more properties of the batch's own (``catalog_retries``)."""

    def fn(rec: dict[str, Any] | None) -> dict[str, Any]:
        rec = rec or copy.deepcopy(base)
        current = aa.normalize_status(rec.get("status") or aa.RUNNING)
        rec["status"] = aa.CANCELED if current == aa.CANCELED else status
        _finish_props(rec, reason, recovered=recovered, extra=extra)
        return rec

    new = ctx.store.update(txn_id, fn)
    fsync_store(ctx)
    assert new is not None
    return new


def commit_point(ctx: Ctx, txn_id: str, extra: dict[str, str] | None = None) -> dict[str, Any]:
    """RUNNING -> SUCCEEDED in one atomic write; :class:`Canceled` if the status changed.
    ``extra``: more properties of the batch's own (``catalog_retries``)."""

    def fn(rec: dict[str, Any] | None) -> dict[str, Any]:
        status = aa.normalize_status((rec or {}).get("status") or "FAILED")
        if rec is None or status != aa.RUNNING:
            raise Canceled(status if rec is not None else None)
        rec["status"] = aa.SUCCEEDED
        _finish_props(rec, None, extra=extra)
        return rec

    new = ctx.store.update(txn_id, fn)
    fsync_store(ctx)
    assert new is not None
    return new


def record_status(ctx: Ctx, txn_id: str) -> str | None:
    rec = ctx.store.get(txn_id)
    return aa.normalize_status(rec["status"]) if rec and rec.get("status") else None


def _record(ctx: Ctx, txn_id: str) -> dict[str, Any]:
    rec = ctx.store.get(txn_id)
    if rec is None or rec.get("kind") != RECORD_KIND:
        raise error(ErrorCode.TRANSACTION_NOT_FOUND, f"Transaction not found: {txn_id}")
    return rec


def _props(rec: dict[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in (rec.get("properties") or {}).items()}


def describe(ctx: Ctx, request: DescribeTransactionRequest) -> DescribeTransactionResponse:
    rec = _record(ctx, (request.id or [""])[0])
    return DescribeTransactionResponse(
        status=aa.normalize_status(rec.get("status") or aa.RUNNING), properties=_props(rec)
    )


def alter(ctx: Ctx, request: AlterTransactionRequest) -> AlterTransactionResponse:
    """All actions or none, with the batch policy (module docstring)."""
    actions = aa.parse_actions(request.actions)
    txn_id = (request.id or [""])[0]

    def fn(rec: dict[str, Any] | None) -> dict[str, Any]:
        if rec is None or rec.get("kind") != RECORD_KIND:
            raise error(ErrorCode.TRANSACTION_NOT_FOUND, f"Transaction not found: {txn_id}")
        status, props, effective = aa.apply_actions(
            actions,
            rec.get("status") or aa.RUNNING,
            _props(rec),
            readonly=rec.get("readonly_properties") or SYSTEM_PROPERTIES,
            policy=aa.batch_policy,
            subject=f"batch {txn_id}",
        )
        history = list(rec.get("history") or [])[-(HISTORY_LIMIT - 1) :]
        history.append(
            {"at": int(time.time() * 1000), "actions": [a.describe() for a in effective]}
        )
        rec.update(status=status, properties=props, history=history)
        return rec

    new = ctx.store.update(txn_id, fn)
    fsync_store(ctx)
    assert new is not None
    return AlterTransactionResponse(
        status=aa.normalize_status(new["status"]), properties=_props(new)
    )
