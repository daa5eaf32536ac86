"""Shared fixtures: real namespaces, never mocks.

``ns`` is parametrised over the two backends:
* ``local``: ``backend.connect(tmp_dir)`` (pylance DirectoryNamespace + our fixes);
* ``rest``: ``backend.connect(url)`` against ``lance.namespace.RestAdapter("dir", ..., port=0)``
  started in this process on its own tmp directory.
"""

from __future__ import annotations

import atexit
import functools
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

os.environ.setdefault("LANCE_LOG", "error")
# The console's audit log (every write), roles file, and REST namespaces' maintenance policies
# and job records (kept on the console's host) of this test run, never the developer's.
_RUN_STATE = tempfile.mkdtemp(prefix="lance-console-tests-")
atexit.register(shutil.rmtree, _RUN_STATE, ignore_errors=True)  # its servers stopped by then
os.environ.setdefault("LANCE_CONSOLE_AUDIT_DIR", os.path.join(_RUN_STATE, "audit"))
os.environ.setdefault("LANCE_CONSOLE_ROLES", os.path.join(_RUN_STATE, "roles.toml"))
os.environ.setdefault("LANCE_CONSOLE_POLICY_DIR", os.path.join(_RUN_STATE, "policies"))
os.environ.setdefault("LANCE_CONSOLE_JOBS_DIR", os.path.join(_RUN_STATE, "jobs"))
os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")

import backend  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _component_manifests_scanned_once() -> Iterator[None]:
    """Every new ``AppTest`` scans the metadata of every installed distribution for Streamlit
    components (``manifest_scanner.scan_component_manifests``: 0.3-0.5 s of CPU, about half of
    a short page test). The installed packages do not change during a test run, so the scan
    runs once per session and later AppTests reuse its result, as a ``streamlit run`` server
    scans once when it starts."""
    from streamlit.components.v2 import manifest_scanner

    original = manifest_scanner.scan_component_manifests
    scanned = functools.cache(lambda: tuple(original()))
    manifest_scanner.scan_component_manifests = lambda max_workers=None: list(scanned())
    yield
    manifest_scanner.scan_component_manifests = original


@pytest.fixture(scope="session", autouse=True)
def _console_streamlit_settings() -> None:
    """AppTests run the pages with the settings the launcher starts the console with
    (``backend.launcher.streamlit_settings``: the project's ``config.toml`` and the settings
    that always hold). Streamlit reads ``.streamlit/config.toml`` from the working directory
    when it first needs a setting, and a page test changes the working directory to its own
    temporary folder first: the pages ran with Streamlit's defaults instead (magic on, error
    details shown, a collection of all garbage after every run)."""
    from streamlit import config

    from backend.launcher.streamlit_settings import streamlit_settings

    config.get_config_options(
        force_reparse=True, options_from_flags=streamlit_settings("127.0.0.1")
    )


# Every REST server of a test process runs in one child process: pylance's RestAdapter, started
# on a root ("start ROOT": its port) and stopped ("stop PORT"), one answer line per request.
_REST_SERVERS = """
import sys
from lance.namespace import RestAdapter

servers = {}
for line in sys.stdin:
    verb, _, arg = line.rstrip("\\n").partition(" ")
    try:
        if verb == "start":
            adapter = RestAdapter("dir", {"root": arg}, host="127.0.0.1", port=0)
            adapter.start()
            servers[adapter.port] = adapter
            print(adapter.port, flush=True)
        else:
            servers.pop(int(arg)).stop()
            print("stopped", flush=True)
    except Exception as err:
        print("error", " ".join(repr(err).split()), flush=True)
"""


class RestServer:
    """A real Lance REST namespace server (pylance's ``RestAdapter``) on an ephemeral loopback
    port. The servers run in a child process shared by the test process's servers (started
    once, about 1 s), not in the test process: there, ``RestAdapter.stop()`` waits for the
    connections in flight without letting the process's other threads run, so a request of a
    console's background thread (the tables list's figures) was never finished and the stop
    never returned (a hung suite). An answer the child does not give within
    :data:`ANSWER_TIMEOUT_S` is an error, not a wait without end."""

    ANSWER_TIMEOUT_S = 60.0
    _lock = threading.Lock()
    _host: ClassVar[subprocess.Popen[str] | None] = None

    def __init__(self, root: Path):
        self.root = root
        answer = self._ask(f"start {root}")
        if not answer.isdigit():
            raise RuntimeError(f"the REST server on {root} did not start: {answer}")
        self.port = int(answer)
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        answer = self._ask(f"stop {self.port}")
        if answer != "stopped":
            raise RuntimeError(f"the REST server at {self.url} did not stop: {answer}")

    @classmethod
    def _ask(cls, request: str) -> str:
        """The child's answer to ``request`` (the child started first if need be)."""
        with cls._lock:
            host = cls._host
            if host is None or host.poll() is not None:
                host = cls._host = subprocess.Popen(
                    [sys.executable, "-c", _REST_SERVERS],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
            assert host.stdin is not None and host.stdout is not None
            host.stdin.write(request + "\n")
            host.stdin.flush()
            if not select.select([host.stdout], [], [], cls.ANSWER_TIMEOUT_S)[0]:
                host.kill()  # its servers go with it; the next request starts another
                host.wait()
                raise RuntimeError(
                    f"the REST servers' process gave no answer to {request!r} within "
                    f"{cls.ANSWER_TIMEOUT_S:.0f} s"
                )
            return host.stdout.readline().strip()


@pytest.fixture
def rest_server(tmp_path: Path) -> Iterator[RestServer]:
    root = tmp_path / "rest-root"
    root.mkdir()
    server = RestServer(root)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def local_ray() -> Any:
    """A local Ray, started by the first test that asks for one and shut down after the last
    of a run of such tests (:func:`pytest_runtest_teardown`): an idle local Ray keeps burning
    some 2 s of CPU a minute, which the rest of a test run would otherwise pay. The tests that
    use it run first (:func:`pytest_collection_modifyitems`), so that one worker starts one
    Ray for all of them instead of each worker its own, two Rays sharing the two cores."""
    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    return ray


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests that use :func:`local_ray` first, in their order, the others after them in
    theirs. pytest-xdist's work stealing gives each worker a contiguous share of the list and
    steals from its end: the first tests stay on the first worker, one after another."""
    items[:] = sorted(items, key=lambda item: "local_ray" not in _fixtures(item))


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Shut down :func:`local_ray`'s Ray after a test that used it when the next test does not
    (after the test's own fixtures, torn down before this hook's turn)."""
    if "local_ray" in _fixtures(item) and (
        nextitem is None or "local_ray" not in _fixtures(nextitem)
    ):
        import ray

        ray.shutdown()


def _fixtures(item: pytest.Item) -> list[str]:
    return list(getattr(item, "fixturenames", ()))


@pytest.fixture
def local_root(tmp_path: Path) -> Path:
    root = tmp_path / "local-root"
    root.mkdir()
    return root


@pytest.fixture(scope="session")
def built_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local root with ``tests.support.build_namespace`` built once per session: copy it
    (:func:`copy_built`) for a test that needs it fresh, instead of building it again."""
    from tests.support import build_namespace

    root = tmp_path_factory.mktemp("built-template") / "root"
    root.mkdir()
    build_namespace(backend.connect(str(root)))
    return root


@pytest.fixture(scope="session", autouse=True)
def _shared_builds(tmp_path_factory: pytest.TempPathFactory) -> None:
    """What ``tests.support.shared_build`` builds once per run goes in the run's base folder,
    which pytest-xdist's workers share (each worker's own is a folder inside it); pytest
    removes it with its older runs."""
    from tests import support

    base = tmp_path_factory.getbasetemp()
    support.SHARED_DIR = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "shared"


@pytest.fixture(scope="session")
def catalog_root() -> Path:
    """A local root at a reduced catalog scale, built once per test run and only read by the
    tests using it: 3,000 declared tables in ``many``, a table ``hist/t`` with 3,000
    versions (``tests.support.build_catalog``)."""
    from tests.support import build_catalog, shared_build

    folder, _ = shared_build(
        "catalog", lambda d: build_catalog(d / "root", tables=3_000, versions=3_000)
    )
    return folder / "root"


def copy_built(template: Path, dest: Path) -> Path:
    """A private copy of ``template`` at ``dest`` (which may exist, empty)."""
    shutil.copytree(template, dest, dirs_exist_ok=True)
    return dest


@pytest.fixture(params=["local", "rest"])
def backend_kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def ns(backend_kind: str, tmp_path: Path):
    """A connected namespace of each backend kind, on an empty root."""
    if backend_kind == "local":
        root = tmp_path / "local-root"
        root.mkdir()
        yield backend.connect(str(root))
    else:
        root = tmp_path / "rest-root"
        root.mkdir()
        server = RestServer(root)
        try:
            client = backend.connect(server.url)
            yield client
            close = getattr(client, "close", None)
            if close:
                close()
        finally:
            server.stop()


class _ConditionalPuts:
    """Conditional PUTs (If-None-Match / If-Match) of moto's S3 server, exclusive as on S3.

    moto (5.2.5) checks the condition of a PUT, then stores the object, without a lock: two
    concurrent ``If-None-Match: *`` PUTs of one key can both pass the check and both succeed,
    the later one replacing the earlier (two Lance writers then both commit the same version
    and the first one's commit is lost). Installed once per process: conditional PUTs are run
    one at a time, except in the buckets of ``widened``, where moto's own behaviour is kept and
    its window between check and store is widened to ``widened[bucket]`` seconds for keys
    under a ``_versions/`` prefix (Lance manifests); ``replaced[bucket]`` counts the objects
    such a PUT replaced."""

    lock = threading.Lock()
    widened: ClassVar[dict[str, float]] = {}
    replaced: ClassVar[dict[str, int]] = {}
    installed = False

    @classmethod
    def install(cls) -> None:
        if cls.installed:
            return
        from moto.s3.models import S3Backend
        from moto.s3.responses import S3Response

        respond, store = S3Response.put_object, S3Backend.put_object

        def put_object(self: Any) -> Any:
            if not (self.headers.get("If-None-Match") or self.headers.get("If-Match")):
                return respond(self)
            if self.bucket_name in cls.widened:
                return respond(self)
            with cls.lock:
                return respond(self)

        def stored(self: Any, bucket_name: str, key_name: str, *args: Any, **kwargs: Any) -> Any:
            delay = cls.widened.get(bucket_name)
            if delay is not None and "/_versions/" in key_name:
                time.sleep(delay)
                if self.get_object(bucket_name, key_name) is not None:
                    cls.replaced[bucket_name] = cls.replaced.get(bucket_name, 0) + 1
            return store(self, bucket_name, key_name, *args, **kwargs)

        S3Response.put_object = put_object  # type: ignore[method-assign]
        S3Backend.put_object = stored  # type: ignore[method-assign]
        cls.installed = True


def _moto_modules_listed_once() -> None:
    """moto's server finds the service of each request by listing its own package's folders
    (``moto.backends.list_of_moto_modules``: some 150 ``isdir`` calls per request, about a tenth
    of its CPU serving Lance's requests). The folders do not change while the tests run: the
    list is read once."""
    from moto import backends

    if not isinstance(backends.list_of_moto_modules, functools.partial):
        modules = tuple(backends.list_of_moto_modules())
        backends.list_of_moto_modules = functools.partial(iter, modules)  # type: ignore[assignment]


class S3Server:
    """moto's S3 in server mode (``ThreadedMotoServer``) on a free loopback port: a real
    S3-compatible HTTP endpoint that enforces conditional writes (If-None-Match), exclusively
    (:class:`_ConditionalPuts`) unless a bucket is made ``non_exclusive``."""

    ACCESS_KEY = "AKIDCONSOLETEST"
    SECRET_KEY = "console-test-secret-key-0123456789"
    REGION = "us-east-1"

    def __init__(self) -> None:
        import logging

        from moto.server import ThreadedMotoServer

        from tests.support import free_port

        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self.port = free_port()
        _ConditionalPuts.install()
        _moto_modules_listed_once()
        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self.server.start()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._buckets = 0
        self._client: Any = None
        self._client_lock = threading.Lock()

    def client(self):  # noqa: ANN201 - boto3 client
        """The server's boto3 client, made on first use and shared (a boto3 client is safe to
        use from several threads; making one costs some 50 ms of CPU: its service model)."""
        with self._client_lock:
            if self._client is None:
                import boto3

                self._client = boto3.client(
                    "s3",
                    endpoint_url=self.endpoint,
                    aws_access_key_id=self.ACCESS_KEY,
                    aws_secret_access_key=self.SECRET_KEY,
                    region_name=self.REGION,
                )
            return self._client

    def new_bucket(self) -> str:
        self._buckets += 1
        name = f"lake{self._buckets}"
        self.client().create_bucket(Bucket=name)
        return name

    def copy_bucket(self, source: str) -> str:
        """A new bucket holding a copy of every object of ``source`` (copied in the server)."""
        name = self.new_bucket()
        s3 = self.client()
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=source):
            for o in page.get("Contents", []):
                s3.copy_object(
                    Bucket=name, Key=o["Key"], CopySource={"Bucket": source, "Key": o["Key"]}
                )
        return name

    @property
    def storage_options(self) -> dict[str, str]:
        return {
            "aws_endpoint": self.endpoint,
            "aws_access_key_id": self.ACCESS_KEY,
            "aws_secret_access_key": self.SECRET_KEY,
            "aws_region": self.REGION,
            "allow_http": "true",
        }

    def non_exclusive(self, bucket: str, window: float) -> None:
        """Conditional PUTs of manifests in ``bucket`` as moto makes them (not exclusive), with
        ``window`` seconds between the check of the condition and the store."""
        _ConditionalPuts.widened[bucket] = window

    def replaced(self, bucket: str) -> int:
        """How many manifests a conditional PUT replaced in a ``non_exclusive`` bucket."""
        return _ConditionalPuts.replaced.get(bucket, 0)

    def objects(self, bucket: str) -> dict[str, str]:
        """Every object of ``bucket``: key -> ETag."""
        out: dict[str, str] = {}
        for page in self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for obj in page.get("Contents", []):
                out[obj["Key"]] = obj["ETag"]
        return out

    def stop(self) -> None:
        self.server.stop()


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    server = S3Server()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class S3Root:
    ns: Any  # the connected LocalNamespace
    bucket: str
    target: str  # s3://bucket/root
    server: S3Server


@pytest.fixture
def s3_root(s3_server: S3Server) -> S3Root:
    """A local-backend namespace on ``s3://<fresh bucket>/root`` of the moto server."""
    bucket = s3_server.new_bucket()
    target = f"s3://{bucket}/root"
    ns = backend.connect(target, storage_options=s3_server.storage_options)
    return S3Root(ns=ns, bucket=bucket, target=target, server=s3_server)
