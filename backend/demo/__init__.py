"""The demo: its data and the tools a presenter switches on to show what the console guards
against.

* :mod:`.data` - the demo namespace (standard-library docstrings as Lance tables), built by
  the launcher (``lance-console --demo``) and the tests;
* :mod:`.embedding` - the feature hashing that made the demo's vectors, which search runs to
  embed a typed query (numpy only, below every other layer);
* :mod:`.txn_faults` - a batch commit that fails on purpose (an injected error, or the
  committing process killed during apply) and a second writer racing a batch.
* :mod:`.txn_guide` - the transaction demo scripted (stage, audit, publish, fail, recover, a
  writer refused) with a reader watching each commit: the Transactions page's guided demo and
  ``notebooks/transactions.ipynb``.

Every tool is off unless called, admin only (``backend.access.DEMO_OPS``) and audited.
"""
