"""The Versions page's write panels, one module each: the picker's deep links (``links``),
restore and the rebuild offer (``restore``), deletes of versions and rows (``deletes``), tags
(``tags``) and cleanup by policy (``cleanup``). Each returns what to do (a
:class:`~components.writes.Write`, a ``TagAction``, a ``CleanupPlan``); the page sends it.
Data and rules: ``backend.services.lifecycle``.
"""
