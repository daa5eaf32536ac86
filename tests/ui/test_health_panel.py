"""AppTest of the Health panel on the Indexes page (``components.health``): the figures shown
match lance's own count of the table, the recommended actions name their reasons, and after
the panel's Optimize indexes and Compact files the verdict is healthy; its three actions are
jobs, each offered by role (Clean up is an admin's), and with a Ray address given at launch a
compaction can run on Ray."""

from __future__ import annotations

import json

import lance
import pyarrow as pa
from lance_namespace import CreateTableRequest, DescribeTableRequest

import backend
from backend.services import branches, jobs
from backend.services import health as hs
from backend.text import human_bytes
from components import health, state
from components.indexes.tabs import TAB_CREATE
from tests.support import free_port, ipc_stream_bytes
from tests.ui.conftest import (
    alerts,
    app_as,
    assert_no_exception,
    button,
    open_page,
    plain,
    texts,
)

T = ["sales", "health"]
QP = {"ns": "sales", "table": "health"}


def rows(start: int, n: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64())})


def figures(at) -> dict[str, str]:
    for frame in at.dataframe:
        value = frame.value
        if list(value.columns) == ["figure", "value"]:
            return dict(zip(value["figure"], value["value"], strict=True))
    raise AssertionError("no health figures on the page")


def verdict(at) -> str:
    """The verdict line's words (after its icon)."""
    (line,) = [plain(m.value) for m in at.markdown if plain(m.value).startswith("**Health:**")]
    return line.rsplit(": ", 1)[-1].strip()


def run_task(at, label: str, ui_env) -> None:
    button(at, label).click().run()
    assert_no_exception(at)
    for job_id in at.session_state[state.Jobs.FOLLOWED]:
        jobs.wait(backend.connect(str(ui_env)), job_id, timeout=120)
    at.run()
    assert_no_exception(at)


def test_health_panel_shows_lance_figures_and_turns_healthy(ui_env, make_app) -> None:
    ns = backend.connect(str(ui_env))
    ns.create_table(CreateTableRequest(id=T), ipc_stream_bytes(rows(0, 300)))
    location = ns.describe_table(DescribeTableRequest(id=T)).location
    lance.write_dataset(rows(300, 100), location, mode="append")
    ds = lance.dataset(location)
    ds.delete("id < 40")
    ds.create_scalar_index("id", "BTREE", name="id_idx")
    lance.write_dataset(rows(400, 60), location, mode="append")

    at = make_app("indexes", query_params=QP)
    assert_no_exception(at)
    ds = lance.dataset(location)
    fragments = ds.get_fragments()
    physical = sum(f.physical_rows for f in fragments)
    shown = figures(at)
    (grid,) = [d for d in at.dataframe if list(d.value.columns) == ["figure", "value"]]
    config = json.loads(grid.proto.columns)
    assert (config["figure"]["label"], config["value"]["label"]) == ("Figure", "Value")
    assert shown["Rows"] == f"{ds.count_rows():,}" == "420"
    small = sum(f.physical_rows < hs.SMALL_FRAGMENT_ROWS for f in fragments)
    assert shown["Fragments"] == f"{len(fragments)} ({small} small)" == "3 (3 small)"
    deleted = physical - ds.count_rows()
    assert shown["Deleted rows"] == f"{deleted} ({deleted / physical:.1%})" == "40 (8.7%)"
    unindexed = ds.stats.index_stats("id_idx")["num_unindexed_rows"]
    assert shown["Unindexed rows"] == f"id_idx: {unindexed}" == "id_idx: 60"
    assert shown["Versions"] == str(len(ds.versions()))
    assert shown["Last compaction"] == "none seen"
    text = texts(at)
    assert verdict(at) == hs.NEEDS_ATTENTION
    assert "Recommended: Optimize indexes. Why: indexes miss rows: id_idx (60 rows)" in text
    assert "Recommended: Compact files. Why: 3 of 3 fragments are small" in text
    assert "Expected effect: the compaction plan rewrites" in text

    run_task(at, "Optimize indexes", ui_env)
    run_task(at, "Compact files", ui_env)
    ds = lance.dataset(location)
    shown = figures(at)
    assert shown["Fragments"] == f"{len(ds.get_fragments())} (1 small)" == "1 (1 small)"
    assert shown["Unindexed rows"] == "id_idx: 0"
    assert shown["Deleted rows"] == "0 (0.0%)"
    assert shown["Last compaction"].startswith(f"version {ds.version} (")
    text = texts(at)
    assert verdict(at) == hs.HEALTHY, text
    assert "Recommended:" not in text
    assert [plain(b.label) for b in at.button if plain(b.label) == "Compact files"]


def versioned_table(ui_env) -> str:
    """``sales$health``: 4 appends of 50 rows (4 versions, 4 small fragments), no index."""
    ns = backend.connect(str(ui_env))
    ns.create_table(CreateTableRequest(id=T), ipc_stream_bytes(rows(0, 50)))
    location = ns.describe_table(DescribeTableRequest(id=T)).location
    for i in range(1, 4):
        lance.write_dataset(rows(50 * i, 50), location, mode="append")
    return location


def test_the_panel_offers_its_three_actions_as_jobs_by_role(ui_env, roles) -> None:
    """Optimize indexes, Compact files and Clean up old versions on every table: without an
    index Optimize says why it is disabled, an editor may compact but not clean up (admins
    only); an admin's Clean up (keeping 0 days) is a cleanup job that leaves lance one
    version, and the panel tells what it deleted."""
    location = versioned_table(ui_env)
    maint = state.Indexes.MAINT
    editor = open_page(app_as("ed@example.com", query=QP), "indexes")
    assert_no_exception(editor)
    optimize, compact, cleanup = (editor.button(key=f"{maint}.{k}") for k in health.KINDS)
    assert optimize.disabled and optimize.help == "Disabled: the table has no index"
    assert not compact.disabled
    assert cleanup.disabled and "admins only" in cleanup.help
    assert "Disabled: the editor role may not delete data" in texts(editor)
    assert not [c for c in editor.checkbox if c.label.startswith("Run on Ray")]

    admin = open_page(app_as("ada@example.com", query=QP), "indexes")
    assert not admin.button(key=f"{maint}.cleanup").disabled
    versions_before = [v["version"] for v in lance.dataset(location).versions()]
    # the box keeps 7 days by default, and the health says what that cleanup frees (nothing:
    # every version is minutes old) and what keeping 0 days frees (checked below against the
    # bytes lance's cleanup removed)
    days_box = admin.number_input(key=f"{maint}.cleanup_days")
    assert days_box.value == hs.CLEANUP_KEEP_DAYS == 7
    said_before = texts(admin)
    assert (
        "Optional: Clean up old versions. Why: old versions hold " in said_before
        and "Expected effect: none is older than 7 days: a cleanup keeping them frees "
        "nothing; keeping 0 days frees "
        in said_before
    ), said_before
    held = figures(admin)["Held by old versions"]
    days_box.set_value(0).run()
    admin.button(key=f"{maint}.cleanup").click().run()
    assert_no_exception(admin)
    # the outcome is told once, by the run that first sees the job ended (the click's own
    # when the job was quick enough)
    shown = alerts(admin, "success")
    (job_id,) = admin.session_state[state.Jobs.FOLLOWED]
    ns = backend.connect(str(ui_env))
    job = jobs.wait(ns, job_id, timeout=120)
    assert (job.kind, job.params, job.state, job.who) == (
        "cleanup",
        {"older_than_days": 0},
        "succeeded",
        "ada@example.com",
    )
    ds = lance.dataset(location)
    assert [v["version"] for v in ds.versions()] == [versions_before[-1]] == [ds.version]
    assert job.result["deleted_versions"] == versions_before[:-1]
    freed = human_bytes(job.result["bytes_removed"])
    assert held == f"{freed} ({human_bytes(0)} older than 7 days)"
    assert f"keeping 0 days frees {freed} in {len(versions_before) - 1} versions" in said_before
    admin.run()
    assert_no_exception(admin)
    shown += alerts(admin, "success")
    (said,) = [a for a in shown if a.startswith("Clean up old versions")]
    assert said.startswith(f"Clean up old versions: deleted {len(versions_before) - 1} versions")


def test_run_on_ray_is_offered_only_with_a_ray_address(ui_env, make_app, monkeypatch) -> None:
    """With ``--ray-address`` the panel and the create form offer "Run on Ray (address)" (not
    on a branch); a compaction sent to an address that does not answer is a failed job whose
    error the panel shows, the table untouched. On a branch Clean up is not offered."""
    location = versioned_table(ui_env)
    branches.create_branch(backend.connect(str(ui_env)), T, "dev")
    address = f"127.0.0.1:{free_port()}"
    monkeypatch.setenv("LANCE_CONSOLE_RAY_ADDRESS", address)
    at = make_app("indexes", query_params=QP)
    assert_no_exception(at)
    ray = at.checkbox(key=f"{state.Indexes.MAINT}.ray")
    assert ray.label == f"Run on Ray ({address})" and not ray.disabled
    at.session_state[state.Indexes.TABS] = TAB_CREATE
    at.run()
    create = at.checkbox(key=f"{state.Indexes.CREATE}.ray")
    assert create.label == f"Run on Ray ({address})"
    before = lance.dataset(location)
    ray.check().run()
    button(at, "Compact files").click().run()
    assert_no_exception(at)
    (job_id,) = at.session_state[state.Jobs.FOLLOWED]
    job = jobs.wait(backend.connect(str(ui_env)), job_id, timeout=120)
    assert (job.executor, job.executor_options, job.state) == (
        "ray",
        {"ray_address": address},
        "failed",
    )
    at.run()
    assert_no_exception(at)
    shown = " ".join(e.value for e in at.exception) + texts(at) + " ".join(at.error.values)
    assert f"the Ray cluster at {address} does not answer" in shown
    after = lance.dataset(location)
    assert (after.version, len(after.get_fragments())) == (
        before.version,
        len(before.get_fragments()),
    )
    # on a branch: offered, disabled with the reason
    on_dev = make_app("indexes", query_params={**QP, "branch": "dev"})
    assert_no_exception(on_dev)
    ray = on_dev.checkbox(key=f"{state.Indexes.MAINT}.ray")
    assert ray.disabled and "Ray cannot act on branch dev" in ray.help
    cleanup = on_dev.button(key=f"{state.Indexes.MAINT}.cleanup")  # main's only, as on Versions
    assert cleanup.disabled and "not branch dev: pick main" in cleanup.help


def test_unindexed_rows_said_once_when_every_index_lags_alike() -> None:
    """The demo's five indexes all miss the same 57 rows: one count, not five names the cell
    cuts off; counts that differ (or are not known) keep each index's name."""
    from components.health import unindexed_text

    alike = {name: 57 for name in ("doc_fts", "kind_bitmap", "tags", "vec", "len_btree")}
    assert unindexed_text(alike) == "57 in each of its 5 indexes"
    assert unindexed_text({"b": 1200, "a": 0}) == "a: 0, b: 1,200"
    assert unindexed_text({"a": None, "b": None}) == "a: not known, b: not known"
    assert unindexed_text({"only": 60}) == "only: 60"
