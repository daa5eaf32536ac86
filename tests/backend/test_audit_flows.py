"""Every write flow of the lifecycle, import, index and batch pages lands in the audit log,
with its user and outcome, on both backends: the pages call these same services through the
session's gate (``components.session.get_namespace``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lance_namespace import CreateNamespaceRequest, CreateTableIndexRequest

from backend import access, audit
from backend.gate import Actor, gate
from backend.rules import batch_rules
from backend.services import batch_builder, imports, lifecycle
from backend.services import restore as restoresv
from backend.services import tags as tagsv
from tests.support import with_versions

CSV = b"id,name\n1,a\n2,b\n3,c\n"


def test_every_write_flow_is_recorded(ns, tmp_path: Path, backend_kind: str) -> None:
    log = audit.AuditLog(tmp_path / "audit")
    admin = gate(ns, actor=Actor("ada@example.com", access.ADMIN), connection="lab", log=log)
    admin.create_namespace(CreateNamespaceRequest(id=["a"]))
    with_versions(ns, ["a", "t"], 3)  # written outside the gate: not the console's write
    assert [e.operation for e in log.entries()] == ["create_namespace"]

    # Import page: a new table from CSV, then an append.
    imports.import_table(admin, ["a", "imported"], CSV, "csv")
    imports.import_table(admin, ["a", "imported"], b"id,name\n4,d\n", "csv", mode="append")
    # Indexes page: a scalar build.
    admin.create_table_index(
        CreateTableIndexRequest(id=["a", "t"], column="id", index_type="BTREE", name="id_idx")
    )
    # Versions page: tag, restore, cleanup by policy.
    tagsv.create_tag(admin, ["a", "t"], "gold", 2)
    restoresv.restore_version(admin, ["a", "t"], 1)
    plan = lifecycle.cleanup_plan(admin, ["a", "t"], keep_last=2)
    if plan.delete:
        lifecycle.run_cleanup(admin, plan)
    # Namespaces & tables page: schema metadata, deregister, drop, drop namespace.
    lifecycle.update_schema_metadata(admin, ["a", "imported"], {"owner": "ops"})
    lifecycle.deregister_table(admin, ["a", "imported"])
    lifecycle.drop_table(admin, ["a", "t"])
    expected = {
        "create_namespace",
        "create_table_index",
        "create_table_tag",
        "restore_table",
        "update_table_schema_metadata",
        "deregister_table",
        "drop_table",
    }
    if backend_kind == "local":
        # Imports write through lance under the namespace's guard: one entry each.
        expected |= {"import_table"}
        # Transactions page: a batch commit (pylance's REST server has none).
        batch_builder.commit(admin, [batch_builder.declare_op(["a", "batched"])])
        expected |= {"batch_commit_tables"}
    else:
        expected |= {"create_table", "insert_into_table"}
    if plan.delete:
        # locally lance's cleanup of those versions (a long write), over REST the spec's
        expected |= {
            "cleanup_old_versions" if backend_kind == "local" else "batch_delete_table_versions"
        }
    entries = log.entries()
    got = {e.operation for e in entries}
    assert expected <= got, expected - got
    assert {e.user for e in entries} == {"ada@example.com"}
    assert {e.connection for e in entries} == {"lab"}
    ends = [e for e in entries if e.outcome != audit.STARTED]
    assert all(e.outcome == audit.OK and e.duration_ms is not None for e in ends), [
        (e.operation, e.error_message) for e in ends if e.outcome != audit.OK
    ]
    # The long writes (the index build, the imports) started first, and every start ended.
    starts = [e for e in entries if e.outcome == audit.STARTED]
    assert {e.operation for e in starts} == {"create_table_index"} | (
        {"import_table", "cleanup_old_versions"} if backend_kind == "local" else set()
    )
    assert {e.op_id for e in starts} <= {e.op_id for e in ends}
    assert audit.unfinished(entries) == set()
    imported = [e for e in ends if e.operation == "import_table"]
    assert [e.request["mode"] for e in imported] == (
        ["create", "append"] if backend_kind == "local" else []
    )


def test_a_batch_entry_names_every_table_it_touches(ns, tmp_path: Path, backend_kind: str) -> None:
    """BatchCommitTables over two tables: its entry names both with their kinds of operation
    (recorded whether the server runs it or not: pylance's REST server has no batch commit),
    and the Audit page's table filter finds it by either table."""
    from lance_namespace.errors import LanceNamespaceError

    from tests.support import batch, op_declare, op_delete

    log = audit.AuditLog(tmp_path / "audit")
    admin = gate(ns, actor=Actor("ada@example.com", access.ADMIN), connection="lab", log=log)
    admin.create_namespace(CreateNamespaceRequest(id=["shop"]))
    with_versions(ns, ["shop", "orders"], 3)
    request = batch(
        op_declare(["shop", "refunds"]),
        op_delete(["shop", "orders"], (1, 2)),
        op_declare(["shop", "orders_archive"]),
    )
    try:
        admin.batch_commit_tables(request)
        committed = True
    except LanceNamespaceError:
        committed = False
    assert committed == (backend_kind == "local")
    entries = log.entries()
    [entry] = [e for e in entries if e.operation == "batch_commit_tables"]
    assert entry.outcome == (audit.OK if committed else audit.FAILED)
    expected = [
        {"id": [*op.declare_table.id], "kinds": ["DeclareTable"]}
        if op.declare_table
        else {"id": [*op.delete_table_versions.id], "kinds": ["DeleteTableVersions"]}
        for op in request.operations
    ]
    assert entry.tables == expected
    assert [t["id"] for t in entry.tables] == [
        ["shop", "refunds"],
        ["shop", "orders"],
        ["shop", "orders_archive"],
    ]
    for needle in ("refunds", "ORDERS", "orders_archive", "shop"):
        assert entry in audit.filter_entries(entries, table=needle), needle
    assert audit.filter_entries(entries, table="returns") == []
    assert [e.operation for e in audit.filter_entries(entries, table="refunds")] == [
        "batch_commit_tables"
    ]
    [row] = [r for r in audit.to_rows(entries) if r["operation"] == "batch_commit_tables"]
    assert row["tables"] == (
        "shop › refunds (DeclareTable); shop › orders (DeleteTableVersions); "
        "shop › orders_archive (DeclareTable)"
    )


def own_target(ns, backend_kind: str, tmp_path: Path) -> str:
    """The target the entries must name, from the fixture's own roots (not the gate's)."""
    if backend_kind == "local":
        return (tmp_path / "local-root").as_uri()
    return str(ns.uri)  # the REST server's URL the client was made for


def test_entries_name_role_target_and_connection(ns, tmp_path: Path, backend_kind: str) -> None:
    """A saved connection's name, the actor's role and the target on every entry; without a
    name the connection is derived from the target, never "default"."""
    from lance_namespace import DeclareTableRequest

    log = audit.AuditLog(tmp_path / "audit")
    target = own_target(ns, backend_kind, tmp_path)
    if backend_kind == "rest":
        assert target.startswith("http://127.0.0.1:")
    saved = gate(ns, actor=Actor("ed@example.com", access.EDITOR), connection="lab", log=log)
    saved.create_namespace(CreateNamespaceRequest(id=["a"]))
    unnamed = gate(ns, actor=Actor("ada@example.com", access.ADMIN), log=log)
    unnamed.declare_table(DeclareTableRequest(id=["a", "t"]))
    first, second = log.entries()
    assert (first.user, first.role, first.connection, first.target) == (
        "ed@example.com", "editor", "lab", target
    )  # fmt: skip
    derived = "local-root" if backend_kind == "local" else target
    assert (second.user, second.role, second.connection, second.target) == (
        "ada@example.com", "admin", derived, target
    )  # fmt: skip
    assert "default" not in {first.connection, second.connection}


def test_an_index_build_job_records_its_start_then_its_end(
    ns, tmp_path: Path, backend_kind: str
) -> None:
    """An index build (a job): a "started" entry, then the final one with the same
    operation id; no start is left without an end."""
    from backend.services import build_jobs, jobs

    with_versions(ns, ["t"], 2)
    log = audit.AuditLog(tmp_path / "audit")
    editor = gate(ns, actor=Actor("ed@example.com", access.EDITOR), connection="lab", log=log)
    request = CreateTableIndexRequest(id=["t"], column="id", index_type="BTREE", name="id_idx")
    submitted = jobs.submit(editor, "create_index", ["t"], build_jobs.build_params(request))
    job = jobs.wait(editor, submitted.id, timeout=120)
    assert job.state == jobs.SUCCEEDED, job.error
    started, ended = [e for e in log.entries() if e.operation != "submit_job"]
    assert started.operation == ended.operation == "create_table_scalar_index"
    assert (started.outcome, ended.outcome) == (audit.STARTED, audit.OK)
    assert started.op_id and started.op_id == ended.op_id
    assert started.role == ended.role == "editor" and started.ids == ["t"]
    assert audit.unfinished(log.entries()) == set()


def test_every_write_of_a_job_records_its_start(
    ns, tmp_path: Path, backend_kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job (maintenance, Build A/B, any kind): each write it makes through the gate, long
    by name or not, records a start before it runs."""
    from lance_namespace import DeclareTableRequest

    from backend.services import jobs

    log = audit.AuditLog(tmp_path / "audit")
    editor = gate(ns, actor=Actor("ed@example.com", access.EDITOR), connection="lab", log=log)
    editor.create_namespace(CreateNamespaceRequest(id=["a"]))  # outside a job: one entry

    def work(job_ns, table_id, params, ctx) -> str:
        job_ns.declare_table(DeclareTableRequest(id=list(table_id)))
        return "done"

    kind = jobs.Kind("declaring", work, "declare_table", "declaring")
    monkeypatch.setitem(jobs.KINDS, "declaring", kind)
    job = jobs.wait(editor, jobs.submit(editor, "declaring", ["a", "later"]).id)
    assert job.state == jobs.SUCCEEDED and job.result == "done", job.error
    got = [(e.operation, e.outcome) for e in log.entries()]
    assert got == [
        ("create_namespace", audit.OK),
        ("declare_table", audit.STARTED),
        ("declare_table", audit.OK),
    ]
    _, started, ended = log.entries()
    assert started.op_id == ended.op_id


def test_refusals_are_recorded_with_the_reason(ns, tmp_path: Path, backend_kind: str) -> None:
    """A request the static checks refuse (a name with the delimiter) and a batch the
    preflight refuses: each an entry with outcome "refused" and the reason, and nothing was
    sent or written."""
    from lance_namespace import DeclareTableRequest
    from lance_namespace.errors import InvalidInputError, LanceNamespaceError

    from tests.support import tree_digest

    root = tmp_path / ("local-root" if backend_kind == "local" else "rest-root")
    log = audit.AuditLog(tmp_path / "audit")
    editor = gate(ns, actor=Actor("ed@example.com", access.EDITOR), connection="lab", log=log)
    editor.create_namespace(CreateNamespaceRequest(id=["a"]))
    before = tree_digest(root)
    with pytest.raises(InvalidInputError, match="delimiter") as bad_name:
        editor.declare_table(DeclareTableRequest(id=["a", "b$c"]))
    with pytest.raises(LanceNamespaceError) as refused:
        # a table in a namespace that does not exist: the preflight refuses the batch
        batch_builder.commit(editor, [batch_builder.declare_op(["missing", "t"])])
    assert tree_digest(root) == before
    _, static, preflight = log.entries()
    assert (static.operation, static.outcome) == ("declare_table", audit.REFUSED)
    assert static.error_class == "InvalidInputError"
    assert static.error_message == str(bad_name.value)
    assert (static.role, static.ids) == ("editor", ["a", "b$c"])
    assert (preflight.operation, preflight.outcome) == ("batch_commit_tables", audit.REFUSED)
    assert preflight.error_class == type(refused.value).__name__
    assert preflight.error_message == str(refused.value) and "missing" in str(refused.value)
    assert [t["id"] for t in preflight.tables] == [["missing", "t"]]


def test_the_builders_commit_refused_by_the_preflight_is_recorded(
    ns, tmp_path: Path, backend_kind: str
) -> None:
    """The builder's "Commit atomically" validates first and sends nothing when the batch has
    errors: that refusal is an entry with every error as the reason."""
    log = audit.AuditLog(tmp_path / "audit")
    editor = gate(ns, actor=Actor("ed@example.com", access.EDITOR), connection="lab", log=log)
    operations = [batch_builder.declare_op(["missing", "t"])]
    problems = batch_builder.validate(editor, operations)
    assert batch_rules.has_errors(problems)
    batch_builder.record_refused_commit(editor, operations, problems)
    (entry,) = log.entries()
    assert (entry.operation, entry.outcome, entry.role) == (
        "batch_commit_tables", audit.REFUSED, "editor"
    )  # fmt: skip
    errors = [str(p) for p in problems if p.severity == "error"]
    assert entry.error_message == "the preflight refused the batch: " + "; ".join(errors)
