"""The spec's generated client package is imported for its models alone, and reads as ever.

Each check runs in a fresh interpreter: what a process imports first decides it."""

from __future__ import annotations

import json
import subprocess
import sys

PUBLIC_NAMES = """
import json, sys
{first}
import lance_namespace_urllib3_client as package
loaded = "lance_namespace_urllib3_client.api" in sys.modules
names = sorted(n for n in dir(package) if not n.startswith("_"))
print(json.dumps({{"api_before": loaded, "names": names, "version": package.__version__,
                  "client": package.ApiClient.__module__}}))
"""


def run(code: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_console_imports_no_api_module_and_the_models_work() -> None:
    """The console's entry points import ``lance_namespace`` (whose models come from the
    package) without the generated client's API modules; pylance's namespace takes the spec's
    models as ever."""
    result = run(
        """
import json, sys, tempfile
import backend, components, app
from lance_namespace import CreateNamespaceRequest, ListNamespacesRequest
ns = backend.connect(tempfile.mkdtemp())
ns.create_namespace(CreateNamespaceRequest(id=["team"]))
listed = ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces
print(json.dumps({"api": sorted(m for m in sys.modules
                                if m.startswith("lance_namespace_urllib3_client.api")),
                  "listed": listed}))
"""
    )
    assert result == {"api": [], "listed": ["team"]}


def test_the_package_reads_as_the_package_imported_in_full() -> None:
    """Every public name of the package, its version and its client class are those of a
    process that imported it without the deferral; reading one runs the package's own
    ``__init__`` then."""
    plain = run(PUBLIC_NAMES.format(first=""))
    deferred = run(PUBLIC_NAMES.format(first="import backend"))
    assert plain["api_before"] is True and deferred["api_before"] is False
    assert deferred["version"] == plain["version"]
    assert deferred["client"] == plain["client"] == "lance_namespace_urllib3_client.api_client"
    assert deferred["names"] == plain["names"] and "TableApi" in plain["names"]


def test_the_api_modules_import_on_their_own_after_the_deferral() -> None:
    """The API modules import names from the package (``from lance_namespace_urllib3_client
    import rest``) while its ``__init__`` has not run: a submodule's name imports the
    submodule, not the ``__init__`` (which would import the API modules half way through)."""
    result = run(
        """
import json
import backend
import lance_namespace_urllib3_client.api as api
from lance_namespace_urllib3_client import ApiClient, Configuration
client = api.TableApi(ApiClient(Configuration(host="http://127.0.0.1:9")))
print(json.dumps({"client": type(client).__name__}))
"""
    )
    assert result == {"client": "TableApi"}
