"""Reading a namespace's transactions, for the Transactions page and notebooks (no streamlit):
describe one by its id (also given relative to a table), and list the batch commits the
namespace keeps records of (local and object-store roots; the spec has no list operation).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from lance_namespace import (
    DescribeTransactionRequest,
    DescribeTransactionResponse,
    LanceNamespace,
)
from lance_namespace.errors import (
    ErrorCode,
    InvalidInputError,
    LanceNamespaceError,
    TransactionNotFoundError,
)

from backend.rules import alter_actions, ids
from backend.services.batch_builder import NO_LIST_OPERATION
from backend.spec.fields import whole_number

from ..errors import make


def parse_transaction_id(text: str, delimiter: str = "$") -> list[str]:
    """``"sales$orders$<uuid>"`` -> ``["sales", "orders", "<uuid>"]``."""
    return ids.parse_id(text, delimiter, "transaction")


def describe_transaction(
    ns: LanceNamespace, transaction_id: Sequence[str]
) -> DescribeTransactionResponse:
    return ns.describe_transaction(DescribeTransactionRequest(id=list(transaction_id)))


def describe_transaction_in(
    ns: LanceNamespace,
    transaction_id: Sequence[str],
    table_id: Sequence[str] | None = None,
    *,
    delimiter: str = "$",
) -> tuple[list[str], DescribeTransactionResponse]:
    """DescribeTransaction of ``transaction_id`` as given, and the id it was found under.

    A bare id (one part, e.g. the uuid an index build answers with, as the console shows it)
    that the backend does not know on its own (a batch id it does) is looked up among the
    transactions of ``table_id``, the table in context: ``[*table_id, id]``. Without a table
    in context the refusal says how to write the full id."""
    parts = list(transaction_id)
    try:
        return parts, describe_transaction(ns, parts)
    except (TransactionNotFoundError, InvalidInputError) as err:
        if len(parts) != 1:
            raise
        if not table_id:
            raise make(
                ErrorCode.TRANSACTION_NOT_FOUND,
                f"{parts[0]} is a bare transaction id and no table is picked to look it up in: "
                f"pick its table, or write it as namespace › table › {parts[0]}. "
                f"({err})",
            ) from None
        full = [*table_id, parts[0]]
        try:
            return full, describe_transaction(ns, full)
        except (TransactionNotFoundError, InvalidInputError) as again:
            raise make(
                ErrorCode.TRANSACTION_NOT_FOUND,
                f"Transaction {parts[0]} not found, neither on its own nor in the table "
                f"{ids.display_id(list(table_id))}: {again}",
            ) from None


BATCH_TRANSACTION_COLUMNS = [
    "transaction", "status", "started", "duration_ms", "operations", "tables", "reason",
]  # fmt: skip


@dataclass(frozen=True)
class BatchTransaction:
    """One batch commit of the namespace, from the record the local backend keeps of it
    (``backend.local.batch.records``): its id, status, when it started and finished (ISO
    8601, UTC), its operation count, the tables it touched and, for a batch that did not
    commit, why."""

    id: str
    status: str
    started_at: str | None
    finished_at: str | None
    duration_ms: int | None
    operations: int
    tables: list[list[str]]
    reason: str | None = None


def _properties(record: dict[str, Any]) -> dict[str, str]:
    """A record's properties as texts (none where the record's are not a mapping)."""
    props = record.get("properties")
    return {str(k): str(v) for k, v in props.items()} if isinstance(props, dict) else {}


def _batch_transaction(record: dict[str, Any]) -> BatchTransaction:
    props = _properties(record)
    try:
        tables = [ids.parse_object_id(t) for t in json.loads(props.get("tables") or "[]")]
    except (ValueError, TypeError, AttributeError):
        tables = []
    return BatchTransaction(
        id=str(record["txn_id"]),
        status=alter_actions.normalize_status(record.get("status") or alter_actions.RUNNING),
        started_at=props.get("started_at"),
        finished_at=props.get("finished_at"),
        duration_ms=whole_number(props.get("duration_ms")),
        operations=whole_number(props.get("operation_count")) or 0,
        tables=tables,
        reason=props.get("reason"),
    )


def list_batch_transactions(ns: LanceNamespace) -> list[BatchTransaction]:
    """Every batch commit of the namespace, newest first: the records the local backend
    keeps under its root (``<root>/_console/transactions/``, on local and object-store roots
    alike). Over REST: ``UnsupportedOperationError`` saying the spec has no list operation."""
    from ..local.batch.records import RECORD_KIND
    from ..local.txn_store import TxnStore

    store = getattr(ns, "txn_store", None)
    if not isinstance(store, TxnStore):
        raise make(ErrorCode.UNSUPPORTED, NO_LIST_OPERATION)
    records = [r for r in store.list() if r.get("kind") == RECORD_KIND]
    records.sort(
        key=lambda r: (
            _properties(r).get("started_at") or "",
            whole_number(r.get("updated_at")) or 0,
            str(r["txn_id"]),
        ),
        reverse=True,
    )
    out = []
    for record in records:
        try:
            out.append(_batch_transaction(record))
        except LanceNamespaceError:  # a status no batch has (a damaged record): left out
            continue
    return out


def batch_transactions_frame(items: Sequence[BatchTransaction]) -> pd.DataFrame:
    """The batch commits as the page lists them: one row each, tables shown as ``a › b``."""
    rows = [
        {
            "transaction": t.id,
            "status": t.status,
            "started": t.started_at,
            "duration_ms": t.duration_ms,
            "operations": t.operations,
            "tables": ", ".join(ids.display_id(tid) for tid in t.tables),
            "reason": t.reason,
        }
        for t in items
    ]
    frame = pd.DataFrame(rows, columns=BATCH_TRANSACTION_COLUMNS)
    frame["duration_ms"] = frame["duration_ms"].astype("Int64")
    return frame


def properties_frame(props: dict[str, str] | None) -> pd.DataFrame:
    return pd.DataFrame(sorted((props or {}).items()), columns=["key", "value"])
