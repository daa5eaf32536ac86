"""Properties (namespace, table, transaction metadata): parsing from forms and the caps.

* :func:`from_lines` - ``key=value`` lines (the batch builder's text areas);
* :func:`from_rows` - key/value rows of a data editor;
* :func:`properties_problem` / :func:`check_properties` - the caps every write applies before
  anything is touched: at most :data:`MAX_PROPERTIES` entries, keys of at most
  :data:`MAX_KEY_CHARS` characters without control characters, values of at most
  :data:`MAX_VALUE_CHARS`, and :data:`MAX_TOTAL_BYTES` in all.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from lance_namespace.errors import InvalidInputError

MAX_PROPERTIES = 256
MAX_KEY_CHARS = 256
MAX_VALUE_CHARS = 64 * 1024
MAX_TOTAL_BYTES = 1024 * 1024


def properties_problem(props: Any, what: str = "properties") -> str | None:
    """Why ``props`` cannot be stored (``None``: it can)."""
    if props is None:
        return None
    if not isinstance(props, Mapping):
        return f"{what} must be a mapping of strings, not {type(props).__name__}"
    if len(props) > MAX_PROPERTIES:
        return f"{what}: at most {MAX_PROPERTIES} entries, got {len(props)}"
    total = 0
    for key, value in props.items():
        if not isinstance(key, str) or not key.strip():
            return f"{what}: every key must be a non-empty string"
        if len(key) > MAX_KEY_CHARS:
            return f"{what}: the key {key[:40]!r}… is longer than {MAX_KEY_CHARS} characters"
        if any(unicodedata.category(c) == "Cc" for c in key):
            return f"{what}: the key {key[:40]!r} contains a control character"
        if not isinstance(value, str):
            return f"{what}: the value of {key!r} must be a string, not {type(value).__name__}"
        if len(value) > MAX_VALUE_CHARS:
            return f"{what}: the value of {key!r} is longer than {MAX_VALUE_CHARS:,} characters"
        total += len(key.encode("utf-8", "surrogatepass")) + len(
            value.encode("utf-8", "surrogatepass")
        )
    if total > MAX_TOTAL_BYTES:
        return f"{what}: {total:,} bytes in all; the limit is {MAX_TOTAL_BYTES:,}"
    return None


def check_properties(props: Any, what: str = "properties") -> dict[str, str] | None:
    """``props`` as a dict (``None`` stays ``None``), or ``InvalidInputError``."""
    problem = properties_problem(props, what)
    if problem:
        raise InvalidInputError(problem)
    return None if props is None else dict(props)


def from_lines(text: str | None) -> dict[str, str]:
    """``key=value`` lines -> dict (blank lines ignored); ``InvalidInputError`` on a line
    without ``=``, an empty key, or a key given twice."""
    out: dict[str, str] = {}
    for n, line in enumerate((text or "").splitlines(), start=1):
        if not line.strip():
            continue
        if "=" not in line:
            raise InvalidInputError(f"Line {n}: write key=value.")
        key, value = line.split("=", 1)
        key = key.strip()
        if not key:
            raise InvalidInputError(f"Line {n}: the key is empty.")
        if key in out:
            raise InvalidInputError(f"Line {n}: the key {key!r} is given twice.")
        out[key] = value.strip()
    return check_properties(out) or {}


def from_rows(rows: Any) -> dict[str, str]:
    """Key/value rows (a DataFrame or dicts with ``key`` and ``value``) -> dict. Fully blank
    rows are skipped; a value without a key, or a repeated key, is ``InvalidInputError``."""
    if rows is None:
        return {}
    records: Iterable[Mapping[str, Any]] = (
        rows.to_dict("records") if hasattr(rows, "to_dict") else list(rows)
    )
    out: dict[str, str] = {}
    for rec in records:
        key = _cell(rec.get("key")).strip()
        value = _cell(rec.get("value"))
        if not key and not value:
            continue
        if not key:
            raise InvalidInputError(f"The row with value {value!r} has no key.")
        if key in out:
            raise InvalidInputError(f"The key {key!r} is given twice.")
        out[key] = value
    return check_properties(out) or {}


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if type(value).__name__ == "NAType":  # pandas.NA in an edited grid
        return ""
    return str(value)
