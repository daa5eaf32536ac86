"""A table write asked for on "Namespaces & tables" (drop, deregister, rename, schema
metadata) and the write that performs it (data and rules: ``backend.services.lifecycle``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import backend
from backend.rules import ids
from backend.services import lifecycle as lc
from components.writes import (
    Write,
)


@dataclass(frozen=True)
class TableAction:
    """A table write: ``drop`` (deletes data), ``deregister`` (keeps it), ``rename`` (to
    ``name`` in ``namespace``), ``metadata`` (schema metadata keys to set) or
    ``remove_metadata`` (schema metadata ``keys`` to remove)."""

    kind: str
    name: str | None = None
    namespace: tuple[str, ...] | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    keys: tuple[str, ...] = ()

    def write(self, ns: Any, table_id: Sequence[str]) -> Write:
        tid, where = list(table_id), ids.display_id(table_id)
        here = (tid[:-1], None)
        if self.kind == "drop":
            return Write(
                lc.drop_table, (ns, tid), f"Dropping {tid[-1]}",
                f"Dropped table {where}: its data was deleted.", [tid], here,
            )  # fmt: skip
        if self.kind == "deregister":
            return Write(
                lc.deregister_and_check, (ns, tid), "Deregistering",
                lambda done: (
                    f"Deregistered table {where}; its files stay at its location. "
                    + lc.register_again_hint(where, done.response.location)
                ), [tid], here,
                warning=lambda done: (
                    lc.still_listed_warning(where) if done.still_listed else None
                ),
            )  # fmt: skip
        if self.kind == "rename":
            target = [*(self.namespace or ()), self.name or tid[-1]]
            return Write(
                lc.rename_table, (ns, tid, target[-1], target[:-1]), f"Renaming {tid[-1]}",
                f"Renamed table {where} to {ids.display_id(target)}.", [tid, target],
                (target[:-1], target[-1]), {"caps": backend.capabilities(ns)},
            )  # fmt: skip
        if self.kind == "remove_metadata":
            return Write(
                lc.remove_schema_metadata_keys, (ns, tid, list(self.keys)),
                "Removing metadata keys",
                f"Removed from the schema metadata of {where}: {', '.join(sorted(self.keys))}.",
                [tid], (tid[:-1], tid[-1]),
            )  # fmt: skip
        keys = ", ".join(sorted(self.metadata))
        return Write(
            lc.update_schema_metadata, (ns, tid, dict(self.metadata)), "Saving the metadata",
            f"Saved the schema metadata of {where}: {keys}.", [tid], (tid[:-1], tid[-1]),
        )  # fmt: skip
