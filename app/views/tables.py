"""Namespaces & tables: drill down namespaces, list/search tables, describe one, declare,
create namespaces, deregister."""

import streamlit as st

from backend import browse
from components import state
from components import tables as tbl
from components.common import (
    clear_read_caches,
    python_snippet,
    render_python_snippet,
    render_read_only_notice,
    render_typed_confirmation,
    run_op,
)
from components.connection import is_read_only, require_namespace, snippet_connection

st.title("Namespaces & tables")
ns = require_namespace()
read_only = is_read_only()
tbl.sync_selection()
path, table = tbl.get_selection()


def done(title: str, response: object, snippet: str | None = None) -> None:
    """After a successful write: forget cached reads, reset forms, show the result."""
    clear_read_caches()
    result = tbl.response_summary(title, response)
    result["snippet"] = snippet
    st.session_state[state.TABLES_LAST_RESULT] = result
    st.session_state[state.TABLES_FORM_VERSION] = form_version + 1
    st.rerun()


form_version = st.session_state.get(state.TABLES_FORM_VERSION, 0)

# --- where we are -----------------------------------------------------------------------------
crumb = tbl.render_breadcrumbs(path, key_prefix="tables.crumbs")
if crumb is not None:
    tbl.set_selection(crumb)
    st.rerun()
if read_only:
    render_read_only_notice()
if path and run_op(tbl.namespace_exists, path, action="Checking the namespace") is False:
    st.warning(f"Namespace {tbl.display_path(path)} does not exist (deleted, or a stale link).")
    if st.button("Back to the root namespace", key="tables.reset"):
        tbl.set_selection([])
        st.rerun()
    st.stop()

last = st.session_state.pop(state.TABLES_LAST_RESULT, None)
if last:
    tbl.render_write_result(last, key_prefix="tables.result")
    if last.get("snippet"):
        with st.expander("Copy as Python", icon=":material/code:"):
            st.code(last["snippet"], language="python")

left, right = st.columns([1, 2], gap="large")

# --- child namespaces -------------------------------------------------------------------------
with left:
    st.subheader("Namespaces", anchor=False)
    children = run_op(tbl.namespace_names, path, action="Listing namespaces") or []
    picked_ns = tbl.render_name_grid(
        children,
        key_prefix="tables.ns",
        icon=":material/folder:",
        reset_on=(tuple(path),),
        columns=1,
    )
    if picked_ns:
        tbl.set_selection([*path, picked_ns])
        st.rerun()
    if not children:
        st.caption(f"No namespaces inside {tbl.display_path(path)}.")

    with (
        st.expander("Create a namespace", icon=":material/create_new_folder:"),
        st.form(f"tables.create_ns{form_version}", border=False),
    ):
        st.caption(f"Inside {tbl.display_path(path)}")
        ns_name = st.text_input("Name", key=f"tables.create_ns{form_version}.name")
        ns_props = st.data_editor(
            tbl.empty_kv_frame(),
            num_rows="dynamic",
            hide_index=True,
            key=f"tables.create_ns{form_version}.props",
        )
        create_ns = st.form_submit_button("Create namespace", disabled=read_only)
    if create_ns:
        problem = browse.validate_identifier(ns_name, "namespace")
        try:
            props = browse.properties_from_rows(ns_props)
        except ValueError as err:
            problem = problem or str(err)
        if read_only:
            st.error("The connection is read-only.")
        elif problem:
            st.error(problem)
        else:
            resp = run_op(
                browse.create_namespace, ns, path, ns_name, props, action="Creating the namespace"
            )
            if resp is not None:
                done(f"Created namespace {tbl.display_path([*path, ns_name])}.", resp)

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
    picked = tbl.render_name_grid(
        shown,
        key_prefix="tables.list",
        icon=":material/table:",
        selected=table,
        reset_on=(tuple(path), search),
    )
    if picked and picked != table:
        tbl.set_selection(path, picked)
        st.rerun()

    with (
        st.expander("Declare a table", icon=":material/add_box:"),
        st.form(f"tables.declare{form_version}", border=False),
    ):
        st.caption(f"Registers a name (and location) in {tbl.display_path(path)}; no data yet.")
        d_name = st.text_input("Table name", key=f"tables.declare{form_version}.name")
        d_location = st.text_input(
            "Location (optional)",
            key=f"tables.declare{form_version}.location",
            placeholder="chosen by the namespace when empty",
        )
        st.caption("Properties")
        d_props = st.data_editor(
            tbl.empty_kv_frame(),
            num_rows="dynamic",
            hide_index=True,
            key=f"tables.declare{form_version}.props",
        )
        d_vend = st.toggle("Vend credentials", key=f"tables.declare{form_version}.vend")
        declare = st.form_submit_button("Declare table", type="primary", disabled=read_only)
    if declare:
        problem = browse.validate_identifier(d_name, "table")
        try:
            props = browse.properties_from_rows(d_props)
        except ValueError as err:
            problem = problem or str(err)
        if read_only:
            st.error("The connection is read-only.")
        elif problem:
            st.error(problem)
        else:
            resp = run_op(
                browse.declare_table,
                ns,
                path,
                d_name,
                location=d_location,
                properties=props,
                vend_credentials=d_vend,
                action="Declaring the table",
            )
            if resp is not None:
                from lance_namespace import DeclareTableRequest

                request = DeclareTableRequest(
                    id=[*path, d_name],
                    location=d_location.strip() or None,
                    properties=props or None,
                    vend_credentials=True if d_vend else None,
                )
                code = python_snippet("declare_table", request, snippet_connection())
                tbl.set_selection(path, d_name)
                done(f"Declared table {tbl.display_path([*path, d_name])}.", resp, code)

# --- the selected table -----------------------------------------------------------------------
if table:
    st.divider()
    table_id = [*path, table]
    detail = run_op(tbl.table_detail, table_id, action=f"Describing {table}")
    if detail is not None:
        tbl.render_table_detail(detail, key_prefix="tables.detail")
        from lance_namespace import DescribeTableRequest

        render_python_snippet(
            "describe_table",
            DescribeTableRequest(id=table_id, load_detailed_metadata=True),
            key_prefix="tables.detail.snippet",
        )
        c1, c2 = st.columns(2)
        if c1.button("Versions", icon=":material/history:", key="tables.to_versions"):
            st.switch_page("views/versions.py")

        with (
            st.expander("Deregister table", icon=":material/link_off:"),
            st.form(f"tables.deregister{form_version}", border=False),
        ):
            st.caption(
                "Removes the table from the namespace; its files stay at the location above."
            )
            confirmed = render_typed_confirmation(
                table,
                key_prefix=f"tables.deregister{form_version}",
                label=f"Type the table name `{table}` to confirm",
            )
            deregister = st.form_submit_button("Deregister", disabled=read_only)
        if deregister:
            if read_only:
                st.error("The connection is read-only.")
            elif not confirmed:
                st.error(f"Not deregistered: type `{table}` exactly to confirm.")
            else:
                resp = run_op(browse.deregister_table, ns, table_id, action="Deregistering")
                if resp is not None:
                    tbl.set_selection(path, None)
                    done(f"Deregistered table {tbl.display_path(table_id)}.", resp)
