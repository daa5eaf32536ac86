"""HTTP inspector: the REST client's recent requests and responses, secrets redacted."""

import pandas as pd
import streamlit as st

from components import state
from components.common import render_json
from components.connection import backend_kind, require_namespace

try:  # the wire log module ships with the REST backend
    from backend.wirelog import to_curl
except ImportError:  # pragma: no cover - only before backend/wirelog.py exists
    to_curl = None

st.title("HTTP inspector")
ns = require_namespace()
wire_log = getattr(ns, "wire_log", None)

if backend_kind() != "rest" or wire_log is None:
    st.info(
        "Not applicable: the current connection is a local namespace, which makes no HTTP "
        "requests. Connect to a REST server (sidebar) to inspect its traffic.",
        icon=":material/lan:",
    )
    st.stop()


def _get(entry: object, name: str, default: object = None) -> object:
    if isinstance(entry, dict):
        return entry.get(name, default)
    return getattr(entry, name, default)


@st.fragment
def inspector() -> None:
    entries = list(reversed(list(wire_log)))  # newest first
    c1, c2, c3 = st.columns([1, 1, 4], vertical_alignment="center")
    c1.button("Refresh", icon=":material/refresh:", key="insp.refresh")
    c2.button("Clear", icon=":material/delete_sweep:", key="insp.clear", on_click=wire_log.clear)
    c3.caption(
        f"{len(entries)} recent exchange(s), newest first. Secret headers, query parameters "
        "and JSON values are redacted."
    )
    if not entries:
        st.info("No requests yet: browse another page, then come back.")
        return
    table = pd.DataFrame(
        [
            {
                "#": i,
                "time": pd.Timestamp(_get(e, "started_at", 0), unit="s", tz="UTC"),
                "operation": _get(e, "op"),
                "method": _get(e, "method"),
                "url": _get(e, "url"),
                "status": _get(e, "status"),
                "elapsed ms": round(float(_get(e, "elapsed_ms", 0.0) or 0.0), 1),
                "error": _get(e, "error") or "",
            }
            for i, e in enumerate(entries)
        ]
    )
    # Short columns first, the long URL last with a bounded width: every column fits a 1440 px
    # window (the full URL is in the detail below).
    st.dataframe(
        table,
        hide_index=True,
        key="insp.table",
        column_order=["#", "time", "method", "status", "elapsed ms", "operation", "error", "url"],
        column_config={
            "#": st.column_config.NumberColumn("#", width=40),
            "time": st.column_config.DatetimeColumn("Time (UTC)", format="HH:mm:ss.SSS", width=105),
            "method": st.column_config.TextColumn("Method", width=70),
            "status": st.column_config.NumberColumn("Status", format="%d", width=65),
            "elapsed ms": st.column_config.NumberColumn("Elapsed ms", width=85),
            "operation": st.column_config.TextColumn("Operation", width=140),
            "error": st.column_config.TextColumn("Error", width=130),
            "url": st.column_config.TextColumn("URL", width=320),
        },
    )
    index = st.selectbox(
        "Exchange",
        range(len(entries)),
        key=state.INSP_SELECTED,
        format_func=lambda i: (
            f"#{i} {_get(entries[i], 'method')} {_get(entries[i], 'url')} → "
            f"{_get(entries[i], 'status') or _get(entries[i], 'error')}"
        ),
    )
    entry = entries[index or 0]
    status = _get(entry, "status")
    ok = status is not None and 200 <= int(status) < 300 and not _get(entry, "error")
    (st.success if ok else st.error)(
        f"`{_get(entry, 'method')} {_get(entry, 'url')}` → **{status or 'no response'}** in "
        f"{float(_get(entry, 'elapsed_ms', 0.0) or 0.0):.1f} ms"
        + (f" · {_get(entry, 'error')}" if _get(entry, "error") else "")
    )
    req_col, resp_col = st.columns(2)
    with req_col:
        st.caption("Request")
        render_json(_get(entry, "request_headers") or {}, key_prefix="insp.req_h", label="Headers")
        body = _get(entry, "request_body")
        if body is None:
            st.caption("No request body.")
        else:
            render_json(body, key_prefix="insp.req_b", label="Body", expanded=True)
    with resp_col:
        st.caption("Response")
        render_json(
            _get(entry, "response_headers") or {}, key_prefix="insp.resp_h", label="Headers"
        )
        body = _get(entry, "response_body")
        if body is None:
            st.caption("No response body.")
        else:
            render_json(body, key_prefix="insp.resp_b", label="Body", expanded=True)
    st.caption("Copy as curl (secrets come from $LANCE_API_KEY / $LANCE_AUTH_TOKEN)")
    if to_curl is None:
        st.caption("Unavailable: backend.wirelog is not installed.")
    else:
        st.code(to_curl(entry), language="bash", wrap_lines=True)


inspector()
