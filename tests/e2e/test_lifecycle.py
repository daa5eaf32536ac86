"""A table's and a namespace's lifecycle in the browser: restore a version
(and browse it in Search & tune), tags with the ``?tag=`` deep link, rename or move (REST:
refused up front), drop vs deregister, and dropping a namespace (RESTRICT names its
children; CASCADE after a typed confirmation; REST: the refusal is said as such).

Every test makes its own namespace (``lc_<hex>``) through the backend the console talks to
(the local directory, or the REST server), so the tests stay independent of each other and
of the seeded data.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

import backend
from backend.services import lifecycle, namespaces
from tests.support import create_table, table_location

from .harness import (
    E2E_NAMESPACE,
    Console,
    after_rerun,
    choose,
    fresh_namespace,
    goto,
    grid_row,
    id_rows,
    keyed_grid,
    manage_versions,
    metric,
    open_lazy,
    open_menu,
    pick_in_form,
    pick_version,
    section,
    settle,
    submit,
    type_into,
    version_box,
    widget,
)
from .harness import (
    grid as first_grid,
)
from .marks import ON_BOTH_BACKENDS


def _main(page: Page) -> Locator:
    return page.get_by_test_id("stMain")


def _client(console: Console) -> Any:
    return backend.connect(console.target)


def three_versions(console: Console, namespace: str, table: str = "t") -> list[str]:
    """``namespace$table``: v1 5 rows, v2 +3 (8 rows), v3 deletes ids < 4 (4 rows)."""
    table_id = [namespace, table]
    ns = _client(console)
    create_table(ns, table_id, id_rows(0, 5))
    ds = lance.write_dataset(id_rows(5, 3), str(table_location(ns, table_id)), mode="append")
    ds.delete("id < 4")
    return table_id


def alert(scope: Locator, text: str) -> Locator:
    return scope.get_by_test_id("stAlert").filter(has_text=text)


# --------------------------------------------------------------------------- versions


def test_restore_makes_a_new_version_with_the_old_content(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    namespace = fresh_namespace(console, prefix="lc")
    three_versions(console, namespace)
    goto(page, console, "versions", ns=namespace, table="t", version="1")
    main = _main(page)
    details = section(main, "Version details")
    expect(metric(details, "Operation")).to_have_text("Overwrite")
    box = open_lazy(main, "Restore this version")
    expect(box).to_contain_text("Restoring makes a new latest version, v4, whose content is v1's")
    submit(page, box.get_by_role("button", name="Restore v1"))
    expect(alert(main, "Not restored: tick the box")).to_be_visible()
    box.get_by_text("I understand: this creates version 4 with the content of v1").click()
    expect(box.get_by_role("checkbox")).to_be_checked()
    shot("confirm")
    submit(page, box.get_by_role("button", name="Restore v1"))

    expect(
        alert(main, f"Restored v1 of {namespace} › t as v4, the new latest version.")
    ).to_be_visible()
    expect(metric(main, "Versions")).to_have_text("4")
    expect(metric(main, "Latest")).to_have_text("4")
    expect(version_box(main)).to_have_value("4")  # the new one is opened
    expect(main.get_by_text("Restore this version")).to_have_count(0)  # the latest: none
    shot("restored")

    # Time travel: the new latest version holds v1's 5 rows (v3 had 4).
    browse = main.get_by_role("button", name="Browse the data at v4")
    expect(browse).to_be_visible()
    after_rerun(page, browse.click)
    expect(page).to_have_url(re.compile(r"/search\?(?=.*[?&]version=4(&|$))(?=.*[?&]tab=preview)"))
    expect(page.get_by_role("heading", name="Search & tune")).to_be_visible()
    expect(_main(page).get_by_text("5 rows match · rows 1–5 · version 4")).to_be_visible()
    shot("preview")


def test_tag_deep_link_and_time_travel(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    namespace = fresh_namespace(console, prefix="lc")
    three_versions(console, namespace)
    goto(page, console, "versions", ns=namespace, table="t", version="2")
    main = _main(page)
    tags = manage_versions(page, "Tags")
    expect(tags.get_by_text("No tags yet.")).to_be_visible()
    type_into(tags.get_by_label("New tag", exact=True), "gold")
    submit(page, tags.get_by_role("button", name="Tag v2"))
    expect(alert(main, f"Tagged v2 of {namespace} › t as gold.")).to_be_visible()
    grid = first_grid(manage_versions(page, "Tags"))
    expect(grid_row(grid, "gold")).to_have_count(1)
    expect(grid_row(grid, "gold")).to_contain_text("2")
    shot("tagged")

    # The deep link opens the tagged version, from a fresh page load.
    goto(page, console, "versions", ns=namespace, table="t", tag="gold")
    main = _main(page)
    expect(version_box(main)).to_have_value("2")
    expect(metric(section(main, "Version details"), "Operation")).to_have_text("Append")
    # ... with the Tags tab open, saying so.
    expect(manage_versions(page, "Tags").get_by_text("v2 is tagged gold.")).to_be_visible()
    shot("deep-link")

    def back_at_the_link() -> None:
        """Back, to the tag link: its version in the box and its details, the tag in the URL."""
        page.go_back()
        expect(version_box(main)).to_have_value("2")
        expect(page).to_have_url(
            re.compile(rf"/versions\?ns={namespace}&table=t&tag=gold(&version=2)?$")
        )
        expect(metric(section(main, "Version details"), "Operation")).to_have_text("Append")

    # Another namespace picked: the tag leaves the URL with the table, in one change, so one
    # Back returns to the tag link, its version shown again (the box bound to the URL, which
    # names no version, is not left empty).
    choose(main, "Namespace", E2E_NAMESPACE)
    expect(page).to_have_url(f"{console.url}/versions?ns={E2E_NAMESPACE}")
    back_at_the_link()
    # Another version picked under the tag link: the URL names it and no longer the tag; Back
    # returns to the link, its version shown again, and Forward to the version picked.
    v3 = f"{console.url}/versions?ns={namespace}&table=t&version=3"
    pick_version(main, 3)
    expect(page).to_have_url(v3)
    back_at_the_link()
    page.go_forward()
    expect(version_box(main)).to_have_value("3")
    expect(page).to_have_url(v3)
    back_at_the_link()
    shot("back-to-link")
    # ... and its data, as it was at v2: 8 rows.
    after_rerun(page, main.get_by_role("button", name="Browse the data at v2").click)
    expect(page).to_have_url(re.compile(r"/search\?(?=.*[?&]version=2(&|$))(?=.*[?&]tab=preview)"))
    expect(_main(page).get_by_text("8 rows match · rows 1–8 · version 2")).to_be_visible()

    # An unknown tag says so, and the latest version is shown.
    goto(page, console, "versions", ns=namespace, table="t", tag="nope")
    main = _main(page)
    expect(alert(main, "The link's tag nope does not exist")).to_be_visible()
    expect(version_box(main)).to_have_value("3")

    # Delete by range says which versions are tagged, and refuses the tagged v2, naming its
    # tag: nothing is deleted and the tag still points at v2.
    deleting = manage_versions(page, "Delete by range")
    expect(deleting.get_by_text("Tagged: v2 (gold).", exact=False)).to_be_visible()
    type_into(deleting.get_by_label("Versions to delete", exact=True), "2")
    typed = deleting.get_by_label("Type the table name t to confirm", exact=True)
    typed.fill("t")
    after_rerun(page, lambda: typed.press("Enter"))
    expect(alert(main, "Tagged versions are in the range: v2 (gold).")).to_be_visible()
    expect(metric(main, "Versions")).to_have_text("3")
    shot("range-refused")

    # Delete the tag (typed confirmation).
    box = manage_versions(page, "Tags")
    pick_in_form(box, "Tag to delete", "gold")
    # submitted from the keyboard: Enter in the form's last field (no click racing a re-render)
    confirm = box.get_by_label("Type the tag name to confirm", exact=True)
    confirm.fill("gold")
    expect(widget(box, "stSelectbox", "Tag to delete").get_by_role("combobox")).to_have_value(
        "gold"
    )  # still picked once the confirmation is typed (a re-render would have emptied it)
    after_rerun(page, lambda: confirm.press("Enter"))
    expect(alert(main, f"Deleted tag gold of {namespace} › t; its version stays.")).to_be_visible()
    expect(manage_versions(page, "Tags").get_by_text("No tags yet.")).to_be_visible()
    expect(metric(main, "Versions")).to_have_text("3")
    shot("deleted")


def test_cleanup_by_policy(page: Page, console: Console, shot: Callable[..., Path]) -> None:
    namespace = fresh_namespace(console, prefix="lc")
    three_versions(console, namespace)
    goto(page, console, "versions", ns=namespace, table="t")
    main = _main(page)
    # The policy form is drawn once its tab is opened (it would slow every page load).
    cleanup = manage_versions(page, "Clean up by policy")
    type_into(cleanup.get_by_label("Keep the newest", exact=True), "1")
    submit(page, cleanup.get_by_role("button", name="Dry run", exact=True))
    expect(alert(cleanup, "deletes 2 versions (1-2), keeps 1 version")).to_be_visible()
    plan = first_grid(cleanup)
    expect(grid_row(plan, "to delete")).to_have_count(2)
    expect(grid_row(plan, "kept: latest")).to_have_count(1)
    type_into(cleanup.get_by_label("Type the table name t to confirm", exact=True), "t")
    shot("dry-run")
    submit(page, cleanup.get_by_role("button", name="Delete 2 versions"))
    expect(alert(main, f"Deleted 2 versions of {namespace} › t (1-2;")).to_be_visible()
    expect(metric(main, "Versions")).to_have_text("1")


# --------------------------------------------------------------------------- tables


def _open_table(page: Page, console: Console, namespace: str, table: str) -> Locator:
    goto(page, console, "tables", ns=namespace, table=table)
    main = _main(page)
    expect(main.get_by_role("heading", name=table, exact=True)).to_be_visible()
    return main


@ON_BOTH_BACKENDS
def test_rename_moves_the_table_or_is_refused_up_front(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    namespace = fresh_namespace(console, "dest", prefix="lc")
    three_versions(console, namespace)
    main = _open_table(page, console, namespace, "t")
    box = open_lazy(main, "Rename or move")
    if console.kind == "rest":
        # pylance's REST server has no RenameTable: the form says so before anyone tries.
        expect(box.get_by_text("This server does not implement RenameTable")).to_be_visible()
        expect(box.get_by_role("button", name="Rename")).to_be_disabled()
        expect(box.get_by_label("New name", exact=True)).to_be_disabled()
        shot("unsupported")
        return
    expect(box.get_by_text("only its name and namespace change")).to_be_visible()
    type_into(box.get_by_label("New name", exact=True), "moved")
    pick_in_form(box, "Namespace", f"{namespace} › dest")
    shot("form")
    submit(page, box.get_by_role("button", name="Rename"))
    expect(
        alert(main, f"Renamed table {namespace} › t to {namespace} › dest › moved.")
    ).to_be_visible()
    expect(main.get_by_role("heading", name="moved", exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(rf"\?ns={namespace}&ns=dest&table=moved$"))
    expect(metric(main, "Rows")).to_have_text("4")  # data and versions came along
    expect(grid_row(keyed_grid(main, "tables.list.grid."), "moved")).to_have_count(1)
    shot("renamed")
    # The old name is gone from its namespace.
    goto(page, console, "tables", ns=namespace)
    expect(_main(page).get_by_text("No tables here.")).to_be_visible()


@ON_BOTH_BACKENDS
def test_schema_metadata_is_editable_catalog_properties_are_not(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    namespace = fresh_namespace(console, prefix="lc")
    table_id = three_versions(console, namespace)
    lifecycle.update_schema_metadata(_client(console), table_id, {"owner": "data_team"})
    main = _open_table(page, console, namespace, "t")
    box = open_lazy(main, "Schema metadata")
    expect(box.get_by_text("Saving adds or changes keys")).to_be_visible()
    editor = first_grid(box)
    expect(grid_row(editor, "owner")).to_contain_text("data_team")
    expect(box.get_by_text(lifecycle.PROPERTIES_READ_ONLY)).to_be_visible()
    expect(box.get_by_role("button", name="Save schema metadata")).to_be_enabled()
    remove = box.get_by_role("button", name="Remove keys")
    if console.kind == "rest":
        # No operation removes a key over REST: disabled up front, the reason shown.
        expect(remove).to_be_disabled()
        expect(box.get_by_text(lifecycle.REMOVE_METADATA_UNSUPPORTED)).to_be_visible()
        shot()
        return
    keys = widget(box, "stMultiSelect", "Keys to remove")
    settle(page)
    # A rerun landing while the list is open, or right after the pick, re-renders the widget
    # and can drop the pick: open the list and pick again.
    for _ in range(3):
        keys.get_by_role("combobox").click()
        try:
            page.get_by_role("option", name="owner", exact=True).click(timeout=8_000)
            page.keyboard.press("Escape")
            settle(page)
            expect(keys).to_contain_text("owner", timeout=3_000)
            break
        except (PlaywrightTimeoutError, AssertionError):
            page.keyboard.press("Escape")
            settle(page)
    expect(keys).to_contain_text("owner")
    shot()
    after_rerun(page, remove.click)
    expect(
        main.get_by_text(f"Removed from the schema metadata of {namespace} › t: owner.")
    ).to_be_visible()
    assert lifecycle.schema_metadata(_client(console), table_id) == {}


@ON_BOTH_BACKENDS
def test_drop_table_deletes_data_deregister_keeps_it(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    namespace = fresh_namespace(console, prefix="lc")
    three_versions(console, namespace, "gone")
    three_versions(console, namespace, "kept")
    ns = _client(console)
    gone_dir = table_location(ns, [namespace, "gone"])
    kept_dir = table_location(ns, [namespace, "kept"])

    main = _open_table(page, console, namespace, "gone")
    expect(main.get_by_text("Deregister table (keeps data)")).to_be_visible()
    box = open_lazy(main, "Drop table (deletes data)")
    expect(box).to_contain_text(f"Removes {namespace} › gone from the catalog and deletes its data")
    expect(box).to_contain_text("latest version v3")
    expect(box).to_contain_text("This cannot be undone.")
    if console.kind == "local":
        expect(box).to_contain_text(re.compile(r"\d+ files, [\d.,]+ (bytes|KiB|MiB)"))
    type_into(box.get_by_label("Type the table name gone to confirm", exact=True), "gone")
    shot("drop")
    submit(page, box.get_by_role("button", name="Drop table"))
    expect(alert(main, f"Dropped table {namespace} › gone: its data was deleted.")).to_be_visible()
    expect(page).to_have_url(re.compile(rf"\?ns={namespace}$"))
    expect(grid_row(keyed_grid(main, "tables.list.grid."), "gone")).to_have_count(0)
    assert not gone_dir.exists(), gone_dir

    main = _open_table(page, console, namespace, "kept")
    box = open_lazy(main, "Deregister table (keeps data)")
    expect(box).to_contain_text("nothing is deleted")
    expect(box).to_contain_text("Kept: ")
    type_into(box.get_by_label("Type the table name kept to confirm", exact=True), "kept")
    shot("deregister")
    submit(page, box.get_by_role("button", name="Deregister"))
    expect(alert(main, f"Deregistered table {namespace} › kept; its files stay")).to_be_visible()
    expect(main.get_by_text("No tables here.")).to_be_visible()
    assert kept_dir.is_dir(), kept_dir


@ON_BOTH_BACKENDS
def test_drop_namespace_restrict_then_cascade(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    namespace = fresh_namespace(console, "child", prefix="lc")
    three_versions(console, namespace)
    goto(page, console, "tables", ns=namespace)
    main = _main(page)
    menu = open_menu(main, "Namespace actions")  # a refused drop is said in it, by its form
    box = open_lazy(menu, f"Drop namespace {namespace}")
    if console.kind == "rest":
        # pylance's REST server (profile lance-dir) has no CASCADE: said up front, and a
        # namespace with children gets no drop button; nothing is dropped.
        expect(alert(box, "does not implement DropNamespace with CASCADE")).to_be_visible()
        expect(box.get_by_label(f"Type the namespace name {namespace} to confirm")).to_have_count(0)
        shot("no-cascade")
        return
    # RESTRICT (the default) names the children before anyone tries...
    expect(
        alert(box, f"{namespace} is not empty: namespace {namespace} › child, table")
    ).to_be_visible()
    type_into(box.get_by_label(f"Type the namespace name {namespace} to confirm"), namespace)
    submit(page, box.get_by_role("button", name=f"Drop {namespace}", exact=True))
    # ... and the refusal names them too.
    refused = alert(menu, f"Dropping namespace {namespace} failed. Namespace not empty")
    expect(refused).to_be_visible()
    expect(refused).to_contain_text(f"table {namespace} › t")
    shot("restrict")

    after_rerun(page, lambda: box.get_by_text("CASCADE", exact=True).click())
    goes = first_grid(box)
    expect(grid_row(goes, f"{namespace} › child")).to_have_count(1)
    expect(grid_row(goes, f"{namespace} › t")).to_have_count(1)
    type_into(box.get_by_label(f"Type the namespace name {namespace} to confirm"), namespace)
    shot("cascade")
    submit(page, box.get_by_role("button", name=f"Drop {namespace} and 2 items"))
    if console.kind == "rest":
        # pylance's REST server has no CASCADE: said as such, nothing dropped.
        expect(
            alert(menu, "Unsupported operation: This server refused DropNamespace with CASCADE")
        ).to_be_visible()
        expect(main.get_by_text(f"Tables in {namespace}")).to_be_visible()
        shot("cascade-refused")
        return
    expect(
        alert(main, f"Dropped namespace {namespace} with 1 table (its data deleted) and 1 child")
    ).to_be_visible()
    expect(page).not_to_have_url(re.compile(r"[?&]ns="))  # the selection moved to the root
    expect(main.get_by_text("Tables in (root)")).to_be_visible()
    settle(page)
    assert not namespaces.namespace_exists(_client(console), [namespace])
