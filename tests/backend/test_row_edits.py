"""Updating rows and merge-insert (``backend.services.rows``) on both backends: the updated
values against pyarrow's computation of the same expressions on the rows the filter matches,
the expected-count refusal, merge counts (dry run and real run) and resulting rows against an
independent pyarrow computation for every clause combination, the bad-input catalogue leaving
the table unchanged, roles and the audit log."""

from __future__ import annotations

import itertools
from pathlib import Path

import pandas as pd
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
from tests.backend.test_rows import FILTER, TID, matching
from tests.support import append_rows, create_table, make_table, tree_digest


@pytest.fixture
def table(ns) -> pa.Table:
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    data = make_table(30).append_column("score", pa.array([i * 0.5 for i in range(30)]))
    create_table(ns, TID, data)
    return data


def root_of(tmp_path: Path, backend_kind: str) -> Path:
    return tmp_path / ("local-root" if backend_kind == "local" else "rest-root")


def current(ns) -> pa.Table:
    return read_rows(ns, TID, limit=1000).sort_by("id")


# -- update -------------------------------------------------------------------------------------
def test_update_sets_the_expressions_on_the_matching_rows_only(ns, table: pa.Table) -> None:
    updates = {"score": "score * 2 + id", "text": "concat(text, ' (checked)')"}
    mask = matching(table)
    count = int(pc.sum(mask.cast(pa.int64())).as_py())
    preview = rows.preview_update(ns, TID, updates, FILTER, sample=5)
    assert preview.count == count and len(preview.sample) == 5
    for _, row in preview.sample.iterrows():  # the sample's new values, by pyarrow's arithmetic
        assert row["new score"] == row["score"] * 2 + row["id"]
        assert row["new text"] == row["text"] + " (checked)"
    before = catalog_views.latest_version(ns, TID)
    done = rows.update_rows(ns, TID, updates, FILTER, expected_count=preview.count)
    assert (done.updated, done.version) == (count, before + 1)
    assert catalog_views.latest_version(ns, TID) == before + 1
    want_score = pc.if_else(
        mask, pc.add(pc.multiply(table["score"], 2.0), pc.cast(table["id"], pa.float64())),
        table["score"],
    )  # fmt: skip
    want_text = pc.if_else(mask, pc.binary_join_element_wise(table["text"], " (checked)", ""),
                           table["text"])  # fmt: skip
    after = current(ns)
    assert after["id"].to_pylist() == table["id"].to_pylist()
    assert after["score"].to_pylist() == want_score.to_pylist()
    assert after["text"].to_pylist() == want_text.to_pylist()
    assert after["cat"].to_pylist() == table["cat"].to_pylist()
    old = read_rows(ns, TID, limit=1000, version=before).sort_by("id")
    assert old.equals(table)  # the previous version keeps the old values


def test_every_row_only_when_said(ns, table: pa.Table) -> None:
    with pytest.raises(InvalidInputError, match="filter is required"):
        rows.update_rows(ns, TID, {"score": "0"}, "")
    assert current(ns).equals(table)
    done = rows.update_rows(ns, TID, {"score": "-score"}, "", all_rows=True)
    assert done.updated == table.num_rows
    assert current(ns)["score"].to_pylist() == pc.negate(table["score"]).to_pylist()


def test_update_refused_when_the_count_moved(ns, table: pa.Table) -> None:
    preview = rows.preview_update(ns, TID, {"score": "0"}, FILTER)
    extra = make_table(3, start=30).append_column("score", pa.array([1.0, 2.0, 3.0]))
    append_rows(ns, TID, extra)  # 30, 31, 32 match id >= 25
    version = catalog_views.latest_version(ns, TID)
    with pytest.raises(ConcurrentModificationError, match="nothing was updated"):
        rows.update_rows(ns, TID, {"score": "0"}, FILTER, expected_count=preview.count)
    assert catalog_views.latest_version(ns, TID) == version
    assert current(ns).equals(pa.concat_tables([table, extra]))


BAD_UPDATES = [
    ({"nosuch": "1"}, FILTER, "no column named nosuch"),
    ({}, FILTER, "at least one column"),
    ({"score": ""}, FILTER, "the value of score is empty"),
    (
        {"score": "nosuch + 1"},
        FILTER,
        r"the value of score \(nosuch \+ 1\): no column named nosuch",
    ),
    ({"id": "'x'"}, FILTER, "the value of id .* cannot hold"),
    ({"score": "1; DROP"}, FILTER, "lance would ignore"),
    ({"score": "1 -- comment"}, FILTER, "comments are not allowed"),
    ({"score": "0"}, "nosuch > 1", "no column named nosuch"),
    ({"score": "0"}, "id > 1; AND cat = 'c0'", "lance would ignore"),
    ({"score": "0"}, "id > 1000", "nothing to update"),
    ({"score": "0"}, "  ", "filter is required"),
    # failures on the rows: the value or the filter named, not an internal error
    ({"score": "id / 0"}, FILTER, r"the value of score \(id / 0\): it divides by zero for some"),
    (
        {"score": "0"},
        "cast(cat as int) = 1",
        r"the filter cast\(cat as int\) = 1: a row's value 'c\d' cannot be cast to an integer",
    ),
]


@pytest.mark.parametrize(("updates", "filter", "message"), BAD_UPDATES)
def test_bad_updates_are_refused_and_change_nothing(
    ns, table: pa.Table, updates, filter, message, tmp_path: Path, backend_kind: str
) -> None:
    root = root_of(tmp_path, backend_kind)
    before = tree_digest(root)
    version = catalog_views.latest_version(ns, TID)
    with pytest.raises(InvalidInputError, match=message) as err:
        rows.update_rows(ns, TID, updates, filter)
    assert "{" not in str(err.value) and ".rs:" not in str(err.value)  # no engine text
    assert tree_digest(root) == before
    assert catalog_views.latest_version(ns, TID) == version
    assert current(ns).equals(table)


def test_assignment_lines_parse() -> None:
    from backend.rules import row_rules

    got = row_rules.parse_assignments("score = score * 2\n\n flag = id = 3 \n`text` = 'x'")
    assert got == {"score": "score * 2", "flag": "id = 3", "text": "'x'"}
    for bad, message in [("score", "is not one assignment"), ("= 1", "is not"),
                         ("a = 1\na = 2", "set twice")]:  # fmt: skip
        with pytest.raises(InvalidInputError, match=message):
            row_rules.parse_assignments(bad)


# -- merge-insert -------------------------------------------------------------------------------
def upsert_data() -> pa.Table:
    """ids 25..34: 25..29 are in the table, 30..34 are not."""
    ids = list(range(25, 35))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "cat": [f"new{i}" for i in ids],
            "text": [f"upserted {i}" for i in ids],
            "score": [float(-i) for i in ids],
        }
    )


def expected_merge(
    table: pa.Table, data: pa.Table, update: bool, insert: bool, delete: bool
) -> tuple[tuple[int, int, int], pa.Table]:
    """The counts of each clause and the resulting rows (sorted by id), by pyarrow alone."""
    in_data = pc.is_in(table["id"], value_set=data["id"])
    in_table = pc.is_in(data["id"], value_set=table["id"])
    matched = int(pc.sum(in_data.cast(pa.int64())).as_py())
    new = int(pc.sum(pc.invert(in_table).cast(pa.int64())).as_py())
    gone = table.num_rows - matched
    parts = []
    if update:
        parts.append(data.filter(in_table))
    else:
        parts.append(table.filter(in_data))
    if insert:
        parts.append(data.filter(pc.invert(in_table)))
    if not delete:
        parts.append(table.filter(pc.invert(in_data)))
    result = pa.concat_tables([p.cast(table.schema) for p in parts]).sort_by("id")
    counts = (matched if update else 0, new if insert else 0, gone if delete else 0)
    return counts, result


CLAUSES = [c for c in itertools.product([True, False], repeat=3) if any(c)]


@pytest.mark.parametrize(("update", "insert", "delete"), CLAUSES)
def test_merge_dry_run_and_real_run_match_pyarrow(
    ns, table: pa.Table, update: bool, insert: bool, delete: bool
) -> None:
    data = upsert_data()
    counts, result = expected_merge(table, data, update, insert, delete)
    flags = {
        "when_matched_update": update,
        "when_not_matched_insert": insert,
        "when_not_matched_by_source_delete": delete,
    }
    version = catalog_views.latest_version(ns, TID)
    dry = rows.merge_insert(ns, TID, data, on=["id"], dry_run=True, **flags)
    assert (dry.updated, dry.inserted, dry.deleted) == counts
    assert dry.dry_run and dry.version == version
    assert catalog_views.latest_version(ns, TID) == version  # nothing written
    assert current(ns).equals(table)
    done = rows.merge_insert(ns, TID, data.to_pandas(), on=["id"], **flags)
    assert (done.updated, done.inserted, done.deleted) == counts
    assert done.version == version + 1 == catalog_views.latest_version(ns, TID)
    assert current(ns).equals(result)


def test_merge_on_two_keys_over_pages(ns, table: pa.Table, monkeypatch) -> None:
    """Two key columns, the table's keys read in pages of 7 rows (local) / QueryTable pages."""
    monkeypatch.setattr(rows, "DRY_RUN_PAGE_ROWS", 7)
    data = table.slice(10, 10).set_column(3, "score", pa.array([100.0] * 10))
    data = data.set_column(1, "cat", pc.if_else(pc.greater(data["id"], 14), "x", data["cat"]))
    data = pa.concat_tables([data, table.slice(0, 1).set_column(0, "id", pa.array([99]))])
    keyed = pc.binary_join_element_wise(pc.cast(table["id"], pa.string()), table["cat"], "|")
    data_keyed = pc.binary_join_element_wise(pc.cast(data["id"], pa.string()), data["cat"], "|")
    matched = int(pc.sum(pc.is_in(keyed, value_set=data_keyed).cast(pa.int64())).as_py())
    inserted = int(
        pc.sum(pc.invert(pc.is_in(data_keyed, value_set=keyed)).cast(pa.int64())).as_py()
    )
    assert (matched, inserted) == (5, 6)
    flags = {"when_not_matched_by_source_delete": True}
    dry = rows.merge_insert(ns, TID, data, on=["id", "cat"], dry_run=True, **flags)
    assert (dry.updated, dry.inserted, dry.deleted) == (matched, inserted, 30 - matched)
    done = rows.merge_insert(ns, TID, data, on=["id", "cat"], **flags)
    assert (done.updated, done.inserted, done.deleted) == (matched, inserted, 30 - matched)
    assert current(ns).equals(data.sort_by([("id", "ascending"), ("cat", "ascending")]))


def bad_merges() -> list[tuple[str, object, list[str], dict, str]]:
    data = upsert_data()
    dup = pa.concat_tables([data, data.slice(0, 1)])
    nulls = data.set_column(0, "id", pa.array([None, *range(26, 35)], pa.int64()))
    return [
        ("unknown column", data.append_column("extra", pa.array([1] * 10)), ["id"], {},
         "columns the table lacks: extra"),
        ("lacking column", data.drop_columns(["score"]), ["id"], {}, "lacks the table's columns score"),
        ("key not in data", data.rename_columns(["key", "cat", "text", "score"]), ["key"], {},
         r"key \(not in the table\)"),
        ("key not in table", data, ["nosuch"], {}, "nosuch"),
        ("no keys", data, [], {}, "choose the key columns"),
        ("duplicate keys", dup, ["id"], {}, r"1 key\(s\) \(id\) appear more than once.*id = 25"),
        ("null keys", nulls, ["id"], {}, "null key"),
        ("type mismatch", data.set_column(3, "score", pa.array(["high"] * 10)), ["id"], {},
         "the column score holds string values"),
        ("empty data", data.slice(0, 0), ["id"], {}, "no rows"),
        ("no clause", data, ["id"], {"when_matched_update": False, "when_not_matched_insert": False},
         "at least one clause"),
        ("not a table", [1, 2], ["id"], {}, "pyarrow Table or a pandas DataFrame"),
    ]  # fmt: skip


@pytest.mark.parametrize("dry_run", [False, True])
@pytest.mark.parametrize("case", bad_merges(), ids=lambda c: c[0])
def test_bad_merges_are_refused_and_change_nothing(
    ns, table: pa.Table, case, dry_run: bool, tmp_path: Path, backend_kind: str
) -> None:
    _, data, on, flags, message = case
    root = root_of(tmp_path, backend_kind)
    before = tree_digest(root)
    version = catalog_views.latest_version(ns, TID)
    with pytest.raises(InvalidInputError, match=message):
        rows.merge_insert(ns, TID, data, on=on, dry_run=dry_run, **flags)
    assert tree_digest(root) == before
    assert catalog_views.latest_version(ns, TID) == version
    assert current(ns).equals(table)


def test_castable_types_are_cast(ns, table: pa.Table) -> None:
    """A DataFrame's int32 ids and a CSV's whole-number scores fit the table's columns."""
    frame = pd.DataFrame({"id": pd.array([1, 100], "int32"), "cat": ["u", "v"],
                          "text": ["a", "b"], "score": [7, 8]})  # fmt: skip
    done = rows.merge_insert(ns, TID, frame, on=["id"])
    assert (done.updated, done.inserted, done.deleted) == (1, 1, 0)
    after = current(ns)
    assert after.schema.equals(table.schema)
    assert after.filter(pc.equal(after["id"], 100))["score"].to_pylist() == [8.0]


# -- roles and audit ----------------------------------------------------------------------------
def test_roles_and_audit(ns, table: pa.Table, tmp_path: Path, backend_kind: str) -> None:
    root = root_of(tmp_path, backend_kind)
    log = audit.AuditLog(tmp_path / "audit")
    viewer = gate(ns, actor=Actor("vi@example.com", access.VIEWER), connection="lab", log=log)
    editor = gate(ns, actor=Actor("ed@example.com", access.EDITOR), connection="lab", log=log)
    before = tree_digest(root)
    assert rows.preview_update(viewer, TID, {"score": "0"}, FILTER).count > 0  # a read
    with pytest.raises(PermissionDeniedError, match="viewer"):
        rows.update_rows(viewer, TID, {"score": "0"}, FILTER)
    with pytest.raises(PermissionDeniedError, match="viewer"):
        rows.merge_insert(viewer, TID, upsert_data(), on=["id"])
    with pytest.raises(PermissionDeniedError, match="editor"):
        rows.merge_insert(editor, TID, upsert_data(), on=["id"],
                          when_not_matched_by_source_delete=True)  # fmt: skip
    assert tree_digest(root) == before
    done = rows.update_rows(editor, TID, {"score": "0"}, "id = 3", expected_count=1)
    merged = rows.merge_insert(editor, TID, upsert_data(), on=["id"])
    assert done.updated == 1 and (merged.updated, merged.inserted) == (5, 5)
    got = [(e.operation, e.outcome, e.user) for e in log.entries()]
    assert got == [
        ("update_table", audit.REFUSED, "vi@example.com"),
        ("merge_insert_into_table", audit.REFUSED, "vi@example.com"),
        ("merge_insert_into_table", audit.REFUSED, "ed@example.com"),
        ("update_table", audit.OK, "ed@example.com"),
        ("merge_insert_into_table", audit.OK, "ed@example.com"),
    ]
    assert access.required_role("merge_insert_into_table", {"on": ["id"]}) == access.EDITOR
    assert access.required_role("update_table") == access.EDITOR


def test_read_only_launch_refuses_both(ns, table: pa.Table, tmp_path: Path) -> None:
    locked = gate(ns, actor=Actor("ada@example.com", access.ADMIN), read_only="read-only launch",
                  log=audit.AuditLog(tmp_path / "audit"))  # fmt: skip
    with pytest.raises(PermissionDeniedError, match="read-only launch"):
        rows.update_rows(locked, TID, {"score": "0"}, FILTER)
    with pytest.raises(PermissionDeniedError, match="read-only launch"):
        rows.merge_insert(locked, TID, upsert_data(), on=["id"])
    assert current(ns).equals(table)
