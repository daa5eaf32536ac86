"""backend.notebook: results as HTML tables (content checked) and text, secrets never shown."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
from lance_namespace import (
    CreateTableIndexRequest,
    DescribeTableRequest,
    DescribeTableResponse,
    ListNamespacesRequest,
    ListTablesRequest,
)

from backend import notebook
from backend.services import frames, index_overview, lifecycle
from backend.services.tuning.measure import recall

SECRET = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYzz"


def secret_response() -> DescribeTableResponse:
    return DescribeTableResponse(
        location="s3://bucket/t.lance",
        version=3,
        storage_options={"aws_access_key_id": "AKIDEXAMPLE", "aws_secret_access_key": SECRET},
        properties={"owner": "ops"},
    )


def test_response_html_and_repr_mask_secrets() -> None:
    response = secret_response()
    shown = notebook.show(response)
    page = shown._repr_html_()
    assert SECRET not in page and SECRET not in repr(shown) and SECRET not in str(shown)
    assert "AKIDEXAMPLE" not in page  # the access key id counts as a secret too
    assert "&lt;redacted&gt;" in page and "<redacted>" in repr(shown)
    assert "s3://bucket/t.lance" in page and "owner" in page and "ops" in page
    assert "<th>version</th><td>3</td>" in page
    assert SECRET in repr(response)  # pydantic's own repr: the reason show() exists


def test_frame_with_secret_columns_and_cells() -> None:
    df = pd.DataFrame(
        {"name": ["a"], "api_key": ["k-123456"], "options": [{"aws_secret_access_key": SECRET}]}
    )
    page = notebook.to_html(df)
    assert SECRET not in page and "k-123456" not in page and "<td>a</td>" in page
    assert SECRET not in repr(notebook.show(df)) and "k-123456" not in repr(notebook.show(df))


def test_enable_registers_a_formatter() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    assert notebook.enable(shell)
    data, _ = shell.display_formatter.format(secret_response())
    assert SECRET not in data["text/html"] and SECRET not in data["text/plain"]
    assert "storage_options" in data["text/html"]
    other, _ = shell.display_formatter.format(pd.DataFrame({"x": [1]}))
    assert "<table" in other["text/html"]  # other objects keep their own HTML


def test_listings_recall_and_plans_render(ns) -> None:
    from lance_namespace import CreateNamespaceRequest

    ns.create_namespace(CreateNamespaceRequest(id=["docs"]))
    rng = __import__("numpy").random.default_rng(0)
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(300 * 8, dtype="float32")), 8)
    frames.create_table(ns, ["docs", "pts"], pa.table({"id": range(300), "vec": vectors}))
    ns.create_table_index(
        CreateTableIndexRequest(id=["docs", "pts"], column="vec", index_type="IVF_FLAT")
    )
    listing = notebook.frame(ns.list_tables(ListTablesRequest(id=["docs"])))
    assert listing["name"].tolist() == ["pts"]
    assert notebook.frame(ns.list_namespaces(ListNamespacesRequest(id=[])))["name"].tolist() == [
        "docs"
    ]
    page = notebook.to_html(ns.describe_table(DescribeTableRequest(id=["docs", "pts"])))
    assert "DescribeTableResponse" in page and "<th>location</th>" in page
    overview = index_overview.index_overview(ns, ["docs", "pts"])
    assert "vec_idx" in notebook.to_html(overview)

    result = recall(ns, ["docs", "pts"], column="vec", k=5, sample=10, nprobes=1)
    low, high = result.interval
    page = result._repr_html_()
    assert f"{result.mean:.3f}" in page and f"{low:.3f} – {high:.3f}" in page
    assert "<th>queries</th><td>10</td>" in page

    plan = lifecycle.cleanup_plan(ns, ["docs", "pts"], keep_last=1)
    page = plan._repr_html_()
    assert "CleanupPlan" in page and "<th>latest</th><td>2</td>" in page
    assert plan.delete == [1] and "<th>delete</th><td>1</td>" in page
    assert "CleanupPlan(" in repr(notebook.show(plan))


def test_sets_render_as_sorted_lists() -> None:
    from backend.capabilities import BackendCapabilities

    caps = BackendCapabilities(kind="local", honoured_index_params=frozenset({"m", "ef", "a"}))
    page = notebook.to_html(caps)
    assert "frozenset" not in page and "a, ef, m" in page


def test_offline_charts_need_no_network() -> None:
    import altair as alt
    import plotly.io as pio

    from backend.services import charts

    before_plotly, before_altair = pio.renderers.default, alt.renderers.active
    try:
        assert notebook.use_offline_charts() == ["plotly_mimetype+notebook", "altair:svg"]
        bundle = pio.renderers._build_mime_bundle(  # what a notebook cell receives
            charts.recall_histogram([0.5, 1.0], 10).to_dict()
        )
        assert "application/vnd.plotly.v1+json" in bundle
        assert "Plotly.newPlot" in bundle["text/html"]
        assert "cdn.plot.ly/plotly" not in bundle["text/html"]  # plotly.js inline, not linked
        frame = pd.DataFrame(
            {
                "version": [1, 2],
                "timestamp": pd.to_datetime([0, 1000], unit="ms", utc=True),
                "operation": ["Overwrite", "Append"],
            }
        )
        svg = alt.renderers.get()(charts.timeline_chart(frame).to_dict())
        assert svg["image/svg+xml"].lstrip().startswith("<svg")
    finally:
        pio.renderers.default = before_plotly
        alt.renderers.enable(before_altair)
