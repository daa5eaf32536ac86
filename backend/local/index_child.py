"""An index build in a child process (``python -m backend.local.index_child``), for the builds
that ``backend.local.indexes`` runs away from the console's process.

pylance 14.0.2 can hang in ``create_index`` when it is given a progress callback (seen on an
IVF_PQ build of 400k x 128 vectors with 632 partitions: stuck in ``train_ivf`` at near-zero
CPU, while the same call without a callback finishes in seconds). A large vector build
therefore runs here, without a callback: the parent reads lance's own log lines from this
process's standard error as its progress (``indexes.log_event``), and can stop the build by
ending this process, which a thread in the console's process cannot do.

The job arrives as one JSON object on standard input (so storage options and their secrets
never appear on a command line): ``uri``, ``version``, ``storage_options``, ``column``,
``index_type``, ``kwargs`` (``create_index``'s keywords) and ``branch`` (``None``: main). The answer is one JSON line on
standard output: ``{"ok": true, "version": N}`` or ``{"ok": false, "type": ..., "message":
...}``.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def run(job: dict[str, Any]) -> dict[str, Any]:
    import lance

    options = job.get("storage_options") or None
    branch = job.get("branch")
    if branch:  # the branch's version (lance opens main by URI)
        main = lance.dataset(job["uri"], storage_options=options)
        ds = main.checkout_version((branch, job.get("version")))
    else:
        ds = lance.dataset(job["uri"], version=job.get("version"), storage_options=options)
    try:
        ds.create_index(job["column"], job["index_type"], **job.get("kwargs", {}))
    except Exception as exc:  # noqa: BLE001 - the parent raises it in the console's terms
        return {"ok": False, "type": type(exc).__name__, "message": str(exc)}
    latest = lance.dataset(job["uri"], storage_options=options)
    if branch:
        latest = latest.checkout_version((branch, None))
    return {"ok": True, "version": int(latest.version)}


def main() -> int:
    answer = run(json.loads(sys.stdin.read()))
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
    return 0 if answer["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
