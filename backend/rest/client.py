"""RestNamespaceClient: our own httpx client for the Lance REST Namespace specification.

Every operation takes the ``lance_namespace`` request model (or a dict) and returns its
response model. How each one travels is in :data:`backend.rest.routes.ROUTES`.

Before anything is sent, a request passes ``backend.request_rules`` (ids, names, caps, ranges,
index options) and, for the writes that could lose data on a permissive server, the checks a
local namespace makes itself: the namespace exists before a create or declare; a version
delete never covers the latest version (unless ``allow_latest=True``); a batch commit passes
``backend.batch_rules`` against the server's current state.

Wire conventions:

* the object id is joined with the delimiter and percent-encoded as one path segment; the root
  namespace is the delimiter itself (``/v1/namespace/%24/list``); ``?delimiter=`` is sent only
  when the delimiter is not ``$``;
* ``identity`` (options ``api_key`` / ``auth_token`` or the request's ``identity``) travels as
  ``x-api-key`` / ``Authorization: Bearer`` headers, never in the body; ``context`` entries
  become headers (``header.<Name>`` -> ``<Name>``, other keys -> ``x-lance-ctx-<key>``), and
  response headers come back as ``response.context["header.<name>"]``;
* errors map through :mod:`backend.rest.error_map`; read-only operations are retried per
  :class:`backend.rest.retry.RetryPolicy`, writes never are.
"""

from __future__ import annotations

import json
import posixpath
import re
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

import httpx
import lance_namespace as ln
from lance_namespace import LanceNamespace
from lance_namespace.errors import (
    InvalidInputError,
    LanceNamespaceError,
    NamespaceNotFoundError,
    TableNotFoundError,
    UnsupportedOperationError,
)
from pydantic import BaseModel

from .. import batch_rules, connect_options, ids, index_rules, request_rules, version_ranges
from ..arrow_ipc import to_ipc_stream
from ..capabilities import BackendCapabilities
from ..errors import NamespaceConnectionError, attach_error_details, guarded, namespace_boundary
from ..locations import remote_location_problem, remote_manifest_problem
from ..redaction import install_log_filter, redact_url
from . import error_map
from .retry import DEFAULT_BACKOFF, DEFAULT_MAX_RETRIES, DEFAULT_RETRY_CAP, RetryPolicy
from .routes import (
    ARROW,
    ARROW_FILE,
    ARROW_STREAM,
    HAS_CONTEXT,
    JSON_TYPE,
    METADATA,
    NONE,
    RESP_ARROW,
    RESP_COUNT,
    RESP_TEXT,
    ROUTES,
    Route,
)
from .wirelog import ATTEMPT_EXTENSION, DEFAULT_MAX_ENTRIES, OP_EXTENSION, WireLog, WireLogTransport

DEFAULT_TIMEOUT = 30.0
USER_AGENT = "lance-namespace-console/0.1 (httpx)"
_TABLE_DIR = re.compile(r"^[0-9a-f]{8}_.+")
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
    "jitter",
)
_NAMESPACED_CREATES = frozenset(
    {"create_table", "create_empty_table", "declare_table", "register_table"}
)

install_log_filter()


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


@namespace_boundary
class RestNamespaceClient(LanceNamespace):
    """A Lance REST Namespace client on one persistent ``httpx.Client``.

    Options: ``api_key``, ``auth_token``, ``delimiter`` (default ``$``), ``headers`` (extra
    headers), ``timeout`` (seconds, default 30), ``max_retries`` (default 3, read-only
    operations only), ``backoff`` (first retry's upper bound, seconds), ``retry_cap`` (longest
    backoff or ``Retry-After`` wait, default 10 s), ``jitter`` (default on), ``sleep``
    (callable used to wait), ``transport`` (an httpx transport), ``wire_log_size`` (default
    200, 0 disables), ``verify`` (TLS verification, passed to httpx).
    """

    def __init__(
        self,
        uri: str | None = None,
        *,
        api_key: str | None = None,
        auth_token: str | None = None,
        delimiter: str = ids.DEFAULT_DELIMITER,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        backoff: float = DEFAULT_BACKOFF,
        retry_cap: float = DEFAULT_RETRY_CAP,
        jitter: bool = True,
        sleep: Callable[[float], Any] = time.sleep,
        transport: httpx.BaseTransport | None = None,
        wire_log_size: int = DEFAULT_MAX_ENTRIES,
        verify: bool | str = True,
        **unknown: Any,
    ):
        # pylance's property names (``header.<Name>``; numbers as text) fold into the options.
        given = connect_options.fold_properties(
            {
                "headers": headers,
                "timeout": timeout,
                "max_retries": max_retries,
                "backoff": backoff,
                "retry_cap": retry_cap,
                "jitter": jitter,
                "wire_log_size": wire_log_size,
                "verify": verify,
                **unknown,
            }
        )
        headers, timeout = given.pop("headers"), given.pop("timeout")
        max_retries, backoff = given.pop("max_retries"), given.pop("backoff")
        retry_cap, jitter = given.pop("retry_cap"), given.pop("jitter")
        wire_log_size, verify = given.pop("wire_log_size"), given.pop("verify")
        unknown = given
        if unknown:
            raise InvalidInputError(
                f"unknown REST option(s) {', '.join(sorted(unknown))}; expected one of "
                + ", ".join(_KNOWN_OPTIONS)
                + " or header.<Name>"
            )
        if uri is None:
            raise InvalidInputError("connect: the REST namespace needs its server URL (uri)")
        uri = str(uri).strip()
        connect_options.check_rest_options(
            uri,
            {
                "api_key": api_key,
                "auth_token": auth_token,
                "headers": headers or {},
                "timeout": timeout,
                "max_retries": max_retries,
                "delimiter": delimiter,
            },
        )
        self._uri = uri.rstrip("/")
        self._delimiter = str(delimiter)
        self._delimiter_query = (
            ""
            if self._delimiter == ids.DEFAULT_DELIMITER
            else "delimiter=" + quote(self._delimiter, safe="")
        )
        # quote() leaves "." as it is, and a "." path segment is dropped by URL normalisation.
        self._root_segment = "%2E" if self._delimiter == "." else quote(self._delimiter, safe="")
        self._timeout = None if timeout is None else float(timeout)
        self._retry = RetryPolicy(
            max_retries=max(0, int(max_retries)),
            backoff=max(0.0, float(backoff)),
            cap=max(0.0, float(retry_cap)),
            jitter=bool(jitter),
            sleep=sleep,
        )
        self._api_key = api_key or None
        self._auth_token = auth_token or None
        default_headers: dict[str, str] = {"Accept": JSON_TYPE, "User-Agent": USER_AGENT}
        for name, value in (headers or {}).items():
            default_headers[str(name)] = str(value)
        if self._api_key:
            default_headers["x-api-key"] = self._api_key
        if self._auth_token:
            default_headers["Authorization"] = f"Bearer {self._auth_token}"
        self._wire_log = WireLog(wire_log_size)
        inner = transport if transport is not None else httpx.HTTPTransport(verify=verify)
        self._http = httpx.Client(
            headers=default_headers,
            timeout=httpx.Timeout(self._timeout),
            transport=WireLogTransport(inner, self._wire_log),
            follow_redirects=False,
        )
        self._timeout_ext = httpx.Timeout(self._timeout).as_dict()
        self._urls: dict[str, httpx.URL] = {}
        self._probed: dict[str, bool | None] = {}
        self._probe_lock = threading.Lock()
        # What this client asked for when building vector indexes (table -> index -> fields):
        # the spec's index details say what the server applied, not what it was asked.
        self._index_requests: dict[str, dict[str, dict[str, Any]]] = {}

    # ------------------------------------------------------------------ housekeeping

    @property
    def uri(self) -> str:
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

    def capabilities(self, *, probe: bool = False) -> BackendCapabilities:
        """What this client does. ``probe=True`` asks the server whether it implements
        BatchCommitTables (an empty batch, which changes nothing); otherwise that stays
        ``None`` (unknown) until probed."""
        batch = self.supports_batch_commit() if probe else self._probed.get("batch_commit_tables")
        rename = self.supports_rename() if probe else self._probed.get("rename_table")
        return BackendCapabilities(
            kind="rest",
            honoured_index_params=None,
            progress_events=False,
            batch_commit=batch,
            rename=rename,
            drop_cascade=None,
            wire_log=True,
            notes=(
                "Index parameters are sent as the spec defines; whether they are applied is "
                "up to the server.",
                "Index builds report no progress events: poll ListTableIndices / "
                "DescribeTableIndexStats.",
                "Read-only operations are retried on connection errors, 429 and 503; writes "
                "are never retried.",
            ),
        )

    def supports_batch_commit(self) -> bool | None:
        """Whether the server implements BatchCommitTables (probed once with an empty batch:
        a server that has the operation refuses it as invalid input; ``None`` when the
        server could not be asked)."""
        return self._probe("batch_commit_tables", ln.BatchCommitTablesRequest(operations=[]))

    def supports_rename(self) -> bool | None:
        """Whether the server implements RenameTable (probed once by renaming a table that
        does not exist: a server that has the operation answers "not found")."""
        missing = f"__lance_console_probe_{uuid.uuid4().hex[:12]}"
        return self._probe(
            "rename_table", ln.RenameTableRequest(id=[missing], new_table_name=f"{missing}_")
        )

    def _probe(self, op: str, request: BaseModel) -> bool | None:
        """Send ``request`` (one that changes nothing) once; whether ``op`` is implemented:
        any answer but "unsupported" means yes; ``None`` when the server could not be asked."""
        route = ROUTES[op]
        with self._probe_lock:
            if op in self._probed:
                return self._probed[op]
            body, content_type = self._body(route, request, None)
            try:
                response = self._send(
                    route, self._url(route, request), body, {"Content-Type": content_type}
                )
            except LanceNamespaceError:
                return None
            if 200 <= response.status_code < 300:
                answer: bool | None = True
            else:
                err = error_map.error_from_response(route, response)
                answer = not isinstance(err, UnsupportedOperationError)
            self._probed[op] = answer
            return answer

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
        return quote(self._delimiter.join(parts), safe="")

    def build_url(self, op: str, request: Any) -> str:
        """The full URL an operation's request goes to (path + query string)."""
        route = ROUTES[op]
        return self._url(route, self._coerce(route, request))

    def _url(self, route: Route, request: BaseModel) -> str:
        path = route.path
        if route.has_id:
            path = path.replace("{id}", self._id_segment(getattr(request, "id", None), route.op))
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

    def _headers(self, request: BaseModel) -> dict[str, str | bytes]:
        identity = getattr(request, "identity", None)
        context = getattr(request, "context", None)
        headers: dict[str, str | bytes] = {}
        if context:
            for key, value in context.items():
                is_header = key.startswith("header.")
                name = key[len("header.") :] if is_header else "x-lance-ctx-" + key
                problem = connect_options.header_problem(name, value)
                if not _HEADER_NAME.match(name) or problem:
                    raise InvalidInputError(
                        f"context key {key!r} cannot be sent as the HTTP header {name!r}"
                        + (f": {problem}" if problem and _HEADER_NAME.match(name) else "")
                    )
                text = str(value)
                headers[name] = text if text.isascii() else text.encode("utf-8")
        if identity is not None:
            for value, what in ((identity.api_key, "API key"), (identity.auth_token, "token")):
                problem = connect_options.secret_problem(value, what)
                if problem:
                    raise InvalidInputError(problem)
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
            return to_ipc_stream(data), ARROW_STREAM
        if kind == METADATA:
            return json.dumps(getattr(request, "metadata", None) or {}).encode(), JSON_TYPE
        if route.nested_requests:
            payload = request.model_dump(
                mode="json", by_alias=True, exclude_none=True, exclude=set(_BODY_EXCLUDE)
            )
            return json.dumps(_strip_nested(payload)).encode(), JSON_TYPE
        return (
            request.model_dump_json(
                by_alias=True, exclude_none=True, exclude=set(_BODY_EXCLUDE)
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
            model = route.request.from_dict(dict(request))  # type: ignore[attr-defined]
            assert model is not None
            return model
        if isinstance(request, BaseModel):
            # Another model with compatible fields (pylance's own classes, say).
            return route.request.from_dict(  # type: ignore[attr-defined]
                request.model_dump(by_alias=True, exclude_none=True)
            )
        raise InvalidInputError(
            f"{route.op}: expected {route.request.__name__} or a dict, got {type(request).__name__}"
        )

    # ------------------------------------------------------------------ checks before sending

    def exists(self, op: str, object_id: list[str]) -> bool:
        """NamespaceExists / TableExists as a bool (not found -> False)."""
        try:
            self.call(op, ROUTES[op].request(id=object_id))
        except (NamespaceNotFoundError, TableNotFoundError):
            return False
        return True

    def _protect(self, op: str, req: Any, allow_latest: bool) -> None:
        """What a local namespace refuses by itself, checked against the server's state."""
        if (
            op == "create_namespace"
            and len(req.id) > 1
            and not self.exists("namespace_exists", req.id[:-1])
        ):
            raise NamespaceNotFoundError(
                f"namespace {ids.format_id(req.id[:-1], self._delimiter)} not found"
            )
        if (
            op in _NAMESPACED_CREATES
            and len(req.id) > 1
            and not self.exists("namespace_exists", req.id[:-1])
        ):
            raise NamespaceNotFoundError(
                f"namespace {ids.format_id(req.id[:-1], self._delimiter)} not found: create "
                "it first"
            )
        if (
            op == "rename_table"
            and req.new_namespace_id
            and not self.exists("namespace_exists", list(req.new_namespace_id))
        ):
            raise NamespaceNotFoundError(
                f"namespace {ids.format_id(req.new_namespace_id, self._delimiter)} not found"
            )
        if op == "register_table":
            self._check_registration(req.location)
        if op == "create_table_version":
            self._check_manifest(req.id, req.manifest_path)
        if op == "batch_delete_table_versions":
            latest = version_ranges.latest_version(self, req.id, req.branch)
            version_ranges.check_ranges(req.ranges or [], latest=latest, allow_latest=allow_latest)
        if op == "batch_commit_tables":
            problem = batch_rules.first_error(
                batch_rules.check_batch(
                    req, batch_rules.NamespaceView(self), delimiter=self._delimiter
                )
            )
            if problem is not None:
                raise problem.error()
            for i, operation in enumerate(req.operations or []):
                version = operation.create_table_version
                if version is not None:
                    self._check_manifest(version.id, version.manifest_path, number=i + 1)

    def _check_registration(self, location: Any) -> None:
        """A registration may not point at the root, the catalog, a part of a dataset, or the
        directory of a table the server already has (pylance's directory layout:
        ``<name>.lance`` at the root, ``<8 hex digits>_<ns$name>`` for nested tables)."""
        problem = None
        parts = posixpath.normpath(str(location or "")).split("/")
        owner: list[str] | None = None
        if parts[0].endswith(".lance") and len(parts[0]) > len(".lance"):
            owner = [parts[0][: -len(".lance")]]
        elif _TABLE_DIR.match(parts[0]):
            owner = parts[0].split("_", 1)[1].split("$")
        if owner and ids.id_problem(owner) is None and self.exists("table_exists", owner):
            where = "the directory of" if len(parts) == 1 else "inside the directory of"
            problem = f"the table location {location!r} is {where} another table"
        problem = problem or remote_location_problem(location)
        if problem:
            raise InvalidInputError(f"register_table: {problem}")

    def _check_manifest(self, table_id: Any, manifest_path: Any, number: int | None = None) -> None:
        location = self.call("describe_table", ln.DescribeTableRequest(id=table_id)).location
        problem = remote_manifest_problem(location, manifest_path)
        if problem:
            raise InvalidInputError(
                (
                    f"operation {number}: CreateTableVersion: "
                    if number
                    else "create_table_version: "
                )
                + problem
            )

    # ------------------------------------------------------------------ sending

    @guarded("call")
    def call(
        self, op: str, request: Any = None, request_data: Any = None, *, allow_latest: bool = False
    ) -> Any:
        """Run any operation of :data:`ROUTES` by name."""
        route = ROUTES.get(op)
        if route is None:
            raise InvalidInputError(f"unknown operation {op!r}")
        req = self._coerce(route, request)
        request_rules.check_request(op, req, delimiter=self._delimiter)
        url = self._url(route, req)
        headers = self._headers(req)
        body, content_type = self._body(route, req, request_data)
        self._protect(op, req, allow_latest)
        if content_type is not None:
            headers["Content-Type"] = content_type
        if route.response_kind == RESP_ARROW:
            headers["Accept"] = f"{ARROW_FILE}, {JSON_TYPE}"
        response = self._send(route, url, body, headers)
        return self._parse(route, response)

    def _send(
        self,
        route: Route,
        url: str,
        body: bytes | None,
        headers: dict[str, Any] | None,
    ) -> httpx.Response:
        http = self._http
        if http.is_closed:
            raise attach_error_details(
                NamespaceConnectionError(f"{route.op}: the client for {self.uri} is closed"),
                message=f"{route.op}: the client for {self.uri} is closed",
            )
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
                extensions={
                    "timeout": self._timeout_ext,
                    OP_EXTENSION: route.op,
                    ATTEMPT_EXTENSION: attempt,
                },
            )
            try:
                response = http.send(request)
            except httpx.TransportError as exc:
                if self._retry.should_retry(attempt, read_only=route.read_only, error=exc):
                    self._retry.wait(attempt)
                    continue
                raise error_map.transport_error(route, url, exc, self._timeout) from exc
            if self._retry.should_retry(attempt, read_only=route.read_only, response=response):
                self._retry.wait(attempt, response)
                continue
            return response

    # ------------------------------------------------------------------ responses

    def _parse(self, route: Route, response: httpx.Response) -> Any:
        status = response.status_code
        if not 200 <= status < 300:
            raise error_map.error_from_response(route, response)
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
            result = model.model_validate_json(raw)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            data = self._json(route, response)
            if kind == RESP_COUNT and isinstance(data, int) and not isinstance(data, bool):
                result = self._build(route, response, count=data)
            elif not isinstance(data, dict):
                raise error_map.malformed(route, response, "expected a JSON object") from exc
            else:
                raise error_map.malformed(
                    route, response, f"does not fit {model.__name__}: {exc}"
                ) from exc
        return self._with_context(response, result)

    @staticmethod
    def _build(route: Route, response: httpx.Response, **fields: Any) -> Any:
        assert route.response is not None
        try:
            return route.response(**fields)
        except (TypeError, ValueError) as exc:
            raise error_map.malformed(
                route, response, f"does not fit {route.response.__name__}: {exc}"
            ) from exc

    @staticmethod
    def _with_context(response: httpx.Response, result: Any) -> Any:
        """Response headers -> ``context["header.<name>"]`` (on top of any body context)."""
        if type(result) in HAS_CONTEXT:
            merged = dict(result.context) if result.context else {}
            for name, value in response.headers.items():
                merged["header." + name] = value
            result.context = merged
        return result

    @staticmethod
    def _json(route: Route, response: httpx.Response) -> Any:
        try:
            return json.loads(response.content)
        except ValueError as exc:
            raise error_map.malformed(route, response, f"invalid JSON ({exc})") from exc

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
        """ListTables; an empty answer for a namespace that does not exist (pylance's server
        gives one) is ``NamespaceNotFoundError``, as on the local backend."""
        resp = self.call("list_tables", request)
        ns_id = list(getattr(self._coerce(ROUTES["list_tables"], request), "id", None) or [])
        if ns_id and not resp.tables and not self.exists("namespace_exists", ns_id):
            raise NamespaceNotFoundError(
                f"list_tables: namespace {ids.format_id(ns_id, self._delimiter)} not found"
            )
        return resp

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
        self,
        request: ln.BatchDeleteTableVersionsRequest | dict[str, Any],
        *,
        allow_latest: bool = False,
    ) -> ln.BatchDeleteTableVersionsResponse:
        """Delete version ranges; refused before sending when a range covers the table's
        latest version, unless ``allow_latest``."""
        return self.call("batch_delete_table_versions", request, allow_latest=allow_latest)

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
        response = self.call("create_table_index", request)
        if index_rules.normalize_index_type(request.index_type) in index_rules.VECTOR_INDEX_TYPES:
            name = request.name or index_rules.default_index_name(request.column or "")
            table = self._delimiter.join(request.id or [])
            self._index_requests.setdefault(table, {})[name] = index_rules.requested_build_fields(
                request
            )
        return response

    def index_requests(self, table_id: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Index name -> the vector build parameters this client sent (this session only)."""
        return dict(self._index_requests.get(self._delimiter.join(table_id), {}))

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


__all__ = ["RestNamespaceClient"]
