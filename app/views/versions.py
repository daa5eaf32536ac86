"""Versions: every version of a table (paged, newest first), a timeline, one version's
details (restore it, browse its data), then "Manage versions" tabs, only the open one drawn:
the comparison of two, tags (``?tag=`` opens a tagged version), deleting old versions by
policy or by range (never the latest), deleting rows by a filter (previewed first), updating
rows (previewed first) and upserting a file's rows (with a dry run).

With a branch picked (``?branch=``): the branch's own versions, its change log, its compare
with its parent and of two of its versions, and restore and tags acting on the branch; what
acts on main only is said, not offered."""

from collections.abc import Callable
from typing import Any

import streamlit as st

import backend
from components import branches as br
from components import change_log, feedback, row_edits, state, writes
from components.common import lazy_expander, render_read_only_notice
from components.connection_writes import require_namespace
from components.session import is_read_only, role_lock
from components.snippets import render_code
from components.tables.picker import render_table_picker
from components.tables.selection import sync_selection
from components.version_actions.cleanup import cleanup_write, render_cleanup
from components.version_actions.deletes import (
    delete_rows_write,
    delete_versions_write,
    render_delete_rows,
)
from components.version_actions.links import apply_version_link, follow_version_link
from components.version_actions.restore import (
    rebuild_write,
    render_rebuild_offer,
    render_version_actions,
    restore_write,
)
from components.version_actions.tags import render_tags
from components.versions.compare import render_compare_section
from components.versions.delete import render_delete_form
from components.versions.details import render_details_section
from components.versions.listing import render_listing, render_summary
from components.versions.reads import (
    compare_choice,
    listed_latest,
    newest_versions,
    versions_frame,
)
from components.versions.tabs import manage_tabs

st.title("Versions")
ns = require_namespace()
read_only = is_read_only()
sync_selection()

table_id = render_table_picker(key_prefix=state.Versions.PICKER)
if not table_id:
    st.info("Pick a table to see its versions.", icon=":material/history:")
    st.stop()
tid = tuple(table_id)
if read_only:
    render_read_only_notice()
if flashed := feedback.render_flash("versions"):
    render_code(flashed.get("snippet"))

# the newest versions only (a page of the list); the panels needing every version read the
# whole history themselves, when opened (versions_frame)
versions = feedback.run(newest_versions, tid, action=f"Listing the versions of {tid[-1]}")
if versions is None:
    st.stop()
if not versions.known:
    feedback.show("info", f"{tid[-1]} has no versions yet (a declared-only table has none).")
    st.stop()

branch_list = feedback.run(br.branches_frame, tid, action=f"Listing the branches of {tid[-1]}")
branch_names = br.branch_names(branch_list) if branch_list is not None else []
branch = br.render_branch_picker(
    branch_names or ["main"], key_prefix=state.Versions.PICKER, table_id=tid
)
br.render_branch_badge(branch, branched=len(branch_names) > 1)


def send_branch(ask: br.CreateBranch | br.DeleteBranch) -> None:
    """A create or delete of the Branches panel; the branches are read again on success (a
    deleted branch that was shown gives way to main)."""
    writes.perform(
        br.branch_write(ns, table_id, ask),
        page="versions",
        invalidate=[table_id],
        then=lambda _: br.after_branch_write(ask),
    )


box = (
    lazy_expander(
        f"Branches ({len(branch_list)})",
        key=state.Versions.BRANCHES_OPEN,
        icon=":material/call_split:",
    )
    if branch_list is not None
    else None
)
if box is not None and branch_list is not None:
    with box:
        tag_frame = feedback.run(writes.tags, tid, action="Listing tags")
        branch_ask = br.render_branches_panel(
            branch_list,
            tag_frame["tag"].tolist() if tag_frame is not None else [],
            key_prefix=state.versions_form(state.Versions.BRANCHES, table_id),
            read_only=read_only,
            create_lock=role_lock("create_table_branch", read_only),
            delete_lock=role_lock("delete_table_branch", read_only),
        )
        if branch_ask is not None:
            send_branch(branch_ask)


def fresh_panels(result: object, *, show_result: bool = False) -> None:
    """After a write: plan and comparisons start afresh (and, with ``show_result``, the
    result, a version, is opened in the picker)."""
    state.set_cleanup_plan(None)
    state.set_compare_pair(None)
    state.set_row_changes(None)
    state.set_branch_changes(None)
    state.set_rows_preview(None)
    state.put(state.Versions.UPDATE_PREVIEW, None)
    state.put(state.Versions.UPSERT_DRY_RUN, None)
    if show_result:
        state.show_version(result)


def send(write: writes.Write, *, show_result: bool = False, failure_key: str | None = None) -> None:
    """A write of this page; on success the table is read again (its branches too, for a
    write on a branch: one on main changes none), forms, plan and comparison start afresh,
    the result is said (and, with ``show_result``, opened in the picker). ``failure_key``:
    sent from a form's callback (the page then draws once, after it: the whole page, though
    the form is in the Manage versions fragment)."""
    writes.perform(
        write,
        page="versions",
        invalidate=[table_id],
        branches=branch != "main",
        then=lambda result: fresh_panels(result, show_result=show_result),
        failure_key=failure_key,
    )


def render_tags_section(version: int, branch: str | None = None) -> None:
    """The table's tags and the form to tag ``version`` (of ``branch``; ``None``: main), move
    or delete a tag; a change is sent as this page's write."""
    tags = feedback.run(writes.tags, tid, action="Listing tags")
    suffix = f".{branch}" if branch is not None else ""
    if tags is not None and (
        tag := render_tags(
            table_id,
            tags,
            version,
            key_prefix=state.versions_form(state.Versions.TAGS_FORM, table_id) + suffix,
            read_only=read_only,
            branch=branch,
        )
    ):
        send(tag.write(ns, table_id))


if branch != "main":
    info = br.branch_row(branch_list, branch)
    on_branch = feedback.run(
        br.branch_versions, tid, branch, action=f"Listing the versions of branch {branch}"
    )
    if info is None or on_branch is None or on_branch.empty:
        st.stop()
    br.render_branch_summary(branch, info, on_branch)
    change_log.render_change_log_panel(tid, on_branch, branch=branch)
    st.subheader("Compare with parent", anchor=False)
    change_log.render_branch_compare_section(
        tid, branch, br.made_from(info), row_delta=backend.capabilities(ns).row_delta
    )
    branch_picked = br.render_branch_version_picker(
        branch,
        on_branch,
        key_prefix=state.versions_form(state.Versions.BRANCH_VERSION, table_id),
    )
    with st.expander(
        f"Compare two versions of branch {branch}",
        icon=":material/difference:",
        key=state.Versions.BRANCH_COMPARE_OPEN,
    ):
        change_log.render_row_changes_section(
            table_id,
            branch_picked,
            *change_log.version_choice(on_branch, branch_picked),
            branch=branch,
        )
    render_version_actions(
        table_id,
        branch_picked,
        int(on_branch["version"].max()),
        key_prefix=state.versions_form(state.Versions.RESTORE_FORM, table_id) + f".{branch}",
        read_only=read_only,
        branch=branch,
        on_submit=lambda version, failure_key: send(
            restore_write(ns, table_id, version, branch), failure_key=failure_key
        ),
    )
    with st.expander(
        f"Tags on branch {branch}", icon=":material/sell:", key=state.Versions.BRANCH_TAGS_OPEN
    ):
        render_tags_section(branch_picked, branch)
    st.caption(":material/lock: " + br.MAIN_ONLY)
    st.stop()


latest = listed_latest(versions)
render_summary(tid, versions)
apply_version_link(table_id)  # before the list: its selected row is the version shown
tagged = writes.tagged(tid)
ops = render_listing(tid, versions, tagged=tagged)
change_log.render_change_log_panel(tid, versions)
picked = render_details_section(tid, versions, ops, tagged=tagged)
follow_version_link(picked)
render_version_actions(
    table_id,
    picked,
    latest,
    key_prefix=state.versions_form(state.Versions.RESTORE_FORM, table_id),
    read_only=read_only,
    on_submit=lambda version, failure_key: send(
        restore_write(ns, table_id, version), show_result=True, failure_key=failure_key
    ),
)
if answer := render_rebuild_offer(table_id, latest, read_only=read_only):
    writes.perform(
        rebuild_write(ns, answer, read_only=read_only),
        page="versions",
        invalidate=[table_id],
        reset=False,
    )


@st.fragment
def render_manage_panel() -> None:
    """The "Manage versions" panel, a fragment: opening it, switching its tabs, a preview, a
    plan or a comparison runs only the panel; its writes run the whole page (``send``)."""
    if (tabs := manage_tabs()) is None:
        return
    compare, tagging, cleanup, deleting, deleting_rows, updating, upserting = tabs
    if cleanup.open or deleting.open:  # these need every version
        history = feedback.run(versions_frame, tid, action=f"Listing the versions of {tid[-1]}")
        if history is None:
            return
    if compare.open:  # the versions listed, and a typed one looked up alone
        older, exists = compare_choice(tid, versions, picked)
        with compare:
            render_compare_section(table_id, picked, older, exists)
            change_log.render_row_changes_section(table_id, picked, older, exists)
    if tagging.open:
        with tagging:
            render_tags_section(picked)
    if cleanup.open:
        with cleanup:
            render_cleanup(
                ns,
                table_id,
                history,
                key_prefix=state.versions_form(state.Versions.CLEANUP_FORM, table_id),
                read_only=read_only,
                on_submit=lambda plan, failure_key: send(
                    cleanup_write(ns, table_id, plan), failure_key=failure_key
                ),
            )
    if deleting.open:
        with deleting:
            render_delete_form(
                table_id,
                history,
                key_prefix=state.versions_form(state.Versions.DELETE_FORM, table_id),
                read_only=read_only,
                tagged=tagged,
                on_submit=lambda ask, failure_key: send(
                    delete_versions_write(ns, table_id, ask), failure_key=failure_key
                ),
            )
    row_tab(deleting_rows, render_delete_rows, state.Versions.ROWS_FORM, delete_rows_write)
    row_tab(
        updating, row_edits.render_update_rows, state.Versions.UPDATE_FORM, row_edits.update_write
    )
    row_tab(upserting, row_edits.render_upsert, state.Versions.UPSERT_FORM, row_edits.upsert_write)


def row_tab(tab: Any, render: Callable[..., Any], form: str, write: Callable[..., Any]) -> None:
    """A row-edit tab of the panel, while open: its form on the table, whose submit sends
    ``write(ns, table_id, ask)`` from the button's callback."""
    if not tab.open:
        return
    with tab:
        render(
            ns,
            table_id,
            key_prefix=state.versions_form(form, table_id),
            read_only=read_only,
            on_submit=lambda ask, failure_key: send(
                write(ns, table_id, ask), failure_key=failure_key
            ),
        )


render_manage_panel()
