"""The head of "Namespaces & tables": breadcrumbs, the read-only notice, a stale link, and the
result of the last write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from backend.rules import ids
from components import feedback, state
from components.common import (
    render_json,
    render_path,
)
from components.tables.catalog import namespace_exists
from components.tables.selection import render_back_to_root, set_selection


def render_breadcrumbs(path: Sequence[str], *, key_prefix: str) -> None:
    """Root › a › b as one row of small buttons; a click opens that namespace (a callback)."""
    crumbs: list[tuple[str, list[str]]] = [("(root)", [])]
    crumbs += [(name, list(path[: i + 1])) for i, name in enumerate(path)]
    with st.container(horizontal=True, gap=None, vertical_alignment="center"):
        for i, (label, target) in enumerate(crumbs):
            st.button(
                feedback.as_text(label),
                key=f"{key_prefix}.crumb.{i}",
                type="tertiary",
                icon=":material/home:" if i == 0 else ":material/chevron_right:",
                disabled=i == len(crumbs) - 1,
                on_click=set_selection,
                args=(target,),
            )


def render_write_result(item: dict[str, Any] | None, *, key_prefix: str) -> None:
    """The response kept with a write's flash message (location, storage options, JSON)."""
    body = (item or {}).get("body")
    if not body:
        return
    if "location" in body:
        st.caption("Location")
        render_path(body.get("location") or "(none)")
    render_json(body, key_prefix=f"{key_prefix}.json", label="Response")


def render_header(path: Sequence[str], *, read_only: bool) -> None:
    """Breadcrumbs, the read-only notice, a stale link to a missing namespace (stops the page),
    and the result of the last write."""
    from components.common import render_read_only_notice
    from components.snippets import render_code

    render_breadcrumbs(path, key_prefix=state.Tables.CRUMBS)
    if read_only:
        render_read_only_notice()
    exists = feedback.run(namespace_exists, tuple(path), action="Checking the namespace")
    if path and exists is False:
        feedback.show(
            "warning",
            f"Namespace {ids.display_id(path)} does not exist (deleted, or a stale link).",
        )
        render_back_to_root(state.Tables.RESET)
        st.stop()
    flashed = feedback.render_flash("tables")
    if flashed:
        render_write_result(flashed, key_prefix=state.Tables.RESULT)
        render_code(flashed.get("snippet"))
