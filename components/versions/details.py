"""One version's details, opened from the list, by number or by tag."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from backend.spec.fields import epoch_millis, whole_number
from backend.spec.paging import Listing
from backend.text import plural
from components import feedback, state
from components.common import path_span, render_figures, render_json
from components.versions.listing import shown_version
from components.versions.reads import has_version, listed_latest, operations_for, version_info


def created_text(value: Any) -> str:
    """A version's commit time (DescribeTableVersion's ``timestamp_millis``) as the versions
    list shows it: UTC, to the millisecond (``2026-12-05 08:41:17.117 UTC``); ``—`` when the
    answer has none, or one that is not a time (``epoch_millis``)."""
    millis = epoch_millis(value)
    if millis is None:
        return "—"
    stamp = pd.Timestamp(millis, unit="ms", tz="UTC")
    return stamp.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


def _bytes_text(size: Any) -> str:
    """A byte count as every figure shows counts (1,014), or "—" when the answer carries no
    whole number (read by the one rule for an answer's counts, ``whole_number``)."""
    count = whole_number(size)
    return "—" if count is None else f"{count:,}"


def render_version_details(
    info: dict[str, Any] | None, operation: dict[str, Any] | None, *, key_prefix: str
) -> None:
    """One version: timestamp, manifest, e-tag, metadata and the transaction behind it."""
    if info:
        render_figures(
            [
                ("Version", info.get("version")),
                ("Operation", (operation or {}).get("operation") or "?"),
                ("Manifest bytes", _bytes_text(info.get("manifest_size"))),
            ]
        )
        st.caption(
            feedback.as_text(
                f"Created {created_text(info.get('timestamp_millis'))} · e-tag {info.get('e_tag', '—')}"
            )
            + "  \nManifest path "
            + path_span(str(info.get("manifest_path") or "—"))
        )
        if info.get("metadata"):
            render_json(info["metadata"], key_prefix=f"{key_prefix}.meta", label="Metadata")
    if operation:
        if operation.get("error"):
            st.caption(
                ":orange["
                + feedback.as_text(f"Transaction lookup failed: {operation['error']}")
                + "]"
            )
        else:
            render_json(
                {k: v for k, v in operation.items() if v is not None and not pd.isna(v)},
                key_prefix=f"{key_prefix}.txn",
                label="Transaction",
            )


def _tag_picked(tags: Mapping[str, int]) -> None:
    tag = state.get(state.Versions.OPEN_BY_TAG)
    if isinstance(tag, str) and tag in tags:
        state.pick_version(tags[tag], tag=tag)


def _version_typed() -> None:
    state.put(state.Versions.OPEN_BY_TAG, None)  # a typed version is no tag's


def render_open_by_tag(tagged: Mapping[int, Sequence[str]] | None, *, where: Any = st) -> None:
    """ "Open by tag": the table's tags; choosing one opens its version in the picker."""
    by_name = {t: int(v) for v, names in (tagged or {}).items() for t in names}
    current = state.get(state.Versions.OPEN_BY_TAG)
    shown = state.selected_version()
    # The box shows the tag of the version shown, or nothing: a tag deleted, or moved to
    # another version since it was picked (by another process), empties it; the box would
    # otherwise keep the text "tag (vN)" of the version the tag no longer names.
    if current is not None and (
        current not in by_name or (shown is not None and by_name[current] != shown)
    ):
        state.put(state.Versions.OPEN_BY_TAG, None)
    where.selectbox(
        "Open by tag",
        sorted(by_name),
        index=None,
        key=state.Versions.OPEN_BY_TAG,
        on_change=_tag_picked,
        args=(by_name,),
        placeholder=f"pick one of {plural(len(by_name), 'tag')}" if by_name else "no tags",
        disabled=not by_name,
        format_func=lambda t: f"{t} (v{by_name[t]})",
    )


def version_options(listed: Sequence[int], latest: int, shown: int | None) -> list[int]:
    """What the version picker offers: the versions of the list's page, the latest and the
    version shown, newest first."""
    extra = [latest] + ([shown] if shown is not None else [])
    return sorted({int(v) for v in [*listed, *extra]}, reverse=True)


def render_details_section(
    table_id: tuple[str, ...],
    versions: Listing,
    ops: pd.DataFrame,
    *,
    tagged: Mapping[int, Sequence[str]] | None = None,
) -> int:
    """The version picker (bound to ``?version=``) beside "Open by tag", and that version's
    details; returns the version picked."""

    st.subheader("Version details", anchor=False)
    latest = listed_latest(versions)
    c1, c2 = st.columns(2)
    # The picker's value lives in the session (a row or tag picked, a ?tag= link, a write,
    # else the latest) or comes from ``?version=``; it has no default of its own: Streamlit
    # warns about a widget given both, and a browser resets a widget whose default changes.
    # Another table or branch picked: the latest, whatever ``?version=`` still says.
    if state.version_forgotten() or (
        state.selected_version() is None and state.QP_VERSION not in st.query_params
    ):
        state.put(state.QP_VERSION, latest)
    render_open_by_tag(tagged, where=c2)  # after the version shown is settled
    # A select box (not a number input, whose extra script a browser loads on every new
    # page): the versions of the list's page, the latest and the one shown; any other is
    # typed (a new option).
    chosen = c1.selectbox(
        "Version",
        version_options(ops["version"].tolist(), latest, shown_version(latest)),
        index=None,  # no default of its own (the URL then always names the version shown)
        key=state.QP_VERSION,
        bind="query-params",
        on_change=_version_typed,
        accept_new_options=True,
        placeholder="type a version number",
        help="The versions of the list's page are offered; type any other version's number.",
    )
    picked = state.as_version(chosen)
    if picked is None:
        if chosen is None and state.history_navigation():
            # Back or Forward to a URL without ``?version=``: Streamlit resets a box bound to
            # the URL to its (empty) default over the session's value; the next run shows
            # the session's (the latest, or a ``?tag=`` link's version).
            st.rerun()
        if chosen not in (None, ""):
            feedback.show(
                "warning",
                f"{chosen} is not a version number (1, 2, 3, …); the latest is {latest}.",
            )
        return latest
    if not has_version(table_id, versions, picked):
        feedback.show(
            "warning",
            f"Version {picked} does not exist (deleted, or never written); the latest is {latest}.",
        )
        return latest
    info = feedback.run(
        version_info, table_id, versions, picked, action=f"Describing version {picked}"
    )
    one = ops[ops["version"] == picked]
    if one.empty:
        one = operations_for(table_id, (picked,))
    render_version_details(
        info, one.iloc[0].to_dict() if not one.empty else None, key_prefix=state.Versions.ONE
    )
    return picked
