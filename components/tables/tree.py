"""The namespace tree of "Namespaces & tables": every namespace from the root, indented."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from backend.rules import ids
from backend.services import namespaces as nsv
from components import feedback, state
from components.cache import CATALOG, NAMESPACES, invalidate
from components.tables.catalog import namespace_exists, namespace_tree
from components.tables.selection import set_selection

TREE_INDENT_PX = 14  # indentation per level of the tree


def _pick_namespace(path: tuple[str, ...]) -> None:
    """A tree node's callback: the same selection as opening a namespace elsewhere."""
    set_selection(list(path))


def render_namespace_tree(path: Sequence[str], *, key_prefix: str) -> None:
    """Every namespace from the root as an indented list; the selected one in bold and
    open. Clicking one selects it (a callback: the breadcrumbs, lists and pickers follow)."""
    tree = feedback.run(namespace_tree, action="Reading the namespace tree")
    if tree is None:
        return
    current = tuple(path)
    if (
        current
        and not tree.capped
        and all(node.path != current for _, node in tree.rows())
        and feedback.run(namespace_exists, current, action="Reading the namespace")
    ):
        # Another writer made the namespace after the tree was read: the catalog's listings
        # of this connection are out of date; read them again.
        invalidate(CATALOG, NAMESPACES)
        tree = feedback.run(namespace_tree, action="Reading the namespace tree")
        if tree is None:
            return
    nodes = [(0, nsv.NamespaceNode("(root)", ()))] + tree.rows()
    box = st.container(gap=None)
    for depth, node in nodes:
        here = node.path == current
        label = feedback.as_text(node.name)
        with box.container(horizontal=True, gap=None, vertical_alignment="center"):
            if depth:
                st.space(TREE_INDENT_PX * depth)
            st.button(
                f"**{label}**" if here else label,
                key=state.panel_key(f"{key_prefix}.node", node.path),
                type="tertiary",
                icon=(
                    ":material/home:"
                    if not node.path
                    else ":material/folder_open:"
                    if here
                    else ":material/folder:"
                ),
                help=ids.display_id(node.path),
                on_click=_pick_namespace,
                args=(node.path,),
            )
    if note := tree.capped_note():
        st.caption(":orange[" + feedback.as_text(note) + "]")
    elif not tree.count:
        st.caption("No namespaces below the root.")
