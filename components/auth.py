"""Who is using the console: sign-in through Streamlit's ``st.login`` / ``st.user`` (OpenID
Connect, configured in ``.streamlit/secrets.toml`` ``[auth]``), the signed-in user's role
(``backend.access.RoleMap``) and the actor the write gate records.

* Sign-in configured: a visitor who is not signed in sees only the sign-in page
  (:func:`render_sign_in_gate` stops every other page); the sidebar shows who is signed in,
  with their role, and offers sign-out.
* Not configured: the console is one person's tool (the launcher binds to loopback, or starts
  read-only when exposed); the actor is the OS user that runs the server, as admin.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from backend import access
from backend.gate import Actor
from backend.launcher import launch
from components import feedback, state


def _auth_section() -> Mapping[str, Any] | None:
    try:
        section = st.secrets.get("auth")
    except Exception:  # noqa: BLE001 - no secrets file, or an unreadable one: no sign-in
        return None
    return section if isinstance(section, Mapping) else None


def sign_in_configured() -> bool:
    """Whether ``[auth]`` is configured (``backend.launcher.launch.auth_complete``, the launcher's rule)."""
    return launch.auth_complete(_auth_section())


def claims() -> dict[str, Any]:
    """The signed-in user's ID-token claims (empty when nobody is signed in)."""
    try:
        if not st.user.is_logged_in:
            return {}
        return {k: v for k, v in st.user.to_dict().items() if k != "tokens"}
    except Exception:  # noqa: BLE001 - outside a Streamlit run (AppTest without auth)
        return {}


@st.cache_resource(show_spinner=False, max_entries=4)
def _role_map(path: str, mtime_ns: int) -> access.RoleMap:
    return access.RoleMap.load(path)


def role_map() -> access.RoleMap:
    """The roles file, read again when it changes."""
    path = access.roles_path()
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        mtime = -1
    return _role_map(str(path), mtime)


def current_actor() -> Actor:
    """The actor of this session: the signed-in user with their role, or (sign-in not
    configured) the OS user that runs the console, as admin."""
    if not sign_in_configured():
        return Actor(user=Actor.os_user().user, role=access.ADMIN, source="console")
    found = claims()
    if not found:
        return Actor(user="(not signed in)", role=None, source="console")
    user = str(found.get("email") or found.get("sub") or "unknown")
    try:
        role = role_map().role_of(found)
    except Exception as err:  # noqa: BLE001 - a broken roles file: no rights, and say why
        feedback.show_error(err, action="Reading the roles file")
        role = None
    return Actor(user=user, role=role, source="console")


def render_sign_in_gate() -> None:
    """With sign-in configured, a visitor who is not signed in sees only this page."""
    if not sign_in_configured() or claims():
        return
    st.title("Lance Namespace Console")
    st.write("Sign in to use this console.")
    st.button(
        "Sign in",
        key=state.Auth.SIGN_IN,
        type="primary",
        icon=":material/login:",
        on_click=st.login,
    )
    st.caption("You sign in with your organisation's identity provider (OpenID Connect).")
    st.stop()


def render_user_sidebar(actor: Actor) -> None:
    """Who is signed in, their role, and sign-out (only when sign-in is configured)."""
    if not sign_in_configured():
        return
    with st.sidebar:
        role = actor.role or "no role"
        st.caption(f"Signed in as **{feedback.as_text(actor.user)}** · {role}")
        if actor.role is None:
            st.caption(
                ":orange[No role: the roles file gives this user none, so every write is disabled.]"
            )
        st.button(
            "Sign out",
            key=state.Auth.SIGN_OUT,
            icon=":material/logout:",
            type="tertiary",
            on_click=st.logout,
        )


__all__ = [
    "claims",
    "current_actor",
    "render_sign_in_gate",
    "render_user_sidebar",
    "role_map",
    "sign_in_configured",
]
