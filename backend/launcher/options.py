"""The command-line options the launcher (``lance-console``) and ``lance-console maintain``
share: the options that reach a target's data (:func:`add_access_options`), ``--storage``
parsed with its secrets kept out of sight (:func:`parse_storage`), the check of an object-store
target against them (:func:`storage_problem`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from lance_namespace.errors import LanceNamespaceError

from backend.config import launch
from backend.redaction import is_secret_name, mask_value, register_secret
from backend.rules.connect_options import storage_option_problems

ENV_PREFIX = "env:"  # --storage KEY=env:NAME reads the value from the variable NAME


def add_access_options(parser: argparse.ArgumentParser) -> None:
    """The options that reach a target's data: storage options and the REST API key's
    variable (the console's launch and ``lance-console maintain``)."""
    parser.add_argument(
        "--storage",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a storage option (repeatable); KEY=env:NAME reads the value from $NAME",
    )
    parser.add_argument(
        "--api-key-env",
        default=None,
        metavar="NAME",
        help=f"environment variable with the REST API key (default {launch.API_KEY_ENV})",
    )


# -- storage options and secrets ---------------------------------------------------------------
@dataclass
class StorageOptions:
    """``--storage`` parsed: what the console process gets, and what may be printed."""

    public: dict[str, str] = field(default_factory=dict)  # non-secret options
    secret_env: dict[str, str] = field(default_factory=dict)  # secret option -> variable name
    child_env: dict[str, str] = field(default_factory=dict)  # variables the launcher sets
    warnings: list[str] = field(default_factory=list)
    # every option with its value, secrets included: for the checks, never printed
    values: dict[str, str] = field(default_factory=dict, repr=False)

    def shown(self) -> str:
        """``key=value, ...`` with every secret masked (for the launcher's output)."""
        items = {**self.public, **{k: mask_value("x") for k in self.secret_env}}
        return ", ".join(f"{k}={v}" for k, v in sorted(items.items()))


def parse_storage(items: Sequence[str], env: Mapping[str, str] | None = None) -> StorageOptions:
    """``KEY=VALUE`` / ``KEY=env:NAME`` items; ``ValueError`` (readable, no value shown) on a
    malformed item or an unset variable. Secret options (``redaction.is_secret_name``) go to
    the console through environment variables only."""
    env = os.environ if env is None else env
    out = StorageOptions()
    values: dict[str, str] = {}  # every option with its value, for the one check below
    for n, item in enumerate(items):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--storage takes KEY=VALUE, not {key or item[:20]!r}")
        secret = is_secret_name(key)
        if value.startswith(ENV_PREFIX):
            var = value[len(ENV_PREFIX) :]
            if not env.get(var):
                raise ValueError(f"--storage {key}: the environment variable {var} is not set")
            values[key] = env[var]
            if secret:
                out.secret_env[key] = var
            else:
                out.public[key] = env[var]
            continue
        values[key] = value
        if secret:
            var = launch.STORAGE_SECRET_VAR.format(n)
            out.secret_env[key] = var
            out.child_env[var] = value
            out.warnings.append(
                f"--storage {key}: a secret typed on the command line is visible to other "
                f"users of this machine (ps); use {key}=env:NAME instead"
            )
        else:
            out.public[key] = value
    problems = storage_option_problems(values)
    if problems:
        raise ValueError("; ".join(problems))
    for key in out.secret_env:  # no text this process prints shows them (redact_text)
        register_secret(values[key])
    out.values = values
    return out


def storage_problem(target: str | None, storage: StorageOptions) -> str | None:
    """Why the console could not open the object-store ``target`` with these options (and the
    environment lance reads), in the words the console's page would use
    (``backend.local.target.check_object_store``); ``None``: nothing known against it."""
    if not target:
        return None
    # The local backend loads lance: imported only when there is a target to check.
    from backend.local.target import check_object_store

    try:
        check_object_store(target, storage.values)
    except LanceNamespaceError as exc:
        return str(exc)
    return None
