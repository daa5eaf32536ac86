"""The connection sidebar, drawn first by the frame on every run: the connection picker and the
read-only switch (both bound to the URL), the active connection's status and reachability,
Refresh, "Connect to…" (``components.connect_dialog``), forgetting a saved connection, and the
offer to create a missing directory; and the banner every page shows when the namespace stopped
answering or anyone may write. What it shows comes from ``components.session``; what it asks
to write is a ``components.connection_writes`` request the frame performs."""

from __future__ import annotations

import time
from pathlib import Path

import streamlit as st

from backend.config import launch
from backend.config.saved_connections import ConnectionSpec
from backend.redaction import display_target, mask_value
from components import feedback, polling, session, state
from components.cache import invalidate
from components.common import render_path, render_role_lock
from components.connect_dialog import render_connect_dialog
from components.connection_writes import ask_write, create_write, forget_write
from components.session import HEALTH_POLL, health


def _render_status(spec: ConnectionSpec) -> None:
    kind = ":blue-badge[REST]" if spec.kind == "rest" else ":green-badge[local]"
    ro = (
        ":orange-badge[:material/lock: read-only]"
        if session.is_read_only()
        else ":gray-badge[writable]"
    )
    source = f":gray-badge[{feedback.as_text(spec.source)}]"
    st.markdown(f"{kind} {ro} {source}")
    render_path(display_target(spec.target))
    secrets, problems = session.resolved_secrets(spec)
    facts = []
    if secrets.api_key:
        facts.append(f"API key {mask_value(secrets.api_key)}")
    if secrets.auth_token:
        facts.append(f"bearer token {mask_value(secrets.auth_token)}")
    facts += [f"{h} {mask_value(v)}" for h, v in secrets.headers.items()]
    if spec.delimiter:
        facts.append(f"delimiter {spec.delimiter}")
    if spec.server_profile:
        facts.append(f"server profile {spec.server_profile}")
    if facts:
        st.caption(feedback.as_text(" · ".join(facts)))
    for problem in (*problems, *spec.warnings):
        st.caption(":orange[" + feedback.as_text(problem) + "]")
    checking = health()[0] is None
    # while checking, the status redraws itself until the answer comes
    polling.fragment(lambda: _render_health(checking), every=HEALTH_POLL if checking else None)


def _render_health(checking: bool) -> None:
    ok, why, checked = health()
    if checking and ok is not None:
        polling.rerun_page()  # the answer came: the whole page (the banner too) shows it
    when = time.strftime("%H:%M:%S", time.localtime(checked))
    if ok is None:
        st.caption(":gray[:material/hourglass_empty:] checking… (no answer yet)")
    elif ok:
        st.caption(f":green[:material/check_circle:] reachable · checked {when}")
    else:
        st.caption(f":red[:material/error:] not reachable · checked {when}")
        st.caption(feedback.as_text(why))


def _render_create_offer() -> None:
    offer = state.get(state.Conn.CREATE_OFFER)
    if not offer:
        return
    name, path = offer
    spec = session.options().get(name)
    denied = session.create_denial(spec)
    st.button(
        f"Create {feedback.as_text(str(path))}",
        key=state.Conn.CREATE,
        icon=":material/create_new_folder:",
        disabled=denied is not None,
        help=f"Not available: {denied}." if denied else None,
        on_click=ask_write,
        args=(create_write("create", Path(path), spec, name=name),),
    )
    render_role_lock(None if session.launch_lock() else denied)


def _refresh() -> None:
    """Read everything of the active connection again (other connections keep their cache);
    the run this starts reads the saved connections again, as every run does."""
    invalidate()
    session.forget(session.current_spec())


def render_connection_sidebar() -> None:
    """The sidebar: the connection picker and read-only switch (both in the URL), status,
    reachability, refresh, "Connect to…", forget a saved connection. Called first by the
    frame on every run: the saved connections are read once per run (``session.begin_run``)."""
    session.begin_run()
    session.apply_pending()
    opts = session.options()
    session.restore_after_reload(opts)
    locked = session.launch_lock()
    if locked:  # before the switch renders: it shows the lock, whatever the URL says
        state.set_read_only(True)
    with st.sidebar:
        st.subheader("Connection", divider="gray")
        notice = state.pop_notice()
        if notice:
            feedback.show(*notice)
        _render_create_offer()
        names = list(opts)
        st.selectbox(
            "Connection",
            names,
            key=state.QP_CONN,
            bind="query-params",
            on_change=session.on_pick,
            help="Bound to the URL (?conn=name): a reload or a shared link keeps it.",
        )
        st.toggle(
            "Read-only",
            key=state.QP_READ_ONLY,
            bind="query-params",
            disabled=locked is not None,
            help=(
                f"Read-only for the life of this server: {locked}."
                if locked
                else "Disables every write (create, declare, deregister, delete, ...) on "
                "every page."
            ),
        )
        if locked:
            st.caption(":material/lock: " + feedback.as_text(f"Read-only server: {locked}."))
        spec = session.current_spec()
        _render_status(spec)
        for problem in session.saved_problems():
            st.caption(":orange[" + feedback.as_text(problem) + "]")
        st.button(
            "Refresh",
            key=state.Conn.REFRESH,
            icon=":material/refresh:",
            on_click=_refresh,
            type="tertiary",
            help="Read everything again from the namespace (listings are cached for a minute).",
        )
        no_dialog = session.dialog_denial()
        st.button(
            "Connect to…",
            key=state.Conn.OPEN,
            icon=":material/cable:",
            on_click=state.open_dialog,
            args=("connect",),
            width="stretch",
            disabled=no_dialog is not None,
            help=f"Not available: {no_dialog}." if no_dialog else None,
        )
        if no_dialog:
            st.caption(":material/lock: " + feedback.as_text(f"Typed targets: {no_dialog}."))
        for problem in session.allowed_target_problems():
            st.caption(":orange[" + feedback.as_text(problem) + "]")
        if spec.source == "config":
            st.button(
                "Forget this saved connection",
                key=state.Conn.FORGET,
                type="tertiary",
                disabled=session.config_denial() is not None,  # a read-only server: no file
                help=session.config_denial(),
                on_click=ask_write,
                args=(forget_write(spec),),
            )
    if state.dialog() == "connect":
        render_connect_dialog()


def render_health_banner() -> None:
    """On every page: a warning when anyone may write (an exposed launch with
    ``--allow-anonymous-writes``) and when the server stopped answering (the page shows cached
    data that may be stale). A connection that never answered in this session has nothing
    stale: the page shows why it cannot be opened instead."""
    anonymous = launch.anonymous_writes()
    if anonymous:
        feedback.show(
            "warning",
            f"This console listens on {anonymous} without sign-in and accepts writes from "
            "anyone who can reach it (started with --allow-anonymous-writes).",
        )
    ok, _why, checked = health()
    if ok is False and session.connection_key() in (state.get(state.Conn.REACHED) or ()):
        when = time.strftime("%H:%M:%S", time.localtime(checked))
        feedback.show(
            "warning",
            f"The namespace did not answer at {when}: what this page shows may be stale. "
            "Use Refresh in the sidebar once it is back.",
        )
