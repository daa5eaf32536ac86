"""The audit log: one JSON Lines record per write the console performs, kept on local disk.

* :class:`AuditLog` appends an entry as one line, flushed and ``fsync``'ed before the call
  returns, under a lock shared by threads and processes (``fcntl.flock`` on a lock file), so
  a crash loses at most the entry being written; a torn last line is skipped when reading.
* The file is rotated by size: ``audit.jsonl`` becomes ``audit.jsonl.1`` (the older ones shift
  up, ``keep`` of them are kept), and the directory is synced after the rename.
* :func:`summarize` turns a request into the redacted, bounded summary an entry keeps: every
  secret-named field masked (``backend.redaction``, the one classifier), long strings and
  lists cut, Arrow bodies replaced by their size.
* :func:`batch_tables` lists what a batch (BatchCommitTables, BatchCreateTableVersions)
  touches: every table its operations name, each with the kinds of operation it gets, so an
  entry of a batch names its tables as a single write's ``ids`` names its object.
* Every entry names the actor's ``role``, the ``target`` (the namespace root or server URL,
  credentials masked: :func:`mask_target`) and the connection's name (a saved connection's
  name, or :func:`target_name` for the launch target).
* A long write (an index build, maintenance, an import) writes a ``started`` entry, durable
  before the work begins, and its final entry carries the same ``op_id``: a process killed
  midway leaves a ``started`` entry with no end (:func:`unfinished`), shown as
  :data:`UNFINISHED`.
* A write the console refused before sending anything (the role, a read-only connection, the
  static request checks, a batch's preflight) is an entry with outcome ``refused`` and the
  reason.
* :func:`filter_entries` / :func:`to_csv` serve the Audit page and exports.

The directory is ``$LANCE_CONSOLE_AUDIT_DIR`` or ``~/.local/state/lance-console/audit``.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import datetime as dt
import io
import json
import os
import re
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from backend import redaction
from backend.rules import batch_rules, ids
from backend.rules.csv_cells import inert_cell
from backend.spec.fields import is_number, is_texts

LOG_NAME = "audit.jsonl"
LOCK_NAME = ".audit.lock"
# The log's and its lock's files are opened as files of the log's folder, never through a
# symbolic link planted in their place (ELOOP: the entry is not written, the write goes on).
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
DEFAULT_KEEP = 5
_MAX_TEXT = 300  # characters of one string kept in a summary
_SECRET_ROOM = 4096  # characters read past it, so that a secret across the cut is still masked
_MAX_TRANSACTION_ID = 200  # characters of a transaction id kept (a server's ids are short)
_MAX_ITEMS = 20  # items of one list (or keys of one mapping) kept in a summary

OK = "ok"
FAILED = "error"
REFUSED = "refused"  # refused before anything was sent or written, with the reason
STARTED = "started"  # a long write began; its final entry has the same ``op_id``
UNFINISHED = "started, no end recorded"  # what the page says of a started entry without an end
OUTCOMES = (OK, FAILED, REFUSED, STARTED, UNFINISHED)  # the Audit page's outcome filter

CSV_COLUMNS = (
    "ts",
    "user",
    "role",
    "source",
    "connection",
    "target",
    "operation",
    "ids",
    "outcome",
    "error_class",
    "error_message",
    "transaction_id",
    "duration_ms",
    "op_id",
    "tables",
    "request",
)


def default_directory() -> Path:
    raw = os.environ.get("LANCE_CONSOLE_AUDIT_DIR")
    if raw:
        return Path(raw).expanduser()
    return Path("~/.local/state/lance-console/audit").expanduser()


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_op_id() -> str:
    """The id that ties a long write's ``started`` entry to its final one."""
    return uuid.uuid4().hex[:16]


def mask_target(target: Any) -> str:
    """The namespace root or server URL as an entry keeps it: a URL without its password and
    with secret query parameters masked, any registered secret masked."""
    text = str(target or "")
    return redaction.redact_text(redaction.display_target(text))


def target_name(target: Any) -> str:
    """A connection name derived from a target, for the launch target (which has no saved
    name): a URL's scheme, host, port and path (never its user, password or query), a local
    path's (or ``file://`` URL's) last folder."""
    text = str(target or "").strip()
    if text.lower().startswith("file://"):
        text = urlsplit(text).path
    if "://" in text:
        try:
            parts = urlsplit(text)
            host = parts.hostname or ""
            port = f":{parts.port}" if parts.port else ""
        except ValueError:
            return mask_target(text)
        path = parts.path.rstrip("/")
        return f"{parts.scheme}://{host}{port}{path}" if host or path else mask_target(text)
    path = text.rstrip("/\\")
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name or path or "(no target)"


@dataclasses.dataclass
class AuditEntry:
    """One write: who (``user`` and ``role``), when, where (the connection's name and the
    ``target``, never a secret), what, the outcome. ``ids``: the object a single write
    addresses; ``tables``: the tables a batch touches (:func:`batch_tables`: ``{"id": [...],
    "kinds": [...]}`` each, in the batch's order); ``op_id``: shared by a long write's
    ``started`` entry and its final one. Entries written before ``role``, ``target`` and
    ``op_id`` existed read with them empty."""

    user: str
    connection: str
    operation: str
    ids: list[str] = dataclasses.field(default_factory=list)
    tables: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    request: Any = None
    outcome: str = OK
    error_class: str | None = None
    error_message: str | None = None
    transaction_id: str | None = None
    duration_ms: float | None = None
    source: str = "console"  # console | notebook
    ts: str = dataclasses.field(default_factory=now_iso)
    role: str | None = None
    target: str | None = None
    op_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["connection"] = redaction.redact_text(str(self.connection))
        if self.target is not None:
            data["target"] = mask_target(self.target)
        if self.error_message is not None:
            data["error_message"] = redaction.redact_text(str(self.error_message))
        if self.transaction_id is not None:  # the server's text: it may echo anything
            data["transaction_id"] = short_text(self.transaction_id, _MAX_TRANSACTION_ID)
        data["request"] = summarize(self.request)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AuditEntry:
        """An entry from its line's JSON, every field of its type (``ValueError`` naming
        the first that is not: the log lies where other writers reach)."""
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in names}
        problem = _entry_problem(values)
        if problem is not None:
            raise ValueError(f"not an audit entry: its {problem}")
        return cls(**values)


_TEXT_FIELDS = ("user", "connection", "operation", "outcome", "source", "ts")
_OPTIONAL_TEXT = ("error_class", "error_message", "transaction_id", "role", "target", "op_id")
_MAX_REQUEST_DEPTH = 32  # a summary nests 7 levels (summarize); deeper is no entry's


# A JSON escape of a UTF-16 surrogate: the only way a line the log reads (UTF-8) can hold
# text that is no Unicode (a lone surrogate, which no encoder takes).
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


def _clean(value: Any) -> Any:
    """``value`` with every text valid Unicode (lone surrogates replaced by U+FFFD)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return value
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {_clean(str(k)): _clean(v) for k, v in value.items()}
    return value


def _depth(value: Any, limit: int) -> int:
    """How deep ``value`` nests, counted up to ``limit`` + 1."""
    if limit < 0 or not isinstance(value, (list, dict)):
        return 0
    items = value.values() if isinstance(value, dict) else value
    return 1 + max((_depth(v, limit - 1) for v in items), default=0)


def _entry_problem(values: dict[str, Any]) -> str | None:
    for name in _TEXT_FIELDS:
        if name in values and not isinstance(values[name], str):
            return name
    for name in ("user", "connection", "operation"):
        if name not in values:
            return name
    for name in _OPTIONAL_TEXT:
        if not isinstance(values.get(name), (str, type(None))):
            return name
    if not is_texts(values.get("ids", [])):
        return "ids"
    tables = values.get("tables", [])
    if not isinstance(tables, list) or not all(
        isinstance(t, dict) and is_texts(t.get("id")) and is_texts(t.get("kinds", []))
        for t in tables
    ):
        return "tables"
    if values.get("duration_ms") is not None and not is_number(values["duration_ms"]):
        return "duration_ms"
    if "ts" in values:  # as now_iso writes it: the date first, in its extended form
        try:
            dt.datetime.fromisoformat(values["ts"])
            dt.date.fromisoformat(values["ts"][:10])
        except ValueError:
            return "ts"
    if _depth(values.get("request"), _MAX_REQUEST_DEPTH) > _MAX_REQUEST_DEPTH:
        return "request"
    return None


def _field(value: Any, name: str) -> Any:
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def batch_tables(operation: str, request: Any) -> list[dict[str, Any]]:
    """The tables a batch request touches, in the order the batch first names them, each with
    the kinds of its operations (``BatchCommitTables``: ``DeclareTable``,
    ``CreateTableVersion``, ``DeleteTableVersions``, ``DeregisterTable``;
    ``BatchCreateTableVersions``: ``CreateTableVersion``), a model or a dict alike. Empty for
    any other operation; an operation of no known kind or without an id is left out (the
    entry records the request as it was)."""
    if operation == "batch_commit_tables":
        named = []
        for op in _list(_field(request, "operations")):
            for kind in batch_rules.OPERATION_KINDS:
                inner = _field(op, kind)
                if inner is not None:
                    named.append((batch_rules.OPERATION_LABELS[kind], _field(inner, "id")))
    elif operation == "batch_create_table_versions":
        label = batch_rules.OPERATION_LABELS[batch_rules.CREATE_VERSION]
        named = [(label, _field(e, "id")) for e in _list(_field(request, "entries"))]
    else:
        return []
    tables: dict[tuple[str, ...], list[str]] = {}
    for label, table_id in named:
        parts = _list(table_id)
        if not parts:
            continue
        kinds = tables.setdefault(tuple(str(p) for p in parts), [])
        if label not in kinds:
            kinds.append(label)
    return [{"id": list(key), "kinds": kinds} for key, kinds in tables.items()]


def describe_tables(tables: Sequence[dict[str, Any]]) -> str:
    """``a › t (DeclareTable); b › u (CreateTableVersion, DeleteTableVersions)``."""
    return "; ".join(
        f"{ids.display_id([str(p) for p in t.get('id') or []], root='')} "
        f"({', '.join(str(k) for k in t.get('kinds') or [])})"
        for t in tables
    )


def summarize(value: Any, *, depth: int = 0) -> Any:
    """A JSON-safe, redacted and bounded summary of a request (a pydantic model, a mapping,
    bytes, a list...): secret-named fields masked wherever they are nested."""
    if depth > 6:
        return "…"
    if hasattr(value, "model_dump"):
        value = value.model_dump(exclude_none=True, by_alias=False)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for i, (k, v) in enumerate(value.items()):
            if i >= _MAX_ITEMS:
                out["…"] = f"{len(value) - _MAX_ITEMS} more keys"
                break
            key = str(k)
            if redaction.is_secret_name(key):
                out[key] = redaction.mask_value(v)
            else:
                out[key] = summarize(v, depth=depth + 1)
        return out
    if isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
        kept = [summarize(v, depth=depth + 1) for v in items[:_MAX_ITEMS]]
        if len(items) > _MAX_ITEMS:
            kept.append(f"… {len(items) - _MAX_ITEMS} more")
        return kept
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return short_text(value)


def short_text(value: Any, limit: int = _MAX_TEXT) -> str:
    """``value`` as text an entry keeps: known secrets masked, at most ``limit`` characters
    (then ``…``)."""
    # cut before redacting (a long text costs its length in every rule), with room for a
    # secret that starts before the cut, then cut to ``limit``
    text = redaction.redact_text(str(value)[: limit + _SECRET_ROOM])
    return text if len(text) <= limit else text[:limit] + "…"


class AuditLog:
    """Append-only JSON Lines on local disk, rotated by size."""

    _thread_lock = threading.Lock()

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        keep: int = DEFAULT_KEEP,
    ) -> None:
        self.directory = Path(directory) if directory is not None else default_directory()
        self.max_bytes = max(1024, int(max_bytes))
        self.keep = max(1, int(keep))

    @property
    def path(self) -> Path:
        return self.directory / LOG_NAME

    def files(self) -> list[Path]:
        """The log's files, oldest first."""
        rotated = [self.directory / f"{LOG_NAME}.{i}" for i in range(self.keep, 0, -1)]
        return [p for p in (*rotated, self.path) if p.exists()]

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        import fcntl

        self.directory.mkdir(parents=True, exist_ok=True)
        with self._thread_lock:
            fd = os.open(self.directory / LOCK_NAME, os.O_RDWR | os.O_CREAT | _NO_FOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # closing releases the flock

    def append(self, entry: AuditEntry) -> None:
        """Write ``entry`` as one line, durable before this returns. ``OSError`` where it
        cannot be written: a full disk, or a symbolic link in the place of the log or its lock
        (never followed)."""
        line = (json.dumps(entry.to_json(), ensure_ascii=False, default=str) + "\n").encode()
        with self._locked():
            self._rotate_if_needed(len(line))
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NO_FOLLOW, 0o600)
            try:
                view = memoryview(line)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)
            finally:
                os.close(fd)

    def _rotate_if_needed(self, incoming: int) -> None:
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size == 0 or size + incoming <= self.max_bytes:
            return
        oldest = self.directory / f"{LOG_NAME}.{self.keep}"
        with contextlib.suppress(FileNotFoundError):
            oldest.unlink()
        for i in range(self.keep - 1, 0, -1):
            src = self.directory / f"{LOG_NAME}.{i}"
            if src.exists():
                os.replace(src, self.directory / f"{LOG_NAME}.{i + 1}")
        os.replace(self.path, self.directory / f"{LOG_NAME}.1")
        dfd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)

    def entries(self) -> list[AuditEntry]:
        """Every readable entry, oldest first (a torn or foreign line is skipped)."""
        out: list[AuditEntry] = []
        for path in self.files():
            try:
                data = path.read_bytes()
            except OSError:
                continue
            for raw in data.splitlines():
                try:
                    item = json.loads(raw)
                    if _ESCAPED_SURROGATE.search(raw):  # only then can a text be no Unicode
                        item = _clean(item)
                    if isinstance(item, dict) and "operation" in item:
                        out.append(AuditEntry.from_json(item))
                except (ValueError, UnicodeDecodeError, RecursionError, OverflowError):
                    continue  # torn, foreign or damaged: not an entry of this console
        return out


def filter_entries(
    entries: Iterable[AuditEntry],
    *,
    user: str | None = None,
    operation: str | Sequence[str] | None = None,
    table: str | None = None,
    since: str | dt.datetime | None = None,
    until: str | dt.datetime | None = None,
    outcome: str | None = None,
) -> list[AuditEntry]:
    """The entries that match every given filter; ``table`` matches any part of the ids, or of
    the id of any table a batch touches (``sales`` finds ``sales › orders``), ``user`` a
    substring, case-insensitive; ``outcome`` :data:`UNFINISHED` finds the ``started`` entries
    no final entry follows (among ``entries``)."""
    entries = list(entries)
    open_ops = unfinished(entries) if outcome == UNFINISHED else set()
    ops = {operation} if isinstance(operation, str) else set(operation or ())
    lo, hi = _as_iso(since), _as_iso(until)
    needle_user = (user or "").strip().lower()
    needle_table = (table or "").strip().lower()
    out = []
    for e in entries:
        if needle_user and needle_user not in (e.user or "").lower():
            continue
        if ops and e.operation not in ops:
            continue
        if needle_table and not any(needle_table in str(i).lower() for i in _id_parts(e)):
            continue
        if lo and e.ts < lo:
            continue
        if hi and e.ts > hi:
            continue
        if outcome == UNFINISHED:
            if e.outcome != STARTED or e.op_id not in open_ops:
                continue
        elif outcome and e.outcome != outcome:
            continue
        out.append(e)
    return out


def _id_parts(entry: AuditEntry) -> list[Any]:
    """Every id part an entry names: its ``ids`` and those of the tables of a batch."""
    parts = list(entry.ids or [])
    for table in entry.tables or []:
        parts.extend(_list(table.get("id")) if isinstance(table, dict) else [])
    return parts


def _as_iso(value: str | dt.datetime | None) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return str(value)


def unfinished(entries: Iterable[AuditEntry]) -> set[str]:
    """The ``op_id`` of every ``started`` entry that no final entry (the same ``op_id``, any
    other outcome) follows: a long write still running, or one whose process was killed."""
    started: set[str] = set()
    ended: set[str] = set()
    for e in entries:
        if not e.op_id:
            continue
        (started if e.outcome == STARTED else ended).add(e.op_id)
    return started - ended


def to_rows(
    entries: Iterable[AuditEntry], *, open_ops: set[str] | None = None
) -> list[dict[str, Any]]:
    """Flat rows (ids joined with " › ", a batch's tables with their kinds, the request as
    compact JSON) for tables and CSV; a ``started`` entry whose ``op_id`` is in ``open_ops``
    (default: :func:`unfinished` of ``entries``) reads :data:`UNFINISHED`."""
    entries = list(entries)
    if open_ops is None:
        open_ops = unfinished(entries)
    rows = []
    for e in entries:
        data = e.to_json()
        if e.outcome == STARTED and e.op_id in open_ops:
            data["outcome"] = UNFINISHED
        data["ids"] = ids.display_id([str(i) for i in e.ids or []], root="")
        data["tables"] = describe_tables(e.tables or [])
        data["request"] = json.dumps(data["request"], ensure_ascii=False, default=str)
        rows.append({c: data.get(c) for c in CSV_COLUMNS})
    return rows


def to_csv(entries: Iterable[AuditEntry], *, open_ops: set[str] | None = None) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(CSV_COLUMNS))
    writer.writeheader()
    for row in to_rows(entries, open_ops=open_ops):
        # a report to read in a spreadsheet: no cell runs as a formula there
        writer.writerow({k: inert_cell(v) if isinstance(v, str) else v for k, v in row.items()})
    return buf.getvalue()
