"""Batch-commit builder and transaction helpers (no streamlit).

Builder operations are plain JSON-friendly dicts (they live in the UI's session state)::

    {"kind": "declare_table", "id": ["sales", "t"], "location": None, "properties": {...}}
    {"kind": "create_table_version", "id": [...], "version": 4, "manifest_path": "...",
     "manifest_size": 503, "e_tag": None, "metadata": None, "naming_scheme": None}
    {"kind": "delete_table_versions", "id": [...], "ranges": [[1, 3]]}
    {"kind": "deregister_table", "id": [...]}

* :func:`validate` checks a list against the current namespace before anything is sent;
* :func:`to_request` / :func:`request_json` give the BatchCommitTablesRequest and its wire JSON;
* :func:`commit` sends it (``ns.batch_commit_tables``); :func:`results_frame` pairs results with
  operations;
* :func:`parse_transaction_id`, :func:`build_alter_request`, :func:`validate_alter_actions` for
  DescribeTransaction / AlterTransaction;
* :func:`stage_next_version` (local backend only) stages a real manifest for version latest+1.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pandas as pd
from lance_namespace import (
    AlterTransactionRequest,
    AlterTransactionResponse,
    BatchCommitTablesRequest,
    BatchCommitTablesResponse,
    BatchDeleteTableVersionsRequest,
    CommitTableOperation,
    CreateTableVersionRequest,
    DeclareTableRequest,
    DeregisterTableRequest,
    DescribeTableRequest,
    DescribeTransactionRequest,
    DescribeTransactionResponse,
    LanceNamespace,
    ListTableVersionsRequest,
    NamespaceExistsRequest,
    TableExistsRequest,
)
from lance_namespace.errors import (
    LanceNamespaceError,
    NamespaceNotFoundError,
    TableNotFoundError,
    UnsupportedOperationError,
)
from lance_namespace_urllib3_client.models import (
    AlterTransactionAction,
    AlterTransactionSetProperty,
    AlterTransactionSetStatus,
    AlterTransactionUnsetProperty,
    VersionRange,
)

# --------------------------------------------------------------------------------------------
# Operations
# --------------------------------------------------------------------------------------------

DECLARE = "declare_table"
CREATE_VERSION = "create_table_version"
DELETE_VERSIONS = "delete_table_versions"
DEREGISTER = "deregister_table"
OPERATION_KINDS: tuple[str, ...] = (DECLARE, CREATE_VERSION, DELETE_VERSIONS, DEREGISTER)
OPERATION_LABELS: dict[str, str] = {
    DECLARE: "DeclareTable",
    CREATE_VERSION: "CreateTableVersion",
    DELETE_VERSIONS: "DeleteTableVersions",
    DEREGISTER: "DeregisterTable",
}
_FIELDS: dict[str, tuple[str, ...]] = {
    DECLARE: ("id", "location", "properties"),
    CREATE_VERSION: (
        "id",
        "version",
        "manifest_path",
        "manifest_size",
        "e_tag",
        "metadata",
        "naming_scheme",
    ),
    DELETE_VERSIONS: ("id", "ranges"),
    DEREGISTER: ("id",),
}
NAMING_SCHEMES: tuple[str, ...] = ("V1", "V2")


def _clean(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None and v != {} and v != ""}


def _table_id(table_id: Sequence[str]) -> list[str]:
    parts = [str(p) for p in table_id]
    if not parts or any(not p.strip() for p in parts):
        raise ValueError(f"invalid table id {list(table_id)!r}: empty part")
    return parts


def declare_op(
    table_id: Sequence[str],
    *,
    location: str | None = None,
    properties: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A DeclareTable operation."""
    return {
        "kind": DECLARE,
        **_clean(
            {"id": _table_id(table_id), "location": location, "properties": properties or None}
        ),
    }


def create_version_op(
    table_id: Sequence[str],
    version: int,
    manifest_path: str,
    *,
    manifest_size: int | None = None,
    e_tag: str | None = None,
    metadata: dict[str, str] | None = None,
    naming_scheme: str | None = None,
) -> dict[str, Any]:
    """A CreateTableVersion operation (``manifest_path`` is the staged manifest)."""
    return {
        "kind": CREATE_VERSION,
        **_clean(
            {
                "id": _table_id(table_id),
                "version": int(version),
                "manifest_path": manifest_path,
                "manifest_size": manifest_size,
                "e_tag": e_tag,
                "metadata": metadata or None,
                "naming_scheme": naming_scheme,
            }
        ),
    }


def delete_versions_op(
    table_id: Sequence[str], ranges: Iterable[tuple[int, int] | Sequence[int]]
) -> dict[str, Any]:
    """A DeleteTableVersions operation; each range is ``(start inclusive, end exclusive)``,
    ``end = -1`` meaning "through the latest version"."""
    return {
        "kind": DELETE_VERSIONS,
        "id": _table_id(table_id),
        "ranges": [[int(r[0]), int(r[1])] for r in ranges],
    }


def deregister_op(table_id: Sequence[str]) -> dict[str, Any]:
    """A DeregisterTable operation."""
    return {"kind": DEREGISTER, "id": _table_id(table_id)}


def move(operations: Sequence[dict], index: int, delta: int) -> list[dict]:
    """A copy with the operation at ``index`` moved by ``delta`` (-1 up, +1 down); clamped."""
    ops = list(operations)
    if not 0 <= index < len(ops):
        return ops
    target = max(0, min(len(ops) - 1, index + delta))
    op = ops.pop(index)
    ops.insert(target, op)
    return ops


def remove(operations: Sequence[dict], index: int) -> list[dict]:
    """A copy without the operation at ``index``."""
    return [op for i, op in enumerate(operations) if i != index]


def parse_ranges(text: str) -> list[tuple[int, int]]:
    """``"1:3, 5:-1"`` -> ``[(1, 3), (5, -1)]``: spec ranges, start inclusive, end exclusive,
    ``-1`` = through the latest version. Only the syntax is checked here (``ValueError``);
    whether a range makes sense is :func:`validate`'s job."""
    out: list[tuple[int, int]] = []
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        pieces = part.split(":")
        if len(pieces) != 2:
            raise ValueError(f"{part!r}: write a range as start:end (e.g. 1:3).")
        try:
            out.append((int(pieces[0]), int(pieces[1])))
        except ValueError:
            raise ValueError(f"{part!r}: start and end must be integers.") from None
    if not out:
        raise ValueError("Enter at least one range, e.g. 1:3 (end exclusive; -1 = latest).")
    return out


def parse_properties(text: str) -> dict[str, str]:
    """``key=value`` lines -> dict (blank lines ignored); ``ValueError`` on a line without
    ``=`` or with an empty key, or a key given twice."""
    out: dict[str, str] = {}
    for n, line in enumerate((text or "").splitlines(), start=1):
        if not line.strip():
            continue
        if "=" not in line:
            raise ValueError(f"Line {n}: write key=value.")
        key, value = line.split("=", 1)
        key = key.strip()
        if not key:
            raise ValueError(f"Line {n}: the key is empty.")
        if key in out:
            raise ValueError(f"Line {n}: key {key!r} given twice.")
        out[key] = value.strip()
    return out


def table_key(table_id: Sequence[str], delimiter: str = "$") -> str:
    return delimiter.join(table_id)


def describe_operation(op: dict[str, Any], delimiter: str = "$") -> str:
    """One line, e.g. ``CreateTableVersion sales$orders -> v4 (manifest .../x.manifest)``."""
    kind = op.get("kind")
    label = OPERATION_LABELS.get(kind, str(kind))
    name = table_key(op.get("id") or [], delimiter)
    if kind == DECLARE:
        extra = []
        if op.get("location"):
            extra.append(f"at {op['location']}")
        if op.get("properties"):
            extra.append(f"{len(op['properties'])} properties")
        return f"{label} {name}" + (f" ({', '.join(extra)})" if extra else "")
    if kind == CREATE_VERSION:
        return f"{label} {name} -> v{op.get('version')} (manifest {op.get('manifest_path')})"
    if kind == DELETE_VERSIONS:
        ranges = ", ".join(_range_text(r) for r in op.get("ranges") or [])
        return f"{label} {name}: {ranges or 'no ranges'}"
    return f"{label} {name}"


def _range_text(r: Sequence[int]) -> str:
    start, end = int(r[0]), int(r[1])
    if end == -1:
        return f"[{start}, latest]"
    return f"[{start}, {end})"


def operations_frame(operations: Sequence[dict], delimiter: str = "$") -> pd.DataFrame:
    """The builder's list as a table: position, operation, table, summary."""
    rows = [
        {
            "#": i + 1,
            "operation": OPERATION_LABELS.get(op.get("kind"), op.get("kind")),
            "table": table_key(op.get("id") or [], delimiter),
            "summary": describe_operation(op, delimiter),
        }
        for i, op in enumerate(operations)
    ]
    return pd.DataFrame(rows, columns=["#", "operation", "table", "summary"])


# --------------------------------------------------------------------------------------------
# Request
# --------------------------------------------------------------------------------------------


def to_operation(op: dict[str, Any]) -> CommitTableOperation:
    """One builder dict as a CommitTableOperation (exactly one field set)."""
    kind = op.get("kind")
    if kind not in OPERATION_KINDS:
        raise ValueError(f"unknown operation kind {kind!r}")
    fields = {k: op[k] for k in _FIELDS[kind] if op.get(k) is not None}
    if kind == DECLARE:
        return CommitTableOperation(declare_table=DeclareTableRequest(**fields))
    if kind == CREATE_VERSION:
        return CommitTableOperation(create_table_version=CreateTableVersionRequest(**fields))
    if kind == DELETE_VERSIONS:
        fields["ranges"] = [
            VersionRange(start_version=int(r[0]), end_version=int(r[1]))
            for r in fields.get("ranges") or []
        ]
        return CommitTableOperation(delete_table_versions=BatchDeleteTableVersionsRequest(**fields))
    return CommitTableOperation(deregister_table=DeregisterTableRequest(**fields))


def to_request(operations: Sequence[dict]) -> BatchCommitTablesRequest:
    """The BatchCommitTablesRequest for the builder's operations, in order."""
    return BatchCommitTablesRequest(operations=[to_operation(op) for op in operations])


def request_dict(request: BatchCommitTablesRequest) -> dict[str, Any]:
    """The request as the JSON object sent on the wire (aliases, no nulls)."""
    return request.model_dump(mode="json", by_alias=True, exclude_none=True)


def request_json(request: BatchCommitTablesRequest, *, indent: int | None = 2) -> str:
    """The request body as JSON text (see :func:`request_dict`)."""
    return json.dumps(request_dict(request), indent=indent)


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """Something wrong with the operation at ``index`` (``None``: the whole batch)."""

    index: int | None
    message: str
    severity: str = "error"  # "error" blocks the commit; "warning" does not

    def __str__(self) -> str:
        where = "batch" if self.index is None else f"#{self.index + 1}"
        return f"{where}: {self.message}"


def has_errors(problems: Iterable[Problem]) -> bool:
    return any(p.severity == "error" for p in problems)


class _NamespaceView:
    """Cached existence / version answers for one validation run."""

    def __init__(self, ns: LanceNamespace):
        self.ns = ns
        self._ns_exists: dict[tuple[str, ...], bool] = {}
        self._tbl_exists: dict[tuple[str, ...], bool] = {}
        self._versions: dict[tuple[str, ...], list[int]] = {}

    def namespace_exists(self, path: Sequence[str]) -> bool:
        key = tuple(path)
        if not key:
            return True
        if key not in self._ns_exists:
            try:
                resp = self.ns.namespace_exists(NamespaceExistsRequest(id=list(key)))
                self._ns_exists[key] = resp is not False
            except NamespaceNotFoundError:
                self._ns_exists[key] = False
        return self._ns_exists[key]

    def table_exists(self, table_id: Sequence[str]) -> bool:
        key = tuple(table_id)
        if key not in self._tbl_exists:
            try:
                resp = self.ns.table_exists(TableExistsRequest(id=list(key)))
                self._tbl_exists[key] = resp is not False
            except (TableNotFoundError, NamespaceNotFoundError):
                self._tbl_exists[key] = False
        return self._tbl_exists[key]

    def versions(self, table_id: Sequence[str]) -> list[int]:
        """Existing version numbers (empty for a declared-only table)."""
        from .paging import list_all

        key = tuple(table_id)
        if key not in self._versions:
            try:
                items = list_all(
                    self.ns.list_table_versions,
                    ListTableVersionsRequest(id=list(key)),
                    field="versions",
                )
                self._versions[key] = sorted(
                    int(v["version"] if isinstance(v, dict) else v.version) for v in items
                )
            except (TableNotFoundError, NamespaceNotFoundError):
                self._versions[key] = []
        return self._versions[key]


def latest_version(ns: LanceNamespace, table_id: Sequence[str]) -> int:
    """The table's latest version number (0 for a declared-only table without versions)."""
    return max(_NamespaceView(ns).versions(table_id), default=0)


def validate(ns: LanceNamespace, operations: Sequence[dict]) -> list[Problem]:
    """Everything wrong with the batch against the namespace as it is now.

    Operations are checked in order, each seeing the effect of the ones before it (a version
    created by an earlier operation is the next one's "latest"). Errors: missing namespaces or
    tables, declaring an existing table, versions that are not latest+1, the same version twice,
    empty or inverted ranges, ranges covering the latest version, a table both declared and
    deregistered, anything after a deregistration of the same table, a table deregistered twice.
    Warnings: ranges that match no existing version, overlapping ranges.
    Namespace errors other than "not found" propagate (the UI shows them readably).
    """
    problems: list[Problem] = []
    if not operations:
        return [Problem(None, "The batch is empty: add at least one operation.")]
    view = _NamespaceView(ns)
    declared: dict[tuple[str, ...], int] = {}
    deregistered: dict[tuple[str, ...], int] = {}
    created: dict[tuple[str, ...], dict[int, int]] = {}
    latest: dict[tuple[str, ...], int] = {}

    def current_latest(key: tuple[str, ...]) -> int:
        if key not in latest:
            existing = view.versions(key) if view.table_exists(key) else []
            latest[key] = max(existing) if existing else 0
        return latest[key]

    for i, op in enumerate(operations):
        kind = op.get("kind")
        if kind not in OPERATION_KINDS:
            problems.append(Problem(i, f"Unknown operation kind {kind!r}."))
            continue
        tid = op.get("id") or []
        if not tid or any(not str(p).strip() for p in tid):
            problems.append(Problem(i, "The table id is empty or has an empty part."))
            continue
        key = tuple(str(p) for p in tid)
        name = "$".join(key)
        parent = key[:-1]
        if not view.namespace_exists(parent):
            problems.append(Problem(i, f"Namespace {'$'.join(parent)!r} does not exist."))
            continue
        if key in deregistered and kind != DECLARE:
            problems.append(
                Problem(
                    i,
                    f"{name} is deregistered by operation #{deregistered[key] + 1}; "
                    "nothing can follow on that table in the same batch.",
                )
            )
            continue
        exists = view.table_exists(key) or key in declared

        if kind == DECLARE:
            if key in declared:
                problems.append(
                    Problem(i, f"{name} is already declared by operation #{declared[key] + 1}.")
                )
            elif view.table_exists(key):
                problems.append(Problem(i, f"Table {name} already exists: it cannot be declared."))
            if key in deregistered:
                problems.append(
                    Problem(
                        i,
                        f"Contradiction: {name} is deregistered by operation "
                        f"#{deregistered[key] + 1} and declared here.",
                    )
                )
            if not view.table_exists(key):
                declared.setdefault(key, i)
                latest.setdefault(key, 0)
            continue

        if not exists:
            problems.append(Problem(i, f"Table {name} does not exist."))
            continue

        if kind == CREATE_VERSION:
            problems += _check_create(i, op, key, name, current_latest(key), created)
            version = op.get("version")
            if isinstance(version, int) and version == current_latest(key) + 1:
                latest[key] = version
        elif kind == DELETE_VERSIONS:
            existing = set(view.versions(key)) | set(created.get(key, {}))
            problems += _check_delete(i, op, name, current_latest(key), existing)
        elif kind == DEREGISTER:
            if key in declared:
                problems.append(
                    Problem(
                        i,
                        f"Contradiction: {name} is declared by operation #{declared[key] + 1} "
                        "and deregistered here.",
                    )
                )
            deregistered[key] = i
    return problems


def _check_create(
    i: int,
    op: dict[str, Any],
    key: tuple[str, ...],
    name: str,
    latest: int,
    created: dict[tuple[str, ...], dict[int, int]],
) -> list[Problem]:
    problems: list[Problem] = []
    version = op.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        return [Problem(i, f"Version must be a positive integer (got {version!r}).")]
    seen = created.setdefault(key, {})
    if version in seen:
        problems.append(
            Problem(
                i,
                f"Duplicate: version {version} of {name} is also created by #{seen[version] + 1}.",
            )
        )
    elif version != latest + 1:
        problems.append(
            Problem(
                i,
                f"Version {version} of {name} is not the next version: the latest is {latest}, "
                f"so the next is {latest + 1}.",
            )
        )
    seen.setdefault(version, i)
    if not str(op.get("manifest_path") or "").strip():
        problems.append(Problem(i, "The staged manifest path is empty."))
    size = op.get("manifest_size")
    if size is not None and (not isinstance(size, int) or size < 0):
        problems.append(Problem(i, f"Manifest size must be a non-negative integer (got {size!r})."))
    scheme = op.get("naming_scheme")
    if scheme is not None and scheme not in NAMING_SCHEMES:
        problems.append(Problem(i, f"Naming scheme must be one of {', '.join(NAMING_SCHEMES)}."))
    return problems


def _check_delete(
    i: int, op: dict[str, Any], name: str, latest: int, existing: set[int]
) -> list[Problem]:
    problems: list[Problem] = []
    ranges = op.get("ranges") or []
    if not ranges:
        return [Problem(i, "No version ranges to delete.")]
    spans: list[tuple[int, int]] = []
    for r in ranges:
        start, end = int(r[0]), int(r[1])
        text = _range_text((start, end))
        if start < 0:
            problems.append(Problem(i, f"Range {text}: the start cannot be negative."))
            continue
        if end == -1 or (start <= latest < end):
            problems.append(
                Problem(
                    i,
                    f"Range {text} covers the latest version ({latest}) of {name}: "
                    "the latest version cannot be deleted.",
                )
            )
            continue
        if end < -1 or end <= start:
            problems.append(Problem(i, f"Range {text} is empty or inverted (end is exclusive)."))
            continue
        if not any(start <= v < end for v in existing):
            problems.append(
                Problem(i, f"Range {text} matches no existing version of {name}.", "warning")
            )
        for s, e in spans:
            if start < e and s < end:
                problems.append(
                    Problem(
                        i,
                        f"Range {text} overlaps {_range_text((s, e))} in the same operation.",
                        "warning",
                    )
                )
        spans.append((start, end))
    return problems


# --------------------------------------------------------------------------------------------
# Commit and results
# --------------------------------------------------------------------------------------------


def commit(ns: LanceNamespace, operations: Sequence[dict]) -> BatchCommitTablesResponse:
    """Send the batch atomically (``ns.batch_commit_tables``)."""
    return ns.batch_commit_tables(to_request(operations))


def _result_summary(kind: str | None, result: Any) -> str:
    if result is None:
        return "no result"
    if kind == CREATE_VERSION and result.create_table_version is not None:
        v = result.create_table_version.version
        return f"version {v.version} created" if v is not None else "version created"
    if kind == DELETE_VERSIONS and result.delete_table_versions is not None:
        n = result.delete_table_versions.deleted_count
        return f"{n} versions deleted" if n is not None else "versions deleted"
    if kind == DECLARE and result.declare_table is not None:
        loc = result.declare_table.location
        return f"declared at {loc}" if loc else "declared"
    if kind == DEREGISTER and result.deregister_table is not None:
        loc = result.deregister_table.location
        return f"deregistered (data stays at {loc})" if loc else "deregistered"
    for field in OPERATION_KINDS:
        if getattr(result, field, None) is not None:
            return f"{OPERATION_LABELS[field]} result"
    return "empty result"


def results_frame(
    operations: Sequence[dict], response: BatchCommitTablesResponse, delimiter: str = "$"
) -> pd.DataFrame:
    """Each operation next to its result (same order as the request)."""
    results = list(response.results or [])
    rows = []
    for i, op in enumerate(operations):
        result = results[i] if i < len(results) else None
        rows.append(
            {
                "#": i + 1,
                "operation": OPERATION_LABELS.get(op.get("kind"), op.get("kind")),
                "table": table_key(op.get("id") or [], delimiter),
                "result": _result_summary(op.get("kind"), result),
            }
        )
    return pd.DataFrame(rows, columns=["#", "operation", "table", "result"])


def result_dicts(response: BatchCommitTablesResponse) -> list[dict[str, Any]]:
    """Each result as JSON-ready dict (no nulls)."""
    return [r.model_dump(mode="json", exclude_none=True) for r in response.results or []]


# --------------------------------------------------------------------------------------------
# Transactions: describe / alter
# --------------------------------------------------------------------------------------------

TRANSACTION_STATUSES: tuple[str, ...] = ("Queued", "Running", "Succeeded", "Failed", "Canceled")
SET_PROPERTY_MODES: tuple[str, ...] = ("Overwrite", "Fail", "Skip")
UNSET_PROPERTY_MODES: tuple[str, ...] = ("Skip", "Fail")
ALTER_ACTION_KINDS: tuple[str, ...] = ("set_status", "set_property", "unset_property")


def parse_object_id(text: str, delimiter: str = "$", what: str = "table") -> list[str]:
    """``"sales$orders"`` -> ``["sales", "orders"]``; ``ValueError`` when empty or when a part
    is empty (doubled, leading or trailing delimiter)."""
    t = (text or "").strip()
    if not t:
        raise ValueError(f"Enter a {what} id.")
    if not delimiter:
        return [t]
    parts = t.split(delimiter)
    if any(not p.strip() for p in parts):
        raise ValueError(
            f"{what.capitalize()} id {t!r} has an empty part (split by {delimiter!r}): "
            "check for doubled, leading or trailing delimiters."
        )
    return [p.strip() for p in parts]


def parse_transaction_id(text: str, delimiter: str = "$") -> list[str]:
    """``"sales$orders$<uuid>"`` -> ``["sales", "orders", "<uuid>"]`` (see
    :func:`parse_object_id`)."""
    return parse_object_id(text, delimiter, "transaction")


def describe_transaction(
    ns: LanceNamespace, transaction_id: Sequence[str]
) -> DescribeTransactionResponse:
    """DescribeTransaction for an id given as parts."""
    return ns.describe_transaction(DescribeTransactionRequest(id=list(transaction_id)))


def set_status_action(status: str) -> dict[str, Any]:
    return {"action": "set_status", "status": status}


def set_property_action(key: str, value: str, mode: str = "Overwrite") -> dict[str, Any]:
    return {"action": "set_property", "key": key, "value": value, "mode": mode}


def unset_property_action(key: str, mode: str = "Skip") -> dict[str, Any]:
    return {"action": "unset_property", "key": key, "mode": mode}


def describe_action(action: dict[str, Any]) -> str:
    kind = action.get("action")
    if kind == "set_status":
        return f"set status -> {action.get('status')}"
    if kind == "set_property":
        return (
            f"set {action.get('key')} = {action.get('value')!r} (if exists: {action.get('mode')})"
        )
    if kind == "unset_property":
        return f"unset {action.get('key')} (if missing: {action.get('mode')})"
    return str(action)


def validate_alter_actions(actions: Sequence[dict[str, Any]]) -> list[str]:
    """Problems with AlterTransaction actions (empty list: fine)."""
    problems: list[str] = []
    if not actions:
        return ["Add at least one action."]
    statuses = [a for a in actions if a.get("action") == "set_status"]
    if len(statuses) > 1:
        problems.append("Only one set-status action per request.")
    touched: dict[str, str] = {}
    for n, a in enumerate(actions, start=1):
        kind = a.get("action")
        if kind not in ALTER_ACTION_KINDS:
            problems.append(f"Action {n}: unknown action {kind!r}.")
            continue
        if kind == "set_status":
            if str(a.get("status")).lower() not in {s.lower() for s in TRANSACTION_STATUSES}:
                problems.append(
                    f"Action {n}: status must be one of {', '.join(TRANSACTION_STATUSES)}."
                )
            continue
        key = str(a.get("key") or "").strip()
        if not key:
            problems.append(f"Action {n}: the property key is empty.")
            continue
        modes = SET_PROPERTY_MODES if kind == "set_property" else UNSET_PROPERTY_MODES
        if a.get("mode") not in modes:
            problems.append(f"Action {n}: mode must be one of {', '.join(modes)}.")
        if kind == "set_property" and a.get("value") is None:
            problems.append(f"Action {n}: the property value is missing.")
        if key in touched and touched[key] != kind:
            problems.append(f"Action {n}: property {key!r} is both set and unset.")
        elif key in touched:
            problems.append(f"Action {n}: property {key!r} appears twice.")
        touched[key] = kind
    return problems


def _alter_action(a: dict[str, Any]) -> AlterTransactionAction:
    kind = a.get("action")
    if kind == "set_status":
        return AlterTransactionAction(
            set_status_action=AlterTransactionSetStatus(status=str(a["status"]))
        )
    if kind == "set_property":
        return AlterTransactionAction(
            set_property_action=AlterTransactionSetProperty(
                key=str(a["key"]).strip(), value=str(a.get("value", "")), mode=a.get("mode")
            )
        )
    if kind == "unset_property":
        return AlterTransactionAction(
            unset_property_action=AlterTransactionUnsetProperty(
                key=str(a["key"]).strip(), mode=a.get("mode")
            )
        )
    raise ValueError(f"unknown action {kind!r}")


def build_alter_request(
    transaction_id: Sequence[str], actions: Sequence[dict[str, Any]]
) -> AlterTransactionRequest:
    """AlterTransactionRequest applying all ``actions`` at once (the server applies all or none).

    Raises ``ValueError`` listing the problems of :func:`validate_alter_actions`.
    """
    problems = validate_alter_actions(actions)
    if problems:
        raise ValueError(" ".join(problems))
    return AlterTransactionRequest(
        id=list(transaction_id), actions=[_alter_action(a) for a in actions]
    )


def alter_transaction(
    ns: LanceNamespace, transaction_id: Sequence[str], actions: Sequence[dict[str, Any]]
) -> AlterTransactionResponse:
    """AlterTransaction with several actions in one request."""
    return ns.alter_transaction(build_alter_request(transaction_id, actions))


def properties_frame(properties: dict[str, str] | None) -> pd.DataFrame:
    items = sorted((properties or {}).items())
    return pd.DataFrame(items, columns=["key", "value"])


# --------------------------------------------------------------------------------------------
# Staging a real manifest for version latest+1 (local backend only)
# --------------------------------------------------------------------------------------------

U64_MAX = 2**64 - 1


@dataclass(frozen=True)
class StagedManifest:
    table_id: tuple[str, ...]
    version: int  # the version this manifest is for (latest + 1)
    manifest_path: str  # absolute path of the staged manifest
    manifest_size: int
    based_on: int  # the version it was copied from


def _local_path(location: str) -> Path | None:
    if location.startswith("file://"):
        return Path(unquote(urlparse(location).path))
    if "://" in location:
        return None
    return Path(location)


def _manifest_of(versions_dir: Path, version: int) -> Path:
    for name in (f"{U64_MAX - version:020d}.manifest", f"{version}.manifest"):
        candidate = versions_dir / name
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"no manifest for version {version} in {versions_dir}")


def stage_next_version(ns: LanceNamespace, table_id: Sequence[str]) -> StagedManifest:
    """Stage version latest+1 of a table as a copy of its latest version (local backend only).

    The table is not touched in any visible way: the latest manifest is copied into a scratch
    dataset under ``<root>/_staging/``, where lance commits a ``Restore`` of it (so the new
    manifest really says version latest+1 and points at the same data and indexes); that
    manifest is copied to ``<root>/_staging/<uuid>.manifest`` and the scratch transaction file
    into the table's ``_transactions/`` (unreferenced until a commit publishes the manifest).
    Committing a CreateTableVersion with the returned path makes latest+1 a copy of latest.

    Raises ``UnsupportedOperationError`` on a non-local backend or a non-filesystem location.
    """
    import lance

    from . import capabilities

    if capabilities(ns).kind != "local":
        raise UnsupportedOperationError(
            "Staging a manifest needs direct access to the table's files: local backend only. "
            "On other backends, enter the path of a manifest your writer staged."
        )
    desc = ns.describe_table(DescribeTableRequest(id=list(table_id)))
    location = _local_path(desc.location or "")
    if location is None or not location.is_dir():
        raise UnsupportedOperationError(
            f"Table location {desc.location!r} is not a local directory: cannot stage a manifest."
        )
    ds = lance.dataset(str(location))
    latest = int(ds.latest_version)
    source = _manifest_of(location / "_versions", latest)
    staging = location.parent / "_staging"
    staging.mkdir(exist_ok=True)
    scratch = staging / f"scratch-{uuid.uuid4().hex}"
    try:
        (scratch / "_versions").mkdir(parents=True)
        shutil.copy2(source, scratch / "_versions" / source.name)
        base = lance.dataset(str(scratch))
        new = lance.LanceDataset.commit(
            str(scratch), lance.LanceOperation.Restore(base.version), read_version=base.version
        )
        if int(new.version) != latest + 1:
            raise LanceNamespaceError(
                f"staging produced version {new.version}, expected {latest + 1}"
            )
        staged = staging / f"{uuid.uuid4().hex}.manifest"
        shutil.copy2(_manifest_of(scratch / "_versions", int(new.version)), staged)
        txn_dir = scratch / "_transactions"
        if txn_dir.is_dir():
            (location / "_transactions").mkdir(exist_ok=True)
            for f in txn_dir.iterdir():
                target = location / "_transactions" / f.name
                if not target.exists():
                    shutil.copy2(f, target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return StagedManifest(
        table_id=tuple(table_id),
        version=latest + 1,
        manifest_path=str(staged),
        manifest_size=staged.stat().st_size,
        based_on=latest,
    )


__all__ = [
    "CREATE_VERSION",
    "DECLARE",
    "DELETE_VERSIONS",
    "DEREGISTER",
    "OPERATION_KINDS",
    "OPERATION_LABELS",
    "Problem",
    "StagedManifest",
    "alter_transaction",
    "build_alter_request",
    "commit",
    "create_version_op",
    "declare_op",
    "delete_versions_op",
    "deregister_op",
    "describe_operation",
    "describe_transaction",
    "has_errors",
    "latest_version",
    "move",
    "operations_frame",
    "parse_object_id",
    "parse_properties",
    "parse_ranges",
    "parse_transaction_id",
    "remove",
    "request_json",
    "results_frame",
    "stage_next_version",
    "to_request",
    "validate",
    "validate_alter_actions",
]
