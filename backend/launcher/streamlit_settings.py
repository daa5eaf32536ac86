"""The Streamlit settings the launcher starts the console with, wherever it is started.

Streamlit reads ``.streamlit/config.toml`` from the *working directory* (and ``~/.streamlit/``),
so a console started from another folder (one holding its own ``.streamlit/secrets.toml``, say)
would run without the project's settings: default theme, the "Deploy" button, a 200 MB upload
cap, Streamlit's error details. The launcher therefore passes every setting of the project's
``.streamlit/config.toml`` (:data:`PROJECT_CONFIG`, the one place they are written) as
``--section.option value`` flags of ``streamlit run``, which outrank every config file and
``STREAMLIT_*`` variable, plus the settings that must always hold (:func:`streamlit_settings`):

* ``server.headless`` true: a non-headless first run asks for an e-mail address on stdin;
* ``browser.gatherUsageStats`` false;
* ``client.toolbarMode`` ``minimal``: no "Deploy" button or developer menu;
* ``server.maxUploadSize``: the import cap the page states
  (``backend.services.imports.max_import_bytes``, in Streamlit's MB of 2**20 bytes, rounded up);
* ``browser.serverAddress`` ``localhost`` on an any-address bind (``--host 0.0.0.0`` / ``::``),
  unless ``STREAMLIT_BROWSER_SERVER_ADDRESS`` names the address users reach: without a set
  address, Streamlit asks ``checkip.amazonaws.com`` for the machine's external address at
  start-up, to print an "External URL" (``streamlit.web.bootstrap._print_url``).

Settings the project does not set (``server.sslCertFile``, ``server.baseUrlPath``, ...) still
come from the config files Streamlit reads, as usual. Nothing here imports streamlit.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from backend.config.toml_files import TomlFileError, read_toml

ANY_ADDRESS = ("0.0.0.0", "::", "")  # binds that listen on every interface
SERVER_ADDRESS_ENV = "STREAMLIT_BROWSER_SERVER_ADDRESS"
MB = 1 << 20  # server.maxUploadSize counts megabytes of 2**20 bytes


def project_config_path() -> Path:
    import backend

    return Path(backend.__file__).resolve().parent.parent / ".streamlit" / "config.toml"


PROJECT_CONFIG = project_config_path()


class SettingsFileError(ValueError):
    """The project's ``config.toml`` is missing or cannot be read: which file, and why."""


def project_settings(path: Path | None = None) -> dict[str, Any]:
    """Every setting of the project's ``config.toml`` as ``{"section.option": value}`` (nested
    tables such as ``[theme.sidebar]`` as ``theme.sidebar.option``). :class:`SettingsFileError`
    when the file is missing or cannot be read (read as every settings file of the console is,
    ``backend.config.toml_files.read_toml``): the console is not started without its
    settings."""
    path = path or PROJECT_CONFIG
    try:
        doc = read_toml(path)
    except FileNotFoundError:
        raise SettingsFileError(f"{path} is missing: the installation is incomplete") from None
    except TomlFileError as exc:
        raise SettingsFileError(f"{path} cannot be read: {exc}") from None
    out: dict[str, Any] = {}

    def walk(prefix: str, table: Mapping[str, Any]) -> None:
        for key, value in table.items():
            name = f"{prefix}.{key}" if prefix else key
            if isinstance(value, Mapping):
                walk(name, value)
            else:
                out[name] = value

    walk("", doc)
    return out


def upload_size_mb() -> int:
    """``server.maxUploadSize`` for the import cap the page states (rounded up to whole MB, so
    the server never refuses a file the page accepts); the cap's own error for an invalid
    ``LANCE_CONSOLE_MAX_IMPORT_BYTES``."""
    from backend.services.imports import max_import_bytes

    return -(-max_import_bytes() // MB)


def streamlit_settings(
    host: str, *, path: Path | None = None, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The settings of the console's ``streamlit run``: the project's ``config.toml``, then the
    ones that always hold (see the module docstring)."""
    env = os.environ if env is None else env
    settings = project_settings(path)
    settings.update(
        {
            "server.headless": True,
            "browser.gatherUsageStats": False,
            "client.toolbarMode": "minimal",
            "server.maxUploadSize": upload_size_mb(),
        }
    )
    if host in ANY_ADDRESS and not env.get(SERVER_ADDRESS_ENV):
        settings["browser.serverAddress"] = "localhost"
    return settings


def as_flags(settings: Mapping[str, Any]) -> list[str]:
    """``--section.option value`` for each setting (a list: the flag once per item)."""
    flags: list[str] = []
    for name, value in settings.items():
        for item in value if isinstance(value, list) else [value]:
            text = ("true" if item else "false") if isinstance(item, bool) else str(item)
            flags += [f"--{name}", text]
    return flags
