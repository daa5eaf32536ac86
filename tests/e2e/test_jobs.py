"""The Jobs page in the browser: a compaction whose console process died reads interrupted;
Run again starts it anew in this console, the page follows it to its end, and the table is
compacted as lance compacts it."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from lance_namespace import CreateTableRequest, InsertIntoTableRequest
from playwright.sync_api import Page, expect

from backend.local.job_store import open_job_store
from backend.services import jobs
from tests.support import ipc_stream_bytes as ipc

from .harness import Console, choose, fits_width, goto, grid, settle, widget
from .harness import id_rows as rows
from .test_search import alert, click


def test_an_interrupted_compaction_is_run_again_from_the_jobs_page(
    page: Page, console_local: Console, shot: Callable[..., Path]
) -> None:
    console = console_local
    ns = console.client()
    name = f"jobs_{uuid.uuid4().hex[:6]}"
    table = [name]
    ns.create_table(CreateTableRequest(id=table), ipc(rows(0, 10)))
    for i in range(1, 4):
        ns.insert_into_table(InsertIntoTableRequest(id=table, mode="append"), ipc(rows(10 * i, 10)))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    job_id = f"dead-{name}"
    now = time.time()
    open_job_store(ns).put(
        job_id,
        {
            "kind": "compact", "label": "compaction", "table_id": table, "params": {},
            "state": "running", "who": "someone@example.com", "created_at": now - 30,
            "started_at": now - 29, "heartbeat_at": now - 1, "host": jobs.HOST, "pid": gone.pid,
            "stage": "compacting: 0 of 1 task done", "fraction": 0.0, "cancellable": True,
        },
    )  # fmt: skip

    goto(page, console, "jobs")
    main = page.get_by_test_id("stMain")
    choose(main, "Job", job_id)
    expect(alert(main, "Interrupted: the process that ran it")).to_be_visible()
    shot("interrupted")
    click(page, main, "Run again")
    expect(alert(main, "Compaction started again as job")).to_be_visible()
    again = next(j for j in jobs.list_jobs(ns, table) if j.rerun_of == job_id)
    assert jobs.wait(ns, again.id, timeout=60).state == "succeeded"
    choose(main, "Job", again.id)
    settle(page)
    expect(main.get_by_text("Done in")).to_contain_text("4 fragments → 1 fragment")
    # the box names the job, not a state it had when picked ("running")
    expect(widget(main, "stSelectbox", "Job").get_by_role("combobox")).to_have_value(
        f"{again.id} · compaction · {name}"
    )
    # every column in view at 1440 px: no horizontal scroll bar in the grid
    assert fits_width(grid(main)), "the jobs grid scrolls"
    shot("succeeded")
    assert len(ns.open_dataset(table).get_fragments()) == 1
