"""Latency of our RestNamespaceClient vs pylance's RestNamespace vs a bare httpx POST.

One run: start one ``lance.namespace.RestAdapter`` on a temporary directory, build a table
with ``--versions`` versions and ``--indexes`` scalar indexes, then time ListTableVersions,
ListTableIndices and DescribeTable through

  (a) ours:    backend.rest.RestNamespaceClient (request model in, response model out)
  (b) pylance: lance.namespace.RestNamespace(uri=...) (request model in, response model out)
  (c) bare:    httpx.Client().post(url, json=...) + response.json() (no models at all)

interleaved, ``--iterations`` times each after a warm-up, and print medians and ratios with
PASS/MISS against the targets: ours <= 1.2x bare, ours <= 1.0x pylance.

    .venv/bin/python benchmarks/bench_rest_client.py [--versions 2000] [--iterations 200]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("LANCE_LOG", "error")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
import lance  # noqa: E402
import lance_namespace as ln  # noqa: E402
import pyarrow as pa  # noqa: E402
from lance.namespace import RestAdapter, RestNamespace  # noqa: E402

from backend.rest import RestNamespaceClient  # noqa: E402

TABLE = "bench"
TARGET_VS_BARE = 1.2
TARGET_VS_PYLANCE = 1.0


def build(client: RestNamespaceClient, versions: int, indexes: int) -> str:
    """A 10-row table with ``indexes`` int columns, one scalar index each, ``versions``
    versions in all (the padding versions are config updates: no data files)."""
    columns = {"id": pa.array(range(10), pa.int64())}
    for i in range(indexes):
        columns[f"c{i}"] = pa.array([j % (i + 2) for j in range(10)], pa.int32())
    made = client.create_table(ln.CreateTableRequest(id=[TABLE]), pa.table(columns))
    for i in range(indexes):
        client.create_table_scalar_index(
            ln.CreateTableIndexRequest(
                id=[TABLE],
                column=f"c{i}",
                index_type="BTREE" if i % 2 == 0 else "BITMAP",
                name=f"c{i}_idx",
            )
        )
    dataset = lance.dataset(made.location)
    for i in range(max(0, versions - dataset.version)):
        dataset.update_config({"bench.pad": str(i)})
    return made.location


def measure(cases: dict[str, Callable[[], Any]], iterations: int, warmup: int) -> dict[str, float]:
    names = list(cases)
    for _ in range(warmup):
        for name in names:
            cases[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    # A new order every round (seeded): no case always runs after the same other one.
    shuffle = random.Random(0).shuffle
    for _ in range(iterations):
        order = list(names)
        shuffle(order)
        for name in order:
            start = time.perf_counter()
            cases[name]()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) * 1000.0 for name, values in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", type=int, default=2000)
    parser.add_argument("--indexes", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args(argv)

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-rest-") as tmp:
        adapter = RestAdapter("dir", {"root": tmp}, host="127.0.0.1", port=0)
        adapter.start()
        url = f"http://127.0.0.1:{adapter.port}"
        ours = RestNamespaceClient(url, wire_log_size=200)
        pylance = RestNamespace(uri=url)
        bare = httpx.Client()
        try:
            build(ours, args.versions, args.indexes)
            built = time.perf_counter() - started
            n_versions = len(
                ours.list_table_versions(ln.ListTableVersionsRequest(id=[TABLE])).versions
            )
            n_indexes = len(ours.list_table_indices(ln.ListTableIndicesRequest(id=[TABLE])).indexes)
            print(
                f"table {TABLE!r}: {n_versions} versions, {n_indexes} indexes "
                f"(built in {built:.1f} s); {args.iterations} iterations after "
                f"{args.warmup} warm-up, medians in ms"
            )

            versions_req = ln.ListTableVersionsRequest(id=[TABLE])
            indices_req = ln.ListTableIndicesRequest(id=[TABLE])
            describe_req = ln.DescribeTableRequest(id=[TABLE])
            operations: dict[str, dict[str, Callable[[], Any]]] = {
                "ListTableVersions": {
                    "ours": lambda: ours.list_table_versions(versions_req),
                    "pylance": lambda: pylance.list_table_versions(versions_req),
                    "bare": lambda: bare.post(f"{url}/v1/table/{TABLE}/version/list").json(),
                },
                "ListTableIndices": {
                    "ours": lambda: ours.list_table_indices(indices_req),
                    "pylance": lambda: pylance.list_table_indices(indices_req),
                    "bare": lambda: bare.post(
                        f"{url}/v1/table/{TABLE}/index/list", json={"id": [TABLE]}
                    ).json(),
                },
                "DescribeTable": {
                    "ours": lambda: ours.describe_table(describe_req),
                    "pylance": lambda: pylance.describe_table(describe_req),
                    "bare": lambda: bare.post(
                        f"{url}/v1/table/{TABLE}/describe?with_table_uri=false&check_declared=false",
                        json={"id": [TABLE], "with_table_uri": False, "check_declared": False},
                    ).json(),
                },
            }
            header = (
                f"{'operation':<18} {'ours':>9} {'pylance':>9} {'bare':>9} "
                f"{'ours/bare':>10} {'ours/pylance':>13} {'bare/pylance':>13}  verdict"
            )
            print(header)
            print("-" * len(header))
            all_pass = True
            for op, cases in operations.items():
                med = measure(cases, args.iterations, args.warmup)
                vs_bare = med["ours"] / med["bare"]
                vs_pylance = med["ours"] / med["pylance"]
                ok_bare = vs_bare <= TARGET_VS_BARE
                ok_pylance = vs_pylance <= TARGET_VS_PYLANCE
                all_pass &= ok_bare and ok_pylance
                verdict = (
                    f"{'PASS' if ok_bare else 'MISS'} (<= {TARGET_VS_BARE}x bare), "
                    f"{'PASS' if ok_pylance else 'MISS'} (<= {TARGET_VS_PYLANCE}x pylance)"
                )
                print(
                    f"{op:<18} {med['ours']:>9.3f} {med['pylance']:>9.3f} {med['bare']:>9.3f} "
                    f"{vs_bare:>9.2f}x {vs_pylance:>12.2f}x "
                    f"{med['bare'] / med['pylance']:>12.2f}x  {verdict}"
                )
            print(
                f"overall: {'PASS' if all_pass else 'MISS'}; "
                f"total {time.perf_counter() - started:.1f} s"
            )
        finally:
            ours.close()
            bare.close()
            adapter.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
