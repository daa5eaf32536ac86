"""``backend.spec.fanout.each``: a plain loop's answers and errors, a few calls at once."""

from __future__ import annotations

import contextvars
import threading
import time

import pytest

from backend.spec import fanout

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


class Gauge:
    """Counts the calls running at once; each holds for ``delay`` seconds."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.now = self.most = 0
        self.lock = threading.Lock()

    def __call__(self, item: int) -> tuple[int, str]:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            time.sleep(self.delay)
            return item * item, WHO.get()
        finally:
            with self.lock:
                self.now -= 1


def test_answers_in_order_a_few_at_once_in_the_callers_context() -> None:
    gauge = Gauge(0.05)
    WHO.set("alice")
    started = time.monotonic()
    got = fanout.each(gauge, range(10))
    took = time.monotonic() - started
    assert got == [(i * i, "alice") for i in range(10)]
    assert gauge.most == fanout.IN_FLIGHT
    assert took < 10 * 0.05  # three rounds of four, not ten calls one after another


def test_the_first_error_in_order_is_raised_once_every_call_has_ended() -> None:
    ended: list[int] = []

    def call(item: int) -> int:
        time.sleep(0.02 * (5 - item))  # the later items end first
        ended.append(item)
        if item in (1, 3):
            raise ValueError(f"item {item}")
        return item

    with pytest.raises(ValueError, match="item 1"):
        fanout.each(call, range(5))
    assert sorted(ended) == [0, 1, 2, 3, 4]


def test_a_call_from_the_pools_own_thread_runs_its_items_there() -> None:
    """Items fanned out from within a fanned-out call run one by one in that thread: with every
    pool thread waiting on the pool, nothing would run."""

    def outer(item: int) -> list[str]:
        return fanout.each(lambda _: threading.current_thread().name, range(3))

    names = fanout.each(outer, range(fanout.IN_FLIGHT * 2))
    assert all(len(set(inner)) == 1 for inner in names)  # each inner loop in one thread


def test_one_item_or_none_runs_in_the_callers_thread() -> None:
    me = threading.current_thread().name
    assert fanout.each(lambda _: threading.current_thread().name, [1]) == [me]
    assert fanout.each(lambda _: 1, []) == []
