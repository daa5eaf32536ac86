"""Reads of a namespace that the rules need, from any ``LanceNamespace`` through the spec's
calls: a table's latest version and its tags, and the two views of a namespace that
``backend.rules.batch_rules.check_batch`` judges a batch against (``CatalogView``):

* :class:`NamespaceView` asks per object (NamespaceExists, TableExists, ListTableVersions,
  ListTableTags), each answer cached for one check;
* :class:`ListingView` reads a batch's namespaces in bulk (ListTables with declared tables,
  ListNamespaces, every page): the REST client's preflight.

The rules themselves (``backend.rules``) read nothing. The one write here,
:func:`clear_covered_tags`, is the tag step of every delete of version ranges (both backends
and ``backend.services.versions.delete_versions``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lance_namespace import (
    BatchCommitTablesRequest,
    DeleteTableTagRequest,
    DescribeTableRequest,
    DescribeTableVersionRequest,
    ListNamespacesRequest,
    ListTablesRequest,
    ListTableTagsRequest,
    ListTableVersionsRequest,
    NamespaceExistsRequest,
    TableExistsRequest,
)
from lance_namespace.errors import (
    NamespaceNotFoundError,
    TableNotFoundError,
    TableVersionNotFoundError,
    UnsupportedOperationError,
)

from backend.rules import version_ranges
from backend.rules.batch_rules import operations_of
from backend.spec.paging import list_all


def is_declared_only(described: Any) -> bool:
    """Whether a DescribeTable answer made with ``load_detailed_metadata`` is of a table
    declared only (no data, no version): its ``is_only_declared`` where the server says,
    else no version and no schema. The one reading of that answer."""
    flag = getattr(described, "is_only_declared", None)
    if flag is not None:
        return bool(flag)
    return getattr(described, "version", None) is None and (
        getattr(described, "var_schema", None) is None
    )


def declared_only(ns: Any, table_id: Sequence[str]) -> bool:
    """Whether table ``table_id`` is declared only (one DescribeTable, :func:`is_declared_only`)."""
    return is_declared_only(
        ns.describe_table(DescribeTableRequest(id=list(table_id), load_detailed_metadata=True))
    )


def latest_version(ns: Any, table_id: Sequence[str], branch: str | None = None) -> int | None:
    """A table's latest version, read fresh from any namespace (``None``: it has none, e.g.
    declared only): DescribeTable's version, else the highest ListTableVersions entry. On a
    branch (not main): the highest ListTableVersions entry of the branch (pylance's directory
    namespace, also behind its REST adapter, describes main whatever the branch)."""
    if branch and branch != "main":
        listed = list_all(
            ns.list_table_versions,
            ListTableVersionsRequest(id=list(table_id), branch=branch),
            "versions",
        )
        return max((int(v.version) for v in listed), default=None)
    desc = ns.describe_table(
        DescribeTableRequest(id=list(table_id), branch=branch, load_detailed_metadata=True)
    )
    if desc.version is not None:
        return int(desc.version)
    if getattr(desc, "is_only_declared", False):
        return None
    versions = list_all(
        ns.list_table_versions,
        ListTableVersionsRequest(id=list(table_id), branch=branch),
        "versions",
    )
    return max((int(v.version) for v in versions), default=None)


def version_exists(
    ns: Any, table_id: Sequence[str], version: int, branch: str | None = None
) -> bool:
    """Whether a version of the table's ``branch`` (``None``: main) exists:
    DescribeTableVersion of that one version (a server without it: the listing, every
    page)."""
    try:
        ns.describe_table_version(
            DescribeTableVersionRequest(id=list(table_id), version=int(version), branch=branch)
        )
    except TableVersionNotFoundError:
        return False
    except UnsupportedOperationError:
        versions = list_all(
            ns.list_table_versions,
            ListTableVersionsRequest(id=list(table_id), branch=branch),
            "versions",
        )
        return int(version) in {int(v.version) for v in versions}
    return True


def table_tags(ns: Any, table_id: Sequence[str]) -> dict[int, list[str]]:
    """version -> its tags (sorted), read fresh from any namespace (ListTableTags, every
    page). A server that does not implement tags has none: ``{}``."""
    out: dict[int, list[str]] = {}
    token = None
    for _ in range(1000):
        try:
            resp = ns.list_table_tags(ListTableTagsRequest(id=list(table_id), page_token=token))
        except UnsupportedOperationError:
            return {}
        for name, tag in (resp.tags or {}).items():
            out.setdefault(int(tag.version), []).append(str(name))
        token = resp.page_token
        if not token:
            break
    return {v: sorted(t) for v, t in out.items()}


def clear_covered_tags(
    ns: Any,
    table_id: Sequence[str],
    ranges: Sequence[Any],
    latest: int | None,
    *,
    delete_tags: bool,
) -> dict[int, list[str]]:
    """The tag step before deleting spec ``ranges`` of a table: its tags read once
    (ListTableTags, every page), judged by ``version_ranges.tags_to_delete`` (a covered tagged
    version without ``delete_tags``: ``InvalidInputError`` naming the tags, nothing deleted),
    and with ``delete_tags`` the covered tags deleted (DeleteTableTag each, through ``ns``).
    Returns the deleted tags, ``version -> tags``."""
    tid = list(table_id)
    doomed = version_ranges.tags_to_delete(
        ranges, table_tags(ns, tid), latest, delete_tags=delete_tags
    )
    for tag in sorted({t for names in doomed.values() for t in names}):
        ns.delete_table_tag(DeleteTableTagRequest(id=tid, tag=tag))
    return doomed


class NamespaceView:
    """A :class:`CatalogView` answered by any ``LanceNamespace`` through the spec's calls
    (NamespaceExists, TableExists, ListTableVersions, ListTableTags), each answer cached for
    one check."""

    def __init__(self, ns: Any):
        self.ns = ns
        self._ns: dict[tuple[str, ...], bool] = {}
        self._tables: dict[tuple[str, ...], bool] = {}
        self._versions: dict[tuple[str, ...], set[int]] = {}
        self._tags: dict[tuple[str, ...], dict[int, list[str]]] = {}

    def _exists(self, method: Any, request: Any) -> bool:
        try:
            answer = method(request)
        except (NamespaceNotFoundError, TableNotFoundError):
            return False
        return answer is not False

    def namespace_exists(self, namespace_id: Sequence[str]) -> bool:
        key = tuple(namespace_id)
        if not key:
            return True
        if key not in self._ns:
            self._ns[key] = self._exists(
                self.ns.namespace_exists, NamespaceExistsRequest(id=list(key))
            )
        return self._ns[key]

    def table_exists(self, table_id: Sequence[str]) -> bool:
        key = tuple(table_id)
        if key not in self._tables:
            self._tables[key] = self._exists(self.ns.table_exists, TableExistsRequest(id=list(key)))
        return self._tables[key]

    def versions(self, table_id: Sequence[str]) -> set[int]:
        key = tuple(table_id)
        if key not in self._versions:
            try:
                items = list_all(
                    self.ns.list_table_versions, ListTableVersionsRequest(id=list(key)), "versions"
                )
            except (TableNotFoundError, NamespaceNotFoundError):
                items = []
            self._versions[key] = {int(v.version) for v in items}
        return self._versions[key]

    def tags(self, table_id: Sequence[str]) -> dict[int, list[str]]:
        key = tuple(table_id)
        if key not in self._tags:
            try:
                self._tags[key] = table_tags(self.ns, key)
            except (TableNotFoundError, NamespaceNotFoundError):
                self._tags[key] = {}
        return self._tags[key]


class ListingView:
    """A :class:`CatalogView` for one batch, read in bulk through the spec's list calls of any
    ``LanceNamespace`` (the REST client's preflight):

    * each namespace holding a table of the batch: ListTables with declared tables, every page
      (which tables it holds; "not found": the namespace does not exist), and ListNamespaces,
      every page (its child namespaces: a declared table's id may not be a namespace's); the
      client's ListTables itself asks NamespaceExists when its answer is empty (an empty list
      proves nothing);
    * a table's versions: ListTableVersions, every page, only for an existing table whose
      versions an operation needs (never for a DeregisterTable, nor a table the batch declares);
      its tags (ListTableTags) only for a table whose versions the batch deletes.

    Each answer is read once per view. A batch of N operations on tables of D namespaces costs
    D x (pages of ListTables + pages of ListNamespaces) (+1 for a namespace holding nothing),
    plus one listing per versioned table: not a request per operation.
    """

    def __init__(self, ns: Any, request: BatchCommitTablesRequest | None = None):
        self.ns = ns
        ops = operations_of(request)[0] if request is not None else []
        self._table_parents = {tuple(op.table_id[:-1]) for op in ops}
        self._tables: dict[tuple[str, ...], set[str] | None] = {}
        self._children: dict[tuple[str, ...], set[str] | None] = {}
        self._versions = NamespaceView(ns)

    def _listing(self, method: Any, request: Any, field_name: str) -> set[str] | None:
        try:
            return {str(name) for name in list_all(method, request, field_name)}
        except NamespaceNotFoundError:
            return None

    def tables_in(self, namespace_id: Sequence[str]) -> set[str] | None:
        """The names of the tables (declared ones included) in a namespace; ``None``: the
        namespace does not exist."""
        key = tuple(namespace_id)
        if key not in self._tables:
            self._tables[key] = self._listing(
                self.ns.list_tables,
                ListTablesRequest(id=list(key), include_declared=True),
                "tables",
            )
        return self._tables[key]

    def children_of(self, namespace_id: Sequence[str]) -> set[str] | None:
        """The names of a namespace's child namespaces; ``None``: it does not exist."""
        key = tuple(namespace_id)
        if key not in self._children:
            self._children[key] = self._listing(
                self.ns.list_namespaces, ListNamespacesRequest(id=list(key)), "namespaces"
            )
        return self._children[key]

    def namespace_exists(self, namespace_id: Sequence[str]) -> bool:
        key = tuple(namespace_id)
        if not key:
            return True
        if key in self._table_parents:
            # Listings of a namespace that holds something prove it exists, and "not found"
            # proves it does not; two empty listings prove nothing (a server may list a
            # namespace that does not exist as empty: pylance's RestAdapter does), so then
            # NamespaceExists is asked.
            # ListTables answers "not found" for a namespace that does not exist (both console
            # backends check an empty answer themselves: pylance's RestAdapter lists a missing
            # namespace as empty), so its listing settles it.
            return self.tables_in(key) is not None
        if key[:-1] in self._table_parents:
            children = self.children_of(key[:-1])
            return children is not None and key[-1] in children
        return self._versions.namespace_exists(key)

    def table_exists(self, table_id: Sequence[str]) -> bool:
        key = tuple(table_id)
        if not key:
            return False
        tables = self.tables_in(key[:-1])
        return tables is not None and key[-1] in tables

    def versions(self, table_id: Sequence[str]) -> set[int]:
        return self._versions.versions(table_id)

    def tags(self, table_id: Sequence[str]) -> dict[int, list[str]]:
        """The tagged versions of a table whose versions the batch deletes (ListTableTags,
        asked only for such a table)."""
        return self._versions.tags(table_id)
