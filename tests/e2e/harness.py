"""Pieces shared by the browser tests and the UI benchmark (no pytest dependency).

* :func:`seed_namespace`: the small deterministic data the e2e tests rely on;
* :class:`StreamlitServer`: ``streamlit run <script>`` in its own process group on a free port,
  health-checked, killed as a group;
* :func:`launch_chromium`: Debian's Chromium (Playwright never downloads a browser here);
* :func:`wait_for_app` / :func:`settle` / :func:`goto` / :func:`key`: drive a Streamlit page.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("LANCE_LOG", "error")

from playwright.sync_api import Browser, Locator, Page, Playwright, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.support import free_port

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "test-artifacts" / "screenshots"
CHROMIUM = os.environ.get("LANCE_CONSOLE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]
VIEWPORT = {"width": 1440, "height": 900}
STARTUP_TIMEOUT_S = 60.0
# Generous: two cores are shared with other work; every wait is still bounded.
APP_TIMEOUT_MS = 30_000
EXPECT_TIMEOUT_MS = 15_000
RUN_SEEN_MS = 10_000  # longest wait for a page load's first script run to show up
# After a click or a key, the run it starts is counted as it finishes (RUN_COUNTER_JS); a run
# still going after this is waited for as under way, and an action that starts no run costs
# this wait, after which the caller's next expect checks the outcome with its own timeout.
CLICK_RUN_SEEN_MS = 4_000
LIST_OPEN_MS = 2_000  # a selectbox's list opens on its click well within this
PICK_TRIES = 4  # clicks of a selectbox's "Open" before a pick gives up

# The deterministic data every e2e test may rely on (besides whatever the demo adds).
E2E_NAMESPACE = "e2e"
DOCS_TABLE = "docs"  # id:int64, text:string, category:string, vector:fixed_size_list<float32,16>
NOTES_TABLE = "notes"  # id:int64, body:string
# Versions only (no other test writes to it): v1 create 5 rows, v2 append 3, v3 delete 2,
# v4 add column "doubled" -> 6 rows.
HISTORY_TABLE = "history"
HISTORY_OPERATIONS = ("Overwrite", "Append", "Delete", "Merge")
DOCS_ROWS = 512
DOCS_VERSIONS = 3  # create + 2 appends
VECTOR_DIM = 16
# id:int64, vector:fixed_size_list<float32,16>: clustered directions with norms spread over two
# orders of magnitude (cosine and l2 neighbours differ), an IVF_PQ index with the cosine metric.
COSINE_TABLE = "cosine"
COSINE_ROWS = 2_000
COSINE_SEED = 11
COSINE_PARTITIONS = 8
COSINE_SUB_VECTORS = 8
# A saved connection (in the console's $LANCE_CONSOLE_CONFIG) to the same target as the
# launcher's default: the picker offers it as "e2e_saved (<kind>, config)".
SAVED_CONNECTION = "e2e_saved"


# --------------------------------------------------------------------------- data


def _ipc(table: Any) -> bytes:
    import pyarrow as pa

    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def cosine_vectors() -> Any:
    """The vectors of :data:`COSINE_TABLE` (``COSINE_ROWS`` x ``VECTOR_DIM`` float32, fixed
    seed): 20 clusters of directions, each vector scaled to a norm between 0.1 and 10."""
    import numpy as np

    rng = np.random.default_rng(COSINE_SEED)
    centres = rng.normal(size=(20, VECTOR_DIM))
    points = centres[rng.integers(0, 20, COSINE_ROWS)] + 0.6 * rng.normal(
        size=(COSINE_ROWS, VECTOR_DIM)
    )
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    norms = 10.0 ** rng.uniform(-1.0, 1.0, size=(COSINE_ROWS, 1))
    return (points * norms).astype(np.float32)


def seed_namespace(root: Path | str, storage_options: dict[str, str] | None = None) -> Any:
    """Small deterministic data under ``root``: the console's demo (``backend.demo.data``, local
    folders only) plus namespace ``e2e`` with ``docs`` (3 versions, text + vector columns),
    ``notes``, ``history`` (4 versions of different operations) and ``cosine`` (a cosine
    IVF_PQ index). An object-store root (``s3://...``) takes ``storage_options``. Returns the
    demo's summary (``None`` on an object store)."""
    import lance
    import numpy as np
    import pyarrow as pa
    from lance.namespace import (
        CreateNamespaceRequest,
        CreateTableRequest,
        DescribeTableRequest,
        DirectoryNamespace,
    )

    from backend.demo.data import create_demo_namespace
    from tests.support import demo_copy

    so = dict(storage_options or {})
    local = "://" not in str(root) or str(root).startswith("file://")
    demo = None
    if local:
        path = Path(str(root).removeprefix("file://"))
        if not path.exists() or not any(path.iterdir()):
            if path.exists():
                path.rmdir()
            demo_copy(path)
        demo = create_demo_namespace(root)  # the copy as it is: its summary

    ns = DirectoryNamespace(root=str(root), **{f"storage.{k}": v for k, v in so.items()})

    def append(rows: Any, location: str) -> Any:
        return lance.write_dataset(rows, location, mode="append", storage_options=so or None)

    ns.create_namespace(CreateNamespaceRequest(id=[E2E_NAMESPACE]))
    rng = np.random.default_rng(7)
    n = DOCS_ROWS
    docs = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "text": [
                f"document {i} about {('lance', 'arrow', 'vectors')[i % 3]}" for i in range(n)
            ],
            "category": [("alpha", "beta", "gamma")[i % 3] for i in range(n)],
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(rng.random(n * VECTOR_DIM, dtype=np.float32)), VECTOR_DIM
            ),
        }
    )
    ns.create_table(CreateTableRequest(id=[E2E_NAMESPACE, DOCS_TABLE]), _ipc(docs))
    location = ns.describe_table(DescribeTableRequest(id=[E2E_NAMESPACE, DOCS_TABLE])).location
    for start in range(DOCS_VERSIONS - 1):
        extra = docs.slice(start * 8, 8).set_column(
            0, "id", pa.array(range(n + start * 8, n + start * 8 + 8), pa.int64())
        )
        append(extra, location)
    notes = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "body": ["one", "two", "three"]})
    ns.create_table(CreateTableRequest(id=[E2E_NAMESPACE, NOTES_TABLE]), _ipc(notes))

    history = pa.table({"id": pa.array(range(5), pa.int64()), "label": [f"r{i}" for i in range(5)]})
    ns.create_table(CreateTableRequest(id=[E2E_NAMESPACE, HISTORY_TABLE]), _ipc(history))
    location = ns.describe_table(DescribeTableRequest(id=[E2E_NAMESPACE, HISTORY_TABLE])).location
    more = pa.table({"id": pa.array(range(5, 8), pa.int64()), "label": ["r5", "r6", "r7"]})
    ds = append(more, location)
    ds.delete("id < 2")
    ds.add_columns({"doubled": "id * 2"})

    vectors = cosine_vectors()
    cosine = pa.table(
        {
            "id": pa.array(range(COSINE_ROWS), pa.int64()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), VECTOR_DIM),
        }
    )
    ns.create_table(CreateTableRequest(id=[E2E_NAMESPACE, COSINE_TABLE]), _ipc(cosine))
    location = ns.describe_table(DescribeTableRequest(id=[E2E_NAMESPACE, COSINE_TABLE])).location
    lance.dataset(location, storage_options=so or None).create_index(
        "vector",
        "IVF_PQ",
        metric="cosine",
        num_partitions=COSINE_PARTITIONS,
        num_sub_vectors=COSINE_SUB_VECTORS,
    )
    return demo


# --------------------------------------------------------------------------- streamlit server


@dataclass
class StreamlitServer:
    """``streamlit run <script>`` in its own process group, on a free loopback port."""

    script: Path
    env: dict[str, str]
    log_path: Path
    extra_args: list[str] = field(default_factory=list)
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    cwd: Path = REPO  # another checkout's: its modules are imported (with PYTHONPATH in env)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = STARTUP_TIMEOUT_S) -> StreamlitServer:
        self.port = self.port or free_port()
        cmd = [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(self.script),
            "--server.port",
            str(self.port),
            "--server.headless",
            "true",
            "--server.address",
            "127.0.0.1",
            "--server.fileWatcherType",
            "none",
            "--browser.gatherUsageStats",
            "false",
            *self.extra_args,
        ]
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **self.env}
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            cmd,
            cwd=self.cwd,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"streamlit exited with {self.proc.returncode} before answering:\n"
                    + self.log_tail()
                )
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as resp:
                    if resp.read().decode().strip() == "ok":
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(
            f"streamlit did not answer /_stcore/health in {timeout_s}s:\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
            except ProcessLookupError:
                pass
        self._log.close()
        self.proc = None


# Chromium features switched off on top of Playwright's own list: every browser context of the
# new headless mode starts a renderer for the address bar's popup (a WebUI page nobody sees):
# about 0.75 s of CPU per context, and 0.25 s more in the browser process, out of ~3.6 s per
# console page load (a quarter of the browser tests' CPU on two cores).
DISABLED_FEATURES = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup")
_FEATURES_FLAG = "--disable-features="


def _descendants(pid: int) -> list[int]:
    """Process ids under ``pid`` (Linux ``/proc``; empty elsewhere)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            parents[int(entry.name)] = int(stat.rpartition(")")[2].split()[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def _disabled_features_of_our_browsers() -> list[str]:
    """The ``--disable-features`` list Playwright gave the Chromium browser processes this
    process started (its own list, which a second ``--disable-features`` would replace)."""
    for pid in _descendants(os.getpid()):
        with contextlib.suppress(OSError):
            args = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
            if any(a.startswith("--type=") for a in args):
                continue  # a child of the browser process (renderer, GPU, utility)
            for arg in reversed(args):
                if arg.startswith(_FEATURES_FLAG):
                    return [f for f in arg.removeprefix(_FEATURES_FLAG).split(",") if f]
    return []


def launch_chromium(pw: Playwright) -> Browser:
    """Debian's Chromium, headless, with :data:`DISABLED_FEATURES` added to the features
    Playwright switches off. Chromium keeps the last ``--disable-features`` only, so the first
    launch reads Playwright's list from the browser's command line and the browser is launched
    again with both; where that list cannot be read, the first browser is kept as it is."""
    browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    playwright_list = _disabled_features_of_our_browsers()
    if not playwright_list:
        return browser
    browser.close()
    features = list(dict.fromkeys([*playwright_list, *DISABLED_FEATURES]))
    return pw.chromium.launch(
        executable_path=CHROMIUM,
        headless=True,
        args=[*CHROMIUM_ARGS, _FEATURES_FLAG + ",".join(features)],
    )


@dataclass
class Console:
    """A running console bound to one backend."""

    kind: str  # "local" | "rest" | "s3"
    target: str  # what LANCE_CONSOLE_TARGET says
    server: StreamlitServer
    # the namespace root on disk (for the REST backend: the server's root; for s3: its URI)
    root: Path | str
    demo: Any = None  # backend.demo.data.DemoSummary of the demo data under ``root`` (s3: none)
    # what a client of ``target`` needs besides it (s3: endpoint, region, keys, allow_http)
    storage_options: dict[str, str] = field(default_factory=dict)

    def client(self) -> Any:
        """A new ``backend.connect`` client of the console's target (with its storage
        options)."""
        import backend

        if self.storage_options:
            return backend.connect(self.target, storage_options=self.storage_options)
        return backend.connect(self.target)

    @property
    def url(self) -> str:
        return self.server.url


# --------------------------------------------------------------------------- app helpers


APP = '[data-testid="stApp"]'
EXCEPTION = '[data-testid="stException"]'


# The app has settled: connected, its script run finished, no running indicator and no element
# still a loading skeleton. One predicate, evaluated in the page at every animation frame (an
# ``expect`` chain polls with a back-off that grows to a second, which added up to several
# hundred milliseconds to every wait); the page benchmarks build on the same one.
SETTLED_JS = """
() => {
  const shown = (el) => {
    if (!el) return false;
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== "hidden";
  };
  const app = document.querySelector('[data-testid="stApp"]');
  return shown(app)
    && app.getAttribute("data-test-connection-state") === "CONNECTED"
    && app.getAttribute("data-test-script-state") === "notRunning"
    && !shown(document.querySelector('[data-testid="stStatusWidget"]'))
    && document.querySelector('[data-testid="stSkeleton"]') === null;
}
"""


def wait_for_app(page: Page, timeout_ms: int = APP_TIMEOUT_MS) -> None:
    """Wait until the app is connected, its script has finished running and no element is
    still a loading skeleton (:data:`SETTLED_JS`, checked at every animation frame)."""
    try:
        page.wait_for_function(SETTLED_JS, polling="raf", timeout=timeout_ms)
    except PlaywrightTimeoutError:
        # Say which condition never held.
        app = page.locator(APP)
        short = 1_000
        expect(app).to_be_visible(timeout=short)
        expect(app).to_have_attribute("data-test-connection-state", "CONNECTED", timeout=short)
        expect(app).to_have_attribute("data-test-script-state", "notRunning", timeout=short)
        expect(page.get_by_test_id("stStatusWidget")).to_be_hidden(timeout=short)
        expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=short)
        raise


def assert_no_exception(page: Page) -> None:
    """No traceback box anywhere on the page (``st.exception`` / uncaught errors)."""
    expect(page.locator(EXCEPTION)).to_have_count(0, timeout=1_000)


def settle(page: Page, timeout_ms: int = APP_TIMEOUT_MS) -> None:
    wait_for_app(page, timeout_ms)
    assert_no_exception(page)


def settle_load(page: Page) -> None:
    """After a page load (goto, reload): wait for its first script run to be counted, then
    :func:`settle`. Connected and "notRunning" also describe the moment before that run
    starts, and an interaction made while it runs is undone when it redraws the page (its
    once-only notices go, the elements after them move). Needs :data:`RUN_COUNTER_JS`."""
    with contextlib.suppress(PlaywrightTimeoutError):
        page.wait_for_function("() => (window.__stRuns || 0) >= 1", timeout=RUN_SEEN_MS)
    settle(page)


def page_url_for(base_url: str, url_path: str = "", **query: str) -> str:
    """URL of a page of an app served at ``base_url`` (every page has its own path, the
    default one too: ``/`` forwards to ``/tables``)."""
    qs = urllib.parse.urlencode(query, quote_via=urllib.parse.quote)
    return f"{base_url}/{url_path}" + (f"?{qs}" if qs else "")


def page_url(console: Console, url_path: str = "", **query: str) -> str:
    return page_url_for(console.url, url_path, **query)


def goto(page: Page, console: Console, url_path: str = "", **query: str) -> None:
    """Open a page of the console (``url_path`` from app/main.py, query parameters as keywords)
    and wait for it to render, with no traceback and no "Page not found" dialog."""
    page.goto(page_url(console, url_path, **query))
    settle_load(page)
    expect(page.get_by_text("Page not found")).to_have_count(0, timeout=1_000)


def key(widget_key: str) -> str:
    """CSS selector of a keyed element: Streamlit adds class ``st-key-<key>`` with every
    character outside ``[A-Za-z0-9_-]`` replaced by ``-`` (``tables.search`` ->
    ``.st-key-tables-search``)."""
    return ".st-key-" + re.sub(r"[^A-Za-z0-9_-]", "-", widget_key.strip())


def open_expander(scope: Page | Locator, title: str) -> Locator:
    """Expand the ``st.expander`` whose header reads ``title`` (if closed); returns it."""
    root = scope if isinstance(scope, Page) else scope.page
    exp = scope.get_by_test_id("stExpander").filter(
        has=root.locator("summary").filter(has_text=title)
    )
    expect(exp).to_have_count(1)
    details = exp.locator("details")
    if details.get_attribute("open") is None:
        exp.locator("summary").click()
    expect(details).to_have_attribute("open", "")
    return exp


def open_tab(scope: Locator, name: str) -> Locator:
    """Select the ``st.tabs`` tab ``name`` in ``scope``; returns the visible tab panel."""
    tab = scope.get_by_role("tab", name=name)
    tab.click()
    expect(tab).to_have_attribute("aria-selected", "true")
    return scope.get_by_role("tabpanel").filter(visible=True)


def manage_versions(page: Page, tab: str) -> Locator:
    """On the Versions page: open the "Manage versions" panel (drawn once opened) at ``tab``
    (only the open tab is drawn), waiting for each run; returns the tab's panel."""
    from components.versions.tabs import MANAGE_LABEL

    main = page.get_by_test_id("stMain")
    box = main.get_by_test_id("stExpander").filter(
        has=page.locator("summary").filter(has_text=MANAGE_LABEL)
    )
    expect(box).to_have_count(1)
    if box.locator("details").first.get_attribute("open") is None:
        after_rerun(page, lambda: open_expander(main, MANAGE_LABEL))
    button = box.get_by_role("tab", name=tab, exact=True)
    if button.get_attribute("aria-selected") != "true":
        after_rerun(page, button.click)
    expect(button).to_have_attribute("aria-selected", "true")
    panel = box.get_by_role("tabpanel").filter(visible=True)
    expect(panel).to_have_count(1)
    return panel


def read_only_switch(page: Page) -> Locator:
    """The sidebar's read-only toggle (keyed ``ro``, bound to ``?ro=``)."""
    return page.get_by_test_id("stSidebar").get_by_role("switch", name="Read-only")


def set_read_only(page: Page, on: bool) -> None:
    """Flip the sidebar's read-only switch to ``on`` and wait for the rerun."""
    switch = read_only_switch(page)
    if switch.is_checked() != on:
        after_rerun(page, lambda: page.locator(key("ro")).locator("label").first.click())
    expect(switch).to_be_checked(checked=on)


_CONTENT_HEIGHT_JS = """() => {
  const el = (id) => document.querySelector(`[data-testid="${id}"]`);
  const main = el('stMain');
  const block = el('stMainBlockContainer');
  const bottom = block && main ? block.getBoundingClientRect().bottom + main.scrollTop : 0;
  return Math.ceil(Math.max(
    bottom, ...['stMain', 'stSidebarContent'].map((id) => el(id)?.scrollHeight ?? 0)));
}"""
_TWO_FRAMES_JS = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"


# Until no finite animation runs (an expander opening grows its height for some 300 ms; the
# loading spinners' and skeletons' endless ones are not waited for), at most ``limit`` ms.
_ANIMATIONS_DONE_JS = """
async (limit) => {
  const until = performance.now() + limit;
  const finite = (a) => a.playState === "running" && a.effect
    && a.effect.getComputedTiming().iterations !== Infinity;
  while (document.getAnimations().some(finite) && performance.now() < until) {
    await new Promise((done) => setTimeout(done, 50));
  }
}
"""
SHOT_ANIMATION_MS = 2_000


def full_screenshot(page: Page, path: Path) -> Path:
    """Screenshot of the whole app, once its running animations have ended (an expander shot
    while it opens shows its content cut): Streamlit scrolls inside ``stMain``, not the
    document, so the viewport is grown to the content's height for the shot, then restored.
    The content is measured again after each resize (a re-layout can make it taller), at most
    three times."""
    path.parent.mkdir(parents=True, exist_ok=True)
    page.evaluate(_ANIMATIONS_DONE_JS, SHOT_ANIMATION_MS)
    size = page.viewport_size or VIEWPORT
    current = size["height"]
    try:
        for _ in range(3):
            tall = min(max(int(page.evaluate(_CONTENT_HEIGHT_JS)), size["height"]), 8_000)
            if tall <= current:
                break
            page.set_viewport_size({"width": size["width"], "height": tall})
            current = tall
            page.evaluate(_TWO_FRAMES_JS)
        page.screenshot(path=str(path), full_page=True)
    finally:
        page.set_viewport_size(size)
    return path


def section(scope: Locator, heading: str) -> Locator:
    """The elements that follow the (sub)header ``heading`` up to the next header of the same
    block: Streamlit lays a page out as flat siblings, so a "section" is a sibling range."""
    head = f'.//*[@data-testid="stHeading"][.//*[self::h1 or self::h2 or self::h3 or self::h4][normalize-space()="{heading}"]]'
    nearest = './/*[@data-testid="stHeading"]'
    return scope.locator(
        f"xpath={head}/ancestor::*[@data-testid='stElementContainer'][1]"
        f"/following-sibling::*[not({nearest})]"
        f"[preceding-sibling::*[{nearest}][1][{head}]]"
    )


def metric(scope: Page | Locator, label: str) -> Locator:
    """The value of the figure labelled ``label``: an ``st.metric``'s, or one of a line of
    figures (``components.common.render_figures``: ``Label **value** · Label **value**``)."""
    assert "'" not in label, label
    root = scope if isinstance(scope, Page) else scope.page
    as_metric = (
        scope.get_by_test_id("stMetric")
        .filter(has=root.get_by_test_id("stMetricLabel").get_by_text(label, exact=True))
        .get_by_test_id("stMetricValue")
    )
    in_line = scope.get_by_test_id("stMarkdown").locator(
        "xpath=.//strong[normalize-space(translate(preceding-sibling::text()[1], '·', ' '))"
        f"='{label}']"
    )
    return as_metric.or_(in_line)


def grid(scope: Locator, index: int = 0) -> Locator:
    """The ``index``-th ``st.dataframe`` in ``scope``."""
    return scope.get_by_test_id("stDataFrame").nth(index)


def grid_rows(frame: Locator) -> Locator:
    """The data rows of an ``st.dataframe``. The grid draws on a canvas; its cells also live in
    an accessible ``<table>`` inside the canvas (rows on screen only, filled shortly after the
    first paint), which Playwright's role engine does not see: use CSS and let ``expect``
    retry."""
    return frame.locator("table tbody tr")


def grid_cells(row: Locator) -> Locator:
    return row.locator("td")


def grid_row(frame: Locator, cell: str) -> Locator:
    """The data row(s) of an ``st.dataframe`` with a cell reading exactly ``cell``."""
    exact = frame.page.locator("td").filter(has_text=re.compile(rf"^{re.escape(cell)}$"))
    return grid_rows(frame).filter(has=exact)


# Counts finished script runs in the page, so a test can wait for the rerun its own click
# caused instead of guessing: every run, the page's, a fragment's or a dialog's, ends with the
# server's ScriptFinished message (a ForwardMsg with field 6 set), read off the websocket. Each
# run counts once, however quick: a run whose start and end reach the page in one render never
# shows "running" in ``stApp``'s ``data-test-script-state``.
RUN_COUNTER_JS = """
(() => {
  window.__stRuns = 0;
  const finished = (buffer) => {  // a top-level field 6 (script_finished), varint
    const b = new Uint8Array(buffer);
    let i = 0;
    const varint = () => {
      let value = 0, shift = 0, byte;
      do { byte = b[i++]; value += (byte & 0x7f) * 2 ** shift; shift += 7; }
      while (byte & 0x80 && i < b.length);
      return value;
    };
    while (i < b.length) {
      const key = varint(), field = Math.floor(key / 8), wire = key % 8;
      if (field === 6 && wire === 0) return true;
      if (wire === 0) varint();
      else if (wire === 2) {
        const length = varint();  // i += varint() would add it to i as it was before the read
        i += length;
      }
      else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else return false;
    }
    return false;
  };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        if (event.data instanceof ArrayBuffer && finished(event.data)) window.__stRuns += 1;
      });
    }
  };
})();
"""


def after_rerun(
    page: Page,
    action: Callable[[], Any],
    timeout_ms: int = APP_TIMEOUT_MS,
    *,
    run_seen_ms: int = CLICK_RUN_SEEN_MS,
) -> bool:
    """Do ``action`` (a click, a fill + Enter, ...), wait for the script run it triggers to
    finish, then :func:`settle`; returns whether a run was counted. Needs
    :data:`RUN_COUNTER_JS` as an init script.

    Every run counts as it finishes, a fragment's run of a few milliseconds too. After
    ``run_seen_ms`` without a counted run (a run still going, or an action that started none)
    the wait goes on to :func:`settle`, and the caller's next ``expect`` checks the outcome."""
    before = page.evaluate("window.__stRuns || 0")
    action()
    try:
        page.wait_for_function("n => (window.__stRuns || 0) > n", arg=before, timeout=run_seen_ms)
        seen = True
    except PlaywrightTimeoutError:
        seen = False
    settle(page, timeout_ms)
    return seen


def open_lazy(scope: Page | Locator, title: str) -> Locator:
    """Open an expander whose content is drawn once it is open (a rerun) and wait for that run
    to finish: a click in content that is still arriving can be lost."""
    page = scope if isinstance(scope, Page) else scope.page
    found: list[Locator] = []
    after_rerun(page, lambda: found.append(open_expander(scope, title)))
    return found[0]


SUBMIT_TRIES = 3
SUBMIT_RUN_MS = 8_000  # a submit button's click starts a script run well within this

# The click of a submit button was received: a run finished since, or one is under way, or the
# button left the page (the run that followed drew the page without it). Argument: the count
# of finished runs before the click and the button's element.
_SUBMIT_TAKEN_JS = """
([before, button]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  return (window.__stRuns || 0) > before
    || (app !== null && app.getAttribute("data-test-script-state") === "running")
    || !button.isConnected;
}
"""


def submit(page: Page, button: Locator) -> None:
    """Press a form's submit button (or another button whose click always starts a run and
    does the same when pressed again: a namespace tree's node) and wait for the run it
    starts, then :func:`settle`.

    A submit always starts a run, counted as it finishes (:data:`RUN_COUNTER_JS`). Should a
    click be dropped by the browser (no run finished within :data:`SUBMIT_RUN_MS`, none under
    way, the button still on the page), it is pressed again (at most :data:`SUBMIT_TRIES`
    times), so the test goes on to check what the submit did rather than fail on the lost
    click. A run that is slow to finish (a write on a busy machine) shows as under way and is
    never pressed again: a second press of a write's button could send the write twice."""
    expect(button).to_be_enabled()
    for _ in range(SUBMIT_TRIES):
        wait_for_app(page)  # no earlier run under way: one seen running is the click's
        before = page.evaluate("window.__stRuns || 0")
        handle = button.element_handle()
        handle.click()
        try:
            page.wait_for_function(_SUBMIT_TAKEN_JS, arg=[before, handle], timeout=SUBMIT_RUN_MS)
            break
        except PlaywrightTimeoutError:
            continue  # after the last press the caller's next expect checks the outcome
        finally:
            handle.dispose()
    settle(page)


def follow_link(page: Page, link: Locator, url: str | re.Pattern[str]) -> None:
    """Click a navigation link until the page's URL is ``url`` (at most :data:`SUBMIT_TRIES`
    clicks, :data:`SUBMIT_RUN_MS` each), then :func:`settle`. Following a link twice lands on
    the same page, so a click the browser dropped while the page was drawn again is clicked
    again rather than failing the test."""
    for _ in range(SUBMIT_TRIES - 1):
        link.click()
        try:
            expect(page).to_have_url(url, timeout=SUBMIT_RUN_MS)
            break
        except AssertionError:
            continue
    else:
        link.click()
        expect(page).to_have_url(url)
    settle(page)


def type_into(field: Locator, value: str) -> None:
    """Fill a text field inside an ``st.form`` and leave it, so the value is committed (and
    the form re-rendered) before the submit button is pressed: a submit click that races the
    commit-on-blur re-render can be lost."""
    field.fill(value)
    field.blur()
    expect(field).to_have_value(value)


def widget(scope: Page | Locator, test_id: str, label: str) -> Locator:
    """The widget of type ``test_id`` (``stSelectbox``, ``stCheckbox``, ...) labelled ``label``."""
    root = scope if isinstance(scope, Page) else scope.page
    return scope.get_by_test_id(test_id).filter(
        has=root.get_by_test_id("stWidgetLabel").get_by_text(label, exact=True)
    )


def version_box(scope: Page | Locator) -> Locator:
    """The Versions page's "Version" picker (a select box that takes a typed number too)."""
    return widget(scope, "stSelectbox", "Version").get_by_role("combobox")


def pick_version(scope: Page | Locator, version: int) -> None:
    """Open ``version`` in the Versions page's "Version" box: its number typed, then Enter
    (the way to any version, offered on the list's page or not); waits for the rerun."""
    page = scope if isinstance(scope, Page) else scope.page
    box = version_box(scope)
    box.click()
    box.fill(str(version))
    after_rerun(page, lambda: box.press("Enter"))
    expect(box).to_have_value(str(version))


def choose(scope: Page | Locator, label: str, option: str | re.Pattern[str]) -> None:
    """Pick the option whose text starts with ``option`` (or matches the pattern) in the
    selectbox labelled ``label``, and wait for the rerun."""
    page = scope if isinstance(scope, Page) else scope.page
    box = widget(scope, "stSelectbox", label)
    expect(box).to_have_count(1)
    combo = box.get_by_role("combobox")
    wanted = option if isinstance(option, re.Pattern) else re.compile(rf"^{re.escape(option)}")
    if wanted.search(combo.input_value()):
        return  # already chosen: picking it again would not rerun

    def pick() -> None:
        # A react-aria combobox: the "Open" button lists the options. A rerun that lands
        # between the two clicks (a fragment finishing, a widget default settling) re-renders
        # the box and closes its list: open it again rather than wait for an option that is gone.
        # A click that lands while the box is drawn again leaves the list closed: that shows at
        # once (the box is not expanded), so it is clicked again rather than waited for.
        for _ in range(PICK_TRIES):
            box.get_by_role("button", name="Open").click()
            item = page.get_by_role("option").filter(has_text=wanted).first
            try:
                expect(combo).to_have_attribute("aria-expanded", "true", timeout=LIST_OPEN_MS)
                item.click(timeout=8_000)
                return
            except (AssertionError, PlaywrightTimeoutError):
                page.keyboard.press("Escape")
                settle(page)
        raise AssertionError(f"{label!r}: option {wanted.pattern!r} never became clickable")

    after_rerun(page, pick)
    expect(combo).to_have_value(wanted)


def pick_in_form(scope: Locator, label: str, option: str) -> None:
    """Pick ``option`` in the selectbox labelled ``label`` of a form (no rerun until submit):
    open its list from the keyboard (a click on its "Open" button does not open it inside a
    form in an expander), type to filter, take the focused match with Enter, leave the field.

    While the list is open the field shows the typed filter text, so only its value after
    leaving it proves the pick: an Enter that lands before the filtered list has a focused
    option takes nothing, and leaving then puts back the previous value (empty, or the
    default). A key press that lands while the form is still being re-rendered opens
    nothing. Either way the pick is made again."""
    combo = widget(scope, "stSelectbox", label).get_by_role("combobox")
    expect(combo).to_have_count(1)
    listbox = scope.page.get_by_role("listbox")
    match = scope.page.get_by_role("option").filter(has_text=re.compile(rf"^{re.escape(option)}$"))
    for attempt in range(3):
        try:
            combo.focus()
            combo.press("ArrowDown")  # opens the list
            expect(listbox.first).to_be_visible(timeout=5_000)
            combo.fill(option)
            # Chosen from the keyboard: a pointer click can land on a label laid over the list.
            expect(match).to_have_count(1)
            combo.press("Enter")
            combo.blur()  # the pick is committed (and the form re-rendered) before the next field
            expect(listbox).to_have_count(0)
            expect(combo).to_have_value(option, timeout=2_000)
            return
        except AssertionError:
            if attempt == 2:
                raise
            combo.press("Escape")


def pick_many(scope: Locator, label: str, options: Sequence[str]) -> None:
    """Add ``options`` to the multiselect labelled ``label`` (inside a form or not): each typed
    into its field and taken with Enter, the list closed with Escape; a pick lost to a
    re-render is made again."""
    box = widget(scope, "stMultiSelect", label)
    expect(box).to_have_count(1)
    field = box.get_by_role("combobox")
    for option in options:
        chip = box.get_by_role("button", name=f"Remove {option}", exact=True)
        for attempt in range(3):
            if chip.count():  # taken already (an attempt's Enter that landed late)
                break
            try:
                field.click()
                field.fill(option)
                match = scope.page.get_by_role("option").filter(
                    has_text=re.compile(rf"^{re.escape(option)}$")
                )
                expect(match).to_have_count(1, timeout=5_000)
                field.press("Enter")
                field.press("Escape")
                expect(chip).to_have_count(1, timeout=3_000)
                break
            except AssertionError:
                if attempt == 2:
                    raise
                field.press("Escape")
    field.blur()


def set_checkbox(scope: Page | Locator, label: str, on: bool) -> None:
    """Tick or untick the checkbox labelled ``label`` (waits for the rerun when it changes)."""
    page = scope if isinstance(scope, Page) else scope.page
    box = widget(scope, "stCheckbox", label)
    expect(box).to_have_count(1)
    field = box.get_by_role("checkbox")
    if field.is_checked() != on:
        after_rerun(page, lambda: box.locator("label").first.click())
    expect(field).to_be_checked(checked=on)


# --------------------------------------------------------------------------- dialogs, grid picks
# (added for the tables page: write forms in dialogs, tables listed in a selectable grid)

GRID_ROW_PX = 35  # st.dataframe's default row (and header) height


def st_dialog(page: Page) -> Locator:
    """The open ``st.dialog`` (an open popover's content is a dialog too, for assistive tech)."""
    return page.get_by_role("dialog").and_(page.locator(':not([data-testid="stPopoverBody"])'))


def open_dialog(scope: Page | Locator, button: str) -> Locator:
    """Click the button labelled ``button`` (in ``scope``) that opens an ``st.dialog``; wait for
    the rerun and return the open dialog."""
    page = scope if isinstance(scope, Page) else scope.page
    after_rerun(page, scope.get_by_role("button", name=button, exact=True).click)
    dialog = st_dialog(page)
    expect(dialog).to_be_visible()
    return dialog


MENU_TRIES = 3


def open_menu(scope: Page | Locator, label: str, *, lazy: bool = False) -> Locator:
    """Open the ``st.popover`` labelled ``label`` in ``scope`` and return its content (an
    overlay of the page, named after the popover). ``lazy``: a popover whose content is built
    once it is open (a rerun: ``components.common.lazy_popover``). A click that a rerun under
    way swallows is tried again."""
    page = scope if isinstance(scope, Page) else scope.page
    button = scope.get_by_test_id("stPopoverButton").filter(has_text=label)
    for _ in range(MENU_TRIES):
        if button.get_attribute("aria-expanded") == "true":
            break
        if lazy:
            after_rerun(page, button.click)
        else:
            button.click()
        try:
            expect(button).to_have_attribute("aria-expanded", "true", timeout=2_000)
        except AssertionError:
            settle(page)
    body = page.locator(f'[data-testid="stPopoverBody"][aria-label="{label}"]')
    expect(body).to_be_visible()
    return body


# The tables page's write dialogs, each with the menu (popover) its button is in.
TABLES_OPENERS = (("Add a table", "Declare a table"), ("Namespace actions", "Create a namespace"))


def menu_button(scope: Page | Locator, menu: str, label: str) -> Locator:
    """The button labelled ``label`` in the ``st.popover`` ``menu`` of ``scope``, opened."""
    return open_menu(scope, menu).get_by_role("button", name=label, exact=True)


def close_menu(page: Page) -> None:
    """Close the open ``st.popover`` (Escape) and wait for it to be gone."""
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("stPopoverBody")).to_have_count(0)


def close_dialog(page: Page) -> None:
    """Dismiss the open ``st.dialog`` (Escape) and wait for it to be gone. An Escape can close
    the popover its button was in first (still open behind the dialog): then another."""
    for _ in range(MENU_TRIES):
        page.keyboard.press("Escape")
        try:
            expect(st_dialog(page)).to_have_count(0, timeout=2_000)
            break
        except AssertionError:
            continue
    expect(st_dialog(page)).to_have_count(0)
    settle(page)


def fits_width(frame: Locator) -> bool:
    """The grid ``frame`` shows every column without a horizontal scroll bar."""
    return bool(
        frame.locator(".dvn-scroller").evaluate("el => el.scrollWidth <= el.clientWidth + 1")
    )


def keyed_grid(scope: Page | Locator, key_prefix: str) -> Locator:
    """The ``st.dataframe`` whose key starts with ``key_prefix`` (keys that end in a hash)."""
    css = key(key_prefix).removeprefix(".")
    return scope.locator(f'[class*="{css}"]').get_by_test_id("stDataFrame")


def click_grid_row(frame: Locator, cell: str) -> None:
    """Click the row of a selectable ``st.dataframe`` with a cell reading exactly ``cell`` (the
    grid is a canvas: click at the row's position, in its row-marker column). The row must be
    on screen (no scrolling)."""
    row = grid_row(frame, cell)
    expect(row).to_have_count(1)
    index = int(row.get_attribute("aria-rowindex") or 0)  # 1 = header row
    assert index >= 2, f"row {cell!r} has no aria-rowindex"
    frame.click(position={"x": 16, "y": GRID_ROW_PX * (index - 1) + GRID_ROW_PX // 2})


def fresh_namespace(console: Console, *children: str, prefix: str = "tmp") -> str:
    """A new top-level namespace ``<prefix>_<hex>`` (and child namespaces) on the console's
    target, made through the backend; returns its name."""
    import uuid

    from lance_namespace import CreateNamespaceRequest

    ns = console.client()
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    ns.create_namespace(CreateNamespaceRequest(id=[name]))
    for child in children:
        ns.create_namespace(CreateNamespaceRequest(id=[name, child]))
    return name


def id_rows(start: int, n: int) -> Any:
    """A one-column Arrow table of int64 ids ``start`` .. ``start + n - 1``."""
    import pyarrow as pa

    return pa.table({"id": pa.array(range(start, start + n), pa.int64())})
