"""Seconds of each single write on the local backend right after the catalog changed, in a
catalog of 1,000 and (``--large``) 100,000 declared tables: DropTable, DeregisterTable,
RegisterTable, RenameTable and CreateTable on a directory namespace in a temporary folder.

A write that deletes or adopts a table's files first checks its location against every other
table's directory (``backend.locations.TableDirs``), read once per state of the catalog: so
each write here comes right after another changed the catalog, as when a user drops tables
one after another. The catalog is declared with BatchCommitTables, 5,000 tables a commit, in
one namespace; three tables hold rows. Prints the seconds of each write per catalog size and
PASS when none waits more than a second (issue 37: nothing a user does waits more than 1 s).

    .venv/bin/python benchmarks/bench_local_writes.py [--large] [--sizes 1000,20000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("LANCE_LOG", "error")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lance  # noqa: E402
import lance_namespace as ln  # noqa: E402
import pyarrow as pa  # noqa: E402

import backend  # noqa: E402

NAMESPACE = "big"
DECLARE_BATCH = 5_000
DATA = pa.table({"id": pa.array(range(3), pa.int64())})
LIMIT_S = 1.0


def build(root: str, tables: int) -> float:
    """``tables`` declared tables in one namespace and three tables with rows; the seconds it
    took."""
    start = time.perf_counter()
    ns = backend.connect(root)
    ns.create_namespace(ln.CreateNamespaceRequest(id=[NAMESPACE]))
    names = [f"table_{i:06d}" for i in range(tables)]
    for first in range(0, tables, DECLARE_BATCH):
        ops = [
            ln.CommitTableOperation(declare_table=ln.DeclareTableRequest(id=[NAMESPACE, n]))
            for n in names[first : first + DECLARE_BATCH]
        ]
        ns.batch_commit_tables(ln.BatchCommitTablesRequest(operations=ops))
    for name in ("a", "b", "c"):
        ns.create_table(ln.CreateTableRequest(id=[NAMESPACE, name]), _ipc(DATA))
    lance.write_dataset(DATA, os.path.join(root, "outside_made.lance"))
    return time.perf_counter() - start


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def measure(root: str) -> dict[str, float]:
    """write -> seconds, each right after the previous one changed the catalog, in a console
    process opened on the catalog (its first read of the catalog done beforehand)."""
    ns = backend.connect(root)
    ns.list_tables(ln.ListTablesRequest(id=[NAMESPACE], limit=10))

    def tid(name: str) -> list[str]:
        return [NAMESPACE, name]

    writes: dict[str, Callable[[], Any]] = {
        "DropTable": lambda: ns.drop_table(ln.DropTableRequest(id=tid("a"))),
        "DeregisterTable": lambda: ns.deregister_table(ln.DeregisterTableRequest(id=tid("b"))),
        "RegisterTable": lambda: ns.register_table(
            ln.RegisterTableRequest(id=tid("registered"), location="outside_made.lance")
        ),
        "RenameTable": lambda: ns.rename_table(
            ln.RenameTableRequest(id=tid("c"), new_table_name="c_renamed")
        ),
        "CreateTable": lambda: ns.create_table(ln.CreateTableRequest(id=tid("new")), _ipc(DATA)),
        "DropTable again": lambda: ns.drop_table(ln.DropTableRequest(id=tid("registered"))),
    }
    out: dict[str, float] = {}
    for name, write in writes.items():
        start = time.perf_counter()
        write()
        out[name] = time.perf_counter() - start
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000", help="catalog sizes, comma-separated")
    parser.add_argument("--large", action="store_true", help="add a catalog of 100,000 tables")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.large and 100_000 not in sizes:
        sizes.append(100_000)

    results: dict[int, dict[str, float]] = {}
    for size in sizes:
        with tempfile.TemporaryDirectory() as root:
            seconds = build(root, size)
            print(f"catalog of {size:,} declared tables built in {seconds:.1f} s", flush=True)
            results[size] = measure(root)

    writes = list(next(iter(results.values())))
    print()
    print(f"{'write':<18}" + "".join(f"{f'{s:,} tables':>16}" for s in sizes))
    for name in writes:
        print(f"{name:<18}" + "".join(f"{results[s][name] * 1000:>13.0f} ms" for s in sizes))
    slowest = max(max(r.values()) for r in results.values())
    print()
    verdict = "PASS" if slowest <= LIMIT_S else "MISS"
    print(f"{verdict}: the slowest write took {slowest:.2f} s (at most {LIMIT_S:.0f} s)")
    return 0 if slowest <= LIMIT_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
