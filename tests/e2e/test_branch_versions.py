"""Versions on a branch in the browser (``?branch=dev``): the branch's versions and where it was
made from, its change log, and "Compare with parent" with the changed rows and cells; each
figure is checked against the versions read with lance and compared with pyarrow."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import lance
import pyarrow as pa
from playwright.sync_api import Locator, Page, expect

from backend.services import branches
from tests.support import create_table, table_location

from .harness import Console, fresh_namespace, goto, metric, open_lazy, submit, widget


def _main(page: Page) -> Locator:
    return page.get_by_test_id("stMain")


def test_a_branch_compared_with_its_parent(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    namespace = fresh_namespace(console, prefix="br")
    ns = console.client()
    tid = [namespace, "t"]
    create_table(ns, tid, pa.table({"id": list(range(6)), "item": [f"i{i}" for i in range(6)]}))
    branches.create_branch(ns, tid, "dev")  # dev v1, made from main v1
    uri = str(table_location(ns, tid))
    dev = lance.dataset(uri).checkout_version(("dev", None))
    dev.insert(pa.table({"id": [10, 11], "item": ["new", "new"]}))  # dev v2
    dev.update({"item": "'changed'"}, where="id = 2")  # dev v3
    dev.delete("id = 5")  # dev v4
    lance.dataset(uri).update({"item": "'main only'"}, where="id = 3")  # main v2

    parent = lance.dataset(uri, version=1).to_table()
    latest = lance.dataset(uri).checkout_version(("dev", None)).to_table()
    inserted = latest.join(parent.select(["id"]), "id", join_type="left anti")
    deleted = parent.join(latest.select(["id"]), "id", join_type="left anti")
    assert (inserted.num_rows, deleted.num_rows) == (2, 1)

    goto(page, console, "versions", ns=namespace, table="t", branch="dev")
    main = _main(page)
    expect(main.get_by_text("Branch dev: 4 versions")).to_be_visible()
    expect(main.get_by_text("Made from main v1")).to_be_visible()
    expect(main.get_by_text("act on main only: pick main to use them")).to_be_visible()

    log = open_lazy(main, "Change log: what each version did on branch dev")
    # the grid's cells (a canvas; its cells are the grid's accessible table)
    expect(log.get_by_text("branch created", exact=True)).to_have_count(1)
    expect(log.get_by_text("Branch dev was made from main at version 1")).to_be_visible()
    shot("change-log")

    form = main.get_by_test_id("stForm").filter(has_text="Which rows branch dev changed")
    box = widget(form, "stMultiSelect", "Key columns")
    combo = box.get_by_role("combobox")
    combo.click()
    combo.press_sequentially("id")  # typing opens the list inside a form (a click may not)
    page.get_by_role("option", name="id", exact=True).click()
    page.keyboard.press("Escape")
    submit(page, form.get_by_role("button", name="Compare with parent"))
    expect(metric(main, "Inserted")).to_have_text(str(inserted.num_rows))
    expect(metric(main, "Updated")).to_have_text("1")  # id 2; main's id 3 is not the branch's
    expect(metric(main, "Deleted")).to_have_text(str(deleted.num_rows))
    expect(main.get_by_text("main v1 → dev v4, compared on the key id")).to_be_visible()
    shot("compare-with-parent")
