"""The namespace tree of "Namespaces & tables" (``namespaces.namespace_tree``) on both
backends (``ns`` fixture: a real local directory and a real REST server): nested
namespaces walked from the root with ListNamespaces, every page followed, capped."""

from __future__ import annotations

import pytest
from lance_namespace import CreateNamespaceRequest, ListNamespacesRequest

from backend.services import namespaces as nsv


@pytest.fixture
def nested(ns):
    """a, a/b, a/b/c, a/d, z (created out of order)."""
    for path in (["z"], ["a"], ["a", "d"], ["a", "b"], ["a", "b", "c"]):
        ns.create_namespace(CreateNamespaceRequest(id=path))
    return ns


def paths(tree: nsv.NamespaceTree) -> list[tuple[int, tuple[str, ...]]]:
    return [(depth, node.path) for depth, node in tree.rows()]


def test_tree_from_the_root(nested) -> None:
    tree = nsv.namespace_tree(nested)
    assert paths(tree) == [
        (1, ("a",)),
        (2, ("a", "b")),
        (3, ("a", "b", "c")),
        (2, ("a", "d")),
        (1, ("z",)),
    ]
    assert (tree.count, tree.capped, tree.capped_note()) == (5, False, None)
    as_dict = tree.as_dict()
    assert as_dict["root"]["path"] == [] and [c["name"] for c in as_dict["root"]["children"]] == [
        "a",
        "z",
    ]
    b = as_dict["root"]["children"][0]["children"][0]
    assert b == {
        "name": "b",
        "path": ["a", "b"],
        "children": [{"name": "c", "path": ["a", "b", "c"], "children": []}],
    }


def test_tree_follows_every_page(nested) -> None:
    calls: list[ListNamespacesRequest] = []

    def counting(request: ListNamespacesRequest):
        calls.append(request)
        return nested.list_namespaces(request)

    class Counting:
        list_namespaces = staticmethod(counting)

    tree = nsv.namespace_tree(Counting(), page_size=1)  # type: ignore[arg-type]
    assert [p for _, p in paths(tree)] == [("a",), ("a", "b"), ("a", "b", "c"), ("a", "d"), ("z",)]
    assert tree.count == 5
    assert all(r.limit == 1 for r in calls)
    # One name per page: the root's and a's second pages were asked for with a token.
    assert {tuple(r.id or []) for r in calls if r.page_token} >= {(), ("a",)}


def test_tree_capped_says_so(nested) -> None:
    tree = nsv.namespace_tree(nested, max_nodes=3)
    # Level by level: the root's children whole, then the first of a's.
    assert paths(tree) == [(1, ("a",)), (2, ("a", "b")), (1, ("z",))]
    assert tree.capped and tree.count == 3
    note = tree.capped_note()
    assert note is not None and "3" in note and "stops" in note
    exact = nsv.namespace_tree(nested, max_nodes=5)
    assert not exact.capped and exact.count == 5


def test_tree_of_an_empty_root(ns) -> None:
    tree = nsv.namespace_tree(ns)
    assert tree.rows() == [] and tree.count == 0 and not tree.capped
