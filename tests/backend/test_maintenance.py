"""Maintenance plans and policies (backend.services.maintenance) on crafted tables: the plan's
figures and decisions against pylance's own fragment statistics computed here, the run's
result (fragments after compaction, unindexed rows after optimize, versions after cleanup)
read back with lance, policies saved and read back by another connection on a local root, an
S3 root (moto) and over REST, the gate (roles, read-only, audit) and the failures."""

from __future__ import annotations

import json
import os
import shutil
from datetime import timedelta
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from lance.optimize import Compaction
from lance_namespace import CreateNamespaceRequest, DropTableRequest
from lance_namespace.errors import (
    InvalidInputError,
    NamespaceNotFoundError,
    PermissionDeniedError,
    TableNotFoundError,
    UnsupportedOperationError,
)

import backend
from backend import access, audit, capabilities
from backend.gate import Actor, gate
from backend.services import health
from backend.services import maintenance as mt
from backend.services.maintenance import store
from backend.services.tuning.optimize import MAINTENANCE_UNSUPPORTED, cleanup_old_versions
from backend.services.versions import VersionFacts
from tests.support import CountingTransactions, create_table, table_location, tree_digest

NS = ["a"]
SMALL_ROWS = 150  # the crafted policy's small fragment: under 150 rows
POLICY = {
    "kinds": {
        "compact": {"small_fragment_rows": SMALL_ROWS},
        "optimize": {},
        "cleanup": {"older_than_days": 0},
    }
}


def rows(start: int, n: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "text": pa.array([f"row {i}" for i in range(start, start + n)]),
        }
    )


def craft(ns) -> dict[str, Path]:
    """Five tables in namespace ``a``:

    * ``small``: five fragments of 100 rows (all small);
    * ``deleted``: one fragment of 400 rows, a quarter deleted;
    * ``indexed``: 400 rows with a BTREE index, then 40 rows it does not cover;
    * ``healthy``: 400 rows in one fragment, one version;
    * ``tagged``: 50 rows, then three appends of 300; version 2 tagged ``gold``.
    """
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    paths: dict[str, Path] = {}
    for name, first in (("small", 100), ("deleted", 400), ("indexed", 400), ("healthy", 400)):
        create_table(ns, [*NS, name], rows(0, first))
        paths[name] = table_location(ns, [*NS, name])
    for i in range(1, 5):
        lance.write_dataset(rows(100 * i, 100), str(paths["small"]), mode="append")
    lance.dataset(str(paths["deleted"])).delete("id < 100")
    indexed = lance.dataset(str(paths["indexed"]))
    indexed.create_scalar_index("id", "BTREE", name="id_idx")
    lance.write_dataset(rows(400, 40), str(paths["indexed"]), mode="append")
    create_table(ns, [*NS, "tagged"], rows(0, 50))
    paths["tagged"] = table_location(ns, [*NS, "tagged"])
    for i in range(3):
        lance.write_dataset(rows(50 + 300 * i, 300), str(paths["tagged"]), mode="append")
    lance.dataset(str(paths["tagged"])).tags.create("gold", 2)
    return paths


def folder_bytes(path: Path) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def lance_figures(path: Path, small_rows: int = SMALL_ROWS) -> dict:
    """The figures of the table at ``path``, from pylance directly (a fragment is small under
    ``small_rows`` physical rows)."""
    ds = lance.dataset(str(path))
    fragments = ds.get_fragments()
    physical = sum(f.physical_rows for f in fragments)
    deleted = sum(
        f.metadata.deletion_file.num_deleted_rows
        for f in fragments
        if f.metadata.deletion_file is not None
    )
    unindexed = [
        ds.stats.index_stats(ix.name)["num_unindexed_rows"]
        for ix in ds.describe_indices()
        if not ix.name.startswith("__")
    ]
    versions = {v["version"] for v in ds.versions()}
    tagged = {t["version"] for t in ds.tags.list().values()}
    plan = Compaction.plan(ds, {"target_rows_per_fragment": health.TARGET_ROWS_PER_FRAGMENT})
    return {
        "compaction_tasks": plan.num_tasks(),
        "fragments": len(fragments),
        "small": sum(f.physical_rows < small_rows for f in fragments),
        "deleted_share": deleted / physical,
        "rows": ds.count_rows(),
        "unindexed_share": max(unindexed) / ds.count_rows() if unindexed else None,
        "old_versions": len(versions - {ds.version} - tagged),
        "keep_versions": {ds.version} | tagged,
    }


def compacts(f: dict) -> bool:
    """The policy's compaction rule (20% small fragments and at least two, or 10% of the
    rows deleted, and lance's compaction plan has a task) on pylance's figures."""
    share = f["small"] / f["fragments"]
    wanted = (f["small"] >= 2 and share > 0.2) or f["deleted_share"] > 0.1
    return wanted and f["compaction_tasks"] > 0


def test_plan_figures_match_pylance_and_the_run_does_what_it_planned(
    local_root: Path, tmp_path: Path
) -> None:
    ns = backend.connect(str(local_root))
    paths = craft(ns)
    expected = {name: lance_figures(path) for name, path in paths.items()}
    before = tree_digest(local_root)
    plan = mt.plan(ns, NS, POLICY)
    assert tree_digest(local_root) == before  # a dry run changes nothing
    assert plan.source == "given" and plan.backend == "local" and not plan.errors
    figures = {t.table_id[-1]: t for t in plan.tables}
    assert sorted(figures) == sorted(paths)
    for name, want in expected.items():
        got = figures[name]
        assert got.fragments == want["fragments"], name
        assert got.small_fragments == want["small"], name
        assert got.small_share == pytest.approx(want["small"] / want["fragments"]), name
        assert got.deleted_share == pytest.approx(want["deleted_share"]), name
        assert got.rows == want["rows"], name
        if want["unindexed_share"] is None:
            assert got.unindexed_share is None, name
        else:
            assert got.unindexed_share == pytest.approx(want["unindexed_share"]), name
        assert got.old_versions == want["old_versions"], name
        # the bytes a cleanup frees: a real cleanup of a copy of the table
        copy = Path(shutil.copytree(paths[name], tmp_path / f"copy-{name}"))
        lance.dataset(str(copy)).cleanup_old_versions(
            older_than=timedelta(0), error_if_tagged_old_versions=False
        )
        assert got.old_bytes == folder_bytes(paths[name]) - folder_bytes(copy), name

    # the decisions, by the policy's definition applied to pylance's figures
    want_run = (
        {("compact", n) for n, f in expected.items() if compacts(f)}
        | {("optimize", n) for n, f in expected.items() if (f["unindexed_share"] or 0) > 0.05}
        | {("cleanup", n) for n, f in expected.items() if f["old_versions"]}
    )
    got_run = {(s.kind, s.table) for s in plan.todo}
    assert got_run == want_run
    assert {(k, n) for k, n in want_run if k != "cleanup"} == {
        ("compact", "small"),
        ("compact", "deleted"),
        ("optimize", "indexed"),
    }  # the crafted tables are what they claim
    assert not [s for s in plan.todo if s.blocked]
    steps = {(s.kind, s.table): s for s in plan.steps}
    assert "5 of 5 fragments are small (under 150 rows)" in steps["compact", "small"].reason
    assert "100 deleted rows (25%)" in steps["compact", "deleted"].reason
    assert "id_idx (40 rows)" in steps["optimize", "indexed"].reason
    assert "the table has no index" in steps["optimize", "healthy"].reason
    assert steps["cleanup", "tagged"].reason.startswith("2 versions older than 0 days, not tagged")
    assert "1 of 2 fragments small (50%" in steps["compact", "indexed"].reason
    frame = plan.frame()
    assert len(frame) == len(plan.steps)
    assert set(frame.loc[frame["run"], "action"] + ":" + frame.loc[frame["run"], "table"]) == {
        f"{k}:{n}" for k, n in want_run
    }

    heard: list[tuple[str, float]] = []
    report = mt.run_plan(ns, plan, progress=lambda stage, f: heard.append((stage, f)))
    assert report.ok, report.frame().to_string()
    assert [(r.kind, r.table) for r in report.results] == [(s.kind, s.table) for s in plan.todo]
    assert heard[-1] == ("done", 1.0) and len(heard) == len(plan.todo) + 1
    assert [f for _, f in heard] == sorted(f for _, f in heard)
    after = {name: lance_figures(path) for name, path in paths.items()}
    done = {(r.kind, r.table): r for r in report.results}
    for name in ("small", "deleted"):
        assert after[name]["fragments"] == 1 == done["compact", name].details["fragments_after"]
        assert after[name]["rows"] == expected[name]["rows"]  # no row lost
        assert after[name]["deleted_share"] == 0
    assert after["indexed"]["unindexed_share"] == 0
    for name, figures_after in after.items():
        # cleanup kept the latest and the tagged versions only
        versions = {v["version"] for v in lance.dataset(str(paths[name])).versions()}
        assert versions == figures_after["keep_versions"], name
        if ("cleanup", name) in done:
            assert done["cleanup", name].details["versions_after"] == len(versions)
    assert {v["version"] for v in lance.dataset(str(paths["tagged"])).versions()} == {2, 4}
    # planned again with the same policy: nothing left to do
    again = mt.plan(ns, NS, POLICY)
    assert again.todo == [], again.frame().to_string()


def test_overrides_and_the_default_policy(local_root: Path) -> None:
    ns = backend.connect(str(local_root))
    paths = craft(ns)
    policy = {
        **POLICY,
        "tables": {"small": {"compact": False}, "healthy": {"cleanup": False}},
    }
    plan = mt.plan(ns, NS, policy)
    # a plan is JSON-ready (a job's parameters) and reads back equal
    assert mt.Plan.from_dict(json.loads(json.dumps(plan.to_dict()))) == plan
    kinds = {(s.kind, s.table) for s in plan.steps}
    assert ("compact", "small") not in kinds and ("cleanup", "healthy") not in kinds
    assert ("compact", "deleted") in {(s.kind, s.table) for s in plan.todo}
    # no saved policy: the default, whose small fragments are under 524,288 rows (every
    # crafted fragment is small) and which keeps 7 days of versions (nothing to clean up yet)
    default = mt.plan(ns, NS)
    assert default.source == mt.DEFAULT and default.policy == mt.DEFAULT_POLICY
    figures = {n: lance_figures(p, health.SMALL_FRAGMENT_ROWS) for n, p in paths.items()}
    assert {(s.kind, s.table) for s in default.todo} == {
        ("compact", n) for n, f in figures.items() if compacts(f)
    } | {("optimize", "indexed")}
    assert {n for n, f in figures.items() if compacts(f)} == {"small", "deleted", "tagged"}
    # two small fragments, but lance keeps the indexed one apart from the unindexed one
    assert figures["indexed"]["small"] == 2 and figures["indexed"]["compaction_tasks"] == 0
    (indexed,) = [s for s in default.steps if (s.kind, s.table) == ("compact", "indexed")]
    assert indexed.reason.endswith("lance's compaction plan has nothing to rewrite")


def test_a_plan_made_again_reads_no_version_twice(local_root: Path) -> None:
    """With ``facts`` (the console's, per connection), a second dry run asks for no version's
    operation again, and plans the same."""
    ns = backend.connect(str(local_root))
    craft(ns)
    facts = VersionFacts()
    counting = CountingTransactions(ns)
    first = mt.plan(counting, NS, POLICY, facts=facts)
    assert counting.asked  # every table's recent versions
    counting.asked.clear()
    again = mt.plan(counting, NS, POLICY, facts=facts)
    assert counting.asked == []
    assert again.tables == first.tables and again.steps == first.steps
    assert mt.plan(ns, NS, POLICY).steps == first.steps


def test_a_table_dropped_after_the_plan_fails_alone(local_root: Path) -> None:
    ns = backend.connect(str(local_root))
    paths = craft(ns)
    plan = mt.plan(ns, NS, POLICY)
    ns.drop_table(DropTableRequest(id=[*NS, "small"]))
    report = mt.run_plan(ns, plan)
    assert not report.ok
    failed = [r for r in report.results if r.status == mt.FAILED]
    assert {r.table for r in failed} == {"small"} and len(failed) == 2
    for r in failed:
        assert r.message.startswith("Table not found: "), r.message
        assert "small" in r.message and ".rs" not in r.message and "Traceback" not in r.message
    assert all(r.status == mt.DONE for r in report.results if r.table != "small")
    assert lance_figures(paths["deleted"])["fragments"] == 1
    assert report.count(mt.FAILED) == 2 and "2 failed" in report.summary()


@pytest.fixture
def policy_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "policies"
    monkeypatch.setenv(store.POLICY_DIR_ENV, str(path))
    return path


def _second_connection(ns, backend_kind: str, root: Path):
    if backend_kind == "local":
        return backend.connect(str(root))
    return backend.connect(ns.uri)


def test_policies_are_saved_and_read_back_by_another_connection(
    ns, backend_kind: str, tmp_path: Path, policy_dir: Path
) -> None:
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    create_table(ns, [*NS, "t"], rows(0, 10))
    root = tmp_path / ("local-root" if backend_kind == "local" else "rest-root")
    assert mt.load_policy(ns, NS).source == mt.DEFAULT
    form = {"kinds": {"compact": {"small_share": 0.5}}, "tables": {"t": {"cleanup": {}}}}
    log = audit.AuditLog(tmp_path / "audit")
    admin = gate(ns, actor=Actor("ada@example.com", access.ADMIN), connection="c", log=log)
    saved = mt.save_policy(admin, NS, form)
    assert saved.source == mt.SAVED and saved.saved_by == "ada@example.com"
    other = _second_connection(ns, backend_kind, root)
    read = mt.load_policy(other, NS)
    assert read.policy == mt.policy_from_dict(form) == saved.policy
    assert read.saved_by == "ada@example.com" and read.saved_at is not None
    assert mt.load_policy(other, []).source == mt.DEFAULT  # per namespace
    if backend_kind == "local":  # beside the console's other records, under the root
        where = root / "_console" / "maintenance_policies"
        assert [p.name for p in where.glob("*.json")] == ["ns%3Aa.json"]
        assert not policy_dir.exists()
    else:  # on the console's host, per server
        files = list(policy_dir.glob("*/*.json"))
        assert [f.name for f in files] == ["ns%3Aa.json"]
        assert files[0].parent.name == store.server_folder(ns.uri)
        assert not (root / "_console" / "maintenance_policies").exists()
    (entry,) = log.entries()
    assert (entry.operation, entry.outcome, entry.ids) == (store.SAVE, "ok", NS)
    assert entry.user == "ada@example.com"
    # a plan uses the saved policy (optimize is off in it)
    plan = mt.plan(other, NS)
    assert plan.source == mt.SAVED and {s.kind for s in plan.steps} <= {"compact", "cleanup"}
    if capabilities(ns).kind != "local":  # the spec has no maintenance operation
        assert all(s.blocked == MAINTENANCE_UNSUPPORTED for s in plan.todo)
        report = mt.run_plan(other, plan)
        assert all(r.status == mt.SKIPPED for r in report.results)
    assert mt.delete_policy(admin, NS) is True
    assert mt.load_policy(other, NS).source == mt.DEFAULT
    assert mt.delete_policy(admin, NS) is False


def test_policies_on_an_object_store_root(s3_root) -> None:
    ns = s3_root.ns
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    form = {"kinds": {"cleanup": {"older_than_days": 30}}}
    mt.save_policy(ns, NS, form)
    other = backend.connect(s3_root.target, storage_options=s3_root.server.storage_options)
    assert mt.load_policy(other, NS).policy == mt.policy_from_dict(form)
    keys = [k for k in s3_root.server.objects(s3_root.bucket) if "maintenance" in k]
    assert keys == ["root/_console/maintenance_policies/ns%3Aa.json"]


def test_rest_plan_reports_what_the_server_counts(rest_server, policy_dir: Path) -> None:
    """Over REST the plan reads GetTableStats and the versions listing; the cleanup's count is
    checked against lance on the server's folder."""
    client = backend.connect(rest_server.url)
    client.create_namespace(CreateNamespaceRequest(id=NS))
    create_table(client, [*NS, "t"], rows(0, 10))
    path = table_location(client, [*NS, "t"])
    for i in range(1, 4):
        lance.write_dataset(rows(10 * i, 10), str(path), mode="append")
    lance.dataset(str(path)).tags.create("gold", 2)
    plan = mt.plan(client, NS, POLICY)
    (figures,) = plan.tables
    ds = lance.dataset(str(path))
    assert figures.fragments == len(ds.get_fragments()) == 4
    assert figures.old_versions == lance_figures(path)["old_versions"] == 2
    assert figures.old_bytes is None and figures.deleted_share is None
    assert {s.kind for s in plan.todo} == {"compact", "cleanup"}
    assert all(s.blocked == MAINTENANCE_UNSUPPORTED for s in plan.todo)
    versions = [v["version"] for v in ds.versions()]
    report = mt.run_plan(client, plan)
    assert [r.status for r in report.results] == [mt.SKIPPED, mt.SKIPPED] and not report.ok
    assert [v["version"] for v in lance.dataset(str(path)).versions()] == versions
    client.close()


def test_saving_is_an_admins_write_and_bad_input_writes_nothing(
    local_root: Path, tmp_path: Path
) -> None:
    ns = backend.connect(str(local_root))
    craft(ns)
    log = audit.AuditLog(tmp_path / "audit")
    where = local_root / "_console" / "maintenance_policies"
    for role in (access.VIEWER, access.EDITOR):
        who = gate(ns, actor=Actor(f"{role}@example.com", role), connection="c", log=log)
        with pytest.raises(PermissionDeniedError, match="maintenance policy"):
            mt.save_policy(who, NS, POLICY)
        assert who.denial(store.SAVE) and who.denial(store.DELETE)
    read_only = gate(ns, actor=Actor("root", access.ADMIN), read_only="started read-only", log=log)
    with pytest.raises(PermissionDeniedError, match="started read-only"):
        mt.save_policy(read_only, NS, POLICY)
    admin = gate(ns, actor=Actor("ada", access.ADMIN), connection="c", log=log)
    bad = [
        ({"kinds": {"vacuum": {}}}, InvalidInputError, "unknown maintenance kind 'vacuum'"),
        ({"kinds": {"compact": {"small_share": 20}}}, InvalidInputError, "0.2 for 20%"),
        ({"tables": {"gone": {"compact": False}}}, TableNotFoundError, "does not have"),
    ]
    for form, error, says in bad:
        with pytest.raises(error, match=says):
            mt.save_policy(admin, NS, form)
    with pytest.raises(NamespaceNotFoundError, match="namespace nope does not exist"):
        mt.save_policy(admin, ["nope"], POLICY)
    with pytest.raises(InvalidInputError):
        mt.save_policy(admin, ["a/b"], POLICY)
    assert not where.exists()  # nothing written by any refusal
    outcomes = [(e.operation, e.outcome, e.user) for e in log.entries()]
    assert len(outcomes) == 8 and {o[:2] for o in outcomes} == {(store.SAVE, audit.REFUSED)}
    # a record edited by hand into nonsense: read as an error naming it, never applied
    store.policy_store(ns).put(store.record_id(NS), {"policy": {"kinds": {"vacuum": {}}}})
    with pytest.raises(InvalidInputError) as caught:
        mt.plan(ns, NS)
    assert "the maintenance policy saved for namespace a" in str(caught.value)
    assert "cannot be read: The maintenance policy is not valid: unknown maintenance kind" in (
        str(caught.value)
    )
    # a saved policy whose override names a table dropped since: the plan says which
    mt.save_policy(admin, NS, {**POLICY, "tables": {"small": {"compact": False}}})
    ns.drop_table(DropTableRequest(id=[*NS, "small"]))
    with pytest.raises(TableNotFoundError) as caught:
        mt.plan(ns, NS)
    assert "names a table it does not have (dropped or renamed?): small" in str(caught.value)
    assert "Remove its overrides from the policy" in str(caught.value)


def test_roles_on_the_run_cleanup_is_an_admins(local_root: Path, tmp_path: Path) -> None:
    ns = backend.connect(str(local_root))
    paths = craft(ns)
    log = audit.AuditLog(tmp_path / "audit")
    editor = gate(ns, actor=Actor("ed", access.EDITOR), connection="c", log=log)
    plan = mt.plan(editor, NS, POLICY)
    cleanups = [s for s in plan.todo if s.kind == "cleanup"]
    assert cleanups and all("admins only" in (s.blocked or "") for s in cleanups)
    assert not [s for s in plan.todo if s.kind != "cleanup" and s.blocked]
    # a plan made by an admin, run by an editor: the cleanups are refused, nothing removed
    versions = {
        n: {v["version"] for v in lance.dataset(str(p)).versions()} for n, p in paths.items()
    }
    admin_plan = mt.plan(ns, NS, POLICY)
    report = mt.run_plan(editor, admin_plan)
    statuses = {(r.kind, r.table): r.status for r in report.results}
    assert {k for k, s in statuses.items() if s == mt.REFUSED} == {
        (s.kind, s.table) for s in admin_plan.todo if s.kind == "cleanup"
    }
    assert all(s == mt.DONE for (kind, _), s in statuses.items() if kind != "cleanup")
    tagged = {v["version"] for v in lance.dataset(str(paths["tagged"])).versions()}
    assert tagged == versions["tagged"]
    refused = [e for e in log.entries() if e.outcome == audit.REFUSED]
    assert {e.operation for e in refused} == {"cleanup_old_versions"}
    started = [e for e in log.entries() if e.outcome == audit.STARTED]
    assert {e.operation for e in started} == {"compact_files", "optimize_indexes"}


def test_cleanup_of_old_versions_refuses_bad_days_and_changes_nothing(ns, tmp_path: Path) -> None:
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    create_table(ns, [*NS, "t"], rows(0, 5))
    path = table_location(ns, [*NS, "t"])
    lance.write_dataset(rows(5, 5), str(path), mode="append")
    if capabilities(ns).kind != "local":
        with pytest.raises(UnsupportedOperationError) as caught:
            cleanup_old_versions(ns, [*NS, "t"], 0)
        assert str(caught.value) == MAINTENANCE_UNSUPPORTED
        return
    root = tmp_path / "local-root"
    before = tree_digest(root)
    for days, says in (
        (-1, "older_than_days must be from 0 to 36,500 days, not -1"),
        (1.5, "older_than_days must be a whole number of days from 0 to 36,500, not 1.5"),
        ("7", "not '7'"),
        (None, "not None"),
        (True, "not True"),
    ):
        with pytest.raises(InvalidInputError) as caught:
            cleanup_old_versions(ns, [*NS, "t"], days)  # type: ignore[arg-type]
        assert says in str(caught.value) and "nothing was removed" in str(caught.value)
    assert tree_digest(root) == before
    out = cleanup_old_versions(ns, [*NS, "t"], 0)
    assert out["versions_before"] == 2 and out["versions_after"] == 1
    assert out["removed_versions"] == [1]
    assert [v["version"] for v in lance.dataset(str(path)).versions()] == [2]
