"""The audit log: durable appends, rotation, torn lines, redaction, filters and CSV."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from lance_namespace import CreateTableRequest, DeclareTableRequest

from backend import audit
from backend.redaction import REDACTED


def entry(op: str = "declare_table", **kw) -> audit.AuditEntry:
    base = {"user": "ada@example.com", "connection": "demo", "operation": op, "ids": ["a", "b"]}
    base.update(kw)
    return audit.AuditEntry(**base)


def test_append_then_read_in_order(tmp_path: Path) -> None:
    log = audit.AuditLog(tmp_path)
    for i in range(5):
        log.append(entry(ids=["ns", f"t{i}"], duration_ms=float(i)))
    got = log.entries()
    assert [e.ids[-1] for e in got] == [f"t{i}" for i in range(5)]
    assert all(e.ts.endswith("Z") for e in got)
    lines = (tmp_path / audit.LOG_NAME).read_text().splitlines()
    assert len(lines) == 5 and all(json.loads(line)["user"] == "ada@example.com" for line in lines)


def test_rotation_by_size_keeps_newest_files(tmp_path: Path) -> None:
    log = audit.AuditLog(tmp_path, max_bytes=2048, keep=2)
    for i in range(60):
        log.append(entry(ids=["ns", f"t{i:03d}"], request={"pad": "x" * 100}))
    files = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(audit.LOG_NAME))
    assert files == [audit.LOG_NAME, f"{audit.LOG_NAME}.1", f"{audit.LOG_NAME}.2"]
    assert all(p.stat().st_size <= 2048 for p in log.files())
    names = [e.ids[-1] for e in log.entries()]
    assert names == sorted(names)  # oldest first across the rotated files
    assert names[-1] == "t059" and "t000" not in names  # the oldest file was dropped


def test_torn_last_line_is_skipped(tmp_path: Path) -> None:
    log = audit.AuditLog(tmp_path)
    log.append(entry(ids=["x"]))
    with open(tmp_path / audit.LOG_NAME, "ab") as f:
        f.write(b'{"user": "half", "operation": "drop_ta')
    assert [e.ids for e in log.entries()] == [["x"]]


def test_secrets_never_reach_the_file(tmp_path: Path) -> None:
    log = audit.AuditLog(tmp_path)
    secret = "sk-live-9f8e7d6c5b4a"
    request = DeclareTableRequest(
        id=["a", "b"],
        properties={"owner": "me", "api_key": secret},
    )
    nested = {
        "storage_options": {"aws_secret_access_key": secret, "nested": {"token": secret}},
        "headers": [{"authorization": f"Bearer {secret}"}],
        "body": b"\x00" * 10,
    }
    log.append(entry(request=request))
    log.append(entry(op="create_table", request=nested, error_message="ok"))
    text = (tmp_path / audit.LOG_NAME).read_text()
    assert secret not in text
    first, second = log.entries()
    assert first.request["properties"] == {"owner": "me", "api_key": REDACTED}
    assert second.request["storage_options"]["aws_secret_access_key"] == REDACTED
    assert second.request["storage_options"]["nested"]["token"] == REDACTED
    assert second.request["headers"][0]["authorization"] == REDACTED
    assert second.request["body"] == "<10 bytes>"
    assert secret not in audit.to_csv(log.entries())


def test_summary_is_bounded() -> None:
    req = CreateTableRequest(id=["n", "t"], properties={f"k{i}": "v" * 1000 for i in range(50)})
    out = audit.summarize(req)
    assert len(out["properties"]) == 21 and out["properties"]["…"] == "30 more keys"
    assert len(out["properties"]["k0"]) == 301
    assert audit.summarize(list(range(100)))[-1] == "… 80 more"


def test_filters_and_csv(tmp_path: Path) -> None:
    log = audit.AuditLog(tmp_path)
    log.append(entry(user="ada@example.com", op="declare_table", ids=["sales", "orders"]))
    log.append(
        entry(
            user="bob@example.com",
            op="drop_table",
            ids=["hr", "people"],
            outcome=audit.FAILED,
            error_class="PermissionDeniedError",
            error_message="drop_table deletes data",
        )
    )
    got = log.entries()
    assert [e.user for e in audit.filter_entries(got, user="BOB")] == ["bob@example.com"]
    assert [e.ids for e in audit.filter_entries(got, table="orders")] == [["sales", "orders"]]
    assert len(audit.filter_entries(got, operation=["drop_table", "declare_table"])) == 2
    assert [e.outcome for e in audit.filter_entries(got, outcome=audit.FAILED)] == ["error"]
    assert audit.filter_entries(got, since="2999-01-01T00:00:00Z") == []
    assert len(audit.filter_entries(got, until="2999-01-01T00:00:00Z")) == 2
    rows = list(csv.DictReader(io.StringIO(audit.to_csv(got))))
    assert [r["ids"] for r in rows] == ["sales › orders", "hr › people"]
    assert rows[1]["error_class"] == "PermissionDeniedError"
    assert list(rows[0]) == list(audit.CSV_COLUMNS)


def test_batch_tables_of_both_batch_operations() -> None:
    """Each table a batch names, once, in the batch's order, with the kinds of its operations;
    a model or a dict alike; nothing for other operations."""
    from lance_namespace import BatchCreateTableVersionsRequest

    from tests.support import batch, op_declare, op_delete, op_deregister

    commit = batch(op_declare(["a", "x"]), op_delete(["b", "y"], (1, 2)), op_deregister(["a", "x"]))
    assert audit.batch_tables("batch_commit_tables", commit) == [
        {"id": ["a", "x"], "kinds": ["DeclareTable", "DeregisterTable"]},
        {"id": ["b", "y"], "kinds": ["DeleteTableVersions"]},
    ]
    assert audit.batch_tables("batch_commit_tables", commit.model_dump()) == (
        audit.batch_tables("batch_commit_tables", commit)
    )
    entries = [
        {"id": ["a", "x"], "version": 3, "manifest_path": "m3"},
        {"id": ["c", "z"], "version": 7, "manifest_path": "m7"},
    ]
    created = [{"id": ["a", "x"], "kinds": ["CreateTableVersion"]},
               {"id": ["c", "z"], "kinds": ["CreateTableVersion"]}]  # fmt: skip
    assert audit.batch_tables("batch_create_table_versions", {"entries": entries}) == created
    model = BatchCreateTableVersionsRequest.model_validate({"entries": entries})
    assert audit.batch_tables("batch_create_table_versions", model) == created
    assert audit.batch_tables("declare_table", DeclareTableRequest(id=["a", "x"])) == []
    assert audit.batch_tables("batch_commit_tables", {"operations": "not a list"}) == []


def test_batch_tables_are_kept_filtered_and_exported(tmp_path: Path) -> None:
    log = audit.AuditLog(tmp_path)
    tables = [{"id": ["sales", "orders"], "kinds": ["DeclareTable"]},
              {"id": ["hr", "people"], "kinds": ["DeregisterTable"]}]  # fmt: skip
    log.append(entry(op="batch_commit_tables", ids=[], tables=tables))
    log.append(entry(op="declare_table", ids=["ops", "jobs"]))
    # An entry written before entries had tables reads with none.
    with open(log.path, "a") as f:
        f.write(json.dumps({"user": "u", "connection": "c", "operation": "drop_table",
                            "ids": ["hr", "old"], "ts": "2020-01-01T00:00:00Z"}) + "\n")  # fmt: skip
    got = log.entries()
    assert got[0].tables == tables and got[1].tables == [] and got[2].tables == []
    assert [e.operation for e in audit.filter_entries(got, table="orders")] == [
        "batch_commit_tables"
    ]
    assert [e.operation for e in audit.filter_entries(got, table="hr")] == [
        "batch_commit_tables",
        "drop_table",
    ]
    rows = list(csv.DictReader(io.StringIO(audit.to_csv(got))))
    assert [r["tables"] for r in rows] == [
        "sales › orders (DeclareTable); hr › people (DeregisterTable)",
        "",
        "",
    ]


CHILD = textwrap.dedent(
    """
    import sys
    from backend import audit
    log = audit.AuditLog(sys.argv[1])
    i = 0
    while True:
        log.append(audit.AuditEntry(user="u", connection="c", operation="insert_into_table",
                                    ids=["t", str(i)], request={"pad": "y" * 2000}))
        i += 1
        print(i, flush=True)
    """
)


@pytest.mark.slow  # a child process killed while writing
def test_sigkill_while_writing_keeps_every_earlier_entry(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        done = 0
        deadline = time.monotonic() + 60
        assert proc.stdout is not None
        while done < 50 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            done = int(line)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert done >= 50
    got = [int(e.ids[1]) for e in audit.AuditLog(tmp_path).entries()]
    # Every append the child finished (it printed after fsync) is there, in order, unbroken.
    assert got[:done] == list(range(done))
    assert len(got) in (done, done + 1)
