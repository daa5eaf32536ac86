"""The page benchmark's baselines (benchmarks/_ui_bench_app.py): the bare grid, and the same
grid inside the console's frame (app/nav.py). A baseline that drifted from what it stands for
would make every ratio of benchmarks/bench_ui_pages.py meaningless."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.nav import ROUTES
from components import state
from tests.ui.conftest import REPO, TIMEOUT

BENCH_APP = REPO / "benchmarks" / "_ui_bench_app.py"


def bench_app(ui_env: Path, monkeypatch: pytest.MonkeyPatch, **query: str) -> Any:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("BENCH_TARGET", str(ui_env))
    monkeypatch.setenv("BENCH_NS_TABLES", "bulk")
    monkeypatch.setenv("BENCH_NS_VERSIONS", "logs")
    monkeypatch.setenv("BENCH_TABLE_VERSIONS", "events")
    at = AppTest.from_file(str(BENCH_APP), default_timeout=TIMEOUT)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


@pytest.mark.parametrize(("view", "rows"), [("tables", 55), ("versions", 60)])
def test_bare_page_is_one_grid_of_every_row(
    ui_env: Path, monkeypatch: pytest.MonkeyPatch, view: str, rows: int
) -> None:
    at = bench_app(ui_env, monkeypatch, view=view)
    assert not at.exception
    assert len(at.dataframe) == 1
    assert len(at.dataframe[0].value) == rows
    assert len(at.main) == 1  # nothing but the grid
    assert len(at.sidebar) == 0


@pytest.mark.parametrize(("view", "first"), [("tables", "t000"), ("versions", 60)])
def test_bare_page_with_a_limit_is_the_first_page_only(
    ui_env: Path, monkeypatch: pytest.MonkeyPatch, view: str, first: Any
) -> None:
    """``&limit=N``: one page of N rows, the first the console's list shows (versions newest
    first)."""
    at = bench_app(ui_env, monkeypatch, view=view, limit="50")
    assert not at.exception
    (grid,) = at.dataframe
    assert len(grid.value) == 50 and grid.value.iloc[0, 0] == first


def test_frame_page_is_the_same_grid_inside_the_console_frame(
    ui_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = bench_app(ui_env, monkeypatch, view="tables", frame="1")
    assert not at.exception
    assert len(at.dataframe) == 1 and len(at.dataframe[0].value) == 55
    # The console's connection sidebar, on the console's connection.
    assert at.sidebar.selectbox(key=state.QP_CONN).label == "Connection"
    assert [t.label for t in at.sidebar.toggle] == ["Read-only"]
    assert str(ui_env) in " ".join(m.value for m in at.sidebar.markdown)


def test_every_route_has_its_own_path_and_an_existing_page_script() -> None:
    assert len({r.url_path for r in ROUTES}) == len(ROUTES)
    for route in ROUTES:
        assert (REPO / "app" / "views" / route.script).is_file(), route


def test_rows_with_figures_are_the_columns_of_the_consoles_list(
    ui_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``view=rows&figures=1`` (``--rows-figures``): each table's figures beside its name, the
    columns the console's tables list shows, with the values lance gives."""
    import lance
    from lance_namespace import DescribeTableRequest

    import backend

    monkeypatch.setenv("BENCH_NS_ROWS", "sales")
    at = bench_app(ui_env, monkeypatch, view="rows", figures="1")
    assert not at.exception
    (grid,) = at.dataframe
    frame = grid.value.set_index("table")
    assert list(frame.columns) == [
        "rows", "size_bytes", "version", "indexes", "last_change", "health",
    ]  # fmt: skip
    assert sorted(frame.index) == ["customers", "orders", "pending"]
    ns = backend.connect(str(ui_env))
    for name in ("customers", "orders"):
        ds = lance.dataset(ns.describe_table(DescribeTableRequest(id=["sales", name])).location)
        assert frame.loc[name, "rows"] == ds.count_rows()
        assert frame.loc[name, "version"] == ds.version
    assert frame.loc["pending"].drop(["health", "last_change"]).isna().all()  # declared only
