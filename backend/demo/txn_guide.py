"""The transaction demo, scripted (no streamlit): stage -> audit -> publish -> fail -> recover,
and a concurrent writer refused, with a reader watching every commit. The Transactions page's
"Guided demo" and ``notebooks/transactions.ipynb`` run these calls; the page's batch builder
runs the watched commits (:func:`commit_watched`, :func:`fault_watched`,
:func:`conflict_watched`) on the batch a user built.

* :func:`pick_tables` - three tables of the demo namespace (``backend.demo.data``) with
  rows, smallest first, so a presenter types no id;
* :func:`plan_changes` / :func:`stage_round` - one real change per table, chosen from the
  tables' own data (an append of copies of the first rows, an update and a delete by a filter
  on a value the table holds), staged as each table's next version;
* :func:`default_checks` / :func:`audit` - what each staged change does (rows before and
  after, rows inserted, updated, deleted) and checks a presenter would add (a SQL predicate,
  a row-count range); a failed check blocks the publish;
* :func:`commit_watched` - one BatchCommitTables with a reader (``table_watch.Watcher``)
  polling every table before, during and after it; :func:`fault_watched` the same with a demo
  fault (``txn_faults``: an injected error, or the committing process killed);
  :func:`conflict_watched` validates, lets a second process append to one table, then commits
  (refused: nothing published).

Every write passes the gate as the calls it makes do (staging, the batch, the demo tools:
admin only) and needs the local backend (a folder or an object store).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from lance_namespace.errors import ErrorCode, LanceNamespaceError

from backend import capabilities
from backend.rules import batch_rules, ids
from backend.services.search.query import iter_rows, read_rows

from ..errors import make
from ..local.staging import APPEND, DELETE, UPDATE, StagedChange
from ..services import batch_builder as bb
from ..services import rows as rsv
from ..services import staged_changes, table_watch
from ..services.table_watch import Watcher
from . import data as demo
from . import txn_faults as tf

# The demo tables the guide changes, in the order it prefers them (the smallest first; the
# passages table, ~30,000 rows, only when one of the others is gone).
GUIDE_TABLES: tuple[tuple[str, ...], ...] = tuple(
    tuple(t) for t in (demo.MODULES_ID, demo.TEXT_ID, demo.SYMBOLS_ID, demo.PASSAGES_ID)
)
KINDS = (APPEND, UPDATE, DELETE)  # the change staged on the first, second and third table
APPEND_ROWS = 3
FILTER_COLUMNS = ("module", "kind", "category")  # a column the delete and update filter on
NUMBER_COLUMNS = ("doc_length", "n_lines", "word")  # a column the update changes
MAX_DELETED = 50  # the delete's check: at most this many rows go
PRE_POLLS = 5  # polls a watched commit's reader makes before the commit starts
SUFFIX = "_demo"  # appended rows: a copy of the first rows, renamed


# -- the tables ----------------------------------------------------------------------------------
def _require_local(ns: Any) -> None:
    caps = capabilities(ns)
    root = str(getattr(ns, "root", "") or "")
    if caps.kind != "local" or root.startswith("memory:"):
        raise make(
            ErrorCode.UNSUPPORTED,
            "the guided transaction demo stages changes and runs demo tools on the namespace's "
            "files: local backend only (a folder or an object store), not over REST",
        )


def pick_tables(ns: Any, count: int = 3) -> list[list[str]]:
    """``count`` tables of the demo namespace that exist and hold rows, in the order of
    :data:`GUIDE_TABLES`. ``TableNotFoundError`` when fewer are left (rebuild the demo)."""
    _require_local(ns)
    found = []
    for tid in GUIDE_TABLES:
        reading = table_watch.poll(ns, [list(tid)]).readings[0]
        if reading.error is None and (reading.rows or 0) > 0:
            found.append(list(tid))
        if len(found) == count:
            return found
    wanted = ", ".join(ids.display_id(list(t)) for t in GUIDE_TABLES)
    raise make(
        ErrorCode.TABLE_NOT_FOUND,
        f"the guided demo needs {count} of the demo's tables with rows ({wanted}); found "
        f"{len(found)}. Rebuild the demo (lance-console --rebuild-demo) or open the demo "
        "namespace.",
    )


# -- the changes ---------------------------------------------------------------------------------
def _quote(value: str) -> str:
    return "'" + str(value).replace("'", "''") + "'"


@dataclass(frozen=True)
class PlannedChange:
    """One change the guide stages: ``kind`` (append, update, delete) on ``table_id``, its
    arguments for ``stage_change`` and what it does in words."""

    table_id: tuple[str, ...]
    kind: str
    what: str
    append: pa.Table | None = None
    delete: str | None = None
    update: tuple[dict[str, str], str] | None = None
    number_column: str | None = None  # the column an update changes (its check)
    filter_column: str | None = None

    def arguments(self) -> dict[str, Any]:
        """The keyword ``stage_change`` takes for this change."""
        values: dict[str, Any] = {APPEND: self.append, DELETE: self.delete, UPDATE: self.update}
        return {self.kind: values[self.kind]}


def _column(schema: pa.Schema, names: Sequence[str], kinds: Any, what: str, tid: Any) -> str:
    for name in names:
        if name in schema.names and kinds(schema.field(name).type):
            return name
    for f in schema:
        if kinds(f.type) and f.name != "id":
            return f.name
    raise make(
        ErrorCode.INVALID_INPUT,
        f"{ids.display_id(list(tid))} has no {what} column for the guided demo to use",
    )


def _values(ns: Any, tid: list[str], column: str) -> Counter[str]:
    pages = list(iter_rows(ns, tid, columns=[column]))
    values = pa.concat_tables(pages)[column].to_pylist() if pages else []
    return Counter(str(v) for v in values if v is not None)


def _few(counts: Counter[str], low: int = 3, high: int = 20) -> str:
    """A value held by ``low`` to ``high`` rows (the fewest such), else the rarest value; ties
    by name, so the same data gives the same choice."""
    ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]))
    within = [v for v, n in ranked if low <= n <= high]
    return within[0] if within else ranked[0][0]


def _append_rows(ns: Any, tid: list[str], schema: pa.Schema) -> pa.Table:
    rows = read_rows(ns, tid, limit=APPEND_ROWS)
    text = next((c for c in FILTER_COLUMNS if c in rows.column_names), None)
    if text is not None and pa.types.is_string(rows.schema.field(text).type):
        i = rows.column_names.index(text)
        renamed = pc.binary_join_element_wise(rows[text], pa.scalar(SUFFIX), "")
        rows = rows.set_column(i, text, renamed)
    if "id" in rows.column_names and pa.types.is_integer(rows.schema.field("id").type):
        top = pc.max(pa.concat_tables(list(iter_rows(ns, tid, columns=["id"])))["id"])
        start = int(top.as_py() or 0) + 1
        new = pa.array(range(start, start + rows.num_rows), rows.schema.field("id").type)
        rows = rows.set_column(rows.column_names.index("id"), "id", new)
    return rows


def plan_change(ns: Any, table_id: Sequence[str], kind: str) -> PlannedChange:
    """The change of ``kind`` the guide stages on ``table_id``, from the table's data as it
    is now (a delete picks a value the table still holds, so each round deletes other rows)."""
    tid = [str(p) for p in table_id]
    schema = rsv.table_schema(ns, tid)
    if kind == APPEND:
        data = _append_rows(ns, tid, schema)
        return PlannedChange(tuple(tid), kind, f"append {data.num_rows} rows", append=data)
    text = _column(schema, FILTER_COLUMNS, pa.types.is_string, "text", tid)
    value = _few(_values(ns, tid, text))
    where = f"{text} = {_quote(value)}"
    if kind == DELETE:
        return PlannedChange(
            tuple(tid), kind, f"delete the rows where {where}", delete=where, filter_column=text
        )
    number = _column(schema, NUMBER_COLUMNS, pa.types.is_integer, "integer", tid)
    return PlannedChange(
        tuple(tid), kind, f"update {number} = {number} + 1 where {where}",
        update=({number: f"{number} + 1"}, where), number_column=number, filter_column=text,
    )  # fmt: skip


def plan_changes(ns: Any, tables: Sequence[Sequence[str]]) -> list[PlannedChange]:
    """One change per table: an append, an update, a delete (:data:`KINDS`, in order)."""
    return [plan_change(ns, t, KINDS[i % len(KINDS)]) for i, t in enumerate(tables)]


@dataclass(frozen=True)
class Round:
    """Changes the guide staged together: what it planned, and the staged changes (same
    order)."""

    planned: list[PlannedChange]
    staged: list[StagedChange]

    def checks(self) -> dict[str, list[staged_changes.Check]]:
        """:func:`default_checks` of each staged change, by its id."""
        return {s.id: default_checks(s, p) for p, s in zip(self.planned, self.staged, strict=True)}

    def operations(self) -> list[dict[str, Any]]:
        return [bb.staged_op(s) for s in self.staged]


def stage_round(ns: Any, tables: Sequence[Sequence[str]]) -> Round:
    """Stage one change per table (:func:`plan_changes`) as each table's next version. A
    staging that fails discards the ones made before it, then raises."""
    planned = plan_changes(ns, tables)
    staged: list[StagedChange] = []
    try:
        for change in planned:
            staged.append(bb.stage_change(ns, list(change.table_id), **change.arguments()))
    except BaseException:
        if staged:
            bb.discard_staged(ns, staged)
        raise
    return Round(planned, staged)


# -- the audit -----------------------------------------------------------------------------------
def default_checks(
    staged: StagedChange, planned: PlannedChange | None = None
) -> list[staged_changes.Check]:
    """The checks a presenter would add to a staged change: an append loses no row, a delete
    removes at most :data:`MAX_DELETED`, an update keeps the row count (and, for the guide's
    update, the column it changes stays >= 0)."""
    before = int(staged.rows_before)
    if staged.kind == APPEND:
        return [staged_changes.Check("no row lost", min_rows=before)]
    if staged.kind == DELETE:
        return [
            staged_changes.Check(
                f"at most {MAX_DELETED} rows deleted", min_rows=max(0, before - MAX_DELETED)
            )
        ]
    checks = [staged_changes.Check("row count unchanged", min_rows=before, max_rows=before)]
    column = planned.number_column if planned is not None else None
    if column:
        checks.append(staged_changes.Check(f"{column} >= 0", predicate=f"{column} >= 0"))
    return checks


@dataclass(frozen=True)
class Audit:
    """A staged change before its publish: rows ``inserted``, ``updated`` and ``deleted``
    (``counts``), whether its schema is the table's (``same_schema``), its checks' results."""

    staged: StagedChange
    counts: dict[str, int]
    same_schema: bool
    checks: list[staged_changes.CheckResult]

    @property
    def passed(self) -> bool:
        return staged_changes.all_passed(self.checks)


def audit(
    ns: Any,
    staged: Sequence[StagedChange],
    checks: Mapping[str, Sequence[staged_changes.Check]] | None = None,
) -> list[Audit]:
    """Each staged change audited: its row-level changes (``staged_row_changes``), its schema
    against the table's, and its checks (``checks`` by staged change id; by default
    :func:`default_checks`)."""
    out = []
    for s in staged:
        changes = staged_changes.staged_row_changes(ns, s)
        same = staged_changes.staged_schema(ns, s).equals(rsv.table_schema(ns, s.table_id))
        wanted = (checks or {}).get(s.id)
        results = staged_changes.check_staged(
            ns, s, list(wanted) if wanted is not None else default_checks(s)
        )
        out.append(Audit(s, dict(changes.counts), bool(same), results))
    return out


# -- watched commits ----------------------------------------------------------------------------
def published_versions(
    operations: Sequence[dict[str, Any]],
) -> dict[tuple[str, ...], tuple[int, int]]:
    """``{table: (version before, version after)}`` of the batch's CreateTableVersion
    operations (each creates latest+1): what ``table_watch.mixed`` judges the polls by."""
    out = {}
    for op in operations:
        if bb.kind_of(op) == batch_rules.CREATE_VERSION:
            body = bb.body_of(op)
            version = int(body["version"])
            out[tuple(body["id"])] = (version - 1, version)
    return out


def watched_tables(operations: Sequence[dict[str, Any]]) -> list[list[str]]:
    """The tables of the batch a reader can watch: those it versions, deletes versions of or
    deregisters (a table it declares does not exist before it), each once."""
    seen: dict[tuple[str, ...], None] = {}
    for op in operations:
        if bb.kind_of(op) != batch_rules.DECLARE:
            seen[tuple(bb.body_of(op)["id"])] = None
    return [list(t) for t in seen]


@dataclass
class WatchedRun:
    """A commit with a reader watching. ``label`` says what ran; ``watcher`` polls on for a
    moment after it (``table_watch.Watcher``); ``published``: what the batch would publish
    (:func:`published_versions`); ``before`` / ``after``: every watched table's state
    (``txn_faults.TableState``); ``error``: what the commit raised (``None``: it committed,
    or, for a demo fault, see ``outcome``); ``outcome``: the demo fault's
    (``txn_faults.FaultOutcome``); ``appended``: the concurrent writer's append."""

    label: str
    watcher: Watcher
    published: dict[tuple[str, ...], tuple[int, int]]
    before: dict[tuple[str, ...], tf.TableState] = field(default_factory=dict)
    after: dict[tuple[str, ...], tf.TableState] = field(default_factory=dict)
    transaction_id: str | None = None
    error: LanceNamespaceError | None = None
    outcome: tf.FaultOutcome | None = None
    appended: tf.AppendDone | None = None
    response: Any = None  # the BatchCommitTablesResponse of a commit that went through
    started: float = field(default_factory=time.time)

    @property
    def committed(self) -> bool:
        return (
            self.transaction_id is not None
            and self.error is None
            and (self.outcome is None or self.outcome.committed)
        )

    @property
    def unchanged(self) -> list[tuple[str, ...]]:
        """The watched tables that are as they were before."""
        return [t for t, s in self.before.items() if self.after.get(t) == s]

    def summary(self) -> table_watch.WatchSummary:
        return table_watch.summarize(self.watcher.polls(), self.published)


def _states(ns: Any, tables: Sequence[Sequence[str]]) -> dict[tuple[str, ...], tf.TableState]:
    return {tuple(t): tf.table_state(ns, t) for t in tables}


def commit_watched(
    ns: Any,
    operations: Sequence[dict[str, Any]],
    *,
    validated: bool = False,
    interval: float = table_watch.WATCH_INTERVAL,
    after: float = table_watch.WATCH_AFTER,
) -> WatchedRun:
    """Commit the batch (``batch_builder.commit``) while a reader polls its tables; a refusal
    is kept in ``error`` (the reader's figures are shown either way)."""
    tables = watched_tables(operations)
    before = _states(ns, tables)
    with table_watch.watching(
        ns, tables, label="commit", interval=interval, after=after, first=PRE_POLLS
    ) as w:
        run = WatchedRun("publish", w, published_versions(operations), before=before)
        try:
            run.response = bb.commit(ns, operations, validated=validated)
            run.transaction_id = run.response.transaction_id or ""
        except LanceNamespaceError as err:
            run.error = err
    run.after = _states(ns, tables)
    return run


def fault_watched(
    ns: Any,
    operations: Sequence[dict[str, Any]],
    fault: tf.Fault,
    *,
    interval: float = table_watch.WATCH_INTERVAL,
    after: float = table_watch.WATCH_AFTER,
) -> WatchedRun:
    """``txn_faults.commit_with_fault`` while a reader polls the batch's tables (a demo tool:
    admin only). The fault's outcome, recovery included, is in ``outcome``."""
    tables = watched_tables(operations)
    before = _states(ns, tables)
    label = "commit with a fault"
    with table_watch.watching(
        ns, tables, label=label, interval=interval, after=after, first=PRE_POLLS
    ) as w:
        run = WatchedRun(
            f"commit with a demo fault: {fault.describe()}",
            w,
            published_versions(operations),
            before=before,
        )
        outcome = tf.commit_with_fault(ns, operations, fault)
    run.outcome = outcome
    run.transaction_id = outcome.transaction_id
    run.after = _states(ns, tables)
    return run


def conflict_watched(
    ns: Any,
    operations: Sequence[dict[str, Any]],
    writer_table: Sequence[str],
    *,
    rows: int = 1,
    interval: float = table_watch.WATCH_INTERVAL,
    after: float = table_watch.WATCH_AFTER,
) -> WatchedRun:
    """Validate the batch, let a second process append ``rows`` to ``writer_table``
    (``txn_faults.concurrent_append``: a demo tool, admin only), then commit as the page's
    Commit does right after its Validate: the commit is refused (``error``) and publishes
    nothing. A batch that does not validate is refused before the writer runs. The run's
    ``published`` leaves the writer's table out (its new version is the writer's)."""
    problems = bb.validate(ns, operations)
    if batch_rules.has_errors(problems):
        first = batch_rules.first_error(problems)
        raise first.error() if first is not None else make(ErrorCode.INVALID_INPUT, "invalid")
    tables = watched_tables(operations)
    before = _states(ns, tables)
    label = (
        f"a second writer appending to {ids.display_id(list(writer_table))} between Validate "
        "and Commit"
    )
    # The writer's append takes the version the batch would have made of its table: that
    # table's version says nothing of the batch, so the reader judges the others.
    writer = tuple(str(p) for p in writer_table)
    published = {t: v for t, v in published_versions(operations).items() if t != writer}
    watcher = Watcher(ns, tables, interval=interval).start(first=PRE_POLLS)
    run = WatchedRun(label, watcher, published, before=before)
    try:
        run.appended = tf.concurrent_append(ns, writer_table, rows=rows)
        watcher.mark("second writer appended, then commit")
        try:
            run.response = bb.commit(ns, operations, validated=True)
            run.transaction_id = run.response.transaction_id or ""
        except LanceNamespaceError as err:
            run.error = err
    finally:
        watcher.stop_after(after)
    run.after = _states(ns, tables)
    return run


def only_the_writer_changed(run: WatchedRun) -> bool:
    """After :func:`conflict_watched`: every table but the writer's is unchanged, and the
    writer's table holds exactly its own append (one version more, its rows more)."""
    if run.appended is None:
        return False
    writer = tuple(run.appended.table_id)
    for t, before in run.before.items():
        now = run.after.get(t)
        if now is None:
            return False
        if t != writer:
            if now != before:
                return False
            continue
        if (
            now.version != run.appended.version
            or now.versions != (*before.versions, run.appended.version)
            or now.rows != (before.rows or 0) + run.appended.rows
        ):
            return False
    return True


# -- the guided demo ----------------------------------------------------------------------------
STAGE, AUDIT, PUBLISH, FAIL, RECOVER, CONFLICT = (
    "stage", "audit", "publish", "fail", "recover", "conflict",
)  # fmt: skip
STEPS = (STAGE, AUDIT, PUBLISH, FAIL, RECOVER, CONFLICT)
STEP_TITLES = {
    STAGE: "Stage three changes",
    AUDIT: "Audit them",
    PUBLISH: "Publish them together, a reader watching",
    FAIL: "Stage three more, then kill the commit",
    RECOVER: "Recover: publish the same changes",
    CONFLICT: "A second writer between Validate and Commit",
}
STEP_ACTIONS = {
    STAGE: "Staging three changes",
    AUDIT: "Auditing the staged changes",
    PUBLISH: "Publishing the batch",
    FAIL: "Committing with the process killed before its commit point",
    RECOVER: "Publishing the recovered batch",
    CONFLICT: "Racing a second writer",
}


@dataclass
class Guide:
    """Where the guided demo is: the ``tables`` it changes, the steps ``done`` (in
    :data:`STEPS` order), the changes staged and not yet published (``round``), the last
    audit, each step's watched commit (``runs``) and how many files the conflict step's
    discard removed."""

    tables: list[list[str]]
    done: list[str] = field(default_factory=list)
    round: Round | None = None
    audits: list[Audit] = field(default_factory=list)
    runs: dict[str, WatchedRun] = field(default_factory=dict)
    discarded: int = 0
    seen: table_watch.Poll | None = None  # what a reader saw right after the last staging

    @property
    def next_step(self) -> str | None:
        return next((s for s in STEPS if s not in self.done), None)

    def copy(self) -> Guide:
        return Guide(
            [list(t) for t in self.tables], list(self.done), self.round, list(self.audits),
            dict(self.runs), self.discarded, self.seen,
        )  # fmt: skip


def start(ns: Any) -> Guide:
    """A guided demo on three demo tables (:func:`pick_tables`), nothing done yet."""
    return Guide(pick_tables(ns))


def advance(ns: Any, guide: Guide, step: str) -> Guide:
    """Run ``step`` (the guide's next step, else ``InvalidInputError``) and return the guide
    after it; ``guide`` itself is not changed. A step whose commit is refused raises."""
    if step != guide.next_step:
        want = STEP_TITLES.get(guide.next_step or "", "nothing: start over")
        raise make(ErrorCode.INVALID_INPUT, f"step {step!r} is not next (next: {want})")
    out = guide.copy()
    if step in (STAGE, FAIL, CONFLICT):
        out.round = stage_round(ns, out.tables)
        out.audits = []
        out.seen = table_watch.poll(ns, out.tables)
    current = out.round
    if current is None:
        raise make(ErrorCode.INVALID_INPUT, "nothing is staged: start over")
    if step == AUDIT:
        out.audits = audit(ns, current.staged, current.checks())
    elif step in (PUBLISH, RECOVER):
        if step == PUBLISH and not all(a.passed for a in out.audits):
            raise make(ErrorCode.INVALID_INPUT, "a check of the audit fails: nothing published")
        run = commit_watched(ns, current.operations())
        if run.error is not None:
            raise run.error
        out.runs[step], out.round = run, None
    elif step == FAIL:
        out.runs[step] = fault_watched(ns, current.operations(), tf.kill_during_apply())
    elif step == CONFLICT:
        out.runs[step] = conflict_watched(ns, current.operations(), out.tables[1])
        out.discarded = bb.discard_staged(ns, current.staged)  # stale now: the writer moved on
        out.round = None
    out.done.append(step)
    return out


def reset(ns: Any, guide: Guide | None) -> int:
    """Discard what the guide staged and did not publish; returns the files removed."""
    if guide is None or guide.round is None:
        return 0
    return bb.discard_staged(ns, guide.round.staged)
