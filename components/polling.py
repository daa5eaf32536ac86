"""Polling fragments: a part of a page that redraws itself on a timer while something goes on
(a job, a health check, figures being read) and reruns the whole page once it is done.

A fragment's body runs in two kinds of runs: its own (the timer's), and inline, within every
whole-page run. A page rerun asked from inline would cut that run short where the fragment is
drawn: a form's submission or a click that the run carries, handled further down the page, would
be lost without a word. So a rerun asked from inline is owed instead, and the frame pays it once
the page's run has ended (:func:`run_page`). A rerun asked from the fragment's own run happens at
once: that run carries nothing else.

An error on screen is not wiped by a rerun nobody asked for: the user reads it until their next
action. A rerun is owed but dropped when the page's run showed an error (:func:`error_shown`),
and a fragment's own run does not rerun the page while the error of the page's last run (or of
another fragment's or dialog's run since) is shown. The fragment's own area stays live on its
timer and shows the news; the rest of the page is drawn anew with the user's next action.

Every polling fragment goes through :func:`fragment`, and asks for a page rerun with
:func:`rerun_page`."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from components import state


def fragment(body: Callable[[], None], *, every: float | None) -> None:
    """Draw ``body`` as a fragment that runs again every ``every`` seconds (``None``: only
    with the page)."""
    st.fragment(body, run_every=every)()


def rerun_page() -> None:
    """From a polling fragment's body: rerun the whole page, at once in the fragment's own run;
    within a whole-page run, once that run has ended (the body goes on drawing meanwhile).
    Drawn within the run of another fragment or a dialog, which has no end to wait for: at
    once. Not while an error is on screen (:func:`error_shown` since the page's last run
    began): the body goes on drawing the news in its own area."""
    if state.get(state.Poll.PAGE_RUN):  # drawn inline: a fragment's own run is not a page run
        state.put(state.Poll.OWED, True)
        return
    if state.get(state.Poll.ERROR_SHOWN):
        return
    st.rerun(scope="app")


def run_page(page: Callable[[], None]) -> None:
    """A whole-page run of ``page``, then the page rerun a polling fragment owes, if any. What
    an earlier run owed is paid by this one: it draws the page anew. Not paid when the run
    showed an error (:func:`error_shown`), nor when ``page`` did not end by itself: a rerun or
    a page switch is under way, an error is shown, and after ``st.stop()`` Streamlit runs
    nothing more (the fragment's next tick, if it has a timer, asks again)."""
    for key in (state.Poll.OWED, state.Poll.ERROR_SHOWN):
        state.put(key, False)
    state.put(state.Poll.PAGE_RUN, True)
    try:
        page()
    finally:
        state.put(state.Poll.PAGE_RUN, False)
    if state.get(state.Poll.OWED) and not state.get(state.Poll.ERROR_SHOWN):
        state.put(state.Poll.OWED, False)
        st.rerun()


def error_shown() -> None:
    """An error box was drawn (``feedback.show``): a rerun owed by this page run is dropped,
    and no fragment's own run reruns the page until the next page run begins."""
    state.put(state.Poll.ERROR_SHOWN, True)


__all__ = ["error_shown", "fragment", "rerun_page", "run_page"]
