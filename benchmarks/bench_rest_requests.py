"""Requests each REST single write sends, in a catalog of 1,000 and (``--large``) 10,000
declared tables: DeclareTable, CreateTable, RegisterTable, RenameTable and CreateTableVersion
against a real ``lance.namespace.RestAdapter`` on a temporary directory.

The catalog is declared through the server's own directory namespace
(``lance.namespace.DirectoryNamespace`` on the same root), spread over ten namespaces; the
writes go through the console's ``RestNamespaceClient`` and are counted by its wire log
(``WireLog.counts``). Prints the requests of each write per catalog size, and PASS when no
count grows with the catalog (the seconds are for information).

    .venv/bin/python benchmarks/bench_rest_requests.py [--large] [--sizes 100,1000]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LANCE_LOG", "error")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lance_namespace as ln  # noqa: E402
import pyarrow as pa  # noqa: E402
from lance.namespace import DirectoryNamespace, RestAdapter  # noqa: E402
from lance_namespace.errors import LanceNamespaceError  # noqa: E402

from backend.rest import RestNamespaceClient  # noqa: E402

NAMESPACES = 10
DATA = pa.table({"id": pa.array(range(4), pa.int64())})


def build(root: str, tables: int) -> float:
    """``tables`` declared tables over ``NAMESPACES`` namespaces, through the directory
    namespace itself; returns the seconds it took."""
    start = time.perf_counter()
    directory = DirectoryNamespace(root=root)
    for n in range(NAMESPACES):
        directory.create_namespace(ln.CreateNamespaceRequest(id=[f"n{n}"]))
    for i in range(tables):
        directory.declare_table(ln.DeclareTableRequest(id=[f"n{i % NAMESPACES}", f"t{i}"]))
    return time.perf_counter() - start


def measure(client: RestNamespaceClient) -> dict[str, tuple[int, float]]:
    """write -> (requests sent, seconds). A write the server refuses still counts its requests
    (this server implements no RenameTable, and no manifest is staged for the new version)."""
    made = client.create_table(ln.CreateTableRequest(id=["n0", "src"]), DATA)
    relative = str(made.location).rstrip("/").rsplit("/", 1)[1]
    writes = {
        "DeclareTable": lambda: client.declare_table(ln.DeclareTableRequest(id=["n1", "new"])),
        "CreateTable": lambda: client.create_table(
            ln.CreateTableRequest(id=["n2", "created"]), DATA
        ),
        "RegisterTable": lambda: client.register_table(
            ln.RegisterTableRequest(id=["n3", "reg"], location=relative)
        ),
        "RenameTable": lambda: client.rename_table(
            ln.RenameTableRequest(id=["n0", "t0"], new_table_name="renamed")
        ),
        "CreateTableVersion": lambda: client.create_table_version(
            {
                "id": ["n0", "src"],
                "version": 2,
                "manifest_path": f"{made.location}/_staging/2.manifest",
            }
        ),
    }
    out: dict[str, tuple[int, float]] = {}
    for name, write in writes.items():
        client.wire_log.clear()
        start = time.perf_counter()
        with contextlib.suppress(LanceNamespaceError):
            write()
        out[name] = (sum(client.wire_log.counts().values()), time.perf_counter() - start)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000", help="catalog sizes, comma-separated")
    parser.add_argument("--large", action="store_true", help="add a catalog of 10,000 tables")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.large and 10_000 not in sizes:
        sizes.append(10_000)

    results: dict[int, dict[str, tuple[int, float]]] = {}
    for size in sizes:
        with tempfile.TemporaryDirectory() as root:
            seconds = build(root, size)
            print(f"catalog of {size:,} declared tables built in {seconds:.1f} s", flush=True)
            adapter = RestAdapter("dir", {"root": root}, host="127.0.0.1", port=0)
            adapter.start()
            try:
                client = RestNamespaceClient(f"http://127.0.0.1:{adapter.port}")
                results[size] = measure(client)
                client.close()
            finally:
                adapter.stop()

    writes = list(next(iter(results.values())))
    print()
    print(f"{'write':<20}" + "".join(f"{f'{s:,} tables':>22}" for s in sizes))
    for name in writes:
        cells = "".join(
            f"{results[s][name][0]:>6} req {results[s][name][1] * 1000:>8.1f} ms  " for s in sizes
        )
        print(f"{name:<20}{cells}")
    steady = all(len({results[s][name][0] for s in sizes}) == 1 for name in writes)
    print()
    print(f"{'PASS' if steady else 'MISS'}: requests per write do not grow with the catalog")
    return 0 if steady else 1


if __name__ == "__main__":
    raise SystemExit(main())
