"""Every write flow of the lifecycle, import, index and batch pages lands in the audit log,
with its user and outcome, on both backends: the pages call these same services through the
session's gate (``components.connection.get_namespace``)."""

from __future__ import annotations

from pathlib import Path

from lance_namespace import CreateNamespaceRequest, CreateTableIndexRequest

from backend import access, audit
from backend.gate import Actor, gate
from backend.services import batch_builder, imports, lifecycle
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
    lifecycle.create_tag(admin, ["a", "t"], "gold", 2)
    lifecycle.restore_version(admin, ["a", "t"], 1)
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
        expected |= {"batch_delete_table_versions"}
    entries = log.entries()
    got = {e.operation for e in entries}
    assert expected <= got, expected - got
    assert {e.user for e in entries} == {"ada@example.com"}
    assert {e.connection for e in entries} == {"lab"}
    assert all(e.outcome == audit.OK and e.duration_ms is not None for e in entries), [
        (e.operation, e.error_message) for e in entries if e.outcome != audit.OK
    ]
    imported = [e for e in entries if e.operation == "import_table"]
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
