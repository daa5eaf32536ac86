"""What the batch protocol needs from a ``LocalNamespace``: its root, files and catalog."""

from __future__ import annotations

import dataclasses
import functools
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlparse

from lance.namespace import DirectoryNamespace
from lance_namespace.errors import ErrorCode, LanceNamespaceError

from backend.rules import ids

from ...errors import make
from ...locations import RESERVED_MARKER, URI_SAFE, path_uri, to_local_path
from ...rules.location_rules import CATALOG_DIR
from .. import txn_store

try:  # POSIX only
    import fcntl  # noqa: F401

    HAS_FLOCK = True
except ImportError:  # pragma: no cover - Windows
    HAS_FLOCK = False

DELIMITER = ids.CATALOG_DELIMITER  # pylance's object-id delimiter in __manifest
# The marker pylance's DeclareTable leaves in a declared table's directory, and its content
# (file and object-store roots alike).
RESERVED_FILE = RESERVED_MARKER
RESERVED_BYTES = b"reserved"


def error(
    code: ErrorCode, message: str, *, index: int | None = None, detail: str | None = None
) -> LanceNamespaceError:
    """A namespace error naming the operation (0-based ``index``) it is about, if any."""
    err = make(code, message, detail=detail)
    err.operation_index = index  # type: ignore[attr-defined]
    return err


def unsupported(message: str) -> LanceNamespaceError:
    return error(ErrorCode.UNSUPPORTED, message)


def oid(table_id: Any) -> str:
    """The catalog's object id of an id (``backend.rules.ids.object_id``)."""
    return ids.object_id(table_id)


@dataclasses.dataclass
class Ctx:
    ns: Any
    directory: DirectoryNamespace
    root: str
    local_path: Path | None
    storage_options: dict[str, str]
    session: Any
    store: txn_store.TxnStore

    @functools.cached_property
    def root_uri(self) -> str:
        """The local root as a ``file://`` URI (local roots only)."""
        assert self.local_path is not None
        return path_uri(self.local_path)

    @property
    def is_file(self) -> bool:
        return self.local_path is not None

    @property
    def is_object_store(self) -> bool:
        """An ``s3://`` / ``gs://`` / ``az://`` root (neither a local path nor ``memory://``)."""
        return self.local_path is None and not self.root.startswith("memory:")

    @property
    def key(self) -> str:
        return f"file:{self.local_path}" if self.local_path is not None else f"mem:{self.root}"

    def path(self, rel: str) -> Path:
        assert self.local_path is not None
        return self.local_path / rel

    def manifest_uri(self) -> str:
        if self.local_path is not None:
            return str(self.local_path / CATALOG_DIR)
        return f"{self.root.rstrip('/')}/{CATALOG_DIR}"

    def table_path(self, location: str) -> Path:
        """The local directory of a catalog location (relative to the root, or absolute)."""
        assert self.local_path is not None
        if _plain_child(location):
            return self.local_path / location
        path = to_local_path(location, self.local_path)
        if path is None:
            raise unsupported(
                f"table location {location!r} is not on the local filesystem; batch commits "
                "on a local namespace only handle tables stored under file paths"
            )
        return path

    def table_uri(self, location: str) -> str:
        """The location as pylance's single-table operations report it."""
        if self.local_path is None:
            if "://" in location:
                return location
            return f"{self.root.rstrip('/')}/{location}"
        if _plain_child(location):
            return self.root_uri + "/" + quote(location, safe=URI_SAFE)
        return path_uri(self.table_path(location))


def _plain_child(location: str) -> bool:
    """A location that names a direct child of the root (the ones the namespace generates):
    no scheme, no separator, not ``.`` or ``..``."""
    return (
        bool(location)
        and "/" not in location
        and ":" not in location
        and location
        not in (
            ".",
            "..",
        )
    )


def context(ns: Any, *, catalog_only: bool = False) -> Ctx:
    """The protocol's view of a LocalNamespace; ``UnsupportedOperationError`` otherwise.

    ``catalog_only``: for operations that are one Lance commit of the catalog and need no
    lock or rename of ours (``catalog_ops``): object stores are accepted too."""
    directory = ns if isinstance(ns, DirectoryNamespace) else getattr(ns, "_inner", None)
    root = getattr(ns, "root", None)
    if not isinstance(directory, DirectoryNamespace) or not isinstance(root, str):
        raise unsupported(
            "batch commit needs a local namespace (backend.local.LocalNamespace): "
            f"{type(ns).__name__} has no DirectoryNamespace/root"
        )
    local_path = getattr(ns, "local_path", None)
    scheme = urlparse(root).scheme.lower()
    if local_path is None and scheme in ("", "file"):
        local_path = to_local_path(root, Path.cwd())
    if local_path is None and scheme != "memory" and not catalog_only:
        raise unsupported(
            f"batch commit is not supported on {scheme}:// namespaces: the all-or-none "
            "protocol needs a cross-process lock and atomic rename/link (put-if-absent) of "
            "files, which this object store does not offer to the console; use a file:// "
            "(local or mounted POSIX filesystem) or memory:// namespace"
        )
    if local_path is not None and not HAS_FLOCK:  # pragma: no cover - Windows
        raise unsupported("batch commit on local directories needs POSIX flock (fcntl)")
    so = dict(getattr(ns, "storage_options", None) or {})
    store = getattr(ns, "txn_store", None)
    if not isinstance(store, txn_store.TxnStore):
        store = txn_store.open_store(root, so)
    return Ctx(
        ns=ns,
        directory=directory,
        root=root,
        local_path=Path(os.path.abspath(local_path)) if local_path is not None else None,
        storage_options=so,
        session=getattr(ns, "_session", None),
        store=store,
    )
