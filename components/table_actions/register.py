"""Register a table from files at a location (:class:`RegisterTable`; the page sends it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from backend.rules import ids
from backend.services import lifecycle as lc
from components import feedback, state
from components.common import (
    lazy_expander,
    render_role_lock,
)
from components.session import role_lock
from components.writes import (
    Write,
)


@dataclass(frozen=True)
class RegisterTable:
    """RegisterTable: existing Lance data at ``location`` becomes table ``name`` here."""

    name: str
    location: str

    def write(self, ns: Any, namespace: Sequence[str]) -> Write:
        tid = [*namespace, self.name]
        return Write(
            lc.register_table, (ns, tid, self.location), f"Registering {self.name}",
            f"Registered table {ids.display_id(tid)} at {self.location}.", [tid], (list(namespace), self.name),
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
    # drawn only while open (its form is not part of every load of the page)
    box = lazy_expander(
        "Register a table (existing data)", key=state.Tables.REGISTER_OPEN, icon=":material/link:"
    )
    if box is None:
        return None
    with box:
        st.caption(
            feedback.as_text(
                f"Adds existing Lance data to {ids.display_id(namespace)} under a name; nothing is "
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
