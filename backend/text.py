"""Small wording helpers shared by services and pages."""

from __future__ import annotations

import math
from typing import Any


def plural(n: int, singular: str, many: str | None = None) -> str:
    """``1 version``, ``2 versions``, ``1 property``, ``3 properties`` (thousands separated)."""
    return f"{n:,} {singular if n == 1 else (many or singular + 's')}"


def verb(n: int, one: str, many: str) -> str:
    """The form of a verb agreeing with a count of ``n``: ``verb(1, "matches", "match")`` is
    ``"matches"``, ``verb(3, "is", "are")`` is ``"are"`` (the same rule as :func:`plural`: only
    exactly one is singular)."""
    return one if n == 1 else many


def capital(text: str) -> str:
    """``text`` with its first letter in upper case, the rest as it is (``"name is empty"`` →
    ``"Name is empty"``; ``capitalize`` would lower the rest)."""
    return text[:1].upper() + text[1:]


def human_bytes(n: Any) -> str:
    """The one size formatter: ``512 bytes``, ``1.5 KiB``, ``12.0 MiB``, ``3.2 GiB``, ``1.1 TiB``
    (powers of 1024); ``""`` for a missing size (``None`` or NaN)."""
    if n is None:
        return ""
    try:
        value = float(n)
    except (TypeError, ValueError):
        return ""
    if math.isnan(value):
        return ""
    if abs(value) < 1024:
        return f"{int(value):,} bytes"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:,.1f} {unit}"
    raise AssertionError("unreachable")  # pragma: no cover
