"""Explain and analyze a QueryTable request with pylance's scanner.

pylance's ``DirectoryNamespace`` plans a QueryTable request without its full-text query
(the plan of a full-text search is a plain scan), so the local backend builds the scanner
itself from the request: the same columns, filter, limit, offset, vector search settings and
full-text query that QueryTable runs. A full-text query this module cannot map (boolean,
boost, multi-match) is left to pylance.
"""

from __future__ import annotations

from typing import Any

import lance
import numpy as np
import pyarrow as pa
from lance_namespace import QueryTableRequest


def _full_text(request: QueryTableRequest) -> Any | None:
    fts = request.full_text_query
    if fts is None:
        return None
    if fts.string_query is not None:
        query = fts.string_query
        if query.columns:
            return {"query": query.query, "columns": list(query.columns)}
        return query.query
    structured = fts.structured_query.query if fts.structured_query else None
    if structured is None:
        return None
    from lance.query import MatchQuery, PhraseQuery

    if structured.phrase is not None:
        phrase = structured.phrase
        return PhraseQuery(phrase.terms, phrase.column or "", slop=int(phrase.slop or 0))
    if structured.match is not None:
        match = structured.match
        return MatchQuery(match.terms, match.column or "", fuzziness=int(match.fuzziness or 0))
    return None


def plannable(request: QueryTableRequest) -> bool:
    """True when this module maps every part of the request (else pylance plans it)."""
    return request.full_text_query is None or _full_text(request) is not None


def runnable(request: QueryTableRequest) -> bool:
    """True when the request can run on a dataset with :func:`scanner_arguments`: plannable,
    on the main branch, without column aliases or multivector queries."""
    columns = request.columns
    vector = request.vector
    return (
        plannable(request)
        and not request.branch
        and not (columns is not None and getattr(columns, "column_aliases", None))
        and not (vector is not None and vector.multi_vector)
    )


def float32_array(values: Any) -> pa.Array:
    """A query vector as float32 Arrow: straight from a list of numbers, else (what pyarrow
    refuses: integers beyond int64, numpy scalars...) through numpy, which turns what float32
    cannot hold into an infinity as before."""
    if type(values) is list:
        try:
            return pa.array(values, type=pa.float32())
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
            pass
    return pa.array(np.asarray(values, dtype=np.float32))


def scanner_arguments(request: QueryTableRequest) -> dict[str, Any]:
    """``LanceDataset.scanner`` keyword arguments for a QueryTable request."""
    kwargs: dict[str, Any] = {}
    if request.columns is not None and request.columns.column_names is not None:
        kwargs["columns"] = list(request.columns.column_names)
    if request.filter:
        kwargs["filter"] = request.filter
    if request.prefilter is not None:
        kwargs["prefilter"] = bool(request.prefilter)
    if request.with_row_id:
        kwargs["with_row_id"] = True
    if request.fast_search is not None:
        kwargs["fast_search"] = bool(request.fast_search)
    vector = request.vector
    values = vector.single_vector if vector is not None else None
    if values:
        nearest: dict[str, Any] = {
            "column": request.vector_column,
            # float32 Arrow, what lance converts a query vector to (a list would be copied
            # and converted again by every scanner)
            "q": float32_array(values),
            "k": int(request.k or 10),
        }
        for field in ("nprobes", "minimum_nprobes", "maximum_nprobes", "refine_factor", "ef"):
            value = getattr(request, field, None)
            if value is not None:
                nearest[field] = int(value)
        if request.distance_type:
            nearest["metric"] = request.distance_type
        if request.bypass_vector_index:
            nearest["use_index"] = False
        if request.lower_bound is not None or request.upper_bound is not None:
            nearest["distance_range"] = (request.lower_bound, request.upper_bound)
        kwargs["nearest"] = nearest
    elif request.k is not None:
        kwargs["limit"] = int(request.k)
    if request.offset:
        kwargs["offset"] = int(request.offset)
    fts = _full_text(request)
    if fts is not None:
        kwargs["full_text_query"] = fts
    # QueryTable answers carry the score of a search; named explicitly, lance adds it without
    # its deprecation warning about automatic projection.
    score = "_distance" if "nearest" in kwargs else "_score" if fts is not None else None
    if score and "columns" in kwargs and score not in kwargs["columns"]:
        kwargs["columns"] = [*kwargs["columns"], score]
    return kwargs


def plan(
    ds: lance.LanceDataset, request: QueryTableRequest, *, analyze: bool, verbose: bool
) -> str:
    """The physical plan of ``request`` on ``ds`` (at the request's version); with
    ``analyze`` the query runs and each node carries its metrics."""
    if request.version is not None:
        ds = ds.checkout_version(int(request.version))
    scanner = ds.scanner(**scanner_arguments(request))
    return scanner.analyze_plan() if analyze else scanner.explain_plan(verbose=verbose)
