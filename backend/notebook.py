"""Notebook helpers: service results as readable HTML tables in Jupyter, secrets masked.

* :func:`to_html` - the HTML of a result: a ``lance_namespace`` response (or request) model,
  a dict, a dataclass of the services (``CleanupPlan``, ``DropPreview``, ...), a
  ``RecallResult`` (with its 95% interval), a DataFrame (sweeps, versions, overviews), a list.
* :func:`show` - a result wrapped for display: ``_repr_html_`` for Jupyter, a redacted
  ``repr`` for ``print`` and terminals. ``show(response)`` is the way to look at a response
  whose own ``repr`` (pydantic's) would print every field as it is.
* :func:`enable` - make every ``lance_namespace`` model render as :func:`to_html` in the
  running IPython kernel, so a cell ending in ``ns.describe_table(...)`` shows a table;
  ``offline_charts=True`` also draws the charts (``backend.services.charts``) without a network: plotly.js
  inline in the notebook, the Vega-Lite charts as SVG (with ``vl-convert-python`` installed),
  so a notebook saved or exported to HTML shows them anywhere.
* :func:`frame` - a listing response (ListNamespaces, ListTables, ListTableIndices, ...) as a
  DataFrame, one row per entry.

Masking is ``backend.redaction``'s one rule (``redact_json``): what the UI masks is masked
here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from . import html_tables, redaction
from .services.tuning import RecallResult

DEMO_DIR = Path(".lance-console") / "demo"


def project_root(start: Path | None = None) -> Path:
    """The console's project folder: the nearest folder from ``start`` (default: the working
    directory) upward that holds ``pyproject.toml`` and ``backend/``; else the folder of the
    installed ``backend`` package's parent when that is a project; else ``start``. A notebook
    started in ``notebooks/`` finds the project above it."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file() and (folder / "backend").is_dir():
            return folder
    installed = Path(__file__).resolve().parent.parent
    if (installed / "pyproject.toml").is_file():
        return installed
    return here


def default_demo_dir(start: Path | None = None) -> Path:
    """The demo folder ``make run`` uses, as an absolute path from :func:`project_root`."""
    return project_root(start) / DEMO_DIR


def to_html(value: Any, title: str | None = None) -> str:
    """The HTML table of a result, every secret masked (see the module docstring)."""
    if isinstance(value, Shown):
        value, title = value.value, title or value.title
    if isinstance(value, RecallResult):
        return value._repr_html_()
    return html_tables.to_html(value, title)


def to_text(value: Any) -> str:
    """The plain-text form of a result, secrets masked (what ``print(show(x))`` writes)."""
    if isinstance(value, (RecallResult, pd.DataFrame, pd.Series)):
        shown = html_tables.redact_frame(value) if isinstance(value, pd.DataFrame) else value
        return redaction.redact_text(str(shown))
    plain = html_tables.plain(value)
    name = type(value).__name__ if html_tables.named(value) else ""
    if isinstance(plain, Mapping):
        inner = ", ".join(f"{k}={v!r}" for k, v in plain.items())
        return redaction.redact_text(f"{name}({inner})" if name else "{" + inner + "}")
    return redaction.redact_text(str(plain))


class Shown:
    """A result with an HTML form for Jupyter and a redacted text form for ``print``."""

    def __init__(self, value: Any, title: str | None = None) -> None:
        self.value = value
        self.title = title

    def _repr_html_(self) -> str:
        return to_html(self.value, self.title)

    def __repr__(self) -> str:
        return to_text(self.value)

    __str__ = __repr__


def show(value: Any, title: str | None = None) -> Shown:
    """``value`` for display: the last expression of a cell renders it as an HTML table."""
    return value if isinstance(value, Shown) else Shown(value, title)


def frame(response: Any) -> pd.DataFrame:
    """A listing response as a DataFrame: ``namespaces`` / ``tables`` as an ``id`` column
    (the full id when the response says whose children they are), ``indexes`` one row per
    index description; anything else one row of the response's fields (redacted)."""
    data = redaction.redact_json(response)
    if not isinstance(data, Mapping):
        return pd.DataFrame({"value": list(data) if isinstance(data, list) else [data]})
    for key in ("namespaces", "tables"):
        if key in data and isinstance(data[key], list):
            return pd.DataFrame({"name": [str(v) for v in data[key]]})
    for key in ("indexes", "versions", "transactions"):
        if key in data and isinstance(data[key], list):
            return pd.DataFrame(
                [dict(v) if isinstance(v, Mapping) else {"value": v} for v in data[key]]
            )
    return pd.DataFrame(
        [
            {
                k: html_tables.cell_text(v) if isinstance(v, (list, Mapping)) else v
                for k, v in data.items()
            }
        ]
    )


def enable(shell: Any = None, *, offline_charts: bool = False) -> bool:
    """Render every ``lance_namespace`` model (requests and responses) as :func:`to_html` in
    the IPython kernel ``shell`` (the running one by default). False outside IPython.
    ``offline_charts``: charts that need no network (:func:`use_offline_charts`)."""
    if offline_charts:
        use_offline_charts()
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None:
        return False
    from pydantic import BaseModel

    def as_html(obj: Any) -> str | None:
        return to_html(obj) if _is_namespace_model(obj) else None  # None: IPython's own

    def as_text(obj: Any, printer: Any, cycle: bool) -> None:
        printer.text(to_text(obj) if _is_namespace_model(obj) else repr(obj))

    shell.display_formatter.formatters["text/html"].for_type(BaseModel, as_html)
    shell.display_formatter.formatters["text/plain"].for_type(BaseModel, as_text)
    return True


def use_offline_charts() -> list[str]:
    """Charts drawn without a network: plotly's figures carry plotly.js (the first one in
    the notebook) next to their JSON for JupyterLab; Altair's (the version timeline) render
    as SVG when ``vl_convert`` is installed, otherwise as Altair's default (Vega from a CDN).
    Returns the renderers set."""
    import plotly.io as pio

    pio.renderers.default = "plotly_mimetype+notebook"
    chosen = [pio.renderers.default]
    try:
        import vl_convert  # noqa: F401
    except ImportError:
        return chosen
    import altair as alt

    alt.renderers.enable("svg")
    return [*chosen, "altair:svg"]


def _is_namespace_model(obj: Any) -> bool:
    return type(obj).__module__.startswith(("lance_namespace", "backend"))
