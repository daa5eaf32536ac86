"""Interactions, click to settled: the console against a baseline that draws the same elements
without the console's logic.

The baseline (benchmarks/_ui_bench_replay.py) is the console's own pages, recorded: each case's
page before and after the interaction is run once in ``streamlit.testing`` (AppTest) against a
copy of the data, and its messages kept (benchmarks/_ui_replay.py). The replay app draws those
elements again, every one as the browser received it (grids, metrics, widgets, expanders, tabs,
forms, dialogs, widths and heights), inside the console's own frame (navigation, connection
sidebar); on the same click it draws the "after" page, having made the same data operation
through pylance alone (the filter's count and rows of a preview, the version delete, the
declare) on a third copy of the data. console/baseline is then what the console's logic costs:
its reads, checks, caches, gate and audit, and any extra script run, not the page's size.

Cases (each on its own small table, in headless Chromium against real ``streamlit run``
servers):

* ``switch``: the Versions page of a table with 50 indexes; the sidebar's "Indexes" link;
* ``table``: the Versions page; another table picked in the picker's "Table" box;
* ``version``: the Versions page; the next older version picked in the "Version" box;
* ``preview``: "Manage versions" > "Delete rows" of a 20,000-row table; a filter previewed
  (the panel is a fragment: the console runs and draws only the panel again, the replay
  the whole page, as AppTest records whole runs);
* ``delete``: "Manage versions" > "Delete by range"; one old version deleted (a new one each
  round), confirmed by the table's name;
* ``write``: "Namespaces & tables" of a namespace of 200 tables, the "Declare a table" dialog;
  a new table declared (another name each round), and the page after it.

Settled = a script run started after the click and has finished (``stApp`` back to
``notRunning``), the page's main grid or heading visible, no element a loading skeleton. A
script in the tab notes the time of the click (the first pointer-down after arming) and the
first animation frame at which the app has settled. Steps before the click (opening the
"Manage versions" panel and its tab, the dialog, a picker's list, typing) are not timed; the
replay's "before" page shows them done already. One warm-up, then ``--runs`` rounds
interleaving the two apps; medians compared against the 1.3x target, each ratio with the
range it lies in for 90% of resamples of the run's rounds (benchmarks/_ratio.py).

Usage::

    .venv/bin/python benchmarks/bench_ui_interactions.py [--runs 5] [--only switch,version]
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from playwright.sync_api import Locator, Page, sync_playwright  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402

from benchmarks._ratio import ratio_interval, span  # noqa: E402
from tests.e2e.harness import (  # noqa: E402
    APP_TIMEOUT_MS,
    VIEWPORT,
    StreamlitServer,
    launch_chromium,
    page_url_for,
    wait_for_app,
    widget,
)

TARGET_RATIO = 1.3
NS = "bench"
WIDE = "wide"  # 50 BTREE indexes
HIST = "hist"  # 40 versions
ROWS = "rows"  # 20,000 rows
DEL = "del"  # 40 versions, one deleted per round
MANY = "many"  # 200 declared tables
FILTER = "id < 5000"
ANY_GRID = '[data-testid="stMain"] [data-testid="stDataFrame"]'

# Armed before an interaction: keeps the time of the next pointer-down (the click) and of the
# first animation frame after it at which a script run has come and gone and the page is drawn
# (showing ``text`` when given: a write's result comes with the run after it).
ARM_JS = """
([ready, text]) => {
  const shown = (el) => {
    if (!el) return false;
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== "hidden";
  };
  const app = document.querySelector('[data-testid="stApp"]');
  const now = () => performance.timeOrigin + performance.now();
  window.__benchClick = undefined;
  window.__benchSettled = undefined;
  let ran = false;
  // Any change of the script state after the click is a run (records, not the state when
  // the callback runs: a quick run may have come and gone by then). A run fast enough that
  // its start and end reach the page in one render changes no attribute: then what it drew
  // in the main area is the sign that it ran.
  const watch = new MutationObserver((records) => {
    if (window.__benchClick !== undefined && records.length) ran = true;
  });
  watch.observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
  const main = document.querySelector('[data-testid="stMain"]');
  if (main) watch.observe(main, { childList: true, subtree: true, characterData: true });
  document.addEventListener("pointerdown", () => {
    if (window.__benchClick === undefined) window.__benchClick = now();
  }, { capture: true, once: true });
  const settled = () => ran
    && app.getAttribute("data-test-script-state") === "notRunning"
    && shown(document.querySelector(ready))
    && !shown(document.querySelector('[data-testid="stStatusWidget"]'))
    && document.querySelector('[data-testid="stSkeleton"]') === null
    && (text === null || document.querySelector('[data-testid="stMain"]').innerText.includes(text));
  const frame = () => {
    if (settled()) { window.__benchSettled = now(); watch.disconnect(); }
    else requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}
"""
SETTLE_TIMEOUT_MS = 20_000
TRIES = 3
SHOTS: Path | None = None  # --shots: screenshots of the first measured round


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -- data -----------------------------------------------------------------------------------------


def build(root: Path) -> None:
    """The cases' tables under ``root`` (a directory namespace)."""
    import lance
    import pyarrow as pa
    from lance_namespace import (
        BatchCommitTablesRequest,
        CommitTableOperation,
        CreateNamespaceRequest,
        CreateTableRequest,
        DeclareTableRequest,
        DescribeTableRequest,
    )

    import backend
    from backend.arrow.ipc import to_ipc_stream

    ns = backend.connect(str(root))
    ns.create_namespace(CreateNamespaceRequest(id=[NS]))

    def create(name: str, data: pa.Table) -> Any:
        ns.create_table(CreateTableRequest(id=[NS, name]), to_ipc_stream(data))
        return lance.dataset(ns.describe_table(DescribeTableRequest(id=[NS, name])).location)

    cols = {f"c{j:03d}": pa.array(range(100), pa.int64()) for j in range(50)}
    ds = create(WIDE, pa.table(cols))
    for col in cols:
        ds.create_scalar_index(col, "BTREE", name=f"{col}_idx")
    for name in (HIST, DEL):
        ds = create(name, pa.table({"id": pa.array([1], pa.int64()), "note": ["v"]}))
        for step in range(39):
            ds.update_config({"bench.step": str(step)})
    create(
        ROWS,
        pa.table(
            {
                "id": pa.array(range(20_000), pa.int64()),
                "note": pa.array([f"row {i}" for i in range(20_000)]),
            }
        ),
    )
    ns.create_namespace(CreateNamespaceRequest(id=[MANY]))
    ops = [
        CommitTableOperation(declare_table=DeclareTableRequest(id=[MANY, f"t{i:03d}"]))
        for i in range(200)
    ]
    ns.batch_commit_tables(BatchCommitTablesRequest(operations=ops))


# -- cases ------------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    label: str
    route: str  # the console page's url path
    query: dict[str, str]
    ready: str = ANY_GRID  # what shows that the page after the click is drawn
    # untimed steps in the console only (the replay's "before" shows them done)
    setup: Callable[[Page, int], None] | None = None
    act: Callable[[Page, int], Callable[[], None]] = lambda page, i: lambda: None
    prepare: Callable[[Page, int], None] | None = None  # untimed, both apps, before arming
    shows: str | None = None  # a text the page after the click shows (the action did happen)
    moves: list[dict[str, Any]] = field(default_factory=list)


def _open_manage(tab: str) -> Callable[[Page, int], None]:
    def setup(page: Page, i: int) -> None:
        page.get_by_text("Manage versions: compare", exact=False).first.click()
        wait_for_app(page, APP_TIMEOUT_MS)
        page.get_by_role("tab", name=tab).click()
        wait_for_app(page, APP_TIMEOUT_MS)

    return setup


def _fill(label: str, text: Callable[[int], str]) -> Callable[[Page, int], None]:
    def fill(page: Page, i: int) -> None:
        page.get_by_label(label, exact=True).last.fill(text(i))

    return fill


def _both(*steps: Callable[[Page, int], None]) -> Callable[[Page, int], None]:
    def run(page: Page, i: int) -> None:
        for step in steps:
            step(page, i)

    return run


def _click(name: str) -> Callable[[Page, int], Callable[[], None]]:
    return lambda page, i: page.get_by_role("button", name=name).last.click


def _option(page: Page, text: str | re.Pattern[str]) -> Locator:
    return page.get_by_role("option").filter(has_text=text).first


def _open_list(label: str, text: str | re.Pattern[str]) -> Callable[[Page, int], None]:
    """Open the list of the select box ``label`` (scrolled into view first: a box that had
    to scroll closes its list) until the option ``text`` shows."""

    def prepare(page: Page, i: int) -> None:
        box = widget(page, "stSelectbox", label)
        box.scroll_into_view_if_needed()
        box.get_by_role("button", name="Open").click()
        _option(page, text).wait_for()

    return prepare


def _pick(text: str | re.Pattern[str]) -> Callable[[Page, int], Callable[[], None]]:
    return lambda page, i: _option(page, text).click


OLDER = "39"  # the version a version pick opens (the table's latest is 40)
OLDER_OPTION = re.compile(rf"^{OLDER}$")


def _switch(page: Page, i: int) -> Callable[[], None]:
    return page.get_by_test_id("stSidebarNav").get_by_role("link", name="Indexes").click


def _open_declare(page: Page, i: int) -> None:
    page.get_by_test_id("stPopoverButton").filter(has_text="Add a table").click()  # its menu
    page.get_by_role("button", name="Declare a table").click()
    page.locator('[role="dialog"]:not([data-testid="stPopoverBody"])').wait_for()
    wait_for_app(page, APP_TIMEOUT_MS)


CASES = [
    Case(
        "switch",
        "page switch: Versions -> Indexes (sidebar)",
        "versions",
        {"ns": NS, "table": WIDE},
        act=_switch,
    ),
    Case(
        "table",
        "table pick: another table in the picker",
        "versions",
        {"ns": NS, "table": HIST},
        prepare=_open_list("Table", ROWS),
        act=_pick(ROWS),
    ),
    Case(
        "version",
        "version pick: the next older version in the Version box",
        "versions",
        {"ns": NS, "table": HIST},
        prepare=_open_list("Version", OLDER_OPTION),
        act=_pick(OLDER_OPTION),
    ),
    Case(
        "preview",
        "delete rows: Preview (20,000 rows)",
        "versions",
        {"ns": NS, "table": ROWS},
        setup=_open_manage("Delete rows"),
        prepare=_fill("Filter", lambda i: FILTER),
        act=_click("Preview"),
        shows="5,000 rows",
    ),
    Case(
        "delete",
        "delete by range: one version",
        "versions",
        {"ns": NS, "table": DEL},
        setup=_open_manage("Delete by range"),
        prepare=_both(
            _fill("Versions to delete", lambda i: str(i + 2)),
            _fill(f"Type the table name {DEL} to confirm", lambda i: DEL),
        ),
        act=_click("Delete versions"),
        shows="Deleted 1 version",
    ),
    Case(
        "write",
        "tables page after a write (declare)",
        "tables",
        {"ns": MANY},
        setup=_open_declare,
        prepare=_fill("Table name", lambda i: f"new_{i:03d}"),
        act=_click("Declare table"),
        shows="Declared table many",
    ),
]


# -- recording (AppTest, in process) ------------------------------------------------------------


def record(root: Path, tmp: Path) -> dict[str, Any]:
    """Each case's pages before and after its interaction, as the console draws them on a
    copy of the data (benchmarks/_ui_bench_replay.py's scenario)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from benchmarks._ui_replay import page_tree, recording
    from components import state

    os.environ["LANCE_CONSOLE_TARGET"] = str(root)
    os.environ["LANCE_CONSOLE_CONFIG"] = str(tmp / "record-connections.toml")
    os.environ["LANCE_CONSOLE_AUDIT_DIR"] = str(tmp / "record-audit")  # never the user's
    states: dict[str, Any] = {}
    cases: dict[str, Any] = {}
    pages = {"versions": "views/versions.py", "tables": "views/tables.py"}
    titles = {"versions": "Versions", "tables": "Namespaces & tables", "indexes": "Indexes"}

    def app(case: Case) -> Any:
        st.cache_data.clear()
        st.cache_resource.clear()
        at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=120)
        for key, value in case.query.items():
            at.query_params[key] = value
        at.run()
        if case.route != "tables":
            at.switch_page(pages[case.route]).run()
        return at

    def filled(at: Any) -> None:
        """Until the tables list's figures are read (the console's page once warm); a write's
        result stays shown, as the console's own rerun for the figures keeps it
        (``feedback.keep_flash``)."""
        for _ in range(300):
            if not any("Reading the figures" in str(c.value) for c in at.caption):
                return
            time.sleep(0.1)
            try:
                shown = at.session_state["tables.flash.shown"]
            except KeyError:
                shown = None
            if shown:
                at.session_state["tables.flash"] = shown
            at.run()

    def idle(at: Any, widget_id: str) -> Any:
        for w in at._tree.get_widget_states().widgets:
            if w.id == widget_id:
                kind = w.WhichOneof("value")
                return getattr(w, kind) if kind else None
        return None

    with recording() as kept:
        for case in CASES:
            _log(f"  recording {case.name}")
            at = app(case)
            if case.name == "preview" or case.name == "delete":
                tab = "Delete rows" if case.name == "preview" else "Delete by range"
                at.session_state[state.Versions.MANAGE_OPEN] = True
                at.session_state[state.Versions.MANAGE_TAB] = tab
                at.run()
            if case.name == "write":
                filled(at)
                at.button(key="tables.declare.open").click().run()
            before = page_tree(kept, titles[case.route])
            start = {case.route: f"{case.name}.before"}
            states[f"{case.name}.before"] = before
            moves: list[dict[str, Any]] = []
            if case.name == "switch":
                at.switch_page("views/indexes.py").run()
                states["switch.indexes"] = page_tree(kept, "Indexes")
                start["indexes"] = "switch.indexes"
            elif case.name == "table":
                box = at.selectbox(key=f"{state.Versions.PICKER}.table")
                moves.append({"widget": box.id, "idle": idle(at, box.id)})
                box.set_value(ROWS).run()
            elif case.name == "version":
                box = at.selectbox(key=state.QP_VERSION)
                moves.append({"widget": box.id, "idle": idle(at, box.id)})
                box.set_value(int(OLDER)).run()
            elif case.name == "preview":
                text = next(t for t in at.text_input if t.label == "Filter")
                button = next(b for b in at.button if b.label == "Preview")
                moves.append(
                    {
                        "widget": button.id,
                        "idle": None,
                        "op": "preview",
                        "args": {"table": [NS, ROWS]},
                        "inputs": {"filter": text.id},
                    }
                )
                text.input(FILTER)
                button.click().run()
            elif case.name == "delete":
                ranges = next(t for t in at.text_input if t.label == "Versions to delete")
                confirm = next(t for t in at.text_input if t.label.startswith("Type the table"))
                button = next(b for b in at.button if b.label == "Delete versions")
                moves.append(
                    {
                        "widget": button.id,
                        "idle": None,
                        "op": "delete_range",
                        "args": {"table": [NS, DEL]},
                        "inputs": {"ranges": ranges.id},
                    }
                )
                ranges.input("2")
                confirm.input(DEL)
                button.click().run()
            elif case.name == "write":
                name = next(
                    t
                    for t in at.text_input
                    if t.key and t.key.startswith("tables.declare") and t.key.endswith(".name")
                )
                button = next(b for b in at.button if b.label == "Declare table")
                moves.append(
                    {
                        "widget": button.id,
                        "idle": None,
                        "op": "declare",
                        "args": {"namespace": [MANY]},
                        "inputs": {"name": name.id},
                    }
                )
                name.input("recorded")
                button.click().run()
                filled(at)
            if at.exception:
                raise RuntimeError(f"{case.name}: {[e.value for e in at.exception]}")
            if moves:
                states[f"{case.name}.after"] = page_tree(kept, titles[case.route])
                for move in moves:
                    move.update({"from": f"{case.name}.before", "to": f"{case.name}.after"})
            cases[case.name] = {"start": start, "moves": moves}
    return {"states": states, "cases": cases}


# -- measuring ------------------------------------------------------------------------------------


def timed(page: Page, act: Callable[[], None], ready: str, text: str | None = None) -> float:
    """Milliseconds from the click ``act`` makes to the page settled again (and showing
    ``text``)."""
    page.evaluate(ARM_JS, [ready, text])
    act()
    page.wait_for_function("() => window.__benchSettled !== undefined", timeout=SETTLE_TIMEOUT_MS)
    return float(page.evaluate("() => window.__benchSettled - window.__benchClick"))


def once(page: Page, case: Case, url: str, i: int, *, console: bool) -> float:
    page.goto(url)
    wait_for_app(page, APP_TIMEOUT_MS)
    page.locator(ANY_GRID).first.wait_for(timeout=APP_TIMEOUT_MS)
    page.wait_for_timeout(300)  # the sidebar's health check and first fragments settle
    if console and case.setup is not None:
        case.setup(page, i)
    if case.prepare is not None:
        case.prepare(page, i)
    app = "console" if console else "baseline"
    try:
        ms = timed(page, case.act(page, i), case.ready, case.shows)
        if SHOTS is not None and i == 1:  # what was measured, to compare the two apps by eye
            page.screenshot(path=str(SHOTS / f"{case.name}-{app}.png"), full_page=True)
        return ms
    except PlaywrightTimeout:
        shot = Path(tempfile.gettempdir()) / f"bench-{case.name}-{app}.png"
        page.screenshot(path=str(shot), full_page=True)
        _log(f"  {case.name} ({app}) did not settle showing {case.shows!r}: {shot}")
        raise


def measure(page: Page, case: Case, url: str, i: int, lost: list[str], *, console: bool) -> float:
    """One interaction on a freshly loaded page; a click that started no run at all (now and
    then a click is dropped by the app on a loaded machine) is measured again on a new load,
    and noted in ``lost``."""
    for attempt in range(TRIES):
        try:
            return once(page, case, url, i, console=console)
        except PlaywrightTimeout:
            lost.append(f"{case.name} {'console' if console else 'baseline'}")
            if attempt == TRIES - 1:
                raise
    raise AssertionError("unreachable")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="measured interactions per case")
    parser.add_argument("--only", default=",".join(c.name for c in CASES))
    parser.add_argument("--shots", type=Path, help="screenshots of the first measured round here")
    args = parser.parse_args(argv)
    global SHOTS
    SHOTS = args.shots
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    cases = [c for c in CASES if c.name in only]

    with tempfile.TemporaryDirectory(prefix="bench-ui-int-") as tmp:
        tmp_path = Path(tmp)
        data = tmp_path / "data"
        data.mkdir()
        _log("building the data")
        build(data)
        roots = {}
        for name in ("console", "record", "replay"):
            roots[name] = tmp_path / name
            shutil.copytree(data, roots[name])
        _log("recording the console's pages")
        scenario = record(roots["record"], tmp_path)
        (tmp_path / "replay.pickle").write_bytes(pickle.dumps(scenario))
        env = {
            "LANCE_CONSOLE_CONFIG": str(tmp_path / "connections.toml"),
            "LANCE_CONSOLE_AUDIT_DIR": str(tmp_path / "audit"),
        }
        console = StreamlitServer(
            script=REPO / "app" / "main.py",
            env={**env, "LANCE_CONSOLE_TARGET": str(roots["console"])},
            log_path=tmp_path / "console.log",
        )
        replay = StreamlitServer(
            script=REPO / "benchmarks" / "_ui_bench_replay.py",
            env={
                **env,
                "LANCE_CONSOLE_TARGET": str(roots["replay"]),
                "BENCH_TARGET": str(roots["replay"]),
                "BENCH_REPLAY": str(tmp_path / "replay.pickle"),
            },
            log_path=tmp_path / "replay.log",
        )
        times: dict[tuple[str, str], list[float]] = {}
        lost: list[str] = []
        try:
            console.start()
            replay.start()
            with sync_playwright() as pw:
                browser = launch_chromium(pw)
                context = browser.new_context(viewport=VIEWPORT)
                page = context.new_page()
                try:
                    for i in range(args.runs + 1):  # round 0: the warm-up
                        for case in cases:
                            urls = {
                                "console": page_url_for(console.url, case.route, **case.query),
                                "baseline": page_url_for(
                                    replay.url, case.route, **case.query, case=case.name
                                ),
                            }
                            for app, url in urls.items():
                                ms = measure(page, case, url, i, lost, console=app == "console")
                                if i:
                                    times.setdefault((case.name, app), []).append(ms)
                finally:
                    browser.close()
        except Exception:
            _log("console log tail:\n" + console.log_tail(30))
            _log("replay log tail:\n" + replay.log_tail(30))
            raise
        finally:
            console.stop()
            replay.stop()

    print(
        f"UI interactions, click to settled, median of {args.runs} after 1 warm-up (local); "
        "baseline: the same pages recorded and drawn again without the console's logic"
    )
    if lost:
        print(f"clicks that started no run, measured again: {len(lost)} ({'; '.join(lost)})")
    print(
        f"{'interaction':<46}{'console':>9}{'baseline':>10}{'ratio':>8}{'90%':>12}"
        f"  target {TARGET_RATIO}x"
    )
    for case in cases:
        c_times, b_times = times[(case.name, "console")], times[(case.name, "baseline")]
        c = statistics.median(c_times)
        b = statistics.median(b_times)
        verdict = "PASS" if c / b <= TARGET_RATIO else "MISS"
        interval = span(ratio_interval(c_times, b_times))
        print(f"{case.label:<46}{c:>9.0f}{b:>10.0f}{c / b:>8.2f}{interval:>12}  {verdict}")
        print(
            f"{'':<4}console {[round(x) for x in c_times]} baseline {[round(x) for x in b_times]}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
