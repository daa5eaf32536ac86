"""Versions: listing with operations, timeline, one version's details, comparing two versions,
delete-range validation and the read-only switch."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from .harness import (
    E2E_NAMESPACE,
    HISTORY_OPERATIONS,
    HISTORY_TABLE,
    Console,
    goto,
    grid,
    grid_cells,
    grid_row,
    grid_rows,
    section,
    set_read_only,
    settle,
    type_into,
)


def _open_history(page: Page, console: Console) -> Locator:
    goto(page, console, "versions", ns=E2E_NAMESPACE, table=HISTORY_TABLE)
    return page.get_by_test_id("stMain")


def test_versions_listing_and_timeline(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    main = _open_history(page, console)
    metrics = main.get_by_test_id("stMetric")
    expect(metrics.filter(has_text="Versions")).to_contain_text("4")
    expect(metrics.filter(has_text="Latest")).to_contain_text("4")
    expect(metrics.filter(has_text="Oldest")).to_contain_text("1")

    rows = grid_rows(grid(section(main, "All versions")))
    # Four versions, newest first, each with its operation.
    expect(rows).to_have_count(4)
    for i, operation in enumerate(reversed(HISTORY_OPERATIONS)):
        expect(grid_cells(rows.nth(i)).first).to_have_text(str(4 - i))
        expect(rows.nth(i)).to_contain_text(operation)

    # The grid is sized to its page (here 4 rows + header; at most 20 rows: tests/ui).
    box = grid(section(main, "All versions")).bounding_box()
    assert box is not None and abs(box["height"] - (35 * 5 + 3)) <= 4, box

    chart = main.get_by_test_id("stVegaLiteChart")
    expect(chart).to_be_visible()
    # Vega-Lite drew one marker per version (SVG below 2,000 points); no Plotly on the page.
    expect(chart.locator("g.mark-symbol.role-mark path")).to_have_count(4)
    expect(main.get_by_test_id("stPlotlyChart")).to_have_count(0)
    shot()


def test_version_details_deep_link(page: Page, console: Console) -> None:
    goto(page, console, "versions", ns=E2E_NAMESPACE, table=HISTORY_TABLE, version="2")
    main = page.get_by_test_id("stMain")
    expect(main.get_by_label("Version", exact=True)).to_have_value("2")
    details = section(main, "Version details")
    expect(details.get_by_test_id("stMetric").filter(has_text="Operation")).to_contain_text(
        "Append"
    )

    # Picking another version updates the details and the URL.
    box = main.get_by_label("Version", exact=True)
    box.fill("3")
    box.press("Enter")
    expect(page).to_have_url(
        f"{console.url}/versions?ns={E2E_NAMESPACE}&table={HISTORY_TABLE}&version=3"
    )
    settle(page)
    expect(details.get_by_test_id("stMetric").filter(has_text="Operation")).to_contain_text(
        "Delete"
    )


def test_compare_two_versions(page: Page, console: Console, shot: Callable[..., Path]) -> None:
    main = _open_history(page, console)
    compare = section(main, "Compare two versions")
    type_into(compare.get_by_label("Version A", exact=True), "1")
    type_into(compare.get_by_label("Version B", exact=True), "4")
    compare.get_by_role("button", name="Compare").click()
    summary = grid(compare)
    expect(summary).to_be_visible()
    settle(page)
    rows_metric = grid_row(summary, "rows")
    expect(grid_cells(rows_metric).nth(1)).to_have_text("5")
    expect(grid_cells(rows_metric).nth(2)).to_have_text("6")
    # v4 added the "doubled" column.
    changes = grid(compare, 1)
    expect(grid_row(changes, "doubled")).to_contain_text("added")
    shot()


def test_delete_versions_validation_and_read_only(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    main = _open_history(page, console)
    delete = section(main, "Delete old versions")
    type_into(delete.get_by_label("Versions to delete", exact=True), "3-4")
    delete.get_by_role("button", name="Delete versions").click()
    expect(
        main.get_by_text("includes the latest version v4, which is never deleted")
    ).to_be_visible()
    settle(page)
    # Nothing was deleted.
    expect(main.get_by_test_id("stMetric").filter(has_text="Versions")).to_contain_text("4")

    set_read_only(page, True)
    expect(main.get_by_text("Read-only connection: writes are disabled")).to_be_visible()
    expect(
        section(main, "Delete old versions").get_by_role("button", name="Delete versions")
    ).to_be_disabled()
    shot()
