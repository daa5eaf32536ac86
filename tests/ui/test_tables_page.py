"""AppTest: "Namespaces & tables" on a real local namespace (see tests/ui/conftest.py)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import backend
from backend.services import namespaces as browse
from backend.services import table_stats as tstats
from components import state
from tests.ui.conftest import alerts, assert_no_exception, rest_target_rewritten, texts


def button_keys(at) -> list[str]:
    return [b.key for b in at.button if b.key]


def table_grid(at):
    """The selectable grid listing the tables (one page of names), or ``None``."""
    grids = [d for d in at.dataframe if d.key and d.key.startswith("tables.list.grid.")]
    assert len(grids) <= 1
    return grids[0] if grids else None


def open_tables(at) -> list[str]:
    grid = table_grid(at)
    return sorted(grid.value["table"]) if grid is not None else []


def highlighted(at) -> list[str]:
    """Tables the grid shows as selected when it is (re)created."""
    grid = table_grid(at)
    if grid is None or not grid.proto.selection_default:
        return []
    rows = json.loads(grid.proto.selection_default)["selection"]["rows"]
    return [list(grid.value["table"])[i] for i in rows]


def pick_table(at, name: str | None) -> None:
    """Select ``name``'s row in the table grid (``None``: clear the selection), then rerun."""
    grid = table_grid(at)
    rows = [list(grid.value["table"]).index(name)] if name else []
    at.session_state[grid.key] = {"selection": {"rows": rows, "columns": [], "cells": []}}
    at.run()


def open_dialog(at, name: str) -> None:
    """Open the "create_ns" / "declare" dialog."""
    at.button(key=f"tables.{name}.open").click().run()


def declare_in_dialog(at, name: str, properties: dict[str, str] | None = None) -> None:
    """The "Declare a table" dialog opened, ``name`` and ``properties`` entered, submitted."""
    open_dialog(at, "declare")
    at.text_input(key="tables.declare0.name").input(name)
    if properties:
        at.session_state["tables.declare0.props"] = {
            "edited_rows": {},
            "added_rows": [{"key": k, "value": v} for k, v in properties.items()],
            "deleted_rows": [],
        }
    at.button(key="FormSubmitter:tables.declare0-Declare table").click().run()


def test_drill_down_and_breadcrumbs(make_app) -> None:
    at = make_app()
    assert_no_exception(at)
    assert {"tables.ns.open.sales", "tables.ns.open.hr", "tables.ns.open.bulk"} <= set(
        button_keys(at)
    )
    at.button(key="tables.ns.open.sales").click().run()
    assert open_tables(at) == ["customers", "orders", "pending"]
    assert at.query_params["ns"] in ("sales", ["sales"])
    at.button(key="tables.ns.open.eu").click().run()
    assert open_tables(at) == ["invoices"]
    assert "Tables in sales › eu" in texts(at)
    at.button(key="tables.crumbs.crumb.1").click().run()  # back to "sales"
    assert open_tables(at) == ["customers", "orders", "pending"]
    at.button(key="tables.crumbs.crumb.0").click().run()  # root
    assert "tables.ns.open.sales" in button_keys(at)
    assert_no_exception(at)


def test_table_detail_and_deep_link(make_app) -> None:
    at = make_app(query_params={"ns": ["sales", "eu"], "table": "invoices"})
    assert_no_exception(at)
    page = texts(at)
    assert "materialised" in page and "invoices" in page
    schema = next(d.value for d in at.dataframe if "column" in d.value.columns)
    assert list(schema["column"]) == ["id", "amount", "embedding"]
    assert schema.set_index("column").loc["embedding", "type"] == "fixed_size_list<float32>[2]"
    assert {m.label: m.value for m in at.metric}["Rows"] == "2"
    # keyed tabs, per table: the figures' rerun leaves the open one open
    tabs = at.get_by_key(
        state.panel_key(f"{state.Tables.DETAIL}.tabs", ["sales", "eu", "invoices"])
    )
    assert [t.label for t in tabs.children.values()][0] == "Schema"

    assert open_tables(at) == ["invoices"]
    assert highlighted(at) == ["invoices"]  # selected table is highlighted, still listed
    at.button(key="tables.to_versions").click().run()  # jump to the versions of this table
    assert_no_exception(at)
    assert "Versions" in [t.value for t in at.title]
    assert at.selectbox(key="versions.pick.table").value == "invoices"

    at = make_app(query_params={"ns": "sales", "table": "pending"})
    page = texts(at)
    assert "declared only" in page and "No schema yet" in page


@pytest.mark.parametrize("one_update", [True, False], ids=["one-update", "public-api"])
def test_pick_table_in_grid(make_app, monkeypatch, one_update: bool) -> None:
    """The selection reaches the URL both ways the selection writer has (one update of the
    session's query parameters, or Streamlit's public API where that is not available)."""
    if not one_update:
        from components.tables import selection

        monkeypatch.setattr(selection, "_one_update", lambda removed, changed, **_: False)
    at = make_app(query_params={"ns": "sales"})
    assert highlighted(at) == []
    pick_table(at, "orders")
    assert_no_exception(at)
    assert at.query_params["table"] in ("orders", ["orders"])
    assert "orders" in [h.value for h in at.subheader]
    assert {m.label: m.value for m in at.metric}["Rows"] == "4"
    pick_table(at, "customers")  # another row of the same grid
    assert at.query_params["table"] in ("customers", ["customers"])
    assert {m.label: m.value for m in at.metric}["Rows"] == "2"
    at.run()  # a rerun keeps the selection (no stale pick from the grid)
    assert at.query_params["table"] in ("customers", ["customers"])
    pick_table(at, None)  # deselect: the detail closes
    assert "table" not in at.query_params
    assert "customers" not in [h.value for h in at.subheader]
    assert open_tables(at) == ["customers", "orders", "pending"]


@pytest.fixture
def figures_held(monkeypatch) -> Iterator[Callable[[Callable[[Any], bool]], threading.Event]]:
    """``hold(when)``: the list's figures (sales' three tables) are held back until a run in
    which ``when(the grid's pick)`` holds has drawn the grid; they then come in before that
    run goes on (after the grid, before the poll). Returns the event set once they are let in.
    A fill of its own: no figures known from other tests, none left to later ones."""
    from components.tables import grid

    release = threading.Event()
    read, draw = tstats.read_stats, grid.render_name_list
    hold_until: list[Callable[[Any], bool]] = []

    def held(ns, table_id, memo):
        release.wait(30)
        return read(ns, table_id, memo)

    def figures_in_after_the_grid(*args, **kwargs):
        pick = draw(*args, **kwargs)
        if hold_until and hold_until[0](pick):  # this run: the figures come in now
            release.set()
            grid.stats_fill().wait(30)
        return pick

    def hold(when: Callable[[Any], bool]) -> threading.Event:
        hold_until[:] = [when]
        return release

    monkeypatch.setattr(tstats, "read_stats", held)
    monkeypatch.setattr(grid, "render_name_list", figures_in_after_the_grid)
    grid._stats_fill.clear()
    try:
        yield hold
    finally:
        release.set()
        grid._stats_fill.clear()  # later tests read with the real read_stats


def test_a_pick_in_the_run_the_figures_arrive_in_is_kept(make_app, figures_held) -> None:
    """The list polls for its pending figures and reruns once they are in. When they come in
    while the run of a click draws the page (after the grid, before the poll), the click
    still opens its table."""
    release = figures_held(lambda pick: pick is not None)  # the click's run
    at = make_app(query_params={"ns": "sales"})
    assert "Reading the figures" in texts(at)
    pick_table(at, "orders")
    assert release.is_set()
    assert_no_exception(at)
    assert at.query_params["table"] in ("orders", ["orders"])
    assert "orders" in [h.value for h in at.subheader]
    assert "Reading the figures" not in texts(at)  # the page ran again once that run ended


def test_a_form_sent_in_the_run_the_figures_arrive_in_is_handled(make_app, figures_held) -> None:
    """A form of the table's panel (below the list) sent in the run in which the list's
    pending figures come in is handled: the list's poll does not rerun the page from within
    that run, which would drop the submission. The form's error stays on screen."""
    from components import state

    armed = threading.Event()
    release = figures_held(lambda pick: armed.is_set())  # the form's run
    at = make_app(query_params=ORDERS)
    assert "Reading the figures" in texts(at)
    open_panel(at, state.Tables.RENAME_OPEN, ["sales", "orders"])
    at.text_input(key="tables.life0.rename.name").input("bad name")
    armed.set()
    submit(at, "tables.life0.rename.form", "Rename")
    assert release.is_set()
    (error,) = alerts(at, "error")
    assert error.startswith("Not renamed. The table name 'bad name' is not valid")


def test_fragments_metric(make_app) -> None:
    at = make_app(query_params={"ns": "sales", "table": "orders"})
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Fragments"].isdigit() and int(metrics["Fragments"]) >= 1
    at = make_app(query_params={"ns": "sales", "table": "pending"})  # declared only: no data
    assert {m.label: m.value for m in at.metric}["Fragments"] == "—"


def test_search_filters_and_paging(make_app) -> None:
    at = make_app(query_params={"ns": "bulk"})
    assert len(open_tables(at)) == 50  # first page of 55
    pager = next(p for p in at.pagination if p.key.startswith("tables.list.page."))
    assert pager.num_pages == 2
    pager.set_value(2).run()
    assert open_tables(at) == [f"t{i:03d}" for i in range(50, 55)]

    at.text_input(key="tables.search").input("t00?").run()
    assert open_tables(at) == [f"t00{i}" for i in range(10)]
    assert "10 of 55 tables match" in texts(at)
    at.text_input(key="tables.search").input("nomatch").run()
    assert open_tables(at) == []


def test_declare_table_through_form(make_app, ui_env) -> None:
    at = make_app(query_params={"ns": "hr"})
    assert "tables.declare0.name" not in [t.key for t in at.text_input]  # dialog not open
    declare_in_dialog(at, "payroll", {"owner": "finance"})
    assert_no_exception(at)
    page = texts(at)
    assert alerts(at, "success") == ["Declared table hr › payroll."]
    assert "declared only" in page  # the new table is selected and described
    assert "payroll" in open_tables(at)
    ns = backend.connect(str(ui_env))
    assert "payroll" in browse.list_table_names(ns, ["hr"])
    detail = browse.describe_table(ns, ["hr", "payroll"])
    assert detail.declared_only and detail.properties.get("owner") == "finance"
    assert "declare_table" in page  # copy-as-Python snippet


def test_declare_warns_of_properties_the_server_dropped(make_app, ui_env, monkeypatch) -> None:
    """A server that drops declared properties (sent, then absent on describe): played by a
    proxy in front of the real RestAdapter that leaves them out of DescribeTable answers."""

    def no_properties(route, answer):
        answer.pop("properties", None)
        return answer

    with rest_target_rewritten(ui_env, monkeypatch, {"/describe": no_properties}) as url:
        at = make_app(query_params={"ns": "hr"})
        declare_in_dialog(at, "payroll", {"owner": "finance"})
        assert_no_exception(at)
        assert not at.success
        (warning,) = alerts(at, "warning")
        assert warning.startswith("Declared table hr › payroll. The server did not keep 1 of")
        assert "(owner)" in warning
        ns = backend.connect(url)
        assert "payroll" in browse.list_table_names(ns, ["hr"])  # declared all the same
        assert browse.describe_table(ns, ["hr", "payroll"]).properties == {}


def test_fragments_from_the_metadata_total_fragments(make_app, ui_env, monkeypatch) -> None:
    """A REST server reporting fragments as metadata ``total_fragments`` (no stats)."""
    import lance

    location = browse.describe_table(backend.connect(str(ui_env)), ["sales", "orders"]).location
    fragments = len(lance.dataset(location).get_fragments())  # counted independently

    def with_total(route, answer):
        answer["stats"] = None
        answer["metadata"] = {**(answer.get("metadata") or {}), "total_fragments": str(fragments)}
        return answer

    with rest_target_rewritten(ui_env, monkeypatch, {"/describe": with_total}):
        at = make_app(query_params=ORDERS)
        assert_no_exception(at)
        assert {m.label: m.value for m in at.metric}["Fragments"] == f"{fragments:,}"


def test_invalid_name_rejected_without_change(make_app, ui_env) -> None:
    at = make_app(query_params={"ns": "hr"})
    before = browse.list_table_names(backend.connect(str(ui_env)), ["hr"])
    declare_in_dialog(at, "bad name/x")
    assert_no_exception(at)
    assert alerts(at, "error") == [
        "The table name 'bad name/x' contains a path separator ('/' or '\\')."
    ]
    assert browse.list_table_names(backend.connect(str(ui_env)), ["hr"]) == before

    open_dialog(at, "create_ns")
    at.text_input(key="tables.create_ns0.name").input("has space")
    at.button(key="FormSubmitter:tables.create_ns0-Create namespace").click().run()
    assert any("The namespace name 'has space' is not valid" in e for e in alerts(at, "error"))
    assert browse.list_namespace_names(backend.connect(str(ui_env)), ["hr"]) == []


def test_create_namespace(make_app, ui_env) -> None:
    at = make_app(query_params={"ns": "hr"})
    open_dialog(at, "create_ns")
    at.text_input(key="tables.create_ns0.name").input("contractors")
    at.button(key="FormSubmitter:tables.create_ns0-Create namespace").click().run()
    assert_no_exception(at)
    assert alerts(at, "success") == ["Created namespace hr › contractors."]
    assert "Tables in hr › contractors" in texts(at)  # the new namespace is opened
    assert at.query_params["ns"] == ["hr", "contractors"]
    assert not [t for t in at.text_input if t.key and t.key.startswith("tables.create_ns")]
    at.button(key="tables.crumbs.crumb.1").click().run()  # back to hr: listed there
    assert "tables.ns.open.contractors" in button_keys(at)
    assert browse.list_namespace_names(backend.connect(str(ui_env)), ["hr"]) == ["contractors"]


def test_deregister_needs_typed_confirmation(make_app, ui_env) -> None:
    at = make_app(query_params={"ns": "sales", "table": "customers"})
    at.text_input(key="tables.deregister0.confirm").input("customer")
    at.button(key="FormSubmitter:tables.deregister0-Deregister").click().run()
    assert alerts(at, "error") == ["Not deregistered: type customers exactly to confirm."]
    ns = backend.connect(str(ui_env))
    assert "customers" in browse.list_table_names(ns, ["sales"])

    at.text_input(key="tables.deregister0.confirm").input("customers")
    at.button(key="FormSubmitter:tables.deregister0-Deregister").click().run()
    assert_no_exception(at)
    (done,) = alerts(at, "success")
    assert done.startswith("Deregistered table sales › customers; its files stay")
    assert "customers" not in browse.list_table_names(ns, ["sales"])
    assert "customers" not in open_tables(at)
    assert "table" not in at.query_params


def test_a_deregistered_table_is_registered_again(make_app, ui_env) -> None:
    """The deregister panel and its result say how to reach the table again (its location);
    "Register a table" puts it back."""
    ns = backend.connect(str(ui_env))
    location = ns.describe_table({"id": ["sales", "customers"]}).location
    at = make_app(query_params={"ns": "sales", "table": "customers"})
    assert "To reach sales › customers again, register it" in texts(at)
    assert location in texts(at)
    at.text_input(key="tables.deregister0.confirm").input("customers")
    at.button(key="FormSubmitter:tables.deregister0-Deregister").click().run()
    assert_no_exception(at)
    (done,) = alerts(at, "success")
    assert f"register it (Register a table, in its namespace) with the location {location}" in done
    assert "customers" not in browse.list_table_names(ns, ["sales"])

    assert not [t for t in at.text_input if t.key and t.key.startswith("tables.register")]
    at.session_state["tables.register.open"] = True  # the panel opened: its form drawn
    at.run()
    form = f"tables.register{at.session_state['tables.form_version']}"
    at.text_input(key=f"{form}.name").input("customers")
    at.text_input(key=f"{form}.location").input("/etc")
    submit(at, form, "Register")
    (error,) = alerts(at, "error")
    assert "outside the namespace root" in error
    assert "customers" not in browse.list_table_names(ns, ["sales"])
    at.text_input(key=f"{form}.location").input(location)
    submit(at, form, "Register")
    assert alerts(at, "success") == [f"Registered table sales › customers at {location}."]
    assert "customers" in browse.list_table_names(ns, ["sales"])
    assert ns.count_table_rows({"id": ["sales", "customers"]}).count == 2


def test_unknown_table_in_link_shows_readable_error(make_app) -> None:
    at = make_app(query_params={"ns": "sales", "table": "nope"})
    assert_no_exception(at)
    (error,) = alerts(at, "error")
    assert error.startswith("Describing nope failed. Table not found: ")
    assert "TABLE_NOT_FOUND" not in error and "sales › nope" in error


def test_missing_namespace_in_link(make_app) -> None:
    at = make_app(query_params={"ns": ["sales", "gone"]})
    assert_no_exception(at)
    assert "Namespace sales › gone does not exist (deleted, or a stale link)." in alerts(
        at, "warning"
    )
    at.button(key="tables.reset").click().run()
    assert "tables.ns.open.sales" in button_keys(at)


@pytest.mark.parametrize(
    ("query", "said"),
    [
        (
            {"ns": "sales$orders"},
            "the namespace name 'sales$orders' contains the delimiter '$', which separates "
            "the parts of an id",
        ),
        (
            {"ns": ["sales", "../.."]},
            "the namespace name '../..' contains a path separator ('/' or '\\')",
        ),
        (
            {"ns": "sales", "table": "a$b"},
            "the table name 'a$b' contains the delimiter '$', which separates the parts of an id",
        ),
    ],
)
def test_a_link_naming_what_cannot_exist_is_not_followed(make_app, query, said) -> None:
    """A link whose namespace or table breaks the id rule: one warning naming the part as
    typed (not an error box per read of it), the session's selection kept (the root at
    first) and written back to the URL; a later link of the session keeps the table shown."""
    at = make_app(query_params=query)
    assert_no_exception(at)
    assert not at.error
    assert alerts(at, "warning") == [
        f"This link cannot be opened: {said}. Showing the root namespace."
    ]
    assert "ns" not in at.query_params and "table" not in at.query_params
    assert "tables.ns.open.sales" in button_keys(at)
    at.query_params.update({"ns": "sales", "table": "orders"})
    at.run()
    assert not at.warning
    at.query_params.update(query)
    at.run()
    assert alerts(at, "warning") == [
        f"This link cannot be opened: {said}. Showing table sales › orders."
    ]
    assert at.query_params["ns"] == "sales" and at.query_params["table"] == "orders"


def test_many_namespaces_listed_in_a_grid(make_app, ui_env) -> None:
    from lance_namespace import CreateNamespaceRequest

    ns = backend.connect(str(ui_env))
    for i in range(25):
        ns.create_namespace(CreateNamespaceRequest(id=["hr", f"team{i:02d}"]))
    at = make_app(query_params={"ns": "hr"})
    assert_no_exception(at)
    assert not [k for k in button_keys(at) if k.startswith("tables.ns.open.")]
    grid = next(d for d in at.dataframe if d.key and d.key.startswith("tables.ns.grid."))
    names = list(grid.value["namespace"])
    assert names == [f"team{i:02d}" for i in range(25)]
    at.session_state[grid.key] = {
        "selection": {"rows": [names.index("team07")], "columns": [], "cells": []}
    }
    at.run()
    assert_no_exception(at)
    assert "Tables in hr › team07" in texts(at)
    assert at.query_params["ns"] == ["hr", "team07"]


# -- lifecycle: drop vs deregister, rename, schema metadata, drop namespace -----------------

ORDERS = {"ns": "sales", "table": "orders"}


def open_panel(at, key: str, ident: list[str]) -> None:
    """Open a lifecycle expander (drawn only while open) and rerun."""
    from components import state

    at.session_state[state.panel_key(key, ident)] = True
    at.run()
    assert_no_exception(at)


def submit(at, prefix: str, label: str) -> None:
    found = [b for b in at.button if b.key and b.key.startswith(f"FormSubmitter:{prefix}")
             and b.key.endswith(f"-{label}")]  # fmt: skip
    assert len(found) == 1, [b.key for b in at.button]
    found[0].click().run()
    assert_no_exception(at)


def table_dir(ui_env, table_id: list[str]):
    from backend.locations import to_local_path

    ns = backend.connect(str(ui_env))
    return to_local_path(browse.describe_table(ns, table_id).location, ns.local_path)


def test_drop_deletes_data_deregister_keeps_it(make_app, ui_env) -> None:
    from components import state

    orders_dir = table_dir(ui_env, ["sales", "orders"])
    at = make_app(query_params=ORDERS)
    assert "Drop table (deletes data)" in [e.label for e in at.expander]
    assert "Deregister table (keeps data)" in [e.label for e in at.expander]
    open_panel(at, state.Tables.DROP_OPEN, ["sales", "orders"])
    page = texts(at)
    assert "Removes sales › orders from the catalog and deletes its data at:" in page
    assert str(orders_dir) in page
    assert "latest version v3 (every version and tag). This cannot be undone." in page
    assert re.search(r"\d+ files, [\d.,]+ (bytes|KiB|MiB)", page), page
    widget_key = "tables.life0.drop.confirm"
    at.text_input(key=widget_key).input("order")
    submit(at, "tables.life0.drop.form", "Drop table")
    assert alerts(at, "error") == ["Not dropped: type orders exactly to confirm."]
    assert orders_dir.is_dir()
    at.text_input(key=widget_key).input("orders")
    submit(at, "tables.life0.drop.form", "Drop table")
    assert alerts(at, "success") == ["Dropped table sales › orders: its data was deleted."]
    assert "orders" not in browse.list_table_names(backend.connect(str(ui_env)), ["sales"])
    assert not orders_dir.exists()  # the data went with it
    assert "table" not in at.query_params and "orders" not in open_tables(at)

    customers_dir = table_dir(ui_env, ["sales", "customers"])
    at = make_app(query_params={"ns": "sales", "table": "customers"})
    open_panel(at, state.Tables.DEREGISTER_OPEN, ["sales", "customers"])
    page = texts(at)
    assert "Removes sales › customers from the catalog; nothing is deleted." in page
    assert "Kept: " in page and "latest version v1" in page
    at.text_input(key="tables.deregister0.confirm").input("customers")
    at.button(key="FormSubmitter:tables.deregister0-Deregister").click().run()
    assert_no_exception(at)
    assert "customers" not in browse.list_table_names(backend.connect(str(ui_env)), ["sales"])
    assert customers_dir.is_dir()  # the data stays


def test_rename_and_move_follows_the_table(make_app, ui_env) -> None:
    from components import state

    at = make_app(query_params=ORDERS)
    open_panel(at, state.Tables.RENAME_OPEN, ["sales", "orders"])
    assert "only its name and namespace change" in texts(at)
    box = at.selectbox(key="tables.life0.rename.namespace")
    assert box.value == ("sales",) and () in box.options or "(root)" in box.options
    at.text_input(key="tables.life0.rename.name").input("bad name")
    submit(at, "tables.life0.rename.form", "Rename")
    (error,) = alerts(at, "error")
    assert error.startswith("Not renamed. The table name 'bad name' is not valid")

    at.text_input(key="tables.life0.rename.name").input("purchases")
    at.selectbox(key="tables.life0.rename.namespace").set_value(("sales", "eu"))
    submit(at, "tables.life0.rename.form", "Rename")
    assert alerts(at, "success") == ["Renamed table sales › orders to sales › eu › purchases."]
    assert at.query_params["ns"] == ["sales", "eu"] and at.query_params["table"] in (
        "purchases",
        ["purchases"],
    )
    assert "purchases" in [h.value for h in at.subheader]  # the selection followed it
    assert {m.label: m.value for m in at.metric}["Rows"] == "4"  # data and versions kept
    ns = backend.connect(str(ui_env))
    assert "orders" not in browse.list_table_names(ns, ["sales"])
    assert browse.list_table_names(ns, ["sales", "eu"]) == ["invoices", "purchases"]


def test_rename_on_a_rest_server_without_it_is_refused_then_known(
    make_app, ui_env, monkeypatch
) -> None:
    """Nothing is sent to find out whether the server renames: the form is offered, the
    server's refusal is reported (nothing renamed), and from then on the form says so."""
    from components import state
    from tests.conftest import RestServer

    server = RestServer(ui_env)  # pylance's RestAdapter: no RenameTable, no CASCADE
    try:
        monkeypatch.setenv("LANCE_CONSOLE_TARGET", server.url)
        at = make_app(query_params=ORDERS)
        assert_no_exception(at)
        open_panel(at, state.Tables.RENAME_OPEN, ["sales", "orders"])
        assert "Whether this server implements RenameTable is unknown" in texts(at)
        at.text_input(key="tables.life0.rename.name").input("purchases")
        submit(at, "tables.life0.rename.form", "Rename")
        (error,) = alerts(at, "error")
        assert "Unsupported operation: " in error and "rename_table" in error
        assert "orders" in browse.list_table_names(backend.connect(str(ui_env)), ["sales"])
        at.run()
        assert "This server does not implement RenameTable (its server profile" in texts(at)
        assert at.text_input(key="tables.life0.rename.name").disabled
        assert at.selectbox(key="tables.life0.rename.namespace").disabled
        assert at.button(key="FormSubmitter:tables.life0.rename.form-Rename").disabled

        # CASCADE: sent, and the refusal is said as such; nothing is dropped.
        at = make_app(query_params={"ns": ["sales", "eu"]})
        open_panel(at, state.Tables.DROP_NS_OPEN, ["sales", "eu"])
        at.radio(key=state.panel_key(state.Tables.DROP_NS_MODE, ["sales", "eu"])).set_value(
            "CASCADE"
        ).run()
        assert "This server may not implement CASCADE" in texts(at)
        at.text_input(key="tables.drop_ns0.sales/eu.confirm").input("eu")
        submit(at, "tables.drop_ns0.sales/eu", "Drop eu and 1 item")
        (error,) = alerts(at, "error")
        assert error.startswith(
            "Dropping namespace eu failed. Unsupported operation: This server refused"
        )
        assert "nothing was dropped" in error
        assert browse.list_table_names(backend.connect(str(ui_env)), ["sales", "eu"]) == [
            "invoices"
        ]
        # From then on the panel says so instead of offering CASCADE (or a button).
        at.run()
        assert not [r for r in at.radio if r.key and "drop_ns" in r.key]
        (warning,) = alerts(at, "warning")
        assert "This server does not implement DropNamespace with CASCADE (its server" in warning
        assert not [b for b in at.button if b.key and "drop_ns0.sales/eu" in b.key]
    finally:
        server.stop()


def test_deregister_warns_when_the_server_still_lists_the_table(make_app, ui_env, monkeypatch):
    from tests.conftest import RestServer
    from tests.support import create_table, make_table

    server = RestServer(ui_env)  # pylance's RestAdapter rediscovers root-level directories
    try:
        create_table(backend.connect(server.url), ["loose"], make_table(2))
        monkeypatch.setenv("LANCE_CONSOLE_TARGET", server.url)
        at = make_app(query_params={"table": "loose"})
        assert_no_exception(at)
        at.text_input(key="tables.deregister0.confirm").input("loose")
        at.button(key="FormSubmitter:tables.deregister0-Deregister").click().run()
        assert_no_exception(at)
        assert not at.success
        (warning,) = alerts(at, "warning")
        assert warning.startswith("Deregistered table loose; its files stay at its location.")
        assert "The server still lists loose after deregistering it" in warning
        assert "loose" in browse.list_table_names(backend.connect(server.url), [])
    finally:
        server.stop()


def test_a_server_profile_disables_rename_and_cascade_up_front(
    make_app, ui_env, monkeypatch
) -> None:
    from components import state
    from tests.conftest import RestServer

    server = RestServer(ui_env)
    try:
        monkeypatch.setenv("LANCE_CONSOLE_TARGET", server.url)
        monkeypatch.setenv("LANCE_CONSOLE_SERVER_PROFILE", "lance-dir")
        at = make_app(query_params=ORDERS)
        assert_no_exception(at)
        open_panel(at, state.Tables.RENAME_OPEN, ["sales", "orders"])
        assert "This server does not implement RenameTable (its server profile" in texts(at)
        assert at.button(key="FormSubmitter:tables.life0.rename.form-Rename").disabled
        at = make_app(query_params={"ns": ["sales", "eu"]})
        open_panel(at, state.Tables.DROP_NS_OPEN, ["sales", "eu"])
        # CASCADE is not offered, and a namespace with children gets no drop button at all.
        assert not [r for r in at.radio if r.key and "drop_ns" in r.key]
        (warning,) = alerts(at, "warning")
        assert "This server does not implement DropNamespace with CASCADE (its server" in warning
        assert not [b for b in at.button if b.key and "drop_ns0.sales/eu" in b.key]
    finally:
        server.stop()


def test_schema_metadata_edit_and_read_only_properties(make_app, ui_env) -> None:
    import lance

    from backend.services import lifecycle
    from components import state

    at = make_app(query_params=ORDERS)
    open_panel(at, state.Tables.METADATA_OPEN, ["sales", "orders"])
    assert lifecycle.PROPERTIES_READ_ONLY in texts(at)
    key = "tables.life0.meta.rows"
    at.session_state[key] = {
        "edited_rows": {},
        "added_rows": [{"key": "owner", "value": "data_team"}, {"key": "tier", "value": "$gold"}],
        "deleted_rows": [],
    }
    submit(at, "tables.life0.meta.form", "Save schema metadata")
    assert alerts(at, "success") == ["Saved the schema metadata of sales › orders: owner, tier."]
    location = browse.describe_table(backend.connect(str(ui_env)), ["sales", "orders"]).location
    assert lance.dataset(location).schema.metadata == {b"owner": b"data_team", b"tier": b"$gold"}
    editor = next(e for e in at.dataframe if e.key == "tables.life1.meta.rows")
    assert dict(zip(editor.value["key"], editor.value["value"], strict=True)) == {
        "owner": "data_team",
        "tier": "$gold",
    }

    # A removed row cannot remove its key (the operation only adds and changes keys).
    at.session_state["tables.life1.meta.rows"] = {
        "edited_rows": {},
        "added_rows": [],
        "deleted_rows": [0],
    }
    submit(at, "tables.life1.meta.form", "Save schema metadata")
    (error,) = alerts(at, "error")
    assert error.startswith("Nothing saved. Keys cannot be removed (owner)")

    at = make_app(query_params={"ns": "sales", "table": "pending"})  # declared: properties only
    open_panel(at, state.Tables.METADATA_OPEN, ["sales", "pending"])
    page = texts(at)
    assert "A declared table has no schema yet" in page and lifecycle.PROPERTIES_READ_ONLY in page
    grids = [d.value for d in at.dataframe if list(d.value.columns) == ["key", "value"]]
    assert len(grids) == 2  # the Properties tab and the panel: read-only grids, no editor
    assert all(dict(zip(g["key"], g["value"], strict=True)) == {"owner": "ops"} for g in grids)


def test_drop_namespace_restrict_lists_children_cascade_drops_all(make_app, ui_env) -> None:
    from components import state

    at = make_app(query_params={"ns": "sales"})
    assert "Drop namespace sales" in [e.label for e in at.expander]
    open_panel(at, state.Tables.DROP_NS_OPEN, ["sales"])
    (warning,) = alerts(at, "warning")
    assert warning.startswith("sales is not empty: namespace sales › eu, table sales › customers")
    assert "RESTRICT is refused while it has children" in warning
    at.text_input(key="tables.drop_ns0.sales.confirm").input("sales")
    submit(at, "tables.drop_ns0.sales", "Drop sales")  # tried anyway: the refusal names them
    (error,) = alerts(at, "error")
    assert error.startswith("Dropping namespace sales failed. Namespace not empty: ")
    assert "table sales › orders" in error and "$" not in error
    assert browse.namespace_exists(backend.connect(str(ui_env)), ["sales"])

    at.radio(key=state.panel_key(state.Tables.DROP_NS_MODE, ["sales"])).set_value("CASCADE").run()
    goes = next(d.value for d in at.dataframe if list(d.value.columns) == ["kind", "path"])
    assert sorted(goes["path"]) == [
        "sales › customers",
        "sales › eu",
        "sales › eu › invoices",
        "sales › orders",
        "sales › pending",
    ]
    assert (
        "CASCADE drops sales and everything under it: 4 tables (their data is deleted) and "
        "1 namespace:" in texts(at)
    )
    orders_dir = table_dir(ui_env, ["sales", "orders"])
    at.text_input(key="tables.drop_ns0.sales.confirm").input("sales")
    submit(at, "tables.drop_ns0.sales", "Drop sales and 5 items")
    assert alerts(at, "success") == [
        "Dropped namespace sales with 4 tables (their data deleted) and 1 child namespace."
    ]
    assert "ns" not in at.query_params  # the selection moved to the parent: the root
    assert "tables.ns.open.sales" not in button_keys(at)
    ns = backend.connect(str(ui_env))
    assert not browse.namespace_exists(ns, ["sales"]) and not orders_dir.exists()


def test_drop_an_empty_namespace(make_app, ui_env) -> None:
    from lance_namespace import CreateNamespaceRequest

    from components import state

    backend.connect(str(ui_env)).create_namespace(CreateNamespaceRequest(id=["hr", "temp"]))
    at = make_app(query_params={"ns": ["hr", "temp"]})
    open_panel(at, state.Tables.DROP_NS_OPEN, ["hr", "temp"])
    assert "hr › temp is empty: nothing else goes with it." in texts(at)
    at.text_input(key="tables.drop_ns0.hr/temp.confirm").input("temp")
    submit(at, "tables.drop_ns0.hr/temp", "Drop temp")
    assert alerts(at, "success") == ["Dropped namespace hr › temp."]
    assert at.query_params["ns"] in ("hr", ["hr"])
    assert browse.list_namespace_names(backend.connect(str(ui_env)), ["hr"]) == []


def test_read_only_disables_the_lifecycle_writes(make_app) -> None:
    from components import state

    at = make_app(query_params={**ORDERS, "ro": "true"})
    for key, ident in (
        (state.Tables.DROP_OPEN, ["sales", "orders"]),
        (state.Tables.RENAME_OPEN, ["sales", "orders"]),
        (state.Tables.METADATA_OPEN, ["sales", "orders"]),
        (state.Tables.DROP_NS_OPEN, ["sales"]),
    ):
        at.session_state[state.panel_key(key, ident)] = True
    at.run()
    assert_no_exception(at)
    for key in (
        "FormSubmitter:tables.life0.drop.form-Drop table",
        "FormSubmitter:tables.life0.rename.form-Rename",
        "FormSubmitter:tables.life0.meta.form-Save schema metadata",
        "FormSubmitter:tables.deregister0-Deregister",
        "FormSubmitter:tables.drop_ns0.sales-Drop sales",
    ):
        assert at.button(key=key).disabled, key


def test_declare_failure_is_shown_in_the_open_dialog(make_app, ui_env) -> None:
    """A write the namespace refuses (the name is taken) is said inside the dialog, which
    stays open with what was typed; nothing changes."""
    at = make_app(query_params={"ns": "sales"})
    before = browse.list_table_names(backend.connect(str(ui_env)), ["sales"])
    declare_in_dialog(at, "orders")
    assert_no_exception(at)
    (error,) = alerts(at, "error")
    assert "orders" in error and "Declare table" in error
    assert at.text_input(key="tables.declare0.name").value == "orders"  # still open
    assert not at.success
    assert browse.list_table_names(backend.connect(str(ui_env)), ["sales"]) == before


def test_a_cascade_says_its_or_their_data_as_the_tables_number() -> None:
    from backend.services.lifecycle import Children
    from components.table_actions.drop_namespace import tables_and_their_data

    one = Children(namespaces=[], tables=[["a", "t"]])
    two = Children(namespaces=[], tables=[["a", "t"], ["a", "u"]])
    capped = Children(namespaces=[], tables=[["a", "t"]], capped=True)
    assert tables_and_their_data(one, "is deleted") == "1 table (its data is deleted)"
    assert tables_and_their_data(two, "deleted") == "2 tables (their data deleted)"
    assert tables_and_their_data(capped, "deleted") == "at least 1 table (their data deleted)"
