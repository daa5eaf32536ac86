"""Saved connections: a TOML file of non-secret settings, plus secrets from elsewhere.

File (``$LANCE_CONSOLE_CONFIG``, default ``~/.config/lance-console/connections.toml``)::

    allow_targets = ["/srv/lance/*", "https://lance.example.com/*"]   # optional

    [connections.prod]
    target = "https://lance.example.com"
    delimiter = "$"
    api_key_env = "PROD_LANCE_API_KEY"      # secret looked up in the environment
    read_only = true
    server_profile = "lance-dir"            # what the server implements (REST; optional)
    [connections.prod.headers]
    x-tenant = "acme"

``allow_targets`` (:func:`load_allowed_targets`) joins ``lance-console --allow-target``: the only
targets typed in the "Connect to…" dialog that may be opened (``backend.config.targets``); the
console keeps it when it saves or forgets a connection, and never changes it.

Secrets are never written to that file: only environment-variable *names* (``api_key_env``,
``auth_token_env``, ``secret_headers_env``, ``secret_storage_env``) are. Literal secrets typed
in the UI stay in the
session. ``st.secrets["connections"]`` (Streamlit's secret store) may hold literal secrets;
the UI passes it in as a plain mapping - this module never imports streamlit.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets as _secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from backend.config import launch
from backend.config.toml_files import TomlFileError, read_toml
from backend.redaction import is_secret_name
from backend.rules.connect_options import is_rest_target

DEFAULT_TARGET = ".lance-console/demo"
DEFAULT_CONFIG = Path("~/.config/lance-console/connections.toml")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Fields that hold a secret value (never written to the TOML file).
SECRET_FIELDS = ("api_key", "auth_token")
# A per-process key for fingerprints of secrets: stable within the process, useless outside.
_FINGERPRINT_KEY = _secrets.token_bytes(32)


@dataclass(frozen=True)
class Secrets:
    """Secret values of one connection (kept in memory only)."""

    api_key: str | None = None
    auth_token: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)  # secret header values
    storage_options: Mapping[str, str] = field(default_factory=dict)  # secret storage options

    def is_empty(self) -> bool:
        return not (self.api_key or self.auth_token or self.headers or self.storage_options)


@dataclass(frozen=True)
class ConnectionSpec:
    """Non-secret description of a connection."""

    name: str
    target: str
    delimiter: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)  # non-secret headers
    storage_options: Mapping[str, str] = field(default_factory=dict)  # non-secret options
    api_key_env: str | None = None
    auth_token_env: str | None = None
    secret_headers_env: Mapping[str, str] = field(default_factory=dict)  # header -> env var
    secret_storage_env: Mapping[str, str] = field(default_factory=dict)  # option -> env var
    timeout: float | None = None
    read_only: bool = False
    server_profile: str | None = None  # REST: backend.capabilities.SERVER_PROFILES
    source: str = "session"  # "default" | "env" | "config" | "secrets" | "session"
    warnings: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """``"rest"`` for http(s) targets, else ``"local"``."""
        return "rest" if is_rest_target(self.target) else "local"

    def to_toml_dict(self) -> dict[str, Any]:
        """The fields written to the config file (never secret values)."""
        return {
            "target": self.target,
            **_set_only(
                delimiter=self.delimiter,
                api_key_env=self.api_key_env,
                auth_token_env=self.auth_token_env,
                timeout=float(self.timeout) if self.timeout else None,
                read_only=bool(self.read_only),
                server_profile=self.server_profile,
                headers=dict(self.headers),
                secret_headers_env=dict(self.secret_headers_env),
                storage_options=dict(self.storage_options),
                secret_storage_env=dict(self.secret_storage_env),
            ),
        }

    def describe(self) -> dict[str, Any]:
        """Non-secret description used by "copy as Python" snippets and the sidebar. The
        environment variables of secret headers and storage options are named where the user
        named them (``secret_headers_env``, ``secret_storage_env``); a variable the launcher
        set for a secret typed as a value is not (``launch.user_named``)."""
        return {
            "name": self.name,
            "target": self.target,
            "kind": self.kind,
            "delimiter": self.delimiter,
            "headers": dict(self.headers),
            "storage_options": dict(self.storage_options),
            "api_key_env": self.api_key_env,
            "auth_token_env": self.auth_token_env,
            "secret_headers": sorted(self.secret_headers_env),
            "secret_storage": sorted(self.secret_storage_env),
            "secret_headers_env": {
                k: v for k, v in self.secret_headers_env.items() if launch.user_named(v)
            },
            "secret_storage_env": {
                k: v for k, v in self.secret_storage_env.items() if launch.user_named(v)
            },
            "read_only": self.read_only,
            "server_profile": self.server_profile,
        }


def _set_only(**values: Any) -> dict[str, Any]:
    """The ``values`` that are set, in order: an empty text or mapping, zero, ``False`` and
    ``None`` are left out (a file or a connection's options then keep their defaults)."""
    return {name: value for name, value in values.items() if value}


def config_path() -> Path:
    """The connections file: ``$LANCE_CONSOLE_CONFIG`` or ``~/.config/lance-console/...``."""
    raw = os.environ.get("LANCE_CONSOLE_CONFIG")
    return Path(raw).expanduser() if raw else DEFAULT_CONFIG.expanduser()


def default_target() -> str:
    """``$LANCE_CONSOLE_TARGET`` (set by the launcher) or ``.lance-console/demo``."""
    return os.environ.get("LANCE_CONSOLE_TARGET") or DEFAULT_TARGET


def default_connection() -> ConnectionSpec:
    """The connection the console opens with: the launcher's target, with the storage options
    and API key variable it was given (``backend.config.launch``); a REST one gets
    ``$LANCE_CONSOLE_SERVER_PROFILE`` as its server profile."""
    source = "env" if os.environ.get("LANCE_CONSOLE_TARGET") else "default"
    target = default_target()
    storage, secret_storage = launch.launch_storage()
    profile = os.environ.get("LANCE_CONSOLE_SERVER_PROFILE") or None
    rest = is_rest_target(target)
    return ConnectionSpec(
        name="default",
        target=target,
        storage_options=storage,
        secret_storage_env=secret_storage,
        api_key_env=launch.launch_api_key_env() if rest else None,
        source=source,
        server_profile=profile if rest else None,
    )


def validate_name(name: str) -> str | None:
    """An error message when ``name`` is not a valid connection name, else ``None``."""
    if not _NAME_RE.match(name or ""):
        return "Connection names use letters, digits, '_', '.', '-' (1-64 chars, no spaces)."
    return None


def validate_env_name(name: str) -> str | None:
    """An error message when ``name`` is not a valid environment variable name."""
    if name and not _ENV_RE.match(name):
        return f"{name!r} is not a valid environment variable name."
    return None


def _str_map(value: Any, where: str, warnings: list[str]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        warnings.append(f"{where} must be a table of strings; ignored.")
        return {}
    return {str(k): str(v) for k, v in value.items()}


def spec_from_mapping(
    name: str, data: Mapping[str, Any], *, source: str, allow_secrets: bool
) -> tuple[ConnectionSpec, Secrets]:
    """Parse one ``[connections.<name>]`` table; literal secrets only when ``allow_secrets``."""
    warnings: list[str] = []
    target = str(data.get("target") or data.get("uri") or "").strip()
    if not target:
        warnings.append("No target: using the default local namespace.")
        target = default_target()
    headers = _str_map(data.get("headers"), "headers", warnings)
    storage = _str_map(data.get("storage_options"), "storage_options", warnings)
    secret_headers = {k: v for k, v in headers.items() if is_secret_name(k)}
    secret_storage = {k: v for k, v in storage.items() if is_secret_name(k)}
    literal = {f: data.get(f) for f in SECRET_FIELDS if data.get(f)}
    if not allow_secrets and (literal or secret_headers or secret_storage):
        warnings.append(
            "Literal secrets in the config file are ignored; use api_key_env / auth_token_env / "
            "secret_headers_env or Streamlit secrets."
        )
        literal, secret_headers, secret_storage = {}, {}, {}
    timeout = data.get("timeout")
    try:
        timeout = float(timeout) if timeout not in (None, "") else None
    except (TypeError, ValueError):
        warnings.append("timeout must be a number; ignored.")
        timeout = None
    spec = ConnectionSpec(
        name=name,
        target=target,
        delimiter=(str(data["delimiter"]) if data.get("delimiter") else None),
        headers={k: v for k, v in headers.items() if not is_secret_name(k)},
        storage_options={k: v for k, v in storage.items() if not is_secret_name(k)},
        api_key_env=(str(data["api_key_env"]) if data.get("api_key_env") else None),
        auth_token_env=(str(data["auth_token_env"]) if data.get("auth_token_env") else None),
        secret_headers_env=_str_map(data.get("secret_headers_env"), "secret_headers_env", warnings),
        secret_storage_env=_str_map(data.get("secret_storage_env"), "secret_storage_env", warnings),
        timeout=timeout,
        read_only=bool(data.get("read_only", False)),
        server_profile=(str(data["server_profile"]) if data.get("server_profile") else None),
        source=source,
        warnings=tuple(warnings),
    )
    sec = Secrets(
        api_key=literal.get("api_key"),
        auth_token=literal.get("auth_token"),
        headers=secret_headers,
        storage_options=secret_storage,
    )
    return spec, sec


def load_connections(
    path: Path | None = None,
    *,
    secrets: Mapping[str, Any] | None = None,
) -> tuple[list[ConnectionSpec], dict[str, Secrets], list[str]]:
    """Saved connections from the TOML file and from ``secrets`` (``st.secrets["connections"]``).

    Returns ``(specs, literal_secrets_by_name, problems)``. An entry in ``secrets`` overrides a
    file entry of the same name. A missing file is not a problem; an unreadable one is reported.
    """
    path = path or config_path()
    specs: dict[str, ConnectionSpec] = {}
    found_secrets: dict[str, Secrets] = {}
    problems: list[str] = []
    if path.is_file():
        try:
            doc = read_toml(path)
        except (FileNotFoundError, TomlFileError) as err:
            problems.append(f"Cannot read {path}: {err}")
            doc = {}
        listed = doc.get("connections") or {}
        if not isinstance(listed, Mapping):
            problems.append(f"connections in {path} is not a table of connections; ignored.")
            listed = {}
        for name, entry in listed.items():
            if not isinstance(entry, Mapping):
                problems.append(f"[connections.{name}] is not a table; ignored.")
                continue
            spec, _ = spec_from_mapping(str(name), entry, source="config", allow_secrets=False)
            specs[spec.name] = spec
    for name, entry in (secrets or {}).items():
        if not isinstance(entry, Mapping):
            continue
        spec, sec = spec_from_mapping(str(name), entry, source="secrets", allow_secrets=True)
        specs[spec.name] = spec
        if not sec.is_empty():
            found_secrets[spec.name] = sec
    return list(specs.values()), found_secrets, problems


def load_allowed_targets(path: Path | None = None) -> tuple[tuple[str, ...], list[str]]:
    """``(patterns, problems)``: the file's top-level ``allow_targets`` (a missing file or key:
    none). A file or key that cannot be read gives ``("",)``, which matches no target: the
    allowlist fails closed, and the problem says why."""
    path = path or config_path()
    if not path.is_file():
        return (), []
    try:
        doc = read_toml(path)
    except (FileNotFoundError, TomlFileError) as err:
        return ("",), [f"Cannot read {path}: {err}; no typed target is allowed."]
    found = doc.get("allow_targets")
    if found is None:
        return (), []
    if not isinstance(found, list) or not all(isinstance(p, str) and p.strip() for p in found):
        return ("",), [
            f"{path}: allow_targets must be a list of non-empty patterns; no typed target is "
            "allowed."
        ]
    return tuple(found), []


# --- writing TOML (only the subset we produce: strings, numbers, bools, string tables) -------


def _toml_key(key: str) -> str:
    return key if re.match(r"^[A-Za-z0-9_-]+$", key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)  # JSON strings are valid TOML basic strings


def dumps_connections(specs: list[ConnectionSpec], allow_targets: Sequence[str] = ()) -> str:
    """TOML text for ``specs`` (non-secret fields only), after the ``allow_targets`` list."""
    lines = ["# Lance Namespace Console connections (no secrets: env var names only)", ""]
    if allow_targets:
        listed = ", ".join(_toml_value(p) for p in allow_targets)
        lines += [f"allow_targets = [{listed}]", ""]
    for spec in specs:
        data = spec.to_toml_dict()
        head = f"connections.{_toml_key(spec.name)}"
        lines.append(f"[{head}]")
        tables = {k: v for k, v in data.items() if isinstance(v, Mapping)}
        for k, v in data.items():
            if k not in tables:
                lines.append(f"{_toml_key(k)} = {_toml_value(v)}")
        for k, table in tables.items():
            lines.append(f"[{head}.{_toml_key(k)}]")
            for tk, tv in table.items():
                lines.append(f"{_toml_key(tk)} = {_toml_value(tv)}")
        lines.append("")
    return "\n".join(lines)


def save_connection(spec: ConnectionSpec, path: Path | None = None) -> Path:
    """Add or replace ``spec`` (by name) in the config file; returns the file written.

    Only non-secret fields are written; entries from Streamlit secrets are not copied.
    """
    problem = validate_name(spec.name)
    if problem:
        raise ValueError(problem)
    path = path or config_path()
    existing, _, problems = load_connections(path)
    if problems:
        raise ValueError("; ".join(problems))
    by_name = {s.name: s for s in existing}
    by_name[spec.name] = replace(spec, source="config", warnings=())
    _write(path, list(by_name.values()))
    return path


def delete_connection(name: str, path: Path | None = None) -> bool:
    """Remove a saved connection; returns whether it was there."""
    path = path or config_path()
    existing, _, problems = load_connections(path)
    if problems:
        raise ValueError("; ".join(problems))
    kept = [s for s in existing if s.name != name]
    if len(kept) == len(existing):
        return False
    _write(path, kept)
    return True


def _write(path: Path, specs: list[ConnectionSpec]) -> None:
    allow, problems = load_allowed_targets(path)
    if problems:  # never rewrite an allowlist this module cannot read
        raise ValueError("; ".join(problems))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dumps_connections(specs, allow), encoding="utf-8")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


# --- the storage-options grid of the Connect dialog ------------------------------------------


def storage_from_rows(rows: Any) -> tuple[dict[str, str], dict[str, str]]:
    """Storage-option rows (``key``, ``value``, ``env``: a DataFrame or dicts) ->
    ``(values, env_names)``. A row gives a value *or* the name of the environment variable that
    holds it (so that a saved connection keeps its secret out of the file); a key with neither
    is skipped (the grid offers known keys unfilled). ``ValueError`` (readable) on a value
    without a key, a key given twice, both a value and a variable, or a bad variable name."""
    if rows is None:
        return {}, {}
    records = rows.to_dict("records") if hasattr(rows, "to_dict") else list(rows)
    values: dict[str, str] = {}
    env: dict[str, str] = {}
    for rec in records:
        key, value, var = (_cell(rec.get(c)).strip() for c in ("key", "value", "env"))
        if not (value or var):
            continue
        if not key:
            raise ValueError("A storage option row has a value but no key.")
        if key in values or key in env:
            raise ValueError(f"The storage option {key} is given twice.")
        if value and var:
            raise ValueError(
                f"The storage option {key} has both a value and an environment variable: give one."
            )
        if var:
            problem = validate_env_name(var)
            if problem:
                raise ValueError(problem)
            env[key] = var
        else:
            values[key] = value
    return values, env


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if type(value).__name__ == "NAType":  # pandas.NA in an edited grid
        return ""
    return str(value)


# --- resolving secrets and connect options ----------------------------------------------------


def resolve_secrets(
    spec: ConnectionSpec,
    session: Secrets | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[Secrets, list[str]]:
    """Secrets for ``spec``: typed in this session first, then env vars named by the spec.

    Returns ``(secrets, problems)``; a named env var that is unset is a problem (reported, the
    connection is still attempted without it).
    """
    env = os.environ if env is None else env
    session = session or Secrets()
    problems: list[str] = []

    def from_env(var: str | None) -> str | None:
        if not var:
            return None
        val = env.get(var)
        if not val:
            problems.append(f"Environment variable {var} is not set.")
        return val or None

    headers = dict(session.headers)
    for header, var in spec.secret_headers_env.items():
        if header not in headers:
            val = from_env(var)
            if val:
                headers[header] = val
    storage = dict(session.storage_options)
    for option, var in spec.secret_storage_env.items():
        if option not in storage:
            val = from_env(var)
            if val:
                storage[option] = val
    resolved = Secrets(
        api_key=session.api_key or from_env(spec.api_key_env),
        auth_token=session.auth_token or from_env(spec.auth_token_env),
        headers=headers,
        storage_options=storage,
    )
    return resolved, problems


def connect_options(spec: ConnectionSpec, secrets: Secrets | None = None) -> dict[str, Any]:
    """Keyword arguments for ``backend.connect(spec.target, **options)``."""
    secrets = secrets or Secrets()
    if spec.kind == "rest":
        return _set_only(
            delimiter=spec.delimiter,
            timeout=spec.timeout,
            server_profile=spec.server_profile,
            api_key=secrets.api_key,
            auth_token=secrets.auth_token,
            headers={**dict(spec.headers), **dict(secrets.headers)},
        )
    return _set_only(
        delimiter=spec.delimiter,
        storage_options={**dict(spec.storage_options), **dict(secrets.storage_options)},
    )


def connection_key(spec: ConnectionSpec, secrets: Secrets | None = None) -> str:
    """A stable, secret-free key for caches: hash of the non-secret settings plus a keyed
    fingerprint of the secrets (so switching credentials never reuses cached reads)."""
    secrets = secrets or Secrets()
    public = json.dumps(
        {k: v for k, v in spec.to_toml_dict().items() if k != "read_only"}, sort_keys=True
    )
    secret_blob = json.dumps(
        {
            "api_key": secrets.api_key,
            "auth_token": secrets.auth_token,
            "headers": dict(secrets.headers),
            "storage": dict(secrets.storage_options),
        },
        sort_keys=True,
    )
    fp = hashlib.blake2b(secret_blob.encode(), key=_FINGERPRINT_KEY, digest_size=8).hexdigest()
    digest = hashlib.sha256(f"{public}|{fp}".encode()).hexdigest()[:16]
    return f"{spec.kind}:{digest}"
