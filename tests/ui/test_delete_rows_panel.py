"""AppTest: "Delete rows" on the Versions page (a filter, its preview, a typed confirmation),
on the sample namespace's ``sales/orders`` (latest v3: ids 2, 3, 4, 5); roles as in
test_roles_page (a viewer or editor sees the delete disabled with the reason)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc

import backend
from backend import audit
from backend.services.search.query import read_rows
from backend.spec import catalog_views
from tests.ui.conftest import alerts, app_as, assert_no_exception, open_page, texts, widget
from tests.ui.test_versions_page import ORDERS, open_tab

TID = ["sales", "orders"]
PREFIX = "versions.rows0."


def orders(root: Path):
    return read_rows(backend.connect(str(root)), TID, limit=100)


def preview(at, text: str) -> None:
    open_tab(at, "Delete rows")
    widget(at.text_input, PREFIX, ".filter").input(text)
    widget(at.button, f"FormSubmitter:{PREFIX}", "-Preview").click().run()
    assert_no_exception(at)


def delete(at, confirm: str) -> None:
    widget(at.text_input, PREFIX, ".confirm").input(confirm)
    widget(at.button, f"FormSubmitter:{PREFIX}", "-Delete rows").click().run()
    assert_no_exception(at)


def test_preview_then_confirmed_delete_makes_a_version(make_app, ui_env: Path) -> None:
    before = orders(ui_env)
    matches = before.filter(pc.greater_equal(before["id"], 4))
    version = catalog_views.latest_version(backend.connect(str(ui_env)), TID)
    at = make_app("versions", query_params=ORDERS)
    preview(at, "id >= 4")
    assert f"**{matches.num_rows} rows** match id >= 4." in texts(at)
    (sample,) = [d.value for d in at.dataframe if "item" in d.value.columns]
    assert sorted(sample["id"]) == sorted(matches["id"].to_pylist())
    delete(at, "wrong")
    assert any("type orders exactly" in a for a in alerts(at, "error"))
    assert orders(ui_env).num_rows == before.num_rows  # nothing deleted without the name
    delete(at, "orders")
    (done,) = alerts(at, "success")
    assert f"Deleted {matches.num_rows} rows where id >= 4 as v{version + 1}" in done
    after = orders(ui_env)
    assert sorted(after["id"].to_pylist()) == [2, 3]
    assert catalog_views.latest_version(backend.connect(str(ui_env)), TID) == version + 1


def test_bad_and_empty_filters_are_readable(make_app, ui_env: Path) -> None:
    at = make_app("versions", query_params=ORDERS)
    preview(at, "nosuch >")
    (error,) = alerts(at, "error")
    assert "Previewing the rows to delete" in error and "Traceback" not in error
    assert not [b for b in at.button if b.key and b.key.endswith("-Delete rows")]
    preview(at, "")
    (error,) = alerts(at, "error")
    assert "filter is required" in error
    preview(at, "id > 100")
    assert any("nothing to delete" in a for a in alerts(at, "info"))
    assert orders(ui_env).num_rows == 4


def test_a_filter_failing_on_the_rows_is_said_in_the_users_terms(make_app, ui_env: Path) -> None:
    """lance reports a filter that fails on the rows as an internal error with the table's
    path; the panel says what is wrong with the filter, and nothing is deleted."""
    at = make_app("versions", query_params=ORDERS)
    preview(at, "cast(item as int) = 1")
    (error,) = alerts(at, "error")
    assert "a row's value '" in error and "cannot be cast to an integer" in error, error
    assert "TRY_CAST" in error
    for engine_word in ("Internal", "Arrow error", "Cast error", str(ui_env), "file://"):
        assert engine_word not in error, (engine_word, error)
    assert not [b for b in at.button if b.key and b.key.endswith("-Delete rows")]
    assert orders(ui_env).num_rows == 4


def test_editor_previews_but_may_not_delete(roles: Path, ui_env: Path) -> None:
    at = app_as("ed@example.com", query={**ORDERS})
    open_page(at, "views/versions.py")
    preview(at, "id >= 4")
    assert "**2 rows** match id >= 4." in texts(at)
    submit = widget(at.button, f"FormSubmitter:{PREFIX}", "-Delete rows")
    assert submit.disabled
    assert "Disabled: the editor role may not delete data, catalog entries or history" in texts(at)
    assert orders(ui_env).num_rows == 4


def test_admin_delete_is_audited(roles: Path, ui_env: Path) -> None:
    at = app_as("ada@example.com", query={**ORDERS})
    open_page(at, "views/versions.py")
    preview(at, "item = 'pad'")
    assert "**1 row** matches item = 'pad'." in texts(at)
    delete(at, "orders")
    assert sorted(orders(ui_env)["id"].to_pylist()) == [2, 4, 5]
    entries = [e for e in audit.AuditLog(roles).entries() if e.operation == "delete_from_table"]
    assert [(e.user, e.outcome, e.ids) for e in entries] == [("ada@example.com", audit.OK, TID)]
