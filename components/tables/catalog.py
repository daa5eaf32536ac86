"""Cached reads of the catalog: namespace and table names, listings, the namespace tree and a
table's details.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from lance_namespace.errors import LanceNamespaceError, TableNotFoundError

from backend.rules import ids
from backend.services import namespaces as nsv
from backend.spec.paging import Listing
from components import feedback
from components.cache import CATALOG, NAMESPACES, cached, shared, table_scope

T = TypeVar("T")


@cached(lambda parent: NAMESPACES)
def namespace_names(ns: Any, parent: tuple[str, ...]) -> list[str]:
    return nsv.list_namespace_names(ns, parent)


@cached(lambda path: NAMESPACES)
def namespace_exists(ns: Any, path: tuple[str, ...]) -> bool:
    return nsv.namespace_exists(ns, path)


@cached(lambda namespace: CATALOG)
def table_names(ns: Any, namespace: tuple[str, ...]) -> list[str]:
    return nsv.list_table_names(ns, namespace)


@shared(lambda namespace: CATALOG)
def table_listing(ns: Any, namespace: tuple[str, ...]) -> Listing:
    """The tables of ``namespace``, read page by page as far as asked (shared by the
    sessions of the connection; read anew after a minute or a write to the catalog)."""
    return nsv.table_listing(ns, namespace)


def listed_tables(path: Sequence[str], count: int | None) -> Listing | None:
    """The tables of ``path`` read at least as far as ``count`` (``None``: every one);
    ``None`` when listing failed (the error is shown)."""
    return feedback.run(table_listing(tuple(path)).ensure, count, action="Listing tables")


@cached(lambda table_id: CATALOG)
def table_exists(ns: Any, table_id: tuple[str, ...]) -> bool:
    return nsv.table_exists(ns, table_id)


@cached(lambda: NAMESPACES)
def namespace_tree(ns: Any) -> nsv.NamespaceTree:
    return nsv.namespace_tree(ns, max_nodes=TREE_MAX_NODES)


@cached(lambda table_id, branch="main": table_scope(table_id))
def table_detail(ns: Any, table_id: tuple[str, ...], branch: str = "main") -> nsv.TableDetail:
    """The table's details (of ``branch``: its version, schema and counts)."""
    from backend.branch_view import on_branch

    return nsv.describe_table(on_branch(ns, branch), table_id)


TREE_MAX_NODES = 200  # namespaces the tree on the page shows at most (one button each)


def read_table(
    fn: Callable[..., T], table_id: Sequence[str], branch: str, *, action: str
) -> T | None:
    """``fn(table_id, branch)`` as ``feedback.run`` calls it, except that a table declared
    only (the engine then answers "not found" with its storage path) is said to be so, as
    the other pages say it: an info, no error. ``None`` when nothing could be read."""
    tid = tuple(table_id)

    def declared_only(err: Exception) -> str | None:
        if not isinstance(err, TableNotFoundError):
            return None
        try:
            declared = table_detail(tid, branch).declared_only
        except LanceNamespaceError:
            declared = False
        if not declared:
            return None
        return (
            f"{ids.display_id(tid)} is declared only: it has no data yet (an import or a "
            "first version gives it some)."
        )

    return feedback.run(fn, tid, branch, action=action, info_if=declared_only)
