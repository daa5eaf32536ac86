"""Tune vector indexes against measured recall and latency; a notebook API (no streamlit).

* :func:`recall` - recall@k of ANN search against exact search over a seeded sample of the
  table's own rows (the query row itself excluded on both sides), with latencies;
* :func:`more_queries` - another batch of queries (rows not used before) merged into a
  :func:`recall` result: the mean and the interval recomputed from all of them;
* :func:`sweep` - the same for every combination of a grid of query parameters;
* :func:`recall_interval` - the 95% confidence interval of a mean recall, built from the
  per-query recalls (Student's t);
* :func:`pareto_front`, :func:`cheapest` - which settings are worth it, and the cheapest one
  whose recall reaches a target with confidence (the interval's lower bound);
* :func:`build_ab` - compare index *build* configurations on a scratch copy of a sample;
* :func:`requested_vs_applied` - the build parameters asked for against those lance used;
* :func:`python_snippets` - the backend call and the plain pylance call of a setting.

Everything goes through QueryTable, so it runs the same on the local backend and over REST::

    from backend.services import tuning
    r = tuning.recall(ns, ["docs", "notes"], column="vector", k=10, nprobes=8)
    print(r.mean, r.std, r.ann_p50_ms, r.exact_p50_ms)
    df = tuning.sweep(ns, ["docs", "notes"], column="vector", grid={"nprobes": [1, 4, 16]})
"""

from __future__ import annotations

import itertools
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from lance_namespace import DescribeTableRequest, LanceNamespace
from lance_namespace.errors import InvalidInputError, UnsupportedOperationError

from backend import capabilities, html_tables, redaction, stats
from backend.local.query_plans import scanner_arguments
from backend.rules import index_rules as rules
from backend.rules import query_rules
from backend.rules.columns import columns_from_schema
from backend.services import search
from backend.services.index_overview import index_details_dict, list_indexes, partitions_of

MAX_SAMPLE = 1000
MAX_K = query_rules.MAX_K - 1  # the query asks for k + 1 (the row itself)
MAX_GRID_POINTS = 200
CONFIDENCE = 0.95  # the level of every recall interval the console shows


def recall_interval(per_query: Sequence[float], level: float = CONFIDENCE) -> tuple[float, float]:
    """The ``level`` confidence interval of mean recall over ``per_query`` (one value in [0, 1]
    per sampled query), built from the per-query values: mean ± t·s/√n, with s their sample
    standard deviation and t the quantile of Student's t with n - 1 degrees of freedom
    (:func:`backend.stats.mean_interval`), clipped to [0, 1]. Every query scoring the same:
    the point itself. Fewer than two queries: ``(nan, nan)``, no interval (see
    :func:`interval_text`).

    Simulated coverage (recall@10 per query as binomial hits / 10, 20 000 runs): 95% for true
    recall 0.6-0.9, 94% at 0.97; near 1 the per-query values pile up at 1.0 and it covers
    less (true recall 0.99: 86% over 20 queries, 87% over 50, 93% over 100)."""
    try:
        low, high = stats.mean_interval(per_query, level)
    except ValueError as exc:
        raise InvalidInputError(str(exc)) from None
    return (max(0.0, low), min(1.0, high)) if low == low else (low, high)


def interval_text(low: float, high: float) -> str:
    """An interval as shown: ``"0.659-0.741"``, or that there is none (a single query)."""
    if low != low or high != high:  # nan: fewer than two queries
        return "none from a single query"
    return f"{low:.3f}-{high:.3f}"


def recall_std(per_query: Sequence[float]) -> float:
    """The sample standard deviation (n - 1) of the per-query recalls: the s of
    :func:`recall_interval`; 0.0 for fewer than two queries."""
    return float(np.std(np.asarray(per_query, dtype=float), ddof=1)) if len(per_query) > 1 else 0.0


@dataclass
class RecallResult:
    """recall@k over a sample: the mean, its spread, one value per sampled row, latencies."""

    k: int
    per_query: list[float]
    ann_ms: list[float]
    exact_ms: list[float]
    query_params: dict[str, Any] = field(default_factory=dict)
    # the metric the ANN and the exact searches computed (the index's unless one was chosen),
    # the index's own metric, and why the "ANN" search ran as brute force (None: it did not)
    metric: str | None = None
    index_metric: str | None = None
    brute_force: str | None = None
    # what :func:`more_queries` needs to add queries not used before: the vector column, the
    # seed, the row ids of the queries and their positions in the table's scan order
    column: str | None = None
    seed: int | None = None
    query_rows: list[int] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)

    @property
    def mean(self) -> float:
        return float(statistics.fmean(self.per_query)) if self.per_query else float("nan")

    @property
    def std(self) -> float:
        """The standard deviation of the per-query recalls (:func:`recall_std`)."""
        return recall_std(self.per_query)

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% confidence interval of :attr:`mean` (:func:`recall_interval`)."""
        return recall_interval(self.per_query)

    @property
    def ann_p50_ms(self) -> float:
        return search.percentile(self.ann_ms, 50)

    @property
    def ann_p95_ms(self) -> float:
        return search.percentile(self.ann_ms, 95)

    @property
    def exact_p50_ms(self) -> float:
        return search.percentile(self.exact_ms, 50)

    @property
    def exact_p95_ms(self) -> float:
        return search.percentile(self.exact_ms, 95)

    def _summary(self) -> str:
        """One line: recall@k mean and standard deviation over the sample, its 95% interval,
        latencies, the query settings."""
        if not self.per_query:
            return f"recall@{self.k}: no queries"
        params = ", ".join(f"{k}={v}" for k, v in sorted(self.query_params.items()))
        low, high = self.interval
        shown = f"{low:.2f}-{high:.2f}" if low == low else interval_text(low, high)
        return (
            f"recall@{self.k} {self.mean:.2f} (standard deviation {self.std:.2f}) over "
            f"{len(self.per_query)} queries (95% interval {shown}, min "
            f"{min(self.per_query):.2f}); "
            f"ANN p50 {self.ann_p50_ms:.2f} ms, p95 {self.ann_p95_ms:.2f} ms; "
            f"exact p50 {self.exact_p50_ms:.2f} ms" + (f"; {params}" if params else "")
        )

    def __repr__(self) -> str:
        # a summary, not every per-query float (they stay in .per_query)
        return f"RecallResult({self._summary()})"

    def _repr_html_(self) -> str:
        """Jupyter: a table of the measurement with its 95% interval."""
        return html_tables.STYLE + _recall_html(self)

    __str__ = __repr__


def _recall_html(result: RecallResult) -> str:
    """The recall table: the mean with its 95% interval, spread, latencies and settings."""
    if not result.per_query:
        return html_tables.kv_table({"recall": f"recall@{result.k}: no queries"}, "Recall")
    low, high = result.interval
    data = {
        f"recall@{result.k}": f"{result.mean:.3f}",
        # the confidence interval of the mean, from the per-query recalls (Student's t)
        "95% interval": f"{low:.3f} – {high:.3f}" if low == low else "none from a single query",
        "standard deviation (per query)": f"{result.std:.3f}",
        "queries": len(result.per_query),
        "lowest query recall": f"{min(result.per_query):.3f}",
        "ANN p50 / p95 (ms)": f"{result.ann_p50_ms:.2f} / {result.ann_p95_ms:.2f}",
        "exact p50 (ms)": f"{result.exact_p50_ms:.2f}",
        "metric": result.metric or "",
        "brute force": result.brute_force or "no",
        "settings": redaction.redact_json(dict(result.query_params)) or "defaults",
    }
    return html_tables.kv_table(data, "Recall against exact search")


@dataclass
class _Query:
    row_id: int
    vector: list[float]
    position: int = -1  # in the table's scan order (of the version and filter sampled)


def vector_column(ns: LanceNamespace, table_id: Sequence[str], column: str) -> Any:
    """The column's ``ColumnInfo``; ``InvalidInputError`` when it is not a vector column."""
    desc = ns.describe_table(DescribeTableRequest(id=list(table_id), load_detailed_metadata=True))
    found = {c.name: c for c in columns_from_schema(desc.var_schema)}
    info = found.get(column)
    if info is None:
        raise InvalidInputError(f"the table has no column {column!r}")
    if info.kind not in ("vector", "binary_vector"):
        raise InvalidInputError(
            f"{column!r} is not a vector column ({info.arrow_type_str}): recall is measured on "
            "fixed-size lists of floats (or uint8)"
        )
    return info


def _check(k: int, sample: int) -> None:
    if not 1 <= int(k) <= MAX_K:
        raise InvalidInputError(f"k must be between 1 and {MAX_K}")
    if not 1 <= int(sample) <= MAX_SAMPLE:
        raise InvalidInputError(f"the sample holds 1 to {MAX_SAMPLE} rows")


def sample_queries(
    ns: LanceNamespace,
    table_id: Sequence[str],
    column: str,
    sample: int,
    seed: int | Sequence[int],
    *,
    version: int | None = None,
    filter: str | None = None,
    exclude: Sequence[int] = (),
) -> list[_Query]:
    """``sample`` rows chosen with ``seed`` among the table's rows (the same on every
    backend: positions in the table's scan order), with their row ids and vectors; never a
    position of ``exclude`` (the queries of an earlier measurement)."""
    total = search.count_rows(ns, table_id, version=version, filter=filter)
    if total == 0:
        raise InvalidInputError("the table has no rows to sample")
    used = {int(p) for p in exclude if 0 <= int(p) < total}
    if len(used) >= total:
        raise InvalidInputError(f"every row of the table ({total:,}) is already a query")
    rng = np.random.default_rng(seed if isinstance(seed, int) else [int(s) for s in seed])
    if used:
        free = np.setdiff1d(np.arange(total), np.fromiter(used, dtype=np.int64))
        picked = rng.choice(free, size=min(int(sample), len(free)), replace=False)
    else:
        picked = rng.choice(total, size=min(int(sample), total), replace=False)
    queries = []
    for pos in sorted(int(p) for p in picked):
        req = search.query_request(
            table_id, k=1, offset=int(pos) or None, columns=[column], with_row_id=True,
            version=version, filter=filter,
        )  # fmt: skip
        row = search.run_query(ns, req).to_pylist()[0]
        queries.append(_Query(int(row[search.ROW_ID]), [float(x) for x in row[column]], pos))
    return queries


def _neighbours(
    ns: LanceNamespace,
    table_id: Sequence[str],
    query: _Query,
    column: str,
    k: int,
    params: Mapping[str, Any],
) -> tuple[list[int], float]:
    """Row ids of the ``k`` nearest neighbours of a sampled row (itself left out), and the
    query's latency in milliseconds."""
    req = search.query_request(
        table_id, vector=query.vector, vector_column=column, k=k + 1, columns=[],
        with_row_id=True, **params,
    )  # fmt: skip
    started = time.perf_counter()
    table = search.run_query(ns, req)
    elapsed = (time.perf_counter() - started) * 1000.0
    ids = [int(i) for i in table.column(search.ROW_ID).to_pylist() if int(i) != query.row_id]
    return ids[:k], elapsed


def _exact(
    ns: LanceNamespace,
    table_id: Sequence[str],
    queries: Sequence[_Query],
    column: str,
    k: int,
    base: Mapping[str, Any],
    tick: Callable[[], None] | None = None,
) -> tuple[list[list[int]], list[float]]:
    truth, times = [], []
    for q in queries:
        ids, ms = _neighbours(ns, table_id, q, column, k, {**base, "bypass_vector_index": True})
        truth.append(ids)
        times.append(ms)
        if tick is not None:
            tick()
    return truth, times


def _measure(
    ns: LanceNamespace,
    table_id: Sequence[str],
    queries: Sequence[_Query],
    truth: Sequence[Sequence[int]],
    column: str,
    k: int,
    params: Mapping[str, Any],
    tick: Callable[[], None] | None = None,
) -> tuple[list[float], list[float]]:
    per_query, times = [], []
    for q, expected in zip(queries, truth, strict=True):
        ids, ms = _neighbours(ns, table_id, q, column, k, params)
        times.append(ms)
        per_query.append(len(set(ids) & set(expected)) / max(1, len(expected)))
        if tick is not None:
            tick()
    return per_query, times


_BASE_FIELDS = ("distance_type", "version", "filter", "prefilter")


def recall(
    ns: LanceNamespace,
    table_id: Sequence[str],
    *,
    column: str,
    k: int = 10,
    sample: int = 100,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    **query_params: Any,
) -> RecallResult:
    """recall@k of the ANN search ``query_params`` describe (QueryTable fields: ``nprobes``,
    ``refine_factor``, ``ef``, ``bypass_vector_index``, ``distance_type``, ``version``,
    ``filter``...) against exact search, over ``sample`` rows drawn with ``seed``.

    Both searches use one metric: ``distance_type`` if given, else the index's
    (``query_rules.query_metric``); the result names it, and says when the "ANN" search ran
    as brute force (a metric other than the index's, no index, bypass_vector_index).
    ``progress(done, total)`` follows the searches: each sampled row's exact search, then
    its ANN search (``total`` is twice the sample drawn)."""
    _check(k, sample)
    info = vector_column(ns, table_id, column)
    query_params = {key: value for key, value in query_params.items() if value is not None}
    metric = search.query_metric(
        ns, table_id, column, query_params.get("distance_type"),
        version=query_params.get("version"), column_kind=info.kind,
    )  # fmt: skip
    return _recall_of(
        ns, table_id, column, k, sample, int(seed), query_params, metric, progress, previous=None
    )


def _recall_of(
    ns: LanceNamespace,
    table_id: Sequence[str],
    column: str,
    k: int,
    sample: int,
    seed: int,
    query_params: dict[str, Any],
    metric: query_rules.QueryMetric,
    progress: Callable[[int, int], None] | None,
    previous: RecallResult | None,
) -> RecallResult:
    """Measure ``sample`` new queries (none of ``previous``'s) and return them, after
    ``previous``'s when given."""
    sent = {**query_params, "distance_type": metric.metric}  # both searches: the same metric
    base = {f: sent[f] for f in _BASE_FIELDS if sent.get(f) is not None}
    before = previous.positions if previous is not None else []
    # a first sample draws with the seed alone (as it always did); each later batch with the
    # seed and the number of queries before it, so that one run's batches are reproducible
    draw: int | list[int] = seed if not before else [seed, len(before)]
    queries = sample_queries(
        ns, table_id, column, sample, draw, version=base.get("version"),
        filter=base.get("filter"), exclude=before,
    )  # fmt: skip
    if previous is not None:
        seen = set(previous.query_rows)
        queries = [q for q in queries if q.row_id not in seen]  # the table changed since
        if not queries:
            raise InvalidInputError("no row left that was not a query already")
    done, total = [0], 2 * len(queries)

    def tick() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total)

    truth, exact_ms = _exact(ns, table_id, queries, column, k, base, tick)
    per_query, ann_ms = _measure(ns, table_id, queries, truth, column, k, sent, tick)
    old = previous or RecallResult(k, [], [], [])
    return RecallResult(
        k, old.per_query + per_query, old.ann_ms + ann_ms, old.exact_ms + exact_ms,
        dict(query_params), metric=metric.metric, index_metric=metric.index_metric,
        brute_force=metric.brute_force_reason(bool(query_params.get("bypass_vector_index"))),
        column=column, seed=seed, query_rows=old.query_rows + [q.row_id for q in queries],
        positions=old.positions + [q.position for q in queries],
    )  # fmt: skip


def more_queries(
    ns: LanceNamespace,
    table_id: Sequence[str],
    previous: RecallResult,
    *,
    sample: int = 100,
    progress: Callable[[int, int], None] | None = None,
) -> RecallResult:
    """``previous`` with ``sample`` more queries: rows not sampled before (drawn with its
    seed and the number of queries so far), measured with its k, column, metric and query
    settings, and merged in. The mean and the 95% interval (:func:`recall_interval`) are then
    computed from every query's recall. Refused for a result that
    does not record its queries (made before they were recorded)."""
    if previous.column is None or previous.seed is None or not previous.positions:
        raise InvalidInputError(
            "this measurement does not record its queries: measure recall again to add more"
        )
    _check(previous.k, sample)
    info = vector_column(ns, table_id, previous.column)
    params = dict(previous.query_params)
    if previous.metric is not None:
        chosen = params.get("distance_type") is not None
        metric = query_rules.QueryMetric(previous.metric, previous.index_metric, chosen)
    else:
        metric = search.query_metric(
            ns, table_id, previous.column, params.get("distance_type"),
            version=params.get("version"), column_kind=info.kind,
        )  # fmt: skip
    return _recall_of(
        ns, table_id, previous.column, previous.k, sample, previous.seed, params, metric,
        progress, previous=previous,
    )  # fmt: skip


def parse_grid_values(name: str, text: str) -> list[Any]:
    """A typed list of values to try: ``"1, 2, 4"`` -> ``[1, 2, 4]``; ``none`` stands for
    "not sent" (the backend's default). Duplicates are dropped, order kept."""
    values: list[Any] = []
    for part in (text or "").replace(";", ",").split(","):
        part = part.strip().lower()
        if not part:
            continue
        if part in ("none", "default", "-"):
            values.append(None)
            continue
        try:
            values.append(int(part))
        except ValueError:
            raise InvalidInputError(f"{name}: {part!r} is not a whole number or none") from None
    return list(dict.fromkeys(values))


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of ``grid`` (a ``None`` value: the parameter is not sent)."""
    if not grid:
        return [{}]
    unknown = sorted(set(grid) - set(search.VECTOR_QUERY_PARAMS) - {"distance_type"})
    if unknown:
        raise InvalidInputError(
            f"unknown query parameter(s) {', '.join(unknown)}; a grid takes "
            + ", ".join(search.VECTOR_QUERY_PARAMS)
        )
    keys = list(grid)
    points = [dict(zip(keys, values, strict=True)) for values in itertools.product(*grid.values())]
    if len(points) > MAX_GRID_POINTS:
        raise InvalidInputError(f"the grid has {len(points)} points; at most {MAX_GRID_POINTS}")
    for point in points:
        problems = query_rules.query_problems(
            SimpleNamespace(**{k: v for k, v in point.items() if v is not None})
        )
        if problems:
            raise InvalidInputError(f"grid: {problems[0]}")
    return points


def sweep(
    ns: LanceNamespace,
    table_id: Sequence[str],
    *,
    column: str,
    k: int = 10,
    sample: int = 50,
    seed: int = 0,
    grid: Mapping[str, Sequence[Any]] | None = None,
    progress: Callable[[int, int], None] | None = None,
    **base_params: Any,
) -> pd.DataFrame:
    """One row per combination of ``grid``: a column per grid key (``None`` kept as a missing
    value), ``recall`` (the mean over the queries), ``recall_std`` (their standard deviation,
    :func:`recall_std`), ``recall_low`` and ``recall_high`` (the 95% interval,
    :func:`recall_interval`), ``queries``, ``p50_ms``, ``p95_ms``, ``metric`` (the distance
    both the ANN and the exact searches computed: ``distance_type`` of the point or of
    ``base_params``, else the index's) and ``brute_force`` (the point's search ran without
    the index: another metric than the index's, no index, bypass_vector_index). The exact
    neighbours of the sample are computed once per metric; ``progress(done, total)``
    follows the points."""
    _check(k, sample)
    grid = dict(grid or {})
    points = grid_points(grid)
    info = vector_column(ns, table_id, column)
    base_params = {key: value for key, value in base_params.items() if value is not None}
    version = base_params.get("version")
    indexed = search.index_metric(ns, table_id, column, version=version)
    queries = sample_queries(
        ns, table_id, column, sample, seed, version=version, filter=base_params.get("filter")
    )
    truths: dict[tuple, list[list[int]]] = {}  # exact neighbours per metric (and base fields)
    rows = []
    for i, point in enumerate(points):
        params = {**base_params, **{p: v for p, v in point.items() if v is not None}}
        metric = query_rules.query_metric(
            indexed, params.get("distance_type"), column_kind=info.kind
        )
        params["distance_type"] = metric.metric
        base = {f: params[f] for f in _BASE_FIELDS if params.get(f) is not None}
        fields = tuple(sorted(base.items()))
        if fields not in truths:
            truths[fields] = _exact(ns, table_id, queries, column, k, base)[0]
        per_query, times = _measure(ns, table_id, queries, truths[fields], column, k, params)
        low, high = recall_interval(per_query)
        rows.append(
            {
                **{key: point.get(key) for key in grid},
                "recall": float(statistics.fmean(per_query)),
                "recall_std": recall_std(per_query),
                "recall_low": low,
                "recall_high": high,
                "queries": len(per_query),
                "p50_ms": search.percentile(times, 50),
                "p95_ms": search.percentile(times, 95),
                "metric": metric.metric,
                "brute_force": metric.brute_force_reason(bool(params.get("bypass_vector_index")))
                is not None,
            }
        )
        if progress is not None:
            progress(i + 1, len(points))
    frame = pd.DataFrame(rows, columns=[*grid, *SWEEP_COLUMNS])
    for key in grid:  # as given: whole numbers stay whole, a missing value stays None
        frame[key] = pd.Series([point.get(key) for point in points], dtype=object)
    return frame


SWEEP_COLUMNS: tuple[str, ...] = (
    "recall", "recall_std", "recall_low", "recall_high", "queries", "p50_ms", "p95_ms", "metric",
    "brute_force",
)  # fmt: skip


def pareto_front(frame: pd.DataFrame) -> pd.Series:
    """A boolean mask of the settings no other setting beats (at least the recall for at most
    the p50 latency, better in one)."""
    recall_values = frame["recall"].to_numpy(dtype=float)
    latency = frame["p50_ms"].to_numpy(dtype=float)
    mask = []
    for i in range(len(frame)):
        dominated = (
            (recall_values >= recall_values[i])
            & (latency <= latency[i])
            & ((recall_values > recall_values[i]) | (latency < latency[i]))
        )
        mask.append(not bool(dominated.any()))
    return pd.Series(mask, index=frame.index, name="pareto")


def cheapest(frame: pd.DataFrame, target: float) -> pd.Series | None:
    """The setting with the lowest p50 latency whose recall reaches ``target`` with
    confidence: the lower bound of its interval (``recall_low``, a sweep's column) reaches it
    (a setting measured on one query has none, and reaches nothing); a frame without
    intervals is judged on ``recall``. ``None``: none does. Settings that ran
    as brute force (a ``brute_force`` column) are not index settings and are left out."""
    judged = frame["recall_low"] if "recall_low" in frame.columns else frame["recall"]
    ok = frame[judged.astype(float) >= float(target)]
    if "brute_force" in ok.columns:
        ok = ok[~ok["brute_force"].astype(bool)]
    if ok.empty:
        return None
    return ok.sort_values(["p50_ms", "recall"], ascending=[True, False]).iloc[0]


def setting_params(row: pd.Series | Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """The query parameters of one sweep row (missing values left out, numpy types plain)."""
    out = {}
    for key in keys:
        value = row[key]
        if value is None or (isinstance(value, float) and np.isnan(value)):
            continue
        value = value.item() if hasattr(value, "item") else value
        out[key] = int(value) if isinstance(value, float) and value.is_integer() else value
    return out


def python_snippets(
    connect_line: str,
    table_id: Sequence[str],
    column: str,
    k: int,
    params: Mapping[str, Any],
    *,
    text: str | None = None,
    branch: str | None = None,
) -> tuple[str, str]:
    """The setting as Python: ``(backend call, plain pylance call)``. The pylance arguments
    are those the local backend gives the scanner for the same request. With ``text`` the
    query vector is that text embedded with the table's own embedding (its
    ``embedding.function`` property, :func:`backend.services.search.embed_text`), as the
    page embeds it; else the table's first row's vector stands in for the user's own. On
    ``branch`` (not main) both search that branch: the request's ``branch``, and the dataset
    checked out at it."""
    on = branch if branch and branch != "main" else None
    shown = {**params, "branch": on} if on else dict(params)
    fields = ", ".join(f"{key}={value!r}" for key, value in shown.items())
    extra = f", {fields}" if fields else ""
    checkout = f".checkout_version(({on!r}, None))" if on else ""
    # Both run as pasted: the table's location (and properties) from DescribeTable.
    described = f"table = ns.describe_table(DescribeTableRequest(id={list(table_id)!r}))\n"
    if text is not None:
        query = (
            "# the query vector: the text, embedded with the table's embedding.function\n"
            f"query = search.embed_text(table.properties, {text!r})\n"
        )
    else:
        query = (
            "# the query vector: the first row's (put your own here)\n"
            f"query = lance.dataset(table.location){checkout}.take([0], columns=[{column!r}])"
            f".column({column!r})[0].as_py()\n"
        )
    prelude = f"{connect_line}\n{described}location = table.location\n{query}"
    imports = (
        "import lance\nfrom lance_namespace import DescribeTableRequest\n\nimport backend\n"
        "from backend.services import search\n"
    )
    console = (
        imports
        + "\n"
        + prelude
        + f"request = search.query_request(\n    {list(table_id)!r}, vector=query, "
        f"vector_column={column!r}, k={k}{extra}\n)\n"
        "rows = search.run_query(ns, request)\n"
        "print(rows)\n"
    )
    probe = search.query_request(table_id, vector=[0.0], vector_column=column, k=k, **params)
    arguments = scanner_arguments(probe)
    nearest = {key: value for key, value in arguments.pop("nearest").items() if key != "q"}
    nearest_text = ", ".join(f"{key!r}: {value!r}" for key, value in nearest.items())
    others = "".join(f", {key}={value!r}" for key, value in arguments.items())
    pylance = (
        imports + "\n" + prelude + f"ds = lance.dataset(location){checkout}\n"
        f"rows = ds.to_table(nearest={{{nearest_text}, 'q': query}}{others})\n"
        "print(rows)\n"
    )
    return console, pylance


# -- shareable settings (query parameters of the Search & tune page) ---------------------------------
# ``text``: the query vector is that text, embedded with the table's embedding
SHARE_KEYS: tuple[str, ...] = (
    "column", "k", "distance_type", *search.VECTOR_QUERY_PARAMS, "text",
)  # fmt: skip
_BOOL_PARAMS = frozenset({"fast_search", "bypass_vector_index", "prefilter"})


def share_params(
    column: str, k: int, params: Mapping[str, Any], *, text: str | None = None
) -> dict[str, str]:
    """A vector search setting as URL query parameters (``?column=vector&k=10&nprobes=8``;
    ``&text=...`` when the query vector is a text, embedded)."""
    out = {"column": str(column), "k": str(int(k))}
    for key, value in params.items():
        if key in SHARE_KEYS and key != "text" and value is not None:
            out[key] = str(value).lower() if key in _BOOL_PARAMS else str(value)
    if text is not None:
        out["text"] = text
    return out


def parse_share_params(query: Mapping[str, str]) -> dict[str, Any]:
    """The setting a shared URL carries (:func:`share_params`), checked by the query rule;
    unknown keys are ignored, a bad value raises ``InvalidInputError``."""
    out: dict[str, Any] = {}
    for key in SHARE_KEYS:
        text = query.get(key)
        if text is None or text == "":
            continue
        if key in ("column", "distance_type"):
            out[key] = str(text)
        elif key == "text":
            if len(text) > query_rules.MAX_QUERY_TEXT:
                raise InvalidInputError(
                    f"the text is longer than {query_rules.MAX_QUERY_TEXT:,} characters"
                )
            out[key] = str(text)
        elif key in _BOOL_PARAMS:
            if text.lower() not in ("true", "false"):
                raise InvalidInputError(f"{key} must be true or false, got {text!r}")
            out[key] = text.lower() == "true"
        else:
            try:
                out[key] = int(text)
            except ValueError:
                raise InvalidInputError(f"{key} must be a whole number, got {text!r}") from None
    problems = query_rules.query_problems(
        SimpleNamespace(**{k: v for k, v in out.items() if k != "text"})
    )
    if problems:
        raise InvalidInputError(problems[0])
    return out


# -- build configurations compared on a scratch copy ------------------------------------------------
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
    import lance

    info = vector_column(ns, table_id, column)
    if not configs:
        raise InvalidInputError("give at least one build configuration")
    table_metric = search.index_metric(ns, table_id, column)
    say = progress or (lambda stage, fraction: None)
    say("copying a sample of the table", 0.0)
    rows = search.read_rows(ns, table_id, limit=int(sample_rows), columns=[column])
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
                    "p50_ms": search.percentile(times, 50),
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
    from lance_namespace import CreateTableIndexRequest

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
    own = int(row[search.ROW_ID])
    ids = [int(i) for i in table.column(search.ROW_ID).to_pylist() if int(i) != own]
    return ids[:k], elapsed


# -- requested against applied ----------------------------------------------------------------------
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
                out[name] = int(value) if str(value).isdigit() else value
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


# -- maintenance ------------------------------------------------------------------------------------
MAINTENANCE_UNSUPPORTED = (
    "The Lance Namespace spec has no operation to optimize indexes, compact files or clean up "
    "old versions' files: over REST this is the server's job (or run it with pylance next to "
    "the data)."
)


def optimize_indexes(ns: LanceNamespace, table_id: Sequence[str]) -> dict[str, Any]:
    """Add the rows the indexes do not cover yet (local backend)."""
    method = getattr(ns, "optimize_indexes", None)
    if method is None:
        raise UnsupportedOperationError(MAINTENANCE_UNSUPPORTED)
    return method(list(table_id))


def compact_files(
    ns: LanceNamespace,
    table_id: Sequence[str],
    *,
    options: Mapping[str, Any] | None = None,
    progress: Callable[[dict[str, Any]], None] | None = None,
    resume: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Merge small data files (local backend): lance's compaction ``options``, progress per
    task, stopped between tasks when ``progress`` raises ``OperationStopped``, resumed from
    the checkpoint of an earlier run (``backend.local.compaction``)."""
    method = getattr(ns, "compact_files", None)
    if method is None:
        raise UnsupportedOperationError(MAINTENANCE_UNSUPPORTED)
    if options is None and progress is None and resume is None:
        return method(list(table_id))
    return method(list(table_id), options=options, progress=progress, resume=resume)


def cleanup_old_versions(
    ns: LanceNamespace, table_id: Sequence[str], older_than_days: int
) -> dict[str, Any]:
    """Remove the files of versions older than ``older_than_days`` days, never the latest
    nor a tagged version (local backend; admins only: time travel to them ends)."""
    method = getattr(ns, "cleanup_old_versions", None)
    if method is None:
        raise UnsupportedOperationError(MAINTENANCE_UNSUPPORTED)
    return method({"id": list(table_id), "older_than_days": older_than_days})


def result_json(frame: pd.DataFrame) -> str:
    return json.dumps(frame.to_dict("records"), default=str)


__all__ = [
    "AB_COLUMNS",
    "MAINTENANCE_UNSUPPORTED",
    "SCRATCH_NOTE",
    "SHARE_KEYS",
    "SWEEP_COLUMNS",
    "RecallResult",
    "applied_params",
    "build_ab",
    "cheapest",
    "cleanup_old_versions",
    "compact_files",
    "describe_config",
    "grid_points",
    "optimize_indexes",
    "parse_grid_values",
    "parse_share_params",
    "pareto_front",
    "python_snippets",
    "more_queries",
    "recall",
    "requested_vs_applied",
    "sample_queries",
    "setting_params",
    "share_params",
    "sweep",
    "vector_column",
]
