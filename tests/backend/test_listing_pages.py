"""Listings read one page at a time: ``backend.spec.paging.Listing`` over real namespaces (local and
REST), and the local backend's version listing read from the ``_versions`` directory, checked
against pylance's own listing of the same table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest
from lance.namespace import DirectoryNamespace
from lance_namespace import (
    BatchCommitTablesRequest,
    BatchDeleteTableVersionsRequest,
    CommitTableOperation,
    CreateNamespaceRequest,
    CreateTableRequest,
    DeclareTableRequest,
    DeregisterTableRequest,
    DescribeTableRequest,
    DescribeTableVersionRequest,
    ListTablesRequest,
    ListTableVersionsRequest,
)
from lance_namespace.errors import TableVersionNotFoundError
from lance_namespace_urllib3_client.models import VersionRange

import backend
from backend.spec.paging import Listing, listing_page
from tests.support import ipc_stream_bytes


class Counting:
    """A real namespace's list method, counting its calls and the items it answered."""

    def __init__(self, method: Any, field: str):
        self.method = method
        self.field = field
        self.calls: list[Any] = []
        self.items = 0

    def __call__(self, request: Any) -> Any:
        self.calls.append(request)
        response = self.method(request)
        found = getattr(response, self.field, None)
        self.items += len(found) if isinstance(found, list) else int(found is not None)
        return response


def declare_many(ns: Any, namespace: list[str], count: int) -> list[str]:
    """``count`` declared tables ``t00000``... in one batch; their names, sorted."""
    names = [f"t{i:05d}" for i in range(count)]
    ns.create_namespace(CreateNamespaceRequest(id=namespace))
    ops = [
        CommitTableOperation(declare_table=DeclareTableRequest(id=[*namespace, n])) for n in names
    ]
    ns.batch_commit_tables(BatchCommitTablesRequest(operations=ops))
    return names


def test_a_page_of_tables_reads_one_bounded_request(catalog_root: Path) -> None:
    """3,000 declared tables (``tests.support.build_catalog``)."""
    ns = backend.connect(str(catalog_root))
    every = sorted(ns.list_tables(ListTablesRequest(id=["many"], include_declared=True)).tables)
    counting = Counting(ns.list_tables, "tables")
    listing = Listing(
        counting, ListTablesRequest(id=["many"], include_declared=True), "tables", batch=100
    )
    first = listing_page(listing, 1, 50)
    assert first.items == every[:50]
    assert (len(counting.calls), counting.items) == (1, 100)  # one request, 100 names
    assert first.count == 3 and not first.complete  # 2 pages read, a third may follow
    assert listing_page(listing, 2, 50).items == every[50:100]
    third = listing_page(listing, 3, 50)
    assert third.items == every[100:150]
    assert len(counting.calls) == 2 and counting.items <= 200
    assert [c.limit for c in counting.calls] == [100, 100]
    assert listing.read_all() == every  # to the end: one request without a limit
    assert counting.calls[-1].limit is None and listing.complete
    last = listing_page(listing, 10_000, 50)
    assert last.number == last.count == 60 and last.items == every[-50:]


def test_a_page_of_versions_reads_one_bounded_request(catalog_root: Path) -> None:
    """A table of 3,000 versions (``tests.support.build_catalog``)."""
    ns = backend.connect(str(catalog_root))
    counting = Counting(ns.list_table_versions, "versions")
    request = ListTableVersionsRequest(id=["hist", "t"], descending=True)
    listing = Listing(counting, request, "versions", batch=100, key=lambda v: v.version)
    page = listing_page(listing, 1, 50)
    assert [v.version for v in page.items] == list(range(3_000, 2_950, -1))
    assert (len(counting.calls), counting.items) == (1, 100)
    page = listing_page(listing, 3, 50)
    assert [v.version for v in page.items] == list(range(2_900, 2_850, -1))
    assert (len(counting.calls), counting.items) == (2, 200)
    assert counting.calls[1].page_token == "v2900"


def test_local_version_pages_are_pylances_listing(local_root: Path) -> None:
    """Every page (both orders, tokens followed) and DescribeTableVersion answer what pylance
    lists for the same table, also after versions were deleted (gaps)."""
    ns = backend.connect(str(local_root))
    pylance = DirectoryNamespace(root=str(local_root))
    tid = ["hist", "t"]
    ns.create_namespace(CreateNamespaceRequest(id=["hist"]))
    ns.create_table(CreateTableRequest(id=tid), ipc_stream_bytes(pa.table({"a": [1]})))
    ds = lance.dataset(ns.describe_table(DescribeTableRequest(id=tid)).location)
    for step in range(2_999):
        ds.update_config({"step": str(step)})

    def theirs() -> dict[int, dict[str, Any]]:
        out = {}
        for v in pylance.list_table_versions(ListTableVersionsRequest(id=tid)).versions:
            entry = v.model_dump()
            entry["manifest_path"] = "/" + entry["manifest_path"].lstrip("/")
            out[v.version] = entry
        return out

    def ours(descending: bool) -> list[dict[str, Any]]:
        out, token = [], None
        while True:
            resp = ns.list_table_versions(
                ListTableVersionsRequest(id=tid, descending=descending, limit=700, page_token=token)
            )
            assert len(resp.versions) <= 700
            out += [v.model_dump() for v in resp.versions]
            token = resp.page_token
            if not token:
                return out

    expected = theirs()
    assert len(expected) == 3_000
    for descending in (True, False):
        got = ours(descending)
        assert [e["version"] for e in got] == sorted(expected, reverse=descending)
        assert {e["version"]: e for e in got} == expected
    one = ns.describe_table_version(DescribeTableVersionRequest(id=tid, version=1234)).version
    assert one.model_dump() == expected[1234]
    ns.batch_delete_table_versions(
        BatchDeleteTableVersionsRequest(
            id=tid, ranges=[VersionRange(start_version=10, end_version=2_000)]
        )
    )
    expected = theirs()
    assert len(expected) == 1_010
    assert {e["version"]: e for e in ours(True)} == expected
    with pytest.raises(TableVersionNotFoundError):
        ns.describe_table_version(DescribeTableVersionRequest(id=tid, version=1234))


def test_listing_over_rest_reads_only_the_pages_asked_for(rest_server) -> None:
    """Over REST a page of tables is one request of ``limit`` names (the server's token
    followed for the next); pylance's adapter answers versions without a token: a listing
    reads the first page only, and going beyond it asks once more, without a limit."""
    local = backend.connect(str(rest_server.root))
    names = declare_many(local, ["many"], 300)
    local.create_table(CreateTableRequest(id=["many", "h"]), ipc_stream_bytes(pa.table({"a": [1]})))
    ds = lance.dataset(local.describe_table(DescribeTableRequest(id=["many", "h"])).location)
    for step in range(299):
        ds.update_config({"step": str(step)})
    names = sorted([*names, "h"])
    ns = backend.connect(rest_server.url)
    tables = Counting(ns.list_tables, "tables")
    listing = Listing(
        tables, ListTablesRequest(id=["many"], include_declared=True), "tables", batch=100
    )
    assert listing_page(listing, 1, 50).items == names[:50]
    assert (len(tables.calls), tables.items) == (1, 100)
    assert listing_page(listing, 3, 50).items == names[100:150]
    assert [(c.limit, c.page_token) for c in tables.calls] == [(100, None), (100, names[99])]
    sent = [e for e in ns.wire_log.entries() if e.op == "list_tables"]
    assert len(sent) == 2 and all("limit=100" in e.url for e in sent)

    versions = Counting(ns.list_table_versions, "versions")
    request = ListTableVersionsRequest(id=["many", "h"], descending=True)
    listing = Listing(versions, request, "versions", batch=100, key=lambda v: v.version)
    page = listing_page(listing, 1, 50)
    assert [v.version for v in page.items] == list(range(300, 250, -1)) and not page.complete
    assert (len(versions.calls), versions.items) == (1, 100)
    page = listing_page(listing, 3, 50)  # beyond the first answer: everything, once
    assert [v.version for v in page.items] == list(range(200, 150, -1))
    assert [c.limit for c in versions.calls] == [100, None]
    assert listing.complete and listing.known == 300


def test_version_stamp_changes_with_the_versions(
    local_root: Path, rest_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The local backend's stamp of a table's versions: none just after a change (a coarse
    file-system clock could hide the next one), then the same while nothing changes, new
    after a commit by another writer and after a version delete; none for a declared table
    nor over REST (the latest version is read then)."""
    from backend.local import namespace as local
    from backend.services import versions as vsv

    ns = backend.connect(str(local_root))
    tid = ["t"]
    ns.create_table(CreateTableRequest(id=tid), ipc_stream_bytes(pa.table({"a": [1]})))
    ds = lance.dataset(ns.describe_table(DescribeTableRequest(id=tid)).location)
    ds.update_config({"x": "1"})
    assert vsv.version_stamp(ns, tid) is None  # changed just now
    monkeypatch.setattr(local, "STAMP_SETTLE_NS", 0)
    first = vsv.version_stamp(ns, tid)
    assert first is not None and vsv.version_stamp(ns, tid) == first
    ds.update_config({"x": "2"})  # another writer's commit
    second = vsv.version_stamp(ns, tid)
    assert second != first
    ns.batch_delete_table_versions(
        BatchDeleteTableVersionsRequest(
            id=tid, ranges=[VersionRange(start_version=1, end_version=2)]
        )
    )
    assert vsv.version_stamp(ns, tid) not in (first, second)
    ns.declare_table(DeclareTableRequest(id=["d"]))
    assert vsv.version_stamp(ns, ["d"]) is None
    assert vsv.version_stamp(backend.connect(rest_server.url), tid) is None


def test_the_versions_directory_is_looked_up_once_until_the_catalog_moves(
    local_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stamp of a table's versions costs a ``stat``: the table's directory is looked up
    in the catalog (DescribeTable) once and kept while the catalog does not move. Another
    writer deregisters the table and makes it again elsewhere: the catalog moved, so the
    versions read are the new table's, not the old directory's (still on disk)."""
    from backend.local import namespace as local
    from backend.services import versions as vsv

    monkeypatch.setattr(local, "STAMP_SETTLE_NS", 0)
    described: list[list[str]] = []
    real = DirectoryNamespace.describe_table

    def counting(self, request):  # pylance's own catalog lookup, counted
        described.append(list(request.id))
        return real(self, request)

    monkeypatch.setattr(DirectoryNamespace, "describe_table", counting)
    ns, other = backend.connect(str(local_root)), backend.connect(str(local_root))
    tid = ["n", "t"]
    ns.create_namespace(CreateNamespaceRequest(id=["n"]))
    ns.create_table(CreateTableRequest(id=tid), ipc_stream_bytes(pa.table({"a": [1]})))
    ds = lance.dataset(ns.describe_table(DescribeTableRequest(id=tid)).location)
    ds.update_config({"x": "1"})
    ds.update_config({"x": "2"})
    first = vsv.version_stamp(ns, tid)
    before = len(described)
    assert vsv.version_stamp(ns, tid) == first
    ns.describe_table_version(DescribeTableVersionRequest(id=tid, version=2))
    assert len(described) == before  # kept: no catalog lookup
    other.deregister_table(DeregisterTableRequest(id=tid))  # the old directory stays
    other.create_table(CreateTableRequest(id=tid), ipc_stream_bytes(pa.table({"a": [2]})))
    listed = ns.list_table_versions(ListTableVersionsRequest(id=tid)).versions
    assert [int(v.version) for v in listed] == [1]
    assert vsv.version_stamp(ns, tid) != first
    with pytest.raises(TableVersionNotFoundError):
        ns.describe_table_version(DescribeTableVersionRequest(id=tid, version=2))


def test_a_restore_or_a_tag_checks_its_version_alone(ns) -> None:
    """Restoring a version or tagging one asks for that version (DescribeTableVersion), not
    the table's whole listing; a version that does not exist is still refused."""
    from lance_namespace.errors import TableVersionNotFoundError

    from backend.services import restore as restoresv
    from backend.services import tags as tagsv

    ns.create_namespace(CreateNamespaceRequest(id=["h"]))
    ns.create_table(CreateTableRequest(id=["h", "t"]), ipc_stream_bytes(pa.table({"a": [1]})))
    ds = lance.dataset(ns.describe_table(DescribeTableRequest(id=["h", "t"])).location)
    for step in range(5):
        ds.update_config({"step": str(step)})
    listed = Counting(ns.list_table_versions, "versions")
    described = Counting(ns.describe_table_version, "version")
    ns.list_table_versions = listed  # type: ignore[method-assign]
    ns.describe_table_version = described  # type: ignore[method-assign]
    tagsv.create_tag(ns, ["h", "t"], "gold", 2)
    restoresv.restore_version(ns, ["h", "t"], 3)
    assert listed.calls == [] and [c.version for c in described.calls] == [2, 3]
    with pytest.raises(TableVersionNotFoundError):
        tagsv.create_tag(ns, ["h", "t"], "lost", 40)
    latest = ns.describe_table(DescribeTableRequest(id=["h", "t"], load_detailed_metadata=True))
    assert latest.version == 7  # 6 versions, then the restore
