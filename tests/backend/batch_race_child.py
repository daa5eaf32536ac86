"""Child process of test_batch_concurrency.py: one batch commit or one single operation.

``python batch_race_child.py JOB.json`` where the job says

* ``root``: the namespace; ``name``: this racer's name; ``barrier``: a directory;
* ``batch``: path of a BatchCommitTablesRequest JSON, or ``single``: ``{"method": ...,
  "request": {...}}`` for a LocalNamespace method (e.g. ``create_table_version``);
* ``pause_at`` (optional): a fault-hook phase; when reached, the racer creates
  ``<barrier>/ready-<name>`` and waits for ``<barrier>/go`` (or ``<barrier>/go-<name>``);
* ``mark_at`` (optional): a phase; when reached, the racer creates ``<barrier>/<phase>-<name>``.

It writes ``<barrier>/result-<name>.json``: ``{"ok": true, "txn": id}`` or ``{"ok": false,
"error": class name, "message": ...}``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("LANCE_LOG", "error")

from backend.spec.client_package import defer_api_modules  # noqa: E402

defer_api_modules()  # before lance_namespace's first import, as the console's packages do

from lance_namespace import BatchCommitTablesRequest  # noqa: E402

import backend  # noqa: E402
from backend.local import batch  # noqa: E402

WAIT_SECONDS = 120.0


def main() -> None:
    job = json.loads(Path(sys.argv[1]).read_text())
    name, barrier = job["name"], Path(job["barrier"])

    def hook(step: int, phase: str, detail: str) -> None:
        if phase == job.get("mark_at"):
            (barrier / f"{phase}-{name}").touch()
        if phase == job.get("pause_at"):
            (barrier / f"ready-{name}").touch()
            deadline = time.monotonic() + WAIT_SECONDS
            while not ((barrier / "go").exists() or (barrier / f"go-{name}").exists()):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{name}: nobody said go")
                time.sleep(0.01)

    ns = backend.connect(job["root"])
    batch.set_fault_hook(hook)
    try:
        if "batch" in job:
            request = BatchCommitTablesRequest.from_json(Path(job["batch"]).read_text())
            result = {"ok": True, "txn": ns.batch_commit_tables(request).transaction_id}
        else:
            single = job["single"]
            getattr(ns, single["method"])(single["request"])
            result = {"ok": True, "txn": None}
    except Exception as exc:
        result = {"ok": False, "error": type(exc).__name__, "message": str(exc)}
    (barrier / f"result-{name}.json").write_text(json.dumps(result))


if __name__ == "__main__":
    main()
