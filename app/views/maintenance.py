"""Maintenance: a namespace's maintenance policy (admins edit and save it), its dry run (which
tables would be compacted, optimized or cleaned up, and why) and running it as one job (seen by
every console on the namespace, on the Jobs page too), followed with each action's result."""

import streamlit as st

from backend.rules import ids
from components import feedback, maintenance, polling, state, writes
from components import jobs as jobs_view
from components.common import render_read_only_notice
from components.connection_writes import require_namespace
from components.session import is_read_only
from components.tables.catalog import table_names
from components.tables.picker import render_namespace_picker
from components.tables.selection import sync_selection

st.title("Maintenance")
ns = require_namespace()
read_only = is_read_only()
sync_selection()

namespace_id = render_namespace_picker(key_prefix=state.Maintenance.PICKER)
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
    names = feedback.run(table_names, tuple(namespace_id), action="Listing the tables")
    write = maintenance.render_policy(ns, saved, names or [], read_only=read_only)
    if write is not None:
        writes.perform(
            write,
            page=state.Maintenance.PAGE,
            reset=False,
            then=lambda _: maintenance.policy_saved(namespace_id),
        )

st.subheader(f"Plan for {ids.display_id(namespace_id)}", anchor=False)
run = maintenance.render_plan(ns, namespace_id, read_only=read_only)
if run is not None:
    writes.perform(run.write(ns), page=state.Maintenance.PAGE, reset=False)


def results() -> None:
    """The latest run (a job) and its Cancel, sent here."""
    asked = maintenance.render_results(ns, namespace_id)
    if asked is None:
        return
    writes.perform(jobs_view.action_write(ns, asked), page=state.Maintenance.PAGE, reset=False)


latest = feedback.run(maintenance.plan_jobs, ns, tuple(namespace_id), action="Reading the runs")
if latest:
    # while the run goes on, its record is read again every second
    polling.fragment(results, every=1.0 if not latest[0].done else None)
