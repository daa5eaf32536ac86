"""BatchCommitTables on an S3-compatible store (moto's server, which enforces If-None-Match and
If-Match): all or none through conditional writes, leases and a decision object
(backend/local/batch/objects.py, docs/batch-commit.md).

Covered: a mixed batch; an invalid batch after which every object and ETag is unchanged; a
failure during apply rolled back; batches racing between processes (same table: exactly one
wins; disjoint tables: all win; a single write racing a batch is not lost); SIGKILL at every
checkpoint and recovery on the next open (after the dead writer's lease expired); the
protocol's own conditional writes are constant whatever the batch size; on a store whose
conditional writes are not exclusive, a catalog commit another writer's replaced is retried.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lance
import pytest
from lance.namespace import DirectoryNamespace
from lance_namespace import (
    BatchCommitTablesRequest,
    CountTableRowsRequest,
    CreateNamespaceRequest,
    DeclareTableRequest,
    DescribeTableRequest,
    DescribeTransactionRequest,
    ListTablesRequest,
    ListTableVersionsRequest,
)
from lance_namespace.errors import (
    ConcurrentModificationError,
    InvalidInputError,
    LanceNamespaceError,
    TableAlreadyExistsError,
)

import backend
from backend.local import batch as local_batch
from backend.local.batch import objects
from tests.backend.s3_support import bucket_state, console_objects, stage_version_s3
from tests.conftest import S3Root
from tests.support import (
    ZygoteChild,
    batch,
    create_table,
    make_table,
    op_declare,
    op_delete,
    op_deregister,
    op_version,
)

CHILD = Path(__file__).with_name("s3_batch_child.py")
LEASE = "1.0"  # seconds: a killed writer blocks recovery this long


@pytest.fixture(autouse=True)
def short_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANCE_CONSOLE_LEASE_SECONDS", LEASE)


def _versions(ns: Any, table_id: list[str]) -> list[int]:
    resp = ns.list_table_versions(ListTableVersionsRequest(id=table_id))
    return sorted(v.version for v in resp.versions)


def _seed(ns: Any, server: Any) -> dict[str, Any]:
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    for name in ("t", "old", "gone", "other"):
        create_table(ns, ["a", name], make_table(5))
    location = ns.describe_table(DescribeTableRequest(id=["a", "old"])).location
    for i in range(2):  # old: versions 1, 2, 3
        lance.write_dataset(
            make_table(2, start=10 + i),
            location,
            mode="append",
            storage_options=server.storage_options,
        )
    return {"staged": stage_version_s3(ns, server, ["a", "t"], make_table(3, start=100))}


def _mixed(staged: Any) -> BatchCommitTablesRequest:
    return batch(
        op_declare(["a", "n1"]),
        op_declare(["a", "n2"], properties={"k": "v"}),
        op_version(["a", "t"], staged),
        op_delete(["a", "old"], (1, 3)),
        op_deregister(["a", "gone"]),
    )


def _assert_after(ns: Any) -> None:
    assert ns.list_tables(ListTablesRequest(id=["a"])).tables == ["n1", "n2", "old", "other", "t"]
    assert ns.count_table_rows(CountTableRowsRequest(id=["a", "t"])).count == 8
    assert _versions(ns, ["a", "old"]) == [3]
    assert ns.describe_table(DescribeTableRequest(id=["a", "n2"])).properties == {"k": "v"}


def test_mixed_batch_on_s3(s3_root) -> None:
    ns, server = s3_root.ns, s3_root.server
    seeded = _seed(ns, server)
    assert backend.capabilities(ns).batch_commit is True
    response = ns.batch_commit_tables(_mixed(seeded["staged"]))
    _assert_after(ns)
    described = ns.describe_transaction(DescribeTransactionRequest(id=[response.transaction_id]))
    assert described.status == "SUCCEEDED"
    assert console_objects(server, s3_root.bucket) == []  # lease, journal, decision: gone


@pytest.mark.parametrize(
    "bad",
    [
        lambda s: batch(op_declare(["a", "t"])),  # exists
        lambda s: batch(op_declare(["nowhere", "x"])),  # no namespace
        lambda s: batch(op_version(["a", "t"], s, version=s.version + 1)),  # not latest + 1
        lambda s: batch(op_declare(["a", "x"]), op_delete(["a", "old"], (1, 4))),  # the latest
        lambda s: batch(op_declare(["a", "bad/name"])),
    ],
)
def test_invalid_batch_changes_no_object(s3_root, bad) -> None:
    ns, server = s3_root.ns, s3_root.server
    seeded = _seed(ns, server)
    before = server.objects(s3_root.bucket)  # every key and ETag, _console included
    with pytest.raises((InvalidInputError, TableAlreadyExistsError, LanceNamespaceError)):
        ns.batch_commit_tables(bad(seeded["staged"]))
    assert server.objects(s3_root.bucket) == before


def test_failure_during_apply_is_rolled_back(s3_root) -> None:
    ns, server = s3_root.ns, s3_root.server
    seeded = _seed(ns, server)
    before = bucket_state(server, s3_root.bucket)

    def hook(step: int, phase: str, detail: str) -> None:
        if phase == "apply.catalog":
            raise OSError(5, "injected I/O error")

    local_batch.set_fault_hook(hook)
    try:
        with pytest.raises(LanceNamespaceError, match="injected"):
            ns.batch_commit_tables(_mixed(seeded["staged"]))
    finally:
        local_batch.set_fault_hook(None)
    assert bucket_state(server, s3_root.bucket) == before
    assert console_objects(server, s3_root.bucket) == []


def test_protocol_writes_are_constant(s3_root) -> None:
    ns = s3_root.ns
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    store = objects.store_for(local_batch.context(ns, catalog_only=True))
    counts = {}
    for n in (1, 25):
        before = store.protocol_writes
        ns.batch_commit_tables(batch(*[op_declare(["a", f"b{n}_{i}"]) for i in range(n)]))
        counts[n] = store.protocol_writes - before
    # The lease, the journal, the decision, and (with this test's 1 s lease) its renewal
    # before the decision.
    assert counts[1] == counts[25] == 4


# -- processes --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def children() -> Iterator[list[ZygoteChild]]:
    kids = [ZygoteChild(CHILD), ZygoteChild(CHILD)]
    try:
        yield kids
    finally:
        for k in kids:
            k.close()


def _job(s3_root, request: BatchCommitTablesRequest, tmp: Path, name: str, **extra: Any) -> dict:
    path = tmp / f"{name}.json"
    path.write_text(request.to_json())
    return {
        "root": s3_root.target,
        "options": s3_root.server.storage_options,
        "request": str(path),
        "log": str(tmp / f"{name}.log"),
        "lease": LEASE,
        **extra,
    }


def _race(s3_root, children, tmp: Path, requests: list[BatchCommitTablesRequest]) -> list[dict]:
    go = tmp / "go"
    jobs = [
        _job(s3_root, r, tmp, f"race{i}", mode="race", ready=str(tmp / f"ready{i}"), go=str(go))
        for i, r in enumerate(requests)
    ]
    for child, job in zip(children, jobs, strict=True):
        child.send(**job)
    deadline = time.time() + 60
    while not all(Path(j["ready"]).exists() for j in jobs):  # both validated
        assert time.time() < deadline, "the racers never validated"
        time.sleep(0.01)
    go.touch()
    for child in children:
        child.receive()
    return [json.loads(Path(j["log"]).read_text()) for j in jobs]


@pytest.mark.slow
def test_racing_batches_on_one_table_exactly_one_wins(s3_root, children, tmp_path) -> None:
    ns, server = s3_root.ns, s3_root.server
    seeded = _seed(ns, server)
    staged_b = seeded["staged"]  # both stage version 2 of a$t
    results = _race(
        s3_root,
        children,
        tmp_path,
        [batch(op_version(["a", "t"], staged_b)), batch(op_version(["a", "t"], staged_b))],
    )
    winners = [r for r in results if "ok" in r]
    losers = [r for r in results if "error" in r]
    assert len(winners) == 1 and len(losers) == 1, results
    assert losers[0]["error"] == "ConcurrentModificationError", losers
    assert _versions(ns, ["a", "t"]) == [1, 2]
    assert console_objects(server, s3_root.bucket) == []


def test_racing_batches_on_disjoint_tables_all_win(s3_root, children, tmp_path) -> None:
    ns = s3_root.ns
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    results = _race(
        s3_root,
        children,
        tmp_path,
        [batch(op_declare(["a", "x1"]), op_declare(["a", "x2"])), batch(op_declare(["a", "y1"]))],
    )
    assert all("ok" in r for r in results), results
    assert ns.list_tables(ListTablesRequest(id=["a"])).tables == ["x1", "x2", "y1"]


def test_a_single_write_racing_a_batch_is_not_lost(s3_root, tmp_path) -> None:
    """An engine appends to a table (Lance's own conditional commit) while a batch adds a
    version to it: whichever commits first wins; the other fails cleanly, nothing is lost."""
    ns, server = s3_root.ns, s3_root.server
    seeded = _seed(ns, server)
    location = ns.describe_table(DescribeTableRequest(id=["a", "t"])).location

    def hook(step: int, phase: str, detail: str) -> None:
        if phase == "apply.version.put":  # the engine commits version 2 first
            lance.write_dataset(
                make_table(1, start=500),
                location,
                mode="append",
                storage_options=server.storage_options,
            )

    local_batch.set_fault_hook(hook)
    try:
        with pytest.raises(ConcurrentModificationError):
            ns.batch_commit_tables(batch(op_version(["a", "t"], seeded["staged"])))
    finally:
        local_batch.set_fault_hook(None)
    assert _versions(ns, ["a", "t"]) == [1, 2]
    assert ns.count_table_rows(CountTableRowsRequest(id=["a", "t"])).count == 6  # the engine's


# -- crashes ----------------------------------------------------------------------------------


@pytest.mark.slow  # a child process killed at each checkpoint: ~15 s
def test_kill_at_every_checkpoint_then_recover(s3_server, children, tmp_path) -> None:
    """A fresh bucket per kill point: the dead writer's lease expires, the next open recovers,
    and the namespace is exactly as before or exactly as after the batch. Every writer is
    killed first, then all their leases run out together, then each bucket is reopened. Each
    fresh bucket is a copy of one seeded bucket, made in the server (its staged manifest named
    in the copy), so that what "before" is is read once."""
    child = children[0]
    template = s3_server.new_bucket()
    template_ns = backend.connect(
        f"s3://{template}/root", storage_options=s3_server.storage_options
    )
    template_staged = _seed(template_ns, s3_server)["staged"]
    before = bucket_state(s3_server, template)

    def fresh() -> tuple[S3Root, dict[str, Any]]:
        bucket = s3_server.copy_bucket(template)
        target = f"s3://{bucket}/root"
        ns = backend.connect(target, storage_options=s3_server.storage_options)
        staged = dataclasses.replace(
            template_staged,
            manifest_path=template_staged.manifest_path.replace(
                f"s3://{template}/", f"s3://{bucket}/", 1
            ),
        )
        return S3Root(ns, bucket, target, s3_server), {"staged": staged}

    root, seeded = fresh()
    assert bucket_state(s3_server, root.bucket) == before  # the copy is the seeded namespace
    assert child.run(**_job(root, _mixed(seeded["staged"]), tmp_path, "count", mode="count")) == {
        "exit": 0
    }
    counted = json.loads((tmp_path / "count.log").read_text())
    calls = counted["calls"]
    decide = next(i for i, _, phase in calls if phase == "commit.decide")
    killed: list[tuple[int, str, S3Root]] = []
    for index, _step, phase in calls:
        root, seeded = fresh()
        job = _job(
            root, _mixed(seeded["staged"]), tmp_path, f"kill{index}", mode="kill", kill_at=index
        )
        assert child.run(**job) == {"signal": 9}, (index, phase)
        killed.append((index, phase, root))
    time.sleep(float(LEASE) + 0.2)  # every dead writer's lease expires
    seen = set()
    for index, phase, root in killed:
        reopened = backend.connect(root.target, storage_options=s3_server.storage_options)
        where = f"killed at checkpoint {index} ({phase})"
        # No journal, decision or hidden manifest is left; at most the dead writer's expired
        # lease, which the next writer takes over.
        left = console_objects(s3_server, root.bucket)
        assert set(left) <= {"root/_console/batch/lease.json"}, (where, left)
        if index <= decide:  # the decision object is not written before its checkpoint
            assert bucket_state(s3_server, root.bucket) == before, where
            seen.add("before")
        else:
            _assert_after(reopened)
            seen.add("after")
    assert seen == {"before", "after"}


def test_recovery_waits_for_a_live_lease(s3_root) -> None:
    """A journal whose writer still holds its lease is not touched by another open."""
    ns = s3_root.ns
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    ctx = local_batch.context(ns, catalog_only=True)
    store = objects.store_for(ctx)
    lease = objects.Lease(store, "someone-alive")
    assert lease.try_acquire()
    store.create(f"{objects.PENDING}batch-{'0' * 32}.json", b'{"txn_id": "x"}')
    assert objects.recover_on_open(ctx) == []  # the lease is live: nothing touched
    assert store.get(f"{objects.PENDING}batch-{'0' * 32}.json") is not None
    lease.release()
    assert objects.recover_on_open(ctx) == []  # not the console's: left, nothing else done
    assert store.get(f"{objects.PENDING}batch-{'0' * 32}.json") is not None


def test_a_journal_the_console_did_not_write_is_left_and_hides_nothing(
    s3_root, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A journal written by hand into ``pending`` named any key under the root: recovery
    deleted the object it gave as a declare's reserved marker (here a table's manifest), a
    key with ``..`` made every batch fail with obstore's ``TypeError``, and readers hid the
    versions it named (a table read as its version before). Only a journal of the console's
    own shape counts now (``journals.object_journal``); the others are left as they are."""
    ns, server = s3_root.ns, s3_root.server
    _seed(ns, server)
    ctx = local_batch.context(ns, catalog_only=True)
    store = objects.store_for(ctx)
    table = store.key(ns.describe_table(DescribeTableRequest(id=["a", "old"])).location)
    manifests = sorted(store.list(f"{table}/_versions/"))
    victim = manifests[0]
    txn = "batch-" + "0" * 31

    def journal(n: int, **steps: Any) -> str:
        body = {"format": 1, "txn_id": f"{txn}{n}", "record": {"kind": "batch"},
                "declares": [], "versions": [], "deletes": [], "deregisters": [], **steps}  # fmt: skip
        key = f"{objects.PENDING}{txn}{n}.json"
        store.create(key, json.dumps(body).encode())
        return key

    declare = {"object_id": "a$x", "location": "x", "properties": None, "reserved_existed": False}
    version = {"object_id": "a$old", "version": 3, "index": 0, "sha256": "0" * 64, "staged": "s"}
    keys = [
        journal(1, declares=[{**declare, "reserved": victim}]),
        journal(2, declares=[{**declare, "reserved": "../elsewhere/.lance-reserved"}]),
        journal(3, versions=[{**version, "final": "a/old.lance/_versions/../../x"}]),
        journal(4, versions=[{**version, "version": "3", "final": manifests[-1]}]),
    ]
    before = server.objects(s3_root.bucket)
    ns = backend.connect(s3_root.target, storage_options=server.storage_options)  # recovery
    assert ns.count_table_rows(CountTableRowsRequest(id=["a", "old"])).count == 9
    assert _versions(ns, ["a", "old"]) == [1, 2, 3]
    ns.batch_commit_tables(batch(op_declare(["a", "new"])))
    assert "new" in ns.list_tables(ListTablesRequest(id=["a"])).tables
    after = server.objects(s3_root.bucket)
    assert {k: before[k] for k in before if k.endswith(".manifest")} == {
        k: after[k] for k in before if k.endswith(".manifest")
    }
    assert all(store.get(key) is not None for key in keys)  # left where they are
    # once judged, they cost an open one LIST and no lease
    taken: list[str] = []
    acquire = objects.Lease.try_acquire
    monkeypatch.setattr(
        objects.Lease, "try_acquire", lambda self: taken.append("x") or acquire(self)
    )
    backend.connect(s3_root.target, storage_options=server.storage_options)
    assert taken == []


# -- a store whose conditional writes are not exclusive ------------------------------------------
@pytest.mark.slow  # a race with another writer, run until the store replaced a commit
def test_a_catalog_commit_replaced_by_another_writers_is_retried(s3_server) -> None:
    """moto's own If-None-Match (check, then store, no lock; widened here to 30 ms) lets
    another writer's commit of the same ``__manifest`` version replace the batch's after the
    batch's PUT succeeded. pylance's DirectoryNamespace declares tables meanwhile, without the
    console's lease, each declare from a fresh instance (one that kept its own replaced
    version cached would overwrite the catalog from it later: no writer can prevent that on
    such a store). Every batch reported as landed has its rows in the catalog afterwards (the
    replaced commit was read back, found missing and committed again); a refused one has none
    of them."""
    bucket = s3_server.new_bucket()
    s3_server.non_exclusive(bucket, 0.03)
    root = f"s3://{bucket}/root"
    ns = backend.connect(root, storage_options=s3_server.storage_options)
    ns.create_namespace(CreateNamespaceRequest(id=["lake"]))
    props = {"root": root, **{f"storage.{k}": v for k, v in s3_server.storage_options.items()}}
    stop = threading.Event()

    def declare_others() -> None:
        i = 0
        while not stop.is_set():
            DirectoryNamespace(**props).declare_table(DeclareTableRequest(id=["lake", f"x{i}"]))
            i += 1

    writer = threading.Thread(target=declare_others)
    writer.start()
    landed: list[list[str]] = []
    refused: list[list[str]] = []
    try:
        # At least six batches, and on until the store has replaced a commit (a race: on a
        # busy machine six batches may all miss the window), at most forty.
        b = 0
        while b < 6 or (not s3_server.replaced(bucket) and b < 40):
            names = [f"c{b}_{i}" for i in range(2)]
            b += 1
            try:
                ns.batch_commit_tables(batch(*[op_declare(["lake", n]) for n in names]))
                landed.append(names)
            except ConcurrentModificationError:
                refused.append(names)
    finally:
        stop.set()
        writer.join()
    catalog = lance.dataset(f"{root}/__manifest", storage_options=s3_server.storage_options)
    rows = set(catalog.to_table(columns=["object_id"]).column("object_id").to_pylist())
    assert s3_server.replaced(bucket) > 0  # the store did replace commits
    assert landed
    for names in landed:
        assert {f"lake${n}" for n in names} <= rows
    for names in refused:
        assert not {f"lake${n}" for n in names} & rows


def test_the_namespace_lists_its_batch_commits_on_s3(s3_root) -> None:
    """txsv.list_batch_transactions on an S3 root: both batch commits, newest first,
    as their record objects under <root>/_console/transactions/ hold them."""
    from backend.services import transactions as txsv

    ns, server = s3_root.ns, s3_root.server
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    first = ns.batch_commit_tables(batch(op_declare(["a", "x"]), op_declare(["a", "y"])))
    second = ns.batch_commit_tables(batch(op_declare(["a", "z"])))
    listed = txsv.list_batch_transactions(ns)
    assert [t.id for t in listed] == [second.transaction_id, first.transaction_id]
    assert [t.status for t in listed] == ["SUCCEEDED", "SUCCEEDED"]
    assert [t.tables for t in listed] == [[["a", "z"]], [["a", "x"], ["a", "y"]]]
    keys = [k for k in server.objects(s3_root.bucket) if "/_console/transactions/" in k]
    assert sorted(k.rsplit("/", 1)[1] for k in keys) == sorted(
        f"{t.id}.json" for t in listed
    )  # one record object per batch, read directly from the bucket
    again = backend.connect(s3_root.target, storage_options=server.storage_options)
    assert txsv.list_batch_transactions(again) == listed
