"""AppTest: "Versions" on a real local namespace (see tests/ui/conftest.py)."""

from __future__ import annotations

import json

import pandas as pd

import backend
from backend.paging import PAGE_SIZE
from backend.services import versions as vsv
from components import state
from tests.ui.conftest import alerts, assert_no_exception, texts, widget

ORDERS = {"ns": "sales", "table": "orders"}
EVENTS = {"ns": "logs", "table": "events"}


def version_grid(at):
    return next(d.value for d in at.dataframe if "operation" in d.value.columns)


def delete_form(at, ranges: str, confirm: str, *, n: int = 0) -> None:
    widget(at.text_input, f"versions.delete{n}.", ".ranges").input(ranges)
    widget(at.text_input, f"versions.delete{n}.", ".confirm").input(confirm)
    widget(at.button, f"FormSubmitter:versions.delete{n}.", "-Delete versions").click().run()
    assert_no_exception(at)


def listed(ui_env, table_id: list[str]) -> list[int]:
    return list(vsv.list_versions(backend.connect(str(ui_env)), table_id)["version"])


def timeline_spec(at) -> dict:
    """The timeline's Vega-Lite spec, after opening its expander (drawn only when open)."""
    if not [c for c in at.get("vega_lite_chart") if c.proto.spec]:
        at.session_state[state.Versions.TIMELINE_OPEN] = True
        at.run()
    (chart,) = [c for c in at.get("vega_lite_chart") if c.proto.spec]
    return json.loads(chart.proto.spec)


def test_lists_versions_newest_first_with_operations(make_app) -> None:
    at = make_app("versions", query_params=ORDERS)
    assert_no_exception(at)
    grid = version_grid(at)
    assert list(grid["version"]) == [3, 2, 1]
    assert list(grid["operation"]) == ["Delete", "Append", "Overwrite"]
    assert grid["manifest_size"].notna().all() and grid["manifest_path"].notna().all()
    assert {m.label: m.value for m in at.metric}["Versions"] == "3"
    assert at.number_input(key="version").value == 3  # the latest is picked
    assert not at.get("vega_lite_chart")  # the timeline is drawn only once opened
    assert timeline_spec(at)  # the timeline, drawn with Vega-Lite
    assert not at.get("plotly_chart")  # no Plotly bundle on this page


def test_timeline_axis_shows_milliseconds_within_a_minute(make_app) -> None:
    at = make_app("versions", query_params=ORDERS)  # three versions written within a second
    spec = timeline_spec(at)
    layers = spec.get("layer") or [spec]
    x_axes = [ly["encoding"]["x"]["axis"] for ly in layers if "x" in ly.get("encoding", {})]
    assert x_axes and all(a["format"] == "%H:%M:%S.%L" for a in x_axes)
    from components.versions import time_axis

    assert time_axis(59).to_dict()["format"] == "%H:%M:%S.%L"
    assert time_axis(3600).to_dict()["format"] == "%H:%M:%S"
    assert time_axis(3 * 86_400).to_dict()["format"] == "%b %d %H:%M"


def test_grid_is_sized_to_the_page() -> None:
    from components import versions as ver

    # (AppTest does not expose an element's height: the e2e test checks the rendered grid.)
    # 50 rows on a page: 20 rows + the header visible (not the default ~10 rows) ...
    assert ver.grid_height(PAGE_SIZE) == 35 * 21 + 3
    # ... and a short page is exactly as tall as its rows.
    assert ver.grid_height(3) == 35 * 4 + 3
    assert ver.grid_height(0) == 35 * 2 + 3


def test_timeline_is_thinned_for_big_tables() -> None:
    n = 10_000
    frame = pd.DataFrame(
        {
            "version": range(n, 0, -1),
            "timestamp": pd.date_range("2024-01-01", periods=n, freq="s")[::-1],
            "operation": ["(not loaded)"] * n,
        }
    )
    page = list(range(5_000, 4_950, -1))
    thin = vsv.thin_timeline(frame, keep=page, max_points=2_000)
    assert len(thin) == 2_000 and thin.attrs["total"] == n
    versions = set(thin["version"])
    assert set(page) <= versions and {1, n} <= versions  # the page, the oldest, the newest
    gaps = pd.Series(sorted(versions)).diff().dropna()
    assert gaps.max() <= 6  # evenly spread over the whole range
    assert list(thin["version"]) == sorted(versions, reverse=True)  # order kept
    small = frame.head(30)
    assert len(vsv.thin_timeline(small, keep=[1])) == 30


def test_table_picker_without_selection(make_app) -> None:
    at = make_app("versions")
    assert "Pick a table" in texts(at)


def test_paging(make_app) -> None:
    at = make_app("versions", query_params=EVENTS)
    assert list(version_grid(at)["version"]) == list(range(60, 10, -1))
    pager = widget(at.pagination, "versions.list.page.")
    assert pager.num_pages == 2
    pager.set_value(2).run()
    assert list(version_grid(at)["version"]) == list(range(10, 0, -1))
    assert "51–60 of 60 versions" in texts(at)


def test_version_picker_is_bound_to_the_url(make_app) -> None:
    at = make_app("versions", query_params={**ORDERS, "version": "2"})
    assert_no_exception(at)
    picker = at.number_input(key="version")
    assert picker.proto.query_param_key == "version"
    assert picker.value == 2
    assert {m.label: m.value for m in at.metric}["Operation"] == "Append"
    picker.set_value(1).run()
    assert {m.label: m.value for m in at.metric}["Operation"] == "Overwrite"


def test_picking_a_missing_version_warns(make_app) -> None:
    at = make_app("versions", query_params={**ORDERS, "version": "9"})
    assert_no_exception(at)
    assert alerts(at, "warning") == [
        "Version 9 does not exist (deleted, or never written); the latest is 3."
    ]


def test_compare_two_versions(make_app) -> None:
    at = make_app("versions", query_params=ORDERS)
    widget(at.number_input, "versions.compare.", ".a").set_value(1)
    widget(at.number_input, "versions.compare.", ".b").set_value(3)
    widget(at.button, "FormSubmitter:versions.compare.", "-Compare").click().run()
    assert_no_exception(at)
    summary = next(d.value for d in at.dataframe if "metric" in d.value.columns)
    rows = summary.set_index("metric")
    assert rows.loc["rows", "v1"] == "3" and rows.loc["rows", "v3"] == "4"
    assert rows.loc["rows", "change"] == "+1"
    assert "no changes between v1 and v3" in texts(at)


def test_delete_refuses_the_latest_version(make_app, ui_env) -> None:
    at = make_app("versions", query_params=ORDERS)
    delete_form(at, "2-3", "orders")  # inclusive: 3 is the latest
    (error,) = alerts(at, "error")
    assert error.startswith("Nothing deleted.") and "latest" in error
    assert listed(ui_env, ["sales", "orders"]) == [3, 2, 1]

    delete_form(at, "1", "order")  # wrong confirmation
    assert alerts(at, "error") == ["Nothing deleted: type orders exactly to confirm."]
    delete_form(at, "x-y", "orders")  # bad input
    (error,) = alerts(at, "error")
    assert error.startswith("Nothing deleted.")
    assert listed(ui_env, ["sales", "orders"]) == [3, 2, 1]


def test_delete_inclusive_range(make_app, ui_env) -> None:
    at = make_app("versions", query_params=EVENTS)
    delete_form(at, "2-3", "events")
    assert not at.error, alerts(at, "error")
    assert alerts(at, "success") == ["Deleted 2 versions of logs › events."]
    remaining = listed(ui_env, ["logs", "events"])
    assert 2 not in remaining and 3 not in remaining
    assert {1, 4, 60} <= set(remaining) and len(remaining) == 58
    assert {m.label: m.value for m in at.metric}["Versions"] == "58"  # read again
    assert any("batch_delete_table_versions" in c.value for c in at.code)  # copy as Python
    # the form was emptied (a new generation)
    assert widget(at.text_input, "versions.delete1.", ".ranges").value == ""


def test_delete_one_version_says_version(make_app, ui_env) -> None:
    at = make_app("versions", query_params=ORDERS)
    delete_form(at, "1", "orders")
    assert alerts(at, "success") == ["Deleted 1 version of sales › orders."]
    assert listed(ui_env, ["sales", "orders"]) == [3, 2]
    assert list(version_grid(at)["version"]) == [3, 2]


def test_declared_table_has_no_versions(make_app) -> None:
    at = make_app("versions", query_params={"ns": "sales", "table": "pending"})
    assert_no_exception(at)
    assert any("has no versions yet" in i for i in alerts(at, "info"))


def test_missing_namespace_in_link_is_readable(make_app) -> None:
    at = make_app("versions", query_params={"ns": "gone", "table": "x"})
    assert_no_exception(at)
    assert any("Namespace gone does not exist" in w for w in alerts(at, "warning"))
    at.button(key="versions.pick.reset").click().run()
    assert "Pick a table" in texts(at)
