"""Browser end-to-end fixtures: real namespaces, a real ``streamlit run`` per backend, Chromium.

* ``local``: a directory namespace in a session tmp dir, seeded with small data;
* ``rest``: a ``lance.namespace.RestAdapter`` server (in this process) on another seeded tmp
  root; the console talks to it over HTTP;
* ``demo``: a copy of the demo namespace alone, for the tests that change its tables (the
  transaction demo; ``console_demo``);
* ``s3``: ``s3://<bucket>/root`` on moto's S3 server (``ThreadedMotoServer`` in this process,
  a free loopback port), seeded like the others but without the demo; the console gets its
  storage options as the launcher passes ``--storage`` (secrets through environment
  variables). Started once per session, only when a test asks for it (``console_s3``).

A test runs on ``local`` unless it names its backends (tests/e2e/marks.py says which run on
REST too).

Each console's ``$LANCE_CONSOLE_CONFIG`` holds one saved connection, ``SAVED_CONNECTION``, to
the same target (so that a test can pick a saved connection and reload).

One streamlit server per backend per session (started on first use), one Chromium per session
(Debian's ``/usr/bin/chromium``; Playwright never downloads a browser here), one browser
context per session and a new page (so a new Streamlit session) per test; a test marked
``own_browser_context`` gets a context of its own (the sign-in tests: cookies). Every test of this directory is marked ``e2e``.

Screenshots go to ``test-artifacts/screenshots/<test>-<backend>[-<label>].png`` (full page),
taken by the ``shot`` fixture and automatically when a test fails.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Page,
    Playwright,
    expect,
    sync_playwright,
)

from backend.config import launch
from backend.launcher import options
from tests.conftest import RestServer, S3Server

from .harness import (
    APP_TIMEOUT_MS,
    EXPECT_TIMEOUT_MS,
    REPO,
    RUN_COUNTER_JS,
    SAVED_CONNECTION,
    SCREENSHOTS,
    VIEWPORT,
    Console,
    StreamlitServer,
    full_screenshot,
    launch_chromium,
    seed_namespace,
)

# Every ``expect`` waits at most this long unless it says otherwise (the default 5 s is short for
# a script rerun on two busy cores).
expect.set_options(timeout=EXPECT_TIMEOUT_MS)

# --------------------------------------------------------------------------- collection


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent == here:
            item.add_marker(pytest.mark.e2e)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture(scope="session")
def local_e2e_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("e2e-local")
    seed_namespace(root)
    return root


@pytest.fixture(scope="session")
def rest_e2e_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestServer]:
    root = tmp_path_factory.mktemp("e2e-rest")
    seed_namespace(root)
    server = RestServer(root)
    try:
        yield server
    finally:
        server.stop()


def _toml_table(values: dict[str, str]) -> str:
    return "{" + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in values.items()) + "}"


def _start_console(
    kind: str,
    target: str,
    root: Path | str,
    logs: Path,
    *,
    storage: options.StorageOptions | None = None,
    storage_env: dict[str, str] | None = None,
    storage_options: dict[str, str] | None = None,
) -> Iterator[Console]:
    config = logs / f"connections-{kind}.toml"
    # One saved connection (to the same target), so that tests can pick a connection that a
    # reload must restore from ?conn=.
    profile = 'server_profile = "lance-dir"\n' if kind == "rest" else ""
    saved = f"[connections.{SAVED_CONNECTION}]\ntarget = {json.dumps(target)}\n{profile}"
    env = {
        "LANCE_CONSOLE_TARGET": target,
        # Never read or write the developer's saved connections.
        "LANCE_CONSOLE_CONFIG": str(config),
        # pylance's RestAdapter: the pages know up front what it does not implement
        **({"LANCE_CONSOLE_SERVER_PROFILE": "lance-dir"} if kind == "rest" else {}),
    }
    if storage is not None:
        # what the launcher hands the console for --storage (backend.launcher.cli.build_command):
        # non-secret options as JSON, secrets as the names of the variables that hold them
        env[launch.STORAGE_ENV] = json.dumps(storage.public)
        env[launch.STORAGE_SECRETS_ENV] = json.dumps(storage.secret_env)
        env.update(storage.child_env)
        env.update(storage_env or {})
        saved += f"storage_options = {_toml_table(storage.public)}\n"
        saved += f"secret_storage_env = {_toml_table(storage.secret_env)}\n"
    config.write_text(saved)
    server = StreamlitServer(
        script=REPO / "app" / "main.py", env=env, log_path=logs / f"streamlit-{kind}.log"
    ).start()
    if isinstance(root, Path):
        from backend.demo.data import (
            create_demo_namespace,  # already built: returns its summary
        )

        demo = create_demo_namespace(root)
    else:
        demo = None  # an object-store root has no demo
    console = Console(
        kind=kind, target=target, server=server, root=root, demo=demo,
        storage_options=dict(storage_options or {}),
    )  # fmt: skip
    failed_before = _FAILURES.count
    try:
        yield console
    finally:
        server.stop()
        if _FAILURES.count > failed_before:
            sys.stderr.write(f"\n--- streamlit ({kind}) log tail ---\n{server.log_tail()}\n")


class _FailureCounter:
    count = 0


_FAILURES = _FailureCounter()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.failed:
        _FAILURES.count += 1


@pytest.fixture(scope="session")
def e2e_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("e2e-logs")


@pytest.fixture(scope="session")
def console_local(local_e2e_root: Path, e2e_logs: Path) -> Iterator[Console]:
    yield from _start_console("local", str(local_e2e_root), local_e2e_root, e2e_logs)


@pytest.fixture(scope="session")
def console_demo(tmp_path_factory: pytest.TempPathFactory, e2e_logs: Path) -> Iterator[Console]:
    """A console on a fresh copy of the demo namespace alone, for tests that change the demo's
    tables (the transaction demo): the other consoles' demo figures stay as built."""
    from tests.support import demo_copy

    root = demo_copy(tmp_path_factory.mktemp("e2e-demo") / "root")
    yield from _start_console("demo", str(root), root, e2e_logs)


@pytest.fixture(scope="session")
def console_rest(rest_e2e_server: RestServer, e2e_logs: Path) -> Iterator[Console]:
    yield from _start_console("rest", rest_e2e_server.url, rest_e2e_server.root, e2e_logs)


# The variables the s3 console reads its keys from (``--storage KEY=env:NAME``).
S3_KEY_ID_ENV, S3_SECRET_ENV = "E2E_S3_KEY_ID", "E2E_S3_SECRET"


@pytest.fixture(scope="session")
def s3_e2e_root(s3_server: S3Server) -> str:
    """``s3://<bucket>/root`` on the session's moto server, seeded (no demo)."""
    target = f"s3://{s3_server.new_bucket()}/root"
    seed_namespace(target, s3_server.storage_options)
    return target


def s3_launch_storage(server: S3Server) -> tuple[options.StorageOptions, dict[str, str]]:
    """The launcher's ``--storage`` items for the moto server, as README shows them for an
    S3-compatible store (keys from environment variables), parsed by the launcher; and those
    variables."""
    env = {S3_KEY_ID_ENV: server.ACCESS_KEY, S3_SECRET_ENV: server.SECRET_KEY}
    items = [
        f"endpoint={server.endpoint}",
        f"region={server.REGION}",
        "allow_http=true",
        f"aws_access_key_id=env:{S3_KEY_ID_ENV}",
        f"aws_secret_access_key=env:{S3_SECRET_ENV}",
    ]
    return options.parse_storage(items, env), env


@pytest.fixture(scope="session")
def console_s3(s3_server: S3Server, s3_e2e_root: str, e2e_logs: Path) -> Iterator[Console]:
    storage, env = s3_launch_storage(s3_server)
    yield from _start_console(
        "s3", s3_e2e_root, s3_e2e_root, e2e_logs,
        storage=storage, storage_env=env, storage_options=s3_server.storage_options,
    )  # fmt: skip


@pytest.fixture(params=["local"])
def backend_kind(request: pytest.FixtureRequest) -> str:
    """A browser test runs on the local backend unless it names its backends
    (``marks.ON_BOTH_BACKENDS``, or ``@pytest.mark.parametrize("backend_kind", [...])``): see
    tests/e2e/marks.py for which tests run on REST as well."""
    return str(request.param)


@pytest.fixture
def console(backend_kind: str, request: pytest.FixtureRequest) -> Console:
    """The console of the test's backend (``backend_kind``: ``local`` by default, or as the test
    names them, e.g. ``["rest", "s3"]``)."""
    return request.getfixturevalue(f"console_{backend_kind}")


# --------------------------------------------------------------------------- browser


@pytest.fixture(scope="session")
def playwright_instance() -> Iterator[Playwright]:
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="session")
def browser(playwright_instance: Playwright) -> Iterator[Browser]:
    browser = launch_chromium(playwright_instance)
    try:
        yield browser
    finally:
        browser.close()


def _artifact_name(request: pytest.FixtureRequest) -> str:
    """``<test>-<backend>[-<other params>]``: one file name per test case."""
    node = request.node
    name = getattr(node, "originalname", None) or node.name
    callspec = getattr(node, "callspec", None)
    params = dict(callspec.params) if callspec else {}
    parts = [name]
    if "backend_kind" in params:
        parts.append(str(params.pop("backend_kind")))
    parts.extend(str(v) for v in params.values())
    return "-".join(parts)


def _new_context(browser: Browser) -> BrowserContext:
    """A browser context as the tests use it. Its pages prefer reduced motion (as a user who
    asks the system for it): the app's transitions are cut short, so Playwright does not wait
    for an element to stop moving before a click, and the browser draws fewer frames (about a
    quarter less wall time and a tenth less renderer CPU for a file of browser tests)."""
    context = browser.new_context(viewport=VIEWPORT, reduced_motion="reduce")
    context.set_default_timeout(APP_TIMEOUT_MS)
    context.add_init_script(RUN_COUNTER_JS)
    return context


@pytest.fixture(scope="session")
def shared_context(browser: Browser) -> Iterator[BrowserContext]:
    """One browser context for the session's tests: a page load in a context that has loaded
    the console before reuses its cached scripts (about 0.6 s of browser CPU and wall time less
    per load on two cores). Each test still gets its own page, so its own Streamlit session; the
    consoles keep no state in the browser but their cookies' (which only the sign-in tests use:
    they get a context of their own, ``own_browser_context``)."""
    context = _new_context(browser)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture(scope="session")
def shared_tab(shared_context: BrowserContext) -> list[Page]:
    """The tab of :func:`shared_context` that its tests take in turn (a one-item list, empty
    until the first test and after a test that failed: that tab is closed). Loading the console
    again in the same tab instead of a new one halves the browser's work of a page load (0.76 s
    of Chromium CPU against 1.56 s on two cores: no new renderer process to start and warm up)."""
    return []


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    """The test's tab: the shared tab of :func:`shared_context`, or a new tab in a context of its
    own for a test marked ``own_browser_context`` (cookies, storage and cache of its own). After
    a test the shared tab leaves the console (``about:blank``), which ends the test's Streamlit
    session as closing the tab would; the next test opens its page in a session of its own."""
    own = request.node.get_closest_marker("own_browser_context") is not None
    tabs: list[Page] = [] if own else request.getfixturevalue("shared_tab")
    context = _new_context(browser) if own else request.getfixturevalue("shared_context")
    if not tabs or tabs[0].is_closed():
        tabs[:] = [context.new_page()]
    pg = tabs[0]
    (SCREENSHOTS / f"{_artifact_name(request)}-FAILED.png").unlink(missing_ok=True)
    try:
        yield pg
    finally:
        rep = getattr(request.node, "rep_call", None)
        failed = rep is None or rep.failed  # no report: the setup failed
        if rep is not None and rep.failed:
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            try:
                full_screenshot(pg, SCREENSHOTS / f"{_artifact_name(request)}-FAILED.png")
            except Exception as exc:  # a failed screenshot must not hide the failure
                sys.stderr.write(f"failure screenshot not taken: {exc}\n")
        if own or failed:
            pg.close()  # a failed test's tab may be in any state: the next test gets a new one
            tabs.clear()
        else:
            pg.goto("about:blank")
        if own:
            context.close()


@pytest.fixture
def shot(page: Page, request: pytest.FixtureRequest) -> Callable[..., Path]:
    """``shot()`` / ``shot("label")``: a full-page screenshot of the current page."""

    def take(label: str | None = None) -> Path:
        name = _artifact_name(request) + (f"-{label}" if label else "")
        return full_screenshot(page, SCREENSHOTS / f"{name}.png")

    return take
