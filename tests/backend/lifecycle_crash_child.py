"""Child process of test_lifecycle_crash.py: runs a rename or a cascade drop and dies on the way.

Imports lance and the backend once without using them, then reads one JSON job per line on
stdin; each job runs in a fresh ``fork()`` (no job pays the imports again, none inherits a
started lance runtime). Jobs:

* ``{"mode": "count", "op": ..., "root": ..., "log": ...}``: run to the end, write every
  checkpoint of ``backend.local.batch``'s fault hook ``[index, step, phase]`` to ``log``;
* ``{"mode": "kill", "kill_at": k, ...}``: SIGKILL itself at checkpoint ``k``;
* ``{"mode": "timer", "delay_ms": d, ...}``: SIGKILL itself ``d`` ms after the namespace is
  opened (the count job's log gives the operation's own time), wherever it is (inside Lance's own commit of the catalog, between file writes...);

``op`` is ``"rename"`` (table ``a$t`` -> ``b$moved``), ``"cascade"`` (namespace ``top``) or
``"open"`` (only ``backend.connect``, which recovers; with ``"timer"``: killed meanwhile).
Each job answers one JSON line: ``{"signal": n}`` or ``{"exit": code}``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LANCE_LOG", "error")
warnings.filterwarnings("ignore", message="lance is not fork-safe")

import backend  # noqa: E402
from backend.local import batch  # noqa: E402
from backend.services import lifecycle  # noqa: E402
from tests.support import zygote_main  # noqa: E402


def run_job(job: dict) -> int:
    calls: list[list] = []
    mode = job["mode"]

    def hook(step: int, phase: str, detail: str) -> None:
        calls.append([len(calls) + 1, step, phase])
        if mode == "kill" and len(calls) == job["kill_at"]:
            os.kill(os.getpid(), signal.SIGKILL)

    if mode == "timer":
        timer = threading.Timer(job["delay_ms"] / 1000, os.kill, (os.getpid(), signal.SIGKILL))
        timer.daemon = True
        timer.start()
    if job["op"] == "open":
        batch.set_fault_hook(hook)
        backend.connect(job["root"])  # recovers
        return 0
    ns = backend.connect(job["root"])
    batch.set_fault_hook(hook)
    t0 = time.perf_counter()
    if job["op"] == "rename":
        lifecycle.rename_table(ns, ["a", "t"], "moved", ["b"])
    else:
        lifecycle.drop_namespace(ns, ["top"], cascade=True)
    if job.get("log"):
        ms = (time.perf_counter() - t0) * 1000
        Path(job["log"]).write_text(json.dumps({"calls": calls, "ms": ms}))
    return 0


if __name__ == "__main__":
    zygote_main(run_job)
