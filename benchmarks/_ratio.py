"""How sure one run's ratio of medians is: a paired bootstrap over the run's rounds.

Both benchmarks of the UI measure each page (or interaction) once per round, the pages of a
round one after the other, and compare medians. One run's median ratio moves by a few
hundredths from run to run; the interval says how far it could be off from this run's own
spread, so a ratio a little above or below its target reads as what it is."""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence


def ratio_interval(
    numerator: Sequence[float],
    denominator: Sequence[float],
    *,
    level: float = 0.90,
    draws: int = 2_000,
    seed: int = 0,
) -> tuple[float, float]:
    """The central ``level`` interval of median(numerator) / median(denominator) over
    ``draws`` resamples of the rounds (round *i* is ``numerator[i]`` with ``denominator[i]``,
    kept together: a slow stretch of the machine weighs on both). Seeded: the same times
    give the same interval."""
    if len(numerator) != len(denominator) or not numerator:
        raise ValueError("one time of each per round, and at least one round")
    if not 0 < level < 1:
        raise ValueError("level is a fraction between 0 and 1")
    rounds = len(numerator)
    pick = random.Random(seed)
    ratios = []
    for _ in range(draws):
        idx = [pick.randrange(rounds) for _ in range(rounds)]
        ratios.append(
            statistics.median(numerator[i] for i in idx)
            / statistics.median(denominator[i] for i in idx)
        )
    ratios.sort()
    tail = (1 - level) / 2
    low = ratios[int(tail * (draws - 1))]
    high = ratios[int(round((1 - tail) * (draws - 1)))]
    return low, high


def span(interval: tuple[float, float]) -> str:
    """``1.08-1.16``: an interval as both benchmarks print it beside the ratio."""
    low, high = interval
    return f"{low:.2f}-{high:.2f}"
