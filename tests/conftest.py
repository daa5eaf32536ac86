"""Shared fixtures: real namespaces, never mocks.

``ns`` is parametrised over the two backends:
* ``local``: ``backend.connect(tmp_dir)`` (pylance DirectoryNamespace + our fixes);
* ``rest``: ``backend.connect(url)`` against ``lance.namespace.RestAdapter("dir", ..., port=0)``
  started in this process on its own tmp directory.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LANCE_LOG", "error")
os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")

import backend  # noqa: E402


class RestServer:
    """A real Lance REST namespace server on an ephemeral loopback port."""

    def __init__(self, root: Path):
        from lance.namespace import RestAdapter

        self.root = root
        self.adapter = RestAdapter("dir", {"root": str(root)}, host="127.0.0.1", port=0)
        self.adapter.start()
        self.url = f"http://127.0.0.1:{self.adapter.port}"

    def stop(self) -> None:
        self.adapter.stop()


@pytest.fixture
def rest_server(tmp_path: Path) -> Iterator[RestServer]:
    root = tmp_path / "rest-root"
    root.mkdir()
    server = RestServer(root)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def local_root(tmp_path: Path) -> Path:
    root = tmp_path / "local-root"
    root.mkdir()
    return root


@pytest.fixture(params=["local", "rest"])
def backend_kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def ns(backend_kind: str, tmp_path: Path):
    """A connected namespace of each backend kind, on an empty root."""
    if backend_kind == "local":
        root = tmp_path / "local-root"
        root.mkdir()
        yield backend.connect(str(root))
    else:
        root = tmp_path / "rest-root"
        root.mkdir()
        server = RestServer(root)
        try:
            client = backend.connect(server.url)
            yield client
            close = getattr(client, "close", None)
            if close:
                close()
        finally:
            server.stop()
