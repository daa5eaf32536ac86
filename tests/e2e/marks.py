"""Which backends a browser test runs on.

A browser test runs on the local backend (``backend_kind`` is ``local`` in this directory). It
runs on the REST backend as well, marked :data:`ON_BOTH_BACKENDS`, where the page shows or does
something different over REST: what the server's profile does not offer (batch commit,
cascade, fragment stats, rename), a write whose outcome is the server's (index builds, drop and
deregister, import and export, transactions), the search and tuning figures (each checked
against an independent computation on every backend), and every page once with the demo table.
A test of the page alone (validation, deep links, read-only switches, layout) runs once: its
calls are the same on both backends, and tests/backend covers each call on both.
tests/e2e/test_remote.py names its own backends, object stores included.
"""

import pytest

ON_BOTH_BACKENDS = pytest.mark.parametrize("backend_kind", ["local", "rest"])
