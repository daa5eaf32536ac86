"""AppTest of the Health panel on the Indexes page (``components.health``): the figures shown
match lance's own count of the table, the recommended actions name their reasons, and after
the page's Optimize indexes and Compact files the verdict is healthy."""

from __future__ import annotations

import lance
import pyarrow as pa
from lance_namespace import CreateTableRequest, DescribeTableRequest

import backend
from backend.services import health as hs
from backend.services import jobs
from components import state
from tests.support import ipc_stream_bytes
from tests.ui.conftest import assert_no_exception, button, plain, texts

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
