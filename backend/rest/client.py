"""RestNamespaceClient: our own httpx client for the Lance REST Namespace specification.

Every operation takes the ``lance_namespace`` request model (or a dict) and returns its
response model. How each one travels is in :data:`backend.rest.routes.ROUTES`.

Before anything is sent, :meth:`RestNamespaceClient.call` checks what needs no server:
``backend.rules.request_rules`` (ids, names, caps, ranges, index options), a batch's shape and each
of its operations' own rules (``backend.rules.batch_rules.static_problems``), the shape of a location
to register (a relative one follows ``backend.locations.remote_location_problem``; an absolute
one, the form servers report locations in, is the server's to judge).

What reads the server's state:

* DeclareTable, CreateTable, RegisterTable and RenameTable send the write and nothing else: the
  server judges them and its answer is reported;
* the single writes that keep a check read at most one object: the parent namespace of a
  CreateNamespace, the table of a staged manifest (DescribeTable), the latest version and the
  tags before a delete (never covered unless ``allow_latest=True`` / ``delete_tags=True``);
* on purpose, :meth:`RestNamespaceClient.preflight` (``backend.preflight``), in bulk: a batch
  (``backend.spec.catalog_views.ListingView``), or one single write
  (``backend.write_preflight``: the parent namespace, a table of the same name, the
  catalog's tables at a location to register); ``batch_commit_tables`` itself sends the batch
  alone.

Capabilities (:meth:`RestNamespaceClient.capabilities`) are never probed: they come from the
``server_profile`` option, or the server's answer to a real request of this session.

Branches: a server may ignore a request's ``branch`` and answer for main (pylance's directory
namespace behind its REST adapter does, for most operations). A read sent to a branch is
preceded, once per operation in a client's life, by the same read addressed to a branch that
does not exist: a server that answers it (or fails on something past the branch, an index)
ignores the branch, and every read of that operation on a branch is refused, nothing read,
rather than answered with main's data. A write sent to a branch is refused before it is sent
where the server profile says so (``lance-dir``) or where the server ignores DescribeTable's
branch (that probe, once), else checked afterwards (main's version before and after: a write
that landed on main is an error saying so).

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

Where it connects: never to a link-local or cloud-metadata address
(``connect_options.address_problem``): the host is resolved and every address it resolves to
is judged, when the client is made and again before each request to a host name (a name that
comes to point at a metadata address later is refused too), unless a pattern of the
``allow_targets`` option (the console's allowlist, ``backend.config.targets``) names that host
explicitly. With a ``transport`` of its own (tests) nothing is resolved; the host as written is
still judged.
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlparse

import httpx
import lance_namespace as ln
from lance_namespace import LanceNamespace
from lance_namespace.errors import (
    ErrorCode,
    InvalidInputError,
    LanceNamespaceError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
    TableNotFoundError,
    TableVersionNotFoundError,
    UnsupportedOperationError,
)
from pydantic import BaseModel

from backend import write_preflight
from backend.arrow.ipc import to_ipc_stream
from backend.config import targets
from backend.rules import (
    batch_rules,
    column_errors,
    connect_options,
    filter_errors,
    ids,
    index_rules,
    query_rules,
    request_rules,
    version_ranges,
)
from backend.rules.columns import columns_from_schema
from backend.spec import catalog_views
from backend.spec.fields import INT64_MAX

from ..capabilities import LANCE_DIR, BackendCapabilities, server_profile_named
from ..errors import (
    NamespaceConnectionError,
    attach_error_details,
    guarded,
    in_user_terms,
    make,
    namespace_boundary,
    validation_text,
)
from ..locations import remote_location_problem, remote_manifest_problem
from ..redaction import install_log_filter, redact_url, register_secret
from ..spec.operations import HAS_CONTEXT
from ..spec.paging import iter_all, list_all
from . import error_map, tls
from .retry import DEFAULT_BACKOFF, DEFAULT_MAX_RETRIES, DEFAULT_RETRY_CAP, RetryPolicy
from .routes import (
    ARROW,
    ARROW_FILE,
    ARROW_STREAM,
    JSON_TYPE,
    METADATA,
    NONE,
    RESP_ARROW,
    RESP_COUNT,
    RESP_TEXT,
    ROUTES,
    Route,
)
from .wirelog import (
    ATTEMPT_EXTENSION,
    DEFAULT_MAX_ENTRIES,
    ENTRY_EXTENSION,
    OP_EXTENSION,
    WireLog,
    WireLogTransport,
)

DEFAULT_TIMEOUT = 30.0
# The most the client reads of one answer (decoded), refused past it as it streams in: an
# Arrow answer holds rows (QueryTable's; the search page asks for 10,000 at most); any other
# answer is JSON, where a page of 1,000 tables is some 50 KB and a schema of thousands of
# columns a few MB.
MAX_ARROW_ANSWER_BYTES = 256 * 1024 * 1024
MAX_JSON_ANSWER_BYTES = 64 * 1024 * 1024
USER_AGENT = "lance-namespace-console/0.1 (httpx)"
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_BODY_EXCLUDE = frozenset({"identity", "context"})
# A run of 19 digits: the only way a JSON answer holds a number beyond the signed 64-bit range
# (2^63 - 1 has 19 digits); only then is the answer read whole to tell (``_beyond_int64``).
_LONG_DIGITS = re.compile(rb"\d{19}")
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
    "server_profile",
    "allow_targets",
)
# capability (by operation) -> its field in a ServerProfile
_PROFILE_FIELDS = {
    "batch_commit_tables": "batch_commit",
    "rename_table": "rename",
    "drop_namespace_cascade": "drop_cascade",
}

install_log_filter()


# Writes whose request names a branch but that never move a version of main: not checked
# for landing on main (a tag is created, updated or deleted; the branch itself is created).
_BRANCH_CHECK_EXEMPT = frozenset({"create_table_tag", "update_table_tag", "delete_table_tag"})


def _write_branch(op: str, request: Any) -> str | None:
    """The branch (not main) a write request targets, ``None`` for reads, main, or writes
    exempt from the landed-on-main check."""
    route = ROUTES.get(op)
    if route is None or route.read_only or op in _BRANCH_CHECK_EXEMPT:
        return None
    return _named_branch(request)


# Tag writes naming a branch: checked afterwards that the tag is on that branch (pylance's
# directory namespace, behind its REST adapter, puts it on main's version of that number).
_TAG_BRANCH_WRITES = frozenset({"create_table_tag", "update_table_tag"})


def _named_branch(request: Any) -> str | None:
    """The branch (not main) a request names, else ``None``."""
    if isinstance(request, Mapping):
        branch = request.get("branch")
    else:
        branch = getattr(request, "branch", None)
    if not isinstance(branch, str) or not branch or branch == "main":
        return None
    return branch


def _branch_field_id(request: Any) -> list[str]:
    raw = request.get("id") if isinstance(request, Mapping) else getattr(request, "id", None)
    return [str(p) for p in raw or []]


def _read_branch(op: str, request: Any) -> str | None:
    """The branch (not main) a read request addresses (an ExplainTableQueryPlan's query's
    too), ``None`` for writes, main, or reads without a branch."""
    route = ROUTES.get(op)
    if route is None or not route.read_only or request is None:
        return None
    branch = _named_branch(request)
    if branch is None and op == "explain_table_query_plan":
        query = request.get("query") if isinstance(request, Mapping) else request.query
        branch = _named_branch(query) if query is not None else None
    return branch


def _requests_key(table: str, branch: str | None) -> str:
    """The key of a table's (or one branch's) recorded index builds."""
    return table if not branch or branch == "main" else f"{table}@branch:{branch}"


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


def _registration_shape_problem(location: Any) -> str | None:
    """The location rule of a registration that needs no server. A relative location follows
    ``backend.locations.remote_location_problem``; an absolute one (a URI or a path, the form
    servers report table locations in) is the server's to judge."""
    text = "" if location is None else str(location)
    if text.strip() and (urlparse(text).scheme or text.startswith(("/", "\\"))):
        return None
    return remote_location_problem(location)


def resolved_addresses(host: str, port: int | None) -> list[str]:
    """Every address ``host`` resolves to (empty when it does not resolve: the request then
    fails as it would anyway)."""
    try:
        found = socket.getaddrinfo(host, port or 443, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []
    return sorted({str(info[4][0]) for info in found})


def address_refusal(
    url: str, allow_targets: Sequence[str] = (), *, resolve: bool = True
) -> str | None:
    """Why the client must not connect to ``url`` (a link-local or cloud-metadata address, by
    name or by what the name resolves to), ``None``: it may. ``allow_targets``: a pattern that
    names this host explicitly allows it (``targets.names_host_explicitly``)."""
    parts = urlparse(url)
    host = parts.hostname or ""
    addresses = (
        resolved_addresses(host, parts.port)
        if resolve and connect_options.host_address(host) is None
        else []
    )
    problem = connect_options.address_problem(host, addresses)
    if problem is None:
        return None
    try:
        normal = targets.normal_form(url, realpath=os.path.realpath)
    except InvalidInputError:
        normal = None
    if normal is not None and targets.names_host_explicitly(normal, allow_targets):
        return None
    return (
        f"{redact_url(url)} is refused: {problem}; the console connects there only when an "
        "allowed target (lance-console --allow-target) names that host"
    )


class _AddressGuard(httpx.BaseTransport):
    """Refuses a request to a host name that now resolves to a refused address
    (:func:`address_refusal`) before anything is sent."""

    def __init__(self, inner: httpx.BaseTransport, allow_targets: Sequence[str]) -> None:
        self.inner = inner
        self.allow_targets = tuple(allow_targets)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        host = request.url.host
        if connect_options.host_address(host) is None:  # a literal was judged at connect
            origin = f"{request.url.scheme}://{request.url.netloc.decode('ascii')}/"
            refused = address_refusal(origin, self.allow_targets)
            if refused:
                raise InvalidInputError(refused)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


@namespace_boundary
class RestNamespaceClient(LanceNamespace):
    """A Lance REST Namespace client on one persistent ``httpx.Client``.

    Options: ``api_key``, ``auth_token``, ``delimiter`` (default ``$``), ``headers`` (extra
    headers), ``timeout`` (seconds, default 30), ``max_retries`` (default 3, read-only
    operations only), ``backoff`` (first retry's upper bound, seconds), ``retry_cap`` (longest
    backoff or ``Retry-After`` wait, default 10 s), ``jitter`` (default on), ``sleep``
    (callable used to wait), ``transport`` (an httpx transport), ``wire_log_size`` (default
    200, 0 disables), ``verify`` (TLS verification, passed to httpx), ``server_profile``
    (what the server implements, :data:`backend.capabilities.SERVER_PROFILES`),
    ``allow_targets`` (allowlist patterns: one that names a link-local or metadata host
    explicitly lets the client connect there; see the module docstring).
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
        server_profile: str | None = None,
        allow_targets: Sequence[str] | None = None,
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
        if isinstance(allow_targets, str):  # one pattern given as a property (text)
            allow_targets = [allow_targets]
        allowed = tuple(str(p) for p in (allow_targets or ()))
        refused = address_refusal(uri, allowed, resolve=transport is None)
        if refused:
            raise InvalidInputError(refused)
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
        inner = (
            transport
            if transport is not None
            else _AddressGuard(httpx.HTTPTransport(verify=tls.ssl_context(verify)), allowed)
        )
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
        self._profile = server_profile_named(server_profile)
        # What this client asked for when building vector indexes (table -> index -> fields):
        # the spec's index details say what the server applied, not what it was asked.
        self._index_requests: dict[str, dict[str, dict[str, Any]]] = {}
        # Operation -> the table where a write of it sent to a branch moved main instead (the
        # server ignores that operation's `branch`).
        self._branch_ignored: dict[str, str] = {}
        # Read operation -> whether this server honours its `branch` (probed once, on the first
        # read of that operation sent to a branch: :meth:`_check_branch_read`).
        self._branch_reads: dict[str, bool] = {}

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
        """What this client does. BatchCommitTables, RenameTable and DropNamespace CASCADE
        come from the connection's ``server_profile`` (:data:`backend.capabilities.
        SERVER_PROFILES`), else from what the server answered to such a request in this
        session, else ``None`` (unknown: the console offers the action and reports a refusal).
        Nothing is sent to find out: no read tells, and a probe would be a write
        (``probe`` is accepted for compatibility and sends nothing)."""
        known = self._capability
        return BackendCapabilities(
            kind="rest",
            honoured_index_params=None,
            progress_events=False,
            batch_commit=known("batch_commit_tables"),
            rename=known("rename_table"),
            drop_cascade=known("drop_namespace_cascade"),
            wire_log=True,
            server_profile=self._profile.name if self._profile else None,
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
        """Whether the server implements BatchCommitTables: the server profile's word, else
        what a batch commit of this session was answered, else ``None``. Sends nothing."""
        return self._capability("batch_commit_tables")

    def batch_commit_refusal(self) -> str | None:
        """Why this server cannot run a batch, when that is known (its server profile, or
        its answer to a batch commit of this session); ``None`` otherwise. Sends nothing."""
        with self._probe_lock:
            learned = self._probed.get("batch_commit_tables")
        if learned is False:
            why = "it refused a batch commit earlier in this session as not implemented"
        elif learned is None and self._profile is not None and self._profile.batch_commit is False:
            why = f"its server profile {self._profile.name!r} says so"
        else:
            return None
        return (
            f"this server does not implement BatchCommitTables ({why}): the batch cannot be "
            "committed here, whatever it holds"
        )

    def supports_rename(self) -> bool | None:
        """Whether the server implements RenameTable (as :meth:`supports_batch_commit`)."""
        return self._capability("rename_table")

    def _capability(self, op: str) -> bool | None:
        with self._probe_lock:
            if op in self._probed:
                return self._probed[op]
        return getattr(self._profile, _PROFILE_FIELDS[op], None) if self._profile else None

    def _learn(self, op: str, request: Any, response: httpx.Response) -> None:
        """Remember whether the server implements ``op`` from its answer to a real request:
        a success says yes, "unsupported" says no, any other refusal says nothing."""
        if op == "drop_namespace" and str(getattr(request, "behavior", "") or "").lower() == (
            "cascade"
        ):
            op = "drop_namespace_cascade"
        if op not in _PROFILE_FIELDS:
            return
        if 200 <= response.status_code < 300:
            answer: bool | None = True
        elif isinstance(
            error_map.error_from_response(ROUTES[op.replace("_cascade", "")], response),
            # a server without CASCADE answers as to RESTRICT: "not empty"
            (UnsupportedOperationError, NamespaceNotEmptyError)
            if op == "drop_namespace_cascade"
            else UnsupportedOperationError,
        ):
            answer = False
        else:
            return
        with self._probe_lock:
            self._probed[op] = answer

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
            # a request's own key or token is a secret as the connection's are: masked in
            # every message, log record and wire-log entry that echoes it
            register_secret(identity.api_key)
            register_secret(identity.auth_token)
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

    def _static_checks(self, op: str, req: Any) -> None:
        """The rules :func:`call` adds to ``request_rules`` that need no server: a batch's
        shape and each operation's own rules; the shape of a location to register."""
        if op == "batch_commit_tables":
            problem = batch_rules.first_error(
                batch_rules.static_problems(req, delimiter=self._delimiter)
            )
            if problem is not None:
                raise problem.error()
        if op == "register_table":
            problem_text = _registration_shape_problem(req.location)
            if problem_text:
                raise InvalidInputError(f"register_table: {problem_text}")

    def _checked(
        self,
        op: str,
        request: Any,
        data: Any = None,
        allow_latest: bool = False,
        delete_tags: bool = False,
    ) -> Any:
        """A single write that depends on what the server holds: the static rules, then one
        read of that state (:meth:`_guard`), then the request."""
        return self._run(
            op, request, data, lambda req: self._guard(op, req, allow_latest, delete_tags)
        )

    def _guard(self, op: str, req: Any, allow_latest: bool, delete_tags: bool = False) -> None:
        """The checks a server cannot make, each reading at most one object: the parent
        namespace of a CreateNamespace (NamespaceExists), the staged manifest of a new
        version (DescribeTable of the target), the latest version and the tags before a
        delete (with ``delete_tags``, the covered tags are deleted here, before the versions).
        DeclareTable, CreateTable, RegisterTable and RenameTable send the write alone: the
        server judges them; what the namespace's state says of them is the explicit
        preflight's (``backend.preflight``, ``backend.write_preflight``)."""

        def namespace_exists(parts: list[str]) -> bool:
            return self.exists("namespace_exists", parts)

        if op == "create_namespace":
            missing = ids.missing_parent(req.id or [], namespace_exists, delimiter=self._delimiter)
            if missing:
                raise NamespaceNotFoundError(f"{missing}: create it first")
        if op == "create_table_version":
            location = self.call("describe_table", ln.DescribeTableRequest(id=req.id)).location
            problem = remote_manifest_problem(location, req.manifest_path)
            if problem:
                raise InvalidInputError(f"create_table_version: {problem}")
        if op == "batch_delete_table_versions":
            latest = catalog_views.latest_version(self, req.id, req.branch)
            version_ranges.check_ranges(req.ranges or [], latest=latest, allow_latest=allow_latest)
            catalog_views.clear_covered_tags(
                self, req.id or [], req.ranges or [], latest, delete_tags=delete_tags
            )

    # ------------------------------------------------------------------ preflight

    @guarded("preflight")
    def preflight(self, request: Any, *, raise_first: bool = False) -> list[batch_rules.Problem]:
        """Every problem of a batch, or of one single write (a request model of
        ``backend.write_preflight.SINGLE_WRITES``: judged there, in bulk), against the
        server as it is now, read in bulk; nothing is written. :meth:`batch_commit_tables` checks only what needs no server (shape, ids,
        names, caps, ranges) and sends the batch: run this first, on purpose (the console's
        builder runs it once for Validate and once for Commit).

        Reads (``backend.spec.catalog_views.ListingView``): ListTables with declared tables and
        ListNamespaces of each namespace holding a table of the batch, every page;
        ListTableVersions of an existing table whose versions an operation needs;
        DescribeTable of an existing table given a version (the staged manifest lies in its
        staging areas, ``backend.locations.remote_manifest_problem``). A table declared
        earlier in the batch is known to exist, with no versions and the declared location
        (none given: the server places it, and judges the manifest).

        Returns the problems (warnings included, operations numbered from 1); with
        ``raise_first`` the first error is raised instead."""
        if write_preflight.single_write(request) is not None:
            problems = write_preflight.check_single(self, request, delimiter=self._delimiter)
            first = batch_rules.first_error(problems) if raise_first else None
            if first is not None:
                raise first.error()
            return problems
        req = self._coerce(ROUTES["batch_commit_tables"], request)
        assert isinstance(req, ln.BatchCommitTablesRequest)
        shape = batch_rules.operations_of(req)[1]
        if shape:  # not a batch of operations: nothing to read
            problems = shape
        else:
            view = catalog_views.ListingView(self, req)
            problems = batch_rules.check_batch(req, view, delimiter=self._delimiter)
        if not batch_rules.has_errors(problems):  # as the local commit: locations last
            problems += self._manifest_problems(req)
        unsupported = self.batch_commit_refusal()
        if unsupported:  # after the batch's own problems: no batch is valid on this server
            problems.append(batch_rules.Problem(None, unsupported, code=ErrorCode.UNSUPPORTED))
        first = batch_rules.first_error(problems) if raise_first else None
        if first is not None:
            raise first.error()
        return problems

    def _manifest_problems(self, req: ln.BatchCommitTablesRequest) -> list[batch_rules.Problem]:
        """The staged manifest of every CreateTableVersion against its table's location: the
        one the server reports (one DescribeTable per table), or the one declared earlier in
        the batch."""
        declared: dict[tuple[str, ...], str | None] = {}
        locations: dict[tuple[str, ...], str | None] = {}
        out: list[batch_rules.Problem] = []
        for i, operation in enumerate(req.operations or []):
            if operation.declare_table is not None:
                declared[tuple(operation.declare_table.id or [])] = operation.declare_table.location
            version = operation.create_table_version
            if version is None:
                continue
            key = tuple(version.id or [])
            if key in declared:
                location = declared[key]
                if location is None:
                    continue  # the server places a declared table; it judges the manifest
            else:
                if key not in locations:
                    locations[key] = self.describe_table(
                        ln.DescribeTableRequest(id=list(key))
                    ).location
                location = locations[key]
            problem = remote_manifest_problem(location, version.manifest_path)
            if problem:
                name = ids.format_id(list(key), self._delimiter)
                out.append(batch_rules.Problem(i, f"CreateTableVersion {name}: {problem}"))
        return out

    # ------------------------------------------------------------------ sending

    @guarded(lambda self, op="call", *args, **kwargs: str(kwargs.get("op", op)))
    def call(
        self, op: str, request: Any = None, request_data: Any = None, *, allow_latest: bool = False
    ) -> Any:
        """Run any operation of :data:`ROUTES` by name: ``backend.rules.request_rules`` and the
        other static rules, then one request. Nothing here reads the server's state (the
        typed single writes do, once: :meth:`_guard`; batches: :meth:`preflight`).
        ``allow_latest`` is accepted for compatibility; the latest-version guard is the typed
        ``batch_delete_table_versions``'s."""
        branch = _write_branch(op, request)
        if branch is not None:
            return self._branch_write(op, request, request_data, branch)
        if op in _TAG_BRANCH_WRITES and (branch := _named_branch(request)) is not None:
            return self._branch_tag_write(op, request, branch)
        branch = _read_branch(op, request)
        if branch is None:
            return self._call_translated(op, request, request_data)
        self._check_branch_read(op, request, branch)
        try:
            return self._call_translated(op, request, request_data)
        except TableNotFoundError as err:  # pylance's answer for a missing branch names paths
            if f"branch '{branch}' not found" not in str(err):
                raise
            table_id = list(_branch_field_id(request))
            raise make(
                ErrorCode.TABLE_BRANCH_NOT_FOUND,
                f"{op}: table {self._delimiter.join(table_id)} has no branch {branch!r}",
            ) from err

    def _require_branch(self, table_id: list[str], branch: str, op: str) -> None:
        """``TableBranchNotFoundError`` (nothing sent) when the table has no ``branch``: a
        server that ignores ``branch`` would write to main (or answer with main's data)."""
        found = dict(
            iter_all(self.list_table_branches, ln.ListTableBranchesRequest(id=table_id), "branches")
        )
        if branch not in found:
            names = ", ".join(sorted(found)) or "none"
            raise make(
                ErrorCode.TABLE_BRANCH_NOT_FOUND,
                f"{op}: table {self._delimiter.join(table_id)} has no branch {branch!r} (its "
                f"branches: {names}); nothing was sent",
            )

    def _honours_branch_reads(self, op: str, request: Any) -> bool:
        """Whether this server honours ``op``'s branch: learnt once per operation, by sending
        the same read to a branch that does not exist (:meth:`_probe_branch_read`)."""
        honoured = self._branch_reads.get(op)
        if honoured is None:
            honoured = self._probe_branch_read(op, request)
            self._branch_reads[op] = honoured
        return honoured

    def _check_branch_read(self, op: str, request: Any, branch: str) -> None:
        """Refuse a read of ``branch`` that this server would answer for main
        (:meth:`_honours_branch_reads`)."""
        if not self._honours_branch_reads(op, request):
            self._require_branch(_branch_field_id(request), branch, op)  # a missing one: said
            raise UnsupportedOperationError(
                f"{op} on branch {branch!r}: this server ignores the branch of {op} (it "
                "answered a request for a branch that does not exist), so it answers "
                f"{op} from main whatever the branch; nothing was read. Pick main, or use a "
                "server that honours branches"
            )

    def _check_branch_write(self, op: str, table_id: list[str], branch: str) -> None:
        """Refuse a write to ``branch`` (one the table has) before it is sent where this server
        describes a branch that does not exist as main: a server that ignores the branch of
        its first read cannot be trusted to apply a write to it (pylance's directory namespace
        behind its REST adapter ignores both, and applies the write to main). One DescribeTable
        per client learns it (:meth:`_honours_branch_reads`). The writes pylance applies to
        their branch even so (``LANCE_DIR.branch_writes_kept``: RestoreTable) are sent. Every
        write sent is still checked after it (:meth:`_branch_write`)."""
        if op in LANCE_DIR.branch_writes_kept or self._honours_branch_reads(
            "describe_table", {"id": table_id}
        ):
            return
        raise UnsupportedOperationError(
            f"{op} on branch {branch!r}: this server ignores the branch of DescribeTable (it "
            "described a branch that does not exist as main), so a write sent to the branch "
            "would land on main; nothing was sent. Write to main, or use a server that honours "
            "branches"
        )

    def _probe_branch_read(self, op: str, request: Any) -> bool:
        """Whether the server honours ``branch`` on read ``op``: the request (one row at
        most) sent to a branch that does not exist. Refused naming that branch: honoured;
        answered, or refused past the branch (an index it looked up on main): ignored. Any
        other failure is the request's own and is raised (nothing learnt)."""
        name = f"console-probe-{uuid.uuid4().hex[:12]}"
        req = self._coerce(ROUTES[op], request)
        # the latest version: a branch's version number may not exist on main, and a server
        # that ignores the branch would refuse that version instead of answering
        update: dict[str, Any] = {"branch": name}
        if "version" in type(req).model_fields:
            update["version"] = None
        if op in ("query_table", "analyze_table_query_plan"):
            update["k"] = 1
        query = getattr(req, "query", None)
        if op == "explain_table_query_plan" and query is not None:
            update["query"] = query.model_copy(update={"branch": name, "k": 1, "version": None})
        try:
            self._run(op, req.model_copy(update=update), None, None)
        except LanceNamespaceError as err:
            code = getattr(err, "code", None)
            if name in str(err) or code == ErrorCode.TABLE_BRANCH_NOT_FOUND:
                return True
            if code == ErrorCode.TABLE_INDEX_NOT_FOUND:
                return False
            raise
        return False

    def _on_branch(self, table_id: list[str], branch: str, version: int) -> bool:
        """``version`` is one of ``branch``'s (ListTableVersions of the branch)."""
        listed = list_all(
            self.list_table_versions, ln.ListTableVersionsRequest(id=table_id, branch=branch),
            "versions",
        )  # fmt: skip
        return any(int(v.version) == version for v in listed)

    def _branch_tag_write(self, op: str, request: Any, branch: str) -> Any:
        """A tag created or moved on ``branch`` (one the table has: ListTableBranches first),
        checked afterwards (GetTableTagVersion): a server that ignores ``branch`` puts the tag
        on main's version of that number and answers success. That is reported as an error saying where the tag is, and later tag
        writes on a branch of that operation are refused before they are sent."""
        req = self._coerce(ROUTES[op], request)
        table_id = list(getattr(req, "id", None) or [])
        seen = self._branch_ignored.get(op)
        if seen is not None:
            raise UnsupportedOperationError(
                f"{op} on branch {branch!r}: this server puts tags on main whatever the branch "
                f"(seen on table {seen}); nothing was sent"
            )
        self._require_branch(table_id, branch, op)
        self._check_branch_write(op, table_id, branch)
        tag = str(getattr(req, "tag", ""))
        where = self._delimiter.join(table_id)
        try:
            result = self._call_translated(op, req, None)
        except TableVersionNotFoundError:
            version = getattr(req, "version", None)
            if version is None or not self._on_branch(table_id, branch, int(version)):
                raise
            self._branch_ignored[op] = where
            raise UnsupportedOperationError(
                f"{op} on branch {branch!r}: branch {branch} has version {version}, but the "
                f"server looked for it on main: it ignores the branch of {op}. Nothing was "
                f"tagged; this client refuses {op} on a branch of this server from now on"
            ) from None
        got = self.call("get_table_tag_version", {"id": table_id, "tag": tag})
        landed = getattr(got, "branch", None) or "main"
        if landed != branch:
            self._branch_ignored[op] = where
            raise UnsupportedOperationError(
                f"{op} on branch {branch!r}: the server answered success but the tag {tag} "
                f"points at version {got.version} of {landed}, not of branch {branch} (table "
                f"{where}). Delete or move tag {tag} to undo it; this client refuses {op} on "
                "a branch of this server from now on"
            )
        return result

    def _call_translated(self, op: str, request: Any, request_data: Any) -> Any:
        """One request (:meth:`_run`); a bad filter or column named in the user's terms."""
        if op not in filter_errors.FILTER_FIELDS and op not in column_errors.COLUMN_FIELDS:
            return self._run(op, request, request_data, None)
        try:
            return self._run(op, request, request_data, None)
        except Exception as exc:  # the server's message of a bad filter or column, in the
            # user's terms
            schema = lambda: self._schema_of(request)  # noqa: E731 - read only for such errors
            if op in column_errors.COLUMN_FIELDS:
                mapped = column_errors.translate(exc, op, request, schema)
            else:
                mapped = filter_errors.translate(
                    exc, filter_errors.request_filter(op, request), schema
                )
                if mapped is exc:
                    mapped = self._fts_column_refusal(exc, op, request)
            if mapped is exc:
                raise
            raise mapped from exc

    def _fts_column_refusal(self, exc: Exception, op: str, request: Any) -> BaseException:
        """A full-text query's failure where it names a column it cannot search, said as the
        local backend refuses it up front (``query_rules.fts_column_problem``), else ``exc``.
        The table's schema is read only for a failed full-text query."""
        req = self._coerce(ROUTES[op], request)
        fts = getattr(req, "full_text_query", None)
        if fts is None:
            fts = getattr(getattr(req, "query", None), "full_text_query", None)
        if fts is None or not query_rules.fts_columns(fts):
            return exc
        try:
            kinds = {c.name: c.kind for c in columns_from_schema(self._schema_of(request))}
        except Exception:  # noqa: BLE001 - the server's own error then stands
            return exc
        problem = query_rules.fts_column_problem(kinds, fts)
        return in_user_terms(exc, problem) if problem else exc

    def _branch_write(self, op: str, request: Any, request_data: Any, branch: str) -> Any:
        """A write sent to ``branch``: refused before it is sent where the connection's server
        profile says the server applies it to main (``lance-dir``), or where the server
        describes a branch that does not exist as main (:meth:`_check_branch_write`); else
        checked afterwards: a server that ignores ``branch`` applies the write to main and
        answers success. Main's latest version is read before and after (DescribeTable); when
        main moved, the write is reported as an error saying so, and later branch writes of
        that operation are refused before they are sent."""
        req = self._coerce(ROUTES[op], request)
        table_id = list(getattr(req, "id", None) or [])
        profile = self._profile
        if (
            profile is not None
            and profile.branch_writes is False
            and op not in profile.branch_writes_kept
        ):
            raise UnsupportedOperationError(
                f"{op} on branch {branch!r}: the connection's server profile "
                f"({profile.name}) says this server applies {op} to main whatever the "
                "branch; nothing was sent"
            )
        seen = self._branch_ignored.get(op)
        if seen is not None:
            raise UnsupportedOperationError(
                f"{op} on branch {branch!r}: this server applies {op} to main whatever the "
                f"branch (seen on table {seen}); nothing was sent"
            )
        self._require_branch(table_id, branch, op)
        self._check_branch_write(op, table_id, branch)
        before = catalog_views.latest_version(self, table_id)
        result = self._call_translated(op, req, request_data)
        after = catalog_views.latest_version(self, table_id)
        if before != after:
            where = self._delimiter.join(table_id)
            self._branch_ignored[op] = where
            raise UnsupportedOperationError(
                f"{op} on branch {branch!r}: the server answered success but applied the write "
                f"to main, not to the branch: table {where}'s main moved from version {before} "
                f"to {after}. Restore main to version {before} to undo it (unless another "
                f"writer changed main at the same time); this client refuses {op} on a branch of "
                "this server from now on"
            )
        return result

    def _schema_of(self, request: Any) -> Any:
        """The schema of the table a request addresses: the columns a filter error names."""
        table_id, version = filter_errors.request_table(request)
        answer = self._run(
            "describe_table",
            {"id": table_id, "version": version, "load_detailed_metadata": True},
            None,
            None,
        )
        return answer.var_schema

    def _run(
        self, op: str, request: Any, request_data: Any, guard: Callable[[Any], None] | None
    ) -> Any:
        """The static rules, the request built (its body checked), ``guard`` (the reads of a
        typed single write), then the one request."""
        route = ROUTES.get(op)
        if route is None:
            raise InvalidInputError(f"unknown operation {op!r}")
        req = self._coerce(route, request)
        request_rules.check_request(op, req, delimiter=self._delimiter)
        self._static_checks(op, req)
        url = self._url(route, req)
        headers = self._headers(req)
        body, content_type = self._body(route, req, request_data)
        if guard is not None:
            guard(req)
        if content_type is not None:
            headers["Content-Type"] = content_type
        if route.response_kind == RESP_ARROW:
            headers["Accept"] = f"{ARROW_FILE}, {JSON_TYPE}"
        response = self._send(route, url, body, headers)
        self._learn(op, req, response)
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
            started = time.monotonic()
            try:
                response = http.send(request, stream=True)
                try:
                    self._read_answer(route, response, started)
                finally:
                    response.close()
            except httpx.TransportError as exc:
                if self._retry.should_retry(attempt, read_only=route.read_only, error=exc):
                    self._retry.wait(attempt)
                    continue
                raise error_map.transport_error(route, url, exc, self._timeout) from exc
            if self._retry.should_retry(attempt, read_only=route.read_only, response=response):
                self._retry.wait(attempt, response)
                continue
            return response

    def _read_answer(self, route: Route, response: httpx.Response, started: float) -> None:
        """Read a streamed answer's body within the connection's ``timeout`` for the whole
        attempt (``started``: when it was sent; httpx's own timeout is per read, and a server
        sending a byte now and then would hold the call for ever) and within
        :data:`MAX_ARROW_ANSWER_BYTES` / :data:`MAX_JSON_ANSWER_BYTES` (refused as it streams
        in, memory bounded); the wire log's entry gets what was read."""
        entry = response.extensions.get(ENTRY_EXTENSION)
        arrow = route.response_kind == RESP_ARROW and not response.headers.get(
            "content-type", ""
        ).startswith(JSON_TYPE)
        limit = MAX_ARROW_ANSWER_BYTES if arrow else MAX_JSON_ANSWER_BYTES
        chunks: list[bytes] = []
        size = 0
        try:
            declared = response.headers.get("content-length", "").strip()
            if declared.isascii() and declared.isdigit() and int(declared) > limit:
                raise error_map.too_large(route, response, limit)
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > limit:
                    raise error_map.too_large(route, response, limit)
                chunks.append(chunk)
                if self._timeout is not None and time.monotonic() - started > self._timeout:
                    raise httpx.ReadTimeout(
                        f"the answer did not arrive in full within {self._timeout} s",
                        request=response.request,
                    )
        except Exception as exc:
            if entry is not None:
                entry.finish(b"".join(chunks), f"{type(exc).__name__}: {exc}")
            raise
        content = b"".join(chunks)
        response._content = content  # what httpx's own read() sets: the body, decoded
        if entry is not None:
            entry.finish(content)

    # ------------------------------------------------------------------ responses

    def _parse(self, route: Route, response: httpx.Response) -> Any:
        """The answer as the route's response model, or its error. JSON nested too deeply to
        read (the parser's, the model's or our own walk's recursion) is a malformed answer."""
        try:
            return self._parse_answer(route, response)
        except RecursionError:
            raise error_map.malformed(
                route, response, "the JSON is nested too deeply to read"
            ) from None

    def _parse_answer(self, route: Route, response: httpx.Response) -> Any:
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
        if _LONG_DIGITS.search(raw) and (found := _beyond_int64(self._json(route, response))):
            where, number = found
            raise error_map.malformed(
                route,
                response,
                f"the number {number} ({where}) is beyond any count, size, time or version "
                "a table has (at most 2^63 - 1)",
            )
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
                    route, response, f"does not fit {model.__name__}: {validation_text(exc)}"
                ) from exc
        return self._with_context(response, result)

    @staticmethod
    def _build(route: Route, response: httpx.Response, **fields: Any) -> Any:
        assert route.response is not None
        try:
            return route.response(**fields)
        except (TypeError, ValueError) as exc:
            raise error_map.malformed(
                route, response, f"does not fit {route.response.__name__}: {validation_text(exc)}"
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
        return self._checked("create_namespace", request)

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
        return self._checked("register_table", request)

    def describe_table(self, request: ln.DescribeTableRequest) -> ln.DescribeTableResponse:
        return self.call("describe_table", request)

    def table_exists(self, request: ln.TableExistsRequest) -> ln.TableExistsResponse:
        return self.call("table_exists", request)

    def drop_table(self, request: ln.DropTableRequest) -> ln.DropTableResponse:
        return self.call("drop_table", request)

    def deregister_table(self, request: ln.DeregisterTableRequest) -> ln.DeregisterTableResponse:
        return self.call("deregister_table", request)

    def rename_table(self, request: ln.RenameTableRequest) -> ln.RenameTableResponse:
        return self._checked("rename_table", request)

    def restore_table(self, request: ln.RestoreTableRequest) -> ln.RestoreTableResponse:
        return self.call("restore_table", request)

    def list_table_versions(
        self, request: ln.ListTableVersionsRequest
    ) -> ln.ListTableVersionsResponse:
        return self.call("list_table_versions", request)

    def create_table_version(
        self, request: ln.CreateTableVersionRequest | dict[str, Any]
    ) -> ln.CreateTableVersionResponse:
        return self._checked("create_table_version", request)

    def describe_table_version(
        self, request: ln.DescribeTableVersionRequest | dict[str, Any]
    ) -> ln.DescribeTableVersionResponse:
        return self.call("describe_table_version", request)

    def batch_delete_table_versions(
        self,
        request: ln.BatchDeleteTableVersionsRequest | dict[str, Any],
        *,
        allow_latest: bool = False,
        delete_tags: bool = False,
    ) -> ln.BatchDeleteTableVersionsResponse:
        """Delete version ranges, as the local backend does: refused before sending when a
        range covers the table's latest version, unless ``allow_latest``, and when it covers a
        tagged version (the refusal names the tags; read with one ListTableTags of the table,
        every page), unless ``delete_tags``: then those tags are deleted first (DeleteTableTag
        each), then the versions."""
        return self._checked(
            "batch_delete_table_versions",
            request,
            allow_latest=allow_latest,
            delete_tags=delete_tags,
        )

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
        return self._checked("create_table", request, request_data)

    def declare_table(self, request: ln.DeclareTableRequest) -> ln.DeclareTableResponse:
        return self._checked("declare_table", request)

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
            key = _requests_key(self._delimiter.join(request.id or []), request.branch)
            self._index_requests.setdefault(key, {})[name] = index_rules.requested_build_fields(
                request
            )
        return response

    def index_requests(
        self, table_id: Sequence[str], branch: str | None = None
    ) -> dict[str, dict[str, Any]]:
        """Index name -> the vector build parameters this client sent (this session only), for
        the table's main or ``branch``."""
        key = _requests_key(self._delimiter.join(table_id), branch)
        return dict(self._index_requests.get(key, {}))

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


def _beyond_int64(data: Any, where: str = "") -> tuple[str, int] | None:
    """The first whole number of a parsed JSON answer outside the signed 64-bit range, with
    where it is (``versions.0.manifest_size``), else ``None``. The spec bounds its counts,
    sizes and versions from below only; the console's frames (``Int64``) and lance's own
    signed counts hold them up to 2^63 - 1, so an answer beyond is malformed, refused where it
    arrives rather than failing in whatever reads it."""
    if isinstance(data, bool):
        return None
    if isinstance(data, int):
        return (where or "the answer", data) if not -INT64_MAX - 1 <= data <= INT64_MAX else None
    if isinstance(data, dict):
        items: Any = data.items()
    elif isinstance(data, list):
        items = enumerate(data)
    else:
        return None
    for key, value in items:
        if found := _beyond_int64(value, f"{where}.{key}" if where else str(key)):
            return found
    return None
