"""Audit: every write the console performed, who did it, and how it ended."""

import streamlit as st

from backend import access, audit
from components import audit_view, auth, state

st.title("Audit")
actor = auth.current_actor()
if access.rank(actor.role or "") < access.rank(access.ADMIN):
    st.info("The audit log is shown to admins only.", icon=":material/lock:")
    st.stop()
log = audit.AuditLog()
entries = log.entries()
st.caption(f"Every write, whether it succeeded or failed, from {log.path} (append-only).")
if not entries:
    st.info("No writes recorded yet.", icon=":material/receipt_long:")
    st.stop()
filters = audit_view.render_filters(entries, key_prefix=state.Audit.VIEW)
shown = audit.filter_entries(entries, **filters)
audit_view.render_entries(shown, len(entries), key_prefix=state.Audit.VIEW)
