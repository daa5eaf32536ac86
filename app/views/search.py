"""Search & tune: preview a table's rows, run vector and full-text searches, read their query
plans, measure recall, sweep query parameters against a target recall, compare index builds,
check the parameters lance applied, and maintain the indexes. Everything reads (and the
maintenance writes) the branch picked (the shared branch selection; main by default)."""

import streamlit as st

import backend
from backend.branch_view import on_branch
from components import branches, feedback, state, writes
from components.connection_writes import require_namespace
from components.indexes.listing import render_lag_warning
from components.indexes.maintenance import render_maintenance
from components.indexes.reads import index_overview
from components.indexes.statistics import render_statistics
from components.search.fulltext import render_fts_search
from components.search.plans import render_plan
from components.search.preview import render_preview
from components.search.tabs import (
    TAB_AB,
    TAB_FTS,
    TAB_PARAMS,
    TAB_PLAN,
    TAB_PREVIEW,
    TAB_RECALL,
    TAB_SWEEP,
    TAB_VECTOR,
    TABS,
    apply_shared_setting,
    open_tabs,
    render_table_summary,
    render_version_input,
    search_table,
)
from components.search.vector import render_vector_search
from components.session import is_read_only
from components.tables.catalog import read_table
from components.tables.picker import render_table_picker
from components.tables.selection import sync_selection
from components.tuning.applied import render_requested_vs_applied
from components.tuning.build_ab import render_build_ab
from components.tuning.recall import render_recall
from components.tuning.sweep import render_sweep

st.title("Search & tune")
badge = st.container()
ns = require_namespace()
sync_selection()
apply_shared_setting()

table_id = render_table_picker(key_prefix=state.Search.PICKER)
if not table_id:
    st.info("Pick a table to search it and tune its indexes.", icon=":material/manage_search:")
    st.stop()
branch, branched = branches.pick_branch(table_id, key_prefix=state.Search.PICKER)
with badge:
    branches.render_branch_badge(branch, branched=branched)
ns = on_branch(ns, branch)  # every read and write below acts on the branch
info = read_table(search_table, table_id, branch, action="Reading the table")
if info is None:
    st.stop()
render_table_summary(info)
version = render_version_input(info)
feedback.render_flash("search")

tabs = dict(zip(TABS, open_tabs(), strict=True))
panels = {
    TAB_PREVIEW: lambda: render_preview(info, version, key_prefix=state.Search.PREVIEW),
    TAB_VECTOR: lambda: render_vector_search(ns, info, version),
    TAB_FTS: lambda: render_fts_search(ns, info, version),
    TAB_PLAN: lambda: render_plan(ns, info, version),
    TAB_RECALL: lambda: render_recall(ns, info, version),
    TAB_SWEEP: lambda: render_sweep(ns, info, version),
}
for name, render in panels.items():
    with tabs[name]:
        if tabs[name].open:
            render()

with tabs[TAB_AB]:
    if tabs[TAB_AB].open and (comparison := render_build_ab(ns, info)):
        writes.perform(comparison.write(ns), page="search", reset=False)

with tabs[TAB_PARAMS]:
    if tabs[TAB_PARAMS].open:
        render_requested_vs_applied(ns, info)
        st.subheader("Maintenance", anchor=False)
        overview = feedback.run(index_overview, tuple(table_id), branch, action="Listing indexes")
        if overview is not None:
            lagging = render_lag_warning(overview)
            maintenance = render_maintenance(
                ns, table_id, lagging=lagging, caps=backend.capabilities(ns),
                read_only=is_read_only(), key_prefix=state.Search.MAINT, page="search",
            )  # fmt: skip
            if maintenance is not None:
                writes.perform(maintenance.write(ns), page="search", reset=False)
            render_statistics(overview, tuple(table_id), branch)
