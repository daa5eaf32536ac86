""" "Delete by range": inclusive version ranges, with a typed confirmation (the page deletes)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd
import streamlit as st
from lance_namespace import BatchDeleteTableVersionsRequest

from backend.errors import LanceNamespaceError
from backend.rules import version_ranges
from backend.services import versions as vsv
from components import feedback, state
from components.common import (
    confirmation_matches,
    render_role_lock,
    render_typed_confirmation,
)
from components.session import role_lock
from components.writes import keep_refusal, render_failure


@dataclass(frozen=True)
class RangeDelete:
    """A confirmed "Delete by range": the inclusive spans, their request (for Copy as
    Python), and the tags that go with them (``version -> tags``; non-empty only when the
    user ticked "also delete their tags")."""

    spans: list[version_ranges.Span]
    request: BatchDeleteTableVersionsRequest
    tags: dict[int, list[str]] = field(default_factory=dict)


DELETE_TAGS_LABEL = "Also delete the tags of tagged versions in the range"


def range_delete(
    table_id: Sequence[str],
    text: str,
    *,
    with_tags: bool,
    confirmed: bool,
    latest: int,
    listed: set[int],
    tags: Mapping[int, Sequence[str]],
    read_only: bool,
) -> RangeDelete | str:
    """The delete the form asks for, or why nothing is deleted (in the user's terms)."""
    table = table_id[-1]
    try:
        spans = version_ranges.parse(text)
    except LanceNamespaceError as err:
        return f"Nothing deleted. {err}"
    spec = version_ranges.to_spec(spans)
    problems = vsv.delete_problems(spans, latest=latest, existing=listed)
    doomed = version_ranges.covered_tags(spec, tags, latest)
    if not problems and doomed and not with_tags:
        problems = version_ranges.tag_problems(
            spec, tags, latest, opt_in=f"tick {DELETE_TAGS_LABEL!r}"
        )
        problems = [p.removesuffix(" Nothing deleted.") for p in problems]
    if read_only:
        return "The connection is read-only."
    if problems:
        return "Nothing deleted. " + " ".join(problems)
    if not confirmed:
        return f"Nothing deleted: type {table} exactly to confirm."
    return RangeDelete(spans, vsv.delete_request(table_id, spans), doomed)


def render_delete_form(
    table_id: Sequence[str],
    versions: pd.DataFrame,
    *,
    key_prefix: str,
    read_only: bool,
    tagged: Mapping[int, Sequence[str]] | None = None,
    on_submit: Callable[[RangeDelete, str], None] | None = None,
) -> RangeDelete | None:
    """Inclusive ranges (``2-5, 8``), a typed confirmation; what to delete when everything
    checks out (``backend.rules.version_ranges``: never the latest version, never a tagged one
    unless the box naming the tags is ticked). ``tagged``: the table's tags by version; the
    listed versions that carry one are said before anything is submitted.

    With ``on_submit`` the delete is handed over from the button's callback instead
    (``on_submit(delete, failure_key)``, the page's write: the page then draws once, after
    it); a refusal or a failure kept under ``failure_key`` is shown under the form."""
    table = table_id[-1]
    locked = role_lock("batch_delete_table_versions", read_only)
    read_only = read_only or locked is not None
    latest = int(versions["version"].max())
    listed = set(versions["version"].astype(int))
    tags = {int(v): sorted(t) for v, t in (tagged or {}).items() if int(v) in listed}
    failure_key = f"{key_prefix}.failure"

    def asked() -> RangeDelete | str:
        return range_delete(
            table_id,
            str(state.get(f"{key_prefix}.ranges") or ""),
            with_tags=bool(tags) and bool(state.get(f"{key_prefix}.tags")),
            confirmed=confirmation_matches(state.get(f"{key_prefix}.confirm"), table),
            latest=latest,
            listed=listed,
            tags=tags,
            read_only=read_only,
        )

    def submitted_now() -> None:  # the button's callback, before the page draws
        got = asked()
        if isinstance(got, str):
            keep_refusal(failure_key, got)
        elif on_submit is not None:
            on_submit(got, failure_key)

    with st.form(key_prefix, border=False):
        st.caption(
            f"Versions as ranges like 2-5, 8 (inclusive). The latest version (v{latest}) is never "
            "deleted. Time travel to deleted versions is no longer possible."
        )
        if tags:
            st.caption(
                feedback.as_text(
                    f"Tagged: {version_ranges.describe_tags(tags)}. A range covering a tagged "
                    "version is refused unless its tags are deleted with it."
                )
            )
        st.text_input("Versions to delete", key=f"{key_prefix}.ranges")
        if tags:
            st.checkbox(DELETE_TAGS_LABEL, key=f"{key_prefix}.tags")  # the caption names them
        render_typed_confirmation(
            table, key_prefix=key_prefix, label=f"Type the table name {table} to confirm"
        )
        submitted = st.form_submit_button(
            "Delete versions",
            type="primary",
            disabled=read_only,
            on_click=submitted_now if on_submit is not None else None,
        )
        render_role_lock(locked)
    if on_submit is not None:
        render_failure(failure_key)
        return None
    if not submitted:
        return None
    got = asked()
    if isinstance(got, str):
        feedback.show("error", got)
        return None
    return got
