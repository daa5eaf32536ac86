"""The recall interval: a 95% Student t interval built from the per-query recalls.

Checked against published t tables and a numpy integration of the t density (not the console's
quantile code), by a coverage simulation with a fixed seed, and on the reported example: a
mean recall of 0.70 over 45 queries whose per-query spread gives 0.66-0.74, where the Wilson
interval on the mean as one yes/no proportion gave 0.56-0.81.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from lance_namespace.errors import InvalidInputError

from backend import notebook, stats
from backend.services import charts
from backend.services.tuning.measure import RecallResult, interval_text, recall_interval

# Student's t quantiles from published tables (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2)
T_TABLE = {
    (0.975, 1): 12.706,
    (0.975, 2): 4.303,
    (0.975, 5): 2.571,
    (0.975, 10): 2.228,
    (0.975, 19): 2.093,
    (0.975, 29): 2.045,
    (0.975, 39): 2.023,
    (0.975, 44): 2.015,
    (0.975, 49): 2.010,
    (0.975, 100): 1.984,
    (0.995, 10): 3.169,
    (0.995, 100): 2.626,
    (0.95, 10): 1.812,
}


def numpy_t_quantile(p: float, df: int) -> float:
    """The p quantile (p > 0.5) of Student's t by integrating its density with numpy
    (trapezoids on a fine grid), independently of ``backend.stats``."""
    x = np.linspace(0.0, 80.0, 4_000_001)
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    density = np.exp(log_c - (df + 1) / 2 * np.log1p(x * x / df))
    cdf = 0.5 + np.concatenate([[0.0], np.cumsum((density[1:] + density[:-1]) / 2 * (x[1] - x[0]))])
    return float(np.interp(p, cdf, x))


def wilson(mean: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval of the mean taken as one yes/no proportion over n (the old,
    wrong approach), by its textbook formula."""
    centre = (mean + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(mean * (1 - mean) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def expected_interval(values: list[float], t: float) -> tuple[float, float]:
    """mean ± t·s/√n with numpy (s with n - 1), clipped to [0, 1]."""
    array = np.asarray(values)
    half = t * array.std(ddof=1) / math.sqrt(len(array))
    return max(0.0, array.mean() - half), min(1.0, array.mean() + half)


# -- the t quantile ------------------------------------------------------------------------------
@pytest.mark.parametrize(("p", "df"), sorted(T_TABLE))
def test_t_quantile_matches_the_published_table(p: float, df: int) -> None:
    assert round(stats.t_quantile(p, df), 3) == T_TABLE[(p, df)]
    assert stats.t_quantile(1 - p, df) == -stats.t_quantile(p, df)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 8, 19, 44, 150, 300, 301, 999, 5000])
def test_t_quantile_matches_a_numpy_integration_of_the_density(df: int) -> None:
    # both sides of df 300, where the exact distribution function gives way to Cornish-Fisher
    for p in (0.9, 0.975, 0.995):
        assert stats.t_quantile(p, df) == pytest.approx(numpy_t_quantile(p, df), abs=1e-8)


def test_t_quantile_refuses_bad_arguments() -> None:
    assert stats.t_quantile(0.5, 7) == 0.0
    for p, df in ((0.0, 5), (1.0, 5), (0.975, 0), (0.975, 2.5)):
        with pytest.raises(ValueError):
            stats.t_quantile(p, df)


# -- the interval ---------------------------------------------------------------------------------
def test_recall_interval_is_the_t_interval_of_the_per_query_values() -> None:
    rng = np.random.default_rng(3)
    for n, df_key in ((11, 10), (20, 19), (45, 44), (101, 100)):
        values = (rng.integers(3, 11, size=n) / 10).tolist()
        low, high = recall_interval(values)
        t = numpy_t_quantile(0.975, df_key)
        assert round(t, 3) == T_TABLE[(0.975, df_key)]
        exp_low, exp_high = expected_interval(values, t)
        assert low == pytest.approx(exp_low, abs=1e-6) and high == pytest.approx(exp_high, abs=1e-6)
        assert low < float(np.mean(values)) < high
    # another level: the 0.995 quantile
    values = (rng.integers(5, 11, size=11) / 10).tolist()
    exp_low, exp_high = expected_interval(values, numpy_t_quantile(0.995, 10))
    assert recall_interval(values, level=0.99) == pytest.approx((exp_low, exp_high), abs=1e-6)


def test_recall_interval_edge_cases() -> None:
    # every query scoring the same: the point (no spread to build an interval from)
    assert recall_interval([1.0] * 50) == (1.0, 1.0)
    shown = RecallResult(10, [0.7] * 3, [1.0] * 3, [2.0] * 3)
    assert shown.interval == (shown.mean, shown.mean) and shown.mean == pytest.approx(0.7)
    # one query, or none: no interval
    assert all(np.isnan(recall_interval([0.8])))
    assert all(np.isnan(recall_interval([])))
    assert interval_text(*recall_interval([0.8])) == "none from a single query"
    assert interval_text(0.6589, 0.7411) == "0.659-0.741"
    with pytest.raises(InvalidInputError):
        recall_interval([1.0, 0.5], level=1.5)
    # clipped to [0, 1]: two queries, 1.0 and 0.0, span far beyond both ends unclipped
    raw = stats.mean_interval([1.0, 0.0], 0.95)
    assert raw[0] < -5 and raw[1] > 5
    assert recall_interval([1.0, 0.0]) == (0.0, 1.0)
    low, high = recall_interval([1.0] * 19 + [0.9])
    mean, s = 0.995, float(np.std([1.0] * 19 + [0.9], ddof=1))
    assert high == 1.0 and low == pytest.approx(mean - 2.093 * s / math.sqrt(20), abs=1e-3)


def test_reported_example_t_against_wilson() -> None:
    # 45 queries, mean recall 0.70: 27 at 0.7, 9 at 0.5, 9 at 0.9 (s = 0.128)
    values = [0.7] * 27 + [0.5] * 9 + [0.9] * 9
    assert float(np.mean(values)) == pytest.approx(0.70)
    low, high = recall_interval(values)
    assert (round(low, 2), round(high, 2)) == (0.66, 0.74)
    exp_low, exp_high = expected_interval(values, T_TABLE[(0.975, 44)])
    assert low == pytest.approx(exp_low, abs=1e-4) and high == pytest.approx(exp_high, abs=1e-4)
    # the old figure: the mean as one yes/no proportion over 45 (Wilson)
    old_low, old_high = wilson(0.70, 45)
    assert old_low == pytest.approx(0.56, abs=0.01) and old_high == pytest.approx(0.81, abs=0.01)
    assert (old_high - old_low) / (high - low) > 3


def test_coverage_of_the_interval_by_simulation() -> None:
    """2000 measurements of 50 per-query recalls@10 drawn from a known distribution over
    k/10: the 95% interval covers the true mean in 93-97% of them, its width is 2·t·s/√n,
    and the Wilson interval of the old approach would be about three times as wide."""
    support = np.array([0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    weights = np.array([0.05, 0.10, 0.20, 0.30, 0.20, 0.15])
    true_mean = float(support @ weights)  # 0.8
    n, runs = 50, 2000
    t = T_TABLE[(0.975, 49)]
    rng = np.random.default_rng(20260)
    covered = 0
    ratios, wilson_ratios = [], []
    for _ in range(runs):
        values = rng.choice(support, size=n, p=weights)
        low, high = recall_interval(values.tolist())
        covered += low <= true_mean <= high
        s = values.std(ddof=1)
        ratios.append((high - low) / (2 * t * s / math.sqrt(n)))
        old_low, old_high = wilson(float(values.mean()), n)
        wilson_ratios.append((old_high - old_low) / (high - low))
    assert 0.93 <= covered / runs <= 0.97, covered / runs
    assert np.allclose(ratios, 1.0, atol=1e-3)  # t from the table: 3 decimals
    assert float(np.median(wilson_ratios)) > 2.5


def test_merged_measurement_interval_from_every_query() -> None:
    # a result extended with more queries: its interval is the t interval of all of them
    first = RecallResult(10, [0.6, 0.8, 0.7, 0.9, 0.5] * 4, [1.0] * 20, [2.0] * 20)
    merged = RecallResult(10, first.per_query + [0.7, 0.8, 0.9, 0.6] * 10, [1.0] * 60, [2.0] * 60)
    for result, df in ((first, 19), (merged, 59)):
        t = numpy_t_quantile(0.975, df)
        assert result.interval == pytest.approx(expected_interval(result.per_query, t), abs=1e-6)
    assert result.std == pytest.approx(float(np.std(merged.per_query, ddof=1)))


# -- how it is shown --------------------------------------------------------------------------------
def test_summary_and_html_label_the_standard_deviation() -> None:
    values = [0.7] * 27 + [0.5] * 9 + [0.9] * 9
    result = RecallResult(10, values, [1.0] * 45, [2.0] * 45)
    s = float(np.std(values, ddof=1))
    low, high = expected_interval(values, T_TABLE[(0.975, 44)])
    text = repr(result)
    assert f"recall@10 0.70 (standard deviation {s:.2f}) over 45 queries" in text
    assert f"(95% interval {low:.2f}-{high:.2f}, min 0.50)" in text
    assert "±" not in text
    page = notebook.to_html(result)
    assert f"<th>standard deviation (per query)</th><td>{s:.3f}</td>" in page
    assert f"<th>95% interval</th><td>{low:.3f} – {high:.3f}</td>" in page
    assert "spread" not in page

    single = RecallResult(10, [0.8], [1.0], [2.0])
    assert "95% interval none from a single query" in repr(single)
    assert "<th>95% interval</th><td>none from a single query</td>" in notebook.to_html(single)


def test_sweep_chart_hover_shows_the_interval_or_none() -> None:
    import pandas as pd

    frame = pd.DataFrame(
        {
            "nprobes": [1, 2],
            "recall": [0.7, 0.8],
            "recall_low": [0.659, float("nan")],
            "recall_high": [0.741, float("nan")],
            "p50_ms": [1.0, 2.0],
            "brute_force": [False, False],
        }
    )
    fig = charts.sweep_figure(frame, ["nprobes"], 0.95)
    (setting,) = [t for t in fig.data if t.name == "setting"]
    assert [row[0] for row in setting.customdata] == ["0.659-0.741", "none from a single query"]
    assert "95% interval %{customdata[0]}" in setting.hovertemplate
