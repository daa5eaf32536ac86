"""RestNamespaceClient round trips against the real ``lance.namespace.RestAdapter``.

The cross-backend conformance suite lives in ``test_operations.py``; these tests cover what is
specific to the REST client: Arrow IPC upload, paging parameters, index routes, transactions,
error classes and statuses as the real server sends them, odd names, the wire log and curl.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import lance_namespace as ln
import pyarrow as pa
import pytest
from lance_namespace import errors as lne

import backend
from backend.rest import RestNamespaceClient, to_curl
from backend.spec.paging import list_all
from tests.conftest import RestServer


def ipc_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


SMALL = pa.table({"id": pa.array(range(6), pa.int64()), "cat": ["a", "b", "a", "c", "b", "a"]})


@pytest.fixture
def client(rest_server) -> Iterator[RestNamespaceClient]:
    with backend.connect(rest_server.url, api_key="real-key-42", auth_token="real-tok-43") as c:
        yield c


def _describe_until(
    client: RestNamespaceClient, done: threading.Event, answered: list[int]
) -> None:
    """DescribeTable (a request with a body) again and again until ``done``."""
    while not done.is_set():
        try:
            client.describe_table(ln.DescribeTableRequest(id=["x", "t"]))
        except lne.LanceNamespaceError:
            answered.append(1)  # the server's answer (no such table), or the server stopped


def test_the_server_stops_while_this_process_sends_it_requests(tmp_path: Path) -> None:
    """The tests' REST server stops while threads of the tests' process are in the middle of
    requests with a body (as a console's background reads are): run in the tests' process,
    pylance's ``RestAdapter.stop()`` waited for them without letting them finish, and hung."""
    for round_ in range(10):
        root = tmp_path / f"r{round_}"
        root.mkdir()
        server = RestServer(root)
        client = backend.connect(server.url, audit=False, max_retries=0)
        done = threading.Event()
        answered: list[int] = []

        threads = [
            threading.Thread(target=_describe_until, args=(client, done, answered), daemon=True)
            for _ in range(4)
        ]
        for t in threads:
            t.start()
        while not answered:
            time.sleep(0.005)
        server.stop()
        done.set()
        for t in threads:
            t.join(timeout=30)
        assert not any(t.is_alive() for t in threads), f"round {round_}"
        client.close()


def test_namespace_lifecycle(client: RestNamespaceClient) -> None:
    assert client.list_namespaces(ln.ListNamespacesRequest()).namespaces == []
    client.create_namespace(ln.CreateNamespaceRequest(id=["prod"], properties={"team": "x"}))
    client.create_namespace(ln.CreateNamespaceRequest(id=["prod", "sales"]))
    assert client.list_namespaces(ln.ListNamespacesRequest()).namespaces == ["prod"]
    assert client.list_namespaces(ln.ListNamespacesRequest(id=["prod"])).namespaces == ["sales"]
    desc = client.describe_namespace(ln.DescribeNamespaceRequest(id=["prod"]))
    assert desc.properties == {"team": "x"}
    assert "header.content-type" in desc.context
    client.namespace_exists(ln.NamespaceExistsRequest(id=["prod", "sales"]))
    with pytest.raises(lne.NamespaceAlreadyExistsError) as info:
        client.create_namespace(ln.CreateNamespaceRequest(id=["prod"]))
    assert info.value.status == 409
    with pytest.raises(lne.NamespaceNotFoundError) as info:
        client.namespace_exists(ln.NamespaceExistsRequest(id=["nope"]))
    assert info.value.status == 404
    client.drop_namespace(ln.DropNamespaceRequest(id=["prod", "sales"]))
    assert client.list_namespaces(ln.ListNamespacesRequest(id=["prod"])).namespaces == []


@pytest.mark.parametrize("name", ["a/b? #%é", "é", "t 1", "..", "-x", "a\\b"])
def test_names_the_console_does_not_create_are_refused_before_sending(
    client: RestNamespaceClient, name: str
) -> None:
    with pytest.raises(lne.InvalidInputError):
        client.create_namespace(ln.CreateNamespaceRequest(id=[name]))
    with pytest.raises(lne.InvalidInputError):
        client.create_table(ln.CreateTableRequest(id=[name]), ipc_bytes(SMALL))
    assert len(client.wire_log) == 0  # nothing reached the server
    assert client.list_namespaces(ln.ListNamespacesRequest()).namespaces == []
    assert client.list_tables(ln.ListTablesRequest(id=[])).tables == []


def test_odd_names_made_by_another_tool_round_trip(
    client: RestNamespaceClient, rest_server
) -> None:
    """Spaces, '#', '%' and unicode in existing names stay addressable through the client."""
    from lance.namespace import DirectoryNamespace

    odd, table = "q x #%é", "t 1 ü"
    other = DirectoryNamespace(root=str(rest_server.root))
    other.create_namespace(ln.CreateNamespaceRequest(id=[odd]))
    other.create_table(ln.CreateTableRequest(id=[odd, table]), ipc_bytes(SMALL))
    assert client.list_namespaces(ln.ListNamespacesRequest()).namespaces == [odd]
    assert client.list_tables(ln.ListTablesRequest(id=[odd])).tables == [table]
    desc = client.describe_table(ln.DescribeTableRequest(id=[odd, table]))
    assert desc.table == table and desc.namespace == [odd]
    assert client.count_table_rows(ln.CountTableRowsRequest(id=[odd, table])).count == 6
    versions = client.list_table_versions(ln.ListTableVersionsRequest(id=[odd, table])).versions
    assert [v.version for v in versions] == [1]
    # a new table inside the odd namespace: only the new (last) name follows the creation rule
    client.create_table(ln.CreateTableRequest(id=[odd, "plain"]), ipc_bytes(SMALL))
    assert sorted(client.list_tables(ln.ListTablesRequest(id=[odd])).tables) == ["plain", table]


def test_writes_into_a_missing_namespace_are_the_preflights_to_refuse(
    client: RestNamespaceClient, rest_server
) -> None:
    """CreateNamespace keeps its one read (NamespaceExists of the parent). A table write sends
    the write alone; pylance's server declares and creates into a namespace that does not
    exist, so the rule is the explicit preflight's: ListTables of the parent (this server
    answers "not found"; the client asks NamespaceExists after an empty list), nothing
    written."""
    with pytest.raises(lne.NamespaceNotFoundError):
        client.create_namespace(ln.CreateNamespaceRequest(id=["ghost", "child"]))
    assert [e.op for e in client.wire_log] == ["namespace_exists"]
    for request in (
        ln.CreateTableRequest(id=["ghost", "t"]),
        ln.DeclareTableRequest(id=["ghost", "t"]),
        ln.RegisterTableRequest(id=["ghost", "t"], location="t.lance"),
    ):
        client.wire_log.clear()
        (problem,) = backend.preflight(client, request)
        assert problem.code.name == "NAMESPACE_NOT_FOUND"
        assert "namespace ghost not found" in str(problem)
        ops = [e.op for e in client.wire_log]
        assert ops[0] == "list_tables", ops
        assert set(ops) <= {"list_tables", "namespace_exists", "list_namespaces"}, ops
        with pytest.raises(lne.NamespaceNotFoundError, match="ghost"):
            backend.preflight(client, request, raise_first=True)
    assert client.list_namespaces(ln.ListNamespacesRequest()).namespaces == []
    assert client.list_tables(ln.ListTablesRequest(id=[])).tables == []


def test_delete_of_the_latest_version_is_refused_by_the_client(
    client: RestNamespaceClient,
) -> None:
    client.create_table(ln.CreateTableRequest(id=["d"]), ipc_bytes(SMALL))
    client.insert_into_table(ln.InsertIntoTableRequest(id=["d"], mode="append"), SMALL)
    with pytest.raises(lne.InvalidInputError, match="latest version"):
        client.batch_delete_table_versions(
            {"id": ["d"], "ranges": [{"start_version": 1, "end_version": -1}]}
        )
    assert client.wire_log.last().op == "describe_table"
    versions = client.list_table_versions(ln.ListTableVersionsRequest(id=["d"])).versions
    assert [v.version for v in versions] == [1, 2]
    assert client.count_table_rows(ln.CountTableRowsRequest(id=["d"])).count == 12


def test_dot_delimiter_reaches_the_root_namespace(rest_server) -> None:
    """With delimiter '.', the root namespace's path segment must survive URL normalisation."""
    with backend.connect(rest_server.url, delimiter=".") as client:
        client.create_namespace(ln.CreateNamespaceRequest(id=["top"]))
        client.create_namespace(ln.CreateNamespaceRequest(id=["top", "sub"]))
        assert client.list_namespaces(ln.ListNamespacesRequest()).namespaces == ["top"]
        assert client.list_namespaces(ln.ListNamespacesRequest(id=["top"])).namespaces == ["sub"]


def test_dot_delimiter_allows_dots_in_tag_and_index_names(rest_server) -> None:
    """Tag, index and branch names are not parts of an id: the tag ``v1.2`` and the index
    ``id.btree`` are fine on a '.'-delimited connection (as the forms say), a table name with
    a '.' is not (it would split the id)."""
    from backend.services import tags as tagsv

    with backend.connect(rest_server.url, delimiter=".") as client:
        client.create_namespace(ln.CreateNamespaceRequest(id=["top"]))
        client.create_table(ln.CreateTableRequest(id=["top", "t"]), ipc_bytes(SMALL))
        tagsv.create_tag(client, ["top", "t"], "v1.2", 1)
        assert tagsv.tag_version(client, ["top", "t"], "v1.2") == 1
        assert tagsv.list_tags(client, ["top", "t"])["tag"].tolist() == ["v1.2"]
        client.create_table_scalar_index(
            ln.CreateTableIndexRequest(
                id=["top", "t"], column="id", index_type="BTREE", name="id.btree"
            )
        )
        names = client.list_table_indices(ln.ListTableIndicesRequest(id=["top", "t"])).indexes
        assert [ix.index_name for ix in names] == ["id.btree"]
        with pytest.raises(lne.InvalidInputError, match="delimiter"):
            client.rename_table(ln.RenameTableRequest(id=["top", "t"], new_table_name="t.v2"))


def test_declare_then_list_including_declared_only(client: RestNamespaceClient) -> None:
    client.create_namespace(ln.CreateNamespaceRequest(id=["ns"]))
    client.create_table(ln.CreateTableRequest(id=["ns", "real"]), ipc_bytes(SMALL))
    declared = client.declare_table(ln.DeclareTableRequest(id=["ns", "planned"]))
    assert declared.location
    both = client.list_tables(ln.ListTablesRequest(id=["ns"], include_declared=True)).tables
    assert sorted(both) == ["planned", "real"]
    only_real = client.list_tables(ln.ListTablesRequest(id=["ns"], include_declared=False))
    assert only_real.tables == ["real"]
    desc = client.describe_table(ln.DescribeTableRequest(id=["ns", "planned"], check_declared=True))
    assert desc.is_only_declared is True
    desc = client.describe_table(ln.DescribeTableRequest(id=["ns", "real"], check_declared=True))
    assert desc.is_only_declared is False


def test_create_table_with_arrow_ipc_and_count(client: RestNamespaceClient) -> None:
    resp = client.create_table(
        ln.CreateTableRequest(id=["t"], properties={"owner": "ops"}), ipc_bytes(SMALL)
    )
    assert resp.version == 1
    assert resp.properties == {"owner": "ops"}
    assert client.count_table_rows(ln.CountTableRowsRequest(id=["t"])).count == 6
    client.table_exists(ln.TableExistsRequest(id=["t"]))
    query = client.query_table(ln.QueryTableRequest(id=["t"], k=3, vector={}))
    assert pa.ipc.open_file(query.data).read_all().num_rows == 3
    with pytest.raises(lne.TableAlreadyExistsError) as info:
        client.create_table(ln.CreateTableRequest(id=["t"]), ipc_bytes(SMALL))
    assert info.value.status == 409
    with pytest.raises(lne.InvalidInputError, match="bogus") as info:
        client.create_table(ln.CreateTableRequest(id=["t"], mode="bogus"), ipc_bytes(SMALL))
    assert info.value.status == 400


def test_table_errors_from_the_real_server(client: RestNamespaceClient) -> None:
    with pytest.raises(lne.TableNotFoundError) as info:
        client.describe_table(ln.DescribeTableRequest(id=["missing"]))
    err = info.value
    assert err.status == 404
    assert err.code == lne.ErrorCode.TABLE_NOT_FOUND
    assert "missing" in err.server_message
    assert backend.describe_error(err)["code_name"] == "TABLE_NOT_FOUND"


def test_version_list_limit_order_and_describe(client: RestNamespaceClient) -> None:
    client.create_table(ln.CreateTableRequest(id=["v"]), ipc_bytes(SMALL))
    for _ in range(4):
        client.insert_into_table(ln.InsertIntoTableRequest(id=["v"], mode="append"), SMALL)
    every = client.list_table_versions(ln.ListTableVersionsRequest(id=["v"])).versions
    assert [v.version for v in every] == [1, 2, 3, 4, 5]
    first = client.list_table_versions(ln.ListTableVersionsRequest(id=["v"], limit=2))
    assert [v.version for v in first.versions] == [1, 2]
    newest = client.list_table_versions(
        ln.ListTableVersionsRequest(id=["v"], limit=2, descending=True)
    )
    assert [v.version for v in newest.versions] == [5, 4]
    # Whatever the server does with tokens, the helper ends with a prefix of all versions.
    paged = list_all(
        client.list_table_versions, ln.ListTableVersionsRequest(id=["v"], limit=2), "versions"
    )
    assert [v.version for v in paged] == [v.version for v in every][: len(paged)]
    version = client.describe_table_version({"id": ["v"], "version": 3})
    assert isinstance(version, ln.DescribeTableVersionResponse)
    assert version.version.version == 3
    deleted = client.batch_delete_table_versions(
        {"id": ["v"], "ranges": [{"start_version": 1, "end_version": 2}]}
    )
    assert isinstance(deleted, ln.BatchDeleteTableVersionsResponse)
    # The request never carried a body (pylance's server resets such connections).
    entries = [e for e in client.wire_log if e.op == "list_table_versions"]
    assert entries and all(e.request_bytes == 0 for e in entries)


def test_namespace_paging_against_the_real_server(client: RestNamespaceClient) -> None:
    names = [f"n{i}" for i in range(5)]
    for name in names:
        client.create_namespace(ln.CreateNamespaceRequest(id=[name]))
    page = client.list_namespaces(ln.ListNamespacesRequest(limit=2))
    assert page.namespaces == ["n0", "n1"] and page.page_token
    assert list_all(client.list_namespaces, ln.ListNamespacesRequest(limit=2)) == names
    assert len([e for e in client.wire_log if e.op == "list_namespaces"]) == 1 + 3


def test_index_lifecycle_and_transaction(client: RestNamespaceClient) -> None:
    client.create_table(ln.CreateTableRequest(id=["ix"]), ipc_bytes(SMALL))
    made = client.create_table_scalar_index(
        ln.CreateTableIndexRequest(id=["ix"], column="id", index_type="BTREE", name="id_idx")
    )
    assert isinstance(made, ln.CreateTableScalarIndexResponse) and made.transaction_id
    client.create_table_index(
        ln.CreateTableIndexRequest(id=["ix"], column="cat", index_type="BITMAP", name="cat_idx")
    )
    listed = client.list_table_indices(ln.ListTableIndicesRequest(id=["ix"]))
    assert sorted(i.index_name for i in listed.indexes) == ["cat_idx", "id_idx"]
    stats = client.describe_table_index_stats(
        ln.DescribeTableIndexStatsRequest(id=["ix"], index_name="id_idx")
    )
    assert stats.num_indexed_rows == 6 and stats.num_unindexed_rows == 0
    txn = client.describe_transaction(ln.DescribeTransactionRequest(id=["ix", made.transaction_id]))
    assert txn.status == "SUCCEEDED"
    assert txn.properties["operation"] == "CreateIndex"
    client.drop_table_index(ln.DropTableIndexRequest(id=["ix"], index_name="id_idx"))
    listed = client.list_table_indices(ln.ListTableIndicesRequest(id=["ix"]))
    assert [i.index_name for i in listed.indexes] == ["cat_idx"]
    with pytest.raises(lne.LanceNamespaceError) as info:
        client.describe_table_index_stats(
            ln.DescribeTableIndexStatsRequest(id=["ix"], index_name="id_idx")
        )
    assert info.value.status >= 400


def test_deregister_and_register(client: RestNamespaceClient) -> None:
    client.create_namespace(ln.CreateNamespaceRequest(id=["ns"]))
    made = client.create_table(ln.CreateTableRequest(id=["ns", "r"]), ipc_bytes(SMALL))
    gone = client.deregister_table(ln.DeregisterTableRequest(id=["ns", "r"]))
    assert gone.location == made.location
    with pytest.raises(lne.TableNotFoundError):
        client.table_exists(ln.TableExistsRequest(id=["ns", "r"]))
    # The directory server only registers locations relative to its root.
    relative = made.location.rsplit("/", 1)[1]
    client.register_table(ln.RegisterTableRequest(id=["ns", "r"], location=relative))
    client.table_exists(ln.TableExistsRequest(id=["ns", "r"]))
    assert client.list_tables(ln.ListTablesRequest(id=["ns"])).tables == ["r"]


def test_batch_commit_is_unsupported_on_the_real_server(client: RestNamespaceClient) -> None:
    op = ln.CommitTableOperation.from_dict({"declare_table": {"id": ["x"]}})
    with pytest.raises(lne.UnsupportedOperationError) as info:
        client.batch_commit_tables(ln.BatchCommitTablesRequest(operations=[op]))
    assert info.value.status == 500
    assert "batch_commit_tables" in str(info.value)


def test_wire_log_of_real_exchanges_holds_no_secret(client: RestNamespaceClient) -> None:
    client.create_namespace(ln.CreateNamespaceRequest(id=["w"]))
    client.list_namespaces(ln.ListNamespacesRequest())
    entries = list(client.wire_log)
    assert [e.op for e in entries] == ["create_namespace", "list_namespaces"]
    assert entries[1].status == 200 and entries[1].response_body == {"namespaces": ["w"]}
    dump = (
        json.dumps([e.as_dict() for e in entries]) + repr(client) + "".join(map(to_curl, entries))
    )
    assert "real-key-42" not in dump and "real-tok-43" not in dump


def test_curl_output_replays_against_the_real_server(client: RestNamespaceClient) -> None:
    client.create_namespace(ln.CreateNamespaceRequest(id=["c"], properties={"k": "v"}))
    client.describe_namespace(ln.DescribeNamespaceRequest(id=["c"]))
    curl = to_curl(client.wire_log.last())
    env = {**os.environ, "LANCE_API_KEY": "real-key-42", "LANCE_AUTH_TOKEN": "real-tok-43"}
    out = subprocess.run(
        ["bash", "-c", curl], capture_output=True, text=True, env=env, timeout=30, check=True
    )
    assert json.loads(out.stdout) == {"properties": {"k": "v"}}
    assert shlex.split(curl)[0] == "curl"


# -- preflight, registration and capabilities against the real server ----------------------------


def declare(table_id: list[str], **kw: object) -> ln.CommitTableOperation:
    return ln.CommitTableOperation.from_dict({"declare_table": {"id": table_id, **kw}})


def test_preflight_of_a_batch_against_the_real_server(client: RestNamespaceClient) -> None:
    client.create_namespace(ln.CreateNamespaceRequest(id=["p"]))
    client.create_table(ln.CreateTableRequest(id=["p", "old"]), ipc_bytes(SMALL))
    location = client.describe_table(ln.DescribeTableRequest(id=["p", "old"])).location
    # DeclareTable X, then CreateTableVersion X: X does not exist yet, and nothing asks for it
    version = ln.CommitTableOperation.from_dict(
        {"create_table_version": {"id": ["p", "x"], "version": 1, "manifest_path": "m/1.manifest"}}
    )
    client.wire_log.clear()
    assert client.preflight(ln.BatchCommitTablesRequest(operations=[declare(["p", "x"]), version])) == []  # fmt: skip
    assert client.wire_log.counts() == {"list_tables": 1, "list_namespaces": 1}
    # what the server holds: an existing table, a missing namespace (listed as empty by this
    # server, so NamespaceExists is asked), a manifest outside the table's staging areas
    bad = ln.CommitTableOperation.from_dict(
        {
            "create_table_version": {
                "id": ["p", "old"],
                "version": 2,
                "manifest_path": "/tmp/x.manifest",
            }
        }  # fmt: skip
    )
    problems = client.preflight(
        ln.BatchCommitTablesRequest(operations=[declare(["p", "old"]), declare(["ghost", "t"])])
    )
    assert [(p.number, p.code.name) for p in problems] == [
        (1, "TABLE_ALREADY_EXISTS"),
        (2, "NAMESPACE_NOT_FOUND"),
    ]
    (problem,) = client.preflight(ln.BatchCommitTablesRequest(operations=[bad]))
    assert "outside the table's staging areas" in str(problem)
    inside = f"{location}/_staging/2.manifest"
    good = ln.CommitTableOperation.from_dict(
        {"create_table_version": {"id": ["p", "old"], "version": 2, "manifest_path": inside}}
    )
    assert client.preflight(ln.BatchCommitTablesRequest(operations=[good])) == []
    assert all(e.ok for e in client.wire_log if e.op != "namespace_exists")  # only reads
    assert {e.op for e in client.wire_log} <= {
        "list_tables", "list_namespaces", "namespace_exists", "list_table_versions",
        "describe_table",
    }  # fmt: skip


def test_a_builder_batch_of_1000_declares_costs_three_requests(
    client: RestNamespaceClient,
) -> None:
    """1 + D + pages of ListTables (D = 1 namespace holding a table, one page): the preflight's
    two listings, then the batch (which this server refuses as unsupported)."""
    from backend.services import batch_builder as bb

    client.create_namespace(ln.CreateNamespaceRequest(id=["big"]))
    client.declare_table(ln.DeclareTableRequest(id=["big", "first"]))
    operations = [bb.declare_op(["big", f"t{i}"]) for i in range(1000)]
    client.wire_log.clear()
    with pytest.raises(lne.UnsupportedOperationError):
        bb.commit(client, operations)
    assert client.wire_log.counts() == {
        "list_tables": 1,
        "list_namespaces": 1,
        "batch_commit_tables": 1,
    }
    assert client.capabilities().batch_commit is False  # learned from the answer
    assert client.list_tables(ln.ListTablesRequest(id=["big"])).tables == ["first"]


def test_registration_at_another_tables_location_is_the_preflights_to_refuse(
    client: RestNamespaceClient,
) -> None:
    """pylance's server registers a table at another table's directory: the rule is the
    preflight's, judged by the catalog's listings (ListNamespaces and ListTables of each
    namespace), never a DescribeTable per table; the write itself is one request."""
    client.create_namespace(ln.CreateNamespaceRequest(id=["g"]))
    made = client.create_table(ln.CreateTableRequest(id=["g", "t"]), ipc_bytes(SMALL))
    root_made = client.create_table(ln.CreateTableRequest(id=["r"]), ipc_bytes(SMALL))
    relative = made.location.rsplit("/", 1)[1]
    cases = [
        (relative, "is the directory of another table (g$t)"),
        (f"{relative}/more", "is inside the directory of another table (g$t)"),
        (root_made.location.rsplit("/", 1)[1], "is the directory of another table (r)"),
    ]
    for location, why in cases:
        client.wire_log.clear()
        request = ln.RegisterTableRequest(id=["g", "twin"], location=location)
        (problem,) = backend.preflight(client, request)
        assert why in str(problem)
        assert client.wire_log.counts() == {"list_tables": 2, "list_namespaces": 2}
    assert backend.preflight(client, ln.RegisterTableRequest(id=["g", "x"], location="x")) == []
    # the write sends one request, whatever the catalog holds
    client.wire_log.clear()
    client.register_table(ln.RegisterTableRequest(id=["g", "twin"], location=relative))
    assert [e.op for e in client.wire_log] == ["register_table"]
    # an absolute location, as the server reports them: this server refuses it itself
    client.wire_log.clear()
    with pytest.raises(lne.InvalidInputError, match="Absolute paths are not allowed"):
        client.register_table(ln.RegisterTableRequest(id=["g", "abs"], location="/tmp/x.lance"))
    assert [e.op for e in client.wire_log] == ["register_table"]


def test_no_capability_probe_is_ever_sent(client: RestNamespaceClient) -> None:
    for caps in (backend.capabilities(client), backend.capabilities(client, probe=True)):
        assert (caps.batch_commit, caps.rename, caps.drop_cascade) == (None, None, None)
    assert len(client.wire_log) == 0
