"""Audit: every write the console performed or refused, who did it, and how it ended."""

import streamlit as st

from backend import audit
from components import audit_view, auth, state

st.title("Audit")
refused = audit_view.denial(auth.current_actor())
if refused:
    st.info(refused, icon=":material/lock:")
    st.stop()
log = audit.AuditLog()
entries = log.entries()
st.caption(
    f"Every write, whether it succeeded, failed or was refused, from {log.path} (append-only); "
    "a long write's start is recorded before it begins."
)
if not entries:
    st.info("No writes recorded yet.", icon=":material/receipt_long:")
    st.stop()
filters = audit_view.render_filters(entries, key_prefix=state.Audit.VIEW)
shown = audit.filter_entries(entries, **filters)
audit_view.render_entries(
    shown, len(entries), key_prefix=state.Audit.VIEW, open_ops=audit.unfinished(entries)
)
