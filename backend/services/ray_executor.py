"""Maintenance on a Ray cluster, through lance-ray: compaction and index builds for tables that
outgrow one machine (the optional ``[ray]`` extra).

:func:`compact` and :func:`create_index` do what the local backend's ``compact_files`` and
``create_table_index`` do, with the work spread over Ray workers (``lance_ray.compact_files``,
``create_scalar_index``, ``create_index``). They

1. check the request as the local executor does, before anything is sent: the gate's role and
   read-only refusal, the index rules (``index_rules.request_problems`` through
   ``request_rules``, then ``backend.local.indexes.check_build`` against the table), the
   compaction options; a refusal is recorded in the audit log (``gate.refusals``);
2. resolve the table's storage from the namespace: DescribeTable's location and storage options
   over the connection's own (local, object-store and REST roots alike). Refused up front, with
   the reason: a ``memory://`` root (it lives in this process), a table whose versions the
   server manages in its catalog (``managed_versioning``: a commit written straight to the
   storage would bypass it), a location a server gives that is not absolute (a relative path
   is never resolved against this console's working directory: ``InvalidInputError``), a
   location this console cannot open;
3. start or join Ray (:func:`connect`): the address given, else the launch's ``--ray-address``
   (:data:`ADDRESS_ENV`), else a local Ray. A remote address is first checked with a TCP
   connection that must answer as Ray's gRPC services do (HTTP/2), all within
   :data:`CONNECT_TIMEOUT`: an address that does not answer, or a server that is not Ray (a
   web server, a silent one), is a ``NamespaceConnectionError`` naming it in seconds, Ray is
   not asked to join, and nothing is changed;
4. check that a Ray worker can open the table at that location with those options (the
   workers read and write the storage themselves: a path on another machine's disk is not
   reachable from them) and run the work, recorded by the gate as the local maintenance is (a
   long write: a ``started`` entry first), under the same operation names (``compact_files``,
   ``create_table_index`` / ``create_table_scalar_index``): the same roles may run it. The
   request records the executor and the Ray address (an index request in its ``context``).

Index types: BTREE, FTS (lance's INVERTED) and IVF_PQ, the ones lance-ray builds in segments
and this console checks against the local build (same rows for equality and range filters,
identical full-text hits, recall@10). IVF_PQ on Ray samples its training rows per partition and
per PQ centroid (lance-ray checks ``sample_rate`` x partitions and x 2^num_bits against the
rows); when ``sample_rate`` is not given it is chosen to fit the table (at most lance's 256),
and the choice is returned (``chosen``). ``target_partition_size`` is not available on Ray
(lance-ray trains a fixed number of partitions). A distributed index has one segment per
worker; lance does not compact fragments across segments, so compaction after a Ray index
build plans nothing until an index optimize merges the segments.

Ray keeps its local processes alive only as long as the thread that started them: a local Ray
is started (and a cluster joined) on one long-lived thread of this module, whatever thread
(a Streamlit session, a job) asks first. One process joins one Ray cluster.

A branch is refused (a branch view, ``backend.branch_view.on_branch``, or an index request
naming one): lance-ray opens the table at its location and commits to its main, so the work
would land on main. ``UnsupportedOperationError``, nothing done; the local executor acts on
branches.

Jobs (``backend.services.jobs``) run this as ``executor="ray"`` (:class:`RayExecutor`: jobs
registers it at import when the extra is importable and loads it, with this module, at its
first use; :func:`register` plugs it into a registry explicitly): the job's record is the
console's (Ray forgets its jobs when its head restarts), with the Ray address, and says that
lance-ray gives no progress within its work and no cancel once it started. :data:`KINDS` maps
a job kind to the function that runs it, :func:`run` dispatches one.
"""

from __future__ import annotations

import concurrent.futures
import importlib.util
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from lance_namespace import CreateTableIndexRequest, DescribeTableRequest
from lance_namespace.errors import ErrorCode, LanceNamespaceError

from backend import capabilities, gate, redaction
from backend.branch_view import branch_name, branch_of
from backend.config import launch
from backend.errors import (
    NamespaceConnectionError,
    NamespaceTimeoutError,
    attach_error_details,
    clean_text,
    invalid,
    make,
    to_namespace_error,
)
from backend.rules import ids, request_rules
from backend.rules import index_rules as rules
from backend.services import jobs

EXECUTOR = "ray"
EXTRA_MISSING = "the Ray executor needs the [ray] extra: pip install 'lance-namespace-console[ray]'"
# Where the launcher's ``--ray-address`` reaches the console process.
ADDRESS_ENV = launch.RAY_ADDRESS_ENV
# Seconds: a remote address answering as Ray (TCP, then HTTP/2); joining it once it did;
# starting a local Ray (its processes start on a loaded machine in seconds, not milliseconds);
# a worker opening the table before the work (a busy cluster queues it).
CONNECT_TIMEOUT = 5.0
JOIN_TIMEOUT = 60.0
START_TIMEOUT = 180.0
PROBE_TIMEOUT = 180.0
# The index types this executor builds (the console's names).
INDEX_TYPES: tuple[str, ...] = ("BTREE", "FTS", "IVF_PQ")
# lance's default training sample per IVF partition and per PQ centroid.
DEFAULT_SAMPLE_RATE = rules.DEFAULT_SAMPLE_RATE
_MIN_SAMPLE_RATE = 2  # lance refuses fewer

Progress = Callable[[str, float], None]


# -- the address ------------------------------------------------------------------------------------
def address_problem(address: Any) -> str | None:
    """Why ``address`` cannot be a Ray address (``None``: it can). Accepted: ``host:port`` (a
    cluster's GCS, 6379 by default), ``ray://host:port`` (Ray Client, 10001 by default),
    ``auto`` (the cluster this machine belongs to) and ``local`` (a new local Ray). Pure."""
    if not isinstance(address, str) or not address.strip():
        return "the Ray address is empty"
    text = address.strip()
    if any(ord(c) < 33 or ord(c) == 127 for c in text):
        return "the Ray address contains white space or control characters"
    if text in ("auto", "local"):
        return None
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if scheme in ("http", "https"):
        return (
            f"{text} is a web address (the dashboard or the jobs API); give the cluster's "
            "address, host:6379, or ray://host:10001 for Ray Client"
        )
    if scheme not in ("", "ray"):
        return f"the Ray address {text!r} must be host:port or ray://host:port"
    try:
        parts = urlsplit(text if scheme else f"ray://{text}")
        port = parts.port
    except ValueError as exc:
        return f"the Ray address {text!r} is not valid: {exc}"
    if not parts.hostname:
        return f"the Ray address {text!r} has no host"
    if port is None:
        return f"the Ray address {text!r} has no port (host:6379, or ray://host:10001)"
    if "@" in parts.netloc or parts.path.strip("/") or parts.query:
        return f"the Ray address {text!r} must be host:port or ray://host:port, nothing else"
    return None


def check_address(address: Any) -> str:
    """``address`` stripped, or ``InvalidInputError`` saying why it is not a Ray address."""
    problem = address_problem(address)
    if problem:
        raise invalid(problem)
    return str(address).strip()


def default_address(env: Mapping[str, str] | None = None) -> str | None:
    """The launch's ``--ray-address`` (:data:`ADDRESS_ENV`), else ``None`` (a local Ray)."""
    return launch.launch_ray_address(env)


def _host_port(address: str) -> tuple[str, int] | None:
    if address in ("auto", "local"):
        return None
    parts = urlsplit(address if "://" in address else f"ray://{address}")
    assert parts.hostname is not None and parts.port is not None  # checked by address_problem
    return parts.hostname, parts.port


# The HTTP/2 connection preface and an empty SETTINGS frame (RFC 9113 3.4): what a client of
# Ray's gRPC services (the GCS, the Ray Client server) sends first; an HTTP/2 server answers
# with its own SETTINGS frame before anything else.
_H2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
_H2_SETTINGS = 0x4


def _not_ray(sock: socket.socket, deadline: float) -> str | None:
    """Why the server on ``sock`` is not a Ray cluster (``None``: it speaks Ray's protocol,
    gRPC over HTTP/2): its first frame must be HTTP/2 SETTINGS, within the deadline."""
    sock.sendall(_H2_HELLO)
    got = b""
    while len(got) < 9:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(left)
        chunk = sock.recv(9 - len(got))
        if not chunk:
            return "it closed the connection without answering as Ray does"
        got += chunk
    if got[3] == _H2_SETTINGS and got[4] == 0 and got[5:9] == bytes(4):
        return None
    return "it answered, but not in Ray's protocol (gRPC): a web server or another service?"


def _answers(address: str, timeout: float) -> None:
    """``NamespaceConnectionError`` naming ``address`` unless it accepts a TCP connection and
    answers as Ray's gRPC services do (:func:`_not_ray`), within ``timeout`` seconds in all:
    a refused port, an unknown host, a machine that is down, and a server that is not Ray (a
    web server, a silent one) are said in seconds, before Ray is asked to join (which would
    wait for a minute)."""
    found = _host_port(address)
    if found is None:
        return
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection(found, timeout=timeout)
    except TimeoutError:
        why = f"no answer within {timeout:g} s"
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
    else:
        with sock:
            try:
                problem = _not_ray(sock, deadline)
            except TimeoutError:
                problem = f"it accepted the connection but said nothing within {timeout:g} s"
            except OSError as exc:
                problem = f"it dropped the connection ({exc.strerror or type(exc).__name__})"
        if problem is None:
            return
        raise NamespaceConnectionError(
            f"{address} is not a Ray cluster: {problem}; nothing was changed. Check the "
            "address (host:6379 for the cluster, ray://host:10001 for Ray Client)"
        )
    raise NamespaceConnectionError(
        f"the Ray cluster at {address} does not answer ({why}); nothing was changed. Check "
        "the address (host:6379 for the cluster, ray://host:10001 for Ray Client) and that "
        "the cluster is up"
    )


def _first_line(exc: BaseException) -> str:
    """An engine error's first line, secrets masked (the rest is the engine's detail)."""
    text = str(exc).strip()
    return redaction.redact_text(text.splitlines()[0]) if text else type(exc).__name__


# -- the modules and the connection -----------------------------------------------------------------
def modules() -> tuple[Any, Any]:
    """``(ray, lance_ray)``, imported on first use; ``UnsupportedOperationError`` saying how to
    install them when the ``[ray]`` extra is missing."""
    try:
        import lance_ray
        import ray
    except ImportError as exc:
        raise make(
            ErrorCode.UNSUPPORTED, f"{EXTRA_MISSING} ({exc.name or exc} is missing)"
        ) from None
    return ray, lance_ray


class _Starter:
    """The one long-lived thread that starts a local Ray or joins a cluster: Ray's local
    processes die with the thread that started them, so it never ends. A daemon thread, not a
    ``ThreadPoolExecutor``'s (joined at exit): a join stuck on an address that is not Ray must
    not keep the console from exiting."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: list[tuple[Callable[[], Any], concurrent.futures.Future[Any]]] = []
        self._wake = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None

    def submit(self, work: Callable[[], Any]) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        with self._wake:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="ray-starter", daemon=True)
                self._thread.start()
            self._jobs.append((work, future))
            self._wake.notify()
        return future

    def _loop(self) -> None:
        while True:
            with self._wake:
                while not self._jobs:
                    self._wake.wait()
                work, future = self._jobs.pop(0)
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(work())
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                future.set_exception(exc)


_STARTER = _Starter()
_CONNECT_LOCK = threading.Lock()
_joined: str | None = None  # the address this module joined ("local": a Ray it started)
_pending: tuple[str, concurrent.futures.Future[Any]] | None = None  # a join still under way


def _current(ray: Any) -> str:
    """The address of the Ray this process is connected to."""
    if _joined and _joined not in ("auto", "local"):
        return _joined
    try:
        return str(ray.get_runtime_context().gcs_address)
    except Exception:  # noqa: BLE001 - Ray Client has no GCS address here
        return _joined or "a Ray cluster"


def connect(ray_address: str | None = None) -> str:
    """Start or join Ray, time-boxed, and return the address connected to.

    ``ray_address``: a cluster's address (:func:`address_problem`), else the launch's
    (:func:`default_address`), else a local Ray on this machine's cores. A process already
    connected (by this module or by its caller, such as a test's ``ray.init``) stays on that
    Ray when no address is given or the same one is; another address is refused: one process
    joins one cluster."""
    global _joined, _pending
    ray, _ = modules()
    address = ray_address if ray_address is not None else default_address()
    if address is not None:
        address = check_address(address)
    with _CONNECT_LOCK:
        if _pending is not None and not _pending[1].done():
            raise NamespaceConnectionError(
                f"this console is still waiting for Ray at {_pending[0]} to answer; restart "
                "the console to try another address"
            )
        if address is not None and address != "local":
            _answers(address, CONNECT_TIMEOUT)  # a dead address is named as such, always
        if ray.is_initialized():
            current = _current(ray)
            if address is None or address in (current, _joined):
                return current
            raise make(
                ErrorCode.INVALID_INPUT,
                f"this console process is connected to Ray at {current}; one process joins one "
                f"Ray cluster: start the console with --ray-address {address} to use that one",
            )
        kwargs: dict[str, Any] = {"log_to_driver": False}
        if address is None or address == "local":
            kwargs.update(include_dashboard=False)
        else:
            kwargs["address"] = address
        future = _STARTER.submit(lambda: ray.init(**kwargs))
        wait = START_TIMEOUT if address in (None, "local") else JOIN_TIMEOUT
        try:
            future.result(timeout=wait)
        except concurrent.futures.TimeoutError:
            where = address or "this machine"
            _pending = (where, future)
            raise NamespaceTimeoutError(
                f"Ray at {where} did not answer as a Ray cluster within {wait:g} s (is it the "
                "cluster's address, host:6379, or ray://host:10001 for Ray Client?); nothing "
                "was changed"
            ) from None
        except Exception as exc:
            message = (
                f"Ray at {address or 'this machine'} could not be joined (Ray's reason is in "
                "the details); nothing was changed"
            )
            raise attach_error_details(
                NamespaceConnectionError(message), message=message, detail=_first_line(exc)
            ) from None
        _joined = address or "local"
        return _current(ray)


def cluster_cpus() -> int:
    """The CPUs of the Ray cluster this process is connected to (at least 1)."""
    ray, _ = modules()
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


# -- the table's storage ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Storage:
    """Where a table's files are and how to open them: what the Ray workers get."""

    location: str
    storage_options: dict[str, str]
    display: str  # the table's id as the UI shows it

    def open(self) -> Any:
        import lance

        return lance.dataset(self.location, storage_options=self.storage_options or None)


def _location_problem(location: str) -> str | None:
    """Why a location a server gives is not one this console may open (``None``: it may): a
    relative path (this console would resolve it against its own working directory, not where
    the server keeps the table), a ``file:`` URI without an absolute path, or a URI without a
    host or bucket."""
    parts = urlsplit(location)
    scheme = parts.scheme.lower()
    if len(scheme) > 1:  # a URI (one letter is a Windows drive)
        if scheme == "file":
            if not parts.path.startswith("/"):
                return "a file: URI without an absolute path"
            return None
        if not parts.netloc:
            return f"a {scheme}: URI without a host or bucket"
        return None
    if not os.path.isabs(location):
        return (
            "a relative path, which this console would resolve against its own working "
            "directory, not where the server keeps the table"
        )
    return None


def resolve(ns: Any, table_id: Sequence[str]) -> Storage:
    """The table's location and storage options (DescribeTable's over the connection's own),
    refused up front when Ray workers could not use them (see the module docstring). On the
    local backend the namespace's guard is taken while the table is described (a crashed batch
    is recovered first), as the local maintenance does."""
    tid = list(table_id)
    shown = ids.display_id(tid)
    root = str(getattr(ns, "root", "") or "")
    if root.startswith("memory:"):
        raise make(
            ErrorCode.UNSUPPORTED,
            f"table {shown} is in a memory:// namespace, which lives in this console process "
            "only: Ray workers cannot read it. Use the local executor",
        )
    guard = getattr(ns, "write_guard", None)
    if callable(guard):
        with guard(tid):
            desc = ns.describe_table(DescribeTableRequest(id=tid))
    else:
        desc = ns.describe_table(DescribeTableRequest(id=tid))
    if desc.is_only_declared:
        raise make(ErrorCode.INVALID_TABLE_STATE, f"table {shown} is declared only: it has no data")
    if desc.managed_versioning:
        raise make(
            ErrorCode.UNSUPPORTED,
            f"the server manages the versions of table {shown} in its catalog: a commit the Ray "
            "workers wrote straight to the storage would bypass it. Run the maintenance on the "
            "server",
        )
    location = desc.location or desc.table_uri
    if not location:
        raise make(ErrorCode.INVALID_TABLE_STATE, f"table {shown} has no location")
    if str(location).startswith("memory:"):
        raise make(
            ErrorCode.UNSUPPORTED,
            f"table {shown} is stored in memory ({location}): Ray workers cannot read it",
        )
    remote = capabilities(ns).kind != "local"
    problem = _location_problem(str(location)) if remote else None
    if problem:
        raise invalid(
            f"table {shown}: the server gives its location as {clean_text(location, 200)!r}, "
            f"{problem}; the Ray executor works only on a table at an absolute location (an "
            "object store URI, or an absolute path every node mounts); nothing was changed"
        )
    options = {str(k): str(v) for k, v in (getattr(ns, "storage_options", None) or {}).items()}
    options.update({str(k): str(v) for k, v in (desc.storage_options or {}).items()})
    redaction.register_secrets(options)
    storage = Storage(str(location), options, shown)
    try:
        storage.open()
    except Exception as exc:  # noqa: BLE001 - pylance raises ValueError / OSError / Exception
        where = (
            "the REST server gives a location this console cannot open (a path on the "
            "server's own disk?), and the Ray executor reads the table from its storage"
            if remote
            else "this console cannot open it"
        )
        raise make(
            ErrorCode.INVALID_TABLE_STATE,
            f"table {shown} at {location}: {where}: {_first_line(exc)}",
        ) from None
    return storage


def check_workers(storage: Storage, *, timeout: float = PROBE_TIMEOUT) -> int:
    """The table's version as a Ray worker sees it: ``InvalidTableStateError`` when no worker
    can open the table at its location with its storage options (a path on another machine's
    disk, credentials the workers lack), ``NamespaceTimeoutError`` when no worker takes the
    check in time."""
    ray, _ = modules()

    def open_version(location: str, options: dict[str, str]) -> int:
        import lance

        return int(lance.dataset(location, storage_options=options or None).version)

    ref = ray.remote(open_version).remote(storage.location, storage.storage_options)
    try:
        return int(ray.get(ref, timeout=timeout))
    except ray.exceptions.GetTimeoutError:
        ray.cancel(ref, force=True)
        raise NamespaceTimeoutError(
            f"no Ray worker took the check of table {storage.display} within {timeout:g} s (the "
            "cluster is busy or has no free CPU); nothing was changed"
        ) from None
    except ray.exceptions.RayTaskError as exc:
        text = _first_line(getattr(exc, "cause", None) or exc)
        raise make(
            ErrorCode.INVALID_TABLE_STATE,
            f"the Ray workers cannot open table {storage.display} at {storage.location} "
            f"({text}): they read and write the table's storage "
            "themselves, so it must be reachable from every worker (an object store, or a "
            "path every node mounts) with credentials they have; nothing was changed",
        ) from None
    except ray.exceptions.RayError as exc:  # a worker that died, a node that left ...
        raise NamespaceConnectionError(
            f"the Ray cluster could not run the check of table {storage.display}: "
            f"{_first_line(exc)}; nothing was changed"
        ) from None


# -- compaction -------------------------------------------------------------------------------------
def compaction_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` checked against lance's ``CompactionOptions`` (``InvalidInputError`` naming
    an unknown one and the known ones)."""
    from lance.optimize import CompactionOptions

    known = tuple(CompactionOptions.__annotations__)
    unknown = sorted(k for k in options if k not in known)
    if unknown:
        raise invalid(
            f"unknown compaction option(s) {', '.join(unknown)}; lance's options are "
            + ", ".join(known)
        )
    for key in ("target_rows_per_fragment", "max_rows_per_group", "max_bytes_per_file"):
        value = options.get(key)
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < 1
        ):
            raise invalid(f"{key} must be a whole number of at least 1 (got {value!r})")
    return {k: v for k, v in options.items() if v is not None}


def _request(table_id: Sequence[str], address: str | None, **more: Any) -> dict[str, Any]:
    return {"id": list(table_id), "executor": EXECUTOR, "ray_address": address or "local", **more}


def _check_workers(num_workers: int | None) -> None:
    if num_workers is None:
        return
    if not isinstance(num_workers, int) or isinstance(num_workers, bool) or num_workers < 1:
        raise invalid(f"num_workers must be a whole number of at least 1 (got {num_workers!r})")


def _workers(num_workers: int | None) -> int:
    """The Ray workers to use: ``num_workers``, else the cluster's CPUs."""
    return cluster_cpus() if num_workers is None else num_workers


def _stage(progress: Progress | None, stage: str, fraction: float) -> None:
    if progress is not None:
        progress(stage, fraction)


def _engine_error(exc: BaseException, what: str) -> LanceNamespaceError:
    return to_namespace_error(exc, f"{what} on Ray")


def branch_refusal(ns: Any, branch: Any = None) -> LanceNamespaceError | None:
    """The refusal of work on a branch (``branch`` named, else ``ns`` a branch view's), or
    ``None`` on main. A bad branch name: ``InvalidInputError`` (raised)."""
    on = branch_name(branch) or branch_of(ns)
    if on is None:
        return None
    return make(
        ErrorCode.UNSUPPORTED,
        f"the Ray executor cannot act on branch {on!r}: lance-ray opens the table at its "
        "location and commits to its main, so the work would land on main; nothing was done. "
        "Run it on this console (the local executor) for a branch",
    )


def _refuse_branch(ns: Any, branch: Any = None) -> None:
    refusal = branch_refusal(ns, branch)
    if refusal is not None:
        raise refusal


def compact(
    ns: Any,
    table_id: Sequence[str],
    *,
    ray_address: str | None = None,
    num_workers: int | None = None,
    progress: Progress | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Compact the table's small data files on Ray workers (``lance_ray.compact_files``): the
    same result keys as the local backend's ``compact_files``, plus ``executor``,
    ``ray_address`` and ``workers``. ``options``: lance's ``CompactionOptions``
    (``target_rows_per_fragment`` ...); ``num_workers``: default the cluster's CPUs."""
    from backend.local.namespace import data_shape

    tid = ids.check_id(table_id)
    address = ray_address if ray_address is not None else default_address()
    request = _request(tid, address, options=dict(options))
    with gate.refusals(ns, "compact_files", request, ids=tid):
        gate.require_writable(ns, "compact_files")
        _refuse_branch(ns)
        _, lance_ray = modules()
        if address is not None:
            check_address(address)
        _check_workers(num_workers)
        opts = compaction_options(options)
        storage = resolve(ns, tid)
    with gate.recorded(ns, "compact_files", request, ids=tid, long=True) as out:
        _stage(progress, "connecting to Ray", 0.02)
        joined = connect(address)
        workers = _workers(num_workers)
        _stage(progress, "checking that the workers reach the table", 0.05)
        check_workers(storage)
        ds = storage.open()
        before = ds.version
        shape_before = data_shape(ds)
        _stage(progress, f"compacting on {workers} Ray worker(s)", 0.1)
        try:
            metrics = lance_ray.compact_files(
                storage.location,
                compaction_options=opts or None,
                num_workers=workers,
                storage_options=storage.storage_options or None,
            )
        except Exception as exc:
            raise _engine_error(exc, "compaction") from exc
        latest = storage.open()
        shape_after = data_shape(latest)
        if latest.version != before:
            out["transaction_id"] = _transaction(latest)
        _stage(progress, "done", 1.0)
        return {
            "version_before": before,
            "version_after": latest.version,
            "fragments_before": shape_before[0],
            "fragments_after": shape_after[0],
            "data_bytes_before": shape_before[1],
            "data_bytes_after": shape_after[1],
            "fragments_removed": int(getattr(metrics, "fragments_removed", 0)),
            "fragments_added": int(getattr(metrics, "fragments_added", 0)),
            "files_removed": int(getattr(metrics, "files_removed", 0)),
            "files_added": int(getattr(metrics, "files_added", 0)),
            "executor": EXECUTOR,
            "ray_address": joined,
            "workers": workers,
        }
    raise AssertionError("unreachable")  # pragma: no cover - the block returns or raises


def _transaction(ds: Any) -> str | None:
    try:
        txn = ds.read_transaction(ds.version)
    except Exception:  # noqa: BLE001 - the audit entry's transaction id is a courtesy
        return None
    return getattr(txn, "uuid", None)


# -- index builds -----------------------------------------------------------------------------------
_REQUEST_PARAMS = frozenset(rules.VECTOR_BUILD_PARAMS) | frozenset(rules.FTS_PARAMS)


def index_request(
    table_id: Sequence[str],
    column: str,
    index_type: str,
    *,
    name: str | None = None,
    distance_type: str | None = None,
    params: Mapping[str, Any] | None = None,
    context: Mapping[str, str] | None = None,
) -> CreateTableIndexRequest:
    """The CreateTableIndexRequest of a build (parameters by their request names:
    ``num_partitions``, ``base_tokenizer`` ...); ``InvalidInputError`` for a parameter no index
    has. Whether they fit the index type is the index rules' check."""
    given = {k: v for k, v in (params or {}).items() if v is not None and v != ""}
    unknown = sorted(k for k in given if k not in _REQUEST_PARAMS)
    if unknown:
        raise invalid(
            f"unknown index parameter(s) {', '.join(unknown)}; known: "
            + ", ".join(sorted(_REQUEST_PARAMS))
        )
    fields: dict[str, Any] = {
        "id": list(table_id),
        "column": column,
        "index_type": rules.normalize_index_type(index_type) or index_type,
        **given,
    }
    if name is not None:
        fields["name"] = name
    if distance_type is not None:
        fields["distance_type"] = distance_type
    if context:
        fields["context"] = dict(context)
    try:
        return CreateTableIndexRequest(**fields)
    except Exception as exc:  # pydantic: a value of the wrong type
        raise to_namespace_error(exc, "create index") from None


def ray_sample_rate(request: CreateTableIndexRequest, partitions: int, num_rows: int) -> int:
    """The training sample per IVF partition and per PQ centroid of an IVF_PQ build on Ray:
    the one asked, checked (lance-ray needs ``sample_rate`` x ``partitions`` and x
    ``2^num_bits`` rows), else the largest up to lance's 256 that fits the table.
    ``InvalidInputError`` when none fits."""
    bits = request.num_bits or rules.DEFAULT_NUM_BITS["PQ"]
    fits = min(num_rows // max(partitions, 1), num_rows // (2**bits))
    asked = request.sample_rate
    if asked is not None:
        if asked < _MIN_SAMPLE_RATE or asked > fits:
            raise invalid(
                f"sample_rate {asked} needs {asked * max(partitions, 2**bits):,} rows on the Ray "
                f"executor ({partitions} partitions, {2**bits} PQ centroids); the table has "
                f"{num_rows:,}: use at most {fits} (at least {_MIN_SAMPLE_RATE})"
            )
        return asked
    if fits < _MIN_SAMPLE_RATE:
        raise invalid(
            f"IVF_PQ on the Ray executor samples at least {_MIN_SAMPLE_RATE} rows per partition "
            f"and per PQ centroid: {partitions} partitions and {2**bits} centroids need "
            f"{_MIN_SAMPLE_RATE * max(partitions, 2**bits):,} rows, the table has "
            f"{num_rows:,}. Use the local executor, or fewer partitions"
        )
    return min(DEFAULT_SAMPLE_RATE, fits)


def create_index(
    ns: Any,
    table_id: Sequence[str],
    column: str,
    index_type: str,
    *,
    name: str | None = None,
    params: Mapping[str, Any] | None = None,
    distance_type: str | None = None,
    ray_address: str | None = None,
    num_workers: int | None = None,
    progress: Progress | None = None,
    branch: str | None = None,
) -> dict[str, Any]:
    """Build a BTREE, FTS or IVF_PQ index on Ray workers, one segment per worker
    (``lance_ray.create_scalar_index`` / ``create_index``). ``params``: the request's build
    parameters (FTS options; IVF_PQ's ``num_partitions``, ``num_sub_vectors``, ``num_bits``,
    ``sample_rate``, ``max_iterations``); empty ones are chosen as the local build chooses them
    (``chosen``). Returns ``index_name``, ``index_type``, the versions before and after,
    ``chosen``, ``executor``, ``ray_address`` and ``workers``. ``branch`` (or ``ns`` a branch
    view): refused, see the module docstring."""
    tid = ids.check_id(table_id)
    address = ray_address if ray_address is not None else default_address()
    context = {"executor": EXECUTOR, "ray_address": address or "local"}
    t = rules.normalize_index_type(index_type) or str(index_type)
    category = rules.index_category(t) if t in rules.ALL_INDEX_TYPES else "vector"
    op = "create_table_scalar_index" if category == "scalar" else "create_table_index"
    delimiter = ids.delimiter_of(ns)
    asked = {"id": tid, "column": column, "index_type": t, "params": dict(params or {}), **context}
    if branch is not None:
        asked["branch"] = branch
    with gate.refusals(ns, op, asked, ids=tid):
        gate.require_writable(ns, op)
        _refuse_branch(ns, branch)
        request = index_request(
            tid, column, t, name=name, distance_type=distance_type, params=params,
            context=context,
        )  # fmt: skip
        _, lance_ray = modules()
        if address is not None:
            check_address(address)
        _check_workers(num_workers)
        request_rules.check_request(op, request, delimiter=delimiter)
        if t not in INDEX_TYPES:
            raise make(
                ErrorCode.UNSUPPORTED,
                f"the Ray executor builds {', '.join(INDEX_TYPES)} indexes; build {t} with the "
                "local executor",
            )
        if request.target_partition_size is not None:
            raise invalid(
                "target_partition_size is not available on the Ray executor (lance-ray trains "
                "a fixed number of partitions): give num_partitions"
            )
        storage = resolve(ns, tid)
        from backend.local import indexes

        plan = indexes.check_build(storage.open(), request, table=storage.display)
        chosen = dict(plan.chosen)
        kwargs: dict[str, Any] = {}
        if plan.category == "vector":
            partitions = int(chosen.get("num_partitions", request.num_partitions or 1))
            rate = ray_sample_rate(request, partitions, plan.num_rows or 0)
            if request.sample_rate is None:
                chosen["sample_rate"] = rate
            for field, keyword in rules.LANCE_VECTOR_KWARGS.items():
                value = chosen.get(field, getattr(request, field))
                if value is not None:
                    kwargs[keyword] = value
            kwargs["metric"] = rules.normalize_distance(request.distance_type) or "l2"
        else:
            kwargs = {
                p: getattr(request, p) for p in rules.FTS_PARAMS if getattr(request, p) is not None
            }
    with gate.recorded(ns, op, request, ids=tid, long=True) as out:
        _stage(progress, "connecting to Ray", 0.02)
        joined = connect(address)
        workers = _workers(num_workers)
        _stage(progress, "checking that the workers reach the table", 0.05)
        check_workers(storage)
        before = storage.open().version
        _stage(progress, f"building {plan.index_type} on {workers} Ray worker(s)", 0.1)
        common = {
            "name": plan.name,
            "replace": False,
            "num_workers": workers,
            "storage_options": storage.storage_options or None,
        }
        try:
            if plan.category == "vector":
                built = lance_ray.create_index(
                    storage.location, column=request.column, index_type=plan.index_type,
                    **common, **kwargs,
                )  # fmt: skip
            else:
                built = lance_ray.create_scalar_index(
                    storage.location, column=request.column,
                    index_type=rules.lance_index_type(plan.index_type), **common, **kwargs,
                )  # fmt: skip
        except Exception as exc:
            raise _engine_error(exc, f"{plan.index_type} build") from exc
        out["transaction_id"] = _transaction(built)
        if plan.category == "vector" and capabilities(ns).kind == "local":
            indexes.record_request(
                getattr(ns, "local_path", None), str(getattr(ns, "root", "")),
                ns.format_id(tid), plan.name, rules.requested_build_fields(request, plan.chosen),
            )  # fmt: skip
        _stage(progress, "done", 1.0)
        return {
            "index_name": plan.name,
            "index_type": plan.index_type,
            "version_before": before,
            "version_after": int(built.version),
            "chosen": chosen,
            "executor": EXECUTOR,
            "ray_address": joined,
            "workers": workers,
        }
    raise AssertionError("unreachable")  # pragma: no cover - the block returns or raises


# -- jobs -------------------------------------------------------------------------------------------
def _run_compact(
    ns: Any, table_id: Sequence[str], params: Mapping[str, Any], **kw: Any
) -> dict[str, Any]:
    options = dict(params or {})
    num_workers = options.pop("num_workers", None)
    if kw.get("num_workers") is None:
        kw["num_workers"] = num_workers
    return compact(ns, table_id, **kw, **options)


def _run_create_index(
    ns: Any, table_id: Sequence[str], params: Mapping[str, Any], **kw: Any
) -> dict[str, Any]:
    """``params``: ``column``, ``index_type``, optional ``name``, ``distance_type``,
    ``num_workers`` and the build parameters, nested under ``params`` or at the top level (a
    CreateTableIndexRequest's fields)."""
    given = dict(params or {})
    build = dict(given.pop("params", None) or {})
    column, index_type = given.pop("column", None), given.pop("index_type", None)
    if not column or not index_type:
        raise invalid("an index build names its column and index_type")
    name, distance = given.pop("name", None), given.pop("distance_type", None)
    num_workers = given.pop("num_workers", None)
    if kw.get("num_workers") is None:
        kw["num_workers"] = num_workers
    branch = given.pop("branch", None)  # refused by create_index unless main
    for key in ("id", "context", "mode", "identity"):
        given.pop(key, None)  # a request's fields that are not build parameters
    build.update(given)
    return create_index(
        ns, table_id, column, index_type, name=name, distance_type=distance, params=build,
        branch=branch, **kw,
    )  # fmt: skip


# Job kind -> what runs it: ``fn(ns, table_id, params, *, ray_address=None, progress=None)``.
KINDS: dict[str, Callable[..., dict[str, Any]]] = {
    "compact": _run_compact,
    "create_index": _run_create_index,
}


def run(
    ns: Any,
    kind: str,
    table_id: Sequence[str],
    params: Mapping[str, Any] | None = None,
    *,
    ray_address: str | None = None,
    num_workers: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run job ``kind`` (:data:`KINDS`) on Ray; ``InvalidInputError`` for a kind this executor
    does not run, ``UnsupportedOperationError`` on a branch (nothing done)."""
    runner = KINDS.get(kind)
    if runner is None:
        raise invalid(
            f"the Ray executor runs {', '.join(sorted(KINDS))} jobs, not {kind!r}; run it with "
            "the local executor"
        )
    return runner(
        ns, table_id, params or {}, ray_address=ray_address, num_workers=num_workers,
        progress=progress,
    )  # fmt: skip


# What a Ray job's record says it does not give.
JOB_NOTE = (
    "runs on Ray: lance-ray reports no progress while it works (the stage says what it does) "
    "and cannot be cancelled once it started"
)


class RayExecutor(jobs.Executor):
    """The ``ray`` executor of ``backend.services.jobs``: the kinds of :data:`KINDS`, their
    work run by :func:`run` in a thread of this process (the Ray driver) with the job's
    ``ray_address`` (else the launch's ``--ray-address``, else a local Ray) and
    ``num_workers``. Refused before anything is recorded: another kind, a bad address, a
    branch, an index type lance-ray does not build. A running job cannot be cancelled."""

    name = EXECUTOR

    def __init__(self) -> None:  # no slots of its own: the cluster schedules the work
        pass

    def check(self, kind: jobs.Kind, options: Mapping[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(options) - {"ray_address", "num_workers"})
        if unknown:
            raise invalid(
                f"the Ray executor takes ray_address and num_workers, not {', '.join(unknown)}"
            )
        if kind.name not in KINDS:
            raise make(
                ErrorCode.UNSUPPORTED,
                f"the Ray executor runs {', '.join(sorted(KINDS))} jobs, not {kind.name}; run "
                "it on this console (the local executor)",
            )
        missing = [m for m in ("ray", "lance_ray") if importlib.util.find_spec(m) is None]
        if missing:  # found without importing (``import ray`` takes seconds)
            raise make(ErrorCode.UNSUPPORTED, f"{EXTRA_MISSING} ({missing[0]} is missing)")
        address = options.get("ray_address")
        address = check_address(address) if address is not None else default_address()
        _check_workers(options.get("num_workers"))
        out: dict[str, Any] = {"ray_address": address}
        if options.get("num_workers") is not None:
            out["num_workers"] = options["num_workers"]
        return out

    def supported(self, kind: jobs.Kind, ns: Any) -> str | None:
        return None  # the workers open the table's storage themselves (REST roots too)

    def admit(
        self, ns: Any, kind: jobs.Kind, target: tuple[str, ...] | None, params: Mapping[str, Any]
    ) -> None:
        _refuse_branch(ns, params.get("branch"))
        if kind.name == "create_index":
            t = rules.normalize_index_type(str(params.get("index_type") or ""))
            if t not in INDEX_TYPES:
                raise make(
                    ErrorCode.UNSUPPORTED,
                    f"the Ray executor builds {', '.join(INDEX_TYPES)} indexes; build {t} on "
                    "this console (the local executor)",
                )

    def cancellable(self, kind: jobs.Kind, ns: Any) -> bool:
        return False

    def note(self, kind: jobs.Kind) -> str | None:
        return JOB_NOTE

    def implementation(self, kind: jobs.Kind) -> jobs.KindFn:
        def work(ns: Any, table_id: Any, params: dict[str, Any], ctx: Any) -> dict[str, Any]:
            options = ctx.executor_options
            ctx.progress(f"starting on Ray at {options.get('ray_address') or 'a local Ray'}")
            return run(
                ns, kind.name, list(table_id), params, ray_address=options.get("ray_address"),
                num_workers=options.get("num_workers"), progress=ctx.progress,
            )  # fmt: skip

        return work

    def start(self, run: Callable[[], None], job_id: str) -> None:
        # the work is the cluster's: a thread of this process drives it, outside the local
        # executor's slots
        threading.Thread(target=run, daemon=True, name=f"ray-job-{job_id}").start()


def executor() -> RayExecutor:
    """A new :class:`RayExecutor` (``jobs.ExtraExecutor`` loads it so)."""
    return RayExecutor()


def register(jobs: Any) -> None:
    """Make this executor ``submit(..., executor="ray")`` of the job module ``jobs``
    (``backend.services.jobs``: ``jobs.register_executor("ray", RayExecutor())``)."""
    jobs.register_executor(EXECUTOR, executor())
