"""AppTest: "Update rows" and "Upsert from a file" on the Versions page, on the sample
namespace's ``sales/orders`` (latest v3: ids 2, 3, 4, 5 with items ink, pad, cap, nib); every
count shown is checked against pyarrow's computation on the table read directly; roles as in
test_delete_rows_panel (a viewer previews only; an editor upserts, but not with the delete)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

import backend
from backend import audit
from backend.services.search.query import read_rows
from backend.spec import catalog_views
from tests.ui.conftest import alerts, app_as, assert_no_exception, open_page, texts, widget
from tests.ui.test_versions_page import ORDERS, open_tab

TID = ["sales", "orders"]
UPDATE = "versions.update0."
UPSERT = "versions.upsert0."


def orders(root: Path) -> pa.Table:
    return read_rows(backend.connect(str(root)), TID, limit=100).sort_by("id")


def version(root: Path) -> int | None:
    return catalog_views.latest_version(backend.connect(str(root)), TID)


def outside_delete(root: Path, predicate: str) -> None:
    """A delete by another writer: lance itself on the table's location."""
    import lance
    from lance_namespace import DescribeTableRequest

    location = backend.connect(str(root)).describe_table(DescribeTableRequest(id=TID)).location
    lance.dataset(location).delete(predicate)


def preview_update(at, assignments: str, where: str, *, every: bool = False) -> None:
    open_tab(at, "Update rows")
    widget(at.text_area, UPDATE, ".set").input(assignments)
    widget(at.text_input, UPDATE, ".filter").input(where)
    widget(at.checkbox, UPDATE, ".all").check() if every else None
    widget(at.button, f"FormSubmitter:{UPDATE}", "-Preview").click().run()
    assert_no_exception(at)


def apply_button(at):
    (found,) = [b for b in at.button if b.key and b.key.startswith(f"FormSubmitter:{UPDATE}")
                and "-Apply to" in b.key]  # fmt: skip
    return found


def test_update_preview_then_apply(make_app, ui_env: Path) -> None:
    before = orders(ui_env)
    mask = pc.greater_equal(before["id"], 4)
    count = int(pc.sum(mask.cast(pa.int64())).as_py())
    at = make_app("versions", query_params=ORDERS)
    preview_update(at, "item = upper(item)", "id >= 4")
    assert f"**{count} rows** match id >= 4." in texts(at)
    (sample,) = [d.value for d in at.dataframe if "new item" in d.value.columns]
    assert sorted(sample["id"]) == before.filter(mask)["id"].to_pylist()
    assert list(sample["new item"]) == [s.upper() for s in sample["item"]]
    assert orders(ui_env).equals(before)  # a preview writes nothing
    apply_button(at).click().run()
    assert_no_exception(at)
    (done,) = alerts(at, "success")
    assert f"Updated {count} rows where id >= 4: set item = upper(item) as v4" in done
    want = pc.if_else(mask, pc.utf8_upper(before["item"]), before["item"])
    assert orders(ui_env)["item"].to_pylist() == want.to_pylist()


def test_update_refused_when_the_table_changed_since_the_preview(make_app, ui_env: Path) -> None:
    """Apply sends from its button's callback: the refusal (the count moved since the
    preview) is shown under the panel, and nothing is updated."""
    at = make_app("versions", query_params=ORDERS)
    preview_update(at, "item = upper(item)", "id >= 4")
    outside_delete(ui_env, "id = 5")  # another writer (lance itself), after the preview
    changed = orders(ui_env)
    apply_button(at).click().run()
    assert_no_exception(at)
    assert not at.success
    (error,) = alerts(at, "error")
    assert "not the 2 previewed" in error and "preview again" in error
    assert orders(ui_env).equals(changed)


def test_bad_updates_are_readable(make_app, ui_env: Path) -> None:
    at = make_app("versions", query_params=ORDERS)
    preview_update(at, "nosuch = 1", "id > 2")
    (error,) = alerts(at, "error")
    assert "no column named nosuch" in error and "Traceback" not in error
    preview_update(at, "item = 'x'", "")
    (error,) = alerts(at, "error")
    assert "filter is required" in error
    preview_update(at, "item", "id > 2")
    (error,) = alerts(at, "error")
    assert "is not one assignment" in error
    preview_update(at, "id = 'abc'", "id > 2")
    (error,) = alerts(at, "error")
    assert "the value of id ('abc')" in error and "cannot hold" in error
    assert not [b for b in at.button if b.key and "-Apply to" in b.key]
    preview_update(at, "item = 'x'", "", every=True)
    assert "**4 rows** every row." in texts(at)
    assert orders(ui_env)["item"].to_pylist() == ["ink", "pad", "cap", "nib"]


def test_viewer_previews_but_may_not_update(roles: Path, ui_env: Path) -> None:
    at = app_as("vi@example.com", query={**ORDERS})
    open_page(at, "views/versions.py")
    preview_update(at, "item = 'x'", "id = 3")
    assert "**1 row** matches id = 3." in texts(at)
    assert apply_button(at).disabled
    assert "read-only" in texts(at)  # a viewer's session is read-only
    assert orders(ui_env)["item"].to_pylist() == ["ink", "pad", "cap", "nib"]


def upload(at, name: str, data: bytes) -> None:
    open_tab(at, "Upsert from a file")
    widget(at.file_uploader, UPSERT, ".file").set_value((name, data, "text/csv")).run()
    assert_no_exception(at)


def clauses(at, *, keys: list[str], update=True, insert=True, delete=False) -> None:
    widget(at.multiselect, UPSERT, ".on").set_value(keys)
    widget(at.checkbox, UPSERT, ".update").set_value(update)
    widget(at.checkbox, UPSERT, ".insert").set_value(insert)
    widget(at.checkbox, UPSERT, ".delete").set_value(delete)
    at.run()
    assert_no_exception(at)


def metrics(at) -> dict[str, int]:
    return {
        m.label: int(str(m.value).replace(",", ""))
        for m in at.metric
        if m.label.startswith("Rows ")
    }


FILE = b"id,item\n3,PAD\n5,NIB\n9,new\n"


def expected(table: pa.Table, update: bool, insert: bool, delete: bool) -> dict[str, int]:
    keys = pa.array([3, 5, 9], pa.int64())
    in_file = pc.is_in(table["id"], value_set=keys)
    matched = int(pc.sum(in_file.cast(pa.int64())).as_py())
    new = int(pc.sum(pc.invert(pc.is_in(keys, value_set=table["id"])).cast(pa.int64())).as_py())
    return {
        "Rows updated": matched if update else 0,
        "Rows inserted": new if insert else 0,
        "Rows deleted": table.num_rows - matched if delete else 0,
    }


def test_upsert_dry_run_then_apply(make_app, ui_env: Path) -> None:
    before = orders(ui_env)
    at = make_app("versions", query_params=ORDERS)
    upload(at, "changes.csv", FILE)
    clauses(at, keys=["id"])
    widget(at.button, UPSERT, ".dry").click().run()
    assert metrics(at) == expected(before, True, True, False)
    clauses(at, keys=["id"], delete=True)  # other clauses: the dry run shown is dropped
    assert not metrics(at)
    widget(at.button, UPSERT, ".dry").click().run()
    assert metrics(at) == expected(before, True, True, True)
    assert orders(ui_env).equals(before) and version(ui_env) == 3
    widget(at.button, UPSERT, ".apply").click().run()
    assert_no_exception(at)
    (done,) = alerts(at, "success")
    assert "Upserted on id: 2 rows updated, 1 row inserted, 2 rows deleted as v4" in done
    after = orders(ui_env)
    assert after["id"].to_pylist() == [3, 5, 9] and after["item"].to_pylist() == [
        "PAD",
        "NIB",
        "new",
    ]


def test_upsert_bad_input_is_readable(make_app, ui_env: Path) -> None:
    at = make_app("versions", query_params=ORDERS)
    upload(at, "dup.csv", b"id,item\n3,a\n3,b\n")
    clauses(at, keys=["id"])
    widget(at.button, UPSERT, ".dry").click().run()
    (error,) = alerts(at, "error")
    assert "appear more than once" in error and "id = 3" in error
    upload(at, "extra.csv", b"id,item,colour\n3,a,red\n")
    clauses(at, keys=["id"])
    widget(at.button, UPSERT, ".apply").click().run()
    (error,) = alerts(at, "error")
    assert "columns the table lacks: colour" in error
    assert orders(ui_env)["item"].to_pylist() == ["ink", "pad", "cap", "nib"]
    assert version(ui_env) == 3


def test_editor_upserts_but_not_with_the_delete(roles: Path, ui_env: Path) -> None:
    at = app_as("ed@example.com", query={**ORDERS})
    open_page(at, "views/versions.py")
    upload(at, "changes.csv", FILE)
    clauses(at, keys=["id"], delete=True)
    assert widget(at.button, UPSERT, ".apply").disabled
    assert "Disabled: the editor role may not delete data" in texts(at)
    clauses(at, keys=["id"])
    widget(at.button, UPSERT, ".apply").click().run()
    assert_no_exception(at)
    assert orders(ui_env)["id"].to_pylist() == [2, 3, 4, 5, 9]
    entries = [e for e in audit.AuditLog(roles).entries() if e.operation.startswith("merge")]
    assert [(e.user, e.outcome, e.ids) for e in entries] == [("ed@example.com", audit.OK, TID)]
