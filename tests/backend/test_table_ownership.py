"""What a table owns on a file root, and nothing else, is what the console deletes or rewrites.

Another process can write anything into a shared namespace: pylance's own RegisterTable accepts
a location that is another table's directory or the catalog, a symbolic link inside the root
can lead outside it, a link inside a table's folder can lead anywhere (lance's cleanup follows
it), a drop intent can name any folder, and a user's own ``<name>.lance`` folder can sit where a
new table would go. Every deleting or rewriting path (drop, CASCADE, its recovery, cleanup,
version deletes single and batched, overwrite, declares single and batched; on an object store
the same for a registration at another table's prefix, and a user's objects under a new table's
prefix) refuses these with
an ``InvalidInputError`` and leaves every file as it was (``backend.locations.owned_table_problem``
and ``foreign_folder_problem``).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from lance.namespace import DirectoryNamespace
from lance_namespace import (
    CreateNamespaceRequest,
    CreateTableRequest,
    DeclareTableRequest,
    DescribeTableRequest,
    DropNamespaceRequest,
    ListTablesRequest,
    RegisterTableRequest,
)
from lance_namespace.errors import InvalidInputError

import backend
from backend.arrow.ipc import to_ipc_stream
from backend.local import LocalNamespace
from backend.local.batch.apply import PENDING_DIR
from backend.local.batch.catalog_ops import DROP_PREFIX
from tests.support import batch, create_table, make_table, op_declare, op_delete, tree_digest

VICTIM_FILES = ("precious.txt", "sub/deep.txt")


def rows(n: int, start: int = 0) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64())})


def ours(root: Path) -> LocalNamespace:
    ns = backend.connect(str(root))
    assert isinstance(ns, LocalNamespace)
    return ns


def table_dir(ns: LocalNamespace, table_id: list[str]) -> Path:
    location = ns.describe_table(DescribeTableRequest(id=table_id)).location
    assert location and location.startswith("file://")
    return Path(location[len("file://") :])


def with_versions(ns: LocalNamespace, table_id: list[str], versions: int) -> None:
    ns.create_table(CreateTableRequest(id=table_id), to_ipc_stream(rows(3)))
    for v in range(1, versions):
        ns.insert_into_table({"id": table_id}, to_ipc_stream(rows(1, start=10 * v)))


def victim(tmp_path: Path) -> Path:
    """A folder outside the root with files older than any cleanup's grace period."""
    folder = tmp_path / "victim"
    for name in VICTIM_FILES:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)
        old = time.time() - 40 * 86400
        os.utime(path, (old, old))
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "root"


def test_cascade_refuses_a_table_registered_at_what_it_does_not_own(root: Path) -> None:
    ns = ours(root)
    for name in ("a", "b", "c"):
        ns.create_namespace(CreateNamespaceRequest(id=[name]))
    with_versions(ns, ["b", "keep"], 2)
    keep = table_dir(ns, ["b", "keep"])
    with_versions(ns, ["a", "own"], 1)
    # another process (pylance itself) registers what the console's RegisterTable refuses
    DirectoryNamespace(root=str(root)).register_table(
        RegisterTableRequest(id=["a", "alias"], location=keep.name)
    )
    DirectoryNamespace(root=str(root)).register_table(
        RegisterTableRequest(id=["c", "catalog"], location="__manifest")
    )
    before = tree_digest(root, exclude=("_console",))
    for namespace, says in (
        ("a", "a$alias: the table location '" + keep.name + "' is the directory of another table"),
        ("c", "c$catalog: the table location '__manifest' is inside the namespace's __manifest"),
    ):
        with pytest.raises(InvalidInputError) as refused:
            ns.drop_namespace(DropNamespaceRequest(id=[namespace], behavior="Cascade"))
        assert "refusing to drop" in str(refused.value) and says in str(refused.value)
        assert "Nothing was dropped" in str(refused.value)
    assert tree_digest(root, exclude=("_console",)) == before
    assert ns.open_dataset(["b", "keep"]).count_rows() == 4
    assert ns.list_tables(ListTablesRequest(id=["a"])).tables == ["alias", "own"]
    # the registration undone, the cascade drops the namespace and its own table's data
    ns.deregister_table({"id": ["a", "alias"]})
    own = table_dir(ns, ["a", "own"])
    ns.drop_namespace(DropNamespaceRequest(id=["a"], behavior="Cascade"))
    assert not own.exists() and keep.is_dir()
    assert ns.open_dataset(["b", "keep"]).count_rows() == 4


def test_recovery_leaves_what_a_forged_drop_intent_names(root: Path) -> None:
    ns = ours(root)
    ns.create_namespace(CreateNamespaceRequest(id=["b"]))
    with_versions(ns, ["b", "keep"], 1)
    keep = table_dir(ns, ["b", "keep"])
    mine = root / "my_notes"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    # a dropped table's directory that a crash left behind: recovery deletes that one
    left = root / "0badf00d_gone$t"
    (left / "_versions").mkdir(parents=True)
    pending = root / PENDING_DIR
    pending.mkdir(parents=True, exist_ok=True)
    paths = [str(keep), str(root / "__manifest"), str(mine), str(left)]
    intent = pending / f"{DROP_PREFIX}0000.json"
    intent.write_text(json.dumps({"object_ids": ["nothing$here"], "paths": paths}))
    before = tree_digest(root, exclude=("_console", left.name))

    reopened = ours(root)  # recovery runs on open

    assert not intent.exists() and not left.exists()
    assert tree_digest(root, exclude=("_console",)) == before
    assert reopened.open_dataset(["b", "keep"]).count_rows() == 3
    assert reopened.list_tables(ListTablesRequest(id=["b"])).tables == ["keep"]


@pytest.mark.parametrize("inside", ["_indices", "data", "_versions", "."])
def test_cleanup_and_version_deletes_never_follow_a_link_out_of_the_table(
    root: Path, tmp_path: Path, inside: str
) -> None:
    ns = ours(root)
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    with_versions(ns, ["a", "t"], 3)
    outside = victim(tmp_path)
    link_dir = table_dir(ns, ["a", "t"]) / inside
    link_dir.mkdir(exist_ok=True)  # a table without an index has no _indices yet
    (link_dir / "evil").symlink_to(outside, target_is_directory=True)
    before = tree_digest(root, exclude=("_console",))
    link = f"{inside}/evil" if inside != "." else "evil"
    attempts = {
        "cleanup_old_versions": lambda: ns.cleanup_old_versions(
            {"id": ["a", "t"], "versions": [1]}
        ),
        "cleanup by age": lambda: ns.cleanup_old_versions({"id": ["a", "t"], "older_than_days": 0}),
        "batch_delete_table_versions": lambda: ns.batch_delete_table_versions(
            {"id": ["a", "t"], "ranges": [{"start_version": 1, "end_version": 2}]}
        ),
        "batch commit": lambda: ns.batch_commit_tables(batch(op_delete(["a", "t"], (1, 2)))),
    }
    for name, attempt in attempts.items():
        with pytest.raises(InvalidInputError) as refused:
            attempt()
        message = str(refused.value)
        assert f"symbolic links leading outside it ({link})" in message, name
        assert "Remove the links, or deregister" in message, name
    assert tree_digest(root, exclude=("_console",)) == before
    assert sorted(p.relative_to(outside).as_posix() for p in outside.rglob("*.txt")) == sorted(
        VICTIM_FILES
    )
    assert [v["version"] for v in ns.open_dataset(["a", "t"]).versions()] == [1, 2, 3]


def test_a_location_linked_out_of_the_root_is_neither_deleted_nor_written(
    root: Path, tmp_path: Path
) -> None:
    ns = ours(root)
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    with_versions(ns, ["a", "t"], 3)
    elsewhere = tmp_path / "elsewhere.lance"
    table_dir(ns, ["a", "t"]).rename(elsewhere)
    ns.deregister_table({"id": ["a", "t"]})
    (root / "link.lance").symlink_to(elsewhere, target_is_directory=True)
    DirectoryNamespace(root=str(root)).register_table(
        RegisterTableRequest(id=["a", "linked"], location="link.lance")
    )
    before = tree_digest(elsewhere)
    attempts = (
        lambda: ns.batch_delete_table_versions(
            {"id": ["a", "linked"], "ranges": [{"start_version": 1, "end_version": 2}]}
        ),
        lambda: ns.batch_commit_tables(batch(op_delete(["a", "linked"], (1, 2)))),
        lambda: ns.cleanup_old_versions({"id": ["a", "linked"], "versions": [1]}),
        lambda: ns.drop_table({"id": ["a", "linked"]}),
    )
    for attempt in attempts:
        with pytest.raises(InvalidInputError, match="is outside the namespace root; deregister"):
            attempt()
    # nor written: rows, rows deleted, an index build, a tag
    writes = (
        lambda: ns.insert_into_table({"id": ["a", "linked"]}, to_ipc_stream(rows(1))),
        lambda: ns.delete_from_table({"id": ["a", "linked"], "predicate": "id = 1"}),
        lambda: ns.create_table_scalar_index(
            {"id": ["a", "linked"], "column": "id", "index_type": "BTREE"}
        ),
        lambda: ns.create_table_tag({"id": ["a", "linked"], "tag": "t", "version": 1}),
    )
    for write in writes:
        with pytest.raises(InvalidInputError, match="refusing to write to a\\$linked"):
            write()
    assert tree_digest(elsewhere) == before
    # what only changes the catalog still works: the registration can be undone
    ns.deregister_table({"id": ["a", "linked"]})
    assert tree_digest(elsewhere) == before


def test_overwrite_through_a_registration_at_another_tables_folder_is_refused(
    root: Path,
) -> None:
    ns = ours(root)
    ns.create_namespace(CreateNamespaceRequest(id=["b"]))
    with_versions(ns, ["b", "keep"], 1)
    DirectoryNamespace(root=str(root)).register_table(
        RegisterTableRequest(id=["b", "alias"], location=table_dir(ns, ["b", "keep"]).name)
    )
    with pytest.raises(InvalidInputError, match="refusing to overwrite the data of b\\$alias"):
        ns.create_table(
            CreateTableRequest(id=["b", "alias"], mode="overwrite"), to_ipc_stream(rows(1))
        )
    assert ns.open_dataset(["b", "keep"]).count_rows() == 3
    # a table's own overwrite is a new version of it, as before
    ns.create_table(CreateTableRequest(id=["b", "own"]), to_ipc_stream(rows(2)))
    ns.create_table(CreateTableRequest(id=["b", "own"], mode="overwrite"), to_ipc_stream(rows(5)))
    assert ns.open_dataset(["b", "own"]).count_rows() == 5


def new_tables_refused(ns: Any) -> None:
    """CreateTable of ``photos``, DeclareTable of ``notes`` and a batch's declare of ``music``
    are each refused for the folder (or prefix) someone else's files hold."""
    attempts = {
        "photos": lambda: ns.create_table(
            CreateTableRequest(id=["photos"]), to_ipc_stream(rows(1))
        ),
        "notes": lambda: ns.declare_table(DeclareTableRequest(id=["notes"])),
        "music": lambda: ns.batch_commit_tables(batch(op_declare(["music"]))),
    }
    for name, attempt in attempts.items():
        with pytest.raises(InvalidInputError) as refused:
            attempt()
        assert f"the folder '{name}.lance' already exists and holds files that are not a Lance" in (
            str(refused.value)
        )


def test_a_new_root_level_table_never_takes_a_folder_of_someone_elses_files(root: Path) -> None:
    ns = ours(root)
    for name in ("photos", "notes", "music"):
        (root / f"{name}.lance").mkdir(parents=True)
        (root / f"{name}.lance" / "mine.txt").write_text(name)
    before = tree_digest(root, exclude=("_console",))
    new_tables_refused(ns)
    assert tree_digest(root, exclude=("_console",)) == before
    # an empty folder, or the folder of a table the namespace declared, is taken as before
    (root / "fresh.lance").mkdir()
    ns.create_table(CreateTableRequest(id=["fresh"]), to_ipc_stream(rows(2)))
    ns.declare_table(DeclareTableRequest(id=["later"]))
    ns.create_table(CreateTableRequest(id=["later"], mode="overwrite"), to_ipc_stream(rows(1)))
    assert ns.open_dataset(["fresh"]).count_rows() == 2
    assert ns.open_dataset(["later"]).count_rows() == 1


def test_on_an_object_store_a_new_table_never_takes_a_prefix_of_someone_elses_objects(
    s3_root: Any,
) -> None:
    """moto's S3: a user's objects under ``<name>.lance/`` are not taken by CreateTable,
    DeclareTable or a batch's declare (a drop would then delete them); the bucket is unchanged.
    A prefix holding a table's objects, or none, is taken as before."""
    ns, bucket, s3 = s3_root.ns, s3_root.bucket, s3_root.server.client()
    for name in ("photos", "notes", "music"):
        s3.put_object(Bucket=bucket, Key=f"root/{name}.lance/mine/{name}.txt", Body=b"mine")
    before = s3_root.server.objects(bucket)
    new_tables_refused(ns)
    assert s3_root.server.objects(bucket) == before
    # a declared table's prefix (its marker) and a dataset's are a table's: taken as before
    ns.create_table(CreateTableRequest(id=["fresh"]), to_ipc_stream(rows(2)))
    ns.declare_table(DeclareTableRequest(id=["later"]))
    ns.create_table(CreateTableRequest(id=["later"], mode="overwrite"), to_ipc_stream(rows(1)))
    assert ns.open_dataset(["fresh"]).count_rows() == 2
    assert ns.open_dataset(["later"]).count_rows() == 1
    ns.drop_table({"id": ["fresh"]})
    ns.batch_commit_tables(batch(op_declare(["fresh"])))  # its prefix is empty again
    assert ns.describe_table(DescribeTableRequest(id=["fresh"])).location
    assert {k: v for k, v in s3_root.server.objects(bucket).items() if "/mine/" in k} == before


def test_on_an_object_store_a_registration_at_another_tables_prefix_changes_nothing(
    s3_root: Any,
) -> None:
    """moto's S3: version deletes (single and batched), cleanup, overwrite and drop of a table
    registered (by pylance) at another table's prefix are refused; the bucket is unchanged."""
    ns = s3_root.ns
    ns.create_namespace(CreateNamespaceRequest(id=["b"]))
    create_table(ns, ["b", "keep"], make_table(3))
    ns.insert_into_table({"id": ["b", "keep"]}, to_ipc_stream(make_table(1)))
    location = ns.describe_table(DescribeTableRequest(id=["b", "keep"])).location
    prefix = location.rstrip("/").rsplit("/", 1)[-1]
    ns._inner.register_table(RegisterTableRequest(id=["b", "alias"], location=prefix))
    before = s3_root.server.objects(s3_root.bucket)
    attempts = (
        lambda: ns.batch_delete_table_versions(
            {"id": ["b", "alias"], "ranges": [{"start_version": 1, "end_version": 2}]}
        ),
        lambda: ns.batch_commit_tables(batch(op_delete(["b", "alias"], (1, 2)))),
        lambda: ns.cleanup_old_versions({"id": ["b", "alias"], "versions": [1]}),
        lambda: ns.create_table(
            CreateTableRequest(id=["b", "alias"], mode="overwrite"), to_ipc_stream(rows(1))
        ),
        lambda: ns.drop_table({"id": ["b", "alias"]}),
    )
    for attempt in attempts:
        with pytest.raises(InvalidInputError, match="prefix of another table"):
            attempt()
    assert s3_root.server.objects(s3_root.bucket) == before
    assert ns.open_dataset(["b", "keep"]).count_rows() == 4


def test_a_registration_made_after_a_check_is_seen_by_the_next(root: Path) -> None:
    """The other tables' directories are read once per state of the catalog: a registration
    another process makes afterwards (a new catalog version) is judged by the next delete."""
    ns = ours(root)
    ns.create_namespace(CreateNamespaceRequest(id=["b"]))
    with_versions(ns, ["b", "keep"], 3)
    with_versions(ns, ["b", "other"], 2)
    ns.batch_delete_table_versions(  # reads the catalog's directories once
        {"id": ["b", "keep"], "ranges": [{"start_version": 1, "end_version": 2}]}
    )
    DirectoryNamespace(root=str(root)).register_table(
        RegisterTableRequest(id=["b", "alias"], location=table_dir(ns, ["b", "keep"]).name)
    )
    before = tree_digest(root, exclude=("_console",))
    with pytest.raises(InvalidInputError, match="is the directory of another table"):
        ns.batch_delete_table_versions(
            {"id": ["b", "keep"], "ranges": [{"start_version": 2, "end_version": 3}]}
        )
    with pytest.raises(InvalidInputError, match="is the directory of another table"):
        ns.drop_table({"id": ["b", "alias"]})
    assert tree_digest(root, exclude=("_console",)) == before
    # a table of its own is judged against the others, not against itself
    ns.batch_delete_table_versions(
        {"id": ["b", "other"], "ranges": [{"start_version": 1, "end_version": 2}]}
    )
    assert [v["version"] for v in ns.open_dataset(["b", "other"]).versions()] == [2]
