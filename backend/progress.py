"""Progress bars for long operations in notebooks and terminals (tqdm's ``tqdm.auto``: a
widget in Jupyter when ipywidgets is installed, a text bar otherwise).

:func:`progress_bar` returns a callable that every long operation accepts as ``progress``,
whatever the shape its events take:

* ``(done, total)`` - ``tuning.recall`` (queries), ``tuning.sweep`` (settings),
  ``imports.import_table`` (rows; ``total`` may be ``None``);
* ``(stage, fraction)`` - ``tuning.build_ab``;
* ``{"stage": ..., "completed": ..., "total": ..., "fraction": ...}`` - an index build's
  events (``index_overview.create_index(..., progress=...)``, lance's own progress events on
  the local backend; ``{"event": "params", "chosen": {...}}`` shows the chosen parameters).

The bar updates as events arrive and never waits on the display; it closes itself when the
operation reports completion, or use it as a context manager (``with progress_bar(...) as
bar: ...``).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Mapping
from typing import Any

with warnings.catch_warnings():
    # without ipywidgets tqdm.auto warns once and draws a text bar: good enough in a notebook
    warnings.simplefilter("ignore")
    from tqdm.auto import tqdm

FRACTION_STEPS = 1000  # a fraction in [0, 1] drawn as 0..1000


class ProgressBar:
    """A progress callback drawing a tqdm bar (see the module docstring)."""

    def __init__(self, total: int | None = None, desc: str = "", **tqdm_options: Any) -> None:
        self._lock = threading.Lock()
        # at most two redraws a second: a text bar in a notebook keeps every redraw as a line
        tqdm_options.setdefault("mininterval", 0.5)
        self.bar = tqdm(total=total, desc=desc, **tqdm_options)
        self.events = 0
        self.stage: str | None = None

    # the callback ----------------------------------------------------------------------------
    def __call__(self, first: Any, second: Any = None) -> None:
        with self._lock:
            self.events += 1
            if isinstance(first, Mapping):
                self._event(first)
            elif isinstance(first, str):
                self._fraction(float(second or 0.0), first)
            else:
                self._count(int(first), None if second is None else int(second))

    def _count(self, done: int, total: int | None) -> None:
        if total is not None and self.bar.total != total:
            self.bar.total = total
        self.bar.update(done - self.bar.n)
        if total is not None and done >= total:
            self.bar.refresh()

    def _fraction(self, fraction: float, stage: str | None) -> None:
        if self.bar.total != FRACTION_STEPS:
            self.bar.total = FRACTION_STEPS
            self.bar.bar_format = "{desc}: {percentage:3.0f}%|{bar}| {postfix}"
        if stage:
            self.stage = stage
            self.bar.set_postfix_str(stage, refresh=False)
        self.bar.update(round(min(1.0, max(0.0, fraction)) * FRACTION_STEPS) - self.bar.n)

    def _event(self, event: Mapping[str, Any]) -> None:
        stage = event.get("stage")
        if event.get("event") == "params" and event.get("chosen"):
            chosen = ", ".join(f"{k}={v}" for k, v in dict(event["chosen"]).items())
            self.bar.set_postfix_str(f"chosen {chosen}", refresh=False)
            self.bar.refresh()
            return
        completed, total = event.get("completed"), event.get("total")
        if completed is not None and total:
            # one bar across stages: each stage's share drawn as its fraction
            self._fraction(float(completed) / float(total), stage)
        elif event.get("fraction") is not None:
            self._fraction(float(event["fraction"]), stage)
        elif stage:
            self.stage = stage
            self.bar.set_postfix_str(str(stage))

    # the bar ---------------------------------------------------------------------------------
    @property
    def n(self) -> float:
        return self.bar.n

    @property
    def total(self) -> float | None:
        return self.bar.total

    def close(self) -> None:
        self.bar.close()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress_bar(total: int | None = None, desc: str = "", **tqdm_options: Any) -> ProgressBar:
    """A progress callback for ``progress=`` of recall, sweeps, imports, index builds and
    build A/B; ``tqdm_options`` go to tqdm (e.g. ``file=``, ``disable=``, ``leave=``)."""
    return ProgressBar(total, desc, **tqdm_options)
