"""AppTest: the "Connect to…" dialog (``components.connect_dialog``) - switching to a typed
folder or REST server, saving it without secrets, bad input, refusals; its form parsing."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pandas as pd
import pytest
from lance_namespace import (
    CreateNamespaceRequest,
)

import backend
from backend.redaction import REDACTED, display_target
from components.common import confirmation_matches
from components.connect_dialog import spec_from_form
from tests.ui.conftest import (
    alerts,
    assert_no_exception,
    connect_form,
    namespace_buttons,
    offered,
    other_root,
    paths_shown,
    texts,
)

API_KEY = "sekrit-api-key-0123456789abcdef"


def test_switch_folder_and_save_without_secrets(make_app, tmp_path: Path) -> None:
    root = other_root(tmp_path)
    at = make_app(query_params={"ns": "sales"})
    connect_form(at, str(root), name="other", save=True)
    assert_no_exception(at)
    success = " ".join(alerts(at, "success"))
    assert "Connected to other; saved to" in success
    assert namespace_buttons(at) == {"elsewhere"}
    assert "ns" not in at.query_params  # the old selection does not leak into the new target
    doc = tomllib.loads((tmp_path / "connections.toml").read_text())
    assert doc["connections"]["other"] == {"target": str(root)}
    assert at.selectbox(key="conn").value == "other"
    # the dialog closed; reopened, its form was reset (conn.form1 now)
    assert "conn.form0.target" not in [t.key for t in at.text_input]
    at.button(key="conn.open").click().run()
    assert at.text_input(key="conn.form1.target").value == ""


def test_read_only_server_saves_no_connection(make_app, monkeypatch, tmp_path: Path) -> None:
    """A read-only launch writes no file: the dialog's Save is disabled with the reason, and a
    save sent anyway writes nothing (the connection itself still opens, read-only)."""
    from backend.config import launch

    monkeypatch.setenv(launch.READ_ONLY_ENV, "1")
    monkeypatch.setenv(launch.READ_ONLY_REASON_ENV, "started with --read-only")
    root = other_root(tmp_path)
    at = make_app(query_params={"ns": "sales"})
    at.button(key="conn.open").click().run()
    box = at.checkbox(key="conn.form0.save")
    assert box.disabled and "started with --read-only" in str(box.help)
    at.session_state["conn.form0.save"] = True  # a client sends the box checked anyway
    connect_form(at, str(root), name="other")
    assert_no_exception(at)
    assert not (tmp_path / "connections.toml").exists()
    assert "saved to" not in " ".join(alerts(at, "success"))


def test_session_connection_and_back(make_app, ui_env, tmp_path: Path) -> None:
    root = other_root(tmp_path)
    at = make_app()
    connect_form(at, str(root), name="mine")
    assert_no_exception(at)
    assert at.selectbox(key="conn").value == "mine"
    assert offered(at) == ["default", "mine"]
    assert not (tmp_path / "connections.toml").exists()  # not saved
    assert namespace_buttons(at) == {"elsewhere"}
    at.selectbox(key="conn").set_value("default").run()
    assert_no_exception(at)
    assert "Connected to default (local)." in alerts(at, "success")
    assert namespace_buttons(at) == {"bulk", "hr", "logs", "sales"}


def test_bad_form_input_changes_nothing(make_app, ui_env) -> None:
    at = make_app()
    connect_form(at, "   ")
    assert any("Enter a folder path" in e for e in alerts(at, "error"))
    connect_form(at, "/tmp/x", name="bad name")
    assert any("Connection names" in e for e in alerts(at, "error"))
    connect_form(at, "/tmp/x", name="default")
    assert any("belongs to the launcher" in e for e in alerts(at, "error"))
    assert str(ui_env) in paths_shown(at)
    assert at.selectbox(key="conn").value == "default"


def test_refused_rest_server_is_readable_and_keeps_connection(make_app, ui_env) -> None:
    at = make_app()
    connect_form(at, "http://127.0.0.1:9", name="down", api_key=API_KEY)
    assert_no_exception(at)
    errors = " ".join(alerts(at, "error"))
    assert "Connecting to http://127.0.0.1:9 failed" in errors
    assert "failed. Connection failed: " in errors and "SERVICE_UNAVAILABLE" not in errors
    assert API_KEY not in texts(at) + errors
    assert at.selectbox(key="conn").value == "default"  # still on the previous connection
    assert str(ui_env) in paths_shown(at)


def test_switch_to_rest_with_api_key_masks_it(make_app, rest_server) -> None:
    client = backend.connect(rest_server.url)
    client.create_namespace(CreateNamespaceRequest(id=["remote"]))
    at = make_app()
    connect_form(at, rest_server.url, name="server", api_key=API_KEY, delimiter="$")
    assert_no_exception(at)
    page = texts(at)
    assert at.selectbox(key="conn").value == "server"
    assert ":blue-badge[REST]" in page
    assert API_KEY not in page
    assert f"API key {REDACTED}" in page and "delimiter $" in page
    assert namespace_buttons(at) == {"remote"}


def test_saving_a_typed_secret_says_it_is_not_kept(make_app, rest_server, tmp_path) -> None:
    at = make_app()
    connect_form(at, rest_server.url, name="typed", api_key=API_KEY, save=True)
    assert_no_exception(at)
    warned = " ".join(alerts(at, "warning"))
    assert "saved to" in warned and "without api_key" in warned and "env var" in warned
    text = (tmp_path / "connections.toml").read_text()
    assert API_KEY not in text and "typed" in text
    assert API_KEY not in texts(at)


def test_confirmation_and_target_display() -> None:
    assert confirmation_matches(" orders ", "orders")
    assert not confirmation_matches("Orders", "orders") and not confirmation_matches("", "")
    shown = display_target("https://bob:hunter2hunter2@h.example/x?token=abcdefghijkl&x=1")
    assert "hunter2hunter2" not in shown and "abcdefghijkl" not in shown and "x=1" in shown


def test_spec_from_form_keeps_secret_headers_out_of_spec() -> None:
    spec, typed = spec_from_form(
        {
            "target": "http://h:1",
            "name": "srv",
            "api_key": API_KEY,
            "headers": pd.DataFrame(
                {"key": ["Authorization", "x-team"], "value": ["Bearer zz", "t"]}
            ),
        }
    )
    assert dict(spec.headers) == {"x-team": "t"} and typed.headers == {"Authorization": "Bearer zz"}
    assert typed.api_key == API_KEY and API_KEY not in repr(spec.to_toml_dict())
    with pytest.raises(ValueError, match="given twice"):
        spec_from_form(
            {"target": "/x", "headers": [{"key": "a", "value": "1"}, {"key": "a", "value": "2"}]}
        )
