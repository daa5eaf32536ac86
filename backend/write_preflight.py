"""The explicit preflight (:func:`preflight`, exported as ``backend.preflight``) and the
checked batch commit (:func:`commit_batch`, ``backend.commit_batch``), and what the namespace
as it is now says of a single write (a CreateNamespace, DeclareTable, CreateTable,
RegisterTable, RenameTable or CreateTableVersion), nothing written.

The writes themselves send the request and nothing else over REST (the server judges it);
the checks that need the namespace's state are here, asked for on purpose, and read in bulk
through :class:`backend.spec.catalog_views.ListingView`:

* the parent namespace exists, and the new id is not a table already: ListTables of the
  parent (with declared tables, every page; the REST client asks NamespaceExists when the
  list is empty, as an empty list proves nothing);
* RegisterTable: no table of the catalog lies at or around the location, judged by the
  directory names the directory namespace gives its tables
  (``backend.rules.location_rules.listed_location_clash``): ListNamespaces and ListTables of
  every namespace, every page; never a DescribeTable per table;
* RenameTable: the table exists, the target namespace exists and holds no table of the new
  name: ListTables of the source's and the target's namespaces;
* CreateTableVersion: the staged manifest lies in the table's staging areas: DescribeTable of
  the target only (the write checks this too).

Problems are :class:`backend.rules.batch_rules.Problem` of operation 1, as a batch of one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import lance_namespace as ln
from lance_namespace import LanceNamespace
from lance_namespace.errors import ErrorCode, LanceNamespaceError

from backend import gate
from backend.locations import remote_manifest_problem
from backend.rules import batch_rules, ids, location_rules, request_rules
from backend.rules.batch_rules import Problem, first_error
from backend.spec.catalog_views import ListingView

# The single writes the preflight judges: request model -> operation.
SINGLE_WRITES: dict[type, str] = {
    ln.CreateNamespaceRequest: "create_namespace",
    ln.DeclareTableRequest: "declare_table",
    ln.CreateTableRequest: "create_table",
    ln.RegisterTableRequest: "register_table",
    ln.RenameTableRequest: "rename_table",
    ln.CreateTableVersionRequest: "create_table_version",
}
_LABELS = {
    "create_namespace": "CreateNamespace",
    "declare_table": "DeclareTable",
    "create_table": "CreateTable",
    "register_table": "RegisterTable",
    "rename_table": "RenameTable",
    "create_table_version": "CreateTableVersion",
}


def single_write(request: Any) -> str | None:
    """The operation of a single-write request model (``None``: not one the preflight
    judges, e.g. a batch)."""
    return SINGLE_WRITES.get(type(request))


def catalog_tables(view: ListingView) -> tuple[set[tuple[str, ...]], set[str]]:
    """Every namespace (the root included) and every table's object id of the catalog, read
    in bulk from the root down: ListNamespaces and ListTables of each namespace, every page."""
    namespaces: set[tuple[str, ...]] = set()
    tables: set[str] = set()
    todo: list[tuple[str, ...]] = [()]
    while todo:
        current = todo.pop()
        names = view.tables_in(current)
        children = view.children_of(current)
        if names is None or children is None:  # dropped meanwhile
            continue
        namespaces.add(current)
        tables.update(ids.object_id([*current, name]) for name in names)
        todo.extend((*current, child) for child in sorted(children))
    return namespaces, tables


def check_single(ns: Any, request: Any, *, delimiter: str = "$") -> list[Problem]:
    """Every problem of one single write against ``ns`` as it is now (see the module),
    nothing written. ``request``: a model of :data:`SINGLE_WRITES`."""
    op = single_write(request)
    if op is None:
        raise TypeError(f"not a single write the preflight judges: {type(request).__name__}")
    label = _LABELS[op]

    def problem(message: str, code: ErrorCode = ErrorCode.INVALID_INPUT) -> Problem:
        return Problem(0, f"{label} {message}", code=code)

    try:
        request_rules.check_request(op, request, delimiter=delimiter)
    except LanceNamespaceError as exc:
        return [Problem(0, str(exc), code=ErrorCode(exc.code))]
    view = ListingView(ns)
    tid = list(request.id or [])
    shown = ids.format_id(tid, delimiter)
    out: list[Problem] = []

    def missing(namespace_id: Sequence[str]) -> bool:
        if namespace_id and view.tables_in(namespace_id) is None:
            name = ids.format_id(list(namespace_id), delimiter)
            out.append(
                problem(
                    f"{shown}: namespace {name} not found: create it first",
                    ErrorCode.NAMESPACE_NOT_FOUND,
                )
            )
            return True
        return False

    def taken(table_id: Sequence[str]) -> None:
        names = view.tables_in(table_id[:-1]) or set()
        if table_id[-1] in names:
            out.append(
                problem(
                    f"{ids.format_id(list(table_id), delimiter)}: a table of that name exists",
                    ErrorCode.TABLE_ALREADY_EXISTS,
                )
            )

    if op == "create_namespace":
        parent = tid[:-1]
        if parent and not view.namespace_exists(parent):
            out.append(
                problem(
                    f"{shown}: namespace {ids.format_id(parent, delimiter)} not found: "
                    "create it first",
                    ErrorCode.NAMESPACE_NOT_FOUND,
                )
            )
    elif op in ("declare_table", "create_table", "register_table"):
        if not missing(tid[:-1]):
            taken(tid)
        if op == "register_table":
            _namespaces, tables = catalog_tables(view)
            clash = location_rules.listed_location_clash(str(request.location or ""), tables)
            if clash is not None:
                how, owner = clash
                owner_shown = ids.format_id(ids.parse_object_id(owner), delimiter)
                out.append(
                    problem(
                        f"{shown}: the table location {request.location!r} {how} ({owner_shown})"
                    )
                )
    elif op == "rename_table":
        source_ok = not missing(tid[:-1])
        if source_ok and tid[-1] not in (view.tables_in(tid[:-1]) or set()):
            out.append(problem(f"{shown}: table not found", ErrorCode.TABLE_NOT_FOUND))
        target_ns = list(request.new_namespace_id) if request.new_namespace_id else tid[:-1]
        if source_ok if target_ns == tid[:-1] else not missing(target_ns):
            taken([*target_ns, request.new_table_name or ""])
    elif op == "create_table_version":
        location = ns.describe_table(ln.DescribeTableRequest(id=tid)).location
        why = remote_manifest_problem(location, request.manifest_path)
        if why:
            out.append(problem(f"{shown}: {why}"))
    return out


def refuse_before_sending(ns: Any, request: Any) -> None:
    """The console's own single writes over REST (the Tables page's register and declare):
    the preflight first, its first error raised (and recorded as a refusal when ``ns`` is
    gated) before the write is sent. The local backend judges these writes itself, under its
    lock, so nothing is read twice there."""
    caps = getattr(ns, "capabilities", None)
    if callable(caps) and caps().kind == "local":
        return
    delimiter = ids.delimiter_of(ns)
    first = first_error(check_single(ns, request, delimiter=delimiter))
    if first is None:
        return
    error = first.error()
    gate.record_refusal(ns, SINGLE_WRITES[type(request)], request, error)
    raise error


def preflight(ns: LanceNamespace, request: Any, *, raise_first: bool = False) -> list[Any]:
    """Every problem of a BatchCommitTablesRequest against the namespace as it is now
    (``backend.rules.batch_rules.Problem``, warnings included), nothing written. The local backend
    runs its commit's own judgement; the REST client reads what it needs in bulk
    (``RestNamespaceClient.preflight``); any other namespace is read through the spec's list
    calls. ``raise_first``: raise the first error instead.

    ``request`` may also be one single write (a CreateNamespace, DeclareTable, CreateTable,
    RegisterTable, RenameTable or CreateTableVersion request model): its problems are judged
    the same way on every backend, read in bulk (:func:`check_single`; the single writes over
    REST send the write alone)."""
    if single_write(request) is not None:
        delimiter = ids.delimiter_of(ns)
        found = check_single(ns, request, delimiter=delimiter)
        error = batch_rules.first_error(found) if raise_first else None
        if error is not None:
            raise error.error()
        return found

    own = getattr(ns, "preflight", None)
    if callable(own):
        return own(request, raise_first=raise_first)
    if not isinstance(request, batch_rules.BatchCommitTablesRequest):
        request = batch_rules.BatchCommitTablesRequest.model_validate(request)
    delimiter = ids.delimiter_of(ns)
    view = ListingView(ns, request)
    problems = batch_rules.check_batch(request, view, delimiter=delimiter)
    first = batch_rules.first_error(problems) if raise_first else None
    if first is not None:
        raise first.error()
    return problems


def commit_batch(ns: LanceNamespace, request: Any) -> Any:
    """A checked BatchCommitTables: the preflight, its first error raised, then the batch.
    On the local backend the commit judges the batch itself, under its lock, so nothing runs
    before it; elsewhere the preflight's reads come first (a REST batch of N declares in one
    namespace: ListTables and ListNamespaces pages, then one BatchCommitTables). A batch the
    preflight refuses is recorded as refused when ``ns`` is gated (``gate.record_refusal``)."""
    # The local backend loads lance: imported here, so that ``import backend`` stays light.
    from backend.local import LocalNamespace

    if not isinstance(ns, LocalNamespace):
        first = batch_rules.first_error(preflight(ns, request))
        if first is not None:
            error = first.error()
            gate.record_refusal(ns, "batch_commit_tables", request, error)  # the audit log's entry
            raise error
    return ns.batch_commit_tables(request)
