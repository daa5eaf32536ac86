"""AppTest of the Transactions page on a real local namespace (``tests/ui/conftest.py``):
the batch-commit builder (add, reorder, remove, validate, preview, stage, commit) and
describe / alter a transaction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import backend
from backend import indexes as ix
from components import state
from tests.ui.conftest import assert_no_exception, texts

QP = {"ns": "sales", "table": "orders"}


def ops(at) -> list[dict]:
    return list(at.session_state.get(state.TXN_OPERATIONS) or [])


def fv(at) -> int:
    return at.session_state.get(state.TXN_FORM_VERSION, 0)


def add(at, kind: str, table: str, **fields):
    """Fill the add-operation form of ``kind`` and submit it."""
    at.segmented_control(key="txn.add.kind").set_value(kind).run()
    assert_no_exception(at)
    prefix = f"txn.add.{kind}.{fv(at)}"
    at.text_input(key=f"{prefix}.table").set_value(table)
    for name, value in fields.items():
        widget = {
            "version": at.number_input,
            "size": at.number_input,
            "manifest": at.text_input,
            "ranges": at.text_input,
            "location": at.text_input,
            "properties": at.text_area,
        }[name]
        widget(key=f"{prefix}.{name}").set_value(value)
    next(b for b in at.button if b.label == "Add to batch").click().run()
    assert_no_exception(at)
    return at


def button(at, label: str):
    return next(b for b in at.button if b.label == label)


@pytest.fixture
def app(make_app):
    at = make_app("transactions", query_params=QP)
    assert_no_exception(at)
    return at


def test_builder_add_reorder_remove(app) -> None:
    at = add(app, "declare_table", "sales$new", properties="owner=me\nteam=data")
    at = add(at, "deregister_table", "sales$customers")
    at = add(at, "delete_table_versions", "sales$orders", ranges="1:2")
    assert [o["kind"] for o in ops(at)] == [
        "declare_table",
        "deregister_table",
        "delete_table_versions",
    ]
    assert ops(at)[0]["properties"] == {"owner": "me", "team": "data"}
    assert ops(at)[2]["ranges"] == [[1, 2]]
    page = texts(at)
    assert "DeclareTable sales$new (2 properties)" in page
    assert "DeleteTableVersions sales$orders: [1, 2)" in page

    at.button(key="txn.ops.2.up").click().run()
    assert [o["kind"] for o in ops(at)] == [
        "declare_table",
        "delete_table_versions",
        "deregister_table",
    ]
    at.button(key="txn.ops.0.down").click().run()
    assert [o["kind"] for o in ops(at)] == [
        "delete_table_versions",
        "declare_table",
        "deregister_table",
    ]
    assert at.button(key="txn.ops.0.up").disabled and at.button(key="txn.ops.2.down").disabled
    at.button(key="txn.ops.1.remove").click().run()
    assert [o["kind"] for o in ops(at)] == ["delete_table_versions", "deregister_table"]
    assert_no_exception(at)


def test_bad_input_is_not_added(app) -> None:
    at = add(app, "delete_table_versions", "sales$orders", ranges="1-3")
    assert "Not added" in " ".join(e.value for e in at.error)
    at = add(at, "declare_table", "sales$$x")
    assert "empty part" in " ".join(e.value for e in at.error)
    at = add(at, "create_table_version", "sales$orders", version=4)  # no manifest path
    assert "staged manifest path" in " ".join(e.value for e in at.error)
    assert ops(at) == []


def test_validate_and_preview(app) -> None:
    at = add(app, "declare_table", "sales$orders")  # exists
    at = add(at, "create_table_version", "sales$orders", version=9, manifest="/x/m.manifest")
    at = add(at, "delete_table_versions", "sales$orders", ranges="2:-1")  # covers latest
    at = add(at, "declare_table", "nowhere$t")  # missing namespace
    button(at, "Validate").click().run()
    assert_no_exception(at)
    errors = " ".join(e.value for e in at.error)
    assert "#1: Table sales$orders already exists" in errors
    assert "#2: Version 9 of sales$orders is not the next version: the latest is 3" in errors
    assert "#3: Range [2, latest] covers the latest version" in errors
    assert "#4: Namespace 'nowhere' does not exist" in errors
    # problems are shown next to their operation too
    assert "Table sales$orders already exists: it cannot be declared." in texts(at)

    # the exact request body
    body = next(c.value for c in at.code if c.language == "json" and "operations" in c.value)
    sent = json.loads(body)
    assert [list(o) for o in sent["operations"]] == [
        ["declare_table"],
        ["create_table_version"],
        ["delete_table_versions"],
        ["declare_table"],
    ]
    assert sent["operations"][2]["delete_table_versions"]["ranges"] == [
        {"start_version": 2, "end_version": -1}
    ]
    assert sent["operations"][1]["create_table_version"] == {
        "id": ["sales", "orders"],
        "version": 9,
        "manifest_path": "/x/m.manifest",
    }

    # committing an invalid batch is refused before any call
    button(at, "Commit atomically").click().run()
    assert "Not committed" in " ".join(e.value for e in at.error)
    assert len(ops(at)) == 4

    # a good batch validates
    button(at, "Clear the batch").click().run()
    at = add(at, "declare_table", "sales$fresh")
    button(at, "Validate").click().run()
    assert "Valid against the current namespace." in " ".join(s.value for s in at.success)


def test_stage_and_commit(app, ui_env: Path) -> None:
    ns = backend.connect(str(ui_env))
    button(app, "Stage next version from current").click().run()
    assert_no_exception(app)
    (op,) = ops(app)
    assert op["kind"] == "create_table_version" and op["id"] == ["sales", "orders"]
    assert op["version"] == 4 and Path(op["manifest_path"]).is_file()
    at = add(app, "declare_table", "sales$fresh")
    button(at, "Validate").click().run()
    assert "Valid against the current namespace." in " ".join(s.value for s in at.success)
    button(at, "Commit atomically").click().run()
    assert_no_exception(at)
    if not backend.capabilities(ns).batch_commit:
        assert "UNSUPPORTED" in " ".join(e.value for e in at.error)
        return
    assert not at.error, [e.value for e in at.error]
    assert "Committed." in " ".join(s.value for s in at.success)
    assert ops(at) == []
    results = next(d.value for d in at.dataframe if "result" in d.value.columns)
    assert list(results["result"])[0] == "version 4 created"
    assert list(results["result"])[1].startswith("declared")
    from backend import txn_builder as tb

    assert tb.latest_version(ns, ["sales", "orders"]) == 4
    history = at.session_state[state.TXN_HISTORY]
    assert history[0]["source"] == "batch commit"


def test_describe_and_alter_transaction(app, ui_env: Path) -> None:
    ns = backend.connect(str(ui_env))
    resp = ix.create_index(ns, ix.build_index_request(["sales", "orders"], "id", "BTREE", name="b"))
    txn_text = f"sales$orders${resp.transaction_id}"

    at = app
    at.text_input(key=state.TXN_ID_INPUT).set_value("sales$$x")
    button(at, "Describe").click().run()
    assert "empty part" in " ".join(e.value for e in at.error)

    at.text_input(key=state.TXN_ID_INPUT).set_value("sales$orders$no-such-txn")
    button(at, "Describe").click().run()
    assert_no_exception(at)
    assert "DescribeTransaction failed" in " ".join(e.value for e in at.error)

    at.text_input(key=state.TXN_ID_INPUT).set_value(txn_text)
    button(at, "Describe").click().run()
    assert_no_exception(at)
    page = texts(at)
    assert f"Transaction `{txn_text}` - status **SUCCEEDED**" in page
    props = next(d.value for d in at.dataframe if list(d.value.columns) == ["key", "value"])
    assert dict(zip(props["key"], props["value"], strict=True))["operation"] == "CreateIndex"

    # two actions in one request
    at.segmented_control(key="txn.alter.kind").set_value("set_property").run()
    prefix = f"txn.alter.set_property.{fv(at)}.0"
    at.text_input(key=f"{prefix}.key").set_value("reviewed")
    at.text_input(key=f"{prefix}.value").set_value("yes")
    button(at, "Add action").click().run()
    at.segmented_control(key="txn.alter.kind").set_value("unset_property").run()
    prefix = f"txn.alter.unset_property.{fv(at)}.1"
    at.text_input(key=f"{prefix}.key").set_value("nothing")
    button(at, "Add action").click().run()
    assert_no_exception(at)
    assert "set reviewed = 'yes' (if exists: Overwrite)" in texts(at)
    assert "unset nothing (if missing: Skip)" in texts(at)
    button(at, "Apply 2 action(s) in one request").click().run()
    assert_no_exception(at)
    assert not at.error, [e.value for e in at.error]
    props = next(d.value for d in at.dataframe if list(d.value.columns) == ["key", "value"])
    assert dict(zip(props["key"], props["value"], strict=True))["reviewed"] == "yes"
    from backend import txn_builder as tb

    assert tb.describe_transaction(ns, txn_text.split("$")).properties["reviewed"] == "yes"

    # the session's history: quick describe fills the id field again
    history = at.session_state[state.TXN_HISTORY]
    assert history[0]["id"] == txn_text.split("$")
    at.text_input(key=state.TXN_ID_INPUT).set_value("")
    at.button(key="txn.history.0.describe").click().run()
    assert_no_exception(at)
    assert at.text_input(key=state.TXN_ID_INPUT).value == txn_text


def test_read_only_disables_writes(make_app) -> None:
    at = make_app("transactions", query_params=QP)
    at.session_state[state.READ_ONLY] = True
    at.run()
    at = add(at, "declare_table", "sales$fresh")  # building is not writing
    assert len(ops(at)) == 1
    assert button(at, "Commit atomically").disabled
    assert button(at, "Stage next version from current").disabled


def test_server_source_locations_are_trimmed() -> None:
    from components.transactions import trim_source_locations

    rust = "/home/ci/lance/rust/lance-namespace-impls/src/dir/namespace.rs:385:13"
    assert (
        trim_source_locations(f"Not supported: batch_commit_tables not implemented, {rust}")
        == "Not supported: batch_commit_tables not implemented"
    )
    text = f"**Batch commit failed** - `UNSUPPORTED`: no, {rust}  \nHTTP status: 406"
    assert (
        trim_source_locations(text)
        == "**Batch commit failed** - `UNSUPPORTED`: no  \nHTTP status: 406"
    )
    for kept in ("version 1.2.3 is fine", "see file x.rs", "a, b: 3:4"):
        assert trim_source_locations(kept) == kept


def test_icon_only_buttons_have_names(app) -> None:
    at = add(app, "declare_table", "sales$one")
    at = add(at, "declare_table", "sales$two")
    assert at.button(key="txn.ops.0.up").label == "Move operation 1 up"
    assert at.button(key="txn.ops.0.down").label == "Move operation 1 down"
    assert at.button(key="txn.ops.1.remove").label == "Remove operation 2"
    assert at.button(key="txn.ops.1.up").proto.help == "Move up"
