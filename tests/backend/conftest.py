"""Fixtures several backend test modules share."""

from __future__ import annotations

import pytest
from lance_namespace import LanceNamespace

import backend
from tests.backend.search_support import namespace_a
from tests.support import four_versions


@pytest.fixture
def table(ns: LanceNamespace) -> list[str]:
    """``ns.t`` with four versions on the ``ns`` fixture's backend (``tests.support.four_versions``):
    the table of the lifecycle, restore and tags tests."""
    return four_versions(ns)


@pytest.fixture
def ns_a(ns: LanceNamespace) -> LanceNamespace:
    """The ``ns`` fixture with the namespace ``a`` (``search_support.namespace_a``)."""
    return namespace_a(ns)


@pytest.fixture
def local_ns(local_root) -> LanceNamespace:
    """A local namespace with the namespace ``a`` (``search_support.namespace_a``)."""
    return namespace_a(backend.connect(str(local_root)))
