"""Import & export in the browser: a 10,000-row CSV chosen through the file chooser becomes a
new table (schema preview first), which is then downloaded as Parquet and as CSV; the
downloaded files hold the source rows."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from playwright.sync_api import Locator, Page, expect

from .harness import (
    E2E_NAMESPACE,
    Console,
    after_rerun,
    choose,
    goto,
    grid_row,
    keyed_grid,
    open_tab,
    set_read_only,
    settle,
    type_into,
)
from .marks import ON_BOTH_BACKENDS

ROWS = 10_000
IMPORT_TIMEOUT_MS = 60_000


def source_rows() -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(ROWS), pa.int64()),
            "name": pa.array([f"item {i}" for i in range(ROWS)]),
            "price": pa.array([round(i * 0.25, 2) for i in range(ROWS)], pa.float64()),
            "in_stock": pa.array([i % 3 != 0 for i in range(ROWS)]),
        }
    )


def same_rows(got: pa.Table, want: pa.Table) -> None:
    got = got.select(want.column_names).cast(want.schema).sort_by("id")
    assert got.equals(want), (got.slice(0, 3), want.slice(0, 3))


def _alert(main: Locator, text: str) -> Locator:
    return main.get_by_test_id("stAlert").filter(has_text=text)


def _download(page: Page, panel: Locator, file_name: str, target: Path) -> Path:
    after_rerun(page, lambda: panel.get_by_role("button", name="Prepare download").click())
    expect(_alert(panel, f"{file_name} is ready: 10,000 rows")).to_be_visible()
    with page.expect_download() as info:
        panel.get_by_role("button", name=f"Download {file_name}").click()
    download = info.value
    assert download.suggested_filename == file_name
    download.save_as(target)
    settle(page)
    return target


@ON_BOTH_BACKENDS
def test_import_a_csv_then_export_it(
    page: Page, console: Console, shot: Callable[..., Path], tmp_path: Path
) -> None:
    name = f"stock_{uuid.uuid4().hex[:6]}"
    table = source_rows()
    csv_path = tmp_path / f"{name}.csv"
    pacsv.write_csv(table, csv_path)

    goto(page, console, "transfer", ns=E2E_NAMESPACE)
    main = page.get_by_test_id("stMain")
    panel = open_tab(main, "Import")
    expect(panel.get_by_text("CSV, Parquet, Arrow IPC or JSON Lines, up to")).to_be_visible()
    chooser = panel.get_by_test_id("stFileUploaderDropzoneInput")
    after_rerun(page, lambda: chooser.set_input_files(csv_path))

    # The schema preview: format, row count, one row per column with its inferred type.
    expect(panel.get_by_text(f"{name}.csv: CSV, 10,000 rows")).to_be_visible()
    types = keyed_grid(panel, "transfer.import.types.")
    for column, kind in (("id", "int64"), ("name", "utf8"), ("price", "float64")):
        row = grid_row(types, column)
        expect(row).to_have_count(1)
        expect(row).to_contain_text(kind)
    expect(grid_row(types, "in_stock")).to_contain_text("bool")
    expect(panel.get_by_label(f"New table name (in {E2E_NAMESPACE})")).to_have_value(name)
    shot("preview")

    after_rerun(page, lambda: panel.get_by_role("button", name="Import", exact=True).click())
    done = _alert(main, f"Created table {E2E_NAMESPACE} › {name} with 10,000 rows (version 1).")
    expect(done).to_be_visible(timeout=IMPORT_TIMEOUT_MS)
    # The new table is picked for the next step.
    expect(page).to_have_url(f"{console.url}/transfer?ns={E2E_NAMESPACE}&table={name}")

    panel = open_tab(main, "Export")
    parquet = _download(page, panel, f"{name}-v1.parquet", tmp_path / "out.parquet")
    same_rows(pq.read_table(parquet), table)

    choose(panel, "Format", "CSV")
    csv_out = _download(page, panel, f"{name}-v1.csv", tmp_path / "out.csv")
    same_rows(pacsv.read_csv(csv_out), table)
    shot("exported")


def test_import_mismatch_is_refused(
    page: Page, console: Console, shot: Callable[..., Path], tmp_path: Path
) -> None:
    path = tmp_path / "wrong.csv"
    path.write_text("id,colour\n1,red\n")
    goto(page, console, "transfer", ns=E2E_NAMESPACE, table="notes")
    main = page.get_by_test_id("stMain")
    panel = open_tab(main, "Import")
    after_rerun(
        page, lambda: panel.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(path)
    )
    expect(panel.get_by_text("wrong.csv: CSV, 1 row")).to_be_visible()
    radio = panel.get_by_role("radiogroup")
    after_rerun(page, lambda: radio.get_by_text("Append to the picked table").click())
    after_rerun(page, lambda: panel.get_by_role("button", name="Import", exact=True).click())
    error = _alert(panel, "nothing was written")
    expect(error).to_be_visible()
    expect(error).to_contain_text("missing columns (in the table, not in the upload): body")
    expect(error).to_contain_text("extra columns (not in the table): colour")
    shot("refused")


def test_read_only_disables_the_import(page: Page, console: Console, tmp_path: Path) -> None:
    path = tmp_path / "few.csv"
    path.write_text("id,label\n1,a\n2,b\n")
    goto(page, console, "transfer", ns=E2E_NAMESPACE)
    set_read_only(page, True)
    panel = open_tab(page.get_by_test_id("stMain"), "Import")
    after_rerun(
        page, lambda: panel.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(path)
    )
    expect(
        panel.get_by_text("Importing is disabled: the connection is read-only (sidebar switch).")
    ).to_be_visible()
    expect(panel.get_by_role("button", name="Import", exact=True)).to_be_disabled()
    type_into(panel.get_by_label(f"New table name (in {E2E_NAMESPACE})"), "never_made")
    expect(panel.get_by_role("button", name="Import", exact=True)).to_be_disabled()
