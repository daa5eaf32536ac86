"""What the launcher tells the console process, and the launch policy (no streamlit here).

The launcher (``backend.launcher.cli``) runs ``streamlit run app/main.py`` with these environment
variables; the console reads them through the functions below:

=================================  ================================================================
``LANCE_CONSOLE_TARGET``           the namespace the default connection opens
``LANCE_CONSOLE_READ_ONLY``        set (not ``0``/``false``/``no``): read-only for the life of
                                   the server; the sidebar switch only shows it
``LANCE_CONSOLE_READ_ONLY_REASON`` why (shown in the sidebar)
``LANCE_CONSOLE_ANONYMOUS_WRITES`` the address an exposed console accepts anonymous writes on
                                   (``--allow-anonymous-writes``): every page warns
``LANCE_CONSOLE_STORAGE``          JSON object: the default connection's non-secret storage
                                   options
``LANCE_CONSOLE_STORAGE_SECRETS``  JSON object: secret storage option -> the environment
                                   variable holding its value (values never in JSON or argv):
                                   the variable the user named (``KEY=env:NAME``), or one the
                                   launcher set for a secret typed as a value
``LANCE_CONSOLE_STORAGE_SECRET_n`` a secret storage option typed as a value (``KEY=VALUE``)
``LANCE_CONSOLE_API_KEY``          the REST API key of the default connection ...
``LANCE_CONSOLE_API_KEY_ENV``      ... or the name of the variable that holds it
``LANCE_CONSOLE_HOST``             the address the console listens on (``--host``): an exposed
                                   console without sign-in opens no target typed in the
                                   "Connect to…" dialog
``LANCE_CONSOLE_ALLOW_TARGETS``    JSON list: the ``--allow-target`` patterns, the only targets
                                   typed in the dialog that may be opened
                                   (``backend.config.targets``)
``LANCE_CONSOLE_RAY_ADDRESS``      the Ray cluster (``--ray-address``) the Ray executor
                                   (``backend.services.ray_executor``) joins when a job or a
                                   page gives no address; unset: a local Ray
=================================  ================================================================

Policy: :func:`is_loopback` (an address only this machine reaches), :func:`sign_in_configured`
(a complete ``[auth]`` section in ``.streamlit/secrets.toml``, :func:`auth_settings`),
:func:`launch_read_only`, :func:`exposed` (the address beyond loopback the console listens on).
"""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from backend.config.auth_settings import AuthSettings, check_auth
from backend.spec.fields import is_texts
from backend.text import is_digits

TARGET_ENV = "LANCE_CONSOLE_TARGET"
READ_ONLY_ENV = "LANCE_CONSOLE_READ_ONLY"
READ_ONLY_REASON_ENV = "LANCE_CONSOLE_READ_ONLY_REASON"
ANONYMOUS_WRITES_ENV = "LANCE_CONSOLE_ANONYMOUS_WRITES"
STORAGE_ENV = "LANCE_CONSOLE_STORAGE"
STORAGE_SECRETS_ENV = "LANCE_CONSOLE_STORAGE_SECRETS"
API_KEY_ENV = "LANCE_CONSOLE_API_KEY"
API_KEY_ENV_NAME = "LANCE_CONSOLE_API_KEY_ENV"
STORAGE_SECRET_VAR = "LANCE_CONSOLE_STORAGE_SECRET_{}"
HOST_ENV = "LANCE_CONSOLE_HOST"
ALLOW_TARGETS_ENV = "LANCE_CONSOLE_ALLOW_TARGETS"
RAY_ADDRESS_ENV = "LANCE_CONSOLE_RAY_ADDRESS"
LOOPBACK = "127.0.0.1"
APP_DIR = Path(__file__).resolve().parents[2] / "app"  # the folder of app/main.py
_FALSE = ("", "0", "false", "no", "off")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (``127.x``, ``::1``,
    ``localhost``)."""
    text = host.strip().strip("[]").lower()
    if text == "localhost" or text.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(text).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def secrets_files(cwd: Path | None = None, script_dir: Path | None = None) -> list[Path]:
    """Where Streamlit reads ``secrets.toml``, in its order (a later file's top-level tables
    replace an earlier one's): the user's ``~/.streamlit/``, the working directory's
    ``.streamlit/`` (the console runs in the launcher's directory) and the ``.streamlit/``
    next to the app's script (``script_dir``, default :data:`APP_DIR`)."""
    files = [
        Path.home() / ".streamlit" / "secrets.toml",
        (cwd or Path.cwd()) / ".streamlit" / "secrets.toml",
        (script_dir or APP_DIR) / ".streamlit" / "secrets.toml",
    ]
    return list(dict.fromkeys(files))  # the home folder as working directory: once


def auth_settings(paths: Iterable[Path] | None = None) -> AuthSettings:
    """The sign-in settings of the secrets files Streamlit will read (:func:`secrets_files`):
    the ``[auth]`` table of the last file that has one (Streamlit merges top-level tables
    file by file), checked by :func:`backend.config.auth_settings.check_auth`. A file that is
    not valid TOML makes the settings invalid: Streamlit would ignore every secret then, and
    sign-in would be off without a word."""
    from backend.config.toml_files import TomlFileError, read_toml

    files = list(secrets_files() if paths is None else paths)
    section: Any = None
    source = " or ".join(str(p) for p in files) or "secrets.toml"
    for path in files:
        try:
            doc = read_toml(path)
        except FileNotFoundError:
            continue
        except TomlFileError as exc:
            problem = f"{path} could not be read as TOML ({exc})"
            return AuthSettings(source=str(path), present=True, problems=(problem,))
        if "auth" in doc:
            section, source = doc["auth"], str(path)
    return check_auth(section, source=source)


def sign_in_configured(paths: Iterable[Path] | None = None) -> bool:
    """Whether sign-in is on: a complete ``[auth]`` table in the secrets files Streamlit reads
    (:func:`auth_settings`)."""
    return auth_settings(paths).enabled


def _flag(value: str | None) -> bool:
    return value is not None and value.strip().lower() not in _FALSE


def launch_read_only(env: Mapping[str, str] | None = None) -> str | None:
    """Why this server is read-only for its whole life, or ``None`` when it is not."""
    env = os.environ if env is None else env
    if not _flag(env.get(READ_ONLY_ENV)):
        return None
    return env.get(READ_ONLY_REASON_ENV) or f"{READ_ONLY_ENV} is set"


def anonymous_writes(env: Mapping[str, str] | None = None) -> str | None:
    """The address on which this exposed server accepts writes without sign-in, else ``None``."""
    env = os.environ if env is None else env
    return env.get(ANONYMOUS_WRITES_ENV) or None


def exposed(env: Mapping[str, str] | None = None) -> str | None:
    """The address beyond loopback this server listens on (the launcher's ``--host``,
    :data:`HOST_ENV`), else ``None``; accepting anonymous writes implies it."""
    env = os.environ if env is None else env
    found = env.get(HOST_ENV) or env.get(ANONYMOUS_WRITES_ENV) or None
    return None if found is None or is_loopback(found) else found


def launch_storage(env: Mapping[str, str] | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """``(non-secret storage options, secret option -> environment variable)`` given by the
    launcher (``--storage``); malformed JSON gives nothing."""
    env = os.environ if env is None else env

    def table(name: str) -> dict[str, str]:
        try:
            data = json.loads(env.get(name) or "{}")
        except ValueError:
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    return table(STORAGE_ENV), table(STORAGE_SECRETS_ENV)


def user_named(variable: str) -> bool:
    """Whether ``variable`` is one the user named (``--storage KEY=env:NAME``), not one the
    launcher set for a secret typed as a value (:data:`STORAGE_SECRET_VAR`)."""
    prefix = STORAGE_SECRET_VAR.split("{", 1)[0]
    rest = variable.removeprefix(prefix)
    return not (rest != variable and is_digits(rest))


def launch_api_key_env(env: Mapping[str, str] | None = None) -> str | None:
    """The environment variable holding the default connection's API key, if any."""
    env = os.environ if env is None else env
    if env.get(API_KEY_ENV_NAME):
        return env[API_KEY_ENV_NAME]
    return API_KEY_ENV if env.get(API_KEY_ENV) else None


def targets_env(patterns: Iterable[str], host: str) -> dict[str, str]:
    """The variables that tell the console where it listens (:data:`HOST_ENV`) and which ad-hoc
    targets it may open (:data:`ALLOW_TARGETS_ENV`, ``--allow-target``); both always set, so
    that nothing is inherited from the launcher's own environment."""
    return {HOST_ENV: host, ALLOW_TARGETS_ENV: json.dumps([str(p) for p in patterns])}


def launch_host(env: Mapping[str, str] | None = None) -> str | None:
    """The address the launcher made the console listen on (``None``: not started by it)."""
    env = os.environ if env is None else env
    return env.get(HOST_ENV) or None


def launch_allow_targets(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The ``--allow-target`` patterns (none: no allowlist at launch). A malformed value allows
    nothing: ``("",)`` matches no target, so an allowlist the console cannot read fails closed."""
    env = os.environ if env is None else env
    raw = env.get(ALLOW_TARGETS_ENV)
    if not raw:
        return ()
    try:
        data = json.loads(raw)
    except ValueError:
        return ("",)
    if not is_texts(data):
        return ("",)
    return tuple(data)


def launch_ray_address(env: Mapping[str, str] | None = None) -> str | None:
    """The Ray cluster the launcher named (``--ray-address``), else ``None`` (a local Ray)."""
    env = os.environ if env is None else env
    return (env.get(RAY_ADDRESS_ENV) or "").strip() or None
