"""A REST server that does not implement BatchCommitTables is said up front: its server
profile, or its refusal of an earlier batch commit in the session, makes Validate report an
error (never "valid") and the next commit is refused before anything is sent."""

from __future__ import annotations

from typing import Any

import pytest
from lance_namespace import CreateNamespaceRequest
from lance_namespace.errors import ErrorCode, UnsupportedOperationError

import backend
from backend.services import batch_builder as bb

OPS = [bb.declare_op(["a", "planned"])]


def batch_requests(ns: Any) -> int:
    return sum(1 for e in ns.wire_log if e.op == "batch_commit_tables")


def test_a_server_profile_says_it_before_validate(rest_server: Any) -> None:
    ns = backend.connect(rest_server.url, server_profile="lance-dir")
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    notice = bb.batch_commit_notice(ns)
    assert notice and "BatchCommitTables" in notice and "lance-dir" in notice
    (problem,) = bb.validate(ns, OPS)
    assert problem.severity == "error" and problem.code == ErrorCode.UNSUPPORTED
    assert problem.index is None and "does not implement BatchCommitTables" in problem.message
    with pytest.raises(UnsupportedOperationError, match="does not implement"):
        bb.commit(ns, OPS)
    assert batch_requests(ns) == 0  # refused before anything was sent


def test_an_earlier_refusal_is_remembered(rest_server: Any) -> None:
    ns = backend.connect(rest_server.url)
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    assert bb.batch_commit_notice(ns) is None  # unknown until the server answers
    assert bb.validate(ns, OPS) == []
    with pytest.raises(UnsupportedOperationError):
        bb.commit(ns, OPS)  # pylance's RestAdapter: HTTP 500 "not implemented"
    assert batch_requests(ns) == 1
    notice = bb.batch_commit_notice(ns)
    assert notice and "refused a batch commit earlier" in notice
    problems = bb.validate(ns, OPS)
    assert [p.severity for p in problems] == ["error"]
    with pytest.raises(UnsupportedOperationError, match="does not implement"):
        bb.commit(ns, OPS)
    assert batch_requests(ns) == 1


def test_the_local_backend_has_no_notice(tmp_path: Any) -> None:
    root = tmp_path / "root"
    root.mkdir()
    assert bb.batch_commit_notice(backend.connect(str(root))) is None
