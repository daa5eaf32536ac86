"""Namespaces & tables page panels: drop vs deregister, register, rename or move, schema
metadata, drop a namespace (RESTRICT or CASCADE). Each returns what to do (a
:class:`TableAction`, a :class:`RegisterTable`, a :class:`DropNamespace`); the page sends it
(``components.feedback.run``). Data and rules: ``backend.services.lifecycle``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import streamlit as st
from lance_namespace.errors import (
    LanceNamespaceError,
)

import backend
from backend.rules import ids
from backend.rules import properties as props
from backend.services import lifecycle as lc
from backend.services import namespaces as nsv
from backend.text import human_bytes, plural
from components import feedback, state
from components.common import (
    dataframe,
    lazy_expander,
    render_mapping,
    render_path,
    render_role_lock,
)
from components.session import role_lock
from components.writes import (
    READ_ONLY,
    Write,
    children,
    drop_preview,
    render_confirmed_form,
    schema_metadata,
)

# --------------------------------------------------------------------------------------------
# Tables: drop vs deregister, rename or move, schema metadata
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TableAction:
    """A table write: ``drop`` (deletes data), ``deregister`` (keeps it), ``rename`` (to
    ``name`` in ``namespace``), ``metadata`` (schema metadata keys to set) or
    ``remove_metadata`` (schema metadata ``keys`` to remove)."""

    kind: str
    name: str | None = None
    namespace: tuple[str, ...] | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    keys: tuple[str, ...] = ()

    def write(self, ns: Any, table_id: Sequence[str]) -> Write:
        tid, where = list(table_id), ids.display_id(table_id)
        here = (tid[:-1], None)
        if self.kind == "drop":
            return Write(
                lc.drop_table, (ns, tid), f"Dropping {tid[-1]}",
                f"Dropped table {where}: its data was deleted.", [tid], here,
            )  # fmt: skip
        if self.kind == "deregister":
            return Write(
                lc.deregister_and_check, (ns, tid), "Deregistering",
                lambda done: (
                    f"Deregistered table {where}; its files stay at its location. "
                    + lc.register_again_hint(where, done.response.location)
                ), [tid], here,
                warning=lambda done: (
                    lc.still_listed_warning(where) if done.still_listed else None
                ),
            )  # fmt: skip
        if self.kind == "rename":
            target = [*(self.namespace or ()), self.name or tid[-1]]
            return Write(
                lc.rename_table, (ns, tid, target[-1], target[:-1]), f"Renaming {tid[-1]}",
                f"Renamed table {where} to {ids.display_id(target)}.", [tid, target],
                (target[:-1], target[-1]), {"caps": backend.capabilities(ns)},
            )  # fmt: skip
        if self.kind == "remove_metadata":
            return Write(
                lc.remove_schema_metadata_keys, (ns, tid, list(self.keys)),
                "Removing metadata keys",
                f"Removed from the schema metadata of {where}: {', '.join(sorted(self.keys))}.",
                [tid], (tid[:-1], tid[-1]),
            )  # fmt: skip
        keys = ", ".join(sorted(self.metadata))
        return Write(
            lc.update_schema_metadata, (ns, tid, dict(self.metadata)), "Saving the metadata",
            f"Saved the schema metadata of {where}: {keys}.", [tid], (tid[:-1], tid[-1]),
        )  # fmt: skip


def render_table_actions(
    ns: Any, detail: nsv.TableDetail, *, key_prefix: str, read_only: bool
) -> TableAction | None:
    """Schema metadata and rename/move side by side, then drop vs deregister side by side:
    the write asked for, once confirmed."""
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
            table_id, key_prefix=f"{key_prefix}.drop", read_only=read_only
        )
    with deregister_col:
        action = action or render_deregister_form(
            detail,
            key_prefix=state.form_key("tables", state.Tables.DEREGISTER),
            read_only=read_only,
        )
    return action


def _preview_lines(preview: lc.DropPreview) -> str:
    """What a table holds, in one sentence: files and bytes on a local root, latest version."""
    if preview.latest is None:
        return "No data yet (a declared table): only its catalog entry."
    parts = [f"latest version v{preview.latest}"]
    if preview.files is not None and preview.bytes is not None:
        parts.insert(0, f"{plural(preview.files, 'file')}, {human_bytes(preview.bytes)}")
    return "Its data: " + ", ".join(parts) + " (every version and tag)."


def render_drop_form(
    table_id: list[str], *, key_prefix: str, read_only: bool
) -> TableAction | None:
    """ "Drop table (deletes data)": what goes (``lifecycle.drop_preview``), a typed
    confirmation; read only while the expander is open."""
    box = lazy_expander(
        "Drop table (deletes data)",
        key=state.panel_key(state.Tables.DROP_OPEN, table_id),
        icon=":material/delete_forever:",
    )
    if box is None:
        return None
    name = table_id[-1]
    locked = role_lock("drop_table", read_only)
    read_only = read_only or locked is not None
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
            locked=locked,
            confirm_prefix=key_prefix,
        )
    return TableAction("drop") if confirmed else None


def render_deregister_form(
    detail: nsv.TableDetail, *, key_prefix: str, read_only: bool
) -> TableAction | None:
    """ "Deregister table (keeps data)": what stays (``lifecycle.drop_preview``, read once the
    expander is open), a typed confirmation."""
    table_id = list(detail.id)
    name = table_id[-1]
    locked = role_lock("deregister_table", read_only)
    read_only = read_only or locked is not None
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
            locked=locked,
            primary=False,
        )
    return TableAction("deregister") if confirmed else None


@dataclass(frozen=True)
class RegisterTable:
    """RegisterTable: existing Lance data at ``location`` becomes table ``name`` here."""

    name: str
    location: str

    def write(self, ns: Any, namespace: Sequence[str]) -> Write:
        tid = [*namespace, self.name]
        return Write(
            lc.register_table, (ns, tid, self.location), f"Registering {self.name}",
            f"Registered table {ids.display_id(tid)} at {self.location}.", [tid], (list(namespace), self.name),
        )  # fmt: skip


def render_register_form(
    namespace: Sequence[str], *, key_prefix: str, read_only: bool
) -> RegisterTable | None:
    """ "Register a table (existing data)": a name in this namespace and the location of the
    data (a deregistered table's location, as its deregistration said it)."""
    locked = role_lock("register_table", read_only)
    read_only = read_only or locked is not None
    if not namespace:
        return None  # root-level registrations cannot be read back by a directory namespace
    # drawn only while open (its form is not part of every load of the page)
    box = lazy_expander(
        "Register a table (existing data)", key=state.Tables.REGISTER_OPEN, icon=":material/link:"
    )
    if box is None:
        return None
    with box:
        st.caption(
            feedback.as_text(
                f"Adds existing Lance data to {ids.display_id(namespace)} under a name; nothing is "
                "copied. The location must be under the namespace root, hold a dataset and "
                "not be another table's."
            )
        )
        with st.form(key_prefix, border=False):
            name = st.text_input("Table name", key=f"{key_prefix}.name")
            location = st.text_input(
                "Location", key=f"{key_prefix}.location", placeholder="file:///.../table.lance"
            )
            submitted = st.form_submit_button(
                "Register", icon=":material/link:", disabled=read_only
            )
        render_role_lock(locked)
    if not submitted or read_only:
        return None
    problem = ids.name_problem(name)
    if problem:
        feedback.show("error", f"Not registered: {problem}")
        return None
    if not (location or "").strip():
        feedback.show("error", "Not registered: enter the location of the table's data.")
        return None
    return RegisterTable(name.strip(), location.strip())


def rename_caption(caps: backend.BackendCapabilities) -> str:
    if caps.rename is False:
        return (
            "This server does not implement RenameTable (its server profile, or its answer "
            "to a rename, says so): tables cannot be renamed or moved on this connection."
        )
    if caps.rename is None:
        return (
            "Whether this server implements RenameTable is unknown until it answers a "
            "rename (a connection's server profile can say): if it does not, it refuses and "
            "nothing is renamed."
        )
    return (
        "The table keeps its data, versions and tags; only its name and namespace change "
        "(one catalog commit)."
    )


def render_rename(
    ns: Any, table_id: list[str], *, key_prefix: str, read_only: bool
) -> TableAction | None:
    """ "Rename or move": a new name and a target namespace (the current one, its children,
    its parent, its siblings or the root). On a server without RenameTable the form is disabled
    and says so (``backend.capabilities(ns)``: the connection's server profile, or the server's
    answer to an earlier rename; nothing is sent to find out)."""
    from components.tables import nearby_namespaces

    box = lazy_expander(
        "Rename or move",
        key=state.panel_key(state.Tables.RENAME_OPEN, table_id),
        icon=":material/drive_file_rename_outline:",
    )
    if box is None:
        return None
    current = table_id[:-1]
    with box:
        caps = backend.capabilities(ns)
        unsupported = caps.rename is False
        st.caption(rename_caption(caps))
        nearby = feedback.run(nearby_namespaces, current, action="Listing namespaces") or []
        here = tuple(current)
        # the current namespace, its children, its parent, its siblings, the root
        inside = [n for n in nearby if n[: len(here)] == here and n != here]
        spaces = list(dict.fromkeys([here, *inside, here[:-1], *nearby, ()]))
        with st.form(f"{key_prefix}.form", border=False):
            name = st.text_input(
                "New name", value=table_id[-1], key=f"{key_prefix}.name", disabled=unsupported
            )
            target = st.selectbox(
                "Namespace",
                spaces,
                index=0,
                format_func=ids.display_id,
                key=f"{key_prefix}.namespace",
                disabled=unsupported,
            )
            submitted = st.form_submit_button(
                "Rename", icon=":material/drive_file_rename_outline:",
                disabled=read_only or unsupported,
            )  # fmt: skip
    if not submitted:
        return None
    name = (name or "").strip()
    target = tuple(target or ())
    problem = ids.name_problem(name, "table")
    if read_only:
        feedback.show("error", READ_ONLY)
    elif problem:
        feedback.show("error", f"Not renamed. {problem}")
    elif name == table_id[-1] and list(target) == current:
        feedback.show("info", "Nothing to rename: the name and namespace are the current ones.")
    else:
        return TableAction("rename", name=name, namespace=target)
    return None


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


# --------------------------------------------------------------------------------------------
# Namespaces: drop (RESTRICT or CASCADE)
# --------------------------------------------------------------------------------------------

RESTRICT, CASCADE = "RESTRICT", "CASCADE"


@dataclass(frozen=True)
class DropNamespace:
    """Drop a namespace: ``cascade`` or not, and what it held when confirmed."""

    cascade: bool
    children: lc.Children

    def write(self, ns: Any, namespace_id: Sequence[str]) -> Write:
        nid = list(namespace_id)
        return Write(
            _drop_namespace, (ns, nid), f"Dropping namespace {nid[-1]}", self.describe(nid),
            self.children.tables, (nid[:-1], None), {"cascade": self.cascade},
        )  # fmt: skip

    def describe(self, namespace_id: Sequence[str]) -> str:
        text = f"Dropped namespace {ids.display_id(namespace_id)}"
        if self.cascade and not self.children.empty:
            text += (
                f" with {plural(len(self.children.tables), 'table')} (their data deleted) and "
                f"{plural(len(self.children.namespaces), 'child namespace')}"
            )
        return text + "."


def _drop_namespace(ns: Any, namespace_id: list[str], *, cascade: bool) -> Any:
    """``lifecycle.drop_namespace``; a server's refusal of CASCADE is learned by the client
    (``backend.capabilities``: ``drop_cascade=False`` from then on), so the panel says so
    instead of offering CASCADE again."""
    return lc.drop_namespace(ns, namespace_id, cascade=cascade)


CASCADE_NOT_ON_ROOT = (
    "This root cannot drop a namespace with CASCADE: an all-or-none CASCADE needs a local "
    "file:// or memory:// root (on an object store a crash could leave half of it dropped)."
)
CASCADE_NOT_ON_SERVER = (
    "This server does not implement DropNamespace with CASCADE (its server profile, or its "
    "answer to a CASCADE drop, says so)."
)


def cascade_unavailable(caps: backend.BackendCapabilities) -> str | None:
    """Why CASCADE cannot be offered on this connection (``None``: it can be): the backend
    says it cannot (an object-store root; a server whose profile says so, or that refused it
    earlier: the client learns it from the answer)."""
    if caps.drop_cascade is False:
        return CASCADE_NOT_ON_ROOT if caps.kind == "local" else CASCADE_NOT_ON_SERVER
    return None


def children_frame(found: lc.Children) -> pd.DataFrame:
    rows = [("namespace", ids.display_id(n)) for n in found.namespaces]
    rows += [("table", ids.display_id(t)) for t in found.tables]
    return pd.DataFrame(rows, columns=["kind", "path"])


def render_drop_namespace(
    path: Sequence[str], *, caps: backend.BackendCapabilities, read_only: bool
) -> DropNamespace | None:
    """ "Drop namespace" on the namespace shown (never the root), listing everything under it
    once its expander is open. RESTRICT (default) is refused while it has children (they are
    named before trying); CASCADE lists every table and namespace that goes with it. Both ask
    for the namespace's name."""
    if not path:
        return None
    name = path[-1]
    locked = role_lock("drop_namespace", read_only)
    read_only = read_only or locked is not None
    box = lazy_expander(
        f"Drop namespace {name}",
        key=state.panel_key(state.Tables.DROP_NS_OPEN, path),
        icon=":material/folder_delete:",
    )
    if box is None:
        return None
    with box:
        found = feedback.run(children, tuple(path), action=f"Listing what {name} holds")
        if found is None:
            return None
        no_cascade = cascade_unavailable(caps)
        count = len(found.tables) + len(found.namespaces)
        if no_cascade is None:
            mode = st.radio(
                "Mode",
                [RESTRICT, CASCADE],
                captions=["only when empty", "with everything in it"],
                horizontal=True,
                key=state.panel_key(state.Tables.DROP_NS_MODE, path),
            )
        else:
            mode = RESTRICT
        cascade = mode == CASCADE
        if found.empty:
            st.caption(
                feedback.as_text(f"{ids.display_id(path)} is empty: nothing else goes with it.")
            )
            if no_cascade:
                st.caption(no_cascade)
        elif no_cascade is not None:
            # Neither mode can drop it here: say so instead of offering a button.
            feedback.show(
                "warning",
                f"{ids.display_id(path)} is not empty: {found.describe(' › ')}. {no_cascade} Drop its "
                "tables and child namespaces first, then the namespace.",
            )
            return None
        elif not cascade:
            feedback.show(
                "warning",
                f"{ids.display_id(path)} is not empty: {found.describe(' › ')}. RESTRICT is refused while "
                "it has children: drop them first, or choose CASCADE.",
            )
        else:
            st.caption(
                feedback.as_text(
                    f"CASCADE drops {ids.display_id(path)} and everything under it: "
                    f"{plural(len(found.tables), 'table')} (their data is deleted) and "
                    f"{plural(len(found.namespaces), 'namespace')}:"
                )
            )
            dataframe(
                children_frame(found), hide_index=True, key=state.panel_key(state.Tables.DROP_NS_CHILDREN, path),
                height=35 * (min(count, 8) + 1) + 3, width="stretch",
            )  # fmt: skip
            if caps.drop_cascade is None:
                st.caption(
                    "This server may not implement CASCADE: if it refuses, nothing is dropped."
                )
        at = state.panel_key(state.form_key("tables", state.Tables.DROP_NS), path)
        label = f"Drop {name} and {plural(count, 'item')}" if cascade and count else f"Drop {name}"
        confirmed = render_confirmed_form(
            at,
            name,
            what="namespace",
            button=label,
            icon=":material/folder_delete:",
            not_done="Not dropped",
            read_only=read_only,
            locked=locked,
        )
    if not confirmed:
        return None
    return DropNamespace(cascade, found)


__all__ = [
    "CASCADE_NOT_ON_ROOT",
    "CASCADE_NOT_ON_SERVER",
    "DropNamespace",
    "RegisterTable",
    "TableAction",
    "cascade_unavailable",
    "children_frame",
    "metadata_changes",
    "metadata_rows",
    "rename_caption",
    "render_deregister_form",
    "render_drop_form",
    "render_drop_namespace",
    "render_register_form",
    "render_rename",
    "render_schema_metadata",
    "render_table_actions",
]
