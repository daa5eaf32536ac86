"""A table's tags, as functions a notebook can call, on both backends: list, create, move,
delete, and the version a tag names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from lance_namespace import (
    CreateTableTagRequest,
    DeleteTableTagRequest,
    GetTableTagVersionRequest,
    LanceNamespace,
    ListTableTagsRequest,
    UpdateTableTagRequest,
)
from lance_namespace.errors import (
    ErrorCode,
)

from backend.rules import ids, version_ranges
from backend.services.restore import known_branch, request_branch
from backend.spec import catalog_views
from backend.spec.paging import iter_all

from ..errors import invalid, make

TAG_COLUMNS = ["tag", "version", "manifest_size", "branch"]


def list_tags(ns: LanceNamespace, table_id: Sequence[str]) -> pd.DataFrame:
    """Every tag of a table: tag, version, manifest_size, branch (the branch the version is
    of, "main" for main), sorted by version, then tag."""
    tid = ids.check_id(table_id)
    tags: dict[str, Any] = dict(iter_all(ns.list_table_tags, ListTableTagsRequest(id=tid), "tags"))
    rows = [
        {
            "tag": name,
            "version": int(t.version),
            "manifest_size": t.manifest_size,
            "branch": getattr(t, "branch", None) or "main",
        }
        for name, t in tags.items()
    ]
    frame = pd.DataFrame(rows, columns=TAG_COLUMNS)
    frame["manifest_size"] = frame["manifest_size"].astype("Int64")
    return frame.sort_values(["version", "tag"]).reset_index(drop=True)


def tagged_versions(tags: pd.DataFrame, branch: str | None = None) -> dict[int, list[str]]:
    """version -> its tags (``branch`` given: the tags on that branch's versions only)."""
    if branch is not None and "branch" in tags.columns:
        tags = tags[tags["branch"] == (request_branch(branch) or "main")]
    out: dict[int, list[str]] = {}
    for row in tags.itertuples():
        out.setdefault(int(row.version), []).append(str(row.tag))
    return out


def _check_tag(tag: str, *, create: bool) -> str:
    problem = ids.label_problem(tag, what="tag", create=create)
    if problem:
        raise invalid(problem)
    return tag


def _existing_version(
    ns: LanceNamespace, tid: list[str], version: int, branch: str | None = None
) -> None:
    problem = version_ranges.version_problem(version, "the tagged version")
    if problem:
        raise invalid(problem)
    if not catalog_views.version_exists(ns, tid, version, branch):
        where = f"branch {branch} of " if branch else ""
        raise make(
            ErrorCode.TABLE_VERSION_NOT_FOUND,
            f"version {version} of {where}{ids.format_id(tid)} does not exist",
        )


def create_tag(
    ns: LanceNamespace, table_id: Sequence[str], tag: str, version: int, branch: str | None = None
) -> None:
    """Tag ``version`` of ``branch`` (``None``/"main": main; the version must exist there;
    the tag must be new)."""
    tid = ids.check_id(table_id)
    _check_tag(tag, create=True)
    branch = known_branch(ns, tid, branch)
    _existing_version(ns, tid, version, branch)
    ns.create_table_tag(CreateTableTagRequest(id=tid, tag=tag, version=version, branch=branch))


def move_tag(
    ns: LanceNamespace, table_id: Sequence[str], tag: str, version: int, branch: str | None = None
) -> None:
    """Point an existing tag at another (existing) version, of ``branch`` (``None``: main)."""
    tid = ids.check_id(table_id)
    _check_tag(tag, create=False)
    branch = known_branch(ns, tid, branch)
    _existing_version(ns, tid, version, branch)
    ns.update_table_tag(UpdateTableTagRequest(id=tid, tag=tag, version=version, branch=branch))


def delete_tag(ns: LanceNamespace, table_id: Sequence[str], tag: str) -> None:
    tid = ids.check_id(table_id)
    ns.delete_table_tag(DeleteTableTagRequest(id=tid, tag=_check_tag(tag, create=False)))


def tag_version(ns: LanceNamespace, table_id: Sequence[str], tag: str) -> int:
    """The version a tag points at (``?tag=`` deep links)."""
    tid = ids.check_id(table_id)
    resp = ns.get_table_tag_version(
        GetTableTagVersionRequest(id=tid, tag=_check_tag(tag, create=False))
    )
    return int(resp.version)
