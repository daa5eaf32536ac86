"""Statistics the console's figures need, in plain Python (no scipy): Student's t quantile and
the t confidence interval of a mean.

* :func:`t_quantile` - ``scipy.stats.t.ppf(p, df)`` for whole ``df``: the exact distribution
  function (Abramowitz & Stegun 26.7.3-4) inverted by bisection up to ``df`` 300, the
  Cornish-Fisher expansion (A&S 26.7.5, four terms, error below 1e-12) above;
* :func:`mean_interval` - mean ± t(1 - (1 - level)/2, n - 1) · s/√n over a sample of values.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence

import numpy as np

SERIES_MAX_DF = 300  # above: the Cornish-Fisher expansion


def _t_central(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with ``df`` degrees of freedom, ``t`` >= 0 (A&S 26.7.3-4)."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    s = math.sin(theta)
    if df % 2:  # odd: (2/pi)(theta + sin cos (1 + 2/3 cos^2 + 2*4/(3*5) cos^4 + ...))
        total, term = 0.0, math.cos(theta)
        for j in range(1, (df - 1) // 2 + 1):  # the terms up to cos^(df-2)
            total += term
            term *= c2 * (2 * j) / (2 * j + 1)
        return (2 / math.pi) * (theta + s * total)
    # even: sin (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ... up to cos^(df-2))
    total, term = 0.0, 1.0
    for j in range(1, df // 2 + 1):
        total += term
        term *= c2 * (2 * j - 1) / (2 * j)
    return s * total


def _cornish_fisher(p: float, df: int) -> float:
    x = statistics.NormalDist().inv_cdf(p)
    g1 = (x**3 + x) / 4
    g2 = (5 * x**5 + 16 * x**3 + 3 * x) / 96
    g3 = (3 * x**7 + 19 * x**5 + 17 * x**3 - 15 * x) / 384
    g4 = (79 * x**9 + 776 * x**7 + 1482 * x**5 - 1920 * x**3 - 945 * x) / 92160
    return x + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


@functools.lru_cache(maxsize=512)
def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t distribution with ``df`` (a whole number, at least 1)
    degrees of freedom: ``t_quantile(0.975, 9)`` is 2.2622."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must lie strictly between 0 and 1, got {p}")
    if int(df) != df or df < 1:
        raise ValueError(f"df must be a whole number of at least 1, got {df}")
    df = int(df)
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    if df > SERIES_MAX_DF:
        return _cornish_fisher(p, df)
    target = 2.0 * p - 1.0  # P(|T| <= t)
    low, high = 0.0, 1.0
    while _t_central(high, df) < target:
        low, high = high, high * 2.0
    while True:  # bisection to the last bit: stops when the midpoint is one of the ends
        mid = (low + high) / 2.0
        if mid in (low, high):
            return high
        if _t_central(mid, df) < target:
            low = mid
        else:
            high = mid


def mean_interval(values: Sequence[float], level: float) -> tuple[float, float]:
    """The ``level`` confidence interval of the mean of ``values``: mean ± t·s/√n, with s the
    sample standard deviation (n - 1), the mean computed as ``statistics.fmean`` does (fsum / n),
    and t the 1 - (1 - level)/2 quantile of Student's t with n - 1 degrees of freedom. Values
    all equal: the point itself. Fewer than two values:
    ``(nan, nan)`` (no spread to build an interval from)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"the confidence level must lie between 0 and 1, got {level}")
    n = len(values)
    if n < 2:
        return (float("nan"), float("nan"))
    array = np.asarray(values, dtype=float)
    mean = math.fsum(array) / n
    if array.min() == array.max():  # no spread: the mean (as computed here, fsum / n) itself
        return (mean, mean)
    half = t_quantile(0.5 + level / 2, n - 1) * float(array.std(ddof=1)) / math.sqrt(n)
    return (mean - half, mean + half)
