"""Row counts per version for the versions list (``versions.version_rows``): exact on the
local backend, over REST what the server says, else not known; never a wrong number."""

from __future__ import annotations

import json

import lance
import pandas as pd
import pyarrow as pa
import pytest

from backend.services import versions as vsv
from tests.support import InFlight, create_table, opened_versions, table_location

TID = ["t"]
NESTED = ["n", "t"]


def three_versions(ns, table_id: list[str] = TID) -> dict[int, int]:
    """v1: 3 rows, v2: 2 appended, v3: 1 deleted; the true count of each version."""
    if len(table_id) > 1:
        from lance_namespace import CreateNamespaceRequest

        ns.create_namespace(CreateNamespaceRequest(id=table_id[:-1]))
    create_table(ns, table_id, pa.table({"id": [1, 2, 3]}))
    ds = lance.dataset(str(table_location(ns, table_id)))
    ds.insert(pa.table({"id": [4, 5]}))
    ds.delete("id = 1")
    location = str(table_location(ns, table_id))
    truth = {v: lance.dataset(location, version=v).count_rows() for v in (1, 2, 3)}
    assert truth == {1: 3, 2: 5, 3: 4}
    return truth


@pytest.mark.parametrize("table_id", [TID, NESTED], ids=["root-level", "nested"])
def test_rows_of_each_version_are_exact(ns, table_id: list[str]) -> None:
    """Local: each manifest's summary. REST: DescribeTable's summary at each version (pylance's
    server gives one for root-level tables), else CountTableRows at that version (nested)."""
    truth = three_versions(ns, table_id)
    rows = vsv.version_rows(ns, table_id, [3, 2, 1], vsv.list_versions(ns, table_id))
    assert rows == truth


def test_rest_server_without_summaries_is_counted(rest_server) -> None:
    """A server whose DescribeTable carries no summary is asked once, then each version is
    counted (CountTableRows at it)."""
    import backend
    from tests.support import RewritingProxy

    asked: list[str] = []

    def no_summary(path: str, answer: dict) -> dict:
        asked.append(path)
        return {**answer, "metadata": {}}

    proxy = RewritingProxy(rest_server.url, {"/describe": no_summary})
    try:
        ns = backend.connect(proxy.url)
        truth = three_versions(ns)
        asked.clear()
        assert vsv.version_rows(ns, TID, [3, 2, 1]) == truth
        assert len(asked) == 1  # the first answer said the server gives no summary
    finally:
        proxy.stop()


def test_rest_counts_go_a_few_at_once(rest_server, monkeypatch) -> None:
    """Over REST each version not counted by a summary is one CountTableRows (a nested
    table: pylance's server gives no summary there): after the first, ``IN_FLIGHT`` at once,
    each the count lance gives of that version."""
    import time

    import backend
    from backend.rest.client import RestNamespaceClient
    from backend.spec.fanout import IN_FLIGHT

    ns = backend.connect(rest_server.url)
    truth = three_versions(ns, NESTED)
    location = str(table_location(ns, NESTED))
    ds = lance.dataset(location)
    for n in range(6):
        ds.insert(pa.table({"id": [10 + n]}))
    latest = lance.dataset(location).version
    truth = {v: lance.dataset(location, version=v).count_rows() for v in range(1, latest + 1)}
    gauge = InFlight(monkeypatch, RestNamespaceClient, "count_table_rows", delay=0.1)
    wanted = sorted(truth, reverse=True)
    started = time.monotonic()
    assert vsv.version_rows(ns, NESTED, wanted) == truth
    took = time.monotonic() - started
    assert gauge.calls == len(wanted) and gauge.most == IN_FLIGHT
    assert took < len(wanted) * 0.1  # the first alone, then rounds of four


def test_local_rows_open_the_table_at_the_highest_version_asked(local_root, monkeypatch) -> None:
    """The local backend reads the counts from the table opened at the highest version asked
    for (its manifest read by name: no listing of every version), at the latest where that
    version does not exist (its count then not known)."""
    import backend

    ns = backend.connect(str(local_root))
    truth = three_versions(ns)
    opened = opened_versions(monkeypatch)
    assert vsv.version_rows(ns, TID, [2, 1]) == {2: truth[2], 1: truth[1]}
    assert opened == [2]
    opened.clear()
    assert vsv.version_rows(ns, TID, [9, 3]) == {9: None, 3: truth[3]}
    assert opened == [9, None]


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


def test_facts_a_server_does_not_give_are_asked_for_once_a_minute(rest_server) -> None:
    """A server that counts no rows (CountTableRows without a count, for a nested table that
    DescribeTable gives no summary of) and whose DescribeTransaction answers what the client
    cannot read: ``VersionFacts.page`` asks for the three versions' facts once; a page run
    again within ``UNKNOWN_KEPT_S`` asks for none (each run of the Versions page did), and
    ``peek`` says nothing is missing; after it, they are asked for again. The counts stay
    ``None`` (never 0) and the operations say the lookup failed."""
    import backend
    from tests.support import RewritingProxy

    counted: list[str] = []
    described: list[str] = []

    def no_count(path: str, answer: dict) -> dict:
        counted.append(path)
        return {}

    def unreadable(path: str, answer: dict) -> dict:
        described.append(path)
        return {"status": 17}

    def describe(path: str, answer: dict) -> dict:  # DescribeTable's pass as they are
        return unreadable(path, answer) if "/transaction/" in path else answer

    proxy = RewritingProxy(rest_server.url, {"/count_rows": no_count, "/describe": describe})
    try:
        ns = backend.connect(proxy.url)
        three_versions(ns, NESTED)
        ids = {v: f"v{v}" for v in (3, 2, 1)}
        now = [0.0]
        facts = vsv.VersionFacts(clock=lambda: now[0])
        counted.clear()
        ops, counts = facts.page(ns, NESTED, ids)
        assert counts == {3: None, 2: None, 1: None}
        assert len(counted) == 3 and len(described) == 3
        assert ops["error"].notna().all()  # each lookup's failure, said
        now[0] = vsv.UNKNOWN_KEPT_S - 1
        again, counts = facts.page(ns, NESTED, ids)
        assert counts == {3: None, 2: None, 1: None}
        assert (len(counted), len(described)) == (3, 3)  # nothing asked again
        assert again["error"].tolist() == ops["error"].tolist()
        assert facts.peek(NESTED, ids)[2] == []  # nothing missing: known not to be given
        now[0] = vsv.UNKNOWN_KEPT_S + 1
        assert facts.peek(NESTED, ids)[2] == [3, 2, 1]
        facts.page(ns, NESTED, ids)
        assert (len(counted), len(described)) == (6, 6)  # a minute on: asked again
    finally:
        proxy.stop()
