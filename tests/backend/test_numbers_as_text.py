"""Numbers given as text (typed, linked, in answers, in file names): one check, ASCII digits
(``backend.text.is_digits``). ``str.isdigit`` also takes "²", which ``int`` refuses, and other
scripts' digits, which ``int`` reads: neither is a number the console was given."""

from __future__ import annotations

import httpx
import pytest
from lance_namespace import DescribeTableRequest
from lance_namespace import errors as lne

from backend.local.batch.catalog import parse_manifest_name
from backend.rest import RestNamespaceClient
from backend.rules.ids import tag_name_warning
from backend.spec.fields import INT64_MAX, whole_number
from backend.text import is_digits


def test_digits_are_ascii_digits() -> None:
    assert is_digits("0") and is_digits("12") and is_digits("007")
    for text in ("", "²", "١٢", "12a", "-1", "+1", " 1", "1.0", "１２"):  # the last: full width
        assert not is_digits(text), text


def test_a_whole_number_of_an_answer_is_one_a_count_can_be() -> None:
    for value, read in [
        (12, 12),
        ("12", 12),
        (" 12 ", 12),
        (0, 0),
        (INT64_MAX, INT64_MAX),
        (str(INT64_MAX), INT64_MAX),
        (INT64_MAX + 1, None),
        ("99999999999999999999", None),
        ("²", None),
        ("١٢", None),
        (-1, None),
        (True, None),
        (1.0, None),
        (None, None),
    ]:
        assert whole_number(value) == read, value


def test_names_in_other_digits_are_names() -> None:
    assert tag_name_warning("v12") is not None and "version 12" in str(tag_name_warning("v12"))
    assert tag_name_warning("²") is None  # was int("²"): ValueError
    assert tag_name_warning("v١") is None
    assert parse_manifest_name("².manifest") is None  # a stray file among the versions
    assert parse_manifest_name("3.manifest") == 3


def test_an_error_code_in_other_digits_is_no_code() -> None:
    """An error answer whose code is "²" is read by its HTTP status (404: not found), not
    turned into an invalid-input error blaming the user's request."""

    def server(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, json={"error": "Table t not found", "code": "²"})

    client = RestNamespaceClient(
        "http://ns.test", transport=httpx.MockTransport(server), max_retries=0
    )
    with pytest.raises(lne.LanceNamespaceError) as info:
        client.describe_table(DescribeTableRequest(id=["t"]))
    assert not isinstance(info.value, lne.InvalidInputError)
    assert "Table t not found" in str(info.value)
