"""HTTP inspector: the REST client's recent requests and responses, secrets redacted."""

import streamlit as st

import backend
from components.connection_writes import require_namespace
from components.inspector import render_inspector

st.title("HTTP inspector")
ns = require_namespace()
wire_log = getattr(ns, "wire_log", None)
if backend.capabilities(ns).kind != "rest" or wire_log is None:
    st.info(
        "Not applicable: the current connection is a local namespace, which makes no HTTP "
        "requests. Connect to a REST server (sidebar) to inspect its traffic.",
        icon=":material/lan:",
    )
    st.stop()
render_inspector(wire_log)
