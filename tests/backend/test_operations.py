"""Cross-backend conformance suite for the operations module.

Most tests run twice through the ``ns`` fixture (``tests/conftest.py``): once on the local
backend (``backend.connect(<dir>)``) and once on the REST backend (``backend.connect(<url>)``)
against a real ``lance.namespace.RestAdapter`` directory server. Each case performs an operation
with the ``lance_namespace`` request model and then reads the effect back through another call
(another namespace operation, or lance itself on the table's storage).

Where the two backends legitimately differ, a ``*_local`` test (fixture ``local_ns``) asserts
what only the local backend promises, and a ``*_rest*`` test (fixture ``rest_ns``) documents what
the REST backend gets from pylance's adapter: the REST backend is a client, so what the server
does is what it reports.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import lance
import pytest
from lance_namespace import (
    AlterTransactionRequest,
    BatchCommitTablesRequest,
    BatchDeleteTableVersionsRequest,
    CommitTableOperation,
    CreateNamespaceRequest,
    CreateTableIndexRequest,
    CreateTableRequest,
    CreateTableVersionRequest,
    DeclareTableRequest,
    DeregisterTableRequest,
    DescribeNamespaceRequest,
    DescribeTableIndexStatsRequest,
    DescribeTableRequest,
    DescribeTableVersionRequest,
    DescribeTransactionRequest,
    DropTableIndexRequest,
    LanceNamespace,
    ListNamespacesRequest,
    ListTableIndicesRequest,
    ListTablesRequest,
    ListTableVersionsRequest,
)
from lance_namespace.errors import (
    ConcurrentModificationError,
    InvalidInputError,
    LanceNamespaceError,
    NamespaceAlreadyExistsError,
    NamespaceNotFoundError,
    TableAlreadyExistsError,
    TableColumnNotFoundError,
    TableIndexAlreadyExistsError,
    TableIndexNotFoundError,
    TableNotFoundError,
    TableVersionNotFoundError,
    TransactionNotFoundError,
    UnsupportedOperationError,
)
from lance_namespace_urllib3_client.models import (
    AlterTransactionAction,
    AlterTransactionSetProperty,
    AlterTransactionSetStatus,
    AlterTransactionUnsetProperty,
    VersionRange,
)

import backend
from backend.errors import describe_error
from backend.spec.paging import iter_pages
from tests.conftest import RestServer
from tests.support import (
    append_rows,
    create_table,
    ipc_stream_bytes,
    local_path,
    make_table,
    manifest_file,
    stage_version,
    table_location,
    with_versions,
)

NS = ["a"]
VECTOR_ROWS = 520  # IVF_PQ trains 256 centroids per sub-vector: fewer rows give an empty index
DIM = 16


@pytest.fixture
def ns_a(ns: LanceNamespace) -> LanceNamespace:
    """``ns`` with the child namespace ``a`` created."""
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    return ns


@pytest.fixture
def local_ns(local_root: Path) -> LanceNamespace:
    """The local backend alone, for behaviour only the local backend promises."""
    ns = backend.connect(str(local_root))
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    return ns


@pytest.fixture
def rest_ns(rest_server: RestServer) -> Iterator[LanceNamespace]:
    """The REST backend alone, against the ``rest_server`` fixture's real server."""
    ns = backend.connect(rest_server.url)
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    yield ns
    close = getattr(ns, "close", None)
    if close:
        close()


def tid(name: str) -> list[str]:
    return [*NS, name]


def norm_status(status: str | None) -> str:
    """Transaction statuses are case-insensitive, PascalCase or snake_case (spec)."""
    return (status or "").replace("_", "").lower()


def list_versions(ns: LanceNamespace, table_id: list[str]) -> list[int]:
    """All versions of a table, ascending, following page tokens."""
    pages = iter_pages(ns.list_table_versions, ListTableVersionsRequest(id=table_id))
    return sorted(v.version for page in pages for v in page.versions)


def list_tables(ns: LanceNamespace, ns_id: list[str]) -> set[str]:
    return set(ns.list_tables(ListTablesRequest(id=ns_id)).tables)


def wire_bodies(ns: LanceNamespace, op: str) -> list[dict]:
    """JSON request bodies the REST client sent for operation ``op``, oldest first."""
    log = ns.wire_log  # type: ignore[attr-defined]
    return [
        e.request_body for e in log.entries() if e.op == op and isinstance(e.request_body, dict)
    ]


# --------------------------------------------------------------------------- namespaces


def test_connect_returns_lance_namespace(ns: LanceNamespace, backend_kind: str) -> None:
    assert isinstance(ns, LanceNamespace)
    assert backend.capabilities(ns).kind == backend_kind


def test_nested_namespaces_create_list_describe(ns: LanceNamespace) -> None:
    ns.create_namespace(CreateNamespaceRequest(id=["a"], properties={"owner": "ops"}))
    ns.create_namespace(CreateNamespaceRequest(id=["a", "b"]))
    ns.create_namespace(CreateNamespaceRequest(id=["a", "c"]))
    ns.create_namespace(CreateNamespaceRequest(id=["z"]))

    assert set(ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces) == {"a", "z"}
    assert set(ns.list_namespaces(ListNamespacesRequest(id=["a"])).namespaces) == {"b", "c"}
    assert ns.list_namespaces(ListNamespacesRequest(id=["a", "b"])).namespaces == []
    assert ns.describe_namespace(DescribeNamespaceRequest(id=["a"])).properties == {"owner": "ops"}
    ns.describe_namespace(DescribeNamespaceRequest(id=["a", "c"]))


def test_create_existing_namespace_raises(ns: LanceNamespace) -> None:
    ns.create_namespace(CreateNamespaceRequest(id=["dup"]))
    with pytest.raises(NamespaceAlreadyExistsError):
        ns.create_namespace(CreateNamespaceRequest(id=["dup"]))
    assert ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces == ["dup"]


def test_missing_namespace_raises(ns: LanceNamespace) -> None:
    with pytest.raises(NamespaceNotFoundError):
        ns.describe_namespace(DescribeNamespaceRequest(id=["missing"]))
    with pytest.raises(NamespaceNotFoundError):
        ns.create_namespace(CreateNamespaceRequest(id=["missing", "child"]))
    assert ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces == []


def test_errors_carry_code_and_message(ns_a: LanceNamespace) -> None:
    with pytest.raises(TableNotFoundError) as info:
        ns_a.describe_table(DescribeTableRequest(id=tid("missing")))
    err = info.value
    assert isinstance(err, LanceNamespaceError)
    for attr in ("status", "server_message", "detail", "instance"):
        assert hasattr(err, attr), attr
    summary = describe_error(err)
    assert summary["code_name"] == "TABLE_NOT_FOUND"
    assert summary["kind"] == "TableNotFoundError"
    assert summary["message"]


# --------------------------------------------------------------------------- tables


def test_create_table_from_ipc_stream(ns_a: LanceNamespace) -> None:
    data = make_table(40, dim=DIM)
    resp = ns_a.create_table(CreateTableRequest(id=tid("t1")), ipc_stream_bytes(data))
    assert resp.version == 1
    assert resp.location

    desc = ns_a.describe_table(DescribeTableRequest(id=tid("t1"), load_detailed_metadata=True))
    assert desc.version == 1
    assert desc.table == "t1"
    assert desc.namespace == NS
    assert [f.name for f in desc.var_schema.fields] == ["id", "cat", "text", "vec"]
    vec_type = desc.var_schema.fields[3].type
    assert (vec_type.type, vec_type.length) == ("fixed_size_list", DIM)

    stored = lance.dataset(str(table_location(ns_a, tid("t1")))).to_table()
    assert stored.equals(data)
    assert list_tables(ns_a, NS) == {"t1"}


def test_create_existing_table_raises(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("t1"), make_table(5))
    with pytest.raises(TableAlreadyExistsError):
        create_table(ns_a, tid("t1"), make_table(7))
    assert lance.dataset(str(table_location(ns_a, tid("t1")))).count_rows() == 5


def test_declare_table_is_listed_and_only_declared(ns_a: LanceNamespace) -> None:
    resp = ns_a.declare_table(DeclareTableRequest(id=tid("decl"), properties={"k": "v"}))
    assert resp.location
    create_table(ns_a, tid("real"), make_table(3))

    assert list_tables(ns_a, NS) == {"decl", "real"}
    declared = ns_a.describe_table(DescribeTableRequest(id=tid("decl"), check_declared=True))
    assert declared.is_only_declared is True
    assert declared.location == resp.location
    assert declared.properties == {"k": "v"}
    real = ns_a.describe_table(DescribeTableRequest(id=tid("real"), check_declared=True))
    assert real.is_only_declared is False


def test_list_tables_declared_filter_and_pages(ns_a: LanceNamespace) -> None:
    for name in ("d1", "d2"):
        ns_a.declare_table(DeclareTableRequest(id=tid(name)))
    for name in ("r1", "r2", "r3"):
        create_table(ns_a, tid(name), make_table(2))
    ns_a.create_namespace(CreateNamespaceRequest(id=[*NS, "child"]))
    create_table(ns_a, [*NS, "child", "deep"], make_table(2))

    assert list_tables(ns_a, NS) == {"d1", "d2", "r1", "r2", "r3"}
    created = ns_a.list_tables(ListTablesRequest(id=NS, include_declared=False))
    assert set(created.tables) == {"r1", "r2", "r3"}
    assert list_tables(ns_a, [*NS, "child"]) == {"deep"}

    pages = [p.tables for p in iter_pages(ns_a.list_tables, ListTablesRequest(id=NS, limit=2))]
    assert all(len(p) <= 2 for p in pages)
    assert len(pages) >= 3
    flat = [t for p in pages for t in p]
    assert sorted(flat) == ["d1", "d2", "r1", "r2", "r3"]


def test_declared_table_becomes_real_on_create(ns_a: LanceNamespace) -> None:
    declared = ns_a.declare_table(DeclareTableRequest(id=tid("later")))
    created = create_table(ns_a, tid("later"), make_table(6))
    assert created.location == declared.location
    desc = ns_a.describe_table(
        DescribeTableRequest(id=tid("later"), check_declared=True, load_detailed_metadata=True)
    )
    assert desc.is_only_declared is False
    assert desc.version == 1
    assert lance.dataset(str(table_location(ns_a, tid("later")))).count_rows() == 6


def test_declare_existing_table_raises(ns_a: LanceNamespace) -> None:
    ns_a.declare_table(DeclareTableRequest(id=tid("decl")))
    create_table(ns_a, tid("real"), make_table(3))
    with pytest.raises(TableAlreadyExistsError):
        ns_a.declare_table(DeclareTableRequest(id=tid("decl")))
    with pytest.raises(TableAlreadyExistsError):
        ns_a.declare_table(DeclareTableRequest(id=tid("real")))
    assert list_tables(ns_a, NS) == {"decl", "real"}


def test_describe_missing_table_raises(ns_a: LanceNamespace) -> None:
    with pytest.raises(TableNotFoundError):
        ns_a.describe_table(DescribeTableRequest(id=tid("missing")))
    with pytest.raises(TableNotFoundError):
        ns_a.describe_table(DescribeTableRequest(id=tid("missing"), check_declared=True))


def test_describe_table_detailed_metadata_tracks_versions(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("t1"), make_table(10))
    append_rows(ns_a, tid("t1"), make_table(4, start=10))
    desc = ns_a.describe_table(DescribeTableRequest(id=tid("t1"), load_detailed_metadata=True))
    assert desc.version == 2
    assert [f.name for f in desc.var_schema.fields] == ["id", "cat", "text"]
    old = ns_a.describe_table(
        DescribeTableRequest(id=tid("t1"), version=1, load_detailed_metadata=True)
    )
    assert old.version == 1


def test_deregister_table(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("keep"), make_table(3))
    create_table(ns_a, tid("gone"), make_table(8))
    location = table_location(ns_a, tid("gone"))

    resp = ns_a.deregister_table(DeregisterTableRequest(id=tid("gone")))
    assert resp.location
    assert local_path(resp.location).name == location.name

    assert list_tables(ns_a, NS) == {"keep"}
    with pytest.raises(TableNotFoundError):
        ns_a.describe_table(DescribeTableRequest(id=tid("gone")))
    # Deregistering forgets the table; its data stays on storage.
    assert lance.dataset(str(location)).count_rows() == 8
    with pytest.raises(TableNotFoundError):
        ns_a.deregister_table(DeregisterTableRequest(id=tid("gone")))


# --------------------------------------------------------------------------- indexes


def test_vector_index_build_params(ns_a: LanceNamespace, backend_kind: str) -> None:
    create_table(ns_a, tid("vecs"), make_table(VECTOR_ROWS, dim=DIM))
    resp = ns_a.create_table_index(
        CreateTableIndexRequest(
            id=tid("vecs"),
            column="vec",
            index_type="IVF_PQ",
            name="vidx",
            distance_type="cosine",
            num_partitions=2,
            num_sub_vectors=4,
        )
    )
    assert resp.transaction_id

    listed = ns_a.list_table_indices(ListTableIndicesRequest(id=tid("vecs"))).indexes
    assert [(i.index_name, i.columns) for i in listed] == [("vidx", ["vec"])]
    assert (listed[0].index_type or "").upper() == "IVF_PQ"

    stats = ns_a.describe_table_index_stats(
        DescribeTableIndexStatsRequest(id=tid("vecs"), index_name="vidx")
    )
    assert stats.num_indexed_rows == VECTOR_ROWS
    assert stats.num_unindexed_rows == 0

    if backend_kind == "local":
        # The local backend builds the index itself: the parameters must be in the index.
        built = lance.dataset(str(table_location(ns_a, tid("vecs")))).stats.index_stats("vidx")
        ivf = built["indices"][0]
        assert ivf["num_partitions"] == 2
        assert ivf["sub_index"]["num_sub_vectors"] == 4
        assert ivf["metric_type"] == "cosine"
    else:
        # REST: parameters are sent as the spec defines; applying them is the server's job.
        sent = wire_bodies(ns_a, "create_table_index")
        body = next(b for b in sent if b.get("name") == "vidx")
        assert body["num_partitions"] == 2
        assert body["num_sub_vectors"] == 4
        assert body["distance_type"] == "cosine"
        assert body["index_type"] == "IVF_PQ"


def test_index_stats_distance_type(ns_a: LanceNamespace, backend_kind: str) -> None:
    create_table(ns_a, tid("vecs"), make_table(60, dim=DIM))
    ns_a.create_table_index(
        CreateTableIndexRequest(
            id=tid("vecs"),
            column="vec",
            index_type="IVF_FLAT",
            name="flat",
            distance_type="cosine",
            num_partitions=2,
        )
    )
    stats = ns_a.describe_table_index_stats(
        DescribeTableIndexStatsRequest(id=tid("vecs"), index_name="flat")
    )
    assert stats.num_indexed_rows == 60
    assert (stats.index_type or "").upper() == "IVF_FLAT"
    if backend_kind == "local":
        # pylance leaves distance_type null; the local backend fills it from the index.
        assert (stats.distance_type or "").lower() == "cosine"
    else:
        # REST returns what the server says; pylance's adapter leaves it null, so the value
        # is either null or the real metric, never something else.
        assert stats.distance_type is None or stats.distance_type.lower() == "cosine"


def test_create_index_transaction_is_described(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("t1"), make_table(30))
    resp = ns_a.create_table_index(
        CreateTableIndexRequest(id=tid("t1"), column="id", index_type="BTREE", name="by_id")
    )
    assert resp.transaction_id
    version = ns_a.describe_table(
        DescribeTableRequest(id=tid("t1"), load_detailed_metadata=True)
    ).version
    assert version == 2

    txn = ns_a.describe_transaction(DescribeTransactionRequest(id=[*tid("t1"), str(version)]))
    assert norm_status(txn.status) == "succeeded"
    props = txn.properties or {}
    assert props["uuid"] == resp.transaction_id
    assert props["version"] == "2"
    assert props["read_version"] == "1"
    assert props["operation"] == "CreateIndex"

    first = ns_a.describe_transaction(DescribeTransactionRequest(id=[*tid("t1"), "1"]))
    assert norm_status(first.status) == "succeeded"
    assert (first.properties or {})["version"] == "1"
    assert (first.properties or {})["uuid"] != resp.transaction_id


def test_describe_missing_transaction_raises(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("t1"), make_table(3))
    with pytest.raises(TransactionNotFoundError):
        ns_a.describe_transaction(DescribeTransactionRequest(id=[*tid("t1"), "9"]))


def test_scalar_indices_and_stats(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("t1"), make_table(50))
    r1 = ns_a.create_table_scalar_index(
        CreateTableIndexRequest(id=tid("t1"), column="id", index_type="BTREE", name="by_id")
    )
    r2 = ns_a.create_table_scalar_index(
        CreateTableIndexRequest(id=tid("t1"), column="cat", index_type="BITMAP", name="by_cat")
    )
    r3 = ns_a.create_table_index(
        CreateTableIndexRequest(id=tid("t1"), column="text", index_type="FTS", name="ft")
    )
    assert len({r1.transaction_id, r2.transaction_id, r3.transaction_id}) == 3

    listed = ns_a.list_table_indices(ListTableIndicesRequest(id=tid("t1"))).indexes
    by_name = {i.index_name: i for i in listed}
    assert set(by_name) == {"by_id", "by_cat", "ft"}
    assert by_name["by_id"].columns == ["id"]
    assert by_name["by_cat"].columns == ["cat"]
    assert by_name["ft"].columns == ["text"]
    assert (by_name["by_id"].index_type or "").lower() == "btree"
    assert (by_name["by_cat"].index_type or "").lower() == "bitmap"

    append_rows(ns_a, tid("t1"), make_table(7, start=50))
    stats = ns_a.describe_table_index_stats(
        DescribeTableIndexStatsRequest(id=tid("t1"), index_name="by_id")
    )
    assert stats.num_indexed_rows == 50
    assert stats.num_unindexed_rows == 7
    assert stats.num_indices == 1


def test_scalar_endpoint_rejects_vector_index(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("vecs"), make_table(20, dim=DIM))
    with pytest.raises(InvalidInputError):
        ns_a.create_table_scalar_index(
            CreateTableIndexRequest(id=tid("vecs"), column="vec", index_type="IVF_PQ", name="q")
        )
    assert ns_a.list_table_indices(ListTableIndicesRequest(id=tid("vecs"))).indexes == []


def test_create_index_errors(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("t1"), make_table(10))
    ns_a.create_table_index(
        CreateTableIndexRequest(id=tid("t1"), column="id", index_type="BTREE", name="i")
    )
    with pytest.raises(TableIndexAlreadyExistsError):
        ns_a.create_table_index(
            CreateTableIndexRequest(id=tid("t1"), column="id", index_type="BTREE", name="i")
        )
    with pytest.raises((TableColumnNotFoundError, InvalidInputError)):
        ns_a.create_table_index(
            CreateTableIndexRequest(id=tid("t1"), column="nocol", index_type="BTREE", name="x")
        )
    with pytest.raises(InvalidInputError):
        ns_a.create_table_index(
            CreateTableIndexRequest(id=tid("t1"), column="id", index_type="NOPE", name="y")
        )
    with pytest.raises(TableNotFoundError):
        ns_a.create_table_index(
            CreateTableIndexRequest(id=tid("missing"), column="id", index_type="BTREE")
        )
    listed = ns_a.list_table_indices(ListTableIndicesRequest(id=tid("t1"))).indexes
    assert [i.index_name for i in listed] == ["i"]


def test_drop_table_index(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("t1"), make_table(20))
    for name, column in (("by_id", "id"), ("by_cat", "cat")):
        ns_a.create_table_scalar_index(
            CreateTableIndexRequest(id=tid("t1"), column=column, index_type="BTREE", name=name)
        )
    ns_a.drop_table_index(DropTableIndexRequest(id=tid("t1"), index_name="by_id"))

    listed = ns_a.list_table_indices(ListTableIndicesRequest(id=tid("t1"))).indexes
    assert [i.index_name for i in listed] == ["by_cat"]
    with pytest.raises(TableIndexNotFoundError):
        ns_a.describe_table_index_stats(
            DescribeTableIndexStatsRequest(id=tid("t1"), index_name="by_id")
        )
    with pytest.raises(TableIndexNotFoundError):
        ns_a.drop_table_index(DropTableIndexRequest(id=tid("t1"), index_name="by_id"))
    remaining = lance.dataset(str(table_location(ns_a, tid("t1")))).describe_indices()
    assert [d.name for d in remaining] == ["by_cat"]


# --------------------------------------------------------------------------- transactions


def _alter(ns: LanceNamespace, txn_id: list[str], *actions: AlterTransactionAction):
    return ns.alter_transaction(AlterTransactionRequest(id=txn_id, actions=list(actions)))


def set_status(status: str) -> AlterTransactionAction:
    return AlterTransactionAction(set_status_action=AlterTransactionSetStatus(status=status))


def set_prop(key: str, value: str, mode: str | None = None) -> AlterTransactionAction:
    return AlterTransactionAction(
        set_property_action=AlterTransactionSetProperty(key=key, value=value, mode=mode)
    )


def unset_prop(key: str, mode: str | None = None) -> AlterTransactionAction:
    return AlterTransactionAction(
        unset_property_action=AlterTransactionUnsetProperty(key=key, mode=mode)
    )


def _indexed_table(ns: LanceNamespace) -> list[str]:
    """A table whose version 2 is an index build; returns that transaction's id."""
    create_table(ns, tid("t1"), make_table(12))
    ns.create_table_index(
        CreateTableIndexRequest(id=tid("t1"), column="id", index_type="BTREE", name="i")
    )
    return [*tid("t1"), "2"]


def _describe(ns: LanceNamespace, txn_id: list[str]):
    return ns.describe_transaction(DescribeTransactionRequest(id=txn_id))


def reconnect(ns: LanceNamespace, backend_kind: str, table_id: list[str]) -> LanceNamespace:
    """A fresh connection to the same namespace (same directory / same server)."""
    if backend_kind == "local":
        return backend.connect(str(table_location(ns, table_id).parent))
    return backend.connect(ns.uri)  # type: ignore[attr-defined]


def test_alter_transaction_properties(ns_a: LanceNamespace, backend_kind: str) -> None:
    txn = _indexed_table(ns_a)
    original = dict(_describe(ns_a, txn).properties or {})
    assert original["operation"] == "CreateIndex"

    resp = _alter(ns_a, txn, set_prop("reviewer", "alice"))
    assert resp.properties == {**original, "reviewer": "alice"}
    assert _describe(ns_a, txn).properties == {**original, "reviewer": "alice"}

    _alter(ns_a, txn, set_prop("reviewer", "bob", mode="Skip"))
    assert (_describe(ns_a, txn).properties or {})["reviewer"] == "alice"
    _alter(ns_a, txn, set_prop("reviewer", "bob", mode="Overwrite"))
    assert (_describe(ns_a, txn).properties or {})["reviewer"] == "bob"
    _alter(ns_a, txn, set_prop("reviewer", "carol"))  # Overwrite is the default mode
    assert (_describe(ns_a, txn).properties or {})["reviewer"] == "carol"

    # Durable: a fresh connection reads the same record.
    again = reconnect(ns_a, backend_kind, tid("t1"))
    assert (_describe(again, txn).properties or {})["reviewer"] == "carol"

    _alter(ns_a, txn, unset_prop("reviewer"))
    assert _describe(ns_a, txn).properties == original
    _alter(ns_a, txn, unset_prop("never-set"))  # Skip is the default mode
    assert _describe(ns_a, txn).properties == original
    # The table's other transaction is untouched.
    assert "reviewer" not in (_describe(ns_a, [*tid("t1"), "1"]).properties or {})


def test_alter_transaction_status(ns_a: LanceNamespace, backend_kind: str) -> None:
    txn = _indexed_table(ns_a)
    resp = _alter(ns_a, txn, set_status("Canceled"), set_prop("why", "rolled back by ops"))
    assert norm_status(resp.status) == "canceled"
    after = _describe(ns_a, txn)
    assert norm_status(after.status) == "canceled"
    assert (after.properties or {})["why"] == "rolled back by ops"
    again = reconnect(ns_a, backend_kind, tid("t1"))
    assert norm_status(_describe(again, txn).status) == "canceled"

    with pytest.raises(InvalidInputError):
        _alter(ns_a, txn, set_status("bogus"))
    assert norm_status(_describe(ns_a, txn).status) == "canceled"
    assert norm_status(_describe(ns_a, [*tid("t1"), "1"]).status) == "succeeded"


def test_alter_transaction_fail_modes_apply_nothing(ns_a: LanceNamespace) -> None:
    txn = _indexed_table(ns_a)
    _alter(ns_a, txn, set_prop("owner", "ops"))
    before = _describe(ns_a, txn)

    with pytest.raises(ConcurrentModificationError):
        _alter(ns_a, txn, set_prop("extra", "1"), set_prop("owner", "dev", mode="Fail"))
    with pytest.raises(InvalidInputError):
        _alter(ns_a, txn, set_prop("extra", "2"), unset_prop("absent", mode="Fail"))

    after = _describe(ns_a, txn)
    assert after.properties == before.properties
    assert norm_status(after.status) == norm_status(before.status) == "succeeded"


def test_alter_transaction_sends_spec_json(rest_ns: LanceNamespace) -> None:
    """The REST body uses the spec's camelCase action names (pylance's own Python binding
    dumps snake_case and the server silently ignores those actions)."""
    txn = _indexed_table(rest_ns)
    _alter(rest_ns, txn, set_status("FAILED"), set_prop("reviewer", "alice"), unset_prop("x"))
    sent = wire_bodies(rest_ns, "alter_transaction")[-1]
    assert sent["id"] == txn
    assert sent["actions"][0] == {"setStatusAction": {"status": "FAILED"}}
    assert sent["actions"][1]["setPropertyAction"]["value"] == "alice"
    assert set(sent["actions"][2]) == {"unsetPropertyAction"}
    assert norm_status(_describe(rest_ns, txn).status) == "failed"


def test_alter_missing_transaction_raises(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("t1"), make_table(3))
    with pytest.raises(TransactionNotFoundError):
        _alter(ns_a, [*tid("t1"), "9"], set_status("FAILED"))
    assert norm_status(_describe(ns_a, [*tid("t1"), "1"]).status) == "succeeded"


# --------------------------------------------------------------------------- versions


def _version_pages(ns: LanceNamespace, table_id: list[str], limit: int) -> list[list[int]]:
    request = ListTableVersionsRequest(id=table_id, limit=limit, descending=True)
    return [[v.version for v in p.versions] for p in iter_pages(ns.list_table_versions, request)]


def test_list_table_versions_descending(ns_a: LanceNamespace) -> None:
    with_versions(ns_a, tid("t1"), 5)
    everything = ns_a.list_table_versions(ListTableVersionsRequest(id=tid("t1"), descending=True))
    assert [v.version for v in everything.versions] == [5, 4, 3, 2, 1]
    assert not everything.page_token
    versions_dir = table_location(ns_a, tid("t1")) / "_versions"
    for v in everything.versions:
        on_disk = manifest_file(versions_dir, v.version)
        assert Path(v.manifest_path).name == on_disk.name
        assert v.manifest_size == on_disk.stat().st_size
        assert v.timestamp_millis and v.timestamp_millis > 0


def test_list_table_versions_pages_local(local_ns: LanceNamespace) -> None:
    with_versions(local_ns, tid("t1"), 5)
    assert _version_pages(local_ns, tid("t1"), 2) == [[5, 4], [3, 2], [1]]
    assert _version_pages(local_ns, tid("t1"), 5) == [[5, 4, 3, 2, 1]]
    first = local_ns.list_table_versions(
        ListTableVersionsRequest(id=tid("t1"), limit=3, descending=True)
    )
    assert [v.version for v in first.versions] == [5, 4, 3]
    rest = local_ns.list_table_versions(
        ListTableVersionsRequest(
            id=tid("t1"), limit=3, descending=True, page_token=first.page_token
        )
    )
    assert [v.version for v in rest.versions] == [2, 1]
    assert not rest.page_token


def test_list_table_versions_pages_rest_against_pylance_adapter(rest_ns: LanceNamespace) -> None:
    """pylance's adapter honours ``limit`` and ``descending`` but never returns a
    ``page_token``: the listing ends after the first page. The REST backend sends the paging
    parameters as the spec defines and reports the server's answer as is (it cannot invent a
    token). When the server learns paging, this test flags it."""
    with_versions(rest_ns, tid("t1"), 5)
    assert _version_pages(rest_ns, tid("t1"), 2) == [[5, 4]]
    sent = [e for e in rest_ns.wire_log.entries() if e.op == "list_table_versions"][-1]  # type: ignore[attr-defined]
    assert "limit=2" in sent.url
    assert "descending=true" in sent.url.lower()


def test_list_versions_of_missing_table_raises(ns_a: LanceNamespace) -> None:
    with pytest.raises(TableNotFoundError):
        ns_a.list_table_versions(ListTableVersionsRequest(id=tid("missing")))


def test_describe_table_version(ns_a: LanceNamespace) -> None:
    with_versions(ns_a, tid("t1"), 3)
    listed = {
        v.version: v
        for v in ns_a.list_table_versions(ListTableVersionsRequest(id=tid("t1"))).versions
    }

    two = ns_a.describe_table_version(DescribeTableVersionRequest(id=tid("t1"), version=2)).version
    assert two.version == 2
    assert two.manifest_path == listed[2].manifest_path
    assert two.manifest_size == listed[2].manifest_size
    assert two.timestamp_millis and two.timestamp_millis > 0

    latest = ns_a.describe_table_version(DescribeTableVersionRequest(id=tid("t1"))).version
    assert latest.version == 3
    assert latest.manifest_path == listed[3].manifest_path

    with pytest.raises(TableVersionNotFoundError):
        ns_a.describe_table_version(DescribeTableVersionRequest(id=tid("t1"), version=9))
    with pytest.raises(TableNotFoundError):
        ns_a.describe_table_version(DescribeTableVersionRequest(id=tid("missing"), version=1))


def test_create_table_version_publishes_staged_manifest(ns_a: LanceNamespace) -> None:
    with_versions(ns_a, tid("t1"), 3, rows=4)  # 12 rows
    location = table_location(ns_a, tid("t1"))
    staged = stage_version(ns_a, tid("t1"), make_table(5, start=100))
    assert staged.version == 4
    # Staging alone changes nothing visible.
    assert lance.dataset(str(location)).version == 3
    assert list_versions(ns_a, tid("t1")) == [1, 2, 3]

    resp = ns_a.create_table_version(
        CreateTableVersionRequest(
            id=tid("t1"),
            version=staged.version,
            manifest_path=staged.manifest_path,
            manifest_size=staged.manifest_size,
        )
    )
    assert resp.version is not None
    assert resp.version.version == 4
    assert Path(resp.version.manifest_path).name == manifest_file(location / "_versions", 4).name

    assert list_versions(ns_a, tid("t1")) == [1, 2, 3, 4]
    described = ns_a.describe_table_version(DescribeTableVersionRequest(id=tid("t1"), version=4))
    assert described.version.manifest_path == resp.version.manifest_path
    detailed = ns_a.describe_table(DescribeTableRequest(id=tid("t1"), load_detailed_metadata=True))
    assert detailed.version == 4
    ds = lance.dataset(str(location))
    assert ds.count_rows() == staged.num_rows == 17
    assert sorted(ds.to_table(columns=["id"]).column("id").to_pylist())[-5:] == list(
        range(100, 105)
    )


def test_create_existing_table_version_conflicts(ns_a: LanceNamespace) -> None:
    with_versions(ns_a, tid("t1"), 2, rows=3)
    first = stage_version(ns_a, tid("t1"), make_table(1, start=50))
    rival = stage_version(ns_a, tid("t1"), make_table(9, start=70))
    assert first.version == rival.version == 3

    ns_a.create_table_version(
        CreateTableVersionRequest(id=tid("t1"), version=3, manifest_path=first.manifest_path)
    )
    with pytest.raises(ConcurrentModificationError):
        ns_a.create_table_version(
            CreateTableVersionRequest(id=tid("t1"), version=3, manifest_path=rival.manifest_path)
        )
    assert list_versions(ns_a, tid("t1")) == [1, 2, 3]
    assert lance.dataset(str(table_location(ns_a, tid("t1")))).count_rows() == first.num_rows


def test_create_version_of_missing_table_raises(ns_a: LanceNamespace) -> None:
    create_table(ns_a, tid("t1"), make_table(2))
    staged = stage_version(ns_a, tid("t1"), make_table(1, start=10))
    with pytest.raises(TableNotFoundError):
        ns_a.create_table_version(
            CreateTableVersionRequest(
                id=tid("missing"), version=staged.version, manifest_path=staged.manifest_path
            )
        )
    assert list_versions(ns_a, tid("t1")) == [1]


def _delete(ns: LanceNamespace, table_id: list[str], *ranges: tuple[int, int], **kwargs: object):
    request = BatchDeleteTableVersionsRequest(
        id=table_id, ranges=[VersionRange(start_version=s, end_version=e) for s, e in ranges]
    )
    return ns.batch_delete_table_versions(request, **kwargs)


def test_batch_delete_table_versions(ns_a: LanceNamespace) -> None:
    with_versions(ns_a, tid("t1"), 6, rows=2)
    resp = _delete(ns_a, tid("t1"), (1, 3), (4, 5))
    assert resp.deleted_count == 3
    assert list_versions(ns_a, tid("t1")) == [3, 5, 6]
    for gone in (1, 2, 4):
        with pytest.raises(TableVersionNotFoundError):
            ns_a.describe_table_version(DescribeTableVersionRequest(id=tid("t1"), version=gone))
    ds = lance.dataset(str(table_location(ns_a, tid("t1"))))
    assert (ds.version, ds.count_rows()) == (6, 12)


def test_batch_delete_covering_latest_refused(ns_a: LanceNamespace, backend_kind: str) -> None:
    """The same rule on both backends: a start of at least 1, an end after the start (or -1),
    never the latest version unless ``allow_latest=True``. The REST client asks the server for
    the latest version first and sends nothing it refuses."""
    with_versions(ns_a, tid("t1"), 4, rows=2)
    for rng in ((3, -1), (1, 5), (4, 5), (0, 2), (3, 2), (3, 3)):
        with pytest.raises(InvalidInputError):
            _delete(ns_a, tid("t1"), rng)
    with pytest.raises(InvalidInputError):  # one bad range refuses the whole request
        _delete(ns_a, tid("t1"), (1, 2), (4, -1))
    assert list_versions(ns_a, tid("t1")) == [1, 2, 3, 4]
    if backend_kind == "rest":
        assert wire_bodies(ns_a, "batch_delete_table_versions") == []  # nothing was sent

    resp = _delete(ns_a, tid("t1"), (4, -1), allow_latest=True)
    assert resp.deleted_count == 1
    assert list_versions(ns_a, tid("t1")) == [1, 2, 3]
    ds = lance.dataset(str(table_location(ns_a, tid("t1"))))
    assert (ds.version, ds.count_rows()) == (3, 6)
    if backend_kind == "rest":
        assert wire_bodies(ns_a, "batch_delete_table_versions") == [
            {"id": tid("t1"), "ranges": [{"start_version": 4, "end_version": -1}]}
        ]


# --------------------------------------------------------------------------- batch commit


def test_batch_commit_unsupported_by_rest_server(rest_ns: LanceNamespace) -> None:
    """pylance's adapter answers "Not supported: batch_commit_tables" (code 18): the REST
    backend reports it as UnsupportedOperationError and nothing is applied."""
    create_table(rest_ns, tid("t1"), make_table(3))
    request = BatchCommitTablesRequest(
        operations=[
            CommitTableOperation(declare_table=DeclareTableRequest(id=tid("new"))),
            CommitTableOperation(deregister_table=DeregisterTableRequest(id=tid("t1"))),
        ]
    )
    with pytest.raises(UnsupportedOperationError):
        rest_ns.batch_commit_tables(request)
    assert list_tables(rest_ns, NS) == {"t1"}


def test_batch_commit_mixed_operations_local(local_ns: LanceNamespace) -> None:
    with_versions(local_ns, tid("hist"), 3, rows=2)
    create_table(local_ns, tid("old"), make_table(4))
    staged = stage_version(local_ns, tid("hist"), make_table(3, start=500))
    request = BatchCommitTablesRequest(
        operations=[
            CommitTableOperation(
                declare_table=DeclareTableRequest(id=tid("fresh"), properties={"team": "x"})
            ),
            CommitTableOperation(
                create_table_version=CreateTableVersionRequest(
                    id=tid("hist"),
                    version=staged.version,
                    manifest_path=staged.manifest_path,
                    manifest_size=staged.manifest_size,
                )
            ),
            CommitTableOperation(
                delete_table_versions=BatchDeleteTableVersionsRequest(
                    id=tid("hist"), ranges=[VersionRange(start_version=1, end_version=3)]
                )
            ),
            CommitTableOperation(deregister_table=DeregisterTableRequest(id=tid("old"))),
        ]
    )
    resp = local_ns.batch_commit_tables(request)

    assert resp.transaction_id
    assert len(resp.results) == 4
    declared, created, deleted, deregistered = resp.results
    assert declared.declare_table is not None and declared.declare_table.location
    assert created.create_table_version is not None
    assert created.create_table_version.version.version == 4
    assert deleted.delete_table_versions is not None
    assert deleted.delete_table_versions.deleted_count == 2
    assert deregistered.deregister_table is not None

    assert list_tables(local_ns, NS) == {"fresh", "hist"}
    fresh = local_ns.describe_table(DescribeTableRequest(id=tid("fresh"), check_declared=True))
    assert fresh.is_only_declared is True
    assert fresh.properties == {"team": "x"}
    assert list_versions(local_ns, tid("hist")) == [3, 4]
    ds = lance.dataset(str(table_location(local_ns, tid("hist"))))
    assert (ds.version, ds.count_rows()) == (4, staged.num_rows)
    txn = local_ns.describe_transaction(DescribeTransactionRequest(id=[resp.transaction_id]))
    assert norm_status(txn.status) == "succeeded"


def test_batch_commit_is_atomic_local(local_ns: LanceNamespace) -> None:
    with_versions(local_ns, tid("hist"), 3, rows=2)
    request = BatchCommitTablesRequest(
        operations=[
            CommitTableOperation(declare_table=DeclareTableRequest(id=tid("fresh"))),
            CommitTableOperation(
                delete_table_versions=BatchDeleteTableVersionsRequest(
                    id=tid("hist"), ranges=[VersionRange(start_version=1, end_version=2)]
                )
            ),
            CommitTableOperation(deregister_table=DeregisterTableRequest(id=tid("missing"))),
        ]
    )
    with pytest.raises(TableNotFoundError):
        local_ns.batch_commit_tables(request)
    assert list_tables(local_ns, NS) == {"hist"}
    assert list_versions(local_ns, tid("hist")) == [1, 2, 3]
