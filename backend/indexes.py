"""Indexes of a table: overview, column types, fitting index types, build defaults, builds.

Everything here is plain Python (no streamlit): the Indexes page, notebooks and tests share it.

* :func:`table_columns` / :func:`fitting_index_types` - which index types fit which Arrow type;
* :func:`vector_param_defaults` - the build parameters pylance applies when a field is left empty
  (measured against pylance 14, see the function's docstring);
* :func:`build_index_request` / :func:`validate_index_request` - one form, checked before any call;
* :func:`tokenize_preview` - pylance's ``lance.tokenize`` with the FTS options of the form;
* :func:`index_overview` - ListTableIndices joined with DescribeTableIndexStats per index;
* :func:`coverage_history` - indexed vs unindexed rows across the table's recent versions;
* :class:`BuildJobRegistry` / :data:`JOBS` - index builds in background threads, polled by the UI.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import re
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
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

from .capabilities import FTS_PARAMS, VECTOR_BUILD_PARAMS

# --------------------------------------------------------------------------------------------
# Index types
# --------------------------------------------------------------------------------------------

VECTOR_INDEX_TYPES: tuple[str, ...] = (
    "IVF_FLAT",
    "IVF_SQ",
    "IVF_PQ",
    "IVF_RQ",
    "IVF_HNSW_FLAT",
    "IVF_HNSW_SQ",
    "IVF_HNSW_PQ",
)
FTS_INDEX_TYPES: tuple[str, ...] = ("FTS", "INVERTED")
SCALAR_INDEX_TYPES: tuple[str, ...] = (
    "BTREE",
    "BITMAP",
    "LABEL_LIST",
    "NGRAM",
    "ZONEMAP",
    "BLOOMFILTER",
)
ALL_INDEX_TYPES: tuple[str, ...] = VECTOR_INDEX_TYPES + FTS_INDEX_TYPES + SCALAR_INDEX_TYPES
DISTANCE_TYPES: tuple[str, ...] = ("l2", "cosine", "dot", "hamming")

INDEX_TYPE_HELP: dict[str, str] = {
    "IVF_FLAT": "IVF partitions, raw vectors (exact within a partition)",
    "IVF_SQ": "IVF + scalar quantization",
    "IVF_PQ": "IVF + product quantization (smallest, needs sub-vectors)",
    "IVF_RQ": "IVF + RaBitQ quantization (dimension must be a multiple of 8)",
    "IVF_HNSW_FLAT": "IVF + HNSW graph per partition, raw vectors",
    "IVF_HNSW_SQ": "IVF + HNSW graph per partition, scalar quantization",
    "IVF_HNSW_PQ": "IVF + HNSW graph per partition, product quantization",
    "FTS": "full-text search (inverted index, BM25)",
    "INVERTED": "full-text search (same as FTS)",
    "BTREE": "range / equality filters on many distinct values",
    "BITMAP": "equality filters on few distinct values",
    "LABEL_LIST": "array_has_any / array_has_all on list columns",
    "NGRAM": "contains() substring filters on strings",
    "ZONEMAP": "min/max per zone; tiny, good for sorted columns",
    "BLOOMFILTER": "equality filters; tiny, inexact",
}

# Friendly names servers report (IndexContent.index_type) -> the names used to create them.
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
    "inverted": "INVERTED",
    "fts": "FTS",
}


def normalize_index_type(index_type: str | None) -> str | None:
    """``BTree`` -> ``BTREE``, ``Inverted`` -> ``INVERTED``, ``IVF_PQ`` unchanged."""
    if not index_type:
        return index_type
    key = index_type.strip()
    upper = key.upper()
    if upper in ALL_INDEX_TYPES:
        return upper
    return _TYPE_ALIASES.get(key.lower().replace(" ", ""), key)


def index_category(index_type: str) -> str:
    """``"vector"``, ``"fts"`` or ``"scalar"`` for a creatable index type."""
    t = (normalize_index_type(index_type) or "").upper()
    if t in VECTOR_INDEX_TYPES:
        return "vector"
    if t in FTS_INDEX_TYPES:
        return "fts"
    if t in SCALAR_INDEX_TYPES:
        return "scalar"
    raise ValueError(f"unknown index type {index_type!r}")


# --------------------------------------------------------------------------------------------
# Column types
# --------------------------------------------------------------------------------------------

_INT_TYPES = {f"{s}int{b}" for s in ("", "u") for b in (8, 16, 32, 64)}
_FLOAT_TYPES = {"float16", "float32", "float64", "halffloat", "float", "double", "halffloat16"}
_STRING_TYPES = {"utf8", "string", "large_utf8", "large_string", "utf8_view", "string_view"}
_BINARY_TYPES = {"binary", "large_binary", "fixed_size_binary", "binary_view"}
_BOOL_TYPES = {"bool", "boolean"}
_TEMPORAL_PREFIXES = ("date", "timestamp", "time", "duration", "interval")
_LIST_TYPES = {"list", "large_list", "list_view", "large_list_view"}


@dataclass(frozen=True)
class ArrowTypeInfo:
    """A normalised Arrow type: base name, optional child type, optional fixed length."""

    base: str
    child: ArrowTypeInfo | None = None
    length: int | None = None

    def __str__(self) -> str:
        if self.base == "fixed_size_list" and self.child is not None:
            return f"fixed_size_list<{self.child}>[{self.length}]"
        if self.child is not None:
            return f"{self.base}<{self.child}>"
        if self.length is not None:
            return f"{self.base}[{self.length}]"
        return self.base


def _norm_base(name: str) -> str:
    n = name.strip().lower().replace(" ", "")
    n = {
        "float": "float32",
        "double": "float64",
        "halffloat": "float16",
        "halffloat16": "float16",
        "string": "utf8",
        "large_string": "large_utf8",
        "boolean": "bool",
        "largelist": "large_list",
        "fixedsizelist": "fixed_size_list",
    }.get(n, n)
    return n


def _split_top(text: str) -> tuple[str, str | None, str | None]:
    """``fixed_size_list<item: float>[16]`` -> (``fixed_size_list``, ``item: float``, ``16``)."""
    m = re.match(r"^\s*([A-Za-z_0-9]+)\s*(?:\((.*)\))?\s*(?:<(.*)>)?\s*(?:\[(\d+)\])?\s*$", text)
    if not m:
        return text.strip(), None, None
    base, paren, inner, length = m.groups()
    if base.lower() in ("fixed_size_list", "fixedsizelist") and paren and inner is None:
        # pyarrow's older form: fixed_size_list<item: float>[16] is handled above; also accept
        # fixed_size_list(float32, 16)
        parts = [p.strip() for p in paren.rsplit(",", 1)]
        if len(parts) == 2 and parts[1].isdigit():
            return base, parts[0], parts[1]
    return base, inner, length


def parse_arrow_type(value: Any) -> ArrowTypeInfo:
    """Normalise a JsonArrowDataType (model or dict), a ``pyarrow.DataType`` or a type string."""
    if isinstance(value, ArrowTypeInfo):
        return value
    if isinstance(value, ColumnInfo):
        return value.type_info
    # pyarrow types
    try:
        import pyarrow as pa

        if isinstance(value, pa.DataType):
            if pa.types.is_fixed_size_list(value):
                return ArrowTypeInfo(
                    "fixed_size_list", parse_arrow_type(value.value_type), value.list_size
                )
            if pa.types.is_list(value) or pa.types.is_large_list(value):
                base = "large_list" if pa.types.is_large_list(value) else "list"
                return ArrowTypeInfo(base, parse_arrow_type(value.value_type))
            if pa.types.is_fixed_size_binary(value):
                return ArrowTypeInfo("fixed_size_binary", None, value.byte_width)
            if pa.types.is_timestamp(value):
                return ArrowTypeInfo("timestamp")
            if pa.types.is_decimal(value):
                return ArrowTypeInfo("decimal")
            return ArrowTypeInfo(_norm_base(str(value)))
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        pass
    if hasattr(value, "model_dump"):
        value = value.model_dump(exclude_none=True)
    if isinstance(value, dict):
        base = _norm_base(str(value.get("type", "")))
        fields = value.get("fields") or []
        child = None
        if fields and base in _LIST_TYPES | {"fixed_size_list"}:
            child_type = fields[0].get("type") if isinstance(fields[0], dict) else None
            if child_type is not None:
                child = parse_arrow_type(child_type)
        if base.startswith("decimal"):
            base = "decimal"
        if base.startswith("timestamp"):
            base = "timestamp"
        return ArrowTypeInfo(base, child, value.get("length"))
    if isinstance(value, str):
        base, inner, length = _split_top(value)
        base = _norm_base(base)
        if base.startswith("decimal"):
            return ArrowTypeInfo("decimal")
        if base.startswith("timestamp"):
            return ArrowTypeInfo("timestamp")
        if base.startswith("date"):
            return ArrowTypeInfo(base if base in ("date32", "date64") else "date32")
        child = None
        if inner is not None and base in _LIST_TYPES | {"fixed_size_list"}:
            inner = inner.split(":", 1)[1] if ":" in inner.split("<", 1)[0] else inner
            child = parse_arrow_type(inner.strip())
        return ArrowTypeInfo(base, child, int(length) if length else None)
    raise TypeError(f"cannot read an Arrow type from {type(value).__name__}")


def arrow_type_str(value: Any) -> str:
    """Readable type: ``int64``, ``utf8``, ``list<utf8>``, ``fixed_size_list<float32>[16]``."""
    return str(parse_arrow_type(value))


def column_kind(value: Any) -> str:
    """What a column holds, for choosing index types.

    ``vector`` (fixed-size list of floats), ``binary_vector`` (fixed-size list of uint8),
    ``string``, ``list`` (list of scalars), ``integer``, ``float``, ``decimal``, ``temporal``,
    ``boolean``, ``binary`` or ``other``.
    """
    t = parse_arrow_type(value)
    base = t.base
    if base == "fixed_size_list" and t.child is not None:
        if t.child.base in _FLOAT_TYPES:
            return "vector"
        if t.child.base == "uint8":
            return "binary_vector"
        return "other"
    if base in _LIST_TYPES:
        if t.child is not None and (
            t.child.base in _STRING_TYPES
            or t.child.base in _INT_TYPES
            or t.child.base in _FLOAT_TYPES
            or t.child.base in _BOOL_TYPES
            or t.child.base.startswith(_TEMPORAL_PREFIXES)
        ):
            return "list"
        return "other"
    if base in _STRING_TYPES:
        return "string"
    if base in _INT_TYPES:
        return "integer"
    if base in _FLOAT_TYPES:
        return "float"
    if base == "decimal":
        return "decimal"
    if base in _BOOL_TYPES:
        return "boolean"
    if base.startswith(_TEMPORAL_PREFIXES):
        return "temporal"
    if base in _BINARY_TYPES:
        return "binary"
    return "other"


def vector_dimension(value: Any) -> int | None:
    """The dimension of a fixed-size-list column, else ``None``."""
    t = parse_arrow_type(value)
    return t.length if t.base == "fixed_size_list" else None


def fitting_index_types(arrow_type: Any) -> list[str]:
    """Index types that fit a column of this Arrow type, most useful first.

    Measured against pylance 14 (every type below builds on such a column):

    * ``fixed_size_list<float*>[d]``: every vector type; ``IVF_RQ`` only when ``d % 8 == 0``;
    * ``fixed_size_list<uint8>[d]`` (binary vectors, hamming only): ``IVF_FLAT``,
      ``IVF_HNSW_FLAT``;
    * strings: ``FTS``, ``INVERTED``, ``BTREE``, ``BITMAP``, ``NGRAM``, ``ZONEMAP``,
      ``BLOOMFILTER``;
    * ``list<string>``: ``LABEL_LIST``, ``FTS``, ``INVERTED``; other lists: ``LABEL_LIST``;
    * integers, floats, dates, timestamps, binary: ``BTREE``, ``BITMAP``, ``ZONEMAP``,
      ``BLOOMFILTER``; decimals: ``BTREE``, ``BITMAP``, ``ZONEMAP``;
    * booleans: ``BITMAP``, ``BTREE``, ``ZONEMAP``.
    """
    t = parse_arrow_type(arrow_type)
    kind = column_kind(t)
    if kind == "vector":
        types = list(VECTOR_INDEX_TYPES)
        if not t.length or t.length % 8 != 0:
            types.remove("IVF_RQ")
        return types
    if kind == "binary_vector":
        return ["IVF_FLAT", "IVF_HNSW_FLAT"]
    if kind == "string":
        return ["FTS", "INVERTED", "BTREE", "BITMAP", "NGRAM", "ZONEMAP", "BLOOMFILTER"]
    if kind == "list":
        if t.child is not None and t.child.base in _STRING_TYPES:
            return ["LABEL_LIST", "FTS", "INVERTED"]
        return ["LABEL_LIST"]
    if kind in ("integer", "float", "temporal", "binary"):
        return ["BTREE", "BITMAP", "ZONEMAP", "BLOOMFILTER"]
    if kind == "decimal":
        return ["BTREE", "BITMAP", "ZONEMAP"]
    if kind == "boolean":
        return ["BITMAP", "BTREE", "ZONEMAP"]
    return []


def distance_types_for(arrow_type: Any) -> list[str]:
    """Distance types that fit a vector column: hamming only for binary (uint8) vectors."""
    kind = column_kind(arrow_type)
    if kind == "binary_vector":
        return ["hamming"]
    if kind == "vector":
        return ["l2", "cosine", "dot"]
    return []


@dataclass(frozen=True)
class ColumnInfo:
    """One top-level column of a table, with what indexes fit it."""

    name: str
    arrow_type_str: str
    kind: str
    nullable: bool = True
    dim: int | None = None
    type_info: ArrowTypeInfo = field(default_factory=lambda: ArrowTypeInfo("null"), repr=False)

    @property
    def fitting_types(self) -> list[str]:
        return fitting_index_types(self.type_info)


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def describe_table_detailed(ns: LanceNamespace, table_id: Sequence[str]) -> Any:
    """DescribeTable with ``load_detailed_metadata=True`` (schema, version, location)."""
    return ns.describe_table(DescribeTableRequest(id=list(table_id), load_detailed_metadata=True))


def columns_from_schema(schema: Any) -> list[ColumnInfo]:
    """``ColumnInfo`` for every top-level field of a JsonArrowSchema (model or dict)."""
    if schema is None:
        return []
    fields = _get(schema, "fields") or []
    out: list[ColumnInfo] = []
    for f in fields:
        ftype = _get(f, "type")
        try:
            info = parse_arrow_type(ftype)
        except TypeError:
            info = ArrowTypeInfo("other")
        out.append(
            ColumnInfo(
                name=str(_get(f, "name")),
                arrow_type_str=str(info),
                kind=column_kind(info),
                nullable=bool(_get(f, "nullable", True)),
                dim=vector_dimension(info),
                type_info=info,
            )
        )
    return out


def table_columns(ns: LanceNamespace, table_id: Sequence[str]) -> list[ColumnInfo]:
    """Top-level columns of a table, from DescribeTable(load_detailed_metadata=True).schema."""
    resp = describe_table_detailed(ns, table_id)
    return columns_from_schema(_get(resp, "var_schema") or _get(resp, "schema"))


def table_num_rows(ns: LanceNamespace, table_id: Sequence[str]) -> int | None:
    """Live rows of a table (CountTableRows); ``None`` when the backend cannot count."""
    try:
        resp = ns.count_table_rows(CountTableRowsRequest(id=list(table_id)))
    except LanceNamespaceError:
        return None
    if isinstance(resp, int):
        return resp
    count = _get(resp, "count")
    return int(count) if count is not None else None


# --------------------------------------------------------------------------------------------
# Vector build parameters
# --------------------------------------------------------------------------------------------

_IVF_ALL = frozenset(VECTOR_INDEX_TYPES)
_PQ = frozenset({"IVF_PQ", "IVF_HNSW_PQ"})
_SQ = frozenset({"IVF_SQ", "IVF_HNSW_SQ"})
_RQ = frozenset({"IVF_RQ"})
_HNSW = frozenset({"IVF_HNSW_FLAT", "IVF_HNSW_SQ", "IVF_HNSW_PQ"})

# Which CreateTableIndexRequest build parameter applies to which vector index type.
VECTOR_PARAM_APPLIES: dict[str, frozenset[str]] = {
    "num_partitions": _IVF_ALL,
    "target_partition_size": _IVF_ALL,
    "sample_rate": _IVF_ALL,
    "max_iterations": _IVF_ALL,
    "num_sub_vectors": _PQ,
    "num_bits": _PQ | _SQ | _RQ,
    "m": _HNSW,
    "ef_construction": _HNSW,
}
assert set(VECTOR_PARAM_APPLIES) == set(VECTOR_BUILD_PARAMS)

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

# Rows per IVF partition pylance aims at when neither num_partitions nor
# target_partition_size is given (measured: rows // target, at least 1, at most 4096).
DEFAULT_TARGET_PARTITION_SIZE: dict[str, int] = {
    "IVF_FLAT": 4096,
    "IVF_RQ": 4096,
    "IVF_SQ": 8192,
    "IVF_PQ": 8192,
    "IVF_HNSW_FLAT": 1 << 20,
    "IVF_HNSW_SQ": 1 << 20,
    "IVF_HNSW_PQ": 1 << 20,
}
MAX_DEFAULT_PARTITIONS = 4096
DEFAULT_NUM_BITS: dict[str, int] = {"PQ": 8, "SQ": 8, "RQ": 5}
DEFAULT_SAMPLE_RATE = 256
PQ_ROWS_PER_PARTITION = 256  # PQ trains at most one partition per this many rows
DEFAULT_MAX_ITERATIONS = 50
DEFAULT_HNSW_M = 20
DEFAULT_HNSW_EF_CONSTRUCTION = 150
ALLOWED_NUM_BITS: dict[str, tuple[int, ...]] = {
    "PQ": (4, 8),
    "SQ": (8,),
    "RQ": tuple(range(1, 9)),
}


def vector_params_for(index_type: str) -> list[str]:
    """The build parameters that apply to a vector index type, in form order."""
    t = index_type.upper()
    return [p for p in VECTOR_BUILD_PARAMS if t in VECTOR_PARAM_APPLIES[p]]


def default_num_sub_vectors(dim: int | None) -> int | None:
    """``dim/16`` when 16 divides the dimension, else ``dim/8`` when 8 does, else 1."""
    if not dim or dim <= 0:
        return None
    if dim % 16 == 0:
        return dim // 16
    if dim % 8 == 0:
        return dim // 8
    return 1


def _quantizer(index_type: str) -> str | None:
    t = index_type.upper()
    if t in _PQ:
        return "PQ"
    if t in _SQ:
        return "SQ"
    if t in _RQ:
        return "RQ"
    return None


def vector_param_defaults(index_type: str, dim: int | None, num_rows: int | None) -> dict:
    """Effective build parameters when a field is left empty, for one vector index type.

    Measured against pylance 14 (``LanceDataset.create_index`` on 300-40,000 rows):

    * ``num_partitions = clamp(num_rows // target_partition_size, 1, 4096)`` with the
      per-type target in :data:`DEFAULT_TARGET_PARTITION_SIZE` (IVF_FLAT / IVF_RQ 4096,
      IVF_SQ / IVF_PQ 8192, HNSW variants 2**20, i.e. one partition for small tables);
    * ``num_sub_vectors`` (PQ types): pylance refuses to guess it, so the console sends
      ``dim/16`` if 16 divides the dimension, else ``dim/8``, else 1 (LanceDB's rule);
    * ``num_bits``: PQ 8, SQ 8, RQ 5; ``sample_rate`` 256; ``max_iterations`` 50;
    * HNSW ``m`` 20, ``ef_construction`` 150.

    Only the parameters that apply to ``index_type`` are returned.
    """
    t = index_type.upper()
    if t not in VECTOR_INDEX_TYPES:
        raise ValueError(f"{index_type!r} is not a vector index type")
    target = DEFAULT_TARGET_PARTITION_SIZE[t]
    out: dict[str, Any] = {}
    for p in vector_params_for(t):
        if p == "num_partitions":
            out[p] = (
                min(max(1, int(num_rows) // target), MAX_DEFAULT_PARTITIONS)
                if num_rows is not None
                else None
            )
        elif p == "target_partition_size":
            out[p] = target
        elif p == "sample_rate":
            out[p] = DEFAULT_SAMPLE_RATE
        elif p == "max_iterations":
            out[p] = DEFAULT_MAX_ITERATIONS
        elif p == "num_sub_vectors":
            out[p] = default_num_sub_vectors(dim)
        elif p == "num_bits":
            out[p] = DEFAULT_NUM_BITS[_quantizer(t) or "PQ"]
        elif p == "m":
            out[p] = DEFAULT_HNSW_M
        elif p == "ef_construction":
            out[p] = DEFAULT_HNSW_EF_CONSTRUCTION
    return out


# Parameters pylance cannot default: filled from vector_param_defaults when left empty.
REQUIRED_VECTOR_PARAMS: dict[str, tuple[str, ...]] = {"IVF_PQ": ("num_sub_vectors",)}
REQUIRED_VECTOR_PARAMS["IVF_HNSW_PQ"] = ("num_sub_vectors",)


def honoured_params_note(honoured: frozenset[str] | None, param: str) -> str:
    """``"honoured"``, ``"ignored by this backend"`` or ``"sent per spec; the server decides"``."""
    if honoured is None:
        return "sent as the spec defines; the server decides"
    return "honoured" if param in honoured else "not applied by this backend"


# --------------------------------------------------------------------------------------------
# Full-text options and the tokenizer preview
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


def fts_param_defaults(base_tokenizer: str = "simple") -> dict[str, Any]:
    """pylance's defaults for the FTS options (stemming and stop words off for ``ngram``)."""
    ngram = base_tokenizer == "ngram"
    return {
        "base_tokenizer": "simple" if base_tokenizer is None else base_tokenizer,
        "language": "English",
        "max_token_length": 40,
        "lower_case": True,
        "stem": not ngram,
        "remove_stop_words": not ngram,
        "ascii_folding": True,
        "with_position": False,
    }


@functools.lru_cache(maxsize=1)
def available_tokenizers() -> tuple[str, ...]:
    """Base tokenizers this pylance can run here (jieba / lindera need language models)."""
    try:
        import lance
    except ImportError:  # pragma: no cover
        return BASE_TOKENIZERS[:4]
    ok = []
    for name in BASE_TOKENIZERS:
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


def tokenize_preview(text: str, options: dict[str, Any]) -> list[Token]:
    """Tokens of ``text`` under the FTS options of the form (pylance's ``lance.tokenize``).

    ``options`` uses CreateTableIndexRequest names (``base_tokenizer``, ``language``,
    ``max_token_length``, ``lower_case``, ``stem``, ``remove_stop_words``, ``ascii_folding``);
    ``with_position`` does not change tokens and is ignored. Raises ``ValueError`` with
    pylance's message when the options are rejected.
    """
    import lance

    kwargs: dict[str, Any] = {}
    for key in (
        "base_tokenizer",
        "language",
        "lower_case",
        "stem",
        "remove_stop_words",
        "ascii_folding",
    ):
        if options.get(key) is not None:
            kwargs[key] = options[key]
    if "max_token_length" in options and options["max_token_length"] is not None:
        kwargs["max_token_length"] = int(options["max_token_length"])
    try:
        tokens = lance.tokenize(text or "", **kwargs)
    except Exception as err:  # noqa: BLE001 - pylance raises ValueError/RuntimeError/OSError
        raise ValueError(_short_lance_message(err)) from err
    return [Token(t.text, int(t.position)) for t in tokens]


def _short_lance_message(err: BaseException) -> str:
    msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    # pylance appends the Rust source location: ", /home/.../tokenizer.rs:839:24"
    return re.sub(r",\s*/\S+\.rs:\d+:\d+\s*$", "", msg)


# --------------------------------------------------------------------------------------------
# The create-index request: build and validate
# --------------------------------------------------------------------------------------------

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


def default_index_name(column: str, index_type: str) -> str:
    """``<column>_idx`` (pylance's default), used as the form's placeholder."""
    return f"{column}_idx"


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
    """A CreateTableIndexRequest from the form's values.

    Empty values (``None`` / ``""``) are left out, so the backend applies its defaults, except
    parameters pylance cannot default (``num_sub_vectors`` for PQ types), which are filled from
    :func:`vector_param_defaults` when ``fill_required`` is true. Parameters that do not apply to
    the index type are dropped. Raises ``ValueError`` on an unknown index type.
    """
    t = index_type.upper()
    category = index_category(t)
    fields: dict[str, Any] = {"id": list(table_id), "column": column, "index_type": t}
    if name and name.strip():
        fields["name"] = name.strip()
    params = {k: v for k, v in (params or {}).items() if v is not None and v != ""}
    if category == "vector":
        if distance_type:
            fields["distance_type"] = distance_type.lower()
        allowed = set(vector_params_for(t))
        for k, v in params.items():
            if k in allowed:
                fields[k] = int(v)
        if fill_required:
            defaults = vector_param_defaults(t, dim, num_rows)
            for k in REQUIRED_VECTOR_PARAMS.get(t, ()):
                if fields.get(k) is None and defaults.get(k) is not None:
                    fields[k] = int(defaults[k])
    elif category == "fts":
        for k, v in params.items():
            if k in FTS_PARAMS:
                fields[k] = int(v) if k == "max_token_length" else v
    return CreateTableIndexRequest(**fields)


def validate_index_request(
    request: CreateTableIndexRequest,
    column: ColumnInfo | None,
    *,
    num_rows: int | None = None,
    existing_names: Iterable[str] = (),
) -> list[str]:
    """Problems with a create-index request, checked before any call (empty list: fine)."""
    problems: list[str] = []
    t = (request.index_type or "").upper()
    if t not in ALL_INDEX_TYPES:
        return [f"Unknown index type {request.index_type!r}."]
    if column is None:
        return [f"Column {request.column!r} does not exist in this table."]
    fitting = column.fitting_types
    if t not in fitting:
        offered = ", ".join(fitting) or "none"
        problems.append(
            f"{t} does not fit column {column.name!r} ({column.arrow_type_str}); "
            f"fitting types: {offered}."
        )
    name = request.name
    if name is not None and not _NAME_RE.match(name):
        problems.append(
            f"Index name {name!r}: use letters, digits, '_' or '-', starting with a letter."
        )
    effective = name if name is not None else default_index_name(request.column, t)
    if effective in set(existing_names):
        problems.append(
            f"An index named {effective!r} already exists (or is being built); "
            "choose another name or drop it first."
        )
    category = index_category(t)
    if category == "vector":
        problems += _validate_vector(request, column, num_rows)
    elif category == "fts":
        problems += _validate_fts(request)
    return problems


def _validate_vector(
    request: CreateTableIndexRequest, column: ColumnInfo, num_rows: int | None
) -> list[str]:
    problems: list[str] = []
    t = request.index_type.upper()
    dim = column.dim
    metric = (request.distance_type or "l2").lower()
    if metric not in DISTANCE_TYPES:
        problems.append(f"Distance type {metric!r}: choose one of {', '.join(DISTANCE_TYPES)}.")
    elif column.kind == "binary_vector" and metric != "hamming":
        problems.append(
            f"Column {column.name!r} holds binary (uint8) vectors: only the hamming distance fits."
        )
    elif column.kind == "vector" and metric == "hamming":
        problems.append(
            f"hamming distance needs binary (uint8) vectors; {column.name!r} is "
            f"{column.arrow_type_str}."
        )
    for p in VECTOR_BUILD_PARAMS:
        value = getattr(request, p)
        if value is None:
            continue
        if t not in VECTOR_PARAM_APPLIES[p]:
            problems.append(f"{p} does not apply to {t}.")
        elif value < 1:
            problems.append(f"{p} must be at least 1 (got {value}).")
    if request.num_partitions is not None and request.target_partition_size is not None:
        problems.append("Set either num_partitions or target_partition_size, not both.")
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
    q = _quantizer(t)
    if request.num_bits is not None and q is not None:
        allowed = ALLOWED_NUM_BITS[q]
        if request.num_bits not in allowed:
            problems.append(
                f"num_bits {request.num_bits} is not supported for {q}; "
                f"use {' or '.join(map(str, allowed)) if len(allowed) < 4 else '1-8'}."
            )
    if q == "PQ" and request.num_bits == 4 and nsv is not None and nsv % 2 != 0:
        problems.append(
            f"PQ with 4 bits packs two codes per byte: num_sub_vectors must be even (got {nsv})."
        )
    if q == "PQ" and num_rows is not None and num_rows > 0:
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


def index_request_hints(request: CreateTableIndexRequest, num_rows: int | None) -> list[str]:
    """Non-blocking remarks about a valid request (the build still runs).

    Measured on pylance 14: PQ types train at most one IVF partition per 256 rows, so with
    fewer than ``num_partitions * 256`` rows Lance builds fewer partitions than asked (other
    vector types build the partitions asked for).
    """
    hints: list[str] = []
    t = (request.index_type or "").upper()
    if _quantizer(t) == "PQ" and request.num_partitions and num_rows:
        needed = request.num_partitions * PQ_ROWS_PER_PARTITION
        if num_rows < needed:
            hints.append(
                f"{request.num_partitions} PQ partitions want about {needed} rows "
                f"({PQ_ROWS_PER_PARTITION} per partition); with {num_rows} rows Lance trains "
                "fewer partitions."
            )
    return hints


def _validate_fts(request: CreateTableIndexRequest) -> list[str]:
    problems: list[str] = []
    bt = request.base_tokenizer
    if bt is not None and bt not in BASE_TOKENIZERS:
        problems.append(f"Unknown base tokenizer {bt!r}.")
    lang = request.language
    if lang is not None and lang not in FTS_LANGUAGES:
        problems.append(f"Unknown language {lang!r}; choose one of {', '.join(FTS_LANGUAGES)}.")
    mtl = request.max_token_length
    if mtl is not None and mtl < 1:
        problems.append("max_token_length must be at least 1.")
    return problems


# --------------------------------------------------------------------------------------------
# Create / drop
# --------------------------------------------------------------------------------------------


def _accepts_progress(method: Callable[..., Any]) -> bool:
    try:
        sig = inspect.signature(method)
    except (TypeError, ValueError):
        return False
    return "progress" in sig.parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()
    )


def create_index(
    ns: LanceNamespace,
    request: CreateTableIndexRequest,
    *,
    progress: Callable[[dict], None] | None = None,
) -> Any:
    """Create the index: CreateTableScalarIndex for scalar types, CreateTableIndex otherwise.

    ``progress`` (a callable receiving event dicts) is passed to backends whose method accepts
    it (the local backend's pylance progress callback); other backends never see it.
    """
    category = index_category(request.index_type)
    method = ns.create_table_scalar_index if category == "scalar" else ns.create_table_index
    if progress is not None and _accepts_progress(method):
        return method(request, progress=progress)
    return method(request)


def drop_index(ns: LanceNamespace, table_id: Sequence[str], name: str) -> DropTableIndexResponse:
    """DropTableIndex by name."""
    return ns.drop_table_index(DropTableIndexRequest(id=list(table_id), index_name=name))


# --------------------------------------------------------------------------------------------
# Overview
# --------------------------------------------------------------------------------------------

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
    from .paging import list_all

    req = ListTableIndicesRequest(id=list(table_id), version=version)
    return list(list_all(ns.list_table_indices, req, field="indexes"))


def _distance_from_details(details: str | None) -> str | None:
    if not details:
        return None
    try:
        data = json.loads(details)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    for key in ("metric_type", "distance_type", "metric"):
        if data.get(key):
            return str(data[key]).lower()
    return None


def index_stats(ns: LanceNamespace, table_id: Sequence[str], name: str) -> Any | None:
    """DescribeTableIndexStats for one index; ``None`` when the backend cannot say."""
    try:
        return ns.describe_table_index_stats(
            DescribeTableIndexStatsRequest(id=list(table_id), index_name=name)
        )
    except LanceNamespaceError:
        return None


def index_overview(ns: LanceNamespace, table_id: Sequence[str]) -> pd.DataFrame:
    """One row per index: ListTableIndices joined with DescribeTableIndexStats per index.

    Columns: see :data:`OVERVIEW_COLUMNS`. Row counts prefer the stats answer and fall back to
    the listing; ``coverage`` is indexed / (indexed + unindexed); ``distance_type`` falls back
    to the metric recorded in the index details.
    """
    rows = []
    for ix in list_indexes(ns, table_id):
        name = _get(ix, "index_name")
        stats = index_stats(ns, table_id, name)
        indexed = _first(_get(stats, "num_indexed_rows"), _get(ix, "num_indexed_rows"))
        unindexed = _first(_get(stats, "num_unindexed_rows"), _get(ix, "num_unindexed_rows"))
        details = _get(ix, "index_details")
        total = (indexed or 0) + (unindexed or 0)
        rows.append(
            {
                "name": name,
                "type": normalize_index_type(
                    _first(_get(ix, "index_type"), _get(stats, "index_type"))
                ),
                "columns": ", ".join(_get(ix, "columns") or []),
                "status": _get(ix, "status"),
                "indexed_rows": indexed,
                "unindexed_rows": unindexed,
                "coverage": (indexed or 0) / total if total and indexed is not None else None,
                "size_bytes": _get(ix, "size_bytes"),
                "segments": _first(_get(ix, "num_segments"), _get(stats, "num_indices")),
                "distance_type": _first(
                    (_get(stats, "distance_type") or None), _distance_from_details(details)
                ),
                "created_at": _get(ix, "created_at"),
                "uuid": _get(ix, "index_uuid"),
                "details": details,
            }
        )
    df = pd.DataFrame(rows, columns=list(OVERVIEW_COLUMNS))
    for col in ("indexed_rows", "unindexed_rows", "size_bytes", "segments"):
        df[col] = pd.array(df[col], dtype="Int64")
    df["coverage"] = pd.array(df["coverage"], dtype="Float64")
    return df


def _first(*values: Any) -> Any:
    for v in values:
        if v is not None:
            return v
    return None


def lagging_indexes(overview: pd.DataFrame) -> pd.DataFrame:
    """Indexes that lag behind the data (unindexed rows > 0)."""
    if overview.empty:
        return overview
    mask = overview["unindexed_rows"].fillna(0) > 0
    return overview[mask.astype(bool)]


def index_details_dict(details: str | None) -> dict[str, Any]:
    """The index's opaque JSON details, parsed (empty dict when absent or not JSON)."""
    if not details:
        return {}
    try:
        data = json.loads(details)
    except ValueError:
        return {"raw": details}
    return data if isinstance(data, dict) else {"value": data}


# --------------------------------------------------------------------------------------------
# Coverage across versions
# --------------------------------------------------------------------------------------------

HISTORY_COLUMNS: tuple[str, ...] = (
    "version",
    "timestamp",
    "index_name",
    "index_type",
    "indexed_rows",
    "unindexed_rows",
    "total_rows",
    "coverage",
)


def coverage_history(
    ns: LanceNamespace, table_id: Sequence[str], max_versions: int = 30
) -> pd.DataFrame:
    """Indexed vs unindexed rows per index for the table's most recent ``max_versions`` versions.

    Local backend: each version is opened with pylance (``lance.dataset(location).checkout_version``)
    and its indexes described (``num_rows_indexed`` vs ``count_rows()``). Other backends:
    ListTableVersions, then ListTableIndices with ``version`` per version (the server decides
    whether it honours ``version``). ``df.attrs["source"]`` says which path was used.
    """
    from . import capabilities

    if max_versions < 1:
        raise ValueError("max_versions must be at least 1")
    if capabilities(ns).kind == "local":
        desc = ns.describe_table(DescribeTableRequest(id=list(table_id)))
        location = _get(desc, "location")
        if location:
            df = _coverage_history_pylance(location, _get(desc, "storage_options"), max_versions)
            df.attrs["source"] = "pylance"
            return df
    df = _coverage_history_namespace(ns, table_id, max_versions)
    df.attrs["source"] = "namespace"
    return df


def _coverage_history_pylance(
    location: str, storage_options: dict[str, str] | None, max_versions: int
) -> pd.DataFrame:
    import lance

    ds = lance.dataset(location, storage_options=storage_options or None)
    versions = sorted(ds.versions(), key=lambda v: v["version"])[-max_versions:]
    rows = []
    for v in versions:
        dv = ds.checkout_version(v["version"])
        total = dv.count_rows()
        for ix in dv.describe_indices():
            if ix.name.startswith("__"):  # internal system indexes (e.g. frag reuse)
                continue
            indexed = int(ix.num_rows_indexed or 0)
            rows.append(
                {
                    "version": int(v["version"]),
                    "timestamp": v.get("timestamp"),
                    "index_name": ix.name,
                    "index_type": normalize_index_type(ix.index_type),
                    "indexed_rows": indexed,
                    "unindexed_rows": max(total - indexed, 0),
                    "total_rows": total,
                    "coverage": min(indexed / total, 1.0) if total else None,
                }
            )
    return pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))


def _coverage_history_namespace(
    ns: LanceNamespace, table_id: Sequence[str], max_versions: int
) -> pd.DataFrame:
    from .paging import list_all

    versions = list(
        list_all(
            ns.list_table_versions, ListTableVersionsRequest(id=list(table_id)), field="versions"
        )
    )
    versions = sorted(versions, key=lambda v: _get(v, "version"))[-max_versions:]
    rows = []
    for v in versions:
        number = int(_get(v, "version"))
        millis = _get(v, "timestamp_millis")
        ts = pd.Timestamp(millis, unit="ms") if millis else None
        for ix in list_indexes(ns, table_id, version=number):
            indexed = _get(ix, "num_indexed_rows")
            unindexed = _get(ix, "num_unindexed_rows")
            total = (indexed or 0) + (unindexed or 0) if indexed is not None else None
            rows.append(
                {
                    "version": number,
                    "timestamp": ts,
                    "index_name": _get(ix, "index_name"),
                    "index_type": normalize_index_type(_get(ix, "index_type")),
                    "indexed_rows": indexed,
                    "unindexed_rows": unindexed,
                    "total_rows": total,
                    "coverage": (indexed / total) if total else None,
                }
            )
    return pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))


# --------------------------------------------------------------------------------------------
# Builds in the background
# --------------------------------------------------------------------------------------------


def _event_dict(event: Any) -> dict[str, Any]:
    """A progress event (dict or pylance ``IndexProgress``) as a plain dict with a timestamp."""
    if isinstance(event, dict):
        out = dict(event)
    else:
        out = {k: getattr(event, k, None) for k in ("event", "stage", "completed", "total", "unit")}
    out.setdefault("at", time.time())
    return out


@dataclass
class BuildJob:
    """One index build running (or finished) in a background thread."""

    job_id: str
    table_id: tuple[str, ...]
    index_name: str
    index_type: str
    column: str
    mode: str  # "events": the backend reports progress; "polling": we poll the index listing
    status: str = "running"  # running | succeeded | failed
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    stage: str | None = None
    fraction: float | None = None
    observed: dict[str, Any] | None = None  # last poll: status / rows of the index
    response: Any = None
    error: BaseException | None = None

    @property
    def done(self) -> bool:
        return self.status != "running"

    @property
    def elapsed(self) -> float:
        return (self.finished_at or time.time()) - self.started_at

    @property
    def stages(self) -> list[str]:
        seen: list[str] = []
        for e in self.events:
            s = e.get("stage")
            if s and s not in seen:
                seen.append(s)
        return seen


class BuildJobRegistry:
    """Index builds keyed by job id. Thread-safe; keeps the most recent ``max_jobs`` jobs.

    ``start`` returns at once; the build runs in a daemon thread. On backends that report
    progress (``capabilities.progress_events``) events arrive through the progress callable;
    otherwise a second thread polls ListTableIndices every ``poll_interval`` seconds and records
    what the server shows for the index.
    """

    def __init__(self, max_jobs: int = 50, max_events: int = 500):
        self._lock = threading.Lock()
        self._jobs: dict[str, BuildJob] = {}
        self._order: deque[str] = deque()
        self._max_jobs = max_jobs
        self._max_events = max_events

    def start(
        self,
        ns: LanceNamespace,
        request: CreateTableIndexRequest,
        *,
        poll_interval: float = 1.0,
    ) -> str:
        from . import capabilities

        caps = capabilities(ns)
        job = BuildJob(
            job_id=uuid.uuid4().hex[:12],
            table_id=tuple(request.id or ()),
            index_name=request.name or default_index_name(request.column, request.index_type),
            index_type=request.index_type,
            column=request.column,
            mode="events" if caps.progress_events else "polling",
        )
        with self._lock:
            self._jobs[job.job_id] = job
            self._order.append(job.job_id)
            finished = [i for i in self._order if self._jobs[i].done]
            while len(self._order) > self._max_jobs and finished:
                oldest = finished.pop(0)
                self._order.remove(oldest)
                self._jobs.pop(oldest, None)
        worker = threading.Thread(
            target=self._run,
            args=(ns, request, job.job_id),
            daemon=True,
            name=f"index-{job.job_id}",
        )
        worker.start()
        if job.mode == "polling":
            poller = threading.Thread(
                target=self._poll,
                args=(ns, job.job_id, poll_interval),
                daemon=True,
                name=f"index-poll-{job.job_id}",
            )
            poller.start()
        return job.job_id

    # -- worker threads --------------------------------------------------------------------

    def _record(self, job_id: str, event: Any) -> None:
        e = _event_dict(event)
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return
            job.events.append(e)
            if len(job.events) > self._max_events:
                del job.events[: len(job.events) - self._max_events]
            if e.get("stage"):
                job.stage = e["stage"]
            completed, total = e.get("completed"), e.get("total")
            if completed is not None and total:
                job.fraction = min(float(completed) / float(total), 1.0)
            elif e.get("event") == "start":
                job.fraction = None
            elif e.get("event") == "complete":
                job.fraction = 1.0

    def _run(self, ns: LanceNamespace, request: CreateTableIndexRequest, job_id: str) -> None:
        job = self._jobs[job_id]

        def progress(event: Any) -> None:
            self._record(job_id, event)

        try:
            response = create_index(
                ns, request, progress=progress if job.mode == "events" else None
            )
        except BaseException as err:  # noqa: BLE001 - reported to the UI, never re-raised
            with self._lock:
                job.error = err
                job.status = "failed"
                job.finished_at = time.time()
            return
        with self._lock:
            job.response = response
            job.status = "succeeded"
            job.finished_at = time.time()
            job.fraction = 1.0

    def _poll(self, ns: LanceNamespace, job_id: str, interval: float) -> None:
        job = self._jobs[job_id]
        while True:
            time.sleep(interval)
            with self._lock:
                if job.done:
                    return
            try:
                found = [
                    ix
                    for ix in list_indexes(ns, job.table_id)
                    if _get(ix, "index_name") == job.index_name
                ]
            except Exception as err:  # noqa: BLE001 - polling is best effort
                self._record(job_id, {"event": "poll", "stage": "polling", "error": str(err)})
                continue
            if found:
                ix = found[0]
                observed = {
                    "status": _get(ix, "status"),
                    "indexed_rows": _get(ix, "num_indexed_rows"),
                    "unindexed_rows": _get(ix, "num_unindexed_rows"),
                }
                stage = f"server reports {observed['status']}"
            else:
                observed = {"status": "not listed yet"}
                stage = "waiting for the server"
            with self._lock:
                job.observed = observed
            self._record(job_id, {"event": "poll", "stage": stage, **observed})

    # -- queries ----------------------------------------------------------------------------

    def get(self, job_id: str) -> BuildJob | None:
        """A consistent copy of the job (events copied), or ``None`` if unknown."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return None
            return replace(job, events=list(job.events), observed=dict(job.observed or {}) or None)

    def jobs(self, table_id: Sequence[str] | None = None) -> list[BuildJob]:
        """Copies of the known jobs (newest first), optionally for one table."""
        with self._lock:
            ids = list(self._order)
        out = [j for j in (self.get(i) for i in reversed(ids)) if j is not None]
        if table_id is not None:
            out = [j for j in out if j.table_id == tuple(table_id)]
        return out

    def running(self, table_id: Sequence[str] | None = None) -> list[BuildJob]:
        return [j for j in self.jobs(table_id) if not j.done]

    def wait(self, job_id: str, timeout: float = 60.0, interval: float = 0.05) -> BuildJob:
        """Block until the job finishes (tests, scripts); raises ``TimeoutError``."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            job = self.get(job_id)
            if job is None:
                raise KeyError(job_id)
            if job.done:
                return job
            time.sleep(interval)
        raise TimeoutError(f"index build {job_id} still running after {timeout}s")

    def forget(self, job_id: str) -> None:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is not None and job.done:
                self._jobs.pop(job_id, None)
                with contextlib.suppress(ValueError):
                    self._order.remove(job_id)


JOBS = BuildJobRegistry()


def start_build(
    ns: LanceNamespace, request: CreateTableIndexRequest, *, poll_interval: float = 1.0
) -> str:
    """Start an index build in the background (module-wide registry :data:`JOBS`)."""
    return JOBS.start(ns, request, poll_interval=poll_interval)


__all__ = [
    "ALL_INDEX_TYPES",
    "BuildJob",
    "BuildJobRegistry",
    "ColumnInfo",
    "DISTANCE_TYPES",
    "FTS_INDEX_TYPES",
    "FTS_LANGUAGES",
    "JOBS",
    "SCALAR_INDEX_TYPES",
    "Token",
    "VECTOR_INDEX_TYPES",
    "arrow_type_str",
    "available_tokenizers",
    "build_index_request",
    "column_kind",
    "coverage_history",
    "create_index",
    "distance_types_for",
    "drop_index",
    "fitting_index_types",
    "fts_param_defaults",
    "index_category",
    "index_overview",
    "index_request_hints",
    "lagging_indexes",
    "normalize_index_type",
    "start_build",
    "table_columns",
    "table_num_rows",
    "tokenize_preview",
    "validate_index_request",
    "vector_param_defaults",
    "vector_params_for",
]
