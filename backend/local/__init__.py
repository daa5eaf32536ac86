"""The local backend: a directory namespace (pylance's ``DirectoryNamespace``) with the
console's checks, fixes, index builds and atomic batch commits.

* :mod:`.namespace` - :class:`LocalNamespace`: delegation to pylance plus its fixes;
* :mod:`.target` - what a target path or URI means;
* :mod:`.indexes` - index builds through the dataset API;
* :mod:`.transactions` - Describe/AlterTransaction of table and batch transactions;
* :mod:`.txn_store` - where batch transaction records live;
* :mod:`.job_store` - where job records live (``backend.services.jobs``);
* :mod:`.compaction` - compaction task by task (progress, cancel, resume);
* :mod:`.batch` - BatchCommitTables, one module per protocol phase.
"""

from .namespace import LocalNamespace as LocalNamespace
from .target import normalise_target as normalise_target
