"""Write-audit-publish on the Transactions page: stage a real change of a table as its next
version (readers do not see it), audit it (rows before and after, the row-level changes, the
schema, a presenter's checks), publish it with the batch, or discard it.

Staged changes live in the session as ``StagedChange.to_dict()`` (``state.staged()``); the
CreateTableVersion that publishes one is an operation of the builder's batch. Staging and
discarding are writes: the pieces here return what the user asked (:class:`StageChange`,
:class:`Discard`) and the page performs it. Data from ``backend.services.staged_changes``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pyarrow as pa
import streamlit as st
from lance_namespace.errors import LanceNamespaceError

from backend.rules import filter_rules, ids, row_rules
from backend.services import batch_builder as bb
from backend.services import imports
from backend.services import rows as rsv
from backend.services import staged_changes as sc
from backend.text import plural
from components import feedback, state
from components.cache import cached, table_scope
from components.common import dataframe, lazy_expander, render_role_lock
from components.session import write_denial

APPEND, DELETE, UPDATE, OVERWRITE = sc.STAGE_KINDS
KIND_LABELS = {
    APPEND: "Append rows from a file",
    DELETE: "Delete rows by a filter",
    UPDATE: "Update rows by a filter",
    OVERWRITE: "Overwrite from a file",
}
FILE_TYPES = ["csv", "parquet", "pq", "arrow", "ipc", "feather"]


@dataclass(frozen=True)
class StageChange:
    """The user asked to stage ``kind`` (``value``: rows, a filter, ``(assignments, filter)``)
    on ``table_id`` (a write: the page performs it with ``bb.stage_change``)."""

    table_id: list[str]
    kind: str
    value: Any

    def kwargs(self) -> dict[str, Any]:
        return {self.kind: self.value}

    @property
    def action(self) -> str:
        return f"Staging a change of {ids.display_id(self.table_id)}"


@dataclass(frozen=True)
class Discard:
    """The user asked to discard these staged changes (dicts; a write the page performs)."""

    staged: list[dict[str, Any]]


def held() -> list[sc.StagedChange]:
    """The session's staged changes (oldest first)."""
    out = []
    for item in state.staged():
        try:
            out.append(sc.StagedChange.from_dict(item))
        except LanceNamespaceError:
            continue  # a record of an older console: not a staged change any more
    return out


def in_batch(operations: Sequence[dict[str, Any]]) -> dict[str, int]:
    """manifest path -> the number (from 1) of the batch operation that publishes it."""
    return {
        str(bb.body_of(op).get("manifest_path")): i
        for i, op in enumerate(operations, start=1)
        if bb.kind_of(op) == bb.CREATE_VERSION
    }


# --------------------------------------------------------------------------------------------
# Stage
# --------------------------------------------------------------------------------------------


def add_staged_change(staged: sc.StagedChange) -> None:
    """A change the page staged: the session holds it and the batch publishes it."""
    state.set_staged([*state.staged(), staged.to_dict()])
    state.set_operations([*state.operations(), bb.staged_op(staged)])
    state.reset_forms("txn.stage")


def _add_to_batch(item: dict[str, Any]) -> None:
    state.set_operations([*state.operations(), bb.staged_op(sc.StagedChange.from_dict(item))])


def discarded(items: Sequence[dict[str, Any]]) -> None:
    """After a discard: the changes leave the session, their operations the batch."""
    gone = {str(i.get("manifest_path")) for i in items}
    state.set_staged([s for s in state.staged() if str(s.get("manifest_path")) not in gone])
    state.set_operations(
        [op for op in state.operations() if str(bb.body_of(op).get("manifest_path")) not in gone]
    )


def published(operations: Sequence[dict[str, Any]]) -> None:
    """After a commit: the staged changes it published leave the session."""
    done = set(in_batch(operations))
    state.set_staged([s for s in state.staged() if str(s.get("manifest_path")) not in done])


def _upload_rows(ns: Any, table_id: list[str], kind: str) -> pa.Table | None:
    names = ", ".join(imports.FORMAT_NAMES[f] for f in imports.UPSERT_FORMATS)
    upload = st.file_uploader(
        f"File ({names})", type=FILE_TYPES, key=state.stage_form_key("file"),
        help="Append: the table's columns (CSV values are read as the table's types). "
        "Overwrite: any columns; they become the table's schema.",
    )  # fmt: skip
    if upload is None:
        return None
    schema = None
    if kind == APPEND:
        schema = feedback.run(rsv.table_schema, ns, table_id, action="Reading the table's schema")
        if schema is None:
            return None
    data = feedback.run(
        lambda: imports.read_upload(upload.getvalue(), imports.format_of(upload.name), schema),
        action=f"Reading {upload.name}",
    )
    if data is not None:
        st.caption(
            feedback.as_text(
                f"{upload.name}: {plural(data.num_rows, 'row')}, columns "
                f"{', '.join(data.column_names)}."
            )
        )
    return data


def render_stage_form(
    ns: Any, table_id: Sequence[str] | None, *, local: bool, read_only: bool
) -> StageChange | None:
    """ "Stage a change" of the picked table: append rows from a file, delete or update rows
    by a filter, overwrite from a file. Returns the change to stage when "Stage" is pressed
    (the page stages it; its CreateTableVersion joins the batch)."""
    if not local:
        st.caption(
            "Staging a change writes files next to the table: local backend only (a folder or "
            "an object store). Over REST, add the CreateTableVersion of a manifest your writer "
            "staged (above)."
        )
        return None
    st.caption(
        "Write, audit, publish: the change is written as the table's next version, "
        "uncommitted. Readers keep seeing the table as it is until the batch publishes it; "
        "discard it and nothing of it stays."
    )
    if not table_id:
        st.caption("Pick a table above to stage a change of it.")
        return None
    tid = list(table_id)
    kind = st.segmented_control(
        "Change", list(KIND_LABELS), default=APPEND, format_func=lambda k: KIND_LABELS[k],
        key=state.stage_form_key("kind"), required=True,
    ) or APPEND  # fmt: skip
    value: Any = None
    if kind in (APPEND, OVERWRITE):
        value = _upload_rows(ns, tid, kind)
    elif kind == DELETE:
        where = st.text_input(
            "Delete the rows where", key=state.stage_form_key("filter"),
            placeholder="qty = 0", help="A SQL filter, as on the Versions page's row delete.",
        )  # fmt: skip
        value = where.strip() or None
    else:
        c1, c2 = st.columns(2)
        assignments = c1.text_area(
            "Set (column = SQL expression, one per line)", key=state.stage_form_key("set"),
            placeholder="price = price * 1.1", height=80,
        )  # fmt: skip
        where = c2.text_input(
            "Where", key=state.stage_form_key("filter"), placeholder="region = 'eu'"
        )
        value = (assignments, where.strip()) if assignments.strip() and where.strip() else None
    locked = None if read_only else write_denial(sc.STAGE, {"kind": kind})
    go = st.button(
        f"Stage: {KIND_LABELS[kind].lower()}", icon=":material/edit_note:", type="primary",
        key=state.stage_form_key("go"), disabled=read_only or locked is not None or value is None,
        help=f"Stage this change of {ids.display_id(tid)} as its next version (uncommitted).",
    )  # fmt: skip
    render_role_lock(locked)
    if not go or value is None:
        return None
    if kind == UPDATE:
        try:
            value = (row_rules.parse_assignments(value[0]), value[1])
        except LanceNamespaceError as err:
            feedback.show("error", f"Not staged: {err}")
            return None
    return StageChange(tid, kind, value)


# --------------------------------------------------------------------------------------------
# The staged changes and their audit
# --------------------------------------------------------------------------------------------


def _check(item: dict[str, Any]) -> sc.Check:
    return sc.Check(
        str(item.get("name") or "check"), item.get("predicate") or None,
        item.get("min_rows"), item.get("max_rows"),
    )  # fmt: skip


def check_results(ns: Any, staged: sc.StagedChange) -> list[sc.CheckResult]:
    """The user's checks of ``staged`` against its staged version; a check that cannot be
    evaluated (a predicate the engine refuses) fails, saying why."""
    out = []
    for item in state.staged_checks(staged.id):
        check = _check(item)
        try:
            out += sc.check_staged(ns, staged, [check])
        except LanceNamespaceError as err:
            out.append(
                sc.CheckResult(check, False, f"cannot be evaluated: {feedback.readable(err)}")
            )
    return out


def publish_blockers(
    ns: Any, operations: Sequence[dict[str, Any]], results: dict[str, list[sc.CheckResult]]
) -> list[str]:
    """Why the batch may not be published: each failed check of a staged change it holds."""
    wanted = in_batch(operations)
    out = []
    for s in held():
        if s.manifest_path not in wanted:
            continue
        for r in results.get(s.id, []):
            if not r.passed:
                out.append(
                    f"{ids.display_id(list(s.table_id))}: check {r.check.name!r} fails: {r.detail}"
                )
    return out


def _add_check(staged_id: str) -> None:
    """ "Add check" (a callback): the form's check joins the staged change's checks; a
    refused one leaves the form as typed and says why."""
    at = f"{state.Txn.AUDIT}.{staged_id}.check"
    name = (state.get(f"{at}.name") or "").strip()
    predicate = (state.get(f"{at}.predicate") or "").strip()
    low, high = state.get(f"{at}.min"), state.get(f"{at}.max")
    refused = None
    if not predicate and low is None and high is None:
        refused = "enter a predicate every row must satisfy, or a row count range"
    elif low is not None and high is not None and int(low) > int(high):
        refused = f"the range {int(low):,} to {int(high):,} is empty"
    elif predicate:
        try:
            filter_rules.check_filter(predicate)
        except LanceNamespaceError as err:
            refused = str(err)
    if refused:
        state.put(f"{at}.refused", f"Check not added: {refused}.")
        return
    if not name:
        parts = [predicate] if predicate else []
        if low is not None or high is not None:
            parts.append(
                f"rows in [{'' if low is None else int(low)}, {'' if high is None else int(high)}]"
            )
        name = " and ".join(parts)
    item = {
        "name": name,
        "predicate": predicate or None,
        "min_rows": None if low is None else int(low),
        "max_rows": None if high is None else int(high),
    }
    state.set_staged_checks(staged_id, [*state.staged_checks(staged_id), item])
    for field, start in (("name", ""), ("predicate", ""), ("min", None), ("max", None)):
        state.put(f"{at}.{field}", start)


def _remove_check(staged_id: str, index: int) -> None:
    checks = state.staged_checks(staged_id)
    state.set_staged_checks(staged_id, [c for i, c in enumerate(checks) if i != index])


def render_checks(staged: sc.StagedChange, results: Sequence[sc.CheckResult]) -> None:
    """The checks of a staged change with their results (a failed one blocks the publish),
    and the form that adds one: a SQL predicate every row must satisfy, and/or a row count
    range."""
    at = f"{state.Txn.AUDIT}.{staged.id}.check"
    for i, r in enumerate(results):
        c1, c2 = st.columns([12, 1], vertical_alignment="center")
        icon = ":material/check_circle:" if r.passed else ":material/cancel:"
        verdict = "holds" if r.passed else "FAILS"
        c1.markdown(
            f"{icon} "
            + feedback.as_text(f"{r.check.name}: {verdict} — {feedback.readable(r.detail)}")
        )
        c2.button(
            f"Remove check {i + 1}", icon=":material/close:", key=f"{at}.{i}.remove",
            help="Remove this check", on_click=_remove_check, args=(staged.id, i),
        )  # fmt: skip
    if not results:
        st.caption("No check yet: add one, e.g. a predicate every row must satisfy.")
    with st.form(at, border=False):
        c1, c2 = st.columns(2)
        c1.text_input("Check name (optional)", key=f"{at}.name")
        c2.text_input(
            "Every row satisfies", key=f"{at}.predicate", placeholder="qty >= 0",
            help="A SQL predicate; rows where it is false or null fail the check.",
        )  # fmt: skip
        c3, c4 = st.columns(2)
        c3.number_input("At least (rows)", min_value=0, value=None, step=1, key=f"{at}.min")
        c4.number_input("At most (rows)", min_value=0, value=None, step=1, key=f"{at}.max")
        st.form_submit_button(
            "Add check", icon=":material/rule:", on_click=_add_check, args=(staged.id,)
        )
    if refused := state.drop(f"{at}.refused"):
        feedback.show("error", refused)


@cached(lambda table_id: table_scope(table_id), ttl=30)
def _table_schema(ns: Any, table_id: tuple[str, ...]) -> pa.Schema:
    return rsv.table_schema(ns, list(table_id))


def schema_frame(staged_schema: pa.Schema, table_schema: pa.Schema | None) -> pd.DataFrame:
    """The staged version's columns with their types, each said new, retyped or as is
    against the table's; the table's columns the change drops last."""
    before = {f.name: f.type for f in table_schema} if table_schema is not None else {}
    rows = []
    for f in staged_schema:
        old = before.get(f.name)
        change = "new" if old is None else "" if old == f.type else f"was {old}"
        rows.append({"column": f.name, "type": str(f.type), "change": change})
    for name, t in before.items():
        if name not in staged_schema.names:
            rows.append({"column": name, "type": str(t), "change": "dropped"})
    return pd.DataFrame(rows, columns=["column", "type", "change"])


def render_audit(ns: Any, staged: sc.StagedChange, results: Sequence[sc.CheckResult]) -> None:
    """What the staged change does, before it is published: rows before and after, the rows
    it inserts, updates and deletes, its schema, the checks."""
    from components.change_log import render_row_changes

    c1, c2, c3 = st.columns(3)
    c1.metric("Rows before", f"{staged.rows_before:,}")
    c2.metric(
        "Rows after", f"{staged.rows_after:,}", delta=f"{staged.rows_after - staged.rows_before:+,}"
    )
    c3.metric("Version", f"v{staged.version}", help=f"Built on v{staged.based_on}, uncommitted.")
    st.markdown("**Row-level changes**")
    changes = feedback.run(sc.staged_row_changes, ns, staged, action="Reading the staged rows")
    if changes is not None:
        render_row_changes(
            changes, key_prefix=f"{state.Txn.AUDIT}.{staged.id}.rows", first_with_rows=True
        )
    st.markdown("**Schema**")
    schema = feedback.run(sc.staged_schema, ns, staged, action="Reading the staged schema")
    if schema is not None:
        table = feedback.run(_table_schema, tuple(staged.table_id), action="Reading the schema")
        frame = schema_frame(schema, table)
        if table is not None and schema.equals(table):
            st.caption("The same columns and types as the table's.")
        dataframe(frame, hide_index=True, key=f"{state.Txn.AUDIT}.{staged.id}.schema", words=True)
    st.markdown("**Checks** (a failed check blocks the publish)")
    render_checks(staged, results)


def render_staged_list(
    ns: Any,
    operations: Sequence[dict[str, Any]],
    results: dict[str, list[sc.CheckResult]],
    *,
    read_only: bool,
) -> Discard | None:
    """The session's staged changes: what each does, whether the batch publishes it (or it
    is stale: the table moved on), its audit (an expander), "Discard" and "Add to the
    batch". Returns the discard asked for."""
    from components.versions.reads import latest_version

    items = held()
    if not items:
        return None
    st.subheader(f"Staged changes ({len(items)})", anchor=False)
    st.caption(
        "Each is the table's next version, written but not committed: readers of the table do "
        "not see it. Audit it, then publish the batch; or discard it."
    )
    wanted = in_batch(operations)
    locked = None if read_only else write_denial(sc.DISCARD)
    asked: Discard | None = None
    for s in items:
        at = f"{state.Txn.STAGE}.{s.id}"
        name = ids.display_id(list(s.table_id))
        latest = latest_version(tuple(s.table_id))
        number = wanted.get(s.manifest_path)
        if latest is not None and latest >= s.version:
            where = (
                f"stale: the table is at v{latest} now (another version took v{s.version}); "
                "discard it and stage again"
            )
        elif number is not None:
            where = f"published by operation {number} of the batch"
        else:
            where = "not in the batch"
        failed = [r for r in results.get(s.id, []) if not r.passed]
        checks = results.get(s.id, [])
        verdict = (
            f" · {len(failed)} of {plural(len(checks), 'check')} fail" if failed
            else f" · {plural(len(checks), 'check')} hold" if checks else ""
        )  # fmt: skip
        with st.container(border=True):
            text, add, rm = st.columns([10, 2, 2], vertical_alignment="center")
            text.markdown(
                feedback.as_text(
                    f"{name} · {s.operation}: {s.summary} · v{s.based_on} → v{s.version} "
                    f"(uncommitted) · {s.rows_before:,} → {plural(s.rows_after, 'row')}"
                )
                + "  \n"
                + feedback.as_text(where + verdict)
            )
            if number is None and not where.startswith("stale"):
                add.button(
                    "Add to batch", key=f"{at}.add", icon=":material/playlist_add:",
                    on_click=_add_to_batch, args=(s.to_dict(),),
                )  # fmt: skip
            if rm.button(
                "Discard", key=f"{at}.discard", icon=":material/delete:",
                disabled=read_only or locked is not None,
                help="Remove every file this staged change wrote (and its operation).",
            ):  # fmt: skip
                asked = Discard([s.to_dict()])
            box = lazy_expander(
                f"Audit {name}: {s.summary}", key=f"{state.Txn.AUDIT}.{s.id}.open",
                icon=":material/fact_check:",
            )  # fmt: skip
            if box is not None:
                with box:
                    render_audit(ns, s, results.get(s.id, []))
    render_role_lock(locked)
    return asked


def all_check_results(ns: Any) -> dict[str, list[sc.CheckResult]]:
    """The checks of every staged change of the session, evaluated now."""
    return {s.id: check_results(ns, s) for s in held()}
