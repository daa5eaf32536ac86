"""A table's and a namespace's life after creation, as functions a notebook can call, on both
backends: cleanup of old versions by policy, drop vs deregister, register, rename, schema
metadata, and dropping a namespace (RESTRICT or CASCADE). Restoring a version is
``backend.services.restore``, tags ``backend.services.tags``, deleting version ranges
``backend.services.versions``.

Every write is one spec operation (but removing schema-metadata keys: the local backend's
own, since the spec's operation only adds and changes keys); the rules it needs (ids, version
ranges) come from the rule modules. What a backend cannot do is said before anything is sent
(``backend.capabilities``), or, when it cannot be known in advance (CASCADE over REST), the
server's refusal is reported as such and nothing is changed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd
from lance_namespace import (
    BatchDeleteTableVersionsRequest,
    DeregisterTableRequest,
    DeregisterTableResponse,
    DescribeTableRequest,
    DropNamespaceRequest,
    DropNamespaceResponse,
    DropTableRequest,
    DropTableResponse,
    LanceNamespace,
    ListNamespacesRequest,
    ListTablesRequest,
    RegisterTableRequest,
    RegisterTableResponse,
    RenameTableRequest,
    RenameTableResponse,
    UpdateTableSchemaMetadataRequest,
)
from lance_namespace.errors import (
    ErrorCode,
    LanceNamespaceError,
    NamespaceNotEmptyError,
)

from backend import html_tables, write_preflight
from backend.rules import ids, version_ranges
from backend.services.tags import list_tags, tagged_versions
from backend.spec import catalog_views
from backend.text import plural, some_of

from .. import capabilities
from ..capabilities import BackendCapabilities
from ..errors import invalid, make
from ..locations import to_local_path
from ..spec.paging import iter_all, list_all
from . import staged_changes
from .versions import list_versions


@dataclass(frozen=True)
class CleanupPlan(html_tables.FieldsTable):
    """What a cleanup policy deletes (a dry run): never the latest, never a tagged version."""

    table_id: list[str]
    delete: list[int]
    keep: list[int]
    latest: int | None
    protected: dict[int, list[str]] = field(default_factory=dict)  # tagged versions kept
    policy: str = ""

    @property
    def spans(self) -> list[version_ranges.Span]:
        return version_ranges.spans_of(self.delete)

    def request(self) -> BatchDeleteTableVersionsRequest:
        if not self.delete:
            raise invalid("the cleanup policy deletes no version")
        return BatchDeleteTableVersionsRequest(
            id=list(self.table_id), ranges=version_ranges.to_spec(self.spans)
        )


def check_cleanup_policy(keep_last: Any, older_than: Any) -> None:
    """``InvalidInputError`` when ``keep_last`` / ``older_than`` are not a cleanup policy
    (neither given, ``keep_last`` not a whole number of 1 or more, ``older_than`` not a
    ``timedelta`` of zero or more)."""
    if keep_last is None and older_than is None:
        raise invalid("a cleanup policy needs keep_last, older_than or both")
    if keep_last is not None and (
        not isinstance(keep_last, int) or isinstance(keep_last, bool) or keep_last < 1
    ):
        raise invalid(f"keep_last must be 1 or more, got {keep_last!r}")
    if older_than is not None and (
        not isinstance(older_than, timedelta) or older_than < timedelta(0)
    ):
        raise invalid(f"older_than must be a duration of zero or more, got {older_than!r}")


def cleanup_plan(
    ns: LanceNamespace,
    table_id: Sequence[str],
    *,
    keep_last: int | None = None,
    older_than: timedelta | None = None,
    now: datetime | None = None,
) -> CleanupPlan:
    """The versions a policy deletes. ``keep_last``: keep the newest N versions;
    ``older_than``: only versions created before ``now - older_than``. Both given: a version
    goes when it is outside the newest N *and* older. The latest version and every tagged
    version always stay."""
    check_cleanup_policy(keep_last, older_than)
    tid = ids.check_id(table_id)
    versions = list_versions(ns, tid)  # newest first
    if versions.empty:
        return CleanupPlan(tid, [], [], None, policy=describe_policy(keep_last, older_than))
    latest = int(versions["version"].max())
    tagged = tagged_versions(list_tags(ns, tid))
    cutoff = None
    if older_than is not None:
        cutoff = (now or datetime.now(UTC)) - older_than
        if cutoff.tzinfo is None:
            cutoff = cutoff.replace(tzinfo=UTC)
    delete: list[int] = []
    keep: list[int] = []
    for rank, row in enumerate(versions.itertuples()):
        v = int(row.version)
        goes = v != latest and v not in tagged
        if keep_last is not None and rank < keep_last:
            goes = False
        if cutoff is not None and not (pd.Timestamp(row.timestamp) < pd.Timestamp(cutoff)):
            goes = False
        (delete if goes else keep).append(v)
    protected = {v: t for v, t in tagged.items() if v in set(keep)}
    return CleanupPlan(
        tid,
        sorted(delete),
        sorted(keep),
        latest,
        protected,
        policy=describe_policy(keep_last, older_than),
    )


def describe_policy(keep_last: int | None, older_than: timedelta | None) -> str:
    parts = []
    if keep_last is not None:
        parts.append(f"keep the newest {keep_last}")
    if older_than is not None:
        parts.append(f"delete only versions older than {older_than}")
    return "; ".join(parts) + "; never the latest or a tagged version"


@dataclass(frozen=True)
class CleanupDone(html_tables.FieldsTable):
    """What :func:`run_cleanup` did: the versions deleted, those of the plan the table kept
    (lance keeps a version a branch starts from), and what it freed on disk (``None``: not
    known, over REST, where BatchDeleteTableVersions deletes the version records and their
    data files are the server's to remove)."""

    table_id: list[str]
    deleted: list[int]
    kept: list[int] = field(default_factory=list)
    bytes_freed: int | None = None
    files_removed: int | None = None
    failed_deletes: int = 0
    staged_files: int = 0  # files of staged changes never published, removed too
    transaction_id: str | None = None


def run_cleanup(ns: LanceNamespace, plan: CleanupPlan) -> CleanupDone:
    """Delete what a :func:`cleanup_plan` listed, after checking that nothing it keeps changed
    status meanwhile (a new tag on a listed version: refused, nothing deleted). Where the
    namespace runs lance's cleanup (the local backend: ``cleanup_old_versions`` of exactly
    those versions) the versions go with every file no remaining version reads, and what it
    freed is said; over REST, BatchDeleteTableVersions. Then the table's staged changes that
    were never published (``staged_changes.cleanup_staged``: what they wrote, never a file a
    version refers to; local backend)."""
    fresh = tagged_versions(list_tags(ns, plan.table_id))
    newly_tagged = sorted(set(plan.delete) & set(fresh))
    if newly_tagged:
        raise make(
            ErrorCode.CONCURRENT_MODIFICATION,
            f"versions {', '.join(map(str, newly_tagged))} were tagged since the dry run: run it "
            "again; nothing deleted",
        )
    request = plan.request()  # refuses a plan that deletes nothing
    cleanup = getattr(ns, "cleanup_old_versions", None)
    if callable(cleanup):
        out = cleanup({"id": list(plan.table_id), "versions": list(plan.delete)})
        deleted = sorted(set(plan.delete) & set(out.get("removed_versions") or []))
        done = CleanupDone(
            list(plan.table_id),
            deleted,
            kept=sorted(set(plan.delete) - set(deleted)),
            bytes_freed=int(out.get("bytes_removed") or 0),
            files_removed=int(out.get("files_removed") or 0),
            failed_deletes=int(out.get("failed_deletes") or 0),
        )
    else:
        answer = ns.batch_delete_table_versions(request)
        done = CleanupDone(
            list(plan.table_id),
            list(plan.delete),
            transaction_id=getattr(answer, "transaction_id", None),
        )
    swept = staged_changes.cleanup_staged(ns, plan.table_id)
    if swept.files:
        done = replace(done, staged_files=len(swept.files))
    return done


@dataclass(frozen=True)
class DropPreview(html_tables.FieldsTable):
    """What dropping (deleting data) or deregistering (keeping it) a table concerns."""

    table_id: list[str]
    location: str | None
    declared_only: bool
    latest: int | None
    files: int | None = None  # local file roots: the data on disk
    bytes: int | None = None
    local_path: str | None = None


def drop_preview(ns: LanceNamespace, table_id: Sequence[str]) -> DropPreview:
    tid = ids.check_id(table_id)
    desc = ns.describe_table(DescribeTableRequest(id=tid, load_detailed_metadata=True))
    declared = catalog_views.is_declared_only(desc)
    latest = None if declared else catalog_views.latest_version(ns, tid)
    root = getattr(ns, "local_path", None)
    files = size = None
    path = None
    if root is not None and desc.location:
        local = to_local_path(desc.location, root)
        if local is not None and local.is_dir():
            path = str(local)
            files, size = 0, 0
            for base, _dirs, names in os.walk(local):
                for name in names:
                    files += 1
                    with contextlib.suppress(OSError):
                        size += os.stat(os.path.join(base, name)).st_size
    return DropPreview(tid, desc.location, declared, latest, files, size, path)


def drop_table(ns: LanceNamespace, table_id: Sequence[str]) -> DropTableResponse:
    """Remove the table from the catalog and delete its data."""
    return ns.drop_table(DropTableRequest(id=ids.check_id(table_id)))


def deregister_table(ns: LanceNamespace, table_id: Sequence[str]) -> DeregisterTableResponse:
    """Remove the table from the catalog; its data stays where it is."""
    return ns.deregister_table(DeregisterTableRequest(id=ids.check_id(table_id)))


def register_table(
    ns: LanceNamespace, table_id: Sequence[str], location: str
) -> RegisterTableResponse:
    """Put existing Lance data at ``location`` (e.g. a deregistered table's, as
    DeregisterTable answered it) back in the catalog as ``table_id``. The name follows the
    creation rule; the location the location rule of the backend (``backend.rules.location_rules``:
    under the root, not the root, not another table's directory, holding a dataset)."""
    tid = ids.check_id(table_id, create=True)
    where = str(location or "").strip()
    if not where:
        raise invalid("Enter the location of the table's data.")
    request = RegisterTableRequest(id=tid, location=where)
    write_preflight.refuse_before_sending(ns, request)  # over REST: the write alone is sent
    return ns.register_table(request)


def register_again_hint(table: str, location: str | None) -> str:
    """How to reach a deregistered table again."""
    if not location:
        return f"To reach {table} again, register it with the location of its data."
    return (
        f"To reach {table} again, register it (Register a table, in its namespace) with the "
        f"location {location}."
    )


@dataclass(frozen=True)
class Deregistered:
    """DeregisterTable's answer, and whether the namespace still lists the table when read
    again afterwards (a server that rediscovers table directories, like pylance's directory
    server for tables at the root, lists it again: its catalog entry is gone but the name is
    not)."""

    response: DeregisterTableResponse
    still_listed: bool


def still_listed(ns: LanceNamespace, table_id: Sequence[str]) -> bool:
    """Whether the table's namespace lists ``table_id`` (ListTables read fresh, every page)."""
    tid = ids.check_id(table_id)
    return tid[-1] in list_all(ns.list_tables, ListTablesRequest(id=tid[:-1]), "tables")


def deregister_and_check(ns: LanceNamespace, table_id: Sequence[str]) -> Deregistered:
    """:func:`deregister_table`, then the listing read again (:func:`still_listed`)."""
    tid = ids.check_id(table_id)
    response = deregister_table(ns, tid)
    return Deregistered(response, still_listed(ns, tid))


def still_listed_warning(table: str) -> str:
    """What to say when the server still lists a table it deregistered."""
    return (
        f"The server still lists {table} after deregistering it: it finds tables by their "
        "directories (pylance's directory server does so for tables at the root), so the name "
        "comes back in every listing although its catalog entry is gone. Move or delete its "
        "directory to make it go away."
    )


RENAME_UNSUPPORTED = (
    "This server does not implement RenameTable (it answered that it is not supported): "
    "nothing was renamed."
)


def rename_table(
    ns: LanceNamespace,
    table_id: Sequence[str],
    new_name: str,
    new_namespace: Sequence[str] | None = None,
    *,
    caps: BackendCapabilities | None = None,
) -> RenameTableResponse:
    """Rename a table, optionally into another namespace (``new_namespace``). On the local
    backend it is atomic (one catalog commit). Refused up front on a REST server known not to
    implement it."""
    tid = ids.check_id(table_id)
    ids.check_part(new_name, what="table", create=True)
    if caps is not None and caps.rename is False:
        raise make(ErrorCode.UNSUPPORTED, RENAME_UNSUPPORTED)
    target = list(new_namespace) if new_namespace is not None else None
    if target is not None:
        ids.check_id(target, what="namespace", allow_root=True)
    return ns.rename_table(
        RenameTableRequest(id=tid, new_table_name=new_name, new_namespace_id=target)
    )


def schema_metadata(ns: LanceNamespace, table_id: Sequence[str]) -> dict[str, str]:
    """A table's schema metadata (the part of its properties that can be edited)."""
    desc = ns.describe_table(
        DescribeTableRequest(id=ids.check_id(table_id), load_detailed_metadata=True)
    )
    schema = getattr(desc, "var_schema", None)
    return dict(getattr(schema, "metadata", None) or {})


def update_schema_metadata(
    ns: LanceNamespace, table_id: Sequence[str], metadata: dict[str, str]
) -> dict[str, str]:
    """Replace the keys given in ``metadata`` (UpdateTableSchemaMetadata); returns what the
    table holds afterwards."""
    tid = ids.check_id(table_id)
    ns.update_table_schema_metadata(UpdateTableSchemaMetadataRequest(id=tid, metadata=metadata))
    return schema_metadata(ns, tid)


REMOVE_METADATA_UNSUPPORTED = (
    "Removing schema-metadata keys needs the local backend: over REST the only operation is "
    "UpdateTableSchemaMetadata, which adds and changes keys but cannot remove one. Give the "
    "key an empty value instead."
)


def remove_metadata_problem(caps: BackendCapabilities) -> str | None:
    """Why keys cannot be removed on this backend (``None``: they can), said up front."""
    return None if caps.kind == "local" else REMOVE_METADATA_UNSUPPORTED


def remove_schema_metadata_keys(
    ns: LanceNamespace, table_id: Sequence[str], keys: Sequence[str]
) -> dict[str, str]:
    """Remove ``keys`` from a table's schema metadata as a new version (local backend:
    ``LocalNamespace.remove_table_schema_metadata_keys``, through the write gate when ``ns``
    is gated); returns what the table holds afterwards. Over REST
    ``UnsupportedOperationError``, nothing sent; a key the table does not have
    ``InvalidInputError``, nothing changed."""
    tid = ids.check_id(table_id)
    problem = remove_metadata_problem(capabilities(ns))
    if problem:
        raise make(ErrorCode.UNSUPPORTED, problem)
    wanted = sorted({str(k) for k in keys if str(k)})
    if not wanted:
        raise invalid("No key to remove: pick one or more schema-metadata keys.")
    ns.remove_table_schema_metadata_keys({"id": tid, "keys": wanted})  # type: ignore[attr-defined]
    return schema_metadata(ns, tid)


PROPERTIES_READ_ONLY = (
    "Catalog properties (set by CreateNamespace / DeclareTable) cannot be edited: the Lance "
    "Namespace spec has no operation that changes them. A table's schema metadata can be."
)


CHILDREN_MAX = 10_000  # namespaces and tables a listing of what a namespace holds reads at most


@dataclass(frozen=True)
class Children(html_tables.FieldsTable):
    """Everything under a namespace, at every level, up to :data:`CHILDREN_MAX` items
    (``capped``: there are more, not listed)."""

    namespaces: list[list[str]]
    tables: list[list[str]]
    capped: bool = False

    @property
    def empty(self) -> bool:
        return not self.namespaces and not self.tables

    def count(self, what: str) -> str:
        """``"3 tables"``, ``"at least 9,990 tables"`` for a capped listing."""
        items = self.tables if what == "table" else self.namespaces
        return ("at least " if self.capped else "") + plural(len(items), what)

    def describe(self, delimiter: str = ids.DEFAULT_DELIMITER, limit: int = 20) -> str:
        names = [f"namespace {ids.format_id(n, delimiter)}" for n in self.namespaces]
        names += [f"table {ids.format_id(t, delimiter)}" for t in self.tables]
        if not self.capped:
            return some_of(names, limit)
        more = len(names) - limit
        return ", ".join(names[:limit]) + (
            f" and at least {more:,} more" if more > 0 else " and more"
        )


def namespace_children(
    ns: LanceNamespace, namespace_id: Sequence[str], *, limit: int = CHILDREN_MAX
) -> Children:
    """Child namespaces and tables (declared ones included) of ``namespace_id``, level by
    level, up to ``limit`` of them: the listing stops there, ``capped`` (a namespace holding
    more, or a server listing a namespace under itself without end, is not read whole). Spec
    listings: both backends."""
    root = ids.check_id(namespace_id, what="namespace")
    namespaces: list[list[str]] = []
    tables: list[list[str]] = []
    todo = [root]
    while todo:
        current = todo.pop(0)
        listings = (
            (
                tables,
                ns.list_tables,
                ListTablesRequest(id=current, include_declared=True),
                "tables",
            ),
            (namespaces, ns.list_namespaces, ListNamespacesRequest(id=current), "namespaces"),
        )
        for found, method, request, name in listings:
            seen: set[str] = set()
            for child in iter_all(method, request, name):
                if child in seen:
                    continue
                seen.add(child)
                if len(tables) + len(namespaces) >= limit:
                    return Children(namespaces, tables, capped=True)
                found.append([*current, child])
                if found is namespaces:
                    todo.append([*current, child])
    return Children(namespaces, tables)


CASCADE_UNSUPPORTED = (
    "This server refused DropNamespace with CASCADE for a namespace that has children (it "
    "does not implement CASCADE): nothing was dropped. Drop its tables and child namespaces "
    "first, then the namespace."
)


def drop_namespace(
    ns: LanceNamespace, namespace_id: Sequence[str], *, cascade: bool = False
) -> DropNamespaceResponse:
    """RESTRICT (default): refused while the namespace has children, naming them. CASCADE:
    the namespace and everything under it (local backend: all or none, crash-safe)."""
    nid = ids.check_id(namespace_id, what="namespace")
    delimiter = getattr(ns, "delimiter", ids.DEFAULT_DELIMITER)
    if not cascade:
        children = namespace_children(ns, nid, limit=20)
        if not children.empty:
            raise NamespaceNotEmptyError(
                f"namespace {ids.format_id(nid, delimiter)} is not empty: "
                f"{children.describe(delimiter)}. Drop them first, or drop with CASCADE."
            )
        return ns.drop_namespace(DropNamespaceRequest(id=nid, behavior="Restrict"))
    try:
        return ns.drop_namespace(DropNamespaceRequest(id=nid, behavior="Cascade"))
    except LanceNamespaceError as err:
        if isinstance(err, NamespaceNotEmptyError):
            raise make(ErrorCode.UNSUPPORTED, CASCADE_UNSUPPORTED) from None
        raise
