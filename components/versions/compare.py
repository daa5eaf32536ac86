"""The comparison of two versions: the form and what changed between them."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from backend.services import version_compare as vcmp
from components import feedback, state
from components.common import (
    dataframe,
)
from components.versions.reads import comparison


def render_comparison(cmp: vcmp.VersionComparison, *, key_prefix: str) -> None:
    """Metric table, schema changes, and what could not be compared."""
    dataframe(cmp.summary, hide_index=True, key=f"{key_prefix}.summary", words=True)
    if cmp.a.schema is None or cmp.b.schema is None:
        st.caption("Schema changes: unavailable.")
    elif cmp.schema_changes.empty:
        st.caption(f"Schema: no changes between v{cmp.a.version} and v{cmp.b.version}.")
    else:
        st.caption("Schema changes")
        dataframe(
            cmp.schema_changes,
            hide_index=True,
            key=f"{key_prefix}.schema",
            words=True,
            column_config={
                "type_a": f"Type at v{cmp.a.version}",
                "type_b": f"Type at v{cmp.b.version}",
            },
        )
    for item in cmp.unavailable:
        st.caption(":orange[" + feedback.as_text(f"Unavailable: {item}") + "]")


def render_compare_form(
    picked: int, older: int | None, exists: Callable[[int], bool], *, key_prefix: str
) -> tuple[int, int] | None:
    """Two version numbers (``older`` and ``picked`` at first); the pair when "Compare" is
    pressed and both exist (``exists``)."""
    with st.form(key_prefix, border=False):
        ca, cb, cc = st.columns([1, 1, 1], vertical_alignment="bottom")
        va = ca.number_input("Version A", min_value=1, value=older or picked, key=f"{key_prefix}.a")
        vb = cb.number_input("Version B", min_value=1, value=picked, key=f"{key_prefix}.b")
        go = cc.form_submit_button("Compare", icon=":material/compare_arrows:")
    if not go:
        return None
    if not versions_exist((int(va), int(vb)), exists):
        return None
    return int(va), int(vb)


def versions_exist(
    versions: tuple[int, ...], exists: Callable[[int], bool], *, branch: str | None = None
) -> bool:
    """Whether every one of ``versions`` a compare form was given ``exists``; else the first
    missing one is said (of ``branch`` when given) and the form sends nothing."""
    missing = [v for v in versions if not exists(v)]
    if missing:
        on = f" on branch {branch}" if branch else ""
        feedback.show("error", f"Version {missing[0]} does not exist{on}.")
    return not missing


def render_compare_section(
    table_id: list[str], picked: int, older: int | None, exists: Callable[[int], bool]
) -> None:
    """Two version numbers (``older`` and ``picked`` at first), and their comparison once
    asked for."""
    tid = tuple(table_id)
    pair = render_compare_form(
        picked, older, exists, key_prefix=f"{state.Versions.COMPARE_FORM}.{tid}"
    )
    if pair:
        state.set_compare_pair(table_id, *pair)
    pair = state.compare_pair(table_id)
    cmp = feedback.run(comparison, tid, *pair, action="Comparing versions") if pair else None
    if cmp is not None:
        render_comparison(cmp, key_prefix=state.Versions.CMP)
