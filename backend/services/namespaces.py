"""Namespaces and tables shaped for the UI: names (never a describe per table), one table's
detail, and the writes of the "Namespaces & tables" page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from lance_namespace import (
    CountTableRowsRequest,
    CreateNamespaceRequest,
    DeclareTableRequest,
    DeclareTableResponse,
    DeregisterTableRequest,
    DescribeNamespaceRequest,
    DescribeTableRequest,
    LanceNamespace,
    ListNamespacesRequest,
    ListTablesRequest,
    NamespaceExistsRequest,
    TableExistsRequest,
)
from lance_namespace.errors import LanceNamespaceError, NamespaceNotFoundError, TableNotFoundError

from backend import write_preflight
from backend.arrow.types import arrow_type_str
from backend.rules import ids

from ..capabilities import opens_datasets
from ..spec import catalog_views
from ..spec.fields import whole_number
from ..spec.paging import Listing, iter_all, list_all

LIST_BATCH = 1000  # items asked for per list call when fetching a whole listing


def list_namespace_names(ns: LanceNamespace, parent: Sequence[str]) -> list[str]:
    """Names of the direct child namespaces of ``parent`` (all pages), sorted."""
    req = ListNamespacesRequest(id=list(parent), limit=LIST_BATCH)
    return sorted(set(list_all(ns.list_namespaces, req, "namespaces")))


TREE_MAX_NODES = 500  # namespaces a tree holds at most (the walk stops there and says so)


@dataclass(frozen=True)
class NamespaceNode:
    """One namespace of a :class:`NamespaceTree`: its name, full path and child namespaces
    (sorted by name)."""

    name: str
    path: tuple[str, ...]
    children: tuple[NamespaceNode, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": list(self.path),
            "children": [c.as_dict() for c in self.children],
        }


@dataclass(frozen=True)
class NamespaceTree:
    """The namespaces under the root (the root itself: ``name`` ``""``, path ``()``).
    ``capped``: the walk stopped at ``max_nodes`` namespaces; more exist than are shown."""

    root: NamespaceNode
    count: int  # namespaces in the tree, the root not counted
    capped: bool
    max_nodes: int

    def rows(self) -> list[tuple[int, NamespaceNode]]:
        """Every namespace, depth first (parents before children), with its depth (1: a
        child of the root)."""
        out: list[tuple[int, NamespaceNode]] = []

        def walk(node: NamespaceNode, depth: int) -> None:
            for child in node.children:
                out.append((depth, child))
                walk(child, depth + 1)

        walk(self.root, 1)
        return out

    def capped_note(self) -> str | None:
        """What to say when capped (``None`` otherwise)."""
        if not self.capped:
            return None
        return (
            f"Showing the first {self.count} namespaces (level by level): the tree stops at "
            f"{self.max_nodes}. Open a namespace to see the rest below it."
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "root": self.root.as_dict(),
            "count": self.count,
            "capped": self.capped,
            "max_nodes": self.max_nodes,
        }


def namespace_tree(
    ns: LanceNamespace,
    *,
    max_nodes: int = TREE_MAX_NODES,
    page_size: int = LIST_BATCH,
) -> NamespaceTree:
    """Every namespace from the root, by ListNamespaces (``page_size`` per call at most, and
    no more than the room left), level by level, so that a tree capped at ``max_nodes`` shows
    the upper levels whole."""
    max_nodes = max(0, int(max_nodes))
    children: dict[tuple[str, ...], list[str]] = {}
    level: list[tuple[str, ...]] = [()]
    count, capped = 0, False
    while level and not capped:
        following: list[tuple[str, ...]] = []
        for parent in level:
            room = max_nodes - count
            # one name beyond the room left: enough to know the tree is capped
            req = ListNamespacesRequest(id=list(parent), limit=max(1, min(page_size, room + 1)))
            names: list[str] = []
            for name in iter_all(ns.list_namespaces, req, "namespaces"):
                if name in names:
                    continue
                if len(names) == room:
                    capped = True
                    break
                names.append(name)
            names.sort()
            children[parent] = names
            count += len(names)
            following += [(*parent, n) for n in names]
            if capped:
                break
        level = following

    def node(path: tuple[str, ...]) -> NamespaceNode:
        kids = tuple(node((*path, n)) for n in children.get(path, []))
        return NamespaceNode(path[-1] if path else "", path, kids)

    return NamespaceTree(node(()), count, capped, max_nodes)


def list_table_names(ns: LanceNamespace, namespace: Sequence[str]) -> list[str]:
    """Names of the tables (declared ones included) directly in ``namespace``, sorted."""
    req = ListTablesRequest(id=list(namespace), limit=LIST_BATCH, include_declared=True)
    return sorted(set(list_all(ns.list_tables, req, "tables")))


def table_listing(
    ns: LanceNamespace, namespace: Sequence[str], *, batch: int = LIST_BATCH
) -> Listing:
    """The tables (declared ones included) directly in ``namespace``, read page by page only
    as far as asked (``batch`` names a request at least), in the server's order (pylance's:
    by name)."""
    request = ListTablesRequest(id=list(namespace), include_declared=True)
    return Listing(ns.list_tables, request, "tables", batch=batch)


def table_exists(ns: LanceNamespace, table_id: Sequence[str]) -> bool:
    """Whether table ``table_id`` exists (TableExists; a missing namespace: ``False``)."""
    try:
        ns.table_exists(TableExistsRequest(id=list(table_id)))
    except (TableNotFoundError, NamespaceNotFoundError):
        return False
    return True


def namespace_exists(ns: LanceNamespace, path: Sequence[str]) -> bool:
    """Whether namespace ``path`` exists (the root always does)."""
    if not path:
        return True
    try:
        ns.namespace_exists(NamespaceExistsRequest(id=list(path)))
    except NamespaceNotFoundError:
        return False
    return True


def describe_namespace(ns: LanceNamespace, path: Sequence[str]) -> dict[str, str]:
    """Properties of a namespace (``{}`` for the root or when it has none)."""
    if not path:
        return {}
    resp = ns.describe_namespace(DescribeNamespaceRequest(id=list(path)))
    return dict(resp.properties or {})


def create_namespace_request(
    parent: Sequence[str], name: str, properties: Mapping[str, str] | None = None
) -> CreateNamespaceRequest:
    """The request for child namespace ``name`` of ``parent``; a bad name is
    ``InvalidInputError`` before any call (``backend.rules.ids``)."""
    table_id = ids.check_id([*parent, name], what="namespace", create=True)
    return CreateNamespaceRequest(id=table_id, properties=dict(properties or {}) or None)


def declare_table_request(
    namespace: Sequence[str],
    name: str,
    *,
    location: str | None = None,
    properties: Mapping[str, str] | None = None,
    vend_credentials: bool = False,
) -> DeclareTableRequest:
    """The request declaring table ``name`` in ``namespace`` (no data yet)."""
    table_id = ids.check_id([*namespace, name], what="table", create=True)
    return DeclareTableRequest(
        id=table_id,
        location=(location or "").strip() or None,
        properties=dict(properties or {}) or None,
        vend_credentials=True if vend_credentials else None,
    )


@dataclass(frozen=True)
class Declared:
    """DeclareTable's answer, and the properties sent that the table does not have when it
    is described afterwards (absent, or with another value): a server that drops them."""

    response: DeclareTableResponse
    dropped: dict[str, str] = field(default_factory=dict)


def properties_not_kept(
    sent: Mapping[str, str] | None, described: Mapping[str, str] | None
) -> dict[str, str]:
    """The ``sent`` properties that ``described`` lacks or holds with another value."""
    have = dict(described or {})
    return {k: v for k, v in (sent or {}).items() if have.get(k) != v}


def declare_and_check(ns: LanceNamespace, request: DeclareTableRequest) -> Declared:
    """DeclareTable, then DescribeTable: which of the properties sent the server kept. Over
    REST the preflight's checks run first (the write alone is sent)."""
    write_preflight.refuse_before_sending(ns, request)
    response = ns.declare_table(request)
    dropped: dict[str, str] = {}
    if request.properties:
        try:
            desc = ns.describe_table(DescribeTableRequest(id=list(request.id or [])))
        except LanceNamespaceError:
            return Declared(response)  # declared; whether its properties were kept is unknown
        dropped = properties_not_kept(request.properties, desc.properties)
    return Declared(response, dropped)


def dropped_properties_warning(table: str, dropped: Mapping[str, str]) -> str:
    """What to say when the server did not keep properties sent with a declare."""
    keys = ", ".join(sorted(dropped))
    return (
        f"The server did not keep {len(dropped)} of the properties sent with {table} "
        f"({keys}): they were sent, but DescribeTable does not return them (or returns "
        "other values). Properties cannot be edited afterwards (the spec has no operation "
        "for it)."
    )


def total_fragments(metadata: Mapping[str, Any] | None) -> int | None:
    """``total_fragments`` of a table's metadata (some REST servers report it there rather
    than in ``stats``), when it is a whole number of 0 or more; ``None`` otherwise."""
    return whole_number((metadata or {}).get("total_fragments"))


def deregister_table_request(table_id: Sequence[str]) -> DeregisterTableRequest:
    return DeregisterTableRequest(id=ids.check_id(table_id))


def schema_frame(json_schema: Any) -> pd.DataFrame:
    """Columns of a ``JsonArrowSchema`` as rows: column, type, nullable."""
    rows = []
    if json_schema is not None:
        if hasattr(json_schema, "model_dump"):
            json_schema = json_schema.model_dump(exclude_none=True)
        for f in json_schema.get("fields") or []:
            rows.append(
                {
                    "column": f.get("name"),
                    "type": arrow_type_str(f.get("type")),
                    "nullable": bool(f.get("nullable", True)),
                }
            )
    return pd.DataFrame(rows, columns=["column", "type", "nullable"])


@dataclass
class TableDetail:
    """What the console shows for one table."""

    id: list[str]
    location: str | None
    declared_only: bool
    version: int | None
    properties: dict[str, str]
    storage_options: dict[str, str]
    metadata: dict[str, str]
    schema: pd.DataFrame
    row_count: int | None
    managed_versioning: bool | None
    num_fragments: int | None = None
    num_deleted_rows: int | None = None
    problems: list[str] = field(default_factory=list)  # parts that could not be read

    @property
    def name(self) -> str:
        return self.id[-1]

    @property
    def namespace(self) -> list[str]:
        return self.id[:-1]

    @property
    def status(self) -> str:
        return "declared only" if self.declared_only else "materialised"


def describe_table(
    ns: LanceNamespace, table_id: Sequence[str], *, count_rows: bool = True
) -> TableDetail:
    """Describe one table (schema, version, properties, location) and count its rows.

    A failure to count rows or fragments is recorded in ``problems`` rather than raised; a
    failure to describe raises ``LanceNamespaceError``.
    """
    table_id = list(table_id)
    resp = ns.describe_table(DescribeTableRequest(id=table_id, load_detailed_metadata=True))
    declared = catalog_views.is_declared_only(resp)
    problems: list[str] = []
    rows: int | None = None
    if count_rows and not declared:
        try:
            rows = ns.count_table_rows(CountTableRowsRequest(id=table_id)).count
        except LanceNamespaceError as err:
            problems.append(f"row count unavailable: {err}")
    stats = resp.stats
    fragments = getattr(stats, "num_fragments", None)
    deleted = getattr(stats, "num_deleted_rows", None)
    if fragments is None and not declared:
        fragments = total_fragments(resp.metadata)
    if fragments is None and not declared and opens_datasets(ns):
        # The local backend returns no stats: read them from the dataset itself.
        try:
            dataset = ns.open_dataset(table_id, resp.version)  # type: ignore[attr-defined]
            fragments = len(dataset.get_fragments())
        except LanceNamespaceError as err:
            problems.append(f"fragment count unavailable: {err}")
    return TableDetail(
        id=table_id,
        location=resp.location or resp.table_uri,
        declared_only=declared,
        version=resp.version,
        properties=dict(resp.properties or {}),
        storage_options=dict(resp.storage_options or {}),
        metadata=dict(resp.metadata or {}),
        schema=schema_frame(resp.var_schema),
        row_count=rows,
        managed_versioning=resp.managed_versioning,
        num_fragments=fragments,
        num_deleted_rows=deleted,
        problems=problems,
    )
