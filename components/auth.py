"""Who is using the console: sign-in through Streamlit's ``st.login`` / ``st.user`` (OpenID
Connect, configured in ``.streamlit/secrets.toml`` ``[auth]``), the signed-in user's role
(``backend.access.RoleMap``) and the actor the write gate records.

* Sign-in configured: a visitor who is not signed in sees only the sign-in page
  (:func:`render_sign_in_gate` stops every other page); the sidebar shows who is signed in,
  with their role, and offers sign-out.
* Configured but incomplete (``backend.config.auth_settings``): nobody is let in.
* A signed-in user without a role sees only the no-access page (:func:`render_no_access`).
* Not configured: the console is one person's tool (the launcher binds to loopback, or starts
  read-only when exposed); the actor is the OS user that runs the server, as admin.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import streamlit as st

from backend import access
from backend.config import auth_settings, launch
from backend.gate import Actor
from backend.text import capital
from components import feedback, state

_NO_SECRETS = "No secrets found"  # Streamlit's text when no secrets file exists at all


def _auth_section() -> tuple[Any, str | None]:
    """``(the [auth] section or None, why the secrets could not be read)``."""
    try:
        section = st.secrets.get("auth")
    except Exception as exc:  # noqa: BLE001 - Streamlit's StreamlitSecretNotFoundError
        text = str(exc)
        if text.startswith(_NO_SECRETS):
            return None, None  # no secrets file: no sign-in
        # A file Streamlit cannot parse: it then ignores every secret, [auth] included.
        return None, "the secrets file could not be read as TOML"
    return section, None


def sign_in_settings() -> auth_settings.AuthSettings:
    """The sign-in settings (``backend.config.auth_settings.check_auth``, the launcher's
    check) of the secrets Streamlit read."""
    section, unreadable = _auth_section()
    source = " or ".join(str(p) for p in launch.secrets_files())
    if unreadable:
        return auth_settings.AuthSettings(source=source, present=True, problems=(unreadable,))
    if isinstance(section, Mapping) and not isinstance(section, dict):
        section = dict(section)
    return auth_settings.check_auth(section, source=source)


def sign_in_configured() -> bool:
    """Whether an ``[auth]`` section is present: sign-in is required (an invalid section
    lets nobody in, see :func:`render_sign_in_gate`)."""
    return sign_in_settings().present


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


@st.cache_resource(show_spinner=False)
def _last_valid() -> dict[str, access.RoleMap]:
    """The last roles file that was valid, per path (who was an admin before it broke)."""
    return {}


def role_map() -> access.RoleMap:
    """The roles file, read again when it changes; ``InvalidInputError`` naming every bad
    entry when it is invalid."""
    path = access.roles_path()
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        mtime = -1
    found = _role_map(str(path), mtime)
    _last_valid()[str(path)] = found
    return found


def roles_problem() -> str | None:
    """Why the roles file cannot be used (``None``: it can). While it cannot, nobody has a
    role: access is denied."""
    try:
        role_map()
    except Exception as err:  # noqa: BLE001 - a broken roles file: no rights
        return feedback.as_text(str(err))
    return None


def was_admin(found: Mapping[str, Any]) -> bool:
    """Whether the last valid roles file made the user with these claims an admin: who is
    told why the roles file is refused while it is broken."""
    last = _last_valid().get(str(access.roles_path()))
    return last is not None and last.role_of(found) == access.ADMIN


@dataclass
class _RunActor:
    """The actor of one script run (``state.Auth.RUN_ACTOR``), worked out at its first use."""

    actor: Actor | None = None


def begin_run() -> None:
    """A script run of the frame starts: the actor is worked out once in it, at its first use
    (every cached read asks for it, through the namespace's write gate)."""
    state.put(state.Auth.RUN_ACTOR, _RunActor())


def end_run() -> None:
    """The frame's run ended: a widget callback, run before the next run's frame, works the
    actor out afresh (a role changed in the roles file since counts at once)."""
    state.drop(state.Auth.RUN_ACTOR)


def current_actor() -> Actor:
    """The actor of this session: the signed-in user with their role, or (sign-in not
    configured) the OS user that runs the console, as admin. Fails closed: an invalid
    ``[auth]`` section, nobody signed in, or a roles file that cannot be used gives no role.
    Worked out once per run of the frame (:func:`begin_run`), else at every call."""
    run = state.get(state.Auth.RUN_ACTOR)
    if not isinstance(run, _RunActor):
        return _actor()
    if run.actor is None:
        run.actor = _actor()
    return run.actor


def _actor() -> Actor:
    settings = sign_in_settings()
    if not settings.present:
        return Actor(user=Actor.os_user().user, role=access.ADMIN, source="console")
    if settings.invalid:
        return Actor(user="(sign-in misconfigured)", role=None, source="console")
    found = claims()
    if not found:
        return Actor(user="(not signed in)", role=None, source="console")
    user = str(found.get("email") or found.get("sub") or "unknown")
    try:
        role = role_map().role_of(found)
    except Exception:  # noqa: BLE001 - a broken roles file: no rights (render_no_access says why)
        role = None
    return Actor(user=user, role=role, source="console")


def render_sign_in_gate() -> None:
    """With sign-in configured, a visitor who is not signed in sees only this page; with an
    ``[auth]`` section that is incomplete, everybody sees why nobody can sign in."""
    settings = sign_in_settings()
    if not settings.present:
        return
    if settings.invalid:
        st.title("Lance Namespace Console")
        st.error(
            "Sign-in is configured but incomplete, so nobody can sign in: "
            + "; ".join(settings.problems)
            + ". An administrator completes the [auth] section of .streamlit/secrets.toml.",
            icon=":material/lock:",
        )
        st.stop()
    if claims():
        return
    st.title("Lance Namespace Console")
    st.write("Sign in to use this console.")
    for provider in settings.providers:
        st.button(
            "Sign in" if provider.is_default else f"Sign in with {provider.name}",
            key=state.Auth.SIGN_IN
            if provider.is_default
            else f"{state.Auth.SIGN_IN}.{provider.name}",
            type="primary",
            icon=":material/login:",
            on_click=st.login,
            args=() if provider.is_default else (provider.name,),
        )
    st.caption("You sign in with your organisation's identity provider (OpenID Connect).")
    st.stop()


def render_no_access(actor: Actor) -> None:
    """A signed-in user without a role sees only this page (and sign-out): nothing of the
    namespace is read. A roles file that cannot be used is explained once, to the users it
    last made admins; everybody else is told only to ask an administrator."""
    if actor.role is not None:
        return
    st.title("Lance Namespace Console")
    st.warning(
        f"No access: {feedback.as_text(actor.user)} has no role in this console.",
        icon=":material/lock:",
    )
    problem = roles_problem()
    if problem is None:
        st.write(
            "The roles file gives you no role. Ask an administrator to add you to it "
            "(a rule for your e-mail address, subject or group)."
        )
    elif was_admin(claims()):
        st.error(
            f"The roles file cannot be used, so access is denied to everyone: {problem}",
            icon=":material/error:",
        )
    else:
        st.write("The roles file cannot be used right now; an administrator has to fix it.")
    render_user_sidebar(actor)
    st.stop()


def render_user_sidebar(actor: Actor) -> None:
    """Who is signed in, their role, and sign-out; for admins, whether sign-in is on (with
    which provider) or off, and why."""
    settings = sign_in_settings()
    with st.sidebar:
        if settings.present:
            role = actor.role or "no role"
            st.caption(f"Signed in as **{feedback.as_text(actor.user)}** · {role}")
            if actor.role is None:
                st.caption(":orange[No role: the roles file gives this user none.]")
        if actor.role == access.ADMIN:
            summary = settings.summary()
            st.caption(feedback.as_text(capital(summary)))
        if settings.present:
            st.button(
                "Sign out",
                key=state.Auth.SIGN_OUT,
                icon=":material/logout:",
                type="tertiary",
                on_click=st.logout,
            )
