"""The life of a table and a namespace after creation, as panels.

Versions page: restore a version, time travel to it (Search & tune's data preview), tags
(with the ``?tag=`` deep link), cleanup by policy. Namespaces & tables page: drop vs
deregister, rename or move, schema metadata, drop a namespace (RESTRICT or CASCADE).

Data and rules come from ``backend.services.lifecycle``; every panel returns what to do
(a version, a :class:`TagAction`, a ``CleanupPlan``, a :class:`TableAction`, a
:class:`DropNamespace`) and the page sends it (``components.feedback.run``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pandas as pd
import streamlit as st
from lance_namespace.errors import (
    LanceNamespaceError,
    TableTagNotFoundError,
)

import backend
from backend.rules import ids, version_ranges
from backend.rules import properties as props
from backend.services import catalog_views
from backend.services import lifecycle as lc
from backend.services import namespaces as nsv
from backend.services import rows as rsv
from backend.text import human_bytes, plural
from components import feedback, state
from components.cache import CATALOG, cached, table_scope
from components.common import (
    confirmation_matches,
    lazy_expander,
    render_mapping,
    render_path,
    render_typed_confirmation,
)
from components.connection import (
    render_role_lock,
    role_lock,
    snippet_connection,
)
from components.snippets import python_snippet
from components.versions import TAGS_TAB, RangeDelete

READ_ONLY = "The connection is read-only."

# --------------------------------------------------------------------------------------------
# Cached reads
# --------------------------------------------------------------------------------------------


@cached(table_scope, ttl=30)
def tags(ns: Any, table_id: tuple[str, ...]) -> pd.DataFrame:
    """Every tag of the table: tag, version, manifest_size."""
    return lc.list_tags(ns, table_id)


def tagged(table_id: tuple[str, ...]) -> dict[int, list[str]] | None:
    """version -> its tags, for forms that say which versions are tagged (``None``, quietly,
    when the tags cannot be listed: the write checks them again before sending)."""
    try:
        return lc.tagged_versions(tags(table_id))
    except LanceNamespaceError:
        return None


@cached(lambda table_id, tag: table_scope(table_id), ttl=30)
def tag_version(ns: Any, table_id: tuple[str, ...], tag: str) -> int:
    return lc.tag_version(ns, table_id, tag)


@cached(table_scope, ttl=30)
def drop_preview(ns: Any, table_id: tuple[str, ...]) -> lc.DropPreview:
    return lc.drop_preview(ns, table_id)


@cached(table_scope, ttl=30)
def schema_metadata(ns: Any, table_id: tuple[str, ...]) -> dict[str, str]:
    return lc.schema_metadata(ns, table_id)


@cached(lambda namespace_id: CATALOG, ttl=30)
def children(ns: Any, namespace_id: tuple[str, ...]) -> lc.Children:
    return lc.namespace_children(ns, namespace_id)


def _path(parts: Sequence[str]) -> str:
    """``sales › eu`` (``(root)`` for the empty path), as the other pages say it."""
    return ids.display_id(parts)


def runs(versions: Sequence[int]) -> str:
    """``[1, 2, 3, 5]`` -> ``"1-3, 5"`` (inclusive runs, as the delete form reads them)."""
    return version_ranges.format_spans(version_ranges.spans_of(versions))


def confirmed_submit(submitted: bool, *, read_only: bool, confirmed: bool, refusal: str) -> bool:
    """Whether a confirmed write form may go ahead: submitted, on a writable connection, and
    confirmed; otherwise why not is shown (``refusal`` when the confirmation is missing)."""
    if not submitted:
        return False
    if read_only:
        feedback.show("error", READ_ONLY)
    elif not confirmed:
        feedback.show("error", refusal)
    else:
        return True
    return False


@dataclass(frozen=True)
class Write:
    """One write for a page to send with ``feedback.run(write.call, action=write.action)``:
    ``fn(*args, **kwargs)``. On success :meth:`said` is the message; ``touched`` tables (and
    the listings) are read again and the selection moves to ``go`` (namespace, table)."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    action: str
    success: str | Callable[[Any], str]
    touched: list[list[str]] = field(default_factory=list)
    go: tuple[list[str], str | None] | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    snippet: str | None = None  # the write as Python, shown with the result
    # what to warn of after a success (``None``: nothing), e.g. a table still listed
    warning: Callable[[Any], str | None] | None = None

    def call(self) -> tuple[Any]:
        """The result as a 1-tuple: never ``None`` on success, even for an operation that
        returns nothing (``feedback.run`` gives ``None`` on failure)."""
        return (self.fn(*self.args, **self.kwargs),)

    def said(self, result: Any) -> str:
        return self.success(result) if callable(self.success) else self.success

    def warned(self, result: Any) -> str | None:
        return self.warning(result) if self.warning is not None else None

    def flash(self, page: str, result: Any, **extra: Any) -> None:
        """The result, said once on ``page`` after the rerun: a success, or a warning that
        starts with it when :meth:`warned` has something to say."""
        warning = self.warned(result)
        text = self.said(result) + (f" {warning}" if warning else "")
        feedback.flash(page, "warning" if warning else "success", text, **extra)


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
            f"The link's tag {tag} does not exist on {_path(table_id)} (deleted, or never made).",
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


def _restore(ns: Any, table_id: list[str], version: int) -> int:
    """Restore ``version``; the new latest version (read back, not guessed)."""
    lc.restore_version(ns, table_id, version)
    return int(catalog_views.latest_version(ns, table_id) or 0)


def restore_write(ns: Any, table_id: Sequence[str], version: int) -> Write:
    """RestoreTable of ``version``; its result is the new version."""
    where = _path(table_id)
    return Write(
        _restore, (ns, list(table_id), int(version)), f"Restoring v{version}",
        lambda new: f"Restored v{version} of {where} as v{new}, the new latest version.",
    )  # fmt: skip


def delete_versions_write(ns: Any, table_id: Sequence[str], ask: RangeDelete) -> Write:
    """Delete the ranges asked for (``lifecycle.delete_versions``: a tagged version only with
    the tags the user agreed to delete, which go first), and its Python snippet."""

    def said(done: lc.VersionsDeleted) -> str:
        text = f"Deleted {plural(done.deleted_count, 'version')} of {_path(table_id)}"
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
        f"Deleted {n} of {_path(table_id)} ({runs(plan.delete)}; {plan.policy}).",
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
        lambda done: f"{done} ({_path(table_id)})",
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
    with st.form(f"{key_prefix}.delete", border=False):
        confirmed = render_typed_confirmation(
            table, key_prefix=key_prefix, label=f"Type the table name {table} to confirm"
        )
        submitted = st.form_submit_button(
            "Delete rows", type="primary", icon=":material/delete:", disabled=read_only
        )
        render_role_lock(locked)
    if not confirmed_submit(
        submitted,
        read_only=read_only,
        confirmed=confirmed,
        refusal=f"Nothing deleted: type {table} exactly to confirm.",
    ):
        return None
    return RowsDelete(text, int(preview.count))


def _carry_version(version: int) -> None:
    """Callback of "Browse the data at vK": the version both pages' pickers share."""
    state.put(state.QP_VERSION, int(version))


def render_version_actions(
    table_id: Sequence[str], picked: int, latest: int, *, key_prefix: str, read_only: bool
) -> int | None:
    """Under the version's details: "Browse the data at vK" (Search & tune's data preview at
    that version) and, for a version before the latest, "Restore this version" with a
    confirmation that says what it makes. Returns the version to restore when confirmed.

    Not an ``st.page_link`` to ``search?...&version=K``: on a page change Streamlit drops the
    URL parameters bound to another page's widget, and ``?version=`` is bound to this page's
    picker. The version goes over as the value of the key both pages' pickers share
    (``state.QP_VERSION``); Search & tune then writes it to its URL."""
    if st.button(
        f"Browse the data at v{picked}",
        key=state.Versions.BROWSE,
        icon=":material/travel_explore:",
        type="tertiary",
        on_click=_carry_version,
        args=(picked,),
    ):
        st.switch_page("views/search.py", query_params=search_link_params(table_id))
    if picked == latest:
        st.caption(f"v{picked} is the latest version: there is nothing to restore.")
        return None
    new = latest + 1
    box = lazy_expander(
        "Restore this version", key=state.Versions.RESTORE_OPEN, icon=":material/restore:"
    )
    if box is None:
        return None
    with box, st.form(f"{key_prefix}.{picked}", border=False):
        st.caption(
            f"Restoring makes a new latest version, v{new}, whose content is v{picked}'s. "
            f"Versions v{picked} to v{latest} stay as they are (time travel still reaches them)."
        )
        confirmed = st.checkbox(
            f"I understand: this creates version {new} with the content of v{picked}",
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

    def write(self, ns: Any, table_id: Sequence[str]) -> Write:
        tid, where = list(table_id), _path(table_id)
        if self.kind == "create":
            return Write(
                lc.create_tag, (ns, tid, self.tag, self.version), f"Tagging v{self.version}",
                f"Tagged v{self.version} of {where} as {self.tag}.",
            )  # fmt: skip
        if self.kind == "move":
            return Write(
                lc.move_tag, (ns, tid, self.tag, self.version), f"Moving tag {self.tag}",
                f"Moved tag {self.tag} of {where} to v{self.version}.",
            )  # fmt: skip
        return Write(
            lc.delete_tag, (ns, tid, self.tag), f"Deleting tag {self.tag}",
            f"Deleted tag {self.tag} of {where}; its version stays.",
        )  # fmt: skip


def render_tags(
    table_id: Sequence[str], frame: pd.DataFrame, picked: int, *, key_prefix: str, read_only: bool
) -> TagAction | None:
    """The tags grid (tag, version), tag the picked version, move a tag to it, delete a tag
    (typed confirmation). Returns the write asked for, once it checks out."""
    names = list(frame["tag"])
    where = dict(zip(frame["tag"], frame["version"].astype(int), strict=True))
    if frame.empty:
        st.caption(
            "No tags yet. A tag names a version (a deep link ?tag=name opens it); tagged "
            "versions are never cleaned up."
        )
    else:
        st.dataframe(
            frame[["tag", "version"]],
            hide_index=True,
            key=f"{key_prefix}.grid",
            width="content",
            height=35 * (min(len(frame), 10) + 1) + 3,
            column_config={
                "tag": st.column_config.TextColumn("Tag", width=200),
                "version": st.column_config.NumberColumn("Version", format="%d", width=90),
            },
        )
        on_picked = [n for n in names if where[n] == picked]
        if on_picked:
            st.caption(feedback.as_text(f"v{picked} is tagged {', '.join(on_picked)}."))
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
            problem = f"Tag {name} already exists (on v{where[name]}): move it instead."
        if problem:
            feedback.show("error", f"Not tagged. {problem[:1].upper()}{problem[1:]}")
            return None
        return TagAction("create", name, picked)
    if move:
        if not moved:
            feedback.show("error", "Not moved: pick the tag to move.")
        elif where.get(moved) == picked:
            feedback.show("info", f"Tag {moved} already points at v{picked}.")
        else:
            return TagAction("move", moved, picked)
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
    with st.form(f"{key_prefix}.run", border=False):
        confirmed = render_typed_confirmation(
            table, key_prefix=f"{key_prefix}.run", label=f"Type the table name {table} to confirm"
        )
        submitted = st.form_submit_button(
            f"Delete {plural(len(plan.delete), 'version')}",
            type="primary",
            icon=":material/delete_sweep:",
            disabled=read_only,
        )
        render_role_lock(locked)
    if not confirmed_submit(
        submitted,
        read_only=read_only,
        confirmed=confirmed,
        refusal=f"Nothing deleted: type {table} exactly to confirm.",
    ):
        return None
    return plan


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
    st.dataframe(
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


# --------------------------------------------------------------------------------------------
# Tables: drop vs deregister, rename or move, schema metadata
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TableAction:
    """A table write: ``drop`` (deletes data), ``deregister`` (keeps it), ``rename`` (to
    ``name`` in ``namespace``), ``metadata`` (schema metadata keys to set) or
    ``remove_metadata`` (schema metadata ``keys`` to remove)."""

    kind: str
    name: str | None = None
    namespace: tuple[str, ...] | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    keys: tuple[str, ...] = ()

    def write(self, ns: Any, table_id: Sequence[str]) -> Write:
        tid, where = list(table_id), _path(table_id)
        here = (tid[:-1], None)
        if self.kind == "drop":
            return Write(
                lc.drop_table, (ns, tid), f"Dropping {tid[-1]}",
                f"Dropped table {where}: its data was deleted.", [tid], here,
            )  # fmt: skip
        if self.kind == "deregister":
            return Write(
                lc.deregister_and_check, (ns, tid), "Deregistering",
                lambda done: (
                    f"Deregistered table {where}; its files stay at its location. "
                    + lc.register_again_hint(where, done.response.location)
                ), [tid], here,
                warning=lambda done: (
                    lc.still_listed_warning(where) if done.still_listed else None
                ),
            )  # fmt: skip
        if self.kind == "rename":
            target = [*(self.namespace or ()), self.name or tid[-1]]
            return Write(
                lc.rename_table, (ns, tid, target[-1], target[:-1]), f"Renaming {tid[-1]}",
                f"Renamed table {where} to {_path(target)}.", [tid, target],
                (target[:-1], target[-1]), {"caps": backend.capabilities(ns)},
            )  # fmt: skip
        if self.kind == "remove_metadata":
            return Write(
                lc.remove_schema_metadata_keys, (ns, tid, list(self.keys)),
                "Removing metadata keys",
                f"Removed from the schema metadata of {where}: {', '.join(sorted(self.keys))}.",
                [tid], (tid[:-1], tid[-1]),
            )  # fmt: skip
        keys = ", ".join(sorted(self.metadata))
        return Write(
            lc.update_schema_metadata, (ns, tid, dict(self.metadata)), "Saving the metadata",
            f"Saved the schema metadata of {where}: {keys}.", [tid], (tid[:-1], tid[-1]),
        )  # fmt: skip


def render_table_actions(
    ns: Any, detail: nsv.TableDetail, *, key_prefix: str, read_only: bool
) -> TableAction | None:
    """Schema metadata and rename/move side by side, then drop vs deregister side by side:
    the write asked for, once confirmed."""
    table_id = list(detail.id)
    meta_col, rename_col = st.columns(2)
    with meta_col:
        action = render_schema_metadata(
            detail,
            key_prefix=f"{key_prefix}.meta",
            read_only=read_only,
            caps=backend.capabilities(ns),
        )
    with rename_col:
        action = action or render_rename(
            ns, table_id, key_prefix=f"{key_prefix}.rename", read_only=read_only
        )
    drop_col, deregister_col = st.columns(2)
    with drop_col:
        action = action or render_drop_form(
            table_id, key_prefix=f"{key_prefix}.drop", read_only=read_only
        )
    with deregister_col:
        version = state.form_version("tables")
        action = action or render_deregister_form(
            detail, key_prefix=f"tables.deregister{version}", read_only=read_only
        )
    return action


def _preview_lines(preview: lc.DropPreview) -> str:
    """What a table holds, in one sentence: files and bytes on a local root, latest version."""
    if preview.latest is None:
        return "No data yet (a declared table): only its catalog entry."
    parts = [f"latest version v{preview.latest}"]
    if preview.files is not None and preview.bytes is not None:
        parts.insert(0, f"{plural(preview.files, 'file')}, {human_bytes(preview.bytes)}")
    return "Its data: " + ", ".join(parts) + " (every version and tag)."


def render_drop_form(
    table_id: list[str], *, key_prefix: str, read_only: bool
) -> TableAction | None:
    """ "Drop table (deletes data)": what goes (``lifecycle.drop_preview``), a typed
    confirmation; read only while the expander is open."""
    box = lazy_expander(
        "Drop table (deletes data)",
        key=state.panel_key(state.Tables.DROP_OPEN, table_id),
        icon=":material/delete_forever:",
    )
    if box is None:
        return None
    name = table_id[-1]
    locked = role_lock("drop_table", read_only)
    read_only = read_only or locked is not None
    with box:
        preview = feedback.run(drop_preview, tuple(table_id), action=f"Reading {name}")
        st.caption(
            feedback.as_text(f"Removes {_path(table_id)} from the catalog and deletes its data at:")
        )
        if preview is not None:
            render_path(preview.local_path or preview.location or "(no location)")
            st.caption(feedback.as_text(_preview_lines(preview) + " This cannot be undone."))
        with st.form(f"{key_prefix}.form", border=False):
            confirmed = render_typed_confirmation(
                name, key_prefix=key_prefix, label=f"Type the table name {name} to confirm"
            )
            submitted = st.form_submit_button(
                "Drop table", type="primary", icon=":material/delete_forever:", disabled=read_only
            )
        render_role_lock(locked)
    if not confirmed_submit(
        submitted,
        read_only=read_only,
        confirmed=confirmed,
        refusal=f"Not dropped: type {name} exactly to confirm.",
    ):
        return None
    return TableAction("drop")


def render_deregister_form(
    detail: nsv.TableDetail, *, key_prefix: str, read_only: bool
) -> TableAction | None:
    """ "Deregister table (keeps data)": what stays (``lifecycle.drop_preview``, read once the
    expander is open), a typed confirmation."""
    table_id = list(detail.id)
    name = table_id[-1]
    locked = role_lock("deregister_table", read_only)
    read_only = read_only or locked is not None
    box = st.expander(
        "Deregister table (keeps data)",
        icon=":material/link_off:",
        key=state.panel_key(state.Tables.DEREGISTER_OPEN, table_id),
        on_change="rerun",
    )
    with box:
        st.caption(
            feedback.as_text(
                f"Removes {_path(table_id)} from the catalog; nothing is deleted. Its data "
                "stays at:"
            )
        )
        preview = feedback.run(drop_preview, tuple(table_id), action=name) if box.open else None
        render_path((preview.local_path if preview else None) or detail.location or "(no location)")
        if preview is not None:
            st.caption(feedback.as_text(_preview_lines(preview).replace("Its data", "Kept")))
        st.caption(
            feedback.as_text(lc.register_again_hint(_path(table_id), detail.location or None))
        )
        with st.form(key_prefix, border=False):
            confirmed = render_typed_confirmation(
                name, key_prefix=key_prefix, label=f"Type the table name {name} to confirm"
            )
            submitted = st.form_submit_button(
                "Deregister", icon=":material/link_off:", disabled=read_only
            )
        render_role_lock(locked)
    if not confirmed_submit(
        submitted,
        read_only=read_only,
        confirmed=confirmed,
        refusal=f"Not deregistered: type {name} exactly to confirm.",
    ):
        return None
    return TableAction("deregister")


@dataclass(frozen=True)
class RegisterTable:
    """RegisterTable: existing Lance data at ``location`` becomes table ``name`` here."""

    name: str
    location: str

    def write(self, ns: Any, namespace: Sequence[str]) -> Write:
        tid = [*namespace, self.name]
        return Write(
            lc.register_table, (ns, tid, self.location), f"Registering {self.name}",
            f"Registered table {_path(tid)} at {self.location}.", [tid], (list(namespace), self.name),
        )  # fmt: skip


def render_register_form(
    namespace: Sequence[str], *, key_prefix: str, read_only: bool
) -> RegisterTable | None:
    """ "Register a table (existing data)": a name in this namespace and the location of the
    data (a deregistered table's location, as its deregistration said it)."""
    locked = role_lock("register_table", read_only)
    read_only = read_only or locked is not None
    if not namespace:
        return None  # root-level registrations cannot be read back by a directory namespace
    with st.expander("Register a table (existing data)", icon=":material/link:"):
        st.caption(
            feedback.as_text(
                f"Adds existing Lance data to {_path(namespace)} under a name; nothing is "
                "copied. The location must be under the namespace root, hold a dataset and "
                "not be another table's."
            )
        )
        with st.form(key_prefix, border=False):
            name = st.text_input("Table name", key=f"{key_prefix}.name")
            location = st.text_input(
                "Location", key=f"{key_prefix}.location", placeholder="file:///.../table.lance"
            )
            submitted = st.form_submit_button(
                "Register", icon=":material/link:", disabled=read_only
            )
        render_role_lock(locked)
    if not submitted or read_only:
        return None
    problem = ids.name_problem(name)
    if problem:
        feedback.show("error", f"Not registered: {problem}")
        return None
    if not (location or "").strip():
        feedback.show("error", "Not registered: enter the location of the table's data.")
        return None
    return RegisterTable(name.strip(), location.strip())


def rename_caption(caps: backend.BackendCapabilities) -> str:
    if caps.rename is False:
        return (
            "This server does not implement RenameTable (its server profile, or its answer "
            "to a rename, says so): tables cannot be renamed or moved on this connection."
        )
    if caps.rename is None:
        return (
            "Whether this server implements RenameTable is unknown until it answers a "
            "rename (a connection's server profile can say): if it does not, it refuses and "
            "nothing is renamed."
        )
    return (
        "The table keeps its data, versions and tags; only its name and namespace change "
        "(one catalog commit)."
    )


def render_rename(
    ns: Any, table_id: list[str], *, key_prefix: str, read_only: bool
) -> TableAction | None:
    """ "Rename or move": a new name and a target namespace (the current one, its children,
    its parent, its siblings or the root). On a server without RenameTable the form is disabled
    and says so (``backend.capabilities(ns)``: the connection's server profile, or the server's
    answer to an earlier rename; nothing is sent to find out)."""
    from components.tables import nearby_namespaces

    box = lazy_expander(
        "Rename or move",
        key=state.panel_key(state.Tables.RENAME_OPEN, table_id),
        icon=":material/drive_file_rename_outline:",
    )
    if box is None:
        return None
    current = table_id[:-1]
    with box:
        caps = backend.capabilities(ns)
        unsupported = caps.rename is False
        st.caption(rename_caption(caps))
        nearby = feedback.run(nearby_namespaces, current, action="Listing namespaces") or []
        here = tuple(current)
        # the current namespace, its children, its parent, its siblings, the root
        inside = [n for n in nearby if n[: len(here)] == here and n != here]
        spaces = list(dict.fromkeys([here, *inside, here[:-1], *nearby, ()]))
        with st.form(f"{key_prefix}.form", border=False):
            name = st.text_input(
                "New name", value=table_id[-1], key=f"{key_prefix}.name", disabled=unsupported
            )
            target = st.selectbox(
                "Namespace",
                spaces,
                index=0,
                format_func=_path,
                key=f"{key_prefix}.namespace",
                disabled=unsupported,
            )
            submitted = st.form_submit_button(
                "Rename", icon=":material/drive_file_rename_outline:",
                disabled=read_only or unsupported,
            )  # fmt: skip
    if not submitted:
        return None
    name = (name or "").strip()
    target = tuple(target or ())
    problem = ids.name_problem(name, "table")
    if read_only:
        feedback.show("error", READ_ONLY)
    elif problem:
        feedback.show("error", f"Not renamed. {problem}")
    elif name == table_id[-1] and list(target) == current:
        feedback.show("info", "Nothing to rename: the name and namespace are the current ones.")
    else:
        return TableAction("rename", name=name, namespace=target)
    return None


def metadata_rows(metadata: dict[str, str]) -> pd.DataFrame:
    """``key``/``value`` rows of a data editor, sorted by key."""
    keys = sorted(metadata)
    return pd.DataFrame(
        {
            "key": pd.Series(keys, dtype="str"),
            "value": pd.Series([metadata[k] for k in keys], dtype="str"),
        }
    )


def metadata_changes(current: dict[str, str], rows: Any) -> tuple[dict[str, str], str | None]:
    """The keys an edited grid sets (new or changed values) or why it cannot be saved: a bad
    row (``backend.rules.properties.from_rows``), or a removed key (UpdateTableSchemaMetadata only
    adds and changes keys)."""
    try:
        edited = props.from_rows(rows)
    except LanceNamespaceError as err:
        return {}, str(err)
    removed = sorted(set(current) - set(edited))
    if removed:
        return {}, (
            f"Keys cannot be removed ({', '.join(removed)}) by saving: UpdateTableSchemaMetadata "
            "only adds and changes keys. Use Remove keys (local backend), or give a key an "
            "empty value instead."
        )
    return {k: v for k, v in edited.items() if current.get(k) != v}, None


def render_schema_metadata(
    detail: nsv.TableDetail,
    *,
    key_prefix: str,
    read_only: bool,
    caps: backend.BackendCapabilities | None = None,
) -> TableAction | None:
    """ "Schema metadata": the editable key/value pairs of the table's schema (read once the
    expander is open), removing keys (disabled with the reason where the backend cannot:
    ``caps``), and the catalog properties, read-only."""
    table_id = list(detail.id)
    box = lazy_expander(
        "Schema metadata",
        key=state.panel_key(state.Tables.METADATA_OPEN, table_id),
        icon=":material/data_object:",
    )
    if box is None:
        return None
    submitted, rows, removing, doomed = False, None, False, []
    current: dict[str, str] = {}
    cannot_remove = lc.remove_metadata_problem(caps or backend.BackendCapabilities.unknown())
    with box:
        if detail.declared_only:
            st.caption(
                "A declared table has no schema yet: its metadata can be set once it has data."
            )
        else:
            read = feedback.run(schema_metadata, tuple(table_id), action="Reading metadata")
            current = dict(read or {})
            st.caption(
                "Key/value pairs kept in the table's schema. Saving adds or changes keys "
                "(UpdateTableSchemaMetadata) and makes a new version."
            )
            with st.form(f"{key_prefix}.form", border=False):
                rows = st.data_editor(
                    metadata_rows(current), num_rows="dynamic", hide_index=True,
                    key=f"{key_prefix}.rows", width="stretch",
                )  # fmt: skip
                submitted = st.form_submit_button(
                    "Save schema metadata", icon=":material/save:", disabled=read_only
                )
            with st.form(f"{key_prefix}.remove", border=False):
                blocked = read_only or bool(cannot_remove) or not current
                doomed = st.multiselect(
                    "Keys to remove", sorted(current), key=f"{key_prefix}.remove.keys",
                    disabled=blocked, placeholder="Pick keys" if current else "No keys",
                    help=cannot_remove,
                )  # fmt: skip
                removing = st.form_submit_button(
                    "Remove keys", icon=":material/delete:", disabled=blocked,
                    help=cannot_remove or "A new version without these keys; older versions "
                    "keep them.",
                )  # fmt: skip
            if cannot_remove:
                st.caption(feedback.as_text(cannot_remove))
        st.caption("Catalog properties (read-only)")
        render_mapping(
            detail.properties, empty="No catalog properties.", key_prefix=f"{key_prefix}.props"
        )
        st.caption(lc.PROPERTIES_READ_ONLY)
    if removing:
        if read_only:
            feedback.show("error", READ_ONLY)
        elif not doomed:
            feedback.show("info", "Nothing removed: pick one or more keys.")
        else:
            return TableAction("remove_metadata", keys=tuple(doomed))
        return None
    if not submitted:
        return None
    changes, problem = metadata_changes(current, rows)
    if read_only:
        feedback.show("error", READ_ONLY)
    elif problem:
        feedback.show("error", f"Nothing saved. {problem}")
    elif not changes:
        feedback.show("info", "Nothing saved: no key was added or changed.")
    else:
        return TableAction("metadata", metadata=changes)
    return None


# --------------------------------------------------------------------------------------------
# Namespaces: drop (RESTRICT or CASCADE)
# --------------------------------------------------------------------------------------------

RESTRICT, CASCADE = "RESTRICT", "CASCADE"


@dataclass(frozen=True)
class DropNamespace:
    """Drop a namespace: ``cascade`` or not, and what it held when confirmed."""

    cascade: bool
    children: lc.Children

    def write(self, ns: Any, namespace_id: Sequence[str]) -> Write:
        nid = list(namespace_id)
        return Write(
            _drop_namespace, (ns, nid), f"Dropping namespace {nid[-1]}", self.describe(nid),
            self.children.tables, (nid[:-1], None), {"cascade": self.cascade},
        )  # fmt: skip

    def describe(self, namespace_id: Sequence[str]) -> str:
        text = f"Dropped namespace {_path(namespace_id)}"
        if self.cascade and not self.children.empty:
            text += (
                f" with {plural(len(self.children.tables), 'table')} (their data deleted) and "
                f"{plural(len(self.children.namespaces), 'child namespace')}"
            )
        return text + "."


def _drop_namespace(ns: Any, namespace_id: list[str], *, cascade: bool) -> Any:
    """``lifecycle.drop_namespace``; a server's refusal of CASCADE is learned by the client
    (``backend.capabilities``: ``drop_cascade=False`` from then on), so the panel says so
    instead of offering CASCADE again."""
    return lc.drop_namespace(ns, namespace_id, cascade=cascade)


CASCADE_NOT_ON_ROOT = (
    "This root cannot drop a namespace with CASCADE: an all-or-none CASCADE needs a local "
    "file:// or memory:// root (on an object store a crash could leave half of it dropped)."
)
CASCADE_NOT_ON_SERVER = (
    "This server does not implement DropNamespace with CASCADE (its server profile, or its "
    "answer to a CASCADE drop, says so)."
)


def cascade_unavailable(caps: backend.BackendCapabilities) -> str | None:
    """Why CASCADE cannot be offered on this connection (``None``: it can be): the backend
    says it cannot (an object-store root; a server whose profile says so, or that refused it
    earlier: the client learns it from the answer)."""
    if caps.drop_cascade is False:
        return CASCADE_NOT_ON_ROOT if caps.kind == "local" else CASCADE_NOT_ON_SERVER
    return None


def children_frame(found: lc.Children) -> pd.DataFrame:
    rows = [("namespace", _path(n)) for n in found.namespaces]
    rows += [("table", _path(t)) for t in found.tables]
    return pd.DataFrame(rows, columns=["kind", "path"])


def render_drop_namespace(
    path: Sequence[str], *, caps: backend.BackendCapabilities, read_only: bool
) -> DropNamespace | None:
    """ "Drop namespace" on the namespace shown (never the root), listing everything under it
    once its expander is open. RESTRICT (default) is refused while it has children (they are
    named before trying); CASCADE lists every table and namespace that goes with it. Both ask
    for the namespace's name."""
    if not path:
        return None
    name = path[-1]
    locked = role_lock("drop_namespace", read_only)
    read_only = read_only or locked is not None
    box = lazy_expander(
        f"Drop namespace {name}",
        key=state.panel_key(state.Tables.DROP_NS_OPEN, path),
        icon=":material/folder_delete:",
    )
    if box is None:
        return None
    with box:
        found = feedback.run(children, tuple(path), action=f"Listing what {name} holds")
        if found is None:
            return None
        no_cascade = cascade_unavailable(caps)
        count = len(found.tables) + len(found.namespaces)
        if no_cascade is None:
            mode = st.radio(
                "Mode",
                [RESTRICT, CASCADE],
                captions=["only when empty", "with everything in it"],
                horizontal=True,
                key=state.panel_key(state.Tables.DROP_NS_MODE, path),
            )
        else:
            mode = RESTRICT
        cascade = mode == CASCADE
        if found.empty:
            st.caption(feedback.as_text(f"{_path(path)} is empty: nothing else goes with it."))
            if no_cascade:
                st.caption(no_cascade)
        elif no_cascade is not None:
            # Neither mode can drop it here: say so instead of offering a button.
            feedback.show(
                "warning",
                f"{_path(path)} is not empty: {found.describe(' › ')}. {no_cascade} Drop its "
                "tables and child namespaces first, then the namespace.",
            )
            return None
        elif not cascade:
            feedback.show(
                "warning",
                f"{_path(path)} is not empty: {found.describe(' › ')}. RESTRICT is refused while "
                "it has children: drop them first, or choose CASCADE.",
            )
        else:
            st.caption(
                feedback.as_text(
                    f"CASCADE drops {_path(path)} and everything under it: "
                    f"{plural(len(found.tables), 'table')} (their data is deleted) and "
                    f"{plural(len(found.namespaces), 'namespace')}:"
                )
            )
            st.dataframe(
                children_frame(found), hide_index=True, key=f"tables.drop_ns.children.{path}",
                height=35 * (min(count, 8) + 1) + 3, width="stretch",
            )  # fmt: skip
            if caps.drop_cascade is None:
                st.caption(
                    "This server may not implement CASCADE: if it refuses, nothing is dropped."
                )
        fv = state.form_version("tables")
        with st.form(f"tables.drop_ns{fv}.{'/'.join(path)}", border=False):
            confirmed = render_typed_confirmation(
                name,
                key_prefix=f"tables.drop_ns{fv}.{'/'.join(path)}",
                label=f"Type the namespace name {name} to confirm",
            )
            label = (
                f"Drop {name} and {plural(count, 'item')}" if cascade and count else f"Drop {name}"
            )
            submitted = st.form_submit_button(
                label, type="primary", icon=":material/folder_delete:", disabled=read_only,
            )  # fmt: skip
            render_role_lock(locked)
    if not confirmed_submit(
        submitted,
        read_only=read_only,
        confirmed=confirmed,
        refusal=f"Not dropped: type {name} exactly to confirm.",
    ):
        return None
    return DropNamespace(cascade, found)


__all__ = [
    "CASCADE",
    "CASCADE_NOT_ON_ROOT",
    "CASCADE_NOT_ON_SERVER",
    "RESTRICT",
    "DropNamespace",
    "TableAction",
    "TagAction",
    "Write",
    "apply_version_link",
    "children",
    "cleanup_write",
    "restore_write",
    "cascade_unavailable",
    "children_frame",
    "drop_preview",
    "follow_version_link",
    "metadata_changes",
    "metadata_rows",
    "plan_frame",
    "render_cleanup",
    "render_cleanup_plan",
    "render_deregister_form",
    "render_register_form",
    "RegisterTable",
    "render_drop_form",
    "render_drop_namespace",
    "render_rename",
    "render_schema_metadata",
    "render_table_actions",
    "render_tags",
    "render_version_actions",
    "rename_caption",
    "runs",
    "schema_metadata",
    "search_link_params",
    "tag_version",
    "tagged",
    "tags",
]
