"""The pages' reads and writes on a branch (``backend.branch_view.on_branch``), on both backends.

Table ``t``: main holds ids 0..29 then gains ids 200..204; branch ``dev`` was made from main's
version 1 and gained ids 100..109 and lost ids 0..7. So main and the branch differ in rows,
and every expected figure is computed independently from the branch's own data, read with
lance (``checkout_version(("dev", None))``) and filtered, sorted or measured with
pyarrow/numpy.

The local backend reads and writes the branch itself. pylance's REST adapter honours the
branch of CountTableRows and GetTableStats only: over REST every other read of a branch is
refused (nothing read, never main's answer), and a write it applies to main is reported as
an error naming what happened.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import lance
import lance_namespace as ln
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from lance.namespace import DirectoryNamespace
from lance_namespace.errors import (
    InvalidInputError,
    PermissionDeniedError,
    TableBranchNotFoundError,
    UnsupportedOperationError,
)

import backend
from backend import audit
from backend.branch_view import BranchView, on_branch
from backend.gate import Actor, gate
from backend.local import branch_indexes
from backend.services import branches, exports, health, imports
from backend.services import index_overview as ixo
from backend.services.search.fulltext import fts_search
from backend.services.search.plans import analyze, explain
from backend.services.search.preview import preview
from backend.services.search.query import count_rows, query_request
from backend.services.search.table import search_table
from backend.services.search.vector import vector_search
from backend.services.tuning.measure import recall, sample_queries
from backend.services.tuning.optimize import compact_files, optimize_indexes
from backend.services.versions import VersionFacts
from components.snippets import search_snippets
from tests.support import create_table, make_table, metric_distances, table_location

TID = ["t"]
DIM = 4
IGNORED = "ignores the branch"


def _main(ns: ln.LanceNamespace) -> lance.LanceDataset:
    return lance.dataset(str(table_location(ns, TID)))


def _dev(ns: ln.LanceNamespace) -> lance.LanceDataset:
    return _main(ns).checkout_version(("dev", None))


def _rows(ds: lance.LanceDataset, **kwargs: object) -> pa.Table:
    return ds.to_table(**kwargs).sort_by("id")  # type: ignore[arg-type]


@pytest.fixture
def diverged(ns: ln.LanceNamespace) -> ln.LanceNamespace:
    """Main and branch ``dev`` with different rows (see the module docstring)."""
    create_table(ns, TID, make_table(30, dim=DIM))
    branches.create_branch(ns, TID, "dev")
    dev = _dev(ns)
    dev.insert(make_table(10, start=100, dim=DIM, seed=1))
    dev.delete("id < 8")
    _main(ns).insert(make_table(5, start=200, dim=DIM, seed=2))
    return ns


@pytest.fixture
def local(tmp_path: Path) -> ln.LanceNamespace:
    ns = backend.connect(str(tmp_path / "root"))
    return ns


@pytest.fixture
def local_diverged(local: ln.LanceNamespace) -> ln.LanceNamespace:
    create_table(local, TID, make_table(30, dim=DIM))
    branches.create_branch(local, TID, "dev")
    dev = _dev(local)
    dev.insert(make_table(10, start=100, dim=DIM, seed=1))
    dev.delete("id < 8")
    _main(local).insert(make_table(5, start=200, dim=DIM, seed=2))
    return local


def _state(ns: ln.LanceNamespace) -> tuple[int, pa.Table, int, pa.Table, set[str]]:
    """Main's and the branch's versions and rows, and the table's branches."""
    main, dev = _main(ns), _dev(ns)
    return main.version, _rows(main), dev.version, _rows(dev), set(main.branches.list())


# -- reads ----------------------------------------------------------------------------------------
def test_counts_and_stats_read_the_branch(diverged: ln.LanceNamespace) -> None:
    ns, dev = diverged, on_branch(diverged, "dev")
    rows = _rows(_dev(ns))
    wanted = pc.sum(pc.greater_equal(rows["id"], 100)).as_py()
    assert count_rows(dev, TID, version=None, filter="id >= 100") == wanted == 10
    assert count_rows(dev, TID, version=None, filter=None) == rows.num_rows == 32
    assert count_rows(ns, TID, version=None, filter=None) == _main(ns).count_rows() == 35
    stats = dev.get_table_stats(ln.GetTableStatsRequest(id=TID))
    fragments = _dev(ns).get_fragments()  # the stats count stored rows, deleted ones too
    assert stats.num_rows == sum(f.metadata.physical_rows for f in fragments) == 40
    assert stats.fragment_stats.num_fragments == len(fragments) == 2


def test_local_preview_search_and_plans_read_the_branch(
    local_diverged: ln.LanceNamespace,
) -> None:
    ns, dev = local_diverged, on_branch(local_diverged, "dev")
    rows = _rows(_dev(ns))
    shown = preview(dev, TID, filter="id >= 5", columns=["id", "cat"], limit=100)
    expected = rows.filter(pc.greater_equal(rows["id"], 5))
    assert shown.total == expected.num_rows
    assert sorted(shown.rows["id"]) == expected["id"].to_pylist()
    assert 200 not in set(shown.rows["id"]) and 100 in set(shown.rows["id"])

    info = search_table(dev, TID)
    assert (info.branch, info.num_rows, info.latest_version) == ("dev", 32, _dev(ns).version)
    assert search_table(ns, TID).num_rows == 35

    # an exact vector search: the branch's nearest rows, by numpy over the branch's vectors
    data = np.array(rows["vec"].to_pylist(), dtype=np.float32)
    query = data[rows["id"].to_pylist().index(103)]
    found = vector_search(
        dev, TID, query.tolist(), column="vec", k=5, distance_type="l2", bypass_vector_index=True
    )
    order = np.argsort(metric_distances(data, query, "l2"), kind="stable")[:5]
    assert found.table["id"].to_pylist() == [rows["id"][int(i)].as_py() for i in order]

    # the plans scan the branch's rows
    analyzed = analyze(dev, query_request(TID, k=1000))
    assert f"output_rows={rows.num_rows}" in analyzed and "tree/dev" in analyzed
    assert "tree/dev" in explain(dev, query_request(TID, k=3, filter="id > 3"))
    assert "tree/dev" not in explain(ns, query_request(TID, k=3))


def test_local_recall_samples_the_branch(local_diverged: ln.LanceNamespace) -> None:
    ns, dev = local_diverged, on_branch(local_diverged, "dev")
    rows = _rows(_dev(ns))
    drawn = sample_queries(dev, TID, "vec", rows.num_rows, 0)
    assert sorted(tuple(q.vector) for q in drawn) == sorted(
        tuple(float(x) for x in v) for v in rows["vec"].to_pylist()
    )
    measured = recall(dev, TID, column="vec", k=3, sample=8, bypass_vector_index=True)
    assert measured.mean == 1.0 and len(measured.query_rows) == 8
    main_vectors = {tuple(v) for v in _rows(_main(ns))["vec"].to_pylist()}
    assert any(tuple(q.vector) not in main_vectors for q in drawn)  # the branch's own rows


def test_rest_refuses_the_reads_its_server_answers_for_main(rest_server, tmp_path: Path) -> None:
    ns = backend.connect(rest_server.url)
    create_table(ns, TID, make_table(30, dim=DIM))
    branches.create_branch(ns, TID, "dev")
    _dev(ns).insert(make_table(10, start=100, dim=DIM, seed=1))
    dev = on_branch(ns, "dev")
    for read in (
        lambda: preview(dev, TID),
        lambda: search_table(dev, TID),
        lambda: ixo.index_overview(dev, TID),
        lambda: explain(dev, query_request(TID, k=3)),
        lambda: analyze(dev, query_request(TID, k=3)),
        lambda: exports.export_table(dev, TID, "arrow", io.BytesIO()),
    ):
        with pytest.raises(UnsupportedOperationError, match=IGNORED):
            read()
    with pytest.raises(UnsupportedOperationError, match=IGNORED):
        preview(dev, TID)  # learnt once: refused again before anything is read
    probes = [
        e for e in ns.wire_log if e.op == "query_table" and "console-probe-" in str(e.request_body)
    ]
    assert len(probes) == 1
    # the reads it honours answer for the branch
    assert count_rows(dev, TID, version=None, filter=None) == _dev(ns).count_rows() == 40


# -- indexes ----------------------------------------------------------------------------------------
def test_local_index_build_listing_stats_search_and_drop_on_a_branch(
    local_diverged: ln.LanceNamespace,
) -> None:
    ns, dev = local_diverged, on_branch(local_diverged, "dev")
    main_before = _main(ns).version
    ixo.create_index(dev, ln.CreateTableIndexRequest(id=TID, column="id", index_type="BTREE"))
    ixo.create_index(dev, ln.CreateTableIndexRequest(id=TID, column="text", index_type="FTS"))
    rows = _rows(_dev(ns))
    assert sorted(i.name for i in _dev(ns).describe_indices()) == ["id_idx", "text_idx"]
    assert _main(ns).describe_indices() == [] and _main(ns).version == main_before

    overview = ixo.index_overview(dev, TID)
    assert sorted(overview["name"]) == ["id_idx", "text_idx"]
    assert set(overview["indexed_rows"]) == {rows.num_rows}
    assert set(overview["unindexed_rows"]) == {0}
    assert ixo.index_overview(ns, TID).empty
    stats = dev.describe_table_index_stats(
        ln.DescribeTableIndexStatsRequest(id=TID, index_name="id_idx")
    )
    assert (stats.num_indexed_rows, stats.num_unindexed_rows) == (rows.num_rows, 0)

    # a full-text search finds the branch's rows: those whose text has the word
    found = fts_search(dev, TID, "105", columns=["text"], k=20)
    words = pc.utf8_split_whitespace(rows["text"])
    has = [("105" in w) for w in words.to_pylist()]
    assert found.table["id"].to_pylist() == rows.filter(pa.array(has))["id"].to_pylist() == [105]

    ixo.drop_index(dev, TID, "id_idx")
    assert [i.name for i in _dev(ns).describe_indices()] == ["text_idx"]
    assert _main(ns).version == main_before


@pytest.mark.slow
def test_a_vector_build_in_a_child_process_lands_on_the_branch(
    local_diverged: ln.LanceNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build run away from the console's process (``backend.local.index_child``) opens the
    branch, not main (lance opens a table's URI at main)."""
    monkeypatch.setenv("LANCE_CONSOLE_BUILD_PROCESS", "child")
    ns, dev = local_diverged, on_branch(local_diverged, "dev")
    main_before = _main(ns).version
    ixo.create_index(
        dev,
        ln.CreateTableIndexRequest(
            id=TID, column="vec", index_type="IVF_FLAT", num_partitions=1, distance_type="l2"
        ),
    )
    built = {i.name: i for i in _dev(ns).describe_indices()}
    assert list(built) == ["vec_idx"] and built["vec_idx"].num_rows_indexed == 32
    assert _main(ns).describe_indices() == [] and _main(ns).version == main_before
    asked = dev.index_requests(TID)  # the build's parameters, recorded for the branch
    assert asked["vec_idx"]["num_partitions"] == 1 and ns.index_requests(TID) == {}


def test_branch_index_answers_have_pylances_shape(local: ln.LanceNamespace) -> None:
    """The branch's ListTableIndices and DescribeTableIndexStats, computed from a dataset,
    match what pylance answers for main when given main's dataset."""
    create_table(local, TID, make_table(300, dim=8))
    ds = _main(local)
    ds.create_scalar_index("id", "BTREE", name="id_idx")
    ds.create_scalar_index("text", "INVERTED", name="text_idx")
    ds.create_index("vec", "IVF_PQ", num_partitions=2, num_sub_vectors=2, name="vec_idx")
    ds = _main(local)
    ds.insert(make_table(10, start=1000, dim=8))
    ds = _main(local)
    raw = DirectoryNamespace(root=str(table_location(local, TID).parent))
    theirs = raw.list_table_indices(ln.ListTableIndicesRequest(id=TID)).indexes
    ours = branch_indexes.list_indices(ds, ln.ListTableIndicesRequest(id=TID)).indexes
    assert [i.index_name for i in ours] == sorted(i.index_name for i in theirs)
    by_name = {i.index_name: i for i in theirs}
    for mine in ours:
        own = by_name[mine.index_name]
        for field in (
            "index_uuid", "columns", "status", "index_type", "type_url", "num_indexed_rows",
            "num_unindexed_rows", "size_bytes", "num_segments", "index_version",
        ):  # fmt: skip
            assert getattr(mine, field) == getattr(own, field), field
        assert json.loads(mine.index_details or "{}") == json.loads(own.index_details or "{}")
        stats = branch_indexes.index_stats(
            ds, ln.DescribeTableIndexStatsRequest(id=TID, index_name=mine.index_name),
            table="t", branch="main",
        )  # fmt: skip
        pylance = raw.describe_table_index_stats(
            ln.DescribeTableIndexStatsRequest(id=TID, index_name=mine.index_name)
        )
        for field in ("index_type", "num_indexed_rows", "num_unindexed_rows", "num_indices"):
            assert getattr(stats, field) == getattr(pylance, field), field
    assert (
        local.describe_table_index_stats(  # what the local backend adds: the metric
            ln.DescribeTableIndexStatsRequest(id=TID, index_name="vec_idx")
        ).distance_type
        == "l2"
    )


def test_rest_refuses_an_index_build_its_server_would_apply_to_main(rest_server) -> None:
    """pylance's REST adapter describes a branch that does not exist as main: an index build
    on a branch is refused before it is sent, where the server would build it on main."""
    ns = backend.connect(rest_server.url)
    create_table(ns, TID, make_table(30))
    branches.create_branch(ns, TID, "dev")
    with pytest.raises(UnsupportedOperationError, match="nothing was sent") as err:
        ixo.create_index(
            on_branch(ns, "dev"),
            ln.CreateTableIndexRequest(id=TID, column="id", index_type="BTREE"),
        )
    assert "ignores the branch of DescribeTable" in str(err.value)
    assert _main(ns).describe_indices() == [] and _main(ns).version == 1
    assert _dev(ns).describe_indices() == [] and _dev(ns).version == 1


def test_local_maintenance_on_a_branch(local_diverged: ln.LanceNamespace) -> None:
    ns, dev = local_diverged, on_branch(local_diverged, "dev")
    before = _state(ns)
    done = compact_files(dev, TID)
    after = _state(ns)
    assert (after[0], after[1]) == (before[0], before[1])  # main untouched
    assert after[3].equals(before[3])  # the branch's rows kept
    assert (done["version_before"], done["version_after"]) == (before[2], after[2])
    assert done["fragments_before"] == len(_dev(ns).checkout_version(before[2]).get_fragments())


def test_local_health_of_a_branch_reads_the_branchs_own_history(
    local_diverged: ln.LanceNamespace,
) -> None:
    """The health's last compaction on a branch is the branch's: main's operations under the
    same version numbers are not the branch's (DescribeTransaction has no branch), with the
    console's version facts or without."""
    ns, dev = local_diverged, on_branch(local_diverged, "dev")
    compact_files(ns, TID)  # main's own compaction, at a version number the branch also has
    main_rewrite = _main(ns).version
    for seed in (3, 4):  # the branch's versions go past it
        _dev(ns).insert(make_table(2, start=300 + 10 * seed, dim=DIM, seed=seed))
    assert main_rewrite <= _dev(ns).version
    facts = VersionFacts()
    for kept in (None, facts, facts):
        assert health.table_health(dev, TID, facts=kept).last_compaction is None
    compact_files(dev, TID)
    rewrite = _dev(ns).version
    for kept in (None, facts):
        event = health.table_health(dev, TID, facts=kept).last_compaction
        assert event is not None and event.version == rewrite
    assert health.table_health(ns, TID, facts=facts).last_compaction.version == main_rewrite


# -- export and import -------------------------------------------------------------------------------
def _arrow(data: bytes) -> pa.Table:
    return pa.ipc.open_file(pa.BufferReader(data)).read_all()


def test_local_export_reads_the_branch(local_diverged: ln.LanceNamespace) -> None:
    ns, dev = local_diverged, on_branch(local_diverged, "dev")
    out = io.BytesIO()
    result = exports.export_table(dev, TID, "arrow", out)
    assert _arrow(out.getvalue()).sort_by("id").equals(_rows(_dev(ns)))
    assert result.file_name == f"t-dev-v{_dev(ns).version}.arrow"
    first = io.BytesIO()
    exports.export_table(dev, TID, "arrow", first, version=2, filter="id >= 100")
    at_two = _dev(ns).checkout_version(2).to_table(filter="id >= 100").sort_by("id")
    assert _arrow(first.getvalue()).sort_by("id").equals(at_two) and at_two.num_rows == 10


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def test_local_import_appends_and_merges_into_the_branch(
    local_diverged: ln.LanceNamespace,
) -> None:
    ns, dev = local_diverged, on_branch(local_diverged, "dev")
    main_version, main_rows, _, base, _ = _state(ns)
    extra = make_table(3, start=300, dim=DIM, seed=3)
    done = imports.import_table(dev, TID, _parquet(extra), "parquet", mode="append")
    assert (done.branch, done.rows, done.version) == ("dev", 3, _dev(ns).version)
    assert _rows(_dev(ns)).equals(pa.concat_tables([base, extra]).sort_by("id"))

    changed = make_table(2, start=109, dim=DIM, seed=4)  # 109 is the branch's, 110 is new
    changed = changed.set_column(2, "text", pa.array(["merged 109", "merged 110"]))
    merged = imports.import_table(dev, TID, _parquet(changed), "parquet", mode="merge", on=["id"])
    assert (merged.updated, merged.inserted) == (1, 1)
    kept = pa.concat_tables([base, extra]).filter(pc.not_equal(pc.field("id"), 109))
    assert _rows(_dev(ns)).equals(pa.concat_tables([kept, changed]).sort_by("id"))
    assert (_main(ns).version, _rows(_main(ns))) == (main_version, main_rows)  # isolation


def test_rest_branch_import_and_export_are_refused_and_nothing_changes(
    rest_server,
) -> None:
    ns = backend.connect(rest_server.url)
    create_table(ns, TID, make_table(5))
    branches.create_branch(ns, TID, "dev")
    before = _state(ns)
    dev = on_branch(ns, "dev")
    with pytest.raises(UnsupportedOperationError, match=IGNORED):
        imports.import_table(dev, TID, _parquet(make_table(2, start=9)), "parquet", mode="append")
    out = io.BytesIO()
    with pytest.raises(UnsupportedOperationError, match=IGNORED):
        exports.export_table(dev, TID, "arrow", out)
    assert out.getvalue() == b"" and _state(ns) == before


# -- bad input ---------------------------------------------------------------------------------------
def test_an_unknown_branch_is_refused_and_nothing_changes(diverged: ln.LanceNamespace) -> None:
    ns = diverged
    nope = on_branch(ns, "nope")
    before = _state(ns)
    for call in (
        lambda: count_rows(nope, TID, version=None, filter=None),
        lambda: nope.insert_into_table(
            ln.InsertIntoTableRequest(id=TID), ipc_bytes(make_table(1, start=500, dim=DIM))
        ),
        lambda: ixo.create_index(
            nope, ln.CreateTableIndexRequest(id=TID, column="id", index_type="BTREE")
        ),
        lambda: ixo.drop_index(nope, TID, "id_idx"),
        lambda: imports.import_table(
            nope, TID, _parquet(make_table(1, start=500, dim=DIM)), "parquet", mode="append"
        ),
        lambda: ixo.index_overview(nope, TID),
    ):
        with pytest.raises(TableBranchNotFoundError, match="no branch 'nope'"):
            call()
    assert _state(ns) == before


def ipc_bytes(table: pa.Table) -> bytes:
    from tests.support import ipc_stream_bytes

    return ipc_stream_bytes(table)


def test_what_a_branch_cannot_address_is_refused(diverged: ln.LanceNamespace) -> None:
    ns = diverged
    with pytest.raises(InvalidInputError, match="path separator"):
        on_branch(ns, "a/b")
    dev = on_branch(ns, "dev")
    assert (
        isinstance(dev, BranchView) and on_branch(ns, "main") is ns and on_branch(dev, None) is ns
    )
    before = _state(ns)
    with pytest.raises(UnsupportedOperationError, match="drop_table cannot act on branch 'dev'"):
        dev.drop_table(ln.DropTableRequest(id=TID))
    with pytest.raises(InvalidInputError, match="a new table has only main"):
        imports.import_table(dev, ["fresh"], _parquet(make_table(1)), "parquet", mode="create")
    assert _state(ns) == before
    assert ns.table_exists(ln.TableExistsRequest(id=TID)) is not None


# -- the gate -----------------------------------------------------------------------------------------
def test_branch_writes_pass_the_gate_and_are_audited_with_their_branch(
    local_diverged: ln.LanceNamespace, tmp_path: Path
) -> None:
    log = audit.AuditLog(tmp_path / "audit")
    gated = gate(local_diverged, actor=Actor("ed@example.com", "editor"), connection="c", log=log)
    dev = on_branch(gated, "dev")
    imports.import_table(dev, TID, _parquet(make_table(1, start=400, dim=DIM)), "parquet",
                         mode="append")  # fmt: skip
    ixo.create_index(dev, ln.CreateTableIndexRequest(id=TID, column="id", index_type="BTREE"))
    optimize_indexes(dev, TID)
    entries = [e for e in log.entries() if e.outcome == audit.OK]
    ops = {e.operation: e for e in entries}
    assert {"import_table", "create_table_scalar_index", "optimize_indexes"} <= set(ops)
    for entry in ops.values():
        assert entry.to_json()["request"]["branch"] == "dev", entry.operation
    assert 400 in _dev(local_diverged).to_table()["id"].to_pylist()

    before = _state(local_diverged)
    read_only = on_branch(
        gate(local_diverged, actor=Actor("ro", "admin"), read_only="a read-only launch"), "dev"
    )
    with pytest.raises(PermissionDeniedError, match="read-only launch"):
        imports.import_table(read_only, TID, _parquet(make_table(1, start=401, dim=DIM)),
                             "parquet", mode="append")  # fmt: skip
    with pytest.raises(PermissionDeniedError):
        ixo.drop_index(read_only, TID, "id_idx")
    assert _state(local_diverged) == before


def test_the_search_snippets_name_the_branch_and_run_on_it(
    local_diverged: ln.LanceNamespace,
) -> None:
    """Copy as Python of a vector search on a branch: both snippets (the backend call and
    plain pylance) search the branch when run."""
    ns = local_diverged
    connect = f"ns = backend.connect({str(ns.local_path)!r})"
    console, pylance = search_snippets(
        connect, TID, "vec", 4, {"bypass_vector_index": True}, branch="dev"
    )
    assert "branch='dev'" in console and ".checkout_version(('dev', None))" in pylance
    data = _dev(ns).to_table()  # the snippets' query: the branch's first row's vector
    vectors = np.array(data["vec"].to_pylist(), dtype=np.float32)
    order = np.argsort(metric_distances(vectors, vectors[0], "l2"), kind="stable")[:4]
    expected = [data["id"][int(i)].as_py() for i in order]
    for code in (console, pylance):
        scope: dict[str, object] = {}
        exec(compile(code, "<snippet>", "exec"), scope)  # noqa: S102 - the snippet as pasted
        got = scope["rows"]
        assert isinstance(got, pa.Table) and got["id"].to_pylist() == expected


def test_an_object_store_root_reads_and_writes_the_branch(s3_root) -> None:
    """The same on an ``s3://`` root (moto): the branch's dataset is opened with the root's
    storage options for reads, an append, an index build and its listing, and an export."""
    ns = s3_root.ns
    create_table(ns, TID, make_table(12))
    branches.create_branch(ns, TID, "dev")
    dev = on_branch(ns, "dev")
    options = s3_root.server.storage_options
    location = ns.describe_table(ln.DescribeTableRequest(id=TID)).location

    def opened(branch: str | None) -> lance.LanceDataset:
        main = lance.dataset(location, storage_options=options)
        return main if branch is None else main.checkout_version((branch, None))

    extra = make_table(3, start=50)
    imports.import_table(dev, TID, _parquet(extra), "parquet", mode="append")
    ixo.create_index(dev, ln.CreateTableIndexRequest(id=TID, column="id", index_type="BTREE"))
    expected = pa.concat_tables([make_table(12), extra]).sort_by("id")
    assert _rows(opened("dev")).equals(expected)
    assert count_rows(dev, TID, version=None, filter="id >= 50") == 3
    assert list(ixo.index_overview(dev, TID)["indexed_rows"]) == [15]
    out = io.BytesIO()
    exports.export_table(dev, TID, "arrow", out)
    assert _arrow(out.getvalue()).sort_by("id").equals(expected)
    main = opened(None)
    assert (main.version, main.count_rows(), main.describe_indices()) == (1, 12, [])
