"""A large index build beside other writers: the case of issue 32.

One run: a ``--rows`` x ``--dim`` float32 table ``vecs`` and a small table ``other`` in a
temporary local namespace; an IVF_PQ build of ``vecs`` with the console's own path (the run of
a build job, ``build_jobs.BuildRun``, which always passes lance a progress callback; the console's chosen parameters:
632 partitions and 8 sub-vectors at 400k x 128); once lance reports progress, a second process
tags ``other`` through ``backend.connect`` and reports how long the tag took. Printed: the
build's wall time and stages, the tag's wall time (a tag that waited for the build's lock would
take as long as the build, or fail after the lock's 120 s timeout), and with ``--cancel`` a
cancel sent mid-build and how long the build took to stop (nothing committed, no partial
index directory left).

The run fails (exit 1) when the build does not finish (or stop, with ``--cancel``) within
``--deadline`` seconds: the progress-callback hang reported on pylance 14.0.2 would show here.

    .venv/bin/python benchmarks/bench_build_lock.py [--rows 400000] [--dim 128] [--cancel]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("LANCE_LOG", "error")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
from lance_namespace import CreateTableIndexRequest, CreateTableRequest  # noqa: E402

import backend  # noqa: E402
from backend.arrow.ipc import to_ipc_stream  # noqa: E402
from backend.services import build_jobs, index_overview  # noqa: E402

TAG_CODE = """
import sys, time, backend
from lance_namespace import CreateTableTagRequest
ns = backend.connect(sys.argv[1])
started = time.perf_counter()
ns.create_table_tag(CreateTableTagRequest(id=["other"], tag="beside-the-build", version=1))
print(f"{time.perf_counter() - started:.3f}")
"""


def _table(rows: int, dim: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    flat = rng.standard_normal(rows * dim, dtype=np.float32)
    return pa.table(
        {
            "id": pa.array(np.arange(rows, dtype=np.int64)),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(flat), dim),
        }
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--deadline", type=float, default=300.0)
    parser.add_argument("--cancel", action="store_true", help="cancel the build mid-way")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as root:
        ns = backend.connect(root)
        ns.create_table(CreateTableRequest(id=["vecs"]), to_ipc_stream(_table(args.rows, args.dim)))
        ns.create_table(CreateTableRequest(id=["other"]), to_ipc_stream(_table(10, 4)))
        request = CreateTableIndexRequest(id=["vecs"], column="vec", index_type="IVF_PQ")
        build = build_jobs.BuildRun.prepare(ns, request, time_limit=None)
        started = time.perf_counter()
        thread = threading.Thread(target=build.run, args=(ns, request), daemon=True)
        thread.start()
        while not (build.get().events or build.get().done):
            time.sleep(0.05)
        tag = subprocess.run(
            [sys.executable, "-c", TAG_CODE, root],
            capture_output=True,
            text=True,
            timeout=args.deadline,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        )
        tag_text = tag.stdout.strip() if tag.returncode == 0 else f"FAILED: {tag.stderr[-500:]}"
        print(f"tag of another table from a second process while the build ran: {tag_text} s")
        if args.cancel:
            time.sleep(1.0)
            cancelled_at = time.perf_counter()
            build.cancel()
        thread.join(args.deadline)
        job = build.get()
        if not job.done:
            last = job.events[-3:]
            print(
                f"FAIL: the build neither finished nor stopped within {args.deadline:.0f} s; "
                f"last events: {last}"
            )
            return 1
        took = time.perf_counter() - started
        stages = []
        for event in job.events:
            if event.get("stage") and event.get("stage") not in stages:
                stages.append(event["stage"])
        print(f"build: {job.status} after {took:.1f} s; stages: {', '.join(stages)}")
        chosen = getattr(job.response, "context", None) or {}
        if chosen:
            print(f"chosen parameters: {chosen}")
        if args.cancel:
            print(f"stopped {time.perf_counter() - cancelled_at:.1f} s after the cancel")
            indexes = index_overview.list_indexes(ns, ["vecs"])
            leftovers = list((Path(root) / "vecs.lance" / "_indices").glob("*"))
            print(f"indexes after the cancel: {len(indexes)}; index directories: {len(leftovers)}")
        ok = tag.returncode == 0 and job.status in (
            ("cancelled", "succeeded") if args.cancel else ("succeeded",)
        )
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
