"""When and how long the REST client waits before trying again.

Only read-only operations are retried (a write that timed out may have been applied), and only
on connection failures, 429 (throttled) and 503 (unavailable). Timeouts are not retried: the
server may be slow rather than gone, and the user waits long enough already. The delay is an
exponential backoff with full jitter, capped; a ``Retry-After`` header (seconds or an HTTP
date) replaces the backoff, up to the same cap.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from ..backoff import backoff_delay

RETRY_STATUSES = frozenset({429, 503})
DEFAULT_MAX_RETRIES = 3
DEFAULT_BACKOFF = 0.25  # seconds: the first backoff's upper bound; doubles each time
DEFAULT_RETRY_CAP = 10.0  # seconds: the longest one wait may be (backoff or Retry-After)
MAX_RETRIES_LIMIT = 10


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if seconds == seconds else None  # NaN is no answer
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


@dataclass(frozen=True)
class RetryPolicy:
    """``should_retry`` decides, ``delay`` says how long; ``sleep`` waits (tests replace it)."""

    max_retries: int = DEFAULT_MAX_RETRIES
    backoff: float = DEFAULT_BACKOFF
    cap: float = DEFAULT_RETRY_CAP
    jitter: bool = True
    sleep: Callable[[float], object] = time.sleep
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def should_retry(
        self,
        attempt: int,
        *,
        read_only: bool,
        response: httpx.Response | None = None,
        error: Exception | None = None,
    ) -> bool:
        """Whether attempt ``attempt`` (1-based) of an operation may be followed by another."""
        if not read_only or attempt > self.max_retries:
            return False
        if error is not None:
            return isinstance(error, httpx.TransportError) and not isinstance(
                error, httpx.TimeoutException
            )
        return response is not None and response.status_code in RETRY_STATUSES

    def delay(self, attempt: int, response: httpx.Response | None = None) -> float:
        """Seconds before attempt ``attempt + 1``: Retry-After (capped) or jittered backoff."""
        if response is not None:
            after = parse_retry_after(response.headers.get("retry-after"))
            if after is not None:
                return min(after, self.cap)
        return backoff_delay(attempt, self.backoff, self.cap, self.rng, jitter=self.jitter)

    def wait(self, attempt: int, response: httpx.Response | None = None) -> None:
        self.sleep(self.delay(attempt, response))
