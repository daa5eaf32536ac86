"""Child process of test_batch_crash.py: runs batch commits and dies at a chosen point.

It imports lance and the backend once, without using them, then reads one JSON job per line on
stdin. Each job runs in a fresh ``fork()`` of this process (so no job pays the import again and
no job inherits a started lance runtime); the forked process installs a fault hook on
``backend.local.batch`` and either runs the batch or only opens the namespace (which recovers):

* ``{"mode": "count", ...}``: run to the end, write every checkpoint ``[index, step, phase]``
  to ``log``;
* ``{"mode": "kill", "kill_at": k}``: SIGKILL itself at checkpoint ``k`` (the k-th call of the
  hook: before the protocol's k-th file change, or at a named point such as "validated");
* ``{"mode": "fail_then_kill", "fail_at": f, "kill_at": k}``: raise an I/O error at checkpoint
  ``f`` (the batch starts rolling back), then SIGKILL itself at checkpoint ``k`` of the rollback;
* ``{"mode": "open", "kill_at": k}``: only ``backend.connect(root)``, which recovers; killed at
  recovery checkpoint ``k`` (0: never).

For every job it answers one JSON line: ``{"signal": n}`` or ``{"exit": code}``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
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
from tests.support import zygote_main  # noqa: E402


def run_job(job: dict) -> int:
    calls: list[list] = []
    mode = job["mode"]
    kill_at = job.get("kill_at", 0)
    fail_at = job.get("fail_at", 0)

    def hook(step: int, phase: str, detail: str) -> None:
        calls.append([len(calls) + 1, step, phase])
        index = len(calls)
        if mode in ("kill", "fail_then_kill", "open") and index == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == "fail_then_kill" and index == fail_at:
            raise OSError(5, f"injected I/O error at {phase}")

    if mode == "open":
        batch.set_fault_hook(hook)
        backend.connect(job["root"])
        return 0
    ns = backend.connect(job["root"])
    request = BatchCommitTablesRequest.from_json(Path(job["request"]).read_text())
    batch.set_fault_hook(hook)
    try:
        ns.batch_commit_tables(request)
    except Exception as exc:
        if job.get("log"):
            Path(job["log"]).write_text(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
        return 3
    if job.get("log"):
        Path(job["log"]).write_text(json.dumps({"calls": calls}))
    return 0


if __name__ == "__main__":
    zygote_main(run_job)
