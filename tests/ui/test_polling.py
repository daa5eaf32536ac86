"""AppTest: polling fragments (``components.polling``). A page rerun a polling fragment asks
for within a whole-page run waits for that run's end, so a form sent in the same run is handled;
it is paid then, and dropped when the run showed an error or stopped (``st.stop()``); a
fragment's own run does not rerun the page while an error is on screen."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import backend
from backend.services import namespaces as browse
from tests.ui.conftest import TIMEOUT, alerts, assert_no_exception, texts
from tests.ui.test_tables_page import ORDERS, open_panel, submit


def polled_page() -> None:
    """A page drawn through ``polling.run_page``: a polling fragment, drawn before a form, that
    asks for a page rerun the first time it sees ``done``; the form counts its submissions; the
    page counts its runs (and the runs that got past the fragment). ``stop``: the page ends
    with ``st.stop()``; ``fail``: the form's run shows an error; ``unframed``: drawn without
    ``run_page``, as within the run of a dialog or of another fragment."""
    import streamlit as st

    from components import feedback, polling

    ss = st.session_state

    def page() -> None:
        ss["runs"] = ss.get("runs", 0) + 1

        def body() -> None:
            if ss.get("done") and not ss.get("seen"):
                ss["seen"] = True
                polling.rerun_page()
            st.caption("job done" if ss.get("done") else "job running")

        polling.fragment(body, every=None)
        ss["reached"] = ss.get("reached", 0) + 1
        with st.form("send"):
            sent = st.form_submit_button("Send")
        if sent:
            ss["sent"] = ss.get("sent", 0) + 1
            if ss.get("fail"):
                feedback.show("error", "Not sent: the name is not valid.")
        if ss.get("stop"):
            st.stop()
        st.caption("page end")

    if ss.get("unframed"):
        page()
    else:
        polling.run_page(page)


@pytest.fixture
def polled() -> AppTest:
    at = AppTest.from_function(polled_page, default_timeout=TIMEOUT)
    at.run()
    assert_no_exception(at)
    assert at.session_state["runs"] == 1
    return at


def send_as_the_job_ends(at: AppTest, **flags: bool) -> None:
    """The job ends just before the run of a form's submission reaches the fragment."""
    at.session_state["done"] = True
    for name, value in flags.items():
        at.session_state[name] = value
    at.button[0].click().run()
    assert_no_exception(at)


def test_a_form_sent_as_the_fragment_asks_for_a_rerun_is_handled_then_the_page_reruns(
    polled: AppTest,
) -> None:
    send_as_the_job_ends(polled)
    assert polled.session_state["sent"] == 1  # the submission was handled
    assert polled.session_state["runs"] == 3  # the form's run, then the owed rerun
    assert polled.session_state["seen"]
    assert "job done" in texts(polled) and "page end" in texts(polled)


def test_a_page_that_stops_keeps_the_form_and_is_not_rerun(polled: AppTest) -> None:
    """After ``st.stop()`` Streamlit refuses a rerun: the submission is still handled."""
    send_as_the_job_ends(polled, stop=True)
    assert polled.session_state["sent"] == 1
    assert polled.session_state["runs"] == 2
    assert "job done" in texts(polled) and "page end" not in texts(polled)


def test_an_error_shown_in_that_run_stays_on_screen(polled: AppTest) -> None:
    send_as_the_job_ends(polled, fail=True)
    assert polled.session_state["sent"] == 1
    assert polled.session_state["runs"] == 2  # no rerun: it would wipe the error
    assert alerts(polled, "error") == ["Not sent: the name is not valid."]
    assert "job done" in texts(polled)  # the fragment's own area shows the news


def test_nothing_is_owed_once_paid(polled: AppTest) -> None:
    send_as_the_job_ends(polled)
    polled.run()  # a later run: the fragment asks nothing, so nothing more runs
    assert polled.session_state["runs"] == 4
    assert polled.session_state["sent"] == 1


def test_the_sidebar_health_answer_in_a_forms_run_keeps_the_form(
    make_app, ui_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sidebar's status (a polling fragment drawn before every page) gets the health answer
    in the run of a Rename sent below: the table is renamed, and the page says so."""
    from components import session, sidebar, state

    at = make_app(query_params=ORDERS)
    open_panel(at, state.Tables.RENAME_OPEN, ["sales", "orders"])
    at.text_input(key="tables.life0.rename.name").input("purchases")
    reads: list[bool | None] = []

    def answer_comes_in_this_run() -> tuple[bool | None, str, float]:
        found = session.health()
        reads.append(found[0])
        if len(reads) == 1:  # the status reads "checking", its fragment then the answer
            return None, "", 0.0
        return found

    monkeypatch.setattr(sidebar, "health", answer_comes_in_this_run)
    submit(at, "tables.life0.rename.form", "Rename")
    assert reads[:2] == [True, True]  # the answer was there for the fragment's read
    assert alerts(at, "success") == ["Renamed table sales › orders to sales › purchases."]
    assert "purchases" in browse.list_table_names(backend.connect(str(ui_env)), ["sales"])


def test_outside_a_page_run_the_rerun_is_at_once() -> None:
    at = AppTest.from_function(polled_page, default_timeout=TIMEOUT)
    at.session_state["unframed"] = True
    at.run()
    at.session_state["done"] = True
    at.run()
    assert_no_exception(at)
    assert at.session_state["runs"] == 3  # the run cut short where the fragment asked, then one
    assert at.session_state["reached"] == 2


def test_a_fragments_own_run_leaves_the_error_of_the_pages_last_run_on_screen() -> None:
    """The form's run shows an error; the job ends later, seen by the fragment's own run (a
    run without ``run_page``): the page is not rerun, which would wipe the error. The page's
    next run (the user's next action) reruns as the fragment asks again."""
    at = AppTest.from_function(polled_page, default_timeout=TIMEOUT)
    at.run()
    at.session_state["fail"] = True
    at.button[0].click().run()
    assert alerts(at, "error") == ["Not sent: the name is not valid."]
    at.session_state["done"] = True
    at.session_state["unframed"] = True  # as the fragment's own run: not a page run
    at.run()
    assert_no_exception(at)
    assert at.session_state["runs"] == 3  # the fragment asked, and no rerun followed
    assert at.session_state["reached"] == 3 and "job done" in texts(at)
    at.session_state["unframed"] = False
    at.session_state["seen"] = False  # it asks again in the next page run
    at.run()
    assert at.session_state["runs"] == 5  # that run, then the rerun it owed
