"""What a connected backend does, as flags the pages read (``caps.maintenance``,
``caps.staging``, ...), so the UI can say which knobs are real.

On a REST server, ``batch_commit``, ``rename`` and ``drop_cascade`` are never probed with a
write (an empty batch, a rename of a missing table: writes, sent on read-only connections too,
and judged by servers as they please). They come from:

1. the connection's ``server_profile`` option, one of :data:`SERVER_PROFILES` (documented
   servers whose answers are known: :data:`LANCE_DIR`);
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
    # whether a write sent with ``branch`` is applied to that branch (False: to main)
    branch_writes: bool | None = None
    # the writes applied to their branch even where ``branch_writes`` is False
    branch_writes_kept: frozenset[str] = frozenset()


LANCE_DIR = ServerProfile(
    "lance-dir",
    "pylance's RestAdapter over a directory namespace "
    "(lance.namespace.RestAdapter('dir', ...)): no BatchCommitTables, no RenameTable, "
    "no DropNamespace CASCADE, and a write sent to a branch is applied to main (but for "
    "RestoreTable)",
    batch_commit=False,
    rename=False,
    drop_cascade=False,
    branch_writes=False,
    branch_writes_kept=frozenset({"restore_table"}),
)
SERVER_PROFILES = (LANCE_DIR.name,)  # the server profiles a connection may name


def server_profile_named(name: str | None) -> ServerProfile | None:
    """The profile called ``name`` (``None``/empty: no profile); ``InvalidInputError`` for a
    name that is not one of :data:`SERVER_PROFILES`."""
    if name is None or not str(name).strip():
        return None
    if str(name).strip().lower() != LANCE_DIR.name:
        raise InvalidInputError(
            f"unknown server profile {name!r}; expected one of {', '.join(SERVER_PROFILES)}"
        )
    return LANCE_DIR


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

    # The flags pages read: each says what the console can do on this connection (the local
    # namespace opens the tables' Lance datasets in this process; a REST server is reached by
    # HTTP requests only, and does what it implements).

    @property
    def maintenance(self) -> bool:
        """Compaction, index optimization and cleanup run in this process."""
        return self.kind == "local"

    @property
    def staging(self) -> bool:
        """Staged changes (files written next to a table), the reader that watches a commit
        and the transaction demo."""
        return self.kind == "local"

    @property
    def batch_records(self) -> bool:
        """The namespace's batch commits can be listed (the records kept under its root)."""
        return self.kind == "local"

    @property
    def table_figures(self) -> bool:
        """A table's rows, size on disk, indexes and last change are read from its files
        (over REST: what the spec's answers give, the size being that of the latest
        version's data)."""
        return self.kind == "local"

    @property
    def row_delta(self) -> bool:
        """A branch compares with its parent by lance's delta, without key columns (it needs
        the dataset itself)."""
        return self.kind == "local"

    @property
    def server(self) -> bool:
        """A REST server: every call is an HTTP request (``wire_log``: its traffic can be
        inspected), and what it implements is its own business."""
        return self.kind == "rest"

    @classmethod
    def unknown(cls) -> BackendCapabilities:
        return cls(kind="unknown")


def opens_datasets(ns: object) -> bool:
    """Whether ``ns`` opens its tables' Lance datasets in this process (the local backend's
    ``open_dataset``, also on a branch view of it): a service then reads figures, deltas and
    transactions from the datasets themselves, where over REST it has only the spec's answers.
    The one test of it every service makes."""
    return callable(getattr(ns, "open_dataset", None))


def writes_datasets(ns: object) -> bool:
    """Whether ``ns`` also writes its tables' datasets in this process, under the namespace's
    lock (``write_guard``): rows, imports and exports then go to lance directly."""
    return opens_datasets(ns) and callable(getattr(ns, "write_guard", None))
