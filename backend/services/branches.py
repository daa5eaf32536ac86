"""A table's branches: list, create (from main, a tag, or another branch at a version), delete,
and the versions of one branch. Plain functions over any ``LanceNamespace`` (the spec's
ListTableBranches, CreateTableBranch, DeleteTableBranch, GetTableTagVersion, ListTableTags,
ListTableVersions).

Lance keeps a branch's history shared with what was branched from it, and refuses to delete a
branch that another branch or a tag still refers to; :func:`delete_branch` says so up front,
naming them, before anything is sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from lance_namespace import (
    CreateTableBranchRequest,
    DeleteTableBranchRequest,
    DescribeTableRequest,
    GetTableTagVersionRequest,
    LanceNamespace,
    ListTableBranchesRequest,
    ListTableTagsRequest,
)
from lance_namespace.errors import ErrorCode, TableNotFoundError

from backend.rules import ids, version_ranges
from backend.services.namespaces import schema_frame
from backend.services.versions import list_versions
from backend.spec import catalog_views
from backend.spec.fields import epoch_millis
from backend.spec.paging import iter_all

from ..errors import invalid, make

MAIN = "main"
BRANCH_COLUMNS = ["branch", "parent_branch", "parent_version", "created", "manifest_size"]
BRANCH_VERSION_COLUMNS = ["version", "timestamp", "manifest_size"]


def list_branches(ns: LanceNamespace, table_id: Sequence[str]) -> pd.DataFrame:
    """Every branch of a table (main is not listed): branch, parent_branch ("main" for a
    branch made from main), parent_version, created (UTC; not known where the answer's time is
    not one, ``spec.fields.epoch_millis``), manifest_size; sorted by creation, then name. A
    declared-only table (no data yet) has none."""
    tid = ids.check_id(table_id)
    try:
        found = dict(iter_all(ns.list_table_branches, ListTableBranchesRequest(id=tid), "branches"))
    except TableNotFoundError:  # pylance cannot open a declared table's (absent) dataset
        if not catalog_views.declared_only(ns, tid):
            raise
        found = {}
    rows = [
        {
            "branch": name,
            "parent_branch": b.parent_branch or MAIN,
            "parent_version": int(b.parent_version),
            "created": epoch_millis(int(b.create_at) * 1000),  # the answer's seconds
            "manifest_size": b.manifest_size,
        }
        for name, b in found.items()
        if name.strip() and name != MAIN  # a server's answer naming main, or no name: no branch
    ]
    frame = pd.DataFrame(rows, columns=BRANCH_COLUMNS)
    frame["parent_version"] = frame["parent_version"].astype("Int64")
    frame["manifest_size"] = frame["manifest_size"].astype("Int64")
    frame["created"] = pd.to_datetime(frame["created"], unit="ms", utc=True)
    return frame.sort_values(["created", "branch"]).reset_index(drop=True)


def branch_names(ns: LanceNamespace, table_id: Sequence[str]) -> list[str]:
    """``main`` first, then the table's branches by name."""
    return [MAIN, *sorted(list_branches(ns, table_id)["branch"].tolist())]


def _source(branch: str | None) -> str | None:
    """A source branch as the spec sends it: ``None`` for main."""
    return None if not branch or branch == MAIN else branch


def branch_info(ns: LanceNamespace, table_id: Sequence[str], branch: str) -> dict[str, Any]:
    """Branch ``branch``'s row of :func:`list_branches` as a dict (``parent_branch``,
    ``parent_version``, ``created``...). Main, or a name the table has no branch of, are
    refused (``InvalidInputError`` / ``TableBranchNotFoundError`` naming the ones it has)."""
    tid = ids.check_id(table_id)
    name = _source(branch)
    if name is None:
        raise invalid("main is the table's default branch: it was not made from another one")
    problem = ids.label_problem(name, what="branch")
    if problem:
        raise invalid(problem)
    frame = list_branches(ns, tid)
    row = frame[frame["branch"] == name]
    if row.empty:
        known = ", ".join(sorted(frame["branch"])) or "none besides main"
        raise make(
            ErrorCode.TABLE_BRANCH_NOT_FOUND,
            f"table {ids.format_id(tid)} has no branch {name!r} (its branches: {known})",
        )
    return dict(row.iloc[0])


def list_branch_versions(
    ns: LanceNamespace, table_id: Sequence[str], branch: str | None = None
) -> pd.DataFrame:
    """The versions of ``branch`` (``None``/"main": main), newest first: version, timestamp
    (UTC), manifest_size (``versions.list_versions`` of the branch)."""
    tid = ids.check_id(table_id)
    return list_versions(ns, tid, _source(branch))[BRANCH_VERSION_COLUMNS]


def branch_columns(
    ns: LanceNamespace, table_id: Sequence[str], branch: str | None = None
) -> list[str]:
    """The column names of ``branch``'s latest version (``None``/"main": main): the branch's
    own dataset (local backend), else DescribeTable of the branch (refused by a REST server
    that describes main whatever the branch: ``backend.rest.client``)."""
    tid = ids.check_id(table_id)
    opener = getattr(ns, "branch_dataset", None)
    if callable(opener):
        return list(opener(tid, _source(branch)).schema.names)
    resp = ns.describe_table(
        DescribeTableRequest(id=tid, branch=_source(branch), load_detailed_metadata=True)
    )
    return schema_frame(resp.var_schema)["column"].tolist()


def _check_name(name: Any, *, create: bool) -> str:
    problem = ids.label_problem(name, what="branch", create=create)
    if problem:
        raise invalid(problem)
    if str(name) == MAIN:
        raise invalid(
            "main is the table's default branch: it cannot be created or deleted; "
            "choose another name"
        )
    return str(name)


def resolve_source(
    ns: LanceNamespace,
    table_id: Sequence[str],
    *,
    from_version: int | None = None,
    from_branch: str | None = None,
    from_tag: str | None = None,
) -> tuple[str | None, int | None]:
    """``(source branch or None for main, version or None for its latest)`` of a new branch,
    checked: at most one of ``from_version`` / ``from_tag``; a tag resolves to its branch and
    version (``from_branch``, if given, must be the tag's); the source branch exists; the
    version exists on it."""
    tid = ids.check_id(table_id)
    if from_version is not None and from_tag is not None:
        raise invalid("give the version to branch from or a tag, not both")
    source = _source(from_branch)
    version = from_version
    if from_tag is not None:
        problem = ids.label_problem(from_tag, what="tag")
        if problem:
            raise invalid(problem)
        resp = ns.get_table_tag_version(GetTableTagVersionRequest(id=tid, tag=from_tag))
        tag_branch = _source(getattr(resp, "branch", None))
        if from_branch is not None and tag_branch != source:
            raise invalid(
                f"tag {from_tag} is on {tag_branch or MAIN}, not on {source or MAIN}: "
                "leave the source branch out, or pick that branch"
            )
        source, version = tag_branch, int(resp.version)
    if source is not None and source not in set(list_branches(ns, tid)["branch"]):
        raise make(
            ErrorCode.TABLE_BRANCH_NOT_FOUND,
            f"table {ids.format_id(tid)} has no branch {source!r} to branch from",
        )
    if version is not None:
        problem = version_ranges.version_problem(version, "the version to branch from")
        if problem:
            raise invalid(problem)
        known = set(list_branch_versions(ns, tid, source)["version"].tolist())
        if version not in known:
            raise make(
                ErrorCode.TABLE_VERSION_NOT_FOUND,
                f"{source or MAIN} of {ids.format_id(tid)} has no version {version}",
            )
    return source, version


def create_branch(
    ns: LanceNamespace,
    table_id: Sequence[str],
    name: str,
    from_version: int | None = None,
    from_branch: str | None = None,
    from_tag: str | None = None,
) -> dict[str, Any]:
    """Create branch ``name`` from main (default), ``from_branch``, or the version a tag
    points at (``from_tag``), at ``from_version`` (default: the source's latest). At most one
    of ``from_version`` and ``from_tag``. Returns the new branch's row of
    :func:`list_branches` as a dict."""
    tid = ids.check_id(table_id)
    name = _check_name(name, create=True)
    existing = list_branches(ns, tid)
    if name in set(existing["branch"]):
        raise make(
            ErrorCode.TABLE_BRANCH_ALREADY_EXISTS,
            f"table {ids.format_id(tid)} already has a branch {name}",
        )
    source, version = resolve_source(
        ns, tid, from_version=from_version, from_branch=from_branch, from_tag=from_tag
    )
    ns.create_table_branch(
        CreateTableBranchRequest(id=tid, name=name, from_branch=source, from_version=version)
    )
    after = list_branches(ns, tid)
    row = after[after["branch"] == name]
    if row.empty:
        raise make(
            ErrorCode.INTERNAL,
            f"create_table_branch answered success but {ids.format_id(tid)} lists no branch {name}",
        )
    return dict(row.iloc[0])


def delete_blockers(ns: LanceNamespace, table_id: Sequence[str], name: str) -> list[str]:
    """What keeps branch ``name`` from being deleted (Lance refuses while another branch was
    made from it or a tag points into it): one line each; empty when it can go."""
    tid = ids.check_id(table_id)
    branches = list_branches(ns, tid)
    children = branches[branches["parent_branch"] == name]
    out = [
        f"branch {row.branch} was made from {name} at version {row.parent_version}"
        for row in children.itertuples()
    ]
    tags = dict(iter_all(ns.list_table_tags, ListTableTagsRequest(id=tid), "tags"))
    out.extend(
        f"tag {tag} points at version {t.version} of {name}"
        for tag, t in sorted(tags.items())
        if getattr(t, "branch", None) == name
    )
    return out


def delete_branch(ns: LanceNamespace, table_id: Sequence[str], name: str) -> None:
    """Delete branch ``name`` (admin). Refused, with nothing deleted, while a branch made
    from it or a tag on it exists (Lance would refuse too): they are named."""
    tid = ids.check_id(table_id)
    name = _check_name(name, create=False)
    if name not in set(list_branches(ns, tid)["branch"]):
        raise make(
            ErrorCode.TABLE_BRANCH_NOT_FOUND,
            f"table {ids.format_id(tid)} has no branch {name}",
        )
    blockers = delete_blockers(ns, tid, name)
    if blockers:
        raise invalid(
            f"branch {name} cannot be deleted while other history refers to it: "
            + "; ".join(blockers)
            + ". Delete those first; nothing was deleted"
        )
    ns.delete_table_branch(DeleteTableBranchRequest(id=tid, name=name))
