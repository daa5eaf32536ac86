"""The Ray executor against the local one, on this machine: compaction and an IVF_PQ build.

One run: identical tables of ``--rows`` rows (``id`` and a ``--dim`` float32 ``vec``) in
``--fragments`` fragments, in a temporary local namespace. Compaction, then an IVF_PQ build
(the console's chosen parameters, the same on both), once with the local executor (the local
backend's ``compact_files`` and index build: pylance's own threads) and once with the Ray
executor (``backend.services.ray_executor``: lance-ray on a local Ray of ``--cpus`` CPUs,
started before the clock runs: a cluster is long-lived). Printed: each operation's wall time,
the Ray / local ratio, and for the index the recall@10 of both builds against numpy brute
force (they should agree). It is a measurement, not a test.

    .venv/bin/python benchmarks/bench_ray.py [--rows 400000] [--dim 128] [--fragments 100]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LANCE_LOG", "error")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lance  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
from lance_namespace import CreateTableRequest, DescribeTableRequest  # noqa: E402

import backend  # noqa: E402
from backend.arrow.ipc import to_ipc_stream  # noqa: E402
from backend.rules import index_rules as rules  # noqa: E402
from backend.services import index_overview, ray_executor  # noqa: E402
from backend.services.tuning.optimize import compact_files


def _vectors(rows: int, dim: int, seed: int = 0) -> np.ndarray:
    """Vectors around 256 centres (neighbours exist, as in embeddings)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((256, dim), dtype=np.float32) * 3
    picks = rng.integers(0, 256, rows)
    return centres[picks] + rng.standard_normal((rows, dim), dtype=np.float32)


def _fragmented(ns, tid: list[str], vectors: np.ndarray, fragments: int) -> None:
    rows, dim = vectors.shape
    table = pa.table(
        {
            "id": pa.array(np.arange(rows, dtype=np.int64)),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), dim),
        }
    )
    step = max(1, rows // fragments)
    ns.create_table(CreateTableRequest(id=tid), to_ipc_stream(table.slice(0, step)))
    location = ns.describe_table(DescribeTableRequest(id=tid)).location
    lance.write_dataset(table.slice(step), location, mode="append", max_rows_per_file=step)


def _timed(work) -> tuple[float, object]:
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def _recall(ds, vectors: np.ndarray, queries: np.ndarray, nprobes: int) -> float:
    found = 0
    for q in queries:
        truth = set(np.argsort(((vectors - q) ** 2).sum(axis=1))[:10].tolist())
        got = ds.to_table(
            nearest={"column": "vec", "q": q, "k": 10, "nprobes": nprobes}, columns=["id"]
        )["id"].to_pylist()
        found += len(truth & set(got))
    return found / (10 * len(queries))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--fragments", type=int, default=100)
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()

    import ray

    started = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    print(f"local Ray of {args.cpus} CPUs started in {time.perf_counter() - started:.1f} s")
    vectors = _vectors(args.rows, args.dim)
    rows: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory() as root:
        ns = backend.connect(root)
        # four copies: compaction and the index build each start from the fragmented table
        # (a build on Ray runs one segment per worker over the fragments it is given)
        for tid in (["local"], ["on_ray"], ["local_ix"], ["on_ray_ix"]):
            _fragmented(ns, tid, vectors, args.fragments)
        print(f"{args.rows:,} rows x {args.dim} in {args.fragments} fragments, four copies")

        local_s, local = _timed(lambda: compact_files(ns, ["local"]))
        ray_s, on_ray = _timed(lambda: ray_executor.compact(ns, ["on_ray"]))
        print(
            f"compaction: local {local['fragments_after']} fragments, Ray {on_ray['fragments_after']} ({on_ray['workers']} workers)"
        )  # type: ignore[index]
        rows.append(("compaction", local_s, ray_s))

        # the console's choices for this table, given to both builds
        asked = rules.build_index_request(["local_ix"], "vec", "IVF_PQ", dim=args.dim)
        params = {
            "num_sub_vectors": asked.num_sub_vectors,
            **rules.chosen_build_params(asked, args.dim, args.rows),
        }
        request = rules.build_index_request(["local_ix"], "vec", "IVF_PQ", params=params)
        local_s, _ = _timed(lambda: index_overview.create_index(ns, request))
        ray_s, built = _timed(
            lambda: ray_executor.create_index(ns, ["on_ray_ix"], "vec", "IVF_PQ", params=params)
        )
        rows.append(("IVF_PQ build", local_s, ray_s))
        partitions = int(params["num_partitions"])
        rng = np.random.default_rng(1)
        picks = rng.choice(args.rows, args.queries, replace=False)
        queries = vectors[picks] + rng.normal(0, 0.5, (args.queries, args.dim)).astype(np.float32)
        nprobes = max(1, partitions // 10)
        recalls = [
            _recall(ns.open_dataset([t]), vectors, queries, nprobes)
            for t in ("local_ix", "on_ray_ix")
        ]
        print(
            f"IVF_PQ {params}, chosen on Ray {built['chosen']}; recall@10 "  # type: ignore[index]
            f"(nprobes {nprobes}): local {recalls[0]:.3f}, Ray {recalls[1]:.3f}"
        )
    ray.shutdown()
    print()
    print(f"{'operation':<14}{'local s':>10}{'Ray s':>10}{'Ray/local':>11}")
    for name, local_s, ray_s in rows:
        print(f"{name:<14}{local_s:>10.1f}{ray_s:>10.1f}{ray_s / local_s:>10.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
