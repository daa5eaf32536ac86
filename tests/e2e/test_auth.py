"""Sign-in against a real OpenID Connect provider on localhost (oidc-provider-mock), and what
each role may do: a visitor sees only the sign-in page; a viewer's writes are disabled with
the reason; an editor writes but may not drop; an admin sees every write in the Audit page."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .harness import (
    REPO,
    TABLES_OPENERS,
    StreamlitServer,
    close_menu,
    free_port,
    menu_button,
    open_dialog,
    open_expander,
    open_menu,
    settle,
    settle_load,
    submit,
    type_into,
)

# Each test signs in (or not) on its own: cookies of its own browser context.
pytestmark = pytest.mark.own_browser_context

# Users the roles file gives no role (default = ""): one no rule names, and one whose provider
# does not vouch for the admin's address it claims.
NO_ROLE = {"eve": ("eve@example.com", True), "mallory": ("ada@example.com", False)}
TEAM = "team"
NOTES = "notes"
USERS = {
    "ada": ("ada@example.com", "admin"),
    "ed": ("ed@example.com", "editor"),
    "vi": ("vi@example.com", "viewer"),
}


@dataclass
class AuthConsole:
    url: str
    root: Path
    audit_dir: Path


@pytest.fixture(scope="module")
def oidc_provider() -> Iterator[str]:
    import logging

    from oidc_provider_mock import User, run_server_in_thread

    # Its request log prints tokens (id_token_hint): keep it quiet.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)

    users = [
        User(sub=sub, claims={"email": email, "email_verified": True, "name": sub.title()})
        for sub, (email, _role) in USERS.items()
    ] + [
        User(sub=sub, claims={"email": email, "email_verified": verified, "name": sub.title()})
        for sub, (email, verified) in NO_ROLE.items()
    ]
    with run_server_in_thread(port=0, user_claims=users) as server:
        # The provider answers on "localhost", the console on 127.0.0.1: separate cookie jars.
        yield f"http://localhost:{server.server_port}"


@pytest.fixture(scope="module")
def auth_console(
    oidc_provider: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AuthConsole]:
    import pyarrow as pa
    from lance_namespace import CreateNamespaceRequest, CreateTableRequest

    import backend
    from tests.support import ipc_stream_bytes

    base = tmp_path_factory.mktemp("e2e-auth")
    root = base / "root"
    root.mkdir()
    ns = backend.connect(str(root))
    ns.create_namespace(CreateNamespaceRequest(id=[TEAM]))
    notes = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "body": ["a", "b", "c"]})
    ns.create_table(CreateTableRequest(id=[TEAM, NOTES]), ipc_stream_bytes(notes))

    roles = base / "roles.toml"
    roles.write_text(
        'default = ""\n[users]\n'
        + "".join(f'"{email}" = "{role}"\n' for email, role in USERS.values())
    )
    port = free_port()
    secrets = base / "secrets.toml"
    secrets.write_text(
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        'cookie_secret = "e2e-cookie-secret-0123456789abcdef"\n'
        'client_id = "lance-console"\n'
        'client_secret = "e2e-client-secret"\n'
        f'server_metadata_url = "{oidc_provider}/.well-known/openid-configuration"\n'
    )
    config = base / "connections.toml"
    config.write_text("")
    audit_dir = base / "audit"
    server = StreamlitServer(
        script=REPO / "app" / "main.py",
        env={
            "LANCE_CONSOLE_TARGET": str(root),
            "LANCE_CONSOLE_CONFIG": str(config),
            "LANCE_CONSOLE_ROLES": str(roles),
            "LANCE_CONSOLE_AUDIT_DIR": str(audit_dir),
        },
        log_path=base / "streamlit-auth.log",
        extra_args=["--secrets.files", str(secrets)],
        port=port,
    ).start()
    try:
        yield AuthConsole(url=server.url, root=root, audit_dir=audit_dir)
    finally:
        server.stop()


def _main(page: Page):
    return page.get_by_test_id("stMain")


def sign_in(page: Page, console: AuthConsole, sub: str, path: str = "tables") -> None:
    page.goto(f"{console.url}/{path}")
    settle_load(page)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/oauth2/authorize**")
    page.get_by_role("button", name=sub, exact=True).click()
    page.wait_for_url(f"{console.url}/**")
    settle_load(page)
    email, role = USERS[sub]
    expect(page.get_by_test_id("stSidebar")).to_contain_text(f"Signed in as {email}")
    expect(page.get_by_test_id("stSidebar")).to_contain_text(role)


def test_a_visitor_sees_only_the_sign_in_page(page: Page, auth_console: AuthConsole) -> None:
    for path in ("", "tables", "versions", "audit"):
        page.goto(f"{auth_console.url}/{path}")
        settle_load(page)
        expect(_main(page).get_by_role("button", name="Sign in")).to_be_visible()
        expect(_main(page)).to_contain_text("Sign in to use this console.")
        # No page content and no navigation: nothing of the namespace is shown.
        expect(page.get_by_text(TEAM, exact=True)).to_have_count(0)
        expect(page.get_by_test_id("stSidebarNav")).to_have_count(0)


def test_viewer_sees_disabled_writes_with_the_reason(
    page: Page, auth_console: AuthConsole, shot: Callable[..., Path]
) -> None:
    sign_in(page, auth_console, "vi")
    page.goto(f"{auth_console.url}/tables?ns={TEAM}&table={NOTES}")
    settle_load(page)
    main = _main(page)
    for menu, opener in TABLES_OPENERS:
        expect(menu_button(main, menu, opener)).to_be_disabled()
        close_menu(page)
    expect(main).to_contain_text("viewer role")
    expect(menu_button(main, "Add a table", "Declare a table")).to_be_disabled()
    shot("viewer")  # the menu open: its writes disabled
    close_menu(page)
    # the Audit page is not offered to a viewer: no link, and its address shows no log
    nav = page.get_by_test_id("stSidebarNav")
    expect(nav.get_by_role("link", name="Versions")).to_be_visible()
    expect(nav.get_by_role("link", name="Audit")).to_have_count(0)
    page.goto(f"{auth_console.url}/audit")
    settle_load(page)
    expect(_main(page).get_by_role("button", name="Export CSV")).to_have_count(0)
    expect(_main(page)).not_to_contain_text("entries of")


@pytest.mark.parametrize("sub", sorted(NO_ROLE))
def test_a_user_without_a_role_sees_only_no_access(
    page: Page, auth_console: AuthConsole, sub: str
) -> None:
    """Deny by default, through a real provider: no rule names eve; mallory claims the admin's
    address without email_verified. Neither sees anything of the namespace."""
    email, _verified = NO_ROLE[sub]
    page.goto(f"{auth_console.url}/tables?ns={TEAM}&table={NOTES}")
    settle_load(page)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/oauth2/authorize**")
    page.get_by_role("button", name=sub, exact=True).click()
    page.wait_for_url(f"{auth_console.url}/**")
    settle_load(page)
    for path in (f"tables?ns={TEAM}&table={NOTES}", "versions", "audit"):
        page.goto(f"{auth_console.url}/{path}")
        settle_load(page)
        expect(_main(page)).to_contain_text(f"No access: {email} has no role in this console.")
        expect(page.get_by_text(NOTES, exact=True)).to_have_count(0)
        expect(page.get_by_test_id("stSidebarNav")).to_have_count(0)
    expect(page.get_by_test_id("stSidebar").get_by_role("button", name="Sign out")).to_be_visible()


def test_editor_declares_but_may_not_drop_and_admin_audits(
    page: Page, auth_console: AuthConsole, shot: Callable[..., Path]
) -> None:
    name = f"by_editor_{uuid.uuid4().hex[:6]}"
    sign_in(page, auth_console, "ed")
    page.goto(f"{auth_console.url}/tables?ns={TEAM}")
    settle_load(page)
    main = _main(page)
    form = open_dialog(open_menu(main, "Add a table"), "Declare a table")
    type_into(form.get_by_label("Table name", exact=True), name)
    submit(page, form.get_by_role("button", name="Declare table"))
    expect(main.get_by_text(f"Declared table {TEAM} › {name}.")).to_be_visible()
    # Destructive actions are an admin's: the drop form's button is disabled, with the reason.
    page.goto(f"{auth_console.url}/tables?ns={TEAM}&table={NOTES}")
    settle_load(page)
    drop = open_expander(_main(page), "Drop table")
    expect(drop.get_by_role("button", name="Drop table")).to_be_disabled()
    expect(_main(page)).to_contain_text("admin")
    shot("editor")

    # Sign out, then in as the admin: the Audit page shows the editor's declare.
    page.get_by_test_id("stSidebar").get_by_role("button", name="Sign out").click()
    end = page.get_by_role("button", name="End session")
    end.click()
    page.wait_for_url(f"{auth_console.url}/**")
    settle_load(page)
    expect(_main(page).get_by_role("button", name="Sign in")).to_be_visible()
    sign_in(page, auth_console, "ada")  # the provider sends the user back to "/"
    page.goto(f"{auth_console.url}/audit")
    settle_load(page)
    main = _main(page)
    expect(main.get_by_role("heading", name="Audit")).to_be_visible()
    type_into(main.get_by_label("Table or namespace", exact=True), name)
    settle(page)
    grid = main.get_by_test_id("stDataFrame")
    expect(grid).to_contain_text("ed@example.com")
    expect(grid).to_contain_text("declare_table")
    shot("audit")
    entries = [
        json.loads(line)
        for line in (auth_console.audit_dir / "audit.jsonl").read_text().splitlines()
    ]
    mine = [e for e in entries if e["ids"] == [TEAM, name]]
    assert [(e["user"], e["operation"], e["outcome"]) for e in mine] == [
        ("ed@example.com", "declare_table", "ok")
    ]
