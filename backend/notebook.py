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

import dataclasses
import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from . import redaction

MAX_ROWS = 50  # rows of a DataFrame shown inline (the rest counted)
_STYLE = (
    "<style>.lnc-table{border-collapse:collapse;font-size:12px;margin:2px 0}"
    ".lnc-table th,.lnc-table td{border:1px solid #ddd;padding:2px 6px;text-align:left;"
    "vertical-align:top}.lnc-table th{background:#f5f5f5;font-weight:600}</style>"
)


# Where the launcher builds the demo, relative to the project (``lance-console``'s default).
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


def _named(value: Any) -> bool:
    """A model or a dataclass instance: shown under its class name."""
    return hasattr(value, "model_dump") or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    )


def _plain(value: Any) -> Any:
    """A JSON-like, redacted copy of ``value`` (models dumped, dataclasses as dicts)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (set, frozenset)):  # e.g. a capability's parameter names, in order
        value = sorted(value, key=str)
    return redaction.redact_json(value)


def _cell(value: Any) -> str:
    if isinstance(value, Mapping):
        return _kv_table(value) if value else "<i>{}</i>"
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        return _rows_table(value)
    if isinstance(value, list):
        return html.escape(", ".join(_text(v) for v in value)) if value else "<i>[]</i>"
    return html.escape(_text(value))


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return (
            "$".join(str(v) for v in value)
            if all(isinstance(v, str) for v in value)
            else str(value)
        )
    return "" if value is None else str(value)


def _kv_table(data: Mapping[str, Any], title: str | None = None) -> str:
    caption = (
        f"<caption style='text-align:left'><b>{html.escape(title)}</b></caption>" if title else ""
    )
    rows = "".join(
        f"<tr><th>{html.escape(str(k))}</th><td>{_cell(v)}</td></tr>" for k, v in data.items()
    )
    return f"<table class='lnc-table'>{caption}{rows}</table>"


def _rows_table(rows: Sequence[Mapping[str, Any]]) -> str:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    head = "".join(f"<th>{html.escape(k)}</th>" for k in keys)
    body = "".join(
        "<tr>" + "".join(f"<td>{_cell(r.get(k))}</td>" for k in keys) + "</tr>" for r in rows
    )
    return f"<table class='lnc-table'><tr>{head}</tr>{body}</table>"


def redact_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` with secret-named columns masked and dict/list cells redacted."""
    out = df.copy()
    for column in out.columns:
        if redaction.is_secret_name(column):
            out[column] = [redaction.mask_value(v) for v in out[column]]
        elif out[column].dtype == object:
            out[column] = [
                redaction.redact_json(v) if isinstance(v, (Mapping, list)) else v
                for v in out[column]
            ]
    return out


def _frame_html(df: pd.DataFrame, title: str | None = None) -> str:
    shown = redact_frame(df.head(MAX_ROWS))
    more = (
        f"<div><i>{len(df) - MAX_ROWS:,} more rows ({len(df):,} in all)</i></div>"
        if len(df) > MAX_ROWS
        else ""
    )
    caption = f"<div><b>{html.escape(title)}</b></div>" if title else ""
    return caption + shown.to_html(index=False, classes="lnc-table", border=0, na_rep="") + more


def _recall_html(result: Any) -> str:
    if not result.per_query:
        return _kv_table({"recall": f"recall@{result.k}: no queries"}, "Recall")
    low, high = result.interval
    data = {
        f"recall@{result.k}": f"{result.mean:.3f}",
        # the confidence interval of the mean, from the per-query recalls (Student's t)
        "95% interval": f"{low:.3f} – {high:.3f}" if low == low else "none from a single query",
        "standard deviation (per query)": f"{result.std:.3f}",
        "queries": len(result.per_query),
        "lowest query recall": f"{min(result.per_query):.3f}",
        "ANN p50 / p95 (ms)": f"{result.ann_p50_ms:.2f} / {result.ann_p95_ms:.2f}",
        "exact p50 (ms)": f"{result.exact_p50_ms:.2f}",
        "metric": result.metric or "",
        "brute force": result.brute_force or "no",
        "settings": redaction.redact_json(dict(result.query_params)) or "defaults",
    }
    return _kv_table(data, "Recall against exact search")


def to_html(value: Any, title: str | None = None) -> str:
    """The HTML table of a result, every secret masked (see the module docstring)."""
    from backend.services.tuning import RecallResult

    if isinstance(value, Shown):
        value, title = value.value, title or value.title
    if isinstance(value, RecallResult):
        body = _recall_html(value)
    elif isinstance(value, pd.DataFrame):
        body = _frame_html(value, title or value.attrs.get("title"))
    elif isinstance(value, pd.Series):
        body = _frame_html(value.to_frame().reset_index(), title)
    else:
        plain = _plain(value)
        if title is None and _named(value):
            title = type(value).__name__
        if isinstance(plain, Mapping):
            body = _kv_table(plain, title)
        elif isinstance(plain, list) and plain and all(isinstance(v, Mapping) for v in plain):
            body = _rows_table(plain)
        else:
            body = f"<pre>{html.escape(redaction.redact_text(_text(plain)))}</pre>"
    return _STYLE + body


def to_text(value: Any) -> str:
    """The plain-text form of a result, secrets masked (what ``print(show(x))`` writes)."""
    from backend.services.tuning import RecallResult

    if isinstance(value, (RecallResult, pd.DataFrame, pd.Series)):
        shown = redact_frame(value) if isinstance(value, pd.DataFrame) else value
        return redaction.redact_text(str(shown))
    plain = _plain(value)
    name = type(value).__name__ if _named(value) else ""
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
        [{k: _text(v) if isinstance(v, (list, Mapping)) else v for k, v in data.items()}]
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


__all__ = [
    "MAX_ROWS",
    "Shown",
    "enable",
    "frame",
    "redact_frame",
    "show",
    "to_html",
    "to_text",
    "use_offline_charts",
]
