"""backend/services/batch_builder.py: batch-commit builder, validation, wire JSON,
transactions, staging.

Validation and transaction calls run on both backends (``ns`` fixture: a real local directory
and a real ``RestAdapter`` server); staging a manifest is local-only by design. The builder's
``validate`` and the commit apply one rule set (``backend.rules.batch_rules``): what one refuses,
the other refuses too, with the same error class and the same operation number (from 1).
"""

from __future__ import annotations

import json
from pathlib import Path

import lance
import pytest
from lance_namespace import (
    BatchCommitTablesRequest,
    CreateNamespaceRequest,
    CreateTableVersionRequest,
    DeclareTableRequest,
    LanceNamespace,
)
from lance_namespace.errors import (
    ConcurrentModificationError,
    InvalidInputError,
    LanceNamespaceError,
    NamespaceNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
    UnsupportedOperationError,
)

import backend
from backend.rules import alter_actions as aa
from backend.rules import batch_rules, index_rules
from backend.rules.batch_rules import Problem
from backend.rules.version_ranges import Span, parse
from backend.services import batch_builder as tb
from backend.services import index_overview
from backend.services import transactions as txsv
from backend.services.versions import latest_version
from tests.support import (
    create_table,
    make_table,
    stage_version,
    table_location,
    tree_digest,
    with_versions,
)

NS = ["a"]


def tid(name: str) -> list[str]:
    return [*NS, name]


@pytest.fixture
def ns_a(ns: LanceNamespace) -> LanceNamespace:
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    return ns


@pytest.fixture
def ns_root(backend_kind: str, tmp_path: Path) -> Path:
    """The directory behind the ``ns`` fixture (the local root or the REST server's root)."""
    return tmp_path / f"{backend_kind}-root"


@pytest.fixture
def local_ns(local_root: Path) -> LanceNamespace:
    ns = backend.connect(str(local_root))
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    return ns


def messages(problems: list[Problem], index: int | None = None) -> str:
    return "\n".join(p.message for p in problems if index is None or p.index == index)


def raw_delete(table_id: list[str], *pairs: tuple[int, int]) -> dict:
    """A DeleteTableVersions operation with spec ranges as given (the builder's
    ``delete_versions_op`` only makes inclusive spans, never ``-1`` or a start of 0)."""
    ranges = [{"start_version": s, "end_version": e} for s, e in pairs]
    return {"delete_table_versions": {"id": table_id, "ranges": ranges}}


# --------------------------------------------------------------------------- builder (pure)


def test_operations_move_remove_and_describe() -> None:
    ops = [
        tb.declare_op(["a", "new"], properties_={"owner": "me"}),
        tb.create_version_op(["a", "t"], 4, "/x/staged.manifest", manifest_size=10),
        tb.delete_versions_op(["a", "t"], parse("1-2, 4")),
        tb.deregister_op(["a", "old"]),
    ]
    kinds = [tb.kind_of(o) for o in ops]
    assert kinds == [
        "declare_table",
        "create_table_version",
        "delete_table_versions",
        "deregister_table",
    ]
    assert [tb.kind_of(o) for o in tb.move(ops, 2, -1)] == [
        "declare_table",
        "delete_table_versions",
        "create_table_version",
        "deregister_table",
    ]
    assert tb.move(ops, 0, -1) == ops  # clamped
    assert tb.move(ops, 3, +1) == ops
    assert tb.move(ops, 9, +1) == ops
    assert [tb.kind_of(o) for o in tb.remove(ops, 0)] == kinds[1:]
    assert tb.remove(ops, 9) == ops
    assert tb.describe_operation(ops[0]) == "DeclareTable a › new (1 property)"
    assert tb.describe_operation(ops[1]) == (
        "CreateTableVersion a › t -> v4 (manifest /x/staged.manifest)"
    )
    # Inclusive spans in, the spec's end-exclusive ranges on the operation, inclusive shown.
    assert ops[2]["delete_table_versions"]["ranges"] == [
        {"start_version": 1, "end_version": 3},
        {"start_version": 4, "end_version": 5},
    ]
    assert tb.describe_operation(ops[2]) == "DeleteTableVersions a › t: versions 1-2, 4"
    assert tb.describe_operation(ops[3]) == "DeregisterTable a › old"
    frame = tb.operations_frame(ops)
    assert list(frame["#"]) == [1, 2, 3, 4]  # numbered from 1, like every message
    assert list(frame["operation"]) == [
        "DeclareTable",
        "CreateTableVersion",
        "DeleteTableVersions",
        "DeregisterTable",
    ]
    assert list(frame["table"]) == ["a › new", "a › t", "a › t", "a › old"]


@pytest.mark.parametrize(
    "bad_id",
    [["a", ""], ["a", "b/c"], ["a", "has space"], ["a", ".."], ["a", "x$y"], ["a", "é"], []],
    ids=["empty", "slash", "space", "dotdot", "delimiter", "unicode", "no-parts"],
)
def test_builders_refuse_names_the_commit_refuses(bad_id: list[str]) -> None:
    with pytest.raises(InvalidInputError):
        tb.declare_op(bad_id)


def test_builders_refuse_bad_input() -> None:
    with pytest.raises(InvalidInputError):
        tb.create_version_op(["a", "t"], 4, "   ")  # no staged manifest
    with pytest.raises(InvalidInputError):
        tb.declare_op(["a", "t"], properties_={"": "v"})  # empty property key
    with pytest.raises(InvalidInputError):
        tb.deregister_op(["a", "b/c"])  # addressing rule: no path separators
    # Addressing an existing odd-but-safe name (not creating it) is fine.
    assert tb.deregister_op(["a", "has space"]) == {"deregister_table": {"id": ["a", "has space"]}}
    # One syntax for ranges: inclusive "2-5, 8"; the old "1:3" is gone.
    with pytest.raises(InvalidInputError):
        parse("1:3")
    with pytest.raises(InvalidInputError, match="start at 1"):
        parse("0-3")
    assert parse("2-5, 8") == [Span(2, 5), Span(8, 8)]


def test_request_and_wire_json() -> None:
    ops = [
        tb.declare_op(["a", "new"], location="/tmp/x"),
        tb.create_version_op(["a", "t"], 4, "/x/m.manifest", manifest_size=10, naming_scheme="V2"),
        tb.delete_versions_op(["a", "t"], parse("1-2")),
        tb.deregister_op(["a", "old"]),
    ]
    req = tb.to_request(ops)
    assert isinstance(req, BatchCommitTablesRequest)
    assert req.operations[0].declare_table == DeclareTableRequest(
        id=["a", "new"], location="/tmp/x"
    )
    assert req.operations[1].create_table_version.version == 4
    body = json.loads(tb.request_json(req))
    assert body == {
        "operations": [
            {"declare_table": {"id": ["a", "new"], "location": "/tmp/x"}},
            {
                "create_table_version": {
                    "id": ["a", "t"],
                    "version": 4,
                    "manifest_path": "/x/m.manifest",
                    "manifest_size": 10,
                    "naming_scheme": "V2",
                }
            },
            {
                "delete_table_versions": {
                    "id": ["a", "t"],
                    "ranges": [{"start_version": 1, "end_version": 3}],
                }
            },
            {"deregister_table": {"id": ["a", "old"]}},
        ]
    }
    # identical to the generated client's own serialisation
    assert json.loads(req.to_json()) == body
    # The builder's operations are the spec's CommitTableOperation JSON.
    assert [json.loads(o.to_json()) for o in req.operations] == ops


# --------------------------------------------------------------------------- validation


def test_validate_good_batch(ns_a: LanceNamespace) -> None:
    with_versions(ns_a, tid("t"), 3)
    create_table(ns_a, tid("old"), make_table(2))
    staged = stage_version(ns_a, tid("t"), make_table(2, start=100))
    ops = [
        tb.declare_op(tid("new")),
        tb.create_version_op(tid("t"), 4, staged.manifest_path),
        tb.delete_versions_op(tid("t"), parse("1-2")),
        tb.deregister_op(tid("old")),
    ]
    assert tb.validate(ns_a, ops) == []
    # a fifth version after the fourth: the rules follow the batch; a made-up manifest path
    # is the one problem (both backends check where a staged manifest lies)
    ops.insert(2, tb.create_version_op(tid("t"), 5, "/staged/5.manifest"))
    (problem,) = tb.validate(ns_a, ops)
    assert problem.number == 3 and "outside the table's staging areas" in problem.message


def test_validate_problems(ns_a: LanceNamespace) -> None:
    with_versions(ns_a, tid("t"), 3)
    create_table(ns_a, tid("u"), make_table(2))
    ops = [
        tb.declare_op(tid("t")),  # 0 exists
        tb.declare_op(["nope", "x"]),  # 1 missing namespace
        tb.create_version_op(tid("missing"), 1, "/m"),  # 2 missing table
        tb.create_version_op(tid("t"), 7, "/m"),  # 3 not latest+1
        tb.create_version_op(tid("t"), 4, "/m"),  # 4 fine
        tb.create_version_op(tid("t"), 4, "/m2"),  # 5 duplicate version
        tb.delete_versions_op(tid("t"), [Span(3, 1)]),  # 6 inverted
        raw_delete(tid("t"), (1, -1)),  # 7 covers latest (all)
        raw_delete(tid("t"), (2, 9)),  # 8 covers latest (4, created by operation 5)
        raw_delete(tid("t")),  # 9 no ranges
        tb.declare_op(tid("fresh")),  # 10
        tb.deregister_op(tid("fresh")),  # 11 contradiction
        tb.deregister_op(tid("u")),  # 12 fine
        tb.create_version_op(tid("u"), 2, "/m"),  # 13 after deregister
        tb.delete_versions_op(tid("t"), parse("50-60")),  # 14 matches nothing (warning)
        raw_delete(tid("t"), (0, 2)),  # 15 versions start at 1
    ]
    problems = tb.validate(ns_a, ops)
    by_index = {p.index: p for p in problems}
    assert "the table already exists" in messages(problems, 0)
    assert by_index[0].code.name == "TABLE_ALREADY_EXISTS"
    assert "namespace nope not found" in messages(problems, 1)
    assert by_index[1].code.name == "NAMESPACE_NOT_FOUND"
    assert "the table does not exist" in messages(problems, 2)
    assert by_index[2].code.name == "TABLE_NOT_FOUND"
    assert "version 7 is not the next version: the table is at version 3, so the next is 4" in (
        messages(problems, 3)
    )
    assert by_index[3].code.name == "CONCURRENT_MODIFICATION"
    assert messages(problems, 4) == ""
    assert "already created by operation 5" in messages(problems, 5)
    assert "empty or inverted" in messages(problems, 6)
    assert "covers version 4, the latest version" in messages(problems, 7)
    assert "covers version 4, the latest version" in messages(problems, 8)
    assert "No version ranges" in messages(problems, 9)
    assert messages(problems, 10) == ""
    assert "declared by operation 11 of this batch" in messages(problems, 11)
    assert messages(problems, 12) == ""
    assert "after operation 13, which deregisters the table" in messages(problems, 13)
    assert [p.severity for p in problems if p.index == 14] == ["warning"]
    assert "matches no existing version" in messages(problems, 14)
    assert "versions start at 1" in messages(problems, 15)
    # Operations are numbered from 1 in every message; .index stays 0-based.
    for p in problems:
        assert p.number == p.index + 1
        assert str(p) == f"operation {p.index + 1}: {p.message}"
    assert str(by_index[0]) == "operation 1: DeclareTable a$t: the table already exists"
    assert batch_rules.has_errors(problems)
    assert not batch_rules.has_errors([p for p in problems if p.index == 14])
    empty = tb.validate(ns_a, [])
    assert empty and empty[0].index is None and empty[0].number is None
    assert str(empty[0]).startswith("batch: ")


def test_validate_declared_only_table(ns_a: LanceNamespace) -> None:
    ns_a.declare_table(DeclareTableRequest(id=tid("d")))
    assert batch_rules.has_errors(tb.validate(ns_a, [tb.declare_op(tid("d"))]))  # declared = exists
    # version 1 of a declared table passes the rules; the made-up manifest is the problem
    (problem,) = tb.validate(ns_a, [tb.create_version_op(tid("d"), 1, "/m")])
    assert "staged manifest '/m' is outside" in problem.message, problem


def test_operation_without_a_kind_is_refused(ns_a: LanceNamespace) -> None:
    """An operation naming no known kind is one validate reports and the commit refuses."""
    ops = [tb.declare_op(tid("fine")), {"explode": {"id": ["a"]}}]
    problems = tb.validate(ns_a, ops)
    assert [p.number for p in problems] == [2]
    assert "exactly one of" in problems[0].message
    with pytest.raises(InvalidInputError, match="operation 2: exactly one of"):
        tb.commit(ns_a, ops)
    assert "fine" not in ns_a.list_tables({"id": NS}).tables


# ---------------------------------------------------- the builder and the commit agree


@pytest.mark.parametrize(
    "name", ["b/c", "has space", "..", "x$y", "naïve", "x" * 129], ids=lambda n: n[:10]
)
def test_validate_and_commit_agree_on_invalid_names(
    ns_a: LanceNamespace, ns_root: Path, name: str
) -> None:
    """A declared name the creation rule refuses: validate names the operation (from 1), the
    commit refuses it with the same error class, and no byte of the namespace changes."""
    create_table(ns_a, tid("t"), make_table(2))
    ops = [tb.declare_op(tid("fine")), {"declare_table": {"id": tid(name)}}]
    problems = tb.validate(ns_a, ops)
    errors = [p for p in problems if p.severity == "error"]
    assert [p.number for p in errors] == [2], problems
    assert str(errors[0]).startswith("operation 2: DeclareTable ")
    expected = type(errors[0].error())
    assert expected is InvalidInputError
    before = tree_digest(ns_root)
    with pytest.raises(LanceNamespaceError) as info:
        tb.commit(ns_a, ops)
    assert type(info.value) is expected
    assert "operation 2: DeclareTable " in str(info.value)
    assert tree_digest(ns_root) == before
    assert "fine" not in ns_a.list_tables({"id": NS}).tables


@pytest.mark.parametrize(
    ("build", "error", "number"),
    [
        (lambda: [tb.declare_op(tid("t"))], TableAlreadyExistsError, 1),
        (lambda: [tb.declare_op(tid("n")), tb.declare_op(tid("t"))], TableAlreadyExistsError, 2),
        (lambda: [tb.declare_op(tid("n")), tb.declare_op(["zz", "t"])], NamespaceNotFoundError, 2),
        (lambda: [tb.declare_op(tid("n")), tb.deregister_op(tid("nope"))], TableNotFoundError, 2),
        (
            lambda: [tb.declare_op(tid("n")), tb.create_version_op(tid("t"), 9, "/m")],
            ConcurrentModificationError,
            2,
        ),
        (
            lambda: [tb.declare_op(tid("n")), tb.delete_versions_op(tid("t"), parse("1-2"))],
            InvalidInputError,  # version 2 is the latest
            2,
        ),
    ],
    ids=["first", "second", "namespace", "table", "version", "latest"],
)
def test_operation_numbers_start_at_one_in_builder_and_commit(
    ns_a: LanceNamespace, ns_root: Path, build, error, number: int
) -> None:
    with_versions(ns_a, tid("t"), 2)
    ops = build()
    first = next(p for p in tb.validate(ns_a, ops) if p.severity == "error")
    assert first.number == number and first.index == number - 1
    assert str(first).startswith(f"operation {number}: ")
    assert type(first.error()) is error
    before = tree_digest(ns_root)
    with pytest.raises(error) as info:
        tb.commit(ns_a, ops)
    assert f"operation {number}: " in str(info.value)
    assert "operation 0" not in str(info.value)
    assert first.message in str(info.value)  # the very message validate showed
    assert info.value.operation_index == number - 1
    assert tree_digest(ns_root) == before


def test_commit_error_carries_the_operation_index(local_ns: LanceNamespace) -> None:
    create_table(local_ns, tid("t"), make_table(2))
    with pytest.raises(TableAlreadyExistsError) as info:
        tb.commit(local_ns, [tb.declare_op(tid("n")), tb.declare_op(tid("t"))])
    assert info.value.operation_index == 1
    assert "operation 2: DeclareTable a$t: the table already exists" in str(info.value)


# --------------------------------------------------------------------------- commit


def test_commit_or_readable_unsupported(ns_a: LanceNamespace) -> None:
    """The batch reaches the backend; if it cannot batch-commit, the error is readable."""
    ops = [tb.declare_op(tid("n1"))]
    try:
        response = tb.commit(ns_a, ops)
    except UnsupportedOperationError as err:
        info = backend.describe_error(err)
        assert info["code_name"] == "UNSUPPORTED" and info["message"]
        return
    frame = tb.results_frame(ops, response)
    assert list(frame["#"]) == [1]
    assert list(frame["operation"]) == ["DeclareTable"]
    assert frame["result"][0].startswith("declared")


# --------------------------------------------------------------------------- transactions


def test_parse_transaction_id() -> None:
    assert txsv.parse_transaction_id(" a$t$abc ") == ["a", "t", "abc"]
    assert txsv.parse_transaction_id("a/t/abc", "/") == ["a", "t", "abc"]
    for bad in ("", "  ", "a$$b", "a$t$", "$a"):
        with pytest.raises(InvalidInputError):
            txsv.parse_transaction_id(bad)
    with pytest.raises(InvalidInputError):
        txsv.parse_transaction_id("a$..$x")  # no part may name a parent directory


def test_alter_actions_validation_and_request() -> None:
    actions = [
        aa.set_status_action("Canceled"),
        aa.set_property_action("owner", "me", "Fail"),
        aa.unset_property_action("tmp", "Skip"),
    ]
    assert aa.action_problems(actions) == []
    req = tb.alter_request(["a", "t", "x"], actions)
    body = req.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert body["id"] == ["a", "t", "x"]
    (status, prop, unset) = body["actions"]
    # Statuses are case-insensitive in the spec; the engine sends its normalised form.
    assert list(status) == ["setStatusAction"]
    assert aa.normalize_status(status["setStatusAction"]["status"]) == "CANCELED"
    assert prop == {"setPropertyAction": {"key": "owner", "value": "me", "mode": "Fail"}}
    assert unset == {"unsetPropertyAction": {"key": "tmp", "mode": "Skip"}}
    assert aa.action_problems([]) == ["AlterTransaction needs at least one action"]
    bad_cases = [
        ([aa.set_status_action("Done")], "action 1", "unknown transaction status"),
        (
            [aa.set_status_action("Failed"), aa.set_status_action("Canceled")],
            "action 2",
            "only one set-status",
        ),
        ([aa.set_property_action("", "v")], "action 1", "non-empty key"),
        ([aa.set_property_action("k", "v", "Sometimes")], "action 1", "mode"),
        (
            [aa.set_property_action("k", "v"), aa.unset_property_action("k")],
            "action 2",
            "already changed by action 1",
        ),
    ]
    for bad, where, needle in bad_cases:
        (problem,) = aa.action_problems(bad)
        assert problem.lower().startswith(where) and needle in problem, problem
        with pytest.raises(InvalidInputError, match=needle):
            tb.alter_request(["a", "t", "x"], bad)


def test_describe_and_alter_transaction(ns_a: LanceNamespace, backend_kind: str) -> None:
    create_table(ns_a, tid("t"), make_table(10))
    resp = index_overview.create_index(
        ns_a, index_rules.build_index_request(tid("t"), "id", "BTREE", name="b")
    )
    assert resp.transaction_id
    txn = txsv.parse_transaction_id("$".join([*tid("t"), resp.transaction_id]))
    described = txsv.describe_transaction(ns_a, txn)
    assert described.status.upper() == "SUCCEEDED"
    assert described.properties and described.properties.get("operation") == "CreateIndex"
    assert list(txsv.properties_frame(described.properties).columns) == ["key", "value"]
    actions = [aa.set_property_action("reviewed", "yes"), aa.unset_property_action("nothing")]
    try:
        altered = tb.alter_transaction(ns_a, txn, actions)
    except LanceNamespaceError as err:
        # pylance's REST adapter may not support it; the error must still be readable
        assert backend_kind == "rest", err
        assert backend.describe_error(err)["message"]
        return
    assert (altered.properties or {}).get("reviewed") == "yes"
    again = txsv.describe_transaction(ns_a, txn)
    if backend_kind == "local":
        assert (again.properties or {}).get("reviewed") == "yes"


# --------------------------------------------------------------------------- staging (local only)


def test_stage_next_version_commits_a_real_version(local_ns: LanceNamespace) -> None:
    with_versions(local_ns, tid("t"), 2)
    staged = tb.stage_next_version(local_ns, tid("t"))
    assert staged.version == 3 and staged.based_on == 2
    path = Path(staged.manifest_path)
    assert path.is_file() and path.stat().st_size == staged.manifest_size
    assert path.parent.name == "_staging"  # inside the namespace's staging area
    location = table_location(local_ns, tid("t"))
    # nothing visible yet
    assert lance.dataset(str(location)).latest_version == 2
    ops = [tb.create_version_op(tid("t"), staged.version, staged.manifest_path)]
    assert tb.validate(local_ns, ops) == []
    local_ns.create_table_version(
        CreateTableVersionRequest(
            id=tid("t"),
            version=staged.version,
            manifest_path=staged.manifest_path,
            manifest_size=staged.manifest_size,
        )
    )
    ds = lance.dataset(str(location))
    assert (
        ds.version == 3 and ds.count_rows() == lance.dataset(str(location), version=2).count_rows()
    )
    # the next version is staged from the new latest
    assert tb.stage_next_version(local_ns, tid("t")).version == 4


def test_discard_staged_removes_only_staging_files(local_ns: LanceNamespace) -> None:
    with_versions(local_ns, tid("t"), 2)
    staged = tb.stage_next_version(local_ns, tid("t"))
    location = table_location(local_ns, tid("t"))
    before = tree_digest(location / "_versions")
    assert tb.discard_staged(local_ns, [staged]) == 1 + len(staged.transaction_files)
    assert not Path(staged.manifest_path).exists()
    assert all(not Path(t).exists() for t in staged.transaction_files)
    assert tree_digest(location / "_versions") == before
    # A path outside a _staging directory is never removed, even if it is a manifest.
    published = next((location / "_versions").glob("*.manifest"))
    assert tb.discard_staged(local_ns, [{"manifest_path": str(published)}]) == 0
    assert published.is_file()


def test_stage_next_version_rest_is_unsupported(rest_server) -> None:
    ns = backend.connect(rest_server.url)
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    create_table(ns, tid("t"), make_table(3))
    with pytest.raises(UnsupportedOperationError, match="local backend only"):
        tb.stage_next_version(ns, tid("t"))


def test_batch_commit_with_staged_version_local(local_ns: LanceNamespace) -> None:
    """The builder's request, with a version staged by the helper, commits for real."""
    assert backend.capabilities(local_ns).batch_commit
    with_versions(local_ns, tid("t"), 3)
    create_table(local_ns, tid("old"), make_table(2))
    staged = tb.stage_next_version(local_ns, tid("t"))
    ops = [
        tb.declare_op(tid("new"), properties_={"owner": "me"}),
        tb.create_version_op(
            tid("t"), staged.version, staged.manifest_path, manifest_size=staged.manifest_size
        ),
        tb.delete_versions_op(tid("t"), parse("1")),
        tb.deregister_op(tid("old")),
    ]
    assert tb.validate(local_ns, ops) == []
    response = tb.commit(local_ns, ops)
    assert response.transaction_id
    frame = tb.results_frame(ops, response)
    assert list(frame["#"]) == [1, 2, 3, 4]
    assert list(frame["result"]) == [
        frame["result"][0],
        "version 4 created",
        "1 version deleted",
        frame["result"][3],
    ]
    assert frame["result"][0].startswith("declared")
    assert frame["result"][3].startswith("deregistered")
    made = response.results[1].create_table_version.version
    assert made.manifest_path.startswith("/") and Path(made.manifest_path).is_file()
    described = txsv.describe_transaction(local_ns, [response.transaction_id])
    assert described.status.upper() == "SUCCEEDED"
    # The batch's transaction follows the one AlterTransaction engine: a Fail-mode set of an
    # existing key is a conflict, a read-only key cannot change, nothing changes on refusal.
    txn = [response.transaction_id]
    tb.alter_transaction(local_ns, txn, [aa.set_property_action("ticket", "OPS-1")])
    with pytest.raises(ConcurrentModificationError):
        tb.alter_transaction(local_ns, txn, [aa.set_property_action("ticket", "OPS-2", "Fail")])
    with pytest.raises(InvalidInputError):
        tb.alter_transaction(local_ns, txn, [aa.set_property_action("operation_count", "9")])
    assert txsv.describe_transaction(local_ns, txn).properties["ticket"] == "OPS-1"
    # a second batch against the new state validates against it
    again = tb.validate(local_ns, [tb.create_version_op(tid("t"), 4, "/m")])
    assert "version 4 is taken: the table is at version 4, so the next is 5" in messages(again)
    # and the versions service sees the same latest version
    assert latest_version(local_ns, tid("t")) == 4


def test_describe_a_bare_transaction_id_in_its_table(ns_a: LanceNamespace) -> None:
    """Both backends refuse a bare table transaction id on its own; in the table's context
    the console finds it."""
    from lance_namespace.errors import TransactionNotFoundError

    create_table(ns_a, tid("t"), make_table(20))
    resp = index_overview.create_index(
        ns_a, index_rules.build_index_request(tid("t"), "id", "BTREE", name="b")
    )
    bare = resp.transaction_id
    found, described = txsv.describe_transaction_in(ns_a, [bare], tid("t"))
    assert found == [*tid("t"), bare]
    assert described.status.upper() == "SUCCEEDED"
    assert described.properties["operation"] == "CreateIndex"
    with pytest.raises(TransactionNotFoundError, match="no table is picked"):
        txsv.describe_transaction_in(ns_a, [bare], None)
    with pytest.raises(TransactionNotFoundError, match="neither on its own nor in the table"):
        txsv.describe_transaction_in(ns_a, ["no-such-txn"], tid("t"))
    full = [*tid("t"), bare]  # a full id is described as given
    assert txsv.describe_transaction_in(ns_a, full, ["other", "table"])[0] == full
