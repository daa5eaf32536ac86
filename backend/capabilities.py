"""What a connected backend does, so the UI can say which knobs are real.

``batch_commit`` is ``None`` until probed on a REST server (``backend.capabilities(ns,
probe=True)`` asks it with an empty batch, which changes nothing).
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
    wire_log: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def unknown(cls) -> BackendCapabilities:
        return cls(kind="unknown")


__all__ = ["BackendCapabilities"]
