"""backend/txn_builder.py: batch-commit builder, validation, wire JSON, transactions, staging.

Validation and transaction calls run on both backends (``ns`` fixture: a real local directory
and a real ``RestAdapter`` server); staging a manifest is local-only by design.
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
from lance_namespace.errors import LanceNamespaceError, UnsupportedOperationError

import backend
from backend import txn_builder as tb
from tests.support import create_table, make_table, table_location, with_versions

NS = ["a"]


def tid(name: str) -> list[str]:
    return [*NS, name]


@pytest.fixture
def ns_a(ns: LanceNamespace) -> LanceNamespace:
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    return ns


@pytest.fixture
def local_ns(local_root: Path) -> LanceNamespace:
    ns = backend.connect(str(local_root))
    ns.create_namespace(CreateNamespaceRequest(id=NS))
    return ns


def messages(problems: list[tb.Problem], index: int | None = None) -> str:
    return "\n".join(p.message for p in problems if index is None or p.index == index)


# --------------------------------------------------------------------------- builder (pure)


def test_operations_move_remove_and_describe() -> None:
    ops = [
        tb.declare_op(["a", "new"], properties={"owner": "me"}),
        tb.create_version_op(["a", "t"], 4, "/x/staged.manifest", manifest_size=10),
        tb.delete_versions_op(["a", "t"], [(1, 3), (0, -1)]),
        tb.deregister_op(["a", "old"]),
    ]
    assert [o["kind"] for o in tb.move(ops, 2, -1)] == [
        "declare_table",
        "delete_table_versions",
        "create_table_version",
        "deregister_table",
    ]
    assert tb.move(ops, 0, -1) == ops  # clamped
    assert tb.move(ops, 3, +1) == ops
    assert [o["kind"] for o in tb.remove(ops, 0)] == [o["kind"] for o in ops[1:]]
    assert tb.remove(ops, 9) == ops
    assert tb.describe_operation(ops[1]) == (
        "CreateTableVersion a$t -> v4 (manifest /x/staged.manifest)"
    )
    assert tb.describe_operation(ops[2]) == "DeleteTableVersions a$t: [1, 3), [0, latest]"
    frame = tb.operations_frame(ops)
    assert list(frame["operation"]) == [
        "DeclareTable",
        "CreateTableVersion",
        "DeleteTableVersions",
        "DeregisterTable",
    ]
    with pytest.raises(ValueError):
        tb.declare_op(["a", ""])


def test_request_and_wire_json() -> None:
    ops = [
        tb.declare_op(["a", "new"], location="/tmp/x"),
        tb.create_version_op(["a", "t"], 4, "/x/m.manifest", manifest_size=10, naming_scheme="V2"),
        tb.delete_versions_op(["a", "t"], [(1, 3)]),
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
    with pytest.raises(ValueError):
        tb.to_request([{"kind": "explode", "id": ["a"]}])


# --------------------------------------------------------------------------- validation


def test_validate_good_batch(ns_a: LanceNamespace) -> None:
    with_versions(ns_a, tid("t"), 3)
    create_table(ns_a, tid("old"), make_table(2))
    ops = [
        tb.declare_op(tid("new")),
        tb.create_version_op(tid("t"), 4, "/staged/4.manifest"),
        tb.create_version_op(tid("t"), 5, "/staged/5.manifest"),
        tb.delete_versions_op(tid("t"), [(1, 3)]),
        tb.deregister_op(tid("old")),
    ]
    assert tb.validate(ns_a, ops) == []


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
        tb.delete_versions_op(tid("t"), [(3, 1)]),  # 6 inverted
        tb.delete_versions_op(tid("t"), [(0, -1)]),  # 7 covers latest (all)
        tb.delete_versions_op(tid("t"), [(2, 9)]),  # 8 covers latest (4)
        tb.delete_versions_op(tid("t"), []),  # 9 no ranges
        tb.declare_op(tid("fresh")),  # 10
        tb.deregister_op(tid("fresh")),  # 11 contradiction
        tb.deregister_op(tid("u")),  # 12 fine
        tb.create_version_op(tid("u"), 2, "/m"),  # 13 after deregister
        tb.delete_versions_op(tid("t"), [(50, 60)]),  # 14 matches nothing (warning)
    ]
    problems = tb.validate(ns_a, ops)
    assert "already exists" in messages(problems, 0)
    assert "Namespace 'nope' does not exist" in messages(problems, 1)
    assert "does not exist" in messages(problems, 2)
    assert "not the next version" in messages(problems, 3) and "latest is 3" in messages(
        problems, 3
    )
    assert messages(problems, 4) == ""
    assert "Duplicate" in messages(problems, 5)
    assert "empty or inverted" in messages(problems, 6)
    assert "covers the latest version" in messages(problems, 7)
    assert "covers the latest version (4)" in messages(problems, 8)
    assert "No version ranges" in messages(problems, 9)
    assert messages(problems, 10) == ""
    assert "Contradiction" in messages(problems, 11)
    assert messages(problems, 12) == ""
    assert "deregistered by operation #13" in messages(problems, 13)
    assert [p.severity for p in problems if p.index == 14] == ["warning"]
    assert tb.has_errors(problems)
    assert not tb.has_errors([p for p in problems if p.index == 14])
    assert tb.validate(ns_a, []) and tb.validate(ns_a, [])[0].index is None


def test_validate_declared_only_table(ns_a: LanceNamespace) -> None:
    ns_a.declare_table(DeclareTableRequest(id=tid("d")))
    assert tb.validate(ns_a, [tb.declare_op(tid("d"))])  # already declared = exists
    ok = tb.validate(ns_a, [tb.create_version_op(tid("d"), 1, "/m")])
    assert not tb.has_errors(ok), ok


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
    assert list(frame["operation"]) == ["DeclareTable"]
    assert frame["result"][0].startswith("declared")


# --------------------------------------------------------------------------- transactions


def test_parse_transaction_id() -> None:
    assert tb.parse_transaction_id(" a$t$abc ") == ["a", "t", "abc"]
    assert tb.parse_transaction_id("a/t/abc", "/") == ["a", "t", "abc"]
    for bad in ("", "  ", "a$$b", "a$t$"):
        with pytest.raises(ValueError):
            tb.parse_transaction_id(bad)


def test_alter_actions_validation_and_request() -> None:
    actions = [
        tb.set_status_action("Canceled"),
        tb.set_property_action("owner", "me", "Fail"),
        tb.unset_property_action("tmp", "Skip"),
    ]
    assert tb.validate_alter_actions(actions) == []
    req = tb.build_alter_request(["a", "t", "x"], actions)
    body = req.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert body["actions"] == [
        {"setStatusAction": {"status": "Canceled"}},
        {"setPropertyAction": {"key": "owner", "value": "me", "mode": "Fail"}},
        {"unsetPropertyAction": {"key": "tmp", "mode": "Skip"}},
    ]
    assert tb.validate_alter_actions([]) == ["Add at least one action."]
    bad = [
        tb.set_status_action("Done"),
        tb.set_status_action("Failed"),
        tb.set_property_action("", "v"),
        tb.set_property_action("k", "v", "Sometimes"),
        tb.unset_property_action("k"),
    ]
    text = " ".join(tb.validate_alter_actions(bad))
    for needle in ("Only one set-status", "status must be one of", "key is empty", "mode must", "both set and unset"):  # fmt: skip
        assert needle in text, text
    with pytest.raises(ValueError):
        tb.build_alter_request(["a"], bad)


def test_describe_and_alter_transaction(ns_a: LanceNamespace, backend_kind: str) -> None:
    from backend import indexes as ix

    create_table(ns_a, tid("t"), make_table(10))
    resp = ix.create_index(ns_a, ix.build_index_request(tid("t"), "id", "BTREE", name="b"))
    assert resp.transaction_id
    txn = tb.parse_transaction_id("$".join([*tid("t"), resp.transaction_id]))
    described = tb.describe_transaction(ns_a, txn)
    assert described.status.upper() == "SUCCEEDED"
    assert described.properties and described.properties.get("operation") == "CreateIndex"
    assert list(tb.properties_frame(described.properties).columns) == ["key", "value"]
    actions = [tb.set_property_action("reviewed", "yes"), tb.unset_property_action("nothing")]
    try:
        altered = tb.alter_transaction(ns_a, txn, actions)
    except LanceNamespaceError as err:
        # pylance's REST adapter may not support it; the error must still be readable
        assert backend_kind == "rest", err
        assert backend.describe_error(err)["message"]
        return
    assert (altered.properties or {}).get("reviewed") == "yes"
    again = tb.describe_transaction(ns_a, txn)
    if backend_kind == "local":
        assert (again.properties or {}).get("reviewed") == "yes"


# --------------------------------------------------------------------------- staging (local only)


def test_stage_next_version_commits_a_real_version(local_ns: LanceNamespace) -> None:
    with_versions(local_ns, tid("t"), 2)
    staged = tb.stage_next_version(local_ns, tid("t"))
    assert staged.version == 3 and staged.based_on == 2
    path = Path(staged.manifest_path)
    assert path.is_file() and path.stat().st_size == staged.manifest_size
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
        tb.declare_op(tid("new"), properties={"owner": "me"}),
        tb.create_version_op(
            tid("t"), staged.version, staged.manifest_path, manifest_size=staged.manifest_size
        ),
        tb.delete_versions_op(tid("t"), [(1, 2)]),
        tb.deregister_op(tid("old")),
    ]
    assert tb.validate(local_ns, ops) == []
    response = tb.commit(local_ns, ops)
    assert response.transaction_id
    frame = tb.results_frame(ops, response)
    assert list(frame["result"]) == [
        frame["result"][0],
        "version 4 created",
        "1 versions deleted",
        frame["result"][3],
    ]
    assert frame["result"][0].startswith("declared")
    assert frame["result"][3].startswith("deregistered")
    assert tb.latest_version(local_ns, tid("t")) == 4
    described = tb.describe_transaction(local_ns, [response.transaction_id])
    assert described.status.upper() == "SUCCEEDED"
    # a second batch against the new state validates against it
    again = tb.validate(local_ns, [tb.create_version_op(tid("t"), 4, "/m")])
    assert "latest is 4" in messages(again)
