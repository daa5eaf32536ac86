"""Transactions: build a batch commit (add, reorder, remove, validate, preview, commit), stage
real changes and audit them before the batch publishes them (write-audit-publish) with a
reader watching, the demo tools (admin only); describe and alter any transaction; the
transactions this session saw; the namespace's batch commits (local and object-store roots:
the spec has no list operation); and a guided demo of it all on the demo namespace."""

from typing import Any

import streamlit as st

import backend
from backend.demo import txn_guide
from backend.rules import ids
from backend.services import batch_builder
from components import feedback, staged, state, txn_demo, writes
from components.common import render_read_only_notice
from components.connection_writes import require_namespace
from components.session import connection_key, is_read_only
from components.tables.selection import sync_selection
from components.transactions.builder import (
    Commit,
    committed,
    demo_denial,
    render_builder,
    render_last_commit,
)
from components.transactions.describe import Alter, altered, render_describe_alter
from components.transactions.history import render_history
from components.transactions.namespace_list import (
    namespace_transactions,
    render_namespace_transactions,
)
from components.transactions.tabs import open_tabs, render_icon_only_style

st.title("Transactions")
ns = require_namespace()
read_only = is_read_only()
caps = backend.capabilities(ns)
local = caps.staging
delimiter = ids.delimiter_of(ns)
sync_selection()
render_icon_only_style()
if read_only:
    render_read_only_notice()

builder_tab, txn_tab, ns_tab, guide_tab = open_tabs()
PAGE = "transactions"


def send(write: writes.Write, **after: Any) -> None:
    """A write of this page (nothing said: the panels show the result); ``after``: the
    after-steps of ``writes.perform`` (what to read again, what to keep, whether to rerun)."""
    writes.perform(write, page=PAGE, reset=False, **after)


def watched(run: txn_guide.WatchedRun) -> None:
    """A watched commit is done: the reader panel shows it."""
    state.put(state.Txn.WATCHED, run)


with builder_tab:
    wanted = render_builder(ns, caps, delimiter, read_only=read_only)
    if isinstance(wanted, staged.StageChange):
        send(
            writes.Write(
                batch_builder.stage_change, (ns, wanted.table_id), wanted.action, "",
                kwargs=wanted.kwargs(),
            ),
            then=staged.add_staged_change,
        )  # fmt: skip
    elif isinstance(wanted, staged.Discard):
        send(
            writes.Write(
                batch_builder.discard_staged, (ns, wanted.staged),
                "Discarding the staged change", "",
            ),
            then=lambda _: staged.discarded(wanted.staged),
        )  # fmt: skip
    elif isinstance(wanted, Commit):
        if wanted.watch:
            with st.spinner("Committing the batch, a reader watching…"):
                send(
                    writes.Write(
                        txn_guide.commit_watched, (ns, wanted.operations), "Batch commit", "",
                        kwargs={"validated": True},
                    ),
                    invalidate=wanted.tables,
                    catalog=True,
                    then=lambda run: (
                        watched(run),
                        run.error is None
                        and committed(wanted.operations, run.response, delimiter),
                    ),
                    # a refusal: no rerun, the reader panel below says it
                    rerun=lambda run: run.error is None,
                )  # fmt: skip
        else:
            send(
                writes.Write(
                    batch_builder.commit, (ns, wanted.operations), "Batch commit", "",
                    touched=wanted.tables, kwargs={"validated": True},
                ),
                catalog=True,
                then=lambda response: committed(
                    wanted.operations, response, delimiter
                ),
            )  # fmt: skip
    elif isinstance(wanted, txn_demo.FaultRun):
        with st.spinner(f"Committing with {wanted.fault.describe()}…"):
            send(
                writes.Write(
                    txn_guide.fault_watched, (ns, wanted.operations, wanted.fault),
                    "Commit with a demo fault", "",
                ),
                invalidate=txn_guide.watched_tables(wanted.operations),
                catalog=True,
                then=watched,
            )  # fmt: skip
    elif isinstance(wanted, txn_demo.RaceRun):
        with st.spinner("Validating, then a second writer appends, then the commit…"):
            send(
                writes.Write(
                    txn_guide.conflict_watched, (ns, wanted.operations, wanted.table_id),
                    "Commit with a concurrent writer", "",
                ),
                invalidate=txn_guide.watched_tables(wanted.operations),
                catalog=True,
                then=watched,
            )  # fmt: skip
    render_last_commit(delimiter)
    txn_demo.render_last_watch(isolated=local)

with txn_tab:
    left, right = st.columns([3, 2], gap="large")
    with left:
        wanted = render_describe_alter(ns, delimiter, read_only=read_only)
        if isinstance(wanted, Alter):
            send(
                writes.Write(
                    batch_builder.alter_transaction, (ns, wanted.txn_id, wanted.actions),
                    "AlterTransaction", "",
                ),
                then=lambda response: altered(wanted.txn_id, response),
            )  # fmt: skip
    with right:
        st.subheader("Seen in this session", anchor=False)
        render_history(delimiter)

with ns_tab:
    st.subheader("Batch commits of the namespace", anchor=False)
    if not caps.batch_records:
        feedback.show("info", batch_builder.NO_LIST_OPERATION)
    else:
        st.caption(
            "Every batch commit of this namespace, newest first, from the records it keeps "
            "under its root. A table's own transactions are its versions (Versions page)."
        )
        listed = feedback.run(namespace_transactions, action="Listing the batch commits")
        if listed is not None:
            render_namespace_transactions(listed)

with guide_tab:
    if guide_tab.open:
        conn = connection_key()
        guide = state.guide(conn)
        if guide is None and local:
            guide = txn_demo.start_guide(ns)
            if guide is not None:
                state.set_guide(conn, guide)
        locked = demo_denial(ns, read_only)
        step = txn_demo.render_guide(guide, locked=locked, local=local)
        if step is not None and guide is not None:
            if step.step == txn_demo.RESET:
                send(
                    writes.Write(txn_guide.reset, (ns, guide), "Starting over", "", guide.tables),
                    then=lambda _: state.set_guide(conn, None),
                )
            else:
                doing = txn_guide.STEP_ACTIONS[step.step]
                with st.spinner(f"{doing}…"):
                    send(
                        writes.Write(txn_guide.advance, (ns, guide, step.step), doing, "",
                                     guide.tables),
                        catalog=True,
                        then=lambda after: state.set_guide(conn, after),
                    )  # fmt: skip
