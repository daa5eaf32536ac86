"""Namespaces & tables: drill down namespaces, list/search tables, describe one, declare,
create namespaces, deregister."""

import streamlit as st
from lance_namespace import DescribeTableRequest

from backend import browse
from components import state
from components import tables as tbl
from components.common import render_python_snippet, render_read_only_notice, run_op
from components.connection import is_read_only, require_namespace

st.title("Namespaces & tables")
ns = require_namespace()
read_only = is_read_only()
tbl.sync_selection()
path, table = tbl.get_selection()

# --- where we are -----------------------------------------------------------------------------
crumb = tbl.render_breadcrumbs(path, key_prefix="tables.crumbs")
if crumb is not None:
    tbl.go_to(crumb)
if read_only:
    render_read_only_notice()
if not tbl.render_missing_namespace(path, key="tables.reset"):
    st.stop()
tbl.render_last_result(key_prefix="tables.result")

left, right = st.columns([1, 2], gap="large")

# --- child namespaces -------------------------------------------------------------------------
with left:
    st.subheader("Namespaces", anchor=False)
    children = run_op(tbl.namespace_names, path, action="Listing namespaces") or []
    child = tbl.render_namespace_list(children, path, key_prefix="tables.ns")
    if child is not None:
        tbl.go_to(child)
    tbl.render_dialog_button("create_ns", key_prefix="tables", read_only=read_only)

# --- tables -----------------------------------------------------------------------------------
with right:
    st.subheader(f"Tables in {tbl.display_path(path)}", anchor=False)
    search = st.text_input(
        "Search tables",
        key=state.TABLES_SEARCH,
        placeholder="part of a name, or a glob like orders_*",
        icon=":material/search:",
    )
    names = run_op(tbl.table_names, path, action="Listing tables") or []
    shown = browse.filter_names(names, search)
    if search:
        st.caption(f"{len(shown)} of {len(names)} tables match `{search}`.")
    elif not names:
        st.caption("No tables here.")
    if pick := tbl.render_name_list(
        shown,
        key_prefix="tables.list",
        column="table",
        selected=table,
        reset_on=(tuple(path), search),
    ):
        tbl.go_to(path, pick.name)
    tbl.render_dialog_button("declare", key_prefix="tables", read_only=read_only)

tbl.render_open_dialog(ns, path, key_prefix="tables", read_only=read_only)

# --- the selected table -----------------------------------------------------------------------
if table:
    st.divider()
    table_id = [*path, table]
    detail = run_op(tbl.table_detail, table_id, action=f"Describing {table}")
    if detail is not None:
        tbl.render_table_detail(detail, key_prefix="tables.detail")
        render_python_snippet(
            "describe_table",
            DescribeTableRequest(id=table_id, load_detailed_metadata=True),
            key_prefix="tables.detail.snippet",
        )
        if st.button("Versions", icon=":material/history:", key="tables.to_versions"):
            st.switch_page("views/versions.py")
        outcome = tbl.render_deregister_form(
            ns, table_id, key_prefix=f"tables.deregister{tbl.form_version()}", read_only=read_only
        )
        if outcome is not None:
            tbl.finish_write(outcome)
