"""Tune vector indexes against measured recall and latency; a notebook API (no streamlit), one
module per feature:

* :mod:`.measure` - :func:`recall` (recall@k of ANN search against exact search over a seeded
  sample of the table's own rows, with latencies), :func:`more_queries` (another batch merged
  in), :func:`recall_interval` (the 95% confidence interval of a mean recall);
* :mod:`.sweeps` - :func:`sweep` (every combination of a grid of query parameters),
  :func:`pareto_front` and :func:`cheapest` (which settings are worth it; :func:`less_work`,
  which asks for less of the same work);
* :mod:`.builds` - :func:`build_ab` (index build configurations compared on a scratch copy);
* :mod:`.applied` - :func:`requested_vs_applied` (the build parameters asked for against
  those lance used);
* :mod:`.optimize` - the index and file maintenance calls;
* :mod:`.ab_jobs` - a build comparison as a job (the ``build_ab`` kind of
  ``backend.services.jobs``).

Everything goes through QueryTable, so it runs the same on the local backend and over REST::

    from backend.services import tuning
    r = tuning.recall(ns, ["docs", "notes"], column="vector", k=10, nprobes=8)
    print(r.mean, r.std, r.ann_p50_ms, r.exact_p50_ms)
    df = tuning.sweep(ns, ["docs", "notes"], column="vector", grid={"nprobes": [1, 4, 16]})

The names below are that documented notebook API (README, ``notebooks/tour.ipynb``); code in
this repository imports from the modules themselves.
"""

from __future__ import annotations

from backend.services.tuning.applied import requested_vs_applied
from backend.services.tuning.builds import build_ab
from backend.services.tuning.measure import (
    RecallResult,
    interval_text,
    more_queries,
    recall,
    recall_interval,
)
from backend.services.tuning.sweeps import (
    cheapest,
    less_work,
    pareto_front,
    setting_params,
    sweep,
)

__all__ = [
    "RecallResult",
    "build_ab",
    "cheapest",
    "interval_text",
    "less_work",
    "more_queries",
    "pareto_front",
    "recall",
    "recall_interval",
    "requested_vs_applied",
    "setting_params",
    "sweep",
]
