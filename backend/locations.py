"""Locations: URI to path, and each kind of root's resolution of what a request points at.

Table locations and manifest paths arrive in requests (RegisterTable, CreateTableVersion,
DeclareTable, batch commits) and in catalogs other processes write; they are untrusted. The
rules themselves are ``backend.rules.location_rules`` (pure, one per question, parametrised by the
kind of root); this module resolves a location into the parts those rules compare:

* file roots (:func:`location_problem`, :func:`manifest_problem`): paths after ``realpath``,
  so ``..``, symbolic links and doubled slashes cannot escape; a location being *registered*
  exists and holds a Lance dataset (``_versions``); a staged manifest is a regular file;
* object-store roots (:func:`object_table_key`, :func:`object_manifest_key`): keys parsed
  strictly (``backend.rules.location_rules.object_parts``), compared as prefixes;
* a REST server's locations (:func:`remote_location_problem`,
  :func:`remote_manifest_problem`): normalised paths.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote, unquote, urlparse

from backend.rules.location_rules import (
    FILE,
    OBJECT,
    REMOTE,
    TablePrefixes,
    location_rule,
    manifest_rule,
    object_parts,
)

URI_SAFE = "/$+':@&*=,;!~()"  # characters pylance leaves unencoded in file:// locations


def to_local_path(location: str | os.PathLike[str] | None, root: Path | None = None) -> Path | None:
    """A ``file://`` URI or a path as a ``Path``; relative paths are taken from ``root``.
    ``None`` for other schemes (``s3://`` ...) or when a relative path has no root."""
    if location is None:
        return None
    if isinstance(location, Path):  # a path already: no URI to parse
        return location if location.is_absolute() else (root / location if root else None)
    text = local_path_text(location, root)
    return Path(text) if text is not None else None


# A plain file URI pylance reports: nothing to decode, no query or fragment to split off.
_PLAIN_FILE_URI = re.compile(r"file:///[^%?#]*")


def local_path_text(location: str | os.PathLike[str], root: Path | str | None = None) -> str | None:
    """:func:`to_local_path` as text, not normalised (a catalog of 100,000 tables is read
    without building as many ``Path`` objects or parsing as many URIs in full)."""
    text = os.fspath(location)
    if not text:
        return None
    if ":" in text:  # a URI, or a path with a colon in it (no colon: no URI to parse)
        if _PLAIN_FILE_URI.fullmatch(text):
            return text[7:]
        parsed = urlparse(text)
        scheme = parsed.scheme.lower()
        if scheme == "file":
            if parsed.netloc not in ("", "localhost"):
                return None
            return unquote(parsed.path)
        if scheme and not (len(scheme) == 1 and os.name == "nt"):
            return None
    if os.path.isabs(text):
        return text
    return f"{os.fspath(root).rstrip('/')}/{text}" if root is not None else None


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


class TableDirs(TablePrefixes):
    """The resolved directories of a namespace's tables (file roots): real paths, compared as
    prefixes (``backend.rules.location_rules.TablePrefixes``). Given the ``root`` they are
    under, one listing of the root says which of its children are symbolic links, and every
    other child resolves to the real root joined with its name, without a walk of every
    component (100,000 tables: some 0.3 s instead of 5 s)."""

    def __init__(
        self,
        dirs: Iterable[Path | str] = (),
        *,
        root: Path | None = None,
        root_real: Path | None = None,
    ) -> None:
        if root is None:
            resolved: Iterable[str] = (str(real(Path(d))) for d in dirs)
        else:
            base, top, links = os.fspath(root_real or real(root)), os.fspath(root), _links_in(root)
            resolved = (_child_resolved(os.fspath(d), top, base, links) for d in dirs)
        super().__init__(resolved, kind=FILE)

    def without_dir(self, path: Path | str) -> TableDirs:
        """A copy without one table whose directory is ``path`` (resolved): a table judged
        against the others; another table at the same directory stays."""
        return self.without(os.path.realpath(path))


def _links_in(root: Path) -> frozenset[str] | None:
    """The names of the symbolic links among ``root``'s children (one listing; ``None``:
    it cannot be listed)."""
    try:
        with os.scandir(root) as entries:
            return frozenset(e.name for e in entries if e.is_symlink())
    except OSError:
        return None


def _child_resolved(text: str, root: str, root_real: str, links: frozenset[str] | None) -> str:
    """``realpath(text)``; for a plain child of ``root`` that is not among ``links`` (its
    symbolic links), the real root joined with its name."""
    cut = text.rfind("/")  # string slicing, not os.path: a catalog holds 100,000 tables
    name = text[cut + 1 :]
    if (
        links is not None
        and cut > 0
        and text[:cut] == root
        and name not in links
        and name not in ("", ".", "..")
    ):
        return f"{root_real.rstrip('/')}/{name}"
    return os.path.realpath(text)


def _resolved(path: Path, root: Path, root_real: Path) -> str:
    """``real(path)`` as a string; without walking every component when ``path`` is a plain
    child of ``root`` that is not a symbolic link (a new table directory: one ``lstat``).
    Strings, not ``pathlib``: a batch checks thousands of locations."""
    text = os.fspath(path)
    parent, name = os.path.split(text)
    if parent == os.fspath(root) and name not in ("", ".", "..") and not os.path.islink(text):
        return os.path.join(os.fspath(root_real), name)
    return os.path.realpath(text)


def _parts_under(text: str, root_real: str) -> tuple[str, ...] | None:
    """The real path ``text`` as parts relative to the real root (``None``: not under it)."""
    if text == root_real:
        return ()
    base = root_real.rstrip("/") + "/"
    if not text.startswith(base):
        return None
    return tuple(p for p in text[len(base) :].split("/") if p)


def location_problem(
    root: Path,
    location: str | Path | None,
    *,
    other_tables: TableDirs | Iterable[Path] = (),
    must_exist: bool = False,
    root_real: Path | None = None,
) -> str | None:
    """Why ``location`` cannot be a table's directory under the file root ``root`` (``None``:
    it can): resolved with ``realpath``, then ``backend.rules.location_rules.location_rule``.
    ``root_real``: ``real(root)`` when the caller already has it."""
    if not location or not str(location).strip():
        return "the table location is empty"
    shown = os.fspath(location)
    path = to_local_path(location, root)
    if path is None:
        return f"the table location {shown!r} is not a path on this filesystem"
    root_real = root_real or real(root)
    text = _resolved(path, root, root_real)
    tables = (
        other_tables
        if isinstance(other_tables, TableDirs)
        else TableDirs(other_tables, root=root, root_real=root_real)
    )
    problem = location_rule(
        FILE, _parts_under(text, str(root_real)), shown, tables=tables, key=text
    )
    if problem:
        return problem
    if must_exist:
        resolved = Path(text)
        if not resolved.is_dir():
            return f"the table location {shown!r} does not exist"
        if not (resolved / "_versions").is_dir():
            return f"the table location {shown!r} holds no Lance dataset (no _versions)"
    return None


# A directory namespace marks a declared table's directory (or prefix) with this file until
# its first version is written.
RESERVED_MARKER = ".lance-reserved"


def is_table_folder(path: Path) -> bool:
    """Whether the directory ``path`` is a table's: it holds a Lance dataset (``_versions``)
    or a declared table's marker. A folder holding neither is someone else's files."""
    return (path / "_versions").is_dir() or (path / RESERVED_MARKER).is_file()


def foreign_folder_problem(path: Path | None) -> str | None:
    """Why a new table may not take the directory ``path`` (file roots): it exists, holds
    files and is not a table's folder (:func:`is_table_folder`). A table made there would
    take those files as its own, and dropping it would delete them."""
    if path is None or path.is_symlink() or not path.is_dir():
        return None
    try:
        empty = not any(os.scandir(path))
    except OSError as exc:
        return f"the folder {path.name!r} cannot be read ({exc.strerror or exc})"
    if empty or is_table_folder(path):
        return None
    return taken_folder(path.name)


def taken_folder(name: str) -> str:
    """How a new table's refusal of a folder (or prefix) of someone else's files reads."""
    return (
        f"the folder {name!r} already exists and holds files that are not a Lance table; "
        "a table made there would take them as its own. Move them away or choose another name"
    )


def links_leaving(table_dir: Path, *, limit: int = 3) -> list[str]:
    """Symbolic links inside the table directory ``table_dir`` (relative paths, at most
    ``limit``) that lead outside it. Lance follows them when it lists a table's files, so a
    cleanup or a version delete would delete what they lead to. Links are not followed."""
    found: list[str] = []
    inside = real(table_dir)
    for top, dirs, files in os.walk(table_dir, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(top) / name
            if path.is_symlink() and not is_inside(path, inside):
                found.append(path.relative_to(table_dir).as_posix())
                if len(found) >= limit:
                    return found
    return found


def owned_table_problem(
    root: Path,
    location: str | Path | None,
    *,
    other_tables: TableDirs | Iterable[Path] = (),
    root_real: Path | None = None,
) -> str | None:
    """Why the console may not delete or rewrite files of the table at ``location`` under the
    file root ``root`` (``None``: it may): the location rule (:func:`location_problem`, against
    the catalog's other tables), then no symbolic link inside the table leads outside it
    (:func:`links_leaving`). Drops, version deletes, cleanups and overwrites ask this; a
    problem ends where the caller's advice (deregister the table) can follow it."""
    problem = location_problem(root, location, other_tables=other_tables, root_real=root_real)
    if problem:
        return problem
    path = to_local_path(location, root)
    assert path is not None  # location_problem refused what is not a local path
    leaving = links_leaving(path)
    if leaving:
        return (
            f"the table's folder holds symbolic links leading outside it ({', '.join(leaving)}), "
            "which lance follows: it would delete the files they lead to. Remove the links, or"
        )
    return None


def with_advice(problem: str, advice: str) -> str:
    """``problem`` followed by ``advice`` ("deregister the table instead"), joined as the
    problem's last words ask (:func:`owned_table_problem`'s end with ", or")."""
    return f"{problem} {advice}" if problem.endswith(", or") else f"{problem}; {advice}"


def relative_location(root: Path, location: str | Path) -> str | None:
    """``location`` (a path or ``file://`` URI under the file root ``root``) relative to the
    root, ``/``-joined, as pylance's directory namespace registers tables; ``None`` when it is
    not under the root. Check it with :func:`location_problem` first."""
    path = to_local_path(location, root)
    if path is None:
        return None
    root_real = real(root)
    parts = _parts_under(_resolved(path, root, root_real), str(root_real))
    return "/".join(parts) if parts else None


def manifest_problem(root: Path, table_dir: Path, manifest_path: str | None) -> str | None:
    """Why ``manifest_path`` cannot be a staged manifest of the table in ``table_dir`` (file
    roots): resolved with ``realpath``, then ``backend.rules.location_rules.manifest_rule``, then it
    must be a regular file, not a symbolic link."""
    if not manifest_path or not str(manifest_path).strip():
        return "manifest_path is required"
    path = to_local_path(manifest_path)
    if path is None:
        # pylance reports object-store paths without the leading slash.
        path = Path("/" + str(manifest_path).lstrip("/"))
    if not path.is_absolute():
        path = Path("/" + str(path))
    root_real = str(real(root))
    resolved = real(path)
    problem = manifest_rule(
        FILE,
        _parts_under(str(resolved), root_real),
        str(manifest_path),
        table=_parts_under(str(real(table_dir)), root_real),
    )
    if problem:
        return problem
    if path.is_symlink() or not resolved.is_file():
        return f"the staged manifest {manifest_path!r} is not a regular file"
    return None


# -- object-store roots (s3://, gs://, az://, memory://): keys, no filesystem ------------------


class ObjectTables(TablePrefixes):
    """The prefixes (relative to the root) of an object-store namespace's tables, from their
    catalog locations; locations elsewhere (another bucket) cannot collide and are left out."""

    def __init__(self, root: str, locations: Iterable[str] = ()) -> None:
        super().__init__(kind=OBJECT)
        for location in locations:
            parts, _ = object_parts(root, location, lenient=True)
            if parts:
                self.add("/".join(parts))


def object_table_key(
    root: str, location: str | None, *, other_tables: TablePrefixes | None = None
) -> tuple[str | None, str | None]:
    """``(key, None)``: the table prefix (relative to the root) of ``location`` on the
    object-store root ``root``, once it passes ``location_rule``; ``(None, problem)`` when it
    does not. ``other_tables``: ``ObjectTables`` of the catalog's other tables."""
    if location is None or not str(location).strip():
        return None, "the table location is empty"
    parts, malformed = object_parts(root, location)
    if malformed:
        return None, f"the table location {malformed}"
    problem = location_rule(
        OBJECT, parts, str(location), tables=other_tables or TablePrefixes(kind=OBJECT)
    )
    if problem:
        return None, problem
    assert parts is not None
    return "/".join(parts), None


def object_manifest_key(
    root: str, table_location: str | None, manifest_path: str | None
) -> tuple[str | None, str | None]:
    """``(key, None)``: the key (relative to the root) of a staged manifest of the table at
    ``table_location`` on the object-store root ``root``, once it passes ``manifest_rule``;
    ``(None, problem)`` otherwise. The manifest is a URI of the root's store or a path inside
    the bucket (as Lance reports manifest paths); nothing is read."""
    if not manifest_path or not str(manifest_path).strip():
        return None, "manifest_path is required"
    parts, malformed = object_parts(root, manifest_path, base="bucket")
    if malformed:
        return None, f"the staged manifest {malformed}"
    table, _ = object_parts(root, table_location, lenient=True)
    problem = manifest_rule(OBJECT, parts, str(manifest_path), table=table)
    if problem:
        return None, problem
    assert parts is not None
    return "/".join(parts), None


# -- locations a REST server reports or is sent ------------------------------------------------


def _split(uri: str) -> tuple[str, str, str]:
    """``(scheme, host, normalised path)`` of a URI or path; plain paths count as ``file``
    (object-store paths without a leading slash are absolute, as pylance reports them)."""
    parsed = urlparse(uri)
    scheme = parsed.scheme.lower()
    if scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt"):
        path = unquote(parsed.path) if scheme == "file" else uri
        return "file", "", posixpath.normpath("/" + path.lstrip("/"))
    return scheme, parsed.netloc, posixpath.normpath("/" + unquote(parsed.path).lstrip("/"))


def remote_location_problem(location: str | None) -> str | None:
    """The location rule for a table registered on a server whose files the console cannot see
    (``location_rule`` of kind ``REMOTE``): a relative path below the namespace root, not the
    root, not the catalog, ``_console`` or ``_staging``, not a part of a dataset, with no
    ``..``. (Whether it exists, and whether it is another table's directory, need the server:
    see the REST client.)"""
    if location is None or not str(location).strip():
        return "the table location is empty"
    text = str(location)
    if urlparse(text).scheme or text.startswith(("/", "\\")):
        return f"the table location {text!r} must be a path relative to the namespace root"
    parts = tuple(p for p in posixpath.normpath(text.replace("\\", "/")).split("/") if p)
    if parts == (".",):
        parts = ()
    return location_rule(REMOTE, None if parts[:1] == ("..",) else parts, text)


def remote_manifest_problem(
    table_location: str | None, manifest_path: str | None, *, root: str | None = None
) -> str | None:
    """The staged-manifest rule for a table known only by its location (a REST server's):
    ``manifest_rule`` of kind ``REMOTE``, with the namespace root ``root`` when the caller
    knows it, else the table location's parent (where the directory namespace puts every
    table it makes). Paths are normalised (``..`` cannot escape); nothing is read."""
    if not manifest_path or not str(manifest_path).strip():
        return "manifest_path is required"
    if not table_location:
        return "the table has no location to check the staged manifest against"
    t_scheme, t_host, t_path = _split(table_location)
    m_scheme, m_host, m_path = _split(str(manifest_path))
    if m_scheme == "file" and t_scheme != "file":  # a bare path on an object store: same bucket
        m_scheme, m_host = t_scheme, t_host
    if root is not None:
        r_scheme, r_host, r_path = _split(root)
        if r_scheme == "file" and t_scheme != "file":
            r_scheme, r_host = t_scheme, t_host
    else:
        r_scheme, r_host, r_path = t_scheme, t_host, posixpath.dirname(t_path)
    same = (m_scheme, m_host) == (t_scheme, t_host) == (r_scheme, r_host)
    return manifest_rule(
        REMOTE,
        _parts_under(m_path, r_path) if same else None,
        str(manifest_path),
        table=_parts_under(t_path, r_path) if same else None,
    )
