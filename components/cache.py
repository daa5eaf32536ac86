"""Cached reads of the active connection, and invalidation after writes.

:func:`cached` turns ``fn(ns, *args)`` into ``fn(*args)`` cached with ``st.cache_data`` under
the active connection's secret-free key and an *epoch* per scope: ``"catalog"`` (namespace and
table listings) or ``("table", table_id)`` (one table's details, versions, indexes). A write
calls :func:`invalidate` with the scopes it affects: only those reads of that connection are
read again, for every session on the connection; other connections' caches stay as they are.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

import streamlit as st

T = TypeVar("T")
CATALOG = "catalog"
Scope = Hashable

_EPOCHS: dict[tuple[str, Scope], int] = {}
_LOCK = threading.Lock()


def table_scope(table_id: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    return ("table", tuple(table_id))


def epoch(conn: str, scope: Scope) -> int:
    with _LOCK:
        return _EPOCHS.get((conn, scope), 0) + _EPOCHS.get((conn, "*"), 0)


def invalidate(*scopes: Scope, conn: str | None = None) -> None:
    """Forget the reads of ``scopes`` (none given: every read) of the connection."""
    from components.connection import connection_key

    key = conn or connection_key()
    with _LOCK:
        for scope in scopes or ("*",):
            _EPOCHS[(key, scope)] = _EPOCHS.get((key, scope), 0) + 1


def invalidate_tables(table_ids: Sequence[Sequence[str]], *, catalog: bool = False) -> None:
    """After a write touching ``table_ids`` (and the listings, when ``catalog``)."""
    scopes: list[Scope] = [table_scope(t) for t in table_ids]
    if catalog:
        scopes.append(CATALOG)
    invalidate(*scopes)


def cached(
    scope: Callable[..., Scope], *, ttl: float = 60, max_entries: int = 256
) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Decorator: ``fn(ns, *args)`` -> ``fn(*args)`` on the active connection, cached per
    connection, ``scope(*args)`` epoch and arguments (which must be hashable)."""

    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        def read(conn: str, generation: int, args: tuple, _ns: Any) -> T:
            return fn(_ns, *args)

        # st.cache_data keys a function by module, qualified name and source: give each
        # decorated read its own key.
        read.__module__ = fn.__module__
        read.__qualname__ = f"{fn.__qualname__}.cached"
        cached_read = st.cache_data(ttl=ttl, max_entries=max_entries, show_spinner=False)(read)

        @functools.wraps(fn)
        def call(*args: Any) -> T:
            from components.connection import connection_key, get_namespace

            conn = connection_key()
            return cached_read(conn, epoch(conn, scope(*args)), args, get_namespace())

        return call

    return decorate


__all__ = ["CATALOG", "cached", "epoch", "invalidate", "invalidate_tables", "table_scope"]
