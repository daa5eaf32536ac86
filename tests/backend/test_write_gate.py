"""The write gate read-only (``backend.gate``, classified by ``backend.access``): one
classification of every operation, and a read-only namespace that refuses every write on both
backends (spec operations, service calls, file writes)."""

from __future__ import annotations

import inspect

import lance_namespace
import pyarrow as pa
import pytest
from lance_namespace import (
    CreateNamespaceRequest,
    DeclareTableRequest,
    DescribeTableRequest,
    ListNamespacesRequest,
    ListTablesRequest,
    ListTableVersionsRequest,
)
from lance_namespace.errors import ErrorCode, PermissionDeniedError

import backend
from backend import access
from backend.gate import GatedNamespace, gate
from backend.local import LocalNamespace
from backend.rest import ROUTES, RestNamespaceClient
from backend.services import batch_builder, imports, lifecycle
from backend.services import tags as tagsv
from backend.spec import operations
from tests.support import create_table, tree_digest

ROWS = pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]})


def public_methods(cls: type) -> set[str]:
    return {n for n, v in inspect.getmembers(cls) if not n.startswith("_") and callable(v)}


def test_every_operation_is_classified_once() -> None:
    assert not access.READ_OPS & operations.WRITE_OPS
    known = access.READ_OPS | operations.WRITE_OPS | {"call", "exists"}
    for cls in (lance_namespace.LanceNamespace, LocalNamespace, RestNamespaceClient):
        assert public_methods(cls) <= known, sorted(public_methods(cls) - known)
    # the spec operations: as the REST route table says (one rule)
    for op, route in ROUTES.items():
        assert access.is_write(op) is (not route.read_only), op
    assert access.is_write("some_new_operation")  # unknown: refused


@pytest.fixture
def filled(ns):
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    create_table(ns, ["a", "t"], ROWS)
    ns.declare_table(DeclareTableRequest(id=["a", "planned"]))
    return ns


def state(ns) -> tuple:
    """What a reader sees of the namespace (for before/after comparisons)."""
    tables = ns.list_tables(ListTablesRequest(id=["a"])).tables
    versions = ns.list_table_versions(ListTableVersionsRequest(id=["a", "t"])).versions
    return (
        ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces,
        sorted(tables),
        [v.version for v in versions],
        tagsv.list_tags(ns, ["a", "t"]).to_dict("records"),
    )


def test_reads_pass_and_writes_are_refused(filled) -> None:
    gated = gate(filled, read_only="the console is read-only")
    regated = gate(gated, read_only="the console is read-only")
    assert isinstance(regated, GatedNamespace) and regated.inner is filled  # never nested
    assert gated.read_only == "the console is read-only"
    before = state(filled)
    assert state(gated) == before  # reads go through unchanged
    assert gated.describe_table(DescribeTableRequest(id=["a", "t"])).location == (
        filled.describe_table(DescribeTableRequest(id=["a", "t"])).location
    )
    assert gated.delimiter == filled.delimiter
    refused = [
        lambda: gated.create_namespace(CreateNamespaceRequest(id=["b"])),
        lambda: gated.declare_table(DeclareTableRequest(id=["a", "x"])),
        lambda: lifecycle.drop_table(gated, ["a", "t"]),
        lambda: lifecycle.deregister_table(gated, ["a", "planned"]),
        lambda: tagsv.create_tag(gated, ["a", "t"], "gold", 1),
        lambda: lifecycle.rename_table(gated, ["a", "t"], new_name="u"),
        lambda: lifecycle.drop_namespace(gated, ["a"], cascade=True),
        lambda: imports.import_table(gated, ["a", "new"], b"id\n1\n", "csv"),
        lambda: imports.import_table(gated, ["a", "t"], b"id,name\n9,z\n", "csv", mode="append"),
    ]
    for write in refused:
        with pytest.raises(PermissionDeniedError) as caught:
            write()
        assert caught.value.code == ErrorCode.PERMISSION_DENIED
        assert str(caught.value).startswith("the console is read-only: ")
        assert "nothing was written" in str(caught.value)
    assert state(filled) == before


def test_rest_call_by_name_is_gated(rest_server) -> None:
    """The REST client's ``call(op, ...)`` / ``exists(op, ...)`` run any operation by name."""
    client = backend.connect(rest_server.url)
    client.create_namespace(CreateNamespaceRequest(id=["a"]))
    create_table(client, ["a", "t"], ROWS)
    gated = gate(client, read_only="the console is read-only")
    assert gated.call("list_namespaces", ListNamespacesRequest(id=[])).namespaces == ["a"]
    assert gated.exists("table_exists", ["a", "t"]) is True
    with pytest.raises(PermissionDeniedError, match="create_namespace"):
        gated.call("create_namespace", CreateNamespaceRequest(id=["b"]))
    assert client.list_namespaces(ListNamespacesRequest(id=[])).namespaces == ["a"]
    client.close()


def test_file_writes_outside_operations_are_refused(local_root) -> None:
    """Staging a manifest writes files into the root without a namespace operation: it asks
    the gate first. Optimize / compact are operations of the local backend."""
    from backend.services.tuning.optimize import compact_files, optimize_indexes

    ns = backend.connect(str(local_root))
    create_table(ns, ["t"], ROWS)
    root = local_root
    before = tree_digest(root)
    gated = gate(ns, read_only="the console is read-only")
    for write in (
        lambda: batch_builder.stage_next_version(gated, ["t"]),
        lambda: optimize_indexes(gated, ["t"]),
        lambda: compact_files(gated, ["t"]),
    ):
        with pytest.raises(PermissionDeniedError):
            write()
    assert tree_digest(root) == before
