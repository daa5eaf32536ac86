"""Transactions: build a batch commit (add, reorder, remove, validate, preview, commit), then
describe and alter any transaction; this session's transactions."""

import streamlit as st

import backend
from backend.services import batch_builder as bb
from components import feedback, state
from components import tables as tbl
from components import transactions as txc
from components.cache import invalidate_tables
from components.common import render_read_only_notice
from components.connection import is_read_only, require_namespace

st.title("Transactions")
ns = require_namespace()
read_only = is_read_only()
caps = backend.capabilities(ns)
delimiter = getattr(ns, "delimiter", None) or "$"
tbl.sync_selection()
txc.render_icon_only_style()
if read_only:
    render_read_only_notice()

builder_tab, txn_tab = st.tabs(
    ["Batch commit builder", "Describe / alter a transaction"], key=state.Txn.TABS
)
with builder_tab:
    wanted = txc.render_builder(ns, caps, delimiter, read_only=read_only)
    if isinstance(wanted, txc.Stage):
        staged = feedback.run(
            bb.stage_next_version, ns, wanted.table_id, action="Staging the next version"
        )
        if staged is not None:
            txc.add_staged(staged)
            st.rerun()
    if isinstance(wanted, txc.Commit):
        response = feedback.run(
            bb.commit, ns, wanted.operations, validated=True, action="Batch commit"
        )
        if response is not None:
            invalidate_tables(wanted.tables, catalog=True)
            txc.committed(wanted.operations, response, delimiter)
            st.rerun()
    txc.render_last_commit(delimiter)

with txn_tab:
    left, right = st.columns([3, 2], gap="large")
    with left:
        wanted = txc.render_describe_alter(ns, delimiter, read_only=read_only)
        if isinstance(wanted, txc.Alter):
            altered = feedback.run(
                bb.alter_transaction, ns, wanted.txn_id, wanted.actions, action="AlterTransaction"
            )
            if altered is not None:
                txc.altered(wanted.txn_id, altered)
                st.rerun()
    with right:
        st.subheader("This session", anchor=False)
        txc.render_history(ns, delimiter, key_prefix="txn.history")
