"""The demo namespace (built once per module in a tmp dir) and the ``lance-console`` launcher."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from lance_namespace import (
    DescribeNamespaceRequest,
    DescribeTableIndexStatsRequest,
    DescribeTableRequest,
    DescribeTransactionRequest,
    ListNamespacesRequest,
    ListTableIndicesRequest,
    ListTablesRequest,
)

import backend
from backend.demo import data as demo
from backend.demo import embedding
from backend.launcher import cli
from backend.local import LocalNamespace
from tests.support import InFlight, demo_copy, demo_template

SYMBOLS = ["stdlib", "symbols"]
MODULES = ["stdlib", "modules"]
TEXT = ["stdlib", "text", "functions"]
DECLARED = ["sandbox", "embeddings_v2"]
PASSAGES = ["stdlib", "passages"]


@pytest.fixture(scope="module")
def built() -> tuple[Path, demo.DemoSummary]:
    """The demo as the test run built it once (``tests.support.demo_template``, which the
    browser tests, notebooks and tuning tests copy): its root is read here, never written."""
    root, summary, messages = demo_template()
    print(f"\ndemo build: {summary.build_seconds:.2f}s")  # information
    assert summary.created is True
    assert messages and messages[-1].startswith("demo ready")
    return root, summary


@pytest.fixture
def ns(built) -> LocalNamespace:
    return backend.connect(str(built[0]))


def test_summary_describes_what_was_built(built, ns: LocalNamespace) -> None:
    root, summary = built
    assert summary.root == root.as_uri()
    assert summary.tables == [MODULES, PASSAGES, SYMBOLS, TEXT]
    assert summary.declared == [DECLARED]
    for table_id in summary.tables:
        key = "$".join(table_id)
        ds = ns.open_dataset(table_id)
        assert summary.rows[key] == ds.count_rows() > 0
        assert summary.versions[key] == ds.version > 1
        assert summary.indexes[key] == sorted(i.name for i in ds.describe_indices())
    # a few thousand rows for browsing; the passages table is the one big enough to tune on
    assert sum(v for k, v in summary.rows.items() if k != "$".join(PASSAGES)) < 5000
    assert summary.rows["$".join(PASSAGES)] >= 20_000


def test_passages_table_is_made_for_tuning(built, ns: LocalNamespace) -> None:
    """At least 20,000 rows of 64-dim vectors, an IVF index whose recall depends on nprobes,
    a full-text index, and an embedding the console can run for text queries."""
    from backend.services.search.embedding import embed_text
    from backend.services.search.table import search_table
    from backend.services.search.vector import vector_search
    from backend.services.tuning.sweeps import sweep

    info = search_table(ns, PASSAGES)
    assert info.num_rows is not None and info.num_rows >= 20_000
    assert info.column("vector").dim == embedding.VECTOR_DIM >= 64
    assert info.vector_indexes["vector"]["type"].startswith("IVF")
    assert "passage" in info.fts_indexes
    assert info.embedding == demo.EMBEDDING_FUNCTION
    query = embed_text(info.properties, "parse command line arguments")
    found = vector_search(ns, PASSAGES, query, column="vector", k=5, nprobes=8)
    assert "argparse" in found.table.column("module").to_pylist()
    frame = sweep(ns, PASSAGES, column="vector", sample=20, grid={"nprobes": [1, 32]})
    low, high = frame["recall"].tolist()
    assert low < high and high >= 0.8


def test_layout_is_listed(ns: LocalNamespace) -> None:
    assert ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces == ["sandbox", "stdlib"]
    assert ns.list_namespaces(ListNamespacesRequest(id=["stdlib"])).namespaces == ["text"]
    assert sorted(ns.list_tables(ListTablesRequest(id=["stdlib"])).tables) == [
        "modules",
        "passages",
        "symbols",
    ]
    assert ns.list_tables(ListTablesRequest(id=["stdlib", "text"])).tables == ["functions"]
    assert ns.list_all_tables(ListTablesRequest(id=[])).tables == [
        "sandbox$embeddings_v2",
        "stdlib$modules",
        "stdlib$passages",
        "stdlib$symbols",
        "stdlib$text$functions",
    ]
    props = ns.describe_namespace(DescribeNamespaceRequest(id=["stdlib"])).properties
    assert props["python"] == f"{sys.version_info.major}.{sys.version_info.minor}"


def test_declared_only_table(ns: LocalNamespace) -> None:
    assert ns.list_tables(ListTablesRequest(id=["sandbox"])).tables == ["embeddings_v2"]
    desc = ns.describe_table(DescribeTableRequest(id=DECLARED, check_declared=True))
    assert desc.is_only_declared is True
    assert desc.properties["status"] == "planned"


def test_symbols_columns(ns: LocalNamespace) -> None:
    ds = ns.open_dataset(SYMBOLS)
    schema = ds.schema
    assert schema.field("id").type == pa.int64()
    assert schema.field("doc_length").type == pa.int64()
    assert schema.field("vector").type == pa.list_(pa.float32(), embedding.VECTOR_DIM)
    assert schema.field("tags").type == pa.list_(pa.string())
    assert schema.field("has_examples").type == pa.bool_()  # the column added in version 4
    table = ds.to_table()
    assert set(table.column("kind").to_pylist()) == {"function", "class", "method"}
    assert len(set(table.column("id").to_pylist())) == table.num_rows
    docs = table.column("doc").to_pylist()
    assert table.column("doc_length").to_pylist() == [len(d) for d in docs]
    assert table.column("n_lines").to_pylist() == [d.count("\n") + 1 for d in docs]
    vectors = np.stack(table.column("vector").to_numpy(zero_copy_only=False))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert all(tags for tags in table.column("tags").to_pylist())
    meta = ns.describe_table(DescribeTableRequest(id=SYMBOLS)).properties
    assert meta["owner"] == "demo"


def test_symbols_history(ns: LocalNamespace) -> None:
    ds = ns.open_dataset(SYMBOLS)
    operations = [
        ns.describe_transaction(DescribeTransactionRequest(id=[*SYMBOLS, str(v)])).properties[
            "operation"
        ]
        for v in range(1, ds.version + 1)
    ]
    assert operations[:5] == ["Overwrite", "Append", "Delete", "Merge", "UpdateConfig"]
    assert operations[5:-1] == ["CreateIndex"] * 5
    assert operations[-1] == "Append"
    assert (
        ns.open_dataset(SYMBOLS, version=2).count_rows()
        > ns.open_dataset(SYMBOLS, version=3).count_rows()
    )
    assert ds.schema.metadata[b"demo.curated_by"] == b"lance-console"


def test_indexes_with_lagging_coverage(ns: LocalNamespace) -> None:
    listed = {
        i.index_name: i for i in ns.list_table_indices(ListTableIndicesRequest(id=SYMBOLS)).indexes
    }
    assert {n: i.index_type for n, i in listed.items()} == {
        "vector_ivf_pq": "IVF_PQ",
        "doc_fts": "Inverted",
        "doc_length_btree": "BTree",
        "kind_bitmap": "Bitmap",
        "tags_label_list": "LabelList",
    }
    total = ns.open_dataset(SYMBOLS).count_rows()
    for name in listed:
        stats = ns.describe_table_index_stats(
            DescribeTableIndexStatsRequest(id=SYMBOLS, index_name=name)
        )
        assert stats.num_unindexed_rows > 0, name
        assert stats.num_indexed_rows + stats.num_unindexed_rows == total, name
    vstats = ns.describe_table_index_stats(
        DescribeTableIndexStatsRequest(id=SYMBOLS, index_name="vector_ivf_pq")
    )
    assert vstats.distance_type == "cosine"
    ivf = ns.open_dataset(SYMBOLS).stats.index_stats("vector_ivf_pq")["indices"][0]
    assert (ivf["num_partitions"], ivf["sub_index"]["num_sub_vectors"]) == (4, 8)

    hnsw = ns.open_dataset(TEXT).stats.index_stats("vector_hnsw")
    assert hnsw["indices"][0]["sub_index"]["params"]["m"] == 8
    assert hnsw["num_unindexed_rows"] > 0


class CountingListings:
    """A namespace's engine with its ListTableIndices calls counted."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.listings = 0

    def list_table_indices(self, request: Any) -> Any:
        self.listings += 1
        return self._inner.list_table_indices(request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_only_a_vector_index_stats_read_the_listing_for_its_metric(
    ns: LocalNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pylance's stats leave the metric out: a vector index's comes from the index listing;
    a scalar or full-text index has none, and its stats read no listing (an overview of 50
    indexes read 50 listings)."""
    counting = CountingListings(ns._inner)
    monkeypatch.setattr(ns, "_inner", counting)
    for name in ("doc_fts", "doc_length_btree", "kind_bitmap", "tags_label_list"):
        stats = ns.describe_table_index_stats(
            DescribeTableIndexStatsRequest(id=SYMBOLS, index_name=name)
        )
        assert stats.distance_type is None, name
    assert counting.listings == 0
    vstats = ns.describe_table_index_stats(
        DescribeTableIndexStatsRequest(id=SYMBOLS, index_name="vector_ivf_pq")
    )
    assert (vstats.distance_type, counting.listings) == ("cosine", 1)


def test_the_index_overview_sends_its_stats_requests_a_few_at_once(
    ns: LocalNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One DescribeTableIndexStats per index (the spec has no bulk form), up to
    ``IN_FLIGHT`` in flight at once: the same overview, in the time of two rounds of
    requests rather than five."""
    from backend.services.index_overview import index_overview
    from backend.spec.fanout import IN_FLIGHT

    expected = index_overview(ns, SYMBOLS)
    slow = InFlight(monkeypatch, LocalNamespace, "describe_table_index_stats", delay=0.2)
    started = time.monotonic()
    got = index_overview(ns, SYMBOLS)
    took = time.monotonic() - started
    assert slow.most == IN_FLIGHT == 4
    assert took < 5 * 0.2
    # the details are pylance's JSON text, whose runtime hints come in any order
    pd.testing.assert_frame_equal(got.drop(columns="details"), expected.drop(columns="details"))
    assert [json.loads(d) for d in got["details"]] == [json.loads(d) for d in expected["details"]]


def test_console_shows_the_demo_indexes_under_its_own_names(ns: LocalNamespace) -> None:
    """The index page's overview: FTS (pylance says Inverted), coverage below 100 %."""
    from backend.services.index_overview import index_overview

    overview = index_overview(ns, SYMBOLS)
    assert dict(zip(overview["name"], overview["type"], strict=True)) == {
        "vector_ivf_pq": "IVF_PQ",
        "doc_fts": "FTS",
        "doc_length_btree": "BTREE",
        "kind_bitmap": "BITMAP",
        "tags_label_list": "LABEL_LIST",
    }
    assert all(0 < c < 1 for c in overview["coverage"])
    vector = overview.set_index("name").loc["vector_ivf_pq"]
    assert vector["distance_type"] == "cosine"
    text = index_overview(ns, TEXT).set_index("name")
    assert text.loc["vector_hnsw", "type"] == "IVF_HNSW_SQ"
    assert text.loc["vector_hnsw", "distance_type"] == "dot"
    assert text.loc["doc_fts", "type"] == "FTS"


def test_search_finds_related_docstrings(ns: LocalNamespace) -> None:
    ds = ns.open_dataset(SYMBOLS)
    query = embedding.embed(["Deserialize a JSON document to a Python object"])[0]
    exact = {"column": "vector", "q": query, "k": 3, "use_index": False}
    near = ds.to_table(nearest=exact, columns=["module", "qualname"])
    assert near.column("module").to_pylist()[0] == "json"
    approximate = ds.to_table(nearest={"column": "vector", "q": query, "k": 3}, columns=["module"])
    assert approximate.num_rows == 3  # the IVF_PQ index answers too (approximately)
    hits = ds.to_table(full_text_query="deserialize", columns=["module"], limit=5)
    assert set(hits.column("module").to_pylist()) == {"json"}


def test_data_is_deterministic() -> None:
    rows = demo.collect_symbols(["json", "textwrap"])
    assert rows == demo.collect_symbols(["json", "textwrap"])
    assert {r["module"] for r in rows} == {"json", "textwrap"}
    a = embedding.embed(["hello world", "hello world", ""])
    assert np.array_equal(a[0], a[1])
    assert np.isclose(np.linalg.norm(a[2]), 1.0)


def test_second_call_returns_the_existing_demo(built) -> None:
    root, summary = built
    started = time.perf_counter()
    again = demo.create_demo_namespace(root)
    print(f"\nsecond call: {time.perf_counter() - started:.3f}s")  # information
    assert again.created is False
    assert again.tables == summary.tables
    assert again.versions == summary.versions


def test_refuses_a_directory_that_is_not_a_demo(tmp_path: Path) -> None:
    (tmp_path / "precious.txt").write_text("keep me")
    with pytest.raises(ValueError, match="not empty"):
        demo.create_demo_namespace(tmp_path)
    assert (tmp_path / "precious.txt").read_text() == "keep me"


def _user_table(ns: LocalNamespace, table_id: list[str]) -> pa.Table:
    """A table of the user's own, made in the demo folder (as an import would)."""
    from lance_namespace import CreateTableRequest

    from tests.support import ipc_stream_bytes

    data = pa.table({"id": [1, 2, 3], "note": ["mine", "keep", "me"]})
    ns.create_table(CreateTableRequest(id=table_id), ipc_stream_bytes(data))
    return data


def test_a_changed_demo_is_opened_as_it_is_and_rebuilt_only_on_request(
    built, tmp_path: Path
) -> None:
    """Demo tables dropped and renamed, a table of the user's: a restart keeps all of it;
    ``rebuild_missing`` builds the missing demo tables next to it and touches nothing else."""
    from lance_namespace import DropTableRequest, RenameTableRequest

    root = tmp_path / "demo"
    shutil.copytree(built[0], root)
    ns = backend.connect(str(root))
    ns.drop_table(DropTableRequest(id=MODULES))
    ns.rename_table(RenameTableRequest(id=SYMBOLS, new_table_name="symbols_mine"))
    mine = _user_table(ns, ["stdlib", "imported"])
    renamed_rows = ns.open_dataset(["stdlib", "symbols_mine"]).count_rows()

    said: list[str] = []
    again = demo.create_demo_namespace(root, progress=said.append)
    assert again.created is False and said == [f"demo already present at {root}"]
    assert again.missing == [MODULES, SYMBOLS]
    assert MODULES not in again.tables and SYMBOLS not in again.tables
    ns = backend.connect(str(root))
    assert sorted(ns.list_tables(ListTablesRequest(id=["stdlib"])).tables) == [
        "imported",
        "passages",
        "symbols_mine",
    ]
    assert ns.open_dataset(["stdlib", "imported"]).to_table().equals(mine)

    rebuilt = demo.create_demo_namespace(root, rebuild_missing=True, progress=said.append)
    assert rebuilt.created is True and rebuilt.missing == []
    assert any("building the missing demo tables" in m and "stdlib › modules" in m for m in said)
    ns = backend.connect(str(root))
    assert sorted(ns.list_tables(ListTablesRequest(id=["stdlib"])).tables) == [
        "imported",
        "modules",
        "passages",
        "symbols",
        "symbols_mine",
    ]
    assert ns.open_dataset(["stdlib", "imported"]).to_table().equals(mine)
    assert ns.open_dataset(["stdlib", "symbols_mine"]).count_rows() == renamed_rows
    summary = built[1]
    for table_id in (MODULES, SYMBOLS):  # the same tables as the first build made
        key = "$".join(table_id)
        assert rebuilt.rows[key] == summary.rows[key]
        assert rebuilt.versions[key] == summary.versions[key]
        assert rebuilt.indexes[key] == summary.indexes[key]
    # the passages table was there all along: not rebuilt (still its first build's version)
    assert rebuilt.versions["$".join(PASSAGES)] == summary.versions["$".join(PASSAGES)]
    assert demo.create_demo_namespace(root).created is False


def test_interrupted_build_is_finished_without_deleting(tmp_path: Path) -> None:
    """A crash left the building marker and some files: the build makes what is missing and
    deletes nothing."""
    root = tmp_path / "demo"
    (root / "_console").mkdir(parents=True)
    (root / demo.BUILDING_MARKER).write_text(str(time.time() - 60))  # as a build writes it
    (root / "half-written.lance").mkdir()
    (root / "half-written.lance" / "data.bin").write_bytes(b"12345")
    ns = backend.connect(str(root))
    from lance_namespace import CreateNamespaceRequest

    ns.create_namespace(CreateNamespaceRequest(id=["sandbox"]))
    mine = _user_table(ns, ["sandbox", "mine"])
    summary = demo.create_demo_namespace(root)
    assert summary.created is True and summary.missing == []
    assert summary.tables == [MODULES, PASSAGES, SYMBOLS, TEXT]
    assert not (root / demo.BUILDING_MARKER).exists()
    assert (root / demo.MARKER).is_file()
    assert (root / "half-written.lance" / "data.bin").read_bytes() == b"12345"
    ns = backend.connect(str(root))
    assert ns.open_dataset(["sandbox", "mine"]).to_table().equals(mine)


def test_demo_needs_a_local_directory() -> None:
    with pytest.raises(ValueError, match="local directory"):
        demo.create_demo_namespace("memory://demo")


# --------------------------------------------------------------------------- launcher


def test_command_runs_streamlit_on_the_app(tmp_path: Path) -> None:
    argv, env = cli.build_command(str(tmp_path), 8600, no_browser=True)
    assert argv[:4] == [sys.executable, "-m", "streamlit", "run"]
    app = Path(argv[4])
    assert app == cli.repo_dir() / "app" / "main.py" and app.is_file()
    assert argv[argv.index("--server.port") + 1] == "8600"
    assert argv[argv.index("--server.headless") + 1] == "true"
    assert env[cli.TARGET_ENV] == str(tmp_path)
    argv, env = cli.build_command("http://localhost:2333", 8501, no_browser=False)
    assert env[cli.TARGET_ENV] == "http://localhost:2333"
    # Headless even when a browser is wanted: otherwise streamlit's first run waits on stdin.
    assert argv[argv.index("--server.headless") + 1] == "true"


def test_targets_are_resolved(tmp_path: Path, monkeypatch, built) -> None:
    assert cli.resolve_target("https://ns.example.com/api", None) == "https://ns.example.com/api"
    assert cli.resolve_target("memory://x", None) == "memory://x"
    monkeypatch.chdir(tmp_path)
    assert cli.resolve_target("data", None) == str(tmp_path / "data")
    said: list[str] = []
    root, _ = built
    assert cli.resolve_target(None, str(root), echo=said.append) == str(root)
    assert said == [f"[demo] demo already present at {root}"]


def test_default_demo_dir_is_under_the_working_directory(tmp_path: Path, monkeypatch) -> None:
    """With no target and no ``--demo-dir``, the demo is the one under the working directory
    (a copy of the built demo there: building it is the interrupted-build test's, and the
    launcher's own tests build it from nothing)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".lance-console").mkdir()
    demo_copy(tmp_path / ".lance-console" / "demo")
    said: list[str] = []
    target = cli.resolve_target(None, None, echo=said.append)
    assert target == str(tmp_path / ".lance-console" / "demo")
    assert said == [f"[demo] demo already present at {target}"]


def test_main_rejects_a_bad_port(capsys) -> None:
    assert cli.main(["/tmp", "--port", "70000"]) == 2
    assert "invalid port" in capsys.readouterr().err


def test_main_reports_a_demo_it_cannot_build(tmp_path: Path, capsys) -> None:
    """A folder holding somebody's files is left alone; the launcher says what to do."""
    (tmp_path / "x").write_text("not a demo")
    before = sorted(p.name for p in tmp_path.iterdir())
    assert cli.main(["--demo-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "holds files but no demo namespace" in err
    assert f"lance-console {tmp_path.resolve()}" in err and "--demo-dir" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "x").read_text() == "not a demo"


def test_foreign_directories_are_recognised(tmp_path: Path, built) -> None:
    root, _ = built
    assert demo.is_foreign_directory(tmp_path / "missing") is False
    (tmp_path / "empty").mkdir()
    assert demo.is_foreign_directory(tmp_path / "empty") is False
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "precious.txt").write_text("keep me")
    assert demo.is_foreign_directory(tmp_path / "data") is True
    assert demo.is_foreign_directory(root) is False  # a finished demo
    crashed = tmp_path / "crashed"
    (crashed / "_console").mkdir(parents=True)
    (crashed / demo.BUILDING_MARKER).write_text(str(time.time()))
    assert demo.is_foreign_directory(crashed) is False  # an interrupted build is redone
    with pytest.raises(SystemExit, match="holds files but no demo namespace"):
        cli.resolve_target(None, str(tmp_path / "data"), echo=lambda m: None)
    assert (tmp_path / "data" / "precious.txt").read_text() == "keep me"


@pytest.mark.parametrize(
    "marker",
    [
        b'{"demo_version": 2}',
        b'{"demo_version": 2, "root": "x", "tables": 5, "namespaces": [], "declared": [], '
        b'"rows": {}, "versions": {}, "indexes": {}, "build_seconds": 1}',
        b'{"demo_version": 2, "rows": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        None,  # the build marker a directory
    ],
)
def test_a_damaged_demo_marker_is_a_folder_of_somebody_elses(tmp_path: Path, marker) -> None:
    """The launcher said "lance-console: DemoSummary.__init__() missing 8 required positional
    arguments", "'int' object is not iterable", "maximum recursion depth exceeded" or "[Errno
    21] Is a directory" for a damaged marker; such a folder is now one it does not build in,
    with the advice it gives for any folder holding files but no demo."""
    folder = tmp_path / "d"
    (folder / "_console").mkdir(parents=True)
    (folder / "x.txt").write_text("user data")
    if marker is None:
        (folder / demo.BUILDING_MARKER).mkdir()
    else:
        (folder / demo.MARKER).write_bytes(marker)
    assert demo.is_foreign_directory(folder) is True
    with pytest.raises(SystemExit, match="holds files but no demo namespace"):
        cli.resolve_target(None, str(folder), echo=lambda m: None)


@pytest.mark.parametrize(
    "content",
    [b"crashed", b"", b"nan", b"-1", b"\xff\xfe", b"1" * 400],
    ids=["text", "empty", "nan", "negative", "not-ascii", "too-long"],
)
def test_a_building_marker_the_console_did_not_write_is_no_interrupted_build(
    tmp_path: Path, content: bytes
) -> None:
    """A file named as the building marker in a folder holding somebody's files, holding
    anything but the time a build began: the folder is not built in, and nothing changes."""
    folder = tmp_path / "d"
    (folder / "_console").mkdir(parents=True)
    (folder / "x.txt").write_text("user data")
    (folder / demo.BUILDING_MARKER).write_bytes(content)
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    assert demo.is_foreign_directory(folder) is True
    with pytest.raises(SystemExit, match="holds files but no demo namespace"):
        cli.resolve_target(None, str(folder), echo=lambda m: None)
    with pytest.raises(ValueError, match="holds no demo"):
        demo.create_demo_namespace(folder)
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before
    assert (folder / demo.BUILDING_MARKER).read_bytes() == content


def test_read_only_launch(tmp_path: Path, monkeypatch) -> None:
    _, env = cli.build_command(str(tmp_path), 8600, no_browser=True, read_only=True)
    assert env[cli.READ_ONLY_ENV] == "1"
    # Not read-only: a value inherited from the caller's environment does not leak through.
    monkeypatch.setenv(cli.READ_ONLY_ENV, "1")
    _, env = cli.build_command(str(tmp_path), 8600, no_browser=True)
    assert cli.READ_ONLY_ENV not in env
    assert cli.build_parser().parse_args(["--read-only", str(tmp_path)]).read_only is True
    assert cli.build_parser().parse_args([str(tmp_path)]).read_only is False


# The supervisor starts with Ctrl-C's default action, as from a terminal: pytest-xdist's workers
# ignore SIGINT, and a child process inherits an ignored signal (Python then raises no
# KeyboardInterrupt for it).
SUPERVISOR = """
import os, signal, subprocess, sys
from backend.launcher.cli import _supervise

signal.signal(signal.SIGINT, signal.default_int_handler)

def start():
    if sys.argv[2:] == ["term-while-starting"]:
        os.kill(os.getpid(), signal.SIGTERM)  # arrives before the child exists
    if sys.argv[2:] == ["int-while-starting"]:
        os.kill(os.getpid(), signal.SIGINT)  # a Ctrl-C before the child exists
    return subprocess.Popen([sys.executable, "-c", sys.argv[1]])

sys.exit(_supervise(start))
"""
# Exits 0 on SIGINT; 7 if no signal came within its sleep (a signal lost on the way).
SLEEPER = """
import signal, sys, time
signal.signal(signal.SIGINT, lambda *a: sys.exit(0))
print("ready", flush=True)
time.sleep(30)
sys.exit(7)
"""


def _supervised(child_code: str, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", SUPERVISOR, child_code, *extra],
        cwd=cli.repo_dir(),
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # signals below reach the supervisor only, not its child
    )


@pytest.mark.slow  # a child process
def test_child_exit_code_is_forwarded() -> None:
    proc = _supervised("import sys; sys.exit(3)")
    assert proc.wait(timeout=60) == 3


@pytest.mark.slow  # a child process
def test_sigterm_while_streamlit_starts_is_passed_on() -> None:
    """A SIGTERM that arrives before the child exists is kept and passed on once it does: the
    child dies of it (128 + 15), rather than the launcher dying and leaving it running."""
    proc = _supervised(SLEEPER, "term-while-starting")
    try:
        assert proc.wait(timeout=60) == 128 + 15
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.slow  # a child process
def test_ctrl_c_while_streamlit_starts_is_passed_on() -> None:
    """A Ctrl-C that arrives before the child exists is kept, and passed on once it does
    (after the grace period the supervisor gives a child that got the Ctrl-C too): the child
    stops cleanly (0), rather than the launcher dying of it (-2) and leaving it running."""
    proc = _supervised(SLEEPER, "int-while-starting")
    try:
        assert proc.stdout.readline().strip() == "ready"
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.slow  # a supervised child process per signal
@pytest.mark.parametrize(("sig", "expected"), [(signal.SIGINT, 0), (signal.SIGTERM, 128 + 15)])
def test_signals_reach_streamlit(sig: signal.Signals, expected: int) -> None:
    proc = _supervised(SLEEPER)
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(sig)
        # SIGINT: passed on after a grace period, the child exits 0 -> clean exit.
        # SIGTERM: forwarded at once, the child dies of it -> 128 + 15.
        assert proc.wait(timeout=60) == expected
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
