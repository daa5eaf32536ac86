"""Every session-state key and query-parameter name the console uses, in one place.

Widget keys are prefixed by their page (``tables.``, ``versions.``, ``indexes.``, ``txn.``,
``conn.``, ``insp.``) so they stay stable and never collide.
"""

from __future__ import annotations

# --- connection (sidebar) ---
CONNECTION = "conn.current"  # dict: the active connection's settings (secrets kept out of echo)
READ_ONLY = "conn.read_only"

# --- deep-link query parameters ---
QP_NAMESPACE = "ns"
QP_TABLE = "table"
QP_VERSION = "version"
QP_INDEX = "index"

# --- transactions page ---
TXN_OPERATIONS = "txn.operations"  # list of builder operations (dicts)
TXN_HISTORY = "txn.history"  # list of transaction ids committed / looked up this session

# --- connection sidebar, "Namespaces & tables", "Versions", "HTTP inspector" (UI helper A) ---
CONN_SPEC = "conn.spec"  # backend.connections.ConnectionSpec of the active connection (no secrets)
CONN_SECRETS = "conn.secrets"  # dict "name|target" -> Secrets typed this session (never shown)
CONN_NOTICE = "conn.notice"  # (kind, markdown) shown once in the sidebar after a switch attempt
CONN_PENDING_READ_ONLY = "conn.pending_read_only"  # applied to READ_ONLY before the toggle renders
CONN_FORM_VERSION = "conn.form_version"  # bumped after a successful connect: clears the form
CONN_PICK = "conn.pick"  # widget: saved-connection selectbox
SEL_NAMESPACE = "sel.namespace"  # list[str]: selected namespace path (shared by all pages)
SEL_TABLE = "sel.table"  # str | None: selected table name inside SEL_NAMESPACE
SEL_VERSION = "sel.version"  # int | None: selected version of the selected table
TABLES_SEARCH = "tables.search"  # widget: table-name filter
# Pagers are keyed "<page>.<list>.page.<hash of connection, list size, filter>" so they reset
# when what they page through changes.
TABLES_LAST_RESULT = "tables.last_result"  # (title, response dict) of the last write, shown once
TABLES_FORM_VERSION = "tables.form_version"  # bumped after a successful write: clears forms
VERSIONS_LAST_RESULT = "versions.last_result"  # (title, response dict) of the last delete
VERSIONS_FORM_VERSION = "versions.form_version"  # bumped after a successful delete: clears forms
VERSIONS_COMPARE = "versions.compare"  # (table id tuple, version a, version b) being compared
INSP_SELECTED = "insp.selected"  # widget: index of the wire-log entry shown in detail
CONN_DIALOG = "conn.dialog_open"  # bool: the sidebar's "Connect to…" dialog is open
TABLES_DIALOG = "tables.dialog"  # "create_ns" | "declare" | None: the write dialog that is open
# Selectable name lists (components.tables.render_name_list) keep "<key_prefix>.memo": what the
# grid last showed as selected, so a click is told apart from a selection changed elsewhere.
# Their grids are keyed "<key_prefix>.grid.page.<hash>" (connection, filter, page, epoch).

# --- "Indexes" and "Transactions" pages (UI helper B) ---
INDEXES_JOBS = "indexes.jobs"  # list[str]: build job ids started this session
INDEXES_JOBS_SEEN = "indexes.jobs_seen"  # list[str]: finished jobs already handled
INDEXES_FORM_VERSION = "indexes.form_version"  # bumped after a create/drop: clears forms
INDEXES_LAST_RESULT = "indexes.last_result"  # (kind, markdown) of the last write, shown once
INDEXES_PREVIEW_TEXT = "indexes.preview_text"  # widget: tokenizer preview sample text
TXN_FORM_VERSION = "txn.form_version"  # bumped after add / commit / alter: clears forms
TXN_PROBLEMS = "txn.problems"  # (operations fingerprint, list[Problem]) of the last validation
TXN_LAST_COMMIT = "txn.last_commit"  # dict: results + response + transaction id of last commit
TXN_ALTER_ACTIONS = "txn.alter_actions"  # list[dict]: pending AlterTransaction actions
TXN_DESCRIBED = "txn.described"  # dict: id parts, status, properties of the last describe/alter
TXN_ID_INPUT = "txn.id_input"  # widget: transaction id text
TXN_PENDING_ID = "txn.pending_id"  # str: written into TXN_ID_INPUT before it renders

# --- Indexes / Versions / Transactions UX and speed fixes (UI helper C) ---
INDEXES_TABS = "indexes.tabs"  # widget: the open tab of the Indexes page (stateful st.tabs)
INDEXES_PICKED = "indexes.selected.name"  # widget: the index picker (synced to ?index=)
TXN_TABS = "txn.tabs"  # widget: the open tab of the Transactions page
