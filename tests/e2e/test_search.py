"""Search & tune in the browser, on both backends: data preview, a vector search by row id, its
analyzed plan, a full-text search with highlighted terms, recall, a sweep with its chart and
the cheapest setting, index parameters and maintenance (buttons locally, why not over REST).

The seeded namespace has no table with both a vector and a full-text index, so each backend
gets its own small table, created through the backend the console talks to (the local
directory, or the REST server): 600 rows, 16-d vectors, an IVF_PQ and an FTS index.
"""

from __future__ import annotations

import re
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lance_namespace import CreateTableIndexRequest, CreateTableRequest
from playwright.sync_api import Locator, Page, expect

import backend
from backend.services.tuning.optimize import MAINTENANCE_UNSUPPORTED
from tests.support import append_rows, ipc_stream_bytes, search_rows

from .harness import (
    E2E_NAMESPACE,
    Console,
    after_rerun,
    goto,
    grid,
    grid_rows,
    metric,
    open_tab,
    settle,
    type_into,
)
from .marks import ON_BOTH_BACKENDS

ROWS = 600
TASK_TIMEOUT_MS = 60_000

# backend kind -> the name of its read-only search table (built on first use)
_TABLES: dict[str, str] = {}


def create_search_table(console: Console, name: str, *, lag_rows: int = 0) -> str:
    """``e2e$<name>`` with an IVF_PQ index on ``vec`` and an FTS index on ``text``, through the
    console's own backend; ``lag_rows`` rows appended afterwards leave the indexes behind."""
    table_id = [E2E_NAMESPACE, name]
    ns: Any = backend.connect(console.target)
    try:
        ns.create_table(CreateTableRequest(id=table_id), ipc_stream_bytes(search_rows(ROWS)))
        with warnings.catch_warnings():  # 600 rows are too few for 4 partitions: lance says so
            warnings.simplefilter("ignore", UserWarning)
            ns.create_table_index(
                CreateTableIndexRequest(
                    id=table_id, column="vec", index_type="IVF_PQ", num_partitions=4,
                    num_sub_vectors=4,
                )
            )  # fmt: skip
        ns.create_table_index(
            CreateTableIndexRequest(
                id=table_id, column="text", index_type="FTS", with_position=True
            )
        )
        if lag_rows:
            append_rows(ns, table_id, search_rows(lag_rows, start=ROWS, seed=1))
    finally:
        close = getattr(ns, "close", None)
        if close is not None:
            close()
    return name


def search_table(console: Console) -> str:
    """The backend's shared search table (tests only read it)."""
    if console.kind not in _TABLES:
        _TABLES[console.kind] = create_search_table(console, f"search_{uuid.uuid4().hex[:6]}")
    return _TABLES[console.kind]


def open_search(page: Page, console: Console, table: str, **query: str) -> Locator:
    """The page on ``e2e$<table>``. Listings are cached for a minute: a table this test has
    just created may not be listed yet, and the picker then asks for a table. The sidebar's
    Refresh reads the namespace again (the picker stays empty though: it keeps its "nothing
    picked" state), then the link is opened again."""
    goto(page, console, "search", ns=E2E_NAMESPACE, table=table, **query)
    main = page.get_by_test_id("stMain")
    if main.get_by_text("Pick a table to search it").count():
        refresh = page.get_by_test_id("stSidebar").get_by_role("button", name="Refresh")
        after_rerun(page, refresh.click)
        goto(page, console, "search", ns=E2E_NAMESPACE, table=table, **query)
    expect(main.get_by_role("tab", name="Data preview")).to_be_visible()
    return main


def tab(page: Page, main: Locator, name: str) -> Locator:
    """Open the page's tab ``name`` (a rerun computes it) and return its panel."""
    if main.get_by_role("tab", name=name).get_attribute("aria-selected") == "true":
        return main.get_by_role("tabpanel").filter(visible=True)
    panel: list[Locator] = []
    after_rerun(page, lambda: panel.append(open_tab(main, name)))
    return panel[0]


def click(page: Page, scope: Locator, button: str) -> None:
    after_rerun(page, lambda: scope.get_by_role("button", name=button, exact=True).click())


def fill(scope: Locator, label: str, value: str) -> None:
    type_into(scope.get_by_label(label, exact=True), value)


def alert(scope: Locator, text: str) -> Locator:
    return scope.get_by_test_id("stAlert").filter(has_text=text)


# --------------------------------------------------------------------------------------------


@ON_BOTH_BACKENDS
def test_preview_vector_search_plan_and_full_text(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    table = search_table(console)
    main = open_search(page, console, table)

    # --- data preview ---------------------------------------------------------------------------
    expect(
        main.get_by_text(re.compile(rf"^{ROWS} rows · version \d+ · vector index on vec"))
    ).to_be_visible()
    expect(main.get_by_text(f"{ROWS} rows match · rows 1–50 · latest version")).to_be_visible()
    preview = grid(main)
    expect(preview.locator("table thead th")).to_have_text(["id", "text", "vec"])
    expect(grid_rows(preview).first).to_contain_text("… 16 dims")
    expect(main.get_by_text("Page 1 of 12")).to_be_visible()
    shot("preview")

    # --- vector search by row id ----------------------------------------------------------------
    panel = tab(page, main, "Vector search")
    source = panel.get_by_test_id("stButtonGroup").get_by_text("A row, by id", exact=True)
    after_rerun(page, source.click)
    expect(panel.get_by_label("Row id (id)", exact=True)).to_be_visible()
    fill(panel, "Row id (id)", "5")
    fill(panel, "nprobes", "2")
    click(page, panel, "Search")
    expect(metric(panel, "Rows")).to_have_text("10")
    expect(metric(panel, "p50 latency")).to_have_text(re.compile(r"^\d+\.\d ms$"))
    expect(metric(panel, "p95 latency")).to_have_text(re.compile(r"^\d+\.\d ms$"))
    results = grid(panel)
    expect(results.locator("table thead th").first).to_have_text("_distance")
    expect(grid_rows(results)).to_have_count(10)
    first = grid_rows(results).first.locator("td")
    expect(first.first).to_have_text(re.compile(r"^\d+\.\d+$"))  # a distance
    shot("vector")

    # --- its plan, analyzed -------------------------------------------------------------------------
    panel = tab(page, main, "Query plan")
    expect(panel.get_by_role("radio", name="The last vector search")).to_be_checked()
    click(page, panel, "Analyze")
    expect(metric(panel, "Index used")).to_have_text("yes")
    expect(metric(panel, "Rows scanned")).to_have_text(re.compile(r"^[\d,]+$"))
    expect(metric(panel, "Bytes read")).to_have_text(re.compile(r"\d"))
    expect(metric(panel, "Total time")).to_have_text(re.compile(r"^\d+\.\d\d ms$"))
    expect(panel.get_by_test_id("stPlotlyChart")).to_be_visible()
    expect(grid_rows(grid(panel)).filter(has_text="ANNSubIndex")).to_have_count(1)
    shot("plan")

    # --- full-text search ---------------------------------------------------------------------------
    panel = tab(page, main, "Full-text search")
    fill(panel, "Search for", "running dogs")
    click(page, panel, "Search")
    expect(metric(panel, "Matches shown")).to_have_text("10")
    hits = panel.get_by_test_id("stMarkdownContainer").filter(has_text="BM25")
    expect(hits).to_have_count(10)
    # the matched words are bold and orange (no padded background: the text reads as stored);
    # the others are plain
    marked = hits.first.locator("strong")
    expect(marked.first).to_be_visible()
    expect(marked.first).to_have_text(re.compile(r"^(running|dogs)$"))
    words = {w.lower() for w in hits.locator("strong").all_inner_texts()}
    assert words <= {"running", "dogs"} and words, words
    expect(hits.first.get_by_text(re.compile(r"^BM25 \d+\.\d\d$"))).to_be_visible()
    tokens = panel.get_by_test_id("stMarkdownContainer").filter(has=page.locator("code"))
    expect(tokens.filter(has_text="run").first).to_be_visible()
    expect(panel.locator("code", has_text=re.compile(r"^dog$")).first).to_be_visible()
    shot("fts")

    # --- the full-text query's plan: honest about what each backend planned ----------------------------
    panel = tab(page, main, "Query plan")
    after_rerun(page, lambda: panel.get_by_text("The last full-text search").click())
    click(page, panel, "Analyze")
    if console.kind == "local":
        expect(metric(panel, "Index used")).to_have_text("yes")
        expect(panel.get_by_text("MatchQuery").first).to_be_visible()
    else:
        expect(alert(panel, "This plan has no full-text step")).to_be_visible()
    settle(page)

    # --- back to the vector search: the result is kept, and so is the form that produced it ------
    panel = tab(page, main, "Vector search")
    expect(grid_rows(grid(panel))).to_have_count(10)
    expect(panel.get_by_label("Row id (id)", exact=True)).to_have_value("5")
    expect(panel.get_by_label("nprobes", exact=True)).to_have_value("2")


@ON_BOTH_BACKENDS
def test_recall_and_sweep(page: Page, console: Console, shot: Callable[..., Path]) -> None:
    table = search_table(console)
    main = open_search(page, console, table, tab="recall")

    # --- recall ---------------------------------------------------------------------------------------
    panel = main.get_by_role("tabpanel").filter(visible=True)
    expect(main.get_by_role("tab", name="Recall")).to_have_attribute("aria-selected", "true")
    fill(panel, "Sample (rows)", "20")
    click(page, panel, "Measure recall")
    expect(metric(panel, "recall@10")).to_have_text(re.compile(r"^[01]\.\d{3}$"))
    expect(panel.get_by_text(re.compile(r"^95% interval [01]\.\d{3}-[01]\.\d{3}$"))).to_be_visible()
    expect(metric(panel, "Speed-up")).to_have_text(re.compile(r"×$"))
    expect(panel.get_by_text("20 sampled rows, each searched without itself")).to_be_visible()
    expect(panel.get_by_test_id("stPlotlyChart")).to_have_count(2)
    shot("recall")

    # --- sweep ------------------------------------------------------------------------------------------
    panel = tab(page, main, "Sweep")
    fill(panel, "Sample (rows)", "20")
    fill(panel, "nprobes", "1, 4")
    fill(panel, "refine_factor", "none")
    click(page, panel, "Run the sweep")
    chart = panel.get_by_test_id("stPlotlyChart")
    expect(chart).to_be_visible()
    expect(chart.locator(".scatterlayer .trace").first).to_be_visible()
    expect(chart.get_by_text("Recall against latency")).to_be_visible()
    expect(grid_rows(grid(panel))).to_have_count(2)
    # the target slider down to its minimum (0.50): a setting reaches it
    slider = panel.get_by_role("slider")
    slider.focus()
    after_rerun(page, lambda: slider.press("Home"))
    expect(slider).to_have_value("0.5")
    best = alert(panel, "Cheapest setting reaching recall 0.50")
    expect(best).to_be_visible()
    expect(best).to_contain_text(re.compile(r"nprobes=\d"))
    expect(chart.get_by_text("target 0.50")).to_be_visible()
    expect(chart.get_by_text("cheapest ≥ target")).to_be_visible()  # the legend
    shot("sweep")


@ON_BOTH_BACKENDS
def test_index_parameters_and_maintenance(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    table = create_search_table(console, f"lag_{uuid.uuid4().hex[:6]}", lag_rows=30)
    main = open_search(page, console, table, tab="params")
    panel = main.get_by_role("tabpanel").filter(visible=True)
    expect(main.get_by_role("tab", name="Index parameters")).to_have_attribute(
        "aria-selected", "true"
    )
    params = grid(panel)
    expect(params.locator("table thead th")).to_contain_text(["Parameter", "Requested", "Applied"])
    # lance's record of the build: the PQ sub-vectors on every backend; what this console
    # asked for only where it built the index (here the test did, through its own client)
    expect(grid_rows(params).filter(has_text="num_sub_vectors")).to_have_count(1)
    if console.kind == "local":
        asked = grid_rows(params).filter(has_text="num_partitions")
        expect(asked).to_contain_text("fewer partitions")
        expect(alert(panel, "Applied differs from requested")).to_contain_text("num_partitions 4 →")
    lag = alert(panel, "Index lags behind the data")
    expect(lag).to_contain_text("vec_idx (30 unindexed rows)")
    if console.kind == "rest":
        # the spec has no maintenance operation: a caption says why, no buttons
        expect(panel.get_by_text(MAINTENANCE_UNSUPPORTED)).to_be_visible()
        expect(panel.get_by_role("button", name="Optimize indexes")).to_have_count(0)
        shot("rest-maintenance")
        return
    optimize = panel.get_by_role("button", name="Optimize indexes")
    expect(optimize).to_be_enabled()
    expect(panel.get_by_role("button", name="Compact files")).to_be_enabled()
    shot("lagging")
    click(page, panel, "Optimize indexes")
    done = alert(main, "Optimize indexes: version")
    expect(done).to_be_visible(timeout=TASK_TIMEOUT_MS)
    settle(page)
    expect(alert(main, "Index lags behind the data")).to_have_count(0)
    shot("optimized")
