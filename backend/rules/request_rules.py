"""The static checks of every request, shared by both backends: nothing is sent or touched
until a request passes them.

:func:`check_request` applies, per operation, the rule modules: ids and names
(``backend.rules.ids``; names the operation creates follow the creation rule), properties and
metadata caps (``backend.rules.properties``), version ranges (``backend.rules.version_ranges``), index
requests (``backend.rules.index_rules``), queries (``backend.rules.query_rules``), plus plain range checks
of numbers (versions, limits) and the spec's words of ``mode`` / ``behavior`` fields.
The local backend calls it on entry; the REST client calls it before it sends. What needs
the namespace's state (does the namespace exist, is this the latest version) is each
backend's business on top.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from lance_namespace.errors import InvalidInputError

from backend.rules import (
    alter_actions,
    filter_rules,
    ids,
    index_rules,
    properties,
    query_rules,
    version_ranges,
)

# Operations addressing a namespace (the root included, as ``[]``).
NAMESPACE_OPS = frozenset(
    {
        "list_namespaces",
        "describe_namespace",
        "drop_namespace",
        "namespace_exists",
        "list_tables",
        "list_all_tables",
        "create_namespace",
    }
)
ROOT_OK_OPS = frozenset({"list_namespaces", "list_tables", "list_all_tables", "namespace_exists"})
# Operations whose id ends in the name they create.
NEW_NAME_OPS = frozenset(
    {"create_namespace", "create_table", "create_empty_table", "declare_table", "register_table"}
)
TRANSACTION_OPS = frozenset({"describe_transaction", "alter_transaction"})
NO_ID_OPS = frozenset({"batch_commit_tables", "batch_create_table_versions"})
# Name fields other than the id: (field, what, created by this operation).
_NAME_FIELDS: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "describe_table_index_stats": (("index_name", "index", False),),
    "drop_table_index": (("index_name", "index", False),),
    "create_table_index": (("name", "index", True),),
    "create_table_scalar_index": (("name", "index", True),),
    "create_table_tag": (("tag", "tag", True),),
    "update_table_tag": (("tag", "tag", False),),
    "delete_table_tag": (("tag", "tag", False),),
    "get_table_tag_version": (("tag", "tag", False),),
    "describe_table": (("tag", "tag", False),),
    "create_table_branch": (("name", "branch", True), ("from_branch", "branch", False)),
    "delete_table_branch": (("name", "branch", False),),
    "rename_table": (("new_table_name", "table", True),),
}
# Fields whose value is one of the spec's words, per operation (case insensitive, PascalCase
# or snake_case: "ExistOk", "exist_ok" and "EXISTOK" are the same word).
CHOICE_FIELDS: dict[str, dict[str, tuple[str, ...]]] = {
    "create_namespace": {"mode": ("Create", "ExistOk", "Overwrite")},
    "drop_namespace": {"mode": ("Fail", "Skip"), "behavior": ("Restrict", "Cascade")},
}
# The smallest ``limit`` per operation where 0 means nothing (default: 0).
MIN_LIMIT: dict[str, int] = {"list_table_versions": 1}
_PROPERTY_FIELDS = ("properties", "metadata")
_VERSION_FIELDS = ("version", "from_version", "src_version", "read_version")
_TEXT_FIELDS = ("location", "manifest_path", "filter", "predicate", "where")
MAX_LIMIT = 100_000
MAX_TEXT_FIELD = 64 * 1024  # filters, predicates, locations, manifest paths


def check_request(op: str, request: Any, *, delimiter: str = ids.DEFAULT_DELIMITER) -> None:
    """``InvalidInputError`` when ``request`` breaks a rule for operation ``op``."""
    problem = request_problem(op, request, delimiter=delimiter)
    if problem:
        raise InvalidInputError(f"{op}: {problem}")


def request_problem(op: str, request: Any, *, delimiter: str = ids.DEFAULT_DELIMITER) -> str | None:
    """Why ``request`` breaks a rule for ``op`` (``None``: it does not)."""
    if op not in NO_ID_OPS and hasattr(request, "id"):
        what = (
            "namespace"
            if op in NAMESPACE_OPS
            else "transaction"
            if op in TRANSACTION_OPS
            else "table"
        )
        problem = ids.id_problem(
            request.id if request.id is not None else [],
            what=what,
            delimiter=delimiter,
            create=op in NEW_NAME_OPS,
            allow_root=op in ROOT_OK_OPS,
        )
        if problem:
            return problem
    for field, what, create in _NAME_FIELDS.get(op, ()):
        value = _field(request, field)
        if value is None:
            continue
        problem = (
            ids.part_problem(value, what=what, delimiter=delimiter, create=create)
            if what == "table"  # a new table name becomes part of an id
            else ids.label_problem(value, what=what, create=create)
        )
        if problem:
            return problem
    if op == "rename_table" and request.new_namespace_id is not None:
        problem = ids.id_problem(
            request.new_namespace_id, what="namespace", delimiter=delimiter, allow_root=True
        )
        if problem:
            return problem
    for field in _present(type(request), _PROPERTY_FIELDS):
        value = getattr(request, field, None)
        if value is not None:
            problem = properties.properties_problem(value, field)
            if problem:
                return problem
    for field in _present(type(request), _VERSION_FIELDS):
        value = getattr(request, field, None)
        problem = None if value is None else version_ranges.version_problem(value, field)
        if problem:
            return problem
    limit = _field(request, "limit")
    low = MIN_LIMIT.get(op, 0)
    if limit is not None and (not version_ranges.is_int(limit) or not low <= limit <= MAX_LIMIT):
        return f"limit must be between {low} and {MAX_LIMIT:,}, got {limit!r}"
    for field, words in CHOICE_FIELDS.get(op, {}).items():
        value = _field(request, field)
        if value is not None and choice_key(value) not in {choice_key(w) for w in words}:
            return f"{field} must be one of {', '.join(words)}, got {value!r}"
    problem = _text_problem(request)
    if problem:
        return problem
    if op == "batch_delete_table_versions":
        found = version_ranges.range_problems(request.ranges or [], latest=None)
        if found:
            return " ".join(found)
    if op in ("create_table_index", "create_table_scalar_index"):
        found = index_rules.request_problems(request)
        if found:
            return " ".join(found)
        if (
            op == "create_table_scalar_index"
            and index_rules.index_category(request.index_type) == "vector"
        ):
            return f"{request.index_type} is a vector index; use create_table_index"
    if op in ("query_table", "analyze_table_query_plan"):
        found = query_rules.query_problems(request)
        if found:
            return found[0]
    if op == "explain_table_query_plan" and request.query is not None:
        nested = _text_problem(request.query)
        if nested:
            return nested
        found = query_rules.query_problems(request.query)
        if found:
            return found[0]
    if op == "alter_transaction":
        found = alter_actions.action_problems(request.actions or [])
        if found:
            return found[0]
    return None


def choice_key(value: Any) -> str:
    """A spec word compared case insensitively, PascalCase and snake_case alike."""
    return str(value).replace("_", "").lower()


def _text_problem(request: Any) -> str | None:
    for field in _present(type(request), _TEXT_FIELDS):
        value = getattr(request, field, None)
        if isinstance(value, str):
            if len(value) > MAX_TEXT_FIELD:
                return f"{field} is longer than {MAX_TEXT_FIELD:,} characters"
            if any(unicodedata.category(c) == "Cc" and c not in "\t\n" for c in value):
                return f"{field} contains a control character"
    for field in _present(type(request), filter_rules.FILTER_FIELDS):
        value = getattr(request, field, None)
        problem = filter_rules.filter_problem(value) if isinstance(value, str) else None
        if problem:
            return problem if field in ("filter", "predicate") else f"{field}: {problem}"
    for pair in _field(request, "updates") or []:  # UpdateTable: [[column, SQL expression]]
        if isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[1], str):
            problem = filter_rules.filter_problem(pair[1])
            if problem:
                problem = problem.replace("the filter", "the expression").replace(
                    "a filter", "an expression"
                )
                return f"updates: the value of {pair[0]} ({pair[1]}): {problem}"
    return None


_PRESENT: dict[tuple[type, tuple[str, ...]], tuple[str, ...]] = {}


def _present(model: type, names: tuple[str, ...]) -> tuple[str, ...]:
    """Those of ``names`` that a request of type ``model`` can have: all of them unless it is
    a pydantic model, whose field names are known (worked out once per type: a check reads
    only the fields the request has)."""
    found = _PRESENT.get((model, names))
    if found is None:
        fields = getattr(model, "__pydantic_fields__", None)
        found = names if fields is None else tuple(n for n in names if n in fields)
        _PRESENT[(model, names)] = found
    return found


def _field(request: Any, name: str) -> Any:
    """``request.name``, or ``None`` when the request has no such field. On a pydantic model
    a missing attribute goes through its slow ``__getattr__`` (an exception per miss): the
    model's field names are checked first (:func:`_present`)."""
    return getattr(request, name, None) if _present(type(request), (name,)) else None
