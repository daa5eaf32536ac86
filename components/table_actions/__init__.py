"""The lifecycle panels of "Namespaces & tables", one module each: drop vs deregister
(``drop``), register (``register``), rename or move (``rename``), schema metadata
(``metadata``), side by side (``panel``), the table write they ask for (``action``), and
drop a namespace, RESTRICT or CASCADE (``drop_namespace``).
Each returns what to do; the page sends it. Data and rules: ``backend.services.lifecycle``.
"""
