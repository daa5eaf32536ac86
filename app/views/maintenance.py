"""Maintenance: a namespace's maintenance policy (admins edit and save it), its dry run (which
tables would be compacted, optimized or cleaned up, and why) and running it in the background,
with each action's result."""

import streamlit as st

from backend.rules import ids
from components import feedback, maintenance, state, tables, writes
from components.common import render_read_only_notice
from components.connection import is_read_only, require_namespace

st.title("Maintenance")
ns = require_namespace()
read_only = is_read_only()
tables.sync_selection()

namespace_id = tables.render_namespace_picker(key_prefix=state.Maintenance.PICKER)
if namespace_id is None:
    st.stop()
if read_only:
    render_read_only_notice()
feedback.render_flash(state.Maintenance.PAGE)

st.subheader("Policy", anchor=False)
saved = feedback.run(
    maintenance.namespace_policy, tuple(namespace_id), action="Reading the maintenance policy"
)
if saved is not None:
    names = feedback.run(tables.table_names, tuple(namespace_id), action="Listing the tables")
    write = maintenance.render_policy(ns, saved, names or [], read_only=read_only)
    if write is not None:
        done = feedback.run(write.call, action=write.action)
        if done is not None:
            maintenance.policy_saved(namespace_id)
            write.flash(state.Maintenance.PAGE, done[0])
            st.rerun()

st.subheader(f"Plan for {ids.display_id(namespace_id)}", anchor=False)
run = maintenance.render_plan(ns, namespace_id, read_only=read_only)
if run is not None:
    writes.start_task(run)
    st.rerun()
maintenance.render_results(namespace_id)
