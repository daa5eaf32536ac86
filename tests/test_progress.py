"""backend.progress: one bar for every long operation's progress events (real operations on a
real namespace; the bar writes to a buffer)."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pytest
from lance_namespace import CreateNamespaceRequest, CreateTableIndexRequest

import backend
from backend import progress
from backend.services import frames, imports, index_overview
from backend.services.tuning.builds import build_ab
from backend.services.tuning.measure import recall
from backend.services.tuning.sweeps import sweep

ROWS = 400
DIM = 8


@pytest.fixture
def points(tmp_path):
    ns = backend.connect(str(tmp_path / "root"))
    ns.create_namespace(CreateNamespaceRequest(id=["docs"]))
    rng = np.random.default_rng(1)
    vec = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(ROWS * DIM, dtype=np.float32)), DIM)
    frames.create_table(ns, ["docs", "pts"], pa.table({"id": range(ROWS), "vec": vec}))
    return ns


def bar(**options) -> progress.ProgressBar:
    return progress.progress_bar(file=io.StringIO(), mininterval=0, **options)


def recording(callback):
    seen: list = []

    def record(*args):
        seen.append(args)
        callback(*args)

    return record, seen


def test_counts_fractions_and_events() -> None:
    counts = bar(desc="rows")
    counts(10, None)
    counts(25, 40)
    assert (counts.n, counts.total) == (25, 40)
    staged = bar(desc="A/B")
    staged("building a", 0.25)
    assert staged.n == 250 and staged.stage == "building a"
    staged("done", 1.0)
    assert staged.n == progress.FRACTION_STEPS
    events = bar(desc="index")
    events({"event": "params", "chosen": {"num_partitions": 4}})
    events({"stage": "train_ivf", "completed": 3, "total": 4})
    assert events.n == 750 and events.stage == "train_ivf"
    assert "chosen num_partitions=4" in events.bar.fp.getvalue()


def test_recall_and_sweep_drive_a_bar(points) -> None:
    ns = points
    ns.create_table_index(
        CreateTableIndexRequest(id=["docs", "pts"], column="vec", index_type="IVF_FLAT")
    )
    shown = bar(desc="recall")
    callback, seen = recording(shown)
    result = recall(ns, ["docs", "pts"], column="vec", k=5, sample=12, progress=callback)
    assert len(result.per_query) == 12
    # each exact search (untimed, then timed), then each ANN search (the same)
    assert seen == [(i, 48) for i in range(1, 49)]
    assert (shown.n, shown.total) == (48, 48)
    swept = bar(desc="sweep")
    sweep(
        ns, ["docs", "pts"], column="vec", k=5, sample=8, grid={"nprobes": [1, 2, 3]},
        progress=swept,
    )  # fmt: skip
    assert (swept.n, swept.total) == (3, 3)


def test_index_build_and_import_drive_a_bar(points) -> None:
    ns = points
    shown = bar(desc="IVF_FLAT")
    callback, seen = recording(shown)
    index_overview.create_index(
        ns,
        CreateTableIndexRequest(
            id=["docs", "pts"], column="vec", index_type="IVF_FLAT", num_partitions=2
        ),
        progress=callback,
    )
    assert seen and all(isinstance(e[0], dict) for e in seen)  # lance's own events
    assert shown.events == len(seen) and shown.stage is not None
    csv = "id,name\n" + "".join(f"{i},n{i}\n" for i in range(30))
    rows = bar(desc="import")
    imports.import_table(ns, ["docs", "names"], csv.encode(), "csv", progress=rows)
    assert rows.n == 30


def test_build_ab_drives_a_bar(points) -> None:
    shown = bar(desc="A/B")
    callback, seen = recording(shown)
    frame = build_ab(
        points, ["docs", "pts"], column="vec", configs=[{"index_type": "IVF_FLAT",
        "num_partitions": 2}], sample_rows=ROWS, queries=5, k=5, progress=callback,
    )  # fmt: skip
    assert len(frame) == 1
    assert seen[0][1] == 0.0 and seen[-1] == ("done", 1.0)
    assert shown.n == progress.FRACTION_STEPS
