"""Deleting rows by a filter (``backend.services.rows``) on both backends: the preview's count
against pyarrow's count of the same rows, one new version holding exactly the other rows,
refusals (empty filter, a count that moved, roles) that change nothing, and the audit entry."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from lance_namespace import CreateNamespaceRequest
from lance_namespace.errors import (
    ConcurrentModificationError,
    InvalidInputError,
    PermissionDeniedError,
)

from backend import access, audit
from backend.gate import Actor, gate
from backend.services import rows
from backend.services.search.query import read_rows
from backend.spec import catalog_views
from tests.support import append_rows, create_table, make_table, tree_digest

TID = ["a", "t"]
FILTER = "cat = 'c1' OR id >= 25"


def matching(table: pa.Table) -> pa.Array:
    """The rows FILTER matches, by pyarrow (independent of lance's SQL)."""
    return pc.or_(pc.equal(table["cat"], "c1"), pc.greater_equal(table["id"], 25))


@pytest.fixture
def table(ns) -> pa.Table:
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    data = make_table(30)
    create_table(ns, TID, data)
    return data


def expected_count(table: pa.Table) -> int:
    return int(pc.sum(matching(table).cast(pa.int64())).as_py())


def root_of(tmp_path: Path, backend_kind: str) -> Path:
    return tmp_path / ("local-root" if backend_kind == "local" else "rest-root")


def all_ids(ns) -> list[int]:
    return sorted(read_rows(ns, TID, limit=1000)["id"].to_pylist())


def test_preview_counts_what_pyarrow_counts(ns, table: pa.Table) -> None:
    expected = pc.sum(matching(table).cast(pa.int64())).as_py()
    assert 0 < expected < table.num_rows
    preview = rows.preview_delete(ns, TID, FILTER, sample=4)
    assert preview.count == expected
    assert len(preview.sample) == 4
    count, sample = preview
    assert count == preview.count and sample is preview.sample
    allowed = set(table.filter(matching(table))["id"].to_pylist())
    assert set(preview.sample["id"]) <= allowed


def test_delete_makes_one_version_with_the_other_rows(ns, table: pa.Table) -> None:
    before = catalog_views.latest_version(ns, TID)
    preview = rows.preview_delete(ns, TID, FILTER)
    done = rows.delete_rows(ns, TID, FILTER, expected_count=preview.count)
    after = catalog_views.latest_version(ns, TID)
    assert after == before + 1 == done.version
    assert done.deleted == preview.count
    kept = table.filter(pc.invert(matching(table)))["id"].to_pylist()
    assert all_ids(ns) == sorted(kept)
    assert len(kept) == table.num_rows - preview.count
    # the previous version still holds every row (a new version, nothing rewritten)
    old = read_rows(ns, TID, limit=1000, version=before)
    assert sorted(old["id"].to_pylist()) == list(range(30))


@pytest.mark.parametrize("empty", ["", "   ", None])
def test_empty_filter_is_refused_and_nothing_changes(
    ns, table: pa.Table, empty, tmp_path: Path, backend_kind: str
) -> None:
    root = root_of(tmp_path, backend_kind)
    before = tree_digest(root)
    with pytest.raises(InvalidInputError, match="filter is required"):
        rows.preview_delete(ns, TID, empty)
    with pytest.raises(InvalidInputError, match="filter is required"):
        rows.delete_rows(ns, TID, empty)
    assert tree_digest(root) == before
    assert all_ids(ns) == list(range(30))


def test_a_count_that_moved_is_refused(ns, table: pa.Table) -> None:
    preview = rows.preview_delete(ns, TID, FILTER)
    append_rows(ns, TID, make_table(3, start=30))  # 30, 31, 32 match id >= 25
    version = catalog_views.latest_version(ns, TID)
    with pytest.raises(ConcurrentModificationError, match="nothing was deleted"):
        rows.delete_rows(ns, TID, FILTER, expected_count=preview.count)
    assert catalog_views.latest_version(ns, TID) == version
    assert all_ids(ns) == list(range(33))


def test_no_match_writes_nothing(ns, table: pa.Table) -> None:
    version = catalog_views.latest_version(ns, TID)
    assert rows.preview_delete(ns, TID, "id > 1000").count == 0
    with pytest.raises(InvalidInputError, match="nothing to delete"):
        rows.delete_rows(ns, TID, "id > 1000")
    assert catalog_views.latest_version(ns, TID) == version


def test_a_bad_filter_says_why(ns, table: pa.Table) -> None:
    with pytest.raises(InvalidInputError) as err:
        rows.delete_rows(ns, TID, "nosuch >")
    assert "nosuch" in str(err.value)
    assert all_ids(ns) == list(range(30))


@pytest.mark.parametrize("role", [access.VIEWER, access.EDITOR])
def test_viewer_and_editor_are_refused(
    ns, table: pa.Table, role: str, tmp_path: Path, backend_kind: str
) -> None:
    root = root_of(tmp_path, backend_kind)
    log = audit.AuditLog(tmp_path / "audit")
    gated = gate(ns, actor=Actor(f"{role}@example.com", role), connection="lab", log=log)
    assert rows.preview_delete(gated, TID, FILTER).count == expected_count(
        table
    )  # reading is allowed
    before = tree_digest(root)
    with pytest.raises(PermissionDeniedError, match=role):
        rows.delete_rows(gated, TID, FILTER, expected_count=expected_count(table))
    assert tree_digest(root) == before
    assert all_ids(ns) == list(range(30))
    [entry] = log.entries()
    assert (entry.operation, entry.outcome) == ("delete_from_table", audit.REFUSED)
    assert entry.error_class == "PermissionDeniedError" and entry.role == role


def test_admin_deletes_and_is_audited(ns, table: pa.Table, tmp_path: Path) -> None:
    log = audit.AuditLog(tmp_path / "audit")
    admin = gate(ns, actor=Actor("ada@example.com", access.ADMIN), connection="lab", log=log)
    count = expected_count(table)
    done = rows.delete_rows(admin, TID, FILTER, expected_count=count)
    assert done.deleted == count
    assert len(all_ids(ns)) == table.num_rows - count
    [entry] = log.entries()
    assert (entry.operation, entry.outcome, entry.user) == (
        "delete_from_table",
        audit.OK,
        "ada@example.com",
    )
    assert entry.ids == TID
    assert access.required_role(rows.OPERATION) == access.ADMIN


def test_a_filter_the_rules_refuse_is_recorded_as_refused(
    ns, table: pa.Table, tmp_path: Path
) -> None:
    """An empty filter is refused before anything is read or written: an audit entry with
    outcome "refused" and the reason, for an admin too."""
    log = audit.AuditLog(tmp_path / "audit")
    admin = gate(ns, actor=Actor("ada@example.com", access.ADMIN), connection="lab", log=log)
    with pytest.raises(InvalidInputError) as err:
        rows.delete_rows(admin, TID, "   ")
    assert all_ids(ns) == list(range(30))
    [entry] = log.entries()
    assert (entry.operation, entry.outcome, entry.role) == (
        "delete_from_table", audit.REFUSED, "admin"
    )  # fmt: skip
    assert entry.error_message == str(err.value) and "filter is required" in str(err.value)
    assert entry.ids == list(TID)
