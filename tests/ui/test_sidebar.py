"""AppTest: the connection sidebar (``components.sidebar``) - the banner of anonymous writes,
saved connections listed and forgotten, missing secrets reported, missing directories offered
for creation (``components.connection_writes``)."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

from components import session
from tests.ui.conftest import (
    alerts,
    assert_no_exception,
    namespace_buttons,
    offered,
    open_page,
    other_root,
    plain,
    save_config,
    texts,
)

WRITE_BUTTONS = ("tables.declare.open", "tables.create_ns.open")


def test_anonymous_writes_warn_on_every_page(make_app, monkeypatch) -> None:
    """``--host 0.0.0.0 --allow-anonymous-writes``: writable, and every page says so."""
    from backend.config import launch

    monkeypatch.setenv(launch.ANONYMOUS_WRITES_ENV, "0.0.0.0")
    at = make_app()
    warning = (
        "This console listens on 0.0.0.0 without sign-in and accepts writes from anyone who "
        "can reach it (started with --allow-anonymous-writes)."
    )
    assert warning in alerts(at, "warning")
    assert at.toggle(key="ro").value is False and not at.toggle(key="ro").disabled
    assert not any(at.button(key=k).disabled for k in WRITE_BUTTONS)
    for page in ("versions", "transactions"):
        open_page(at, page)
        assert warning in alerts(at, "warning"), page


def test_only_admins_change_the_saved_connections(roles, tmp_path: Path) -> None:
    from tests.ui.conftest import app_as

    root = other_root(tmp_path)
    at = app_as("ed@example.com")  # an editor opens no typed target, so saves none either
    assert at.button(key="conn.open").disabled
    at.session_state["conn.dialog_open"] = True  # the dialog opened anyway
    at.session_state["conn.form0.save"] = True  # ... and the box sent checked
    at.run()
    assert "conn.form0.target" not in [t.key for t in at.text_input]
    assert not (tmp_path / "connections.toml").exists()
    assert str(root) not in texts(at)
    admin = app_as("ada@example.com")
    admin.button(key="conn.open").click().run()
    assert not admin.checkbox(key="conn.form0.save").disabled


def test_saved_connections_from_config_file(make_app, tmp_path: Path) -> None:
    root = other_root(tmp_path)
    save_config(tmp_path, f'[connections.archive]\ntarget = "{root}"\nread_only = true\n')
    at = make_app()
    pick = at.selectbox(key="conn")
    assert offered(at) == ["default", "archive"]
    pick.set_value("archive").run()
    assert_no_exception(at)
    page = texts(at)
    assert ":green-badge[local] :orange-badge[:material/lock: read-only]" in page
    assert at.toggle(key="ro").value is True
    assert namespace_buttons(at) == {"elsewhere"}
    assert at.button(key="conn.forget") is not None


def test_forget_a_saved_connection_in_the_run_of_the_click(make_app, tmp_path: Path) -> None:
    """The sidebar asks, the frame (app/nav.py) forgets: in the run of the click the file
    loses the connection and the default connection opens."""
    root = other_root(tmp_path)
    save_config(tmp_path, f'[connections.archive]\ntarget = "{root}"\n')
    at = make_app()
    at.selectbox(key="conn").set_value("archive").run()
    at.button(key="conn.forget").click().run()
    assert_no_exception(at)
    saved = tomllib.loads((tmp_path / "connections.toml").read_text())
    assert "archive" not in saved.get("connections", {})
    assert at.selectbox(key="conn").value == "default"
    assert offered(at) == ["default"]
    assert "Forgot the saved connection archive." in alerts(at, "success")


def test_missing_env_secret_is_reported(make_app, tmp_path: Path, rest_server) -> None:
    save_config(
        tmp_path,
        f'[connections.srv]\ntarget = "{rest_server.url}"\napi_key_env = "NO_SUCH_VAR_X"\n',
    )
    at = make_app()
    at.selectbox(key="conn").set_value("srv").run()
    assert_no_exception(at)
    assert "Environment variable NO_SUCH_VAR_X is not set." in texts(at)


def test_missing_directory_is_offered_for_creation(make_app, tmp_path: Path) -> None:
    missing = tmp_path / "not-yet"
    save_config(tmp_path, f'[connections.fresh]\ntarget = "{missing}"\n')
    at = make_app()
    at.selectbox(key="conn").set_value("fresh").run()
    assert_no_exception(at)
    assert f"The directory {missing} does not exist." in alerts(at, "warning")
    assert at.selectbox(key="conn").value == "default"  # the previous connection stays
    assert not missing.exists()
    create = at.button(key="conn.create")
    assert plain(create.label) == f"Create {missing}"
    create.click().run()
    assert_no_exception(at)
    assert missing.is_dir()
    assert f"Created {missing}: an empty namespace." in alerts(at, "success")
    assert at.selectbox(key="conn").value == "fresh"
    assert namespace_buttons(at) == set()
    assert "No namespaces inside (root)." in texts(at)


def test_read_only_server_creates_no_directory(make_app, tmp_path: Path, monkeypatch) -> None:
    from backend.config import launch

    monkeypatch.setenv(launch.READ_ONLY_ENV, "1")
    missing = tmp_path / "not-yet"
    root = other_root(tmp_path)
    save_config(
        tmp_path,
        f'[connections.fresh]\ntarget = "{missing}"\n[connections.archive]\ntarget = "{root}"\n',
    )
    at = make_app()
    at.selectbox(key="conn").set_value("fresh").run()
    assert_no_exception(at)
    assert at.button(key="conn.create").disabled
    at.selectbox(key="conn").set_value("archive").run()
    assert at.button(key="conn.forget").disabled  # the config file is not changed either
    # the refusal below the button, for a request that reaches the server anyway
    assert session.create_directory(missing) is False
    assert not missing.exists()


def test_deleted_directory_is_reported_with_create(make_app, tmp_path: Path) -> None:
    root = other_root(tmp_path)
    save_config(tmp_path, f'[connections.scratch]\ntarget = "{root}"\n')
    at = make_app()
    at.selectbox(key="conn").set_value("scratch").run()
    assert namespace_buttons(at) == {"elsewhere"}
    shutil.rmtree(root)  # deleted behind the console's back
    at.button(key="conn.refresh").click().run()
    assert_no_exception(at)
    errors = " ".join(alerts(at, "error"))
    assert "Opening the namespace failed" in errors and f"{root} does not exist" in errors
    create = at.button(key="conn.create_here")
    assert plain(create.label) == f"Create {root}"
    create.click().run()
    assert_no_exception(at)
    assert root.is_dir() and not at.error
    assert "No namespaces inside (root)." in texts(at)
