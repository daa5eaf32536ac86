"""The version picker's deep links (``?tag=``), the version to show after a write, and the link
to Search & tune's data preview of a version (time travel).
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from lance_namespace.errors import (
    LanceNamespaceError,
    TableTagNotFoundError,
)

from backend.rules import ids
from components import feedback, state
from components.versions.tabs import TAGS_TAB
from components.writes import (
    tag_version,
)


def apply_version_link(table_id: Sequence[str]) -> None:
    """Before the version picker renders: the version a write asked to show
    (``state.show_version``), else the version of a ``?tag=`` link, resolved once per link and
    table (later picks are the user's; Back or Forward to the link shows its version again).
    An unknown tag is a warning, once: the link leaves the URL and the picker shows what it
    would have shown without it."""
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
        if pending is None:
            if state.selected_version() is None:
                # the box is empty (Back to the link, or cleared): the link's version, as the
                # latest is where no link is open
                state.put(state.QP_VERSION, known[1])
            else:
                _rerun_for_link_version(known[1])
        return
    version = _resolve_tag(table_id, tag)
    if isinstance(version, str):  # what went wrong
        feedback.show("warning", version)
        del st.query_params[state.QP_TAG]
        state.drop(state.Versions.TAG_LINK)
        return
    state.put(state.Versions.TAG_LINK, (link, version))
    state.open_manage_tab(TAGS_TAB)  # the link's tag is shown with the others
    if pending is None:
        state.put(state.QP_VERSION, version)
        _rerun_for_link_version(version)


def _rerun_for_link_version(version: int) -> None:
    """Back or Forward to a tag link whose URL names another version too: the version picked
    under the link, which the box bound to the URL wrote into the link's history entry before
    the tag left the URL. Streamlit gives the box the URL's version in this run; the next run
    shows the link's, as a fresh load of the link does (one more run, on Back or Forward only)."""
    named = state.as_version(st.query_params.get(state.QP_VERSION))
    if state.history_navigation() and named is not None and named != version:
        state.put(state.Versions.PENDING, version)
        st.rerun()


def _resolve_tag(table_id: Sequence[str], tag: str) -> int | str:
    """The version ``tag`` names on ``table_id``, or a sentence saying why it cannot be had."""
    try:
        return tag_version(tuple(table_id), tag)
    except TableTagNotFoundError:
        return f"The link's tag {tag} does not exist on {ids.display_id(table_id)} (deleted, or never made)."
    except LanceNamespaceError as err:
        return f"The link's tag {tag} could not be resolved. " + feedback.error_text(err)


def follow_version_link(picked: int) -> None:
    """After the picker: once another version than the link's is picked, ``?tag=`` leaves the
    URL (which then names the version shown, ``?version=``)."""
    known = state.get(state.Versions.TAG_LINK)
    if known and picked != known[1]:
        if state.QP_TAG in st.query_params:
            del st.query_params[state.QP_TAG]
        state.drop(state.Versions.TAG_LINK)


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
