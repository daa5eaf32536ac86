"""A table's lifecycle panels side by side: schema metadata and rename, drop and deregister."""

from __future__ import annotations

from typing import Any

import streamlit as st

import backend
from backend.services import namespaces as nsv
from components import state
from components.table_actions.action import TableAction
from components.table_actions.drop import Send, render_deregister_form, render_drop_form
from components.table_actions.metadata import render_schema_metadata
from components.table_actions.rename import render_rename


def render_table_actions(
    ns: Any,
    detail: nsv.TableDetail,
    *,
    key_prefix: str,
    read_only: bool,
    on_submit: Send | None = None,
) -> TableAction | None:
    """Schema metadata and rename/move side by side, then drop vs deregister side by side:
    the write asked for, once confirmed. With ``on_submit`` a drop or a deregister is handed
    over from its button's callback instead (``on_submit(action, failure_key)``: the page
    draws once, after it)."""
    table_id = list(detail.id)
    meta_col, rename_col = st.columns(2)
    with meta_col:
        action = render_schema_metadata(
            detail,
            key_prefix=f"{key_prefix}.meta",
            read_only=read_only,
            caps=backend.capabilities(ns),
        )
    with rename_col:
        action = action or render_rename(
            ns, table_id, key_prefix=f"{key_prefix}.rename", read_only=read_only
        )
    drop_col, deregister_col = st.columns(2)
    with drop_col:
        action = action or render_drop_form(
            table_id, key_prefix=f"{key_prefix}.drop", read_only=read_only, on_submit=on_submit
        )
    with deregister_col:
        action = action or render_deregister_form(
            detail,
            key_prefix=state.form_key("tables", state.Tables.DEREGISTER),
            read_only=read_only,
            on_submit=on_submit,
        )
    return action
