"""notebooks/tour.ipynb runs as committed, on every kind of root, and shows what it says;
notebooks/transactions.ipynb (write-audit-publish, the transaction demo) on a local folder.

The notebook is executed cell by cell in a real IPython kernel (nbclient), with only its
parameters changed through ``TOUR_TARGET`` / ``TOUR_OPTIONS`` / ``TOUR_SAMPLE`` (what its
parameters cell reads):

* ``local``: a copy of the demo in a folder, with the tour's own sample (50 rows);
* ``rest``: the same demo behind a real Lance REST server (``RestAdapter``);
* ``s3``: the demo's files in a bucket of moto's S3 server, storage options in ``TOUR_OPTIONS``.

The remote runs search from a smaller sample (:data:`REMOTE_SAMPLE`), as the tour suggests for
roots where every search is a round trip: the figures' checks are the same, on fewer rows.

Every cell asserts what it shows, so a finished run is the first check (nbclient raises on a
failing cell, with its traceback). The effects are then read back through a separate connection,
the outputs searched for the storage secret, and the executed notebook rendered to HTML
(nbconvert) to check that its charts need no network.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from lance_namespace import (
    DescribeTableRequest,
    ListTableIndicesRequest,
    ListTablesRequest,
)
from lance_namespace.errors import TableNotFoundError
from nbclient import NotebookClient

import backend
from backend import audit
from backend.services import tags as tagsv
from tests.conftest import RestServer, S3Server
from tests.support import demo_copy

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
TOUR = NOTEBOOKS / "tour.ipynb"
TRANSACTIONS = NOTEBOOKS / "transactions.ipynb"
TOUR_TABLE = ["sandbox", "tour"]
DECLARED = ["sandbox", "tour_declared"]
REMOTE_SAMPLE = 20  # rows the REST and S3 tours search from (the local one: the tour's 50)

pytestmark = pytest.mark.slow  # a kernel per run, ~10 s each


def execute(
    target: str,
    options: dict[str, Any],
    workdir: Path,
    *,
    path: Path = TOUR,
    prefix: str = "TOUR",
    sample: int | None = None,
) -> nbformat.NotebookNode:
    """The notebook at ``path`` (the tour) executed against ``target`` (its parameters from
    the environment: ``<prefix>_TARGET``, ``<prefix>_OPTIONS``, ``<prefix>_SAMPLE``; no
    ``sample``: the notebook's own)."""
    nb = nbformat.read(path, as_version=4)
    names = (f"{prefix}_TARGET", f"{prefix}_OPTIONS", f"{prefix}_SAMPLE")
    saved = {k: os.environ.get(k) for k in names}
    os.environ[names[0]] = target
    os.environ[names[1]] = json.dumps(options)
    os.environ[names[2]] = "" if sample is None else str(sample)
    try:
        NotebookClient(
            nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(workdir)}}
        ).execute()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return nb


def outputs_text(nb: nbformat.NotebookNode) -> str:
    """Every output of every cell as one text (streams, results, HTML, JSON)."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            for value in out.get("data", {}).values():
                parts.append(value if isinstance(value, str) else json.dumps(value))
    return "\n".join(parts)


def check_effects(ns: Any, *, batch: bool) -> None:
    """What the tour left, seen through another connection: the tour table with its index, its
    tag on a version that the restore made the latest content again, and (where batch commits
    exist) the declared table of the batch."""
    tables = ns.list_tables(ListTablesRequest(id=["sandbox"])).tables
    assert "tour" in tables, tables
    indexes = ns.list_table_indices(ListTableIndicesRequest(id=TOUR_TABLE)).indexes
    assert [ix.index_name for ix in indexes] == ["tour_ivf_pq"], indexes
    tags = tagsv.list_tags(ns, TOUR_TABLE)
    assert tags["tag"].tolist() == ["indexed"], tags
    assert (ns.describe_table(DescribeTableRequest(id=TOUR_TABLE)).properties or {}).get(
        "made_by"
    ) == "lance-console tour notebook"
    if batch:
        assert "tour_declared" in tables
    else:
        with pytest.raises(TableNotFoundError):
            ns.describe_table(DescribeTableRequest(id=DECLARED))


def check_audited(since: int) -> None:
    """Notebook writes are recorded in the audit log (the kernel connects with audit on)."""
    entries = audit.AuditLog().entries()[since:]
    operations = {e.operation for e in entries}
    assert {"create_table", "create_table_index", "restore_table"} <= operations, operations


def audit_count() -> int:
    return len(audit.AuditLog().entries())


@pytest.fixture
def local_demo(tmp_path: Path) -> Path:
    return demo_copy(tmp_path / "demo")


def test_tour_on_a_local_folder(local_demo: Path, tmp_path: Path) -> None:
    before = audit_count()
    nb = execute(str(local_demo), {}, tmp_path)
    check_effects(backend.connect(str(local_demo), audit=False), batch=True)
    check_audited(before)
    text = outputs_text(nb)
    assert "chosen: {'num_partitions'" in text  # the console chose the build parameters
    assert "transaction: batch-" in text
    assert "over 50 queries" in text  # the tour's own sample

    # Rendered to HTML, the charts draw without a network: plotly.js and the Vega chart inline.
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(nb)
    assert "Plotly.newPlot" in body and "<svg" in body
    sources = re.findall(r"<script[^>]*\bsrc=[\"']([^\"']+)", body)
    assert not [s for s in sources if "plotly" in s or "vega" in s], sources
    (tmp_path / "tour.html").write_text(body)


def test_tour_over_rest(local_demo: Path, tmp_path: Path) -> None:
    server = RestServer(local_demo)
    try:
        before = audit_count()
        nb = execute(server.url, {}, tmp_path, sample=REMOTE_SAMPLE)
        client = backend.connect(server.url, audit=False)
        check_effects(client, batch=False)  # pylance's REST server has no BatchCommitTables
        check_audited(before)
        text = outputs_text(nb)
        assert "this server does not implement BatchCommitTables" in text
        assert f"over {REMOTE_SAMPLE} queries" in text  # the tour's sample, from the environment
    finally:
        server.stop()


@pytest.fixture
def s3_demo(s3_server: S3Server, tmp_path: Path) -> Iterator[str]:
    """The demo's files uploaded under ``s3://<fresh bucket>/root`` (its catalog's locations
    are relative to the root, so the copy is the same namespace)."""
    source = demo_copy(tmp_path / "demo")
    bucket = s3_server.new_bucket()
    client = s3_server.client()
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        client.upload_file(str(path), bucket, f"root/{path.relative_to(source).as_posix()}")
    yield f"s3://{bucket}/root"


def test_tour_on_an_s3_bucket(s3_demo: str, s3_server: S3Server, tmp_path: Path) -> None:
    options = {"storage_options": s3_server.storage_options}
    nb = execute(s3_demo, options, tmp_path, sample=REMOTE_SAMPLE)
    check_effects(backend.connect(s3_demo, audit=False, **options), batch=True)
    text = outputs_text(nb)
    assert S3Server.SECRET_KEY not in text  # the storage secret never shown
    assert f"over {REMOTE_SAMPLE} queries" in text


def test_transactions_notebook_on_a_local_folder(local_demo: Path, tmp_path: Path) -> None:
    """The transaction demo in Python: every cell asserts its figures (computed with pyarrow
    from the rows read before), so a finished run is the check; then the effects through
    another connection, the audit log, and the reader's figures in the outputs."""
    from backend.demo import txn_guide
    from backend.services import batch_builder, table_watch

    client = backend.connect(str(local_demo), audit=False)
    tables = txn_guide.pick_tables(client)
    start = {r.table_id: r.version for r in table_watch.poll(client, tables).readings}
    before = audit_count()
    nb = execute(str(local_demo), {}, tmp_path, path=TRANSACTIONS, prefix="TXN")
    text = outputs_text(nb)
    assert re.search(r"polls: \d+, mixed states seen: 0", text), text
    assert "killed: True" in text and "ConcurrentModificationError" in text
    # two batches published (steps 4 and 6), the writer's append on the second table
    now = {r.table_id: r.version for r in table_watch.poll(client, tables).readings}
    writer = tuple(tables[1])
    assert now == {t: v + 2 + (t == writer) for t, v in start.items()}, (start, now)
    assert batch_builder.list_staged(client) == [] or all(
        s.version <= now[s.table_id] for s in batch_builder.list_staged(client)
    )  # nothing left staged to publish
    operations = {e.operation for e in audit.AuditLog().entries()[before:]}
    assert {"stage_change", "demo_fault_commit", "demo_concurrent_writer", "discard_staged"} <= (
        operations
    ), operations
