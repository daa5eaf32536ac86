"""Results as HTML tables, every secret masked: what a result's ``_repr_html_`` shows in
Jupyter (the services' dataclasses call :func:`to_html`) and what ``backend.notebook`` renders.

* :func:`to_html` - a ``lance_namespace`` model, a dict, a dataclass, a DataFrame (the first
  :data:`MAX_ROWS` rows, the rest counted), a list of dicts, or anything else as text;
* :func:`kv_table` - a mapping as a two-column table;
* :func:`redact_frame` - a DataFrame with secret-named columns masked;
* :class:`FieldsTable` - a base for dataclasses whose ``_repr_html_`` is :func:`to_html`.

Masking is ``backend.redaction``'s one rule (``redact_json``).
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from . import redaction

MAX_ROWS = 50  # rows of a DataFrame shown inline (the rest counted)
STYLE = (
    "<style>.lnc-table{border-collapse:collapse;font-size:12px;margin:2px 0}"
    ".lnc-table th,.lnc-table td{border:1px solid #ddd;padding:2px 6px;text-align:left;"
    "vertical-align:top}.lnc-table th{background:#f5f5f5;font-weight:600}</style>"
)


# Where the launcher builds the demo, relative to the project (``lance-console``'s default).


def named(value: Any) -> bool:
    """A model or a dataclass instance: shown under its class name."""
    return hasattr(value, "model_dump") or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    )


def plain(value: Any) -> Any:
    """A JSON-like, redacted copy of ``value`` (models dumped, dataclasses as dicts)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (set, frozenset)):  # e.g. a capability's parameter names, in order
        value = sorted(value, key=str)
    return redaction.redact_json(value)


def _cell(value: Any) -> str:
    if isinstance(value, Mapping):
        return kv_table(value) if value else "<i>{}</i>"
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        return _rows_table(value)
    if isinstance(value, list):
        return html.escape(", ".join(cell_text(v) for v in value)) if value else "<i>[]</i>"
    return html.escape(cell_text(value))


def cell_text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return (
            "$".join(str(v) for v in value)
            if all(isinstance(v, str) for v in value)
            else str(value)
        )
    return "" if value is None else str(value)


def kv_table(data: Mapping[str, Any], title: str | None = None) -> str:
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


def to_html(value: Any, title: str | None = None) -> str:
    """The HTML table of ``value``, every secret masked (see the module docstring)."""
    if isinstance(value, pd.DataFrame):
        body = _frame_html(value, title or value.attrs.get("title"))
    elif isinstance(value, pd.Series):
        body = _frame_html(value.to_frame().reset_index(), title)
    else:
        shown = plain(value)
        if title is None and named(value):
            title = type(value).__name__
        if isinstance(shown, Mapping):
            body = kv_table(shown, title)
        elif isinstance(shown, list) and shown and all(isinstance(v, Mapping) for v in shown):
            body = _rows_table(shown)
        else:
            body = f"<pre>{html.escape(redaction.redact_text(cell_text(shown)))}</pre>"
    return STYLE + body


class FieldsTable:
    """A base for the services' dataclasses: Jupyter shows an instance as :func:`to_html` does,
    its fields as a table under its class name, secrets masked."""

    def _repr_html_(self) -> str:
        return to_html(self)
