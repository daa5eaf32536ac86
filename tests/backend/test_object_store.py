"""The local backend on an S3-compatible object store: moto's server (a real HTTP endpoint that
enforces conditional writes), started by the tests. Browsing, declare, create, indexes,
versions, tags, restore, rename; clear refusals (CASCADE, RESTRICT on a non-empty namespace) that
change nothing in the bucket; storage-option secrets never in a repr or an error."""

from __future__ import annotations

import pytest
from lance_namespace import (
    CountTableRowsRequest,
    CreateNamespaceRequest,
    CreateTableIndexRequest,
    DeclareTableRequest,
    DescribeTableIndexStatsRequest,
    DescribeTableRequest,
    DropNamespaceRequest,
    ListTableIndicesRequest,
)
from lance_namespace.errors import (
    InvalidInputError,
    LanceNamespaceError,
    TableNotFoundError,
    UnsupportedOperationError,
)

import backend
from backend.services import lifecycle as lc
from backend.services import namespaces as nsv
from backend.services.versions import list_versions
from tests.support import create_table, make_table


def test_s3_namespace_browse_declare_create(s3_root) -> None:
    ns = s3_root.ns
    for n in (["a"], ["a", "b"]):
        ns.create_namespace(CreateNamespaceRequest(id=n))
    create_table(ns, ["a", "t"], make_table(50))
    ns.declare_table(DeclareTableRequest(id=["a", "b", "d"], properties={"owner": "ops"}))
    assert nsv.list_namespace_names(ns, []) == ["a"]
    assert nsv.list_namespace_names(ns, ["a"]) == ["b"]
    assert nsv.list_table_names(ns, ["a"]) == ["t"]
    assert nsv.list_table_names(ns, ["a", "b"]) == ["d"]
    desc = ns.describe_table(DescribeTableRequest(id=["a", "t"]))
    assert desc.location.startswith(f"s3://{s3_root.bucket}/root/")
    assert ns.count_table_rows(CountTableRowsRequest(id=["a", "t"])).count == 50
    assert ns.describe_table(DescribeTableRequest(id=["a", "b", "d"])).properties == {
        "owner": "ops"
    }
    keys = s3_root.server.objects(s3_root.bucket)
    assert any(k.startswith("root/__manifest/") for k in keys)


def test_s3_indexes_and_versions(s3_root) -> None:
    ns = s3_root.ns
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    create_table(ns, ["a", "t"], make_table(300, dim=16))
    ns.create_table_scalar_index(
        CreateTableIndexRequest(id=["a", "t"], column="id", index_type="BTREE")
    )
    ns.create_table_index(
        CreateTableIndexRequest(
            id=["a", "t"], column="vec", index_type="IVF_FLAT", distance_type="l2"
        )
    )
    names = {
        i.index_name for i in ns.list_table_indices(ListTableIndicesRequest(id=["a", "t"])).indexes
    }
    assert names == {"id_idx", "vec_idx"}
    stats = ns.describe_table_index_stats(
        DescribeTableIndexStatsRequest(id=["a", "t"], index_name="vec_idx")
    )
    assert stats.num_indexed_rows == 300
    versions = list_versions(ns, ["a", "t"])
    assert sorted(versions["version"]) == [1, 2, 3]
    lc.create_tag(ns, ["a", "t"], "before-cleanup", 1)
    plan = lc.cleanup_plan(ns, ["a", "t"], keep_last=1)
    assert plan.delete == [2] and plan.protected == {1: ["before-cleanup"]}
    lc.run_cleanup(ns, plan)
    assert sorted(list_versions(ns, ["a", "t"])["version"]) == [1, 3]
    lc.restore_version(ns, ["a", "t"], 1)
    assert sorted(list_versions(ns, ["a", "t"])["version"]) == [1, 3, 4]


def test_s3_rename_is_one_catalog_commit(s3_root) -> None:
    ns = s3_root.ns
    for n in (["a"], ["b"]):
        ns.create_namespace(CreateNamespaceRequest(id=n))
    create_table(ns, ["a", "t"], make_table(7))
    assert backend.capabilities(ns).rename is True
    lc.rename_table(ns, ["a", "t"], "moved", ["b"])
    assert nsv.list_table_names(ns, ["a"]) == []
    assert ns.count_table_rows(CountTableRowsRequest(id=["b", "moved"])).count == 7
    with pytest.raises(TableNotFoundError):
        ns.describe_table(DescribeTableRequest(id=["a", "t"]))


def test_s3_refusals_change_nothing_in_the_bucket(s3_root) -> None:
    ns = s3_root.ns
    for n in (["a"], ["a", "b"]):
        ns.create_namespace(CreateNamespaceRequest(id=n))
    create_table(ns, ["a", "t"], make_table(5))
    before = s3_root.server.objects(s3_root.bucket)  # key -> ETag
    with pytest.raises(UnsupportedOperationError, match="CASCADE"):
        ns.drop_namespace(DropNamespaceRequest(id=["a"], behavior="Cascade"))
    with pytest.raises(LanceNamespaceError):
        lc.drop_namespace(ns, ["a"])  # RESTRICT: not empty
    assert s3_root.server.objects(s3_root.bucket) == before
    assert backend.capabilities(ns).batch_commit is True  # tests/backend/test_object_store_batch.py
    assert backend.capabilities(ns).drop_cascade is False


def test_s3_secrets_never_in_repr_or_errors(s3_root) -> None:
    ns = s3_root.ns
    secret = s3_root.server.SECRET_KEY
    assert secret not in repr(ns)
    with pytest.raises(LanceNamespaceError) as missing:
        ns.describe_table(DescribeTableRequest(id=["nowhere", "t"]))
    assert secret not in str(missing.value) and secret not in repr(missing.value)
    with pytest.raises(InvalidInputError, match="does not exist") as err:
        backend.connect(
            f"s3://{s3_root.bucket}-missing/root", storage_options=s3_root.server.storage_options
        )
    assert secret not in str(err.value) and "<Error>" not in str(err.value)
