"""The batch-commit builder and the transaction writes of the Transactions page (no streamlit);
describing and listing transactions: ``backend.services.transactions``.

Builder operations are the spec's ``CommitTableOperation`` as JSON-friendly dicts (they live
in the UI's session state), e.g. ``{"declare_table": {"id": ["sales", "t"]}}``. They are
built by :func:`declare_op`, :func:`create_version_op`, :func:`delete_versions_op` and
:func:`deregister_op`, which apply the same id, property and range rules as the commit.

:func:`validate` runs one preflight (``backend.preflight``): on the local backend the commit's
own judgement without writing, over REST the client's bulk reads of the server's state
(``RestNamespaceClient.preflight``). :func:`commit` runs it once more, then sends the batch
(``backend.commit_batch``). What Validate accepts, the commit does not refuse for a rule
(unless the namespace changed meanwhile). Operations are numbered from 1.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import uuid
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from lance_namespace import (
    AlterTransactionRequest,
    AlterTransactionResponse,
    BatchCommitTablesRequest,
    BatchCommitTablesResponse,
    CommitTableOperation,
    LanceNamespace,
)
from lance_namespace.errors import (
    ErrorCode,
    InvalidInputError,
    UnsupportedOperationError,
)

from backend import capabilities, gate
from backend.rules import alter_actions, ids, properties, version_ranges
from backend.rules.batch_rules import (
    CREATE_VERSION,
    DECLARE,
    DELETE_VERSIONS,
    DEREGISTER,
    OPERATION_KINDS,
    OPERATION_LABELS,
    Problem,
)

from ..errors import make
from ..local import staging
from ..local.batch import manifest_name
from ..locations import to_local_path
from ..rules.location_rules import STAGING_DIR
from ..text import plural
from ..write_preflight import commit_batch as backend_commit_batch
from ..write_preflight import preflight as backend_preflight
from . import staged_changes

# staged changes are part of the builder's API (README, notebooks): staged, then committed
from .staged_changes import cleanup_staged as cleanup_staged
from .staged_changes import list_staged as list_staged
from .staged_changes import stage_change as stage_change

Operation = dict[str, Any]


def _op(kind: str, body: dict[str, Any]) -> Operation:
    op = {kind: {k: v for k, v in body.items() if v is not None and v != {} and v != ""}}
    CommitTableOperation.model_validate(op)  # the spec's shape, or ValidationError
    return op


def declare_op(
    table_id: Sequence[str],
    *,
    location: str | None = None,
    properties_: dict[str, str] | None = None,
    delimiter: str = ids.DEFAULT_DELIMITER,
) -> Operation:
    """A DeclareTable operation (the table's name follows the creation rule)."""
    tid = ids.check_id(table_id, delimiter=delimiter, create=True)
    props = properties.check_properties(properties_ or None)
    return _op(DECLARE, {"id": tid, "location": location, "properties": props})


def create_version_op(
    table_id: Sequence[str],
    version: int,
    manifest_path: str,
    *,
    manifest_size: int | None = None,
    e_tag: str | None = None,
    metadata: dict[str, str] | None = None,
    naming_scheme: str | None = None,
    delimiter: str = ids.DEFAULT_DELIMITER,
) -> Operation:
    """A CreateTableVersion operation (``manifest_path`` is the staged manifest)."""
    if not str(manifest_path or "").strip():
        raise InvalidInputError("Enter the staged manifest path.")
    body = {
        "id": ids.check_id(table_id, delimiter=delimiter),
        "version": int(version),
        "manifest_path": manifest_path.strip(),
        "manifest_size": manifest_size,
        "e_tag": e_tag,
        "metadata": properties.check_properties(metadata or None, "metadata"),
        "naming_scheme": naming_scheme,
    }
    return _op(CREATE_VERSION, body)


def delete_versions_op(
    table_id: Sequence[str],
    spans: Iterable[version_ranges.Span],
    *,
    delimiter: str = ids.DEFAULT_DELIMITER,
) -> Operation:
    """A DeleteTableVersions operation for inclusive spans (sent as the spec's ranges)."""
    ranges = [r.to_dict() for r in version_ranges.to_spec(spans)]
    return _op(
        DELETE_VERSIONS, {"id": ids.check_id(table_id, delimiter=delimiter), "ranges": ranges}
    )


def deregister_op(table_id: Sequence[str], *, delimiter: str = ids.DEFAULT_DELIMITER) -> Operation:
    return _op(DEREGISTER, {"id": ids.check_id(table_id, delimiter=delimiter)})


def kind_of(op: Operation) -> str:
    return next((k for k in OPERATION_KINDS if op.get(k) is not None), "?")


def body_of(op: Operation) -> dict[str, Any]:
    return dict(op.get(kind_of(op)) or {})


def move(operations: Sequence[Operation], index: int, delta: int) -> list[Operation]:
    """A copy with the operation at ``index`` moved by ``delta`` (-1 up, +1 down); clamped."""
    ops = list(operations)
    if not 0 <= index < len(ops):
        return ops
    target = max(0, min(len(ops) - 1, index + delta))
    ops.insert(target, ops.pop(index))
    return ops


def remove(operations: Sequence[Operation], index: int) -> list[Operation]:
    """A copy without the operation at ``index``."""
    return [op for i, op in enumerate(operations) if i != index]


def describe_operation(op: Operation, delimiter: str = ids.DEFAULT_DELIMITER) -> str:
    """One line, e.g. ``CreateTableVersion sales › orders -> v4 (manifest /x/_staging/a.manifest)``."""
    kind = kind_of(op)
    body = body_of(op)
    label = OPERATION_LABELS.get(kind, kind)
    name = ids.display_id(body.get("id") or [])
    if kind == DECLARE:
        extra = []
        if body.get("location"):
            extra.append(f"at {body['location']}")
        if body.get("properties"):
            extra.append(plural(len(body["properties"]), "property", "properties"))
        return f"{label} {name}" + (f" ({', '.join(extra)})" if extra else "")
    if kind == CREATE_VERSION:
        return f"{label} {name} -> v{body.get('version')} (manifest {body.get('manifest_path')})"
    if kind == DELETE_VERSIONS:
        pairs = version_ranges.spec_pairs(body.get("ranges") or [])
        shown = ", ".join(version_ranges.describe_spec(s, e) for s, e in pairs)
        return f"{label} {name}: versions {shown or '(none)'}"
    return f"{label} {name}"


def operations_frame(operations: Sequence[Operation], delimiter: str = "$") -> pd.DataFrame:
    """The builder's list as a table: number (from 1), operation, table, summary."""
    rows = [
        {
            "#": i,
            "operation": OPERATION_LABELS.get(kind_of(op), kind_of(op)),
            "table": ids.display_id(body_of(op).get("id") or []),
            "summary": describe_operation(op, delimiter),
        }
        for i, op in enumerate(operations, start=1)
    ]
    return pd.DataFrame(rows, columns=["#", "operation", "table", "summary"])


# -- the batch in a link ---------------------------------------------------------------------------------
MAX_LINK_BATCH = 1500  # characters of an encoded batch a URL carries; larger: session only
MAX_LINK_OPERATIONS = 1000  # operations a link's batch holds at most (repeats compress well)
# The fields the builder writes in each kind of operation (the spec's others, such as
# ``identity``, ``context``, ``vend_credentials`` or ``branch``, never come from a link).
LINK_FIELDS: dict[str, frozenset[str]] = {
    DECLARE: frozenset({"id", "location", "properties"}),
    CREATE_VERSION: frozenset(
        {"id", "version", "manifest_path", "manifest_size", "e_tag", "metadata", "naming_scheme"}
    ),
    DELETE_VERSIONS: frozenset({"id", "ranges"}),
    DEREGISTER: frozenset({"id"}),
}


_LINK_PREFIX = "1."  # the encoding's version


def encode_batch(operations: Sequence[Operation]) -> str | None:
    """The operations as one compact, URL-safe text (versioned prefix, zlib-compressed
    compact JSON, base64url without padding), or ``None`` when the batch is empty or the
    text would be longer than :data:`MAX_LINK_BATCH` characters."""
    if not operations:
        return None
    raw = json.dumps(list(operations), separators=(",", ":"), sort_keys=True).encode()
    text = _LINK_PREFIX + base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")
    return text if len(text) <= MAX_LINK_BATCH else None


def decode_batch(text: str) -> list[Operation]:
    """The operations :func:`encode_batch` encoded; each one checked by the spec's shape and
    the id rule, of the fields the builder writes (:data:`LINK_FIELDS`), at most
    :data:`MAX_LINK_OPERATIONS` of them. ``InvalidInputError`` for anything else (a damaged
    or foreign link)."""
    bad = InvalidInputError("The batch in the link cannot be read (damaged or not a batch).")
    if (
        not isinstance(text, str)
        or not text.startswith(_LINK_PREFIX)
        or len(text) > 4 * MAX_LINK_BATCH
    ):
        raise bad
    body = text[len(_LINK_PREFIX) :]
    try:
        raw = zlib.decompressobj().decompress(
            base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)), 1 << 20
        )
        data = json.loads(raw)
    except (ValueError, zlib.error, RecursionError):
        raise bad from None
    if not isinstance(data, list) or not all(isinstance(op, dict) and len(op) == 1 for op in data):
        raise bad
    if len(data) > MAX_LINK_OPERATIONS:
        raise InvalidInputError(
            f"The batch in the link holds {len(data):,} operations; a link holds at most "
            f"{MAX_LINK_OPERATIONS:,}."
        )
    try:
        for op in data:
            kind, body = next(iter(op.items()))
            if not isinstance(body, dict) or not set(body) <= LINK_FIELDS.get(kind, frozenset()):
                raise bad
            CommitTableOperation.model_validate(op)
            ids.check_id(body_of(op).get("id"))
    except (ValueError, InvalidInputError):
        raise bad from None
    return data


# -- request, validation, commit ----------------------------------------------------------------------
def to_request(operations: Sequence[Operation]) -> BatchCommitTablesRequest:
    """The BatchCommitTablesRequest for the builder's operations, in order."""
    return BatchCommitTablesRequest(
        operations=[CommitTableOperation.model_validate(op) for op in operations]
    )


def request_json(request: BatchCommitTablesRequest, *, indent: int | None = 2) -> str:
    """The request body as it goes on the wire (the spec's JSON: aliases, no nulls)."""
    return json.dumps(
        request.model_dump(mode="json", by_alias=True, exclude_none=True), indent=indent
    )


def batch_commit_notice(ns: LanceNamespace) -> str | None:
    """What a page says before Validate when the backend is known not to run batches: a REST
    server whose profile, or whose answer to a batch commit of this session, says it does not
    implement BatchCommitTables (then :func:`validate` reports it as an error too, and a
    commit is refused without being sent). ``None`` when it can, or may."""
    refusal = getattr(ns, "batch_commit_refusal", None)
    if callable(refusal):
        text = refusal()
        return f"This REST server cannot commit batches: {text}." if text else None
    if capabilities(ns).batch_commit is False:
        return "This namespace does not implement BatchCommitTables: batches cannot be committed."
    return None


def validate(
    ns: LanceNamespace, operations: Sequence[Operation], *, delimiter: str = "$"
) -> list[Problem]:
    """Every problem of the batch against the namespace as it is now: one preflight
    (``backend.preflight``: the local commit's own judgement, or the REST client's bulk
    reads). ``delimiter`` is kept for callers; each backend formats ids with its own."""
    if not operations:
        return [Problem(None, "the batch is empty: add at least one operation")]
    return backend_preflight(ns, to_request(operations))


def record_refused_commit(
    ns: LanceNamespace, operations: Sequence[Operation], problems: Sequence[Problem]
) -> None:
    """The audit log's entry of a commit the preflight refused (the builder's "Commit
    atomically" found errors, so nothing was sent): outcome ``refused``, the errors as the
    reason (``gate.record_refusal``; nothing when ``ns`` is not gated)."""
    errors = [str(p) for p in problems if p.severity == "error"]
    if errors:
        reason = "the preflight refused the batch: " + "; ".join(errors)
        gate.record_refusal(ns, "batch_commit_tables", to_request(operations), reason)


def commit(
    ns: LanceNamespace, operations: Sequence[Operation], *, validated: bool = False
) -> BatchCommitTablesResponse:
    """Send the batch atomically, checked first by one preflight where the commit does not
    judge it itself (``backend.commit_batch``). ``validated``: :func:`validate` has just
    found no error (the page's Commit runs it to show problems in place), so the batch is
    sent without a second preflight."""
    request = to_request(operations)
    if validated:
        return ns.batch_commit_tables(request)
    return backend_commit_batch(ns, request)


def _result_summary(kind: str, result: Any) -> str:
    if result is None:
        return "no result"
    if kind == CREATE_VERSION and result.create_table_version is not None:
        v = result.create_table_version.version
        return f"version {v.version} created" if v is not None else "version created"
    if kind == DELETE_VERSIONS and result.delete_table_versions is not None:
        n = result.delete_table_versions.deleted_count
        return f"{plural(n, 'version')} deleted" if n is not None else "versions deleted"
    if kind == DECLARE and result.declare_table is not None:
        loc = result.declare_table.location
        return f"declared at {loc}" if loc else "declared"
    if kind == DEREGISTER and result.deregister_table is not None:
        loc = result.deregister_table.location
        return f"deregistered (data stays at {loc})" if loc else "deregistered"
    return "empty result"


def results_frame(
    operations: Sequence[Operation], response: BatchCommitTablesResponse, delimiter: str = "$"
) -> pd.DataFrame:
    """Each operation (numbered from 1) next to its result."""
    results = list(response.results or [])
    rows = [
        {
            "#": i + 1,
            "operation": OPERATION_LABELS.get(kind_of(op), kind_of(op)),
            "table": ids.display_id(body_of(op).get("id") or []),
            "result": _result_summary(kind_of(op), results[i] if i < len(results) else None),
        }
        for i, op in enumerate(operations)
    ]
    return pd.DataFrame(rows, columns=["#", "operation", "table", "result"])


def alter_request(
    transaction_id: Sequence[str], actions: Sequence[dict[str, Any]]
) -> AlterTransactionRequest:
    """One AlterTransactionRequest applying every action (all or none), validated by
    ``backend.rules.alter_actions`` exactly as the backends validate it."""
    return AlterTransactionRequest(
        id=list(transaction_id), actions=alter_actions.to_models(actions)
    )


def alter_transaction(
    ns: LanceNamespace, transaction_id: Sequence[str], actions: Sequence[dict[str, Any]]
) -> AlterTransactionResponse:
    return ns.alter_transaction(alter_request(transaction_id, actions))


# The spec's transaction operations address one transaction by id; none lists them.
NO_LIST_OPERATION = (
    "The Lance Namespace spec has no operation that lists transactions: over REST a "
    "transaction is described and altered by its id only (batch commits answer with theirs, "
    "index builds with the table's transaction)."
)


def staged_op(staged: staging.StagedChange | StagedManifest) -> Operation:
    """The CreateTableVersion operation that publishes a staged change."""
    return create_version_op(
        staged.table_id, staged.version, staged.manifest_path, manifest_size=staged.manifest_size
    )


def as_staged(item: Any) -> staging.StagedChange | StagedManifest:
    """A staged change (or a staged copy of a manifest) from itself or its dict (as the page
    keeps them in its session)."""
    if isinstance(item, (staging.StagedChange, StagedManifest)):
        return item
    if isinstance(item, Mapping):
        if "preview_version" in item:
            return staging.StagedChange.from_dict(dict(item))
        return StagedManifest(
            table_id=tuple(item.get("table_id") or ()),
            version=int(item.get("version") or 0),
            manifest_path=str(item.get("manifest_path") or ""),
            manifest_size=int(item.get("manifest_size") or 0),
            based_on=int(item.get("based_on") or 0),
            transaction_files=tuple(item.get("transaction_files") or ()),
        )
    raise make(ErrorCode.INVALID_INPUT, f"not a staged change: {type(item).__name__}")


def discard_staged(ns: LanceNamespace | None, staged: Any) -> int:
    """Remove what staged changes wrote: ``staged`` is one (a ``StagedChange``, a
    ``StagedManifest`` or their dict) or several. For a staged change: its data, deletion and
    transaction files, its preview and staged manifests, and its record (never a file a version
    of the table refers to; a change that was published is refused: its files are the table's).
    For a staged copy of a manifest (:func:`stage_next_version`): the manifest and its
    transaction files (these need no ``ns``). A write through the gate (``discard_staged``),
    audited. Returns how many files were removed."""
    items = (
        [staged]
        if isinstance(staged, (Mapping, staging.StagedChange, StagedManifest))
        else list(staged)
    )
    removed = 0
    for item in (as_staged(i) for i in items):
        if isinstance(item, StagedManifest):
            removed += _discard_copy(item)
            continue
        if ns is None:
            raise make(ErrorCode.INVALID_INPUT, "discarding a staged change needs its namespace")
        removed += len(staged_changes.discard_change(ns, item))
    return removed


# -- staging a manifest for version latest+1 (local backend only) -----------------------------------
@dataclass(frozen=True)
class StagedManifest:
    table_id: tuple[str, ...]
    version: int  # the version this manifest is for (latest + 1)
    manifest_path: str  # absolute path of the staged manifest
    manifest_size: int
    based_on: int  # the version it was copied from
    transaction_files: tuple[str, ...] = field(default=())  # copied into the table's _transactions


def _manifest_of(versions_dir: Path, version: int) -> Path:
    for scheme in ("V2", "V1"):
        candidate = versions_dir / manifest_name(version, scheme)
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"no manifest for version {version} in {versions_dir}")


def stage_next_version(ns: LanceNamespace, table_id: Sequence[str]) -> StagedManifest:
    """Stage version latest+1 of a table as a copy of its latest version (local backend only).

    The table does not change: its latest manifest is copied into a scratch dataset under
    ``<root>/_staging/``, where lance commits a ``Restore`` of it (so the new manifest really
    says version latest+1 and points at the same data and indexes); that manifest is copied to
    ``<root>/_staging/<uuid>.manifest`` and the scratch transaction file into the table's
    ``_transactions/`` (unreferenced until a commit publishes the manifest).
    ``UnsupportedOperationError`` on other backends or locations.
    """
    import lance

    gate.require_writable(ns, "staging a manifest")  # it writes files, not operations
    if capabilities(ns).kind != "local":
        raise UnsupportedOperationError(
            "Staging a manifest needs direct access to the table's files: local backend only. "
            "On other backends, enter the path of a manifest your writer staged."
        )
    location = to_local_path(ns.table_location(list(table_id)))  # type: ignore[attr-defined]
    if location is None or not location.is_dir():
        raise UnsupportedOperationError(
            "The table's location is not a local directory: cannot stage a manifest."
        )
    latest = int(ns.open_dataset(list(table_id)).latest_version)  # type: ignore[attr-defined]
    source = _manifest_of(location / "_versions", latest)
    staging = location.parent / STAGING_DIR
    staging.mkdir(exist_ok=True)
    scratch = staging / f"scratch-{uuid.uuid4().hex}"
    copied: list[str] = []
    try:
        (scratch / "_versions").mkdir(parents=True)
        shutil.copy2(source, scratch / "_versions" / source.name)
        base = lance.dataset(str(scratch))
        new = lance.LanceDataset.commit(
            str(scratch), lance.LanceOperation.Restore(base.version), read_version=base.version
        )
        if int(new.version) != latest + 1:
            raise InvalidInputError(
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
                    copied.append(str(target))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return StagedManifest(
        table_id=tuple(table_id),
        version=latest + 1,
        manifest_path=str(staged),
        manifest_size=staged.stat().st_size,
        based_on=latest,
        transaction_files=tuple(copied),
    )


def _discard_copy(staged: StagedManifest) -> int:
    """Remove a staged copy of a manifest (:func:`stage_next_version`) and the transaction
    files staged with it; only a ``.manifest`` file inside a ``_staging`` directory goes.
    Returns how many files went."""
    path = Path(str(staged.manifest_path))
    if path.parent.name != STAGING_DIR or not path.name.endswith(".manifest"):
        return 0
    if not path.is_file() or path.is_symlink():
        return 0
    os.unlink(path)
    removed = 1
    for txn in staged.transaction_files:
        t = Path(txn)
        if t.parent.name == "_transactions" and t.is_file():
            os.unlink(t)
            removed += 1
    return removed
