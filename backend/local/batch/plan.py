"""The typed plan of a batch and its journal.

Validation turns the request into a :class:`Plan`: one step per operation, grouped by kind,
with what the apply phase needs (locations, staged manifests and their checksums, the
manifests a delete hides). Beginning the commit turns the plan into a :class:`Journal`: the
same steps plus what undoing each needs (did the directory exist, where the temporary and
hidden files go). The journal is written durably before the first change; recovery reads it
back with :meth:`Journal.from_json`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from backend.rules.batch_rules import Op

JOURNAL_FORMAT = 1


@dataclass
class DeclareStep:
    index: int
    id: list[str]
    object_id: str
    location: str
    properties: dict[str, str] | None
    path: str | None = None  # the table directory (file roots)
    dir_existed: bool = False
    reserved_existed: bool = False


@dataclass
class VersionStep:
    index: int
    id: list[str]
    object_id: str
    version: int
    naming_scheme: str
    manifest_path: str
    staged: str | None = None  # file roots: the staged manifest, its final path, checksum
    final: str | None = None
    table_path: str | None = None
    sha256: str | None = None
    size: int | None = None
    tmp: str | None = None  # journal: where the manifest is written before its link
    alt_tmp: str | None = None  # ... next to the table when the work dir is elsewhere
    versions_dir_existed: bool = True


@dataclass
class Move:
    version: int
    src: str | None = None  # the manifest hidden by the delete (file roots)
    trash: str | None = None  # where it waits for the commit (journal)


@dataclass
class DeleteStep:
    index: int
    id: list[str]
    object_id: str
    ranges: list[dict[str, int]]
    moves: list[Move]
    deleted_count: int


@dataclass
class DeregisterStep:
    index: int
    id: list[str]
    object_id: str
    row: dict[str, Any]
    location: str | None


@dataclass
class Plan:
    ops: list[Op]
    declares: list[DeclareStep] = field(default_factory=list)
    versions: list[VersionStep] = field(default_factory=list)
    deletes: list[DeleteStep] = field(default_factory=list)
    deregisters: list[DeregisterStep] = field(default_factory=list)
    tokens: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # table -> state read
    namespaces: dict[str, bool] = field(default_factory=dict)  # namespace -> existed
    staged_bytes: dict[int, bytes] = field(default_factory=dict)  # op index -> manifest

    @property
    def needs_catalog(self) -> bool:
        return bool(self.declares or self.deregisters)


@dataclass
class Journal:
    txn_id: str
    record: dict[str, Any]
    declares: list[DeclareStep]
    versions: list[VersionStep]
    deletes: list[DeleteStep]
    deregisters: list[DeregisterStep]
    format: int = JOURNAL_FORMAT

    @property
    def catalog_declared(self) -> list[tuple[str, str]]:
        return [(d.object_id, d.location) for d in self.declares]

    @property
    def catalog_restored(self) -> list[dict[str, Any]]:
        return [g.row for g in self.deregisters]

    def to_json(self) -> dict[str, Any]:
        """The journal as JSON-ready data (the steps hold plain values; a delete's moves are
        dataclasses too). Shallow copies: ``dataclasses.asdict`` deep-copies every value,
        which costs more than the rest of a 1,000-declare batch's journal."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for name in ("declares", "versions", "deregisters"):
            out[name] = [dict(vars(step)) for step in out[name]]
        out["deletes"] = [
            {**vars(x), "moves": [dict(vars(m)) for m in x.moves]} for x in self.deletes
        ]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Journal:
        if data.get("format") != JOURNAL_FORMAT:
            raise ValueError(f"unknown journal format {data.get('format')!r}")
        deletes = [
            DeleteStep(**{**d, "moves": [Move(**m) for m in d.get("moves") or []]})
            for d in data.get("deletes") or []
        ]
        return cls(
            txn_id=data["txn_id"],
            record=data["record"],
            declares=[DeclareStep(**d) for d in data.get("declares") or []],
            versions=[VersionStep(**v) for v in data.get("versions") or []],
            deletes=deletes,
            deregisters=[DeregisterStep(**g) for g in data.get("deregisters") or []],
        )
