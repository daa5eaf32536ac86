"""Atomic BatchCommitTables and batch transaction records on the local backend.

A mix of DeclareTable, CreateTableVersion, DeleteTableVersions and DeregisterTable operations,
across tables and nested namespaces, all or none. The protocol's phases, one module each:

* :mod:`.validate` - the batch's rules and the local checks, into a typed :mod:`.plan`;
* :mod:`.lock` - the namespace's writer lock (``flock``), shared with single writes;
* :mod:`.catalog` - ``__manifest`` and ``_versions`` as the protocol reads and writes them;
* :mod:`.apply` - apply and undo, each step undoable from the journal; memory roots;
* :mod:`.records` - the transaction record (its flip to SUCCEEDED is the commit point) and
  Describe/AlterTransaction of batches;
* :mod:`.recovery` - batches a dead process left behind; the guard of single writes;
* :mod:`.commit` - the phases in order.

Details, recovery rules and limits: ``docs/batch-commit.md``.
"""

from .catalog import manifest_name as manifest_name
from .catalog import manifest_version as manifest_version
from .catalog import parse_manifest_name as parse_manifest_name
from .commit import commit_batch as commit_batch
from .context import context as context
from .faults import set_fault_hook as set_fault_hook
from .records import is_batch_transaction_id as is_batch_transaction_id
from .recovery import guard_single_op as guard_single_op
from .recovery import recover as recover
from .recovery import try_recover as try_recover
