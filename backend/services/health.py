"""A table's health at a glance, from Lance's own statistics (no scan of the data), with a
verdict and the maintenance that would fix what it finds.

:func:`table_health` reads one table:

* local backend: the fragments' metadata (physical rows, deletion files), the unindexed rows
  per index (the live rows of the fragments outside the index's fragment bitmaps, as
  ``ds.stats.index_stats`` counts them, without opening the index), the version listing, the
  files under the table's folder (``ds.all_files``) and two dry runs: the compaction plan
  (``lance.optimize.Compaction.plan``) and ``explain_cleanup_old_versions``;
* REST: what the spec gives: GetTableStats (rows, bytes, fragments, small fragments as the
  server counts them), ListTableIndices + DescribeTableIndexStats (unindexed rows),
  ListTableVersions; deleted rows, the bytes of old versions and the dry runs are ``None``,
  each with a note saying so.

On both, the last compaction and the last index update come from the operations of the
latest :data:`HISTORY_VERSIONS` versions (DescribeTransaction). A cleanup commits no
version, so lance keeps no record of when it ran: ``last_cleanup`` is always ``None``.

The thresholds (module constants) decide the actions:

* compact: at least two small fragments (under :data:`SMALL_FRAGMENT_ROWS` physical rows,
  half of lance's compaction target) making more than :data:`COMPACT_SMALL_SHARE` of the
  fragments, or more than :data:`DELETED_SHARE` of the physical rows deleted; on the local
  backend only when lance's compaction plan has a task (else compaction would do nothing);
* optimize indexes: an index missing rows; recommended beyond :data:`UNINDEXED_SHARE` of the
  rows, optional below;
* clean up: old versions hold bytes; recommended when a cleanup keeping the versions of the
  last :data:`CLEANUP_KEEP_DAYS` days (the panel's default, a policy's rule) frees more than
  :data:`CLEANUP_OLD_BYTES_RATIO` times what the latest version holds and at least
  :data:`CLEANUP_MIN_BYTES` (reclaiming a few kilobytes is not worth an admin's attention),
  optional otherwise. Locally lance's dry run gives every old version's bytes
  (``old_version_bytes``), and a second dry run those the cleanup keeping the days frees
  (``cleanup_bytes``) where the versions' commit times put the cut among the old versions.

The thresholds are a :class:`Thresholds` (these constants by default), a parameter of
:func:`table_health` and :func:`namespace_health`.

The verdict is ``"needs attention"`` when an action is recommended, else ``"healthy"``.

:func:`glance` is the health of a row of the tables list: the figures above that need no
listing of versions or files (local: the latest manifest: fragments, deleted rows, unindexed
rows from the indexes' fragment bitmaps, the compaction plan; REST: GetTableStats and the
index stats), judged by the same rule (:func:`_verdict`). It never finds a cleanup: the
bytes old versions hold need the version listing.

:func:`namespace_health` gives one row per table of a namespace; a table that cannot be read
gives its error in the ``error`` column.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pandas as pd
from lance_namespace import (
    GetTableStatsRequest,
    LanceNamespace,
    ListTablesRequest,
)
from lance_namespace.errors import InvalidTableStateError, LanceNamespaceError

from .. import capabilities
from ..branch_view import branch_of
from ..capabilities import opens_datasets
from ..errors import describe_error
from ..spec import catalog_views
from ..spec.paging import list_all
from ..text import human_bytes, plural
from . import index_overview as ixs
from . import versions as vsv

# pylance 14's CompactionOptions default ``target_rows_per_fragment`` (1024 * 1024).
TARGET_ROWS_PER_FRAGMENT = 1024 * 1024
# A fragment is small under half of the compaction target (physical rows).
SMALL_FRAGMENT_ROWS = TARGET_ROWS_PER_FRAGMENT // 2
# Compact when more than this share of the fragments are small (and at least two are).
COMPACT_SMALL_SHARE = 0.2
# Compact when more than this share of the physical rows are deleted (lance's own
# ``materialize_deletions_threshold`` default for a fragment).
DELETED_SHARE = 0.1
# Optimize (recommended) when an index misses more than this share of the rows.
UNINDEXED_SHARE = 0.05
# Clean up (recommended) when old versions hold more than this many times the latest's bytes.
CLEANUP_OLD_BYTES_RATIO = 2.0
# ... and when they hold at least this many bytes (1 GiB).
CLEANUP_MIN_BYTES = 1 << 30
# A cleanup keeps the versions of the last this many days (and the latest and tagged ones):
# the default of the panel's cleanup and of a maintenance policy's cleanup rule.
CLEANUP_KEEP_DAYS = 7
# Versions whose operations are read for the last compaction and index update.
HISTORY_VERSIONS = 50

HEALTHY = "healthy"
NEEDS_ATTENTION = "needs attention"
UNKNOWN = "unknown"

NO_CLEANUP_RECORD = "a cleanup commits no version: lance keeps no record of when one ran"


@dataclass(frozen=True)
class Thresholds:
    """The thresholds of the verdict (see the module's docstring)."""

    small_fragment_rows: int = SMALL_FRAGMENT_ROWS
    compact_small_share: float = COMPACT_SMALL_SHARE
    deleted_share: float = DELETED_SHARE
    unindexed_share: float = UNINDEXED_SHARE
    cleanup_old_bytes_ratio: float = CLEANUP_OLD_BYTES_RATIO
    cleanup_min_bytes: int = CLEANUP_MIN_BYTES
    cleanup_keep_days: int = CLEANUP_KEEP_DAYS


DEFAULT_THRESHOLDS = Thresholds()


@dataclass(frozen=True)
class Event:
    """A version that did something (a compaction, an index update) and when."""

    version: int
    at: datetime | None


@dataclass(frozen=True)
class Action:
    """A maintenance action: ``kind`` (``compact``, ``optimize``, ``cleanup``), why, what it
    would do, and whether it is recommended (else optional)."""

    kind: str
    reason: str
    effect: str
    recommended: bool = True


@dataclass(frozen=True)
class TableHealth:
    """One table's health; ``None``: not known on this backend (``notes`` say why)."""

    table_id: tuple[str, ...]
    backend: str
    version: int | None = None
    rows: int | None = None
    physical_rows: int | None = None
    fragments: int | None = None
    small_fragments: int | None = None
    deleted_rows: int | None = None
    deleted_share: float | None = None
    unindexed_rows: dict[str, int | None] | None = None
    versions: int | None = None
    total_bytes: int | None = None
    old_version_bytes: int | None = None
    cleanup_keep_days: int = CLEANUP_KEEP_DAYS
    cleanup_versions: int | None = None
    cleanup_bytes: int | None = None
    last_compaction: Event | None = None
    last_optimize: Event | None = None
    last_cleanup: Event | None = None
    compaction_tasks: int | None = None
    compaction_fragments: int | None = None
    verdict: str = UNKNOWN
    actions: tuple[Action, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


@dataclass
class _Figures:
    """What was read, before the verdict."""

    backend: str
    version: int | None = None
    rows: int | None = None
    physical_rows: int | None = None
    fragments: int | None = None
    small_fragments: int | None = None
    deleted_rows: int | None = None
    unindexed_rows: dict[str, int | None] | None = None
    versions: int | None = None
    total_bytes: int | None = None
    old_version_bytes: int | None = None
    old_versions: int | None = None
    cleanup_versions: int | None = None
    cleanup_bytes: int | None = None
    last_compaction: Event | None = None
    last_optimize: Event | None = None
    plan_tasks: int | None = None
    plan_fragments: int | None = None
    plan_rows: int | None = None
    plan_deleted: int | None = None
    plan_fragments_after: int | None = None
    notes: list[str] = field(default_factory=list)


# -- reading ----------------------------------------------------------------------------------------


def _history(
    ns: LanceNamespace, table_id: list[str], fig: _Figures, facts: vsv.VersionFacts | None
) -> pd.DataFrame:
    """Versions (count, latest) and, from the operations of the latest
    :data:`HISTORY_VERSIONS`, the last compaction (``Rewrite``) and the last index update
    (``CreateIndex``: a build or an optimize). With ``facts``, the operations of versions
    listed with a manifest e-tag are kept there and looked up once. Returns the listing
    (newest first)."""
    listing = vsv.list_versions(ns, table_id)
    fig.versions = len(listing)
    if listing.empty:
        return listing
    fig.version = fig.version or int(listing["version"].iloc[0])
    recent = listing.head(HISTORY_VERSIONS)
    when = dict(zip(recent["version"].astype(int), recent["timestamp"], strict=True))
    ops = _operations(ns, table_id, recent, facts)
    for op, attr in (("Rewrite", "last_compaction"), ("CreateIndex", "last_optimize")):
        hits = ops[ops["operation"] == op]
        if not hits.empty:
            v = int(hits["version"].max())
            at = when.get(v)
            stamp = None if at is None or pd.isna(at) else at.to_pydatetime()
            setattr(fig, attr, Event(v, stamp))
    if len(listing) > HISTORY_VERSIONS:
        fig.notes.append(
            f"last compaction and index update: read from the latest {HISTORY_VERSIONS} "
            "versions only"
        )
    unread = ops[ops["error"].notna()]
    if not unread.empty:
        fig.notes.append(
            f"last compaction and index update: the operations of {len(unread)} of the latest "
            f"{len(recent)} versions could not be read ({unread['error'].iloc[0]})"
        )
    return listing


def _operations(
    ns: LanceNamespace, table_id: list[str], recent: pd.DataFrame, facts: vsv.VersionFacts | None
) -> pd.DataFrame:
    """The operations of the versions of ``recent`` (listing rows), of the branch ``ns``
    acts on (DescribeTransaction has none: it would answer main's versions of those
    numbers). With ``facts``, those of versions with a manifest e-tag (it names the version
    for good) come from there, read once."""
    branch = branch_of(ns)
    versions = [int(v) for v in recent["version"]]
    if facts is None:
        return vsv.version_operations(ns, table_id, versions, branch)
    tagged = {
        int(v): tag
        for v, tag in zip(recent["version"], recent["e_tag"], strict=True)
        if isinstance(tag, str) and tag
    }
    parts = [facts.operations(ns, table_id, tagged, branch)] if tagged else []
    rest = [v for v in versions if v not in tagged]
    if rest:
        parts.append(vsv.version_operations(ns, table_id, rest, branch))
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


def _manifest_figures(ds: Any, limits: Thresholds) -> _Figures:
    """What the latest manifest of dataset ``ds`` says, with no listing of versions or files:
    the fragments (physical rows, deletion files), the rows each index does not cover yet
    (:func:`_unindexed_rows`) and the compaction plan (``lance.optimize.Compaction.plan``
    reads the manifest only)."""
    from lance.optimize import Compaction

    fig = _Figures(backend="local", version=int(ds.version))
    physical = deleted = small = count = 0
    fragments = ds.get_fragments()
    for fragment in fragments:
        meta = fragment.metadata
        rows = int(meta.physical_rows or 0)
        count += 1
        physical += rows
        small += rows < limits.small_fragment_rows
        if meta.deletion_file is not None:
            deleted += int(meta.deletion_file.num_deleted_rows or 0)
    fig.fragments, fig.small_fragments = count, small
    fig.physical_rows, fig.deleted_rows, fig.rows = physical, deleted, physical - deleted
    fig.unindexed_rows = _unindexed_rows(ds.describe_indices(), [f.metadata for f in fragments])
    plan = Compaction.plan(ds, {"target_rows_per_fragment": TARGET_ROWS_PER_FRAGMENT})
    fig.plan_tasks = int(plan.num_tasks())
    planned = [f for task in plan.tasks for f in task.fragments]
    fig.plan_fragments = len(planned)
    fig.plan_rows = sum(int(f.physical_rows or 0) for f in planned)
    fig.plan_deleted = sum(
        int(f.deletion_file.num_deleted_rows or 0) for f in planned if f.deletion_file is not None
    )
    fig.plan_rows -= fig.plan_deleted
    fig.plan_fragments_after = sum(
        max(1, math.ceil(_live(task.fragments) / TARGET_ROWS_PER_FRAGMENT)) for task in plan.tasks
    )
    return fig


def _unindexed_rows(indices: Sequence[Any], fragments: Sequence[Any]) -> dict[str, int | None]:
    """Per index (``describe_indices``; lance's own ``__`` indexes left out): the live rows of
    the fragments none of its segments covers (the segments' fragment bitmaps in the manifest:
    what ``ds.stats.index_stats`` counts as ``num_unindexed_rows``, without opening the
    index). ``None`` when a segment does not say which fragments it covers."""
    out: dict[str, int | None] = {}
    for index in indices:
        if index.name.startswith("__") or index.name in out:
            continue
        covered: set[int] = set()
        known = True
        for segment in index.segments or ():
            ids = segment.fragment_ids
            if ids is None:
                known = False
                break
            covered.update(int(i) for i in ids)
        out[index.name] = (
            _live([f for f in fragments if int(f.id) not in covered]) if known else None
        )
    return out


def _local_figures(
    ns: Any, table_id: list[str], limits: Thresholds, facts: vsv.VersionFacts | None
) -> _Figures:
    """:func:`_manifest_figures`, the bytes of every file under the table's folder, the
    cleanup's dry run and the version history."""
    ds = ns.open_dataset(table_id)
    fig = _manifest_figures(ds, limits)
    fig.total_bytes = sum(
        sum(v for v in batch.column("size_bytes").to_pylist() if v) for batch in ds.all_files()
    )
    every = ds.explain_cleanup_old_versions(retain_versions=1, error_if_tagged_old_versions=False)
    fig.old_version_bytes = int(every.stats.bytes_removed)
    fig.old_versions = int(every.stats.old_versions)
    listing = _history(ns, table_id, fig, facts)
    fig.cleanup_versions, fig.cleanup_bytes = _cleanup_keeping_days(
        ds, listing, fig, limits.cleanup_keep_days
    )
    return fig


def _cleanup_keeping_days(
    ds: Any, listing: pd.DataFrame, fig: _Figures, days: int
) -> tuple[int | None, int | None]:
    """``(versions, bytes)`` the cleanup keeping the versions of the last ``days`` days (and
    the latest and tagged ones) removes: lance's dry run of it where the cut falls among the
    old versions (``listing``: every version, newest first); no version where every old one
    is newer than the cut; every old version's figures (``fig``, lance's dry run keeping only
    the latest) where every old one is older, or ``days`` is 0."""
    if not fig.old_versions or not days:
        return fig.old_versions, fig.old_version_bytes
    cut = pd.Timestamp.now(tz="UTC") - pd.Timedelta(days=days)
    old = listing["timestamp"].iloc[1:]
    if old.notna().all():  # every old version's time known: the cut may fall beside them all
        if (old >= cut).all():
            return 0, 0
        if (old < cut).all():
            return fig.old_versions, fig.old_version_bytes
    kept = ds.explain_cleanup_old_versions(
        older_than=timedelta(days=days), error_if_tagged_old_versions=False
    )
    return int(kept.stats.old_versions), int(kept.stats.bytes_removed)


def _live(fragments: Sequence[Any]) -> int:
    return sum(
        int(f.physical_rows or 0)
        - (int(f.deletion_file.num_deleted_rows or 0) if f.deletion_file is not None else 0)
        for f in fragments
    )


def _rest_figures(
    ns: LanceNamespace,
    table_id: list[str],
    *,
    history: bool = True,
    facts: vsv.VersionFacts | None = None,
    unindexed_rows: Iterable[tuple[str, int | None]] | None = None,
) -> _Figures:
    """GetTableStats and the index stats (``unindexed_rows``, when given, in their place:
    no index request); with ``history`` the version listing too."""
    try:
        stats = ns.get_table_stats(GetTableStatsRequest(id=table_id))
    except LanceNamespaceError:
        if catalog_views.declared_only(ns, table_id):
            raise InvalidTableStateError("declared only") from None
        raise
    fig = _Figures(backend=capabilities(ns).kind)
    fig.rows = stats.num_rows
    fig.total_bytes = stats.total_bytes
    frag = stats.fragment_stats
    if frag is not None:
        fig.fragments = frag.num_fragments
        fig.small_fragments = frag.num_small_fragments
    if unindexed_rows is not None:
        fig.unindexed_rows = {n: c for n, c in unindexed_rows if not n.startswith("__")}
    else:
        fig.unindexed_rows = _rest_unindexed(ns, table_id)
    _drop_impossible(fig)
    if history:
        _history(ns, table_id, fig, facts)
    fig.notes += [
        "rows, bytes, fragments and small fragments: as the server's GetTableStats counts them",
        "deleted rows: not in the spec's answers",
        "bytes held by old versions and the dry runs (compaction plan, cleanup): not available "
        "over REST",
        "the console compacts and optimizes tables of the local backend only",
    ]
    return fig


def _rest_unindexed(ns: LanceNamespace, table_id: list[str]) -> dict[str, int | None]:
    """Each index's unindexed rows, as the server's index stats count them."""
    names = [
        name
        for name in (getattr(index, "index_name", None) for index in ixs.list_indexes(ns, table_id))
        if name and not name.startswith("__")
    ]
    out: dict[str, int | None] = {}
    for name, one in ixs.indexes_stats(ns, table_id, names).items():
        value = getattr(one, "num_unindexed_rows", None)
        out[name] = int(value) if value is not None else None
    return out


def _drop_impossible(fig: _Figures) -> None:
    """A server's counts that cannot all be true (more small fragments than fragments, an
    index missing more rows than the table holds) are not known, and a note says what was
    answered: neither a share over 100% nor an action is built on them."""
    if (
        fig.small_fragments is not None
        and fig.fragments is not None
        and fig.small_fragments > fig.fragments
    ):
        fig.notes.append(
            f"small fragments: not known (the server counted {fig.small_fragments:,} small "
            f"fragments of {fig.fragments:,})"
        )
        fig.small_fragments = None
    if fig.rows is None or not fig.unindexed_rows:
        return
    for name, missing in fig.unindexed_rows.items():
        if missing is not None and missing > fig.rows:
            fig.notes.append(
                f"unindexed rows of {name}: not known (the server counted {missing:,} of "
                f"{plural(fig.rows, 'row')})"
            )
            fig.unindexed_rows[name] = None


# -- the verdict ------------------------------------------------------------------------------------


def _optimize_effect(unindexed: Mapping[str, int]) -> str:
    """What optimizing does to the indexes missing rows (name -> rows each misses): the rows
    each index misses are counted per index, never summed (five indexes missing the same 57
    rows miss 57 rows, not 285)."""
    counts = set(unindexed.values())
    if len(unindexed) == 1:
        ((name, rows),) = unindexed.items()
        return f"adds the {plural(rows, 'unindexed row')} to {name}"
    if len(counts) == 1:
        return f"adds the {plural(counts.pop(), 'unindexed row')} to each of the {len(unindexed)} indexes"
    return f"adds each index's unindexed rows to it (up to {plural(max(counts), 'row')} per index)"


def _actions(fig: _Figures, limits: Thresholds) -> list[Action]:
    actions: list[Action] = []
    unindexed = {k: v for k, v in (fig.unindexed_rows or {}).items() if v}
    if unindexed:
        worst = max(unindexed.values())
        share = worst / fig.rows if fig.rows else 1.0
        names = ", ".join(f"{k} ({plural(v, 'row')})" for k, v in unindexed.items())
        actions.append(
            Action(
                "optimize",
                f"indexes miss rows: {names}; queries scan them without the index",
                _optimize_effect(unindexed),
                recommended=share > limits.unindexed_share,
            )
        )
    reasons = []
    small = fig.small_fragments
    if (
        fig.fragments
        and small is not None
        and small >= 2
        and small / fig.fragments > limits.compact_small_share
    ):
        under = (
            f"under {limits.small_fragment_rows:,} rows"
            if fig.backend == "local"
            else "as the server counts them"
        )
        reasons.append(f"{small} of {plural(fig.fragments, 'fragment')} are small ({under})")
    if fig.deleted_rows and fig.physical_rows:
        share = fig.deleted_rows / fig.physical_rows
        if share > limits.deleted_share:
            reasons.append(
                f"{fig.deleted_rows:,} deleted rows ({share:.0%}) are still read by queries"
            )
    if reasons and fig.plan_tasks != 0:
        if fig.plan_tasks is None:
            effect = "merges the small fragments and drops deleted rows from the files"
        else:
            after = fig.plan_fragments_after
            effect = (
                f"the compaction plan rewrites {plural(fig.plan_fragments or 0, 'fragment')} in "
                f"{plural(fig.plan_tasks, 'task')} into about {plural(after or 1, 'fragment')}"
            )
            if fig.plan_deleted:
                effect += f", dropping {fig.plan_deleted:,} deleted rows from the files"
        actions.append(Action("compact", "; ".join(reasons), effect))
    if fig.old_version_bytes:
        actions.append(_cleanup_action(fig, limits))
    return actions


def _cleanup_action(fig: _Figures, limits: Thresholds) -> Action:
    """The cleanup the panel's button runs by default, keeping the latest version, the tagged
    ones and those of the last ``limits.cleanup_keep_days`` days: its effect is what that
    cleanup frees (lance's dry run of it), and it is recommended by those bytes, never by
    bytes of versions it keeps. The reason gives every old version's bytes."""
    held = fig.old_version_bytes or 0
    latest = max((fig.total_bytes or 0) - held, 1)
    reason = f"old versions hold {human_bytes(held)} ({against_latest_text(held / latest)})"
    days = limits.cleanup_keep_days
    keeping = "the latest and tagged ones" + (
        f" and those of the last {plural(days, 'day')}" if days else ""
    )
    freed, removed = fig.cleanup_bytes or 0, fig.cleanup_versions or 0
    if removed:
        effect = (
            f"removing the old versions (keeping {keeping}) frees {human_bytes(freed)} in "
            f"{plural(removed, 'version')}"
        )
    else:
        effect = f"none is older than {plural(days, 'day')}: a cleanup keeping them frees nothing"
    if freed < held:  # versions of the last days hold the rest
        effect += (
            f"; keeping 0 days frees {human_bytes(held)} in "
            f"{plural(fig.old_versions or 0, 'version')}"
        )
    return Action(
        "cleanup",
        reason,
        effect,
        recommended=freed / latest > limits.cleanup_old_bytes_ratio
        and freed >= limits.cleanup_min_bytes,
    )


def against_latest_text(ratio: float) -> str:
    """Old versions' bytes against the latest version's (``ratio``), as the health reason says
    it: ``2.5× what the latest version holds`` from the latest's size up, a percentage below
    (``4% of ...``; ``under 1% of ...``): never ``0.0×`` for bytes that are there."""
    if ratio >= 1:
        return f"{ratio:.1f}× what the latest version holds"
    if ratio < 0.01:
        return "under 1% of what the latest version holds"
    return f"{ratio:.0%} of what the latest version holds"


def _verdict(fig: _Figures, limits: Thresholds) -> tuple[str, list[Action]]:
    """The verdict and the actions of figures ``fig``: the one rule of :func:`table_health`
    and :func:`glance`."""
    actions = _actions(fig, limits)
    known = fig.fragments is not None or fig.unindexed_rows is not None
    verdict = (
        NEEDS_ATTENTION if any(a.recommended for a in actions) else (HEALTHY if known else UNKNOWN)
    )
    return verdict, actions


def _health(table_id: Sequence[str], fig: _Figures, limits: Thresholds) -> TableHealth:
    verdict, actions = _verdict(fig, limits)
    physical = fig.physical_rows
    return TableHealth(
        table_id=tuple(table_id),
        backend=fig.backend,
        version=fig.version,
        rows=fig.rows,
        physical_rows=physical,
        fragments=fig.fragments,
        small_fragments=fig.small_fragments,
        deleted_rows=fig.deleted_rows,
        deleted_share=(fig.deleted_rows / physical)
        if physical and fig.deleted_rows is not None
        else (0.0 if physical == 0 else None),
        unindexed_rows=fig.unindexed_rows,
        versions=fig.versions,
        total_bytes=fig.total_bytes,
        old_version_bytes=fig.old_version_bytes,
        cleanup_keep_days=limits.cleanup_keep_days,
        cleanup_versions=fig.cleanup_versions,
        cleanup_bytes=fig.cleanup_bytes,
        last_compaction=fig.last_compaction,
        last_optimize=fig.last_optimize,
        last_cleanup=None,
        compaction_tasks=fig.plan_tasks,
        compaction_fragments=fig.plan_fragments,
        verdict=verdict,
        actions=tuple(actions),
        notes=(*fig.notes, NO_CLEANUP_RECORD),
    )


def table_health(
    ns: LanceNamespace,
    table_id: Sequence[str],
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    *,
    facts: vsv.VersionFacts | None = None,
    unindexed_rows: Iterable[tuple[str, int | None]] | None = None,
) -> TableHealth:
    """The health of table ``table_id`` (see the module's docstring). A declared-only table
    has no data: its verdict is ``"unknown"``. Errors are the namespace's errors. ``facts``
    keeps the operations of the versions it reads (which never change), so that reading the
    health again looks up only the versions written since. ``unindexed_rows``: each index's
    unindexed rows at the table's latest version, (name, rows), when the caller has read
    them (the Indexes page's overview of the same version,
    ``index_overview.unindexed_by_name``): over REST the health then sends no index request
    (the local figures come from the manifest, and ignore them)."""
    tid = list(table_id)
    try:
        if opens_datasets(ns):
            fig = _local_figures(ns, tid, thresholds, facts)
        else:
            fig = _rest_figures(ns, tid, facts=facts, unindexed_rows=unindexed_rows)
    except InvalidTableStateError:
        return TableHealth(
            table_id=tuple(tid),
            backend=capabilities(ns).kind,
            notes=("declared only: the table has no data yet",),
        )
    return _health(tid, fig, thresholds)


GLANCE_NOTE = (
    "at a glance: from the latest manifest's fragment and index figures (over REST: "
    "GetTableStats and the index stats), without listing the versions; the versions, "
    "the bytes old versions hold (cleanup) and the last maintenance are read by table_health"
)


def glance(
    ns: LanceNamespace,
    table_id: Sequence[str],
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    *,
    dataset: Any = None,
) -> TableHealth:
    """The health of table ``table_id`` read cheaply enough for a row of the tables list: the
    figures of :func:`table_health` that need no listing of versions or files (local: the
    latest manifest of ``dataset``, opened here when ``None``: fragments, deleted rows,
    unindexed rows, the compaction plan; REST: GetTableStats and the index stats), judged by
    the same rule. ``versions``, ``old_version_bytes`` and the last maintenance are ``None``
    (a cleanup is never among its actions); ``total_bytes`` too locally, over REST it is
    GetTableStats' ``total_bytes``. Errors are the namespace's errors (a declared-only table:
    ``InvalidTableStateError``)."""
    tid = list(table_id)
    if dataset is None and opens_datasets(ns):
        dataset = ns.open_dataset(tid)  # type: ignore[attr-defined]
    if dataset is not None:
        fig = _manifest_figures(dataset, thresholds)
    else:
        fig = _rest_figures(ns, tid, history=False)
    fig.notes.append(GLANCE_NOTE)
    return _health(tid, fig, thresholds)


NAMESPACE_COLUMNS: tuple[str, ...] = (
    "table",
    "verdict",
    "rows",
    "fragments",
    "small_fragments",
    "deleted_rows",
    "deleted_share",
    "unindexed_rows",
    "versions",
    "old_version_bytes",
    "actions",
    "error",
)


def namespace_health(
    ns: LanceNamespace,
    namespace_id: Sequence[str],
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> pd.DataFrame:
    """One row per table of namespace ``namespace_id`` (every page of ListTables), by name:
    the verdict, the figures, ``unindexed_rows`` (the most any index misses), the recommended
    actions (``"compact, optimize"``; optional ones in brackets). A table that cannot be read
    gives its error in ``error`` and ``None`` figures."""
    req = ListTablesRequest(id=list(namespace_id))
    names = sorted(set(list_all(ns.list_tables, req, "tables")))
    rows: list[dict[str, Any]] = []
    for name in names:
        row: dict[str, Any] = dict.fromkeys(NAMESPACE_COLUMNS)
        row["table"] = name
        try:
            health = table_health(ns, [*namespace_id, name], thresholds)
        except LanceNamespaceError as err:
            row["verdict"], row["error"] = UNKNOWN, describe_error(err)["message"]
        except (OSError, ValueError, RuntimeError, TypeError) as err:
            row["verdict"], row["error"] = UNKNOWN, str(err) or type(err).__name__
        else:
            missing = [v for v in (health.unindexed_rows or {}).values() if v is not None]
            row.update(
                verdict=health.verdict,
                rows=health.rows,
                fragments=health.fragments,
                small_fragments=health.small_fragments,
                deleted_rows=health.deleted_rows,
                deleted_share=health.deleted_share,
                unindexed_rows=max(missing) if missing else None,
                versions=health.versions,
                old_version_bytes=health.old_version_bytes,
                actions=", ".join(
                    a.kind if a.recommended else f"({a.kind})" for a in health.actions
                ),
            )
        rows.append(row)
    frame = pd.DataFrame(rows, columns=list(NAMESPACE_COLUMNS))
    for col in ("rows", "fragments", "small_fragments", "deleted_rows", "unindexed_rows"):
        frame[col] = frame[col].astype("Int64")
    for col in ("versions", "old_version_bytes"):
        frame[col] = frame[col].astype("Int64")
    frame["deleted_share"] = frame["deleted_share"].astype("Float64")
    for col in ("verdict", "actions", "error"):
        frame[col] = frame[col].astype(object).where(frame[col].notna(), None)
    return frame
