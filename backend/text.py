"""Small wording helpers shared by services and pages."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def is_digits(text: str) -> bool:
    """Whether ``text`` is one or more ASCII digits, a whole number as a person or a file
    name writes it: ``int`` reads it. ``str.isdigit`` also takes ``"²"``, which ``int``
    refuses, and other scripts' digits: every check of a number given as text is this one."""
    return text.isascii() and text.isdigit()


def plural(n: int, singular: str, many: str | None = None) -> str:
    """``1 version``, ``2 versions``, ``1 property``, ``3 properties`` (thousands separated)."""
    return f"{n:,} {singular if n == 1 else (many or singular + 's')}"


def verb(n: int, one: str, many: str) -> str:
    """The form of a verb agreeing with a count of ``n``: ``verb(1, "matches", "match")`` is
    ``"matches"``, ``verb(3, "is", "are")`` is ``"are"`` (the same rule as :func:`plural`: only
    exactly one is singular)."""
    return one if n == 1 else many


def some_of(items: Sequence[str], limit: int) -> str:
    """``a, b, c`` (at most ``limit`` items, then ``and N more``, thousands separated)."""
    more = f" and {len(items) - limit:,} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def capital(text: str) -> str:
    """``text`` with its first letter in upper case, the rest as it is (``"name is empty"`` →
    ``"Name is empty"``; ``capitalize`` would lower the rest)."""
    return text[:1].upper() + text[1:]


BYTE_UNITS: tuple[tuple[str, int], ...] = (
    ("bytes", 1),
    ("KiB", 1024),
    ("MiB", 1024**2),
    ("GiB", 1024**3),
    ("TiB", 1024**4),
)


def byte_unit(n: float) -> tuple[str, int]:
    """The unit :func:`human_bytes` shows ``n`` bytes in, as ``(name, bytes in one)``: bytes
    below 1 KiB, else the smallest unit whose count, to one decimal, is under 1,024 (TiB at
    most). A chart of sizes scales its axis by the unit of its largest value."""
    value = abs(float(n))
    if value < 1024:
        return BYTE_UNITS[0]
    for name, size in BYTE_UNITS[1:-1]:
        if round(value / size, 1) < 1024:  # as shown: 1,048,575 bytes is 1.0 MiB
            return name, size
    return BYTE_UNITS[-1]


def human_bytes(n: Any) -> str:
    """The one size formatter: ``512 bytes``, ``1.5 KiB``, ``12.0 MiB``, ``3.2 GiB``, ``1.1 TiB``
    (powers of 1024, :func:`byte_unit`); ``""`` for a missing size (``None`` or NaN). Grids
    show byte counts in this form too (``components.common.dataframe(..., sizes=...)``)."""
    if n is None:
        return ""
    try:
        value = float(n)
    except (TypeError, ValueError):
        return ""
    if math.isnan(value):
        return ""
    name, size = byte_unit(value)
    if size == 1:
        return f"{int(value):,} bytes"
    return f"{value / size:,.1f} {name}"


def bytes_exactly(n: int) -> str:
    """:func:`human_bytes` with the exact count beside it when they differ: ``280.0 KiB
    (286,720 bytes)``. For a size the page shows beside Streamlit's own form of it (a file
    uploader's chip says "286.7KB", in powers of 1000): the count settles which is which."""
    shown = human_bytes(n)
    return shown if byte_unit(n)[1] == 1 else f"{shown} ({int(n):,} bytes)"
