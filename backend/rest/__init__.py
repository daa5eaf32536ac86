"""The REST backend: our httpx client for the Lance REST Namespace spec.

* :mod:`.client` - :class:`RestNamespaceClient`, every operation of the spec;
* :mod:`.routes` - how each operation travels (method, path, body, response);
* :mod:`.retry` - which calls are retried, backoff with jitter, the Retry-After cap;
* :mod:`.error_map` - error answers and transport failures as namespace errors;
* :mod:`.wirelog` - the wire log (an httpx transport layer) and copy-as-curl.
"""

from .client import RestNamespaceClient as RestNamespaceClient
from .retry import RetryPolicy as RetryPolicy
from .retry import parse_retry_after as parse_retry_after
from .routes import ROUTES as ROUTES
from .wirelog import WireEntry as WireEntry
from .wirelog import WireLog as WireLog
from .wirelog import to_curl as to_curl
