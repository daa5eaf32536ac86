"""AppTest helpers shared by every page test.

* ``ui_root`` - a fresh copy of a small real local namespace (built once per session):

  ========================  ===========================================================
  namespace ``sales``        tables ``orders`` (3 versions: Overwrite, Append, Delete),
                             ``customers`` (1 version), ``pending`` (declared only,
                             properties ``owner=ops``)
  namespace ``sales/eu``     table ``invoices`` (1 version, has a vector column)
  namespace ``hr``           table ``staff`` (1 version)
  namespace ``bulk``         55 declared-only tables ``t000`` .. ``t054`` (paging)
  namespace ``logs``         table ``events`` with 60 versions (version paging)
  ========================  ===========================================================

* ``ui_env`` - points ``LANCE_CONSOLE_TARGET`` at ``ui_root`` and ``LANCE_CONSOLE_CONFIG`` at a
  tmp file (tests never touch ``~/.config``), clears streamlit caches; returns ``ui_root``.
* ``make_app(page=None, *, query_params=None)`` (fixture returning a factory) - an AppTest of
  ``app/main.py``, already run, switched to ``page`` (``"tables"``, ``"versions"``,
  ``"indexes"``, ``"transactions"``, ``"inspector"`` or a ``views/x.py`` path).
* :func:`open_page` - switch an existing AppTest to another page and run it.
* :func:`texts` - every visible text of the page as a reader sees it (the markdown escapes of
  ``components.feedback.as_text`` undone), for ``in`` assertions; :func:`sources` - the same
  elements' markdown sources, as the page sent them.
* :func:`alerts` - the texts of the page's ``error`` / ``warning`` / ``info`` / ``success`` boxes.

Widgets bound to the URL (``bind="query-params"``) are written to the URL by the browser, which
AppTest has not: tests read a widget's binding from ``proto.query_param_key`` and check that a
URL given before the first run (a link, a reload) sets the widget.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from lance_namespace import CreateNamespaceRequest

import backend
from tests.support import RewritingProxy, ipc_stream_bytes

os.environ.setdefault("LANCE_LOG", "error")
os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")

REPO = Path(__file__).resolve().parents[2]
MAIN = REPO / "app" / "main.py"
TIMEOUT = 30  # the machine is slow and shared: be generous

PAGES = {
    "tables": "views/tables.py",
    "versions": "views/versions.py",
    "indexes": "views/indexes.py",
    "jobs": "views/jobs.py",
    "transactions": "views/transactions.py",
    "inspector": "views/inspector.py",
    "transfer": "views/transfer.py",
}


def build_sample_namespace(root: Path) -> Path:
    """Create the sample namespace described in the module docstring under ``root``."""
    import lance
    from lance_namespace import CreateNamespaceRequest, CreateTableRequest, DeclareTableRequest

    root.mkdir(parents=True, exist_ok=True)
    ns = backend.connect(str(root))
    for path in (["sales"], ["sales", "eu"], ["hr"], ["bulk"], ["logs"]):
        ns.create_namespace(CreateNamespaceRequest(id=path))

    orders = pa.table({"id": [1, 2, 3], "item": ["pen", "ink", "pad"]})
    resp = ns.create_table(CreateTableRequest(id=["sales", "orders"]), ipc_stream_bytes(orders))
    ds = lance.dataset(resp.location)
    ds.insert(pa.table({"id": [4, 5], "item": ["cap", "nib"]}))  # v2 Append
    ds.delete("id = 1")  # v3 Delete

    customers = pa.table({"id": [1, 2], "name": ["ann", "bob"], "vip": [True, False]})
    ns.create_table(CreateTableRequest(id=["sales", "customers"]), ipc_stream_bytes(customers))
    ns.declare_table(DeclareTableRequest(id=["sales", "pending"], properties={"owner": "ops"}))

    vec = pa.FixedSizeListArray.from_arrays(pa.array([0.1, 0.2, 0.3, 0.4], pa.float32()), 2)
    invoices = pa.table({"id": [1, 2], "amount": [9.5, 3.0], "embedding": vec})
    ns.create_table(CreateTableRequest(id=["sales", "eu", "invoices"]), ipc_stream_bytes(invoices))

    staff = pa.table({"who": ["x"]})
    ns.create_table(CreateTableRequest(id=["hr", "staff"]), ipc_stream_bytes(staff))

    for i in range(55):
        ns.declare_table(DeclareTableRequest(id=["bulk", f"t{i:03d}"]))

    events = pa.table({"n": [0]})
    resp = ns.create_table(CreateTableRequest(id=["logs", "events"]), ipc_stream_bytes(events))
    ds = lance.dataset(resp.location)
    for i in range(1, 60):
        ds.insert(pa.table({"n": [i]}))
    return root


@pytest.fixture(scope="session")
def sample_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample namespace, built once per test session (copied per test)."""
    return build_sample_namespace(tmp_path_factory.mktemp("ui-template") / "root")


@pytest.fixture
def ui_root(sample_template: Path, tmp_path: Path) -> Path:
    """A private copy of the sample namespace for one test."""
    root = tmp_path / "ui-root"
    shutil.copytree(sample_template, root)
    return root


@pytest.fixture
def ui_env(ui_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Environment for an AppTest on ``ui_root``; yields the root."""
    import streamlit as st

    monkeypatch.setenv("LANCE_CONSOLE_TARGET", str(ui_root))
    monkeypatch.setenv("LANCE_CONSOLE_CONFIG", str(tmp_path / "connections.toml"))
    monkeypatch.delenv("LANCE_CONSOLE_READ_ONLY", raising=False)
    monkeypatch.chdir(tmp_path)  # a stray relative path never lands in the repo
    st.cache_data.clear()
    st.cache_resource.clear()
    yield ui_root
    st.cache_data.clear()
    st.cache_resource.clear()


def open_page(at: Any, page: str) -> Any:
    """Switch ``at`` to ``page`` (short name or ``views/x.py``) and run it."""
    at.switch_page(PAGES.get(page, page))
    return at.run()


def new_app() -> Any:
    """An AppTest for ``app/main.py`` (not yet run)."""
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(str(MAIN), default_timeout=TIMEOUT)


@pytest.fixture
def make_app(ui_env: Path) -> Callable[..., Any]:
    """Factory: ``make_app(page=None, *, query_params=None)`` -> AppTest, already run."""

    def factory(page: str | None = None, *, query_params: dict[str, Any] | None = None) -> Any:
        at = new_app()
        for key, value in (query_params or {}).items():
            at.query_params[key] = value
        at.run()
        if page and page != "tables":
            open_page(at, page)
        return at

    return factory


_ESCAPED = re.compile(r"\\(.)", re.DOTALL)
_MARKDOWN_KINDS = (
    "title",
    "header",
    "subheader",
    "markdown",
    "caption",
    "error",
    "warning",
    "info",
    "success",
)


def plain(markdown: str) -> str:
    """What a reader sees of ``feedback.as_text`` output: escapes and hard breaks undone."""
    return _ESCAPED.sub(r"\1", str(markdown).replace("\u200b", "")).replace("  \n", "\n")


_FIGURE = re.compile(r"^(?P<label>.+?) \*\*(?P<value>.*)\*\*$", re.DOTALL)


def figures(at: Any) -> dict[str, str]:
    """Every labelled figure of the last run, as shown: ``st.metric``s and the lines of
    ``components.common.render_figures`` (``Label **value** · Label **value**``)."""
    from components.common import FIGURE_SEPARATOR

    found = {m.label: m.value for m in at.metric}
    for el in at.markdown:
        parts = [_FIGURE.match(part) for part in str(el.value).split(FIGURE_SEPARATOR)]
        if parts and all(parts):
            found.update({plain(m["label"]): plain(m["value"]) for m in parts if m})
    return found


def sources(at: Any) -> list[str]:
    """The markdown source of every markdown-like element (alerts included) of the last run."""
    return [str(el.value) for kind in _MARKDOWN_KINDS for el in getattr(at, kind)]


def paths_shown(at: Any) -> list[str]:
    """Paths and locations the page shows in monospace (``components.common.render_path``:
    one Markdown code span), as typed."""
    out = []
    for m in at.markdown:
        value = str(m.value)
        fence = len(value) - len(value.lstrip("`"))
        if fence and value.endswith("`" * fence) and len(value) > 2 * fence:
            inner = value[fence:-fence]
            if inner.startswith(" ") and inner.endswith(" ") and inner.strip():
                inner = inner[1:-1]
            out.append(inner)
    return out


def texts(at: Any) -> str:
    """All visible text of the last run (markdown, captions, alerts, titles, code), joined;
    markdown escapes undone (code is shown literally and kept as is)."""
    parts = [plain(s) for s in sources(at)]
    parts += [str(el.value) for kind in ("code", "text") for el in getattr(at, kind)]
    return "\n".join(parts)


def alerts(at: Any, kind: str) -> list[str]:
    """The texts of the ``kind`` boxes (``error`` | ``warning`` | ``info`` | ``success``)."""
    return [plain(el.value) for el in getattr(at, kind)]


def widget(elements: Any, prefix: str, suffix: str = "") -> Any:
    """The one widget whose key starts with ``prefix`` and ends with ``suffix``."""
    found = [e for e in elements if e.key and e.key.startswith(prefix) and e.key.endswith(suffix)]
    assert len(found) == 1, [e.key for e in elements]
    return found[0]


def button(at: Any, label: str) -> Any:
    """The one button labelled ``label``."""
    found = [b for b in at.button if plain(b.label) == label]
    assert len(found) == 1, [b.label for b in at.button]
    return found[0]


def assert_no_exception(at: Any) -> None:
    """Fail with the exception text when the script raised."""
    assert not at.exception, [e.value for e in at.exception]


# -- sign-in and roles (AppTest seeds st.user and st.secrets) --------------------------------
AUTH = {
    "redirect_uri": "http://127.0.0.1:8501/oauth2callback",
    "cookie_secret": "ui-test-cookie-secret-0123456789",
    "client_id": "lance-console",
    "client_secret": "ui-test-client-secret",
    "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
}


@pytest.fixture
def roles(ui_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "roles.toml"
    path.write_text(
        'default = "viewer"\n[users]\n"ada@example.com" = "admin"\n"ed@example.com" = "editor"\n'
    )
    monkeypatch.setenv("LANCE_CONSOLE_ROLES", str(path))
    monkeypatch.setenv("LANCE_CONSOLE_AUDIT_DIR", str(tmp_path / "audit"))
    return tmp_path / "audit"


def app_as(
    email: str | None,
    *,
    query: dict[str, str] | None = None,
    verified: bool = True,
    auth: dict[str, Any] | None = None,
) -> Any:
    """An AppTest signed in as ``email`` (``None``: a visitor) with ``email_verified`` set to
    ``verified``, under the sign-in settings ``auth`` (default :data:`AUTH`)."""
    at = new_app()
    at.secrets["auth"] = AUTH if auth is None else auth
    at.user = (
        {"is_logged_in": True, "email": email, "sub": email, "email_verified": verified}
        if email
        else {"is_logged_in": False}
    )
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    assert_no_exception(at)
    return at


def displayed(grid: Any) -> Any:
    """A grid's data as the grid draws it: every missing cell as its ``placeholder``
    (Streamlit's own is "None"), and where the grid has Styler display values (the sizes of
    ``components.common.dataframe(..., sizes=...)``) the cells the browser draws them in: a
    text column's, and a number column's without a ``format`` of its own (Streamlit's rule;
    a column's format, a progress bar, a date or a checkbox draw the value itself)."""
    import pyarrow as pa

    frame = grid.value
    placeholder = grid.proto.placeholder if grid.proto.HasField("placeholder") else "None"
    shown = frame.astype(object)
    if grid.proto.arrow_data.HasField("styler") and grid.proto.arrow_data.styler.display_values:
        drawn = pa.ipc.open_stream(grid.proto.arrow_data.styler.display_values).read_pandas()
        drawn.index = shown.index
        config = json.loads(grid.proto.columns or "{}")
        for column in shown.columns:
            kind = (config.get(column) or {}).get("type_config") or {}
            if kind.get("type") in (None, "text", "number") and not kind.get("format"):
                shown[column] = drawn[column].astype(object)
    return shown.where(frame.notna(), placeholder)


# -- connections: the session's, the sidebar's and the connect dialog's tests ------------------
def connect_form(at, target: str, *, n: int = 0, **fields) -> None:
    """Open the "Connect to…" dialog (if closed), fill it in, submit."""
    if f"conn.form{n}.target" not in [t.key for t in at.text_input]:
        at.button(key="conn.open").click().run()
    at.text_input(key=f"conn.form{n}.target").input(target)
    for name, value in fields.items():
        if isinstance(value, bool):
            at.checkbox(key=f"conn.form{n}.{name}").set_value(value)
        else:
            at.text_input(key=f"conn.form{n}.{name}").input(value)
    at.button(key=f"conn.form{n}.submit").click().run()


def other_root(tmp_path: Path) -> Path:
    root = tmp_path / "other-root"
    root.mkdir()
    backend.connect(str(root)).create_namespace(CreateNamespaceRequest(id=["elsewhere"]))
    return root


def save_config(tmp_path: Path, text: str) -> None:
    (tmp_path / "connections.toml").write_text(text)


def offered(at) -> list[str]:
    """The names of the connections the picker offers (whatever else its labels say)."""
    return [o.split(" (")[0] for o in at.selectbox(key="conn").options]


def namespace_buttons(at) -> set[str]:
    return {
        b.key[len("tables.ns.open.") :]
        for b in at.button
        if b.key and b.key.startswith("tables.ns.open.")
    }


@pytest.fixture
def busy_server() -> Iterator[tuple[str, list[str]]]:
    """A server on 127.0.0.1 that answers every request 503 with an error body and no spec
    code (so the status decides: ServiceUnavailable) and ``Retry-After: 0``; yields its URL
    and the paths it was asked for."""
    from tests.support import answering_server

    body = b'{"error": "the server is busy"}'
    with answering_server(503, body, {"Retry-After": "0"}) as (port, asked):
        yield f"http://127.0.0.1:{port}", asked


@contextlib.contextmanager
def rest_target_rewritten(
    root: Path, monkeypatch: pytest.MonkeyPatch, rewrites: dict[str, Any]
) -> Iterator[str]:
    """The console's target: a real REST server on ``root`` behind a proxy that rewrites its
    answers (``tests.support.RewritingProxy``: route suffix -> rewrite); yields the proxy's
    URL, both stopped afterwards."""
    from tests.conftest import RestServer

    server = RestServer(root)
    try:
        proxy = RewritingProxy(server.url, rewrites)
        try:
            monkeypatch.setenv("LANCE_CONSOLE_TARGET", proxy.url)
            yield proxy.url
        finally:
            proxy.stop()
    finally:
        server.stop()
