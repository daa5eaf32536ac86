"""Deletes on the Versions page: versions by range (the form is ``components.versions.delete``)
and rows by a filter. Each returns the write; the page sends it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from backend.rules import ids, version_ranges
from backend.services import rows as rsv
from backend.services import versions as vsv
from backend.text import plural, verb
from components import feedback, state
from components.session import snippet_connection
from components.snippets import python_snippet
from components.versions.delete import RangeDelete
from components.writes import (
    Write,
    render_confirmed_form,
)


def delete_versions_write(ns: Any, table_id: Sequence[str], ask: RangeDelete) -> Write:
    """Delete the ranges asked for (``vsv.delete_versions``: a tagged version only with
    the tags the user agreed to delete, which go first), and its Python snippet."""

    def said(done: vsv.VersionsDeleted) -> str:
        text = f"Deleted {plural(done.deleted_count, 'version')} of {ids.display_id(table_id)}"
        if done.deleted_tags:
            names = [t for v in sorted(done.deleted_tags) for t in done.deleted_tags[v]]
            text += (
                f" together with {plural(len(names), 'tag')}: "
                f"{version_ranges.describe_tags(done.deleted_tags)}"
            )
        return text + "."

    return Write(
        vsv.delete_versions, (ns, list(table_id), ask.spans), "Deleting versions", said,
        kwargs={"delete_tags": bool(ask.tags)}, leaves_tags=not ask.tags,
        snippet=python_snippet("batch_delete_table_versions", ask.request, snippet_connection()),
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
        kwargs={"expected_count": ask.expected_count}, leaves_tags=True,
    )  # fmt: skip


def render_delete_rows(
    ns: Any,
    table_id: list[str],
    *,
    key_prefix: str,
    read_only: bool,
    on_submit: Callable[[RowsDelete, str], None] | None = None,
) -> RowsDelete | None:
    """ "Delete rows": a filter, its preview (how many rows match, a sample), then a typed
    confirmation; the delete to send once confirmed. Previewing is a read (every role); the
    delete is an admin's (``delete_from_table``), disabled with the reason otherwise. With
    ``on_submit`` the delete is handed over from the button's callback instead
    (``on_submit(delete, failure_key)``, the page's write: the page then draws once, after
    it) and nothing is returned."""
    table = table_id[-1]
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
        + feedback.as_text(f"{verb(preview.count, 'matches', 'match')} {text}."),
    )
    if len(preview.sample) < preview.count:
        st.caption(f"A sample of {len(preview.sample):,} of them:")
    st.dataframe(preview.sample, hide_index=True)
    ask = RowsDelete(text, int(preview.count))
    confirmed = render_confirmed_form(
        f"{key_prefix}.delete",
        table,
        what="table",
        button="Delete rows",
        icon=":material/delete:",
        not_done="Nothing deleted",
        read_only=read_only,
        operation=rsv.OPERATION,
        confirm_prefix=key_prefix,
        on_submit=(lambda failure_key: on_submit(ask, failure_key)) if on_submit else None,
    )
    return ask if confirmed else None
