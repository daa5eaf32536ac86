"""Connection sidebar and the cached namespace client (minimal; the UI issue grows it)."""

from __future__ import annotations

import os

import streamlit as st

import backend
from components import state


def default_target() -> str:
    return os.environ.get("LANCE_CONSOLE_TARGET", ".lance-console/demo")


@st.cache_resource(show_spinner=False)
def _connect(target: str) -> backend.LanceNamespace:
    return backend.connect(target)


def get_namespace() -> backend.LanceNamespace:
    conn = st.session_state.get(state.CONNECTION) or {"target": default_target()}
    return _connect(conn["target"])


def is_read_only() -> bool:
    return bool(st.session_state.get(state.READ_ONLY, False))


def render_connection_sidebar() -> None:
    conn = st.session_state.get(state.CONNECTION) or {"target": default_target()}
    with st.sidebar:
        st.caption("Connection")
        st.code(conn["target"], language=None)
