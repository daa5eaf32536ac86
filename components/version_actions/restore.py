"""Restore a version (on the table or a branch), and the offer to rebuild the indexes a
restore lost. The panel returns the version; the page sends the write.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st
from lance_namespace.errors import (
    LanceNamespaceError,
)

from backend.rules import ids
from backend.services import restore as restoresv
from backend.spec import catalog_views
from backend.text import plural
from components import feedback, state
from components.common import (
    lazy_expander,
)
from components.version_actions.links import search_link_params
from components.writes import (
    READ_ONLY,
    Write,
    confirmed_submit,
    keep_refusal,
    lost_indexes,
    rebuild_offer,
    render_failure,
)


@dataclass(frozen=True)
class RebuildAnswer:
    """The user answered a rebuild offer: ``requests`` to start (Rebuild), or none (Not now)."""

    offer: restoresv.RebuildOffer
    answer: str  # restoresv.REBUILT | restoresv.DECLINED
    requests: list[Any]


def pending_rebuild_offer(table_id: Sequence[str], latest: int) -> restoresv.RebuildOffer | None:
    """The rebuild offer of ``table_id`` at its ``latest`` version, derived from its history
    (so it outlives a reload), unless this session answered it already. ``None`` quietly
    when it cannot be read."""
    try:
        offer = rebuild_offer(tuple(table_id), int(latest))
    except LanceNamespaceError:
        return None
    if offer is None or state.rebuild_answered(table_id) == offer.restore_uuid:
        return None
    return offer


def render_rebuild_offer(
    table_id: Sequence[str], latest: int, *, read_only: bool
) -> RebuildAnswer | None:
    """While the table's ``latest`` version is a restore that left indexes behind and nobody
    answered: which, and "Rebuild the indexes" (their CreateTableIndex requests, for the page
    to start as index builds) or "Not now". Returns the answer for the page to record."""
    offer = pending_rebuild_offer(table_id, latest)
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
        return RebuildAnswer(
            offer, restoresv.REBUILT, restoresv.rebuild_requests(table_id, offer.lost)
        )
    if later:
        return RebuildAnswer(offer, restoresv.DECLINED, [])
    return None


def _answer_rebuild(ns: Any, answer: RebuildAnswer, read_only: bool) -> list[Any]:
    """Start the builds asked for (jobs, ``backend.services.jobs``), then keep the answer:
    for this session, and for later ones where the namespace keeps it
    (``backend.services.restore.answer_rebuild_offer``; not on a read-only connection, which writes
    nothing). Returns the jobs started."""
    from backend.services import build_jobs, jobs

    tid = list(answer.offer.table_id)
    started = [
        jobs.submit(ns, "create_index", tid, build_jobs.build_params(request))
        for request in answer.requests
    ]
    if not read_only:
        restoresv.answer_rebuild_offer(ns, answer.offer, answer.answer)
    state.set_rebuild_answered(answer.offer.table_id, answer.offer.restore_uuid)
    return started


def rebuild_write(ns: Any, answer: RebuildAnswer, *, read_only: bool) -> Write:
    """The answer to a rebuild offer as a write: the builds asked for start as jobs (which
    the session follows) and the answer is recorded."""
    names = ", ".join(str(r.name) for r in answer.requests)
    return Write(
        _answer_rebuild,
        (ns, answer, read_only),
        "Recording the answer to the rebuild offer",
        f"Building again: {names}. The Indexes page follows them." if answer.requests else "",
        follow=True,
    )


def _restore(ns: Any, table_id: list[str], version: int, branch: str | None = None) -> int:
    """Restore ``version`` (of ``branch``; ``None``: main); the new latest version (read
    back, not guessed)."""
    restoresv.restore_version(ns, table_id, version, branch)
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
        leaves_tags=True,
    )  # fmt: skip


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
    on_submit: Callable[[int, str], None] | None = None,
) -> int | None:
    """Under the version's details: "Browse the data at vK" (Search & tune's data preview at
    that version; main only) and, for a version before the latest, "Restore this version"
    with a confirmation that says what it makes (on ``branch``: a new latest version of the
    branch). Returns the version to restore when confirmed; with ``on_submit`` it is handed
    over from the button's callback instead (``on_submit(version, failure_key)``, the page's
    write: the page then draws once, after it) and nothing is returned.

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
    if picked == latest:  # nothing to restore (the figures above say which is the latest)
        return None
    of = f" of branch {branch}" if branch else ""
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
    refusal = f"Not restored: tick the box to confirm v{new} from v{picked}."
    failure_key = f"{key_prefix}.{picked}.failure"

    def submitted_now() -> None:  # the button's callback, before the page draws
        if read_only:
            keep_refusal(failure_key, READ_ONLY)
        elif not state.get(f"{key_prefix}.{picked}.confirm"):
            keep_refusal(failure_key, refusal)
        elif on_submit is not None:
            on_submit(int(picked), failure_key)

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
            f"Restore v{picked}",
            type="primary",
            icon=":material/restore:",
            disabled=read_only,
            on_click=submitted_now if on_submit is not None else None,
        )
    if on_submit is not None:
        render_failure(failure_key)
        return None
    if not confirmed_submit(submitted, read_only=read_only, confirmed=confirmed, refusal=refusal):
        return None
    return picked
