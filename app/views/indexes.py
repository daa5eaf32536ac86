"""Indexes: a table's indexes with their stats and charts, its health with Optimize indexes,
Compact files and Clean up old versions (jobs); create one (vector, full-text or scalar) and
follow its build; one index's details; drop. Everything acts on the branch picked (the shared
branch selection; main by default). With ``--ray-address`` a compaction or a BTREE, FTS or
IVF_PQ build can run on Ray (on main)."""

import streamlit as st

import backend
from backend.branch_view import branch_name, on_branch
from backend.rules import index_rules as rules
from backend.services import build_jobs
from backend.services.index_overview import unindexed_by_name
from components import branches, feedback, health, state, writes
from components import jobs as jobs_view
from components.common import render_read_only_notice
from components.connection_writes import require_namespace
from components.indexes.builds import render_build_jobs
from components.indexes.create import capabilities_caption, render_create_tab
from components.indexes.listing import render_index_table, render_lag_warning
from components.indexes.reads import index_overview
from components.indexes.selected import drop_write, render_selected_tab
from components.indexes.statistics import render_statistics
from components.indexes.tabs import open_tabs
from components.session import is_read_only
from components.tables.catalog import read_table
from components.tables.picker import render_table_picker
from components.tables.selection import sync_selection
from components.transactions.history import remember_transaction

st.title("Indexes")
badge = st.container()
ns = require_namespace()
read_only = is_read_only()
caps = backend.capabilities(ns)
sync_selection()

table_id = render_table_picker(key_prefix=state.Indexes.PICKER)
if not table_id:
    st.info("Pick a namespace and a table to see its indexes.", icon=":material/table:")
    st.stop()
branch, branched = branches.pick_branch(table_id, key_prefix=state.Indexes.PICKER)
with badge:
    branches.render_branch_badge(branch, branched=branched)
ns = on_branch(ns, branch)  # every read and write below acts on the branch
if read_only:
    render_read_only_notice()
st.caption(capabilities_caption(caps))
feedback.render_flash("indexes")
render_build_jobs(table_id, key_prefix=state.Indexes.JOBS_PANEL, branch=branch)
if asked := jobs_view.render_table_jobs(ns, table_id, key_prefix=state.Jobs.TABLE_JOBS):
    writes.perform(jobs_view.action_write(ns, asked), page="indexes", reset=False)

overview = read_table(index_overview, table_id, branch, action="Listing indexes")
if overview is None:
    st.stop()
st.subheader("Indexes", anchor=False)
render_index_table(overview, key_prefix=state.Indexes.LIST)
lagging = render_lag_warning(overview)
offer = health.Offer(
    ns, caps, read_only, state.Indexes.MAINT, has_indexes=not overview.empty, lagging=lagging
)
# the health's unindexed rows from the overview of the same version (over REST: no second
# round of index stats)
read_at = overview.attrs.get("version")
panel = health.render_health(
    table_id, read_at, key_prefix=state.Indexes.HEALTH, branch=branch, offer=offer,
    unindexed=unindexed_by_name(overview) if read_at is not None else None,
)  # fmt: skip
if panel.asked is not None:
    writes.perform(panel.asked.write(ns), page="indexes", reset=False)
create_tab, index_tab, stats_tab = open_tabs(list(overview["name"]))

with stats_tab:
    if stats_tab.open:
        render_statistics(overview, tuple(table_id), branch)

with create_tab:
    if create_tab.open and (
        wanted := render_create_tab(
            table_id,
            list(overview["name"]),
            caps,
            read_only=read_only,
            overview=overview,
            branch=branch,
        )
    ):
        request, num_rows = wanted.request, wanted.num_rows
        build = writes.JobRequest(
            "create_index", tuple(table_id), build_jobs.build_params(request),
            "Starting the build", wanted.executor, wanted.executor_options,
        )  # fmt: skip
        notes = "".join(f"\nNote: {h}" for h in rules.index_request_hints(request, num_rows))
        name = request.name or rules.default_index_name(request.column)
        where = f" on branch {branch}" if branch_name(branch) else ""
        if wanted.executor == "ray":
            where += f" on Ray ({wanted.executor_options.get('ray_address')})"
        said = f"Building {request.index_type} index {name}{where} in the background.{notes}"
        writes.perform(build.write(ns, said, kind="info"), page="indexes")

with index_tab:
    if index_tab.open and (to_drop := render_selected_tab(overview, read_only=read_only)):
        where = f" from branch {branch}" if branch_name(branch) else ""
        writes.perform(
            drop_write(ns, table_id, to_drop, where),
            page="indexes",
            then=lambda response: (
                response.transaction_id
                and remember_transaction(
                    [*table_id, response.transaction_id], source=f"drop index {to_drop}"
                )
            ),
        )
