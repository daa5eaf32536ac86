"""HTTP inspector: the REST client's exchanges (redacted) with copy-as-curl; not applicable on
the local backend."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .harness import (
    E2E_NAMESPACE,
    Console,
    after_rerun,
    choose,
    follow_link,
    goto,
    grid,
    grid_rows,
    key,
    open_dialog,
    open_menu,
    submit,
    type_into,
)


@pytest.mark.parametrize("backend_kind", ["rest"])
def test_inspector_shows_rest_exchanges(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    name = f"insp_{uuid.uuid4().hex[:8]}"
    # Start from an empty log (reads may be served from the console's cache, writes never are).
    goto(page, console, "inspector")
    main = page.get_by_test_id("stMain")
    after_rerun(page, main.locator(key("insp.clear")).get_by_role("button").click)
    expect(main.get_by_text("No requests yet")).to_be_visible()

    # A write on another page...
    goto(page, console, "tables", ns=E2E_NAMESPACE)
    form = open_dialog(open_menu(main, "Add a table"), "Declare a table")
    type_into(form.get_by_label("Table name", exact=True), name)
    submit(page, form.get_by_role("button", name="Declare table"))
    expect(main.get_by_text(f"Declared table {E2E_NAMESPACE} › {name}.")).to_be_visible()

    # ... is listed in the inspector with its method, URL and status.
    inspector = page.get_by_test_id("stSidebarNav").get_by_role("link", name="HTTP inspector")
    follow_link(page, inspector, f"{console.url}/inspector")
    rows = grid_rows(grid(main))
    declare = rows.filter(has_text="declare_table")
    expect(declare).to_have_count(1)
    expect(declare).to_contain_text("POST")
    expect(declare).to_contain_text(f"/v1/table/{E2E_NAMESPACE}")
    expect(declare).to_contain_text("200")

    # Its detail: status line, the request body with the table id, a curl command.
    choose(main, "Exchange", re.compile(r"POST \S+/declare"))
    expect(main.get_by_test_id("stAlert").first).to_contain_text("→ 200")
    expect(main.get_by_test_id("stJson").filter(has_text=name).first).to_be_visible()
    curl = main.get_by_test_id("stCode").filter(has_text="curl")
    expect(curl).to_contain_text(
        f"-X POST {console.target}/v1/table/{E2E_NAMESPACE}%24{name}/declare"
    )
    expect(curl).to_contain_text(f"""--data-raw '{{"id":["{E2E_NAMESPACE}","{name}"]}}'""")
    shot()


@pytest.mark.parametrize("backend_kind", ["local"])
def test_inspector_not_applicable_on_local(page: Page, console: Console) -> None:
    goto(page, console, "inspector")
    expect(page.get_by_test_id("stMain").get_by_text("Not applicable")).to_be_visible()
