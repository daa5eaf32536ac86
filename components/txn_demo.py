"""The transaction demo on the Transactions page: the reader panel beside a commit, the demo
tools (a fault switch, a concurrent writer; admin only, off by default) and the guided demo
(stage -> audit -> publish -> fail -> recover, and a writer refused).

A watched commit (``backend.demo.txn_guide.WatchedRun``) keeps its reader
(``table_watch.Watcher``) polling in the background for a moment after the commit: the reader
panel is a fragment that draws the reader's buffer again every half second while it polls,
then once more for good. The pieces return what the user asked (:class:`FaultRun`,
:class:`RaceRun`, :class:`GuideAsk`); the page performs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st
from lance_namespace.errors import TableNotFoundError

from backend.demo import txn_faults as tf
from backend.demo import txn_guide as tg
from backend.rules import ids
from backend.services import batch_builder as bb
from backend.services import charts, table_watch
from backend.text import capital, plural
from components import feedback, polling, state
from components.common import dataframe, header_in_words

REFRESH_SECONDS = 0.5  # the reader panel redraws this often while its reader polls
READER_NOTE = (
    "This reader reads through the namespace, as any client of the console's namespace does "
    "(DescribeTable and its row count at the latest version): a batch in flight is invisible "
    "to it until its commit point, then every table of the batch shows at once. A reader that "
    "opens a table's files itself (lance.dataset, DuckDB) bypasses the namespace and can see "
    "a batch half-applied."
)
REST_READER_NOTE = (
    "This reader reads through the REST server: what a read at the latest version sees while "
    "a batch applies is the server's to say."
)


# --------------------------------------------------------------------------------------------
# The reader panel
# --------------------------------------------------------------------------------------------


def reader_line(summary: table_watch.WatchSummary) -> str:
    """``polls: 27 (9.3 per second) · mixed states seen: 0``, the reader's figures."""
    return (
        f"polls: {summary.polls} ({summary.rate:.1f} per second) · "
        f"mixed states seen: {summary.mixed}"
    )


def states_table(run: tg.WatchedRun) -> pd.DataFrame:
    """Every watched table before and after the commit: version, row count, and whether it
    is unchanged, or published by the batch."""
    rows = []
    for t, before in run.before.items():
        after = run.after.get(t, tf.TableState(False))
        if after == before:
            what = "unchanged"
        elif run.appended is not None and tuple(run.appended.table_id) == t:
            what = "the second writer's append"
        elif t in run.published and after.version == run.published[t][1]:
            what = "published"
        else:
            what = "changed"
        rows.append(
            {
                "table": ids.display_id(list(t)),
                "version before": before.version,
                "version after": after.version,
                "rows before": before.rows,
                "rows after": after.rows,
                "outcome": what,
            }
        )
    frame = pd.DataFrame(
        rows,
        columns=[
            "table",
            "version before",
            "version after",
            "rows before",
            "rows after",
            "outcome",
        ],
    )
    for column in ("version before", "version after", "rows before", "rows after"):
        frame[column] = frame[column].astype("Int64")
    return frame


def render_outcome(run: tg.WatchedRun) -> None:
    """What the commit did: published, refused, or failed on purpose and recovered."""
    outcome = run.outcome
    if outcome is not None:
        where = f", at protocol step {outcome.fired}" if outcome.fired else ""
        if outcome.killed:
            feedback.show(
                "error",
                f"Demo fault: {outcome.fault.describe()}{where}. The batch stopped there, "
                "uncommitted.",
            )
        elif outcome.error:
            feedback.show(
                "error",
                f"Demo fault: {outcome.fault.describe()}{where}. The commit failed: "
                f"{outcome.error_class}: {feedback.readable(outcome.error)}",
            )
        elif outcome.committed:
            feedback.show("warning", "The fault never fired: the batch committed.")
        recovered = " (recovered from its journal when the namespace was opened again)"
        feedback.show(
            "info",
            f"Recovery: transaction {outcome.transaction_id or '?'} is {outcome.status or '?'}"
            + (recovered if outcome.recovered else "")
            + (f": {feedback.readable(outcome.reason).rstrip('.')}." if outcome.reason else "."),
        )
        if outcome.unchanged and len(run.unchanged) == len(run.before):
            same = "same version, row count and versions as before. Nothing was published."
            feedback.show(
                "success",
                f"Every table is unchanged: {len(run.before)} tables, each with the {same}"
                if len(run.before) > 1
                else f"The table is unchanged: the {same}",
            )
        elif not outcome.committed:
            feedback.show("warning", "Some tables changed: see the table below.")
        return
    if run.error is not None:
        feedback.show_error(run.error, action="Batch commit")
        if run.appended is not None:
            writer = ids.display_id(list(run.appended.table_id))
            if tg.only_the_writer_changed(run):
                feedback.show(
                    "success",
                    f"Refused: the second writer appended {plural(run.appended.rows, 'row')} to "
                    f"{writer} (its v{run.appended.version}) after Validate, so the batch was "
                    "not committed. Nothing of it was published: every other table is unchanged.",
                )
            else:
                feedback.show("warning", "Some tables changed besides the writer's: see below.")
        elif len(run.unchanged) == len(run.before):
            st.caption("Nothing was published: every table is unchanged.")
        return
    together = " together" if len(run.published) > 1 else ""
    feedback.show(
        "success",
        f"Published in one BatchCommitTables: transaction {run.transaction_id}. "
        f"{plural(len(run.published), 'table')} changed{together}.",
    )


def render_reader(run: tg.WatchedRun, *, key_prefix: str, isolated: bool = True) -> None:
    """The reader's figures and chart, redrawn every :data:`REFRESH_SECONDS` while it polls
    (a fragment), once more when it stops."""
    watcher = run.watcher
    watching = watcher.alive

    def draw() -> None:
        polls = watcher.polls()
        summary = table_watch.summarize(polls, run.published)
        still = watcher.alive
        st.markdown(
            "**Reader** · "
            + feedback.as_text(reader_line(summary))
            + (" · polling…" if still else "")
        )
        if still:
            # the chart comes once the reader stops: drawing it is heavy, and the reader runs
            # in this process
            st.caption("The chart follows when the reader stops, in a moment.")
        elif polls:
            states = table_watch.states_frame(polls, run.published)
            st.plotly_chart(
                charts.reader_figure(states, watcher.marks(), start=polls[0].at),
                key=f"{key_prefix}.chart",
            )
            moved = summary.moved
            flat = (
                "no table's version or row count changed while it watched"
                if summary.flat
                else "versions moved: "
                + ", ".join(
                    f"{ids.display_id(list(t))} v{summary.first[t][0]} → v{summary.last[t][0]}"
                    for t in moved
                )
            )
            st.caption(feedback.as_text(f"The reader saw: {flat}."))
        if watcher.error:
            feedback.show("warning", f"The reader stopped: {watcher.error}")
        st.caption(feedback.as_text(READER_NOTE if isolated else REST_READER_NOTE))
        if watching and not still:
            polling.rerun_page()  # the reader is done: draw the page once more, without the timer

    polling.fragment(draw, every=REFRESH_SECONDS if watching else None)


# row counts as the rest of the console shows them (1,085): the demo's three grids
ROW_COUNTS = {
    column: st.column_config.NumberColumn(header_in_words(column), format="localized")
    for column in ("rows before", "rows after", "inserted", "updated", "deleted")
}


def render_watched_run(run: tg.WatchedRun, *, key_prefix: str, isolated: bool = True) -> None:
    """A watched commit: its outcome, every table before and after, the reader."""
    st.markdown("**" + feedback.as_text(capital(run.label)) + "**")
    render_outcome(run)
    dataframe(
        states_table(run),
        hide_index=True,
        key=f"{key_prefix}.tables",
        column_config=ROW_COUNTS,
        words=True,
    )
    render_reader(run, key_prefix=key_prefix, isolated=isolated)


def render_last_watch(*, isolated: bool) -> None:
    """The builder's last watched commit (a publish, a demo fault, a race), if any."""
    run = state.get(state.Txn.WATCHED)
    if run is None:
        return
    st.subheader("Watched commit", anchor=False)
    render_watched_run(run, key_prefix=state.Txn.WATCH, isolated=isolated)


def render_watch_switch(*, local: bool) -> bool:
    """ "Watch the tables while committing": a reader polls the batch's tables during and
    after the commit (on by default)."""
    return bool(
        st.toggle(
            "A reader watches the batch's tables while it commits",
            value=True,
            key=f"{state.Txn.WATCH}.on",
            help="Polls each table's version and row count several times a second, through the "
            "namespace, during the commit and for a few seconds after it.",
        )
    )


# --------------------------------------------------------------------------------------------
# Demo tools (builder)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FaultRun:
    """Commit the batch with a demo fault (a write the page performs: ``fault_watched``)."""

    operations: list[dict[str, Any]]
    fault: tf.Fault


@dataclass(frozen=True)
class RaceRun:
    """Validate, let a second writer append to ``table_id``, commit (``conflict_watched``)."""

    operations: list[dict[str, Any]]
    table_id: list[str]


FAIL_AT, KILL, RACE = "fail", "kill", "race"
TOOL_LABELS = {
    FAIL_AT: "Fail at operation N",
    KILL: "Kill during apply",
    RACE: "Concurrent writer between Validate and Commit",
}
BEFORE_COMMIT_POINT = 0  # the kill's place: right before the commit point


def render_demo_tools(
    operations: Sequence[dict[str, Any]], *, locked: str | None, local: bool
) -> FaultRun | RaceRun | None:
    """The demo tools, in their own expander: off by default, admin only. Fail at operation
    N (an injected I/O error: the batch rolls itself back), kill during apply (the committing
    process is killed: recovery rolls it back), a concurrent writer (a second process appends
    to one table between Validate and Commit: the commit is refused)."""
    if not local:
        return None
    with st.expander(
        "Demo tools (admin only)", icon=":material/science:", key=state.Txn.DEMO_TOOLS_OPEN
    ):
        st.caption(
            "Demo tools make a commit fail on purpose, to show what the batch protocol does "
            "about it. They run the batch in a second process and are recorded in the audit "
            "log. Off by default."
        )
        on = st.toggle(
            "Switch the demo tools on", value=False, key=f"{state.Txn.TOOLS}.on",
            disabled=locked is not None,
        )  # fmt: skip
        if locked:
            st.caption(":material/lock: " + feedback.as_text(f"Disabled: {locked}."))
            return None
        if not on:
            return None
        if not operations:
            st.caption("Add operations to the batch (stage a change above) to try a tool on it.")
            return None
        which = st.radio(
            "Tool", list(TOOL_LABELS), format_func=lambda k: TOOL_LABELS[k],
            key=f"{state.Txn.TOOLS}.which", horizontal=True,
        ) or FAIL_AT  # fmt: skip
        count = len(operations)
        numbers = list(range(1, count + 1))
        if which == FAIL_AT:
            n = st.selectbox(
                "Operation", numbers, key=f"{state.Txn.TOOLS}.n",
                format_func=lambda i: f"{i}. {bb.describe_operation(operations[i - 1])}",
            )  # fmt: skip
            st.caption(
                "An I/O error is injected while the batch applies this operation (the ones "
                "before it are applied by then): the batch rolls every step back."
            )
            if st.button(
                "Commit with the fault", key=f"{state.Txn.TOOLS}.go", icon=":material/bolt:",
                type="primary",
            ):  # fmt: skip
                return FaultRun(list(operations), tf.fail_at_operation(int(n or 1)))
        elif which == KILL:
            place = st.selectbox(
                "Kill the committing process", [BEFORE_COMMIT_POINT, *numbers],
                key=f"{state.Txn.TOOLS}.kill_at",
                format_func=lambda i: "right before the commit point (every change on disk)"
                if i == BEFORE_COMMIT_POINT
                else f"while it applies operation {i}",
            )  # fmt: skip
            st.caption(
                "The process committing the batch is killed (SIGKILL): the next open of the "
                "namespace recovers the batch from its journal and rolls it back."
            )
            if st.button(
                "Commit and kill", key=f"{state.Txn.TOOLS}.go", icon=":material/dangerous:",
                type="primary",
            ):  # fmt: skip
                fault = tf.kill_during_apply(None if not place else int(place))
                return FaultRun(list(operations), fault)
        else:
            tables = tg.watched_tables(operations)
            if not tables:
                st.caption("The batch touches no existing table for a second writer to append to.")
                return None
            table = st.selectbox(
                "The second writer appends to", tables, key=f"{state.Txn.TOOLS}.table",
                format_func=lambda t: ids.display_id(list(t)),
            )  # fmt: skip
            st.caption(
                "Validate the batch, then a second process appends one row to this table "
                "through lance directly (as another engine would), then Commit: the commit is "
                "refused and publishes nothing."
            )
            if st.button(
                "Validate, race a writer, commit", key=f"{state.Txn.TOOLS}.go",
                icon=":material/sync_problem:", type="primary",
            ):  # fmt: skip
                return RaceRun(list(operations), list(table or tables[0]))
    return None


# --------------------------------------------------------------------------------------------
# The guided demo
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GuideAsk:
    """A step of the guided demo to run (``txn_guide.STEPS``), or ``"reset"``."""

    step: str


RESET = "reset"


def staged_frame(staged: Sequence[Any]) -> pd.DataFrame:
    rows = [
        {
            "table": ids.display_id(list(s.table_id)),
            "operation": s.operation,
            "change": s.summary,
            "version": f"v{s.based_on} → v{s.version} (uncommitted)",
            "rows before": s.rows_before,
            "rows after": s.rows_after,
        }
        for s in staged
    ]
    return pd.DataFrame(
        rows, columns=["table", "operation", "change", "version", "rows before", "rows after"]
    )


def audit_frame(audits: Sequence[tg.Audit]) -> pd.DataFrame:
    rows = [
        {
            "table": ids.display_id(list(a.staged.table_id)),
            "rows before": a.staged.rows_before,
            "rows after": a.staged.rows_after,
            "inserted": a.counts.get("inserted", 0),
            "updated": a.counts.get("updated", 0),
            "deleted": a.counts.get("deleted", 0),
            "schema": "same as the table's" if a.same_schema else "changed",
            "checks": "; ".join(
                f"{r.check.name}: {'holds' if r.passed else 'FAILS'}" for r in a.checks
            ),
        }
        for a in audits
    ]
    return pd.DataFrame(
        rows,
        columns=[
            "table", "rows before", "rows after", "inserted", "updated", "deleted", "schema",
            "checks",
        ],
    )  # fmt: skip


def step_summary(guide: tg.Guide, step: str) -> str:
    """One line saying what a done step did."""
    run = guide.runs.get(step)
    summary = run.summary() if run is not None else None
    if step == tg.STAGE:
        return "Three changes staged; a reader still sees the tables as they were."
    if step == tg.AUDIT:
        return "Every check held." if all(a.passed for a in guide.audits) else "A check failed."
    if run is None or summary is None:
        return "Done."
    reader = reader_line(summary)
    if step == tg.PUBLISH:
        return f"Published together ({run.transaction_id}); {reader}."
    if step == tg.RECOVER:
        return f"The same changes published after all ({run.transaction_id}); {reader}."
    if step == tg.FAIL:
        ok = "every table unchanged" if run.outcome and run.outcome.unchanged else "see below"
        return f"Killed before the commit point, rolled back: {ok}; {reader}."
    ok = "only the writer's append landed" if tg.only_the_writer_changed(run) else "see below"
    return f"Refused: {ok}; {reader}."


def _render_step_result(guide: tg.Guide, step: str, *, key_prefix: str) -> None:
    if step == tg.STAGE and guide.round is not None:
        st.caption(
            "Each change is its table's next version, written under the table but not "
            "committed: readers (and the Tables page) still see the old versions."
        )
        dataframe(
            staged_frame(guide.round.staged),
            hide_index=True,
            key=f"{key_prefix}.staged",
            column_config=ROW_COUNTS,
            words=True,
        )
        if guide.seen is not None:
            seen = ", ".join(
                f"{ids.display_id(list(r.table_id))} v{r.version} ({r.rows:,} rows)"
                for r in guide.seen.readings
                if r.version is not None and r.rows is not None
            )
            st.markdown(
                feedback.as_text(f"A reader of the namespace, right after staging: {seen}.")
            )
    elif step == tg.AUDIT:
        dataframe(
            audit_frame(guide.audits),
            hide_index=True,
            key=f"{key_prefix}.audit",
            column_config=ROW_COUNTS,
            words=True,
        )
        if all(a.passed for a in guide.audits):
            feedback.show("success", "Every check holds: the batch may be published.")
        else:
            feedback.show("error", "A check fails: publishing is blocked.")
    elif (run := guide.runs.get(step)) is not None:
        render_watched_run(run, key_prefix=f"{key_prefix}.{step}")
        if step == tg.CONFLICT:
            st.caption(
                feedback.as_text(
                    "The batch's staged changes are stale now (the writer took the version one "
                    f"of them was built for): the guide discarded them ({guide.discarded} files "
                    "removed)."
                )
            )


def render_guide(guide: tg.Guide | None, *, locked: str | None, local: bool) -> GuideAsk | None:
    """The guided demo: the three demo tables it changes, its steps as numbered buttons (each
    enabled once the one before is done), what each done step did, the last step's result in
    full. Returns the step asked for."""
    at = state.Txn.GUIDE_UI
    st.caption(
        "A scripted run of write-audit-publish on the demo namespace: stage a change in three "
        "tables, audit them, publish them in one BatchCommitTables while a reader watches, then "
        "show a failure rolled back and a concurrent writer refused. Nothing to type: press the "
        "steps in order."
    )
    if not local:
        feedback.show(
            "info",
            "The guided demo stages changes and runs demo tools on the namespace's files: open "
            "a local namespace (the demo: lance-console without a target).",
        )
        return None
    if guide is None:
        return None
    st.markdown(
        feedback.as_text(
            "Tables: " + ", ".join(ids.display_id(t) for t in guide.tables)
            + " (picked from the demo namespace)."
        )
    )  # fmt: skip
    if locked:
        st.caption(":material/lock: " + feedback.as_text(f"Disabled: {locked}."))
    asked: GuideAsk | None = None
    last = guide.done[-1] if guide.done else None
    for number, step in enumerate(tg.STEPS, start=1):
        done = step in guide.done
        nxt = step == guide.next_step
        c1, c2 = st.columns([4, 7], vertical_alignment="center")
        if c1.button(
            f"{number}. {tg.STEP_TITLES[step]}", key=f"{at}.{step}", width="stretch",
            type="primary" if nxt else "secondary", disabled=not nxt or locked is not None,
            icon=":material/check:" if done else None,
        ):  # fmt: skip
            asked = GuideAsk(step)
        if done:
            c2.markdown(feedback.as_text(step_summary(guide, step)))
        if step == last:
            with st.container(border=True, key=f"{at}.result"):
                _render_step_result(guide, step, key_prefix=at)
    if guide.done and st.button("Start over", key=f"{at}.reset", icon=":material/restart_alt:"):
        asked = GuideAsk(RESET)
    return asked


def start_guide(ns: Any) -> tg.Guide | None:
    """A guided demo on the demo's tables (``txn_guide.start``); on a namespace without them
    an info says what the guide needs (not an error: nothing failed), and ``None``."""
    return feedback.run(
        tg.start,
        ns,
        action="Picking the demo tables",
        info_if=lambda err: capital(str(err)) if isinstance(err, TableNotFoundError) else None,
    )
