"""Index builds on the local backend, through the Lance dataset API.

pylance's namespace ``create_table_index`` ignores every vector build parameter (IVF_PQ is
built with 1 partition and 16 sub-vectors whatever was asked); the dataset API honours them
all and reports build progress. So every build (vector, FTS, scalar) goes through
``LanceDataset.create_index`` / ``create_scalar_index``, checked first against
``backend.rules.index_rules`` with the table's real schema and row count.

Every build writes its files under ``_indices/<uuid>`` with a uuid chosen here
(``index_uuid``): when the build fails, that one directory (the partial build) is removed,
and no other index's files are touched (:func:`remove_partial_build`).

A build stops when its progress callable raises ``errors.OperationStopped`` (a cancel, a time
limit: ``build_jobs``): lance ends the build at its next progress event, nothing is committed
and the partial directory is removed like a failed build's.

A vector request that leaves ``num_partitions`` (and, for PQ types, ``num_sub_vectors``)
empty gets the console's documented choices (``index_rules.chosen_build_params``); the values
chosen come back in the response's ``context`` (``chosen.<param>``) and as a progress event.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lance
from lance_namespace import CreateTableIndexRequest, CreateTableIndexResponse
from lance_namespace.errors import ErrorCode

from backend.rules import index_rules as rules
from backend.rules.columns import ColumnInfo, find_column
from backend.rules.index_rules import CHOSEN_PREFIX

from ..errors import OperationStopped, invalid, make
from ..locations import to_local_path
from .batch.objects import Store

ProgressCallback = Callable[[dict[str, Any]], None]


def _progress_adapter(progress: ProgressCallback | None) -> Callable[[Any], None] | None:
    if progress is None:
        return None

    def callback(event: Any) -> None:
        try:
            progress(
                {
                    "event": event.event,
                    "stage": event.stage,
                    "completed": event.completed,
                    "total": event.total,
                    "unit": event.unit,
                    "fraction": event.fraction,
                }
            )
        except OperationStopped:
            raise  # a cancel or a time limit: lance stops the build at this event
        except Exception as exc:  # a broken progress display must not break the build
            warnings.warn(f"index progress callback failed: {exc!r}", RuntimeWarning, stacklevel=1)

    return callback


def _warn_if_partitions_reduced(ds: lance.LanceDataset, name: str, requested: int) -> None:
    """Lance trains fewer IVF partitions than asked when rows are scarce (PQ needs about
    ``2**num_bits`` rows per partition); say so instead of letting it pass silently."""
    try:
        segments = ds.stats.index_stats(name).get("indices") or []
        built = segments[0].get("num_partitions") if segments else None
    except Exception:  # noqa: BLE001 - stats are a courtesy here; the index itself was built
        return
    if isinstance(built, int) and built != requested:
        warnings.warn(
            f"index {name!r}: lance built {built} IVF partition(s) instead of {requested} "
            f"(the table has {ds.count_rows()} rows, too few to train {requested} partitions)",
            UserWarning,
            stacklevel=5,
        )


# -- what was asked for each index (the Search & tune page compares it with what lance used) ---------
REQUESTS_FILE = "_console/index_requests.json"
_MEMORY_REQUESTS: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
_REQUESTS_LOCK = threading.Lock()


def _requests_path(root: Path) -> Path:
    return root / REQUESTS_FILE


def record_request(
    root: Path | None, root_uri: str, table: str, name: str, params: dict[str, Any]
) -> None:
    """Remember the build parameters asked for (and chosen) for index ``name`` of ``table``."""
    with _REQUESTS_LOCK:
        if root is None:
            _MEMORY_REQUESTS.setdefault(root_uri, {}).setdefault(table, {})[name] = params
            return
        path = _requests_path(root)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        data.setdefault(table, {})[name] = params
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)


def recorded_requests(root: Path | None, root_uri: str, table: str) -> dict[str, dict[str, Any]]:
    """Index name -> the build parameters the console asked for, for ``table``."""
    with _REQUESTS_LOCK:
        if root is None:
            return dict(_MEMORY_REQUESTS.get(root_uri, {}).get(table, {}))
        try:
            data = json.loads(_requests_path(root).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
    found = data.get(table) if isinstance(data, dict) else None
    return dict(found) if isinstance(found, dict) else {}


@dataclass(frozen=True)
class BuildPlan:
    """A create-index request checked against the table (:func:`check_build`): what to build."""

    index_type: str  # the console's name (FTS, BTREE, IVF_PQ ...)
    category: str  # vector | fts | scalar
    column: ColumnInfo
    name: str
    num_rows: int | None  # vector builds only
    chosen: dict[str, int]  # the parameters the console fills in (vector builds)


def check_build(ds: lance.LanceDataset, req: CreateTableIndexRequest, *, table: str) -> BuildPlan:
    """Check ``req`` against the dataset (the branch's, for a request on a branch) before
    anything is written: the column exists and fits the index type (``index_rules.column_problems``), the name is free; the
    parameters the console chooses for an empty vector request. Every executor checks so."""
    index_type = rules.normalize_index_type(req.index_type) or ""
    column = find_column(ds.schema, req.column)
    if column is None:
        raise make(
            ErrorCode.TABLE_COLUMN_NOT_FOUND,
            f"column {req.column!r} not found in table {table}; columns: "
            + ", ".join(ds.schema.names),
        )
    category = rules.index_category(index_type)
    num_rows = ds.count_rows() if category == "vector" else None
    problems = rules.column_problems(req, column, num_rows)
    if problems:
        raise invalid(f"cannot build {index_type} on column {req.column!r}: " + " ".join(problems))
    name = req.name or rules.default_index_name(req.column)
    if any(i.name == name for i in ds.describe_indices()):
        raise make(
            ErrorCode.TABLE_INDEX_ALREADY_EXISTS, f"index {name!r} already exists on table {table}"
        )
    chosen = rules.chosen_build_params(req, column.dim, num_rows) if category == "vector" else {}
    return BuildPlan(index_type, category, column, name, num_rows, chosen)


def build_index(
    ds: lance.LanceDataset,
    req: CreateTableIndexRequest,
    *,
    table: str,
    storage_options: dict[str, str] | None,
    progress: ProgressCallback | None,
) -> CreateTableIndexResponse:
    """Check ``req`` against the dataset (:func:`check_build`) and build the index (see the
    module docstring)."""
    plan = check_build(ds, req, table=table)
    index_type, category, column, name = plan.index_type, plan.category, plan.column, plan.name
    num_rows, chosen = plan.num_rows, plan.chosen
    branch = req.branch if req.branch and req.branch != "main" else None
    callback = _progress_adapter(progress)
    segment = str(uuid.uuid4())  # the build's directory: _indices/<segment>
    if category == "vector":
        if chosen and progress is not None:
            progress({"event": "params", "stage": "parameters chosen", "chosen": dict(chosen)})
        kwargs: dict[str, Any] = {
            "name": name,
            "metric": rules.normalize_distance(req.distance_type) or "l2",
            "replace": False,
            "storage_options": storage_options or None,
            "progress_callback": callback,
            "index_uuid": segment,
        }
        for field, keyword in rules.LANCE_VECTOR_KWARGS.items():
            value = chosen.get(field, getattr(req, field))
            if value is not None:
                kwargs[keyword] = value
        with _partial_build_removed(ds, segment, storage_options):
            if builds_in_child(ds, num_rows or 0, column.dim):
                kwargs.pop("progress_callback")
                kwargs.pop("storage_options")
                _build_in_child(
                    ds, req.column, index_type, kwargs, progress, storage_options, branch
                )
                ds = ds.checkout_version(ds.latest_version)
            else:
                ds.create_index(req.column, index_type, **kwargs)
        partitions = chosen.get("num_partitions", req.num_partitions)
        if partitions is not None:
            _warn_if_partitions_reduced(ds, name, partitions)
    else:
        fts = {p: getattr(req, p) for p in rules.FTS_PARAMS if getattr(req, p) is not None}
        with _partial_build_removed(ds, segment, storage_options):
            ds.create_scalar_index(
                req.column,
                rules.lance_index_type(index_type),  # type: ignore[arg-type]
                name=name,
                replace=False,
                progress_callback=callback,
                index_uuid=segment,
                **fts,
            )
    txn = ds.read_transaction(ds.version)
    context = {f"{CHOSEN_PREFIX}{k}": str(v) for k, v in chosen.items()} or None
    return CreateTableIndexResponse(transaction_id=getattr(txn, "uuid", None), context=context)


# -- builds in a child process (backend.local.index_child) ---------------------------------------
# A vector build of at least this many values (rows x dimensions) runs in a child process,
# without lance's progress callback (see index_child's docstring); smaller builds take
# seconds and keep the callback. LANCE_CONSOLE_BUILD_PROCESS: "child" or "thread" forces one.
CHILD_MIN_VALUES = 10_000_000
CHILD_STOP_GRACE_SECONDS = 5.0
HEARTBEAT_SECONDS = 1.0


def builds_in_child(ds: lance.LanceDataset, num_rows: int, dim: int | None) -> bool:
    """Whether a vector build of ``ds`` runs in a child process (a table in memory cannot)."""
    if str(ds.uri).startswith("memory://"):
        return False
    forced = os.environ.get("LANCE_CONSOLE_BUILD_PROCESS", "").strip().lower()
    if forced in ("child", "thread"):
        return forced == "child"
    return num_rows * (dim or 1) >= CHILD_MIN_VALUES


_KMEANS = re.compile(r"KMeans training: (?:converged at )?iteration (\d+) / (\d+)")
_MERGING = re.compile(r"merging (\d+) partitions( done)?")
# lance's log line (its text, without the timestamp and module) -> the stage it starts
_STAGES: tuple[tuple[str, str], ...] = (
    ("Loading training data for IVF", "load_ivf_training_data"),
    ("Start to train IVF model", "train_ivf"),
    ("loading training data for quantizer", "load_quantizer_training_data"),
    ("Start to train quantizer", "train_quantizer"),
    ("shuffle column", "shuffle"),
    ("merge ", "merge_partitions"),
)


class LogProgress:
    """Progress events from lance's INFO log lines of a build (one object per build): the
    stage each line starts, and within ``train_ivf`` and ``train_quantizer`` the k-means
    iterations (of ``num_sub_vectors`` trainings for the quantizer)."""

    def __init__(self, num_sub_vectors: int | None = None):
        self.stage: str | None = None
        self.sub_vectors = max(1, int(num_sub_vectors or 1))
        self.trained = 0  # quantizer trainings finished

    def event(self, line: str) -> dict[str, Any] | None:
        text = line.split("] ", 1)[-1].strip()
        for start, stage in _STAGES:
            if text.startswith(start) and stage != self.stage:
                self.stage = stage
                return {"event": "start", "stage": stage, "completed": 0, "total": None}
        found = _KMEANS.search(text)
        if found and self.stage == "train_ivf":
            done, total = int(found.group(1)), int(found.group(2))
            if "converged" in text:
                done = total
            return {"event": "progress", "stage": "train_ivf", "completed": done, "total": total}
        if found and self.stage == "train_quantizer" and "converged" in text:
            self.trained = min(self.trained + 1, self.sub_vectors)
            return {
                "event": "progress",
                "stage": "train_quantizer",
                "completed": self.trained,
                "total": self.sub_vectors,
                "unit": "sub-vectors",
            }
        found = _MERGING.search(text)
        if found:
            parts = int(found.group(1))
            return {
                "event": "complete" if found.group(2) else "progress",
                "stage": "merge_partitions",
                "completed": parts if found.group(2) else 0,
                "total": parts,
                "unit": "partitions",
            }
        return None


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["LANCE_LOG"] = "info"  # lance's log lines are the progress of a child build
    project = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (project, env.get("PYTHONPATH")) if p)
    return env


def _build_in_child(
    ds: lance.LanceDataset,
    column: str,
    index_type: str,
    kwargs: dict[str, Any],
    progress: ProgressCallback | None,
    storage_options: dict[str, str] | None,
    branch: str | None = None,
) -> None:
    """Build the index in ``backend.local.index_child`` and wait for it, passing lance's log
    lines on as progress events (on ``ds``'s ``branch``; ``None``: main). ``progress``
    raising ``OperationStopped`` (a cancel, a time limit) ends the child: nothing is committed
    unless the child had committed already."""
    job = {
        "uri": str(ds.uri),
        "branch": branch,
        "version": int(ds.version),
        "storage_options": storage_options or None,
        "column": column,
        "index_type": index_type,
        "kwargs": kwargs,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "backend.local.index_child"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_child_env(),
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    lines: queue.Queue[str | None] = queue.Queue()
    tail: list[str] = []

    def read_log(stream: Any) -> None:
        for raw in stream:
            lines.put(raw)
        lines.put(None)

    reader = threading.Thread(target=read_log, args=(proc.stderr,), daemon=True)
    reader.start()
    proc.stdin.write(json.dumps(job))
    proc.stdin.close()
    parser = LogProgress(kwargs.get("num_sub_vectors"))
    last_beat = 0.0
    try:
        log_open = True
        while log_open or proc.poll() is None:
            try:
                raw = lines.get(timeout=0.25)
            except queue.Empty:
                raw = ""
            if raw is None:
                log_open = False
                raw = ""
            if raw:
                tail = [*tail[-19:], raw.rstrip()]
                event = parser.event(raw)
                if event is not None and progress is not None:
                    progress({**event, "source": "lance log"})
            if progress is not None and time.monotonic() - last_beat >= HEARTBEAT_SECONDS:
                last_beat = time.monotonic()
                progress({"event": "heartbeat", "stage": parser.stage})
    except BaseException:
        _end(proc)
        finished = _answer(proc.stdout.read())
        if finished is not None and finished.get("ok"):
            return  # committed before the stop reached it: the index stands
        raise
    answer = _answer(proc.stdout.read())
    if answer is None or not answer.get("ok"):
        raise _child_error(answer, tail, proc.returncode)


def _end(proc: subprocess.Popen[str]) -> None:
    """End a child build: asked first, then killed."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(CHILD_STOP_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _answer(text: str) -> dict[str, Any] | None:
    for line in reversed(text.strip().splitlines()):
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict):
            return found
    return None


def _child_error(answer: dict[str, Any] | None, tail: list[str], code: int | None) -> Exception:
    """The child's failure as the exception lance would have raised in this process (the
    namespace boundary maps it), or a plain one naming how the child ended."""
    if answer is None:
        detail = "; ".join(tail[-3:])
        return RuntimeError(f"the index build process ended with code {code}: {detail}")
    kinds: dict[str, type[Exception]] = {
        "ValueError": ValueError,
        "OSError": OSError,
        "NotImplementedError": NotImplementedError,
    }
    return kinds.get(str(answer.get("type")), Exception)(str(answer.get("message")))


@contextlib.contextmanager
def _partial_build_removed(
    ds: lance.LanceDataset, segment: str, storage_options: dict[str, str] | None
) -> Iterator[None]:
    """Run a build; when it fails, remove what it wrote under ``_indices/<segment>``, and
    ``_indices`` itself on a file root when the build made it and it is left empty."""
    local = to_local_path(str(ds.uri))
    parent = local / "_indices" if local is not None else None
    parent_existed = parent is not None and parent.is_dir()
    try:
        yield
    except BaseException:
        with contextlib.suppress(Exception):  # the build's own error is the answer
            remove_partial_build(ds, segment, storage_options)
            if parent is not None and not parent_existed:
                parent.rmdir()  # only when empty: another build's files stay
        raise


def remove_partial_build(
    ds: lance.LanceDataset, segment: str, storage_options: dict[str, str] | None
) -> bool:
    """Remove ``_indices/<segment>`` of the table when no index of its latest version uses it
    (a failed build; the uuid was chosen for this build, so the files are the console's own).
    Only that directory is touched. File roots and object stores (``s3://``, ``gs://``,
    ``az://``); a ``memory://`` table keeps its files in this process only, where nothing reads
    them. ``True`` when something was removed."""
    latest = ds.checkout_version(ds.latest_version)
    if any(s.uuid == segment for i in latest.describe_indices() for s in i.segments):
        return False  # committed after all: a real index
    uri = str(ds.uri)
    local = to_local_path(uri)
    if local is not None:
        path = local / "_indices" / segment
        if not path.is_dir():
            return False
        shutil.rmtree(path)
        return True
    if uri.startswith("memory://"):
        return False
    store = Store(uri, dict(storage_options or {}))
    keys = store.list(f"_indices/{segment}/")
    for key in keys:
        store.delete(key)
    return bool(keys)
