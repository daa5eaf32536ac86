"""A namespace seen on one branch of its tables: :func:`on_branch`.

``on_branch(ns, "dev")`` returns a view of ``ns`` (either backend, gated or not) whose
operations act on branch ``dev``: every request of a spec operation that carries ``branch``
(QueryTable, CountTableRows, DescribeTable, ListTableIndices, DescribeTableIndexStats,
CreateTableIndex, DropTableIndex, ExplainTableQueryPlan (its query too),
AnalyzeTableQueryPlan, GetTableStats, InsertIntoTable, MergeInsertIntoTable, ...) and names
none is sent with ``branch="dev"``; the local backend's datasets (``open_dataset``) are the
branch's (``branch_dataset``), and its maintenance (optimize, compaction) runs on the branch.
So every service (``search``, ``tuning``, ``index_overview``, ``exports``, ``imports`` ...)
works on a branch unchanged: it is handed the view instead of the namespace.

What the spec cannot address to a branch is refused rather than applied to main: a write whose
request has no ``branch`` (CreateTable, DropTable, a tag deletion ...) and the console's own
writes that have no branch form raise ``UnsupportedOperationError``, nothing written. Reads
without a ``branch`` field (ListTables, ListTableBranches, ListTableTags ...) are the table's or
the namespace's as a whole and pass unchanged. A request that names its own branch keeps it.

``on_branch(ns, None)`` and ``on_branch(ns, "main")`` return ``ns`` itself. The view sits
outside the write gate (``backend.gate``): the gate sees, checks and records each request with
its branch, and the gate's helpers (``gate.recorded`` ...) see through the view.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from lance_namespace.errors import ErrorCode

from .errors import invalid, make
from .rules import ids
from .spec.operations import CONSOLE_WRITES, OPERATIONS, READ_ONLY_OPS

MAIN = "main"
# Operations whose request model carries ``branch``: sent with the view's branch.
BRANCHED_OPS: frozenset[str] = frozenset(
    op for op, o in OPERATIONS.items() if "branch" in o.request.model_fields
)
# Spec writes that cannot name a branch: refused on a view (they would act on main or on the
# table as a whole).
UNBRANCHED_WRITES: frozenset[str] = frozenset(OPERATIONS) - READ_ONLY_OPS - BRANCHED_OPS
# The console's own writes that take the branch as a keyword (the local backend's).
BRANCH_KEYWORD_WRITES: frozenset[str] = frozenset({"optimize_indexes", "compact_files"})
# The console's own writes a view passes as they are: the write guard (an import holds it
# while it writes to the branch's dataset).
PASSED_WRITES: frozenset[str] = frozenset({"write_guard"})
# Methods that run the operation named by their first argument (the REST client's).
DISPATCHERS: frozenset[str] = frozenset({"call"})


def branch_name(branch: Any) -> str | None:
    """``branch`` checked (a branch label), ``None`` for main (``None``, ``""``, ``"main"``).
    A bad name: ``InvalidInputError``."""
    if branch is None or branch == "" or branch == MAIN:
        return None
    problem = ids.label_problem(branch, what="branch")
    if problem:
        raise invalid(problem)
    return str(branch)


def with_branch(op: str, request: Any, branch: str) -> Any:
    """``request`` of operation ``op`` sent to ``branch`` when it names no branch of its own
    (a request model or a dict; anything else unchanged). An ExplainTableQueryPlan's query is
    sent to the branch too."""
    if request is None or op not in BRANCHED_OPS:
        return request
    if isinstance(request, Mapping):
        out = dict(request)
        if not out.get("branch"):
            out["branch"] = branch
        query = out.get("query")
        if op == "explain_table_query_plan" and query is not None:
            out["query"] = with_branch("query_table", query, branch)
        return out
    if not hasattr(request, "model_copy") or "branch" not in type(request).model_fields:
        return request
    update: dict[str, Any] = {}
    if not getattr(request, "branch", None):
        update["branch"] = branch
    query = getattr(request, "query", None)
    if op == "explain_table_query_plan" and query is not None:
        update["query"] = with_branch("query_table", query, branch)
    return request.model_copy(update=update) if update else request


def refusal(op: str, branch: str) -> Exception:
    """The refusal of an operation a branch view cannot send to its branch."""
    return make(
        ErrorCode.UNSUPPORTED,
        f"{op} cannot act on branch {branch!r}: it has no branch form (it would act on main "
        "or on the whole table); nothing was done. Pick main to use it",
    )


class BranchView:
    """A namespace whose table operations act on one branch (see the module docstring)."""

    __slots__ = ("_branch", "_ns")

    def __init__(self, ns: Any, branch: str) -> None:
        self._ns = ns
        self._branch = branch

    @property
    def namespace(self) -> Any:
        """The namespace seen (the gate, or the backend itself)."""
        return self._ns

    @property
    def branch(self) -> str:
        return self._branch

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._ns, name)
        if not callable(value) or name.startswith("_"):
            return value
        if name in DISPATCHERS:
            return self._dispatcher(value)
        if name == "open_dataset":
            return self._dataset_opener()
        if name == "query_table_arrow":
            return self._operation("query_table", value)
        if name in OPERATIONS:
            if name in UNBRANCHED_WRITES:
                return self._refused(name)
            return self._operation(name, value)
        if name == "index_requests":
            return functools.partial(value, branch=self._branch)
        if name in BRANCH_KEYWORD_WRITES:
            return functools.partial(value, branch=self._branch)
        if name in CONSOLE_WRITES and name not in PASSED_WRITES:
            return self._refused(name)
        return value

    def _operation(self, op: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def run(request: Any = None, *args: Any, **kwargs: Any) -> Any:
            return method(with_branch(op, request, self._branch), *args, **kwargs)

        return run

    def _dispatcher(self, method: Callable[..., Any]) -> Callable[..., Any]:
        def call(op: str, request: Any = None, *args: Any, **kwargs: Any) -> Any:
            if op in UNBRANCHED_WRITES:
                raise refusal(op, self._branch)
            return method(op, with_branch(op, request, self._branch), *args, **kwargs)

        return call

    def _dataset_opener(self) -> Callable[..., Any]:
        opener = self._ns.branch_dataset

        def open_dataset(table_id: Any, version: int | None = None) -> Any:
            return opener(table_id, self._branch, version)

        return open_dataset

    def _refused(self, op: str) -> Callable[..., Any]:
        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise refusal(op, self._branch)

        return refuse

    def __repr__(self) -> str:
        return f"BranchView({self._ns!r}, branch={self._branch!r})"


def on_branch(ns: Any, branch: str | None) -> Any:
    """``ns`` acting on ``branch`` (a :class:`BranchView`); ``ns`` itself for main (``None``,
    ``""`` or ``"main"``). A view of a view acts on the new branch. A bad branch name:
    ``InvalidInputError``."""
    base = unbranched(ns)
    name = branch_name(branch)
    return base if name is None else BranchView(base, name)


def unbranched(ns: Any) -> Any:
    """The namespace behind a branch view (``ns`` itself when it is not one)."""
    while isinstance(ns, BranchView):
        ns = ns.namespace
    return ns


def branch_of(ns: Any) -> str | None:
    """The branch a namespace acts on: a view's, ``None`` (main) otherwise."""
    return ns.branch if isinstance(ns, BranchView) else None
