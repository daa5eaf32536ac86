"""Indexes: create a full-text index with non-default options and a vector index, see them in
the list and the charts, drop one; validation and the read-only switch."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
from lance.namespace import DescribeTableRequest, DirectoryNamespace
from playwright.sync_api import Locator, Page, expect

from .harness import (
    DOCS_TABLE,
    E2E_NAMESPACE,
    NOTES_TABLE,
    Console,
    after_rerun,
    choose,
    goto,
    grid_rows,
    open_tab,
    set_checkbox,
    set_read_only,
    settle,
    type_into,
    widget,
)
from .marks import ON_BOTH_BACKENDS

BUILD_TIMEOUT_MS = 90_000


def _open(page: Page, console: Console, table: str) -> Locator:
    goto(page, console, "indexes", ns=E2E_NAMESPACE, table=table)
    return page.get_by_test_id("stMain")


def _index_params(console: Console, table: str, index: str) -> dict[str, Any]:
    """The parameters the index was really built with, read from disk."""
    ns = DirectoryNamespace(root=str(console.root))
    location = ns.describe_table(DescribeTableRequest(id=[E2E_NAMESPACE, table])).location
    stats = lance.dataset(location).stats.index_stats(index)
    return stats["indices"][0]["params"]


def _create(page: Page, panel: Locator, index_type: str, name: str) -> None:
    type_into(panel.get_by_label("Index name", exact=True), name)
    after_rerun(
        page, lambda: panel.get_by_role("button", name=f"Create {index_type} index").click()
    )
    # The build runs in the background; the page reruns when it has finished.
    done = (
        page.get_by_test_id("stMain")
        .get_by_test_id("stAlert")
        .filter(has_text=f"Index {name} built in")
    )
    expect(done).to_be_visible(timeout=BUILD_TIMEOUT_MS)
    settle(page)


def index_grid(main: Locator) -> Locator:
    """The indexes grid: the first grid on screen (the build panel above it holds the grids
    of its builds' progress events, in collapsed expanders)."""
    return main.get_by_test_id("stDataFrame").filter(visible=True).first


@ON_BOTH_BACKENDS
def test_create_list_chart_and_drop_indexes(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    suffix = uuid.uuid4().hex[:6]
    fts_name, vec_name = f"text_fts_{suffix}", f"vector_ivf_{suffix}"
    main = _open(page, console, DOCS_TABLE)

    # --- full-text index with non-default options --------------------------------------------
    panel = open_tab(main, "Create an index")
    choose(panel, "Column", "text")
    choose(panel, "Index type", "FTS")
    choose(panel, "Language", "French")
    set_checkbox(panel, "Lower case", False)
    set_checkbox(panel, "Stemming", False)
    set_checkbox(panel, "Positions", True)
    max_len = panel.get_by_label("Max token length", exact=True)
    after_rerun(page, lambda: (max_len.fill("20"), max_len.press("Enter")))
    # The live tokenizer preview follows the options: no lower-casing, no stemming.
    tokens = panel.get_by_test_id("stMarkdownContainer").filter(has_text="Tokens:")
    expect(tokens.locator("code", has_text="Running")).to_have_count(1)
    expect(tokens.locator("code", has_text="Dogs")).to_have_count(1)
    shot("fts-form")
    _create(page, panel, "FTS", fts_name)

    # --- vector index ------------------------------------------------------------------------
    # No reload: after the build's rerun (result message and build panel above the tabs) the
    # open tab stays open, and picking a column keeps it open too.
    create = main.get_by_role("tab", name="Create an index")
    expect(create).to_have_attribute("aria-selected", "true")
    panel = main.get_by_role("tabpanel").filter(visible=True)
    choose(panel, "Column", "vector")
    expect(create).to_have_attribute("aria-selected", "true")
    choose(panel, "Index type", "IVF_FLAT")
    choose(panel, "Distance type", "cosine")
    partitions = panel.get_by_label("num_partitions", exact=True)
    after_rerun(page, lambda: (partitions.fill("4"), partitions.press("Enter")))
    _create(page, panel, "IVF_FLAT", vec_name)

    # --- both listed, both charted -------------------------------------------------------------
    main = _open(page, console, DOCS_TABLE)
    listing = grid_rows(index_grid(main))
    expect(listing.filter(has_text=fts_name)).to_have_count(1)
    expect(listing.filter(has_text=vec_name)).to_have_count(1)
    expect(listing.filter(has_text=vec_name)).to_contain_text("cosine")
    stats = open_tab(main, "Statistics")
    charts = stats.get_by_test_id("stPlotlyChart")
    expect(charts.first).to_be_visible()
    coverage = charts.first
    for name in (fts_name, vec_name):
        expect(coverage.locator("text", has_text=name)).to_have_count(1)
    # Each index has a bar with indexed rows.
    expect(coverage.locator(".bars path").first).to_be_visible()
    shot("listed")

    # The options really reached the index build (the server may ignore them on REST; the
    # RestAdapter's directory implementation applies them).
    params = _index_params(console, DOCS_TABLE, fts_name)
    assert params["language"] == "French"
    assert params["lower_case"] is False
    assert params["stem"] is False
    assert params["with_position"] is True
    assert params["max_token_length"] == 20

    # --- pick indexes in a row; each pick sticks and is kept in the URL -------------------------
    # The picker is bound to ?index= (Streamlit's query-param binding): a pick of the first
    # option, the picker's default, leaves the parameter out of the URL; any other is in it.
    selected = open_tab(main, "Selected index")
    picker = widget(selected, "stSelectbox", "Index").get_by_role("combobox")
    first = picker.input_value()
    for name in (vec_name, fts_name, vec_name):
        choose(selected, "Index", name)
        settle(page)
        expect(picker).to_have_value(name)
        if name == first:
            expect(page).not_to_have_url(re.compile(r"[?&]index="))
        else:
            expect(page).to_have_url(re.compile(rf"[?&]index={name}(&|$)"))
        drop_text = f"Drop index {name}. The table's data is not touched."
        expect(selected.get_by_text(drop_text)).to_be_visible()
    expect(main.get_by_role("tab", name="Selected index")).to_have_attribute(
        "aria-selected", "true"
    )

    # A deep link preselects the index and opens its tab.
    goto(page, console, "indexes", ns=E2E_NAMESPACE, table=DOCS_TABLE, index=fts_name)
    main = page.get_by_test_id("stMain")
    expect(main.get_by_role("tab", name="Selected index")).to_have_attribute(
        "aria-selected", "true"
    )
    selected = main.get_by_role("tabpanel").filter(visible=True)
    expect(widget(selected, "stSelectbox", "Index").get_by_role("combobox")).to_have_value(fts_name)

    # --- drop the vector index -----------------------------------------------------------------
    choose(selected, "Index", vec_name)
    expect(widget(selected, "stSelectbox", "Index").get_by_role("combobox")).to_have_value(vec_name)
    expect(selected.get_by_test_id("stMetric").filter(has_text="Type")).to_contain_text("IVF_FLAT")
    type_into(selected.get_by_label(f"Type {vec_name} to confirm", exact=True), vec_name)
    after_rerun(page, lambda: selected.get_by_role("button", name="Drop index").click())
    expect(
        main.get_by_test_id("stAlert").filter(has_text=f"Index {vec_name} dropped.")
    ).to_be_visible()
    expect(grid_rows(index_grid(main)).filter(has_text=vec_name)).to_have_count(0)
    expect(grid_rows(index_grid(main)).filter(has_text=fts_name)).to_have_count(1)
    shot("dropped")
    # The picker moves to an index that exists: it shows what the details below describe,
    # and the URL no longer names the dropped index.
    expect(page).not_to_have_url(re.compile(rf"[?&]index={vec_name}(&|$)"))
    expect(selected.get_by_test_id("stMetric").filter(has_text="Type")).to_contain_text("FTS")
    expect(widget(selected, "stSelectbox", "Index").get_by_role("combobox")).to_have_value(fts_name)


def test_create_validation_and_read_only(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    main = _open(page, console, NOTES_TABLE)
    panel = open_tab(main, "Create an index")
    choose(panel, "Column", "id")
    choose(panel, "Index type", "BTREE")
    # An invalid name is refused with a readable message, nothing is built.
    type_into(panel.get_by_label("Index name", exact=True), "bad name!")
    after_rerun(page, lambda: panel.get_by_role("button", name="Create BTREE index").click())
    refused = main.get_by_test_id("stAlert").filter(has_text="Not created. Fix these first:")
    expect(refused).to_be_visible()
    expect(refused).to_contain_text("The index name 'bad name!' is not valid: use letters")
    expect(main.get_by_text("This table has no indexes yet")).to_be_visible()
    shot("invalid")

    set_read_only(page, True)
    expect(main.get_by_text("Read-only connection: writes are disabled")).to_be_visible()
    panel = open_tab(main, "Create an index")
    expect(panel.get_by_role("button", name="Create BTREE index")).to_be_disabled()
    expect(widget(panel, "stSelectbox", "Column")).to_be_visible()
