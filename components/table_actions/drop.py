"""Drop a table (deletes its data) vs deregister it (keeps its files), each confirmed."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from backend.rules import ids
from backend.services import lifecycle as lc
from backend.services import namespaces as nsv
from backend.text import human_bytes, plural
from components import feedback, state
from components.common import (
    lazy_expander,
    render_path,
)
from components.table_actions.action import TableAction
from components.writes import (
    drop_preview,
    render_confirmed_form,
)


def _preview_lines(preview: lc.DropPreview) -> str:
    """What a table holds, in one sentence: files and bytes on a local root, latest version."""
    if preview.latest is None:
        return "No data yet (a declared table): only its catalog entry."
    parts = [f"latest version v{preview.latest}"]
    if preview.files is not None and preview.bytes is not None:
        parts.insert(0, f"{plural(preview.files, 'file')}, {human_bytes(preview.bytes)}")
    return "Its data: " + ", ".join(parts) + " (every version and tag)."


Send = Callable[[TableAction, str], None]  # the page's write, from a form's callback


def _handing(action: TableAction, on_submit: Send | None) -> Callable[[str], None] | None:
    """``on_submit`` with ``action``, for :func:`components.writes.render_confirmed_form`."""
    if on_submit is None:
        return None
    return lambda failure_key: on_submit(action, failure_key)


def render_drop_form(
    table_id: list[str], *, key_prefix: str, read_only: bool, on_submit: Send | None = None
) -> TableAction | None:
    """ "Drop table (deletes data)": what goes (``lifecycle.drop_preview``), a typed
    confirmation; read only while the expander is open. With ``on_submit`` the drop is
    handed over from the button's callback (``on_submit(action, failure_key)``: the page
    draws once, after it) and nothing is returned."""
    box = lazy_expander(
        "Drop table (deletes data)",
        key=state.panel_key(state.Tables.DROP_OPEN, table_id),
        icon=":material/delete_forever:",
    )
    if box is None:
        return None
    name = table_id[-1]
    with box:
        preview = feedback.run(drop_preview, tuple(table_id), action=f"Reading {name}")
        st.caption(
            feedback.as_text(
                f"Removes {ids.display_id(table_id)} from the catalog and deletes its data at:"
            )
        )
        if preview is not None:
            render_path(preview.local_path or preview.location or "(no location)")
            st.caption(feedback.as_text(_preview_lines(preview) + " This cannot be undone."))
        confirmed = render_confirmed_form(
            f"{key_prefix}.form",
            name,
            what="table",
            button="Drop table",
            icon=":material/delete_forever:",
            not_done="Not dropped",
            read_only=read_only,
            operation="drop_table",
            confirm_prefix=key_prefix,
            on_submit=_handing(TableAction("drop"), on_submit),
        )
    return TableAction("drop") if confirmed else None


def render_deregister_form(
    detail: nsv.TableDetail, *, key_prefix: str, read_only: bool, on_submit: Send | None = None
) -> TableAction | None:
    """ "Deregister table (keeps data)": what stays (``lifecycle.drop_preview``, read once the
    expander is open), a typed confirmation; ``on_submit`` as for :func:`render_drop_form`."""
    table_id = list(detail.id)
    name = table_id[-1]
    box = st.expander(
        "Deregister table (keeps data)",
        icon=":material/link_off:",
        key=state.panel_key(state.Tables.DEREGISTER_OPEN, table_id),
        on_change="rerun",
    )
    with box:
        st.caption(
            feedback.as_text(
                f"Removes {ids.display_id(table_id)} from the catalog; nothing is deleted. Its data "
                "stays at:"
            )
        )
        preview = feedback.run(drop_preview, tuple(table_id), action=name) if box.open else None
        render_path((preview.local_path if preview else None) or detail.location or "(no location)")
        if preview is not None:
            st.caption(feedback.as_text(_preview_lines(preview).replace("Its data", "Kept")))
        st.caption(
            feedback.as_text(
                lc.register_again_hint(ids.display_id(table_id), detail.location or None)
            )
        )
        confirmed = render_confirmed_form(
            key_prefix,
            name,
            what="table",
            button="Deregister",
            icon=":material/link_off:",
            not_done="Not deregistered",
            read_only=read_only,
            operation="deregister_table",
            primary=False,
            on_submit=_handing(TableAction("deregister"), on_submit),
        )
    return TableAction("deregister") if confirmed else None
