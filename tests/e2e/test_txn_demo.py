"""The guided transaction demo in a browser, on its own copy of the demo namespace: stage three
changes, audit them, publish them together while a reader watches, kill a commit before its
commit point (recovered: every table unchanged), publish again, and a second writer between
Validate and Commit (refused). Each figure on screen is checked against lance / pyarrow reading
the tables' files, and the whole run stays well under the two minutes a presenter has."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import lance
import pyarrow.compute as pc
from lance.namespace import DescribeTableRequest, DirectoryNamespace
from playwright.sync_api import Locator, Page, expect

from backend.demo import txn_guide as tg
from backend.rules import ids

from .harness import Console, after_rerun, goto, grid, grid_cells, grid_rows, settle

TABLES = [list(t) for t in tg.GUIDE_TABLES[:3]]  # modules, text › functions, symbols
READER = re.compile(r"polls: (\d+) \(([\d.]+) per second\) · mixed states seen: (\d+)")
PRESENTER_SECONDS = 120


def dataset(console: Console, table_id: list[str]) -> lance.LanceDataset:
    ns = DirectoryNamespace(root=str(console.root))
    location = ns.describe_table(DescribeTableRequest(id=table_id)).location
    return lance.dataset(location)


def states(console: Console) -> dict[str, tuple[int, int]]:
    """Each table's (version, rows), read from its files."""
    out = {}
    for t in TABLES:
        ds = dataset(console, t)
        out[ids.display_id(t)] = (ds.version, ds.count_rows())
    return out


def cells(frame: Locator) -> list[list[str]]:
    """Every row of an ``st.dataframe`` as its cells' texts."""
    rows = grid_rows(frame)  # the grid's accessible table (drawn on a canvas, filled soon)
    expect(rows.first).to_be_attached()
    return [
        [c.strip() for c in grid_cells(rows.nth(i)).all_text_contents()]
        for i in range(rows.count())
    ]


def step(page: Page, main: Locator, number: int, summary: str) -> Locator:
    """Press step ``number``; wait for its one-line summary (starting with ``summary``) and for
    its reader to stop polling. A click the browser dropped while the page redrew is pressed
    again (the button is disabled once the step ran, so a step never runs twice)."""
    name = f"{number}. {tg.STEP_TITLES[tg.STEPS[number - 1]]}"
    button = main.get_by_role("button", name=name)
    done = main.get_by_text(re.compile(rf"^{re.escape(summary)}"))
    for _ in range(3):
        expect(button).to_be_visible()
        if button.is_enabled():
            after_rerun(page, button.click)
        try:
            expect(done).to_be_visible(timeout=30_000)
            break
        except AssertionError:
            continue
    expect(done).to_be_visible()
    expect(main.get_by_text("polling…")).to_have_count(0, timeout=30_000)
    settle(page)
    result = main.locator(".st-key-txn-guide_ui-result")
    expect(result).to_have_count(1)
    return result


def reader(result: Locator) -> tuple[int, float, int]:
    line = result.get_by_text(re.compile(r"^Reader · polls: "))
    expect(line).to_have_count(1)
    found = READER.search(line.inner_text())
    assert found, line.inner_text()
    return int(found.group(1)), float(found.group(2)), int(found.group(3))


def filter_value(change: str) -> str:
    found = re.search(r"module = '([^']+)'", change)
    assert found, change
    return found.group(1)


def test_guided_demo(page: Page, console_demo: Console, shot: Callable[..., Path]) -> None:
    console = console_demo
    start = states(console)
    symbols_before = dataset(console, TABLES[2]).to_table(columns=["module"])
    text_before = dataset(console, TABLES[1]).to_table(columns=["id", "module", "doc_length"])
    began = time.monotonic()
    goto(page, console, "transactions", tab="demo")
    main = page.get_by_test_id("stMain")
    expect(main.get_by_role("tab", name="Guided demo")).to_have_attribute("aria-selected", "true")
    shown = ", ".join(ids.display_id(t) for t in TABLES)
    expect(main.get_by_text(f"Tables: {shown} (picked from the demo namespace).")).to_be_visible()

    # 1. Stage: three real changes, none visible to readers
    result = step(page, main, 1, "Three changes staged")
    staged = cells(grid(result))
    assert [r[:2] for r in staged] == [
        [ids.display_id(TABLES[0]), "Append"],
        [ids.display_id(TABLES[1]), "Update"],
        [ids.display_id(TABLES[2]), "Delete"],
    ]
    updated_module, deleted_module = filter_value(staged[1][2]), filter_value(staged[2][2])
    deleted = pc.sum(pc.equal(symbols_before["module"], deleted_module)).as_py()
    updated = pc.sum(pc.equal(text_before["module"], updated_module)).as_py()
    expected_after = {
        ids.display_id(TABLES[0]): start[ids.display_id(TABLES[0])][1] + tg.APPEND_ROWS,
        ids.display_id(TABLES[1]): start[ids.display_id(TABLES[1])][1],
        ids.display_id(TABLES[2]): start[ids.display_id(TABLES[2])][1] - deleted,
    }
    for row in staged:
        version, rows = start[row[0]]
        assert row[3] == f"v{version} → v{version + 1} (uncommitted)", row
        assert (int(row[4]), int(row[5])) == (rows, expected_after[row[0]]), row
    seen = ", ".join(f"{t} v{v} ({n:,} rows)" for t, (v, n) in start.items())
    expect(
        result.get_by_text(f"A reader of the namespace, right after staging: {seen}.")
    ).to_be_visible()
    assert states(console) == start  # nothing published
    shot("1-staged")

    # 2. Audit: the row-level changes, computed independently, and the checks
    result = step(page, main, 2, "Every check held.")
    audit = {r[0]: r for r in cells(grid(result))}
    assert audit[ids.display_id(TABLES[0])][3:6] == [str(tg.APPEND_ROWS), "0", "0"]
    assert audit[ids.display_id(TABLES[1])][3:6] == ["0", str(updated), "0"]
    assert audit[ids.display_id(TABLES[2])][3:6] == ["0", "0", str(deleted)]
    assert {r[6] for r in audit.values()} == {"same as the table's"}
    expect(result.get_by_text("Every check holds: the batch may be published.")).to_be_visible()
    shot("2-audited")

    # 3. Publish, a reader watching: every table at once, no mixed state
    result = step(page, main, 3, "Published together (batch-")
    polls, rate, mixed = reader(result)
    assert polls >= 5 and rate > 1 and mixed == 0, (polls, rate, mixed)
    published = states(console)
    for name, (version, rows) in published.items():
        assert version == start[name][0] + 1 and rows == expected_after[name], name
    table = {r[0]: r for r in cells(grid(result))}
    for name, (version, rows) in published.items():
        assert table[name][2] == str(version) and table[name][4] == str(rows), table[name]
        assert table[name][5] == "published"
    symbols = dataset(console, TABLES[2]).to_table(columns=["module"])
    assert pc.sum(pc.equal(symbols["module"], deleted_module)).as_py() == 0
    text = dataset(console, TABLES[1]).to_table(columns=["id", "module", "doc_length"])
    was = dict(
        zip(text_before["id"].to_pylist(), text_before["doc_length"].to_pylist(), strict=True)
    )
    for i, m, d in zip(*(text[c].to_pylist() for c in ("id", "module", "doc_length")), strict=True):
        assert d == was[i] + (1 if m == updated_module else 0)
    expect(result.locator(".js-plotly-plot")).to_have_count(1)
    shot("3-published")

    # 4. Fail: the committing process killed before its commit point; recovered, unchanged
    result = step(
        page, main, 4, "Killed before the commit point, rolled back: every table unchanged"
    )
    expect(
        result.get_by_text(re.compile(r"^Demo fault: the committing process killed"))
    ).to_be_visible()
    expect(
        result.get_by_text(re.compile(r"^Recovery: transaction batch-\w+ is FAILED"))
    ).to_be_visible()
    expect(result.get_by_text(re.compile(r"^Every table is unchanged: 3 tables"))).to_be_visible()
    expect(
        result.get_by_text(
            "The reader saw: no table's version or row count changed while it watched."
        )
    ).to_be_visible()
    polls, rate, mixed = reader(result)
    assert polls >= 5 and mixed == 0
    assert states(console) == published
    assert {r[5] for r in cells(grid(result))} == {"unchanged"}
    shot("4-killed")

    # 5. Recover: the same staged changes publish after all
    result = step(page, main, 5, "The same changes published after all (batch-")
    assert reader(result)[2] == 0
    recovered = states(console)
    assert all(recovered[n][0] == published[n][0] + 1 for n in recovered), recovered

    # 6. A second writer between Validate and Commit: refused, only its own append landed
    result = step(page, main, 6, "Refused: only the writer's append landed")
    expect(
        result.get_by_text(re.compile(r"^Batch commit failed\. Concurrent modification"))
    ).to_be_visible()
    assert reader(result)[2] == 0
    now = states(console)
    writer = ids.display_id(TABLES[1])
    for name in now:
        if name == writer:
            assert now[name] == (recovered[name][0] + 1, recovered[name][1] + 1), now
        else:
            assert now[name] == recovered[name], name
    shot("6-refused")
    elapsed = time.monotonic() - began
    assert elapsed < PRESENTER_SECONDS, elapsed
