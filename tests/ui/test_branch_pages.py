"""AppTest: the branch picker of Versions, Indexes, Search & tune and Import & export on a real
local namespace (``tests/ui/conftest.py``): one shared pick, kept in the URL, back to main
when the table changes or the branch is gone (said); and each page acting on the branch
picked, checked against the branch's own data read with lance.

``sales/orders``: main holds ids 2, 3, 4, 5 (version 3); branch ``dev``, made from version 1
(ids 1, 2, 3), gained ids 10 and 11.
"""

from __future__ import annotations

import io
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
import streamlit as st
from lance_namespace import CreateTableRequest

import backend
from backend.services import branches
from components import state
from components.branches import picker_key
from components.search.tabs import TAB_PREVIEW, TAB_VECTOR
from components.search.vector import SOURCE_ROW
from tests.support import ipc_stream_bytes, metric_distances, search_rows
from tests.ui.conftest import alerts, assert_no_exception, button, open_page, texts

ORDERS = {"ns": "sales", "table": "orders"}
TID = ["sales", "orders"]
PICKERS = {
    "indexes": picker_key(state.Indexes.PICKER),
    "views/search.py": picker_key(state.Search.PICKER),
    "transfer": picker_key(state.Transfer.PICKER),
    "versions": picker_key(state.Versions.PICKER),
}
ON_DEV = "Reads and writes on this page act on branch dev, not on main."
ON_MAIN = "Reads and writes on this page act on the table's main branch."


def _dataset(root: Path, table_id: list[str]) -> lance.LanceDataset:
    return lance.dataset(backend.connect(str(root)).table_location(table_id))


def _dev(root: Path, table_id: list[str] = TID) -> lance.LanceDataset:
    return _dataset(root, table_id).checkout_version(("dev", None))


@pytest.fixture
def dev_orders(ui_env: Path) -> Path:
    ns = backend.connect(str(ui_env))
    branches.create_branch(ns, TID, "dev", from_version=1)
    _dev(ui_env).insert(pa.table({"id": [10, 11], "item": ["cog", "gear"]}))
    return ui_env


def _picked(at, page: str) -> str:
    return at.selectbox(key=PICKERS[page]).value


def test_the_pick_is_shared_kept_in_the_url_and_reset(make_app, dev_orders) -> None:
    at = make_app("indexes", query_params=ORDERS)
    assert at.selectbox(key=PICKERS["indexes"]).options == ["main", "dev"]
    assert _picked(at, "indexes") == "main" and ON_MAIN in texts(at)
    at.selectbox(key=PICKERS["indexes"]).select("dev").run()
    assert_no_exception(at)
    assert at.query_params["branch"] == "dev" and ON_DEV in texts(at)

    # picked on one page, the branch of the others
    for page in ("views/search.py", "transfer", "versions"):
        open_page(at, page)
        assert_no_exception(at)
        assert _picked(at, page) == "dev", page
        assert at.query_params["branch"] == "dev", page
    assert "Branch dev: 2 versions" in texts(at)  # the Versions page shows the branch's
    open_page(at, "transfer")
    assert ON_DEV in texts(at)

    # another table: main again, and the URL says so
    at.selectbox(key="transfer.picker.table").select("customers").run()
    assert_no_exception(at)
    assert "branch" not in at.query_params  # customers has main only: no badge
    assert ON_MAIN not in texts(at) and ON_DEV not in texts(at)
    # a table with no branch but main: no box to pick from, the badge says main
    assert PICKERS["transfer"] not in [box.key for box in at.selectbox]

    # a link to a branch the table does not have: main, and said
    stale = make_app("indexes", query_params={**ORDERS, "branch": "gone"})
    assert _picked(stale, "indexes") == "main"
    assert alerts(stale, "warning") == [
        "Table sales › orders has no branch gone (deleted, or a stale link): showing main."
    ]
    assert "branch" not in stale.query_params


def test_a_branch_deleted_while_picked_goes_back_to_main(make_app, dev_orders) -> None:
    at = make_app("views/search.py", query_params={**ORDERS, "branch": "dev"})
    assert _picked(at, "views/search.py") == "dev" and ON_DEV in texts(at)
    branches.delete_branch(backend.connect(str(dev_orders)), TID, "dev")
    st.cache_data.clear()  # another writer: the page reads the branches again
    at.run()
    assert_no_exception(at)
    assert "Table sales › orders has no branch dev" in "\n".join(alerts(at, "warning"))
    # main, the only branch left: no picker, no badge
    assert ON_MAIN not in texts(at) and ON_DEV not in texts(at) and "branch" not in at.query_params
    assert PICKERS["views/search.py"] not in [box.key for box in at.selectbox]  # main only


# -- Indexes ----------------------------------------------------------------------------------------
def _overview(at):
    for frame in at.dataframe:
        if "indexed_rows" in frame.value.columns and "status" in frame.value.columns:
            return frame.value
    return None


def test_indexes_page_builds_lists_and_drops_on_the_branch(make_app, dev_orders) -> None:
    from backend.services import build_jobs
    from backend.services import jobs as job_service

    root = dev_orders
    main_before = _dataset(root, TID).version
    at = make_app("indexes", query_params={**ORDERS, "branch": "dev"})
    at.selectbox(key="indexes.create.column").set_value("id").run()
    at.selectbox(key="indexes.create.type.id").set_value("BTREE").run()
    at.session_state["indexes.create.snippet.open"] = True  # "Copy as Python"
    at.run()
    assert "branch='dev'" in "\n".join(str(c.value) for c in at.code)
    next(b for b in at.button if b.label.startswith("Create ")).click().run()
    assert_no_exception(at)
    said = alerts(at, "success")  # a fast build's outcome is already shown by this run
    followed = list(at.session_state[state.Jobs.FOLLOWED])
    assert followed
    for job_id in followed:  # the page's namespace is the launch target: its job records
        job = job_service.wait(backend.connect(str(root)), job_id, timeout=120)
        assert build_jobs.from_job(job).status == "succeeded"
        assert build_jobs.from_job(job).branch == "dev"
    at.run()
    assert_no_exception(at)
    said += alerts(at, "success")  # else by the first run that sees it finished
    assert sum(m.startswith("Index id_idx built on branch dev in") for m in said) == 1
    rows = _dev(root).count_rows()
    listed = _overview(at).set_index("name")
    assert list(listed.index) == ["id_idx"] and int(listed.loc["id_idx", "indexed_rows"]) == rows
    assert [i.name for i in _dev(root).describe_indices()] == ["id_idx"]
    assert _dataset(root, TID).describe_indices() == []  # main has none, and did not move
    assert _dataset(root, TID).version == main_before

    at.selectbox(key=PICKERS["indexes"]).select("main").run()
    assert _overview(at) is None and ON_MAIN in texts(at)
    assert "This table has no indexes yet. Create one below." in alerts(at, "info")

    at.selectbox(key=PICKERS["indexes"]).select("dev").run()
    at.session_state[state.Indexes.TABS] = "Selected index"
    at.run()
    confirm = next(t for t in at.text_input if t.key and t.key.endswith(".id_idx.confirm"))
    confirm.set_value("id_idx")
    button(at, "Drop index").click().run()
    assert_no_exception(at)
    assert alerts(at, "success") == ["Index id_idx dropped from branch dev."]
    assert _dev(root).describe_indices() == [] and _dataset(root, TID).version == main_before


# -- Search & tune ---------------------------------------------------------------------------------
VB = ["sales", "vb"]


@pytest.fixture
def dev_vectors(ui_env: Path) -> Path:
    """``sales/vb``: 40 rows of 4-dimensional vectors; branch ``dev`` lost ids 0..4 and gained
    ids 100..109."""
    ns = backend.connect(str(ui_env))
    ns.create_table(CreateTableRequest(id=VB), ipc_stream_bytes(search_rows(40, dim=4)))
    branches.create_branch(ns, VB, "dev")
    dev = _dev(ui_env, VB)
    dev.insert(search_rows(10, start=100, seed=5, dim=4))
    dev.delete("id < 5")
    return ui_env


def test_search_page_previews_and_searches_the_branch(make_app, dev_vectors) -> None:
    at = make_app("views/search.py", query_params={"ns": "sales", "table": "vb", "branch": "dev"})
    assert_no_exception(at)
    rows = _dev(dev_vectors, VB).to_table().sort_by("id")
    assert f"{rows.num_rows} rows match" in texts(at) and rows.num_rows == 45
    (grid,) = [d.value for d in at.dataframe if "text" in d.value.columns]
    assert sorted(grid["id"]) == rows["id"].to_pylist()

    # a vector search from a row only the branch has: its nearest rows on the branch
    at.session_state[state.Search.TABS] = TAB_VECTOR
    at.run()
    at.segmented_control(key="search.vec.source").set_value(SOURCE_ROW).run()
    at.text_input(key="search.vec.row").set_value("103")
    at.text_input(key="search.vec.k").set_value("5")
    at.button(key="FormSubmitter:search.vec.form-Search").click().run()
    assert_no_exception(at)
    assert alerts(at, "error") == []
    (found,) = [d.value for d in at.dataframe if "_distance" in d.value.columns]
    data = np.array(rows["vec"].to_pylist(), dtype=np.float32)
    query = data[rows["id"].to_pylist().index(103)]
    order = np.argsort(metric_distances(data, query, "l2"), kind="stable")[:5]
    assert list(found["id"]) == [rows["id"][int(i)].as_py() for i in order]
    code = "\n".join(str(c.value) for c in at.code)
    assert "branch='dev'" in code  # the backend call
    assert ".checkout_version(('dev', None))" in code  # plain pylance
    assert "table=vb&branch=dev&tab=vector" in code  # the link

    at.selectbox(key=PICKERS["views/search.py"]).select("main").run()
    assert_no_exception(at)
    at.session_state[state.Search.TABS] = TAB_PREVIEW
    at.run()
    assert "40 rows match" in texts(at) and ON_MAIN in texts(at)


# -- Import & export ---------------------------------------------------------------------------------
def test_transfer_page_exports_and_appends_on_the_branch(make_app, dev_orders) -> None:
    root = dev_orders
    main_before = _dataset(root, TID)
    main_rows = main_before.to_table().sort_by("id")
    at = make_app("transfer", query_params={**ORDERS, "branch": "dev"})
    assert ON_DEV in texts(at)
    at.session_state[state.Transfer.TABS] = "Export"
    at.run()
    assert at.selectbox(key="transfer.export.sales/orders@dev.version").options == [
        "latest (v2)",
        "v2",
        "v1",
    ]
    button(at, "Prepare download").click().run()
    assert_no_exception(at)
    kept = at.session_state[state.Transfer.DOWNLOAD]
    assert kept["file_name"] == "orders-dev-v2.parquet" and kept["rows"] == 5
    assert (
        pq.read_table(kept["file"].path).sort_by("id").equals(_dev(root).to_table().sort_by("id"))
    )

    at.session_state[state.Transfer.TABS] = "Import"
    at.run()
    sink = io.BytesIO()
    pacsv.write_csv(pa.table({"id": pa.array([20, 21], pa.int64()), "item": ["a", "b"]}), sink)
    at.file_uploader[0].set_value(("more.csv", sink.getvalue(), "text/csv")).run()
    at.radio(key="transfer.import.mode").set_value("append").run()
    assert "Into table sales › orders, branch dev." in texts(at)
    button(at, "Import").click().run()
    assert_no_exception(at)
    assert "Appended 2 rows to sales › orders (branch dev) (version 3)." in alerts(at, "success")
    assert _dev(root).to_table()["id"].to_pylist() == [1, 2, 3, 10, 11, 20, 21]
    main = _dataset(root, TID)
    assert main.version == main_before.version and main.to_table().sort_by("id").equals(main_rows)


def test_over_rest_the_pages_refuse_what_the_server_would_answer_for_main(
    make_app, dev_orders, monkeypatch
) -> None:
    """pylance's REST server answers QueryTable and ListTableIndices for main whatever the
    branch: on a branch the pages say so and show nothing of main's; nothing is written."""
    from tests.conftest import RestServer

    root = dev_orders
    server = RestServer(root)
    try:
        monkeypatch.setenv("LANCE_CONSOLE_TARGET", server.url)
        before = (_dataset(root, TID).version, _dev(root).version)
        for page in ("views/search.py", "indexes"):
            at = make_app(page, query_params={**ORDERS, "branch": "dev"})
            assert_no_exception(at)
            assert _picked(at, page) == "dev" and ON_DEV in texts(at)
            errors = "\n".join(alerts(at, "error"))
            assert "ignores the branch" in errors and "nothing was read" in errors, page
            assert not [d for d in at.dataframe if "item" in d.value.columns]  # no rows
        at = make_app("transfer", query_params={**ORDERS, "branch": "dev"})
        at.session_state[state.Transfer.TABS] = "Export"
        at.run()
        assert "ignores the branch" in "\n".join(alerts(at, "error"))
        assert (_dataset(root, TID).version, _dev(root).version) == before
    finally:
        server.stop()
