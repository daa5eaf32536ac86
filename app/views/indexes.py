"""Indexes: a table's indexes with their stats, charts, create (vector / full-text / scalar),
build progress, drop."""

import streamlit as st

import backend
from backend import indexes as ix
from components import index_charts as charts
from components import indexes as ixc
from components import state
from components import tables as tbl
from components.common import render_read_only_notice, run_op
from components.connection import is_read_only, require_namespace
from components.transactions import remember_transaction

st.title("Indexes")
ns = require_namespace()
read_only = is_read_only()
caps = backend.capabilities(ns)
tbl.sync_selection()

# --- which table --------------------------------------------------------------------------------
table_id = tbl.render_table_picker(key_prefix="indexes.picker")
if not table_id:
    st.info("Pick a namespace and a table to see its indexes.", icon=":material/table:")
    st.stop()
if read_only:
    render_read_only_notice()
st.caption(ixc.capabilities_caption(caps))
ixc.render_last_result()

# --- builds running or just finished ----------------------------------------------------------
ixc.render_build_jobs(table_id, key_prefix="indexes.jobs")

# --- the table's indexes ------------------------------------------------------------------------
overview = run_op(ixc.index_overview, table_id, action="Listing indexes")
if overview is None:
    st.stop()
st.subheader("Indexes", anchor=False)
ixc.render_index_table(overview, key_prefix="indexes.list")
ixc.render_lag_warning(overview)
names = list(overview["name"])

# The tabs are a keyed, stateful widget: a rerun after a write keeps the open tab, and only the
# open tab's statistics are computed (the Plotly charts and the coverage history, which opens up
# to 30 versions of the table, cost seconds). The default never changes (a changed default would
# be a new widget); a deep link ``?index=`` opens "Selected index" on the session's first run.
if state.INDEXES_TABS not in st.session_state and st.query_params.get(state.QP_INDEX) in names:
    st.session_state[state.INDEXES_TABS] = ixc.TAB_SELECTED
create_tab, index_tab, stats_tab = st.tabs(
    [ixc.TAB_CREATE, ixc.TAB_SELECTED, ixc.TAB_STATS],
    default=ixc.TAB_CREATE,
    key=state.INDEXES_TABS,
    on_change="rerun",
)

# --- statistics (only while its tab is open) -------------------------------------------------
with stats_tab:
    if stats_tab.open:
        history = None
        if not overview.empty:
            max_versions = st.number_input(
                "Versions in the coverage history",
                min_value=1,
                max_value=200,
                value=30,
                step=5,
                key="indexes.history.max",
                help="The most recent versions of the table, each opened and its indexes "
                "described.",
            )
            history = run_op(
                ixc.coverage_history, table_id, max_versions, action="Reading coverage history"
            )
        charts.render_index_charts(overview, history, key_prefix="indexes.charts")

# --- create -------------------------------------------------------------------------------------
with create_tab:
    columns = run_op(ixc.table_columns, table_id, action="Reading the schema") or []
    num_rows = run_op(ixc.table_num_rows, table_id, action="Counting rows")
    request = ixc.render_create_panel(
        table_id,
        columns,
        num_rows,
        names,
        caps,
        read_only=read_only,
        key_prefix="indexes.create",
    )
    if request is not None:
        ixc.start_build(request)
        hints = ix.index_request_hints(request, num_rows)
        ixc.after_write(
            "info",
            f"Building {request.index_type} index "
            f"`{request.name or ix.default_index_name(request.column, request.index_type)}` "
            "in the background." + "".join(f"  \nNote: {h}" for h in hints),
        )

# --- one index: details and drop ----------------------------------------------------------------
with index_tab:
    selected = ixc.render_index_picker(names, key_prefix="indexes.selected")
    if selected:
        row = overview[overview["name"] == selected].iloc[0]
        ixc.render_index_details(row, key_prefix="indexes.selected")
        st.divider()
    to_drop = ixc.render_drop_form(selected, read_only=read_only, key_prefix="indexes.drop")
    if to_drop:
        response = run_op(ix.drop_index, ns, table_id, to_drop, action=f"Dropping {to_drop}")
        if response is not None:
            if response.transaction_id:
                remember_transaction(
                    [*table_id, response.transaction_id], source=f"drop index {to_drop}"
                )
            ixc.after_write("success", f"Index `{to_drop}` dropped.")
