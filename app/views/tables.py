"""Namespaces & tables: drill down namespaces, find tables, describe one; create a namespace,
declare a table, deregister one."""

import streamlit as st
from lance_namespace import CreateNamespaceRequest, DescribeTableRequest

from backend.paging import filter_names
from backend.text import plural
from components import feedback, state
from components import tables as tbl
from components.cache import invalidate_tables
from components.common import render_read_only_notice
from components.connection import is_read_only, require_namespace
from components.snippets import python_snippet, render_code, render_python_snippet
from components.connection import snippet_connection

st.title("Namespaces & tables")
ns = require_namespace()
read_only = is_read_only()
tbl.sync_selection()
path, table = state.selection()


def write(request) -> bool:
    """Send a request a form made; on success keep the result for the rerun."""
    creating = isinstance(request, CreateNamespaceRequest)
    send = ns.create_namespace if creating else ns.declare_table
    response = feedback.run(
        send, request, action="Creating the namespace" if creating else "Declaring the table"
    )
    if response is None:
        return False
    invalidate_tables([request.id], catalog=True)
    what = "namespace" if creating else "table"
    feedback.flash(
        "tables",
        "success",
        f"Created {what} {tbl.display_path(request.id)}.",
        body=response.model_dump(mode="json", exclude_none=True),
        snippet=python_snippet(
            "create_namespace" if creating else "declare_table", request, snippet_connection()
        ),
    )
    state.reset_forms("tables")
    tbl.set_selection(
        request.id if creating else request.id[:-1], None if creating else request.id[-1]
    )
    return True


if (crumb := tbl.render_breadcrumbs(path, key_prefix="tables.crumbs")) is not None:
    tbl.go_to(crumb)
if read_only:
    render_read_only_notice()
if (
    path
    and feedback.run(tbl.namespace_exists, tuple(path), action="Checking the namespace") is False
):
    feedback.show(
        "warning", f"Namespace {tbl.display_path(path)} does not exist (deleted, or a stale link)."
    )
    if st.button("Back to the root namespace", key="tables.reset"):
        tbl.go_to([])
    st.stop()
if flashed := feedback.render_flash("tables"):
    tbl.render_write_result(flashed, key_prefix="tables.result")
    render_code(flashed.get("snippet"))

left, right = st.columns([1, 2], gap="large")
with left:
    st.subheader("Namespaces", anchor=False)
    children = feedback.run(tbl.namespace_names, tuple(path), action="Listing namespaces") or []
    if (child := tbl.render_namespace_list(children, path, key_prefix="tables.ns")) is not None:
        tbl.go_to(child)
    tbl.render_dialog_button("create_ns", key_prefix="tables", read_only=read_only)

with right:
    st.subheader(f"Tables in {tbl.display_path(path)}", anchor=False)
    search = st.text_input(
        "Search tables",
        key=state.Tables.SEARCH,
        placeholder="part of a name, or a glob like orders_*",
        icon=":material/search:",
    )
    names = feedback.run(tbl.table_names, tuple(path), action="Listing tables") or []
    shown = filter_names(names, search)
    if search:
        st.caption(
            f"{len(shown)} of {plural(len(names), 'table')} match {feedback.as_text(search)}."
        )
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

tbl.render_open_dialog(path, key_prefix="tables", read_only=read_only, submit=write)

if table:
    st.divider()
    table_id = [*path, table]
    detail = feedback.run(tbl.table_detail, tuple(table_id), action=f"Describing {table}")
    if detail is not None:
        tbl.render_table_detail(detail, key_prefix="tables.detail")
        render_python_snippet(
            "describe_table",
            DescribeTableRequest(id=table_id, load_detailed_metadata=True),
            key_prefix="tables.detail.snippet",
        )
        if st.button("Versions", icon=":material/history:", key="tables.to_versions"):
            st.switch_page("views/versions.py")
        request = tbl.render_deregister_form(
            table_id,
            key_prefix=f"tables.deregister{state.form_version('tables')}",
            read_only=read_only,
        )
        if (
            request is not None
            and feedback.run(ns.deregister_table, request, action="Deregistering") is not None
        ):
            invalidate_tables([table_id], catalog=True)
            feedback.flash(
                "tables",
                "success",
                f"Deregistered table {tbl.display_path(table_id)}; its files stay.",
            )
            state.reset_forms("tables")
            tbl.go_to(path)
