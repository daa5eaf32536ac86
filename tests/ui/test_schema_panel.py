"""AppTest: the "Schema" panel of a table (components/schema_edit.py) on a real local
namespace: preview, then apply; values checked with pyarrow; bad input refused with nothing
written; read-only launches disable Apply."""

from __future__ import annotations

import lance
import pyarrow.compute as pc

import backend
from backend.services import namespaces as browse
from components import state
from tests.ui.conftest import alerts, assert_no_exception, texts

ORDERS = {"ns": "sales", "table": "orders"}
TID = ["sales", "orders"]
P = state.Tables.SCHEMA + "0"  # the panel's keys in the first form generation


def orders(ui_env) -> lance.LanceDataset:
    ns = backend.connect(str(ui_env))
    return lance.dataset(browse.describe_table(ns, TID).location)


def open_panel(make_app, **params):
    at = make_app(query_params={**ORDERS, **params})
    at.session_state[state.panel_key(state.Tables.SCHEMA_OPEN, TID)] = True
    at.run()
    assert_no_exception(at)
    return at


def test_add_a_column_from_an_expression(make_app, ui_env) -> None:
    before = orders(ui_env)
    at = open_panel(make_app)
    at.text_input(key=f"{P}.add.name").set_value("double_id")
    at.text_input(key=f"{P}.add.expression").set_value("id * 2")
    at.button(key=f"FormSubmitter:{P}.add.form-Preview").click().run()
    assert_no_exception(at)
    page = texts(at)
    assert f"rewrites {before.count_rows()} rows" in page and "drops no index" in page
    preview = next(d.value for d in at.dataframe if "change" in d.value.columns)
    assert list(preview["column"]) == ["id", "item", "double_id"]
    assert orders(ui_env).version == before.version  # the preview wrote nothing
    at.button(key=f"{P}.add.apply").click().run()
    assert_no_exception(at)
    after = orders(ui_env)
    assert after.version == before.version + 1
    assert alerts(at, "success") == [f"Added 1 column (double_id) as v{after.version}."]
    got = after.to_table()
    assert got["double_id"].to_pylist() == pc.multiply(got["id"], 2).to_pylist()
    # the form starts afresh (its next generation of keys), not with the applied column
    fresh = f"{state.Tables.SCHEMA}{at.session_state['tables.form_version']}"
    assert fresh != P and at.text_input(key=f"{fresh}.add.name").value == ""


def test_drop_previews_the_index_it_takes(make_app, ui_env) -> None:
    orders(ui_env).create_scalar_index("item", "BTREE")
    before = orders(ui_env)
    at = open_panel(make_app)
    at.multiselect(key=f"{P}.drop.columns").set_value(["item"])
    at.button(key=f"FormSubmitter:{P}.drop.form-Preview").click().run()
    assert "drops the index item_idx" in texts(at)
    at.button(key=f"{P}.drop.apply").click().run()
    assert_no_exception(at)
    after = orders(ui_env)
    assert after.version == before.version + 1 and after.schema.names == ["id"]
    assert [i.name for i in after.describe_indices()] == []


def test_a_bad_name_is_refused_and_nothing_is_written(make_app, ui_env) -> None:
    before = orders(ui_env).version
    at = open_panel(make_app)
    at.text_input(key=f"{P}.add.name").set_value("item")
    at.text_input(key=f"{P}.add.expression").set_value("id")
    at.button(key=f"FormSubmitter:{P}.add.form-Preview").click().run()
    assert_no_exception(at)
    assert any("already has a column named item" in a for a in alerts(at, "error"))
    assert not [b for b in at.button if b.key == f"{P}.add.apply"]
    at.selectbox(key=f"{P}.alter.column").set_value("item")
    at.selectbox(key=f"{P}.alter.type").set_value("int64")
    at.button(key=f"FormSubmitter:{P}.alter.form-Preview").click().run()
    assert any("cannot change the column item from utf8 to int64" in a for a in alerts(at, "error"))
    assert orders(ui_env).version == before


def test_rename_on_a_read_only_launch_is_disabled(make_app, ui_env) -> None:
    at = open_panel(make_app, ro="true")
    at.selectbox(key=f"{P}.alter.column").set_value("item")
    at.text_input(key=f"{P}.alter.rename").set_value("label")
    at.button(key=f"FormSubmitter:{P}.alter.form-Preview").click().run()
    assert "rewrites no row (the schema only)" in texts(at)
    assert at.button(key=f"{P}.alter.apply").disabled
    assert orders(ui_env).schema.names == ["id", "item"]


def test_the_list_shows_the_tables_new_version_after_a_write(make_app, ui_env) -> None:
    """The list above the panel showed the table's figures from before the write (v3 beside
    "Added 1 column ... as v4") until the next click: the old figures are shown while they
    are read again, and the list now waits for them as for figures never read."""
    from components.tables import grid

    def listed_version(at) -> int:
        (frame,) = [d for d in at.dataframe if d.key and d.key.startswith("tables.list.grid.")]
        return int(frame.value.set_index("table").loc["orders", "version"])

    before = orders(ui_env).version
    at = open_panel(make_app)
    assert grid.stats_fill().wait(30)
    at.run()
    assert listed_version(at) == before
    at.text_input(key=f"{P}.add.name").set_value("double_id")
    at.text_input(key=f"{P}.add.expression").set_value("id * 2")
    at.button(key=f"FormSubmitter:{P}.add.form-Preview").click().run()
    at.button(key=f"{P}.add.apply").click().run()
    assert_no_exception(at)
    assert orders(ui_env).version == before + 1
    # the write's run: the old figure, said to be read again (the list polls for it), or
    # already the new one (the figure came in while the run drew the page: its poll, drawn
    # with the page, then ran the page again); the old code showed the old figure, silently
    assert listed_version(at) == before + 1 or "Reading the figures of 1 table…" in texts(at)
    assert grid.stats_fill().wait(30)
    at.run()  # what the poll does once the figure is in
    assert listed_version(at) == before + 1
    assert "Reading the figures" not in texts(at)
