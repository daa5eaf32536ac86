"""The row-level compare of two versions, checked against independent computations: each
version read with lance/pyarrow directly, rows matched by their key in Python and pyarrow
anti-joins."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest
from lance_namespace import CreateNamespaceRequest, DeclareTableRequest
from lance_namespace.errors import (
    InvalidInputError,
    TableBranchNotFoundError,
    TableVersionNotFoundError,
)

from backend.services import row_changes as rc
from tests.backend.history_support import TID, at, base_rows, by_key, new_table
from tests.support import table_location


def stable_table(ns: Any) -> str:
    """A table created by lance itself with stable row ids, in the namespace's place."""
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    location = ns.declare_table(DeclareTableRequest(id=TID)).location
    lance.write_dataset(base_rows(), location, enable_stable_row_ids=True)
    return str(table_location(ns, TID))


def as_keys(changes: rc.RowChanges, key: str = "id") -> dict[str, Any]:
    return {
        "inserted": sorted(changes.inserted.column(key).to_pylist()),
        "deleted": sorted(changes.deleted.column(key).to_pylist()),
        "updated": dict(
            zip(
                changes.updated.column(key).to_pylist(),
                [sorted(c) for c in changes.updated.column(rc.CHANGED).to_pylist()],
                strict=True,
            )
        ),
    }


def rows_of(table: pa.Table, key: str = "id") -> list[dict[str, Any]]:
    return sorted(
        table.drop_columns([c for c in [rc.CHANGED] if c in table.column_names]).to_pylist(),
        key=lambda r: r[key],
    )


# -- row changes ------------------------------------------------------------------------------------
def edit(loc: str) -> None:
    """v2 delete, v3 update, v4 upsert (2 updated, 1 inserted), v5 added column, v6 append."""
    ds = lance.dataset(loc)
    ds.delete("id in (0, 3)")
    ds.update({"v": "'upd'"}, where="id = 5")
    ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
        pa.table({"id": [6, 7, 30], "v": ["m6", "r7", "n30"]})
    )  # id 7 keeps its value: matched, rewritten, not changed
    ds.add_columns({"w": "id * 3"})
    lance.write_dataset(pa.table({"id": [31], "v": ["a31"], "w": [93]}), loc, mode="append")


@pytest.mark.parametrize(("lo", "hi"), [(1, 6), (1, 4), (3, 5), (4, 6)])
def test_row_changes_with_stable_row_ids_use_the_delta(local_root: Path, lo: int, hi: int) -> None:
    import backend

    ns = backend.connect(str(local_root))
    loc = stable_table(ns)
    edit(loc)
    truth = by_key(at(loc, lo), at(loc, hi))
    changes = rc.row_changes(ns, TID, lo, hi)
    assert changes.method == rc.DELTA
    assert as_keys(changes) == truth
    # the rows themselves: the newer values of inserted and updated rows, the older of deleted
    new, old = at(loc, hi), at(loc, lo)

    def pick(t: pa.Table, keys: list[int]) -> list[dict[str, Any]]:
        wanted = pa.compute.is_in(t.column("id"), pa.array(keys, t.column("id").type))
        return rows_of(t.filter(wanted))

    assert rows_of(changes.inserted) == pick(new, truth["inserted"])
    assert rows_of(changes.deleted) == pick(old, truth["deleted"])
    assert rows_of(changes.updated) == pick(new, list(truth["updated"]))
    assert rows_of(changes.updated_before) == pick(old, list(truth["updated"]))
    # the same answer by key
    keyed = rc.row_changes(ns, TID, lo, hi, key="id")
    assert keyed.method == rc.KEY and as_keys(keyed) == truth


def test_row_changes_without_stable_row_ids_need_a_key(local_root: Path) -> None:
    import backend

    ns = backend.connect(str(local_root))
    loc = new_table(ns)
    edit(loc)
    truth = by_key(at(loc, 1), at(loc, 6))
    assert truth["inserted"] and truth["updated"] and truth["deleted"]
    # pylance's delta sees nothing here: trusting it would say "no changes"
    delta = lance.dataset(loc).delta(begin_version=1, end_version=6)
    assert delta.get_inserted_rows().read_all().num_rows == 0
    assert delta.get_updated_rows().read_all().num_rows == 0
    with pytest.raises(InvalidInputError, match="key"):
        rc.row_changes(ns, TID, 1, 6)
    changes = rc.row_changes(ns, TID, 1, 6, key=["id"])
    assert changes.method == rc.KEY
    assert as_keys(changes) == truth
    assert changes.added_columns == ["w"] and changes.dropped_columns == []


def test_row_changes_by_key_on_both_backends(ns: Any) -> None:
    loc = new_table(ns)
    edit(loc)
    seen: list[tuple[int, int]] = []
    changes = rc.row_changes(ns, TID, 2, 6, key="id", progress=lambda d, t: seen.append((d, t)))
    assert as_keys(changes) == by_key(at(loc, 2), at(loc, 6))
    total = at(loc, 2).num_rows + at(loc, 6).num_rows
    assert seen and seen[-1] == (total, total)
    with pytest.raises(InvalidInputError, match="key"):
        rc.row_changes(ns, TID, 2, 6)


def test_row_changes_bad_inputs(local_root: Path) -> None:
    import backend

    ns = backend.connect(str(local_root))
    loc = new_table(ns)
    edit(loc)
    with pytest.raises(InvalidInputError, match="not in version"):
        rc.row_changes(ns, TID, 1, 6, key="nope")
    with pytest.raises(InvalidInputError, match="older"):
        rc.row_changes(ns, TID, 6, 1, key="id")
    with pytest.raises(InvalidInputError, match="max_rows"):
        rc.row_changes(ns, TID, 1, 6, key="id", max_rows=5)
    with pytest.raises(TableBranchNotFoundError, match="no branch 'dev'"):
        rc.row_changes(ns, TID, 1, 6, key="id", branch="dev")
    with pytest.raises(TableVersionNotFoundError, match="has no version 9 .it has versions 1 to 6"):
        rc.row_changes(ns, TID, 1, 9, key="id")
    lance.write_dataset(pa.table({"id": [2], "v": ["again"], "w": [6]}), loc, mode="append")
    with pytest.raises(InvalidInputError, match="not unique in version 7"):
        rc.row_changes(ns, TID, 1, 7, key="id")
