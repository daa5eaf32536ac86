"""The console's frame: its pages in navigation order, its page settings, and the chrome drawn
around every page (navigation, connection sidebar, health banner). One table for the router
(app/main.py) and for the page benchmark's frame (benchmarks/_ui_bench_app.py)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from components import audit_view, auth, connection_writes, feedback, polling, state, writes
from components.sidebar import render_connection_sidebar, render_health_banner
from components.tables.selection import send_owed_url

VIEWS = Path(__file__).parent / "views"
PAGE_TITLE = "Lance Namespace Console"
PAGE_ICON = ":material/database:"


@dataclass(frozen=True)
class Route:
    script: str  # in app/views/
    title: str
    icon: str
    url_path: str


ROUTES = (
    Route("tables.py", "Namespaces & tables", ":material/folder_open:", "tables"),
    Route("versions.py", "Versions", ":material/history:", "versions"),
    Route("indexes.py", "Indexes", ":material/manage_search:", "indexes"),
    Route("maintenance.py", "Maintenance", ":material/build:", "maintenance"),
    Route("search.py", "Search & tune", ":material/travel_explore:", "search"),
    Route("transfer.py", "Import & export", ":material/swap_vert:", "transfer"),
    Route("jobs.py", "Jobs", ":material/work_history:", "jobs"),
    Route("transactions.py", "Transactions", ":material/receipt_long:", "transactions"),
    Route("inspector.py", "HTTP inspector", ":material/lan:", "inspector"),
    Route("audit.py", "Audit", ":material/policy:", "audit"),
)
DEFAULT_ROUTE = ROUTES[0]  # what "/" opens
AUDIT_PATH = "audit"  # offered only to whom may see the audit log (``audit_view.denial``)
HOME = "home"  # the hidden page served at "/": it forwards to DEFAULT_ROUTE's own path
SIDEBAR = "sidebar"  # where a connection write's result is said (``state.notice``), not a page


def _home() -> None:
    """Never drawn: :func:`render_frame` forwards "/" to the default route first."""


def console_pages(view: Callable[[Route], Callable[[], None]] | None = None) -> list[Any]:
    """An ``st.Page`` per route, each at its own path (``/tables`` too), and a hidden default
    page for "/" that forwards to the first route (Streamlit serves its default page at "/"
    only). ``view`` (the benchmark's frame) gives each route a function to run instead of
    its script."""
    home = st.Page(
        _home, title=DEFAULT_ROUTE.title, url_path=HOME, default=True, visibility="hidden"
    )
    return [
        home,
        *(
            st.Page(
                VIEWS / route.script if view is None else view(route),
                title=route.title,
                icon=route.icon,
                url_path=route.url_path,
            )
            for route in ROUTES
        ),
    ]


def perform_connection_write() -> None:
    """The write the connection sidebar asked for (save or forget a saved connection, create
    a missing directory), performed here (``writes.perform``: a failure shown on the page, a
    success said in the sidebar), before the sidebar renders what it changed."""
    request = connection_writes.pending_write()
    if request is None:
        return
    refused = connection_writes.refusal(request)
    if refused:
        feedback.show("error", f"{request.write.action} refused: {refused}.")
        return
    writes.perform(
        request.write,
        page=SIDEBAR,
        reset=False,
        rerun=False,
        then=request.finish,
        say=state.notice,
    )


_frozen_modules = 0  # how many modules were loaded at the last freeze_loaded_code


def freeze_loaded_code() -> bool:
    """Once modules were loaded since the last call: a full garbage collection, then every
    object alive moved out of the collector's reach (``gc.freeze``). Returns whether it froze.

    The code of the console and its libraries (Streamlit, pandas, pyarrow, lance: some 250,000
    objects) lives as long as the process. A full collection walked all of it, 100-400 ms on
    a loaded machine, and one fell inside most page loads (a page's run allocates enough to
    set one off). Frozen, a full collection walks only what was made since: 10-30 ms. The
    first run of a page imports its modules and the next run freezes them; that run pays one
    full collection (so no garbage is frozen). What is made later (caches, sessions) is
    collected as before."""
    global _frozen_modules
    loaded = len(sys.modules)
    if loaded <= _frozen_modules:
        return False
    _frozen_modules = loaded
    gc.collect()
    gc.freeze()
    return True


def render_frame(pages: list[Any]) -> Any:
    """The loaded code frozen (:func:`freeze_loaded_code`), the run's actor worked out once
    from here on (``auth.begin_run``), page settings, the sign-in gate (a
    visitor who is not signed in sees only the sign-in page; a user without a role only the
    no-access page), the navigation over ``pages`` (the Audit page only for whom may see it:
    admins, never anonymous visitors of an exposed console), the write the sidebar asked for,
    the connection sidebar with who is signed in, and the health banner; returns the page to
    run."""
    freeze_loaded_code()
    auth.begin_run()
    st.set_page_config(page_title=PAGE_TITLE, page_icon=PAGE_ICON, layout="wide")
    auth.render_sign_in_gate()
    auth.render_no_access(auth.current_actor())  # a user without a role: nothing is read
    if audit_view.denial(auth.current_actor()) is not None:
        pages = [p for p in pages if p.url_path != AUDIT_PATH]
    page = st.navigation(pages)
    if page.url_path == "":  # "/": the default route at its own path, with the link's query
        target = next(p for p in pages if p.url_path == DEFAULT_ROUTE.url_path)
        st.switch_page(
            target, query_params={k: st.query_params.get_all(k) for k in st.query_params}
        )
    perform_connection_write()
    render_connection_sidebar()
    auth.render_user_sidebar(auth.current_actor())
    render_health_banner()
    return page


def run_frame(pages: list[Any]) -> None:
    """:func:`render_frame`, then the page it returns; the run's actor is forgotten after
    the page, however it ends (``auth.end_run``); then the page rerun a polling fragment asked
    for within the run, if any (``polling.run_page``)."""

    def run() -> None:
        try:
            render_frame(pages).run()
        finally:
            auth.end_run()
            send_owed_url()  # a table picked in a callback, if no URL change told the browser

    polling.run_page(run)


__all__ = [
    "AUDIT_PATH",
    "DEFAULT_ROUTE",
    "HOME",
    "ROUTES",
    "Route",
    "console_pages",
    "freeze_loaded_code",
    "perform_connection_write",
    "render_frame",
    "run_frame",
]
