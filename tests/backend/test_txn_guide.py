"""The transaction demo's script and reader (``backend.demo.txn_guide``,
``table_watch.Watcher``): the background reader sees no mixed state over publishes, its chart
data says what each poll saw, the guide's changes are computed from the tables' own data
(checked with pyarrow), its steps run only in order, and a concurrent writer's table is left
out of the reader's judgement.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from lance_namespace import CreateNamespaceRequest
from lance_namespace.errors import ConcurrentModificationError, InvalidInputError

import backend
from backend.demo import txn_faults as tf
from backend.demo import txn_guide as tg
from backend.services import batch_builder as bb
from backend.services import charts, table_watch
from backend.services.search.query import iter_rows
from tests.support import create_table, demo_copy

TABLES = [["shop", name] for name in ("orders", "stock", "ledger")]


def rows(start: int, n: int) -> pa.Table:
    return pa.table(
        {"id": pa.array(range(start, start + n), pa.int64()), "qty": pa.array([1] * n, pa.int32())}
    )


@pytest.fixture
def shop(tmp_path: Path) -> Any:
    root = tmp_path / "root"
    root.mkdir()
    ns = backend.connect(str(root))
    ns.create_namespace(CreateNamespaceRequest(id=["shop"]))
    for t in TABLES:
        create_table(ns, t, rows(0, 5))
    return ns


def test_a_background_reader_sees_no_mixed_state(shop: Any) -> None:
    """Five publishes of three tables, each staging a different row count, watched by one
    reader thread: every poll is one state (versions all before or all after each batch)."""
    ns = shop
    reader = table_watch.Watcher(ns, TABLES, interval=0.005).start(first=3)
    published: list[dict[tuple[str, ...], tuple[int, int]]] = []
    for i in range(5):
        staged = [bb.stage_change(ns, t, append=rows(100 * i, j + 1)) for j, t in enumerate(TABLES)]
        operations = [bb.staged_op(s) for s in staged]
        reader.mark(f"batch {i}")
        bb.commit(ns, operations)
        published.append(tg.published_versions(operations))
        time.sleep(0.02)
    reader.stop_after(0.1)
    reader.join(10)
    assert not reader.alive and reader.error is None
    polls = reader.polls()
    assert len(polls) >= 10
    for batch in published:
        assert table_watch.mixed(polls, batch) == []
    # each poll saw one committed state: versions equal across tables, rows as published
    for p in polls:
        versions = {r.version for r in p.readings}
        assert len(versions) == 1, p
        n = versions.pop() - 1  # batches done
        assert [r.rows for r in p.readings] == [5 + sum(j + 1 for _ in range(n)) for j in range(3)]
    summary = table_watch.summarize(polls)
    assert summary.polls == len(polls) and summary.mixed == 0 and not summary.flat
    assert [m[1] for m in reader.marks()] == [f"batch {i}" for i in range(5)]


def poll(at: float, versions: list[int], rows_: list[int]) -> table_watch.Poll:
    readings = tuple(
        table_watch.Reading(tuple(t), v, n) for t, v, n in zip(TABLES, versions, rows_, strict=True)
    )
    return table_watch.Poll(at, readings, 1, True, True)


def test_states_frame_says_what_each_poll_saw() -> None:
    """Before, published, a table another writer changed; a mixed poll flagged (a reader that
    opened files directly could see one: the chart shows it in red)."""
    published = {tuple(TABLES[0]): (1, 2), tuple(TABLES[1]): (1, 2)}
    polls = [
        poll(100.0, [1, 1, 1], [5, 5, 5]),
        poll(100.5, [2, 1, 1], [6, 5, 5]),  # mixed: t0 published, t1 not
        poll(101.0, [2, 2, 2], [6, 7, 9]),  # t2 is not in the batch: another writer changed it
    ]
    frame = table_watch.states_frame(polls, published)
    assert list(frame["seconds"].unique()) == [0.0, 0.5, 1.0]
    assert list(frame["state"]) == [
        "before", "before", "before",
        "published", "before", "before",
        "published", "published", "other",
    ]  # fmt: skip
    assert list(frame["mixed"]) == [False] * 3 + [True] * 3 + [False] * 3
    assert table_watch.summarize(polls, published).mixed == 1
    fig = charts.reader_figure(
        frame, [(100.2, "commit started"), (100.3, "commit ended")], start=100.0
    )
    assert {t.name for t in fig.data} == {
        "as before the batch",
        "batch published",
        "changed by another writer",
    }
    labels = [a.text for a in fig.layout.annotations]
    assert labels == ["commit (100 ms)"]  # two marks close together: one label
    outlined = [w for t in fig.data for w in t.marker.line.width]
    assert sum(1 for w in outlined if w) == 3  # the mixed poll's three squares


def test_a_watch_ends_by_itself_and_says_why_it_stopped(shop: Any) -> None:
    reader = table_watch.Watcher(shop, TABLES, interval=0.01, max_seconds=0.3).start()
    reader.join(10)
    assert not reader.alive and len(reader.polls()) >= 2
    broken = table_watch.Watcher(object(), TABLES, interval=0.01).start(timeout=1)  # type: ignore[arg-type]
    broken.join(10)
    assert not broken.alive and broken.error and not broken.polls()


def test_the_guide_plans_from_the_tables_data(tmp_path: Path) -> None:
    ns = backend.connect(str(demo_copy(tmp_path / "demo")))
    tables = tg.pick_tables(ns)
    assert tables == [list(t) for t in tg.GUIDE_TABLES[:3]]
    append, update, delete = tg.plan_changes(ns, tables)
    before = [pa.concat_tables(list(iter_rows(ns, t))) for t in tables]
    # the append copies the first rows, renamed
    assert append.append is not None and append.append.num_rows == tg.APPEND_ROWS
    assert all(m.endswith(tg.SUFFIX) for m in append.append["module"].to_pylist())
    # the delete and the update filter on a value the table holds
    value = delete.delete.split("'")[1]
    held = pc.sum(pc.equal(before[2]["module"], value)).as_py()
    assert held >= 1
    round_ = tg.stage_round(ns, tables)
    assert [s.rows_after for s in round_.staged] == [
        before[0].num_rows + tg.APPEND_ROWS,
        before[1].num_rows,
        before[2].num_rows - held,
    ]
    audits = tg.audit(ns, round_.staged, round_.checks())
    assert all(a.passed and a.same_schema for a in audits)
    assert audits[2].counts["deleted"] == held
    updated = pc.sum(pc.equal(before[1]["module"], update.update[1].split("'")[1])).as_py()
    assert audits[1].counts["updated"] == updated
    # steps run in order only
    guide = tg.Guide(tables)
    with pytest.raises(InvalidInputError, match="is not next"):
        tg.advance(ns, guide, tg.PUBLISH)
    assert bb.discard_staged(ns, round_.staged) > 0


@pytest.mark.slow
def test_a_concurrent_writers_table_is_not_judged(shop: Any) -> None:
    ns = shop
    staged = [bb.stage_change(ns, t, append=rows(50, 2)) for t in TABLES]
    operations = [bb.staged_op(s) for s in staged]
    run = tg.conflict_watched(ns, operations, TABLES[0], after=0.2)
    run.watcher.join(10)
    assert isinstance(run.error, ConcurrentModificationError)
    assert tuple(TABLES[0]) not in run.published and len(run.published) == 2
    assert tg.only_the_writer_changed(run) and run.summary().mixed == 0
    assert isinstance(run.appended, tf.AppendDone) and run.appended.version == 2
