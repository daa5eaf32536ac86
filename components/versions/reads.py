"""Cached reads of a table's versions, per connection and table (data from
``backend.services.versions``): the latest, the listing, one version, a comparison.
"""

from __future__ import annotations

import contextvars
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, NamedTuple, cast

import pandas as pd
import streamlit as st
from lance_namespace.errors import TableVersionNotFoundError

from backend.services import version_compare as vcmp
from backend.services import versions as vsv
from backend.spec.paging import PAGE_SIZE, Listing, Page
from components.cache import cached, shared, table_scope


@cached(table_scope, ttl=3, max_entries=256)
def _latest_recent(ns: Any, table_id: tuple[str, ...]) -> int | None:
    return vsv.latest_version(ns, list(table_id))


@cached(lambda table_id, stamp: table_scope(table_id), ttl=600, max_entries=256)
def _latest_at(ns: Any, table_id: tuple[str, ...], stamp: Any) -> int | None:
    return vsv.latest_version(ns, list(table_id))


def latest_version(table_id: tuple[str, ...], *, fresh: bool = False) -> int | None:
    """The table's newest version: read again whenever the backend's stamp of the table's
    versions changes (the local backend: its ``_versions`` directory, a ``stat``); without a
    stamp, a few seconds fresh (one DescribeTable), or read now with ``fresh`` (a commit from
    anywhere is seen at once)."""
    return latest_and_stamp(table_id, fresh=fresh)[0]


def latest_and_stamp(table_id: tuple[str, ...], *, fresh: bool = False) -> tuple[int | None, Any]:
    """:func:`latest_version` and the stamp it was read under (``None``: the backend has none
    for this table now): together they name the table's state, where a version number alone
    does not for good (a table dropped and made again)."""
    from components.session import get_namespace

    ns = get_namespace()
    stamp = vsv.version_stamp(ns, table_id)
    if stamp is None:
        latest = vsv.latest_version(ns, list(table_id)) if fresh else _latest_recent(table_id)
        return latest, None
    return _latest_at(table_id, stamp), stamp


@shared(lambda table_id, latest: table_scope(table_id), ttl=600, max_entries=64)
def _listing_at(ns: Any, table_id: tuple[str, ...], latest: int | None) -> Listing:
    return vsv.version_listing(ns, table_id)


def newest_versions(table_id: tuple[str, ...]) -> Listing:
    """The table's versions newest first, read as far as the first page of the list (a
    request of ``LIST_BATCH`` versions: a small table's whole history). Checking the latest
    version takes milliseconds: the listing is kept, and read further page by page, while the
    latest version is unchanged (a new commit lists again; our writes clear it; old versions
    deleted by another process show within ten minutes)."""
    return _listing_at(table_id, latest_version(table_id)).ensure(PAGE_SIZE + 1)


def listed_latest(versions: Listing) -> int:
    """The newest version of a non-empty :func:`newest_versions` listing."""
    return int(versions.items(0, 1)[0].version)


@shared(table_scope, ttl=600, max_entries=32)
def _index(ns: Any, table_id: tuple[str, ...]) -> vsv.VersionIndex:
    return vsv.VersionIndex(ns, table_id)


def versions_frame(table_id: tuple[str, ...]) -> pd.DataFrame:
    """Every version's number and commit time (``version``, ``timestamp``), newest first:
    the whole history, for the panels that need it (timeline, cleanup, deletes,
    exports). Read once (with a spinner), then only the versions newer than those known."""
    index = _index(table_id)
    latest = latest_version(table_id)
    if index.peek() is None:
        with st.spinner(f"Reading every version of {table_id[-1]}…"):
            return index.frame(latest)
    return index.frame(latest)


def known_versions(table_id: tuple[str, ...], latest: int) -> pd.DataFrame | None:
    """The whole history when it was read already and is up to date (nothing is read)."""
    known = _index(table_id).peek()
    if known is None or not len(known) or int(known["version"].iloc[0]) != latest:
        return None
    return known


@cached(lambda table_id, version: table_scope(table_id), ttl=300)
def _described(ns: Any, table_id: tuple[str, ...], version: int) -> dict[str, Any]:
    return vsv.describe_version(ns, table_id, version)


@cached(lambda table_id, version: table_scope(table_id), ttl=300, max_entries=256)
def _has_version(ns: Any, table_id: tuple[str, ...], version: int) -> bool:
    try:
        _described(table_id, version)  # kept: the details of that version read it next
    except TableVersionNotFoundError:
        return False
    return True


def has_version(table_id: tuple[str, ...], versions: Listing, version: int) -> bool:
    """Whether ``version`` exists: listed already, else not when the listing is whole, else
    DescribeTableVersion of that one version."""
    if version in {int(v.version) for v in versions.items()}:
        return True
    if versions.complete or not 1 <= version <= listed_latest(versions):
        return False
    return _has_version(table_id, version)


def compare_choice(
    table_id: tuple[str, ...], versions: Listing, picked: int
) -> tuple[int | None, Callable[[int], bool]]:
    """What the compare forms need of main's history, without reading it whole: the newest
    version older than ``picked`` among those listed (or in the whole history, when it was
    read already and is up to date), and whether a version exists (:func:`has_version`)."""
    known = {int(v.version) for v in versions.items()}
    whole = known_versions(table_id, listed_latest(versions))
    if whole is not None:
        known.update(int(v) for v in whole["version"])
    older = vsv.newest_before(known, picked)
    return older, lambda version: has_version(table_id, versions, version)


@cached(lambda table_id, versions: table_scope(table_id), ttl=300, max_entries=512)
def operations_for(ns: Any, table_id: tuple[str, ...], versions: tuple[int, ...]) -> pd.DataFrame:
    """The operation behind each of ``versions`` (failures per row)."""
    return vsv.version_operations(ns, table_id, versions)


@cached(lambda table_id, versions: table_scope(table_id), ttl=300, max_entries=512)
def rows_for(
    ns: Any, table_id: tuple[str, ...], versions: tuple[int, ...]
) -> dict[int, int | None]:
    """The row count of each of ``versions`` (``None``: not known; ``vsv.version_rows``)."""
    return vsv.version_rows(ns, table_id, versions)


@st.cache_resource(max_entries=16, show_spinner=False)
def _facts(conn: str) -> vsv.VersionFacts:
    return vsv.VersionFacts()


def version_facts() -> vsv.VersionFacts:
    """What never changes about the versions of the active connection's tables (their
    operations and row counts), kept for every session on the connection."""
    from components.session import connection_key

    return _facts(connection_key())


FACTS_WAIT_S = 1.0  # a page's facts waited for before the list is drawn while they are read

# the reads of a page's facts, by connection, table and versions: each is taken (removed) by
# the page run that gets its answer, the one that waited for it or, for a page drawn without
# it, the next; that run shows the answer as it is (facts the read could not find are not asked
# again by the run the read's end caused, which would draw the page without them and poll
# again, for ever). At most JOBS_KEPT ended reads wait to be taken (a page left meanwhile).
_JOBS: OrderedDict[tuple[Any, ...], Future[tuple[pd.DataFrame, dict[int, int | None]]]] = (
    OrderedDict()
)
JOBS_KEPT = 32
_JOBS_LOCK = threading.Lock()
_JOB_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="version-facts")


def _job_key(conn: str, table_id: tuple[str, ...], identities: dict[int, Any]) -> tuple[Any, ...]:
    return (conn, table_id, tuple(identities.items()))


def _facts_job(
    conn: str, ns: Any, table_id: tuple[str, ...], identities: dict[int, Any]
) -> tuple[tuple[Any, ...], Future[tuple[pd.DataFrame, dict[int, int | None]]]]:
    """The read of these facts, under way or ended and not taken yet, else started now (in a
    copy of the caller's context: the request log is a context variable); and its key."""
    key = _job_key(conn, table_id, identities)
    facts = _facts(conn)
    with _JOBS_LOCK:
        job = _JOBS.get(key)
        if job is None:
            job = _JOB_POOL.submit(
                contextvars.copy_context().run, facts.page, ns, table_id, identities
            )
            _JOBS[key] = job
            ended = [k for k, j in _JOBS.items() if j.done()]
            for old in ended[: max(0, len(_JOBS) - JOBS_KEPT)]:
                del _JOBS[old]
    return key, job


def _take(key: tuple[Any, ...], job: Future[Any] | None = None) -> None:
    """Forget the read of ``key``: ``job``, or (``None``) whichever read of it has ended."""
    with _JOBS_LOCK:
        found = _JOBS.get(key)
        if found is not None and (found is job or (job is None and found.done())):
            del _JOBS[key]


def facts_reading(key: tuple[Any, ...]) -> bool:
    """Whether the read of a page's facts (:func:`page_facts`' ``reading``) is under way."""
    with _JOBS_LOCK:
        job = _JOBS.get(key)
    return job is not None and not job.done()


def page_facts(
    table_id: tuple[str, ...], rows: pd.DataFrame
) -> tuple[pd.DataFrame, dict[int, int | None], tuple[Any, ...] | None]:
    """The operation and row count of each version of a page of the list (its rows, with
    their manifest e-tags): kept per version (``vsv.VersionFacts``), so that a write to the
    table (another version, a delete) looks up only the versions not seen yet.

    Those not known are read in the background (over REST two requests per version, on an
    object store a few reads) and waited for up to :data:`FACTS_WAIT_S`: a page whose facts
    take longer comes back with those known so far (the others: operation ``None``, count
    ``None``) and the key of the read under way (:func:`facts_reading`), else ``None``. The
    run after that read's end takes its answer as it is; a fact the backend did not give is
    asked for again only after ``vsv.UNKNOWN_KEPT_S``, by a later run."""
    from components.cache import epoch
    from components.session import connection_key, get_namespace

    conn = connection_key()
    read = epoch(conn, table_scope(table_id))  # a version without an e-tag: this read's
    identities = {
        int(v): (tag if isinstance(tag, str) and tag else ("read", read))
        for v, tag in zip(rows["version"], rows["e_tag"], strict=True)
    }
    facts = _facts(conn)
    ops, counts, missing = facts.peek(table_id, identities)
    if not missing:  # known (or known not to be given): an ended read of them is answered
        _take(_job_key(conn, table_id, identities))
        return ops, counts, None
    key, job = _facts_job(conn, get_namespace(), table_id, identities)
    if not wait([job], timeout=FACTS_WAIT_S).done:
        ops, counts, _ = facts.peek(table_id, identities)
        return ops, counts, key
    _take(key, job)  # its answer (or error) is this run's: a later run reads anew
    return (*job.result(), None)


# the grid rows of the list's pages, per listing (gone with it): at most PAGES_KEPT each
_PAGES: weakref.WeakKeyDictionary[Listing, OrderedDict[tuple[Any, ...], Any]] = (
    weakref.WeakKeyDictionary()
)
_PAGES_LOCK = threading.Lock()
PAGES_KEPT = 8


class PageRows(NamedTuple):
    """A page of the versions list: its grid rows, the operations looked up, and the key of
    the read of its facts still under way (``None``: none is)."""

    rows: pd.DataFrame
    ops: pd.DataFrame
    reading: tuple[Any, ...] | None


def page_rows(
    table_id: tuple[str, ...],
    versions: Listing,
    page: Page,
    tagged: Mapping[int, Sequence[str]] | None,
) -> PageRows:
    """The rows of a page of the versions list (``vsv.version_rows_frame``) with each
    version's operation, row count and tags (``tagged``: version -> tags; ``None``: not
    listed), and the operations looked up (:func:`page_facts`; those still being read have
    operation ``None``). Made once per listing, page, read generation of the table and tags
    when every fact was found (a listing's items never change: a commit gives a new listing;
    nor do a version's facts), so a rerun of the page makes them again only after a failed
    lookup, an unknown row count or while they are read. Not to be changed in place: the
    next run gets the same frames."""
    from components.cache import epoch
    from components.session import connection_key

    tags = None if tagged is None else tuple(sorted((int(v), tuple(t)) for v, t in tagged.items()))
    key = (page.start, len(page.items), epoch(connection_key(), table_scope(table_id)), tags)
    with _PAGES_LOCK:
        kept = _PAGES.get(versions)
        found = kept.get(key) if kept is not None else None
    if found is not None:
        return cast(PageRows, found)
    rows = vsv.version_rows_frame(page.items)
    ops, counts, reading = page_facts(table_id, rows)
    made = PageRows(
        vsv.with_rows_and_tags(vsv.with_operations(rows, ops), counts, tagged), ops, reading
    )
    if reading is None and ops["error"].isna().all() and None not in counts.values():
        with _PAGES_LOCK:
            kept = _PAGES.setdefault(versions, OrderedDict())
            kept[key] = made
            while len(kept) > PAGES_KEPT:
                kept.popitem(last=False)
    return made


def version_info(table_id: tuple[str, ...], versions: Listing, version: int) -> dict[str, Any]:
    """One version as DescribeTableVersion gives it: the entry the listing read already holds
    (ListTableVersions answers with the same model), else that request (kept five minutes)."""
    for entry in versions.items():
        if int(entry.version) == version:
            return vsv.version_dict(entry)
    return _described(table_id, version)


@cached(lambda table_id, a, b: table_scope(table_id), ttl=300, max_entries=64)
def comparison(ns: Any, table_id: tuple[str, ...], a: int, b: int) -> vcmp.VersionComparison:
    return vcmp.compare_versions(ns, table_id, a, b)
