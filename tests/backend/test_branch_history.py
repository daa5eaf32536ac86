"""A branch's history: its change log, the row-level compare of two of its versions and of the
branch with its parent, and restore and tags acting on the branch; on the local backend (file
and object-store roots) and over REST, where the spec allows it.

Every expected figure is computed independently: each version read with lance directly
(``checkout_version((branch, version))``), rows matched by their key with pyarrow anti-joins
and a row-by-row compare in Python."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import lance
import lance_namespace as ln
import pyarrow as pa
import pytest
from lance_namespace.errors import (
    InvalidInputError,
    PermissionDeniedError,
    TableBranchNotFoundError,
    TableVersionNotFoundError,
    UnsupportedOperationError,
)

import backend
from backend import access, audit
from backend.gate import Actor, gate
from backend.services import branches
from backend.services import change_log as cl
from backend.services import restore as restoresv
from backend.services import row_changes as rc
from backend.services import tags as tagsv
from tests.support import create_table, describes_branches, table_location

TID = ["t"]


def rows(n: int, start: int = 0) -> pa.Table:
    return pa.table({"id": list(range(start, start + n)), "v": [f"r{i}" for i in range(n)]})


def by_key(old: pa.Table, new: pa.Table) -> dict[str, Any]:
    """Inserted and deleted ids by pyarrow anti-joins; updated ids with their changed columns
    by comparing each id's rows in Python."""
    inserted = new.join(old.select(["id"]), "id", join_type="left anti")["id"].to_pylist()
    deleted = old.join(new.select(["id"]), "id", join_type="left anti")["id"].to_pylist()
    before = {r["id"]: r for r in old.to_pylist()}
    common = [c for c in new.column_names if c in old.column_names and c != "id"]
    updated = {}
    for r in new.to_pylist():
        if r["id"] in before:
            diff = sorted(c for c in common if r[c] != before[r["id"]][c])
            if diff:
                updated[r["id"]] = diff
    return {"inserted": sorted(inserted), "deleted": sorted(deleted), "updated": updated}


def as_keys(changes: rc.RowChanges) -> dict[str, Any]:
    return {
        "inserted": sorted(changes.inserted["id"].to_pylist()),
        "deleted": sorted(changes.deleted["id"].to_pylist()),
        "updated": dict(
            zip(
                changes.updated["id"].to_pylist(),
                [sorted(c) for c in changes.updated[rc.CHANGED].to_pylist()],
                strict=True,
            )
        ),
    }


class History:
    """Table ``t``: main v1 (ids 0..5), v2 (append 6, 7); branch dev made from main v2 with
    v3 (append 100, 101), v4 (update id 3), v5 (delete id 0); then main v3 (update id 4),
    which dev must not show. Written with lance directly (the local backend's datasets carry
    the root's storage options; over REST the server's directory is at hand)."""

    def __init__(self, ns: Any, *, stable: bool = False, uri: str | None = None) -> None:
        self.ns = ns
        location = ns.declare_table(ln.DeclareTableRequest(id=TID)).location
        self.uri = uri or location
        options = getattr(ns, "storage_options", None) or None
        lance.write_dataset(
            rows(6), self.uri, enable_stable_row_ids=stable, storage_options=options
        )
        self.options = options
        self.main().insert(rows(2, 6))
        branches.create_branch(ns, TID, "dev")
        dev = self.at("dev")
        dev.insert(rows(2, 100))
        dev.update({"v": "'changed'"}, where="id = 3")
        dev.delete("id = 0")
        self.main().update({"v": "'main only'"}, where="id = 4")

    def main(self, version: int | None = None) -> lance.LanceDataset:
        return lance.dataset(self.uri, version=version, storage_options=self.options)

    def at(self, branch: str, version: int | None = None) -> lance.LanceDataset:
        return self.main().checkout_version((branch, version))

    def table(self, branch: str | None, version: int | None = None) -> pa.Table:
        ds = self.main(version) if branch is None else self.at(branch, version)
        return ds.to_table()


@pytest.fixture(params=["file", "s3"])
def local_ns(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """The local backend on a file root and on an object-store root (moto)."""
    if request.param == "file":
        return backend.connect(str(tmp_path / "root"))
    return request.getfixturevalue("s3_root").ns


# -- the change log of a branch -------------------------------------------------------------------
def test_a_branchs_change_log_shows_its_own_versions(local_ns: Any) -> None:
    h = History(local_ns)
    log = cl.change_log(local_ns, TID, "dev")
    own = [v["version"] for v in h.at("dev").versions()]
    assert log["version"].tolist() == own == [2, 3, 4, 5]
    assert (log.attrs["branch"], log.attrs["parent_branch"], log.attrs["parent_version"]) == (
        "dev",
        "main",
        2,
    )
    assert log.attrs["note"] is None
    got = log.set_index("version")
    # the branch's own transactions (main's v3 is an update, dev's v3 an append)
    assert got["lance_operation"].to_dict() == {2: "Clone", 3: "Append", 4: "Update", 5: "Delete"}
    assert got.loc[2, "operation"] == cl.BRANCH_CREATED
    assert got.loc[2, "note"] == "branch dev made from main at version 2"
    tables = {v: h.table("dev", v) for v in own}
    assert got["rows"].to_dict() == {v: t.num_rows for v, t in tables.items()}
    # the first version is the parent's, unchanged
    assert tables[2].sort_by("id").equals(h.table(None, 2).sort_by("id"))
    assert (got.loc[2, "rows_added"], got.loc[2, "rows_deleted"], got.loc[2, "rows_updated"]) == (
        0,
        0,
        0,
    )
    for v in (3, 4, 5):
        truth = by_key(tables[v - 1], tables[v])
        assert (got.loc[v, "rows_added"], got.loc[v, "rows_deleted"]) == (
            len(truth["inserted"]),
            len(truth["deleted"]),
        ), v
        assert got.loc[v, "rows_updated"] == len(truth["updated"]), v

    # main's change log is main's alone
    main_log = cl.change_log(local_ns, TID).set_index("version")
    assert main_log.index.tolist() == [1, 2, 3]
    assert main_log.loc[3, "lance_operation"] == "Update" and main_log.loc[3, "rows_updated"] == 1
    assert main_log.attrs["branch"] is None

    # a branch made from a branch: its first version is the parent branch's version
    branches.create_branch(local_ns, TID, "fix", from_branch="dev", from_version=4)
    h.at("fix").insert(rows(1, 200))
    fix = cl.change_log(local_ns, TID, "fix").set_index("version")
    assert fix.index.tolist() == [4, 5]
    assert fix.loc[4, "note"] == "branch fix made from dev at version 4"
    assert fix.loc[4, "rows"] == h.table("dev", 4).num_rows
    assert fix.loc[5, "rows_added"] == len(by_key(h.table("dev", 4), h.table("fix", 5))["inserted"])


def test_a_branchs_change_log_over_rest(rest_server: Any) -> None:
    ns = backend.connect(rest_server.url)
    h = History(ns, uri=str(rest_server.root / "t.lance"))
    log = cl.change_log(ns, TID, "dev")
    own = [v["version"] for v in h.at("dev").versions()]
    got = log.set_index("version")
    assert got.index.tolist() == own == [2, 3, 4, 5]
    # rows per version: CountTableRows of the branch (the server honours its branch)
    assert got["rows"].to_dict() == {v: h.at("dev", v).count_rows() for v in own}
    assert got.loc[2, "operation"] == cl.BRANCH_CREATED
    # DescribeTransaction has no branch: never main's operation of that number (main's v3
    # is an Update, dev's an Append)
    assert set(got["lance_operation"]) == {"?"}
    assert log.attrs["note"] == cl.REST_BRANCH_NOTE
    assert got["rows_added"].isna().all()


def test_a_branch_write_is_credited_on_the_branch_only(ns: Any, tmp_path: Path) -> None:
    create_table(ns, TID, rows(4))
    log = audit.AuditLog(tmp_path / "audit")
    admin = gate(ns, actor=Actor("ada@example.com", access.ADMIN), connection="lab", log=log)
    branches.create_branch(admin, TID, "dev")  # dev v1: by the console
    # pylance's REST server gives version times in steps of several milliseconds: the engine's
    # own commit comes later than that, as a person's would, so that each is told apart
    time.sleep(4 * cl.AUDIT_SLACK_MS / 1000)
    loc = str(table_location(ns, TID))
    lance.dataset(loc).checkout_version(("dev", None)).insert(rows(2, 10))  # dev v2: lance
    time.sleep(4 * cl.AUDIT_SLACK_MS / 1000)
    restoresv.restore_version(admin, TID, 1, branch="dev")  # dev v3: by the console
    dev = cl.change_log(admin, TID, "dev").set_index("version")
    assert dev.index.tolist() == [1, 2, 3]
    assert (dev.loc[3, "user"], dev.loc[3, "audit_operation"]) == (
        "ada@example.com",
        "restore_table",
    )
    assert (dev.loc[1, "user"], dev.loc[1, "audit_operation"]) == (
        "ada@example.com",
        "create_table_branch",
    )
    assert pd_isna(dev.loc[2, "user"])
    assert lance.dataset(loc).checkout_version(("dev", None)).count_rows() == 4
    main = cl.change_log(admin, TID)
    assert main["version"].tolist() == [1] and main["user"].isna().all()


def pd_isna(value: Any) -> bool:
    import pandas as pd

    return bool(pd.isna(value))


# -- row changes on a branch, and a branch against its parent -----------------------------------------
@pytest.mark.parametrize("stable", [True, False])
def test_branch_changes_against_pyarrow(local_ns: Any, stable: bool) -> None:
    h = History(local_ns, stable=stable)
    parent, latest = h.table(None, 2), h.table("dev")
    truth = by_key(parent, latest)
    assert truth == {"inserted": [100, 101], "deleted": [0], "updated": {3: ["v"]}}
    # main's later update (id 4) is main's, not the branch's
    assert 4 not in truth["updated"]
    keyed = rc.branch_changes(local_ns, TID, "dev", key="id")
    assert keyed.method == rc.KEY and as_keys(keyed) == truth
    assert (keyed.from_branch, keyed.from_version, keyed.to_branch, keyed.to_version) == (
        None,
        2,
        "dev",
        5,
    )
    assert keyed.span_text == "main v2 → dev v5"
    new = {r["id"]: r for r in latest.to_pylist()}
    old = {r["id"]: r for r in parent.to_pylist()}
    assert keyed.updated.drop_columns([rc.CHANGED]).to_pylist() == [new[3]]
    assert keyed.updated_before.to_pylist() == [old[3]]
    assert keyed.deleted.to_pylist() == [old[0]]
    if stable:
        delta = rc.branch_changes(local_ns, TID, "dev")
        assert delta.method == rc.DELTA and as_keys(delta) == truth
        assert delta.updated.drop_columns([rc.CHANGED]).to_pylist() == [new[3]]
    else:
        # pylance's delta across the branch point sees nothing without stable row ids
        trap = h.at("dev").delta(begin_version=2, end_version=5)
        assert trap.get_inserted_rows().read_all().num_rows == 0
        assert trap.get_updated_rows().read_all().num_rows == 0
        with pytest.raises(InvalidInputError, match="stable row ids"):
            rc.branch_changes(local_ns, TID, "dev")
    # two versions of the branch
    two = rc.row_changes(local_ns, TID, 3, 5, key="id", branch="dev")
    assert as_keys(two) == by_key(h.table("dev", 3), h.table("dev", 5))
    assert two.span_text == "v3 → v5 on branch dev"
    if stable:
        assert as_keys(rc.row_changes(local_ns, TID, 2, 5, branch="dev")) == truth


def test_a_branch_of_a_branch_and_an_idle_branch(tmp_path: Path) -> None:
    ns = backend.connect(str(tmp_path / "root"))
    h = History(ns, stable=True)
    branches.create_branch(ns, TID, "fix", from_branch="dev", from_version=4)
    h.at("fix").update({"v": "'fixed'"}, where="id = 1")
    truth = by_key(h.table("dev", 4), h.table("fix"))
    assert truth == {"inserted": [], "deleted": [], "updated": {1: ["v"]}}
    for key in (None, "id"):
        got = rc.branch_changes(ns, TID, "fix", key=key)
        assert as_keys(got) == truth and got.span_text == "dev v4 → fix v5"
    branches.create_branch(ns, TID, "idle")  # made from main's latest, never written
    for key in (None, "id"):
        got = rc.branch_changes(ns, TID, "idle", key=key)
        assert got.counts == {"inserted": 0, "updated": 0, "deleted": 0}
        assert by_key(h.table(None), h.table("idle")) == {
            "inserted": [],
            "deleted": [],
            "updated": {},
        }


def test_branch_compare_bad_inputs_change_nothing(tmp_path: Path) -> None:
    ns = backend.connect(str(tmp_path / "root"))
    h = History(ns)
    before = (h.main().version, h.at("dev").version)
    with pytest.raises(InvalidInputError, match="main is the table's default branch"):
        rc.branch_changes(ns, TID, "main", key="id")
    with pytest.raises(TableBranchNotFoundError, match="no branch 'nope' .its branches: dev"):
        rc.branch_changes(ns, TID, "nope", key="id")
    with pytest.raises(InvalidInputError, match="key column nope is not in version 2"):
        rc.branch_changes(ns, TID, "dev", key="nope")
    with pytest.raises(InvalidInputError, match="key columns repeat"):
        rc.branch_changes(ns, TID, "dev", key=["id", "id"])
    with pytest.raises(InvalidInputError, match="the key v is not unique in version 2:"):
        rc.branch_changes(ns, TID, "dev", key="v")
    with pytest.raises(InvalidInputError, match="max_rows"):
        rc.branch_changes(ns, TID, "dev", key="id", max_rows=3)
    with pytest.raises(InvalidInputError, match="max_rows must be 1 or more"):
        rc.branch_changes(ns, TID, "dev", key="id", max_rows=0)
    # versions of the branch: from the one it was made at
    with pytest.raises(
        TableVersionNotFoundError,
        match="branch dev of t has no version 1 .it has versions 2 to 5; it was made from "
        "main at version 2",
    ):
        rc.row_changes(ns, TID, 1, 5, key="id", branch="dev")
    with pytest.raises(TableVersionNotFoundError, match="has no version 9"):
        rc.row_changes(ns, TID, 2, 9, key="id", branch="dev")
    with pytest.raises(InvalidInputError, match="older"):
        rc.row_changes(ns, TID, 5, 3, key="id", branch="dev")
    with pytest.raises(TableBranchNotFoundError, match="no branch 'nope'"):
        cl.change_log(ns, TID, "nope")
    assert (h.main().version, h.at("dev").version) == before


def test_branch_compare_over_rest_is_by_key_and_refused_where_the_server_reads_main(
    rest_server: Any,
) -> None:
    """Over REST only a key compare is possible; pylance's server answers QueryTable from main
    whatever the branch, so the branch's rows cannot be read there: refused, never a compare
    of main's rows reported as the branch's."""
    ns = backend.connect(rest_server.url)
    History(ns, uri=str(rest_server.root / "t.lance"))
    with pytest.raises(InvalidInputError, match="over REST the rows of two versions can only"):
        rc.branch_changes(ns, TID, "dev")
    with pytest.raises(UnsupportedOperationError, match="answers query_table from main"):
        rc.branch_changes(ns, TID, "dev", key="id")
    with pytest.raises(UnsupportedOperationError, match="answers query_table from main"):
        rc.row_changes(ns, TID, 3, 5, key="id", branch="dev")
    # reads the server does answer from the branch go through
    dev = lance.dataset(str(rest_server.root / "t.lance")).checkout_version(("dev", None))
    count = ns.count_table_rows(ln.CountTableRowsRequest(id=TID, branch="dev"))
    assert count.count == dev.count_rows() != lance.dataset(str(rest_server.root / "t.lance"))
    with pytest.raises(UnsupportedOperationError, match="answers describe_table from main"):
        ns.describe_table(ln.DescribeTableRequest(id=TID, branch="dev"))


# -- restore and tags on a branch ----------------------------------------------------------------
def test_restore_on_a_branch_on_both_backends(ns: Any) -> None:
    create_table(ns, TID, rows(4))
    branches.create_branch(ns, TID, "dev")
    loc = str(table_location(ns, TID))
    lance.dataset(loc).checkout_version(("dev", None)).insert(rows(3, 10))  # dev v2
    main_before = lance.dataset(loc).to_table()
    restoresv.restore_version(ns, TID, 1, branch="dev")
    dev = lance.dataset(loc).checkout_version(("dev", None))
    assert dev.version == 3
    assert (
        dev.to_table()
        .sort_by("id")
        .equals(lance.dataset(loc).checkout_version(("dev", 1)).to_table().sort_by("id"))
    )
    main = lance.dataset(loc)
    assert main.version == 1 and main.to_table().equals(main_before)
    with pytest.raises(InvalidInputError, match="already the latest"):
        restoresv.restore_version(ns, TID, 3, branch="dev")
    with pytest.raises(TableVersionNotFoundError, match="not one of the branch's"):
        restoresv.restore_version(ns, TID, 7, branch="dev")
    with pytest.raises(TableBranchNotFoundError, match="no branch 'nope'"):
        restoresv.restore_version(ns, TID, 1, branch="nope")
    assert lance.dataset(loc).checkout_version(("dev", None)).version == 3


def test_tags_on_a_branch_locally(tmp_path: Path) -> None:
    ns = backend.connect(str(tmp_path / "root"))
    h = History(ns)
    tagsv.create_tag(ns, TID, "good", 4, branch="dev")
    tagsv.create_tag(ns, TID, "base", 2)
    own = h.main().tags.list()
    assert (own["good"]["branch"], own["good"]["version"]) == ("dev", 4)
    assert (own["base"]["branch"], own["base"]["version"]) == (None, 2)
    listed = tagsv.list_tags(ns, TID).set_index("tag")
    assert listed.loc["good", "branch"] == "dev" and listed.loc["base", "branch"] == "main"
    assert tagsv.tagged_versions(tagsv.list_tags(ns, TID), "dev") == {4: ["good"]}
    assert tagsv.tagged_versions(tagsv.list_tags(ns, TID), "main") == {2: ["base"]}
    # moved on the branch (pylance's UpdateTableTag would look for main's version 5)
    tagsv.move_tag(ns, TID, "good", 5, branch="dev")
    moved = h.main().tags.list()["good"]
    assert (moved["branch"], moved["version"]) == ("dev", 5)
    assert h.main().checkout_version("good").to_table().equals(h.table("dev", 5))
    # bad input: nothing tagged
    with pytest.raises(TableVersionNotFoundError, match="version 1 of branch dev of t"):
        tagsv.create_tag(ns, TID, "early", 1, branch="dev")
    with pytest.raises(TableBranchNotFoundError, match="no branch 'nope'"):
        tagsv.create_tag(ns, TID, "x", 2, branch="nope")
    assert set(h.main().tags.list()) == {"good", "base"}


def test_a_rest_server_that_tags_main_instead_is_refused_or_reported(rest_server: Any) -> None:
    """pylance's REST adapter ignores ``branch`` on CreateTableTag: the tag would land on
    main's version of that number. It also describes a branch that does not exist as main, so
    the client refuses the tag before sending it. Behind a proxy whose DescribeTable honours
    branches, the tag is sent: the client says where it landed, as an error, and refuses the
    next one before sending it."""
    ns = backend.connect(rest_server.url)
    h = History(ns, uri=str(rest_server.root / "t.lance"))
    with pytest.raises(UnsupportedOperationError, match="nothing was sent"):
        tagsv.create_tag(ns, TID, "good", 3, branch="dev")
    assert h.main().tags.list() == {}
    proxy = describes_branches(rest_server.url, {"dev"})
    try:
        ns = backend.connect(proxy.url)
        with pytest.raises(UnsupportedOperationError) as err:
            tagsv.create_tag(ns, TID, "good", 3, branch="dev")
        assert "tag good points at version 3 of main, not of branch dev" in str(err.value)
        tag = h.main().tags.list()["good"]
        assert (tag["branch"], tag["version"]) == (None, 3)  # what the message says happened
        with pytest.raises(UnsupportedOperationError, match="nothing was sent"):
            tagsv.create_tag(ns, TID, "again", 3, branch="dev")
        assert set(h.main().tags.list()) == {"good"}
        # a version only the branch has: the server looks for it on main and refuses it
        fresh = backend.connect(proxy.url)
        late = max(v["version"] for v in h.at("dev").versions())
        assert late > h.main().version
        with pytest.raises(UnsupportedOperationError) as err:
            tagsv.create_tag(fresh, TID, "late", late, branch="dev")
        assert f"branch dev has version {late}, but the server looked for it on main" in (
            str(err.value)
        )
        assert set(h.main().tags.list()) == {"good"}
    finally:
        proxy.stop()
    tagsv.create_tag(backend.connect(rest_server.url), TID, "main-tag", 2)  # main: as before
    assert h.main().tags.list()["main-tag"]["version"] == 2


# -- the gate ------------------------------------------------------------------------------------
def test_branch_reads_and_writes_through_the_gate(tmp_path: Path) -> None:
    ns = backend.connect(str(tmp_path / "root"))
    h = History(ns)
    log = audit.AuditLog(tmp_path / "audit")
    viewer = gate(ns, actor=Actor("vic@example.com", access.VIEWER), log=log)
    assert as_keys(rc.branch_changes(viewer, TID, "dev", key="id")) == by_key(
        h.table(None, 2), h.table("dev")
    )
    assert cl.change_log(viewer, TID, "dev")["version"].tolist() == [2, 3, 4, 5]
    with pytest.raises(PermissionDeniedError):
        restoresv.restore_version(viewer, TID, 3, branch="dev")
    with pytest.raises(PermissionDeniedError):
        tagsv.create_tag(viewer, TID, "x", 3, branch="dev")
    read_only = gate(
        ns, actor=Actor("ada@example.com", access.ADMIN), read_only="read-only launch", log=log
    )
    with pytest.raises(PermissionDeniedError, match="read-only"):
        restoresv.restore_version(read_only, TID, 3, branch="dev")
    assert h.at("dev").version == 5 and h.main().tags.list() == {}
    refused = [e for e in log.entries() if e.outcome != audit.OK]
    assert {e.operation for e in refused} == {"restore_table", "create_table_tag"}
    assert access.required_role("restore_table") == access.EDITOR
    assert access.required_role("update_table_tag") == access.EDITOR
