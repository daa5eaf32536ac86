"""The local backend: pylance's ``DirectoryNamespace`` plus fixes of its known defects.

``LocalNamespace(target, **options)`` composes a ``lance.namespace.DirectoryNamespace`` and
delegates every ``LanceNamespace`` operation to it, taking and returning the
``lance_namespace`` request/response models (also for the version operations, which pylance
handles as dicts). Fixed on top of pylance 14:

* ``alter_transaction`` applies its actions (pylance drops every one of them). Status changes
  and properties are kept in ``backend.txn_store`` and merged into ``describe_transaction``.
* ``create_table_index`` builds through the dataset API, so vector build parameters
  (``num_partitions``, ``num_sub_vectors``, ``num_bits``, ``sample_rate``, ``max_iterations``,
  ``target_partition_size``, ``m``, ``ef_construction``) are honoured, build progress can be
  observed, and index type / column type mismatches are ``InvalidInputError``.
* ``describe_table_index_stats`` fills ``distance_type`` (pylance answers null).
* ``batch_delete_table_versions`` refuses to delete the latest version (unless asked) and
  refuses empty or inverted ranges (pylance silently deletes nothing).
* ``create_table`` / ``declare_table`` / ``register_table`` check that the parent namespace
  exists (pylance creates the table anyway); ``rename_table`` answers
  ``UnsupportedOperationError`` instead of a bare ``NotImplementedError``.
* every failure is a ``LanceNamespaceError`` carrying the attributes of ``backend.errors``.

Transaction statuses are reported upper-case (``SUCCEEDED``), as pylance reports them; input is
case-insensitive (``Succeeded``, ``succeeded``, ``SUCCEEDED``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import threading
import time
import types
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

import lance
import pyarrow as pa
from lance.namespace import DirectoryNamespace
from lance_namespace import (
    AlterTableAddColumnsRequest,
    AlterTableAddColumnsResponse,
    AlterTableAlterColumnsRequest,
    AlterTableAlterColumnsResponse,
    AlterTableBackfillColumnsRequest,
    AlterTableBackfillColumnsResponse,
    AlterTableDropColumnsRequest,
    AlterTableDropColumnsResponse,
    AlterTransactionRequest,
    AlterTransactionResponse,
    AnalyzeTableQueryPlanRequest,
    BatchCommitTablesRequest,
    BatchCommitTablesResponse,
    BatchDeleteTableVersionsRequest,
    BatchDeleteTableVersionsResponse,
    CountTableRowsRequest,
    CountTableRowsResponse,
    CreateMaterializedViewRequest,
    CreateMaterializedViewResponse,
    CreateNamespaceRequest,
    CreateNamespaceResponse,
    CreateTableBranchRequest,
    CreateTableBranchResponse,
    CreateTableIndexRequest,
    CreateTableIndexResponse,
    CreateTableRequest,
    CreateTableResponse,
    CreateTableTagRequest,
    CreateTableTagResponse,
    CreateTableVersionRequest,
    CreateTableVersionResponse,
    DeclareTableRequest,
    DeclareTableResponse,
    DeleteFromTableRequest,
    DeleteFromTableResponse,
    DeleteTableBranchRequest,
    DeleteTableBranchResponse,
    DeleteTableTagRequest,
    DeleteTableTagResponse,
    DeregisterTableRequest,
    DeregisterTableResponse,
    DescribeNamespaceRequest,
    DescribeNamespaceResponse,
    DescribeTableIndexStatsRequest,
    DescribeTableIndexStatsResponse,
    DescribeTableRequest,
    DescribeTableResponse,
    DescribeTableVersionRequest,
    DescribeTableVersionResponse,
    DescribeTransactionRequest,
    DescribeTransactionResponse,
    DropNamespaceRequest,
    DropNamespaceResponse,
    DropTableIndexRequest,
    DropTableIndexResponse,
    DropTableRequest,
    DropTableResponse,
    ExplainTableQueryPlanRequest,
    GetTableStatsRequest,
    GetTableStatsResponse,
    GetTableTagVersionRequest,
    GetTableTagVersionResponse,
    InsertIntoTableRequest,
    InsertIntoTableResponse,
    LanceNamespace,
    ListNamespacesRequest,
    ListNamespacesResponse,
    ListTableBranchesRequest,
    ListTableBranchesResponse,
    ListTableIndicesRequest,
    ListTableIndicesResponse,
    ListTablesRequest,
    ListTablesResponse,
    ListTableTagsRequest,
    ListTableTagsResponse,
    ListTableVersionsRequest,
    ListTableVersionsResponse,
    MergeInsertIntoTableRequest,
    MergeInsertIntoTableResponse,
    NamespaceExistsRequest,
    NamespaceExistsResponse,
    QueryTableRequest,
    QueryTableResponse,
    RefreshMaterializedViewRequest,
    RefreshMaterializedViewResponse,
    RegisterTableRequest,
    RegisterTableResponse,
    RenameTableRequest,
    RenameTableResponse,
    RestoreTableRequest,
    RestoreTableResponse,
    TableExistsRequest,
    TableExistsResponse,
    UpdateTableRequest,
    UpdateTableResponse,
    UpdateTableSchemaMetadataRequest,
    UpdateTableSchemaMetadataResponse,
    UpdateTableTagRequest,
    UpdateTableTagResponse,
)
from lance_namespace.errors import ErrorCode, LanceNamespaceError
from pydantic import BaseModel, ValidationError

from . import local_txn, txn_store
from .capabilities import FTS_PARAMS, VECTOR_BUILD_PARAMS, BackendCapabilities
from .errors import error_from_code

ModelT = TypeVar("ModelT", bound=BaseModel)
ProgressCallback = Callable[[dict[str, Any]], None]

REST_ONLY_OPTIONS: tuple[str, ...] = ("api_key", "auth_token", "headers", "timeout", "max_retries")
# DirectoryNamespace properties we pass through as they are.
DIRECTORY_OPTIONS: tuple[str, ...] = ("manifest_enabled", "dir_listing_enabled")

VECTOR_INDEX_TYPES: tuple[str, ...] = (
    "IVF_FLAT",
    "IVF_PQ",
    "IVF_SQ",
    "IVF_RQ",
    "IVF_HNSW_FLAT",
    "IVF_HNSW_PQ",
    "IVF_HNSW_SQ",
)
SCALAR_INDEX_TYPES: tuple[str, ...] = (
    "BTREE",
    "BITMAP",
    "LABEL_LIST",
    "FTS",
    "INVERTED",
    "NGRAM",
    "ZONEMAP",
    "BLOOMFILTER",
)
FTS_INDEX_TYPES = frozenset({"FTS", "INVERTED"})
DISTANCE_TYPES: dict[str, str] = {
    "l2": "l2",
    "euclidean": "l2",
    "cosine": "cosine",
    "dot": "dot",
    "hamming": "hamming",
}
# Which vector build parameter applies to which index type.
_PARAM_APPLIES: dict[str, Callable[[str], bool]] = {
    "num_partitions": lambda t: t.startswith("IVF_"),
    "target_partition_size": lambda t: t.startswith("IVF_"),
    "sample_rate": lambda t: t.startswith("IVF_"),
    "max_iterations": lambda t: t.startswith("IVF_"),
    "num_sub_vectors": lambda t: t.endswith("_PQ"),
    "num_bits": lambda t: t.endswith(("_PQ", "_SQ", "_RQ")),
    "m": lambda t: "_HNSW_" in t,
    "ef_construction": lambda t: "_HNSW_" in t,
}
# Request field -> keyword understood by LanceDataset.create_index (verified on pylance 14:
# ``max_iters`` lands in the index's runtime hints, ``max_iterations`` is silently ignored).
_VECTOR_KWARGS: dict[str, str] = {
    "num_bits": "num_bits",
    "sample_rate": "sample_rate",
    "max_iterations": "max_iters",
    "m": "m",
    "ef_construction": "ef_construction",
}
HONOURED_INDEX_PARAMS: frozenset[str] = frozenset(
    (*VECTOR_BUILD_PARAMS, *FTS_PARAMS, "distance_type")
)
_HISTORY_LIMIT = 50

_SESSIONS: dict[str, lance.Session] = {}
_SESSIONS_GUARD = threading.Lock()


def _memory_session(root: str) -> lance.Session:
    """memory:// data only exists inside one lance Session: share one per root in-process."""
    with _SESSIONS_GUARD:
        if root not in _SESSIONS:
            _SESSIONS[root] = lance.Session()
        return _SESSIONS[root]


def _err(code: ErrorCode, message: str, *, detail: str | None = None) -> LanceNamespaceError:
    return error_from_code(int(code), message, detail=detail)


def _invalid(message: str) -> LanceNamespaceError:
    return _err(ErrorCode.INVALID_INPUT, message)


_SERDE_HINTS = ("missing field", "unknown field", "invalid type", "invalid value")


@contextlib.contextmanager
def translate_errors(operation: str) -> Iterator[None]:
    """Turn whatever pylance raises into a ``LanceNamespaceError`` with our attributes."""
    try:
        yield
    except LanceNamespaceError as e:
        if hasattr(e, "server_message"):
            raise
        raise error_from_code(int(e.code), str(e), raw=e) from e
    except NotImplementedError as e:
        raise _err(ErrorCode.UNSUPPORTED, f"Not supported: {operation} ({e})") from e
    except (ValueError, TypeError, KeyError, ValidationError) as e:
        raise _invalid(f"{operation}: {e}") from e
    except Exception as e:  # pylance raises bare Exception for malformed requests, etc.
        msg = str(e) or type(e).__name__
        code = ErrorCode.INVALID_INPUT if msg.startswith(_SERDE_HINTS) else ErrorCode.INTERNAL
        raise _err(code, f"{operation}: {msg}") from e


def _coerce(model: type[ModelT], request: Any) -> ModelT:
    if isinstance(request, model):
        return request
    if isinstance(request, Mapping):
        try:
            out = model.from_dict(dict(request))  # type: ignore[attr-defined]
        except ValidationError as e:
            raise _invalid(f"invalid {model.__name__}: {e}") from e
        assert out is not None
        return out
    if isinstance(request, BaseModel):
        return _coerce(model, request.model_dump(by_alias=True))
    raise _invalid(f"expected a {model.__name__} or a dict, got {type(request).__name__}")


def _ids(request_id: Sequence[str] | None, what: str = "table") -> list[str]:
    parts = list(request_id or [])
    if not parts or any(not isinstance(p, str) or not p for p in parts):
        raise _invalid(f"a {what} id must be a non-empty list of non-empty strings, got {parts!r}")
    return parts


def to_ipc_bytes(data: Any) -> bytes:
    """A pyarrow Table / RecordBatch / RecordBatchReader (or IPC bytes) as an Arrow IPC stream."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if isinstance(data, pa.RecordBatchReader):
        data = data.read_all()
    if not isinstance(data, pa.Table):
        raise _invalid(f"table data must be Arrow IPC bytes or a pyarrow Table, not {type(data)}")
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, data.schema) as writer:
        writer.write_table(data)
    return sink.getvalue()


def normalise_target(target: str | os.PathLike[str]) -> tuple[str, str, Path | None]:
    """``(root URI, root for DirectoryNamespace, local directory or None)`` for a target.

    A path (relative, ``~``) or ``file://`` URI becomes an absolute ``file://`` URI (percent
    encoded); pylance gets the plain path, which it encodes itself. Anything else
    (``memory://``, ``s3://``, ...) is passed through without a trailing slash.
    """
    raw = os.fspath(target).strip()
    if not raw:
        raise _invalid("the local backend needs a directory or URI")
    parsed = urlparse(raw)
    scheme = parsed.scheme.lower()
    is_drive = len(scheme) == 1 and os.name == "nt"
    if scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise _invalid(f"file URIs with a host are not supported: {raw}")
        path = Path(unquote(parsed.path))
    elif scheme == "" or is_drive:
        path = Path(raw).expanduser()
    else:
        root = raw.rstrip("/")
        if root.endswith(":/"):  # "memory://" -> keep the double slash
            root += "/"
        return root, root, None
    path = Path(os.path.abspath(path))
    if path.exists() and not path.is_dir():
        raise _invalid(f"not a directory: {path}")
    return path.as_uri(), str(path), path


class LocalNamespace(LanceNamespace):
    """A Lance directory namespace (pylance) with the console's fixes. See module docstring."""

    def __init__(
        self,
        target: str | os.PathLike[str],
        *,
        storage_options: Mapping[str, Any] | None = None,
        delimiter: str = "$",
        **options: Any,
    ):
        rest_only = sorted(k for k in options if k in REST_ONLY_OPTIONS)
        if rest_only:
            raise _invalid(
                f"option(s) {', '.join(rest_only)} only apply to REST namespaces "
                "(http:// or https:// targets); the local backend reads the directory directly"
            )
        so: dict[str, str] = {str(k): str(v) for k, v in (storage_options or {}).items()}
        dir_props: dict[str, str] = {}
        unknown = []
        for key, value in options.items():
            if key.startswith("storage."):
                so[key[len("storage.") :]] = str(value)
            elif key in DIRECTORY_OPTIONS:
                dir_props[key] = str(value).lower() if isinstance(value, bool) else str(value)
            else:
                unknown.append(key)
        if unknown:
            raise _invalid(
                f"unknown option(s) for the local backend: {', '.join(sorted(unknown))}; "
                "accepted: storage_options, storage.<key>, delimiter, "
                + ", ".join(DIRECTORY_OPTIONS)
            )
        if not isinstance(delimiter, str) or not delimiter:
            raise _invalid("delimiter must be a non-empty string")

        self.root, self._dir_root, self.local_path = normalise_target(target)
        self.storage_options: dict[str, str] = so
        self.delimiter = delimiter
        self._session = _memory_session(self.root) if self.root.startswith("memory:") else None
        props = {f"storage.{k}": v for k, v in so.items()}
        props.update(dir_props)
        with translate_errors("connect"):
            self._inner = DirectoryNamespace(session=self._session, root=self._dir_root, **props)
        self.txn_store = txn_store.open_store(self.root, so)
        self._recover_batches()

    def _recover_batches(self) -> None:
        """Roll back / finish batch commits a dead process left behind (cheap when none)."""
        batch = _batch_module()
        recover = getattr(batch, "recover", None)
        if recover is None:
            return
        try:
            recover(self)
        except Exception as exc:  # browsing must still work; writes recover again first
            warnings.warn(
                f"could not recover interrupted batch commits under {self.root}: {exc}",
                RuntimeWarning,
                stacklevel=3,
            )

    # -- identity -------------------------------------------------------------------------
    def namespace_id(self) -> str:
        return f"LocalNamespace {{ root: {self.root!r} }}"

    def __repr__(self) -> str:
        return f"LocalNamespace({self.root!r})"

    def capabilities(self) -> BackendCapabilities:
        return BackendCapabilities(
            kind="local",
            honoured_index_params=HONOURED_INDEX_PARAMS,
            progress_events=True,
            batch_commit=_batch_module_available(),
            wire_log=False,
            notes=(
                "index builds run through the Lance dataset API (pylance's namespace ignores "
                "vector build parameters)",
                "max_iterations is applied as lance's max_iters (IVF and PQ training)",
                "transaction statuses are reported upper-case (SUCCEEDED), like pylance",
            ),
        )

    def format_id(self, parts: Sequence[str]) -> str:
        return self.delimiter.join(parts)

    # -- helpers used by the UI and the batch-commit module -------------------------------
    def table_location(self, table_id: Sequence[str]) -> str:
        desc = self.describe_table(DescribeTableRequest(id=_ids(table_id)))
        if not desc.location:
            raise _err(
                ErrorCode.INVALID_TABLE_STATE, f"table {self.format_id(table_id)} has no location"
            )
        return desc.location

    def open_dataset(
        self, table_id: Sequence[str], version: int | str | None = None
    ) -> lance.LanceDataset:
        """The table as a ``lance.LanceDataset`` (latest, or ``version``: number or tag)."""
        table_id = _ids(table_id)
        location = self.table_location(table_id)
        try:
            return self._lance_dataset(location, version)
        except (ValueError, OSError) as e:
            if "not found" not in str(e).lower():
                raise _err(
                    ErrorCode.INTERNAL, f"cannot open {self.format_id(table_id)}: {e}"
                ) from e
            if version is not None and self._dataset_readable(location):
                raise _err(
                    ErrorCode.TABLE_VERSION_NOT_FOUND,
                    f"table {self.format_id(table_id)} has no version {version!r}",
                ) from e
            raise _err(
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

    # -- generic delegation ----------------------------------------------------------------
    def _call(self, name: str, request: Any, *args: Any) -> Any:
        with translate_errors(name):
            return getattr(self._inner, name)(request, *args)

    @contextlib.contextmanager
    def _write(self, name: str, *ids: Sequence[str] | None) -> Iterator[None]:
        tables = [list(i) for i in ids if i]
        with local_txn.write_guard(self, tables), translate_errors(name):
            yield

    def _fix_location(self, location: str | None) -> str | None:
        # pylance answers plain paths for some root-level tables and file:// URIs for others.
        if location and self.local_path is not None and location.startswith("/"):
            return Path(location).as_uri()
        return location

    def _require_parent_namespace(self, table_id: list[str]) -> None:
        if len(table_id) > 1:
            self.namespace_exists(NamespaceExistsRequest(id=table_id[:-1]))

    # -- namespaces ------------------------------------------------------------------------
    def list_namespaces(self, request: ListNamespacesRequest) -> ListNamespacesResponse:
        return self._call("list_namespaces", _coerce(ListNamespacesRequest, request))

    def describe_namespace(self, request: DescribeNamespaceRequest) -> DescribeNamespaceResponse:
        return self._call("describe_namespace", _coerce(DescribeNamespaceRequest, request))

    def create_namespace(self, request: CreateNamespaceRequest) -> CreateNamespaceResponse:
        req = _coerce(CreateNamespaceRequest, request)
        ns_id = _ids(req.id, "namespace")
        with self._write("create_namespace", ns_id):
            return self._inner.create_namespace(req)

    def drop_namespace(self, request: DropNamespaceRequest) -> DropNamespaceResponse:
        req = _coerce(DropNamespaceRequest, request)
        ns_id = _ids(req.id, "namespace")
        with self._write("drop_namespace", ns_id):
            return self._inner.drop_namespace(req)

    def namespace_exists(self, request: NamespaceExistsRequest) -> NamespaceExistsResponse:
        return self._call("namespace_exists", _coerce(NamespaceExistsRequest, request))

    # -- tables ----------------------------------------------------------------------------
    def list_tables(self, request: ListTablesRequest) -> ListTablesResponse:
        return self._call("list_tables", _coerce(ListTablesRequest, request))

    def list_all_tables(self, request: ListTablesRequest) -> ListTablesResponse:
        """Every table under ``request.id`` (default: the root), recursively, as full ids
        joined with the delimiter. (pylance 14 only lists root-level tables.)"""
        req = _coerce(ListTablesRequest, request)
        found: list[str] = []
        pending = [list(req.id or [])]
        while pending:
            ns_id = pending.pop()
            tables = self._list_pages(
                "list_tables",
                lambda token, ns_id=ns_id: ListTablesRequest(
                    id=ns_id, page_token=token, include_declared=req.include_declared
                ),
                "tables",
            )
            found.extend(self.format_id([*ns_id, t]) for t in tables)
            children = self._list_pages(
                "list_namespaces",
                lambda token, ns_id=ns_id: ListNamespacesRequest(id=ns_id, page_token=token),
                "namespaces",
            )
            pending.extend([*ns_id, c] for c in children)
        found.sort()
        if req.limit is not None and req.limit >= 0:
            found = found[: req.limit]
        return ListTablesResponse(tables=found)

    def _list_pages(self, name: str, make: Callable[[str | None], Any], field: str) -> list[str]:
        out: list[str] = []
        token: str | None = None
        for _ in range(10_000):
            resp = self._call(name, make(token))
            out.extend(getattr(resp, field) or [])
            token = resp.page_token
            if not token:
                break
        return out

    def describe_table(self, request: DescribeTableRequest) -> DescribeTableResponse:
        resp = self._call("describe_table", _coerce(DescribeTableRequest, request))
        resp.location = self._fix_location(resp.location)
        resp.table_uri = self._fix_location(resp.table_uri)
        return resp

    def table_exists(self, request: TableExistsRequest) -> TableExistsResponse:
        return self._call("table_exists", _coerce(TableExistsRequest, request))

    def create_table(self, request: CreateTableRequest, request_data: Any) -> CreateTableResponse:
        req = _coerce(CreateTableRequest, request)
        table_id = _ids(req.id)
        data = to_ipc_bytes(request_data)
        self._require_parent_namespace(table_id)
        with self._write("create_table", table_id):
            resp = self._inner.create_table(req, data)
        resp.location = self._fix_location(resp.location)
        return resp

    def declare_table(self, request: DeclareTableRequest) -> DeclareTableResponse:
        req = _coerce(DeclareTableRequest, request)
        table_id = _ids(req.id)
        self._require_parent_namespace(table_id)
        with self._write("declare_table", table_id):
            resp = self._inner.declare_table(req)
        resp.location = self._fix_location(resp.location)
        return resp

    def register_table(self, request: RegisterTableRequest) -> RegisterTableResponse:
        req = _coerce(RegisterTableRequest, request)
        table_id = _ids(req.id)
        self._require_parent_namespace(table_id)
        with self._write("register_table", table_id):
            return self._inner.register_table(req)

    def deregister_table(self, request: DeregisterTableRequest) -> DeregisterTableResponse:
        req = _coerce(DeregisterTableRequest, request)
        with self._write("deregister_table", _ids(req.id)):
            return self._inner.deregister_table(req)

    def drop_table(self, request: DropTableRequest) -> DropTableResponse:
        req = _coerce(DropTableRequest, request)
        with self._write("drop_table", _ids(req.id)):
            return self._inner.drop_table(req)

    def rename_table(self, request: RenameTableRequest) -> RenameTableResponse:
        req = _coerce(RenameTableRequest, request)
        with self._write("rename_table", _ids(req.id)):
            return self._inner.rename_table(req)

    def restore_table(self, request: RestoreTableRequest) -> RestoreTableResponse:
        req = _coerce(RestoreTableRequest, request)
        with self._write("restore_table", _ids(req.id)):
            return self._inner.restore_table(req)

    def count_table_rows(self, request: CountTableRowsRequest) -> CountTableRowsResponse:
        return self._call("count_table_rows", _coerce(CountTableRowsRequest, request))

    def get_table_stats(self, request: GetTableStatsRequest) -> GetTableStatsResponse:
        return self._call("get_table_stats", _coerce(GetTableStatsRequest, request))

    def query_table(self, request: QueryTableRequest) -> QueryTableResponse:
        return self._call("query_table", _coerce(QueryTableRequest, request))

    def explain_table_query_plan(self, request: ExplainTableQueryPlanRequest) -> str:
        return self._call(
            "explain_table_query_plan", _coerce(ExplainTableQueryPlanRequest, request)
        )

    def analyze_table_query_plan(self, request: AnalyzeTableQueryPlanRequest) -> str:
        return self._call(
            "analyze_table_query_plan", _coerce(AnalyzeTableQueryPlanRequest, request)
        )

    # -- data writes ------------------------------------------------------------------------
    def insert_into_table(
        self, request: InsertIntoTableRequest, request_data: Any
    ) -> InsertIntoTableResponse:
        req = _coerce(InsertIntoTableRequest, request)
        with self._write("insert_into_table", _ids(req.id)):
            return self._inner.insert_into_table(req, to_ipc_bytes(request_data))

    def merge_insert_into_table(
        self, request: MergeInsertIntoTableRequest, request_data: Any
    ) -> MergeInsertIntoTableResponse:
        req = _coerce(MergeInsertIntoTableRequest, request)
        with self._write("merge_insert_into_table", _ids(req.id)):
            return self._inner.merge_insert_into_table(req, to_ipc_bytes(request_data))

    def update_table(self, request: UpdateTableRequest) -> UpdateTableResponse:
        req = _coerce(UpdateTableRequest, request)
        with self._write("update_table", _ids(req.id)):
            return self._inner.update_table(req)

    def delete_from_table(self, request: DeleteFromTableRequest) -> DeleteFromTableResponse:
        req = _coerce(DeleteFromTableRequest, request)
        with self._write("delete_from_table", _ids(req.id)):
            return self._inner.delete_from_table(req)

    def update_table_schema_metadata(
        self, request: UpdateTableSchemaMetadataRequest
    ) -> UpdateTableSchemaMetadataResponse:
        req = _coerce(UpdateTableSchemaMetadataRequest, request)
        with self._write("update_table_schema_metadata", _ids(req.id)):
            return self._inner.update_table_schema_metadata(req)

    def alter_table_add_columns(
        self, request: AlterTableAddColumnsRequest
    ) -> AlterTableAddColumnsResponse:
        req = _coerce(AlterTableAddColumnsRequest, request)
        with self._write("alter_table_add_columns", _ids(req.id)):
            return self._inner.alter_table_add_columns(req)

    def alter_table_alter_columns(
        self, request: AlterTableAlterColumnsRequest
    ) -> AlterTableAlterColumnsResponse:
        req = _coerce(AlterTableAlterColumnsRequest, request)
        with self._write("alter_table_alter_columns", _ids(req.id)):
            return self._inner.alter_table_alter_columns(req)

    def alter_table_drop_columns(
        self, request: AlterTableDropColumnsRequest
    ) -> AlterTableDropColumnsResponse:
        req = _coerce(AlterTableDropColumnsRequest, request)
        with self._write("alter_table_drop_columns", _ids(req.id)):
            return self._inner.alter_table_drop_columns(req)

    def alter_table_backfill_columns(
        self, request: AlterTableBackfillColumnsRequest
    ) -> AlterTableBackfillColumnsResponse:
        req = _coerce(AlterTableBackfillColumnsRequest, request)
        with self._write("alter_table_backfill_columns", _ids(req.id)):
            return self._inner.alter_table_backfill_columns(req)

    def create_materialized_view(
        self, request: CreateMaterializedViewRequest
    ) -> CreateMaterializedViewResponse:
        req = _coerce(CreateMaterializedViewRequest, request)
        with self._write("create_materialized_view", req.id):
            return self._inner.create_materialized_view(req)

    def refresh_materialized_view(
        self, request: RefreshMaterializedViewRequest
    ) -> RefreshMaterializedViewResponse:
        req = _coerce(RefreshMaterializedViewRequest, request)
        with self._write("refresh_materialized_view", req.id):
            return self._inner.refresh_materialized_view(req)

    # -- tags and branches -------------------------------------------------------------------
    def list_table_tags(self, request: ListTableTagsRequest) -> ListTableTagsResponse:
        return self._call("list_table_tags", _coerce(ListTableTagsRequest, request))

    def get_table_tag_version(
        self, request: GetTableTagVersionRequest
    ) -> GetTableTagVersionResponse:
        return self._call("get_table_tag_version", _coerce(GetTableTagVersionRequest, request))

    def create_table_tag(self, request: CreateTableTagRequest) -> CreateTableTagResponse:
        req = _coerce(CreateTableTagRequest, request)
        with self._write("create_table_tag", _ids(req.id)):
            return self._inner.create_table_tag(req)

    def delete_table_tag(self, request: DeleteTableTagRequest) -> DeleteTableTagResponse:
        req = _coerce(DeleteTableTagRequest, request)
        with self._write("delete_table_tag", _ids(req.id)):
            return self._inner.delete_table_tag(req)

    def update_table_tag(self, request: UpdateTableTagRequest) -> UpdateTableTagResponse:
        req = _coerce(UpdateTableTagRequest, request)
        with self._write("update_table_tag", _ids(req.id)):
            return self._inner.update_table_tag(req)

    def create_table_branch(self, request: CreateTableBranchRequest) -> CreateTableBranchResponse:
        req = _coerce(CreateTableBranchRequest, request)
        with self._write("create_table_branch", _ids(req.id)):
            return self._inner.create_table_branch(req)

    def list_table_branches(self, request: ListTableBranchesRequest) -> ListTableBranchesResponse:
        return self._call("list_table_branches", _coerce(ListTableBranchesRequest, request))

    def delete_table_branch(self, request: DeleteTableBranchRequest) -> DeleteTableBranchResponse:
        req = _coerce(DeleteTableBranchRequest, request)
        with self._write("delete_table_branch", _ids(req.id)):
            return self._inner.delete_table_branch(req)

    # -- versions ----------------------------------------------------------------------------
    def list_table_versions(self, request: ListTableVersionsRequest) -> ListTableVersionsResponse:
        """Versions, ascending (or descending), paged by ``limit`` / ``page_token``.

        pylance 14 honours ``limit`` but never returns a ``page_token`` (the listing silently
        ends after the first page), so pages are cut here. Tokens are ``v<version>``: the
        first version of the next page, which stays valid when versions are deleted.
        """
        req = _coerce(ListTableVersionsRequest, request)
        if req.limit is None and not req.page_token:
            resp = self._call("list_table_versions", req)
            if not req.descending:
                resp.versions.sort(key=lambda v: v.version)
            return resp
        if req.limit is not None and req.limit < 1:
            raise _invalid(f"limit must be at least 1, got {req.limit}")
        start_at: int | None = None
        if req.page_token:
            token = req.page_token
            if not (token.startswith("v") and token[1:].isdigit()):
                raise _invalid(f"invalid page_token {token!r} for list_table_versions")
            start_at = int(token[1:])
        full = self._call(
            "list_table_versions", req.model_copy(update={"limit": None, "page_token": None})
        )
        versions = sorted(full.versions, key=lambda v: v.version, reverse=bool(req.descending))
        if start_at is not None:
            versions = [
                v
                for v in versions
                if (v.version <= start_at if req.descending else v.version >= start_at)
            ]
        limit = req.limit if req.limit is not None else len(versions)
        page, rest = versions[:limit], versions[limit:]
        return ListTableVersionsResponse(
            versions=page, page_token=f"v{rest[0].version}" if rest else None
        )

    def create_table_version(
        self, request: CreateTableVersionRequest | Mapping[str, Any]
    ) -> CreateTableVersionResponse:
        req = _coerce(CreateTableVersionRequest, request)
        table_id = _ids(req.id)
        with self._write("create_table_version", table_id):
            answer = self._inner.create_table_version(req.model_dump())
        return CreateTableVersionResponse.from_dict(answer)

    def describe_table_version(
        self, request: DescribeTableVersionRequest | Mapping[str, Any]
    ) -> DescribeTableVersionResponse:
        req = _coerce(DescribeTableVersionRequest, request)
        _ids(req.id)
        answer = self._call("describe_table_version", req.model_dump())
        return DescribeTableVersionResponse.from_dict(answer)

    def batch_delete_table_versions(
        self,
        request: BatchDeleteTableVersionsRequest | Mapping[str, Any],
        *,
        allow_latest: bool = False,
    ) -> BatchDeleteTableVersionsResponse:
        """Delete version records by ranges (start inclusive, end exclusive; ``end=-1``: to latest).

        Refuses ranges that are empty or inverted, and ranges covering the table's latest
        version unless ``allow_latest=True`` (deleting it silently rolls the table back to an
        older version, or leaves it unreadable when no version is left).
        """
        req = _coerce(BatchDeleteTableVersionsRequest, request)
        table_id = _ids(req.id)
        if not req.ranges:
            raise _invalid("no version ranges to delete")
        for r in req.ranges:
            if r.start_version < 0:
                raise _invalid(f"start_version must be >= 0, got {r.start_version}")
            if r.end_version < -1:
                raise _invalid(
                    f"end_version must be -1 (through the latest) or >= 1, got {r.end_version}"
                )
            if r.end_version != -1 and r.end_version <= r.start_version:
                raise _invalid(
                    f"empty or inverted version range [{r.start_version}, {r.end_version}): "
                    "the start is inclusive and the end exclusive, so the end must be greater"
                )
        with self._write("batch_delete_table_versions", table_id):
            versions = self._inner.list_table_versions(
                ListTableVersionsRequest(id=table_id, branch=req.branch)
            ).versions
            numbers = sorted(v.version for v in versions)
            latest = numbers[-1] if numbers else None
            covers_latest = latest is not None and any(
                r.start_version <= latest and (r.end_version == -1 or latest < r.end_version)
                for r in req.ranges
            )
            if covers_latest and not allow_latest:
                raise _invalid(
                    f"refusing to delete version {latest}, the latest version of table "
                    f"{self.format_id(table_id)}: the table would roll back to an older version "
                    "or become unreadable; delete up to an older version, or pass "
                    "allow_latest=True to do it anyway"
                )
            answer = self._inner.batch_delete_table_versions(req.model_dump())
        return BatchDeleteTableVersionsResponse.from_dict(answer)

    # -- batch commit ------------------------------------------------------------------------
    def batch_commit_tables(self, request: BatchCommitTablesRequest) -> BatchCommitTablesResponse:
        """All-or-none batch of DeclareTable / CreateTableVersion / DeleteTableVersions /
        DeregisterTable (``backend.batch``)."""
        batch = _batch_module()
        if batch is None:
            raise _err(
                ErrorCode.UNSUPPORTED, "batch commit on the local backend is not available yet"
            )
        return batch.commit_batch(self, _coerce(BatchCommitTablesRequest, request))

    # -- indexes -----------------------------------------------------------------------------
    def list_table_indices(self, request: ListTableIndicesRequest) -> ListTableIndicesResponse:
        return self._call("list_table_indices", _coerce(ListTableIndicesRequest, request))

    def describe_table_index_stats(
        self, request: DescribeTableIndexStatsRequest
    ) -> DescribeTableIndexStatsResponse:
        req = _coerce(DescribeTableIndexStatsRequest, request)
        resp = self._call("describe_table_index_stats", req)
        if resp.distance_type is None and req.index_name:
            resp.distance_type = self._index_distance_type(
                _ids(req.id), req.index_name, req.version, req.branch
            )
        return resp

    def _index_distance_type(
        self, table_id: list[str], name: str, version: int | None, branch: str | None
    ) -> str | None:
        listing = self.list_table_indices(
            ListTableIndicesRequest(id=table_id, version=version, branch=branch)
        )
        for idx in listing.indexes:
            if idx.index_name != name or not idx.index_details:
                continue
            try:
                details = json.loads(idx.index_details)
            except ValueError:
                return None
            metric = details.get("metric_type") if isinstance(details, dict) else None
            if isinstance(metric, str) and metric:
                return DISTANCE_TYPES.get(metric.lower(), metric.lower())
        return None

    def create_table_index(
        self, request: CreateTableIndexRequest, *, progress: ProgressCallback | None = None
    ) -> CreateTableIndexResponse:
        """Build an index through the Lance dataset API, honouring every build parameter.

        ``progress`` receives dicts ``{"event", "stage", "completed", "total", "unit",
        "fraction"}`` from Lance's build progress events (start/progress/complete per stage).
        """
        req = _coerce(CreateTableIndexRequest, request)
        return self._build_index(req, progress=progress, scalar_only=False)

    def create_table_scalar_index(
        self, request: CreateTableIndexRequest, *, progress: ProgressCallback | None = None
    ) -> CreateTableIndexResponse:
        req = _coerce(CreateTableIndexRequest, request)
        return self._build_index(req, progress=progress, scalar_only=True)

    def drop_table_index(self, request: DropTableIndexRequest) -> DropTableIndexResponse:
        req = _coerce(DropTableIndexRequest, request)
        with self._write("drop_table_index", _ids(req.id)):
            return self._inner.drop_table_index(req)

    def _build_index(
        self, req: CreateTableIndexRequest, *, progress: ProgressCallback | None, scalar_only: bool
    ) -> CreateTableIndexResponse:
        table_id = _ids(req.id)
        index_type = (req.index_type or "").strip().upper()
        if index_type not in VECTOR_INDEX_TYPES + SCALAR_INDEX_TYPES:
            raise _invalid(
                f"unknown index type {req.index_type!r}; supported: "
                + ", ".join(VECTOR_INDEX_TYPES + SCALAR_INDEX_TYPES)
            )
        is_vector = index_type in VECTOR_INDEX_TYPES
        if scalar_only and is_vector:
            raise _invalid(f"{index_type} is a vector index; use create_table_index for it")
        if req.branch:
            raise _err(
                ErrorCode.UNSUPPORTED,
                "index builds on branches are not supported by the local backend",
            )
        self._check_index_params(req, index_type)
        metric = None
        if req.distance_type is not None:
            metric = DISTANCE_TYPES.get(req.distance_type.strip().lower())
            if metric is None:
                raise _invalid(
                    f"unknown distance type {req.distance_type!r}; supported: l2, cosine, dot, hamming"
                )
            if not is_vector:
                raise _invalid(f"distance_type only applies to vector indexes, not {index_type}")

        with local_txn.write_guard(self, [table_id]):
            ds = self.open_dataset(table_id)
            field = _find_field(ds.schema, req.column)
            if field is None:
                raise _err(
                    ErrorCode.TABLE_COLUMN_NOT_FOUND,
                    f"column {req.column!r} not found in table {self.format_id(table_id)}; "
                    f"columns: {', '.join(ds.schema.names)}",
                )
            problem = index_type_problem(index_type, field.type)
            if problem:
                raise _invalid(f"cannot build {index_type} on column {req.column!r}: {problem}")
            name = req.name or f"{req.column}_idx"
            if any(i.name == name for i in ds.describe_indices()):
                raise _err(
                    ErrorCode.TABLE_INDEX_ALREADY_EXISTS,
                    f"index {name!r} already exists on table {self.format_id(table_id)}",
                )
            callback = _progress_adapter(progress)
            with translate_errors("create_table_index"):
                if is_vector:
                    kwargs: dict[str, Any] = {
                        "name": name,
                        "metric": metric or "l2",
                        "replace": False,
                        "num_partitions": req.num_partitions,
                        "num_sub_vectors": req.num_sub_vectors,
                        "target_partition_size": req.target_partition_size,
                        "storage_options": self.storage_options or None,
                        "progress_callback": callback,
                    }
                    for field_name, kw in _VECTOR_KWARGS.items():
                        value = getattr(req, field_name)
                        if value is not None:
                            kwargs[kw] = value
                    ds.create_index(req.column, index_type, **kwargs)
                    if req.num_partitions is not None:
                        _warn_if_partitions_reduced(ds, name, req.num_partitions)
                else:
                    fts = {p: getattr(req, p) for p in FTS_PARAMS if getattr(req, p) is not None}
                    ds.create_scalar_index(
                        req.column,
                        "INVERTED" if index_type == "FTS" else index_type,
                        name=name,
                        replace=False,
                        progress_callback=callback,
                        **fts,
                    )
            with translate_errors("create_table_index"):
                txn = ds.read_transaction(ds.version)
        return CreateTableIndexResponse(transaction_id=getattr(txn, "uuid", None))

    @staticmethod
    def _check_index_params(req: CreateTableIndexRequest, index_type: str) -> None:
        is_vector = index_type in VECTOR_INDEX_TYPES
        for param in VECTOR_BUILD_PARAMS:
            if getattr(req, param) is None:
                continue
            if not is_vector or not _PARAM_APPLIES[param](index_type):
                raise _invalid(f"{param} does not apply to {index_type} indexes")
        if index_type not in FTS_INDEX_TYPES:
            given = [p for p in FTS_PARAMS if getattr(req, p) is not None]
            if given:
                raise _invalid(f"{', '.join(given)} only apply to FTS indexes, not {index_type}")
        if req.num_partitions is not None and req.target_partition_size is not None:
            raise _invalid("give num_partitions or target_partition_size, not both")

    # -- transactions ------------------------------------------------------------------------
    def describe_transaction(
        self, request: DescribeTransactionRequest
    ) -> DescribeTransactionResponse:
        """A batch commit (``backend.batch``), another ``txn_store`` record, or pylance's
        per-table transaction (table id + transaction uuid or version). Statuses are
        reported upper-case."""
        req = _coerce(DescribeTransactionRequest, request)
        parts = _ids(req.id, "transaction")
        batch = _batch_module()
        describe_batch = getattr(batch, "describe_batch_transaction", None)
        if describe_batch is not None:
            answer = describe_batch(self, req)
            if answer is not None:
                return answer
        record = self.txn_store.get(txn_key(parts))
        if record is not None:
            return DescribeTransactionResponse(
                status=txn_store.normalize_status(record.get("status") or txn_store.SUCCEEDED),
                properties=_str_props(record.get("properties")),
            )
        base = self._describe_table_transaction(parts)
        base.status = txn_store.normalize_status(base.status)
        return base

    def _describe_table_transaction(self, parts: list[str]) -> DescribeTransactionResponse:
        if len(parts) < 2:
            raise _err(
                ErrorCode.TRANSACTION_NOT_FOUND,
                f"Transaction not found: {self.format_id(parts)} (local table transactions are "
                "addressed as table id + transaction uuid or version)",
            )
        return self._call("describe_transaction", DescribeTransactionRequest(id=parts))

    def alter_transaction(self, request: AlterTransactionRequest) -> AlterTransactionResponse:
        """Apply every action or none (pylance 14's Python wrapper drops them all).

        Every action is validated against the transaction's current state first: statuses
        (case-insensitive) must follow ``txn_store.ALLOWED_TRANSITIONS``; the properties
        Lance records (``RESERVED_TXN_PROPERTIES``) cannot be changed or removed; a Fail-mode
        set of an existing key raises ``ConcurrentModificationError``, a Fail-mode unset of a
        missing key ``InvalidInputError``; either way nothing is applied. Table transactions
        are then altered through pylance's core, which persists the change in
        ``<table>/_alter_transactions/<uuid>.json`` (where pylance's REST adapter keeps it
        too). Batch-commit ids go to ``backend.batch`` (its own rules); other ``txn_store``
        records are updated in the store.
        """
        req = _coerce(AlterTransactionRequest, request)
        parts = _ids(req.id, "transaction")
        batch = _batch_module()
        alter_batch = getattr(batch, "alter_batch_transaction", None)
        if alter_batch is not None:
            answer = alter_batch(self, req)
            if answer is not None:
                return answer
        actions = [_parse_action(i, a) for i, a in enumerate(req.actions)]
        key = txn_key(parts)
        if self.txn_store.get(key) is not None:
            return self._alter_record(key, actions)
        core = getattr(self._inner, "_inner", None)
        if core is None or not hasattr(core, "alter_transaction"):
            raise _err(ErrorCode.UNSUPPORTED, "this pylance build cannot alter transactions")
        with _alter_lock(self.root):
            current = self._describe_table_transaction(parts)
            status = txn_store.normalize_status(current.status)
            props = dict(current.properties or {})
            readonly = {k: props.pop(k) for k in RESERVED_TXN_PROPERTIES if k in props}
            wire: list[dict[str, Any]] = []
            for describe, kind, args in actions:
                before = (status, dict(props))
                status = _apply_action(kind, args, status, props, readonly, describe)
                if kind == "set_status" or (status, props) != before:
                    wire.append(_core_action(kind, args))
            if wire:
                with translate_errors("alter_transaction"):
                    core.alter_transaction({"id": parts, "actions": wire})
            after = self._describe_table_transaction(parts)
        return AlterTransactionResponse(
            status=txn_store.normalize_status(after.status), properties=after.properties
        )

    def _alter_record(
        self, key: str, actions: list[tuple[str, str, dict[str, Any]]]
    ) -> AlterTransactionResponse:
        def apply(rec: dict[str, Any] | None) -> dict[str, Any]:
            if rec is None:
                raise _err(ErrorCode.TRANSACTION_NOT_FOUND, f"Transaction not found: {key}")
            status = txn_store.normalize_status(rec.get("status") or txn_store.SUCCEEDED)
            props = _str_props(rec.get("properties")) or {}
            readonly = {k: props.pop(k) for k in rec.get("readonly_properties") or [] if k in props}
            for describe, kind, args in actions:
                status = _apply_action(kind, args, status, props, readonly, describe)
            history = list(rec.get("history") or [])[-(_HISTORY_LIMIT - 1) :]
            history.append({"at": int(time.time() * 1000), "actions": [a[0] for a in actions]})
            rec.update(status=status, properties={**readonly, **props}, history=history)
            return rec

        new = self.txn_store.update(key, apply)
        assert new is not None
        return AlterTransactionResponse(
            status=new["status"], properties=_str_props(new.get("properties"))
        )


# -- transaction helpers ---------------------------------------------------------------------
# Properties pylance derives from the commit itself; its core refuses to change them too.
RESERVED_TXN_PROPERTIES: tuple[str, ...] = ("uuid", "version", "read_version", "operation")
_ALTER_LOCKS: dict[str, threading.Lock] = {}


def _alter_lock(root: str) -> threading.Lock:
    with _SESSIONS_GUARD:
        return _ALTER_LOCKS.setdefault(root, threading.Lock())


def txn_key(parts: Sequence[str]) -> str:
    """The txn_store key of a transaction id (its parts joined with ``$``)."""
    return "$".join(parts)


def _str_props(props: Any) -> dict[str, str] | None:
    if props is None:
        return None
    return {str(k): str(v) for k, v in dict(props).items()}


def _core_action(kind: str, args: dict[str, Any]) -> dict[str, Any]:
    """One validated action in the spec's JSON shape (camelCase, PascalCase modes)."""
    if kind == "set_status":
        return {"setStatusAction": {"status": args["status"]}}
    if kind == "set_property":
        body = {"key": args["key"], "value": args["value"], "mode": args["mode"].capitalize()}
        return {"setPropertyAction": body}
    return {"unsetPropertyAction": {"key": args["key"], "mode": args["mode"].capitalize()}}


_SET_MODES = {"OVERWRITE", "FAIL", "SKIP"}
_UNSET_MODES = {"SKIP", "FAIL"}


def _mode(value: str | None, default: str, allowed: set[str], what: str) -> str:
    if value is None:
        return default
    mode = value.strip().replace("-", "_").upper()
    if mode not in allowed:
        raise _invalid(f"unknown {what} mode {value!r}; valid: {', '.join(sorted(allowed))}")
    return mode


def _parse_action(i: int, action: Any) -> tuple[str, str, dict[str, Any]]:
    """Validate one AlterTransactionAction up front: ``(description, kind, args)``."""
    given = [
        (kind, getattr(action, attr))
        for kind, attr in (
            ("set_status", "set_status_action"),
            ("set_property", "set_property_action"),
            ("unset_property", "unset_property_action"),
        )
        if getattr(action, attr, None) is not None
    ]
    if len(given) != 1:
        raise _invalid(
            f"action {i + 1}: exactly one of setStatusAction, setPropertyAction, unsetPropertyAction must be set"
        )
    kind, body = given[0]
    if kind == "set_status":
        if body.status is None:
            raise _invalid(f"action {i + 1}: setStatusAction needs a status")
        status = txn_store.normalize_status(body.status)
        return f"set status {status}", kind, {"status": status}
    if not body.key:
        raise _invalid(f"action {i + 1}: a property action needs a non-empty key")
    if kind == "set_property":
        if body.value is None:
            raise _invalid(
                f"action {i + 1}: setPropertyAction needs a value (use unsetPropertyAction to remove)"
            )
        mode = _mode(body.mode, "OVERWRITE", _SET_MODES, "set-property")
        return (
            f"set property {body.key} ({mode.lower()})",
            kind,
            {"key": body.key, "value": body.value, "mode": mode},
        )
    mode = _mode(body.mode, "SKIP", _UNSET_MODES, "unset-property")
    return f"unset property {body.key} ({mode.lower()})", kind, {"key": body.key, "mode": mode}


def _apply_action(
    kind: str,
    args: dict[str, Any],
    status: str,
    props: dict[str, str],
    readonly: Mapping[str, str],
    describe: str,
) -> str:
    if kind == "set_status":
        txn_store.check_transition(status, args["status"])
        return args["status"]
    key, mode = args["key"], args["mode"]
    if kind == "set_property":
        exists = key in props or key in readonly
        if exists and mode == "SKIP":
            return status
        if exists and mode == "FAIL":
            raise _err(
                ErrorCode.CONCURRENT_MODIFICATION,
                f"{describe}: property {key!r} already exists; nothing was changed",
            )
        if key in readonly:
            raise _invalid(
                f"{describe}: property {key!r} is recorded by Lance and cannot be changed"
            )
        props[key] = args["value"]
        return status
    if key in readonly:
        raise _invalid(f"{describe}: property {key!r} is recorded by Lance and cannot be removed")
    if key not in props:
        if mode == "FAIL":
            raise _invalid(f"{describe}: property {key!r} does not exist; nothing was changed")
        return status
    del props[key]
    return status


# -- index helpers --------------------------------------------------------------------------
def _find_field(schema: pa.Schema, column: str) -> pa.Field | None:
    """A top-level column, else a dot-separated path through struct fields."""
    if column in schema.names:
        return schema.field(column)
    fields: list[pa.Field] = list(schema)
    field = None
    for part in column.split("."):
        part = part.strip("`")
        field = next((f for f in fields if f.name == part), None)
        if field is None:
            return None
        fields = list(field.type) if pa.types.is_struct(field.type) else []
    return field


def _is_scalar_type(t: pa.DataType) -> bool:
    return not (
        pa.types.is_nested(t) or pa.types.is_dictionary(t) and pa.types.is_nested(t.value_type)
    )


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def index_type_problem(index_type: str, t: pa.DataType) -> str | None:
    """Why ``index_type`` cannot be built on a column of type ``t`` (``None``: it fits)."""
    index_type = index_type.upper()
    if index_type in VECTOR_INDEX_TYPES:
        inner = t
        if (pa.types.is_list(t) or pa.types.is_large_list(t)) and pa.types.is_fixed_size_list(
            t.value_type
        ):
            inner = t.value_type  # multivector
        if not pa.types.is_fixed_size_list(inner):
            return f"vector indexes need a fixed_size_list of floats, the column is {t}"
        vt = inner.value_type
        if not (pa.types.is_floating(vt) or pa.types.is_uint8(vt)):
            return f"vector indexes need float (or uint8) elements, the column is {t}"
        return None
    if index_type in ("BTREE", "BITMAP", "ZONEMAP", "BLOOMFILTER"):
        return (
            None
            if _is_scalar_type(t)
            else f"{index_type} needs a non-nested column, the column is {t}"
        )
    if index_type == "LABEL_LIST":
        if (pa.types.is_list(t) or pa.types.is_large_list(t)) and _is_scalar_type(t.value_type):
            return None
        return f"LABEL_LIST needs a list of scalar values, the column is {t}"
    if index_type in FTS_INDEX_TYPES:
        if _is_string(t):
            return None
        if (pa.types.is_list(t) or pa.types.is_large_list(t)) and _is_string(t.value_type):
            return None
        return f"FTS needs a string column (or a list of strings), the column is {t}"
    if index_type == "NGRAM":
        return None if _is_string(t) else f"NGRAM needs a string column, the column is {t}"
    return f"unknown index type {index_type}"


def _progress_adapter(progress: ProgressCallback | None) -> Callable[[Any], None] | None:
    if progress is None:
        return None

    def callback(event: Any) -> None:
        try:
            progress(
                {
                    "event": event.event,
                    "stage": event.stage,
                    "completed": event.completed,
                    "total": event.total,
                    "unit": event.unit,
                    "fraction": event.fraction,
                }
            )
        except Exception as exc:  # a broken progress display must not break the build
            warnings.warn(f"index progress callback failed: {exc!r}", RuntimeWarning, stacklevel=1)

    return callback


def _warn_if_partitions_reduced(ds: lance.LanceDataset, name: str, requested: int) -> None:
    """Lance trains fewer IVF partitions than asked when rows are scarce (PQ needs about
    ``2**num_bits`` rows per partition); say so instead of letting it pass silently."""
    try:
        segments = ds.stats.index_stats(name).get("indices") or []
        built = segments[0].get("num_partitions") if segments else None
    except Exception:  # stats are a courtesy here; the index itself was built
        return
    if isinstance(built, int) and built != requested:
        warnings.warn(
            f"index {name!r}: lance built {built} IVF partition(s) instead of {requested} "
            f"(the table has {ds.count_rows()} rows, too few to train {requested} partitions)",
            UserWarning,
            stacklevel=4,  # the caller of create_table_index
        )


def _batch_module_available() -> bool:
    return importlib.util.find_spec(f"{__package__}.batch") is not None


def _batch_module() -> types.ModuleType | None:
    """``backend.batch`` if it exists (written separately; optional for this module)."""
    try:
        return importlib.import_module(f"{__package__}.batch")
    except ModuleNotFoundError as e:
        if e.name != f"{__package__}.batch":
            raise
        return None


__all__ = [
    "DISTANCE_TYPES",
    "HONOURED_INDEX_PARAMS",
    "LocalNamespace",
    "SCALAR_INDEX_TYPES",
    "VECTOR_INDEX_TYPES",
    "index_type_problem",
    "normalise_target",
    "to_ipc_bytes",
    "translate_errors",
    "txn_key",
]
