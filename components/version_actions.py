"""Versions page panels: the picker's deep links (``?tag=``), restore, time travel (Search &
tune's data preview), deletes of versions and rows, tags, cleanup by policy. Each returns what
to do (a :class:`~components.writes.Write`, a :class:`TagAction`, a ``CleanupPlan``); the page
sends it (``components.feedback.run``). Data and rules: ``backend.services.lifecycle``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pandas as pd
import streamlit as st
from lance_namespace.errors import (
    LanceNamespaceError,
    TableTagNotFoundError,
)

from backend.rules import ids, version_ranges
from backend.services import lifecycle as lc
from backend.services import rows as rsv
from backend.spec import catalog_views
from backend.text import plural
from components import feedback, state
from components.common import (
    confirmation_matches,
    dataframe,
    lazy_expander,
)
from components.connection import (
    role_lock,
    snippet_connection,
)
from components.snippets import python_snippet
from components.versions import TAGS_TAB, RangeDelete
from components.writes import (
    READ_ONLY,
    Write,
    confirmed_submit,
    lost_indexes,
    rebuild_offer,
    render_confirmed_form,
    runs,
    tag_version,
)

# --------------------------------------------------------------------------------------------
# Versions: the picker's deep links (?tag=) and the version to show after a write
# --------------------------------------------------------------------------------------------


def apply_version_link(table_id: Sequence[str]) -> None:
    """Before the version picker renders: the version a write asked to show
    (``state.show_version``), else the version of a ``?tag=`` link, resolved once per link and
    table (later picks are the user's). An unknown tag is a warning, once: the link leaves
    the URL and the picker shows what it would have shown without it."""
    pending = state.drop(state.Versions.PENDING)
    if pending is not None:
        state.put(state.QP_VERSION, int(pending))
    tag = st.query_params.get(state.QP_TAG)
    if not tag:
        state.drop(state.Versions.TAG_LINK)
        return
    link = (tuple(table_id), tag)
    known = state.get(state.Versions.TAG_LINK)
    if known and known[0] == link:
        return
    version, problem = _resolve_tag(table_id, tag)
    if problem:
        feedback.show("warning", problem)
        del st.query_params[state.QP_TAG]
        state.drop(state.Versions.TAG_LINK)
        return
    state.put(state.Versions.TAG_LINK, (link, version))
    state.open_manage_tab(TAGS_TAB)  # the link's tag is shown with the others
    if pending is None:
        state.put(state.QP_VERSION, version)


def _resolve_tag(table_id: Sequence[str], tag: str) -> tuple[int | None, str | None]:
    try:
        return tag_version(tuple(table_id), tag), None
    except TableTagNotFoundError:
        return (
            None,
            f"The link's tag {tag} does not exist on {ids.display_id(table_id)} (deleted, or never made).",
        )
    except LanceNamespaceError as err:
        return None, f"The link's tag {tag} could not be resolved. " + feedback.error_text(err)


def follow_version_link(picked: int) -> None:
    """After the picker: once another version than the link's is picked, ``?tag=`` leaves the
    URL (which then names the version shown, ``?version=``)."""
    known = state.get(state.Versions.TAG_LINK)
    if known and picked != known[1]:
        if state.QP_TAG in st.query_params:
            del st.query_params[state.QP_TAG]
        state.drop(state.Versions.TAG_LINK)


# --------------------------------------------------------------------------------------------
# Versions: restore, time travel
# --------------------------------------------------------------------------------------------


def search_link_params(table_id: Sequence[str]) -> list[tuple[str, str]]:
    """The query of Search & tune's data preview of ``table_id`` (the connection and the
    read-only switch come along). Not the version: ``?version=`` is bound to a widget, which
    ``st.switch_page`` may not set; it goes over as the value of the pickers' shared key."""
    query = [(state.QP_NAMESPACE, part) for part in table_id[:-1]]
    query += [(state.QP_TABLE, table_id[-1]), (state.QP_TAB, "preview")]
    for key in (state.QP_CONN, state.QP_READ_ONLY):
        if key in st.query_params:
            query.append((key, str(st.query_params[key])))
    return query


@dataclass(frozen=True)
class RebuildAnswer:
    """The user answered a rebuild offer: ``requests`` to start (Rebuild), or none (Not now)."""

    offer: lc.RebuildOffer
    answer: str  # lc.REBUILT | lc.DECLINED
    requests: list[Any]


def pending_rebuild_offer(table_id: Sequence[str]) -> lc.RebuildOffer | None:
    """The rebuild offer of ``table_id``, derived from its history (so it outlives a reload),
    unless this session answered it already. ``None`` quietly when it cannot be read."""
    try:
        offer = rebuild_offer(tuple(table_id))
    except LanceNamespaceError:
        return None
    if offer is None or state.rebuild_answered(table_id) == offer.restore_uuid:
        return None
    return offer


def render_rebuild_offer(table_id: Sequence[str], *, read_only: bool) -> RebuildAnswer | None:
    """While the table's latest version is a restore that left indexes behind and nobody
    answered: which, and "Rebuild the indexes" (their CreateTableIndex requests, for the page
    to start as index builds) or "Not now". Returns the answer for the page to record."""
    offer = pending_rebuild_offer(table_id)
    if offer is None:
        return None
    with st.container(border=True):
        st.markdown(feedback.as_text(offer.describe()))
        c1, c2, _ = st.columns([1, 1, 3])
        go = c1.button(
            "Rebuild the indexes",
            key=state.Versions.REBUILD_GO,
            type="primary",
            icon=":material/build:",
            disabled=read_only,
            help="Disabled: read-only connection" if read_only else None,
        )
        later = c2.button("Not now", key=state.Versions.REBUILD_DISMISS)
    if go:
        return RebuildAnswer(offer, lc.REBUILT, lc.rebuild_requests(table_id, offer.lost))
    if later:
        return RebuildAnswer(offer, lc.DECLINED, [])
    return None


def record_rebuild_answer(ns: Any, answer: RebuildAnswer, *, read_only: bool) -> bool:
    """The answer holds for this session, and for later ones where the namespace keeps it
    (``lifecycle.answer_rebuild_offer``; not on a read-only connection, which writes
    nothing). False when recording it failed (the error is shown)."""
    state.set_rebuild_answered(answer.offer.table_id, answer.offer.restore_uuid)
    if read_only:
        return True
    done = feedback.run(
        lc.answer_rebuild_offer, ns, answer.offer, answer.answer,
        action="Recording the answer to the rebuild offer",
    )  # fmt: skip
    return done is not None


def _restore(ns: Any, table_id: list[str], version: int, branch: str | None = None) -> int:
    """Restore ``version`` (of ``branch``; ``None``: main); the new latest version (read
    back, not guessed)."""
    lc.restore_version(ns, table_id, version, branch)
    return int(catalog_views.latest_version(ns, table_id, branch) or 0)


def restore_write(
    ns: Any, table_id: Sequence[str], version: int, branch: str | None = None
) -> Write:
    """RestoreTable of ``version`` (of ``branch``; ``None``: main); its result is the new
    version. On main the indexes it leaves behind are offered to be built again afterwards
    (``render_rebuild_offer``, from the table's history)."""
    where = ids.display_id(table_id)
    tid = list(table_id)
    on = f" on branch {branch}" if branch else ""

    def restore() -> int:
        return _restore(ns, tid, int(version), branch)

    return Write(
        restore, (), f"Restoring v{version}{on}",
        lambda new: f"Restored v{version} of {where}{on} as v{new}, the new latest version"
        + (" of the branch." if branch else "."),
    )  # fmt: skip


def delete_versions_write(ns: Any, table_id: Sequence[str], ask: RangeDelete) -> Write:
    """Delete the ranges asked for (``lifecycle.delete_versions``: a tagged version only with
    the tags the user agreed to delete, which go first), and its Python snippet."""

    def said(done: lc.VersionsDeleted) -> str:
        text = f"Deleted {plural(done.deleted_count, 'version')} of {ids.display_id(table_id)}"
        if done.deleted_tags:
            names = [t for v in sorted(done.deleted_tags) for t in done.deleted_tags[v]]
            text += (
                f" together with {plural(len(names), 'tag')}: "
                f"{version_ranges.describe_tags(done.deleted_tags)}"
            )
        return text + "."

    return Write(
        lc.delete_versions, (ns, list(table_id), ask.spans), "Deleting versions", said,
        kwargs={"delete_tags": bool(ask.tags)},
        snippet=python_snippet("batch_delete_table_versions", ask.request, snippet_connection()),
    )  # fmt: skip


def cleanup_write(ns: Any, table_id: Sequence[str], plan: lc.CleanupPlan) -> Write:
    n = plural(len(plan.delete), "version")
    return Write(
        lc.run_cleanup, (ns, plan), "Cleaning up",
        f"Deleted {n} of {ids.display_id(table_id)} ({runs(plan.delete)}; {plan.policy}).",
    )  # fmt: skip


@dataclass(frozen=True)
class RowsDelete:
    """A confirmed "Delete rows": the filter and the count its preview showed."""

    filter: str
    expected_count: int


def delete_rows_write(ns: Any, table_id: Sequence[str], ask: RowsDelete) -> Write:
    """Delete the rows ``ask.filter`` matches (``rows.delete_rows``: refused when the count
    moved since the preview); its result is a ``RowsDeleted``."""
    return Write(
        rsv.delete_rows, (ns, list(table_id), ask.filter), "Deleting rows",
        lambda done: f"{done} ({ids.display_id(table_id)})",
        kwargs={"expected_count": ask.expected_count},
    )  # fmt: skip


def render_delete_rows(
    ns: Any, table_id: list[str], *, key_prefix: str, read_only: bool
) -> RowsDelete | None:
    """ "Delete rows": a filter, its preview (how many rows match, a sample), then a typed
    confirmation; the delete to send once confirmed. Previewing is a read (every role); the
    delete is an admin's (``delete_from_table``), disabled with the reason otherwise."""
    table = table_id[-1]
    locked = role_lock(rsv.OPERATION, read_only)
    read_only = read_only or locked is not None
    st.caption(
        "Deletes the rows a filter (a SQL condition, e.g. id > 100 AND cat = 'x') matches, as a "
        "new version; earlier versions keep them until they are cleaned up. Preview first."
    )
    with st.form(f"{key_prefix}.preview", border=False):
        text = st.text_input("Filter", key=f"{key_prefix}.filter")
        previewed = st.form_submit_button("Preview", icon=":material/preview:")
    text = (text or "").strip()
    if previewed:
        state.set_rows_preview(None)
        found = feedback.run(
            rsv.preview_delete, ns, table_id, text, action="Previewing the rows to delete"
        )
        if found is not None:
            state.set_rows_preview(table_id, text, found)
    preview = state.rows_preview(table_id, text) if text else None
    if preview is None:
        if text and not previewed:
            st.caption("Preview this filter to see how many rows it deletes.")
        return None
    if preview.count == 0:
        feedback.show("info", f"No row of {table} matches {text}: nothing to delete.")
        return None
    st.markdown(
        f"**{plural(preview.count, 'row')}** "
        + feedback.as_text(f"{'matches' if preview.count == 1 else 'match'} {text}."),
    )
    if len(preview.sample) < preview.count:
        st.caption(f"A sample of {len(preview.sample):,} of them:")
    st.dataframe(preview.sample, hide_index=True)
    confirmed = render_confirmed_form(
        f"{key_prefix}.delete",
        table,
        what="table",
        button="Delete rows",
        icon=":material/delete:",
        not_done="Nothing deleted",
        read_only=read_only,
        locked=locked,
        confirm_prefix=key_prefix,
    )
    return RowsDelete(text, int(preview.count)) if confirmed else None


def _carry_version(version: int) -> None:
    """Callback of "Browse the data at vK": the version both pages' pickers share."""
    state.put(state.QP_VERSION, int(version))


def render_version_actions(
    table_id: Sequence[str],
    picked: int,
    latest: int,
    *,
    key_prefix: str,
    read_only: bool,
    branch: str | None = None,
) -> int | None:
    """Under the version's details: "Browse the data at vK" (Search & tune's data preview at
    that version; main only) and, for a version before the latest, "Restore this version"
    with a confirmation that says what it makes (on ``branch``: a new latest version of the
    branch). Returns the version to restore when confirmed.

    Not an ``st.page_link`` to ``search?...&version=K``: on a page change Streamlit drops the
    URL parameters bound to another page's widget, and ``?version=`` is bound to this page's
    picker. The version goes over as the value of the key both pages' pickers share
    (``state.QP_VERSION``); Search & tune then writes it to its URL."""
    if branch is None and st.button(
        f"Browse the data at v{picked}",
        key=state.Versions.BROWSE,
        icon=":material/travel_explore:",
        type="tertiary",
        on_click=_carry_version,
        args=(picked,),
    ):
        st.switch_page("views/search.py", query_params=search_link_params(table_id))
    of = f" of branch {branch}" if branch else ""
    if picked == latest:
        st.caption(f"v{picked} is the latest version{of}: there is nothing to restore.")
        return None
    new = latest + 1
    box = lazy_expander(
        "Restore this version", key=state.Versions.RESTORE_OPEN, icon=":material/restore:"
    )
    if box is None:
        return None
    with box:
        lost = (
            feedback.run(
                lost_indexes,
                tuple(table_id),
                int(picked),
                action=f"Reading the indexes of v{picked}",
            )
            if branch is None  # the indexes lost are read from main's history
            else None
        )
        if lost:
            st.warning(
                feedback.as_text(
                    f"The latest version has {plural(len(lost), 'index', 'indexes')} that "
                    f"v{picked} does not: {', '.join(ix.describe() for ix in lost)}. The restored version "
                    "will have none of them; once restored, they can be built again with their "
                    "recorded parameters."
                ),
                icon=":material/warning:",
            )
    with box, st.form(f"{key_prefix}.{picked}", border=False):
        st.caption(
            f"Restoring makes a new latest version{of}, v{new}, whose content is v{picked}'s. "
            f"Versions v{picked} to v{latest} stay as they are (time travel still reaches them)."
            + (" Main and the other branches are not changed." if branch else "")
        )
        confirmed = st.checkbox(
            f"I understand: this creates version {new}{of} with the content of v{picked}",
            key=f"{key_prefix}.{picked}.confirm",
        )
        submitted = st.form_submit_button(
            f"Restore v{picked}", type="primary", icon=":material/restore:", disabled=read_only
        )
    if not confirmed_submit(
        submitted,
        read_only=read_only,
        confirmed=confirmed,
        refusal=f"Not restored: tick the box to confirm v{new} from v{picked}.",
    ):
        return None
    return picked


# --------------------------------------------------------------------------------------------
# Versions: tags
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TagAction:
    """A tag write: ``create`` / ``move`` (to ``version``) or ``delete``."""

    kind: str
    tag: str
    version: int | None = None
    branch: str | None = None  # the branch of ``version`` (``None``: main)

    def write(self, ns: Any, table_id: Sequence[str]) -> Write:
        tid, where = list(table_id), ids.display_id(table_id)
        of = f" of branch {self.branch}" if self.branch else ""
        if self.kind == "create":
            return Write(
                lc.create_tag, (ns, tid, self.tag, self.version, self.branch),
                f"Tagging v{self.version}{of}",
                f"Tagged v{self.version}{of} of {where} as {self.tag}.",
            )  # fmt: skip
        if self.kind == "move":
            return Write(
                lc.move_tag, (ns, tid, self.tag, self.version, self.branch),
                f"Moving tag {self.tag}",
                f"Moved tag {self.tag} of {where} to v{self.version}{of}.",
            )  # fmt: skip
        return Write(
            lc.delete_tag, (ns, tid, self.tag), f"Deleting tag {self.tag}",
            f"Deleted tag {self.tag} of {where}; its version stays.",
        )  # fmt: skip


def render_tags(
    table_id: Sequence[str],
    frame: pd.DataFrame,
    picked: int,
    *,
    key_prefix: str,
    read_only: bool,
    branch: str | None = None,
) -> TagAction | None:
    """The tags grid (tag, version, and the branch of each where any is on a branch), tag
    the picked version (of ``branch``; ``None``: main), move a tag to it, delete a tag (typed
    confirmation). Returns the write asked for, once it checks out."""
    names = list(frame["tag"])
    where = dict(zip(frame["tag"], frame["version"].astype(int), strict=True))
    branches = frame["branch"] if "branch" in frame.columns else ["main"] * len(frame)
    on = dict(zip(frame["tag"], branches, strict=True))
    here = branch or "main"
    of = f" of branch {branch}" if branch else ""
    if frame.empty:
        st.caption(
            "No tags yet. A tag names a version (a deep link ?tag=name opens it); tagged "
            "versions are never cleaned up."
        )
    else:
        shown = ["tag", "version"] + (["branch"] if set(on.values()) - {"main"} else [])
        dataframe(
            frame[shown],
            hide_index=True,
            key=f"{key_prefix}.grid",
            width="content",
            height=35 * (min(len(frame), 10) + 1) + 3,
            column_config={
                "tag": st.column_config.TextColumn("Tag", width=200),
                "version": st.column_config.NumberColumn("Version", format="%d", width=90),
                "branch": st.column_config.TextColumn("Branch", width=120),
            },
        )
        on_picked = [n for n in names if where[n] == picked and on.get(n, "main") == here]
        if on_picked:
            st.caption(feedback.as_text(f"v{picked}{of} is tagged {', '.join(on_picked)}."))
    with st.form(f"{key_prefix}.create", border=False):
        c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
        new = c1.text_input("New tag", key=f"{key_prefix}.create.name", placeholder="e.g. gold")
        create = c2.form_submit_button(
            f"Tag v{picked}", icon=":material/sell:", disabled=read_only, width="stretch"
        )
    move = delete = False
    moved = doomed = typed = None
    if names:  # the tab is drawn only while open: the move and delete forms go with it
        left, right = st.columns(2)
        with left, st.form(f"{key_prefix}.move"):
            moved = st.selectbox(
                "Tag to move", names, index=None, key=f"{key_prefix}.move.tag",
                placeholder=f"pick one of {plural(len(names), 'tag')}",
            )  # fmt: skip
            move = st.form_submit_button(
                f"Move to v{picked}", icon=":material/move_up:", disabled=read_only
            )
        with right, st.form(f"{key_prefix}.delete"):
            doomed = st.selectbox(
                "Tag to delete", names, index=None, key=f"{key_prefix}.delete.tag",
                placeholder=f"pick one of {plural(len(names), 'tag')}",
            )  # fmt: skip
            typed = st.text_input(
                "Type the tag name to confirm", key=f"{key_prefix}.delete.confirm"
            )
            delete = st.form_submit_button(
                "Delete tag", icon=":material/delete:", disabled=read_only
            )
    if not (create or move or delete):
        return None
    if read_only:
        feedback.show("error", READ_ONLY)
        return None
    if create:
        name = (new or "").strip()
        problem = ids.label_problem(name, what="tag", create=True) if name else "Enter a tag name."
        if not problem and name in where:
            tagged_on = on.get(name, "main")
            at = f"v{where[name]}" + (f" of branch {tagged_on}" if tagged_on != "main" else "")
            problem = f"Tag {name} already exists (on {at}): move it instead."
        if problem:
            feedback.show("error", f"Not tagged. {problem[:1].upper()}{problem[1:]}")
            return None
        warning = ids.tag_name_warning(name)
        asked = (tuple(table_id), name)
        if warning and state.get(state.Versions.TAG_WARNED) != asked:
            state.put(state.Versions.TAG_WARNED, asked)
            feedback.show(
                "warning",
                f"Not tagged yet: {warning}. Press Tag v{picked} again to create it anyway, "
                "or choose another name.",
            )
            return None
        state.put(state.Versions.TAG_WARNED, None)
        return TagAction("create", name, picked, branch)
    if move:
        if not moved:
            feedback.show("error", "Not moved: pick the tag to move.")
        elif where.get(moved) == picked and on.get(moved, "main") == here:
            feedback.show("info", f"Tag {moved} already points at v{picked}{of}.")
        else:
            return TagAction("move", moved, picked, branch)
        return None
    if not doomed:
        feedback.show("error", "Not deleted: pick the tag to delete.")
    elif not confirmation_matches(typed, doomed):
        feedback.show("error", f"Not deleted: type {doomed} exactly to confirm.")
    else:
        return TagAction("delete", doomed)
    return None


# --------------------------------------------------------------------------------------------
# Versions: cleanup by policy
# --------------------------------------------------------------------------------------------


def render_cleanup(
    ns: Any, table_id: Sequence[str], versions: pd.DataFrame, *, key_prefix: str, read_only: bool
) -> lc.CleanupPlan | None:
    """A policy (keep the newest N, older than D days, or both), its dry run (kept on the
    session per table: every version with what happens to it), then "Delete N versions"
    with a typed confirmation. Returns the plan to run once confirmed."""
    st.caption(
        "A version goes when it is outside the newest N and older than D days (both when both "
        "are given). The latest version and every tagged version always stay."
    )
    with st.form(f"{key_prefix}.policy", border=False):
        c1, c2, c3 = st.columns([1, 1, 1], vertical_alignment="bottom")
        keep = c1.number_input(
            "Keep the newest", min_value=1, value=None, step=1, placeholder="any number",
            key=f"{key_prefix}.keep",
        )  # fmt: skip
        days = c2.number_input(
            "Older than (days)", min_value=0, value=None, step=1, placeholder="any age",
            key=f"{key_prefix}.days",
        )  # fmt: skip
        dry_run = c3.form_submit_button("Dry run", icon=":material/checklist:")
    if dry_run:
        plan = feedback.run(
            lc.cleanup_plan,
            ns,
            list(table_id),
            keep_last=int(keep) if keep is not None else None,
            older_than=timedelta(days=int(days)) if days is not None else None,
            action="Dry run",
        )
        state.set_cleanup_plan(list(table_id), plan)
    plan = state.cleanup_plan(list(table_id))
    if plan is None:
        return None
    latest = int(versions["version"].max())
    if plan.latest != latest or not set(plan.delete) <= set(versions["version"]):
        feedback.show(
            "warning",
            f"The table changed since the dry run (its latest version was v{plan.latest}, now "
            f"v{latest}): run it again.",
        )
        return None
    render_cleanup_plan(plan, versions, key_prefix=key_prefix)
    if not plan.delete:
        return None
    table = table_id[-1]
    locked = role_lock("batch_delete_table_versions", read_only)
    read_only = read_only or locked is not None
    confirmed = render_confirmed_form(
        f"{key_prefix}.run",
        table,
        what="table",
        button=f"Delete {plural(len(plan.delete), 'version')}",
        icon=":material/delete_sweep:",
        not_done="Nothing deleted",
        read_only=read_only,
        locked=locked,
    )
    return plan if confirmed else None


def plan_frame(plan: lc.CleanupPlan, versions: pd.DataFrame) -> pd.DataFrame:
    """Every version (newest first) with what the plan does to it, and why."""
    going = set(plan.delete)

    def fate(v: int) -> str:
        if v in going:
            return "deleted"
        if v == plan.latest:
            return "kept: latest"
        if v in plan.protected:
            return "kept: tagged " + ", ".join(plan.protected[v])
        return "kept: policy"

    rows = versions[["version", "timestamp"]].copy()
    rows["version"] = rows["version"].astype(int)
    rows["fate"] = [fate(int(v)) for v in rows["version"]]
    return rows.reset_index(drop=True)


def render_cleanup_plan(plan: lc.CleanupPlan, versions: pd.DataFrame, *, key_prefix: str) -> None:
    """The dry run: one line saying what goes and what is protected, and the versions."""
    tagged = ", ".join(f"v{v} ({', '.join(t)})" for v, t in sorted(plan.protected.items()))
    head = f"Dry run ({plan.policy}): "
    if plan.delete:
        head += f"deletes {plural(len(plan.delete), 'version')} ({runs(plan.delete)})"
        head += f", keeps {plural(len(plan.keep), 'version')}"
    else:
        head += "deletes nothing"
    head += f". Kept because tagged: {tagged}." if tagged else ". No tagged version is affected."
    feedback.show("info", head)
    dataframe(
        plan_frame(plan, versions),
        hide_index=True,
        key=f"{key_prefix}.plan",
        width="content",
        height=35 * (min(len(versions), 10) + 1) + 3,
        column_config={
            "version": st.column_config.NumberColumn("Version", format="%d", width=80),
            "timestamp": st.column_config.DatetimeColumn(
                "Created (UTC)", format="YYYY-MM-DD HH:mm:ss", width=170
            ),
            "fate": st.column_config.TextColumn("Dry run", width=220),
        },
    )


__all__ = [
    "RebuildAnswer",
    "RowsDelete",
    "TagAction",
    "apply_version_link",
    "cleanup_write",
    "delete_rows_write",
    "delete_versions_write",
    "follow_version_link",
    "pending_rebuild_offer",
    "plan_frame",
    "record_rebuild_answer",
    "render_cleanup",
    "render_cleanup_plan",
    "render_delete_rows",
    "render_rebuild_offer",
    "render_tags",
    "render_version_actions",
    "restore_write",
    "search_link_params",
]
