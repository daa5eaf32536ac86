"""The second process of the demo tools (``backend.demo.txn_faults``): one job, read as JSON
on stdin, answered as JSON lines on stdout.

* ``{"action": "commit", "root", "storage_options", "request", "fault"}``: commit the batch
  with the fault hook installed; prints ``{"fired": "<phase> <detail>", "step", "pid",
  "transaction_id"}`` when the fault fires (then dies, or the batch rolls back), and
  ``{"done": true, "transaction_id", "error_class", "error", "pid"}`` when the commit returns
  or raises;
* ``{"action": "append", "root", "storage_options", "location", "rows"}``: append copies of
  the table's first ``rows`` rows through lance directly; prints ``{"done": true, "version",
  "rows"}`` (or ``"error"``).
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any


def _say(**answer: Any) -> None:
    print(json.dumps(answer), flush=True)


def _commit(job: dict[str, Any]) -> None:
    from backend.spec.client_package import defer_api_modules

    defer_api_modules()  # before lance_namespace's first import: its client's models alone

    from lance_namespace import BatchCommitTablesRequest

    from backend.demo.txn_faults import Fault, hook_for
    from backend.local import LocalNamespace, batch

    ns = LocalNamespace(job["root"], storage_options=job.get("storage_options") or None)
    request = BatchCommitTablesRequest.model_validate(job["request"])
    fault = Fault(**job["fault"])
    seen: dict[str, str] = {}

    def on_fire(step: int, phase: str, detail: str) -> None:
        _say(
            fired=f"{phase} {detail}".strip(),
            step=step,
            pid=os.getpid(),
            transaction_id=seen.get("txn"),
        )

    fire = hook_for(fault, request, on_fire)

    def hook(step: int, phase: str, detail: str) -> None:
        if phase.startswith("begin.") and detail:
            seen.setdefault("txn", detail)
        fire(step, phase, detail)

    batch.set_fault_hook(hook)
    try:
        answer = ns.batch_commit_tables(request)
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        found = re.search(r"\bbatch-[0-9a-f]{32}\b", str(exc))
        _say(
            done=True,
            pid=os.getpid(),
            transaction_id=found.group(0) if found else seen.get("txn"),
            error_class=type(exc).__name__,
            error=str(exc),
        )
        return
    _say(done=True, pid=os.getpid(), transaction_id=answer.transaction_id)


def _append(job: dict[str, Any]) -> None:
    import lance

    so = job.get("storage_options") or None
    try:
        ds = lance.dataset(job["location"], storage_options=so)
        rows = ds.to_table(limit=int(job["rows"]))
        if rows.num_rows == 0:
            _say(done=True, error="the table has no rows to copy")
            return
        new = lance.write_dataset(rows, job["location"], mode="append", storage_options=so)
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        _say(done=True, error=f"{type(exc).__name__}: {exc}")
        return
    _say(done=True, version=int(new.version), rows=rows.num_rows)


def main() -> int:
    job = json.loads(sys.stdin.read())
    if job.get("action") == "commit":
        _commit(job)
    elif job.get("action") == "append":
        _append(job)
    else:
        _say(done=True, error=f"unknown action {job.get('action')!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
