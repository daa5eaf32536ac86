"""recall@k of ANN search against exact search over a seeded sample of the table's own rows
(the query row itself excluded on both sides), with latencies; more queries merged into a
measurement; the 95% confidence interval of a mean recall (Student's t)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
from lance_namespace import DescribeTableRequest, LanceNamespace
from lance_namespace.errors import (
    InternalError,
    InvalidInputError,
    TableVersionNotFoundError,
)

from backend import html_tables, redaction, stats
from backend.branch_view import branch_of
from backend.errors import reworded
from backend.rules import ids, query_rules
from backend.rules.columns import columns_from_schema
from backend.services.search.query import ROW_ID, count_rows, percentile, query_request, run_query
from backend.services.search.vector import query_metric
from backend.spec import catalog_views

MAX_SAMPLE = 1000
MAX_K = query_rules.MAX_K - 1  # the query asks for k + 1 (the row itself)
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
    # ``(among, rows)``: the queries were drawn among the first ``among`` of the table's
    # ``rows`` rows (:data:`SAMPLED_ROWS_AT_MOST`); ``None``: among every row
    drawn_among: tuple[int, int] | None = None

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
        return percentile(self.ann_ms, 50)

    @property
    def ann_p95_ms(self) -> float:
        return percentile(self.ann_ms, 95)

    @property
    def exact_p50_ms(self) -> float:
        return percentile(self.exact_ms, 50)

    @property
    def exact_p95_ms(self) -> float:
        return percentile(self.exact_ms, 95)

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


class Sample(list[_Query]):
    """The sampled rows (a list of queries) and what they were drawn among: the first
    ``among`` of the ``rows`` rows the table (its version, its filter) holds. ``among`` is
    less than ``rows`` only past :data:`SAMPLED_ROWS_AT_MOST`."""

    def __init__(self, queries: Sequence[_Query], *, rows: int, among: int) -> None:
        super().__init__(queries)
        self.rows, self.among = rows, among

    @property
    def drawn_among(self) -> tuple[int, int] | None:
        """``(among, rows)`` where the queries were drawn among the first rows only, else
        ``None``: what a result says of its sample (``RecallResult.drawn_among``)."""
        return (self.among, self.rows) if self.among < self.rows else None


# A row is sampled by its position (QueryTable's offset), which reaches no further than
# ``query_rules.MAX_OFFSET``: a larger table's queries are drawn among its first rows, and the
# result says so (``RecallResult.drawn_among``).
SAMPLED_ROWS_AT_MOST = query_rules.MAX_OFFSET + 1


def _row_ids(table: Any, what: str) -> list[int]:
    """The ``_rowid`` column of a QueryTable answer (asked for with ``with_row_id``) as whole
    numbers; an ``InternalError`` naming ``what`` the answer was for where the server left it
    out, or sent nulls or other than whole numbers: a measurement never reads a server's
    answer it cannot trust as a row's identity."""
    if ROW_ID not in table.column_names:
        raise InternalError(f"the server's answer to {what} has no {ROW_ID} column")
    column = table.column(ROW_ID)
    if not pa.types.is_integer(column.type) or column.null_count:
        raise InternalError(
            f"the server's answer to {what} holds {ROW_ID} values that are not row ids "
            f"({column.type}, {column.null_count} null)"
        )
    return [int(i) for i in column.to_pylist()]


def _vector(table: Any, column: str, what: str) -> list[float]:
    """The first row's vector in ``column`` of a QueryTable answer as floats; an
    ``InternalError`` where the server left the column out or sent no vector of numbers."""
    value = table.column(column)[0].as_py() if column in table.column_names else None
    if not isinstance(value, list) or not value:
        raise InternalError(f"the server's answer to {what} has no vector in {column!r}")
    try:
        return [float(x) for x in value]
    except (TypeError, ValueError):
        raise InternalError(
            f"the server's answer to {what} holds a vector in {column!r} that is not numbers"
        ) from None


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


def check_k_and_sample(k: int, sample: int) -> None:
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
) -> Sample:
    """``sample`` rows chosen with ``seed`` among the table's rows (the same on every
    backend: positions in the table's scan order; past :data:`SAMPLED_ROWS_AT_MOST` rows,
    among the first of them), with their row ids and vectors; never a position of ``exclude``
    (the queries of an earlier measurement). Each is searched without itself: a table of
    fewer than 2 rows has nothing to find."""
    total = count_rows(ns, table_id, version=version, filter=filter)
    if total == 0:
        raise InvalidInputError("the table has no rows to sample")
    if total == 1:
        raise InvalidInputError(
            "the table has 1 row: recall searches each sampled row without itself, so it "
            "needs 2 rows or more"
        )
    among = min(total, SAMPLED_ROWS_AT_MOST)
    used = {int(p) for p in exclude if 0 <= int(p) < among}
    if len(used) >= among:
        raise InvalidInputError(f"every row of the table ({among:,}) is already a query")
    rng = np.random.default_rng(seed if isinstance(seed, int) else [int(s) for s in seed])
    if used:
        free = np.setdiff1d(np.arange(among), np.fromiter(used, dtype=np.int64))
        picked = rng.choice(free, size=min(int(sample), len(free)), replace=False)
    else:
        picked = rng.choice(among, size=min(int(sample), among), replace=False)
    queries = []
    for pos in sorted(int(p) for p in picked):
        req = query_request(
            table_id, k=1, offset=int(pos) or None, columns=[column], with_row_id=True,
            version=version, filter=filter,
        )  # fmt: skip
        row = run_query(ns, req)
        what = f"the sampled row at position {pos:,}"
        if row.num_rows == 0:
            raise InternalError(
                f"the server answered no row at position {pos:,}, where it counted {total:,}"
            )
        queries.append(_Query(_row_ids(row, what)[0], _vector(row, column, what), pos))
    return Sample(queries, rows=total, among=among)


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
    req = query_request(
        table_id, vector=query.vector, vector_column=column, k=k + 1, columns=[],
        with_row_id=True, **params,
    )  # fmt: skip
    started = time.perf_counter()
    table = run_query(ns, req)
    elapsed = (time.perf_counter() - started) * 1000.0
    found = _row_ids(table, f"the search of row {query.row_id}")
    ids = list(dict.fromkeys(i for i in found if i != query.row_id))  # each row once
    return ids[:k], elapsed


def _searches(
    ns: LanceNamespace,
    table_id: Sequence[str],
    queries: Sequence[_Query],
    column: str,
    k: int,
    params: Mapping[str, Any],
    tick: Callable[[], None] | None = None,
) -> tuple[list[list[int]], list[float]]:
    """Each query's neighbours under ``params`` and its latency, timed warm: every query is
    sent once untimed first. A search pays once for what it reads first (the index, the
    partitions it probes, the server's copy of the table, the connection): measured cold, the
    setting measured first looks slower, and a sweep's "cheapest" is picked by the order."""
    for q in queries:
        _neighbours(ns, table_id, q, column, k, params)
        if tick is not None:
            tick()
    found, times = [], []
    for q in queries:
        ids, ms = _neighbours(ns, table_id, q, column, k, params)
        found.append(ids)
        times.append(ms)
        if tick is not None:
            tick()
    return found, times


def exact_neighbours(
    ns: LanceNamespace,
    table_id: Sequence[str],
    queries: Sequence[_Query],
    column: str,
    k: int,
    base: Mapping[str, Any],
    tick: Callable[[], None] | None = None,
) -> tuple[list[list[int]], list[float]]:
    """Each query's exact neighbours (the index bypassed) and latency (:func:`_searches`)."""
    return _searches(ns, table_id, queries, column, k, {**base, "bypass_vector_index": True}, tick)


def ann_recalls(
    ns: LanceNamespace,
    table_id: Sequence[str],
    queries: Sequence[_Query],
    truth: Sequence[Sequence[int]],
    column: str,
    k: int,
    params: Mapping[str, Any],
    tick: Callable[[], None] | None = None,
) -> tuple[list[float], list[float]]:
    """Each query's recall of ``truth`` under ``params`` and latency (:func:`_searches`)."""
    found, times = _searches(ns, table_id, queries, column, k, params, tick)
    per_query = [
        len(set(ids) & set(expected)) / max(1, len(set(expected)))
        for ids, expected in zip(found, truth, strict=True)
    ]
    return per_query, times


BASE_FIELDS = ("distance_type", "version", "filter", "prefilter")


def at_one_version(
    ns: LanceNamespace, table_id: Sequence[str], params: Mapping[str, Any]
) -> dict[str, Any]:
    """``params`` with ``version``: the one given, else the table's latest now (of the branch
    ``ns`` acts on). Every search of one measurement (the sample, the exact searches, the ANN
    searches) then reads the same rows: another writer's commit during a measurement would
    otherwise move its later searches to other rows than its earlier ones (ANN results
    measured against neighbours from before them, a sampled row gone). A table whose latest
    version cannot be told: ``params`` as given."""
    if params.get("version") is not None:
        return dict(params)
    latest = catalog_views.latest_version(ns, table_id, branch_of(ns))
    return {**params, "version": latest} if latest is not None else dict(params)


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
    its ANN search, each sent twice (``total`` is four times the sample drawn: every search
    is timed warm, :func:`_searches`). Every search reads one version, ``version`` or the
    latest as the measurement starts (:func:`at_one_version`), which the result's
    ``query_params`` name (and :func:`more_queries` measures at)."""
    check_k_and_sample(k, sample)
    info = vector_column(ns, table_id, column)
    query_params = {key: value for key, value in query_params.items() if value is not None}
    query_params = at_one_version(ns, table_id, query_params)
    metric = query_metric(
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
    base = {f: sent[f] for f in BASE_FIELDS if sent.get(f) is not None}
    before = previous.positions if previous is not None else []
    # a first sample draws with the seed alone (as it always did); each later batch with the
    # seed and the number of queries before it, so that one run's batches are reproducible
    draw: int | list[int] = seed if not before else [seed, len(before)]
    drawn = sample_queries(
        ns, table_id, column, sample, draw, version=base.get("version"),
        filter=base.get("filter"), exclude=before,
    )  # fmt: skip
    queries: list[_Query] = list(drawn)
    if previous is not None:
        seen = set(previous.query_rows)
        queries = [q for q in queries if q.row_id not in seen]  # the table changed since
        if not queries:
            raise InvalidInputError("no row left that was not a query already")
    done, total = [0], 4 * len(queries)  # two passes of each kind (_searches)

    def tick() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total)

    truth, exact_ms = exact_neighbours(ns, table_id, queries, column, k, base, tick)
    per_query, ann_ms = ann_recalls(ns, table_id, queries, truth, column, k, sent, tick)
    old = previous or RecallResult(k, [], [], [])
    return RecallResult(
        k, old.per_query + per_query, old.ann_ms + ann_ms, old.exact_ms + exact_ms,
        dict(query_params), metric=metric.metric, index_metric=metric.index_metric,
        brute_force=metric.brute_force_reason(bool(query_params.get("bypass_vector_index"))),
        column=column, seed=seed, query_rows=old.query_rows + [q.row_id for q in queries],
        positions=old.positions + [q.position for q in queries],
        drawn_among=drawn.drawn_among,
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
    does not record its queries (made before they were recorded). The new queries read the
    version the result names; one cleaned up since is a ``TableVersionNotFoundError`` saying
    so."""
    if previous.column is None or previous.seed is None or not previous.positions:
        raise InvalidInputError(
            "this measurement does not record its queries: measure recall again to add more"
        )
    check_k_and_sample(previous.k, sample)
    info = vector_column(ns, table_id, previous.column)
    params = dict(previous.query_params)
    if previous.metric is not None:
        chosen = params.get("distance_type") is not None
        metric = query_rules.QueryMetric(previous.metric, previous.index_metric, chosen)
    else:
        metric = query_metric(
            ns, table_id, previous.column, params.get("distance_type"),
            version=params.get("version"), column_kind=info.kind,
        )  # fmt: skip
    try:
        return _recall_of(
            ns, table_id, previous.column, previous.k, sample, previous.seed, params, metric,
            progress, previous=previous,
        )  # fmt: skip
    except TableVersionNotFoundError as exc:
        version = params.get("version")
        if version is None:
            raise
        line = (
            f"version {version} of {ids.display_id(list(table_id))}, which this measurement "
            "read, no longer exists (cleaned up since): measure recall again"
        )
        reworded(exc, line, str(exc))  # lance's text stays behind the expander
        raise
