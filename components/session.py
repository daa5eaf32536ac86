"""The session: the active connection, its cached client behind the write gate, why writes are
refused, reachability, switching and the URL's restore. No widgets: the sidebar
(``components.sidebar``), the connect dialog (``components.connect_dialog``) and the connection's
writes (``components.connection_writes``) draw on it; every other component reads it.

The active connection is the value of the sidebar's connection picker, which is bound to the
URL (``?conn=<saved name>``, never a target or a secret), and so is the read-only switch
(``?ro=true``): a reload keeps both. A link naming a connection this session cannot restore
(one typed in the "Connect to..." dialog and never saved) opens the default connection
read-only, with a warning, instead of quietly writing somewhere else.

Writes are checked below the UI: :func:`get_namespace` hands out the namespace behind the write
gate (``backend.gate``) for this session's actor (``components.auth``): it refuses every write
while read-only, and every write the actor's role does not allow (a page's direct service call
included), and records every write in the audit log. A read-only launch (``lance-console
--read-only``, ``LANCE_CONSOLE_READ_ONLY``, or an exposed launch without sign-in:
``backend.config.launch``) is fixed for the life of the server: the switch then only shows it,
whatever the URL says.

Targets are configuration (``backend.config.targets``): the launch target and saved connections
are what users pick from; a folder, bucket or URL typed in the "Connect to…" dialog opens only
for an admin, within the launch's allowlist (``--allow-target``, ``allow_targets`` in the
connections file), never on a console exposed without sign-in, and each attempt is recorded in
the audit log (``open_target``). Creating a missing directory is an admin's explicit action,
recorded too (``create_target``). Every client of user input is made through the same check
(:func:`target_denial`). The demo is built by the launcher before the console starts, never
here: a default target that does not exist is a missing directory like any other.

For pages: :func:`get_namespace`, :func:`connection_key`, :func:`is_read_only`,
:func:`write_denial`, :func:`role_lock`, :func:`current_spec`, :func:`snippet_connection`,
:func:`health`.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import streamlit as st
from lance_namespace import ListNamespacesRequest
from lance_namespace.errors import LanceNamespaceError

import backend
from backend import access, audit
from backend import gate as write_gate
from backend.config import launch, targets
from backend.config import saved_connections as conns
from backend.config.saved_connections import ConnectionSpec, Secrets
from backend.gate import gate
from backend.redaction import display_target
from backend.rules import connect_options
from components import auth, feedback, state
from components.tables.selection import set_selection

DEFAULT = "default"
SWITCH_REASON = "the connection is read-only (sidebar switch)"
HEALTH_TTL = 10.0  # seconds a reachability answer is trusted


# -- which connections exist ------------------------------------------------------------------------
def _streamlit_secrets() -> Mapping[str, Any]:
    """``st.secrets["connections"]`` if a secrets file defines it, else ``{}``."""
    try:
        found = st.secrets.get("connections")
    except Exception:  # noqa: BLE001 - no secrets.toml, or unparsable: no saved secrets
        return {}
    return found if isinstance(found, Mapping) else {}


Saved = tuple[list[ConnectionSpec], dict[str, Secrets], list[str]]


@dataclass
class _RunReading:
    """What one script run read of the connections (``state.Conn.RUN``): the saved-connections
    file and secrets parsed once, the picker's options, the active connection and its key."""

    saved: Saved | None = None
    options: dict[str, ConnectionSpec] | None = None
    session_specs: Any = None  # the session's dialog-made specs ``options`` was built from
    active: tuple[str, ConnectionSpec] | None = None  # (picked name, its spec)
    keys: dict[str, tuple[ConnectionSpec, Any, str]] = field(default_factory=dict)
    # the gated namespace handed out in this run, with what it was made for (spec, lock,
    # actor): every cached read of the run asks for it
    gated: tuple[ConnectionSpec, str | None, Any, backend.LanceNamespace] | None = None
    # the allowlist: the launch's patterns and the connections file's, with its problems
    allowed: tuple[tuple[str, ...], list[str]] | None = None


def begin_run() -> None:
    """A new script run (the frame, through ``components.sidebar``), or the saved
    connections changed: they are read again, once."""
    state.drop(state.Conn.RUN)


def _reading() -> _RunReading:
    found = state.get(state.Conn.RUN)
    if not isinstance(found, _RunReading):
        found = _RunReading()
        state.put(state.Conn.RUN, found)
    return found


def _saved() -> Saved:
    reading = _reading()
    if reading.saved is None:
        reading.saved = conns.load_connections(secrets=_streamlit_secrets())
    return reading.saved


def saved_problems() -> list[str]:
    """What is wrong in the saved-connections file and secrets (read once per run)."""
    return _saved()[2]


def options() -> dict[str, ConnectionSpec]:
    """Every connection the picker offers: the launcher's default, saved ones, and the ones
    made in this session's dialog."""
    reading = _reading()
    made = state.get(state.Conn.SESSION_SPECS)
    if reading.options is None or reading.session_specs is not made:
        out: dict[str, ConnectionSpec] = {DEFAULT: conns.default_connection()}
        for spec in _saved()[0]:
            out[spec.name] = spec
        out.update(made or {})
        reading.options, reading.session_specs, reading.active = out, made, None
    return reading.options


def current_spec() -> ConnectionSpec:
    """The active connection (non-secret settings)."""
    opts = options()
    reading = _reading()
    name = str(state.get(state.QP_CONN) or DEFAULT)
    if reading.active is None or reading.active[0] != name:
        reading.active = (name, opts.get(name, opts[DEFAULT]))
    return reading.active[1]


def _secret_slot(spec: ConnectionSpec) -> str:
    # Typed secrets belong to one name *and* target: reusing a name for another server never
    # sends the old credentials there.
    return f"{spec.name}|{spec.target}"


def _typed_secrets(spec: ConnectionSpec) -> Secrets | None:
    """The secrets of ``spec`` given as values: typed in this session, or Streamlit's."""
    typed = (state.get(state.Conn.SECRETS) or {}).get(_secret_slot(spec))
    if typed is None and spec.source == "secrets":
        typed = _saved()[1].get(spec.name)
    return typed


def resolved_secrets(spec: ConnectionSpec) -> tuple[Secrets, list[str]]:
    return conns.resolve_secrets(spec, _typed_secrets(spec))


def connection_key(spec: ConnectionSpec | None = None) -> str:
    """Stable, secret-free key of a connection (the active one by default)."""
    spec = spec or current_spec()
    keys = _reading().keys
    typed = state.get(state.Conn.SECRETS)
    known = keys.get(spec.name)
    if known is not None and known[0] is spec and known[1] is typed:
        return known[2]
    key = conns.connection_key(spec, resolved_secrets(spec)[0])
    keys[spec.name] = (spec, typed, key)
    return key


def launch_lock() -> str | None:
    """Why this server is read-only for its whole life (``None``: the switch decides)."""
    return launch.launch_read_only()


def read_only_reason() -> str | None:
    """Why every write is refused for this session: a read-only launch, the sidebar switch,
    or an actor whose role may not write (``None``: writes are allowed, per role)."""
    lock = launch_lock()
    if lock:
        return lock
    if state.read_only():
        return SWITCH_REASON
    return access.denial(auth.current_actor().role, "declare_table")


def config_denial() -> str | None:
    """Why this session may not change the saved-connections file (``None``: it may): a
    read-only launch changes no file, and the file is shared, so only admins change it."""
    return launch_lock() or access.denial(auth.current_actor().role, "save_connection")


def is_read_only() -> bool:
    return read_only_reason() is not None


def role_denies_writes() -> bool:
    """Writes are disabled by the actor's role, not by a read-only connection."""
    return launch_lock() is None and not state.read_only() and read_only_reason() is not None


def write_denial(operation: str = "declare_table", request: Any = None) -> str | None:
    """Why ``operation`` would be refused for this session (``None``: it would run): shown
    beside the disabled button. Destructive operations (drop, deregister, cleanup, version
    deletes ...) need the admin role."""
    return read_only_reason() or access.denial(auth.current_actor().role, operation, request)


# -- which targets may be opened (backend.config.targets) ---------------------------------------------
def _realpath(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def exposed_address() -> str | None:
    """The address beyond loopback this console listens on (``None``: loopback only, as far
    as anyone says): the launcher's (``launch.exposed``: ``--host``), else Streamlit's
    ``server.address`` when one was given. The one answer of every page that asks."""
    found = launch.exposed()
    if found is None:
        with contextlib.suppress(Exception):  # outside a Streamlit server: no address given
            address = st.get_option("server.address") or None
            found = None if address is None or launch.is_loopback(address) else str(address)
    return found


def exposed_without_sign_in() -> str | None:
    """The address this console listens on when it is exposed (not loopback) without sign-in
    (``None``: loopback, or sign-in configured)."""
    host = exposed_address()
    if host is None or auth.sign_in_configured():
        return None
    return host


def allowed_targets() -> tuple[str, ...]:
    """The allowlist of typed targets: ``--allow-target`` and the connections file's
    ``allow_targets`` (empty: no allowlist), read once per run."""
    reading = _reading()
    if reading.allowed is None:
        patterns, problems = conns.load_allowed_targets()
        reading.allowed = ((*launch.launch_allow_targets(), *patterns), problems)
    return reading.allowed[0]


def allowed_target_problems() -> list[str]:
    """What is wrong in the connections file's ``allow_targets`` (read once per run)."""
    allowed_targets()
    return (_reading().allowed or ((), []))[1]


def dialog_denial() -> str | None:
    """Why this session may not open a target typed in the dialog at all (``None``: it may,
    within the allowlist)."""
    return targets.ad_hoc_denial(auth.current_actor().role, exposed=exposed_without_sign_in())


def target_denial(spec: ConnectionSpec) -> str | None:
    """Why this session may not open ``spec`` (``None``: it may): the launch target and saved
    connections always; a typed one per :func:`targets.denial`."""
    return targets.denial(
        spec.target,
        source=spec.source,
        role=auth.current_actor().role,
        exposed=exposed_without_sign_in(),
        patterns=allowed_targets(),
        realpath=_realpath,
    )


def create_denial(spec: ConnectionSpec | None) -> str | None:
    """Why this session may not create the missing directory of ``spec`` (``None``: it may):
    a read-only launch, a console exposed without sign-in, a role below admin, or a target it
    may not open."""
    exposed = exposed_without_sign_in()
    return (
        launch_lock()
        or (f"this console listens on {exposed} without sign-in" if exposed else None)
        or access.denial(auth.current_actor().role, "create_target")
        or (target_denial(spec) if spec is not None else None)
    )


@contextlib.contextmanager
def _recorded(operation: str, name: str, request: dict[str, Any], refused: str | None) -> Any:
    """Check and record ``operation`` (``open_target`` / ``create_target``) in the audit log as
    the write gate records a write: the actor, the connection's name, the target, the outcome;
    a refusal (``refused``, or the actor's role) is recorded and raised."""
    lock = launch_lock() if operation == "create_target" else None
    recorder = gate(
        None, actor=auth.current_actor(), connection=name, read_only=lock, log=_audit_log()
    )
    if refused:  # refused before anything is opened or created: recorded as a refusal
        error = write_gate.refusal(operation, refused)
        write_gate.record_refusal(recorder, operation, request, error)
        raise error
    with recorder.record(operation, request) as out:
        yield out


def backend_kind() -> str:
    return connect_options.target_kind(current_spec().target)


# -- the client ---------------------------------------------------------------------------------------
def _release(ns: backend.LanceNamespace) -> None:
    """A client leaving the cache (evicted, or its connection refreshed) closes its HTTP pool."""
    close = getattr(ns, "close", None)
    if callable(close):
        with contextlib.suppress(Exception):  # a failing close never breaks the page
            close()


@st.cache_resource(show_spinner=False, max_entries=8, on_release=_release)
def _connect(key: str, target: str, _options: dict[str, Any]) -> backend.LanceNamespace:
    # ``key`` identifies the connection (a fingerprint of its secrets included); ``_options``
    # (with the secrets) is not hashed.
    return backend.connect(target, **_options)


def _client(spec: ConnectionSpec, key: str, options: dict[str, Any]) -> backend.LanceNamespace:
    """The cached client of ``spec`` made with ``options``: refused first when this session may
    not open it (:func:`target_denial`); a REST client gets the allowlist (a pattern that names
    a link-local or metadata host explicitly lets it connect there)."""
    refused = target_denial(spec)
    if refused:
        raise write_gate.refusal("open_target", refused)
    if spec.kind == "rest":
        options = {**options, "allow_targets": list(allowed_targets())}
    return _connect(key, spec.target, options)


def forget(spec: ConnectionSpec) -> None:
    """Drop the cached client and reachability answer of ``spec`` only (every session on that
    connection opens a new client; other connections keep theirs)."""
    key = connection_key(spec)
    _reading().gated = None  # this run opens it again too
    _forget_health(key)
    _connect.clear(key, spec.target)
    _connect.clear(f"{key}|health", spec.target)


def _open(spec: ConnectionSpec) -> backend.LanceNamespace:
    missing = backend.missing_local_directory(spec.target)
    if missing is not None:
        raise backend.errors.make(
            backend.errors.ErrorCode.NAMESPACE_NOT_FOUND,
            f"the directory {missing} does not exist",
        )
    secrets, _ = resolved_secrets(spec)
    return _client(spec, connection_key(spec), conns.connect_options(spec, secrets))


def role_lock(operation: str, read_only: bool) -> str | None:
    """Why the form of ``operation`` is disabled beyond the page's own read-only state (the
    actor's role: drops, deregisters, cleanup and version deletes are an admin's), shown
    under its button; ``None``: nothing more to say."""
    return None if read_only else write_denial(operation)


@st.cache_resource(show_spinner=False)
def _audit_log() -> audit.AuditLog:
    return audit.AuditLog()


def audit_name(spec: ConnectionSpec) -> str:
    """The connection's name in the audit log: a saved (or dialog-made) connection's own name;
    for the launch target, which the picker calls "default" on every console, a name derived
    from its target (``audit.target_name``)."""
    if spec.name == DEFAULT and spec.source in ("default", "env"):
        return audit.target_name(spec.target)
    return spec.name


def get_namespace() -> backend.LanceNamespace:
    """The connected namespace of the active connection (a cached client shared by sessions)
    behind this session's write gate: writes are refused while read-only or beyond the actor's
    role, and recorded in the audit log (see the module docstring)."""
    spec = current_spec()
    lock = launch_lock() or (SWITCH_REASON if state.read_only() else None)
    actor = auth.current_actor()
    reading = _reading()
    made = reading.gated
    if made is not None and made[0] is spec and made[1] == lock and made[2] == actor:
        return made[3]  # opened once per run (each cached read of the run asks for it)
    ns = _open(spec)
    gated = gate(
        ns,
        actor=actor,
        connection=audit_name(spec),
        target=spec.target,
        read_only=lock,
        log=_audit_log(),
    )
    reading.gated = (spec, lock, actor, cast(backend.LanceNamespace, gated))
    return reading.gated[3]  # duck-typed: every operation of ``ns``


def snippet_connection() -> dict[str, Any]:
    """Non-secret description of the active connection for "copy as Python" snippets."""
    spec = current_spec()
    secrets, _ = resolved_secrets(spec)
    out = spec.describe()
    out["has_api_key"] = bool(secrets.api_key)
    out["has_auth_token"] = bool(secrets.auth_token)
    out["secret_headers"] = sorted({*out["secret_headers"], *secrets.headers})
    out["secret_storage"] = sorted({*out.get("secret_storage", []), *secrets.storage_options})
    # a secret given as a value wins over the spec's variable (resolve_secrets): the snippet
    # then reads its default variable, not the spec's
    typed = _typed_secrets(spec) or Secrets()
    for given, env_field in (
        (typed.headers, "secret_headers_env"),
        (typed.storage_options, "secret_storage_env"),
    ):
        out[env_field] = {k: v for k, v in out[env_field].items() if k not in given}
    return out


# -- health -----------------------------------------------------------------------------------------
# The reachability of each connection is checked in a background thread (one per connection,
# shared by the sessions on it) with a short timeout and no retries: a server that accepts and
# never answers shows "checking", then "not reachable", and never holds up the frame.
HEALTH_WAIT = 1.0  # seconds a run waits for a connection's first answer before "checking"
HEALTH_TIMEOUT = 5.0  # seconds the check waits for the server (REST: no retries)
HEALTH_POLL = 1.0  # seconds between redraws of the status while checking


@dataclass
class _Health:
    result: tuple[bool, str, float] | None = None  # (reachable, why not, when checked)
    checking: threading.Thread | None = None


_HEALTH: dict[str, _Health] = {}
_HEALTH_LOCK = threading.Lock()


def _health_client(spec: ConnectionSpec, typed: Secrets | None = None) -> backend.LanceNamespace:
    """The client that asks whether a connection answers (the background check, and the probe
    of a pick or of the connect dialog): the connection's own, with a short timeout and no
    retries for a REST server: one question, answered or not within HEALTH_TIMEOUT.
    ``typed``: secrets typed in the dialog (then the env vars the connection names)."""
    if typed is None:
        if spec.kind != "rest":
            return _open(spec)
        secrets, _ = resolved_secrets(spec)
        key = connection_key(spec)
    else:
        secrets, _ = conns.resolve_secrets(spec, typed)
        key = conns.connection_key(spec, secrets)
    opts = conns.connect_options(spec, secrets)
    if spec.kind == "rest":
        opts["timeout"] = min(float(opts.get("timeout") or HEALTH_TIMEOUT), HEALTH_TIMEOUT)
        opts["max_retries"] = 0
        key = f"{key}|health"
    return _client(spec, key, opts)


def _check(entry: _Health, ns: backend.LanceNamespace) -> None:
    try:
        ns.list_namespaces(ListNamespacesRequest(id=[], limit=1))
        result = (True, "", time.time())
    except Exception as err:  # noqa: BLE001 - refused, timeout, bad path: all shown as text
        result = (False, feedback.error_text(err), time.time())
    with _HEALTH_LOCK:
        entry.result, entry.checking = result, None


def health() -> tuple[bool | None, str, float]:
    """``(reachable, why not, when checked)`` of the active connection, checked every 10 s in
    the background; ``reachable`` is ``None`` while its first check has not answered."""
    spec = current_spec()
    key = connection_key(spec)
    with _HEALTH_LOCK:
        entry = _HEALTH.setdefault(key, _Health())
        result, thread = entry.result, entry.checking
    started = False
    if thread is None and (result is None or time.time() - result[2] >= HEALTH_TTL):
        try:
            ns = _health_client(spec)  # in this run: it reads the session's secrets
        except Exception as err:  # noqa: BLE001 - a bad path, a bad option: not reachable
            with _HEALTH_LOCK:
                entry.result = result = (False, feedback.error_text(err), time.time())
        else:
            thread = threading.Thread(
                target=_check, args=(entry, ns), name=f"health {key}", daemon=True
            )
            with _HEALTH_LOCK:
                if entry.checking is None:
                    entry.checking, started = thread, True
                    thread.start()
    if result is None and started and thread is not None:  # only the run that asked waits
        thread.join(HEALTH_WAIT)
        with _HEALTH_LOCK:
            result = entry.result
    if result is None:
        return None, "checking", time.time()
    if result[0]:
        reached = set(state.get(state.Conn.REACHED) or ())
        if key not in reached:
            state.put(state.Conn.REACHED, reached | {key})
    return result


def _forget_health(key: str | None = None) -> None:
    with _HEALTH_LOCK:
        if key is None:
            _HEALTH.clear()
        else:
            _HEALTH.pop(key, None)


def _ask(spec: ConnectionSpec, secrets: Secrets | None = None) -> None:
    """Open ``spec`` now and list one namespace through the client of the health check (one
    question, no retries); raises what went wrong."""
    typed = secrets if secrets is not None and not secrets.is_empty() else None
    ns = _health_client(spec, typed)
    ns.list_namespaces(ListNamespacesRequest(id=[], limit=1))


def probe(spec: ConnectionSpec, secrets: Secrets | None = None) -> str | None:
    """:func:`_ask`: a readable error, or ``None`` when fine."""
    try:
        _ask(spec, secrets)
    except Exception as err:  # noqa: BLE001
        return feedback.error_text(err, action=f"Connecting to {display_target(spec.target)}")
    return None


# -- switching --------------------------------------------------------------------------------------
PENDING = "conn.pending"  # (connection name, read-only) applied before the widgets render


def _reset_selection() -> None:
    """Another connection: back to its root, with nothing of the previous one's selected (its
    table, branch and version leave the URL too)."""
    set_selection([])
    state.set_compare_pair(None)


def on_pick() -> None:
    """The picker changed: probe the new connection; on failure keep the previous one."""
    name = str(state.get(state.QP_CONN) or DEFAULT)
    previous = str(state.get(state.Conn.ACTIVE) or DEFAULT)
    spec = options().get(name)
    problem = probe(spec) if spec is not None else f"Unknown connection {name}."
    if spec is None or problem:
        missing = backend.missing_local_directory(spec.target) if spec is not None else None
        state.put(state.QP_CONN, previous)
        if missing is not None:
            state.put(state.Conn.CREATE_OFFER, (name, str(missing)))
            state.notice("warning", f"The directory {missing} does not exist.")
        else:
            state.notice("error", problem or "Not connected.")
        return
    state.put(state.Conn.ACTIVE, name)
    state.set_read_only(spec.read_only or state.read_only())
    _reset_selection()
    state.notice("success", f"Connected to {name} ({spec.kind}).")


def open_next(name: str, read_only: bool) -> None:
    """Open connection ``name`` (read-only or not) at the start of the next run, before the
    picker renders (:func:`apply_pending`)."""
    state.put(PENDING, (name, read_only))


def apply_pending() -> None:
    pending = state.drop(PENDING)
    if pending:
        name, read_only = pending
        state.put(state.QP_CONN, name)
        state.put(state.Conn.ACTIVE, name)
        state.set_read_only(read_only)
        _reset_selection()


def restore_after_reload(opts: dict[str, ConnectionSpec]) -> None:
    """First run of a session: a ``?conn=`` the session cannot restore opens the default
    read-only, with a warning (never a quiet switch to another backend)."""
    if state.has(state.Conn.ACTIVE):
        return
    wanted = st.query_params.get(state.QP_CONN)
    if wanted and wanted not in opts:
        state.put(state.Conn.LOST, wanted)
        state.set_read_only(True)
        state.notice(
            "warning",
            f"This link names the connection {wanted}, which this browser session cannot "
            "restore (it was not saved). The default connection is open, read-only: pick a "
            "connection or connect again before writing.",
        )
    state.put(state.Conn.ACTIVE, wanted if wanted in opts else DEFAULT)


def _open_typed(spec: ConnectionSpec, typed: Secrets | None) -> str | None:
    """Probe the typed ``spec`` when this session may open it (:func:`target_denial`, checked
    before anything is sent), the attempt recorded in the audit log (``open_target``); a
    readable refusal or error, or ``None`` when it answered."""
    refused = target_denial(spec)
    request = {"target": display_target(spec.target), "name": spec.name}
    try:
        with _recorded("open_target", spec.name, request, refused):
            _ask(spec, typed)
    except Exception as err:  # noqa: BLE001 - refused, unreachable, bad path: shown as text
        if refused:
            return f"Not opened: {refused}."
        return feedback.error_text(err, action=f"Connecting to {display_target(spec.target)}")
    return None


def switch_to(spec: ConnectionSpec, typed: Secrets | None = None) -> str | None:
    """Make ``spec`` (from the dialog) the active connection after probing it; a readable
    error when refused (the previous connection stays). A typed target is checked first
    (:func:`target_denial`: nothing is sent, nothing opened when refused) and recorded."""
    if spec.source in targets.CONFIGURED_SOURCES:
        problem = probe(spec, typed)
    else:
        problem = _open_typed(spec, typed)
        if problem and problem.startswith("Not opened: "):
            return problem
    if problem:
        missing = backend.missing_local_directory(spec.target)
        if missing is not None:
            state.put(state.Conn.CREATE_OFFER, (spec.name, str(missing)))
            _remember(spec, typed)
            return f"The directory {missing} does not exist: create it from the sidebar."
        return problem
    _remember(spec, typed)
    open_next(spec.name, spec.read_only)
    state.notice("success", f"Connected to {spec.name} ({spec.kind}).")
    return None


def _remember(spec: ConnectionSpec, typed: Secrets | None) -> None:
    if typed is not None and not typed.is_empty():
        secrets = dict(state.get(state.Conn.SECRETS) or {})
        secrets[_secret_slot(spec)] = typed
        state.put(state.Conn.SECRETS, secrets)
    if spec.source == "session":
        made = dict(state.get(state.Conn.SESSION_SPECS) or {})
        made[spec.name] = spec
        state.put(state.Conn.SESSION_SPECS, made)


def create_directory(path: Path, spec: ConnectionSpec | None = None) -> bool:
    """Create ``path`` (the root of ``spec``, when given: only its cached client is dropped):
    an admin's explicit action (:func:`create_denial`), recorded in the audit log
    (``create_target``) whether it is refused, fails or succeeds."""
    locked = launch_lock()
    if locked:  # a read-only server creates nothing, not even an empty folder
        state.notice("error", f"Read-only server ({locked}): {path} is not created.")
        return False
    refused = create_denial(spec)
    name = spec.name if spec is not None else current_spec().name
    try:
        with _recorded("create_target", name, {"path": str(path)}, refused):
            path.mkdir(parents=True)
    except LanceNamespaceError:
        state.notice("error", f"{path} is not created: {refused}.")
        return False
    except OSError as err:
        state.notice("error", f"Could not create {path}: {err.strerror}")
        return False
    state.notice("success", f"Created {path}: an empty namespace.")
    # a client of a deleted directory still answers from its old catalog
    if spec is not None:
        forget(spec)
    else:
        _reading().gated = None
        _forget_health()
        _connect.clear()
    return True
