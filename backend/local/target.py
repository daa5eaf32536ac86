"""Where a local namespace lives: its root URI, the path pylance gets, the local directory.

A path (relative, ``~``) or ``file://`` URI becomes an absolute ``file://`` URI; pylance gets
the plain path, which it encodes itself. ``memory://`` and object-store URIs (``s3://``,
``gs://``, ``az://``) pass through without a trailing slash. ``memory://`` data only exists
inside one lance Session: one is shared per root in this process.

:func:`check_object_store` refuses an object-store root whose storage options (with the
environment lance reads) certainly cannot work, naming what to set, before any request is made;
:func:`open_failure` turns what lance says when it cannot open such a root (``ResolveRegion {
... dns error }``) into the same kind of message. :func:`check_endpoint_reachable` finds an S3
endpoint that refuses connections, or whose host name does not resolve, with one connection
attempt: lance's client takes seconds of retries to say the same.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse, urlsplit

import lance
from lance_namespace.errors import LanceNamespaceError

from backend.rules.connect_options import (
    object_store_kind,
    storage_endpoint,
    storage_setup_problems,
)

from ..errors import invalid

OBJECT_STORE_SCHEMES = ("s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "memory")

_SESSIONS: dict[str, lance.Session] = {}
_SESSIONS_GUARD = threading.Lock()


def memory_session(root: str) -> lance.Session:
    """The process-wide lance Session of a ``memory://`` root."""
    with _SESSIONS_GUARD:
        if root not in _SESSIONS:
            _SESSIONS[root] = lance.Session()
        return _SESSIONS[root]


def normalise_target(target: str | os.PathLike[str]) -> tuple[str, str, Path | None]:
    """``(root URI, root for DirectoryNamespace, local directory or None)`` for a target."""
    raw = os.fspath(target).strip()
    if not raw:
        raise invalid("the local backend needs a directory or URI")
    if "\x00" in raw or any(ord(c) < 32 for c in raw):
        raise invalid("the namespace path contains a control character")
    parsed = urlparse(raw)
    scheme = parsed.scheme.lower()
    is_drive = len(scheme) == 1 and os.name == "nt"
    if scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise invalid(f"file URIs with a host are not supported: {raw}")
        path = Path(unquote(parsed.path))
    elif scheme == "" or is_drive:
        path = Path(raw).expanduser()
    elif scheme in OBJECT_STORE_SCHEMES:
        root = raw.rstrip("/")
        if root.endswith(":/"):  # "memory://" keeps its double slash
            root += "/"
        return root, root, None
    else:
        raise invalid(
            f"unsupported namespace URI scheme {scheme!r}: use a directory, file://, "
            "memory://, s3://, gs:// or az://"
        )
    path = Path(os.path.abspath(path))
    if path.exists() and not path.is_dir():
        raise invalid(f"not a directory: {path}")
    return path.as_uri(), str(path), path


def check_object_store(root: str, storage_options: Mapping[str, Any]) -> None:
    """``InvalidInputError`` naming what to set when the options (and the environment) of an
    object-store ``root`` certainly cannot open it; nothing for other roots."""
    if object_store_kind(root) is None:
        return
    problems = storage_setup_problems(root, storage_options)
    if problems:
        raise invalid(
            f"Cannot open {root}: "
            + "; ".join(problems)
            + " (storage options, or the environment variables lance reads)."
        )


def open_failure(
    exc: BaseException | str, root: str, storage_options: Mapping[str, Any] | None = None
) -> LanceNamespaceError | None:
    """What lance's failure (or its text) to open the object-store ``root`` with
    ``storage_options`` means, naming what to set or the endpoint that could not be reached
    (``None``: not an object-store root)."""
    if object_store_kind(root) is None:
        return None
    from .object_store import store_error

    return store_error(exc, root, "open the namespace", storage_options)


# How long the endpoint check waits for a connection: a refusal or a failed name lookup answers
# at once; no answer within this time is left to lance's client, which decides with its own.
ENDPOINT_PROBE_SECONDS = 1.0
_PROXY_ENV = ("http_proxy", "https_proxy", "all_proxy")


def check_endpoint_reachable(
    root: str, storage_options: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> None:
    """``NamespaceConnectionError`` naming the S3 endpoint set for ``root`` (a storage option,
    else the environment) when it refuses a TCP connection or its host name does not resolve:
    the error lance's failure to open the root gives (:func:`open_failure`), found by one
    connection attempt instead of lance's client's retries. Nothing is checked for other roots,
    without an explicit endpoint, or when a proxy is set (the client connects through it)."""
    env = os.environ if env is None else env
    endpoint = storage_endpoint(root, storage_options, env=env)
    if not endpoint:
        return
    if any("proxy" in str(key).lower() for key in storage_options) or any(
        env.get(name) or env.get(name.upper()) for name in _PROXY_ENV
    ):
        return
    parts = urlsplit(endpoint if "://" in endpoint else f"//{endpoint}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        return  # a port that is no number: the client says what is wrong with it
    if not host or not port:
        return
    try:
        with socket.create_connection((host, port), timeout=ENDPOINT_PROBE_SECONDS):
            return
    except socket.gaierror:
        said = "dns error: the host name does not resolve"
    except ConnectionRefusedError:
        said = "tcp connect error: connection refused"
    except OSError:
        return  # no answer in time, or a network error the client may get past
    failure = open_failure(said, root, storage_options)
    if failure is not None:
        raise failure
