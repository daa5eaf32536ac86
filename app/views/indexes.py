"""Indexes: a table's indexes with their stats and charts; create one (vector, full-text or
scalar) and follow its build; one index's details; drop."""

import streamlit as st

import backend
from backend import index_rules as rules
from backend.services import build_jobs
from backend.services.index_overview import drop_index_request
from components import feedback, state
from components import index_charts as charts
from components import indexes as ixc
from components import tables as tbl
from components.cache import invalidate_tables
from components.common import render_read_only_notice
from components.connection import is_read_only, require_namespace
from components.transactions import remember_transaction

st.title("Indexes")
ns = require_namespace()
read_only = is_read_only()
caps = backend.capabilities(ns)
tbl.sync_selection()

table_id = tbl.render_table_picker(key_prefix="indexes.picker")
if not table_id:
    st.info("Pick a namespace and a table to see its indexes.", icon=":material/table:")
    st.stop()
tid = tuple(table_id)
if read_only:
    render_read_only_notice()
st.caption(ixc.capabilities_caption(caps))
feedback.render_flash("indexes")
ixc.render_build_jobs(table_id, key_prefix="indexes.jobs")

overview = feedback.run(ixc.index_overview, tid, action="Listing indexes")
if overview is None:
    st.stop()
st.subheader("Indexes", anchor=False)
ixc.render_index_table(overview, key_prefix="indexes.list")
ixc.render_lag_warning(overview)
names = list(overview["name"])

# Stateful tabs: a rerun after a write keeps the open tab, and only the open tab is computed.
# A deep link ?index= opens "Selected index" on the session's first run.
if state.Indexes.TABS not in st.session_state and st.query_params.get(state.QP_INDEX) in names:
    state.put(state.Indexes.TABS, ixc.TAB_SELECTED)
create_tab, index_tab, stats_tab = st.tabs(
    [ixc.TAB_CREATE, ixc.TAB_SELECTED, ixc.TAB_STATS],
    default=ixc.TAB_CREATE,
    key=state.Indexes.TABS,
    on_change="rerun",
)

with stats_tab:
    if stats_tab.open:
        history = None
        if not overview.empty:
            depth = st.number_input(
                "Versions in the coverage history",
                min_value=1,
                max_value=200,
                value=30,
                step=5,
                key="indexes.history.max",
            )
            history = feedback.run(
                ixc.coverage_history, tid, int(depth), action="Reading the coverage history"
            )
        charts.render_index_charts(overview, history, key_prefix="indexes.charts")

with create_tab:
    columns = feedback.run(ixc.table_columns, tid, action="Reading the schema") or []
    num_rows = ixc.table_num_rows(tid)
    request = ixc.render_create_panel(
        table_id, columns, num_rows, names, caps, read_only=read_only, key_prefix="indexes.create"
    )
    if request is not None:
        state.add_build_job(build_jobs.start_build(ns, request))
        state.reset_forms("indexes")
        hints = "".join(f"\nNote: {h}" for h in rules.index_request_hints(request, num_rows))
        name = request.name or rules.default_index_name(request.column)
        feedback.flash(
            "indexes",
            "info",
            f"Building {request.index_type} index {name} in the background.{hints}",
        )
        st.rerun()

with index_tab:
    selected = ixc.render_index_picker(names)
    if selected:
        ixc.render_index_details(
            overview[overview["name"] == selected].iloc[0], key_prefix="indexes.selected"
        )
        st.divider()
    to_drop = ixc.render_drop_form(selected, read_only=read_only, key_prefix="indexes.drop")
    if to_drop and (
        response := feedback.run(
            ns.drop_table_index, drop_index_request(table_id, to_drop), action=f"Dropping {to_drop}"
        )
    ):
        if response.transaction_id:
            remember_transaction(
                [*table_id, response.transaction_id], source=f"drop index {to_drop}"
            )
        invalidate_tables([table_id])
        state.reset_forms("indexes")
        feedback.flash("indexes", "success", f"Index {to_drop} dropped.")
        st.rerun()
