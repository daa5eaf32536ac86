"""Layers import only downward and no modules import each other in a loop.

The layer table and the import walker live in tests/layers.py (docs/ARCHITECTURE.md draws
the same table). One case per top-level area, so a failure names the area it is in.
"""

from __future__ import annotations

import pytest

from tests import layers


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = {}
    for area in layers.AREAS:
        modules.update(layers.module_files(area))
    return layers.import_graph(modules)


@pytest.mark.parametrize("area", layers.AREAS)
def test_every_module_has_a_layer(area: str) -> None:
    unplaced = [name for name in layers.module_files(area) if layers.layer_of(name) is None]
    assert unplaced == [], f"modules with no entry in tests/layers.LAYERS: {unplaced}"


@pytest.mark.parametrize("area", layers.AREAS)
def test_no_upward_import(area: str, graph: dict[str, set[str]]) -> None:
    upward = layers.upward_imports(graph, area)
    assert upward == [], "upward imports:\n" + "\n".join(str(u) for u in upward)


@pytest.mark.parametrize("area", layers.AREAS)
def test_no_import_cycle(area: str, graph: dict[str, set[str]]) -> None:
    loops = [c for c in layers.cycles(graph) if c[0].split(".")[0] == area]
    assert loops == [], "import cycles:\n" + "\n".join(" <-> ".join(c) for c in loops)


def test_walker_sees_function_level_and_relative_imports(tmp_path) -> None:
    """The walker counts imports inside functions and resolves relative ones, so a loop
    hidden in a function body is still found."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from . import b\n")
    (pkg / "b.py").write_text("from pkg.a import f\n")
    known = {"pkg": pkg / "__init__.py", "pkg.a": pkg / "a.py", "pkg.b": pkg / "b.py"}
    graph = layers.import_graph(known)
    assert graph["pkg.a"] == {"pkg.b"}
    assert graph["pkg.b"] == {"pkg.a"}
    assert layers.cycles(graph) == [["pkg.a", "pkg.b"]]


def test_layer_is_the_longest_prefix() -> None:
    assert layers.layer_of("backend") == 5
    assert layers.layer_of("backend.services.search") == 4
    assert layers.layer_of("backend.demo.embedding") == 1
    assert layers.layer_of("backend.demo.data") == 5
    assert layers.layer_of("elsewhere.module") is None
