"""BatchCommitTables vs the same operations one call at a time, on a local namespace.

    .venv/bin/python benchmarks/bench_batch_commit.py [--reps 3] [--sizes 10,100,1000]

Measured in one run, each repetition on a fresh directory namespace:

* N DeclareTable operations in one batch vs N DeclareTable calls (N = 10, 100, 1000);
* 100 CreateTableVersion operations across 10 tables (10 consecutive versions each) in one
  batch vs 100 CreateTableVersion calls. Staging the manifests is not timed.

On S3 (moto's server, ``--s3-sizes``): DeclareTable batches vs single calls, with the
object-store requests of each batch and the protocol's own conditional writes.

Every namespace a run creates stays until the run ends, then all are removed at once: on
this machine's ext4 (mounted with ``discard``), removing thousands of entries slows the
metadata calls that follow it for seconds, so a clean-up between measurements made the next
measurement, batch or single calls alike, up to 10x slower.

Both sides go through ``backend.connect(path)`` (LocalNamespace: single calls take the write
guard, as in the product). Prints medians, the ratio, and what bounds each side: fsync(2) calls
made from Python, catalog (``__manifest``) commits, time spent in the batch's catalog commit.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LANCE_LOG", "error")

import lance  # noqa: E402
import pyarrow as pa  # noqa: E402
from lance_namespace import (  # noqa: E402
    BatchCommitTablesRequest,
    CommitTableOperation,
    CreateNamespaceRequest,
    CreateTableVersionRequest,
    DeclareTableRequest,
)

import backend  # noqa: E402
from backend.local.batch import apply as batch_apply  # noqa: E402
from backend.local.batch import durable  # noqa: E402
from tests.support import manifest_file, table_location  # noqa: E402

TARGETS = {1000: 30, 100: 10}  # batch size -> speed-up over single calls (issue 11)


class Counters:
    """fsync calls and catalog-commit time, counted by wrapping them in this process."""

    def __init__(self) -> None:
        self.fsync = 0
        self.syncfs = 0
        self.catalog_s = 0.0
        real_fsync = os.fsync
        real_syncfs = durable.syncfs

        def fsync(fd: int) -> None:
            self.fsync += 1
            real_fsync(fd)

        def syncfs(path: Any) -> bool:
            self.syncfs += 1
            return real_syncfs(path)

        os.fsync = fsync  # type: ignore[assignment]
        durable.syncfs = syncfs  # type: ignore[assignment]
        real_commit = batch_apply.catalog_commit

        def catalog_commit(*a: Any, **k: Any) -> None:
            t = time.perf_counter()
            try:
                real_commit(*a, **k)
            finally:
                self.catalog_s += time.perf_counter() - t

        batch_apply.catalog_commit = catalog_commit  # the apply phase's catalog commit

    def snapshot(self) -> tuple[int, int, float]:
        return self.fsync, self.syncfs, self.catalog_s


COUNTERS = Counters()


def catalog_versions(root: Path) -> int:
    return len(lance.dataset(str(root / "__manifest")).versions())


def fresh(base: Path, name: str) -> tuple[Path, Any]:
    root = base / name
    root.mkdir()
    ns = backend.connect(str(root))
    ns.create_namespace(CreateNamespaceRequest(id=["bench"]))
    return root, ns


def measure(root: Path, fn: Callable[..., Any], *args: Any) -> dict[str, float]:
    # Each side starts with nothing dirty on the filesystem: the batch's one syncfs would
    # otherwise also write back what the previous run (and its clean-up) left behind.
    os.sync()
    f0, y0, c0 = COUNTERS.snapshot()
    v0 = catalog_versions(root)
    t = time.perf_counter()
    fn(*args)
    elapsed = time.perf_counter() - t
    f1, y1, c1 = COUNTERS.snapshot()
    return {
        "s": elapsed,
        "fsync": f1 - f0,
        "syncfs": y1 - y0,
        "catalog_commits": catalog_versions(root) - v0,
        "catalog_s": c1 - c0,
    }


def median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def report(title: str, batch_runs: list[dict], single_runs: list[dict], n: int) -> float:
    b, s = median(batch_runs, "s"), median(single_runs, "s")
    ratio = s / b
    print(f"\n{title}")
    print(
        f"  batch    median {b * 1000:9.1f} ms  ({b / n * 1e6:8.0f} us/op)  runs={len(batch_runs)}"
    )
    print(
        f"  separate median {s * 1000:9.1f} ms  ({s / n * 1e6:8.0f} us/op)  runs={len(single_runs)}"
    )
    print(f"  ratio    separate / batch = {ratio:.1f}x")
    print(
        "  bounds   batch: {:.0f} fsync + {:.0f} syncfs (one barrier), {:.0f} catalog commit(s) "
        "taking {:.0f} ms; separate: {:.0f} fsync, {:.0f} catalog commits".format(
            median(batch_runs, "fsync"),
            median(batch_runs, "syncfs"),
            median(batch_runs, "catalog_commits"),
            median(batch_runs, "catalog_s") * 1000,
            median(single_runs, "fsync"),
            median(single_runs, "catalog_commits"),
        )
    )
    return ratio


def declare_one_by_one(ns: Any, n: int) -> None:
    for i in range(n):
        ns.declare_table(DeclareTableRequest(id=["bench", f"t{i}"]))


def create_one_by_one(ns: Any, ops: list[tuple[list[str], int, str]]) -> None:
    for tid, v, p in ops:
        ns.create_table_version({"id": tid, "version": v, "manifest_path": p})


def bench_declares(base: Path, n: int, reps: int) -> float:
    batch_runs, single_runs = [], []
    for r in range(reps):
        root, ns = fresh(base, f"decl-batch-{n}-{r}")
        ops = [
            CommitTableOperation(declare_table=DeclareTableRequest(id=["bench", f"t{i}"]))
            for i in range(n)
        ]
        request = BatchCommitTablesRequest(operations=ops)
        batch_runs.append(measure(root, ns.batch_commit_tables, request))

        root, ns = fresh(base, f"decl-single-{n}-{r}")
        single_runs.append(measure(root, declare_one_by_one, ns, n))
    return report(f"DeclareTable x {n}", batch_runs, single_runs, n)


def bench_s3(sizes: list[int], reps: int) -> None:
    """DeclareTable batches on moto's S3 server (the test suite's S3Server) vs single calls:
    time, object-store requests of the batch protocol, and its own conditional writes."""
    from backend.local.batch import context as batch_context
    from backend.local.batch import objects
    from tests.conftest import S3Server

    server = S3Server()
    try:
        for n in sizes:
            batch_runs, single_runs, requests, protocol = [], [], [], []
            for _ in range(reps):
                bucket = server.new_bucket()
                ns = backend.connect(f"s3://{bucket}/root", storage_options=server.storage_options)
                ns.create_namespace(CreateNamespaceRequest(id=["bench"]))
                store = objects.store_for(batch_context(ns, catalog_only=True))
                r0, p0 = store.requests, store.protocol_writes
                ops = [
                    CommitTableOperation(declare_table=DeclareTableRequest(id=["bench", f"t{i}"]))
                    for i in range(n)
                ]
                t = time.perf_counter()
                ns.batch_commit_tables(BatchCommitTablesRequest(operations=ops))
                batch_runs.append(time.perf_counter() - t)
                requests.append(store.requests - r0)
                protocol.append(store.protocol_writes - p0)
                bucket = server.new_bucket()
                ns = backend.connect(f"s3://{bucket}/root", storage_options=server.storage_options)
                ns.create_namespace(CreateNamespaceRequest(id=["bench"]))
                t = time.perf_counter()
                declare_one_by_one(ns, n)
                single_runs.append(time.perf_counter() - t)
            b, s = statistics.median(batch_runs), statistics.median(single_runs)
            print(f"\nS3 (moto) DeclareTable x {n}")
            print(f"  batch    median {b * 1000:9.1f} ms   separate median {s * 1000:9.1f} ms")
            print(f"  ratio    separate / batch = {s / b:.1f}x")
            print(
                f"  requests batch protocol: {statistics.median(requests):.0f} object-store "
                f"requests (one reserved marker per declare, plus the protocol's), of which "
                f"{statistics.median(protocol):.0f} conditional writes of its own (lease, "
                "journal, decision: constant); catalog: one Lance commit"
            )
    finally:
        server.stop()


def stage_chain(ns: Any, root: Path, table_id: list[str], count: int) -> list[tuple[int, str]]:
    """Stage ``count`` consecutive versions of a table (a private clone receives the appends)."""
    location = table_location(ns, table_id)
    clone = root / "_staging" / f"clone-{'-'.join(table_id)}"
    shutil.copytree(location, clone)
    staged = []
    for i in range(count):
        ds = lance.write_dataset(pa.table({"x": [i]}), str(clone), mode="append")
        path = root / "_staging" / f"{'-'.join(table_id)}-v{ds.version}.manifest"
        shutil.copy2(manifest_file(clone / "_versions", ds.version), path)
        staged.append((ds.version, str(path)))
    for sub in ("data", "_transactions"):
        for f in (clone / sub).iterdir():
            if not (location / sub / f.name).exists():
                shutil.copy2(f, location / sub / f.name)
    shutil.rmtree(clone)
    return staged


def version_namespace(base: Path, name: str, tables: int, per_table: int) -> tuple[Path, Any, list]:
    root, ns = fresh(base, name)
    (root / "_staging").mkdir()
    ops = []
    for t in range(tables):
        table_id = ["bench", f"v{t}"]
        ns.create_table({"id": table_id}, pa.table({"x": [0]}))
        for version, path in stage_chain(ns, root, table_id, per_table):
            ops.append((table_id, version, path))
    # Interleave tables the way a multi-table writer would: v2 of every table, then v3, ...
    ops.sort(key=lambda o: (o[1], o[0]))
    return root, ns, ops


def bench_versions(base: Path, tables: int, per_table: int, reps: int) -> float:
    n = tables * per_table
    batch_runs, single_runs = [], []
    for r in range(reps):
        root, ns, ops = version_namespace(base, f"ver-batch-{r}", tables, per_table)
        request = BatchCommitTablesRequest(
            operations=[
                CommitTableOperation(
                    create_table_version=CreateTableVersionRequest(
                        id=tid, version=v, manifest_path=p
                    )
                )
                for tid, v, p in ops
            ]
        )
        batch_runs.append(measure(root, ns.batch_commit_tables, request))

        root, ns, ops = version_namespace(base, f"ver-single-{r}", tables, per_table)
        single_runs.append(measure(root, create_one_by_one, ns, ops))
    return report(
        f"CreateTableVersion x {n} ({tables} tables x {per_table} versions)",
        batch_runs,
        single_runs,
        n,
    )


# A namespace root lives where its user keeps data; the console keeps its own default one
# under .lance-console/. (On some machines the system temp directory is far slower at creating
# directories than the rest of the same filesystem: the probe below prints the cost.)
DEFAULT_DIR = Path(".lance-console")


def mkdir_cost_us(base: Path, n: int = 200) -> float:
    """Microseconds per mkdir(2) in ``base`` (a fresh directory, kept until the end)."""
    probe = base / "mkdir-probe"
    probe.mkdir()
    t = time.perf_counter()
    for i in range(n):
        (probe / str(i)).mkdir()
    return (time.perf_counter() - t) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3, help="repetitions per measurement")
    parser.add_argument("--sizes", default="10,100,1000", help="DeclareTable batch sizes")
    parser.add_argument(
        "--dir",
        default=str(DEFAULT_DIR),
        help="where to create the namespaces (default: beside the console's own default "
        "namespace, .lance-console/)",
    )
    parser.add_argument("--s3-sizes", default="10,100", help="DeclareTable batch sizes on S3")
    args = parser.parse_args()
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="bench-batch-", dir=args.dir)).resolve()
    print(f"pylance {lance.__version__}, namespaces under {base} ({os.cpu_count()} CPUs)")
    try:
        print(f"this filesystem: {mkdir_cost_us(base):.0f} us per mkdir (what a declare costs)")
        root, ns = fresh(base, "warm-up")  # imports, thread pool, first catalog commits
        ns.batch_commit_tables(
            BatchCommitTablesRequest(
                operations=[
                    CommitTableOperation(declare_table=DeclareTableRequest(id=["bench", "w0"]))
                ]
            )
        )
        declare_one_by_one(ns, 2)
        ratios = {}
        for n in (int(x) for x in args.sizes.split(",")):
            ratios[n] = bench_declares(base, n, args.reps)
        ratios["versions"] = bench_versions(base, 10, 10, args.reps)
        if args.s3_sizes:
            bench_s3([int(x) for x in args.s3_sizes.split(",")], args.reps)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print()
    for n, goal in TARGETS.items():
        if n in ratios:
            verdict = "met" if ratios[n] >= goal else "NOT met"
            print(
                f"target: {n}-op DeclareTable batch >= {goal}x faster than {n} calls: "
                f"{ratios[n]:.1f}x -> {verdict}"
            )
    print(
        "what bounds it: a batch makes one catalog commit (__manifest) and one durability "
        "barrier (fsyncs in parallel, or one syncfs per filesystem from 64 paths on) whatever "
        "its size, so it costs "
        "about one mkdir + one small file per DeclareTable plus the lance merge-insert of the "
        "rows; separate calls each make a catalog commit (several files written, a new "
        "__manifest version to read back), which grows with the catalog's version count."
    )


if __name__ == "__main__":
    main()
