"""The write dialogs of "Namespaces & tables": create a namespace, declare a table. The forms
return the request; the page sends it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st
from lance_namespace import CreateNamespaceRequest, DeclareTableRequest

from backend.errors import LanceNamespaceError
from backend.rules import ids
from backend.rules import properties as props
from backend.services import namespaces as nsv
from components import feedback, state
from components.common import (
    empty_kv_frame,
)


def _refused(problem: str | None, read_only: bool) -> bool:
    if read_only:
        feedback.show("error", "The connection is read-only.")
    elif problem:
        feedback.show("error", problem)
    return read_only or bool(problem)


def _properties(rows: Any) -> tuple[dict[str, str], str | None]:
    try:
        return props.from_rows(rows), None
    except LanceNamespaceError as err:
        return {}, str(err)


def _request(make: Callable[[], Any]) -> tuple[Any, str | None]:
    try:
        return make(), None
    except LanceNamespaceError as err:
        return None, str(err)


def render_create_namespace_form(
    path: Sequence[str], *, key_prefix: str, read_only: bool
) -> CreateNamespaceRequest | None:
    """Name + properties of a child namespace of ``path``; the request on submit."""
    with st.form(key_prefix, border=False):
        st.caption(f"Inside {feedback.as_text(ids.display_id(path))}")
        name = st.text_input("Name", key=f"{key_prefix}.name")
        rows = st.data_editor(
            empty_kv_frame(), num_rows="dynamic", hide_index=True, key=f"{key_prefix}.props"
        )
        submitted = st.form_submit_button("Create namespace", disabled=read_only)
    if not submitted:
        return None
    properties, bad = _properties(rows)
    problem = ids.name_problem(name, "namespace") or bad
    request, bad_request = (
        (None, None)
        if problem
        else _request(lambda: nsv.create_namespace_request(path, name, properties))
    )
    return None if _refused(problem or bad_request, read_only) else request


def render_declare_table_form(
    path: Sequence[str], *, key_prefix: str, read_only: bool
) -> DeclareTableRequest | None:
    """Name, location, properties of a table to declare in ``path``; the request on submit."""
    with st.form(key_prefix, border=False):
        st.caption(
            f"Registers a name (and location) in {feedback.as_text(ids.display_id(path))}; no data yet."
        )
        name = st.text_input("Table name", key=f"{key_prefix}.name")
        location = st.text_input(
            "Location (optional)",
            key=f"{key_prefix}.location",
            placeholder="chosen by the namespace when empty",
        )
        st.caption("Properties")
        rows = st.data_editor(
            empty_kv_frame(), num_rows="dynamic", hide_index=True, key=f"{key_prefix}.props"
        )
        vend = st.toggle("Vend credentials", key=f"{key_prefix}.vend")
        submitted = st.form_submit_button("Declare table", type="primary", disabled=read_only)
    if not submitted:
        return None
    properties, bad = _properties(rows)
    problem = ids.name_problem(name, "table") or bad
    request, bad_request = (
        (None, None)
        if problem
        else _request(
            lambda: nsv.declare_table_request(
                path, name, location=location, properties=properties, vend_credentials=vend
            )
        )
    )
    return None if _refused(problem or bad_request, read_only) else request


# The write dialogs of "Namespaces & tables": name -> (title, icon, form). Only the open one
# is rendered (their data editors cost a lot even when hidden).
_DIALOGS: dict[str, tuple[str, str, Callable[..., Any]]] = {
    "create_ns": (
        "Create a namespace",
        ":material/create_new_folder:",
        render_create_namespace_form,
    ),
    "declare": ("Declare a table", ":material/add_box:", render_declare_table_form),
}


def render_dialog_button(name: str, *, key_prefix: str, read_only: bool) -> None:
    title, icon, _form = _DIALOGS[name]
    st.button(
        title,
        key=f"{key_prefix}.{name}.open",
        icon=icon,
        on_click=state.open_dialog,
        args=(name,),
        disabled=read_only,
        help="The connection is read-only." if read_only else None,
        width="stretch",
    )


def render_open_dialog(
    path: Sequence[str], *, key_prefix: str, read_only: bool, submit: Callable[[Any], bool]
) -> None:
    """The write dialog opened by :func:`render_dialog_button`, if any. Its form's request goes
    to ``submit`` (the page's write; it returns whether the write succeeded)."""
    name = state.dialog()
    if name not in _DIALOGS:
        return
    title, _icon, form = _DIALOGS[name]

    @st.dialog(title, width="medium", on_dismiss=lambda: state.open_dialog(None))
    def body() -> None:
        key = state.form_key("tables", f"{key_prefix}.{name}")
        request = form(path, key_prefix=key, read_only=read_only)
        if request is not None and submit(request):
            state.open_dialog(None)
            st.rerun()

    body()
