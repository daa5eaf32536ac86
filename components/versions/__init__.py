"""Versions of a table, one module per part: cached reads (``reads``), the listing and
timeline (``listing``), one version's details (``details``), the comparison of two
(``compare``), the delete form (``delete``) and the "Manage versions" tabs (``tabs``); data
from ``backend.services.versions``. Named here: what the pages call; components import the
module they need.
"""

from components.versions.compare import render_compare_section as render_compare_section
from components.versions.delete import render_delete_form as render_delete_form
from components.versions.details import render_details_section as render_details_section
from components.versions.listing import render_listing as render_listing
from components.versions.listing import render_summary as render_summary
from components.versions.reads import listed_latest as listed_latest
from components.versions.reads import newest_versions as newest_versions
from components.versions.reads import versions_frame as versions_frame
from components.versions.tabs import manage_tabs as manage_tabs
