"""What a connected backend does, so the UI can say which knobs are real.

On a REST server, ``batch_commit``, ``rename`` and ``drop_cascade`` are never probed with a
write (an empty batch, a rename of a missing table: writes, sent on read-only connections too,
and judged by servers as they please). They come from:

1. the connection's ``server_profile`` option, one of :data:`SERVER_PROFILES` (documented
   servers whose answers are known);
2. else what the server answered to a real request of that kind in this session (a success:
   yes; "unsupported": no);
3. else ``None``: unknown. The console then offers the action, and a refusal is reported as
   ``UnsupportedOperationError`` with nothing changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lance_namespace.errors import InvalidInputError


@dataclass(frozen=True)
class ServerProfile:
    """What a known kind of REST server implements (``None``: it depends)."""

    name: str
    description: str
    batch_commit: bool | None = None
    rename: bool | None = None
    drop_cascade: bool | None = None


SERVER_PROFILES: dict[str, ServerProfile] = {
    p.name: p
    for p in (
        ServerProfile(
            "lance-dir",
            "pylance's RestAdapter over a directory namespace "
            "(lance.namespace.RestAdapter('dir', ...)): no BatchCommitTables, no RenameTable, "
            "no DropNamespace CASCADE",
            batch_commit=False,
            rename=False,
            drop_cascade=False,
        ),
    )
}


def server_profile_named(name: str | None) -> ServerProfile | None:
    """The profile called ``name`` (``None``/empty: no profile); ``InvalidInputError`` for a
    name that is not one of :data:`SERVER_PROFILES`."""
    if name is None or not str(name).strip():
        return None
    profile = SERVER_PROFILES.get(str(name).strip().lower())
    if profile is None:
        raise InvalidInputError(
            f"unknown server profile {name!r}; expected one of {', '.join(SERVER_PROFILES)}"
        )
    return profile


@dataclass(frozen=True)
class BackendCapabilities:
    kind: str  # "local" | "rest" | "unknown"
    # Index parameters the backend is known to apply. ``None``: sent as the spec defines,
    # whether the server applies them is the server's business (REST).
    honoured_index_params: frozenset[str] | None = None
    progress_events: bool = False  # real build progress callbacks (local) vs polling (REST)
    batch_commit: bool | None = None  # True / False, or None: unknown (see the module doc)
    rename: bool | None = None  # RenameTable; None: unknown
    drop_cascade: bool | None = None  # DropNamespace CASCADE; None: unknown
    # table properties (catalog) and namespace properties cannot be edited: the spec has no
    # such operation; a table's schema metadata can (UpdateTableSchemaMetadata)
    schema_metadata: bool = True
    wire_log: bool = False
    server_profile: str | None = None  # the REST connection's server profile, if any
    notes: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def unknown(cls) -> BackendCapabilities:
        return cls(kind="unknown")


__all__ = ["SERVER_PROFILES", "BackendCapabilities", "ServerProfile", "server_profile_named"]
