"""Locations on the local filesystem: URI to path, and what a request may point at.

Table locations and manifest paths arrive in requests (RegisterTable, CreateTableVersion,
DeclareTable, batch commits); they are untrusted. The rules:

* a table location is inside the namespace root, and is not the root, the catalog
  (``__manifest``), the console's own directory (``_console``), nor the directory of another
  table (or a directory inside or around one); a location being *registered* exists and holds
  a Lance dataset (``_versions``);
* a staged manifest is a regular file inside the table's own staging areas (the table
  directory, or the namespace's ``_staging`` directory), never outside the root, never a file
  of ``_versions`` itself, and not behind a symbolic link that leaves the root.

Paths are compared after ``realpath``: ``..``, symbolic links and doubled slashes cannot escape.
"""

from __future__ import annotations

import bisect
import os
import posixpath
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote, unquote, urlparse

URI_SAFE = "/$+':@&*=,;!~()"  # characters pylance leaves unencoded in file:// locations
CATALOG_DIR = "__manifest"
CONSOLE_DIR = "_console"
STAGING_DIR = "_staging"
RESERVED_DIRS = (CATALOG_DIR, CONSOLE_DIR, STAGING_DIR)


def to_local_path(location: str | os.PathLike[str] | None, root: Path | None = None) -> Path | None:
    """A ``file://`` URI or a path as a ``Path``; relative paths are taken from ``root``.
    ``None`` for other schemes (``s3://`` ...) or when a relative path has no root."""
    if location is None:
        return None
    if isinstance(location, Path):  # a path already: no URI to parse
        return location if location.is_absolute() else (root / location if root else None)
    text = os.fspath(location)
    if not text:
        return None
    parsed = urlparse(text)
    scheme = parsed.scheme.lower()
    if scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            return None
        return Path(unquote(parsed.path))
    if scheme and not (len(scheme) == 1 and os.name == "nt"):
        return None
    path = Path(text)
    if path.is_absolute():
        return path
    return root / path if root is not None else None


def path_uri(path: Path | str) -> str:
    """A local path as a ``file://`` URI, encoded the way pylance reports table locations
    (``$``, ``+``, ``:`` and friends stay; spaces, ``%``, ``#``, ``?`` and non-ASCII are
    percent-encoded)."""
    return "file://" + quote(os.path.abspath(path), safe=URI_SAFE)


def real(path: Path) -> Path:
    """``path`` with symbolic links, ``..`` and doubled separators resolved (need not exist)."""
    return Path(os.path.realpath(path))


def is_inside(path: Path, root: Path, *, strict: bool = False) -> bool:
    """Whether ``path`` is ``root`` or below it (``strict``: below it only), after ``realpath``."""
    p, r = real(path), real(root)
    if p == r:
        return not strict
    return r in p.parents


class TableDirs:
    """The resolved directories of a namespace's tables, for conflict checks that stay cheap
    when a batch declares thousands of tables into a namespace that holds thousands."""

    def __init__(self, dirs: Iterable[Path | str] = ()) -> None:
        self._set = {str(real(Path(d))) for d in dirs}
        self._sorted = sorted(self._set)

    def conflict(self, resolved: str | os.PathLike[str]) -> str | None:
        """How ``resolved`` (a real path) collides with a table directory, or ``None``."""
        text = os.fspath(resolved)
        if not self._set:
            return None
        if text in self._set:
            return "is the directory of another table"
        end = len(text)
        while (end := text.rfind("/", 0, end)) > 0:  # every ancestor, then "/"
            if text[:end] in self._set:
                return "is inside another table's directory"
        if text.startswith("/") and "/" in self._set:
            return "is inside another table's directory"
        prefix = text.rstrip("/") + "/"
        i = bisect.bisect_left(self._sorted, prefix)
        if i < len(self._sorted) and self._sorted[i].startswith(prefix):
            return "contains another table's directory"
        return None


def _resolved(path: Path, root: Path, root_real: Path) -> str:
    """``real(path)`` as a string; without walking every component when ``path`` is a plain
    child of ``root`` that is not a symbolic link (a new table directory: one ``lstat``).
    Strings, not ``pathlib``: a batch checks thousands of locations."""
    text = os.fspath(path)
    parent, name = os.path.split(text)
    if parent == os.fspath(root) and name not in ("", ".", "..") and not os.path.islink(text):
        return os.path.join(os.fspath(root_real), name)
    return os.path.realpath(text)


def location_problem(
    root: Path,
    location: str | Path | None,
    *,
    other_tables: TableDirs | Iterable[Path] = (),
    must_exist: bool = False,
    root_real: Path | None = None,
) -> str | None:
    """Why ``location`` cannot be a table's directory under ``root`` (``None``: it can).
    ``root_real``: ``real(root)`` when the caller already has it."""
    if not location or not str(location).strip():
        return "the table location is empty"
    shown = os.fspath(location)
    path = to_local_path(location, root)
    if path is None:
        return f"the table location {shown!r} is not a path on this filesystem"
    root_real = root_real or real(root)
    text = _resolved(path, root, root_real)
    base = str(root_real).rstrip("/") + "/"
    if text == str(root_real):
        return "the table location is the namespace root itself"
    if not text.startswith(base):
        return f"the table location {shown!r} is outside the namespace root"
    first = text[len(base) :].split("/", 1)[0]
    if first in RESERVED_DIRS:
        return f"the table location {shown!r} is inside the namespace's {first} directory"
    tables = other_tables if isinstance(other_tables, TableDirs) else TableDirs(other_tables)
    clash = tables.conflict(text)
    if clash:
        return f"the table location {shown!r} {clash}"
    if must_exist:
        resolved = Path(text)
        if not resolved.is_dir():
            return f"the table location {shown!r} does not exist"
        if not (resolved / "_versions").is_dir():
            return f"the table location {shown!r} holds no Lance dataset (no _versions)"
    return None


def manifest_problem(root: Path, table_dir: Path, manifest_path: str | None) -> str | None:
    """Why ``manifest_path`` cannot be a staged manifest of the table in ``table_dir``."""
    if not manifest_path or not str(manifest_path).strip():
        return "manifest_path is required"
    path = to_local_path(manifest_path)
    if path is None:
        # pylance reports object-store paths without the leading slash.
        path = Path("/" + str(manifest_path).lstrip("/"))
    if not path.is_absolute():
        path = Path("/" + str(path))
    resolved = real(path)
    areas = [real(table_dir), real(root / STAGING_DIR)]
    if not any(a in resolved.parents for a in areas):
        return (
            f"the staged manifest {manifest_path!r} is outside the table's staging areas "
            "(its table directory and the namespace's _staging directory)"
        )
    if resolved.parent == real(table_dir / "_versions"):
        return f"{manifest_path!r} is a published manifest of _versions, not a staged one"
    if path.is_symlink() or not resolved.is_file():
        return f"the staged manifest {manifest_path!r} is not a regular file"
    return None


def _split(uri: str) -> tuple[str, str, str]:
    """``(scheme, host, normalised path)`` of a URI or path; plain paths count as ``file``
    (object-store paths without a leading slash are absolute, as pylance reports them)."""
    parsed = urlparse(uri)
    scheme = parsed.scheme.lower()
    if scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt"):
        path = unquote(parsed.path) if scheme == "file" else uri
        return "file", "", posixpath.normpath("/" + path.lstrip("/"))
    return scheme, parsed.netloc, posixpath.normpath("/" + unquote(parsed.path).lstrip("/"))


# Directories inside a Lance dataset: a location there is a part of a table, not a table.
_DATASET_PARTS = frozenset({"_versions", "_transactions", "_deletions", "_indices", "data"})


def remote_location_problem(location: str | None) -> str | None:
    """The location rule for a table registered on a server whose files the console cannot see:
    a relative path below the namespace root, not the root, not the catalog, ``_console`` or
    ``_staging``, not a part of a dataset, with no ``..``. (Whether it exists, and whether it
    is another table's directory, need the server: see the REST client.)"""
    if location is None or not str(location).strip():
        return "the table location is empty"
    text = str(location)
    if urlparse(text).scheme or text.startswith(("/", "\\")):
        return f"the table location {text!r} must be a path relative to the namespace root"
    parts = [p for p in posixpath.normpath(text.replace("\\", "/")).split("/") if p]
    if not parts or parts == ["."]:
        return "the table location is the namespace root itself"
    if parts[0] == "..":
        return f"the table location {text!r} is outside the namespace root"
    if parts[0] in RESERVED_DIRS:
        return f"the table location {text!r} is inside the namespace's {parts[0]} directory"
    if _DATASET_PARTS & set(parts[1:]):
        return f"the table location {text!r} is inside a Lance dataset"
    return None


def remote_manifest_problem(table_location: str | None, manifest_path: str | None) -> str | None:
    """The staged-manifest rule for a table known only by its location (a REST server's):
    the manifest lies in the table's directory or in the ``_staging`` directory beside it,
    and is not one of the table's published ``_versions`` manifests. Paths are normalised
    (``..`` cannot escape); nothing is read."""
    if not manifest_path or not str(manifest_path).strip():
        return "manifest_path is required"
    if not table_location:
        return "the table has no location to check the staged manifest against"
    t_scheme, t_host, t_path = _split(table_location)
    m_scheme, m_host, m_path = _split(str(manifest_path))
    if m_scheme == "file" and t_scheme != "file":  # a bare path on an object store: same bucket
        m_scheme, m_host = t_scheme, t_host
    if (m_scheme, m_host) != (t_scheme, t_host):
        return f"the staged manifest {manifest_path!r} is not in the table's storage"
    areas = (t_path, posixpath.join(posixpath.dirname(t_path), STAGING_DIR))
    if not any(m_path.startswith(a.rstrip("/") + "/") for a in areas):
        return (
            f"the staged manifest {manifest_path!r} is outside the table's staging areas (its "
            "table directory and the _staging directory beside it)"
        )
    if posixpath.dirname(m_path) == posixpath.join(t_path, "_versions"):
        return f"{manifest_path!r} is a published manifest of _versions, not a staged one"
    return None


__all__ = [
    "CATALOG_DIR",
    "CONSOLE_DIR",
    "RESERVED_DIRS",
    "STAGING_DIR",
    "is_inside",
    "location_problem",
    "manifest_problem",
    "path_uri",
    "real",
    "remote_location_problem",
    "remote_manifest_problem",
    "to_local_path",
]
