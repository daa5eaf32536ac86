"""Reading a field of a spec model (the generated client's models) or of its dict form: the
console takes either wherever a request or a response is passed in. And reading the numbers
answers carry, which are untrusted: a count (:func:`whole_number`) and a time
(:func:`epoch_millis`) are read here, as not known where they cannot be one. The same readers
serve the records other writers reach (jobs, batches, staged changes, the audit log), with
the checks of their other values' kinds (:func:`is_number`, :func:`is_texts`)."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any, TypeGuard

from backend.text import is_digits

# The largest number a frame's ``Int64`` column (and lance's own signed counts) holds.
INT64_MAX = 2**63 - 1


def field_of(obj: Any, name: str, default: Any = None) -> Any:
    """``obj[name]`` of a dict, else the attribute ``name``; ``default`` when it is missing."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def whole_number(value: Any) -> int | None:
    """A whole number from 0 to :data:`INT64_MAX` from an answer's or a metadata value (``12``
    or ``"12"``, ASCII digits), else ``None``: not known. Answers are untrusted; a number no
    count can be (beyond what a frame holds) is not known either, never an error later."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and is_digits(value.strip()):
        value = int(value.strip())
    if isinstance(value, int):
        return value if 0 <= value <= INT64_MAX else None
    return None


# The last millisecond a time of the console's frames can hold (pandas' nanosecond times end
# on 11 April 2262).
LAST_MILLIS = 9_223_372_036_854


def epoch_millis(value: Any) -> int | None:
    """A time given in milliseconds since 1970 (a version's ``timestamp_millis`` in an answer,
    a stored record's ``updated_at``) when it is one: a whole number from 0 to
    :data:`LAST_MILLIS`; else ``None``, the time not known. Answers and stored records are
    untrusted: a time beyond the calendar is said as unknown where it is shown, never raised
    (every reader of such a time reads it here)."""
    millis = whole_number(value)
    return millis if millis is not None and millis <= LAST_MILLIS else None


def epoch_time(value: Any) -> datetime | None:
    """:func:`epoch_millis` as a UTC time (``None``: not known)."""
    millis = epoch_millis(value)
    return None if millis is None else datetime.fromtimestamp(millis / 1000, tz=UTC)


def is_number(value: Any) -> TypeGuard[int | float]:
    """A finite ``int`` or ``float`` (``True`` is no number here, nor NaN, infinity or an
    int beyond any float: 10**400 raised OverflowError where it was read as a time)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def is_texts(value: Any) -> TypeGuard[list[str]]:
    """A list of texts (an id's parts, a record's names)."""
    return isinstance(value, list) and all(isinstance(part, str) for part in value)
