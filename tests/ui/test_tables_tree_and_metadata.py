"""AppTest: the namespace tree of "Namespaces & tables" and removing schema-metadata keys
(real local namespace of tests/ui/conftest.py; a real REST server on the same root)."""

from __future__ import annotations

import lance

import backend
from backend.services import lifecycle
from backend.services import namespaces as browse
from tests.ui.conftest import alerts, assert_no_exception, sources, texts

ORDERS = {"ns": "sales", "table": "orders"}
TREE = "tables.tree.node."


def tree_nodes(at) -> list[str]:
    return [b.key[len(TREE) :] for b in at.button if b.key and b.key.startswith(TREE)]


def open_tree(at):
    """Open the "Namespace tree" panel (closed on a first visit; kept open afterwards)."""
    from components import state

    at.session_state[state.Tables.TREE_OPEN] = True
    return at.run()


def test_the_tree_is_drawn_only_once_opened(make_app) -> None:
    at = make_app()
    assert tree_nodes(at) == []  # closed on a first visit: nothing of it drawn
    menus = [b.proto.popover.label for b in at.get("popover")]
    assert "Namespace tree" in menus
    open_tree(at)
    assert tree_nodes(at) == ["", "bulk", "hr", "logs", "sales", "sales/eu"]
    at.button(key=TREE + "hr").click().run()  # it stays open as the pages change namespace
    assert tree_nodes(at) == ["", "bulk", "hr", "logs", "sales", "sales/eu"]


def test_the_write_menus_keep_their_identity_across_runs(make_app) -> None:
    """The "Namespace actions" and "Add a table" menus are keyed: a run that draws the page
    above them anew (the figures coming in, a pending caption gone) leaves an open menu
    open. Without a key, Streamlit places the menu by its position on the page and draws a
    closed one when that moves (seen in Chromium: the menu shut under the pointer)."""
    from components import state

    at = make_app()
    ids = {b.proto.popover.label: b.proto.id for b in at.get("popover")}
    assert state.Tables.NS_MENU in ids["Namespace actions"]
    assert state.Tables.ADD_MENU in ids["Add a table"]
    at.run()
    assert {b.proto.popover.label: b.proto.id for b in at.get("popover")} == ids


def test_tree_lists_every_namespace_and_picking_one_selects_it(make_app) -> None:
    at = open_tree(make_app())
    assert_no_exception(at)
    # Depth first from the root, nested ones included.
    assert tree_nodes(at) == ["", "bulk", "hr", "logs", "sales", "sales/eu"]
    at.button(key=TREE + "sales/eu").click().run()
    assert_no_exception(at)
    assert at.query_params["ns"] == ["sales", "eu"]
    assert "Tables in sales › eu" in texts(at)
    grid = next(d for d in at.dataframe if d.key and d.key.startswith("tables.list.grid."))
    assert list(grid.value["table"]) == ["invoices"]
    # The selected node is marked; the breadcrumbs follow (the last one is the current).
    assert at.button(key=TREE + "sales/eu").label == "**eu**"
    assert at.button(key=TREE + "sales").label == "sales"
    assert at.button(key="tables.crumbs.crumb.2").disabled
    # Back to the root from the tree.
    at.button(key=TREE).click().run()
    assert "ns" not in at.query_params
    assert "Tables in (root)" in texts(at)


def test_tree_follows_the_namespace_opened_elsewhere(make_app) -> None:
    at = open_tree(make_app())
    at.button(key="tables.ns.open.hr").click().run()
    assert at.button(key=TREE + "hr").label == "**hr**"
    at = open_tree(make_app(query_params={"ns": ["sales", "eu"]}))
    assert at.button(key=TREE + "sales/eu").label == "**eu**"


def test_a_namespace_another_writer_made_shows_in_the_tree_once_opened(make_app, ui_env) -> None:
    """The tree was read before another client made ``ops``; opening ``ops`` (a link) reads
    the catalog again, so the tree holds it, marked, instead of a tree without it."""
    at = open_tree(make_app())
    assert "ops" not in tree_nodes(at)
    from lance_namespace import CreateNamespaceRequest

    backend.connect(str(ui_env)).create_namespace(CreateNamespaceRequest(id=["ops"]))
    at.run()
    assert "ops" not in tree_nodes(at)  # the listing is cached: nothing asked for ops yet
    at.query_params["ns"] = ["ops"]
    at.run()
    assert_no_exception(at)
    assert tree_nodes(at) == ["", "bulk", "hr", "logs", "ops", "sales", "sales/eu"]
    assert at.button(key=TREE + "ops").label == "**ops**"


def test_a_capped_tree_says_so(make_app, monkeypatch) -> None:
    from components.tables import catalog

    monkeypatch.setattr(catalog, "TREE_MAX_NODES", 2)
    at = open_tree(make_app())
    assert_no_exception(at)
    assert tree_nodes(at) == ["", "bulk", "hr"]
    assert any("the tree stops at 2" in s for s in sources(at))


def open_metadata(at) -> None:
    from components import state

    at.session_state[state.panel_key(state.Tables.METADATA_OPEN, ["sales", "orders"])] = True
    at.run()
    assert_no_exception(at)


def orders_dataset(ui_env):
    ns = backend.connect(str(ui_env))
    return lance.dataset(browse.describe_table(ns, ["sales", "orders"]).location)


def test_remove_schema_metadata_keys(make_app, ui_env) -> None:
    ns = backend.connect(str(ui_env))
    lifecycle.update_schema_metadata(ns, ["sales", "orders"], {"owner": "ops", "tier": "gold"})
    before = orders_dataset(ui_env).version
    at = make_app(query_params=ORDERS)
    open_metadata(at)
    at.multiselect(key="tables.life0.meta.remove.keys").set_value(["tier"])
    at.button(key="FormSubmitter:tables.life0.meta.remove-Remove keys").click().run()
    assert_no_exception(at)
    assert alerts(at, "success") == ["Removed from the schema metadata of sales › orders: tier."]
    ds = orders_dataset(ui_env)
    assert ds.schema.metadata == {b"owner": b"ops"} and ds.version == before + 1
    assert at.multiselect(key="tables.life1.meta.remove.keys").options == ["owner"]


def test_removing_a_key_that_is_gone_changes_nothing(make_app, ui_env) -> None:
    ns = backend.connect(str(ui_env))
    lifecycle.update_schema_metadata(ns, ["sales", "orders"], {"owner": "ops", "tier": "gold"})
    at = make_app(query_params=ORDERS)
    open_metadata(at)
    at.multiselect(key="tables.life0.meta.remove.keys").set_value(["owner", "tier"])
    # Another writer removes "tier" before the form is sent.
    lifecycle.remove_schema_metadata_keys(ns, ["sales", "orders"], ["tier"])
    version = orders_dataset(ui_env).version
    at.button(key="FormSubmitter:tables.life0.meta.remove-Remove keys").click().run()
    assert_no_exception(at)
    assert not at.success
    (error,) = alerts(at, "error")
    assert "no schema-metadata key tier" in error and "nothing was removed" in error
    ds = orders_dataset(ui_env)
    assert ds.schema.metadata == {b"owner": b"ops"} and ds.version == version


def test_remove_keys_disabled_up_front_over_rest(make_app, ui_env, monkeypatch) -> None:
    from tests.conftest import RestServer

    lifecycle.update_schema_metadata(
        backend.connect(str(ui_env)), ["sales", "orders"], {"owner": "ops"}
    )
    server = RestServer(ui_env)
    try:
        monkeypatch.setenv("LANCE_CONSOLE_TARGET", server.url)
        at = make_app(query_params=ORDERS)
        open_metadata(at)
        keys = at.multiselect(key="tables.life0.meta.remove.keys")
        button = at.button(key="FormSubmitter:tables.life0.meta.remove-Remove keys")
        assert keys.disabled and button.disabled
        assert button.help == lifecycle.REMOVE_METADATA_UNSUPPORTED
        assert lifecycle.REMOVE_METADATA_UNSUPPORTED in texts(at)
        # Saving (adding and changing keys) is still offered.
        assert not at.button(
            key="FormSubmitter:tables.life0.meta.form-Save schema metadata"
        ).disabled
    finally:
        server.stop()


def test_read_only_disables_removing_keys(make_app, ui_env) -> None:
    lifecycle.update_schema_metadata(
        backend.connect(str(ui_env)), ["sales", "orders"], {"owner": "ops"}
    )
    at = make_app(query_params={**ORDERS, "ro": "true"})
    open_metadata(at)
    assert at.button(key="FormSubmitter:tables.life0.meta.remove-Remove keys").disabled
