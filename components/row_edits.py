"""Versions page, row edits beside "Delete rows": "Update rows" (``SET col = expr`` lines, a
filter, a preview with the count and a sample of old and new values, then Apply with the
previewed count) and "Upsert from a file" (a CSV, Parquet or Arrow file, key columns, the three
clauses, a dry run with the rows each clause touches, then Apply). Each returns what to send,
or hands it from the Apply button's callback to the page's write (``on_submit(ask,
failure_key)``: the page then draws once, after it). Data and rules:
``backend.services.rows``, ``backend.rules.row_rules``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import streamlit as st

from backend.rules import ids, row_rules
from backend.services import imports
from backend.services import rows as rsv
from backend.text import plural, verb
from components import feedback, state
from components.common import dataframe, render_role_lock
from components.session import write_denial
from components.writes import Write, render_failure


# -- update rows ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class RowsUpdate:
    """An "Update rows" to apply: the assignments, the filter, every row or not, and the count
    its preview showed."""

    updates: tuple[tuple[str, str], ...]
    filter: str
    all_rows: bool
    expected_count: int


def update_write(ns: Any, table_id: Sequence[str], ask: RowsUpdate) -> Write:
    """``rows.update_rows`` (refused when the count moved since the preview)."""
    return Write(
        rsv.update_rows, (ns, list(table_id), dict(ask.updates), ask.filter), "Updating rows",
        lambda done: f"{done} ({ids.display_id(table_id)})",
        kwargs={"expected_count": ask.expected_count, "all_rows": ask.all_rows},
        leaves_tags=True,
    )  # fmt: skip


def _lock(operation: str, read_only: bool, request: Any = None) -> str | None:
    return None if read_only else write_denial(operation, request)


def render_update_rows(
    ns: Any,
    table_id: list[str],
    *,
    key_prefix: str,
    read_only: bool,
    on_submit: Callable[[RowsUpdate, str], None] | None = None,
) -> RowsUpdate | None:
    """ "Update rows": assignments and a filter, their preview, then Apply; the update to send
    once applied (with ``on_submit``: handed over from Apply's callback, nothing returned).
    Previewing is a read (every role); applying is an editor's."""
    locked = _lock(rsv.UPDATE, read_only)
    st.caption(
        "Sets columns to SQL expressions of each row's current values (e.g. price = price * 1.1) "
        "on the rows a filter matches, as a new version; earlier versions keep the old values."
    )
    with st.form(f"{key_prefix}.preview", border=False):
        text = st.text_area("SET", key=f"{key_prefix}.set", help=row_rules.SET_HINT, height=90)
        where = st.text_input("WHERE (filter)", key=f"{key_prefix}.filter")
        every = st.checkbox("Update every row (no filter)", key=f"{key_prefix}.all")
        previewed = st.form_submit_button("Preview", icon=":material/preview:")
    where = (where or "").strip()
    asked: tuple[Any, ...] | None = None
    try:
        updates = row_rules.parse_assignments(text)
        asked = (tuple(updates.items()), where, bool(every))
    except Exception as err:  # noqa: BLE001 - a bad line is said where it was typed
        if previewed:
            feedback.show_error(err, action="Reading the assignments")
        return None
    tid = tuple(table_id)
    if previewed:
        state.put(state.Versions.UPDATE_PREVIEW, None)
        found = feedback.run(
            rsv.preview_update, ns, table_id, updates, where, all_rows=bool(every),
            action="Previewing the update",
        )  # fmt: skip
        if found is not None:
            state.put(state.Versions.UPDATE_PREVIEW, (tid, asked, found))
    kept = state.get(state.Versions.UPDATE_PREVIEW)
    preview = kept[2] if kept and kept[0] == tid and kept[1] == asked else None
    if preview is None:
        if updates and not previewed:
            st.caption("Preview to see how many rows this update changes.")
        return None
    if preview.count == 0:
        feedback.show("info", f"No row of {table_id[-1]} matches {where}: nothing to update.")
        return None
    said = "every row" if not where else f"{verb(preview.count, 'matches', 'match')} {where}"
    st.markdown(f"**{plural(preview.count, 'row')}** " + feedback.as_text(f"{said}."))
    if len(preview.sample) < preview.count:
        st.caption(f"A sample of {len(preview.sample):,} of them, with the new values:")
    dataframe(preview.sample, hide_index=True)
    ask = RowsUpdate(tuple(updates.items()), where, bool(every), int(preview.count))
    failure_key = f"{key_prefix}.apply.failure"
    with st.form(f"{key_prefix}.apply", border=False):
        applied = st.form_submit_button(
            f"Apply to {plural(preview.count, 'row')}", icon=":material/edit:", type="primary",
            disabled=read_only or locked is not None,
            on_click=(lambda: on_submit(ask, failure_key)) if on_submit else None,
        )  # fmt: skip
    render_role_lock(locked)
    if on_submit is not None:
        render_failure(failure_key)
        return None
    return ask if applied else None


# -- upsert from a file ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Upsert:
    """An "Upsert from a file" to apply: the file's rows, the keys and the clauses."""

    data: pa.Table
    on: tuple[str, ...]
    update: bool
    insert: bool
    delete: bool

    def kwargs(self) -> dict[str, Any]:
        return {
            "on": list(self.on),
            "when_matched_update": self.update,
            "when_not_matched_insert": self.insert,
            "when_not_matched_by_source_delete": self.delete,
        }


def upsert_write(ns: Any, table_id: Sequence[str], ask: Upsert) -> Write:
    """``rows.merge_insert`` of the file's rows."""
    return Write(
        rsv.merge_insert, (ns, list(table_id), ask.data), "Upserting rows",
        lambda done: f"{done} ({ids.display_id(table_id)})", kwargs=ask.kwargs(),
        leaves_tags=True,
    )  # fmt: skip


def render_upsert(
    ns: Any,
    table_id: list[str],
    *,
    key_prefix: str,
    read_only: bool,
    on_submit: Callable[[Upsert, str], None] | None = None,
) -> Upsert | None:
    """ "Upsert from a file": the file, key columns and clauses, a dry run, then Apply; the
    upsert to send once applied (with ``on_submit``: handed over from Apply's callback,
    nothing returned). The dry run only reads; applying is an editor's, an admin's with the
    delete clause."""
    st.caption(
        "Matches the file's rows to the table's on key columns: matched rows are replaced by the "
        "file's, new rows are added, and (optionally) the table's rows the file lacks are "
        "deleted, as one new version. A dry run says how many rows each clause touches."
    )
    names = ", ".join(imports.FORMAT_NAMES[f] for f in imports.UPSERT_FORMATS)
    upload = st.file_uploader(
        f"File ({names})", type=["csv", "parquet", "pq", "arrow", "ipc", "feather"],
        key=f"{key_prefix}.file",
    )  # fmt: skip
    if upload is None:
        return None
    schema = feedback.run(rsv.table_schema, ns, table_id, action="Reading the table's schema")
    if schema is None:
        return None
    data = feedback.run(
        lambda: imports.read_upload(upload.getvalue(), imports.format_of(upload.name), schema),
        action=f"Reading {upload.name}",
    )
    if data is None:
        return None
    st.caption(
        f"{upload.name}: {plural(data.num_rows, 'row')}, columns {', '.join(data.column_names)}."
    )
    shared = [n for n in data.column_names if n in schema.names]
    on = st.multiselect("Key columns", shared, key=f"{key_prefix}.on")
    c1, c2, c3 = st.columns(3)
    update = c1.checkbox("Update matched rows", value=True, key=f"{key_prefix}.update")
    insert = c2.checkbox("Insert new rows", value=True, key=f"{key_prefix}.insert")
    delete = c3.checkbox(
        "Delete rows the file lacks", value=False, key=f"{key_prefix}.delete",
        help="Deletes every row of the table whose key the file does not hold (admins only).",
    )  # fmt: skip
    ask = Upsert(data, tuple(on), bool(update), bool(insert), bool(delete))
    asked = (upload.file_id, ask.on, ask.update, ask.insert, ask.delete)
    request = {"when_not_matched_by_source_delete": ask.delete}
    locked = _lock(rsv.MERGE, read_only, request)
    failure_key = f"{key_prefix}.apply.failure"
    with st.container(horizontal=True):  # side by side, at the start of the line
        dry = st.button("Dry run", icon=":material/science:", key=f"{key_prefix}.dry")
        apply = st.button(
            "Apply", icon=":material/merge:", type="primary", key=f"{key_prefix}.apply",
            disabled=read_only or locked is not None,
            on_click=(lambda: on_submit(ask, failure_key)) if on_submit else None,
        )  # fmt: skip
    render_role_lock(locked)
    if on_submit is not None:
        render_failure(failure_key)
    tid = tuple(table_id)
    if dry:
        state.put(state.Versions.UPSERT_DRY_RUN, None)
        counts = feedback.run(
            rsv.merge_insert, ns, table_id, data, dry_run=True, **ask.kwargs(),
            action="Dry run of the upsert",
        )  # fmt: skip
        if counts is not None:
            state.put(state.Versions.UPSERT_DRY_RUN, (tid, asked, counts))
    kept = state.get(state.Versions.UPSERT_DRY_RUN)
    if kept and kept[0] == tid and kept[1] == asked:
        counts = kept[2]
        m1, m2, m3 = st.columns(3)
        m1.metric("Rows updated", f"{counts.updated:,}")
        m2.metric("Rows inserted", f"{counts.inserted:,}")
        m3.metric("Rows deleted", f"{counts.deleted:,}")
        st.caption(feedback.as_text(str(counts)))
    return ask if apply and on_submit is None else None
