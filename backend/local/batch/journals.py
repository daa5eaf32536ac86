"""Which batch journals in ``_console/batch/pending`` are the console's own: the one rule that
recovery (which undoes or finishes what a journal names) and reader isolation (which hides what
an in-flight journal changes) both follow.

The console writes a journal whole (a rename on file roots, one PUT on object stores), in its
own format, naming only its own id and paths or keys under the namespace root. A file there
that is not such a journal (another format, damaged, written by hand, naming a path outside
the root or a key of the wrong kind) was not written by this console: acting on it would let
whoever wrote it delete or move what the console may touch, and hiding what it names would
hide committed versions from every reader. It is left where it is, neither acted on nor
deleted, and said once per process in the log.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from ...locations import is_inside
from ..left_out import LeftOut
from .context import Ctx
from .plan import Journal
from .records import is_batch_transaction_id

LEFT = LeftOut(logging.getLogger(__name__), "batch journal")  # not acted on, said once
_READ_ERRORS = (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError)
# file journals already judged: (path, mtime_ns, size) -> the journal, or None (left)
_JUDGED: dict[tuple[str, int, int], Journal | None] = {}
_JUDGED_MAX = 256


class NotOurs(ValueError):
    """A file in ``pending`` that is not a journal of this console; the message says why."""


def _is(value: Any, kind: type, *, optional: bool = False) -> bool:
    """``value`` is a ``kind`` (``None`` only when ``optional``; ``True`` is no ``int``)."""
    if value is None:
        return optional
    return isinstance(value, kind) and (kind is bool or not isinstance(value, bool))


def _check(ok: bool, what: str) -> None:
    if not ok:
        raise NotOurs(f"{what} is not what this console writes")


def _check_common(txn_id: Any, record: Any) -> None:
    _check(is_batch_transaction_id([txn_id]), "its transaction id")
    _check(isinstance(record, dict), "its record")


def _check_file(journal: Journal) -> None:
    """The value types of every step (a dataclass takes whatever it is given)."""
    _check_common(journal.txn_id, journal.record)
    for d in journal.declares:
        _check(
            _is(d.object_id, str)
            and _is(d.location, str)
            and _is(d.path, str, optional=True)
            and _is(d.properties, dict, optional=True),
            "a declare",
        )
    for v in journal.versions:
        _check(
            _is(v.object_id, str)
            and _is(v.version, int)
            and v.version >= 1
            and _is(v.size, int, optional=True)
            and _is(v.sha256, str, optional=True)
            and all(
                _is(p, str, optional=True)
                for p in (v.staged, v.final, v.table_path, v.tmp, v.alt_tmp)
            ),
            "a version",
        )
    for x in journal.deletes:
        _check(_is(x.object_id, str), "a delete")
        for m in x.moves:
            _check(
                _is(m.version, int)
                and _is(m.src, str, optional=True)
                and _is(m.trash, str, optional=True),
                "a delete's move",
            )
    for g in journal.deregisters:
        _check(_is(g.object_id, str) and _is(g.row, dict), "a deregister")


def _outside_root(ctx: Ctx, journal: Journal) -> str | None:
    """The first path ``journal`` would remove, move or write that is not below the
    namespace root (symbolic links resolved), else ``None``."""
    root = ctx.path("")
    paths = [d.path for d in journal.declares]
    for v in journal.versions:
        paths += [v.staged, v.final, v.table_path, v.tmp, v.alt_tmp]
    paths += [p for x in journal.deletes for m in x.moves for p in (m.src, m.trash)]
    for raw in paths:
        if raw is not None and not is_inside(Path(raw), root, strict=True):
            return str(raw)
    return None


def _judge_file(ctx: Ctx, path: Path) -> Journal:
    try:
        journal = Journal.from_json(json.loads(path.read_text(encoding="utf-8")))
    except _READ_ERRORS as exc:
        raise NotOurs(f"it cannot be read ({type(exc).__name__})") from None
    _check_file(journal)
    _check(path.name == f"{journal.txn_id}.json", "its name")
    outside = _outside_root(ctx, journal)
    if outside is not None:
        raise NotOurs(f"it names {outside}, outside the namespace root")
    return journal


def file_journal(ctx: Ctx, path: Path) -> Journal | None:
    """The journal at ``path`` when it is one of this console's (see the module docstring),
    else ``None`` (said once in the log). Judged once per version of the file: a journal is
    never changed once written, and readers ask at every read while a batch is in flight."""
    try:
        st = os.stat(path)
    except OSError:
        return None  # removed meanwhile: the batch finished
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key in _JUDGED:
        return _JUDGED[key]
    try:
        journal: Journal | None = _judge_file(ctx, path)
    except NotOurs as exc:
        if not path.exists():
            return None  # removed while being read
        LEFT.say(str(path), str(exc))
        journal = None
    if len(_JUDGED) >= _JUDGED_MAX:
        _JUDGED.clear()
    _JUDGED[key] = journal
    return journal


def _key(value: Any, what: str, *, under: str = "", within: str = "") -> None:
    """``value`` is a key below the root (no empty, ``.`` or ``..`` part), starting with
    ``under`` and holding ``within`` where given."""
    ok = isinstance(value, str) and bool(value) and value.startswith(under) and within in value
    _check(ok and not any(p in ("", ".", "..") for p in value.split("/")), what)


def object_journal(key: str, data: bytes, *, pending: str, work: str, reserved: str) -> dict:
    """The object-store journal ``data`` read from ``key`` when it is one of this console's:
    the fields the protocol reads, of their types, and every key it would write or remove
    of its kind (a table's reserved marker, a manifest in a table's ``_versions``, the
    batch's own work area). ``NotOurs`` otherwise."""
    try:
        j = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise NotOurs(f"it cannot be read ({type(exc).__name__})") from None
    _check(isinstance(j, dict) and j.get("format") == 1, "its format")
    txn_id = j.get("txn_id")
    _check_common(txn_id, j.get("record"))
    _check(key == f"{pending}{txn_id}.json", "its name")
    lists = ("declares", "versions", "deletes", "deregisters")
    _check(all(isinstance(j.get(k), list) for k in lists), "its steps")
    for d in j["declares"]:
        _check(isinstance(d, dict), "a declare")
        _check(
            _is(d.get("object_id"), str)
            and _is(d.get("location"), str)
            and _is(d.get("properties"), dict, optional=True)
            and _is(d.get("reserved_existed"), bool),
            "a declare",
        )
        _key(d.get("reserved"), "a declare's reserved key", within=f"/{reserved}")
    for v in j["versions"]:
        _check(isinstance(v, dict), "a version")
        _check(
            _is(v.get("object_id"), str)
            and _is(v.get("version"), int)
            and _is(v.get("index"), int)
            and _is(v.get("sha256"), str)
            and _is(v.get("staged"), str),
            "a version",
        )
        _key(v.get("final"), "a version's manifest key", within="/_versions/")
        if v["staged"].startswith("_staging/"):  # removed once committed
            _key(v["staged"], "a version's staged key", under="_staging/")
    for m in j["deletes"]:
        _check(isinstance(m, dict), "a delete")
        _check(_is(m.get("object_id"), str) and _is(m.get("version"), int), "a delete")
        _key(m.get("src"), "a delete's manifest key", within="/_versions/")
        _key(m.get("trash"), "a delete's trash key", under=f"{work}{txn_id}/")
    for g in j["deregisters"]:
        _check(isinstance(g, dict) and _is(g.get("object_id"), str), "a deregister")
    return j
