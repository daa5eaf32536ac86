"""Branches on both backends: list, create (from main, a tag, another branch at a version),
delete (refused while history refers to the branch); writes and reads on a branch.

Each expected figure is computed independently: rows with pyarrow, versions and branches with
lance directly (``LanceDataset.branches``, ``checkout_version((branch, None))``)."""

from __future__ import annotations

from pathlib import Path

import lance
import lance_namespace as ln
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from lance.namespace import DirectoryNamespace
from lance_namespace.errors import (
    InvalidInputError,
    TableBranchAlreadyExistsError,
    TableBranchNotFoundError,
    TableVersionNotFoundError,
    UnsupportedOperationError,
)

from backend import access
from backend.services import branches
from tests.support import (
    append_rows,
    create_table,
    describes_branches,
    ipc_stream_bytes,
    make_table,
    table_location,
)

TID = ["t"]


def _main(ns: ln.LanceNamespace) -> lance.LanceDataset:
    return lance.dataset(str(table_location(ns, TID)))


def _branch(ns: ln.LanceNamespace, name: str) -> lance.LanceDataset:
    return _main(ns).checkout_version((name, None))


def _sorted(table: pa.Table) -> pa.Table:
    return table.sort_by("id")


@pytest.fixture
def two_versions(ns: ln.LanceNamespace) -> ln.LanceNamespace:
    """Table ``t``: version 1 with ids 0..2, version 2 with ids 0..5 (main)."""
    create_table(ns, TID, make_table(3))
    assert append_rows(ns, TID, make_table(3, start=3)) == 2
    return ns


def test_create_list_delete_on_both_backends(two_versions: ln.LanceNamespace) -> None:
    ns = two_versions
    dev = branches.create_branch(ns, TID, "dev")
    assert (dev["branch"], dev["parent_branch"], dev["parent_version"]) == ("dev", "main", 2)
    old = branches.create_branch(ns, TID, "old", from_version=1)
    assert (old["parent_branch"], old["parent_version"]) == ("main", 1)
    # a branch's versions start at the version it was made from (dev: 2)
    assert branches.list_branch_versions(ns, TID, "dev")["version"].tolist() == [2]
    child = branches.create_branch(ns, TID, "child", from_branch="dev", from_version=2)
    assert (child["parent_branch"], child["parent_version"]) == ("dev", 2)

    frame = branches.list_branches(ns, TID)
    assert list(frame.columns) == branches.BRANCH_COLUMNS
    lance_view = _main(ns).branches.list()  # lance's own answer
    assert set(frame["branch"]) == set(lance_view) == {"dev", "old", "child"}
    for row in frame.itertuples():
        own = lance_view[row.branch]
        assert row.parent_version == own["parent_version"]
        assert row.parent_branch == (own["parent_branch"] or "main")
        assert int(row.created.timestamp()) == own["create_at"]
    assert branches.branch_names(ns, TID) == ["main", "child", "dev", "old"]

    # each branch holds the rows of the version it was made from
    assert _branch(ns, "old").count_rows() == 3
    assert _branch(ns, "dev").count_rows() == 6
    assert _sorted(_branch(ns, "old").to_table()).equals(_sorted(make_table(3)))

    with pytest.raises(InvalidInputError, match="branch child was made from dev at version 2"):
        branches.delete_branch(ns, TID, "dev")
    assert set(_main(ns).branches.list()) == {"dev", "old", "child"}
    branches.delete_branch(ns, TID, "child")
    branches.delete_branch(ns, TID, "dev")
    assert (
        set(branches.list_branches(ns, TID)["branch"]) == {"old"} == set(_main(ns).branches.list())
    )
    assert _main(ns).version == 2  # main never moved


def test_create_from_a_tag(two_versions: ln.LanceNamespace) -> None:
    ns = two_versions
    ns.create_table_tag(ln.CreateTableTagRequest(id=TID, tag="first", version=1))
    made = branches.create_branch(ns, TID, "fromtag", from_tag="first")
    assert (made["parent_branch"], made["parent_version"]) == ("main", 1)
    assert _sorted(_branch(ns, "fromtag").to_table()).equals(_sorted(make_table(3)))
    with pytest.raises(InvalidInputError, match="not both"):
        branches.create_branch(ns, TID, "x", from_version=1, from_tag="first")
    with pytest.raises(InvalidInputError, match="tag first is on main, not on fromtag"):
        branches.create_branch(ns, TID, "x", from_branch="fromtag", from_tag="first")
    assert set(_main(ns).branches.list()) == {"fromtag"}


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"name": "main"}, InvalidInputError, "default branch"),
        ({"name": "a b"}, InvalidInputError, "branch name"),
        ({"name": ""}, InvalidInputError, "branch"),
        ({"name": "dev"}, TableBranchAlreadyExistsError, "already has a branch dev"),
        ({"name": "x", "from_branch": "nope"}, TableBranchNotFoundError, "no branch 'nope'"),
        (
            {"name": "x", "from_version": 99},
            TableVersionNotFoundError,
            "main of t has no version 99",
        ),
        ({"name": "x", "from_version": 0}, InvalidInputError, "1 or more"),
        (
            {"name": "x", "from_branch": "dev", "from_version": 2},
            TableVersionNotFoundError,
            "dev of t",
        ),
    ],
)
def test_bad_creates_change_nothing(
    two_versions: ln.LanceNamespace, kwargs: dict, error: type, message: str
) -> None:
    ns = two_versions
    branches.create_branch(ns, TID, "dev", from_version=1)
    before = _main(ns).branches.list()
    with pytest.raises(error, match=message):
        branches.create_branch(ns, TID, **kwargs)
    assert _main(ns).branches.list() == before


def test_bad_deletes_change_nothing(two_versions: ln.LanceNamespace) -> None:
    ns = two_versions
    branches.create_branch(ns, TID, "dev")
    with pytest.raises(InvalidInputError, match="default branch"):
        branches.delete_branch(ns, TID, "main")
    with pytest.raises(TableBranchNotFoundError, match="no branch nope"):
        branches.delete_branch(ns, TID, "nope")
    assert set(_main(ns).branches.list()) == {"dev"}


def test_a_tag_on_a_branch_blocks_its_delete_locally(tmp_path: Path) -> None:
    import backend

    ns = backend.connect(str(tmp_path))
    create_table(ns, TID, make_table(3))
    branches.create_branch(ns, TID, "dev")
    ns.insert_into_table(
        ln.InsertIntoTableRequest(id=TID, branch="dev"), ipc_stream_bytes(make_table(2, start=3))
    )
    ns.create_table_tag(ln.CreateTableTagRequest(id=TID, tag="ondev", branch="dev", version=2))
    tag = _main(ns).tags.list()["ondev"]  # lance: the tag is on the branch, not on main
    assert (tag["branch"], tag["version"]) == ("dev", 2)
    with pytest.raises(InvalidInputError, match="tag ondev points at version 2 of dev"):
        branches.delete_branch(ns, TID, "dev")
    assert set(_main(ns).branches.list()) == {"dev"}
    made = branches.create_branch(ns, TID, "again", from_tag="ondev")
    assert (made["parent_branch"], made["parent_version"]) == ("dev", 2)
    assert _branch(ns, "again").count_rows() == 5


def test_directory_namespace_puts_branch_inserts_on_main(tmp_path: Path) -> None:
    """The trap the local backend works around: pylance 14's DirectoryNamespace (also behind
    its REST adapter) ignores ``branch`` on InsertIntoTable and reports success."""
    raw = DirectoryNamespace(root=str(tmp_path))
    raw.create_table(ln.CreateTableRequest(id=TID), ipc_stream_bytes(make_table(3)))
    raw.create_table_branch(ln.CreateTableBranchRequest(id=TID, name="dev"))
    raw.insert_into_table(
        ln.InsertIntoTableRequest(id=TID, branch="dev"), ipc_stream_bytes(make_table(1, start=3))
    )
    main = lance.dataset(str(tmp_path / "t.lance"))
    assert (main.version, main.count_rows()) == (2, 4)  # landed on main
    assert main.checkout_version(("dev", None)).count_rows() == 3  # the branch never got it


def _local_with_dev(tmp_path: Path) -> ln.LanceNamespace:
    import backend

    ns = backend.connect(str(tmp_path))
    create_table(ns, TID, make_table(6))
    branches.create_branch(ns, TID, "dev")
    return ns


def test_local_insert_goes_to_the_branch(tmp_path: Path) -> None:
    ns = _local_with_dev(tmp_path)
    main_before = _main(ns).to_table()
    extra = make_table(4, start=100)
    resp = ns.insert_into_table(
        ln.InsertIntoTableRequest(id=TID, branch="dev"), ipc_stream_bytes(extra)
    )
    main = _main(ns)
    assert main.version == 1 and main.to_table().equals(main_before)
    dev = _branch(ns, "dev")
    assert (resp.num_inserted_rows, resp.version) == (4, dev.version) == (4, 2)
    assert _sorted(dev.to_table()).equals(_sorted(pa.concat_tables([main_before, extra])))


def test_local_row_and_schema_writes_go_to_the_branch(tmp_path: Path) -> None:
    ns = _local_with_dev(tmp_path)
    base = _main(ns).to_table()
    ns.update_table(
        ln.UpdateTableRequest(id=TID, branch="dev", predicate="id < 2", updates=[["cat", "'u'"]])
    )
    ns.delete_from_table(ln.DeleteFromTableRequest(id=TID, branch="dev", predicate="id = 5"))
    upsert = pa.table(
        {
            "id": pa.array([4, 50], pa.int64()),
            "cat": pa.array(["m", "n"]),
            "text": pa.array(["merged", "new"]),
        }
    )
    merged = ns.merge_insert_into_table(
        ln.MergeInsertIntoTableRequest(
            id=TID, branch="dev", on=["id"], when_matched_update_all=True,
            when_not_matched_insert_all=True,
        ),
        ipc_stream_bytes(upsert),
    )  # fmt: skip
    assert (merged.num_updated_rows, merged.num_inserted_rows) == (1, 1)
    ns.alter_table_add_columns(
        ln.AlterTableAddColumnsRequest(
            id=TID, branch="dev", new_columns=[{"name": "twice", "expression": "id * 2"}]
        )
    )
    ns.alter_table_drop_columns(
        ln.AlterTableDropColumnsRequest(id=TID, branch="dev", columns=["text"])
    )

    # the same changes computed with pyarrow
    cat = pc.if_else(pc.less(base["id"], 2), "u", base["cat"])
    expected = base.set_column(1, "cat", cat).filter(pc.not_equal(base["id"], 5))
    expected = expected.filter(pc.not_equal(expected["id"], 4))
    expected = pa.concat_tables([expected, upsert.select(expected.column_names)])
    expected = expected.drop_columns(["text"])
    expected = expected.append_column("twice", pc.multiply(expected["id"], 2))

    dev = _branch(ns, "dev")
    assert _sorted(dev.to_table()).equals(_sorted(expected))
    assert dev.version == 6
    main = _main(ns)
    assert main.version == 1 and main.to_table().equals(base)


def test_local_reads_on_a_branch(tmp_path: Path) -> None:
    ns = _local_with_dev(tmp_path)
    ns.insert_into_table(
        ln.InsertIntoTableRequest(id=TID, branch="dev"), ipc_stream_bytes(make_table(2, start=6))
    )
    ns.alter_table_add_columns(
        ln.AlterTableAddColumnsRequest(
            id=TID, branch="dev", new_columns=[{"name": "twice", "expression": "id * 2"}]
        )
    )
    dev = _branch(ns, "dev")
    desc = ns.describe_table(
        ln.DescribeTableRequest(id=TID, branch="dev", load_detailed_metadata=True)
    )
    assert desc.version == dev.version == 3
    assert [f.name for f in desc.var_schema.fields] == dev.schema.names
    assert desc.metadata["total_rows"] == "8"
    main_desc = ln.DescribeTableRequest(id=TID, load_detailed_metadata=True)
    assert ns.describe_table(main_desc).version == 1
    count = ns.count_table_rows(ln.CountTableRowsRequest(id=TID, branch="dev", predicate="id > 4"))
    assert count.count == dev.count_rows("id > 4") == 3
    query = ln.QueryTableRequest.from_dict(
        {"id": TID, "branch": "dev", "k": 100, "vector": {}, "filter": "id >= 5"}
    )
    got = ns.query_table_arrow(query)
    assert _sorted(got).equals(_sorted(dev.to_table(filter="id >= 5")))
    old = ns.describe_table(ln.DescribeTableRequest(id=TID, branch="dev", version=1))
    assert old.version == 1
    listed = branches.list_branch_versions(ns, TID, "dev")
    assert listed["version"].tolist() == [v["version"] for v in reversed(dev.versions())]


def test_local_refuses_branch_writes_it_cannot_do(tmp_path: Path) -> None:
    ns = _local_with_dev(tmp_path)
    with pytest.raises(UnsupportedOperationError, match="branch"):
        ns.alter_table_alter_columns(
            ln.AlterTableAlterColumnsRequest(
                id=TID, branch="dev", alterations=[{"path": "id", "data_type": {"type": "int32"}}]
            )
        )
    assert (_main(ns).version, _branch(ns, "dev").version) == (1, 1)
    assert _main(ns).describe_indices() == []
    with pytest.raises(TableBranchNotFoundError, match="no branch 'nope'"):
        ns.insert_into_table(
            ln.InsertIntoTableRequest(id=TID, branch="nope"), ipc_stream_bytes(make_table(1))
        )
    assert _main(ns).version == 1


def test_restore_on_a_branch_leaves_main(two_versions: ln.LanceNamespace) -> None:
    ns = two_versions
    branches.create_branch(ns, TID, "dev", from_version=1)  # 3 rows, at version 1
    ns.restore_table(ln.RestoreTableRequest(id=TID, branch="dev", version=1))
    dev = _branch(ns, "dev")
    assert (dev.version, dev.count_rows()) == (2, 3)
    assert (_main(ns).version, _main(ns).count_rows()) == (2, 6)


def test_rest_refuses_a_branch_write_its_server_would_apply_to_main(rest_server) -> None:
    """pylance's REST adapter describes a branch that does not exist as main, and applies a
    branch insert to main: the client learns the first with one DescribeTable and refuses the
    write before sending it, without a server profile."""
    import backend

    ns = backend.connect(rest_server.url)
    create_table(ns, TID, make_table(3))
    branches.create_branch(ns, TID, "dev")
    for _ in range(2):  # learnt once, refused each time
        with pytest.raises(UnsupportedOperationError) as err:
            ns.insert_into_table(
                ln.InsertIntoTableRequest(id=TID, branch="dev"),
                ipc_stream_bytes(make_table(1, start=3)),
            )
        text = str(err.value)
        assert "ignores the branch of DescribeTable" in text and "nothing was sent" in text
    main = lance.dataset(str(rest_server.root / "t.lance"))
    assert (main.version, main.count_rows()) == (1, 3)
    assert main.checkout_version(("dev", None)).count_rows() == 3
    with pytest.raises(TableBranchNotFoundError, match="no branch 'nope'"):  # said first
        ns.insert_into_table(
            ln.InsertIntoTableRequest(id=TID, branch="nope"), ipc_stream_bytes(make_table(1))
        )
    # a write to main is not affected
    ns.insert_into_table(
        ln.InsertIntoTableRequest(id=TID), ipc_stream_bytes(make_table(1, start=5))
    )
    assert lance.dataset(str(rest_server.root / "t.lance")).count_rows() == 4


def test_rest_reports_a_branch_write_that_landed_on_main(rest_server, tmp_path: Path) -> None:
    """A server whose DescribeTable honours branches but whose insert does not (pylance's
    behind a proxy that honours the describe): the write is sent, and the client finds main
    moved, says so as an error, and refuses the next one before sending it."""
    import backend

    create_table(backend.connect(rest_server.url), TID, make_table(3))
    branches.create_branch(backend.connect(rest_server.url), TID, "dev")
    proxy = describes_branches(rest_server.url, {"dev"})
    try:
        ns = backend.connect(proxy.url)
        with pytest.raises(UnsupportedOperationError) as err:
            ns.insert_into_table(
                ln.InsertIntoTableRequest(id=TID, branch="dev"),
                ipc_stream_bytes(make_table(1, start=3)),
            )
        text = str(err.value)
        assert "applied the write to main" in text and "from version 1 to 2" in text
        main = lance.dataset(str(rest_server.root / "t.lance"))
        assert (main.version, main.count_rows()) == (2, 4)  # what the message says happened
        assert main.checkout_version(("dev", None)).count_rows() == 3

        with pytest.raises(UnsupportedOperationError, match="nothing was sent"):
            ns.insert_into_table(
                ln.InsertIntoTableRequest(id=TID, branch="dev"),
                ipc_stream_bytes(make_table(1, start=4)),
            )
        assert lance.dataset(str(rest_server.root / "t.lance")).version == 2
    finally:
        proxy.stop()


def test_branch_operations_roles() -> None:
    assert access.required_role("list_table_branches") == access.VIEWER
    assert access.required_role("create_table_branch") == access.EDITOR
    assert access.required_role("delete_table_branch") == access.ADMIN


def test_rest_with_the_lance_dir_profile_refuses_a_branch_write_before_sending(
    rest_server, tmp_path: Path
) -> None:
    """A connection that names its server (``server_profile="lance-dir"``: pylance's REST
    adapter, which applies a branch write to main) never sends one: main is not changed even
    once, and a write to main still goes through."""
    import backend

    ns = backend.connect(rest_server.url, server_profile="lance-dir")
    create_table(ns, TID, make_table(3))
    branches.create_branch(ns, TID, "dev")
    with pytest.raises(
        UnsupportedOperationError, match="server profile \\(lance-dir\\).*nothing was sent"
    ):
        ns.insert_into_table(
            ln.InsertIntoTableRequest(id=TID, branch="dev"),
            ipc_stream_bytes(make_table(1, start=3)),
        )
    main = lance.dataset(str(rest_server.root / "t.lance"))
    assert (main.version, main.count_rows()) == (1, 3)
    assert main.checkout_version(("dev", None)).count_rows() == 3
    ns.insert_into_table(
        ln.InsertIntoTableRequest(id=TID), ipc_stream_bytes(make_table(1, start=5))
    )
    assert lance.dataset(str(rest_server.root / "t.lance")).count_rows() == 4
    # RestoreTable is the branch write pylance applies to the branch: it is sent
    ns.restore_table(ln.RestoreTableRequest(id=TID, branch="dev", version=1))
    main = lance.dataset(str(rest_server.root / "t.lance"))
    dev = main.checkout_version(("dev", None))
    assert (main.version, main.count_rows()) == (2, 4) and (dev.version, dev.count_rows()) == (2, 3)
