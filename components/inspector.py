"""The HTTP inspector's pieces: the exchanges of the REST client's wire log, newest first,
one in detail (headers, bodies), and copy-as-curl. Everything shown is redacted by the wire
log itself (``backend.rest.wirelog``)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pandas as pd
import streamlit as st

from backend.rest import WireEntry, WireLog, to_curl
from backend.text import plural
from components import feedback, state
from components.common import dataframe, render_json


def url_path(url: str) -> str:
    """The path of ``url``: the operation and the object it addresses, what differs between
    the exchanges of one server (its address is the connection's; the query and the whole URL
    are in the exchange's detail)."""
    parts = urlsplit(url or "")
    if not parts.scheme:
        return url or ""
    return parts.path or "/"


def exchanges_frame(entries: list[WireEntry]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "#": i,
                "time": pd.Timestamp(e.started_at, unit="s", tz="UTC"),
                "operation": e.op,
                "method": e.method,
                "url": e.url,
                "path": url_path(e.url),
                "status": e.status,
                "elapsed ms": round(float(e.elapsed_ms or 0.0), 1),
                "error": e.error or "",
            }
            for i, e in enumerate(entries)
        ]
    )


def render_exchange(entry: WireEntry) -> None:
    feedback.show(
        "success" if entry.ok else "error",
        f"{entry.method} {entry.url} → {entry.status or 'no response'} in {entry.elapsed_ms:.1f} ms"
        + (f" · {entry.error}" if entry.error else ""),
    )
    req_col, resp_col = st.columns(2)
    for col, side, headers, body in (
        (req_col, "Request", entry.request_headers, entry.request_body),
        (resp_col, "Response", entry.response_headers, entry.response_body),
    ):
        with col:
            st.caption(side)
            render_json(headers, key_prefix=f"{state.Insp.DETAIL}.{side}.h", label="Headers")
            if body is None:
                st.caption(f"No {side.lower()} body.")
            else:
                render_json(
                    body, key_prefix=f"{state.Insp.DETAIL}.{side}.b", label="Body", expanded=True
                )
    st.caption("Copy as curl (secrets come from \\$LANCE_API_KEY / \\$LANCE_AUTH_TOKEN)")
    st.code(to_curl(entry), language="bash", wrap_lines=True)


@st.fragment
def render_inspector(wire_log: WireLog) -> None:
    """The exchanges (refresh and clear without rerunning the page), then one in detail."""
    entries = list(reversed(wire_log.entries()))
    c1, c2, c3 = st.columns([1, 1, 4], vertical_alignment="center")
    c1.button("Refresh", icon=":material/refresh:", key=state.Insp.REFRESH)
    c2.button(
        "Clear", icon=":material/delete_sweep:", key=state.Insp.CLEAR, on_click=wire_log.clear
    )
    c3.caption(
        f"{plural(len(entries), 'recent exchange')}, newest first. Secret headers, query "
        "parameters and JSON values are redacted."
    )
    if not entries:
        st.info("No requests yet: browse another page, then come back.")
        return
    # Short columns first, the request's path last (the server's address is the same on every
    # row; the query and the whole URL are in the exchange below); the operation's full name
    # fits. Every column fits 1440 px.
    dataframe(
        exchanges_frame(entries),
        hide_index=True,
        key=state.Insp.TABLE,
        column_order=[
            "#",
            "time",
            "method",
            "status",
            "elapsed ms",
            "operation",
            "error",
            "path",
        ],  # fmt: skip
        column_config={
            "#": st.column_config.NumberColumn("#", width=40),
            "time": st.column_config.DatetimeColumn("Time (UTC)", format="HH:mm:ss.SSS", width=100),
            "method": st.column_config.TextColumn("Method", width=65),
            "status": st.column_config.NumberColumn("Status", format="%d", width=60),
            "elapsed ms": st.column_config.NumberColumn("Elapsed ms", format="%.1f", width=80),
            "operation": st.column_config.TextColumn(
                "Operation", width=200, help="The namespace operation (the spec's name)"
            ),
            "error": st.column_config.TextColumn("Error", width=100),
            "path": st.column_config.TextColumn(
                "Path",
                width=320,
                help="The request's path on the server; its query and the whole URL: pick "
                "the exchange below",
            ),
        },
    )
    index = st.selectbox(
        "Exchange",
        range(len(entries)),
        key=state.Insp.SELECTED,
        format_func=lambda i: (
            f"#{i} {entries[i].method} {entries[i].url} → {entries[i].status or entries[i].error}"
        ),
    )
    render_exchange(entries[min(index or 0, len(entries) - 1)])
