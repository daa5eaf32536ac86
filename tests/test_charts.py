"""backend.services.charts: every figure checked for its data on small inputs (against numpy or a plain
loop), and the console's pages drawing exactly these figures (AppTest of the components)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import plotly.io as pio
from streamlit.testing.v1 import AppTest

from backend.services import charts
from backend.services.search.plans import PlanNode
from backend.services.tuning.sweeps import cheapest

OVERVIEW = pd.DataFrame(
    {
        "name": ["vec_idx", "text_fts", "id_btree"],
        "indexed_rows": [90, 100, None],
        "unindexed_rows": [10, 0, None],
        "size_bytes": [4096, None, 512],
        "segments": [2, 1, None],
    }
)
HISTORY = pd.DataFrame(
    {
        "version": [1, 2, 3, 2, 3],
        "index_name": ["a", "a", "a", "b", "b"],
        "index_id": ["uuid-a", "uuid-a", "uuid-a", "uuid-b", "uuid-b"],
        "coverage": [1.0, 0.5, None, 1.0, 0.25],
        "unindexed_rows": [0, 10, None, 0, 30],
        "total_rows": [10, 20, 20, 20, 40],
    }
)
SWEEP = pd.DataFrame(
    {
        "nprobes": pd.Series([1, 2, 4, 8, 16], dtype=object),
        "recall": [0.50, 0.80, 0.78, 0.97, 1.00],
        "recall_low": [0.40, 0.70, 0.68, 0.955, 0.96],
        "recall_high": [0.60, 0.88, 0.86, 0.99, 1.00],
        "queries": [50] * 5,
        "p50_ms": [1.0, 2.0, 3.0, 4.0, 9.0],
        "p95_ms": [2.0, 3.0, 4.0, 5.0, 10.0],
        "metric": ["l2"] * 5,
        "brute_force": [False, False, False, False, True],
    }
)


def numpy_pareto(recall: np.ndarray, latency: np.ndarray) -> np.ndarray:
    """Indices of the points no other point dominates (independent of tuning.pareto_front)."""
    keep = []
    for i in range(len(recall)):
        others = np.delete(np.arange(len(recall)), i)
        better = (recall[others] >= recall[i]) & (latency[others] <= latency[i])
        strictly = (recall[others] > recall[i]) | (latency[others] < latency[i])
        if not np.any(better & strictly):
            keep.append(i)
    return np.array(keep)


def test_coverage_size_segments() -> None:
    indexed, unindexed = charts.coverage_figure(OVERVIEW).data
    assert list(indexed.y) == ["vec_idx", "text_fts", "id_btree"]
    assert list(indexed.x) == [90, 100, 0] and list(unindexed.x) == [10, 0, 0]
    fig = charts.size_figure(OVERVIEW)
    (size,) = fig.data
    # 4,096 and 512 bytes: the axis in KiB (the largest's unit), each bar's own size on hover
    assert list(size.x) == ["vec_idx", "id_btree"] and list(size.y) == [4.0, 0.5]
    assert fig.layout.yaxis.title.text == "KiB"
    assert list(size.customdata) == ["4.0 KiB", "512 bytes"]
    (segments,) = charts.segments_figure(OVERVIEW).data
    assert list(segments.x) == ["vec_idx", "text_fts"] and list(segments.y) == [2, 1]


def test_history_one_line_per_index_in_version_order() -> None:
    fig = charts.history_figure(HISTORY.sample(frac=1.0, random_state=3))
    by_name = {t.name: t for t in fig.data}
    assert set(by_name) == {"a", "b"}
    assert list(by_name["a"].x) == [1, 2, 3] and list(by_name["a"].y) == [100.0, 50.0, None]
    # b did not exist at version 1: no point there (a gap, not 0 %)
    assert list(by_name["b"].x) == [1, 2, 3] and list(by_name["b"].y) == [None, 100.0, 25.0]
    axis = charts.version_axis(HISTORY["version"])
    assert axis["tick0"] == 1 and axis["dtick"] == 1
    # where a and b meet (both 100% at version 2) the later line does not hide the other:
    # each has its own dash and marker
    assert by_name["a"].line.dash != by_name["b"].line.dash
    assert by_name["a"].marker.symbol != by_name["b"].marker.symbol


def test_history_indexes_with_the_same_figures_share_one_line() -> None:
    """Indexes built together have the very same coverage at every version: one line named
    after all of them (separate lines would hide each other), the hover listing each name; an
    index whose figures differ at one version keeps its own line."""
    same = {"version": [1, 2], "coverage": [1.0, 0.5], "unindexed_rows": [0, 10]}
    rows = [
        pd.DataFrame({**same, "index_name": name, "index_id": f"id-{name}", "total_rows": [10, 20]})
        for name in ["e", "b", "a", "d", "c"]
    ]
    rows.append(  # one figure apart
        pd.DataFrame({**same, "index_name": "f", "index_id": "id-f", "total_rows": [10, 21]})
    )
    fig = charts.history_figure(pd.concat(rows).sample(frac=1.0, random_state=5))
    by_name = {t.name: t for t in fig.data}
    assert set(by_name) == {"a, b, c and 2 more", "f"}
    shared = by_name["a, b, c and 2 more"]
    assert list(shared.x) == [1, 2] and list(shared.y) == [100.0, 50.0]
    assert {row[2] for row in shared.customdata} == {"a, b, c, d<br>e"}
    assert [row[2] for row in by_name["f"].customdata] == ["f", "f"]
    # lines that meet for part of the history: the hover lists every line at the version
    assert fig.layout.hovermode == "x unified"
    pair = charts.history_figure(pd.concat(rows[:2]))
    assert [t.name for t in pair.data] == ["b, e"]
    assert pair.layout.showlegend  # a single shared line still names its indexes
    marked = charts.history_figure(pd.concat(rows[:1]).assign(index_name="<i>x</i>"))
    assert marked.data[0].name == "&lt;i&gt;x&lt;/i&gt;"  # a name is text, not markup


def test_history_an_index_made_again_under_its_name_is_another_line() -> None:
    """vec_idx existed at versions 1-3, was dropped at 4 and made again at 6 (another uuid):
    two lines, each labelled with its first version, with no point where that index did not
    exist; other_idx, with the same figures as the first vec_idx at its versions but one more
    version, is a line of its own. Two indexes with identical figures still share a line,
    grouped by identity: the name alone never merges them."""
    coverage = [1.0, 0.5, 1.0, None, None, 1.0, 0.8]
    rows = []
    for version, cov in zip(range(1, 8), coverage, strict=True):
        ident = "uuid-1" if version <= 3 else "uuid-2"
        if cov is not None:
            rows.append((version, "vec_idx", ident, cov))
        if version <= 4:
            rows.append((version, "other_idx", "uuid-3", coverage[version - 1] or 1.0))
    history = pd.DataFrame(rows, columns=["version", "index_name", "index_id", "coverage"])
    history["total_rows"] = 10 * history["version"]
    history["unindexed_rows"] = ((1 - history["coverage"]) * history["total_rows"]).round()
    fig = charts.history_figure(history.sample(frac=1.0, random_state=2))
    by_name = {t.name: t for t in fig.data}
    assert list(by_name) == ["other_idx", "vec_idx (from v1)", "vec_idx (from v6)"]
    assert charts.history_labels(history) == {
        "uuid-1": "vec_idx (from v1)",
        "uuid-2": "vec_idx (from v6)",
        "uuid-3": "other_idx",
    }
    shown = [1, 2, 3, 4, 6, 7]  # no index existed at version 5: the history has no row there
    for trace in fig.data:
        assert list(trace.x) == shown
        assert trace.connectgaps is False
    expected = {
        "vec_idx (from v1)": {1: 100.0, 2: 50.0, 3: 100.0},
        "vec_idx (from v6)": {6: 100.0, 7: 80.0},
        "other_idx": {1: 100.0, 2: 50.0, 3: 100.0, 4: 100.0},
    }
    for label, points in expected.items():
        trace = by_name[label]
        assert list(trace.y) == [points.get(v) for v in shown]
        assert [c[1] is None for c in trace.customdata] == [v not in points for v in shown]
    # the same name and identical figures, yet two indexes: two ids, two labels, one line
    twins = pd.concat(
        [
            history[history.index_id == "uuid-2"],
            history[history.index_id == "uuid-2"].assign(index_id="uuid-4"),
        ]
    )
    (line,) = charts.history_figure(twins).data
    assert line.name == "vec_idx (from v6), vec_idx (from v6)"


def test_recall_histogram_matches_numpy() -> None:
    rng = np.random.default_rng(7)
    values = rng.integers(0, 11, size=40) / 10  # recall@10 values, edges included
    (trace,) = charts.recall_histogram(values, 10).data
    expected = np.histogram(np.round(values * 10).astype(int), bins=np.arange(12))[0]
    expected[9] += expected[10]  # 1.0 falls in the last, closed bin
    assert list(trace.y) == expected[:10].tolist()


def test_latency_boxes() -> None:
    ann, exact = charts.latency_figure([1.0, 2.0], [5.0, 6.0, 7.0]).data
    assert (ann.name, list(ann.y)) == ("ANN", [1.0, 2.0])
    assert (exact.name, list(exact.y)) == ("exact", [5.0, 6.0, 7.0])


def test_sweep_pareto_front_target_and_cheapest() -> None:
    fig = charts.sweep_figure(SWEEP, ["nprobes"], 0.95)
    traces = {t.name: t for t in fig.data}
    assert set(traces) == {"setting", "brute force (no index)", "Pareto front", "cheapest ≥ target"}
    ann = SWEEP[~SWEEP["brute_force"]]
    assert list(traces["setting"].x) == ann["p50_ms"].tolist()
    assert np.allclose(traces["setting"].error_y.array, ann["recall_high"] - ann["recall"])
    assert np.allclose(traces["setting"].error_y.arrayminus, ann["recall"] - ann["recall_low"])
    front = numpy_pareto(ann["recall"].to_numpy(), ann["p50_ms"].to_numpy())
    assert list(traces["Pareto front"].x) == sorted(ann["p50_ms"].to_numpy()[front].tolist())
    assert 3.0 not in traces["Pareto front"].x  # nprobes=4 is dominated by nprobes=2
    assert list(traces["brute force (no index)"].x) == [9.0]
    # the target line, and the cheapest index setting whose interval's lower bound reaches it
    (line,) = [s for s in fig.layout.shapes if s.y0 == s.y1]
    assert line.y0 == 0.95
    low_ok = ann[ann["recall_low"] >= 0.95]
    assert list(traces["cheapest ≥ target"].x) == [low_ok["p50_ms"].min()]
    assert "cheapest ≥ target" not in {t.name for t in charts.sweep_figure(SWEEP, [], 0.99).data}


def test_ab_and_plan_figures() -> None:
    frame = pd.DataFrame(
        {"config": ["a", "b"], "recall": [0.9, 0.7], "p50_ms": [3.0, 1.0], "size_bytes": [400, 100]}
    )
    fig = charts.ab_figure(frame)
    # One point per build, named in the legend (no label next to a point to be cut or stacked).
    assert [t.name for t in fig.data] == ["a", "b"] and fig.layout.showlegend
    assert [list(t.y) for t in fig.data] == [[0.9], [0.7]]
    assert all(t.mode == "markers" and t.text is None for t in fig.data)
    assert fig.data[0].marker.size == 36 and fig.data[1].marker.size == 10 + 26 * 0.5
    nodes = [
        PlanNode(0, "Projection", "", {"elapsed": "2.5ms"}),
        PlanNode(1, "KNN", "", {"elapsed": "1.5ms"}),
        PlanNode(1, "Scan", "", {}),
    ]
    (bar,) = charts.plan_figure(nodes).data
    assert list(bar.y) == ["Projection", "· KNN", "· Scan"]
    assert list(bar.x) == [n.elapsed_ms or 0.0 for n in nodes]
    assert bar.x[0] == 2.5


def test_timeline_points_and_band() -> None:
    frame = pd.DataFrame(
        {
            "version": [1, 2, 3, 4],
            "timestamp": pd.to_datetime([0, 1000, 2000, 3000], unit="ms", utc=True),
            "operation": ["Overwrite", "Append", "?", "(not loaded)"],
        }
    )
    spec = charts.timeline_chart(frame, highlight=[3, 4]).to_dict()
    band, points = spec["layer"]
    values = spec["datasets"][points["data"]["name"]]
    assert [v["version"] for v in values] == [1, 2, 3, 4]
    scale = points["encoding"]["color"]["scale"]
    assert dict(zip(scale["domain"], scale["range"], strict=True))["(not loaded)"] == "#b0b0b0"
    (rect,) = spec["datasets"][band["data"]["name"]]
    assert (rect["y0"], rect["y1"]) == (2.5, 4.5)
    assert len(charts.timeline_chart(frame).to_dict()["layer"]) == 1  # no band: all shown
    # the version axis labels whole versions only (no "3" under 2.5 and again under 3)
    assert points["encoding"]["y"]["axis"]["values"] == [1, 2, 3, 4]


def test_version_ticks_are_whole_round_and_few() -> None:
    assert charts.version_ticks(pd.Series([2, 3, 4])) == [2, 3, 4]
    assert charts.version_ticks(pd.Series([7])) == [7]
    many = charts.version_ticks(pd.Series(range(5, 106)))
    assert many == list(range(10, 101, 10))
    assert all(isinstance(v, int) for v in many)
    # 100,000 versions: every 10,000th, not every 8,334th from the oldest (1, 8,335, 16,669, …)
    history = pd.Series(range(1, 100_001))
    assert charts.version_ticks(history) == list(range(10_000, 100_001, 10_000))
    axis = charts.version_axis(history)
    assert (axis["tick0"], axis["dtick"]) == (10_000, 10_000)  # the plotly charts' same ticks
    for count in (12, 13, 250, 3_001):  # a round step, at most 12 ticks
        ticks = charts.version_ticks(pd.Series(range(1, count + 1)))
        step = ticks[1] - ticks[0]
        assert len(ticks) <= 12 and str(step).rstrip("0") in {"1", "2", "5"}, ticks
        assert all(t % step == 0 for t in ticks) and ticks[-1] + step > count, ticks


# -- the pages draw these figures --------------------------------------------------------------


def _plotly_specs(at: AppTest) -> dict[str, dict]:
    return {c.proto.id: json.loads(c.proto.spec) for c in at.get("plotly_chart")}


def _same(spec: dict, fig) -> bool:
    mine = json.loads(pio.to_json(fig, validate=False))
    return spec["data"] == mine["data"] and spec["layout"].get("title") == mine["layout"].get(
        "title"
    )


def index_charts_page(overview, history) -> None:  # the script AppTest runs alone
    from components.indexes.statistics import render_index_charts

    render_index_charts(overview, history, key_prefix="t.charts")


def sweep_page(frame) -> None:  # the script AppTest runs alone
    from types import SimpleNamespace

    from components.tuning.sweep import render_sweep_result

    render_sweep_result(SimpleNamespace(table_id=("a", "b")), frame, ["nprobes"], "vec", 10)


def timeline_page(frame) -> None:  # the script AppTest runs alone
    from components.versions.listing import render_timeline

    render_timeline(frame, key_prefix="t.timeline")


def test_index_charts_component_draws_backend_charts() -> None:
    at = AppTest.from_function(index_charts_page, args=(OVERVIEW, HISTORY), default_timeout=30)
    at.run()
    assert not at.exception
    specs = list(_plotly_specs(at).values())
    expected = [
        charts.coverage_figure(OVERVIEW),
        charts.size_figure(OVERVIEW),
        charts.segments_figure(OVERVIEW),
        charts.history_figure(HISTORY),
    ]
    assert len(specs) == len(expected)
    for spec, fig in zip(specs, expected, strict=True):
        assert _same(spec, fig)


def test_sweep_component_draws_backend_sweep_figure() -> None:
    # recall below the page's default target (0.95) for every index setting: no snippets
    frame = SWEEP.assign(recall_low=SWEEP["recall_low"] - 0.2)
    at = AppTest.from_function(sweep_page, args=(frame,), default_timeout=30)
    at.run()
    assert not at.exception
    (spec,) = _plotly_specs(at).values()
    assert _same(spec, charts.sweep_figure(frame, ["nprobes"], 0.95))
    assert cheapest(frame, 0.95) is None


def test_timeline_component_draws_backend_timeline() -> None:
    frame = pd.DataFrame(
        {
            "version": [1, 2],
            "timestamp": pd.to_datetime([0, 5000], unit="ms", utc=True),
            "operation": ["Overwrite", "Append"],
        }
    )
    at = AppTest.from_function(timeline_page, args=(frame,), default_timeout=30)
    at.run()
    assert not at.exception
    (chart,) = at.get("vega_lite_chart")
    shown = json.loads(chart.proto.spec)
    mine = charts.timeline_chart(frame).to_dict()
    assert shown["layer"][0]["encoding"] == mine["layer"][0]["encoding"]
    assert shown["layer"][0]["mark"] == mine["layer"][0]["mark"]
    assert len(shown["layer"]) == len(mine["layer"])
