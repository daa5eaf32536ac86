"""Branches of a table: the branch picker and the badge of the pages that act on a branch
(Versions, Indexes, Search & tune, Import & export), the branch list, the create form (from
main, a tag, or another branch at a version) and the delete form (typed confirmation, admins).
Components return requests; the page performs them (``Write``).

The branch picked is one shared selection (``state.selected_branch``, in the URL as
``?branch=``; ``components.tables.selection`` keeps it with the table): picked on one page, it is the
branch of the others; another table, or a branch that no longer exists, goes back to main
(the picker says so). A page acts on it through ``backend.branch_view.on_branch``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from backend.rules import ids
from backend.services import branches as svc
from backend.text import is_digits, plural
from components import feedback, state
from components.cache import branches_scope, cached
from components.common import dataframe
from components.tables.selection import set_branch
from components.writes import Write, render_confirmed_form


@cached(branches_scope, ttl=30)
def branches_frame(ns: Any, table_id: tuple[str, ...]) -> pd.DataFrame:
    """Every branch of the table (``backend.services.branches.list_branches``)."""
    return svc.list_branches(ns, table_id)


def branch_names(frame: pd.DataFrame) -> list[str]:
    """What a branch picker offers from :func:`branches_frame`: main first, then the table's
    branches by name (more than one: the table has branches besides main)."""
    return [svc.MAIN, *sorted(frame["branch"].tolist())]


@cached(lambda table_id, branch: branches_scope(table_id), ttl=30)
def branch_versions(ns: Any, table_id: tuple[str, ...], branch: str) -> pd.DataFrame:
    """The versions of one branch, newest first."""
    return svc.list_branch_versions(ns, table_id, branch)


@cached(lambda table_id, branch: branches_scope(table_id), ttl=30)
def branch_columns(ns: Any, table_id: tuple[str, ...], branch: str) -> list[str]:
    """The column names of the branch's latest version."""
    return svc.branch_columns(ns, table_id, branch)


def picker_key(key_prefix: str) -> str:
    """The branch picker's widget under a page's picker prefix."""
    return f"{key_prefix}.branch"


def _picked(key: str) -> None:
    """The picker changed (a callback): its branch becomes the shared selection."""
    set_branch(state.get(key))


def render_branch_picker(
    names: Sequence[str], *, key_prefix: str, table_id: Sequence[str] | None = None
) -> str:
    """The branch the page acts on (``names``: ``main`` first), the shared selection. A
    selected branch the table does not have (deleted, another table's, a stale link) goes
    back to main, and the page says so. A table with no branch but main gets no box."""
    names = list(names) or [svc.MAIN]
    current = state.selected_branch()
    if current not in names:
        where = f" {ids.display_id(table_id)}" if table_id else ""
        feedback.show(
            "warning",
            f"Table{where} has no branch {current} (deleted, or a stale link): showing main.",
        )
        set_branch(None)
        current = svc.MAIN
    if names == [svc.MAIN]:  # nothing to pick: main, the table's only branch
        return current
    key = picker_key(key_prefix)
    state.put(key, current)
    st.columns(2)[0].selectbox(  # as wide as the namespace picker above it
        "Branch",
        names,
        key=key,
        on_change=_picked,
        args=(key,),
        help="main is the table's default branch; the others were made from a version of it "
        "(or of another branch). The pick is kept across the pages that show a branch.",
    )
    return current


def pick_branch(table_id: Sequence[str], *, key_prefix: str) -> tuple[str, bool]:
    """The table's branches (read) and the picker over them; the branch picked, and whether
    the table has branches besides main. When they cannot be read the error is shown: main
    is acted on, or the page stops when another branch was picked (it would act on main
    instead)."""
    tid = tuple(table_id)
    frame = feedback.run(branches_frame, tid, action=f"Listing the branches of {tid[-1]}")
    if frame is None:
        if state.selected_branch() != svc.MAIN:
            st.stop()
        return svc.MAIN, False
    names = branch_names(frame)
    return render_branch_picker(names, key_prefix=key_prefix, table_id=tid), len(names) > 1


def render_branch_badge(branch: str, *, branched: bool, note: str = "") -> None:
    """Which branch the page acts on, under its title (``note``: a sentence more). Nothing on
    main when the table has no other branch (``branched`` false): there is no other to act
    on, and no picker above it."""
    more = f" {feedback.as_text(note)}" if note else ""
    if branch == svc.MAIN:
        if not branched:
            return
        st.markdown(
            ":gray-badge[:material/call_split: main] "
            f":gray[Reads and writes on this page act on the table's main branch.{more}]"
        )
        return
    name = feedback.as_text(branch)
    st.markdown(
        f":violet-badge[:material/call_split: branch {name}] "
        f":violet[Reads and writes on this page act on branch {name}, not on main.{more}]"
    )


def branch_row(frame: pd.DataFrame | None, branch: str) -> dict[str, Any] | None:
    """``branch``'s row of the branch list as a dict (``None``: not listed)."""
    if frame is None:
        return None
    row = frame[frame["branch"] == branch]
    return dict(row.iloc[0]) if not row.empty else None


def made_from(info: dict[str, Any]) -> str:
    """Where a branch was made from, as the page says it: "main v2"."""
    return f"{info.get('parent_branch') or svc.MAIN} v{int(info['parent_version'])}"


def render_branch_summary(branch: str, info: dict[str, Any], versions: pd.DataFrame) -> None:
    """The branch's heading, where it was made from, and its own versions (newest first)."""
    st.subheader(f"Branch {branch}: {plural(len(versions), 'version')}", anchor=False)
    made = pd.Timestamp(info["created"])
    on = "" if pd.isna(made) else f" on {made.strftime('%Y-%m-%d %H:%M:%S')} UTC"
    st.caption(
        feedback.as_text(
            f"Made from {made_from(info)}{on}. Its versions start at version "
            f"{int(info['parent_version'])}, its own copy of {made_from(info)}; what is on this "
            "page (versions, change log, compare, restore, tags) is the branch's."
        )
    )
    dataframe(
        versions,
        hide_index=True,
        column_config={
            "version": st.column_config.NumberColumn("Version", format="%d", width=90),
            "timestamp": st.column_config.DatetimeColumn(
                "Created (UTC)", format="YYYY-MM-DD HH:mm:ss"
            ),
            "manifest_size": st.column_config.NumberColumn("Manifest bytes", format="localized"),
        },
    )


def render_branch_version_picker(branch: str, versions: pd.DataFrame, *, key_prefix: str) -> int:
    """The version of the branch that restore and tags act on (default: its latest)."""
    st.subheader(f"A version of branch {branch}", anchor=False)
    listed = sorted((int(v) for v in versions["version"]), reverse=True)
    picked = st.selectbox(
        f"Version of branch {branch}",
        listed,
        index=0,
        key=f"{key_prefix}.{branch}",
        format_func=lambda v: f"v{v}" + (" (latest)" if v == listed[0] else ""),
        help="The version the compare of two versions, restore and tags below start from.",
    )
    return int(picked if picked is not None else listed[0])


MAIN_ONLY = (
    "Cleanup, deleting versions and deleting, updating or upserting rows on this page act on "
    "main only: pick main to use them."
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
            "manifest_size": st.column_config.NumberColumn("Manifest bytes", format="localized"),
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
        if not is_digits(text) or int(text) < 1:
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
    names = branch_names(frame)
    # keyed: the page's poll for outside commits reruns it; the open tab stays open
    create_tab, delete_tab = st.tabs(["Create", "Delete"], key=f"{key_prefix}.tabs")
    with create_tab:
        created = render_create_form(
            names, tags, key_prefix=f"{key_prefix}.new", read_only=read_only, locked=create_lock
        )
    with delete_tab:
        deleted = render_delete_form(
            frame, key_prefix=f"{key_prefix}.del", read_only=read_only, locked=delete_lock
        )
    return created or deleted


def after_branch_write(ask: CreateBranch | DeleteBranch) -> None:
    """After a branch write succeeded: the deleted branch, when it was the one shown, gives
    way to main (the write's own message says why; the picker would otherwise call it a
    stale link)."""
    if isinstance(ask, DeleteBranch) and state.selected_branch() == ask.name:
        set_branch(None)


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
