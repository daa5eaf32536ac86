"""Lance Namespace Console operations module.

``connect(target, **options)`` returns a ``lance_namespace.LanceNamespace``:

* a filesystem path, ``file://`` URI or any URI pylance's ``DirectoryNamespace`` accepts
  (``memory://``, ``s3://`` with ``storage.*`` options) -> the local backend;
* an ``http://`` or ``https://`` URL -> the REST backend (our own httpx client).

This package never imports streamlit: notebooks, scripts, tests and the UI share it as is.
"""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("LANCE_LOG", "error")
os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")

from lance_namespace import LanceNamespace  # noqa: E402

from .capabilities import BackendCapabilities  # noqa: E402
from .errors import (  # noqa: E402
    NamespaceConnectionError,
    NamespaceTimeoutError,
    describe_error,
)


def is_rest_target(target: str) -> bool:
    return str(target).lower().startswith(("http://", "https://"))


def connect(target: str | os.PathLike[str], **options: Any) -> LanceNamespace:
    """Open a Lance Namespace.

    Options (all optional): ``api_key``, ``auth_token``, ``delimiter`` (default ``$``),
    ``headers`` (dict), ``timeout`` (seconds), ``max_retries``; for the local backend also
    ``storage_options`` (dict) or ``storage.<key>`` entries, passed to pylance.
    """
    target = os.fspath(target)
    if is_rest_target(target):
        from .rest import RestNamespaceClient

        return RestNamespaceClient(target, **options)
    from .local import LocalNamespace

    return LocalNamespace(target, **options)


def capabilities(ns: LanceNamespace) -> BackendCapabilities:
    """What a connected backend can do (honoured index parameters, progress events, ...)."""
    caps = getattr(ns, "capabilities", None)
    if callable(caps):
        return caps()
    return BackendCapabilities.unknown()


__all__ = [
    "BackendCapabilities",
    "LanceNamespace",
    "NamespaceConnectionError",
    "NamespaceTimeoutError",
    "capabilities",
    "connect",
    "describe_error",
    "is_rest_target",
]
