"""AppTest: "HTTP inspector" - not applicable on local; REST traffic with secrets redacted."""

from __future__ import annotations

from lance_namespace import CreateNamespaceRequest

import backend
from tests.ui.conftest import alerts, assert_no_exception, open_page, texts

API_KEY = "inspector-secret-key-9876543210"


def test_local_connection_is_not_applicable(make_app) -> None:
    at = make_app("inspector")
    assert_no_exception(at)
    assert any("Not applicable" in i for i in alerts(at, "info"))


def test_rest_traffic_listed_with_secrets_redacted(make_app, rest_server) -> None:
    backend.connect(rest_server.url).create_namespace(CreateNamespaceRequest(id=["remote"]))
    at = make_app()
    at.button(key="conn.open").click().run()  # the "Connect to…" dialog
    at.text_input(key="conn.form0.target").input(rest_server.url)
    at.text_input(key="conn.form0.name").input("srv")
    at.text_input(key="conn.form0.api_key").input(API_KEY)
    at.button(key="conn.form0.submit").click().run()
    at.button(key="tables.ns.open.remote").click().run()  # some traffic
    open_page(at, "inspector")
    assert_no_exception(at)

    grid = next(d.value for d in at.dataframe if "method" in d.value.columns)
    assert len(grid) >= 2
    assert set(grid["status"].dropna().astype(int)) == {200}
    assert any("list" in str(op).lower() for op in grid["operation"])
    assert f"{len(grid)} recent exchanges, newest first" in texts(at)
    curls = [c.value for c in at.code if c.value.startswith("curl")]
    assert curls and "$LANCE_API_KEY" in curls[0]
    everything = texts(at) + " ".join(str(j.value) for j in at.json) + grid.to_string()
    assert API_KEY not in everything

    at.button(key="insp.clear").click().run()
    assert "No requests yet" in texts(at)
    assert "0 recent exchanges" in texts(at)
