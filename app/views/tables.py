"""Namespaces & tables: drill down namespaces, find tables, describe one; create a namespace,
declare a table; a table's lifecycle (schema metadata, rename or move, drop vs deregister), its
columns (add, alter, drop) and dropping a namespace (RESTRICT or CASCADE)."""

import streamlit as st
from lance_namespace import CreateNamespaceRequest

import backend
from backend.rules import ids
from backend.services import namespaces as nsv
from components import feedback, schema_edit, state, table_actions, tables, writes
from components.cache import invalidate_tables
from components.connection_writes import require_namespace
from components.session import is_read_only, snippet_connection
from components.snippets import python_snippet

st.title("Namespaces & tables")
ns = require_namespace()
read_only = is_read_only()
tables.sync_selection()
path, table = state.selection()


def create(request) -> bool:
    """Create the namespace or declare the table a dialog's form asked for (a declare is
    described afterwards: properties the server did not keep are warned of)."""
    namespace = isinstance(request, CreateNamespaceRequest)
    op = "create_namespace" if namespace else "declare_table"
    action = op.replace("_", " ").capitalize()
    if namespace:
        response = feedback.run(ns.create_namespace, request, action=action)
        dropped = {}
    else:
        declared = feedback.run(nsv.declare_and_check, ns, request, action=action)
        response, dropped = (declared.response, declared.dropped) if declared else (None, {})
    if response is None:
        return False
    invalidate_tables([request.id], catalog=True)
    where = ids.display_id(request.id)
    text = f"{'Created namespace' if namespace else 'Declared table'} {where}."
    if dropped:
        text += " " + nsv.dropped_properties_warning(where, dropped)
    feedback.flash(
        "tables",
        "warning" if dropped else "success",
        text,
        body=response.model_dump(mode="json", exclude_none=True),
        snippet=python_snippet(op, request, snippet_connection()),
    )
    state.reset_forms("tables")
    if namespace:
        tables.set_selection(request.id)
    else:
        tables.set_selection(request.id[:-1], request.id[-1])
    return True


def send(write: writes.Write) -> None:
    """A lifecycle write; on success: read again what it touched, say it, follow it."""
    done = feedback.run(write.call, action=write.action)
    if done is None:
        return
    invalidate_tables(write.touched, catalog=True)
    write.flash("tables", done[0])
    state.reset_forms("tables")
    tables.go_to(*(write.go or (path, table)))


tables.render_header(path, read_only=read_only)
left, right = st.columns([1, 2.4], gap="large")
with left:
    with st.expander("Namespace tree", icon=":material/account_tree:", expanded=True):
        tables.render_namespace_tree(path, key_prefix=state.Tables.TREE)
    tables.render_namespaces_column(path, read_only=read_only)
    if drop := table_actions.render_drop_namespace(
        path, caps=backend.capabilities(ns), read_only=read_only
    ):
        send(drop.write(ns, path))
with right:
    tables.render_tables_column(path, table, read_only=read_only)
    register = table_actions.render_register_form(
        path, key_prefix=state.form_key("tables", state.Tables.REGISTER), read_only=read_only
    )
    if register:
        send(register.write(ns, path))
tables.render_open_dialog(path, key_prefix=state.Tables.DIALOGS, read_only=read_only, submit=create)

detail = tables.render_table_section([*path, table]) if table else None
if detail is not None and (
    action := table_actions.render_table_actions(
        ns, detail, key_prefix=state.form_key("tables", state.Tables.LIFE), read_only=read_only
    )
):
    send(action.write(ns, [*path, table]))
if detail is not None and (
    change := schema_edit.render_schema_edit(
        ns, detail, key_prefix=state.form_key("tables", state.Tables.SCHEMA), read_only=read_only
    )
):
    send(change)
