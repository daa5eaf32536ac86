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
