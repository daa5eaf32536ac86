"""Child process of test_object_store_batch.py: batch commits on an S3 root, killed or held.

Imports lance and the backend once, then reads one JSON job per line on stdin; each job runs in a
fresh ``fork()``. A job: ``root`` (s3://...), ``options`` (storage options), ``request`` (a path
to BatchCommitTablesRequest JSON), ``lease`` (seconds) and ``mode``:

* ``"count"``: run, write the checkpoints ``[index, step, phase]`` and the object-store counters
  to ``log``;
* ``"kill"``: SIGKILL itself at checkpoint ``kill_at``;
* ``"race"``: at the "validated" checkpoint create ``ready`` and wait for ``go`` to exist, then
  commit; write ``{"ok": txn}`` or ``{"error": class name}`` to ``log``;
* ``"open"``: only ``backend.connect`` (recovers).

Answers one JSON line per job: ``{"signal": n}`` or ``{"exit": code}``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LANCE_LOG", "error")
warnings.filterwarnings("ignore", message="lance is not fork-safe")

from backend.spec.client_package import defer_api_modules  # noqa: E402

defer_api_modules()  # before lance_namespace's first import, as the console's packages do

from lance_namespace import BatchCommitTablesRequest  # noqa: E402

import backend  # noqa: E402
from backend.local import batch  # noqa: E402
from backend.local.batch import objects  # noqa: E402
from tests.support import zygote_main  # noqa: E402


def run_job(job: dict) -> int:
    calls: list[list] = []
    mode = job["mode"]
    if job.get("lease"):
        os.environ["LANCE_CONSOLE_LEASE_SECONDS"] = str(job["lease"])

    def hook(step: int, phase: str, detail: str) -> None:
        calls.append([len(calls) + 1, step, phase])
        if mode == "kill" and len(calls) == job["kill_at"]:
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == "race" and phase == "validated":
            Path(job["ready"]).touch()
            deadline = time.time() + 30
            while not Path(job["go"]).exists() and time.time() < deadline:
                time.sleep(0.01)

    ns = backend.connect(job["root"], storage_options=job["options"])
    if mode == "open":
        return 0
    request = BatchCommitTablesRequest.from_json(Path(job["request"]).read_text())
    batch.set_fault_hook(hook)
    try:
        response = ns.batch_commit_tables(request)
    except Exception as exc:
        if job.get("log"):
            Path(job["log"]).write_text(json.dumps({"error": type(exc).__name__, "text": str(exc)}))
        return 3
    store = objects.store_for(batch.context(ns, catalog_only=True))
    if job.get("log"):
        Path(job["log"]).write_text(
            json.dumps(
                {
                    "ok": response.transaction_id,
                    "calls": calls,
                    "requests": store.requests,
                    "protocol_writes": store.protocol_writes,
                }
            )
        )
    return 0


if __name__ == "__main__":
    zygote_main(run_job)
