"""The namespace's catalog (``__manifest``) and the tables' ``_versions`` directories as the
batch protocol reads and writes them.

* manifest file names (V1 / V2) and the version recorded inside a manifest;
* :class:`Reader` - one read of the catalog plus lazily listed table versions; it is the
  ``backend.rules.batch_rules.CatalogView`` the commit validates against, and it gives every table
  touched a *token* (catalog row, versions, latest manifest's size and mtime) so that a change
  between validation and commit is seen;
* :func:`catalog_commit` / :func:`catalog_undo` - one Lance commit of ``__manifest`` inserting
  declared rows and deleting deregistered ones, and its undo. Writers outside the console
  (pylance, lancedb) commit the catalog without the console's lock: a commit that loses to one
  of them is judged again against the catalog it lost to (:class:`Expected`) and retried with
  :data:`CATALOG_RETRY`'s backoff (docs/batch-commit.md, "Conflicts with other writers").
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import struct
import time
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
from lance_namespace import CreateNamespaceRequest, DropNamespaceRequest, ListTableVersionsRequest
from lance_namespace.errors import ErrorCode, LanceNamespaceError

from backend.rules import ids, version_ranges
from backend.spec import catalog_views

from ...backoff import Backoff
from ...errors import invalid, is_commit_conflict
from ...locations import local_path_text, manifest_problem, to_local_path
from ...rules.location_rules import CATALOG_DIR
from ...text import is_digits, some_of
from .context import Ctx, error, oid
from .durable import Durable
from .faults import Steps
from .staged_files import check_staged_files

MAX_VERSION = version_ranges.LAST_VERSION  # the highest version a table has
U64_MAX = 2**64 - 1


def manifest_name(version: int, naming_scheme: str | None = None) -> str:
    """``_versions`` file name of ``version``: V2 (default, inverted, 20 digits) or V1."""
    if (naming_scheme or "V2").upper() == "V1":
        return f"{version}.manifest"
    return f"{U64_MAX - version:020d}.manifest"


def manifest_versions(names: Iterable[str]) -> dict[int, str]:
    """``{version: name}`` of the ``_versions`` file names that stand for a version (V1 or V2
    names); the others are left out, also a name no version has (a stray file: beyond u64,
    or a version outside 1 to 2^63 - 1, which a V2 name of a small number gives). The one
    reader of manifest names, one loop: 100,000 names in a few tens of ms."""
    found: dict[int, str] = {}
    for name in names:
        if name.endswith(".manifest"):
            stem = name[:-9]
            if is_digits(stem):
                number = int(stem)
                version = U64_MAX - number if len(stem) == 20 else number
                if 1 <= version <= MAX_VERSION:
                    found[version] = name
    return found


def parse_manifest_name(name: str) -> int | None:
    """The version a ``_versions`` file name stands for, or None (:func:`manifest_versions`)."""
    return next(iter(manifest_versions((name,))), None)


def manifest_message(data: bytes) -> bytes | None:
    """The protobuf ``Manifest`` message inside a Lance manifest file, or None if it is not
    one. Layout: the message (u32 length prefix) at the offset given by the 16-byte footer
    ``<u64 offset><u16 major><u16 minor>LANC``."""
    if len(data) < 20 or data[-4:] != b"LANC":
        return None
    (pos,) = struct.unpack_from("<Q", data, len(data) - 16)
    if pos + 4 > len(data) - 16:
        return None
    (length,) = struct.unpack_from("<I", data, pos)
    msg = data[pos + 4 : pos + 4 + length]
    return msg if len(msg) == length else None


def manifest_version(data: bytes) -> int | None:
    """The version recorded inside a Lance manifest file (:func:`manifest_message`), or None
    if it is not one; ``version`` is the message's field 3 (varint)."""
    msg = manifest_message(data)
    if msg is None:
        return None
    i, version = 0, 0

    def varint() -> int:
        nonlocal i
        shift = result = 0
        while True:
            if i >= len(msg) or shift > 63:
                raise ValueError("truncated varint")
            b = msg[i]
            i += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    try:
        while i < len(msg):
            key = varint()
            field, wire = key >> 3, key & 7
            if wire == 0:
                value = varint()
                if field == 3:
                    version = value
            elif wire == 1:
                i += 8
            elif wire == 2:
                size = varint()
                i += size
            elif wire == 5:
                i += 4
            else:
                return None
            if i > len(msg):
                return None
    except ValueError:
        return None
    return version


def read_staged_manifest(
    root: Path, table_path: Path, manifest_path: str, version: int, size: int | None
) -> tuple[Path, bytes]:
    """The staged manifest of version ``version`` of the table in ``table_path``, checked:
    inside the staging areas (``backend.locations.manifest_problem``), readable, a Lance
    manifest recording exactly ``version``, of ``size`` bytes when given, whose files are there
    (``staged_files``). ``InvalidInputError`` otherwise; nothing is written."""
    problem = manifest_problem(root, table_path, manifest_path)
    if problem:
        raise invalid(problem)
    staged = to_local_path(manifest_path) or Path("/" + manifest_path.lstrip("/"))
    try:
        data = staged.read_bytes()
    except OSError as e:
        raise invalid(f"the staged manifest is unreadable: {e.strerror}") from None
    check_staged_bytes(manifest_path, data, version, size)
    check_staged_files(
        str(table_path),
        manifest_message(data) or b"",
        version,
        None,
        lambda rel: (table_path / rel).exists(),
    )
    return staged, data


def check_staged_bytes(manifest_path: str, data: bytes, version: int, size: int | None) -> None:
    """``InvalidInputError`` unless ``data`` (read from ``manifest_path``) is a Lance manifest
    recording exactly ``version``, of ``size`` bytes when given (every kind of root)."""
    found = manifest_version(data)
    if found is None:
        raise invalid(f"{manifest_path!r} is not a Lance manifest")
    if found != version:
        raise invalid(f"the staged manifest is for version {found}, not {version}")
    if size is not None and size != len(data):
        raise invalid(
            f"manifest_size {size} does not match the staged manifest ({len(data)} bytes)"
        )


def list_versions(path: Path) -> tuple[dict[int, str], tuple[int, int] | None]:
    """``({version: manifest file name}, (size, mtime_ns) of the latest)`` of a table dir."""
    try:
        names = os.listdir(path / "_versions")
    except (FileNotFoundError, NotADirectoryError):
        return {}, None
    versions: dict[int, str] = {}
    for name in names:
        v = parse_manifest_name(name)
        if v is not None:
            versions[v] = name
    stat = None
    if versions:
        with contextlib.suppress(FileNotFoundError):
            st = (path / "_versions" / versions[max(versions)]).stat()
            stat = (st.st_size, st.st_mtime_ns)
    return versions, stat


# -- reading --------------------------------------------------------------------------------------
def open_catalog(ctx: Ctx) -> lance.LanceDataset | None:
    try:
        return lance.dataset(
            ctx.manifest_uri(), storage_options=ctx.storage_options or None, session=ctx.session
        )
    except (ValueError, OSError) as e:
        if "not found" in str(e).lower():
            return None
        raise


@dataclasses.dataclass
class Catalog:
    rows: dict[str, dict[str, Any]]
    schema: pa.Schema | None

    def namespace_exists(self, ns_id: Sequence[str]) -> bool:
        if not ns_id:
            return True
        row = self.rows.get(oid(ns_id))
        return row is not None and row.get("object_type") == "namespace"

    def table_locations(self) -> dict[str, str]:
        return {
            k: r["location"]
            for k, r in self.rows.items()
            if r.get("object_type") == "table" and r.get("location")
        }

    def table_dirs(self, local_path: Path | None, *, skip: Iterable[str] = ()) -> list[str]:
        """The directories of the catalog's tables on the file root ``local_path`` (a relative
        location is taken from it), as text, but those whose object ids are in ``skip``;
        locations that are not local paths are left out."""
        left_out = set(skip)
        out = []
        for key, location in self.table_locations().items():
            path = local_path_text(location, local_path)
            if path is not None and key not in left_out:
                out.append(path)
        return out


def read_catalog(ctx: Ctx, ds: lance.LanceDataset | None = None) -> Catalog:
    """The catalog's rows (``ds``: the catalog already opened, at the version to read)."""
    ds = ds if ds is not None else open_catalog(ctx)
    if ds is None:
        return Catalog(rows={}, schema=None)
    rows = {r["object_id"]: r for r in ds.to_table().to_pylist()}
    return Catalog(rows=rows, schema=ds.schema)


@dataclasses.dataclass
class TableState:
    object_id: str
    row: dict[str, Any] | None
    path: Path | None  # local directory (file roots)
    versions: dict[int, str]  # version -> manifest file name ("" on memory roots)
    latest_stat: tuple[int, int] | None

    @property
    def is_table(self) -> bool:
        return self.row is not None and self.row.get("object_type") == "table"

    def token(self) -> tuple[Any, ...]:
        row = self.row or {}
        return (
            row.get("object_type"),
            row.get("location"),
            tuple(sorted(self.versions)),
            self.latest_stat,
        )


class Reader:
    """One consistent-enough read of the catalog plus lazily listed table versions."""

    def __init__(self, ctx: Ctx):
        self.ctx = ctx
        self.catalog = read_catalog(ctx)
        self._states: dict[str, TableState] = {}

    def state(self, object_id: str) -> TableState:
        if object_id in self._states:
            return self._states[object_id]
        row = self.catalog.rows.get(object_id)
        path = None
        versions: dict[int, str] = {}
        stat = None
        if row is not None and row.get("object_type") == "table":
            if self.ctx.is_file:
                path = self.ctx.table_path(row["location"])
                versions, stat = list_versions(path)
            else:
                versions = self._api_versions(object_id)
        st = TableState(object_id, row, path, versions, stat)
        self._states[object_id] = st
        return st

    def _api_versions(self, object_id: str) -> dict[int, str]:
        try:
            resp = self.ctx.directory.list_table_versions(
                ListTableVersionsRequest(id=ids.parse_object_id(object_id))
            )
        except LanceNamespaceError as e:
            if e.code == ErrorCode.TABLE_NOT_FOUND:  # declared only: no dataset yet
                return {}
            raise
        return {v.version: "" for v in resp.versions}

    def tokens(self, object_ids: Sequence[str]) -> dict[str, tuple[Any, ...]]:
        return {o: self.state(o).token() for o in object_ids}

    # backend.rules.batch_rules.CatalogView
    def namespace_exists(self, namespace_id: Sequence[str]) -> bool:
        return self.catalog.namespace_exists(namespace_id)

    def table_exists(self, table_id: Sequence[str]) -> bool:
        return self.state(oid(table_id)).is_table

    def versions(self, table_id: Sequence[str]) -> set[int]:
        return set(self.state(oid(table_id)).versions)

    def tags(self, table_id: Sequence[str]) -> dict[int, list[str]]:
        if not self.state(oid(table_id)).versions:
            return {}  # declared only: no dataset, no tags
        return catalog_views.table_tags(self.ctx.directory, list(table_id))


# -- judging a catalog again ---------------------------------------------------------------------
def namespace_changes(catalog: Catalog, namespaces: dict[str, bool]) -> list[str]:
    """``namespace <id>`` for each namespace whose existence in ``catalog`` is not what it was
    (``namespaces``: object id -> existed)."""
    return [
        f"namespace {ns}"
        for ns, existed in namespaces.items()
        if catalog.namespace_exists(ids.parse_object_id(ns)) != existed
    ]


def _row_key(row: dict[str, Any] | None) -> tuple[Any, Any]:
    row = row or {}
    return row.get("object_type"), row.get("location")


def _what_changed(before: tuple[Any, Any], after: tuple[Any, Any]) -> str:
    if before[0] is None:
        return f"created as a {after[0]} by another writer"
    if after[0] is None:
        return "dropped or deregistered by another writer"
    return "changed by another writer"


@dataclasses.dataclass(frozen=True)
class Expected:
    """What the batch's judgement saw of the catalog for everything it touches: each touched
    object's row (type and location; none for a name it declares) and whether each parent
    namespace existed. The catalog part of the validation tokens (``TableState.token``): the
    versions part is not judged again after a lost catalog commit, because the batch's own
    version steps are already applied by then, each with a put-if-absent."""

    rows: dict[str, tuple[Any, Any]]
    namespaces: dict[str, bool]

    @classmethod
    def of(cls, tokens: dict[str, tuple[Any, ...]], namespaces: dict[str, bool]) -> Expected:
        return cls({o: (t[0], t[1]) for o, t in tokens.items()}, dict(namespaces))

    def changed(self, catalog: Catalog) -> list[str]:
        """What of the batch's objects ``catalog`` shows differently, one entry each."""
        out = []
        for o, before in self.rows.items():
            after = _row_key(catalog.rows.get(o))
            if after != before:
                out.append(f"table {o} ({_what_changed(before, after)})")
        return out + namespace_changes(catalog, self.namespaces)


def shown(items: Sequence[str], limit: int = 10) -> str:
    """``a, b, c`` (at most ``limit`` items, then ``and N more``: ``backend.text.some_of``)."""
    return some_of(items, limit)


# -- writing ----------------------------------------------------------------------------------------
def catalog_rows(schema: pa.Schema, rows: list[dict[str, Any]]) -> pa.Table:
    names = schema.names
    return pa.Table.from_pylist([{n: r.get(n) for n in names} for r in rows], schema=schema)


def in_predicate(object_ids: Sequence[str]) -> str:
    quoted = ", ".join("'" + i.replace("'", "''") + "'" for i in object_ids)
    return f"object_id IN ({quoted})"


def bootstrap_catalog(ctx: Ctx) -> None:
    """Have pylance create ``__manifest`` (it does so lazily, on the first write)."""
    if open_catalog(ctx) is not None:
        return
    name = f"__lance_console_bootstrap_{uuid.uuid4().hex[:8]}"
    ctx.directory.create_namespace(CreateNamespaceRequest(id=[name]))
    ctx.directory.drop_namespace(DropNamespaceRequest(id=[name]))


def declared_row(object_id: str, location: str, props: dict[str, str] | None) -> dict[str, Any]:
    return {
        "object_id": object_id,
        "object_type": "table",
        "location": location,
        "metadata": json.dumps(props, separators=(",", ":")) if props else None,
        "base_objects": None,
    }


# How often a catalog commit that lost to another writer is tried again: 8 attempts in all,
# waits of full jitter below 20 ms, 40 ms, ... capped at 1 s (about 2.3 s at most in all).
CATALOG_RETRY = Backoff(attempts=8, base=0.02, cap=1.0)
ONE_ATTEMPT = Backoff(attempts=1)


def conflict_error(message: str, retries: int) -> LanceNamespaceError:
    """``ConcurrentModificationError(message)`` for a catalog commit that did not land."""
    err = error(ErrorCode.CONCURRENT_MODIFICATION, message)
    err.catalog_retries = retries  # type: ignore[attr-defined]
    err.catalog_unapplied = True  # type: ignore[attr-defined]
    return err


def catalog_unapplied(exc: BaseException) -> bool:
    """Whether ``exc`` says a catalog commit did not land (it lost to another writer, see
    :func:`catalog_commit`), so undoing the batch must not touch the catalog."""
    return bool(getattr(exc, "catalog_unapplied", False))


def catalog_commit(
    ctx: Ctx,
    new_rows: list[dict[str, Any]],
    gone: list[str],
    *,
    expected: Expected | None = None,
    policy: Backoff | None = None,
) -> int:
    """One Lance commit of ``__manifest``: insert ``new_rows``, delete the rows ``gone``.

    A commit that loses to a concurrent commit (:func:`backend.errors.is_commit_conflict`)
    applied nothing. The catalog is then read again and ``expected`` judged against it: a
    writer that touched one of the batch's objects ends the commit with
    ``ConcurrentModificationError`` naming them; otherwise it is tried again after
    ``policy``'s backoff (default :data:`CATALOG_RETRY` with ``expected``, one attempt
    without), and ``ConcurrentModificationError`` once the attempts run out. Such errors carry
    ``catalog_unapplied = True`` and ``catalog_retries``. Returns how many retries it took."""
    policy = policy or (CATALOG_RETRY if expected is not None else ONE_ATTEMPT)
    attempt = 1
    while True:
        try:
            version = _commit_once(ctx, new_rows, gone)
            if commit_held(ctx, version, new_rows, gone):
                return attempt - 1
            lost = (
                f"catalog version {version} was replaced by another writer's commit of the same "
                "version (the store let two conditional writes of one object both succeed)"
            )
        except LanceNamespaceError as e:
            e.catalog_retries = attempt - 1  # type: ignore[attr-defined]
            raise
        except Exception as e:
            if not is_commit_conflict(e):
                raise
            lost = str(e).splitlines()[0][:200]
        if not policy.may_retry(attempt):
            raise conflict_error(
                f"the catalog commit lost to concurrent writers {attempt} times in a row "
                f"(last: {lost})",
                attempt - 1,
            )
        policy.wait(attempt)
        if expected is not None:
            changed = expected.changed(read_catalog(ctx))
            if changed:
                raise conflict_error(
                    f"another writer changed what the batch touches while it committed: "
                    f"{shown(changed)}",
                    attempt,
                )
        attempt += 1


# How long after a catalog commit on an object store the committed version is read back
# (:func:`commit_held`): a store whose conditional write is not exclusive (moto's S3 server checks
# If-None-Match, then stores, without a lock) can accept a concurrent writer's put of the same
# manifest that lands after ours and replaces it; such a put is in flight when ours returns,
# and under load it can land well over 50 ms later (seen replacing after a 50 ms read-back in
# most runs of test_a_catalog_commit_replaced_by_another_writers_is_retried; none in 6 at 300).
COMMIT_SETTLE = 0.3


def commit_held(ctx: Ctx, version: int, new_rows: list[dict[str, Any]], gone: list[str]) -> bool:
    """Whether catalog version ``version``, read back from the store, is the commit that wrote
    ``new_rows`` and removed ``gone``: every new row with its location, none of ``gone``.

    Object-store roots only (file roots commit with ``link``/``rename``, which cannot replace a
    version; memory roots have one process): after :data:`COMMIT_SETTLE` the version is opened
    with a fresh handle (no cache of our own write) and the touched rows are read. False means
    another writer's commit of the same version number replaced ours: nothing of ours is in
    the catalog, and the commit is treated as lost (judged again and retried)."""
    if not ctx.is_object_store:
        return True
    time.sleep(COMMIT_SETTLE)
    touched = [r["object_id"] for r in new_rows] + list(gone)
    # the latest version, not only ``version``: a writer whose put we replaced may have
    # committed on top of its own (replaced) version since, without our rows
    ds = lance.dataset(ctx.manifest_uri(), storage_options=ctx.storage_options or None)
    if ds.version < version:
        ds = ds.checkout_version(version)
    found = {
        r["object_id"]: r.get("location")
        for r in ds.to_table(
            columns=["object_id", "location"], filter=in_predicate(touched)
        ).to_pylist()
    }
    return all(found.get(r["object_id"], ...) == r.get("location") for r in new_rows) and not (
        set(gone) & set(found)
    )


def _commit_once(ctx: Ctx, new_rows: list[dict[str, Any]], gone: list[str]) -> int:
    """One attempt of :func:`catalog_commit`; returns the catalog version it committed."""
    ds = open_catalog(ctx)
    if ds is None:
        raise error(ErrorCode.INTERNAL, "the namespace catalog (__manifest) disappeared")
    try:
        if new_rows:
            builder = ds.merge_insert("object_id").when_matched_fail().when_not_matched_insert_all()
            if gone:
                builder = builder.when_not_matched_by_source_delete(in_predicate(gone))
            stats = builder.execute(catalog_rows(ds.schema, new_rows))
            inserted, deleted = stats["num_inserted_rows"], stats["num_deleted_rows"]
        else:
            inserted, deleted = 0, ds.delete(in_predicate(gone))["num_deleted_rows"]
    except OSError as e:
        if "found matching row" in str(e):
            present = sorted(set(read_catalog(ctx).rows) & {r["object_id"] for r in new_rows})
            raise conflict_error(
                "a declared table appeared in the catalog while the batch committed"
                + (f": {shown(present)}" if present else f": {e}"),
                0,
            ) from e
        raise
    if inserted != len(new_rows) or deleted != len(gone):
        raise error(
            ErrorCode.CONCURRENT_MODIFICATION,
            f"the catalog changed while the batch committed: inserted {inserted} of "
            f"{len(new_rows)} rows, deleted {deleted} of {len(gone)}",
        )
    return int(ds.version)


def catalog_undo(
    ctx: Ctx,
    declared: list[tuple[str, str]],
    restored: list[dict[str, Any]],
    steps: Steps,
    dur: Durable | None,
) -> None:
    """Make the catalog hold what it held before: delete the ``declared`` (object id,
    location) rows that are ours, put back the ``restored`` rows that are missing.

    Idempotent (it reads the catalog first), so a commit of it that loses to another writer is
    simply done again, with :data:`CATALOG_RETRY`'s backoff; on object stores it is read back
    until an attempt finds nothing left to do."""
    if not declared and not restored:
        return
    before: list[set[str]] = []  # the catalog's files before the undo's first write
    attempt = 1
    while True:
        try:
            wrote = _undo_once(ctx, declared, restored, steps, before, durable=dur is not None)
            if not wrote or not ctx.is_object_store or not CATALOG_RETRY.may_retry(attempt):
                break
            # read back after COMMIT_SETTLE (see commit_held): the next attempt finds nothing to
            # do unless another writer's commit of the same version replaced the undo's
            time.sleep(COMMIT_SETTLE)
            attempt += 1
            continue
        except Exception as e:
            if not is_commit_conflict(e) or not CATALOG_RETRY.may_retry(attempt):
                raise
        CATALOG_RETRY.wait(attempt)
        attempt += 1
    if dur is not None and before:
        catalog_changes(ctx, before[0], dur)


def _undo_once(
    ctx: Ctx,
    declared: list[tuple[str, str]],
    restored: list[dict[str, Any]],
    steps: Steps,
    before: list[set[str]],
    *,
    durable: bool,
) -> bool:
    """One attempt of :func:`catalog_undo`, True if it wrote; the first attempt that writes
    lists the catalog's files into ``before`` first (kept when a later write of it loses)."""
    ds = open_catalog(ctx)
    if ds is None:
        return False
    rows = {r["object_id"]: r for r in ds.to_table().to_pylist()}
    ours = [o for o, loc in declared if rows.get(o, {}).get("location") == loc]
    back = [r for r in restored if r["object_id"] not in rows]
    if not ours and not back:
        return False
    if not before:
        before.append(catalog_files(ctx) if durable else set())
    if ours:
        steps("undo.catalog.delete", f"{len(ours)} rows")
        ds.delete(in_predicate(ours))
    if back:
        steps("undo.catalog.insert", f"{len(back)} rows")
        ds = open_catalog(ctx)
        assert ds is not None
        ds.merge_insert("object_id").when_not_matched_insert_all().execute(
            catalog_rows(ds.schema, back)
        )
    return True


_CATALOG_SUBDIRS = ("_versions", "data", "_transactions", "_deletions")


def catalog_files(ctx: Ctx) -> set[str]:
    base = ctx.path(CATALOG_DIR)
    out: set[str] = set()
    for sub in _CATALOG_SUBDIRS:
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            out.update(f"{sub}/{n}" for n in os.listdir(base / sub))
    return out


def catalog_changes(ctx: Ctx, before: set[str], dur: Durable) -> None:
    """Hand the files a catalog commit added (and their directories) to ``dur``."""
    base = ctx.path(CATALOG_DIR)
    dur.dir(base)
    for sub in _CATALOG_SUBDIRS:
        d = base / sub
        if not d.is_dir():
            continue
        dur.dir(d)
        for name in os.listdir(d):
            if f"{sub}/{name}" not in before:
                dur.file(d / name)
