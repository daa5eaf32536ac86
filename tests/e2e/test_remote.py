"""Remote roots in the browser: the console on pylance's REST server (``rest``) and on an S3 root
(``s3``: moto's S3 server, storage options given as the launcher gives them), next to the local
folder where a flow applies there too.

* recall on the seeded cosine IVF_PQ table: the Recall tab says the metric is the index's
  cosine, and its recall@10 matches a numpy cosine ground truth (local, rest, s3);
* a tagged version in a delete range: said before submit, refused naming the tag (local, rest,
  s3);
* dropping a namespace: CASCADE said to be unavailable up front (rest, s3);
* deregistering a root-level table over REST: the page warns that the server still lists it;
* every page on s3, with no traceback and no "stale" banner.

The tables these tests write are made by each test through the console's own backend (a new
``rm_<hex>`` namespace), so they stay independent of each other and of the seeded data.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from pathlib import Path

import lance
import numpy as np
import pytest
from lance_namespace import (
    CreateTableRequest,
    DescribeTableRequest,
    ListTablesRequest,
    ListTableVersionsRequest,
    NamespaceExistsRequest,
)
from playwright.sync_api import Locator, Page, expect

from components import state
from tests.support import ipc_stream_bytes

from .harness import (
    COSINE_PARTITIONS,
    COSINE_ROWS,
    COSINE_TABLE,
    DOCS_TABLE,
    E2E_NAMESPACE,
    HISTORY_TABLE,
    Console,
    after_rerun,
    cosine_vectors,
    fresh_namespace,
    goto,
    grid,
    grid_row,
    grid_rows,
    id_rows,
    keyed_grid,
    manage_versions,
    metric,
    open_expander,
    open_lazy,
    open_menu,
    settle,
    submit,
    type_into,
    widget,
)

K = 10
RECALL_SAMPLE = 50
RECALL_SEED = 3
STALE = "what this page shows may be stale"


def _main(page: Page) -> Locator:
    return page.get_by_test_id("stMain")


def alert(scope: Locator, text: str) -> Locator:
    return scope.get_by_test_id("stAlert").filter(has_text=text)


def no_secret_on_page(page: Page, console: Console) -> None:
    """No secret storage option (the S3 secret key) anywhere in the page's text."""
    secret = console.storage_options.get("aws_secret_access_key")
    if secret:
        assert secret not in page.locator("body").inner_text()


def three_versions(console: Console, table_id: list[str]) -> None:
    """``table_id``: v1 5 rows, v2 +3 rows, v3 deletes ids < 4 (lance writing the versions
    after the namespace created the table, with the root's storage options)."""
    ns = console.client()
    ns.create_table(CreateTableRequest(id=table_id), ipc_stream_bytes(id_rows(0, 5)))
    location = ns.describe_table(DescribeTableRequest(id=table_id)).location
    ds = lance.write_dataset(
        id_rows(5, 3), location, mode="append", storage_options=console.storage_options or None
    )
    ds.delete("id < 4")


# --------------------------------------------------------------------------- recall


def numpy_recall(console: Console, positions: list[int], nprobes: int) -> tuple[float, float]:
    """recall@K of lance's ANN search (cosine, ``nprobes``) on the seeded cosine table against
    a numpy cosine ground truth, each sampled row searched without itself; and how much the
    cosine and l2 neighbour sets share (the norms differ enough that the metric matters)."""
    vectors = cosine_vectors().astype(np.float64)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    location = (
        console.client()
        .describe_table(DescribeTableRequest(id=[E2E_NAMESPACE, COSINE_TABLE]))
        .location
    )
    ds = lance.dataset(location, storage_options=console.storage_options or None)
    recalls, shared = [], []
    for pos in positions:
        cosine = 1.0 - unit @ unit[pos]
        l2 = ((vectors - vectors[pos]) ** 2).sum(axis=1)
        cosine[pos] = l2[pos] = np.inf
        truth = set(np.argsort(cosine, kind="stable")[:K].tolist())
        shared.append(len(truth & set(np.argsort(l2, kind="stable")[:K].tolist())) / K)
        found = ds.to_table(
            columns=["id"],
            nearest={
                "column": "vector", "q": vectors[pos].astype(np.float32), "k": K + 1,
                "nprobes": nprobes, "metric": "cosine",
            },
        )["id"].to_pylist()  # fmt: skip
        ann = [i for i in found if i != pos][:K]
        recalls.append(len(truth & set(ann)) / K)
    return float(np.mean(recalls)), float(np.mean(shared))


@pytest.mark.parametrize("backend_kind", ["local", "rest", "s3"])
def test_recall_on_a_cosine_index_matches_numpy(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    goto(page, console, "search", ns=E2E_NAMESPACE, table=COSINE_TABLE, tab="recall")
    main = _main(page)
    expect(main.get_by_role("tab", name="Recall")).to_have_attribute("aria-selected", "true")
    panel = main.get_by_role("tabpanel").filter(visible=True)
    # The Distance box defaults to the index's metric, named.
    distance = widget(panel, "stSelectbox", "Distance").get_by_role("combobox")
    expect(distance).to_have_value("the index's (cosine)")
    type_into(panel.get_by_label("Sample (rows)", exact=True), str(RECALL_SAMPLE))
    type_into(panel.get_by_label("Seed", exact=True), str(RECALL_SEED))
    type_into(panel.get_by_label("nprobes", exact=True), str(COSINE_PARTITIONS))
    submit(page, panel.get_by_role("button", name="Measure recall"))
    value = metric(panel, f"recall@{K}")
    expect(value).to_have_text(re.compile(r"^[01]\.\d{3}$"), timeout=90_000)
    settle(page)
    expect(panel.get_by_text("distance cosine (the index's)")).to_be_visible()
    expect(
        panel.get_by_text(f"{RECALL_SAMPLE} sampled rows, each searched without itself")
    ).to_be_visible()
    expect(panel.get_by_text(f"nprobes={COSINE_PARTITIONS}")).to_be_visible()
    expect(main.get_by_text("Brute force, not the index")).to_have_count(0)
    shown = float(value.inner_text())
    shot("recall")
    no_secret_on_page(page, console)

    # The console samples RECALL_SAMPLE row positions with the seed (numpy's generator, scan
    # order: the seeded table is one fragment in id order).
    positions = sorted(
        np.random.default_rng(RECALL_SEED)
        .choice(COSINE_ROWS, size=RECALL_SAMPLE, replace=False)
        .tolist()
    )
    expected, shared = numpy_recall(console, positions, COSINE_PARTITIONS)
    assert shared < 0.5, shared  # an l2 ground truth would give a very different figure
    assert abs(shown - expected) <= 0.05, f"the page says {shown}, numpy {expected:.3f}"


# --------------------------------------------------------------------------- versions


@pytest.mark.parametrize("backend_kind", ["local", "rest", "s3"])
def test_tagged_version_in_a_delete_range_is_named_and_refused(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    namespace = fresh_namespace(console, prefix="rm")
    three_versions(console, [namespace, "t"])
    goto(page, console, "versions", ns=namespace, table="t", version="2")
    main = _main(page)
    expect(metric(main, "Versions")).to_have_text("3")
    tags = manage_versions(page, "Tags")
    expect(tags.get_by_text("No tags yet.")).to_be_visible()
    type_into(tags.get_by_label("New tag", exact=True), "baseline")
    submit(page, tags.get_by_role("button", name="Tag v2"))
    expect(alert(main, f"Tagged v2 of {namespace} › t as baseline.")).to_be_visible()
    listed = grid(manage_versions(page, "Tags"))
    expect(grid_row(listed, "baseline")).to_have_count(1)
    expect(grid_row(listed, "baseline")).to_contain_text("2")
    shot("tagged")

    # Before anything is submitted, the range form says which versions are tagged.
    deleting = manage_versions(page, "Delete by range")
    expect(deleting.get_by_text("Tagged: v2 (baseline).", exact=False)).to_be_visible()
    shot("range-form")
    type_into(deleting.get_by_label("Versions to delete", exact=True), "2")
    typed = deleting.get_by_label("Type the table name t to confirm", exact=True)
    typed.fill("t")
    after_rerun(page, lambda: typed.press("Enter"))
    expect(alert(main, "Tagged versions are in the range: v2 (baseline).")).to_be_visible()
    expect(metric(main, "Versions")).to_have_text("3")
    shot("refused")
    no_secret_on_page(page, console)
    # Nothing was deleted: v2 is still there, and still tagged.
    versions = (
        console.client().list_table_versions(ListTableVersionsRequest(id=[namespace, "t"])).versions
    )
    assert sorted(v.version for v in versions) == [1, 2, 3]


# --------------------------------------------------------------------------- namespaces


@pytest.mark.parametrize("backend_kind", ["rest", "s3"])
def test_drop_namespace_says_cascade_is_unavailable_up_front(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    namespace = fresh_namespace(console, "child", prefix="rm")
    three_versions(console, [namespace, "t"])
    goto(page, console, "tables", ns=namespace)
    main = _main(page)
    box = open_lazy(open_menu(main, "Namespace actions"), f"Drop namespace {namespace}")
    why = (
        "This root cannot drop a namespace with CASCADE"
        if console.kind == "s3"
        else "This server does not implement DropNamespace with CASCADE"
    )
    said = alert(box, f"{namespace} is not empty: namespace {namespace} › child, table")
    expect(said).to_be_visible()
    expect(said).to_contain_text(why)
    expect(said).to_contain_text("Drop its tables and child namespaces first")
    # No mode to choose, no confirmation, no button that would fail.
    expect(box.get_by_text("CASCADE", exact=True)).to_have_count(0)
    expect(box.get_by_role("radiogroup")).to_have_count(0)
    expect(box.get_by_label(f"Type the namespace name {namespace} to confirm")).to_have_count(0)
    expect(box.get_by_role("button", name=re.compile(rf"^Drop {namespace}"))).to_have_count(0)
    shot("no-cascade")
    no_secret_on_page(page, console)
    ns = console.client()
    ns.namespace_exists(NamespaceExistsRequest(id=[namespace, "child"]))  # still there


@pytest.mark.parametrize("backend_kind", ["rest"])
def test_deregister_at_the_root_warns_the_server_still_lists_it(
    page: Page, console: Console, shot: Callable[..., Path]
) -> None:
    name = f"rm_root_{uuid.uuid4().hex[:8]}"
    ns = console.client()
    ns.create_table(CreateTableRequest(id=[name]), ipc_stream_bytes(id_rows(0, 4)))
    goto(page, console, "tables", table=name)
    main = _main(page)
    expect(main.get_by_role("heading", name=name, exact=True)).to_be_visible()
    box = open_lazy(main, "Deregister table (keeps data)")
    type_into(box.get_by_label(f"Type the table name {name} to confirm", exact=True), name)
    submit(page, box.get_by_role("button", name="Deregister"))
    warned = alert(main, f"Deregistered table {name}; its files stay at its location.")
    expect(warned).to_be_visible()
    expect(warned).to_contain_text(f"The server still lists {name} after deregistering it")
    expect(warned).to_contain_text("Move or delete its directory")
    expect(warned.get_by_test_id("stAlertContentWarning")).to_have_count(1)
    shot("still-listed")
    # What the page says is what the server does: the name is listed at the root.
    assert name in ns.list_tables(ListTablesRequest(id=[])).tables


# --------------------------------------------------------------------------- every page on S3


def _no_trouble(page: Page, console: Console) -> None:
    settle(page)
    expect(page.get_by_text(STALE)).to_have_count(0)
    expect(page.get_by_test_id("stAlertContentError")).to_have_count(0)
    no_secret_on_page(page, console)


@pytest.mark.parametrize("backend_kind", ["s3"])
def test_every_page_on_s3(page: Page, console: Console, shot: Callable[..., Path]) -> None:
    goto(page, console, "tables", ns=E2E_NAMESPACE)
    main = _main(page)
    listing = keyed_grid(main, "tables.list.grid.")
    for name in (COSINE_TABLE, DOCS_TABLE, HISTORY_TABLE):
        expect(grid_row(listing, name)).to_have_count(1)
    # the figures, read from the bucket in the background, fill the rows
    expect(main.get_by_text("Reading the figures")).to_have_count(0)
    for name in (COSINE_TABLE, DOCS_TABLE, HISTORY_TABLE):
        expect(grid_row(listing, name)).not_to_contain_text("pending")
    expect(grid_row(listing, COSINE_TABLE)).to_contain_text(str(COSINE_ROWS))
    _no_trouble(page, console)
    shot("tables")

    goto(page, console, "versions", ns=E2E_NAMESPACE, table=HISTORY_TABLE)
    main = _main(page)
    expect(metric(main, "Versions")).to_have_text("4")
    expect(grid_rows(keyed_grid(main, state.Versions.LIST + ".grid"))).to_have_count(4)
    _no_trouble(page, console)
    shot("versions")

    goto(page, console, "indexes", ns=E2E_NAMESPACE, table=COSINE_TABLE)
    main = _main(page)
    expect(grid_rows(grid(main)).filter(has_text="IVF_PQ")).to_have_count(1)
    # Copy as Python connects with the root's storage options, the secret key read from the
    # environment, never written out.
    code = open_expander(main, "Copy as Python").locator("code")
    expect(code.first).to_contain_text("storage_options=")
    expect(code.first).to_contain_text(re.compile(r"'aws_secret_access_key': os\.environ\["))
    _no_trouble(page, console)
    shot("indexes")

    goto(page, console, "search", ns=E2E_NAMESPACE, table=COSINE_TABLE)
    main = _main(page)
    expect(main.get_by_text(f"{COSINE_ROWS:,} rows match", exact=False)).to_be_visible()
    _no_trouble(page, console)
    shot("search")

    goto(page, console, "transactions", ns=E2E_NAMESPACE, table=DOCS_TABLE)
    main = _main(page)
    expect(main.get_by_role("heading", name="Transactions", exact=True).first).to_be_visible()
    _no_trouble(page, console)
    shot("transactions")
