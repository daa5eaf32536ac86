"""Namespaces and tables, one module per part: the shared selection (``selection``), cached
catalog reads (``catalog``), the panels of "Namespaces & tables" (``header``, ``tree``,
``namespaces``, ``grid``, ``forms``, ``detail``) and the pickers of the other pages
(``picker``). The lifecycle panels (drop, deregister, rename, schema metadata, drop namespace)
are in ``components.table_actions``. Named here: what the pages call; components import the
module they need.
"""

from components.tables.catalog import table_detail as table_detail
from components.tables.catalog import table_names as table_names
from components.tables.detail import render_table_section as render_table_section
from components.tables.forms import render_open_dialog as render_open_dialog
from components.tables.grid import render_tables_column as render_tables_column
from components.tables.header import render_header as render_header
from components.tables.namespaces import render_namespaces_column as render_namespaces_column
from components.tables.picker import render_namespace_picker as render_namespace_picker
from components.tables.picker import render_table_picker as render_table_picker
from components.tables.selection import go_to as go_to
from components.tables.selection import set_selection as set_selection
from components.tables.selection import sync_selection as sync_selection
from components.tables.tree import render_namespace_tree as render_namespace_tree
