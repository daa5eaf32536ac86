"""The write gate: every write operation, every role, on both backends; read-only; audit."""

from __future__ import annotations

from pathlib import Path

import pytest
from lance_namespace import (
    CreateTableIndexRequest,
    DeclareTableRequest,
    DropTableRequest,
    ListTablesRequest,
)
from lance_namespace.errors import PermissionDeniedError

from backend import access, audit
from backend.gate import Actor, gate
from backend.services import lifecycle
from backend.spec import operations
from backend.spec.operations import OPERATIONS
from tests.support import batch as make_batch
from tests.support import build_namespace, op_declare, op_deregister, tree_digest

WRITE_OPS = sorted(op for op, r in OPERATIONS.items() if not r.read_only)


def root_of(ns, tmp_path: Path, backend_kind: str) -> Path:
    return tmp_path / ("local-root" if backend_kind == "local" else "rest-root")


@pytest.fixture
def built(ns, tmp_path: Path, backend_kind: str):
    build_namespace(ns, tables=1, versions=2)
    return ns, root_of(ns, tmp_path, backend_kind)


def forbidden(role: str) -> list[str]:
    ops = [*WRITE_OPS, *sorted(operations.CONSOLE_WRITES)]
    return [op for op in ops if access.rank(role) < access.rank(access.required_role(op))]


@pytest.mark.parametrize("role", [access.VIEWER, access.EDITOR])
def test_forbidden_writes_are_refused_and_change_nothing(built, role, tmp_path: Path) -> None:
    ns, root = built
    log = audit.AuditLog(tmp_path / "audit")
    gated = gate(ns, actor=Actor(f"{role}@example.com", role), connection="test", log=log)
    before = tree_digest(root)
    refused = forbidden(role)
    assert refused, role
    for op in refused:
        request = OPERATIONS[op].request.model_construct() if op in OPERATIONS else None
        method = getattr(gated, op, None)
        if method is None:  # an extra write this backend does not have
            continue
        with pytest.raises(PermissionDeniedError, match=role):
            method(request) if op != "write_guard" else method(["a", "t0"])
        with pytest.raises(PermissionDeniedError):
            gated.call(op, request) if hasattr(ns, "call") else gated.check(op, request)
    assert tree_digest(root) == before
    entries = log.entries()
    # Every refusal that reached a spec operation is in the log as refused, with its class,
    # the reason, the user and their role; nothing started.
    assert entries and all(e.outcome == audit.REFUSED for e in entries)
    assert {e.error_class for e in entries} == {"PermissionDeniedError"}
    assert all(f"the {role} role may not" in (e.error_message or "") for e in entries)
    assert {e.user for e in entries} == {f"{role}@example.com"}
    assert {e.role for e in entries} == {role}
    # Reads pass for every role.
    assert gated.list_tables(ListTablesRequest(id=["a"])).tables


def test_editor_writes_but_not_destroys_through_services(
    built, tmp_path: Path, backend_kind: str
) -> None:
    ns, root = built
    log = audit.AuditLog(tmp_path / "audit")
    editor = gate(ns, actor=Actor("ed@example.com", access.EDITOR), connection="lab", log=log)
    editor.declare_table(DeclareTableRequest(id=["a", "fresh"]))
    before = tree_digest(root)
    with pytest.raises(PermissionDeniedError):
        lifecycle.drop_table(editor, ["a", "t0"])
    with pytest.raises(PermissionDeniedError):
        editor.batch_commit_tables(make_batch(op_declare(["a", "x"]), op_deregister(["a", "t0"])))
    assert tree_digest(root) == before
    ops = [(e.operation, e.outcome, e.ids) for e in log.entries()]
    assert ops[0] == ("declare_table", "ok", ["a", "fresh"])
    assert ("drop_table", audit.REFUSED, ["a", "t0"]) in ops
    if backend_kind == "local":  # pylance's REST server has no BatchCommitTables
        editor.batch_commit_tables(make_batch(op_declare(["a", "x"])))
        last = log.entries()[-1]
        assert (last.operation, last.outcome) == ("batch_commit_tables", "ok")
        assert last.transaction_id and last.connection == "lab" and last.duration_ms is not None


def test_admin_drop_is_recorded_with_outcome(built, tmp_path: Path) -> None:
    ns, _root = built
    log = audit.AuditLog(tmp_path / "audit")
    admin = gate(ns, actor=Actor("root@example.com", access.ADMIN), connection="c", log=log)
    admin.drop_table(DropTableRequest(id=["a", "t0"]))
    with pytest.raises(Exception) as info:
        admin.drop_table(DropTableRequest(id=["a", "missing"]))
    first, second = log.entries()
    assert (first.operation, first.outcome) == ("drop_table", "ok")
    assert second.outcome == "error" and second.error_class == type(info.value).__name__
    assert "missing" in (second.error_message or "")


def test_read_only_gate_refuses_every_write_for_admins_too(built) -> None:
    ns, root = built
    ro = gate(ns, actor=Actor("root", access.ADMIN), read_only="the console was started read-only")
    assert ro.denial("declare_table") == "the console was started read-only"
    assert ro.denial("list_tables") is None
    with pytest.raises(PermissionDeniedError, match="started read-only"):
        ro.declare_table(DeclareTableRequest(id=["a", "nope"]))
    with pytest.raises(PermissionDeniedError, match="started read-only"):
        ro.create_table_index(
            CreateTableIndexRequest(id=["a", "t0"], column="id", index_type="BTREE")
        )


def test_notebook_actor_is_the_os_user() -> None:
    actor = Actor.os_user()
    assert actor.source == "notebook" and actor.user and actor.role == access.ADMIN


def test_rows_kept_by_gate_are_redacted(built, tmp_path: Path) -> None:
    ns, _ = built
    log = audit.AuditLog(tmp_path / "audit")
    secret = "s3cr3t-value-123456"
    g = gate(ns, actor=Actor("a", access.ADMIN), connection="c", log=log)
    g.declare_table(DeclareTableRequest(id=["a", "p"], properties={"password": secret, "o": "k"}))
    text = (tmp_path / "audit" / audit.LOG_NAME).read_text()
    assert secret not in text and '"o": "k"' in text


def test_rest_requests_carry_the_user_as_context(rest_server) -> None:
    import backend

    client = backend.connect(rest_server.url)
    try:
        g = gate(client, actor=Actor("ada@example.com", access.EDITOR), connection="rest")
        request = DeclareTableRequest(id=["t"])
        g.declare_table(request)
        g.list_tables(ListTablesRequest(id=[]))
        g.call("table_exists", {"id": ["t"]})
        sent = [e.request_headers for e in client.wire_log.entries()]
        assert sent and all(h.get("x-lance-ctx-console-user") == "ada@example.com" for h in sent)
        assert request.context is None  # the caller's request is not changed
    finally:
        client.close()


def test_console_writes_by_table_id_are_recorded(local_root: Path, tmp_path: Path) -> None:
    import backend
    from tests.support import with_versions

    ns = backend.connect(str(local_root))  # compact_files is the local backend's own write
    with_versions(ns, ["t"], 3)
    log = audit.AuditLog(tmp_path / "audit")
    g = gate(ns, actor=Actor("ed", access.EDITOR), connection="c", log=log)
    g.compact_files(["t"])
    started, entry = log.entries()  # maintenance is a long write: started, then its end
    assert (started.operation, started.ids, started.outcome) == ("compact_files", ["t"], "started")
    assert (entry.operation, entry.ids, entry.outcome) == ("compact_files", ["t"], "ok")
    assert entry.op_id == started.op_id and audit.unfinished(log.entries()) == set()


def test_notebook_connect_records_the_os_user(
    local_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``backend.connect(..., audit=True)`` (the default inside a Jupyter kernel: IPython's
    shell has a kernel; not in a process that only imported ipykernel): every write is
    recorded as the OS user, source "notebook"."""
    import getpass
    import sys
    import types

    import backend

    monkeypatch.setenv("LANCE_CONSOLE_AUDIT_DIR", str(tmp_path / "nb-audit"))
    ns = backend.connect(str(local_root), audit=True)
    ns.declare_table(DeclareTableRequest(id=["t"]))
    (entry,) = audit.AuditLog(tmp_path / "nb-audit").entries()
    assert (entry.user, entry.source, entry.operation) == (
        getpass.getuser(),
        "notebook",
        "declare_table",
    )
    assert entry.connection == str(local_root)
    import IPython

    monkeypatch.setitem(sys.modules, "ipykernel", sys.modules["os"])  # imported, no kernel
    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    assert not hasattr(backend.connect(str(local_root)), "actor")
    kernel_shell = types.SimpleNamespace(kernel=object())  # as inside a kernel
    monkeypatch.setattr(IPython, "get_ipython", lambda: kernel_shell)
    assert hasattr(backend.connect(str(local_root)), "actor")
    monkeypatch.delitem(sys.modules, "ipykernel")
    assert not hasattr(backend.connect(str(local_root)), "actor")


@pytest.mark.parametrize("role", [access.VIEWER, access.EDITOR, access.ADMIN])
def test_a_dataset_from_the_gate_reads_but_never_writes_around_it(
    local_root: Path, tmp_path: Path, role: str
) -> None:
    import pyarrow as pa

    import backend
    from backend import gate as gate_module
    from tests.support import with_versions

    ns = backend.connect(str(local_root))
    with_versions(ns, ["t"], 2)
    before = tree_digest(local_root)
    log = audit.AuditLog(tmp_path / "audit")
    g = gate(ns, actor=Actor(f"{role}@example.com", role), connection="c", log=log)
    ds = g.open_dataset(["t"])
    rows = ds.count_rows()
    assert rows == ds.to_table().num_rows > 0 and ds.latest_version == 2
    assert ds.checkout_version(1).count_rows() <= rows
    assert ds.tags.list() == {}
    writes = [
        lambda: ds.delete("true"),
        lambda: ds.insert(ds.to_table().slice(0, 1)),
        lambda: ds.tags.create("v1", 1),
        lambda: ds.restore(),
        lambda: ds.checkout_version(1).delete("true"),
        lambda: ds.add_columns({"x": "1"}),
        lambda: gate_module.unwrap(ds),
    ]
    for write in writes:
        with pytest.raises(PermissionDeniedError, match="writes only through its own operations"):
            write()
    assert tree_digest(local_root) == before  # every role: nothing written
    # inside a write the gate checked and records (an import), the dataset is the real one
    if role != access.VIEWER:
        with gate_module.recorded(g, "import_table", {"id": ["t"]}, ids=["t"]):
            inner = g.open_dataset(["t"])
            inner.insert(
                pa.table({c: inner.to_table().column(c).slice(0, 1) for c in inner.schema.names})
            )
        assert ns.open_dataset(["t"]).count_rows() == rows + 1
        assert [(e.operation, e.outcome) for e in log.entries()] == [
            ("import_table", audit.STARTED),
            ("import_table", audit.OK),
        ]


def test_an_actor_without_a_role_reads_nothing(built, tmp_path: Path) -> None:
    """Deny by default: every read of a user without a role is refused below the pages (spec
    reads, the console's own reads, datasets, the REST dispatcher); a viewer reads."""
    from backend.services.search.preview import preview
    from backend.services.search.query import read_rows

    ns, _root = built
    log = audit.AuditLog(tmp_path / "audit")
    nobody = gate(ns, actor=Actor("eve@example.com", None), connection="c", log=log)
    reads = sorted(op for op, r in OPERATIONS.items() if r.read_only)
    tried = 0
    for op in reads:
        method = getattr(nobody, op, None)
        if method is None:  # a read this backend does not have
            continue
        with pytest.raises(PermissionDeniedError, match="without a role may not read"):
            method(OPERATIONS[op].request.model_construct())
        tried += 1
    assert tried >= 5 and "list_tables" in reads and "query_table" in reads
    for op in sorted(operations.CONSOLE_READS - access.NO_DATA_OPS):
        method = getattr(nobody, op, None)
        if method is None:
            continue
        with pytest.raises(PermissionDeniedError):
            method(["a", "t0"])
    if hasattr(ns, "call"):
        with pytest.raises(PermissionDeniedError):
            nobody.call("list_tables", {"id": ["a"]})
    with pytest.raises(PermissionDeniedError):
        read_rows(nobody, ["a", "t0"], limit=5)  # the pages' row reads
    with pytest.raises(PermissionDeniedError):
        preview(nobody, ["a", "t0"])
    assert nobody.capabilities() is not None  # reads no data of the namespace
    assert log.entries() == []  # reads are not audited
    viewer = gate(ns, actor=Actor("vi@example.com", access.VIEWER), connection="c")
    assert viewer.list_tables(ListTablesRequest(id=["a"])).tables
    assert read_rows(viewer, ["a", "t0"], limit=5).num_rows > 0
