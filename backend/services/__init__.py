"""Services for the UI (and notebooks): plain functions over any ``LanceNamespace`` that shape
answers for screens. No streamlit here.

* :mod:`.namespaces` - namespaces and tables: names, details, create, declare, deregister;
* :mod:`.versions` - a table's versions, the operation behind each, compare, delete ranges;
* :mod:`.index_overview` - indexes joined with their stats, coverage across versions;
* :mod:`.jobs` - long operations as jobs recorded with the namespace (every console sees them):
  the machinery (records, states, executors); each kind registers beside its work;
* :mod:`.build_jobs` - index builds in background threads, with progress;
* :mod:`.batch_builder` - the batch-commit builder and transaction describe/alter.
* :mod:`.staged_changes` - staged changes (write, audit, publish) and their audit reads;
* :mod:`.table_watch` - a reader polling tables as consistent snapshots (the reader panel).
"""

# The job kinds defined beside their work (an index build, a namespace's maintenance plan, one
# table's compaction, index optimization and cleanup, a build comparison) register themselves with ``jobs`` when imported: imported here, with the package, so that
# every process that uses jobs knows every kind.
from . import build_jobs  # noqa: E402, F401
from .maintenance import plan_jobs, table_jobs  # noqa: E402, F401
from .tuning import ab_jobs  # noqa: E402, F401
