"""The spec's generated client package, imported for its models alone.

``lance_namespace`` (and through it pylance's ``lance.namespace``) imports the spec's request and
response models from ``lance_namespace_urllib3_client.models``. Importing any part of that
package first runs the package's own ``__init__``, which imports every API module of the
generated urllib3 client as well: pydantic-validated methods the console never calls (it speaks
REST through its own ``httpx`` client), some 0.55 s of CPU in each process that imports the
backend (the console's server, a notebook's kernel, a job's child process), about half of
``import backend``.

:func:`defer_api_modules` puts the package in ``sys.modules`` without running its ``__init__``:
its submodules (``.models``, ``.api``, ...) import as ever from its directory, and the first read
of a name the package itself defines (``ApiClient``, ``Configuration``, ...) or of its list of
names runs its ``__init__`` then, once, so every name reads as it would have.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import types
from typing import Any

PACKAGE = "lance_namespace_urllib3_client"


def defer_api_modules() -> None:
    """Register :data:`PACKAGE` with its ``__init__`` deferred, unless it is imported already
    or not installed as a package of its own directory."""
    if PACKAGE in sys.modules:
        return
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        return
    package = importlib.util.module_from_spec(spec)
    package.__dict__.update(_deferred_init(package, spec))
    sys.modules[PACKAGE] = package


def _deferred_init(package: types.ModuleType, spec: Any) -> dict[str, Any]:
    """The module's ``__getattr__`` and ``__dir__`` (PEP 562) until its ``__init__`` runs.
    ``__getattr__`` is called only for a name the module does not hold yet: a submodule's name
    imports the submodule (``from PACKAGE import rest`` inside the package's own modules); any
    other name runs the ``__init__`` in the module (once, whichever thread asks first), then
    reads the name. ``__dir__`` runs the ``__init__`` and lists the module's names."""
    lock = threading.Lock()

    def initialise() -> None:
        with lock:
            if package.__dict__.get("__getattr__") is __getattr__:
                del package.__dict__["__getattr__"], package.__dict__["__dir__"]
                spec.loader.exec_module(package)

    def __getattr__(name: str) -> Any:
        if not name.startswith("__") and importlib.util.find_spec(f"{PACKAGE}.{name}"):
            return importlib.import_module(f"{PACKAGE}.{name}")
        initialise()
        return object.__getattribute__(package, name)

    def __dir__() -> list[str]:
        initialise()
        return sorted(package.__dict__)

    return {"__getattr__": __getattr__, "__dir__": __dir__}
