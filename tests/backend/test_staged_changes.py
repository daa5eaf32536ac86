"""Staged changes (``batch_builder.stage_change``, ``backend.local.staging``): a real change of a
table staged as its next version that readers do not see, published by a CreateTableVersion
in a batch, or discarded without a trace.

Expected rows are computed independently with pyarrow from the rows before and the change; the
files a staged change leaves are listed straight from the folder or the bucket (moto's S3
server), never through the code under test.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import lance
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from lance.fragment import FragmentMetadata
from lance_namespace import (
    CountTableRowsRequest,
    CreateNamespaceRequest,
    CreateTableVersionRequest,
    DescribeTableRequest,
    ListTableVersionsRequest,
)
from lance_namespace.errors import (
    ConcurrentModificationError,
    InvalidInputError,
    PermissionDeniedError,
    UnsupportedOperationError,
)

import backend
from backend import access, audit
from backend.gate import Actor, gate
from backend.local import batch
from backend.services import batch_builder as bb
from backend.services import lifecycle, staged_changes
from tests.support import create_table

T = ["lake", "t"]


def base_rows() -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(12), pa.int64()),
            "price": pa.array([float(i) * 1.5 for i in range(12)]),
            "tag": pa.array([f"t{i % 3}" for i in range(12)]),
        }
    )


def sorted_rows(table: pa.Table) -> pa.Table:
    return table.select(sorted(table.column_names)).sort_by("id")


# The four kinds of change, each with its pyarrow computation of the rows once published.
def _append(before: pa.Table) -> tuple[dict[str, Any], pa.Table]:
    new = pd.DataFrame({"id": [100, 101, 102], "price": [1.0, 2.0, 3.0], "tag": ["x"] * 3})
    expected = pa.concat_tables([before, pa.Table.from_pandas(new, schema=before.schema)])
    return {"append": new}, expected


def _delete(before: pa.Table) -> tuple[dict[str, Any], pa.Table]:
    mask = pc.or_(pc.less(before["id"], 3), pc.equal(before["tag"], "t2"))
    return {"delete": "id < 3 OR tag = 't2'"}, before.filter(pc.invert(mask))


def _update(before: pa.Table) -> tuple[dict[str, Any], pa.Table]:
    mask = pc.greater_equal(before["id"], 8)
    price = pc.if_else(mask, pc.multiply(before["price"], 10.0), before["price"])
    tag = pc.if_else(mask, pa.scalar("hot"), before["tag"])
    expected = before.set_column(1, "price", price).set_column(2, "tag", tag)
    return {"update": ({"price": "price * 10", "tag": "'hot'"}, "id >= 8")}, expected


def _overwrite(before: pa.Table) -> tuple[dict[str, Any], pa.Table]:
    new = pa.table({"id": pa.array([7, 8], pa.int64()), "label": ["seven", "eight"]})
    return {"overwrite": new}, new


CHANGES: dict[str, tuple[Callable[[pa.Table], tuple[dict[str, Any], pa.Table]], str]] = {
    "append": (_append, "Append"),
    "delete": (_delete, "Delete"),
    "update": (_update, "Update"),
    "overwrite": (_overwrite, "Overwrite"),
}


# -- roots: a folder and an S3 bucket (moto) ---------------------------------------------------
class Root:
    """A namespace with one table ``lake$t``, and its files listed from outside."""

    def __init__(
        self,
        ns: Any,
        listing: Callable[[], dict[str, str]],
        remove: Callable[[str], None] | None = None,
    ) -> None:
        self.ns = ns
        self.remove = remove  # a file of the root (a key of ``files``), removed from outside
        self.listing = listing
        ns.create_namespace(CreateNamespaceRequest(id=["lake"]))
        create_table(ns, T, base_rows())

    @property
    def location(self) -> str:
        return self.ns.describe_table(DescribeTableRequest(id=T)).location

    def files(self) -> dict[str, str]:
        """Every file of the root, except the console's records (``_console/``, whose
        transaction records a commit adds) and the catalog."""
        return {
            k: v
            for k, v in self.listing().items()
            if not k.startswith(("_console/", "__manifest/"))
        }


def _local_listing(root: Path) -> Callable[[], dict[str, str]]:
    def listing() -> dict[str, str]:
        out = {}
        for dirpath, _, names in os.walk(root):
            for name in names:
                path = Path(dirpath) / name
                out[str(path.relative_to(root))] = str(path.stat().st_size)
        return out

    return listing


@pytest.fixture(params=["file", "s3"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> Root:
    if request.param == "file":
        path = tmp_path / "root"
        path.mkdir()
        return Root(backend.connect(str(path)), _local_listing(path), lambda k: (path / k).unlink())
    s3_root = request.getfixturevalue("s3_root")

    def listing() -> dict[str, str]:
        objects = s3_root.server.objects(s3_root.bucket)
        return {k.split("/", 1)[1]: v for k, v in objects.items() if k.startswith("root/")}

    def remove(key: str) -> None:
        s3_root.server.client().delete_object(Bucket=s3_root.bucket, Key=f"root/{key}")

    return Root(s3_root.ns, listing, remove)


@pytest.fixture
def local_root(tmp_path: Path) -> Root:
    path = tmp_path / "root"
    path.mkdir()
    return Root(backend.connect(str(path)), _local_listing(path))


def read_latest(ns: Any) -> tuple[int, int, list[int]]:
    """What a reader through the namespace sees: the version, the row count, the versions."""
    desc = ns.describe_table(DescribeTableRequest(id=T, load_detailed_metadata=True))
    count = ns.count_table_rows(CountTableRowsRequest(id=T)).count
    versions = [v.version for v in ns.list_table_versions(ListTableVersionsRequest(id=T)).versions]
    return int(desc.version), int(count), versions


# -- staging and publishing ---------------------------------------------------------------------
@pytest.mark.parametrize("kind", list(CHANGES))
def test_staged_change_is_invisible_then_published_as_computed(root: Root, kind: str) -> None:
    ns = root.ns
    before = ns.open_dataset(T).to_table()
    make, operation = CHANGES[kind]
    change, expected = make(before)
    seen_before = read_latest(ns)
    staged = bb.stage_change(ns, T, **change)
    assert (staged.table_id, staged.version, staged.based_on) == (tuple(T), 2, 1)
    assert staged.operation == operation and staged.kind == kind
    assert (staged.rows_before, staged.rows_after) == (before.num_rows, expected.num_rows)
    # readers of the table do not see it: through the namespace, and opening the files
    assert read_latest(ns) == seen_before
    assert lance.dataset(root.location, storage_options=ns.storage_options).version == 1
    # the audit reads the staged version itself
    assert sorted_rows(staged_changes.staged_rows(ns, staged)).equals(sorted_rows(expected))
    assert staged_changes.staged_count(ns, staged) == expected.num_rows
    # published by a CreateTableVersion in a batch
    ops = [bb.staged_op(staged)]
    assert bb.validate(ns, ops) == []
    bb.commit(ns, ops)
    ds = ns.open_dataset(T)
    assert ds.version == 2
    assert sorted_rows(ds.to_table()).equals(sorted_rows(expected))
    assert type(ds.read_transaction(2).operation).__name__ == operation
    assert ns.count_table_rows(CountTableRowsRequest(id=T)).count == expected.num_rows
    # the published change's files are the table's: the console's cleanup keeps them
    swept = bb.cleanup_staged(ns)
    assert swept.published == (staged.id,) and not swept.discarded
    assert sorted_rows(ns.open_dataset(T).to_table()).equals(sorted_rows(expected))
    assert not [k for k in root.files() if k.startswith("_staging/")]


def test_row_changes_of_a_staged_update_and_delete(local_root: Root) -> None:
    ns = local_root.ns
    before = ns.open_dataset(T).to_table()
    staged = bb.stage_change(ns, T, update=("price = price + 1", "tag = 't1'"))
    changes = staged_changes.staged_row_changes(ns, staged)
    matched = before.filter(pc.equal(before["tag"], "t1"))
    assert changes.counts == {"inserted": 0, "updated": matched.num_rows, "deleted": 0}
    assert changes.updated_before.column("price").to_pylist() == matched["price"].to_pylist()
    assert changes.updated.column("price").to_pylist() == [
        p + 1 for p in matched["price"].to_pylist()
    ]
    assert all(c == ["price"] for c in changes.updated.column("changed_columns").to_pylist())
    bb.discard_staged(ns, staged)
    gone = bb.stage_change(ns, T, delete="price > 10")
    deleted = staged_changes.staged_row_changes(ns, gone).deleted
    assert sorted(deleted["id"].to_pylist()) == sorted(
        before.filter(pc.greater(before["price"], 10.0))["id"].to_pylist()
    )
    # a presenter's checks: a predicate that must hold, a row count range
    results = staged_changes.check_staged(
        ns,
        gone,
        [
            staged_changes.Check("cheap", predicate="price <= 10"),
            staged_changes.Check("too few", min_rows=before.num_rows),
        ],
    )
    kept = before.filter(pc.less_equal(before["price"], 10.0)).num_rows
    assert [r.passed for r in results] == [True, False]
    assert str(kept) in results[1].detail
    assert not staged_changes.all_passed(results)


# -- discard and cleanup ------------------------------------------------------------------------
@pytest.mark.parametrize("kind", list(CHANGES))
def test_discarded_changes_leave_no_file(root: Root, kind: str) -> None:
    ns = root.ns
    files_before = root.files()
    change, _ = CHANGES[kind][0](ns.open_dataset(T).to_table())
    staged = bb.stage_change(ns, T, **change)
    written = set(root.files()) - set(files_before)
    assert written  # data or deletion files, preview and staged manifests, transaction file
    assert bb.list_staged(ns, T) == [staged]
    removed = bb.discard_staged(ns, staged)
    assert root.files() == files_before
    assert removed == len(written)
    assert bb.list_staged(ns) == []
    assert bb.cleanup_staged(ns) == staged_changes.staging.Swept((), (), (), ())
    assert root.files() == files_before
    assert read_latest(ns)[:2] == (1, 12)


def _left(root: Root, staged: Any) -> set[str]:
    """The files of ``staged`` still in the root (the staged manifest, the table's files)."""
    names = {f"_staging/{staged.id}.manifest", *(f"/{f}" for f in staged.files)}
    return {k for k in root.files() if any(k.endswith(n) or k == n for n in names)}


def test_cleanup_removes_changes_never_published(root: Root) -> None:
    """A change whose version another change took, and one left behind past the cleanup's
    delay, are removed whole by the cleanup; a publishable recent one is kept; a published
    one keeps its files (they are the table's), only its preview manifest goes."""
    ns = root.ns
    loser = bb.stage_change(ns, T, delete="id = 1")
    winner = bb.stage_change(ns, T, append=pa.table({"id": [50], "price": [0.5], "tag": ["w"]}))
    bb.commit(ns, [bb.staged_op(winner)])
    pending = bb.stage_change(ns, T, delete="id = 2")
    swept = bb.cleanup_staged(ns)
    assert (swept.discarded, swept.published, swept.kept) == (
        (loser.id,),
        (winner.id,),
        (pending.id,),
    )
    assert _left(root, loser) == set()
    preview = f"_versions/d{winner.preview_version}.manifest"
    kept = {f for f in winner.files if f != preview}
    assert {k.split("/", 1)[1] for k in _left(root, winner)} == kept
    assert _left(root, pending)
    bb.cleanup_staged(ns, keep_unpublished=timedelta(0))
    assert _left(root, pending) == set()
    assert bb.list_staged(ns) == []
    assert sorted(ns.open_dataset(T).to_table()["id"].to_pylist()) == [*range(12), 50]


def test_console_cleanup_runs_the_staged_cleanup(local_root: Root) -> None:
    ns = local_root.ns
    files_before = local_root.files()
    staged = bb.stage_change(ns, T, delete="id = 0")
    other = bb.stage_change(ns, T, delete="id = 1")
    bb.commit(ns, [bb.staged_op(other)])
    plan = lifecycle.cleanup_plan(ns, T, keep_last=1)
    lifecycle.run_cleanup(ns, plan)
    assert bb.list_staged(ns) == []
    left = set(local_root.files()) - set(files_before)
    assert not any(staged.id in f for f in left)
    assert not any(f.endswith(n.rsplit("/", 1)[-1]) for f in left for n in staged.files)


def test_discard_of_a_published_change_is_refused(local_root: Root) -> None:
    ns = local_root.ns
    staged = bb.stage_change(ns, T, append=pa.table({"id": [99], "price": [9.0], "tag": ["n"]}))
    bb.commit(ns, [bb.staged_op(staged)])
    files = local_root.files()
    with pytest.raises(InvalidInputError, match="was published as version 2"):
        bb.discard_staged(ns, staged)
    assert local_root.files() == files
    assert ns.open_dataset(T).count_rows() == 13


@pytest.mark.parametrize("kind", ["append", "delete"])
def test_a_staged_change_whose_files_another_cleanup_removed_is_not_published(
    root: Root, kind: str
) -> None:
    """What a staged change wrote, which no version refers to yet, is removed from outside:
    its new data file by another process's cleanup of unreferenced files (lance's own, as
    lancedb runs it), its deletion file by hand. Publishing it would make a latest version no one can
    read. A single CreateTableVersion, a batch and the preflight each refuse it, naming the
    file; nothing changes and the table reads as before."""
    ns = root.ns
    change = (
        {"append": pa.table({"id": [99], "price": [9.0], "tag": ["n"]})}
        if kind == "append"
        else {"delete": "id < 3"}
    )
    staged = bb.stage_change(ns, T, **change)
    brought = [f for f in staged.files if f.startswith(("data/", "_deletions/"))]
    assert len(brought) == 1
    [key] = [k for k in root.files() if k.endswith(f"/{brought[0]}")]
    if kind == "append":  # lance's cleanup of files no version refers to
        outside = lance.dataset(root.location, storage_options=ns.storage_options)
        outside.cleanup_old_versions(older_than=timedelta(seconds=-60), delete_unverified=True)
    else:  # lance's cleanup leaves a deletion file of its own age: removed by hand
        assert root.remove is not None
        root.remove(key)
    assert key not in root.files()
    files = root.files()
    request = CreateTableVersionRequest(
        id=T,
        version=staged.version,
        manifest_path=staged.manifest_path,
        manifest_size=staged.manifest_size,
    )
    gone = f"files are gone \\(1 of 1: {brought[0]}\\)"
    with pytest.raises(InvalidInputError, match=gone):
        ns.create_table_version(request)
    with pytest.raises(InvalidInputError, match=gone):
        bb.commit(ns, [bb.staged_op(staged)])
    [problem] = bb.validate(ns, [bb.staged_op(staged)])
    assert brought[0] in str(problem)
    assert root.files() == files
    assert read_latest(ns) == (1, 12, [1])
    assert ns.open_dataset(T).to_table().num_rows == 12


def test_a_staged_manifest_naming_a_file_outside_the_table_is_refused(
    local_root: Root, tmp_path: Path
) -> None:
    """A manifest made by another client (lance's own commit, on a copy of the table) whose
    new fragment's data file is ``../../elsewhere.lance``: published, the table would read a
    file outside its directory. A single CreateTableVersion and a batch refuse it; nothing
    changes."""
    ns = local_root.ns
    table = Path(local_root.location.removeprefix("file://"))
    copy = tmp_path / "copy"
    shutil.copytree(table, copy)
    fragment = ns.open_dataset(T).get_fragments()[0].metadata.to_json()
    fragment["id"] = 1
    fragment["files"][0]["path"] = "../../elsewhere.lance"
    forged = FragmentMetadata.from_json(json.dumps(fragment))
    lance.LanceDataset.commit(str(copy), lance.LanceOperation.Append([forged]), read_version=1)
    staged = tmp_path / "root" / "_staging" / "forged.manifest"
    staged.parent.mkdir()
    shutil.copy(copy / "_versions" / batch.manifest_name(2), staged)
    (tmp_path / "root" / "elsewhere.lance").write_bytes(b"not the table's")
    _refused_alone_and_in_a_batch(
        local_root, staged, "refers to files outside the table: data/../../elsewhere.lance"
    )


def _refused_alone_and_in_a_batch(root: Root, staged: Path, match: str) -> None:
    """The manifest at ``staged``, as version 2 of the table, is refused by a single
    CreateTableVersion and by a batch with a message matching ``match``; nothing changes."""
    files = root.files()
    with pytest.raises(InvalidInputError, match=match):
        root.ns.create_table_version(
            CreateTableVersionRequest(id=T, version=2, manifest_path=str(staged))
        )
    with pytest.raises(InvalidInputError, match=match):
        bb.commit(root.ns, [bb.create_version_op(T, 2, str(staged))])
    assert root.files() == files
    assert read_latest(root.ns) == (1, 12, [1])


def test_a_staged_manifest_lance_cannot_read_is_refused(local_root: Root, tmp_path: Path) -> None:
    """A file in the manifest's frame recording version 2 (what the version check reads),
    whose fragments field lance cannot decode: refused before anything is written."""
    message = bytes([0x10, 0x01, 0x18, 0x02])  # field 2 (fragments) as a number; version 2
    data = struct.pack("<I", len(message)) + message + struct.pack("<QHH", 0, 0, 2) + b"LANC"
    assert batch.manifest_version(data) == 2
    staged = tmp_path / "root" / "_staging" / "odd.manifest"
    staged.parent.mkdir()
    staged.write_bytes(data)
    _refused_alone_and_in_a_batch(
        local_root, staged, "the staged manifest's fragments cannot be read"
    )


def test_a_batch_refuses_a_staged_change_discarded_after_validation(local_root: Root) -> None:
    """A discard between the batch's validation and its lock: the batch refuses (it would
    publish a manifest whose data files are gone) and nothing is published."""
    ns = local_root.ns
    staged = bb.stage_change(ns, T, append=pa.table({"id": [99], "price": [9.0], "tag": ["n"]}))

    def discard_now(step: int, phase: str, detail: str) -> None:
        if phase == "validated":
            batch.set_fault_hook(None)
            bb.discard_staged(ns, staged)

    batch.set_fault_hook(discard_now)
    try:
        with pytest.raises(ConcurrentModificationError, match="staged manifest"):
            ns.batch_commit_tables(bb.to_request([bb.staged_op(staged)]))
    finally:
        batch.set_fault_hook(None)
    assert read_latest(ns)[:2] == (1, 12)


# -- bad input and the gate ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({}, "one change at a time"),
        ({"append": pa.table({"id": [1]}), "delete": "id = 1"}, "one change at a time"),
        ({"delete": "id = 1; DROP TABLE t"}, ";"),
        ({"delete": "id > 1000"}, "no row"),
        ({"delete": ""}, "filter is required"),
        ({"update": ({"price": "price * 2"}, None)}, "filter is required"),
        ({"update": ({"nope": "1"}, "id = 1")}, "no column named nope"),
        ({"update": "price = 2"}, "pair"),
        ({"append": pa.table({"id": [1], "other": [2]})}, "lacks price, tag and has other"),
        ({"append": pa.table({"id": [], "price": [], "tag": []})}, "no rows"),
        ({"append": [1, 2]}, "pyarrow Table or a pandas DataFrame"),
    ],
)
def test_bad_changes_are_refused_and_write_nothing(
    local_root: Root, change: dict[str, Any], message: str
) -> None:
    files = local_root.files()
    with pytest.raises(InvalidInputError, match=message):
        bb.stage_change(local_root.ns, T, **change)
    assert local_root.files() == files
    assert bb.list_staged(local_root.ns) == []


def test_staging_goes_through_the_gate(local_root: Root, tmp_path: Path) -> None:
    log = audit.AuditLog(tmp_path / "audit")
    editor = gate(local_root.ns, actor=Actor("ed", role=access.EDITOR), log=log)
    viewer = gate(local_root.ns, actor=Actor("vi", role=access.VIEWER), log=log)
    files = local_root.files()
    rows = pa.table({"id": [77], "price": [7.0], "tag": ["e"]})
    with pytest.raises(PermissionDeniedError):
        bb.stage_change(viewer, T, append=rows)
    with pytest.raises(PermissionDeniedError):  # publishing it would delete rows
        bb.stage_change(editor, T, delete="id = 1")
    assert local_root.files() == files
    staged = bb.stage_change(editor, T, append=rows)
    assert bb.discard_staged(editor, staged) > 0
    read_only = gate(local_root.ns, read_only="the console is read-only", log=log)
    with pytest.raises(PermissionDeniedError):
        bb.stage_change(read_only, T, append=rows)
    assert local_root.files() == files
    entries = [(e.operation, e.outcome, e.user) for e in log.entries()]
    assert ("stage_change", audit.REFUSED, "vi") in entries
    assert ("stage_change", audit.REFUSED, "ed") in entries
    assert ("stage_change", "ok", "ed") in entries
    assert ("discard_staged", "ok", "ed") in entries


def test_staging_over_rest_is_unsupported(rest_server) -> None:
    ns = backend.connect(rest_server.url)
    ns.create_namespace(CreateNamespaceRequest(id=["lake"]))
    create_table(ns, T, base_rows())
    with pytest.raises(UnsupportedOperationError, match="local backend only"):
        bb.stage_change(ns, T, append=base_rows())
    assert bb.list_staged(ns) == []


def test_a_staging_that_fails_half_way_leaves_nothing(local_root: Root, tmp_path: Path) -> None:
    """A file where the root's ``_staging`` directory goes: the data files and the preview
    are written, then the scratch copy fails; everything written so far is removed."""
    root = tmp_path / "root"
    (root / "_staging").write_bytes(b"not a directory")
    files = local_root.files()
    with pytest.raises(Exception):  # noqa: B017 - whatever the filesystem says
        bb.stage_change(local_root.ns, T, delete="id = 4")
    assert local_root.files() == files
    assert bb.list_staged(local_root.ns) == []
    assert read_latest(local_root.ns)[:2] == (1, 12)


def test_cleanup_removes_a_staging_abandoned_long_ago(local_root: Root, tmp_path: Path) -> None:
    """A process that died while staging leaves its record unfinished: a day later the
    cleanup removes the record and what it is known to have written."""
    import json

    root = tmp_path / "root"
    files = local_root.files()
    sid = "0" * 32
    (root / "_staging" / f"scratch-{sid}" / "_versions").mkdir(parents=True)
    (root / "_staging" / f"scratch-{sid}" / "_versions" / "1.manifest").write_bytes(b"m")
    (root / "_staging" / f"{sid}.manifest").write_bytes(b"m")
    record = root / "_console" / "staged" / f"{sid}.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    entry = {"txn_id": sid, "state": "staging", "table_id": T, "location": local_root.location}
    record.write_text(json.dumps({**entry, "updated_at": 1_000}))
    fresh = root / "_console" / "staged" / f"{'1' * 32}.json"
    fresh.write_text(json.dumps({**entry, "txn_id": "1" * 32, "updated_at": 10**13}))
    swept = bb.cleanup_staged(local_root.ns)
    assert swept.discarded == (sid,)
    assert local_root.files() == files
    assert not record.exists() and fresh.exists()  # a staging still running is left alone


# -- records written by someone else --------------------------------------------------------------
def _record_dir(root: Path) -> Path:
    return root / "_console" / "staged"


def _forge(root: Path, name: str, record: dict[str, Any]) -> None:
    """A record written by hand as the registry writes its own (``<name>.json``, its
    ``txn_id`` the record's id)."""
    import json

    _record_dir(root).mkdir(parents=True, exist_ok=True)
    record = {"txn_id": record.get("id", name), **record}
    (_record_dir(root) / f"{name}.json").write_text(json.dumps(record))


def test_a_forged_record_deletes_nothing_it_did_not_stage(local_root: Root, tmp_path: Path) -> None:
    """A record under ``_console/staged`` is read back by discard, the cleanup and the
    preview. One written by hand named "../../victim.txt" among its files, another writer's
    data file, or a dataset outside the root as its location: each was deleted, and the
    preview read that dataset. A staging record whose id was "../../important" made the
    cleanup delete that file and a whole directory outside the root. A copy of a real record
    under another id, discarded, took the real change's files, and publishing the real one
    then left the table unreadable. Now every value of a record is checked, its location must
    be its table's, and files another record names stay."""
    root = tmp_path / "root"
    ns = local_root.ns
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    important = tmp_path / "important.manifest"
    important.write_text("keep")
    (tmp_path / "victim_dir").mkdir()
    (tmp_path / "victim_dir" / "f").write_text("keep")
    outside = tmp_path / "outside.lance"
    lance.write_dataset(pa.table({"ssn": ["123-45-6789"]}), str(outside))
    real = bb.stage_change(ns, T, append=pa.table({"id": [50], "price": [0.5], "tag": ["w"]}))
    record = real.to_dict() | {"state": "staged"}
    stale = "2000-01-01T00:00:00+00:00"
    in_flight = "data/other-writer-in-flight.lance"
    table_dir = Path(local_root.location.removeprefix("file://"))
    (table_dir / in_flight).write_text("another writer's")
    _forge(root, "a" * 32, record | {"id": "a" * 32, "files": ["../../victim.txt", in_flight],
                                 "based_on": 0, "staged_at": stale})  # fmt: skip
    _forge(root, "b" * 32, record | {"id": "b" * 32, "location": f"file://{outside}",
                                 "files": ["data/x.lance"], "staged_at": stale})  # fmt: skip
    _forge(root, "c" * 32, record | {"id": "c" * 32, "sha256": "0" * 64})  # a copy of the real one
    for sid in ("../../important", "/../../../victim_dir"):
        _forge(root, sid.replace("/", "_"), {"state": "staging", "txn_id": sid, "table_id": T,
                                             "location": "x", "updated_at": 0})  # fmt: skip
    files = local_root.files()
    listed = {s.id for s in bb.list_staged(ns)}
    assert listed == {real.id, "c" * 32}  # the others are not staged changes of this console
    copy = next(s for s in bb.list_staged(ns) if s.id == "c" * 32)
    bb.discard_staged(ns, copy)
    bb.cleanup_staged(ns)
    lifecycle_files = local_root.files()
    assert {k: v for k, v in lifecycle_files.items() if not k.startswith("_staging/")} == {
        k: v for k, v in files.items() if not k.startswith("_staging/")
    }
    assert victim.read_text() == important.read_text() == "keep"
    assert (tmp_path / "victim_dir" / "f").read_text() == "keep"
    assert (table_dir / in_flight).read_text() == "another writer's"
    forged_preview = bb.as_staged(record | {"id": "d" * 32, "location": f"file://{outside}"})
    with pytest.raises(InvalidInputError, match="not this table's"):
        staged_changes.staging.open_preview(ns, forged_preview)
    # the real change is whole: published, the table reads its rows
    bb.commit(ns, [bb.staged_op(real)])
    assert read_latest(ns)[:2] == (2, 13)


@pytest.mark.parametrize(
    "change",
    [
        {"staged_at": 5},
        {"staged_at": None},
        {"staged_at": "2020-01-01T00:00:00"},  # no zone
        {"version": "abc"},
        {"location": 7},
        {"manifest_path": 7},
        {"preview_version": "x"},
        {"files": ["data"]},
        {"files": ["data/."]},
    ],
)
def test_a_damaged_record_is_left_out_not_raised(local_root: Root, change: dict[str, Any]) -> None:
    """One record with a value of the wrong type made the listing and the cleanup of every
    table raise (TypeError, OverflowError, IsADirectoryError...)."""
    root = Path(local_root.location.removeprefix("file://")).parent
    ns = local_root.ns
    real = bb.stage_change(ns, T, delete="id = 1")
    _forge(root, "e" * 32, real.to_dict() | {"state": "staged", "id": "e" * 32} | change)
    (_record_dir(root) / "a-directory.json").mkdir()
    assert bb.list_staged(ns) == [real]
    assert bb.cleanup_staged(ns).kept == (real.id,)
    assert bb.list_staged(ns) == [real]
