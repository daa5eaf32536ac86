"""The local backend: pylance's ``DirectoryNamespace`` plus what the console adds to it.

``LocalNamespace(target, **options)`` composes a ``lance.namespace.DirectoryNamespace`` and
delegates every ``LanceNamespace`` operation to it, taking and returning the
``lance_namespace`` request/response models (also for the version operations, which pylance
handles as dicts). Every request first passes ``backend.rules.request_rules``; every failure leaves
as a ``lance_namespace.errors`` class (``backend.errors.namespace_boundary``).

Added on top of pylance 14:

* checks pylance does not make: the parent namespace exists before a create, declare or
  register; a registered location is a Lance dataset inside the root that is not the root,
  the catalog or another table; a dropped table's location is a table directory under the
  root; a single CreateTableVersion's manifest lies in the table's staging areas; a version
  delete never covers the latest version (unless ``allow_latest=True``) and refuses empty or
  inverted ranges; Arrow bodies are checked before pylance reads them;
* index builds through the dataset API (``backend.local.indexes``): vector parameters are
  honoured, progress is reported, defaults are chosen and reported;
* ``describe_table_index_stats`` fills ``distance_type`` (pylance answers null);
* AlterTransaction applies its actions (``backend.local.transactions``);
* ``list_table_versions`` pages (pylance honours ``limit`` but never returns a token) and
  reports manifest paths as absolute paths;
* atomic BatchCommitTables (``backend.local.batch``), and every single write serialised with
  it through the namespace lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import lance
import lance.schema
import lance_namespace as ln
import pyarrow as pa
from lance.namespace import DirectoryNamespace
from lance_namespace import (
    AlterTransactionRequest,
    AlterTransactionResponse,
    BatchCommitTablesRequest,
    BatchCommitTablesResponse,
    BatchDeleteTableVersionsRequest,
    BatchDeleteTableVersionsResponse,
    CreateTableIndexRequest,
    CreateTableIndexResponse,
    CreateTableRequest,
    CreateTableResponse,
    CreateTableVersionRequest,
    CreateTableVersionResponse,
    DeclareTableRequest,
    DeclareTableResponse,
    DescribeTableIndexStatsRequest,
    DescribeTableIndexStatsResponse,
    DescribeTableRequest,
    DescribeTableResponse,
    DescribeTableVersionRequest,
    DescribeTableVersionResponse,
    DescribeTransactionRequest,
    DescribeTransactionResponse,
    DropTableRequest,
    DropTableResponse,
    InsertIntoTableRequest,
    InsertIntoTableResponse,
    LanceNamespace,
    ListNamespacesRequest,
    ListTableIndicesRequest,
    ListTablesRequest,
    ListTablesResponse,
    ListTableVersionsRequest,
    ListTableVersionsResponse,
    MergeInsertIntoTableRequest,
    MergeInsertIntoTableResponse,
    NamespaceExistsRequest,
    RegisterTableRequest,
    RegisterTableResponse,
)
from lance_namespace.errors import ErrorCode, LanceNamespaceError
from pydantic import BaseModel

from backend.arrow.ipc import ipc_file_to_table, to_ipc_file, to_ipc_stream
from backend.rules import connect_options, ids, query_rules, request_rules, version_ranges
from backend.rules import index_rules as rules
from backend.rules.column_errors import explains_columns
from backend.rules.filter_errors import explains_filters, request_table
from backend.rules.index_rules import FTS_PARAMS, VECTOR_BUILD_PARAMS, normalize_distance
from backend.rules.location_rules import declare_location_rule, declared_location
from backend.spec import catalog_views
from backend.text import is_digits

from ..capabilities import BackendCapabilities
from ..errors import guarded, invalid, make, namespace_boundary, to_namespace_error
from ..locations import (
    ObjectTables,
    TableDirs,
    location_problem,
    object_manifest_key,
    object_table_key,
    owned_table_problem,
    path_uri,
    relative_location,
    to_local_path,
    with_advice,
)
from ..spec.paging import list_all
from . import (
    batch,
    branch_indexes,
    branch_writes,
    compaction,
    indexes,
    query_plans,
    transactions,
    txn_store,
    version_files,
)
from .batch import catalog_ops, isolation, objects
from .batch.catalog import open_catalog, read_catalog, read_staged_manifest
from .batch.validate import foreign_dir_problem, preflight_batch
from .open_tables import OpenTable, OpenTables
from .target import (
    check_endpoint_reachable,
    check_object_store,
    memory_session,
    normalise_target,
    open_failure,
)

ModelT = TypeVar("ModelT", bound=BaseModel)

STAMP_SETTLE_NS = 2_000_000_000  # a _versions directory this fresh gives no version stamp
REST_ONLY_OPTIONS: tuple[str, ...] = ("api_key", "auth_token", "headers", "timeout", "max_retries")
DIRECTORY_OPTIONS: tuple[str, ...] = ("manifest_enabled", "dir_listing_enabled")
HONOURED_INDEX_PARAMS: frozenset[str] = frozenset(
    (*VECTOR_BUILD_PARAMS, *FTS_PARAMS, "distance_type")
)


def _coerce(model: type[ModelT], request: Any) -> ModelT:
    if type(request) is model or isinstance(request, model):  # the first: no ABC check
        return request
    if isinstance(request, Mapping):
        out = model.from_dict(dict(request))  # type: ignore[attr-defined]
        if out is None:
            raise invalid(f"invalid {model.__name__}: empty")
        return out
    if isinstance(request, BaseModel):
        return _coerce(model, request.model_dump(by_alias=True))
    raise invalid(f"expected a {model.__name__} or a dict, got {type(request).__name__}")


# Writes that change a table's catalog row alone, never its files.
_CATALOG_ONLY = frozenset({"deregister_table"})


def _delegate(op: str, model: type[BaseModel], *, write: bool = False) -> Callable[..., Any]:
    """A LanceNamespace method that checks the request and hands it to pylance."""

    def method(self: LocalNamespace, request: Any) -> Any:
        req = self._checked(op, model, request)
        if not write:
            return getattr(self._inner, op)(req)
        with self._guard(getattr(req, "id", None), check_files=op not in _CATALOG_ONLY):
            if _on_branch(op, req):
                return self._branch_write(op, req, None)
            return getattr(self._inner, op)(req)

    method.__name__ = op
    method.__qualname__ = f"LocalNamespace.{op}"
    method.__doc__ = f"pylance's ``{op}`` after ``backend.rules.request_rules``" + (
        ", under the namespace lock." if write else "."
    )
    return method


def _type_name(data_type: Any) -> Any:
    """The type name of the spec's JSON type (``{"type": "int32"}`` -> ``"int32"``); any other
    value unchanged."""
    if isinstance(data_type, dict) and set(data_type) <= {"type"} and data_type.get("type"):
        return str(data_type["type"])
    return data_type


def _on_branch(op: str, req: Any) -> bool:
    """True when write ``op`` names a branch other than main that pylance would not write to
    (``branch_writes``: it would write to main)."""
    return branch_writes.target_branch(req) is not None and op not in branch_writes.PYLANCE_HONOURS


def _table_schema(self: LocalNamespace, request: Any) -> Any:
    """The schema of the table a request addresses (at its version): the columns a filter
    or column error names."""
    table_id, version = request_table(request)
    return self._open_tables.dataset(table_id, version).schema


def _filtered(op: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A filter error of ``op`` in the user's terms (``backend.rules.filter_errors``)."""
    return explains_filters(op, _table_schema)


def data_shape(ds: lance.LanceDataset) -> tuple[int, int]:
    """Fragments and bytes of data files of ``ds``'s version (a compaction's before and
    after; indexes and manifests are not data)."""
    fragments = ds.get_fragments()
    size = 0
    for fragment in fragments:
        for data_file in fragment.metadata.files:
            size += int(getattr(data_file, "file_size_bytes", 0) or 0)
    return len(fragments), size


def _may_have_metric(index_type: str | None) -> bool:
    """Whether an index of ``index_type`` (as pylance's stats name it) may have a distance
    metric: a vector index, or a type not known here. A scalar or full-text index has none,
    and its stats need no listing of the table's indexes to say so."""
    try:
        return rules.index_category(index_type or "") == "vector"
    except ValueError:
        return True


@namespace_boundary
class LocalNamespace(LanceNamespace):
    """A Lance directory namespace (pylance) with the console's checks and fixes."""

    def __init__(
        self,
        target: str | os.PathLike[str] | None = None,
        *,
        root: str | os.PathLike[str] | None = None,
        storage_options: Mapping[str, Any] | None = None,
        delimiter: str = ids.DEFAULT_DELIMITER,
        **options: Any,
    ):
        """``target`` (or ``root``, pylance's property name: ``lance_namespace.connect(
        "backend.local.LocalNamespace", {"root": ..., "storage.<key>": ...})``) is the
        directory or URI; options follow ``connect_options.fold_properties``."""
        if target is not None and root is not None:
            raise invalid("connect: give the namespace root once (target or root), not both")
        target = connect_options.check_target(target if target is not None else root)
        options = connect_options.fold_properties({"storage_options": storage_options, **options})
        storage_options = options.pop("storage_options")
        rest_only = sorted(k for k in options if k in REST_ONLY_OPTIONS)
        if rest_only:
            raise invalid(
                f"option(s) {', '.join(rest_only)} only apply to REST namespaces "
                "(http:// or https:// targets); the local backend reads the directory directly"
            )
        if storage_options is not None and not isinstance(storage_options, Mapping):
            raise invalid("storage_options must be a mapping of option names to values")
        so = dict(storage_options or {})
        dir_props: dict[str, str] = {}
        unknown = []
        for key, value in options.items():
            if key in DIRECTORY_OPTIONS:
                dir_props[key] = str(value).lower() if isinstance(value, bool) else str(value)
            else:
                unknown.append(key)
        if unknown:
            raise invalid(
                f"unknown option(s) for the local backend: {', '.join(sorted(unknown))}; "
                "accepted: storage_options, storage.<key>, delimiter, "
                + ", ".join(DIRECTORY_OPTIONS)
            )
        if delimiter != ids.DEFAULT_DELIMITER:
            raise invalid(
                f"the local backend's delimiter is {ids.DEFAULT_DELIMITER!r} (pylance's catalog "
                f"joins id parts with it); {delimiter!r} is only available over REST"
            )
        self.storage_options = connect_options.check_storage_options(so)
        self.root, self._dir_root, self.local_path = normalise_target(target)
        self.delimiter = delimiter
        self._session = memory_session(self.root) if self.root.startswith("memory:") else None
        props = {f"storage.{k}": v for k, v in self.storage_options.items()}
        props.update(dir_props)
        check_object_store(self.root, self.storage_options)  # what to set, before a request
        check_endpoint_reachable(self.root, self.storage_options)  # at once, not after retries
        try:
            self._inner = DirectoryNamespace(session=self._session, root=self._dir_root, **props)
        except Exception as exc:
            if "NoSuchBucket" in str(exc):
                raise invalid(
                    f"connect: the bucket of {self.root} does not exist (the object store "
                    "answered NoSuchBucket)"
                ) from None
            raise (
                open_failure(exc, self.root, self.storage_options)
                or to_namespace_error(exc, "connect")
            ) from None
        self.txn_store = txn_store.open_store(self.root, self.storage_options)
        catalog = (
            str(self.local_path / "__manifest")
            if self.local_path is not None
            else f"{self.root.rstrip('/')}/__manifest"
        )
        self._open_tables = OpenTables(self._lance_dataset, self.table_location, catalog)
        # the catalog's table directories (``_table_dirs``): (state, locations, directories)
        self._dirs_cache: tuple[tuple[int | None, int | None], dict[str, str], TableDirs] | None = (
            None
        )
        self._batch_ctx: Any = None  # the batch protocol's view of this root, made on first use
        with contextlib.suppress(LanceNamespaceError, OSError):
            batch.recover(self)  # browsing must still work; writes recover again first

    # -- identity -------------------------------------------------------------------------
    def namespace_id(self) -> str:
        return f"LocalNamespace {{ root: {self.root!r} }}"

    def __repr__(self) -> str:
        return f"LocalNamespace({self.root!r})"

    def capabilities(self, *, probe: bool = False) -> BackendCapabilities:
        batch_ok = cascade_ok = True
        try:
            batch.context(self, catalog_only=True)  # file, memory and object-store roots
        except LanceNamespaceError:
            batch_ok = False
        try:
            batch.context(self)  # roots with a local lock: CASCADE's drop intent
        except LanceNamespaceError:
            cascade_ok = False
        return BackendCapabilities(
            kind="local",
            honoured_index_params=HONOURED_INDEX_PARAMS,
            progress_events=True,
            batch_commit=batch_ok,
            rename=True,  # one catalog commit: file, memory and object-store roots
            drop_cascade=cascade_ok,
            wire_log=False,
            notes=(
                "index builds run through the Lance dataset API (pylance's namespace ignores "
                "vector build parameters)",
                "max_iterations is applied as lance's max_iters (IVF and PQ training)",
                "transaction statuses are reported upper-case (SUCCEEDED), like pylance",
            ),
        )

    def format_id(self, parts: Sequence[str] | None) -> str:
        return ids.format_id(parts or [], self.delimiter)

    # -- helpers used by the services and the batch module ---------------------------------
    def table_location(self, table_id: Sequence[str] | None) -> str:
        desc = self.describe_table(DescribeTableRequest(id=list(table_id or [])))
        if not desc.location:
            raise make(
                ErrorCode.INVALID_TABLE_STATE, f"table {self.format_id(table_id)} has no location"
            )
        return desc.location

    def open_dataset(
        self, table_id: Sequence[str] | None, version: int | str | None = None
    ) -> lance.LanceDataset:
        """The table as a ``lance.LanceDataset`` (latest, or ``version``: number or tag), opened
        with the namespace's storage options and session."""
        table_id = ids.check_id(table_id)
        location = self.table_location(table_id)
        try:
            return self._lance_dataset(location, version)
        except (ValueError, OSError) as e:
            if "not found" not in str(e).lower():
                raise make(
                    ErrorCode.INTERNAL, f"cannot open {self.format_id(table_id)}: {e}"
                ) from e
            if version is not None and self._dataset_readable(location):
                raise make(
                    ErrorCode.TABLE_VERSION_NOT_FOUND,
                    f"table {self.format_id(table_id)} has no version {version!r}",
                ) from e
            raise make(
                ErrorCode.INVALID_TABLE_STATE,
                f"table {self.format_id(table_id)} has no data (declared only, or its versions "
                f"were deleted): {location}",
            ) from e

    def _lance_dataset(self, location: str, version: int | str | None = None) -> lance.LanceDataset:
        return lance.dataset(
            location,
            version=version,
            storage_options=self.storage_options or None,
            session=self._session,
        )

    def _dataset_readable(self, location: str) -> bool:
        try:
            self._lance_dataset(location)
        except (ValueError, OSError):
            return False
        return True

    # -- reader isolation: reads at "latest" see the last committed state --------------------
    def committed_version(self, table_id: Sequence[str] | None) -> int | None:
        """The table's last committed version, as reads through this namespace at "latest"
        see it: its latest version, unless a batch in flight (per its journal, before its
        commit point: ``batch.isolation``) created that version, then the version before.
        ``None`` when the table has no readable version; ``TableNotFoundError`` for a table a
        batch in flight declares. The latest version is read first, the journals then (the
        order that keeps a version linked meanwhile from being missed)."""
        tid = ids.check_id(table_id)
        try:
            latest: int | None = self._open_tables.table(tid).version
        except (ValueError, OSError):
            latest = None  # no data (declared only) or unreadable: the read reports it
        view = self._in_flight()
        key = ids.object_id(tid)
        if view.is_declared(key):
            raise make(
                ErrorCode.TABLE_NOT_FOUND,
                f"table {self.format_id(tid)} not found (a batch in flight declares it; it "
                "exists once the batch commits)",
            )
        return view.committed(key, latest)

    def _in_flight(self) -> isolation.InFlight:
        ctx = self._batch_ctx
        if ctx is None:
            try:
                ctx = batch.context(self, catalog_only=True)
            except LanceNamespaceError:
                return isolation.NOTHING
            self._batch_ctx = ctx
        return isolation.in_flight(ctx)

    def _at_committed(self, req: ModelT, call: Callable[[ModelT], Any]) -> Any:
        """``call(req)`` at the table's last committed version when ``req`` reads "latest"
        (no ``version``, no branch): pinned to :meth:`committed_version`. A version that
        vanished before the read (the batch that made it rolled back) is resolved again."""
        if getattr(req, "version", None) is not None or branch_writes.target_branch(req):
            return call(req)
        table_id = getattr(req, "id", None) or []
        for attempt in range(3):
            with self._open_tables.one_read():  # the catalog checked once for both steps
                version = self.committed_version(table_id)
                if version is None:
                    return call(req)  # nothing committed to pin: the read reports what is there
                try:
                    return call(req.model_copy(update={"version": version}))
                except Exception:
                    if attempt == 2 or self.committed_version(table_id) == version:
                        raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _committed_versions(self, table_id: Sequence[str], listed: list[Any]) -> list[Any]:
        """A table's versions as committed: without the versions batches in flight create,
        with the versions they delete (hidden until their commit point, shown from where they
        wait)."""
        view = self._in_flight()
        if view.empty:
            return listed
        key = ids.object_id(list(table_id))
        created = view.created.get(key, frozenset())
        out = [v for v in listed if v.version not in created]
        have = {v.version for v in out}
        for hidden in view.hidden.get(key, ()):
            if hidden.version not in have:
                shown = self._hidden_version(hidden)
                if shown is not None:
                    out.append(shown)
        return out

    def _hidden_version(self, hidden: isolation.Hidden) -> Any:
        """A version hidden by a batch in flight, described from where it waits (file roots:
        the same inode, so size and time stamp are the version's)."""
        from lance_namespace_urllib3_client.models import TableVersion

        if self.local_path is None:
            return TableVersion(version=hidden.version, manifest_path=hidden.src)
        try:
            st = os.stat(hidden.trash)
        except OSError:
            return None  # put back or deleted meanwhile: the listing already says which
        return TableVersion(
            version=hidden.version,
            manifest_path=hidden.src,
            manifest_size=st.st_size,
            timestamp_millis=st.st_mtime_ns // 1_000_000,
        )

    # -- plumbing ---------------------------------------------------------------------------
    def _checked(self, op: str, model: type[ModelT], request: Any) -> ModelT:
        req = _coerce(model, request)
        request_rules.check_request(op, req, delimiter=self.delimiter)
        return req

    def write_guard(
        self, *table_ids: Sequence[str] | None
    ) -> contextlib.AbstractContextManager[None]:
        """The guard of every single write, for writers outside this class (imports): the
        namespace lock, recovery first, and a conflict check when the lock was busy."""
        return self._guard(*table_ids)

    @property
    def session(self) -> Any:
        """The lance session datasets of this namespace are opened with (``None``: default)."""
        return self._session

    @contextlib.contextmanager
    def _guard(self, *table_ids: Sequence[str] | None, check_files: bool = True) -> Iterator[None]:
        """Serialise a single write with batch commits (``batch.guard_single_op``). A write
        of a table's files is refused first where the table's directory leads outside the root
        (:meth:`_writable`); ``check_files=False`` where the write touches only the catalog
        row (deregister, rename) or the caller applies the stricter rule of what it deletes
        (``_owned_location``)."""
        with batch.guard_single_op(self, [list(t) for t in table_ids if t]):
            if check_files:
                for table_id in table_ids:
                    self._writable(table_id)
            yield

    def _writable(self, table_id: Sequence[str] | None) -> None:
        """Refuse a write to the files of ``table_id`` on a file root when its directory, as
        the catalog says (kept while the catalog does not move), does not pass the location
        rule's root checks as it is now: a registration another process made of a symbolic
        link leading out of the root, or of the root itself, would have lance write there.
        Not a table (yet: a create, a declare; or a namespace): nothing to check."""
        if self.local_path is None or not table_id:
            return
        try:
            table_dir = self._versions_dir(DescribeTableVersionRequest(id=list(table_id)))
        except (LanceNamespaceError, ValueError, OSError):
            return
        if table_dir is None:
            return
        problem = location_problem(self.local_path, table_dir)
        if problem:
            raise invalid(
                f"refusing to write to {self.format_id(table_id)}: "
                + with_advice(problem, "deregister the table instead")
            )

    @contextlib.contextmanager
    def _long_write(
        self, table_id: Sequence[str] | None, branch: str | None = None
    ) -> Iterator[lance.LanceDataset]:
        """A long write (an index build, optimize, compaction) on the table's latest dataset
        (of ``branch``; ``None``: main). The namespace guard is held only while the dataset is
        opened (a crashed batch is recovered first), never during the work: lance commits the
        result itself, rebasing it over what other writers committed meanwhile or refusing it
        as a conflict, as it does for any outside writer. So a build never stops the
        namespace's other writes."""
        with self._guard(table_id):
            ds = self.branch_dataset(table_id, branch)
        yield ds

    def _branch_write(self, op: str, req: Any, data: Any) -> Any:
        """Write ``op`` run on the request's branch itself (``branch_writes``; the caller
        holds the guard): pylance would apply it to main."""
        branch = branch_writes.target_branch(req)
        assert branch is not None
        if op not in branch_writes.WRITERS:
            raise branch_writes.refuse(op, branch)
        main = self.open_dataset(req.id)
        return branch_writes.write(op, main, branch, req, data, table=self.format_id(req.id))

    def branch_dataset(
        self, table_id: Sequence[str] | None, branch: str | None, version: int | None = None
    ) -> lance.LanceDataset:
        """The table on ``branch`` (``None`` or ``"main"``: main) at its latest version or
        ``version`` of that branch."""
        if not branch or branch == branch_writes.MAIN:
            return self.open_dataset(table_id, version)
        main = self.open_dataset(table_id)
        return branch_writes.open_branch(main, branch, self.format_id(table_id), version)

    def _check_branch(self, req: Any) -> None:
        """A read pylance runs on the request's branch itself: the branch exists (else
        ``TableBranchNotFoundError`` naming the table's branches, before pylance's own
        answer, which names a path)."""
        branch = branch_writes.target_branch(req)
        if branch is not None:
            self.branch_dataset(req.id, branch)

    def _requests_key(self, table_id: Sequence[str] | None, branch: str | None) -> str:
        """The key of a table's (or one branch's) recorded index builds."""
        table = self.format_id(table_id)
        on_main = not branch or branch == branch_writes.MAIN
        return table if on_main else f"{table}@branch:{branch}"

    def _fix_location(self, location: str | None) -> str | None:
        # pylance answers plain paths for some root-level tables and file:// URIs for others.
        if location and self.local_path is not None and location.startswith("/"):
            return path_uri(location)
        return location

    def _fix_manifest_path(self, path: str) -> str:
        # pylance reports object-store paths ("tmp/x/_versions/..."); on a file root they are
        # absolute paths.
        if path and self.local_path is not None and not path.startswith("/"):
            return "/" + path
        return path

    def _require_parent_namespace(self, object_id: Sequence[str] | None) -> None:
        missing = ids.missing_parent(
            object_id or [], self._inner_namespace_exists, delimiter=self.delimiter
        )
        if missing:
            raise make(ErrorCode.NAMESPACE_NOT_FOUND, f"{missing}: create it first")

    def _table_dirs(self, exclude: Sequence[str] | None = None) -> TableDirs:
        """Directories of the catalog's tables (``exclude``: one table id to leave out; a
        table sharing its directory stays). Read once per state of the catalog and of the
        root's listing (its version, the root directory's modification time: a table's
        directory swapped for a link changes it): a catalog of 100,000 tables takes a second
        or two to read, and a maintenance run asks this of every table it cleans."""
        assert self.local_path is not None
        ctx = batch.context(self)
        catalog_ds = open_catalog(ctx)
        try:
            root_stamp: int | None = os.stat(self.local_path).st_mtime_ns
        except OSError:
            root_stamp = None
        state = (catalog_ds.version if catalog_ds is not None else None, root_stamp)
        cached = self._dirs_cache
        if cached is None or cached[0] != state or state[0] is None:
            catalog = read_catalog(ctx, catalog_ds)
            locations = catalog.table_locations()
            dirs = TableDirs(catalog.table_dirs(self.local_path), root=self.local_path)
            cached = self._dirs_cache = (state, locations, dirs)
        _, locations, dirs = cached
        own = locations.get(ids.object_id(exclude)) if exclude else None
        own_path = to_local_path(own, self.local_path) if own else None
        return dirs.without_dir(own_path) if own_path is not None else dirs

    def _object_tables(self, exclude: Sequence[str] | None = None) -> ObjectTables:
        """Prefixes of the catalog's tables on an object-store or memory root (``exclude``:
        one table id to leave out)."""
        ctx = batch.context(self, catalog_only=True)
        skip = ids.object_id(exclude) if exclude else None
        rows = read_catalog(ctx).table_locations()
        return ObjectTables(self.root, (loc for key, loc in rows.items() if key != skip))

    def _root_uri(self) -> str:
        """The root as pylance reports the locations of the tables under it."""
        return path_uri(self.local_path) if self.local_path is not None else self.root

    def _location_problem(
        self, location: str, *, exclude: Sequence[str] | None = None, must_exist: bool = False
    ) -> tuple[str | None, str | None]:
        """``(key, problem)`` of a table location under this root, against the catalog's other
        tables (``backend.rules.location_rules.location_rule`` for the root's kind). ``key``: the
        table's prefix relative to the root on object-store and memory roots."""
        if self.local_path is not None:
            problem = location_problem(
                self.local_path,
                location,
                other_tables=self._table_dirs(exclude=exclude),
                must_exist=must_exist,
            )
            return None, problem
        key, problem = object_table_key(
            self.root, location, other_tables=self._object_tables(exclude=exclude)
        )
        if problem is None and must_exist and objects.is_object_root(self.root):
            assert key is not None
            store = objects.store_for(batch.context(self, catalog_only=True))
            if not any(k.startswith(f"{key}/_versions/") for k in store.list(f"{key}/_versions/")):
                return (
                    None,
                    f"the table location {location!r} holds no Lance dataset (no _versions)",
                )
        return key, problem

    def _foreign_folder(self, table_id: Sequence[str] | None) -> str | None:
        """Why a new root-level table may not take its directory ``<name>.lance``: it holds
        someone else's files or objects (``batch.validate.foreign_dir_problem``, as a batch's
        declare checks it); a nested table gets a fresh directory."""
        own = declared_location(table_id or [])
        if own is None:
            return None
        return foreign_dir_problem(batch.context(self, catalog_only=True), own)

    def _owned_location(
        self, op: str, table_id: Sequence[str] | None, action: str
    ) -> tuple[str | None, str]:
        """``(key, location)`` of the table whose files ``op`` deletes or rewrites (``key``:
        its prefix on object-store and memory roots, ``None`` on file roots), once its catalog
        location passes
        ``backend.locations.owned_table_problem``: the location rule against the catalog's
        other tables (not the root, the catalog, another table's directory, nothing outside
        the root), and on file roots no symbolic link inside the table leading outside it.
        Another process may have registered any location; ``InvalidInputError`` otherwise,
        before anything is touched."""
        location = str(
            self.describe_table(DescribeTableRequest(id=list(table_id or []))).location or ""
        )
        key: str | None = None
        if self.local_path is not None:
            others = self._table_dirs(exclude=table_id)
            problem = owned_table_problem(self.local_path, location, other_tables=others)
        else:
            key, problem = self._location_problem(location, exclude=table_id)
        if problem:
            raise invalid(
                f"{op}: refusing to {action} of {self.format_id(table_id)}: "
                + with_advice(problem, "deregister the table instead")
            )
        return key, location

    # -- namespaces ------------------------------------------------------------------------
    list_namespaces = _delegate("list_namespaces", ListNamespacesRequest)
    describe_namespace = _delegate("describe_namespace", ln.DescribeNamespaceRequest)
    namespace_exists = _delegate("namespace_exists", NamespaceExistsRequest)

    def drop_namespace(self, request: ln.DropNamespaceRequest) -> ln.DropNamespaceResponse:
        """RESTRICT (the default) is pylance's; CASCADE drops the namespace with every child
        namespace and table in one catalog commit, then deletes the tables' data
        (``batch.catalog_ops``: all or none, crash-safe)."""
        req = self._checked("drop_namespace", ln.DropNamespaceRequest, request)
        # request_rules.CHOICE_FIELDS admitted only the spec's words
        behavior = request_rules.choice_key(req.behavior or "Restrict")
        mode = request_rules.choice_key(req.mode or "Fail")
        if not req.id:
            raise invalid("drop_namespace: the root namespace cannot be dropped")
        with self._guard(req.id):
            if mode == "skip" and not self._inner_namespace_exists(req.id):
                return ln.DropNamespaceResponse()
            if behavior == "restrict":
                return self._inner.drop_namespace(req.model_copy(update={"behavior": None}))
            try:
                ctx = batch.context(self)
            except LanceNamespaceError:
                raise make(
                    ErrorCode.UNSUPPORTED,
                    "drop_namespace: CASCADE is all-or-none on file:// and memory:// roots only "
                    "(the tables' data is deleted after the catalog commit, through a drop "
                    "intent that recovery needs a local file for); on this root drop the "
                    "tables and child namespaces first, then the namespace",
                ) from None
            catalog_ops.drop_cascade(ctx, req.id)
            self._open_tables.clear()
            return ln.DropNamespaceResponse()

    def _inner_namespace_exists(self, namespace_id: Sequence[str]) -> bool:
        try:
            self._inner.namespace_exists(NamespaceExistsRequest(id=list(namespace_id)))
        except LanceNamespaceError as err:
            if getattr(err, "code", None) == ErrorCode.NAMESPACE_NOT_FOUND:
                return False
            raise
        return True

    def create_namespace(self, request: ln.CreateNamespaceRequest) -> ln.CreateNamespaceResponse:
        req = self._checked("create_namespace", ln.CreateNamespaceRequest, request)
        self._require_parent_namespace(req.id)
        with self._guard(req.id):
            return self._inner.create_namespace(req)

    def _query_branch(self, req: ln.QueryTableRequest, branch: str) -> pa.Table:
        """QueryTable on ``branch``'s dataset (pylance would query main)."""
        plain = req.model_copy(update={"branch": None})
        if not query_plans.runnable(plain):
            raise make(
                ErrorCode.UNSUPPORTED,
                f"query_table on branch {branch!r}: this kind of query (full-text, column "
                "aliases or multivector) is not supported on a branch by the local backend",
            )
        table = OpenTable(self.branch_dataset(req.id, branch, req.version))
        plain = self._vector_column(plain, table)
        return table.ds.to_table(**query_plans.scanner_arguments(plain))

    # -- tables ----------------------------------------------------------------------------
    def list_tables(self, request: ListTablesRequest) -> ListTablesResponse:
        """pylance's listing; a namespace that does not exist is ``NamespaceNotFoundError``
        (pylance answers an empty list)."""
        req = self._checked("list_tables", ListTablesRequest, request)
        resp = self._inner.list_tables(req)
        if req.id and not resp.tables and not self._inner_namespace_exists(req.id):
            raise make(
                ErrorCode.NAMESPACE_NOT_FOUND,
                f"list_tables: namespace {self.format_id(req.id)} not found",
            )
        return resp

    table_exists = _delegate("table_exists", ln.TableExistsRequest)

    @_filtered("count_table_rows")
    def count_table_rows(self, request: Any) -> ln.CountTableRowsResponse:
        """CountTableRows: on a branch pylance's count (it honours ``branch``), after the
        branch is found; on main at "latest" the table's last committed version
        (:meth:`committed_version`: a batch in flight is not counted before its commit point)."""
        req = self._checked("count_table_rows", ln.CountTableRowsRequest, request)
        self._check_branch(req)
        if branch_writes.target_branch(req) is not None:
            return self._inner.count_table_rows(req)
        return self._at_committed(req, self._inner.count_table_rows)

    def get_table_stats(self, request: Any) -> ln.GetTableStatsResponse:
        """pylance's stats (it honours ``branch``), after the branch is found."""
        req = self._checked("get_table_stats", ln.GetTableStatsRequest, request)
        self._check_branch(req)
        return self._inner.get_table_stats(req)

    @_filtered("query_table")
    def query_table(self, request: Any) -> ln.QueryTableResponse:
        """QueryTable: :meth:`query_table_arrow`'s rows as the spec's Arrow IPC file."""
        req = self._checked("query_table", ln.QueryTableRequest, request)

        def run(req: ln.QueryTableRequest) -> ln.QueryTableResponse:
            table = self._query_open_table(req)
            if table is None:
                return self._inner.query_table(self._vector_column(req))
            return ln.QueryTableResponse(data=to_ipc_file(table))

        return self._at_committed(req, run)

    @guarded("query_table")
    @_filtered("query_table")
    def query_table_arrow(self, request: Any) -> pa.Table:
        """QueryTable's rows as a pyarrow Table (no IPC round trip). Queries ``query_plans``
        maps run on a dataset kept open (``open_tables``: refreshed to the latest version on
        every call); the rest, and any query that fails there, go to pylance (whose error is
        the answer). Either way a vector search's column is resolved first
        (:meth:`_vector_column`)."""
        req = self._checked("query_table", ln.QueryTableRequest, request)

        def run(req: ln.QueryTableRequest) -> pa.Table:
            table = self._query_open_table(req)
            if table is None:
                return ipc_file_to_table(self._inner.query_table(self._vector_column(req)).data)
            return table

        return self._at_committed(req, run)

    def _vector_column(
        self, req: ln.QueryTableRequest, table: OpenTable | None = None
    ) -> ln.QueryTableRequest:
        """A vector search with its column resolved against the kinds of the table's columns
        (``table``'s, else the table's at the request's version; ``OpenTable.kinds``, worked
        out once per version):
        ``query_rules.resolve_vector_column``, so a missing or wrong column is a clear
        refusal, not lance's error with its source paths. A full-text query's columns are
        checked the same way (``query_rules.fts_column_problem``)."""
        vector = req.vector
        wants_vector = vector is not None and bool(vector.single_vector or vector.multi_vector)
        if not wants_vector and req.full_text_query is None:
            return req
        if table is None:
            try:
                table = self._open_tables.table(req.id or [], req.version)
            except Exception:  # noqa: BLE001 - pylance's own path reports a missing table
                return req
        if req.full_text_query is not None:
            problem = query_rules.fts_column_problem(table.kinds, req.full_text_query)
            if problem:
                raise invalid(problem)
        if not wants_vector:
            return req
        column = query_rules.resolve_vector_column(table.kinds, req.vector_column)
        return (
            req if column == req.vector_column else req.model_copy(update={"vector_column": column})
        )

    def _query_open_table(self, req: ln.QueryTableRequest) -> pa.Table | None:
        branch = branch_writes.target_branch(req)
        if branch is not None:
            return self._query_branch(req, branch)
        if not query_plans.runnable(req):
            return None
        try:
            table = self._open_tables.table(req.id or [], req.version)
        except Exception:  # noqa: BLE001 - pylance's own path reports the error
            return None
        req = self._vector_column(req, table)  # a refusal here is the answer
        try:
            return table.ds.to_table(**query_plans.scanner_arguments(req))
        except Exception:  # noqa: BLE001 - pylance's own path reports the error
            return None

    @_filtered("explain_table_query_plan")
    def explain_table_query_plan(self, request: Any) -> str:
        """The plan of the request's query, full-text queries included (``query_plans``)."""
        req = self._checked("explain_table_query_plan", ln.ExplainTableQueryPlanRequest, request)
        query = req.query
        branch = _plan_branch(req, query)
        if query is None or not query_plans.plannable(query):
            if branch is not None:
                raise _plan_refusal("explain_table_query_plan", branch)
            return self._inner.explain_table_query_plan(req)
        query = query.model_copy(update={"id": req.id or query.id})
        ds = self.branch_dataset(req.id or query.id or [], branch)
        query = self._vector_column(query, OpenTable(ds) if branch is not None else None)
        return query_plans.plan(ds, query, analyze=False, verbose=bool(req.verbose))

    @_filtered("analyze_table_query_plan")
    def analyze_table_query_plan(self, request: Any) -> str:
        """The executed plan with each node's metrics, full-text queries included."""
        req = self._checked("analyze_table_query_plan", ln.AnalyzeTableQueryPlanRequest, request)
        query = ln.QueryTableRequest.model_validate(req.model_dump(exclude={"identity", "context"}))
        branch = branch_writes.target_branch(query)
        if not query_plans.plannable(query):
            if branch is not None:
                raise _plan_refusal("analyze_table_query_plan", branch)
            return self._inner.analyze_table_query_plan(req)
        ds = self.branch_dataset(req.id or [], branch)
        query = self._vector_column(query, OpenTable(ds) if branch is not None else None)
        return query_plans.plan(ds, query, analyze=True, verbose=True)

    deregister_table = _delegate("deregister_table", ln.DeregisterTableRequest, write=True)
    restore_table = _delegate("restore_table", ln.RestoreTableRequest, write=True)

    def list_all_tables(self, request: ListTablesRequest) -> ListTablesResponse:
        """Every table under ``request.id`` (default: the root), recursively, as full ids
        joined with the delimiter. (pylance 14 only lists root-level tables.)"""
        req = self._checked("list_all_tables", ListTablesRequest, request)
        found: list[str] = []
        pending = [list(req.id or [])]
        while pending:
            ns_id = pending.pop()
            tables = list_all(
                self.list_tables,
                ListTablesRequest(id=ns_id, include_declared=req.include_declared),
                "tables",
            )
            found.extend(self.format_id([*ns_id, t]) for t in tables)
            children = list_all(self.list_namespaces, ListNamespacesRequest(id=ns_id), "namespaces")
            pending.extend([*ns_id, c] for c in children)
        found.sort()
        if req.limit is not None:
            found = found[: req.limit]
        return ListTablesResponse(tables=found)

    def describe_table(self, request: DescribeTableRequest) -> DescribeTableResponse:
        """DescribeTable; with ``load_detailed_metadata`` at "latest", the table's last
        committed version (:meth:`committed_version`), and a table a batch in flight declares
        is not found before the batch's commit point."""
        req = self._checked("describe_table", DescribeTableRequest, request)
        branch = branch_writes.target_branch(req)
        if branch is None and req.load_detailed_metadata and not req.tag:
            resp = self._at_committed(req, self._inner.describe_table)
        elif branch is None:
            resp = self._inner.describe_table(req)
        else:  # pylance describes main whatever the branch
            resp = self._describe_branch(req, branch)
        resp.location = self._fix_location(resp.location)
        resp.table_uri = self._fix_location(resp.table_uri)
        return resp

    def _describe_branch(self, req: DescribeTableRequest, branch: str) -> DescribeTableResponse:
        """DescribeTable of ``branch``: the location from the catalog, the version (and with
        ``load_detailed_metadata`` the schema and row and fragment counts) from the branch."""
        if req.tag:
            raise invalid("describe_table: give a tag or a branch, not both")
        base = self._inner.describe_table(
            req.model_copy(
                update={"branch": None, "version": None, "load_detailed_metadata": False}
            )
        )
        ds = self.branch_dataset(req.id, branch, req.version)
        answer = base.to_dict()
        answer["version"] = int(ds.version)
        if req.load_detailed_metadata:
            answer["schema"] = lance.schema.schema_to_json(ds.schema)
            answer["metadata"] = {
                "total_rows": str(ds.count_rows()),
                "total_fragments": str(len(ds.get_fragments())),
            }
        return _response(DescribeTableResponse, answer)

    def create_table(self, request: CreateTableRequest, request_data: Any) -> CreateTableResponse:
        """Create a table, or overwrite one (``mode="overwrite"``) whose location passes the
        rule of what the console may rewrite (``_owned_location``). A new root-level table
        never takes a folder of someone else's files (``_foreign_folder``)."""
        req = self._checked("create_table", CreateTableRequest, request)
        data = to_ipc_stream(request_data)
        self._require_parent_namespace(req.id)
        problem = self._foreign_folder(req.id)
        if problem:
            raise invalid(f"create_table: {problem}")
        overwrite = (req.mode or "").lower() == "overwrite"
        with self._guard(req.id, check_files=not overwrite):  # overwrite: the stricter rule
            if overwrite:
                try:
                    self._owned_location("create_table", req.id, "overwrite the data")
                except LanceNamespaceError as err:
                    if getattr(err, "code", None) != ErrorCode.TABLE_NOT_FOUND:
                        raise
            resp = self._inner.create_table(req, data)
        resp.location = self._fix_location(resp.location)
        return resp

    def declare_table(self, request: DeclareTableRequest) -> DeclareTableResponse:
        req = self._checked("declare_table", DeclareTableRequest, request)
        self._require_parent_namespace(req.id)
        problem = None
        if req.location:  # what is wrong with it first, then the policy
            _, problem = self._location_problem(req.location, exclude=req.id)
        problem = problem or declare_location_rule(
            req.id or [], req.location, root_uri=self._root_uri()
        )
        own = declared_location(req.id or [])
        if problem is None and own is not None:  # a root-level table's directory, known ahead
            _, problem = self._location_problem(own, exclude=req.id)
        problem = problem or self._foreign_folder(req.id)
        if problem:
            raise invalid(f"declare_table: {problem}")
        with self._guard(req.id):
            # The only location accepted is the one pylance chooses: it is left to choose it.
            resp = self._inner.declare_table(req.model_copy(update={"location": None}))
        resp.location = self._fix_location(resp.location)
        return resp

    def register_table(self, request: RegisterTableRequest) -> RegisterTableResponse:
        req = self._checked("register_table", RegisterTableRequest, request)
        if len(req.id or []) == 1:
            # pylance writes the catalog row of a root-level registration but never finds the
            # table again (it looks root-level tables up by directory name).
            raise invalid(
                "register_table: register tables inside a namespace; a root-level "
                "registration cannot be read back by the directory namespace"
            )
        self._require_parent_namespace(req.id)
        key, problem = self._location_problem(req.location, must_exist=True)
        if problem:
            raise invalid(f"register_table: {problem}")
        if key is None and self.local_path is not None:
            # pylance registers a location relative to the root only: the checked location
            # (a path or file URI, as DeregisterTable answered it) relative to the root
            key = relative_location(self.local_path, req.location)
        if key is not None:  # the checked key, relative to the root
            req = req.model_copy(update={"location": key})
        with self._guard(req.id):
            resp = self._inner.register_table(req)
        if resp.location and self.local_path is not None and "://" not in resp.location:
            resp.location = path_uri(self.local_path / resp.location.lstrip("/"))
        resp.location = self._fix_location(resp.location)
        return resp

    def rename_table(self, request: ln.RenameTableRequest) -> ln.RenameTableResponse:
        """Rename a table, also into another namespace: one catalog commit that moves its row
        (same location, same properties; the data is not touched), so a crash leaves the old
        name or the new one (``batch.catalog_ops``)."""
        req = self._checked("rename_table", ln.RenameTableRequest, request)
        if not req.id:
            raise invalid("rename_table: the table id is missing")
        namespace = list(req.new_namespace_id if req.new_namespace_id is not None else req.id[:-1])
        new_id = [*namespace, req.new_table_name]
        if new_id == list(req.id):
            raise invalid(f"rename_table: {self.format_id(req.id)} already has that name")
        if len(req.id) == 1 or len(new_id) == 1:
            raise invalid(
                "rename_table: root-level tables cannot be renamed on a directory namespace "
                "(pylance lists them by their directory names, so the new name would not show); "
                "rename tables inside a namespace"
            )
        with self._guard(req.id, new_id, check_files=False):
            catalog_ops.rename(batch.context(self, catalog_only=True), req.id, new_id)
            self._open_tables.clear()
        return ln.RenameTableResponse()

    def drop_table(self, request: DropTableRequest) -> DropTableResponse:
        """Drop a table and delete its data; refused when its location does not pass the
        location rule (the root, the catalog, another table's directory or prefix, or one
        inside or around it: a dangerous registration, deregister it instead). On an object
        store only the objects under the table's own prefix are deleted."""
        req = self._checked("drop_table", DropTableRequest, request)
        with self._guard(req.id, check_files=False):
            key, location = self._owned_location("drop_table", req.id, "delete the data")
            if key is None or not objects.is_object_root(self.root):
                return self._inner.drop_table(req)  # file and memory roots: pylance's drop
            return self._drop_objects(req, key, location)

    def _drop_objects(self, req: DropTableRequest, key: str, location: str) -> DropTableResponse:
        """Deregister the table, then delete the objects under ``<key>/`` (the trailing slash:
        ``t1`` never takes ``t10``'s objects)."""
        try:
            self._inner.deregister_table(ln.DeregisterTableRequest(id=req.id))
        except LanceNamespaceError as err:
            # A root-level table found by listing only (no catalog row): deleting its
            # objects is what drops it.
            if getattr(err, "code", None) != ErrorCode.TABLE_NOT_FOUND or len(req.id or []) != 1:
                raise
        store = objects.store_for(batch.context(self, catalog_only=True))
        prefix = key + "/"
        for k in store.list(prefix):
            if k.startswith(prefix):
                store.delete(k)
        self._open_tables.clear()
        return DropTableResponse(id=req.id, location=location)

    # -- data writes ------------------------------------------------------------------------
    def insert_into_table(
        self, request: InsertIntoTableRequest, request_data: Any
    ) -> InsertIntoTableResponse:
        req = self._checked("insert_into_table", InsertIntoTableRequest, request)
        data = to_ipc_stream(request_data)
        with self._guard(req.id):
            if _on_branch("insert_into_table", req):
                return self._branch_write("insert_into_table", req, data)
            return self._inner.insert_into_table(req, data)

    def merge_insert_into_table(
        self, request: MergeInsertIntoTableRequest, request_data: Any
    ) -> MergeInsertIntoTableResponse:
        req = self._checked("merge_insert_into_table", MergeInsertIntoTableRequest, request)
        data = to_ipc_stream(request_data)
        with self._guard(req.id):
            if _on_branch("merge_insert_into_table", req):
                return self._branch_write("merge_insert_into_table", req, data)
            return self._inner.merge_insert_into_table(req, data)

    update_table = _filtered("update_table")(
        _delegate("update_table", ln.UpdateTableRequest, write=True)
    )
    delete_from_table = _filtered("delete_from_table")(
        _delegate("delete_from_table", ln.DeleteFromTableRequest, write=True)
    )
    update_table_schema_metadata = _delegate(
        "update_table_schema_metadata",
        ln.UpdateTableSchemaMetadataRequest,
        write=True,
    )
    alter_table_add_columns = _delegate(
        "alter_table_add_columns", ln.AlterTableAddColumnsRequest, write=True
    )

    @explains_columns("alter_table_alter_columns", _table_schema)
    @explains_columns("alter_table_alter_columns", _table_schema)
    def alter_table_alter_columns(
        self, request: ln.AlterTableAlterColumnsRequest
    ) -> ln.AlterTableAlterColumnsResponse:
        """pylance's ``alter_table_alter_columns`` under the namespace lock. A new type is
        given in the spec's JSON form (``{"type": "int32"}``); pylance 14 reads only a type
        name there (``"int32"``), so the name is what it is handed."""
        req = self._checked("alter_table_alter_columns", ln.AlterTableAlterColumnsRequest, request)
        if _on_branch("alter_table_alter_columns", req):  # the branch's own, or refused
            with self._guard(req.id):
                return self._branch_write("alter_table_alter_columns", req, None)
        entries = list(req.alterations or [])
        if any(isinstance(e.data_type, dict) for e in entries):
            named = [
                type(e).model_construct(**{**dict(e), "data_type": _type_name(e.data_type)})
                for e in entries
            ]
            req = type(req).model_construct(**{**dict(req), "alterations": named})
        with self._guard(req.id), warnings.catch_warnings():
            # pylance dumps the request: pydantic warns of the type name where it types a dict
            warnings.filterwarnings("ignore", "Pydantic serializer warnings", UserWarning)
            return self._inner.alter_table_alter_columns(req)

    alter_table_drop_columns = explains_columns("alter_table_drop_columns", _table_schema)(
        _delegate("alter_table_drop_columns", ln.AlterTableDropColumnsRequest, write=True)
    )
    alter_table_backfill_columns = _delegate(
        "alter_table_backfill_columns",
        ln.AlterTableBackfillColumnsRequest,
        write=True,
    )
    create_materialized_view = _delegate(
        "create_materialized_view",
        ln.CreateMaterializedViewRequest,
        write=True,
    )
    refresh_materialized_view = _delegate(
        "refresh_materialized_view",
        ln.RefreshMaterializedViewRequest,
        write=True,
    )

    # -- tags and branches -------------------------------------------------------------------
    list_table_tags = _delegate("list_table_tags", ln.ListTableTagsRequest)
    get_table_tag_version = _delegate("get_table_tag_version", ln.GetTableTagVersionRequest)
    create_table_tag = _delegate("create_table_tag", ln.CreateTableTagRequest, write=True)
    delete_table_tag = _delegate("delete_table_tag", ln.DeleteTableTagRequest, write=True)
    update_table_tag = _delegate("update_table_tag", ln.UpdateTableTagRequest, write=True)
    create_table_branch = _delegate("create_table_branch", ln.CreateTableBranchRequest, write=True)
    list_table_branches = _delegate("list_table_branches", ln.ListTableBranchesRequest)
    delete_table_branch = _delegate("delete_table_branch", ln.DeleteTableBranchRequest, write=True)

    # -- versions ----------------------------------------------------------------------------
    def list_table_versions(self, request: ListTableVersionsRequest) -> ListTableVersionsResponse:
        """Versions, ascending (or descending), paged by ``limit`` / ``page_token``.

        pylance 14 lists every version whatever the ``limit`` and never returns a
        ``page_token`` (the listing silently ends after the first page), so pages are cut
        here. Tokens are ``v<version>``: the first version of the next page, which stays valid
        when versions are deleted. On a local file root (main branch) the page is read from
        the ``_versions`` directory (``backend.local.version_files``): the file names, then
        only the page's files; elsewhere from pylance's listing.
        """
        req = self._checked("list_table_versions", ListTableVersionsRequest, request)
        start_at: int | None = None
        if req.page_token:
            token = req.page_token
            if not (token.startswith("v") and is_digits(token[1:])):
                raise invalid(f"invalid page_token {token!r} for list_table_versions")
            start_at = int(token[1:])

        def after_token(numbers: list[int]) -> list[int]:
            if start_at is None:
                return numbers
            if req.descending:
                return [v for v in numbers if v <= start_at]
            return [v for v in numbers if v >= start_at]

        # the directory's files are the committed versions unless a batch is in flight (its
        # versions are hidden, the ones it deletes shown, until its commit point: pylance's
        # listing and :meth:`_committed_versions` then)
        files = self._version_files(req) if self._in_flight().empty else None
        if files is not None:
            table_dir, names = files
            numbers = after_token(sorted(names, reverse=bool(req.descending)))
            limit = req.limit if req.limit is not None else len(numbers)
            following = numbers[limit:]
            return ListTableVersionsResponse(
                versions=version_files.entries(table_dir, names, numbers[:limit]),
                page_token=f"v{following[0]}" if following else None,
            )
        full = self._inner.list_table_versions(
            req.model_copy(update={"limit": None, "page_token": None})
        )
        listed = list(full.versions)
        if not branch_writes.target_branch(req):
            listed = self._committed_versions(req.id or [], listed)
        versions = sorted(listed, key=lambda v: v.version, reverse=bool(req.descending))
        kept = set(after_token([v.version for v in versions]))
        versions = [v for v in versions if v.version in kept]
        limit = req.limit if req.limit is not None else len(versions)
        page, rest = versions[:limit], versions[limit:]
        for v in page:
            v.manifest_path = self._fix_manifest_path(v.manifest_path)
        return ListTableVersionsResponse(
            versions=page, page_token=f"v{rest[0].version}" if rest else None
        )

    def _version_files(self, req: ListTableVersionsRequest) -> tuple[Path, dict[int, str]] | None:
        """``(table directory, {version: manifest file name})`` when the table's versions can
        be read from its ``_versions`` directory (:meth:`_versions_dir`); ``None``: ask
        pylance."""
        table_dir = self._versions_dir(req)
        names = version_files.version_names(table_dir) if table_dir is not None else None
        return None if table_dir is None or names is None else (table_dir, names)

    def version_stamp(self, table_id: Sequence[str]) -> tuple[int, int] | None:
        """What changes whenever a version of the table's main branch is committed or deleted:
        the modification time (ns) and inode of its ``_versions`` directory (a commit or a
        delete adds or removes a file there). ``None`` when there is no such directory to look
        at (an object-store root, a declared table, versions managed by the catalog): ask for
        the latest version itself; so for a directory changed in the last
        :data:`STAMP_SETTLE_NS` (two commits within one tick of a file system's clock would
        leave the same time). Reading it costs a catalog lookup and a ``stat``, whatever the
        table's history (DescribeTable's latest version: 85 ms at 100,000 versions)."""
        table_dir = self._versions_dir(DescribeTableVersionRequest(id=ids.check_id(table_id)))
        if table_dir is None:
            return None
        try:
            st = os.stat(table_dir / "_versions")
        except (FileNotFoundError, NotADirectoryError):
            return None
        if time.time_ns() - st.st_mtime_ns < STAMP_SETTLE_NS:
            return None  # changed just now: a file system with coarse times may not show the next
        return (st.st_mtime_ns, st.st_ino)

    def _versions_dir(
        self, req: ListTableVersionsRequest | DescribeTableVersionRequest
    ) -> Path | None:
        """The table's directory when its versions are the files of its ``_versions``
        directory: a local file root, the main branch, versions not managed by the catalog."""
        if self.local_path is None or getattr(req, "branch", None):
            return None
        return self._open_tables.kept(list(req.id or []), self._main_versions_dir)

    def _main_versions_dir(self, table_id: Sequence[str]) -> Path | None:
        """:meth:`_versions_dir` of a table's main branch, from its catalog entry (one
        DescribeTable; kept by :meth:`OpenTables.kept` while the catalog does not move)."""
        desc = self._inner.describe_table(DescribeTableRequest(id=list(table_id)))
        if desc.managed_versioning:
            return None
        return to_local_path(self._fix_location(desc.location))

    def create_table_version(
        self, request: CreateTableVersionRequest | Mapping[str, Any]
    ) -> CreateTableVersionResponse:
        req = self._checked("create_table_version", CreateTableVersionRequest, request)
        with self._guard(req.id):
            req = self._checked_version(req)
            answer = self._inner.create_table_version(req.model_dump())
        resp = _response(CreateTableVersionResponse, answer)
        if resp.version is not None:
            resp.version.manifest_path = self._fix_manifest_path(resp.version.manifest_path)
        return resp

    def _checked_version(self, req: CreateTableVersionRequest) -> CreateTableVersionRequest:
        """The staged-manifest rule for a single CreateTableVersion (the batch's, too): file
        roots read the file, object stores the object (a Lance manifest of exactly the version
        announced, of the size announced); memory roots check the path. The request goes to
        pylance with the manifest as the path inside the bucket it reads."""
        assert req.version is not None
        table_location = self.table_location(req.id)
        try:
            if self.local_path is not None:
                location = to_local_path(table_location, self.local_path)
                assert location is not None
                read_staged_manifest(
                    self.local_path, location, req.manifest_path, req.version, req.manifest_size
                )
                return req
            ctx = batch.context(self, catalog_only=True)
            if objects.is_object_root(self.root):
                key, _ = objects.read_staged_object(
                    ctx, table_location, req.manifest_path, req.version, req.manifest_size
                )
            else:
                _, problem = object_manifest_key(self.root, table_location, req.manifest_path)
                if problem:
                    raise invalid(problem)
                return req
        except LanceNamespaceError as exc:
            raise invalid(f"create_table_version: {exc}") from None
        return req.model_copy(update={"manifest_path": objects.bucket_path(ctx, key)})

    def describe_table_version(
        self, request: DescribeTableVersionRequest | Mapping[str, Any]
    ) -> DescribeTableVersionResponse:
        req = self._checked("describe_table_version", DescribeTableVersionRequest, request)
        table_dir = self._versions_dir(req) if req.version is not None else None
        found = table_dir and version_files.one_version(table_dir, int(req.version or 0))
        if found:  # one file looked at (pylance lists every version to find one)
            return DescribeTableVersionResponse(version=found)
        resp = _response(
            DescribeTableVersionResponse, self._inner.describe_table_version(req.model_dump())
        )
        if resp.version is not None:
            resp.version.manifest_path = self._fix_manifest_path(resp.version.manifest_path)
        return resp

    def batch_delete_table_versions(
        self,
        request: BatchDeleteTableVersionsRequest | Mapping[str, Any],
        *,
        allow_latest: bool = False,
        delete_tags: bool = False,
    ) -> BatchDeleteTableVersionsResponse:
        """Delete version records by ranges (start inclusive, end exclusive; ``end=-1``: to
        latest), refused per ``backend.rules.version_ranges`` (never the latest version unless
        ``allow_latest``; never a tagged version: the refusal names the tags). With
        ``delete_tags`` the tags of the covered versions are deleted first, under the same
        lock, then the versions."""
        req = self._checked("batch_delete_table_versions", BatchDeleteTableVersionsRequest, request)
        with self._guard(req.id, check_files=False):
            self._owned_location("batch_delete_table_versions", req.id, "delete versions")
            newest = self.list_table_versions(  # one entry read (a local root: one listdir)
                ListTableVersionsRequest(id=req.id, branch=req.branch, descending=True, limit=1)
            ).versions
            latest = max((v.version for v in newest), default=None)
            ranges = req.ranges or []
            version_ranges.check_ranges(ranges, latest=latest, allow_latest=allow_latest)
            catalog_views.clear_covered_tags(
                self._inner, req.id or [], ranges, latest, delete_tags=delete_tags
            )
            answer = self._inner.batch_delete_table_versions(req.model_dump())
        return _response(BatchDeleteTableVersionsResponse, answer)

    def batch_commit_tables(self, request: BatchCommitTablesRequest) -> BatchCommitTablesResponse:
        """All-or-none batch of DeclareTable / CreateTableVersion / DeleteTableVersions /
        DeregisterTable (``backend.local.batch``)."""
        return batch.commit_batch(self, _coerce(BatchCommitTablesRequest, request))

    @guarded("preflight")
    def preflight(
        self, request: BatchCommitTablesRequest | dict[str, Any], *, raise_first: bool = False
    ) -> list[Any]:
        """The problems ``batch_commit_tables`` would refuse the batch for, judged now without
        writing (``backend.local.batch.validate.preflight_batch``); the same API as the REST
        client's. ``raise_first``: raise the first error instead of returning it."""
        req = _coerce(BatchCommitTablesRequest, request)
        problems = preflight_batch(batch.context(self, catalog_only=True), req)
        first = next((p for p in problems if p.severity == "error"), None)
        if raise_first and first is not None:
            raise first.error()
        return problems

    # -- indexes -----------------------------------------------------------------------------
    drop_table_index = _delegate("drop_table_index", ln.DropTableIndexRequest, write=True)

    def list_table_indices(self, request: ListTableIndicesRequest) -> ln.ListTableIndicesResponse:
        """pylance's listing; on a branch the branch's own (``branch_indexes``: pylance
        lists main's whatever the branch)."""
        req = self._checked("list_table_indices", ListTableIndicesRequest, request)
        branch = branch_writes.target_branch(req)
        if branch is None:
            return self._inner.list_table_indices(req)
        return branch_indexes.list_indices(self.branch_dataset(req.id, branch, req.version), req)

    def describe_table_index_stats(
        self, request: DescribeTableIndexStatsRequest
    ) -> DescribeTableIndexStatsResponse:
        req = self._checked("describe_table_index_stats", DescribeTableIndexStatsRequest, request)
        branch = branch_writes.target_branch(req)
        if branch is not None:  # pylance would describe main's index
            ds = self.branch_dataset(req.id, branch, req.version)
            return branch_indexes.index_stats(ds, req, table=self.format_id(req.id), branch=branch)
        resp = self._inner.describe_table_index_stats(req)
        if resp.distance_type is None and req.index_name and _may_have_metric(resp.index_type):
            resp.distance_type = self._index_distance_type(req)
        return resp

    def _index_distance_type(self, req: DescribeTableIndexStatsRequest) -> str | None:
        """The metric in the index's details (pylance's stats leave it out): read from the
        table's index listing."""
        listing = self._inner.list_table_indices(
            ListTableIndicesRequest(id=req.id, version=req.version, branch=req.branch)
        )
        for idx in listing.indexes:
            if idx.index_name != req.index_name or not idx.index_details:
                continue
            try:
                details = json.loads(idx.index_details)
            except ValueError:
                return None
            metric = details.get("metric_type") if isinstance(details, dict) else None
            return normalize_distance(metric) if isinstance(metric, str) else None
        return None

    def create_table_index(
        self, request: CreateTableIndexRequest, *, progress: indexes.ProgressCallback | None = None
    ) -> CreateTableIndexResponse:
        """Build an index through the Lance dataset API (``backend.local.indexes``).

        ``progress`` receives dicts ``{"event", "stage", "completed", "total", "unit",
        "fraction"}`` from Lance's build progress events.
        """
        req = self._checked("create_table_index", CreateTableIndexRequest, request)
        return self._build_index(req, progress)

    def create_table_scalar_index(
        self, request: CreateTableIndexRequest, *, progress: indexes.ProgressCallback | None = None
    ) -> ln.CreateTableScalarIndexResponse:
        req = self._checked("create_table_scalar_index", CreateTableIndexRequest, request)
        built = self._build_index(req, progress)
        return ln.CreateTableScalarIndexResponse(
            transaction_id=built.transaction_id, context=built.context
        )

    def _build_index(
        self, req: CreateTableIndexRequest, progress: indexes.ProgressCallback | None
    ) -> CreateTableIndexResponse:
        branch = branch_writes.target_branch(req)
        with self._long_write(req.id, branch) as ds:
            response = indexes.build_index(
                ds,
                req,
                table=self.format_id(req.id),
                storage_options=self.storage_options,
                progress=progress,
            )
        if rules.index_category(req.index_type or "") == "vector":
            chosen = {
                k[len(rules.CHOSEN_PREFIX) :]: int(v)
                for k, v in (response.context or {}).items()
                if k.startswith(rules.CHOSEN_PREFIX)
            }
            name = req.name or rules.default_index_name(req.column or "")
            indexes.record_request(
                self.local_path, self.root, self._requests_key(req.id, branch), name,
                rules.requested_build_fields(req, chosen),
            )  # fmt: skip
        return response

    @guarded("index_requests")
    def index_requests(
        self, table_id: Sequence[str], branch: str | None = None
    ) -> dict[str, dict[str, Any]]:
        """Index name -> the build parameters the console asked for (vector indexes), of the
        table's main or of ``branch``."""
        key = self._requests_key(table_id, branch)
        return indexes.recorded_requests(self.local_path, self.root, key)

    # -- maintenance (no spec operation: the local backend's own) -----------------------------
    @guarded("optimize_indexes")
    def optimize_indexes(
        self, table_id: Sequence[str], branch: str | None = None
    ) -> dict[str, Any]:
        """Add the rows the indexes do not cover yet to them (``optimize_indices``), on main or
        on ``branch``."""
        with self._long_write(table_id, branch) as ds:
            before = ds.version
            ds.optimize.optimize_indices()
            after = self.branch_dataset(table_id, branch).version
        return {"version_before": before, "version_after": after}

    @guarded("compact_files")
    def compact_files(
        self,
        table_id: Sequence[str],
        branch: str | None = None,
        *,
        options: Mapping[str, Any] | None = None,
        progress: Callable[[dict[str, Any]], None] | None = None,
        resume: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Merge small data files of main or of ``branch``, task by task
        (``compaction.compact``: progress per task, stopped between tasks when ``progress``
        raises ``OperationStopped``, resumed from a checkpoint of an earlier run); indexes are
        remapped by lance."""
        with self._long_write(table_id, branch) as ds:
            before = ds.version
            shape_before = data_shape(ds)
            metrics = compaction.compact(
                ds,
                options=options,
                progress=progress,
                resume=resume,
                open_at=lambda v: self.branch_dataset(table_id, branch, v),
            )
            latest = self.branch_dataset(table_id, branch)
            after = latest.version
            shape_after = data_shape(latest)
        return {
            "version_before": before,
            "version_after": after,
            "fragments_before": shape_before[0],
            "fragments_after": shape_after[0],
            "data_bytes_before": shape_before[1],
            "data_bytes_after": shape_after[1],
            **metrics,
        }

    @guarded("cleanup_old_versions")
    def cleanup_old_versions(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Lance's ``cleanup_old_versions`` of table ``id`` (main): the versions older than
        ``older_than_days`` days (``{"id": [...], "older_than_days": 7}``; tagged versions are
        kept, ``error_if_tagged_old_versions=False``), or exactly the ``versions`` listed
        (``{"id": [...], "versions": [1, 3]}``, refused as BatchDeleteTableVersions refuses:
        never the latest, never a tagged version, whose tags are named). Either way the
        versions' manifests go with every file no remaining version reads (data, deletion,
        index and transaction files); lance never removes the latest version, keeps a version
        a branch starts from, and keeps a file no version refers to for its grace period (a
        write in progress). ``bytes_removed`` / ``files_removed`` count what lance deleted.
        Both given, a bad number of days or version: ``InvalidInputError``, nothing removed."""
        table_id = ids.check_id((request or {}).get("id"))
        days: Any = (request or {}).get("older_than_days")
        listed: Any = (request or {}).get("versions")
        if days is not None and listed is not None:
            raise invalid("give older_than_days or versions, not both; nothing was removed")
        options: dict[str, Any]
        if listed is not None:
            options = {"versions": self._cleanup_versions(table_id, listed)}
        else:
            problem = version_ranges.keep_days_problem(days)
            if problem:
                raise invalid(problem + "; nothing was removed")
            options = {
                "older_than": timedelta(days=int(days)),
                "error_if_tagged_old_versions": False,
            }
        # a long write (the guard only while the table is judged and opened), on a table whose
        # files pass the stricter rule of what the console deletes
        with self._guard(table_id, check_files=False):
            self._owned_location("cleanup_old_versions", table_id, "clean up the files")
            ds = self.open_dataset(table_id)
        before = [int(v["version"]) for v in ds.versions()]
        stats = ds.cleanup_old_versions(**options)
        after = [int(v["version"]) for v in self.open_dataset(table_id).versions()]
        return {
            "versions_before": len(before),
            "versions_after": len(after),
            "removed_versions": sorted(set(before) - set(after)),
            "bytes_removed": int(stats.bytes_removed),
            "old_versions": int(stats.old_versions),
            "files_removed": int(stats.old_versions)
            + int(stats.data_files_removed)
            + int(stats.deletion_files_removed)
            + int(stats.index_files_removed)
            + int(stats.transaction_files_removed),
            "failed_deletes": int(stats.failed_deletes),
        }

    def _cleanup_versions(self, table_id: list[str], listed: Any) -> list[int]:
        """The ``versions`` of a cleanup, checked as BatchDeleteTableVersions checks its
        ranges (``version_ranges``; tags by ``catalog_views.clear_covered_tags``)."""
        if not isinstance(listed, (list, tuple)) or not listed:
            raise invalid(f"versions must be a list of version numbers, got {listed!r}")
        for v in listed:
            problem = version_ranges.version_problem(v)
            if problem:
                raise invalid(problem + "; nothing was removed")
        wanted = sorted({int(v) for v in listed})
        ranges = version_ranges.to_spec(version_ranges.spans_of(wanted))
        with self._guard(table_id, check_files=False):  # checks only
            newest = self.list_table_versions(
                ListTableVersionsRequest(id=table_id, descending=True, limit=1)
            ).versions
            latest = max((v.version for v in newest), default=None)
            version_ranges.check_ranges(ranges, latest=latest)
            catalog_views.clear_covered_tags(
                self._inner, table_id, ranges, latest, delete_tags=False
            )
        return wanted

    @guarded("remove_table_schema_metadata_keys")
    def remove_table_schema_metadata_keys(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Remove schema-metadata ``keys`` of table ``id`` (``{"id": [...], "keys": [...]}``):
        a new version holding the other keys (lance's ``update_schema_metadata(...,
        replace=True)``). No spec operation does it (UpdateTableSchemaMetadata only adds and
        changes keys). A key the table does not have: ``InvalidInputError``, nothing changed."""
        table_id = ids.check_id((request or {}).get("id"))
        keys = (request or {}).get("keys") or []
        if not keys or not all(isinstance(k, str) and k for k in keys):
            raise invalid("name one or more schema-metadata keys to remove")
        where = self.format_id(table_id)
        with self._guard(list(table_id)):
            ds = self.open_dataset(table_id)
            current = {
                (k.decode() if isinstance(k, bytes) else str(k)): (
                    v.decode() if isinstance(v, bytes) else str(v)
                )
                for k, v in (ds.schema.metadata or {}).items()
            }
            missing = sorted(set(keys) - set(current))
            if missing:
                raise invalid(
                    f"table {where} has no schema-metadata key {', '.join(missing)} "
                    f"(it has: {', '.join(sorted(current)) or 'none'}); nothing was removed"
                )
            kept: dict[str, str | None] = {k: v for k, v in current.items() if k not in set(keys)}
            before = ds.version
            ds.update_schema_metadata(kept, replace=True)
            after = self.open_dataset(table_id).version
        return {
            "version_before": before,
            "version_after": after,
            "removed": sorted(set(keys)),
            "metadata": kept,
        }

    # -- transactions ------------------------------------------------------------------------
    def describe_transaction(
        self, request: DescribeTransactionRequest
    ) -> DescribeTransactionResponse:
        """A batch commit, or pylance's per-table transaction (table id + uuid or version)."""
        req = self._checked("describe_transaction", DescribeTransactionRequest, request)
        return transactions.describe(self, req)

    def alter_transaction(self, request: AlterTransactionRequest) -> AlterTransactionResponse:
        """All actions or none (``backend.local.transactions``)."""
        req = self._checked("alter_transaction", AlterTransactionRequest, request)
        return transactions.alter(self, req)


def _plan_branch(req: ln.ExplainTableQueryPlanRequest, query: Any) -> str | None:
    """The branch an ExplainTableQueryPlan names (its own ``branch`` or its query's; the two
    must agree)."""
    outer = branch_writes.target_branch(req)
    inner = branch_writes.target_branch(query) if query is not None else None
    if outer is not None and inner is not None and outer != inner:
        raise invalid(
            f"explain_table_query_plan: the request names branch {outer!r} and its query "
            f"branch {inner!r}; give one"
        )
    return outer or inner


def _plan_refusal(op: str, branch: str) -> LanceNamespaceError:
    return make(
        ErrorCode.UNSUPPORTED,
        f"{op} on branch {branch!r}: this kind of query (a boolean, boosted or multi-match "
        "full-text query) is planned by pylance, which would plan it on main; not supported on "
        "a branch by the local backend",
    )


def _response(model: type[ModelT], answer: Any) -> ModelT:
    """pylance's dict answer as the response model (``InternalError`` when it is empty)."""
    out = model.from_dict(answer)  # type: ignore[attr-defined]
    if out is None:
        raise make(ErrorCode.INTERNAL, f"pylance returned no {model.__name__}")
    return out
