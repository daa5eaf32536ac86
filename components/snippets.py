"""Copy as Python: the backend call that reproduces an operation, secrets as environment
lookups (``os.environ[...]``), secret values in the request masked (``backend.redaction``)."""

from __future__ import annotations

import pprint
import re
from collections.abc import Mapping
from typing import Any

import streamlit as st

from backend.redaction import is_secret_name, redact_json

_SECRET_ENV = {"api_key": "LANCE_API_KEY", "auth_token": "LANCE_AUTH_TOKEN"}


def _env_name(prefix: str, key: str) -> str:
    return prefix + re.sub(r"[^A-Za-z0-9]", "_", key).upper()


def _literal(value: Any, indent: int) -> str:
    text = pprint.pformat(value, width=88 - indent, sort_dicts=False)
    return text.replace("\n", "\n" + " " * indent)


def _mapping_arg(
    name: str,
    data: Mapping[str, Any],
    secret_keys: set[str],
    env_prefix: str,
    env_names: Mapping[str, str],
) -> str:
    """``name={...}``: non-secret values inline; a secret read from the variable the
    connection names for it (``env_names``), else from ``<env_prefix><KEY>``."""

    def lookup(key: str) -> str:
        return f"{key!r}: os.environ[{(env_names.get(key) or _env_name(env_prefix, key))!r}]"

    parts = []
    for k, v in data.items():
        if is_secret_name(k) or k in secret_keys or k in env_names:
            parts.append(lookup(k))
        else:
            parts.append(f"{k!r}: {v!r}")
    for k in sorted((secret_keys | set(env_names)) - set(data)):
        parts.append(lookup(k))
    return f"{name}={{" + ", ".join(parts) + "}"


def connect_args(connection: Mapping[str, Any]) -> list[str]:
    """``backend.connect`` arguments for a connection description (``ConnectionSpec.describe``):
    secrets as environment lookups, of the variables the connection names where it names
    them (``secret_headers_env``, ``secret_storage_env``)."""
    args = [repr(str(connection.get("target", "")))]
    for opt, default_env in _SECRET_ENV.items():
        env_name = connection.get(f"{opt}_env")
        if env_name or connection.get(f"has_{opt}"):
            args.append(f"{opt}=os.environ[{(env_name or default_env)!r}]")
    if connection.get("delimiter"):
        args.append(f"delimiter={connection['delimiter']!r}")
    for arg, values, secrets, env_prefix in (
        ("headers", "headers", "secret_headers", "LANCE_HEADER_"),
        ("storage_options", "storage_options", "secret_storage", "LANCE_STORAGE_"),
    ):
        data = dict(connection.get(values) or {})
        secret_keys = set(connection.get(secrets) or ())
        env_names = dict(connection.get(f"{secrets}_env") or {})
        if data or secret_keys or env_names:
            args.append(_mapping_arg(arg, data, secret_keys, env_prefix, env_names))
    return args


def python_snippet(
    operation: str, request: Any, connection: Mapping[str, Any], *, extra_args: str | None = None
) -> str:
    """Python reproducing one operation: ``backend.connect(...)`` then ``ns.<operation>(...)``."""
    args = connect_args(connection)
    needs_os = any("os.environ" in a for a in args)
    lines = ["import os", ""] if needs_os else []
    lines.append("import backend")
    call_args: list[str] = []
    if request is not None:
        cls = type(request).__name__
        lines.append(f"from lance_namespace import {cls}")
        dumped = redact_json(
            request.model_dump(mode="json", exclude_none=True, exclude_unset=True)
            if hasattr(request, "model_dump")
            else request
        )
        fields = ",\n".join(f"        {k}={_literal(v, 9 + len(k))}" for k, v in dumped.items())
        call_args.append(f"{cls}(\n{fields},\n    )" if fields else f"{cls}()")
    if extra_args:
        call_args.append(extra_args)
    lines.append("")
    if len(args) == 1:
        lines.append(f"ns = backend.connect({args[0]})")
    else:
        joined = ",\n    ".join(args)
        lines.append(f"ns = backend.connect(\n    {joined},\n)")
    lines.append(f"response = ns.{operation}(\n    " + ",\n    ".join(call_args) + ",\n)")
    lines.append("print(response)")
    return "\n".join(lines) + "\n"


def render_python_snippet(
    operation: str, request: Any, *, key_prefix: str, label: str = "Copy as Python"
) -> str:
    """:func:`python_snippet` for the active connection in an expander; returns the code."""
    from components.session import snippet_connection

    code = python_snippet(operation, request, snippet_connection())
    render_lazy_code(code, key=f"{key_prefix}.open", label=label)
    return code


def render_lazy_code(code: str, *, key: str, label: str = "Copy as Python") -> None:
    """``code`` in a collapsed expander that renders it only once opened: a highlighted code
    block costs about half a second of every page load that shows one
    (benchmarks/bench_ui_pages.py), and these snippets are read on demand."""
    from components.common import lazy_expander

    if box := lazy_expander(label, key=key, icon=":material/code:"):
        with box:
            st.code(code, language="python")


def render_code(code: str | None, *, label: str = "Copy as Python") -> None:
    if code:
        with st.expander(label, icon=":material/code:"):
            st.code(code, language="python")


__all__ = [
    "connect_args",
    "python_snippet",
    "render_code",
    "render_lazy_code",
    "render_python_snippet",
]
