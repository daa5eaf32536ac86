""":func:`row_changes`: the rows inserted, updated (with the columns whose values changed) and
deleted between two versions.

* ``method="delta"``: lance's delta (``dataset.delta``), used only on a table with stable row
  ids: the rows it reports updated are checked cell by cell against the older version; the
  inserted and deleted rows are those whose row ids are in one version only.
* ``method="key"``: both versions read in pages (at most ``max_rows`` rows each, refused
  beyond, ``progress(rows_read, rows_total)``), matched on the key columns the user picks
  (unique and non-null in both versions).
* Neither (no stable row ids, no key): refused (``InvalidInputError``). pylance 14's delta on
  a table without stable row ids returns *empty* inserted and updated rows, which would read
  as "no changes" where rows changed.

A row counts as updated when a column both versions have holds another value; columns added
or dropped between the versions are listed in ``added_columns`` / ``dropped_columns``.

On a branch (``branch=``) both versions are the branch's own (numbered as ``backend.services.change_log`` says). :func:`branch_changes` compares the parent (the branch it was made from, at that
version) with the branch's latest version: lance's delta reaches across the branch point (the
branch keeps the parent's row ids), so with stable row ids it is used as for two versions;
pylance 14's delta is just as empty there without them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from lance_namespace import LanceNamespace
from lance_namespace.errors import ErrorCode, LanceNamespaceError

from backend.rules import ids, query_rules
from backend.services.change_log import Progress, _branch_of, _dataset, _parent
from backend.services.search.query import count_rows, iter_rows

from ..capabilities import opens_datasets
from ..errors import guarded, invalid, make
from . import versions as vsv

ROW_CHANGES_MAX_ROWS = 1_000_000


PAGE_ROWS = 8 * 1024


ROW_ID = "_rowid"


LANCE_META = ("_rowid", "_rowaddr", "_row_created_at_version", "_row_last_updated_at_version")


CHANGED = "changed_columns"  # the list of columns whose value changed, on ``updated``


DELTA, KEY = "delta", "key"


STAGED = "staged"  # a staged change's own rows (backend.services.staged_changes)


@dataclass
class RowChanges:
    """The rows that changed from ``from_version`` to ``to_version``: ``inserted`` (rows of the
    newer version), ``updated`` (newer values plus :data:`CHANGED`), ``updated_before`` (the
    older values of the same rows, in the same order), ``deleted`` (rows of the older
    version); ``method``: "delta" or "key"."""

    from_version: int
    to_version: int
    method: str
    inserted: pa.Table
    updated: pa.Table
    deleted: pa.Table
    updated_before: pa.Table
    key: list[str] = field(default_factory=list)
    added_columns: list[str] = field(default_factory=list)
    dropped_columns: list[str] = field(default_factory=list)
    from_branch: str | None = None  # the branch of ``from_version`` (``None``: main)
    to_branch: str | None = None  # the branch of ``to_version`` (``None``: main)

    @property
    def span_text(self) -> str:
        """What was compared: "v1 → v4" on one branch, else each side's branch too."""
        if self.from_branch == self.to_branch:
            on = f" on branch {self.to_branch}" if self.to_branch else ""
            return f"v{self.from_version} → v{self.to_version}{on}"
        return (
            f"{self.from_branch or 'main'} v{self.from_version} → "
            f"{self.to_branch or 'main'} v{self.to_version}"
        )

    @property
    def counts(self) -> dict[str, int]:
        return {
            "inserted": self.inserted.num_rows,
            "updated": self.updated.num_rows,
            "deleted": self.deleted.num_rows,
        }

    @property
    def method_text(self) -> str:
        if self.method == DELTA:
            return "lance's delta (the table has stable row ids)"
        if self.method == STAGED:
            return "the staged change itself (its operation says which rows it writes)"
        return f"compared on the key {', '.join(self.key)}"


def has_stable_row_ids(ds: Any) -> bool:
    """The table keeps stable row ids (lance's feature flag; every fragment carries them)."""
    flag = getattr(ds, "has_stable_row_ids", None)
    if flag is not None:
        return bool(flag)
    return all(f.metadata.row_id_meta is not None for f in ds.get_fragments())


def _drop_meta(table: pa.Table) -> pa.Table:
    return table.drop_columns([c for c in LANCE_META if c in table.column_names])


def _same(a: pa.ChunkedArray, b: pa.ChunkedArray) -> list[bool]:
    """Row by row: the two columns hold the same value (two nulls are the same)."""
    try:
        eq = pc.equal(a, b)
        both_null = pc.and_(pc.is_null(a), pc.is_null(b))
        same = pc.or_kleene(pc.fill_null(eq, False), both_null)
        return [bool(x) for x in same.to_pylist()]
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        return [x == y for x, y in zip(a.to_pylist(), b.to_pylist(), strict=True)]


def _diff_rows(
    old: pa.Table, new: pa.Table, columns: Sequence[str]
) -> tuple[list[int], list[list[str]]]:
    """The positions where ``old`` and ``new`` (aligned rows) differ in ``columns``, with the
    columns that differ at each."""
    changed: list[list[str]] = [[] for _ in range(new.num_rows)]
    for col in columns:
        for i, same in enumerate(_same(old.column(col), new.column(col))):
            if not same:
                changed[i].append(col)
    keep = [i for i, c in enumerate(changed) if c]
    return keep, [changed[i] for i in keep]


def updated_rows(old: pa.Table, new: pa.Table, columns: Sequence[str]) -> tuple[pa.Table, pa.Table]:
    """The rows of ``new`` that differ from ``old`` (aligned rows) in ``columns``, with the
    columns that changed (:data:`CHANGED`), and the same rows of ``old``."""
    keep, changed = _diff_rows(old, new, columns)
    idx = pa.array(keep, type=pa.int64())
    updated = new.take(idx).append_column(CHANGED, pa.array(changed, type=pa.list_(pa.string())))
    return updated, old.take(idx)


def _check_versions(from_version: int, to_version: int) -> tuple[int, int]:
    lo, hi = int(from_version), int(to_version)
    if lo < 1 or hi < 1:
        raise invalid("versions are numbered from 1")
    if lo >= hi:
        raise invalid(
            f"from_version ({lo}) must be older than to_version ({hi}): pick two different "
            "versions, the older one first"
        )
    return lo, hi


def _row_ids(ds: Any) -> pa.Array:
    t = ds.scanner(columns=[], with_row_id=True, batch_size=PAGE_ROWS).to_table()
    return t.column(ROW_ID).combine_chunks()


def _take_by_row_id(ds: Any, row_ids: pa.Array, columns: Sequence[str]) -> pa.Table:
    """The rows of ``ds`` with these stable row ids, in the order given."""
    if len(row_ids) == 0:
        return ds.schema.empty_table().select(list(columns))
    pieces = []
    for start in range(0, len(row_ids), 2000):
        chunk = row_ids.slice(start, 2000).to_pylist()
        pieces.append(
            ds.scanner(
                columns=list(columns),
                with_row_id=True,
                filter=f"{ROW_ID} IN ({', '.join(str(int(i)) for i in chunk)})",
            ).to_table()
        )
    got = pa.concat_tables(pieces)
    order = pc.index_in(row_ids, value_set=got.column(ROW_ID).combine_chunks())
    return got.take(order).select(list(columns))


def _too_many(what: str, n: int, max_rows: int) -> LanceNamespaceError:
    return invalid(
        f"{what}: {n:,} rows, more than the {max_rows:,} a row compare reads (max_rows); "
        "compare fewer rows or raise max_rows"
    )


@dataclass(frozen=True)
class _Side:
    """One version of the table on one branch (``None``: main): read through its dataset
    (``ds``, local backend) or QueryTable / CountTableRows of that version and branch
    (REST)."""

    ns: Any
    table_id: list[str]
    branch: str | None
    version: int
    ds: Any | None

    @property
    def label(self) -> str:
        return f"version {self.version}" + (f" of branch {self.branch}" if self.branch else "")

    def rows(self) -> int:
        if self.ds is not None:
            return int(self.ds.count_rows())
        return count_rows(
            self.ns, self.table_id, version=self.version, filter=None, branch=self.branch
        )

    def pages(self) -> Iterator[pa.RecordBatch | pa.Table]:
        if self.ds is not None:
            yield from self.ds.to_batches(batch_size=PAGE_ROWS)
        else:
            yield from iter_rows(self.ns, self.table_id, version=self.version, branch=self.branch)


def _side(ns: Any, table_id: list[str], branch: str | None, version: int) -> _Side:
    local = opens_datasets(ns)
    ds = _dataset(ns, table_id, branch, version) if local else None
    return _Side(ns, table_id, branch, int(version), ds)


def _by_delta(old: _Side, new: _Side, max_rows: int, progress: Progress | None) -> RowChanges:
    """Lance's delta from ``old`` to ``new`` (a later version of the same branch, or a branch's
    latest version from its parent at the version it was made from: a branch shares its
    parent's history and row ids up to there)."""
    old_ds, new_ds = old.ds, new.ds
    assert old_ds is not None and new_ds is not None  # the local backend's datasets
    old_cols, new_cols = old_ds.schema.names, new_ds.schema.names
    common = [c for c in new_cols if c in old_cols]
    old_ids, new_ids = _row_ids(old_ds), _row_ids(new_ds)
    if progress:
        progress(len(old_ids) + len(new_ids), len(old_ids) + len(new_ids))
    gone = pc.filter(old_ids, pc.invert(pc.is_in(old_ids, value_set=new_ids)))
    born = pc.filter(new_ids, pc.invert(pc.is_in(new_ids, value_set=old_ids)))
    # asked of the newer version itself: the delta reads the rows of the dataset it is asked
    # of, so asked of a later version it misses rows changed again since ``new``. No version
    # after ``old`` (a branch not written since it was made): nothing was updated.
    if new.version > old.version:
        delta = new_ds.delta(begin_version=old.version, end_version=new.version)
        candidates = delta.get_updated_rows().read_all()
    else:
        candidates = pa.table({ROW_ID: pa.array([], pa.uint64())})
    for what, n in (
        ("rows deleted", len(gone)),
        ("rows inserted", len(born)),
        ("rows updated", candidates.num_rows),
    ):
        if n > max_rows:
            raise _too_many(what, n, max_rows)
    cand_ids = (
        candidates.column(ROW_ID).combine_chunks()
        if candidates.num_rows
        else pa.array([], pa.uint64())
    )
    # rows of the newer version still present in the older one (an insert is never "updated")
    alive = pc.is_in(cand_ids, value_set=old_ids)
    cand_ids = pc.filter(cand_ids, alive)
    after = _take_by_row_id(new_ds, cand_ids, new_cols)
    before = _take_by_row_id(old_ds, cand_ids, old_cols)
    updated, updated_before = updated_rows(before, after, common)
    return RowChanges(
        from_version=old.version,
        to_version=new.version,
        method=DELTA,
        inserted=_take_by_row_id(new_ds, born, new_cols),
        updated=updated,
        deleted=_take_by_row_id(old_ds, gone, old_cols),
        updated_before=updated_before,
        added_columns=[c for c in new_cols if c not in old_cols],
        dropped_columns=[c for c in old_cols if c not in new_cols],
        from_branch=old.branch,
        to_branch=new.branch,
    )


def _read_side(side: _Side, done: list[int], total: int, progress: Progress | None) -> pa.Table:
    pieces = []
    for page in side.pages():
        pieces.append(pa.Table.from_batches([page]) if isinstance(page, pa.RecordBatch) else page)
        done[0] += page.num_rows
        if progress:
            progress(done[0], total)
    return (
        _drop_meta(pa.concat_tables(pieces, promote_options="permissive"))
        if pieces
        else (pa.table({}))
    )


def _check_key(table: pa.Table, key: Sequence[str], where: str) -> None:
    missing = [k for k in key if k not in table.column_names]
    if missing:
        raise invalid(
            f"key column {', '.join(missing)} is not in {where} "
            f"(its columns: {', '.join(table.column_names)})"
        )
    for k in key:
        nulls = table.column(k).null_count
        if nulls:
            raise invalid(f"key column {k} is null in {nulls:,} rows of {where}")
    keys = table.select(list(key))
    groups = keys.group_by(list(key)).aggregate([([], "count_all")])
    dup = groups.filter(pc.greater(groups.column("count_all"), 1))
    if dup.num_rows:
        first = {k: dup.column(k)[0].as_py() for k in key}
        raise invalid(
            f"the key {', '.join(key)} is not unique in {where}: "
            f"{dup.num_rows:,} key values repeat (e.g. {first}); pick columns that identify a row"
        )


def _by_key(
    old_side: _Side,
    new_side: _Side,
    key: list[str],
    max_rows: int,
    progress: Progress | None,
) -> RowChanges:
    local = old_side.ds is not None and new_side.ds is not None
    limit = max_rows if local else min(max_rows, query_rules.MAX_OFFSET)
    counts = [old_side.rows(), new_side.rows()]
    for side, n in zip((old_side, new_side), counts, strict=True):
        if n > limit:
            raise _too_many(side.label, n, limit)
    total, done = sum(counts), [0]
    old = _read_side(old_side, done, total, progress)
    new = _read_side(new_side, done, total, progress)
    _check_key(old, key, old_side.label)
    _check_key(new, key, new_side.label)
    old_i = old.select(key).append_column("__old", pa.array(range(old.num_rows), pa.int64()))
    new_i = new.select(key).append_column("__new", pa.array(range(new.num_rows), pa.int64()))
    try:
        both = old_i.join(new_i, keys=key, join_type="full outer")
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise invalid(f"the key {', '.join(key)} cannot be compared: {exc}") from exc
    o, n = both.column("__old"), both.column("__new")
    gone = pc.filter(o, pc.is_null(n)).combine_chunks()
    born = pc.filter(n, pc.is_null(o)).combine_chunks()
    matched = pc.and_(pc.is_valid(o), pc.is_valid(n))
    mo = pc.filter(o, matched).combine_chunks()
    mn = pc.filter(n, matched).combine_chunks()
    order = pc.sort_indices(mn)
    mo, mn = mo.take(order), mn.take(order)
    common = [c for c in new.column_names if c in old.column_names and c not in key]
    updated, updated_before = updated_rows(old.take(mo), new.take(mn), common)
    return RowChanges(
        from_version=old_side.version,
        to_version=new_side.version,
        method=KEY,
        inserted=new.take(_ascending(born)),
        updated=updated,
        deleted=old.take(_ascending(gone)),
        updated_before=updated_before,
        key=list(key),
        added_columns=[c for c in new.column_names if c not in old.column_names],
        dropped_columns=[c for c in old.column_names if c not in new.column_names],
        from_branch=old_side.branch,
        to_branch=new_side.branch,
    )


def _ascending(positions: pa.Array) -> pa.Array:
    return positions.take(pc.sort_indices(positions))


def _key_list(key: str | Sequence[str] | None) -> list[str]:
    if key is None:
        return []
    names = [key] if isinstance(key, str) else list(key)
    names = [str(k).strip() for k in names if str(k).strip()]
    if len(set(names)) != len(names):
        raise invalid(f"key columns repeat: {', '.join(names)}")
    return names


def _compare(
    old: _Side, new: _Side, names: list[str], max_rows: int, progress: Progress | None
) -> RowChanges:
    """``old`` and ``new`` compared on the key ``names``, else by lance's delta where it can
    see changes, else refused: never an empty delta read as "no changes"."""
    if int(max_rows) < 1:
        raise invalid("max_rows must be 1 or more")
    if names:
        return _by_key(old, new, names, int(max_rows), progress)
    if old.ds is None or new.ds is None:
        raise invalid(
            "pick key columns to compare on: over REST the rows of two versions can only be "
            "matched by a key (lance's row-level delta needs the dataset itself)"
        )
    if not (has_stable_row_ids(old.ds) and has_stable_row_ids(new.ds)):
        raise invalid(
            "pick key columns to compare on: this table has no stable row ids, so lance's "
            "delta cannot tell which rows were inserted or updated (it would report none)"
        )
    return _by_delta(old, new, int(max_rows), progress)


def _versions_of(ns: Any, table_id: list[str], branch: str | None) -> list[int]:

    return sorted(int(v) for v in vsv.list_versions(ns, table_id, branch)["version"])


def _where(table_id: list[str], branch: str | None) -> str:
    return (f"branch {branch} of " if branch else "") + ids.format_id(table_id)


def _check_exist(
    ns: Any,
    table_id: list[str],
    branch: str | None,
    info: dict[str, Any] | None,
    wanted: Sequence[int],
) -> None:
    """Each of ``wanted`` is a version of ``branch`` (``TableVersionNotFoundError`` naming the
    versions it has, and on a branch where it was made from)."""
    have = _versions_of(ns, table_id, branch)
    missing = [v for v in wanted if v not in set(have)]
    if not missing:
        return
    span = f"versions {have[0]} to {have[-1]}" if have else "no versions"
    made = ""
    if info is not None:
        parent, at = _parent(info)
        made = (
            f"; it was made from {parent or 'main'} at version {at}: older versions are "
            f"{parent or 'main'}'s"
        )
    raise make(
        ErrorCode.TABLE_VERSION_NOT_FOUND,
        f"{_where(table_id, branch)} has no version {missing[0]} (it has {span}{made})",
    )


@guarded("row_changes")
def row_changes(
    ns: LanceNamespace,
    table_id: Sequence[str],
    from_version: int,
    to_version: int,
    key: str | Sequence[str] | None = None,
    branch: str | None = None,
    *,
    max_rows: int = ROW_CHANGES_MAX_ROWS,
    progress: Progress | None = None,
) -> RowChanges:
    """The rows inserted, updated and deleted from ``from_version`` to ``to_version`` (the
    older first) of ``branch`` (``None``/"main": main; versions of the branch): lance's delta
    on a table with stable row ids when no ``key`` is given, else a compare on ``key`` (see
    the module docstring). Refused (``InvalidInputError``) without a key on a table without
    stable row ids (REST: always without a key), and beyond ``max_rows`` rows; a version the
    branch does not have: ``TableVersionNotFoundError``."""
    tid = ids.check_id(list(table_id))
    lo, hi = _check_versions(from_version, to_version)
    if int(max_rows) < 1:
        raise invalid("max_rows must be 1 or more")
    names = _key_list(key)
    name, info = _branch_of(ns, tid, branch)
    _check_exist(ns, tid, name, info, (lo, hi))
    old, new = _side(ns, tid, name, lo), _side(ns, tid, name, hi)
    return _compare(old, new, names, int(max_rows), progress)


@guarded("branch_changes")
def branch_changes(
    ns: LanceNamespace,
    table_id: Sequence[str],
    branch: str,
    key: str | Sequence[str] | None = None,
    *,
    max_rows: int = ROW_CHANGES_MAX_ROWS,
    progress: Progress | None = None,
) -> RowChanges:
    """The rows ``branch`` inserted, updated and deleted since it was made: the parent (the
    branch it was made from, ``from_branch``, at the version it was made at,
    ``from_version``) compared with the branch's latest version (``to_version``), as
    :func:`row_changes` compares two versions (lance's delta with stable row ids and no key:
    the branch shares the parent's row ids; else on ``key``; REST: on ``key`` only). Where the
    parent's version was deleted since, the branch's own copy of it (its first version, a
    clone of it) stands in for it."""
    tid = ids.check_id(list(table_id))
    if int(max_rows) < 1:
        raise invalid("max_rows must be 1 or more")
    names = _key_list(key)
    name, info = _branch_of(ns, tid, branch)
    if name is None or info is None:
        raise invalid(
            "pick a branch to compare with its parent: main is the table's default branch "
            "and was not made from another one"
        )
    parent, made_at = _parent(info)
    own = _versions_of(ns, tid, name)
    if not own:
        raise make(ErrorCode.TABLE_VERSION_NOT_FOUND, f"{_where(tid, name)} has no versions")
    if made_at in set(_versions_of(ns, tid, parent)):
        old = _side(ns, tid, parent, made_at)
    elif made_at in set(own):
        old = _side(ns, tid, name, made_at)
        old = (
            _Side(old.ns, old.table_id, parent, old.version, old.ds) if old.ds is not None else old
        )
    else:
        raise make(
            ErrorCode.TABLE_VERSION_NOT_FOUND,
            f"branch {name} was made from {parent or 'main'} at version {made_at}, which was "
            f"deleted since, on {parent or 'main'} and on the branch: there is nothing to "
            "compare the branch with",
        )
    new = _side(ns, tid, name, own[-1])
    return _compare(old, new, names, int(max_rows), progress)
