"""BatchCommitTables on object stores (``s3://``, ``gs://``, ``az://``): conditional writes
instead of rename, link and flock. Design and limits: ``docs/batch-commit.md``.

Objects under the root's ``_console/batch/``:

* ``lease.json`` - the writers' lock, a lease: created with If-None-Match, it names its owner
  and an expiry; an expired lease is taken over with If-Match on its ETag, so a dead writer
  blocks others for at most :func:`lease_seconds` (30 s by default);
* ``pending/<txn>.json`` - the journal: every step and what undoing it needs, written before
  the first change;
* ``decided/<txn>`` - **the commit point**: one object created with If-None-Match, holding
  ``committed`` (by the committer) or ``aborted`` (by a recovering writer that found the
  journal of a writer whose lease expired). Whoever creates it first decides; the other side
  follows it, so a slow committer and a recoverer can never both win;
* ``work/<txn>/...`` - manifests a delete hides until the decision.

Apply: reserved markers of declared tables, each new version's manifest created at its final
name with If-None-Match (Lance's own commit rule, so a version that appeared meanwhile fails the
batch), hidden manifests copied to ``work/`` then deleted, then one Lance commit of the catalog
(declared rows in, deregistered rows out). Then the decision object. The batch's own
conditional writes are constant: the lease, the journal, the decision (plus the release).

Recovery (on open and before every batch): for each journal, the decision decides; without one,
and once no live lease covers it, ``aborted`` is written and every step is undone
(content-checked, idempotent).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import socket
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from lance_namespace.errors import ErrorCode

from backend.rules import alter_actions as aa
from backend.rules.location_rules import object_key

from ...locations import object_manifest_key, taken_folder
from .catalog import (
    Expected,
    bootstrap_catalog,
    catalog_commit,
    catalog_unapplied,
    catalog_undo,
    check_staged_bytes,
    declared_row,
    manifest_message,
    manifest_name,
    read_catalog,
)
from .context import RESERVED_BYTES, RESERVED_FILE, Ctx, error
from .failures import as_namespace_error, reason_of
from .faults import Steps, fire
from .journals import LEFT, NotOurs, object_journal
from .plan import Plan
from .records import (
    base_record,
    catalog_retries_props,
    new_txn_id,
    now_iso,
    put_final,
    put_running,
)
from .staged_files import check_staged_files

LEASE_SECONDS = 30.0  # default lease; LANCE_CONSOLE_LEASE_SECONDS overrides it


def lease_seconds() -> float:
    try:
        return float(os.environ.get("LANCE_CONSOLE_LEASE_SECONDS", LEASE_SECONDS))
    except ValueError:
        return LEASE_SECONDS


LEASE = "_console/batch/lease.json"
PENDING = "_console/batch/pending/"
DECIDED = "_console/batch/decided/"
WORK = "_console/batch/work/"
COMMITTED, ABORTED = b"committed", b"aborted"


# -- the store ---------------------------------------------------------------------------------


class Store:
    """The root as an object store: keys relative to the root, conditional writes."""

    def __init__(self, root: str, storage_options: dict[str, str]):
        import obstore

        from ..object_store import open_root

        self._obs = obstore
        self.root = root.rstrip("/")
        # the console's one object-store layer (lance's options and environment)
        self.store = open_root(self.root, storage_options)
        self.requests = 0  # object-store requests made (benchmarks, tests)
        self.conditional = 0  # of which conditional writes
        self.protocol_writes = 0  # conditional writes of the protocol's own objects

    def create(self, key: str, data: bytes) -> str | None:
        """PUT If-None-Match: the new ETag, or ``None`` when the object already exists."""
        from obstore.exceptions import AlreadyExistsError

        self._count_write(key)
        try:
            return str(self._obs.put(self.store, key, data, mode="create")["e_tag"])
        except AlreadyExistsError:
            return None

    def replace(self, key: str, data: bytes, etag: str) -> str | None:
        """PUT If-Match ``etag``: the new ETag, or ``None`` when the object changed."""
        from obstore.exceptions import PreconditionError

        self._count_write(key)
        try:
            return str(self._obs.put(self.store, key, data, mode={"e_tag": etag})["e_tag"])
        except (PreconditionError, FileNotFoundError):
            return None

    def _count_write(self, key: str) -> None:
        self.requests += 1
        self.conditional += 1
        if key.startswith("_console/batch/"):
            self.protocol_writes += 1

    def get(self, key: str) -> tuple[bytes, str] | None:
        self.requests += 1
        try:
            res = self._obs.get(self.store, key)
        except FileNotFoundError:
            return None
        return bytes(res.bytes()), str(res.meta["e_tag"])

    def exists(self, key: str) -> bool:
        """HEAD: whether the object exists."""
        self.requests += 1
        try:
            self._obs.head(self.store, key)
        except FileNotFoundError:
            return False
        return True

    def delete(self, key: str) -> None:
        self.requests += 1
        with contextlib.suppress(FileNotFoundError):
            self._obs.delete(self.store, key)

    def list(self, prefix: str) -> list[str]:
        self.requests += 1
        return [m["path"] for batch in self._obs.list(self.store, prefix) for m in batch]

    def holds(self, prefix: str) -> bool:
        """Whether any object lies under the directory ``prefix`` (one LIST of one key)."""
        self.requests += 1
        first = itertools.islice(self._obs.list(self.store, prefix, chunk_size=1), 1)
        return any(len(batch) for batch in first)

    def key(self, location: str) -> str:
        """The key (relative to the root) of a catalog location or a URL/path under it."""
        if "://" in location:
            parsed, root = urlparse(location), urlparse(self.root)
            path = parsed.path.lstrip("/")
            if parsed.netloc != root.netloc:
                raise error(ErrorCode.INVALID_INPUT, f"{location!r} is outside the namespace root")
        else:
            path = location.lstrip("/")
            root = urlparse(self.root)
            bucket_rel = f"{root.netloc}/{root.path.lstrip('/')}".rstrip("/") + "/"
            if path.startswith(bucket_rel):  # "bucket/root/..." as pylance reports paths
                return _inside(path[len(bucket_rel) :], location)
            prefix = root.path.strip("/")
            if prefix and not path.startswith(prefix + "/"):
                return _inside(path, location)  # already relative to the root
        prefix = urlparse(self.root).path.strip("/")
        if prefix:
            if not path.startswith(prefix + "/"):
                raise error(ErrorCode.INVALID_INPUT, f"{location!r} is outside the namespace root")
            path = path[len(prefix) + 1 :]
        return _inside(path, location)


def _inside(key: str, shown: str) -> str:
    parts = key.split("/")
    if not key or any(p in ("", ".", "..") for p in parts):
        raise error(ErrorCode.INVALID_INPUT, f"{shown!r} is not a key under the namespace root")
    return key


def read_staged_object(
    ctx: Ctx, table_location: str, manifest_path: str, version: int, size: int | None
) -> tuple[str, bytes]:
    """The staged manifest of version ``version`` of the table at ``table_location``, checked
    (single CreateTableVersion and batches alike): its key passes the staged-manifest rule
    (``backend.locations.object_manifest_key``), the object exists and is a Lance manifest of
    exactly ``version`` (of ``size`` bytes when given) whose files are there (``staged_files``).
    ``(key relative to the root, bytes)``; ``InvalidInputError`` otherwise; nothing is
    written."""
    key, problem = object_manifest_key(ctx.root, table_location, manifest_path)
    if problem:
        raise error(ErrorCode.INVALID_INPUT, problem)
    assert key is not None
    store = store_for(ctx)
    got = store.get(key)
    if got is None:
        raise error(
            ErrorCode.INVALID_INPUT, f"the staged manifest {manifest_path!r} does not exist"
        )
    check_staged_bytes(manifest_path, got[0], version, size)
    table = store.key(table_location).rstrip("/")
    check_staged_files(
        f"{store.root}/{table}",
        manifest_message(got[0]) or b"",
        version,
        ctx.storage_options,
        lambda rel: store.exists(f"{table}/{rel}"),
    )
    return key, got[0]


def foreign_prefix_problem(store: Store, key: str) -> str | None:
    """Why a new table may not take the prefix ``key`` (``<name>.lance``, relative to the
    root): objects lie under it and they are not a table's (``backend.locations``'s rule for
    folders, applied to a prefix). One LIST for a free prefix; at most a LIST and a HEAD more
    where objects lie."""
    if not store.holds(key):
        return None
    if store.holds(f"{key}/_versions") or store.exists(f"{key}/{RESERVED_FILE}"):
        return None  # a table's objects
    return taken_folder(key.rsplit("/", 1)[-1])


def bucket_path(ctx: Ctx, key: str) -> str:
    """The path inside the bucket (how Lance reads a manifest path) of a key of the root."""
    return object_key(ctx.root, key.split("/"))


def store_for(ctx: Ctx) -> Store:
    store = getattr(ctx.ns, "_object_store", None)
    if not isinstance(store, Store):
        store = Store(ctx.root, ctx.storage_options)
        with contextlib.suppress(AttributeError):
            ctx.ns._object_store = store
    return store


# -- the lease ---------------------------------------------------------------------------------


@dataclass
class Lease:
    store: Store
    owner: str
    etag: str | None = None
    expires: float = 0.0

    def _body(self) -> bytes:
        self.expires = time.time() + lease_seconds()
        return json.dumps({"owner": self.owner, "expires": self.expires}).encode()

    def try_acquire(self) -> bool:
        """Take the lease if it is free or expired (never waits)."""
        self.etag = self.store.create(LEASE, self._body())
        if self.etag is not None:
            return True
        current = self.store.get(LEASE)
        if current is None:
            self.etag = self.store.create(LEASE, self._body())
            return self.etag is not None
        data, etag = current
        try:
            expires = float(json.loads(data)["expires"])
        except (ValueError, KeyError, TypeError):
            expires = 0.0
        if expires > time.time():
            return False
        fire("lease.takeover", etag)
        self.etag = self.store.replace(LEASE, self._body(), etag)
        return self.etag is not None

    def acquire(self, timeout: float) -> None:
        deadline = time.time() + timeout
        delay = 0.02
        while not self.try_acquire():
            if time.time() > deadline:
                raise error(
                    ErrorCode.CONCURRENT_MODIFICATION,
                    "another batch holds the namespace's lease; try again",
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.5)

    def release(self) -> None:
        current = self.store.get(LEASE)
        if current is not None and current[1] == self.etag:
            self.store.delete(LEASE)


def owner_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@contextlib.contextmanager
def leased(ctx: Ctx, timeout: float | None = None) -> Iterator[Lease]:
    lease = Lease(store_for(ctx), owner_id())
    lease.acquire(lease_seconds() * 2 if timeout is None else timeout)
    try:
        yield lease
    finally:
        with contextlib.suppress(Exception):
            lease.release()


# -- the journal -------------------------------------------------------------------------------


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_journal(ctx: Ctx, store: Store, plan: Plan, txn_id: str, record: dict) -> dict:
    """The plan with object keys and what undoing each step needs (the staged manifests were
    checked and read by validation)."""
    catalog: dict[str, dict[str, Any]] = {}

    def row_location(object_id: str) -> str:
        """The catalog location of an existing table (the catalog read once, when needed)."""
        if not catalog:
            catalog.update(read_catalog(ctx).rows)
        row = catalog.get(object_id)
        if not row or not row.get("location"):
            raise error(ErrorCode.TABLE_NOT_FOUND, f"table {object_id} not found")
        return str(row["location"])

    declares = []
    for d in plan.declares:
        reserved = f"{store.key(d.location)}/{RESERVED_FILE}"
        existed = store.get(reserved) is not None
        declares.append(
            {
                "id": d.id,
                "object_id": d.object_id,
                "location": d.location,
                "properties": d.properties,
                "reserved": reserved,
                "reserved_existed": existed,
            }
        )
    versions = []
    for v in plan.versions:
        # Checked and read by validation (read_staged_object): those bytes are what is written.
        assert v.staged is not None and v.table_path is not None and v.sha256 is not None
        versions.append(
            {
                "index": v.index,
                "object_id": v.object_id,
                "version": v.version,
                "staged": v.staged,
                "final": f"{v.table_path}/_versions/{manifest_name(v.version, v.naming_scheme)}",
                "sha256": v.sha256,
            }
        )
    deletes = []
    for x in plan.deletes:
        if not x.moves:
            continue
        table = store.key(row_location(x.object_id))
        names = {_parse(k): k for k in store.list(f"{table}/_versions/") if _parse(k) is not None}
        for m in x.moves:
            if m.version in names:
                deletes.append(
                    {
                        "object_id": x.object_id,
                        "version": m.version,
                        "src": names[m.version],
                        "trash": f"{WORK}{txn_id}/d{x.index}-{m.version}.manifest",
                    }
                )
    return {
        "format": 1,
        "txn_id": txn_id,
        "record": record,
        "declares": declares,
        "versions": versions,
        "deletes": deletes,
        "deregisters": [g.row for g in plan.deregisters],
    }


def _parse(key: str) -> int | None:
    from .catalog import parse_manifest_name

    return parse_manifest_name(key.rsplit("/", 1)[-1])


# -- commit ------------------------------------------------------------------------------------


def commit_objects(ctx: Ctx, plan: Plan, conflicts: Any) -> str:
    """The protocol of the module docstring; returns the transaction id."""
    store = store_for(ctx)
    txn_id = new_txn_id()
    steps = Steps()
    with leased(ctx) as lease:
        recover_objects(ctx, store, steps)
        base = base_record(plan, txn_id, now_iso())
        conflict = conflicts(ctx, plan)
        if conflict:
            put_final(ctx, txn_id, base, aa.FAILED, conflict)
            raise error(
                ErrorCode.CONCURRENT_MODIFICATION, f"batch {txn_id} not applied: {conflict}"
            )
        if plan.needs_catalog:
            bootstrap_catalog(ctx)
        journal = make_journal(ctx, store, plan, txn_id, base)
        steps("begin.journal", txn_id)
        store.create(f"{PENDING}{txn_id}.json", json.dumps(journal).encode())
        try:
            steps("begin.record", txn_id)
            put_running(ctx, txn_id, base)
            retries = _apply(
                ctx,
                store,
                journal,
                plan.staged_bytes,
                steps,
                Expected.of(plan.tokens, plan.namespaces),
            )
            if time.time() > lease.expires - 1.0:  # renew before deciding
                renewed = store.replace(LEASE, lease._body(), str(lease.etag))
                if renewed is None:
                    raise error(ErrorCode.CONCURRENT_MODIFICATION, "the batch's lease expired")
                lease.etag = renewed
            steps("commit.decide", txn_id)
            if (
                store.create(f"{DECIDED}{txn_id}", COMMITTED) is None
                and _decision(store, txn_id) != COMMITTED
            ):
                raise error(
                    ErrorCode.CONCURRENT_MODIFICATION,
                    "the batch's lease expired and another writer aborted it",
                )
        except BaseException as exc:
            _rollback(ctx, store, journal, steps, exc)
            if not isinstance(exc, Exception):
                raise
            raise as_namespace_error(exc, txn_id) from exc
        with contextlib.suppress(Exception):
            put_final(ctx, txn_id, base, aa.SUCCEEDED, None, extra=catalog_retries_props(retries))
            _cleanup(store, journal, steps, committed=True)
    return txn_id


def _apply(
    ctx: Ctx,
    store: Store,
    j: dict,
    staged: dict[int, bytes],
    steps: Steps,
    expected: Expected | None = None,
) -> int | None:
    """Every change of the journal ``j``; returns the catalog commit's retries (``None``: no
    catalog commit). A catalog commit lost to another writer is judged again with
    ``expected`` and retried (``catalog.catalog_commit``)."""
    for d in j["declares"]:
        if not d["reserved_existed"]:
            steps("apply.declare.reserve", d["object_id"])
            store.create(d["reserved"], RESERVED_BYTES)
    for v in j["versions"]:
        steps("apply.version.put", f"{v['object_id']} v{v['version']}")
        if store.create(v["final"], staged[v["index"]]) is None:
            raise error(
                ErrorCode.CONCURRENT_MODIFICATION,
                f"version {v['version']} of table {v['object_id']} appeared while the batch "
                "committed",
            )
    for m in j["deletes"]:
        got = store.get(m["src"])
        if got is None:
            raise error(
                ErrorCode.CONCURRENT_MODIFICATION,
                f"version {m['version']} of table {m['object_id']} disappeared while the batch "
                "committed",
            )
        steps("apply.delete.hide", f"{m['object_id']} v{m['version']}")
        store.create(m["trash"], got[0])
        store.delete(m["src"])
    if j["declares"] or j["deregisters"]:
        steps("apply.catalog", f"+{len(j['declares'])} -{len(j['deregisters'])}")
        rows = [declared_row(d["object_id"], d["location"], d["properties"]) for d in j["declares"]]
        return catalog_commit(
            ctx, rows, [r["object_id"] for r in j["deregisters"]], expected=expected
        )
    return None


def _undo(ctx: Ctx, store: Store, j: dict, steps: Steps, *, catalog: bool = True) -> None:
    """Idempotent and content-checked: only what this batch wrote goes. ``catalog=False``:
    the catalog commit is known not to have landed, the catalog is left alone."""
    if catalog:
        catalog_undo(
            ctx,
            [(d["object_id"], d["location"]) for d in j["declares"]],
            list(j["deregisters"]),
            steps,
            None,
        )
    for m in reversed(j["deletes"]):
        if store.get(m["src"]) is None:
            trash = store.get(m["trash"])
            if trash is not None:
                steps("undo.delete.restore", f"{m['object_id']} v{m['version']}")
                store.create(m["src"], trash[0])
    for v in reversed(j["versions"]):
        got = store.get(v["final"])
        if got is not None and _sha(got[0]) == v["sha256"]:
            steps("undo.version.remove", f"{v['object_id']} v{v['version']}")
            store.delete(v["final"])
    for d in reversed(j["declares"]):
        if not d["reserved_existed"]:
            steps("undo.declare.unreserve", d["object_id"])
            store.delete(d["reserved"])


def _cleanup(store: Store, j: dict, steps: Steps, *, committed: bool) -> None:
    for m in j["deletes"]:  # committed: the deletes stand; aborted: undo restored them
        steps("cleanup.trash", m["trash"])
        store.delete(m["trash"])
    if committed:
        for v in j["versions"]:  # consumed staged manifests, as on file roots
            if v["staged"].startswith("_staging/"):
                steps("cleanup.staged", v["staged"])
                store.delete(v["staged"])
    steps("cleanup.journal", j["txn_id"])
    store.delete(f"{PENDING}{j['txn_id']}.json")
    store.delete(f"{DECIDED}{j['txn_id']}")


def _rollback(ctx: Ctx, store: Store, j: dict, steps: Steps, exc: BaseException) -> None:
    if (
        store.create(f"{DECIDED}{j['txn_id']}", ABORTED) is None
        and _decision(store, j["txn_id"]) == COMMITTED
    ):
        return  # decided committed (cannot happen from the committer itself; kept for safety)
    _undo(ctx, store, j, steps, catalog=not catalog_unapplied(exc))
    steps("rollback.record", j["txn_id"])
    put_final(
        ctx,
        j["txn_id"],
        j["record"],
        aa.FAILED,
        f"rolled back: {reason_of(exc)}",
        extra=catalog_retries_props(getattr(exc, "catalog_retries", None)),
    )
    _cleanup(store, j, steps, committed=False)


def _decision(store: Store, txn_id: str) -> bytes | None:
    got = store.get(f"{DECIDED}{txn_id}")
    return got[0] if got else None


def our_journal(key: str, data: bytes) -> dict | None:
    """The journal at ``key`` when this console wrote it (``journals.object_journal``),
    else ``None``, said once in the log."""
    try:
        return object_journal(key, data, pending=PENDING, work=WORK, reserved=RESERVED_FILE)
    except NotOurs as exc:
        LEFT.say(key, str(exc))
        return None


RECOVERED_REASON = (
    "the committing process stopped before the commit point (crash, kill or an expired "
    "lease); rolled back on recovery"
)


def recover_objects(ctx: Ctx, store: Store, steps: Steps) -> list[str]:
    """Finish or roll back the journals of dead writers. Caller holds the lease."""
    done = []
    for key in store.list(PENDING):
        got = store.get(key)
        if got is None:
            continue
        j = our_journal(key, got[0])
        if j is None:
            continue  # not written by this console: left as it is (journals.leave)
        txn_id = j["txn_id"]
        # The lease is ours: the journal's writer is dead or its lease expired. Decide.
        decision = _decision(store, txn_id)
        if decision is None:
            steps("recover.decide", txn_id)
            if store.create(f"{DECIDED}{txn_id}", ABORTED) is None:
                decision = _decision(store, txn_id)
            else:
                decision = ABORTED
        if decision == COMMITTED:
            put_final(ctx, txn_id, j["record"], aa.SUCCEEDED, None)
            _cleanup(store, j, steps, committed=True)
        else:
            _undo(ctx, store, j, steps)
            steps("recover.record", txn_id)
            put_final(ctx, txn_id, j["record"], aa.FAILED, RECOVERED_REASON, recovered=True)
            _cleanup(store, j, steps, committed=False)
        done.append(txn_id)
    return done


def recover_on_open(ctx: Ctx) -> list[str]:
    """Recovery when a namespace on an object store is opened: one LIST when there is nothing
    to do (or only journals this process left as they are, ``journals``); never waits for a
    live lease."""
    store = store_for(ctx)
    if all(key in LEFT for key in store.list(PENDING)):
        return []  # nothing pending, or only files left as they are: no lease to take
    lease = Lease(store, owner_id())
    if not lease.try_acquire():
        return []
    try:
        return recover_objects(ctx, store, Steps())
    finally:
        with contextlib.suppress(Exception):
            lease.release()


def is_object_root(root: str) -> bool:
    return urlparse(root).scheme.lower() not in ("", "file", "memory")
