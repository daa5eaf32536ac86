"""AppTest at a reduced catalog scale (``catalog_root``: 3,000 declared tables, a table of 3,000
versions): the tables list, the table picker and the Versions page read a page at a time and
fill figures only for what is on screen. Requests are counted by a wrapper over the real local
namespace's methods (every call still reaches pylance); nothing here is timed."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backend.local.namespace import LocalNamespace
from backend.spec.paging import PAGE_SIZE
from components import state
from tests.ui.conftest import (
    alerts,
    assert_no_exception,
    figures,
    new_app,
    open_page,
    texts,
    widget,
)
from tests.ui.test_tables_page import table_grid

NAMES = [f"t{i:05d}" for i in range(3_000)]
HIST = {"ns": "hist", "table": "t"}


class Calls:
    """The real methods of ``LocalNamespace`` named, counted: their requests (or table ids).
    Calls from a figures' fill of an earlier test (its ``table-stats`` thread, alive when
    counting began, may still be reading what that test showed) are not counted."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *names: str):
        self.seen: dict[str, list[Any]] = {n: [] for n in names}
        earlier = {t for t in threading.enumerate() if t.name == "table-stats"}
        for name in names:
            real = getattr(LocalNamespace, name)

            def counted(self_: Any, request: Any, *args: Any, _real=real, _name=name) -> Any:
                if threading.current_thread() not in earlier:
                    self.seen[_name].append(request)
                return _real(self_, request, *args)

            monkeypatch.setattr(LocalNamespace, name, counted)

    def __getitem__(self, name: str) -> list[Any]:
        return self.seen[name]


@pytest.fixture
def scale_app(catalog_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Factory: an AppTest of the console on ``catalog_root`` (only read), already run."""
    import streamlit as st

    monkeypatch.setenv("LANCE_CONSOLE_TARGET", str(catalog_root))
    monkeypatch.setenv("LANCE_CONSOLE_CONFIG", str(tmp_path / "connections.toml"))
    monkeypatch.delenv("LANCE_CONSOLE_READ_ONLY", raising=False)
    monkeypatch.chdir(tmp_path)
    st.cache_data.clear()
    st.cache_resource.clear()

    def factory(page: str | None = None, **query: str) -> Any:
        at = new_app()
        for key, value in query.items():
            at.query_params[key] = value
        at.run()
        if page:
            open_page(at, page)
        assert_no_exception(at)
        return at

    yield factory
    st.cache_data.clear()
    st.cache_resource.clear()


def read_ids(calls: Calls) -> set[str]:
    """The table names whose dataset the figures' fill opened."""
    return {tid[-1] for tid in calls["open_dataset"] if tid and tid[0] == "many"}


def settle(calls: Calls, timeout: float = 20.0) -> None:
    """Until the figures' fill stops opening tables."""
    deadline, before = time.monotonic() + timeout, -1
    while len(calls["open_dataset"]) != before and time.monotonic() < deadline:
        before = len(calls["open_dataset"])
        time.sleep(0.3)


def test_a_page_of_3000_tables_reads_one_request_and_its_figures(scale_app, monkeypatch) -> None:
    calls = Calls(monkeypatch, "list_tables", "open_dataset")
    at = scale_app(ns="many")
    assert list(table_grid(at).value["table"]) == NAMES[:PAGE_SIZE]
    (first,) = calls["list_tables"]
    assert first.limit == 1_000 and first.page_token is None  # one bounded request
    assert "1–50 of the first 1,000 tables listed; more follow" in texts(at)
    settle(calls)
    assert read_ids(calls) <= set(NAMES[:PAGE_SIZE])  # figures only for the page shown
    pager = widget(at.pagination, f"{state.Tables.LIST}.page.")
    assert pager.num_pages == 21  # the 20 pages read, and one more that may follow
    pager.set_value(21).run()
    assert list(table_grid(at).value["table"]) == NAMES[1_000:1_050]
    assert [(c.limit, c.page_token) for c in calls["list_tables"]] == [
        (1_000, None),
        (1_000, NAMES[999]),
    ]
    settle(calls)
    assert read_ids(calls) <= set(NAMES[:PAGE_SIZE] + NAMES[1_000:1_050])


def test_sorting_3000_tables_by_a_figure_orders_the_first_1000_and_says_so(
    scale_app, monkeypatch
) -> None:
    calls = Calls(monkeypatch, "list_tables", "open_dataset")
    at = scale_app(ns="many")
    at.selectbox(key=state.Tables.SORT).set_value("version").run()
    assert_no_exception(at)
    shown = texts(at)
    assert "among the first 1,000 tables by name (more follow): the order is partial" in shown
    assert all(c.limit is not None for c in calls["list_tables"])  # never every name
    settle(calls)
    assert read_ids(calls) <= set(NAMES[:1_000])  # figures of those only
    at.button(key=f"{state.Tables.LIST}.more").click().run()
    assert_no_exception(at)
    assert "among the first 2,000 tables by name (more follow)" in texts(at)
    settle(calls)
    assert read_ids(calls) <= set(NAMES[:2_000])


def test_a_search_of_3000_tables_reads_every_name_once(scale_app, monkeypatch) -> None:
    calls = Calls(monkeypatch, "list_tables")
    at = scale_app(ns="many")
    at.text_input(key=state.Tables.SEARCH).input("t0299*").run()
    assert list(table_grid(at).value["table"]) == NAMES[2_990:]
    assert "10 of 3,000 tables match" in texts(at)
    assert [c.limit for c in calls["list_tables"]] == [1_000, None]


def test_the_picker_of_3000_tables_offers_1000_and_finds_the_others(scale_app) -> None:
    at = scale_app("versions", ns="many")
    key = state.Versions.PICKER
    box = at.selectbox(key=f"{key}.table")
    assert list(box.options) == NAMES[:1_000]
    assert "The first 1,000 tables by name (more follow)" in texts(at)
    at.text_input(key=f"{key}.find").input("t0299").run()
    box = at.selectbox(key=f"{key}.table")
    assert list(box.options) == NAMES[2_990:]
    box.set_value("t02995").run()
    assert_no_exception(at)
    assert at.query_params["table"] == "t02995"
    at.text_input(key=f"{key}.find").input("").run()  # the table picked stays offered
    box = at.selectbox(key=f"{key}.table")
    assert box.value == "t02995" and len(box.options) == 1_001


def test_versions_page_of_3000_versions_reads_one_page(scale_app, monkeypatch) -> None:
    """One ListTableVersions for the list's page; the version shown is described from it (no
    DescribeTableVersion), one not read yet by that request."""
    calls = Calls(monkeypatch, "list_table_versions", "describe_table_version")
    at = scale_app("versions", **HIST)
    grid = next(d.value for d in at.dataframe if "operation" in d.value.columns)
    assert list(grid["version"]) == list(range(3_000, 2_950, -1))
    (first,) = calls["list_table_versions"]
    assert first.limit == 1_000 and first.descending
    metrics = figures(at)
    assert metrics["Versions"] == "1,000+" and metrics["Oldest"] == "—"
    assert metrics["Latest"] == "3000"
    # the version picker offers the list's page; another version is typed (or linked)
    assert at.selectbox(key=state.QP_VERSION).options == [str(v) for v in range(3_000, 2_950, -1)]
    assert calls["describe_table_version"] == []
    typed = scale_app("versions", **HIST, version="7")
    assert typed.selectbox(key=state.QP_VERSION).options[-1] == "7"
    assert figures(typed)["Version"] == "7" and figures(typed)["Operation"] == "UpdateConfig"
    assert [r.version for r in calls["describe_table_version"]] == [7]
    pager = widget(at.pagination, f"{state.Versions.LIST}.page.")
    pager.set_value(21).run()
    grid = next(d.value for d in at.dataframe if "operation" in d.value.columns)
    assert list(grid["version"]) == list(range(2_000, 1_950, -1))
    assert [(c.limit, c.page_token) for c in calls["list_table_versions"]] == [
        (1_000, None),
        (1_000, "v2000"),
    ]
    # the timeline reads every version once (one request), draws a bounded sample, says so
    at.session_state[state.Versions.TIMELINE_OPEN] = True
    at.run()
    assert_no_exception(at)
    assert calls["list_table_versions"][-1].limit is None
    assert len(calls["list_table_versions"]) == 3
    assert "Plotted 500 of 3,000 versions" in texts(at)
    at.run()  # the summary (above the timeline) counts them on the next run
    assert len(calls["list_table_versions"]) == 3
    metrics = figures(at)
    assert metrics["Versions"] == "3,000" and metrics["Oldest"] == "1"


def test_health_of_a_table_of_3000_versions_lists_no_version(
    scale_app, catalog_root: Path, monkeypatch
) -> None:
    """The tables list's Health column judges ``hist/t`` (3,000 versions) from its latest
    manifest: no ListTableVersions at all; the Health panel's full read (``table_health``) is
    the one that lists them."""
    import backend
    from backend.services import health as hs
    from tests.ui.test_tables_list import filled

    calls = Calls(monkeypatch, "list_table_versions", "open_dataset")
    at = scale_app(ns="hist")
    frame = filled(at).set_index("table")
    assert frame.loc["t", "health"] == "healthy" and frame.loc["t", "version"] == 3_000
    assert calls["list_table_versions"] == []
    assert ["hist", "t"] in [list(tid) for tid in calls["open_dataset"]]  # read by the fill
    full = hs.table_health(backend.connect(str(catalog_root)), ["hist", "t"])
    assert full.verdict == hs.HEALTHY and full.versions == 3_000
    assert len(calls["list_table_versions"]) >= 1  # the counter sees the full read's listing


def test_compare_on_3000_versions_reads_no_whole_history(scale_app, monkeypatch) -> None:
    """The Compare tab of a table of 3,000 versions: its forms start at the version before
    the one shown (from the list's page), a typed version off the page is looked up alone
    (one DescribeTableVersion), one beyond the latest is refused without a request; the
    whole history is never listed (the old tab read all 3,000 first)."""
    calls = Calls(monkeypatch, "list_table_versions", "describe_table_version")
    at = scale_app("versions", **HIST)
    at.session_state[state.Versions.MANAGE_OPEN] = True
    at.session_state[state.Versions.MANAGE_TAB] = "Compare"
    at.run()
    assert_no_exception(at)
    a = widget(at.number_input, "versions.compare.", ".a")
    assert (a.value, widget(at.number_input, "versions.compare.", ".b").value) == (2_999, 3_000)
    assert widget(at.number_input, "versions.row_changes.form.", ".a").value == 2_999
    a.set_value(7)
    widget(at.button, "FormSubmitter:versions.compare.", "-Compare").click().run()
    assert_no_exception(at)
    summary = next(d.value for d in at.dataframe if "metric" in d.value.columns)
    assert list(summary.columns) == ["metric", "v7", "v3000", "change"]
    assert [r.version for r in calls["describe_table_version"]] == [7]
    widget(at.number_input, "versions.compare.", ".a").set_value(3_001)
    widget(at.button, "FormSubmitter:versions.compare.", "-Compare").click().run()
    assert alerts(at, "error") == ["Version 3001 does not exist."]
    assert [r.version for r in calls["describe_table_version"]] == [7]
    assert [c.limit for c in calls["list_table_versions"]] == [1_000]  # the list's page only
