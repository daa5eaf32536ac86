"""Rename a table or move it to another namespace."""

from __future__ import annotations

from typing import Any

import streamlit as st

import backend
from backend.rules import ids
from components import feedback, state
from components.common import (
    lazy_expander,
)
from components.table_actions.action import TableAction
from components.writes import (
    READ_ONLY,
)


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
    from components.tables.picker import nearby_namespaces

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
                format_func=ids.display_id,
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
