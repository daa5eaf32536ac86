"""The fields of the create panel that follow the index type: vector parameters (with the
indexes already on the column), full-text options and the tokenizer preview.

The rules (types, fit, parameters, defaults) are ``backend.rules.index_rules``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from backend.capabilities import BackendCapabilities
from backend.rules import index_rules as rules
from backend.rules.columns import ColumnInfo
from backend.services import index_overview as ixs
from backend.text import plural
from components import feedback, state
from components.common import dataframe, render_whole_number

DEFAULT_SAMPLE_TEXT = "The Running Dogs jumped over the Café fences in 2024"


def backend_note(caps: BackendCapabilities, param: str) -> str:
    honoured = caps.honoured_index_params
    if honoured is None:
        return "sent as the spec defines; the server decides"
    return "honoured" if param in honoured else "not applied by this backend"


def render_existing_vector_warning(column: str, existing: Sequence[dict[str, Any]]) -> None:
    """A column that already has a vector index: what another one on it means."""
    if not existing:
        return
    listed = ", ".join(f"{e['name']} ({e['type']}, {e['distance'] or '?'})" for e in existing)
    feedback.show(
        "warning",
        f"{column} already has a vector index: {listed}. Another one is built beside it, but "
        "a search uses one index only, the one lance picks (the query plan names it; Search "
        "& tune shows it): a query cannot name the index. Drop the old index to replace it.",
    )


def render_vector_fields(
    index_type: str,
    column: ColumnInfo,
    num_rows: int | None,
    caps: BackendCapabilities,
    *,
    key_prefix: str,
    problems: list[str],
    existing: Sequence[dict[str, Any]] = (),
) -> tuple[str, dict[str, Any]]:
    """Distance type (first offered: the metric of the column's existing vector index) and
    the build parameters of ``index_type`` (empty: the default shown), read as typed: a
    value out of ``index_rules.param_range`` is said under its field and added to
    ``problems`` (nothing is built while one is there)."""
    render_existing_vector_warning(column.name, existing)
    options = rules.distance_types_for(column.type_info)
    first = rules.default_distance(column.type_info, [e["distance"] for e in existing])
    # a column with an index of its own keeps its own choice (its default differs)
    key = f"{key_prefix}.distance.{column.kind}" + (f".{column.name}" if existing else "")
    distance = st.selectbox(
        "Distance type",
        options,
        index=options.index(first) if first in options else 0,
        key=key,
        persist_state=state.KEEP_WHILE_ON_PAGE,
        help="hamming is offered only for binary (uint8) vectors, and is their only choice."
        + (f" First offered: {first}, the metric of the column's index." if existing else ""),
    )
    defaults = rules.vector_param_defaults(index_type, column.dim, num_rows)
    names = rules.vector_params_for(index_type)
    params: dict[str, Any] = {}
    cols = st.columns(3)
    for i, name in enumerate(names):
        default = defaults.get(name)
        low, high = rules.param_range(name)
        params[name] = render_whole_number(
            name,
            key=f"{key_prefix}.p.{index_type}.{name}",
            bounds=(low, high),
            problems=problems,
            where=cols[i % 3],
            placeholder=f"default: {default}" if default is not None else "server default",
            persist_state=state.KEEP_WHILE_ON_PAGE,
            help=f"{rules.VECTOR_PARAM_HELP[name]}; {low:,} to {high:,}. "
            f"Backend: {backend_note(caps, name)}.",
        )
    with st.expander("Defaults and what the backend honours"):
        dataframe(
            pd.DataFrame(
                [
                    {
                        "parameter": n,
                        "your value": "" if params[n] is None else str(params[n]),
                        "default": "" if defaults.get(n) is None else str(defaults[n]),
                        "backend": backend_note(caps, n),
                    }
                    for n in names
                ]
            ),
            hide_index=True,
            key=f"{key_prefix}.defaults.{index_type}",
            words=True,
        )
        st.caption(
            f"For {num_rows if num_rows is not None else '?'} rows of dimension {column.dim}: "
            "num_partitions about √rows (PQ types at most rows/256, HNSW types one per 2²⁰ rows); "
            "num_sub_vectors so that each sub-vector has 16 (or 8) dimensions. The local backend "
            "sends these when the fields are empty and reports what it chose."
        )
    return distance, params


def render_fts_fields(*, key_prefix: str, problems: list[str]) -> dict[str, Any]:
    """Full-text options with pylance's defaults, and a live tokenizer preview; a max token
    length refused as typed is added to ``problems``."""
    c1, c2, c3 = st.columns(3)
    base = c1.selectbox(
        "Base tokenizer",
        list(ixs.available_tokenizers()),
        key=f"{key_prefix}.fts.base",
        persist_state=state.KEEP_WHILE_ON_PAGE,
        help="jieba / lindera appear when their language models are installed.",
    )
    defaults = rules.fts_param_defaults(base)
    language = c2.selectbox(
        "Language",
        list(rules.FTS_LANGUAGES),
        index=list(rules.FTS_LANGUAGES).index(defaults["language"]),
        key=f"{key_prefix}.fts.language",
        persist_state=state.KEEP_WHILE_ON_PAGE,
        help=rules.FTS_PARAM_HELP["language"],
    )
    low, high = rules.param_range("max_token_length")
    max_len_key = f"{key_prefix}.fts.max_token_length"
    if not state.has(max_len_key):
        state.put(max_len_key, str(defaults["max_token_length"]))
    max_len = render_whole_number(
        "Max token length",
        name="max_token_length",
        key=max_len_key,
        bounds=(low, high),
        problems=problems,
        required=True,
        where=c3,
        persist_state=state.KEEP_WHILE_ON_PAGE,
        help=f"{rules.FTS_PARAM_HELP['max_token_length']}; {low:,} to {high:,}",
    )
    values: dict[str, Any] = {}
    flags = ("lower_case", "stem", "remove_stop_words", "ascii_folding", "with_position")
    labels = ("Lower case", "Stemming", "Stop words", "ASCII folding", "Positions")
    for col, name, label in zip(st.columns(5), flags, labels, strict=True):
        values[name] = col.checkbox(
            label,
            value=defaults[name],
            key=f"{key_prefix}.fts.{base}.{name}",
            persist_state=state.KEEP_WHILE_ON_PAGE,
            help=rules.FTS_PARAM_HELP[name],
        )
    params = {
        "base_tokenizer": base,
        "language": language,
        **values,
    }
    if max_len is not None:
        params["max_token_length"] = max_len
    render_tokenizer_preview(params)
    return params


def render_tokenizer_preview(params: dict[str, Any]) -> list[ixs.Token]:
    """Tokens of a sample text under ``params`` (pylance's ``lance.tokenize``), live."""
    text = st.text_input(
        "Tokenizer preview: sample text",
        value=DEFAULT_SAMPLE_TEXT,
        key=state.Indexes.PREVIEW_TEXT,
        persist_state=state.KEEP_WHILE_ON_PAGE,
    )
    try:
        tokens = ixs.tokenize_preview(text, params)
    except ValueError as err:
        feedback.show("warning", f"The tokenizer refuses these options: {err}")
        return []
    if tokens:
        st.markdown("**Tokens:** " + " ".join(f"`{t.text.replace('`', '')}`" for t in tokens))
        positions = [t.position for t in tokens]
        gaps = any(b - a > 1 for a, b in zip(positions, positions[1:], strict=False))
        st.caption(
            f"{plural(len(tokens), 'token')}; positions {', '.join(str(p) for p in positions)}"
            + (" (gaps: removed stop words)" if gaps or (positions and positions[0] > 0) else "")
        )
    else:
        st.markdown("**Tokens:** *(none)*")
    return tokens
