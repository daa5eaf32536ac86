"""A table's versions on a local file root, read from its ``_versions`` directory as pylance
lists them, but only as far as a page needs.

pylance 14's ListTableVersions lists the object store's ``_versions/`` (every entry with its
metadata) and answers each manifest file as a version: the number from the file name (V1
``<v>.manifest`` or V2 ``<u64::MAX - v>.manifest``), ``manifest_size`` and ``timestamp_millis``
from the file's size and modification time, ``e_tag`` the local store's
``"<inode>-<mtime µs>-<size>"`` (hex). It does so for every version whatever the ``limit``
(0.7 s at 100,000 versions for a page of 100) and never returns a page token, and
DescribeTableVersion lists them all too (2 s). Here the file names are read (one
``listdir``), and only the files of the page asked for are looked at (one ``stat`` each):
the same answer, the cost of a directory listing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from lance_namespace import TableVersion

from .batch.catalog import manifest_name, manifest_versions


def version_names(table_dir: Path) -> dict[int, str] | None:
    """``{version: manifest file name}`` of a table directory; ``None`` when it has no
    ``_versions`` directory (declared only, or not a local path)."""
    try:
        names = os.listdir(table_dir / "_versions")
    except (FileNotFoundError, NotADirectoryError):
        return None
    return manifest_versions(names)


def entry(table_dir: Path, version: int, name: str) -> TableVersion | None:
    """The listing's entry of one manifest file (``None``: it is gone, e.g. deleted since the
    directory was read)."""
    path = table_dir / "_versions" / name
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    micros = st.st_mtime_ns // 1000
    return TableVersion.model_construct(
        version=version,
        manifest_path=str(path),
        manifest_size=st.st_size,
        e_tag=f'"{st.st_ino:x}-{micros:x}-{st.st_size:x}"',
        timestamp_millis=micros // 1000,
        metadata=None,
    )


def entries(table_dir: Path, names: dict[int, str], versions: Iterable[int]) -> list[TableVersion]:
    """The entries of ``versions`` (in the order given; those gone meanwhile left out)."""
    out = []
    for version in versions:
        found = entry(table_dir, version, names[version])
        if found is not None:
            out.append(found)
    return out


def one_version(table_dir: Path, version: int) -> TableVersion | None:
    """The entry of one version, by its file name (V2, else V1); ``None`` when neither
    exists."""
    for scheme in ("V2", "V1"):
        found = entry(table_dir, version, manifest_name(version, scheme))
        if found is not None:
            return found
    return None
