"""What a backend honours, so the UI can say which knobs are real."""

from __future__ import annotations

from dataclasses import dataclass, field

# CreateTableIndexRequest fields that tune a vector index build.
VECTOR_BUILD_PARAMS: tuple[str, ...] = (
    "num_partitions",
    "num_sub_vectors",
    "num_bits",
    "sample_rate",
    "max_iterations",
    "target_partition_size",
    "m",
    "ef_construction",
)
FTS_PARAMS: tuple[str, ...] = (
    "base_tokenizer",
    "language",
    "max_token_length",
    "lower_case",
    "stem",
    "remove_stop_words",
    "ascii_folding",
    "with_position",
)


@dataclass(frozen=True)
class BackendCapabilities:
    kind: str  # "local" | "rest" | "unknown"
    # Index parameters the backend is known to apply. ``None``: sent as the spec defines,
    # whether the server applies them is the server's business (REST).
    honoured_index_params: frozenset[str] | None = None
    progress_events: bool = False  # real build progress callbacks (local) vs polling (REST)
    batch_commit: bool = False
    wire_log: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def unknown(cls) -> BackendCapabilities:
        return cls(kind="unknown")
