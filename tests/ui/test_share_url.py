"""A vector search setting as the Search & tune page's URL query parameters and back
(``components.search.share_url``): round trips, refusals, a text in a shared link."""

from __future__ import annotations

import pytest
from lance_namespace.errors import InvalidInputError

from backend.rules import query_rules
from components.search.share_url import parse_share_params, share_params


def test_share_params_round_trip() -> None:
    params = {
        "distance_type": "cosine", "nprobes": 8, "minimum_nprobes": 2, "maximum_nprobes": 16,
        "refine_factor": 3, "ef": 64, "fast_search": True, "bypass_vector_index": False,
        "prefilter": True,
    }  # fmt: skip
    shared = share_params("vec", 10, {**params, "refine_factor": 3, "unknown": 1})
    assert all(isinstance(v, str) for v in shared.values())
    assert shared["fast_search"] == "true" and shared["bypass_vector_index"] == "false"
    assert "unknown" not in shared
    assert parse_share_params(shared) == {"column": "vec", "k": 10, **params}
    assert parse_share_params({**shared, "page": "search", "nprobes": ""})["k"] == 10
    assert "nprobes" not in parse_share_params({**shared, "nprobes": ""})
    assert share_params("vec", 5, {"nprobes": None}) == {"column": "vec", "k": "5"}


@pytest.mark.parametrize(
    "bad",
    [
        {"nprobes": "0"}, {"nprobes": "abc"}, {"nprobes": "1.5"}, {"fast_search": "maybe"},
        {"k": "0"}, {"distance_type": "manhattan"},
        {"minimum_nprobes": "9", "maximum_nprobes": "3"},
    ],
)  # fmt: skip
def test_parse_share_params_refuses(bad: dict) -> None:
    with pytest.raises(InvalidInputError):
        parse_share_params({"column": "vec", "k": "10", **bad})


def test_a_shared_text_round_trips() -> None:
    shared = share_params("vec", 5, {"nprobes": 2}, text="river mountain")
    assert shared["text"] == "river mountain"
    assert parse_share_params(shared) == {
        "column": "vec", "k": 5, "nprobes": 2, "text": "river mountain",
    }  # fmt: skip
    with pytest.raises(InvalidInputError, match="longer than"):
        parse_share_params({**shared, "text": "x" * (query_rules.MAX_QUERY_TEXT + 1)})
