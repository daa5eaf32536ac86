"""Paging: follow ``page_token`` across pages of any ``LanceNamespace`` list operation, and
cut a long list into the pages the UI shows.

Works on every backend (REST, local, pylance's own classes), with request/response models or
plain dicts::

    tables = list_all(ns.list_tables, ListTablesRequest(id=["ns"]), field="tables")
    for version in iter_all(ns.list_table_versions, ListTableVersionsRequest(id=["t"])):
        ...

Paging stops when the response's ``page_token`` is null or empty. A server that hands back a
token it already gave (which would loop forever) raises ``InternalError``; so does going past
``max_pages`` pages or ``max_items`` items (a server that never stops would otherwise hold the
console's memory and time).
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from lance_namespace.errors import InternalError

from backend.spec.fields import field_of

# The most one listing reads. The console's catalog scale is 100,000 tables in a namespace:
# they list in 100 pages of the 1,000 the console asks for (``LIST_BATCH``), and in 10,000
# pages at the smallest page size a server could sensibly impose (10); 1,000,000 items (ten
# times that scale) are some 100 MB of names.
DEFAULT_MAX_PAGES = 10_000
DEFAULT_MAX_ITEMS = 1_000_000
# Response field holding the items, by response class name prefix.
KNOWN_FIELDS: tuple[str, ...] = ("namespaces", "tables", "versions", "indexes", "tags", "branches")


def _with_token(request: Any, token: str | None) -> Any:
    if isinstance(request, dict):
        out = dict(request)
        out["page_token"] = token
        return out
    # Pydantic model: a shallow copy with the token replaced (no re-validation).
    return request.model_copy(update={"page_token": token})


def _check_new_page(token: str | None, page: Any, before: Any, pages: int) -> None:
    """A page asked for with ``token`` that holds the items of the page before it again: the
    server ignores tokens (and makes new ones), and the listing would never end. The one
    check of every reader of pages beside a token given twice."""
    if token and page and page == before:
        raise InternalError(
            f"pagination loop: the server answered page_token {token!r} with the page "
            f"before it again; stopped after {pages} pages"
        )


def _check_bounds(pages: int, items: int, max_pages: int, max_items: int, more: bool) -> None:
    """The bounds of one listing, after ``pages`` pages holding ``items`` items (``more``:
    the server says another page follows): refused past ``max_items`` items, or when another
    page would be the one past ``max_pages``. The one check of every reader of pages."""
    if items > max_items:
        raise InternalError(
            f"listing stopped: the server gave more than {max_items:,} items in {pages:,} "
            f"pages, more than the console reads of one listing (max_items={max_items})"
        )
    if more and pages >= max_pages:
        raise InternalError(
            f"pagination stopped after max_pages={max_pages} pages ({items:,} items), "
            "the most the console reads of one listing, and the server has more"
        )


def _size(page: Any) -> int:
    try:
        return len(page) if page else 0
    except TypeError:
        return 0


def _page_items(response: Any) -> Any:
    """The items of one page (``None`` where the response's shape does not tell)."""
    try:
        return field_of(response, _infer_field(response))
    except ValueError:
        return None


def _infer_field(response: Any) -> str:
    for name in KNOWN_FIELDS:
        if field_of(response, name) is not None:
            return name
    fields = response.keys() if isinstance(response, dict) else type(response).model_fields
    candidates = [f for f in fields if f not in ("context", "page_token")]
    if len(candidates) == 1:
        return candidates[0]
    raise ValueError(f"cannot tell which field of {type(response).__name__} holds the items")


def iter_pages(
    method: Callable[[Any], Any],
    request: Any,
    *,
    max_pages: int = DEFAULT_MAX_PAGES,
    max_items: int = DEFAULT_MAX_ITEMS,
) -> Iterator[Any]:
    """Yield every page (response) of a list operation, starting at ``request.page_token``.
    A server that gives a token twice, or answers a token with the page before it again (it
    ignores tokens and makes new ones), is an ``InternalError``, not an endless listing; so is
    one past ``max_pages`` pages or ``max_items`` items."""
    seen: set[str] = set()
    token = field_of(request, "page_token")
    current = request
    before: Any = None
    pages = items = 0
    while True:
        response = method(current)
        page = _page_items(response)
        pages += 1
        items += _size(page)
        _check_new_page(token, page, before, len(seen) + 1)
        _check_bounds(pages, items, max_pages, max_items, more=False)
        before = page
        yield response
        token = field_of(response, "page_token")
        if not token:
            return
        _check_bounds(pages, items, max_pages, max_items, more=True)
        if token in seen:
            raise InternalError(
                f"pagination loop: the server returned page_token {token!r} twice; "
                f"stopped after {len(seen) + 1} pages"
            )
        seen.add(token)
        current = _with_token(request, token)


def iter_all(
    method: Callable[[Any], Any],
    request: Any,
    field: str | None = None,
    *,
    max_pages: int = DEFAULT_MAX_PAGES,
    max_items: int = DEFAULT_MAX_ITEMS,
) -> Iterator[Any]:
    """Yield every item across all pages. ``field`` names the response list (``tables``,
    ``versions``, ...); inferred when omitted. Dict-valued fields (tags, branches) yield
    ``(name, value)`` pairs."""
    for page in iter_pages(method, request, max_pages=max_pages, max_items=max_items):
        name = field or _infer_field(page)
        items = field_of(page, name)
        if not items:
            continue
        if isinstance(items, dict):
            yield from items.items()
        else:
            yield from items


def list_all(
    method: Callable[[Any], Any],
    request: Any,
    field: str | None = None,
    *,
    max_pages: int = DEFAULT_MAX_PAGES,
    max_items: int = DEFAULT_MAX_ITEMS,
) -> list[Any]:
    """All items across all pages, as a list (see :func:`iter_all`)."""
    return list(iter_all(method, request, field, max_pages=max_pages, max_items=max_items))


# -- a listing read as far as asked -----------------------------------------------------------------


class Listing:
    """A list operation read page by page, only as far as asked, and kept: the items read so
    far (in the server's order, repeats dropped), the next page's token, whether the end was
    reached, and how many requests it took. One object may serve several sessions (a lock).

    ``ensure(n)`` reads until ``n`` items are known (one request of ``max(batch, missing)``
    items at a time) or the listing ends; ``ensure(None)`` reads to the end with no ``limit``
    (the server's own page size: one request where the server allows it). A server that
    answers a full page without a token (pylance's REST adapter never gives one) may have
    more: the next read asks again without a limit, for everything.

    ``key`` tells repeats apart (default: the item itself), e.g. a version's number."""

    def __init__(
        self,
        method: Callable[[Any], Any],
        request: Any,
        field: str,
        *,
        batch: int | None = None,
        key: Callable[[Any], Hashable] | None = None,
        max_pages: int = DEFAULT_MAX_PAGES,
        max_items: int = DEFAULT_MAX_ITEMS,
    ):
        self._method = method
        self._request = request
        self._field = field
        self._batch = batch
        self._key = key or (lambda item: item)
        self._max_pages = max_pages
        self._max_items = max_items
        self._received = 0  # items received, repeats included
        self._items: list[Any] = []
        self._seen: set[Hashable] = set()
        self._token: str | None = field_of(request, "page_token")
        self._tokens: set[str] = set()
        self._before: Any = None  # the items of the page read last
        self._done = False
        self._unsure = False  # a full page came without a token: more may exist
        self._lock = threading.Lock()
        self.requests = 0

    @property
    def complete(self) -> bool:
        """Whether the listing was read to its end."""
        return self._done

    @property
    def known(self) -> int:
        """How many items were read so far."""
        return len(self._items)

    def items(self, start: int = 0, stop: int | None = None) -> list[Any]:
        """The items read so far, ``[start:stop]`` (a copy)."""
        with self._lock:
            return self._items[start:stop]

    def ensure(self, count: int | None) -> Listing:
        """Read until ``count`` items are known or the end (``None``: to the end)."""
        with self._lock:
            while not self._done and (count is None or len(self._items) < count):
                self._read_page(None if count is None else count - len(self._items))
        return self

    def read_all(self) -> list[Any]:
        """Every item (the listing read to its end first)."""
        return self.ensure(None).items()

    def _read_page(self, missing: int | None) -> None:
        _check_bounds(self.requests, self._received, self._max_pages, self._max_items, more=True)
        limit = None if missing is None or self._unsure else max(self._batch or 0, missing)
        token = None if self._unsure else self._token
        request = self._request
        if isinstance(request, dict):
            request = {**request, "page_token": token, "limit": limit}
        else:
            request = request.model_copy(update={"page_token": token, "limit": limit})
        response = self._method(request)
        self.requests += 1
        page = field_of(response, self._field) or []
        self._received += _size(page)
        _check_new_page(token, page, self._before, self.requests)
        _check_bounds(self.requests, self._received, self._max_pages, self._max_items, more=False)
        self._before = page
        for item in page:
            marker = self._key(item)
            if marker not in self._seen:
                self._seen.add(marker)
                self._items.append(item)
        next_token = field_of(response, "page_token")
        if not next_token:
            self._unsure = limit is not None and len(page) >= limit
            self._done = not self._unsure
            self._token = None
            return
        self._unsure = False
        if next_token in self._tokens:
            raise InternalError(
                f"pagination loop: the server returned page_token {next_token!r} twice; "
                f"stopped after {len(self._tokens) + 1} pages"
            )
        self._tokens.add(next_token)
        self._token = next_token


# -- pages of a list already fetched ---------------------------------------------------------------

PAGE_SIZE = 50


@dataclass(frozen=True)
class Page:
    """One page of a longer list: ``items`` plus where it sits (1-based ``number``)."""

    items: list[Any]
    number: int
    count: int  # number of pages (>= 1)
    total: int  # number of items over all pages (of those listed so far, when not complete)
    start: int  # index of the first item in the full list
    complete: bool = True  # False: more items may follow the ``total`` listed so far

    @property
    def first_row(self) -> int:
        """1-based position of the first item (0 when empty)."""
        return self.start + 1 if self.items else 0

    @property
    def last_row(self) -> int:
        return self.start + len(self.items)


def page_count(total: int, page_size: int = PAGE_SIZE) -> int:
    """Number of pages for ``total`` items (at least 1)."""
    return max(1, math.ceil(total / max(1, page_size)))


def paginate(items: Sequence[Any], number: int, page_size: int = PAGE_SIZE) -> Page:
    """Page ``number`` (1-based, clamped into range) of ``items``."""
    count = page_count(len(items), page_size)
    number = min(max(1, int(number or 1)), count)
    start = (number - 1) * page_size
    return Page(list(items[start : start + page_size]), number, count, len(items), start)


def listing_page(listing: Listing, number: int, page_size: int = PAGE_SIZE) -> Page:
    """Page ``number`` (1-based) of an open-ended ``listing``: read as far as that page and
    one item beyond (so that a next page is known to exist); ``count`` is the pages known,
    one more while the listing may go on."""
    number = max(1, int(number or 1))
    listing.ensure(number * page_size + 1)
    known = listing.known
    count = page_count(known, page_size)
    if not listing.complete and known % max(1, page_size) == 0:
        count += 1
    number = min(number, count)
    start = (number - 1) * page_size
    items = listing.items(start, start + page_size)
    return Page(items, number, count, known, start, listing.complete)


def filter_names(names: Sequence[str], query: str | None) -> list[str]:
    """Names matching ``query``: case-insensitive substring, or a glob when it has ``*``/``?``."""
    q = (query or "").strip().lower()
    if not q:
        return list(names)
    if "*" in q or "?" in q:
        pattern = re.compile(
            "^" + "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in q) + "$"
        )
        return [n for n in names if pattern.match(n.lower())]
    return [n for n in names if q in n.lower()]
