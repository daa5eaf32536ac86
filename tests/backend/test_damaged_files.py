"""Files the console reads that other writers and tools reach: records under the namespace's
``_console`` folder, the TOML settings files, the namespace lock's holder. A damaged one is
said in words, or left out, never a raw exception (UnicodeDecodeError, JSONDecodeError,
OverflowError, AttributeError) from the page that reads it."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from lance_namespace.errors import InvalidInputError

import backend
from backend import access
from backend.config import launch, saved_connections
from backend.local.batch.lock import describe_holder
from backend.services import maintenance as mt
from backend.services import transactions
from tests.support import batch, create_table, op_declare

LATIN1 = b'name = "caf\xe9"\n'  # TOML files are UTF-8; this is latin-1


@pytest.mark.parametrize(
    "data",
    [b"", b'{"policy": {"kin', b"[1, 2]", b'{"policy": "caf\xe9"}'],
    ids=["empty", "cut", "list", "latin-1"],
)
def test_a_damaged_saved_policy_is_said_so(tmp_path: Path, data: bytes) -> None:
    """Saving the policy again on the Maintenance page mends it, which the message says."""
    ns = backend.connect(str(tmp_path / "root"), audit=False)
    create_table(ns, ["t"], pa.table({"id": [1]}))
    assert mt.load_policy(ns, []).source == mt.DEFAULT
    folder = tmp_path / "root" / "_console" / "maintenance_policies"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ns%3A.json").write_bytes(data)
    with pytest.raises(InvalidInputError) as err:
        mt.load_policy(ns, [])
    said = str(err.value)
    assert said.startswith("the maintenance policy saved for namespace")
    assert said.endswith("Save it again on the Maintenance page.")


def test_damaged_batch_records_are_left_out_of_the_list(tmp_path: Path) -> None:
    ns = backend.connect(str(tmp_path / "root"), audit=False)
    landed = ns.batch_commit_tables(batch(op_declare(["d"])))
    folder = tmp_path / "root" / "_console" / "transactions"
    for name, record in {
        "batch-huge": {"kind": "batch", "status": "SUCCEEDED", "updated_at": 1e999},
        "batch-props": {"kind": "batch", "status": "SUCCEEDED", "properties": [1]},
        "batch-status": {"kind": "batch", "status": 5},
    }.items():
        (folder / f"{name}.json").write_text(
            json.dumps({**record, "txn_id": name}).replace("Infinity", "1e999")
        )  # json writes inf as Infinity; another writer's 1e999 reads as inf too
    (folder / "batch-latin.json").write_bytes(b'{"txn_id": "batch-latin", "kind": "caf\xe9"}')
    listed = {t.id: t for t in transactions.list_batch_transactions(ns)}
    assert set(listed) == {landed.transaction_id, "batch-huge", "batch-props"}
    assert listed["batch-props"].tables == [] and listed["batch-props"].operations == 0


def test_settings_files_that_are_not_utf8_are_said_so(tmp_path: Path) -> None:
    """The connections file, its allowlist (which then fails closed), secrets.toml's
    sign-in settings and the roles file: each says the file is not UTF-8."""
    path = tmp_path / "connections.toml"
    path.write_bytes(LATIN1)
    specs, _secrets, problems = saved_connections.load_connections(path)
    assert specs == [] and problems == [
        f"Cannot read {path}: it is not UTF-8 text (byte 12), as TOML is"
    ]
    allowed, said = saved_connections.load_allowed_targets(path)
    assert allowed == ("",) and "it is not UTF-8 text" in said[0]
    settings = launch.auth_settings([path])
    assert settings.present and "it is not UTF-8 text" in settings.problems[0]
    with pytest.raises(InvalidInputError, match="roles file .*: it is not UTF-8 text"):
        access.RoleMap.load(path)
    path.write_text('connections = "x"\n')
    specs, _secrets, problems = saved_connections.load_connections(path)
    assert specs == [] and problems == [
        f"connections in {path} is not a table of connections; ignored."
    ]


@pytest.mark.parametrize("since", [1e20, float("nan"), float("inf"), "x", True])
def test_a_lock_holder_whose_time_is_no_time_is_still_described(since: object) -> None:
    said = describe_holder({"since": since, "pid": 7, "host": "h", "purpose": "a batch"}, 1.0)
    assert said == "held by a batch (process 7 on h)"


def test_a_lock_holder_with_a_time_says_since_when() -> None:
    said = describe_holder({"since": 1_700_000_000.4, "pid": 7, "host": "h"}, 1_700_000_100.0)
    assert said == "held by a write (process 7 on h) since 22:13:20 UTC (100 s)"
