"""The Indexes page's parts, one module each: cached reads (``reads``), the index list and lag
hint (``listing``), the create panel (``create``, its type's fields in ``fields``), builds in
progress (``builds``), the selected index and drop form (``selected``), the statistics charts
(``statistics``), maintenance (``maintenance``) and the tabs (``tabs``). Named here: what the
pages call; components import the module they need.
"""

from components.indexes.builds import render_build_jobs as render_build_jobs
from components.indexes.create import capabilities_caption as capabilities_caption
from components.indexes.create import render_create_tab as render_create_tab
from components.indexes.listing import render_index_table as render_index_table
from components.indexes.listing import render_lag_warning as render_lag_warning
from components.indexes.maintenance import render_maintenance as render_maintenance
from components.indexes.reads import index_overview as index_overview
from components.indexes.selected import drop_write as drop_write
from components.indexes.selected import render_selected_tab as render_selected_tab
from components.indexes.statistics import render_statistics as render_statistics
from components.indexes.tabs import open_tabs as open_tabs
