"""The local backend: targets, options, capabilities, and the pylance 14 defects it fixes.

Every defect test runs the same request against plain ``lance.namespace.DirectoryNamespace``
and against ``LocalNamespace`` on real directories: pylance's wrong answer is asserted where it
is deterministic for the pinned pylance (>=14,<15), and ours must be right. The transaction
record store (``backend.local.txn_store``) is tested for atomic writes and serialised updates across
threads and processes. (The cross-backend conformance suite is ``test_operations.py``.)
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest
from lance.namespace import DirectoryNamespace
from lance_namespace import (
    AlterTransactionRequest,
    BatchCommitTablesRequest,
    BatchDeleteTableVersionsRequest,
    CreateNamespaceRequest,
    CreateTableIndexRequest,
    CreateTableRequest,
    CreateTableVersionRequest,
    DeclareTableRequest,
    DeregisterTableRequest,
    DescribeTableIndexStatsRequest,
    DescribeTableRequest,
    DescribeTableVersionRequest,
    DescribeTableVersionResponse,
    DescribeTransactionRequest,
    DropTableIndexRequest,
    DropTableRequest,
    ListTableIndicesRequest,
    ListTablesRequest,
    ListTableVersionsRequest,
    RegisterTableRequest,
    RenameTableRequest,
)
from lance_namespace.errors import (
    ConcurrentModificationError,
    InvalidInputError,
    InvalidTableStateError,
    LanceNamespaceError,
    NamespaceNotFoundError,
    TableColumnNotFoundError,
    TableIndexAlreadyExistsError,
    TableVersionNotFoundError,
    TransactionNotFoundError,
)
from lance_namespace_urllib3_client.models import (
    AlterTransactionAction,
    AlterTransactionSetProperty,
    AlterTransactionSetStatus,
    AlterTransactionUnsetProperty,
    VersionRange,
)

import backend
import backend.local.batch
from backend.arrow.ipc import to_ipc_stream
from backend.local import LocalNamespace, txn_store
from backend.rules import alter_actions, index_rules
from backend.rules.columns import ColumnInfo
from backend.rules.index_rules import FTS_PARAMS, VECTOR_BUILD_PARAMS
from tests.support import batch, op_declare, stage_version, tree_digest

DIM = 32
ROWS = 300  # default table size (IVF_PQ needs >= 256 rows per partition to keep them all)


def make_data(n: int = ROWS, *, start: int = 0, dim: int = DIM, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    vectors = pa.FixedSizeListArray.from_arrays(
        pa.array(rng.random(n * dim, dtype=np.float32)), dim
    )
    ids = range(start, start + n)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "kind": pa.array(["function", "class", "method"][i % 3] for i in ids),
            "doc": pa.array(f"Return the running total of item {i} in the list" for i in ids),
            "tags": pa.array([["a", "b"] if i % 2 else ["c"] for i in ids], pa.list_(pa.string())),
            "vector": vectors,
        }
    )


def plain(root: Path) -> DirectoryNamespace:
    return DirectoryNamespace(root=str(root))


def ours(root: Path) -> LocalNamespace:
    ns = backend.connect(str(root))
    assert isinstance(ns, LocalNamespace)
    return ns


def new_table(ns, table_id: list[str], data: pa.Table | None = None) -> None:
    data = make_data() if data is None else data
    ns.create_table(CreateTableRequest(id=table_id), to_ipc_stream(data))


def dataset(ns, table_id: list[str]) -> lance.LanceDataset:
    location = ns.describe_table(DescribeTableRequest(id=table_id)).location
    return lance.dataset(location)


def set_status(status: str) -> AlterTransactionAction:
    return AlterTransactionAction(set_status_action=AlterTransactionSetStatus(status=status))


def set_prop(key: str, value: str, mode: str | None = None) -> AlterTransactionAction:
    return AlterTransactionAction(
        set_property_action=AlterTransactionSetProperty(key=key, value=value, mode=mode)
    )


def unset_prop(key: str, mode: str | None = None) -> AlterTransactionAction:
    return AlterTransactionAction(
        unset_property_action=AlterTransactionUnsetProperty(key=key, mode=mode)
    )


def describe_txn(ns, txn_id: list[str]):
    return ns.describe_transaction(DescribeTransactionRequest(id=txn_id))


def alter(ns, txn_id: list[str], *actions: AlterTransactionAction):
    return ns.alter_transaction(AlterTransactionRequest(id=txn_id, actions=list(actions)))


# --------------------------------------------------------------------------- targets, options


def test_relative_path_becomes_absolute_file_uri(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    ns = backend.connect("rel dir#1")
    assert ns.root == (tmp_path / "rel dir#1").as_uri()
    assert ns.local_path == tmp_path / "rel dir#1"
    new_table(ns, ["t"], make_data(5))
    assert (tmp_path / "rel dir#1" / "t.lance" / "_versions").is_dir()
    assert ns.open_dataset(["t"]).count_rows() == 5


def test_file_uri_target_is_decoded(tmp_path: Path) -> None:
    root = tmp_path / "with space%"
    root.mkdir()
    ns = backend.connect(root.as_uri())
    assert ns.root == root.as_uri()
    new_table(ns, ["t"], make_data(4))
    same = backend.connect(str(root))
    assert same.list_tables(ListTablesRequest(id=[])).tables == ["t"]
    assert same.open_dataset(["t"]).count_rows() == 4


def test_target_that_is_a_file_is_rejected(tmp_path: Path) -> None:
    f = tmp_path / "file.txt"
    f.write_text("x")
    with pytest.raises(InvalidInputError, match="not a directory"):
        backend.connect(str(f))


def test_memory_target_is_shared_within_the_process() -> None:
    root = f"memory://test-{id(object())}"
    a = backend.connect(root)
    new_table(a, ["t"], make_data(7))
    b = backend.connect(root)
    assert b.root == root
    assert b.list_tables(ListTablesRequest(id=[])).tables == ["t"]
    assert b.open_dataset(["t"]).count_rows() == 7
    # Plain DirectoryNamespace cannot even describe its own memory table's transaction
    # (every call opens a fresh in-memory store); ours shares one lance Session per root.
    assert alter_actions.normalize_status(describe_txn(b, ["t", "1"]).status) == "SUCCEEDED"
    assert isinstance(b.txn_store, txn_store.MemoryTxnStore)


@pytest.mark.parametrize("option", ["api_key", "auth_token", "headers", "timeout", "max_retries"])
def test_rest_only_options_are_rejected(tmp_path: Path, option: str) -> None:
    with pytest.raises(InvalidInputError, match="only apply to REST") as info:
        backend.connect(str(tmp_path), **{option: "x"})
    assert option in str(info.value)
    assert info.value.server_message  # our error attributes are attached


def test_unknown_option_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="unknown option"):
        backend.connect(str(tmp_path), colour="blue")


def test_storage_options_from_dict_and_prefixed_keys(tmp_path: Path) -> None:
    ns = backend.connect(
        str(tmp_path),
        storage_options={"region": "eu-west-1"},
        **{"storage.timeout": "30s", "storage.allow_http": True},
    )
    assert ns.storage_options == {"region": "eu-west-1", "timeout": "30s", "allow_http": "True"}
    assert ns.delimiter == "$"
    assert ns.format_id(["a", "b"]) == "a$b"
    new_table(ns, ["t"], make_data(3))  # the options reach pylance without breaking local IO
    assert ns.open_dataset(["t"]).count_rows() == 3


@pytest.mark.parametrize("delimiter", [".", ":", "|", "/", ""])
def test_local_delimiter_is_always_dollar(tmp_path: Path, delimiter: str) -> None:
    """pylance's catalog joins id parts with "$": any other delimiter would misname objects."""
    fresh = tmp_path / "fresh"
    with pytest.raises(InvalidInputError, match="delimiter"):
        backend.connect(str(fresh), delimiter=delimiter)
    assert not fresh.exists()  # refused before anything was opened or created
    assert backend.connect(str(tmp_path), delimiter="$").delimiter == "$"


def test_capabilities(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    caps = backend.capabilities(ns)
    assert caps.kind == "local"
    assert caps.progress_events is True
    assert caps.wire_log is False
    assert set(VECTOR_BUILD_PARAMS) | set(FTS_PARAMS) <= caps.honoured_index_params
    assert "distance_type" in caps.honoured_index_params
    assert caps.batch_commit is True  # file roots commit batches atomically
    assert backend.capabilities(ns, probe=True) == caps  # nothing to probe locally
    assert ns.capabilities(probe=True).batch_commit is True
    memory = backend.connect(f"memory://caps-{id(object())}")
    assert backend.capabilities(memory).batch_commit is True


def test_pylance_errors_carry_our_attributes(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    with pytest.raises(LanceNamespaceError) as info:
        ns.describe_table(DescribeTableRequest(id=["missing"]))
    for attr in ("status", "server_message", "detail", "instance"):
        assert hasattr(info.value, attr)
    assert "missing" in info.value.server_message


def test_rename_table_pylance_has_none_ours_renames(tmp_path: Path) -> None:
    new_table(plain(tmp_path), ["t"], make_data(2))
    with pytest.raises(NotImplementedError):  # pylance: not a LanceNamespaceError at all
        plain(tmp_path).rename_table(RenameTableRequest(id=["t"], new_table_name="u"))
    # Root-level tables are listed by directory name: a rename would not show, so it is refused
    # (tests/backend/test_lifecycle.py renames inside namespaces).
    with pytest.raises(InvalidInputError, match="root-level"):
        ours(tmp_path).rename_table(RenameTableRequest(id=["t"], new_table_name="u"))
    assert ours(tmp_path).list_tables(ListTablesRequest(id=[])).tables == ["t"]


def test_write_guard_wraps_every_single_operation_write(tmp_path: Path, monkeypatch) -> None:
    entered: list[list[list[str]]] = []

    @contextlib.contextmanager
    def recording_guard(ns, tables):
        entered.append([list(t) for t in tables])
        yield

    monkeypatch.setattr(backend.local.batch, "guard_single_op", recording_guard)
    ns = ours(tmp_path)
    ns.create_namespace(CreateNamespaceRequest(id=["n"]))
    new_table(ns, ["n", "t"], make_data(5))
    ns.declare_table(DeclareTableRequest(id=["n", "d"]))
    ns.create_table_index(CreateTableIndexRequest(id=["n", "t"], column="id", index_type="BTREE"))
    ns.drop_table_index(DropTableIndexRequest(id=["n", "t"], index_name="id_idx"))
    assert entered == [[["n"]], [["n", "t"]], [["n", "d"]], [["n", "t"]], [["n", "t"]]]


# --------------------------------------------------------------------------- (a) transactions


def test_alter_transaction_applies_actions_plain_drops_them(tmp_path: Path) -> None:
    new_table(plain(tmp_path), ["t"], make_data(5))
    txn = ["t", "1"]

    resp = plain(tmp_path).alter_transaction(
        AlterTransactionRequest(id=txn, actions=[set_prop("reviewer", "alice")])
    )
    assert "reviewer" not in (resp.properties or {})  # pylance 14: the action is dropped
    assert "reviewer" not in (describe_txn(plain(tmp_path), txn).properties or {})

    ns = ours(tmp_path)
    resp = alter(ns, txn, set_prop("reviewer", "alice"), set_status("Canceled"))
    assert resp.status == "CANCELED"
    assert resp.properties["reviewer"] == "alice"
    # Durable, and stored where pylance's core keeps it: plain pylance (and pylance's REST
    # adapter serving this directory) reads the same alteration.
    assert describe_txn(ours(tmp_path), txn).properties["reviewer"] == "alice"
    seen_by_pylance = describe_txn(plain(tmp_path), txn)
    assert seen_by_pylance.properties["reviewer"] == "alice"
    assert seen_by_pylance.status.upper() == "CANCELED"

    alter(ns, txn, unset_prop("reviewer"))
    assert "reviewer" not in describe_txn(ns, txn).properties


def test_transaction_addressed_by_version_or_uuid_is_one_transaction(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    new_table(ns, ["t"], make_data(5))
    uuid = describe_txn(ns, ["t", "1"]).properties["uuid"]
    alter(ns, ["t", uuid], set_prop("note", "by uuid"))
    assert describe_txn(ns, ["t", "1"]).properties["note"] == "by uuid"
    assert describe_txn(ns, ["t", uuid]).properties == describe_txn(ns, ["t", "1"]).properties


def test_alter_transaction_is_all_or_nothing(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    new_table(ns, ["t"], make_data(5))
    txn = ["t", "1"]
    alter(ns, txn, set_prop("owner", "ops"))
    before = describe_txn(ns, txn)

    with pytest.raises(ConcurrentModificationError, match=r"^action 3 .*already exists"):
        alter(ns, txn, set_status("Failed"), set_prop("x", "1"), set_prop("owner", "dev", "Fail"))
    with pytest.raises(InvalidInputError, match=r"^action 2 .*does not exist"):
        alter(ns, txn, set_prop("x", "2"), unset_prop("absent", mode="fail"))
    with pytest.raises(
        InvalidInputError, match=r"^action 2 .*'operation' is recorded by .* commit"
    ):
        alter(ns, txn, set_prop("y", "3"), set_prop("operation", "Append"))
    with pytest.raises(InvalidInputError, match=r"'uuid' is recorded by .*cannot be removed"):
        alter(ns, txn, unset_prop("uuid"))
    with pytest.raises(InvalidInputError, match="unknown set-property mode"):
        alter(ns, txn, set_prop("z", "1", mode="sometimes"))
    with pytest.raises(InvalidInputError, match="(?i)action 2: only one set-status"):
        alter(ns, txn, set_status("Failed"), set_status("Canceled"))
    with pytest.raises(
        InvalidInputError, match="(?i)action 3: property 'x' is already changed by action 1"
    ):
        alter(ns, txn, set_prop("x", "1"), set_prop("y", "2"), unset_prop("x"))
    with pytest.raises(InvalidInputError, match="exactly one"):
        alter(
            ns,
            txn,
            AlterTransactionAction(
                set_status_action=AlterTransactionSetStatus(status="FAILED"),
                unset_property_action=AlterTransactionUnsetProperty(key="owner"),
            ),
        )

    after = describe_txn(ns, txn)
    assert after.properties == before.properties
    assert after.status == before.status == "SUCCEEDED"


def test_set_and_skip_modes(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    new_table(ns, ["t"], make_data(5))
    txn = ["t", "1"]
    alter(ns, txn, set_prop("k", "1"))
    alter(ns, txn, set_prop("k", "2", mode="Skip"))
    assert describe_txn(ns, txn).properties["k"] == "1"
    alter(ns, txn, set_prop("k", "3", mode="OVERWRITE"))
    assert describe_txn(ns, txn).properties["k"] == "3"
    alter(ns, txn, set_prop("operation", "x", mode="skip"))  # skip keeps even reserved keys
    alter(ns, txn, unset_prop("never", mode="Skip"))
    alter(ns, txn, unset_prop("never"))  # the spec's default unset mode is Skip
    alter(ns, txn, set_prop("new", "v", mode="Fail"))  # Fail only fails on an existing key
    props = describe_txn(ns, txn).properties
    assert (props["k"], props["new"], props["operation"]) == ("3", "v", "Overwrite")


@pytest.mark.parametrize("spelling", ["Canceled", "canceled", "CANCELED", "cancelled"])
def test_status_is_case_insensitive_and_reported_upper_case(tmp_path: Path, spelling) -> None:
    ns = ours(tmp_path)
    new_table(ns, ["t"], make_data(3))
    assert alter(ns, ["t", "1"], set_status(spelling)).status == "CANCELED"
    assert describe_txn(ns, ["t", "1"]).status == "CANCELED"


@pytest.mark.parametrize("backwards", ["Queued", "running"])
def test_finished_transaction_cannot_go_back(tmp_path: Path, backwards: str) -> None:
    ns = ours(tmp_path)
    new_table(ns, ["t"], make_data(3))
    with pytest.raises(InvalidInputError, match="cannot change status from SUCCEEDED to"):
        alter(ns, ["t", "1"], set_status(backwards))
    with pytest.raises(InvalidInputError, match="unknown transaction status"):
        alter(ns, ["t", "1"], set_status("done"))
    assert describe_txn(ns, ["t", "1"]).status == "SUCCEEDED"


def test_missing_transactions(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    new_table(ns, ["t"], make_data(3))
    with pytest.raises(TransactionNotFoundError):
        describe_txn(ns, ["t", "7"])
    with pytest.raises(TransactionNotFoundError):
        alter(ns, ["t", "7"], set_prop("a", "b"))
    with pytest.raises(TransactionNotFoundError):
        describe_txn(ns, ["no-such-job"])


def test_batch_records_are_the_store_transactions(tmp_path: Path) -> None:
    """txn_store holds the batch commits' records: a batch is a transaction addressed by its
    ``batch-<hex>`` id, altered with the batch policy. Other records in the store are not
    transactions (the old path describing arbitrary store records is gone)."""
    ns = ours(tmp_path)
    ns.create_namespace(CreateNamespaceRequest(id=["n"]))
    resp = ns.batch_commit_tables(batch(op_declare(["n", "d1"]), op_declare(["n", "d2"])))
    txn = [resp.transaction_id]
    assert backend.local.batch.is_batch_transaction_id(txn)

    described = describe_txn(ns, txn)
    assert described.status == "SUCCEEDED"
    assert described.properties["operation"] == "BatchCommitTables"
    assert described.properties["declare_table_count"] == "2"

    resp = alter(ns, txn, set_prop("note", "done"))
    assert (resp.status, resp.properties["note"]) == ("SUCCEEDED", "done")
    with pytest.raises(InvalidInputError, match="SUCCEEDED is final"):
        alter(ns, txn, set_status("Canceled"))
    with pytest.raises(InvalidInputError, match="'operation_count' is recorded by"):
        alter(ns, txn, unset_prop("operation_count"))
    with pytest.raises(ConcurrentModificationError, match="already exists"):
        alter(ns, txn, set_prop("note", "again", mode="Fail"))
    record = ns.txn_store.get(txn[0])
    assert record["status"] == "SUCCEEDED" and record["properties"]["note"] == "done"
    assert [h["actions"] for h in record["history"]] == [
        ["set property note = 'done' (if it exists: Overwrite)"]
    ]

    ns.txn_store.put("job-1", {"kind": "job", "status": "QUEUED", "properties": {}})
    with pytest.raises(TransactionNotFoundError):
        describe_txn(ns, ["job-1"])
    with pytest.raises(TransactionNotFoundError):
        alter(ns, ["job-1"], set_status("Running"))
    assert ns.txn_store.get("job-1")["status"] == "QUEUED"
    # A batch id nobody issued is not found either.
    with pytest.raises(TransactionNotFoundError):
        describe_txn(ns, ["batch-" + "0" * 32])


# --------------------------------------------------------------------------- (b) index builds


def test_vector_build_params_honoured_plain_ignores_them(tmp_path: Path) -> None:
    request = CreateTableIndexRequest(
        id=["t"],
        column="vector",
        index_type="IVF_PQ",
        name="v",
        distance_type="cosine",
        num_partitions=2,
        num_sub_vectors=4,
    )
    other = tmp_path / "plain"
    new_table(plain(other), ["t"], make_data(520))
    plain(other).create_table_index(request)
    ignored = dataset(plain(other), ["t"]).stats.index_stats("v")["indices"][0]
    assert (ignored["num_partitions"], ignored["sub_index"]["num_sub_vectors"]) == (1, 16)

    ns = ours(tmp_path / "ours")
    new_table(ns, ["t"], make_data(520))
    ns.create_table_index(request)
    built = ns.open_dataset(["t"]).stats.index_stats("v")["indices"][0]
    assert built["num_partitions"] == 2
    assert built["sub_index"]["num_sub_vectors"] == 4
    assert built["metric_type"] == "cosine"


def test_lance_reducing_partitions_is_reported(tmp_path: Path) -> None:
    """With too few rows lance trains fewer IVF_PQ partitions than asked; we warn."""
    ns = ours(tmp_path)
    new_table(ns, ["t"], make_data(300))
    request = CreateTableIndexRequest(
        id=["t"], column="vector", index_type="IVF_PQ", num_partitions=2, num_sub_vectors=4
    )
    with pytest.warns(UserWarning, match="built 1 IVF partition"):
        ns.create_table_index(request)
    assert (
        ns.open_dataset(["t"]).stats.index_stats("vector_idx")["indices"][0]["num_partitions"] == 1
    )


def test_training_params_land_in_the_index(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    new_table(ns, ["t"], make_data())
    ns.create_table_index(
        CreateTableIndexRequest(
            id=["t"],
            column="vector",
            index_type="IVF_PQ",
            name="v",
            num_partitions=2,
            num_sub_vectors=8,
            num_bits=4,
            sample_rate=7,
            max_iterations=9,
        )
    )
    (idx,) = ns.list_table_indices(ListTableIndicesRequest(id=["t"])).indexes
    details = json.loads(idx.index_details)
    assert details["compression"] == {"type": "pq", "num_bits": 4, "num_sub_vectors": 8}
    hints = details["runtime_hints"]
    assert hints["lance.ivf.max_iters"] == "9"
    assert hints["lance.ivf.sample_rate"] == "7"


def test_hnsw_params_honoured(tmp_path: Path) -> None:
    request = CreateTableIndexRequest(
        id=["t"],
        column="vector",
        index_type="IVF_HNSW_SQ",
        name="h",
        distance_type="dot",
        num_partitions=2,
        m=7,
        ef_construction=33,
    )
    other = tmp_path / "plain"
    new_table(plain(other), ["t"], make_data())
    plain(other).create_table_index(request)
    (pl,) = plain(other).list_table_indices(ListTableIndicesRequest(id=["t"])).indexes
    assert json.loads(pl.index_details)["hnsw"]["max_connections"] == 20  # pylance's default

    ns = ours(tmp_path / "ours")
    new_table(ns, ["t"], make_data())
    ns.create_table_index(request)
    stats = ns.open_dataset(["t"]).stats.index_stats("h")["indices"][0]
    assert stats["sub_index"]["params"]["m"] == 7
    assert stats["sub_index"]["params"]["ef_construction"] == 33
    assert stats["num_partitions"] == 2


def test_target_partition_size_honoured(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    new_table(ns, ["t"], make_data())
    ns.create_table_index(
        CreateTableIndexRequest(
            id=["t"], column="vector", index_type="IVF_FLAT", name="f", target_partition_size=100
        )
    )
    (idx,) = ns.list_table_indices(ListTableIndicesRequest(id=["t"])).indexes
    assert json.loads(idx.index_details)["target_partition_size"] == 100


def test_progress_events_and_transaction_id(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    new_table(ns, ["t"], make_data(520))
    events: list[dict] = []
    resp = ns.create_table_index(
        CreateTableIndexRequest(
            id=["t"], column="vector", index_type="IVF_PQ", num_partitions=2, num_sub_vectors=4
        ),
        progress=events.append,
    )
    stages = [e["stage"] for e in events]
    assert {"train_ivf", "shuffle"} <= set(stages)
    assert all(
        set(e) == {"event", "stage", "completed", "total", "unit", "fraction"} for e in events
    )
    assert events[0]["event"] == "start"
    assert events[-1]["event"] == "complete"
    shuffle_done = [e for e in events if e["stage"] == "shuffle" and e["event"] == "complete"]
    assert shuffle_done[0]["completed"] == shuffle_done[0]["total"] == 520

    txn = describe_txn(ns, ["t", "2"])
    assert txn.properties["uuid"] == resp.transaction_id
    assert txn.properties["operation"] == "CreateIndex"

    fts_events: list[dict] = []
    ns.create_table_index(
        CreateTableIndexRequest(id=["t"], column="doc", index_type="FTS"),
        progress=fts_events.append,
    )
    assert "tokenize_docs" in {e["stage"] for e in fts_events}


def test_a_failing_progress_callback_does_not_break_the_build(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    new_table(ns, ["t"], make_data(20))

    def broken(event: dict) -> None:
        raise RuntimeError("display gone")

    with pytest.warns(RuntimeWarning, match="display gone"):
        ns.create_table_index(
            CreateTableIndexRequest(id=["t"], column="doc", index_type="FTS", name="f"),
            progress=broken,
        )
    assert [d.name for d in ns.open_dataset(["t"]).describe_indices()] == ["f"]


def test_fts_and_scalar_params_land_in_the_index(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    new_table(ns, ["t"], make_data(30))
    ns.create_table_index(
        CreateTableIndexRequest(
            id=["t"],
            column="doc",
            index_type="FTS",
            name="fts",
            with_position=True,
            base_tokenizer="whitespace",
            language="English",
            max_token_length=12,
            lower_case=False,
            stem=False,
            remove_stop_words=True,
            ascii_folding=False,
        )
    )
    ns.create_table_scalar_index(
        CreateTableIndexRequest(id=["t"], column="kind", index_type="BITMAP", name="k")
    )
    ns.create_table_scalar_index(
        CreateTableIndexRequest(id=["t"], column="tags", index_type="LABEL_LIST", name="tg")
    )
    by_name = {
        i.index_name: i for i in ns.list_table_indices(ListTableIndicesRequest(id=["t"])).indexes
    }
    fts = json.loads(by_name["fts"].index_details)
    assert fts["with_position"] is True
    assert fts["base_tokenizer"] == "whitespace"
    assert (fts["max_token_length"], fts["lower_case"], fts["stem"]) == (12, False, False)
    assert (fts["remove_stop_words"], fts["ascii_folding"]) == (True, False)
    assert by_name["k"].index_type == "Bitmap"
    assert by_name["tg"].index_type == "LabelList"


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"column": "id", "index_type": "HNSW"}, InvalidInputError, "Unknown index type 'HNSW'"),
        ({"column": "nope", "index_type": "BTREE"}, TableColumnNotFoundError, "nope"),
        (
            {"column": "id", "index_type": "IVF_PQ"},
            InvalidInputError,
            "IVF_PQ does not fit column 'id'",
        ),
        (
            {"column": "doc", "index_type": "LABEL_LIST"},
            InvalidInputError,
            "LABEL_LIST does not fit column 'doc'",
        ),
        (
            {"column": "vector", "index_type": "BTREE"},
            InvalidInputError,
            "BTREE does not fit column 'vector'",
        ),
        ({"column": "id", "index_type": "FTS"}, InvalidInputError, "FTS does not fit column 'id'"),
        (
            {"column": "id", "index_type": "BTREE", "num_partitions": 4},
            InvalidInputError,
            "num_partitions does not apply to BTREE",
        ),
        (
            {"column": "vector", "index_type": "IVF_FLAT", "num_sub_vectors": 4},
            InvalidInputError,
            "num_sub_vectors does not apply",
        ),
        (
            {"column": "vector", "index_type": "IVF_PQ", "m": 4},
            InvalidInputError,
            "m does not apply",
        ),
        (
            {"column": "id", "index_type": "BTREE", "distance_type": "cosine"},
            InvalidInputError,
            "only applies to vector",
        ),
        (
            {"column": "vector", "index_type": "IVF_FLAT", "distance_type": "manhattan"},
            InvalidInputError,
            "Unknown distance type 'manhattan'",
        ),
        (
            {"column": "doc", "index_type": "BTREE", "stem": True},
            InvalidInputError,
            "only apply to FTS",
        ),
        (
            {"column": "vector", "index_type": "IVF_PQ", "num_sub_vectors": 5},
            InvalidInputError,
            r"num_sub_vectors \(5\) must divide the dimension \(32\)",
        ),
    ],
)
def test_index_requests_are_validated(tmp_path: Path, kwargs, error, message) -> None:
    ns = ours(tmp_path)
    new_table(ns, ["t"], make_data(20))
    with pytest.raises(error, match=message):
        ns.create_table_index(CreateTableIndexRequest(id=["t"], **kwargs))
    assert ns.open_dataset(["t"]).describe_indices() == []
    assert ns.open_dataset(["t"]).version == 1


def test_duplicate_index_and_vector_on_scalar_endpoint(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    new_table(ns, ["t"], make_data(20))
    ns.create_table_index(CreateTableIndexRequest(id=["t"], column="id", index_type="btree"))
    with pytest.raises(TableIndexAlreadyExistsError, match="id_idx"):
        ns.create_table_index(CreateTableIndexRequest(id=["t"], column="id", index_type="BITMAP"))
    with pytest.raises(InvalidInputError, match="vector index"):
        ns.create_table_scalar_index(
            CreateTableIndexRequest(id=["t"], column="vector", index_type="IVF_FLAT")
        )


def type_problems(index_type: str, arrow_type: pa.DataType, **kwargs) -> list[str]:
    """What the local backend's build check says of ``index_type`` on a column of this type."""
    request = CreateTableIndexRequest(id=["t"], column="c", index_type=index_type, **kwargs)
    return index_rules.column_problems(request, ColumnInfo.of("c", arrow_type), None)


def test_index_type_fit_table() -> None:
    fsl = pa.list_(pa.float32(), 8)
    assert type_problems("IVF_PQ", fsl) == []
    assert type_problems("IVF_PQ", pa.list_(pa.string(), 8)) != []
    assert type_problems("BTREE", pa.timestamp("us")) == []
    assert type_problems("BITMAP", pa.string()) == []
    assert type_problems("LABEL_LIST", pa.large_list(pa.int32())) == []
    assert type_problems("FTS", pa.large_string()) == []
    assert type_problems("INVERTED", pa.list_(pa.string())) == []  # INVERTED is FTS
    assert type_problems("NGRAM", pa.int64()) != []
    assert type_problems("ZONEMAP", pa.struct([("a", pa.int8())])) != []
    assert type_problems("BLOOMFILTER", pa.bool_()) != []
    assert type_problems("BLOOMFILTER", pa.binary(4)) != []
    assert type_problems("BTREE", pa.dictionary(pa.int32(), pa.string())) != []
    assert type_problems("ZONEMAP", pa.dictionary(pa.int32(), pa.string())) == []


def test_multivector_index_builds_with_cosine(tmp_path: Path) -> None:
    """pylance builds vector indexes on list<fixed_size_list<float>> columns (cosine only)."""
    fsl = pa.list_(pa.float32(), 8)
    assert type_problems("IVF_FLAT", pa.list_(fsl), distance_type="cosine") == []
    rows, per_row, dim = 64, 2, 8
    rng = np.random.default_rng(0)
    inner = pa.FixedSizeListArray.from_arrays(
        pa.array(rng.random(rows * per_row * dim, dtype=np.float32)), dim
    )
    offsets = pa.array(range(0, rows * per_row + 1, per_row), pa.int32())
    data = pa.table({"mv": pa.ListArray.from_arrays(offsets, inner)})
    ns = ours(tmp_path)
    new_table(ns, ["t"], data)
    ns.create_table_index(
        CreateTableIndexRequest(
            id=["t"], column="mv", index_type="IVF_FLAT", distance_type="cosine", num_partitions=1
        )
    )
    (idx,) = ns.open_dataset(["t"]).describe_indices()
    assert idx.name == "mv_idx" and idx.field_names == ["mv"]


# --------------------------------------------------------------------------- (c) distance type


@pytest.mark.parametrize(
    ("metric", "expected"), [("cosine", "cosine"), ("DOT", "dot"), ("euclidean", "l2")]
)
def test_index_stats_report_distance_type(tmp_path: Path, metric: str, expected: str) -> None:
    ns = ours(tmp_path)
    new_table(ns, ["t"], make_data(60))
    ns.create_table_index(
        CreateTableIndexRequest(
            id=["t"],
            column="vector",
            index_type="IVF_FLAT",
            name="f",
            distance_type=metric,
            num_partitions=2,
        )
    )
    request = DescribeTableIndexStatsRequest(id=["t"], index_name="f")
    assert plain(tmp_path).describe_table_index_stats(request).distance_type is None
    stats = ns.describe_table_index_stats(request)
    assert stats.distance_type == expected
    assert stats.num_indexed_rows == 60


def test_scalar_index_stats_have_no_distance_type(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    new_table(ns, ["t"], make_data(10))
    ns.create_table_index(CreateTableIndexRequest(id=["t"], column="id", index_type="BTREE"))
    stats = ns.describe_table_index_stats(
        DescribeTableIndexStatsRequest(id=["t"], index_name="id_idx")
    )
    assert stats.distance_type is None
    assert stats.num_indexed_rows == 10


# --------------------------------------------------------------------------- (d) version deletes


def versions_of(ns, table_id: list[str]) -> list[int]:
    return sorted(
        v.version for v in ns.list_table_versions(ListTableVersionsRequest(id=table_id)).versions
    )


def with_versions(ns, table_id: list[str], count: int) -> None:
    new_table(ns, table_id, make_data(2))
    for i in range(1, count):
        ns.open_dataset(table_id).insert(make_data(2, start=2 * i))


def test_deleting_the_latest_version_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "plain"
    pl = plain(other)
    new_table(pl, ["t"], make_data(2))
    for i in range(1, 4):
        dataset(pl, ["t"]).insert(make_data(2, start=2 * i))
    pl.batch_delete_table_versions(
        {"id": ["t"], "ranges": [{"start_version": 4, "end_version": 5}]}
    )
    # pylance: the table silently rolls back to version 3 (2 rows lost).
    assert (dataset(pl, ["t"]).version, dataset(pl, ["t"]).count_rows()) == (3, 6)

    ns = ours(tmp_path / "ours")
    with_versions(ns, ["t"], 4)
    for start, end in ((4, 5), (3, -1), (1, -1), (1, 10)):
        with pytest.raises(InvalidInputError, match="covers version 4, the latest version"):
            ns.batch_delete_table_versions(
                BatchDeleteTableVersionsRequest(
                    id=["t"], ranges=[VersionRange(start_version=start, end_version=end)]
                )
            )
    with pytest.raises(InvalidInputError, match="versions start at 1"):  # was accepted
        ns.batch_delete_table_versions(
            {"id": ["t"], "ranges": [{"start_version": 0, "end_version": 2}]}
        )
    assert versions_of(ns, ["t"]) == [1, 2, 3, 4]

    resp = ns.batch_delete_table_versions(
        {"id": ["t"], "ranges": [{"start_version": 1, "end_version": 3}]}
    )
    assert resp.deleted_count == 2
    assert versions_of(ns, ["t"]) == [3, 4]
    resp = ns.batch_delete_table_versions(
        {"id": ["t"], "ranges": [{"start_version": 4, "end_version": -1}]}, allow_latest=True
    )
    assert resp.deleted_count == 1
    assert ns.open_dataset(["t"]).version == 3


@pytest.mark.parametrize(
    ("ranges", "message"),
    [
        ([], "No version ranges"),
        ([(3, 2)], "empty or inverted"),
        ([(2, 2)], "empty or inverted"),
        ([(1, 2), (3, 1)], "empty or inverted"),
        ([(-1, 2)], "versions start at 1"),
        ([(0, 2)], "versions start at 1"),
        ([(1, -5)], r"\[1, -5\) is empty or inverted"),
    ],
)
def test_empty_or_inverted_ranges_are_refused(tmp_path: Path, ranges, message) -> None:
    request = {
        "id": ["t"],
        "ranges": [{"start_version": s, "end_version": e} for s, e in ranges],
    }
    ns = ours(tmp_path)
    with_versions(ns, ["t"], 3)
    with pytest.raises(InvalidInputError, match=message):
        ns.batch_delete_table_versions(request)
    assert versions_of(ns, ["t"]) == [1, 2, 3]
    if len(ranges) == 1 and 0 <= ranges[0][1] <= ranges[0][0]:
        # pylance accepts the same request and silently deletes nothing.
        assert plain(tmp_path).batch_delete_table_versions(request) == {"deleted_count": 0}
        assert versions_of(ns, ["t"]) == [1, 2, 3]


# --------------------------------------------------------------------------- versions: models & dicts


def test_version_operations_take_models_or_dicts(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    with_versions(ns, ["t"], 2)
    as_model = ns.describe_table_version(DescribeTableVersionRequest(id=["t"], version=1))
    as_dict = ns.describe_table_version({"id": ["t"], "version": 1})
    assert isinstance(as_model, DescribeTableVersionResponse)
    assert as_model == as_dict
    assert as_model.version.version == 1
    latest = ns.describe_table_version({"id": ["t"]})
    assert latest.version.version == 2
    with pytest.raises(TableVersionNotFoundError):
        ns.describe_table_version({"id": ["t"], "version": 9})
    with pytest.raises(InvalidInputError):
        ns.describe_table_version({"id": ["t"], "version": "two"})

    staged = stage_version(ns, ["t"], make_data(3, start=100))
    created = ns.create_table_version(
        {"id": ["t"], "version": staged.version, "manifest_path": staged.manifest_path}
    )
    assert created.version.version == 3
    staged = stage_version(ns, ["t"], make_data(1, start=200))
    created = ns.create_table_version(
        CreateTableVersionRequest(id=["t"], version=4, manifest_path=staged.manifest_path)
    )
    assert created.version.version == 4
    assert ns.open_dataset(["t"]).count_rows() == staged.num_rows == 8


def test_list_table_versions_pages(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    with_versions(ns, ["t"], 5)
    first = ns.list_table_versions(ListTableVersionsRequest(id=["t"], limit=2))
    assert [v.version for v in first.versions] == [1, 2]
    # Delete the next page's first version: the token still resumes in the right place.
    ns.batch_delete_table_versions(
        {"id": ["t"], "ranges": [{"start_version": 3, "end_version": 4}]}
    )
    rest = ns.list_table_versions(
        ListTableVersionsRequest(id=["t"], limit=2, page_token=first.page_token)
    )
    assert [v.version for v in rest.versions] == [4, 5]
    assert not rest.page_token
    with pytest.raises(InvalidInputError, match="page_token"):
        ns.list_table_versions(ListTableVersionsRequest(id=["t"], page_token="garbage"))


# --------------------------------------------------------------------------- tables


def test_declared_tables(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    ns.create_namespace(CreateNamespaceRequest(id=["n"]))
    ns.declare_table(DeclareTableRequest(id=["n", "later"], properties={"owner": "me"}))
    new_table(ns, ["n", "real"], make_data(4))
    assert sorted(ns.list_tables(ListTablesRequest(id=["n"])).tables) == ["later", "real"]
    declared = ns.describe_table(DescribeTableRequest(id=["n", "later"], check_declared=True))
    assert declared.is_only_declared is True
    assert declared.properties == {"owner": "me"}
    with pytest.raises(InvalidTableStateError, match="no data"):
        ns.open_dataset(["n", "later"])
    detailed = ns.describe_table(
        DescribeTableRequest(id=["n", "real"], load_detailed_metadata=True, check_declared=True)
    )
    assert detailed.is_only_declared is False
    assert [f.name for f in detailed.var_schema.fields] == ["id", "kind", "doc", "tags", "vector"]
    assert detailed.version == 1


def test_root_level_declared_table_location_is_a_uri(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    ns.declare_table(DeclareTableRequest(id=["d"]))
    raw = plain(tmp_path).describe_table(DescribeTableRequest(id=["d"], check_declared=True))
    assert raw.location == str(tmp_path / "d.lance")  # pylance: a bare path here, URIs elsewhere
    fixed = ns.describe_table(DescribeTableRequest(id=["d"], check_declared=True))
    assert fixed.location == (tmp_path / "d.lance").as_uri()


def test_tables_need_their_namespace(tmp_path: Path) -> None:
    plain(tmp_path).create_table(CreateTableRequest(id=["ghost", "t"]), to_ipc_stream(make_data(2)))
    assert plain(tmp_path).list_tables(ListTablesRequest(id=["ghost"])).tables == ["t"]  # pylance

    ns = ours(tmp_path / "ours")
    with pytest.raises(NamespaceNotFoundError):
        new_table(ns, ["nowhere", "t"], make_data(2))
    with pytest.raises(NamespaceNotFoundError):
        ns.declare_table(DeclareTableRequest(id=["nowhere", "d"]))
    assert list((tmp_path / "ours").glob("*nowhere*")) == []


def test_list_all_tables_is_recursive(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    ns.create_namespace(CreateNamespaceRequest(id=["a", "b"]))
    new_table(ns, ["top"], make_data(1))
    new_table(ns, ["a", "t"], make_data(1))
    new_table(ns, ["a", "b", "deep"], make_data(1))
    ns.declare_table(DeclareTableRequest(id=["a", "b", "planned"]))
    assert plain(tmp_path).list_all_tables(ListTablesRequest(id=[])).tables == ["top"]  # pylance
    assert ns.list_all_tables(ListTablesRequest(id=[])).tables == [
        "a$b$deep",
        "a$b$planned",
        "a$t",
        "top",
    ]
    assert ns.list_all_tables(ListTablesRequest(id=["a", "b"], include_declared=False)).tables == [
        "a$b$deep"
    ]


def test_open_dataset_versions(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    with_versions(ns, ["t"], 3)
    assert ns.open_dataset(["t"], version=1).count_rows() == 2
    assert ns.open_dataset(["t"]).count_rows() == 6
    assert ns.table_location(["t"]) == (tmp_path / "t.lance").as_uri()
    with pytest.raises(TableVersionNotFoundError):
        ns.open_dataset(["t"], version=42)


def test_batch_commit_dispatches_to_the_batch_module(tmp_path: Path, monkeypatch) -> None:
    ns = ours(tmp_path)
    calls = []

    def fake_commit(namespace, req):
        calls.append((namespace, req))
        return "result"

    monkeypatch.setattr(backend.local.batch, "commit_batch", fake_commit)
    request = BatchCommitTablesRequest(operations=[])
    assert ns.batch_commit_tables(request) == "result"
    assert ns.batch_commit_tables({"operations": []}) == "result"  # dicts become the model
    assert calls == [(ns, request), (ns, request)]
    assert isinstance(calls[1][1], BatchCommitTablesRequest)


def test_batch_commit_of_nothing_is_refused(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    with pytest.raises(InvalidInputError, match="the batch is empty"):
        ns.batch_commit_tables(BatchCommitTablesRequest(operations=[]))
    assert ns.txn_store.list() == []


# --------------------------------------------------------------------------- (e) locations, bodies


def test_manifest_paths_are_absolute(tmp_path: Path) -> None:
    new_table(plain(tmp_path / "plain"), ["t"], make_data(2))
    raw = plain(tmp_path / "plain").list_table_versions(ListTableVersionsRequest(id=["t"]))
    assert not raw.versions[0].manifest_path.startswith("/")  # pylance: an object-store path

    ns = ours(tmp_path / "ours")
    with_versions(ns, ["t"], 2)
    listed = ns.list_table_versions(ListTableVersionsRequest(id=["t"])).versions
    described = ns.describe_table_version({"id": ["t"], "version": 2}).version
    assert described.manifest_path == listed[1].manifest_path
    for v in listed:
        path = Path(v.manifest_path)
        assert path.is_absolute() and path.is_file()
        assert path.parent == tmp_path / "ours" / "t.lance" / "_versions"


def test_register_table_location_is_checked(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    lance.write_dataset(make_data(3), str(tmp_path / "outside"))
    lance.write_dataset(make_data(3), str(root / "copy"))
    (root / "empty").mkdir()
    ns = ours(root)
    ns.create_namespace(CreateNamespaceRequest(id=["n"]))
    new_table(ns, ["n", "t"], make_data(2))
    t_dir = Path(ns.describe_table(DescribeTableRequest(id=["n", "t"])).location[len("file://") :])
    for location, message in (
        ("../outside", "outside the namespace root"),
        (str(tmp_path / "outside"), "outside the namespace root"),
        (".", "the namespace root itself"),
        ("__manifest", "__manifest directory"),
        ("_console", "_console directory"),
        ("missing", "does not exist"),
        ("empty", "no Lance dataset"),
        (t_dir.name, "another table"),
        (f"{t_dir.name}/data", "another table"),
    ):
        with pytest.raises(InvalidInputError, match=message):
            ns.register_table(RegisterTableRequest(id=["n", "r"], location=location))
    assert ns.list_tables(ListTablesRequest(id=["n"])).tables == ["t"]
    # pylance registers the namespace root as a table without a word.
    plain(root).register_table(RegisterTableRequest(id=["n", "r"], location="."))
    assert "r" in plain(root).list_tables(ListTablesRequest(id=["n"])).tables
    plain(root).deregister_table(DeregisterTableRequest(id=["n", "r"]))

    ns.register_table(RegisterTableRequest(id=["n", "copy"], location="copy"))
    assert ns.open_dataset(["n", "copy"]).count_rows() == 3


def test_drop_table_never_deletes_a_foreign_location(tmp_path: Path) -> None:
    root = tmp_path / "root"
    ns = ours(root)
    ns.create_namespace(CreateNamespaceRequest(id=["n"]))
    new_table(ns, ["n", "t"], make_data(2))
    t_dir = Path(ns.describe_table(DescribeTableRequest(id=["n", "t"])).location[len("file://") :])
    # Registrations pylance accepts that drop_table would turn into a disaster.
    plain(root).register_table(RegisterTableRequest(id=["n", "whole"], location="."))
    plain(root).register_table(RegisterTableRequest(id=["n", "twin"], location=t_dir.name))
    before = tree_digest(root, exclude=("_console", "__manifest"))
    for table in ("whole", "twin"):
        with pytest.raises(InvalidInputError, match="deregister the table instead"):
            ns.drop_table(DropTableRequest(id=["n", table]))
    assert tree_digest(root, exclude=("_console", "__manifest")) == before
    assert ns.open_dataset(["n", "t"]).count_rows() == 2
    with pytest.raises(InvalidInputError, match="directory of another table"):  # twin's too
        ns.drop_table(DropTableRequest(id=["n", "t"]))
    ns.deregister_table(DeregisterTableRequest(id=["n", "twin"]))
    ns.deregister_table(DeregisterTableRequest(id=["n", "whole"]))
    ns.drop_table(DropTableRequest(id=["n", "t"]))  # its own directory alone: dropped
    assert not t_dir.exists()
    assert tree_digest(root, exclude=("_console", "__manifest", t_dir.name)) == {
        k: v for k, v in before.items() if not k.startswith(t_dir.name)
    }


def test_single_create_table_version_needs_a_staged_manifest(tmp_path: Path) -> None:
    ns = ours(tmp_path / "root")
    with_versions(ns, ["t"], 2)
    staged = stage_version(ns, ["t"], make_data(1, start=50))
    elsewhere = tmp_path / "elsewhere.manifest"
    elsewhere.write_bytes(Path(staged.manifest_path).read_bytes())
    published = Path(
        ns.list_table_versions(ListTableVersionsRequest(id=["t"])).versions[0].manifest_path
    )
    for path, message in (
        (str(elsewhere), "outside the table's staging areas"),
        (str(published), "published manifest of _versions"),
        (str(tmp_path / "root" / "_staging" / "missing.manifest"), "not a regular file"),
    ):
        with pytest.raises(InvalidInputError, match=message):
            ns.create_table_version({"id": ["t"], "version": 3, "manifest_path": path})
    assert versions_of(ns, ["t"]) == [1, 2]
    ns.create_table_version({"id": ["t"], "version": 3, "manifest_path": staged.manifest_path})
    assert versions_of(ns, ["t"]) == [1, 2, 3]


def test_arrow_bodies_are_checked_before_pylance(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    for body in (b"garbage", b"", b"\xff\xff\xff\xff" + b"\x00" * 3):
        with pytest.raises(InvalidInputError, match="Arrow IPC"):
            ns.create_table(CreateTableRequest(id=["t"]), body)
    assert ns.list_tables(ListTablesRequest(id=[])).tables == []
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, make_data(4).schema) as writer:  # an IPC *file*: converted
        writer.write_table(make_data(4))
    ns.create_table(CreateTableRequest(id=["t"]), sink.getvalue().to_pybytes())
    assert ns.open_dataset(["t"]).count_rows() == 4


def test_created_names_follow_the_creation_rule(tmp_path: Path) -> None:
    ns = ours(tmp_path)
    for bad in ("has space", "café", "-dash", "x" * 129, "a/b", "..", "a$b"):
        with pytest.raises(InvalidInputError):
            ns.create_namespace(CreateNamespaceRequest(id=[bad]))
        with pytest.raises(InvalidInputError):
            ns.declare_table(DeclareTableRequest(id=[bad]))
    with pytest.raises(InvalidInputError, match="at most 16 parts"):
        ns.describe_table(DescribeTableRequest(id=[f"n{i}" for i in range(17)]))
    assert ns.list_tables(ListTablesRequest(id=[])).tables == []
    # A name another tool created stays reachable.
    plain(tmp_path).declare_table(DeclareTableRequest(id=["has space"]))
    assert ns.list_tables(ListTablesRequest(id=[])).tables == ["has space"]
    assert ns.describe_table(
        DescribeTableRequest(id=["has space"], check_declared=True)
    ).is_only_declared


# --------------------------------------------------------------------------- txn_store


def test_status_helpers() -> None:
    """Statuses live in backend.rules.alter_actions (txn_store only stores records)."""
    assert not hasattr(txn_store, "normalize_status")
    assert alter_actions.normalize_status("succeeded") == "SUCCEEDED"
    assert alter_actions.normalize_status(" Running ") == "RUNNING"
    assert alter_actions.normalize_status("cancelled") == "CANCELED"
    with pytest.raises(InvalidInputError):
        alter_actions.normalize_status("paused")
    policy = alter_actions.table_policy
    assert policy("QUEUED", "RUNNING") is None
    assert policy("RUNNING", "FAILED") is None
    assert policy("SUCCEEDED", "CANCELED") is None
    for current, new in (("RUNNING", "QUEUED"), ("FAILED", "RUNNING"), ("CANCELED", "QUEUED")):
        assert policy(current, new), (current, new)
        assert new not in alter_actions.TABLE_TRANSITIONS[current]
    # Setting the current status again is a no-op the engine always allows.
    same = alter_actions.parse_actions([{"setStatusAction": {"status": "Failed"}}])
    assert alter_actions.apply_actions(same, "FAILED", {}, policy=policy)[0] == "FAILED"
    assert alter_actions.batch_policy("RUNNING", "CANCELED") is None
    assert alter_actions.batch_policy("SUCCEEDED", "FAILED")


def test_store_put_get_update_list_delete(tmp_path: Path) -> None:
    store = txn_store.open_store(tmp_path.as_uri())
    assert isinstance(store, txn_store.FileTxnStore)
    assert store.get("a") is None
    weird = "ns/with$odd:chars/" + "x" * 300
    store.put(weird, {"status": "QUEUED", "n": 1})
    store.put("a", {"status": "RUNNING"})
    assert store.get(weird)["n"] == 1
    assert store.get(weird)["txn_id"] == weird
    assert store.update("a", lambda r: {**r, "status": "SUCCEEDED"})["status"] == "SUCCEEDED"
    assert store.update("a", lambda r: None)["status"] == "SUCCEEDED"  # None: unchanged
    assert [r["txn_id"] for r in store.list()] == sorted(["a", weird])
    assert store.delete("a") is True
    assert store.delete("a") is False
    files = list((tmp_path / "_console" / "transactions").glob("*.json"))
    assert len(files) == 1 and len(files[0].name) < 200


def test_store_failures_leave_the_old_record(tmp_path: Path) -> None:
    store = txn_store.open_store(str(tmp_path))
    store.put("t", {"status": "QUEUED", "v": 1})

    def boom(record):
        record["v"] = 2
        raise RuntimeError("validation failed")

    with pytest.raises(RuntimeError):
        store.update("t", boom)
    with pytest.raises(TypeError):
        store.put("t", {"status": "QUEUED", "v": object()})
    assert store.get("t")["v"] == 1
    leftovers = [p.name for p in (tmp_path / "_console" / "transactions").iterdir()]
    assert sorted(leftovers) == [".lock", "t.json"]


def test_store_readers_never_see_a_partial_record(tmp_path: Path) -> None:
    store = txn_store.open_store(str(tmp_path))
    path = tmp_path / "_console" / "transactions" / "big.json"
    store.put("big", {"payload": "0" * 200_000})
    stop = threading.Event()
    bad: list[str] = []

    def reader() -> None:
        while not stop.is_set():
            text = path.read_text()
            try:
                json.loads(text)
            except ValueError:
                bad.append(text[:50])

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for i in range(40):
            store.put("big", {"payload": str(i % 10) * (100_000 + 5_000 * i)})
    finally:
        stop.set()
        thread.join()
    assert bad == []


def test_store_updates_are_serialised_across_threads(tmp_path: Path) -> None:
    store = txn_store.open_store(str(tmp_path))
    store.put("counter", {"n": 0})

    def work() -> None:
        for _ in range(25):
            store.update("counter", lambda r: {**r, "n": r["n"] + 1})

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.get("counter")["n"] == 150


@pytest.mark.slow  # two child processes
def test_store_updates_are_serialised_across_processes(tmp_path: Path) -> None:
    store = txn_store.open_store(str(tmp_path))
    store.put("counter", {"n": 0})
    script = (
        "import sys; from backend.local.txn_store import open_store\n"
        "s = open_store(sys.argv[1])\n"
        "for _ in range(30):\n"
        "    s.update('counter', lambda r: {**r, 'n': r['n'] + 1})\n"
    )
    repo = Path(backend.__file__).resolve().parent.parent
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], cwd=repo) for _ in range(2)
    ]
    for _ in range(30):
        store.update("counter", lambda r: {**r, "n": r["n"] + 1})
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert store.get("counter")["n"] == 90


def test_memory_store_is_per_root() -> None:
    a = txn_store.open_store("memory://store-a")
    a.put("x", {"status": "QUEUED"})
    assert txn_store.open_store("memory://store-a/").get("x")["status"] == "QUEUED"
    assert txn_store.open_store("memory://store-b").get("x") is None


def test_object_store_txn_store_on_obstore(tmp_path: Path) -> None:
    # the object-store record store, here on obstore's local-file store (moto: test_object_store)
    (tmp_path / "objects").mkdir()
    store = txn_store.ObjectTxnStore((tmp_path / "objects").as_uri())
    assert store.list() == []
    store.put("b/1", {"status": "QUEUED"})
    store.update("b/1", lambda r: {**r, "status": "RUNNING"})
    assert store.get("b/1")["status"] == "RUNNING"
    assert [r["txn_id"] for r in store.list()] == ["b/1"]
    assert store.delete("b/1") and store.get("b/1") is None


def test_vector_column_missing_or_wrong_is_a_clear_refusal(tmp_path: Path) -> None:
    """No vector_column: the table's only vector column is searched (checked against numpy);
    a column that does not exist or holds no vectors is refused by name, never with lance's
    error and its Rust source paths."""
    from lance_namespace import (
        AnalyzeTableQueryPlanRequest,
        ExplainTableQueryPlanRequest,
        QueryTableRequest,
    )

    ns = ours(tmp_path)
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    data = make_data(40, dim=4).rename_columns(["id", "kind", "doc", "tags", "emb"])
    new_table(ns, ["a", "t"], data)
    query = [0.2, 0.4, 0.6, 0.8]

    def request(**fields) -> QueryTableRequest:
        body = {"id": ["a", "t"], "vector": {"single_vector": query}, "k": 3, **fields}
        return QueryTableRequest.model_validate(body)

    found = ns.query_table_arrow(request())
    emb = np.array(data.column("emb").to_pylist(), dtype=np.float32)
    nearest = np.argsort(((emb - np.array(query, dtype=np.float32)) ** 2).sum(axis=1))[:3]
    assert found.column("id").to_pylist() == data.column("id").take(nearest).to_pylist()
    assert ns.query_table(request()).data  # the IPC answer too
    plan = ns.explain_table_query_plan(ExplainTableQueryPlanRequest(id=["a", "t"], query=request()))
    assert "emb" in plan
    assert "emb" in ns.analyze_table_query_plan(
        AnalyzeTableQueryPlanRequest.model_validate(request().model_dump())
    )
    for column, said in (("nope", "does not exist"), ("id", "does not hold vectors")):
        for call in (ns.query_table_arrow, ns.query_table):
            with pytest.raises(InvalidInputError) as err:
                call(request(vector_column=column))
            text = str(err.value)
            assert said in text and "its vector columns: emb" in text
            assert ".rs" not in text and "Location" not in text
    new_table(ns, ["a", "plain"], data.drop_columns(["emb"]))
    with pytest.raises(InvalidInputError, match="the table has no vector column"):
        ns.query_table_arrow(request(id=["a", "plain"]))


def test_stray_files_among_the_versions_are_no_versions(tmp_path: Path) -> None:
    """Files another writer or a tool left in a table's ``_versions`` folder whose names no
    version has (beyond u64, not digits) are not listed: the listing, the versions index
    (timeline, cleanup) and the health read the table's versions as lance does. The first was
    listed as version -81553255926290448384. A V2 name of a small number stands for a version
    beyond 2^63 - 1: lance itself then cannot open the table, and the console's listing still
    lists the real versions (the versions index failed with an OverflowError)."""
    import backend
    from backend.services import health
    from backend.services import versions as vsv
    from tests.support import create_table, table_location

    ns = backend.connect(str(tmp_path / "root"), audit=False)
    create_table(ns, ["t"], pa.table({"id": pa.array([1, 2], pa.int64())}))
    location = str(table_location(ns, ["t"]))
    lance.dataset(location).insert(pa.table({"id": pa.array([3], pa.int64())}))
    folder = Path(location.removeprefix("file://")) / "_versions"
    for stray in ("99999999999999999999", "abc"):
        (folder / f"{stray}.manifest").write_bytes(b"")
    own = [v["version"] for v in lance.dataset(location).versions()]
    assert own == [1, 2]
    assert sorted(vsv.list_versions(ns, ["t"])["version"]) == own
    assert sorted(vsv.VersionIndex(ns, ("t",)).frame(2)["version"]) == own
    assert health.table_health(ns, ["t"]).versions == 2
    (folder / "00000000000000000005.manifest").write_bytes(b"")
    assert sorted(vsv.list_versions(ns, ["t"])["version"]) == own
    assert sorted(vsv.VersionIndex(ns, ("t",)).frame(2)["version"]) == own
