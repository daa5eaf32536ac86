"""AppTest of the Maintenance page (``components.maintenance``): the dry run's figures match
lance's own count of each table, running the plan as one job compacts (read back with lance), an admin
saves a policy that another connection reads back, and an editor may not."""

from __future__ import annotations

import json

import lance
import pandas as pd
import pyarrow as pa
from lance_namespace import (
    CreateTableRequest,
    DescribeTableRequest,
    ListNamespacesRequest,
    ListTablesRequest,
)

import backend
from backend.services import health, jobs
from backend.services import maintenance as mt
from backend.text import human_bytes
from components import feedback, state
from components import maintenance as cm
from tests.support import ipc_stream_bytes
from tests.ui.conftest import (
    alerts,
    app_as,
    assert_no_exception,
    button,
    displayed,
    open_page,
    texts,
)

PAGE = "views/maintenance.py"
T = ["sales", "frag"]


def rows(start: int, n: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64())})


def add_fragmented_table(root) -> str:
    """``sales$frag``: four small fragments; returns its location."""
    ns = backend.connect(str(root))
    ns.create_table(CreateTableRequest(id=T), ipc_stream_bytes(rows(0, 30)))
    location = ns.describe_table(DescribeTableRequest(id=T)).location
    for i in range(1, 4):
        lance.write_dataset(rows(30 * i, 30), location, mode="append")
    return location


def plan_grid(at) -> pd.DataFrame:
    for frame in at.dataframe:
        if {"action", "run", "why"} <= set(frame.value.columns):
            return frame.value
    raise AssertionError("no plan on the page")


def results_grid(at) -> pd.DataFrame:
    for frame in at.dataframe:
        if list(frame.value.columns) == ["table", "action", "status", "result", "seconds"]:
            return frame.value
    raise AssertionError("no results on the page")


def test_plan_shows_lance_figures_and_the_run_compacts(ui_env, make_app) -> None:
    location = add_fragmented_table(ui_env)
    at = make_app("tables", query_params={"ns": "sales"})
    open_page(at, PAGE)
    assert_no_exception(at)
    assert "namespace sales: no saved policy, the default applies." in texts(at)
    # keyed: a rerun that draws the page above it anew leaves it open
    assert at.get_by_key(state.Maintenance.EDIT_POLICY_OPEN).label == "Edit the policy"
    button(at, "Make the plan (dry run)").click().run()
    assert_no_exception(at)
    grid = plan_grid(at)
    ns = backend.connect(str(ui_env))
    for table in ("frag", "orders", "customers"):
        ds = lance.dataset(ns.describe_table(DescribeTableRequest(id=["sales", table])).location)
        fragments = ds.get_fragments()
        small = sum(f.physical_rows < health.SMALL_FRAGMENT_ROWS for f in fragments)
        shown = grid[grid["table"] == table]
        assert set(shown["fragments"]) == {len(fragments)}, table
        assert set(shown["small_fragments"]) == {small}, table
        assert list(shown["small_share"].round(6)) == [
            round(100 * small / len(fragments), 6)
        ] * len(shown)
    assert "declared only" in grid.loc[grid["table"] == "pending", "why"].iloc[0]
    # counts drawn as every count (1,024); the bytes old versions hold as every size
    element = next(d for d in at.dataframe if "small_share" in d.value.columns)
    config = json.loads(element.proto.columns)
    counts = ("fragments", "small_fragments", "old_versions")
    assert {config[c]["type_config"]["format"] for c in counts} == {"localized"}
    held = grid["old_bytes"]
    assert held.notna().any() and pd.api.types.is_numeric_dtype(held)
    drawn = displayed(element)["old_bytes"]
    assert [drawn[i] for i in held.dropna().index] == [human_bytes(v) for v in held.dropna()]
    frag = grid[(grid["table"] == "frag") & (grid["action"] == "compact")].iloc[0]
    assert bool(frag["run"]) and frag["why"].startswith("4 of 4 fragments are small")
    todo = grid[grid["run"]]
    assert any("Dry run of the default policy" in a for a in alerts(at, "info"))
    label = f"Run the plan ({len(todo)} action{'s' if len(todo) != 1 else ''})"
    # every row's reason in full below the grid (the grid's cells cut long ones)
    at.session_state[state.Maintenance.REASONS_OPEN] = True
    at.run()
    (reasons,) = [m.value for m in at.markdown if "would run)" in m.value]
    lines = reasons.split("\n")
    assert len(lines) == len(grid)
    (frag_line,) = [line for line in lines if line.startswith("- **frag · compact**")]
    assert frag_line == f"- **frag · compact** (would run): {feedback.as_text(frag['why'])}" + (
        f"; expected effect: {feedback.as_text(frag['effect'])}"
    )

    button(at, label).click().run()
    assert_no_exception(at)
    # the run is one job of kind plan, recorded with the namespace, followed by the session
    (job_id,) = at.session_state[state.Jobs.FOLLOWED]
    job = jobs.wait(ns, job_id, timeout=120)
    assert (job.kind, job.table_id, job.state) == ("plan", ("sales",), "succeeded")
    assert [j.id for j in jobs.list_jobs(ns, kinds=["plan"])] == [job_id]
    at.run()
    at.run()
    assert_no_exception(at)
    ds = lance.dataset(location)
    assert len(ds.get_fragments()) == 1 and ds.count_rows() == 120
    results = results_grid(at)
    recorded = mt.report_of(jobs.get(ns, job_id))
    assert recorded is not None
    assert results[["table", "action", "status"]].equals(
        recorded.frame()[["table", "action", "status"]]
    )
    assert set(zip(results["table"], results["action"], strict=True)) == set(
        zip(todo["table"], todo["action"], strict=True)
    )
    assert set(results["status"]) == {"done"}
    frag_result = results[(results["table"] == "frag") & (results["action"] == "compact")]
    assert frag_result["result"].iloc[0].endswith("4 fragments → 1 fragment")
    assert any(f"{len(todo)} done" in a for a in alerts(at, "success"))


def test_a_plan_of_a_namespace_without_tables_names_the_namespaces_inside(ui_env, make_app) -> None:
    """The root holds namespaces only: its plan says so and names them (a plan covers one
    namespace's tables), with no empty grid and no run of nothing."""
    ns = backend.connect(str(ui_env))
    inside = sorted(ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces)
    assert inside and not ns.list_tables(ListTablesRequest(id=[])).tables
    at = make_app("tables")
    open_page(at, PAGE)
    button(at, "Make the plan (dry run)").click().run()
    assert_no_exception(at)
    (said,) = [a for a in alerts(at, "info") if a.startswith("Dry run")]
    assert "(root) holds no tables of its own" in said and "Nothing was changed." in said
    assert said.endswith(f"in the Namespace box: {', '.join(inside)}. Nothing was changed.")
    assert not [f for f in at.dataframe if {"action", "why"} <= set(f.value.columns)]
    assert not [b for b in at.button if b.label.startswith("Run the plan")]


def test_an_admin_saves_the_policy_and_an_editor_may_not(ui_env, make_app, roles) -> None:
    at = app_as("ada@example.com", query={"ns": "sales"})
    open_page(at, PAGE)
    assert_no_exception(at)
    form = state.maintenance_form(["sales"])
    at.checkbox(key=f"{form}.compact").uncheck()
    at.number_input(key=f"{form}.cleanup.older_than_days").set_value(30)
    at.number_input(key=f"{form}.optimize.unindexed_share").set_value(12.5)
    button(at, "Save the policy").click().run()
    assert_no_exception(at)
    assert "Maintenance policy of sales saved." in alerts(at, "success")
    saved = mt.load_policy(backend.connect(str(ui_env)), ["sales"])
    assert saved.source == mt.SAVED and saved.saved_by == "ada@example.com"
    assert saved.policy.rules == mt.Rules(
        compact=None, optimize=mt.OptimizeRule(0.125), cleanup=mt.CleanupRule(30)
    )
    assert list((ui_env / "_console" / "maintenance_policies").glob("*.json"))
    text = texts(at)
    assert "namespace sales: the policy saved by ada@example.com" in text
    assert "compact: off" in text and "older than 30 days" in text

    editor = app_as("ed@example.com", query={"ns": "sales"})  # writes, but not the policy
    open_page(editor, PAGE)
    assert_no_exception(editor)
    assert button(editor, "Save the policy").disabled
    assert button(editor, "Back to the default policy").disabled
    assert "may not change the namespace's maintenance policy (admins only)" in texts(editor)

    button(at, "Back to the default policy").click().run()
    assert_no_exception(at)
    assert mt.load_policy(backend.connect(str(ui_env)), ["sales"]).source == mt.DEFAULT
    assert "namespace sales: no saved policy, the default applies." in texts(at)


def test_overrides_editor_rows_round_trip() -> None:
    policy = mt.policy_from_dict(
        {
            "kinds": {"compact": {"small_share": 0.3}, "cleanup": {}},
            "tables": {
                "events": {"cleanup": {"older_than_days": 30}, "optimize": {}},
                "scratch": {"compact": False, "cleanup": False},
            },
        }
    )
    frame = cm.overrides_frame(policy)
    assert list(frame["table"]) == ["events", "scratch"]
    assert list(frame["compact"]) == [cm.INHERIT, cm.OFF]
    assert list(frame["optimize"]) == [cm.ON, cm.INHERIT]
    assert frame.loc[0, "cleanup.older_than_days"] == 30
    back = mt.policy_from_dict(
        {"kinds": policy.to_dict()["kinds"], "tables": cm.overrides_from_frame(frame)}
    )
    assert back == policy
    # a share typed in percent is a fraction; a setting given is the kind on for that table
    typed = pd.DataFrame(
        [{"table": "t", "compact": cm.INHERIT, "compact.small_share": 50.0}, {"table": None}]
    )
    assert cm.overrides_from_frame(typed) == {"t": {"compact": {"small_share": 0.5}}}
