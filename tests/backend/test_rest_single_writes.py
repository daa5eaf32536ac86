"""REST single writes send one request against a real server (pylance's RestAdapter), and the
explicit preflight (``backend.preflight`` given one request) finds what the old pre-checks
found, with bulk reads only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import lance_namespace as ln
import pyarrow as pa
import pytest
from lance_namespace import errors as lne

import backend
from backend.rest import RestNamespaceClient
from backend.rules import ids

SMALL = pa.table({"id": pa.array(range(4), pa.int64())})
NAMESPACES = [["a"], ["a", "b"], ["c"]]


@pytest.fixture
def client(rest_server) -> Iterator[RestNamespaceClient]:
    """A few namespaces, each holding tables, and two root-level tables."""
    c = RestNamespaceClient(rest_server.url)
    for parts in NAMESPACES:
        c.create_namespace(ln.CreateNamespaceRequest(id=parts))
        for name in ("t1", "t2"):
            c.declare_table(ln.DeclareTableRequest(id=[*parts, name]))
    c.create_table(ln.CreateTableRequest(id=["a", "data"]), SMALL)
    c.create_table(ln.CreateTableRequest(id=["root1"]), SMALL)
    c.declare_table(ln.DeclareTableRequest(id=["root2"]))
    c.wire_log.clear()
    try:
        yield c
    finally:
        c.close()


def listed_tables(c: RestNamespaceClient, parts: list[str]) -> list[str]:
    return list(c.list_tables(ln.ListTablesRequest(id=parts, include_declared=True)).tables or [])


def test_each_table_write_sends_exactly_one_request(
    client: RestNamespaceClient, rest_server
) -> None:
    writes = [
        ("declare_table", lambda: client.declare_table(ln.DeclareTableRequest(id=["a", "d"]))),
        (
            "create_table",
            lambda: client.create_table(ln.CreateTableRequest(id=["a", "b", "n"]), SMALL),
        ),
        (
            "register_table",
            lambda: client.register_table(
                ln.RegisterTableRequest(id=["c", "reg"], location="root1.lance")
            ),
        ),
    ]
    for op, write in writes:
        client.wire_log.clear()
        write()
        assert [e.op for e in client.wire_log] == [op]
    assert set(listed_tables(client, ["a"])) >= {"d", "t1"}
    assert "n" in listed_tables(client, ["a", "b"])
    assert "reg" in listed_tables(client, ["c"])
    # RenameTable: one request; this server does not implement it and says so
    client.wire_log.clear()
    with pytest.raises(lne.UnsupportedOperationError):
        client.rename_table(ln.RenameTableRequest(id=["a", "t1"], new_table_name="u"))
    assert [e.op for e in client.wire_log] == ["rename_table"]


def test_a_new_version_reads_only_its_own_table(client: RestNamespaceClient) -> None:
    """CreateTableVersion keeps the staged-manifest rule (DescribeTable of the target only)."""
    location = client.describe_table(ln.DescribeTableRequest(id=["a", "data"])).location
    client.wire_log.clear()
    with pytest.raises(lne.InvalidInputError, match="staging areas"):
        client.create_table_version(
            {"id": ["a", "data"], "version": 2, "manifest_path": "/tmp/x.manifest"}
        )
    assert [e.op for e in client.wire_log] == ["describe_table"]
    # the write goes after that one read; the server judges the manifest (none staged here)
    client.wire_log.clear()
    with pytest.raises(lne.LanceNamespaceError):
        client.create_table_version(
            {"id": ["a", "data"], "version": 2, "manifest_path": f"{location}/_staging/2.m"}
        )
    assert [e.op for e in client.wire_log] == ["describe_table", "create_table_version"]


def test_the_servers_refusal_is_reported(client: RestNamespaceClient) -> None:
    client.wire_log.clear()
    with pytest.raises(lne.TableAlreadyExistsError):
        client.declare_table(ln.DeclareTableRequest(id=["a", "t1"]))
    with pytest.raises(lne.NamespaceNotFoundError, match="nope"):
        client.register_table(ln.RegisterTableRequest(id=["nope", "x"], location="root1.lance"))
    assert [e.op for e in client.wire_log] == ["declare_table", "register_table"]


def test_the_preflight_finds_another_tables_location_from_the_listings(
    client: RestNamespaceClient, rest_server
) -> None:
    """One ListTables and one ListNamespaces per namespace (the root included), no
    DescribeTable; what the old pre-check (a DescribeTable of every table) refused."""
    nested = client.describe_table(ln.DescribeTableRequest(id=["a", "b", "t2"])).location
    root_level = client.describe_table(ln.DescribeTableRequest(id=["root1"])).location
    dir_name = nested.rsplit("/", 1)[1]
    assert (Path(rest_server.root) / dir_name).is_dir()  # a real directory of the server
    cases = [
        (dir_name, "is the directory of another table (a$b$t2)"),
        (f"{dir_name}/sub", "is inside the directory of another table (a$b$t2)"),
        (root_level.rsplit("/", 1)[1], "is the directory of another table (root1)"),
    ]
    for location, why in cases:
        client.wire_log.clear()
        request = ln.RegisterTableRequest(id=["c", "twin"], location=location)
        problems = backend.preflight(client, request)
        assert [why in str(p) for p in problems] == [True], problems
        namespaces = 1 + len(NAMESPACES)
        assert client.wire_log.counts() == {
            "list_tables": namespaces,
            "list_namespaces": namespaces,
        }
        with pytest.raises(lne.InvalidInputError, match="another table"):
            backend.preflight(client, request, raise_first=True)
    # nothing was written: the names are still free
    assert "twin" not in listed_tables(client, ["c"])
    # a location of no table: no problem
    fresh = ln.RegisterTableRequest(id=["c", "twin"], location="fresh")
    assert backend.preflight(client, fresh) == []
    # the registration the preflight refuses is one the server accepts: the rule is the
    # preflight's
    client.register_table(ln.RegisterTableRequest(id=["c", "twin"], location=dir_name))
    assert "twin" in listed_tables(client, ["c"])


def test_the_preflight_of_a_declare_reads_its_namespace_only(
    client: RestNamespaceClient,
) -> None:
    missing = ln.DeclareTableRequest(id=["ghost", "t"])
    (problem,) = backend.preflight(client, missing)
    assert problem.code.name == "NAMESPACE_NOT_FOUND"
    assert "namespace ghost not found" in str(problem)
    assert {e.op for e in client.wire_log} <= {"list_tables", "namespace_exists"}
    client.wire_log.clear()
    (taken,) = backend.preflight(client, ln.DeclareTableRequest(id=["a", "b", "t1"]))
    assert taken.code.name == "TABLE_ALREADY_EXISTS"
    assert client.wire_log.counts() == {"list_tables": 1}
    client.wire_log.clear()
    assert backend.preflight(client, ln.DeclareTableRequest(id=["a", "b", "new"])) == []
    assert client.wire_log.counts() == {"list_tables": 1}
    # nothing written
    assert "new" not in listed_tables(client, ["a", "b"])
    assert client.list_namespaces(ln.ListNamespacesRequest(id=[])).namespaces == ["a", "c"]


def test_the_preflight_of_a_rename(client: RestNamespaceClient) -> None:
    cases = [
        (ln.RenameTableRequest(id=["a", "t1"], new_table_name="t2"), ["TABLE_ALREADY_EXISTS"]),
        (ln.RenameTableRequest(id=["a", "zz"], new_table_name="u"), ["TABLE_NOT_FOUND"]),
        (
            ln.RenameTableRequest(id=["a", "t1"], new_table_name="u", new_namespace_id=["nope"]),
            ["NAMESPACE_NOT_FOUND"],
        ),
        (ln.RenameTableRequest(id=["a", "t1"], new_table_name="u", new_namespace_id=["c"]), []),
    ]
    for request, codes in cases:
        client.wire_log.clear()
        assert [p.code.name for p in backend.preflight(client, request)] == codes
        assert {e.op for e in client.wire_log} <= {"list_tables", "namespace_exists"}


def test_the_listed_location_rule_agrees_with_the_locations_the_server_reports(
    client: RestNamespaceClient,
) -> None:
    """The directory names the rule expects are the ones this server gives: every table's
    reported location is found as its own directory, and no other table's."""
    from backend.rules.location_rules import listed_location_clash
    from backend.spec.catalog_views import ListingView
    from backend.write_preflight import catalog_tables

    _namespaces, tables = catalog_tables(ListingView(client))
    for object_id in sorted(tables):
        reported = client.describe_table(
            ln.DescribeTableRequest(id=ids.parse_object_id(object_id))
        ).location
        assert reported is not None
        assert listed_location_clash(reported, tables) == (
            "is the directory of another table",
            object_id,
        )


def test_the_consoles_own_register_and_declare_run_the_preflight_first(
    client: RestNamespaceClient,
) -> None:
    """The Tables page's register and declare (``lifecycle.register_table``,
    ``namespaces.declare_and_check``) ask the preflight before sending over REST: a location
    of another table, and a namespace that does not exist, are refused with nothing sent to
    write (pylance's server would accept both)."""
    from backend.services import lifecycle, namespaces

    before = {tuple(p): listed_tables(client, p) for p in NAMESPACES}
    with pytest.raises(lne.InvalidInputError, match="root1"):
        lifecycle.register_table(client, ["c", "again"], "root1.lance")
    with pytest.raises(lne.LanceNamespaceError, match="no-such-ns"):
        namespaces.declare_and_check(client, namespaces.declare_table_request(["no-such-ns"], "t"))
    sent = [e.op for e in client.wire_log]
    assert "register_table" not in sent and "declare_table" not in sent, sent
    assert {tuple(p): listed_tables(client, p) for p in NAMESPACES} == before
