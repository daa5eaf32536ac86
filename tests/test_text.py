"""backend.text: the one size formatter and plurals, as every page and message shows them."""

from __future__ import annotations

import math

import pytest

from backend.text import byte_unit, bytes_exactly, human_bytes, plural, some_of, verb


@pytest.mark.parametrize(
    ("n", "shown"),
    [
        (0, "0 bytes"),
        (1023, "1,023 bytes"),
        (1024, "1.0 KiB"),
        (1536, "1.5 KiB"),
        (5 * 1024**2, "5.0 MiB"),
        (1024**2 - 52, "1,023.9 KiB"),
        (1024**2 - 1, "1.0 MiB"),  # to one decimal it is 1,024.0 KiB: the next unit
        (3 * 1024**3 + 1024**3 // 5, "3.2 GiB"),
        (2048 * 1024**4, "2,048.0 TiB"),
        (None, ""),
        (math.nan, ""),
        ("not a size", ""),
    ],
)
def test_human_bytes(n: object, shown: str) -> None:
    assert human_bytes(n) == shown


@pytest.mark.parametrize(
    ("n", "unit"),
    [
        (0, ("bytes", 1)),
        (1023, ("bytes", 1)),
        (1024, ("KiB", 1024)),
        (3 * 1024**3, ("GiB", 1024**3)),
    ],
)
def test_byte_unit_is_the_unit_human_bytes_shows(n: int, unit: tuple[str, int]) -> None:
    assert byte_unit(n) == unit
    assert human_bytes(n).endswith(unit[0])


def test_bytes_exactly_adds_the_count_where_the_form_rounds() -> None:
    assert bytes_exactly(286_720) == "280.0 KiB (286,720 bytes)"
    assert bytes_exactly(512) == "512 bytes"


def test_some_of_names_a_few_then_counts_the_rest() -> None:
    assert some_of(["a", "b"], 5) == "a, b"
    assert some_of(["a", "b", "c"], 2) == "a, b and 1 more"
    assert some_of([str(i) for i in range(1_502)], 2) == "0, 1 and 1,500 more"


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
