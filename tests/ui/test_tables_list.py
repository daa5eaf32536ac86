"""AppTest: the tables list's figures (rows, size on disk, latest version, indexes, last
change, health), read in the background, sortable and filterable; checked against lance, the
files on disk and the table's own health (``backend.services.health.table_health``)."""

from __future__ import annotations

import json
import os
import re
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from lance_namespace import CreateNamespaceRequest, DeclareTableRequest, DescribeTableRequest

import backend
from backend.services import health as hs
from backend.text import human_bytes
from tests.support import create_table, data_bytes, table_location
from tests.ui.conftest import assert_no_exception, displayed, rest_target_rewritten, texts
from tests.ui.test_tables_page import table_grid


def filled(at, timeout: float = 30.0):
    """Rerun until no figure of the grid is pending; the grid's rows."""
    deadline = time.monotonic() + timeout
    while True:
        frame = table_grid(at).value
        if "pending" not in set(frame["state"]) or time.monotonic() > deadline:
            return frame
        time.sleep(0.1)
        at.run()


def folder_bytes(location: str) -> int:
    path = location.removeprefix("file://")
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def test_list_shows_each_tables_figures(make_app, ui_env: Path) -> None:
    at = make_app(query_params={"ns": "sales"})
    assert_no_exception(at)
    first = table_grid(at).value
    assert list(first.columns) == [
        "table", "rows", "size_bytes", "version", "indexes", "last_change", "health", "state",
    ]  # fmt: skip
    frame = filled(at).set_index("table")
    assert_no_exception(at)
    ns = backend.connect(str(ui_env))
    for name in ("orders", "customers"):
        location = ns.describe_table(DescribeTableRequest(id=["sales", name])).location
        ds = lance.dataset(location)
        row = frame.loc[name]
        assert row["rows"] == ds.count_rows()
        assert row["version"] == ds.version
        assert row["indexes"] == len(ds.describe_indices())
        assert row["size_bytes"] == folder_bytes(location)
        assert row["last_change"] == ds.versions()[-1]["timestamp"].astimezone(
            row["last_change"].tzinfo
        )
        assert row["state"] == ""
        full = hs.table_health(ns, ["sales", name])
        recommended = [a.kind for a in full.actions if a.recommended]
        assert row["health"] == (recommended[0] if recommended else full.verdict)
    assert frame.loc["orders", "rows"] == 4 and frame.loc["orders", "version"] == 3
    assert frame.loc["pending", "state"] == "declared only"
    # orders: two small fragments and 1 of 5 rows deleted; customers: one fragment
    assert (frame.loc["orders", "health"], frame.loc["customers", "health"]) == (
        "compact",
        "healthy",
    )
    assert frame.loc["pending", "health"] == "declared only"
    assert frame.loc["pending"].drop(["state", "health", "last_change"]).isna().all()
    assert "Reading the figures" not in texts(at)


def test_sort_by_a_figure_and_filter(make_app) -> None:
    at = make_app(query_params={"ns": "sales"})
    filled(at)
    at.selectbox(key="tables.sort").set_value("rows:desc").run()
    frame = filled(at)
    assert list(frame["table"]) == ["orders", "customers", "pending"]  # 4, 2, none
    at.selectbox(key="tables.sort").set_value("rows").run()
    assert list(filled(at)["table"]) == ["customers", "orders", "pending"]
    at.text_input(key="tables.search").input("ord").run()
    assert list(filled(at)["table"]) == ["orders"]
    assert_no_exception(at)


def test_figures_on_every_page_and_sorted_across_pages(make_app) -> None:
    """55 declared tables, 50 a page: every page gets its figures; a sort by a figure sorts
    all of them (declared ones have none: by name, after the others)."""
    at = make_app(query_params={"ns": "bulk"})
    frame = filled(at)
    assert len(frame) == 50 and set(frame["state"]) == {"declared only"}
    at.selectbox(key="tables.sort").set_value("version:desc").run()
    assert list(filled(at)["table"]) == [f"t{i:03d}" for i in range(50)]
    pager = next(p for p in at.pagination if p.key.startswith("tables.list.page."))
    pager.set_value(2).run()
    assert list(filled(at)["table"]) == [f"t{i:03d}" for i in range(50, 55)]
    assert_no_exception(at)


def test_figures_not_known_show_a_dash(make_app, ui_env) -> None:
    """A declared-only table has no figures: the grid draws "—" (as its detail panel does),
    not Streamlit's grey "None"; the figures stay numbers, so the grid sorts them as such."""
    at = make_app(query_params={"ns": "sales"})
    frame = filled(at).set_index("table")
    shown = displayed(table_grid(at)).set_index("table")
    figures = ["rows", "size_bytes", "version", "indexes", "last_change"]
    assert list(shown.loc["pending", figures]) == ["—"] * len(figures)
    assert shown.loc["pending", "state"] == "declared only"
    assert frame.loc["pending", figures].isna().all()
    for col in ("rows", "size_bytes", "version", "indexes"):
        assert str(frame[col].dtype) == "Int64", col
    ds = lance.dataset(
        backend.connect(str(ui_env))
        .describe_table(DescribeTableRequest(id=["sales", "orders"]))
        .location
    )
    assert shown.loc["orders", "rows"] == ds.count_rows()
    assert shown.loc["orders", "version"] == ds.version


def test_health_column_gives_each_tables_verdict(make_app, ui_env: Path) -> None:
    """A worn table (small fragments, deleted rows, rows its index misses) and a tidy one
    (one fragment, fully indexed): the Health column says what ``table_health`` recommends,
    the declared-only table has no verdict."""
    ns = backend.connect(str(ui_env))
    ns.create_namespace(CreateNamespaceRequest(id=["care"]))
    worn, tidy = ["care", "worn"], ["care", "tidy"]
    create_table(ns, worn, pa.table({"id": pa.array(range(100), pa.int64())}))
    path = str(table_location(ns, worn))
    for start in (100, 200, 300):
        lance.write_dataset(
            pa.table({"id": pa.array(range(start, start + 100))}), path, mode="append"
        )
    lance.dataset(path).delete("id < 60")
    lance.dataset(path).create_scalar_index("id", "BTREE", name="id_idx")
    lance.write_dataset(pa.table({"id": pa.array(range(400, 500))}), path, mode="append")
    create_table(ns, tidy, pa.table({"id": pa.array(range(500), pa.int64())}))
    lance.dataset(str(table_location(ns, tidy))).create_scalar_index("id", "BTREE")
    ns.declare_table(DeclareTableRequest(id=["care", "later"]))

    at = make_app(query_params={"ns": "care"})
    frame = filled(at).set_index("table")
    assert_no_exception(at)
    full = hs.table_health(ns, worn)
    assert full.verdict == hs.NEEDS_ATTENTION
    assert [a.kind for a in full.actions if a.recommended] == ["optimize", "compact"]
    assert frame.loc["worn", "health"] == "optimize +1"  # optimize and compact
    assert hs.table_health(ns, tidy).verdict == hs.HEALTHY
    assert frame.loc["tidy", "health"] == "healthy"
    assert frame.loc["later", "health"] == "declared only"
    config = json.loads(table_grid(at).proto.columns)
    assert config["health"]["label"] == "Health"
    assert "versions" in config["health"]["help"].lower()  # what it does not read, said


@pytest.mark.parametrize("kind", ["local", "rest"])
def test_rows_size_and_last_change_match_lance_on_both_backends(
    make_app, ui_env: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Rows, Size and Changed of the list against lance read directly: the live rows
    (``count_rows``; orders has a deleted row) on both backends; the size by the backend's
    definition, said in the column's help: locally every file under the table's folder, over
    REST (the real server on the same root) the latest version's data as GetTableStats counts
    it; the last change: locally the commit time in the latest manifest, over REST
    DescribeTableVersion's (pylance's server: the manifest file's time, to the millisecond),
    the same commit either way."""
    from tests.conftest import RestServer

    server = RestServer(ui_env) if kind == "rest" else None
    try:
        if server is not None:
            monkeypatch.setenv("LANCE_CONSOLE_TARGET", server.url)
        at = make_app(query_params={"ns": "sales"})
        frame = filled(at).set_index("table")
        assert_no_exception(at)
        shown = displayed(table_grid(at)).set_index("table")
        local = backend.connect(str(ui_env))
        for name in ("orders", "customers"):
            location = local.describe_table(DescribeTableRequest(id=["sales", name])).location
            ds = lance.dataset(location)
            assert frame.loc[name, "rows"] == ds.count_rows()
            size = folder_bytes(location) if server is None else data_bytes(ds)
            assert frame.loc[name, "size_bytes"] == size > 0
            # drawn in the one size form (powers of 1024), sorted as the number it is
            assert shown.loc[name, "size_bytes"] == human_bytes(size)
            committed = ds.versions()[-1]["timestamp"].astimezone(UTC)
            changed = frame.loc[name, "last_change"]
            if server is None:
                assert changed == committed
            else:
                assert changed == manifest_written(location, ds.version)
                assert abs(changed - committed) < timedelta(milliseconds=50)
        assert frame.loc["orders", "rows"] == 4  # 5 written, 1 deleted
        assert frame.loc["pending", ["rows", "size_bytes"]].isna().all()  # declared only
        help_text = json.loads(table_grid(at).proto.columns)["size_bytes"]["help"]
        assert ("GetTableStats" in help_text) == (server is not None)
        if server is not None:  # what the list says it shows: every figure, none n/a
            said = texts(at)
            assert "the last change (DescribeTableVersion)" in said
            assert not re.search(r"\bn/a\b", said)
    finally:
        if server is not None:
            server.stop()


def manifest_written(location: str, version: int) -> datetime:
    """When the manifest of ``version`` was written, to the millisecond (either naming)."""
    folder = Path(location.removeprefix("file://")) / "_versions"
    for name in (f"{2**64 - 1 - version}.manifest", f"{version}.manifest"):
        if (folder / name).exists():
            millis = (folder / name).stat().st_mtime_ns // 10**6
            return datetime.fromtimestamp(millis / 1000, tz=UTC)
    raise AssertionError(f"no manifest of version {version} in {folder}")


def test_health_unknown_when_the_server_gives_no_stats(
    make_app, ui_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A REST server whose GetTableStats answer lacks ``total_bytes`` (the client rejects
    it), played by a proxy in front of the real server: the health cannot be read, the
    Health column says "unknown"; Size is n/a (drawn "—", never 0); the rows are still
    counted (CountTableRows)."""

    def no_total_bytes(route: str, answer: dict) -> dict:
        answer.pop("total_bytes", None)
        return answer

    with rest_target_rewritten(ui_env, monkeypatch, {"/stats": no_total_bytes}):
        at = make_app(query_params={"ns": "sales"})
        frame = filled(at).set_index("table")
        assert_no_exception(at)
        assert list(frame.loc[["orders", "customers"], "health"]) == ["unknown", "unknown"]
        assert frame.loc["pending", "health"] == "declared only"
        assert frame.loc[["orders", "customers"], "size_bytes"].isna().all()
        shown = displayed(table_grid(at)).set_index("table")
        assert list(shown.loc[["orders", "customers"], "size_bytes"]) == ["—", "—"]
        assert frame.loc["orders", "rows"] == 4


def test_sort_by_health_worst_first(make_app, ui_env: Path) -> None:
    """Sorted by Health: the table with two recommended actions, then the one with one, then
    the healthy one, the declared-only one last (no verdict); descending: healthy first.
    The verdicts are those ``table_health`` gives each table."""
    ns = backend.connect(str(ui_env))
    ns.create_namespace(CreateNamespaceRequest(id=["care"]))
    worn, bumpy, tidy = ["care", "worn"], ["care", "bumpy"], ["care", "tidy"]
    create_table(ns, worn, pa.table({"id": pa.array(range(100), pa.int64())}))
    path = str(table_location(ns, worn))
    lance.write_dataset(pa.table({"id": pa.array(range(100, 200))}), path, mode="append")
    lance.dataset(path).create_scalar_index("id", "BTREE", name="id_idx")
    lance.write_dataset(pa.table({"id": pa.array(range(200, 300))}), path, mode="append")
    create_table(ns, bumpy, pa.table({"id": pa.array(range(10), pa.int64())}))
    lance.write_dataset(
        pa.table({"id": pa.array(range(10, 20))}), str(table_location(ns, bumpy)), mode="append"
    )
    create_table(ns, tidy, pa.table({"id": pa.array(range(50), pa.int64())}))
    ns.declare_table(DeclareTableRequest(id=["care", "later"]))
    recommended = {
        t[-1]: [a.kind for a in hs.table_health(ns, t).actions if a.recommended]
        for t in (worn, bumpy, tidy)
    }
    assert recommended == {"worn": ["optimize", "compact"], "bumpy": ["compact"], "tidy": []}

    at = make_app(query_params={"ns": "care"})
    filled(at)
    at.selectbox(key="tables.sort").set_value("health").run()
    frame = filled(at)
    assert list(frame["table"]) == ["worn", "bumpy", "tidy", "later"]
    assert list(frame["health"]) == ["optimize +1", "compact", "healthy", "declared only"]
    at.selectbox(key="tables.sort").set_value("health:desc").run()
    assert list(filled(at)["table"]) == ["tidy", "bumpy", "worn", "later"]
    assert_no_exception(at)


def test_a_declared_table_is_listed_with_its_figures_in_one_run(make_app, monkeypatch) -> None:
    """After a declare the list's new row is drawn with its figures ("declared only"): the
    page waits a moment for the few figures behind rather than drawing them pending and
    running again once they are in (the page ran twice for the click)."""
    from app import nav
    from components.tables import grid
    from tests.ui.test_tables_page import open_dialog

    monkeypatch.setattr(grid, "SETTLE_S", 10.0)  # the mechanism, not this machine's speed
    at = make_app(query_params={"ns": "sales"})
    filled(at)
    open_dialog(at, "declare")
    at.text_input(key="tables.declare0.name").input("fresh")
    runs: list[int] = []
    real = nav.render_frame
    monkeypatch.setattr(nav, "render_frame", lambda pages: runs.append(1) or real(pages))
    at.button(key="FormSubmitter:tables.declare0-Declare table").click().run()
    assert_no_exception(at)
    assert "Declared table sales › fresh." in texts(at)
    frame = table_grid(at).value.set_index("table")
    assert frame.loc["fresh", "state"] == frame.loc["fresh", "health"] == "declared only"
    assert "pending" not in set(frame["state"])
    assert "Reading the figures" not in texts(at)
    assert len(runs) == 1
