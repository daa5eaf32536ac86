"""Drop a namespace, RESTRICT or CASCADE (:class:`DropNamespace`; the page sends it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

import backend
from backend.rules import ids
from backend.services import lifecycle as lc
from backend.text import plural
from components import feedback, state
from components.common import (
    dataframe,
    lazy_expander,
)
from components.writes import (
    Write,
    children,
    render_confirmed_form,
)

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
        text = f"Dropped namespace {ids.display_id(namespace_id)}"
        if self.cascade and not self.children.empty:
            text += (
                f" with {tables_and_their_data(self.children, 'deleted')} and "
                f"{self.children.count('child namespace')}"
            )
        return text + "."


def tables_and_their_data(found: lc.Children, verb: str) -> str:
    """``"1 table (its data is deleted)"``, ``"4 tables (their data is deleted)"``."""
    whose = "its" if len(found.tables) == 1 and not found.capped else "their"
    return f"{found.count('table')} ({whose} data {verb})"


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
        return CASCADE_NOT_ON_SERVER if caps.server else CASCADE_NOT_ON_ROOT
    return None


def children_frame(found: lc.Children) -> pd.DataFrame:
    rows = [("namespace", ids.display_id(n)) for n in found.namespaces]
    rows += [("table", ids.display_id(t)) for t in found.tables]
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
            st.caption(
                feedback.as_text(f"{ids.display_id(path)} is empty: nothing else goes with it.")
            )
            if no_cascade:
                st.caption(no_cascade)
        elif no_cascade is not None:
            # Neither mode can drop it here: say so instead of offering a button.
            feedback.show(
                "warning",
                f"{ids.display_id(path)} is not empty: {found.describe(' › ')}. {no_cascade} Drop its "
                "tables and child namespaces first, then the namespace.",
            )
            return None
        elif not cascade:
            feedback.show(
                "warning",
                f"{ids.display_id(path)} is not empty: {found.describe(' › ')}. RESTRICT is refused while "
                "it has children: drop them first, or choose CASCADE.",
            )
        else:
            st.caption(
                feedback.as_text(
                    f"CASCADE drops {ids.display_id(path)} and everything under it: "
                    f"{tables_and_their_data(found, 'is deleted')} and "
                    f"{found.count('namespace')}:"
                )
            )
            dataframe(
                children_frame(found), hide_index=True, key=state.panel_key(state.Tables.DROP_NS_CHILDREN, path),
                height=35 * (min(count, 8) + 1) + 3, width="stretch", words=True,
            )  # fmt: skip
            if caps.drop_cascade is None:
                st.caption(
                    "This server may not implement CASCADE: if it refuses, nothing is dropped."
                )
        at = state.panel_key(state.form_key("tables", state.Tables.DROP_NS), path)
        items = ("at least " if found.capped else "") + plural(count, "item")
        label = f"Drop {name} and {items}" if cascade and count else f"Drop {name}"
        confirmed = render_confirmed_form(
            at,
            name,
            what="namespace",
            button=label,
            icon=":material/folder_delete:",
            not_done="Not dropped",
            read_only=read_only,
            operation="drop_namespace",
        )
    if not confirmed:
        return None
    return DropNamespace(cascade, found)
