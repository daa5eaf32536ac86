"""The browser harness's own instruments: the run counter that every wait for a click's rerun
relies on."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from .harness import (
    E2E_NAMESPACE,
    Console,
    close_dialog,
    goto,
    open_dialog,
    open_menu,
    type_into,
    wait_for_app,
)

REFUSALS = 6


def test_each_run_is_counted_once_however_quick(page: Page, console: Console) -> None:
    """A dialog's submit refused in the dialog is a fragment run of a few milliseconds, whose
    start and end reach the page in one render: it never shows as "running". The counter reads
    the server's ScriptFinished message, so every such run counts, and counts once (the
    refusal of each name shown proves the run happened)."""
    goto(page, console, "tables", ns=E2E_NAMESPACE)
    form = open_dialog(
        open_menu(page.get_by_test_id("stMain"), "Namespace actions"), "Create a namespace"
    )
    counted = []
    for i in range(REFUSALS):
        name = f"a$b{i}"
        type_into(form.get_by_label("Name", exact=True), name)
        wait_for_app(page)
        before = page.evaluate("window.__stRuns")
        form.get_by_role("button", name="Create namespace").click()
        expect(form.get_by_test_id("stAlert")).to_contain_text(f"'{name}'")
        wait_for_app(page)
        counted.append(page.evaluate("window.__stRuns") - before)
    assert counted == [1] * REFUSALS
    close_dialog(page)
