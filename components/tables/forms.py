"""The write dialogs of "Namespaces & tables": create a namespace, declare a table. The
submit button's callback reads the form's request; the page sends it.
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
from components.common import empty_kv_frame, kv_editor_rows
from components.writes import keep_refusal, render_failure


def _properties(rows: Any) -> tuple[dict[str, str], str | None]:
    try:
        return props.from_rows(rows), None
    except LanceNamespaceError as err:
        return {}, str(err)


def _request(make: Callable[[], Any]) -> Any:
    """``make()``, or its refusal's text."""
    try:
        return make()
    except LanceNamespaceError as err:
        return str(err)


def _named(key_prefix: str, kind: str, read_only: bool) -> tuple[str, dict[str, str]] | str:
    """The name and properties a dialog's form holds (read from its widgets' state), or why
    nothing is sent: read-only, a bad ``kind`` name ("namespace", "table") or property."""
    if read_only:
        return "The connection is read-only."
    name = str(state.get(f"{key_prefix}.name") or "")
    properties, bad = _properties(kv_editor_rows(state.get(f"{key_prefix}.props")))
    problem = ids.name_problem(name, kind) or bad
    return problem if problem else (name, properties)


def create_namespace_request(
    path: Sequence[str], *, key_prefix: str, read_only: bool
) -> CreateNamespaceRequest | str:
    """The request :func:`render_create_namespace_form` asks for (read from its widgets'
    state), or why nothing is sent."""
    named = _named(key_prefix, "namespace", read_only)
    if isinstance(named, str):
        return named
    name, properties = named
    return _request(lambda: nsv.create_namespace_request(path, name, properties))


def render_create_namespace_form(
    path: Sequence[str], *, key_prefix: str, read_only: bool, on_submit: Callable[[], None]
) -> None:
    """Name + properties of a child namespace of ``path``; ``on_submit``: the submit
    button's callback (it reads the request with :func:`create_namespace_request`)."""
    with st.form(key_prefix, border=False):
        st.caption(f"Inside {feedback.as_text(ids.display_id(path))}")
        st.text_input("Name", key=f"{key_prefix}.name")
        st.data_editor(
            empty_kv_frame(), num_rows="dynamic", hide_index=True, key=f"{key_prefix}.props"
        )
        st.form_submit_button("Create namespace", disabled=read_only, on_click=on_submit)


def declare_table_request(
    path: Sequence[str], *, key_prefix: str, read_only: bool
) -> DeclareTableRequest | str:
    """The request :func:`render_declare_table_form` asks for (read from its widgets'
    state), or why nothing is sent."""
    named = _named(key_prefix, "table", read_only)
    if isinstance(named, str):
        return named
    name, properties = named
    return _request(
        lambda: nsv.declare_table_request(
            path,
            name,
            location=str(state.get(f"{key_prefix}.location") or ""),
            properties=properties,
            vend_credentials=bool(state.get(f"{key_prefix}.vend")),
        )
    )


def render_declare_table_form(
    path: Sequence[str], *, key_prefix: str, read_only: bool, on_submit: Callable[[], None]
) -> None:
    """Name, location, properties of a table to declare in ``path``; ``on_submit``: the
    submit button's callback (it reads the request with :func:`declare_table_request`)."""
    with st.form(key_prefix, border=False):
        st.caption(
            f"Registers a name (and location) in {feedback.as_text(ids.display_id(path))}; no data yet."
        )
        st.text_input("Table name", key=f"{key_prefix}.name")
        st.text_input(
            "Location (optional)",
            key=f"{key_prefix}.location",
            placeholder="chosen by the namespace when empty",
        )
        st.caption("Properties")
        st.data_editor(
            empty_kv_frame(), num_rows="dynamic", hide_index=True, key=f"{key_prefix}.props"
        )
        st.toggle("Vend credentials", key=f"{key_prefix}.vend")
        st.form_submit_button(
            "Declare table", type="primary", disabled=read_only, on_click=on_submit
        )


# The write dialogs of "Namespaces & tables": name -> (title, icon, form, its request). Only
# the open one is rendered (their data editors cost a lot even when hidden).
_DIALOGS: dict[str, tuple[str, str, Callable[..., Any], Callable[..., Any]]] = {
    "create_ns": (
        "Create a namespace",
        ":material/create_new_folder:",
        render_create_namespace_form,
        create_namespace_request,
    ),
    "declare": (
        "Declare a table",
        ":material/add_box:",
        render_declare_table_form,
        declare_table_request,
    ),
}


def render_dialog_button(name: str, *, key_prefix: str, read_only: bool) -> None:
    title, icon, _form, _read = _DIALOGS[name]
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
    path: Sequence[str],
    *,
    key_prefix: str,
    read_only: bool,
    submit: Callable[[Any, str], bool],
) -> None:
    """The write dialog opened by :func:`render_dialog_button`, if any. Its form's request goes
    to ``submit(request, failure_key)`` (the page's write; it returns whether the write
    succeeded) from the submit button's callback: on success the dialog closes and the whole
    page runs once, after the write (a widget in a dialog reruns only the dialog, so the
    callback asks for the page's run); a refusal or a failure kept under ``failure_key`` is
    shown in the dialog."""
    name = state.dialog()
    if name not in _DIALOGS:
        return
    title, _icon, form, request_of = _DIALOGS[name]
    key = state.form_key("tables", f"{key_prefix}.{name}")
    failure_key = f"{key}.failure"

    def submitted() -> None:  # the submit button's callback, before anything is drawn
        request = request_of(path, key_prefix=key, read_only=read_only)
        if isinstance(request, str):
            keep_refusal(failure_key, request)
        elif submit(request, failure_key):
            state.open_dialog(None)
            st.rerun()  # from a callback: the page runs (not only the dialog), once

    @st.dialog(title, width="medium", on_dismiss=lambda: state.open_dialog(None))
    def body() -> None:
        form(path, key_prefix=key, read_only=read_only, on_submit=submitted)
        render_failure(failure_key)

    body()
