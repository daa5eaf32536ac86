"""Transactions: build a batch commit (add, reorder, remove, validate, preview, commit), describe
and alter any transaction, and this session's transactions."""

import streamlit as st

import backend
from backend import txn_builder as tb
from components import state
from components import tables as tbl
from components import transactions as txc
from components.common import (
    clear_read_caches,
    render_python_snippet,
    render_read_only_notice,
)
from components.connection import is_read_only, require_namespace

st.title("Transactions")
ns = require_namespace()
read_only = is_read_only()
caps = backend.capabilities(ns)
delimiter = getattr(ns, "delimiter", None) or "$"
tbl.sync_selection()
txc.render_icon_only_style()
# Errors here trim the server's source locations (the full text stays in "Server said").
run_op = txc.run_op
if read_only:
    render_read_only_notice()

# A "Describe" pressed in the history fills the id field before it renders.
pending = st.session_state.pop(state.TXN_PENDING_ID, None)
if pending is not None:
    st.session_state[state.TXN_ID_INPUT] = pending

builder_tab, txn_tab = st.tabs(
    ["Batch commit builder", "Describe / alter a transaction"], key=state.TXN_TABS
)

# ================================================================================================
with builder_tab:
    operations = txc.get_operations()
    st.caption(
        "Operations are sent together as one BatchCommitTables request: either all of them are "
        "applied or none."
    )
    if caps.kind == "local" and not caps.batch_commit:
        st.info(
            "The local backend cannot batch-commit yet: you can build, validate and preview a "
            "batch; committing answers UNSUPPORTED.",
            icon=":material/info:",
        )

    # --- add ------------------------------------------------------------------------------------
    st.subheader("Add an operation", anchor=False)
    table_id = tbl.render_table_picker(key_prefix="txn.picker")
    latest = None
    if table_id:
        latest = run_op(txc.latest_version, table_id, action="Reading versions")
    new_op = txc.render_add_operation(
        table_id,
        delimiter,
        next_version=(latest + 1) if latest is not None else None,
        key_prefix="txn.add",
    )
    if new_op is not None:
        txc.set_operations([*operations, new_op])
        txc.bump_form_version()
        st.rerun()
    if txc.render_stage_helper(
        table_id,
        delimiter,
        local=caps.kind == "local",
        read_only=read_only,
        key_prefix="txn.stage",
    ):
        staged = run_op(tb.stage_next_version, ns, table_id, action="Staging the next version")
        if staged is not None:
            txc.set_operations(
                [
                    *operations,
                    tb.create_version_op(
                        staged.table_id,
                        staged.version,
                        staged.manifest_path,
                        manifest_size=staged.manifest_size,
                    ),
                ]
            )
            st.rerun()

    # --- the batch ----------------------------------------------------------------------------
    st.subheader(f"Batch ({len(operations)} operations)", anchor=False)
    saved = st.session_state.get(state.TXN_PROBLEMS)
    fingerprint = txc.fingerprint(operations)
    problems = saved[1] if saved and saved[0] == fingerprint else None
    changed = txc.render_operation_list(operations, problems, delimiter, key_prefix="txn.ops")
    if changed is not None:
        txc.set_operations(changed)
        st.rerun()

    if operations:
        c1, c2 = st.columns(2)
        if c1.button("Validate", icon=":material/rule:", key="txn.validate"):
            problems = run_op(tb.validate, ns, operations, action="Validating")
            if problems is not None:
                st.session_state[state.TXN_PROBLEMS] = (fingerprint, problems)
                st.rerun()
        if c2.button("Clear the batch", icon=":material/delete_sweep:", key="txn.clear"):
            txc.set_operations([])
            st.rerun()
        if problems is not None:
            txc.render_problems(problems)
        txc.render_request_preview(operations, key_prefix="txn.preview")
        render_python_snippet(
            "batch_commit_tables", tb.to_request(operations), key_prefix="txn.snippet"
        )

        # --- commit ---------------------------------------------------------------------------
        if txc.render_commit_form(operations, read_only=read_only, key_prefix="txn.commit"):
            problems = run_op(tb.validate, ns, operations, action="Validating")
            if problems is not None:
                st.session_state[state.TXN_PROBLEMS] = (fingerprint, problems)
                if tb.has_errors(problems):
                    txc.render_problems(problems)
                    st.error("Not committed: fix the problems above first.")
                else:
                    response = run_op(tb.commit, ns, operations, action="Batch commit")
                    if response is not None:
                        clear_read_caches()
                        txn = [response.transaction_id] if response.transaction_id else None
                        if txn:
                            txc.remember_transaction(txn, source="batch commit")
                        st.session_state[state.TXN_LAST_COMMIT] = {
                            "transaction_id": txn,
                            "results": tb.results_frame(operations, response, delimiter).to_dict(
                                "records"
                            ),
                            "response": response.model_dump(mode="json", exclude_none=True),
                        }
                        txc.set_operations([])
                        txc.bump_form_version()
                        st.rerun()

    last_commit = st.session_state.get(state.TXN_LAST_COMMIT)
    if last_commit:
        st.subheader("Last commit", anchor=False)
        txc.render_commit_result(last_commit, delimiter, key_prefix="txn.last")

# ================================================================================================
with txn_tab:
    left, right = st.columns([3, 2], gap="large")
    with left:
        st.subheader("Describe", anchor=False)
        txn_id = txc.render_describe_form(delimiter, key_prefix="txn.describe")
        if txn_id is not None:
            described = run_op(tb.describe_transaction, ns, txn_id, action="DescribeTransaction")
            if described is not None:
                txc.show_transaction(txn_id, described)
                txc.remember_transaction(txn_id, source="described", status=described.status)
        current = st.session_state.get(state.TXN_DESCRIBED)
        if current:
            txc.render_transaction(current, delimiter, key_prefix="txn.current")

            st.subheader("Alter", anchor=False)
            st.caption("All actions go in one AlterTransaction request: all apply or none.")
            new_actions = txc.render_alter_builder(read_only=read_only, key_prefix="txn.alter")
            if new_actions is not None:
                st.session_state[state.TXN_ALTER_ACTIONS] = new_actions
                st.rerun()
            actions = txc.get_alter_actions()
            if txc.render_apply_form(actions, read_only=read_only, key_prefix="txn.apply"):
                altered = run_op(
                    tb.alter_transaction, ns, current["id"], actions, action="AlterTransaction"
                )
                if altered is not None:
                    txc.show_transaction(current["id"], altered)
                    st.session_state[state.TXN_ALTER_ACTIONS] = []
                    txc.remember_transaction(current["id"], source="altered", status=altered.status)
                    txc.bump_form_version()
                    st.rerun()
    with right:
        st.subheader("This session", anchor=False)
        picked = txc.render_history(delimiter, key_prefix="txn.history")
        if picked is not None:
            described = run_op(tb.describe_transaction, ns, picked, action="DescribeTransaction")
            if described is not None:
                txc.show_transaction(picked, described)
            st.session_state[state.TXN_PENDING_ID] = delimiter.join(picked)
            st.rerun()
