"""benchmarks/_ratio.py: the interval printed beside each ratio of the UI benchmarks, checked
against the exact distribution of the resampled ratio (every resample of a few rounds)."""

from __future__ import annotations

import itertools
import statistics

import pytest

from benchmarks._ratio import ratio_interval, span


def every_resampled_ratio(num: list[float], den: list[float]) -> list[float]:
    """The ratio of medians of every resample of the rounds (each equally likely), sorted."""
    n = len(num)
    return sorted(
        statistics.median(num[i] for i in idx) / statistics.median(den[i] for i in idx)
        for idx in itertools.product(range(n), repeat=n)
    )


def test_the_interval_matches_the_exact_distribution_of_a_few_rounds() -> None:
    num = [110.0, 130.0, 100.0]
    den = [100.0, 105.0, 95.0]
    ratios = every_resampled_ratio(num, den)
    tail = 0.05  # a 90% interval
    low, high = ratio_interval(num, den, draws=20_000)
    # the bootstrap draws resamples at random: its quantiles fall within one step of the
    # exact ones (27 equally likely resamples here)
    k_low = int(tail * (len(ratios) - 1))
    k_high = round((1 - tail) * (len(ratios) - 1))
    assert ratios[max(0, k_low - 1)] <= low <= ratios[min(len(ratios) - 1, k_low + 1)]
    assert ratios[max(0, k_high - 1)] <= high <= ratios[min(len(ratios) - 1, k_high + 1)]
    assert min(ratios) <= low <= statistics.median(num) / statistics.median(den) <= high


def test_rounds_of_one_ratio_give_that_ratio_and_the_same_times_the_same_interval() -> None:
    num = [120.0, 240.0, 180.0, 60.0]
    den = [100.0, 200.0, 150.0, 50.0]
    assert ratio_interval(num, den) == pytest.approx((1.2, 1.2))
    spread = [101.0, 140.0, 97.0, 120.0, 133.0]
    base = [100.0, 100.0, 100.0, 100.0, 100.0]
    assert ratio_interval(spread, base) == ratio_interval(spread, base)
    low, high = ratio_interval(spread, base)
    assert 0.97 <= low < 1.20 < high <= 1.40
    assert span((low, high)) == f"{low:.2f}-{high:.2f}"
    assert span((0.9, 1.2)) == "0.90-1.20"  # two decimals, as the ratios beside it


def test_times_that_are_not_paired_are_refused() -> None:
    with pytest.raises(ValueError, match="one time of each per round"):
        ratio_interval([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="one time of each per round"):
        ratio_interval([], [])
    with pytest.raises(ValueError, match="fraction"):
        ratio_interval([1.0], [1.0], level=90)
