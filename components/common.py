"""Small UI pieces every page uses: a JSON viewer with secrets masked, a key/value grid,
"type the name to confirm", the read-only notice and a form's role lock, and whole-number fields
read as typed."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from backend.redaction import redact_json, redact_mapping
from backend.rules import numbers
from backend.text import human_bytes
from components import feedback, session
from components.feedback import as_text


def render_json(
    data: Any, *, key_prefix: str, label: str | None = None, expanded: bool = False
) -> None:
    """A model/dict/list/JSON text as collapsible JSON, secret values masked
    (``backend.redaction``). With ``label`` the viewer sits in an expander, built only
    while it is open unless ``expanded``."""
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except ValueError:
            data = data.decode(errors="replace") if isinstance(data, bytes) else data
    shown = redact_json(data)

    def body(open_all: bool) -> None:
        if isinstance(shown, (dict, list)):
            st.json(shown, expanded=open_all)
        else:
            st.text(str(shown))

    if label is None:
        body(expanded)
        return
    if expanded:
        with st.expander(label, expanded=True):
            body(True)
        return
    # Collapsed: the JSON viewer is built only once opened (its component is heavy to load).
    if box := lazy_expander(label, key=f"{key_prefix}.open"):
        with box:
            body(True)


def code_span(text: str) -> str:
    """``text`` as one Markdown code span: shown as typed, in monospace (a fence longer than
    any run of backticks inside it; markdown, LaTeX and directives are not interpreted)."""
    run = longest = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def path_span(text: str) -> str:
    """A path, URI or location as Markdown: one line, in monospace, as typed."""
    return code_span(" ".join(text.splitlines()) or "—")


def render_path(text: str) -> None:
    """A path, URI or location in monospace, as typed. Not ``st.code``: its code-block
    component costs about half a second per page load (benchmarks/bench_ui_pages.py)."""
    st.markdown(path_span(text))


FIGURE_SEPARATOR = " · "


def render_figures(
    figures: list[tuple[str, Any]], *, help: str | None = None, where: Any = st
) -> None:
    """A row of labelled figures as one line of text (``Versions **12** · Latest **12**``):
    one element, where ``st.metric`` would draw one each and have every new page load its
    extra script first."""
    where.markdown(
        FIGURE_SEPARATOR.join(f"{as_text(label)} **{as_text(value)}**" for label, value in figures),
        help=help,
    )


def lazy_expander(label: str, *, key: str, icon: str | None = None) -> Any | None:
    """A collapsed expander whose content is built only while it is open (its open state is
    kept per session under ``key``): the container when open, else ``None``. For heavy,
    on-demand panels (charts, highlighted code) that would slow every page load."""
    box = st.expander(label, icon=icon, key=key, on_change="rerun")
    return box if box.open else None


def lazy_popover(label: str, *, key: str, icon: str | None = None, width: Any = "content") -> Any:
    """A popover whose content is built only while it is open (its open state is kept per
    session under ``key``, as :func:`lazy_expander`'s): the container when open, else
    ``None``. Its button costs a page load less than an expander's row."""
    box = st.popover(label, icon=icon, key=key, on_change="rerun", width=width)
    return box if box.open else None


# What every grid shows for a value not known yet or not set (Streamlit's own is a grey "None").
MISSING = "—"


def header_in_words(name: str) -> str:
    """A console-made grid's header for its column ``name``: spaces for underscores, the first
    letter a capital ("type_a" → "Type a"); a version's column ("v12") as it is."""
    text = str(name).replace("_", " ").strip()
    if re.fullmatch(r"v\d+", text) or not text[:1].islower():
        return text
    return text[:1].upper() + text[1:]


def dataframe(data: Any, *, words: bool = False, sizes: Sequence[str] = (), **kwargs: Any) -> Any:
    """``st.dataframe(data, **kwargs)`` showing every missing value (None, NaN, NA, NaT) as
    :data:`MISSING`: the one rule of every grid's empty cells. Only what is drawn changes
    (Streamlit's ``placeholder``): numbers stay numbers, sorted as numbers, in their
    ``column_config`` format. ``words``: a grid the console makes (not a table's rows, whose
    columns keep their names) is headed in words (:func:`header_in_words`) where its
    ``column_config`` gives no label. ``sizes``: columns of byte counts, drawn in the one size
    form (``backend.text.human_bytes``, as every page's text says sizes) and sorted as the
    numbers they are (a pandas Styler's display values; their ``column_config`` must give
    no ``format``, which would draw over them)."""
    kwargs.setdefault("placeholder", MISSING)
    if words:
        config = dict(kwargs.get("column_config") or {})
        for name in getattr(data, "columns", data):
            config.setdefault(name, header_in_words(name))
        kwargs["column_config"] = config
    shown = [c for c in sizes if c in getattr(data, "columns", ())]
    if shown and len(data):
        data = _size_styler(data, shown)
    return st.dataframe(data, **kwargs)


def _size_styler(data: pd.DataFrame, sizes: Sequence[str]) -> Styler:
    """A pandas Styler of ``data`` whose display values are ``human_bytes`` of the ``sizes``
    columns' cells, and nothing else. Streamlit (``marshall_styler``) asks a Styler to compute
    and translate itself, and pandas' own translation renders every cell of the frame (some
    8 ms for 50 rows of 10 columns, against 1.4 ms here); the other cells' display values
    are their values as text, Streamlit's own fill (a cell without a value is drawn as the
    grid's placeholder whatever its display value). A Styler itself, not a subclass:
    Streamlit knows a Styler by its exact type."""
    styler = Styler(data)
    columns = [data.columns.get_loc(c) for c in sizes]

    def translate(*args: Any, **kwargs: Any) -> dict[str, Any]:
        body: list[list[dict[str, str]]] = [[] for _ in range(len(data))]
        for col in columns:
            for row, value in enumerate(data.iloc[:, col]):
                body[row].append({"id": f"row{row}_col{col}", "display_value": human_bytes(value)})
        return {"body": body}

    # the two steps Streamlit calls, as the instance's own
    styler._compute = lambda: styler
    styler._translate = translate
    return styler


def scroll_into_view(container_key: str) -> None:
    """Scroll the page so that the container drawn with ``key=container_key`` starts at the
    top of the window (after its content has been laid out): details opened below the fold
    by a click come into view."""
    css_class = "st-key-" + "".join(c if c.isalnum() or c in "-_" else "-" for c in container_key)
    # a new script each time (the request's nonce): Streamlit keeps an element whose content
    # did not change, and a kept script does not run again for the next pick
    nonce = time.time_ns()
    st.html(
        f"<script>/* {nonce} */(function () {{"
        f"const find = () => window.parent.document.querySelector('.{css_class}')"
        f" || document.querySelector('.{css_class}');"
        "let tries = 0;"
        "const go = () => { const el = find();"
        " if (el) { el.scrollIntoView({behavior: 'smooth', block: 'start'}); }"
        " else if (tries++ < 50) { setTimeout(go, 100); } };"
        "setTimeout(go, 50);"
        "})();</script>",
        unsafe_allow_javascript=True,
    )


def render_mapping(data: dict[str, Any] | None, *, empty: str, key_prefix: str) -> None:
    """A key/value grid with secret values masked, or ``empty`` as a caption."""
    if not data:
        st.caption(empty)
        return
    shown = redact_mapping(data)
    frame = pd.DataFrame({"key": list(shown), "value": [str(v) for v in shown.values()]})
    dataframe(frame, hide_index=True, key=f"{key_prefix}.grid", words=True)


def empty_kv_frame() -> pd.DataFrame:
    """An empty ``key``/``value`` frame for ``st.data_editor`` grids."""
    return pd.DataFrame({"key": pd.Series([], dtype="str"), "value": pd.Series([], dtype="str")})


def kv_editor_rows(edits: Any) -> list[dict[str, Any]]:
    """The rows of a ``st.data_editor`` started from :func:`empty_kv_frame`, read from its
    session state (its edits: ``added_rows``, with ``edited_rows`` and ``deleted_rows`` by
    position), for a callback that runs before the editor is drawn again."""
    if not isinstance(edits, dict):
        return []
    rows = [dict(r) for r in edits.get("added_rows") or [] if isinstance(r, dict)]
    for index, changes in (edits.get("edited_rows") or {}).items():
        if 0 <= int(index) < len(rows) and isinstance(changes, dict):
            rows[int(index)].update(changes)
    gone = {int(i) for i in edits.get("deleted_rows") or []}
    return [r for i, r in enumerate(rows) if i not in gone]


def confirmation_matches(typed: str | None, expected: str) -> bool:
    """True when ``typed`` equals ``expected`` (surrounding white space ignored)."""
    return bool(expected) and (typed or "").strip() == expected


def render_typed_confirmation(expected: str, *, key_prefix: str, label: str | None = None) -> bool:
    """A text input asking to type ``expected``; returns whether it matches (inside a form,
    check it after the submit button). The box is empty, with no placeholder: ``expected``
    shown as a placeholder looks as if it were filled in already."""
    typed = st.text_input(label or f"Type {expected} to confirm", key=f"{key_prefix}.confirm")
    return confirmation_matches(typed, expected)


def render_read_only_notice() -> None:
    """Why this page's writes are disabled: the connection is read-only (the sidebar switch or
    the launch), or the signed-in user's role may not write."""
    reason = session.read_only_reason()
    if reason and session.role_denies_writes():
        st.caption(":material/lock: " + as_text(f"Writes are disabled: {reason}."))
    else:
        st.caption(":material/lock: Read-only connection: writes are disabled (see the sidebar).")


def render_role_lock(reason: str | None) -> None:
    """Why a form is disabled beyond the page's read-only state (``session.role_lock``), under
    its button; nothing when ``reason`` is ``None``."""
    if reason:
        st.caption(":material/lock: " + as_text(f"Disabled: {reason}."))


def render_whole_number(
    label: str,
    *,
    key: str,
    bounds: tuple[int, int],
    problems: list[str],
    name: str | None = None,
    required: bool = False,
    where: Any = None,
    **widget: Any,
) -> int | None:
    """A whole-number field: a text box whose text ``numbers.whole_number`` reads as typed
    (a number input would clamp an out-of-range value or fall back to its default). The
    value, or ``None`` when empty or refused; a refused value's problem (naming ``name``,
    else ``label``, and ``bounds``) is shown under the field and added to ``problems``, so
    the form runs nothing while one is there."""
    box = where if where is not None else st.container()
    text = box.text_input(label, key=key, **widget)
    value, problem = numbers.whole_number(name or label, text, *bounds, required=required)
    if problem:
        problems.append(problem)
        with box:
            feedback.show("error", problem)
    return value
