"""Requests a REST batch costs: the builder's Commit (one preflight, then the batch) of
``--declares`` DeclareTable operations into one namespace holding ``--existing`` tables.

One run against a real ``lance.namespace.RestAdapter`` on a temporary directory (it answers
ListTables in one page). Counted by the client's wire log (``WireLog.counts``); the seconds
are printed for information:

  (a) preflight: ``RestNamespaceClient.preflight`` (``catalog_views.ListingView``: ListTables
      with declared tables and ListNamespaces of the namespace, every page);
  (b) per operation: the same rules through ``catalog_views.NamespaceView`` (NamespaceExists /
      TableExists per operation: how the client checked a batch before the preflight);

plus the builder's Commit (preflight + BatchCommitTables, which this server refuses as not
supported; the refusal is the one request the batch costs). Prints the counts, the ratio
(b)/(a) and PASS/MISS against the target: Commit <= 1 + D + (pages of ListTables), D = 1.

    .venv/bin/python benchmarks/bench_rest_preflight.py [--declares 1000] [--existing 250]
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
from lance.namespace import RestAdapter  # noqa: E402
from lance_namespace.errors import UnsupportedOperationError  # noqa: E402

from backend.rest import RestNamespaceClient  # noqa: E402
from backend.rules import batch_rules  # noqa: E402
from backend.services import batch_builder as bb  # noqa: E402
from backend.spec import catalog_views

NAMESPACE = ["bench"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--declares", type=int, default=1000)
    parser.add_argument("--existing", type=int, default=250)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as root:
        adapter = RestAdapter("dir", {"root": root}, host="127.0.0.1", port=0)
        adapter.start()
        try:
            client = RestNamespaceClient(f"http://127.0.0.1:{adapter.port}", wire_log_size=0)
            client.create_namespace(ln.CreateNamespaceRequest(id=NAMESPACE))
            for i in range(args.existing):
                client.declare_table(ln.DeclareTableRequest(id=[*NAMESPACE, f"old{i}"]))
            operations = [bb.declare_op([*NAMESPACE, f"new{i}"]) for i in range(args.declares)]
            request = bb.to_request(operations)
            log = client.wire_log

            log.clear()
            started = time.perf_counter()
            problems = client.preflight(request)
            bulk_s = time.perf_counter() - started
            bulk = log.counts()
            assert not batch_rules.has_errors(problems), problems

            log.clear()
            started = time.perf_counter()
            old = batch_rules.check_batch(request, catalog_views.NamespaceView(client))
            per_op_s = time.perf_counter() - started
            per_op = log.counts()
            assert not batch_rules.has_errors(old), old

            log.clear()
            # pylance's RestAdapter has no BatchCommitTables: its refusal is the batch's request
            with contextlib.suppress(UnsupportedOperationError):
                bb.commit(client, operations)
            commit = log.counts()
        finally:
            adapter.stop()

    pages = bulk.get("list_tables", 0)
    target = 1 + 1 + pages
    total = sum(commit.values())
    print(f"{args.declares} declares into 1 namespace holding {args.existing} tables")
    print(f"  (a) preflight, bulk     : {sum(bulk.values()):>6} requests {bulk}  {bulk_s:.2f} s")
    print(
        f"  (b) per operation       : {sum(per_op.values()):>6} requests {per_op}  {per_op_s:.2f} s"
    )
    print(f"  ratio (b)/(a)           : {sum(per_op.values()) / max(1, sum(bulk.values())):.0f}x")
    print(f"  builder Commit          : {total:>6} requests {commit}")
    verdict = "PASS" if total <= target else "MISS"
    print(f"  target 1 + D + pages = {target}: {verdict}")
    return 0 if total <= target else 1


if __name__ == "__main__":
    sys.exit(main())
