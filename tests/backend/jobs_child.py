"""Child process of test_jobs.py: one job of ``backend.services.jobs``, held where the test
says, in a process of its own (the test kills it by pid, or cancels the job from its own
process).

argv[1] is a JSON object: ``root``, ``options`` (storage options), ``kind``, ``table``,
``params``, ``ready`` (a file path) and ``hold``:

* ``"build"``: the index build waits at each progress event until the job is cancelled;
* ``"compact"``: the compaction stops moving after ``hold_at`` tasks (the tasks done are in
  the job's checkpoint) and waits to be killed;
* ``"none"``: not held.

Once the job is held (or, unheld, once submitted) ``ready`` gets ``{"job": id, "pid": pid}``;
then the child waits for the job to end and exits 0.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LANCE_LOG", "error")
warnings.filterwarnings("ignore")

import backend  # noqa: E402
from backend.local import compaction  # noqa: E402
from backend.services import build_jobs, jobs  # noqa: E402

HOLD_SECONDS = 60.0


def main() -> int:
    spec = json.loads(sys.argv[1])
    ready = Path(spec["ready"])
    held: dict[str, Any] = {}

    def say_ready() -> None:
        if not ready.exists():
            tmp = ready.with_suffix(".tmp")
            tmp.write_text(json.dumps({"job": held["job"], "pid": os.getpid()}))
            os.replace(tmp, ready)

    if spec["hold"] == "build":
        original = build_jobs.BuildRun._record

        def record(self: Any, event: Any) -> None:
            original(self, event)
            while "job" not in held:
                time.sleep(0.01)
            say_ready()
            deadline = time.time() + HOLD_SECONDS
            while not self.job.cancel_requested and time.time() < deadline:
                time.sleep(0.02)

        build_jobs.BuildRun._record = record  # type: ignore[method-assign]
    elif spec["hold"] == "compact":
        original_compact = compaction.compact

        def compact(ds: Any, **kwargs: Any) -> Any:
            report = kwargs["progress"]

            def progress(event: dict[str, Any]) -> None:
                report(event)
                if event.get("completed", 0) >= spec["hold_at"]:
                    while "job" not in held:
                        time.sleep(0.01)
                    say_ready()
                    time.sleep(HOLD_SECONDS)

            return original_compact(ds, **{**kwargs, "progress": progress})

        compaction.compact = compact  # type: ignore[assignment]

    ns = backend.connect(spec["root"], storage_options=spec.get("options") or None)
    job = jobs.submit(ns, spec["kind"], spec["table"], spec["params"])
    held["job"] = job.id
    if spec["hold"] == "none":
        say_ready()
    jobs.wait(ns, job.id, timeout=HOLD_SECONDS * 2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
