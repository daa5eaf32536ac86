"""Versions: every version of a table (paged, newest first), a timeline, one version's
details, the comparison of two, and deleting old versions (never the latest)."""

import streamlit as st

from backend.services import versions as vsv
from backend.text import plural
from components import feedback, state
from components import tables as tbl
from components import versions as ver
from components.cache import invalidate_tables
from components.common import render_read_only_notice
from components.connection import is_read_only, require_namespace, snippet_connection
from components.pager import render_pager
from components.snippets import python_snippet, render_code

st.title("Versions")
ns = require_namespace()
read_only = is_read_only()
tbl.sync_selection()

table_id = tbl.render_table_picker(key_prefix="versions.pick")
if not table_id:
    st.info("Pick a table to see its versions.", icon=":material/history:")
    st.stop()
tid = tuple(table_id)
if read_only:
    render_read_only_notice()
if flashed := feedback.render_flash("versions"):
    render_code(flashed.get("snippet"))

versions = feedback.run(ver.versions_frame, tid, action=f"Listing the versions of {table_id[-1]}")
if versions is None:
    st.stop()
if versions.empty:
    st.info(
        f"{feedback.as_text(table_id[-1])} has no versions yet (a declared-only table has none)."
    )
    st.stop()
latest = int(versions["version"].max())
ver.render_summary(versions)

st.subheader("All versions", anchor=False)
page = render_pager(list(versions.index), key_prefix="versions.list", reset_on=tid, noun="versions")
rows = versions.iloc[page.start : page.start + len(page.items)]
ops = ver.operations_for(tid, tuple(rows["version"].tolist()))
ver.render_version_table(vsv.with_operations(rows, ops), key_prefix="versions.list")

with st.expander("Timeline", icon=":material/timeline:", expanded=True):
    ver.render_timeline(
        vsv.timeline_frame(versions, ops),
        key_prefix="versions.timeline",
        highlight=rows["version"].tolist(),
    )
    st.caption("Operations are looked up for the versions on the current page only.")

st.subheader("Version details", anchor=False)
picked = int(
    st.number_input(
        "Version", min_value=1, value=latest, step=1, key=state.QP_VERSION, bind="query-params"
    )
)
if picked in set(versions["version"]):
    info = feedback.run(ver.version_info, tid, picked, action=f"Describing version {picked}")
    one = ops[ops["version"] == picked]
    if one.empty:
        one = ver.operations_for(tid, (picked,))
    ver.render_version_details(
        info, one.iloc[0].to_dict() if not one.empty else None, key_prefix="versions.one"
    )
else:
    feedback.show(
        "warning",
        f"Version {picked} does not exist (deleted, or never written); the latest is {latest}.",
    )

st.subheader("Compare two versions", anchor=False)
if pair := ver.render_compare_form(
    versions, picked if picked <= latest else latest, key_prefix=f"versions.compare.{tid}"
):
    state.set_compare_pair(table_id, *pair)
if pair := state.compare_pair(table_id):
    if (cmp := feedback.run(ver.comparison, tid, *pair, action="Comparing versions")) is not None:
        ver.render_comparison(cmp, key_prefix="versions.cmp")

st.subheader("Delete old versions", anchor=False)
request = ver.render_delete_form(
    table_id,
    versions,
    key_prefix=f"versions.delete{state.form_version('versions')}.{tid}",
    read_only=read_only,
)
if request is not None and (
    resp := feedback.run(ns.batch_delete_table_versions, request, action="Deleting versions")
):
    invalidate_tables([table_id])
    state.reset_forms("versions")
    state.set_compare_pair(None)
    feedback.flash(
        "versions",
        "success",
        f"Deleted {plural(resp.deleted_count or 0, 'version')} of {tbl.display_path(table_id)}.",
        snippet=python_snippet("batch_delete_table_versions", request, snippet_connection()),
    )
    st.rerun()
