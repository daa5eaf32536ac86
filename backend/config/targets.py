"""Which targets a session may open: the launch target and saved connections are configuration;
a folder, bucket or URL typed in the "Connect to…" dialog (an *ad-hoc* target) is not.

The rule, in one place (:func:`denial`):

* the launch target (``source`` ``default`` / ``env``) and saved connections (``config``,
  ``secrets``) are always allowed: an operator configured them;
* an ad-hoc target (``source`` ``session``) is refused on a console exposed without sign-in
  (``exposed``: the address it listens on), refused to every role but ``admin``, and, when the
  console has an allowlist (``lance-console --allow-target PATTERN``, ``allow_targets`` in the
  connections file), refused unless its normal form matches one of the patterns.

Normal forms (:func:`normal_form`), what the patterns are matched against:

* a folder (a path, ``~``, ``file://``): its real path (symlinks resolved by the caller's
  ``realpath``), e.g. ``/srv/lance/sales``;
* an object store: ``scheme://bucket/prefix`` with ``s3a`` as ``s3`` and ``gcs`` as ``gs``, no
  repeated nor trailing ``/``;
* a REST server: ``http(s)://host[:port]/path``, scheme and host in lower case, the default
  port and a trailing ``/`` dropped.

A ``.`` or ``..`` segment in a URI or URL is refused (object stores take it literally, servers
collapse it: a pattern could not say which). Patterns are ``fnmatch`` patterns, case-sensitive,
where ``*`` also crosses ``/``; a pattern ``P`` matches a target ``T`` when it matches ``T`` or
``T/`` (``/srv/lance/*`` allows ``/srv/lance`` itself).

:func:`names_host_explicitly` is the REST client's exception for link-local and cloud-metadata
addresses (``connect_options.address_problem``): only a pattern whose host is written out,
without a wildcard, lets the client connect there.

Pure: the caller passes ``realpath`` (``os.path.realpath`` after ``expanduser``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from fnmatch import fnmatchcase
from urllib.parse import unquote, urlsplit

from lance_namespace.errors import InvalidInputError

from backend import access

# Where a connection comes from (``ConnectionSpec.source``): configured by an operator, or
# typed by a visitor in the dialog.
CONFIGURED_SOURCES = frozenset({"default", "env", "config", "secrets"})
AD_HOC = "session"
_STORE_ALIASES = {"s3a": "s3", "gcs": "gs"}
_STORE_SCHEMES = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "memory"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_WILDCARDS = frozenset("*?[")


def _no_dot_segments(path: str, raw: str) -> None:
    if any(seg in (".", "..") for seg in path.split("/")):
        raise InvalidInputError(f"{raw} has a '.' or '..' segment: write the path out in full")


def normal_form(target: str, *, realpath: Callable[[str], str]) -> str:
    """The form of ``target`` the allowlist patterns are matched against (see the module
    docstring); ``InvalidInputError`` for a form no pattern could judge."""
    raw = str(target).strip()
    if not raw:
        raise InvalidInputError("no target given")
    parts = urlsplit(raw)
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        host = (parts.hostname or "").rstrip(".")
        try:
            port = parts.port
        except ValueError as exc:
            raise InvalidInputError(f"{raw}: {exc}") from None
        if not host:
            raise InvalidInputError(f"{raw} has no host")
        _no_dot_segments(unquote(parts.path), raw)
        shown = f"[{host}]" if ":" in host else host
        if port is not None and port != _DEFAULT_PORTS[scheme]:
            shown += f":{port}"
        return f"{scheme}://{shown}{parts.path.rstrip('/')}"
    if scheme in _STORE_SCHEMES:
        rest = raw.split("://", 1)[1] if "://" in raw else raw.split(":", 1)[1]
        _no_dot_segments(rest, raw)
        kept = "/".join(seg for seg in rest.split("/") if seg)
        return f"{_STORE_ALIASES.get(scheme, scheme)}://{kept}"
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise InvalidInputError(f"file URIs with a host are not supported: {raw}")
        return realpath(unquote(parts.path))
    if scheme and len(scheme) > 1:
        raise InvalidInputError(f"unsupported target scheme {scheme!r}: {raw}")
    return realpath(raw)


def matches(normal: str, patterns: Iterable[str]) -> bool:
    """Whether the normal form ``normal`` matches one of ``patterns``."""
    return any(fnmatchcase(normal, p) or fnmatchcase(normal + "/", p) for p in patterns)


def allowlist_denial(normal: str, patterns: Sequence[str]) -> str | None:
    """Why ``normal`` is outside the allowlist ``patterns`` (``None``: no allowlist, or it
    matches)."""
    if not patterns or matches(normal, patterns):
        return None
    return (
        f"{normal} is not among the targets this console may open "
        f"(allowed: {', '.join(patterns)}; lance-console --allow-target)"
    )


def ad_hoc_denial(role: str | None, *, exposed: str | None) -> str | None:
    """Why this session may not open a target typed in the dialog at all (``None``: it may,
    within the allowlist): off on a console exposed without sign-in (``exposed``: its
    address); an admin's right otherwise."""
    if exposed:
        return (
            f"this console listens on {exposed} without sign-in, so only its launch target and "
            "saved connections can be opened"
        )
    refused = access.denial(role, "open_target")
    return f"{refused}; pick a saved connection" if refused else None


def denial(
    target: str,
    *,
    source: str,
    role: str | None,
    exposed: str | None,
    patterns: Sequence[str],
    realpath: Callable[[str], str],
) -> str | None:
    """Why a session with ``role`` may not open ``target`` (from ``source``, see
    :data:`CONFIGURED_SOURCES`); ``None``: it may. The one rule of the dialog, the pick of a
    connection and every ``backend.connect`` of user input."""
    if source in CONFIGURED_SOURCES:
        return None
    refused = ad_hoc_denial(role, exposed=exposed)
    if refused:
        return refused
    try:
        normal = normal_form(target, realpath=realpath)
    except InvalidInputError as exc:
        return str(exc)
    return allowlist_denial(normal, patterns)


def _host_of_pattern(pattern: str) -> str | None:
    parts = pattern.split("://", 1)
    if len(parts) != 2 or parts[0].lower() not in _DEFAULT_PORTS:
        return None
    return parts[1].split("/", 1)[0]


def names_host_explicitly(normal: str, patterns: Iterable[str]) -> bool:
    """Whether a pattern matching the REST URL ``normal`` writes its host (and port) out in
    full, without a wildcard: the only way a link-local or metadata address is allowed."""
    for pattern in patterns:
        host = _host_of_pattern(pattern)
        if host is None or _WILDCARDS & set(host):
            continue
        if matches(normal, [pattern]):
            return True
    return False


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be an allowlist entry (``None``: it can)."""
    text = str(pattern)
    if not text.strip() or text != text.strip():
        return f"an allowed target must be a non-empty pattern without surrounding spaces: {text!r}"
    if any(ord(c) < 32 for c in text):
        return "an allowed target contains a control character"
    return None
