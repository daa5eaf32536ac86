"""Cached reads of the active connection, and invalidation after writes.

:func:`cached` turns ``fn(ns, *args)`` into ``fn(*args)`` cached with ``st.cache_data`` under
the active connection's secret-free key and an *epoch* per scope: ``"catalog"`` (the listings
of tables, and what a namespace's contents give), ``"namespaces"`` (the namespaces' own
listings: names, tree, existence; a write of tables only leaves them) or ``("table",
table_id)`` (one table's details, versions, indexes). A write
calls :func:`invalidate` with the scopes it affects: only those reads of that connection are
read again, for every session on the connection; other connections' caches stay as they are.

Every read shares one module-level ``st.cache_data`` function whose key is explicit: the read's
registered name (``module.qualname`` of the decorated function, or ``name=``), the connection,
the scope's epoch and the arguments, as one token (so Streamlit hashes one short string per
call). Each read keeps its own ``ttl`` (an entry older than it is read again) and
``max_entries`` (its oldest entries are dropped), per read.
"""

from __future__ import annotations

import functools
import itertools
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import streamlit as st

T = TypeVar("T")
CATALOG = "catalog"
NAMESPACES = "namespaces"
Scope = Hashable

_EPOCHS: dict[tuple[str, Scope], int] = {}
_LOCK = threading.Lock()


def table_scope(table_id: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    return ("table", tuple(table_id))


def branches_scope(table_id: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """The reads of a table's branches (the list, a branch's versions and columns): a write
    on main only changes none of them."""
    return ("branches", tuple(table_id))


def tags_scope(table_id: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """The reads of a table's tags: forgotten by every write of the table but one that says
    it leaves them (``Write.leaves_tags``: rows written, a restore, old versions cleaned up)."""
    return ("tags", tuple(table_id))


def epoch(conn: str, scope: Scope) -> int:
    with _LOCK:
        return _EPOCHS.get((conn, scope), 0) + _EPOCHS.get((conn, "*"), 0)


def invalidate(*scopes: Scope, conn: str | None = None) -> None:
    """Forget the reads of ``scopes`` (none given: every read) of the connection."""
    from components.session import connection_key

    key = conn or connection_key()
    with _LOCK:
        for scope in scopes or ("*",):
            _EPOCHS[(key, scope)] = _EPOCHS.get((key, scope), 0) + 1


def invalidate_tables(
    table_ids: Sequence[Sequence[str]],
    *,
    catalog: bool = False,
    namespaces: bool = True,
    branches: bool = True,
    tags: bool = True,
) -> None:
    """After a write touching ``table_ids`` (and the listings, when ``catalog``: the
    namespaces' own listings too, unless ``namespaces`` is false, a write that creates, drops
    or moves tables only). Their branches' reads too, unless ``branches`` is false: a write
    on main only (a version, a tag, rows of main), which changes no branch; their tags, unless
    ``tags`` is false: a write that changes no tag."""
    scopes: list[Scope] = [table_scope(t) for t in table_ids]
    if branches:
        scopes += [branches_scope(t) for t in table_ids]
    if tags:
        scopes += [tags_scope(t) for t in table_ids]
    if catalog:
        scopes.append(CATALOG)
        if namespaces:
            scopes.append(NAMESPACES)
    invalidate(*scopes)


MAX_TTL = 3600.0  # the longest ``ttl`` a read may ask for (the shared cache's own bound)
MAX_ENTRIES = 8192  # every read's entries together (each read has its own, lower, bound)


@dataclass
class _Read:
    name: str
    ttl: float
    max_entries: int
    keys: OrderedDict[tuple[Any, ...], None] = field(default_factory=OrderedDict)


_READS: dict[str, _Read] = {}


# Each key (read, connection, generation, arguments) stands for a short token in the Streamlit
# caches: one string to hash per call instead of every argument. Tokens are unique to this
# module's life (``_NONCE``): a reloaded module never meets the entries of an older one's.
_TOKENS: dict[tuple[Any, ...], str] = {}
_NONCE = uuid.uuid4().hex
_COUNTER = itertools.count()


def _token(key: tuple[Any, ...]) -> str:
    with _LOCK:
        found = _TOKENS.get(key)
        if found is None:
            found = _TOKENS[key] = f"{_NONCE}:{next(_COUNTER)}"
        return found


@st.cache_data(ttl=MAX_TTL, max_entries=MAX_ENTRIES, show_spinner=False)
def _read(
    token: str, _fn: Callable[..., Any], _ns: Callable[[], Any], _args: tuple
) -> tuple[float, Any]:
    # Keyed by ``token`` (:func:`_token` of the read's name, connection, generation and
    # arguments); the function, what opens the namespace client and the arguments are not
    # hashed (underscore names).
    return time.monotonic(), _fn(_ns(), *_args)


def _keep(read: _Read, key: tuple[Any, ...], store: Any) -> None:
    """Note ``key`` as the read's newest entry; forget its oldest beyond ``max_entries``
    (from ``store``, the Streamlit cache holding them)."""
    with _LOCK:
        read.keys[key] = None
        read.keys.move_to_end(key)
        dropped = []
        while len(read.keys) > read.max_entries:
            old = read.keys.popitem(last=False)[0]
            dropped.append(_TOKENS.pop(old, None))
    for token in dropped:
        if token is not None:
            store.clear(token=token)


def _caller(
    read: _Read, scope: Callable[..., Scope], fn: Callable[..., T], store: Any
) -> Callable[..., T]:
    """``fn(ns, *args)`` as ``fn(*args)`` on the active connection, its answers kept in
    ``store`` (``_read`` or ``_shared``) per connection, ``scope(*args)`` epoch and
    arguments, read again once older than the read's ``ttl``."""

    @functools.wraps(fn)
    def call(*args: Any) -> T:
        from components.session import connection_key, get_namespace

        conn = connection_key()
        key = (read.name, conn, epoch(conn, scope(*args)), args)
        token = _token(key)
        # by name: Streamlit takes the names without looking up the function's signature;
        # the namespace is opened only when the read is made
        stamp, value = store(token=token, _fn=fn, _ns=get_namespace, _args=args)
        if time.monotonic() - stamp >= read.ttl:  # older than this read's ttl
            store.clear(token=token)
            stamp, value = store(token=token, _fn=fn, _ns=get_namespace, _args=args)
        _keep(read, key, store)
        return cast(T, value)

    return call


def cached(
    scope: Callable[..., Scope],
    *,
    ttl: float = 60,
    max_entries: int = 256,
    name: str | None = None,
) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Decorator: ``fn(ns, *args)`` -> ``fn(*args)`` on the active connection, cached per
    connection, ``scope(*args)`` epoch and arguments (which must be hashable).

    ``name`` keys the read's entries (default: the function's ``module.qualname``); a function
    defined inside another one needs it, as every function made there has the same qualname.
    Registering a name again (a module reloaded) replaces the read."""
    if not 0 < ttl <= MAX_TTL:
        raise ValueError(f"ttl must be in (0, {MAX_TTL:g}] seconds, not {ttl}")

    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        key_name = name or f"{fn.__module__}.{fn.__qualname__}"
        if name is None and "<" in fn.__qualname__:
            raise ValueError(
                f"{key_name} is not a unique cache key (a nested function or a lambda): "
                "pass cached(..., name=...)"
            )
        read = _Read(key_name, float(ttl), int(max_entries))
        with _LOCK:
            _READS[key_name] = read
        return _caller(read, scope, fn, _read)

    return decorate


@st.cache_resource(ttl=MAX_TTL, max_entries=MAX_ENTRIES, show_spinner=False)
def _shared(
    token: str, _fn: Callable[..., Any], _ns: Callable[[], Any], _args: tuple
) -> tuple[float, Any]:
    return time.monotonic(), _fn(_ns(), *_args)


def shared(
    scope: Callable[..., Scope],
    *,
    ttl: float = 60,
    max_entries: int = 64,
    name: str | None = None,
) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Like :func:`cached`, for objects that fill up as they are used (a listing read page by
    page): one object per connection, ``scope(*args)`` epoch and arguments, shared by every
    session and never copied (``st.cache_resource``); made anew after ``ttl`` seconds or a
    write to its scope."""
    if not 0 < ttl <= MAX_TTL:
        raise ValueError(f"ttl must be in (0, {MAX_TTL:g}] seconds, not {ttl}")

    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        key_name = name or f"{fn.__module__}.{fn.__qualname__}"
        read = _Read(key_name, float(ttl), int(max_entries))
        return _caller(read, scope, fn, _shared)

    return decorate
