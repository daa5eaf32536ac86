"""The namespace and table pickers of the other pages, bound to the shared selection."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from backend.errors import LanceNamespaceError
from backend.rules import ids
from backend.services import namespaces as nsv
from backend.spec.paging import Listing, filter_names
from backend.text import plural
from components import feedback, state
from components.tables.catalog import namespace_exists, namespace_names, table_exists, table_listing
from components.tables.selection import render_back_to_root, set_selection


def nearby_namespaces(current: list[str]) -> list[tuple[str, ...]]:
    """The current namespace, its parent, its siblings and its children, as full paths."""
    parent = current[:-1]
    found: list[tuple[str, ...]] = [tuple(current)]
    if current:
        found.append(tuple(parent))
        found += [(*parent, n) for n in namespace_names(tuple(parent))]
    found += [(*current, n) for n in namespace_names(tuple(current))]
    return list(dict.fromkeys(found))


def _picker_namespace(key: str) -> None:
    """The picker's namespace changed (a callback): it becomes the shared selection."""
    set_selection(list(state.get(key) or ()))


def _picker_table(key: str, namespace: list[str]) -> None:
    """The picker's table changed (a callback): it becomes the shared selection."""
    if picked := state.get(key):
        set_selection(namespace, picked, defer_url=True)  # told with the version shown


PICKER_OPTIONS = nsv.LIST_BATCH  # names a table picker offers at most (a search finds others)


def _picker_options(
    listing: Listing, query: str, table: str | None, namespace: Sequence[str]
) -> tuple[list[str], str]:
    """The names a big namespace's picker offers (the first :data:`PICKER_OPTIONS` by name,
    or of those matching ``query``: every name is read then; the table picked stays
    offered while it exists) and what to say about them."""
    if query:
        matches = filter_names(sorted(set(listing.read_all())), query)
        said = f"{plural(len(matches), 'table')} of {listing.known:,} match."
    else:
        matches = listing.items(0, PICKER_OPTIONS)
        said = (
            f"The first {len(matches):,} tables by name (more follow); type part of a name "
            "to find another."
        )
    options = matches[:PICKER_OPTIONS]
    if query and len(matches) > len(options):
        said += f" The first {len(options):,} are offered: type more of the name."
    if table and table not in options and table_exists((*namespace, table)):
        options = [table, *options]
    return options, said


def _nearby(current: list[str], key_prefix: str) -> list[tuple[str, ...]] | None:
    """The namespaces a picker offers around ``current`` (:func:`nearby_namespaces`), or
    ``None`` when ``current`` does not exist or cannot be listed (said, with a way back to
    the root)."""
    try:
        if not namespace_exists(tuple(current)):
            feedback.show("warning", f"Namespace {ids.display_id(current)} does not exist.")
            render_back_to_root(f"{key_prefix}.reset")
            return None
        return nearby_namespaces(current)
    except LanceNamespaceError as err:
        feedback.show_error(err, action=f"Listing {ids.display_id(current)}")
        if current:
            render_back_to_root(f"{key_prefix}.reset")
        return None


def _namespace_box(where: Any, spaces: list[tuple[str, ...]], current: list[str], key: str) -> None:
    """The picker's namespace selectbox (its key set to the selection before it is drawn; a
    pick becomes the shared selection in its callback)."""
    state.put(key, tuple(current))
    where.selectbox(
        "Namespace",
        spaces,
        format_func=ids.display_id,
        key=key,
        on_change=_picker_namespace,
        args=(key,),
    )


def render_namespace_picker(*, key_prefix: str) -> list[str] | None:
    """The namespace selectbox of :func:`render_table_picker` alone (pages about a whole
    namespace); returns the namespace id (``[]``: the root), ``None`` when it does not exist
    or cannot be listed."""
    current, _table = state.selection()
    spaces = _nearby(current, key_prefix)
    if spaces is None:
        return None
    _namespace_box(st, spaces, current, f"{key_prefix}.ns")
    return list(current)


def render_table_picker(*, key_prefix: str) -> list[str] | None:
    """Namespace + table selectboxes bound to the shared selection; returns the table id.
    Their keys are stable (``<prefix>.ns``, ``<prefix>.table``): each run they are set to the
    selection before they are drawn, and a pick changes the selection in its callback. A
    namespace of more than :data:`PICKER_OPTIONS` tables is read only as far as the first of
    them, and a "Find a table" search (``<prefix>.find``) beside the box offers the others."""
    current, table = state.selection()
    spaces = _nearby(current, key_prefix)
    if spaces is None:
        return None
    try:
        listing = table_listing(tuple(current)).ensure(PICKER_OPTIONS)
        big = not listing.complete or listing.known > PICKER_OPTIONS
        find_key = f"{key_prefix}.find"
        query = str(state.get(find_key) or "").strip() if big else ""
        if big:
            names, said = _picker_options(listing, query, table, current)
        else:
            names, said = sorted(set(listing.items())), ""
    except LanceNamespaceError as err:
        feedback.show_error(err, action=f"Listing {ids.display_id(current)}")
        if current:
            render_back_to_root(f"{key_prefix}.reset")
        return None
    # one row of equal boxes (a horizontal container: fewer elements to draw than columns)
    row = st.container(horizontal=True)
    table_key = f"{key_prefix}.table"
    _namespace_box(row, spaces, current, f"{key_prefix}.ns")
    if big:
        row.text_input(
            "Find a table",
            key=find_key,
            placeholder="part of a name, or a glob like orders_*",
            icon=":material/search:",
        )
    if not names:
        none = "(no match)" if query else "(no tables here)"
        row.selectbox("Table", [none], disabled=True, key=f"{key_prefix}.table.none")
        if said:
            st.caption(feedback.as_text(said))
        return None
    picked = table if table in names else None
    state.put(table_key, picked)
    row.selectbox(
        "Table",
        names,
        index=None,
        placeholder=f"Pick one of {plural(len(names), 'table')}",
        key=table_key,
        on_change=_picker_table,
        args=(table_key, list(current)),
    )
    if said:
        st.caption(feedback.as_text(said))
    return [*current, picked] if picked else None
