"""Errors and results, shown readably and as text: one helper for every page.

Streamlit renders alert bodies as markdown (and ``$...$`` as LaTeX); names and server messages
are data, so :func:`as_text` escapes them: a ``$``, ``_`` or ``:`` in a name shows as typed.
Error texts come from ``backend.describe_error`` (no server source paths, no secrets).

* :func:`show_error` / :func:`run` - call a backend operation, show any failure in one box;
* :func:`show_problems` - a list of problems in one box;
* :func:`flash` / :func:`render_flash` - a result kept across the rerun that follows a write.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import streamlit as st

import backend
from backend.rules import ids
from backend.spec import operations
from components import polling, state

T = TypeVar("T")
_log = logging.getLogger(__name__)
# ASCII punctuation markdown (CommonMark, Streamlit's extensions, LaTeX) may interpret.
_SPECIAL = frozenset("\\`*_{}[]()#+-.!|$<>~:=^&%\"'")
_ICONS = {
    "success": ":material/check_circle:",
    "error": ":material/error:",
    "warning": ":material/warning:",
    "info": ":material/info:",
}


# Icon shortcodes survive backslash escapes: a zero-width space after the colon breaks them.
_SHORTCODES = re.compile(r":(?=(?:material|streamlit)/)", re.IGNORECASE)
# Streamlit's markdown turns ``>=``, ``<=``, ``~=``, ``->``, ``<-``, ``<->`` and ``--`` between
# spaces into symbols (a filter ``qty >= 3`` would read ``qty ≥ 3``), escaped or not: a
# zero-width space after the sequence keeps it as typed.
_TYPOGRAPHY = re.compile(r"(?<!\S)(<->|->|<-|--|>=|<=|~=)(?!\S)")


# Characters that change how the rest of a line shows (bidirectional overrides and
# isolates, marks) or show nothing (controls other than line ends and tabs): shown as their
# code point, so a name holding U+202E cannot turn the rest of a message around.
_UNSEEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
# A run of more than this many characters without a space (a name or value typed or linked
# at length) is shown by its ends and its length: a message stays readable.
LONG_WORD = 200
_LONG = re.compile(rf"\S{{{LONG_WORD + 1},}}")


def _shortened(match: re.Match[str]) -> str:
    word = match.group(0)
    return f"{word[:120]}…{word[-40:]} ({len(word):,} characters)"


def as_text(text: Any) -> str:
    """``text`` escaped so markdown shows it exactly as typed (line breaks kept), with
    characters that would hide or turn text shown as code points (``<U+202E>``) and a run of
    over :data:`LONG_WORD` characters without a space shortened to its ends and length."""
    text = _LONG.sub(_shortened, _UNSEEN.sub(lambda m: f"<U+{ord(m.group(0)):04X}>", str(text)))
    text = _TYPOGRAPHY.sub("\\1\u200b", _SHORTCODES.sub(":\u200b", text))
    lines = text.split("\n")
    return "  \n".join("".join("\\" + c if c in _SPECIAL else c for c in line) for line in lines)


def delimiter() -> str:
    """The delimiter of the session's connection (``$`` until one is known)."""
    return ids.delimiter_of(state.get(state.Conn.SPEC))


def readable(text: Any) -> str:
    """A message as the UI shows it: ids joined by the connection's delimiter shown as
    ``a › b`` (``backend.rules.ids.display_ids_in_text``)."""
    return ids.display_ids_in_text(str(text), delimiter())


# An operation's name the backend puts in front of its message ("list_tables: ..."): the
# action of the line says what failed in the user's words.
_OPERATION = re.compile(r"([a-z][a-z_]*): ")
_OPERATIONS = operations.READ_OPS | operations.WRITE_OPS


def _without_operation(message: str) -> str:
    found = _OPERATION.match(message)
    return message[found.end() :] if found and found.group(1) in _OPERATIONS else message


def error_lines(err: BaseException, *, action: str | None = None) -> list[str]:
    """The plain-text lines of an error: what failed, the code, the message (without the
    operation's name in front of it), detail, status."""
    info = backend.describe_error(err)
    head = f"{action} failed. " if action else ""
    lines = [f"{head}{info['title']}: {readable(_without_operation(info['message']))}"]
    if info.get("detail"):
        lines.append(f"Detail: {readable(info['detail'])}")
    if info.get("status"):
        lines.append(f"HTTP status: {info['status']}")
    return lines


def error_text(err: BaseException, *, action: str | None = None) -> str:
    return "\n".join(error_lines(err, action=action))


def show(kind: str, text: str) -> None:
    """One alert box (``kind``: success | info | warning | error) with ``text`` as text."""
    box = {"success": st.success, "info": st.info, "warning": st.warning}.get(kind, st.error)
    box(as_text(text), icon=_ICONS.get(kind))
    if box is st.error:
        polling.error_shown()


def show_error(err: BaseException, *, action: str | None = None) -> None:
    """An error as one readable box; never a traceback. An error the backend put in the
    user's terms (a bad filter) keeps the engine's own text behind an expander."""
    show("error", error_text(err, action=action))
    engine = backend.describe_error(err).get("engine_message")
    if engine:
        with st.expander("The engine's message", icon=":material/terminal:"):
            st.code(engine, language=None, wrap_lines=True)


def run(
    fn: Callable[..., T],
    *args: Any,
    action: str | None = None,
    info_if: Callable[[Exception], str | None] | None = None,
    **kwargs: Any,
) -> T | None:
    """``fn(*args, **kwargs)``; any failure is shown (:func:`show_error`) and gives ``None``.
    ``info_if``: the text of a failure that is no error (a table declared only, a namespace
    without the demo's tables), shown as an info instead; ``None`` for an error."""
    try:
        return fn(*args, **kwargs)
    except Exception as err:  # noqa: BLE001 - the UI shows every failure as text
        info = info_if(err) if info_if is not None else None
        if info is not None:
            show("info", info)
        else:
            _log.warning("%s", error_text(err, action=action))  # what the page shows (redacted)
            show_error(err, action=action)
        return None


def show_problems(title: str, problems: Iterable[Any], *, kind: str = "error") -> None:
    """``title`` and one line per problem, in one box."""
    items = [readable(p) for p in problems]
    if items:
        show(kind, title + "\n" + "\n".join(f"• {p}" for p in items))


def flash(page: str, kind: str, text: str, **extra: Any) -> None:
    """Keep a result for the next run of ``page`` (after ``st.rerun``)."""
    state.flash(page, kind, text, **extra)


def render_flash(page: str) -> dict[str, Any] | None:
    """Show the result a write kept for this page, once; returns it (with its extras)."""
    item = state.pop_flash(page)
    if item:
        show(item["kind"], item["text"])
    return item


def keep_flash(page: str) -> None:
    """Before a rerun the user did not ask for (figures read in the background arrived):
    the result shown in this run is shown again in the next."""
    state.keep_flash(page)
