"""Transactions: build a batch commit (add, reorder, remove, validate, preview, commit), then
describe and alter any transaction; the transactions this session saw; the namespace's batch
commits (local and object-store roots: the spec has no list operation)."""

import streamlit as st

import backend
from backend.services import batch_builder
from components import feedback, state, tables, transactions
from components.cache import invalidate_tables
from components.common import render_read_only_notice
from components.connection import is_read_only, require_namespace

st.title("Transactions")
ns = require_namespace()
read_only = is_read_only()
caps = backend.capabilities(ns)
delimiter = getattr(ns, "delimiter", None) or "$"
tables.sync_selection()
transactions.render_icon_only_style()
if read_only:
    render_read_only_notice()

builder_tab, txn_tab, ns_tab = st.tabs(
    ["Batch commit builder", "Describe / alter a transaction", "Namespace transactions"],
    key=state.Txn.TABS,
)
with builder_tab:
    wanted = transactions.render_builder(ns, caps, delimiter, read_only=read_only)
    if isinstance(wanted, transactions.Stage):
        staged = feedback.run(
            batch_builder.stage_next_version, ns, wanted.table_id, action="Staging the next version"
        )
        if staged is not None:
            transactions.add_staged(staged)
            st.rerun()
    if isinstance(wanted, transactions.Commit):
        response = feedback.run(
            batch_builder.commit, ns, wanted.operations, validated=True, action="Batch commit"
        )
        if response is not None:
            invalidate_tables(wanted.tables, catalog=True)
            transactions.committed(wanted.operations, response, delimiter)
            st.rerun()
    transactions.render_last_commit(delimiter)

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
