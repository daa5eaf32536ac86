"""backend/browse.py on both backends (``ns`` fixture: real local dir + real REST server)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from lance_namespace import CreateNamespaceRequest, ListTableVersionsRequest
from lance_namespace.errors import InvalidInputError, LanceNamespaceError

import backend
from backend import browse
from backend import connections as conns
from tests.support import append_rows, create_table


@pytest.fixture
def sample(ns):
    """``sales`` (tables orders x3 versions, pending declared) and ``sales/eu``."""
    ns.create_namespace(CreateNamespaceRequest(id=["sales"]))
    ns.create_namespace(CreateNamespaceRequest(id=["sales", "eu"]))
    create_table(ns, ["sales", "orders"], pa.table({"id": [1, 2, 3], "item": ["a", "b", "c"]}))
    append_rows(ns, ["sales", "orders"], pa.table({"id": [4], "item": ["d"]}))
    append_rows(ns, ["sales", "orders"], pa.table({"id": [5], "item": ["e"]}))
    browse.declare_table(ns, ["sales"], "pending", properties={"owner": "ops"})
    return ns


# --- pure helpers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("orders", True),
        ("orders_2024.v1-x", True),
        ("_tmp", True),
        ("", False),
        ("  ", False),
        (" lead", False),
        ("has space", False),
        ("a/b", False),
        ("a$b", False),
        ("-dash", False),
        ("x" * 256, False),
    ],
)
def test_validate_identifier(name: str, ok: bool) -> None:
    assert (browse.validate_identifier(name) is None) is ok


def test_properties_from_rows() -> None:
    rows = pd.DataFrame({"key": ["a", None, " b "], "value": ["1", None, "2"]})
    assert browse.properties_from_rows(rows) == {"a": "1", "b": "2"}
    with pytest.raises(ValueError, match="twice"):
        browse.properties_from_rows([{"key": "a", "value": "1"}, {"key": "a", "value": "2"}])
    with pytest.raises(ValueError, match="no key"):
        browse.properties_from_rows([{"key": "", "value": "x"}])


def test_filter_and_paginate() -> None:
    names = [f"t{i:04d}" for i in range(2500)] + ["orders_eu", "orders_us"]
    assert browse.filter_names(names, "ORDERS") == ["orders_eu", "orders_us"]
    assert browse.filter_names(names, "orders_*") == ["orders_eu", "orders_us"]
    assert browse.filter_names(names, "t000?") == [f"t000{i}" for i in range(10)]
    page = browse.paginate(names, 3, 50)
    assert (page.number, page.count, page.total) == (3, 51, 2502)
    assert page.items[0] == "t0100" and page.first_row == 101 and page.last_row == 150
    assert browse.paginate(names, 999, 50).number == 51  # clamped
    assert browse.paginate([], 1).count == 1


def test_parse_and_validate_ranges() -> None:
    assert browse.parse_version_ranges("1-3, 7, 9..12") == [(1, 3), (7, 7), (9, 12)]
    for bad in ("", "x", "3-1", "0", "1-"):
        with pytest.raises(ValueError):
            browse.parse_version_ranges(bad)
    assert browse.validate_delete_ranges([(1, 2)], latest=5, existing=[1, 2, 3, 4, 5]) == []
    assert "latest" in browse.validate_delete_ranges([(3, 5)], latest=5)[0]
    assert browse.validate_delete_ranges([(7, 9)], latest=5)
    assert browse.validate_delete_ranges([(1, 2)], latest=5, existing=[3, 4, 5])
    req = browse.delete_request(["t"], [(2, 4)])
    assert (req.ranges[0].start_version, req.ranges[0].end_version) == (2, 5)  # end exclusive


def test_arrow_type_names() -> None:
    assert browse.arrow_type_name({"type": "int64"}) == "int64"
    fsl = {
        "type": "fixed_size_list",
        "length": 8,
        "fields": [{"name": "item", "type": {"type": "float32"}}],
    }
    assert browse.arrow_type_name(fsl) == "fixed_size_list<float32, 8>"
    struct = {"type": "struct", "fields": [{"name": "a", "type": {"type": "utf8"}}]}
    assert browse.arrow_type_name(struct) == "struct<a: utf8>"


def test_compare_snapshots() -> None:
    a = browse.VersionSnapshot(1, {"id": "int64", "x": "utf8"}, rows=3, fragments=1, indexes=[])
    b = browse.VersionSnapshot(2, {"id": "int32", "y": "utf8"}, rows=5, fragments=2, indexes=["i"])
    cmp = browse.compare_snapshots(a, b)
    changes = dict(zip(cmp.schema_changes["column"], cmp.schema_changes["change"], strict=True))
    assert changes == {"id": "type changed", "y": "added", "x": "removed"}
    summary = cmp.summary.set_index("metric")["change"]
    assert summary["rows"] == "+2" and summary["fragments"] == "+1"
    c = browse.compare_snapshots(a, browse.VersionSnapshot(3, unavailable=["rows: no"]))
    assert c.summary.set_index("metric")["change"]["rows"] == "unavailable"
    assert c.unavailable == ["v3 rows: no"]


# --- on both backends -------------------------------------------------------------------------


def test_listing_and_describe(sample) -> None:
    ns = sample
    assert browse.list_namespace_names(ns, []) == ["sales"]
    assert browse.list_namespace_names(ns, ["sales"]) == ["eu"]
    assert browse.list_table_names(ns, ["sales"]) == ["orders", "pending"]
    assert browse.list_table_names(ns, ["sales", "eu"]) == []
    assert browse.namespace_exists(ns, ["sales", "eu"]) and browse.namespace_exists(ns, [])
    assert not browse.namespace_exists(ns, ["nope"])

    orders = browse.describe_table(ns, ["sales", "orders"])
    assert not orders.declared_only and orders.status == "materialised"
    assert orders.row_count == 5
    assert orders.version == 3
    assert list(orders.schema["column"]) == ["id", "item"]
    assert list(orders.schema["type"]) == ["int64", "utf8"]
    assert orders.location

    pending = browse.describe_table(ns, ["sales", "pending"])
    assert pending.declared_only and pending.row_count is None
    assert pending.properties.get("owner") == "ops"
    assert pending.schema.empty


def test_listing_pages_through_many_tables(ns) -> None:
    ns.create_namespace(CreateNamespaceRequest(id=["bulk"]))
    for i in range(23):
        browse.declare_table(ns, ["bulk"], f"t{i:02d}")
    browse_batch = browse.LIST_BATCH
    try:
        browse.LIST_BATCH = 5  # force several pages
        assert browse.list_table_names(ns, ["bulk"]) == [f"t{i:02d}" for i in range(23)]
    finally:
        browse.LIST_BATCH = browse_batch


def test_create_namespace_and_declare_validation(sample) -> None:
    ns = sample
    browse.create_namespace(ns, ["sales"], "apac", {"team": "x"})
    assert browse.list_namespace_names(ns, ["sales"]) == ["apac", "eu"]
    with pytest.raises(InvalidInputError):
        browse.create_namespace(ns, ["sales"], "bad name")
    with pytest.raises(InvalidInputError):
        browse.declare_table(ns, ["sales"], "bad/name")
    assert browse.list_table_names(ns, ["sales"]) == ["orders", "pending"]
    with pytest.raises(LanceNamespaceError):
        browse.declare_table(ns, ["sales"], "orders")  # exists


def test_deregister(sample) -> None:
    resp = browse.deregister_table(sample, ["sales", "pending"])
    assert resp is not None
    assert browse.list_table_names(sample, ["sales"]) == ["orders"]


def test_versions_operations_and_compare(sample, backend_kind: str) -> None:
    ns = sample
    tid = ["sales", "orders"]
    df = browse.list_versions(ns, tid)
    assert list(df["version"]) == [3, 2, 1]
    assert str(df["timestamp"].dtype).startswith("datetime64")
    assert df["manifest_path"].notna().all()
    ops = browse.version_operations(ns, tid, [3, 2, 1, 99])
    by_v = ops.set_index("version")
    if backend_kind == "local":
        assert list(by_v.loc[[3, 2, 1], "operation"]) == ["Append", "Append", "Overwrite"]
    assert by_v.loc[99, "operation"] == "?" and by_v.loc[99, "error"]  # tolerated per row
    merged = browse.with_operations(df, ops)
    assert "operation" in merged.columns and len(merged) == 3

    info = browse.describe_version(ns, tid, 2)
    assert info["version"] == 2 and "timestamp" in info

    local = backend.capabilities(ns).kind == "local"
    cmp = browse.compare_versions(ns, tid, 3, 1, local=local)
    assert (cmp.a.version, cmp.b.version) == (1, 3)
    assert cmp.schema_changes.empty
    rows = cmp.summary.set_index("metric")
    assert rows.loc["rows", "change"] == "+2"
    if local:
        assert rows.loc["fragments", "change"] == "+2"
        assert not cmp.unavailable
    else:  # REST: schema, rows and indexes through the API; fragments said to be unavailable
        assert any("fragments" in u for u in cmp.unavailable) or rows.loc["fragments", "v1"] != "—"
        assert rows.loc["indexes", "change"] == "same"
    timeline = browse.timeline_frame(df, ops)
    assert set(timeline.columns) == {"version", "timestamp", "operation"}


def test_delete_version_ranges_refuses_latest(sample) -> None:
    ns = sample
    tid = ["sales", "orders"]
    with pytest.raises(InvalidInputError, match="latest"):
        browse.delete_version_ranges(ns, tid, [(2, 3)])
    assert list(browse.list_versions(ns, tid)["version"]) == [3, 2, 1]  # nothing deleted
    browse.delete_version_ranges(ns, tid, [(1, 1)])
    assert list(browse.list_versions(ns, tid)["version"]) == [3, 2]
    assert browse.latest_version(ns, tid) == 3


def test_list_versions_empty_for_declared(sample) -> None:
    try:
        df = browse.list_versions(sample, ["sales", "pending"])
    except LanceNamespaceError:
        return  # a backend may refuse: the UI shows the error
    assert df.empty


def test_versions_listing_pages(ns) -> None:
    """list_versions follows page_token (REST servers page; 1 row per page forced here)."""
    create_table(ns, ["t"], pa.table({"n": [0]}))
    for i in range(4):
        append_rows(ns, ["t"], pa.table({"n": [i + 1]}))
    calls = []
    real = ns.list_table_versions

    def spy(req: ListTableVersionsRequest):
        calls.append(req.page_token)
        return real(req)

    ns.list_table_versions = spy  # type: ignore[method-assign]
    try:
        assert list(browse.list_versions(ns, ["t"])["version"]) == [5, 4, 3, 2, 1]
    finally:
        del ns.list_table_versions
    assert calls and calls[0] is None


# --- saved connections (no streamlit) ----------------------------------------------------------


def test_connections_roundtrip_without_secrets(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    spec = conns.ConnectionSpec(
        name="prod",
        target="https://lance.example.com",
        delimiter=".",
        headers={"x-tenant": "acme"},
        api_key_env="PROD_KEY",
        secret_headers_env={"X-Auth-Token": "PROD_HDR"},
        read_only=True,
    )
    conns.save_connection(spec, path)
    conns.save_connection(conns.ConnectionSpec(name="dev", target="/data/dev"), path)
    text = path.read_text()
    assert "PROD_KEY" in text and "PROD_HDR" in text
    doc = tomllib.loads(text)["connections"]["prod"]
    assert not {"api_key", "auth_token"} & set(doc) and "Authorization" not in doc["headers"]
    specs, _, problems = conns.load_connections(path)
    assert not problems
    by_name = {s.name: s for s in specs}
    assert by_name["prod"].read_only and by_name["prod"].delimiter == "."
    assert dict(by_name["prod"].headers) == {"x-tenant": "acme"}
    assert by_name["dev"].kind == "local" and by_name["prod"].kind == "rest"
    assert conns.delete_connection("dev", path)
    assert [s.name for s in conns.load_connections(path)[0]] == ["prod"]

    resolved, missing = conns.resolve_secrets(
        by_name["prod"], env={"PROD_KEY": "k" * 32, "PROD_HDR": "h" * 20}
    )
    assert resolved.api_key == "k" * 32 and resolved.headers == {"X-Auth-Token": "h" * 20}
    assert not missing
    opts = conns.connect_options(by_name["prod"], resolved)
    assert opts["api_key"] == "k" * 32 and opts["headers"]["x-tenant"] == "acme"
    key = conns.connection_key(by_name["prod"], resolved)
    assert "k" * 8 not in key and key == conns.connection_key(by_name["prod"], resolved)
    assert key != conns.connection_key(by_name["prod"], conns.Secrets(api_key="other"))
    _, missing = conns.resolve_secrets(by_name["prod"], env={})
    assert any("PROD_KEY" in m for m in missing)


def test_literal_secrets_in_file_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        '[connections.x]\ntarget = "http://h"\napi_key = "s3cr3t-value-123"\n'
        '[connections.x.headers]\nAuthorization = "Bearer zzz"\nx-team = "t"\n'
    )
    specs, secrets, _ = conns.load_connections(path)
    assert specs[0].warnings and not secrets
    assert dict(specs[0].headers) == {"x-team": "t"}
    specs, secrets, _ = conns.load_connections(
        tmp_path / "missing.toml", secrets={"y": {"target": "http://h", "api_key": "abc"}}
    )
    assert specs[0].source == "secrets" and secrets["y"].api_key == "abc"


def test_unreadable_config_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[connections.x\n")
    _, _, problems = conns.load_connections(path)
    assert problems and "Cannot read" in problems[0]
