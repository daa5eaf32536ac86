"""BatchCommitTables on the local backend: semantics, validation, rollback, transaction records.

Every test runs on a real directory namespace (``backend.connect(path)``); versions are staged
the way a writer using namespace-managed commits does it (``helpers.stage_version``). Results
are read back through single-operation calls and ``lance.dataset``; "nothing changed" is
checked byte for byte (``tree_digest``) or, after a rollback that had to undo a catalog commit,
as identical logical state (``logical_state``).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import lance
import pytest
from lance_namespace import (
    AlterTransactionRequest,
    BatchCommitTablesRequest,
    BatchDeleteTableVersionsRequest,
    CommitTableOperation,
    CountTableRowsRequest,
    CreateNamespaceRequest,
    DeclareTableRequest,
    DescribeTableRequest,
    DescribeTableVersionRequest,
    DescribeTransactionRequest,
    InsertIntoTableRequest,
    ListTablesRequest,
    ListTableVersionsRequest,
)
from lance_namespace.errors import (
    ConcurrentModificationError,
    InternalError,
    InvalidInputError,
    LanceNamespaceError,
    NamespaceNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
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
from backend.local import batch as batch_mod
from backend.local.batch import commit as batch_commit_mod
from backend.local.batch import records as batch_records_mod
from backend.rules import batch_rules
from tests.conftest import copy_built
from tests.support import (
    batch,
    batch_records,
    build_namespace,
    console_leftovers,
    create_table,
    ipc_stream_bytes,
    logical_state,
    make_table,
    manifest_file,
    op_declare,
    op_delete,
    op_deregister,
    op_version,
    stage,
    table_location,
    tree_digest,
)


@pytest.fixture
def root(local_root: Path) -> Path:
    return local_root


@pytest.fixture
def lns(root: Path, built_template: Path):
    """``build_namespace`` at ``root``: a copy of the one built once per session."""
    return backend.connect(str(copy_built(built_template, root)))


@pytest.fixture(autouse=True)
def _no_fault_hook() -> Iterator[None]:
    yield
    batch_mod.set_fault_hook(None)


def versions_of(ns, table_id: list[str]) -> list[int]:
    resp = ns.list_table_versions(ListTableVersionsRequest(id=table_id))
    return sorted(v.version for v in resp.versions)


def _versions_or_error(ns, table_id: list[str]) -> list[int] | str:
    try:
        return versions_of(ns, table_id)
    except LanceNamespaceError as e:
        return type(e).__name__


def tables_in(ns, ns_id: list[str]) -> list[str]:
    return sorted(ns.list_tables(ListTablesRequest(id=ns_id)).tables)


def describe_txn(ns, txn_id: str):
    return ns.describe_transaction(DescribeTransactionRequest(id=[txn_id]))


# -- each operation alone, read back through single-operation calls -----------------------------
def test_declare_alone_matches_single_op(lns, root: Path) -> None:
    reference = lns.declare_table(DeclareTableRequest(id=["a", "ref"], properties={"k": "v"}))
    resp = lns.batch_commit_tables(batch(op_declare(["a", "new"], properties={"k": "v"})))

    assert resp.transaction_id and resp.transaction_id.startswith("batch-")
    (result,) = resp.results
    declared = result.declare_table
    assert declared is not None and declared.transaction_id == resp.transaction_id
    assert {"new", "ref"} <= set(tables_in(lns, ["a"]))
    got = lns.describe_table(DescribeTableRequest(id=["a", "new"]))
    ref = lns.describe_table(DescribeTableRequest(id=["a", "ref"]))
    assert got.location == declared.location
    assert got.properties == ref.properties == {"k": "v"}
    assert declared.properties == reference.properties
    # Same on-disk shape as pylance's own declare: a directory holding only .lance-reserved.
    new_dir, ref_dir = table_location(lns, ["a", "new"]), table_location(lns, ["a", "ref"])
    assert new_dir.parent == ref_dir.parent == root
    assert new_dir.name.endswith("_a$new")
    assert sorted(os.listdir(new_dir)) == sorted(os.listdir(ref_dir)) == [".lance-reserved"]
    assert (new_dir / ".lance-reserved").read_bytes() == (ref_dir / ".lance-reserved").read_bytes()
    # A declared-only table answers version listings exactly like one declared on its own.
    assert _versions_or_error(lns, ["a", "new"]) == _versions_or_error(lns, ["a", "ref"])
    assert _versions_or_error(lns, ["a", "new"]) in ([], "TableNotFoundError")
    assert console_leftovers(root) == []


def test_create_version_alone_matches_single_op(lns, root: Path) -> None:
    ref_staged = stage(lns, ["a", "t1"])
    ref = lns.create_table_version(
        {
            "id": ["a", "t1"],
            "version": ref_staged.version,
            "manifest_path": ref_staged.manifest_path,
        }
    )
    staged = stage(lns, ["a", "t0"], rows=3)
    assert staged.version == 5

    resp = lns.batch_commit_tables(batch(op_version(["a", "t0"], staged)))

    made = resp.results[0].create_table_version
    assert made is not None and made.version is not None
    assert versions_of(lns, ["a", "t0"]) == [1, 2, 3, 4, 5]
    location = table_location(lns, ["a", "t0"])
    assert lance.dataset(str(location), version=5).count_rows() == staged.num_rows
    assert lance.dataset(str(location)).version == 5
    described = lns.describe_table_version(DescribeTableVersionRequest(id=["a", "t0"], version=5))
    assert made.version.manifest_path == described.version.manifest_path
    assert made.version.manifest_size == staged.manifest_size == described.version.manifest_size
    assert made.version.e_tag == described.version.e_tag
    # The single op consumes its staging manifest; so does the batch.
    assert not Path(staged.manifest_path).exists()
    assert not Path(ref_staged.manifest_path).exists()
    assert ref.version is not None
    # Manifest paths are reported as absolute paths, the published file itself.
    assert made.version.manifest_path.startswith("/")
    assert made.version.manifest_path == str(manifest_file(location / "_versions", 5))
    assert ref.version.manifest_path == str(
        manifest_file(table_location(lns, ["a", "t1"]) / "_versions", 5)
    )
    assert console_leftovers(root) == []


def test_create_first_version_of_declared_table(lns, root: Path) -> None:
    # Stage version 1 of a declared-only table: a fresh dataset's manifest, data next to it.
    d_dir = table_location(lns, ["a", "d"])
    scratch = root / "_staging" / "fresh"
    lance.write_dataset(lance.dataset(str(table_location(lns, ["a", "t0"]))).to_table(), scratch)
    for sub in ("data", "_transactions"):
        (d_dir / sub).mkdir()
        for f in (scratch / sub).iterdir():
            (d_dir / sub / f.name).write_bytes(f.read_bytes())
    staged = root / "_staging" / "d-v1.manifest"
    staged.write_bytes(manifest_file(scratch / "_versions", 1).read_bytes())

    lns.batch_commit_tables(
        batch(
            CommitTableOperation(
                create_table_version={"id": ["a", "d"], "version": 1, "manifest_path": str(staged)}
            )
        )
    )
    assert versions_of(lns, ["a", "d"]) == [1]
    assert lance.dataset(str(d_dir)).count_rows() == 12


def test_delete_versions_alone(lns, root: Path) -> None:
    location = table_location(lns, ["a", "t0"])
    keep = {
        v: manifest_file(location / "_versions", v).read_bytes() for v in (1, 4)
    }  # survivors, byte-identical afterwards
    resp = lns.batch_commit_tables(batch(op_delete(["a", "t0"], (2, 4))))
    assert resp.results[0].delete_table_versions.deleted_count == 2
    assert versions_of(lns, ["a", "t0"]) == [1, 4]
    for v, data in keep.items():
        assert manifest_file(location / "_versions", v).read_bytes() == data
    for v in (2, 3):
        with pytest.raises(FileNotFoundError):
            manifest_file(location / "_versions", v)
        with pytest.raises(LanceNamespaceError):
            lns.describe_table_version(DescribeTableVersionRequest(id=["a", "t0"], version=v))
    assert lance.dataset(str(location)).version == 4
    assert lance.dataset(str(location), version=1).count_rows() == 3
    assert console_leftovers(root) == []  # the hidden manifests are physically gone too


def test_deregister_alone_keeps_files(lns, root: Path) -> None:
    location = table_location(lns, ["a", "b", "u1"])
    before = tree_digest(location)
    resp = lns.batch_commit_tables(batch(op_deregister(["a", "b", "u1"])))
    result = resp.results[0].deregister_table
    assert result.id == ["a", "b", "u1"]
    assert result.location == "file://" + str(location)
    assert "u1" not in tables_in(lns, ["a", "b"])
    with pytest.raises(TableNotFoundError):
        lns.describe_table(DescribeTableRequest(id=["a", "b", "u1"]))
    assert tree_digest(location) == before
    assert lance.dataset(str(location)).version == 4


# -- mixed batches -------------------------------------------------------------------------------
def test_mixed_batch_across_namespaces(lns, root: Path) -> None:
    s_t0 = stage(lns, ["a", "t0"])
    s_u2 = stage(lns, ["a", "b", "u2"], rows=5)
    ops = [
        op_declare(["a", "x"], properties={"owner": "ops"}),
        op_declare(["a", "b", "y"]),
        op_declare(["z"]),
        op_version(["a", "t0"], s_t0),
        op_version(["a", "b", "u2"], s_u2),
        op_delete(["a", "t1"], (1, 3)),
        op_delete(["a", "b", "u0"], (2, 3), (3, 4)),
        op_deregister(["a", "t2"]),
        op_deregister(["a", "b", "d"]),
        op_delete(["a", "t0"], (1, 2)),  # a second operation on a table already touched
    ]
    resp = lns.batch_commit_tables(BatchCommitTablesRequest(operations=ops))

    kinds = [
        next(k for k in batch_rules.OPERATION_KINDS if getattr(r, k) is not None)
        for r in resp.results
    ]
    assert kinds == [
        "declare_table",
        "declare_table",
        "declare_table",
        "create_table_version",
        "create_table_version",
        "delete_table_versions",
        "delete_table_versions",
        "deregister_table",
        "deregister_table",
        "delete_table_versions",
    ]
    assert tables_in(lns, ["a"]) == ["d", "t0", "t1", "x"]
    assert tables_in(lns, ["a", "b"]) == ["u0", "u1", "u2", "y"]
    assert "z" in tables_in(lns, [])
    assert versions_of(lns, ["a", "t0"]) == [2, 3, 4, 5]
    assert versions_of(lns, ["a", "b", "u2"]) == [1, 2, 3, 4, 5]
    assert versions_of(lns, ["a", "t1"]) == [3, 4]
    assert versions_of(lns, ["a", "b", "u0"]) == [1, 4]
    assert [
        r.delete_table_versions.deleted_count for r in resp.results if r.delete_table_versions
    ] == [
        2,
        2,
        1,
    ]
    u2 = table_location(lns, ["a", "b", "u2"])
    assert lance.dataset(str(u2), version=5).count_rows() == s_u2.num_rows
    assert lns.describe_table(DescribeTableRequest(id=["a", "x"])).properties == {"owner": "ops"}
    rec = describe_txn(lns, resp.transaction_id)
    assert rec.status == "SUCCEEDED"
    assert rec.properties["operation_count"] == "10"
    assert rec.properties["tables_touched"] == "9"
    assert rec.properties["declare_table_count"] == "3"
    assert rec.properties["delete_table_versions_count"] == "3"
    assert set(rec.properties["namespaces"].strip("[]").replace('"', "").split(", ")) == {
        "a",
        "a$b",
    }
    assert console_leftovers(root) == []


def test_batch_equals_same_operations_one_by_one(tmp_path: Path) -> None:
    """The batch and the sequence of single operations end in the same logical state."""
    roots = {}
    for name in ("single", "batch"):
        root = tmp_path / name
        root.mkdir()
        ns = backend.connect(str(root))
        build_namespace(ns)
        roots[name] = (root, ns)
    plans = {}
    for name, (_root, ns) in roots.items():
        plans[name] = [
            ("declare", ["a", "n"], {"p": "1"}),
            ("declare", ["a", "b", "n"], None),
            ("version", ["a", "t1"], stage(ns, ["a", "t1"], rows=4, start=7)),
            ("delete", ["a", "t0"], [(1, 3)]),
            ("deregister", ["a", "b", "u0"], None),
        ]
    single_root, single_ns = roots["single"]
    for kind, tid, arg in plans["single"]:
        if kind == "declare":
            single_ns.declare_table(DeclareTableRequest(id=tid, properties=arg))
        elif kind == "version":
            single_ns.create_table_version(
                {"id": tid, "version": arg.version, "manifest_path": arg.manifest_path}
            )
        elif kind == "delete":
            single_ns.batch_delete_table_versions(
                {"id": tid, "ranges": [{"start_version": s, "end_version": e} for s, e in arg]}
            )
        else:
            single_ns.deregister_table({"id": tid})
    batch_root, batch_ns = roots["batch"]
    ops = []
    for kind, tid, arg in plans["batch"]:
        if kind == "declare":
            ops.append(op_declare(tid, properties=arg))
        elif kind == "version":
            ops.append(op_version(tid, arg))
        elif kind == "delete":
            ops.append(op_delete(tid, *arg))
        else:
            ops.append(op_deregister(tid))
    batch_ns.batch_commit_tables(BatchCommitTablesRequest(operations=ops))

    for ns_id in ([], ["a"], ["a", "b"]):
        assert tables_in(batch_ns, ns_id) == tables_in(single_ns, ns_id)
    for tid in (["a", "t0"], ["a", "t1"], ["a", "b", "u1"]):
        assert versions_of(batch_ns, tid) == versions_of(single_ns, tid)
        for v in versions_of(batch_ns, tid):
            rows = [
                lance.dataset(str(table_location(n, tid)), version=v).to_table().sort_by("id")
                for n in (batch_ns, single_ns)
            ]
            assert rows[0].equals(rows[1])
    for tid in (["a", "n"], ["a", "b", "n"]):
        got = [n.describe_table(DescribeTableRequest(id=tid)) for n in (batch_ns, single_ns)]
        assert got[0].properties == got[1].properties
        assert sorted(os.listdir(table_location(batch_ns, tid))) == [".lance-reserved"]
    # Same catalog, row for row (locations of new tables are random in both).
    a, b = (logical_state(r)["catalog"] for r in (batch_root, single_root))
    assert a == b


# -- validation: refused before anything is written -----------------------------------------------
def _garbage_manifest(root: Path) -> str:
    p = root / "_staging" / "garbage.manifest"
    p.parent.mkdir(exist_ok=True)
    p.write_bytes(b"not a lance manifest at all, really")
    return str(p)


def _copy_into(staged, directory: Path) -> str:
    """A copy of a staged manifest in ``directory`` (a real manifest for the right version)."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"copied-{Path(staged.manifest_path).name}"
    shutil.copy2(staged.manifest_path, target)
    return str(target)


CASES = [
    # (name, builder(ns, root) -> list of ops, error class, index of the offending op)
    ("unknown namespace", lambda ns, r: [op_declare(["a", "ok"]), op_declare(["nope", "t"])], NamespaceNotFoundError, 1),
    ("unknown table", lambda ns, r: [op_declare(["a", "ok"]), op_deregister(["a", "nope"])], TableNotFoundError, 1),
    ("declare existing", lambda ns, r: [op_declare(["a", "ok"]), op_declare(["a", "t0"])], TableAlreadyExistsError, 1),
    ("declare over a namespace", lambda ns, r: [op_declare(["a", "b"])], TableAlreadyExistsError, 0),
    ("declare twice", lambda ns, r: [op_declare(["a", "n"]), op_declare(["a", "n"])], InvalidInputError, 1),
    ("op after deregister", lambda ns, r: [op_deregister(["a", "t0"]), op_delete(["a", "t0"], (1, 2))], InvalidInputError, 1),
    ("deregister what it declares", lambda ns, r: [op_declare(["a", "n"]), op_deregister(["a", "n"])], InvalidInputError, 1),
    ("version not next", lambda ns, r: [op_declare(["a", "ok"]), op_version(["a", "t0"], stage(ns, ["a", "t0"]), version=6)], ConcurrentModificationError, 1),
    ("version already there", lambda ns, r: [op_version(["a", "t0"], stage(ns, ["a", "t0"]), version=4)], ConcurrentModificationError, 0),
    ("same version twice", lambda ns, r: [op_version(["a", "t0"], s := stage(ns, ["a", "t0"])), op_version(["a", "t0"], s)], InvalidInputError, 1),
    ("missing staged manifest", lambda ns, r: [op_version(["a", "t0"], stage(ns, ["a", "t0"]), manifest_path=str(r / "_staging" / "nope.manifest"))], InvalidInputError, 0),
    ("unreadable staged manifest", lambda ns, r: [op_version(["a", "t0"], stage(ns, ["a", "t0"]), manifest_path=_garbage_manifest(r))], InvalidInputError, 0),
    ("manifest of another version", lambda ns, r: [op_version(["a", "t0"], stage(ns, ["a", "b", "u0"]), version=5, manifest_path=str(manifest_file(table_location(ns, ["a", "t0"]) / "_versions", 2)))], InvalidInputError, 0),
    ("wrong manifest size", lambda ns, r: [op_version(["a", "t0"], stage(ns, ["a", "t0"]), manifest_size=1)], InvalidInputError, 0),
    ("empty range", lambda ns, r: [op_declare(["a", "ok"]), op_delete(["a", "t0"], (2, 2))], InvalidInputError, 1),
    ("inverted range", lambda ns, r: [op_delete(["a", "t0"], (3, 1))], InvalidInputError, 0),
    ("range covers latest", lambda ns, r: [op_delete(["a", "t0"], (1, 5))], InvalidInputError, 0),
    ("range to the end", lambda ns, r: [op_delete(["a", "t0"], (2, -1))], InvalidInputError, 0),
    ("range from version 0", lambda ns, r: [op_declare(["a", "ok"]), op_delete(["a", "t0"], (0, 2))], InvalidInputError, 1),
    ("no ranges", lambda ns, r: [op_delete(["a", "t0"])], InvalidInputError, 0),
    ("delete what it creates", lambda ns, r: [op_version(["a", "t0"], stage(ns, ["a", "t0"])), op_delete(["a", "t0"], (5, 6))], InvalidInputError, 1),
    ("delete latest after a create", lambda ns, r: [op_delete(["a", "t0"], (4, 5)), op_version(["a", "t0"], stage(ns, ["a", "t0"]))], InvalidInputError, 0),
    ("delimiter in a name", lambda ns, r: [op_declare(["a", "x$y"])], InvalidInputError, 0),
    ("slash in a name", lambda ns, r: [op_declare(["a", "ok"]), op_declare(["a", "b/c"])], InvalidInputError, 1),
    ("space in a new name", lambda ns, r: [op_declare(["a", "ok"]), op_declare(["a", "has space"])], InvalidInputError, 1),
    ("unicode new name", lambda ns, r: [op_declare(["a", "naïve"])], InvalidInputError, 0),
    ("name too long", lambda ns, r: [op_declare(["a", "n" * 129])], InvalidInputError, 0),
    ("dot-dot namespace", lambda ns, r: [op_declare(["..", "t"])], InvalidInputError, 0),
    ("manifest in another table", lambda ns, r: [op_version(["a", "t0"], s := stage(ns, ["a", "t0"]), manifest_path=_copy_into(s, table_location(ns, ["a", "t1"])))], InvalidInputError, 0),
    ("declare at a chosen location", lambda ns, r: [op_declare(["a", "n"], location=str(r / "elsewhere"))], InvalidInputError, 0),
    ("two kinds in one operation", lambda ns, r: [CommitTableOperation(declare_table=DeclareTableRequest(id=["a", "n"]), deregister_table={"id": ["a", "t0"]})], InvalidInputError, 0),
    ("branch", lambda ns, r: [CommitTableOperation(delete_table_versions=BatchDeleteTableVersionsRequest(id=["a", "t0"], branch="dev", ranges=[VersionRange(start_version=1, end_version=2)]))], UnsupportedOperationError, 0),
]  # fmt: skip


@pytest.mark.parametrize(("name", "build", "error", "index"), CASES, ids=[c[0] for c in CASES])
def test_validation_failure_changes_no_byte(lns, root: Path, name, build, error, index) -> None:
    ops = build(lns, root)
    before = tree_digest(root)
    with pytest.raises(error) as info:
        lns.batch_commit_tables(BatchCommitTablesRequest(operations=ops))
    assert info.value.operation_index == index
    assert f"operation {index + 1}: " in str(info.value)  # people count from 1
    assert tree_digest(root) == before
    assert batch_records(root) == {}


def test_empty_batch_is_refused(lns, root: Path) -> None:
    before = tree_digest(root)
    with pytest.raises(InvalidInputError):
        lns.batch_commit_tables(BatchCommitTablesRequest(operations=[]))
    assert tree_digest(root) == before


def test_batch_is_capped_at_10000_operations(lns, root: Path) -> None:
    before = tree_digest(root)
    ops = [op_declare(["a", f"n{i}"]) for i in range(batch_rules.MAX_OPERATIONS + 1)]
    with pytest.raises(InvalidInputError, match="at most 10,000 operations") as info:
        lns.batch_commit_tables(BatchCommitTablesRequest(operations=ops))
    assert info.value.operation_index is None  # the whole batch, not one operation
    assert tree_digest(root) == before
    assert batch_records(root) == {}


# -- staged manifests and declared locations stay inside the root ----------------------------------
def _outside_targets(root: Path, outside: Path, manifest: Path):
    """Ways of naming ``manifest`` (outside the root) as a staged manifest path."""
    link = root / "_staging" / "link-to-outside.manifest"
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(manifest)
    return {
        "absolute": str(manifest),
        "file-uri": manifest.as_uri(),
        "dot-dot": str(root / "_staging" / ".." / ".." / outside.name / manifest.name),
        "symlink": str(link),
    }


@pytest.mark.parametrize("how", ["absolute", "file-uri", "dot-dot", "symlink"])
def test_staged_manifest_outside_the_root_is_refused(lns, root: Path, tmp_path: Path, how) -> None:
    staged = stage(lns, ["a", "t0"])
    outside = tmp_path / "outside"
    manifest = Path(_copy_into(staged, outside))  # a real manifest for version 5
    path = _outside_targets(root, outside, manifest)[how]
    before, before_outside = tree_digest(root), tree_digest(outside)

    with pytest.raises(InvalidInputError, match="outside the table's staging areas") as info:
        lns.batch_commit_tables(
            batch(op_declare(["a", "ok"]), op_version(["a", "t0"], staged, manifest_path=path))
        )
    assert info.value.operation_index == 1
    assert "operation 2: CreateTableVersion a$t0" in str(info.value)
    assert tree_digest(root) == before
    assert tree_digest(outside) == before_outside  # nothing outside moved, linked or deleted
    assert manifest.is_file()
    assert versions_of(lns, ["a", "t0"]) == [1, 2, 3, 4]
    # The single operation applies the same rule.
    with pytest.raises(InvalidInputError, match="outside the table's staging areas"):
        lns.create_table_version({"id": ["a", "t0"], "version": 5, "manifest_path": path})
    assert tree_digest(outside) == before_outside
    assert versions_of(lns, ["a", "t0"]) == [1, 2, 3, 4]
    # The same manifest staged inside the table's own directory is accepted.
    inside = _copy_into(staged, table_location(lns, ["a", "t0"]))
    resp = lns.batch_commit_tables(batch(op_version(["a", "t0"], staged, manifest_path=inside)))
    assert versions_of(lns, ["a", "t0"]) == [1, 2, 3, 4, 5]
    published = resp.results[0].create_table_version.version.manifest_path
    assert published == str(manifest_file(table_location(lns, ["a", "t0"]) / "_versions", 5))
    assert tree_digest(outside) == before_outside


@pytest.mark.parametrize(
    "make",
    [
        lambda base: op_declare([".."]),
        lambda base: op_declare(["."]),
        lambda base: op_declare([str(base / "evil")]),  # an absolute path as the name
        lambda base: op_declare(["../evil"]),
        lambda base: op_declare(["evil"], location=str(base / "evil")),
        lambda base: op_declare(["evil"], location="../evil"),
        lambda base: op_declare(["evil"], location=(base / "evil").as_uri()),
    ],
    ids=["dotdot", "dot", "absolute-name", "relative-name", "abs-location", "rel-location", "uri"],
)
def test_declare_never_creates_anything_above_the_root(lns, root: Path, make) -> None:
    parent = root.parent
    before = tree_digest(parent)
    op = make(parent)
    with pytest.raises(InvalidInputError) as info:
        lns.batch_commit_tables(batch(op))
    assert info.value.operation_index == 0
    assert "operation 1: DeclareTable" in str(info.value)
    assert tree_digest(parent) == before
    assert not (parent / "evil").exists()
    # The single DeclareTable refuses the same request.
    with pytest.raises(InvalidInputError):
        lns.declare_table(op.declare_table)
    assert tree_digest(parent) == before


# -- failures after the commit began ---------------------------------------------------------------
def _mixed_ops(ns) -> list[CommitTableOperation]:
    return [
        op_declare(["a", "x"]),
        op_declare(["top"]),
        op_version(["a", "t0"], stage(ns, ["a", "t0"])),
        op_delete(["a", "t1"], (1, 3)),
        op_deregister(["a", "b", "u1"]),
        op_deregister(["a", "d"]),
    ]


@pytest.mark.parametrize(
    "phase",
    [
        "begin.record",
        "apply.declare.reserve",
        "apply.version.link",
        "apply.delete.hide",
        "apply.catalog",
        "commit.record",
    ],
)
def test_io_error_after_begin_rolls_back(lns, root: Path, phase: str) -> None:
    ops = _mixed_ops(lns)
    staged = [Path(o.create_table_version.manifest_path) for o in ops if o.create_table_version]
    before_files = tree_digest(root, exclude=("_console", "__manifest"))
    before = logical_state(root, os.listdir(root))

    def fail(step: int, at: str, detail: str) -> None:
        if at == phase:
            raise OSError(5, f"injected I/O error at {at}")

    batch_mod.set_fault_hook(fail)
    with pytest.raises(InternalError, match="rolled back"):
        lns.batch_commit_tables(BatchCommitTablesRequest(operations=ops))
    batch_mod.set_fault_hook(None)

    assert tree_digest(root, exclude=("_console", "__manifest")) == before_files
    assert logical_state(root, os.listdir(root)) == before
    assert all(p.exists() for p in staged)  # the caller can retry with the same staging
    assert console_leftovers(root) == []
    (rec,) = batch_records(root).values()
    assert rec["status"] == "FAILED"
    assert "injected I/O error" in rec["properties"]["reason"]
    described = describe_txn(lns, rec["txn_id"])
    assert described.status == "FAILED"
    assert described.properties["reason"] == rec["properties"]["reason"]
    # And the namespace still works: the same batch, retried, succeeds.
    resp = lns.batch_commit_tables(BatchCommitTablesRequest(operations=ops))
    assert describe_txn(lns, resp.transaction_id).status == "SUCCEEDED"
    assert versions_of(lns, ["a", "t0"]) == [1, 2, 3, 4, 5]


def test_conflict_seen_under_the_lock(lns, root: Path) -> None:
    """A write lands between validation and the lock: ConcurrentModificationError, FAILED record."""
    other = backend.connect(str(root))
    rival = stage(other, ["a", "t0"], rows=1, start=50)
    ops = [op_declare(["a", "x"]), op_version(["a", "t0"], stage(lns, ["a", "t0"]))]

    def race(step: int, phase: str, detail: str) -> None:
        if phase == "validated":
            batch_mod.set_fault_hook(None)
            other.create_table_version(
                {"id": ["a", "t0"], "version": 5, "manifest_path": rival.manifest_path}
            )

    batch_mod.set_fault_hook(race)
    with pytest.raises(ConcurrentModificationError, match="a\\$t0"):
        lns.batch_commit_tables(BatchCommitTablesRequest(operations=ops))
    assert "x" not in tables_in(lns, ["a"])
    assert versions_of(lns, ["a", "t0"]) == [1, 2, 3, 4, 5]
    assert lance.dataset(str(table_location(lns, ["a", "t0"]))).count_rows() == 13  # the rival's
    (rec,) = batch_records(root).values()
    assert rec["status"] == "FAILED" and "concurrent modification" in rec["properties"]["reason"]


def test_cancel_before_the_commit_point(lns, root: Path) -> None:
    """AlterTransaction RUNNING -> CANCELED from another client: the batch rolls back."""
    other = backend.connect(str(root))
    before = logical_state(root, os.listdir(root))
    seen: dict[str, str] = {}

    def cancel(step: int, phase: str, detail: str) -> None:
        if phase == "apply.catalog":
            txn = next(iter(batch_records(root)))
            seen["running"] = describe_txn(other, txn).status
            seen["canceled"] = other.alter_transaction(
                AlterTransactionRequest(
                    id=[txn],
                    actions=[
                        AlterTransactionAction(
                            set_status_action=AlterTransactionSetStatus(status="Canceled")
                        )
                    ],
                )
            ).status

    batch_mod.set_fault_hook(cancel)
    with pytest.raises(ConcurrentModificationError, match="CANCELED"):
        lns.batch_commit_tables(batch(op_declare(["a", "x"]), op_deregister(["a", "t0"])))
    assert seen == {"running": "RUNNING", "canceled": "CANCELED"}
    assert logical_state(root, os.listdir(root)) == before
    (rec,) = batch_records(root).values()
    assert rec["status"] == "CANCELED"


# -- crash recovery (in-process view; the kill -9 matrix is test_batch_crash.py) --------------------
def test_open_recovers_a_batch_left_running(lns, root: Path, monkeypatch) -> None:
    """A journal and a RUNNING record with half the changes applied: connect() rolls back."""
    ops = _mixed_ops(lns)  # staging writes files: take the "before" picture after it
    before = logical_state(root, os.listdir(root))

    class Stop(BaseException):
        pass

    def stop(step: int, phase: str, detail: str) -> None:
        if phase == "apply.catalog":
            raise Stop  # like a crash, as far as the files are concerned ...

    # ... except that a BaseException still rolls back; emulate the dead process by making
    # the rollback itself impossible, then reopening.
    # (commit imports undo_file by name; recovery keeps its own, real, reference.)
    with monkeypatch.context() as m:
        m.setattr(
            batch_commit_mod,
            "undo_file",
            lambda *a, **k: (_ for _ in ()).throw(OSError("process gone")),
        )
        batch_mod.set_fault_hook(stop)
        try:
            with pytest.raises(InternalError, match="retried on the next open"):
                lns.batch_commit_tables(BatchCommitTablesRequest(operations=ops))
        finally:
            batch_mod.set_fault_hook(None)
    assert console_leftovers(root) != []
    assert logical_state(root, os.listdir(root)) != before  # half applied, for now

    reopened = backend.connect(str(root))  # LocalNamespace.__init__ -> batch.recover
    assert console_leftovers(root) == []
    assert logical_state(root, os.listdir(root)) == before
    (rec,) = batch_records(root).values()
    assert describe_txn(reopened, rec["txn_id"]).status == "FAILED"
    assert describe_txn(reopened, rec["txn_id"]).properties["recovered"] == "true"


# -- transaction records ---------------------------------------------------------------------------
@pytest.fixture
def committed(lns):
    resp = lns.batch_commit_tables(batch(op_declare(["a", "x"]), op_delete(["a", "t0"], (1, 2))))
    return resp.transaction_id


def _alter(ns, txn: str, *actions: AlterTransactionAction):
    return ns.alter_transaction(AlterTransactionRequest(id=[txn], actions=list(actions)))


def _set(key: str, value: str, mode: str | None = None) -> AlterTransactionAction:
    return AlterTransactionAction(
        set_property_action=AlterTransactionSetProperty(key=key, value=value, mode=mode)
    )


def _unset(key: str, mode: str | None = None) -> AlterTransactionAction:
    return AlterTransactionAction(
        unset_property_action=AlterTransactionUnsetProperty(key=key, mode=mode)
    )


def _status(status: str) -> AlterTransactionAction:
    return AlterTransactionAction(set_status_action=AlterTransactionSetStatus(status=status))


def test_describe_batch_transaction(lns, committed: str) -> None:
    got = describe_txn(lns, committed)
    assert got.status == "SUCCEEDED"
    p = got.properties
    assert p["operation"] == "BatchCommitTables"
    assert p["operation_count"] == "2"
    assert p["tables_touched"] == "2"
    assert p["tables"] == '["a$x", "a$t0"]'
    assert p["started_at"] <= p["finished_at"]
    assert int(p["duration_ms"]) >= 0
    assert "reason" not in p
    ctx = batch_mod.context(lns)
    direct = batch_records_mod.describe(ctx, DescribeTransactionRequest(id=[committed]))
    assert direct == got
    # The batch records hold batches only: a table transaction id is not one of them ...
    with pytest.raises(TransactionNotFoundError):
        batch_records_mod.describe(ctx, DescribeTransactionRequest(id=["a", "t0", "1"]))
    # ... and the namespace answers it from pylance's table transactions instead.
    # (version 1 of a$t0 was deleted by the committed batch; version 2 is an Append)
    table_txn = lns.describe_transaction(DescribeTransactionRequest(id=["a", "t0", "2"]))
    assert table_txn.status == "SUCCEEDED"
    assert table_txn.properties["operation"] == "Append"
    with pytest.raises(TransactionNotFoundError):
        describe_txn(lns, "batch-" + "0" * 32)


def test_alter_properties_with_modes(lns, committed: str) -> None:
    r = _alter(lns, committed, _set("ticket", "OPS-1"), _set("owner", "me", "Fail"))
    assert r.properties["ticket"] == "OPS-1" and r.properties["owner"] == "me"
    r = _alter(lns, committed, _set("ticket", "OPS-2", "skip"), _set("owner", "you", "OVERWRITE"))
    assert r.properties["ticket"] == "OPS-1" and r.properties["owner"] == "you"
    r = _alter(lns, committed, _unset("ticket"), _unset("never-set"))  # Skip is the default
    assert "ticket" not in r.properties and r.properties["owner"] == "you"
    assert r.status == "SUCCEEDED"
    assert describe_txn(lns, committed).properties == r.properties


@pytest.mark.parametrize(
    "actions",
    [
        [_set("a1", "x"), _unset("missing", "Fail")],  # key missing, mode Fail
        [_set("a1", "x"), _set("operation_count", "3")],  # recorded by the batch: read-only
        [_set("a1", "x"), _unset("started_at")],
        [_set("a1", "x"), _status("Queued")],  # a succeeded batch cannot become queued
        [_set("a1", "x"), _status("failed")],
        [_set("a1", "x"), _set("k", "v", "sometimes")],  # unknown mode
        [_set("a1", "x"), _status("Paused")],  # unknown status
        [_set("a1", "x"), AlterTransactionAction()],  # no action at all
        [_set("a1", "x"), _set("a1", "y")],  # the same key twice in one request
        [_set("a1", "x"), _unset("a1")],
        [_status("Succeeded"), _status("Succeeded")],  # more than one set-status
    ],
)
def test_alter_is_all_or_nothing(lns, committed: str, actions) -> None:
    _alter(lns, committed, _set("owner", "me"))
    before = describe_txn(lns, committed)
    with pytest.raises(InvalidInputError, match="(?i)action 2"):  # actions count from 1
        _alter(lns, committed, *actions)
    assert describe_txn(lns, committed) == before


def test_alter_fail_mode_set_of_an_existing_key_is_a_conflict(lns, committed: str) -> None:
    """Same as for a table transaction: the key exists, so a Fail-mode set is a conflict."""
    _alter(lns, committed, _set("owner", "me"))
    before = describe_txn(lns, committed)
    with pytest.raises(ConcurrentModificationError, match="action 2") as info:
        _alter(lns, committed, _set("a1", "x"), _set("owner", "again", "Fail"))
    assert "'owner' already exists" in str(info.value)
    assert describe_txn(lns, committed) == before  # a1 was not set either


def test_alter_skip_never_errors(lns, committed: str) -> None:
    _alter(lns, committed, _set("owner", "me"))
    before = describe_txn(lns, committed)
    # Skip on existing keys, read-only ones included, changes nothing and raises nothing.
    r = _alter(lns, committed, _set("owner", "you", "Skip"), _set("operation_count", "99", "Skip"))
    assert r.properties == before.properties and r.status == before.status
    assert describe_txn(lns, committed) == before


def test_alter_status_rules(lns, committed: str) -> None:
    assert _alter(lns, committed, _status("succeeded")).status == "SUCCEEDED"  # no-op, any case
    assert _alter(lns, committed, _status("SUCCEEDED")).status == "SUCCEEDED"
    with pytest.raises(InvalidInputError, match="final"):
        _alter(lns, committed, _status("Canceled"))
    with pytest.raises(TransactionNotFoundError):
        _alter(lns, "batch-" + "1" * 32, _set("k", "v"))


# -- memory:// and unsupported stores -------------------------------------------------------------
def test_memory_namespace(tmp_path: Path) -> None:
    ns = backend.connect(f"memory://batch-{os.getpid()}-{tmp_path.name}")
    ns.create_namespace({"id": ["a"]})
    ns.declare_table(DeclareTableRequest(id=["a", "old"]))
    resp = ns.batch_commit_tables(
        batch(
            op_declare(["a", "n1"], properties={"k": "v"}),
            op_declare(["top"]),
            op_deregister(["a", "old"]),
        )
    )
    assert tables_in(ns, ["a"]) == ["n1"] and tables_in(ns, []) == ["top"]
    assert ns.describe_table(DescribeTableRequest(id=["a", "n1"])).properties == {"k": "v"}
    assert describe_txn(ns, resp.transaction_id).status == "SUCCEEDED"

    with pytest.raises(TableAlreadyExistsError) as info:
        ns.batch_commit_tables(batch(op_declare(["a", "n2"]), op_declare(["a", "n1"])))
    assert info.value.operation_index == 1
    assert tables_in(ns, ["a"]) == ["n1"]

    def fail(step: int, phase: str, detail: str) -> None:
        if phase == "apply.deregister":
            raise OSError(5, "injected")

    batch_mod.set_fault_hook(fail)
    with pytest.raises(InternalError, match="rolled back"):
        ns.batch_commit_tables(batch(op_declare(["a", "n3"]), op_deregister(["a", "n1"])))
    batch_mod.set_fault_hook(None)
    assert tables_in(ns, ["a"]) == ["n1"]
    assert ns.describe_table(DescribeTableRequest(id=["a", "n1"])).properties == {"k": "v"}
    failed = [r for r in ns.txn_store.list() if r["status"] == "FAILED"]
    assert len(failed) == 1 and "injected" in failed[0]["properties"]["reason"]


def test_single_operations_on_object_stores_are_not_guarded() -> None:
    """Object-store roots have no local lock (batches there: test_object_store_batch.py)."""
    from lance.namespace import DirectoryNamespace

    class S3Like:  # what LocalNamespace looks like on an s3:// root, without the network
        _inner = DirectoryNamespace(root="memory://s3like")
        root = "s3://bucket/namespace"
        local_path = None

    with pytest.raises(UnsupportedOperationError, match="lock"):
        batch_mod.context(S3Like())
    with batch_mod.guard_single_op(S3Like(), [["t"]]):
        pass


def test_manifest_helpers() -> None:
    assert batch_mod.parse_manifest_name(batch_mod.manifest_name(7)) == 7
    assert batch_mod.parse_manifest_name(batch_mod.manifest_name(7, "V1")) == 7
    assert batch_mod.parse_manifest_name("latest_version_hint.json") is None
    assert batch_mod.manifest_version(b"LANC") is None
    assert batch_mod.is_batch_transaction_id(["batch-" + "a" * 32])
    assert not batch_mod.is_batch_transaction_id(["batch-xyz"])
    assert not batch_mod.is_batch_transaction_id(["t", "batch-" + "a" * 32])


# -- the location rule and the journal's JSON form (fast paths of large batches) ---------------


def test_location_rule_resolves_a_symlinked_child_and_every_clash(tmp_path: Path) -> None:
    from backend.locations import TableDirs, location_problem

    root = tmp_path / "root"
    (root / "t1.lance" / "inner").mkdir(parents=True)
    (root / "group" / "t2").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "escape").symlink_to(outside)  # a plain child of the root that leaves it
    (root / "loop").symlink_to(root / "t1.lance")  # ... or lands in another table
    tables = TableDirs([root / "t1.lance", root / "group" / "t2"])

    def why(location: str | Path) -> str | None:
        return location_problem(root, location, other_tables=tables)

    assert why(root / "new_table") is None and why("new_table") is None
    assert "outside the namespace root" in str(why(root / "escape"))
    assert "outside the namespace root" in str(why("escape"))
    assert "is the directory of another table" in str(why(root / "loop"))
    assert "is inside another table's directory" in str(why(root / "t1.lance" / "inner"))
    assert "contains another table's directory" in str(why(root / "group"))
    assert "the namespace root itself" in str(why(root / "."))
    assert "outside the namespace root" in str(why(root / ".." / "outside"))
    assert "_console directory" in str(why(root / "_console"))
    # A path is shown as typed, never as a Path repr.
    assert (
        why(root / "escape")
        == f"the table location {str(root / 'escape')!r} is outside the namespace root"
    )


def test_journal_json_is_the_dataclass_form(tmp_path: Path) -> None:
    import dataclasses

    from backend.local.batch.plan import (
        DeclareStep,
        DeleteStep,
        DeregisterStep,
        Journal,
        Move,
        VersionStep,
    )

    journal = Journal(
        "txn",
        {"id": "txn", "status": "RUNNING"},
        [DeclareStep(0, ["a", "t"], "a$t", "x_a$t", {"k": "v"})],
        [VersionStep(1, ["a", "u"], "a$u", 2, "V2", "/m")],
        [DeleteStep(2, ["a", "u"], "a$u", [{"start": 1, "end": 1}], [Move(1, "/s", "/t")], 1)],
        [DeregisterStep(3, ["a", "w"], "a$w", {"object_id": "a$w"}, "loc")],
    )
    data = journal.to_json()
    assert data == dataclasses.asdict(journal)
    assert Journal.from_json(data) == journal


@pytest.mark.parametrize("sliced", [False, True])
def test_run_all_attempts_every_item_then_raises_the_first_error(sliced: bool) -> None:
    from backend.local.batch.durable import run_all

    done: list[int] = []
    lock = threading.Lock()

    def work(i: int) -> None:
        if i in (3, 7):
            raise OSError(f"item {i}")
        with lock:
            done.append(i)

    with pytest.raises(OSError, match=r"item [37]"):
        run_all(work, list(range(20)), threads=2, sliced=sliced)
    assert sorted(done) == [i for i in range(20) if i not in (3, 7)]
    done.clear()
    run_all(work, [i for i in range(20) if i not in (3, 7)], threads=2, sliced=sliced)
    assert len(done) == 18
    done.clear()
    with pytest.raises(OSError, match="item 3"):  # a short list runs in this thread
        run_all(work, [2, 3, 4], threads=2, sliced=sliced)
    assert done == [2, 4]


def test_the_namespace_lists_its_batch_commits_newest_first(lns, root: Path) -> None:
    """txsv.list_batch_transactions: every batch commit's record, newest first, with
    status, times, operation count and tables, as the record files under the root hold them;
    a record of another kind under the store is not a batch commit."""
    from backend.services import transactions as txsv

    assert txsv.list_batch_transactions(lns) == []
    first = lns.batch_commit_tables(batch(op_declare(["a", "x"]), op_delete(["a", "t0"], (1, 2))))
    second = lns.batch_commit_tables(batch(op_declare(["a", "b", "y"])))
    lns.txn_store.put("not-a-batch", {"kind": "something else", "status": "SUCCEEDED"})
    listed = txsv.list_batch_transactions(lns)
    assert [t.id for t in listed] == [second.transaction_id, first.transaction_id]
    records = batch_records(root)  # the record files, read directly
    assert set(records) == {first.transaction_id, second.transaction_id}
    for item in listed:
        props = records[item.id]["properties"]
        assert item.status == records[item.id]["status"].upper() == "SUCCEEDED"
        assert item.started_at == props["started_at"] and item.finished_at == props["finished_at"]
        assert item.duration_ms == int(props["duration_ms"])
        assert item.operations == int(props["operation_count"])
    assert listed[1].operations == 2 and listed[1].tables == [["a", "x"], ["a", "t0"]]
    assert listed[0].operations == 1 and listed[0].tables == [["a", "b", "y"]]
    assert listed[0].started_at >= listed[1].started_at
    frame = txsv.batch_transactions_frame(listed)
    assert list(frame.columns) == txsv.BATCH_TRANSACTION_COLUMNS
    assert list(frame["transaction"]) == [second.transaction_id, first.transaction_id]
    assert list(frame["tables"]) == ["a › b › y", "a › x, a › t0"]
    # a new client of the same root (another session) lists the same
    assert txsv.list_batch_transactions(backend.connect(str(root))) == listed


def test_listing_transactions_over_rest_says_the_spec_has_none(rest_server) -> None:
    from backend.services import transactions as txsv

    ns = backend.connect(rest_server.url)
    with pytest.raises(UnsupportedOperationError, match="spec has no operation that lists"):
        txsv.list_batch_transactions(ns)


def _foreign_journals(pending: Path, object_id: str) -> list[str]:
    """Files in ``pending`` this console did not write, each naming version 2 of
    ``object_id`` as made by a batch in flight: another format, a version that is no number,
    an id that is a path, and one naming a path outside the root."""
    step = {"index": 0, "id": ["a", "t"], "object_id": object_id, "naming_scheme": "V2",
            "manifest_path": "/m"}  # fmt: skip
    txn = "batch-" + "0" * 31
    kinds = {
        f"{txn}1": {"format": 99, "txn_id": f"{txn}1", "versions": [{**step, "version": 2}]},
        f"{txn}2": {"version": "abc"},
        "escape": {"txn_id": "../../../x", "version": 2},
        f"{txn}4": {"version": 2, "final": "/elsewhere/x.manifest"},
    }
    names = []
    for name, change in kinds.items():
        version = {**step, "version": change.get("version", 2)}
        if "final" in change:
            version["final"] = change["final"]
        journal = {
            "format": change.get("format", 1),
            "txn_id": change.get("txn_id", name),
            "record": {"kind": "batch", "properties": {}},
            "declares": [],
            "versions": change.get("versions", [version]),
            "deletes": [],
            "deregisters": [],
        }
        (pending / f"{name}.json").write_text(json.dumps(journal))
        names.append(f"{name}.json")
    return names


def test_a_journal_the_console_did_not_write_hides_nothing_from_readers(tmp_path: Path) -> None:
    """Readers hid every version a file in ``pending`` named as made by a batch in flight,
    whoever wrote it: a journal of another format made a table read as its version before
    (3 rows where it holds 5), for as long as the file stayed, and one whose version is no
    number made every read of the namespace fail with ``ValueError``. Only the journals
    recovery would act on count now (``journals``); the others are left as they are."""
    ns = backend.connect(str(tmp_path), audit=False)
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    create_table(ns, ["a", "t"], make_table(3))
    lance.write_dataset(make_table(2, start=3), str(table_location(ns, ["a", "t"])), mode="append")
    pending = tmp_path / "_console" / "batch" / "pending"
    pending.mkdir(parents=True, exist_ok=True)
    names = _foreign_journals(pending, "a$t")
    ns = backend.connect(str(tmp_path), audit=False)
    assert ns.count_table_rows(CountTableRowsRequest(id=["a", "t"])).count == 5
    listed = ns.list_table_versions(ListTableVersionsRequest(id=["a", "t"])).versions
    assert sorted(v.version for v in listed) == [1, 2]
    ns.insert_into_table(
        InsertIntoTableRequest(id=["a", "t"], mode="append"),
        ipc_stream_bytes(make_table(1, start=5)),
    )
    assert ns.count_table_rows(CountTableRowsRequest(id=["a", "t"])).count == 6
    assert sorted(p.name for p in pending.iterdir()) == sorted(names)  # left where they are
