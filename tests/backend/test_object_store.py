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
from backend.local import txn_store
from backend.rules import connect_options
from backend.services import lifecycle as lc
from backend.services import namespaces as nsv
from backend.services import restore as restoresv
from backend.services import tags as tagsv
from backend.services.versions import list_versions
from tests.support import create_table, free_port, make_table


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
    tagsv.create_tag(ns, ["a", "t"], "before-cleanup", 1)
    plan = lc.cleanup_plan(ns, ["a", "t"], keep_last=1)
    assert plan.delete == [2] and plan.protected == {1: ["before-cleanup"]}
    lc.run_cleanup(ns, plan)
    assert sorted(list_versions(ns, ["a", "t"])["version"]) == [1, 3]
    restoresv.restore_version(ns, ["a", "t"], 1)
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


# -- storage set-up: what to set, lance's environment, one storage layer, no markers ------------

EMPTY_ETAG = '"d41d8cd98f00b204e9800998ecf8427e"'  # MD5 of zero bytes


@pytest.fixture
def clean_aws_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No AWS_* variable of the developer's shell reaches the test (lance and obstore read them)."""
    import os

    for name in list(os.environ):
        if name.startswith(("AWS_", "ALLOW_HTTP")):
            monkeypatch.delenv(name)
    return monkeypatch


def test_s3_without_usable_options_names_what_to_set(s3_server, clean_aws_env) -> None:
    bucket = s3_server.new_bucket()
    target = f"s3://{bucket}/root"
    opts = s3_server.storage_options
    creds = {k: opts[k] for k in ("aws_access_key_id", "aws_secret_access_key")}
    cases = [
        ({}, ("aws_region", "aws_endpoint")),
        ({"aws_endpoint": s3_server.endpoint, **creds}, ("allow_http=true",)),
        ({"aws_endpoint": s3_server.endpoint, "allow_http": "true"}, ("aws_access_key_id",)),
        (
            {"aws_region": "us-east-1", "aws_access_key_id": opts["aws_access_key_id"]},
            ("aws_secret_access_key",),
        ),
    ]
    for options, named in cases:
        with pytest.raises(InvalidInputError) as err:
            backend.connect(target, storage_options=options)
        text = str(err.value)
        assert text.startswith(f"Cannot open {target}: "), text
        assert all(n in text for n in named), (options, text)
        assert "ResolveRegion" not in text and "dns" not in text and "{" not in text
        assert s3_server.SECRET_KEY not in text
    assert s3_server.objects(bucket) == {}  # nothing was written


def test_s3_unreachable_endpoint_is_a_connection_error_naming_the_endpoint(
    clean_aws_env,
) -> None:
    """An endpoint where nothing listens: the error names that endpoint as the address that
    could not be reached, and does not ask to set aws_endpoint (it is set)."""
    port = free_port()  # a loopback port nobody listens on
    options = {
        "aws_endpoint": f"http://127.0.0.1:{port}",
        "allow_http": "true",
        "aws_region": "us-east-1",
        "aws_access_key_id": "AKIDUNREACHABLE",
        "aws_secret_access_key": "unreachable-secret-0123456789",
        "client_max_retries": "0",
        "client_retry_timeout": "1",
    }
    with pytest.raises(backend.NamespaceConnectionError) as err:
        backend.connect("s3://nowhere/root", storage_options=options)
    text = str(err.value)
    reached = f"the endpoint http://127.0.0.1:{port} could not be reached"
    assert text.startswith(f"Cannot open the namespace at s3://nowhere/root: {reached}"), text
    assert "set aws_endpoint" not in text.lower() and "also aws_endpoint" not in text, text
    assert "Set the storage options" not in text, text
    assert "unreachable-secret" not in text and "AKIDUNREACHABLE" not in text
    assert "Debug source" not in text
    store = txn_store.ObjectTxnStore("s3://nowhere/root", options)
    for call in (lambda: store.get("t1"), lambda: store.put("t1", {"a": 1}), store.list):
        with pytest.raises(backend.NamespaceConnectionError) as err:
            call()
        assert reached in str(err.value) and "Set the storage options" not in str(err.value)
    # the same endpoint from the environment (AWS_ENDPOINT) is named the same way
    clean_aws_env.setenv("AWS_ENDPOINT", f"http://127.0.0.1:{port}/")
    from_env = {k: v for k, v in options.items() if k != "aws_endpoint"}
    with pytest.raises(backend.NamespaceConnectionError, match=reached):
        backend.connect("s3://nowhere/root", storage_options=from_env)


UNREACHABLE_OPTIONS = {
    "allow_http": "true",
    "aws_region": "us-east-1",
    "aws_access_key_id": "AKIDUNREACHABLE",
    "aws_secret_access_key": "unreachable-secret-0123456789",
}


@pytest.mark.parametrize(
    ("endpoint", "why"),
    [
        ("http://127.0.0.1:{port}", "(nothing answered there)"),
        ("http://no-such-host.invalid:9000", "(its host name does not resolve)"),
    ],
)
def test_an_endpoint_that_refuses_is_said_before_lance_is_asked(
    endpoint: str, why: str, clean_aws_env, monkeypatch
) -> None:
    """A refused connection or a name that does not resolve is known after one connection
    attempt: the namespace is not opened (lance's client would retry for seconds), and the
    error is the one lance's failure gives, naming the endpoint."""
    from backend.local import namespace as local_namespace

    def never(*args, **kwargs):
        raise AssertionError("lance was asked to open an unreachable root")

    monkeypatch.setattr(local_namespace, "DirectoryNamespace", never)
    endpoint = endpoint.format(port=free_port())
    shown = connect_options.endpoint_address(endpoint)
    options = {**UNREACHABLE_OPTIONS, "aws_endpoint": endpoint}
    with pytest.raises(backend.NamespaceConnectionError) as err:
        backend.connect("s3://nowhere/root", storage_options=options)
    text = str(err.value)
    assert text.startswith(
        f"Cannot open the namespace at s3://nowhere/root: the endpoint {shown} could not be "
        f"reached {why}. Check that the S3 server is running there"
    ), text
    assert "unreachable-secret" not in text and "AKIDUNREACHABLE" not in text


def test_the_endpoint_check_leaves_to_the_client_what_it_cannot_judge(clean_aws_env) -> None:
    """Nothing is said for an endpoint that accepts a connection, a root with no endpoint set
    or not on S3, or when a proxy is set (the client connects through it, not directly)."""
    import socket

    from backend.local.target import check_endpoint_reachable

    refused = {**UNREACHABLE_OPTIONS, "aws_endpoint": f"http://127.0.0.1:{free_port()}"}
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        accepting = {**UNREACHABLE_OPTIONS, "aws_endpoint": f"http://127.0.0.1:{port}"}
        check_endpoint_reachable("s3://b/root", accepting, env={})
    check_endpoint_reachable("s3://b/root", UNREACHABLE_OPTIONS, env={})  # no endpoint
    check_endpoint_reachable("gs://b/root", refused, env={})  # not on S3
    check_endpoint_reachable("s3://b/root", {**refused, "proxy_url": "http://proxy:3128"}, env={})
    for name in ("HTTPS_PROXY", "http_proxy", "ALL_PROXY"):
        check_endpoint_reachable("s3://b/root", refused, env={name: "http://proxy:3128"})
    with pytest.raises(backend.NamespaceConnectionError):  # the same options, no proxy
        check_endpoint_reachable("s3://b/root", refused, env={})


@pytest.mark.parametrize(
    ("endpoint", "shown"),
    [
        ("http://127.0.0.1:9000", "http://127.0.0.1:9000"),
        (
            "http://minio:minio-secret@127.0.0.1:9000/some/path?X-Amz-Token=t0k",
            "http://127.0.0.1:9000",
        ),
        ("https://s3.example.com", "https://s3.example.com:443"),
        ("HTTP://[::1]:9000/", "http://[::1]:9000"),
        ("127.0.0.1:9000", "127.0.0.1:9000"),
    ],
)
def test_endpoint_is_named_by_scheme_host_and_port(endpoint: str, shown: str) -> None:
    assert connect_options.endpoint_address(endpoint) == shown
    named = connect_options.storage_endpoint("s3://b/r", {"aws_endpoint": endpoint}, env={})
    assert named == shown and "minio-secret" not in named and "t0k" not in named
    assert connect_options.storage_endpoint("gs://b/r", {"aws_endpoint": endpoint}, env={}) == ""


def test_aws_endpoint_from_the_environment_reaches_txn_store(s3_server, clean_aws_env) -> None:
    # lance honours AWS_ENDPOINT; the console's own records go through the same layer, so a
    # namespace opened with no storage options at all works end to end.
    env = {
        "AWS_ENDPOINT": s3_server.endpoint,
        "AWS_ALLOW_HTTP": "true",
        "AWS_REGION": s3_server.REGION,
        "AWS_ACCESS_KEY_ID": s3_server.ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": s3_server.SECRET_KEY,
    }
    for name, value in env.items():
        clean_aws_env.setenv(name, value)
    bucket = s3_server.new_bucket()
    ns = backend.connect(f"s3://{bucket}/root")
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    assert isinstance(ns.txn_store, txn_store.ObjectTxnStore)
    assert ns.txn_store.list() == []
    ns.txn_store.put("b-1", {"status": "RUNNING"})
    ns.txn_store.update("b-1", lambda r: {**r, "status": "SUCCEEDED"})
    assert [r["status"] for r in ns.txn_store.list()] == ["SUCCEEDED"]
    assert "root/_console/transactions/b-1.json" in s3_server.objects(bucket)
    # options given for part of the set-up: the rest still comes from the environment
    partial = txn_store.ObjectTxnStore(f"s3://{bucket}/root", {"timeout": "30s"})
    assert partial.get("b-1")["status"] == "SUCCEEDED"
    assert ns.txn_store.delete("b-1") and ns.txn_store.get("b-1") is None
    assert "root/_console/transactions/b-1.json" not in s3_server.objects(bucket)


def test_typical_console_writes_leave_no_directory_markers(s3_root) -> None:
    from tests.backend.s3_support import stage_version_s3
    from tests.support import batch, op_declare, op_version

    ns, server = s3_root.ns, s3_root.server
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    create_table(ns, ["a", "t"], make_table(40, dim=8))
    create_table(ns, ["a", "u"], make_table(5))
    ns.declare_table(DeclareTableRequest(id=["a", "d"]))
    ns.create_table_scalar_index(
        CreateTableIndexRequest(id=["a", "t"], column="id", index_type="BTREE")
    )
    tagsv.create_tag(ns, ["a", "t"], "v1", 1)
    staged = stage_version_s3(ns, server, ["a", "u"], make_table(3, start=50))
    ns.batch_commit_tables(batch(op_declare(["a", "e"]), op_version(["a", "u"], staged)))
    ns.txn_store.put("manual", {"status": "QUEUED"})
    objects = server.objects(s3_root.bucket)
    assert any(k.startswith("root/_console/") for k in objects)  # the console did write
    markers = [k for k, etag in objects.items() if k.endswith("/") or etag == EMPTY_ETAG]
    assert markers == []


def test_setup_rules_per_store_and_the_environment() -> None:
    from backend.local.object_store import split_options
    from backend.rules.connect_options import storage_keys, storage_setup_problems

    aws_endpoint = {"aws_endpoint": "https://b.vpce-1.s3.us-east-1.vpce.amazonaws.com"}
    assert storage_setup_problems("s3://b/r", aws_endpoint, env={}) == []  # instance roles
    assert storage_setup_problems("s3://b/r", {"aws_region": "eu-west-1"}, env={}) == []
    env = {"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}
    assert storage_setup_problems("s3://b/r", {}, env=env) == []  # all from the environment
    assert storage_setup_problems("s3a://b/r", {}, env={})[0].startswith("no region")
    (az,) = storage_setup_problems("az://container/r", {}, env={})
    assert "azure_storage_account_name" in az
    assert storage_setup_problems("az://c/r", {}, env={"AZURE_STORAGE_ACCOUNT_NAME": "a"}) == []
    assert storage_setup_problems("gs://b/r", {}, env={}) == []  # default credentials may do
    assert storage_setup_problems("/a/folder", {}, env={}) == []
    assert {k.key for k in storage_keys("gs://b")} >= {"google_service_account", "timeout"}
    config, client, retry = split_options(
        {"aws_region": "x", "allow_http": "TRUE", "client_max_retries": "2", "use_opendal": "1"}
    )
    assert config == {"aws_region": "x"} and client == {"allow_http": True}
    assert retry == {"max_retries": 2}
