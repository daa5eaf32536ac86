"""A table's schema metadata: keys to set and keys to remove."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st
from lance_namespace.errors import (
    LanceNamespaceError,
)

import backend
from backend.rules import properties as props
from backend.services import lifecycle as lc
from backend.services import namespaces as nsv
from components import feedback, state
from components.common import (
    lazy_expander,
    render_mapping,
)
from components.table_actions.action import TableAction
from components.writes import (
    READ_ONLY,
    schema_metadata,
)


def metadata_rows(metadata: dict[str, str]) -> pd.DataFrame:
    """``key``/``value`` rows of a data editor, sorted by key."""
    keys = sorted(metadata)
    return pd.DataFrame(
        {
            "key": pd.Series(keys, dtype="str"),
            "value": pd.Series([metadata[k] for k in keys], dtype="str"),
        }
    )


def metadata_changes(current: dict[str, str], rows: Any) -> tuple[dict[str, str], str | None]:
    """The keys an edited grid sets (new or changed values) or why it cannot be saved: a bad
    row (``backend.rules.properties.from_rows``), or a removed key (UpdateTableSchemaMetadata only
    adds and changes keys)."""
    try:
        edited = props.from_rows(rows)
    except LanceNamespaceError as err:
        return {}, str(err)
    removed = sorted(set(current) - set(edited))
    if removed:
        return {}, (
            f"Keys cannot be removed ({', '.join(removed)}) by saving: UpdateTableSchemaMetadata "
            "only adds and changes keys. Use Remove keys (local backend), or give a key an "
            "empty value instead."
        )
    return {k: v for k, v in edited.items() if current.get(k) != v}, None


def render_schema_metadata(
    detail: nsv.TableDetail,
    *,
    key_prefix: str,
    read_only: bool,
    caps: backend.BackendCapabilities | None = None,
) -> TableAction | None:
    """ "Schema metadata": the editable key/value pairs of the table's schema (read once the
    expander is open), removing keys (disabled with the reason where the backend cannot:
    ``caps``), and the catalog properties, read-only."""
    table_id = list(detail.id)
    box = lazy_expander(
        "Schema metadata",
        key=state.panel_key(state.Tables.METADATA_OPEN, table_id),
        icon=":material/data_object:",
    )
    if box is None:
        return None
    submitted, rows, removing, doomed = False, None, False, []
    current: dict[str, str] = {}
    cannot_remove = lc.remove_metadata_problem(caps or backend.BackendCapabilities.unknown())
    with box:
        if detail.declared_only:
            st.caption(
                "A declared table has no schema yet: its metadata can be set once it has data."
            )
        else:
            read = feedback.run(schema_metadata, tuple(table_id), action="Reading metadata")
            current = dict(read or {})
            st.caption(
                "Key/value pairs kept in the table's schema. Saving adds or changes keys "
                "(UpdateTableSchemaMetadata) and makes a new version."
            )
            with st.form(f"{key_prefix}.form", border=False):
                rows = st.data_editor(
                    metadata_rows(current), num_rows="dynamic", hide_index=True,
                    key=f"{key_prefix}.rows", width="stretch",
                )  # fmt: skip
                submitted = st.form_submit_button(
                    "Save schema metadata", icon=":material/save:", disabled=read_only
                )
            with st.form(f"{key_prefix}.remove", border=False):
                blocked = read_only or bool(cannot_remove) or not current
                doomed = st.multiselect(
                    "Keys to remove", sorted(current), key=f"{key_prefix}.remove.keys",
                    disabled=blocked, placeholder="Pick keys" if current else "No keys",
                    help=cannot_remove,
                )  # fmt: skip
                removing = st.form_submit_button(
                    "Remove keys", icon=":material/delete:", disabled=blocked,
                    help=cannot_remove or "A new version without these keys; older versions "
                    "keep them.",
                )  # fmt: skip
            if cannot_remove:
                st.caption(feedback.as_text(cannot_remove))
        st.caption("Catalog properties (read-only)")
        render_mapping(
            detail.properties, empty="No catalog properties.", key_prefix=f"{key_prefix}.props"
        )
        st.caption(lc.PROPERTIES_READ_ONLY)
    if removing:
        if read_only:
            feedback.show("error", READ_ONLY)
        elif not doomed:
            feedback.show("info", "Nothing removed: pick one or more keys.")
        else:
            return TableAction("remove_metadata", keys=tuple(doomed))
        return None
    if not submitted:
        return None
    changes, problem = metadata_changes(current, rows)
    if read_only:
        feedback.show("error", READ_ONLY)
    elif problem:
        feedback.show("error", f"Nothing saved. {problem}")
    elif not changes:
        feedback.show("info", "Nothing saved: no key was added or changed.")
    else:
        return TableAction("metadata", metadata=changes)
    return None
