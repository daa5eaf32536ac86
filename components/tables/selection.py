"""The shared selection of namespace, table and branch, deep-linked.

Selection is in the URL as ``?ns=a&ns=b&table=t&branch=dev`` (:func:`sync_selection`: a deep
link or a reload wins, otherwise the session's selection is written to the URL; no ``branch``:
main). The branch belongs to the table: picking another table goes back to main.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from backend.rules import ids
from components import feedback, state


def sync_selection() -> None:
    """Reconcile selection and URL: query parameters (a deep link, a reload) win, the branch
    with them (a link without ``branch``: main); otherwise the session's selection is written
    to the URL so the page can be bookmarked."""
    qp_ns = (
        st.query_params.get_all(state.QP_NAMESPACE)
        if state.QP_NAMESPACE in st.query_params
        else None
    )
    qp_table = st.query_params.get(state.QP_TABLE)
    if qp_ns is not None or qp_table:
        new_ns = [p for p in (qp_ns or []) if p]
        problem = _link_problem(new_ns, qp_table or None)
        if problem:
            namespace, table = state.selection()
            shown = (
                f"table {ids.display_id([*namespace, table])}"
                if table
                else f"namespace {ids.display_id(namespace)}"
                if namespace
                else "the root namespace"
            )
            feedback.show("warning", f"This link cannot be opened: {problem}. Showing {shown}.")
            _write_query_params()
            return
        if (new_ns, qp_table or None) != state.selection():
            state.set_selection(new_ns, qp_table or None)
        state.set_branch(st.query_params.get(state.QP_BRANCH) or None)
        return
    _write_query_params()


def _link_problem(namespace: list[str], table: str | None) -> str | None:
    """Why a link's namespace and table cannot name anything (the id rule, with the
    connection's delimiter), ``None`` when they can: such a link is not followed, so that no
    page reads a namespace that cannot exist."""
    delimiter = feedback.delimiter()
    problem = ids.id_problem(namespace, what="namespace", delimiter=delimiter, allow_root=True)
    if problem is None and table is not None:
        problem = ids.part_problem(table, what="table", delimiter=delimiter)
    return problem


def _write_query_params(drop: Sequence[str] = (), *, defer: bool = False) -> None:
    """The session's selection into the URL, only what changed, and the parameters ``drop``
    names removed (a ``?tag=`` link of the table left). Each change sent to the browser is an
    entry of its history (Back steps through them), so the keys removed and the values set go
    in one update: a new namespace, with the table (and the tag link) it drops, is one entry,
    and Back returns to the table it left. A URL without a table names no version either.
    ``defer``: the change is made in the session's query parameters only; the run's next URL
    change tells the browser (the Version box's, with the version it shows), else the end of
    the run (:func:`send_owed_url`)."""
    namespace, table = state.selection()
    branch = state.selected_branch()
    wanted: dict[str, list[str]] = {
        state.QP_NAMESPACE: list(namespace),
        state.QP_TABLE: [table] if table else [],
        state.QP_BRANCH: [branch] if table and branch != state.MAIN_BRANCH else [],
    }
    removed = [key for key in drop if key in st.query_params] + [
        key
        for key in (state.QP_BRANCH, state.QP_TABLE, state.QP_NAMESPACE)
        if not wanted[key] and key in st.query_params
    ]
    changed = {
        key: values
        for key, values in wanted.items()
        if values and st.query_params.get_all(key) != values
    }
    if not removed and not changed:
        return
    if _one_update(removed + ([state.QP_VERSION] if not table else []), changed, send=not defer):
        if defer:
            state.put(state.Sel.URL_OWED, _run_query_string())
        return
    for key in removed:  # one entry each, narrowest first: every URL between is a selection
        del st.query_params[key]
    if changed:
        st.query_params.update(changed)


def _one_update(removed: list[str], changed: dict[str, list[str]], *, send: bool = True) -> bool:
    """Remove ``removed`` and set ``changed`` in one URL change, through the session's
    query-parameter object (Streamlit's public API sends a change per removal). ``removed``
    may name a parameter bound to a widget (the Version box's, with no table left to show a
    version of). ``send=False``: the browser is not told yet (the run's query string is, so
    that a rerun keeps the change). ``False`` where this Streamlit keeps its query parameters
    otherwise: the caller then makes the changes one by one, each sent."""
    try:
        from streamlit.runtime.state.session_state_proxy import get_session_state
    except ImportError:
        return False
    with get_session_state().query_params() as params:
        held = getattr(params, "_query_params", None)
        if not isinstance(held, dict):
            return False
        for key in removed:
            held.pop(key, None)
        if send:
            params.update(changed)  # sends the whole query string, once
            return True
        for key, values in changed.items():
            params.set_with_no_forward_msg(key, list(values))
        ctx = _page_run_ctx()
        if ctx is not None:
            ctx.query_string = urlencode(held, doseq=True)
    return True


def drop_linked_value(key: str) -> None:
    """Take ``key`` out of the URL and out of the values Streamlit seeds a widget bound to
    the URL with on its first run (it keeps the URL the session opened with): a linked value
    refused by the console's rule never reaches the widget's own parser."""
    try:
        from streamlit.runtime.state.session_state_proxy import get_session_state

        with get_session_state().query_params() as params:
            initial = getattr(params, "_initial_query_params", None)
            if isinstance(initial, dict):
                initial.pop(key, None)
    except ImportError:  # pragma: no cover - another Streamlit: the URL alone
        pass
    if key in st.query_params:
        del st.query_params[key]


def _page_run_ctx() -> Any | None:
    """The context of this run when it is a whole page's run (the frame, which ends it with
    :func:`send_owed_url`, runs in it); ``None`` in a fragment's run or outside a run."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx if ctx is not None and not ctx.fragment_ids_this_run else None


def _run_query_string() -> str | None:
    """The query string this run last gave the browser, or holds for it (a deferred change)."""
    ctx = _page_run_ctx()
    return None if ctx is None else str(ctx.query_string)


def send_owed_url() -> None:
    """At the end of a page's run: tell the browser of the selection a table pick changed
    (``_write_query_params`` with ``defer``), unless a URL change since told it (every change
    sends the whole query string: the Version box's, bound to the URL, names the table with
    the version it shows). One URL change, one entry of the browser's history, per pick."""
    owed = state.get(state.Sel.URL_OWED)
    if owed is None:
        return
    state.put(state.Sel.URL_OWED, None)
    if _run_query_string() != owed:
        return  # a change since then went with it
    from streamlit.runtime.state.session_state_proxy import get_session_state

    with get_session_state().query_params() as params:
        params.update({})  # sends the whole query string, once


def set_selection(
    namespace: Sequence[str], table: str | None = None, *, defer_url: bool = False
) -> None:
    """Select a namespace (and a table); updates the URL too (``defer_url``: with the run's
    next URL change, at the latest at its end). The version picked for the previous table is
    forgotten, and so are a ``?tag=`` link to it and its branch (the new table is shown on
    main)."""
    moved = (list(namespace), table) != state.selection()
    if moved:
        state.forget_version()
        state.drop(state.Versions.TAG_LINK)  # a link back to it is followed again
        state.drop(state.QP_INDEX)
        state.set_branch(None)
    state.set_selection(list(namespace), table)
    _write_query_params(
        drop=(state.QP_TAG,) if moved else (), defer=defer_url and _page_run_ctx() is not None
    )


def set_branch(branch: str | None) -> None:
    """Pick a branch of the selected table (``None`` / ``"main"``: main); updates the URL too.
    The version picked on another branch is forgotten."""
    if (branch or state.MAIN_BRANCH) != state.selected_branch():
        state.forget_version()
        state.drop(state.QP_INDEX)
    state.set_branch(branch)
    _write_query_params()


def go_to(namespace: Sequence[str], table: str | None = None) -> None:
    set_selection(namespace, table)
    st.rerun()


def selected_table_id() -> list[str] | None:
    namespace, table = state.selection()
    return [*namespace, table] if table else None


def render_back_to_root(key: str) -> None:
    """ "Back to the root namespace" (a callback selects the root)."""
    st.button("Back to the root namespace", key=key, on_click=set_selection, args=([],))
