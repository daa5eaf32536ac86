"""Time to a fully rendered console page vs. a bare ``st.dataframe(df)`` page of the same rows.

Four scenarios, each in headless Chromium (Debian's ``/usr/bin/chromium``) against real
``streamlit run`` servers:

* ``versions``: the Versions page of a table with 10,000 versions;
* ``tables``: the Namespaces & tables page of a namespace with 1,000 (declared) tables;
* ``rows``: the same page of a namespace with 1,000 tables holding rows (real datasets, whose
  per-table stats the list shows);
* ``indexes``: the Indexes page of a table with 50 BTREE indexes.

"Rendered" = the page's main grid is visible (the first ``stDataFrame`` of the main area; on
the tables page, the grid listing the table names) and the app's script has finished
(``stApp`` connected and ``notRunning``, no running indicator, no element still a loading
skeleton). The page itself notes the first animation frame at which all of that holds (a
script added before it loads); the load time runs from navigation to that frame. (Polling for
it from Playwright instead adds its retry back-off, 20 ms growing to 500 ms, and measured
every page some 100-300 ms late, a delay that was not the page's.)

Every load opens a new tab (a new Streamlit session); by default all loads of a page share
one browser context, so JS chunks come from the HTTP cache like for a returning user (``--cold``:
a fresh context per load, as on a first visit). One warm-up load per page, then ``--runs``
rounds of one load of each page (interleaved, so machine drift weighs on all); medians are
compared as console/bare against the 1.3x target.

Three pages per scenario (benchmarks/_ui_bench_app.py serves the two baselines):
* console: the console's page;
* bare: the same rows through the same client (``backend.connect``, ``st.cache_data``), shown
  by one ``st.dataframe(df)`` call;
* frame: that bare grid as the page of the console's own frame (page settings, navigation,
  connection sidebar, health banner: app/nav.py). frame/bare is what the frame costs,
  console/frame what the page's content costs.

Data (in a temp dir, or ``--root``): 10,000 versions are 10,000 real ``update_config`` commits
of a one-row table (~1 ms each, constant manifest size); the tables are ``declare_table``
calls; the tables with rows are ``create_table`` calls of 3 rows each; the indexes are BTREE indexes on 50 int64 columns of a 100-row table.

Usage::

    .venv/bin/python benchmarks/bench_ui_pages.py                  # full size, local backend
    .venv/bin/python benchmarks/bench_ui_pages.py --scale 0.1 --runs 3   # quick
    .venv/bin/python benchmarks/bench_ui_pages.py --backend rest --only versions,tables
    .venv/bin/python benchmarks/bench_ui_pages.py --cold          # first-visit loads
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from playwright.sync_api import Browser, BrowserContext, sync_playwright  # noqa: E402

from backend.arrow.ipc import to_ipc_stream  # noqa: E402
from tests.e2e.harness import (  # noqa: E402
    APP_TIMEOUT_MS,
    VIEWPORT,
    StreamlitServer,
    launch_chromium,
    page_url_for,
    wait_for_app,
)

TARGET_RATIO = 1.3
NAMESPACE = "bench"
VERSIONS_TABLE = "history"
INDEXES_TABLE = "wide"
TABLES_NAMESPACE = "many"
ROWS_NAMESPACE = "filled"
MAIN_GRID = '[data-testid="stMain"] [data-testid="stDataFrame"]'
# The tables page lists one page of names as a selectable grid (key "tables.list.grid.page.<hash>").
TABLES_GRID = (
    '[data-testid="stMain"] [class*="st-key-tables-list-grid-page-"] [data-testid="stDataFrame"]'
)


@dataclass(frozen=True)
class Scenario:
    name: str
    label: str
    console_path: str  # url_path of the console page
    console_query: dict[str, str]
    console_ready: str  # selector of the page's main grid
    bare_query: dict[str, str]


def generate(root: Path, *, versions: int, tables: int, indexes: int, only: set[str]) -> None:
    """Seed ``root`` (a directory namespace) with the scenarios' data."""
    import lance
    import pyarrow as pa
    from lance.namespace import (
        CreateNamespaceRequest,
        CreateTableRequest,
        DeclareTableRequest,
        DescribeTableRequest,
        DirectoryNamespace,
    )

    ns = DirectoryNamespace(root=str(root))
    ns.create_namespace(CreateNamespaceRequest(id=[NAMESPACE]))

    if "versions" in only:
        t0 = time.perf_counter()
        one = pa.table({"id": pa.array([1], pa.int64()), "note": ["v"]})
        ns.create_table(CreateTableRequest(id=[NAMESPACE, VERSIONS_TABLE]), to_ipc_stream(one))
        loc = ns.describe_table(DescribeTableRequest(id=[NAMESPACE, VERSIONS_TABLE])).location
        ds = lance.dataset(loc)
        for step in range(versions - 1):  # version 1 is the create
            ds.update_config({"bench.step": str(step)})
        _log(f"  {versions} versions in {time.perf_counter() - t0:.1f}s")

    if "tables" in only:
        t0 = time.perf_counter()
        ns.create_namespace(CreateNamespaceRequest(id=[TABLES_NAMESPACE]))
        for i in range(tables):
            ns.declare_table(DeclareTableRequest(id=[TABLES_NAMESPACE, f"table_{i:05d}"]))
        _log(f"  {tables} declared tables in {time.perf_counter() - t0:.1f}s")

    if "rows" in only:
        t0 = time.perf_counter()
        ns.create_namespace(CreateNamespaceRequest(id=[ROWS_NAMESPACE]))
        three = to_ipc_stream(
            pa.table({"id": pa.array([1, 2, 3], pa.int64()), "note": list("abc")})
        )
        for i in range(tables):
            ns.create_table(CreateTableRequest(id=[ROWS_NAMESPACE, f"table_{i:05d}"]), three)
        _log(f"  {tables} tables with rows in {time.perf_counter() - t0:.1f}s")

    if "indexes" in only:
        t0 = time.perf_counter()
        cols = {f"c{j:03d}": pa.array(range(100), pa.int64()) for j in range(indexes)}
        ns.create_table(
            CreateTableRequest(id=[NAMESPACE, INDEXES_TABLE]), to_ipc_stream(pa.table(cols))
        )
        loc = ns.describe_table(DescribeTableRequest(id=[NAMESPACE, INDEXES_TABLE])).location
        ds = lance.dataset(loc)
        for col in cols:
            ds.create_scalar_index(col, "BTREE", name=f"{col}_idx")
        _log(f"  {indexes} BTREE indexes in {time.perf_counter() - t0:.1f}s")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Load:
    ms: float  # navigation to rendered (the target's measure)
    script_ms: float  # JavaScript time on the tab's main thread meanwhile (quieter)


# Runs in the tab before the app: checks "rendered" (see the module's docstring) at every
# animation frame and keeps the wall-clock time (ms since the epoch) of the first frame where
# it holds in window.__benchRendered.
RENDERED_JS = """
((ready) => {
  const shown = (el) => {
    if (!el) return false;
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== "hidden";
  };
  const rendered = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    return shown(document.querySelector(ready)) && app !== null
      && app.getAttribute("data-test-connection-state") === "CONNECTED"
      && app.getAttribute("data-test-script-state") === "notRunning"
      && !shown(document.querySelector('[data-testid="stStatusWidget"]'))
      && document.querySelector('[data-testid="stSkeleton"]') === null;
  };
  const frame = () => {
    if (rendered()) window.__benchRendered = performance.timeOrigin + performance.now();
    else requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
})
"""


def load_ms(context: BrowserContext, url: str, ready: str) -> Load:
    """Milliseconds from navigation to a finished script run with the main grid visible, in a
    new tab (a new Streamlit session) of ``context``; and the JavaScript time the tab's main
    thread spent meanwhile (Chrome's ``Performance.getMetrics`` ScriptDuration)."""
    page = context.new_page()
    try:
        page.set_default_timeout(APP_TIMEOUT_MS * 4)
        page.add_init_script(f"{RENDERED_JS}({json.dumps(ready)});")
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable")
        t0 = time.time() * 1000
        page.goto(url, wait_until="commit")
        page.wait_for_function("() => window.__benchRendered !== undefined")
        elapsed = page.evaluate("() => window.__benchRendered") - t0
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        wait_for_app(page, APP_TIMEOUT_MS * 4)  # the same state, for the check below
        errors = page.locator('[data-testid="stException"]').count()
        if errors:
            raise RuntimeError(f"{url} shows {errors} exception box(es)")
        return Load(elapsed, metrics.get("ScriptDuration", 0.0) * 1000)
    finally:
        page.close()


@dataclass(frozen=True)
class Medians:
    ms: float
    js: float

    @classmethod
    def of(cls, loads: list[Load]) -> Medians:
        return cls(
            statistics.median(x.ms for x in loads), statistics.median(x.script_ms for x in loads)
        )


def measure(
    browser: Browser, pages: list[tuple[str, str]], runs: int, *, cold: bool
) -> list[list[Load]]:
    """Load times of each ``(url, ready)`` page: one warm-up load each (server caches, first
    imports, the browser's HTTP cache), then ``runs`` rounds loading every page once in turn,
    so that a slower stretch of the machine weighs on all pages alike. ``cold``: every load
    in a fresh browser context (empty HTTP cache: first visit); otherwise one context per
    page for all its loads (a returning user: cached JS chunks)."""
    shared = [None if cold else browser.new_context(viewport=VIEWPORT) for _ in pages]
    try:
        out: list[list[Load]] = [[] for _ in pages]
        for i in range(runs + 1):
            for j, (url, ready) in enumerate(pages):
                context = shared[j] or browser.new_context(viewport=VIEWPORT)
                try:
                    load = load_ms(context, url, ready)
                finally:
                    if shared[j] is None:
                        context.close()
                if i:
                    out[j].append(load)
        return out
    finally:
        for context in shared:
            if context is not None:
                context.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", type=int, default=10_000)
    parser.add_argument("--tables", type=int, default=1_000)
    parser.add_argument("--indexes", type=int, default=50)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the three sizes")
    parser.add_argument("--runs", type=int, default=5, help="measured loads per page")
    parser.add_argument(
        "--cold",
        action="store_true",
        help="a fresh browser context (empty HTTP cache) for every load",
    )
    parser.add_argument("--only", default="versions,tables,rows,indexes")
    parser.add_argument("--backend", choices=["local", "rest"], default="local")
    parser.add_argument("--root", type=Path, help="reuse/keep data here (default: temp dir)")
    args = parser.parse_args(argv)

    only = {s.strip() for s in args.only.split(",") if s.strip()}
    versions = max(2, int(args.versions * args.scale))
    tables = max(1, int(args.tables * args.scale))
    indexes = max(1, int(args.indexes * args.scale))

    with tempfile.TemporaryDirectory(prefix="bench-ui-") as tmp:
        tmp_path = Path(tmp)
        root = args.root or tmp_path / "root"
        if not (root.exists() and any(root.iterdir())):
            root.mkdir(parents=True, exist_ok=True)
            _log(f"generating data in {root}")
            generate(root, versions=versions, tables=tables, indexes=indexes, only=only)
        return run(args, root, tmp_path, only, versions, tables, indexes)


def run(
    args: argparse.Namespace,
    root: Path,
    tmp: Path,
    only: set[str],
    versions: int,
    tables: int,
    indexes: int,
) -> int:
    rest = None
    target = str(root)
    if args.backend == "rest":
        from tests.conftest import RestServer

        rest = RestServer(root)
        target = rest.url

    scenarios = [
        Scenario(
            "versions",
            f"Versions page, {versions:,} versions",
            "versions",
            {"ns": NAMESPACE, "table": VERSIONS_TABLE},
            MAIN_GRID,
            {"view": "versions"},
        ),
        Scenario(
            "tables",
            f"Namespaces & tables, {tables:,} tables",
            "tables",
            {"ns": TABLES_NAMESPACE},
            TABLES_GRID,
            {"view": "tables"},
        ),
        Scenario(
            "rows",
            f"Namespaces & tables, {tables:,} with rows",
            "tables",
            {"ns": ROWS_NAMESPACE},
            TABLES_GRID,
            {"view": "rows"},
        ),
        Scenario(
            "indexes",
            f"Indexes page, {indexes} indexes",
            "indexes",
            {"ns": NAMESPACE, "table": INDEXES_TABLE},
            MAIN_GRID,
            {"view": "indexes"},
        ),
    ]
    scenarios = [s for s in scenarios if s.name in only]

    common_env = {"LANCE_CONSOLE_CONFIG": str(tmp / "connections.toml")}
    console = StreamlitServer(
        script=REPO / "app" / "main.py",
        env={**common_env, "LANCE_CONSOLE_TARGET": target},
        log_path=tmp / "console.log",
    )
    bare = StreamlitServer(
        script=REPO / "benchmarks" / "_ui_bench_app.py",
        env={
            **common_env,
            "LANCE_CONSOLE_TARGET": target,  # the frame's connection sidebar
            "BENCH_TARGET": target,
            "BENCH_NS_VERSIONS": NAMESPACE,
            "BENCH_NS_TABLES": TABLES_NAMESPACE,
            "BENCH_NS_ROWS": ROWS_NAMESPACE,
            "BENCH_NS_INDEXES": NAMESPACE,
            "BENCH_TABLE_VERSIONS": VERSIONS_TABLE,
            "BENCH_TABLE_INDEXES": INDEXES_TABLE,
        },
        log_path=tmp / "bare.log",
    )
    rows: list[tuple[str, Medians, Medians, Medians]] = []
    try:
        console.start()
        bare.start()
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            try:
                for sc in scenarios:
                    _log(f"measuring {sc.name} ...")
                    c_url = page_url_for(console.url, sc.console_path, **sc.console_query)
                    b_url = page_url_for(bare.url, "", **sc.bare_query)
                    f_url = page_url_for(bare.url, sc.console_path, **sc.bare_query, frame="1")
                    try:
                        c_runs, b_runs, f_runs = measure(
                            browser,
                            [(c_url, sc.console_ready), (b_url, MAIN_GRID), (f_url, MAIN_GRID)],
                            args.runs,
                            cold=args.cold,
                        )
                    except Exception as err:
                        _log(f"  {sc.name} failed: {err}")
                        _log("  console log tail:\n" + console.log_tail(20))
                        _log("  bare log tail:\n" + bare.log_tail(20))
                        raise
                    _log(
                        f"  console {[round(x.ms) for x in c_runs]} "
                        f"bare {[round(x.ms) for x in b_runs]} "
                        f"frame {[round(x.ms) for x in f_runs]}"
                    )
                    rows.append(
                        (sc.label, Medians.of(c_runs), Medians.of(b_runs), Medians.of(f_runs))
                    )
            finally:
                browser.close()
    finally:
        console.stop()
        bare.stop()
        if rest is not None:
            rest.stop()

    cache = "cold browser cache" if args.cold else "warm browser cache"
    print(
        f"UI page load, median of {args.runs} runs after 1 warm-up "
        f"({args.backend} backend, {cache})"
    )
    print(
        f"{'scenario':<40}{'console':>9}{'bare':>7}{'frame':>7}{'ratio':>7}  target {TARGET_RATIO}x"
        f"{'frame/bare':>12}{'console/frame':>15}{'JS console':>12}{'JS bare':>9}{'JS frame':>10}"
    )
    for label, c, b, f in rows:
        ratio = c.ms / b.ms
        verdict = "PASS" if ratio <= TARGET_RATIO else "MISS"
        print(
            f"{label:<40}{c.ms:>9.0f}{b.ms:>7.0f}{f.ms:>7.0f}{ratio:>7.2f}  {verdict:<12}"
            f"{f.ms / b.ms:>12.2f}{c.ms / f.ms:>15.2f}{c.js:>12.0f}{b.js:>9.0f}{f.js:>10.0f}"
        )
    print(
        "ms: navigation to rendered (median). ratio = console/bare, the target's measure; "
        "frame = the bare grid inside the console's navigation and connection sidebar. JS: the "
        "tab's main-thread JavaScript time until rendered (median)."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
