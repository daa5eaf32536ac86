"""Cached reads of the catalog: namespace and table names, listings, the namespace tree and a
table's details.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from backend.services import namespaces as nsv
from backend.spec.paging import Listing
from components import feedback
from components.cache import CATALOG, NAMESPACES, cached, shared, table_scope


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
