"""The REST backend: our httpx client for the Lance REST Namespace spec.

* :mod:`.client` - :class:`RestNamespaceClient`, every operation of the spec;
* :mod:`.routes` - how each operation travels (method, path, body, response);
* :mod:`.retry` - which calls are retried, backoff with jitter, the Retry-After cap;
* :mod:`.error_map` - error answers and transport failures as namespace errors;
* :mod:`.wirelog` - the wire log (an httpx transport layer) and copy-as-curl.
"""

from .client import RestNamespaceClient
from .retry import RetryPolicy, parse_retry_after
from .routes import ROUTES, Route
from .wirelog import WireEntry, WireLog, to_curl

__all__ = [
    "ROUTES",
    "RestNamespaceClient",
    "RetryPolicy",
    "Route",
    "WireEntry",
    "WireLog",
    "parse_retry_after",
    "to_curl",
]
