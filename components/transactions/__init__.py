"""The Transactions page's parts, one module each: the batch-commit builder (``builder``, its
operations in ``operations``), describe / alter a transaction (``describe``), this session's
transactions (``history``), the namespace's batch commits (``namespace_list``) and the tabs
(``tabs``). Named here: what the pages call; components import the module they need.
"""

from components.transactions.builder import Commit as Commit
from components.transactions.builder import committed as committed
from components.transactions.builder import demo_denial as demo_denial
from components.transactions.builder import render_builder as render_builder
from components.transactions.builder import render_last_commit as render_last_commit
from components.transactions.describe import Alter as Alter
from components.transactions.describe import altered as altered
from components.transactions.describe import render_describe_alter as render_describe_alter
from components.transactions.history import render_history as render_history
from components.transactions.namespace_list import (
    namespace_transactions as namespace_transactions,
)
from components.transactions.namespace_list import (
    render_namespace_transactions as render_namespace_transactions,
)
from components.transactions.tabs import open_tabs as open_tabs
from components.transactions.tabs import render_icon_only_style as render_icon_only_style
