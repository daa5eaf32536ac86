"""Demo tools: things a presenter switches on to show what the console guards against.

* :mod:`.txn_faults` - a batch commit that fails on purpose (an injected error, or the
  committing process killed during apply) and a second writer racing a batch.
* :mod:`.txn_guide` - the transaction demo scripted (stage, audit, publish, fail, recover, a
  writer refused) with a reader watching each commit: the Transactions page's guided demo and
  ``notebooks/transactions.ipynb``.

Every tool is off unless called, admin only (``backend.access.DEMO_OPS``) and audited.
"""
