"""Where a local namespace lives: its root URI, the path pylance gets, the local directory.

A path (relative, ``~``) or ``file://`` URI becomes an absolute ``file://`` URI; pylance gets
the plain path, which it encodes itself. ``memory://`` and object-store URIs (``s3://``,
``gs://``, ``az://``) pass through without a trailing slash. ``memory://`` data only exists
inside one lance Session: one is shared per root in this process.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from urllib.parse import unquote, urlparse

import lance

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


__all__ = ["OBJECT_STORE_SCHEMES", "memory_session", "normalise_target"]
