"""Every Copy-as-Python snippet the console shows runs as pasted: generated exactly as the
pages generate it (``components.snippets.python_snippet``, ``components.snippets.search_snippets``),
executed in a fresh process as ``python -c`` runs it (nothing predefined: fresh globals, the
test's whole environment), against a real local namespace and a real REST server where the
snippet targets one; each test then checks the snippet's effect by reading the namespace
independently. The processes are forks of one warm interpreter (``snippet_child.py``), which
has imported the modules the snippets import, so that each snippet does not pay their import
again."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import lance
import numpy as np
import pytest
from lance_namespace import (
    CreateNamespaceRequest,
    DeclareTableRequest,
    DescribeTableRequest,
    LanceNamespace,
    ListNamespacesRequest,
    ListTableIndicesRequest,
    ListTablesRequest,
)

import backend
from backend.demo import embedding
from backend.rules import index_rules as rules
from backend.rules import version_ranges
from backend.services import batch_builder as bb
from backend.services.search.query import DISTANCE
from backend.services.versions import delete_request, list_versions
from components.snippets import connect_args, python_snippet, search_snippets
from tests.backend import search_support
from tests.conftest import RestServer
from tests.support import ZygoteChild, create_table, make_table, table_location

REPO = Path(__file__).resolve().parents[2]
T = ["snip", "t"]
DIM = 8


# Every snippet runs in a child Python process (1-10 s each): the slow set, not make test-fast.
pytestmark = pytest.mark.slow


@pytest.fixture(params=["local", "rest"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The connection target a snippet is generated for: a local root or a REST server."""
    root = tmp_path / "root"
    root.mkdir()
    if request.param == "local":
        yield str(root)
        return
    server = RestServer(root)
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def ns(target: str):
    ns = backend.connect(target)
    ns.create_namespace(CreateNamespaceRequest(id=["snip"]))
    create_table(ns, T, make_table(60, dim=DIM, seed=5))
    return ns


SNIPPET_CHILD = Path(__file__).with_name("snippet_child.py")
_INTERPRETER: list[ZygoteChild] = []


@pytest.fixture(scope="module", autouse=True)
def warm_interpreter() -> Iterator[None]:
    """The interpreter the module's snippets are forked from (:func:`run`)."""
    child = ZygoteChild(SNIPPET_CHILD)
    _INTERPRETER[:] = [child]
    try:
        yield
    finally:
        _INTERPRETER.clear()
        child.close()


def run(code: str, *, tail: str = "", env: dict[str, str] | None = None) -> str:
    """``code`` (then ``tail``, reading what it defined) in a new process, as ``python -c``
    (``env``: its whole environment, default this one's); its output."""
    env = {**(os.environ if env is None else env), "PYTHONPATH": str(REPO)}
    with tempfile.TemporaryDirectory(prefix="snippet-") as tmp:
        out, err = Path(tmp) / "out", Path(tmp) / "err"
        answer = _INTERPRETER[0].run(code=code + tail, env=env, out=str(out), err=str(err))
        errors = err.read_text() if err.exists() else ""
        assert answer == {"exit": 0}, (answer, errors[-3000:])
        return out.read_text()


def snippet(operation: str, request, target: str) -> str:
    return python_snippet(operation, request, {"target": target})


def test_namespace_and_declare_snippets(ns, target: str) -> None:
    run(snippet("create_namespace", CreateNamespaceRequest(id=["snip", "child"]), target))
    assert "child" in ns.list_namespaces(ListNamespacesRequest(id=["snip"])).namespaces
    run(snippet("declare_table", DeclareTableRequest(id=["snip", "declared"]), target))
    assert "declared" in ns.list_tables(ListTablesRequest(id=["snip"])).tables
    out = run(snippet("describe_table", DescribeTableRequest(id=T), target))
    assert ns.describe_table(DescribeTableRequest(id=T)).location in out


@pytest.mark.parametrize(
    ("column", "index_type", "params"),
    [("vec", "IVF_FLAT", {"num_partitions": 2}), ("id", "BTREE", {})],
)
def test_index_snippets_build_the_named_index(ns, target, column, index_type, params) -> None:
    request = rules.build_index_request(
        T, column, index_type, name="typed_name", params=params, dim=DIM, num_rows=60
    )
    op = "create_table_index" if column == "vec" else "create_table_scalar_index"
    code = snippet(op, request, target)
    assert "name='typed_name'" in code
    run(code)
    listed = ns.list_table_indices(ListTableIndicesRequest(id=T)).indexes
    assert [i.index_name for i in listed] == ["typed_name"]


def test_batch_snippet(tmp_path: Path) -> None:
    """On the local backend (pylance's REST server does not implement BatchCommitTables)."""
    root = tmp_path / "local"
    root.mkdir()
    ns = backend.connect(str(root))
    ns.create_namespace(CreateNamespaceRequest(id=["snip"]))
    request = bb.to_request([bb.declare_op(["snip", "from_batch"])])
    run(snippet("batch_commit_tables", request, str(root)))
    assert ns.list_tables(ListTablesRequest(id=["snip"])).tables == ["from_batch"]


def test_delete_versions_snippet(ns, target: str) -> None:
    ds = lance.dataset(ns.describe_table(DescribeTableRequest(id=T)).location)
    ds.insert(make_table(3, dim=DIM, start=100))
    ds.insert(make_table(3, dim=DIM, start=200))
    ask = delete_request(T, version_ranges.parse("1"))
    run(snippet("batch_delete_table_versions", ask, target))
    assert sorted(list_versions(ns, T)["version"].tolist()) == [2, 3]


@pytest.mark.parametrize("params", [{"nprobes": 2, "refine_factor": 2}, {}])
def test_setting_snippets(ns, target: str, params: dict) -> None:
    """The cheapest-setting snippets (console and plain pylance) define every name they use
    (connection, location, query); both find the same rows as an exact numpy search where
    the index is exhaustive."""
    ns.create_table_index(
        rules.build_index_request(
            T, "vec", "IVF_FLAT", params={"num_partitions": 2}, dim=DIM, num_rows=60
        )
    )
    connect = f"ns = backend.connect({', '.join(connect_args({'target': target}))})"
    console, pylance = search_snippets(connect, T, "vec", 5, params)
    tail = "\nprint('IDS', rows.column('id').to_pylist())\n"
    ids_of = {
        name: [int(x) for x in run(code, tail=tail).split("IDS", 1)[1].strip(" []\n").split(",")]
        for name, code in (("console", console), ("pylance", pylance))
    }
    assert ids_of["console"] == ids_of["pylance"]
    data = np.stack(make_table(60, dim=DIM, seed=5).column("vec").to_numpy(zero_copy_only=False))
    exact = np.argsort(((data - data[0]) ** 2).sum(axis=1), kind="stable")[:5]
    if params:  # 2 probes of 2 partitions, refined: exhaustive
        assert ids_of["console"] == [int(i) for i in exact]


def launched_connection(target: str, items: list[str], user_env: dict[str, str], monkeypatch):
    """The console's default connection as ``lance-console TARGET --storage ITEMS`` hands it
    over (``user_env``: the user's shell), described as Copy as Python reads it."""
    from backend.config import launch
    from backend.config import saved_connections as conns
    from backend.launcher import cli, options

    storage = options.parse_storage(items, user_env)
    _, child = cli.build_command(target, 8600, no_browser=True, storage=storage)
    for name in (launch.TARGET_ENV, launch.STORAGE_ENV, launch.STORAGE_SECRETS_ENV):
        monkeypatch.setenv(name, child[name])
    return conns.default_connection().describe()


def test_launch_storage_snippet_reads_the_variables_the_user_named(
    s3_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--storage aws_secret_access_key=env:S3_SECRET``: the snippet reads $S3_SECRET (not a
    LANCE_STORAGE_* variable nobody set), and works with only the user's variables set."""
    bucket = s3_server.new_bucket()
    target = f"s3://{bucket}/root"
    user_env = {"S3_KEY_ID": s3_server.ACCESS_KEY, "S3_SECRET": s3_server.SECRET_KEY}
    items = [
        f"aws_endpoint={s3_server.endpoint}",
        f"aws_region={s3_server.REGION}",
        "allow_http=true",
        "aws_access_key_id=env:S3_KEY_ID",
        "aws_secret_access_key=env:S3_SECRET",
    ]
    connection = launched_connection(target, items, user_env, monkeypatch)
    code = python_snippet("create_namespace", CreateNamespaceRequest(id=["pasted"]), connection)
    assert "'aws_secret_access_key': os.environ['S3_SECRET']" in code, code
    assert "'aws_access_key_id': os.environ['S3_KEY_ID']" in code, code
    assert f"'aws_endpoint': {s3_server.endpoint!r}" in code  # non-secret values inline
    assert "LANCE_STORAGE_" not in code and "LANCE_CONSOLE_" not in code
    assert s3_server.SECRET_KEY not in code and s3_server.ACCESS_KEY not in code
    # a fresh shell: the user's two variables, no AWS_* / LANCE_* variable at all
    shell = {
        k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "LANCE_", "ALLOW_HTTP"))
    }
    run(code, env={**shell, **user_env})
    ns = backend.connect(target, storage_options=s3_server.storage_options)
    assert ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces == ["pasted"]


def test_launch_storage_snippet_keeps_typed_secrets_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """A secret typed as a value (``--storage aws_secret_access_key=VALUE``) is read from
    LANCE_STORAGE_AWS_SECRET_ACCESS_KEY as before (never the launcher's own variable, never
    the value); non-secret values stay inline."""
    typed = "typed-secret-0123456789abcdef"
    items = ["aws_region=eu-west-1", f"aws_secret_access_key={typed}"]
    connection = launched_connection("s3://b/root", items, {}, monkeypatch)
    code = python_snippet("list_namespaces", ListNamespacesRequest(id=[]), connection)
    assert "'aws_secret_access_key': os.environ['LANCE_STORAGE_AWS_SECRET_ACCESS_KEY']" in code
    assert "'aws_region': 'eu-west-1'" in code
    assert typed not in code and "LANCE_CONSOLE_STORAGE_SECRET" not in code
    compile(code, "<snippet>", "exec")


def test_text_query_snippets_embed_the_text(target: str) -> None:
    """A vector search by embedded text: both snippets embed the same text with the table's
    embedding.function, and find the rows the page finds (``search.vector.vector_search`` on
    ``search.embedding.embed_text``, as the page runs it)."""
    from lance_namespace import CreateTableRequest

    from backend.services.search.embedding import embed_text
    from backend.services.search.vector import vector_search
    from tests.support import ipc_stream_bytes, search_rows

    ns = backend.connect(target)
    ns.create_namespace(CreateNamespaceRequest(id=["snip"]))
    ns.create_table(
        CreateTableRequest(id=T, properties={"embedding.function": embedding.EMBEDDING_FUNCTION}),
        ipc_stream_bytes(search_rows(120, seed=3, embedded=True)),
    )
    text = "river mountain"
    properties = ns.describe_table(DescribeTableRequest(id=T)).properties
    page = vector_search(ns, T, embed_text(properties, text), column="vec", k=5)
    page_ids = [int(i) for i in page.rows["id"]]
    connect = f"ns = backend.connect({', '.join(connect_args({'target': target}))})"
    console, pylance = search_snippets(connect, T, "vec", 5, {}, text=text)
    assert "take([0]" not in console and "take([0]" not in pylance  # not row 0's vector
    tail = "\nprint('IDS', rows.column('id').to_pylist())\n"
    for code in (console, pylance):
        out = run(code, tail=tail)
        assert [int(x) for x in out.split("IDS", 1)[1].strip(" []\n").split(",")] == page_ids
    # and those are the exact neighbours of the demo's embedding of the text (no index)
    data = np.stack(
        search_rows(120, seed=3, embedded=True).column("vec").to_numpy(zero_copy_only=False)
    )
    query = embedding.embed([text])[0]
    exact = np.argsort(((data - query) ** 2).sum(axis=1), kind="stable")[:5]
    assert page_ids == [int(i) for i in exact]


@pytest.fixture
def local_ns(local_root: Path) -> LanceNamespace:
    return search_support.namespace_a(backend.connect(str(local_root)))


@pytest.mark.parametrize(
    "params",
    [
        {"nprobes": 2, "refine_factor": 2},
        {"nprobes": 2, "fast_search": False, "prefilter": True},
        {"bypass_vector_index": True},
        {"distance_type": "cosine"},
        {},
    ],
)
def test_python_snippets_run(local_ns: LanceNamespace, local_root: Path, params: dict) -> None:
    create_table(local_ns, search_support.T, make_table(200, dim=search_support.DIM, seed=3))
    search_support.vector_index(local_ns, search_support.T, "IVF_FLAT", num_partitions=2)
    k = 7
    connect = f"ns = backend.connect({str(local_root)!r})"
    console, pylance = search_snippets(connect, search_support.T, "vec", k, params)
    assert "request = query_request(" in console and connect in console
    assert "lance.dataset(location)" in pylance

    # as pasted: nothing predefined (every name the snippets use, they define)
    scope: dict = {}
    exec(compile(pylance, "<pylance snippet>", "exec"), scope)
    plain = scope["rows"]
    assert plain.num_rows == k and DISTANCE in plain.column_names
    assert scope["location"].rstrip("/").endswith(table_location(local_ns, search_support.T).name)

    scope = {}
    exec(compile(console, "<console snippet>", "exec"), scope)
    ours = scope["rows"]
    assert ours.num_rows == k
    assert ours.column("id").to_pylist() == plain.column("id").to_pylist()
