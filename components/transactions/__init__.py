"""The Transactions page's parts, one module each: the batch-commit builder (``builder``, its
operations in ``operations``), describe / alter a transaction (``describe``), this session's
transactions (``history``), the namespace's batch commits (``namespace_list``) and the tabs
(``tabs``).
"""
