"""An outside writer: a lancedb program on the same namespace as the console, without the
console's lock. Run as its own process by tests/backend/test_lancedb_interop.py.

    python lancedb_app.py JOB.json

``JOB.json``: ``root``, ``storage_options`` (object stores), ``namespace`` (the namespace the
tables go in), ``action`` and its arguments; the answer is written as JSON to ``out``.

* ``create``: create ``count`` tables ``<prefix><i>`` (``rows`` rows of a 4-d vector each),
  answers the names created;
* ``append``: append ``times`` x ``rows`` rows (ids from ``start``) to table ``table``, one
  commit each, ``pause`` seconds apart; answers the ids appended;
* ``read``: every table name of the namespace, the row counts of the tables in ``count``, and
  the id of the nearest row of table ``table`` to ``query`` in ``column``.

``create`` and ``append`` touch the file ``ready`` once connected, then wait for ``go``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import lancedb
import pyarrow as pa

DIM = 4


def rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    vectors = [[float(i), float(i % 7), float(i % 3), 1.0] for i in ids]
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "vector": pa.array(vectors, pa.list_(pa.float32(), DIM)),
        }
    )


def connect(job: dict[str, Any]) -> Any:
    props = {"root": job["root"]}
    for k, v in (job.get("storage_options") or {}).items():
        props[f"storage.{k}"] = v
    return lancedb.connect_namespace(
        "dir", props, storage_options=job.get("storage_options") or None
    )


def wait_for(go: str | None, ready: str | None) -> None:
    """Say ``ready`` (a file), then wait for the file ``go``."""
    if ready:
        Path(ready).touch()
    if not go:
        return
    deadline = time.monotonic() + 60
    while not Path(go).exists():
        if time.monotonic() > deadline:
            raise SystemExit("no go signal")
        time.sleep(0.005)


def main() -> None:
    job = json.loads(Path(sys.argv[1]).read_text())
    db = connect(job)
    ns = [job["namespace"]] if job.get("namespace") else []
    so = job.get("storage_options") or None
    action = job["action"]
    out: dict[str, Any] = {}
    if action == "create":
        wait_for(job.get("go"), job.get("ready"))
        made = []
        for i in range(int(job["count"])):
            name = f"{job['prefix']}{i}"
            db.create_table(name, rows(i * 10, int(job.get("rows", 2))), namespace_path=ns)
            made.append(name)
        out["created"] = made
    elif action == "append":
        table = db.open_table(job["table"], namespace_path=ns, storage_options=so)
        wait_for(job.get("go"), job.get("ready"))
        appended: list[int] = []
        start = int(job["start"])
        for i in range(int(job["times"])):
            batch = rows(start + i * int(job["rows"]), int(job["rows"]))
            table.add(batch)
            appended += batch.column("id").to_pylist()
            time.sleep(float(job.get("pause", 0)))
        out["appended"] = appended
    elif action == "read":
        names: list[str] = []
        token = None
        while True:
            page = db.list_tables(namespace_path=ns, page_token=token)
            names += list(page.tables)
            token = page.page_token
            if not token:
                break
        out["tables"] = sorted(names)
        out["counts"] = {
            n: db.open_table(n, namespace_path=ns, storage_options=so).count_rows()
            for n in job["count"]
        }
        if job.get("table"):
            hit = (
                db.open_table(job["table"], namespace_path=ns, storage_options=so)
                .search(job["query"], vector_column_name=job["column"])
                .limit(1)
                .to_list()
            )
            out["nearest"] = hit[0]["id"] if hit else None
    else:
        raise SystemExit(f"unknown action {action!r}")
    Path(job["out"]).write_text(json.dumps(out))


if __name__ == "__main__":
    main()
