"""Branches of a table: the branch picker (``?branch=``), the branch list, the create form
(from main, a tag, or another branch at a version) and the delete form (typed confirmation,
admins). Components return requests; the page performs them (``Write``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from backend.services import branches as svc
from components import feedback, state
from components.cache import cached, table_scope
from components.common import dataframe
from components.writes import Write, render_confirmed_form


@cached(table_scope, ttl=30)
def branches_frame(ns: Any, table_id: tuple[str, ...]) -> pd.DataFrame:
    """Every branch of the table (``backend.services.branches.list_branches``)."""
    return svc.list_branches(ns, table_id)


@cached(lambda table_id, branch: table_scope(table_id), ttl=30)
def branch_versions(ns: Any, table_id: tuple[str, ...], branch: str) -> pd.DataFrame:
    """The versions of one branch, newest first."""
    return svc.list_branch_versions(ns, table_id, branch)


def render_branch_picker(names: Sequence[str], *, key_prefix: str) -> str:
    """The branch the page shows (``main`` first); kept in the URL as ``?branch=``. A branch
    the table does not have (deleted, or another table's) falls back to main."""
    if state.get(state.QP_BRANCH) not in names:
        state.put(state.QP_BRANCH, svc.MAIN)
    picked = st.selectbox(
        "Branch",
        list(names),
        key=state.QP_BRANCH,
        bind="query-params",
        help="main is the table's default branch; the others were made from a version of it "
        "(or of another branch).",
    )
    return str(picked or svc.MAIN)


def render_branch_versions(frame: pd.DataFrame) -> None:
    """A branch's versions (newest first), headed and formatted as the versions list is."""
    dataframe(
        frame,
        hide_index=True,
        column_config={
            "version": st.column_config.NumberColumn("Version", format="%d"),
            "timestamp": st.column_config.DatetimeColumn(
                "Created (UTC)", format="YYYY-MM-DD HH:mm:ss.SSS"
            ),
            "manifest_size": st.column_config.NumberColumn("Manifest bytes", format="%d"),
        },
    )


@dataclass(frozen=True)
class CreateBranch:
    name: str
    from_branch: str | None
    from_version: int | None
    from_tag: str | None


@dataclass(frozen=True)
class DeleteBranch:
    name: str


def render_branch_list(frame: pd.DataFrame) -> None:
    if frame.empty:
        st.caption("This table has no branch besides main.")
        return
    dataframe(
        frame,
        hide_index=True,
        column_config={
            "branch": "Branch",
            "parent_branch": "Made from",
            "parent_version": st.column_config.NumberColumn("At version", format="%d"),
            "created": st.column_config.DatetimeColumn(
                "Created (UTC)", format="YYYY-MM-DD HH:mm:ss"
            ),
            "manifest_size": st.column_config.NumberColumn("Manifest bytes", format="%d"),
        },
    )


def render_create_form(
    names: Sequence[str],
    tags: Sequence[str],
    *,
    key_prefix: str,
    read_only: bool,
    locked: str | None,
) -> CreateBranch | None:
    """The create form: a new name, and the source (a branch at a version, or a tag)."""
    with st.form(f"{key_prefix}.create", border=False):
        name = st.text_input("New branch name", key=f"{key_prefix}.name")
        source = st.radio(
            "Made from",
            ["a branch", "a tag"],
            horizontal=True,
            key=f"{key_prefix}.source",
        )
        from_branch = st.selectbox("From branch", list(names), key=f"{key_prefix}.from_branch")
        version_text = st.text_input("At version (empty: its latest)", key=f"{key_prefix}.version")
        tag = st.selectbox("Tag", list(tags) or ["(no tags)"], key=f"{key_prefix}.tag")
        submitted = st.form_submit_button(
            "Create branch", icon=":material/call_split:", disabled=read_only or bool(locked)
        )
        if locked:
            st.caption(":material/lock: " + feedback.as_text(f"Disabled: {locked}."))
    if not submitted:
        return None
    if source == "a tag":
        if not tags:
            feedback.show("error", "Branch not created: the table has no tags.")
            return None
        return CreateBranch(str(name).strip(), None, None, str(tag))
    version: int | None = None
    text = str(version_text or "").strip()
    if text:
        if not text.isdigit() or int(text) < 1:
            feedback.show(
                "error", f"Branch not created: {text!r} is not a version number (1 or more)."
            )
            return None
        version = int(text)
    return CreateBranch(str(name).strip(), str(from_branch), version, None)


def render_delete_form(
    frame: pd.DataFrame, *, key_prefix: str, read_only: bool, locked: str | None
) -> DeleteBranch | None:
    """Pick a branch and type its name to delete it (admins)."""
    if frame.empty:
        return None
    name = st.selectbox("Branch to delete", frame["branch"].tolist(), key=f"{key_prefix}.pick")
    if render_confirmed_form(
        f"{key_prefix}.form",
        str(name),
        what="branch",
        button="Delete branch",
        icon=":material/delete:",
        not_done="Branch not deleted",
        read_only=read_only,
        locked=locked,
    ):
        return DeleteBranch(str(name))
    return None


def render_branches_panel(
    frame: pd.DataFrame,
    tags: Sequence[str],
    *,
    key_prefix: str,
    read_only: bool,
    create_lock: str | None,
    delete_lock: str | None,
) -> CreateBranch | DeleteBranch | None:
    """The branch list, then "Create" and "Delete" tabs; the request of the one submitted."""
    render_branch_list(frame)
    names = [svc.MAIN, *sorted(frame["branch"].tolist())]
    create_tab, delete_tab = st.tabs(["Create", "Delete"])
    with create_tab:
        created = render_create_form(
            names, tags, key_prefix=f"{key_prefix}.new", read_only=read_only, locked=create_lock
        )
    with delete_tab:
        deleted = render_delete_form(
            frame, key_prefix=f"{key_prefix}.del", read_only=read_only, locked=delete_lock
        )
    return created or deleted


def branch_write(ns: Any, table_id: Sequence[str], ask: CreateBranch | DeleteBranch) -> Write:
    """The write of a branch request."""
    tid = list(table_id)
    if isinstance(ask, DeleteBranch):
        return Write(
            svc.delete_branch,
            (ns, tid, ask.name),
            action=f"Deleting branch {ask.name}",
            success=f"Deleted branch {ask.name}.",
            touched=[tid],
        )
    source = (
        f"tag {ask.from_tag}"
        if ask.from_tag
        else f"{ask.from_branch or svc.MAIN}"
        + (f" at version {ask.from_version}" if ask.from_version else " (latest)")
    )
    return Write(
        svc.create_branch,
        (ns, tid, ask.name),
        kwargs={
            "from_branch": ask.from_branch,
            "from_version": ask.from_version,
            "from_tag": ask.from_tag,
        },
        action=f"Creating branch {ask.name}",
        success=lambda row: (
            f"Created branch {ask.name} from {source}: "
            f"{row['parent_branch']} version {row['parent_version']}."
        ),
        touched=[tid],
    )


__all__ = [
    "CreateBranch",
    "DeleteBranch",
    "branch_versions",
    "branch_write",
    "branches_frame",
    "render_branch_picker",
    "render_branch_versions",
    "render_branches_panel",
]
