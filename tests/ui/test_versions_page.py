"""AppTest: "Versions" on a real local namespace (see tests/ui/conftest.py)."""

from __future__ import annotations

import backend
from backend import browse
from tests.ui.conftest import assert_no_exception, texts

ORDERS = {"ns": "sales", "table": "orders"}
EVENTS = {"ns": "logs", "table": "events"}


def widget(elements, prefix: str, suffix: str = ""):
    """The one widget whose key starts with ``prefix`` (keys end in a per-table hash)."""
    found = [e for e in elements if e.key and e.key.startswith(prefix) and e.key.endswith(suffix)]
    assert len(found) == 1, [e.key for e in elements]
    return found[0]


def version_grid(at):
    return next(d.value for d in at.dataframe if "operation" in d.value.columns)


def delete_form(at, ranges: str, confirm: str, *, n: int = 0) -> None:
    at.text_input(key=f"versions.delete{n}.ranges").input(ranges)
    at.text_input(key=f"versions.delete{n}.confirm").input(confirm)
    widget(at.button, f"FormSubmitter:versions.delete{n}.", "-Delete versions").click().run()


def test_lists_versions_newest_first_with_operations(make_app) -> None:
    at = make_app("versions", query_params=ORDERS)
    assert_no_exception(at)
    grid = version_grid(at)
    assert list(grid["version"]) == [3, 2, 1]
    assert list(grid["operation"]) == ["Delete", "Append", "Overwrite"]
    assert grid["manifest_size"].notna().all() and grid["e_tag"].notna().all()
    assert at.query_params.get("version") in ("3", ["3"])  # latest selected, deep-linked
    charts = at.get("vega_lite_chart")  # the timeline, drawn with Vega-Lite
    assert any(c.proto.spec for c in charts)
    assert not at.get("plotly_chart")  # no Plotly bundle on this page


def test_grid_is_sized_to_the_page() -> None:
    from components import versions as ver

    # (AppTest does not expose an element's height: the e2e test checks the rendered grid.)
    # 50 rows on a page: 20 rows + the header visible (not the default ~10 rows) ...
    assert ver.grid_height(browse.PAGE_SIZE) == 35 * 21 + 3
    # ... and a short page is exactly as tall as its rows.
    assert ver.grid_height(3) == 35 * 4 + 3
    assert ver.grid_height(0) == 35 * 2 + 3


def test_timeline_is_thinned_for_big_tables() -> None:
    import pandas as pd

    n = 10_000
    frame = pd.DataFrame(
        {
            "version": range(n, 0, -1),
            "timestamp": pd.date_range("2024-01-01", periods=n, freq="s")[::-1],
            "operation": ["(not loaded)"] * n,
        }
    )
    page = list(range(5_000, 4_950, -1))
    thin = browse.thin_timeline(frame, keep=page, max_points=2_000)
    assert len(thin) == 2_000 and thin.attrs["total"] == n
    versions = set(thin["version"])
    assert set(page) <= versions and {1, n} <= versions  # the page, the oldest, the newest
    gaps = pd.Series(sorted(versions)).diff().dropna()
    assert gaps.max() <= 6  # evenly spread over the whole range
    assert list(thin["version"]) == sorted(versions, reverse=True)  # order kept
    small = frame.head(30)
    assert len(browse.thin_timeline(small, keep=[1])) == 30


def test_table_picker_without_selection(make_app) -> None:
    at = make_app("versions")
    assert "Pick a table" in texts(at)


def test_paging_10k_style(make_app) -> None:
    at = make_app("versions", query_params=EVENTS)
    assert len(version_grid(at)) == 50
    pager = widget(at.pagination, "versions.page.")
    assert pager.num_pages == 2
    pager.set_value(2).run()
    grid = version_grid(at)
    assert list(grid["version"]) == list(range(10, 0, -1))
    assert "Versions 51–60 of 60" in texts(at)


def test_deep_link_version_and_details(make_app) -> None:
    at = make_app("versions", query_params={**ORDERS, "version": "2"})
    assert widget(at.number_input, "versions.selected.").value == 2
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Operation"] == "Append"


def test_compare_two_versions(make_app) -> None:
    at = make_app("versions", query_params=ORDERS)
    widget(at.number_input, "versions.cmp_a.").set_value(1)
    widget(at.number_input, "versions.cmp_b.").set_value(3)
    widget(at.button, "FormSubmitter:versions.compare.", "-Compare").click().run()
    assert_no_exception(at)
    summary = next(d.value for d in at.dataframe if "metric" in d.value.columns)
    rows = summary.set_index("metric")
    assert rows.loc["rows", "v1"] == "3" and rows.loc["rows", "v3"] == "4"
    assert rows.loc["rows", "change"] == "+1"
    assert "no changes between v1 and v3" in texts(at)


def test_delete_range_refuses_latest_then_deletes(make_app, ui_env) -> None:
    at = make_app("versions", query_params=ORDERS)
    ns = backend.connect(str(ui_env))

    delete_form(at, "2-3", "orders")
    assert any("latest version v3" in e.value for e in at.error)
    assert list(browse.list_versions(ns, ["sales", "orders"])["version"]) == [3, 2, 1]

    delete_form(at, "1", "order")  # wrong confirmation
    assert any("type `orders` exactly" in e.value for e in at.error)
    delete_form(at, "x-y", "orders")  # bad input
    assert any("not a version or range" in e.value for e in at.error)
    assert list(browse.list_versions(ns, ["sales", "orders"])["version"]) == [3, 2, 1]

    delete_form(at, "1", "orders")
    assert_no_exception(at)
    assert "Deleted 1 version(s) of sales › orders." in texts(at)
    assert list(browse.list_versions(ns, ["sales", "orders"])["version"]) == [3, 2]
    assert list(version_grid(at)["version"]) == [3, 2]


def test_declared_table_has_no_versions(make_app) -> None:
    at = make_app("versions", query_params={"ns": "sales", "table": "pending"})
    assert_no_exception(at)
    assert any("has no versions yet" in i.value for i in at.info)


def test_missing_namespace_in_link_is_readable(make_app) -> None:
    at = make_app("versions", query_params={"ns": "gone", "table": "x"})
    assert_no_exception(at)
    assert any("Namespace gone does not exist" in w.value for w in at.warning)
    at.button(key="versions.pick.reset").click().run()
    assert "Pick a table" in texts(at)
