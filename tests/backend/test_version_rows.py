"""Row counts per version for the versions list (``versions.version_rows``): exact on the
local backend, over REST what the server says, else not known; never a wrong number."""

from __future__ import annotations

import json

import lance
import pandas as pd
import pyarrow as pa

from backend.services import versions as vsv
from tests.support import create_table, table_location

TID = ["t"]


def three_versions(ns) -> dict[int, int]:
    """v1: 3 rows, v2: 2 appended, v3: 1 deleted; the true count of each version."""
    create_table(ns, TID, pa.table({"id": [1, 2, 3]}))
    ds = lance.dataset(str(table_location(ns, TID)))
    ds.insert(pa.table({"id": [4, 5]}))
    ds.delete("id = 1")
    truth = {
        v: lance.dataset(str(table_location(ns, TID)), version=v).count_rows() for v in (1, 2, 3)
    }
    assert truth == {1: 3, 2: 5, 3: 4}
    return truth


def test_rows_of_each_version_are_exact(ns) -> None:
    truth = three_versions(ns)
    rows = vsv.version_rows(ns, TID, [3, 2, 1], vsv.list_versions(ns, TID))
    assert set(rows) == {1, 2, 3}
    assert all(rows[v] is None or rows[v] == truth[v] for v in truth)  # never a wrong number
    # local: each manifest's summary; REST: DescribeTable's metadata at each version
    assert rows == truth


def test_rest_server_without_row_counts_gives_none(rest_server) -> None:
    """A server whose DescribeTable carries no summary: not known, asked once."""
    import backend
    from tests.support import RewritingProxy

    asked: list[str] = []

    def no_summary(path: str, answer: dict) -> dict:
        asked.append(path)
        return {**answer, "metadata": {}}

    proxy = RewritingProxy(rest_server.url, {"/describe": no_summary})
    try:
        ns = backend.connect(proxy.url)
        three_versions(ns)
        asked.clear()
        assert vsv.version_rows(ns, TID, [3, 2, 1]) == {3: None, 2: None, 1: None}
        assert len(asked) == 1  # the first answer said the server gives none
    finally:
        proxy.stop()


def test_rest_rows_come_from_the_listing_metadata_when_given() -> None:
    listed = pd.DataFrame({"version": [2, 1], "metadata": [json.dumps({"total_rows": "5"}), ""]})

    class NoDescribe:  # the listing answers: nothing else is asked for those versions
        def describe_table(self, _req):  # noqa: ANN001, ANN202
            raise AssertionError("asked DescribeTable for a version the listing counted")

    assert vsv.version_rows(NoDescribe(), TID, [2], listed) == {2: 5}  # type: ignore[arg-type]


def test_rows_and_tags_columns() -> None:
    frame = pd.DataFrame({"version": [3, 2, 1]})
    out = vsv.with_rows_and_tags(frame, {3: 4, 2: None, 1: 3}, {2: ["gold", "audit"]})
    assert out["rows"].tolist() == [4, pd.NA, 3]
    assert out["tags"].tolist() == ["", "audit, gold", ""]
    assert vsv.with_rows_and_tags(frame, {}, None)["tags"].isna().all()  # tags not listed
