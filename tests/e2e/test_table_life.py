"""A table's whole life in the browser: schema changes (Namespaces & tables), row edits, the
change log and the row-level compare (Versions), branches (Versions).

Each test makes its own table through the backend (in this module's namespace), so the tests
stay independent; every figure on screen is checked against the table read with lance and
computed with pyarrow.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pytest
from playwright.sync_api import Locator, Page, expect

from components import state
from tests.support import append_rows, create_table, table_location

from .harness import (
    Console,
    after_rerun,
    choose,
    fits_width,
    fresh_namespace,
    goto,
    grid,
    grid_cells,
    grid_row,
    grid_rows,
    key,
    keyed_grid,
    manage_versions,
    metric,
    open_expander,
    open_lazy,
    open_tab,
    pick_in_form,
    pick_many,
    section,
    set_checkbox,
    settle,
    submit,
    type_into,
    widget,
)

ROWS = 12


def base_rows(n: int = ROWS) -> pa.Table:
    """id, name, price (positive: doubling changes every price), qty (1..5)."""
    ids = list(range(n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": [f"item{i}" for i in ids],
            "price": pa.array([1.5 + i for i in ids], pa.float64()),
            "qty": pa.array([i % 5 + 1 for i in ids], pa.int64()),
        }
    )


# One table per test, each made through the backend before any page of this module is loaded
# (the console keeps a namespace's table list for a while: a table made later in the session
# would not be listed yet).
TABLES = ("schema", "rows", "branches")


@pytest.fixture(scope="module")
def life_tables(console_local: Console) -> dict[str, list[str]]:
    """This module's namespace with its tables (``TABLES``), each holding :func:`base_rows`."""
    namespace = fresh_namespace(console_local, prefix="life")
    ns = console_local.client()
    made = {}
    for name in TABLES:
        made[name] = [namespace, name]
        create_table(ns, made[name], base_rows())
    # "branches": v2 and v3 append a few rows each (an engine's writes)
    append_rows(ns, made["branches"], base_rows(3).set_column(0, "id", pa.array([20, 21, 22])))
    append_rows(ns, made["branches"], base_rows(2).set_column(0, "id", pa.array([30, 31])))
    return made


def location(console: Console, table_id: list[str]) -> str:
    return str(table_location(console.client(), table_id))


def at(console: Console, table_id: list[str], version: int | None = None) -> pa.Table:
    """The table's rows at ``version`` (latest: ``None``), read with lance, by id."""
    return lance.dataset(location(console, table_id), version=version).to_table().sort_by("id")


def by_key(old: pa.Table, new: pa.Table, key: str = "id") -> dict[str, Any]:
    """Inserted / deleted keys (pyarrow anti-joins) and the changed columns of each updated key
    (the rows of each key compared in Python)."""
    inserted = new.join(old.select([key]), key, join_type="left anti").column(key).to_pylist()
    deleted = old.join(new.select([key]), key, join_type="left anti").column(key).to_pylist()
    before = {r[key]: r for r in old.to_pylist()}
    common = [c for c in new.column_names if c in old.column_names and c != key]
    updated: dict[Any, list[str]] = {}
    for r in new.to_pylist():
        if r[key] in before:
            diff = [c for c in common if r[c] != before[r[key]][c]]
            if diff:
                updated[r[key]] = diff
    return {"inserted": sorted(inserted), "deleted": sorted(deleted), "updated": updated}


def as_shown(text: str) -> re.Pattern[str]:
    """``text`` exactly, as markdown shows it (``components.feedback.as_text`` keeps ``>=``
    and ``<=`` from becoming symbols with a zero-width space after them)."""
    return re.compile("^" + re.sub(r"(>=|<=)", "\\1\u200b?", re.escape(text)) + "$")


def _main(page: Page) -> Locator:
    return page.get_by_test_id("stMain")


def alert(scope: Locator, text: str) -> Locator:
    return scope.get_by_test_id("stAlert").filter(has_text=text)


def schema_tab(box: Locator, name: str) -> Locator:
    """The Schema panel's tab ``name`` (its open tab is kept per table: a click reruns)."""
    found: list[Locator] = []
    tab = box.get_by_role("tab", name=name)
    if tab.get_attribute("aria-selected") == "true":
        return box.get_by_role("tabpanel").filter(visible=True)
    after_rerun(box.page, lambda: found.append(open_tab(box, name)))
    return found[0]


def expect_columns(schema_grid: Locator, names: list[str]) -> None:
    """The table's schema grid lists exactly ``names``, in order."""
    expect(grid_rows(schema_grid)).to_have_count(len(names))
    for i, name in enumerate(names):
        expect(grid_cells(grid_rows(schema_grid).nth(i)).first).to_have_text(name)


# --------------------------------------------------------------------------- schema


def test_schema_add_rename_drop(
    page: Page, console: Console, life_tables: dict[str, list[str]], shot: Callable[..., Path]
) -> None:
    table = life_tables["schema"]
    namespace, name = table
    goto(page, console, "tables", ns=namespace, table=name)
    main = _main(page)
    box = open_lazy(main, "Schema: add, alter or drop columns")
    rows = at(console, table).num_rows

    # --- add a column from a SQL expression ---
    add = schema_tab(box, "Add a column")
    type_into(add.get_by_label("New column", exact=True), "total")
    type_into(add.get_by_label("SQL expression", exact=True), "price * qty")
    submit(page, add.get_by_role("button", name="Preview"))
    expect(add.get_by_text(f"rewrites {rows} rows", exact=False)).to_be_visible()
    preview = grid(add)
    expect(preview.locator("table thead th")).to_have_text(["Column", "Type", "Nullable", "Change"])
    expect(grid_row(preview, "total")).to_contain_text("added: price * qty")
    shot("add-preview")
    after_rerun(page, add.get_by_role("button", name="Apply").click)
    expect(alert(main, "Added 1 column (total) as v2.")).to_be_visible()
    data = at(console, table)
    assert data.column("total").equals(
        pc.multiply(data["price"], pc.cast(data["qty"], pa.float64()))
    )
    # the table's details: their first grid is the schema (its default tab)
    schema_grid = grid(main.locator(key(state.Tables.DETAIL_BOX)))
    total_type = np.dtype(data.schema.field("total").type.to_pandas_dtype()).name
    expect(grid_cells(grid_row(schema_grid, "total")).nth(1)).to_have_text(total_type)
    # the form starts afresh
    expect(add.get_by_label("New column", exact=True)).to_have_value("")
    # the list above shows the table's new version once its figures are read again (the
    # old ones stayed until the next click)
    listing = keyed_grid(main, "tables.list.grid.")
    # the Version column's place among the header's cells (waits for the header to be drawn)
    version_th = listing.locator("table thead th").filter(has_text=re.compile(r"^\s*Version\s*$"))
    column = int(version_th.evaluate("th => Array.from(th.parentElement.children).indexOf(th)"))
    expect(grid_cells(grid_row(listing, name)).nth(column)).to_have_text("2")
    shot("added")

    # --- rename a column ---
    alter = schema_tab(box, "Alter a column")
    pick_in_form(alter, "Column", "name")
    type_into(alter.get_by_label("New name", exact=True), "label")
    submit(page, alter.get_by_role("button", name="Preview"))
    expect(alter.get_by_text("rewrites no row (the schema only)", exact=False)).to_be_visible()
    shot("rename-preview")
    after_rerun(page, alter.get_by_role("button", name="Apply").click)
    expect(alert(main, "Altered 1 column (name) as v3.")).to_be_visible()
    expect_columns(schema_grid, at(console, table).column_names)  # label where name was
    shot("renamed")

    # --- drop a column ---
    drop = schema_tab(box, "Drop columns")
    pick_many(drop, "Columns to drop", ["qty"])
    submit(page, drop.get_by_role("button", name="Preview"))
    shot("drop-preview")
    after_rerun(page, drop.get_by_role("button", name="Apply").click)
    expect(alert(main, "Dropped 1 column (qty) as v4.")).to_be_visible()
    final = at(console, table)
    assert final.column_names == ["id", "label", "price", "total"]
    expect_columns(schema_grid, final.column_names)
    shot("dropped")

    # --- the data, as Search & tune shows it ---
    goto(page, console, "search", ns=namespace, table=name, tab="preview")
    main = _main(page)
    data_grid = grid(main)
    expect(data_grid.locator("table thead th")).to_have_text(final.column_names)
    stored = lance.dataset(location(console, table)).to_table()  # the preview's order
    for i, row in enumerate(stored.slice(0, 5).to_pylist()):
        cells = grid_cells(grid_rows(data_grid).nth(i))
        expect(cells.first).to_have_text(str(row["id"]))
        expect(cells.nth(1)).to_have_text(row["label"])
        expect(cells.nth(3)).to_have_text(f"{row['total']:g}")
    shot("data")


# --------------------------------------------------------------------------- rows and history


def csv_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pacsv.write_csv(table, sink)
    return sink.getvalue()


def upload(scope: Locator, name: str, data: bytes) -> None:
    """Hand ``data`` to the file uploader in ``scope`` as the file ``name``; wait for the run."""
    field = scope.get_by_test_id("stFileUploaderDropzoneInput")
    after_rerun(
        scope.page,
        lambda: field.set_input_files({"name": name, "mimeType": "text/csv", "buffer": data}),
    )


def test_update_upsert_change_log_and_row_compare(
    page: Page, console: Console, life_tables: dict[str, list[str]], shot: Callable[..., Path]
) -> None:
    table = life_tables["rows"]
    namespace, name = table
    v1 = at(console, table, 1)
    goto(page, console, "versions", ns=namespace, table=name)
    main = _main(page)

    # --- update rows: a previewed count, then the new values ---
    panel = manage_versions(page, "Update rows")
    type_into(panel.get_by_label("SET", exact=True), "price = price * 2")
    type_into(panel.get_by_label("WHERE (filter)", exact=True), "qty >= 3")
    submit(page, panel.get_by_role("button", name="Preview"))
    hit = pc.greater_equal(v1["qty"], 3)
    matched = pc.sum(hit).as_py()
    expect(panel.get_by_text(as_shown(f"{matched} rows match qty >= 3."))).to_be_visible()
    sample = grid(panel)
    expect(sample.locator("table thead th")).to_have_text(
        ["id", "name", "price", "new price", "qty"]
    )
    expect(grid_rows(sample)).to_have_count(matched)
    for i, row in enumerate(v1.filter(hit).to_pylist()):  # the old value and the new one
        cells = grid_cells(grid_rows(sample).nth(i))
        expect(cells.first).to_have_text(str(row["id"]))
        expect(cells.nth(2)).to_have_text(f"{row['price']:g}")
        expect(cells.nth(3)).to_have_text(f"{row['price'] * 2:g}")
    shot("update-preview")
    submit(page, panel.get_by_role("button", name=f"Apply to {matched} rows"))
    expect(alert(main, "as v2")).to_be_visible()
    v2 = at(console, table, 2)
    assert v2["price"].equals(pc.if_else(hit, pc.multiply(v1["price"], 2.0), v1["price"]))
    shot("updated")

    # --- upsert from a CSV: a dry run with each clause's count, then apply ---
    keep = [0, 1, 2, 3]
    file_rows = pa.concat_tables(
        [
            v2.filter(pc.is_in(v2["id"], pa.array(keep, pa.int64())))
            .set_column(1, "name", pa.array([f"new{i}" for i in keep]))
            .set_column(2, "price", pa.array([100.0 + i for i in keep])),
            pa.table(
                {
                    "id": pa.array([100, 101], pa.int64()),
                    "name": ["add100", "add101"],
                    "price": [7.25, 8.5],
                    "qty": pa.array([2, 4], pa.int64()),
                }
            ),
        ]
    )
    panel = manage_versions(page, "Upsert from a file")
    upload(panel, "changes.csv", csv_bytes(file_rows))
    expect(
        panel.get_by_text(
            f"changes.csv: {file_rows.num_rows} rows, columns {', '.join(file_rows.column_names)}."
        )
    ).to_be_visible()
    pick_many(panel, "Key columns", ["id"])
    settle(page)
    set_checkbox(panel, "Delete rows the file lacks", True)
    submit(page, panel.get_by_role("button", name="Dry run"))
    truth = by_key(v2, file_rows)
    expect(metric(panel, "Rows updated")).to_have_text(str(len(truth["updated"])))
    expect(metric(panel, "Rows inserted")).to_have_text(str(len(truth["inserted"])))
    expect(metric(panel, "Rows deleted")).to_have_text(str(len(truth["deleted"])))
    shot("upsert-dry-run")
    submit(page, panel.get_by_role("button", name="Apply"))
    expect(alert(main, "as v3")).to_be_visible()
    v3 = at(console, table, 3)
    assert v3.equals(file_rows.sort_by("id").cast(v3.schema))
    shot("upserted")

    # --- the change log of those versions ---
    log = grid(open_lazy(main, "Change log: what each version did"))
    expect(grid_rows(log)).to_have_count(3)
    expected_rows = {1: v1.num_rows, 2: v2.num_rows, 3: v3.num_rows}
    for version, rows in expected_rows.items():
        cells = grid_cells(grid_rows(log).nth(3 - version))
        expect(cells.first).to_have_text(str(version))
        expect(cells.nth(5)).to_have_text(str(rows))
    # v2, the update: its rows updated as pyarrow counts them
    update_step = by_key(v1, v2)
    cells = grid_cells(grid_rows(log).nth(1))
    expect(cells.nth(1)).to_have_text("update")
    expect(cells.nth(2)).to_have_text(str(len(update_step["inserted"])))
    expect(cells.nth(3)).to_have_text(str(len(update_step["deleted"])))
    expect(cells.nth(4)).to_have_text(str(len(update_step["updated"])))
    # v3, the upsert with all three clauses: which of its rows were updates its fragments
    # cannot tell; the log says so instead of guessing, and points at the row compare
    cells = grid_cells(grid_rows(log).nth(0))
    expect(cells.nth(1)).to_have_text("merge insert")
    for i in (2, 3, 4):
        expect(cells.nth(i)).to_have_text("")  # drawn as — (a missing value)
    expect(
        main.get_by_text(
            re.compile(r"^v3: a merge insert with all three clauses .* compare rows on id")
        )
    ).to_be_visible()
    assert fits_width(log), "the change log is wider than its panel"
    shot("change-log")

    # --- row-level compare: refused without a key (no stable row ids), then by key ---
    panel = manage_versions(page, "Compare")
    compare_rows(page, panel, 1, 2, [])
    expect(alert(panel, "stable row ids")).to_be_visible()
    expect(metric(panel, "Inserted")).to_have_count(0)  # never "no changes"
    shot("compare-refused")
    compare_rows(page, panel, 1, 2, ["id"])
    expect(panel.get_by_text("v1 → v2, compared on the key id.")).to_be_visible()
    expect_counts(panel, update_step)
    rows = grid(panel)
    expect(grid_rows(rows)).to_have_count(len(update_step["updated"]))
    expect(rows.locator("table thead th")).to_have_text(["changed", *v2.column_names])
    by_id = {r["id"]: r for r in v2.to_pylist()}
    for i, row_id in enumerate(sorted(update_step["updated"])):  # by the key
        cells = grid_cells(grid_rows(rows).nth(i))
        expect(cells.nth(1)).to_have_text(str(row_id))
        expect(cells.first).to_have_text(", ".join(update_step["updated"][row_id]))
        expect(cells.nth(3)).to_have_text(f"{by_id[row_id]['price']:g}")  # the new value
    shot("compare-update")

    compare_rows(page, panel, 2, 3, ["id"])
    upsert_step = by_key(v2, v3)
    expect_counts(panel, upsert_step)
    kinds = panel.get_by_test_id("stButtonGroup")
    after_rerun(page, kinds.get_by_text("Deleted", exact=True).click)
    rows = grid(panel)
    expect(grid_rows(rows)).to_have_count(len(upsert_step["deleted"]))
    shown = [
        int(grid_cells(grid_rows(rows).nth(i)).first.inner_text())
        for i in range(len(upsert_step["deleted"]))
    ]
    assert shown == upsert_step["deleted"]  # by the key
    shot("compare-upsert")


def compare_rows(page: Page, panel: Locator, a: int, b: int, key: list[str]) -> None:
    """The row compare form: from ``a`` to ``b`` on the ``key`` columns (none: lance's delta)."""
    type_into(panel.get_by_label("From version", exact=True), str(a))
    type_into(panel.get_by_label("To version", exact=True), str(b))
    picked = widget(panel, "stMultiSelect", "Key columns")
    for chip in picked.get_by_role("button", name=re.compile(r"^Remove ")).all():
        chip.click()
    pick_many(panel, "Key columns", key)
    submit(page, panel.get_by_role("button", name="Compare rows"))


def expect_counts(panel: Locator, step: dict[str, Any]) -> None:
    expect(metric(panel, "Inserted")).to_have_text(str(len(step["inserted"])))
    expect(metric(panel, "Updated")).to_have_text(str(len(step["updated"])))
    expect(metric(panel, "Deleted")).to_have_text(str(len(step["deleted"])))


# --------------------------------------------------------------------------- branches


def test_branch_create_pick_and_delete(
    page: Page, console: Console, life_tables: dict[str, list[str]], shot: Callable[..., Path]
) -> None:
    table = life_tables["branches"]
    namespace, name = table
    main_ds = lance.dataset(location(console, table))
    assert main_ds.version == 3 and not main_ds.branches.list()  # the premise
    goto(page, console, "versions", ns=namespace, table=name)
    main = _main(page)
    picker = widget(main, "stSelectbox", "Branch").get_by_role("combobox")
    badge = main.get_by_text("Reads and writes on this page act on the table's main branch.")
    expect(main.get_by_text("Branches (0)")).to_be_visible()
    versions_list = grid(main)  # closed, the Branches panel holds no grid
    expect(grid_row(versions_list, "3")).to_have_attribute("aria-selected", "true")  # shown
    expect(badge).to_have_count(0)  # main is the only branch: nothing to say which
    expect(picker).to_have_count(0)  # nothing to pick while main is the only branch

    # --- create dev from main at version 2 ---
    box = open_lazy(main, "Branches (0)")
    expect(box.get_by_text("This table has no branch besides main.")).to_be_visible()
    create = open_tab(box, "Create")
    type_into(create.get_by_label("New branch name", exact=True), "dev")
    type_into(create.get_by_label("At version (empty: its latest)", exact=True), "2")
    shot("create-form")
    submit(page, create.get_by_role("button", name="Create branch"))
    expect(
        alert(main, "Created branch dev from main at version 2: main version 2.")
    ).to_be_visible()
    made = lance.dataset(location(console, table)).branches.list()
    assert set(made) == {"dev"} and made["dev"]["parent_version"] == 2
    box = open_expander(main, "Branches (1)")
    listing = grid(box)
    row = grid_cells(grid_row(listing, "dev"))
    expect(row.nth(1)).to_have_text(made["dev"]["parent_branch"] or "main")
    expect(row.nth(2)).to_have_text(str(made["dev"]["parent_version"]))
    shot("created")
    expect(picker).to_have_value("main")  # a branch besides main: the box to pick it

    # --- pick it: its versions ---
    choose(main, "Branch", "dev")
    expect(page).to_have_url(re.compile(r"[?&]branch=dev(&|$)"))
    on_dev = [
        v["version"]
        for v in lance.dataset(location(console, table)).checkout_version(("dev", None)).versions()
    ]
    expect(main.get_by_role("heading", name=f"Branch dev: {len(on_dev)} version")).to_be_visible()
    versions = grid(section(main, f"Branch dev: {len(on_dev)} version"))
    expect(versions.locator("table thead th")).to_have_text(
        ["Version", "Created (UTC)", "Manifest bytes"]
    )
    expect(grid_rows(versions)).to_have_count(len(on_dev))
    for i, version in enumerate(sorted(on_dev, reverse=True)):
        expect(grid_cells(grid_rows(versions).nth(i)).first).to_have_text(str(version))
    shot("picked")

    # --- delete it: the typed confirmation first ---
    box = open_expander(main, "Branches (1)")
    delete = open_tab(box, "Delete")
    expect(widget(delete, "stSelectbox", "Branch to delete").get_by_role("combobox")).to_have_value(
        "dev"
    )
    confirm = delete.get_by_label("Type the branch name dev to confirm", exact=True)
    type_into(confirm, "de")
    submit(page, delete.get_by_role("button", name="Delete branch"))
    expect(alert(main, "Branch not deleted: type dev exactly to confirm.")).to_be_visible()
    assert set(lance.dataset(location(console, table)).branches.list()) == {"dev"}
    shot("delete-refused")
    delete = open_tab(open_expander(main, "Branches (1)"), "Delete")
    type_into(delete.get_by_label("Type the branch name dev to confirm", exact=True), "dev")
    submit(page, delete.get_by_role("button", name="Delete branch"))
    expect(alert(main, "Deleted branch dev.")).to_be_visible()
    assert lance.dataset(location(console, table)).branches.list() == {}
    expect(main.get_by_text("Deleted branch dev.")).to_be_visible()
    expect(main.get_by_text("stale link")).to_have_count(0)  # the page returned to main itself
    # main's list is drawn anew and selects the version shown (v3), as on a load
    expect(grid_row(grid(main), "3")).to_have_attribute("aria-selected", "true")
    expect(page).not_to_have_url(re.compile(r"[?&]branch="))
    expect(badge).to_have_count(0)  # the deleted branch's page falls back to main, alone again
    expect(picker).to_have_count(0)  # main alone again: no box
    expect(main.get_by_test_id("stExpander").filter(has_text="Branches (0)")).to_have_count(1)
    shot("deleted")
