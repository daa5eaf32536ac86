"""Versions of a table, one module per part: cached reads (``reads``), the listing and
timeline (``listing``), one version's details (``details``), the comparison of two
(``compare``), the delete form (``delete``) and the "Manage versions" tabs (``tabs``); data
from ``backend.services.versions``.
"""
