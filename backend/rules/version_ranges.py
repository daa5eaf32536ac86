"""Version ranges: one syntax for people, the spec's form on the wire, one safety rule.

People write inclusive ranges: ``2-5, 8`` means versions 2, 3, 4, 5 and 8 (:func:`parse`,
:func:`format_spans`). The spec's ``VersionRange`` is start-inclusive, end-exclusive, with
``end_version = -1`` meaning "through the latest version" (:func:`to_spec`, :func:`from_spec`).

:func:`range_problems` is the rule every delete path applies (local backend, REST client,
batch commit, batch builder, Versions page): a start of at least 1, an end after the start,
and never the latest version unless the caller opts in explicitly.

:func:`tag_problems` is the second rule of every delete path: a range covering a tagged
version is refused, naming the tags (a tag must never point at a deleted version). The one
way past it is to delete those tags first (``delete_tags=True`` of
``backend.services.versions.delete_versions`` and of both backends'
``batch_delete_table_versions``): :func:`tags_to_delete` is that decision, made once for
every path (``backend.spec.catalog_views.clear_covered_tags`` reads the tags and deletes
what it names).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lance_namespace.errors import InvalidInputError
from lance_namespace_urllib3_client.models import VersionRange

THROUGH_LATEST = -1  # the spec's end_version meaning "through the latest version"
MAX_RANGES = 1000  # ranges in one request

_PART = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


@dataclass(frozen=True)
class Span:
    """Versions ``first`` to ``last`` inclusive."""

    first: int
    last: int

    def __str__(self) -> str:
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.first <= version <= self.last


def parse(text: str | None) -> list[Span]:
    """``"2-5, 8"`` -> ``[Span(2, 5), Span(8, 8)]``; ``InvalidInputError`` on bad input."""
    if not text or not text.strip():
        raise InvalidInputError("Enter versions, e.g. 2-5, 8.")
    spans = []
    for part in text.split(","):
        if not part.strip():
            continue
        m = _PART.match(part)
        if not m:
            raise InvalidInputError(
                f"{part.strip()!r} is not a version or a range: write 3 or 2-5 (inclusive)."
            )
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) else first
        if first < 1:
            raise InvalidInputError("Versions start at 1.")
        if last < first:
            raise InvalidInputError(f"The range {first}-{last} ends before it starts.")
        spans.append(Span(first, last))
    if not spans:
        raise InvalidInputError("Enter versions, e.g. 2-5, 8.")
    if len(spans) > MAX_RANGES:
        raise InvalidInputError(f"At most {MAX_RANGES} ranges at once.")
    return spans


def spans_of(versions: Iterable[int]) -> list[Span]:
    """The fewest inclusive spans covering exactly ``versions`` (``[1, 2, 3, 5]`` -> 1-3, 5)."""
    out: list[Span] = []
    for v in sorted({int(v) for v in versions}):
        if out and out[-1].last == v - 1:
            out[-1] = Span(out[-1].first, v)
        else:
            out.append(Span(v, v))
    return out


def format_spans(spans: Iterable[Span]) -> str:
    """``[Span(2, 5), Span(8, 8)]`` -> ``"2-5, 8"``."""
    return ", ".join(str(s) for s in spans)


def to_spec(spans: Iterable[Span]) -> list[VersionRange]:
    """Inclusive spans as the spec's end-exclusive ``VersionRange`` list."""
    return [VersionRange(start_version=s.first, end_version=s.last + 1) for s in spans]


def from_spec(ranges: Iterable[Any], latest: int | None = None) -> list[Span]:
    """Spec ranges (models, dicts or ``(start, end)`` pairs) as inclusive spans; ``-1`` ends at
    ``latest`` (or at the start, when the latest version is unknown)."""
    out = []
    for start, end in spec_pairs(ranges):
        last = (latest if latest is not None else start) if end == THROUGH_LATEST else end - 1
        out.append(Span(start, last))
    return out


def spec_pairs(ranges: Iterable[Any]) -> list[tuple[Any, Any]]:
    """``(start_version, end_version)`` of each spec range (model, dict or pair); the values
    are as given (:func:`range_problems` checks them)."""
    pairs: list[tuple[Any, Any]] = []
    for r in ranges:
        if isinstance(r, VersionRange):
            pairs.append((r.start_version, r.end_version))
        elif isinstance(r, dict):
            pairs.append(
                (
                    r.get("start_version", r.get("startVersion")),
                    r.get("end_version", r.get("endVersion")),
                )
            )
        else:
            start, end = r
            pairs.append((start, end))
    return pairs


def describe_spec(start: int, end: int) -> str:
    """A spec range for people: ``[2, 6)`` -> ``2-5``; ``[4, -1)`` -> ``4-latest``."""
    if end == THROUGH_LATEST:
        return f"{start}-latest"
    if end == start + 1:
        return str(start)
    return f"{start}-{end - 1}"


def range_problems(
    ranges: Sequence[Any],
    *,
    latest: int | None,
    allow_latest: bool = False,
) -> list[str]:
    """What forbids deleting the spec ranges ``ranges`` (empty list: nothing).

    Refused: no ranges; a start below 1; an end that is not after the start (other than -1);
    a range covering the latest version, unless ``allow_latest`` (deleting it rolls the table
    back to an older version, or leaves it unreadable).
    """
    pairs = spec_pairs(ranges)
    if not pairs:
        return ["No version ranges to delete."]
    if len(pairs) > MAX_RANGES:
        return [f"At most {MAX_RANGES} version ranges in one request, got {len(pairs)}."]
    problems = []
    for start, end in pairs:
        if not is_int(start) or not is_int(end):
            problems.append(f"Range [{start!r}, {end!r}): versions must be integers.")
            continue
        if start < 1:
            problems.append(f"Range [{start}, {end}): versions start at 1.")
            continue
        shown = describe_spec(start, end)
        if end != THROUGH_LATEST and end <= start:
            problems.append(
                f"Range [{start}, {end}) is empty or inverted: the start is inclusive and the "
                "end exclusive, so the end must be greater than the start."
            )
            continue
        covers = latest is not None and start <= latest and (end == THROUGH_LATEST or latest < end)
        if covers and not allow_latest:
            problems.append(
                f"Range {shown} covers version {latest}, the latest version: the table would "
                "roll back to an older version or become unreadable."
            )
    return problems


def check_ranges(ranges: Sequence[Any], *, latest: int | None, allow_latest: bool = False) -> None:
    """``InvalidInputError`` listing :func:`range_problems`, if any."""
    problems = range_problems(ranges, latest=latest, allow_latest=allow_latest)
    if problems:
        raise InvalidInputError(" ".join(problems))


def covered(versions: Iterable[int], ranges: Sequence[Any], latest: int | None = None) -> list[int]:
    """The ``versions`` that spec ``ranges`` cover (sorted)."""
    pairs = spec_pairs(ranges)
    out = []
    for v in versions:
        for start, end in pairs:
            if start <= v and (end == THROUGH_LATEST or v < end):
                out.append(int(v))
                break
    return sorted(out)


def covered_tags(
    ranges: Sequence[Any], tagged: Mapping[int, Sequence[str]], latest: int | None = None
) -> dict[int, list[str]]:
    """The tagged versions (``version -> tags``) that spec ``ranges`` cover."""
    hit = covered(tagged, ranges, latest)
    return {v: sorted(str(t) for t in tagged[v]) for v in hit}


def describe_tags(tags: Mapping[int, Sequence[str]]) -> str:
    """``{2: ["baseline"], 5: ["a", "b"]}`` -> ``"v2 (baseline), v5 (a, b)"``."""
    return ", ".join(f"v{v} ({', '.join(t)})" for v, t in sorted(tags.items()))


def tag_problems(
    ranges: Sequence[Any],
    tagged: Mapping[int, Sequence[str]],
    latest: int | None = None,
    *,
    opt_in: str | None = "delete_tags=True",
) -> list[str]:
    """What forbids deleting spec ``ranges`` because of tags: one message naming every tag
    on a covered version (empty list: no covered version is tagged). ``opt_in`` names the
    caller's way to delete the tags with the versions (``None``: it has none)."""
    hit = covered_tags(ranges, tagged, latest)
    if not hit:
        return []
    names = sorted({t for ts in hit.values() for t in ts})
    them = "that tag" if len(names) == 1 else "those tags"
    way = f", or delete the tags together with the versions ({opt_in})" if opt_in else ""
    return [
        f"Tagged versions are in the range: {describe_tags(hit)}. A tag must not point at a "
        f"deleted version: move or delete {them} first{way}. Nothing deleted."
    ]


def tags_to_delete(
    ranges: Sequence[Any],
    tagged: Mapping[int, Sequence[str]],
    latest: int | None = None,
    *,
    delete_tags: bool,
    opt_in: str | None = "delete_tags=True",
) -> dict[int, list[str]]:
    """The tags (``version -> tags``) that must be deleted before spec ``ranges`` are: none
    when no covered version is tagged. A covered tagged version without ``delete_tags`` is
    refused: ``InvalidInputError`` naming the tags and their versions (:func:`tag_problems`)."""
    doomed = covered_tags(ranges, tagged, latest)
    if doomed and not delete_tags:
        raise InvalidInputError(" ".join(tag_problems(ranges, tagged, latest, opt_in=opt_in)))
    return doomed


def is_int(value: Any) -> bool:
    """Whether ``value`` is an integer (a ``bool`` is not one, though Python counts it as one)."""
    return isinstance(value, int) and not isinstance(value, bool)


FIRST_VERSION = 1  # lance numbers a table's versions from 1
LAST_VERSION = 2**63 - 1  # and counts them in signed 64 bits


def version_problem(value: Any, what: str = "version") -> str | None:
    """Why ``value`` is not a table version number (``None``: it is). The one rule for every
    version a request, a batch operation, a restore, a tag or an export names: a whole
    number from 1 to 2^63 - 1 (ranges apply it to their start, :func:`range_problems`)."""
    if not is_int(value) or value < FIRST_VERSION:
        return f"{what} must be a version number ({FIRST_VERSION} or more), got {value!r}"
    if value > LAST_VERSION:
        return f"{what} must be a version number (at most 2^63 - 1), got {value:,}"
    return None


# A cleanup of old versions (lance's ``cleanup_old_versions``) keeps the versions of the last N
# days, N from 0 to a hundred years; the latest and every tagged version stay whatever N.
MAX_KEEP_DAYS = 36_500


def keep_days_problem(value: Any, what: str = "older_than_days") -> str | None:
    """Why ``value`` is not a number of days a cleanup keeps (``None``: it is): a whole
    number from 0 to :data:`MAX_KEEP_DAYS`."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not is_int(value):
        return f"{what} must be a whole number of days from 0 to {MAX_KEEP_DAYS:,}, not {value!r}"
    if not 0 <= value <= MAX_KEEP_DAYS:
        return f"{what} must be from 0 to {MAX_KEEP_DAYS:,} days, not {value:,}"
    return None
