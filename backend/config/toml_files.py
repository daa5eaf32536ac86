"""Reading the console's TOML files (saved connections, the allowlist, secrets.toml's sign-in
settings): one reader, one error for every way a file there cannot be read."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any


class TomlFileError(ValueError):
    """A settings file that exists and cannot be read: the reason in words (its message)."""


def read_toml(path: Path | str) -> dict[str, Any]:
    """The TOML document at ``path``. ``FileNotFoundError`` when there is none;
    :class:`TomlFileError` when it cannot be read (permissions, a folder), is not UTF-8 (TOML
    files are) or is not TOML, its message saying which."""
    try:
        with Path(path).open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise
    except UnicodeDecodeError as exc:
        raise TomlFileError(f"it is not UTF-8 text (byte {exc.start + 1}), as TOML is") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise TomlFileError(str(exc)) from None
