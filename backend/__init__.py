"""Lance Namespace Console operations module.

``connect(target, **options)`` returns a ``lance_namespace.LanceNamespace``:

* a filesystem path, ``file://`` URI, ``memory://`` or an object-store URI (``s3://`` with
  ``storage_options``) -> the local backend (``backend.local``);
* an ``http://`` or ``https://`` URL -> the REST backend (``backend.rest``, our httpx client).

Rule modules, each the one place of its rule: ``ids``, ``index_rules``, ``alter_actions``,
``batch_rules``, ``request_rules``, ``properties``, ``version_ranges``, ``locations``,
``redaction``, ``arrow_ipc``, ``connect_options``. UI-facing services: ``services``.

This package never imports streamlit: notebooks, scripts, tests and the UI share it as is.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("LANCE_LOG", "error")
os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")

from backend.spec.client_package import defer_api_modules  # noqa: E402

defer_api_modules()  # before the first import of lance_namespace, which imports the package

from lance_namespace import LanceNamespace  # noqa: E402

from backend.rules.connect_options import check_target, is_rest_target, target_kind  # noqa: E402

from . import errors, redaction  # noqa: E402
from .capabilities import BackendCapabilities  # noqa: E402
from .errors import (  # noqa: E402
    NamespaceConnectionError,
    NamespaceTimeoutError,
    describe_error,
)
from .write_preflight import commit_batch, preflight  # noqa: E402


def _in_kernel() -> bool:
    """Whether this process is a Jupyter kernel: IPython's running shell has a kernel. A
    process that merely imported ipykernel (a test run, a tool) is not one."""
    if "ipykernel" not in sys.modules:
        return False
    get_ipython = getattr(sys.modules.get("IPython"), "get_ipython", None)
    shell = get_ipython() if get_ipython is not None else None
    return getattr(shell, "kernel", None) is not None


def connect(
    target: str | os.PathLike[str], *, audit: bool | None = None, **options: Any
) -> LanceNamespace:
    """Open a Lance Namespace.

    Options (all optional): ``api_key``, ``auth_token``, ``delimiter`` (default ``$``),
    ``headers`` (dict) or ``header.<Name>`` entries, ``timeout`` (seconds), ``max_retries``;
    for the local backend ``storage_options`` (dict) or ``storage.<key>`` entries, passed to
    pylance (``connect_options.fold_properties``). A target that is not text (``None``...) is
    ``InvalidInputError``.

    ``audit``: record every write in the audit log (``backend.audit``) as the OS user, through
    the write gate (``backend.gate``). The default (``None``) does so inside a Jupyter kernel,
    so that notebook use is recorded; scripts and tests opt in.
    """
    target = check_target(target)
    ns: LanceNamespace
    if target_kind(target) == "rest":
        from .rest import RestNamespaceClient

        ns = RestNamespaceClient(target, **options)
    else:
        from .local import LocalNamespace

        ns = LocalNamespace(target, **options)
    if audit is None:
        audit = _in_kernel()
    if not audit:
        return ns
    from .audit import AuditLog
    from .gate import gate

    name = redaction.display_target(target)
    return gate(ns, connection=name, log=AuditLog())  # type: ignore[return-value]


def capabilities(ns: LanceNamespace, *, probe: bool = False) -> BackendCapabilities:
    """What a connected backend can do (honoured index parameters, progress events, batch
    commit...). Nothing is sent to find out (``probe`` is accepted and ignored: capabilities
    are never probed with writes; see ``backend.capabilities``)."""
    caps = getattr(ns, "capabilities", None)
    if callable(caps):
        return caps(probe=probe)
    return BackendCapabilities.unknown()


def missing_local_directory(target: str | os.PathLike[str]) -> Path | None:
    """The directory a local target names when it does not exist yet (``None``: it exists,
    or the target is not a local directory)."""
    from .local import normalise_target

    try:
        _root, _dir, path = normalise_target(target)
    except errors.LanceNamespaceError:
        return None
    return path if path is not None and not path.exists() else None


__all__ = [
    "BackendCapabilities",
    "LanceNamespace",
    "NamespaceConnectionError",
    "NamespaceTimeoutError",
    "capabilities",
    "commit_batch",
    "connect",
    "describe_error",
    "errors",
    "is_rest_target",
    "missing_local_directory",
    "preflight",
    "target_kind",
]
