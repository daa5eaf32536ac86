"""Time to a fully rendered console page vs. a bare ``st.dataframe(df)`` page of the same rows.

Four scenarios, each in headless Chromium (Debian's ``/usr/bin/chromium``) against real
``streamlit run`` servers:

* ``versions``: the Versions page of a table with 10,000 versions;
* ``tables``: the Namespaces & tables page of a namespace with 1,000 (declared) tables;
* ``rows``: the same page of a namespace with 1,000 tables holding rows (real datasets, whose
  per-table stats the list shows);
* ``indexes``: the Indexes page of a table with 50 BTREE indexes.

``--catalog`` (issue 37): the first three at catalog scale, 100,000 versions, 100,000 declared
tables and 10,000 tables holding rows (``--scale`` multiplies these too). The console reads
one page of them; so do the baselines then (``--page-baseline``: the first page, one request
with ``limit=50``, the rows the console's page shows), which otherwise read and draw every row.
``--rows-figures``: the ``rows`` baselines draw each table's figures beside its name, the
seven columns the console's list shows, instead of the names alone. The run ends with the
console process's peak memory, after a search of the tables page has read every name of the
declared tables' namespace.

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
compared as console/bare against the 1.3x target and console/frame against 1.10x, the latter
with the range it lies in for 90% of resamples of the run's rounds (benchmarks/_ratio.py).

Three pages per scenario (benchmarks/_ui_bench_app.py serves the two baselines):
* console: the console's page;
* bare: the same rows through the same client (``backend.connect``, ``st.cache_data``), shown
  by one ``st.dataframe(df)`` call;
* frame: that bare grid as the page of the console's own frame (page settings, navigation,
  connection sidebar, health banner: app/nav.py). frame/bare is what the frame costs,
  console/frame what the page's content costs.

Data (in a temp dir, or ``--root DIR``: built there once, recorded in ``DIR/bench-data.json``,
and reused by later runs; each size has its own table or namespace): the versions are real
``update_config`` commits of a one-row table (~1 ms each, constant manifest size; 100,000 in a
few minutes); the declared tables are BatchCommitTables of 5,000 DeclareTable operations (one
DeclareTable call each commits the catalog each time, and its manifest grows with every
commit); the tables with rows are declared so, then each gets a first version of 3 rows
written at its location; the indexes are BTREE indexes on 50 int64 columns of a 100-row table.

Usage::

    .venv/bin/python benchmarks/bench_ui_pages.py                  # full size, local backend
    .venv/bin/python benchmarks/bench_ui_pages.py --scale 0.1 --runs 3   # quick
    .venv/bin/python benchmarks/bench_ui_pages.py --catalog --root ~/.cache/lance-bench
    .venv/bin/python benchmarks/bench_ui_pages.py --backend rest --only versions,tables
    .venv/bin/python benchmarks/bench_ui_pages.py --cold          # first-visit loads
    .venv/bin/python benchmarks/bench_ui_pages.py --catalog --twin   # and this run's noise
    .venv/bin/python benchmarks/bench_ui_pages.py --catalog --twin-from /tmp/old  # A/B

``--twin``: a second console server of the same code joins every round; twin/frame beside
console/frame is how far two identical pages differ in one run. ``--twin-from DIR``: the
second server runs the code checked out in DIR instead (``git worktree add DIR REV``): two
commits compared in the same rounds, where runs one after the other differ by more than a
change costs.
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
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from playwright.sync_api import Browser, BrowserContext, sync_playwright  # noqa: E402

from backend.arrow.ipc import to_ipc_stream  # noqa: E402
from benchmarks._ratio import ratio_interval, span  # noqa: E402
from tests.e2e.harness import (  # noqa: E402
    APP_TIMEOUT_MS,
    VIEWPORT,
    StreamlitServer,
    launch_chromium,
    page_url_for,
    wait_for_app,
)

TARGET_RATIO = 1.3
FRAME_TARGET = 1.10  # console/frame, issue 37
NAMESPACE = "bench"
MAIN_GRID = '[data-testid="stMain"] [data-testid="stDataFrame"]'
# The tables page lists one page of names as a selectable grid (key "tables.list.grid.page.<hash>").
TABLES_GRID = (
    '[data-testid="stMain"] [class*="st-key-tables-list-grid-page-"] [data-testid="stDataFrame"]'
)
DATA_FILE = "bench-data.json"  # which scenarios' data a root holds (``--root`` reuses them)
DECLARE_BATCH = 5_000  # DeclareTable operations per BatchCommitTables when building data


def versions_table(versions: int) -> str:
    return f"history_{versions}"


def indexes_table(indexes: int) -> str:
    return f"wide_{indexes}"


def tables_namespace(tables: int) -> str:
    return f"many_{tables}"


def rows_namespace(tables: int) -> str:
    return f"filled_{tables}"


@dataclass(frozen=True)
class Scenario:
    name: str
    label: str
    console_path: str  # url_path of the console page
    console_query: dict[str, str]
    console_ready: str  # selector of the page's main grid
    bare_query: dict[str, str]


def _declare(ns: Any, namespace: str, names: list[str]) -> None:
    """Declare ``names`` in ``namespace`` with BatchCommitTables, :data:`DECLARE_BATCH` a
    commit (one DeclareTable call each would commit the catalog as many times: its manifest
    grows with every commit, and 100,000 of them take hours and gigabytes)."""
    from lance_namespace import BatchCommitTablesRequest, CommitTableOperation, DeclareTableRequest

    for start in range(0, len(names), DECLARE_BATCH):
        ops = [
            CommitTableOperation(declare_table=DeclareTableRequest(id=[namespace, n]))
            for n in names[start : start + DECLARE_BATCH]
        ]
        ns.batch_commit_tables(BatchCommitTablesRequest(operations=ops))
        _log(f"    {min(len(names), start + DECLARE_BATCH):,} declared")


def generate(
    root: Path, *, versions: int, tables: int, indexes: int, only: set[str], rows: int | None = None
) -> None:
    """Seed ``root`` (a directory namespace) with the scenarios' data that it does not hold
    yet (:data:`DATA_FILE` records what it holds: a root given with ``--root`` is built once
    and reused). ``rows``: the number of tables holding rows (default ``tables``)."""
    import lance
    import pyarrow as pa
    from lance.namespace import (
        CreateNamespaceRequest,
        CreateTableRequest,
        DescribeTableRequest,
    )

    import backend

    rows = tables if rows is None else rows
    record = root / DATA_FILE
    held: dict[str, bool] = json.loads(record.read_text()) if record.exists() else {}
    ns = backend.connect(str(root))

    def namespace(name: str) -> None:
        from lance.namespace import NamespaceExistsRequest

        try:
            ns.namespace_exists(NamespaceExistsRequest(id=[name]))
        except Exception:  # noqa: BLE001 - not found: create it
            ns.create_namespace(CreateNamespaceRequest(id=[name]))

    def done(key: str) -> None:
        held[key] = True
        record.write_text(json.dumps(held, indent=1, sort_keys=True))

    namespace(NAMESPACE)
    if "versions" in only and not held.get(f"versions_{versions}"):
        t0 = time.perf_counter()
        table = versions_table(versions)
        one = pa.table({"id": pa.array([1], pa.int64()), "note": ["v"]})
        ns.create_table(CreateTableRequest(id=[NAMESPACE, table]), to_ipc_stream(one))
        loc = ns.describe_table(DescribeTableRequest(id=[NAMESPACE, table])).location
        ds = lance.dataset(loc)
        for step in range(versions - 1):  # version 1 is the create
            ds.update_config({"bench.step": str(step)})
            if step and step % 10_000 == 0:
                _log(f"    {step:,} versions")
        done(f"versions_{versions}")
        _log(f"  {versions:,} versions in {time.perf_counter() - t0:.1f}s")

    if "tables" in only and not held.get(f"tables_{tables}"):
        t0 = time.perf_counter()
        name = tables_namespace(tables)
        namespace(name)
        _declare(ns, name, [f"table_{i:06d}" for i in range(tables)])
        done(f"tables_{tables}")
        _log(f"  {tables:,} declared tables in {time.perf_counter() - t0:.1f}s")

    if "rows" in only and not held.get(f"rows_{rows}"):
        t0 = time.perf_counter()
        name = rows_namespace(rows)
        namespace(name)
        names = [f"table_{i:06d}" for i in range(rows)]
        _declare(ns, name, names)
        three = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "note": list("abc")})
        for i, table in enumerate(names):  # each declared table's first version, 3 rows
            loc = ns.describe_table(DescribeTableRequest(id=[name, table])).location
            lance.write_dataset(three, loc, mode="create")
            if i and i % 2_000 == 0:
                _log(f"    {i:,} tables written")
        done(f"rows_{rows}")
        _log(f"  {rows:,} tables with rows in {time.perf_counter() - t0:.1f}s")

    if "indexes" in only and not held.get(f"indexes_{indexes}"):
        t0 = time.perf_counter()
        table = indexes_table(indexes)
        cols = {f"c{j:03d}": pa.array(range(100), pa.int64()) for j in range(indexes)}
        ns.create_table(CreateTableRequest(id=[NAMESPACE, table]), to_ipc_stream(pa.table(cols)))
        loc = ns.describe_table(DescribeTableRequest(id=[NAMESPACE, table])).location
        ds = lance.dataset(loc)
        for col in cols:
            ds.create_scalar_index(col, "BTREE", name=f"{col}_idx")
        done(f"indexes_{indexes}")
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


CATALOG = {"versions": 100_000, "tables": 100_000, "rows_tables": 10_000}  # issue 37


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", type=int, default=10_000)
    parser.add_argument("--tables", type=int, default=1_000, help="declared tables")
    parser.add_argument(
        "--rows-tables", type=int, help="tables holding rows (default: as many as --tables)"
    )
    parser.add_argument("--indexes", type=int, default=50)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the sizes")
    parser.add_argument(
        "--catalog",
        action="store_true",
        help="catalog scale: 100,000 versions, 100,000 declared tables, 10,000 tables with "
        "rows (times --scale); the baselines read the page the console shows (--page-baseline)",
    )
    parser.add_argument(
        "--page-baseline",
        action="store_true",
        help="bare and frame read and draw the first page only (limit=50, one request), the "
        "rows the console's page shows, instead of every row",
    )
    parser.add_argument(
        "--rows-figures",
        action="store_true",
        help="the rows scenario's bare and frame grids show each table's figures beside its "
        "name (the columns of the console's list), not the names alone",
    )
    parser.add_argument("--runs", type=int, default=5, help="measured loads per page")
    parser.add_argument(
        "--twin",
        action="store_true",
        help="a second console server of the same code, loaded in the same rounds: twin/frame "
        "beside console/frame shows how far two identical pages differ in one run",
    )
    parser.add_argument(
        "--twin-from",
        type=Path,
        metavar="DIR",
        help="the second console server (--twin) runs the code of another checkout, DIR",
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="a fresh browser context (empty HTTP cache) for every load",
    )
    parser.add_argument(
        "--only", help="default: versions,tables,rows,indexes (--catalog: no indexes)"
    )
    parser.add_argument("--backend", choices=["local", "rest"], default="local")
    parser.add_argument(
        "--root",
        type=Path,
        help="build the data here once and reuse it in later runs (default: a temp dir)",
    )
    args = parser.parse_args(argv)

    if args.catalog:
        args.versions, args.tables = CATALOG["versions"], CATALOG["tables"]
        args.rows_tables = CATALOG["rows_tables"]
        args.page_baseline = True
    default_only = "versions,tables,rows" if args.catalog else "versions,tables,rows,indexes"
    only = {s.strip() for s in (args.only or default_only).split(",") if s.strip()}
    versions = max(2, int(args.versions * args.scale))
    tables = max(1, int(args.tables * args.scale))
    rows = max(1, int((args.rows_tables or args.tables) * args.scale))
    indexes = max(1, int(args.indexes * args.scale))

    with tempfile.TemporaryDirectory(prefix="bench-ui-") as tmp:
        tmp_path = Path(tmp)
        root = args.root or tmp_path / "root"
        root.mkdir(parents=True, exist_ok=True)
        _log(f"data in {root}")
        generate(root, versions=versions, tables=tables, indexes=indexes, only=only, rows=rows)
        return run(args, root, tmp_path, only, versions, tables, rows, indexes)


def peak_rss_mib(pid: int) -> float | None:
    """The peak resident memory of process ``pid`` (Linux ``VmHWM``), in MiB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def search_everything(browser: Browser, url: str) -> None:
    """The tables page, searched: every name of its namespace read (the most a page keeps)."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(url)
        wait_for_app(page, APP_TIMEOUT_MS * 4)
        box = page.get_by_label("Search tables")
        box.fill("table_0*9")
        box.press("Enter")
        page.wait_for_timeout(500)
        wait_for_app(page, APP_TIMEOUT_MS * 4)
    finally:
        context.close()


def run(
    args: argparse.Namespace,
    root: Path,
    tmp: Path,
    only: set[str],
    versions: int,
    tables: int,
    rows_tables: int,
    indexes: int,
) -> int:
    rest = None
    target = str(root)
    if args.backend == "rest":
        from tests.conftest import RestServer

        rest = RestServer(root)
        target = rest.url

    limit = {"limit": "50"} if args.page_baseline else {}
    scenarios = [
        Scenario(
            "versions",
            f"Versions page, {versions:,} versions",
            "versions",
            {"ns": NAMESPACE, "table": versions_table(versions)},
            MAIN_GRID,
            {"view": "versions", **limit},
        ),
        Scenario(
            "tables",
            f"Namespaces & tables, {tables:,} tables",
            "tables",
            {"ns": tables_namespace(tables)},
            TABLES_GRID,
            {"view": "tables", **limit},
        ),
        Scenario(
            "rows",
            f"Namespaces & tables, {rows_tables:,} with rows",
            "tables",
            {"ns": rows_namespace(rows_tables)},
            TABLES_GRID,
            {"view": "rows", **limit, **({"figures": "1"} if args.rows_figures else {})},
        ),
        Scenario(
            "indexes",
            f"Indexes page, {indexes} indexes",
            "indexes",
            {"ns": NAMESPACE, "table": indexes_table(indexes)},
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
            "BENCH_NS_TABLES": tables_namespace(tables),
            "BENCH_NS_ROWS": rows_namespace(rows_tables),
            "BENCH_NS_INDEXES": NAMESPACE,
            "BENCH_TABLE_VERSIONS": versions_table(versions),
            "BENCH_TABLE_INDEXES": indexes_table(indexes),
        },
        log_path=tmp / "bare.log",
    )
    twin_repo = (args.twin_from or REPO).resolve()
    twin = (
        StreamlitServer(
            script=twin_repo / "app" / "main.py",
            env={
                **common_env,
                "LANCE_CONSOLE_TARGET": target,
                **({"PYTHONPATH": str(twin_repo)} if args.twin_from else {}),
            },
            log_path=tmp / "twin.log",
            cwd=twin_repo,
        )
        if args.twin or args.twin_from
        else None
    )
    rows: list[tuple[str, Medians, Medians, Medians, Medians | None, tuple[float, float]]] = []
    memory: list[tuple[str, float | None]] = []
    try:
        console.start()
        bare.start()
        if twin is not None:
            twin.start()
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            try:
                for sc in scenarios:
                    _log(f"measuring {sc.name} ...")
                    c_url = page_url_for(console.url, sc.console_path, **sc.console_query)
                    b_url = page_url_for(bare.url, "", **sc.bare_query)
                    f_url = page_url_for(bare.url, sc.console_path, **sc.bare_query, frame="1")
                    pages = [(c_url, sc.console_ready), (b_url, MAIN_GRID), (f_url, MAIN_GRID)]
                    if twin is not None:
                        t_url = page_url_for(twin.url, sc.console_path, **sc.console_query)
                        pages.append((t_url, sc.console_ready))
                    try:
                        c_runs, b_runs, f_runs, *t_runs = measure(
                            browser, pages, args.runs, cold=args.cold
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
                        + (f" twin {[round(x.ms) for x in t_runs[0]]}" if t_runs else "")
                    )
                    rows.append(
                        (
                            sc.label,
                            Medians.of(c_runs),
                            Medians.of(b_runs),
                            Medians.of(f_runs),
                            Medians.of(t_runs[0]) if t_runs else None,
                            ratio_interval([x.ms for x in c_runs], [x.ms for x in f_runs]),
                        )
                    )
                    assert console.proc is not None
                    memory.append((f"after {sc.name}", peak_rss_mib(console.proc.pid)))
                if "tables" in only:
                    _log("searching every table name ...")
                    search_everything(
                        browser,
                        page_url_for(console.url, "tables", ns=tables_namespace(tables)),
                    )
                    assert console.proc is not None
                    memory.append(
                        (f"after a search of {tables:,} tables", peak_rss_mib(console.proc.pid))
                    )
            finally:
                browser.close()
    finally:
        console.stop()
        bare.stop()
        if twin is not None:
            twin.stop()
        if rest is not None:
            rest.stop()

    cache = "cold browser cache" if args.cold else "warm browser cache"
    base = "first page only (limit=50)" if args.page_baseline else "every row"
    if args.rows_figures:
        base += "; rows: with the figures of the console's list"
    print(
        f"UI page load, median of {args.runs} runs after 1 warm-up "
        f"({args.backend} backend, {cache}; bare and frame: {base})"
    )
    print(
        f"{'scenario':<42}{'console':>9}{'bare':>7}{'frame':>7}{'ratio':>7}  target {TARGET_RATIO}x"
        f"{'frame/bare':>12}{'console/frame':>15}{'90%':>12}  target {FRAME_TARGET}x"
        f"{'JS console':>12}{'JS bare':>9}{'JS frame':>10}"
        + (f"{'twin/frame':>12}" if twin is not None else "")
    )
    for label, c, b, f, t, interval in rows:
        ratio = c.ms / b.ms
        verdict = "PASS" if ratio <= TARGET_RATIO else "MISS"
        frame_ratio = c.ms / f.ms
        frame_verdict = "PASS" if frame_ratio <= FRAME_TARGET else "MISS"
        print(
            f"{label:<42}{c.ms:>9.0f}{b.ms:>7.0f}{f.ms:>7.0f}{ratio:>7.2f}  {verdict:<12}"
            f"{f.ms / b.ms:>12.2f}{frame_ratio:>15.2f}{span(interval):>12}  "
            f"{frame_verdict:<12}"
            f"{c.js:>12.0f}{b.js:>9.0f}{f.js:>10.0f}"
            + (f"{t.ms / f.ms:>12.2f}" if t is not None else "")
        )
    print(
        "ms: navigation to rendered (median). ratio = console/bare; console/frame: the page's "
        "own content against the bare grid inside the console's navigation and connection "
        "sidebar; 90%: where console/frame lies in 90% of resamples of this run's rounds "
        "(benchmarks/_ratio.py). JS: the tab's main-thread JavaScript time until rendered "
        "(median)."
        + (
            (
                f" twin/frame: a second console server running {args.twin_from}, in the same "
                "rounds."
                if args.twin_from
                else " twin/frame: a second console server of the same code, in the same "
                "rounds; its distance from console/frame is this run's noise."
            )
            if twin is not None
            else ""
        )
    )
    for when, mib in memory:
        shown = f"{mib:,.0f} MiB" if mib is not None else "n/a"
        print(f"console process peak memory {when}: {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
