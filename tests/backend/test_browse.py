"""The UI-facing reads and requests of the browse pages, on both backends (``ns`` fixture: real
local dir + real REST server): ``backend.services.namespaces`` / ``versions``, and the pure
helpers they use: ``backend.spec.paging``, ``backend.rules.properties``, ``backend.rules.version_ranges``,
``backend.rules.ids``, ``backend.arrow.types``."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from lance_namespace import CreateNamespaceRequest, ListTableVersionsRequest
from lance_namespace.errors import (
    InvalidInputError,
    LanceNamespaceError,
    TableAlreadyExistsError,
)

import backend
from backend.arrow.types import arrow_type_str
from backend.config import saved_connections as conns
from backend.rules import ids, properties, version_ranges
from backend.rules.version_ranges import Span
from backend.services import namespaces, versions
from backend.services import version_compare as vcmp
from backend.spec import paging
from tests.support import InFlight, append_rows, create_table, opened_versions


def declare(ns, namespace: list[str], name: str, **kw) -> None:
    ns.declare_table(namespaces.declare_table_request(namespace, name, **kw))


@pytest.fixture
def sample(ns):
    """``sales`` (tables orders x3 versions, pending declared) and ``sales/eu``."""
    ns.create_namespace(CreateNamespaceRequest(id=["sales"]))
    ns.create_namespace(CreateNamespaceRequest(id=["sales", "eu"]))
    create_table(ns, ["sales", "orders"], pa.table({"id": [1, 2, 3], "item": ["a", "b", "c"]}))
    append_rows(ns, ["sales", "orders"], pa.table({"id": [4], "item": ["d"]}))
    append_rows(ns, ["sales", "orders"], pa.table({"id": [5], "item": ["e"]}))
    declare(ns, ["sales"], "pending", properties={"owner": "ops"})
    return ns


# --- pure helpers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("orders", True),
        ("orders_2024.v1-x", True),
        ("_tmp", True),
        ("x" * 128, True),
        ("", False),
        ("  ", False),
        (" lead", False),
        ("has space", False),
        ("a/b", False),
        ("a\\b", False),
        ("a$b", False),
        ("-dash", False),
        (".", False),
        ("..", False),
        (".hidden", False),
        ("café", False),
        ("tab\there", False),
        ("x" * 129, False),
    ],
)
def test_name_problem(name: str, ok: bool) -> None:
    problem = ids.name_problem(name, "table")
    assert (problem is None) is ok, problem
    if not ok:
        assert problem.endswith(".")  # a sentence for the form
        with pytest.raises(InvalidInputError):
            namespaces.declare_table_request(["sales"], name)


def test_ids_address_odd_but_safe_names_and_refuse_unsafe_ones() -> None:
    assert ids.check_id(["sales", "has space", "café", 'quo"te']) == [
        "sales",
        "has space",
        "café",
        'quo"te',
    ]
    assert ids.parse_id("sales$orders") == ["sales", "orders"]
    assert ids.parse_id("a.b", ".") == ["a", "b"]
    for bad in (["a", ""], ["..", "t"], ["a/b"], ["a\\b"], ["a$b"], ["x" * 1025], ["a\x00"]):
        with pytest.raises(InvalidInputError):
            ids.check_id(bad)
    assert ids.check_id(["x"] * 16) and ids.part_problem("x" * 1024) is None
    with pytest.raises(InvalidInputError, match="at most 16 parts"):
        ids.check_id(["x"] * 17)
    with pytest.raises(InvalidInputError, match="empty part"):
        ids.parse_id("sales$$orders")
    with pytest.raises(InvalidInputError, match="longer than 200"):
        ids.check_id(["n" * 100, "t" * 100], create=True)  # 201 characters joined


def test_properties_from_rows_and_lines() -> None:
    rows = pd.DataFrame({"key": ["a", None, " b "], "value": ["1", None, "2"]})
    assert properties.from_rows(rows) == {"a": "1", "b": "2"}
    with pytest.raises(InvalidInputError, match="twice"):
        properties.from_rows([{"key": "a", "value": "1"}, {"key": "a", "value": "2"}])
    with pytest.raises(InvalidInputError, match="no key"):
        properties.from_rows([{"key": "", "value": "x"}])
    assert properties.from_lines("a=1\n\n b = x=y ") == {"a": "1", "b": "x=y"}
    with pytest.raises(InvalidInputError, match="Line 2"):
        properties.from_lines("a=1\nnope")
    with pytest.raises(InvalidInputError, match="at most 256 entries"):
        properties.from_rows([{"key": f"k{i}", "value": "v"} for i in range(257)])
    assert properties.check_properties(None) is None
    with pytest.raises(InvalidInputError, match="control character"):
        properties.check_properties({"a\x01": "v"})


def test_filter_and_paginate() -> None:
    names = [f"t{i:04d}" for i in range(2500)] + ["orders_eu", "orders_us"]
    assert paging.filter_names(names, "ORDERS") == ["orders_eu", "orders_us"]
    assert paging.filter_names(names, "orders_*") == ["orders_eu", "orders_us"]
    assert paging.filter_names(names, "t000?") == [f"t000{i}" for i in range(10)]
    page = paging.paginate(names, 3, 50)
    assert (page.number, page.count, page.total) == (3, 51, 2502)
    assert page.items[0] == "t0100" and page.first_row == 101 and page.last_row == 150
    assert paging.paginate(names, 999, 50).number == 51  # clamped
    assert paging.paginate([], 1).count == 1
    assert paging.page_count(101, 50) == 3


def test_parse_and_validate_ranges() -> None:
    assert version_ranges.parse("1-3, 7, 9-12") == [Span(1, 3), Span(7, 7), Span(9, 12)]
    for bad in ("", "x", "3-1", "0", "1-", "1:3", "9..12", "-2"):
        with pytest.raises(InvalidInputError):
            version_ranges.parse(bad)
    spec = version_ranges.to_spec([Span(2, 4)])
    assert [(r.start_version, r.end_version) for r in spec] == [(2, 5)]  # end exclusive
    assert version_ranges.from_spec(spec) == [Span(2, 4)]
    assert version_ranges.from_spec([(4, -1)], latest=9) == [Span(4, 9)]
    assert version_ranges.describe_spec(2, 6) == "2-5"
    assert version_ranges.describe_spec(4, -1) == "4-latest"
    assert version_ranges.format_spans(version_ranges.parse("2-5,8")) == "2-5, 8"

    problems = versions.delete_problems
    existing = [1, 2, 3, 4, 5]
    assert problems([Span(1, 2)], latest=5, existing=existing) == []
    assert "latest" in problems([Span(3, 5)], latest=5, existing=existing)[0]
    assert problems([Span(7, 9)], latest=5, existing=existing) == ["None of these versions exist."]
    assert problems([Span(1, 2)], latest=5, existing=[3, 4, 5]) == ["None of these versions exist."]
    assert problems([Span(1, 1)], latest=None, existing=[]) == ["The table has no versions."]
    assert version_ranges.range_problems([(0, 2)], latest=5)  # versions start at 1
    assert version_ranges.range_problems([(3, -1)], latest=5)
    assert version_ranges.range_problems([(3, -1)], latest=5, allow_latest=True) == []
    req = versions.delete_request(["t"], [Span(2, 4)])
    assert (req.ranges[0].start_version, req.ranges[0].end_version) == (2, 5)


def test_arrow_type_names() -> None:
    assert arrow_type_str({"type": "int64"}) == "int64"
    fsl = {
        "type": "fixed_size_list",
        "length": 8,
        "fields": [{"name": "item", "type": {"type": "float32"}}],
    }
    assert arrow_type_str(fsl) == "fixed_size_list<float32>[8]"
    assert arrow_type_str(pa.list_(pa.float32(), 8)) == "fixed_size_list<float32>[8]"
    struct = {"type": "struct", "fields": [{"name": "a", "type": {"type": "utf8"}}]}
    assert arrow_type_str(struct) == "struct<a: utf8>"
    assert arrow_type_str(None) == "?"


def test_compare_snapshots() -> None:
    VS = vcmp.VersionSnapshot
    a = VS(1, {"id": "int64", "x": "utf8"}, rows=3, fragments=1, indexes=[])
    b = VS(2, {"id": "int32", "y": "utf8"}, rows=5, fragments=2, indexes=["i"])
    cmp = vcmp.compare_snapshots(a, b)
    changes = dict(zip(cmp.schema_changes["column"], cmp.schema_changes["change"], strict=True))
    assert changes == {"id": "type changed", "y": "added", "x": "removed"}
    summary = cmp.summary.set_index("metric")["change"]
    assert summary["rows"] == "+2" and summary["fragments"] == "+1"
    c = vcmp.compare_snapshots(a, VS(3, unavailable=["rows: no"]))
    assert c.summary.set_index("metric")["change"]["rows"] == "unavailable"
    assert c.unavailable == ["v3 rows: no"]


# --- on both backends -------------------------------------------------------------------------


def test_listing_and_describe(sample) -> None:
    ns = sample
    assert namespaces.list_namespace_names(ns, []) == ["sales"]
    assert namespaces.list_namespace_names(ns, ["sales"]) == ["eu"]
    assert namespaces.list_table_names(ns, ["sales"]) == ["orders", "pending"]
    assert namespaces.list_table_names(ns, ["sales", "eu"]) == []
    assert namespaces.namespace_exists(ns, ["sales", "eu"]) and namespaces.namespace_exists(ns, [])
    assert not namespaces.namespace_exists(ns, ["nope"])

    orders = namespaces.describe_table(ns, ["sales", "orders"])
    assert isinstance(orders, namespaces.TableDetail)
    assert not orders.declared_only and orders.status == "materialised"
    assert (orders.name, orders.namespace) == ("orders", ["sales"])
    assert orders.row_count == 5
    assert orders.version == 3
    assert list(orders.schema["column"]) == ["id", "item"]
    assert list(orders.schema["type"]) == ["int64", "utf8"]
    assert orders.location
    assert orders.problems == []

    pending = namespaces.describe_table(ns, ["sales", "pending"])
    assert pending.declared_only and pending.row_count is None
    assert pending.properties.get("owner") == "ops"
    assert pending.schema.empty


def test_listing_pages_through_many_tables(ns, monkeypatch) -> None:
    ns.create_namespace(CreateNamespaceRequest(id=["bulk"]))
    for i in range(23):
        declare(ns, ["bulk"], f"t{i:02d}")
    monkeypatch.setattr(namespaces, "LIST_BATCH", 5)  # force several pages
    assert namespaces.list_table_names(ns, ["bulk"]) == [f"t{i:02d}" for i in range(23)]


def test_create_namespace_and_declare_validation(sample) -> None:
    ns = sample
    req = namespaces.create_namespace_request(["sales"], "apac", {"team": "x"})
    assert (req.id, req.properties) == (["sales", "apac"], {"team": "x"})
    ns.create_namespace(req)
    assert namespaces.list_namespace_names(ns, ["sales"]) == ["apac", "eu"]
    assert namespaces.describe_namespace(ns, ["sales", "apac"]).get("team") == "x"
    with pytest.raises(InvalidInputError):
        namespaces.create_namespace_request(["sales"], "bad name")
    with pytest.raises(InvalidInputError):
        namespaces.declare_table_request(["sales"], "bad/name")
    # The backends refuse the same names when a request is built by hand.
    with pytest.raises(InvalidInputError):
        ns.create_namespace(CreateNamespaceRequest(id=["sales", "bad name"]))
    assert namespaces.list_table_names(ns, ["sales"]) == ["orders", "pending"]
    assert namespaces.list_namespace_names(ns, ["sales"]) == ["apac", "eu"]
    with pytest.raises(TableAlreadyExistsError):
        declare(ns, ["sales"], "orders")  # exists


def test_deregister(sample) -> None:
    req = namespaces.deregister_table_request(["sales", "pending"])
    assert req.id == ["sales", "pending"]
    resp = sample.deregister_table(req)
    assert resp is not None
    assert namespaces.list_table_names(sample, ["sales"]) == ["orders"]
    with pytest.raises(InvalidInputError):
        namespaces.deregister_table_request(["sales", ".."])


def test_versions_operations_and_compare(sample, backend_kind: str) -> None:
    ns = sample
    tid = ["sales", "orders"]
    df = versions.list_versions(ns, tid)
    assert list(df["version"]) == [3, 2, 1]
    assert str(df["timestamp"].dtype).startswith("datetime64")
    assert df["manifest_path"].notna().all()
    ops = versions.version_operations(ns, tid, [3, 2, 1, 99])
    by_v = ops.set_index("version")
    if backend_kind == "local":
        assert list(by_v.loc[[3, 2, 1], "operation"]) == ["Append", "Append", "Overwrite"]
        assert all(Path(p).is_absolute() for p in df["manifest_path"])
    assert by_v.loc[99, "operation"] == "?" and by_v.loc[99, "error"]  # tolerated per row
    merged = versions.with_operations(df, ops)
    assert "operation" in merged.columns and len(merged) == 3

    info = versions.describe_version(ns, tid, 2)
    assert info["version"] == 2 and "timestamp" in info

    local = backend.capabilities(ns).kind == "local"
    cmp = vcmp.compare_versions(ns, tid, 3, 1)
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
    snap = vcmp.version_snapshot(ns, tid, 1)
    assert (snap.version, snap.rows, snap.schema) == (1, 3, {"id": "int64", "item": "utf8"})
    timeline = versions.timeline_frame(df, ops)
    assert set(timeline.columns) == {"version", "timestamp", "operation"}
    thin = versions.thin_timeline(timeline, keep=[2], max_points=2)
    assert thin.attrs["total"] == 3 and list(thin["version"]) == [3, 2, 1]  # keep + both ends


def test_thin_timeline_keeps_ends_and_page() -> None:
    frame = pd.DataFrame(
        {
            "version": list(range(5000, 0, -1)),
            "timestamp": pd.date_range("2024-01-01", periods=5000, freq="min"),
            "operation": "Append",
        }
    )
    thin = versions.thin_timeline(frame, keep=[2500, 2501], max_points=100)
    assert len(thin) == 100 and thin.attrs["total"] == 5000
    assert {5000, 1, 2500, 2501} <= set(thin["version"])
    assert list(thin["version"]) == sorted(thin["version"], reverse=True)  # order kept


def test_delete_version_ranges_refuses_latest(sample) -> None:
    ns = sample
    tid = ["sales", "orders"]
    with pytest.raises(InvalidInputError, match="latest"):
        versions.delete_versions(ns, tid, [Span(2, 3)])
    assert list(versions.list_versions(ns, tid)["version"]) == [3, 2, 1]  # nothing deleted
    versions.delete_versions(ns, tid, version_ranges.parse("1"))
    assert list(versions.list_versions(ns, tid)["version"]) == [3, 2]
    versions.delete_versions(ns, tid, [Span(2, 2)])
    with pytest.raises(InvalidInputError, match="latest"):  # the one left is the latest
        versions.delete_versions(ns, tid, [Span(3, 3)])
    assert list(versions.list_versions(ns, tid)["version"]) == [3]


def test_latest_version(sample) -> None:
    assert versions.latest_version(sample, ["sales", "orders"]) == 3
    append_rows(sample, ["sales", "orders"], pa.table({"id": [6], "item": ["f"]}))
    assert versions.latest_version(sample, ["sales", "orders"]) == 4  # read fresh
    assert versions.latest_version(sample, ["sales", "pending"]) is None  # declared only


def test_list_versions_empty_for_declared(sample) -> None:
    try:
        df = versions.list_versions(sample, ["sales", "pending"])
    except LanceNamespaceError:
        return  # a backend may refuse: the UI shows the error
    assert df.empty


def test_versions_listing_pages(ns, backend_kind: str, monkeypatch) -> None:
    """list_versions follows page_token. The local backend pages (2 rows per page forced
    here); pylance's REST adapter returns everything in one page without a token."""
    create_table(ns, ["t"], pa.table({"n": [0]}))
    for i in range(4):
        append_rows(ns, ["t"], pa.table({"n": [i + 1]}))
    calls = []
    real = ns.list_table_versions

    def spy(req: ListTableVersionsRequest):
        calls.append(req.page_token)
        return real(req)

    ns.list_table_versions = spy  # type: ignore[method-assign]
    if backend_kind == "local":
        monkeypatch.setattr(versions, "LIST_BATCH", 2)
    try:
        assert list(versions.list_versions(ns, ["t"])["version"]) == [5, 4, 3, 2, 1]
    finally:
        del ns.list_table_versions
    assert calls and calls[0] is None
    if backend_kind == "local":
        assert calls == [None, "v3", "v1"]


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


def test_a_saved_connection_carries_its_server_profile(tmp_path: Path, rest_server) -> None:
    path = tmp_path / "c.toml"
    spec = conns.ConnectionSpec(name="srv", target=rest_server.url, server_profile="lance-dir")
    conns.save_connection(spec, path)
    assert tomllib.loads(path.read_text())["connections"]["srv"]["server_profile"] == "lance-dir"
    (loaded,), _, problems = conns.load_connections(path)
    assert not problems and loaded.server_profile == "lance-dir"
    client = backend.connect(loaded.target, **conns.connect_options(loaded))
    caps = backend.capabilities(client)
    assert (caps.batch_commit, caps.rename, caps.drop_cascade, caps.server_profile) == (
        False,
        False,
        False,
        "lance-dir",
    )
    other = conns.ConnectionSpec(name="srv", target=rest_server.url)
    assert conns.connection_key(other) != conns.connection_key(loaded)  # not one cached client


def test_the_launchers_rest_connection_takes_the_server_profile_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LANCE_CONSOLE_SERVER_PROFILE", "lance-dir")
    monkeypatch.setenv("LANCE_CONSOLE_TARGET", "http://127.0.0.1:2333")
    assert conns.default_connection().server_profile == "lance-dir"
    assert conns.connect_options(conns.default_connection())["server_profile"] == "lance-dir"
    monkeypatch.setenv("LANCE_CONSOLE_TARGET", "/data/lance")  # a local target: no profile
    assert conns.default_connection().server_profile is None


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


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"total_fragments": "3"}, 3),
        ({"total_fragments": 0}, 0),
        ({"total_fragments": "-1"}, None),
        ({"total_fragments": -2}, None),
        ({"total_fragments": "many"}, None),
        ({"total_fragments": True}, None),
        ({"total_fragments": 2.5}, None),
        ({}, None),
        (None, None),
    ],
)
def test_total_fragments_of_a_server_answer(metadata, expected) -> None:
    """A server's ``total_fragments`` is untrusted: only a whole number of 0 or more counts."""
    from backend.services.namespaces import total_fragments

    assert total_fragments(metadata) == expected


def test_properties_not_kept() -> None:
    from backend.services.namespaces import properties_not_kept

    assert properties_not_kept({"a": "1", "b": "2"}, {"a": "1", "b": "x"}) == {"b": "2"}
    assert properties_not_kept({"a": "1"}, None) == {"a": "1"}
    assert properties_not_kept(None, {"a": "1"}) == {}


def test_local_operations_read_from_the_dataset_are_what_describe_says(
    local_root: Path, monkeypatch
) -> None:
    """On a local table the operations of its versions are read from one open dataset, not
    described one by one (an open of the table each). Checked against DescribeTransaction of
    every version, computed here on its own, over versions of every kind the console makes
    (writes, deletes, updates, upserts, column changes, an index, a config change, a
    compaction, a restore), one of them with a property set by AlterTransaction; a version
    that does not exist is an error row as before."""
    import lance
    from lance_namespace import AlterTransactionRequest, DescribeTransactionRequest

    from tests.support import make_table, table_location

    ns = backend.connect(str(local_root))
    ns.create_namespace(CreateNamespaceRequest(id=["s"]))
    tid = ["s", "t"]
    create_table(ns, tid, make_table(40))
    ds = lance.dataset(str(table_location(ns, tid)))
    ds.insert(make_table(10, start=40))
    ds.delete("id < 3")
    ds.update({"text": "'x'"}, where="id = 5")
    ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
        make_table(5, start=48)
    )
    ds.add_columns({"double": "id * 2"})
    ds.alter_columns({"path": "double", "name": "twice"})
    ds.drop_columns(["twice"])
    ds.create_scalar_index("id", "BTREE")
    ds.update_config({"console.test": "1"})
    lance.optimize.Compaction.execute(ds, lance.optimize.CompactionOptions())
    lance.dataset(ds.uri, version=2).restore()
    latest = lance.dataset(ds.uri).version
    ns.alter_transaction(
        AlterTransactionRequest(
            id=[*tid, "2"],
            actions=[{"setPropertyAction": {"key": "reviewed_by", "value": "test"}}],
        )
    )
    every = list(range(1, latest + 1))

    described = {}
    for v in every:
        props = ns.describe_transaction(DescribeTransactionRequest(id=[*tid, str(v)])).properties
        described[v] = (props["operation"], int(props["read_version"]), props["uuid"])
    from backend.local.namespace import LocalNamespace

    asked: list[int] = []
    real = LocalNamespace.describe_transaction
    monkeypatch.setattr(
        LocalNamespace,
        "describe_transaction",
        lambda self, request: asked.append(int(request.id[-1])) or real(self, request),
    )
    ops = versions.version_operations(ns, tid, [*every, latest + 5]).set_index("version")
    monkeypatch.setattr(LocalNamespace, "describe_transaction", real)
    # described only where the read cannot name the operation (a compaction's), and the
    # version that does not exist
    plain = {"Append", "Delete", "Update", "Merge", "Project", "CreateIndex", "Restore"}
    assert not [v for v in asked if described.get(v, ("",))[0] in plain], asked
    assert latest + 5 in asked
    read = {
        v: (ops.loc[v, "operation"], int(ops.loc[v, "read_version"]), ops.loc[v, "uuid"])
        for v in every
    }
    assert read == described
    kinds = {op for op, _, _ in described.values()}
    assert {"Append", "Delete", "Update", "Merge", "Project", "CreateIndex"} <= kinds, kinds
    assert {"UpdateConfig", "Rewrite", "Restore", "Overwrite"} <= kinds, kinds
    assert set(ops.loc[every, "status"]) == {"SUCCEEDED"} and ops.loc[every, "error"].isna().all()
    assert ops.loc[latest + 5, "operation"] == "?" and ops.loc[latest + 5, "error"]

    # the dataset is opened at the highest version asked for (its manifest read by name, not
    # found by listing every version), and at the latest where that version does not exist
    opened = opened_versions(monkeypatch)
    some = [2, 4, latest - 1]
    ops_some = versions.version_operations(ns, tid, some).set_index("version")
    assert opened == [latest - 1]
    assert {v: ops_some.loc[v, "operation"] for v in some} == {v: described[v][0] for v in some}
    opened.clear()
    versions.version_operations(ns, tid, [*every, latest + 5])
    assert opened == [latest + 5, None]
    monkeypatch.undo()

    # on a branch (no DescribeTransaction there), the same compaction of an indexed table:
    # its rows say what cannot be read, in a reader's terms, and the others are named
    from backend.services import branches

    branches.create_branch(ns, tid, "dev")
    dev = lance.dataset(ds.uri).checkout_version(("dev", None))
    start = dev.version
    for n in range(3):
        dev.insert(make_table(5, start=100 + 5 * n))
    dev.create_scalar_index("id", "BTREE", replace=True)
    lance.optimize.Compaction.execute(dev, lance.optimize.CompactionOptions())
    on_dev = list(range(start + 1, dev.latest_version + 1))
    dev_ops = versions.version_operations(ns, tid, on_dev, "dev").set_index("version")
    assert list(dev_ops.loc[on_dev[:4], "operation"]) == ["Append"] * 3 + ["CreateIndex"]
    unread = dev_ops[dev_ops["error"].notna()]
    assert list(unread["operation"].unique()) == ["?"], dev_ops
    assert all(
        e == f"transaction of version {v} of branch dev: cannot be read by this pylance"
        for v, e in unread["error"].items()
    ), unread


def test_rest_operations_are_described_a_few_at_once(rest_server, monkeypatch) -> None:
    """Over REST each version's operation is one DescribeTransaction (the spec has no bulk
    form): sent ``IN_FLIGHT`` at once, the rows are the ones the requests sent one by one
    give, in the order asked, a version that does not exist an error row among them."""
    import time

    from backend.rest.client import RestNamespaceClient
    from backend.spec.fanout import IN_FLIGHT

    ns = backend.connect(rest_server.url)
    ns.create_namespace(CreateNamespaceRequest(id=["s"]))
    tid = ["s", "t"]
    create_table(ns, tid, pa.table({"id": [1, 2]}))
    for n in range(6):
        append_rows(ns, tid, pa.table({"id": [10 + n]}))
    asked = [7, 99, 1, 2, 3, 4, 5, 6]
    one_by_one = pd.concat(
        [versions.version_operations(ns, tid, [v]) for v in asked], ignore_index=True
    )
    assert list(one_by_one["operation"]) == ["Append", "?", "Overwrite"] + ["Append"] * 5
    assert one_by_one["error"].notna().tolist() == [False, True] + [False] * 6

    gauge = InFlight(monkeypatch, RestNamespaceClient, "describe_transaction", delay=0.1)
    started = time.monotonic()
    together = versions.version_operations(ns, tid, asked)
    took = time.monotonic() - started
    assert gauge.most == IN_FLIGHT
    assert took < len(asked) * 0.1  # two rounds of four, not eight requests one by one
    assert _records(together) == _records(one_by_one)


def _records(frame: pd.DataFrame) -> list[dict]:
    """``frame``'s rows, every missing value (None, NaN, NA) as ``None``."""
    return [
        {k: None if pd.isna(v) else v for k, v in row.items()} for row in frame.to_dict("records")
    ]
