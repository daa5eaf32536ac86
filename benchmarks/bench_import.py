"""CSV import through the console against bare pyarrow + lance, time and peak memory.

One run: write a ``--rows`` x 10 column CSV (int64, float64, strings, a timestamp) to a
temporary directory, then run, each in its own child process (``--repeats`` times,
interleaved),

  (a) ours: backend.connect(dir) -> services.imports.import_table(file object, "csv")
      (streamed: CSV blocks -> record batches -> lance, under the namespace lock)
  (b) bare: pyarrow.csv.read_csv(path) -> lance.write_dataset(table, dir)

and print the median wall time of each, the ratio (a)/(b) (target <= 1.2x), and the peak
resident memory of each child (``os.wait4``'s rusage of that child) against the file size:
the whole peak, and the peak above the child's footprint before it starts working (Python,
pyarrow and lance loaded). Target: (a)'s peak <= 2x the file size.

    .venv/bin/python benchmarks/bench_import.py [--rows 1000000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LANCE_LOG", "error")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET_TIME = 1.2
TARGET_MEMORY = 2.0
TABLE = ["bench", "imported"]


def write_csv(path: Path, rows: int, seed: int = 0) -> int:
    """The benchmark's CSV (10 columns), written in slices; returns its size in bytes."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    words = np.array(["lance", "arrow", "vector", "namespace", "table", "index", "query"])
    step = 100_000
    writer = None
    for start in range(0, rows, step):
        n = min(step, rows - start)
        ids = np.arange(start, start + n, dtype=np.int64)
        batch = pa.record_batch(
            {
                "id": ids,
                "count": rng.integers(0, 1_000_000, n),
                "bucket": rng.integers(-500, 500, n),
                "price": np.round(rng.random(n) * 1000, 2),
                "score": rng.normal(size=n),
                "ratio": rng.random(n),
                "name": pa.array([f"item-{i}" for i in ids]),
                "category": pa.array(words[rng.integers(0, len(words), n)]),
                "note": pa.array(
                    [f"{a} {b}" for a, b in zip(words[ids % 7], words[(ids // 7) % 7], strict=True)]
                ),
                "created": pa.array(
                    (1_700_000_000 + ids * 37).astype("datetime64[s]"), pa.timestamp("s")
                ),
            }
        )
        if writer is None:
            writer = pacsv.CSVWriter(str(path), batch.schema)
        writer.write_batch(batch)
    assert writer is not None
    writer.close()
    return path.stat().st_size


def child(variant: str, csv_path: str, root: str) -> None:
    """Run one variant in this process; print its time and footprint before working."""
    import lance
    import pyarrow.csv as pacsv
    from lance_namespace import CreateNamespaceRequest

    import backend
    from backend.services import imports

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    started = time.perf_counter()
    if variant == "a":
        ns = backend.connect(root)
        ns.create_namespace(CreateNamespaceRequest(id=TABLE[:1]))
        with open(csv_path, "rb") as source:
            result = imports.import_table(ns, TABLE, source, "csv")
        rows = result.rows
    else:
        table = pacsv.read_csv(csv_path)
        ds = lance.write_dataset(table, os.path.join(root, "bare.lance"))
        rows = ds.count_rows()
    elapsed = time.perf_counter() - started
    print(json.dumps({"seconds": elapsed, "rows": rows, "baseline_rss": before}))


def run_child(variant: str, csv_path: Path, root: Path) -> dict[str, float]:
    root.mkdir(parents=True)
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", variant, str(csv_path), str(root)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    output = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"variant {variant} failed ({proc.returncode})")
    report = json.loads(output.strip().splitlines()[-1])
    report["peak_rss"] = usage.ru_maxrss * 1024  # Linux: KiB
    return report


def mib(n: float) -> str:
    return f"{n / 2**20:,.1f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", nargs=3, metavar=("VARIANT", "CSV", "ROOT"))
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        csv_path = Path(tmp) / "data.csv"
        started = time.perf_counter()
        size = write_csv(csv_path, args.rows)
        print(
            f"CSV: {args.rows:,} rows x 10 columns, {mib(size)} "
            f"(written in {time.perf_counter() - started:.1f} s)"
        )
        runs: dict[str, list[dict[str, float]]] = {"a": [], "b": []}
        for i in range(args.repeats):
            for variant in ("a", "b"):
                report = run_child(variant, csv_path, Path(tmp) / f"{variant}{i}")
                assert report["rows"] == args.rows, report
                runs[variant].append(report)
        names = {"a": "(a) imports.import_table", "b": "(b) read_csv + write_dataset"}
        summary = {}
        for variant, reports in runs.items():
            seconds = statistics.median(r["seconds"] for r in reports)
            peak = max(r["peak_rss"] for r in reports)
            above = max(r["peak_rss"] - r["baseline_rss"] for r in reports)
            summary[variant] = (seconds, peak, above)
            print(
                f"{names[variant]:32s} median {seconds:6.2f} s over {len(reports)} runs; "
                f"peak RSS {mib(peak)} ({peak / size:.2f}x the file), "
                f"above the child's start {mib(above)} ({above / size:.2f}x)"
            )
        ratio = summary["a"][0] / summary["b"][0]
        verdict = "ok" if ratio <= TARGET_TIME else "OVER TARGET"
        print(f"time (a)/(b): {ratio:.2f}x (target <= {TARGET_TIME}x) {verdict}")
        for label, value in (("peak", summary["a"][1]), ("above start", summary["a"][2])):
            mem = value / size
            verdict = "ok" if mem <= TARGET_MEMORY else "OVER TARGET"
            print(
                f"memory (a) {label} / file size: {mem:.2f}x (target <= {TARGET_MEMORY}x) {verdict}"
            )


if __name__ == "__main__":
    main()
