"""The location rules, pure: what a table location, a staged manifest and a declared location
may be, for every kind of namespace root. No I/O here: the caller hands over the location
already resolved into *parts* relative to the root (``backend.locations`` does that per kind:
``realpath`` on file roots, strict key parsing on object stores, path normalisation for a
REST server's locations) and, when it knows them, the other tables' prefixes.

The kinds of root:

* ``FILE`` - a local directory: locations resolved with ``realpath``;
* ``OBJECT`` - an object store (``s3://``, ``gs://``, ``az://``) or ``memory://``: keys
  compared as normalised prefixes; ``..``, ``.``, empty segments (``//``), percent-encoding,
  backslashes and control characters are refused, never interpreted
  (:func:`object_parts`);
* ``REMOTE`` - a table location a REST server reports or is sent: the console sees neither
  the files nor every table, so the shape of the location stands in for what it cannot see
  (a location inside a Lance dataset's own directories is refused).

The rules:

* :func:`location_rule` - a table location is strictly inside the root, not inside the
  catalog (``__manifest``), the console's directory (``_console``) or ``_staging``, and is
  neither another table's prefix, nor inside one, nor around one;
* :func:`manifest_rule` - a staged manifest lies strictly inside the table's own prefix or the
  root's ``_staging`` prefix, and is not one of the table's published ``_versions`` manifests;
* :func:`declare_location_rule` - a DeclareTable may leave ``location`` empty, or repeat the
  location the directory namespace gives a root-level table (``<name>.lance``); nested tables
  get a fresh directory the namespace picks itself. Single declares and batch declares alike.
"""

from __future__ import annotations

import bisect
import copy
import posixpath
import re
from collections.abc import Iterable, Sequence
from typing import Self
from urllib.parse import unquote, urlparse

from backend.rules.ids import CATALOG_DELIMITER

FILE, OBJECT, REMOTE = "file", "object", "remote"
KINDS = (FILE, OBJECT, REMOTE)
CATALOG_DIR = "__manifest"
CONSOLE_DIR = "_console"
STAGING_DIR = "_staging"
RESERVED_DIRS = (CATALOG_DIR, CONSOLE_DIR, STAGING_DIR)
# Directories inside a Lance dataset: a location there is a part of a table, not a table.
DATASET_PARTS = frozenset({"_versions", "_transactions", "_deletions", "_indices", "data"})

Parts = tuple[str, ...]


def _noun(kind: str) -> str:
    return "prefix" if kind == OBJECT else "directory"


class TablePrefixes:
    """The other tables' prefixes (``/``-separated, normalised), for conflict checks that stay
    cheap when a batch declares thousands of tables into a namespace that holds thousands."""

    def __init__(self, keys: Iterable[str] = (), *, kind: str = FILE) -> None:
        self.kind = kind
        self._counts: dict[str, int] = {}  # tables per prefix (two rows may share one)
        for k in keys:
            k = k.rstrip("/") or "/"
            self._counts[k] = self._counts.get(k, 0) + 1
        self._sorted = sorted(self._counts)

    def __len__(self) -> int:
        return len(self._counts)

    def add(self, key: str) -> None:
        """One more table (a declare earlier in the same batch)."""
        key = key.rstrip("/") or "/"
        if key not in self._counts:
            bisect.insort(self._sorted, key)
        self._counts[key] = self._counts.get(key, 0) + 1

    def without(self, key: str) -> Self:
        """A copy without one table at ``key`` (a table's own prefix, to judge it against the
        others): another table at the same prefix stays."""
        key = key.rstrip("/") or "/"
        out = copy.copy(self)
        out._counts, out._sorted = dict(self._counts), list(self._sorted)
        count = out._counts.get(key, 0)
        if count > 1:
            out._counts[key] = count - 1
        elif count == 1:
            del out._counts[key]
            del out._sorted[bisect.bisect_left(out._sorted, key)]
        return out

    def conflict(self, key: str) -> str | None:
        """How ``key`` collides with a table's prefix, or ``None``."""
        if not self._counts:
            return None
        noun = _noun(self.kind)
        text = key.rstrip("/") or "/"
        if text in self._counts:
            return f"is the {noun} of another table"
        end = len(text)
        while (end := text.rfind("/", 0, end)) > 0:  # every ancestor, then "/"
            if text[:end] in self._counts:
                return f"is inside another table's {noun}"
        if text.startswith("/") and "/" in self._counts:
            return f"is inside another table's {noun}"
        prefix = text + "/"
        i = bisect.bisect_left(self._sorted, prefix)
        if i < len(self._sorted) and self._sorted[i].startswith(prefix):
            return f"contains another table's {noun}"
        return None


def location_rule(
    kind: str,
    parts: Sequence[str] | None,
    shown: str,
    *,
    tables: TablePrefixes | None = None,
    key: str | None = None,
) -> str | None:
    """Why a location cannot be a table's (``None``: it can).

    ``parts``: the location relative to the root (``()`` is the root; ``None``: not under the
    root). ``tables``: the other tables' prefixes, compared with ``key`` (default: the parts
    joined with ``/``); ``None`` when they are unknown (``REMOTE``): then a location inside a
    Lance dataset's own directories is refused instead."""
    if parts is None:
        return f"the table location {shown!r} is outside the namespace root"
    if not parts:
        return "the table location is the namespace root itself"
    if parts[0] in RESERVED_DIRS:
        return f"the table location {shown!r} is inside the namespace's {parts[0]} directory"
    if tables is None:
        if DATASET_PARTS & set(parts[1:]):
            return f"the table location {shown!r} is inside a Lance dataset"
        return None
    clash = tables.conflict(key if key is not None else "/".join(parts))
    if clash:
        return f"the table location {shown!r} {clash}"
    return None


def manifest_rule(
    kind: str,
    manifest: Sequence[str] | None,
    shown: str,
    *,
    table: Sequence[str] | None,
) -> str | None:
    """Why a staged manifest cannot be published as a version of a table (``None``: it can).

    ``manifest`` and ``table``: parts relative to the root (``None``: not under the root).
    The staging areas are the table's own prefix and the root's ``_staging``; a manifest
    directly in the table's ``_versions`` is a published one."""
    where = "its table " + _noun(kind) + " and the namespace's _staging " + _noun(kind)
    outside = f"the staged manifest {shown!r} is outside the table's staging areas ({where})"
    if manifest is None:
        return outside
    manifest = tuple(manifest)
    areas: list[Parts] = [(STAGING_DIR,)]
    if table:
        areas.append(tuple(table))
    if not any(len(manifest) > len(a) and manifest[: len(a)] == a for a in areas):
        return outside
    if table and manifest[:-1] == (*table, "_versions"):
        return f"{shown!r} is a published manifest of _versions, not a staged one"
    return None


# -- object keys ---------------------------------------------------------------------------------


def _split_uri(uri: str) -> tuple[str, str, str] | None:
    """``(scheme, bucket, path)`` of ``scheme://bucket/path`` (no URL parsing: ``?`` and ``#``
    stay in the key), ``None`` when ``uri`` has no scheme."""
    scheme, sep, rest = uri.partition("://")
    if not sep or not scheme or "/" in scheme:
        return None
    if scheme.lower() == "memory":  # one store: Lance reports "<name>/<key>" as its paths
        return "memory", "", rest
    bucket, _, path = rest.partition("/")
    return scheme.lower(), bucket, path


def _segments(path: str, shown: str, *, lenient: bool) -> tuple[Parts | None, str | None]:
    text = path[:-1] if path.endswith("/") else path  # one trailing slash: a "directory"
    if text in ("", "."):
        return (), None
    parts = tuple(text.split("/"))
    if lenient:  # a location already in the catalog, read as pylance resolves it
        return tuple(p for p in parts if p not in ("", ".")), None
    if any(p == "" for p in parts):
        return None, f"{shown!r} has an empty path segment (//)"
    if any(p in (".", "..") for p in parts):
        return None, f"{shown!r} has a '.' or '..' path segment"
    return parts, None


def object_parts(
    root: str, location: str | None, *, base: str = "root", lenient: bool = False
) -> tuple[Parts | None, str | None]:
    """A location on the object-store root ``root`` (``scheme://bucket/prefix``) as parts
    relative to the root: ``(parts, None)``, ``(None, None)`` when it lies elsewhere (another
    scheme, bucket or prefix), or ``(None, problem)`` when it is malformed.

    Accepted: a URI of the root's store, or a path - relative to the root (``base="root"``:
    table locations, as the catalog holds them) or to the bucket (``base="bucket"``: manifest
    paths, as Lance reports and reads them; a leading ``/`` is allowed there). Refused, never
    interpreted: control characters, ``%`` (percent-encoding), backslashes, empty, ``.`` and
    ``..`` segments. ``lenient``: for locations already in the catalog (other tables' prefixes),
    empty and ``.`` segments are dropped as Lance does."""
    if location is None or not str(location).strip():
        return None, "the location is empty"
    text = str(location)
    shown = text
    if not lenient:
        if any(ord(c) < 32 or ord(c) == 127 for c in text):
            return None, f"{shown!r} contains a control character"
        if "%" in text:
            return None, f"{shown!r} contains '%' (percent-encoding is not accepted in keys)"
        if "\\" in text:
            return None, f"{shown!r} contains a backslash"
    r = _split_uri(root)
    if r is None:
        return None, f"the namespace root {root!r} is not an object-store URI"
    r_scheme, r_bucket, r_path = r
    root_parts = tuple(p for p in r_path.split("/") if p)
    u = _split_uri(text)
    if u is not None:
        scheme, bucket, path = u
        if (scheme, bucket) != (r_scheme, r_bucket):
            return None, None
        from_bucket = True
    elif base == "bucket":
        path, from_bucket = text.lstrip("/") if lenient else text.removeprefix("/"), True
    else:
        if text.startswith("/"):
            return None, (
                f"{shown!r} is an absolute path: give a key relative to the namespace root "
                "or a URI of its store"
            )
        path, from_bucket = text, False
    parts, problem = _segments(path, shown, lenient=lenient)
    if parts is None:
        return None, problem
    if from_bucket:
        if parts[: len(root_parts)] != root_parts:
            return None, None
        parts = parts[len(root_parts) :]
    return parts, None


def object_key(root: str, parts: Sequence[str]) -> str:
    """The key (relative to the bucket) of ``parts`` under the object-store root ``root``."""
    r = _split_uri(root)
    prefix = r[2].strip("/") if r else ""
    return "/".join(p for p in (prefix, *parts) if p)


# -- declared locations --------------------------------------------------------------------------


def declared_location(table_id: Sequence[str]) -> str | None:
    """The location (relative to the root) the directory namespace gives a declared table
    whose location can be told in advance: ``<name>.lance`` for a root-level table; ``None``
    for a nested one (a fresh directory with a random part)."""
    return f"{table_id[0]}.lance" if len(table_id) == 1 else None


def declare_location_rule(
    table_id: Sequence[str], location: str | None, *, root_uri: str
) -> str | None:
    """Why ``location`` cannot be given in a DeclareTable of ``table_id`` (``None``: it can).
    Accepted: no location, or the root-level table's own ``<name>.lance`` (relative, or as a
    URI of the root, as the namespace reports it). ``root_uri``: the root as the namespace
    reports table locations under it."""
    if not location:
        return None
    own = declared_location(table_id)
    text = str(location).rstrip("/")
    if own is not None and text in (own, f"{root_uri.rstrip('/')}/{own}"):
        return None
    chooses = (
        f"a root-level table's location is {own!r}"
        if own is not None
        else "a nested table gets a fresh directory it picks itself"
    )
    return (
        f"cannot declare the table at location {location!r}: the directory namespace chooses "
        f"table locations itself ({chooses}); leave the location empty"
    )


# -- a location against the tables a listing names --------------------------------------------

# A nested table's directory in a directory namespace: a hex part, "_", its catalog object id.
_NESTED_DIR = re.compile(r"^[0-9a-f]+_(.+)$")


def listed_dir_owner(component: str, tables: set[str]) -> str | None:
    """The catalog object id (``a$b$t``) of the listed table whose directory ``component``
    is, named as the directory namespace names table directories: ``<name>.lance`` for a
    root-level table, ``<hex>_<object id>`` for a nested one; ``None``: no listed table's.
    ``tables``: the listed tables' object ids."""
    if component.endswith(".lance") and component[: -len(".lance")] in tables:
        name = component[: -len(".lance")]
        if CATALOG_DELIMITER not in name:
            return name
    match = _NESTED_DIR.match(component)
    if match and CATALOG_DELIMITER in match.group(1) and match.group(1) in tables:
        return match.group(1)
    return None


def listed_location_clash(location: str, tables: set[str]) -> tuple[str, str] | None:
    """How a location to register meets the directory of a table a listing names
    (``tables``: object ids), judged by the directory names the directory namespace gives
    (:func:`listed_dir_owner`): ``(how, object id)`` or ``None``. A relative location starts
    at the root, where every such directory lies; an absolute one (a URI or a path) is
    searched for such a directory among its components. Nothing is read."""
    text = str(location or "").replace("\\", "/")
    parsed = urlparse(text)
    absolute = bool(parsed.scheme) or text.startswith("/")
    path = unquote(parsed.path) if parsed.scheme else text
    parts = [p for p in posixpath.normpath("/" + path).split("/") if p]
    candidates = range(len(parts)) if absolute else range(min(1, len(parts)))
    for i in candidates:
        owner = listed_dir_owner(parts[i], tables)
        if owner is not None:
            how = (
                "is the directory of another table"
                if i == len(parts) - 1
                else "is inside the directory of another table"
            )
            return how, owner
    return None
