"""Namespaces and tables, one module per part: the shared selection (``selection``), cached
catalog reads (``catalog``), the panels of "Namespaces & tables" (``header``, ``tree``,
``namespaces``, ``grid``, ``forms``, ``detail``) and the pickers of the other pages
(``picker``). The lifecycle panels (drop, deregister, rename, schema metadata, drop namespace)
are in ``components.table_actions``.
"""
