"""The one write path of the pages, and the reads the write panels share.

A panel returns what to do: a :class:`Write` (``fn(*args)`` with its action name, success
message, the tables it touches and where the selection goes) or a :class:`JobRequest` (a
durable job, ``backend.services.jobs``: its :meth:`JobRequest.write`), after
:func:`confirmed_submit` (submitted, writable, confirmed). The page hands it to
:func:`perform`, which runs it and its after-steps (read the touched tables again, follow the
job, reset the forms, say the result once, run the page again); the frame (app/nav.py) does
the same with a connection change (``components.connection_writes``). No page or component
calls a write any other way (``tests/ui/test_writes.py`` scans for one).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from lance_namespace.errors import (
    LanceNamespaceError,
)

from backend.rules import version_ranges
from backend.services import lifecycle as lc
from backend.services import restore as restoresv
from backend.services import tags as tagsv
from components import feedback, state
from components.cache import CATALOG, cached, invalidate_tables, table_scope, tags_scope

READ_ONLY = "The connection is read-only."
_log = logging.getLogger(__name__)

# --------------------------------------------------------------------------------------------
# Cached reads
# --------------------------------------------------------------------------------------------


@cached(tags_scope, ttl=30)
def _tag_list(ns: Any, table_id: tuple[str, ...]) -> tuple[pd.DataFrame, dict[int, list[str]]]:
    """The table's tags, as :func:`tags` and :func:`tagged` give them (one listing)."""
    frame = tagsv.list_tags(ns, table_id)
    return frame, tagsv.tagged_versions(frame)


def tags(table_id: tuple[str, ...]) -> pd.DataFrame:
    """Every tag of the table: tag, version, manifest_size."""
    return _tag_list(table_id)[0]


def tagged(table_id: tuple[str, ...]) -> dict[int, list[str]] | None:
    """version -> its tags, for forms that say which versions are tagged (``None``, quietly,
    when the tags cannot be listed: the write checks them again before sending)."""
    try:
        return _tag_list(table_id)[1]
    except LanceNamespaceError:
        return None


@cached(lambda table_id, tag: tags_scope(table_id), ttl=30)
def tag_version(ns: Any, table_id: tuple[str, ...], tag: str) -> int:
    return tagsv.tag_version(ns, table_id, tag)


@cached(lambda table_id, version: table_scope(table_id), ttl=30)
def lost_indexes(ns: Any, table_id: tuple[str, ...], version: int) -> list[restoresv.LostIndex]:
    """The indexes a restore of ``version`` would leave behind (``lifecycle``)."""
    return restoresv.indexes_lost_by_restore(ns, table_id, version)


@cached(lambda table_id, latest: table_scope(table_id), ttl=30)
def rebuild_offer(ns: Any, table_id: tuple[str, ...], latest: int) -> restoresv.RebuildOffer | None:
    """The indexes a restore left behind, derived from the table's history (``lifecycle``),
    as of its ``latest`` version (the page's, just read: a new version asks again)."""
    return restoresv.rebuild_offer(ns, table_id, latest)


@cached(table_scope, ttl=30)
def drop_preview(ns: Any, table_id: tuple[str, ...]) -> lc.DropPreview:
    return lc.drop_preview(ns, table_id)


@cached(table_scope, ttl=30)
def schema_metadata(ns: Any, table_id: tuple[str, ...]) -> dict[str, str]:
    return lc.schema_metadata(ns, table_id)


@cached(lambda namespace_id: CATALOG, ttl=30)
def children(ns: Any, namespace_id: tuple[str, ...]) -> lc.Children:
    return lc.namespace_children(ns, namespace_id)


def runs(versions: Sequence[int]) -> str:
    """``[1, 2, 3, 5]`` -> ``"1-3, 5"`` (inclusive runs, as the delete form reads them)."""
    return version_ranges.format_spans(version_ranges.spans_of(versions))


def confirmed_submit(submitted: bool, *, read_only: bool, confirmed: bool, refusal: str) -> bool:
    """Whether a confirmed write form may go ahead: submitted, on a writable connection, and
    confirmed; otherwise why not is shown (``refusal`` when the confirmation is missing)."""
    if not submitted:
        return False
    if read_only:
        feedback.show("error", READ_ONLY)
    elif not confirmed:
        feedback.show("error", refusal)
    else:
        return True
    return False


def render_confirmed_form(
    form_key: str,
    expected: str,
    *,
    what: str,
    button: str,
    icon: str,
    not_done: str,
    read_only: bool,
    operation: str | None = None,
    locked: str | None = None,
    confirm_prefix: str | None = None,
    primary: bool = True,
    on_submit: Callable[[str], None] | None = None,
) -> bool:
    """A form that asks to type ``expected`` (the name of the ``what``: table, namespace)
    before its ``button``; whether it was submitted on a writable connection and confirmed
    (otherwise why not is shown: :func:`confirmed_submit`, e.g. "<not_done>: type <expected>
    exactly to confirm."). ``operation``: the write it asks for, refused beyond the actor's
    role (``session.role_lock``); ``locked``: that refusal when the caller has it already
    (the button is then disabled, the reason shown under it); ``confirm_prefix``: the key
    prefix of the typed box (default ``form_key``); ``primary``: the button stands out (a
    destructive write).

    With ``on_submit`` the write is handed over from the button's callback instead
    (``on_submit(failure_key)``, the page's write with :func:`perform`'s ``failure_key``: the
    page then draws once, after it) and this returns ``False``; a refusal or a failure kept
    under ``failure_key`` is shown under the form."""
    import streamlit as st

    from components.common import (
        confirmation_matches,
        render_role_lock,
        render_typed_confirmation,
    )
    from components.session import role_lock

    if locked is None and operation is not None:
        locked = role_lock(operation, read_only)
    disabled = read_only or locked is not None
    refusal = f"{not_done}: type {expected} exactly to confirm."
    failure_key = f"{form_key}.failure"

    def submitted_now() -> None:  # the button's callback, before the page draws
        typed = state.get(f"{confirm_prefix or form_key}.confirm")
        if disabled:
            keep_refusal(failure_key, READ_ONLY if read_only else str(locked))
        elif not confirmation_matches(typed, expected):
            keep_refusal(failure_key, refusal)
        elif on_submit is not None:
            on_submit(failure_key)

    with st.form(form_key, border=False):
        confirmed = render_typed_confirmation(
            expected,
            key_prefix=confirm_prefix or form_key,
            label=f"Type the {what} name {expected} to confirm",
        )
        submitted = st.form_submit_button(
            button,
            type="primary" if primary else "secondary",
            icon=icon,
            disabled=disabled,
            on_click=submitted_now if on_submit is not None else None,
        )
        render_role_lock(locked)
    if on_submit is not None:
        render_failure(failure_key)
        return False
    return confirmed_submit(submitted, read_only=disabled, confirmed=confirmed, refusal=refusal)


def table_jobs(ns: Any, table_id: Sequence[str], kinds: Sequence[str], limit: int = 5) -> list[Any]:
    """The latest jobs of ``kinds`` on the table, newest first, read fresh (another console's
    too); the running ones are followed by this session from now on."""
    from backend.services import jobs

    found = jobs.list_jobs(ns, table_id, kinds=kinds, limit=limit)
    for job in found:
        if not job.done:
            state.follow_job(job.id)
    return found


@dataclass(frozen=True)
class Write:
    """One write for a page to run with :func:`perform`: ``fn(*args, **kwargs)``. On success
    :meth:`said` is the message (none when empty), said as ``kind``; ``touched`` tables are
    read again and the selection moves to ``go`` (namespace, table)."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    action: str
    success: str | Callable[[Any], str]
    touched: list[list[str]] = field(default_factory=list)
    go: tuple[list[str], str | None] | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    snippet: str | None = None  # the write as Python, shown with the result
    # what to warn of after a success (``None``: nothing), e.g. a table still listed
    warning: Callable[[Any], str | None] | None = None
    kind: str = "success"  # how the success is said (``feedback.show`` kinds)
    follow: bool = False  # the result is a job (or a list of jobs) this session follows
    body: Callable[[Any], Any] | None = None  # the response shown with the result
    # changes no tag of the tables it touches (rows written, a restore, a cleanup, a delete of
    # versions that keeps their tags): their tags are not read again after it
    leaves_tags: bool = False

    def call(self) -> tuple[Any]:
        """The result as a 1-tuple: never ``None`` on success, even for an operation that
        returns nothing (``feedback.run`` gives ``None`` on failure)."""
        return (self.fn(*self.args, **self.kwargs),)

    def said(self, result: Any) -> str:
        return self.success(result) if callable(self.success) else self.success

    def warned(self, result: Any) -> str | None:
        return self.warning(result) if self.warning is not None else None

    def message(self, result: Any) -> tuple[str, str]:
        """What is said of ``result`` (kind, text): a success, or a warning that starts with
        it when :meth:`warned` has something to say."""
        warning = self.warned(result)
        text = self.said(result) + (f" {warning}" if warning else "")
        return ("warning" if warning else self.kind), text

    def flash(self, page: str, result: Any, **extra: Any) -> None:
        """The result (:meth:`message`), said once on ``page`` after the rerun."""
        feedback.flash(page, *self.message(result), **extra)


def keep_refusal(key: str, text: str) -> None:
    """Why a form checked in its callback sends nothing, for :func:`render_failure`."""
    state.put(key, text)


def render_failure(key: str) -> None:
    """The refusal or failure a form's callback kept under ``key`` (:func:`perform`'s
    ``failure_key``, :func:`keep_refusal`), shown once where the form is."""
    kept = state.drop(key)
    if isinstance(kept, str):
        feedback.show("error", kept)
    elif kept is not None:
        err, action = kept
        feedback.show_error(err, action=action)


@dataclass(frozen=True)
class JobRequest:
    """A job for a page to submit (``backend.services.jobs``: recorded in the namespace, seen
    by every console on it): ``kind`` on ``table_id`` with ``params``; ``label`` is what the
    user asked for ("Compact files"). :meth:`write` is the submit, for :func:`perform`."""

    kind: str
    table_id: tuple[str, ...]
    params: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    executor: str = "local"  # where it runs (``jobs.EXECUTORS``: "local", "ray")
    executor_options: dict[str, Any] = field(default_factory=dict)  # e.g. ray_address

    def write(self, ns: Any, success: str = "", kind: str = "success") -> Write:
        """The submit as a write whose result (the job) the session follows (its end is told
        once); ``success``: what is said once it is submitted (nothing by default)."""
        from backend.services import jobs

        return Write(
            jobs.submit,
            (ns, self.kind, list(self.table_id), self.params, self.executor),
            self.label or f"Starting a {self.kind} job",
            success,
            kwargs=dict(self.executor_options),
            follow=True,
            kind=kind,
        )


def perform(
    write: Write,
    *,
    page: str,
    invalidate: Sequence[Sequence[str]] | None = None,
    catalog: bool = False,
    namespaces: bool = True,
    branches: bool = True,
    reset: bool = True,
    then: Callable[[Any], Any] | None = None,
    rerun: bool | Callable[[Any], bool] = True,
    failure_key: str | None = None,
    say: Callable[[str, str], None] | None = None,
) -> tuple[Any] | None:
    """Run ``write`` and its after-steps, once; the one way a page writes.

    The write runs through ``feedback.run`` (a failure is shown where the page is, nothing
    else happens, ``None``). On success, in order: the tables it touched are read again
    (``invalidate``, default ``write.touched``; ``catalog``: the listings too, the namespaces'
    own ones unless ``namespaces`` is false: a write of tables only; their branches' reads
    unless ``branches`` is false: a write on main only), the session
    follows the job it started (``write.follow``), ``then(result)`` keeps what the page keeps
    of it (a selection, a panel's state), the ``page``'s forms start afresh (``reset``), its
    result is said once on ``page`` (nothing when the write has no success text; ``say``:
    said by ``say(kind, text)`` instead, e.g. in the sidebar), and the page runs again
    (``rerun``, or ``rerun(result)``).

    From a widget callback (``failure_key`` given) the page draws once, after the write: a
    failure is kept under ``failure_key`` for the form to show where it is
    (:func:`render_failure`), as a callback cannot draw in place. There ``rerun`` asks for
    that one run to be the whole page's (``st.rerun()`` in a callback: a form inside a
    fragment or a dialog would otherwise rerun only that); ``rerun=False`` leaves the run to
    the widget (a dialog that closes itself first). Returns the result as a 1-tuple
    (``Write.call``)."""
    if failure_key is None:
        done = feedback.run(write.call, action=write.action)
    else:
        try:
            done = write.call()
        except Exception as err:  # noqa: BLE001 - shown by the form (render_failure)
            _log.warning("%s", feedback.error_text(err, action=write.action))
            state.put(failure_key, (err, write.action))
            return None
    if done is None:
        return None
    result = done[0]
    tables = write.touched if invalidate is None else invalidate
    if tables:
        invalidate_tables(
            tables,
            catalog=catalog,
            namespaces=namespaces,
            branches=branches,
            tags=not write.leaves_tags,
        )
    if write.follow:
        for job in result if isinstance(result, list) else [result]:
            state.follow_job(job.id)
    if then is not None:
        then(result)
    if reset:
        state.reset_forms(page)
    if write.said(result) and say is not None:
        say(*write.message(result))
    elif write.said(result):
        extra = {"snippet": write.snippet} if write.snippet else {}
        if write.body is not None:
            extra["body"] = write.body(result)
        write.flash(page, result, **extra)
    if rerun(result) if callable(rerun) else rerun:
        import streamlit as st

        st.rerun()
    return done


__all__ = [
    "READ_ONLY",
    "JobRequest",
    "Write",
    "children",
    "confirmed_submit",
    "drop_preview",
    "render_confirmed_form",
    "runs",
    "schema_metadata",
    "perform",
    "table_jobs",
    "tag_version",
    "tagged",
    "tags",
]
