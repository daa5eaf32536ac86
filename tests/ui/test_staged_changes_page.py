"""AppTest of write-audit-publish on the Transactions page, on a real local namespace
(``tests/ui/conftest.py``): stage real changes (a delete and an update by a filter, an append
and an overwrite from a file), audit them (rows before and after, row-level changes, schema,
checks; a failed check blocks the publish), publish them in one batch with a reader watching,
discard them; the demo tools (admin only, off by default); the guided demo's tab.

Every figure the page shows is checked against pyarrow reading the tables' files.
"""

from __future__ import annotations

import io
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pytest
from lance_namespace import DescribeTableRequest

import backend
from backend.local.staging import StagedChange
from backend.services import batch_builder as bb
from components import state
from tests.ui.conftest import (
    alerts,
    app_as,
    assert_no_exception,
    button,
    texts,
)

ORDERS = ["sales", "orders"]
CUSTOMERS = ["sales", "customers"]
QP = {"ns": "sales", "table": "orders"}


@pytest.fixture
def app(make_app: Any) -> Any:
    at = make_app("transactions", query_params=QP)
    assert_no_exception(at)
    return at


def dataset(root: Path, table_id: list[str]) -> lance.LanceDataset:
    """The table's latest version read from its files (pyarrow / lance, not the page)."""
    ns = backend.connect(str(root))
    location = ns.describe_table(DescribeTableRequest(id=table_id)).location
    return lance.dataset(location)


def held(at: Any) -> list[StagedChange]:
    return [StagedChange.from_dict(d) for d in at.session_state[state.Txn.STAGED]]


def ops(at: Any) -> list[dict]:
    return list(at.session_state[state.Txn.OPERATIONS])


def pick(at: Any, table: str) -> Any:
    at.selectbox(key="txn.picker.table").set_value(table).run()
    assert_no_exception(at)
    return at


def stage(at: Any, kind: str, **fields: Any) -> Any:
    """Fill the "Stage a change" form for ``kind`` and press its button."""
    at.segmented_control(key=state.stage_form_key("kind")).set_value(kind).run()
    if "file" in fields:
        name, data = fields.pop("file")
        # the file field's key changes with the form generation (emptied after each stage)
        (uploader,) = [u for u in at.file_uploader if u.key.startswith(f"{state.Txn.STAGE}.file")]
        uploader.set_value((name, data, "application/octet-stream")).run()
    if "filter" in fields:
        at.text_input(key=state.stage_form_key("filter")).set_value(fields.pop("filter"))
    if "set" in fields:
        at.text_area(key=state.stage_form_key("set")).set_value(fields.pop("set"))
    at.run()
    at.button(key=state.stage_form_key("go")).click().run()
    assert_no_exception(at)
    return at


def open_audit(at: Any, staged: StagedChange) -> Any:
    at.session_state[f"{state.Txn.AUDIT}.{staged.id}.open"] = True
    at.run()
    assert_no_exception(at)
    return at


def metric(at: Any, label: str) -> list[str]:
    return [m.value for m in at.metric if m.label == label]


def csv_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pacsv.write_csv(table, sink)
    return sink.getvalue()


def finish_watch(at: Any) -> Any:
    """Wait for the reader of the last watched commit to stop, then draw the page again."""
    run = at.session_state[state.Txn.WATCHED]
    run.watcher.join(30)
    assert not run.watcher.alive
    at.run()
    assert_no_exception(at)
    return at


def test_stage_audit_and_publish_with_a_reader(app: Any, ui_env: Path) -> None:
    """A delete of orders and an update of customers, staged, audited, published in one batch:
    readers saw neither before, both after; the reader panel saw no mixed state."""
    orders_before = dataset(ui_env, ORDERS).to_table()
    customers_before = dataset(ui_env, CUSTOMERS).to_table()
    at = stage(app, "delete", filter="id <= 3")
    at = pick(at, "customers")
    at = stage(at, "update", set="vip = true", filter="name = 'bob'")
    made = held(at)
    assert [(s.table_id, s.kind, s.operation) for s in made] == [
        (tuple(ORDERS), "delete", "Delete"),
        (tuple(CUSTOMERS), "update", "Update"),
    ]
    assert [bb.body_of(o)["manifest_path"] for o in ops(at)] == [s.manifest_path for s in made]
    page = texts(at)
    assert "Staged changes (2)" in page and "published by operation 1 of the batch" in page
    # nothing is visible to readers yet
    assert dataset(ui_env, ORDERS).version == 3 and dataset(ui_env, ORDERS).count_rows() == 4

    delete, update = made
    expected_orders = orders_before.filter(pc.field("id") > 3)
    at = open_audit(at, delete)
    assert metric(at, "Rows before") == [f"{orders_before.num_rows:,}"]
    assert metric(at, "Rows after") == [f"{expected_orders.num_rows:,}"]
    assert metric(at, "Deleted") == [f"{orders_before.num_rows - expected_orders.num_rows:,}"]
    assert metric(at, "Inserted") == ["0"] and metric(at, "Updated") == ["0"]
    schema = next(
        d.value for d in at.dataframe if list(d.value.columns) == ["column", "type", "change"]
    )
    assert list(schema["column"]) == orders_before.schema.names
    assert "The same columns and types as the table's." in texts(at)

    at.toggle(key=f"{state.Txn.WATCH}.on").set_value(True)
    button(at, "Commit atomically").click().run()
    assert_no_exception(at)
    assert not at.error, alerts(at, "error")
    assert any(a.startswith("Committed.") for a in alerts(at, "success"))
    at = finish_watch(at)
    assert held(at) == [] and ops(at) == []

    # published as computed, independently
    orders = dataset(ui_env, ORDERS)
    assert orders.version == 4 and orders.to_table().sort_by("id").equals(expected_orders)
    customers = dataset(ui_env, CUSTOMERS).to_table().sort_by("id")
    vip = [True if n == "bob" else v for n, v in zip(
        customers_before["name"].to_pylist(), customers_before["vip"].to_pylist(), strict=True)]  # fmt: skip
    assert customers["vip"].to_pylist() == vip
    # the reader panel: the tables before and after, its figures
    run = at.session_state[state.Txn.WATCHED]
    grid = next(d.value for d in at.dataframe if "outcome" in d.value.columns)
    assert list(grid["outcome"]) == ["published", "published"]
    assert list(grid["rows after"]) == [orders.count_rows(), customers.num_rows]
    assert list(grid["version after"]) == [4, 2]
    proto = next(d.proto for d in at.dataframe if "outcome" in d.value.columns)
    labels = [json.loads(proto.columns)[c]["label"] for c in grid.columns]
    assert labels == [
        "Table", "Version before", "Version after", "Rows before", "Rows after", "Outcome",
    ]  # fmt: skip
    summary = run.summary()
    assert summary.polls >= 5 and summary.mixed == 0
    assert (
        f"polls: {summary.polls} ({summary.rate:.1f} per second) · mixed states seen: 0"
        in texts(at)
    )
    assert "reads through the namespace" in texts(at)
    assert at.get("plotly_chart")


def test_append_and_overwrite_from_files(app: Any, ui_env: Path) -> None:
    before = dataset(ui_env, ORDERS).to_table()
    more = pa.table({"id": pa.array([10, 11], pa.int64()), "item": ["box", "tag"]})
    at = stage(app, "append", file=("more.csv", csv_bytes(more)))
    (append,) = held(at)
    assert (append.rows_before, append.rows_after) == (before.num_rows, before.num_rows + 2)
    at = open_audit(at, append)
    assert metric(at, "Inserted") == ["2"]
    whole = pa.table({"code": ["a", "b", "c"], "qty": pa.array([1, 2, 3], pa.int32())})
    at = pick(at, "customers")
    sink = io.BytesIO()
    import pyarrow.parquet as pq

    pq.write_table(whole, sink)
    at = stage(at, "overwrite", file=("whole.parquet", sink.getvalue()))
    (_, overwrite) = held(at)
    assert overwrite.operation == "Overwrite" and overwrite.rows_after == 3
    at = open_audit(at, overwrite)
    schema = [
        d.value for d in at.dataframe if list(d.value.columns) == ["column", "type", "change"]
    ]
    changes = dict(zip(schema[-1]["column"], schema[-1]["change"], strict=True))
    assert changes == {
        "code": "new",
        "qty": "new",
        "id": "dropped",
        "name": "dropped",
        "vip": "dropped",
    }
    button(at, "Commit atomically").click().run()
    assert_no_exception(at)
    assert not at.error, alerts(at, "error")
    finish_watch(at)
    assert (
        dataset(ui_env, ORDERS)
        .to_table()
        .sort_by("id")
        .equals(pa.concat_tables([before, more]).sort_by("id"))
    )
    assert dataset(ui_env, CUSTOMERS).to_table().equals(whole)


def test_discard_removes_every_file_and_the_operation(app: Any, ui_env: Path) -> None:
    at = stage(app, "delete", filter="id = 2")
    (made,) = held(at)
    location = Path(made.location.removeprefix("file://"))
    written = [location / f for f in made.files] + [Path(made.manifest_path)]
    assert all(p.exists() for p in written)
    at.button(key=f"{state.Txn.STAGE}.{made.id}.discard").click().run()
    assert_no_exception(at)
    assert not at.error, alerts(at, "error")
    assert held(at) == [] and ops(at) == []
    assert not [p for p in written if p.exists()]
    assert bb.list_staged(backend.connect(str(ui_env))) == []
    assert dataset(ui_env, ORDERS).version == 3


def test_removing_the_operation_keeps_the_change_staged(app: Any) -> None:
    """Out of the batch is not discarded: the change stays listed, to add back or discard."""
    at = stage(app, "delete", filter="id = 2")
    (made,) = held(at)
    at.button(key="txn.ops.0.remove").click().run()
    assert ops(at) == [] and held(at) == [made]
    assert "not in the batch" in texts(at)
    at.button(key=f"{state.Txn.STAGE}.{made.id}.add").click().run()
    assert [bb.body_of(o)["manifest_path"] for o in ops(at)] == [made.manifest_path]


def add_check(at: Any, staged: StagedChange, **fields: Any) -> Any:
    prefix = f"{state.Txn.AUDIT}.{staged.id}.check"
    for name, value in fields.items():
        widget = at.number_input if name in ("min", "max") else at.text_input
        widget(key=f"{prefix}.{name}").set_value(value)
    button(at, "Add check").click().run()  # one audit open: one form
    assert_no_exception(at)
    return at


def test_a_failed_check_blocks_the_publish(app: Any, ui_env: Path) -> None:
    at = stage(app, "delete", filter="id = 2")
    (made,) = held(at)
    at = open_audit(at, made)
    remaining = dataset(ui_env, ORDERS).to_table().filter(pc.field("id") != 2)
    # a predicate that every remaining row satisfies holds; one that some fail blocks
    at = add_check(at, made, predicate="id > 2")
    assert "id > 2: holds" in texts(at)
    failing = remaining.filter(pc.field("id") < 4).num_rows
    at = add_check(at, made, name="big ids only", predicate="id >= 4")
    assert (
        f"big ids only: FAILS — {failing:,} of {remaining.num_rows:,} rows "
        f"{'fails' if failing == 1 else 'fail'} id >= 4" in texts(at)
    )
    assert button(at, "Commit atomically").disabled
    (blocked,) = [e for e in alerts(at, "error") if e.startswith("Publish blocked")]
    assert "sales › orders: check 'big ids only' fails" in blocked
    # a bad predicate is not added; an empty range neither
    at = add_check(at, made, predicate="id = 1; DROP TABLE x")
    assert any(e.startswith("Check not added:") for e in alerts(at, "error"))
    at = add_check(at, made, min=5, max=2)
    assert any("is empty" in e for e in alerts(at, "error"))
    assert len(at.session_state[state.Txn.CHECKS][made.id]) == 2
    # pressing Commit anyway (the callback) commits nothing
    at.session_state[state.Txn.CHECK] = "commit"
    at.run()
    assert dataset(ui_env, ORDERS).version == 3
    # remove the failing check: the publish is allowed again; a row range that holds
    at.button(key=f"{state.Txn.AUDIT}.{made.id}.check.1.remove").click().run()
    at = add_check(at, made, min=remaining.num_rows, max=remaining.num_rows)
    assert not button(at, "Commit atomically").disabled
    button(at, "Commit atomically").click().run()
    assert not at.error, alerts(at, "error")
    assert dataset(ui_env, ORDERS).to_table().sort_by("id").equals(remaining.sort_by("id"))


def test_read_only_stages_nothing(make_app: Any) -> None:
    at = make_app("transactions", query_params={**QP, "ro": "true"})
    at.segmented_control(key=state.stage_form_key("kind")).set_value("delete").run()
    at.text_input(key=state.stage_form_key("filter")).set_value("id = 2")
    at.run()
    assert at.button(key=state.stage_form_key("go")).disabled


def tools(at: Any, which: str) -> Any:
    at.toggle(key=f"{state.Txn.TOOLS}.on").set_value(True).run()
    at.radio(key=f"{state.Txn.TOOLS}.which").set_value(which).run()
    assert_no_exception(at)
    return at


def test_demo_tools_are_an_admins_and_off_by_default(roles: Path, ui_env: Path) -> None:
    for email in ("ed@example.com", "ada@example.com"):
        at = app_as(email, query=QP)
        at.switch_page("views/transactions.py")
        at.run()
        at.session_state[state.Txn.OPERATIONS] = [bb.declare_op(["sales", "fresh"])]
        at.run()
        toggle = at.toggle(key=f"{state.Txn.TOOLS}.on")
        assert toggle.value is False  # off by default
        if email.startswith("ed"):
            assert toggle.disabled
            assert "Disabled: the editor role may not" in texts(at)
        else:
            assert not toggle.disabled
        # a staged delete is an admin's (as DeleteFromTable); a staged update an editor's
        at.segmented_control(key=state.stage_form_key("kind")).set_value("delete").run()
        at.text_input(key=state.stage_form_key("filter")).set_value("id = 2").run()
        assert at.button(key=state.stage_form_key("go")).disabled == email.startswith("ed")
        at.segmented_control(key=state.stage_form_key("kind")).set_value("update").run()
        at.text_area(key=state.stage_form_key("set")).set_value("item = 'x'").run()
        assert not at.button(key=state.stage_form_key("go")).disabled


@pytest.mark.slow
def test_fail_at_an_operation_leaves_every_table_unchanged(app: Any, ui_env: Path) -> None:
    at = stage(app, "delete", filter="id = 2")
    at = pick(at, "customers")
    at = stage(at, "update", set="vip = true", filter="id = 2")
    before = {t[-1]: dataset(ui_env, t).to_table() for t in (ORDERS, CUSTOMERS)}
    at = tools(at, "fail")
    at.selectbox(key=f"{state.Txn.TOOLS}.n").set_value(2).run()
    at.button(key=f"{state.Txn.TOOLS}.go").click().run()
    assert_no_exception(at)
    at = finish_watch(at)
    page = texts(at)
    assert (
        "Demo fault: an injected I/O error while the batch applies operation 2, at protocol step"
        in page
    )
    assert "The commit failed: InternalError: " in page
    assert "Recovery: transaction batch-" in page and " is FAILED" in page
    assert any(s.startswith("Every table is unchanged: 2 tables") for s in alerts(at, "success"))
    grid = next(d.value for d in at.dataframe if "outcome" in d.value.columns)
    assert list(grid["outcome"]) == ["unchanged", "unchanged"]
    assert "The reader saw: no table's version or row count changed while it watched." in page
    for t in (ORDERS, CUSTOMERS):
        assert dataset(ui_env, t).to_table().equals(before[t[-1]])
    assert len(held(at)) == 2  # still staged: publish them after all
    button(at, "Commit atomically").click().run()
    assert not at.error, alerts(at, "error")
    assert dataset(ui_env, ORDERS).version == 4


@pytest.mark.slow
def test_a_concurrent_writer_is_refused(app: Any, ui_env: Path) -> None:
    at = stage(app, "delete", filter="id = 2")
    at = pick(at, "customers")
    at = stage(at, "update", set="vip = true", filter="id = 2")
    customers = dataset(ui_env, CUSTOMERS).to_table()
    orders = dataset(ui_env, ORDERS).to_table()
    at = tools(at, "race")
    at.selectbox(key=f"{state.Txn.TOOLS}.table").set_value(ORDERS).run()
    at.button(key=f"{state.Txn.TOOLS}.go").click().run()
    assert_no_exception(at)
    at = finish_watch(at)
    (refused,) = [e for e in alerts(at, "error") if e.startswith("Batch commit failed.")]
    assert "Concurrent modification" in refused
    assert any("Nothing of it was published" in s for s in alerts(at, "success"))
    assert dataset(ui_env, CUSTOMERS).to_table().equals(customers)
    now = dataset(ui_env, ORDERS).to_table()
    assert now.equals(pa.concat_tables([orders, orders.slice(0, 1)]))  # the writer's row only
    assert "stale: the table is at v4 now" in texts(at)


def test_a_change_whose_files_another_cleanup_removed_is_refused_and_stays_listed(
    app: Any, ui_env: Path
) -> None:
    """Another process's cleanup of files no version refers to (lance's, as lancedb runs it)
    removes the data file of a staged update (the new values; its deletion file stays). The
    commit is refused in the page's words, naming the missing file; nothing is published;
    both changes stay listed, to be discarded."""
    at = stage(app, "delete", filter="id = 2")
    at = pick(at, "customers")
    at = stage(at, "update", set="vip = true", filter="id = 2")
    customers = dataset(ui_env, CUSTOMERS)
    before = customers.to_table()
    update = next(s for s in held(at) if s.table_id == tuple(CUSTOMERS))
    [written] = [f for f in update.files if f.startswith("data/")]
    customers.cleanup_old_versions(older_than=timedelta(seconds=-60), delete_unverified=True)
    assert not (Path(update.location) / written).exists()
    button(at, "Commit atomically").click().run()
    assert_no_exception(at)
    # the preflight finds it before anything is locked or written
    (refused,) = [e for e in alerts(at, "error") if e.startswith("1 problem blocks the commit")]
    assert "operation 2: CreateTableVersion sales › customers" in refused
    assert "the staged version's files are gone (1 of 2: " in refused and written in refused
    assert "LanceError" not in refused and ".rs:" not in refused
    assert dataset(ui_env, CUSTOMERS).to_table().equals(before)
    assert dataset(ui_env, ORDERS).version == 3
    assert [s.table_id for s in held(at)] == [tuple(ORDERS), tuple(CUSTOMERS)]


def test_the_guided_demo_on_the_demo_namespace(
    make_app: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guided tab picks three demo tables; its first step stages three changes a reader
    does not see; a step out of order is not offered; "Start over" discards them."""
    from tests.support import demo_copy

    root = demo_copy(tmp_path / "demo")
    monkeypatch.setenv("LANCE_CONSOLE_TARGET", str(root))
    at = make_app("transactions", query_params={"tab": "demo"})
    assert_no_exception(at)
    page = texts(at)
    assert "Tables: stdlib › modules, stdlib › text › functions, stdlib › symbols" in page
    steps = [b for b in at.button if b.key and b.key.startswith(f"{state.Txn.GUIDE_UI}.")]
    assert [b.disabled for b in steps] == [False] + [True] * 5
    ns = backend.connect(str(root))
    assert bb.list_staged(ns) == []
    at.button(key=f"{state.Txn.GUIDE_UI}.stage").click().run()
    assert_no_exception(at)
    assert "Three changes staged; a reader still sees the tables as they were." in texts(at)
    staged = bb.list_staged(ns)
    assert sorted(s.operation for s in staged) == ["Append", "Delete", "Update"]
    assert not at.button(key=f"{state.Txn.GUIDE_UI}.audit").disabled
    assert at.button(key=f"{state.Txn.GUIDE_UI}.publish").disabled
    at.button(key=f"{state.Txn.GUIDE_UI}.reset").click().run()
    assert_no_exception(at)
    assert bb.list_staged(ns) == []
    assert at.button(key=f"{state.Txn.GUIDE_UI}.stage").disabled is False


def test_the_guided_demo_needs_the_demo_tables(app: Any) -> None:
    app.session_state[state.Txn.TABS] = "Guided demo"
    app.run()
    assert_no_exception(app)
    assert not alerts(app, "error")  # nothing failed: the namespace is not the demo's
    (info,) = [i for i in alerts(app, "info") if "Rebuild the demo" in i]
    assert info.startswith("The guided demo needs 3 of the demo's tables")
