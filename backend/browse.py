"""Namespaces, tables and versions shaped for the UI: DataFrames and small dataclasses.

Plain functions over any ``LanceNamespace`` (request models in, response models out); no
streamlit here, so tests call them directly. Listings fetch *names only* (never a describe per
table); the UI pages through them and describes just the selected table. Version listings are
fetched once (cheap metadata) and paged in the UI; the operation behind each version
(``DescribeTransaction``) is looked up only for the versions shown.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from lance_namespace import (
    BatchDeleteTableVersionsRequest,
    BatchDeleteTableVersionsResponse,
    CountTableRowsRequest,
    CreateNamespaceRequest,
    CreateNamespaceResponse,
    DeclareTableRequest,
    DeclareTableResponse,
    DeregisterTableRequest,
    DeregisterTableResponse,
    DescribeNamespaceRequest,
    DescribeTableRequest,
    DescribeTableVersionRequest,
    DescribeTransactionRequest,
    LanceNamespace,
    ListNamespacesRequest,
    ListTableIndicesRequest,
    ListTablesRequest,
    ListTableVersionsRequest,
    NamespaceExistsRequest,
)
from lance_namespace.errors import InvalidInputError, LanceNamespaceError, NamespaceNotFoundError
from lance_namespace_urllib3_client.models import VersionRange

from .paging import list_all

PAGE_SIZE = 50
LIST_BATCH = 1000  # items requested per list call when fetching a whole listing
_IDENT_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")
MAX_IDENT_LEN = 255

VERSION_COLUMNS = [
    "version",
    "timestamp",
    "manifest_path",
    "manifest_size",
    "e_tag",
    "metadata",
]


# --------------------------------------------------------------------------------------------
# Names, validation, paging
# --------------------------------------------------------------------------------------------


def validate_identifier(name: str, what: str = "table") -> str | None:
    """An error message when ``name`` is not a usable namespace/table name, else ``None``.

    Names are 1-255 characters: letters, digits, ``_``, ``-`` and ``.``, not starting with
    ``.`` or ``-`` (so no spaces, no ``/``, no ``$`` delimiter).
    """
    if not name or not name.strip():
        return f"Enter a {what} name."
    if name != name.strip():
        return f"The {what} name must not start or end with spaces."
    if len(name) > MAX_IDENT_LEN:
        return f"The {what} name is longer than {MAX_IDENT_LEN} characters."
    if not _IDENT_RE.match(name):
        return (
            f"Invalid {what} name {name!r}: use letters, digits, '_', '-' and '.', "
            "starting with a letter, digit or '_'."
        )
    return None


def properties_from_rows(rows: pd.DataFrame | Iterable[Mapping[str, Any]] | None) -> dict[str, str]:
    """Key/value rows (columns ``key``, ``value``) from a data editor -> ``dict[str, str]``.

    Fully blank rows are skipped; a value without a key, or a repeated key, raises
    ``ValueError`` (before any call is made).
    """
    if rows is None:
        return {}
    records = rows.to_dict("records") if isinstance(rows, pd.DataFrame) else list(rows)
    out: dict[str, str] = {}
    for rec in records:
        key = _cell(rec.get("key")).strip()
        value = _cell(rec.get("value"))
        if not key and not value:
            continue
        if not key:
            raise ValueError(f"The row with value {value!r} has no key.")
        if key in out:
            raise ValueError(f"Key {key!r} is given twice.")
        out[key] = value
    return out


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return ""
    return str(value)


def filter_names(names: Sequence[str], query: str | None) -> list[str]:
    """Names matching ``query``: case-insensitive substring, or a glob when it has ``*``/``?``."""
    q = (query or "").strip().lower()
    if not q:
        return list(names)
    if "*" in q or "?" in q:
        pattern = re.compile(
            "^" + "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in q) + "$"
        )
        return [n for n in names if pattern.match(n.lower())]
    return [n for n in names if q in n.lower()]


@dataclass(frozen=True)
class Page:
    """One page of a longer list: ``items`` plus where it sits (1-based ``number``)."""

    items: list[Any]
    number: int
    count: int  # number of pages (>= 1)
    total: int  # number of items over all pages
    start: int  # index of the first item in the full list

    @property
    def first_row(self) -> int:
        """1-based position of the first item (0 when empty)."""
        return self.start + 1 if self.items else 0

    @property
    def last_row(self) -> int:
        return self.start + len(self.items)


def page_count(total: int, page_size: int = PAGE_SIZE) -> int:
    """Number of pages for ``total`` items (at least 1)."""
    return max(1, math.ceil(total / max(1, page_size)))


def paginate(items: Sequence[Any], number: int, page_size: int = PAGE_SIZE) -> Page:
    """Page ``number`` (1-based, clamped into range) of ``items``."""
    count = page_count(len(items), page_size)
    number = min(max(1, int(number or 1)), count)
    start = (number - 1) * page_size
    return Page(list(items[start : start + page_size]), number, count, len(items), start)


def page_of_frame(
    df: pd.DataFrame, number: int, page_size: int = PAGE_SIZE
) -> tuple[pd.DataFrame, Page]:
    """Rows of page ``number`` of ``df`` plus the :class:`Page` (whose items are row positions)."""
    page = paginate(range(len(df)), number, page_size)
    return df.iloc[page.start : page.start + len(page.items)], page


# --------------------------------------------------------------------------------------------
# Namespaces and tables
# --------------------------------------------------------------------------------------------


def list_namespace_names(ns: LanceNamespace, parent: Sequence[str]) -> list[str]:
    """Names of the direct child namespaces of ``parent`` (all pages), sorted."""
    req = ListNamespacesRequest(id=list(parent), limit=LIST_BATCH)
    return sorted(set(list_all(ns.list_namespaces, req, "namespaces")))


def list_table_names(ns: LanceNamespace, namespace: Sequence[str]) -> list[str]:
    """Names of the tables (declared ones included) directly in ``namespace``, sorted.

    Only names: nothing is described, so this stays fast with thousands of tables.
    """
    req = ListTablesRequest(id=list(namespace), limit=LIST_BATCH, include_declared=True)
    return sorted(set(list_all(ns.list_tables, req, "tables")))


def namespace_exists(ns: LanceNamespace, path: Sequence[str]) -> bool:
    """Whether namespace ``path`` exists (the root always does)."""
    if not path:
        return True
    try:
        ns.namespace_exists(NamespaceExistsRequest(id=list(path)))
    except NamespaceNotFoundError:
        return False
    return True


def describe_namespace(ns: LanceNamespace, path: Sequence[str]) -> dict[str, str]:
    """Properties of a namespace (``{}`` for the root or when it has none)."""
    if not path:
        return {}
    resp = ns.describe_namespace(DescribeNamespaceRequest(id=list(path)))
    return dict(resp.properties or {})


def create_namespace(
    ns: LanceNamespace,
    parent: Sequence[str],
    name: str,
    properties: Mapping[str, str] | None = None,
) -> CreateNamespaceResponse:
    """Create child namespace ``name`` under ``parent``; bad names raise ``InvalidInputError``
    before any call."""
    problem = validate_identifier(name, "namespace")
    if problem:
        raise InvalidInputError(problem)
    req = CreateNamespaceRequest(id=[*parent, name], properties=dict(properties or {}) or None)
    return ns.create_namespace(req)


def declare_table(
    ns: LanceNamespace,
    namespace: Sequence[str],
    name: str,
    *,
    location: str | None = None,
    properties: Mapping[str, str] | None = None,
    vend_credentials: bool = False,
) -> DeclareTableResponse:
    """Declare table ``name`` in ``namespace`` (no data yet); validated before the call."""
    problem = validate_identifier(name, "table")
    if problem:
        raise InvalidInputError(problem)
    location = (location or "").strip() or None
    req = DeclareTableRequest(
        id=[*namespace, name],
        location=location,
        properties=dict(properties or {}) or None,
        vend_credentials=True if vend_credentials else None,
    )
    return ns.declare_table(req)


def deregister_table(ns: LanceNamespace, table_id: Sequence[str]) -> DeregisterTableResponse:
    """Remove a table from the namespace (its data stays where it is)."""
    return ns.deregister_table(DeregisterTableRequest(id=list(table_id)))


def arrow_type_name(data_type: Any) -> str:
    """Readable Arrow type of a ``JsonArrowDataType`` (or its dict): ``list<int64>``,
    ``fixed_size_list<float32, 128>``, ``struct<a: int64, b: utf8>``, ``map<utf8, int32>``."""
    if data_type is None:
        return "?"
    if hasattr(data_type, "model_dump"):
        data_type = data_type.model_dump(exclude_none=True)
    name = str(data_type.get("type", "?"))
    fields = data_type.get("fields") or []
    length = data_type.get("length")
    if name in ("list", "large_list", "list_view", "large_list_view") and fields:
        return f"{name}<{arrow_type_name(fields[0].get('type'))}>"
    if name == "fixed_size_list" and fields:
        return f"fixed_size_list<{arrow_type_name(fields[0].get('type'))}, {length}>"
    if name == "struct":
        inner = ", ".join(f"{f.get('name')}: {arrow_type_name(f.get('type'))}" for f in fields)
        return f"struct<{inner}>"
    if name == "map" and fields:
        entries = fields[0].get("type", {}).get("fields") or []
        if len(entries) == 2:
            return f"map<{arrow_type_name(entries[0].get('type'))}, {arrow_type_name(entries[1].get('type'))}>"
    if name == "fixed_size_binary" and length is not None:
        return f"fixed_size_binary[{length}]"
    return name


def schema_frame(json_schema: Any) -> pd.DataFrame:
    """Columns of a ``JsonArrowSchema`` as rows: column, type, nullable."""
    rows = []
    if json_schema is not None:
        if hasattr(json_schema, "model_dump"):
            json_schema = json_schema.model_dump(exclude_none=True)
        for f in json_schema.get("fields") or []:
            rows.append(
                {
                    "column": f.get("name"),
                    "type": arrow_type_name(f.get("type")),
                    "nullable": bool(f.get("nullable", True)),
                }
            )
    return pd.DataFrame(rows, columns=["column", "type", "nullable"])


@dataclass
class TableDetail:
    """What the console shows for one table."""

    id: list[str]
    location: str | None
    declared_only: bool
    version: int | None
    properties: dict[str, str]
    storage_options: dict[str, str]
    metadata: dict[str, str]
    schema: pd.DataFrame
    row_count: int | None
    managed_versioning: bool | None
    num_fragments: int | None = None
    num_deleted_rows: int | None = None
    problems: list[str] = field(default_factory=list)  # parts that could not be read

    @property
    def name(self) -> str:
        return self.id[-1]

    @property
    def namespace(self) -> list[str]:
        return self.id[:-1]

    @property
    def status(self) -> str:
        return "declared only" if self.declared_only else "materialised"


def describe_table(
    ns: LanceNamespace, table_id: Sequence[str], *, count_rows: bool = True
) -> TableDetail:
    """Describe one table (schema, version, properties, location) and count its rows.

    A failure to count rows is recorded in ``problems`` rather than raised; a failure to
    describe raises ``LanceNamespaceError``.
    """
    table_id = list(table_id)
    resp = ns.describe_table(DescribeTableRequest(id=table_id, load_detailed_metadata=True))
    if resp.is_only_declared is not None:
        declared = bool(resp.is_only_declared)
    else:
        declared = resp.version is None and resp.var_schema is None
    problems: list[str] = []
    rows: int | None = None
    if count_rows and not declared:
        try:
            rows = ns.count_table_rows(CountTableRowsRequest(id=table_id)).count
        except LanceNamespaceError as err:
            problems.append(f"row count unavailable: {err}")
    stats = resp.stats
    fragments = getattr(stats, "num_fragments", None)
    deleted = getattr(stats, "num_deleted_rows", None)
    if fragments is None and not declared and hasattr(ns, "open_dataset"):
        # The local backend returns no stats: read them from the dataset itself.
        try:
            ds = ns.open_dataset(table_id, resp.version)
            fragments = len(ds.get_fragments())
        except Exception as err:  # noqa: BLE001 - reported, the rest of the detail still shows
            problems.append(f"fragment count unavailable: {err}")
    return TableDetail(
        id=table_id,
        location=resp.location or resp.table_uri,
        declared_only=declared,
        version=resp.version,
        properties=dict(resp.properties or {}),
        storage_options=dict(resp.storage_options or {}),
        metadata=dict(resp.metadata or {}),
        schema=schema_frame(resp.var_schema),
        row_count=rows,
        managed_versioning=resp.managed_versioning,
        num_fragments=fragments,
        num_deleted_rows=deleted,
        problems=problems,
    )


# --------------------------------------------------------------------------------------------
# Versions
# --------------------------------------------------------------------------------------------


def list_versions(ns: LanceNamespace, table_id: Sequence[str]) -> pd.DataFrame:
    """Every version of a table, newest first: version, timestamp (UTC), manifest_path,
    manifest_size, e_tag, metadata (JSON text). Metadata only: cheap even for 10,000 versions."""
    req = ListTableVersionsRequest(id=list(table_id), descending=True, limit=LIST_BATCH)
    versions = list_all(ns.list_table_versions, req, "versions")
    rows = [
        {
            "version": int(v.version),
            "timestamp": v.timestamp_millis,
            "manifest_path": v.manifest_path,
            "manifest_size": v.manifest_size,
            "e_tag": v.e_tag,
            "metadata": json.dumps(v.metadata, sort_keys=True) if v.metadata else "",
        }
        for v in versions
    ]
    df = pd.DataFrame(rows, columns=VERSION_COLUMNS)
    if df.empty:
        df["timestamp"] = pd.to_datetime(df["timestamp"], unit="ms", utc=True)
        return df
    df = df.drop_duplicates("version").sort_values("version", ascending=False)
    df["timestamp"] = pd.to_datetime(df["timestamp"], unit="ms", utc=True)
    df["manifest_size"] = df["manifest_size"].astype("Int64")
    return df.reset_index(drop=True)


def latest_version(ns: LanceNamespace, table_id: Sequence[str]) -> int | None:
    """The newest version number, read fresh from the namespace (``None``: no versions)."""
    df = list_versions(ns, table_id)
    return int(df["version"].max()) if not df.empty else None


def version_operations(
    ns: LanceNamespace, table_id: Sequence[str], versions: Iterable[int]
) -> pd.DataFrame:
    """The transaction behind each version (``DescribeTransaction`` with id = table id +
    [str(version)]): version, operation, read_version, status, uuid, error.

    Failures are per row (``operation`` "?" and the error text): one unreadable transaction
    never hides the others. Call it only for the versions on screen.
    """
    rows = []
    for v in versions:
        row: dict[str, Any] = {"version": int(v), "operation": "?", "read_version": None}
        row.update({"status": None, "uuid": None, "error": None})
        try:
            resp = ns.describe_transaction(DescribeTransactionRequest(id=[*table_id, str(v)]))
            props = dict(resp.properties or {})
            row["operation"] = props.get("operation") or "?"
            rv = props.get("read_version")
            row["read_version"] = int(rv) if rv not in (None, "") and str(rv).isdigit() else None
            row["status"] = resp.status
            row["uuid"] = props.get("uuid")
        except LanceNamespaceError as err:
            row["error"] = f"{type(err).__name__}: {err}"
        except Exception as err:  # noqa: BLE001 - tolerate anything per row, shown as text
            row["error"] = f"{type(err).__name__}: {err}"
        rows.append(row)
    df = pd.DataFrame(
        rows, columns=["version", "operation", "read_version", "status", "uuid", "error"]
    )
    df["read_version"] = df["read_version"].astype("Int64")
    return df


def with_operations(versions: pd.DataFrame, operations: pd.DataFrame) -> pd.DataFrame:
    """``versions`` with ``operation`` / ``read_version`` / ``error`` columns joined in (rows
    without a lookup get ``operation`` "(not loaded)")."""
    cols = ["version", "operation", "read_version", "error"]
    merged = versions.merge(operations[cols], on="version", how="left")
    merged["operation"] = merged["operation"].fillna("(not loaded)")
    return merged


def describe_version(ns: LanceNamespace, table_id: Sequence[str], version: int) -> dict[str, Any]:
    """``DescribeTableVersion`` of one version as a dict (timestamp as ISO text)."""
    resp = ns.describe_table_version(
        DescribeTableVersionRequest(id=list(table_id), version=int(version))
    )
    out = resp.version.model_dump(exclude_none=True)
    ts = out.get("timestamp_millis")
    if ts is not None:
        out["timestamp"] = pd.Timestamp(ts, unit="ms", tz="UTC").isoformat()
    return out


@dataclass
class VersionSnapshot:
    """Schema, rows, fragments and indexes of one version; ``None`` where unavailable."""

    version: int
    schema: dict[str, str] | None = None  # column -> type
    rows: int | None = None
    fragments: int | None = None
    indexes: list[str] | None = None
    unavailable: list[str] = field(default_factory=list)  # "what: why"


def _open_dataset(location: str, version: int, storage_options: Mapping[str, str] | None) -> Any:
    import lance

    return lance.dataset(
        location, version=int(version), storage_options=dict(storage_options or {}) or None
    )


def version_snapshot(
    ns: LanceNamespace,
    table_id: Sequence[str],
    version: int,
    *,
    local: bool,
    location: str | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> VersionSnapshot:
    """What a version looked like. Local backend: read the dataset at that version
    (``lance.dataset(location, version=v)``). REST: ``describe_table`` with ``version``,
    ``count_table_rows`` and ``list_table_indices`` at that version; fragments unavailable.
    Each part that fails is listed in ``unavailable``."""
    snap = VersionSnapshot(version=int(version))
    if local and (location or hasattr(ns, "open_dataset")):
        try:
            if hasattr(ns, "open_dataset"):  # LocalNamespace: its own storage options/session
                ds = ns.open_dataset(list(table_id), int(version))
            else:
                ds = _open_dataset(str(location), version, storage_options)
        except Exception as err:  # noqa: BLE001 - reported, then fall back to the API
            snap.unavailable.append(f"dataset at version {version}: {err}")
        else:
            snap.schema = {f.name: str(f.type) for f in ds.schema}
            snap.rows = ds.count_rows()
            snap.fragments = len(ds.get_fragments())
            try:
                snap.indexes = sorted(_index_label(i) for i in ds.describe_indices())
            except Exception as err:  # noqa: BLE001
                snap.unavailable.append(f"indexes: {err}")
            return snap
    tid = list(table_id)
    try:
        resp = ns.describe_table(
            DescribeTableRequest(id=tid, version=int(version), load_detailed_metadata=True)
        )
        if resp.var_schema is not None:
            frame = schema_frame(resp.var_schema)
            snap.schema = dict(zip(frame["column"], frame["type"], strict=True))
        else:
            snap.unavailable.append("schema: not returned by the server")
        if resp.stats is not None and getattr(resp.stats, "num_fragments", None) is not None:
            snap.fragments = resp.stats.num_fragments
    except LanceNamespaceError as err:
        snap.unavailable.append(f"schema: {err}")
    try:
        snap.rows = ns.count_table_rows(CountTableRowsRequest(id=tid, version=int(version))).count
    except LanceNamespaceError as err:
        snap.unavailable.append(f"row count: {err}")
    try:
        req = ListTableIndicesRequest(id=tid, version=int(version), limit=LIST_BATCH)
        snap.indexes = sorted(
            f"{i.index_name} ({', '.join(i.columns)})"
            for i in list_all(ns.list_table_indices, req, "indexes")
        )
    except LanceNamespaceError as err:
        snap.unavailable.append(f"indexes: {err}")
    if snap.fragments is None:
        snap.unavailable.append("fragments: not exposed by the REST API")
    return snap


def _index_label(desc: Any) -> str:
    name = getattr(desc, "name", None) or str(desc)
    cols = getattr(desc, "field_names", None) or getattr(desc, "columns", None)
    return f"{name} ({', '.join(cols)})" if cols else str(name)


@dataclass
class VersionComparison:
    """Differences between version ``a`` (older) and ``b`` (newer)."""

    a: VersionSnapshot
    b: VersionSnapshot
    schema_changes: pd.DataFrame  # column, change, type_a, type_b
    summary: pd.DataFrame  # metric, version a, version b, change

    @property
    def unavailable(self) -> list[str]:
        return [f"v{self.a.version} {u}" for u in self.a.unavailable] + [
            f"v{self.b.version} {u}" for u in self.b.unavailable
        ]


def compare_snapshots(a: VersionSnapshot, b: VersionSnapshot) -> VersionComparison:
    """Schema changes (added / removed / type changed) and a metric table of two snapshots."""
    changes = []
    if a.schema is not None and b.schema is not None:
        for col, t in b.schema.items():
            if col not in a.schema:
                changes.append({"column": col, "change": "added", "type_a": None, "type_b": t})
            elif a.schema[col] != t:
                changes.append(
                    {"column": col, "change": "type changed", "type_a": a.schema[col], "type_b": t}
                )
        for col, t in a.schema.items():
            if col not in b.schema:
                changes.append({"column": col, "change": "removed", "type_a": t, "type_b": None})
    schema_changes = pd.DataFrame(changes, columns=["column", "change", "type_a", "type_b"])

    def diff(x: Any, y: Any) -> str:
        if x is None or y is None:
            return "unavailable"
        if isinstance(x, (int, float)) and isinstance(y, (int, float)):
            return f"{y - x:+d}" if isinstance(x, int) and isinstance(y, int) else f"{y - x:+}"
        return "same" if x == y else "changed"

    def fmt_idx(x: list[str] | None) -> str | None:
        return None if x is None else (", ".join(x) or "(none)")

    metrics = [
        ("rows", a.rows, b.rows, diff(a.rows, b.rows)),
        ("fragments", a.fragments, b.fragments, diff(a.fragments, b.fragments)),
        (
            "columns",
            None if a.schema is None else len(a.schema),
            None if b.schema is None else len(b.schema),
            diff(
                None if a.schema is None else len(a.schema),
                None if b.schema is None else len(b.schema),
            ),
        ),
        ("indexes", fmt_idx(a.indexes), fmt_idx(b.indexes), diff(a.indexes, b.indexes)),
    ]
    summary = pd.DataFrame(
        [
            {
                "metric": m,
                f"v{a.version}": "—" if x is None else str(x),
                f"v{b.version}": "—" if y is None else str(y),
                "change": d,
            }
            for m, x, y, d in metrics
        ]
    )
    return VersionComparison(a=a, b=b, schema_changes=schema_changes, summary=summary)


def compare_versions(
    ns: LanceNamespace,
    table_id: Sequence[str],
    version_a: int,
    version_b: int,
    *,
    local: bool,
    location: str | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> VersionComparison:
    """Compare two versions (ordered so ``a`` is the older one); see :func:`version_snapshot`."""
    lo, hi = sorted((int(version_a), int(version_b)))
    kw: dict[str, Any] = {"local": local, "location": location, "storage_options": storage_options}
    return compare_snapshots(
        version_snapshot(ns, table_id, lo, **kw), version_snapshot(ns, table_id, hi, **kw)
    )


_RANGE_RE = re.compile(r"^\s*(\d+)\s*(?:(?:-|\.\.|–)\s*(\d+)\s*)?$")


def parse_version_ranges(text: str) -> list[tuple[int, int]]:
    """``"1-3, 7, 9..12"`` -> ``[(1, 3), (7, 7), (9, 12)]``; bad input raises ``ValueError``."""
    if not text or not text.strip():
        raise ValueError("Enter versions to delete, e.g. `2-5, 8`.")
    out = []
    for part in text.split(","):
        if not part.strip():
            continue
        m = _RANGE_RE.match(part)
        if not m:
            raise ValueError(f"{part.strip()!r} is not a version or range (use `3` or `2-5`).")
        start = int(m.group(1))
        end = int(m.group(2)) if m.group(2) else start
        if start < 1 or end < 1:
            raise ValueError("Versions start at 1.")
        if end < start:
            raise ValueError(f"Range {start}-{end} ends before it starts.")
        out.append((start, end))
    if not out:
        raise ValueError("Enter versions to delete, e.g. `2-5, 8`.")
    return out


def validate_delete_ranges(
    ranges: Sequence[tuple[int, int]],
    *,
    latest: int | None,
    existing: Iterable[int] | None = None,
) -> list[str]:
    """Problems that forbid deleting ``ranges``: covering the latest version (never deleted),
    or matching no existing version. Empty list: fine to delete."""
    problems = []
    if latest is None:
        problems.append("The table has no versions.")
    else:
        for start, end in ranges:
            if start <= latest <= end:
                problems.append(
                    f"Range {start}-{end} includes the latest version v{latest}, which is never "
                    "deleted."
                )
            if start > latest:
                problems.append(f"Range {start}-{end} is beyond the latest version v{latest}.")
    if existing is not None and not problems:
        have = set(existing)
        if not any(s <= v <= e for v in have for s, e in ranges):
            problems.append("None of these versions exist.")
    return problems


def versions_in_ranges(versions: Iterable[int], ranges: Sequence[tuple[int, int]]) -> list[int]:
    """The ``versions`` covered by ``ranges`` (sorted)."""
    return sorted(v for v in versions if any(s <= v <= e for s, e in ranges))


def delete_version_ranges(
    ns: LanceNamespace, table_id: Sequence[str], ranges: Sequence[tuple[int, int]]
) -> BatchDeleteTableVersionsResponse:
    """Delete inclusive version ranges ``[(first, last), ...]``; re-reads the latest version
    first and refuses (``InvalidInputError``, before the call) any range covering it or beyond."""
    df = list_versions(ns, table_id)
    latest = int(df["version"].max()) if not df.empty else None
    problems = validate_delete_ranges(ranges, latest=latest, existing=df["version"].tolist())
    if problems:
        raise InvalidInputError(" ".join(problems))
    return ns.batch_delete_table_versions(delete_request(table_id, ranges))


def delete_request(
    table_id: Sequence[str], ranges: Sequence[tuple[int, int]]
) -> BatchDeleteTableVersionsRequest:
    """The request for inclusive ranges ``[(first, last), ...]``: the spec's ``VersionRange`` is
    start-inclusive, end-exclusive, so ``(2, 5)`` becomes ``start_version=2, end_version=6``."""
    return BatchDeleteTableVersionsRequest(
        id=list(table_id),
        ranges=[VersionRange(start_version=s, end_version=e + 1) for s, e in ranges],
    )


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


TIMELINE_MAX_POINTS = 2_000


def thin_timeline(
    frame: pd.DataFrame, keep: Sequence[int] = (), max_points: int = TIMELINE_MAX_POINTS
) -> pd.DataFrame:
    """At most ``max_points`` rows of a :func:`timeline_frame` for charting: every row whose
    version is in ``keep`` (the page on screen), the newest and the oldest version, and an
    evenly spaced sample of the rest. Order is kept; ``attrs["total"]`` is ``len(frame)``.
    """
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


__all__ = [
    "PAGE_SIZE",
    "Page",
    "TableDetail",
    "VersionComparison",
    "VersionSnapshot",
    "arrow_type_name",
    "compare_snapshots",
    "compare_versions",
    "create_namespace",
    "declare_table",
    "delete_request",
    "delete_version_ranges",
    "deregister_table",
    "describe_namespace",
    "describe_table",
    "describe_version",
    "filter_names",
    "thin_timeline",
    "latest_version",
    "list_namespace_names",
    "list_table_names",
    "list_versions",
    "namespace_exists",
    "page_count",
    "page_of_frame",
    "paginate",
    "parse_version_ranges",
    "properties_from_rows",
    "schema_frame",
    "timeline_frame",
    "validate_delete_ranges",
    "validate_identifier",
    "version_operations",
    "version_snapshot",
    "versions_in_ranges",
    "with_operations",
]
