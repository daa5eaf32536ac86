"""The rule for QueryTable (and the query inside ExplainTableQueryPlan and
AnalyzeTableQueryPlan): ranges of k, offset and the vector search settings, a finite query
vector, known distances, non-empty column lists; which column a vector search uses when none
is named (:func:`resolve_vector_column`: the table's only vector column).

``backend.rules.request_rules`` applies it to every query request on both backends; the search
page and the tuning helpers build requests that pass it and show its message when a typed
setting does not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from backend.errors import invalid
from backend.rules import index_rules, version_ranges

MAX_K = 10_000
MAX_OFFSET = 10_000_000
MAX_NPROBES = 100_000
MAX_REFINE_FACTOR = 1_000
MAX_EF = 100_000
MAX_VECTOR_DIM = 65_536
MAX_QUERY_TEXT = 10_000
MAX_REPEATS = 100  # timed runs of one search on the search page
MAX_ROW_ID = (1 << 63) - 1

# Integer settings of a vector search and the range each must fall in.
_RANGES: dict[str, tuple[int, int]] = {
    "nprobes": (1, MAX_NPROBES),
    "minimum_nprobes": (1, MAX_NPROBES),
    "maximum_nprobes": (1, MAX_NPROBES),
    "refine_factor": (1, MAX_REFINE_FACTOR),
    "ef": (1, MAX_EF),
}
# Every whole number a query form asks for and its range: the query's own fields, the row a
# query vector is taken from, and how often a search is timed (``numbers.whole_number``
# parses what is typed against these).
RANGES: dict[str, tuple[int, int]] = {
    "k": (1, MAX_K),
    "offset": (0, MAX_OFFSET),
    **_RANGES,
    "row": (0, MAX_ROW_ID),
    "repeats": (1, MAX_REPEATS),
}


NOT_FINITE = "the query vector must hold finite numbers only"
TOO_LONG = f"the query vector has more than {MAX_VECTOR_DIM:,} numbers"


def _numbers(row: Any) -> np.ndarray | None:
    """One query vector as a 1-D numpy array of numbers (bool, integer or float), converted
    once; ``None`` when it is not a flat sequence of numbers."""
    try:
        values = np.asarray(row)
    except (TypeError, ValueError):  # ragged nesting
        return None
    if values.ndim != 1 or values.dtype.kind not in "biuf":
        return None
    return values


def _finite_sum(row: list[Any]) -> bool:
    """Whether the sum of ``row`` is a finite int or float: then every item is a finite
    number (a NaN or an infinity makes the sum one; anything else but numbers fails to add up
    or adds up to something else). ``False`` says nothing: finite numbers can overflow, and
    :func:`_numbers` decides."""
    try:
        total = sum(row)
    except TypeError:
        return False
    return type(total) in (int, float) and math.isfinite(total)


def _row_problem(row: Any) -> str | None:
    try:
        size = len(row)
    except TypeError:
        return NOT_FINITE
    if size > MAX_VECTOR_DIM:
        return TOO_LONG
    if type(row) is list and _finite_sum(row):
        return None  # numbers only, each finite: no array needed (the usual request)
    values = _numbers(row)
    if values is None:
        return NOT_FINITE
    # one vectorised pass: NaN and infinities (integers and booleans are always finite)
    if values.dtype.kind == "f" and not np.isfinite(values).all():
        return NOT_FINITE
    return None


def _vector_problems(vector: Any) -> list[str]:
    if vector is None:
        return []
    single = getattr(vector, "single_vector", None)
    multi = getattr(vector, "multi_vector", None)
    rows = list(multi or [])
    if single is not None:
        if not hasattr(single, "__len__"):
            return [NOT_FINITE]
        if len(single):  # an empty vector is no vector search
            rows.insert(0, single)
    for row in rows:
        problem = _row_problem(row)
        if problem:
            return [problem]
    return []


def _fts_problems(fts: Any) -> list[str]:
    if fts is None:
        return []
    string = getattr(fts, "string_query", None)
    structured = getattr(fts, "structured_query", None)
    if string is None and structured is None:
        return ["the full-text query is empty"]
    if string is not None:
        text = string.query or ""
        if not text.strip():
            return ["enter the text to search for"]
        if len(text) > MAX_QUERY_TEXT:
            return [f"the search text is longer than {MAX_QUERY_TEXT:,} characters"]
        if string.columns is not None and not [c for c in string.columns if str(c).strip()]:
            return ["pick the column(s) to search"]
    return []


def query_problems(query: Any) -> list[str]:
    """What is wrong with a QueryTableRequest (or an Explain/Analyze query); ``[]`` if fine."""
    problems: list[str] = []
    for name in ("k", "offset", *_RANGES):
        low, high = RANGES[name]
        value = getattr(query, name, None)
        if value is not None and (not version_ranges.is_int(value) or not low <= value <= high):
            problems.append(f"{name} must be between {low:,} and {high:,}, got {value!r}")
    low_p, high_p = getattr(query, "minimum_nprobes", None), getattr(query, "maximum_nprobes", None)
    if isinstance(low_p, int) and isinstance(high_p, int) and low_p > high_p:
        problems.append(
            f"minimum_nprobes ({low_p}) must not be more than maximum_nprobes ({high_p})"
        )
    low_b, high_b = getattr(query, "lower_bound", None), getattr(query, "upper_bound", None)
    for name, value in (("lower_bound", low_b), ("upper_bound", high_b)):
        if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value)):
            problems.append(f"{name} must be a finite number")
    if (
        isinstance(low_b, (int, float))
        and isinstance(high_b, (int, float))
        and math.isfinite(low_b)
        and math.isfinite(high_b)
        and low_b > high_b
    ):
        problems.append("lower_bound must not be more than upper_bound")
    distance = getattr(query, "distance_type", None)
    if distance is not None and index_rules.normalize_distance(distance) is None:
        problems.append(
            f"unknown distance {distance!r}; use one of "
            + ", ".join(sorted(index_rules.DISTANCE_TYPES))
        )
    columns = getattr(query, "columns", None)
    names = getattr(columns, "column_names", None) if columns is not None else None
    if names is not None and any(not str(n).strip() for n in names):
        problems.append("a column name is empty")
    column = getattr(query, "vector_column", None)
    if column is not None and not str(column).strip():
        problems.append("the vector column name is empty")
    problems += _vector_problems(getattr(query, "vector", None))
    problems += _fts_problems(getattr(query, "full_text_query", None))
    return problems


def probes_beyond_partitions(params: Mapping[str, Any], partitions: int | None) -> str | None:
    """What a vector query asking for more probes (``nprobes`` or ``minimum_nprobes``) than
    its IVF index has partitions gets: lance probes every partition and no more. ``None``
    when the probes fit or the number of partitions is unknown."""
    if not partitions:
        return None
    asked = {
        name: params[name]
        for name in ("nprobes", "minimum_nprobes")
        if version_ranges.is_int(params.get(name)) and params[name] > partitions
    }
    if not asked:
        return None
    what = " and ".join(f"{name} {value:,}" for name, value in asked.items())
    return (
        f"{what}: the index has {partitions:,} IVF partitions, and lance probes at most "
        f"{partitions:,} partitions (every one of them); a larger value searches no more"
    )


# -- the metric of a vector query ------------------------------------------------------------------
INCOMPATIBLE_NOTE = (
    "lance searches without the index ('incompatible with index metric ... falling back to "
    "brute-force search')"
)


@dataclass(frozen=True)
class QueryMetric:
    """The distance a vector query on a column is measured with, and where it comes from."""

    metric: str  # what the query (and its exact ground truth) computes
    index_metric: str | None  # the metric the column's vector index was built with
    chosen: bool  # the caller asked for ``metric``; else it is the index's or lance's default

    @property
    def mismatch(self) -> bool:
        """The query asks for another metric than its index's: lance goes brute force."""
        return self.index_metric is not None and self.metric != self.index_metric

    @property
    def source(self) -> str:
        if self.index_metric is not None and self.metric == self.index_metric:
            return "the index's"
        return "chosen" if self.chosen else "lance's default"

    def brute_force_reason(self, bypass: bool = False) -> str | None:
        """Why a query with this metric runs as brute force (``None``: it uses the index)."""
        if self.mismatch:
            return (
                f"the query's metric ({self.metric}) is not the index's ({self.index_metric}): "
                + INCOMPATIBLE_NOTE
            )
        if self.index_metric is None:
            return "the column has no vector index: every query is brute force"
        if bypass:
            return "bypass_vector_index: exact search without the index"
        return None

    def describe(self) -> str:
        """``distance cosine (the index's)``, as the page shows it."""
        return f"distance {self.metric} ({self.source})"


def query_metric(
    index_metric: str | None, requested: str | None = None, *, column_kind: str = "vector"
) -> QueryMetric:
    """The one rule of a vector query's metric on a column: the metric asked for, if any;
    else the metric of the column's vector index; else lance's default (hamming for binary
    vectors, l2 for floats). Every search, exact search, recall, sweep, build A/B and plan
    goes through it, so the exact ground truth is computed with the metric of the index
    being measured unless another one is chosen. ``InvalidInputError`` for an unknown one."""
    from lance_namespace.errors import InvalidInputError

    indexed = index_rules.normalize_distance(index_metric)
    if requested is not None and str(requested).strip():
        metric = index_rules.normalize_distance(requested)
        if metric is None:
            raise InvalidInputError(
                f"unknown distance {requested!r}; use one of "
                + ", ".join(sorted(index_rules.DISTANCE_TYPES))
            )
        return QueryMetric(metric, indexed, True)
    if indexed is not None:
        return QueryMetric(indexed, indexed, False)
    return QueryMetric("hamming" if column_kind == "binary_vector" else "l2", None, False)


VECTOR_KINDS: tuple[str, ...] = ("vector", "binary_vector", "multivector")
DEFAULT_VECTOR_COLUMN = "vector"  # what lance searches when a request names no column


def resolve_vector_column(kinds: Mapping[str, str], requested: str | None) -> str:
    """The column a vector search runs on, given the kind of each of the table's columns
    (name -> ``backend.arrow.types`` kind). Named: it must exist and hold vectors. Not named:
    the table's only vector column (or, among several, the one called ``vector``, as lance
    would pick). Otherwise an ``InvalidInputError`` naming the table's vector columns (never
    the engine's own error, which carries its source paths). The one rule of the local
    backend's queries and the notebook conveniences (``backend.services.frames``)."""
    if requested is not None and kinds.get(requested) in VECTOR_KINDS:
        return requested
    vectors = [n for n, kind in kinds.items() if kind in VECTOR_KINDS]
    offered = (
        f"its vector columns: {', '.join(vectors)}" if vectors else "the table has no vector column"
    )
    if requested is not None:
        if requested not in kinds:
            raise invalid(f"vector_column {requested!r} does not exist ({offered})")
        raise invalid(f"vector_column {requested!r} does not hold vectors ({offered})")
    if len(vectors) == 1:
        return vectors[0]
    if DEFAULT_VECTOR_COLUMN in vectors:
        return DEFAULT_VECTOR_COLUMN
    if not vectors:
        raise invalid(f"a vector search needs a vector column: {offered}")
    raise invalid(f"a vector search on this table must name its vector_column ({offered})")


# Kinds of column (``backend.arrow.types``) a full-text search cannot search: lance searches
# text (and JSON) columns, and the fields of structs by their paths.
_NOT_TEXT_KINDS = frozenset(
    {"integer", "float", "decimal", "temporal", "boolean", *VECTOR_KINDS, "fixed_binary"}
)


def fts_columns(fts: Any) -> list[str]:
    """The columns a full-text query names (a match's columns, a phrase's or a structured
    match's column)."""
    string = getattr(fts, "string_query", None)
    if string is not None:
        return [str(c) for c in (string.columns or [])]
    structured = getattr(getattr(fts, "structured_query", None), "query", None)
    found = []
    for part in ("phrase", "match"):
        column = getattr(getattr(structured, part, None), "column", None)
        if column:
            found.append(str(column))
    return found


def fts_column_problem(kinds: Mapping[str, str], fts: Any) -> str | None:
    """Why a full-text query cannot search a column it names, given the kind of each of the
    table's columns: no such column (a struct's field path is the engine's to judge), or one
    that holds no text. ``None`` when every column may be searched. A clear refusal, not
    lance's error with its field paths and types."""
    text = [n for n, kind in kinds.items() if kind == "string"]
    offered = f"its text columns: {', '.join(text)}" if text else "the table has no text column"
    for name in fts_columns(fts):
        kind = kinds.get(name)
        if kind is None:
            head = name.split(".", 1)[0]
            if "." in name and kinds.get(head) == "struct":
                continue
            return f"a full-text search cannot search {name!r}: no such column ({offered})"
        if kind in _NOT_TEXT_KINDS:
            return f"a full-text search cannot search {name!r}: it holds no text ({offered})"
    return None
