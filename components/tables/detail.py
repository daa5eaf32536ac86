"""One table's details on "Namespaces & tables": header, metrics, schema, properties, storage
options and metadata (its lifecycle panels: ``components.table_actions``).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from backend.rules import ids
from backend.services import namespaces as nsv
from backend.services.lifecycle import PROPERTIES_READ_ONLY
from components import feedback, state
from components.common import (
    render_mapping,
    render_path,
    scroll_into_view,
)
from components.tables.catalog import table_detail

# The schema grid: the type takes the room (nested types are long), the full text on hover.
SCHEMA_COLUMNS: dict[str, Any] = {
    "column": st.column_config.TextColumn("Column", width=200),
    "type": st.column_config.TextColumn(
        "Type", width=560, help="Arrow type (a long nested type: hover a cell for all of it)"
    ),
    "nullable": st.column_config.CheckboxColumn("Nullable", width=80),
}


def render_table_detail(detail: nsv.TableDetail, *, key_prefix: str) -> None:
    """Header, metrics, location and tabs (schema, properties, storage options, metadata)."""
    badge = ":orange-badge[declared only]" if detail.declared_only else ":green-badge[materialised]"
    st.subheader(feedback.as_text(detail.name), anchor=False)
    st.markdown(f"{badge} in {feedback.as_text(ids.display_id(detail.namespace))}")
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Version", "—" if detail.version is None else detail.version)
    c2.metric("Rows", "—" if detail.row_count is None else f"{detail.row_count:,}")
    c3.metric("Columns", len(detail.schema) if not detail.schema.empty else "—")
    if detail.num_fragments is not None:
        c4.metric("Fragments", f"{detail.num_fragments:,}")
    else:
        c4.metric("Fragments", "—" if detail.declared_only else "n/a")
    st.caption("Location")
    render_path(detail.location or "(none)")
    if detail.managed_versioning is not None:
        st.caption(f"Managed versioning: {'yes' if detail.managed_versioning else 'no'}")
    for problem in detail.problems:
        st.caption(":orange[" + feedback.as_text(problem) + "]")
    schema_tab, props_tab, storage_tab, meta_tab = st.tabs(
        [
            "Schema",
            f"Properties ({len(detail.properties)})",
            f"Storage options ({len(detail.storage_options)})",
            f"Metadata ({len(detail.metadata)})",
        ],
        # keyed, per table: a rerun that draws the page above anew (the list's figures coming
        # in) leaves the open tab open; another table opens at its schema
        key=state.panel_key(f"{key_prefix}.tabs", detail.id),
    )
    with schema_tab:
        if detail.schema.empty:
            st.info(
                "No schema yet: the table is declared but has no data."
                if detail.declared_only
                else "The namespace returned no schema."
            )
        else:
            st.dataframe(
                detail.schema,
                hide_index=True,
                key=f"{key_prefix}.schema",
                width="stretch",
                column_config=SCHEMA_COLUMNS,
            )
    with props_tab:
        render_mapping(detail.properties, empty="No properties.", key_prefix=f"{key_prefix}.props")
        st.caption(PROPERTIES_READ_ONLY)
    with storage_tab:
        render_mapping(
            detail.storage_options,
            empty="No storage options returned.",
            key_prefix=f"{key_prefix}.storage",
        )
    with meta_tab:
        render_mapping(detail.metadata, empty="No metadata.", key_prefix=f"{key_prefix}.meta")


def render_table_section(table_id: list[str]) -> nsv.TableDetail | None:
    """One table: details, copy as Python and a link to its versions; returns the detail
    (``None`` when it could not be read). Its lifecycle panels: ``components.table_actions``."""
    from lance_namespace import DescribeTableRequest

    from components.snippets import render_python_snippet

    st.divider()
    with st.container(key=state.Tables.DETAIL_BOX):
        detail = feedback.run(table_detail, tuple(table_id), action=f"Describing {table_id[-1]}")
        if detail is not None:
            render_table_detail(detail, key_prefix=state.Tables.DETAIL)
            render_python_snippet(
                "describe_table",
                DescribeTableRequest(id=table_id, load_detailed_metadata=True),
                key_prefix=state.Tables.DETAIL_SNIPPET,
            )
            if st.button("Versions", icon=":material/history:", key=state.Tables.TO_VERSIONS):
                st.switch_page("views/versions.py")
    if state.drop(state.Tables.SCROLL_TO_DETAIL):  # picked in the list: its details (or why
        scroll_into_view(state.Tables.DETAIL_BOX)  # they cannot be read) come into view
    return detail
