"""Sign-in and roles on the pages (AppTest seeds ``st.user`` and ``st.secrets``): a visitor
sees only the sign-in page; a viewer's writes are disabled with the reason; an editor may
write but not drop; only admins see the Audit page; every write lands in the audit log."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from backend import audit
from tests.ui.conftest import AUTH, alerts, app_as, assert_no_exception, open_page, texts


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

    from components.session import get_namespace

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
    # who did what to which table, and how it ended, before where it came from (a long path)
    shown = list(at.dataframe[0].proto.column_order)
    assert shown[:6] == ["ts", "user", "role", "operation", "ids", "outcome"]
    assert sorted(shown) == sorted(audit.CSV_COLUMNS)  # every column, once
    # each headed in words, as the other grids (not by the CSV's field names)
    config = json.loads(at.dataframe[0].proto.columns)
    labels = [config[c]["label"] for c in shown]
    assert labels[:6] == [
        "Time (UTC)",
        "User",
        "Role",
        "Operation",
        "Table or namespace",
        "Outcome",
    ]
    assert all(label[0].isupper() or label == "ms" for label in labels), labels
    assert not any("_" in label for label in labels), labels
    assert [b.label for b in at.get("download_button")] == ["Export CSV"]
    assert get_namespace  # the page's namespace comes from the gate (tested in test_gate)


def test_the_audit_page_reads_past_damaged_lines(roles: Path) -> None:
    """One line of the log with a field of the wrong type, or a time that is no date, took
    the whole Audit page down (sorting users, the first day of the date range, the grid)."""
    from tests.backend.test_audit import DAMAGED_LINES

    log = audit.AuditLog(roles)
    log.append(audit.AuditEntry(user="ed@example.com", connection="default",
                                operation="declare_table", ids=["sales", "planned"]))  # fmt: skip
    with open(log.files()[-1], "a", encoding="utf-8") as f:
        for line in DAMAGED_LINES:
            f.write(json.dumps(line) + "\n")
        f.write('{"user": "\\ud800", "connection": "c", "operation": "declare_table"}\n')
    at = app_as("ada@example.com")
    open_page(at, "views/audit.py")
    assert_no_exception(at)
    assert "2 entries of 2" in texts(at)
    assert sorted(at.dataframe[0].value["user"]) == ["ed@example.com", "\ufffd"]


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
    for needle in ("refunds", "orders", "invoices"):
        box[0].set_value(needle).run()
        assert_no_exception(at)
        frame = at.dataframe[0].value
        # an entry of another test's late job (written even while this page runs) may name
        # a table of the same name: only ours are known, every row shown names the table (its
        # id or a batch's tables), and the count said is of the rows shown, out of at least
        # the entries seen before
        named = frame["ids"].astype(str) + " " + frame["tables"].astype(str)
        assert named.str.contains(needle, regex=False).all(), needle
        said = "1 entry" if len(frame) == 1 else f"{len(frame)} entries"
        of = re.search(rf"{said} of (\d+)", texts(at))
        assert of is not None and int(of.group(1)) >= total, needle
        mine = frame[frame["user"] == "ada@example.com"]
        assert len(mine) == 1, needle
        if needle == "invoices":
            assert list(mine["operation"]) == ["declare_table"]
            continue
        assert list(mine["operation"]) == ["batch_commit_tables"]
        assert list(mine["tables"]) == [
            "shop › refunds (DeclareTable); shop › orders (DeleteTableVersions)"
        ]


def test_the_audit_page_is_not_offered_to_anonymous_visitors_of_an_exposed_console(
    make_app, monkeypatch
) -> None:
    """Without sign-in every visitor acts as the OS user (an admin): on loopback that is the
    one person at the machine, who sees the Audit page; exposed on another address (the
    launcher says so), the page is not offered to anyone."""
    from backend.config import launch

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


# -- deny by default ---------------------------------------------------------------------------
ROUTE_SCRIPTS = [f"views/{r}" for r in (
    "tables.py", "versions.py", "indexes.py", "search.py", "transfer.py", "transactions.py",
    "inspector.py", "audit.py",
)]  # fmt: skip


def write_roles(path: Path, text: str) -> None:
    """Write the roles file and move its modification time on (the console re-reads it)."""
    import os

    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def test_a_user_without_a_role_sees_no_access_and_no_data(
    roles: Path, monkeypatch, ui_root: Path
) -> None:
    """roles.toml with ``default = ""``: a user no rule names sees the no-access page on every
    page, with sign-out, and nothing of the namespace (no table list, no row)."""
    import os

    import pyarrow as pa

    import backend

    write_roles(
        Path(os.environ["LANCE_CONSOLE_ROLES"]),
        'default = ""\n[users]\n"ada@example.com" = "admin"\n',
    )
    # what the pages would show: the table names and every value of sales › orders
    orders = backend.connect(str(ui_root)).open_dataset(["sales", "orders"]).to_table()
    values = set(orders.column("item").to_pylist())
    assert isinstance(orders, pa.Table) and {"ink", "nib"} <= values
    at = app_as("eve@example.com", query={"ns": "sales", "table": "orders"})
    for script in ROUTE_SCRIPTS:
        open_page(at, script)
        assert_no_exception(at)
        page = texts(at)
        assert "No access: eve@example.com has no role in this console." in page, script
        assert "Ask an administrator to add you" in page
        assert "Sign out" in buttons(at)
        for needle in ("orders", "customers", "sales", "Namespaces", *values):
            assert needle not in page.replace("eve@example.com", ""), (script, needle)
        assert not at.dataframe and not at.sidebar.selectbox, script
    # the same user, once a rule names them, reads
    write_roles(
        Path(os.environ["LANCE_CONSOLE_ROLES"]),
        'default = ""\n[users]\n"eve@example.com" = "viewer"\n',
    )
    at = app_as("eve@example.com", query={"ns": "sales"})
    assert "No access" not in texts(at) and "Tables in sales" in texts(at)


def test_an_unverified_email_gets_no_role_from_an_email_rule(roles: Path) -> None:
    import os

    write_roles(
        Path(os.environ["LANCE_CONSOLE_ROLES"]),
        'default = ""\n[users]\n"ada@example.com" = "admin"\n',
    )
    at = app_as("ada@example.com", verified=False)
    assert "No access: ada@example.com has no role in this console." in texts(at)
    at = app_as("ada@example.com")
    assert "Signed in as **ada@example.com** · admin" in texts(at)


def test_a_roles_file_broken_while_running_denies_and_tells_admins_once(roles: Path) -> None:
    import os

    path = Path(os.environ["LANCE_CONSOLE_ROLES"])
    admin = app_as("ada@example.com", query={"ns": "sales"})  # the file is valid: ada is admin
    assert "Tables in sales" in texts(admin)
    write_roles(
        path,
        'default = "viewer"\n[users]\n"ada@example.com" = "Admin"\n"ed@example.com" = "editor"\n',
    )
    admin.run()
    assert_no_exception(admin)
    page = texts(admin)
    assert "No access" in page and "sales" not in page  # access falls back to deny
    (error,) = alerts(admin, "error")  # once, not once per read
    assert "'ada@example.com' has role 'Admin'" in error and str(path) in error
    viewer = app_as("vi@example.com", query={"ns": "sales"})
    page = texts(viewer)
    assert "No access: vi@example.com has no role" in page
    assert "cannot be used right now" in page
    assert not viewer.error and "ada@example.com" not in page and "Admin" not in page
    assert "sales" not in page


def test_the_actor_is_worked_out_once_a_run_and_a_new_role_counts_at_the_next(
    roles: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every cached read of a run asks for the actor (the write gate): the sign-in settings,
    claims and role are worked out once per run of the frame; a role changed in the roles
    file counts from the next run."""
    import os

    from components import auth

    made: list[Any] = []
    real = auth._actor

    def counting() -> Any:
        made.append(real())
        return made[-1]

    monkeypatch.setattr(auth, "_actor", counting)
    at = app_as("ed@example.com", query={"ns": "sales", "table": "orders"})
    open_page(at, "views/versions.py")
    made.clear()
    at.run()
    assert_no_exception(at)
    assert [a.role for a in made] == ["editor"]
    write_roles(
        Path(os.environ["LANCE_CONSOLE_ROLES"]),
        'default = "viewer"\n[users]\n"ed@example.com" = "viewer"\n',
    )
    at.run()
    assert_no_exception(at)
    assert [a.role for a in made] == ["editor", "viewer"]
    assert "Signed in as **ed@example.com** · viewer" in texts(at)


def test_admins_see_whether_sign_in_is_on_and_with_which_provider(roles: Path) -> None:
    admin = texts(app_as("ada@example.com"))
    assert "Sign-in: on (provider 127.0.0.1, from" in admin
    assert AUTH["client_secret"] not in admin and AUTH["cookie_secret"] not in admin
    assert "Sign-in: on" not in texts(app_as("vi@example.com"))  # admins only


def test_an_incomplete_auth_section_lets_nobody_in(roles: Path) -> None:
    """[auth] without client_secret: nobody gets in (not even as the OS user), and the page
    names what is missing."""
    incomplete = {k: v for k, v in AUTH.items() if k != "client_secret"}
    for who in (None, "ada@example.com"):
        at = app_as(who, auth=incomplete, query={"ns": "sales"})
        page = texts(at)
        assert "Sign-in is configured but incomplete, so nobody can sign in" in page
        assert "[auth] is missing client_secret" in page
        assert "sales" not in page and "Sign in" not in buttons(at)
        assert not at.sidebar.selectbox
