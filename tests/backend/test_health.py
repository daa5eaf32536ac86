"""Table health (backend.services.health) on a crafted table, on both backends: every figure
checked against lance itself (fragments, deletion files, index statistics, versions), the
dry runs against the real compaction and cleanup run on a copy of the table, and the verdict
against the thresholds."""

from __future__ import annotations

import os
import shutil
from datetime import timedelta
from pathlib import Path

import lance
import pandas as pd
import pyarrow as pa
from lance_namespace import (
    CreateNamespaceRequest,
    DeclareTableRequest,
    DescribeTableIndexStatsRequest,
    GetTableStatsRequest,
)

import backend
from backend import capabilities
from backend.services import health as hs
from backend.services import versions as vsv
from backend.text import human_bytes
from components.health import figure_lines
from tests.support import CountingTransactions, create_table, manifest_file, table_location

T = ["a", "t"]


def rows(start: int, n: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "text": pa.array([f"row {i} of the crafted table" for i in range(start, start + n)]),
        }
    )


def folder_bytes(path: Path) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def craft(ns) -> tuple[Path, int]:
    """Four appends of 200 rows, 150 rows deleted, a BTREE index on ``id``, then two more
    appends of 100 rows the index does not cover. Returns the location and the index's
    version."""
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    create_table(ns, T, rows(0, 200))
    path = table_location(ns, T)
    for i in range(1, 4):
        lance.write_dataset(rows(200 * i, 200), str(path), mode="append")
    ds = lance.dataset(str(path))
    ds.delete("id < 150")
    ds.create_scalar_index("id", "BTREE", name="id_idx")
    index_version = ds.version
    for i in range(2):
        lance.write_dataset(rows(800 + 100 * i, 100), str(path), mode="append")
    return path, index_version


def test_figures_of_a_crafted_table_match_lance(ns, tmp_path: Path) -> None:
    path, index_version = craft(ns)
    got = hs.table_health(ns, T)
    ds = lance.dataset(str(path))
    fragments = ds.get_fragments()
    physical = [f.physical_rows for f in fragments]
    assert got.version == ds.version
    assert got.versions == len(ds.versions()) == 8
    assert got.unindexed_rows == {"id_idx": 200}  # the two appends after the index
    assert got.last_optimize is not None and got.last_optimize.version == index_version
    assert got.last_compaction is None and got.last_cleanup is None
    if capabilities(ns).kind == "local":
        assert got.fragments == len(fragments) == 6
        assert got.physical_rows == sum(physical) == 1000
        assert got.small_fragments == sum(p < hs.SMALL_FRAGMENT_ROWS for p in physical) == 6
        assert got.rows == ds.count_rows() == 850
        deleted = sum(
            f.metadata.deletion_file.num_deleted_rows
            for f in fragments
            if f.metadata.deletion_file is not None
        )
        assert got.deleted_rows == deleted == sum(physical) - ds.count_rows() == 150
        assert got.deleted_share == 150 / 1000
        assert got.unindexed_rows == {
            "id_idx": ds.stats.index_stats("id_idx")["num_unindexed_rows"]
        }
        assert got.total_bytes == folder_bytes(path)
        # the dry runs against the real thing, on copies of the table
        cleaned = Path(shutil.copytree(path, tmp_path / "cleaned"))
        lance.dataset(str(cleaned)).cleanup_old_versions(
            retain_versions=1, error_if_tagged_old_versions=False
        )
        assert got.old_version_bytes == folder_bytes(path) - folder_bytes(cleaned) > 0
        compacted = Path(shutil.copytree(path, tmp_path / "compacted"))
        metrics = lance.dataset(str(compacted)).optimize.compact_files()
        assert got.compaction_fragments == metrics.fragments_removed > 0
        assert got.compaction_tasks and got.compaction_tasks >= 1
    else:  # what the spec gives: GetTableStats, the index stats, the version listing
        stats = ns.get_table_stats(GetTableStatsRequest(id=T))
        assert got.rows == stats.num_rows
        assert got.total_bytes == stats.total_bytes
        assert got.fragments == stats.fragment_stats.num_fragments == len(fragments)
        assert got.small_fragments == stats.fragment_stats.num_small_fragments
        index = ns.describe_table_index_stats(
            DescribeTableIndexStatsRequest(id=T, index_name="id_idx")
        )
        assert got.unindexed_rows == {"id_idx": index.num_unindexed_rows}
        for none in ("physical_rows", "deleted_rows", "deleted_share", "old_version_bytes"):
            assert getattr(got, none) is None, none
        assert got.compaction_tasks is None and got.compaction_fragments is None
        assert any("deleted rows" in n for n in got.notes)


def test_health_read_again_looks_up_only_the_operations_of_versions_written_since(ns) -> None:
    """With ``facts`` (what the console keeps per connection), the health's history asks for
    the operation of each version once: read again, nothing; after a compaction, the new
    versions' only. The health is the same as read without them."""
    path, _ = craft(ns)
    facts = vsv.VersionFacts()
    counting = CountingTransactions(ns)
    first = hs.table_health(counting, T, facts=facts)
    assert first == hs.table_health(ns, T)
    assert sorted(counting.asked) == list(range(1, 9))
    counting.asked.clear()
    assert hs.table_health(counting, T, facts=facts) == first
    assert counting.asked == []
    lance.dataset(str(path)).optimize.compact_files()
    latest = lance.dataset(str(path)).version
    again = hs.table_health(counting, T, facts=facts)
    # the compaction's versions (locally, one whose transaction pylance's reader cannot
    # build or name is then described: looked up twice)
    assert sorted(set(counting.asked)) == list(range(9, latest + 1))
    assert again == hs.table_health(ns, T)
    assert again.last_compaction is not None and again.last_compaction.version > 8


def test_verdict_follows_the_thresholds_and_maintenance_makes_it_healthy(
    ns, tmp_path: Path
) -> None:
    path, _ = craft(ns)
    got = hs.table_health(ns, T)
    kinds = {a.kind: a for a in got.actions}
    # 200 unindexed rows of 850 (or the server's count): beyond UNINDEXED_SHARE
    assert kinds["optimize"].recommended and "id_idx (200 rows)" in kinds["optimize"].reason
    assert kinds["optimize"].effect == "adds the 200 unindexed rows to id_idx"
    assert kinds["compact"].recommended  # every fragment small, 15% deleted
    assert "6 of 6 fragments are small" in kinds["compact"].reason
    if capabilities(ns).kind == "local":
        assert "150 deleted rows (15%)" in kinds["compact"].reason
        assert f"rewrites {got.compaction_fragments} fragments" in kinds["compact"].effect
        assert not kinds["cleanup"].recommended  # far less than CLEANUP_MIN_BYTES
    assert got.verdict == hs.NEEDS_ATTENTION

    if capabilities(ns).kind == "local":
        ns.optimize_indexes(T)
        ns.compact_files(T)
    else:  # the console maintains local tables only: lance itself, on the server's folder
        ds = lance.dataset(str(path))
        ds.optimize.optimize_indices()
        ds.optimize.compact_files()
    after = hs.table_health(ns, T)
    ds = lance.dataset(str(path))
    assert len(ds.get_fragments()) == after.fragments == 1
    assert after.unindexed_rows == {"id_idx": 0}
    assert after.last_compaction is not None and after.last_compaction.version == ds.version
    assert not [a for a in after.actions if a.kind in ("compact", "optimize")]
    assert not [a for a in after.actions if a.recommended]
    assert after.verdict == hs.HEALTHY
    if capabilities(ns).kind == "local":
        assert after.deleted_rows == 0 and after.rows == ds.count_rows() == 850
        assert [a.kind for a in after.actions] == ["cleanup"]  # old versions remain, optional
        # without the floor of CLEANUP_MIN_BYTES and with a lower ratio, old versions holding
        # more than the latest one (measured by a real cleanup of a copy) make it recommended
        cleaned = Path(shutil.copytree(path, tmp_path / "cleaned"))
        lance.dataset(str(cleaned)).cleanup_old_versions(
            retain_versions=1, error_if_tagged_old_versions=False
        )
        old = folder_bytes(path) - folder_bytes(cleaned)
        ratio = old / folder_bytes(cleaned)
        limits = hs.Thresholds(
            cleanup_min_bytes=0, cleanup_old_bytes_ratio=1.0, cleanup_keep_days=0
        )
        strict = hs.table_health(ns, T, limits)
        (cleanup,) = strict.actions
        assert strict.old_version_bytes == old
        assert ratio > 1.0 and cleanup.recommended, ratio
        assert strict.verdict == hs.NEEDS_ATTENTION
        assert hs.table_health(ns, T, hs.Thresholds(cleanup_min_bytes=0)).verdict == (
            hs.NEEDS_ATTENTION if ratio > hs.CLEANUP_OLD_BYTES_RATIO else hs.HEALTHY
        )
        assert f"({ratio:.1f}× what the latest version holds)" in cleanup.reason  # ratio > 1


def test_the_cleanup_action_says_what_the_cleanup_keeping_its_days_frees(
    ns, tmp_path: Path
) -> None:
    """The cleanup the panel's button runs by default keeps the versions of the last
    ``cleanup_keep_days`` days (7): on a table whose versions are all minutes old it frees
    nothing, so the action says so (and what keeping 0 days frees) and is never recommended,
    whatever the old versions hold. Each figure is a real cleanup of a copy of the table."""
    path, _ = craft(ns)
    if capabilities(ns).kind != "local":  # the bytes of old versions are not known over REST
        assert not [a for a in hs.table_health(ns, T).actions if a.kind == "cleanup"]
        return

    def freed(days: int) -> tuple[int, int]:
        """(versions, bytes) lance's cleanup keeping ``days`` days removes from a copy."""
        copy = Path(shutil.copytree(path, tmp_path / f"kept-{days}"))
        stats = lance.dataset(str(copy)).cleanup_old_versions(
            older_than=timedelta(days=days), error_if_tagged_old_versions=False
        )
        assert stats.bytes_removed == folder_bytes(path) - folder_bytes(copy)
        return stats.old_versions, stats.bytes_removed

    lax = {"cleanup_min_bytes": 0, "cleanup_old_bytes_ratio": 0.0}
    week = hs.table_health(ns, T, hs.Thresholds(**lax))
    all_versions, all_bytes = freed(0)
    assert (all_versions, all_bytes > 0) == (7, True)
    assert (week.cleanup_keep_days, week.old_version_bytes) == (7, all_bytes)
    assert (week.cleanup_versions, week.cleanup_bytes) == freed(7) == (0, 0)
    (cleanup,) = [a for a in week.actions if a.kind == "cleanup"]
    assert not cleanup.recommended  # the button would free nothing, however low the bar
    assert cleanup.effect == (
        "none is older than 7 days: a cleanup keeping them frees nothing; "
        f"keeping 0 days frees {human_bytes(all_bytes)} in 7 versions"
    )
    assert dict(figure_lines(week))["Held by old versions"] == (
        f"{human_bytes(all_bytes)} ({human_bytes(0)} older than 7 days)"
    )

    now = hs.table_health(ns, T, hs.Thresholds(**lax, cleanup_keep_days=0))
    assert (now.cleanup_versions, now.cleanup_bytes) == (all_versions, all_bytes)
    (cleanup,) = [a for a in now.actions if a.kind == "cleanup"]
    assert cleanup.recommended
    assert cleanup.effect == (
        "removing the old versions (keeping the latest and tagged ones) frees "
        f"{human_bytes(all_bytes)} in 7 versions"
    )
    assert dict(figure_lines(now))["Held by old versions"] == human_bytes(all_bytes)


def test_the_cleanup_keeping_days_asks_lance_only_where_the_cut_falls_among_old_versions(
    local_root: Path,
) -> None:
    """Lance's dry run is read a second time only where some old versions are older than the
    cut and some newer (its commit times cannot be set, so those of the listing are moved
    here, on the crafted table's real dataset): all newer, nothing is removed; all older, the
    cleanup removes what keeping only the latest removes."""
    ns = backend.connect(str(local_root))
    path, _ = craft(ns)
    ds = lance.dataset(str(path))
    asked: list[dict] = []

    class Spy:
        def explain_cleanup_old_versions(self, **options):
            asked.append(options)
            return ds.explain_cleanup_old_versions(**options)

    listing = vsv.list_versions(ns, T)
    every = ds.explain_cleanup_old_versions(retain_versions=1, error_if_tagged_old_versions=False)
    fig = hs._Figures("local", old_versions=every.stats.old_versions)
    fig.old_version_bytes = every.stats.bytes_removed
    now = pd.Timestamp.now(tz="UTC")
    ages = {
        "recent": [0] * len(listing),
        "old": [0] + [10] * (len(listing) - 1),
        "mixed": [0, 0, 0] + [10] * (len(listing) - 3),
    }
    got = {}
    for name, days_ago in ages.items():
        moved = listing.assign(timestamp=[now - pd.Timedelta(days=d) for d in days_ago])
        got[name] = hs._cleanup_keeping_days(Spy(), moved, fig, 7)
    assert got["recent"] == (0, 0)
    assert got["old"] == (fig.old_versions, fig.old_version_bytes) == (7, every.stats.bytes_removed)
    assert got["mixed"] == (0, 0)  # lance's own answer: its versions are minutes old
    assert asked == [{"older_than": timedelta(days=7), "error_if_tagged_old_versions": False}]
    assert hs._cleanup_keeping_days(Spy(), listing, fig, 0) == got["old"]
    assert len(asked) == 1


def test_old_versions_against_the_latest_are_never_said_as_zero() -> None:
    said = hs.against_latest_text
    assert said(2.54) == "2.5× what the latest version holds"
    assert said(1.0) == "1.0× what the latest version holds"
    assert said(0.37) == "37% of what the latest version holds"
    assert said(0.018) == "2% of what the latest version holds"  # was "0.0×"
    assert said(0.004) == "under 1% of what the latest version holds"


def test_a_large_fragment_and_a_few_unindexed_rows_are_healthy(local_root: Path) -> None:
    """One fragment over the small threshold plus one small one: no compaction (fewer than
    two small fragments); 1,000 unindexed rows of 601,000: optimize is optional only. Then
    22% of the rows deleted: compaction recommended for the deletions."""
    ns = backend.connect(str(local_root))
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    big = hs.SMALL_FRAGMENT_ROWS + 75_712  # 600,000
    create_table(ns, T, pa.table({"id": pa.array(range(big), pa.int64())}))
    path = table_location(ns, T)
    ds = lance.dataset(str(path))
    ds.create_scalar_index("id", "BTREE", name="id_idx")
    lance.write_dataset(
        pa.table({"id": pa.array(range(big, big + 1000), pa.int64())}), str(path), mode="append"
    )
    got = hs.table_health(ns, T)
    ds = lance.dataset(str(path))
    assert [f.physical_rows for f in ds.get_fragments()] == [big, 1000]
    assert (got.fragments, got.small_fragments) == (2, 1)
    assert got.unindexed_rows == {"id_idx": 1000}
    optimize = [a for a in got.actions if a.kind == "optimize"]
    assert len(optimize) == 1 and not optimize[0].recommended  # 0.17% <= UNINDEXED_SHARE
    assert not [a for a in got.actions if a.kind == "compact"]
    assert got.verdict == hs.HEALTHY

    ds.delete(f"id < {int((big + 1000) * 0.22)}")
    got = hs.table_health(ns, T)
    compact = [a for a in got.actions if a.kind == "compact"]
    assert len(compact) == 1 and compact[0].recommended
    assert "deleted rows (22%)" in compact[0].reason
    assert got.deleted_rows == sum(
        f.metadata.deletion_file.num_deleted_rows
        for f in lance.dataset(str(path)).get_fragments()
        if f.metadata.deletion_file is not None
    )
    assert got.verdict == hs.NEEDS_ATTENTION


def test_namespace_health_gives_a_row_per_table_and_errors_in_their_column(ns) -> None:
    path, _ = craft(ns)
    create_table(ns, ["a", "x"], rows(0, 10))
    broken = table_location(ns, ["a", "x"])
    manifest_file(broken / "_versions", 1).write_bytes(b"not a manifest")
    ns.declare_table(DeclareTableRequest(id=["a", "d"]))
    frame = hs.namespace_health(ns, ["a"])
    assert list(frame.columns) == list(hs.NAMESPACE_COLUMNS)
    assert list(frame["table"]) == ["d", "t", "x"]
    by = frame.set_index("table")
    one = hs.table_health(ns, T)
    assert by.loc["t", "verdict"] == one.verdict == hs.NEEDS_ATTENTION
    assert by.loc["t", "fragments"] == len(lance.dataset(str(path)).get_fragments())
    assert by.loc["t", "unindexed_rows"] == 200
    assert by.loc["t", "versions"] == 8
    assert by.loc["t", "actions"].startswith("optimize, compact")
    assert by.loc["d", "verdict"] == hs.UNKNOWN and by.loc["d", "error"] is None
    assert by.loc["x", "verdict"] == hs.UNKNOWN and "a$x" in by.loc["x", "error"]
    assert frame.loc[frame["table"] != "t", "fragments"].isna().all()


def test_glance_judges_the_crafted_table_as_table_health_does_without_listing_versions(
    ns, monkeypatch
) -> None:
    """The tables list's health (``glance``, and ``table_stats.read_stats`` that carries it)
    on the crafted table: the same verdict and recommended actions as ``table_health``, its
    figures checked against lance itself, and no ListTableVersions."""
    from backend.services import table_stats as ts

    path, _ = craft(ns)
    full = hs.table_health(ns, T)
    listed: list[object] = []
    real = ns.list_table_versions
    monkeypatch.setattr(ns, "list_table_versions", lambda req: listed.append(req) or real(req))
    got = hs.glance(ns, T)
    memo = ts.VersionMemo()
    row = ts.read_stats(ns, T, memo)
    assert ts.read_stats(ns, T, memo) is row  # the same version: its health read once
    assert listed == []

    ds = lance.dataset(str(path))
    fragments = ds.get_fragments()
    physical = [f.metadata.physical_rows for f in fragments]
    assert got.verdict == full.verdict == hs.NEEDS_ATTENTION
    recommended = [(a.kind, a.reason, a.effect) for a in full.actions if a.recommended]
    assert [(a.kind, a.reason, a.effect) for a in got.actions] == recommended
    assert [k for k, _, _ in recommended] == ["optimize", "compact"]
    assert row.health == full.verdict and row.repairs == ("optimize", "compact")
    assert row.verdict == "optimize +1" and row.version == ds.version == 8
    assert got.versions is None and got.old_version_bytes is None  # read by table_health only
    assert got.unindexed_rows == full.unindexed_rows == {"id_idx": 200}
    if capabilities(ns).kind == "local":
        assert got.fragments == len(fragments) == 6
        assert got.small_fragments == sum(p < hs.SMALL_FRAGMENT_ROWS for p in physical) == 6
        assert got.physical_rows == sum(physical) == 1000
        assert got.rows == ds.count_rows() == 850
        assert (
            got.deleted_rows
            == sum(
                f.metadata.deletion_file.num_deleted_rows
                for f in fragments
                if f.metadata.deletion_file is not None
            )
            == 150
        )
        assert got.unindexed_rows == {
            "id_idx": ds.stats.index_stats("id_idx")["num_unindexed_rows"]
        }
        assert (got.compaction_tasks, got.compaction_fragments) == (
            full.compaction_tasks,
            full.compaction_fragments,
        )
        assert got.compaction_fragments and got.compaction_fragments > 0
    else:  # GetTableStats and the index stats, as table_health's REST branch reads them
        stats = ns.get_table_stats(GetTableStatsRequest(id=T))
        assert got.rows == stats.num_rows == full.rows
        assert got.fragments == stats.fragment_stats.num_fragments == len(fragments)
        assert got.small_fragments == stats.fragment_stats.num_small_fragments
        index = ns.describe_table_index_stats(
            DescribeTableIndexStatsRequest(id=T, index_name="id_idx")
        )
        assert got.unindexed_rows == {"id_idx": index.num_unindexed_rows}
        assert got.deleted_rows is None

    # maintained: healthy in the list as on the panel
    if capabilities(ns).kind == "local":
        ns.optimize_indexes(T)
        ns.compact_files(T)
    else:
        lance.dataset(str(path)).optimize.optimize_indices()
        lance.dataset(str(path)).optimize.compact_files()
    assert hs.glance(ns, T).verdict == hs.table_health(ns, T).verdict == hs.HEALTHY
    assert listed  # the counter sees table_health's listing
    assert ts.read_stats(ns, T, ts.VersionMemo()).verdict == "healthy"
    declared = ["a", "d"]
    ns.declare_table(DeclareTableRequest(id=declared))
    assert ts.read_stats(ns, declared, ts.VersionMemo()).verdict == "declared only"


def test_health_takes_the_unindexed_rows_of_an_overview_of_the_same_version(
    ns, monkeypatch
) -> None:
    """The Indexes page hands the health its index overview's unindexed rows (both of the
    latest version): the same health; over REST, without an index request of its own (the
    local health reads its figures from the manifest and ignores them)."""
    from backend.services import index_overview as ixs

    path, _ = craft(ns)
    overview = ixs.index_overview(ns, T, version=lance.dataset(str(path)).version)
    given = ixs.unindexed_by_name(overview)
    assert given == (
        ("id_idx", lance.dataset(str(path)).stats.index_stats("id_idx")["num_unindexed_rows"]),
    )
    assert given == (("id_idx", 200),)
    asked: list[str] = []
    for name in ("list_table_indices", "describe_table_index_stats"):
        real = getattr(ns, name)
        monkeypatch.setattr(
            ns, name, lambda req, real=real, name=name: asked.append(name) or real(req)
        )
    got = hs.table_health(ns, T, unindexed_rows=given)
    if capabilities(ns).kind == "rest":
        assert asked == []
        # what is given is what the health says, its verdict judged on it
        fewer = hs.table_health(ns, T, unindexed_rows=(("id_idx", 0),))
        assert fewer.unindexed_rows == {"id_idx": 0}
        assert "optimize" not in [a.kind for a in fewer.actions if a.recommended]
    monkeypatch.undo()
    assert got == hs.table_health(ns, T)
    assert got.unindexed_rows == {"id_idx": 200}


def test_indexes_missing_the_same_rows_are_said_per_index_never_summed(ns) -> None:
    """Two indexes brought up to date, then 40 rows appended: both miss the same 40 rows, and
    the optimize action says 40 rows to each of the 2 indexes (it said 80, a sum of rows
    counted once per index). A third index built before 30 more rows misses fewer; the
    effect then says the most any index misses. Each count is lance's own."""
    path, _ = craft(ns)
    lance.dataset(str(path)).optimize.optimize_indices()
    lance.dataset(str(path)).create_scalar_index("text", "INVERTED", name="text_idx")
    lance.write_dataset(rows(1000, 40), str(path), mode="append")

    def lance_counts(names: tuple[str, ...]) -> dict[str, int]:
        ds = lance.dataset(str(path))
        return {n: ds.stats.index_stats(n)["num_unindexed_rows"] for n in names}

    got = hs.table_health(ns, T)
    assert (
        got.unindexed_rows
        == lance_counts(("id_idx", "text_idx"))
        == {
            "id_idx": 40,
            "text_idx": 40,
        }
    )
    (optimize,) = [a for a in got.actions if a.kind == "optimize"]
    assert optimize.effect == "adds the 40 unindexed rows to each of the 2 indexes"

    lance.dataset(str(path)).create_scalar_index("id", "BITMAP", name="id_bitmap")
    lance.write_dataset(rows(1040, 30), str(path), mode="append")
    got = hs.table_health(ns, T)
    names = ("id_idx", "text_idx", "id_bitmap")
    assert got.unindexed_rows == lance_counts(names) == dict(zip(names, (70, 70, 30), strict=True))
    (optimize,) = [a for a in got.actions if a.kind == "optimize"]
    assert optimize.effect == "adds each index's unindexed rows to it (up to 70 rows per index)"


def test_counts_a_server_gives_that_cannot_all_be_true_are_not_known() -> None:
    """GetTableStats' 5 small fragments of 2, an index missing 1,000,000 rows of a 10-row
    table: neither is built on (it was "5 of 2 fragments are small", a compaction recommended,
    and an optimize "adding 1,000,000 rows"); each is not known, and a note says what the
    server counted. Counts that can be true are kept."""
    fig = hs._Figures("rest", rows=10, fragments=2, small_fragments=5)
    fig.unindexed_rows = {"a": 1_000_000, "b": 4, "c": None}
    hs._drop_impossible(fig)
    health = hs._health(["t"], fig, hs.Thresholds(compact_small_share=0.0, unindexed_share=0.0))
    assert health.small_fragments is None and health.fragments == 2
    assert health.unindexed_rows == {"a": None, "b": 4, "c": None}
    assert [a.kind for a in health.actions] == ["optimize"]  # for b's 4 rows only
    assert health.actions[0].effect == "adds the 4 unindexed rows to b"
    assert fig.notes == [
        "small fragments: not known (the server counted 5 small fragments of 2)",
        "unindexed rows of a: not known (the server counted 1,000,000 of 10 rows)",
    ]
