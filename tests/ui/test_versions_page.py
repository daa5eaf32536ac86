"""AppTest: "Versions" on a real local namespace (see tests/ui/conftest.py)."""

from __future__ import annotations

import datetime
import json

import pandas as pd
import pytest

import backend
from backend.services import versions as vsv
from backend.spec.paging import PAGE_SIZE
from backend.text import human_bytes
from components import state
from tests.ui.conftest import alerts, assert_no_exception, figures, texts, widget

ORDERS = {"ns": "sales", "table": "orders"}
EVENTS = {"ns": "logs", "table": "events"}


def version_grid(at):
    return next(d.value for d in at.dataframe if "operation" in d.value.columns)


def open_tab(at, label: str) -> None:
    """Open the "Manage versions" panel at tab ``label`` (only the open tab is drawn)."""
    from components.versions.tabs import MANAGE_TABS

    assert label in MANAGE_TABS
    key, tab = state.Versions.MANAGE_OPEN, state.Versions.MANAGE_TAB
    if key in at.session_state and at.session_state[key] and at.session_state[tab] == label:
        return
    at.session_state[state.Versions.MANAGE_OPEN] = True
    at.session_state[state.Versions.MANAGE_TAB] = label
    at.run()
    assert_no_exception(at)


def delete_form(at, ranges: str, confirm: str, *, n: int = 0) -> None:
    open_tab(at, "Delete by range")
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


def timeline_versions(at) -> set[int]:
    """The versions the open timeline plots (its datasets, as the page sent them)."""
    import pyarrow as pa

    (chart,) = [c for c in at.get("vega_lite_chart") if c.proto.spec]
    found: set[int] = set()
    for dataset in chart.proto.datasets:
        table = pa.ipc.open_stream(dataset.data.data).read_all()
        if "version" in table.column_names:
            found |= {int(v) for v in table["version"].to_pylist()}
    return found


def test_lists_versions_newest_first_with_operations(make_app) -> None:
    at = make_app("versions", query_params=ORDERS)
    assert_no_exception(at)
    grid = version_grid(at)
    assert list(grid["version"]) == [3, 2, 1]
    assert list(grid["operation"]) == ["Delete", "Append", "Overwrite"]
    assert grid["manifest_size"].notna().all() and grid["manifest_path"].notna().all()
    assert figures(at)["Versions"] == "3"
    # a byte count drawn as every count (1,014), in the list and in the details
    proto = next(d.proto for d in at.dataframe if "manifest_size" in d.value.columns)
    assert json.loads(proto.columns)["manifest_size"]["type_config"]["format"] == "localized"
    assert figures(at)["Manifest bytes"] == f"{int(grid['manifest_size'][0]):,}"
    assert at.selectbox(key="version").value == 3  # the latest is picked
    assert not at.get("vega_lite_chart")  # the timeline is drawn only once opened
    assert timeline_spec(at)  # the timeline, drawn with Vega-Lite
    assert not at.get("plotly_chart")  # no Plotly bundle on this page


def test_timeline_axis_shows_milliseconds_within_a_minute(make_app) -> None:
    at = make_app("versions", query_params=ORDERS)  # three versions written within a second
    spec = timeline_spec(at)
    layers = spec.get("layer") or [spec]
    x_axes = [ly["encoding"]["x"]["axis"] for ly in layers if "x" in ly.get("encoding", {})]
    assert x_axes and all(a["format"] == "%H:%M:%S.%L" for a in x_axes)
    from backend.services.charts import time_axis

    assert time_axis(59).to_dict()["format"] == "%H:%M:%S.%L"
    assert time_axis(3600).to_dict()["format"] == "%H:%M:%S"
    assert time_axis(3 * 86_400).to_dict()["format"] == "%b %d %H:%M"


def test_grid_is_sized_to_the_page() -> None:
    from components.versions.listing import grid_height

    # (AppTest does not expose an element's height: the e2e test checks the rendered grid.)
    # 50 rows on a page: 20 rows + the header visible (not the default ~10 rows) ...
    assert grid_height(PAGE_SIZE) == 35 * 21 + 3
    # ... and a short page is exactly as tall as its rows.
    assert grid_height(3) == 35 * 4 + 3
    assert grid_height(0) == 35 * 2 + 3


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
    picker = at.selectbox(key="version")
    assert picker.proto.query_param_key == "version"
    assert picker.value == 2
    assert figures(at)["Operation"] == "Append"
    picker.set_value(1).run()
    assert figures(at)["Operation"] == "Overwrite"


def test_a_version_in_the_url_in_other_digits_is_no_version(make_app) -> None:
    """``?version=²`` (a digit to ``str.isdigit``, not to ``int``) and ``?version=١`` (another
    script's 1) are read as what they are, not version numbers: the page shows what it shows
    for ``?version=abc``, never an error."""
    shown = {}
    for typed in ("abc", "²", "١"):
        at = make_app("versions", query_params={**ORDERS, "version": typed})
        assert_no_exception(at)
        shown[typed] = alerts(at, "warning")
    assert shown["abc"] == ["abc is not a version number (1, 2, 3, …); the latest is 3."]
    assert shown["²"] == ["² is not a version number (1, 2, 3, …); the latest is 3."]
    assert shown["١"] == ["١ is not a version number (1, 2, 3, …); the latest is 3."]


def test_another_table_picked_shows_its_latest_not_the_version_in_the_url(make_app) -> None:
    """The version picked for one table is not carried to the next: ``?version=2`` of
    events, then sales/orders picked (which has a version 2 too) shows orders' latest, v3,
    and the URL says so."""
    at = make_app("versions", query_params={**EVENTS, "version": "2"})
    assert at.selectbox(key="version").value == 2
    at.selectbox(key=f"{state.Versions.PICKER}.ns").set_value(("sales",)).run()
    at.selectbox(key=f"{state.Versions.PICKER}.table").set_value("orders").run()
    assert_no_exception(at)
    assert at.selectbox(key="version").value == 3
    assert figures(at)["Operation"] == "Delete"
    assert at.query_params["table"] == "orders" and at.query_params["version"] == "3"


def test_version_details_say_when_it_was_created_as_the_list_does(make_app, ui_env) -> None:
    """The details' "Created" is the commit time the namespace gives (DescribeTableVersion's
    ``timestamp_millis``, read here through pylance's own DirectoryNamespace), in UTC to the
    millisecond: the format of the list's "Created (UTC)" column, not a raw ISO string."""
    from lance.namespace import DirectoryNamespace

    answer = DirectoryNamespace(root=str(ui_env)).describe_table_version(
        {"id": ["sales", "orders"], "version": 2}
    )
    millis = answer["version"]["timestamp_millis"]
    when = datetime.datetime.fromtimestamp(millis / 1000, tz=datetime.UTC)
    expected = f"{when:%Y-%m-%d %H:%M:%S}.{millis % 1000:03d} UTC"
    at = make_app("versions", query_params={**ORDERS, "version": "2"})
    assert_no_exception(at)
    assert f"Created {expected} · e-tag" in texts(at)


def test_a_version_pick_asks_the_backend_only_for_the_version_picked(
    make_app, ui_env, monkeypatch
) -> None:
    """A rerun of the page asks the backend nothing the run before it asked: a version picked
    on the list is described from the listing read already (DescribeTableVersion gives the
    same model), the table's versions are checked by a stamp of their directory (no catalog
    lookup), and the list's rows are not made again; a write to the table makes them
    again."""
    import inspect
    import os
    import threading

    import lance.namespace as pylance
    from lance_namespace import DescribeTableRequest

    from backend.local.namespace import LocalNamespace
    from backend.services import versions as versions_service

    calls: list[str] = []
    for cls in (LocalNamespace, pylance.DirectoryNamespace):  # every request, counted
        for name, method in inspect.getmembers(cls, inspect.isfunction):
            if name.startswith("_") or name in ("namespace_id", "format_id"):
                continue

            def counting(self, *args, _method=method, _name=f"{cls.__name__}.{name}", **kw):
                # the page's own calls: not those of an earlier test's job finishing late in
                # a thread of its own (the patch is on the class, for the whole process)
                if threading.current_thread().name == "ScriptRunner.scriptThread":
                    calls.append(_name)
                return _method(self, *args, **kw)

            monkeypatch.setattr(cls, name, counting)
    made: list[int] = []
    real_rows = versions_service.version_rows_frame

    def rows_frame(entries):
        made.append(1)
        return real_rows(entries)

    monkeypatch.setattr(versions_service, "version_rows_frame", rows_frame)
    ns = backend.connect(str(ui_env))
    location = ns.describe_table(DescribeTableRequest(id=["logs", "events"])).location
    versions_dir = location.removeprefix("file://") + "/_versions"
    settled = os.stat(versions_dir).st_mtime_ns - 60 * 10**9  # a stamp is taken when settled
    os.utime(versions_dir, ns=(settled, settled))
    at = make_app("versions", query_params=EVENTS)
    at.run()
    picker = at.selectbox(key="version")
    calls.clear(), made.clear()
    picker.set_value(59).run()
    assert_no_exception(at)
    shown = figures(at)
    assert calls == ["LocalNamespace.version_stamp"]
    described = vsv.describe_version(ns, ["logs", "events"], 59)
    assert (shown["Version"], shown["Manifest bytes"]) == ("59", f"{described['manifest_size']:,}")
    assert f"e-tag {described['e_tag']}" in texts(at)
    calls.clear()
    at.selectbox(key="version").set_value(60).run()
    assert figures(at)["Version"] == "60"
    assert calls == ["LocalNamespace.version_stamp"]
    assert made == [] and list(version_grid(at)["version"]) == list(range(60, 10, -1))
    delete_form(at, "2-3", "events")
    assert made and list(version_grid(at)["version"]) == list(range(60, 10, -1))


def test_picking_a_missing_version_warns(make_app) -> None:
    at = make_app("versions", query_params={**ORDERS, "version": "9"})
    assert_no_exception(at)
    assert alerts(at, "warning") == [
        "Version 9 does not exist (deleted, or never written); the latest is 3."
    ]


def test_a_typed_version_that_is_no_number_warns_and_shows_the_latest(make_app) -> None:
    at = make_app("versions", query_params={**ORDERS, "version": "v2x"})
    assert_no_exception(at)
    assert alerts(at, "warning") == ["v2x is not a version number (1, 2, 3, …); the latest is 3."]
    assert "Operation" not in figures(at)  # no version's details


def test_compare_two_versions(make_app) -> None:
    at = make_app("versions", query_params=ORDERS)
    open_tab(at, "Compare")
    widget(at.number_input, "versions.compare.", ".a").set_value(1)
    widget(at.number_input, "versions.compare.", ".b").set_value(3)
    widget(at.button, "FormSubmitter:versions.compare.", "-Compare").click().run()
    assert_no_exception(at)
    summary = next(d.value for d in at.dataframe if "metric" in d.value.columns)
    rows = summary.set_index("metric")
    assert rows.loc["rows", "v1"] == "3" and rows.loc["rows", "v3"] == "4"
    assert rows.loc["rows", "change"] == "+1"
    assert "no changes between v1 and v3" in texts(at)
    # headed in words; the versions' columns by their names
    proto = next(d.proto for d in at.dataframe if "metric" in d.value.columns)
    labels = [json.loads(proto.columns)[c]["label"] for c in summary.columns]
    assert labels == ["Metric", "v1", "v3", "Change"]


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
    assert figures(at)["Versions"] == "58"  # read again
    assert any("batch_delete_table_versions" in c.value for c in at.code)  # copy as Python
    # the form was emptied (a new generation)
    assert widget(at.text_input, "versions.delete1.", ".ranges").value == ""


def test_a_write_does_not_look_up_the_listed_versions_again(make_app, monkeypatch) -> None:
    """The operation and row count of a version never change: after a delete of old versions
    the page shows the same newest versions without asking for their transactions again
    (only the version shown below the list is described afresh)."""
    import lance

    from backend.local.namespace import LocalNamespace

    asked: list[int] = []
    real = LocalNamespace.describe_transaction
    real_read = lance.LanceDataset.read_transaction

    def counting(self, request):  # the real lookup, counted
        asked.append(int(request.id[-1]))
        return real(self, request)

    def counting_read(self, version):  # the local backend's read of a version's transaction
        asked.append(int(version))
        return real_read(self, version)

    monkeypatch.setattr(LocalNamespace, "describe_transaction", counting)
    monkeypatch.setattr(lance.LanceDataset, "read_transaction", counting_read)
    at = make_app("versions", query_params=EVENTS)
    assert set(asked) >= set(range(60, 10, -1))  # the first page, looked up once
    before = len(asked)
    delete_form(at, "2-3", "events")
    assert alerts(at, "success") == ["Deleted 2 versions of logs › events."]
    assert list(version_grid(at)["version"]) == list(range(60, 10, -1))
    assert set(version_grid(at)["operation"]) == {"Append"}
    assert set(asked[before:]) <= {60}  # the version shown below the list, no other


def test_delete_range_says_tagged_versions_and_refuses_them(make_app, ui_env) -> None:
    from backend.services import tags as tagsv

    ns = backend.connect(str(ui_env))
    tagsv.create_tag(ns, ["sales", "orders"], "baseline", 2)
    at = make_app("versions", query_params=ORDERS)
    open_tab(at, "Delete by range")
    # before anything is submitted: which listed versions are tagged
    assert "Tagged: v2 (baseline)." in texts(at)
    box = widget(at.checkbox, "versions.delete0.", ".tags")
    assert box.label == "Also delete the tags of tagged versions in the range"  # named above
    assert box.value is False
    delete_form(at, "1-2", "orders")
    (error,) = alerts(at, "error")
    assert error.startswith("Nothing deleted. Tagged versions are in the range: v2 (baseline).")
    assert listed(ui_env, ["sales", "orders"]) == [3, 2, 1]
    assert tagsv.tag_version(ns, ["sales", "orders"], "baseline") == 2
    delete_form(at, "1", "orders")  # an untagged version goes as before
    assert alerts(at, "success") == ["Deleted 1 version of sales › orders."]
    assert listed(ui_env, ["sales", "orders"]) == [3, 2]


def test_delete_range_with_its_tags_when_ticked(make_app, ui_env) -> None:
    from backend.services import tags as tagsv

    ns = backend.connect(str(ui_env))
    tagsv.create_tag(ns, ["sales", "orders"], "baseline", 2)
    tagsv.create_tag(ns, ["sales", "orders"], "latest-one", 3)
    at = make_app("versions", query_params=ORDERS)
    open_tab(at, "Delete by range")
    widget(at.checkbox, "versions.delete0.", ".tags").check()
    delete_form(at, "2", "orders")
    assert not at.error, alerts(at, "error")
    assert alerts(at, "success") == [
        "Deleted 1 version of sales › orders together with 1 tag: v2 (baseline)."
    ]
    assert listed(ui_env, ["sales", "orders"]) == [3, 1]
    tags = tagsv.list_tags(ns, ["sales", "orders"])
    assert dict(zip(tags["tag"], tags["version"], strict=True)) == {"latest-one": 3}


def test_a_delete_that_leaves_the_tags_does_not_list_them_again(
    make_app, ui_env, monkeypatch
) -> None:
    """A delete of untagged versions changes no tag: the page draws the tags it listed
    before without listing them again; a delete that takes a tag with it lists them again
    and shows the tag gone."""
    from backend.services import tags as tagsv

    tagsv.create_tag(backend.connect(str(ui_env)), ["sales", "orders"], "baseline", 2)
    listings: list[list[str]] = []
    real = tagsv.list_tags
    monkeypatch.setattr(
        tagsv, "list_tags", lambda ns, tid: listings.append(list(tid)) or real(ns, tid)
    )
    at = make_app("versions", query_params=ORDERS)
    open_tab(at, "Delete by range")
    assert listings == [["sales", "orders"]]
    delete_form(at, "1", "orders")
    assert alerts(at, "success") == ["Deleted 1 version of sales › orders."]
    assert listings == [["sales", "orders"]]  # not listed again
    assert "Tagged: v2 (baseline)." in texts(at)
    assert version_grid(at).set_index("version")["tags"].to_dict() == {3: "", 2: "baseline"}
    widget(at.checkbox, "versions.delete1.", ".tags").check()
    delete_form(at, "2", "orders", n=1)
    assert alerts(at, "success") == [
        "Deleted 1 version of sales › orders together with 1 tag: v2 (baseline)."
    ]
    assert len(listings) == 2  # listed again once
    assert not [t for t in texts(at) if t.startswith("Tagged:")]
    assert version_grid(at).set_index("version")["tags"].to_dict() == {3: ""}


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


# -- lifecycle: restore, time travel, tags, cleanup by policy ---------------------------------


def rows_at(ui_env, table_id: list[str], version: int | None = None) -> int:
    from lance_namespace import CountTableRowsRequest

    ns = backend.connect(str(ui_env))
    return int(ns.count_table_rows(CountTableRowsRequest(id=table_id, version=version)).count)


def open_panel(at, key: str) -> None:
    """Open a lazily drawn expander (its content exists only while it is open) and rerun."""
    if key not in at.session_state or not at.session_state[key]:
        at.session_state[key] = True
        at.run()
        assert_no_exception(at)


def restore(at, version: int, *, confirm: bool, n: int = 0) -> None:
    open_panel(at, state.Versions.RESTORE_OPEN)
    widget(at.checkbox, f"versions.restore{n}.", f".{version}.confirm").check() if confirm else None
    widget(at.button, f"FormSubmitter:versions.restore{n}.", f"-Restore v{version}").click().run()
    assert_no_exception(at)


def test_restore_needs_the_confirmation_and_makes_a_new_version(make_app, ui_env) -> None:
    at = make_app("versions", query_params={**ORDERS, "version": "1"})
    assert not at.checkbox  # drawn once "Restore this version" is opened
    restore(at, 1, confirm=False)
    assert "Restoring makes a new latest version, v4, whose content is v1's." in texts(at)
    assert alerts(at, "error") == ["Not restored: tick the box to confirm v4 from v1."]
    assert listed(ui_env, ["sales", "orders"]) == [3, 2, 1]

    restore(at, 1, confirm=True)
    assert alerts(at, "success") == ["Restored v1 of sales › orders as v4, the new latest version."]
    assert listed(ui_env, ["sales", "orders"]) == [4, 3, 2, 1]
    assert rows_at(ui_env, ["sales", "orders"]) == rows_at(ui_env, ["sales", "orders"], 1) == 3
    assert at.selectbox(key="version").value == 4  # the new version is opened
    assert figures(at)["Latest"] == "4"
    assert "Restore this version" not in [e.label for e in at.expander]  # the latest: none
    assert not [
        b for b in at.button if b.key and b.key.startswith("FormSubmitter:versions.restore")
    ]


def test_browse_the_data_opens_the_preview_at_that_version(make_app) -> None:
    at = make_app("versions", query_params={**ORDERS, "version": "1"})
    from components.version_actions.links import search_link_params

    assert search_link_params(["sales", "orders"]) == [
        ("ns", "sales"), ("table", "orders"), ("tab", "preview"),
    ]  # fmt: skip
    at.button(key="versions.browse").click().run()
    assert_no_exception(at)
    assert "Search & tune" in [t.value for t in at.title]
    # Search & tune's preview reads v1 (3 rows, id 1 still there), not the latest.
    assert at.number_input(key="version").value == 1
    assert "3 rows match · rows 1–3 · version 1" in texts(at)
    grid = next(d.value for d in at.dataframe if "item" in d.value.columns)
    assert sorted(grid["id"]) == [1, 2, 3]


def tag_form(at, form: str, *, n: int = 0, **fields) -> None:
    open_tab(at, "Tags")
    for name, value in fields.items():
        field = widget(getattr(at, "text_input" if name != "tag" else "selectbox"),
                       f"versions.tags{n}.", f".{form}.{name}")  # fmt: skip
        field.set_value(value) if name == "tag" else field.input(value)
    label = {"create": "-Tag v", "move": "-Move to v", "delete": "-Delete tag"}[form]
    found = [b for b in at.button if b.key and b.key.startswith(f"FormSubmitter:versions.tags{n}.")
             and f".{form}{label}" in b.key]  # fmt: skip
    assert len(found) == 1, [b.key for b in at.button]
    found[0].click().run()
    assert_no_exception(at)


def test_confirmation_boxes_are_empty_without_placeholder(make_app, ui_env) -> None:
    """A confirmation box showing the name to type as its placeholder looks filled in."""
    from backend.services import tags as tagsv

    tagsv.create_tag(backend.connect(str(ui_env)), ["sales", "orders"], "gold", 2)
    at = make_app("versions", query_params=ORDERS)
    open_tab(at, "Tags")
    confirm = widget(at.text_input, "versions.tags0.", ".delete.confirm")
    assert confirm.value == "" and confirm.proto.placeholder == ""
    pick = widget(at.selectbox, "versions.tags0.", ".delete.tag")
    assert pick.value is None and pick.proto.placeholder == "pick one of 1 tag"
    by_tag = at.selectbox(key=state.Versions.OPEN_BY_TAG)  # one tag, said in the singular
    assert by_tag.value is None and by_tag.proto.placeholder == "pick one of 1 tag"
    open_tab(at, "Delete by range")
    confirm = widget(at.text_input, "versions.delete0.", ".confirm")
    assert confirm.value == "" and confirm.proto.placeholder == ""


def tag_grid(at) -> dict[str, int]:
    grids = [d.value for d in at.dataframe if list(d.value.columns) == ["tag", "version"]]
    return dict(zip(grids[0]["tag"], grids[0]["version"], strict=True)) if grids else {}


def test_tags_create_move_delete(make_app, ui_env) -> None:
    from backend.services import tags as tagsv

    at = make_app("versions", query_params={**ORDERS, "version": "2"})
    open_tab(at, "Tags")
    assert "No tags yet." in texts(at)
    tag_form(at, "create", name="bad name")
    (error,) = alerts(at, "error")
    assert error.startswith("Not tagged. The tag name 'bad name' is not valid")
    tag_form(at, "create", name="gold")
    assert alerts(at, "success") == ["Tagged v2 of sales › orders as gold."]
    assert tag_grid(at) == {"gold": 2}
    assert "v2 is tagged gold." in texts(at)
    tag_form(at, "create", n=1, name="gold")
    assert alerts(at, "error") == ["Not tagged. Tag gold already exists (on v2): move it instead."]

    at.selectbox(key="version").set_value(1).run()
    tag_form(at, "move", n=1, tag="gold")
    assert alerts(at, "success") == ["Moved tag gold of sales › orders to v1."]
    assert tag_grid(at) == {"gold": 1}

    tag_form(at, "delete", n=2, tag="gold", confirm="gol")
    assert alerts(at, "error") == ["Not deleted: type gold exactly to confirm."]
    tag_form(at, "delete", n=2, tag="gold", confirm="gold")
    assert alerts(at, "success") == ["Deleted tag gold of sales › orders; its version stays."]
    assert tag_grid(at) == {}
    ns = backend.connect(str(ui_env))
    assert tagsv.list_tags(ns, ["sales", "orders"]).empty
    assert listed(ui_env, ["sales", "orders"]) == [3, 2, 1]


@pytest.mark.parametrize("name", ["1", "v7", "latest"])
def test_a_tag_named_like_a_version_is_warned_of_first(make_app, ui_env, name) -> None:
    at = make_app("versions", query_params={**ORDERS, "version": "2"})
    tag_form(at, "create", name=name)
    (warning,) = alerts(at, "warning")
    assert warning.startswith(f"Not tagged yet: the tag {name} ") and "again" in warning
    assert tag_grid(at) == {}
    tag_form(at, "create", name=name)  # the same name again: created
    assert alerts(at, "success") == [f"Tagged v2 of sales › orders as {name}."]
    assert tag_grid(at) == {name: 2}


def test_tag_link_opens_its_version_and_unknown_tag_warns(make_app, ui_env) -> None:
    from backend.services import tags as tagsv

    tagsv.create_tag(backend.connect(str(ui_env)), ["sales", "orders"], "gold", 2)
    at = make_app("versions", query_params={**ORDERS, "tag": "gold"})
    assert_no_exception(at)
    assert at.selectbox(key="version").value == 2
    # The link opens the Tags tab, which says the version shown is tagged.
    assert at.session_state[state.Versions.MANAGE_TAB] == "Tags"
    assert "v2 is tagged gold." in texts(at)
    assert figures(at)["Operation"] == "Append"
    at.run()  # a rerun keeps it
    assert at.selectbox(key="version").value == 2
    at.selectbox(key="version").set_value(3).run()  # a pick of the user's wins
    assert figures(at)["Operation"] == "Delete"
    assert "tag" not in at.query_params  # the URL names the version shown, not the tag

    at = make_app("versions", query_params={**ORDERS, "tag": "nope"})
    assert_no_exception(at)
    assert alerts(at, "warning") == [
        "The link's tag nope does not exist on sales › orders (deleted, or never made)."
    ]
    assert at.selectbox(key="version").value == 3  # the latest, as without the link
    assert "tag" not in at.query_params  # said once: the link leaves the URL
    at.run()
    assert not alerts(at, "warning")


def cleanup(at, *, keep: int | None = None, days: int | None = None, n: int = 0) -> None:
    open_tab(at, "Clean up by policy")
    if keep is not None:
        widget(at.number_input, f"versions.cleanup{n}.", ".keep").set_value(keep)
    if days is not None:
        widget(at.number_input, f"versions.cleanup{n}.", ".days").set_value(days)
    widget(at.button, f"FormSubmitter:versions.cleanup{n}.", ".policy-Dry run").click().run()
    assert_no_exception(at)


def test_cleanup_by_policy_dry_run_then_delete(make_app, ui_env) -> None:
    from backend.services import tags as tagsv

    tagsv.create_tag(backend.connect(str(ui_env)), ["logs", "events"], "keep-me", 5)
    at = make_app("versions", query_params=EVENTS)
    cleanup(at)  # no policy
    (error,) = alerts(at, "error")
    assert "a cleanup policy needs keep_last, older_than or both" in error
    cleanup(at, keep=10)
    (info,) = alerts(at, "info")
    assert info == (
        "Dry run (keep the newest 10; never the latest or a tagged version): deletes 49 "
        "versions (1-4, 6-50), keeps 11 versions. Kept because tagged: v5 (keep-me)."
    )
    plan = next(d.value for d in at.dataframe if "fate" in d.value.columns)
    fates = dict(zip(plan["version"], plan["fate"], strict=True))
    assert fates[60] == "kept: latest" and fates[51] == "kept: policy"
    assert fates[5] == "kept: tagged keep-me" and fates[50] == fates[1] == "to delete"
    assert listed(ui_env, ["logs", "events"]) == list(range(60, 0, -1))  # a dry run deletes nothing

    delete = widget(at.button, "FormSubmitter:versions.cleanup0.", ".run-Delete 49 versions")
    widget(at.text_input, "versions.cleanup0.", ".run.confirm").input("event")
    delete.click().run()
    assert alerts(at, "error") == ["Nothing deleted: type events exactly to confirm."]
    widget(at.text_input, "versions.cleanup0.", ".run.confirm").input("events")
    before = {p: p.stat().st_size for p in ui_env.rglob("*") if p.is_file()}
    widget(at.button, "FormSubmitter:versions.cleanup0.", ".run-Delete 49 versions").click().run()
    assert_no_exception(at)
    gone = [p for p in before if not p.exists()]  # the manifests and the files only they read
    assert alerts(at, "success") == [
        "Deleted 49 versions of logs › events (1-4, 6-50; keep the newest 10; never the latest "
        f"or a tagged version), freeing {human_bytes(sum(before[p] for p in gone))} "
        f"({len(gone)} files)."
    ]
    assert listed(ui_env, ["logs", "events"]) == [*range(60, 50, -1), 5]
    assert figures(at)["Versions"] == "11"
    assert not [d for d in at.dataframe if "fate" in d.value.columns]  # the plan was used up


def test_cleanup_by_age_keeps_young_versions(make_app, ui_env) -> None:
    at = make_app("versions", query_params=ORDERS)
    cleanup(at, days=1)  # every version was written seconds ago
    (info,) = alerts(at, "info")
    assert "deletes nothing" in info
    assert not [b for b in at.button if b.key and ".run-Delete" in b.key]


def test_read_only_disables_the_lifecycle_writes(make_app, ui_env) -> None:
    from backend.services import tags as tagsv

    tagsv.create_tag(backend.connect(str(ui_env)), ["sales", "orders"], "gold", 2)
    from components.versions.tabs import MANAGE_TABS

    at = make_app("versions", query_params={**ORDERS, "version": "1", "ro": "true"})
    at.session_state[state.Versions.RESTORE_OPEN] = True
    by_label = {}
    for tab in MANAGE_TABS:  # one tab drawn at a time
        open_tab(at, tab)
        writes = [b for b in at.button if b.key and b.key.startswith("FormSubmitter:versions.")]
        by_label.update({b.key.rsplit("-", 1)[-1]: b.disabled for b in writes})
    for label in ("Restore v1", "Tag v1", "Move to v1", "Delete tag", "Delete versions"):
        assert by_label[label] is True, label
    assert by_label["Dry run"] is False and by_label["Compare"] is False  # reads stay


def test_manage_panels_and_json_are_drawn_only_when_opened(make_app) -> None:
    at = make_app("versions", query_params=ORDERS)
    forms = lambda: sorted({b.key.split(".")[1] for b in at.button  # noqa: E731
                            if b.key and b.key.startswith("FormSubmitter:versions.")})  # fmt: skip
    assert forms() == []  # closed: no compare, tag, cleanup or delete form on a page load
    assert not at.json  # the transaction viewer too: its component is heavy to load
    open_tab(at, "Compare")
    assert forms() == ["compare", "row_changes"]  # one tab at a time: its two forms
    open_tab(at, "Tags")
    assert forms() == ["tags0"]
    at.session_state["versions.one.txn.open"] = True
    at.run()
    (txn,) = at.json
    assert json.loads(txn.value)["operation"] == "Delete"


def test_listing_is_kept_until_the_latest_version_changes(make_app, ui_env, monkeypatch) -> None:
    import lance
    import pyarrow as pa
    from lance_namespace import DescribeTableRequest

    from backend.local.namespace import LocalNamespace

    calls = []
    real = LocalNamespace.list_table_versions

    def counting(self, request):  # the real listing, counted
        calls.append(request)
        return real(self, request)

    monkeypatch.setattr(LocalNamespace, "list_table_versions", counting)
    at = make_app("versions", query_params=ORDERS)
    assert figures(at)["Versions"] == "3"
    seen = len(calls)
    assert seen == 1  # one page of the list
    at.run()
    at.run()
    assert len(calls) == seen  # reruns reuse the listing
    ns = backend.connect(str(ui_env))
    location = ns.describe_table(DescribeTableRequest(id=["sales", "orders"])).location
    lance.write_dataset(pa.table({"id": [9], "item": ["x"]}), location, mode="append")
    at.run()  # the table's _versions changed: its latest version is read again at once
    assert figures(at)["Versions"] == "4"  # another writer's commit
    assert len(calls) == seen + 1


def test_every_version_is_read_once_then_only_the_new_ones(make_app, ui_env, monkeypatch) -> None:
    """The timeline's index of every version is read whole once; another writer's commit
    then costs a page of the newest versions, not the whole history again."""
    import lance
    import pyarrow as pa
    from lance_namespace import DescribeTableRequest

    from backend.local.namespace import LocalNamespace

    calls = []
    real = LocalNamespace.list_table_versions
    monkeypatch.setattr(
        LocalNamespace, "list_table_versions", lambda self, r: calls.append(r) or real(self, r)
    )
    at = make_app("versions", query_params=EVENTS)
    at.session_state[state.Versions.TIMELINE_OPEN] = True
    at.run()
    assert_no_exception(at)
    assert [c.limit for c in calls] == [1_000, None]  # the newest page, then every version
    location = (
        backend.connect(str(ui_env))
        .describe_table(DescribeTableRequest(id=["logs", "events"]))
        .location
    )
    lance.write_dataset(pa.table({"n": [60]}), location, mode="append")
    at.run()
    assert_no_exception(at)
    assert [c.limit for c in calls[2:]] == [1_000, 1_000]  # the list's page, the index's
    assert timeline_versions(at) == set(range(1, 62))  # the new one plotted too
    assert len(calls) == 4


# -- the list's Tags and Rows columns, a row picked, "Open by tag" -----------------------------


def click_version_row(at, version: int) -> None:
    """What the browser sends when a row of the versions list is clicked: the grid's new
    selection as its widget state (AppTest cannot click a grid), then a run."""
    grid = next(d for d in at.dataframe if d.key == state.Versions.GRID)
    row = list(grid.value["version"]).index(version)
    states = at._tree.get_widget_states()
    kept = [w for w in states.widgets if w.id != grid.proto.id]
    del states.widgets[:]
    states.widgets.extend(kept)
    mine = states.widgets.add()
    mine.id = grid.proto.id
    mine.string_value = json.dumps({"selection": {"rows": [row], "columns": [], "cells": []}})
    at._run(states)
    assert_no_exception(at)


def selected_rows(at) -> list[int]:
    """The versions the list shows as selected."""
    grid = next(d for d in at.dataframe if d.key == state.Versions.GRID)
    chosen = at.session_state[state.Versions.GRID]["selection"]["rows"]
    return [int(grid.value["version"].iloc[i]) for i in chosen]


def test_list_shows_tags_and_rows_of_each_version(make_app, ui_env) -> None:
    from backend.services import tags as tagsv

    ns = backend.connect(str(ui_env))
    tagsv.create_tag(ns, ["sales", "orders"], "gold", 2)
    tagsv.create_tag(ns, ["sales", "orders"], "audit", 2)
    tagsv.create_tag(ns, ["sales", "orders"], "first", 1)
    at = make_app("versions", query_params=ORDERS)
    assert_no_exception(at)
    grid = version_grid(at)
    assert list(grid.columns[:4]) == ["version", "operation", "tags", "rows"]
    by_version = grid.set_index("version")
    # v1 3 rows, v2 appends 2, v3 deletes 1 (tests/ui/conftest.py)
    assert by_version["rows"].to_dict() == {3: 4, 2: 5, 1: 3}
    assert by_version["tags"].to_dict() == {3: "", 2: "audit, gold", 1: "first"}


def test_clicking_a_row_opens_that_version(make_app) -> None:
    at = make_app("versions", query_params=ORDERS)
    assert at.selectbox(key="version").value == 3
    assert selected_rows(at) == [3]  # the version shown is the row selected
    click_version_row(at, 1)
    assert at.selectbox(key="version").value == 1
    assert figures(at)["Operation"] == "Overwrite"
    assert selected_rows(at) == [1]
    at.run()  # a rerun keeps it
    assert at.selectbox(key="version").value == 1
    # the picker and the list stay in step the other way too
    at.selectbox(key="version").set_value(2).run()
    assert selected_rows(at) == [2]
    assert figures(at)["Operation"] == "Append"


def test_open_by_tag_opens_its_version(make_app, ui_env) -> None:
    from backend.services import tags as tagsv

    ns = backend.connect(str(ui_env))
    tagsv.create_tag(ns, ["sales", "orders"], "gold", 1)
    tagsv.create_tag(ns, ["sales", "orders"], "silver", 2)
    at = make_app("versions", query_params=ORDERS)
    pick = at.selectbox(key=state.Versions.OPEN_BY_TAG)
    assert pick.options == ["gold (v1)", "silver (v2)"] and pick.value is None
    pick.set_value("gold").run()
    assert_no_exception(at)
    assert at.selectbox(key="version").value == 1
    assert selected_rows(at) == [1]
    assert figures(at)["Operation"] == "Overwrite"
    at.selectbox(key=state.Versions.OPEN_BY_TAG).set_value("silver").run()
    assert at.selectbox(key="version").value == 2
    # a version typed is no tag's: the box empties
    at.selectbox(key="version").set_value(3).run()
    assert at.selectbox(key=state.Versions.OPEN_BY_TAG).value is None
    assert at.selectbox(key="version").value == 3
    click_version_row(at, 2)
    assert at.selectbox(key=state.Versions.OPEN_BY_TAG).value is None


def test_open_by_tag_empties_when_the_tag_moves_elsewhere(make_app, ui_env) -> None:
    """A tag picked, then moved to another version by another process: the box no longer
    says the version shown is that tag's; it offers the tag at its new version."""
    from backend.services import tags as tagsv

    ns = backend.connect(str(ui_env))
    tagsv.create_tag(ns, ["sales", "orders"], "gold", 1)
    at = make_app("versions", query_params=ORDERS)
    at.selectbox(key=state.Versions.OPEN_BY_TAG).set_value("gold").run()
    assert at.selectbox(key="version").value == 1
    tagsv.move_tag(ns, ["sales", "orders"], "gold", 2)  # elsewhere
    at.button(key=state.Conn.REFRESH).click().run()  # read again (not from the cache)
    assert_no_exception(at)
    pick = at.selectbox(key=state.Versions.OPEN_BY_TAG)
    assert (pick.value, pick.options) == (None, ["gold (v2)"])
    assert at.selectbox(key="version").value == 1  # the version shown stays
    pick.set_value("gold").run()
    assert at.selectbox(key="version").value == 2


def test_tag_link_logs_no_session_state_warning(make_app, ui_env) -> None:
    """A ``?tag=`` link sets the picker through the session: the picker then has no default
    of its own, so Streamlit logs no "created with a default value but also had its value set
    via the Session State API" warning."""
    import logging

    from streamlit.elements.lib import policies

    from backend.services import tags as tagsv

    tagsv.create_tag(backend.connect(str(ui_env)), ["sales", "orders"], "gold", 2)
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger(policies.__name__)
    logger.addHandler(handler)
    policies._shown_default_value_warning = False  # once per process: this test must see it
    try:
        at = make_app("versions", query_params={**ORDERS, "tag": "gold"})
        assert_no_exception(at)
        assert at.selectbox(key="version").value == 2
        click_version_row(at, 1)
        at.selectbox(key=state.Versions.OPEN_BY_TAG).set_value("gold").run()
        assert at.selectbox(key="version").value == 2
    finally:
        logger.removeHandler(handler)
    assert [r.getMessage() for r in records if "Session State API" in r.getMessage()] == []


def test_an_emptied_version_box_shows_the_links_version(make_app, ui_env) -> None:
    """The Version box emptied: it shows what the link opened, a ``?tag=`` link's version
    (the link stays), else the latest."""
    from backend.services import tags as tagsv

    tagsv.create_tag(backend.connect(str(ui_env)), ["sales", "orders"], "gold", 2)
    at = make_app("versions", query_params={**ORDERS, "tag": "gold"})
    assert at.selectbox(key="version").value == 2
    at.selectbox(key="version").set_value(None).run()
    assert_no_exception(at)
    assert at.selectbox(key="version").value == 2
    assert at.query_params.get("tag") == "gold"

    at = make_app("versions", query_params={**ORDERS, "version": "1"})
    at.selectbox(key="version").set_value(None).run()
    assert at.selectbox(key="version").value == 3


def test_restore_warns_of_the_indexes_it_leaves_behind_and_builds_them_again(
    make_app, ui_env
) -> None:
    from lance_namespace import CreateTableIndexRequest, ListTableIndicesRequest

    from backend.services import jobs

    ns = backend.connect(str(ui_env))
    ns.create_table_scalar_index(
        CreateTableIndexRequest(
            id=["sales", "orders"], column="id", index_type="BTREE", name="id_btree"
        )
    )  # v4
    at = make_app("versions", query_params={**ORDERS, "version": "1"})
    open_panel(at, state.Versions.RESTORE_OPEN)
    (warning,) = alerts(at, "warning")
    assert "The latest version has 1 index that v1 does not: id_btree (BTREE on id)." in warning
    assert "built again with their recorded parameters" in warning

    restore(at, 1, confirm=True)
    assert alerts(at, "success") == ["Restored v1 of sales › orders as v5, the new latest version."]
    assert ns.list_table_indices(ListTableIndicesRequest(id=["sales", "orders"])).indexes == []
    assert "The restore of v1 left 1 index behind: id_btree (BTREE on id)." in texts(at)

    at.button(key=state.Versions.REBUILD_GO).click().run()
    assert_no_exception(at)
    for job_id in at.session_state[state.Jobs.FOLLOWED]:
        assert jobs.wait(ns, job_id, timeout=60).state == "succeeded"
    rebuilt = ns.list_table_indices(ListTableIndicesRequest(id=["sales", "orders"])).indexes
    assert [ix.index_name for ix in rebuilt] == ["id_btree"]
    assert alerts(at, "success") == ["Building again: id_btree. The Indexes page follows them."]
    assert "left 1 index behind" not in texts(at)  # the offer is gone once taken


def test_the_rebuild_offer_outlives_a_reload_until_it_is_answered(make_app, ui_env) -> None:
    """The offer comes from the table's history (its latest version is a restore lacking an
    index the version before had), so a new session - a reload - still shows it; "Not now" is
    kept under the namespace's console records, and no later session offers it again."""
    import lance
    from lance_namespace import (
        CreateTableIndexRequest,
        DescribeTableRequest,
        ListTableIndicesRequest,
    )

    ns = backend.connect(str(ui_env))
    table = ["sales", "orders"]
    ns.create_table_scalar_index(
        CreateTableIndexRequest(id=table, column="id", index_type="BTREE", name="id_btree")
    )  # v4
    offer_text = "The restore of v1 left 1 index behind: id_btree (BTREE on id)."
    at = make_app("versions", query_params={**ORDERS, "version": "1"})
    restore(at, 1, confirm=True)
    assert offer_text in texts(at)

    # what the offer says, checked against lance itself: v5 restores v1 and lacks v4's index
    location = ns.describe_table(DescribeTableRequest(id=table)).location
    ds = lance.dataset(location)
    assert ds.version == 5 and ds.read_transaction(5).operation.version == 1
    assert [ix["name"] for ix in lance.dataset(location, version=4).list_indices()] == ["id_btree"]
    assert ds.list_indices() == []

    again = make_app("versions", query_params=ORDERS)  # a reload: a new session
    assert_no_exception(again)
    assert offer_text in texts(again)
    again.button(key=state.Versions.REBUILD_DISMISS).click().run()
    assert_no_exception(again)
    assert offer_text not in texts(again)
    assert not again.error, alerts(again, "error")
    assert ns.list_table_indices(ListTableIndicesRequest(id=table)).indexes == []  # not built

    later = make_app("versions", query_params=ORDERS)
    assert_no_exception(later)
    assert "left 1 index behind" not in texts(later)
    (answer,) = (ui_env / "_console" / "rebuild_answers").glob("*.json")
    record = json.loads(answer.read_text())
    assert record["answer"] == "declined" and record["table_id"] == table
    assert record["restore_uuid"] == ds.read_transaction(5).uuid


def test_a_version_written_elsewhere_after_the_restore_ends_the_offer_at_once(
    make_app, ui_env, monkeypatch
) -> None:
    """The offer is read as of the version the page lists: another process's commit after
    the restore ends it at the page's next run (not when a cached answer expires)."""
    import lance
    from lance_namespace import CreateTableIndexRequest, DescribeTableRequest

    from backend.local import namespace as local

    monkeypatch.setattr(local, "STAMP_SETTLE_NS", 0)  # a commit's stamp at once (RAM disk)
    ns = backend.connect(str(ui_env))
    table = ["sales", "orders"]
    ns.create_table_scalar_index(
        CreateTableIndexRequest(id=table, column="id", index_type="BTREE", name="id_btree")
    )  # v4
    at = make_app("versions", query_params={**ORDERS, "version": "1"})
    restore(at, 1, confirm=True)
    assert "left 1 index behind" in texts(at)
    at.run()
    assert "left 1 index behind" in texts(at)  # read once, kept
    location = ns.describe_table(DescribeTableRequest(id=table)).location
    lance.dataset(location).update_config({"written.elsewhere": "1"})  # v6, another writer
    at.run()
    assert_no_exception(at)
    assert figures(at)["Latest"] == "6"
    assert "left 1 index behind" not in texts(at)


def test_a_page_whose_facts_are_slow_is_drawn_while_they_are_read(
    make_app, ui_env, monkeypatch
) -> None:
    """The operations and row counts of the versions on the list's page, not known yet, are
    read in the background and waited for up to ``FACTS_WAIT_S``. When they take longer the
    list is drawn at once with its versions, "(not loaded)" and no row count, and says they
    are being read; once they are in, the next run draws them, each the figure lance gives
    of that version."""
    import threading
    import time

    import lance

    from components.versions import reads
    from tests.support import table_location

    monkeypatch.setattr(reads, "FACTS_WAIT_S", 0.2)
    gate = threading.Event()
    real = vsv.version_operations

    def held(*args, **kwargs):
        gate.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(vsv, "version_operations", held)
    reading = "Reading the operations and row counts of the 3 versions on this page"
    at = make_app("versions", query_params=ORDERS)
    assert_no_exception(at)
    grid = version_grid(at)
    assert list(grid["version"]) == [3, 2, 1]
    assert set(grid["operation"]) == {"(not loaded)"} and grid["rows"].isna().all()
    assert reading in texts(at)
    assert figures(at)["Version"] == "3"  # the rest of the page is drawn meanwhile

    gate.set()
    deadline = time.monotonic() + 30
    while True:  # what the page's poll does: a run once the read is done
        at.run()
        if reading not in texts(at) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert_no_exception(at)
    assert reading not in texts(at)
    grid = version_grid(at).set_index("version")
    ns = backend.connect(str(ui_env))
    truth = real(ns, ["sales", "orders"], [3, 2, 1]).set_index("version")
    assert grid.loc[[3, 2, 1], "operation"].tolist() == truth.loc[[3, 2, 1], "operation"].tolist()
    assert grid.loc[[3, 2, 1], "operation"].tolist() == ["Delete", "Append", "Overwrite"]
    location = str(table_location(ns, ["sales", "orders"]))
    counts = {v: lance.dataset(location, version=v).count_rows() for v in (3, 2, 1)}
    assert {v: int(grid.loc[v, "rows"]) for v in (3, 2, 1)} == counts


def test_a_facts_read_done_before_it_is_registered_is_forgotten(make_app, monkeypatch) -> None:
    """A read of a page's facts can end before the page waits for it (a quick one on a busy
    machine): the page takes its answer at once, is drawn with its facts, and leaves no read
    registered."""
    from concurrent.futures import Future

    from components.versions import reads

    class AtOnce:  # runs each read as it is submitted: done before it is registered
        def submit(self, fn, *args):
            done: Future = Future()
            done.set_result(fn(*args))
            return done

    monkeypatch.setattr(reads, "_JOB_POOL", AtOnce())
    at = make_app("versions", query_params=ORDERS)
    assert_no_exception(at)
    assert version_grid(at)["operation"].tolist() == ["Delete", "Append", "Overwrite"]
    assert reads._JOBS == {}


def test_facts_a_read_could_not_find_do_not_keep_the_page_polling(make_app, monkeypatch) -> None:
    """A slow read that finds no row counts (a server that cannot count) ends; the run its end
    causes draws its answer, counts empty, without reading them again: reading them again
    would draw the page without them and poll once more, for as long as the page is open.
    Nor does the next run (a click) ask for them again: not within a minute."""
    import time

    from components.versions import reads

    monkeypatch.setattr(reads, "FACTS_WAIT_S", 0.2)

    asked: list[list[int]] = []

    def uncountable(ns, table_id, versions, *args, **kwargs):
        asked.append(list(versions))
        time.sleep(0.5)
        return dict.fromkeys(versions)

    monkeypatch.setattr(vsv, "version_rows", uncountable)
    reading = "Reading the operations and row counts of the 3 versions on this page"
    at = make_app("versions", query_params=ORDERS)
    assert reading in texts(at)
    deadline = time.monotonic() + 30
    while any(not job.done() for job in reads._JOBS.values()) and time.monotonic() < deadline:
        time.sleep(0.05)  # the read ends
    at.run()  # the poll's run
    assert_no_exception(at)
    assert reading not in texts(at) and reads._JOBS == {}
    grid = version_grid(at)
    assert grid["operation"].tolist() == ["Delete", "Append", "Overwrite"]
    assert grid["rows"].isna().all()
    at.run()  # the user's next click: the counts not given are not asked for again
    assert_no_exception(at)
    assert reading not in texts(at) and reads._JOBS == {} and len(asked) == 1
