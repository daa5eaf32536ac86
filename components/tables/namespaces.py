"""The namespaces column of "Namespaces & tables": the child namespaces of the selection."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from backend.rules import ids
from backend.spec.paging import paginate
from components import feedback, state
from components.tables.catalog import namespace_names
from components.tables.name_list import render_name_list
from components.tables.selection import go_to, set_selection

NAMESPACE_BUTTONS_MAX = 20  # more child namespaces than this: a selectable grid, not buttons


def render_namespace_list(
    children: Sequence[str], path: Sequence[str], *, key_prefix: str
) -> list[str] | None:
    """The child namespaces of ``path``: buttons when few (a click opens the child: a
    callback), a grid when many. Returns the path of the child picked in the grid, else
    ``None``."""
    if not children:
        st.caption(f"No namespaces inside {feedback.as_text(ids.display_id(path))}.")
        return None
    if len(children) > NAMESPACE_BUTTONS_MAX:
        pick = render_name_list(
            children, key_prefix=key_prefix, column="namespace", reset_on=(tuple(path),)
        )
        return [*path, pick.name] if pick and pick.name else None
    page = paginate(children, 1, NAMESPACE_BUTTONS_MAX)
    for name in page.items:
        st.button(
            feedback.as_text(name),
            key=f"{key_prefix}.open.{name}",
            icon=":material/folder:",
            type="tertiary",
            on_click=set_selection,
            args=([*path, name],),
        )
    return None


def render_namespaces_column(path: Sequence[str]) -> None:
    """The child namespaces (opening one navigates), under a heading when there are any."""
    children = feedback.run(namespace_names, tuple(path), action="Listing namespaces") or []
    if children:
        st.subheader("Namespaces", anchor=False)
    child = render_namespace_list(children, path, key_prefix=state.Tables.NS)
    if child is not None:
        go_to(child)
