"""The files a staged manifest brings, looked up before it is published: the last part of the
staged-manifest rule (``catalog.read_staged_manifest`` on file roots,
``objects.read_staged_object`` on object stores), for a single CreateTableVersion, a batch and
their preflight alike.

A staged change's data and deletion files are referenced by no version of the table until it
is published. A cleanup of unreferenced files by another process removes them (lance's
``cleanup_old_versions(delete_unverified=True)``, which lancedb's cleanup calls too), and so
can a hand. Publishing the manifest then makes a latest version that no one can read: every
scan of the table fails on the missing file. So every file the staged manifest refers to and
the version before it does not (what the change wrote) must be there. The base version's own
files are not looked up: a cleanup keeps what the latest version refers to, and a manifest
published on any other base is refused as a concurrent change.

Cost: the staged manifest is read from the bytes already in hand (lance's
``serialized_manifest``), the base version's manifest once, then one lookup (a ``stat``, a
HEAD) per file the change wrote.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

import lance
from lance.fragment import FragmentMetadata

from ...errors import invalid
from ...text import some_of


def fragment_files(meta: FragmentMetadata, *, data: bool = True) -> set[str]:
    """The data files (with ``data``) and the deletion file a fragment names, relative to the
    table: those of its own base only (a file of another base, a shallow clone's source, is
    that dataset's)."""
    out = {f"data/{f.path}" for f in meta.files if f.base_id is None} if data else set()
    deletion = meta.deletion_file
    if deletion is not None and deletion.base_id is None:
        out.add(str(deletion.path(meta.id)))
    return out


def version_files(ds: lance.LanceDataset) -> set[str]:
    """The data and deletion files the version ``ds`` refers to (:func:`fragment_files`)."""
    return {name for fragment in ds.get_fragments() for name in fragment_files(fragment.metadata)}


def _base_files(uri: str, version: int, storage_options: dict[str, str] | None) -> set[str]:
    """The files of the version before ``version`` (none when it does not exist: then every
    file of the staged manifest is looked up)."""
    if version <= 1:
        return set()
    try:
        base = lance.dataset(uri, version=version - 1, storage_options=storage_options or None)
    except (ValueError, OSError):
        return set()
    return version_files(base)


def check_staged_files(
    uri: str,
    message: bytes,
    version: int,
    storage_options: dict[str, str] | None,
    exists: Callable[[str], bool],
) -> None:
    """``InvalidInputError`` unless every file the staged manifest (its protobuf ``message``,
    for ``version`` of the table at ``uri``) brings is inside the table and there (``exists``
    of a path relative to the table). Nothing is written."""
    try:
        staged = lance.LanceDataset(
            uri, serialized_manifest=message, storage_options=storage_options or None
        )
        brought = version_files(staged)
    except (ValueError, OSError):
        raise invalid("the staged manifest's fragments cannot be read") from None
    outside = sorted(
        f for f in brought if posixpath.isabs(f) or ".." in posixpath.normpath(f).split("/")
    )
    if outside:
        raise invalid(
            f"the staged manifest refers to files outside the table: {some_of(outside, 3)}"
        )
    new = sorted(brought - _base_files(uri, version, storage_options))
    gone = [f for f in new if not exists(f)]
    if gone:
        raise invalid(
            f"the staged version's files are gone ({len(gone)} of {len(new)}: "
            f"{some_of(gone, 3)}): another process removed them, such as a cleanup of "
            "unreferenced files; publishing it would make a version no one can read. "
            "Discard it and stage the change again"
        )
