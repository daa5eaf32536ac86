"""The Search & tune page's tuning panels, one module per tab: recall with its interval (and
more queries), the parameter sweep against a target, Build A/B on a scratch copy, and the
build parameters lance applied. The logic is ``backend.services.tuning``; the query settings
are the search panels' own (``components.search.settings``). Build A/B returns a task for the
page to start.
"""
