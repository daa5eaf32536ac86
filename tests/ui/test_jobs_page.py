"""AppTest of the Jobs page (``app/views/jobs.py``) and of a table page's own jobs, on a real
local namespace: jobs of this process and of other consoles (their records as those write
them), their true states, Run again and Cancel, and the buttons' role checks."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import backend
from backend.local.job_store import open_job_store
from backend.services import jobs
from components import state
from tests.ui.conftest import (
    alerts,
    app_as,
    assert_no_exception,
    button,
    open_page,
    plain,
    texts,
)

ORDERS = ["sales", "orders"]


def other_console(store: Any, job_id: str, **fields: Any) -> None:
    """A job record as another console process writes it."""
    now = time.time()
    store.put(
        job_id,
        {
            "kind": "compact", "label": "compaction", "table_id": ORDERS, "params": {},
            "state": "running", "who": "someone@example.com", "role": "editor",
            "created_at": now - 5, "started_at": now - 4, "heartbeat_at": now,
            "host": "elsewhere.example", "pid": 1, "stage": "compacting: 1 of 2 tasks done",
            "fraction": 0.5, "cancellable": True, "executor": "local", **fields,
        },
    )  # fmt: skip


# The main area's width at 1440 px beside the sidebar (Streamlit's wide layout), and the
# jobs grid's own borders.
MAIN_AREA_PX = 980
GRID_BORDERS_PX = 12


def jobs_grid(at: Any) -> Any:
    (grid,) = [d for d in at.dataframe if "state" in d.value.columns and "who" in d.value.columns]
    return grid


def grid_states(at: Any) -> dict[str, str]:
    grid = jobs_grid(at)
    return dict(zip(grid.value["id"], grid.value["state"], strict=True))


def shown_columns_fit(grid: Any, room: int = MAIN_AREA_PX) -> list[str]:
    """The grid's columns shown, after checking that each has a width and together they fit
    ``room`` (no column reached only by scrolling the grid)."""
    shown = list(grid.proto.column_order)
    config = json.loads(grid.proto.columns)
    widths = [config[c]["width"] for c in shown]
    assert all(isinstance(w, int) for w in widths), widths
    assert sum(widths) + GRID_BORDERS_PX <= room, dict(zip(shown, widths, strict=True))
    return shown


def test_the_jobs_page_shows_true_states_and_runs_an_interrupted_job_again(
    ui_env, make_app
) -> None:
    ns = backend.connect(str(ui_env))
    store = open_job_store(ns)
    done = jobs.wait(ns, jobs.submit(ns, "compact", ORDERS, {}).id, timeout=60)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    other_console(store, "from-a-dead-console", host=jobs.HOST, pid=gone.pid)
    build = {"column": "id", "index_type": "BTREE", "name": "by_id"}
    other_console(
        store, "running-elsewhere", kind="create_index", label="index build by_id",
        params=build, stage="load_data",
    )  # fmt: skip

    at = make_app("jobs")
    assert_no_exception(at)
    assert grid_states(at) == {
        done.id: "succeeded",
        "from-a-dead-console": "interrupted",
        "running-elsewhere": "running",
    }
    # no job ran on a branch: no Branch column; every column in view at 1440 px
    assert shown_columns_fit(jobs_grid(at)) == [
        "id", "kind", "table", "state", "progress", "stage", "who", "created", "elapsed_s",
    ]  # fmt: skip
    at.selectbox(key=f"{state.Jobs.LIST}.pick").set_value("from-a-dead-console").run()
    assert_no_exception(at)
    (warning,) = alerts(at, "warning")
    assert warning.startswith(
        f"Interrupted: the process that ran it (pid {gone.pid} on {jobs.HOST}) has ended."
    )
    button(at, "Run again").click().run()
    assert_no_exception(at)
    (again,) = [j for j in at.session_state[state.Jobs.FOLLOWED] if j != done.id]
    rerun = jobs.wait(ns, again, timeout=60)
    assert rerun.state == "succeeded" and rerun.rerun_of == "from-a-dead-console"
    assert f"Compaction started again as job {again}." in alerts(at, "success")

    at.selectbox(key=f"{state.Jobs.LIST}.pick").set_value("running-elsewhere").run()
    (bar,) = at.get("progress")
    assert (bar.value, plain(bar.proto.text).split(" (")[0]) == (50, "load_data")
    assert "by someone@example.com (editor)" in texts(at)
    button(at, "Cancel").click().run()
    assert_no_exception(at)
    assert store.cancel_requested("running-elsewhere")
    assert store.get("running-elsewhere")["cancel_requested"] is True
    assert any(a.startswith("Cancel asked for index build by_id") for a in alerts(at, "success"))


def test_the_indexes_page_lists_the_tables_own_jobs(ui_env, make_app) -> None:
    ns = backend.connect(str(ui_env))
    other_console(open_job_store(ns), "running-elsewhere")
    at = make_app("indexes", query_params={"ns": "sales", "table": "orders"})
    assert_no_exception(at)
    (box,) = [e for e in at.expander if e.label.startswith("Jobs of this table")]
    assert box.label == "Jobs of this table (1, 1 running)"
    at.session_state[f"{state.Jobs.TABLE_JOBS}.open"] = True  # open it (drawn only then)
    at.run()
    assert_no_exception(at)
    assert grid_states(at) == {"running-elsewhere": "running"}
    # the table's own jobs: no Table column (the page names the table)
    assert "table" not in shown_columns_fit(jobs_grid(at))
    # the maintenance buttons wait for the compaction another console runs
    assert at.button(key=f"{state.Indexes.MAINT}.compact").disabled


def test_a_viewer_sees_jobs_but_may_not_cancel_or_rerun(ui_env, roles) -> None:
    ns = backend.connect(str(ui_env))
    other_console(open_job_store(ns), "running-elsewhere")
    at = app_as("vi@example.com")
    open_page(at, "jobs")
    assert_no_exception(at)
    assert grid_states(at) == {"running-elsewhere": "running"}
    assert button(at, "Cancel").disabled
    assert "Disabled: the viewer role may not change the namespace" in texts(at)


def test_the_jobs_page_shows_a_jobs_branch_and_a_plans_results(ui_env, make_app) -> None:
    """A compaction submitted on branch dev lists its branch, and Run again runs it on dev;
    a maintenance plan's job lists its namespace and its per-table results."""
    from backend.branch_view import on_branch
    from backend.services import branches
    from backend.services import maintenance as mt

    ns = backend.connect(str(ui_env))
    branches.create_branch(ns, ORDERS, "dev")
    on_dev = jobs.wait(ns, jobs.submit(on_branch(ns, "dev"), "compact", ORDERS, {}).id, 60)
    plan = mt.plan(ns, ["sales"])
    ran = jobs.wait(ns, mt.submit_plan(ns, plan).id, timeout=120)
    assert on_dev.state == ran.state == "succeeded"
    at = make_app("jobs")
    assert_no_exception(at)
    (grid,) = [d for d in at.dataframe if "branch" in d.value.columns]
    assert "branch" in grid.proto.column_order  # a job ran on one
    shown = grid.value.set_index("id")
    assert (shown.loc[on_dev.id, "branch"], shown.loc[on_dev.id, "table"]) == (
        "dev",
        "sales/orders",
    )
    assert (shown.loc[ran.id, "branch"], shown.loc[ran.id, "table"]) == ("", "namespace sales")
    at.selectbox(key=f"{state.Jobs.LIST}.pick").set_value(on_dev.id).run()
    assert "of sales/orders on branch dev: succeeded" in texts(at)
    button(at, "Run again").click().run()
    assert_no_exception(at)
    (again,) = [j for j in at.session_state[state.Jobs.FOLLOWED] if j not in (on_dev.id, ran.id)]
    assert jobs.wait(ns, again, timeout=60).branch == "dev"

    at.selectbox(key=f"{state.Jobs.LIST}.pick").set_value(ran.id).run()
    assert_no_exception(at)
    report = mt.report_of(ran)
    assert report is not None
    (results,) = [d for d in at.dataframe if "status" in d.value.columns]
    expected = report.frame()
    assert results.value[["table", "action", "status"]].equals(
        expected[["table", "action", "status"]]
    )
    assert f"Results: {report.summary()}" in texts(at)
