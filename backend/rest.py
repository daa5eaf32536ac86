"""RestNamespaceClient: our own httpx client for the Lance REST Namespace specification.

Every operation takes the ``lance_namespace`` request model (or a dict, converted with
``Model.from_dict``) and returns its response model. Routes are described once, in
:data:`ROUTES` (operation -> HTTP method, path template, where the request goes, response
model, read-only or not), taken from ``lance_namespace_urllib3_client``'s generated API.

Wire conventions (see ``docs/ARCHITECTURE.md`` and the spec excerpts):

* the object id is joined with the delimiter and percent-encoded as one path segment; the root
  namespace is the delimiter itself (``/v1/namespace/%24/list``); ``?delimiter=`` is sent only
  when the delimiter is not ``$``;
* ``identity`` (connection options ``api_key`` / ``auth_token`` or the request's ``identity``)
  travels as ``x-api-key`` / ``Authorization: Bearer`` headers, never in the body; ``context``
  entries become headers (``header.<Name>`` -> ``<Name>``, other keys -> ``x-lance-ctx-<key>``),
  and response headers come back as ``response.context["header.<name>"]``;
* list routes are GET, and ListTableVersions / ListTableTags / ListTableBranches / DropTable /
  DropTableIndex are POST without a body (query parameters only);
* errors map through ``backend.errors.error_from_code``; read-only operations are retried with
  exponential backoff on connection errors, 429 and 503 (honouring ``Retry-After``), writes
  never are.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import lance_namespace as ln
from lance_namespace import LanceNamespace
from lance_namespace.errors import InternalError, InvalidInputError, LanceNamespaceError
from pydantic import BaseModel, ValidationError

from .capabilities import BackendCapabilities
from .errors import (
    NamespaceConnectionError,
    NamespaceTimeoutError,
    attach_error_details,
    error_from_code,
)
from .wirelog import DEFAULT_MAX_ENTRIES, WireLog, redact_url

DEFAULT_DELIMITER = "$"
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RETRIES = 3
DEFAULT_BACKOFF = 0.25  # seconds before the first retry; doubles each time
DEFAULT_RETRY_CAP = 10.0  # upper bound for one backoff or Retry-After wait
USER_AGENT = "lance-namespace-console/0.1 (httpx)"

ARROW_STREAM = "application/vnd.apache.arrow.stream"
ARROW_FILE = "application/vnd.apache.arrow.file"
JSON_TYPE = "application/json"

# Body kinds.
JSON = "json"  # the request model as a JSON object
NONE = "none"  # no body: everything but the id goes to the query string
ARROW = "arrow"  # Arrow IPC stream bytes; request fields go to the query string
METADATA = "metadata"  # the request's ``metadata`` dict is the whole body

# Response kinds besides a model class.
RESP_ARROW = "arrow"  # raw Arrow IPC file bytes -> QueryTableResponse(data=...)
RESP_TEXT = "text"  # a plan as a JSON string or text/plain -> str
RESP_COUNT = "count"  # a bare JSON integer (or {"count": n}) -> CountTableRowsResponse


@dataclass(frozen=True)
class Route:
    """How one operation travels over HTTP."""

    op: str
    method: str
    path: str  # template with {id} and possibly {index_name}
    body: str  # JSON | NONE | ARROW | METADATA
    request: type[BaseModel]
    response: type[BaseModel] | None  # None: plain text (query plans)
    read_only: bool
    query: tuple[str, ...] = ()  # request fields sent as query parameters
    response_kind: str | None = None  # RESP_ARROW | RESP_TEXT | RESP_COUNT
    nested_requests: bool = False  # body embeds request models (strip identity/context there)

    @property
    def has_id(self) -> bool:
        return "{id}" in self.path


_PAGING = ("page_token", "limit")


def _r(
    op: str,
    method: str,
    path: str,
    body: str,
    request: type[BaseModel],
    response: type[BaseModel] | None,
    read_only: bool,
    query: tuple[str, ...] = (),
    **kw: Any,
) -> Route:
    return Route(op, method, path, body, request, response, read_only, query, **kw)


R, W = True, False
# The whole route table of lance_namespace_urllib3_client 0.13 (54 operations).
ROUTES: dict[str, Route] = {
    r.op: r
    for r in (
        # Namespaces
        _r("list_namespaces", "GET", "/v1/namespace/{id}/list", NONE,
           ln.ListNamespacesRequest, ln.ListNamespacesResponse, R, _PAGING),
        _r("create_namespace", "POST", "/v1/namespace/{id}/create", JSON,
           ln.CreateNamespaceRequest, ln.CreateNamespaceResponse, W),
        _r("describe_namespace", "POST", "/v1/namespace/{id}/describe", JSON,
           ln.DescribeNamespaceRequest, ln.DescribeNamespaceResponse, R),
        _r("drop_namespace", "POST", "/v1/namespace/{id}/drop", JSON,
           ln.DropNamespaceRequest, ln.DropNamespaceResponse, W),
        _r("namespace_exists", "POST", "/v1/namespace/{id}/exists", JSON,
           ln.NamespaceExistsRequest, ln.NamespaceExistsResponse, R),
        _r("list_tables", "GET", "/v1/namespace/{id}/table/list", NONE,
           ln.ListTablesRequest, ln.ListTablesResponse, R, (*_PAGING, "include_declared")),
        _r("list_all_tables", "GET", "/v1/table", NONE,
           ln.ListTablesRequest, ln.ListTablesResponse, R, (*_PAGING, "include_declared")),
        # Table metadata
        _r("register_table", "POST", "/v1/table/{id}/register", JSON,
           ln.RegisterTableRequest, ln.RegisterTableResponse, W),
        _r("describe_table", "POST", "/v1/table/{id}/describe", JSON,
           ln.DescribeTableRequest, ln.DescribeTableResponse, R,
           ("with_table_uri", "load_detailed_metadata", "check_declared")),
        _r("table_exists", "POST", "/v1/table/{id}/exists", JSON,
           ln.TableExistsRequest, ln.TableExistsResponse, R),
        _r("drop_table", "POST", "/v1/table/{id}/drop", NONE,
           ln.DropTableRequest, ln.DropTableResponse, W),
        _r("deregister_table", "POST", "/v1/table/{id}/deregister", JSON,
           ln.DeregisterTableRequest, ln.DeregisterTableResponse, W),
        _r("rename_table", "POST", "/v1/table/{id}/rename", JSON,
           ln.RenameTableRequest, ln.RenameTableResponse, W),
        _r("restore_table", "POST", "/v1/table/{id}/restore", JSON,
           ln.RestoreTableRequest, ln.RestoreTableResponse, W),
        _r("list_table_versions", "POST", "/v1/table/{id}/version/list", NONE,
           ln.ListTableVersionsRequest, ln.ListTableVersionsResponse, R,
           ("branch", *_PAGING, "descending")),
        _r("create_table_version", "POST", "/v1/table/{id}/version/create", JSON,
           ln.CreateTableVersionRequest, ln.CreateTableVersionResponse, W),
        _r("describe_table_version", "POST", "/v1/table/{id}/version/describe", JSON,
           ln.DescribeTableVersionRequest, ln.DescribeTableVersionResponse, R),
        _r("batch_delete_table_versions", "POST", "/v1/table/{id}/version/delete", JSON,
           ln.BatchDeleteTableVersionsRequest, ln.BatchDeleteTableVersionsResponse, W),
        _r("batch_create_table_versions", "POST", "/v1/table/version/batch-create", JSON,
           ln.BatchCreateTableVersionsRequest, ln.BatchCreateTableVersionsResponse, W,
           nested_requests=True),
        _r("batch_commit_tables", "POST", "/v1/table/batch-commit", JSON,
           ln.BatchCommitTablesRequest, ln.BatchCommitTablesResponse, W,
           nested_requests=True),
        _r("get_table_stats", "POST", "/v1/table/{id}/stats", JSON,
           ln.GetTableStatsRequest, ln.GetTableStatsResponse, R),
        _r("update_table_schema_metadata", "POST", "/v1/table/{id}/schema_metadata/update",
           METADATA, ln.UpdateTableSchemaMetadataRequest, ln.UpdateTableSchemaMetadataResponse,
           W, ("branch",)),
        _r("update_field_metadata", "POST", "/v1/table/{id}/update_field_metadata", JSON,
           ln.UpdateFieldMetadataRequest, ln.UpdateFieldMetadataResponse, W),
        # Table data
        _r("create_table", "POST", "/v1/table/{id}/create", ARROW,
           ln.CreateTableRequest, ln.CreateTableResponse, W,
           ("mode", "properties", "storage_options")),
        _r("declare_table", "POST", "/v1/table/{id}/declare", JSON,
           ln.DeclareTableRequest, ln.DeclareTableResponse, W),
        _r("insert_into_table", "POST", "/v1/table/{id}/insert", ARROW,
           ln.InsertIntoTableRequest, ln.InsertIntoTableResponse, W, ("branch", "mode")),
        _r("merge_insert_into_table", "POST", "/v1/table/{id}/merge_insert", ARROW,
           ln.MergeInsertIntoTableRequest, ln.MergeInsertIntoTableResponse, W,
           ("branch", "on", "when_matched_update_all", "when_matched_update_all_filt",
            "when_not_matched_insert_all", "when_not_matched_by_source_delete",
            "when_not_matched_by_source_delete_filt", "timeout", "use_index")),
        _r("update_table", "POST", "/v1/table/{id}/update", JSON,
           ln.UpdateTableRequest, ln.UpdateTableResponse, W),
        _r("delete_from_table", "POST", "/v1/table/{id}/delete", JSON,
           ln.DeleteFromTableRequest, ln.DeleteFromTableResponse, W),
        _r("query_table", "POST", "/v1/table/{id}/query", JSON,
           ln.QueryTableRequest, ln.QueryTableResponse, R, response_kind=RESP_ARROW),
        _r("count_table_rows", "POST", "/v1/table/{id}/count_rows", JSON,
           ln.CountTableRowsRequest, ln.CountTableRowsResponse, R, response_kind=RESP_COUNT),
        _r("explain_table_query_plan", "POST", "/v1/table/{id}/explain_plan", JSON,
           ln.ExplainTableQueryPlanRequest, None, R,
           response_kind=RESP_TEXT),
        _r("analyze_table_query_plan", "POST", "/v1/table/{id}/analyze_plan", JSON,
           ln.AnalyzeTableQueryPlanRequest, None, R,
           response_kind=RESP_TEXT),
        # Schema evolution
        _r("alter_table_add_columns", "POST", "/v1/table/{id}/add_columns", JSON,
           ln.AlterTableAddColumnsRequest, ln.AlterTableAddColumnsResponse, W),
        _r("alter_table_alter_columns", "POST", "/v1/table/{id}/alter_columns", JSON,
           ln.AlterTableAlterColumnsRequest, ln.AlterTableAlterColumnsResponse, W),
        _r("alter_table_drop_columns", "POST", "/v1/table/{id}/drop_columns", JSON,
           ln.AlterTableDropColumnsRequest, ln.AlterTableDropColumnsResponse, W),
        _r("alter_table_backfill_columns", "POST", "/v1/table/{id}/backfill_column", JSON,
           ln.AlterTableBackfillColumnsRequest, ln.AlterTableBackfillColumnsResponse, W),
        # Materialized views
        _r("create_materialized_view", "POST", "/v1/materialized_view/{id}/create", JSON,
           ln.CreateMaterializedViewRequest, ln.CreateMaterializedViewResponse, W),
        _r("refresh_materialized_view", "POST", "/v1/materialized_view/{id}/refresh", JSON,
           ln.RefreshMaterializedViewRequest, ln.RefreshMaterializedViewResponse, W),
        # Indexes
        _r("create_table_index", "POST", "/v1/table/{id}/create_index", JSON,
           ln.CreateTableIndexRequest, ln.CreateTableIndexResponse, W),
        _r("create_table_scalar_index", "POST", "/v1/table/{id}/create_scalar_index", JSON,
           ln.CreateTableIndexRequest, ln.CreateTableScalarIndexResponse, W),
        _r("list_table_indices", "POST", "/v1/table/{id}/index/list", JSON,
           ln.ListTableIndicesRequest, ln.ListTableIndicesResponse, R),
        _r("describe_table_index_stats", "POST", "/v1/table/{id}/index/{index_name}/stats", JSON,
           ln.DescribeTableIndexStatsRequest, ln.DescribeTableIndexStatsResponse, R),
        _r("drop_table_index", "POST", "/v1/table/{id}/index/{index_name}/drop", NONE,
           ln.DropTableIndexRequest, ln.DropTableIndexResponse, W, ("branch",)),
        # Tags
        _r("list_table_tags", "POST", "/v1/table/{id}/tags/list", NONE,
           ln.ListTableTagsRequest, ln.ListTableTagsResponse, R, _PAGING),
        _r("get_table_tag_version", "POST", "/v1/table/{id}/tags/version", JSON,
           ln.GetTableTagVersionRequest, ln.GetTableTagVersionResponse, R),
        _r("create_table_tag", "POST", "/v1/table/{id}/tags/create", JSON,
           ln.CreateTableTagRequest, ln.CreateTableTagResponse, W),
        _r("delete_table_tag", "POST", "/v1/table/{id}/tags/delete", JSON,
           ln.DeleteTableTagRequest, ln.DeleteTableTagResponse, W),
        _r("update_table_tag", "POST", "/v1/table/{id}/tags/update", JSON,
           ln.UpdateTableTagRequest, ln.UpdateTableTagResponse, W),
        # Branches
        _r("create_table_branch", "POST", "/v1/table/{id}/branches/create", JSON,
           ln.CreateTableBranchRequest, ln.CreateTableBranchResponse, W),
        _r("list_table_branches", "POST", "/v1/table/{id}/branches/list", NONE,
           ln.ListTableBranchesRequest, ln.ListTableBranchesResponse, R, _PAGING),
        _r("delete_table_branch", "POST", "/v1/table/{id}/branches/delete", JSON,
           ln.DeleteTableBranchRequest, ln.DeleteTableBranchResponse, W),
        # Transactions (id = table id + transaction id)
        _r("describe_transaction", "POST", "/v1/transaction/{id}/describe", JSON,
           ln.DescribeTransactionRequest, ln.DescribeTransactionResponse, R),
        _r("alter_transaction", "POST", "/v1/transaction/{id}/alter", JSON,
           ln.AlterTransactionRequest, ln.AlterTransactionResponse, W),
    )
}  # fmt: skip

READ_ONLY_OPS: frozenset[str] = frozenset(op for op, r in ROUTES.items() if r.read_only)
# Response models that carry ``context`` (all of them in 0.13; checked, not assumed).
_HAS_CONTEXT: frozenset[type] = frozenset(
    r.response for r in ROUTES.values() if r.response and "context" in r.response.model_fields
)

# Error code for an error answer without a JSON error body, by HTTP status.
_STATUS_TO_CODE: dict[int, int] = {
    400: 13,  # InvalidInput
    401: 16,  # Unauthenticated
    403: 15,  # PermissionDenied
    404: 0,  # no such route on this server -> Unsupported
    405: 0,
    406: 0,
    409: 14,  # ConcurrentModification
    413: 13,
    422: 13,
    429: 21,  # Throttling
    501: 0,
    503: 17,  # ServiceUnavailable
}
_RETRY_STATUSES = frozenset({429, 503})
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_BODY_EXCLUDE = frozenset({"identity", "context"})
_KNOWN_OPTIONS = (
    "api_key",
    "auth_token",
    "delimiter",
    "headers",
    "timeout",
    "max_retries",
    "backoff",
    "retry_cap",
    "sleep",
    "transport",
    "wire_log_size",
    "verify",
)


def _client_error(
    cls: type[LanceNamespaceError], message: str, url: str | None = None
) -> LanceNamespaceError:
    return attach_error_details(cls(message), message=message, url=url)


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _strip_nested(value: Any) -> Any:
    """Drop identity/context objects from request models embedded in a batch body."""
    if isinstance(value, dict):
        return {
            k: _strip_nested(v)
            for k, v in value.items()
            if not (k in _BODY_EXCLUDE and (v is None or isinstance(v, dict)))
        }
    if isinstance(value, list):
        return [_strip_nested(v) for v in value]
    return value


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def _to_ipc_bytes(data: Any) -> bytes:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    # A pyarrow Table / RecordBatch / RecordBatchReader: serialise as an IPC stream.
    import pyarrow as pa

    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, data.schema) as writer:
        if isinstance(data, pa.Table):
            writer.write_table(data)
        else:
            for batch in data:
                writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


class RestNamespaceClient(LanceNamespace):
    """A Lance REST Namespace client on one persistent ``httpx.Client``.

    Options: ``api_key``, ``auth_token``, ``delimiter`` (default ``$``), ``headers`` (extra
    headers), ``timeout`` (seconds, default 30), ``max_retries`` (default 3, read-only
    operations only), ``backoff`` (first retry delay, seconds), ``retry_cap`` (upper bound
    of one backoff / ``Retry-After`` wait, default 10 s), ``sleep`` (callable used to wait),
    ``transport`` (an httpx transport), ``wire_log_size`` (default 200, 0 disables),
    ``verify`` (TLS verification, passed to httpx).
    """

    def __init__(
        self,
        uri: str,
        *,
        api_key: str | None = None,
        auth_token: str | None = None,
        delimiter: str = DEFAULT_DELIMITER,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        backoff: float = DEFAULT_BACKOFF,
        retry_cap: float = DEFAULT_RETRY_CAP,
        sleep: Callable[[float], Any] = time.sleep,
        transport: httpx.BaseTransport | None = None,
        wire_log_size: int = DEFAULT_MAX_ENTRIES,
        verify: bool | str = True,
        **unknown: Any,
    ):
        if unknown:
            raise TypeError(
                f"unknown REST option(s) {sorted(unknown)}; expected one of {_KNOWN_OPTIONS}"
            )
        uri = str(uri).strip()
        if not uri.lower().startswith(("http://", "https://")):
            raise InvalidInputError(f"not an http(s) URL: {uri!r}")
        if not delimiter:
            raise InvalidInputError("the delimiter must not be empty")
        self._uri = uri.rstrip("/")
        self._delimiter = str(delimiter)
        self._delimiter_query = (
            ""
            if self._delimiter == DEFAULT_DELIMITER
            else "delimiter=" + quote(self._delimiter, safe="")
        )
        self._root_segment = quote(self._delimiter, safe="")
        self._timeout = None if timeout is None else float(timeout)
        self._max_retries = max(0, int(max_retries))
        self._backoff = max(0.0, float(backoff))
        self._retry_cap = max(0.0, float(retry_cap))
        self._sleep = sleep
        self._api_key = api_key or None
        self._auth_token = auth_token or None
        default_headers: dict[str, str] = {"Accept": JSON_TYPE, "User-Agent": USER_AGENT}
        for name, value in (headers or {}).items():
            default_headers[str(name)] = str(value)
        if self._api_key:
            default_headers["x-api-key"] = self._api_key
        if self._auth_token:
            default_headers["Authorization"] = f"Bearer {self._auth_token}"
        self._http = httpx.Client(
            headers=default_headers,
            timeout=httpx.Timeout(self._timeout),
            transport=transport,
            verify=verify,
            follow_redirects=False,
        )
        self._wire_log = WireLog(wire_log_size)
        self._timeout_ext = {"timeout": httpx.Timeout(self._timeout).as_dict()}
        self._urls: dict[str, httpx.URL] = {}

    # ------------------------------------------------------------------ housekeeping

    @property
    def uri(self) -> str:
        """The server URL (any user:password part redacted)."""
        return redact_url(self._uri)

    @property
    def delimiter(self) -> str:
        return self._delimiter

    @property
    def wire_log(self) -> WireLog:
        """The last exchanges (newest last); iterate, ``len()``, ``clear()``."""
        return self._wire_log

    def namespace_id(self) -> str:
        return f"RestNamespaceClient {{ uri: '{redact_url(self._uri)}' }}"

    def capabilities(self) -> BackendCapabilities:
        return BackendCapabilities(
            kind="rest",
            honoured_index_params=None,
            progress_events=False,
            batch_commit=True,
            wire_log=True,
            notes=(
                "Index parameters are sent as the spec defines; whether they are applied is "
                "up to the server.",
                "Index builds report no progress events: poll ListTableIndices / "
                "DescribeTableIndexStats.",
                "BatchCommitTables is sent to the server; servers that do not implement it "
                "answer UnsupportedOperationError.",
                "Read-only operations are retried on connection errors, 429 and 503; writes "
                "are never retried.",
            ),
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RestNamespaceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"RestNamespaceClient(uri={redact_url(self._uri)!r}, "
            f"delimiter={self._delimiter!r}, "
            f"api_key={'<set>' if self._api_key else None}, "
            f"auth_token={'<set>' if self._auth_token else None})"
        )

    # ------------------------------------------------------------------ request building

    def _id_segment(self, parts: Any, op: str) -> str:
        if not parts:
            return self._root_segment
        if isinstance(parts, str):
            raise InvalidInputError(f"{op}: id must be a list of names, got the string {parts!r}")
        d = self._delimiter
        for part in parts:
            if not isinstance(part, str) or not part:
                raise InvalidInputError(f"{op}: id parts must be non-empty strings: {parts!r}")
            if d in part:
                raise InvalidInputError(
                    f"{op}: id part {part!r} contains the delimiter {d!r}; "
                    "connect with another delimiter"
                )
        return quote(d.join(parts), safe="")

    def build_url(self, op: str, request: Any) -> str:
        """The full URL an operation's request goes to (path + query string)."""
        route = ROUTES[op]
        request = self._coerce(route, request)
        return self._url(route, request)

    def _url(self, route: Route, request: BaseModel) -> str:
        path = route.path
        if route.has_id:
            path = path.replace("{id}", self._id_segment(request.id, route.op))
        if "{index_name}" in path:
            name = getattr(request, "index_name", None)
            if not name:
                raise InvalidInputError(f"{route.op}: index_name is required")
            path = path.replace("{index_name}", quote(name, safe=""))
        query: list[str] = []
        if self._delimiter_query:
            query.append(self._delimiter_query)
        for field in route.query:
            value = getattr(request, field, None)
            if value is None:
                continue
            if field == "on" and isinstance(value, list):
                query.extend("on=" + quote(str(v), safe="") for v in value)
                continue
            query.append(f"{field}={quote(_query_value(value), safe='')}")
        url = self._uri + path
        return url + "?" + "&".join(query) if query else url

    def _headers(self, request: BaseModel) -> dict[str, str | bytes] | None:
        identity = request.identity
        context = request.context
        if identity is None and not context:
            return None
        headers: dict[str, str | bytes] = {}
        if context:
            for key, value in context.items():
                is_header = key.startswith("header.")
                name = key[len("header.") :] if is_header else "x-lance-ctx-" + key
                if not _HEADER_NAME.match(name):
                    raise InvalidInputError(
                        f"context key {key!r} cannot be sent as the HTTP header {name!r}"
                    )
                text = str(value)
                headers[name] = text if text.isascii() else text.encode("utf-8")
        if identity is not None:
            if identity.api_key:
                headers["x-api-key"] = identity.api_key
            if identity.auth_token:
                headers["Authorization"] = f"Bearer {identity.auth_token}"
        return headers

    def _body(self, route: Route, request: BaseModel, data: Any) -> tuple[bytes | None, str | None]:
        kind = route.body
        if kind == NONE:
            return None, None
        if kind == ARROW:
            if data is None:
                raise InvalidInputError(f"{route.op}: Arrow IPC request data is required")
            return _to_ipc_bytes(data), ARROW_STREAM
        if kind == METADATA:
            return json.dumps(request.metadata or {}).encode(), JSON_TYPE
        if route.nested_requests:
            payload = request.model_dump(
                mode="json", by_alias=True, exclude_none=True, exclude=_BODY_EXCLUDE
            )
            return json.dumps(_strip_nested(payload)).encode(), JSON_TYPE
        return (
            request.model_dump_json(
                by_alias=True, exclude_none=True, exclude=_BODY_EXCLUDE
            ).encode(),
            JSON_TYPE,
        )

    @staticmethod
    def _coerce(route: Route, request: Any) -> BaseModel:
        if request is None:
            return route.request()
        if isinstance(request, route.request):
            return request
        if isinstance(request, Mapping):
            try:
                return route.request.from_dict(dict(request))
            except ValidationError as exc:
                raise InvalidInputError(f"{route.op}: invalid request: {exc}") from exc
        if isinstance(request, BaseModel):
            # Another model with compatible fields (e.g. pylance's own classes).
            return route.request.from_dict(request.model_dump(by_alias=True, exclude_none=True))
        raise InvalidInputError(
            f"{route.op}: expected {route.request.__name__} or a dict, got {type(request).__name__}"
        )

    # ------------------------------------------------------------------ sending

    def call(self, op: str, request: Any = None, request_data: Any = None) -> Any:
        """Run any operation of :data:`ROUTES` by name."""
        route = ROUTES.get(op)
        if route is None:
            raise InvalidInputError(f"unknown operation {op!r}")
        req = self._coerce(route, request)
        url = self._url(route, req)
        headers = self._headers(req)
        body, content_type = self._body(route, req, request_data)
        if content_type is not None:
            headers = headers or {}
            headers["Content-Type"] = content_type
        if route.response_kind == RESP_ARROW:
            headers = headers or {}
            headers["Accept"] = f"{ARROW_FILE}, {JSON_TYPE}"
        response = self._send(route, url, headers, body)
        return self._parse(route, response)

    def _backoff_delay(self, attempt: int, response: httpx.Response | None) -> float:
        if response is not None:
            after = parse_retry_after(response.headers.get("retry-after"))
            if after is not None:
                return min(after, self._retry_cap)
        return min(self._backoff * (2 ** (attempt - 1)), self._retry_cap)

    def _send(
        self, route: Route, url: str, headers: dict[str, Any] | None, body: bytes | None
    ) -> httpx.Response:
        http = self._http
        if http.is_closed:
            raise _client_error(
                NamespaceConnectionError, f"{route.op}: the client for {self.uri} is closed"
            )
        log = self._wire_log
        url_obj = self._urls.get(url)
        if url_obj is None:  # parsing URLs is a good part of httpx's per-request cost
            if len(self._urls) >= 1024:
                self._urls.clear()
            url_obj = self._urls[url] = httpx.URL(url)
        if headers:
            merged = http.headers.copy()
            merged.update(headers)
        else:
            merged = http.headers
        attempt = 0
        while True:
            attempt += 1
            request = httpx.Request(
                route.method,
                url_obj,
                headers=merged,
                content=body,
                extensions=self._timeout_ext,
            )
            started = time.perf_counter()
            try:
                response = http.send(request)
            except httpx.TransportError as exc:
                elapsed = (time.perf_counter() - started) * 1000.0
                timed_out = isinstance(exc, httpx.TimeoutException)
                shown = redact_url(url)
                if timed_out:
                    message = (
                        f"{route.op}: no answer from {shown} within {self._timeout} s "
                        f"({type(exc).__name__})"
                    )
                else:
                    message = f"{route.op}: cannot reach {shown}: {type(exc).__name__}: {exc}"
                if log.enabled:
                    log.record(
                        op=route.op,
                        method=route.method,
                        url=url,
                        request_headers=request.headers,
                        request_body=body,
                        status=None,
                        response_headers=None,
                        response_body=None,
                        elapsed_ms=elapsed,
                        error=message,
                        attempt=attempt,
                    )
                if not timed_out and route.read_only and attempt <= self._max_retries:
                    self._sleep(self._backoff_delay(attempt, None))
                    continue
                cls = NamespaceTimeoutError if timed_out else NamespaceConnectionError
                raise _client_error(cls, message, shown) from exc
            elapsed = (time.perf_counter() - started) * 1000.0
            if log.enabled:
                log.record(
                    op=route.op,
                    method=route.method,
                    url=url,
                    request_headers=request.headers,
                    request_body=body,
                    status=response.status_code,
                    response_headers=response.headers,
                    response_body=response.content,
                    elapsed_ms=elapsed,
                    attempt=attempt,
                )
            if (
                response.status_code in _RETRY_STATUSES
                and route.read_only
                and attempt <= self._max_retries
            ):
                self._sleep(self._backoff_delay(attempt, response))
                continue
            return response

    # ------------------------------------------------------------------ responses

    def _error(self, route: Route, response: httpx.Response) -> LanceNamespaceError:
        status = response.status_code
        url = redact_url(str(response.request.url))
        raw = response.content
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        if isinstance(body, dict) and any(
            k in body for k in ("error", "code", "message", "detail", "type")
        ):
            err = body.get("error")
            code = body.get("code")
            if isinstance(err, dict):  # {"error": {"message": ..., "code": ...}}
                code = err.get("code", code)
                message = err.get("message") or json.dumps(err)
            else:
                message = err or body.get("message") or body.get("detail")
            if isinstance(code, str) and code.strip().isdigit():
                code = int(code)
            if not isinstance(code, int) or isinstance(code, bool):
                code = _STATUS_TO_CODE.get(status, 18)
            if not message:
                message = f"HTTP {status} (code {code}) from {url}"
            detail = body.get("detail")
            instance = body.get("instance")
            return error_from_code(
                code,
                str(message),
                status=status,
                detail=None if detail is None else str(detail),
                instance=None if instance is None else str(instance),
                error_type=None if body.get("type") is None else str(body.get("type")),
                url=url,
                raw=body,
            )
        snippet = " ".join(raw[:400].decode("utf-8", errors="replace").split())[:200]
        reason = response.reason_phrase or ""
        ctype = response.headers.get("content-type", "")
        shown = snippet or "(empty body)"
        message = f"HTTP {status} {reason} from {url} ({route.op}): {shown}"
        if ctype:
            message += f" [{ctype.split(';')[0]}]"
        if status == 404 and not snippet:
            message += " - the server has no such route (operation not implemented?)"
        return error_from_code(
            _STATUS_TO_CODE.get(status, 18), message, status=status, url=url, raw=snippet
        )

    def _parse(self, route: Route, response: httpx.Response) -> Any:
        status = response.status_code
        if not 200 <= status < 300:
            raise self._error(route, response)
        raw = response.content
        kind = route.response_kind
        model = route.response
        if kind == RESP_TEXT:
            if response.headers.get("content-type", "").startswith(JSON_TYPE):
                data = self._json(route, response)
                return data if isinstance(data, str) else json.dumps(data)
            return response.text
        assert model is not None
        if kind == RESP_ARROW and not response.headers.get("content-type", "").startswith(
            JSON_TYPE
        ):
            return self._with_context(response, self._build(route, response, data=raw))
        if not raw or raw.isspace():
            return self._with_context(response, self._build(route, response))
        try:
            # Parse and validate in one pass (pydantic-core), no intermediate dicts.
            result = model.model_validate_json(raw)
        except ValidationError as exc:
            data = self._json(route, response)  # raises if it is not JSON at all
            if kind == RESP_COUNT and isinstance(data, int) and not isinstance(data, bool):
                result = self._build(route, response, count=data)
            elif not isinstance(data, dict):
                raise self._malformed(route, response, "expected a JSON object") from exc
            else:
                raise self._malformed(
                    route, response, f"does not fit {model.__name__}: {exc}"
                ) from exc
        return self._with_context(response, result)

    def _build(self, route: Route, response: httpx.Response, **fields: Any) -> Any:
        assert route.response is not None
        try:
            return route.response(**fields)
        except (ValidationError, TypeError, ValueError) as exc:
            raise self._malformed(
                route, response, f"does not fit {route.response.__name__}: {exc}"
            ) from exc

    @staticmethod
    def _with_context(response: httpx.Response, result: Any) -> Any:
        """Response headers -> ``context["header.<name>"]`` (on top of any body context)."""
        if type(result) in _HAS_CONTEXT:
            merged = dict(result.context) if result.context else {}
            for name, value in response.headers.items():
                merged["header." + name] = value
            result.context = merged
        return result

    def _json(self, route: Route, response: httpx.Response) -> Any:
        try:
            return json.loads(response.content)
        except ValueError as exc:
            raise self._malformed(route, response, f"invalid JSON ({exc})") from exc

    def _malformed(self, route: Route, response: httpx.Response, why: str) -> LanceNamespaceError:
        snippet = response.content[:200].decode("utf-8", errors="replace")
        url = redact_url(str(response.request.url))
        err = InternalError(
            f"{route.op}: malformed response from {url} (HTTP {response.status_code}): "
            f"{why}: {snippet!r}"
        )
        attach_error_details(err, status=response.status_code, message=str(err), url=url)
        return err

    # ------------------------------------------------------------------ operations

    def list_namespaces(self, request: ln.ListNamespacesRequest) -> ln.ListNamespacesResponse:
        return self.call("list_namespaces", request)

    def create_namespace(self, request: ln.CreateNamespaceRequest) -> ln.CreateNamespaceResponse:
        return self.call("create_namespace", request)

    def describe_namespace(
        self, request: ln.DescribeNamespaceRequest
    ) -> ln.DescribeNamespaceResponse:
        return self.call("describe_namespace", request)

    def drop_namespace(self, request: ln.DropNamespaceRequest) -> ln.DropNamespaceResponse:
        return self.call("drop_namespace", request)

    def namespace_exists(self, request: ln.NamespaceExistsRequest) -> ln.NamespaceExistsResponse:
        return self.call("namespace_exists", request)

    def list_tables(self, request: ln.ListTablesRequest) -> ln.ListTablesResponse:
        return self.call("list_tables", request)

    def list_all_tables(self, request: ln.ListTablesRequest) -> ln.ListTablesResponse:
        return self.call("list_all_tables", request)

    def register_table(self, request: ln.RegisterTableRequest) -> ln.RegisterTableResponse:
        return self.call("register_table", request)

    def describe_table(self, request: ln.DescribeTableRequest) -> ln.DescribeTableResponse:
        return self.call("describe_table", request)

    def table_exists(self, request: ln.TableExistsRequest) -> ln.TableExistsResponse:
        return self.call("table_exists", request)

    def drop_table(self, request: ln.DropTableRequest) -> ln.DropTableResponse:
        return self.call("drop_table", request)

    def deregister_table(self, request: ln.DeregisterTableRequest) -> ln.DeregisterTableResponse:
        return self.call("deregister_table", request)

    def rename_table(self, request: ln.RenameTableRequest) -> ln.RenameTableResponse:
        return self.call("rename_table", request)

    def restore_table(self, request: ln.RestoreTableRequest) -> ln.RestoreTableResponse:
        return self.call("restore_table", request)

    def list_table_versions(
        self, request: ln.ListTableVersionsRequest
    ) -> ln.ListTableVersionsResponse:
        return self.call("list_table_versions", request)

    def create_table_version(
        self, request: ln.CreateTableVersionRequest | dict[str, Any]
    ) -> ln.CreateTableVersionResponse:
        return self.call("create_table_version", request)

    def describe_table_version(
        self, request: ln.DescribeTableVersionRequest | dict[str, Any]
    ) -> ln.DescribeTableVersionResponse:
        return self.call("describe_table_version", request)

    def batch_delete_table_versions(
        self, request: ln.BatchDeleteTableVersionsRequest | dict[str, Any]
    ) -> ln.BatchDeleteTableVersionsResponse:
        return self.call("batch_delete_table_versions", request)

    def batch_create_table_versions(
        self, request: ln.BatchCreateTableVersionsRequest
    ) -> ln.BatchCreateTableVersionsResponse:
        return self.call("batch_create_table_versions", request)

    def batch_commit_tables(
        self, request: ln.BatchCommitTablesRequest
    ) -> ln.BatchCommitTablesResponse:
        return self.call("batch_commit_tables", request)

    def get_table_stats(self, request: ln.GetTableStatsRequest) -> ln.GetTableStatsResponse:
        return self.call("get_table_stats", request)

    def update_table_schema_metadata(
        self, request: ln.UpdateTableSchemaMetadataRequest
    ) -> ln.UpdateTableSchemaMetadataResponse:
        return self.call("update_table_schema_metadata", request)

    def update_field_metadata(
        self, request: ln.UpdateFieldMetadataRequest
    ) -> ln.UpdateFieldMetadataResponse:
        return self.call("update_field_metadata", request)

    def create_table(
        self, request: ln.CreateTableRequest, request_data: bytes
    ) -> ln.CreateTableResponse:
        return self.call("create_table", request, request_data)

    def declare_table(self, request: ln.DeclareTableRequest) -> ln.DeclareTableResponse:
        return self.call("declare_table", request)

    def insert_into_table(
        self, request: ln.InsertIntoTableRequest, request_data: bytes
    ) -> ln.InsertIntoTableResponse:
        return self.call("insert_into_table", request, request_data)

    def merge_insert_into_table(
        self, request: ln.MergeInsertIntoTableRequest, request_data: bytes
    ) -> ln.MergeInsertIntoTableResponse:
        return self.call("merge_insert_into_table", request, request_data)

    def update_table(self, request: ln.UpdateTableRequest) -> ln.UpdateTableResponse:
        return self.call("update_table", request)

    def delete_from_table(self, request: ln.DeleteFromTableRequest) -> ln.DeleteFromTableResponse:
        return self.call("delete_from_table", request)

    def query_table(self, request: ln.QueryTableRequest) -> ln.QueryTableResponse:
        return self.call("query_table", request)

    def count_table_rows(self, request: ln.CountTableRowsRequest) -> ln.CountTableRowsResponse:
        return self.call("count_table_rows", request)

    def explain_table_query_plan(self, request: ln.ExplainTableQueryPlanRequest) -> str:
        return self.call("explain_table_query_plan", request)

    def analyze_table_query_plan(self, request: ln.AnalyzeTableQueryPlanRequest) -> str:
        return self.call("analyze_table_query_plan", request)

    def alter_table_add_columns(
        self, request: ln.AlterTableAddColumnsRequest
    ) -> ln.AlterTableAddColumnsResponse:
        return self.call("alter_table_add_columns", request)

    def alter_table_alter_columns(
        self, request: ln.AlterTableAlterColumnsRequest
    ) -> ln.AlterTableAlterColumnsResponse:
        return self.call("alter_table_alter_columns", request)

    def alter_table_drop_columns(
        self, request: ln.AlterTableDropColumnsRequest
    ) -> ln.AlterTableDropColumnsResponse:
        return self.call("alter_table_drop_columns", request)

    def alter_table_backfill_columns(
        self, request: ln.AlterTableBackfillColumnsRequest
    ) -> ln.AlterTableBackfillColumnsResponse:
        return self.call("alter_table_backfill_columns", request)

    def create_materialized_view(
        self, request: ln.CreateMaterializedViewRequest
    ) -> ln.CreateMaterializedViewResponse:
        return self.call("create_materialized_view", request)

    def refresh_materialized_view(
        self, request: ln.RefreshMaterializedViewRequest
    ) -> ln.RefreshMaterializedViewResponse:
        return self.call("refresh_materialized_view", request)

    def create_table_index(
        self, request: ln.CreateTableIndexRequest
    ) -> ln.CreateTableIndexResponse:
        return self.call("create_table_index", request)

    def create_table_scalar_index(
        self, request: ln.CreateTableIndexRequest
    ) -> ln.CreateTableScalarIndexResponse:
        return self.call("create_table_scalar_index", request)

    def list_table_indices(
        self, request: ln.ListTableIndicesRequest
    ) -> ln.ListTableIndicesResponse:
        return self.call("list_table_indices", request)

    def describe_table_index_stats(
        self, request: ln.DescribeTableIndexStatsRequest
    ) -> ln.DescribeTableIndexStatsResponse:
        return self.call("describe_table_index_stats", request)

    def drop_table_index(self, request: ln.DropTableIndexRequest) -> ln.DropTableIndexResponse:
        return self.call("drop_table_index", request)

    def list_table_tags(self, request: ln.ListTableTagsRequest) -> ln.ListTableTagsResponse:
        return self.call("list_table_tags", request)

    def get_table_tag_version(
        self, request: ln.GetTableTagVersionRequest
    ) -> ln.GetTableTagVersionResponse:
        return self.call("get_table_tag_version", request)

    def create_table_tag(self, request: ln.CreateTableTagRequest) -> ln.CreateTableTagResponse:
        return self.call("create_table_tag", request)

    def delete_table_tag(self, request: ln.DeleteTableTagRequest) -> ln.DeleteTableTagResponse:
        return self.call("delete_table_tag", request)

    def update_table_tag(self, request: ln.UpdateTableTagRequest) -> ln.UpdateTableTagResponse:
        return self.call("update_table_tag", request)

    def create_table_branch(
        self, request: ln.CreateTableBranchRequest
    ) -> ln.CreateTableBranchResponse:
        return self.call("create_table_branch", request)

    def list_table_branches(
        self, request: ln.ListTableBranchesRequest
    ) -> ln.ListTableBranchesResponse:
        return self.call("list_table_branches", request)

    def delete_table_branch(
        self, request: ln.DeleteTableBranchRequest
    ) -> ln.DeleteTableBranchResponse:
        return self.call("delete_table_branch", request)

    def describe_transaction(
        self, request: ln.DescribeTransactionRequest
    ) -> ln.DescribeTransactionResponse:
        return self.call("describe_transaction", request)

    def alter_transaction(self, request: ln.AlterTransactionRequest) -> ln.AlterTransactionResponse:
        return self.call("alter_transaction", request)


__all__ = ["READ_ONLY_OPS", "ROUTES", "RestNamespaceClient", "Route", "parse_retry_after"]
