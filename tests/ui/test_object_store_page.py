"""AppTest: the console on an S3 root (moto's server) through a saved connection whose secret
comes from the environment: browse, describe, versions, and the secret never on the page."""

from __future__ import annotations

from pathlib import Path

import pytest
from lance_namespace import CreateNamespaceRequest, DeclareTableRequest

import backend
from tests.support import create_table, make_table
from tests.ui.conftest import (
    alerts,
    assert_no_exception,
    figures,
    new_app,
    open_page,
    paths_shown,
    texts,
)


@pytest.fixture
def s3_app(s3_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import streamlit as st

    bucket = s3_server.new_bucket()
    target = f"s3://{bucket}/root"
    ns = backend.connect(target, storage_options=s3_server.storage_options)
    ns.create_namespace(CreateNamespaceRequest(id=["lake"]))
    create_table(ns, ["lake", "events"], make_table(12))
    ns.declare_table(DeclareTableRequest(id=["lake", "later"]))
    secret = ("aws_access_key_id", "aws_secret_access_key")  # both secret-looking: from the env
    options = {k: v for k, v in s3_server.storage_options.items() if k not in secret}
    config = tmp_path / "connections.toml"
    lines = ["[connections.lake]", f'target = "{target}"', "[connections.lake.storage_options]"]
    lines += [f'{k} = "{v}"' for k, v in options.items()]
    lines += [
        "[connections.lake.secret_storage_env]",
        'aws_access_key_id = "LAKE_S3_KEY_ID"',
        'aws_secret_access_key = "LAKE_S3_SECRET"',
    ]
    config.write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("LAKE_S3_KEY_ID", s3_server.ACCESS_KEY)
    monkeypatch.setenv("LAKE_S3_SECRET", s3_server.SECRET_KEY)
    monkeypatch.setenv("LANCE_CONSOLE_CONFIG", str(config))
    monkeypatch.setenv("LANCE_CONSOLE_TARGET", str(tmp_path / "unused-default"))
    monkeypatch.chdir(tmp_path)
    st.cache_data.clear()
    st.cache_resource.clear()
    yield target
    st.cache_data.clear()
    st.cache_resource.clear()


def test_console_on_s3_browse_describe_versions(s3_app, s3_server) -> None:
    at = new_app()
    at.query_params["conn"] = "lake"
    at.query_params["ns"] = "lake"
    at.query_params["table"] = "events"
    at.run()
    assert_no_exception(at)
    assert at.selectbox(key="conn").value == "lake"
    assert s3_app in paths_shown(at)  # the sidebar shows the target
    page = texts(at)
    assert "reachable" in page and "not reachable" not in page
    listed = [d.value for d in at.dataframe if "table" in getattr(d.value, "columns", [])]
    assert listed and {"events", "later"} <= set(listed[0]["table"]), listed
    assert any(str(p).startswith(f"{s3_app}/") for p in paths_shown(at))  # the table's location
    open_page(at, "versions")
    assert_no_exception(at)
    assert figures(at)["Versions"] == "1"
    shown = texts(at) + " ".join(paths_shown(at)) + " ".join(str(d.value) for d in at.dataframe)
    assert s3_server.SECRET_KEY not in shown and s3_server.ACCESS_KEY not in shown


def _no_aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)


def test_s3_without_options_says_what_to_set_not_stale(
    s3_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import streamlit as st

    _no_aws_env(monkeypatch)
    bucket = s3_server.new_bucket()
    config = tmp_path / "connections.toml"
    config.write_text(f'[connections.bare]\ntarget = "s3://{bucket}/root"\n')
    monkeypatch.setenv("LANCE_CONSOLE_CONFIG", str(config))
    monkeypatch.setenv("LANCE_CONSOLE_TARGET", str(tmp_path / "unused-default"))
    monkeypatch.chdir(tmp_path)
    st.cache_data.clear()
    st.cache_resource.clear()
    at = new_app()
    at.query_params["conn"] = "bare"
    at.run()
    assert_no_exception(at)
    page = texts(at)
    assert "aws_region" in page and "aws_endpoint" in page, page
    assert "ResolveRegion" not in page and "dns error" not in page
    assert "may be stale" not in page  # it never answered: nothing shown is stale
    assert s3_server.objects(bucket) == {}


def test_connect_dialog_offers_s3_keys_with_hints(s3_app) -> None:
    at = new_app()
    at.run()
    at.button(key="conn.open").click().run()
    at.radio(key="conn.form0.store").set_value("s3").run()
    assert_no_exception(at)
    grid = next(d.value for d in at.dataframe if d.key == "conn.form0.storage.s3")
    hints = dict(zip(grid["key"], grid["hint"], strict=True))
    for key in ("aws_region", "aws_endpoint", "allow_http", "aws_secret_access_key"):
        assert hints.get(key), (key, hints)
    assert "e.g. us-east-1" in hints["aws_region"] and "AWS_REGION" in hints["aws_region"]
    assert set(grid["value"]) == {""} and set(grid["env"]) == {""}  # offered, not filled
    at.radio(key="conn.form0.store").set_value("az").run()
    grid = next(d.value for d in at.dataframe if d.key == "conn.form0.storage.az")
    assert "azure_storage_account_name" in set(grid["key"]) and "aws_region" not in set(grid["key"])


def test_dialog_connection_saved_by_name_survives_a_reload(
    s3_app, s3_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection typed in the dialog (storage grid: values, secrets named by env var),
    saved by name: the file holds no secret, and a fresh session (a reload) opens it."""
    import tomllib

    from backend.config import saved_connections as conns
    from components.connect_dialog import spec_from_form, storage_grid

    grid = storage_grid("s3")
    fill = {
        "aws_endpoint": ("value", s3_server.endpoint),
        "aws_region": ("value", s3_server.REGION),
        "allow_http": ("value", "true"),
        "aws_access_key_id": ("env", "LAKE_S3_KEY_ID"),
        "aws_secret_access_key": ("env", "LAKE_S3_SECRET"),
    }
    for key, (column, value) in fill.items():
        grid.loc[grid["key"] == key, column] = value
    spec, typed = spec_from_form({"target": s3_app, "name": "typed-lake", "storage_options": grid})
    assert typed.is_empty()  # no secret typed: both come from env vars
    path = conns.save_connection(spec)
    text = path.read_text()
    assert s3_server.SECRET_KEY not in text and s3_server.ACCESS_KEY not in text
    saved = tomllib.loads(text)["connections"]["typed-lake"]
    assert saved["secret_storage_env"] == {
        "aws_access_key_id": "LAKE_S3_KEY_ID",
        "aws_secret_access_key": "LAKE_S3_SECRET",
    }
    assert saved["storage_options"]["aws_endpoint"] == s3_server.endpoint
    at = new_app()  # a reload: a new session, only the URL and the file remain
    at.query_params["conn"] = "typed-lake"
    at.run()
    assert_no_exception(at)
    assert at.selectbox(key="conn").value == "typed-lake"
    page = texts(at)
    assert "reachable" in page and "not reachable" not in page
    with pytest.raises(ValueError, match="both a value and an environment variable"):
        spec_from_form(
            {
                "target": s3_app,
                "storage_options": [{"key": "aws_region", "value": "x", "env": "AWS_X"}],
            }
        )
    with pytest.raises(ValueError, match="not a valid environment variable"):
        spec_from_form(
            {"target": s3_app, "storage_options": [{"key": "aws_region", "env": "no spaces"}]}
        )


def test_drop_namespace_panel_says_cascade_is_not_available_on_s3(s3_app) -> None:
    """``capabilities`` says drop_cascade=False on an object-store root: the panel says so
    instead of offering CASCADE or a button that could only be refused."""
    from components import state
    from components.table_actions import drop_namespace as ta

    at = new_app()
    at.query_params["conn"] = "lake"
    at.query_params["ns"] = "lake"
    at.run()
    at.session_state[state.panel_key(state.Tables.DROP_NS_OPEN, ["lake"])] = True
    at.run()
    assert_no_exception(at)
    assert not [r for r in at.radio if r.key and "drop_ns" in r.key]
    (warning,) = alerts(at, "warning")
    assert ta.CASCADE_NOT_ON_ROOT in warning and "lake › events" in warning
    assert not [b for b in at.button if b.key and "drop_ns" in b.key]
