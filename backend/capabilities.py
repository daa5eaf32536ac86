"""What a connected backend does, so the UI can say which knobs are real.

``batch_commit`` and ``rename`` are ``None`` until probed on a REST server
(``backend.capabilities(ns, probe=True)`` asks it with requests that change nothing: an empty
batch, a rename of a table that does not exist).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class BackendCapabilities:
    kind: str  # "local" | "rest" | "unknown"
    # Index parameters the backend is known to apply. ``None``: sent as the spec defines,
    # whether the server applies them is the server's business (REST).
    honoured_index_params: frozenset[str] | None = None
    progress_events: bool = False  # real build progress callbacks (local) vs polling (REST)
    batch_commit: bool | None = None  # True / False, or None: not probed yet
    rename: bool | None = None  # RenameTable (REST: probed with a table that does not exist)
    # DropNamespace CASCADE; None: cannot be probed without dropping something (REST: the
    # request is sent and a refusal is reported as such)
    drop_cascade: bool | None = None
    # table properties (catalog) and namespace properties cannot be edited: the spec has no
    # such operation; a table's schema metadata can (UpdateTableSchemaMetadata)
    schema_metadata: bool = True
    wire_log: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def unknown(cls) -> BackendCapabilities:
        return cls(kind="unknown")


__all__ = ["BackendCapabilities"]
