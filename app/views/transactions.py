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
from components.snippets import render_python_snippet

st.title("Transactions")
ns = require_namespace()
read_only = is_read_only()
caps = backend.capabilities(ns, probe=True)
delimiter = getattr(ns, "delimiter", None) or "$"
tbl.sync_selection()
txc.render_icon_only_style()
if read_only:
    render_read_only_notice()
if (pending := state.drop(state.Txn.PENDING_ID)) is not None:
    state.put(state.Txn.ID_INPUT, pending)  # a "Describe" in the history fills the id field


def discard_unused(ops: list) -> None:
    kept, unused = txc.unused_staged(ops)
    bb.discard_staged(unused)
    state.set_staged(kept)


builder_tab, txn_tab = st.tabs(
    ["Batch commit builder", "Describe / alter a transaction"], key=state.Txn.TABS
)
with builder_tab:
    operations = state.operations()
    st.caption(
        "Operations are sent together as one BatchCommitTables request: all of them are applied, or none."
    )
    can_commit = txc.render_batch_support(caps.batch_commit, caps.kind)
    st.subheader("Add an operation", anchor=False)
    table_id = tbl.render_table_picker(key_prefix="txn.picker")
    latest = (
        feedback.run(txc.latest_version, tuple(table_id), action="Reading versions")
        if table_id
        else None
    )
    if (
        new_op := txc.render_add_operation(
            table_id, delimiter, next_version=(latest or 0) + 1, key_prefix="txn.add"
        )
    ) is not None:
        state.set_operations([*operations, new_op])
        state.reset_forms("txn")
        st.rerun()
    if txc.render_stage_helper(
        table_id, delimiter, local=caps.kind == "local", read_only=read_only, key_prefix="txn.stage"
    ):
        if (
            staged := feedback.run(
                bb.stage_next_version, ns, table_id, action="Staging the next version"
            )
        ) is not None:
            state.set_staged([*state.staged(), staged.__dict__])
            op = bb.create_version_op(
                staged.table_id,
                staged.version,
                staged.manifest_path,
                manifest_size=staged.manifest_size,
            )
            state.set_operations([*operations, op])
            st.rerun()

    st.subheader(
        f"Batch ({len(operations)} operations)" if len(operations) != 1 else "Batch (1 operation)",
        anchor=False,
    )
    saved = state.get(state.Txn.PROBLEMS)
    problems = saved[1] if saved and saved[0] == txc.fingerprint(operations) else None
    if (
        changed := txc.render_operation_list(operations, problems, delimiter, key_prefix="txn.ops")
    ) is not None:
        state.set_operations(changed)
        discard_unused(changed)
        st.rerun()
    if operations:
        c1, c2 = st.columns(2)
        with c1:
            if st.button("Validate", icon=":material/rule:", key="txn.validate"):
                found = feedback.run(
                    bb.validate, ns, operations, delimiter=delimiter, action="Validating"
                )
                if found is not None:
                    state.put(state.Txn.PROBLEMS, (txc.fingerprint(operations), found))
                    st.rerun()
        with c2:
            if txc.render_clear_button(key_prefix="txn.clear"):
                state.set_operations([])
                discard_unused([])
                st.rerun()
        if problems is not None:
            txc.render_problems(problems)
        txc.render_request_preview(operations)
        render_python_snippet(
            "batch_commit_tables", bb.to_request(operations), key_prefix="txn.snippet"
        )
        if txc.render_commit_form(
            len(operations), enabled=can_commit and not read_only, key_prefix="txn.commit"
        ):
            found = feedback.run(
                bb.validate, ns, operations, delimiter=delimiter, action="Validating"
            )
            if found is not None and bb.has_errors(found):
                state.put(state.Txn.PROBLEMS, (txc.fingerprint(operations), found))
                st.rerun()  # the problems show once, above, next to their operations
            if found is not None and (
                response := feedback.run(bb.commit, ns, operations, action="Batch commit")
            ):
                invalidate_tables([bb.body_of(op)["id"] for op in operations], catalog=True)
                txn = [response.transaction_id] if response.transaction_id else None
                if txn:
                    txc.remember_transaction(txn, source="batch commit", status="SUCCEEDED")
                results = bb.results_frame(operations, response, delimiter).to_dict("records")
                state.put(
                    state.Txn.LAST_COMMIT,
                    {
                        "transaction_id": txn,
                        "results": results,
                        "response": response.model_dump(mode="json", exclude_none=True),
                    },
                )
                state.set_operations([])
                state.set_staged([])
                state.reset_forms("txn")
                st.rerun()
    if last := state.get(state.Txn.LAST_COMMIT):
        st.subheader("Last commit", anchor=False)
        txc.render_commit_result(last, delimiter, key_prefix="txn.last")

with txn_tab:
    left, right = st.columns([3, 2], gap="large")
    with left:
        st.subheader("Describe", anchor=False)
        if (txn_id := txc.render_describe_form(delimiter, key_prefix="txn.describe")) is not None:
            if (
                described := feedback.run(
                    bb.describe_transaction, ns, txn_id, action="DescribeTransaction"
                )
            ) is not None:
                txc.show_transaction(txn_id, described)
                txc.remember_transaction(txn_id, source="described", status=described.status)
        if current := state.get(state.Txn.DESCRIBED):
            txc.render_transaction(current, delimiter, key_prefix="txn.current")
            st.subheader("Alter", anchor=False)
            st.caption("All actions go in one AlterTransaction request: all apply, or none.")
            if (
                new_actions := txc.render_alter_builder(read_only=read_only, key_prefix="txn.alter")
            ) is not None:
                state.set_alter_actions(new_actions)
                st.rerun()
            actions = state.alter_actions()
            if txc.render_apply_form(len(actions), read_only=read_only, key_prefix="txn.apply"):
                if (
                    altered := feedback.run(
                        bb.alter_transaction, ns, current["id"], actions, action="AlterTransaction"
                    )
                ) is not None:
                    txc.show_transaction(current["id"], altered)
                    state.set_alter_actions([])
                    txc.remember_transaction(current["id"], source="altered", status=altered.status)
                    state.reset_forms("txn")
                    st.rerun()
    with right:
        st.subheader("This session", anchor=False)
        if (picked := txc.render_history(delimiter, key_prefix="txn.history")) is not None:
            if (
                described := feedback.run(
                    bb.describe_transaction, ns, picked, action="DescribeTransaction"
                )
            ) is not None:
                txc.show_transaction(picked, described)
            state.put(state.Txn.PENDING_ID, delimiter.join(picked))
            st.rerun()
