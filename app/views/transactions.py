"""Transactions: build a batch commit (add, reorder, remove, validate, preview, commit), stage
real changes and audit them before the batch publishes them (write-audit-publish) with a
reader watching, the demo tools (admin only); describe and alter any transaction; the
transactions this session saw; the namespace's batch commits (local and object-store roots:
the spec has no list operation); and a guided demo of it all on the demo namespace."""

import streamlit as st

import backend
from backend.demo import txn_guide
from backend.services import batch_builder
from components import feedback, staged, state, tables, transactions, txn_demo
from components.cache import invalidate_tables
from components.common import render_read_only_notice
from components.connection_writes import require_namespace
from components.session import connection_key, is_read_only

st.title("Transactions")
ns = require_namespace()
read_only = is_read_only()
caps = backend.capabilities(ns)
local = caps.kind == "local"
delimiter = getattr(ns, "delimiter", None) or "$"
tables.sync_selection()
transactions.render_icon_only_style()
if read_only:
    render_read_only_notice()

builder_tab, txn_tab, ns_tab, guide_tab = transactions.open_tabs()


def watched(run: txn_guide.WatchedRun, tables_touched: list[list[str]]) -> None:
    """A watched commit is done: the reader panel shows it, the tables are read again."""
    state.put(state.Txn.WATCHED, run)
    invalidate_tables(tables_touched, catalog=True)


with builder_tab:
    wanted = transactions.render_builder(ns, caps, delimiter, read_only=read_only)
    if isinstance(wanted, staged.StageChange):
        made = feedback.run(
            batch_builder.stage_change, ns, wanted.table_id, **wanted.kwargs(),
            action=wanted.action,
        )  # fmt: skip
        if made is not None:
            staged.add_staged_change(made)
            st.rerun()
    elif isinstance(wanted, staged.Discard):
        removed = feedback.run(
            batch_builder.discard_staged, ns, wanted.staged, action="Discarding the staged change"
        )
        if removed is not None:
            staged.discarded(wanted.staged)
            st.rerun()
    elif isinstance(wanted, transactions.Commit):
        if wanted.watch:
            with st.spinner("Committing the batch, a reader watching…"):
                run = feedback.run(
                    txn_guide.commit_watched, ns, wanted.operations, validated=True,
                    action="Batch commit",
                )  # fmt: skip
            if run is not None:
                watched(run, wanted.tables)
                if run.error is None:
                    transactions.committed(wanted.operations, run.response, delimiter)
                    st.rerun()  # a refusal: the reader panel below says it
        else:
            response = feedback.run(
                batch_builder.commit, ns, wanted.operations, validated=True, action="Batch commit"
            )
            if response is not None:
                invalidate_tables(wanted.tables, catalog=True)
                transactions.committed(wanted.operations, response, delimiter)
                st.rerun()
    elif isinstance(wanted, txn_demo.FaultRun):
        with st.spinner(f"Committing with {wanted.fault.describe()}…"):
            run = feedback.run(
                txn_guide.fault_watched, ns, wanted.operations, wanted.fault,
                action="Commit with a demo fault",
            )  # fmt: skip
        if run is not None:
            watched(run, txn_guide.watched_tables(wanted.operations))
            st.rerun()
    elif isinstance(wanted, txn_demo.RaceRun):
        with st.spinner("Validating, then a second writer appends, then the commit…"):
            run = feedback.run(
                txn_guide.conflict_watched, ns, wanted.operations, wanted.table_id,
                action="Commit with a concurrent writer",
            )  # fmt: skip
        if run is not None:
            watched(run, txn_guide.watched_tables(wanted.operations))
            st.rerun()
    transactions.render_last_commit(delimiter)
    txn_demo.render_last_watch(isolated=local)

with txn_tab:
    left, right = st.columns([3, 2], gap="large")
    with left:
        wanted = transactions.render_describe_alter(ns, delimiter, read_only=read_only)
        if isinstance(wanted, transactions.Alter):
            altered = feedback.run(
                batch_builder.alter_transaction,
                ns,
                wanted.txn_id,
                wanted.actions,
                action="AlterTransaction",
            )
            if altered is not None:
                transactions.altered(wanted.txn_id, altered)
                st.rerun()
    with right:
        st.subheader("Seen in this session", anchor=False)
        transactions.render_history(delimiter)

with ns_tab:
    st.subheader("Batch commits of the namespace", anchor=False)
    if caps.kind != "local":
        feedback.show("info", batch_builder.NO_LIST_OPERATION)
    else:
        st.caption(
            "Every batch commit of this namespace, newest first, from the records it keeps "
            "under its root. A table's own transactions are its versions (Versions page)."
        )
        listed = feedback.run(
            transactions.namespace_transactions, action="Listing the batch commits"
        )
        if listed is not None:
            transactions.render_namespace_transactions(listed)

with guide_tab:
    if guide_tab.open:
        conn = connection_key()
        guide = state.guide(conn)
        if guide is None and local:
            guide = feedback.run(txn_guide.start, ns, action="Picking the demo tables")
            if guide is not None:
                state.set_guide(conn, guide)
        locked = transactions.demo_denial(ns, read_only)
        step = txn_demo.render_guide(guide, locked=locked, local=local)
        if step is not None and guide is not None:
            if step.step == txn_demo.RESET:
                if feedback.run(txn_guide.reset, ns, guide, action="Starting over") is not None:
                    state.set_guide(conn, None)
                    invalidate_tables(guide.tables)
                    st.rerun()
            else:
                doing = txn_guide.STEP_ACTIONS[step.step]
                with st.spinner(f"{doing}…"):
                    after = feedback.run(txn_guide.advance, ns, guide, step.step, action=doing)
                if after is not None:
                    state.set_guide(conn, after)
                    invalidate_tables(guide.tables, catalog=True)
                    st.rerun()
