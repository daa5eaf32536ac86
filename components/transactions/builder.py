"""The batch-commit builder tab: add operations, stage changes, validate, preview, and commit
with a reader watching (the page performs the commit it returns), plus the demo tools.

The batch follows the link (``?batch=``) while it is small enough.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from backend.errors import LanceNamespaceError
from backend.rules import batch_rules, ids
from backend.services import batch_builder as bb
from backend.text import plural
from components import feedback, staged, state, txn_demo
from components.common import dataframe, render_json
from components.transactions.history import remember_transaction
from components.transactions.operations import (
    render_add_operation,
    render_clear_button,
    render_operation_list,
    render_problems,
    render_request_preview,
)
from components.versions.reads import latest_version


@dataclass(frozen=True)
class Commit:
    """The user asked to commit these operations; they passed the batch rules just now.
    ``watch``: a reader watches the batch's tables while it commits."""

    operations: list[dict[str, Any]]
    watch: bool = False

    @property
    def tables(self) -> list[list[str]]:
        return [bb.body_of(op)["id"] for op in self.operations]


def fingerprint(operations: Sequence[dict[str, Any]]) -> str:
    return hashlib.sha1(json.dumps(list(operations), sort_keys=True).encode()).hexdigest()


def render_batch_support(notice: str | None, supported: bool | None) -> bool:
    """Say up front, before Validate, when the backend cannot commit batches
    (``bb.batch_commit_notice``: a server profile, or a refusal earlier in this session);
    returns whether it can (or may)."""
    if notice:
        feedback.show(
            "warning",
            f"{notice} You can build and preview a batch here; Validate reports the same, and "
            "a commit is refused without being sent.",
        )
        return False
    if supported is None:
        st.caption(
            "Whether this server implements BatchCommitTables is unknown until it answers a "
            "commit (a connection's server profile can say): if it does not, it refuses and "
            "nothing changes."
        )
    return supported is not False


def render_commit_form(
    count: int, *, enabled: bool, staged: int = 0, blockers: Sequence[str] = ()
) -> None:
    """ "Commit atomically": its callback asks the next run to validate the batch, then to
    commit it when nothing blocks it (:data:`state.Txn.CHECK`). A failed check of a staged
    change the batch publishes blocks it (``blockers``: which, and why)."""
    if blockers:
        feedback.show_problems("Publish blocked: a check of a staged change fails.", blockers)
    with st.form(state.Txn.COMMIT, border=False):
        published = f", publishing {plural(staged, 'staged change')}" if staged else ""
        st.caption(
            f"{plural(count, 'operation')}{published}, committed atomically in one "
            "BatchCommitTables: all succeed or none is applied."
        )
        st.form_submit_button(
            "Commit atomically", type="primary", icon=":material/done_all:",
            disabled=not enabled or bool(blockers),
            on_click=state.put, args=(state.Txn.CHECK, "commit"),
        )  # fmt: skip


def render_commit_result(last: dict[str, Any], delimiter: str) -> None:
    txn = last.get("transaction_id")
    feedback.show("success", "Committed." + (f" Transaction {ids.display_id(txn)}." if txn else ""))
    dataframe(
        pd.DataFrame(last["results"]), hide_index=True, key=f"{state.Txn.LAST}.results", words=True
    )
    render_json(last["response"], key_prefix=f"{state.Txn.LAST}.json", label="Response")


def _validate(ns: Any, operations: list[dict[str, Any]], delimiter: str) -> list[bb.Problem] | None:
    found = feedback.run(bb.validate, ns, operations, delimiter=delimiter, action="Validating")
    if found is not None:
        state.put(state.Txn.PROBLEMS, (fingerprint(operations), found))
    return found


def keep_batch_in_link() -> list[dict[str, Any]]:
    """The batch of this session, restored from the link (``?batch=``) when the session has
    none yet (a reload); the link then follows the batch while it is small enough
    (``bb.encode_batch``), larger batches stay in the session only."""
    if state.get(state.Txn.OPERATIONS) is None and (text := st.query_params.get(state.QP_BATCH)):
        try:
            state.set_operations(bb.decode_batch(text))
        except LanceNamespaceError as err:
            state.set_operations([])
            feedback.show("warning", str(err))
    operations = state.operations()
    encoded = bb.encode_batch(operations)
    if encoded is None:
        if state.QP_BATCH in st.query_params:
            del st.query_params[state.QP_BATCH]
    elif st.query_params.get(state.QP_BATCH) != encoded:
        st.query_params[state.QP_BATCH] = encoded
    return operations


def demo_denial(ns: Any, read_only: bool) -> str | None:
    """Why this session may not use the demo tools (``None``: it may): admins only, never on
    a read-only connection (the gate's ``denial``)."""
    from components.session import write_denial

    denial = getattr(ns, "denial", None)
    if callable(denial):
        return denial(DEMO_TOOL)
    return write_denial(DEMO_TOOL) if not read_only else "the connection is read-only"


DEMO_TOOL = "demo_fault_commit"


Asked = Commit | staged.StageChange | staged.Discard | txn_demo.FaultRun | txn_demo.RaceRun


def render_builder(ns: Any, caps: Any, delimiter: str, *, read_only: bool) -> Asked | None:
    """The builder: add operations, stage changes (write-audit-publish: each staged change's
    audit and checks), list, validate, clear, preview, commit with a reader watching, and the
    demo tools. Returns what the user asked the page to write (stage, discard, commit, a demo
    tool), else ``None``; everything is drawn first. Buttons that change the batch do so in
    their callbacks; "Validate" and "Commit atomically" validate here, before the batch is
    drawn, so that the problems show next to their operations in this run."""
    from components.snippets import render_python_snippet
    from components.tables.picker import render_table_picker

    operations = keep_batch_in_link()
    st.caption(
        "Operations are sent together as one BatchCommitTables request: all of them are "
        "applied, or none."
    )
    local = caps.staging
    notice = bb.batch_commit_notice(ns)
    can_commit = render_batch_support(notice, caps.batch_commit)
    st.subheader("Add an operation", anchor=False)
    table_id = render_table_picker(key_prefix=state.Txn.PICKER)
    latest = latest_version(tuple(table_id)) if table_id else None
    render_add_operation(table_id, delimiter, next_version=(latest or 0) + 1)
    st.subheader("Stage a change", anchor=False)
    asked: Asked | None = staged.render_stage_form(ns, table_id, local=local, read_only=read_only)
    results = staged.all_check_results(ns) if local else {}
    discard = staged.render_staged_list(ns, operations, results, read_only=read_only)
    asked = asked or discard
    check = state.drop(state.Txn.CHECK)
    found = _validate(ns, operations, delimiter) if check and operations else None
    count = plural(len(operations), "operation")
    st.subheader(f"Batch ({count})", anchor=False)
    saved = state.get(state.Txn.PROBLEMS)
    problems = saved[1] if saved and saved[0] == fingerprint(operations) else None
    render_operation_list(operations, problems, delimiter)
    if not operations:
        tool = txn_demo.render_demo_tools([], locked=demo_denial(ns, read_only), local=local)
        return asked or tool
    c1, c2 = st.columns(2)
    c1.button(
        "Validate", icon=":material/rule:", key=state.Txn.VALIDATE,
        on_click=state.put, args=(state.Txn.CHECK, "validate"),
    )  # fmt: skip
    with c2:
        render_clear_button()
    if problems is not None:
        render_problems(problems, supported=None if caps.batch_commit is None else True)
    render_request_preview(operations)
    render_python_snippet(
        "batch_commit_tables", bb.to_request(operations), key_prefix=state.Txn.SNIPPET
    )
    blockers = staged.publish_blockers(ns, operations, results)
    publishes = len(set(staged.in_batch(operations)) & {s.manifest_path for s in staged.held()})
    watch = txn_demo.render_watch_switch(local=local) if local else False
    render_commit_form(
        len(operations), enabled=can_commit and not read_only, staged=publishes, blockers=blockers
    )
    tool = txn_demo.render_demo_tools(operations, locked=demo_denial(ns, read_only), local=local)
    asked = asked or tool
    if check == "commit" and can_commit and not read_only and found is not None:
        if batch_rules.has_errors(found):
            bb.record_refused_commit(ns, operations, found)  # refused: in the audit log
            return asked
        if blockers:
            return asked
        return asked or Commit(operations, watch=watch)
    return asked


def committed(operations: list[dict[str, Any]], response: Any, delimiter: str) -> None:
    """After a successful commit: its results on display, the builder emptied."""
    txn = [response.transaction_id] if response.transaction_id else None
    if txn:
        remember_transaction(txn, source="batch commit", status="SUCCEEDED")
    state.put(
        state.Txn.LAST_COMMIT,
        {
            "transaction_id": txn,
            "results": bb.results_frame(operations, response, delimiter).to_dict("records"),
            "response": response.model_dump(mode="json", exclude_none=True),
        },
    )
    staged.published(operations)
    state.set_operations([])


def render_last_commit(delimiter: str) -> None:
    last = state.get(state.Txn.LAST_COMMIT)
    if last:
        st.subheader("Last commit", anchor=False)
        render_commit_result(last, delimiter)
