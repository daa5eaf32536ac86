"""The transaction demo's failure tools (``backend.demo.txn_faults``): a fault switched on at any
phase of a batch of three staged changes leaves every table as it was (the batch rolls itself
back, or recovery does after a kill), and a second process appending between Validate and
Commit makes the commit refuse the batch, publishing nothing.

"As it was" is read by readers of the namespace (version, row count, every version) and by
lance opening each table's files (the rows, compared with pyarrow).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest
from lance_namespace import CreateNamespaceRequest, DescribeTableRequest
from lance_namespace.errors import (
    ConcurrentModificationError,
    InternalError,
    InvalidInputError,
    PermissionDeniedError,
    UnsupportedOperationError,
)

import backend
from backend import access, audit
from backend.demo import txn_faults as tf
from backend.gate import Actor, gate
from backend.local import batch
from backend.services import batch_builder as bb
from backend.services import transactions as txsv
from tests.support import create_table

TABLES = [["shop", name] for name in ("orders", "stock", "ledger")]


def rows(start: int, n: int) -> pa.Table:
    return pa.table(
        {"id": pa.array(range(start, start + n), pa.int64()), "qty": pa.array([1] * n, pa.int32())}
    )


def make(ns: Any) -> None:
    ns.create_namespace(CreateNamespaceRequest(id=["shop"]))
    for i, t in enumerate(TABLES):
        create_table(ns, t, rows(0, 4 + i))


def stage_three(ns: Any) -> list[Any]:
    """A batch that changes the three tables: an append, a delete, an update."""
    return [
        bb.stage_change(ns, TABLES[0], append=rows(100, 3)),
        bb.stage_change(ns, TABLES[1], delete="id < 2"),
        bb.stage_change(ns, TABLES[2], update=({"qty": "qty + 5"}, "id >= 3")),
    ]


def contents(ns: Any) -> dict[tuple[str, ...], Any]:
    """Each table as a reader through the namespace sees it, and its rows read from its files."""
    out = {}
    for t in TABLES:
        location = ns.describe_table(DescribeTableRequest(id=t)).location
        direct = lance.dataset(location, storage_options=ns.storage_options or None)
        out[tuple(t)] = (tf.table_state(ns, t), direct.version, direct.to_table().sort_by("id"))
    return out


@pytest.fixture
def shop(tmp_path: Path) -> Any:
    root = tmp_path / "root"
    root.mkdir()
    ns = backend.connect(str(root))
    make(ns)
    return ns


def _first(fired: list[str], step: int, phase: str, detail: str) -> None:
    fired.append(phase)


def test_fail_at_every_step_leaves_every_table_unchanged(shop: Any) -> None:
    """The fault switch at each of the protocol's steps in turn (in this process, through the
    hook the demo installs in its own): every step before the commit point rolls back to the
    exact state before; the first step after it leaves the batch committed."""
    ns = shop
    staged = stage_three(ns)
    request = bb.to_request([bb.staged_op(s) for s in staged])
    before = contents(ns)
    phases = []
    step = 0
    while True:
        step += 1
        fired: list[str] = []
        fault = tf.Fault(tf.FAIL, step=step)
        batch.set_fault_hook(tf.hook_for(fault, request, functools.partial(_first, fired)))
        try:
            ns.batch_commit_tables(request)
        except InternalError as err:
            assert "everything was rolled back" in str(err) and "demo fault" in str(err)
            assert contents(ns) == before, f"step {step} ({fired})"
            phases.append(fired[0])
            continue
        finally:
            batch.set_fault_hook(None)
        break  # the fault fired after the commit point (or never): the batch is applied
    assert fired and fired[0].startswith("cleanup.")
    assert phases[0] == "begin.journal" and phases[-1] == "commit.record"
    assert {"begin.record", "apply.version.stage", "apply.version.link"} <= set(phases)
    assert len(phases) == 2 + 2 * len(TABLES) + 1
    after = contents(ns)
    for t in TABLES:
        assert after[tuple(t)][0].version == before[tuple(t)][0].version + 1
    assert after[tuple(TABLES[0])][0].rows == before[tuple(TABLES[0])][0].rows + 3


@pytest.mark.parametrize("operation", [1, 2, 3])
def test_fail_at_operation_rolls_back_the_operations_applied(shop: Any, operation: int) -> None:
    ns = shop
    request = bb.to_request([bb.staged_op(s) for s in stage_three(ns)])
    before = contents(ns)
    fired: list[str] = []
    hook = tf.hook_for(
        tf.fail_at_operation(operation), request, lambda n, p, d: fired.append(f"{p} {d}")
    )
    batch.set_fault_hook(hook)
    try:
        with pytest.raises(InternalError, match="rolled back"):
            ns.batch_commit_tables(request)
    finally:
        batch.set_fault_hook(None)
    table = ".".join(TABLES[operation - 1]).replace(".", "$")
    assert fired == [f"apply.version.link {table} v2"]
    assert contents(ns) == before


@pytest.mark.slow
def test_demo_commit_with_a_fault_in_another_process(shop: Any) -> None:
    """The demo tool itself: the batch runs in a second process; an injected error at
    operation 2, then that process killed right before the commit point. Each time every
    table is unchanged and the record says why; then the same staged changes commit."""
    ns = shop
    staged = stage_three(ns)
    ops = [bb.staged_op(s) for s in staged]
    before = contents(ns)
    failed = tf.commit_with_fault(ns, ops, tf.fail_at_operation(2))
    assert failed.fired == "apply.version.link shop$stock v2"
    assert not failed.killed and failed.status == "FAILED" and not failed.committed
    assert failed.error_class == "InternalError" and "rolled back" in (failed.error or "")
    assert failed.unchanged and contents(ns) == before
    killed = tf.commit_with_fault(ns, ops, tf.kill_during_apply())
    assert killed.killed and killed.fired and killed.fired.startswith("commit.record")
    assert killed.status == "FAILED" and killed.recovered
    assert killed.transaction_id in killed.recovered_by_console
    assert "rolled back on recovery" in (killed.reason or "")
    assert killed.unchanged and contents(ns) == before
    bb.commit(ns, ops)  # the staged changes were kept: they publish now
    assert all(ns.committed_version(t) == 2 for t in TABLES)


@pytest.mark.slow
@pytest.mark.parametrize(
    "phase",
    [
        "begin.journal",
        "begin.record",
        "apply.version.stage",
        "apply.version.link",
        "commit.record",
        "cleanup.staged",
    ],
)
def test_kill_at_every_phase_then_recovery(shop: Any, phase: str) -> None:
    """The committing process killed at the first step of each phase: before the commit point
    recovery leaves every table unchanged; after it (cleanup), recovery finishes the batch."""
    ns = shop
    ops = [bb.staged_op(s) for s in stage_three(ns)]
    before = contents(ns)
    outcome = tf.commit_with_fault(ns, ops, tf.Fault(tf.KILL, phase=phase))
    assert outcome.killed and outcome.fired and outcome.fired.startswith(phase)
    if phase.startswith("cleanup."):
        assert outcome.status == "SUCCEEDED" and outcome.committed
        assert all(ns.committed_version(t) == 2 for t in TABLES)
        return
    if phase == "begin.journal":  # killed before its journal: it wrote nothing, left no record
        assert outcome.status is None and outcome.transaction_id
    else:
        assert outcome.status == "FAILED" and outcome.recovered
    assert outcome.unchanged and contents(ns) == before


@pytest.mark.slow
def test_kill_during_apply_on_an_object_store(s3_root: Any) -> None:
    ns = s3_root.ns
    make(ns)
    ops = [bb.staged_op(s) for s in stage_three(ns)]
    before = contents(ns)
    outcome = tf.commit_with_fault(ns, ops, tf.kill_during_apply())
    assert outcome.killed and outcome.fired and outcome.fired.startswith("commit.decide")
    assert outcome.status == "FAILED" and outcome.recovered
    assert outcome.unchanged and contents(ns) == before


# -- a concurrent writer ---------------------------------------------------------------------------
@pytest.mark.slow
def test_a_concurrent_writer_makes_the_commit_publish_nothing(shop: Any) -> None:
    ns = shop
    staged = stage_three(ns)
    ops = [bb.staged_op(s) for s in staged]
    assert bb.validate(ns, ops) == []
    before = contents(ns)
    stock_before = before[tuple(TABLES[1])][2]
    done = tf.concurrent_append(ns, TABLES[1], rows=2)
    assert (done.table_id, done.version, done.rows) == (tuple(TABLES[1]), 2, 2)
    with pytest.raises(ConcurrentModificationError):
        bb.commit(ns, ops, validated=True)  # the page's Commit right after its Validate
    after = contents(ns)
    for t in (TABLES[0], TABLES[2]):
        assert after[tuple(t)] == before[tuple(t)]
    expected = pa.concat_tables([stock_before, stock_before.slice(0, 2)]).sort_by("id")
    assert after[tuple(TABLES[1])][2].equals(expected)
    assert after[tuple(TABLES[1])][0].versions == (1, 2)


@pytest.mark.slow
def test_a_writer_between_validation_and_the_lock_is_refused(shop: Any) -> None:
    """The writer lands after the commit's own validation, before it takes the lock: the
    re-check under the lock refuses the batch (FAILED record), nothing applied."""
    ns = shop
    ops = [bb.staged_op(s) for s in stage_three(ns)]
    before = contents(ns)

    def race(step: int, phase: str, detail: str) -> None:
        if phase == "validated":
            batch.set_fault_hook(None)
            tf.concurrent_append(ns, TABLES[2], rows=1)

    batch.set_fault_hook(race)
    try:
        with pytest.raises(ConcurrentModificationError, match="between validation and commit"):
            ns.batch_commit_tables(bb.to_request(ops))
    finally:
        batch.set_fault_hook(None)
    after = contents(ns)
    assert after[tuple(TABLES[0])] == before[tuple(TABLES[0])]
    assert after[tuple(TABLES[1])] == before[tuple(TABLES[1])]
    assert after[tuple(TABLES[2])][0].versions == (1, 2)  # the writer's append only
    latest = txsv.list_batch_transactions(ns)[0]
    assert latest.status == "FAILED" and "concurrent modification" in (latest.reason or "")


# -- who may use them ------------------------------------------------------------------------------
@pytest.mark.slow
def test_demo_tools_are_an_admins_and_audited(shop: Any, tmp_path: Path) -> None:
    log = audit.AuditLog(tmp_path / "audit")
    editor = gate(shop, actor=Actor("ed", role=access.EDITOR), log=log)
    admin = gate(shop, actor=Actor("ad", role=access.ADMIN), log=log)
    ops = [bb.staged_op(s) for s in stage_three(shop)]
    before = contents(shop)
    with pytest.raises(PermissionDeniedError):
        tf.commit_with_fault(editor, ops, tf.fail_at_operation(1))
    with pytest.raises(PermissionDeniedError):
        tf.concurrent_append(editor, TABLES[0])
    with pytest.raises(InvalidInputError, match="operations 1 to 3"):
        tf.commit_with_fault(admin, ops, tf.fail_at_operation(4))
    assert contents(shop) == before
    outcome = tf.commit_with_fault(admin, ops, tf.fail_at_operation(3))
    assert outcome.unchanged
    entries = [(e.operation, e.outcome, e.user) for e in log.entries()]
    assert ("demo_fault_commit", audit.REFUSED, "ed") in entries
    assert ("demo_concurrent_writer", audit.REFUSED, "ed") in entries
    assert ("demo_fault_commit", audit.OK, "ad") in entries
    assert any(e.transaction_id == outcome.transaction_id for e in log.entries())


def test_demo_tools_over_rest_are_unsupported(rest_server: Any) -> None:
    ns = backend.connect(rest_server.url)
    make(ns)
    with pytest.raises(UnsupportedOperationError, match="local backend only"):
        tf.concurrent_append(ns, TABLES[0])
    with pytest.raises(UnsupportedOperationError, match="local backend only"):
        tf.commit_with_fault(ns, [bb.declare_op(["shop", "x"])], tf.fail_at_operation(1))
