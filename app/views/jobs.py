"""Jobs: every long operation on the namespace (index builds, compaction, index optimization,
cleanup...), whichever console started it, with its state, progress and who; cancel one or
run it again."""

import streamlit as st

from backend.local.job_store import open_job_store
from backend.services import jobs
from components import feedback, polling, state, writes
from components import jobs as jobs_view
from components.connection_writes import require_namespace

st.title("Jobs")
ns = require_namespace()
feedback.render_flash(state.Jobs.PAGE)
st.caption(
    "Long operations run as jobs recorded with the namespace, so every console on it sees "
    "them; a job whose process ended is shown interrupted and can be run again "
    f"(records: {feedback.as_text(str(open_job_store(ns).location))})."
)
c1, c2, c3 = st.columns([2, 2, 2])
states = c1.multiselect("State", list(jobs.STATES), key=state.Jobs.STATES)
kinds = c2.multiselect("Kind", sorted(jobs.KINDS), key=state.Jobs.KINDS)
table_text = c3.text_input("Table contains", key=state.Jobs.TABLE)


def send(asked: jobs_view.JobAction) -> None:
    """Cancel or run again: on success the session follows the job; the result is said
    after a rerun."""
    writes.perform(jobs_view.action_write(ns, asked), page=state.Jobs.PAGE, reset=False)


def read() -> list[jobs.Job] | None:
    found = feedback.run(
        jobs.list_jobs,
        ns,
        kinds=kinds or None,
        states=states or None,
        limit=jobs_view.LISTED,
        action="Listing the jobs",
    )
    if found is None:
        return None
    return [j for j in found if table_text.strip().lower() in j.target.lower()]


def listing() -> None:
    """The grid and the picked job's details and buttons."""
    found = read()
    if found is None:
        return
    picked = jobs_view.render_jobs_table(found, key_prefix=state.Jobs.LIST)
    if picked is not None:
        with st.container(border=True):
            asked = jobs_view.render_job_details(picked, key_prefix=state.Jobs.DETAIL)
        if asked is not None:
            send(asked)


first = read() or []
# while a job is queued or running, the records are read again every two seconds
polling.fragment(listing, every=2.0 if any(not j.done for j in first) else None)
