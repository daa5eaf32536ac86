"""Interactions, click to settled: an in-app page switch and a widget change in the console,
against the same interaction in the bare app inside the console's frame.

Two cases, each in headless Chromium (Debian's ``/usr/bin/chromium``) against real
``streamlit run`` servers (the data of benchmarks/bench_ui_pages.py, smaller by default):

* ``switch``: on the Versions page of a table with 50 indexes, the sidebar's "Indexes" link is
  clicked; the console draws its Indexes page, the frame app (benchmarks/_ui_bench_app.py
  ``?frame=1``: the console's navigation, connection sidebar and banner around a bare grid)
  draws its bare grid as that page;
* ``widget``: on the same Versions page, the "Version" picker steps down one version (its
  "Decrement" button); the frame app's page has the same number input above its grid
  (``&widget=1``).

Settled = a script run started after the click and has finished (``stApp`` back to
``notRunning``), the main grid visible, no element a loading skeleton. A script in the tab
notes the time of the click (the first pointer-down after arming) and the first animation frame
at which the app has settled; the figure is the time between the two (no Playwright polling in
it). Every page load is waited out first. One warm-up, then ``--runs`` rounds interleaving the
two apps; medians compared as console/frame against the 1.15x target.

Usage::

    .venv/bin/python benchmarks/bench_ui_interactions.py [--runs 7] [--tables 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from playwright.sync_api import Page, sync_playwright  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402

from benchmarks.bench_ui_pages import (  # noqa: E402
    INDEXES_TABLE,
    MAIN_GRID,
    NAMESPACE,
    TABLES_NAMESPACE,
    generate,
)
from tests.e2e.harness import (  # noqa: E402
    APP_TIMEOUT_MS,
    VIEWPORT,
    StreamlitServer,
    launch_chromium,
    page_url_for,
    wait_for_app,
)

TARGET_RATIO = 1.15

# Armed before an interaction: keeps the time of the next pointer-down (the click) and of the
# first animation frame after it at which a script run has come and gone and the page is drawn.
ARM_JS = """
(ready) => {
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
  // the callback runs: a quick run may have come and gone by then).
  const watch = new MutationObserver((records) => {
    if (window.__benchClick !== undefined && records.length) ran = true;
  });
  watch.observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
  document.addEventListener("pointerdown", () => {
    if (window.__benchClick === undefined) window.__benchClick = now();
  }, { capture: true, once: true });
  const settled = () => ran
    && app.getAttribute("data-test-script-state") === "notRunning"
    && shown(document.querySelector(ready))
    && !shown(document.querySelector('[data-testid="stStatusWidget"]'))
    && document.querySelector('[data-testid="stSkeleton"]') === null;
  const frame = () => {
    if (settled()) { window.__benchSettled = now(); watch.disconnect(); }
    else requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}
"""


def timed(page: Page, act: Callable[[], None], ready: str = MAIN_GRID) -> float:
    """Milliseconds from the click ``act`` makes to the page settled again."""
    page.evaluate(ARM_JS, ready)
    act()
    page.wait_for_function("() => window.__benchSettled !== undefined", timeout=SETTLE_TIMEOUT_MS)
    return float(page.evaluate("() => window.__benchSettled - window.__benchClick"))


def open_page(page: Page, url: str) -> None:
    page.goto(url)
    wait_for_app(page, APP_TIMEOUT_MS)
    page.locator(MAIN_GRID).first.wait_for(timeout=APP_TIMEOUT_MS)
    page.wait_for_timeout(300)  # the sidebar's health check and first fragments settle


def switch(page: Page, url: str) -> float:
    open_page(page, url)
    link = page.get_by_test_id("stSidebarNav").get_by_role("link", name="Indexes")
    return timed(page, link.click)


def widget(page: Page, url: str) -> float:
    open_page(page, url)
    box = page.get_by_test_id("stNumberInput").filter(has=page.get_by_label("Version", exact=True))
    return timed(page, box.get_by_role("button", name="Decrement").click)


SETTLE_TIMEOUT_MS = 15_000
TRIES = 3


def measure(case: Callable[[Page, str], float], page: Page, url: str, lost: list[str]) -> float:
    """``case`` on a freshly loaded page; a click that started no run at all (now and then
    the sidebar link's click is dropped by the app on a loaded machine) is measured again on
    a new load, and noted in ``lost``: it is no interaction's time."""
    for attempt in range(TRIES):
        try:
            return case(page, url)
        except PlaywrightTimeout:
            lost.append(f"{case.__name__} {url}")
            if attempt == TRIES - 1:
                raise
    raise AssertionError("unreachable")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="measured interactions per case")
    parser.add_argument("--tables", type=int, default=200)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-ui-int-") as tmp:
        tmp_path = Path(tmp)
        root = tmp_path / "root"
        root.mkdir()
        generate(root, versions=2, tables=args.tables, indexes=50, only={"tables", "indexes"})
        env = {"LANCE_CONSOLE_CONFIG": str(tmp_path / "connections.toml")}
        console = StreamlitServer(
            script=REPO / "app" / "main.py",
            env={**env, "LANCE_CONSOLE_TARGET": str(root)},
            log_path=tmp_path / "console.log",
        )
        frame = StreamlitServer(
            script=REPO / "benchmarks" / "_ui_bench_app.py",
            env={
                **env,
                "LANCE_CONSOLE_TARGET": str(root),
                "BENCH_TARGET": str(root),
                "BENCH_NS_VERSIONS": NAMESPACE,
                "BENCH_TABLE_VERSIONS": INDEXES_TABLE,
                "BENCH_NS_TABLES": TABLES_NAMESPACE,
                "BENCH_NS_INDEXES": NAMESPACE,
                "BENCH_TABLE_INDEXES": INDEXES_TABLE,
            },
            log_path=tmp_path / "frame.log",
        )
        cases = {"switch": switch, "widget": widget}
        try:
            console.start()
            frame.start()
            on_table = {"ns": NAMESPACE, "table": INDEXES_TABLE}
            urls = {
                ("switch", "console"): page_url_for(console.url, "versions", **on_table),
                ("switch", "frame"): page_url_for(
                    frame.url, "versions", view="versions", frame="1"
                ),
                ("widget", "console"): page_url_for(console.url, "versions", **on_table),
                ("widget", "frame"): page_url_for(
                    frame.url, "versions", view="versions", frame="1", widget="1"
                ),
            }
            times: dict[tuple[str, str], list[float]] = {key: [] for key in urls}
            lost: list[str] = []
            with sync_playwright() as pw:
                browser = launch_chromium(pw)
                context = browser.new_context(viewport=VIEWPORT)
                page = context.new_page()
                try:
                    for i in range(args.runs + 1):  # round 0: the warm-up
                        for (case, app), url in urls.items():
                            ms = measure(cases[case], page, url, lost)
                            if i:
                                times[(case, app)].append(ms)
                finally:
                    browser.close()
        finally:
            console.stop()
            frame.stop()

    print(f"UI interactions, click to settled, median of {args.runs} after 1 warm-up (local)")
    if lost:
        print(f"clicks that started no run, measured again: {len(lost)} ({'; '.join(lost)})")
    print(f"{'interaction':<44}{'console':>9}{'frame':>8}{'ratio':>8}  target {TARGET_RATIO}x")
    labels = {
        "switch": "page switch: Versions -> Indexes (sidebar)",
        "widget": "widget change: Version picker, one step",
    }
    for case, label in labels.items():
        c = statistics.median(times[(case, "console")])
        f = statistics.median(times[(case, "frame")])
        verdict = "PASS" if c / f <= TARGET_RATIO else "MISS"
        print(f"{label:<44}{c:>9.0f}{f:>8.0f}{c / f:>8.2f}  {verdict}")
        print(
            f"{'':<4}console {[round(x) for x in times[(case, 'console')]]} "
            f"frame {[round(x) for x in times[(case, 'frame')]]}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
