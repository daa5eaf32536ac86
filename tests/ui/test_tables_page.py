"""AppTest: "Namespaces & tables" on a real local namespace (see tests/ui/conftest.py)."""

from __future__ import annotations

import json

import backend
from backend.services import namespaces as browse
from tests.ui.conftest import alerts, assert_no_exception, texts


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

    assert open_tables(at) == ["invoices"]
    assert highlighted(at) == ["invoices"]  # selected table is highlighted, still listed
    at.button(key="tables.to_versions").click().run()  # jump to the versions of this table
    assert_no_exception(at)
    assert "Versions" in [t.value for t in at.title]
    picker = [s for s in at.selectbox if s.key and s.key.startswith("versions.pick.table.")]
    assert picker and picker[0].value == "invoices"

    at = make_app(query_params={"ns": "sales", "table": "pending"})
    page = texts(at)
    assert "declared only" in page and "No schema yet" in page


def test_pick_table_in_grid(make_app) -> None:
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
    open_dialog(at, "declare")
    at.text_input(key="tables.declare0.name").input("payroll")
    at.session_state["tables.declare0.props"] = {
        "edited_rows": {},
        "added_rows": [{"key": "owner", "value": "finance"}],
        "deleted_rows": [],
    }
    at.button(key="FormSubmitter:tables.declare0-Declare table").click().run()
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


def test_invalid_name_rejected_without_change(make_app, ui_env) -> None:
    at = make_app(query_params={"ns": "hr"})
    before = browse.list_table_names(backend.connect(str(ui_env)), ["hr"])
    open_dialog(at, "declare")
    at.text_input(key="tables.declare0.name").input("bad name/x")
    at.button(key="FormSubmitter:tables.declare0-Declare table").click().run()
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


def test_unknown_table_in_link_shows_readable_error(make_app) -> None:
    at = make_app(query_params={"ns": "sales", "table": "nope"})
    assert_no_exception(at)
    (error,) = alerts(at, "error")
    assert error.startswith("Describing nope failed. TABLE_NOT_FOUND: ")


def test_missing_namespace_in_link(make_app) -> None:
    at = make_app(query_params={"ns": ["sales", "gone"]})
    assert_no_exception(at)
    assert "Namespace sales › gone does not exist (deleted, or a stale link)." in alerts(
        at, "warning"
    )
    at.button(key="tables.reset").click().run()
    assert "tables.ns.open.sales" in button_keys(at)


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
