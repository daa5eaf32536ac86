"""Index rules: types, which column types they fit, build parameters, defaults, validation.

One table for every path: the local backend's builds, the REST client's checks before it
sends, the Indexes page's form, the tuning helpers. Measured against pylance 14 (each fitting
type below builds on such a column; the others are refused by lance):

* ``fixed_size_list<float16|32|64>[d]``: every vector type; ``IVF_RQ`` only when ``d % 8 == 0``;
* ``fixed_size_list<uint8>[d]`` (binary vectors): ``IVF_FLAT`` and ``IVF_HNSW_FLAT``, hamming only;
* ``list<fixed_size_list<float>[d]>`` (multivectors): ``IVF_FLAT``, ``IVF_PQ``, ``IVF_SQ``,
  ``IVF_HNSW_SQ``, cosine only;
* strings (utf8, large_utf8): ``FTS``, ``BTREE``, ``BITMAP``, ``NGRAM``, ``ZONEMAP``, ``BLOOMFILTER``;
* ``list<string>``: ``LABEL_LIST``, ``FTS``; other lists of scalars: ``LABEL_LIST``;
* integers, floats, dates, timestamps, binary: ``BTREE``, ``BITMAP``, ``ZONEMAP``, ``BLOOMFILTER``;
* decimals, fixed-size binary, booleans: ``BTREE``, ``BITMAP``, ``ZONEMAP``;
* dictionary-encoded columns: ``ZONEMAP`` only.

``FTS`` and ``INVERTED`` are one type (lance's inverted index); the console shows ``FTS``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lance_namespace import CreateTableIndexRequest

from backend.arrow.types import column_kind
from backend.errors import invalid, validation_text
from backend.rules import ids
from backend.rules.columns import ColumnInfo
from backend.rules.index_types import (
    ALL_INDEX_TYPES,
    FTS,
    SCALAR_INDEX_TYPES,
    VECTOR_INDEX_TYPES,
)
from backend.text import capital

# --------------------------------------------------------------------------------------------
# Index types
# --------------------------------------------------------------------------------------------

PQ_TYPES = frozenset({"IVF_PQ", "IVF_HNSW_PQ"})
SQ_TYPES = frozenset({"IVF_SQ", "IVF_HNSW_SQ"})
RQ_TYPES = frozenset({"IVF_RQ"})
HNSW_TYPES = frozenset({"IVF_HNSW_FLAT", "IVF_HNSW_SQ", "IVF_HNSW_PQ"})

INDEX_TYPE_HELP: dict[str, str] = {
    "IVF_FLAT": "IVF partitions, raw vectors (exact within a partition)",
    "IVF_SQ": "IVF + scalar quantization",
    "IVF_PQ": "IVF + product quantization (smallest, needs sub-vectors)",
    "IVF_RQ": "IVF + RaBitQ quantization (dimension must be a multiple of 8)",
    "IVF_HNSW_FLAT": "IVF + HNSW graph per partition, raw vectors",
    "IVF_HNSW_SQ": "IVF + HNSW graph per partition, scalar quantization",
    "IVF_HNSW_PQ": "IVF + HNSW graph per partition, product quantization",
    "FTS": "full-text search (inverted index, BM25)",
    "BTREE": "range / equality filters on many distinct values",
    "BITMAP": "equality filters on few distinct values",
    "LABEL_LIST": "array_has_any / array_has_all on list columns",
    "NGRAM": "contains() substring filters on strings",
    "ZONEMAP": "min/max per zone; tiny, good for sorted columns",
    "BLOOMFILTER": "equality filters; tiny, inexact",
}

# Names servers report (IndexContent.index_type) or users type -> the console's names.
_TYPE_ALIASES: dict[str, str] = {
    "btree": "BTREE",
    "bitmap": "BITMAP",
    "labellist": "LABEL_LIST",
    "label_list": "LABEL_LIST",
    "ngram": "NGRAM",
    "zonemap": "ZONEMAP",
    "zone_map": "ZONEMAP",
    "bloomfilter": "BLOOMFILTER",
    "bloom_filter": "BLOOMFILTER",
    "inverted": FTS,
    "fts": FTS,
}


def normalize_index_type(index_type: str | None) -> str | None:
    """``BTree`` -> ``BTREE``, ``Inverted`` / ``INVERTED`` -> ``FTS``, ``ivf_pq`` -> ``IVF_PQ``;
    other names are returned as given."""
    if not index_type:
        return index_type
    key = str(index_type).strip()
    upper = key.upper()
    if upper in ALL_INDEX_TYPES:
        return upper
    return _TYPE_ALIASES.get(key.lower().replace(" ", ""), key)


def index_category(index_type: str) -> str:
    """``"vector"``, ``"fts"`` or ``"scalar"``; ``ValueError`` for an unknown type."""
    t = normalize_index_type(index_type) or ""
    if t in VECTOR_INDEX_TYPES:
        return "vector"
    if t == FTS:
        return "fts"
    if t in SCALAR_INDEX_TYPES:
        return "scalar"
    raise ValueError(f"unknown index type {index_type!r}")


def build_operation(index_type: str) -> str:
    """The spec operation that builds an index of ``index_type``: CreateTableScalarIndex for
    scalar types, CreateTableIndex otherwise (an unknown type too: the build's checks say
    what is wrong with it)."""
    try:
        scalar = index_category(index_type) == "scalar"
    except ValueError:
        scalar = False
    return "create_table_scalar_index" if scalar else "create_table_index"


def lance_index_type(index_type: str) -> str:
    """The name pylance's dataset API builds (``FTS`` -> ``INVERTED``)."""
    t = normalize_index_type(index_type) or ""
    return "INVERTED" if t == FTS else t


DISTANCE_TYPES: tuple[str, ...] = ("l2", "cosine", "dot", "hamming")
_DISTANCE_ALIASES = {"euclidean": "l2"}


def normalize_distance(value: str | None) -> str | None:
    """``L2`` / ``euclidean`` -> ``l2``; ``None`` for an unknown or empty value."""
    if not value:
        return None
    v = str(value).strip().lower()
    v = _DISTANCE_ALIASES.get(v, v)
    return v if v in DISTANCE_TYPES else None


def distance_types_for(arrow_type: Any) -> list[str]:
    """Distance types that fit a vector column: hamming only for binary (uint8) vectors."""
    kind = column_kind(arrow_type)
    if kind == "binary_vector":
        return ["hamming"]
    if kind == "multivector":
        return ["cosine"]
    if kind == "vector":
        return ["l2", "cosine", "dot"]
    return []


def default_distance(arrow_type: Any, existing_metrics: Sequence[str | None] = ()) -> str | None:
    """The distance a new vector index on a column starts with: the metric of the column's
    existing vector index (the first that fits the column), else the first that fits."""
    fitting = distance_types_for(arrow_type)
    for metric in existing_metrics:
        normalized = normalize_distance(metric) if metric else None
        if normalized in fitting:
            return normalized
    return fitting[0] if fitting else None


# --------------------------------------------------------------------------------------------
# Build parameters
# --------------------------------------------------------------------------------------------

# CreateTableIndexRequest fields that tune a vector index build, in form order.
VECTOR_BUILD_PARAMS: tuple[str, ...] = (
    "num_partitions",
    "num_sub_vectors",
    "num_bits",
    "sample_rate",
    "max_iterations",
    "target_partition_size",
    "m",
    "ef_construction",
)
FTS_PARAMS: tuple[str, ...] = (
    "base_tokenizer",
    "language",
    "max_token_length",
    "lower_case",
    "stem",
    "remove_stop_words",
    "ascii_folding",
    "with_position",
)
_IVF_ALL = frozenset(VECTOR_INDEX_TYPES)
# Which vector build parameter applies to which vector index type.
VECTOR_PARAM_APPLIES: dict[str, frozenset[str]] = {
    "num_partitions": _IVF_ALL,
    "target_partition_size": _IVF_ALL,
    "sample_rate": _IVF_ALL,
    "max_iterations": _IVF_ALL,
    "num_sub_vectors": PQ_TYPES,
    "num_bits": PQ_TYPES | SQ_TYPES | RQ_TYPES,
    "m": HNSW_TYPES,
    "ef_construction": HNSW_TYPES,
}
# Request field -> keyword of LanceDataset.create_index (pylance 14: ``max_iters`` lands in the
# index's runtime hints, ``max_iterations`` is silently ignored).
LANCE_VECTOR_KWARGS: dict[str, str] = {
    "num_partitions": "num_partitions",
    "num_sub_vectors": "num_sub_vectors",
    "target_partition_size": "target_partition_size",
    "num_bits": "num_bits",
    "sample_rate": "sample_rate",
    "max_iterations": "max_iters",
    "m": "m",
    "ef_construction": "ef_construction",
}
VECTOR_PARAM_HELP: dict[str, str] = {
    "num_partitions": "IVF partitions (k-means clusters)",
    "target_partition_size": "rows per partition; alternative to num_partitions",
    "sample_rate": "training rows sampled per partition for k-means",
    "max_iterations": "k-means iterations",
    "num_sub_vectors": "PQ sub-vectors; must divide the dimension",
    "num_bits": "bits per code (PQ: 4 or 8; SQ: 8; RQ: 1-8)",
    "m": "HNSW edges per node",
    "ef_construction": "HNSW candidates evaluated while building",
}

# Rows per IVF partition pylance aims at when neither num_partitions nor target_partition_size
# is given (measured: rows // target, at least 1, at most 4096).
DEFAULT_TARGET_PARTITION_SIZE: dict[str, int] = {
    "IVF_FLAT": 4096,
    "IVF_RQ": 4096,
    "IVF_SQ": 8192,
    "IVF_PQ": 8192,
    "IVF_HNSW_FLAT": 1 << 20,
    "IVF_HNSW_SQ": 1 << 20,
    "IVF_HNSW_PQ": 1 << 20,
}
MAX_PARTITIONS = 4096
DEFAULT_NUM_BITS: dict[str, int] = {"PQ": 8, "SQ": 8, "RQ": 5}
ALLOWED_NUM_BITS: dict[str, tuple[int, ...]] = {"PQ": (4, 8), "SQ": (8,), "RQ": tuple(range(1, 9))}
DEFAULT_SAMPLE_RATE = 256
DEFAULT_MAX_ITERATIONS = 50
DEFAULT_HNSW_M = 20
DEFAULT_HNSW_EF_CONSTRUCTION = 150
MIN_HNSW_M = 4  # lance refuses fewer edges per node (a fragmented graph)
PQ_ROWS_PER_PARTITION = 256  # PQ trains at most one IVF partition per this many rows
MAX_PARAM_VALUE = 1 << 24


def param_range(name: str) -> tuple[int, int]:
    """The range of a whole-number build parameter (a vector build parameter, or
    ``max_token_length``): what the create form accepts as typed (``numbers.whole_number``)
    and what :func:`request_problems` checks on every path."""
    if name == "max_token_length":
        return 1, MAX_TOKEN_LENGTH
    if name in VECTOR_BUILD_PARAMS:
        return 1, MAX_PARAM_VALUE
    raise ValueError(f"{name} is not a whole-number build parameter")


def quantizer(index_type: str) -> str | None:
    """``"PQ"``, ``"SQ"``, ``"RQ"`` or ``None`` (flat)."""
    t = normalize_index_type(index_type) or ""
    if t in PQ_TYPES:
        return "PQ"
    if t in SQ_TYPES:
        return "SQ"
    if t in RQ_TYPES:
        return "RQ"
    return None


def vector_params_for(index_type: str) -> list[str]:
    """The build parameters that apply to a vector index type, in form order."""
    t = normalize_index_type(index_type) or ""
    return [p for p in VECTOR_BUILD_PARAMS if t in VECTOR_PARAM_APPLIES[p]]


def default_num_sub_vectors(dim: int | None) -> int | None:
    """Sub-vectors of 16 dimensions from 128 dimensions up (when 16 divides the dimension),
    else of 8 (when 8 divides it), else 1: the sub-vector length stays a multiple of 8
    wherever the dimension allows it, and small vectors keep enough sub-vectors to be told
    apart (16 dimensions in 1 sub-vector of 256 codes lose most neighbours)."""
    if not dim or dim <= 0:
        return None
    if dim >= 128 and dim % 16 == 0:
        return dim // 16
    if dim % 8 == 0:
        return dim // 8
    return 1


def default_num_partitions(index_type: str, num_rows: int | None) -> int | None:
    """The console's choice when no partition count is given: about ``sqrt(rows)``
    partitions (each partition then holds about as many rows as there are partitions), at
    most one per 256 rows for PQ types (what PQ training needs), one partition for HNSW types
    below 2**20 rows, and 1 to 4096 in all."""
    if num_rows is None:
        return None
    t = normalize_index_type(index_type) or ""
    rows = max(0, int(num_rows))
    if t in HNSW_TYPES:
        n = rows // DEFAULT_TARGET_PARTITION_SIZE[t]
    else:
        n = math.isqrt(rows)
        if t in PQ_TYPES:
            n = min(n, rows // PQ_ROWS_PER_PARTITION)
    return min(max(1, n), MAX_PARTITIONS)


def vector_param_defaults(index_type: str, dim: int | None, num_rows: int | None) -> dict:
    """The values a build uses for the parameters a request leaves empty.

    ``num_partitions`` and ``num_sub_vectors`` are the console's choices
    (:func:`default_num_partitions`, :func:`default_num_sub_vectors`): the local backend sends
    them when a request leaves them empty, and reports them. The others are pylance 14's own
    defaults: ``num_bits`` PQ 8, SQ 8, RQ 5; ``sample_rate`` 256; ``max_iterations`` 50; HNSW
    ``m`` 20 and ``ef_construction`` 150; ``target_partition_size`` per type
    (:data:`DEFAULT_TARGET_PARTITION_SIZE`). Only parameters that apply are returned.
    """
    t = normalize_index_type(index_type) or ""
    if t not in VECTOR_INDEX_TYPES:
        raise ValueError(f"{index_type!r} is not a vector index type")
    out: dict[str, Any] = {}
    for p in vector_params_for(t):
        if p == "num_partitions":
            out[p] = default_num_partitions(t, num_rows)
        elif p == "target_partition_size":
            out[p] = DEFAULT_TARGET_PARTITION_SIZE[t]
        elif p == "sample_rate":
            out[p] = DEFAULT_SAMPLE_RATE
        elif p == "max_iterations":
            out[p] = DEFAULT_MAX_ITERATIONS
        elif p == "num_sub_vectors":
            out[p] = default_num_sub_vectors(dim)
        elif p == "num_bits":
            out[p] = DEFAULT_NUM_BITS[quantizer(t) or "PQ"]
        elif p == "m":
            out[p] = DEFAULT_HNSW_M
        elif p == "ef_construction":
            out[p] = DEFAULT_HNSW_EF_CONSTRUCTION
    return out


# Response context keys reporting the parameters a backend chose: ``chosen.num_partitions``.
CHOSEN_PREFIX = "chosen."


def chosen_build_params(
    request: CreateTableIndexRequest, dim: int | None, num_rows: int | None
) -> dict[str, int]:
    """The parameters the console fills in for a vector request that leaves them empty:
    ``num_partitions`` (unless ``target_partition_size`` is given) and, for PQ types,
    ``num_sub_vectors``. Empty for other index types."""
    t = normalize_index_type(request.index_type) or ""
    if t not in VECTOR_INDEX_TYPES:
        return {}
    defaults = vector_param_defaults(t, dim, num_rows)
    chosen: dict[str, int] = {}
    partitions = defaults.get("num_partitions")
    if request.num_partitions is None and request.target_partition_size is None and partitions:
        chosen["num_partitions"] = int(partitions)
    if t in PQ_TYPES and request.num_sub_vectors is None and defaults.get("num_sub_vectors"):
        chosen["num_sub_vectors"] = int(defaults["num_sub_vectors"])
    return chosen


# --------------------------------------------------------------------------------------------
# Full-text options
# --------------------------------------------------------------------------------------------

BASE_TOKENIZERS: tuple[str, ...] = (
    "simple",
    "whitespace",
    "raw",
    "ngram",
    "icu",
    "icu/split",
    "jieba/default",
    "lindera/ipadic",
    "lindera/ko-dic",
    "lindera/unidic",
)
FTS_LANGUAGES: tuple[str, ...] = (
    "Arabic",
    "Danish",
    "Dutch",
    "English",
    "Finnish",
    "French",
    "German",
    "Greek",
    "Hungarian",
    "Italian",
    "Norwegian",
    "Portuguese",
    "Romanian",
    "Russian",
    "Spanish",
    "Swedish",
    "Tamil",
    "Turkish",
)
FTS_PARAM_HELP: dict[str, str] = {
    "base_tokenizer": "how text is split into tokens",
    "language": "stemming and stop-word language",
    "max_token_length": "longer tokens are dropped",
    "lower_case": "lower-case every token",
    "stem": "reduce words to their stem (running -> run)",
    "remove_stop_words": "drop words such as 'the', 'and'",
    "ascii_folding": "fold accents (café -> cafe)",
    "with_position": "store positions (phrase queries; larger index)",
}
MAX_TOKEN_LENGTH = 1 << 16


def fts_param_defaults(base_tokenizer: str | None = "simple") -> dict[str, Any]:
    """pylance's defaults for the FTS options (stemming and stop words off for ``ngram``)."""
    ngram = base_tokenizer == "ngram"
    return {
        "base_tokenizer": base_tokenizer or "simple",
        "language": "English",
        "max_token_length": 40,
        "lower_case": True,
        "stem": not ngram,
        "remove_stop_words": not ngram,
        "ascii_folding": True,
        "with_position": False,
    }


def fts_options(details: Mapping[str, Any] | None) -> dict[str, Any]:
    """The FTS options an index was built with, from its details (``index_details`` JSON or
    DescribeTableIndexStats), under the request's field names; missing ones are left out."""
    if not details:
        return {}
    nested = details.get("params")
    params: Mapping[str, Any] = nested if isinstance(nested, Mapping) else details
    out = {}
    for name in FTS_PARAMS:
        for key in (name, {"remove_stop_words": "stop_words"}.get(name, name)):
            if key in params:
                out[name] = params[key]
                break
    return out


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def request_problems(request: CreateTableIndexRequest) -> list[str]:
    """What is wrong with a create-index request on its own, before any column is known: the
    type, the name, the distance type, parameters that do not apply or are out of range, FTS
    options. Every path checks these before it builds or sends."""
    problems: list[str] = []
    t = normalize_index_type(request.index_type) or ""
    if t not in ALL_INDEX_TYPES:
        return [
            f"Unknown index type {request.index_type!r}; supported: {', '.join(ALL_INDEX_TYPES)}."
        ]
    if not isinstance(request.column, str) or not request.column.strip():
        problems.append("Name the column to index.")
    if request.name is not None:
        problem = ids.label_problem(request.name, what="index", create=True)
        if problem:
            problems.append(capital(problem) + ".")
    category = index_category(t)
    if request.distance_type is not None:
        if normalize_distance(request.distance_type) is None:
            problems.append(
                f"Unknown distance type {request.distance_type!r}; supported: "
                f"{', '.join(DISTANCE_TYPES)}."
            )
        elif category != "vector":
            problems.append(f"distance_type only applies to vector indexes, not {t}.")
    for p in VECTOR_BUILD_PARAMS:
        value = getattr(request, p)
        if value is None:
            continue
        if category != "vector" or t not in VECTOR_PARAM_APPLIES[p]:
            problems.append(f"{p} does not apply to {t} indexes.")
        elif not isinstance(value, int) or isinstance(value, bool) or value < param_range(p)[0]:
            problems.append(f"{p} must be at least {param_range(p)[0]} (got {value!r}).")
        elif value > param_range(p)[1]:
            problems.append(f"{p} must be at most {param_range(p)[1]:,} (got {value:,}).")
    if request.num_partitions is not None and request.target_partition_size is not None:
        problems.append("Set either num_partitions or target_partition_size, not both.")
    if t in HNSW_TYPES:
        problems += _hnsw_problems(request)
    q = quantizer(t)
    if (
        request.num_bits is not None
        and q is not None
        and request.num_bits not in ALLOWED_NUM_BITS[q]
    ):
        allowed = ALLOWED_NUM_BITS[q]
        problems.append(
            f"num_bits {request.num_bits} is not supported for {q}; "
            f"use {' or '.join(map(str, allowed)) if len(allowed) < 4 else '1-8'}."
        )
    nsv = request.num_sub_vectors
    if q == "PQ" and request.num_bits == 4 and nsv is not None and nsv % 2 != 0:
        problems.append(
            f"PQ with 4 bits packs two codes per byte: num_sub_vectors must be even (got {nsv})."
        )
    if category != "fts":
        given = [p for p in FTS_PARAMS if getattr(request, p) is not None]
        if given:
            problems.append(f"{', '.join(given)} only apply to FTS indexes, not {t}.")
    else:
        problems += _fts_problems(request)
    return problems


def _hnsw_problems(request: CreateTableIndexRequest) -> list[str]:
    """lance's HNSW ranges, checked before a build writes anything: ``m`` at least
    :data:`MIN_HNSW_M`; ``ef_construction`` at least ``m`` (a value left empty is lance's
    default, :data:`DEFAULT_HNSW_M` / :data:`DEFAULT_HNSW_EF_CONSTRUCTION`)."""
    m = request.m if request.m is not None else DEFAULT_HNSW_M
    ef = (
        request.ef_construction
        if request.ef_construction is not None
        else DEFAULT_HNSW_EF_CONSTRUCTION
    )
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (m, ef)):
        return []  # not whole numbers: reported above
    if m < MIN_HNSW_M:
        return [f"m must be at least {MIN_HNSW_M} (got {m}): fewer edges fragment the graph."]
    if ef < m:
        given = "" if request.ef_construction is not None else " (its default)"
        return [f"ef_construction{given} must be at least m ({m}), got {ef}."]
    return []


def _fts_problems(request: CreateTableIndexRequest) -> list[str]:
    problems: list[str] = []
    bt = request.base_tokenizer
    if bt is not None and bt not in BASE_TOKENIZERS:
        problems.append(f"Unknown base tokenizer {bt!r}.")
    lang = request.language
    if lang is not None and lang not in FTS_LANGUAGES:
        problems.append(f"Unknown language {lang!r}; choose one of {', '.join(FTS_LANGUAGES)}.")
    mtl = request.max_token_length
    low, high = param_range("max_token_length")
    if mtl is not None and not low <= mtl <= high:
        problems.append(f"max_token_length must be at least {low} and at most {high}.")
    return problems


def column_problems(
    request: CreateTableIndexRequest, column: ColumnInfo | None, num_rows: int | None
) -> list[str]:
    """What is wrong with the request for this column and row count."""
    if column is None:
        return [f"Column {request.column!r} does not exist in this table."]
    t = normalize_index_type(request.index_type) or ""
    fitting = column.fitting_types
    if t not in fitting:
        offered = ", ".join(fitting) or "none"
        return [
            f"{t} does not fit column {column.name!r} ({column.arrow_type_str}); "
            f"fitting types: {offered}."
        ]
    if index_category(t) != "vector":
        return []
    problems: list[str] = []
    dim = column.dim
    metric = normalize_distance(request.distance_type) or "l2"
    if column.kind == "binary_vector" and metric != "hamming":
        problems.append(
            f"Column {column.name!r} holds binary (uint8) vectors: only the hamming distance fits."
        )
    elif column.kind == "multivector" and metric != "cosine":
        problems.append(
            f"Column {column.name!r} holds multivectors: only the cosine distance fits."
        )
    elif column.kind == "vector" and metric == "hamming":
        problems.append(
            f"hamming distance needs binary (uint8) vectors; {column.name!r} is "
            f"{column.arrow_type_str}."
        )
    if num_rows == 0:
        problems.append("The table has no rows: a vector index cannot be trained.")
    elif (
        request.num_partitions is not None
        and num_rows is not None
        and request.num_partitions > num_rows
    ):
        problems.append(
            f"num_partitions ({request.num_partitions}) exceeds the table's rows ({num_rows})."
        )
    nsv = request.num_sub_vectors
    if nsv is not None and dim:
        if nsv > dim:
            problems.append(f"num_sub_vectors ({nsv}) exceeds the dimension ({dim}).")
        elif dim % nsv != 0:
            divisors = [d for d in range(1, dim + 1) if dim % d == 0]
            problems.append(
                f"num_sub_vectors ({nsv}) must divide the dimension ({dim}); "
                f"valid: {', '.join(map(str, divisors))}."
            )
    if quantizer(t) == "PQ" and num_rows is not None and num_rows > 0:
        bits = request.num_bits or DEFAULT_NUM_BITS["PQ"]
        if num_rows < 2**bits:
            problems.append(
                f"PQ with {bits} bits trains {2**bits} centroids per sub-vector: it needs at "
                f"least {2**bits} rows (the table has {num_rows}), or the index stays empty. "
                + ("Use num_bits 4 or add rows." if bits > 4 else "Add rows.")
            )
    if t == "IVF_RQ" and dim and dim % 8 != 0:
        problems.append(f"IVF_RQ needs a dimension divisible by 8 (got {dim}).")
    return problems


def validate_index_request(
    request: CreateTableIndexRequest,
    column: ColumnInfo | None,
    *,
    num_rows: int | None = None,
    existing_names: Iterable[str] = (),
) -> list[str]:
    """Every problem with a create-index request, checked before any call (empty: fine)."""
    problems = request_problems(request)
    if problems[:1] and problems[0].startswith("Unknown index type"):
        return problems
    if column is None:
        return [f"Column {request.column!r} does not exist in this table.", *problems]
    effective = request.name if request.name is not None else default_index_name(request.column)
    if effective in set(existing_names):
        problems.append(
            f"An index named {effective!r} already exists (or is being built); "
            "choose another name or drop it first."
        )
    return problems + column_problems(request, column, num_rows)


def index_request_hints(request: CreateTableIndexRequest, num_rows: int | None) -> list[str]:
    """Non-blocking remarks about a valid request (the build still runs): PQ types train at
    most one IVF partition per 256 rows, so with fewer rows Lance trains fewer partitions."""
    hints: list[str] = []
    if quantizer(request.index_type or "") == "PQ" and request.num_partitions and num_rows:
        needed = request.num_partitions * PQ_ROWS_PER_PARTITION
        if num_rows < needed:
            hints.append(
                f"{request.num_partitions} PQ partitions want about {needed} rows "
                f"({PQ_ROWS_PER_PARTITION} per partition); with {num_rows} rows Lance trains "
                "fewer partitions."
            )
    return hints


def requested_build_fields(
    request: CreateTableIndexRequest, chosen: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """The vector build parameters a request asked for (distance normalised), plus those the
    backend ``chosen`` for it: what "requested against applied" compares with lance's record."""
    fields = {
        p: getattr(request, p)
        for p in (*VECTOR_BUILD_PARAMS, "distance_type")
        if getattr(request, p, None) is not None
    }
    if fields.get("distance_type"):
        fields["distance_type"] = normalize_distance(fields["distance_type"])
    return {**fields, **dict(chosen or {})}


def default_index_name(column: str, index_type: str | None = None) -> str:
    """``<column>_idx`` (pylance's default)."""
    return f"{column}_idx"


# --------------------------------------------------------------------------------------------
# The form's request
# --------------------------------------------------------------------------------------------


def build_index_request(
    table_id: Sequence[str],
    column: str,
    index_type: str,
    *,
    name: str | None = None,
    distance_type: str | None = None,
    params: dict[str, Any] | None = None,
    fill_required: bool = True,
    dim: int | None = None,
    num_rows: int | None = None,
) -> CreateTableIndexRequest:
    """A CreateTableIndexRequest from a form's values.

    Empty values (``None`` / ``""``) are left out, so the backend applies its defaults, except
    ``num_sub_vectors`` for PQ types, filled from :func:`vector_param_defaults` when
    ``fill_required`` (every backend then builds the same index). Parameters that do not apply
    to the index type are dropped. ``InvalidInputError`` for a parameter outside the spec's
    range.
    """
    t = normalize_index_type(index_type) or ""
    category = index_category(t)
    fields: dict[str, Any] = {"id": list(table_id), "column": column, "index_type": t}
    if name and name.strip():
        fields["name"] = name.strip()
    params = {k: v for k, v in (params or {}).items() if v is not None and v != ""}
    if category == "vector":
        if distance_type:
            fields["distance_type"] = distance_type.lower()
        allowed = set(vector_params_for(t))
        fields.update({k: int(v) for k, v in params.items() if k in allowed})
        if fill_required and t in PQ_TYPES and fields.get("num_sub_vectors") is None:
            nsv = default_num_sub_vectors(dim)
            if nsv is not None:
                fields["num_sub_vectors"] = nsv
    elif category == "fts":
        for k, v in params.items():
            if k in FTS_PARAMS:
                fields[k] = int(v) if k == "max_token_length" else v
    try:
        return CreateTableIndexRequest(**fields)
    except ValueError as exc:  # pydantic's: a parameter out of the spec's range (m = 0)
        raise invalid(f"cannot build {t} on column {column!r}: {validation_text(exc)}") from None
