"""Connection sidebar and the cached namespace client shared by every page.

Public API for pages:

* :func:`get_namespace` -> the connected ``LanceNamespace`` (cached per connection);
* :func:`require_namespace` -> same, or show the connection error and stop the page;
* :func:`connection_key` -> stable, secret-free key to hash cached reads by;
* :func:`is_read_only` -> whether writes must be disabled;
* :func:`backend_kind` -> ``"local"`` | ``"rest"``;
* :func:`current_spec` / :func:`snippet_connection` -> non-secret description of the connection;
* :func:`render_connection_sidebar` -> the sidebar (called by ``app/main.py`` on every page).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pandas as pd
import streamlit as st

import backend
from backend import browse
from backend import connections as conns
from backend.connections import ConnectionSpec, Secrets
from components import state
from components.common import clear_read_caches, error_text, mask_secret

# --------------------------------------------------------------------------------------------
# Current connection
# --------------------------------------------------------------------------------------------


def default_target() -> str:
    """``$LANCE_CONSOLE_TARGET`` or ``.lance-console/demo``."""
    return conns.default_target()


def current_spec() -> ConnectionSpec:
    """The active connection (non-secret settings); the launcher's default until switched."""
    spec = st.session_state.get(state.CONN_SPEC)
    if isinstance(spec, ConnectionSpec):
        return spec
    spec = conns.default_connection()
    _set_active(spec)
    return spec


def _session_secrets() -> dict[str, Secrets]:
    return st.session_state.setdefault(state.CONN_SECRETS, {})


def _secret_slot(spec: ConnectionSpec) -> str:
    # Typed secrets belong to one name *and* target: reusing a name for another server never
    # sends the old credentials there.
    return f"{spec.name}|{spec.target}"


def _streamlit_secrets() -> Mapping[str, Any]:
    """``st.secrets["connections"]`` if a secrets file defines it, else ``{}``."""
    try:
        found = st.secrets.get("connections")
    except Exception:  # noqa: BLE001 - no secrets.toml, or unparsable: no saved secrets
        return {}
    return found if isinstance(found, Mapping) else {}


def _saved() -> tuple[list[ConnectionSpec], dict[str, Secrets], list[str]]:
    return conns.load_connections(secrets=_streamlit_secrets())


def _resolved_secrets(spec: ConnectionSpec) -> tuple[Secrets, list[str]]:
    typed = _session_secrets().get(_secret_slot(spec))
    if typed is None and spec.source == "secrets":
        typed = _saved()[1].get(spec.name)
    return conns.resolve_secrets(spec, typed)


def connection_key() -> str:
    """Stable, secret-free key of the active connection (use it to key ``st.cache_data``)."""
    spec = current_spec()
    return conns.connection_key(spec, _resolved_secrets(spec)[0])


def backend_kind() -> str:
    """``"local"`` or ``"rest"`` for the active connection."""
    return current_spec().kind


def is_read_only() -> bool:
    """True when the read-only switch is on: every page must disable its writes."""
    return bool(st.session_state.get(state.READ_ONLY, False))


@st.cache_resource(show_spinner=False, max_entries=8)
def _connect(key: str, target: str, _options: dict[str, Any]) -> backend.LanceNamespace:
    # ``key`` identifies the connection (secret fingerprint included); ``_options`` (with the
    # secrets) is not hashed by streamlit.
    return backend.connect(target, **_options)


def get_namespace() -> backend.LanceNamespace:
    """The connected namespace of the active connection (cached client).

    Raises ``LanceNamespaceError`` (or another exception for unusable targets) when the backend
    cannot be opened; pages usually call :func:`require_namespace` instead.
    """
    spec = current_spec()
    secrets, _ = _resolved_secrets(spec)
    key = conns.connection_key(spec, secrets)
    return _connect(key, spec.target, conns.connect_options(spec, secrets))


def require_namespace() -> backend.LanceNamespace:
    """:func:`get_namespace`, or show the error readably and stop the page."""
    try:
        return get_namespace()
    except Exception as err:  # noqa: BLE001 - any failure to open is shown, never a traceback
        st.error(error_text(err, action="Opening the namespace"), icon=":material/error:")
        st.caption("Pick another connection in the sidebar.")
        st.stop()
        raise  # unreachable: st.stop() raises


def snippet_connection() -> dict[str, Any]:
    """Non-secret description of the active connection for "copy as Python" snippets."""
    spec = current_spec()
    secrets, _ = _resolved_secrets(spec)
    out = spec.describe()
    out["has_api_key"] = bool(secrets.api_key)
    out["has_auth_token"] = bool(secrets.auth_token)
    out["secret_headers"] = sorted({*out["secret_headers"], *secrets.headers})
    out["storage_options"] = {
        **out["storage_options"],
        **{k: "***" for k in secrets.storage_options},
    }
    return out


def display_target(target: str) -> str:
    """The target with any password in the URL and secret query parameters masked."""
    try:
        parts = urlsplit(target)
    except ValueError:
        return target
    if not parts.scheme or not parts.netloc:
        return target
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = (
            f"{user}:{mask_secret(userinfo.split(':', 1)[1])}@{host}" if ":" in userinfo else netloc
        )
    query = parts.query
    if query:
        items = []
        for item in query.split("&"):
            k, _, v = item.partition("=")
            items.append(f"{k}={mask_secret(v)}" if conns.is_secret_key(k) and v else item)
        query = "&".join(items)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


# --------------------------------------------------------------------------------------------
# Switching
# --------------------------------------------------------------------------------------------


def _set_active(spec: ConnectionSpec) -> None:
    st.session_state[state.CONN_SPEC] = spec
    st.session_state[state.CONNECTION] = spec.describe()


def _reset_selection() -> None:
    for key in (state.SEL_NAMESPACE, state.SEL_TABLE, state.SEL_VERSION):
        st.session_state.pop(key, None)
    st.session_state.pop(state.VERSIONS_COMPARE, None)
    for qp in (state.QP_NAMESPACE, state.QP_TABLE, state.QP_VERSION, state.QP_INDEX):
        if qp in st.query_params:
            del st.query_params[qp]


def probe(spec: ConnectionSpec, secrets: Secrets) -> str | None:
    """Open ``spec`` and list one namespace; returns a readable error, or ``None`` when fine."""
    from lance_namespace import ListNamespacesRequest

    try:
        ns = _connect(
            conns.connection_key(spec, secrets), spec.target, conns.connect_options(spec, secrets)
        )
        ns.list_namespaces(ListNamespacesRequest(id=[], limit=1))
    except Exception as err:  # noqa: BLE001 - refused, timeout, bad path: all shown readably
        return error_text(err, action=f"Connecting to {display_target(spec.target)}")
    return None


def switch_to(spec: ConnectionSpec, typed: Secrets | None = None, *, check: bool = True) -> bool:
    """Make ``spec`` the active connection (after probing it when ``check``); True on success.

    ``typed`` secrets are kept in the session only. On failure the previous connection stays
    active and the error is shown in the sidebar.
    """
    if typed is not None and not typed.is_empty():
        secrets, problems = conns.resolve_secrets(spec, typed)
    else:
        secrets, problems = _resolved_secrets(spec)
    if check:
        problem = probe(spec, secrets)
        if problem:
            st.session_state[state.CONN_NOTICE] = ("error", problem)
            return False
    if typed is not None and not typed.is_empty():
        _session_secrets()[_secret_slot(spec)] = typed
    _set_active(spec)
    _reset_selection()
    clear_read_caches()
    st.session_state[state.CONN_PENDING_READ_ONLY] = spec.read_only
    note = f"Connected to **{spec.name}** ({spec.kind})."
    if problems:
        note += "  \n" + "  \n".join(problems)
    st.session_state[state.CONN_NOTICE] = ("warning" if problems else "success", note)
    return True


def _on_pick() -> None:
    name = st.session_state.get(state.CONN_PICK)
    if not name or name == current_spec().name:
        return
    options = _connection_options()
    spec = options.get(name)
    if spec is not None and not switch_to(spec):
        st.session_state[state.CONN_PICK] = current_spec().name


def _connection_options() -> dict[str, ConnectionSpec]:
    default = conns.default_connection()
    options: dict[str, ConnectionSpec] = {default.name: default}
    for spec in _saved()[0]:
        options[spec.name] = spec
    active = current_spec()
    options.setdefault(active.name, active)
    return options


# --------------------------------------------------------------------------------------------
# Form parsing (pure: tests call it directly)
# --------------------------------------------------------------------------------------------


def rows_to_mapping(rows: pd.DataFrame | list[dict[str, Any]] | None, what: str) -> dict[str, str]:
    """Key/value rows (``key``, ``value`` columns) from a data editor -> dict.

    Blank rows are skipped; a blank key with a value, or a duplicate key, raises ``ValueError``.
    """
    try:
        return browse.properties_from_rows(rows)
    except ValueError as err:
        raise ValueError(f"{what}: {err}") from None


def spec_from_form(values: Mapping[str, Any]) -> tuple[ConnectionSpec, Secrets]:
    """Build a connection from the sidebar form's values; raises ``ValueError`` on bad input.

    Keys: target, name, api_key, api_key_env, auth_token, auth_token_env, delimiter, timeout,
    headers (rows), storage_options (rows), read_only.
    """
    target = str(values.get("target") or "").strip()
    if not target:
        raise ValueError("Enter a folder path, an object-store URI or a REST server URL.")
    name = str(values.get("name") or "").strip() or "custom"
    problem = conns.validate_name(name)
    if problem:
        raise ValueError(problem)
    for env_field in ("api_key_env", "auth_token_env"):
        problem = conns.validate_env_name(str(values.get(env_field) or "").strip())
        if problem:
            raise ValueError(problem)
    if backend.is_rest_target(target):
        host = urlsplit(target).hostname
        if not host:
            raise ValueError(f"{target!r} is not a valid server URL.")
    headers = rows_to_mapping(values.get("headers"), "Headers")
    storage = rows_to_mapping(values.get("storage_options"), "Storage options")
    delimiter = str(values.get("delimiter") or "").strip() or None
    timeout = values.get("timeout") or None
    secret_headers = {k: v for k, v in headers.items() if conns.is_secret_key(k)}
    secret_storage = {k: v for k, v in storage.items() if conns.is_secret_key(k)}
    spec = ConnectionSpec(
        name=name,
        target=target,
        delimiter=delimiter,
        headers={k: v for k, v in headers.items() if k not in secret_headers},
        storage_options={k: v for k, v in storage.items() if k not in secret_storage},
        api_key_env=str(values.get("api_key_env") or "").strip() or None,
        auth_token_env=str(values.get("auth_token_env") or "").strip() or None,
        timeout=float(timeout) if timeout else None,
        read_only=bool(values.get("read_only")),
        source="session",
    )
    typed = Secrets(
        api_key=str(values.get("api_key") or "") or None,
        auth_token=str(values.get("auth_token") or "") or None,
        headers=secret_headers,
        storage_options=secret_storage,
    )
    return spec, typed


# --------------------------------------------------------------------------------------------
# Sidebar
# --------------------------------------------------------------------------------------------


def _render_status(spec: ConnectionSpec) -> None:
    kind = ":blue-badge[REST]" if spec.kind == "rest" else ":green-badge[local]"
    ro = ":orange-badge[:material/lock: read-only]" if is_read_only() else ":gray-badge[writable]"
    st.markdown(f"**{spec.name}** {kind} {ro}")
    st.code(display_target(spec.target), language=None, wrap_lines=True)
    secrets, problems = _resolved_secrets(spec)
    lines = []
    if secrets.api_key:
        lines.append(f"API key `{mask_secret(secrets.api_key)}`")
    if secrets.auth_token:
        lines.append(f"Bearer token `{mask_secret(secrets.auth_token)}`")
    for header, value in secrets.headers.items():
        lines.append(f"{header} `{mask_secret(value)}`")
    if spec.delimiter:
        lines.append(f"delimiter `{spec.delimiter}`")
    if lines:
        st.caption(" · ".join(lines))
    for problem in (*problems, *spec.warnings):
        st.caption(f":orange[{problem}]")


def _render_notice() -> None:
    notice = st.session_state.pop(state.CONN_NOTICE, None)
    if not notice:
        return
    kind, text = notice
    {"error": st.error, "warning": st.warning}.get(kind, st.success)(text)


def _open_connect_dialog() -> None:
    st.session_state.pop(state.TABLES_DIALOG, None)  # one dialog at a time
    st.session_state[state.CONN_DIALOG] = True


def _close_connect_dialog() -> None:
    st.session_state.pop(state.CONN_DIALOG, None)


@st.dialog("Connect to…", width="medium", on_dismiss=_close_connect_dialog)
def _connect_dialog() -> None:
    version = st.session_state.get(state.CONN_FORM_VERSION, 0)
    p = f"conn.form{version}"
    with st.form(f"{p}.form", border=False):
        target = st.text_input(
            "Folder, object-store URI or REST URL",
            key=f"{p}.target",
            placeholder="/data/lance  ·  s3://bucket/root  ·  https://lance.example.com",
        )
        name = st.text_input("Name", key=f"{p}.name", placeholder="custom")
        st.caption("REST authentication (kept in this session only; never saved)")
        api_key = st.text_input("API key", type="password", key=f"{p}.api_key")
        auth_token = st.text_input("Bearer token", type="password", key=f"{p}.auth_token")
        c1, c2 = st.columns(2)
        api_key_env = c1.text_input("…or API key env var", key=f"{p}.api_key_env")
        auth_token_env = c2.text_input("…or token env var", key=f"{p}.auth_token_env")
        c1, c2 = st.columns(2)
        delimiter = c1.text_input("Delimiter", key=f"{p}.delimiter", placeholder="$")
        timeout = c2.number_input(
            "Timeout (s, 0 = default)", min_value=0.0, max_value=600.0, key=f"{p}.timeout"
        )
        empty = pd.DataFrame(
            {"key": pd.Series([], dtype="str"), "value": pd.Series([], dtype="str")}
        )
        st.caption("Extra HTTP headers (secret-looking values are kept in the session only)")
        headers = st.data_editor(empty, num_rows="dynamic", key=f"{p}.headers", hide_index=True)
        st.caption("Storage options (local / object store)")
        storage = st.data_editor(empty, num_rows="dynamic", key=f"{p}.storage", hide_index=True)
        read_only = st.checkbox("Read-only", key=f"{p}.read_only")
        save = st.checkbox("Save to config file (no secrets)", key=f"{p}.save")
        submitted = st.form_submit_button("Connect", type="primary", key=f"{p}.submit")
    if not submitted:
        return
    try:
        spec, typed = spec_from_form(
            {
                "target": target,
                "name": name,
                "api_key": api_key,
                "auth_token": auth_token,
                "api_key_env": api_key_env,
                "auth_token_env": auth_token_env,
                "delimiter": delimiter,
                "timeout": timeout,
                "headers": headers,
                "storage_options": storage,
                "read_only": read_only,
            }
        )
    except ValueError as err:
        st.error(str(err))
        return
    if save and not str(name or "").strip():
        st.error("Give the connection a name to save it.")
        return
    if not switch_to(spec, typed):
        # Refused: the previous connection stays; say why here, the form keeps its values.
        _kind, problem = st.session_state.pop(state.CONN_NOTICE, ("error", "Not connected."))
        st.error(problem, icon=":material/error:")
        return
    if save:
        try:
            path = conns.save_connection(spec)
            note = st.session_state.get(state.CONN_NOTICE, ("success", ""))
            st.session_state[state.CONN_NOTICE] = (note[0], f"{note[1]}  \nSaved to `{path}`.")
        except (OSError, ValueError) as err:
            st.session_state[state.CONN_NOTICE] = ("warning", f"Connected, but not saved: {err}")
    st.session_state[state.CONN_FORM_VERSION] = version + 1
    _close_connect_dialog()
    st.rerun()


def _render_connect_button() -> None:
    """ "Connect to…": opens the connection form in a dialog (rendered only while open)."""
    st.button(
        "Connect to…",
        key="conn.open",
        icon=":material/cable:",
        on_click=_open_connect_dialog,
        width="stretch",
    )


def render_connection_sidebar() -> None:
    """The connection panel in the sidebar: status, read-only switch, saved connections, form."""
    spec = current_spec()
    pending = st.session_state.pop(state.CONN_PENDING_READ_ONLY, None)
    if pending is not None:
        st.session_state[state.READ_ONLY] = pending
    with st.sidebar:
        st.subheader("Connection", divider="gray")
        _render_notice()
        st.toggle(
            "Read-only",
            key=state.READ_ONLY,
            help="Disables every write (create, declare, deregister, delete, ...) on every page.",
        )
        _render_status(spec)
        options = _connection_options()
        names = list(options)
        if st.session_state.get(state.CONN_PICK) not in names:
            st.session_state[state.CONN_PICK] = spec.name
        st.selectbox(
            "Saved connections",
            names,
            key=state.CONN_PICK,
            on_change=_on_pick,
            format_func=lambda n: f"{n} ({options[n].kind}, {options[n].source})",
        )
        problems = _saved()[2]
        for problem in problems:
            st.caption(f":orange[{problem}]")
        _render_connect_button()
        if spec.source == "config" and st.button(
            "Forget this saved connection", key="conn.forget", type="tertiary"
        ):
            try:
                conns.delete_connection(spec.name)
                switch_to(conns.default_connection(), check=False)
            except (OSError, ValueError) as err:
                st.session_state[state.CONN_NOTICE] = ("error", str(err))
            st.rerun()
    if st.session_state.get(state.CONN_DIALOG):
        _connect_dialog()


def connection_summary() -> dict[str, Any]:
    """Non-secret summary of the active connection (name, kind, target, read-only)."""
    spec = current_spec()
    return {
        **dataclasses.asdict(spec),
        "target": display_target(spec.target),
        "kind": spec.kind,
        "read_only": is_read_only(),
    }


__all__ = [
    "backend_kind",
    "connection_key",
    "connection_summary",
    "current_spec",
    "default_target",
    "display_target",
    "get_namespace",
    "is_read_only",
    "render_connection_sidebar",
    "require_namespace",
    "rows_to_mapping",
    "snippet_connection",
    "spec_from_form",
    "switch_to",
]
