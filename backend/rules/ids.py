"""Object ids and names: the one rule for namespaces, tables, indexes, tags and transactions.

An id is a list of parts (``["sales", "orders"]``); on the wire and in the UI the parts are
joined with the connection's delimiter (``sales$orders``). Two levels of checks:

* **addressing** an object (describe, list, drop, ...): every part is a non-empty string of at
  most :data:`MAX_ADDRESS_PART` characters, without control characters, path separators or the
  delimiter, and is not ``.`` or ``..``. These protect paths and URLs: a part can never name a
  parent directory or collapse a REST route. Names other tools created (unicode, spaces) stay
  reachable.
* **creating** a name (a namespace, table, index or tag the console makes): additionally ASCII
  letters, digits, ``_``, ``-`` and ``.``, starting with a letter, digit or ``_``, at most
  :data:`MAX_NAME` characters, and the joined id at most :data:`MAX_CREATED_ID` characters.
  Unicode names are refused: pylance's directory namespace stores them under a percent-encoded
  directory whose location does not round-trip, so the console does not make them.

Every path uses these functions: the local backend, the REST client before it sends, batch
commit, the batch builder and the UI forms.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

from lance_namespace.errors import InvalidInputError

from backend.text import capital, is_digits

DEFAULT_DELIMITER = "$"
CATALOG_DELIMITER = "$"  # the object ids of a directory namespace's catalog (__manifest)
MAX_NAME = 128  # characters of a name the console creates
MAX_CREATED_ID = 200  # characters of a created id, parts joined (a directory name must fit 255)
MAX_ADDRESS_PART = 1024  # characters of any part of an id the console sends or opens
MAX_PARTS = 16  # nesting depth
# Delimiters: one printable ASCII punctuation character that means nothing in a path or a URL.
SAFE_DELIMITERS = "$.:|~^!@"

# The UI shows ids with their parts joined by DISPLAY_SEPARATOR; typed ids may use it too.
DISPLAY_MARK = "›"
DISPLAY_SEPARATOR = f" {DISPLAY_MARK} "
# Delimiters that ordinary message text does not contain: ids joined with them are recognised
# in messages (display_ids_in_text).
_TEXT_DELIMITERS = "$|~^"

_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")


def _is_control(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")


def part_problem(
    part: Any, *, what: str = "table", delimiter: str = DEFAULT_DELIMITER, create: bool = False
) -> str | None:
    """Why ``part`` cannot be one part of an id (``None``: it can). See the module docstring."""
    if not isinstance(part, str):
        return f"a {what} name must be a string, not {type(part).__name__}"
    if not part:
        return f"a {what} name must not be empty"
    if len(part) > (MAX_NAME if create else MAX_ADDRESS_PART):
        limit = MAX_NAME if create else MAX_ADDRESS_PART
        return f"the {what} name {_shown(part)} is longer than {limit} characters"
    # printable ASCII has no control character: only other names are read character by character
    if not (part.isascii() and part.isprintable()) and any(_is_control(c) for c in part):
        return f"the {what} name {_shown(part)} contains a control character"
    if "/" in part or "\\" in part:
        return f"the {what} name {_shown(part)} contains a path separator ('/' or '\\')"
    if part in (".", ".."):
        return f"{part!r} is not a valid {what} name"
    if delimiter and delimiter in part:
        return (
            f"the {what} name {_shown(part)} contains the delimiter {delimiter!r}, which "
            "separates the parts of an id"
        )
    if part != part.strip():
        return f"the {what} name {_shown(part)} starts or ends with white space"
    if create:
        if not part.isascii():
            return (
                f"the {what} name {_shown(part)} is not ASCII: names the console creates use "
                "ASCII letters, digits, '_', '-' and '.'"
            )
        if not _NAME_RE.match(part):
            return (
                f"the {what} name {_shown(part)} is not valid: use letters, digits, '_', '-' "
                "and '.', starting with a letter, digit or '_'"
            )
    return None


def label_problem(name: Any, *, what: str, create: bool = False) -> str | None:
    """Why ``name`` cannot name a table's tag, index or branch (``None``: it can). These names
    are never joined into an object id, so the id delimiter may appear in them (the tag
    ``v1.2`` on a ``.``-delimited connection); every other rule of :func:`part_problem` holds."""
    return part_problem(name, what=what, delimiter="", create=create)


# Tag names that read as a version rather than a tag ("latest" in a link or a checkout).
VERSION_WORDS = frozenset({"latest", "head", "current", "main"})


def tag_name_warning(name: str) -> str | None:
    """Why a tag named ``name`` is easy to mistake for a version (``None``: it is not): a
    number (``1``, ``v1``) or a word that names a version (``latest``). Such names are
    allowed; the console asks before creating one."""
    text = name.strip()
    bare = text[1:] if text[:1] in "vV" else text
    if is_digits(bare):
        return (
            f"the tag {text} looks like a version number: in a link or a checkout it is easy to "
            f"mistake for version {int(bare)}"
        )
    if text.lower() in VERSION_WORDS:
        return f"the tag {text} reads as a version ({text.lower()}), not as a name you chose"
    return None


def object_id(parts: Sequence[str]) -> str:
    """The catalog's object id of an id (``__manifest``'s ``object_id``): the parts joined
    with ``$``, whatever delimiter a connection shows ids with."""
    return CATALOG_DELIMITER.join(parts)


def parse_object_id(text: str) -> list[str]:
    """An id from a catalog object id (:func:`object_id` backwards)."""
    return text.split(CATALOG_DELIMITER)


def missing_parent(
    parts: Sequence[str],
    namespace_exists: Callable[[list[str]], bool],
    *,
    delimiter: str = DEFAULT_DELIMITER,
) -> str | None:
    """The one rule "the parent namespace must exist" for anything created under it (a
    namespace, a table, a declared or registered table, a rename's target): the message when
    the parent of ``parts`` is missing, ``None`` when it exists or is the root. Whoever calls
    it says how existence is read (the catalog, a server, a batch's simulated view)."""
    parent = list(parts)[:-1]
    if parent and not namespace_exists(parent):
        return f"namespace {format_id(parent, delimiter)} not found"
    return None


def check_part(
    part: Any, *, what: str = "table", delimiter: str = DEFAULT_DELIMITER, create: bool = False
) -> str:
    """``part`` if it is a valid id part, else ``InvalidInputError``."""
    problem = part_problem(part, what=what, delimiter=delimiter, create=create)
    if problem:
        raise InvalidInputError(capital(problem))
    return part


def id_problem(
    parts: Any,
    *,
    what: str = "table",
    delimiter: str = DEFAULT_DELIMITER,
    create: bool = False,
    allow_root: bool = False,
) -> str | None:
    """Why ``parts`` is not a valid id (``None``: it is). The root (``[]``) is only valid
    with ``allow_root``. ``create`` checks the last part as a new name."""
    if isinstance(parts, (str, bytes)) or not isinstance(parts, Sequence):
        return f"a {what} id must be a list of names, not {type(parts).__name__}"
    parts = list(parts)
    if not parts:
        return None if allow_root else f"a {what} id must have at least one part"
    if len(parts) > MAX_PARTS:
        return f"a {what} id has at most {MAX_PARTS} parts, got {len(parts)}"
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        problem = part_problem(
            part,
            what=what if last else "namespace",
            delimiter=delimiter,
            create=create and last,
        )
        if problem:
            return problem
    if create and len(delimiter.join(parts)) > MAX_CREATED_ID:
        return f"the {what} id {_shown(delimiter.join(parts))} is longer than {MAX_CREATED_ID} characters"
    return None


def check_id(
    parts: Any,
    *,
    what: str = "table",
    delimiter: str = DEFAULT_DELIMITER,
    create: bool = False,
    allow_root: bool = False,
) -> list[str]:
    """``parts`` as a list if it is a valid id, else ``InvalidInputError``."""
    problem = id_problem(
        parts, what=what, delimiter=delimiter, create=create, allow_root=allow_root
    )
    if problem:
        raise InvalidInputError(capital(problem))
    return list(parts)


def name_problem(
    name: str | None, what: str = "table", delimiter: str = DEFAULT_DELIMITER
) -> str | None:
    """For forms: why ``name`` cannot be the name of a new ``what`` (``None``: it can)."""
    if not name or not str(name).strip():
        return f"Enter a {what} name."
    problem = part_problem(name, what=what, delimiter=delimiter, create=True)
    return capital(problem) + "." if problem else None


def split_id_text(text: str | None, delimiter: str = DEFAULT_DELIMITER) -> list[str]:
    """The one rule reading a typed id: ``"sales › orders"`` (as the UI shows ids) and
    ``"sales$orders"`` (the connection's delimiter) both give ``["sales", "orders"]``. Text
    containing the display separator is split on it (white space around each part dropped);
    other text on ``delimiter``. Parts are not checked here (:func:`parse_id` does)."""
    t = (text or "").strip()
    if DISPLAY_MARK in t:
        return [p.strip() for p in t.split(DISPLAY_MARK)]
    return t.split(delimiter) if delimiter else [t]


def parse_id(
    text: str | None,
    delimiter: str = DEFAULT_DELIMITER,
    what: str = "table",
    *,
    create: bool = False,
) -> list[str]:
    """``"sales$orders"`` or ``"sales › orders"`` -> ``["sales", "orders"]``
    (:func:`split_id_text`); ``InvalidInputError`` when the text is empty or a part is invalid
    (doubled, leading or trailing delimiters included)."""
    t = (text or "").strip()
    if not t:
        raise InvalidInputError(f"Enter a {what} id.")
    parts = split_id_text(t, delimiter)
    if any(not p for p in parts):
        split_by = DISPLAY_MARK if DISPLAY_MARK in t else delimiter
        raise InvalidInputError(
            f"{capital(what)} id {t!r} has an empty part (split by {split_by!r}): check for "
            "doubled, leading or trailing delimiters."
        )
    return check_id(parts, what=what, delimiter=delimiter, create=create)


def format_id(parts: Sequence[str], delimiter: str = DEFAULT_DELIMITER) -> str:
    """``["sales", "orders"]`` -> ``sales$orders`` (the root is ``""``)."""
    return delimiter.join(parts)


def display_id(parts: Sequence[str], root: str = "(root)") -> str:
    """The one form of an id the UI shows: ``["sales", "orders"]`` -> ``sales › orders``
    (the root, ``[]``, is ``root``)."""
    return DISPLAY_SEPARATOR.join(str(p) for p in parts) if parts else root


def _joined_ids(delimiter: str) -> re.Pattern[str]:
    d = re.escape(delimiter)
    part = r"[\w\-]+(?:\.[\w\-]+)*"
    return re.compile(rf"(?<![\w/{d}]){part}(?:{d}{part})+(?![\w{d}])")


def display_ids_in_text(text: str, delimiter: str = DEFAULT_DELIMITER) -> str:
    """``text`` (an error or problem message) with ids joined by ``delimiter`` shown as the
    UI shows ids: ``table sales$orders exists`` -> ``table sales › orders exists``. Only for
    delimiters that do not occur in ordinary text (not ``.`` or ``:``), and only names
    (letters, digits, ``_``, ``-``, ``.``) joined by it, outside paths and URLs."""
    if not text or delimiter not in _TEXT_DELIMITERS or delimiter not in text:
        return text
    return _joined_ids(delimiter).sub(
        lambda m: DISPLAY_SEPARATOR.join(m.group(0).split(delimiter)), text
    )


def delimiter_of(namespace: Any) -> str:
    """The delimiter of a namespace (or a connection spec): its own, else ``$``."""
    return str(getattr(namespace, "delimiter", None) or DEFAULT_DELIMITER)


def delimiter_problem(delimiter: Any) -> str | None:
    """Why ``delimiter`` cannot join id parts (``None``: it can)."""
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        return f"the delimiter must be one character, got {delimiter!r}"
    if delimiter not in SAFE_DELIMITERS:
        return f"the delimiter {delimiter!r} is not one of {' '.join(SAFE_DELIMITERS)}"
    return None


def check_delimiter(delimiter: Any) -> str:
    problem = delimiter_problem(delimiter)
    if problem:
        raise InvalidInputError(capital(problem))
    return delimiter


def _shown(text: str, limit: int = 60) -> str:
    shown = text if len(text) <= limit else text[:limit] + "…"
    return repr(shown)
