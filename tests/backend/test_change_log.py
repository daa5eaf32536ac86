"""The change log per version, checked against independent computations: each version read
with lance/pyarrow directly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest
from lance_namespace.errors import (
    TableBranchNotFoundError,
)

from backend import access, audit
from backend.gate import Actor, gate
from backend.rules import version_ranges
from backend.services import change_log as cl
from backend.services import restore as restoresv
from backend.services import rows
from backend.services import versions as vsv
from tests.backend.history_support import TID, at, base_rows, by_key, new_table


# -- the change log ---------------------------------------------------------------------------------
def test_change_log_row_per_operation_kind(local_root: Path) -> None:
    import backend

    ns = backend.connect(str(local_root))
    loc = new_table(ns)  # v1: created (an Overwrite in lance)
    lance.write_dataset(
        base_rows(3).set_column(0, "id", pa.array([10, 11, 12])), loc, mode="append"
    )
    ds = lance.dataset(loc)
    ds.delete("id < 2")  # v3
    ds.update({"v": "'changed'"}, where="id = 5")  # v4
    ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
        pa.table({"id": [6, 7, 40, 41], "v": ["m6", "m7", "n40", "n41"]})
    )  # v5: two updated, two inserted
    ds.create_scalar_index("id", "BTREE")  # v6
    ds.add_columns({"w": "id * 2"})  # v7
    ds.optimize.compact_files(target_rows_per_fragment=1_000)  # v8 (ids reserved), v9
    lance.dataset(loc, version=3).restore()  # v10
    lance.write_dataset(base_rows(4), loc, mode="overwrite")  # v11
    log = cl.change_log(ns, TID)
    assert log.attrs["note"] is None
    assert log["version"].tolist() == list(range(1, 12))
    by_version = log.set_index("version")
    kinds = by_version["lance_operation"].to_dict()
    assert kinds == {
        1: "Overwrite",
        2: "Append",
        3: "Delete",
        4: "Update",
        5: "Update",
        6: "CreateIndex",
        7: "Merge",
        8: "ReserveFragments",
        9: "Rewrite",
        10: "Restore",
        11: "Overwrite",
    }
    assert by_version.loc[9, "operation"] == "compaction"
    assert by_version.loc[7, "operation"].startswith("schema change")
    assert by_version.loc[6, "operation"] == "index"
    tables = {v: at(loc, v) for v in range(1, 12)}
    # rows of each version: pyarrow's count of that version's rows
    assert by_version["rows"].tolist() == [tables[v].num_rows for v in range(1, 12)]
    # the data-changing versions: what a key compare of the versions' rows says
    for v in (2, 3, 4, 5):
        truth = by_key(tables[v - 1], tables[v])
        got = by_version.loc[v]
        assert (got["rows_added"], got["rows_deleted"], got["rows_updated"]) == (
            len(truth["inserted"]),
            len(truth["deleted"]),
            len(truth["updated"]),
        ), v
    assert tables[1].num_rows == by_version.loc[1, "rows_added"]
    # overwrite: every row of the version before goes, every new one comes
    got = by_version.loc[11]
    assert (got["rows_added"], got["rows_deleted"], got["rows_updated"]) == (
        tables[11].num_rows,
        tables[10].num_rows,
        0,
    )
    # index, added column, compaction: the rows are the same (values of the columns kept)
    for v in (6, 7, 8, 9):
        same = tables[v].select(tables[v - 1].column_names).sort_by("id")
        assert same.equals(tables[v - 1].sort_by("id")), v
        got = by_version.loc[v]
        assert (got["rows_added"], got["rows_deleted"], got["rows_updated"]) == (0, 0, 0), v
    # restore: the net change is the change of rows; the restored rows are v3's
    got = by_version.loc[10]
    assert got["rows_added"] - got["rows_deleted"] == tables[10].num_rows - tables[9].num_rows
    assert tables[10].sort_by("id").equals(tables[3].sort_by("id"))
    # fragments: the fragment ids lance lists for each version
    frags = {
        v: {f.fragment_id for f in lance.dataset(loc, version=v).get_fragments()}
        for v in range(1, 12)
    }
    frags[0] = set()
    assert by_version["fragments_added"].tolist() == [
        len(frags[v] - frags[v - 1]) for v in range(1, 12)
    ]
    assert by_version["fragments_removed"].tolist() == [
        len(frags[v - 1] - frags[v]) for v in range(1, 12)
    ]
    assert by_version["user"].isna().all()  # nothing here went through the console


def test_change_log_after_deleted_versions_says_so(local_root: Path) -> None:
    import backend

    ns = backend.connect(str(local_root))
    loc = new_table(ns)
    for i in range(3):
        lance.write_dataset(
            base_rows(2).set_column(0, "id", pa.array([100 + 2 * i, 101 + 2 * i])),
            loc,
            mode="append",
        )
    vsv.delete_versions(ns, TID, [version_ranges.Span(2, 2)])
    log = cl.change_log(ns, TID).set_index("version")
    assert 2 not in log.index
    assert pd_isna(log.loc[3, "rows_added"])
    assert "version 2 was deleted" in log.loc[3, "note"]
    assert log.loc[3, "rows"] == at(loc, 3).num_rows
    assert log.loc[4, "rows_added"] == 2


def pd_isna(value: Any) -> bool:
    import pandas as pd

    return bool(pd.isna(value))


def test_change_log_on_both_backends_with_the_consoles_user(
    ns: Any, tmp_path: Path, backend_kind: str
) -> None:
    loc = new_table(ns)
    lance.write_dataset(base_rows(2).set_column(0, "id", pa.array([50, 51])), loc, mode="append")
    log = audit.AuditLog(tmp_path / "audit")
    admin = gate(ns, actor=Actor("ada@example.com", access.ADMIN), connection="lab", log=log)
    rows.delete_rows(admin, TID, "id < 3")  # v3, by the console
    restoresv.restore_version(admin, TID, 1)  # v4, by the console
    frame = cl.change_log(admin, TID)
    print([(e.operation, cl._entry_window(e)) for e in log.entries()])
    print(frame[["version", "timestamp", "user"]].values.tolist())
    got = frame.set_index("version")
    assert got["lance_operation"].tolist() == ["Overwrite", "Append", "Delete", "Restore"]
    assert got["rows"].tolist() == [at(loc, v).num_rows for v in range(1, 5)]
    assert got.loc[3, "user"] == "ada@example.com"
    assert got.loc[3, "audit_operation"] == "delete_from_table"
    assert got.loc[4, "user"] == "ada@example.com"
    assert got.loc[4, "audit_operation"] == "restore_table"
    assert got.loc[3, "transaction_id"]
    assert pd_isna(got.loc[2, "user"])  # written by lance directly
    if backend_kind == "local":
        assert frame.attrs["note"] is None
        assert got.loc[3, "rows_deleted"] == 3
    else:
        assert frame.attrs["note"] == cl.REST_NOTE
        assert frame["rows_added"].isna().all() and frame["fragments_added"].isna().all()
    # a page of versions only
    assert cl.change_log(admin, TID, versions=[3, 4])["version"].tolist() == [3, 4]


@pytest.mark.parametrize(
    ("update", "insert", "delete"),
    [(True, True, False), (True, False, True), (False, True, True), (True, True, True)],
)
def test_change_log_splits_a_console_merge_by_its_clauses(
    local_root: Path, tmp_path: Path, update: bool, insert: bool, delete: bool
) -> None:
    """A merge insert's fragments hold the rows it wrote and removed; the console's own merge
    is split by its clauses (its audit entry), checked against pyarrow; with all three
    clauses the split is not known and is not guessed."""
    import backend

    ns = backend.connect(str(local_root))
    loc = new_table(ns)
    log = audit.AuditLog(tmp_path / "audit")
    admin = gate(ns, actor=Actor("ada@example.com", access.ADMIN), connection="lab", log=log)
    data = pa.table({"id": [0, 1, 2, 3, 100, 101], "v": ["m0", "m1", "m2", "m3", "n0", "n1"]})
    rows.merge_insert(
        admin, TID, data, on=["id"], when_matched_update=update, when_not_matched_insert=insert,
        when_not_matched_by_source_delete=delete,
    )  # fmt: skip
    truth = by_key(at(loc, 1), at(loc, 2))
    got = cl.change_log(admin, TID).set_index("version").loc[2]
    assert got["audit_operation"] == "merge_insert_into_table"
    counts = [got["rows_added"], got["rows_deleted"], got["rows_updated"]]
    if update and insert and delete:
        assert all(pd_isna(c) for c in counts)
        # every row of v1 was replaced or deleted; every row of the data written
        written, removed = data.num_rows, at(loc, 1).num_rows
        assert got["note"] == (
            f"a merge insert with all three clauses wrote {written} rows and removed {removed}: "
            "how many were updates its fragments do not tell; compare rows on id for the exact "
            "counts"
        )
    else:
        assert counts == [len(truth["inserted"]), len(truth["deleted"]), len(truth["updated"])]
    assert got["rows"] == at(loc, 2).num_rows


def test_change_log_of_an_unknown_branch_is_refused(local_root: Path) -> None:
    import backend

    ns = backend.connect(str(local_root))
    new_table(ns)
    with pytest.raises(TableBranchNotFoundError, match="no branch 'dev'"):
        cl.change_log(ns, TID, branch="dev")
