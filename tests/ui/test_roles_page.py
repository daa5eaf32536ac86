"""Sign-in and roles on the pages (AppTest seeds ``st.user`` and ``st.secrets``): a visitor
sees only the sign-in page; a viewer's writes are disabled with the reason; an editor may
write but not drop; only admins see the Audit page; every write lands in the audit log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend import audit
from tests.ui.conftest import app_as, assert_no_exception, open_page, texts


def buttons(at: Any) -> dict[str, Any]:
    return {str(b.label): b for b in at.button}


def test_visitor_sees_only_the_sign_in_page(roles: Path) -> None:
    at = app_as(None)
    page = texts(at)
    assert "Sign in to use this console." in page
    assert "Sign in" in buttons(at)
    assert "sales" not in page and "Namespaces" not in page  # nothing of the namespace
    assert not at.sidebar.selectbox  # no connection picker either


def test_viewer_writes_disabled_with_the_reason(roles: Path) -> None:
    at = app_as("vi@example.com", query={"ns": "sales"})
    page = texts(at)
    assert "Signed in as **vi@example.com** · viewer" in page
    assert "Writes are disabled: the viewer role may not change the namespace" in page
    for label in ("Declare a table", "Create a namespace"):
        assert buttons(at)[label].disabled, label
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        open_page(at, "views/audit.py")  # the Audit page is not offered to a viewer


def test_editor_may_declare_but_drop_is_an_admins(roles: Path) -> None:
    from components import state

    at = app_as("ed@example.com", query={"ns": "sales", "table": "orders"})
    assert not buttons(at)["Declare a table"].disabled
    at.session_state[state.panel_key(state.Tables.DROP_OPEN, ["sales", "orders"])] = True
    at.run()
    assert_no_exception(at)
    submit = [b for b in at.button if str(b.label) == "Drop table"]
    assert submit and submit[0].disabled
    assert "Disabled: the editor role may not delete data, catalog entries or history" in texts(at)


def test_admin_sees_every_write_in_the_audit_page(roles: Path) -> None:
    from lance_namespace import DeclareTableRequest

    from components.connection import get_namespace

    log = audit.AuditLog(roles)
    log.append(
        audit.AuditEntry(
            user="ed@example.com", connection="default", operation="declare_table",
            ids=["sales", "planned"], request=DeclareTableRequest(id=["sales", "planned"]),
        )
    )  # fmt: skip
    at = app_as("ada@example.com")
    open_page(at, "views/audit.py")
    assert_no_exception(at)
    assert "1 entry of 1" in texts(at)
    frame = at.dataframe[0].value
    assert list(frame["user"]) == ["ed@example.com"]
    assert list(frame["ids"]) == ["sales › planned"]
    assert [b.label for b in at.get("download_button")] == ["Export CSV"]
    assert get_namespace  # the page's namespace comes from the gate (tested in test_gate)


def test_audit_page_finds_a_batch_by_either_of_its_tables(roles: Path, tmp_path: Path) -> None:
    """A batch committed through the gate over two tables, and a single write of a third: the
    Audit page's table filter finds the batch by either of its tables, and shows them."""
    from lance_namespace import CreateNamespaceRequest, DeclareTableRequest

    import backend
    from backend import access
    from backend.gate import Actor, gate
    from components import state
    from tests.support import batch, op_declare, op_delete, with_versions

    root = tmp_path / "batch-root"
    root.mkdir()
    ns = backend.connect(str(root))
    admin = gate(ns, actor=Actor("ada@example.com", access.ADMIN), log=audit.AuditLog(roles))
    admin.create_namespace(CreateNamespaceRequest(id=["shop"]))
    with_versions(ns, ["shop", "orders"], 3)
    admin.batch_commit_tables(
        batch(op_declare(["shop", "refunds"]), op_delete(["shop", "orders"], (1, 2)))
    )
    admin.declare_table(DeclareTableRequest(id=["shop", "invoices"]))

    at = app_as("ada@example.com")
    open_page(at, "views/audit.py")
    # the three writes above, and whatever else this test process recorded meanwhile (a
    # background job of an earlier test finishing late): the filter must pick the batch
    shown = at.dataframe[0].value
    ours = shown[shown["user"] == "ada@example.com"]
    assert sorted(ours["operation"]) == ["batch_commit_tables", "create_namespace", "declare_table"]
    total = len(shown)
    assert f"{total} entries of {total}" in texts(at)
    box = [t for t in at.text_input if t.key == f"{state.Audit.VIEW}.table"]
    assert len(box) == 1
    for needle in ("refunds", "orders"):
        box[0].set_value(needle).run()
        assert_no_exception(at)
        assert f"1 entry of {total}" in texts(at), needle
        frame = at.dataframe[0].value
        assert list(frame["operation"]) == ["batch_commit_tables"]
        assert list(frame["tables"]) == [
            "shop › refunds (DeclareTable); shop › orders (DeleteTableVersions)"
        ]
    box[0].set_value("invoices").run()
    assert list(at.dataframe[0].value["operation"]) == ["declare_table"]


def test_the_audit_page_is_not_offered_to_anonymous_visitors_of_an_exposed_console(
    make_app, monkeypatch
) -> None:
    """Without sign-in every visitor acts as the OS user (an admin): on loopback that is the
    one person at the machine, who sees the Audit page; exposed on another address (the
    launcher says so), the page is not offered to anyone."""
    from backend.launcher import launch

    at = make_app()
    open_page(at, "views/audit.py")  # loopback: the OS user's own console
    assert_no_exception(at)
    assert "Audit" in [t.value for t in at.title]
    monkeypatch.setenv(launch.HOST_ENV, "0.0.0.0")
    at = make_app()
    assert_no_exception(at)
    assert "Namespaces & tables" in [t.value for t in at.title]  # the other pages are there
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        open_page(at, "views/audit.py")
