"""AppTest: the Versions page on a branch (``?branch=``): the branch's own versions, its change
log, "Compare with parent" (row level), and restore and tags acting on the branch, on the
sample namespace (``sales.orders``: v1 create, v2 append, v3 delete). Every figure is checked
against the versions read with lance directly and compared with pyarrow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pyarrow.compute as pc

import backend
from backend.services import branches
from components import state
from tests.ui.conftest import alerts, assert_no_exception, figures, texts, widget

TID = ["sales", "orders"]
ON_DEV = {"ns": "sales", "table": "orders", state.QP_BRANCH: "dev"}


def with_dev(ui_env: Path) -> str:
    """Branch dev made from main v3; on dev: v4 append (id 6), v5 update (id 2), v6 delete
    (id 4). Main moves on too (v4: id 3 updated), which the branch compare must not show."""
    ns = backend.connect(str(ui_env), audit=False)
    branches.create_branch(ns, TID, "dev")
    uri = ns.open_dataset(TID).uri
    dev = lance.dataset(uri).checkout_version(("dev", None))
    dev.insert(pa.table({"id": [6], "item": ["mug"]}))
    dev.update({"item": "'INK'"}, where="id = 2")
    dev.delete("id = 4")
    lance.dataset(uri).update({"item": "'PAD'"}, where="id = 3")
    return uri


def dev_at(uri: str, version: int | None = None) -> pa.Table:
    return lance.dataset(uri).checkout_version(("dev", version)).to_table()


def by_id(old: pa.Table, new: pa.Table) -> dict[str, list[int]]:
    """Inserted, deleted and updated ids, by pyarrow anti-joins and a row compare."""
    inserted = new.join(old.select(["id"]), "id", join_type="left anti")["id"].to_pylist()
    deleted = old.join(new.select(["id"]), "id", join_type="left anti")["id"].to_pylist()
    before = {r["id"]: r for r in old.to_pylist()}
    updated = [r["id"] for r in new.to_pylist() if r["id"] in before and r != before[r["id"]]]
    return {"inserted": sorted(inserted), "deleted": sorted(deleted), "updated": sorted(updated)}


def grid_with(at: Any, column: str) -> Any:
    (grid,) = [d.value for d in at.dataframe if column in d.value.columns]
    return grid


def test_a_branch_shows_its_versions_change_log_and_where_it_was_made(make_app, ui_env) -> None:
    uri = with_dev(ui_env)
    at = make_app("versions", query_params=ON_DEV)
    assert_no_exception(at)
    shown = texts(at)
    assert "Branch dev: 4 versions" in shown
    assert "Made from main v3" in shown
    assert "act on main; pick main to use them" not in shown  # the old caption is gone
    assert "act on main only: pick main to use them" in shown  # what still is main's, said
    # keyed expanders: the page's poll for outside commits leaves an open one open
    compare = at.get_by_key(state.Versions.BRANCH_COMPARE_OPEN)
    assert compare.label == "Compare two versions of branch dev"
    assert at.get_by_key(state.Versions.BRANCH_TAGS_OPEN).label == "Tags on branch dev"
    own = [v["version"] for v in lance.dataset(uri).checkout_version(("dev", None)).versions()]
    listing = next(
        d.value
        for d in at.dataframe
        if list(d.value.columns) == ["version", "timestamp", "manifest_size"]
    )
    assert listing["version"].tolist() == sorted(own, reverse=True) == [6, 5, 4, 3]
    # main-only writes are not offered on the branch
    keys = [b.key or "" for b in at.button]
    assert not [k for k in keys if "versions.cleanup" in k or "versions.rows" in k]

    at.session_state[state.Versions.CHANGE_LOG_OPEN] = True
    at.run()
    assert_no_exception(at)
    grid = grid_with(at, "rows_added").set_index("version")
    assert list(grid.index) == [6, 5, 4, 3]
    assert grid["operation"].to_dict() == {
        3: "branch created",
        4: "append",
        5: "update",
        6: "delete",
    }
    tables = {v: dev_at(uri, v) for v in (3, 4, 5, 6)}
    assert grid["rows"].to_dict() == {v: t.num_rows for v, t in tables.items()}
    assert (grid.loc[3, "rows_added"], grid.loc[3, "rows_deleted"]) == (0, 0)
    for v in (4, 5, 6):
        truth = by_id(tables[v - 1], tables[v])
        got = grid.loc[v]
        assert (got["rows_added"], got["rows_deleted"], got["rows_updated"]) == (
            len(truth["inserted"]),
            len(truth["deleted"]),
            len(truth["updated"]),
        ), v
    assert "v3: branch dev made from main at version 3" in texts(at)  # the version's note
    assert "Branch dev was made from main at version 3" in texts(at)


def compare_with_parent(at: Any, key: list[str]) -> None:
    widget(at.multiselect, f"{state.Versions.BRANCH_CHANGES_FORM}.", ".key").set_value(key)
    widget(
        at.button, f"FormSubmitter:{state.Versions.BRANCH_CHANGES_FORM}.", "-Compare with parent"
    ).click().run()
    assert_no_exception(at)


def test_compare_with_parent_needs_a_key_then_shows_the_branchs_rows(make_app, ui_env) -> None:
    uri = with_dev(ui_env)
    at = make_app("versions", query_params=ON_DEV)
    compare_with_parent(at, [])
    (error,) = alerts(at, "error")
    assert "key" in error and "stable row ids" in error  # refused, never "no changes"
    assert not [m for m in at.metric if m.label == "Inserted"]

    compare_with_parent(at, ["id"])
    assert not alerts(at, "error")
    parent = lance.dataset(uri, version=3).to_table()  # main at the version dev was made at
    truth = by_id(parent, dev_at(uri))
    assert truth == {"inserted": [6], "deleted": [4], "updated": [2]}  # main's v4 not in it
    metrics = figures(at)
    assert (metrics["Inserted"], metrics["Updated"], metrics["Deleted"]) == (
        str(len(truth["inserted"])),
        str(len(truth["updated"])),
        str(len(truth["deleted"])),
    )
    assert "main v3 → dev v6, compared on the key id" in texts(at)
    rows = grid_with(at, "changed")
    assert rows["id"].tolist() == truth["updated"] and rows["changed"].tolist() == ["item"]
    new = dev_at(uri)
    assert rows["item"].tolist() == new.filter(pc.equal(new["id"], 2))["item"].to_pylist()

    widget(at.button_group, f"{state.Versions.BRANCH_CHANGES_VIEW}.kind").set_value("deleted").run()
    assert_no_exception(at)
    shown = [d.value for d in at.dataframe if list(d.value.columns) == ["id", "item"]]
    assert [s["id"].tolist() for s in shown] == [truth["deleted"]]


def test_a_version_not_on_the_branch_is_refused_by_its_row_compare(make_app, ui_env) -> None:
    """The branch's compare of two versions checks both against the branch's own history:
    main's version 2 (older than the branch) is refused in the branch's terms and nothing is
    compared; two of the branch's versions are compared."""
    with_dev(ui_env)
    at = make_app("versions", query_params=ON_DEV)
    at.session_state[state.Versions.BRANCH_COMPARE_OPEN] = True
    at.run()
    assert_no_exception(at)
    prefix = f"{state.Versions.ROW_CHANGES_FORM}."
    assert widget(at.number_input, prefix, ".b").value == 6  # the version shown
    assert widget(at.number_input, prefix, ".a").value == 5  # the branch's one before it

    def compare(a: int, b: int) -> None:
        widget(at.number_input, prefix, ".a").set_value(a)
        widget(at.number_input, prefix, ".b").set_value(b)
        widget(at.multiselect, prefix, ".key").set_value(["id"])
        widget(at.button, f"FormSubmitter:{prefix}", "-Compare rows").click().run()
        assert_no_exception(at)

    compare(2, 6)
    assert alerts(at, "error") == ["Version 2 does not exist on branch dev."]
    assert not [m for m in at.metric if m.label == "Inserted"]
    compare(4, 6)
    assert not alerts(at, "error")
    assert figures(at)["Deleted"] == "1"  # dev's v6 deleted id 4


def pick_version(at: Any, version: int) -> None:
    widget(at.selectbox, state.Versions.BRANCH_VERSION).select(version).run()
    assert_no_exception(at)


def test_restore_and_tag_act_on_the_branch(make_app, ui_env) -> None:
    uri = with_dev(ui_env)
    main_before = lance.dataset(uri)
    at = make_app("versions", query_params=ON_DEV)
    pick_version(at, 4)
    assert_no_exception(at)

    # tag v4 of dev
    widget(at.text_input, "versions.tags", ".create.name").input("dev-good")
    widget(at.button, "FormSubmitter:versions.tags", "-Tag v4").click().run()
    assert_no_exception(at)
    assert alerts(at, "success") == ["Tagged v4 of branch dev of sales › orders as dev-good."]
    tag = lance.dataset(uri).tags.list()["dev-good"]
    assert (tag["branch"], tag["version"]) == ("dev", 4)

    # restore v4 of dev: a new version of dev with v4's rows; main untouched
    pick_version(at, 4)
    at.session_state[state.Versions.RESTORE_OPEN] = True
    at.run()
    assert_no_exception(at)
    assert "Restoring makes a new latest version of branch dev, v7" in texts(at)
    widget(at.checkbox, "versions.restore", ".4.confirm").check()
    widget(at.button, "FormSubmitter:versions.restore", "-Restore v4").click().run()
    assert_no_exception(at)
    assert alerts(at, "success") == [
        "Restored v4 of sales › orders on branch dev as v7, the new latest version of the branch."
    ]
    assert dev_at(uri).sort_by("id").equals(dev_at(uri, 4).sort_by("id"))
    assert lance.dataset(uri).checkout_version(("dev", None)).version == 7
    main_after = lance.dataset(uri)
    assert main_after.version == main_before.version
    assert main_after.to_table().equals(main_before.to_table())
    assert "Branch dev: 5 versions" in texts(at)


def test_read_only_disables_restore_and_tags_on_a_branch(make_app, ui_env) -> None:
    with_dev(ui_env)
    at = make_app("versions", query_params={**ON_DEV, "ro": "true"})
    pick_version(at, 4)
    at.session_state[state.Versions.RESTORE_OPEN] = True
    at.run()
    assert_no_exception(at)
    writes = {
        b.key.rsplit("-", 1)[-1]: b.disabled
        for b in at.button
        if b.key and b.key.startswith("FormSubmitter:versions.")
    }
    assert writes["Restore v4"] is True and writes["Tag v4"] is True
    assert writes["Compare with parent"] is False  # a read stays


def test_over_rest_a_branch_says_what_the_server_cannot_do(make_app, ui_env, monkeypatch) -> None:
    """pylance's REST server answers QueryTable from main and looks a branch's tag version up
    on main: the compare is refused (never main's rows shown as the branch's) and the tag
    write reported as the server ignoring the branch; the change log has each version's
    rows."""
    from backend.services import change_log as cl
    from tests.conftest import RestServer

    uri = with_dev(ui_env)
    server = RestServer(ui_env)
    try:
        monkeypatch.setenv("LANCE_CONSOLE_TARGET", server.url)
        at = make_app("versions", query_params=ON_DEV)
        assert "Branch dev: 4 versions" in texts(at)
        at.session_state[state.Versions.CHANGE_LOG_OPEN] = True
        at.run()
        assert_no_exception(at)
        grid = grid_with(at, "rows_added").set_index("version")
        assert grid["rows"].to_dict() == {v: dev_at(uri, v).num_rows for v in (3, 4, 5, 6)}
        assert grid.loc[3, "operation"] == "branch created"
        assert cl.REST_BRANCH_NOTE in texts(at)

        compare_with_parent(at, ["id"])
        (error,) = alerts(at, "error")
        assert "answers query_table from main" in error
        assert not [m for m in at.metric if m.label == "Inserted"]

        widget(at.text_input, "versions.tags", ".create.name").input("dev-tag")
        widget(at.button, "FormSubmitter:versions.tags", "-Tag v6").click().run()
        assert_no_exception(at)
        assert not alerts(at, "success")
        (error,) = alerts(at, "error")  # the server would look for main's version 6
        assert "ignores the branch of DescribeTable" in error and "nothing was sent" in error
        assert "dev-tag" not in lance.dataset(uri).tags.list()
    finally:
        server.stop()


def branch_summary_page() -> None:
    """The branch summary of a branch whose answer gave a time no frame holds (``created``
    read as unknown: ``branches.list_branches``), and the version details' time text."""
    import pandas as pd
    import streamlit as st

    from components.branches import render_branch_summary
    from components.versions.details import created_text

    info = {"parent_branch": None, "parent_version": 3, "created": pd.NaT}
    versions = pd.DataFrame({"version": [4], "timestamp": [pd.NaT], "manifest_size": [10]})
    render_branch_summary("far", info, versions)
    st.text(f"created {created_text(10**17)} / {created_text(1_700_000_000_000)}")


def test_times_not_known_are_said_so_on_the_page() -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(branch_summary_page, default_timeout=30)
    at.run()
    assert_no_exception(at)
    said = texts(at)
    assert "Made from main v3. Its versions start at version 3, its own copy of main v3" in said
    assert "created — / 2023-11-14 22:13:20.000 UTC" in said
