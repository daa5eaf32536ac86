"""AppTest: the session (``components.session``) - the default connection, the URL (picker and
read-only switch bound to ``?conn=`` / ``?ro=``), read-only and the write gate on every write
path, the client cache and reachability, typed targets as configuration (allowlist, roles, audit
log), and no demo built on a read."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from lance_namespace import (
    CreateNamespaceRequest,
    DeclareTableRequest,
    DeclareTableResponse,
    ListNamespacesRequest,
)
from lance_namespace.errors import ServiceUnavailableError

import backend
from backend.config import saved_connections as conns
from backend.redaction import REDACTED, mask_value, redact_json
from components import connection_writes, session
from components.snippets import python_snippet
from tests.ui.conftest import (
    alerts,
    assert_no_exception,
    connect_form,
    namespace_buttons,
    new_app,
    offered,
    open_page,
    other_root,
    paths_shown,
    save_config,
    texts,
)

API_KEY = "sekrit-api-key-0123456789abcdef"
WRITE_BUTTONS = ("tables.declare.open", "tables.create_ns.open")


def test_default_connection_is_visible(make_app, ui_env) -> None:
    at = make_app()
    assert_no_exception(at)
    page = texts(at)
    assert at.selectbox(key="conn").value == "default"
    assert offered(at) == ["default"]
    assert ":green-badge[local] :gray-badge[writable]" in page
    assert str(ui_env) in paths_shown(at)
    assert "reachable" in page and "not reachable" not in page
    assert at.toggle(key="ro").value is False
    assert namespace_buttons(at) == {"bulk", "hr", "logs", "sales"}


def test_picker_and_read_only_switch_are_bound_to_the_url(make_app) -> None:
    at = make_app()
    assert at.selectbox(key="conn").proto.query_param_key == "conn"
    assert at.toggle(key="ro").proto.query_param_key == "ro"


def test_ro_query_parameter_starts_read_only(make_app) -> None:
    at = make_app(query_params={"ro": "true", "ns": "sales", "table": "orders"})
    assert_no_exception(at)
    assert at.toggle(key="ro").value is True
    assert ":orange-badge[:material/lock: read-only]" in texts(at)
    for key in (*WRITE_BUTTONS, "FormSubmitter:tables.deregister0-Deregister"):
        assert at.button(key=key).disabled, key
    at.run()  # a rerun keeps it
    assert at.toggle(key="ro").value is True


def test_reload_keeps_connection_and_read_only(make_app, tmp_path: Path) -> None:
    root = other_root(tmp_path)
    save_config(tmp_path, f'[connections.archive]\ntarget = "{root}"\n')
    # a reload of ?conn=archive&ro=true: a new session whose URL names both
    at = make_app(query_params={"conn": "archive", "ro": "true"})
    assert_no_exception(at)
    assert at.selectbox(key="conn").value == "archive"
    assert at.toggle(key="ro").value is True
    assert namespace_buttons(at) == {"elsewhere"}
    assert str(root) in paths_shown(at)
    assert not at.warning
    # ... and without ro: the same connection, writable
    at = make_app(query_params={"conn": "archive"})
    assert at.selectbox(key="conn").value == "archive"
    assert at.toggle(key="ro").value is False
    assert namespace_buttons(at) == {"elsewhere"}
    assert not at.button(key="tables.create_ns.open").disabled


def test_picked_connection_survives_a_reload(make_app, tmp_path: Path) -> None:
    """What the browser writes to ?conn= for a pick (the option's label: a bound selectbox
    serializes its formatted option) must bring the same connection back after a reload."""
    root = other_root(tmp_path)
    save_config(tmp_path, f'[connections.archive]\ntarget = "{root}"\n')
    at = make_app()
    picker = at.selectbox(key="conn")
    url_value = picker.proto.options[picker.options.index(picker.format_func("archive"))]
    assert url_value == "archive"  # ?conn= is the saved name, never a label or a target
    reloaded = make_app(query_params={"conn": url_value})
    assert_no_exception(reloaded)
    assert reloaded.selectbox(key="conn").value == "archive"
    assert reloaded.toggle(key="ro").value is False and not reloaded.warning
    assert str(root) in paths_shown(reloaded)


def test_another_connection_starts_at_its_root_with_nothing_selected(
    make_app, ui_env, tmp_path: Path
) -> None:
    """Picking another connection takes the previous one's namespace, table and branch out of
    the URL too: a link copied then opens the new connection's root."""
    from backend.services import branches

    branches.create_branch(backend.connect(str(ui_env)), ["sales", "orders"], "dev", from_version=1)
    root = other_root(tmp_path)
    save_config(tmp_path, f'[connections.archive]\ntarget = "{root}"\n')
    at = make_app("versions", query_params={"ns": "sales", "table": "orders", "branch": "dev"})
    assert at.query_params["branch"] == "dev"
    at.selectbox(key="conn").set_value("archive").run()
    assert_no_exception(at)
    assert at.selectbox(key="conn").value == "archive"
    assert not {"ns", "table", "branch"} & set(at.query_params), at.query_params


def test_unknown_connection_in_link_opens_default_read_only(make_app, ui_env) -> None:
    at = make_app(query_params={"conn": "unknown"})
    assert_no_exception(at)
    warnings = " ".join(alerts(at, "warning"))
    assert "names the connection unknown" in warnings and "read-only" in warnings
    assert at.selectbox(key="conn").value == "default"
    assert at.toggle(key="ro").value is True
    assert str(ui_env) in paths_shown(at)
    assert namespace_buttons(at) == {"bulk", "hr", "logs", "sales"}
    for key in WRITE_BUTTONS:
        assert at.button(key=key).disabled, key
    at.run()  # the warning was shown once; the session stays read-only
    assert at.toggle(key="ro").value is True
    assert not any("names the connection" in w for w in alerts(at, "warning"))


def test_read_only_launch_is_fixed_for_the_server(make_app, monkeypatch, ui_env) -> None:
    """``lance-console --read-only`` (the launcher sets the variables of ``backend.config.launch``):
    the switch shows the lock and cannot lift it, neither by a click nor by ``?ro=false``."""
    from backend.config import launch

    monkeypatch.setenv(launch.READ_ONLY_ENV, "1")
    monkeypatch.setenv(launch.READ_ONLY_REASON_ENV, "started with --read-only")
    for query in ({}, {"ro": "false"}):
        at = make_app(query_params={"ns": "hr", **query})
        assert_no_exception(at)
        switch = at.toggle(key="ro")
        assert switch.value is True and switch.disabled
        assert "Read-only server: started with --read-only." in texts(at)
        assert all(at.button(key=k).disabled for k in WRITE_BUTTONS)
    at.session_state["ro"] = False  # the switch's state sent by a client anyway
    at.run()
    assert at.toggle(key="ro").value is True
    assert ":orange-badge[:material/lock: read-only]" in texts(at)
    assert all(at.button(key=k).disabled for k in WRITE_BUTTONS)


DIRECT_WRITES = """
import streamlit as st
from lance_namespace import DeclareTableRequest

from backend.services import lifecycle
from backend.services import tags as tagsv
from components import feedback
from components.session import get_namespace
from components.sidebar import render_connection_sidebar

render_connection_sidebar()
ns = get_namespace()
feedback.run(ns.declare_table, DeclareTableRequest(id=["hr", "sneaky"]), action="Declaring")
feedback.run(lifecycle.drop_table, ns, ["hr", "staff"], action="Dropping")
feedback.run(
    tagsv.create_tag, ns, ["sales", "orders"], "gold", 1, action="Tagging"
)
"""


@pytest.mark.parametrize("how", ["launch", "switch"])
def test_every_write_path_refuses_while_read_only(ui_env, monkeypatch, how: str) -> None:
    """Service calls a page makes itself, past every disabled button, are refused below the
    UI (``backend.gate``) with a readable error; nothing changes on disk."""
    from streamlit.testing.v1 import AppTest

    from backend.config import launch
    from backend.services import tags as tagsv
    from tests.ui.conftest import TIMEOUT

    if how == "launch":
        monkeypatch.setenv(launch.READ_ONLY_ENV, "1")
    at = AppTest.from_string(DIRECT_WRITES, default_timeout=TIMEOUT)
    if how == "switch":
        at.query_params["ro"] = "true"
    at.run()
    assert_no_exception(at)
    errors = alerts(at, "error")
    assert len(errors) == 3, errors
    for action, operation in (
        ("Declaring", "declare_table"),
        ("Dropping", "drop_table"),
        ("Tagging", "create_table_tag"),
    ):
        assert any(
            e.startswith(f"{action} failed. Permission denied: ") and operation in e for e in errors
        ), (action, errors)
    ns = backend.connect(str(ui_env))
    assert ns.list_tables({"id": ["hr"]}).tables == ["staff"]
    assert tagsv.list_tags(ns, ["sales", "orders"]).empty


def test_read_only_disables_writes_on_every_page(make_app) -> None:
    at = make_app(query_params={"ns": "sales", "table": "orders"})
    submit = "FormSubmitter:tables.declare0-Declare table"
    assert not at.button(key="tables.declare.open").disabled
    at.button(key="tables.declare.open").click().run()
    assert not at.button(key=submit).disabled
    at.toggle(key="ro").set_value(True).run()  # with the dialog still open
    assert ":orange-badge[:material/lock: read-only]" in texts(at)
    for key in (submit, *WRITE_BUTTONS, "FormSubmitter:tables.deregister0-Deregister"):
        assert at.button(key=key).disabled, key
    at.session_state["tables.dialog"] = "create_ns"  # a dialog open from before the switch
    at.run()
    assert at.button(key="FormSubmitter:tables.create_ns0-Create namespace").disabled
    assert "Read-only connection" in texts(at)
    from components import state

    at.session_state[state.Versions.MANAGE_OPEN] = True  # "Manage versions" at "Delete by range"
    at.session_state[state.Versions.MANAGE_TAB] = "Delete by range"
    open_page(at, "versions")
    deletes = [b for b in at.button if b.key and b.key.endswith("-Delete versions")]
    assert deletes and all(b.disabled for b in deletes)
    open_page(at, "transactions")
    at.segmented_control(key=state.stage_form_key("kind")).set_value("delete").run()
    at.text_input(key=state.stage_form_key("filter")).set_value("id = 2").run()
    assert at.button(key=state.stage_form_key("go")).disabled  # staging writes files


def test_picking_a_busy_server_asks_it_once(make_app, ui_env, tmp_path: Path, busy_server) -> None:
    """Picking a connection (saved, or typed in the dialog) is one question to the server: a
    server that answers 503 is reported at once, not asked again through the client's
    retries (the connection's own client still retries the calls that are safe to repeat)."""
    url, asked = busy_server
    save_config(tmp_path, f'[connections.busy]\ntarget = "{url}"\n')
    at = make_app()
    asked.clear()  # the picker lists the saved connections; nothing is asked of them yet
    at.selectbox(key="conn").set_value("busy").run()
    assert_no_exception(at)
    assert len(asked) == 1, asked
    assert any("the server is busy" in e for e in alerts(at, "error"))
    assert at.selectbox(key="conn").value == "default"  # still on the previous connection
    assert str(ui_env) in paths_shown(at)
    asked.clear()
    connect_form(at, url, name="typed", api_key=API_KEY)
    assert_no_exception(at)
    assert len(asked) == 1, asked
    assert at.selectbox(key="conn").value == "default"
    # the connection's own client: a safe call is tried again on 503
    asked.clear()
    with pytest.raises(ServiceUnavailableError, match="the server is busy"):
        backend.connect(url, backoff=0.0).list_namespaces(ListNamespacesRequest(id=[]))
    assert len(asked) > 1


def test_streamlit_secrets_connection(ui_env, rest_server) -> None:
    backend.connect(rest_server.url).create_namespace(CreateNamespaceRequest(id=["vaulted"]))
    at = new_app()
    at.secrets["connections"] = {"vault": {"target": rest_server.url, "api_key": API_KEY}}
    at.run()
    assert offered(at) == ["default", "vault"]
    at.selectbox(key="conn").set_value("vault").run()
    assert_no_exception(at)
    page = texts(at)
    assert ":blue-badge[REST]" in page and f"API key {REDACTED}" in page
    assert API_KEY not in page
    assert namespace_buttons(at) == {"vaulted"}


def cached_client(spec: conns.ConnectionSpec) -> backend.LanceNamespace:
    """The client the console's cache holds for ``spec`` (the one the pages use)."""
    secrets = conns.resolve_secrets(spec)[0]
    key = conns.connection_key(spec, secrets)
    return session._connect(key, spec.target, conns.connect_options(spec, secrets))


def test_refresh_closes_the_client_of_its_connection_only(make_app, tmp_path, rest_server) -> None:
    backend.connect(rest_server.url).create_namespace(CreateNamespaceRequest(id=["served"]))
    save_config(tmp_path, f'[connections.srv]\ntarget = "{rest_server.url}"\n')
    at = make_app()  # the default (local) connection's client is made
    at.selectbox(key="conn").set_value("srv").run()
    assert namespace_buttons(at) == {"served"}
    srv = next(s for s in conns.load_connections()[0] if s.name == "srv")
    client, local = cached_client(srv), cached_client(conns.default_connection())
    assert not client._http.is_closed

    at.button(key="conn.refresh").click().run()
    assert_no_exception(at)
    assert client._http.is_closed  # released: its HTTP pool is closed
    assert cached_client(conns.default_connection()) is local  # other connections keep theirs
    fresh = cached_client(srv)
    assert fresh is not client and not fresh._http.is_closed
    assert namespace_buttons(at) == {"served"}  # the page reads through the new client


def test_saved_connections_are_read_once_per_run(make_app, tmp_path, monkeypatch) -> None:
    save_config(tmp_path, f'[connections.archive]\ntarget = "{other_root(tmp_path)}"\n')
    reads: list[int] = []
    real = conns.load_connections

    def counted(*args, **kwargs):  # noqa: ANN202
        reads.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(conns, "load_connections", counted)
    at = make_app()
    assert len(reads) == 1
    at.run()
    assert len(reads) == 2
    at.selectbox(key="conn").set_value("archive").run()  # a callback, then the run
    assert_no_exception(at)
    assert namespace_buttons(at) == {"elsewhere"}
    assert len(reads) == 3
    at.button(key="conn.refresh").click().run()
    assert len(reads) == 4
    open_page(at, "versions")
    assert_no_exception(at)
    assert len(reads) == 5


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A server on 127.0.0.1 that accepts connections and never answers; yields its URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    accepted: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:  # closed: the test is over
                return
            accepted.append(conn)  # kept open, never read nor answered

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        done.set()
        listener.shutdown(socket.SHUT_RDWR)  # wakes the accept up
        listener.close()
        for conn in accepted:
            conn.close()
        thread.join(5)


def test_a_server_that_never_answers_does_not_hold_up_the_page(
    ui_env, silent_server, monkeypatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from tests.ui.conftest import MAIN

    monkeypatch.setenv("LANCE_CONSOLE_TARGET", silent_server)
    monkeypatch.setattr(session, "HEALTH_TIMEOUT", 2.0)
    at = AppTest.from_file(str(MAIN))  # AppTest's own default timeout (3 s)
    at.switch_page("views/audit.py")  # a page that reads nothing from the namespace
    at.run()
    assert_no_exception(at)
    page = texts(at)
    assert ":blue-badge[REST]" in page
    assert "checking… (no answer yet)" in page and "reachable" not in page
    assert not at.warning  # nothing known to be stale yet

    for thread in threading.enumerate():  # the check gives up after HEALTH_TIMEOUT
        if thread.name.startswith("health "):
            thread.join(10)
    at.run()
    assert_no_exception(at)
    page = texts(at)
    assert "not reachable" in page and "checking" not in page
    assert "timed out" in page.lower()


def test_a_console_without_a_target_builds_no_demo_on_a_read(
    make_app, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The demo is the launcher's to build (``lance-console`` without TARGET, before the
    console starts), never a page's read: a console started without a target whose demo
    folder is missing creates nothing, says the folder is missing and offers to create it."""
    monkeypatch.delenv("LANCE_CONSOLE_TARGET")
    at = make_app()
    assert_no_exception(at)
    assert offered(at) == ["default"]
    demo = tmp_path / ".lance-console" / "demo"
    errors = " ".join(alerts(at, "error"))
    assert "Opening the namespace failed" in errors and "does not exist" in errors
    assert at.button(key="conn.create_here").label.startswith("Create ")
    at.run()
    assert not demo.exists()


def test_mask_value() -> None:
    assert mask_value("a" * 32) == REDACTED and mask_value("short") == REDACTED
    assert mask_value("") == "" and mask_value(None) == ""


def test_redact_json_hides_vended_credentials() -> None:
    resp = DeclareTableResponse(
        location="s3://b/t",
        storage_options={
            "aws_access_key_id": "AKIAEXAMPLE",
            "aws_secret_access_key": "s" * 40,
            "aws_session_token": "t" * 300,
            "region": "eu-west-1",
        },
    )
    so = redact_json(resp)["storage_options"]
    assert so["aws_secret_access_key"] == REDACTED and so["aws_session_token"] == REDACTED
    assert so["aws_access_key_id"] == REDACTED  # a credential although no word says so
    assert so["region"] == "eu-west-1"
    assert "s" * 40 not in str(so)


def test_python_snippet_uses_env_lookups_for_secrets() -> None:
    code = python_snippet(
        "declare_table",
        DeclareTableRequest(id=["a", "t"], properties={"owner": "me"}),
        {
            "target": "https://lance.example.com",
            "has_api_key": True,
            "auth_token_env": "MY_TOKEN",
            "headers": {"x-tenant": "acme"},
            "secret_headers": ["X-Auth-Token"],
        },
    )
    assert "os.environ['LANCE_API_KEY']" in code and "os.environ['MY_TOKEN']" in code
    assert "'X-Auth-Token': os.environ['LANCE_HEADER_X_AUTH_TOKEN']" in code
    assert "'x-tenant': 'acme'" in code
    assert "ns.declare_table(" in code and "DeclareTableRequest(" in code
    compile(code, "<snippet>", "exec")  # valid Python


TYPED_TARGET = """
import streamlit as st

from components import connect_dialog, session, sidebar

sidebar.render_connection_sidebar()
spec, typed = connect_dialog.spec_from_form({"target": TARGET, "name": "typed"})
st.text(f"result: {session.switch_to(spec, typed)}")
"""


def typed_target(target: str, email: str | None = None) -> str:
    """A page that sends the dialog's request below the UI (past the disabled button) for
    ``target``, as ``email`` (``None``: sign-in not configured); what ``switch_to`` said."""
    from streamlit.testing.v1 import AppTest

    from tests.ui.conftest import AUTH, TIMEOUT

    at = AppTest.from_string(TYPED_TARGET.replace("TARGET", repr(target)), default_timeout=TIMEOUT)
    if email is not None:
        at.secrets["auth"] = AUTH
        at.user = {"is_logged_in": True, "email": email, "sub": email}
    at.run()
    assert_no_exception(at)
    (said,) = [t.value for t in at.text if str(t.value).startswith("result: ")]
    return str(said)


def audit_entries(directory: Path, operation: str) -> list:
    from backend.audit import AuditLog

    return [e for e in AuditLog(directory).entries() if e.operation == operation]


def test_a_viewer_cannot_make_the_server_call_a_typed_url(roles: Path, busy_server) -> None:
    """The SSRF of the issue: a viewer typing a loopback URL made the server call it. Now the
    dialog is not offered, and a request sent anyway is refused before anything is sent; the
    attempt is in the audit log."""
    from tests.ui.conftest import app_as

    url, asked = busy_server
    at = app_as("vi@example.com")
    opener = at.button(key="conn.open")
    reason = "the viewer role may not open a folder, bucket or URL that is not configured"
    assert opener.disabled and reason in str(opener.help)
    assert f"Typed targets: {reason}" in texts(at)
    at.session_state["conn.dialog_open"] = True  # the dialog opened anyway
    at.run()
    assert_no_exception(at)
    assert "conn.form0.target" not in [t.key for t in at.text_input]
    assert any("Typed targets are not available" in i for i in alerts(at, "info"))
    said = typed_target(url, "vi@example.com")
    assert said.startswith(f"result: Not opened: {reason}")
    assert asked == []  # the server sent nothing to the typed URL
    (entry,) = audit_entries(roles, "open_target")
    assert entry.user == "vi@example.com" and entry.outcome == "refused"
    assert entry.error_class == "PermissionDeniedError" and url in str(entry.request)


def test_an_exposed_console_without_sign_in_opens_no_typed_target(
    roles: Path, monkeypatch, busy_server
) -> None:
    """An anonymous visitor of a console exposed without sign-in (``--host 0.0.0.0``: the
    launcher's read-only policy) types nothing the server opens; with sign-in, an admin on the
    same address may (the listener counts that one question)."""
    from backend.config import launch
    from tests.ui.conftest import app_as

    url, asked = busy_server
    monkeypatch.setenv(launch.HOST_ENV, "0.0.0.0")
    at = new_app()
    at.run()
    assert_no_exception(at)
    assert at.button(key="conn.open").disabled
    assert "listens on 0.0.0.0 without sign-in" in str(at.button(key="conn.open").help)
    said = typed_target(url)  # the OS user as admin: the exposure alone refuses it
    assert said.startswith("result: Not opened: this console listens on 0.0.0.0 without sign-in")
    assert asked == []
    admin = app_as("ada@example.com")  # sign-in configured: an admin's right again
    connect_form(admin, url, name="typed")
    assert_no_exception(admin)
    assert len(asked) == 1
    entries = audit_entries(roles, "open_target")
    assert [(e.user, e.outcome) for e in entries] == [
        (session.auth.Actor.os_user().user, "refused"),
        ("ada@example.com", "error"),  # it answered 503: not opened
    ]


def test_typed_folders_outside_the_allowlist_are_refused_and_nothing_is_created(
    make_app, monkeypatch, tmp_path: Path
) -> None:
    """The allowlist (the connections file's ``allow_targets`` and ``--allow-target``): even
    an admin opens and creates only inside it; the create is recorded in the audit log."""
    import json
    import os

    from backend.config import launch

    monkeypatch.setenv("LANCE_CONSOLE_AUDIT_DIR", str(tmp_path / "audit"))
    base = Path(os.path.realpath(tmp_path))
    allowed, outside = base / "allowed", base / "outside" / "new"
    allowed.mkdir()
    save_config(tmp_path, f'allow_targets = ["{allowed}/*"]\n')
    monkeypatch.setenv(launch.ALLOW_TARGETS_ENV, json.dumps([str(base / "also" / "*")]))
    at = make_app()
    connect_form(at, str(outside), name="out")
    assert_no_exception(at)
    errors = " ".join(alerts(at, "error"))
    assert f"Not opened: {outside} is not among the targets this console may open" in errors
    assert f"{allowed}/*" in errors and f"{base}/also/*" in errors
    assert not outside.exists() and not outside.parent.exists()
    assert "conn.create" not in [b.key for b in at.button]  # no create offered
    assert at.selectbox(key="conn").value == "default"
    # a symlink inside the allowlist pointing outside is judged by where it leads
    (allowed / "link").symlink_to(base / "outside", target_is_directory=True)
    connect_form(at, str(allowed / "link" / "new"), name="sneaky")
    assert not outside.exists()
    assert any("is not among the targets" in e for e in alerts(at, "error"))

    inside = allowed / "fresh"
    connect_form(at, str(inside), name="fresh")
    assert_no_exception(at)
    assert any("does not exist: create it from the sidebar" in e for e in alerts(at, "error"))
    at.run()  # the sidebar, drawn before the dialog, offers the create from the next run
    create = at.button(key="conn.create")
    assert not create.disabled and not inside.exists()
    create.click().run()
    assert_no_exception(at)
    assert inside.is_dir()
    assert at.selectbox(key="conn").value == "fresh"
    (created,) = audit_entries(tmp_path / "audit", "create_target")
    assert created.outcome == "ok" and created.request == {"path": str(inside)}
    opened = audit_entries(tmp_path / "audit", "open_target")
    assert [e.outcome for e in opened] == [
        "refused",
        "refused",
        "error",
    ]  # refused, refused, missing
    assert all(e.user == session.auth.Actor.os_user().user for e in opened + [created])


def test_a_viewer_creates_no_directory(roles: Path, tmp_path: Path) -> None:
    """A saved connection's missing directory: the create is an admin's; a viewer's button is
    disabled with the reason, and a create sent anyway is refused and recorded."""
    from tests.ui.conftest import app_as

    missing = tmp_path / "not-yet"
    save_config(tmp_path, f'[connections.fresh]\ntarget = "{missing}"\n')
    at = app_as("vi@example.com")
    at.selectbox(key="conn").set_value("fresh").run()
    assert_no_exception(at)
    create = at.button(key="conn.create")
    assert create.disabled
    assert "the viewer role may not create a folder for a namespace" in str(create.help)
    (spec,) = conns.load_connections()[0]
    at.session_state["conn.write"] = connection_writes.create_write(
        "create", missing, spec, name="fresh"
    )
    at.run()  # the create sent anyway: the frame performs it
    assert_no_exception(at)
    assert not missing.exists()
    assert any("is not created: the viewer role may not create" in e for e in alerts(at, "error"))
    (entry,) = audit_entries(roles, "create_target")
    assert entry.user == "vi@example.com" and entry.outcome == "refused"
