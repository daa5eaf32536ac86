"""Transactions: the batch-commit builder (syntax errors, validation, JSON preview, commit on
the local backend, a readable "not supported" on the REST server), describe and alter a
transaction, and the read-only switch."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from pathlib import Path

import lance
import pytest
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
    grid,
    grid_row,
    grid_rows,
    open_expander,
    open_tab,
    set_read_only,
    settle,
    submit,
    type_into,
)
from .marks import ON_BOTH_BACKENDS

CLEAR_QUESTION = "Remove every operation from the batch? Staged changes stay staged"


def _open(page: Page, console: Console, table: str = DOCS_TABLE) -> Locator:
    goto(page, console, "transactions", ns=E2E_NAMESPACE, table=table)
    return page.get_by_test_id("stMain")


def _stage(page: Page, main: Locator, kind: str, **fields: str) -> None:
    """The "Stage a change" form: pick ``kind``, fill its fields (by label), press Stage."""
    group = main.get_by_role("radiogroup", name="Change")
    choice = group.get_by_role("radio", name=kind, exact=True)
    if choice.get_attribute("aria-checked") != "true":
        after_rerun(page, choice.click)
    expect(choice).to_have_attribute("aria-checked", "true")
    for label, value in fields.items():
        field = main.get_by_role("textbox", name=label, exact=True)
        field.fill(value)
        after_rerun(page, field.blur)
    after_rerun(page, main.get_by_role("button", name=f"Stage: {kind.lower()}").click)
    expect(
        main.get_by_role("heading", name=re.compile(r"^Staged changes \(\d+\)$"))
    ).to_be_visible()


def _operation_kind(page: Page, main: Locator, label: str) -> None:
    group = main.get_by_role("radiogroup", name="Operation")
    button = group.get_by_role("radio", name=label, exact=True)
    if button.get_attribute("aria-checked") != "true":
        after_rerun(page, button.click)
    expect(button).to_have_attribute("aria-checked", "true")


def _add(page: Page, main: Locator, kind: str, table_id: str) -> None:
    _operation_kind(page, main, kind)
    form = main.get_by_test_id("stForm").filter(has=page.get_by_label("Table id", exact=True))
    type_into(form.get_by_label("Table id", exact=True), table_id)
    submit(page, form.get_by_role("button", name="Add to batch"))


def _batch(main: Locator, count: int) -> None:
    noun = "operation" if count == 1 else "operations"
    expect(main.get_by_role("heading", name=f"Batch ({count} {noun})")).to_be_visible()


def _operation_line(main: Locator, pattern: str) -> Locator:
    """The markdown line of a batch operation (``1. DeclareTable e2e › docs``)."""
    return main.get_by_test_id("stMarkdownContainer").filter(has_text=re.compile(pattern))


def _clear_batch(page: Page, main: Locator) -> None:
    """ "Clear the batch" asks first: "Keep the batch" keeps it, "Clear" empties it."""
    after_rerun(page, main.get_by_role("button", name="Clear the batch").click)
    expect(main.get_by_text(CLEAR_QUESTION)).to_be_visible()
    after_rerun(page, main.get_by_role("button", name="Clear", exact=True).click)
    _batch(main, 0)
    expect(main.get_by_role("button", name="Keep the batch")).to_have_count(0)


@ON_BOTH_BACKENDS
def test_builder_syntax_validation_and_json_preview(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    main = _open(page, console)
    _batch(main, 0)

    # A malformed id is refused before it enters the batch.
    _add(page, main, "DeclareTable", f"{E2E_NAMESPACE}$$")
    expect(main.get_by_test_id("stAlert").filter(has_text="Not added:")).to_be_visible()
    _batch(main, 0)

    # Two operations the namespace will refuse: declaring an existing table, deregistering a
    # missing one.
    _add(page, main, "DeclareTable", f"{E2E_NAMESPACE}${DOCS_TABLE}")
    _batch(main, 1)
    _add(page, main, "DeregisterTable", f"{E2E_NAMESPACE}$nope")
    _batch(main, 2)
    after_rerun(page, main.get_by_role("button", name="Validate").click)
    # over REST a third: the server's profile says it runs no batch (never "Valid" there)
    count = 2 if console.kind == "local" else 3
    problems = main.get_by_test_id("stAlert").filter(has_text=f"{count} problems block the commit:")
    expect(problems).to_contain_text(
        f"operation 1: DeclareTable {E2E_NAMESPACE} › {DOCS_TABLE}: the table already exists"
    )
    expect(problems).to_contain_text(
        f"operation 2: DeregisterTable {E2E_NAMESPACE} › nope: the table does not exist"
    )
    if console.kind != "local":
        expect(problems).to_contain_text("batch: this server does not implement BatchCommitTables")
    # ... and each problem next to its operation.
    expect(_operation_line(main, r"the table already exists$")).to_have_count(1)

    # The request body exactly as it will be sent.
    preview = open_expander(main, "Request JSON")
    body = json.loads(preview.get_by_test_id("stCode").inner_text())
    assert body == {
        "operations": [
            {"declare_table": {"id": [E2E_NAMESPACE, DOCS_TABLE]}},
            {"deregister_table": {"id": [E2E_NAMESPACE, "nope"]}},
        ]
    }

    commit = main.get_by_role("button", name="Commit atomically")
    if console.kind == "local":
        # Committing re-validates and refuses: the problems stay, nothing is committed.
        after_rerun(page, commit.click)
        expect(problems).to_be_visible()
        expect(main.get_by_test_id("stAlert").filter(has_text="Committed.")).to_have_count(0)
    else:
        # The RestAdapter's server has no BatchCommitTables: no commit is offered at all.
        expect(commit).to_be_disabled()
    _batch(main, 2)
    shot()

    # Reorder, then remove: the batch follows.
    # The arrows are icon-only buttons with an accessible name.
    up = main.get_by_role("button", name="Move operation 2 up", exact=True)
    # Icon only on screen: the label is there for assistive technology, clipped to 1 px.
    label_box = up.get_by_text("Move operation 2 up").bounding_box()
    assert label_box is not None and label_box["width"] <= 1, label_box
    after_rerun(page, up.click)
    expect(_operation_line(main, rf"^1\. DeregisterTable {E2E_NAMESPACE} › nope$")).to_be_visible()
    expect(
        _operation_line(main, rf"^2\. DeclareTable {E2E_NAMESPACE} › {DOCS_TABLE}$")
    ).to_be_visible()
    after_rerun(page, main.get_by_role("button", name="Remove operation 1", exact=True).click)
    _batch(main, 1)
    expect(
        _operation_line(main, rf"^1\. DeclareTable {E2E_NAMESPACE} › {DOCS_TABLE}$")
    ).to_be_visible()

    # "Clear the batch" asks first; "Keep the batch" keeps it.
    after_rerun(page, main.get_by_role("button", name="Clear the batch").click)
    expect(main.get_by_text(CLEAR_QUESTION)).to_be_visible()
    expect(main.get_by_role("button", name="Clear the batch")).to_have_count(0)
    after_rerun(page, main.get_by_role("button", name="Keep the batch").click)
    _batch(main, 1)
    expect(main.get_by_role("button", name="Clear the batch")).to_be_visible()
    _clear_batch(page, main)


@ON_BOTH_BACKENDS
def test_batch_commit(page: Page, console: Console, shot: Callable[..., Path]) -> None:
    name = f"batch_{uuid.uuid4().hex[:8]}"
    main = _open(page, console)
    _add(page, main, "DeclareTable", f"{E2E_NAMESPACE}${name}")
    _batch(main, 1)
    if console.kind == "local":
        # Stage a real change of notes (its next version, uncommitted) and publish it with the
        # declare, in one batch, a reader watching.
        latest = _latest_version(console, NOTES_TABLE)
        before = _dataset(console, NOTES_TABLE).to_table()
        choose(main, "Table", NOTES_TABLE)  # the picker: the batch stays
        _batch(main, 1)
        _stage(
            page, main, "Update rows by a filter",
            **{"Set (column = SQL expression, one per line)": "body = upper(body)", "Where": "id = 1"},
        )  # fmt: skip
        _batch(main, 2)
        staged = (
            rf"^2\. CreateTableVersion {E2E_NAMESPACE} › {NOTES_TABLE} (->\u200b?|→) v{latest + 1} "
            r"\(manifest "
        )
        expect(_operation_line(main, staged)).to_be_visible()
        assert _latest_version(console, NOTES_TABLE) == latest  # readers do not see it yet
        after_rerun(page, main.get_by_role("button", name="Commit atomically").click)
        done = main.get_by_test_id("stAlert").filter(has_text="Committed. Transaction")
        expect(done).to_be_visible()
        expect(main.get_by_text("polling…")).to_have_count(0, timeout=30_000)
        settle(page)
        expect(main.get_by_text(re.compile(r"mixed states seen: 0$"))).to_be_visible()
        results = grid_rows(grid(main))
        expect(results).to_have_count(2)
        expect(results.nth(0)).to_contain_text("DeclareTable")
        expect(results.nth(0)).to_contain_text(name)
        expect(results.nth(1)).to_contain_text("CreateTableVersion")
        _batch(main, 0)
        assert _latest_version(console, NOTES_TABLE) == latest + 1
        after = _dataset(console, NOTES_TABLE).to_table().sort_by("id")
        expected = [b.upper() if i == 1 else b for i, b in zip(
            before["id"].to_pylist(), before["body"].to_pylist(), strict=True)]  # fmt: skip
        assert after["body"].to_pylist() == expected
        # The committed transaction is in this session's history.
        panel = open_tab(main, "Describe / alter a transaction")
        batch_line = re.compile(
            r"^batch-\w+\s+[\d:]+ · made in this session: batch commit - SUCCEEDED$"
        )
        expect(panel.get_by_text(batch_line)).to_be_visible()
        # Describing it from the history shows the batch's record.
        describe = panel.get_by_role("button", name=re.compile(r"^Describe batch-\w+$"))
        expect(describe).to_have_count(1)
        after_rerun(page, describe.click)
        panel = open_tab(main, "Describe / alter a transaction")
        status = re.compile(r"^Transaction batch-\w+: status SUCCEEDED$")
        expect(panel.get_by_text(status)).to_be_visible()
        props = grid(panel)
        expect(grid_row(props, "operation")).to_contain_text("BatchCommitTables")
        expect(grid_row(props, "declare_table_count")).to_contain_text("1")
        shot()
        # And the table exists.
        goto(page, console, "tables", ns=E2E_NAMESPACE, table=name)
        expect(main.get_by_role("heading", name=name, exact=True)).to_be_visible()
    else:
        # No staging on REST (it writes files next to the table).
        expect(main.get_by_text("Staging a change writes files next to the table")).to_be_visible()
        # The RestAdapter's directory namespace does not implement BatchCommitTables (its
        # server profile says so): the builder says so before Validate and offers no commit;
        # Validate reports it too, never "Valid".
        warning = main.get_by_test_id("stAlert").filter(
            has_text="This REST server cannot commit batches: this server does not implement "
            "BatchCommitTables"
        )
        expect(warning).to_be_visible()
        expect(warning).to_contain_text("You can build and preview a batch here")
        expect(main.get_by_role("button", name="Commit atomically")).to_be_disabled()
        after_rerun(page, main.get_by_role("button", name="Validate").click)
        expect(
            main.get_by_test_id("stAlert").filter(has_text="1 problem blocks the commit:")
        ).to_contain_text("does not implement BatchCommitTables")
        expect(main.get_by_text("Valid against the current namespace.")).to_have_count(0)
        preview = open_expander(main, "Request JSON")
        body = json.loads(preview.get_by_test_id("stCode").inner_text())
        assert body == {"operations": [{"declare_table": {"id": [E2E_NAMESPACE, name]}}]}
        _batch(main, 1)
        shot()


def _dataset(console: Console, table: str) -> lance.LanceDataset:
    ns = DirectoryNamespace(root=str(console.root))
    location = ns.describe_table(DescribeTableRequest(id=[E2E_NAMESPACE, table])).location
    return lance.dataset(location)


def _latest_version(console: Console, table: str) -> int:
    ns = DirectoryNamespace(root=str(console.root))
    location = ns.describe_table(DescribeTableRequest(id=[E2E_NAMESPACE, table])).location
    return lance.dataset(location).version


@ON_BOTH_BACKENDS
def test_describe_and_alter_transaction(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    prop = f"reviewed_{uuid.uuid4().hex[:6]}"
    main = _open(page, console)
    panel = open_tab(main, "Describe / alter a transaction")
    txn_id = f"{E2E_NAMESPACE}${NOTES_TABLE}$1"
    type_into(panel.get_by_label("Transaction id", exact=True), txn_id)
    after_rerun(page, panel.get_by_role("button", name="Describe").first.click)
    panel = open_tab(main, "Describe / alter a transaction")
    shown_id = f"{E2E_NAMESPACE} › {NOTES_TABLE} › 1"
    expect(
        panel.get_by_text(f"Transaction {shown_id}: status SUCCEEDED", exact=True)
    ).to_be_visible()
    expect(grid_row(grid(panel), "operation")).to_contain_text("Overwrite")

    # Alter: set a property, apply in one request. The mode select shows its whole value.
    mode = panel.get_by_test_id("stSelectbox").filter(has_text="If the key exists")
    value_box = mode.get_by_role("combobox")
    expect(value_box).to_have_value("Overwrite")
    assert value_box.evaluate("e => e.scrollWidth <= e.clientWidth"), "Overwrite is truncated"
    type_into(panel.get_by_label("Key", exact=True), prop)
    type_into(panel.get_by_label("Value", exact=True), "yes")
    after_rerun(page, panel.get_by_role("button", name="Add action").click)
    panel = open_tab(main, "Describe / alter a transaction")
    expect(panel.get_by_role("button", name="Remove action 1", exact=True)).to_be_visible()
    after_rerun(page, panel.get_by_role("button", name="Apply 1 action in one request").click)
    panel = open_tab(main, "Describe / alter a transaction")
    expect(grid_row(grid(panel), prop)).to_contain_text("yes")
    # The session history lists it.
    expect(
        panel.get_by_text(
            re.compile(
                rf"^{re.escape(shown_id)}\s+[\d:]+ · altered here, made elsewhere · Overwrite"
                " - SUCCEEDED$"
            )
        )
    ).to_be_visible()
    shot()


@pytest.mark.parametrize("backend_kind", ["local"])
def test_read_only_disables_commit_and_alter(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    main = _open(page, console)
    _add(page, main, "DeclareTable", f"{E2E_NAMESPACE}$never_committed")
    set_read_only(page, True)
    expect(main.get_by_text("Read-only connection: writes are disabled")).to_be_visible()
    expect(main.get_by_role("button", name="Commit atomically")).to_be_disabled()
    panel = open_tab(main, "Describe / alter a transaction")
    type_into(panel.get_by_label("Transaction id", exact=True), f"{E2E_NAMESPACE}${NOTES_TABLE}$1")
    after_rerun(page, panel.get_by_role("button", name="Describe").first.click)
    panel = open_tab(main, "Describe / alter a transaction")
    expect(panel.get_by_role("button", name="Add action")).to_be_disabled()
    shot()


@pytest.mark.parametrize("backend_kind", ["local"])
def test_a_discarded_staged_change_leaves_no_file(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    """A staged change writes the table's next version where readers cannot see it; clearing
    the batch keeps it staged, "Discard" removes every file it wrote."""
    table_dir = _table_dir(console, NOTES_TABLE)
    files_before = {p for p in table_dir.rglob("*") if p.is_file()}
    staging = console.root / "_staging"
    staged_before = set(staging.glob("*.manifest")) if staging.exists() else set()
    latest = _latest_version(console, NOTES_TABLE)
    main = _open(page, console, NOTES_TABLE)
    _batch(main, 0)
    _stage(page, main, "Delete rows by a filter", **{"Delete the rows where": "id = 3"})
    _batch(main, 1)
    line = main.get_by_text(re.compile(rf"^{E2E_NAMESPACE} › {NOTES_TABLE} · Delete: delete 1 row"))
    expect(line).to_be_visible()
    expect(line).to_contain_text(f"v{latest} → v{latest + 1} (uncommitted) · 3 → 2 rows")
    written = {p for p in table_dir.rglob("*") if p.is_file()} - files_before
    manifests = set(staging.glob("*.manifest")) - staged_before
    assert written and len(manifests) == 1, (written, manifests)
    shot("staged")

    # Clear the batch: the change stays staged (and its files), not in the batch any more.
    after_rerun(page, main.get_by_role("button", name="Clear the batch").click)
    after_rerun(page, main.get_by_role("button", name="Clear", exact=True).click)
    _batch(main, 0)
    expect(main.get_by_text("not in the batch")).to_be_visible()
    assert all(p.exists() for p in written | manifests)

    # Discard: every file it wrote goes; the table never changed.
    after_rerun(page, main.get_by_role("button", name="Discard").click)
    expect(main.get_by_role("heading", name=re.compile(r"^Staged changes"))).to_have_count(0)
    assert not [p for p in written | manifests if p.exists()]
    assert _latest_version(console, NOTES_TABLE) == latest
    assert _dataset(console, NOTES_TABLE).count_rows() == 3


def _table_dir(console: Console, table: str) -> Path:
    ns = DirectoryNamespace(root=str(console.root))
    location = ns.describe_table(DescribeTableRequest(id=[E2E_NAMESPACE, table])).location
    return Path(location.removeprefix("file://"))
