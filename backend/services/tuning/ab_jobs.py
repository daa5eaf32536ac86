"""A comparison of vector index builds as a job: the ``build_ab`` kind of
``backend.services.jobs`` (registered when imported, with the services package).

The job runs ``tuning.build_ab`` (builds on a scratch copy of the table, then measured); its
progress is the comparison's, a cancel stops it at its next progress report, and its result
is the comparison's rows. Its parameters are ``build_ab``'s: :data:`AB_PARAMS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend.errors import invalid
from backend.services import jobs, tuning

AB_PARAMS = ("column", "configs", "sample_rows", "queries", "k")


def _build_ab(ns: Any, table_id: Any, params: dict[str, Any], ctx: jobs.JobContext) -> Any:
    """A comparison of vector index builds on a scratch copy (``tuning.build_ab``); a cancel
    stops it at its next progress report. Its result is the comparison's rows."""

    def progress(stage: str, fraction: float) -> None:
        ctx.check()
        ctx.progress(stage, fraction)

    # through the package's name, the notebook API's, which a test may replace
    return tuning.build_ab(ns, table_id, progress=progress, **params)


def _check_build_ab(ns: Any, table_id: Any, params: dict[str, Any]) -> dict[str, Any]:
    jobs.only_keys("build_ab", params, AB_PARAMS)
    if not isinstance(params.get("column"), str) or not params["column"]:
        raise invalid("a build comparison needs the vector column to build on")
    configs = params.get("configs")
    if not isinstance(configs, list) or not all(isinstance(c, Mapping) for c in configs):
        raise invalid("a build comparison's configs are a list of build parameters")
    for name in ("sample_rows", "queries", "k"):
        value = params.get(name, 1)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise invalid(f"a build comparison's {name} is a whole number of at least 1")
    return params


jobs.register_kind(
    "build_ab", _build_ab, operation="query_table", label="build comparison",
    validate=_check_build_ab,
)  # fmt: skip
