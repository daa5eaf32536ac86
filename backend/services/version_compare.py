"""Two versions of a table compared for the UI and notebooks: what each looked like (schema,
rows, fragments, indexes; what could not be read says why) and what changed between them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from lance_namespace import (
    CountTableRowsRequest,
    DescribeTableRequest,
    LanceNamespace,
    ListTableIndicesRequest,
)
from lance_namespace.errors import LanceNamespaceError

from backend import capabilities

from ..errors import describe_error
from ..spec.paging import list_all
from .namespaces import LIST_BATCH, schema_frame


@dataclass
class VersionSnapshot:
    """Schema, rows, fragments and indexes of one version; ``None`` where unavailable."""

    version: int
    schema: dict[str, str] | None = None  # column -> type
    rows: int | None = None
    fragments: int | None = None
    indexes: list[str] | None = None
    unavailable: list[str] = field(default_factory=list)  # "what: why"


def _problem(err: LanceNamespaceError) -> str:
    return describe_error(err)["message"]


def version_snapshot(ns: LanceNamespace, table_id: Sequence[str], version: int) -> VersionSnapshot:
    """What a version looked like. Local backend: the dataset at that version, opened by the
    namespace (its session and storage options). REST: DescribeTable, CountTableRows and
    ListTableIndices at that version; fragments are not exposed there. Each part that fails
    is listed in ``unavailable``."""
    from backend.arrow.types import arrow_type_str

    snap = VersionSnapshot(version=int(version))
    tid = list(table_id)
    if capabilities(ns).kind == "local":
        try:
            ds = ns.open_dataset(tid, int(version))  # type: ignore[attr-defined]
            snap.schema = {f.name: arrow_type_str(f.type) for f in ds.schema}
            snap.rows = ds.count_rows()
            snap.fragments = len(ds.get_fragments())
            snap.indexes = sorted(
                f"{i.name} ({', '.join(i.field_names)})"
                for i in ds.describe_indices()
                if not i.name.startswith("__")
            )
            return snap
        except LanceNamespaceError as err:
            snap.unavailable.append(f"dataset at version {version}: {_problem(err)}")
        except (OSError, ValueError) as err:
            snap.unavailable.append(f"dataset at version {version}: {err}")
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
        snap.unavailable.append(f"schema: {_problem(err)}")
    try:
        snap.rows = ns.count_table_rows(CountTableRowsRequest(id=tid, version=int(version))).count
    except LanceNamespaceError as err:
        snap.unavailable.append(f"row count: {_problem(err)}")
    try:
        req = ListTableIndicesRequest(id=tid, version=int(version), limit=LIST_BATCH)
        snap.indexes = sorted(
            f"{i.index_name} ({', '.join(i.columns)})"
            for i in list_all(ns.list_table_indices, req, "indexes")
        )
    except LanceNamespaceError as err:
        snap.unavailable.append(f"indexes: {_problem(err)}")
    if snap.fragments is None:
        snap.unavailable.append("fragments: not exposed by the REST API")
    return snap


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
        if isinstance(x, int) and isinstance(y, int):
            return f"{y - x:+d}"
        return "same" if x == y else "changed"

    def n_cols(s: VersionSnapshot) -> int | None:
        return None if s.schema is None else len(s.schema)

    def fmt_idx(x: list[str] | None) -> str | None:
        return None if x is None else (", ".join(x) or "(none)")

    metrics = [
        ("rows", a.rows, b.rows, diff(a.rows, b.rows)),
        ("fragments", a.fragments, b.fragments, diff(a.fragments, b.fragments)),
        ("columns", n_cols(a), n_cols(b), diff(n_cols(a), n_cols(b))),
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
    ns: LanceNamespace, table_id: Sequence[str], version_a: int, version_b: int
) -> VersionComparison:
    """Compare two versions (ordered so ``a`` is the older one)."""
    lo, hi = sorted((int(version_a), int(version_b)))
    return compare_snapshots(version_snapshot(ns, table_id, lo), version_snapshot(ns, table_id, hi))
