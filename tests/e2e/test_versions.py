"""Versions: listing with operations, timeline, one version's details, comparing two versions,
delete-range validation and the read-only switch."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import lance
from lance.namespace import DescribeTableRequest, DirectoryNamespace
from playwright.sync_api import Locator, Page, expect

from components import state

from .harness import (
    E2E_NAMESPACE,
    HISTORY_OPERATIONS,
    HISTORY_TABLE,
    NOTES_TABLE,
    Console,
    after_rerun,
    choose,
    click_grid_row,
    fresh_namespace,
    goto,
    grid,
    grid_cells,
    grid_row,
    grid_rows,
    id_rows,
    keyed_grid,
    manage_versions,
    metric,
    open_expander,
    pick_version,
    section,
    set_read_only,
    settle,
    submit,
    type_into,
    version_box,
)


def _open_history(page: Page, console: Console) -> Locator:
    goto(page, console, "versions", ns=E2E_NAMESPACE, table=HISTORY_TABLE)
    return page.get_by_test_id("stMain")


def test_versions_listing_timeline_and_compare(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    main = _open_history(page, console)
    expect(metric(main, "Versions")).to_have_text("4")
    expect(metric(main, "Latest")).to_have_text("4")
    expect(metric(main, "Oldest")).to_have_text("1")

    listing = keyed_grid(main, state.Versions.LIST + ".grid")
    # The columns, in this order (lookup errors only when a lookup failed).
    expect(listing.locator("table thead th")).to_have_text(
        [
            "Version",
            "Operation",
            "Tags",
            "Rows",
            "Created (UTC)",
            "Manifest bytes",
            "Read version",
        ]
    )
    rows = grid_rows(listing)
    # Four versions, newest first, each with its operation.
    expect(rows).to_have_count(4)
    for i, operation in enumerate(reversed(HISTORY_OPERATIONS)):
        expect(grid_cells(rows.nth(i)).first).to_have_text(str(4 - i))
        expect(rows.nth(i)).to_contain_text(operation)

    # The grid is sized to its page (here 4 rows + header; at most 20 rows: tests/ui).
    box = keyed_grid(main, state.Versions.LIST + ".grid").bounding_box()
    assert box is not None and abs(box["height"] - (35 * 5 + 3)) <= 4, box

    # The timeline is drawn once its expander is opened (it would slow every page load).
    expect(main.get_by_test_id("stVegaLiteChart")).to_have_count(0)
    chart = open_expander(main, "Timeline").get_by_test_id("stVegaLiteChart")
    expect(chart).to_be_visible()
    # Vega-Lite drew one marker per version (SVG below 2,000 points); no Plotly on the page.
    expect(chart.locator("g.mark-symbol.role-mark path")).to_have_count(4)
    expect(main.get_by_test_id("stPlotlyChart")).to_have_count(0)
    _assert_tick_labels_readable(console, chart)
    shot()

    # Compare two versions (reads only: on the same load).
    compare = manage_versions(page, "Compare")
    type_into(compare.get_by_label("Version A", exact=True), "1")
    last = compare.get_by_label("Version B", exact=True)
    last.fill("4")
    # submitted from the keyboard: Enter in the form's last field (a pointer click on the
    # submit button was lost once in CI, with both values in place and no run started)
    after_rerun(page, lambda: last.press("Enter"))
    summary = grid(compare)
    expect(summary).to_be_visible()
    settle(page)
    rows_metric = grid_row(summary, "rows")
    expect(grid_cells(rows_metric).nth(1)).to_have_text("5")
    expect(grid_cells(rows_metric).nth(2)).to_have_text("6")
    # v4 added the "doubled" column.
    changes = grid(compare, 1)
    expect(grid_row(changes, "doubled")).to_contain_text("added")
    shot("compare")


def _assert_tick_labels_readable(console: Console, chart: Locator) -> None:
    """The seeded versions are written within a second: the time axis still shows several
    distinct, non-overlapping labels (milliseconds), not one repeated time."""
    span = _history_span_seconds(console)
    assert span < 1.0, f"the premise: the seeded versions are {span:.3f} s apart"
    ticks = chart.locator("g.role-axis-label text")
    expect(ticks.first).to_be_visible()
    labels = chart.element_handle().evaluate(_X_TICKS_JS)
    assert labels is not None, "no x axis in the timeline"
    texts = [label["text"] for label in labels]
    assert len(texts) >= 3, texts
    assert len(set(texts)) == len(texts), f"repeated tick labels: {texts}"
    for text in texts:
        assert re.fullmatch(r"\d\d:\d\d:\d\d\.\d{3}", text), texts
    # Spread along the axis (rotated labels: their boxes may touch, their anchors may not).
    xs = sorted(label["x"] for label in labels)
    assert all(b - a >= 10 for a, b in zip(xs, xs[1:], strict=False)), labels


def test_version_details_deep_link(page: Page, console: Console) -> None:
    # Back to a link that names no version: the box shows the latest again (on Back Streamlit
    # resets a box bound to the URL to its empty default; the page then puts the latest back).
    main = _open_history(page, console)
    expect(version_box(main)).to_have_value("4")
    choose(main, "Namespace", "sandbox")
    expect(page).to_have_url(f"{console.url}/versions?ns=sandbox")
    page.go_back()
    expect(version_box(main)).to_have_value("4")
    expect(metric(section(main, "Version details"), "Operation")).to_have_text("Merge")

    goto(page, console, "versions", ns=E2E_NAMESPACE, table=HISTORY_TABLE, version="2")
    main = page.get_by_test_id("stMain")
    expect(version_box(main)).to_have_value("2")
    details = section(main, "Version details")
    expect(metric(details, "Operation")).to_have_text("Append")

    # Picking another version updates the details and the URL.
    pick_version(main, 3)
    expect(page).to_have_url(
        f"{console.url}/versions?ns={E2E_NAMESPACE}&table={HISTORY_TABLE}&version=3"
    )
    expect(metric(details, "Operation")).to_have_text("Delete")

    # Another namespace picked: one URL change (the table, and the version with it, leave the
    # URL as the namespace changes), so one Back returns to the version shown.
    choose(main, "Namespace", "sandbox")
    expect(page).to_have_url(f"{console.url}/versions?ns=sandbox")
    page.go_back()
    expect(page).to_have_url(
        f"{console.url}/versions?ns={E2E_NAMESPACE}&table={HISTORY_TABLE}&version=3"
    )
    expect(version_box(main)).to_have_value("3")
    expect(metric(details, "Operation")).to_have_text("Delete")

    # Another table picked: one URL change too (the table and the version it opens at, its
    # latest), so one Back returns to the version shown before.
    choose(main, "Table", NOTES_TABLE)
    expect(page).to_have_url(
        re.compile(rf"/versions\?ns={E2E_NAMESPACE}&table={NOTES_TABLE}&version=\d+$")
    )
    page.go_back()
    expect(page).to_have_url(
        f"{console.url}/versions?ns={E2E_NAMESPACE}&table={HISTORY_TABLE}&version=3"
    )
    expect(version_box(main)).to_have_value("3")
    expect(metric(details, "Operation")).to_have_text("Delete")


def test_delete_versions_validation_and_read_only(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    main = _open_history(page, console)
    delete = manage_versions(page, "Delete by range")
    field = delete.get_by_label("Versions to delete", exact=True)
    # Inclusive ranges: 3-4 covers the latest version, v4, which is never deleted.
    type_into(field, "3-4")
    submit(page, delete.get_by_role("button", name="Delete versions"))
    refused = main.get_by_test_id("stAlert").filter(has_text="Nothing deleted.")
    expect(refused).to_contain_text("Range 3-4 covers version 4, the latest version")
    # 2-3 is allowed by the range rule; the typed confirmation is still missing.
    type_into(field, "2-3")
    submit(page, delete.get_by_role("button", name="Delete versions"))
    expect(
        main.get_by_test_id("stAlert").filter(
            has_text=f"Nothing deleted: type {HISTORY_TABLE} exactly to confirm."
        )
    ).to_be_visible()
    expect(main.get_by_text("covers version 4")).to_have_count(0)
    # Malformed input is refused with the syntax.
    type_into(field, "3-2")
    submit(page, delete.get_by_role("button", name="Delete versions"))
    expect(
        main.get_by_test_id("stAlert").filter(has_text="The range 3-2 ends before it starts.")
    ).to_be_visible()
    # Nothing was deleted.
    expect(metric(main, "Versions")).to_have_text("4")

    set_read_only(page, True)
    expect(main.get_by_text("Read-only connection: writes are disabled")).to_be_visible()
    expect(
        manage_versions(page, "Delete by range").get_by_role("button", name="Delete versions")
    ).to_be_disabled()
    shot()


# Visible labels of the timeline's x axis (Vega hides overlapping ones with opacity 0), with
# their boxes on screen.
_X_TICKS_JS = """(chart) => {
  const axis = [...chart.querySelectorAll('g.role-axis')].find(
    (g) => (g.getAttribute('aria-label') || '').startsWith('X-axis'));
  if (!axis) return null;
  return [...axis.querySelectorAll('g.role-axis-label text')]
    .filter((t) => t.getAttribute('opacity') !== '0' && getComputedStyle(t).opacity !== '0')
    .map((t) => { const b = t.getBoundingClientRect();
                  return {text: t.textContent, x: b.x, y: b.y, w: b.width, h: b.height}; });
}"""


def _history_span_seconds(console: Console) -> float:
    """Seconds between the first and the last version of the seeded history table."""
    ns = DirectoryNamespace(root=str(console.root))
    location = ns.describe_table(DescribeTableRequest(id=[E2E_NAMESPACE, HISTORY_TABLE])).location
    stamps = [v["timestamp"] for v in lance.dataset(location).versions()]
    return (max(stamps) - min(stamps)).total_seconds()


def test_click_a_row_and_open_by_tag(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    """A click on a row of the versions list opens that version; "Open by tag" opens a tag's."""
    from backend.services import tags as tagsv
    from tests.support import create_table, table_location

    namespace = fresh_namespace(console, prefix="ver")
    table_id = [namespace, "t"]
    ns = console.client()
    create_table(ns, table_id, id_rows(0, 5))  # v1: 5 rows
    lance.write_dataset(id_rows(5, 3), str(table_location(ns, table_id)), mode="append")  # v2: 8
    tagsv.create_tag(ns, table_id, "gold", 1)
    tagsv.create_tag(ns, table_id, "silver", 2)
    goto(page, console, "versions", ns=namespace, table="t")
    main = page.get_by_test_id("stMain")
    listing = keyed_grid(main, state.Versions.LIST + ".grid")
    expect(grid_row(listing, "gold")).to_contain_text("5")  # v1's tag and row count
    expect(grid_row(listing, "silver")).to_contain_text("8")
    picker = version_box(main)
    expect(picker).to_have_value("2")
    operation = metric(main, "Operation")

    after_rerun(page, lambda: click_grid_row(listing, "gold"))
    expect(picker).to_have_value("1")
    expect(operation).to_contain_text("Overwrite")
    expect(page).to_have_url(re.compile(r"[?&]version=1(&|$)"))
    shot("row-picked")

    choose(main, "Open by tag", "silver")
    expect(picker).to_have_value("2")
    expect(operation).to_contain_text("Append")
    expect(page).to_have_url(re.compile(r"[?&]version=2(&|$)"))
