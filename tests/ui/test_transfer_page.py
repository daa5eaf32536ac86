"""AppTest of the Import & export page on a real local namespace (``tests/ui/conftest.py``):
upload a file, see its preview, import it into a new table, append and merge into a picked
one, a mismatch refused with nothing written, edited types, the read-only switch; export a
table (a version, a filter, columns) into a prepared download."""

from __future__ import annotations

import gc
import io
import os
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import streamlit as st
from lance_namespace import ListTablesRequest, ListTableVersionsRequest

import backend
from backend.services import imports
from backend.services.search.query import read_rows
from backend.text import human_bytes
from components import state
from components import transfer as tx
from tests.ui.conftest import alerts, assert_no_exception, button, texts

SALES = {"ns": "sales"}
ORDERS = {"ns": "sales", "table": "orders"}


def csv_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pacsv.write_csv(table, sink)
    return sink.getvalue()


def rows(n: int, start: int = 0) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "item": pa.array([f"thing {i}" for i in range(start, start + n)]),
        }
    )


def upload(at, name: str, data: bytes):
    at.file_uploader[0].set_value((name, data, "application/octet-stream")).run()
    assert_no_exception(at)
    return at


def versions(root: Path, table_id: list[str]) -> list[int]:
    ns = backend.connect(str(root))
    return sorted(
        v.version for v in ns.list_table_versions(ListTableVersionsRequest(id=table_id)).versions
    )


def table_rows(root: Path, table_id: list[str]) -> pa.Table:
    return read_rows(backend.connect(str(root)), table_id, limit=10_000).sort_by("id")


def test_page_without_a_table(make_app) -> None:
    at = make_app("transfer", query_params=SALES)
    assert_no_exception(at)
    page = texts(at)
    assert "Import & export" in page
    server = st.get_option("server.maxUploadSize") << 20
    limit = min(server, imports.max_import_bytes())
    assert f"CSV, Parquet, Arrow IPC or JSON Lines, up to {human_bytes(limit)}" in page
    if server < imports.max_import_bytes():  # the server's limit is stated as such
        assert "server.maxUploadSize" in page and "imports accept up to 1.0 GiB" in page
    assert at.file_uploader[0].proto.max_upload_size_mb == limit >> 20
    assert at.file_uploader[0].label == "File to import"
    assert set(at.file_uploader[0].allowed_type) >= {".csv", ".parquet", ".arrow", ".jsonl"}
    assert "Pick a namespace and a table to export it." in alerts(at, "info")


def test_a_table_picked_on_a_page_without_a_version_reaches_the_url(make_app) -> None:
    """The picker tells the browser of a table picked with the version the page shows, or,
    on a page that shows none (this one), once the page has run: never left owed."""
    at = make_app("transfer", query_params=SALES)
    at.selectbox(key=f"{state.Transfer.PICKER}.table").set_value("orders").run()
    assert_no_exception(at)
    assert at.query_params["ns"] == "sales" and at.query_params["table"] == "orders"
    assert "version" not in at.query_params
    assert not at.session_state[state.Sel.URL_OWED]


def test_import_a_csv_into_a_new_table(make_app, ui_env) -> None:
    at = make_app("transfer", query_params=SALES)
    data = csv_bytes(rows(250))
    upload(at, "new stock.csv", data)
    page = texts(at)
    # the size in KiB and exactly (the uploader's own chip says it in powers of 1000)
    size = len(data)
    assert size > 1024
    assert f"new stock.csv: CSV, 250 rows, {size / 1024:,.1f} KiB ({size:,} bytes)" in page
    assert at.text_input(key=next(k for k in _keys(at) if ".name." in k)).value == "new_stock"
    grid = [df for df in at.dataframe if "thing 0" in df.value.to_string()]
    assert grid, "the first rows are shown"
    button(at, "Import").click().run()
    assert_no_exception(at)
    assert alerts(at, "success") == ["Created table sales › new_stock with 250 rows (version 1)."]
    assert at.query_params["table"] == "new_stock"  # the new table is picked
    got = table_rows(ui_env, ["sales", "new_stock"])
    assert got.equals(rows(250))
    assert at.file_uploader[0].value is None  # the form is empty again


def _keys(at) -> list[str]:
    return [w.key for w in at.text_input if w.key]


def test_append_merge_and_a_refused_mismatch(make_app, ui_env) -> None:
    orders = ["sales", "orders"]
    before = versions(ui_env, orders)
    at = make_app("transfer", query_params=ORDERS)
    upload(at, "more.csv", csv_bytes(rows(2, start=10)))
    at.radio(key="transfer.import.mode").set_value("append").run()
    assert "Into table sales › orders." in texts(at)
    button(at, "Import").click().run()
    assert_no_exception(at)
    assert alerts(at, "success") == ["Appended 2 rows to sales › orders (version 4)."]
    assert versions(ui_env, orders) == [*before, 4]

    at = make_app("transfer", query_params=ORDERS)
    changed = pa.table({"id": pa.array([2, 99], pa.int64()), "item": ["INK", "new"]})
    upload(at, "changes.parquet", _parquet(changed))
    at.radio(key="transfer.import.mode").set_value("merge").run()
    assert at.multiselect(key="transfer.import.on").value == ["id"]
    button(at, "Import").click().run()
    assert_no_exception(at)
    assert alerts(at, "success") == [
        "Merged 2 rows into sales › orders (version 5): 1 updated, 1 inserted."
    ]
    items = dict(zip(*table_rows(ui_env, orders).to_pydict().values(), strict=True))
    assert items[2] == "INK" and items[99] == "new"

    at = make_app("transfer", query_params=ORDERS)
    upload(at, "wrong.csv", b"id,colour\nx,red\n")
    at.radio(key="transfer.import.mode").set_value("append").run()
    button(at, "Import").click().run()
    assert_no_exception(at)
    [error] = alerts(at, "error")
    assert "nothing was written" in error
    assert "missing columns (in the table, not in the upload): item" in error
    assert "extra columns (not in the table): colour" in error
    assert "column id: the table holds int64, the upload utf8" in error
    assert versions(ui_env, orders) == [*before, 4, 5]


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def test_edited_types_are_used(make_app, ui_env) -> None:
    at = make_app("transfer", query_params=SALES)
    upload(at, "codes.csv", b"code,amount\n007,1.5\n010,2.25\n")
    file_id = at.file_uploader[0].value.file_id
    at.session_state[f"transfer.import.types.{file_id}"] = {
        "edited_rows": {0: {"type": "utf8"}, 1: {"type": "float32"}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    button(at, "Import").click().run()
    assert_no_exception(at)
    assert alerts(at, "success") == ["Created table sales › codes with 2 rows (version 1)."]
    got = read_rows(backend.connect(str(ui_env)), ["sales", "codes"], limit=10)
    assert got.schema.field("code").type == pa.string()
    assert got.schema.field("amount").type == pa.float32()
    assert got["code"].to_pylist() == ["007", "010"]


def test_a_bad_type_is_shown_and_nothing_is_created(make_app, ui_env) -> None:
    at = make_app("transfer", query_params=SALES)
    upload(at, "codes.csv", b"code,amount\n007,1.5\n")
    file_id = at.file_uploader[0].value.file_id
    at.session_state[f"transfer.import.types.{file_id}"] = {
        "edited_rows": {0: {"type": "int65"}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    button(at, "Import").click().run()
    [error] = alerts(at, "error")
    assert "unknown Arrow type 'int65'" in error
    ns = backend.connect(str(ui_env))
    assert "codes" not in ns.list_tables(ListTablesRequest(id=["sales"])).tables


def test_an_unreadable_file_is_an_error(make_app) -> None:
    at = make_app("transfer", query_params=SALES)
    upload(at, "broken.parquet", b"this is not parquet")
    [error] = alerts(at, "error")
    assert "Reading broken.parquet failed" in error and "not readable as Parquet" in error
    assert not [b for b in at.button if b.label == "Import"]


def test_read_only_disables_the_import(make_app, ui_env) -> None:
    at = make_app("transfer", query_params={**SALES, "ro": "true"})
    upload(at, "stock.csv", csv_bytes(rows(3)))
    assert button(at, "Import").disabled
    assert "Importing is disabled: the connection is read-only (sidebar switch)." in texts(at)


def test_export_a_version_with_a_filter(make_app, ui_env) -> None:
    at = make_app("transfer", query_params=ORDERS)
    at.selectbox(key="transfer.export.sales/orders.version").set_value(1).run()
    at.text_input(key="transfer.export.sales/orders.filter").input("id >= 2").run()
    button(at, "Prepare download").click().run()
    assert_no_exception(at)
    [ready] = alerts(at, "success")
    assert ready.startswith("orders-v1.parquet is ready: 2 rows, ") and ready.endswith(
        "(id, item)."
    )
    [download] = at.get("download_button")
    assert download.label == "Download orders-v1.parquet"
    kept = at.session_state[state.Transfer.DOWNLOAD]
    got = pq.read_table(kept["file"].path)
    assert got.to_pydict() == {"id": [2, 3], "item": ["ink", "pad"]}
    assert kept["mime"] == "application/vnd.apache.parquet"

    # Latest as CSV, some columns; the previous file is replaced.
    at.selectbox(key="transfer.export.sales/orders.fmt").set_value("csv").run()
    at.selectbox(key="transfer.export.sales/orders.version").set_value(0).run()
    at.text_input(key="transfer.export.sales/orders.filter").input("").run()
    at.multiselect(key="transfer.export.sales/orders.columns").set_value(["item"]).run()
    button(at, "Prepare download").click().run()
    assert_no_exception(at)
    assert not os.path.exists(kept["file"].path)
    kept = at.session_state[state.Transfer.DOWNLOAD]
    assert kept["file_name"] == "orders-v3.csv" and kept["mime"] == "text/csv"
    assert pacsv.read_csv(kept["file"].path).to_pydict() == {"item": ["ink", "pad", "cap", "nib"]}


def test_a_prepared_file_belongs_to_the_settings_that_made_it(make_app, ui_env) -> None:
    at = make_app("transfer", query_params=ORDERS)
    key = "transfer.export.sales/orders"
    at.text_input(key=f"{key}.filter").input("id >= 2").run()
    button(at, "Prepare download").click().run()
    assert_no_exception(at)
    kept = at.session_state[state.Transfer.DOWNLOAD]
    assert [d.label for d in at.get("download_button")] == ["Download orders-v3.parquet"]

    # Another format: the Parquet file is no longer offered (and is deleted).
    at.selectbox(key=f"{key}.fmt").set_value("csv").run()
    assert_no_exception(at)
    assert not at.get("download_button") and alerts(at, "success") == []
    assert not os.path.exists(kept["file"].path)
    assert state.Transfer.DOWNLOAD not in at.session_state

    # Back to Parquet and prepared again; then the filter is cleared: stale again.
    at.selectbox(key=f"{key}.fmt").set_value("parquet").run()
    button(at, "Prepare download").click().run()
    assert len(at.get("download_button")) == 1
    at.text_input(key=f"{key}.filter").input("").run()
    assert not at.get("download_button")

    # A prepare that fails shows its error alone: no green "ready", no older button.
    at.text_input(key=f"{key}.filter").input("id >= 1").run()
    button(at, "Prepare download").click().run()
    assert len(at.get("download_button")) == 1
    at.text_input(key=f"{key}.filter").input("item = ink").run()
    button(at, "Prepare download").click().run()
    assert_no_exception(at)
    [error] = alerts(at, "error")
    assert "no column named ink (did you mean the string 'ink'?)" in error, error
    assert "the table's columns: id, item" in error, error
    assert alerts(at, "success") == [] and not at.get("download_button")
    assert state.Transfer.DOWNLOAD not in at.session_state


def test_csv_export_of_a_vector_column(make_app) -> None:
    at = make_app("transfer", query_params={"ns": ["sales", "eu"], "table": "invoices"})
    key = "transfer.export.sales/eu/invoices"
    at.selectbox(key=f"{key}.fmt").set_value("csv").run()
    button(at, "Prepare download").click().run()
    [error] = alerts(at, "error")
    assert "CSV cannot hold the vector/list/struct column(s) embedding" in error
    assert not at.get("download_button")
    at.checkbox(key=f"{key}.drop").check().run()
    button(at, "Prepare download").click().run()
    assert_no_exception(at)
    kept = at.session_state[state.Transfer.DOWNLOAD]
    assert pacsv.read_csv(kept["file"].path).column_names == ["id", "amount"]


def test_a_csv_download_keeps_formulas_inert_unless_asked_not_to(make_app, ui_env) -> None:
    from tests.support import create_table

    notes = ['=HYPERLINK("http://x")', "plain", "@SUM(A1)", "a-b"]
    create_table(backend.connect(str(ui_env)), ["sales", "notes"], pa.table({"note": notes}))
    at = make_app("transfer", query_params={"ns": "sales", "table": "notes"})
    key = "transfer.export.sales/notes"
    at.selectbox(key=f"{key}.fmt").set_value("csv").run()
    assert at.checkbox(key=f"{key}.inert").value is True
    button(at, "Prepare download").click().run()
    assert_no_exception(at)
    [ready] = alerts(at, "success")
    assert ready.endswith(
        "2 text cells that a spreadsheet would run as a formula: written with a leading ' "
        "(kept as text)."
    )
    kept = at.session_state[state.Transfer.DOWNLOAD]
    written = pacsv.read_csv(kept["file"].path)["note"].to_pylist()
    assert written == ["'" + notes[0], "plain", "'@SUM(A1)", "a-b"]
    at.checkbox(key=f"{key}.inert").uncheck().run()
    button(at, "Prepare download").click().run()
    [ready] = alerts(at, "success")
    assert "formula" not in ready
    kept = at.session_state[state.Transfer.DOWNLOAD]
    assert pacsv.read_csv(kept["file"].path)["note"].to_pylist() == notes


def test_a_declared_table_has_nothing_to_export(make_app) -> None:
    at = make_app("transfer", query_params={"ns": "sales", "table": "pending"})
    assert_no_exception(at)
    assert "This table is declared only: it has no rows to export yet." in alerts(at, "info")
    assert not [b for b in at.button if b.label == "Prepare download"]


def test_helpers() -> None:
    inferred = pd.DataFrame({"column": ["a", "b", "c"], "type": ["int64", "utf8", "bool"]})
    edited = inferred.assign(type=["int64", " large_utf8 ", "bool"])
    assert tx.changed_types(inferred, edited) == {"b": "large_utf8"}
    assert tx.changed_types(inferred, inferred) == {}
    assert tx.default_table_name("sales 2024 (eu).csv") == "sales_2024_eu"
    assert tx.default_table_name("...csv") == "imported"
    summary = tx.import_summary(imports.ImportResult(("a", "t"), "append", 3, 2))
    assert summary == "Appended 3 rows to a › t (version 2)."


def test_a_viewer_is_told_the_role_not_a_read_only_connection(roles, make_app, ui_env) -> None:
    """A viewer's import is disabled because of the role, and the page says so (not "read-only
    connection": the connection is writable)."""
    from tests.ui.conftest import app_as, open_page

    at = app_as("vi@example.com", query=SALES)
    open_page(at, "views/transfer.py")
    upload(at, "stock.csv", csv_bytes(rows(3)))
    assert button(at, "Import").disabled
    shown = texts(at)
    assert "Importing is disabled: the viewer role" in shown, shown
    assert "read-only" not in shown.split("Importing is disabled:", 1)[1].split(".")[0]


def test_a_prepared_file_is_removed_when_its_session_ends(make_app, ui_env) -> None:
    """Nobody downloads it and the tab is closed: once Streamlit drops the session, the
    file is gone (an export is as large as its table)."""
    at = make_app("transfer", query_params=ORDERS)
    button(at, "Prepare download").click().run()
    assert_no_exception(at)
    path = at.session_state[state.Transfer.DOWNLOAD]["file"].path
    assert os.path.isfile(path)
    del at
    # A thread of the session (a background read) may hold it a moment longer.
    deadline = time.monotonic() + 5
    while os.path.exists(path) and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.05)
    assert not os.path.exists(path)
