"""The backends as Lance namespace implementations, used by outside applications.

``lance_namespace.connect(impl, properties)`` imports the class and calls ``cls(**properties)``;
``lancedb.connect_namespace(impl, properties)`` does the same and hands the object to lancedb's
engine, which then declares, describes and lists tables through it. Both are exercised here on
``backend.local.LocalNamespace`` (a file root, an S3 root on moto) and on
``backend.rest.RestNamespaceClient`` (against a real ``RestAdapter``), with pylance's property
names: ``root`` / ``storage.<key>`` and ``uri`` / ``delimiter`` / ``header.<Name>``. Search
results are checked against a brute-force numpy computation; the tables lancedb wrote are read
back through ``backend.connect``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lance_namespace
import lancedb
import numpy as np
import pyarrow as pa
import pytest
from lance_namespace import (
    CountTableRowsRequest,
    CreateNamespaceRequest,
    CreateTableRequest,
    ListTablesRequest,
    ListTableVersionsRequest,
)
from lance_namespace.errors import InvalidInputError, NamespaceNotFoundError

import backend
from backend.local import LocalNamespace
from backend.locations import path_uri
from backend.rest import RestNamespaceClient
from backend.rules.connect_options import fold_properties
from tests.conftest import RestServer, S3Server
from tests.support import ipc_stream_bytes, make_table, tree_digest

LOCAL_IMPL = "backend.local.LocalNamespace"
REST_IMPL = "backend.rest.RestNamespaceClient"
SECRET = "sk-IMPL-0123456789abcdef"
DIM = 4


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestServer]:
    root = tmp_path_factory.mktemp("impl-rest")
    srv = RestServer(root)
    try:
        yield srv
    finally:
        srv.stop()


def _vectors(n: int, start: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    flat = pa.array(rng.random(n * DIM, dtype=np.float32))
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "vector": pa.FixedSizeListArray.from_arrays(flat, DIM),
        }
    )


def _nearest(rows: pa.Table, query: np.ndarray, k: int) -> list[int]:
    """The ``k`` ids nearest to ``query`` by L2 distance, computed with numpy."""
    vectors = np.stack(rows["vector"].to_numpy(zero_copy_only=False))
    order = np.argsort(((vectors - query) ** 2).sum(axis=1), kind="stable")[:k]
    return [int(rows["id"][int(i)].as_py()) for i in order]


# -- lance_namespace.connect ----------------------------------------------------------------------
def test_lance_namespace_connect_makes_a_local_namespace(tmp_path: Path) -> None:
    root = tmp_path / "root"
    ns = lance_namespace.connect(LOCAL_IMPL, {"root": str(root)})
    assert isinstance(ns, LocalNamespace)
    assert ns.root == path_uri(root)
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    ns.create_table(CreateTableRequest(id=["a", "t"]), ipc_stream_bytes(make_table(4)))
    # The console's checks apply (pylance's own namespace would create this table).
    with pytest.raises(NamespaceNotFoundError):
        ns.create_table(CreateTableRequest(id=["nope", "t"]), ipc_stream_bytes(make_table(4)))
    again = backend.connect(str(root))
    assert again.list_tables(ListTablesRequest(id=["a"])).tables == ["t"]
    assert again.count_table_rows(CountTableRowsRequest(id=["a", "t"])).count == 4


def test_lance_namespace_connect_makes_a_rest_client(server: RestServer) -> None:
    props = {
        "uri": server.url,
        "delimiter": "$",
        "header.X-Trace": "trace-1",
        "header.X-Api-Key": SECRET,
        "timeout": "5",
        "max_retries": "0",
    }
    ns = lance_namespace.connect(REST_IMPL, props)
    assert isinstance(ns, RestNamespaceClient)
    assert ns.delimiter == "$"
    ns.create_namespace(CreateNamespaceRequest(id=["conn"]))
    entry = ns.wire_log[-1]
    headers = {k.lower(): v for k, v in entry.request_headers.items()}
    assert headers["x-trace"] == "trace-1"
    assert "x-api-key" in headers and SECRET not in headers["x-api-key"]
    assert SECRET not in repr(ns) and SECRET not in str(entry.as_dict())
    listed = ns.list_namespaces(lance_namespace.ListNamespacesRequest(id=[]))
    assert "conn" in listed.namespaces


def test_storage_properties_reach_an_object_store_root(s3_server: S3Server) -> None:
    bucket = s3_server.new_bucket()
    storage = {f"storage.{k}": v for k, v in s3_server.storage_options.items()}
    props = {"root": f"s3://{bucket}/root", **storage}
    ns = lance_namespace.connect(LOCAL_IMPL, props)
    assert isinstance(ns, LocalNamespace)
    assert ns.storage_options == s3_server.storage_options
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    ns.create_table(CreateTableRequest(id=["a", "t"]), ipc_stream_bytes(make_table(5)))
    assert ns.count_table_rows(CountTableRowsRequest(id=["a", "t"])).count == 5
    # lancedb writes the data itself: it needs the same storage options for the bucket.
    db = lancedb.connect_namespace(LOCAL_IMPL, props, storage_options=s3_server.storage_options)
    first = _vectors(20, 0, seed=3)
    table = db.create_table("v", first, namespace_path=["a"])
    query = np.full(DIM, 0.5, dtype=np.float32)
    got = table.search(query).limit(3).to_arrow()["id"].to_pylist()
    assert got == _nearest(first, query, 3)
    assert sorted(ns.list_tables(ListTablesRequest(id=["a"])).tables) == ["t", "v"]
    assert any(k.startswith("root/") and "/_versions/" in k for k in s3_server.objects(bucket))


# -- lancedb.connect_namespace --------------------------------------------------------------------
@pytest.fixture(params=["local", "rest"])
def impl(request: pytest.FixtureRequest, tmp_path: Path, server: RestServer) -> dict[str, Any]:
    """An implementation name, its properties and a console connection to the same namespace."""
    if request.param == "local":
        root = tmp_path / "root"
        return {
            "impl": LOCAL_IMPL,
            "props": {"root": str(root)},
            "console": lambda: backend.connect(str(root)),
            "root": root,
        }
    return {
        "impl": REST_IMPL,
        "props": {"uri": server.url, "header.X-Client": "lancedb"},
        "console": lambda: backend.connect(server.url),
        "root": server.root,
    }


def test_lancedb_creates_adds_and_searches_through_our_namespace(
    impl: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    ns_name = f"app-{request.node.callspec.id}"
    db = lancedb.connect_namespace(impl["impl"], impl["props"])
    db.create_namespace([ns_name])
    first, more = _vectors(40, 0, seed=1), _vectors(10, 40, seed=2)
    table = db.create_table("items", first, namespace_path=[ns_name])
    table.add(more)
    assert table.count_rows() == 50
    every = pa.concat_tables([first, more])
    for seed in (5, 6):
        query = np.random.default_rng(seed).random(DIM, dtype=np.float32)
        got = table.search(query).limit(5).to_arrow()["id"].to_pylist()
        assert got == _nearest(every, query, 5)
    # What lancedb wrote is a table of the namespace, as the console sees it.
    console = impl["console"]()
    assert console.list_tables(ListTablesRequest(id=[ns_name])).tables == ["items"]
    assert console.count_table_rows(CountTableRowsRequest(id=[ns_name, "items"])).count == 50
    versions = console.list_table_versions(ListTableVersionsRequest(id=[ns_name, "items"]))
    assert [v.version for v in versions.versions] == [1, 2]
    assert db.list_tables(namespace_path=[ns_name]).tables == ["items"]


def test_lancedb_writes_pass_the_console_checks(impl: dict[str, Any]) -> None:
    """A table in a namespace that does not exist. The local namespace refuses it (pylance's
    own directory namespace creates it), nothing written; listing it is NamespaceNotFound.
    Over REST a single write is one request and the server judges it (issue 37: no
    catalog-wide reads before a write); the "parent namespace exists" rule is the explicit
    preflight's, which names the missing namespace before anything is sent."""
    from lance_namespace import CreateTableRequest

    db = lancedb.connect_namespace(impl["impl"], impl["props"])
    root: Path = impl["root"]
    before = tree_digest(root)
    problems = backend.preflight(impl["console"](), CreateTableRequest(id=["no-such-ns", "x"]))
    assert any("no-such-ns" in str(p) for p in problems), problems
    assert tree_digest(root) == before  # the preflight reads only
    if impl["impl"] == REST_IMPL:
        return  # the write itself is the server's to judge (pylance's RestAdapter accepts it)
    with pytest.raises(Exception, match="NamespaceNotFoundError") as info:
        db.create_table("x", _vectors(5, 0, seed=4), namespace_path=["no-such-ns"])
    assert "no-such-ns" in str(info.value) or "not found" in str(info.value).lower()
    assert tree_digest(root) == before
    with pytest.raises(Exception, match="NamespaceNotFoundError"):
        db.list_tables(namespace_path=["no-such-ns"])


# -- property names: one folding rule, bad properties refused -------------------------------------
def test_properties_fold_into_options() -> None:
    got = fold_properties(
        {
            "storage_options": {"region": "a", "bucket": "b"},
            "storage.region": "c",
            "header.X-A": "1",
            "timeout": "2.5",
            "max_retries": "3",
            "jitter": "false",
            "verify": "/etc/ca.pem",
            "delimiter": ".",
        }
    )
    assert got == {
        "storage_options": {"region": "c", "bucket": "b"},
        "headers": {"X-A": "1"},
        "timeout": 2.5,
        "max_retries": 3,
        "jitter": False,
        "verify": "/etc/ca.pem",
        "delimiter": ".",
    }
    assert fold_properties({"max_retries": "2.0", "timeout": "soon"}) == {
        "max_retries": "2.0",  # not a whole number: left for the option checks to refuse
        "timeout": "soon",
    }


BAD_PROPERTIES = [
    ("local-api-key", LOCAL_IMPL, {"api_key": SECRET}, "only apply to REST"),
    ("local-header", LOCAL_IMPL, {"header.X-A": "1"}, "only apply to REST"),
    ("local-no-root", LOCAL_IMPL, None, "target must be"),
    ("local-root-twice", LOCAL_IMPL, {"target": "elsewhere"}, "once"),
    ("local-unknown", LOCAL_IMPL, {"colour": "blue"}, "unknown option"),
    ("local-secret-storage-newline", LOCAL_IMPL, {"storage.aws_secret_access_key": SECRET + "\n"},
     "storage option"),
    ("rest-header-name", REST_IMPL, {"header.Bad Name": "v"}, "header name"),
    ("rest-secret-header-newline", REST_IMPL, {"header.X-Api-Key": SECRET + "\r\n"}, "header"),
    ("rest-timeout-text", REST_IMPL, {"timeout": "soon"}, "timeout"),
    ("rest-max-retries-fraction", REST_IMPL, {"max_retries": "2.5"}, "(?i)max_retries"),
    ("rest-no-uri", REST_IMPL, None, "server URL"),
    ("rest-storage", REST_IMPL, {"storage.region": "x"}, "unknown REST option"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("impl_name", "extra", "match"),
    [pytest.param(i, e, m, id=n) for n, i, e, m in BAD_PROPERTIES],
)
def test_bad_properties_are_refused(
    impl_name: str,
    extra: dict[str, str] | None,
    match: str,
    tmp_path: Path,
    server: RestServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "root"
    base = {"root": str(root)} if impl_name == LOCAL_IMPL else {"uri": server.url}
    props = {} if extra is None else {**base, **extra}
    with pytest.raises(ValueError, match=match) as info:  # lance_namespace wraps the error
        lance_namespace.connect(impl_name, props)
    assert isinstance(info.value.__context__, InvalidInputError)
    assert SECRET not in str(info.value)
    cls = LocalNamespace if impl_name == LOCAL_IMPL else RestNamespaceClient
    with pytest.raises(InvalidInputError, match=match):
        cls(**props)
    assert not root.exists() and list(tmp_path.iterdir()) == []


# -- the README's example ------------------------------------------------------------------------
def _readme_block(heading: str) -> str:
    """The first ```python block after the README heading ``heading``."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip("#").strip() == heading)
    opening = next(i for i in range(start, len(lines)) if lines[i].strip() == "```python")
    closing = next(i for i in range(opening + 1, len(lines)) if lines[i].strip() == "```")
    return "\n".join(lines[opening + 1 : closing]) + "\n"


def test_the_readme_example_runs_as_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(_readme_block("As a Lance namespace implementation"), "README.md", "exec"), {})
    assert capsys.readouterr().out.splitlines() == ["[1, 0]", "['items']"]
    console = backend.connect(str(tmp_path / "my-lake"))
    assert console.count_table_rows(CountTableRowsRequest(id=["app", "items"])).count == 4
