"""Versions: every version of a table (paged, newest first), a timeline, details of one version,
comparison of two, and deleting old version ranges (never the latest)."""

import hashlib

import streamlit as st

from backend import browse
from components import state
from components import tables as tbl
from components import versions as ver
from components.common import (
    clear_read_caches,
    python_snippet,
    render_read_only_notice,
    render_typed_confirmation,
    run_op,
)
from components.connection import (
    connection_key,
    is_read_only,
    require_namespace,
    snippet_connection,
)

st.title("Versions")
ns = require_namespace()
read_only = is_read_only()
tbl.sync_selection()

table_id = tbl.render_table_picker(key_prefix="versions.pick")
if not table_id:
    st.info("Pick a table to see its versions.", icon=":material/history:")
    st.stop()
table = table_id[-1]
tkey = hashlib.sha1(f"{connection_key()}|{'/'.join(table_id)}".encode()).hexdigest()[:10]
form_version = st.session_state.get(state.VERSIONS_FORM_VERSION, 0)
if read_only:
    render_read_only_notice()

last = st.session_state.pop(state.VERSIONS_LAST_RESULT, None)
if last:
    st.success(last["title"], icon=":material/check_circle:")
    with st.expander("Copy as Python", icon=":material/code:"):
        st.code(last["snippet"], language="python")

versions = run_op(ver.versions_frame, table_id, action=f"Listing versions of {table}")
if versions is None:
    st.stop()
if versions.empty:
    st.info(f"`{table}` has no versions yet (a declared-only table has none).")
    st.stop()

latest = int(versions["version"].max())
c1, c2, c3, c4 = st.columns(4)
c1.metric("Versions", f"{len(versions):,}")
c2.metric("Latest", latest)
c3.metric("Oldest", int(versions["version"].min()))
c4.metric("Last commit (UTC)", versions["timestamp"].max().strftime("%b %d, %H:%M"))

# --- the listing: one page, operations looked up for that page only ---------------------------
st.subheader("All versions", anchor=False)
count = browse.page_count(len(versions))
number = 1
if count > 1:
    number = st.pagination(count, key=f"versions.page.{tkey}.{count}", max_visible_pages=9)
rows, page = browse.page_of_frame(versions, number)
ops = ver.operations_for(table_id, rows["version"].tolist())
ver.render_version_table(browse.with_operations(rows, ops), key_prefix="versions.list")
st.caption(f"Versions {page.first_row}–{page.last_row} of {page.total}, newest first.")

with st.expander("Timeline", icon=":material/timeline:", expanded=True):
    ver.render_timeline(
        browse.timeline_frame(versions, ops),
        key_prefix="versions.timeline",
        highlight=rows["version"].tolist(),
    )
    st.caption("Operations are looked up for the versions on the current page only.")

# --- one version ------------------------------------------------------------------------------
st.subheader("Version details", anchor=False)
selected = tbl.get_selected_version()
if selected is None or selected not in set(versions["version"]):
    if selected is not None:
        st.warning(f"Version {selected} does not exist; showing the latest.")
    selected = latest
picked = st.number_input(
    "Version",
    min_value=1,
    max_value=latest,
    value=selected,
    step=1,
    key=f"versions.selected.{tkey}",
)
if picked != tbl.get_selected_version():
    tbl.set_selected_version(int(picked))
if int(picked) in set(versions["version"]):
    info = run_op(ver.version_info, table_id, int(picked), action=f"Describing version {picked}")
    op_rows = ops[ops["version"] == int(picked)]
    if op_rows.empty:
        op_rows = ver.operations_for(table_id, [int(picked)])
    ver.render_version_details(
        info, op_rows.iloc[0].to_dict() if not op_rows.empty else None, key_prefix="versions.one"
    )
else:
    st.warning(f"Version {picked} does not exist (deleted, or never written).")

# --- compare two ------------------------------------------------------------------------------
st.subheader("Compare two versions", anchor=False)
with st.form(f"versions.compare.{tkey}", border=False):
    ca, cb, cc = st.columns([1, 1, 1], vertical_alignment="bottom")
    older = sorted(v for v in versions["version"] if v < int(picked))
    va = ca.number_input(
        "Version A",
        min_value=1,
        max_value=latest,
        value=older[-1] if older else int(picked),
        key=f"versions.cmp_a.{tkey}",
    )
    vb = cb.number_input(
        "Version B", min_value=1, max_value=latest, value=int(picked), key=f"versions.cmp_b.{tkey}"
    )
    go = cc.form_submit_button("Compare", icon=":material/compare_arrows:")
if go:
    missing = [v for v in (int(va), int(vb)) if v not in set(versions["version"])]
    if missing:
        st.error(f"Version {missing[0]} does not exist.")
        st.session_state.pop(state.VERSIONS_COMPARE, None)
    else:
        st.session_state[state.VERSIONS_COMPARE] = (tuple(table_id), int(va), int(vb))
pair = st.session_state.get(state.VERSIONS_COMPARE)
if pair and pair[0] == tuple(table_id):
    detail = run_op(tbl.table_detail, table_id, action="Describing the table")
    cmp = run_op(
        ver.comparison,
        table_id,
        pair[1],
        pair[2],
        location=detail.location if detail else None,
        storage_options=detail.storage_options if detail else None,
        action="Comparing versions",
    )
    if cmp is not None:
        ver.render_comparison(cmp, key_prefix="versions.cmp")

# --- delete old versions ----------------------------------------------------------------------
st.subheader("Delete old versions", anchor=False)
with st.form(f"versions.delete{form_version}.{tkey}", border=False):
    st.caption(
        f"Ranges like `1-5, 8`. The latest version (v{latest}) is never deleted. Deleting "
        "versions makes time travel to them impossible."
    )
    ranges_text = st.text_input("Versions to delete", key=f"versions.delete{form_version}.ranges")
    confirmed = render_typed_confirmation(
        table,
        key_prefix=f"versions.delete{form_version}",
        label=f"Type the table name `{table}` to confirm",
    )
    delete = st.form_submit_button("Delete versions", type="primary", disabled=read_only)
if delete:
    problems: list[str] = []
    ranges: list[tuple[int, int]] = []
    try:
        ranges = browse.parse_version_ranges(ranges_text)
    except ValueError as err:
        problems.append(str(err))
    if ranges:
        problems += browse.validate_delete_ranges(
            ranges, latest=latest, existing=versions["version"].tolist()
        )
    if read_only:
        st.error("The connection is read-only.")
    elif problems:
        st.error("Nothing deleted. " + " ".join(problems))
    elif not confirmed:
        st.error(f"Nothing deleted: type `{table}` exactly to confirm.")
    else:
        resp = run_op(
            browse.delete_version_ranges, ns, table_id, ranges, action="Deleting versions"
        )
        if resp is not None:
            covered = browse.versions_in_ranges(versions["version"].tolist(), ranges)
            request = browse.delete_request(table_id, ranges)
            clear_read_caches()
            n = resp.deleted_count if resp.deleted_count is not None else len(covered)
            st.session_state[state.VERSIONS_LAST_RESULT] = {
                "title": f"Deleted {n} version(s) of {tbl.display_path(table_id)}.",
                "snippet": python_snippet(
                    "batch_delete_table_versions", request, snippet_connection()
                ),
            }
            st.session_state[state.VERSIONS_FORM_VERSION] = form_version + 1
            st.session_state.pop(state.VERSIONS_COMPARE, None)
            st.rerun()
