"""Build A/B: vector index build configurations compared on a scratch copy of a sample of the
table (recall against exact search, latency, index size, build time)."""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pandas as pd
import pyarrow as pa
from lance_namespace import CreateTableIndexRequest, LanceNamespace
from lance_namespace.errors import InvalidInputError

from backend.rules import index_rules as rules
from backend.rules import query_rules
from backend.services.search.query import ROW_ID, percentile, read_rows
from backend.services.search.vector import index_metric
from backend.services.tuning.measure import vector_column

SCRATCH_NOTE = (
    "Built on a scratch copy of a sample of the table's rows, in a temporary directory on this "
    "machine: the table and its indexes are never touched, it works the same over REST, and it "
    "is cheap. A table branch would need write access to the table, and a shallow clone shares "
    "the table's files; both would leave objects behind in the table's storage."
)


def build_ab(
    ns: LanceNamespace,
    table_id: Sequence[str],
    *,
    column: str,
    configs: Sequence[Mapping[str, Any]],
    sample_rows: int = 20_000,
    queries: int = 50,
    k: int = 10,
    seed: int = 0,
    query_params: Mapping[str, Any] | None = None,
    progress: Callable[[str, float], None] | None = None,
) -> pd.DataFrame:
    """Compare vector index builds (each a dict of CreateTableIndexRequest fields with
    ``index_type``, e.g. ``{"index_type": "IVF_PQ", "num_partitions": 16, "num_sub_vectors":
    8}``) on one scratch copy of up to ``sample_rows`` rows: recall@k against exact search over
    ``queries`` sampled rows, ANN p50 latency, index size, build time, the metric measured
    and whether the search ran as brute force. A build without ``distance_type`` uses the
    metric of the table's own index on ``column`` (else lance's default); the searches and
    their exact ground truth use the build's metric unless ``query_params`` chooses another
    (then lance searches without the index: ``brute_force``). See :data:`SCRATCH_NOTE`."""
    info = vector_column(ns, table_id, column)
    if not configs:
        raise InvalidInputError("give at least one build configuration")
    table_metric = index_metric(ns, table_id, column)
    say = progress or (lambda stage, fraction: None)
    say("copying a sample of the table", 0.0)
    rows = read_rows(ns, table_id, limit=int(sample_rows), columns=[column])
    if rows.num_rows < 2:
        raise InvalidInputError("the table has too few rows to compare index builds")
    scratch = Path(tempfile.mkdtemp(prefix="lance-console-ab-"))
    results = []
    try:
        base_uri = str(scratch / "sample.lance")
        base = lance.write_dataset(pa.table({column: rows.column(column)}), base_uri)
        rng = np.random.default_rng(int(seed))
        picks = rng.choice(
            base.count_rows(), size=min(int(queries), base.count_rows()), replace=False
        )
        with_ids = base.to_table(columns=[column], with_row_id=True)
        sample = with_ids.take(pa.array(sorted(int(p) for p in picks))).to_pylist()
        truths: dict[str, list[list[int]]] = {}  # exact neighbours per metric
        for i, config in enumerate(configs):
            label = describe_config(config)
            # the build's metric: the config's, else that of the table's own index; the
            # queries' metric: the one asked for, else the build's
            built = query_rules.query_metric(
                table_metric, config.get("distance_type"), column_kind=info.kind
            )
            asked = query_rules.query_metric(
                built.metric, (query_params or {}).get("distance_type"), column_kind=info.kind
            )
            if asked.metric not in truths:
                exact = {"use_index": False, "metric": asked.metric}
                truths[asked.metric] = [
                    _scratch_neighbours(base, column, q, k, exact)[0] for q in sample
                ]
            truth = truths[asked.metric]
            say(f"building {label}", (i + 0.1) / len(configs))
            uri = str(scratch / f"config{i}.lance")
            shutil.copytree(base_uri, uri)
            ds = lance.dataset(uri)
            kwargs = _build_kwargs(config, info.dim, base.count_rows(), built.metric)
            started = time.perf_counter()
            index_type = rules.normalize_index_type(config.get("index_type"))
            if index_type is None:
                raise InvalidInputError(f"{label}: give the index type")
            ds.create_index(column, index_type, **kwargs)
            build_s = time.perf_counter() - started
            ds = lance.dataset(uri)
            say(f"measuring {label}", (i + 0.6) / len(configs))
            per_query, times = [], []
            params = {
                **{key: v for key, v in (query_params or {}).items() if key != "distance_type"},
                "metric": asked.metric,
            }
            for q, expected in zip(sample, truth, strict=True):
                ids, ms = _scratch_neighbours(ds, column, q, k, params)
                times.append(ms)
                per_query.append(len(set(ids) & set(expected)) / max(1, len(expected)))
            size = sum(p.stat().st_size for p in (Path(uri) / "_indices").rglob("*") if p.is_file())
            results.append(
                {
                    "config": label,
                    "recall": float(statistics.fmean(per_query)),
                    "p50_ms": percentile(times, 50),
                    "size_bytes": int(size),
                    "build_s": build_s,
                    "rows": base.count_rows(),
                    "metric": asked.metric,
                    "brute_force": asked.mismatch,
                }
            )
        say("done", 1.0)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return pd.DataFrame(results, columns=list(AB_COLUMNS))


AB_COLUMNS: tuple[str, ...] = (
    "config", "recall", "p50_ms", "size_bytes", "build_s", "rows", "metric", "brute_force",
)  # fmt: skip


def describe_config(config: Mapping[str, Any]) -> str:
    """``IVF_PQ 16×8`` style labels (partitions × sub-vectors), else the parameters given."""
    t = rules.normalize_index_type(config.get("index_type")) or "?"
    parts = [f"{k}={v}" for k, v in config.items() if k != "index_type" and v is not None]
    if t in rules.PQ_TYPES and {"num_partitions", "num_sub_vectors"} <= set(config):
        return f"{t} {config['num_partitions']}×{config['num_sub_vectors']}"
    return f"{t} " + ", ".join(parts) if parts else t


def _build_kwargs(
    config: Mapping[str, Any], dim: int | None, rows: int, metric: str
) -> dict[str, Any]:
    request = CreateTableIndexRequest(id=["scratch"], column="v", **dict(config))
    problems = rules.request_problems(request)
    if problems:
        raise InvalidInputError(" ".join(problems))
    chosen = rules.chosen_build_params(request, dim, rows)
    kwargs: dict[str, Any] = {"metric": metric}
    for name, keyword in rules.LANCE_VECTOR_KWARGS.items():
        value = chosen.get(name, getattr(request, name))
        if value is not None:
            kwargs[keyword] = value
    return kwargs


def _scratch_neighbours(
    ds: Any, column: str, row: Mapping[str, Any], k: int, params: Mapping[str, Any]
) -> tuple[list[int], float]:
    nearest = {"column": column, "q": row[column], "k": k + 1, **params}
    started = time.perf_counter()
    table = ds.to_table(nearest=nearest, columns=[], with_row_id=True)
    elapsed = (time.perf_counter() - started) * 1000.0
    own = int(row[ROW_ID])
    ids = [int(i) for i in table.column(ROW_ID).to_pylist() if int(i) != own]
    return ids[:k], elapsed
