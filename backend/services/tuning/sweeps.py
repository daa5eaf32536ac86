"""The parameter sweep: recall and latency for every combination of a grid of query
parameters, the Pareto front, and the cheapest setting whose recall reaches a target with
confidence."""

from __future__ import annotations

import itertools
import json
import statistics
from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
from lance_namespace import LanceNamespace
from lance_namespace.errors import InvalidInputError

from backend.rules import query_rules
from backend.services.search.query import VECTOR_QUERY_PARAMS, percentile
from backend.services.search.vector import index_metric
from backend.services.tuning.measure import (
    BASE_FIELDS,
    ann_recalls,
    at_one_version,
    check_k_and_sample,
    exact_neighbours,
    recall_interval,
    recall_std,
    sample_queries,
    vector_column,
)

MAX_GRID_POINTS = 200


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
    unknown = sorted(set(grid) - set(VECTOR_QUERY_PARAMS) - {"distance_type"})
    if unknown:
        raise InvalidInputError(
            f"unknown query parameter(s) {', '.join(unknown)}; a grid takes "
            + ", ".join(VECTOR_QUERY_PARAMS)
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
    follows the points. Every point reads one version: ``version`` of ``base_params``, else
    the latest as the sweep starts (``measure.at_one_version``)."""
    check_k_and_sample(k, sample)
    grid = dict(grid or {})
    points = grid_points(grid)
    info = vector_column(ns, table_id, column)
    base_params = {key: value for key, value in base_params.items() if value is not None}
    base_params = at_one_version(ns, table_id, base_params)
    version = base_params.get("version")
    indexed = index_metric(ns, table_id, column, version=version)
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
        base = {f: params[f] for f in BASE_FIELDS if params.get(f) is not None}
        fields = tuple(sorted(base.items()))
        if fields not in truths:
            truths[fields] = exact_neighbours(ns, table_id, queries, column, k, base)[0]
        per_query, times = ann_recalls(ns, table_id, queries, truths[fields], column, k, params)
        low, high = recall_interval(per_query)
        rows.append(
            {
                **{key: point.get(key) for key in grid},
                "recall": float(statistics.fmean(per_query)),
                "recall_std": recall_std(per_query),
                "recall_low": low,
                "recall_high": high,
                "queries": len(per_query),
                "p50_ms": percentile(times, 50),
                "p95_ms": percentile(times, 95),
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
    # where every point searched: the version, and the rows the queries were drawn among
    # (``measure.RecallResult.drawn_among``: set past ``SAMPLED_ROWS_AT_MOST`` rows only)
    frame.attrs["version"] = version
    frame.attrs["drawn_among"] = queries.drawn_among
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


# Query parameters that count work: a larger value makes the same search do more (probes more
# partitions, re-ranks more candidates, visits more graph nodes).
WORK_PARAMS = frozenset({"nprobes", "minimum_nprobes", "maximum_nprobes", "refine_factor", "ef"})
NONE_IS_ZERO = frozenset({"refine_factor"})  # not sent: no re-ranking (the others: a default)


def _unset(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def less_work(a: Mapping[str, Any], b: Mapping[str, Any], keys: Sequence[str]) -> bool:
    """Setting ``a`` asks for less work than ``b``: on every key of the grid the same value, or
    for a :data:`WORK_PARAMS` count, both given and ``a``'s no larger; one smaller (a refine
    factor not sent is no re-ranking: 0). A key one leaves at the backend's default and the
    other sets, or any other parameter that differs (a metric, a switch), makes them not
    comparable (``False``)."""
    smaller = False
    for key in keys:
        x: Any = a.get(key)
        y: Any = b.get(key)
        if key in NONE_IS_ZERO:  # not sent: none of that work
            x, y = (0 if _unset(x) else x), (0 if _unset(y) else y)
        if _unset(x) and _unset(y):
            continue
        if _unset(x) or _unset(y):
            return False
        if x == y:
            continue
        if key in WORK_PARAMS and float(x) < float(y):
            smaller = True
            continue
        return False
    return smaller


def _reaching(frame: pd.DataFrame, target: float) -> pd.DataFrame:
    judged = frame["recall_low"] if "recall_low" in frame.columns else frame["recall"]
    ok = frame[judged.astype(float) >= float(target)]
    if "brute_force" in ok.columns:
        ok = ok[~ok["brute_force"].astype(bool)]
    return ok


def _quickest(rows: pd.DataFrame) -> pd.Series:
    """The row of the lowest p50 (the higher recall between equals)."""
    return rows.sort_values(["p50_ms", "recall"], ascending=[True, False]).iloc[0]


def fastest(frame: pd.DataFrame, target: float) -> pd.Series | None:
    """The setting with the lowest measured p50 latency among those whose recall reaches
    ``target`` with confidence (as :func:`cheapest` judges it), whatever work it asks for."""
    ok = _reaching(frame, target)
    return None if ok.empty else _quickest(ok)


def cheapest(frame: pd.DataFrame, target: float) -> pd.Series | None:
    """The setting with the lowest p50 latency whose recall reaches ``target`` with
    confidence: the lower bound of its interval (``recall_low``, a sweep's column) reaches it
    (a setting measured on one query has none, and reaches nothing); a frame without
    intervals is judged on ``recall``. ``None``: none does. Settings that ran
    as brute force (a ``brute_force`` column) are not index settings and are left out.

    A setting that asks for more work than another one that reaches the target too
    (:func:`less_work`: more probes, a larger refine factor, the rest the same) is not the
    cheaper one, whatever its p50: the same queries cannot take less time with more work, so
    a lower p50 there is the measurement's spread (two settings that do the same work, such as
    nprobes 1 and 4 on an index of one partition, measure apart under load)."""
    ok = _reaching(frame, target)
    if ok.empty:
        return None
    keys = [c for c in frame.columns if c not in SWEEP_COLUMNS and c != "pareto"]
    rows = {i: ok.loc[i].to_dict() for i in ok.index}
    lean = [
        i
        for i in ok.index
        if not any(less_work(rows[j], rows[i], keys) for j in ok.index if j != i)
    ]
    return _quickest(ok.loc[lean])


def setting_params(row: pd.Series | Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """The query parameters of one sweep row (missing values left out, numpy types plain)."""
    out = {}
    for key in keys:
        value = row[key]
        if _unset(value):
            continue
        value = value.item() if hasattr(value, "item") else value
        out[key] = int(value) if isinstance(value, float) and value.is_integer() else value
    return out


def setting_text(row: pd.Series | Mapping[str, Any], keys: Sequence[str]) -> str:
    """One sweep row's setting as text: ``nprobes=4, refine_factor=10``, or ``defaults``."""
    return ", ".join(f"{k}={v}" for k, v in setting_params(row, keys).items()) or "defaults"


def result_json(frame: pd.DataFrame) -> str:
    return json.dumps(frame.to_dict("records"), default=str)
