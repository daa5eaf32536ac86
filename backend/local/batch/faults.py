"""Fault injection for the batch protocol's tests.

``hook(step, phase, detail)`` runs before every file change of the protocol (and at a few
named points: ``"validated"``, ``"guard.wait"``). Tests use it to SIGKILL the process at
write #k, to inject an I/O error, or to hold a process at a barrier. ``None`` in production.
"""

from __future__ import annotations

from collections.abc import Callable

FaultHook = Callable[[int, str, str], None]
_hook: FaultHook | None = None


def set_fault_hook(hook: FaultHook | None) -> FaultHook | None:
    """Install ``hook`` (or remove it with ``None``); returns the previous hook."""
    global _hook
    previous, _hook = _hook, hook
    return previous


class Steps:
    """Numbers the protocol's file changes so that a test can stop at any of them."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self, phase: str, detail: str = "") -> None:
        self.n += 1
        hook = _hook
        if hook is not None:
            hook(self.n, phase, detail)


def fire(phase: str, detail: str = "") -> None:
    """A named point outside the numbered steps."""
    hook = _hook
    if hook is not None:
        hook(0, phase, detail)
