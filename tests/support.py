"""Test helpers shared by every test directory: small Arrow tables and their IPC bytes,
namespace builders, staged versions, and fingerprints of a namespace's files.

Everything here talks to real storage: tables are created through the namespace under test,
extra versions are written by lance itself (the way an engine writing to the table would), and
a ``CreateTableVersion`` is staged exactly as a writer using namespace-managed commits does it:
data files are written next to the table's existing ones and the new version's manifest is
written to a staging path outside ``_versions``; only the namespace call makes it visible.

Fingerprints compare namespaces without trusting the code under test:

* ``tree_digest(root)``: every file (sha256) and directory under ``root``, byte for byte;
* ``logical_state(root)``: what a reader of the namespace can observe, read straight from disk
  with lance: the catalog rows of ``__manifest`` (minus the random part of new locations), each
  table's directory listing with file hashes, every other file under the root.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import os
import pickle
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

import lance
import numpy as np
import pyarrow as pa
from lance_namespace import (
    BatchCommitTablesRequest,
    BatchDeleteTableVersionsRequest,
    CommitTableOperation,
    CountTableRowsRequest,
    CreateNamespaceRequest,
    CreateTableRequest,
    CreateTableResponse,
    CreateTableVersionRequest,
    DeclareTableRequest,
    DeregisterTableRequest,
    DescribeTableRequest,
    LanceNamespace,
)
from lance_namespace_urllib3_client.models import VersionRange

REPO = Path(__file__).resolve().parents[1]
U64_MAX = 2**64 - 1


def make_table(
    n: int, *, dim: int | None = None, start: int = 0, seed: int = 0, categories: int = 5
) -> pa.Table:
    """``id`` int64 (start..start+n), ``cat`` utf8 (``c0``..), ``text`` utf8, optional ``vec``."""
    ids = pa.array(range(start, start + n), pa.int64())
    columns: dict[str, pa.Array] = {
        "id": ids,
        "cat": pa.array([f"c{i % categories}" for i in range(start, start + n)]),
        "text": pa.array([f"row {i} about lance namespaces" for i in range(start, start + n)]),
    }
    if dim is not None:
        rng = np.random.default_rng(seed)
        flat = pa.array(rng.random(n * dim, dtype=np.float32))
        columns["vec"] = pa.FixedSizeListArray.from_arrays(flat, dim)
    return pa.table(columns)


# Words of the ``text`` column of :func:`search_rows` (full-text and highlighting tests).
SEARCH_WORDS = (
    "lance", "arrow", "vector", "search", "index", "table", "namespace", "query", "running",
    "dogs", "parse", "command", "line", "arguments", "cats", "jumping", "quickly", "river",
    "mountain",
)  # fmt: skip


def search_rows(
    n: int, *, start: int = 0, seed: int = 0, dim: int = 16, embedded: bool = False
) -> pa.Table:
    """``id`` int64, ``text`` (``row <i>`` and six of :data:`SEARCH_WORDS`) and ``vec``:
    random float32 vectors of ``dim``, or with ``embedded`` the demo's embedding of the text
    (``backend.demo.embedding.embed``, ``VECTOR_DIM`` dims)."""
    rng = np.random.default_rng(seed)
    words = [f"row {i} " + " ".join(rng.choice(SEARCH_WORDS, 6)) for i in range(start, start + n)]
    if embedded:
        from backend.demo import embedding

        flat, dim = embedding.embed(words).reshape(-1), embedding.VECTOR_DIM
    else:
        flat = rng.random(n * dim, dtype=np.float32)
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "text": pa.array(words),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.float32()), dim),
        }
    )


def varied_norm_rows(n: int, *, dim: int = 16, seed: int = 0) -> pa.Table:
    """``id`` int64 and ``vec``: float32 vectors of random directions whose norms spread over
    two orders of magnitude (log-normal), so that l2, cosine and dot products name different
    nearest neighbours (:func:`metric_neighbours`)."""
    rng = np.random.default_rng(seed)
    data = rng.normal(size=(n, dim)) * rng.lognormal(0.0, 1.0, size=(n, 1))
    flat = pa.array(data.astype(np.float32).reshape(-1))
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "vec": pa.FixedSizeListArray.from_arrays(flat, dim),
        }
    )


def metric_distances(data: np.ndarray, query: np.ndarray, metric: str) -> np.ndarray:
    """The distance lance reports for ``metric`` from ``query`` to every row of ``data``,
    computed in float64: squared l2, 1 - cosine similarity, 1 - the dot product, and for
    uint8 rows the number of differing bits (hamming)."""
    if metric == "hamming":
        return np.unpackbits(data.astype(np.uint8) ^ query.astype(np.uint8), axis=1).sum(axis=1)
    x, q = data.astype(np.float64), query.astype(np.float64)
    if metric == "l2":
        return ((x - q) ** 2).sum(axis=1)
    if metric == "cosine":
        return 1.0 - (x @ q) / (np.linalg.norm(x, axis=1) * np.linalg.norm(q))
    if metric == "dot":
        return 1.0 - (x @ q)
    raise ValueError(metric)


def metric_neighbours(data: np.ndarray, row: int, k: int, metric: str) -> list[int]:
    """The exact ``k`` nearest rows of ``data[row]`` under ``metric``, the row itself left
    out."""
    d = metric_distances(data, data[row], metric).astype(np.float64)
    d[row] = np.inf
    return [int(i) for i in np.argsort(d, kind="stable")[:k]]


def ipc_stream_bytes(table: pa.Table) -> bytes:
    """The Arrow IPC *stream* encoding that CreateTable carries as its body."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def create_table(ns: LanceNamespace, table_id: list[str], table: pa.Table) -> CreateTableResponse:
    return ns.create_table(CreateTableRequest(id=table_id), ipc_stream_bytes(table))


def local_path(location: str) -> Path:
    """A ``file://`` URI or plain path, as a local ``Path``."""
    if location.startswith("file://"):
        return Path(unquote(urlparse(location).path))
    return Path(location)


def table_location(ns: LanceNamespace, table_id: list[str]) -> Path:
    location = ns.describe_table(DescribeTableRequest(id=table_id)).location
    assert location, f"describe_table({table_id}) returned no location"
    return local_path(location)


def data_bytes(ds: lance.LanceDataset) -> int:
    """The bytes on disk of the latest version's columns (lance's own data statistics): what
    GetTableStats' ``total_bytes`` counts on pylance's REST server."""
    return sum(f.bytes_on_disk for f in ds.stats.data_stats().fields)


def append_rows(ns: LanceNamespace, table_id: list[str], table: pa.Table) -> int:
    """Append ``table`` with lance directly (an engine's write); returns the new version."""
    ds = lance.write_dataset(table, str(table_location(ns, table_id)), mode="append")
    return ds.version


def with_versions(ns: LanceNamespace, table_id: list[str], count: int, rows: int = 3) -> int:
    """Create ``table_id`` with ``rows`` rows and append until it has ``count`` versions."""
    create_table(ns, table_id, make_table(rows))
    version = 1
    for i in range(1, count):
        version = append_rows(ns, table_id, make_table(rows, start=i * rows))
    assert version == count
    return version


def four_versions(ns: LanceNamespace) -> list[str]:
    """A new namespace ``ns`` with a table ``ns.t`` of four versions, 3 more rows each (v1: 3
    rows, v2: 6, v3: 9, v4: 12); the table's id (``tests/backend/conftest.py``'s ``table``)."""
    table_id = ["ns", "t"]
    ns.create_namespace(CreateNamespaceRequest(id=["ns"]))
    with_versions(ns, table_id, 4, rows=3)
    return table_id


def row_count(ns: LanceNamespace, table_id: list[str]) -> int:
    """How many rows the table's latest version holds (CountTableRows)."""
    return ns.count_table_rows(CountTableRowsRequest(id=table_id)).count


def version_numbers(ns: LanceNamespace, table_id: list[str]) -> list[int]:
    """The table's version numbers, ascending (``backend.services.versions.list_versions``)."""
    from backend.services.versions import list_versions

    return sorted(list_versions(ns, table_id)["version"].tolist())


def manifest_file(versions_dir: Path, version: int) -> Path:
    """The manifest of ``version`` in a ``_versions`` directory (V2 or V1 naming scheme)."""
    for name in (f"{U64_MAX - version:020d}.manifest", f"{version}.manifest"):
        candidate = versions_dir / name
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"no manifest for version {version} in {versions_dir}")


@dataclass(frozen=True)
class StagedVersion:
    version: int
    manifest_path: str
    manifest_size: int
    num_rows: int  # rows the table has once this version is committed


def stage_version(ns: LanceNamespace, table_id: list[str], rows: pa.Table) -> StagedVersion:
    """Stage version latest+1 of ``table_id`` = latest + ``rows`` appended, without committing.

    A scratch clone of the table (under ``<root>/_staging``) receives the append; its new data
    and transaction files are copied into the table directory, where no manifest references
    them yet, and the clone's new manifest is copied to ``<root>/_staging/<uuid>.manifest``.
    The table itself is untouched until ``CreateTableVersion`` publishes the manifest.
    """
    location = table_location(ns, table_id)
    staging = location.parent / "_staging"
    staging.mkdir(exist_ok=True)
    clone = staging / f"clone-{uuid.uuid4().hex}"
    # (a writer appending meanwhile has temporary files that come and go: not copied)
    shutil.copytree(location, clone, ignore=shutil.ignore_patterns(".tmp*"))
    ds = lance.write_dataset(rows, str(clone), mode="append")
    for sub in ("data", "_transactions"):
        src_dir = clone / sub
        if not src_dir.is_dir():
            continue
        (location / sub).mkdir(exist_ok=True)
        for f in src_dir.iterdir():
            target = location / sub / f.name
            if not target.exists():
                shutil.copy2(f, target)
    manifest = staging / f"{uuid.uuid4().hex}.manifest"
    shutil.copy2(manifest_file(clone / "_versions", ds.version), manifest)
    num_rows = ds.count_rows()
    shutil.rmtree(clone)
    return StagedVersion(
        version=ds.version,
        manifest_path=str(manifest),
        manifest_size=manifest.stat().st_size,
        num_rows=num_rows,
    )


# -- fingerprints of a namespace's files -------------------------------------------------------
CONSOLE = "_console"
CATALOG = "__manifest"


class CountingTransactions:
    """A namespace with the lookups of a version's transaction noted (the version each asks
    about in ``asked``): its DescribeTransaction requests, and the ``read_transaction`` reads
    of the datasets it hands out (the local backend's way); every other operation is the
    namespace's own."""

    def __init__(self, ns: Any) -> None:
        self._ns = ns
        self.asked: list[int] = []

    def describe_transaction(self, request: Any) -> Any:
        self.asked.append(int(request.id[-1]))
        return self._ns.describe_transaction(request)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._ns, name)  # a REST namespace opens no dataset: AttributeError
        if name in ("open_dataset", "branch_dataset"):
            return lambda *a, **k: self._counted(value(*a, **k))
        return value

    def _counted(self, ds: Any) -> Any:
        """``ds`` itself (lance's functions take no stand-in), its ``read_transaction``
        noting each version it reads."""
        read = ds.read_transaction

        def counted(version: int) -> Any:
            self.asked.append(int(version))
            return read(version)

        ds.read_transaction = counted
        return ds


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def tree_digest(root: Path, *, exclude: Iterable[str] = ()) -> dict[str, str]:
    """``relative path -> sha256`` for files, ``-> "<dir>"`` for directories."""
    skip = tuple(exclude)
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        for d in dirnames:
            rel = os.path.normpath(os.path.join(rel_dir, d))
            if not rel.startswith(skip) or not skip:
                out[rel + "/"] = "<dir>"
        for f in filenames:
            rel = os.path.normpath(os.path.join(rel_dir, f))
            if skip and rel.startswith(skip):
                continue
            out[rel] = sha256_file(Path(dirpath) / f)
    return out


def zygote_main(run_job: Any) -> None:
    """The loop of a crash-test child script: one JSON job per stdin line, each run by
    ``run_job(job) -> exit code`` in a fresh ``fork()`` (imports paid once, no lance runtime
    inherited), answered with one JSON line: ``{"signal": n}`` or ``{"exit": code}``."""
    import sys

    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = run_job(job)
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            answer = {"signal": os.WTERMSIG(status)}
        else:
            answer = {"exit": os.WEXITSTATUS(status)}
        print(json.dumps(answer), flush=True)


class ZygoteChild:
    """A child process (a crash-test script) that forks one process per JSON job read on its
    stdin and answers one JSON line per job (``{"signal": n}`` or ``{"exit": code}``)."""

    def __init__(self, script: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=str(REPO),
        )

    def run(self, **job: Any) -> dict[str, int]:
        self.send(**job)
        return self.receive()

    def send(self, **job: Any) -> None:
        """Start a job without waiting for it (several children can then run at once)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()

    def receive(self) -> dict[str, int]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the crash child died"
        return json.loads(line)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


def catalog_rows(root: Path) -> dict[str, dict[str, Any]]:
    try:
        ds = lance.dataset(str(root / CATALOG))
    except (ValueError, OSError):
        return {}
    return {r["object_id"]: r for r in ds.to_table().to_pylist()}


def logical_state(root: Path, known_dirs: Iterable[str] = ()) -> dict[str, Any]:
    """What the namespace shows (see module docstring).

    ``known_dirs``: top-level directories that existed before (their names are kept); any
    other table directory is named after its catalog row, so two runs that declared the same
    tables under different random locations compare equal.
    """
    known = set(known_dirs)
    rows = catalog_rows(root)
    rename: dict[str, str] = {}
    catalog = {}
    for oid, row in rows.items():
        loc = row.get("location")
        catalog[oid] = {
            "type": row["object_type"],
            "metadata": row.get("metadata"),
            "location": loc if (loc in known or loc is None) else "@new",
        }
        if loc and loc not in known:
            rename[loc] = f"@{oid}"
    files = {}
    for rel, digest in tree_digest(root).items():
        top = rel.split("/", 1)[0]
        if top in (CONSOLE, CATALOG) or rel.startswith((CONSOLE + "/", CATALOG + "/")):
            continue
        if top in rename:
            rel = rename[top] + rel[len(top) :]
        files[rel] = digest
    return {"catalog": catalog, "files": files}


def console_leftovers(root: Path) -> list[str]:
    """Journals and work directories a finished (or recovered) batch must not leave."""
    out = []
    for sub in ("batch/pending", "batch/work"):
        d = root / CONSOLE / sub
        if d.is_dir():
            out += [f"{sub}/{n}" for n in os.listdir(d)]
    return out


def batch_records(root: Path) -> dict[str, dict[str, Any]]:
    d = root / CONSOLE / "transactions"
    out = {}
    if d.is_dir():
        for p in d.glob("batch-*.json"):
            rec = json.loads(p.read_text())
            out[rec["txn_id"]] = rec
    return out


# -- requests ------------------------------------------------------------------------------------
def op_declare(table_id: list[str], **kw: Any) -> CommitTableOperation:
    return CommitTableOperation(declare_table=DeclareTableRequest(id=table_id, **kw))


def op_version(table_id: list[str], staged: StagedVersion, **kw: Any) -> CommitTableOperation:
    return CommitTableOperation(
        create_table_version=CreateTableVersionRequest(
            id=table_id,
            version=kw.pop("version", staged.version),
            manifest_path=kw.pop("manifest_path", staged.manifest_path),
            **kw,
        )
    )


def op_delete(table_id: list[str], *ranges: tuple[int, int]) -> CommitTableOperation:
    return CommitTableOperation(
        delete_table_versions=BatchDeleteTableVersionsRequest(
            id=table_id,
            ranges=[VersionRange(start_version=s, end_version=e) for s, e in ranges],
        )
    )


def op_deregister(table_id: list[str]) -> CommitTableOperation:
    return CommitTableOperation(deregister_table=DeregisterTableRequest(id=table_id))


def batch(*ops: CommitTableOperation) -> BatchCommitTablesRequest:
    return BatchCommitTablesRequest(operations=list(ops))


# -- a namespace to work on -------------------------------------------------------------------------
def build_namespace(ns: LanceNamespace, *, tables: int = 3, versions: int = 4) -> None:
    """Namespaces ``a`` and ``a$b``; tables ``a$t0..``, ``a$b$u0..`` (``versions`` each),
    root table ``r`` (2 versions), declared-only ``a$d`` and ``a$b$d``."""
    ns.create_namespace(CreateNamespaceRequest(id=["a"]))
    ns.create_namespace(CreateNamespaceRequest(id=["a", "b"]))
    for i in range(tables):
        with_versions(ns, ["a", f"t{i}"], versions)
        with_versions(ns, ["a", "b", f"u{i}"], versions)
    with_versions(ns, ["r"], 2)
    ns.declare_table(DeclareTableRequest(id=["a", "d"]))
    ns.declare_table(DeclareTableRequest(id=["a", "b", "d"]))


def build_catalog(root: Path, *, tables: int, versions: int) -> Path:
    """A local root at catalog scale: ``many`` holds ``tables`` declared tables
    ``t00000``... (batches of 1,000 declares), ``hist/t`` a one-row table with ``versions``
    versions (``update_config`` commits, as an engine writing to it would)."""
    import backend

    root.mkdir(parents=True, exist_ok=True)
    ns = backend.connect(str(root))
    ns.create_namespace(CreateNamespaceRequest(id=["many"]))
    names = [f"t{i:05d}" for i in range(tables)]
    for start in range(0, tables, 1000):
        ops = [op_declare(["many", n]) for n in names[start : start + 1000]]
        ns.batch_commit_tables(batch(*ops))
    ns.create_namespace(CreateNamespaceRequest(id=["hist"]))
    create_table(ns, ["hist", "t"], pa.table({"a": [1]}))
    ds = lance.dataset(str(table_location(ns, ["hist", "t"])))
    for step in range(versions - 1):
        ds.update_config({"step": str(step)})
    return root


def stage(
    ns: LanceNamespace, table_id: list[str], rows: int = 2, start: int = 1000
) -> StagedVersion:
    return stage_version(ns, table_id, make_table(rows, start=start))


def rebase_request(request_json: str, old_root: Path, new_root: Path) -> BatchCommitTablesRequest:
    """The same request with staged manifest paths moved from one root copy to another."""
    return BatchCommitTablesRequest.from_json(request_json.replace(str(old_root), str(new_root)))


# -- a REST server that changes some answers ------------------------------------------------------
class RewritingProxy:
    """A real HTTP server on a free loopback port in front of a REST namespace server: every
    request is forwarded as it is; the JSON answers of routes ending in one of ``rewrites``'
    suffixes (e.g. ``"/describe"``) pass through ``rewrites[suffix](path, answer)`` first. It
    plays servers that differ from pylance's (one that drops declared properties, one that
    reports fragments in the table's metadata) with the real server behind it. ``refuse``
    (route, request body) may answer a request itself instead, as ``(status, JSON answer)``:
    a server that refuses what pylance's accepts."""

    def __init__(self, upstream: str, rewrites: dict[str, Any], refuse: Any = None):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        import httpx

        proxy = self
        self.upstream = upstream.rstrip("/")
        self.rewrites = rewrites
        self.refuse = refuse
        self.client = httpx.Client(timeout=30)

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                refused = proxy.refuse and proxy.refuse(self.path.split("?", 1)[0], body)
                if refused:
                    status, said = refused
                    data = json.dumps(said).encode()
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() not in ("host", "content-length", "connection")
                }
                try:
                    answer = proxy.client.request(
                        self.command, proxy.upstream + self.path, content=body, headers=headers
                    )
                except httpx.HTTPError:  # the proxy stopped with a request in flight (a
                    # console's background read at a test's end): a proxy's 502, no traceback
                    with contextlib.suppress(OSError):  # the caller may be gone too
                        self.send_error(502, "the upstream did not answer")
                    return
                data = answer.content
                route = self.path.split("?", 1)[0]
                for suffix, rewrite in proxy.rewrites.items():
                    if route.endswith(suffix) and answer.status_code == 200:
                        data = json.dumps(rewrite(route, json.loads(data))).encode()
                self.send_response(answer.status_code)
                kind = answer.headers.get("content-type", "application/json")
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = do_PUT = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.client.close()


@contextlib.contextmanager
def answering_server(
    status: int, body: bytes, headers: Mapping[str, str] | None = None, *, tls: Any = None
) -> Iterator[tuple[int, list[str]]]:
    """A real HTTP server on 127.0.0.1 (HTTPS with ``tls``, a server-side ``ssl.SSLContext``)
    that answers every GET and POST with ``status``, the JSON ``body`` and ``headers``; yields
    its port and the paths it was asked for."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            asked.append(self.path)
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], asked
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextlib.contextmanager
def namespaces_listener(tls: Any = None) -> Iterator[tuple[int, list[str]]]:
    """:func:`answering_server` answering every request with an empty namespace list."""
    with answering_server(200, b'{"namespaces": []}', tls=tls) as found:
        yield found


def describes_branches(upstream: str, branches: set[str]) -> RewritingProxy:
    """pylance's REST server behind a proxy that honours DescribeTable's ``branch``: one the
    table does not have (not in ``branches``) is refused, naming it, as a server that honours
    branches answers. Its writes still go to pylance's server, which applies a branch write
    to main: a server whose reads honour branches and whose writes do not."""

    def refuse(route: str, body: bytes) -> tuple[int, dict[str, Any]] | None:
        if not (route.startswith("/v1/table/") and route.endswith("/describe")):
            return None
        if "/version/" in route:
            return None
        branch = json.loads(body or b"{}").get("branch")
        if branch and branch not in branches:
            return 404, {"error": f"table has no branch {branch}", "code": 22}  # not found
        return None

    return RewritingProxy(upstream, {}, refuse=refuse)


def run_python(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -c code args`` in a child process, as a user runs it from the repository (its
    folder the working directory and on the path, this process's environment otherwise);
    output captured as text."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def free_port() -> int:
    """A loopback port free when asked: a server may listen on it next, and nothing listens on
    it meanwhile (a connection to it is refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


T = TypeVar("T")


# -- data built once per test run ------------------------------------------------------------------
SHARED_DIR: Path | None = None  # where the processes of one run share what they build (conftest)
_BUILT: dict[str, tuple[Path, Any]] = {}  # this process's answers, by name


def shared_build(name: str, build: Callable[[Path], T]) -> tuple[Path, T]:
    """``build(folder)`` run once per test run, by whichever process asks first; every other
    process of the run (pytest-xdist's workers) waits for it, then gets the same folder and
    what ``build`` returned (pickled). The folder is only read after it was built.
    Each process asks once per name and keeps the answer.

    The run's processes share :data:`SHARED_DIR` (the conftest sets it: the run's base
    folder, which pytest removes with its older runs). Without it (a script), the build is
    the process's own, in a temporary folder removed at its exit."""
    if name not in _BUILT:
        _BUILT[name] = _shared_build(name, build)
    return _BUILT[name]


def _shared_build(name: str, build: Callable[[Path], T]) -> tuple[Path, T]:
    if SHARED_DIR is None:
        base = Path(tempfile.mkdtemp(prefix=f"lance-console-{name}-"))
        atexit.register(shutil.rmtree, base, ignore_errors=True)
        return base, build(base)
    SHARED_DIR.mkdir(parents=True, exist_ok=True)
    folder, result = SHARED_DIR / name, SHARED_DIR / f"{name}.pickle"
    with open(SHARED_DIR / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if not result.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed half-way
            folder.mkdir()
            built = build(folder)
            partial = result.with_suffix(".partial")
            partial.write_bytes(pickle.dumps(built))
            partial.replace(result)
        return folder, pickle.loads(result.read_bytes())


def demo_template() -> tuple[Path, Any, list[str]]:
    """The demo namespace built once per test run by
    ``backend.demo.data.create_demo_namespace`` (:func:`shared_build`): its root, the
    build's ``DemoSummary`` and the progress messages it said. The root is shared by every
    test of the run: read it, never write it (:func:`demo_copy` makes a private copy)."""

    def build(folder: Path) -> tuple[Any, list[str]]:
        from backend.demo.data import create_demo_namespace

        said: list[str] = []
        summary = create_demo_namespace(folder / "demo", progress=said.append)
        return summary, said

    folder, (summary, said) = shared_build("demo", build)
    return folder / "demo", summary, said


def demo_copy(dest: Path) -> Path:
    """A demo namespace at ``dest`` (which must not exist): a copy of :func:`demo_template`.
    The demo takes 10-20 s to build on two cores; a copy takes a fraction of a second and is
    the same data (the catalog's locations are relative to the root)."""
    shutil.copytree(demo_template()[0], dest, symlinks=True)
    return dest


class InFlight:
    """Wraps ``cls.method`` (for the test, through ``monkeypatch``): each call holds for
    ``delay`` seconds, counted; ``most`` is how many ran at once at most, ``calls`` how many
    there were."""

    def __init__(self, monkeypatch: Any, cls: type, method: str, *, delay: float) -> None:
        import threading
        import time

        self.calls = self.most = 0
        now = [0]
        lock = threading.Lock()
        real = getattr(cls, method)

        def held(obj: Any, *args: Any, **kwargs: Any) -> Any:
            with lock:
                self.calls += 1
                now[0] += 1
                self.most = max(self.most, now[0])
            try:
                time.sleep(delay)
                return real(obj, *args, **kwargs)
            finally:
                with lock:
                    now[0] -= 1

        monkeypatch.setattr(cls, method, held)


def opened_versions(monkeypatch: Any) -> list[int | None]:
    """The versions ``LocalNamespace.open_dataset`` is asked to open from now on (``None``:
    the latest), in order (through ``monkeypatch``)."""
    from backend.local.namespace import LocalNamespace

    opened: list[int | None] = []
    real = LocalNamespace.open_dataset

    def spy(self: Any, table_id: Any, version: int | None = None) -> Any:
        opened.append(version)
        return real(self, table_id, version)

    monkeypatch.setattr(LocalNamespace, "open_dataset", spy)
    return opened
