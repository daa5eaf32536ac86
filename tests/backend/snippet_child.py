"""Child process of test_snippets_run.py: runs Copy-as-Python snippets as pasted, each in a fresh
``fork()`` of one warm interpreter.

Imports what the snippets import first (``backend``, ``lance_namespace``, ``lance``, numpy,
pyarrow) once, without using them, then reads one JSON job per line on stdin:
``{"code": ..., "env": {...}, "out": path, "err": path}``. Each job runs in a fresh fork, as
``python -c code`` would run it: the job's whole environment, stdin from ``/dev/null``, stdout
and stderr to the job's files, the code compiled as ``<string>`` and run as ``__main__`` with
fresh globals and ``sys.argv == ["-c"]``. Nothing the snippet uses is predefined (a missing
import fails as pasted); only the modules' import is paid once. An uncaught exception prints
its traceback and exits 1; a job still running after :data:`TIMEOUT_S` is ended by SIGALRM.
Each job answers one JSON line: ``{"signal": n}`` or ``{"exit": code}``.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LANCE_LOG", "error")
warnings.filterwarnings("ignore", message="lance is not fork-safe")

import lance  # noqa: E402, F401
import lance_namespace  # noqa: E402, F401
import numpy  # noqa: E402, F401
import pyarrow  # noqa: E402, F401

import backend  # noqa: E402, F401
from tests.support import zygote_main  # noqa: E402

TIMEOUT_S = 120


def _redirect(fd: int, path: str, flags: int) -> None:
    target = os.open(path, flags, 0o600)
    os.dup2(target, fd)
    os.close(target)


def run_job(job: dict) -> int:
    signal.alarm(TIMEOUT_S)
    os.environ.clear()
    os.environ.update(job["env"])
    _redirect(0, os.devnull, os.O_RDONLY)
    _redirect(1, job["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    _redirect(2, job["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    sys.argv = ["-c"]
    code = 0
    try:
        exec(compile(job["code"], "<string>", "exec"), {"__name__": "__main__"})
    except SystemExit as stop:
        if isinstance(stop.code, int) or stop.code is None:
            code = stop.code or 0
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 - reported as python -c reports it
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return code


if __name__ == "__main__":
    zygote_main(run_job)
