"""A table's versions shaped for the UI: the listing (metadata only, cheap for 10,000
versions), the operation behind each version (looked up only for the versions on screen),
deleting version ranges, the timeline's points (two versions compared:
``backend.services.version_compare``)."""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from lance_namespace import (
    BatchDeleteTableVersionsRequest,
    BatchDeleteTableVersionsResponse,
    CountTableRowsRequest,
    DescribeTableRequest,
    DescribeTableVersionRequest,
    DescribeTransactionRequest,
    LanceNamespace,
    ListTableVersionsRequest,
)
from lance_namespace.errors import LanceNamespaceError

from backend.rules import ids, version_ranges
from backend.spec import catalog_views, fanout

from ..capabilities import opens_datasets
from ..errors import describe_error
from ..spec.fields import epoch_millis, whole_number
from ..spec.paging import Listing, list_all
from .namespaces import LIST_BATCH

VERSION_COLUMNS = ["version", "timestamp", "manifest_path", "manifest_size", "e_tag", "metadata"]


def version_rows_frame(entries: Iterable[Any]) -> pd.DataFrame:
    """ListTableVersions entries as the listing's rows (:data:`VERSION_COLUMNS`), newest
    first: version, timestamp (UTC), manifest_path, manifest_size, e_tag, metadata (JSON
    text)."""
    rows = [
        {
            "version": int(v.version),
            "timestamp": epoch_millis(v.timestamp_millis),
            "manifest_path": v.manifest_path,
            "manifest_size": v.manifest_size,
            "e_tag": v.e_tag,
            "metadata": json.dumps(v.metadata, sort_keys=True) if v.metadata else "",
        }
        for v in entries
    ]
    df = pd.DataFrame(rows, columns=VERSION_COLUMNS)
    if not df.empty:
        df = df.drop_duplicates("version").sort_values("version", ascending=False)
    df["timestamp"] = pd.to_datetime(df["timestamp"], unit="ms", utc=True)
    df["manifest_size"] = df["manifest_size"].astype("Int64")
    return df.reset_index(drop=True)


def newest_before(versions: Iterable[int], picked: int) -> int | None:
    """The newest of ``versions`` older than ``picked`` (``None``: none is): where a compare
    of two versions starts, the one shown against the one before it."""
    return max((int(v) for v in versions if int(v) < picked), default=None)


def list_versions(
    ns: LanceNamespace, table_id: Sequence[str], branch: str | None = None
) -> pd.DataFrame:
    """Every version of a table (of ``branch``; ``None``: main), newest first
    (:func:`version_rows_frame`)."""
    req = ListTableVersionsRequest(
        id=list(table_id), branch=branch, descending=True, limit=LIST_BATCH
    )
    return version_rows_frame(list_all(ns.list_table_versions, req, "versions"))


def version_listing(
    ns: LanceNamespace,
    table_id: Sequence[str],
    branch: str | None = None,
    *,
    batch: int = LIST_BATCH,
) -> Listing:
    """A table's versions newest first, read page by page only as far as asked (``batch``
    a request at least): what a page of the listing needs, whatever the table's history."""
    req = ListTableVersionsRequest(id=list(table_id), branch=branch, descending=True)
    return Listing(
        ns.list_table_versions, req, "versions", batch=batch, key=lambda v: int(v.version)
    )


INDEX_COLUMNS = ["version", "timestamp"]


class VersionIndex:
    """Every version's number and commit time (UTC) of one table's main branch, newest
    first, kept up to date by reading only what is newer than the newest one known: a new
    commit costs one page of the listing, not the whole history. A latest version lower than
    the one known (versions deleted and the table restored) reads everything again; so does
    a new index (versions deleted by another process show when the index is made anew)."""

    def __init__(self, ns: LanceNamespace, table_id: Sequence[str], *, batch: int = LIST_BATCH):
        self._ns = ns
        self._table_id = list(table_id)
        self._batch = batch
        self._lock = threading.Lock()
        self._frame: pd.DataFrame | None = None
        self.reads = 0  # listings read (a whole one, or the newest pages)

    def peek(self) -> pd.DataFrame | None:
        """The index as known, without reading (``None``: never read)."""
        return self._frame

    def frame(self, latest: int | None) -> pd.DataFrame:
        """The index up to ``latest`` (the table's latest version, read by the caller),
        reading only what is missing."""
        with self._lock:
            known = self._frame
            newest = int(known["version"].iloc[0]) if known is not None and len(known) else None
            if known is not None and (latest is None or latest == newest):
                return known
            listing = version_listing(self._ns, self._table_id, batch=self._batch)
            self.reads += 1
            if known is None or newest is None or (latest is not None and latest < newest):
                entries = listing.read_all()
                self._frame = self._rows(entries)
                return self._frame
            while not listing.complete:
                listing.ensure(listing.known + self._batch)
                tail = listing.items(-1)
                if not tail or int(tail[0].version) <= newest:
                    break
            fresh = [v for v in listing.items() if int(v.version) > newest]
            self._frame = pd.concat([self._rows(fresh), known], ignore_index=True)
            return self._frame

    @staticmethod
    def _rows(entries: Sequence[Any]) -> pd.DataFrame:
        frame = pd.DataFrame(
            {
                "version": np.array([int(v.version) for v in entries], dtype=np.int64),
                "timestamp": pd.to_datetime(
                    [epoch_millis(v.timestamp_millis) for v in entries], unit="ms", utc=True
                ),
            },
            columns=INDEX_COLUMNS,
        )
        frame = frame.drop_duplicates("version").sort_values("version", ascending=False)
        return frame.reset_index(drop=True)


def version_stamp(ns: LanceNamespace, table_id: Sequence[str]) -> Any:
    """A cheap stamp that changes whenever the table's versions change, where the backend has
    one (the local backend's ``version_stamp``); ``None`` otherwise: only reading the latest
    version tells."""
    return _local_read(ns, "version_stamp", table_id)


def _local_read(ns: LanceNamespace, method: str, table_id: Sequence[str], *args: Any) -> Any:
    """``ns.<method>(table_id, *args)``, a read only the local backend offers; ``None`` where
    the backend has no such method or the read fails with a namespace error."""
    read = getattr(ns, method, None)
    if not callable(read):
        return None
    try:
        return read(list(table_id), *args)
    except LanceNamespaceError:
        return None


def latest_version(ns: LanceNamespace, table_id: Sequence[str]) -> int | None:
    """The table's newest version, read fresh (``None``: it has none, e.g. declared only)."""
    return catalog_views.latest_version(ns, table_id)


OPERATION_COLUMNS = ["version", "operation", "read_version", "status", "uuid", "error"]
BRANCH_OPERATIONS_REST = (
    "not available over REST on a branch: DescribeTransaction addresses main's versions"
)


def version_operations(
    ns: LanceNamespace,
    table_id: Sequence[str],
    versions: Iterable[int],
    branch: str | None = None,
) -> pd.DataFrame:
    """The transaction behind each version: version, operation, read_version, status, uuid,
    error. Failures are per row: one unreadable transaction never hides the others.

    On main the local backend reads each transaction from one open dataset of the table
    (``read_transaction``); DescribeTransaction (id = table id + [version]) opens the table
    for each version, some 60 ms apiece on a table of 100,000 versions, where the read
    takes half a millisecond. The figures are the same (a committed table transaction's
    status is final and its operation, read version and uuid cannot be altered); a version
    whose transaction that read does not give, or names no operation of, is described as
    over REST. On a branch (not main) the local backend reads each transaction from the
    branch's own dataset (DescribeTransaction has no branch: it would answer main's version
    of that number); over REST each row says that it is not available (``error``)."""
    if branch and branch != "main":
        return _branch_operations(ns, table_id, versions, branch)
    wanted = [int(v) for v in versions]
    ds = _main_dataset(ns, table_id, max(wanted)) if wanted else None
    rows = [_operation_row(v) for v in wanted]
    described = []
    for row in rows:
        txn = _read_transaction(ds, row["version"])[0] if ds is not None else None
        if txn is not None and _operation_name(txn) is not None:
            _fill_from_transaction(row, txn)
        else:
            described.append(row)
    # one DescribeTransaction per version (the spec has no bulk form), a few in flight at once
    for row, answer in zip(
        described, fanout.each(partial(_describe_transaction, ns, table_id), described), strict=True
    ):
        row.update(answer)
    return _operations_frame(rows)


def _describe_transaction(
    ns: LanceNamespace, table_id: Sequence[str], row: dict[str, Any]
) -> dict[str, Any]:
    """The fields of an operation row that DescribeTransaction of its version gives, or its
    ``error`` in the reader's terms."""
    try:
        resp = ns.describe_transaction(
            DescribeTransactionRequest(id=[*table_id, str(row["version"])])
        )
    except LanceNamespaceError as err:
        info = describe_error(err)
        return {"error": f"{info['kind']}: {info['message']}"}
    props = dict(resp.properties or {})
    rv = props.get("read_version")
    return {
        "operation": props.get("operation") or "?",
        "read_version": whole_number(rv),
        "status": resp.status,
        "uuid": props.get("uuid"),
    }


def _operation_row(version: int) -> dict[str, Any]:
    return {
        "version": int(version),
        "operation": "?",
        "read_version": None,
        "status": None,
        "uuid": None,
        "error": None,
    }


def _operation_name(txn: Any) -> str | None:
    """The name DescribeTransaction gives the operation of a lance ``Transaction``
    (``read_transaction``): its class's, e.g. ``Append``; ``None`` for an operation the
    Python binding has no class for (``BaseOperation``: a ``ReserveFragments`` of a
    compaction, say)."""
    name = type(txn.operation).__name__
    return None if name == "BaseOperation" else name


def _fill_from_transaction(row: dict[str, Any], txn: Any) -> None:
    """``row`` from a lance ``Transaction``: what DescribeTransaction reports of it (a
    committed transaction's status; ``?`` for an operation without a name here)."""
    row["operation"] = _operation_name(txn) or "?"
    row["read_version"] = int(txn.read_version)
    row["status"] = "SUCCEEDED"
    row["uuid"] = txn.uuid


def _main_dataset(ns: LanceNamespace, table_id: Sequence[str], version: int) -> Any:
    """The table's dataset on main (local backend), or ``None`` (REST, or not openable: each
    version is then described, and its row says what failed). Opened at ``version`` (the
    highest wanted): lance reads a version's manifest by its name, where the latest is found
    by listing every version (under 1 ms against 51 ms at 100,000 versions); at the latest
    where that version cannot be opened (deleted: its row then says so)."""
    at_version = _local_read(ns, "open_dataset", table_id, version)
    return at_version if at_version is not None else _local_read(ns, "open_dataset", table_id)


def _read_transaction(ds: Any, version: int) -> tuple[Any, str | None]:
    """The transaction of ``version`` read from ``ds`` (``None``: it has none), or why it
    could not be read, in a reader's terms (not lance's text, which names its source
    files): pylance's reader fails on some it wrote itself (a compaction that rewrote an
    index raises ``TypeError`` building its ``RewrittenIndex``)."""
    try:
        return ds.read_transaction(int(version)), None
    except Exception as err:  # noqa: BLE001 - any failure is this version's, said per row
        missing = "not found" in str(err).lower()
        return None, "not found" if missing else "cannot be read by this pylance"


def _operations_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=OPERATION_COLUMNS)
    df["read_version"] = df["read_version"].astype("Int64")
    return df


def _branch_operations(
    ns: LanceNamespace, table_id: Sequence[str], versions: Iterable[int], branch: str
) -> pd.DataFrame:
    """:func:`version_operations` of ``branch``: lance's transactions of the branch's dataset
    (local backend), else "not available" per row."""
    opener = getattr(ns, "branch_dataset", None)
    ds = opener(list(table_id), branch) if callable(opener) else None
    rows = []
    for v in versions:
        row = _operation_row(v)
        if ds is None:
            row["error"] = BRANCH_OPERATIONS_REST
        else:
            txn, why = _read_transaction(ds, v)
            if why is not None:
                row["error"] = f"transaction of version {v} of branch {branch}: {why}"
            elif txn is not None:
                _fill_from_transaction(row, txn)
        rows.append(row)
    return _operations_frame(rows)


def version_rows(
    ns: LanceNamespace,
    table_id: Sequence[str],
    versions: Iterable[int],
    listed: pd.DataFrame | None = None,
    branch: str | None = None,
) -> dict[int, int | None]:
    """The row count of each of ``versions``, read cheaply (``None``: not known, never a
    guess). Local backend: each version's manifest summary (``total_rows``; else the
    fragments' physical rows less their deletions, ``count_rows`` without a filter), the
    table opened at the highest of them (:func:`_main_dataset`: no listing of its history).
    REST:
    ``total_rows`` of the version's ListTableVersions metadata (``listed``, a
    :func:`list_versions` frame) when the server gives it, else of DescribeTable at that
    version, else CountTableRows at that version (exact; pylance's directory namespace gives a
    summary only for root-level tables). The first DescribeTable that answers tells whether
    the server gives counts: without one, the other versions are counted, not described; the
    requests after it go a few at once (:func:`backend.spec.fanout.each`), so a version
    described there without a count is counted on its own. A version that cannot be counted
    stays ``None``. On a branch (not main): the versions of the branch; over REST
    DescribeTable is not asked (pylance's server describes main whatever the branch),
    CountTableRows is."""
    wanted = [int(v) for v in versions]
    out: dict[int, int | None] = dict.fromkeys(wanted)
    tid = list(table_id)
    branch = None if not branch or branch == "main" else branch
    if not wanted:
        return out
    if opens_datasets(ns):
        if branch:
            try:
                ds = ns.branch_dataset(tid, branch)  # type: ignore[attr-defined]
            except LanceNamespaceError:
                return out
        elif (ds := _main_dataset(ns, tid, max(wanted))) is None:
            return out
        for v in wanted:
            try:
                at = ds.checkout_version(v)
                rows = whole_number((at.get_version().get("metadata") or {}).get("total_rows"))
                out[v] = rows if rows is not None else int(at.count_rows())
            except (OSError, ValueError, RuntimeError):
                out[v] = None
        return out
    if listed is not None and "metadata" in listed.columns:
        for v, meta in zip(listed["version"], listed["metadata"], strict=True):
            if int(v) in out and meta:
                out[int(v)] = whole_number(json.loads(meta).get("total_rows"))
    missing = [v for v in wanted if out[v] is None]
    summaries = branch is None  # DescribeTable carries a count (until an answer says otherwise)
    while summaries and missing:  # the first answer tells whether the server gives summaries
        v = missing.pop(0)
        out[v], summaries = _rest_rows(ns, tid, v, branch, summaries=True)
    # one request per version (the spec has no bulk form), a few in flight at once
    for v, (rows, _) in zip(
        missing,
        fanout.each(lambda v: _rest_rows(ns, tid, v, branch, summaries=summaries), missing),
        strict=True,
    ):
        out[v] = rows
    return out


def _rest_rows(
    ns: LanceNamespace, tid: list[str], version: int, branch: str | None, *, summaries: bool
) -> tuple[int | None, bool]:
    """The row count of ``version`` over REST (``None``: not known), and whether DescribeTable
    may still give counts: its summary when ``summaries``, else (or where the answer has
    none) CountTableRows at that version. An unanswered DescribeTable says nothing either way
    and is not followed by a count."""
    if summaries:
        try:
            resp = ns.describe_table(
                DescribeTableRequest(id=tid, version=version, load_detailed_metadata=True)
            )
        except LanceNamespaceError:
            return None, True
        rows = whole_number((resp.metadata or {}).get("total_rows"))
        if rows is not None:
            return rows, True
    try:
        counted = ns.count_table_rows(CountTableRowsRequest(id=tid, version=version, branch=branch))
    except LanceNamespaceError:
        return None, False
    return whole_number(counted.count), False


UNKNOWN_KEPT_S = 60.0  # how long a fact the backend did not give is not asked for again


class VersionFacts:
    """What never changes about a written version, the operation behind it and its row
    count, kept per ``(table id, version, identity)`` (at most ``size`` of each, the oldest
    out): ``identity`` is the version's manifest e-tag where the listing gives one (a table
    dropped and made again has other manifests), else whatever the caller says the
    version's identity is (e.g. a read generation of the table). A write to the table
    leaves the facts of its other versions as they are: they are not looked up again.

    A fact the backend did not give (a count a server does not make, an operation whose
    lookup failed) is not kept, but not asked for again within :data:`UNKNOWN_KEPT_S`
    seconds either: every run of a page would otherwise ask a server that cannot answer."""

    def __init__(self, size: int = 50_000, *, clock: Callable[[], float] = time.monotonic):
        self._lock = threading.Lock()
        self._operations: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()
        self._rows: OrderedDict[tuple[Any, ...], int] = OrderedDict()
        # when a failed operation and an unknown count were asked for (and the failed row)
        self._failed: OrderedDict[tuple[Any, ...], tuple[float, dict[str, Any]]] = OrderedDict()
        self._uncounted: OrderedDict[tuple[Any, ...], tuple[float, None]] = OrderedDict()
        self._size = size
        self._clock = clock

    def _known(self, kept: OrderedDict[tuple[Any, ...], Any], keys: Mapping[int, Any]) -> dict:
        with self._lock:
            known = {v: kept[k] for v, k in keys.items() if k in kept}
            for v in known:
                kept.move_to_end(keys[v])
        return known

    def _keep(self, kept: OrderedDict[tuple[Any, ...], Any], key: Any, value: Any) -> None:
        with self._lock:
            kept[key] = value
            kept.move_to_end(key)
            while len(kept) > self._size:
                kept.popitem(last=False)

    def _recent(
        self, kept: OrderedDict[tuple[Any, ...], tuple[float, Any]], keys: Mapping[int, Any]
    ) -> dict[int, Any]:
        """What ``kept`` (``(asked at, what was answered)`` by key) holds of ``keys``' versions
        asked for less than :data:`UNKNOWN_KEPT_S` ago, by version."""
        now = self._clock()
        with self._lock:
            found = {v: kept[k] for v, k in keys.items() if k in kept}
        return {v: answer for v, (asked, answer) in found.items() if now - asked < UNKNOWN_KEPT_S}

    @staticmethod
    def _keys(table_id: Sequence[str], identities: Mapping[int, Any]) -> dict[int, Any]:
        tid = tuple(table_id)
        return {int(v): (tid, int(v), ident) for v, ident in identities.items()}

    def _operations_known(self, keys: Mapping[int, Any]) -> dict[int, dict[str, Any]]:
        """The operations known of ``keys``' versions: kept, or failed recently (their rows
        say why)."""
        return {**self._recent(self._failed, keys), **self._known(self._operations, keys)}

    def _counts_known(self, keys: Mapping[int, Any]) -> dict[int, int | None]:
        """The row counts known of ``keys``' versions: kept, or ``None`` when not given
        recently."""
        return {**self._recent(self._uncounted, keys), **self._known(self._rows, keys)}

    def operations(
        self,
        ns: LanceNamespace,
        table_id: Sequence[str],
        identities: Mapping[int, Any],
        branch: str | None = None,
    ) -> pd.DataFrame:
        """The operations (:func:`version_operations`' frame, of ``branch``) of the versions
        of ``identities`` (version -> identity: a branch's manifests have their own), looked
        up only for those not known; a failed lookup is not kept (nor repeated for
        :data:`UNKNOWN_KEPT_S` seconds)."""
        keys = self._keys(table_id, identities)
        known = self._operations_known(keys)
        missing = [v for v in keys if v not in known]
        if missing:
            found = version_operations(ns, tuple(table_id), missing, branch)
            for row in found.to_dict("records"):
                v = int(row["version"])
                known[v] = row
                if row.get("error") is None:
                    self._keep(self._operations, keys[v], row)
                else:
                    self._keep(self._failed, keys[v], (self._clock(), row))
        return _operations_frame([known[v] for v in keys])

    def peek(
        self, table_id: Sequence[str], identities: Mapping[int, Any]
    ) -> tuple[pd.DataFrame, dict[int, int | None], list[int]]:
        """What is known now of the versions of ``identities``, nothing read: :meth:`page`'s
        operations and row counts, an operation not known with ``operation`` ``None`` and a
        count not known ``None``, and the versions missing either (in the order given): a
        fact the backend did not give lately is known not to be given."""
        keys = self._keys(table_id, identities)
        known, counts = self._operations_known(keys), self._counts_known(keys)
        rows = [known.get(v) or {**_operation_row(v), "operation": None} for v in keys]
        missing = [v for v in keys if v not in known or v not in counts]
        return _operations_frame(rows), {v: counts.get(v) for v in keys}, missing

    def page(
        self,
        ns: LanceNamespace,
        table_id: Sequence[str],
        identities: Mapping[int, Any],
    ) -> tuple[pd.DataFrame, dict[int, int | None]]:
        """The operations (:meth:`operations`) and row counts (:func:`version_rows`) of the
        versions of ``identities`` (version -> identity), each looked up only for those not
        known; an unknown count is not kept (nor asked for again within
        :data:`UNKNOWN_KEPT_S` seconds)."""
        keys = self._keys(table_id, identities)
        frame = self.operations(ns, table_id, identities)
        counts = self._counts_known(keys)
        missing = [v for v in keys if v not in counts]
        if missing:
            for v, count in version_rows(ns, tuple(table_id), missing).items():
                counts[int(v)] = count
                if count is not None:
                    self._keep(self._rows, keys[int(v)], count)
                else:
                    self._keep(self._uncounted, keys[int(v)], (self._clock(), None))
        return frame, {v: counts.get(v) for v in keys}


def with_rows_and_tags(
    versions: pd.DataFrame,
    rows: Mapping[int, int | None],
    tags: Mapping[int, Sequence[str]] | None,
) -> pd.DataFrame:
    """``versions`` with ``rows`` (``Int64``, missing: not known) and ``tags`` (the names of
    the tags on each version, sorted and comma-joined; ``None`` when the tags could not be
    listed) columns."""
    out = versions.copy()
    out["rows"] = pd.array([rows.get(int(v)) for v in out["version"]], dtype="Int64")
    if tags is None:
        out["tags"] = None
    else:
        out["tags"] = [", ".join(sorted(tags.get(int(v), ()))) for v in out["version"]]
    return out


def with_operations(versions: pd.DataFrame, operations: pd.DataFrame) -> pd.DataFrame:
    """``versions`` with ``operation`` / ``read_version`` / ``error`` joined in (rows without
    a lookup get ``operation`` "(not loaded)")."""
    cols = ["version", "operation", "read_version", "error"]
    merged = versions.merge(operations[cols], on="version", how="left")
    merged["operation"] = merged["operation"].fillna("(not loaded)")
    return merged


def describe_version(ns: LanceNamespace, table_id: Sequence[str], version: int) -> dict[str, Any]:
    """DescribeTableVersion of one version as a dict (:func:`version_dict`)."""
    resp = ns.describe_table_version(
        DescribeTableVersionRequest(id=list(table_id), version=int(version))
    )
    return version_dict(resp.version)


def version_dict(entry: Any) -> dict[str, Any]:
    """A version as the spec describes it (a ``TableVersion``: DescribeTableVersion's
    answer, or an entry of ListTableVersions, the same model) as a dict, without its empty
    fields; ``timestamp``: its commit time as ISO text (none where the answer's time is not a
    time: ``spec.fields.epoch_millis``)."""
    out = entry.model_dump(exclude_none=True)
    ts = epoch_millis(out.get("timestamp_millis"))
    if ts is not None:
        out["timestamp"] = pd.Timestamp(ts, unit="ms", tz="UTC").isoformat()
    return out


# -- deleting ---------------------------------------------------------------------------------------
def delete_request(
    table_id: Sequence[str], spans: Sequence[version_ranges.Span]
) -> BatchDeleteTableVersionsRequest:
    """The request for inclusive spans (the spec's ranges are end-exclusive)."""
    return BatchDeleteTableVersionsRequest(
        id=ids.check_id(table_id), ranges=version_ranges.to_spec(spans)
    )


def delete_problems(
    spans: Sequence[version_ranges.Span], *, latest: int | None, existing: Iterable[int]
) -> list[str]:
    """What forbids deleting ``spans`` (``backend.rules.version_ranges``), and spans that match no
    existing version. Empty: fine."""
    if latest is None:
        return ["The table has no versions."]
    problems = version_ranges.range_problems(version_ranges.to_spec(spans), latest=latest)
    if not problems and not version_ranges.covered(existing, version_ranges.to_spec(spans)):
        problems.append("None of these versions exist.")
    return problems


@dataclass(frozen=True)
class VersionsDeleted:
    """What :func:`delete_versions` did: the server's answer and the tags it deleted first
    (``version -> tags``; empty without ``delete_tags``)."""

    response: BatchDeleteTableVersionsResponse
    deleted_tags: dict[int, list[str]] = field(default_factory=dict)

    @property
    def deleted_count(self) -> int:
        return int(self.response.deleted_count or 0)


def delete_versions(
    ns: LanceNamespace,
    table_id: Sequence[str],
    spans: Sequence[version_ranges.Span],
    *,
    delete_tags: bool = False,
) -> VersionsDeleted:
    """Delete inclusive version spans, on both backends. Refused, before anything is sent,
    for a span covering the latest version and for one covering a tagged version (the
    refusal names the tags; ``backend.rules.version_ranges.tag_problems``). ``delete_tags=True``:
    those tags are deleted first (DeleteTableTag each), then the versions, so no tag is left
    pointing at a deleted version. Both backends check the tags again (the local one under its
    lock, the REST client just before sending the delete)."""
    request = delete_request(table_id, spans)
    tid = list(request.id or [])
    ranges = request.ranges or []
    latest = catalog_views.latest_version(ns, tid)
    version_ranges.check_ranges(ranges, latest=latest)
    doomed = catalog_views.clear_covered_tags(ns, tid, ranges, latest, delete_tags=delete_tags)
    return VersionsDeleted(ns.batch_delete_table_versions(request), doomed)


# -- timeline ---------------------------------------------------------------------------------------
TIMELINE_MAX_POINTS = 500


def timeline_frame(versions: pd.DataFrame, operations: pd.DataFrame | None = None) -> pd.DataFrame:
    """Rows for the versions-over-time chart: version, timestamp, operation (looked-up ones;
    "(not loaded)" for the rest)."""
    df = versions[["version", "timestamp"]].copy()
    if operations is not None and not operations.empty:
        df = df.merge(operations[["version", "operation"]], on="version", how="left")
    else:
        df["operation"] = None
    df["operation"] = df["operation"].fillna("(not loaded)")
    return df


def thin_timeline(
    frame: pd.DataFrame, keep: Sequence[int] = (), max_points: int = TIMELINE_MAX_POINTS
) -> pd.DataFrame:
    """At most ``max_points`` rows of a :func:`timeline_frame` for charting: every row whose
    version is in ``keep`` (the page on screen), the newest and the oldest version, and an
    evenly spaced sample of the rest. Order is kept; ``attrs["total"]`` is ``len(frame)``."""
    total = len(frame)
    if total <= max_points:
        out = frame
    else:
        keep_mask = frame["version"].isin({int(v) for v in keep}).to_numpy(copy=True)
        keep_mask[[0, -1]] = True
        rest = (~keep_mask).nonzero()[0]
        room = max(0, max_points - int(keep_mask.sum()))
        if room and len(rest):
            picks = rest[
                np.linspace(0, len(rest) - 1, num=min(room, len(rest))).round().astype(int)
            ]
            keep_mask[picks] = True
        out = frame[keep_mask]
    out = out.copy()
    out.attrs["total"] = total
    return out


def time_span_seconds(frame: pd.DataFrame) -> float:
    """Seconds between the oldest and the newest version of a timeline frame."""
    if frame.empty:
        return 0.0
    ts = pd.to_datetime(frame["timestamp"])
    return float((ts.max() - ts.min()).total_seconds())
