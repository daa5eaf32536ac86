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
from lance_namespace import CreateTableRequest, DeclareTableRequest, ListTablesRequest

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


def test_a_long_text_is_cut_before_it_is_redacted_and_a_secret_across_the_cut_is_masked() -> None:
    """A summary redacted a text whole before cutting it to 300 characters, and the URL
    password rule tried a scheme from every letter of a long word: a 100,000-letter value
    took 7.9 s to summarize, 1,000,000 did not finish. The text is now cut first, with
    room for a secret that starts before the summary's end; the rule starts a scheme only
    where a word starts."""
    from backend import redaction

    secret = "tok-" + "s" * 60
    redaction.register_secret(secret)
    text = "x " * 145 + secret + " y" * 1_000_000
    shown = audit.summarize(text)
    assert len(shown) == 301 and "tok-sss" not in shown and "<redacted>" in shown
    url = "a" * 1_000_000 + " s3://user:pw-9@host/x"
    assert audit.summarize(url) == "a" * 300 + "…"
    assert redaction.redact_text("log: xs3://u:pw-9@h, (http://a:pw-9@c)") == (
        "log: xs3://u:<redacted>@h, (http://a:<redacted>@c)"
    )


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
    # a table named by another application, an error's text: no cell runs as a formula in a
    # spreadsheet (a leading ' keeps it text)
    log.append(
        entry(
            user="@eve",
            op="declare_table",
            ids=['=HYPERLINK("http://x")'],
            outcome=audit.FAILED,
            error_class="InvalidInputError",
            error_message="-bad name",
        )
    )
    [row] = list(csv.DictReader(io.StringIO(audit.to_csv(log.entries()[-1:]))))
    assert (row["user"], row["ids"], row["error_message"], row["outcome"]) == (
        "'@eve",
        '\'=HYPERLINK("http://x")',
        "'-bad name",
        "error",
    )
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
    assert proc.stdout is not None
    for line in proc.stdout.read().split():  # what it finished before the kill, unread yet
        done = int(line)
    assert done >= 50
    got = [int(e.ids[1]) for e in audit.AuditLog(tmp_path).entries()]
    # Every append the child finished (it printed after fsync) is there, in order, unbroken.
    assert got[:done] == list(range(done))
    assert len(got) in (done, done + 1)


def test_entries_written_before_role_target_and_op_id_still_read(tmp_path: Path) -> None:
    """A line as the console wrote it before entries named the role, the target and an
    operation id reads with them empty, next to a new entry, and both export."""
    old = {
        "user": "ada@example.com", "connection": "default", "operation": "drop_table",
        "ids": ["a", "t"], "tables": [], "request": {"id": ["a", "t"]}, "outcome": "ok",
        "error_class": None, "error_message": None, "transaction_id": None,
        "duration_ms": 4.0, "source": "console", "ts": "2025-01-02T03:04:05.000Z",
    }  # fmt: skip
    (tmp_path / audit.LOG_NAME).write_text(json.dumps(old) + "\n")
    log = audit.AuditLog(tmp_path)
    log.append(entry(role="editor", target="/srv/lake", op_id="abc"))
    first, second = log.entries()
    assert (first.operation, first.role, first.target, first.op_id) == (
        "drop_table", None, None, None
    )  # fmt: skip
    assert (second.role, second.target, second.op_id) == ("editor", "/srv/lake", "abc")
    rows = list(csv.DictReader(io.StringIO(audit.to_csv(log.entries()))))
    assert [(r["role"], r["target"], r["outcome"]) for r in rows] == [
        ("", "", "ok"),
        ("editor", "/srv/lake", "ok"),
    ]


def test_the_target_is_kept_without_credentials(tmp_path: Path) -> None:
    log = audit.AuditLog(tmp_path)
    secret = "pw-9f8e7d6c5b4a"
    url = f"https://ada:{secret}@lance.example.com:8443/api?api_key={secret}&region=eu"
    log.append(entry(target=url))
    assert secret not in (tmp_path / audit.LOG_NAME).read_text()
    (got,) = log.entries()
    assert got.target is not None and got.target.startswith("https://ada:")
    assert "lance.example.com:8443/api" in got.target and "region=eu" in got.target
    # the name derived for a launch target keeps neither the user nor the query
    assert audit.target_name(url) == "https://lance.example.com:8443/api"
    assert audit.target_name("/srv/data/lake/") == "lake"
    assert audit.target_name("file:///srv/data/lake") == "lake"
    assert audit.target_name("s3://bucket/prefix/lake") == "s3://bucket/prefix/lake"


def test_a_started_entry_without_an_end_says_so(tmp_path: Path) -> None:
    """Two long writes: one started and ended (same op_id), one started only. The page's rows
    call the second "started, no end recorded"; the outcome filter finds it alone."""
    log = audit.AuditLog(tmp_path)
    log.append(entry("create_table_index", outcome=audit.STARTED, op_id="done1"))
    log.append(entry("create_table_index", outcome=audit.STARTED, op_id="open1"))
    log.append(entry("create_table_index", outcome=audit.OK, op_id="done1"))
    got = log.entries()
    assert audit.unfinished(got) == {"open1"}
    assert [(r["op_id"], r["outcome"]) for r in audit.to_rows(got)] == [
        ("done1", audit.STARTED),
        ("open1", audit.UNFINISHED),
        ("done1", audit.OK),
    ]
    found = audit.filter_entries(got, outcome=audit.UNFINISHED)
    assert [(e.op_id, e.outcome) for e in found] == [("open1", audit.STARTED)]
    assert len(audit.filter_entries(got, outcome=audit.STARTED)) == 2
    # rows of a filtered list still know which starts ended in the whole log
    started = audit.filter_entries(got, outcome=audit.STARTED)
    rows = audit.to_rows(started, open_ops=audit.unfinished(got))
    assert [r["outcome"] for r in rows] == [audit.STARTED, audit.UNFINISHED]


BUILD_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    import backend
    from backend import access, audit
    from backend.gate import Actor, gate
    from backend.services.index_overview import create_index
    from lance_namespace import CreateTableIndexRequest
    from tests.support import with_versions

    root, log_dir = sys.argv[1], sys.argv[2]
    ns = backend.connect(root)
    with_versions(ns, ["t"], 2)
    gated = gate(ns, actor=Actor("ed@example.com", access.EDITOR), log=audit.AuditLog(log_dir))

    def killed(event):  # the process dies at lance's first progress event of the build
        os.kill(os.getpid(), signal.SIGKILL)

    request = CreateTableIndexRequest(id=["t"], column="id", index_type="BTREE", name="id_idx")
    create_index(gated, request, progress=killed)
    print("the build ended", flush=True)
    """
)


@pytest.mark.slow
def test_a_build_killed_midway_leaves_a_started_entry(tmp_path: Path) -> None:
    """A process killed during an index build (SIGKILL at lance's first progress event):
    its "started" entry is in the log, durable, with no end; the page says so."""
    root, log_dir = tmp_path / "lake", tmp_path / "audit"
    root.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", BUILD_CHILD, str(root), str(log_dir)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        timeout=300,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    assert "the build ended" not in done.stdout
    (started,) = audit.AuditLog(log_dir).entries()
    assert (started.operation, started.outcome) == ("create_table_scalar_index", audit.STARTED)
    assert (started.user, started.role) == ("ed@example.com", "editor")
    assert started.ids == ["t"] and started.request["column"] == "id"
    assert started.connection == "lake" and started.target == root.as_uri()
    assert audit.unfinished([started]) == {started.op_id}
    (row,) = audit.to_rows([started])
    assert row["outcome"] == "started, no end recorded"


DAMAGED_LINES = [
    {"operation": "x"},  # no user, no connection
    {"user": 5, "connection": "c", "operation": "x"},
    {"user": "u", "connection": "c", "operation": ["a"]},
    {"user": "u", "connection": "c", "operation": "x", "ts": 5},
    {"user": "u", "connection": "c", "operation": "x", "ts": ""},
    {"user": "u", "connection": "c", "operation": "x", "ts": "1999-13-45T00:00:00Z"},
    {"user": "u", "connection": "c", "operation": "x", "ids": 5},
    {"user": "u", "connection": "c", "operation": "x", "tables": "abc"},
    {"user": "u", "connection": "c", "operation": "x", "tables": [{"id": 5}]},
    {"user": "u", "connection": "c", "operation": "x", "op_id": ["x"]},
    {"user": "u", "connection": "c", "operation": "x", "duration_ms": "abc"},
    {
        "user": "u",
        "connection": "c",
        "operation": "x",
        "request": json.loads("[" * 600 + "]" * 600),
    },
]


def test_damaged_lines_are_left_out_and_the_rest_reads(tmp_path: Path) -> None:
    """A line of the right JSON with a field of the wrong type made every reader of the log
    raise (TypeError, AttributeError, RecursionError...): the Audit page, its CSV, the change
    log. Such a line is left out now; a lone surrogate in a text reads as U+FFFD."""
    log = audit.AuditLog(tmp_path)
    log.append(entry(ids=["ns", "good"]))
    with open(log.files()[-1], "a", encoding="utf-8") as f:
        for line in DAMAGED_LINES:
            f.write(json.dumps(line) + "\n")
        f.write("[" * 100_000 + "]" * 100_000 + "\n")
        f.write('{"user": "\\ud800", "connection": "c", "operation": "declare_table"}\n')
    got = log.entries()
    assert [e.ids for e in got] == [["ns", "good"], []]
    assert got[1].user == "\ufffd"
    assert len(audit.filter_entries(got, user="a", table="good", since="2000-01-01")) == 1
    audit.to_csv(got).encode("utf-8")
    assert len(audit.to_rows(got)) == 2


@pytest.mark.parametrize("planted", [audit.LOG_NAME, audit.LOCK_NAME])
def test_a_symbolic_link_in_the_logs_place_is_not_followed(
    tmp_path: Path, planted: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A link named as the log (or its lock) that points at another file: the entry is not
    written through it and the file it points at stays as it was; a write through the gate still
    happens, and the log of the process says the entry was not recorded."""
    import backend
    from backend import access
    from backend.gate import Actor, gate

    folder = tmp_path / "audit"
    folder.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (folder / planted).symlink_to(victim)
    log = audit.AuditLog(folder)
    with pytest.raises(OSError):
        log.append(entry())
    assert victim.read_text() == "keep me\n"

    root = tmp_path / "root"
    root.mkdir()
    ns = gate(backend.connect(str(root), audit=False), actor=Actor("ada", access.ADMIN), log=log)
    with caplog.at_level("WARNING", logger="backend.gate"):
        ns.declare_table(DeclareTableRequest(id=["t"]))
    assert "t" in ns.list_tables(ListTablesRequest(id=[])).tables
    assert victim.read_text() == "keep me\n"
    assert (folder / planted).is_symlink()
    assert [r.getMessage() for r in caplog.records] == [
        f"audit entry of declare_table not recorded in {folder}: Too many levels of symbolic links"
    ]
