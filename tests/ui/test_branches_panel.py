"""AppTest: the Branches panel and the branch picker of "Versions" (real local namespace)."""

from __future__ import annotations

import json

import lance

import backend
from backend.services import branches
from components import state
from components.branches import picker_key
from tests.ui.conftest import assert_no_exception, texts, widget

ORDERS = {"ns": "sales", "table": "orders"}
TID = ["sales", "orders"]
PICKER = picker_key(state.Versions.PICKER)


def _lance_branches(ui_env) -> dict:
    ns = backend.connect(str(ui_env))
    return lance.dataset(ns.table_location(TID)).branches.list()


def open_panel(at) -> None:
    at.session_state[state.Versions.BRANCHES_OPEN] = True
    at.run()
    assert_no_exception(at)


def create(at, name: str, version: str = "") -> None:
    widget(at.text_input, "versions.branches", ".new.name").input(name)
    widget(at.text_input, "versions.branches", ".new.version").input(version)
    widget(at.button, "FormSubmitter:versions.branches", "-Create branch").click().run()
    assert_no_exception(at)


def test_create_pick_and_delete_a_branch(make_app, ui_env) -> None:
    at = make_app("versions", query_params=ORDERS)
    open_panel(at)
    # keyed tabs: the page's poll for outside commits leaves the open one open
    tabs = state.versions_form(state.Versions.BRANCHES, TID) + ".tabs"
    assert [t.label for t in at.get_by_key(tabs).children.values()] == ["Create", "Delete"]
    create(at, "dev")
    made = _lance_branches(ui_env)["dev"]
    assert (made["parent_branch"], made["parent_version"]) == (None, 3)  # main's latest
    assert "Created branch dev from main (latest): main version 3" in texts(at)

    open_panel(at)
    create(at, "old", "1")
    assert _lance_branches(ui_env)["old"]["parent_version"] == 1
    open_panel(at)
    grid = next(d.value for d in at.dataframe if "parent_version" in d.value.columns)
    assert dict(zip(grid["branch"], grid["parent_version"], strict=True)) == {"dev": 3, "old": 1}

    # the picker shows the branch's own versions (lance: the branch starts at version 1)
    at.selectbox(key=PICKER).select("old").run()
    assert_no_exception(at)
    assert "Branch old: 1 version" in texts(at)
    linked = make_app("versions", query_params={**ORDERS, state.QP_BRANCH: "old"})  # ?branch=
    assert linked.selectbox(key=PICKER).value == "old"
    assert "Branch old: 1 version" in texts(linked)
    unknown = make_app("versions", query_params={**ORDERS, state.QP_BRANCH: "gone"})
    assert unknown.selectbox(key=PICKER).value == "main"  # falls back to main, and says so
    assert "has no branch gone (deleted, or a stale link): showing main" in texts(unknown)
    shown = next(
        d.value
        for d in at.dataframe
        if list(d.value.columns) == ["version", "timestamp", "manifest_size"]
    )
    ns = backend.connect(str(ui_env))
    own = lance.dataset(ns.table_location(TID)).checkout_version(("old", None)).versions()
    assert shown["version"].tolist() == sorted((v["version"] for v in own), reverse=True) == [1]

    # delete: typed confirmation first
    open_panel(at)
    widget(at.selectbox, "versions.branches", ".del.pick").select("dev")
    widget(at.text_input, "versions.branches", ".del.form.confirm").input("de")
    widget(at.button, "FormSubmitter:versions.branches", "-Delete branch").click().run()
    assert "type dev exactly to confirm" in texts(at)
    assert set(_lance_branches(ui_env)) == {"dev", "old"}
    widget(at.text_input, "versions.branches", ".del.form.confirm").input("dev")
    widget(at.button, "FormSubmitter:versions.branches", "-Delete branch").click().run()
    assert_no_exception(at)
    assert set(_lance_branches(ui_env)) == {"old"}
    assert set(branches.list_branches(ns, TID)["branch"]) == {"old"}


def test_deleting_the_branch_shown_returns_to_main_without_a_stale_link_warning(
    make_app, ui_env
) -> None:
    at = make_app("versions", query_params=ORDERS)
    open_panel(at)
    # keyed tabs: the page's poll for outside commits leaves the open one open
    tabs = state.versions_form(state.Versions.BRANCHES, TID) + ".tabs"
    assert [t.label for t in at.get_by_key(tabs).children.values()] == ["Create", "Delete"]
    create(at, "dev")
    at.selectbox(key=PICKER).select("dev").run()
    assert "Branch dev: 1 version" in texts(at)
    assert at.query_params.get(state.QP_BRANCH) == "dev"

    open_panel(at)
    widget(at.selectbox, "versions.branches", ".del.pick").select("dev")
    widget(at.text_input, "versions.branches", ".del.form.confirm").input("dev")
    widget(at.button, "FormSubmitter:versions.branches", "-Delete branch").click().run()
    assert_no_exception(at)
    assert _lance_branches(ui_env) == {}
    assert "Deleted branch dev." in texts(at)
    assert "stale link" not in texts(at)
    assert state.QP_BRANCH not in at.query_params
    assert "Branches (0)" in [e.label for e in at.expander]
    assert not [b for b in at.selectbox if b.key == PICKER]  # main alone: no picker


def list_selection_default(at) -> list[int]:
    """The versions the list shows as selected when its grid is drawn anew (its default)."""
    grid = next(d for d in at.dataframe if d.key == state.Versions.GRID)
    if not grid.proto.selection_default:
        return []
    rows = json.loads(grid.proto.selection_default)["selection"]["rows"]
    return [int(grid.value["version"].iloc[i]) for i in rows]


def test_back_on_main_the_list_selects_the_version_shown(make_app, ui_env) -> None:
    """A branch's page draws its own list, not main's: back on main, main's list is drawn
    anew, and it selects the version the details show (not none, as a grid drawn anew
    ignores the selection the session kept)."""
    at = make_app("versions", query_params=ORDERS)
    assert list_selection_default(at) == [3]
    open_panel(at)
    create(at, "dev")
    at.selectbox(key=PICKER).select("dev").run()
    assert not [d for d in at.dataframe if d.key == state.Versions.GRID]  # the branch's list
    at.selectbox(key=PICKER).select("main").run()
    assert_no_exception(at)
    assert at.selectbox(key=state.QP_VERSION).value == 3
    assert list_selection_default(at) == [3]


def test_back_from_a_table_without_versions_the_list_selects_the_version_shown(
    make_app, ui_env
) -> None:
    """The other way main's list misses a run: a declared-only table picked (its page stops
    before any list), then the table again: the list is drawn anew, selecting the latest."""
    at = make_app("versions", query_params=ORDERS)
    assert list_selection_default(at) == [3]
    at.selectbox(key=f"{state.Versions.PICKER}.table").select("pending").run()
    assert "pending has no versions yet" in texts(at)
    assert not [d for d in at.dataframe if d.key == state.Versions.GRID]
    at.selectbox(key=f"{state.Versions.PICKER}.table").select("orders").run()
    assert_no_exception(at)
    assert list_selection_default(at) == [3]


def test_a_bad_branch_name_is_refused_and_nothing_is_created(make_app, ui_env) -> None:
    at = make_app("versions", query_params=ORDERS)
    open_panel(at)
    create(at, "main")
    assert "default branch" in texts(at)
    create(at, "x", "99")
    assert "has no version 99" in texts(at)
    create(at, "y", "²")  # a digit to str.isdigit, not to int
    assert "Branch not created: '²' is not a version number (1 or more)." in texts(at)
    assert _lance_branches(ui_env) == {}


def test_a_write_on_main_keeps_the_branches_read_a_branch_write_reads_them_again(
    make_app, ui_env, monkeypatch
) -> None:
    """Restoring a version of main changes no branch: the branches are not listed again
    (one request fewer per write, a round trip over REST); creating a branch lists them."""
    listings = []
    real = branches.list_branches
    monkeypatch.setattr(
        branches, "list_branches", lambda ns, tid: listings.append(tid) or real(ns, tid)
    )
    at = make_app("versions", query_params={**ORDERS, "version": "1"})
    open_panel(at)
    create(at, "dev")
    assert "Branches (1)" in [e.label for e in at.expander]
    before = len(listings)

    at.session_state[state.Versions.RESTORE_OPEN] = True
    at.run()
    widget(at.checkbox, "versions.restore", ".1.confirm").check()
    widget(at.button, "FormSubmitter:versions.restore", "-Restore v1").click().run()
    assert_no_exception(at)
    ns = backend.connect(str(ui_env))
    assert lance.dataset(ns.table_location(TID)).version == 4  # the restore: main's v4
    assert "Branches (1)" in [e.label for e in at.expander]
    assert len(listings) == before  # main's write: the branches kept

    open_panel(at)
    create(at, "later")
    assert set(_lance_branches(ui_env)) == {"dev", "later"}
    assert "Branches (2)" in [e.label for e in at.expander]
    assert len(listings) > before  # a branch made: listed again
