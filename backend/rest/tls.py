"""The TLS settings the REST clients of a process share.

httpx builds an ``ssl.SSLContext`` for every transport it is not given one for, loading the
whole CA bundle each time: some 40 ms of CPU per ``RestNamespaceClient``, whatever the
server's scheme. The clients of a process ask for the same few settings (verify with the
default CA bundle, or not at all), so each is built once and shared: an ``SSLContext`` may
serve many connections at once, and none of its settings changes after it is built here.

A CA bundle named by path (``verify="/path/ca.pem"``) is read anew for each client, so a
bundle replaced on disk takes effect at the next connection.
"""

from __future__ import annotations

import functools
import os
import ssl

import httpx

# Where httpx itself looks for another CA bundle than certifi's (its ``trust_env``).
_CA_ENV = ("SSL_CERT_FILE", "SSL_CERT_DIR")


def ssl_context(verify: bool | str) -> ssl.SSLContext | str:
    """What a client's transport is given for ``verify``: a context shared by the process for
    ``True`` (under the CA variables in force) and ``False``; a path as it is."""
    if isinstance(verify, bool):
        return _shared(verify, tuple(os.environ.get(name) for name in _CA_ENV))
    return verify


@functools.lru_cache(maxsize=8)
def _shared(verify: bool, ca_env: tuple[str | None, ...]) -> ssl.SSLContext:
    del ca_env  # part of the cache key: httpx reads the variables as it builds the context
    return httpx.create_ssl_context(verify=verify)
