"""AppTest of the Transactions page on a real local namespace (``tests/ui/conftest.py``):
the batch-commit builder (add, reorder, remove, validate, preview, stage, clear, commit) and
describe / alter a transaction."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lance_namespace import CreateNamespaceRequest

import backend
from backend.rules import ids
from backend.rules import index_rules as rules
from backend.services import batch_builder as bb
from backend.services import index_overview as ixs
from backend.services import transactions as txsv
from backend.services.versions import latest_version
from backend.spec.paging import PAGE_SIZE
from components import state
from components.transactions.history import history_origin
from components.transactions.operations import UNKNOWN_SUPPORT
from components.transactions.tabs import ICON_ONLY_CSS
from tests.support import batch_records
from tests.ui.conftest import (
    alerts,
    assert_no_exception,
    button,
    new_app,
    texts,
)

QP = {"ns": "sales", "table": "orders"}


def ops(at) -> list[dict]:
    return list(at.session_state.get(state.Txn.OPERATIONS, []))


def kinds(at) -> list[str]:
    return [bb.kind_of(o) for o in ops(at)]


def staged(at) -> list[dict]:
    return list(at.session_state.get(state.Txn.STAGED, []))


def add(at, kind: str, table: str, **fields):
    """Fill the add-operation form of ``kind`` and submit it."""
    at.segmented_control(key="txn.add.kind").set_value(kind).run()
    assert_no_exception(at)
    prefix = state.txn_add_key(kind)
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
    button(at, "Add to batch").click().run()
    assert_no_exception(at)
    return at


def stage_delete(at, where: str):
    """Stage a delete of the picked table's rows matching ``where`` (the "Stage a change"
    form)."""
    at.segmented_control(key=state.stage_form_key("kind")).set_value("delete").run()
    at.text_input(key=state.stage_form_key("filter")).set_value(where).run()
    at.button(key=state.stage_form_key("go")).click().run()
    assert_no_exception(at)
    return at


def clear_batch(at):
    """ "Clear the batch", then confirm."""
    at.button(key="txn.clear.ask").click().run()
    at.button(key="txn.clear.yes").click().run()
    assert_no_exception(at)
    return at


@pytest.fixture
def app(make_app):
    at = make_app("transactions", query_params=QP)
    assert_no_exception(at)
    return at


def test_builder_add_reorder_remove(app) -> None:
    at = add(app, "declare_table", "sales$new", properties="owner=me\nteam=data")
    at = add(at, "deregister_table", "sales$customers")
    at = add(at, "delete_table_versions", "sales$orders", ranges="1-2")
    assert kinds(at) == ["declare_table", "deregister_table", "delete_table_versions"]
    assert bb.body_of(ops(at)[0])["properties"] == {"owner": "me", "team": "data"}
    # inclusive 1-2 is sent as the spec's end-exclusive [1, 3)
    assert bb.body_of(ops(at)[2])["ranges"] == [{"start_version": 1, "end_version": 3}]
    page = texts(at)
    assert "**1.** DeclareTable sales › new (2 properties)" in page  # numbered from 1
    assert "**3.** DeleteTableVersions sales › orders: versions 1-2" in page
    assert "Batch (3 operations)" in page

    at.button(key="txn.ops.2.up").click().run()
    assert kinds(at) == ["declare_table", "delete_table_versions", "deregister_table"]
    at.button(key="txn.ops.0.down").click().run()
    assert kinds(at) == ["delete_table_versions", "declare_table", "deregister_table"]
    assert at.button(key="txn.ops.0.up").disabled and at.button(key="txn.ops.2.down").disabled
    at.button(key="txn.ops.1.remove").click().run()
    assert kinds(at) == ["delete_table_versions", "deregister_table"]
    assert_no_exception(at)


def test_add_empties_the_form_and_a_refusal_keeps_it(app) -> None:
    """ "Add to batch" adds in its callback: in the same run the batch shows the operation
    and the form is empty again (its table field back to the picked table); a refused
    operation leaves the form as typed."""
    at = add(app, "declare_table", "sales$new", location="/tmp/x", properties="a=1")
    assert "**1.** DeclareTable sales › new" in texts(at)
    assert at.text_input(key=state.txn_add_key("declare_table", "table")).value == "sales › orders"
    assert at.text_input(key=state.txn_add_key("declare_table", "location")).value == ""
    assert at.text_area(key=state.txn_add_key("declare_table", "properties")).value == ""
    at = add(at, "delete_table_versions", "sales$orders", ranges="1:3")
    assert any(e.startswith("Not added:") for e in alerts(at, "error"))
    assert at.text_input(key=state.txn_add_key("delete_table_versions", "ranges")).value == "1:3"
    assert len(ops(at)) == 1


def test_counts_are_singular_for_one(app) -> None:
    at = add(app, "declare_table", "sales$new", properties="owner=me")
    page = texts(at)
    assert "DeclareTable sales › new (1 property)" in page and "(1 properties)" not in page
    assert "Batch (1 operation)" in page and "1 operation, committed atomically" in page
    assert "1 operations" not in page


def test_bad_input_is_not_added(app) -> None:
    at = add(app, "delete_table_versions", "sales$orders", ranges="1:3")
    assert any(
        e.startswith("Not added:") and "not a version or a range" in e for e in alerts(at, "error")
    )
    at = add(at, "declare_table", "sales$$x")
    assert any("empty" in e for e in alerts(at, "error"))
    at = add(at, "create_table_version", "sales$orders", version=4)  # no manifest path
    assert any("staged manifest path" in e for e in alerts(at, "error"))
    assert ops(at) == []
    assert "No operations yet" in texts(at)


def test_validate_and_preview(app) -> None:
    at = add(app, "declare_table", "sales$orders")  # exists
    at = add(at, "create_table_version", "sales$orders", version=9, manifest="/x/m.manifest")
    at = add(at, "delete_table_versions", "sales$orders", ranges="2-3")  # covers latest (3)
    at = add(at, "declare_table", "nowhere$t")  # missing namespace
    button(at, "Validate").click().run()
    assert_no_exception(at)
    (errors,) = alerts(at, "error")  # every problem in one box
    lines = errors.split("\n")
    assert lines[0].startswith("4 problems")
    assert lines[1].startswith("• operation 1: ") and "sales › orders" in lines[1]
    assert lines[2].startswith("• operation 2: ") and "9" in lines[2]
    assert lines[3].startswith("• operation 3: ") and "covers version 3" in lines[3]
    assert lines[4].startswith("• operation 4: ") and "nowhere" in lines[4]
    # problems are shown next to their operation too
    markdown = [m.value for m in at.markdown]
    assert sum(":material/error:" in m for m in markdown) == 4

    # the exact request body, in a keyed expander (an automatic rerun leaves it open), as
    # the demo tools beside it
    request = "Request JSON (as sent: POST /v1/table/batch-commit)"
    assert at.get_by_key(state.Txn.REQUEST_OPEN).label == request
    assert at.get_by_key(state.Txn.DEMO_TOOLS_OPEN).label == "Demo tools (admin only)"
    body = next(c.value for c in at.code if c.language == "json" and "operations" in c.value)
    sent = json.loads(body)
    assert [list(o) for o in sent["operations"]] == [
        ["declare_table"],
        ["create_table_version"],
        ["delete_table_versions"],
        ["declare_table"],
    ]
    assert sent["operations"][2]["delete_table_versions"]["ranges"] == [
        {"start_version": 2, "end_version": 4}
    ]
    assert sent["operations"][1]["create_table_version"] == {
        "id": ["sales", "orders"],
        "version": 9,
        "manifest_path": "/x/m.manifest",
    }


def test_one_problem_is_singular(app) -> None:
    at = add(app, "declare_table", "sales$orders")  # exists
    button(at, "Validate").click().run()
    (errors,) = alerts(at, "error")
    first = errors.split("\n")[0]
    assert first.startswith("1 problem ") and "1 problems" not in first
    assert "1 problem block " not in first  # "1 problem blocks the commit"


def test_commit_with_problems_shows_one_error_box(app, ui_env: Path) -> None:
    at = add(app, "declare_table", "sales$orders")  # exists
    at = add(at, "delete_table_versions", "sales$orders", ranges="3")  # the latest
    button(at, "Commit atomically").click().run()
    assert_no_exception(at)
    assert len(at.error) == 1, alerts(at, "error")
    (errors,) = alerts(at, "error")
    assert "operation 1: " in errors and "operation 2: " in errors
    assert len(ops(at)) == 2  # nothing committed, the batch stays
    assert latest_version(backend.connect(str(ui_env)), ["sales", "orders"]) == 3
    assert state.Txn.LAST_COMMIT not in at.session_state


def test_good_batch_validates(app) -> None:
    at = add(app, "declare_table", "sales$fresh")
    button(at, "Validate").click().run()
    assert alerts(at, "success") == ["Valid against the current namespace."]


def test_clear_the_batch_asks_for_confirmation(app) -> None:
    at = add(app, "declare_table", "sales$one")
    at = add(at, "declare_table", "sales$two")
    at.button(key="txn.clear.ask").click().run()
    assert len(ops(at)) == 2  # asked, not cleared
    assert "Remove every operation from the batch? Staged changes stay staged" in texts(at)
    at.button(key="txn.clear.no").click().run()
    assert len(ops(at)) == 2
    assert "txn.clear.yes" not in [b.key for b in at.button]
    clear_batch(at)
    assert ops(at) == []
    assert "No operations yet" in texts(at)
    assert "txn.clear.yes" not in [b.key for b in at.button]


def test_clearing_keeps_the_staged_changes(app, ui_env: Path) -> None:
    """Clearing the batch removes its operations only: a staged change stays staged, listed,
    until it is discarded (its files stay on disk, the table unchanged)."""
    at = stage_delete(app, "id = 2")
    (made,) = staged(at)
    assert [bb.body_of(o)["manifest_path"] for o in ops(at)] == [made["manifest_path"]]
    clear_batch(at)
    assert ops(at) == [] and staged(at) == [made]
    assert Path(made["manifest_path"]).is_file()
    assert "not in the batch" in texts(at)
    assert latest_version(backend.connect(str(ui_env)), ["sales", "orders"]) == 3


def test_stage_and_commit(app, ui_env: Path) -> None:
    ns = backend.connect(str(ui_env))
    at = stage_delete(app, "id = 2")
    at = add(at, "declare_table", "sales$fresh")
    button(at, "Validate").click().run()
    assert alerts(at, "success") == ["Valid against the current namespace."]
    button(at, "Commit atomically").click().run()
    assert_no_exception(at)
    assert not at.error, alerts(at, "error")
    assert any(s.startswith("Committed.") for s in alerts(at, "success"))
    assert ops(at) == [] and staged(at) == []
    results = next(d.value for d in at.dataframe if "result" in d.value.columns)
    assert list(results["#"]) == [1, 2]  # numbered from 1
    assert list(results["result"])[0] == "version 4 created"
    assert ns.count_table_rows({"id": ["sales", "orders"]}).count == 3  # the staged delete
    assert list(results["result"])[1].startswith("declared")
    assert latest_version(ns, ["sales", "orders"]) == 4
    history = at.session_state[state.Txn.HISTORY]
    assert history[0]["source"] == "batch commit"


def test_describe_and_alter_transaction(app, ui_env: Path) -> None:
    ns = backend.connect(str(ui_env))
    resp = ixs.create_index(
        ns, rules.build_index_request(["sales", "orders"], "id", "BTREE", name="b")
    )
    txn_text = f"sales$orders${resp.transaction_id}"

    at = app
    at.text_input(key=state.Txn.ID_INPUT).set_value("sales$$x")
    button(at, "Describe").click().run()
    assert any("empty" in e for e in alerts(at, "error"))

    at.text_input(key=state.Txn.ID_INPUT).set_value("sales$orders$no-such-txn")
    button(at, "Describe").click().run()
    assert_no_exception(at)
    assert any(e.startswith("DescribeTransaction failed.") for e in alerts(at, "error"))

    at.text_input(key=state.Txn.ID_INPUT).set_value(txn_text)
    button(at, "Describe").click().run()
    assert_no_exception(at)
    assert f"Transaction sales › orders › {resp.transaction_id}: status **SUCCEEDED**" in texts(at)
    props = next(d.value for d in at.dataframe if list(d.value.columns) == ["key", "value"])
    assert dict(zip(props["key"], props["value"], strict=True))["operation"] == "CreateIndex"

    # two actions in one request, numbered from 1
    at.segmented_control(key="txn.alter.kind").set_value("set_property").run()
    prefix = state.txn_alter_key("set_property")
    at.text_input(key=f"{prefix}.key").set_value("reviewed")
    at.text_input(key=f"{prefix}.value").set_value("yes")
    button(at, "Add action").click().run()
    assert "Apply 1 action in one request" in [b.label for b in at.button]
    at.segmented_control(key="txn.alter.kind").set_value("unset_property").run()
    prefix = state.txn_alter_key("unset_property")
    at.text_input(key=f"{prefix}.key").set_value("nothing")
    button(at, "Add action").click().run()
    assert_no_exception(at)
    listed = [m for m in texts(at).split("\n") if m.startswith(("1. ", "2. "))]
    assert len(listed) == 2 and "reviewed" in listed[0] and "nothing" in listed[1]
    button(at, "Apply 2 actions in one request").click().run()
    assert_no_exception(at)
    assert not at.error, alerts(at, "error")
    assert alerts(at, "success") == [
        f"Altered transaction sales › orders › {resp.transaction_id}: 2 actions applied; "
        "status SUCCEEDED."
    ]
    props = next(d.value for d in at.dataframe if list(d.value.columns) == ["key", "value"])
    assert dict(zip(props["key"], props["value"], strict=True))["reviewed"] == "yes"
    assert txsv.describe_transaction(ns, txn_text.split("$")).properties["reviewed"] == "yes"

    # the session's history: quick describe fills the id field again
    history = at.session_state[state.Txn.HISTORY]
    assert history[0]["id"] == txn_text.split("$")
    at.text_input(key=state.Txn.ID_INPUT).set_value("")
    at.button(key="txn.history.0.describe").click().run()
    assert_no_exception(at)
    assert at.text_input(key=state.Txn.ID_INPUT).value == f"sales › orders › {resp.transaction_id}"


def test_describe_a_bare_transaction_id_in_the_table_picked(app, ui_env: Path, make_app) -> None:
    """The bare uuid an index build answers with (as the console shows it) is completed with
    the table picked."""
    ns = backend.connect(str(ui_env))
    resp = ixs.create_index(
        ns, rules.build_index_request(["sales", "orders"], "id", "BTREE", name="b")
    )
    bare = resp.transaction_id
    at = app
    assert "A bare transaction id is looked up in sales › orders." in texts(at)
    at.text_input(key=state.Txn.ID_INPUT).set_value(bare)
    button(at, "Describe").click().run()
    assert_no_exception(at)
    assert not at.error, alerts(at, "error")
    assert f"Transaction sales › orders › {bare}: status **SUCCEEDED**" in texts(at)
    assert at.session_state[state.Txn.HISTORY][0]["id"] == ["sales", "orders", bare]

    at = make_app("transactions", query_params={"ns": "sales"})  # no table picked
    at.text_input(key=state.Txn.ID_INPUT).set_value(bare)
    button(at, "Describe").click().run()
    assert_no_exception(at)
    (error,) = alerts(at, "error")
    assert f"{bare} is a bare transaction id and no table is picked" in error
    assert f"namespace › table › {bare}" in error


def test_read_only_disables_writes(make_app) -> None:
    at = make_app("transactions", query_params={**QP, "ro": "true"})
    at = add(at, "declare_table", "sales$fresh")  # building is not writing
    assert len(ops(at)) == 1
    assert button(at, "Commit atomically").disabled
    at.segmented_control(key=state.stage_form_key("kind")).set_value("delete").run()
    at.text_input(key=state.stage_form_key("filter")).set_value("id = 2").run()
    assert at.button(key=state.stage_form_key("go")).disabled


def test_rest_server_without_batch_commit_is_known_from_its_refusal(ui_env, rest_server) -> None:
    """Nothing is sent to find out: unknown at first, the commit is offered; the server's
    refusal is reported (nothing changed) and from then on the page says so up front."""
    server_ns = backend.connect(rest_server.url)
    server_ns.create_namespace(CreateNamespaceRequest(id=["remote"]))
    at = new_app()
    at.run()
    at.button(key="conn.open").click().run()
    at.text_input(key="conn.form0.target").input(rest_server.url)
    at.text_input(key="conn.form0.name").input("srv")
    at.button(key="conn.form0.submit").click().run()
    at.switch_page("views/transactions.py")
    at.run()
    assert_no_exception(at)
    assert not alerts(at, "warning")
    assert any("is unknown until it answers a commit" in c.value for c in at.caption)
    assert "txn.stage.go" not in [b.key for b in at.button]  # staging: local only
    assert "Staging a change writes files next to the table: local backend only" in texts(at)
    at = add(at, "declare_table", "remote$t")
    # not known yet: Validate finds no problem but promises nothing
    button(at, "Validate").click().run()
    assert not alerts(at, "success")
    assert UNKNOWN_SUPPORT in alerts(at, "info")
    button(at, "Commit atomically").click().run()
    assert_no_exception(at)
    (error,) = alerts(at, "error")
    assert error.startswith("Batch commit failed. Unsupported operation: ")
    assert "UNSUPPORTED" not in error
    assert server_ns.list_tables({"id": ["remote"]}).tables == []
    at.run()
    (warning,) = alerts(at, "warning")
    assert warning.startswith(
        "This REST server cannot commit batches: this server does not implement "
        "BatchCommitTables (it refused a batch commit earlier in this session"
    )
    assert button(at, "Commit atomically").disabled
    # now known: Validate reports it as a problem, never "Valid"
    button(at, "Validate").click().run()
    assert not alerts(at, "success")
    (error,) = alerts(at, "error")
    assert error.startswith("1 problem blocks the commit:") and "does not implement" in error


def test_rest_server_profile_says_so_before_anything_is_sent(ui_env, rest_server) -> None:
    """A connection with the lance-dir server profile: the page knows up front."""
    backend.connect(rest_server.url).create_namespace(CreateNamespaceRequest(id=["remote"]))
    at = new_app()
    at.run()
    at.button(key="conn.open").click().run()
    at.text_input(key="conn.form0.target").input(rest_server.url)
    at.text_input(key="conn.form0.name").input("srv")
    at.selectbox(key="conn.form0.profile").set_value("lance-dir")
    at.button(key="conn.form0.submit").click().run()
    at.switch_page("views/transactions.py")
    at.run()
    assert_no_exception(at)
    (warning,) = alerts(at, "warning")
    assert warning.startswith(
        "This REST server cannot commit batches: this server does not implement "
        "BatchCommitTables (its server profile 'lance-dir' says so)"
    )
    # no list of the namespace's transactions: the spec has no operation for it
    assert alerts(at, "info") == [bb.NO_LIST_OPERATION]
    at = add(at, "declare_table", "remote$t")
    assert button(at, "Commit atomically").disabled
    button(at, "Validate").click().run()
    assert not alerts(at, "success")
    (error,) = alerts(at, "error")
    assert "does not implement BatchCommitTables" in error


def test_icon_only_buttons_have_names(app) -> None:
    at = add(app, "declare_table", "sales$one")
    at = add(at, "declare_table", "sales$two")
    assert at.button(key="txn.ops.0.up").label == "Move operation 1 up"
    assert at.button(key="txn.ops.0.down").label == "Move operation 1 down"
    assert at.button(key="txn.ops.1.remove").label == "Remove operation 2"
    assert at.button(key="txn.ops.1.up").proto.help == "Move up"
    assert all(k in ICON_ONLY_CSS for k in ("txn-ops-", "txn-history-"))


def test_the_table_field_follows_the_picker(app) -> None:
    """Pick orders, choose DeregisterTable, switch the picker to customers: "Add to batch"
    adds customers (the field shows the table picked each time the picker changes)."""
    at = app
    at.segmented_control(key="txn.add.kind").set_value("deregister_table").run()
    field = state.txn_add_key("deregister_table", "table")
    assert at.text_input(key=field).value == "sales › orders"
    at.selectbox(key="txn.picker.table").set_value("customers").run()
    assert_no_exception(at)
    assert at.text_input(key=field).value == "sales › customers"
    button(at, "Add to batch").click().run()
    assert_no_exception(at)
    assert [bb.body_of(o)["id"] for o in ops(at)] == [["sales", "customers"]]
    assert "**1.** DeregisterTable sales › customers" in texts(at)


def test_ids_typed_with_the_display_separator_are_accepted(app) -> None:
    at = add(app, "declare_table", "sales › fresh")
    at = add(at, "deregister_table", "sales$customers")
    assert [bb.body_of(o)["id"] for o in ops(at)] == [["sales", "fresh"], ["sales", "customers"]]
    at = add(at, "declare_table", "sales ›  › x")
    assert any("empty part" in e for e in alerts(at, "error"))
    assert len(ops(at)) == 2


def test_problems_and_errors_show_ids_with_the_separator(app) -> None:
    at = add(app, "declare_table", "sales$orders")  # exists
    button(at, "Validate").click().run()
    (errors,) = alerts(at, "error")
    assert "sales › orders" in errors and "sales$orders" not in errors
    assert not any("$" in m.value for m in at.markdown if ":material/error:" in m.value)


def test_a_reload_restores_the_batch_from_the_link(app, make_app) -> None:
    at = add(app, "declare_table", "sales$fresh", properties="owner=me")
    at = add(at, "delete_table_versions", "sales$orders", ranges="1-2")
    built = ops(at)
    link = at.query_params[state.QP_BATCH]
    link = link[0] if isinstance(link, list) else link
    assert 0 < len(link) <= bb.MAX_LINK_BATCH
    # a reload: a new session, the same URL
    again = make_app("transactions", query_params={**QP, state.QP_BATCH: link})
    assert_no_exception(again)
    assert ops(again) == built
    assert "**1.** DeclareTable sales › fresh (1 property)" in texts(again)
    # a damaged link: said, nothing restored
    broken = make_app("transactions", query_params={**QP, state.QP_BATCH: link[:-6] + "AAAAAA"})
    assert_no_exception(broken)
    assert ops(broken) == []
    assert any("cannot be read" in w for w in alerts(broken, "warning"))


def test_a_large_batch_stays_in_the_session_only(app) -> None:
    import uuid

    at = add(app, "declare_table", "sales$fresh")
    assert state.QP_BATCH in at.query_params
    many = [bb.declare_op(["sales", f"t_{uuid.uuid4().hex}"]) for _ in range(80)]
    assert bb.encode_batch(many) is None  # too long for a link
    at.session_state[state.Txn.OPERATIONS] = many
    at.run()
    assert_no_exception(at)
    assert state.QP_BATCH not in at.query_params
    assert ops(at) == many and "Batch (80 operations)" in texts(at)


def test_the_table_field_is_empty_when_no_table_is_picked(app, make_app) -> None:
    """No table picked: the field starts empty (its placeholder shows the form of an id),
    never the root's label "(root)" nor a table picked before; a picked table fills it, and
    unpicking empties it again unless the user typed an id of their own."""
    declare = state.txn_add_key("declare_table", "table")
    deregister = state.txn_add_key("deregister_table", "table")
    for qp in ({}, {"ns": "sales"}):
        at = make_app("transactions", query_params=qp)
        assert_no_exception(at)
        field = at.text_input(key=declare)
        assert field.value == "" and field.placeholder == "namespace › table"
        at.segmented_control(key="txn.add.kind").set_value("deregister_table").run()
        assert at.text_input(key=deregister).value == ""
        assert "(root)" not in texts(at)

    at = app  # sales › orders picked
    assert at.text_input(key=declare).value == "sales › orders"
    at.selectbox(key="txn.picker.ns").set_value(("hr",)).run()  # a namespace, no table picked
    assert_no_exception(at)
    assert at.selectbox(key="txn.picker.table").value is None
    assert at.text_input(key=declare).value == ""
    at.segmented_control(key="txn.add.kind").set_value("deregister_table").run()
    assert at.text_input(key=deregister).value == ""
    # an empty field adds nothing; it says the id is missing
    button(at, "Add to batch").click().run()
    assert ops(at) == [] and any(e.startswith("Not added:") for e in alerts(at, "error"))

    at.selectbox(key="txn.picker.table").set_value("staff").run()
    assert at.text_input(key=deregister).value == "hr › staff"
    at = add(at, "declare_table", "hr › other", properties="no equals sign")  # refused
    assert any(e.startswith("Not added:") for e in alerts(at, "error"))
    assert at.text_input(key=declare).value == "hr › other"
    at.selectbox(key="txn.picker.ns").set_value(("sales",)).run()  # no table picked
    assert at.text_input(key=declare).value == "hr › other"  # what the user typed stays
    at = add(at, "deregister_table", "sales$customers")
    assert at.text_input(key=deregister).value == ""  # emptied after the add: no table picked


def test_a_described_transaction_keeps_its_own_origin(app, ui_env: Path) -> None:
    """The history is what this session saw: a transaction it only described is not "made in
    this session" but says what it is (its own operation); one it made stays made here when
    described afterwards."""
    ns = backend.connect(str(ui_env))
    resp = ixs.create_index(  # made outside this session
        ns, rules.build_index_request(["sales", "orders"], "id", "BTREE", name="b")
    )
    at = app
    at.text_input(key=state.Txn.ID_INPUT).set_value(f"sales$orders${resp.transaction_id}")
    button(at, "Describe").click().run()
    assert_no_exception(at)
    page = texts(at)
    assert "Seen in this session" in page and "This session\n" not in page
    described = txsv.describe_transaction(ns, ["sales", "orders", resp.transaction_id])
    assert described.properties["operation"] == "CreateIndex"
    (entry,) = at.session_state[state.Txn.HISTORY]
    line = history_origin(entry)
    assert line.endswith("described here, made elsewhere · CreateIndex - SUCCEEDED")
    assert line in page and "made in this session" not in page

    at = add(at, "declare_table", "sales$fresh")
    button(at, "Commit atomically").click().run()
    assert_no_exception(at)
    txn = at.session_state[state.Txn.LAST_COMMIT]["transaction_id"]
    at.text_input(key=state.Txn.ID_INPUT).set_value(txn[0])
    button(at, "Describe").click().run()
    assert_no_exception(at)
    made, other = at.session_state[state.Txn.HISTORY]
    assert made["id"] == txn and other == entry
    assert history_origin(made).endswith(
        "made in this session: batch commit, then described - SUCCEEDED"
    )
    assert history_origin(made) in texts(at)


def test_the_namespace_batch_commits_are_listed_newest_first(ui_env: Path, make_app) -> None:
    """The "Namespace transactions" tab lists every batch commit of the namespace (its
    records under the root), newest first, paged; a commit made on the page joins it, and a
    new session lists the same."""
    ns = backend.connect(str(ui_env))
    made = [
        ns.batch_commit_tables(bb.to_request([bb.declare_op(["hr", f"t{i:02d}"])])).transaction_id
        for i in range(PAGE_SIZE + 1)
    ]
    records = batch_records(ui_env)  # the record files, read directly
    assert set(records) == set(made)
    newest_first = sorted(
        made, key=lambda t: (records[t]["properties"]["started_at"], records[t]["updated_at"], t),
        reverse=True,
    )  # fmt: skip

    at = make_app("transactions", query_params=QP)
    assert_no_exception(at)
    grid = next(d.value for d in at.dataframe if "transaction" in d.value.columns)
    assert list(grid["transaction"]) == newest_first[:PAGE_SIZE]
    assert set(grid["status"]) == {"SUCCEEDED"} and set(grid["operations"]) == {1}
    proto = next(d.proto for d in at.dataframe if "transaction" in d.value.columns)
    labels = [json.loads(proto.columns)[c]["label"] for c in grid.columns]
    assert labels == [
        "Transaction", "Status", "Started (UTC)", "Duration (ms)", "Operations", "Tables",
        "Why not committed",
    ]  # fmt: skip
    first = newest_first[0]
    assert grid["tables"][0] == ids.display_id(ids.parse_object_id(json.loads(
        records[first]["properties"]["tables"])[0]))  # fmt: skip
    assert f"1–{PAGE_SIZE} of {PAGE_SIZE + 1} batch commits" in texts(at)

    at = add(at, "declare_table", "sales$fresh")
    button(at, "Commit atomically").click().run()
    assert_no_exception(at)
    txn = at.session_state[state.Txn.LAST_COMMIT]["transaction_id"][0]
    grid = next(d.value for d in at.dataframe if "transaction" in d.value.columns)
    assert grid["transaction"][0] == txn and grid["tables"][0] == "sales › fresh"
    assert f"of {PAGE_SIZE + 2} batch commits" in texts(at)


def test_a_commit_the_preflight_refuses_is_in_the_audit_log(
    app, ui_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "Commit atomically" on a batch with problems sends nothing, and the audit log records
    the refusal with the problems as the reason, the connection by its target's name."""
    from backend import audit
    from components import session

    monkeypatch.setenv("LANCE_CONSOLE_AUDIT_DIR", str(tmp_path / "audit"))
    session._audit_log.clear()  # the log of this test's folder
    at = add(app, "declare_table", "sales$orders")  # exists
    button(at, "Commit atomically").click().run()
    assert_no_exception(at)
    (errors,) = alerts(at, "error")
    assert "operation 1: " in errors  # said on the page as well
    (entry,) = audit.AuditLog(tmp_path / "audit").entries()
    assert (entry.operation, entry.outcome) == ("batch_commit_tables", audit.REFUSED)
    assert entry.error_message is not None and "sales$orders" in entry.error_message
    assert entry.error_message.startswith("the preflight refused the batch: operation 1: ")
    assert [t["id"] for t in entry.tables] == [["sales", "orders"]]
    assert entry.connection == ui_env.name and entry.connection != "default"
    assert entry.target == str(ui_env) and entry.role == "admin"


def _link(data: Any) -> str:
    import base64
    import json
    import zlib

    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return "1." + base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


@pytest.mark.parametrize(
    ("data", "said"),
    [
        # fields the builder never writes: the commit would have carried them
        (
            [{"declare_table": {"id": ["sales", "x"], "identity": {"api_key": "k"}}}],
            "cannot be read",
        ),
        ([{"deregister_table": {"id": ["sales", "orders"], "branch": "b"}}], "cannot be read"),
        # nesting Python's JSON reader cannot follow: RecursionError before
        (b"[" * 100_000 + b"]" * 100_000, "cannot be read"),
        # repeats compress to a short link; each one drew three buttons holding the whole batch
        ([{"deregister_table": {"id": ["sales", "orders"]}}] * 1001, "a link holds at most 1,000"),
    ],
)
def test_a_link_batch_the_builder_did_not_write_is_refused(make_app, data: Any, said: str) -> None:
    at = make_app("transactions", query_params={**QP, state.QP_BATCH: _link(data)})
    assert_no_exception(at)
    assert ops(at) == []
    assert any(said in w for w in alerts(at, "warning")), alerts(at, "warning")


def test_moving_and_removing_operations_reads_the_batch_when_clicked(app) -> None:
    at = add(app, "declare_table", "sales$a1")
    at = add(at, "declare_table", "sales$a2")
    at = add(at, "declare_table", "sales$a3")
    at.button(key=f"{state.Txn.OPS}.2.up").click().run()
    assert [bb.body_of(o)["id"][-1] for o in ops(at)] == ["a1", "a3", "a2"]
    at.button(key=f"{state.Txn.OPS}.0.remove").click().run()
    assert [bb.body_of(o)["id"][-1] for o in ops(at)] == ["a3", "a2"]
    at.button(key=f"{state.Txn.OPS}.0.down").click().run()
    assert [bb.body_of(o)["id"][-1] for o in ops(at)] == ["a2", "a3"]
