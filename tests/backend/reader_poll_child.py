"""Child process of test_reader_isolation.py: an independent reader of a namespace.

Reads one JSON job on stdin: ``{"root", "storage_options", "tables", "out", "stop"}``. Until
the file ``stop`` exists, it polls the tables through ``backend.connect(root)``
(``backend.services.table_watch.poll``: each table's version and row count) and, for
comparison, by opening each table's files directly with lance (``lance.dataset(location)``:
a reader that bypasses the namespace). Each poll is one JSON line in ``out``:
``{"ns": {"versions": [...], "rows": [...], "consistent": bool}, "direct": [...]}``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LANCE_LOG", "error")

from backend.spec.client_package import defer_api_modules  # noqa: E402

defer_api_modules()  # before lance_namespace's first import, as the console's packages do

import lance  # noqa: E402
from lance_namespace import DescribeTableRequest  # noqa: E402

import backend  # noqa: E402
from backend.services import table_watch  # noqa: E402


def main() -> int:
    job = json.loads(sys.stdin.read())
    so = job.get("storage_options") or None
    ns = backend.connect(job["root"], storage_options=so) if so else backend.connect(job["root"])
    tables = [list(t) for t in job["tables"]]
    locations = [ns.describe_table(DescribeTableRequest(id=t)).location for t in tables]
    stop = Path(job["stop"])
    with open(job["out"], "w", encoding="utf-8") as out:
        print(json.dumps({"ready": True}), file=out, flush=True)
        while not stop.exists():
            poll = table_watch.poll(ns, tables)
            direct = []
            for location in locations:
                ds = lance.dataset(location, storage_options=so)
                direct.append([int(ds.version), int(ds.count_rows())])
            line = {
                "ns": {
                    "versions": [r.version for r in poll.readings],
                    "rows": [r.rows for r in poll.readings],
                    "consistent": poll.consistent,
                    "attempts": poll.attempts,
                },
                "direct": direct,
                "at": time.time(),
            }
            print(json.dumps(line), file=out, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
