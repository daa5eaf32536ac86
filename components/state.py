"""Every session-state key and query parameter of the console, with typed accessors, by page.

Widget keys are named here too, prefixed by their page (``conn.``, ``sel.``, ``tables.``,
``versions.``, ``indexes.``, ``maint.``, ``search.``, ``txn.``, ``transfer.``, ``insp.``, ``audit.``,
``auth.``) so they stay stable and never collide; a "prefix" constant is completed by the
component that draws the widgets (``<prefix>.grid``). Keys for one identifier: :func:`panel_key`,
:func:`search_key`, :func:`txn_add_key`, :func:`txn_alter_key`. Keys made anew on purpose
(session state cannot reset the widget): :func:`form_key`, :func:`pager_key`. Widgets bound to
the URL (``bind="query-params"``) use the query parameter's name as their key: :data:`QP_CONN`,
:data:`QP_READ_ONLY`, :data:`QP_INDEX`, :data:`QP_VERSION`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import streamlit as st

from backend.text import is_digits

# --- query parameters (deep links; never secrets) ----------------------------------------------
QP_NAMESPACE = "ns"  # repeated: ?ns=a&ns=b is the namespace a$b
QP_TABLE = "table"
QP_VERSION = "version"  # bound: the Versions page's version picker
QP_INDEX = "index"  # bound: the Indexes page's index picker
QP_CONN = "conn"  # bound: the saved connection picker (a name, never a target or secret)
QP_READ_ONLY = "ro"  # bound: the read-only switch
QP_TAB = "tab"  # the tab a shared link opens: Search & tune (then the setting keys below),
# Transactions (``?tab=demo``: the guided demo)
QP_TAG = "tag"  # Versions: a tag whose version the picker opens (``?tag=gold``)
QP_BRANCH = "branch"  # the shared branch selection (:func:`selected_branch`); absent: main
QP_BATCH = "batch"  # Transactions: the batch being built, while small (a reload restores it)
# Search & tune setting keys (``components.search.share_url.SHARE_KEYS``): column, k, nprobes, ...

# Pages draw only their open tab; Streamlit forgets the value of a widget that a run does not
# draw. Settings a user fills in inside a tab (Search & tune panels, the Indexes create panel)
# pass ``persist_state=KEEP_WHILE_ON_PAGE``: kept while the user stays on the page.
KEEP_WHILE_ON_PAGE: Literal["page"] = "page"


def _get(key: str, default: Any = None) -> Any:
    return st.session_state.get(key, default)


def _set(key: str, value: Any) -> None:
    st.session_state[key] = value


def _pop(key: str, default: Any = None) -> Any:
    return st.session_state.pop(key, default)


def _bump(key: str) -> int:
    value = int(_get(key, 0)) + 1
    _set(key, value)
    return value


# --- polling fragments (any page; ``components.polling``) ---------------------------------------
class Poll:
    PAGE_RUN = "poll.page_run"  # True while a whole-page run draws the page
    OWED = "poll.owed"  # True: a polling fragment asked for a page rerun within the page's run
    ERROR_SHOWN = "poll.error"  # True: the page's run showed an error (it stays on screen)


# --- connection (sidebar) ------------------------------------------------------------------------
class Conn:
    SPEC = "conn.spec"  # ConnectionSpec of the active connection (no secrets)
    SECRETS = "conn.secrets"  # "name|target" -> Secrets typed this session (never shown)
    SESSION_SPECS = "conn.session_specs"  # name -> ConnectionSpec made in the dialog this session
    NOTICE = "conn.notice"  # (kind, text) shown once in the sidebar
    DIALOG = "conn.dialog_open"  # the "Connect to..." dialog is open
    FORM_VERSION = "conn.form_version"  # bumped after a successful connect: clears the form
    LOST = "conn.lost"  # name of a connection a reload could not restore
    CREATE_OFFER = "conn.create_offer"  # a local directory that does not exist yet
    REACHED = "conn.reached"  # connection keys that answered in this session (stale banner)
    RUN = "conn.run"  # this script run's reading of the saved connections and active connection
    ACTIVE = "conn.active"  # name of the active connection (the picker's value)
    WRITE = "conn.write"  # a write the sidebar asked for; the frame performs it (app/nav.py)
    # widgets
    CREATE_HERE = "conn.create_here"  # "Create" on the page of a missing local directory
    CREATE = "conn.create"  # "Create it" in the sidebar's offer
    REFRESH = "conn.refresh"  # "Refresh"
    OPEN = "conn.open"  # "Connect to..." (opens the dialog)
    FORGET = "conn.forget"  # "Forget" the saved connection


def notice(kind: str, text: str) -> None:
    """A one-shot message for the sidebar (``kind``: success | warning | error | info)."""
    _set(Conn.NOTICE, (kind, text))


def pop_notice() -> tuple[str, str] | None:
    return _pop(Conn.NOTICE)


def read_only() -> bool:
    return bool(_get(QP_READ_ONLY, False))


def set_read_only(value: bool) -> None:
    """Only from a callback or before the switch renders (it is a widget)."""
    _set(QP_READ_ONLY, bool(value))


# --- shared selection (every page) ---------------------------------------------------------------
class Sel:
    NAMESPACE = "sel.namespace"  # list[str]
    TABLE = "sel.table"  # str | None
    # str | None: the branch of the selected table the pages with a branch picker act on
    # (Versions, Indexes, Search & tune, Import & export); None: main. The pickers' widgets are
    # ``<page picker prefix>.branch``.
    BRANCH = "sel.branch"
    # str | None: the query string a table picked in a callback left in the session's query
    # parameters without telling the browser (the run's next URL change tells it, else the
    # end of the run: ``selection.send_owed_url``)
    URL_OWED = "sel.url_owed"


MAIN_BRANCH = "main"


def selection() -> tuple[list[str], str | None]:
    return list(_get(Sel.NAMESPACE) or []), _get(Sel.TABLE)


def set_selection(namespace: list[str], table: str | None) -> None:
    _set(Sel.NAMESPACE, list(namespace))
    _set(Sel.TABLE, table)


def selected_branch() -> str:
    """The branch picked for the selected table (``"main"`` when none was)."""
    return str(_get(Sel.BRANCH) or MAIN_BRANCH)


def set_branch(branch: str | None) -> None:
    """Pick ``branch`` (``None`` / ``"main"``: main). A change forgets the Search & tune
    results shown, which were another branch's."""
    value = None if not branch or branch == MAIN_BRANCH else str(branch)
    if value != _get(Sel.BRANCH):
        _pop(Search.RESULTS)
        _pop(Search.RESULT_SETTINGS)
    _set(Sel.BRANCH, value)


def as_version(value: Any) -> int | None:
    """A version number from the version picker's value (an option, or a number typed or
    linked as text); ``None`` for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 1 else None
    text = str(value or "").strip().removeprefix("v")
    return int(text) if is_digits(text) and int(text) >= 1 else None


def selected_version() -> int | None:
    return as_version(_get(QP_VERSION))


def history_navigation() -> bool:
    """This run follows the browser's Back or Forward: Streamlit then gives each widget bound
    to the URL the URL's value, or its default where the URL has none, over the session's."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    return bool(getattr(get_script_run_ctx(), "is_history_navigation", False))


# --- one-shot results and form generations, per page -----------------------------------------
def flash(page: str, kind: str, text: str, **extra: Any) -> None:
    """A result to show once on ``page`` after the rerun that follows a write."""
    _set(f"{page}.flash", {"kind": kind, "text": text, **extra})


def pop_flash(page: str) -> dict[str, Any] | None:
    """The result kept for ``page`` (gone from the session); remembered as the one shown in
    this run, for :func:`keep_flash`."""
    item = _pop(f"{page}.flash")
    _set(f"{page}.flash.shown", item)
    return item


def keep_flash(page: str) -> None:
    """The result shown in this run of ``page`` is shown again after the next rerun."""
    item = _get(f"{page}.flash.shown")
    if item:
        _set(f"{page}.flash", item)


def form_version(page: str) -> int:
    """Suffix of a page's form keys; :func:`reset_forms` bumps it, which empties the forms."""
    return int(_get(f"{page}.form_version", 0))


def reset_forms(page: str) -> None:
    _bump(f"{page}.form_version")


# --- Namespaces & tables -------------------------------------------------------------------------
class Tables:
    SEARCH = "tables.search"  # widget: table-name filter
    SORT = "tables.sort"  # widget: the tables list's order (table_stats.SORT_ORDERS)
    # per namespace (:func:`panel_key`): how many tables (by name) a sort by a figure orders
    SORT_SCOPE = "tables.sort.scope"
    DIALOG = "tables.dialog"  # "create_ns" | "declare" | None: the write dialog that is open
    # widgets: the expanders of the lifecycle panels, per table / namespace (:func:`panel_key`)
    DROP_OPEN = "tables.drop.open"  # "Drop table (deletes data)"
    DEREGISTER_OPEN = "tables.deregister.open"  # "Deregister table (keeps data)"
    REGISTER_OPEN = "tables.register.open"  # "Register a table (existing data)"
    RENAME_OPEN = "tables.rename.open"  # "Rename or move"
    METADATA_OPEN = "tables.metadata.open"  # "Schema metadata"
    DROP_NS_OPEN = "tables.drop_ns.open"  # "Drop namespace"
    TREE_OPEN = "tables.tree.open"  # widget: the "Namespace tree" menu (its open state)
    # widgets: the "Namespace actions" and "Add a table" menus (keyed: a rerun that draws
    # the page above them anew, figures coming in, leaves an open menu open)
    NS_MENU = "tables.ns_menu"
    ADD_MENU = "tables.add_menu"
    DROP_NS_MODE = "tables.drop_ns.mode"  # widget: RESTRICT | CASCADE
    DROP_NS_CHILDREN = "tables.drop_ns.children"  # widget, per namespace: what CASCADE drops
    RESET = "tables.reset"  # widget: "Back to the root namespace" (a stale link)
    TO_VERSIONS = "tables.to_versions"  # widget: "Versions" (to the Versions page)
    # prefixes of the widgets of one panel (the component adds the rest: ``.name``, ...)
    CRUMBS = "tables.crumbs"  # the breadcrumbs: ``.crumb.<i>``
    TREE = "tables.tree"  # the namespace tree: ``.node.<path>``
    NS = "tables.ns"  # the child namespaces: ``.open.<name>`` (or their grid)
    LIST = "tables.list"  # the tables list: its grid and pager
    DETAIL = "tables.detail"  # the table detail: schema, properties, storage, metadata
    DETAIL_BOX = "tables.detail.box"  # the container of the table's details (scrolled to)
    SCROLL_TO_DETAIL = "tables.detail.scroll"  # a table was picked: show its details once
    DETAIL_SNIPPET = "tables.detail.snippet"  # its "Copy as Python"
    RESULT = "tables.result"  # the last write's response
    DIALOGS = "tables"  # the dialogs: ``.<name>.open`` (their button), ``.<name><gen>`` (the form)
    # prefixes of the write forms that stay on screen after their write, with the page's form
    # generation (:func:`form_key`): their data editors are emptied only by a new key
    REGISTER = "tables.register"
    LIFE = "tables.life"  # the table's lifecycle panels (``.meta``, ``.rename``, ``.drop``)
    DEREGISTER = "tables.deregister"
    DROP_NS = "tables.drop_ns"  # per namespace: ``tables.drop_ns<gen>.<path>``
    # the "Schema" panel (components.schema_edit): its expander and its open tab per table,
    # its widgets (``tables.schema<gen>``: ``.add.name``, ``.alter.column``, ``.drop.columns``,
    # ``.<op>.apply``...) and the last preview (table id, operation, arguments, SchemaPreview)
    SCHEMA_OPEN = "tables.schema.open"
    SCHEMA_TAB = "tables.schema.tab"
    SCHEMA = "tables.schema"
    SCHEMA_PREVIEW = "tables.schema.preview"


def panel_key(key: str, ident: Any) -> str:
    """``key`` for one table, namespace or tree node (``ident``: its id parts), so that an
    expander opened for one is closed for the next."""
    return f"{key}.{'/'.join(ident)}"


def pager_key(key_prefix: str, *parts: Any) -> str:
    """A widget key that changes when ``parts`` change (the one place keys are made anew
    on purpose: a pager, or a grid's selection, starts again when its list changes)."""
    digest = hashlib.sha1(repr(parts).encode()).hexdigest()[:10]
    return f"{key_prefix}.page.{digest}"


def form_key(page: str, prefix: str) -> str:
    """``prefix`` with ``page``'s form generation: the widgets under it start empty after
    :func:`reset_forms` (for forms holding a data editor or a file uploader, which session
    state cannot reset)."""
    return f"{prefix}{form_version(page)}"


def open_dialog(name: str | None) -> None:
    """One dialog at a time: opening one closes the others."""
    _pop(Conn.DIALOG)
    _pop(Tables.DIALOG)
    if name == "connect":
        _set(Conn.DIALOG, True)
    elif name:
        _set(Tables.DIALOG, name)


def dialog() -> str | None:
    return "connect" if _get(Conn.DIALOG) else _get(Tables.DIALOG)


# --- Versions ----------------------------------------------------------------------------------------
class Versions:
    COMPARE = "versions.compare"  # (table id tuple, version a, version b) being compared
    TIMELINE_OPEN = "versions.timeline.open"  # widget: the timeline expander is open
    PENDING = "versions.pending"  # a version for the picker, written before it renders
    TAG_LINK = "versions.tag_link"  # ((table id tuple, tag), version) of the ?tag= link followed
    CLEANUP = "versions.cleanup"  # (table id tuple, CleanupPlan) of the last dry run
    BROWSE = "versions.browse"  # widget: "Browse the data at vK" (to Search & tune's preview)
    RESTORE_OPEN = "versions.restore.open"  # widget: the "Restore this version" expander
    MANAGE_OPEN = "versions.manage.open"  # widget: the "Manage versions" expander is open
    # widgets: a branch's "Compare two versions" and "Tags" expanders (keyed: the page's
    # poll for outside commits, drawing the list anew, leaves an open one open)
    BRANCH_COMPARE_OPEN = "versions.branch_compare.open"
    BRANCH_TAGS_OPEN = "versions.branch_tags.open"
    MANAGE_TAB = "versions.manage.tab"  # widget: the open "Manage versions" tab (its label)
    ROWS_PREVIEW = "versions.rows_preview"  # (table id tuple, filter, DeletePreview) last preview
    GRID = "versions.list.grid"  # widget: the versions list (a row picked opens that version)
    OPEN_BY_TAG = "versions.open_by_tag"  # widget: "Open by tag" (a tag's version opens)
    # (table id tuple, tag name): a tag named like a version, warned of once; a second press
    # with the same name creates it
    TAG_WARNED = "versions.tag_warned"
    # {table id tuple: restore uuid}: rebuild offers answered in this session (the offer
    # itself is derived from the table's history; the answer is kept in the namespace too,
    # where it has a place for it: ``backend.services.restore.answer_rebuild_offer``)
    REBUILD = "versions.rebuild"
    REBUILD_GO = "versions.rebuild.go"  # widget: "Rebuild the indexes"
    REBUILD_DISMISS = "versions.rebuild.dismiss"  # widget: "Not now"
    # prefixes of the page's panels (the component adds the rest)
    PICKER = "versions.pick"  # the table picker
    LIST = "versions.list"  # the versions list: its grid and pager
    TIMELINE = "versions.timeline"  # the timeline chart
    ONE = "versions.one"  # one version's details
    CMP = "versions.cmp"  # the comparison of two versions
    COMPARE_FORM = "versions.compare"  # per table: the compare form
    # the write forms, per table and with the page's form generation (:func:`versions_form`)
    RESTORE_FORM = "versions.restore"
    TAGS_FORM = "versions.tags"
    CLEANUP_FORM = "versions.cleanup"
    DELETE_FORM = "versions.delete"
    ROWS_FORM = "versions.rows"
    UPDATE_FORM = "versions.update"  # "Update rows" (components.row_edits)
    UPSERT_FORM = "versions.upsert"  # "Upsert from a file" (components.row_edits)
    # (table id tuple, the update asked, UpdatePreview) of the last "Update rows" preview
    UPDATE_PREVIEW = "versions.update_preview"
    # (table id tuple, the upsert asked, MergeCounts) of the last "Upsert from a file" dry run
    UPSERT_DRY_RUN = "versions.upsert_dry_run"
    # the change log and the row-level compare (components/change_log.py)
    CHANGE_LOG_OPEN = "versions.change_log.open"  # widget: the "Change log" expander is open
    CHANGE_LOG = "versions.change_log"  # prefix: the change log's grid and pager
    ROW_CHANGES = "versions.row_changes"  # (table id tuple, RowChanges) of the last row compare
    ROW_CHANGES_FORM = "versions.row_changes.form"  # per table: the row compare form
    ROW_CHANGES_VIEW = "versions.row_changes.view"  # prefix: the rows shown (kind, grid, pager)
    BRANCHES = "versions.branches"  # the Branches panel (its list, create and delete forms)
    BRANCHES_OPEN = "versions.branches.open"  # widget: the "Branches" expander is open
    # a branch shown (``?branch=``): its version picked for restore and tags (per table, with
    # the page's form generation), its compare with its parent
    BRANCH_VERSION = "versions.branch.version"
    BRANCH_CHANGES = "versions.branch.changes"  # ((table id tuple, branch), RowChanges)
    BRANCH_CHANGES_FORM = "versions.branch.changes.form"  # per table and branch: key columns
    BRANCH_CHANGES_VIEW = "versions.branch.changes.view"  # prefix: the rows shown


def versions_form(prefix: str, table_id: Sequence[str]) -> str:
    """A write form of the Versions page for one table: emptied by a new form generation
    (:func:`reset_forms` after the write), not kept from one table to the next."""
    return f"{form_key('versions', prefix)}.{tuple(table_id)}"


def open_manage_tab(label: str) -> None:
    """Open the "Manage versions" panel at its tab ``label`` (before the panel renders)."""
    _set(Versions.MANAGE_OPEN, True)
    _set(Versions.MANAGE_TAB, label)


def compare_pair(table_id: list[str]) -> tuple[int, int] | None:
    pair = _get(Versions.COMPARE)
    return (pair[1], pair[2]) if pair and pair[0] == tuple(table_id) else None


def rebuild_answered(table_id: Sequence[str]) -> str | None:
    """The restore (its lance transaction uuid) whose rebuild offer for ``table_id`` this
    session answered."""
    return (_get(Versions.REBUILD) or {}).get(tuple(table_id))


def set_rebuild_answered(table_id: Sequence[str], restore_uuid: str) -> None:
    _set(Versions.REBUILD, {**(_get(Versions.REBUILD) or {}), tuple(table_id): restore_uuid})


def show_version(version: int) -> None:
    """Open ``version`` in the picker on the next run (after a write: the picker has rendered)."""
    _set(Versions.PENDING, int(version))


def cleanup_plan(table_id: list[str]) -> Any:
    """The last dry run's plan for this table (``backend.services.lifecycle.CleanupPlan``)."""
    item = _get(Versions.CLEANUP)
    return item[1] if item and item[0] == tuple(table_id) else None


def set_cleanup_plan(table_id: list[str] | None, plan: Any = None) -> None:
    if table_id is None or plan is None:
        _pop(Versions.CLEANUP)
    else:
        _set(Versions.CLEANUP, (tuple(table_id), plan))


def rows_preview(table_id: list[str], filter: str) -> Any:
    """The last "Delete rows" preview of this table for exactly ``filter``
    (``backend.services.rows.DeletePreview``; ``None``: not previewed, or another filter)."""
    item = _get(Versions.ROWS_PREVIEW)
    if item and item[0] == tuple(table_id) and item[1] == filter.strip():
        return item[2]
    return None


def set_rows_preview(table_id: list[str] | None, filter: str = "", preview: Any = None) -> None:
    if table_id is None or preview is None:
        _pop(Versions.ROWS_PREVIEW)
    else:
        _set(Versions.ROWS_PREVIEW, (tuple(table_id), filter.strip(), preview))


def schema_preview(table_id: Sequence[str], operation: str) -> tuple[Any, Any] | None:
    """The last "Schema" preview of ``operation`` on this table: (its arguments, its
    ``backend.services.schema.SchemaPreview``); ``None``: not previewed."""
    item = _get(Tables.SCHEMA_PREVIEW)
    if item and item[0] == tuple(table_id) and item[1] == operation:
        return item[2], item[3]
    return None


def set_schema_preview(
    table_id: Sequence[str] | None, operation: str = "", args: Any = None, preview: Any = None
) -> None:
    if table_id is None or preview is None:
        _pop(Tables.SCHEMA_PREVIEW)
    else:
        _set(Tables.SCHEMA_PREVIEW, (tuple(table_id), operation, args, preview))


def row_changes(table_id: Sequence[str], branch: str | None = None) -> Any:
    """The last row compare of ``table_id`` (on ``branch``; ``None``: main) this session (a
    ``row_changes.RowChanges``)."""
    got = _get(Versions.ROW_CHANGES)
    return got[1] if got and got[0] == (tuple(table_id), branch) else None


def set_row_changes(
    table_id: Sequence[str] | None, changes: Any = None, branch: str | None = None
) -> None:
    if table_id is None:
        _pop(Versions.ROW_CHANGES)
    else:
        _set(Versions.ROW_CHANGES, ((tuple(table_id), branch), changes))


def branch_changes(table_id: Sequence[str], branch: str) -> Any:
    """The last compare of ``branch`` with its parent this session (a ``RowChanges``)."""
    got = _get(Versions.BRANCH_CHANGES)
    return got[1] if got and got[0] == (tuple(table_id), branch) else None


def set_branch_changes(
    table_id: Sequence[str] | None, branch: str | None = None, changes: Any = None
) -> None:
    if table_id is None:
        _pop(Versions.BRANCH_CHANGES)
    else:
        _set(Versions.BRANCH_CHANGES, ((tuple(table_id), branch), changes))


def set_compare_pair(table_id: list[str] | None, a: int = 0, b: int = 0) -> None:
    if table_id is None:
        _pop(Versions.COMPARE)
    else:
        _set(Versions.COMPARE, (tuple(table_id), int(a), int(b)))


def pick_version(version: int, *, tag: str | None = None) -> None:
    """Open ``version`` in the version picker (from a callback: before the picker renders);
    "Open by tag" shows ``tag`` (``None``: no tag was chosen)."""
    _set(QP_VERSION, int(version))
    _set(Versions.OPEN_BY_TAG, tag)


def forget_version() -> None:
    """Forget the version picked (from a callback, before the pickers render): they then show
    the latest. The key is kept, as "no version": dropped, a picker bound to the URL would
    take the previous table's ``?version=`` back from it."""
    _set(QP_VERSION, None)


def version_forgotten() -> bool:
    """:func:`forget_version` was called and no version was picked since."""
    return has(QP_VERSION) and _get(QP_VERSION) is None


# --- Indexes ----------------------------------------------------------------------------------------
class Indexes:
    JOBS_SEEN = "indexes.jobs_seen"  # list[str]: finished jobs already handled
    PREVIEW_TEXT = "indexes.preview_text"  # widget: tokenizer preview sample text
    TABS = "indexes.tabs"  # widget: the open tab
    HISTORY_MAX = "indexes.history.max"  # widget: versions in the coverage history
    # prefixes of the page's panels (the component adds the rest)
    PICKER = "indexes.picker"  # the table picker
    JOBS_PANEL = "indexes.jobs"  # the build jobs being followed
    LIST = "indexes.list"  # the indexes grid
    MAINT = "indexes.maint"  # the health panel's actions: .optimize / .compact / .cleanup, the
    # cleanup's days (.cleanup_days) and "Run on Ray" (.ray)
    HEALTH = "indexes.health"  # the table's health panel
    CHARTS = "indexes.charts"  # the statistics charts
    CREATE = "indexes.create"  # the create form ("Run on Ray": .ray)
    SELECTED = "indexes.selected"  # one index's details
    DROP = "indexes.drop"  # the drop form


def first_time_finished(job_id: str) -> bool:
    """True the first time a finished job is seen (its outcome is handled once)."""
    seen = list(_get(Indexes.JOBS_SEEN) or [])
    if job_id in seen:
        return False
    _set(Indexes.JOBS_SEEN, [*seen, job_id])
    return True


# --- Maintenance ---------------------------------------------------------------------------------
class Maintenance:
    PAGE = "maintenance"  # flash messages and form generations of the page
    PICKER = "maint.picker"  # prefix: the namespace picker
    POLICY = "maint.policy"  # prefix: the policy form (with the form generation and the
    # namespace: :func:`maintenance_form`), its fields (``.compact``, ``.small_share``, ...)
    RESET = "maint.policy.reset"  # widget: "Back to the default policy"
    PLAN_GO = "maint.plan.go"  # widget: "Make the plan (dry run)"
    PLAN = "maint.plan"  # (namespace id tuple, Plan) of the last dry run; prefix of its grid
    REASONS_OPEN = "maint.plan.reasons.open"  # widget: the plan's "Every reason in full"
    EDIT_POLICY_OPEN = "maint.edit_policy.open"  # widget: the "Edit the policy" expander
    RUN = "maint.run"  # widget: "Run the plan"; prefix of the run's Cancel (.cancel) and of
    # its results grid


def maintenance_form(namespace_id: Sequence[str]) -> str:
    """The policy form of one namespace, emptied by a new form generation (after a save)."""
    return f"{form_key(Maintenance.PAGE, Maintenance.POLICY)}.{'/'.join(namespace_id)}"


def maintenance_plan(namespace_id: Sequence[str]) -> Any:
    """The last dry run of this namespace (``backend.services.maintenance.Plan``)."""
    item = _get(Maintenance.PLAN)
    return item[1] if item and item[0] == tuple(namespace_id) else None


def set_maintenance_plan(namespace_id: Sequence[str] | None, plan: Any = None) -> None:
    if namespace_id is None or plan is None:
        _pop(Maintenance.PLAN)
    else:
        _set(Maintenance.PLAN, (tuple(namespace_id), plan))


# --- Transactions --------------------------------------------------------------------------------
class Txn:
    OPERATIONS = "txn.operations"  # list of builder operations (spec dicts)
    STAGED = "txn.staged"  # list of staged changes (``StagedChange.to_dict()``) of this session
    CHECKS = "txn.checks"  # staged change id -> list of check dicts (name, predicate, min, max)
    WATCHED = "txn.watched"  # the last watched commit (``txn_guide.WatchedRun``): reader panel
    GUIDE = "txn.guide"  # connection key -> the guided demo's progress (``txn_guide.Guide``)
    PROBLEMS = "txn.problems"  # (operations fingerprint, list[Problem]) of the last validation
    LAST_COMMIT = "txn.last_commit"  # results + response + transaction id of the last commit
    ALTER_ACTIONS = "txn.alter_actions"  # list[dict]: pending AlterTransaction actions
    DESCRIBED = "txn.described"  # id parts, status, properties of the last describe/alter
    ID_INPUT = "txn.id_input"  # widget: transaction id text
    HISTORY = "txn.history"  # transactions committed / looked up this session; also the
    # prefix of the history's buttons (``txn.history.<i>.describe``)
    TABS = "txn.tabs"  # widget: the open tab
    REQUEST_OPEN = "txn.request_json.open"  # widget: the batch's "Request JSON" expander
    DEMO_TOOLS_OPEN = "txn.demo_tools.open"  # widget: the "Demo tools (admin only)" expander
    CONFIRM_CLEAR = "txn.confirm_clear"  # "Clear the batch" waits for a confirmation
    PICKED = "txn.picked"  # the picker's table as the add form's table field last showed it
    # what a button's callback asked this run to do before the page draws what it changes
    CHECK = "txn.check"  # "validate" | "commit": validate the batch (then commit it)
    DESCRIBE_NOW = "txn.describe_now"  # id parts: describe them (a "Describe" in the history)
    ADD_REFUSED = "txn.add_refused"  # text: why the last "Add to batch" added nothing
    ALTER_REFUSED = "txn.alter_refused"  # text: why the last "Add action" added nothing
    # widgets (the prefixes: the component adds the rest)
    PICKER = "txn.picker"  # the table picker
    ADD = "txn.add"  # ``.kind``; the form of a kind and its fields: :func:`txn_add_key`
    STAGE = "txn.stage"  # the "Stage a change" form: ``.kind``, ``.file<gen>``, ``.filter``,
    # ``.set``, ``.go``; and each staged change's ``.<id>.discard`` / ``.<id>.add``
    AUDIT = "txn.audit"  # per staged change: ``.<id>.open`` (its expander), ``.<id>.rows``
    # (its row changes), ``.<id>.schema``, ``.<id>.check.*`` (the add-check form, removes)
    WATCH = "txn.watch"  # ``.on`` (watch while committing), the reader panel's chart and grids
    TOOLS = (
        "txn.tools"  # the demo tools: ``.open``, ``.on``, ``.which``, ``.n``, ``.table``, ``.go``
    )
    GUIDE_UI = "txn.guide_ui"  # the guided demo's buttons (``.<step>``, ``.reset``), grids
    OPS = "txn.ops"  # ``.<i>.up`` / ``.<i>.down`` / ``.<i>.remove`` per operation
    VALIDATE = "txn.validate"  # "Validate"
    CLEAR = "txn.clear"  # ``.ask`` / ``.no`` / ``.yes``
    SNIPPET = "txn.snippet"  # "Copy as Python" of the batch
    COMMIT = "txn.commit"  # the commit form
    LAST = "txn.last"  # the last commit's results and response
    DESCRIBE = "txn.describe"  # the describe form
    CURRENT = "txn.current"  # the described transaction's properties
    ALTER = "txn.alter"  # ``.kind``; the form of a kind and its fields: :func:`txn_alter_key`;
    # ``.action.<i>.remove`` per pending action
    APPLY = "txn.apply"  # the apply form
    NS_LIST = "txn.ns_list"  # the namespace's batch commits: ``.grid`` and its pager


def txn_add_key(kind: str, field: str | None = None) -> str:
    """The add form of an operation ``kind`` (``field``: one of its widgets)."""
    return f"{Txn.ADD}.{kind}" + (f".{field}" if field else "")


def txn_alter_key(kind: str, field: str | None = None) -> str:
    """The alter form of an action ``kind`` (``field``: one of its widgets)."""
    return f"{Txn.ALTER}.{kind}" + (f".{field}" if field else "")


def operations() -> list[dict[str, Any]]:
    return list(_get(Txn.OPERATIONS) or [])


def set_operations(ops: list[dict[str, Any]]) -> None:
    _set(Txn.OPERATIONS, list(ops))
    _pop(Txn.PROBLEMS)


def staged() -> list[dict[str, Any]]:
    return list(_get(Txn.STAGED) or [])


def set_staged(items: list[dict[str, Any]]) -> None:
    """The session's staged changes; the checks of those no longer held are forgotten."""
    _set(Txn.STAGED, list(items))
    held = {str(i.get("id")) for i in items}
    _set(Txn.CHECKS, {k: v for k, v in (_get(Txn.CHECKS) or {}).items() if k in held})


def staged_checks(staged_id: str) -> list[dict[str, Any]]:
    """The checks a user added to a staged change (dicts: name, predicate, min_rows,
    max_rows)."""
    return list((_get(Txn.CHECKS) or {}).get(staged_id, []))


def set_staged_checks(staged_id: str, checks: list[dict[str, Any]]) -> None:
    kept = dict(_get(Txn.CHECKS) or {})
    kept[staged_id] = list(checks)
    _set(Txn.CHECKS, kept)


def guide(conn: str) -> Any:
    """The guided demo's progress on connection ``conn`` (``None``: not started)."""
    return (_get(Txn.GUIDE) or {}).get(conn)


def set_guide(conn: str, value: Any) -> None:
    """Keep (``None``: forget) the guided demo's progress on connection ``conn``."""
    kept = {k: v for k, v in (_get(Txn.GUIDE) or {}).items() if k != conn}
    if value is not None:
        kept[conn] = value
    _set(Txn.GUIDE, kept)


def stage_form_key(field: str) -> str:
    """A field of the "Stage a change" form; the file field changes with the form generation
    (a file uploader is emptied only by a new key)."""
    if field == "file":
        return f"{Txn.STAGE}.file{form_version('txn.stage')}"
    return f"{Txn.STAGE}.{field}"


def alter_actions() -> list[dict[str, Any]]:
    return list(_get(Txn.ALTER_ACTIONS) or [])


def set_alter_actions(actions: list[dict[str, Any]]) -> None:
    _set(Txn.ALTER_ACTIONS, list(actions))


def history() -> list[dict[str, Any]]:
    return list(_get(Txn.HISTORY) or [])


def set_history(items: list[dict[str, Any]]) -> None:
    _set(Txn.HISTORY, list(items))


def get(key: str, default: Any = None) -> Any:
    """Any key above (for the few places that need a raw read)."""
    return _get(key, default)


def put(key: str, value: Any) -> None:
    _set(key, value)


def has(key: str) -> bool:
    """Whether the session holds ``key`` (a widget drawn before, a value set)."""
    return key in st.session_state


def drop(key: str) -> Any:
    return _pop(key)


# --- Search & tune --------------------------------------------------------------------------------
class Search:
    TABS = "search.tabs"  # widget: the open tab
    RESULTS = "search.results"  # (table id, what) -> the last result of each panel
    RESULT_SETTINGS = "search.result_settings"  # (table id, what) -> the settings that made it
    SHARED = "search.shared"  # the shared setting already applied (query-string fingerprint)
    TARGET = "search.sweep.target"  # widget: the target recall of the sweep chart
    HISTORY = "search.history"  # table id tuple -> list[QueryRun], newest first; also the
    # prefix of the history's "Re-apply" buttons (``search.history.<kind>.<i>``)
    # widget, per kind and table (:func:`panel_key`): the history list's expander
    HISTORY_OPEN = "search.history.open"
    # widgets (a panel's query settings: :func:`search_key`)
    PICKER = "search.picker"  # prefix: the table picker
    PREVIEW = "search.preview"  # prefix: the data preview (columns, filter, size, grid, pages)
    VEC_SOURCE = "search.vec.source"  # what the query vector is made from
    VEC_FORM = "search.vec.form"
    VEC_ROW = "search.vec.row"
    VEC_NUMBERS = "search.vec.numbers"
    VEC_TEXT = "search.vec.text"
    VEC_FILTER = "search.vec.filter"
    VEC_PREFILTER = "search.vec.prefilter"
    VEC_REPEATS = "search.vec.n"
    VEC_RESULT = "search.vec.result"  # prefix: the result grid
    FTS_FORM = "search.fts.form"
    FTS_TEXT = "search.fts.text"
    FTS_MODE = "search.fts.mode"
    FTS_COLUMNS = "search.fts.columns"
    FTS_K = "search.fts.k"
    FTS_TOKENS = "search.fts.tokens"  # prefix: the query's tokens
    FTS_GRID = "search.fts.grid"
    PLAN_WHICH = "search.plan.which"
    PLAN_FILTER = "search.plan.filter"
    PLAN_EXPLAIN = "search.plan.explain"
    PLAN_ANALYZE = "search.plan.analyze"
    PLAN_CHART = "search.plan.chart"
    PLAN_GRID = "search.plan.grid"
    RECALL_FORM = "search.recall.form"
    RECALL_MORE = "search.recall.more"
    RECALL_HIST = "search.recall.hist"
    RECALL_LATENCY = "search.recall.latency"
    SWEEP_FORM = "search.sweep.form"
    SWEEP_CHART = "search.sweep.chart"
    SWEEP_GRID = "search.sweep.grid"  # the result grid; its values to try: :func:`search_key`
    SWEEP_DOWNLOAD = "search.sweep.download"
    AB_FORM = "search.ab.form"
    AB_ROWS = "search.ab.rows"
    AB_QUERIES = "search.ab.queries"
    AB_CONFIGS = "search.ab.configs"
    AB_GRID = "search.ab.grid"
    AB_CHART = "search.ab.chart"
    PARAMS_GRID = "search.params.grid"
    MAINT = "search.maint"  # prefix: the maintenance panel


def search_key(panel: str, name: str) -> str:
    """A Search & tune panel's setting widget (``panel``: vec | recall | sweep | ab;
    ``name``: column, k, nprobes, sample, ... or ``grid.<parameter>`` of the sweep)."""
    return f"search.{panel}.{name}"


_ANY_SETTINGS = object()


def result(table_id: tuple[str, ...], what: str, settings: Any = _ANY_SETTINGS) -> Any:
    """The last result of a Search & tune panel (``what``) for this table, else ``None``.
    With ``settings`` (the panel's current settings key): only a result those settings made;
    a result of other settings is forgotten (:func:`clear_result`)."""
    key = (tuple(table_id), what)
    found = (_get(Search.RESULTS) or {}).get(key)
    if found is None or settings is _ANY_SETTINGS:
        return found
    if (_get(Search.RESULT_SETTINGS) or {}).get(key) != settings:
        clear_result(table_id, what)
        return None
    return found


def set_result(table_id: tuple[str, ...], what: str, value: Any, settings: Any = None) -> None:
    """Keep ``value`` as the panel's result, made by ``settings`` (its settings key)."""
    key = (tuple(table_id), what)
    results = dict(_get(Search.RESULTS) or {})
    results[key] = value
    _set(Search.RESULTS, results)
    made_by = dict(_get(Search.RESULT_SETTINGS) or {})
    made_by[key] = settings
    _set(Search.RESULT_SETTINGS, made_by)


def clear_result(table_id: tuple[str, ...], what: str) -> None:
    """Forget the panel's result (its settings changed, or running them failed)."""
    key = (tuple(table_id), what)
    for name in (Search.RESULTS, Search.RESULT_SETTINGS):
        kept = dict(_get(name) or {})
        if key in kept:
            del kept[key]
            _set(name, kept)


QUERY_HISTORY_CAP = 20  # searches kept per table


@dataclass(frozen=True)
class QueryRun:
    """One vector or full-text search run on the Search page: ``kind`` ("vector" / "fts"),
    the form's widget values that made it (``settings``: widget key -> value, what
    "re-apply" puts back) and a one-line ``summary``."""

    kind: str
    settings: dict[str, Any]
    summary: str


def query_history(table_id: tuple[str, ...], kind: str | None = None) -> list[QueryRun]:
    """The searches run on this table in this session, newest first (only ``kind``'s)."""
    runs = (_get(Search.HISTORY) or {}).get(tuple(table_id), [])
    return [r for r in runs if kind is None or r.kind == kind]


def record_query(table_id: tuple[str, ...], run: QueryRun) -> None:
    """Keep ``run`` first in the table's history (at most :data:`QUERY_HISTORY_CAP`)."""
    history = dict(_get(Search.HISTORY) or {})
    history[tuple(table_id)] = [run, *history.get(tuple(table_id), [])][:QUERY_HISTORY_CAP]
    _set(Search.HISTORY, history)


# --- HTTP inspector ------------------------------------------------------------------------------
class Insp:
    SELECTED = "insp.selected"  # widget: index of the exchange shown in detail
    REFRESH = "insp.refresh"  # widget: "Refresh"
    CLEAR = "insp.clear"  # widget: "Clear"
    TABLE = "insp.table"  # widget: the exchanges
    DETAIL = "insp"  # prefix: the exchange's ``.<Request|Response>.h`` / ``.b`` (headers, body)


# --- Jobs ----------------------------------------------------------------------------------------
class Jobs:
    PAGE = "jobs"  # flash messages of the Jobs page; prefix of its widgets
    FOLLOWED = "jobs.followed"  # list[str]: jobs this session started or saw running
    STATES = "jobs.filter.states"  # widget: the states listed
    KINDS = "jobs.filter.kinds"  # widget: the kinds listed
    TABLE = "jobs.filter.table"  # widget: the table text filter
    LIST = "jobs.list"  # widget: the jobs grid
    DETAIL = "jobs.detail"  # prefix: the selected job's details and buttons
    TABLE_JOBS = "indexes.table_jobs"  # prefix: a table page's own jobs


def followed_jobs() -> list[str]:
    return list(_get(Jobs.FOLLOWED) or [])


def follow_job(job_id: str) -> None:
    """Follow ``job_id`` in this session: its end is told once (:func:`first_time_finished`)."""
    followed = followed_jobs()
    if job_id not in followed:
        _set(Jobs.FOLLOWED, [*followed, job_id])


# --- Audit log -----------------------------------------------------------------------------------
class Audit:
    VIEW = "audit"  # prefix: the filters (``.user``, ``.operation``, ...), the entries, the CSV


# --- sign-in (sidebar) -----------------------------------------------------------------------------
class Auth:
    RUN_ACTOR = "auth.run_actor"  # the actor worked out in this script run (the frame's)
    SIGN_IN = "auth.sign_in"  # widget: "Sign in"
    SIGN_OUT = "auth.sign_out"  # widget: "Sign out"


# --- Import & export -----------------------------------------------------------------------------
class Transfer:
    PAGE = "transfer"  # flash messages and form generations of the page
    PICKER = "transfer.picker"  # prefix: the namespace / table picker
    # prefix: the upload (``.file<gen>``: a file uploader is emptied only by a new key,
    # :func:`form_key`), its types grid, the target (``.mode``, ``.name.<file>``, ``.on``), ``.go``
    IMPORT = "transfer.import"
    EXPORT = "transfer.export"  # prefix: the export form and the download button
    PREVIEW = "transfer.preview"  # (upload file id, ImportPreview or the error reading it)
    DOWNLOAD = "transfer.download"  # the prepared export: table id, settings, path, name, rows...
    TABS = "transfer.tabs"  # widget: the open tab (Import | Export)


def export_download(table_id: list[str], settings: Any) -> dict[str, Any] | None:
    """The export prepared for this table with these export ``settings``, else ``None``."""
    kept = _get(Transfer.DOWNLOAD)
    if not kept or kept["table_id"] != list(table_id) or kept.get("settings") != settings:
        return None
    return dict(kept)


def kept_export_download() -> dict[str, Any] | None:
    """The prepared export, whichever table and settings made it."""
    kept = _get(Transfer.DOWNLOAD)
    return dict(kept) if kept else None


def set_export_download(prepared: dict[str, Any]) -> None:
    """Keep a prepared export (its ``table_id`` and the ``settings`` that made it)."""
    _set(Transfer.DOWNLOAD, dict(prepared))


def drop_export_download() -> dict[str, Any] | None:
    return _pop(Transfer.DOWNLOAD)
