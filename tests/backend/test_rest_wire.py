"""Wire details of RestNamespaceClient that a real server cannot show.

``httpx.MockTransport`` answers with every error code, Retry-After, malformed bodies, resets;
refused ports and silent servers are real sockets. Round trips against the real RestAdapter
live in ``test_rest_server.py``.
"""

from __future__ import annotations

import contextlib
import email.utils
import inspect
import json
import pickle
import random
import re
import shlex
import socket
import struct
import time
from collections.abc import Callable
from typing import Any

import httpx
import lance_namespace as ln
import lance_namespace_urllib3_client as urllib3_client
import lance_namespace_urllib3_client.api as urllib3_api
import pandas as pd
import pyarrow as pa
import pytest
from lance_namespace import errors as lne

import backend
from backend.errors import NamespaceConnectionError, NamespaceTimeoutError
from backend.redaction import REDACTED, is_secret_name, redact_url
from backend.rest import (
    ROUTES,
    RestNamespaceClient,
    RetryPolicy,
    WireLog,
    parse_retry_after,
    to_curl,
)
from backend.spec.operations import OPERATIONS
from backend.spec.paging import iter_pages, list_all
from tests.support import (
    batch,
    free_port,
    ipc_stream_bytes,
    make_table,
    namespaces_listener,
    op_declare,
    op_deregister,
)

BASE = "http://ns.test:2333"


# ---------------------------------------------------------------------------- helpers


class Server:
    """A scripted MockTransport: records requests, answers from a queue or a function."""

    def __init__(self, *answers: Any, default: Any = None):
        self.answers = list(answers)
        self.default = default if default is not None else httpx.Response(200, json={})
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        answer = self.answers.pop(0) if self.answers else self.default
        if callable(answer) and not isinstance(answer, httpx.Response):
            answer = answer(request)
        if isinstance(answer, Exception):
            raise answer
        return answer

    @property
    def last(self) -> httpx.Request:
        return self.requests[-1]


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make_client(server: Server, **options: Any) -> tuple[RestNamespaceClient, Sleeps]:
    sleeps = Sleeps()
    options.setdefault("sleep", sleeps)
    client = RestNamespaceClient(BASE, transport=httpx.MockTransport(server), **options)
    return client, sleeps


def err_json(code: int, message: str, status: int, **extra: Any) -> httpx.Response:
    return httpx.Response(status, json={"error": message, "code": code, **extra})


# A ListTableBranches answer: the table has branch ``b``.
BRANCH_B = {"branches": {"b": {"parent_version": 1, "create_at": 0, "manifest_size": 1}}}
# Real Arrow IPC stream bytes: the client checks every Arrow body before sending it.
IPC = ipc_stream_bytes(make_table(3))


def honours_branches(request: httpx.Request) -> httpx.Response | None:
    """A server's answer to a DescribeTable of a branch the table does not have (only ``b``
    exists): refused naming it, as a server that honours branches answers (the client learns
    that once before its first branch write). ``None`` for any other request."""
    if not request.url.path.endswith("/describe") or not request.content:
        return None
    branch = json.loads(request.content).get("branch")
    if branch in (None, "b"):
        return None
    return httpx.Response(404, json={"error": f"table t has no branch {branch}", "code": 22})


def table_not_found(name: str = "t") -> httpx.Response:
    return err_json(4, f"Table {name} not found", 404)


def namespace_not_found(name: str = "t") -> httpx.Response:
    return err_json(1, f"Namespace {name} not found", 404)


# Spec error codes 0-23 -> exception class, written out from the spec (not from our table).
SPEC_ERRORS: dict[int, tuple[type[Exception], int]] = {
    0: (lne.UnsupportedOperationError, 406),
    1: (lne.NamespaceNotFoundError, 404),
    2: (lne.NamespaceAlreadyExistsError, 409),
    3: (lne.NamespaceNotEmptyError, 409),
    4: (lne.TableNotFoundError, 404),
    5: (lne.TableAlreadyExistsError, 409),
    6: (lne.TableIndexNotFoundError, 404),
    7: (lne.TableIndexAlreadyExistsError, 409),
    8: (lne.TableTagNotFoundError, 404),
    9: (lne.TableTagAlreadyExistsError, 409),
    10: (lne.TransactionNotFoundError, 404),
    11: (lne.TableVersionNotFoundError, 404),
    12: (lne.TableColumnNotFoundError, 404),
    13: (lne.InvalidInputError, 400),
    14: (lne.ConcurrentModificationError, 409),
    15: (lne.PermissionDeniedError, 403),
    16: (lne.UnauthenticatedError, 401),
    17: (lne.ServiceUnavailableError, 503),
    18: (lne.InternalError, 500),
    19: (lne.InvalidTableStateError, 409),
    20: (lne.TableSchemaValidationError, 400),
    21: (lne.ThrottlingError, 429),
    22: (lne.TableBranchNotFoundError, 404),
    23: (lne.TableBranchAlreadyExistsError, 409),
}


# ---------------------------------------------------------------------------- route table


def _urllib3_serializers() -> dict[str, Callable[..., Any]]:
    api_client = urllib3_client.ApiClient(urllib3_client.Configuration(host=BASE))
    found: dict[str, Callable[..., Any]] = {}
    for name in dir(urllib3_api):
        cls = getattr(urllib3_api, name)
        if isinstance(cls, type) and name.endswith("Api"):
            api = cls(api_client)
            for attr in dir(api):
                if attr.startswith("_") and attr.endswith("_serialize"):
                    found.setdefault(attr[1 : -len("_serialize")], getattr(api, attr))
    return found


SERIALIZERS = _urllib3_serializers()


def test_route_table_covers_the_generated_client_exactly() -> None:
    assert set(ROUTES) == set(SERIALIZERS)
    # ... and the spec's operation table, each route taking its models from there.
    assert set(ROUTES) == set(OPERATIONS)


@pytest.mark.parametrize("op", sorted(SERIALIZERS))
def test_route_matches_generated_client(op: str) -> None:
    """Method, path, query parameters and body presence agree with the generated client."""
    route = ROUTES[op]
    fn = SERIALIZERS[op]
    kwargs: dict[str, Any] = {}
    for name in inspect.signature(fn).parameters:
        if name in ("_request_auth", "_content_type", "_headers"):
            kwargs[name] = None
        elif name == "_host_index":
            kwargs[name] = 0
        elif name in ("id", "index_name"):
            kwargs[name] = "X"
        elif name == "body":
            kwargs[name] = b"arrow"
        elif name.endswith("_request") or name == "request_body":
            kwargs[name] = {"k": "v"}
        else:
            kwargs[name] = "1"  # every optional query parameter set
    method, url, _headers, body, _post = fn(**kwargs)
    parsed = httpx.URL(url)
    expected_path = route.path.replace("{id}", "X").replace("{index_name}", "X")
    assert method == route.method
    assert parsed.path == expected_path
    assert {k for k, _ in parsed.params.multi_items()} == {"delimiter", *route.query}
    assert (body is None) == (route.body == "none")


def test_every_abc_operation_is_implemented() -> None:
    skipped = {"namespace_id", "create_empty_table"}  # id is ours; create_empty_table removed
    abc_ops = {
        n
        for n, f in vars(ln.LanceNamespace).items()
        if callable(f) and not n.startswith("_") and n not in skipped
    }
    assert abc_ops <= set(ROUTES)
    for op in ROUTES:
        assert getattr(RestNamespaceClient, op) is not getattr(ln.LanceNamespace, op, None), op


def test_connect_returns_a_lance_namespace() -> None:
    client = backend.connect("http://127.0.0.1:9", max_retries=0)
    assert isinstance(client, ln.LanceNamespace)
    assert isinstance(client, RestNamespaceClient)
    client.close()


# ---------------------------------------------------------------------------- errors


@pytest.mark.parametrize("code", sorted(SPEC_ERRORS))
def test_error_code_maps_to_class(code: int) -> None:
    cls, status = SPEC_ERRORS[code]
    server = Server(
        err_json(
            code,
            f"failure number {code}",
            status,
            type="https://lance.org/errors/x",
            detail=f"detail {code}",
            instance=f"/v1/table/t/describe#{code}",
        )
    )
    client, sleeps = make_client(server, max_retries=0)
    with pytest.raises(cls) as info:
        client.describe_table(ln.DescribeTableRequest(id=["t"]))
    err = info.value
    assert type(err) is cls
    assert err.code == code
    assert str(err) == f"failure number {code}"
    assert err.status == status
    assert err.server_message == f"failure number {code}"
    assert err.detail == f"detail {code}"
    assert err.instance == f"/v1/table/t/describe#{code}"
    assert err.error_type == "https://lance.org/errors/x"
    assert backend.describe_error(err)["code"] == code


def test_unknown_code_is_internal_error() -> None:
    client, _ = make_client(Server(err_json(99, "from the future", 418)))
    with pytest.raises(lne.InternalError) as info:
        client.create_namespace(ln.CreateNamespaceRequest(id=["a"]))
    assert type(info.value) is lne.InternalError
    assert info.value.status == 418
    assert str(info.value) == "from the future"


def test_not_supported_under_internal_code_is_unsupported() -> None:
    msg = "Not supported: batch_commit_tables not implemented, namespace.rs:385:13"
    server = Server(err_json(18, msg, 500))
    client, _ = make_client(server)
    with pytest.raises(lne.UnsupportedOperationError) as info:
        client.batch_commit_tables(batch(op_declare(["t"])))
    assert info.value.status == 500
    assert [r.url.path for r in server.requests] == ["/v1/table/batch-commit"]  # nothing else


def test_error_object_with_nested_message() -> None:
    """The adapter's query-parameter parse failure: {"error": {"message": ...}}, no code."""
    body = {"error": {"message": "Failed to parse create_table properties as JSON"}}
    client, _ = make_client(Server(httpx.Response(400, json=body)))
    with pytest.raises(lne.InvalidInputError, match="Failed to parse create_table"):
        client.create_table(ln.CreateTableRequest(id=["t"]), IPC)


@pytest.mark.parametrize(
    ("status", "ctype", "body", "cls"),
    [
        (502, "text/plain", "502 Bad Gateway: upstream nginx could not connect", lne.InternalError),
        (503, "text/html", "<html><body><h1>Service Unavailable</h1></body></html>", lne.ServiceUnavailableError),
        (401, "text/html", "<html>Login required</html>", lne.UnauthenticatedError),
        (403, "text/plain", "forbidden by proxy", lne.PermissionDeniedError),
        (404, "text/plain", "", lne.UnsupportedOperationError),
        (429, "text/plain", "slow down", lne.ThrottlingError),
        (500, "text/html", "<html>" + "x" * 1000 + "</html>", lne.InternalError),
    ],
)  # fmt: skip
def test_non_json_error_body(status: int, ctype: str, body: str, cls: type) -> None:
    server = Server(httpx.Response(status, text=body, headers={"content-type": ctype}))
    client, _ = make_client(server)
    with pytest.raises(cls) as info:  # a write: never retried, so one answer is enough
        client.create_namespace(ln.CreateNamespaceRequest(id=["a"]))
    message = str(info.value)
    assert f"HTTP {status}" in message
    assert BASE in message
    assert body[:150] in message
    assert "x" * 300 not in message  # only the first ~200 characters
    assert info.value.status == status
    assert len(server.requests) == 1


def test_malformed_json_success_body() -> None:
    client, _ = make_client(
        Server(httpx.Response(200, text="{not json", headers={"content-type": "application/json"}))
    )
    with pytest.raises(lne.InternalError, match="malformed response") as info:
        client.list_tables(ln.ListTablesRequest(id=["a"]))
    assert "{not json" in str(info.value)
    assert info.value.status == 200


@pytest.mark.parametrize("payload", [[1, 2], {"tables": 5}, "text"])
def test_success_body_of_the_wrong_shape(payload: Any) -> None:
    client, _ = make_client(Server(httpx.Response(200, json=payload)))
    with pytest.raises(lne.InternalError, match="malformed response"):
        client.list_tables(ln.ListTablesRequest(id=["a"]))


def test_an_answer_of_the_wrong_types_names_its_fields_not_pydantics_text() -> None:
    client, _ = make_client(Server(httpx.Response(200, json={"version": "x", "location": 5})))
    with pytest.raises(lne.InternalError, match="malformed response") as info:
        client.describe_table(ln.DescribeTableRequest(id=["a"]))
    message = str(info.value)
    assert (
        "does not fit DescribeTableResponse: version: Input should be a valid integer (got "
        "'x'); location: Input should be a valid string (got 5)"
    ) in message
    assert "pydantic" not in message and "type=" not in message and "\n" not in message


# A time an answer may give that no frame of the console can hold (pandas' times end on 11
# April 2262; this is in the year 3170843), and one that is a time (14 November 2023).
BEYOND_MILLIS, GOOD_MILLIS = 10**17, 1_700_000_000_000


def test_times_beyond_the_calendar_are_unknown_times_not_errors() -> None:
    """A server's version and branch times are untrusted: one no time can hold is read as an
    unknown time by every reader of it (``spec.fields.epoch_millis``), never raised (pandas'
    ``OutOfBoundsDatetime``, or a frame that fails where it is drawn); the good time beside it
    is read as it is."""
    from backend.services import branches, table_stats
    from backend.services import versions as vsv

    listed = [
        {"version": 3, "manifest_path": "c", "timestamp_millis": BEYOND_MILLIS},
        {"version": 2, "manifest_path": "b", "timestamp_millis": 2**63 - 1},
        {"version": 1, "manifest_path": "a", "timestamp_millis": GOOD_MILLIS},
    ]
    made = {
        "far": {"parent_version": 1, "create_at": BEYOND_MILLIS // 1000, "manifest_size": 1},
        "good": {"parent_version": 1, "create_at": GOOD_MILLIS // 1000, "manifest_size": 1},
    }

    def answer(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path.endswith("/version/list"):
            return httpx.Response(200, json={"versions": listed})
        if path.endswith("/version/describe"):
            return httpx.Response(200, json={"version": listed[0]})
        if path.endswith("/branches/list"):
            return httpx.Response(200, json={"branches": made})
        return table_not_found()

    client, _ = make_client(Server(default=answer))
    good = pd.Timestamp(GOOD_MILLIS, unit="ms", tz="UTC")
    frame = vsv.list_versions(client, ["t"])
    assert frame["version"].tolist() == [3, 2, 1]
    assert frame["timestamp"].isna().tolist() == [True, True, False]
    assert frame["timestamp"].iloc[2] == good
    index = vsv.VersionIndex(client, ("t",)).frame(3)
    assert index["timestamp"].isna().tolist() == [True, True, False]
    described = vsv.describe_version(client, ["t"], 3)
    assert described["timestamp_millis"] == BEYOND_MILLIS and "timestamp" not in described
    assert table_stats._committed(client, ["t"], 3) is None  # the tables list's last change
    found = branches.list_branches(client, ["t"]).set_index("branch")["created"]
    assert found["good"] == good.floor("s") and pd.isna(found["far"])
    # a branch named main, or with no name, is none: the pickers offer main once
    made["main"] = made[" "] = made["good"]
    assert branches.branch_names(client, ["t"]) == ["main", "far", "good"]


def test_a_time_in_an_answer_is_a_whole_number_of_milliseconds_a_frame_can_hold() -> None:
    from backend.spec.fields import LAST_MILLIS, epoch_millis

    assert pd.Timestamp.max.value // 1_000_000 == LAST_MILLIS  # pandas' last millisecond
    assert pd.Timestamp(LAST_MILLIS, unit="ms").year == 2262
    for value, read in [
        (GOOD_MILLIS, GOOD_MILLIS),
        (str(GOOD_MILLIS), GOOD_MILLIS),
        (0, 0),
        (LAST_MILLIS, LAST_MILLIS),
        (LAST_MILLIS + 1, None),
        (BEYOND_MILLIS, None),
        (-1, None),
        (True, None),
        (1.5, None),
        ("soon", None),
        (None, None),
    ]:
        assert epoch_millis(value) == read, value


# The number every answer's whole numbers stay within (the spec bounds them from below only).
BEYOND_INT64 = 2**64 - 1  # u64::MAX, what a Rust server might send for "not known"


@pytest.mark.parametrize(
    ("op", "call", "body", "where"),
    [
        (
            "list_table_versions",
            lambda c: c.list_table_versions(ln.ListTableVersionsRequest(id=["t"])),
            {"versions": [{"version": 1, "manifest_path": "a", "manifest_size": BEYOND_INT64}]},
            "versions.0.manifest_size",
        ),
        (
            "get_table_stats",
            lambda c: c.get_table_stats(ln.GetTableStatsRequest(id=["t"])),
            {"total_bytes": BEYOND_INT64, "num_rows": 3},
            "total_bytes",
        ),
        (
            "count_table_rows",
            lambda c: c.count_table_rows(ln.CountTableRowsRequest(id=["t"])),
            {"count": 2**63},
            "count",
        ),
    ],
)
def test_a_number_beyond_64_bits_in_an_answer_is_a_malformed_answer(
    op: str, call: Callable[[Any], Any], body: dict[str, Any], where: str
) -> None:
    """The one check of every JSON answer: a whole number no count, size or version can be
    (the console's frames and lance's counts hold 2^63 - 1) is refused where it arrives, with
    where it is, not met later as an OverflowError by whatever reads it."""
    client, _ = make_client(Server(default=httpx.Response(200, json=body)))
    with pytest.raises(lne.InternalError, match="malformed response") as info:
        call(client)
    said = str(info.value)
    assert f"({where}) is beyond any count, size, time or version a table has" in said
    assert said.startswith(op)
    # a long run of digits in a string is no number: the answer is read as it is
    fine, _ = make_client(
        Server(default=httpx.Response(200, json={"versions": [
            {"version": 1, "manifest_path": "9" * 40, "manifest_size": 2**63 - 1}
        ]}))
    )  # fmt: skip
    [entry] = fine.list_table_versions(ln.ListTableVersionsRequest(id=["t"])).versions
    assert (entry.manifest_path, entry.manifest_size) == ("9" * 40, 2**63 - 1)


def test_an_answer_without_a_row_count_is_an_error_never_zero_rows() -> None:
    """CountTableRows' count is optional in the spec: a server leaving it out must not make a
    delete, a staged change or a recall sample see an empty table."""
    from backend.services.search.query import count_rows

    for body in ({}, {"count": None}):
        client, _ = make_client(Server(default=httpx.Response(200, json=body)))
        with pytest.raises(lne.InternalError, match="without a row count"):
            count_rows(client, ["t"], version=None, filter=None)
    client, _ = make_client(Server(default=httpx.Response(200, json={"count": 7})))
    assert count_rows(client, ["t"], version=None, filter=None) == 7


def _arrow_answer(table: pa.Table) -> httpx.Response:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    body = sink.getvalue().to_pybytes()
    return httpx.Response(
        200, content=body, headers={"content-type": "application/vnd.apache.arrow.file"}
    )


VEC = pa.list_(pa.float32(), 2)


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (pa.table({"vec": pa.array([[1.0, 2.0]], VEC)}), "has no _rowid column"),
        (
            pa.table({"_rowid": pa.array([None], pa.uint64()), "vec": pa.array([[1, 2]], VEC)}),
            "holds _rowid values that are not row ids",
        ),
        (
            pa.table({"_rowid": ["x"], "vec": pa.array([[1.0, 2.0]], VEC)}),
            "holds _rowid values that are not row ids",
        ),
        (
            pa.table({"_rowid": pa.array([1], pa.uint64()), "vec": pa.array([None], VEC)}),
            "has no vector in 'vec'",
        ),
        (
            pa.table({"_rowid": pa.array([1], pa.uint64()), "vec": pa.array([[1.0, None]], VEC)}),
            "holds a vector in 'vec' that is not numbers",
        ),
        (
            pa.table({"_rowid": pa.array([], pa.uint64()), "vec": pa.array([], VEC)}),
            "answered no row at position",
        ),
    ],
    ids=["no-rowid", "null-rowid", "text-rowid", "null-vector", "null-in-vector", "no-row"],
)
def test_a_sampled_row_the_server_answers_badly_is_an_error_in_words(
    answer: pa.Table, said: str
) -> None:
    """A recall sample reads each row's id and vector from QueryTable's Arrow answer: one a
    server sends without them (a server ignoring ``with_row_id``), or with nulls, or with no
    row, is an ``InternalError`` saying so, not a KeyError or a TypeError from the reader."""
    from backend.services.tuning.measure import sample_queries

    def server(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/count_rows"):
            return httpx.Response(200, json={"count": 20})
        return _arrow_answer(answer)

    client, _ = make_client(Server(default=server))
    with pytest.raises(lne.InternalError, match=re.escape(said)):
        sample_queries(client, ["t"], "vec", 3, 0)


def test_a_search_answer_is_read_for_row_ids_each_once() -> None:
    """The neighbours of a sampled row: the answer's row ids, the row itself left out, each
    row once (a server repeating one does not count it twice); no row ids, an error."""
    from backend.services.tuning.measure import _neighbours, _Query

    query = _Query(5, [1.0, 2.0], 0)
    rows = pa.table({"_rowid": pa.array([5, 7, 7, 8, 7, 9], pa.uint64())})
    client, _ = make_client(Server(default=lambda _r: _arrow_answer(rows)))
    ids, _ms = _neighbours(client, ["t"], query, "vec", 3, {})
    assert ids == [7, 8, 9]
    bare = pa.table({"vec": pa.array([[1.0, 2.0]], VEC)})
    client, _ = make_client(Server(default=lambda _r: _arrow_answer(bare)))
    with pytest.raises(lne.InternalError, match="the search of row 5 has no _rowid column"):
        _neighbours(client, ["t"], query, "vec", 3, {})


def test_coverage_is_known_only_where_both_counts_are() -> None:
    """An index the server gives indexed rows for and no unindexed count has no coverage to
    show (it was 100%: the missing count read as 0), on the Indexes page's table and in its
    coverage history; with both counts, indexed / (indexed + unindexed)."""
    from backend.services import index_overview as ixo

    listed: dict[str, Any] = {
        "index_name": "a",
        "index_uuid": "u",
        "columns": ["vec"],
        "status": "ok",
    }

    def server(counts: dict[str, int]) -> Callable[[httpx.Request], httpx.Response]:
        def answer(request: httpx.Request) -> httpx.Response:
            path = request.url.path
            if path.endswith("/index/list"):
                return httpx.Response(200, json={"indexes": [{**listed, **counts}]})
            if path.endswith("/index/a/stats"):
                return httpx.Response(200, json=counts)
            if path.endswith("/version/list"):
                return httpx.Response(
                    200, json={"versions": [{"version": 1, "manifest_path": "a"}]}
                )
            return table_not_found()

        return answer

    for counts, coverage in (
        ({"num_indexed_rows": 5}, None),
        ({"num_indexed_rows": 6, "num_unindexed_rows": 2}, 0.75),
    ):
        client, _ = make_client(Server(default=server(counts)))
        shown = ixo.index_overview(client, ["t"])["coverage"].iloc[0]
        history = ixo.coverage_history(client, ["t"])["coverage"].iloc[0]
        if coverage is None:
            assert pd.isna(shown) and pd.isna(history), counts
        else:
            assert shown == history == coverage, counts


# ---------------------------------------------------------------------------- retries


def test_retry_after_seconds_honoured_for_reads() -> None:
    server = Server(
        httpx.Response(503, json={"error": "busy", "code": 17}, headers={"Retry-After": "2"}),
        httpx.Response(200, json={"tables": ["t"]}),
    )
    client, sleeps = make_client(server)
    assert client.list_tables(ln.ListTablesRequest(id=["a"])).tables == ["t"]
    assert sleeps == [2.0]
    assert len(server.requests) == 2
    assert [e.attempt for e in client.wire_log] == [1, 2]


def test_retry_after_http_date_honoured_and_capped() -> None:
    soon = email.utils.formatdate(time.time() + 5, usegmt=True)
    later = email.utils.formatdate(time.time() + 3600, usegmt=True)
    server = Server(
        httpx.Response(429, json={"error": "slow", "code": 21}, headers={"Retry-After": soon}),
        httpx.Response(429, json={"error": "slow", "code": 21}, headers={"Retry-After": later}),
        httpx.Response(429, json={"error": "slow", "code": 21}, headers={"Retry-After": "900"}),
        httpx.Response(200, json={"properties": {}}),
    )
    client, sleeps = make_client(server, retry_cap=7.0)
    client.describe_namespace(ln.DescribeNamespaceRequest(id=["a"]))
    assert 3.0 <= sleeps[0] <= 5.0
    assert sleeps[1:] == [7.0, 7.0]


def test_parse_retry_after() -> None:
    now = 1_000_000.0
    assert parse_retry_after("3", now=now) == 3.0
    assert parse_retry_after("0.5", now=now) == 0.5
    assert parse_retry_after(email.utils.formatdate(now + 10, usegmt=True), now=now) == 10.0
    assert parse_retry_after(email.utils.formatdate(now - 10, usegmt=True), now=now) == 0.0
    assert parse_retry_after("soon", now=now) is None
    assert parse_retry_after(None) is None


def test_503_and_429_retried_with_exponential_backoff_then_succeed() -> None:
    server = Server(
        httpx.Response(503, text="busy"),
        httpx.Response(429, json={"error": "slow", "code": 21}),
        httpx.Response(200, json={"namespaces": ["x"]}),
    )
    client, sleeps = make_client(server, backoff=0.01, jitter=False)
    assert client.list_namespaces(ln.ListNamespacesRequest()).namespaces == ["x"]
    assert sleeps == [0.01, 0.02]


def test_retries_exhausted_raise_the_last_answer() -> None:
    server = Server(default=httpx.Response(503, json={"error": "down", "code": 17}))
    client, sleeps = make_client(server, max_retries=2, backoff=0.01, jitter=False)
    with pytest.raises(lne.ServiceUnavailableError, match="down"):
        client.describe_table(ln.DescribeTableRequest(id=["t"]))
    assert len(server.requests) == 3
    assert sleeps == [0.01, 0.02]


# (operation, request, extra arguments, answers to the read-only checks sent before the write)
WRITES: list[tuple[str, Any, tuple[Any, ...], tuple[httpx.Response, ...]]] = [
    ("create_namespace", ln.CreateNamespaceRequest(id=["a"]), (), ()),
    ("declare_table", ln.DeclareTableRequest(id=["t"]), (), ()),
    ("drop_table", ln.DropTableRequest(id=["t"]), (), ()),
    ("deregister_table", ln.DeregisterTableRequest(id=["t"]), (), ()),
    ("alter_transaction", ln.AlterTransactionRequest.from_dict(
            {"id": ["t", "tx"], "actions": [{"setStatusAction": {"status": "Canceled"}}]}
        ), (), ()),
    ("batch_commit_tables", batch(op_declare(["t"])), (), ()),
    ("create_table_index", ln.CreateTableIndexRequest(id=["t"], column="c", index_type="BTREE"), (), ()),
    ("create_table", ln.CreateTableRequest(id=["t"]), (IPC,), ()),
    ("create_table_in_a_namespace", ln.CreateTableRequest(id=["a", "t"]), (IPC,), ()),
    ("create_namespace_in_a_namespace", ln.CreateNamespaceRequest(id=["a", "b"]), (),
     (httpx.Response(200, json={}),)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("op", "request_model", "extra", "checks"), WRITES, ids=[w[0] for w in WRITES]
)
def test_writes_are_never_retried(
    op: str, request_model: Any, extra: tuple[Any, ...], checks: tuple[httpx.Response, ...]
) -> None:
    op = op.removesuffix("_in_a_namespace")
    assert not ROUTES[op].read_only
    server = Server(
        *checks,
        httpx.Response(503, json={"error": "busy", "code": 17}, headers={"Retry-After": "1"}),
        default=httpx.Response(200, json={}),
    )
    client, sleeps = make_client(server)
    with pytest.raises(lne.ServiceUnavailableError):
        getattr(client, op)(request_model, *extra)
    assert len(server.requests) == len(checks) + 1
    assert [e.op for e in client.wire_log][-1] == op
    assert sleeps == []


def test_connection_reset_retried_for_reads() -> None:
    server = Server(
        httpx.ReadError("Connection reset by peer"),
        httpx.RemoteProtocolError("Server disconnected without sending a response."),
        httpx.Response(200, json={"versions": []}),
    )
    client, sleeps = make_client(server, backoff=0.01, jitter=False)
    resp = client.list_table_versions(ln.ListTableVersionsRequest(id=["t"]))
    assert resp.versions == []
    assert len(server.requests) == 3
    assert sleeps == [0.01, 0.02]
    errors = [e.error for e in client.wire_log]
    assert "Connection reset by peer" in errors[0]
    assert errors[2] is None


def test_connection_reset_not_retried_for_writes() -> None:
    server = Server(httpx.ReadError("Connection reset by peer"))
    client, sleeps = make_client(server)
    with pytest.raises(
        NamespaceConnectionError, match=r"cannot reach http://ns\.test:2333/"
    ) as info:
        client.drop_table_index(ln.DropTableIndexRequest(id=["t"], index_name="i"))
    assert isinstance(info.value, lne.ServiceUnavailableError)
    assert len(server.requests) == 1
    assert sleeps == []


def test_refused_port_is_a_connection_error_naming_the_url() -> None:
    port = free_port()
    sleeps = Sleeps()
    client = RestNamespaceClient(f"http://127.0.0.1:{port}", sleep=sleeps, max_retries=2)
    with pytest.raises(NamespaceConnectionError) as info:
        client.list_namespaces(ln.ListNamespacesRequest())
    assert not isinstance(info.value, NamespaceTimeoutError)
    assert f"http://127.0.0.1:{port}/v1/namespace/%24/list" in str(info.value)
    assert info.value.url == f"http://127.0.0.1:{port}/v1/namespace/%24/list"
    assert len(sleeps) == 2  # a read: retried, then given up
    assert len(client.wire_log) == 3
    client.close()


def test_dns_failure_is_a_connection_error() -> None:
    client = RestNamespaceClient("http://no-such-host.invalid", max_retries=0)
    with pytest.raises(NamespaceConnectionError, match=r"no-such-host\.invalid"):
        client.describe_namespace(ln.DescribeNamespaceRequest(id=["a"]))
    client.close()


def test_silent_server_times_out_naming_the_url() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # the kernel accepts the connection; nobody ever answers
    port = listener.getsockname()[1]
    sleeps = Sleeps()
    client = RestNamespaceClient(f"http://127.0.0.1:{port}", timeout=0.2, sleep=sleeps)
    try:
        started = time.perf_counter()
        with pytest.raises(NamespaceTimeoutError) as info:
            client.list_tables(ln.ListTablesRequest(id=["a"]))
        assert time.perf_counter() - started < 5
        assert f"http://127.0.0.1:{port}/v1/namespace/a/table/list" in str(info.value)
        assert "0.2 s" in str(info.value)
        assert sleeps == []  # the caller already waited `timeout`: not retried
        assert len(client.wire_log) == 1
        assert client.wire_log.last().status is None
    finally:
        client.close()
        listener.close()


def test_closed_client_raises_connection_error() -> None:
    server = Server(default=httpx.Response(200, json={"namespaces": []}))
    with make_client(server)[0] as client:
        client.list_namespaces(ln.ListNamespacesRequest())
    with pytest.raises(NamespaceConnectionError, match="closed"):
        client.list_namespaces(ln.ListNamespacesRequest())


# ---------------------------------------------------------------------------- encoding


def test_odd_names_are_percent_encoded_in_one_path_segment() -> None:
    """Existing odd-but-safe names (spaces, quotes, '?', '#', '%', unicode) stay addressable."""
    server = Server(httpx.Response(200, json={"table": "x"}))
    client, _ = make_client(server)
    client.describe_table(ln.DescribeTableRequest(id=["a b", "c?d#e f%g'", "é~ü.-_"]))
    assert server.last.url.raw_path == (
        b"/v1/table/a%20b%24c%3Fd%23e%20f%25g%27%24%C3%A9~%C3%BC.-_/describe"
        b"?with_table_uri=false&check_declared=false"
    )


def test_index_name_is_encoded_too() -> None:
    server = Server(httpx.Response(200, json={}))
    client, _ = make_client(server)
    client.drop_table_index(ln.DropTableIndexRequest(id=["t"], index_name="my idx?1#é"))
    assert server.last.url.raw_path == b"/v1/table/t/index/my%20idx%3F1%23%C3%A9/drop"


@pytest.mark.parametrize("index_name", ["..", ".", "a/b", "a\\b", "x\ny", ""])
@pytest.mark.parametrize("op", ["drop_table_index", "describe_table_index_stats"])
def test_index_names_that_could_change_the_route_are_refused_before_sending(
    op: str, index_name: str
) -> None:
    server = Server()
    client, _ = make_client(server)
    model = ROUTES[op].request
    with pytest.raises(lne.InvalidInputError):
        getattr(client, op)(model(id=["t"], index_name=index_name))
    assert server.requests == []
    assert len(client.wire_log) == 0


@pytest.mark.parametrize("name", ["..", ".", "my idx", "é", "-lead", "a/b"])
def test_new_index_names_follow_the_creation_rule(name: str) -> None:
    server = Server()
    client, _ = make_client(server)
    with pytest.raises(lne.InvalidInputError, match="index name"):
        client.create_table_index(
            ln.CreateTableIndexRequest(id=["t"], column="id", index_type="BTREE", name=name)
        )
    assert server.requests == []


def test_root_namespace_is_the_delimiter() -> None:
    server = Server(default=httpx.Response(200, json={"namespaces": []}))
    client, _ = make_client(server)
    client.list_namespaces(ln.ListNamespacesRequest())
    client.list_namespaces(ln.ListNamespacesRequest(id=[]))
    assert [r.url.raw_path for r in server.requests] == [b"/v1/namespace/%24/list"] * 2


def test_custom_delimiter_is_sent_as_query_parameter() -> None:
    server = Server(default=httpx.Response(200, json={"namespaces": []}))
    client, _ = make_client(server, delimiter=":")
    client.list_namespaces(ln.ListNamespacesRequest(id=["a", "b"], limit=5))
    client.list_namespaces(ln.ListNamespacesRequest())
    assert server.requests[0].url.raw_path == b"/v1/namespace/a%3Ab/list?delimiter=%3A&limit=5"
    assert server.requests[1].url.raw_path == b"/v1/namespace/%3A/list?delimiter=%3A"


@pytest.mark.parametrize("delimiter", sorted("$.:|~^!@"))
def test_every_allowed_delimiter_keeps_the_root_namespace_in_the_path(delimiter: str) -> None:
    """The root namespace is the delimiter as one path segment, whichever delimiter is used:
    a '.' segment must not be collapsed away by URL normalisation."""
    server = Server(default=httpx.Response(200, json={"namespaces": []}))
    client, _ = make_client(server, delimiter=delimiter)
    client.list_namespaces(ln.ListNamespacesRequest())
    path = server.last.url.raw_path.split(b"?")[0]
    assert path.startswith(b"/v1/namespace/") and path.endswith(b"/list")
    segment = path[len(b"/v1/namespace/") : -len(b"/list")]
    assert httpx.URL("http://h/" + segment.decode()).path == "/" + delimiter
    if delimiter != "$":
        assert server.last.url.params["delimiter"] == delimiter


@pytest.mark.parametrize("delimiter", ["/", "\\", "", "$$", "a", " ", "%", "#", "?"])
def test_unsafe_delimiters_are_refused(delimiter: str) -> None:
    with pytest.raises(lne.InvalidInputError, match="delimiter"):
        RestNamespaceClient(BASE, delimiter=delimiter, transport=httpx.MockTransport(Server()))


def test_default_delimiter_is_not_sent() -> None:
    server = Server(default=httpx.Response(200, json={}))
    client, _ = make_client(server)
    client.create_namespace(ln.CreateNamespaceRequest(id=["a", "b"]))
    assert server.last.url.raw_path == b"/v1/namespace/a%24b/create"
    assert "delimiter" not in server.last.url.params


@pytest.mark.parametrize(
    "bad_id",
    [["a$b"], ["a", ""], "a", ["a/b"], ["a\\b"], [".."], ["a", "."], ["a\nb"], ["x" * 1025],
     ["p"] * 17],
)  # fmt: skip
def test_ids_that_cannot_be_encoded_are_rejected_before_sending(bad_id: Any) -> None:
    server = Server()
    client, _ = make_client(server)
    with pytest.raises(lne.InvalidInputError):
        client.describe_table(ln.DescribeTableRequest.model_construct(id=bad_id))
    assert server.requests == []


def test_identity_goes_to_headers_never_to_the_body() -> None:
    server = Server(default=httpx.Response(200, json={}))
    client, _ = make_client(server, api_key="conn-key-123", auth_token="conn-token-456")
    client.create_namespace(ln.CreateNamespaceRequest(id=["a"], properties={"k": "v"}))
    req = server.last
    assert req.headers["x-api-key"] == "conn-key-123"
    assert req.headers["authorization"] == "Bearer conn-token-456"
    assert json.loads(req.content) == {"id": ["a"], "properties": {"k": "v"}}

    identity = ln.CreateNamespaceRequest.model_fields["identity"].annotation.__args__[0]
    client.create_namespace(
        ln.CreateNamespaceRequest(
            id=["b"],
            identity=identity(api_key="req-key", auth_token="req-token"),
            context={"trace_id": "t1"},
        )
    )
    req = server.last
    assert req.headers["x-api-key"] == "req-key"
    assert req.headers["authorization"] == "Bearer req-token"
    body = json.loads(req.content)
    assert body == {"id": ["b"]}
    assert b"req-key" not in req.content and b"req-token" not in req.content


def test_identity_stripped_from_nested_batch_requests() -> None:
    server = Server(httpx.Response(200, json={"results": []}))
    client, _ = make_client(server)
    op = ln.CommitTableOperation.from_dict(
        {
            "declare_table": {
                "id": ["t"],
                "identity": {"api_key": "nested-secret"},
                "context": {"c": "1"},
                "properties": {"context": "kept: a property, not a context object"},
            }
        }
    )
    client.batch_commit_tables(ln.BatchCommitTablesRequest(operations=[op]))
    assert len(server.requests) == 1  # the batch alone: the preflight is the caller's choice
    assert b"nested-secret" not in b"".join(r.content for r in server.requests)
    body = json.loads(server.last.content)
    assert body == {
        "operations": [
            {
                "declare_table": {
                    "id": ["t"],
                    "properties": {"context": "kept: a property, not a context object"},
                }
            }
        ]
    }


def test_context_becomes_headers_under_both_conventions() -> None:
    server = Server(default=httpx.Response(200, json={}))
    client, _ = make_client(server)
    client.describe_namespace(
        ln.DescribeNamespaceRequest(
            id=["a"],
            context={
                "trace_id": "abc123",
                "header.X-Request-Id": "req-9",
                "header.Authorization": "Bearer from-context",
                "label": "naïve café",
            },
        )
    )
    req = server.last
    assert req.headers["x-lance-ctx-trace_id"] == "abc123"
    assert req.headers["x-request-id"] == "req-9"
    assert req.headers["authorization"] == "Bearer from-context"
    assert (b"x-lance-ctx-label", "naïve café".encode()) in req.headers.raw  # UTF-8 on the wire
    assert "context" not in json.loads(req.content)


def test_context_key_that_is_no_header_name_is_rejected() -> None:
    server = Server()
    client, _ = make_client(server)
    with pytest.raises(lne.InvalidInputError, match="cannot be sent as the HTTP header"):
        client.describe_namespace(ln.DescribeNamespaceRequest(id=["a"], context={"a b": "x"}))
    assert server.requests == []


def test_response_headers_come_back_in_context() -> None:
    server = Server(
        httpx.Response(
            200,
            json={"properties": {"p": "1"}, "context": {"server": "said"}},
            headers={"x-request-id": "abc123", "x-trace": "t"},
        )
    )
    client, _ = make_client(server)
    resp = client.describe_namespace(ln.DescribeNamespaceRequest(id=["a"]))
    assert resp.properties == {"p": "1"}
    assert resp.context["header.x-request-id"] == "abc123"
    assert resp.context["header.x-trace"] == "t"
    assert resp.context["server"] == "said"


def test_empty_success_body_for_exists() -> None:
    client, _ = make_client(Server(httpx.Response(204)))
    resp = client.table_exists(ln.TableExistsRequest(id=["t"]))
    assert isinstance(resp, ln.TableExistsResponse)


@pytest.mark.parametrize(
    ("op", "request_model", "method", "raw_path"),
    [
        ("list_namespaces", ln.ListNamespacesRequest(id=["a"], page_token="p/1", limit=2), "GET",
         b"/v1/namespace/a/list?page_token=p%2F1&limit=2"),
        ("list_tables", ln.ListTablesRequest(id=["a"], limit=3, include_declared=False), "GET",
         b"/v1/namespace/a/table/list?limit=3&include_declared=false"),
        ("list_all_tables", ln.ListTablesRequest(page_token="x"), "GET",
         b"/v1/table?page_token=x&include_declared=true"),
        ("list_table_versions",
         ln.ListTableVersionsRequest(id=["t"], limit=10, page_token="5", descending=True), "POST",
         b"/v1/table/t/version/list?page_token=5&limit=10&descending=true"),
        ("drop_table_index", ln.DropTableIndexRequest(id=["t"], index_name="i", branch="b"), "POST",
         b"/v1/table/t/index/i/drop?branch=b"),
        ("drop_table", ln.DropTableRequest(id=["t"]), "POST", b"/v1/table/t/drop"),
        ("list_table_tags", ln.ListTableTagsRequest(id=["t"], limit=1), "POST",
         b"/v1/table/t/tags/list?limit=1"),
        ("list_table_branches", ln.ListTableBranchesRequest(id=["t"]), "POST",
         b"/v1/table/t/branches/list"),
    ],
)  # fmt: skip
def test_routes_without_a_body(op: str, request_model: Any, method: str, raw_path: bytes) -> None:
    server = Server(
        default=lambda request: (
            honours_branches(request)
            or httpx.Response(
                200,
                json={"version": 1}
                if request.url.path.endswith("/describe")
                else BRANCH_B
                if request.url.path.endswith("/branches/list")
                else {},
            )
        )
    )
    client, _ = make_client(server)
    with contextlib.suppress(lne.InternalError):  # {} does not fit every list response
        getattr(client, op)(request_model)
    # the operation's own request (a write on a branch is framed by reads of main's version)
    (req,) = [
        r for r in server.requests if r.url.raw_path.split(b"?")[0] == raw_path.split(b"?")[0]
    ]
    assert req.method == method
    assert req.url.raw_path == raw_path
    assert req.content == b""
    assert "content-type" not in req.headers


def test_create_table_sends_arrow_ipc_and_query_parameters() -> None:
    server = Server(httpx.Response(200, json={"location": "/x", "version": 1}))
    client, _ = make_client(server)
    resp = client.create_table(
        ln.CreateTableRequest(id=["t"], mode="overwrite", properties={"owner": "me"}), IPC
    )
    assert resp.version == 1
    req = server.last
    assert req.headers["content-type"] == "application/vnd.apache.arrow.stream"
    assert req.content == IPC  # a valid stream travels unchanged
    assert req.url.params["mode"] == "overwrite"
    assert json.loads(req.url.params["properties"]) == {"owner": "me"}


def _ipc_file_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def test_an_arrow_ipc_file_or_a_table_is_sent_as_a_stream() -> None:
    table = make_table(4)
    server = Server(default=httpx.Response(200, json={"version": 1}))
    client, _ = make_client(server)
    client.create_table(ln.CreateTableRequest(id=["f"]), _ipc_file_bytes(table))
    client.insert_into_table(ln.InsertIntoTableRequest(id=["f"]), table)
    for req in server.requests:
        assert req.headers["content-type"] == "application/vnd.apache.arrow.stream"
        assert req.content[:4] == b"\xff\xff\xff\xff"
        assert pa.ipc.open_stream(req.content).read_all().equals(table)


@pytest.mark.parametrize("body", [b"ARROW-IPC-BYTES", b"", b"\x00" * 64, b"ARROW1 not a file"])
@pytest.mark.parametrize("op", ["create_table", "insert_into_table", "merge_insert_into_table"])
def test_bodies_that_are_not_arrow_ipc_are_refused_before_sending(op: str, body: bytes) -> None:
    server = Server()
    client, _ = make_client(server)
    model = ROUTES[op].request
    kwargs: dict[str, Any] = {"on": ["id"]} if op == "merge_insert_into_table" else {}
    with pytest.raises(lne.InvalidInputError, match="Arrow IPC"):
        getattr(client, op)(model(id=["t"], **kwargs), body)
    assert server.requests == []


def test_merge_insert_repeats_on_for_composite_keys() -> None:
    server = Server(httpx.Response(200, json={}))
    client, _ = make_client(server)
    client.merge_insert_into_table(
        ln.MergeInsertIntoTableRequest(id=["t"], on=["region", "id"], use_index=True), IPC
    )
    assert server.last.url.params.get_list("on") == ["region", "id"]
    assert server.last.url.params["use_index"] == "true"


def test_schema_metadata_body_is_the_metadata_map() -> None:
    server = Server(httpx.Response(200, json={"metadata": {"a": "1"}}))
    client, _ = make_client(server)
    resp = client.update_table_schema_metadata(
        ln.UpdateTableSchemaMetadataRequest(id=["t"], metadata={"a": "1"})
    )
    assert json.loads(server.last.content) == {"a": "1"}
    assert resp.metadata == {"a": "1"}


def test_count_plan_and_query_responses() -> None:
    server = Server(
        httpx.Response(200, json=42),
        httpx.Response(200, json="LanceRead: projection=[a]\n"),
        httpx.Response(200, text="plain plan", headers={"content-type": "text/plain"}),
        httpx.Response(200, content=b"ARROW1....", headers={"content-type": "application/vnd.apache.arrow.file"}),
    )  # fmt: skip
    client, _ = make_client(server)
    assert client.count_table_rows(ln.CountTableRowsRequest(id=["t"])).count == 42
    plan = client.explain_table_query_plan(ln.ExplainTableQueryPlanRequest(id=["t"], query={"k": 1, "vector": {}}))  # fmt: skip
    assert plan == "LanceRead: projection=[a]\n"
    assert client.analyze_table_query_plan(ln.AnalyzeTableQueryPlanRequest(id=["t"], k=1, vector={})) == "plain plan"  # fmt: skip
    q = client.query_table(ln.QueryTableRequest(id=["t"], k=1, vector={}))
    assert q.data == b"ARROW1...."
    assert "application/vnd.apache.arrow.file" in server.last.headers["accept"]


@pytest.mark.parametrize(
    ("op", "payload", "checks", "answer", "expected_type"),
    [
        ("create_table_version",
         {"id": ["t"], "version": 3, "manifest_path": "/data/_staging/3.manifest"},
         [{"location": "file:///data/t"}],  # DescribeTable first: the staging areas
         {"version": {"version": 3, "manifest_path": "/data/t/_versions/3.manifest"}},
         ln.CreateTableVersionResponse),
        ("describe_table_version", {"id": ["t"], "version": 3}, [],
         {"version": {"version": 3, "manifest_path": "m"}}, ln.DescribeTableVersionResponse),
        ("batch_delete_table_versions",
         {"id": ["t"], "ranges": [{"start_version": 1, "end_version": 2}]},
         [{"version": 5}, {"tags": {}}],  # DescribeTable (latest: 5), ListTableTags first
         {"deleted_count": 2}, ln.BatchDeleteTableVersionsResponse),
    ],
)  # fmt: skip
def test_dict_requests_accepted_models_returned(
    op: str,
    payload: dict[str, Any],
    checks: list[dict[str, Any]],
    answer: dict[str, Any],
    expected_type: type,
) -> None:
    server = Server(
        *(httpx.Response(200, json=c) for c in checks),
        httpx.Response(200, json=answer),
        default=httpx.Response(500, json={"error": "unexpected request", "code": 18}),
    )
    client, _ = make_client(server)
    resp = getattr(client, op)(payload)
    assert type(resp) is expected_type
    assert len(server.requests) == len(checks) + 1
    assert json.loads(server.last.content) == payload


def test_unknown_option_is_invalid_input() -> None:
    with pytest.raises(lne.InvalidInputError, match="unknown REST option.*api_kye"):
        RestNamespaceClient(BASE, api_kye="typo")
    with pytest.raises(lne.InvalidInputError, match="unknown REST option"):
        backend.connect(BASE, api_kye="typo")


# ---------------------------------------------------------------------------- pagination


def _paged_tables(pages: dict[str | None, tuple[list[str], str | None]]) -> Server:
    def answer(request: httpx.Request) -> httpx.Response:
        token = request.url.params.get("page_token")
        tables, nxt = pages[token]
        return httpx.Response(200, json={"tables": tables, "page_token": nxt})

    return Server(default=answer)


def test_list_all_follows_page_tokens() -> None:
    server = _paged_tables({None: (["a", "b"], "t1"), "t1": (["c"], "t2"), "t2": (["d"], "")})
    client, _ = make_client(server)
    tables = list_all(client.list_tables, ln.ListTablesRequest(id=["ns"], limit=2), "tables")
    assert tables == ["a", "b", "c", "d"]
    assert [r.url.params.get("page_token") for r in server.requests] == [None, "t1", "t2"]
    assert all(r.url.params["limit"] == "2" for r in server.requests)


def test_list_all_infers_the_field_and_stops_on_null_token() -> None:
    server = _paged_tables({None: (["a"], "n"), "n": ([], None)})
    client, _ = make_client(server)
    assert list_all(client.list_tables, ln.ListTablesRequest(id=["ns"])) == ["a"]


def test_pagination_stops_when_a_token_repeats() -> None:
    server = _paged_tables({None: (["a"], "same"), "same": (["b"], "same")})
    client, _ = make_client(server)
    with pytest.raises(lne.InternalError, match="returned page_token 'same' twice"):
        list_all(client.list_tables, ln.ListTablesRequest(id=["ns"]), "tables")
    assert len(server.requests) == 2


def test_pagination_max_pages_bound() -> None:
    counter = iter(range(10_000))

    def answer(request: httpx.Request) -> httpx.Response:
        n = next(counter)
        return httpx.Response(200, json={"tables": [f"x{n}"], "page_token": str(n)})

    client, _ = make_client(Server(default=answer))
    with pytest.raises(lne.InternalError, match="max_pages=5"):
        list(iter_pages(client.list_tables, ln.ListTablesRequest(id=["ns"]), max_pages=5))


def _ignoring_tokens(field: str, items: Any) -> Server:
    """A server that ignores page tokens: every request gets the first page again, with a new
    token each time (a listing that would never end)."""
    counter = iter(range(1_000_000))
    return Server(
        default=lambda r: httpx.Response(
            200, json={field: items, "page_token": f"t{next(counter)}"}
        )
    )


def test_a_server_answering_every_token_with_the_first_page_is_a_loop() -> None:
    """Every reader of a listing stops at the second request: the tables' (``list_all``),
    the versions' (``Listing``), and the tags' and branches' (which had loops of their own,
    1,000 and 10,000 requests long, that did not catch a repeated token either)."""
    from backend.services import branches, tags
    from backend.services import versions as vsv

    client, _ = make_client(server := _ignoring_tokens("tables", ["a", "b"]))
    with pytest.raises(lne.InternalError, match="with the page before it again"):
        list_all(client.list_tables, ln.ListTablesRequest(id=["ns"]), "tables")
    assert len(server.requests) == 2

    entries = [{"version": 2, "manifest_path": "b"}, {"version": 1, "manifest_path": "a"}]
    client, _ = make_client(server := _ignoring_tokens("versions", entries))
    with pytest.raises(lne.InternalError, match="with the page before it again"):
        vsv.version_listing(client, ("t",)).read_all()
    assert len(server.requests) == 2

    tag = {"version": 1, "manifestSize": 10}
    client, _ = make_client(server := _ignoring_tokens("tags", {"v1": tag}))
    with pytest.raises(lne.InternalError, match="with the page before it again"):
        tags.list_tags(client, ["t"])
    assert len(server.requests) == 2

    made = {"parentVersion": 1, "createAt": 1_700_000_000, "manifestSize": 10}
    client, _ = make_client(server := _ignoring_tokens("branches", {"b": made}))
    with pytest.raises(lne.InternalError, match="with the page before it again"):
        branches.list_branches(client, ["t"])
    assert len(server.requests) == 2

    repeated = Server(
        httpx.Response(200, json={"tags": {"v1": tag}, "page_token": "same"}),
        default=httpx.Response(200, json={"tags": {"v2": tag}, "page_token": "same"}),
    )
    client, _ = make_client(repeated)
    with pytest.raises(lne.InternalError, match="returned page_token 'same' twice"):
        tags.list_tags(client, ["t"])


def test_paging_helper_works_on_dicts_and_plain_callables() -> None:
    pages = {None: {"versions": [1, 2], "page_token": "x"}, "x": {"versions": [3]}}
    seen: list[Any] = []

    def fake(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        return pages[request.get("page_token")]

    assert list_all(fake, {"id": ["t"]}) == [1, 2, 3]
    assert seen[1] == {"id": ["t"], "page_token": "x"}


def test_paging_helper_on_the_local_directory_namespace(tmp_path) -> None:
    from lance.namespace import DirectoryNamespace

    ns = DirectoryNamespace(root=str(tmp_path))
    names = [f"n{i}" for i in range(5)]
    for name in names:
        ns.create_namespace(ln.CreateNamespaceRequest(id=[name]))
    got = list_all(ns.list_namespaces, ln.ListNamespacesRequest(id=[], limit=2), "namespaces")
    assert sorted(got) == names


# ---------------------------------------------------------------------------- wire log


SECRETS = ("conn-key-123", "conn-token-456", "AKIA-SECRET-VALUE", "sess-tok-789", "hunter2")


def _assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, secret


def test_wire_log_records_and_redacts() -> None:
    describe = {
        "table": "t",
        "location": "s3://b/t",
        "storage_options": {
            "aws_access_key_id": "AKIA-SECRET-VALUE",
            "aws_secret_access_key": "AKIA-SECRET-VALUE",
            "aws_session_token": "sess-tok-789",
            "region": "us-east-1",
        },
    }
    server = Server(
        httpx.Response(200, json=describe, headers={"set-cookie": "sid=hunter2", "x-request-id": "r1"}),
        httpx.Response(200, json={}),
    )  # fmt: skip
    client, _ = make_client(
        server,
        api_key="conn-key-123",
        auth_token="conn-token-456",
        headers={"X-Session-Token": "sess-tok-789", "X-Team": "blue"},
    )
    resp = client.describe_table(ln.DescribeTableRequest(id=["t"], vend_credentials=True))
    assert resp.storage_options["aws_secret_access_key"] == "AKIA-SECRET-VALUE"  # caller gets it
    client.create_namespace(
        ln.CreateNamespaceRequest(id=["n"], properties={"db_password": "hunter2", "owner": "me"})
    )
    first, second = list(client.wire_log)
    assert first.op == "describe_table" and second.op == "create_namespace"
    assert first.method == "POST" and first.status == 200 and first.elapsed_ms >= 0
    assert first.request_headers["x-api-key"] == REDACTED
    assert first.request_headers["authorization"] == f"Bearer {REDACTED}"
    assert first.request_headers["x-session-token"] == REDACTED
    assert first.request_headers["x-team"] == "blue"
    assert first.response_headers["set-cookie"] == REDACTED
    assert first.response_headers["x-request-id"] == "r1"
    assert first.response_body["storage_options"] == {
        "aws_access_key_id": REDACTED,
        "aws_secret_access_key": REDACTED,
        "aws_session_token": REDACTED,
        "region": "us-east-1",
    }
    assert second.request_body == {"id": ["n"], "properties": {"db_password": REDACTED, "owner": "me"}}  # fmt: skip
    for entry in client.wire_log:
        _assert_no_secret(repr(entry))
        _assert_no_secret(json.dumps(entry.as_dict()))
        _assert_no_secret(to_curl(entry))
    _assert_no_secret(repr(client))
    _assert_no_secret(client.namespace_id())
    _assert_no_secret(repr(client.wire_log))


def test_wire_log_redacts_secrets_in_query_strings() -> None:
    server = Server(httpx.Response(200, json={}))
    client, _ = make_client(server)
    client.create_table(
        ln.CreateTableRequest(
            id=["t"], storage_options={"aws_secret_access_key": "AKIA-SECRET-VALUE", "region": "eu"}
        ),
        IPC,
    )
    entry = client.wire_log.last()
    assert "AKIA-SECRET-VALUE" in str(server.last.url.params["storage_options"])  # sent for real
    _assert_no_secret(entry.url)
    assert "region" in entry.url
    assert entry.request_body == f"<{len(IPC)} bytes arrow ipc>"
    curl = to_curl(entry)
    assert "--data-binary @request.arrow" in curl
    _assert_no_secret(curl)
    # The password goes, the user name stays (it says whose credentials were meant).
    assert redact_url("http://user:hunter2@h/x?api_key=hunter2&limit=1") == (
        f"http://user:{REDACTED}@h/x?api_key={REDACTED.replace('<', '%3C').replace('>', '%3E')}"
        "&limit=1"
    )
    assert redact_url("http://hunter2@h/x") == f"http://{REDACTED}@h/x"


def test_wire_log_truncates_huge_bodies_and_is_a_ring_buffer() -> None:
    big = {"tables": [f"table_{i:06d}" for i in range(20_000)]}
    server = Server(httpx.Response(200, json=big), default=httpx.Response(200, json={"namespaces": []}))  # fmt: skip
    client, _ = make_client(server, wire_log_size=3)
    client.list_tables(ln.ListTablesRequest(id=["a"]))
    body = client.wire_log.last().response_body
    assert isinstance(body, str) and "<truncated," in body and len(body) < 20_000
    for _ in range(4):
        client.list_namespaces(ln.ListNamespacesRequest())
    assert len(client.wire_log) == 3
    assert [e.op for e in client.wire_log] == ["list_namespaces"] * 3
    client.wire_log.clear()
    assert list(client.wire_log) == []


def test_wire_entry_pickles_without_secrets() -> None:
    server = Server(
        httpx.Response(200, json={"storage_options": {"aws_session_token": "sess-tok-789"}})
    )
    client, _ = make_client(server, api_key="conn-key-123")
    client.describe_table(ln.DescribeTableRequest(id=["t"]))
    entry = client.wire_log.last()
    data = pickle.dumps(entry)
    _assert_no_secret(data.decode("latin-1"))
    copy = pickle.loads(data)
    assert copy.as_dict() == entry.as_dict()


def test_wire_log_can_be_disabled() -> None:
    client, _ = make_client(Server(), wire_log_size=0)
    client.create_namespace(ln.CreateNamespaceRequest(id=["a"]))
    assert len(client.wire_log) == 0
    assert not client.wire_log.enabled


def test_wire_log_records_errors() -> None:
    log = WireLog(5)
    entry = log.record(
        op="x",
        method="GET",
        url="http://h/v1/x",
        request_headers={"Authorization": "Basic abc"},
        request_body=None,
        status=None,
        response_headers=None,
        response_body=None,
        elapsed_ms=1.5,
        error="refused",
    )
    assert entry is not None and not entry.ok
    assert entry.request_headers == {"Authorization": f"Basic {REDACTED}"}


def test_to_curl_is_copy_pasteable() -> None:
    server = Server(httpx.Response(200, json={}))
    client, _ = make_client(server, api_key="conn-key-123", auth_token="conn-token-456")
    # An existing namespace with a quote in its name (made by another tool) stays addressable.
    client.declare_table(ln.DeclareTableRequest(id=["it's", "t"], location="s3://b/x"))
    assert [e.op for e in client.wire_log] == ["declare_table"]  # the write alone
    curl = to_curl(client.wire_log.last())
    _assert_no_secret(curl)
    argv = shlex.split(curl)  # valid shell quoting
    assert argv[:4] == ["curl", "-sS", "-X", "POST"]
    assert argv[4] == f"{BASE}/v1/table/it%27s%24t/declare"
    assert "x-api-key: $LANCE_API_KEY" in argv
    assert "authorization: Bearer $LANCE_AUTH_TOKEN" in argv
    data = argv[argv.index("--data-raw") + 1]
    assert json.loads(data) == {"id": ["it's", "t"], "location": "s3://b/x"}
    assert '"x-api-key: $LANCE_API_KEY"' in curl  # double quotes: the shell expands it


def test_capabilities_and_identity_strings() -> None:
    server = Server()
    client, _ = make_client(server, api_key="conn-key-123")
    caps = backend.capabilities(client)
    assert caps.kind == "rest"
    assert caps.batch_commit is None  # unknown until probed
    assert server.requests == []  # nothing asked without probe=True
    assert caps.wire_log and not caps.progress_events
    assert caps.honoured_index_params is None
    assert caps.notes
    assert client.namespace_id() == f"RestNamespaceClient {{ uri: '{BASE}' }}"
    assert "api_key=<set>" in repr(client)


def test_wire_log_keeps_property_names_of_alter_transaction() -> None:
    """``key`` in a setPropertyAction names a property; it is not a secret (but ``sas_key`` is)."""
    server = Server(httpx.Response(200, json={"status": "SUCCEEDED"}))
    client, _ = make_client(server)
    from lance_namespace_urllib3_client.models import (
        AlterTransactionAction,
        AlterTransactionSetProperty,
    )

    action = AlterTransactionAction(
        set_property_action=AlterTransactionSetProperty(key="owner", value="me", mode="Overwrite")
    )
    client.alter_transaction(ln.AlterTransactionRequest(id=["t", "1"], actions=[action]))
    entry = client.wire_log.last()
    assert entry.request_body["actions"][0]["setPropertyAction"]["key"] == "owner"
    assert is_secret_name("sas_key") and is_secret_name("master-key")
    assert not is_secret_name("key")


# ---------------------------------------------------------------------------- protections


def test_create_namespace_in_a_missing_namespace_is_never_sent() -> None:
    """CreateNamespace keeps its one read: the parent namespace (NamespaceExists)."""
    server = Server(
        namespace_not_found("a"),
        default=httpx.Response(500, json={"error": "must not be sent", "code": 18}),
    )
    client, _ = make_client(server)
    with pytest.raises(lne.NamespaceNotFoundError, match="namespace a not found"):
        client.create_namespace(ln.CreateNamespaceRequest(id=["a", "b"]))
    assert [(r.method, r.url.raw_path) for r in server.requests] == [
        ("POST", b"/v1/namespace/a/exists")
    ]
    assert json.loads(server.requests[0].content) == {"id": ["a"]}
    assert [e.op for e in client.wire_log] == ["namespace_exists"]


TABLE_WRITES: list[tuple[str, Any, tuple[Any, ...], dict[str, Any]]] = [
    ("create_table", ln.CreateTableRequest(id=["a", "t"]), (IPC,), {"version": 1}),
    ("declare_table", ln.DeclareTableRequest(id=["a", "t"]), (), {"location": "/r/a/t"}),
    ("register_table", ln.RegisterTableRequest(id=["a", "t"], location="tables/t"), (),
     {"location": "t.lance"}),
    ("rename_table", ln.RenameTableRequest(id=["a", "t"], new_table_name="u",
                                           new_namespace_id=["b"]), (), {}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("op", "request_model", "extra", "answer"), TABLE_WRITES, ids=[c[0] for c in TABLE_WRITES]
)
def test_table_writes_send_the_write_alone_and_report_the_servers_refusal(
    op: str, request_model: Any, extra: tuple[Any, ...], answer: dict[str, Any]
) -> None:
    server = Server(namespace_not_found("a"))
    client, _ = make_client(server)
    with pytest.raises(lne.NamespaceNotFoundError, match="Namespace a not found"):
        getattr(client, op)(request_model, *extra)
    assert [e.op for e in client.wire_log] == [op]
    assert (
        server.last.url.raw_path.split(b"?")[0] == ROUTES[op].path.replace("{id}", "a%24t").encode()
    )


@pytest.mark.parametrize(
    ("op", "request_model", "extra", "answer"), TABLE_WRITES, ids=[c[0] for c in TABLE_WRITES]
)
def test_table_writes_send_one_request(
    op: str, request_model: Any, extra: tuple[Any, ...], answer: dict[str, Any]
) -> None:
    server = Server(httpx.Response(200, json=answer))
    client, _ = make_client(server)
    getattr(client, op)(request_model, *extra)
    assert [e.op for e in client.wire_log] == [op]
    assert len(server.requests) == 1


def test_rename_target_name_follows_the_creation_rule() -> None:
    server = Server()
    client, _ = make_client(server)
    with pytest.raises(lne.InvalidInputError, match="rename_table"):
        client.rename_table(ln.RenameTableRequest(id=["a", "t"], new_table_name="new name"))
    assert server.requests == []


@pytest.mark.parametrize(
    ("op", "request_model", "extra"),
    [
        ("create_namespace", ln.CreateNamespaceRequest(id=["a"]), ()),
        ("create_table", ln.CreateTableRequest(id=["t"]), (IPC,)),
        ("declare_table", ln.DeclareTableRequest(id=["t"]), ()),
    ],
    ids=["create_namespace", "create_table", "declare_table"],
)
def test_creates_in_the_root_namespace_need_no_check(
    op: str, request_model: Any, extra: tuple[Any, ...]
) -> None:
    server = Server(httpx.Response(200, json={}))
    client, _ = make_client(server)
    getattr(client, op)(request_model, *extra)
    assert [e.op for e in client.wire_log] == [op]


@pytest.mark.parametrize(
    ("op", "request_model", "extra"),
    [
        ("create_namespace", ln.CreateNamespaceRequest(id=["a", "b c"]), ()),
        ("create_namespace", ln.CreateNamespaceRequest(id=["é"]), ()),
        ("create_table", ln.CreateTableRequest(id=["a", "it's"]), (IPC,)),
        ("declare_table", ln.DeclareTableRequest(id=["a", ".hidden"]), ()),
        ("register_table", ln.RegisterTableRequest(id=["a", "x" * 129], location="x"), ()),
        ("create_table_tag", ln.CreateTableTagRequest(id=["t"], tag="v 1", version=1), ()),
        ("create_table_branch", ln.CreateTableBranchRequest(id=["t"], name="..", from_version=1),
         ()),
    ],
)  # fmt: skip
def test_new_names_are_checked_before_anything_is_sent(
    op: str, request_model: Any, extra: tuple[Any, ...]
) -> None:
    server = Server()
    client, _ = make_client(server)
    with pytest.raises(lne.InvalidInputError, match=op):
        getattr(client, op)(request_model, *extra)
    assert server.requests == []


def test_created_id_length_is_capped() -> None:
    server = Server()
    client, _ = make_client(server)
    long_ns = ["n" * 100, "m" * 100]  # addressing: fine; the new id would be 201+ characters
    with pytest.raises(lne.InvalidInputError, match="longer than 200"):
        client.declare_table(ln.DeclareTableRequest(id=[*long_ns, "t"]))
    assert server.requests == []


def _describe(version: int) -> httpx.Response:
    return httpx.Response(200, json={"table": "t", "version": version})


def _tags(page_token: str | None = None, **tags: int) -> httpx.Response:
    """A ListTableTags answer: ``name=version`` tags, and the next page's token."""
    body: dict[str, Any] = {
        "tags": {name: {"version": v, "manifest_size": 100} for name, v in tags.items()}
    }
    if page_token:
        body["page_token"] = page_token
    return httpx.Response(200, json=body)


@pytest.mark.parametrize(
    "ranges",
    [
        [{"start_version": 4, "end_version": 6}],  # [4, 6) covers 5
        [{"start_version": 2, "end_version": -1}],  # through the latest
        [{"start_version": 1, "end_version": 2}, {"start_version": 5, "end_version": 6}],
    ],
)
def test_delete_covering_the_latest_version_is_never_sent(ranges: list[dict[str, int]]) -> None:
    server = Server(
        _describe(5), default=httpx.Response(500, json={"error": "must not be sent", "code": 18})
    )
    client, _ = make_client(server)
    with pytest.raises(lne.InvalidInputError, match="covers version 5, the latest version"):
        client.batch_delete_table_versions({"id": ["t"], "ranges": ranges})
    assert [e.op for e in client.wire_log] == ["describe_table"]
    assert server.requests[0].url.raw_path.startswith(b"/v1/table/t/describe")


def test_delete_covering_the_latest_version_is_sent_with_allow_latest() -> None:
    server = Server(_describe(5), _tags(), httpx.Response(200, json={"deleted_count": 4}))
    client, _ = make_client(server)
    ranges = [{"start_version": 2, "end_version": -1}]
    resp = client.batch_delete_table_versions({"id": ["t"], "ranges": ranges}, allow_latest=True)
    assert resp.deleted_count == 4
    assert [e.op for e in client.wire_log] == [
        "describe_table",
        "list_table_tags",
        "batch_delete_table_versions",
    ]
    assert json.loads(server.last.content) == {"id": ["t"], "ranges": ranges}


def test_delete_of_older_versions_is_sent_after_the_check() -> None:
    server = Server(_describe(5), _tags(kept=5), httpx.Response(200, json={"deleted_count": 3}))
    client, _ = make_client(server)
    ranges = [{"start_version": 1, "end_version": 5}]  # 1-4 (end exclusive)
    assert client.batch_delete_table_versions({"id": ["t"], "ranges": ranges}).deleted_count == 3
    assert [e.op for e in client.wire_log] == [
        "describe_table",
        "list_table_tags",
        "batch_delete_table_versions",
    ]


def test_delete_covering_a_tag_on_a_later_page_is_never_sent() -> None:
    """The tag check reads ListTableTags of the target table, every page, and nothing else
    of the catalog; a covered tag refuses the delete before it is sent, naming the tag."""
    server = Server(
        _describe(5),
        _tags("p2", kept=5),
        _tags(baseline=3),
        default=httpx.Response(500, json={"error": "must not be sent", "code": 18}),
    )
    client, _ = make_client(server)
    ranges = [{"start_version": 1, "end_version": 5}]
    with pytest.raises(lne.InvalidInputError, match=r"v3 \(baseline\).*Nothing deleted"):
        client.batch_delete_table_versions({"id": ["t"], "ranges": ranges})
    assert [e.op for e in client.wire_log] == [
        "describe_table",
        "list_table_tags",
        "list_table_tags",
    ]
    assert all(r.url.raw_path.startswith(b"/v1/table/t/") for r in server.requests)
    assert server.requests[2].url.params.get("page_token") == "p2"
    assert "page_token" not in server.requests[1].url.params


def test_delete_tags_deletes_the_covered_tags_before_the_versions() -> None:
    server = Server(
        _describe(5),
        _tags(baseline=3, also=3, older=1, kept=5),
        default=lambda r: httpx.Response(
            200, json={"deleted_count": 2} if r.url.path.endswith("/version/delete") else {}
        ),
    )
    client, _ = make_client(server)
    ranges = [{"start_version": 2, "end_version": 5}]
    resp = client.batch_delete_table_versions({"id": ["t"], "ranges": ranges}, delete_tags=True)
    assert [e.op for e in client.wire_log] == [
        "describe_table",
        "list_table_tags",
        "delete_table_tag",
        "delete_table_tag",
        "batch_delete_table_versions",
    ]
    deleted = [json.loads(r.content)["tag"] for r in server.requests[2:4]]
    assert deleted == ["also", "baseline"]
    assert json.loads(server.last.content) == {"id": ["t"], "ranges": ranges}
    assert resp.deleted_count == 2


@pytest.mark.parametrize(
    "ranges",
    [
        [],
        [{"start_version": 0, "end_version": 2}],  # versions start at 1
        [{"start_version": 3, "end_version": 3}],  # empty
        [{"start_version": 3, "end_version": 2}],  # inverted
    ],
)
def test_malformed_delete_ranges_are_refused_without_any_request(
    ranges: list[dict[str, int]],
) -> None:
    server = Server()
    client, _ = make_client(server)
    with pytest.raises(lne.InvalidInputError):
        client.batch_delete_table_versions({"id": ["t"], "ranges": ranges}, allow_latest=True)
    assert server.requests == []


class Catalog:
    """A scripted catalog answering the reads of a preflight the way the spec says:
    ListTables / ListNamespaces in pages of ``page`` names (``page_token``: the last name of
    the page before), ListTableVersions, DescribeTable; a missing namespace or table: 404.
    Writes are answered ``write`` (by default a 500 saying it must not be sent)."""

    def __init__(
        self,
        tables: dict[str, list[str]],
        namespaces: dict[str, list[str]] | None = None,
        versions: dict[str, list[int]] | None = None,
        *,
        page: int = 100,
        write: httpx.Response | None = None,
    ):
        self.tables, self.namespaces = tables, namespaces or {}
        self.versions, self.page = versions or {}, page
        self.write = write or httpx.Response(500, json={"error": "must not be sent", "code": 18})

    def _page(self, names: list[str], request: httpx.Request) -> tuple[list[str], str | None]:
        names = sorted(names)
        token = request.url.params.get("page_token")
        start = names.index(token) + 1 if token else 0
        chunk = names[start : start + self.page]
        more = start + self.page < len(names)
        return chunk, (chunk[-1] if more and chunk else None)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        segment = path.split("/")[3] if path.count("/") >= 3 else ""
        key = "" if segment == "$" else segment
        if path.endswith("/table/list"):
            if key not in self.tables:
                return namespace_not_found(key)
            names, token = self._page(self.tables[key], request)
            return httpx.Response(200, json={"tables": names, "page_token": token})
        if path.startswith("/v1/namespace/") and path.endswith("/list"):
            if key and key not in self.tables:
                return namespace_not_found(key)
            names, token = self._page(self.namespaces.get(key, []), request)
            return httpx.Response(200, json={"namespaces": names, "page_token": token})
        if path.startswith("/v1/namespace/") and path.endswith("/exists"):
            return httpx.Response(200, json={}) if key in self.tables else namespace_not_found(key)
        if path.endswith("/version/list"):
            if key not in self.versions:
                return table_not_found(key)
            items = [{"version": v, "manifest_path": f"m{v}"} for v in self.versions[key]]
            return httpx.Response(200, json={"versions": items})
        if path.endswith("/describe"):
            if key not in self.versions:
                return table_not_found(key)
            return httpx.Response(200, json={"location": f"s3://lake/{key}.lance"})
        return self.write


def catalog_client(catalog: Catalog) -> tuple[RestNamespaceClient, Server]:
    server = Server(default=catalog)
    client, _ = make_client(server)
    return client, server


def test_batch_commit_sends_the_batch_alone() -> None:
    """No reads before a batch: what needs the server's state is the preflight's, on purpose;
    the server judges the batch it is sent."""
    server = Server(httpx.Response(200, json={"results": [{}, {}]}))
    client, _ = make_client(server)
    client.batch_commit_tables(
        batch(op_declare(["a", "new"]), op_delete_spec(["a", "old"], (2, 4)))
    )
    assert [e.op for e in client.wire_log] == ["batch_commit_tables"]


@pytest.mark.parametrize(
    ("operation", "match"),
    [
        (op_declare(["a", "bad name"]), "operation 1: DeclareTable a\\$bad name: "),
        (op_declare(["a", "t"], properties={f"k{i}": "v" for i in range(300)}), "at most 256"),
        (ln.CommitTableOperation.from_dict({"delete_table_versions": {"id": ["t"], "ranges": []}}),
         "No version ranges"),
        (ln.CommitTableOperation.from_dict({"create_table_version": {
            "id": ["t"], "version": 0, "manifest_path": "t/_staging/x.manifest"}}),
         r"version number \(1 or more\)"),
    ],
)  # fmt: skip
def test_batch_static_rules_refuse_without_any_request(
    operation: ln.CommitTableOperation, match: str
) -> None:
    server = Server(default=Catalog({"": [], "a": []}))
    client, _ = make_client(server)
    with pytest.raises(lne.InvalidInputError, match=match):
        client.batch_commit_tables(batch(operation))
    assert server.requests == []
    (problem,) = client.preflight(batch(operation))  # the same problem, found with the rest
    assert problem.severity == "error" and re.search(match, str(problem))
    assert all(e.op != "batch_commit_tables" for e in client.wire_log)


def test_preflight_reads_in_bulk_and_numbers_operations_from_1() -> None:
    catalog = Catalog({"a": ["old", "other"]}, versions={"a$old": [1, 2, 3]})
    client, server = catalog_client(catalog)
    request = batch(op_declare(["a", "new"]), op_delete_spec(["a", "old"], (2, 4)))
    problems = client.preflight(request)
    assert [(p.number, p.severity, p.code) for p in problems] == [
        (2, "error", lne.ErrorCode.INVALID_INPUT)
    ]
    assert str(problems[0]).startswith("operation 2: DeleteTableVersions a$old: ")
    assert "covers version 3, the latest version" in str(problems[0])
    assert [e.op for e in client.wire_log] == ["list_tables", "list_namespaces", "list_table_versions"]  # fmt: skip
    assert server.requests[0].url.params["include_declared"] == "true"
    with pytest.raises(lne.InvalidInputError) as info:
        client.preflight(request, raise_first=True)
    assert info.value.operation_index == 1
    assert all(e.op != "batch_commit_tables" for e in client.wire_log)  # nothing written


@pytest.mark.parametrize(
    ("operations", "error", "message"),
    [
        ([op_declare(["a", "old"])], lne.TableAlreadyExistsError,
         "operation 1: DeclareTable a$old: the table already exists"),
        ([op_declare(["a", "kids"])], lne.TableAlreadyExistsError,
         "operation 1: DeclareTable a$kids: a namespace with this id exists"),
        ([op_declare(["ghost", "t"])], lne.NamespaceNotFoundError,
         "operation 1: DeclareTable ghost$t: namespace ghost not found"),
        ([op_deregister(["a", "gone"])], lne.TableNotFoundError,
         "operation 1: DeregisterTable a$gone: the table does not exist"),
    ],
)  # fmt: skip
def test_preflight_finds_what_the_server_holds(
    operations: list[ln.CommitTableOperation], error: type[Exception], message: str
) -> None:
    catalog = Catalog({"a": ["old"]}, {"a": ["kids"]}, {"a$old": [1]})
    client, _ = catalog_client(catalog)
    with pytest.raises(error) as info:
        client.preflight(batch(*operations), raise_first=True)
    assert str(info.value) == message
    assert all(e.op != "batch_commit_tables" for e in client.wire_log)


def test_preflight_knows_tables_declared_earlier_in_the_batch() -> None:
    """DeclareTable X then CreateTableVersion X (version 1): nothing asks the server about X,
    which does not exist yet; a declared location is the one the manifest is checked against."""
    client, _ = catalog_client(Catalog({"a": []}))
    version = ln.CommitTableOperation.from_dict(
        {
            "create_table_version": {
                "id": ["a", "x"],
                "version": 1,
                "manifest_path": "s3://lake/x/_staging/1.manifest",
            }
        }  # fmt: skip
    )
    assert client.preflight(batch(op_declare(["a", "x"]), version)) == []
    # a holds nothing: an empty list proves nothing, so ListTables asks NamespaceExists
    assert [e.op for e in client.wire_log] == ["list_tables", "namespace_exists", "list_namespaces"]  # fmt: skip
    elsewhere = batch(op_declare(["a", "x"], location="s3://lake/y"), version)
    (problem,) = client.preflight(elsewhere)
    assert problem.number == 2 and "outside the table's staging areas" in problem.message
    # an existing table: its location as the server reports it (an absolute URI)
    client, _ = catalog_client(Catalog({"a": ["t"]}, versions={"a$t": [1, 2]}))
    staged = ln.CommitTableOperation.from_dict(
        {
            "create_table_version": {
                "id": ["a", "t"],
                "version": 3,
                "manifest_path": "s3://lake/a$t.lance/_staging/3.manifest",
            }
        }  # fmt: skip
    )
    assert client.preflight(batch(staged)) == []
    assert [e.op for e in client.wire_log] == ["list_tables", "list_table_versions", "describe_table"]  # fmt: skip


@pytest.mark.parametrize(("existing", "page"), [(0, 100), (250, 100), (1000, 1000)])
def test_a_batch_of_1000_declares_costs_its_listing_pages_and_one_commit(
    existing: int, page: int
) -> None:
    """From the builder (``bb.commit``: one preflight, then the batch): 1 + D + pages of
    ListTables requests for 1,000 declares in D = 1 namespace, counted by the wire log (and
    one NamespaceExists more when the namespace holds nothing: its empty lists prove nothing)."""
    from backend.services import batch_builder as bb

    catalog = Catalog(
        {"a": [f"old{i}" for i in range(existing)]},
        page=page,
        write=httpx.Response(200, json={"results": []}),
    )
    client, _ = catalog_client(catalog)
    operations = [bb.declare_op(["a", f"new{i}"]) for i in range(1000)]
    bb.commit(client, operations)
    pages = max(1, -(-existing // page))
    empty = 1 if existing == 0 else 0
    expected = {"list_tables": pages, "list_namespaces": 1, "batch_commit_tables": 1}
    if empty:
        expected["namespace_exists"] = 1
    assert client.wire_log.counts() == expected
    assert client.wire_log.total() == 1 + 1 + pages + empty
    client.wire_log.clear()
    assert bb.validate(client, operations) == []
    assert client.wire_log.total() == 1 + pages + empty  # Validate: the preflight alone


def test_wire_log_counts_survive_the_ring_buffer() -> None:
    server = Server(default=httpx.Response(200, json={"tables": ["t"]}))
    client, _ = make_client(server, wire_log_size=2)
    for _ in range(5):
        client.list_tables(ln.ListTablesRequest(id=["a"]))
    assert len(client.wire_log) == 2
    assert client.wire_log.counts() == {"list_tables": 5} and client.wire_log.total() == 5
    client.wire_log.clear()
    assert client.wire_log.total() == 0


def test_empty_batch_is_refused_without_any_request() -> None:
    server = Server()
    client, _ = make_client(server)
    with pytest.raises(lne.InvalidInputError, match="empty"):
        client.batch_commit_tables(ln.BatchCommitTablesRequest(operations=[]))
    assert server.requests == []


def op_delete_spec(table_id: list[str], *ranges: tuple[int, int]) -> ln.CommitTableOperation:
    """A DeleteTableVersions operation with spec ranges ``[start, end)``."""
    return ln.CommitTableOperation.from_dict(
        {
            "delete_table_versions": {
                "id": table_id,
                "ranges": [{"start_version": s, "end_version": e} for s, e in ranges],
            }
        }
    )


# ---------------------------------------------------------------------------- capabilities


def test_capabilities_are_never_probed_with_a_request() -> None:
    server = Server()
    client, _ = make_client(server)
    for caps in (client.capabilities(), client.capabilities(probe=True),
                 backend.capabilities(client, probe=True)):  # fmt: skip
        assert (caps.batch_commit, caps.rename, caps.drop_cascade) == (None, None, None)
        assert caps.server_profile is None
    assert client.supports_batch_commit() is None and client.supports_rename() is None
    assert server.requests == []


def test_a_server_profile_says_what_the_server_implements() -> None:
    server = Server()
    client, _ = make_client(server, server_profile="lance-dir")
    caps = client.capabilities(probe=True)
    assert (caps.batch_commit, caps.rename, caps.drop_cascade) == (False, False, False)
    assert caps.server_profile == "lance-dir"
    assert server.requests == []
    with pytest.raises(lne.InvalidInputError, match="unknown server profile 'nope'.*lance-dir"):
        make_client(server, server_profile="nope")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (httpx.Response(404, text="", headers={"content-type": "text/plain"}), False),
        (err_json(18, "Not supported: batch_commit_tables, namespace.rs:385:13", 500), False),
        (err_json(0, "batch commit is not implemented", 406), False),
        (err_json(14, "somebody else wrote", 409), None),  # says nothing about support
        (httpx.Response(200, json={"results": [{}]}), True),
    ],
)
def test_batch_commit_support_is_learned_from_a_real_answer(
    answer: httpx.Response, expected: bool | None
) -> None:
    server = Server(answer)
    client, _ = make_client(server)
    with contextlib.suppress(lne.LanceNamespaceError):
        client.batch_commit_tables(batch(op_declare(["t"])))
    assert client.capabilities().batch_commit is expected
    assert len(server.requests) == 1  # the commit itself, nothing else


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (err_json(4, "Table not found: t", 404), None),
        (err_json(0, "Not supported: rename_table not implemented, namespace.rs:292:13", 406),
         False),
        (err_json(18, "Not supported: rename_table not implemented, namespace.rs:292:13", 500),
         False),
        (httpx.Response(200, json={}), True),
    ],
)  # fmt: skip
def test_rename_support_is_learned_from_a_real_answer(
    answer: httpx.Response, expected: bool | None
) -> None:
    server = Server(answer)
    client, _ = make_client(server)
    with contextlib.suppress(lne.LanceNamespaceError):
        client.rename_table(ln.RenameTableRequest(id=["t"], new_table_name="u"))
    assert client.capabilities().rename is expected
    assert [e.op for e in client.wire_log] == ["rename_table"]


def test_cascade_support_is_learned_from_a_cascade_answer_only() -> None:
    server = Server(
        httpx.Response(200, json={}),  # a RESTRICT drop: says nothing of CASCADE
        err_json(3, "'a' (contains 2 child objects)", 409),  # CASCADE answered "not empty"
    )
    client, _ = make_client(server)
    client.drop_namespace(ln.DropNamespaceRequest(id=["e"], behavior="Restrict"))
    assert client.capabilities().drop_cascade is None
    with pytest.raises(lne.NamespaceNotEmptyError):
        client.drop_namespace(ln.DropNamespaceRequest(id=["a"], behavior="Cascade"))
    assert client.capabilities().drop_cascade is False


def test_jittered_backoff_stays_within_the_exponential_ceiling() -> None:
    policy = RetryPolicy(backoff=0.5, cap=3.0, rng=random.Random(1234))
    ceilings = [0.5, 1.0, 2.0, 3.0, 3.0, 3.0]
    for _ in range(200):
        delays = [policy.delay(attempt) for attempt in range(1, 7)]
        assert all(0.0 <= d <= c for d, c in zip(delays, ceilings, strict=True))
    seen = [policy.delay(3) for _ in range(500)]
    assert min(seen) < 0.5 and max(seen) > 1.5  # spread over [0, ceiling], not a constant
    same = RetryPolicy(backoff=0.5, cap=3.0, rng=random.Random(7))
    again = RetryPolicy(backoff=0.5, cap=3.0, rng=random.Random(7))
    assert [same.delay(2) for _ in range(5)] == [again.delay(2) for _ in range(5)]
    fixed = RetryPolicy(backoff=0.5, cap=3.0, jitter=False)
    assert [fixed.delay(a) for a in range(1, 7)] == ceilings


def test_client_jitters_by_default_and_retry_after_still_caps() -> None:
    server = Server(
        httpx.Response(503, text="busy"),
        httpx.Response(503, text="busy"),
        httpx.Response(503, text="busy"),
        httpx.Response(200, json={"namespaces": []}),
    )
    client, sleeps = make_client(server, backoff=0.4, retry_cap=1.0)
    client.list_namespaces(ln.ListNamespacesRequest())
    assert len(sleeps) == 3
    assert all(0.0 <= d <= c for d, c in zip(sleeps, [0.4, 0.8, 1.0], strict=True))
    server = Server(
        httpx.Response(429, json={"error": "slow", "code": 21}, headers={"Retry-After": "60"}),
        httpx.Response(200, json={"namespaces": []}),
    )
    client, sleeps = make_client(server, retry_cap=1.5)  # jitter on: Retry-After is exact
    client.list_namespaces(ln.ListNamespacesRequest())
    assert sleeps == [1.5]


SECRET_WITH_NEWLINE = "abc-SECRET-9876\nX-Injected: 1"


@pytest.mark.parametrize(
    "options",
    [
        {"api_key": SECRET_WITH_NEWLINE},
        {"auth_token": SECRET_WITH_NEWLINE},
        {"api_key": "abc-SECRET-9876\r"},
        {"api_key": "abc-SECRET-9876\x00"},
        {"api_key": "abc-SECRET-9876é"},
        {"headers": {"X-Api-Token": SECRET_WITH_NEWLINE}},
    ],
)
def test_secrets_that_cannot_be_sent_are_refused_without_echoing_them(
    options: dict[str, Any],
) -> None:
    for connect in (
        lambda: RestNamespaceClient(BASE, transport=httpx.MockTransport(Server()), **options),
        lambda: backend.connect(BASE, **options),
    ):
        with pytest.raises(lne.InvalidInputError) as info:
            connect()
        text = str(info.value) + repr(info.value) + repr(info.value.args)
        assert "abc-SECRET-9876" not in text
        assert "printable ASCII" in text


def test_a_request_identity_with_a_line_break_is_refused_before_sending() -> None:
    server = Server()
    client, _ = make_client(server)
    identity = ln.CreateNamespaceRequest.model_fields["identity"].annotation.__args__[0]
    with pytest.raises(lne.InvalidInputError) as info:
        client.describe_namespace(
            ln.DescribeNamespaceRequest(id=["a"], identity=identity(api_key=SECRET_WITH_NEWLINE))
        )
    assert "abc-SECRET-9876" not in str(info.value)
    assert server.requests == []


@pytest.mark.parametrize(
    ("url", "options", "match"),
    [
        ("http://ns.test/x?token=1", {}, "query string"),
        ("http://ns.test/x#frag", {}, "fragment"),
        ("http://user:pw@ns.test", {}, "user name or password"),
        ("ftp://ns.test", {}, "http"),
        (BASE, {"timeout": 0}, "(?i)timeout"),
        (BASE, {"timeout": 3601}, "(?i)timeout"),
        (BASE, {"timeout": -1}, "(?i)timeout"),
        (BASE, {"max_retries": 11}, "(?i)max_retries"),
        (BASE, {"max_retries": -1}, "(?i)max_retries"),
        (BASE, {"max_retries": 1.5}, "(?i)max_retries"),
        (BASE, {"delimiter": "/"}, "delimiter"),
        (BASE, {"headers": {"bad header": "x"}}, "header"),
    ],
)
def test_connection_options_are_validated(url: str, options: dict[str, Any], match: str) -> None:
    with pytest.raises(lne.InvalidInputError, match=match):
        RestNamespaceClient(url, transport=httpx.MockTransport(Server()), **options)


@pytest.mark.parametrize(
    "options", [{"timeout": 3600}, {"timeout": 0.5}, {"max_retries": 0}, {"max_retries": 10}]
)
def test_connection_options_at_the_limits_are_accepted(options: dict[str, Any]) -> None:
    server = Server(httpx.Response(200, json={"namespaces": []}))
    client, _ = make_client(server, **options)
    assert client.list_namespaces(ln.ListNamespacesRequest()).namespaces == []


def test_wire_log_counts_requests_when_it_keeps_none() -> None:
    server = Server(default=httpx.Response(200, json={"tables": ["t"]}))
    client, _ = make_client(server, wire_log_size=0)
    client.list_tables(ln.ListTablesRequest(id=["a"]))
    assert len(client.wire_log) == 0 and client.wire_log.counts() == {"list_tables": 1}


# ---------------------------------------------------------------------------- where it connects


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/",
        "http://169.254.169.254/latest/meta-data",
        "http://2852039166/",
        "http://[fd00:ec2::254]/",
        "http://[fe80::1]:9400/",
        "http://metadata.google.internal/computeMetadata/v1",
    ],
)
def test_link_local_and_metadata_servers_are_refused_before_sending(url: str) -> None:
    server = Server(default=httpx.Response(200, json={"namespaces": []}))
    for options in ({}, {"transport": httpx.MockTransport(server)}):
        with pytest.raises(lne.InvalidInputError, match="refused: .*(metadata|link-local)"):
            backend.connect(url, **options)
    assert server.requests == []


def test_a_metadata_server_opens_only_when_an_allowed_target_names_it() -> None:
    url = "http://169.254.169.254"
    for loose in (["http://*"], ["*"], ["http://169.254.*/*"]):
        with pytest.raises(lne.InvalidInputError, match="cloud metadata address"):
            backend.connect(url, allow_targets=loose)
    server = Server(default=httpx.Response(200, json={"namespaces": []}))
    client = backend.connect(url, allow_targets=[f"{url}/*"], transport=httpx.MockTransport(server))
    client.list_namespaces(ln.ListNamespacesRequest(id=[]))
    assert [str(r.url) for r in server.requests] == [f"{url}/v1/namespace/%24/list"]


def test_a_name_resolving_to_a_metadata_address_is_refused(monkeypatch) -> None:
    """DNS stands in here (the test cannot change the machine's resolver): a name that resolves
    to a metadata address is refused when the client is made, and a name that comes to resolve
    to one later (DNS rebinding) is refused before the next request leaves; the loopback
    server it pointed at first answered the first request only."""
    real = socket.getaddrinfo
    points_to = {"imds.test": "169.254.169.254", "rebind.test": "127.0.0.1"}

    def resolve(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host in points_to:
            return real(points_to[host], *args, **kwargs)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    with pytest.raises(lne.InvalidInputError, match=r"imds\.test \(169\.254\.169\.254\)"):
        backend.connect("http://imds.test/")
    with namespaces_listener() as (port, asked):
        client = backend.connect(f"http://rebind.test:{port}", max_retries=0)
        client.list_namespaces(ln.ListNamespacesRequest(id=[]))
        assert asked == ["/v1/namespace/%24/list"]  # loopback stays allowed
        points_to["rebind.test"] = "169.254.169.254"
        with pytest.raises(lne.InvalidInputError, match="cloud metadata address"):
            client.list_namespaces(ln.ListNamespacesRequest(id=[]))
        assert asked == ["/v1/namespace/%24/list"]
        client.close()


def test_a_branch_write_is_framed_by_reads_of_mains_version() -> None:
    """A write naming a branch: the branch is looked up (ListTableBranches), whether the
    server honours DescribeTable's branch is learnt once (a branch that does not exist), then
    DescribeTable (main) before and after the write; when main's version moved, the success
    the server answered is reported as the error it is."""
    versions = iter([4, 5])
    server = Server(
        default=lambda request: (
            honours_branches(request)
            or (
                httpx.Response(200, json={"version": next(versions)})
                if request.url.path.endswith("/describe")
                else httpx.Response(200, json=BRANCH_B)
                if request.url.path.endswith("/branches/list")
                else httpx.Response(200, json={})
            )
        )
    )
    client, _ = make_client(server)
    with pytest.raises(lne.UnsupportedOperationError, match="from version 4 to 5"):
        client.drop_table_index(ln.DropTableIndexRequest(id=["t"], index_name="i", branch="b"))
    paths = [r.url.path for r in server.requests]
    assert paths == [
        "/v1/table/t/branches/list",
        "/v1/table/t/describe",  # the branch that does not exist
        "/v1/table/t/describe",
        "/v1/table/t/index/i/drop",
        "/v1/table/t/describe",
    ]
    probe, *mains = [r for r in server.requests if r.url.path.endswith("/describe")]
    assert json.loads(probe.content)["branch"].startswith("console-probe-")
    assert all(b"branch" not in r.content for r in mains)


# ---------------------------------------------------------------------------- hostile answers


def test_an_arrow_answer_whose_offsets_point_past_its_data_is_a_malformed_answer() -> None:
    """A QueryTable answer that reads as an Arrow file but whose string offsets point past the
    data (it would crash the process when its rows are used) is refused as not Arrow data."""
    from backend.services.search import query

    answer = _arrow_answer(pa.table({"s": ["abcd", "efgh", "ijkl"]}))
    body = bytearray(answer.content)
    offsets = body.find(struct.pack("<4i", 0, 4, 8, 12))
    assert offsets > 0
    body[offsets : offsets + 16] = struct.pack("<4i", 0, 4, 8, 0x7FFFF000)
    corrupt = httpx.Response(200, content=bytes(body), headers=answer.headers)
    client, _ = make_client(Server(default=corrupt))
    with pytest.raises(lne.InvalidInputError, match="not Arrow IPC data") as info:
        query.run_query(client, query.query_request(["ns", "t"], k=3))
    assert "larger than values array" in str(info.value)
    truncated = httpx.Response(200, content=bytes(body[: len(body) // 2]), headers=answer.headers)
    client, _ = make_client(Server(default=truncated))
    with pytest.raises(lne.InvalidInputError, match="not Arrow IPC data"):
        query.run_query(client, query.query_request(["ns", "t"], k=3))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("unit", ["a", "a.", "a/", " ", "\t", "\n", " x.py:1", "location: "])
def test_an_error_message_of_a_million_characters_is_cut_to_its_limit(unit: str) -> None:
    """Every rule that cleans a server's text runs on a bounded head of it, in linear time: a
    1,000,000-character message (one long token, blanks, thousands of source locations) maps
    to its error at once, cut to ``ENGINE_TEXT_CHARS`` with the rest counted."""
    from backend.errors import ENGINE_TEXT_CHARS

    message = "x" + unit * (1_000_000 // len(unit))
    client, _ = make_client(Server(err_json(13, message, 400)))
    with pytest.raises(lne.InvalidInputError) as info:
        client.describe_namespace(ln.DescribeNamespaceRequest(id=["ns"]))
    said = getattr(info.value, "engine_message", None) or str(info.value)
    assert len(said) <= ENGINE_TEXT_CHARS + 40
    assert "more characters)" in said


@pytest.mark.parametrize("code", [99, -1, 1000])
@pytest.mark.parametrize(
    ("status", "cls"),
    [(409, lne.ConcurrentModificationError), (404, lne.UnsupportedOperationError),
     (503, lne.ServiceUnavailableError)],
)  # fmt: skip
def test_an_error_code_the_spec_does_not_define_maps_by_http_status(
    code: int, status: int, cls: type
) -> None:
    server = Server(err_json(code, "version 7 was committed by another writer", status))
    client, _ = make_client(server)
    with pytest.raises(cls) as info:
        client.create_table_tag(ln.CreateTableTagRequest(id=["ns", "t"], tag="a", version=1))
    assert type(info.value) is cls
    assert info.value.status == status
    assert str(info.value) == "version 7 was committed by another writer"


def test_a_transaction_id_a_server_answers_is_kept_bounded_and_redacted(tmp_path: Any) -> None:
    """A server's transaction id is its text: one echoing the API key and megabytes long is
    recorded in the audit log cut to 200 characters, the key masked."""
    from backend import audit
    from backend.gate import Actor, gate

    key = "sk-wire-txn-key-7777"
    echoed = httpx.Response(200, json={"transaction_id": f"txn x-api-key={key} " + "A" * 5_000_000})
    client, _ = make_client(Server(echoed), api_key=key)
    log = audit.AuditLog(tmp_path)
    gated = gate(client, actor=Actor(user="ann"), log=log)
    gated.drop_table(ln.DropTableRequest(id=["ns", "t"]))
    (entry,) = [e for e in log.entries() if e.operation == "drop_table"]
    assert entry.transaction_id is not None
    assert entry.transaction_id.startswith(f"txn x-api-key={REDACTED} AAA")
    assert entry.transaction_id.endswith("…")
    assert len(entry.transaction_id) == 201
    assert key not in log.path.read_text()
    assert log.path.stat().st_size < 10_000


def test_a_key_a_server_echoes_is_masked_in_the_wire_log_and_in_errors() -> None:
    """The connection's key and token, and a request's own (``identity``), are secrets
    wherever a server puts them: a response header, an error body, the error's message."""
    key, token, own = "sk-wire-echo-key-4242", "tok-wire-echo-5151", "sk-identity-key-6363"
    echoed = httpx.Response(
        401,
        headers={"x-echo": f"key={key}"},
        json={"error": f"bad credentials: x-api-key={key} auth=Bearer {token}"},
    )
    client, _ = make_client(Server(echoed, echoed), api_key=key, auth_token=token)
    with pytest.raises(lne.LanceNamespaceError) as first:
        client.describe_namespace(ln.DescribeNamespaceRequest(id=["ns"]))
    request = ln.DescribeNamespaceRequest(id=["ns"], identity={"api_key": own})
    echo_own = httpx.Response(401, json={"error": f"key {own} is expired"})
    client2, _ = make_client(Server(echo_own))
    with pytest.raises(lne.LanceNamespaceError) as second:
        client2.describe_namespace(request)
    for err in (first.value, second.value):
        assert REDACTED in str(err) and REDACTED in json.dumps(err.raw)
        assert not {key, token, own} & set(json.dumps(err.raw).replace("=", " ").split())
        assert not {key, token, own} & set(str(err).replace("=", " ").split())
    for entry in [*client.wire_log, *client2.wire_log]:
        shown = json.dumps(entry.as_dict())
        assert key not in shown and token not in shown and own not in shown, shown
    last = client.wire_log.last()
    assert last is not None and REDACTED in json.dumps(last.as_dict()["response_headers"])


# ---------------------------------------------------------------------------- hostile answers


class _RawServer:
    """A loopback HTTP server on a thread that answers one request with ``head`` and then
    the body from ``chunks`` (each sent after ``pause`` seconds); it stops when the client
    hangs up. ``sent``: the body bytes it managed to send; ``complete``: it sent them all."""

    def __init__(self, head: bytes, chunks: Any, pause: float = 0.0):
        import threading

        self.head, self.chunks, self.pause = head, chunks, pause
        self.sent = 0
        self.complete = False
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            conn.recv(65536)
            try:
                conn.sendall(self.head)
                for chunk in self.chunks:
                    if self.pause:
                        time.sleep(self.pause)
                    conn.sendall(chunk)
                    self.sent += len(chunk)
                self.complete = True
            except OSError:  # the client hung up
                return

    def close(self) -> None:
        self.thread.join(timeout=30)
        self.listener.close()


@pytest.mark.timeout(60)
def test_a_server_dripping_its_answer_times_out_within_the_timeout_per_call() -> None:
    """httpx's timeout is per read: a server sending a byte every 0.25 s held a call with
    timeout=0.5 s for as long as it liked (4 s here). The timeout bounds the whole attempt."""
    body = b'{"properties": {"k": "' + b"x" * 16 + b'"}}'
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(
        body
    )
    server = _RawServer(head, [body[i : i + 1] for i in range(len(body))], pause=0.25)
    client = RestNamespaceClient(server.url, timeout=0.5, max_retries=0)
    try:
        with pytest.raises(NamespaceTimeoutError) as info:
            client.describe_namespace(ln.DescribeNamespaceRequest(id=["ns"]))
        assert not server.complete  # the client gave up before the answer was whole
        assert f"{server.url}/v1/namespace/ns/describe" in str(info.value)
        assert "0.5 s" in str(info.value)
        entry = client.wire_log.last()
        assert entry is not None and entry.status == 200 and "ReadTimeout" in (entry.error or "")
    finally:
        client.close()
        server.close()


@pytest.mark.timeout(120)
def test_an_answer_past_the_size_limit_is_refused_as_it_streams_in() -> None:
    """A 300 MB DescribeNamespace was read whole (and kept whole by the wire log): an answer
    past ``MAX_JSON_ANSWER_BYTES`` is refused while it streams in, naming the limit."""
    from backend.rest import client as client_module

    limit = client_module.MAX_JSON_ANSWER_BYTES
    mib = 1024 * 1024
    # no Content-Length: the size shows only as the body arrives
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
    chunks = [b'{"properties": {"k": "'] + [b"x" * mib] * (limit // mib + 16) + [b'"}}']
    server = _RawServer(head, iter(chunks))
    client = RestNamespaceClient(server.url, timeout=60.0, max_retries=0)
    try:
        with pytest.raises(lne.InternalError, match=f"larger than {limit // mib} MiB") as info:
            client.describe_namespace(ln.DescribeNamespaceRequest(id=["ns"]))
        assert "describe_namespace" in str(info.value)
        server.close()
        assert not server.complete  # not read to its end
        entry = client.wire_log.last()
        assert entry is not None and entry.error and "MiB" in entry.error
    finally:
        client.close()
        server.close()


def test_a_declared_length_past_the_limit_is_refused_unread() -> None:
    from backend.rest import client as client_module

    limit = client_module.MAX_JSON_ANSWER_BYTES

    def endless() -> Any:
        yield b'{"properties": {}}'
        raise AssertionError("the body was read")

    answer = httpx.Response(
        200,
        headers={"content-type": "application/json", "content-length": str(limit + 1)},
        stream=_Chunks(endless()),
    )
    client, _ = make_client(Server(answer))
    with pytest.raises(lne.InternalError, match="larger than 64 MiB"):
        client.describe_namespace(ln.DescribeNamespaceRequest(id=["ns"]))


class _Chunks(httpx.SyncByteStream):
    def __init__(self, chunks: Any):
        self.chunks = chunks

    def __iter__(self) -> Any:
        yield from self.chunks


def test_the_wire_log_keeps_a_bounded_head_of_a_big_body_redacted() -> None:
    """An entry kept every raw body whole (200 entries of any size); it keeps a head, says the
    full size, and masks the values under secret names in the head it shows."""
    from backend.rest import wirelog

    big = {
        "storage_options": {"aws_secret_access_key": "AKIA-SECRET-VALUE", "region": "eu"},
        "properties": {f"p{i}": "v" * 100 for i in range(20_000)},
    }
    raw = json.dumps(big).encode()
    assert len(raw) > 2 * wirelog.MAX_KEPT_BODY_BYTES
    answer = httpx.Response(200, content=raw, headers={"content-type": "application/json"})
    client, _ = make_client(Server(answer))
    client.describe_table(ln.DescribeTableRequest(id=["t"]))
    entry = client.wire_log.last()
    assert entry is not None
    assert entry.response_bytes == len(raw)
    assert len(entry._response_raw or b"") <= wirelog.MAX_KEPT_BODY_BYTES
    shown = entry.response_body
    assert isinstance(shown, str) and shown.endswith(f"<truncated, {len(raw)} bytes>")
    assert "AKIA-SECRET-VALUE" not in shown and REDACTED in shown and '"region": "eu"' in shown
    assert len(shown) < wirelog.DEFAULT_MAX_BODY_CHARS + 100


def _endless_pages(per_page: int, calls: list[int], stop_after: int) -> Callable[[Any], Any]:
    """A list method whose server never stops: ``per_page`` new items and a new token on
    every page; fails the test past ``stop_after`` calls (the listing should have stopped)."""

    def method(request: Any) -> Any:
        calls.append(1)
        assert len(calls) <= stop_after, "the listing did not stop"
        n = len(calls)
        return {"tables": [f"t{n}_{i}" for i in range(per_page)], "page_token": f"tok{n}"}

    return method


@pytest.mark.timeout(120)
def test_a_listing_stops_at_the_item_cap() -> None:
    """Paging ran to 100,000 pages (100 million names held at 1,000 a page): one listing
    holds at most ``DEFAULT_MAX_ITEMS`` items."""
    from backend.spec import paging

    calls: list[int] = []
    per_page = 10_000
    cap_pages = paging.DEFAULT_MAX_ITEMS // per_page
    method = _endless_pages(per_page, calls, stop_after=cap_pages + 1)
    with pytest.raises(lne.InternalError, match="more than 1,000,000 items"):
        list_all(method, {"id": ["ns"]}, "tables")
    assert len(calls) == cap_pages + 1
    calls.clear()
    listing = paging.Listing(method, {"id": ["ns"]}, "tables")
    with pytest.raises(lne.InternalError, match="more than 1,000,000 items"):
        listing.read_all()
    assert len(calls) == cap_pages + 1


@pytest.mark.timeout(120)
def test_a_listing_stops_at_the_page_cap_yet_lists_a_catalog_of_100_000_tables() -> None:
    from backend.services.namespaces import list_table_names
    from backend.spec import paging

    assert paging.DEFAULT_MAX_PAGES <= 10_000
    calls: list[int] = []
    method = _endless_pages(1, calls, stop_after=paging.DEFAULT_MAX_PAGES)
    with pytest.raises(lne.InternalError, match=f"max_pages={paging.DEFAULT_MAX_PAGES}"):
        list_all(method, {"id": ["ns"]}, "tables")
    assert len(calls) == paging.DEFAULT_MAX_PAGES

    # 100,000 tables at the smallest page size a server could sensibly use (10) ...
    names = [f"t{i:06d}" for i in range(100_000)]

    def small_pages(request: Any) -> Any:
        start = int(request.get("page_token") or 0)
        nxt = start + 10
        return {"tables": names[start:nxt], "page_token": str(nxt) if nxt < len(names) else None}

    assert list_all(small_pages, {"id": ["ns"]}, "tables") == names

    # ... and through the client, at the page size the console asks for
    def answer(request: httpx.Request) -> httpx.Response:
        limit = int(request.url.params["limit"])
        start = int(request.url.params.get("page_token") or 0)
        nxt = start + limit
        token = str(nxt) if nxt < len(names) else None
        return httpx.Response(200, json={"tables": names[start:nxt], "page_token": token})

    client, _ = make_client(Server(default=answer), wire_log_size=0)
    assert list_table_names(client, ["ns"]) == names


DEEP = b'{"error": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"


@pytest.mark.parametrize("status", [200, 400, 500])
def test_deeply_nested_json_is_a_clear_error_and_the_wire_log_still_renders(status: int) -> None:
    """An answer nested 100,000 deep gave ``InternalError: ...RecursionError: maximum
    recursion depth exceeded``, and the Inspector's view of it raised RecursionError."""
    answer = httpx.Response(status, content=DEEP, headers={"content-type": "application/json"})
    client, sleeps = make_client(Server(default=answer), max_retries=0)
    with pytest.raises(lne.LanceNamespaceError) as info:
        client.describe_namespace(ln.DescribeNamespaceRequest(id=["ns"]))
    text = str(info.value)
    assert "Recursion" not in text and "recursion depth" not in text
    if status == 200:
        assert isinstance(info.value, lne.InternalError)
        assert "malformed response" in text and "nested too deeply" in text
    else:
        assert f"HTTP {status}" in text
    entry = client.wire_log.last()
    assert entry is not None
    shown = entry.response_body
    assert isinstance(shown, str) and shown.startswith('{"error": [[[')
    json.dumps(entry.as_dict())


def test_deep_values_are_redacted_to_a_marker_not_a_crash() -> None:
    from backend.redaction import MAX_JSON_DEPTH, TOO_DEEP, redact_json

    deep: Any = "leaf"
    for _ in range(50_000):
        deep = [deep]
    shown = redact_json({"properties": {"a": deep}, "password": {"nested": deep}})
    inner = shown["properties"]["a"]
    depth = 2
    while isinstance(inner, list):
        inner, depth = inner[0], depth + 1
    assert inner == TOO_DEEP and depth == MAX_JSON_DEPTH
    assert "leaf" not in json.dumps(shown)
    # a body under the limit of what the Inspector shows whole, nested deeper than JSON parses
    from backend.rest.wirelog import render_body

    body = b'{"password": "hunter2", "a": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    rendered = render_body(body, "application/json", 16_384)
    assert isinstance(rendered, str) and "hunter2" not in rendered and REDACTED in rendered
