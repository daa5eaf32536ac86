"""Whole numbers typed into a form: the one parse of the console's number fields.

A form field is a text box, so what was typed reaches the rule as typed: an out-of-range or
malformed value is refused with a message naming the field and its range, never replaced by
a default or clamped. The ranges themselves belong to the rule of the request the field
fills (``query_rules.RANGES``, ``index_rules.param_range``).
"""

from __future__ import annotations

from backend.text import is_digits

MAX_TYPED_DIGITS = 40  # longer text is not read as a number (Python caps int() of text)


def range_text(low: int, high: int) -> str:
    """``between 1 and 10,000``."""
    return f"between {low:,} and {high:,}"


def whole_number(
    name: str, text: object, low: int, high: int, *, required: bool = False
) -> tuple[int | None, str | None]:
    """``(value, None)`` for a whole number typed within ``low``..``high``; ``(None, None)``
    for an empty field that may stay empty; else ``(None, problem)``, the problem naming
    ``name`` and the allowed range."""
    typed = "" if text is None else str(text).strip()
    allowed = range_text(low, high)
    if not typed:
        if required:
            return None, f"{name} is required: a whole number {allowed}"
        return None, None
    digits = typed[1:] if typed[0] in "+-" else typed
    if not is_digits(digits):
        return None, f"{name} must be a whole number {allowed}, got {typed!r}"
    if len(digits) > MAX_TYPED_DIGITS:
        return None, f"{name} must be {allowed}, got a number of {len(digits)} digits"
    value = int(typed)
    if not low <= value <= high:
        return None, f"{name} must be {allowed}, got {value:,}"
    return value, None
