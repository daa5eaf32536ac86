"""The "Schema" panel of a table (Namespaces & tables page): add a column (from a SQL
expression, or all-null of a type), alter one (rename, nullable, cast), drop columns.

Each form first previews (``backend.services.schema.preview_*``: the new schema, the rows
rewritten, the indexes lance drops; nothing written), then offers Apply, which returns a
:class:`components.writes.Write` for the page to send. Add and alter are an editor's, drop an
admin's (``backend.access``); on a read-only launch or below the role the buttons are disabled
with the reason, and the gate refuses the write anyway.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from backend.rules import schema_rules
from backend.services import namespaces as nsv
from backend.services import schema
from components import feedback, state
from components.common import dataframe, lazy_expander, render_role_lock
from components.session import role_lock
from components.writes import Write

EXPRESSION, ALL_NULL = "From a SQL expression", "All null, of a type"
UNCHANGED = "(unchanged)"
NULLABLE, NOT_NULLABLE = "nullable", "not nullable"
TABS = ("Add a column", "Alter a column", "Drop columns")
_OPS = {"add": schema.ADD, "alter": schema.ALTER, "drop": schema.DROP}
# the preview's new schema, headed as the table's schema is (components.tables.detail.SCHEMA_COLUMNS)
PREVIEW_COLUMNS: dict[str, Any] = {
    "column": st.column_config.TextColumn("Column"),
    "type": st.column_config.TextColumn("Type"),
    "nullable": st.column_config.CheckboxColumn("Nullable", width=80),
    "change": st.column_config.TextColumn("Change"),
}


def _key(key_prefix: str, op: str, name: str) -> str:
    return f"{key_prefix}.{op}.{name}"


def _preview(table_id: list[str], op: str, fn: Any, *args: Any, **kwargs: Any) -> None:
    """Read the preview of ``op`` and keep it (with its arguments) for Apply."""
    found = feedback.run(fn, *args, action="Preview", **kwargs)
    if found is None:
        state.set_schema_preview(None)
    else:
        state.set_schema_preview(table_id, op, (args[2:], kwargs), found)


def _render_preview(
    table_id: list[str], op: str, *, key_prefix: str, blocked: bool
) -> tuple[Any, Any] | None:
    """The kept preview of ``op`` and its Apply button: the previewed arguments (positional
    after the table id, keywords) once Apply is clicked."""
    kept = state.schema_preview(table_id, op)
    if kept is None:
        return None
    args, preview = kept
    st.markdown(f"**Preview** (at v{preview.version}): {feedback.as_text(preview.summary)}")
    dataframe(
        preview.schema,
        hide_index=True,
        key=_key(key_prefix, op, "preview"),
        column_config=PREVIEW_COLUMNS,
    )
    if st.button(
        "Apply", key=_key(key_prefix, op, "apply"), icon=":material/check:", disabled=blocked,
        type="primary",
    ):  # fmt: skip
        state.set_schema_preview(None)
        return args
    return None


def render_schema_edit(
    ns: Any, detail: nsv.TableDetail, *, key_prefix: str, read_only: bool
) -> Write | None:
    """The panel (built while its expander is open); the write asked for, once applied."""
    table_id = list(detail.id)
    box = lazy_expander(
        "Schema: add, alter or drop columns",
        key=state.panel_key(state.Tables.SCHEMA_OPEN, table_id),
        icon=":material/view_column:",
    )
    if box is None:
        return None
    with box:
        if detail.declared_only:
            st.caption("A declared table has no schema yet: columns can change once it has data.")
            return None
        columns = feedback.run(schema.table_schema, ns, table_id, action="Reading the schema")
        if columns is None:
            return None
        names = [c.name for c in columns]
        st.caption(
            "Each change is one new version. Preview says what it will do before anything "
            "is written."
        )
        # kept per table: a rerun (a write, figures arriving) stays on the tab in use
        add_tab, alter_tab, drop_tab = st.tabs(
            TABS, key=state.panel_key(state.Tables.SCHEMA_TAB, table_id), on_change="rerun"
        )
        with add_tab:
            write = _add(ns, table_id, key_prefix=key_prefix, read_only=read_only)
        with alter_tab:
            write = write or _alter(ns, table_id, names, key_prefix=key_prefix, read_only=read_only)
        with drop_tab:
            write = write or _drop(ns, table_id, names, key_prefix=key_prefix, read_only=read_only)
    return write


def _lock(op: str, read_only: bool) -> tuple[bool, str | None]:
    reason = role_lock(_OPS[op], read_only)
    return read_only or bool(reason), reason


def _add(ns: Any, table_id: list[str], *, key_prefix: str, read_only: bool) -> Write | None:
    blocked, reason = _lock("add", read_only)
    mode = st.radio(
        "Values", [EXPRESSION, ALL_NULL], horizontal=True, key=_key(key_prefix, "add", "mode")
    )
    with st.form(_key(key_prefix, "add", "form"), border=False):
        name = st.text_input("New column", key=_key(key_prefix, "add", "name"))
        if mode == EXPRESSION:
            value: Any = st.text_input(
                "SQL expression", key=_key(key_prefix, "add", "expression"),
                placeholder="price * qty", help="Computed for every row from its columns.",
            )  # fmt: skip
        else:
            value = st.selectbox(
                "Type", list(schema_rules.NULL_TYPES), key=_key(key_prefix, "add", "type")
            )
        asked = st.form_submit_button("Preview", icon=":material/preview:")
    render_role_lock(reason)
    if asked:
        all_null = [name] if mode == ALL_NULL else []
        _preview(
            table_id, "add", schema.preview_add, ns, table_id, {name: value}, all_null=all_null
        )
    applied = _render_preview(table_id, "add", key_prefix=key_prefix, blocked=blocked)
    if applied is None:
        return None
    (columns,), kwargs = applied
    return Write(
        schema.add_columns, (ns, table_id, columns), "Adding the column",
        str, [table_id], (table_id[:-1], table_id[-1]), kwargs,
    )  # fmt: skip


def _alter(
    ns: Any, table_id: list[str], names: list[str], *, key_prefix: str, read_only: bool
) -> Write | None:
    blocked, reason = _lock("alter", read_only)
    with st.form(_key(key_prefix, "alter", "form"), border=False):
        column = st.selectbox("Column", names, key=_key(key_prefix, "alter", "column"))
        rename = st.text_input(
            "New name", key=_key(key_prefix, "alter", "rename"), placeholder="(unchanged)"
        )
        nullable = st.selectbox(
            "Nulls", [UNCHANGED, NULLABLE, NOT_NULLABLE], key=_key(key_prefix, "alter", "nulls")
        )
        cast = st.selectbox(
            "Cast to", [UNCHANGED, *sorted(schema_rules.CAST_TYPES)],
            key=_key(key_prefix, "alter", "type"),
            help="Within one kind of value: integers, floating-point numbers, strings, binary. "
            "Every row is rewritten.",
        )  # fmt: skip
        asked = st.form_submit_button("Preview", icon=":material/preview:")
    render_role_lock(reason)
    if asked:
        change: dict[str, Any] = {"path": column}
        if rename.strip():
            change["rename"] = rename.strip()
        if nullable != UNCHANGED:
            change["nullable"] = nullable == NULLABLE
        if cast != UNCHANGED:
            change["data_type"] = cast
        _preview(table_id, "alter", schema.preview_alter, ns, table_id, [change])
    applied = _render_preview(table_id, "alter", key_prefix=key_prefix, blocked=blocked)
    if applied is None:
        return None
    (alterations,), _ = applied
    return Write(
        schema.alter_columns, (ns, table_id, alterations), "Altering the column",
        str, [table_id], (table_id[:-1], table_id[-1]),
    )  # fmt: skip


def _drop(
    ns: Any, table_id: list[str], names: list[str], *, key_prefix: str, read_only: bool
) -> Write | None:
    blocked, reason = _lock("drop", read_only)
    with st.form(_key(key_prefix, "drop", "form"), border=False):
        doomed = st.multiselect(
            "Columns to drop", names, key=_key(key_prefix, "drop", "columns"),
            placeholder="Pick columns",
        )  # fmt: skip
        asked = st.form_submit_button("Preview", icon=":material/preview:")
    render_role_lock(reason)
    if asked:
        _preview(table_id, "drop", schema.preview_drop, ns, table_id, list(doomed))
    applied = _render_preview(table_id, "drop", key_prefix=key_prefix, blocked=blocked)
    if applied is None:
        return None
    (columns,), _ = applied
    return Write(
        schema.drop_columns, (ns, table_id, columns), "Dropping the columns",
        str, [table_id], (table_id[:-1], table_id[-1]),
    )  # fmt: skip
