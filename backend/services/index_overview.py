"""A table's indexes shaped for the UI: columns and what fits them, the index listing joined
with each index's stats, coverage across recent versions, the tokenizer preview, create and
drop. The rules (types, parameters, defaults) are ``backend.rules.index_rules``."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from lance_namespace import (
    CountTableRowsRequest,
    CreateTableIndexRequest,
    DescribeTableIndexStatsRequest,
    DescribeTableRequest,
    DropTableIndexRequest,
    DropTableIndexResponse,
    LanceNamespace,
    ListTableIndicesRequest,
    ListTableVersionsRequest,
)
from lance_namespace.errors import LanceNamespaceError

from backend.rules import index_rules as rules
from backend.rules.columns import ColumnInfo, columns_from_schema
from backend.spec import fanout
from backend.spec.fields import epoch_millis, field_of

from .. import capabilities
from ..errors import trim_source_locations
from ..spec.paging import list_all


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def table_columns(ns: LanceNamespace, table_id: Sequence[str]) -> list[ColumnInfo]:
    """Top-level columns of a table, from DescribeTable(load_detailed_metadata=True)."""
    resp = ns.describe_table(DescribeTableRequest(id=list(table_id), load_detailed_metadata=True))
    return columns_from_schema(field_of(resp, "var_schema"))


def table_num_rows(ns: LanceNamespace, table_id: Sequence[str]) -> int | None:
    """Live rows of a table (CountTableRows); ``None`` when the backend cannot count."""
    try:
        count = ns.count_table_rows(CountTableRowsRequest(id=list(table_id))).count
    except LanceNamespaceError:
        return None
    return int(count) if count is not None else None


# -- tokenizer preview ------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def available_tokenizers() -> tuple[str, ...]:
    """Base tokenizers this pylance can run here (jieba / lindera need language models)."""
    import lance

    ok = []
    for name in rules.BASE_TOKENIZERS:
        try:
            lance.tokenize("hello", base_tokenizer=name)
        except Exception:  # noqa: BLE001 - a missing model raises a plain exception
            continue
        ok.append(name)
    return tuple(ok)


@dataclass(frozen=True)
class Token:
    text: str
    position: int


_TOKENIZE_OPTIONS = (
    "base_tokenizer",
    "language",
    "lower_case",
    "stem",
    "remove_stop_words",
    "ascii_folding",
    "max_token_length",
)


def tokenize_preview(text: str, options: dict[str, Any]) -> list[Token]:
    """Tokens of ``text`` under FTS options (request field names; pylance's ``lance.tokenize``).
    ``ValueError`` with pylance's message (without its source location) when refused."""
    import lance

    kwargs = {k: options[k] for k in _TOKENIZE_OPTIONS if options.get(k) is not None}
    if "max_token_length" in kwargs:
        kwargs["max_token_length"] = int(kwargs["max_token_length"])
    try:
        tokens = lance.tokenize(text or "", **kwargs)
    except Exception as err:  # noqa: BLE001 - pylance raises ValueError/RuntimeError/OSError
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(trim_source_locations(first)) from err
    return [Token(t.text, int(t.position)) for t in tokens]


# -- create / drop ----------------------------------------------------------------------------------
def _accepts_progress(method: Callable[..., Any]) -> bool:
    try:
        sig = inspect.signature(method)
    except (TypeError, ValueError):
        return False
    return "progress" in sig.parameters


def create_index(
    ns: LanceNamespace,
    request: CreateTableIndexRequest,
    *,
    progress: Callable[[dict], None] | None = None,
) -> Any:
    """CreateTableScalarIndex for scalar types, CreateTableIndex otherwise. ``progress`` goes
    to backends whose method takes it (the local backend); others never see it."""
    category = rules.index_category(request.index_type)
    method = ns.create_table_scalar_index if category == "scalar" else ns.create_table_index
    if progress is not None and _accepts_progress(method):
        return method(request, progress=progress)  # type: ignore[call-arg]
    return method(request)


def drop_index_request(table_id: Sequence[str], name: str) -> DropTableIndexRequest:
    return DropTableIndexRequest(id=list(table_id), index_name=name)


def drop_index(ns: LanceNamespace, table_id: Sequence[str], name: str) -> DropTableIndexResponse:
    return ns.drop_table_index(drop_index_request(table_id, name))


# -- overview ---------------------------------------------------------------------------------------
OVERVIEW_COLUMNS: tuple[str, ...] = (
    "name",
    "type",
    "columns",
    "status",
    "indexed_rows",
    "unindexed_rows",
    "coverage",
    "size_bytes",
    "segments",
    "distance_type",
    "created_at",
    "uuid",
    "details",
)


def list_indexes(
    ns: LanceNamespace, table_id: Sequence[str], *, version: int | None = None
) -> list[Any]:
    """Every IndexContent of a table (all pages of ListTableIndices)."""
    req = ListTableIndicesRequest(id=list(table_id), version=version)
    return list(list_all(ns.list_table_indices, req, field="indexes"))


def index_details_dict(details: str | None) -> dict[str, Any]:
    """The index's opaque JSON details, parsed (empty dict when absent or not JSON)."""
    if not details:
        return {}
    try:
        data = json.loads(details)
    except ValueError:
        return {"raw": details}
    return data if isinstance(data, dict) else {"value": data}


def distance_from_details(details: str | None) -> str | None:
    """The metric a vector index was built with, from its details (``metric_type``)."""
    data = index_details_dict(details)
    for key in ("metric_type", "distance_type", "metric"):
        if data.get(key):
            return rules.normalize_distance(str(data[key])) or str(data[key]).lower()
    return None


def index_stats(
    ns: LanceNamespace, table_id: Sequence[str], name: str, *, version: int | None = None
) -> Any | None:
    """DescribeTableIndexStats for one index (at ``version``, else the latest); ``None`` when
    the backend cannot say."""
    try:
        return ns.describe_table_index_stats(
            DescribeTableIndexStatsRequest(id=list(table_id), index_name=name, version=version)
        )
    except LanceNamespaceError:
        return None


def indexes_stats(
    ns: LanceNamespace, table_id: Sequence[str], names: Sequence[str], *, version: int | None = None
) -> dict[str, Any | None]:
    """:func:`index_stats` of each of ``names``, by name: one request each (the spec has no
    bulk form), a few in flight at once (:func:`backend.spec.fanout.each`), so a table of many
    indexes waits for a few round trips rather than one per index; an error other than the
    namespace's is raised (the first in order)."""
    names = list(names)
    stats = fanout.each(lambda name: index_stats(ns, table_id, name, version=version), names)
    return dict(zip(names, stats, strict=True))


def partitions_of(stats: Any) -> int | None:
    """The IVF partitions lance's index stats (``LanceDataset.stats.index_stats``) count for
    a vector index: the most of any of its segments; ``None`` when they name none."""
    segments = (stats.get("indices") or []) if isinstance(stats, dict) else []
    counts = [
        int(s["num_partitions"])
        for s in segments
        if isinstance(s, dict) and isinstance(s.get("num_partitions"), int)
    ]
    return max(counts) if counts else None


def ivf_partitions(ns: LanceNamespace, table_id: Sequence[str], index_name: str) -> int | None:
    """The IVF partitions of a vector index, from lance's index stats: on the local backend,
    which opens the table; ``None`` where the backend does not expose them (the spec's
    DescribeTableIndexStats has no partition count) or the stats cannot be read."""
    if capabilities(ns).kind != "local":
        return None
    try:
        ds = ns.open_dataset(list(table_id))  # type: ignore[attr-defined]
        return partitions_of(ds.stats.index_stats(index_name))
    except Exception:  # noqa: BLE001 - a courtesy (a warning about probes), never a failure
        return None


def index_overview(
    ns: LanceNamespace, table_id: Sequence[str], *, version: int | None = None
) -> pd.DataFrame:
    """One row per index: ListTableIndices joined with DescribeTableIndexStats per index, both
    at table version ``version`` (the latest when ``None``), kept in ``df.attrs["version"]``:
    the page reads the coverage history up to the same version, so the index table and the
    charts describe the same indexes.

    Row counts prefer the stats answer and fall back to the listing; ``coverage`` is
    indexed / (indexed + unindexed); ``distance_type`` (vector indexes only) falls back to
    the metric in the index details; types are the console's names (``FTS``, ``BTREE``).
    """
    rows = []
    listed = list_indexes(ns, table_id, version=version)
    names = [field_of(ix, "index_name") for ix in listed]
    all_stats = indexes_stats(ns, table_id, names, version=version)
    for ix, name in zip(listed, names, strict=True):
        stats = all_stats[name]
        indexed = _first(field_of(stats, "num_indexed_rows"), field_of(ix, "num_indexed_rows"))
        unindexed = _first(
            field_of(stats, "num_unindexed_rows"), field_of(ix, "num_unindexed_rows")
        )
        details = field_of(ix, "index_details")
        total = (indexed or 0) + (unindexed or 0)
        index_type = rules.normalize_index_type(
            _first(field_of(ix, "index_type"), field_of(stats, "index_type"))
        )
        is_vector = index_type in rules.VECTOR_INDEX_TYPES
        rows.append(
            {
                "name": name,
                "type": index_type,
                "columns": ", ".join(field_of(ix, "columns") or []),
                "status": field_of(ix, "status"),
                "indexed_rows": indexed,
                "unindexed_rows": unindexed,
                # known only where both counts are: a missing unindexed count is not 0
                "coverage": indexed / total
                if total and indexed is not None and unindexed is not None
                else None,
                "size_bytes": field_of(ix, "size_bytes"),
                "segments": _first(field_of(ix, "num_segments"), field_of(stats, "num_indices")),
                "distance_type": _first(
                    field_of(stats, "distance_type") or None, distance_from_details(details)
                )
                if is_vector
                else None,
                "created_at": field_of(ix, "created_at"),
                "uuid": field_of(ix, "index_uuid"),
                "details": details,
            }
        )
    df = pd.DataFrame(rows, columns=list(OVERVIEW_COLUMNS))
    for col in ("indexed_rows", "unindexed_rows", "size_bytes", "segments"):
        df[col] = pd.array(df[col], dtype="Int64")
    df["coverage"] = pd.array(df["coverage"], dtype="Float64")
    df["distance_type"] = df["distance_type"].astype("object")
    df.attrs["version"] = version
    return df


def unindexed_by_name(overview: pd.DataFrame) -> tuple[tuple[str, int | None], ...]:
    """Each index's unindexed rows in ``overview`` (:func:`index_overview`), by name, sorted:
    hashable, for a cached read that takes them (a REST table's health of the same
    version)."""
    return tuple(
        sorted(
            (str(name), None if pd.isna(rows) else int(rows))
            for name, rows in zip(overview["name"], overview["unindexed_rows"], strict=True)
        )
    )


def lagging_indexes(overview: pd.DataFrame) -> pd.DataFrame:
    """Indexes that lag behind the data (unindexed rows > 0)."""
    if overview.empty:
        return overview
    mask = overview["unindexed_rows"].fillna(0) > 0
    return overview[mask.astype(bool)]


# -- coverage across versions -----------------------------------------------------------------------
HISTORY_COLUMNS: tuple[str, ...] = (
    "version",
    "timestamp",
    "index_name",
    "index_type",
    "index_uuid",
    "index_id",
    "indexed_rows",
    "unindexed_rows",
    "total_rows",
    "coverage",
)


def coverage_history(
    ns: LanceNamespace,
    table_id: Sequence[str],
    max_versions: int = 30,
    *,
    up_to: int | None = None,
) -> pd.DataFrame:
    """Indexed vs unindexed rows per index for the table's most recent ``max_versions``
    (those up to version ``up_to`` when given: the version the index table was read at).

    Local backend: each version is opened by the namespace (its session, so ``memory://``
    works) and its indexes described. Other backends: ListTableVersions, then
    ListTableIndices with ``version`` per version (the server decides whether it honours
    ``version``). ``df.attrs["source"]`` says which path was used.

    ``index_uuid`` is the index's uuid at that version (its first segment, as ListTableIndices
    reports it); ``index_id`` names one index across versions (:func:`_identify`): the uuid it
    had at the first version shown. Two indexes that had the same name one after the other
    (dropped and created again) have two ids.
    """
    if max_versions < 1:
        raise ValueError("max_versions must be at least 1")
    if capabilities(ns).kind == "local":
        df = _history_local(ns, table_id, max_versions, up_to)
        df.attrs["source"] = "pylance"
        return df
    df = _history_namespace(ns, table_id, max_versions, up_to)
    df.attrs["source"] = "namespace"
    return df


@dataclass
class _Seen:
    """One index at one version, before its identity across versions is known."""

    version: int
    ts: Any
    name: str
    index_type: Any
    segments: frozenset[str]  # the uuids of its segments (ListTableIndices: the one uuid)
    uuid: str | None
    indexed: Any
    total: Any


def _identify(versions: Sequence[int], seen: Sequence[_Seen]) -> pd.DataFrame:
    """The history frame, each index at each version given the id of the index it is.

    Versions are walked in order; an index at version v is the index of the previous version
    shown that shares a segment uuid with it (an append, a delta segment), or, when v directly
    follows that version (one commit apart), the one of the same name (an optimize that merged
    every segment into new ones: one commit cannot drop an index and create another). Any other
    index is new, its id its uuid: a name that is absent for a version, or whose segments all
    changed across versions no longer listed, starts a new index."""
    by_version: dict[int, list[_Seen]] = {}
    for s in seen:
        by_version.setdefault(s.version, []).append(s)
    rows = []
    previous: list[tuple[str, _Seen]] = []
    previous_version: int | None = None
    for version in sorted(versions):
        current: list[tuple[str, _Seen]] = []
        for s in sorted(by_version.get(version, []), key=lambda s: s.name):
            taken = {ident for ident, _ in current}
            candidates = [(i, p) for i, p in previous if i not in taken]
            ident = next((i for i, p in candidates if p.segments & s.segments), None)
            if ident is None and previous_version == version - 1:
                ident = next((i for i, p in candidates if p.name == s.name), None)
            if ident is None:
                ident = s.uuid or f"{s.name}@{version}"
            current.append((ident, s))
            rows.append(_row(s, ident))
        previous, previous_version = current, version
    return pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))


def _row(s: _Seen, ident: str) -> dict:
    indexed, total = s.indexed, s.total
    return {
        "version": s.version,
        "timestamp": s.ts,
        "index_name": s.name,
        "index_type": rules.normalize_index_type(s.index_type),
        "index_uuid": s.uuid,
        "index_id": ident,
        "indexed_rows": indexed,
        "unindexed_rows": None if indexed is None or total is None else max(total - indexed, 0),
        "total_rows": total,
        "coverage": min(indexed / total, 1.0) if total and indexed is not None else None,
    }


def _history_local(
    ns: Any, table_id: Sequence[str], max_versions: int, up_to: int | None
) -> pd.DataFrame:
    ds = ns.open_dataset(list(table_id))
    listed = [v for v in ds.versions() if up_to is None or int(v["version"]) <= up_to]
    versions = sorted(listed, key=lambda v: v["version"])[-max_versions:]
    seen = []
    for v in versions:
        dv = ds.checkout_version(v["version"])
        total = dv.count_rows()
        for ix in dv.describe_indices():
            if ix.name.startswith("__"):  # internal system indexes (fragment reuse, ...)
                continue
            uuids = [s.uuid for s in ix.segments]
            seen.append(
                _Seen(
                    int(v["version"]),
                    v.get("timestamp"),
                    ix.name,
                    ix.index_type,
                    frozenset(uuids),
                    uuids[0] if uuids else None,
                    int(ix.num_rows_indexed or 0),
                    total,
                )
            )
    return _identify([int(v["version"]) for v in versions], seen)


def _history_namespace(
    ns: LanceNamespace, table_id: Sequence[str], max_versions: int, up_to: int | None
) -> pd.DataFrame:
    req = ListTableVersionsRequest(id=list(table_id))
    listed = [
        v
        for v in list_all(ns.list_table_versions, req, "versions")
        if up_to is None or int(v.version) <= up_to
    ]
    versions = sorted(listed, key=lambda v: v.version)[-max_versions:]
    seen = []
    for v in versions:
        number = int(v.version)
        millis = epoch_millis(v.timestamp_millis)
        ts = pd.Timestamp(millis, unit="ms") if millis is not None else None
        for ix in list_indexes(ns, table_id, version=number):
            indexed = field_of(ix, "num_indexed_rows")
            unindexed = field_of(ix, "num_unindexed_rows")
            known = indexed is not None and unindexed is not None
            total = indexed + unindexed if known else None
            uuid = field_of(ix, "index_uuid")
            seen.append(
                _Seen(
                    number,
                    ts,
                    field_of(ix, "index_name"),
                    field_of(ix, "index_type"),
                    frozenset([uuid] if uuid else []),
                    uuid,
                    indexed,
                    total,
                )
            )
    return _identify([int(v.version) for v in versions], seen)
