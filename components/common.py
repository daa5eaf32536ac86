"""Shared UI helpers used by every page.

* errors: :func:`show_error`, :func:`run_op` (call a backend operation, show a readable error);
* secrets: :func:`mask_secret`, :func:`is_secret_key`, :func:`mask_mapping`, :func:`masked_dump`;
* :func:`render_json` - a JSON viewer that masks secret values;
* :func:`render_typed_confirmation` / :func:`confirmation_matches` - "type the name to confirm";
* :func:`python_snippet` / :func:`render_python_snippet` - "copy as Python" for an operation;
* :func:`clear_read_caches` - call after every write;
* :func:`render_read_only_notice` - one line explaining why writes are disabled.

The pure helpers (masking, snippet text, confirmation check) never touch streamlit state, so tests
call them directly.
"""

from __future__ import annotations

import json
import pprint
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import streamlit as st
from lance_namespace.errors import LanceNamespaceError

import backend
from backend.connections import is_secret_key

T = TypeVar("T")

# --------------------------------------------------------------------------------------------
# Secrets
# --------------------------------------------------------------------------------------------


def mask_secret(value: Any) -> str:
    """Mask a secret for display: the first 4 characters and the length, e.g. ``abcd…(32 chars)``.

    Values of 8 characters or fewer show nothing of themselves (``…(6 chars)``).
    """
    if value is None:
        return ""
    s = str(value)
    if not s:
        return ""
    head = s[:4] if len(s) > 8 else ""
    return f"{head}…({len(s)} chars)"


def mask_mapping(data: Mapping[str, Any] | None) -> dict[str, Any]:
    """A copy of ``data`` with secret values masked (see :func:`is_secret_key`)."""
    if not data:
        return {}
    return {k: (mask_secret(v) if is_secret_key(k) else v) for k, v in data.items()}


def _is_masked(value: Any) -> bool:
    """Empty, or already redacted/masked (``<redacted>``, ``abcd…(32 chars)``)."""
    text = str(value)
    return text == "" or text == "<redacted>" or text.endswith(" chars)") and "…(" in text


def masked_dump(value: Any) -> Any:
    """JSON-ready copy of a model/dict/list with every secret value masked, recursively.

    Pydantic models (``lance_namespace`` requests/responses) are dumped with ``exclude_none``;
    ``storage_options``, headers and properties get their secret values masked.
    """
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", exclude_none=True, by_alias=False)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if is_secret_key(str(k)) and isinstance(v, (str, int, float)) and not _is_masked(v):
                out[str(k)] = mask_secret(v)
            else:
                out[str(k)] = masked_dump(v)
        return out
    if isinstance(value, (list, tuple)):
        return [masked_dump(v) for v in value]
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return value


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def error_text(err: BaseException, *, action: str | None = None) -> str:
    """One readable markdown paragraph for an error: code name, server message, detail, status."""
    info = backend.describe_error(err)
    head = f"**{action} failed** - " if action else ""
    text = f"{head}`{info['code_name']}`: {info['message']}"
    if info.get("detail"):
        text += f"  \nDetail: {info['detail']}"
    if info.get("status"):
        text += f"  \nHTTP status: {info['status']}"
    return text


def show_error(err: BaseException, *, action: str | None = None) -> None:
    """Show an error as a readable ``st.error`` (never a traceback)."""
    st.error(error_text(err, action=action), icon=":material/error:")


def run_op(
    fn: Callable[..., T],
    *args: Any,
    action: str | None = None,
    **kwargs: Any,
) -> T | None:
    """Call ``fn(*args, **kwargs)``; on a ``LanceNamespaceError`` show it and return ``None``.

    Errors that are not namespace errors (``ValueError`` from validation, ``OSError`` from a
    local path, ...) are shown the same way: the UI never shows a raw traceback.
    """
    try:
        return fn(*args, **kwargs)
    except (LanceNamespaceError, ValueError, OSError, RuntimeError) as err:
        show_error(err, action=action)
        return None


def clear_read_caches() -> None:
    """Forget every cached read (``st.cache_data``); call after any write."""
    st.cache_data.clear()


def render_read_only_notice() -> None:
    """A caption saying writes are disabled because the connection is read-only."""
    st.caption(":material/lock: Read-only connection: writes are disabled (see sidebar).")


# --------------------------------------------------------------------------------------------
# JSON viewer
# --------------------------------------------------------------------------------------------


def render_json(
    data: Any,
    *,
    key_prefix: str,
    label: str | None = None,
    expanded: bool = False,
) -> None:
    """Show a model/dict/list/JSON string as collapsible JSON with secret values masked.

    With ``label`` the viewer sits in an expander titled ``label``.
    """
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except ValueError:
            data = data.decode(errors="replace") if isinstance(data, bytes) else data
    shown = masked_dump(data)
    if label is None:
        if isinstance(shown, (dict, list)):
            st.json(shown, expanded=expanded)
        else:
            st.code(str(shown), language=None)
        return
    with st.expander(label, expanded=expanded):
        if isinstance(shown, (dict, list)):
            st.json(shown, expanded=True)
        else:
            st.code(str(shown), language=None)


# --------------------------------------------------------------------------------------------
# Typed confirmation
# --------------------------------------------------------------------------------------------


def confirmation_matches(typed: str | None, expected: str) -> bool:
    """True when ``typed`` equals ``expected`` (surrounding whitespace ignored, case-sensitive)."""
    return bool(expected) and (typed or "").strip() == expected


def render_typed_confirmation(
    expected: str,
    *,
    key_prefix: str,
    label: str | None = None,
) -> bool:
    """A text input asking the user to type ``expected``; returns whether it matches.

    Inside an ``st.form`` the value is only known on submit, so check the returned bool after
    ``st.form_submit_button`` and refuse the write when it is ``False``.
    """
    typed = st.text_input(
        label or f"Type `{expected}` to confirm",
        key=f"{key_prefix}.confirm",
        placeholder=expected,
    )
    return confirmation_matches(typed, expected)


# --------------------------------------------------------------------------------------------
# Copy as Python
# --------------------------------------------------------------------------------------------

# Connection options that are secrets -> the environment variable used in snippets by default.
_DEFAULT_SECRET_ENV = {"api_key": "LANCE_API_KEY", "auth_token": "LANCE_AUTH_TOKEN"}


def _py_literal(value: Any, indent: int = 4) -> str:
    """A Python literal for JSON-like data; long values wrap, continuation lines indented."""
    text = pprint.pformat(value, width=88 - indent, sort_dicts=False)
    return text.replace("\n", "\n" + " " * indent)


def _connect_args(connection: Mapping[str, Any]) -> tuple[list[str], bool]:
    """``backend.connect`` arguments for a connection, secrets replaced by env lookups."""
    args = [repr(str(connection.get("target", "")))]
    needs_os = False
    for opt, default_env in _DEFAULT_SECRET_ENV.items():
        env_name = connection.get(f"{opt}_env")
        if env_name or connection.get(f"has_{opt}"):
            args.append(f"{opt}=os.environ[{(env_name or default_env)!r}]")
            needs_os = True
    if connection.get("delimiter"):
        args.append(f"delimiter={connection['delimiter']!r}")
    headers: dict[str, str] = {}
    for k, v in (connection.get("headers") or {}).items():
        headers[k] = v
    header_parts = []
    for k, v in headers.items():
        if is_secret_key(k):
            env = "LANCE_HEADER_" + re.sub(r"[^A-Za-z0-9]", "_", k).upper()
            header_parts.append(f"{k!r}: os.environ[{env!r}]")
            needs_os = True
        else:
            header_parts.append(f"{k!r}: {v!r}")
    for k in connection.get("secret_headers") or ():
        if k in headers:
            continue
        env = "LANCE_HEADER_" + re.sub(r"[^A-Za-z0-9]", "_", k).upper()
        header_parts.append(f"{k!r}: os.environ[{env!r}]")
        needs_os = True
    if header_parts:
        args.append("headers={" + ", ".join(header_parts) + "}")
    storage = {k: v for k, v in (connection.get("storage_options") or {}).items()}
    if storage:
        parts = []
        for k, v in storage.items():
            if is_secret_key(k):
                env = "LANCE_STORAGE_" + re.sub(r"[^A-Za-z0-9]", "_", k).upper()
                parts.append(f"{k!r}: os.environ[{env!r}]")
                needs_os = True
            else:
                parts.append(f"{k!r}: {v!r}")
        args.append("storage_options={" + ", ".join(parts) + "}")
    return args, needs_os


def python_snippet(
    operation: str,
    request: Any,
    connection: Mapping[str, Any],
    *,
    extra_args: str | None = None,
) -> str:
    """Python code reproducing one operation: ``backend.connect(...)`` then ``ns.<operation>(...)``.

    ``request`` is a ``lance_namespace`` request model (or ``None`` for no-argument calls).
    ``connection`` is the non-secret connection description (``target``, ``delimiter``,
    ``headers``, ``storage_options``, ``api_key_env`` / ``has_api_key``, ...); secrets appear
    only as ``os.environ[...]`` lookups, and secret values inside the request are masked.
    ``extra_args`` is appended verbatim to the call (e.g. ``"data"`` for Arrow IPC bytes).
    """
    connect_args, needs_os = _connect_args(connection)
    lines = []
    if needs_os:
        lines.append("import os")
        lines.append("")
    lines.append("import backend")
    call_args: list[str] = []
    if request is not None:
        cls = type(request).__name__
        lines.append(f"from lance_namespace import {cls}")
        if hasattr(request, "model_dump"):
            request = request.model_dump(mode="json", exclude_none=True, exclude_unset=True)
        dumped = masked_dump(request)
        fields = ",\n".join(f"        {k}={_py_literal(v, 9 + len(k))}" for k, v in dumped.items())
        call_args.append(f"{cls}(\n{fields},\n    )" if fields else f"{cls}()")
    if extra_args:
        call_args.append(extra_args)
    lines.append("")
    if len(connect_args) == 1:
        lines.append(f"ns = backend.connect({connect_args[0]})")
    else:
        joined = ",\n    ".join(connect_args)
        lines.append(f"ns = backend.connect(\n    {joined},\n)")
    lines.append(f"response = ns.{operation}(\n    " + ",\n    ".join(call_args) + ",\n)")
    lines.append("print(response)")
    return "\n".join(lines) + "\n"


def render_python_snippet(
    operation: str,
    request: Any,
    *,
    key_prefix: str,
    connection: Mapping[str, Any] | None = None,
    label: str = "Copy as Python",
) -> str:
    """Show :func:`python_snippet` for the current connection in an expander; returns the code.

    ``connection`` defaults to the sidebar's current connection (non-secret description).
    """
    if connection is None:
        from components.connection import snippet_connection

        connection = snippet_connection()
    code = python_snippet(operation, request, connection)
    with st.expander(label, icon=":material/code:"):
        st.code(code, language="python")
    return code


__all__ = [
    "clear_read_caches",
    "confirmation_matches",
    "error_text",
    "is_secret_key",
    "mask_mapping",
    "mask_secret",
    "masked_dump",
    "python_snippet",
    "render_json",
    "render_python_snippet",
    "render_read_only_notice",
    "render_typed_confirmation",
    "run_op",
    "show_error",
]
