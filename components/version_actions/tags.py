"""A table's tags: create, move, delete (a :class:`TagAction`; the page sends it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from backend.rules import ids
from backend.services import tags as tagsv
from backend.text import capital, plural
from components import feedback, state
from components.common import (
    confirmation_matches,
    dataframe,
)
from components.writes import (
    READ_ONLY,
    Write,
)


@dataclass(frozen=True)
class TagAction:
    """A tag write: ``create`` / ``move`` (to ``version``) or ``delete``."""

    kind: str
    tag: str
    version: int | None = None
    branch: str | None = None  # the branch of ``version`` (``None``: main)

    def write(self, ns: Any, table_id: Sequence[str]) -> Write:
        tid, where = list(table_id), ids.display_id(table_id)
        of = f" of branch {self.branch}" if self.branch else ""
        if self.kind == "create":
            return Write(
                tagsv.create_tag, (ns, tid, self.tag, self.version, self.branch),
                f"Tagging v{self.version}{of}",
                f"Tagged v{self.version}{of} of {where} as {self.tag}.",
            )  # fmt: skip
        if self.kind == "move":
            return Write(
                tagsv.move_tag, (ns, tid, self.tag, self.version, self.branch),
                f"Moving tag {self.tag}",
                f"Moved tag {self.tag} of {where} to v{self.version}{of}.",
            )  # fmt: skip
        return Write(
            tagsv.delete_tag, (ns, tid, self.tag), f"Deleting tag {self.tag}",
            f"Deleted tag {self.tag} of {where}; its version stays.",
        )  # fmt: skip


def render_tags(
    table_id: Sequence[str],
    frame: pd.DataFrame,
    picked: int,
    *,
    key_prefix: str,
    read_only: bool,
    branch: str | None = None,
) -> TagAction | None:
    """The tags grid (tag, version, and the branch of each where any is on a branch), tag
    the picked version (of ``branch``; ``None``: main), move a tag to it, delete a tag (typed
    confirmation). Returns the write asked for, once it checks out."""
    names = list(frame["tag"])
    where = dict(zip(frame["tag"], frame["version"].astype(int), strict=True))
    branches = frame["branch"] if "branch" in frame.columns else ["main"] * len(frame)
    on = dict(zip(frame["tag"], branches, strict=True))
    here = branch or "main"
    of = f" of branch {branch}" if branch else ""
    if frame.empty:
        st.caption(
            "No tags yet. A tag names a version (a deep link ?tag=name opens it); tagged "
            "versions are never cleaned up."
        )
    else:
        shown = ["tag", "version"] + (["branch"] if set(on.values()) - {"main"} else [])
        dataframe(
            frame[shown],
            hide_index=True,
            key=f"{key_prefix}.grid",
            width="content",
            height=35 * (min(len(frame), 10) + 1) + 3,
            column_config={
                "tag": st.column_config.TextColumn("Tag", width=200),
                "version": st.column_config.NumberColumn("Version", format="%d", width=90),
                "branch": st.column_config.TextColumn("Branch", width=120),
            },
        )
        on_picked = [n for n in names if where[n] == picked and on.get(n, "main") == here]
        if on_picked:
            st.caption(feedback.as_text(f"v{picked}{of} is tagged {', '.join(on_picked)}."))
    with st.form(f"{key_prefix}.create", border=False):
        c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
        new = c1.text_input("New tag", key=f"{key_prefix}.create.name", placeholder="e.g. gold")
        create = c2.form_submit_button(
            f"Tag v{picked}", icon=":material/sell:", disabled=read_only, width="stretch"
        )
    move = delete = False
    moved = doomed = typed = None
    if names:  # the tab is drawn only while open: the move and delete forms go with it
        left, right = st.columns(2)
        with left, st.form(f"{key_prefix}.move"):
            moved = st.selectbox(
                "Tag to move", names, index=None, key=f"{key_prefix}.move.tag",
                placeholder=f"pick one of {plural(len(names), 'tag')}",
            )  # fmt: skip
            move = st.form_submit_button(
                f"Move to v{picked}", icon=":material/move_up:", disabled=read_only
            )
        with right, st.form(f"{key_prefix}.delete"):
            doomed = st.selectbox(
                "Tag to delete", names, index=None, key=f"{key_prefix}.delete.tag",
                placeholder=f"pick one of {plural(len(names), 'tag')}",
            )  # fmt: skip
            typed = st.text_input(
                "Type the tag name to confirm", key=f"{key_prefix}.delete.confirm"
            )
            delete = st.form_submit_button(
                "Delete tag", icon=":material/delete:", disabled=read_only
            )
    if not (create or move or delete):
        return None
    if read_only:
        feedback.show("error", READ_ONLY)
        return None
    if create:
        name = (new or "").strip()
        problem = ids.label_problem(name, what="tag", create=True) if name else "Enter a tag name."
        if not problem and name in where:
            tagged_on = on.get(name, "main")
            at = f"v{where[name]}" + (f" of branch {tagged_on}" if tagged_on != "main" else "")
            problem = f"Tag {name} already exists (on {at}): move it instead."
        if problem:
            feedback.show("error", f"Not tagged. {capital(problem)}")
            return None
        warning = ids.tag_name_warning(name)
        asked = (tuple(table_id), name)
        if warning and state.get(state.Versions.TAG_WARNED) != asked:
            state.put(state.Versions.TAG_WARNED, asked)
            feedback.show(
                "warning",
                f"Not tagged yet: {warning}. Press Tag v{picked} again to create it anyway, "
                "or choose another name.",
            )
            return None
        state.put(state.Versions.TAG_WARNED, None)
        return TagAction("create", name, picked, branch)
    if move:
        if not moved:
            feedback.show("error", "Not moved: pick the tag to move.")
        elif where.get(moved) == picked and on.get(moved, "main") == here:
            feedback.show("info", f"Tag {moved} already points at v{picked}{of}.")
        else:
            return TagAction("move", moved, picked, branch)
        return None
    if not doomed:
        feedback.show("error", "Not deleted: pick the tag to delete.")
    elif not confirmation_matches(typed, doomed):
        feedback.show("error", f"Not deleted: type {doomed} exactly to confirm.")
    else:
        return TagAction("delete", doomed)
    return None
