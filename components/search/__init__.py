"""The Search & tune page's query panels, one module per tab or feature (the tuning panels are
``components.tuning``); the logic is ``backend.services.search``, the query rule
``backend.rules.query_rules``. Each panel keeps its last result per table in the session
(``state.result``) so switching tabs does not lose it.

* :mod:`.tabs` - the tabs, a shared link's setting applied, the table summary, the version;
* :mod:`.settings` - the vector query settings the search and tuning panels share;
* :mod:`.share_url` - a setting as a link and back, and Copy as Python;
* :mod:`.preview`, :mod:`.vector`, :mod:`.fulltext`, :mod:`.plans` - the panels;
* :mod:`.history` - the query history and "Re-apply".
"""
