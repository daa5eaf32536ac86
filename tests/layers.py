"""The layer table of the code base and an import walker that checks it.

Each module of ``backend/``, ``components/`` and ``app/`` gets a layer number from
``LAYERS``: the entry with the longest dotted prefix of the module's name (an entry
``"backend.services"`` covers ``backend.services`` and ``backend.services.search``; the
entry ``"backend"`` covers only the package ``backend/__init__.py``, since every backend
module has a longer entry). A module may import only from its own layer or below, and
no set of modules may import each other in a loop. docs/ARCHITECTURE.md draws the same
table.

``imports_of`` reads every ``import`` statement of a module with ``ast``: at module level
and inside functions, classes and ``if TYPE_CHECKING:`` blocks alike, with relative
imports resolved. ``from package import name`` counts as an import of
``package.name`` when that is a module, else of ``package``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AREAS = ("backend", "components", "app")

# Dotted prefix -> layer, bottom (0) to top (8).
LAYERS: dict[str, int] = {
    # L0 leaves: no console imports at all.
    "backend.errors": 0,
    "backend.text": 0,
    "backend.backoff": 0,
    "backend.progress": 0,
    "backend.stats": 0,
    "backend.redaction": 0,
    "backend.html_tables": 0,  # results as HTML tables (``_repr_html_``), secrets masked
    # L1: the namespace spec (operations, spec-level reads, paging), Arrow and the rules;
    # no I/O. The demo's embedding function is a pure numpy function that search calls.
    "backend.spec": 1,
    "backend.arrow": 1,
    "backend.rules": 1,
    "backend.demo.embedding": 1,
    # L2: who may call what, configuration, locations, the audit log, capabilities.
    "backend.access": 2,
    "backend.config": 2,
    "backend.locations": 2,
    "backend.audit": 2,
    "backend.branch_view": 2,
    "backend.capabilities": 2,
    # L3: the two namespace implementations and the write gate around them.
    "backend.local": 3,
    "backend.rest": 3,
    "backend.gate": 3,
    "backend.write_preflight": 3,  # backend.preflight and backend.commit_batch, on either backend
    # L4: services the pages call.
    "backend.services": 4,
    # L5: the demo builders, ``connect`` and notebook rendering on top of it all.
    "backend": 5,
    "backend.demo": 5,
    "backend.notebook": 5,
    # L6: the command line; it parses options and starts things.
    "backend.launcher": 6,
    # L7: the Streamlit components.
    "components": 7,
    # L8: the pages and the router.
    "app": 8,
}

# Modules nothing in backend/ may import (they sit on top of it for users).
TOP_ONLY = {"backend.notebook"}


def layer_of(module: str) -> int | None:
    """The layer of ``module``: its longest prefix in ``LAYERS``, or None when none matches."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in LAYERS:
            return LAYERS[prefix]
    return None


def module_files(area: str) -> dict[str, Path]:
    """Every module of ``area`` (a top-level package) by dotted name."""
    found: dict[str, Path] = {}
    for path in sorted((ROOT / area).rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _is_package(module: str, known: dict[str, Path]) -> bool:
    path = known.get(module)
    return path is not None and path.name == "__init__.py"


def imports_of(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The console modules (names in ``known``) that ``module`` imports anywhere in its file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if _is_package(module, known) else module.rpartition(".")[0]
    found: set[str] = set()

    def add(name: str) -> None:
        # The nearest known module at or above ``name`` (``import backend.local.batch.x``
        # of a known module, or ``from backend.rules import ids`` of the package).
        parts = name.split(".")
        for end in range(len(parts), 0, -1):
            candidate = ".".join(parts[:end])
            if candidate in known:
                if candidate != module:
                    found.add(candidate)
                return

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                if node.level > 1:
                    base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts)
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                add(submodule if submodule in known else source)
    return found


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


@dataclass(frozen=True)
class Upward:
    importer: str
    importer_layer: int
    imported: str
    imported_layer: int

    def __str__(self) -> str:
        return (
            f"{self.importer} (L{self.importer_layer}) imports "
            f"{self.imported} (L{self.imported_layer})"
        )


def upward_imports(graph: dict[str, set[str]], area: str) -> list[Upward]:
    """Imports by modules of ``area`` of a module in a higher layer (or of a top-only module)."""
    found = []
    for importer in sorted(graph):
        if importer.split(".")[0] != area:
            continue
        low = layer_of(importer)
        for imported in sorted(graph[importer]):
            high = layer_of(imported)
            if low is None or high is None:
                continue
            top_only = imported in TOP_ONLY and importer.startswith("backend")
            if high > low or top_only:
                found.append(Upward(importer, low, imported, high))
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterable[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)
