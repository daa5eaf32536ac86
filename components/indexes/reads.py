"""Cached reads of the Indexes page: the index table at the latest version, the table's columns
and rows, the coverage history.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from backend.branch_view import MAIN, on_branch
from backend.rules.columns import ColumnInfo
from backend.services import index_overview as ixs
from backend.services import versions as vsv
from components.cache import cached, table_scope
from components.session import get_namespace
from components.versions.reads import latest_and_stamp


def index_overview(table_id: tuple[str, ...], branch: str = MAIN) -> pd.DataFrame:
    """The index table at the latest version of the table's ``branch``, checked on every run
    (main: :func:`~components.versions.reads.latest_version` fresh, a ``stat`` on the local
    backend; a branch: one DescribeTable): a commit from anywhere (the console, lance itself,
    another process) is seen at once, and the overview of a version already read comes from
    the cache. The version read is ``df.attrs["version"]``: :func:`render_statistics` charts
    the history up to that same version, so the table and the charts show the same indexes."""
    if branch == MAIN:
        version, stamp = latest_and_stamp(table_id, fresh=True)
        if stamp is not None:
            return _overview_stamped(table_id, version, stamp)
    else:
        version = vsv.latest_version(on_branch(get_namespace(), branch), list(table_id))
    return _overview_at(table_id, version, branch)


@cached(lambda table_id, version, branch: table_scope(table_id), ttl=300)
def _overview_at(
    ns: Any, table_id: tuple[str, ...], version: int | None, branch: str
) -> pd.DataFrame:
    """Keyed by the version number alone, which does not name a table's state for good (a
    table dropped and made again, a branch made again): kept five minutes."""
    return ixs.index_overview(on_branch(ns, branch), list(table_id), version=version)


@cached(lambda table_id, version, stamp: table_scope(table_id), ttl=3600, max_entries=64)
def _overview_stamped(
    ns: Any, table_id: tuple[str, ...], version: int | None, stamp: Any
) -> pd.DataFrame:
    """Keyed by the version and the backend's stamp of the table's versions as well (the local
    backend's ``_versions`` directory), which a table made again does not share: an
    overview of one version that never changes, kept an hour."""
    return ixs.index_overview(ns, list(table_id), version=version)


def _main_stamp(table_id: tuple[str, ...], branch: str) -> Any:
    """The backend's stamp of main's versions (the local backend's ``_versions`` directory:
    every commit and every deleted version changes it: a ``stat``), ``None`` without one or
    on a branch. Only the stamp: not the latest version ``latest_and_stamp`` reads with it."""
    return vsv.version_stamp(get_namespace(), table_id) if branch == MAIN else None


def table_columns(table_id: tuple[str, ...], branch: str = MAIN) -> list[ColumnInfo]:
    """The table's top-level columns (of ``branch``): where main's versions have a stamp, read
    again as soon as a version is committed anywhere (a schema change is one); else kept a
    minute."""
    stamp = _main_stamp(table_id, branch)
    if stamp is not None:
        return _columns_stamped(table_id, stamp)
    return _columns(table_id, branch)


def table_num_rows(table_id: tuple[str, ...], branch: str = MAIN) -> int | None:
    """The table's live rows (of ``branch``; ``None``: not counted), for the create panel's
    checks and hints: where main's versions have a stamp, counted again as soon as a version
    is committed anywhere; else kept 30 seconds."""
    stamp = _main_stamp(table_id, branch)
    if stamp is not None:
        return _num_rows_stamped(table_id, stamp)
    return _num_rows(table_id, branch)


@cached(lambda table_id, branch: table_scope(table_id))
def _columns(ns: Any, table_id: tuple[str, ...], branch: str) -> list[ColumnInfo]:
    return ixs.table_columns(on_branch(ns, branch), list(table_id))


@cached(lambda table_id, stamp: table_scope(table_id), ttl=3600, max_entries=64)
def _columns_stamped(ns: Any, table_id: tuple[str, ...], stamp: Any) -> list[ColumnInfo]:
    return ixs.table_columns(ns, list(table_id))


@cached(lambda table_id, branch: table_scope(table_id), ttl=30)
def _num_rows(ns: Any, table_id: tuple[str, ...], branch: str) -> int | None:
    return ixs.table_num_rows(on_branch(ns, branch), list(table_id))


@cached(lambda table_id, stamp: table_scope(table_id), ttl=3600, max_entries=64)
def _num_rows_stamped(ns: Any, table_id: tuple[str, ...], stamp: Any) -> int | None:
    return ixs.table_num_rows(ns, list(table_id))


@cached(lambda table_id, max_versions, up_to, branch=MAIN: table_scope(table_id), max_entries=64)
def coverage_history(
    ns: Any, table_id: tuple[str, ...], max_versions: int, up_to: int | None, branch: str = MAIN
) -> pd.DataFrame:
    return ixs.coverage_history(
        on_branch(ns, branch), list(table_id), max_versions=max_versions, up_to=up_to
    )
