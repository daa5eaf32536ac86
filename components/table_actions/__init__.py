"""The lifecycle panels of "Namespaces & tables", one module each: drop vs deregister
(``drop``), register (``register``), rename or move (``rename``), schema metadata
(``metadata``), side by side (``panel``), the table write they ask for (``action``), and
drop a namespace, RESTRICT or CASCADE (``drop_namespace``).
Each returns what to do; the page sends it. Data and rules: ``backend.services.lifecycle``.
Named here: what the pages call.
"""

from components.table_actions.drop_namespace import render_drop_namespace as render_drop_namespace
from components.table_actions.panel import render_table_actions as render_table_actions
from components.table_actions.register import render_register_form as render_register_form
