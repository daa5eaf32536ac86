"""A vector search setting to share: as the page's URL query parameters (``?column=vector&k=10
&nprobes=8``) and back, checked by the query rule; the link itself, and Copy as Python with the
link (``components.snippets.search_snippets``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlencode

import streamlit as st
from lance_namespace.errors import InvalidInputError

from backend.branch_view import MAIN
from backend.rules import query_rules
from backend.services.search.query import VECTOR_QUERY_PARAMS
from backend.text import is_digits
from components import state
from components.snippets import connect_args, search_snippets

# ``text``: the query vector is that text, embedded with the table's embedding
SHARE_KEYS: tuple[str, ...] = (
    "column", "k", "distance_type", *VECTOR_QUERY_PARAMS, "text",
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
            if not is_digits(text):  # ASCII digits only: int() takes "٣", "1_0" and " 7 "
                raise InvalidInputError(f"{key} must be a whole number, got {text!r}")
            out[key] = int(text)
    problems = query_rules.query_problems(
        SimpleNamespace(**{k: v for k, v in out.items() if k != "text"})
    )
    if problems:
        raise InvalidInputError(problems[0])
    return out


def share_url(
    table_id: Sequence[str],
    column: str,
    k: int,
    params: Mapping[str, Any],
    text: str | None = None,
    branch: str | None = None,
) -> str:
    """A link to this page's vector search with a setting filled in (``text``: the query
    vector is that text, embedded; ``branch``: on that branch)."""
    query: list[tuple[str, str]] = [(state.QP_NAMESPACE, part) for part in table_id[:-1]]
    query += [(state.QP_TABLE, table_id[-1])]
    if branch and branch != MAIN:
        query.append((state.QP_BRANCH, branch))
    query.append((state.QP_TAB, "vector"))
    query += list(share_params(column, k, params, text=text).items())
    base = str(getattr(st.context, "url", "") or "").split("?")[0]
    return f"{base}?{urlencode(query)}"


def render_setting_snippets(
    table_id: Sequence[str],
    column: str,
    k: int,
    params: Mapping[str, Any],
    *,
    text: str | None = None,
    branch: str | None = None,
) -> None:
    """Copy as Python (the backend call and plain pylance) and a shareable link; ``text``:
    the query vector is that text embedded with the table's embedding (the snippets embed
    it the same way, the link carries it); ``branch``: the setting's branch (the snippets
    and the link name it)."""
    from components.session import snippet_connection

    args = ", ".join(connect_args(snippet_connection()))
    console, pylance = search_snippets(
        f"ns = backend.connect({args})", table_id, column, k, params, text=text, branch=branch
    )
    with st.expander("Copy as Python · share", icon=":material/code:"):
        st.caption("With the backend (any connection):")
        st.code(console, language="python")
        st.caption("With plain pylance, next to the data:")
        st.code(pylance, language="python")
        st.caption("A link to this setting:")
        link = share_url(table_id, column, k, params, text, branch=branch)
        st.code(link, language=None, wrap_lines=True)
