"""Restoring a version (backend.services.restore) on both real backends: a new version with
the old content, refusals that change nothing, and the indexes a restore leaves behind (the
offer to build them again, its answer kept)."""

from __future__ import annotations

import pytest
from lance_namespace import (
    CreateNamespaceRequest,
)
from lance_namespace.errors import (
    InvalidInputError,
    TableVersionNotFoundError,
)

import backend
from backend.services import restore as restoresv
from tests.support import (
    append_rows,
    create_table,
    make_table,
    row_count,
    version_numbers,
)


def test_restore_makes_a_new_version_with_the_old_content(ns, table) -> None:
    restoresv.restore_version(ns, table, 2)
    assert version_numbers(ns, table) == [1, 2, 3, 4, 5]
    assert row_count(ns, table) == 6  # v2's content, now as v5


@pytest.mark.parametrize(
    ("version", "error"),
    [(4, InvalidInputError), (0, InvalidInputError), (99, TableVersionNotFoundError)],
)
def test_restore_refusals_change_nothing(ns, table, version, error) -> None:
    with pytest.raises(error):
        restoresv.restore_version(ns, table, version)
    assert version_numbers(ns, table) == [1, 2, 3, 4]


def test_append_after_restore_builds_on_the_restored_content(ns, table) -> None:
    restoresv.restore_version(ns, table, 1)
    append_rows(ns, table, make_table(1, start=100))
    assert row_count(ns, table) == 4 and version_numbers(ns, table) == [1, 2, 3, 4, 5, 6]


def test_a_restore_says_which_indexes_it_leaves_behind_and_builds_them_again(ns) -> None:
    """indexes_lost_by_restore: the latest version's indexes that the restored version lacks
    (with the recorded build parameters on the local backend); rebuild_requests builds them
    again on the restored version, under the same names."""
    from lance_namespace import CreateTableIndexRequest, ListTableIndicesRequest

    from backend.services import index_overview

    ns.create_namespace(CreateNamespaceRequest(id=["r"]))
    table = ["r", "t"]
    create_table(ns, table, make_table(300, dim=8))  # v1
    ns.create_table_scalar_index(
        CreateTableIndexRequest(id=table, column="id", index_type="BTREE", name="id_btree")
    )  # v2
    ns.create_table_index(
        CreateTableIndexRequest(
            id=table, column="vec", index_type="IVF_FLAT", name="vec_ivf", num_partitions=1
        )
    )  # v3
    assert restoresv.indexes_lost_by_restore(ns, table, 3 - 1) == [
        restoresv.LostIndex(
            "vec_ivf",
            "IVF_FLAT",
            "vec",
            {"num_partitions": 1},  # as asked (both backends keep the console's requests)
        )
    ]
    lost = restoresv.indexes_lost_by_restore(ns, table, 1)
    assert [(ix.name, ix.index_type, ix.column) for ix in lost] == [
        ("id_btree", "BTREE", "id"),
        ("vec_ivf", "IVF_FLAT", "vec"),
    ]
    restoresv.restore_version(ns, table, 1)  # v4: v1's content, no index
    listed = ns.list_table_indices(ListTableIndicesRequest(id=table)).indexes
    assert listed == []
    for request in restoresv.rebuild_requests(table, lost):
        index_overview.create_index(ns, request)
    after = ns.list_table_indices(ListTableIndicesRequest(id=table)).indexes
    assert sorted(ix.index_name for ix in after) == ["id_btree", "vec_ivf"]
    assert restoresv.indexes_lost_by_restore(ns, table, 3) == []  # nothing left behind now


def test_the_rebuild_offer_is_derived_from_the_history_and_its_answer_is_kept(
    ns, backend_kind: str
) -> None:
    """rebuild_offer reads the table's history: the latest version is a restore (lance's
    transaction) lacking indexes the version before had. A later session (a new client)
    derives it again; an answer ends it for every later session where the namespace keeps
    the console's records (local roots), for the caller's session only over REST."""
    import lance
    from lance_namespace import CreateTableIndexRequest, DescribeTableRequest

    ns.create_namespace(CreateNamespaceRequest(id=["r"]))
    table = ["r", "t"]
    create_table(ns, table, make_table(50))  # v1
    ns.create_table_scalar_index(
        CreateTableIndexRequest(id=table, column="id", index_type="BTREE", name="id_btree")
    )  # v2
    assert restoresv.rebuild_offer(ns, table) is None  # the latest version is no restore
    restoresv.restore_version(ns, table, 1)  # v3: v1's content, no index
    offer = restoresv.rebuild_offer(ns, table)
    assert offer is not None
    location = ns.describe_table(DescribeTableRequest(id=table)).location
    txn = lance.dataset(location).read_transaction(3)  # lance's own record of the restore
    assert (offer.version, offer.previous, offer.restore_uuid) == (3, 2, txn.uuid)
    assert [(ix.name, ix.index_type, ix.column) for ix in offer.lost] == [
        ("id_btree", "BTREE", "id")
    ]
    if backend_kind == "local":
        assert offer.restored == txn.operation.version == 1
        assert offer.describe() == "The restore of v1 left 1 index behind: id_btree (BTREE on id)."
    else:
        assert offer.restored is None  # the spec's transaction does not say which version
        assert offer.describe().startswith("The restore that made v3 left 1 index behind")

    with pytest.raises(InvalidInputError):
        restoresv.answer_rebuild_offer(ns, offer, "maybe")
    kept = restoresv.answer_rebuild_offer(ns, offer, restoresv.DECLINED)
    assert kept is (backend_kind == "local")
    if kept:
        assert restoresv.rebuild_offer(ns, table) is None
        assert restoresv.rebuild_answer(ns, table)["answer"] == restoresv.DECLINED
        later = backend.connect(str(ns.root))  # another session on the same root
        assert restoresv.rebuild_offer(later, table) is None
    else:
        assert restoresv.rebuild_offer(ns, table) == offer  # the page keeps the answer per session

    # a second restore is a new question, even after an answer to the first one
    restoresv.restore_version(ns, table, 2)  # v4: v2's content, with its index
    assert restoresv.rebuild_offer(ns, table) is None  # nothing left behind
    restoresv.restore_version(ns, table, 1)  # v5: lacks the index v4 has
    again = restoresv.rebuild_offer(ns, table)
    assert again is not None and again.version == 5 and again.restore_uuid != offer.restore_uuid
