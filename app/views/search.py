"""Search & tune: preview a table's rows, run vector and full-text searches, read their query
plans, measure recall, sweep query parameters against a target recall, compare index builds,
check the parameters lance applied, and maintain the indexes."""

import streamlit as st

import backend
from components import feedback
from components import indexes as ixc
from components import search as srch
from components import tables as tbl
from components.connection import is_read_only, require_namespace

st.title("Search & tune")
ns = require_namespace()
tbl.sync_selection()
srch.apply_shared_setting()

table_id = tbl.render_table_picker(key_prefix="search.picker")
if not table_id:
    st.info("Pick a table to search it and tune its indexes.", icon=":material/manage_search:")
    st.stop()
info = feedback.run(srch.search_table, tuple(table_id), action="Reading the table")
if info is None:
    st.stop()
srch.render_table_summary(info)
version = srch.render_version_input(info)
feedback.render_flash("search")

tabs = dict(zip(srch.TABS, srch.open_tabs(), strict=True))
panels = {
    srch.TAB_PREVIEW: lambda: srch.render_preview(info, version, key_prefix="search.preview"),
    srch.TAB_VECTOR: lambda: srch.render_vector_search(ns, info, version),
    srch.TAB_FTS: lambda: srch.render_fts_search(ns, info, version),
    srch.TAB_PLAN: lambda: srch.render_plan(ns, info, version),
    srch.TAB_RECALL: lambda: srch.render_recall(ns, info, version),
    srch.TAB_SWEEP: lambda: srch.render_sweep(ns, info, version),
    srch.TAB_AB: lambda: srch.render_build_ab(ns, info),
}
for name, render in panels.items():
    with tabs[name]:
        if tabs[name].open:
            render()

with tabs[srch.TAB_PARAMS]:
    if tabs[srch.TAB_PARAMS].open:
        srch.render_requested_vs_applied(ns, info)
        st.subheader("Maintenance", anchor=False)
        overview = feedback.run(ixc.index_overview, tuple(table_id), action="Listing indexes")
        if overview is not None:
            lagging = ixc.render_lag_warning(overview)
            ixc.render_maintenance(
                ns, table_id, lagging=lagging, caps=backend.capabilities(ns),
                read_only=is_read_only(), key_prefix="search.maint", page="search",
            )  # fmt: skip
            ixc.render_statistics(overview, tuple(table_id))
