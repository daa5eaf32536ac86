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
    assert {m.label: m.value for m in at.metric}["Versions"] == "1"
    shown = texts(at) + " ".join(paths_shown(at)) + " ".join(str(d.value) for d in at.dataframe)
    assert s3_server.SECRET_KEY not in shown and s3_server.ACCESS_KEY not in shown


def test_drop_namespace_panel_says_cascade_is_not_available_on_s3(s3_app) -> None:
    """``capabilities`` says drop_cascade=False on an object-store root: the panel says so
    instead of offering CASCADE or a button that could only be refused."""
    from components import lifecycle, state

    at = new_app()
    at.query_params["conn"] = "lake"
    at.query_params["ns"] = "lake"
    at.run()
    at.session_state[state.panel_key(state.Tables.DROP_NS_OPEN, ["lake"])] = True
    at.run()
    assert_no_exception(at)
    assert not [r for r in at.radio if r.key and "drop_ns" in r.key]
    (warning,) = alerts(at, "warning")
    assert lifecycle.CASCADE_NOT_ON_ROOT in warning and "lake › events" in warning
    assert not [b for b in at.button if b.key and "drop_ns" in b.key]
