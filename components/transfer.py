"""Import & export: the upload and its preview (inferred types editable), the import target,
the export form and the prepared download. Forms return what to do; the page does it.

The work itself is ``backend.services.transfer``; this module adds the widgets, the progress
bar callback, the preview kept per uploaded file, and the temporary file an export is
streamed into before the browser downloads it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from backend.arrow import import_types
from backend.errors import LanceNamespaceError
from backend.rules import csv_cells, ids
from backend.services import exports, imports
from backend.text import bytes_exactly, human_bytes, plural
from components import feedback, state
from components.writes import Write

T = TypeVar("T")
UPLOAD_TYPES = [ext.lstrip(".") for ext in imports.EXTENSIONS]
MODE_LABELS = {
    "create": "New table in this namespace",
    "append": "Append to the picked table",
    "merge": "Merge into the picked table on key columns",
}
EXPORT_LABELS = {"parquet": "Parquet", "csv": "CSV", "arrow": "Arrow IPC"}


# -- import -----------------------------------------------------------------------------------
def upload_limit() -> int:
    """The largest upload, in bytes: the import cap, or less when the Streamlit server accepts
    less (``server.maxUploadSize``)."""
    server = int(st.get_option("server.maxUploadSize") or 0) * (1 << 20)
    cap = imports.max_import_bytes()
    return min(cap, server) if server else cap


def limit_text() -> str:
    limit, cap = upload_limit(), imports.max_import_bytes()
    text = f"CSV, Parquet, Arrow IPC or JSON Lines, up to {human_bytes(limit)}"
    if limit < cap:
        text += (
            f" (the server's upload limit, server.maxUploadSize; imports accept up to "
            f"{human_bytes(cap)})"
        )
    return text + "."


def render_upload(*, key_prefix: str) -> Any | None:
    """The file chooser (the upload limit stated); the uploaded file, else ``None``."""
    upload = st.file_uploader(
        "File to import",
        type=UPLOAD_TYPES,
        key=state.form_key(state.Transfer.PAGE, f"{key_prefix}.file"),
        max_upload_size=max(1, upload_limit() >> 20),
        help="The file's columns and types are shown before anything is written.",
    )
    st.caption(feedback.as_text(limit_text()))
    return upload


def upload_preview(upload: Any) -> imports.ImportPreview | None:
    """The upload's preview, read once per uploaded file (a failure is shown every run)."""
    file_id = _upload_key(upload)
    kept = state.get(state.Transfer.PREVIEW)
    if not kept or kept[0] != file_id:
        try:
            found: Any = imports.inspect_upload(upload, imports.format_of(upload.name))
        except LanceNamespaceError as err:
            found = err
        kept = (file_id, found)
        state.put(state.Transfer.PREVIEW, kept)
    if isinstance(kept[1], BaseException):
        feedback.show_error(kept[1], action=f"Reading {upload.name}")
        return None
    return kept[1]


def changed_types(inferred: pd.DataFrame, edited: pd.DataFrame) -> dict[str, str]:
    """Column -> type text, for the rows of the types grid whose type was edited."""
    before = dict(zip(inferred["column"], inferred["type"], strict=True))
    return {
        str(name): str(text).strip()
        for name, text in zip(edited["column"], edited["type"], strict=True)
        if name in before and str(text or "").strip() != before[name]
    }


def _upload_key(upload: Any) -> str:
    return str(getattr(upload, "file_id", None) or upload.name)


def render_preview(
    preview: imports.ImportPreview, upload: Any, *, key_prefix: str
) -> dict[str, str]:
    """What the file holds: format, rows, size, the types grid (the type column editable),
    the first rows. Returns the edited types (column -> type text)."""
    st.markdown(
        feedback.as_text(
            f"{upload.name}: {imports.FORMAT_NAMES[preview.format]}, "
            f"{plural(preview.num_rows, 'row')}, {bytes_exactly(preview.size)}"
        )
    )
    left, right = st.columns([2, 3], gap="medium")
    with left:
        st.caption("Columns (edit a type to read the column as another type)")
        inferred = preview.types()
        edited = st.data_editor(
            inferred,
            key=f"{key_prefix}.types.{_upload_key(upload)}",
            hide_index=True,
            disabled=["column"],
            width="stretch",
            column_config={
                "column": st.column_config.TextColumn("Column"),
                "type": st.column_config.TextColumn(
                    "Type", help="int64, float64, utf8, bool, date32, timestamp[ms], ..."
                ),
            },
        )
    with right:
        st.caption(f"First {plural(len(preview.sample), 'row')}")
        st.dataframe(preview.sample, hide_index=True, width="stretch", key=f"{key_prefix}.rows")
    return changed_types(inferred, edited)


@dataclass(frozen=True)
class ImportTarget:
    mode: str
    table_id: list[str]
    on: list[str] | None


def default_table_name(file_name: str) -> str:
    """A new table's name from a file name: ``sales 2024.csv`` -> ``sales_2024``."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(file_name).stem).strip("._-")
    return stem or "imported"


def render_target(
    preview: imports.ImportPreview,
    upload: Any,
    namespace: Sequence[str],
    table_id: list[str] | None,
    *,
    key_prefix: str,
    read_only: bool,
    branch: str = "main",
) -> ImportTarget | None:
    """Where the rows go (a new table, or the picked one's ``branch``: appended or merged on
    keys) and the Import button; the target when it is clicked."""
    mode = st.radio(
        "Import into",
        list(MODE_LABELS),
        format_func=MODE_LABELS.__getitem__,
        key=f"{key_prefix}.mode",
        horizontal=True,
    )
    on: list[str] | None = None
    if mode == "create":
        name = st.text_input(
            f"New table name (in {ids.display_id(namespace)})",
            value=default_table_name(upload.name),
            key=f"{key_prefix}.name.{_upload_key(upload)}",
        ).strip()
        target = [*namespace, name] if name else None
    else:
        target = table_id
        if target is None:
            st.info("Pick a table above to append or merge into it.", icon=":material/table:")
        else:
            on_branch = f", branch {branch}" if branch != "main" else ""
            st.caption(feedback.as_text(f"Into table {ids.display_id(target)}{on_branch}."))
        if mode == "merge":
            names = list(preview.schema.names)
            on = st.multiselect(
                "Key columns (rows with the same keys are updated, the others inserted)",
                names,
                default=[n for n in names if n == "id"][:1],
                key=f"{key_prefix}.on",
            )
    if read_only:
        from components.session import read_only_reason

        why = read_only_reason() or "the connection is read-only"
        st.caption(":material/lock: " + feedback.as_text(f"Importing is disabled: {why}."))
    clicked = st.button(
        "Import",
        type="primary",
        icon=":material/upload:",
        key=f"{key_prefix}.go",
        disabled=read_only or target is None or (mode == "merge" and not on),
    )
    if not clicked or read_only or target is None:
        return None
    return ImportTarget(mode, target, on)


def with_progress(work: Callable[[imports.Progress], T], bar: Any, verb: str) -> T:
    """``work(progress)`` in a worker thread while this (the script's) thread draws its
    progress on ``bar`` (an ``st.progress``): lance reports rows from its own threads, which
    cannot draw."""
    seen: dict[str, Any] = {"done": 0, "total": None}

    def progress(done: int, total: int | None) -> None:
        seen["done"], seen["total"] = done, total

    with ThreadPoolExecutor(1, thread_name_prefix="transfer") as pool:
        future = pool.submit(work, progress)
        while True:
            try:
                return future.result(timeout=0.25)
            except TimeoutError:
                done, total = seen["done"], seen["total"]
                if total:
                    bar.progress(
                        min(done / total, 1.0), text=f"{verb} {done:,} of {plural(total, 'row')}"
                    )
                elif done:
                    bar.progress(0.5, text=f"{verb} {plural(done, 'row')}")


def run_import(
    ns: Any,
    upload: Any,
    preview: imports.ImportPreview,
    types: dict[str, str],
    target: ImportTarget,
    bar: Any,
) -> imports.ImportResult:
    """The import the form asked for, with the edited types, its progress drawn on ``bar``."""
    schema = import_types.apply_types(preview.schema, types) if types else None
    return with_progress(
        lambda progress: imports.import_table(
            ns,
            target.table_id,
            upload,
            preview.format,
            mode=target.mode,
            on=target.on,
            schema=schema,
            progress=progress,
            total_rows=preview.num_rows,
        ),
        bar,
        "Imported",
    )


def import_write(
    ns: Any,
    upload: Any,
    preview: imports.ImportPreview,
    types: dict[str, str],
    target: ImportTarget,
    bar: Any,
) -> Write:
    """The import the form asked for (:func:`run_import`) as a write: its result is said
    (:func:`import_summary`) and the table is read again."""
    return Write(
        run_import,
        (ns, upload, preview, types, target, bar),
        f"Importing into {ids.display_id(target.table_id)}",
        import_summary,
        [list(target.table_id)],
    )


def import_summary(result: imports.ImportResult) -> str:
    where = ids.display_id(list(result.table_id))
    if result.branch:
        where += f" (branch {result.branch})"
    rows = plural(result.rows, "row")
    version = f" (version {result.version})" if result.version is not None else ""
    if result.mode == "create":
        return f"Created table {where} with {rows}{version}."
    if result.mode == "append":
        return f"Appended {rows} to {where}{version}."
    return (
        f"Merged {rows} into {where}{version}: {result.updated or 0:,} updated, "
        f"{result.inserted or 0:,} inserted."
    )


# -- export --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExportRequest:
    fmt: str
    version: int | None
    filter: str | None
    columns: list[str] | None
    drop_nested: bool
    branch: str = "main"  # the branch exported (its versions, its rows)
    inert: bool = False  # CSV: formulas a spreadsheet would run written as text


def render_export_form(
    table_id: list[str],
    versions: Sequence[int],
    columns: Sequence[str],
    *,
    key_prefix: str,
    branch: str = "main",
) -> tuple[ExportRequest, bool]:
    """Format, version of ``branch`` (default the latest), optional SQL filter and columns,
    and the "Prepare download" button: the settings as a request (every run: a prepared file
    belongs to the settings that made it) and whether the button was clicked."""
    at = state.panel_key(key_prefix, table_id) + (f"@{branch}" if branch != "main" else "")
    c1, c2 = st.columns(2)
    fmt = c1.selectbox(
        "Format", list(EXPORT_LABELS), format_func=EXPORT_LABELS.__getitem__, key=f"{at}.fmt"
    )
    latest = max(versions) if versions else None
    version = c2.selectbox(  # 0: the latest version, whichever it is when the export runs
        "Version",
        [0, *sorted(versions, reverse=True)],
        format_func=lambda v: f"v{v}" if v else f"latest (v{latest})",
        key=f"{at}.version",
    )
    where = st.text_input(
        "Filter (SQL, optional)", placeholder="id > 100 AND category = 'a'", key=f"{at}.filter"
    )
    picked = st.multiselect(
        "Columns (none picked: all)", list(columns), key=f"{at}.columns", placeholder="All columns"
    )
    drop = inert = False
    if fmt == "csv":
        drop = st.checkbox(
            "Leave out vector, list and struct columns (CSV cannot hold them)",
            key=f"{at}.drop",
        )
        inert = st.checkbox(
            "Keep spreadsheet formulas inert",
            value=True,
            key=f"{at}.inert",
            help=f"A text cell beginning with {csv_cells.FORMULA_START_TEXT} is written with a "
            "leading ' so that a spreadsheet shows it instead of running it as a formula. "
            "Leave it off for a file to import again exactly as the table holds it.",
        )
    clicked = st.button("Prepare download", icon=":material/download:", key=f"{at}.prepare")
    request = ExportRequest(
        fmt=fmt,
        version=int(version) or None,
        filter=(where or "").strip() or None,
        columns=list(picked) or None,
        drop_nested=drop,
        branch=branch,
        inert=inert,
    )
    return request, clicked


def forget_download() -> None:
    """Drop the prepared export and its temporary file (settings changed, or a new prepare
    failed: the old file must not be offered)."""
    kept = state.drop_export_download()
    if kept:
        kept["file"].remove()


def prepare_export(
    ns: Any, table_id: list[str], request: ExportRequest, bar: Any
) -> dict[str, Any]:
    """Stream the export into a temporary file (its progress drawn on ``bar``); what the
    download button needs (also kept in the session, replacing the previous one)."""
    file = exports.ExportFile(request.fmt)
    try:
        with open(file.path, "wb") as out:
            result = with_progress(
                lambda progress: exports.export_table(
                    ns,
                    table_id,
                    request.fmt,
                    out,
                    version=request.version,
                    filter=request.filter,
                    columns=request.columns,
                    progress=progress,
                    drop_nested=request.drop_nested,
                    inert=request.inert,
                ),
                bar,
                "Exported",
            )
    except BaseException:
        file.remove()
        raise
    forget_download()
    prepared = {
        "table_id": list(table_id),
        "settings": request,
        "file": file,  # removed once no session holds it (exports.ExportFile)
        "file_name": result.file_name,
        "mime": exports.EXPORT_MIME[result.format],
        "rows": result.rows,
        "bytes": result.bytes,
        "columns": list(result.columns),
        "inert": result.inert,
    }
    state.set_export_download(prepared)
    return prepared


def render_download(table_id: list[str], request: ExportRequest, *, key_prefix: str) -> None:
    """The download button of the export prepared for this table with the form's current
    settings (``request``); a file prepared with other settings is forgotten."""
    kept = state.export_download(table_id, request)
    if kept is None or not os.path.exists(kept["file"].path):
        if state.kept_export_download() is not None:
            forget_download()
        return
    path = kept["file"].path  # the button holds the path, not the file (which it would keep)
    feedback.show(
        "success",
        f"{kept['file_name']} is ready: {plural(kept['rows'], 'row')}, "
        f"{human_bytes(kept['bytes'])} ({', '.join(kept['columns'])})."
        + (
            f" {plural(kept['inert'], 'text cell')} that a spreadsheet would run as a "
            "formula: written with a leading ' (kept as text)."
            if kept.get("inert")
            else ""
        ),
    )
    st.download_button(
        f"Download {kept['file_name']}",
        data=lambda: Path(path).read_bytes(),
        file_name=kept["file_name"],
        mime=kept["mime"],
        icon=":material/download:",
        type="primary",
        key=f"{key_prefix}.download",
        on_click="ignore",
    )
