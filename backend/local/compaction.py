"""Compaction in lance's three steps (``lance.optimize.Compaction``): plan the tasks at one
version, run each task (it writes new data files, commits nothing), commit every rewrite at
once. A compaction run this way

* reports progress per task (``{"stage": "compact", "completed": i, "total": n, ...}``);
* can be stopped between tasks: the progress callable raises ``errors.OperationStopped``,
  nothing is committed (the files of the tasks done stay unreferenced until a cleanup removes
  them, as lance leaves them after any failed compaction);
* can be resumed: each event carries a ``checkpoint`` (the plan's version, the options and
  the rewrite of every task done, lance's own ``RewriteResult.json``). Given that checkpoint
  again (``resume``), the plan is made anew at the same version (the same tasks: the plan
  depends only on the version and the options), the tasks already done are not run again,
  and the commit is made on that version, so lance's conflict resolution judges what other
  writers committed since (a delete on a rewritten fragment: the commit is refused). A
  checkpoint that no longer applies (the version was cleaned up, the options differ, the
  commit conflicts) is dropped and the compaction runs from the start at the latest version;
  the outcome says which (``resumed_tasks``, ``resume_note``).
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Callable, Mapping
from typing import Any, cast

import lance
from lance.optimize import Compaction, RewriteResult

from ..errors import OperationStopped, is_commit_conflict

Progress = Callable[[dict[str, Any]], None]

# lance's CompactionOptions a console compaction may set, with their kind.
OPTION_TYPES: dict[str, type] = {
    "target_rows_per_fragment": int,
    "max_rows_per_group": int,
    "max_bytes_per_file": int,
    "materialize_deletions": bool,
    "materialize_deletions_threshold": float,
    "num_threads": int,
}


def _ids(fragments: Any) -> tuple[int, ...]:
    return tuple(sorted(int(f.id) for f in fragments))


def _resumable(
    resume: Mapping[str, Any] | None, options: dict[str, Any], open_at: Any
) -> tuple[Any, dict[tuple[int, ...], Any], str | None]:
    """The dataset at the checkpoint's version and the rewrites already done, by the ids of
    the fragments they replace; ``(None, {}, why)`` when the checkpoint does not apply."""
    if not resume:
        return None, {}, None
    if dict(resume.get("options") or {}) != options:
        return None, {}, "the checkpoint was made with other compaction options"
    try:
        version = int(resume["read_version"])
        read = RewriteResult.from_json  # type: ignore[attr-defined]
        done = [read(text) for text in resume.get("done") or []]
    except (KeyError, TypeError, ValueError) as exc:
        return None, {}, f"the checkpoint cannot be read ({exc})"
    try:
        ds = open_at(version)
    except Exception:  # noqa: BLE001 - a version cleaned up since: start afresh
        return None, {}, f"version {version} of the plan is gone (cleaned up)"
    return ds, {_ids(r.original_fragments): r for r in done}, None


def compact(
    ds: lance.LanceDataset,
    *,
    options: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    resume: Mapping[str, Any] | None = None,
    open_at: Callable[[int], lance.LanceDataset] | None = None,
) -> dict[str, Any]:
    """Compact ``ds`` (its latest version) task by task; see the module docstring. Returns
    lance's metrics and what was resumed. ``open_at(version)`` opens the table at a version
    (default: ``lance.dataset(ds.uri, version=...)``)."""
    opts = {k: v for k, v in dict(options or {}).items() if v is not None}
    opener = open_at or (lambda v: lance.dataset(ds.uri, version=v))
    base, done, note = _resumable(resume, opts, opener)
    try:
        return _run(base or ds, opts, done, progress, note)
    except OperationStopped:
        raise
    except Exception as exc:
        if base is None or not is_commit_conflict(exc):
            raise
        why = "the table changed since the plan in a way the earlier rewrites cannot follow"
        return _run(ds, opts, {}, progress, why)


def _run(
    ds: lance.LanceDataset,
    options: dict[str, Any],
    done: dict[tuple[int, ...], Any],
    progress: Progress | None,
    note: str | None,
) -> dict[str, Any]:
    plan = Compaction.plan(ds, cast(Any, options))
    tasks = list(plan.tasks)
    total = len(tasks)
    results: list[Any] = []
    reused = 0
    pending = []
    for task in tasks:
        found = done.get(_ids(task.fragments))
        if found is not None:
            results.append(found)
            reused += 1
        else:
            pending.append(task)
    if done and not reused:
        note = note or "no task of the checkpoint matches the plan"
    checkpoint: dict[str, Any] = {
        "read_version": int(plan.read_version),
        "options": options,
        "done": [r.json() for r in results],
    }

    def report(stage: str) -> None:
        if progress is not None:
            progress(
                {
                    "event": "progress",
                    "stage": stage,
                    "completed": len(results),
                    "total": total,
                    "unit": "tasks",
                    "checkpoint": dict(checkpoint, done=list(checkpoint["done"])),
                }
            )

    report("compact")
    workers = max(1, min(int(options.get("num_threads") or os.cpu_count() or 1), len(pending)))
    if pending:
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(task.execute, ds) for task in pending]
            try:
                for future in concurrent.futures.as_completed(futures):
                    result = future.result()
                    results.append(result)
                    checkpoint["done"].append(result.json())  # type: ignore[attr-defined]
                    report("compact")
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
    metrics = Compaction.commit(ds, results) if results else None
    return {
        "read_version": int(plan.read_version),
        "tasks": total,
        "resumed_tasks": reused,
        "resume_note": note,
        "fragments_removed": int(getattr(metrics, "fragments_removed", 0) or 0),
        "fragments_added": int(getattr(metrics, "fragments_added", 0) or 0),
        "files_removed": int(getattr(metrics, "files_removed", 0) or 0),
        "files_added": int(getattr(metrics, "files_added", 0) or 0),
    }
