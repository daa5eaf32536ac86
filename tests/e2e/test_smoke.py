"""Every page renders in a real browser with no traceback, with and without a selected table
(the demo table on every page on both backends); the selection follows the user from page to
page."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .harness import (
    Console,
    close_dialog,
    follow_link,
    goto,
    grid,
    grid_rows,
    key,
    metric,
    open_dialog,
    open_expander,
    open_menu,
    open_tab,
    widget,
)
from .marks import ON_BOTH_BACKENDS

# url_path -> navigation title (app/main.py)
PAGES = {
    "tables": "Namespaces & tables",
    "versions": "Versions",
    "indexes": "Indexes",
    "search": "Search & tune",
    "transactions": "Transactions",
    "inspector": "HTTP inspector",
}
CHARTS = '[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"]'
# The demo's richest table: many versions, several index kinds, lagging coverage.
DEMO_NS, DEMO_TABLE = "stdlib", "symbols"


def _assert_page_renders(page: Page, url_path: str) -> None:
    """Every page's link in the sidebar, and the page's own heading."""
    nav = page.get_by_test_id("stSidebarNav")
    for title in PAGES.values():
        expect(nav.get_by_role("link", name=title)).to_be_visible()
    main = page.get_by_test_id("stMain")
    expect(main.get_by_role("heading", name=PAGES[url_path], exact=True).first).to_be_visible()


@pytest.mark.parametrize("url_path", [p for p in PAGES if p != "tables"])
def test_page_renders(
    page: Page, console: Console, shot: Callable[..., Path], url_path: str
) -> None:
    goto(page, console, url_path)
    _assert_page_renders(page, url_path)
    shot()


def test_tables_page_renders_lists_the_root_and_opens_the_connect_form(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    """The tables page (what ``test_page_renders`` checks of every page), the root's
    namespaces, and the sidebar's "Connect to…" form: checks that only read the page, on one
    load of it."""
    goto(page, console, "tables")
    _assert_page_renders(page, "tables")
    shot()

    # The root lists the demo's namespaces and e2e, in the list of its children and in the
    # namespace tree (drawn once opened).
    main = page.get_by_test_id("stMain")
    expect(main.locator(key("tables.tree.node."))).to_have_count(0)
    tree = open_menu(main, "Namespace tree", lazy=True)
    for namespace in ("e2e", *("$".join(n) for n in console.demo.namespaces if len(n) == 1)):
        for scope, where in (
            (main, f"tables.ns.open.{namespace}"),
            (tree, f"tables.tree.node.{namespace}"),
        ):
            button = scope.locator(key(where)).get_by_role("button", name=namespace, exact=True)
            expect(button).to_be_visible()

    # The sidebar's "Connect to…" form (with its two grids) is rendered only when opened.
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_test_id("stDataFrame")).to_have_count(0)
    expect(sidebar.get_by_label("Folder, object-store URI or REST URL")).to_have_count(0)
    dialog = open_dialog(sidebar, "Connect to…")
    expect(dialog.get_by_label("Folder, object-store URI or REST URL")).to_be_visible()
    expect(dialog.get_by_role("button", name="Connect")).to_be_visible()
    expect(dialog.get_by_test_id("stDataFrame")).to_have_count(2)  # headers, storage options
    close_dialog(page)
    expect(sidebar.get_by_role("button", name="Connect to…")).to_be_visible()


@ON_BOTH_BACKENDS
def test_demo_table_on_every_page(page: Page, console: Console, shot: Callable[..., Path]) -> None:
    """Deep-link to the demo table, then visit every page through the sidebar: the selection
    stays in the URL and each page shows the demo's figures."""
    demo_key = f"{DEMO_NS}${DEMO_TABLE}"
    # ``/`` and ``/tables`` are the same page: a link to ``/`` lands on ``/tables`` with its
    # query (the selection) kept.
    goto(page, console, "", ns=DEMO_NS, table=DEMO_TABLE)
    expect(page).to_have_url(re.compile(rf"/tables\?.*table={DEMO_TABLE}"))
    main = page.get_by_test_id("stMain")
    expect(main.get_by_role("heading", name=DEMO_TABLE, exact=True)).to_be_visible()
    expect(main.get_by_test_id("stMetric").filter(has_text="Rows")).to_contain_text(
        f"{console.demo.rows[demo_key]:,}"
    )
    nav = page.get_by_test_id("stSidebarNav")
    # The inspector is not about a table (its URL drops the selection); the session keeps it,
    # so coming back to Versions restores it.
    for url_path in ("versions", "indexes", "transactions", "inspector", "versions"):
        query = "" if url_path == "inspector" else rf"\?ns={DEMO_NS}&table={DEMO_TABLE}"
        follow_link(
            page,
            nav.get_by_role("link", name=PAGES[url_path]),
            re.compile(rf"^{re.escape(console.url)}/{url_path}{query}"),
        )
        if url_path == "versions":
            expect(metric(main, "Versions")).to_have_text(str(console.demo.versions[demo_key]))
            # The version timeline (drawn once its expander is open; kept open per session).
            expect(open_expander(main, "Timeline").locator(CHARTS).first).to_be_visible()
        elif url_path == "indexes":
            rows = grid_rows(grid(main))
            for name in console.demo.indexes[demo_key]:
                expect(rows.filter(has_text=name)).to_have_count(1)
            # Rows were appended after the index builds: the page says coverage lags.
            expect(main.get_by_text("Index lags behind the data")).to_be_visible()
            # The charts live in the page's "Statistics" tab.
            expect(open_tab(main, "Statistics").locator(CHARTS).first).to_be_visible()
        elif url_path == "transactions":
            field = widget(main, "stTextInput", "Table id").get_by_role("textbox")
            expect(field).to_have_value(f"{DEMO_NS} › {DEMO_TABLE}")
        shot(url_path)
