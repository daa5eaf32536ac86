"""The connection's writes: save a connection to the config file, forget a saved one, create a
missing directory. The sidebar, the connect dialog and a page that cannot open its namespace
(:func:`require_namespace`) ask for one (:func:`ask_write`); the frame (app/nav.py) takes it
(:func:`pending_write`, :func:`refusal`) and runs its :attr:`ConnectionWrite.write` with
``components.writes.perform``, the one write path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

import backend
from backend.config import saved_connections as conns
from backend.config.saved_connections import ConnectionSpec, Secrets
from components import feedback, session, state
from components.common import render_role_lock
from components.session import DEFAULT
from components.writes import Write


@dataclass(frozen=True)
class ConnectionWrite:
    """A write the sidebar (or :func:`require_namespace`) asks for; the frame performs it
    (app/nav.py: :func:`pending_write`, then ``writes.perform(request.write, ...)`` with
    :meth:`finish` and the result said in the sidebar). ``kind``: ``save`` (the dialog's
    connection, to the config file), ``forget`` (a saved connection, from the config file),
    ``create`` (the missing directory of connection ``name``, which then opens) or
    ``create_here`` (the active connection's). ``write``'s work reads the saved connections
    again after the change, done or not (and a forget opens the default connection)."""

    kind: str
    write: Write
    name: str = DEFAULT
    read_only: bool = False

    def finish(self, result: Any) -> None:
        """After a create that succeeded: the offer goes, the connection ``name`` opens."""
        if self.kind == "create" and result:
            state.drop(state.Conn.CREATE_OFFER)
            session.open_next(self.name, self.read_only)


def ask_write(request: ConnectionWrite) -> None:
    """Keep ``request`` for the frame (a button's callback, or the dialog before it closes)."""
    state.put(state.Conn.WRITE, request)


def pending_write() -> ConnectionWrite | None:
    """The write asked for, once (the frame calls it before the sidebar renders)."""
    found = state.drop(state.Conn.WRITE)
    return found if isinstance(found, ConnectionWrite) else None


def refusal(request: ConnectionWrite) -> str | None:
    """Why the frame refuses ``request`` now (the config file: read-only server, role). A
    directory's create checks and records itself (``session.create_directory``)."""
    return session.config_denial() if request.kind in ("save", "forget") else None


def _changed(fn: Callable[..., Any], *args: Any, forgotten: bool = False) -> Any:
    """``fn(*args)``, a change of the saved connections or of a directory; then, done or not,
    the saved connections are read again, and after a forget the default connection opens."""
    try:
        return fn(*args)
    finally:
        session.begin_run()
        if forgotten:
            session.open_next(DEFAULT, False)


def save_write(spec: ConnectionSpec, typed: Secrets | None) -> ConnectionWrite:
    lost = _typed_only(spec, typed) if typed is not None else []
    warning = (
        f"Saved without {', '.join(lost)} (typed, so kept in this session only): name an env "
        "var for it so that a reload keeps it."
    )
    write = Write(
        _changed, (conns.save_connection, spec), f"Saving the connection {spec.name}",
        lambda path: f"Connected to {spec.name}; saved to {path}.",
        warning=lambda _path: warning if lost else None,
    )  # fmt: skip
    return ConnectionWrite("save", write, spec.name)


def forget_write(spec: ConnectionSpec) -> ConnectionWrite:
    write = Write(
        _changed, (conns.delete_connection, spec.name), f"Forgetting the connection {spec.name}",
        f"Forgot the saved connection {spec.name}.", kwargs={"forgotten": True},
    )  # fmt: skip
    return ConnectionWrite("forget", write, spec.name)


def create_write(
    kind: str, path: Path, spec: ConnectionSpec | None, *, name: str = DEFAULT
) -> ConnectionWrite:
    """Create ``path`` (``session.create_directory``: checked, recorded, says the outcome in
    the sidebar)."""
    write = Write(_changed, (session.create_directory, Path(path), spec), f"Creating {path}", "")
    read_only = spec.read_only if spec is not None else False
    return ConnectionWrite(kind, write, name, read_only)


def require_namespace() -> backend.LanceNamespace:
    """:func:`get_namespace`, or show why not (offering to create a missing directory) and
    stop the page."""
    try:
        return session.get_namespace()
    except Exception as err:  # noqa: BLE001 - any failure to open is shown, never a traceback
        feedback.show_error(err, action="Opening the namespace")
        missing = backend.missing_local_directory(session.current_spec().target)
        if missing is not None:
            denied = session.create_denial(session.current_spec())
            st.button(
                f"Create {feedback.as_text(str(missing))}",
                key=state.Conn.CREATE_HERE,
                icon=":material/add:",
                disabled=denied is not None,
                help=f"Not available: {denied}." if denied else None,
                on_click=ask_write,
                args=(create_write("create_here", missing, session.current_spec()),),
            )
            render_role_lock(None if session.launch_lock() else denied)
            st.caption("Or pick another connection in the sidebar.")
        else:
            st.caption("Pick another connection in the sidebar.")
        st.stop()
        raise  # unreachable: st.stop() raises


def _typed_only(spec: ConnectionSpec, typed: Secrets) -> list[str]:
    """The secrets typed in the dialog, which a saved connection cannot keep."""
    out = [k for k in ("api_key", "auth_token") if getattr(typed, k)]
    return out + sorted({*typed.headers, *typed.storage_options})
