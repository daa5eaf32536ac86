"""Namespaces & tables: drill down namespaces, find tables, describe one; create a namespace,
declare a table; a table's lifecycle (schema metadata, rename or move, drop vs deregister), its
columns (add, alter, drop) and dropping a namespace (RESTRICT or CASCADE)."""

import streamlit as st
from lance_namespace import CreateNamespaceRequest

import backend
from backend.rules import ids
from backend.services import namespaces as nsv
from components import schema_edit, state, writes
from components.common import lazy_popover
from components.connection_writes import require_namespace
from components.session import is_read_only, snippet_connection
from components.snippets import python_snippet
from components.table_actions.drop_namespace import render_drop_namespace
from components.table_actions.panel import render_table_actions
from components.table_actions.register import render_register_form
from components.tables.detail import render_table_section
from components.tables.forms import render_dialog_button, render_open_dialog
from components.tables.grid import render_tables_column
from components.tables.header import render_header
from components.tables.namespaces import render_namespaces_column
from components.tables.selection import set_selection, sync_selection
from components.tables.tree import render_namespace_tree

st.title("Namespaces & tables")
ns = require_namespace()
read_only = is_read_only()
sync_selection()
path, table = state.selection()


def create(request, failure_key: str) -> bool:
    """Create the namespace or declare the table a dialog's form asked for (a declare is
    described afterwards: properties the server did not keep are warned of), from the form's
    callback: the page draws once, after it; a failure is kept under ``failure_key``."""
    namespace = isinstance(request, CreateNamespaceRequest)
    op = "create_namespace" if namespace else "declare_table"
    where = ids.display_id(request.id)
    go = (request.id, None) if namespace else (request.id[:-1], request.id[-1])
    write = writes.Write(
        ns.create_namespace if namespace else nsv.declare_and_check,
        (request,) if namespace else (ns, request),
        op.replace("_", " ").capitalize(),
        f"{'Created namespace' if namespace else 'Declared table'} {where}.",
        [request.id],
        snippet=python_snippet(op, request, snippet_connection()),
        # a declare answers nsv.Declared: the response and the properties the server dropped
        warning=lambda done: (
            nsv.dropped_properties_warning(where, done.dropped)
            if getattr(done, "dropped", None)
            else None
        ),
        body=lambda done: getattr(done, "response", done).model_dump(
            mode="json", exclude_none=True
        ),
    )
    return send(write, go=go, namespaces=namespace, failure_key=failure_key)


def send(
    write: writes.Write,
    *,
    go: tuple[list[str], str | None] | None = None,
    namespaces: bool = True,
    failure_key: str | None = None,
) -> bool:
    """A write of this page; on success what it touched is read again (the listings too; the
    namespaces' own ones unless ``namespaces`` is false: a write of tables only), the result
    is said and the selection follows it. ``failure_key``: sent from a form's callback (the
    page then draws once, after it; a failure is kept there for the form)."""
    target = go or write.go or (path, table)
    done = writes.perform(
        write,
        page="tables",
        catalog=True,
        namespaces=namespaces,
        then=lambda _: set_selection(*target),
        rerun=failure_key is None,
        failure_key=failure_key,
    )
    return done is not None


render_header(path, read_only=read_only)
left, right = st.columns([1, 2.4], gap="large")
with left:
    # the whole tree on request (the breadcrumbs and the namespaces list navigate without it)
    if tree := lazy_popover(
        "Namespace tree",
        key=state.Tables.TREE_OPEN,
        icon=":material/account_tree:",
        width="stretch",
    ):
        with tree:
            render_namespace_tree(path, key_prefix=state.Tables.TREE)
    render_namespaces_column(path)
    # the writes on namespaces in one menu (its content is drawn only when opened)
    with st.popover(
        "Namespace actions",
        icon=":material/folder_managed:",
        width="stretch",
        key=state.Tables.NS_MENU,
    ):
        render_dialog_button("create_ns", key_prefix=state.Tables.DIALOGS, read_only=read_only)
        if drop := render_drop_namespace(path, caps=backend.capabilities(ns), read_only=read_only):
            send(drop.write(ns, path))
with right:
    render_tables_column(path, table)
    # the two ways a table comes into this namespace, in one menu
    with st.popover(
        "Add a table", icon=":material/add:", width="stretch", key=state.Tables.ADD_MENU
    ):
        render_dialog_button("declare", key_prefix=state.Tables.DIALOGS, read_only=read_only)
        register = render_register_form(
            path, key_prefix=state.form_key("tables", state.Tables.REGISTER), read_only=read_only
        )
        if register:
            send(register.write(ns, path), namespaces=False)
render_open_dialog(path, key_prefix=state.Tables.DIALOGS, read_only=read_only, submit=create)

detail = render_table_section([*path, table]) if table else None
if detail is not None and (
    action := render_table_actions(
        ns,
        detail,
        key_prefix=state.form_key("tables", state.Tables.LIFE),
        read_only=read_only,
        on_submit=lambda asked, failure_key: send(
            asked.write(ns, [*path, table]), namespaces=False, failure_key=failure_key
        ),
    )
):
    send(action.write(ns, [*path, table]), namespaces=False)
if detail is not None and (
    change := schema_edit.render_schema_edit(
        ns, detail, key_prefix=state.form_key("tables", state.Tables.SCHEMA), read_only=read_only
    )
):
    send(change, namespaces=False)
