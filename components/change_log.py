"""The Versions page's change log (what each version did, and who) and its row-level compare
of two versions, or of a branch with its parent (counts, then the rows inserted, updated and
deleted, paged; the columns an update changed; the method used). Data from
``backend.services.change_log``; on a branch (``branch``), the branch's own versions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import streamlit as st
from lance_namespace.errors import LanceNamespaceError

from backend.services import change_log as cl
from backend.services import row_changes as rc
from backend.services import versions as vsv
from backend.services.search.query import abbreviate
from backend.spec.paging import Listing
from components import feedback, state
from components.cache import cached, table_scope
from components.common import MISSING, dataframe, lazy_expander
from components.pager import render_listing_pager, render_pager
from components.session import get_namespace
from components.versions.compare import versions_exist

PAGE_ROWS = 50
KINDS = ("updated", "inserted", "deleted")


@cached(lambda table_id, versions, branch=None: table_scope(table_id), ttl=300, max_entries=128)
def change_log_for(
    ns: Any, table_id: tuple[str, ...], versions: tuple[int, ...], branch: str | None = None
) -> pd.DataFrame:
    """The change log of ``versions`` of ``branch`` (``None``: main; the audit user matched
    through the gated namespace)."""
    return cl.change_log(ns, list(table_id), branch, versions=versions)


def render_change_log_table(frame: pd.DataFrame, *, key_prefix: str) -> None:
    """One row per version (newest first): operation, rows added / deleted / updated,
    fragments, who and when, every column on screen at once; each version's note, then the
    backend's, under it."""
    cols = [
        "version",
        "operation",
        "rows_added",
        "rows_deleted",
        "rows_updated",
        "rows",
        "fragments_added",
        "fragments_removed",
        "user",
        "timestamp",
    ]
    ordered = frame.sort_values("version", ascending=False).reset_index(drop=True)
    number = lambda label, w: st.column_config.NumberColumn(label, format="%d", width=w)  # noqa: E731
    # widths in pixels: together they fit the expander at the page's width (1440 px window)
    dataframe(
        ordered[cols],
        hide_index=True,
        key=f"{key_prefix}.grid",
        column_config={
            "version": number("Version", 62),
            "operation": st.column_config.TextColumn("Operation", width=160),
            "rows_added": number("Added", 66),
            "rows_deleted": number("Deleted", 66),
            "rows_updated": number("Updated", 70),
            "rows": number("Rows after", 78),
            "fragments_added": number("Fragments +", 86),
            "fragments_removed": number("Fragments −", 86),
            "user": st.column_config.TextColumn(
                "By (console)", width=110, help="The audit log's user, where the console wrote it"
            ),
            "timestamp": st.column_config.DatetimeColumn(
                "Created (UTC)", format="YYYY-MM-DD HH:mm:ss", width=150
            ),
        },
    )
    if frame.attrs.get("branch"):
        st.caption(
            feedback.as_text(
                f"Branch {frame.attrs['branch']} was made from {frame.attrs['parent_branch']} "
                f"at version {frame.attrs['parent_version']}: its versions start there, each "
                "one's change counted from the version before it on the branch."
            )
        )
    for version, note in zip(ordered["version"], ordered["note"], strict=True):
        if isinstance(note, str) and note:
            st.caption(feedback.as_text(f"v{int(version)}: {note}"))
    if frame.attrs.get("note"):
        st.caption(feedback.as_text(str(frame.attrs["note"])))


def render_change_log_panel(
    table_id: tuple[str, ...], versions: Listing | pd.DataFrame, *, branch: str | None = None
) -> None:
    """The "Change log" expander: the versions in pages (newest first; a listing of main's
    is read only as far as the page shown; a branch's, ``branch``, come as a frame), each
    one's change."""
    box = lazy_expander(
        "Change log: what each version did" + (f" on branch {branch}" if branch else ""),
        key=state.Versions.CHANGE_LOG_OPEN,
        icon=":material/list_alt:",
    )
    if box is None:
        return
    with box:
        if isinstance(versions, pd.DataFrame):
            listed = sorted((int(v) for v in versions["version"]), reverse=True)
            numbers = render_pager(
                listed,
                key_prefix=state.Versions.CHANGE_LOG,
                reset_on=(table_id, branch),
                noun="versions",
            ).items
        else:
            page = render_listing_pager(
                versions, key_prefix=state.Versions.CHANGE_LOG, reset_on=table_id, noun="versions"
            )
            numbers = [int(v.version) for v in page.items]
        frame = feedback.run(
            change_log_for, table_id, tuple(numbers), branch, action="Reading the change log"
        )
        if frame is not None:
            render_change_log_table(frame, key_prefix=state.Versions.CHANGE_LOG)


def _columns(table_id: Sequence[str], branch: str | None = None) -> list[str]:
    """The latest version's column names, of ``branch`` where given (main's when the branch
    cannot be described; none when they cannot be read: the compare then says why it needs
    a key, or what is wrong with it)."""
    from components.branches import branch_columns
    from components.indexes.reads import table_columns

    if branch:
        try:
            return branch_columns(tuple(table_id), branch)
        except LanceNamespaceError:
            pass  # main's columns; the compare says if the branch cannot be read
    found = feedback.run(table_columns, tuple(table_id), action="Reading the columns")
    return [c.name for c in found or []]


def version_choice(versions: pd.DataFrame, picked: int) -> tuple[int | None, Callable[[int], bool]]:
    """What a compare form of two versions needs from a list of every version (``version``
    column): the newest version older than ``picked`` (``None``: none), and whether a version
    is on the list."""
    existing = {int(v) for v in versions["version"]}
    return vsv.newest_before(existing, picked), existing.__contains__


def render_row_changes_form(
    table_id: Sequence[str],
    picked: int,
    older: int | None,
    exists: Callable[[int], bool],
    columns: Sequence[str],
    *,
    branch: str | None = None,
) -> tuple[int, int, list[str]] | None:
    """Two versions (``older`` and ``picked`` at first) and the key columns; the request when
    pressed and both versions exist (``exists``)."""
    prefix = f"{state.Versions.ROW_CHANGES_FORM}.{tuple(table_id)}" + (
        f".{branch}" if branch else ""
    )
    with st.form(prefix, border=False):
        st.caption(
            "Which rows changed between two versions. Without key columns lance's delta is "
            "used, which needs a table with stable row ids; otherwise pick the columns that "
            "identify a row."
        )
        ca, cb, cc = st.columns([1, 1, 2])
        va = ca.number_input("From version", min_value=1, value=older or picked, key=f"{prefix}.a")
        vb = cb.number_input("To version", min_value=1, value=picked, key=f"{prefix}.b")
        key = cc.multiselect("Key columns", list(columns), key=f"{prefix}.key")
        go = st.form_submit_button("Compare rows", icon=":material/difference:")
    if not go:
        return None
    if not versions_exist((int(va), int(vb)), exists, branch=branch):
        return None
    return int(va), int(vb), list(key)


def changed_frame(changes: rc.RowChanges, kind: str) -> pd.DataFrame:
    """The rows of one kind as a frame (by the key columns, when compared on a key); updated
    rows carry ``changed`` (the columns whose values changed, comma-joined) first, then the
    newer values."""
    table = getattr(changes, kind)
    if changes.key and table.num_rows:
        table = table.sort_by([(k, "ascending") for k in changes.key])
    if kind != "updated":
        return abbreviate(table)
    changed = [", ".join(c) for c in table.column(rc.CHANGED).to_pylist()]
    frame = abbreviate(table.drop_columns([rc.CHANGED]))
    frame.insert(0, "changed", changed)
    return frame


CHANGED_CELL = "background-color: rgba(255, 189, 69, 0.35)"  # an updated row's changed cells


def _float_text(value: Any) -> str:
    """A float as the grid shows it unstyled (a Styler would print six decimals)."""
    return MISSING if pd.isna(value) else f"{value:.15g}"


def _mark_changed(frame: pd.DataFrame) -> Any:
    """``frame`` (updated rows) styled: in each row, the cells of its changed columns; the
    values shown as they are without a style."""

    def row_style(row: pd.Series) -> list[str]:
        changed = set(str(row["changed"]).split(", "))
        return [CHANGED_CELL if name in changed else "" for name in row.index]

    floats = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
    styled = frame.style.apply(row_style, axis=1)
    return styled.format(dict.fromkeys(floats, _float_text), na_rep=MISSING)


def render_row_changes(
    changes: rc.RowChanges, *, key_prefix: str, first_with_rows: bool = False
) -> None:
    """Counts, the method used, then one kind of rows at a time, paged (``first_with_rows``:
    the kind shown first is the first that has rows, not "updated")."""
    counts = changes.counts
    c1, c2, c3 = st.columns(3)
    c1.metric("Inserted", f"{counts['inserted']:,}")
    c2.metric("Updated", f"{counts['updated']:,}")
    c3.metric("Deleted", f"{counts['deleted']:,}")
    st.caption(feedback.as_text(f"{changes.span_text}, {changes.method_text}."))
    if changes.added_columns or changes.dropped_columns:
        parts = []
        if changes.added_columns:
            parts.append(f"added {', '.join(changes.added_columns)}")
        if changes.dropped_columns:
            parts.append(f"dropped {', '.join(changes.dropped_columns)}")
        st.caption(
            feedback.as_text(
                f"Columns {'; '.join(parts)}: an update is a changed value in a column both "
                "versions have."
            )
        )
    first = KINDS[0]
    if first_with_rows:
        first = next((k for k in KINDS if counts[k]), KINDS[0])
    kind = st.segmented_control(
        "Rows", KINDS, default=first, key=f"{key_prefix}.kind", format_func=str.capitalize
    )
    kind = kind or KINDS[0]
    frame = changed_frame(changes, kind)
    if frame.empty:
        st.caption(f"No rows {kind}.")
        return
    page = render_pager(
        list(range(len(frame))),
        key_prefix=f"{key_prefix}.{kind}",
        reset_on=(changes.from_branch, changes.from_version, changes.to_branch, changes.to_version),
        page_size=PAGE_ROWS,
        noun=f"rows {kind}",
    )
    shown = frame.iloc[page.start : page.start + len(page.items)]
    dataframe(
        _mark_changed(shown) if kind == "updated" else shown,
        hide_index=True,
        key=f"{key_prefix}.{kind}.grid",
    )
    if kind == "updated":
        st.caption(
            "Changed: the columns whose value differs from the older version (their cells "
            "highlighted, with the newer value)."
        )


def _progress_bar(text: str) -> tuple[Any, Any]:
    """A progress bar and the ``progress(done, total)`` callback that moves it."""
    bar = st.progress(0.0, text=text)

    def progress(done: int, total: int) -> None:
        bar.progress(
            min(1.0, done / total) if total else 1.0, text=f"{done:,} of {total:,} rows read"
        )

    return bar, progress


def render_row_changes_section(
    table_id: Sequence[str],
    picked: int,
    older: int | None,
    exists: Callable[[int], bool],
    *,
    branch: str | None = None,
) -> None:
    """The row compare form (two versions of ``branch``; ``None``: main; ``older`` and
    ``picked`` at first, each checked by ``exists``), the compare (with a progress bar) and
    its last result."""
    tid = tuple(table_id)
    columns = _columns(table_id, branch)
    asked = render_row_changes_form(table_id, picked, older, exists, columns, branch=branch)
    if asked:
        a, b, key = asked
        bar, progress = _progress_bar("Reading the two versions")
        changes = feedback.run(
            rc.row_changes,
            get_namespace(),
            list(tid),
            a,
            b,
            key or None,
            branch,
            progress=progress,
            action="Comparing rows",
        )
        bar.empty()
        state.set_row_changes(tid, changes, branch)
    changes = state.row_changes(tid, branch)
    if changes is not None:
        render_row_changes(changes, key_prefix=state.Versions.ROW_CHANGES_VIEW)


def render_branch_compare_form(
    table_id: Sequence[str], branch: str, made_from: str, columns: Sequence[str], *, row_delta: bool
) -> list[str] | None:
    """The key columns of a compare of ``branch`` with its parent (``made_from``: "main v2");
    the key (empty: lance's delta) when pressed."""
    prefix = f"{state.Versions.BRANCH_CHANGES_FORM}.{tuple(table_id)}.{branch}"
    with st.form(prefix, border=False):
        how = (
            "Without key columns lance's delta is used, which needs a table with stable "
            "row ids; otherwise pick the columns that identify a row."
            if row_delta
            else "Over REST only a compare on key columns is possible (lance's delta needs the "
            "dataset itself), and only where the server reads the branch itself."
        )
        st.caption(
            feedback.as_text(
                f"Which rows branch {branch} changed since it was made: {made_from} against "
                f"the branch's latest version. {how}"
            )
        )
        key = st.multiselect("Key columns", list(columns), key=f"{prefix}.key")
        go = st.form_submit_button("Compare with parent", icon=":material/difference:")
    return list(key) if go else None


def render_branch_compare_section(
    table_id: Sequence[str], branch: str, made_from: str, *, row_delta: bool
) -> None:
    """ "Compare with parent": the form, the compare (with a progress bar), its last result
    rendered as a compare of two versions is."""
    tid = tuple(table_id)
    columns = _columns(table_id, branch)
    key = render_branch_compare_form(table_id, branch, made_from, columns, row_delta=row_delta)
    if key is not None:
        bar, progress = _progress_bar(f"Reading {made_from} and branch {branch}")
        changes = feedback.run(
            rc.branch_changes,
            get_namespace(),
            list(tid),
            branch,
            key or None,
            progress=progress,
            action=f"Comparing branch {branch} with its parent",
        )
        bar.empty()
        state.set_branch_changes(tid, branch, changes)
    changes = state.branch_changes(tid, branch)
    if changes is not None:
        render_row_changes(changes, key_prefix=state.Versions.BRANCH_CHANGES_VIEW)
