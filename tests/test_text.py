"""backend.text: the one size formatter and plurals, as every page and message shows them."""

from __future__ import annotations

import math

import pytest

from backend.text import human_bytes, plural, verb


@pytest.mark.parametrize(
    ("n", "shown"),
    [
        (0, "0 bytes"),
        (1023, "1,023 bytes"),
        (1024, "1.0 KiB"),
        (1536, "1.5 KiB"),
        (5 * 1024**2, "5.0 MiB"),
        (3 * 1024**3 + 1024**3 // 5, "3.2 GiB"),
        (2048 * 1024**4, "2,048.0 TiB"),
        (None, ""),
        (math.nan, ""),
        ("not a size", ""),
    ],
)
def test_human_bytes(n: object, shown: str) -> None:
    assert human_bytes(n) == shown


def test_plural() -> None:
    assert plural(1, "version") == "1 version"
    assert plural(2_000, "property", "properties") == "2,000 properties"


def test_verb_agrees_with_the_count_as_plural_does() -> None:
    for n in (0, 1, 2, 1_000):
        noun = plural(n, "row")
        said = f"{noun} {verb(n, 'matches', 'match')}"
        assert said == ("1 row matches" if n == 1 else f"{n:,} rows match")
    assert verb(1, "is", "are") == "is"
    assert verb(0, "is", "are") == "are"
