"""Exponential backoff with full jitter: the one rule for how long a retry waits.

Attempt ``n`` (1-based) is followed by a wait drawn uniformly from ``[0, min(base * 2**(n-1),
cap)]`` (without jitter: the upper bound itself). The REST client's retries
(``backend.rest.retry``) and the batch commit's catalog retries
(``backend.local.batch.catalog``) both wait this way.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field


def backoff_ceiling(attempt: int, base: float, cap: float) -> float:
    """The longest wait after attempt ``attempt`` (1-based)."""
    return min(base * (2 ** max(0, attempt - 1)), cap)


def backoff_delay(
    attempt: int, base: float, cap: float, rng: random.Random, *, jitter: bool = True
) -> float:
    """Seconds to wait after attempt ``attempt``: full jitter below the ceiling."""
    ceiling = backoff_ceiling(attempt, base, cap)
    return rng.uniform(0.0, ceiling) if jitter else ceiling


@dataclass(frozen=True)
class Backoff:
    """At most ``attempts`` tries of one thing, waiting :func:`backoff_delay` between them."""

    attempts: int = 8
    base: float = 0.02  # seconds: the first wait's upper bound; doubles each time
    cap: float = 1.0  # seconds: the longest one wait may be
    jitter: bool = True
    sleep: Callable[[float], object] = time.sleep
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def delay(self, attempt: int) -> float:
        return backoff_delay(attempt, self.base, self.cap, self.rng, jitter=self.jitter)

    def may_retry(self, attempt: int) -> bool:
        """Whether attempt ``attempt`` (1-based) may be followed by another."""
        return attempt < self.attempts

    def wait(self, attempt: int) -> None:
        self.sleep(self.delay(attempt))
