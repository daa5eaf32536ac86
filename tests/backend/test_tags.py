"""Tags (backend.services.tags) on both real backends: create, list, move, resolve, delete,
and the refusals of bad names and missing versions."""

from __future__ import annotations

import pytest
from lance_namespace.errors import (
    InvalidInputError,
    TableVersionNotFoundError,
)

from backend.services import tags as tagsv


def test_tag_create_list_move_resolve_delete(ns, table) -> None:
    tagsv.create_tag(ns, table, "gold", 2)
    tagsv.create_tag(ns, table, "silver", 3)
    tags = tagsv.list_tags(ns, table)
    assert list(tags["tag"]) == ["gold", "silver"] and list(tags["version"]) == [2, 3]
    assert tagsv.tag_version(ns, table, "gold") == 2
    tagsv.move_tag(ns, table, "gold", 4)
    assert tagsv.tag_version(ns, table, "gold") == 4
    tagsv.delete_tag(ns, table, "silver")
    assert list(tagsv.list_tags(ns, table)["tag"]) == ["gold"]


@pytest.mark.parametrize("tag", ["", "a/b", "..", "bad tag", "x" * 200])
def test_bad_tag_names_are_refused(ns, table, tag) -> None:
    with pytest.raises(InvalidInputError):
        tagsv.create_tag(ns, table, tag, 2)
    assert tagsv.list_tags(ns, table).empty


def test_tag_on_a_missing_version_is_refused(ns, table) -> None:
    with pytest.raises(TableVersionNotFoundError):
        tagsv.create_tag(ns, table, "gold", 42)
    assert tagsv.list_tags(ns, table).empty
