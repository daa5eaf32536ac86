"""The Versions page's write panels, one module each: the picker's deep links (``links``),
restore and the rebuild offer (``restore``), deletes of versions and rows (``deletes``), tags
(``tags``) and cleanup by policy (``cleanup``). Each returns what to do (a
:class:`~components.writes.Write`, a ``TagAction``, a ``CleanupPlan``); the page sends it.
Data and rules: ``backend.services.lifecycle``. Named here: what the pages call.
"""

from components.version_actions.cleanup import cleanup_write as cleanup_write
from components.version_actions.cleanup import render_cleanup as render_cleanup
from components.version_actions.deletes import delete_rows_write as delete_rows_write
from components.version_actions.deletes import delete_versions_write as delete_versions_write
from components.version_actions.deletes import render_delete_rows as render_delete_rows
from components.version_actions.links import apply_version_link as apply_version_link
from components.version_actions.links import follow_version_link as follow_version_link
from components.version_actions.restore import rebuild_write as rebuild_write
from components.version_actions.restore import render_rebuild_offer as render_rebuild_offer
from components.version_actions.restore import render_version_actions as render_version_actions
from components.version_actions.restore import restore_write as restore_write
from components.version_actions.tags import render_tags as render_tags
