"""Roles: the classification of every operation and the roles file."""

from __future__ import annotations

from pathlib import Path

import pytest
from lance_namespace import BatchCommitTablesRequest
from lance_namespace.errors import InvalidInputError, PermissionDeniedError

from backend import access
from backend.spec.operations import OPERATIONS


def test_every_spec_operation_is_classified_by_what_it_does() -> None:
    for op, operation in OPERATIONS.items():
        role = access.required_role(op)
        if operation.read_only:
            assert role == access.VIEWER, op
        else:
            assert role in (access.EDITOR, access.ADMIN), op
    assert access.required_role("drop_table") == access.ADMIN
    assert access.required_role("deregister_table") == access.ADMIN
    assert access.required_role("batch_delete_table_versions") == access.ADMIN
    assert access.required_role("declare_table") == access.EDITOR
    assert access.required_role("create_table_tag") == access.EDITOR
    assert access.required_role("create_table_index") == access.EDITOR
    assert access.required_role("compact_files") == access.EDITOR  # a console-only write


def batch(*ops: dict) -> BatchCommitTablesRequest:
    return BatchCommitTablesRequest.model_validate({"operations": list(ops)})


def test_batch_commit_needs_admin_only_with_deletes_or_deregisters() -> None:
    declare = {"declare_table": {"id": ["a", "t"]}}
    deregister = {"deregister_table": {"id": ["a", "u"]}}
    delete = {
        "delete_table_versions": {
            "id": ["a", "u"],
            "ranges": [{"start_version": 1, "end_version": 1}],
        }
    }
    assert access.required_role("batch_commit_tables", batch(declare)) == access.EDITOR
    assert access.required_role("batch_commit_tables", batch(declare, deregister)) == access.ADMIN
    assert access.required_role("batch_commit_tables", batch(delete)) == access.ADMIN
    assert access.required_role("batch_commit_tables", {"operations": [deregister]}) == "admin"


@pytest.mark.parametrize(
    ("role", "op", "ok"),
    [
        ("viewer", "list_tables", True),
        ("viewer", "declare_table", False),
        ("editor", "declare_table", True),
        ("editor", "drop_table", False),
        ("admin", "drop_table", True),
        (None, "list_tables", False),
    ],
)
def test_check_refuses_with_the_reason(role, op, ok) -> None:
    if ok:
        access.check(role, op)
        assert access.denial(role, op) is None
    else:
        with pytest.raises(PermissionDeniedError) as info:
            access.check(role, op)
        assert op in str(info.value)


def test_role_map_highest_rule_wins(tmp_path: Path) -> None:
    path = tmp_path / "roles.toml"
    path.write_text(
        'default = "viewer"\n'
        'groups_claim = "roles"\n'
        '[users]\n"Ada@Example.com" = "editor"\n'
        '[subjects]\n"sub-1" = "admin"\n'
        '[groups]\n"ops" = "admin"\n"data" = "editor"\n'
    )
    roles = access.RoleMap.load(path)
    ada = {"email": "ada@example.com", "email_verified": True}
    assert roles.role_of(ada) == "editor"
    assert roles.role_of({**ada, "sub": "sub-1"}) == "admin"
    assert roles.role_of({"email": "x@example.com", "roles": ["data"]}) == "editor"
    assert roles.role_of({"email": "x@example.com", "roles": "ops"}) == "admin"
    assert roles.role_of({"email": "nobody@example.com"}) == "viewer"
    assert access.RoleMap.load(tmp_path / "missing.toml").role_of({"email": "a"}) == "viewer"


def test_role_map_refuses_unknown_roles(tmp_path: Path) -> None:
    path = tmp_path / "roles.toml"
    path.write_text('[users]\n"a@b.c" = "root"\n')
    with pytest.raises(InvalidInputError, match="roles are viewer, editor, admin"):
        access.RoleMap.load(path)
    # every bad entry is named at once, with the file: a capitalised role, an unknown
    # default, a misspelt table (its rules would silently not apply)
    path.write_text(
        'default = "reader"\n[users]\n"ok@b.c" = "admin"\n"ada@b.c" = "Admin"\n'
        '[groups]\n"ops" = "Editor"\n[user]\n"bob@b.c" = "admin"\n'
    )
    with pytest.raises(InvalidInputError) as info:
        access.RoleMap.load(path)
    text = str(info.value)
    assert text.startswith(f"roles file {path}: ")
    for needle in ("'ada@b.c' has role 'Admin'", "'ops' has role 'Editor'", "'reader'", "'user'"):
        assert needle in text, needle
    assert "ok@b.c" not in text  # only the bad entries
    path.write_text("[users\n")
    with pytest.raises(InvalidInputError, match="roles file"):
        access.RoleMap.load(path)


@pytest.mark.parametrize(
    ("verified", "role"),
    [(True, "admin"), ("true", "admin"), (False, None), ("false", None), (None, None), (1, None)],
)
def test_an_email_rule_needs_a_verified_email(verified, role) -> None:
    roles = access.RoleMap.from_mapping(
        {"default": "", "users": {"ada@example.com": "admin"}, "subjects": {"s-9": "viewer"}}
    )
    claims = {"email": "Ada@Example.com", "sub": "s-1"}
    if verified is not None:
        claims["email_verified"] = verified
    assert roles.role_of(claims) == role
    # the subject and group rules do not depend on the e-mail
    assert roles.role_of({**claims, "sub": "s-9"}) == (role or "viewer")


def test_no_default_and_no_rule_is_no_role() -> None:
    roles = access.RoleMap.from_mapping({"default": "", "users": {"ada@example.com": "admin"}})
    assert roles.role_of({"email": "eve@example.com", "email_verified": True}) is None
    assert roles.role_of({}) is None
    with pytest.raises(PermissionDeniedError, match="without a role may not read"):
        access.check(None, "list_tables")
    assert access.denial("viewer", "list_tables") is None
