"""AppTest: the connection sidebar - default, switching, saved connections, read-only, errors."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pandas as pd
import pytest
from lance_namespace import CreateNamespaceRequest, DeclareTableRequest, DeclareTableResponse

import backend
from components.common import (
    confirmation_matches,
    mask_secret,
    masked_dump,
    python_snippet,
)
from components.connection import display_target, spec_from_form
from tests.ui.conftest import assert_no_exception, new_app, open_page, texts

API_KEY = "sekrit-api-key-0123456789abcdef"


def connect_form(at, target: str, *, n: int = 0, **fields) -> None:
    """Open the "Connect to…" dialog (if closed), fill it in, submit."""
    if f"conn.form{n}.target" not in [t.key for t in at.text_input]:
        at.button(key="conn.open").click().run()
    at.text_input(key=f"conn.form{n}.target").input(target)
    for name, value in fields.items():
        if isinstance(value, bool):
            at.checkbox(key=f"conn.form{n}.{name}").set_value(value)
        else:
            at.text_input(key=f"conn.form{n}.{name}").input(value)
    at.button(key=f"conn.form{n}.submit").click().run()


def other_root(tmp_path: Path) -> Path:
    root = tmp_path / "other-root"
    root.mkdir()
    backend.connect(str(root)).create_namespace(CreateNamespaceRequest(id=["elsewhere"]))
    return root


def test_default_connection_is_visible(make_app, ui_env) -> None:
    at = make_app()
    assert_no_exception(at)
    page = texts(at)
    assert "**default** :green-badge[local] :gray-badge[writable]" in page
    assert str(ui_env) in page
    assert at.toggle(key="conn.read_only").value is False


def test_read_only_disables_writes_on_every_page(make_app) -> None:
    at = make_app(query_params={"ns": "sales", "table": "orders"})
    submit = "FormSubmitter:tables.declare0-Declare table"
    assert not at.button(key="tables.declare.open").disabled
    at.button(key="tables.declare.open").click().run()
    assert not at.button(key=submit).disabled
    at.toggle(key="conn.read_only").set_value(True).run()  # with the dialog still open
    assert ":orange-badge[:material/lock: read-only]" in texts(at)
    for key in (
        submit,
        "tables.declare.open",
        "tables.create_ns.open",
        "FormSubmitter:tables.deregister0-Deregister",
    ):
        assert at.button(key=key).disabled, key
    at.session_state["tables.dialog"] = "create_ns"  # a dialog open from before the switch
    at.run()
    assert at.button(key="FormSubmitter:tables.create_ns0-Create namespace").disabled
    assert "Read-only connection" in texts(at)
    open_page(at, "versions")
    deletes = [b for b in at.button if b.key and b.key.endswith("-Delete versions")]
    assert deletes and all(b.disabled for b in deletes)


def test_switch_folder_and_save_without_secrets(make_app, tmp_path: Path) -> None:
    root = other_root(tmp_path)
    at = make_app(query_params={"ns": "sales"})
    connect_form(at, str(root), name="other", save=True)
    assert_no_exception(at)
    page = texts(at)
    assert "Connected to **other** (local)." in page and "Saved to" in page
    assert "tables.ns.open.elsewhere" in [b.key for b in at.button]
    assert "ns" not in at.query_params  # the old selection does not leak into the new target
    doc = tomllib.loads((tmp_path / "connections.toml").read_text())
    assert doc["connections"]["other"] == {"target": str(root)}
    assert "other" in at.selectbox(key="conn.pick").options[1]
    # the dialog closed; reopened, its form was reset (conn.form1 now)
    assert "conn.form0.target" not in [t.key for t in at.text_input]
    at.button(key="conn.open").click().run()
    assert at.text_input(key="conn.form1.target").value == ""


def test_bad_form_input_changes_nothing(make_app, ui_env) -> None:
    at = make_app()
    connect_form(at, "   ")
    assert any("Enter a folder path" in e.value for e in at.error)
    connect_form(at, "/tmp/x", name="bad name")
    assert any("Connection names" in e.value for e in at.error)
    assert str(ui_env) in texts(at)
    assert "**default**" in texts(at)


def test_refused_rest_server_is_readable_and_keeps_connection(make_app, ui_env) -> None:
    at = make_app()
    connect_form(at, "http://127.0.0.1:9", name="down", api_key=API_KEY)
    assert_no_exception(at)
    errors = " ".join(e.value for e in at.error)
    assert "Connecting to http://127.0.0.1:9 failed" in errors
    assert "SERVICE_UNAVAILABLE" in errors
    assert API_KEY not in texts(at) + errors
    assert "**default** :green-badge[local]" in texts(at)  # still on the previous connection


def test_switch_to_rest_with_api_key_masks_it(make_app, rest_server) -> None:
    client = backend.connect(rest_server.url)
    client.create_namespace(CreateNamespaceRequest(id=["remote"]))
    at = make_app()
    connect_form(at, rest_server.url, name="server", api_key=API_KEY, delimiter="$")
    assert_no_exception(at)
    page = texts(at)
    assert "**server** :blue-badge[REST]" in page
    assert API_KEY not in page
    assert "API key `sekr…(31 chars)`" in page
    assert "tables.ns.open.remote" in [b.key for b in at.button]


def test_saved_connections_from_config_file(make_app, tmp_path: Path) -> None:
    root = other_root(tmp_path)
    (tmp_path / "connections.toml").write_text(
        f'[connections.archive]\ntarget = "{root}"\nread_only = true\n'
    )
    at = make_app()
    pick = at.selectbox(key="conn.pick")
    assert "archive" in pick.options[1]
    pick.set_value("archive").run()
    assert_no_exception(at)
    page = texts(at)
    assert "**archive** :green-badge[local] :orange-badge[:material/lock: read-only]" in page
    assert at.toggle(key="conn.read_only").value is True
    assert "tables.ns.open.elsewhere" in [b.key for b in at.button]


def test_streamlit_secrets_connection(ui_env, rest_server) -> None:
    backend.connect(rest_server.url).create_namespace(CreateNamespaceRequest(id=["vaulted"]))
    at = new_app()
    at.secrets["connections"] = {"vault": {"target": rest_server.url, "api_key": API_KEY}}
    at.run()
    at.selectbox(key="conn.pick").set_value("vault").run()
    assert_no_exception(at)
    page = texts(at)
    assert "**vault** :blue-badge[REST]" in page and "sekr…(31 chars)" in page
    assert API_KEY not in page
    assert "tables.ns.open.vaulted" in [b.key for b in at.button]


def test_missing_env_secret_is_reported(make_app, tmp_path: Path, rest_server) -> None:
    (tmp_path / "connections.toml").write_text(
        f'[connections.srv]\ntarget = "{rest_server.url}"\napi_key_env = "NO_SUCH_VAR_X"\n'
    )
    at = make_app()
    at.selectbox(key="conn.pick").set_value("srv").run()
    assert_no_exception(at)
    assert "Environment variable NO_SUCH_VAR_X is not set." in texts(at)


# --- pure helpers of components/common.py and components/connection.py -----------------------


def test_mask_secret() -> None:
    assert mask_secret("a" * 32) == "aaaa…(32 chars)"
    assert mask_secret("short") == "…(5 chars)"  # short secrets show nothing of themselves
    assert mask_secret("") == "" and mask_secret(None) == ""


def test_masked_dump_hides_vended_credentials() -> None:
    resp = DeclareTableResponse(
        location="s3://b/t",
        storage_options={
            "aws_access_key_id": "AKIAEXAMPLE",
            "aws_secret_access_key": "s" * 40,
            "aws_session_token": "t" * 300,
            "region": "eu-west-1",
        },
    )
    out = masked_dump(resp)
    so = out["storage_options"]
    assert so["aws_secret_access_key"] == "ssss…(40 chars)"
    assert so["aws_session_token"] == "tttt…(300 chars)"
    assert so["region"] == "eu-west-1" and so["aws_access_key_id"] == "AKIAEXAMPLE"
    assert "s" * 40 not in str(out)


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
    assert "ns.declare_table(" in code and "DeclareTableRequest(" in code
    compile(code, "<snippet>", "exec")  # valid Python


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
    with pytest.raises(ValueError, match="Headers: Key .a. is given twice"):
        spec_from_form(
            {"target": "/x", "headers": [{"key": "a", "value": "1"}, {"key": "a", "value": "2"}]}
        )
