"""Requested against applied: the build parameters asked for against those lance recorded
for each vector index."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
from lance_namespace import LanceNamespace

from backend import capabilities
from backend.rules import index_rules as rules
from backend.services.index_overview import index_details_dict, list_indexes, partitions_of
from backend.text import is_digits

# Where lance reports each build parameter in an index's details / stats.
_APPLIED_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "num_sub_vectors": (("compression", "num_sub_vectors"),),
    "num_bits": (("compression", "num_bits"),),
    "m": (("hnsw", "max_connections"),),
    "ef_construction": (("hnsw", "construction_ef"),),
    "max_iterations": (("runtime_hints", "lance.ivf.max_iters"),),
    "sample_rate": (("runtime_hints", "lance.ivf.sample_rate"),),
}


def _dig(data: Any, path: Sequence[str]) -> Any:
    for part in path:
        if not isinstance(data, Mapping) or part not in data:
            return None
        data = data[part]
    return data


def applied_params(
    details: Mapping[str, Any], stats: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The build parameters lance records for an index (its details, and its stats where the
    backend exposes them: the number of IVF partitions)."""
    out: dict[str, Any] = {}
    for name, paths in _APPLIED_PATHS.items():
        for path in paths:
            value = _dig(details, path)
            if value is not None:
                out[name] = int(value) if is_digits(str(value)) else value
                break
    metric = details.get("metric_type")
    if metric:
        out["distance_type"] = rules.normalize_distance(str(metric)) or str(metric).lower()
    partitions = partitions_of(stats)
    if partitions is not None:
        out["num_partitions"] = partitions
    return out


def requested_vs_applied(
    ns: LanceNamespace,
    table_id: Sequence[str],
    requested: Mapping[str, Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """For every vector index: each parameter asked for (``requested``: index name ->
    request fields; by default the backend's own record of the builds it sent) and what lance
    applied; a difference is flagged. Parameters lance does not report show as unknown."""
    if requested is None:
        recorded = getattr(ns, "index_requests", None)
        requested = recorded(list(table_id)) if recorded is not None else {}

    local = capabilities(ns).kind == "local"
    ds = ns.open_dataset(list(table_id)) if local else None  # type: ignore[attr-defined]
    rows = []
    for ix in list_indexes(ns, table_id):
        index_type = rules.normalize_index_type(ix.index_type)
        if index_type not in rules.VECTOR_INDEX_TYPES:
            continue
        stats = ds.stats.index_stats(ix.index_name) if ds is not None else None
        applied = applied_params(index_details_dict(ix.index_details), stats)
        asked = dict(requested.get(ix.index_name) or {})
        names = [
            p
            for p in (*rules.vector_params_for(index_type), "distance_type")
            if p in asked or p in applied
        ]
        for name in names:
            want, got = asked.get(name), applied.get(name)
            differs = want is not None and got is not None and str(want).lower() != str(got).lower()
            if want is None:
                note = "not asked: lance's default"
            elif got is None:
                note = "not reported by this backend"
            elif differs:
                note = _difference_note(name, want, got, local)
            else:
                note = "as asked"
            rows.append(
                {
                    "index": ix.index_name,
                    "type": index_type,
                    "parameter": name,
                    "requested": "" if want is None else str(want),
                    "applied": "?" if got is None else str(got),
                    "differs": differs,
                    "note": note,
                }
            )
    return pd.DataFrame(
        rows, columns=["index", "type", "parameter", "requested", "applied", "differs", "note"]
    )


def _difference_note(name: str, want: Any, got: Any, local: bool) -> str:
    if name == "num_partitions" and int(got) < int(want):
        return "lance trained fewer partitions (too few rows per partition)"
    if not local:
        return "the server did not apply the parameter"
    return "lance applied another value"
