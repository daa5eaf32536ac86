"""Reader isolation: what a batch in flight changes, per its journal, so that reads through the
namespace resolve to the last committed state until the batch's commit point.

A batch applies its steps before its commit point (``docs/batch-commit.md``): new versions are
linked into ``_versions`` (file roots) or put at their final key (object stores), deleted
versions are hidden, the catalog is committed. A reader opening a table's files then sees part
of the batch. The journal says what the batch changes, and the commit point says whether it
counts:

* file roots: the journal ``_console/batch/pending/<txn>.json`` exists and the transaction
  record is not SUCCEEDED (the record's flip to SUCCEEDED is the commit point);
* object stores: the journal exists and ``_console/batch/decided/<txn>`` does not hold
  ``committed`` (that object is the commit point);
* memory roots have no journal and one process: nothing is in flight for another reader.

:func:`in_flight` reads that (one directory listing, or one LIST, when nothing is pending), and
:meth:`InFlight.committed` turns the latest version a reader found into the last committed one.
The order matters: a reader first reads the table's latest version, then :func:`in_flight`
(a version linked by a batch was linked after its journal was written, so the journal is seen),
then reads at the version this gives (``LocalNamespace.committed_version``); a version that
vanished meanwhile (the batch rolled back) is resolved again.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from backend.rules import alter_actions as aa

from .apply import PENDING_DIR
from .catalog_ops import DROP_PREFIX
from .context import Ctx
from .journals import file_journal
from .objects import COMMITTED, DECIDED, PENDING, is_object_root, our_journal, store_for
from .records import record_status


@dataclass(frozen=True)
class Hidden:
    """A version an in-flight batch deletes: hidden from ``_versions`` until the commit point,
    kept meanwhile at ``trash`` (a path on file roots, a key under the root on object stores)."""

    version: int
    src: str  # where the manifest was (and is again after a rollback)
    trash: str


@dataclass(frozen=True)
class InFlight:
    """What the batches in flight change (object id -> versions / tables), uncommitted."""

    created: dict[str, frozenset[int]] = field(default_factory=dict)
    hidden: dict[str, tuple[Hidden, ...]] = field(default_factory=dict)
    declared: frozenset[str] = frozenset()
    transactions: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.transactions

    def committed(self, object_id: str, latest: int | None) -> int | None:
        """The last committed version of a table whose latest version on disk is ``latest``:
        ``latest`` itself unless an in-flight batch created it (then the version below the
        batch's); ``None`` when no committed version is left (a table the batch declares)."""
        if latest is None:
            return None
        mine = self.created.get(object_id, frozenset())
        version = latest
        while version in mine:
            version -= 1
        return version if version >= 1 else None

    def is_declared(self, object_id: str) -> bool:
        """A table an in-flight batch declares: it does not exist yet for readers."""
        return object_id in self.declared


NOTHING = InFlight()


def in_flight(ctx: Ctx) -> InFlight:
    """The uncommitted changes of every batch in flight on ``ctx``'s root (see the module
    docstring). Cheap when nothing is pending."""
    if ctx.is_file:
        return _file_in_flight(ctx)
    if is_object_root(ctx.root):
        return _object_in_flight(ctx)
    return NOTHING


def _collect(journals: list[tuple[str, dict[str, Any]]], hidden_of: Any) -> InFlight:
    created: dict[str, set[int]] = {}
    hidden: dict[str, list[Hidden]] = {}
    declared: set[str] = set()
    for _, j in journals:
        for v in j.get("versions") or []:
            created.setdefault(str(v["object_id"]), set()).add(int(v["version"]))
        for object_id, h in hidden_of(j):
            hidden.setdefault(object_id, []).append(h)
        for d in j.get("declares") or []:
            declared.add(str(d["object_id"]))
    return InFlight(
        created={k: frozenset(v) for k, v in created.items()},
        hidden={k: tuple(v) for k, v in hidden.items()},
        declared=frozenset(declared),
        transactions=tuple(t for t, _ in journals),
    )


def _file_in_flight(ctx: Ctx) -> InFlight:
    pending = ctx.path(PENDING_DIR)
    try:
        names = sorted(os.listdir(pending))
    except (FileNotFoundError, NotADirectoryError):
        return NOTHING
    journals: list[tuple[str, dict[str, Any]]] = []
    for name in names:
        if not name.endswith(".json") or name.startswith((".tmp-", DROP_PREFIX)):
            continue  # a journal still being written: nothing applied yet
        journal = file_journal(ctx, pending / name)
        if journal is None:
            continue  # removed meanwhile (the batch finished), or not the console's
        if record_status(ctx, journal.txn_id) == aa.SUCCEEDED:
            continue  # past its commit point: what it did counts
        journals.append((journal.txn_id, journal.to_json()))
    if not journals:
        return NOTHING

    def hidden_of(j: dict[str, Any]) -> list[tuple[str, Hidden]]:
        out = []
        for x in j.get("deletes") or []:
            for m in x.get("moves") or []:
                if m.get("src") and m.get("trash"):
                    h = Hidden(int(m["version"]), str(m["src"]), str(m["trash"]))
                    out.append((str(x["object_id"]), h))
        return out

    return _collect(journals, hidden_of)


def _object_in_flight(ctx: Ctx) -> InFlight:
    store = store_for(ctx)
    keys = store.list(PENDING)
    if not keys:
        return NOTHING
    journals: list[tuple[str, dict[str, Any]]] = []
    for key in sorted(keys):
        got = store.get(key)
        if got is None:
            continue
        data = our_journal(key, got[0])
        if data is None:
            continue  # not the console's: nothing of it is hidden (journals)
        txn_id = data["txn_id"]
        decided = store.get(f"{DECIDED}{txn_id}")
        if decided is not None and decided[0] == COMMITTED:
            continue
        journals.append((txn_id, data))
    if not journals:
        return NOTHING

    def hidden_of(j: dict[str, Any]) -> list[tuple[str, Hidden]]:
        return [
            (str(m["object_id"]), Hidden(int(m["version"]), str(m["src"]), str(m["trash"])))
            for m in j.get("deletes") or []
        ]

    return _collect(journals, hidden_of)
