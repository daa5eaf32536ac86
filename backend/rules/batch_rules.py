"""BatchCommitTables rules: the one validation of a batch, for the builder and for the commit.

:func:`check_batch` walks the operations in order against a :class:`CatalogView` of the
namespace (what exists now) and a simulation of the operations before each one (a version
created by operation 1 is operation 2's "latest"). It returns every :class:`Problem`; the
local backend's commit refuses the batch on the first error, the builder lists them all.

Checked, before any lock is taken or anything is read from storage:

* the batch holds 1 to :data:`MAX_OPERATIONS` operations, each with exactly one kind;
* ids follow ``backend.rules.ids`` (new names for declared tables), properties ``backend.rules.properties``;
* the namespace of every table exists;
* DeclareTable: not an existing table (or one declared earlier in the batch);
* CreateTableVersion: on main, version = latest + 1 (``ConcurrentModificationError``
  otherwise), not twice, a manifest path, a known naming scheme;
* DeleteTableVersions: on main, ranges per ``backend.rules.version_ranges`` (never the latest,
  never a tagged version: the tags are named), not a version created in the batch;
* DeregisterTable: not a table declared or given a version in the batch;
* nothing after a DeregisterTable of the same table.

Warnings (never block): ranges that match no existing version, overlapping ranges.
Operations are numbered from 1 in every message.

:func:`static_problems` is the part that needs no view (shape, ids, names, properties, version
and manifest fields, range syntax): the REST client checks it before sending any batch. The
views that read a namespace for these rules are services (``backend.spec.catalog_views``):
nothing here reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from lance_namespace import (
    BatchCommitTablesRequest,
    CommitTableOperation,
)
from lance_namespace.errors import (
    ErrorCode,
    LanceNamespaceError,
)

from backend.errors import make
from backend.rules import ids, properties, request_rules, version_ranges

DECLARE = "declare_table"
CREATE_VERSION = "create_table_version"
DELETE_VERSIONS = "delete_table_versions"
DEREGISTER = "deregister_table"
OPERATION_KINDS: tuple[str, ...] = (DECLARE, CREATE_VERSION, DELETE_VERSIONS, DEREGISTER)
OPERATION_LABELS: dict[str, str] = {
    DECLARE: "DeclareTable",
    CREATE_VERSION: "CreateTableVersion",
    DELETE_VERSIONS: "DeleteTableVersions",
    DEREGISTER: "DeregisterTable",
}
NAMING_SCHEMES: tuple[str, ...] = ("V1", "V2")
# The single operation each kind of batch operation is (its request rules apply).
_REQUEST_OPS = {
    DECLARE: "declare_table",
    CREATE_VERSION: "create_table_version",
    DELETE_VERSIONS: "batch_delete_table_versions",
    DEREGISTER: "deregister_table",
}
MAX_OPERATIONS = 10_000


@dataclass(frozen=True)
class Problem:
    """Something wrong with operation ``index`` (0-based; ``None``: the whole batch)."""

    index: int | None
    message: str
    severity: str = "error"  # "error" blocks the commit; "warning" does not
    code: ErrorCode = ErrorCode.INVALID_INPUT

    @property
    def number(self) -> int | None:
        """The operation's number as people count (from 1)."""
        return None if self.index is None else self.index + 1

    def __str__(self) -> str:
        where = "batch" if self.index is None else f"operation {self.index + 1}"
        return f"{where}: {self.message}"

    def error(self) -> LanceNamespaceError:
        err = make(self.code, str(self))
        err.operation_index = self.index  # type: ignore[attr-defined]
        return err


def has_errors(problems: Iterable[Problem]) -> bool:
    return any(p.severity == "error" for p in problems)


def first_error(problems: Iterable[Problem]) -> Problem | None:
    return next((p for p in problems if p.severity == "error"), None)


class CatalogView(Protocol):
    """What the rules need to know of the namespace as it is now."""

    def namespace_exists(self, namespace_id: Sequence[str]) -> bool: ...

    def table_exists(self, table_id: Sequence[str]) -> bool: ...

    def versions(self, table_id: Sequence[str]) -> set[int]: ...

    def tags(self, table_id: Sequence[str]) -> dict[int, list[str]]: ...


@dataclass
class Op:
    """One operation of a batch: its index (0-based), kind, table id and request."""

    index: int
    kind: str
    table_id: list[str]
    request: Any

    @property
    def number(self) -> int:
        return self.index + 1


def operations_of(request: BatchCommitTablesRequest) -> tuple[list[Op], list[Problem]]:
    """The batch's operations with their kind, and the problems of their shape."""
    problems: list[Problem] = []
    operations = list(request.operations or [])
    if not operations:
        return [], [Problem(None, "the batch is empty: add at least one operation")]
    if len(operations) > MAX_OPERATIONS:
        return [], [
            Problem(
                None,
                f"a batch holds at most {MAX_OPERATIONS:,} operations, got {len(operations):,}",
            )
        ]
    ops = []
    for i, op in enumerate(operations):
        if not isinstance(op, CommitTableOperation):
            problems.append(Problem(i, f"not a CommitTableOperation: {type(op).__name__}"))
            continue
        given = [k for k in OPERATION_KINDS if getattr(op, k, None) is not None]
        if len(given) != 1:
            problems.append(
                Problem(
                    i,
                    f"exactly one of {', '.join(OPERATION_KINDS)} must be set, got "
                    f"{', '.join(given) or 'none'}",
                )
            )
            continue
        req = getattr(op, given[0])
        ops.append(Op(i, given[0], list(req.id or []), req))
    return ops, problems


@dataclass
class _Sim:
    """A table as the batch sees it after the operations checked so far. Its versions are
    read from the view only when an operation needs them (a DeregisterTable does not)."""

    exists: bool
    load: Any = None  # () -> the versions the view holds; None: nothing to read
    created: dict[int, int] = field(default_factory=dict)  # version -> op index
    declared_by: int | None = None
    deregistered_by: int | None = None
    last_deleted: set[int] = field(default_factory=set)  # what the last delete removed
    _versions: set[int] | None = None

    @property
    def versions(self) -> set[int]:
        if self._versions is None:
            self._versions = set(self.load()) if self.load is not None else set()
        return self._versions

    @versions.setter
    def versions(self, value: set[int]) -> None:
        self._versions = value


def check_batch(
    request: BatchCommitTablesRequest,
    view: CatalogView,
    *,
    delimiter: str = ids.DEFAULT_DELIMITER,
    deleted: dict[int, list[int]] | None = None,
) -> list[Problem]:
    """Every problem of the batch against ``view`` (see the module docstring). ``deleted``,
    when given, receives for each DeleteTableVersions operation (by index) the versions it
    deletes that no earlier operation of the batch deletes."""
    ops, problems = operations_of(request)
    if problems:
        return problems
    sims: dict[tuple[str, ...], _Sim] = {}
    for op in ops:
        found = _check_op(op, view, sims, delimiter)
        problems += found
        if deleted is not None and op.kind == DELETE_VERSIONS and not has_errors(found):
            deleted[op.index] = sorted(sims[tuple(op.table_id)].last_deleted)
    return problems


def static_problems(
    request: BatchCommitTablesRequest, *, delimiter: str = ids.DEFAULT_DELIMITER
) -> list[Problem]:
    """The problems of the batch that need no knowledge of the namespace: its shape, and each
    operation's request rules, properties, version, manifest fields, naming scheme and range
    syntax. What :func:`check_batch` adds (existence, latest versions, the order of the
    batch's own operations) needs a :class:`CatalogView`."""
    ops, problems = operations_of(request)
    for op in ops:
        bad, code = _static_problem(op, delimiter)
        if bad:
            name = ids.format_id([str(p) for p in op.table_id], delimiter) or "(empty id)"
            problems.append(
                Problem(op.index, f"{OPERATION_LABELS[op.kind]} {name}: {bad}", code=code)
            )
    return problems


def _static_problem(op: Op, delimiter: str) -> tuple[str | None, ErrorCode]:
    code = ErrorCode.INVALID_INPUT
    bad = request_rules.request_problem(_REQUEST_OPS[op.kind], op.request, delimiter=delimiter)
    if bad:
        return bad, code
    req = op.request
    if op.kind == DECLARE:
        return properties.properties_problem(req.properties), code
    if op.kind in (CREATE_VERSION, DELETE_VERSIONS) and req.branch not in (None, "", "main"):
        return "branches are not supported in a batch commit", ErrorCode.UNSUPPORTED
    if op.kind == CREATE_VERSION:
        return _create_static(req), code
    if op.kind == DELETE_VERSIONS:
        found = version_ranges.range_problems(list(req.ranges or []), latest=None)
        return (" ".join(found) if found else None), code
    return None, code


def _sim(view: CatalogView, sims: dict[tuple[str, ...], _Sim], key: tuple[str, ...]) -> _Sim:
    if key not in sims:
        exists = view.table_exists(key)
        sims[key] = _Sim(exists=exists, load=(lambda: view.versions(key)) if exists else None)
    return sims[key]


def _check_op(
    op: Op, view: CatalogView, sims: dict[tuple[str, ...], _Sim], delimiter: str
) -> list[Problem]:
    i = op.index

    def problem(message: str, code: ErrorCode = ErrorCode.INVALID_INPUT) -> list[Problem]:
        return [Problem(i, f"{OPERATION_LABELS[op.kind]} {name}: {message}", code=code)]

    name = ids.format_id([str(p) for p in op.table_id], delimiter) or "(empty id)"
    bad, code = _static_problem(op, delimiter)  # what needs no view comes first
    if bad:
        return problem(bad, code)
    key = tuple(op.table_id)
    missing = ids.missing_parent(
        key, lambda parent: view.namespace_exists(tuple(parent)), delimiter=delimiter
    )
    if missing:
        return problem(missing, ErrorCode.NAMESPACE_NOT_FOUND)
    s = _sim(view, sims, key)
    if s.deregistered_by is not None:
        return problem(
            f"comes after operation {s.deregistered_by + 1}, which deregisters the table: "
            "nothing can follow a DeregisterTable of the same table in a batch"
        )
    req = op.request
    if op.kind == DECLARE:
        if s.declared_by is not None:
            return problem(f"already declared by operation {s.declared_by + 1}")
        if s.exists:
            return problem("the table already exists", ErrorCode.TABLE_ALREADY_EXISTS)
        if view.namespace_exists(key):
            return problem("a namespace with this id exists", ErrorCode.TABLE_ALREADY_EXISTS)
        bad_props = properties.properties_problem(req.properties)
        if bad_props:
            return problem(bad_props)
        s.exists, s.declared_by, s.versions = True, i, set()
        return []
    if not s.exists:
        return problem("the table does not exist", ErrorCode.TABLE_NOT_FOUND)
    if op.kind in (CREATE_VERSION, DELETE_VERSIONS) and req.branch not in (None, "", "main"):
        return problem("branches are not supported in a batch commit", ErrorCode.UNSUPPORTED)
    if op.kind == CREATE_VERSION:
        return _check_create(op, s, problem)
    if op.kind == DELETE_VERSIONS:
        return _check_delete(op, s, view, problem)
    # DeregisterTable
    if s.declared_by is not None:
        return problem(f"the table is declared by operation {s.declared_by + 1} of this batch")
    if s.created:
        first = min(s.created.values())
        return problem(f"operation {first + 1} creates a version of the table in this batch")
    s.deregistered_by, s.exists = i, False
    return []


def _create_static(req: Any) -> str | None:
    """What is wrong with a CreateTableVersion whatever the table holds."""
    problem = version_ranges.version_problem(req.version, "the version")
    if problem:
        return problem
    if not isinstance(req.manifest_path, str) or not req.manifest_path.strip():
        return "the staged manifest path is empty"
    if req.manifest_size is not None and (
        not isinstance(req.manifest_size, int) or req.manifest_size < 0
    ):
        return f"the manifest size must be a non-negative integer, got {req.manifest_size!r}"
    scheme = req.naming_scheme
    if scheme is not None and str(scheme).upper() not in NAMING_SCHEMES:
        return f"the naming scheme must be one of {', '.join(NAMING_SCHEMES)}"
    return properties.properties_problem(req.metadata, "metadata")


def _check_create(op: Op, s: _Sim, problem: Any) -> list[Problem]:
    req = op.request
    version = req.version
    bad = _create_static(req)
    if bad:
        return problem(bad)
    if version in s.created:
        return problem(
            f"version {version} is already created by operation {s.created[version] + 1}"
        )
    latest = max(s.versions) if s.versions else 0
    if version != latest + 1:
        # at or below the latest: a write since the version was staged, or a wrong number
        what = "is taken" if version <= latest else "is not the next version"
        return problem(
            f"version {version} {what}: the table is at version {latest}, so the next is "
            f"{latest + 1}",
            ErrorCode.CONCURRENT_MODIFICATION,
        )
    s.versions.add(version)
    s.created[version] = op.index
    return []


def _check_delete(op: Op, s: _Sim, view: CatalogView, problem: Any) -> list[Problem]:
    ranges = list(op.request.ranges or [])
    latest = max(s.versions) if s.versions else None
    found = version_ranges.range_problems(ranges, latest=latest)
    if found:
        return problem(" ".join(found))
    pairs = version_ranges.spec_pairs(ranges)
    chosen = set(version_ranges.covered(s.versions, ranges))
    for v in sorted(chosen):
        if v in s.created:
            return problem(f"version {v} is created by operation {s.created[v] + 1} of this batch")
    tagged: list[str] = []
    if chosen:
        tagged = version_ranges.tag_problems(ranges, view.tags(op.table_id), latest, opt_in=None)
    if tagged:
        return problem(" ".join(tagged))
    out: list[Problem] = []
    spans: list[tuple[int, int]] = []
    for start, end in pairs:
        shown = version_ranges.describe_spec(start, end)
        if not version_ranges.covered(s.versions, [(start, end)]):
            out.append(
                Problem(
                    op.index,
                    f"DeleteTableVersions: range {shown} matches no existing version",
                    "warning",
                )
            )
        for s0, e0 in spans:
            if start < e0 and s0 < end:
                out.append(
                    Problem(
                        op.index,
                        f"DeleteTableVersions: range {shown} overlaps "
                        f"{version_ranges.describe_spec(s0, e0)}",
                        "warning",
                    )
                )
        spans.append((start, end))
    s.last_deleted = chosen
    s.versions -= chosen
    return out
