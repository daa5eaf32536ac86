"""Namespaces & tables: browse, describe, declare (with validation), read-only switch."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from .harness import (
    DOCS_ROWS,
    DOCS_TABLE,
    DOCS_VERSIONS,
    E2E_NAMESPACE,
    EXPECT_TIMEOUT_MS,
    HISTORY_TABLE,
    NOTES_TABLE,
    SAVED_CONNECTION,
    SCREENSHOTS,
    TABLES_OPENERS,
    Console,
    after_rerun,
    choose,
    click_grid_row,
    close_dialog,
    close_menu,
    fresh_namespace,
    goto,
    grid_row,
    grid_rows,
    key,
    keyed_grid,
    menu_button,
    open_dialog,
    open_expander,
    open_menu,
    read_only_switch,
    set_read_only,
    settle,
    settle_load,
    st_dialog,
    submit,
    type_into,
    widget,
)
from .marks import ON_BOTH_BACKENDS

# Rows of the seeded docs table: DOCS_ROWS at creation + 8 per append.
DOCS_TOTAL_ROWS = DOCS_ROWS + 8 * (DOCS_VERSIONS - 1)


def _main(page: Page):
    return page.get_by_test_id("stMain")


def _tables(page: Page):
    """The grid listing the tables of the namespace shown."""
    return keyed_grid(_main(page), "tables.list.grid.")


# How far (CSS pixels) an element "inside the window" may reach past its edge: the smooth
# scroll can end on a fractional offset (a heading seen 99.6% inside: 0.2 px cut off).
VIEWPORT_SLACK_PX = 1

INSIDE_WINDOW_JS = """
([el, slack]) => {
  const box = el.getBoundingClientRect();
  return box.height > 0 && box.top >= -slack && box.left >= -slack
    && box.bottom <= window.innerHeight + slack && box.right <= window.innerWidth + slack;
}
"""


def _assert_in_viewport(page: Page, element) -> None:
    """``element`` lies inside the window, up to a fraction of a pixel (the page scrolls
    smoothly: waited for, checked at every animation frame)."""
    expect(element).to_be_in_viewport(ratio=0.9)
    handle = element.element_handle()
    try:
        page.wait_for_function(
            INSIDE_WINDOW_JS, arg=[handle, VIEWPORT_SLACK_PX], polling="raf",
            timeout=EXPECT_TIMEOUT_MS,
        )  # fmt: skip
    except PlaywrightTimeoutError:
        box, size = element.bounding_box(), page.viewport_size
        raise AssertionError(f"not inside the window: {box} in {size}") from None


def test_browse_namespace_and_describe_table(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    goto(page, console, "tables")
    main = _main(page)
    # The root lists the e2e namespace; open it by clicking.
    main.locator(key(f"tables.ns.open.{E2E_NAMESPACE}")).get_by_role("button").click()
    expect(main.get_by_text(f"Tables in {E2E_NAMESPACE}")).to_be_visible()
    expect(page).to_have_url(f"{console.url}/tables?ns={E2E_NAMESPACE}")
    settle(page)
    # Compact breadcrumbs: "(root)" and "e2e" side by side.
    crumbs = [main.locator(key(f"tables.crumbs.crumb.{i}")) for i in (0, 1)]
    boxes = [c.bounding_box() for c in crumbs]
    assert boxes[0] and boxes[1]
    assert 0 <= boxes[1]["x"] - (boxes[0]["x"] + boxes[0]["width"]) <= 24, boxes
    assert abs(boxes[0]["y"] - boxes[1]["y"]) < 4, boxes
    tables = _tables(page)
    expect(tables).to_have_count(1)
    for name in (DOCS_TABLE, NOTES_TABLE, HISTORY_TABLE):
        expect(grid_row(tables, name)).to_have_count(1)

    # docs gains versions in other tests; history is only read.
    after_rerun(page, lambda: click_grid_row(tables, HISTORY_TABLE))
    heading = main.get_by_role("heading", name=HISTORY_TABLE, exact=True)
    expect(heading).to_be_visible()
    # The details open below the list: the page scrolls them into view.
    _assert_in_viewport(page, heading)
    expect(page).to_have_url(f"{console.url}/tables?ns={E2E_NAMESPACE}&table={HISTORY_TABLE}")
    settle(page)
    metrics = main.get_by_test_id("stMetric")
    expect(metrics.filter(has_text="Version")).to_contain_text("4")
    expect(metrics.filter(has_text="Rows")).to_contain_text("6")
    expect(metrics.filter(has_text="Columns")).to_contain_text("3")
    expect(main.get_by_text("materialised")).to_be_visible()
    # Schema tab (default) is a grid.
    expect(main.get_by_role("tabpanel").get_by_test_id("stDataFrame")).to_be_visible()
    shot()

    # Another row of the same grid switches the table (the list scrolled back into view).
    tables.scroll_into_view_if_needed()
    after_rerun(page, lambda: click_grid_row(tables, DOCS_TABLE))
    docs = main.get_by_role("heading", name=DOCS_TABLE, exact=True)
    expect(docs).to_be_visible()
    _assert_in_viewport(page, docs)
    expect(page).to_have_url(f"{console.url}/tables?ns={E2E_NAMESPACE}&table={DOCS_TABLE}")


def test_deep_link_selects_table(page: Page, console: Console) -> None:
    goto(page, console, "tables", ns=E2E_NAMESPACE, table=NOTES_TABLE)
    main = _main(page)
    expect(main.get_by_role("heading", name=NOTES_TABLE, exact=True)).to_be_visible()
    expect(main.get_by_test_id("stMetric").filter(has_text="Rows")).to_contain_text("3")


@ON_BOTH_BACKENDS
def test_fragments_are_counted_or_marked_unavailable(page: Page, console: Console) -> None:
    goto(page, console, "tables", ns=E2E_NAMESPACE, table=DOCS_TABLE)
    fragments = _main(page).get_by_test_id("stMetric").filter(has_text="Fragments")
    # docs: one fragment per write (3 at seeding, more when other tests append); REST servers
    # that report no stats say "n/a", never a dash that reads like zero.
    expect(fragments.get_by_test_id("stMetricValue")).to_have_text(
        re.compile(r"^([3-9]|\d\d+|n/a)$")
    )
    if console.kind == "local":
        expect(fragments.get_by_test_id("stMetricValue")).not_to_have_text("n/a")


def test_declare_table(page: Page, console: Console, shot: Callable[..., Path]) -> None:
    name = f"declared_{uuid.uuid4().hex[:8]}"
    goto(page, console, "tables", ns=E2E_NAMESPACE)
    main = _main(page)
    form = open_dialog(open_menu(main, "Add a table"), "Declare a table")

    # Validation first: a name with a space is refused before any call is made.
    type_into(form.get_by_label("Table name", exact=True), "bad name")
    submit(page, form.get_by_role("button", name="Declare table"))
    refused = form.get_by_test_id("stAlert").filter(
        has_text="The table name 'bad name' is not valid"
    )
    expect(refused).to_be_visible()
    expect(refused).to_contain_text("use letters, digits")
    expect(st_dialog(page)).to_be_visible()  # nothing sent: the form stays open

    type_into(form.get_by_label("Table name", exact=True), name)
    submit(page, form.get_by_role("button", name="Declare table"))
    expect(main.get_by_text(f"Declared table {E2E_NAMESPACE} › {name}.")).to_be_visible()
    expect(st_dialog(page)).to_have_count(0)  # closed after the write
    # Listed, selected, described as declared only.
    expect(grid_row(_tables(page), name)).to_have_count(1)
    expect(main.get_by_role("heading", name=name, exact=True)).to_be_visible()
    expect(
        main.locator(".stMarkdownBadge").get_by_text("declared only", exact=True)
    ).to_be_visible()
    expect(page).to_have_url(f"{console.url}/tables?ns={E2E_NAMESPACE}&table={name}")
    shot()


def test_read_only_switch_disables_writes(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    goto(page, console, "tables", ns=E2E_NAMESPACE, table=DOCS_TABLE)
    main = _main(page)
    declare = open_dialog(open_menu(main, "Add a table"), "Declare a table").get_by_role(
        "button", name="Declare table"
    )
    expect(declare).to_be_enabled()
    close_dialog(page)

    set_read_only(page, True)
    expect(page.get_by_test_id("stSidebar").get_by_text("writable")).to_have_count(0)
    expect(main.get_by_text("Read-only connection: writes are disabled")).to_be_visible()
    # The write dialogs cannot be opened; the deregister form's button is disabled.
    for menu, opener in TABLES_OPENERS:
        expect(menu_button(main, menu, opener)).to_be_disabled()
        close_menu(page)
    expect(
        open_expander(main, "Deregister table").get_by_role("button", name="Deregister")
    ).to_be_disabled()
    shot()

    set_read_only(page, False)
    expect(
        open_dialog(open_menu(main, "Add a table"), "Declare a table").get_by_role(
            "button", name="Declare table"
        )
    ).to_be_enabled()


def test_reload_keeps_connection_and_read_only(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    """The connection picker (``?conn=``) and the read-only switch (``?ro=``) are bound to the
    URL: a reload restores both, and writes stay disabled."""
    goto(page, console, "tables")
    sidebar = page.get_by_test_id("stSidebar")
    main = _main(page)
    picker = widget(sidebar, "stSelectbox", "Connection").get_by_role("combobox")
    expect(picker).to_have_value("default")
    choose(sidebar, "Connection", re.compile(rf"^{SAVED_CONNECTION}$"))
    expect(page).to_have_url(re.compile(rf"[?&]conn={SAVED_CONNECTION}(&|$)"))
    expect(
        sidebar.get_by_test_id("stAlert").filter(has_text=f"Connected to {SAVED_CONNECTION}")
    ).to_be_visible()
    set_read_only(page, True)
    expect(page).to_have_url(re.compile(r"[?&]ro=true(&|$)"))
    # Open the e2e namespace: the selection joins the URL too.
    main.locator(key(f"tables.ns.open.{E2E_NAMESPACE}")).get_by_role("button").click()
    expect(main.get_by_text(f"Tables in {E2E_NAMESPACE}")).to_be_visible()
    expect(page).to_have_url(re.compile(rf"[?&]ns={E2E_NAMESPACE}(&|$)"))
    settle(page)
    before = page.url

    page.reload()
    settle_load(page)
    expect(page).to_have_url(before)
    expect(picker).to_have_value(SAVED_CONNECTION)
    expect(read_only_switch(page)).to_be_checked()
    expect(sidebar.get_by_text(re.compile(r"read-only$"))).to_be_visible()  # the status badge
    expect(sidebar.get_by_text("writable", exact=True)).to_have_count(0)
    expect(main.get_by_text(f"Tables in {E2E_NAMESPACE}")).to_be_visible()
    expect(main.get_by_text("Read-only connection: writes are disabled")).to_be_visible()
    for menu, opener in TABLES_OPENERS:
        expect(menu_button(main, menu, opener)).to_be_disabled()
        close_menu(page)
    shot()

    # Switching it off again is kept by the next reload too (the parameter leaves the URL).
    set_read_only(page, False)
    expect(page).not_to_have_url(re.compile(r"[?&]ro="))
    page.reload()
    settle_load(page)
    expect(read_only_switch(page)).not_to_be_checked()
    expect(picker).to_have_value(SAVED_CONNECTION)
    expect(menu_button(main, "Add a table", "Declare a table")).to_be_enabled()


def test_refused_name_is_shown_as_typed(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    """A message naming "a$b" shows both dollar signs as text (Streamlit would read
    ``$...$`` as LaTeX); nothing is created."""
    goto(page, console, "tables", ns=E2E_NAMESPACE)
    main = _main(page)
    form = open_dialog(open_menu(main, "Namespace actions"), "Create a namespace")
    type_into(form.get_by_label("Name", exact=True), "a$b")
    submit(page, form.get_by_role("button", name="Create namespace"))
    refused = form.get_by_test_id("stAlert")
    expect(refused).to_have_count(1)
    expect(refused).to_contain_text(
        "The namespace name 'a$b' contains the delimiter '$', which separates the parts of an id."
    )
    assert refused.inner_text().count("$") == 2, refused.inner_text()
    expect(refused.locator(".katex, math")).to_have_count(0)  # no formula was typeset
    expect(st_dialog(page)).to_be_visible()
    shot()
    close_dialog(page)
    expect(main.get_by_role("button", name="a$b", exact=True)).to_have_count(0)


def test_namespace_tree_selects_a_nested_namespace(page: Page, console: Console) -> None:
    """The tree shows nested namespaces from the root; a click selects one (URL, breadcrumbs,
    tables list), and the node of the selected namespace is marked."""
    parent = fresh_namespace(console, "mid", prefix="tree")
    client = console.client()
    from lance_namespace import CreateNamespaceRequest

    client.create_namespace(CreateNamespaceRequest(id=[parent, "mid", "low"]))
    goto(page, console, "tables")
    main = _main(page)
    after_rerun(page, page.locator(key("conn.refresh")).get_by_role("button").click)
    tree = open_menu(main, "Namespace tree", lazy=True)
    node = tree.locator(key(f"tables.tree.node.{parent}/mid/low")).get_by_role("button")
    expect(node).to_have_text(re.compile(r"low$"))
    # Indented under its parent, which is indented under the root's child.
    boxes = [
        tree.locator(key(f"tables.tree.node.{p}")).bounding_box()
        for p in (parent, f"{parent}/mid", f"{parent}/mid/low")
    ]
    assert all(boxes) and boxes[0]["x"] < boxes[1]["x"] < boxes[2]["x"], boxes
    submit(page, node)  # pressed again if the click landed while the tree was drawn again
    expect(page).to_have_url(f"{console.url}/tables?ns={parent}&ns=mid&ns=low")
    expect(main.get_by_text(f"Tables in {parent} › mid › low")).to_be_visible()
    expect(node.locator("strong")).to_have_text("low")  # the selected node, in bold
    expect(
        tree.locator(key(f"tables.tree.node.{parent}/mid")).get_by_role("button").locator("strong")
    ).to_have_count(0)


def test_a_picked_tables_details_scroll_into_view(page: Page, console: Console) -> None:
    """A long list pushes the details below the fold: a click on a row brings them into view."""
    from lance_namespace import DeclareTableRequest

    name = fresh_namespace(console, prefix="scroll")
    client = console.client()
    for i in range(30):
        client.declare_table(DeclareTableRequest(id=[name, f"t{i:02d}"]))
    goto(page, console, "tables", ns=name)
    main = _main(page)
    tables = _tables(page)
    expect(grid_row(tables, "t00")).to_have_count(1)
    settle(page)
    tables.screenshot(path=str(SCREENSHOTS / "tables-declared-only-figures.png"))  # "—" each
    after_rerun(page, lambda: click_grid_row(tables, "t03"))
    heading = main.get_by_role("heading", name="t03", exact=True)
    expect(heading).to_be_attached()
    _assert_in_viewport(page, heading)
    page.screenshot(path=str(SCREENSHOTS / "tables-picked-details-in-view.png"))  # the window


def test_the_sort_menu_orders_the_list_and_says_the_order(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    """The order is picked in a menu whose button says it; its box is drawn only once the
    menu is open."""
    from lance_namespace import DeclareTableRequest

    name = fresh_namespace(console, prefix="sort")
    client = console.client()
    for table in ("apple", "kiwi", "melon"):
        client.declare_table(DeclareTableRequest(id=[name, table]))
    goto(page, console, "tables", ns=name)
    main = _main(page)
    rows = grid_rows(_tables(page))
    expect(rows.first).to_contain_text("apple")
    expect(widget(main, "stSelectbox", "Sort by")).to_have_count(0)  # inside the closed menu
    menu = open_menu(main, "Name (A to Z)")
    widget(menu, "stSelectbox", "Sort by").get_by_role("combobox").click()
    # the pick reruns the page; the menu's button then says the new order
    after_rerun(page, page.get_by_role("option", name="Name (Z to A)").click)
    expect(rows.first).to_contain_text("melon")
    expect(rows.last).to_contain_text("apple")
    expect(main.get_by_test_id("stPopoverButton").filter(has_text="Name (Z to A)")).to_be_visible()
    shot()
