"""Table and namespace lifecycle (backend.services.lifecycle) on both real backends: cleanup by
policy, deleting version ranges without a dangling tag, drop vs deregister, rename, schema
metadata, drop namespace RESTRICT and CASCADE; on REST, the clear refusals of what the server
does not implement."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import lance
import lance_namespace as ln
import pytest
from lance_namespace import (
    BatchDeleteTableVersionsRequest,
    CreateNamespaceRequest,
    DeclareTableRequest,
    ListNamespacesRequest,
    ListTablesRequest,
    TableExistsRequest,
)
from lance_namespace.errors import (
    InvalidInputError,
    LanceNamespaceError,
    NamespaceNotEmptyError,
    TableAlreadyExistsError,
    TableNotFoundError,
    UnsupportedOperationError,
)
from lance_namespace_urllib3_client.models import VersionRange

import backend
from backend.rules import batch_rules, version_ranges
from backend.services import branches
from backend.services import lifecycle as lc
from backend.services import tags as tagsv
from backend.services import versions as vsv
from backend.services.versions import list_versions
from backend.spec import catalog_views
from tests.support import (
    batch,
    create_table,
    four_versions,
    make_table,
    op_delete,
    row_count,
    table_location,
    version_numbers,
    with_versions,
)


def exists(ns, table_id) -> bool:
    try:
        ns.table_exists(TableExistsRequest(id=table_id))
    except TableNotFoundError:
        return False
    return True


# -- restore --------------------------------------------------------------------------------------


# -- tags -----------------------------------------------------------------------------------------


# -- cleanup by policy ----------------------------------------------------------------------------


def test_cleanup_keep_last_never_takes_latest_or_tagged(ns, table) -> None:
    tagsv.create_tag(ns, table, "keep-me", 1)
    plan = lc.cleanup_plan(ns, table, keep_last=2)
    assert plan.delete == [2] and plan.keep == [1, 3, 4]
    assert plan.protected == {1: ["keep-me"]}
    assert version_numbers(ns, table) == [1, 2, 3, 4]  # a dry run deletes nothing
    lc.run_cleanup(ns, plan)
    assert version_numbers(ns, table) == [1, 3, 4]
    assert row_count(ns, table) == 12


def test_cleanup_by_age(ns, table) -> None:
    stamps = list_versions(ns, table).set_index("version")["timestamp"]
    # "now" one hour after v3 was written: v1..v3 are older than 30 minutes, v4 is the latest.
    now = stamps[3].to_pydatetime() + timedelta(hours=1)
    plan = lc.cleanup_plan(ns, table, older_than=timedelta(minutes=30), now=now)
    assert plan.delete == [1, 2, 3]
    young = lc.cleanup_plan(ns, table, older_than=timedelta(days=1), now=datetime.now(UTC))
    assert young.delete == []
    both = lc.cleanup_plan(ns, table, keep_last=3, older_than=timedelta(minutes=30), now=now)
    assert both.delete == [1]


def test_cleanup_refuses_when_a_listed_version_was_tagged_since(ns, table) -> None:
    plan = lc.cleanup_plan(ns, table, keep_last=1)
    assert plan.delete == [1, 2, 3]
    tagsv.create_tag(ns, table, "late", 2)
    with pytest.raises(LanceNamespaceError, match="tagged since the dry run"):
        lc.run_cleanup(ns, plan)
    assert version_numbers(ns, table) == [1, 2, 3, 4]


def _files(root: Path) -> dict[str, int]:
    """Every file under ``root`` (relative path: size in bytes)."""
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def _data_files(location: Path, version: int) -> set[str]:
    """The data files (paths under the table) version ``version`` reads, from its manifest."""
    ds = lance.dataset(str(location), version=version)
    return {f"data/{d.path}" for frag in ds.get_fragments() for d in frag.data_files()}


def test_cleanup_removes_the_files_only_the_deleted_versions_needed(tmp_path: Path) -> None:
    """The console's cleanup by policy removes the deleted versions' manifests and the data
    files no version left reads (as lance's ``cleanup_old_versions`` does); what it says it
    freed is what is gone on disk. Another table's files, the kept (latest, tagged) versions'
    files and a fresh file no version refers to yet (a write in progress) stay."""
    root = tmp_path / "local-root"
    root.mkdir()
    ns = backend.connect(str(root))
    ns.create_namespace(CreateNamespaceRequest(id=["ns"]))
    T = ["ns", "t"]
    create_table(ns, T, make_table(3))
    loc = table_location(ns, T)
    for i in range(1, 4):  # each version rewrites the table: its own data file
        lance.write_dataset(make_table(3, start=10 * i), str(loc), mode="overwrite")
    create_table(ns, ["ns", "other"], make_table(5))
    tagsv.create_tag(ns, T, "keep-me", 2)
    pending = loc / "data" / "in-progress.lance"  # a write not committed yet
    pending.write_bytes(b"x" * 100)
    reads = {v: _data_files(loc, v) for v in (1, 2, 3, 4)}
    plan = lc.cleanup_plan(ns, T, keep_last=1)
    assert plan.delete == [1, 3]
    before = _files(root)

    done = lc.run_cleanup(ns, plan)

    after = _files(root)
    gone = set(before) - set(after)
    table_dir = str(loc.relative_to(root))
    gone_in_table = {g.removeprefix(table_dir + "/") for g in gone}
    assert {g for g in gone_in_table if g.startswith("data/")} == (reads[1] | reads[3]) - (
        reads[2] | reads[4]
    )
    assert all(g.startswith(table_dir + "/") for g in gone)  # nothing of another table
    assert version_numbers(ns, T) == [2, 4]
    assert not any((root / table_dir / f).exists() for f in reads[1] | reads[3])
    assert all((root / table_dir / f).exists() for f in reads[2] | reads[4])
    assert pending.exists()
    assert done.deleted == [1, 3]
    assert done.bytes_freed == sum(before[g] for g in gone)
    assert done.files_removed == len(gone)
    assert row_count(ns, T) == 3 and row_count(ns, ["ns", "other"]) == 5
    assert lance.dataset(str(loc), version="keep-me").count_rows() == 3


def test_cleanup_keeps_and_says_a_version_a_branch_starts_from(local_root: Path) -> None:
    """Lance keeps a version a branch starts from (the branch reads its files): the cleanup
    says it deleted the others and kept that one, and the branch still reads."""
    ns = backend.connect(str(local_root))
    T = four_versions(ns)
    branches.create_branch(ns, T, "dev", from_version=2)
    plan = lc.cleanup_plan(ns, T, keep_last=1)
    assert plan.delete == [1, 2, 3]
    done = lc.run_cleanup(ns, plan)
    assert (done.deleted, done.kept) == ([1, 3], [2])
    assert version_numbers(ns, T) == [2, 4]
    assert ns.open_dataset(T).checkout_version(("dev", None)).count_rows() == 6


@pytest.mark.parametrize(
    ("request_", "match"),
    [
        ({"versions": [1], "older_than_days": 1}, "not both"),
        ({"versions": []}, "list of version numbers"),
        ({"versions": [0]}, "version number"),
        ({"versions": [4]}, "latest"),
        ({"versions": [1, 2]}, "keep-me"),
    ],
)
def test_a_cleanup_of_listed_versions_refuses_bad_input(local_root: Path, request_, match) -> None:
    ns = backend.connect(str(local_root))
    T = four_versions(ns)
    tagsv.create_tag(ns, T, "keep-me", 2)
    before = sorted(str(p) for p in local_root.rglob("*"))
    with pytest.raises(InvalidInputError, match=match):
        ns.cleanup_old_versions({"id": T, **request_})
    assert sorted(str(p) for p in local_root.rglob("*")) == before


def test_cleanup_over_rest_deletes_the_version_records(ns, backend_kind, table) -> None:
    """Over REST the cleanup is BatchDeleteTableVersions: the versions go, and what it freed
    is not known (the server's to remove); on the local backend it is."""
    done = lc.run_cleanup(ns, lc.cleanup_plan(ns, table, keep_last=2))
    assert done.deleted == [1, 2] and version_numbers(ns, table) == [3, 4]
    assert (done.bytes_freed is None) == (backend_kind == "rest")


@pytest.mark.parametrize("kwargs", [{}, {"keep_last": 0}, {"older_than": timedelta(-1)}])
def test_cleanup_policy_must_make_sense(ns, table, kwargs) -> None:
    with pytest.raises(InvalidInputError):
        lc.cleanup_plan(ns, table, **kwargs)


# -- delete by range: never a dangling tag --------------------------------------------------------


def test_range_delete_of_a_tagged_version_is_refused_naming_the_tag(ns, table) -> None:
    tagsv.create_tag(ns, table, "baseline", 2)
    with pytest.raises(InvalidInputError, match=r"v2 \(baseline\)") as err:
        vsv.delete_versions(ns, table, version_ranges.parse("1-3"))
    assert "Nothing deleted" in str(err.value)
    assert version_numbers(ns, table) == [1, 2, 3, 4]
    assert tagsv.tag_version(ns, table, "baseline") == 2


def test_range_delete_with_delete_tags_takes_the_tags_too(ns, table) -> None:
    tagsv.create_tag(ns, table, "baseline", 2)
    tagsv.create_tag(ns, table, "also", 2)
    tagsv.create_tag(ns, table, "kept", 4)
    done = vsv.delete_versions(ns, table, version_ranges.parse("2-3"), delete_tags=True)
    assert done.deleted_count == 2 and done.deleted_tags == {2: ["also", "baseline"]}
    assert version_numbers(ns, table) == [1, 4]
    tags = tagsv.list_tags(ns, table)
    assert list(tags["tag"]) == ["kept"] and list(tags["version"]) == [4]


def test_range_delete_refusal_of_the_latest_keeps_the_tags(ns, table) -> None:
    """The version rules are checked before any tag is deleted."""
    tagsv.create_tag(ns, table, "baseline", 2)
    with pytest.raises(InvalidInputError, match="latest"):
        vsv.delete_versions(ns, table, version_ranges.parse("2-4"), delete_tags=True)
    assert list(tagsv.list_tags(ns, table)["tag"]) == ["baseline"]
    assert version_numbers(ns, table) == [1, 2, 3, 4]


def _tag_map(ns, table_id) -> dict[str, int]:
    tags = tagsv.list_tags(ns, table_id)
    return dict(zip(tags["tag"], (int(v) for v in tags["version"]), strict=True))


def _wire_counts(ns, backend_kind: str) -> dict[str, int] | None:
    return dict(ns.wire_log.counts()) if backend_kind == "rest" else None


def test_backend_refuses_a_range_covering_a_tagged_version(ns, table, backend_kind) -> None:
    """The spec call itself, on both backends: a range covering a tagged version is refused
    naming the tag and its version, and nothing is deleted (over REST: nothing sent but one
    DescribeTable and one ListTableTags)."""
    tagsv.create_tag(ns, table, "baseline", 2)
    tagsv.create_tag(ns, table, "origin", 1)
    request = BatchDeleteTableVersionsRequest(
        id=table, ranges=[VersionRange(start_version=2, end_version=4)]
    )
    if backend_kind == "rest":
        ns.wire_log.clear()
    with pytest.raises(InvalidInputError, match=r"v2 \(baseline\)") as err:
        ns.batch_delete_table_versions(request)
    assert "origin" not in str(err.value) and "Nothing deleted" in str(err.value)
    if backend_kind == "rest":
        assert _wire_counts(ns, backend_kind) == {"describe_table": 1, "list_table_tags": 1}
    assert version_numbers(ns, table) == [1, 2, 3, 4]
    assert _tag_map(ns, table) == {"baseline": 2, "origin": 1}
    # Through the latest version (allowed) the tag rule still holds.
    request.ranges = [VersionRange(start_version=1, end_version=-1)]
    with pytest.raises(InvalidInputError, match=r"v1 \(origin\), v2 \(baseline\)"):
        ns.batch_delete_table_versions(request, allow_latest=True)
    assert version_numbers(ns, table) == [1, 2, 3, 4]
    assert _tag_map(ns, table) == {"baseline": 2, "origin": 1}


def test_backend_deletes_the_covered_tags_with_delete_tags(ns, table, backend_kind) -> None:
    tagsv.create_tag(ns, table, "baseline", 2)
    tagsv.create_tag(ns, table, "also", 3)
    tagsv.create_tag(ns, table, "origin", 1)
    tagsv.create_tag(ns, table, "latest-one", 4)
    request = BatchDeleteTableVersionsRequest(
        id=table, ranges=[VersionRange(start_version=2, end_version=4)]
    )
    if backend_kind == "rest":
        ns.wire_log.clear()
    assert ns.batch_delete_table_versions(request, delete_tags=True).deleted_count == 2
    if backend_kind == "rest":
        assert _wire_counts(ns, backend_kind) == {
            "describe_table": 1,
            "list_table_tags": 1,
            "delete_table_tag": 2,
            "batch_delete_table_versions": 1,
        }
    assert version_numbers(ns, table) == [1, 4]
    assert _tag_map(ns, table) == {"origin": 1, "latest-one": 4}
    assert row_count(ns, table) == 12


def test_batch_delete_of_a_tagged_version_is_refused(tmp_path: Path) -> None:
    """BatchCommitTables' DeleteTableVersions follows the same rule (``batch_rules``)."""
    ns = backend.connect(str(tmp_path))
    table = four_versions(ns)
    tagsv.create_tag(ns, table, "baseline", 3)
    with pytest.raises(InvalidInputError, match=r"operation 1: .*v3 \(baseline\)"):
        ns.batch_commit_tables(batch(op_delete(table, (2, 4))))
    assert version_numbers(ns, table) == [1, 2, 3, 4]
    ns.batch_commit_tables(batch(op_delete(table, (1, 3))))  # v1, v2: untagged
    assert version_numbers(ns, table) == [3, 4]
    assert tagsv.tag_version(ns, table, "baseline") == 3


def test_batch_builder_lists_the_tag_problem(ns, table) -> None:
    tagsv.create_tag(ns, table, "baseline", 2)
    problems = batch_rules.check_batch(
        batch(op_delete(table, (2, 3))), catalog_views.NamespaceView(ns)
    )
    assert batch_rules.has_errors(problems) and "baseline" in str(problems[0])


# -- drop vs deregister ---------------------------------------------------------------------------


def test_drop_deletes_data_deregister_keeps_it(ns, table, backend_kind, tmp_path: Path) -> None:
    create_table(ns, ["ns", "kept"], make_table(5))
    kept_dir = table_location(ns, ["ns", "kept"])
    dropped_dir = table_location(ns, table)
    preview = lc.drop_preview(ns, table)
    assert preview.latest == 4 and not preview.declared_only and preview.location
    if backend_kind == "local":
        assert preview.files and preview.files > 4 and preview.bytes and preview.bytes > 0
    lc.deregister_table(ns, ["ns", "kept"])
    lc.drop_table(ns, table)
    assert not exists(ns, table) and not exists(ns, ["ns", "kept"])
    assert kept_dir.is_dir() and any(kept_dir.iterdir())  # deregister: the data stays
    assert not dropped_dir.exists() or not any(dropped_dir.rglob("*.lance"))


def test_deregister_rereads_the_listing(ns, backend_kind) -> None:
    """pylance's directory namespace finds root-level tables by their directories: after
    DeregisterTable its server (and pylance 14 underneath the local backend) still lists one,
    and the console says so; inside a namespace the name is gone."""
    ns.create_namespace(CreateNamespaceRequest(id=["ns"]))
    create_table(ns, ["top"], make_table(2))
    create_table(ns, ["ns", "inner"], make_table(2))
    done = lc.deregister_and_check(ns, ["top"])
    listed = "top" in ns.list_tables(ListTablesRequest(id=[])).tables
    assert done.still_listed is listed
    if backend_kind == "rest":
        assert listed  # what the issue reports of pylance's server, checked independently
    assert lc.deregister_and_check(ns, ["ns", "inner"]).still_listed is False
    assert ns.list_tables(ListTablesRequest(id=["ns"])).tables == []


def test_drop_preview_of_a_declared_table(ns) -> None:
    ns.create_namespace(CreateNamespaceRequest(id=["ns"]))
    ns.declare_table(DeclareTableRequest(id=["ns", "d"]))
    preview = lc.drop_preview(ns, ["ns", "d"])
    assert preview.declared_only and preview.latest is None


# -- rename ---------------------------------------------------------------------------------------


def test_rename_local_same_and_other_namespace(tmp_path: Path) -> None:
    ns = backend.connect(str(tmp_path))
    for n in (["a"], ["b"]):
        ns.create_namespace(CreateNamespaceRequest(id=n))
    with_versions(ns, ["a", "t"], 2)
    ns.declare_table(DeclareTableRequest(id=["a", "d"], properties={"owner": "ops"}))
    lc.rename_table(ns, ["a", "t"], "t2")
    assert not exists(ns, ["a", "t"]) and row_count(ns, ["a", "t2"]) == 6
    assert version_numbers(ns, ["a", "t2"]) == [1, 2]  # history kept
    lc.rename_table(ns, ["a", "t2"], "moved", ["b"])
    assert ns.list_tables(ListTablesRequest(id=["b"])).tables == ["moved"]
    lc.rename_table(ns, ["a", "d"], "d2")  # a declared table keeps its properties
    assert ns.describe_table({"id": ["a", "d2"]}).properties == {"owner": "ops"}
    # the old name is free again
    create_table(ns, ["a", "t"], make_table(1))
    assert row_count(ns, ["a", "t"]) == 1 and row_count(ns, ["b", "moved"]) == 6


@pytest.mark.parametrize(
    ("source", "name", "namespace", "error"),
    [
        (["a", "t"], "u", ["b"], TableAlreadyExistsError),
        (["a", "missing"], "z", None, TableNotFoundError),
        (["a", "t"], "bad/name", None, InvalidInputError),
        (["a", "t"], "t", None, InvalidInputError),
        (["a", "t"], "z", ["nowhere"], LanceNamespaceError),
    ],
)
def test_rename_refusals_change_nothing(tmp_path: Path, source, name, namespace, error) -> None:
    ns = backend.connect(str(tmp_path))
    for n in (["a"], ["b"]):
        ns.create_namespace(CreateNamespaceRequest(id=n))
    create_table(ns, ["a", "t"], make_table(2))
    create_table(ns, ["b", "u"], make_table(3))
    with pytest.raises(error):
        lc.rename_table(ns, source, name, namespace)
    assert ns.list_tables(ListTablesRequest(id=["a"])).tables == ["t"]
    assert ns.list_tables(ListTablesRequest(id=["b"])).tables == ["u"]


def test_rename_over_rest_is_refused_up_front(rest_server) -> None:
    """With the server profile of pylance's RestAdapter, nothing is sent to find out, and a
    rename is refused before anything is sent."""
    client = backend.connect(rest_server.url, server_profile="lance-dir")
    client.create_namespace(CreateNamespaceRequest(id=["a"]))
    create_table(client, ["a", "t"], make_table(2))
    client.wire_log.clear()
    caps = backend.capabilities(client)
    assert caps.rename is False  # pylance's RestAdapter does not implement RenameTable
    assert client.wire_log.total() == 0
    with pytest.raises(UnsupportedOperationError, match="does not implement RenameTable"):
        lc.rename_table(client, ["a", "t"], "u", caps=caps)
    assert client.wire_log.total() == 0  # refused before anything was sent
    assert client.list_tables(ListTablesRequest(id=["a"])).tables == ["t"]


def test_rename_support_unknown_over_rest_is_learned_from_the_refusal(rest_server) -> None:
    """Without a profile it is unknown: the rename is sent, the server's refusal says
    unsupported (nothing renamed), and from then on the console knows."""
    client = backend.connect(rest_server.url)
    client.create_namespace(CreateNamespaceRequest(id=["a"]))
    create_table(client, ["a", "t"], make_table(2))
    assert backend.capabilities(client).rename is None
    with pytest.raises(UnsupportedOperationError):
        lc.rename_table(client, ["a", "t"], "u", caps=backend.capabilities(client))
    assert client.list_tables(ListTablesRequest(id=["a"])).tables == ["t"]
    caps = backend.capabilities(client)
    assert caps.rename is False
    client.wire_log.clear()
    with pytest.raises(UnsupportedOperationError, match="does not implement RenameTable"):
        lc.rename_table(client, ["a", "t"], "u", caps=caps)
    assert client.wire_log.total() == 0


def test_local_capabilities_offer_rename_and_cascade(tmp_path: Path) -> None:
    caps = backend.capabilities(backend.connect(str(tmp_path)))
    assert caps.rename is True and caps.drop_cascade is True


# -- schema metadata ------------------------------------------------------------------------------


def test_schema_metadata_edit(ns, table) -> None:
    after = lc.update_schema_metadata(ns, table, {"owner": "data-team", "tier": "gold"})
    assert after.get("owner") == "data-team" and after.get("tier") == "gold"
    assert lc.schema_metadata(ns, table).get("tier") == "gold"


def test_schema_metadata_caps_apply(ns, table) -> None:
    with pytest.raises(InvalidInputError):
        lc.update_schema_metadata(ns, table, {"k": "x" * (64 * 1024 + 1)})


def test_remove_schema_metadata_keys(ns, table, backend_kind: str, tmp_path) -> None:
    from lance_namespace.errors import PermissionDeniedError

    from backend import access, audit
    from backend.gate import Actor, gate

    lc.update_schema_metadata(ns, table, {"owner": "ops", "tier": "gold", "keep": "yes"})
    latest = max(version_numbers(ns, table))
    log = audit.AuditLog(tmp_path / "audit")
    editor = gate(ns, actor=Actor("ed@example.com", access.EDITOR), connection="lab", log=log)
    if backend_kind == "rest":
        # Over REST no operation removes a key: refused before anything is sent.
        with pytest.raises(UnsupportedOperationError) as err:
            lc.remove_schema_metadata_keys(editor, table, ["owner"])
        assert str(err.value) == lc.REMOVE_METADATA_UNSUPPORTED
        assert lc.remove_metadata_problem(backend.capabilities(ns)) is not None
        assert lc.schema_metadata(ns, table) == {"owner": "ops", "tier": "gold", "keep": "yes"}
        assert max(version_numbers(ns, table)) == latest and log.entries() == []
        return
    assert lc.remove_metadata_problem(backend.capabilities(ns)) is None
    after = lc.remove_schema_metadata_keys(editor, table, ["owner", "tier"])
    assert after == {"keep": "yes"} == lc.schema_metadata(ns, table)
    assert (
        max(version_numbers(ns, table)) == latest + 1
    )  # a new version; the old one keeps its keys
    old = ns.open_dataset(table, latest).schema.metadata
    assert old[b"owner"] == b"ops"
    (entry,) = log.entries()
    assert (entry.operation, entry.user, entry.outcome) == (
        "remove_table_schema_metadata_keys",
        "ed@example.com",
        audit.OK,
    )
    assert entry.ids == table and entry.request["keys"] == ["owner", "tier"]

    # A key the table does not have: nothing changed (the others named are kept too).
    with pytest.raises(InvalidInputError, match="no schema-metadata key owner"):
        lc.remove_schema_metadata_keys(editor, table, ["keep", "owner"])
    assert lc.schema_metadata(ns, table) == {"keep": "yes"}
    assert max(version_numbers(ns, table)) == latest + 1
    with pytest.raises(InvalidInputError):
        lc.remove_schema_metadata_keys(editor, table, [])

    # The gate's role check and read-only launches apply as to every write.
    viewer = gate(ns, actor=Actor("vi@example.com", access.VIEWER), connection="lab", log=log)
    with pytest.raises(PermissionDeniedError):
        lc.remove_schema_metadata_keys(viewer, table, ["keep"])
    locked = gate(ns, read_only="read-only launch", log=log)
    with pytest.raises(PermissionDeniedError, match="read-only launch"):
        lc.remove_schema_metadata_keys(locked, table, ["keep"])
    assert lc.schema_metadata(ns, table) == {"keep": "yes"}
    assert [e.outcome for e in log.entries()] == [
        audit.OK,
        audit.FAILED,  # the missing key: found by lance's write, nothing changed
        audit.REFUSED,  # the viewer's role
        audit.REFUSED,  # the read-only launch
    ]


# -- namespaces -----------------------------------------------------------------------------------


def _tree(ns) -> None:
    for n in (["top"], ["top", "mid"], ["top", "mid", "low"], ["other"]):
        ns.create_namespace(CreateNamespaceRequest(id=n))
    create_table(ns, ["top", "t1"], make_table(2))
    create_table(ns, ["top", "mid", "t2"], make_table(2))
    ns.declare_table(DeclareTableRequest(id=["top", "mid", "low", "d"]))
    create_table(ns, ["other", "keep"], make_table(2))


def test_namespace_children_recursive(ns) -> None:
    _tree(ns)
    kids = lc.namespace_children(ns, ["top"])
    assert kids.namespaces == [["top", "mid"], ["top", "mid", "low"]]
    assert sorted(kids.tables) == [["top", "mid", "low", "d"], ["top", "mid", "t2"], ["top", "t1"]]


def test_namespace_children_stop_at_their_limit(ns) -> None:
    _tree(ns)
    kids = lc.namespace_children(ns, ["top"], limit=3)
    assert kids.capped and len(kids.tables) + len(kids.namespaces) == 3
    assert kids.count("table") == f"at least {len(kids.tables)} table" + (
        "s" if len(kids.tables) != 1 else ""
    )
    assert kids.describe("$", limit=2).endswith(" and at least 1 more")
    whole = lc.namespace_children(ns, ["top"], limit=5)
    assert not whole.capped and whole.count("table") == "3 tables"


def test_a_server_listing_a_namespace_under_itself_is_not_walked_without_end() -> None:
    """A server that lists the same child under every namespace made the listing of what a
    namespace holds (the drop panel, RESTRICT's check) walk until the id length stopped it,
    some 2^16 requests with two children a level: it stops at its limit now."""
    import httpx

    from backend.rest.client import RestNamespaceClient

    requests: list[str] = []

    def server(request: httpx.Request) -> httpx.Response:
        requests.append(request.url.path)
        if request.url.path.endswith("/table/list"):
            return httpx.Response(200, json={"tables": ["t", "t"]})
        return httpx.Response(200, json={"namespaces": ["a", "b"]})

    client = RestNamespaceClient(
        "http://ns.test", transport=httpx.MockTransport(server), max_retries=0
    )
    kids = lc.namespace_children(client, ["top"], limit=50)
    assert kids.capped and len(kids.tables) + len(kids.namespaces) == 50
    assert kids.tables[0] == ["top", "t"]  # a name given twice is listed once
    assert len(requests) < 60
    with pytest.raises(NamespaceNotEmptyError, match="and more"):
        lc.drop_namespace(client, ["top"])
    assert len(requests) < 100
    assert not any(p.endswith("/drop") for p in requests)


def test_drop_restrict_lists_children_and_changes_nothing(ns) -> None:
    _tree(ns)
    with pytest.raises(NamespaceNotEmptyError) as err:
        lc.drop_namespace(ns, ["top"])
    text = str(err.value)
    assert "table top$t1" in text and "namespace top$mid" in text
    assert sorted(ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces) == ["other", "top"]
    ns.create_namespace(CreateNamespaceRequest(id=["empty"]))
    lc.drop_namespace(ns, ["empty"])
    assert "empty" not in ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces


def test_drop_cascade_local_removes_everything_under_it(tmp_path: Path) -> None:
    ns = backend.connect(str(tmp_path))
    _tree(ns)
    dirs = [table_location(ns, t) for t in (["top", "t1"], ["top", "mid", "t2"])]
    kept = table_location(ns, ["other", "keep"])
    lc.drop_namespace(ns, ["top"], cascade=True)
    assert ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces == ["other"]
    assert not any(d.exists() for d in dirs)  # the dropped tables' data is deleted
    assert kept.is_dir() and row_count(ns, ["other", "keep"]) == 2
    assert not list((tmp_path / "_console" / "batch" / "pending").glob("*"))
    # the names are free again
    ns.create_namespace(CreateNamespaceRequest(id=["top"]))
    assert ns.list_tables(ListTablesRequest(id=["top"])).tables == []


def test_drop_cascade_over_rest_is_a_clear_refusal(rest_server) -> None:
    client = backend.connect(rest_server.url)
    _tree(client)
    with pytest.raises(UnsupportedOperationError, match="does not implement CASCADE"):
        lc.drop_namespace(client, ["top"], cascade=True)
    assert sorted(client.list_namespaces(ListNamespacesRequest(id=[])).namespaces) == [
        "other",
        "top",
    ]
    assert row_count(client, ["top", "t1"]) == 2


def test_drop_cascade_of_an_empty_namespace_works_everywhere(ns) -> None:
    ns.create_namespace(CreateNamespaceRequest(id=["solo"]))
    lc.drop_namespace(ns, ["solo"], cascade=True)
    assert "solo" not in ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces


def test_cleanup_plan_spans_merge_runs() -> None:
    """A policy deleting thousands of versions is a few spans, not one per version (the
    spec request caps ranges at 1000)."""
    plan = lc.CleanupPlan(["ns", "t"], delete=[*range(1, 3001), 3005], keep=[3002], latest=3006)
    assert [str(s) for s in plan.spans] == ["1-3000", "3005"]
    assert len(plan.request().ranges) == 2


def test_a_deregistered_table_is_registered_again(ns, backend_kind, tmp_path: Path) -> None:
    """DeregisterTable keeps the data; RegisterTable at the location it answered puts the
    table back (same rows, same versions): the local backend takes the location as
    DeregisterTable answered it (pylance's DirectoryNamespace registers paths relative to its
    root: the location rule checks it, then it is made relative); pylance's REST server
    takes the path relative to its root only. The location rule still holds."""
    ns.create_namespace(CreateNamespaceRequest(id=["ns"]))
    create_table(ns, ["ns", "t"], make_table(5))
    before = version_numbers(ns, ["ns", "t"])
    done = lc.deregister_and_check(ns, ["ns", "t"])
    location = done.response.location
    assert location and ns.list_tables(ListTablesRequest(id=["ns"])).tables == []
    assert location in lc.register_again_hint("ns › t", location)

    given = location
    if backend_kind == "rest":  # pylance's server refuses absolute locations
        given = Path(location.removeprefix("file://")).relative_to(tmp_path / "rest-root")
        given = given.as_posix()
    response = lc.register_table(ns, ["ns", "t"], given)
    assert ns.list_tables(ListTablesRequest(id=["ns"])).tables == ["t"]
    assert row_count(ns, ["ns", "t"]) == 5 and version_numbers(ns, ["ns", "t"]) == before
    assert response.location is None or response.location.rstrip("/").endswith(
        location.rstrip("/").rsplit("/", 1)[-1]
    )
    # the same data under a second name: another table's directory (the local backend
    # refuses the write; over REST the write is the server's to judge, pylance's accepts it,
    # and the explicit preflight refuses it)
    if backend_kind == "local":
        with pytest.raises(InvalidInputError, match="another table"):
            lc.register_table(ns, ["ns", "again"], given)
    again = ln.RegisterTableRequest(id=["ns", "again"], location=given)
    with pytest.raises(InvalidInputError, match="another table"):
        backend.preflight(ns, again, raise_first=True)
    assert ns.list_tables(ListTablesRequest(id=["ns"])).tables == ["t"]
    with pytest.raises(InvalidInputError, match="Enter the location"):
        lc.register_table(ns, ["ns", "x"], "  ")
    if backend_kind == "local":
        with pytest.raises(InvalidInputError, match="outside the namespace root"):
            lc.register_table(ns, ["ns", "y"], "/etc")
