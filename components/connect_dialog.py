"""The "Connect to…" dialog: a folder, object-store URI or REST URL typed with its options and
secrets (:func:`spec_from_form` reads them: pure, tests call it), probed and opened through the
session (``session.switch_to``: a typed target is checked and recorded first), and saved by name
when asked (a ``connection_writes`` request the frame performs)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

import backend
from backend.capabilities import SERVER_PROFILES
from backend.config import saved_connections as conns
from backend.config.saved_connections import ConnectionSpec, Secrets
from backend.redaction import is_secret_name
from backend.rules import connect_options
from backend.rules import properties as props
from backend.text import capital
from components import connection_writes, feedback, session, state
from components.common import empty_kv_frame
from components.session import DEFAULT


def spec_from_form(values: Mapping[str, Any]) -> tuple[ConnectionSpec, Secrets]:
    """A connection from the dialog's values; ``ValueError`` (readable) on bad input."""
    target = str(values.get("target") or "").strip()
    if not target:
        raise ValueError("Enter a folder path, an object-store URI or a REST server URL.")
    name = str(values.get("name") or "").strip() or "custom"
    problem = conns.validate_name(name) or (
        "The name default belongs to the launcher's connection." if name == DEFAULT else None
    )
    for env_field in ("api_key_env", "auth_token_env"):
        problem = problem or conns.validate_env_name(str(values.get(env_field) or "").strip())
    try:
        headers = props.from_rows(values.get("headers"))
    except backend.errors.LanceNamespaceError as err:
        raise ValueError(str(err)) from None
    storage, storage_env = conns.storage_from_rows(values.get("storage_options"))
    delimiter = str(values.get("delimiter") or "").strip() or None
    timeout = values.get("timeout") or None
    typed = Secrets(
        api_key=str(values.get("api_key") or "") or None,
        auth_token=str(values.get("auth_token") or "") or None,
        headers={k: v for k, v in headers.items() if is_secret_name(k)},
        storage_options={k: v for k, v in storage.items() if is_secret_name(k)},
    )
    rest = connect_options.is_rest_target(target)
    if rest:
        found = connect_options.rest_option_problems(
            target,
            {
                "api_key": typed.api_key,
                "auth_token": typed.auth_token,
                "headers": headers,
                "timeout": float(timeout) if timeout else None,
                "delimiter": delimiter,
            },
        )
    else:
        found = connect_options.storage_option_problems({**storage_env, **storage})
    problem = problem or (capital(found[0]) + "." if found else None)
    if problem:
        raise ValueError(problem)
    spec = ConnectionSpec(
        name=name,
        target=target,
        delimiter=delimiter,
        headers={k: v for k, v in headers.items() if k not in typed.headers},
        storage_options={k: v for k, v in storage.items() if k not in typed.storage_options},
        secret_storage_env=storage_env,
        api_key_env=str(values.get("api_key_env") or "").strip() or None,
        auth_token_env=str(values.get("auth_token_env") or "").strip() or None,
        timeout=float(timeout) if timeout else None,
        read_only=bool(values.get("read_only")),
        server_profile=(values.get("server_profile") or None) if rest else None,
        source="session",
    )
    return spec, typed


STORE_KINDS = {"": "Folder / other", "s3": "S3", "gs": "GCS", "az": "Azure"}


def storage_grid(kind: str) -> pd.DataFrame:
    """The storage-options grid for an object store ``kind`` (``s3`` / ``gs`` / ``az``): one
    row per known key, value and env var empty, with its hint (empty grid for other roots)."""
    keys = connect_options.STORAGE_KEYS.get(kind, ())
    if keys:
        keys = keys + connect_options.COMMON_STORAGE_KEYS
    hints = [k.hint + (f" (lance also reads {k.env})" if k.env else "") for k in keys]
    return pd.DataFrame(
        {
            "key": pd.Series([k.key for k in keys], dtype="str"),
            "value": pd.Series([""] * len(keys), dtype="str"),
            "env": pd.Series([""] * len(keys), dtype="str"),
            "hint": pd.Series(hints, dtype="str"),
        }
    )


STORAGE_COLUMNS = {
    "key": st.column_config.TextColumn("Key"),
    "value": st.column_config.TextColumn("Value", help="Typed secrets stay in this session."),
    "env": st.column_config.TextColumn(
        "…or env var",
        help="Name of an environment variable holding the value: a saved connection keeps "
        "the name, never the secret.",
    ),
    "hint": st.column_config.TextColumn("Hint", disabled=True),
}


@st.dialog("Connect to…", width="medium", on_dismiss=lambda: state.open_dialog(None))
def render_connect_dialog() -> None:
    denied = session.dialog_denial()
    if denied:  # opened anyway (the button is disabled): say why, offer nothing
        feedback.show("info", f"Typed targets are not available: {denied}.")
        return
    p = f"conn.form{state.get(state.Conn.FORM_VERSION, 0)}"
    allowed = session.allowed_targets()
    if allowed:
        st.caption(
            "This console opens only the targets its operator allowed: "
            + feedback.as_text(", ".join(allowed))
        )
    # outside the form: picking a store refills the storage grid with its known keys
    kind = st.radio(
        "Object store",
        list(STORE_KINDS),
        format_func=STORE_KINDS.__getitem__,
        horizontal=True,
        key=f"{p}.store",
        help="Offers the storage options S3, GCS or Azure know, with hints.",
    )
    with st.form(f"{p}.form", border=False):
        values: dict[str, Any] = {
            "target": st.text_input(
                "Folder, object-store URI or REST URL",
                key=f"{p}.target",
                placeholder="/data/lance  ·  s3://bucket/root  ·  https://lance.example.com",
            ),
            "name": st.text_input("Name", key=f"{p}.name", placeholder="custom"),
        }
        st.caption("REST authentication (kept in this session only; never saved)")
        values["api_key"] = st.text_input("API key", type="password", key=f"{p}.api_key")
        values["auth_token"] = st.text_input("Bearer token", type="password", key=f"{p}.token")
        c1, c2 = st.columns(2)
        values["api_key_env"] = c1.text_input("…or API key env var", key=f"{p}.api_key_env")
        values["auth_token_env"] = c2.text_input("…or token env var", key=f"{p}.token_env")
        c1, c2 = st.columns(2)
        values["delimiter"] = c1.text_input("Delimiter", key=f"{p}.delimiter", placeholder="$")
        values["timeout"] = c2.number_input(
            "Timeout (s, 0 = default)", min_value=0.0, max_value=3600.0, key=f"{p}.timeout"
        )
        st.caption("Extra HTTP headers (secret-looking values stay in this session)")
        values["headers"] = st.data_editor(
            empty_kv_frame(), num_rows="dynamic", key=f"{p}.headers", hide_index=True
        )
        st.caption(
            "Storage options (object stores: pick the store above for its known keys). A "
            "value typed here stays in this session; name an env var to keep it across reloads."
        )
        values["storage_options"] = st.data_editor(
            storage_grid(kind),
            num_rows="dynamic",
            key=f"{p}.storage.{kind or 'none'}",
            hide_index=True,
            column_config=STORAGE_COLUMNS,
        )
        values["server_profile"] = st.selectbox(
            "REST server profile",
            [None, *SERVER_PROFILES],
            format_func=lambda n: "(unknown: learned from its answers)" if n is None else n,
            key=f"{p}.profile",
            help="What the server implements (BatchCommitTables, RenameTable, CASCADE), so "
            "the pages say it up front. lance-dir: pylance's RestAdapter over a directory.",
        )
        values["read_only"] = st.checkbox("Read-only", key=f"{p}.read_only")
        no_save = session.config_denial()
        save = st.checkbox(
            "Save by name to the config file (env var names only, never a secret)",
            key=f"{p}.save",
            disabled=no_save is not None,
            help=f"Not available: {no_save}." if no_save else None,
        )
        submitted = st.form_submit_button("Connect", type="primary", key=f"{p}.submit")
    if not submitted:
        return
    try:
        spec, typed = spec_from_form(values)
    except ValueError as err:
        feedback.show("error", str(err))
        return
    problem = session.switch_to(spec, typed)
    if problem:
        feedback.show("error", problem)
        return
    if save and session.config_denial() is None:
        connection_writes.ask_write(
            connection_writes.save_write(spec, typed)
        )  # the frame saves it in the next run
    state.put(state.Conn.FORM_VERSION, int(state.get(state.Conn.FORM_VERSION, 0)) + 1)
    state.open_dialog(None)
    st.rerun()
