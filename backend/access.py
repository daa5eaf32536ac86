"""Who may do what: the three roles, the role of each operation, and the roles file.

Roles, lowest first:

* ``viewer`` - reads only;
* ``editor`` - writes that destroy nothing: declare, create, insert, update, merge, index
  builds, tags, restore, rename, schema metadata, optimize, batch commits without deletes or
  deregisters, staged appends and updates (and discarding staged changes);
* ``admin`` - everything, including drops, deregisters, CASCADE, cleanup (of old versions'
  files and of staged changes never published too), the namespace's maintenance policy,
  version deletes, row deletes (an upsert deleting the rows its data lacks too, a staged
  delete or overwrite), index drops, branch deletes, column drops and the demo tools.

:func:`required_role` is the one classification of every operation (both backends' names plus
the console's own service-level writes); :func:`check` raises ``PermissionDeniedError`` with the
reason. :class:`RoleMap` reads the roles file (``$LANCE_CONSOLE_ROLES`` or
``~/.config/lance-console/roles.toml``)::

    default = "viewer"            # a signed-in user no rule names
    groups_claim = "groups"       # the ID-token claim that lists a user's groups

    [users]                       # e-mail -> role
    "ada@example.com" = "admin"

    [subjects]                    # the token's ``sub`` -> role
    "248289761001" = "editor"

    [groups]                      # a group in ``groups_claim`` -> role
    "data-team" = "editor"

A user gets the highest role any rule gives them.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from lance_namespace.errors import InvalidInputError, PermissionDeniedError

from .config.toml_files import TomlFileError, read_toml
from .spec.operations import READ_OPS

VIEWER, EDITOR, ADMIN = "viewer", "editor", "admin"
ROLES: tuple[str, ...] = (VIEWER, EDITOR, ADMIN)
_RANK = {r: i for i, r in enumerate(ROLES)}

# The console backends' methods that read no data of the namespace (no ids, no rows): the
# only ones a user without a role may call through the gate.
NO_DATA_OPS: frozenset[str] = frozenset(
    {
        "batch_commit_refusal",
        "capabilities",
        "close",
        "format_id",
        "namespace_id",
        "supports_batch_commit",
        "supports_rename",
    }
)
# Writes that delete data, catalog entries or history: admin only.
DESTRUCTIVE_OPS: frozenset[str] = frozenset(
    {
        "drop_table",
        "deregister_table",
        "drop_namespace",
        "batch_delete_table_versions",
        "delete_from_table",
        "drop_table_index",
        "delete_table_branch",
        "alter_table_drop_columns",
        "cleanup",  # the console's cleanup by policy
        "cleanup_old_versions",  # removes the files of old versions (time travel to them)
        "cleanup_staged",  # ... and of the staged changes never published
    }
)

# The demo tools (a batch commit with a fault switched on, a concurrent writer): they write
# on purpose what a presenter shows failing. Admin only.
DEMO_OPS: frozenset[str] = frozenset({"demo_fault_commit", "demo_concurrent_writer"})

# Staged changes whose publication removes rows: admin only, as DeleteFromTable.
_DESTRUCTIVE_STAGE_KINDS = ("delete", "overwrite")

# Changes to the console's own shared settings (the saved-connections file every visitor of
# the server sees): admin only, and never on a read-only launch.
CONFIG_OPS: frozenset[str] = frozenset({"save_connection", "delete_connection"})

# The namespace's maintenance policy (``backend.services.maintenance``), which every console
# and scheduled ``lance-console maintain`` of the namespace applies: admin only.
POLICY_OPS: frozenset[str] = frozenset({"save_maintenance_policy", "delete_maintenance_policy"})

# Targets that are not configuration: opening a folder, bucket or URL typed in the "Connect
# to…" dialog, and creating a missing directory: admin only (``backend.config.targets``).
TARGET_OPS: frozenset[str] = frozenset({"open_target", "create_target"})

# What a BatchCommitTables operation entry holds, and which of them are destructive.
_DESTRUCTIVE_BATCH_KEYS = ("delete_table_versions", "deregister_table")

_WHAT_VERB = {
    VIEWER: "read the namespace (every role may; the roles file gives this user none)",
    EDITOR: "change the namespace (editors and admins may)",
    ADMIN: "delete data, catalog entries or history (admins only)",
}


def rank(role: str) -> int:
    return _RANK.get(role, -1)


def is_write(operation: str) -> bool:
    return operation not in READ_OPS


def _batch_is_destructive(request: Any) -> bool:
    operations = _field(request, "operations") or []
    for entry in operations:
        for key in _DESTRUCTIVE_BATCH_KEYS:
            if _field(entry, key) is not None:
                return True
    return False


def _field(value: Any, name: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def required_role(operation: str, request: Any = None) -> str:
    """The lowest role allowed to run ``operation`` with ``request``."""
    if operation in READ_OPS:
        return VIEWER
    if operation in DESTRUCTIVE_OPS or operation in CONFIG_OPS or operation in TARGET_OPS:
        return ADMIN
    if operation in POLICY_OPS or operation in DEMO_OPS:
        return ADMIN
    if operation == "stage_change" and _field(request, "kind") in _DESTRUCTIVE_STAGE_KINDS:
        return ADMIN
    if operation == "batch_commit_tables" and _batch_is_destructive(request):
        return ADMIN
    if operation == "drop_namespace_cascade":
        return ADMIN
    if operation == "merge_insert_into_table" and _field(
        request, "when_not_matched_by_source_delete"
    ):
        return ADMIN  # an upsert that deletes the table's rows the data lacks
    return EDITOR


def allowed(role: str | None, operation: str, request: Any = None) -> bool:
    return rank(role or "") >= rank(required_role(operation, request))


def denial(role: str | None, operation: str, request: Any = None) -> str | None:
    """Why ``role`` may not run ``operation`` (``None``: it may). Shown next to a disabled
    button and in the refusal."""
    need = required_role(operation, request)
    if rank(role or "") >= rank(need):
        return None
    who = f"the {role} role" if role else "a user without a role"
    if operation in CONFIG_OPS:
        return f"{who} may not change the console's saved connections (admins only)"
    if operation in POLICY_OPS:
        return f"{who} may not change the namespace's maintenance policy (admins only)"
    if operation == "open_target":
        return f"{who} may not open a folder, bucket or URL that is not configured (admins only)"
    if operation == "create_target":
        return f"{who} may not create a folder for a namespace (admins only)"
    return f"{who} may not {_WHAT_VERB.get(need, 'write')}"


def check(role: str | None, operation: str, request: Any = None) -> None:
    """``PermissionDeniedError`` when ``role`` may not run ``operation``."""
    reason = denial(role, operation, request)
    if reason:
        raise PermissionDeniedError(f"{reason}: {operation} is refused")


# -- the roles file -------------------------------------------------------------------------------
ROLE_FILE_TABLES = ("users", "subjects", "groups")
ROLE_FILE_KEYS = ("default", "groups_claim", *ROLE_FILE_TABLES)


def role_file_problems(data: Mapping[str, Any]) -> list[str]:
    """Every bad entry of a parsed roles file (empty: it is valid). Pure."""
    roles = ", ".join(ROLES)
    problems = [
        f"unknown key {key!r} (the keys are {', '.join(ROLE_FILE_KEYS)})"
        for key in data
        if key not in ROLE_FILE_KEYS
    ]
    default = data.get("default", VIEWER)
    if default not in (*ROLES, ""):
        problems.append(f"default role {default!r} is not a role (roles are {roles})")
    claim = data.get("groups_claim", "groups")
    if not isinstance(claim, str):
        problems.append("groups_claim must be a text")
    for name in ROLE_FILE_TABLES:
        raw = data.get(name) or {}
        if not isinstance(raw, Mapping):
            problems.append(f"[{name}] must be a table")
            continue
        problems += [
            f"[{name}] {key!r} has role {role!r} (roles are {roles})"
            for key, role in raw.items()
            if role not in ROLES
        ]
    return problems


def email_verified(claims: Mapping[str, Any]) -> bool:
    """Whether the ID token says its e-mail address is verified (``email_verified`` true; some
    providers send the text ``"true"``). Without it an e-mail rule gives no role: anyone may
    type any address at a provider that does not verify it."""
    value = claims.get("email_verified")
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def roles_path() -> Path:
    raw = os.environ.get("LANCE_CONSOLE_ROLES")
    if raw:
        return Path(raw).expanduser()
    return Path("~/.config/lance-console/roles.toml").expanduser()


@dataclasses.dataclass(frozen=True)
class RoleMap:
    """Users (e-mail, subject, groups) to roles."""

    users: Mapping[str, str] = dataclasses.field(default_factory=dict)
    subjects: Mapping[str, str] = dataclasses.field(default_factory=dict)
    groups: Mapping[str, str] = dataclasses.field(default_factory=dict)
    default: str | None = VIEWER
    groups_claim: str = "groups"

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "roles file") -> RoleMap:
        """The roles of a parsed roles file; ``InvalidInputError`` naming every bad entry (an
        unknown role such as ``"Admin"``, an unknown key or table, a table that is not one)."""
        problems = role_file_problems(data)
        if problems:
            raise InvalidInputError(f"{source}: " + "; ".join(problems))

        def table(name: str) -> dict[str, str]:
            raw = data.get(name) or {}
            return {
                str(key).strip().lower() if name == "users" else str(key): role
                for key, role in raw.items()
            }

        return cls(
            users=table("users"),
            subjects=table("subjects"),
            groups=table("groups"),
            default=data.get("default", VIEWER) or None,
            groups_claim=str(data.get("groups_claim") or "groups"),
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> RoleMap:
        """The roles file (missing: every signed-in user is a viewer)."""
        p = Path(path) if path is not None else roles_path()
        try:
            data = read_toml(p)
        except FileNotFoundError:
            return cls()
        except TomlFileError as e:
            raise InvalidInputError(f"roles file {p}: {e}") from None
        return cls.from_mapping(data, source=f"roles file {p}")

    def role_of(self, claims: Mapping[str, Any]) -> str | None:
        """The highest role the rules give a user with these ID-token ``claims``. An e-mail
        rule counts only when the provider vouches for the address (``email_verified``)."""
        found: list[str] = []
        email = str(claims.get("email") or "").strip().lower()
        if email and email in self.users and email_verified(claims):
            found.append(self.users[email])
        sub = str(claims.get("sub") or "")
        if sub and sub in self.subjects:
            found.append(self.subjects[sub])
        groups = claims.get(self.groups_claim) or []
        if isinstance(groups, str):
            groups = [groups]
        if isinstance(groups, Iterable):
            found += [self.groups[str(g)] for g in groups if str(g) in self.groups]
        if not found:
            return self.default
        return max(found, key=rank)
