"""Validation: the batch's rules (``backend.rules.batch_rules``) against the catalog as it is, then
the local namespace's own checks while the plan is built. Nothing is written; no lock is held.

The local checks, the same rules as single calls (``backend.rules.location_rules``) for the root's
kind: a declared table gets the location the directory namespace chooses (the request may only
repeat it, ``declare_location_rule``) and that location passes the location rule; a staged
manifest passes the staged-manifest rule, is a Lance manifest for exactly the version
announced, and has the size announced (file and object-store roots read it here; memory roots
check its path).
"""

from __future__ import annotations

import hashlib
import secrets
from pathlib import Path

from lance_namespace import BatchCommitTablesRequest
from lance_namespace.errors import ErrorCode, LanceNamespaceError

from backend.rules import batch_rules
from backend.rules.location_rules import TablePrefixes, declare_location_rule, object_parts

from ...locations import (
    ObjectTables,
    TableDirs,
    foreign_folder_problem,
    location_problem,
    object_manifest_key,
    object_table_key,
    owned_table_problem,
    real,
    to_local_path,
    with_advice,
)
from .catalog import Reader, list_versions, manifest_name, read_staged_manifest
from .context import DELIMITER, Ctx, error, oid
from .objects import foreign_prefix_problem, is_object_root, read_staged_object, store_for
from .plan import DeclareStep, DeleteStep, DeregisterStep, Move, Plan, VersionStep


def _fail(op: batch_rules.Op, code: ErrorCode, message: str) -> LanceNamespaceError:
    label = batch_rules.OPERATION_LABELS[op.kind]
    return error(
        code,
        f"operation {op.number}: {label} {oid(op.table_id)}: {message}",
        index=op.index,
    )


def plan_batch(ctx: Ctx, request: BatchCommitTablesRequest) -> Plan:
    """The plan of ``request``, or the first problem as a namespace error (nothing written)."""
    reader = Reader(ctx)
    deleted: dict[int, list[int]] = {}
    problems = batch_rules.check_batch(request, reader, delimiter=DELIMITER, deleted=deleted)
    first = batch_rules.first_error(problems)
    if first is not None:
        raise first.error()
    ops, _ = batch_rules.operations_of(request)
    plan = Plan(ops)
    tables: TablePrefixes = (
        TableDirs(reader.catalog.table_dirs(ctx.local_path), root=ctx.local_path)
        if ctx.is_file
        else ObjectTables(ctx.root, reader.catalog.table_locations().values())
    )
    root_real = real(ctx.local_path) if ctx.local_path is not None else None
    for op in ops:
        key = oid(op.table_id)
        plan.tokens.setdefault(key, reader.state(key).token())
        if len(op.table_id) > 1:
            parent = op.table_id[:-1]
            plan.namespaces.setdefault(oid(parent), reader.namespace_exists(parent))
        if op.kind == batch_rules.DECLARE:
            plan.declares.append(_declare(ctx, op, tables, root_real))
        elif op.kind == batch_rules.CREATE_VERSION:
            _version(ctx, op, reader, plan)
        elif op.kind == batch_rules.DELETE_VERSIONS:
            plan.deletes.append(_delete(ctx, op, reader, deleted.get(op.index, []), tables))
        else:
            st = reader.state(key)
            row = dict(st.row or {})
            plan.deregisters.append(
                DeregisterStep(op.index, op.table_id, key, row, row.get("location"))
            )
    return plan


def preflight_batch(ctx: Ctx, request: BatchCommitTablesRequest) -> list[batch_rules.Problem]:
    """The commit's judgement of ``request`` without committing: every problem of the batch's
    rules (warnings included), then, when there is no error, the local checks of
    :func:`plan_batch` (declared locations, staged manifests read and checked). Nothing is
    written and no lock is taken; the commit judges again under its lock."""
    problems = batch_rules.check_batch(request, Reader(ctx), delimiter=DELIMITER)
    if batch_rules.has_errors(problems):
        return problems
    try:
        plan_batch(ctx, request)
    except LanceNamespaceError as e:
        index = getattr(e, "operation_index", None)
        message = str(e)
        prefix = f"operation {index + 1}: " if index is not None else ""
        if prefix and message.startswith(prefix):
            message = message[len(prefix) :]
        problems.append(batch_rules.Problem(index, message, code=e.code))
    return problems


def _declare(
    ctx: Ctx, op: batch_rules.Op, tables: TablePrefixes, root_real: Path | None
) -> DeclareStep:
    req = op.request
    key = oid(op.table_id)
    if len(op.table_id) == 1:
        location = f"{op.table_id[0]}.lance"
    else:
        location = f"{secrets.randbits(32):08x}_{key}"
    root_uri = ctx.root_uri if ctx.is_file else ctx.root
    problem = None
    if req.location:  # what is wrong with it first, then the policy (as single declares)
        problem = _location_problem(ctx, req.location, tables, root_real)
    problem = problem or declare_location_rule(op.table_id, req.location, root_uri=root_uri)
    if problem:
        raise _fail(op, ErrorCode.INVALID_INPUT, problem)
    step = DeclareStep(
        op.index,
        op.table_id,
        key,
        location,
        dict(req.properties) if req.properties is not None else None,
    )
    path = ctx.table_path(location) if ctx.is_file else None
    problem = _location_problem(ctx, path or location, tables, root_real)
    if problem is None and len(op.table_id) == 1:  # ``<name>.lance``: it may exist already
        problem = foreign_dir_problem(ctx, location)
    if problem:
        raise _fail(op, ErrorCode.INVALID_INPUT, problem)
    step.path = str(path) if path is not None else None
    return step


def foreign_dir_problem(ctx: Ctx, location: str) -> str | None:
    """Why a new root-level table may not take its directory ``location`` (``<name>.lance``,
    which may exist already): a folder holding someone else's files on a file root
    (``backend.locations.foreign_folder_problem``), a prefix holding someone else's objects on
    an object store (``objects.foreign_prefix_problem``). A table made there would take them
    as its own, and dropping it would delete them."""
    if ctx.is_file:
        return foreign_folder_problem(ctx.table_path(location))
    if ctx.is_object_store:
        return foreign_prefix_problem(store_for(ctx), location)
    return None


def _location_problem(
    ctx: Ctx, location: str | Path, tables: TablePrefixes, root_real: Path | None
) -> str | None:
    """The location rule for the root's kind, against the catalog's tables."""
    if ctx.is_file:
        assert ctx.local_path is not None and isinstance(tables, TableDirs)
        return location_problem(ctx.local_path, location, other_tables=tables, root_real=root_real)
    return object_table_key(ctx.root, str(location), other_tables=tables)[1]


def _version(ctx: Ctx, op: batch_rules.Op, reader: Reader, plan: Plan) -> None:
    req = op.request
    key = oid(op.table_id)
    scheme = (req.naming_scheme or "V2").upper()
    step = VersionStep(op.index, op.table_id, key, req.version, scheme, req.manifest_path)
    declared = next((d for d in plan.declares if d.object_id == key), None)
    location = declared.location if declared else (reader.state(key).row or {})["location"]
    if declared is None:
        _check_owned(ctx, op, location)
    if not ctx.is_file:
        _object_version(ctx, op, plan, step, location)
        return
    assert ctx.local_path is not None
    table_path = ctx.table_path(location)
    try:
        staged, data = read_staged_manifest(
            ctx.local_path, table_path, req.manifest_path, req.version, req.manifest_size
        )
    except LanceNamespaceError as e:
        raise _fail(op, ErrorCode.INVALID_INPUT, str(e)) from None
    final = table_path / "_versions" / manifest_name(req.version, scheme)
    step.staged = str(staged)
    step.final = str(final)
    step.table_path = str(table_path)
    step.sha256 = hashlib.sha256(data).hexdigest()
    step.size = len(data)
    plan.staged_bytes[op.index] = data
    plan.versions.append(step)


def _object_version(
    ctx: Ctx, op: batch_rules.Op, plan: Plan, step: VersionStep, location: str
) -> None:
    """The staged-manifest rule on an object-store root (the object read and checked, as a
    single CreateTableVersion does) or a memory root (its path; pylance reads it)."""
    req = op.request
    try:
        if is_object_root(ctx.root):
            staged, data = read_staged_object(
                ctx, location, req.manifest_path, req.version, req.manifest_size
            )
            table, _ = object_parts(ctx.root, location, lenient=True)
            if not table:
                raise error(
                    ErrorCode.INVALID_INPUT,
                    f"the table's location {location!r} is not a prefix under the namespace root",
                )
            step.staged = staged
            step.table_path = "/".join(table)  # the table's prefix, relative to the root
            step.sha256 = hashlib.sha256(data).hexdigest()
            step.size = len(data)
            plan.staged_bytes[op.index] = data
        else:
            _, problem = object_manifest_key(ctx.root, location, req.manifest_path)
            if problem:
                raise error(ErrorCode.INVALID_INPUT, problem)
    except LanceNamespaceError as e:
        raise _fail(op, ErrorCode.INVALID_INPUT, str(e)) from None
    plan.versions.append(step)


def _check_owned(
    ctx: Ctx, op: batch_rules.Op, location: str | None, tables: TablePrefixes | None = None
) -> None:
    """The table's catalog location, which another process may have registered anywhere,
    checked as single calls check it. A write (no ``tables``, as a single write's guard): the
    location rule without the other tables (inside the root, not the root, not a reserved
    directory). A delete: what the console may delete of a table
    (``backend.locations.owned_table_problem`` on file roots, the location rule on object
    stores), against the catalog's ``tables`` without the table itself (another table at the
    same directory or prefix stays)."""
    if ctx.is_file:
        assert ctx.local_path is not None
        own = to_local_path(location, ctx.local_path) if location else None
        if tables is None:
            problem = location_problem(ctx.local_path, location)
        else:
            assert isinstance(tables, TableDirs)
            others = tables.without_dir(own) if own is not None else tables
            problem = owned_table_problem(ctx.local_path, location, other_tables=others)
    else:
        own_key, problem = object_table_key(ctx.root, location)
        if problem is None and tables is not None and own_key is not None:
            problem = object_table_key(ctx.root, location, other_tables=tables.without(own_key))[1]
    if problem:
        raise _fail(
            op,
            ErrorCode.INVALID_INPUT,
            "refusing to change the files of the table: "
            + with_advice(problem, "deregister it instead"),
        )


def _delete(
    ctx: Ctx, op: batch_rules.Op, reader: Reader, versions: list[int], tables: TablePrefixes
) -> DeleteStep:
    key = oid(op.table_id)
    moves = [Move(v) for v in versions]
    if versions:
        location = (reader.state(key).row or {}).get("location")
        _check_owned(ctx, op, location, tables)
    if ctx.is_file and versions:
        st = reader.state(key)
        assert st.path is not None
        names, _ = list_versions(st.path)
        moves = [Move(v, src=str(st.path / "_versions" / names[v])) for v in versions]
    ranges = [
        {"start_version": r.start_version, "end_version": r.end_version}
        for r in op.request.ranges or []
    ]
    return DeleteStep(op.index, op.table_id, key, ranges, moves, len(moves))
