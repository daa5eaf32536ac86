"""Sign-in settings: the one check of the ``[auth]`` section of Streamlit's ``secrets.toml``.

:func:`check_auth` is pure (it reads nothing): the launcher gives it the ``[auth]`` table of
the secrets files Streamlit will read, the console's page gives it ``st.secrets["auth"]``. Its
answer is one of

* **off**: no ``[auth]`` section at all; the console is one person's tool;
* **on**: a complete section; ``providers`` name each OpenID Connect provider (the host of its
  ``server_metadata_url``, never a secret);
* **invalid**: a section is present but ``st.login`` could not work with it (a key missing or
  empty, a ``cookie_secret`` shorter than :data:`MIN_COOKIE_SECRET`, a ``redirect_uri`` or
  ``server_metadata_url`` that is not an http(s) URL, a named provider ``[auth.NAME]`` missing
  a key, ...). Sign-in then fails closed: the launcher refuses to start, the page lets nobody in.

What ``st.login`` needs (Streamlit's ``auth_util.validate_auth_credentials``): ``redirect_uri``
and ``cookie_secret`` in ``[auth]``; for each provider ``client_id``, ``client_secret`` and
``server_metadata_url``, either directly in ``[auth]`` (the default provider, ``st.login()``)
or in a table ``[auth.NAME]`` (``st.login("NAME")``; no ``_`` in NAME).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeGuard
from urllib.parse import urlparse

DEFAULT_PROVIDER = "default"
# Keys of [auth] itself, and of every provider.
COMMON_KEYS = ("redirect_uri", "cookie_secret")
PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")
# Tables inside [auth] that are the default provider's options, not named providers.
_PROVIDER_OPTION_TABLES = frozenset({"client_kwargs"})
# Streamlit signs its cookies with cookie_secret; a short one can be guessed. 32 characters is
# what ``python -c "import secrets; print(secrets.token_hex(16))"`` prints.
MIN_COOKIE_SECRET = 32


@dataclasses.dataclass(frozen=True)
class Provider:
    name: str  # "default" (st.login()) or the NAME of [auth.NAME] (st.login(NAME))
    host: str  # the host of its server_metadata_url

    @property
    def is_default(self) -> bool:
        return self.name == DEFAULT_PROVIDER


@dataclasses.dataclass(frozen=True)
class AuthSettings:
    """What an ``[auth]`` section configures (see the module docstring)."""

    source: str  # where the section was read from (shown in messages)
    present: bool = False  # an [auth] section exists
    providers: tuple[Provider, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def enabled(self) -> bool:
        """Sign-in is on: a section with no problem."""
        return self.present and not self.problems

    @property
    def invalid(self) -> bool:
        """A section is present but unusable: nobody may be let in."""
        return self.present and bool(self.problems)

    @property
    def provider_hosts(self) -> str:
        return ", ".join(dict.fromkeys(p.host for p in self.providers))

    def reason(self) -> str:
        """Why sign-in is on or off, in one line without any secret."""
        if self.invalid:
            return f"the [auth] section in {self.source} is incomplete: " + "; ".join(self.problems)
        if not self.present:
            return f"no [auth] section in {self.source}"
        return f"provider {self.provider_hosts}, from {self.source}"

    def summary(self) -> str:
        """``sign-in: on (provider id.example.com, from ...)``, ``sign-in: off (...)`` or
        ``sign-in: invalid (...)``."""
        word = "invalid" if self.invalid else "on" if self.enabled else "off"
        return f"sign-in: {word} ({self.reason()})"


def _is_set(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value.strip())


def _http_url(value: str) -> bool:
    parsed = urlparse(value.strip())
    return parsed.scheme in ("http", "https") and bool(parsed.netloc)


def _provider_problems(where: str, table: Mapping[str, Any]) -> list[str]:
    problems = []
    missing = [k for k in PROVIDER_KEYS if not _is_set(table.get(k))]
    if missing:
        problems.append(f"{where} is missing {', '.join(missing)}")
    url = table.get("server_metadata_url")
    if _is_set(url) and not _http_url(url):
        problems.append(f"{where} server_metadata_url is not an http(s) URL")
    return problems


def check_auth(section: Any, *, source: str = "secrets.toml") -> AuthSettings:
    """The sign-in settings an ``[auth]`` table configures (``None``: no section). Pure."""
    if section is None:
        return AuthSettings(source=source)
    if not isinstance(section, Mapping):
        return AuthSettings(source=source, present=True, problems=("[auth] is not a table",))
    problems: list[str] = []
    missing = [k for k in COMMON_KEYS if not _is_set(section.get(k))]
    if missing:
        problems.append(f"[auth] is missing {', '.join(missing)}")
    secret = section.get("cookie_secret")
    if _is_set(secret) and len(secret.strip()) < MIN_COOKIE_SECRET:
        problems.append(
            f"[auth] cookie_secret is shorter than {MIN_COOKIE_SECRET} characters "
            '(python -c "import secrets; print(secrets.token_hex(32))" makes one)'
        )
    redirect = section.get("redirect_uri")
    if _is_set(redirect):
        if not _http_url(redirect):
            problems.append("[auth] redirect_uri is not an http(s) URL")
        elif not redirect.strip().endswith("/oauth2callback"):
            problems.append("[auth] redirect_uri does not end with /oauth2callback")

    providers: list[Provider] = []
    named = {
        str(name): table
        for name, table in section.items()
        if isinstance(table, Mapping) and name not in _PROVIDER_OPTION_TABLES
    }
    default_keys = [k for k in PROVIDER_KEYS if k in section]
    if default_keys or not named:  # the default provider, or nothing at all
        found = _provider_problems("[auth]", section)
        problems += found
        if not found:
            providers.append(Provider(DEFAULT_PROVIDER, _host(section)))
    for name, table in named.items():
        where = f"[auth.{name}]"
        found = _provider_problems(where, table)
        if "_" in name:
            found.append(f"{where}: a provider name may not contain '_'")
        problems += found
        if not found:
            providers.append(Provider(name, _host(table)))
    return AuthSettings(
        source=source, present=True, providers=tuple(providers), problems=tuple(problems)
    )


def _host(table: Mapping[str, Any]) -> str:
    return urlparse(str(table.get("server_metadata_url")).strip()).hostname or "?"
