"""Import & export: load a CSV, Parquet, Arrow IPC or JSON Lines file into a new table or
into the picked one (append, or merge on key columns); download a table (a version, a filter,
some columns) as Parquet, CSV or Arrow IPC. Appends, merges and exports act on the branch
picked (the shared branch selection; main by default); a new table starts with main only."""

import streamlit as st

from backend.branch_view import on_branch
from backend.rules import ids
from components import branches, feedback, state, transfer, writes
from components.common import render_read_only_notice
from components.connection_writes import require_namespace
from components.session import is_read_only
from components.tables.catalog import table_detail
from components.tables.picker import render_table_picker
from components.tables.selection import set_selection, sync_selection
from components.versions.reads import versions_frame

PAGE = state.Transfer.PAGE

st.title("Import & export")
badge = st.container()
ns = require_namespace()
read_only = is_read_only()
sync_selection()

table_id = render_table_picker(key_prefix=state.Transfer.PICKER)
namespace, _ = state.selection()
branch, branched = (
    branches.pick_branch(table_id, key_prefix=state.Transfer.PICKER)
    if table_id
    else ("main", False)
)
if table_id:
    with badge:
        branches.render_branch_badge(
            branch, branched=branched, note="An import into a new table creates it on main."
        )
on_table = on_branch(ns, branch)  # the picked table's branch: appends, merges, exports
if read_only:
    render_read_only_notice()
feedback.render_flash(PAGE)
import_tab, export_tab = st.tabs(
    ["Import", "Export"], default="Import", key=state.Transfer.TABS, on_change="rerun"
)

with import_tab:
    upload = transfer.render_upload(key_prefix=state.Transfer.IMPORT)
    preview = transfer.upload_preview(upload) if upload is not None else None
    if preview is not None:
        types = transfer.render_preview(preview, upload, key_prefix=state.Transfer.IMPORT)
        target = transfer.render_target(
            preview,
            upload,
            namespace,
            table_id,
            key_prefix=state.Transfer.IMPORT,
            read_only=read_only,
            branch=branch,
        )
        if target is not None:
            bar = st.progress(0.0, text="Importing…")
            writes.perform(
                transfer.import_write(
                    ns if target.mode == "create" else on_table,  # a new table: main only
                    upload,
                    preview,
                    types,
                    target,
                    bar,
                ),  # fmt: skip
                page=PAGE,
                catalog=target.mode == "create",
                then=lambda _: set_selection(target.table_id[:-1], target.table_id[-1]),
            )
            bar.empty()

with export_tab:
    if not table_id:
        st.info("Pick a namespace and a table to export it.", icon=":material/table:")
    else:
        tid = tuple(table_id)
        if branch == "main":
            history = feedback.run(versions_frame, tid, action="Listing versions")
        else:
            history = feedback.run(
                branches.branch_versions, tid, branch, action=f"Listing the versions of {branch}"
            )
        detail = feedback.run(table_detail, tid, branch, action="Describing the table")
        if detail is not None and detail.declared_only:
            st.info("This table is declared only: it has no rows to export yet.")
        elif history is not None and detail is not None:
            request, clicked = transfer.render_export_form(
                table_id,
                [int(v) for v in history["version"]],
                list(detail.schema["column"]),
                key_prefix=state.Transfer.EXPORT,
                branch=branch,
            )
            if clicked:
                bar = st.progress(0.0, text="Exporting…")
                prepared = feedback.run(
                    transfer.prepare_export,
                    on_table,
                    table_id,
                    request,
                    bar,
                    action=f"Exporting {ids.display_id(table_id)}",
                )
                bar.empty()
                if prepared is None:  # the error stands alone: no older file offered
                    transfer.forget_download()
            transfer.render_download(table_id, request, key_prefix=state.Transfer.EXPORT)
