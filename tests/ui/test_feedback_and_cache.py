"""AppTest of the UI kernel every page uses: messages shown as text (``components.feedback``)
and cached reads invalidated per connection after a write (``components.cache``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lance_namespace import CreateNamespaceRequest, DeclareTableRequest

import backend
from backend.config import saved_connections as conns
from backend.errors import ErrorCode, LanceNamespaceError, make
from backend.rules import ids
from backend.services import namespaces as nsv
from components import cache, feedback
from tests.ui.conftest import alerts, assert_no_exception, plain, texts

MARKDOWN_NAME = "a_b:red[x]$x$"  # emphasis, a coloured directive and LaTeX, if rendered


# --- as_text ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("$x$", r"\$x\$"),
        ("a_b", r"a\_b"),
        ("*bold*", r"\*bold\*"),
        (":red[x]", r"\:red\[x\]"),
        ("sales:orders", r"sales\:orders"),
    ],
)
def test_as_text_escapes_markdown(text: str, escaped: str) -> None:
    assert feedback.as_text(text) == escaped


def test_as_text_breaks_icon_shortcodes_and_keeps_lines() -> None:
    shown = feedback.as_text("x :material/home: y\nsecond line")
    assert ":material/home:" not in shown and "material/home" in shown
    assert shown.endswith("  \nsecond line")
    for text in (MARKDOWN_NAME, "**x** `y` <b>z</b> # h", "1. item\n- item", "50% & ~x~ ^y^"):
        assert plain(feedback.as_text(text)) == text


def test_as_text_shows_characters_that_would_turn_or_hide_text_as_code_points() -> None:
    """A name holding U+202E (right-to-left override) turned the rest of a message around
    in the browser; a control character showed nothing."""
    shown = plain(feedback.as_text("\u202eabc is not a version\x00 number\u2066\tok"))
    assert shown == "<U+202E>abc is not a version<U+0000> number<U+2066>\tok"
    assert plain(feedback.as_text("a server's\r\nlines")) == "a server's\r\nlines"


def test_as_text_shortens_a_word_longer_than_a_message_should_be() -> None:
    """A 100,000-character name from a link was repeated whole in an alert (100 KB)."""
    long = "x" * 100_000
    shown = plain(feedback.as_text(f"Listing {long} failed. Namespace not found"))
    assert len(shown) < 300
    assert shown.startswith("Listing " + "x" * 120 + "…") and "(100,000 characters)" in shown
    assert shown.endswith(" failed. Namespace not found")
    word = "y" * feedback.LONG_WORD  # at the bound: as typed
    assert plain(feedback.as_text(word)) == word


# Streamlit's markdown typography: its frontend's replacements in text nodes (not code), e.g.
# ``qty >= 3`` shown as ``qty ≥ 3``, escaped or not.
_STREAMLIT_TYPOGRAPHY = re.compile(r"(^|\s)(<->|->|<-|--|>=|<=|~=)(\s|$)")


@pytest.mark.parametrize(
    "text", ["qty >= 3", "a <= 5 and b ~= c", "x -> y <- z <-> w", "a -- b", ">= 1", "a >= <= b"]
)
def test_as_text_keeps_sql_operators_as_typed(text: str) -> None:
    assert _STREAMLIT_TYPOGRAPHY.search(text)  # the premise: markdown would change it
    shown = feedback.as_text(text)
    assert not _STREAMLIT_TYPOGRAPHY.search(re.sub(r"\\(.)", r"\1", shown))
    assert plain(shown) == text


def test_error_text_has_no_server_source_paths() -> None:
    rust = "/home/ci/lance/rust/lance-namespace-impls/src/dir/namespace.rs:385:13"
    err = make(ErrorCode.UNSUPPORTED, f"batch_commit_tables not implemented, {rust}")
    text = feedback.error_text(err, action="Batch commit")
    assert text.startswith("Batch commit failed. Unsupported operation: ")
    assert "batch_commit_tables not implemented" in text and ".rs:" not in text


# --- messages on the pages are escaped -------------------------------------------------------


def test_an_errors_line_says_the_action_not_the_operations_name(ui_env: Path) -> None:
    """The backend names the operation in front of a message (``list_tables: ...``, for code
    and notebooks); the page's line says the action instead. A name in front that is no
    operation (a parameter's) stays."""
    from lance_namespace import ListTablesRequest

    ns = backend.connect(str(ui_env))
    with pytest.raises(LanceNamespaceError) as caught:
        ns.list_tables(ListTablesRequest(id=["sales", "a/b"]))
    assert str(caught.value).startswith("list_tables: the namespace name 'a/b'")
    [line] = feedback.error_lines(caught.value, action="Listing tables")
    assert line == (
        "Listing tables failed. Invalid input: the namespace name 'a/b' contains a path "
        "separator ('/' or '\\')"
    )
    parameter = make(ErrorCode.INVALID_INPUT, "nprobes: 'abc' is not a whole number")
    [line] = feedback.error_lines(parameter, action="Reading the grid")
    assert line.endswith("Invalid input: nprobes: 'abc' is not a whole number")


def test_backend_error_about_a_markdown_name_is_shown_as_text(make_app, ui_env) -> None:
    name = MARKDOWN_NAME.replace("$", "")  # a link with the delimiter is not followed (below)
    at = make_app(query_params={"ns": "sales", "table": name})
    assert_no_exception(at)
    with pytest.raises(LanceNamespaceError) as caught:
        nsv.describe_table(backend.connect(str(ui_env)), ["sales", name])
    message = feedback.error_text(caught.value, action=f"Describing {name}")
    assert [e.value for e in at.error] == [feedback.as_text(message)]
    assert name in alerts(at, "error")[0]  # as typed, once the escapes are rendered


def test_a_refused_link_to_a_markdown_name_is_said_as_text(make_app) -> None:
    at = make_app(query_params={"ns": "sales", "table": MARKDOWN_NAME})
    assert_no_exception(at)
    problem = ids.part_problem(MARKDOWN_NAME, what="table")
    said = f"This link cannot be opened: {problem}. Showing the root namespace."
    assert [w.value for w in at.warning] == [feedback.as_text(said)]
    assert MARKDOWN_NAME in alerts(at, "warning")[0]  # as typed, once the escapes are rendered


def test_form_error_about_a_markdown_name_is_shown_as_text(make_app, ui_env) -> None:
    at = make_app(query_params={"ns": "hr"})
    at.button(key="tables.declare.open").click().run()
    at.text_input(key="tables.declare0.name").input(MARKDOWN_NAME)
    at.button(key="FormSubmitter:tables.declare0-Declare table").click().run()
    assert_no_exception(at)
    problem = ids.name_problem(MARKDOWN_NAME, "table")
    assert problem and MARKDOWN_NAME in problem
    assert [e.value for e in at.error] == [feedback.as_text(problem)]


def test_warning_about_a_missing_namespace_is_shown_as_text(make_app) -> None:
    at = make_app(query_params={"ns": ["sales", "a_b_"]})
    assert_no_exception(at)
    (warning,) = at.warning
    assert "sales › a_b_ does not exist" in plain(warning.value)
    assert warning.value == feedback.as_text(plain(warning.value))


def test_names_with_underscores_show_as_typed(make_app, ui_env) -> None:
    """A name is data: ``__tmp__`` must not turn into a bold "tmp" in a heading."""
    ns = backend.connect(str(ui_env))
    ns.create_namespace(CreateNamespaceRequest(id=["__tmp__"]))
    ns.declare_table(DeclareTableRequest(id=["__tmp__", "_draft_"]))
    at = make_app(query_params={"ns": "__tmp__", "table": "_draft_"})
    assert_no_exception(at)
    headings = [h.value for h in at.subheader]
    assert "Tables in " + feedback.as_text("__tmp__") in headings
    assert feedback.as_text("_draft_") in headings


# --- cache: a write invalidates only its connection's reads ------------------------------------


def _key(spec: conns.ConnectionSpec) -> str:
    return conns.connection_key(spec, conns.resolve_secrets(spec)[0])


def test_write_invalidates_only_its_connection(make_app, ui_env, tmp_path: Path) -> None:
    other = tmp_path / "other-root"
    other.mkdir()
    backend.connect(str(other)).create_namespace(CreateNamespaceRequest(id=["elsewhere"]))
    (tmp_path / "connections.toml").write_text(f'[connections.other]\ntarget = "{other}"\n')
    key_a = _key(conns.default_connection())
    key_b = _key(next(s for s in conns.load_connections()[0] if s.name == "other"))
    assert key_a != key_b

    at = make_app()
    at.selectbox(key="conn").set_value("other").run()  # B's listing is read (and cached)
    assert [b.key for b in at.button if b.key.startswith("tables.ns.open.")] == [
        "tables.ns.open.elsewhere"
    ]
    backend.connect(str(other)).create_namespace(CreateNamespaceRequest(id=["later"]))
    at.selectbox(key="conn").set_value("default").run()
    at.button(key="tables.ns.open.hr").click().run()

    payroll = cache.table_scope(["hr", "payroll"])
    before = {(k, s): cache.epoch(k, s) for k in (key_a, key_b) for s in (cache.CATALOG, payroll)}
    at.button(key="tables.declare.open").click().run()
    at.text_input(key="tables.declare0.name").input("payroll")
    at.button(key="FormSubmitter:tables.declare0-Declare table").click().run()
    assert_no_exception(at)
    assert "payroll" in texts(at)  # A's listing was read again

    assert cache.epoch(key_a, cache.CATALOG) == before[(key_a, cache.CATALOG)] + 1
    assert cache.epoch(key_a, payroll) == before[(key_a, payroll)] + 1
    assert cache.epoch(key_b, cache.CATALOG) == before[(key_b, cache.CATALOG)]
    assert cache.epoch(key_b, payroll) == before[(key_b, payroll)]

    # B's cached listing was not thrown away: the namespace made behind its back shows only
    # after B's own Refresh
    at.selectbox(key="conn").set_value("other").run()
    opened = lambda: {b.key for b in at.button if b.key.startswith("tables.ns.open.")}  # noqa: E731
    assert opened() == {"tables.ns.open.elsewhere"}
    at.button(key="conn.refresh").click().run()
    assert opened() == {"tables.ns.open.elsewhere", "tables.ns.open.later"}
    assert cache.epoch(key_a, cache.CATALOG) == before[(key_a, cache.CATALOG)] + 1


def test_table_write_keeps_the_namespace_listings(make_app, ui_env) -> None:
    """A declare re-reads the tables' listings only; the namespaces' own (names, tree,
    existence) are kept until a write changes namespaces."""
    key = _key(conns.default_connection())
    at = make_app(query_params={"ns": "hr"})
    tables, spaces = cache.epoch(key, cache.CATALOG), cache.epoch(key, cache.NAMESPACES)
    at.button(key="tables.declare.open").click().run()
    at.text_input(key="tables.declare0.name").input("payroll")
    at.button(key="FormSubmitter:tables.declare0-Declare table").click().run()
    assert_no_exception(at)
    assert "payroll" in texts(at)
    assert cache.epoch(key, cache.CATALOG) == tables + 1
    assert cache.epoch(key, cache.NAMESPACES) == spaces

    at.button(key="tables.create_ns.open").click().run()
    at.text_input(key="tables.create_ns1.name").input("contractors")
    at.button(key="FormSubmitter:tables.create_ns1-Create namespace").click().run()
    assert_no_exception(at)
    assert cache.epoch(key, cache.CATALOG) == tables + 2
    assert cache.epoch(key, cache.NAMESPACES) == spaces + 1
    at.button(key="tables.crumbs.crumb.1").click().run()  # back to hr: listed there
    assert "tables.ns.open.contractors" in [b.key for b in at.button]


TWO_READS = """
import streamlit as st

from components import cache


def make(label):  # every read made here has the same qualname
    @cache.cached(lambda: cache.CATALOG, name=f"test.reads.{label}")
    def read(ns):
        return label

    return read


@cache.cached(lambda: cache.CATALOG)
def one(ns):
    return "one"


@cache.cached(lambda: cache.CATALOG)
def two(ns):
    return "two"


first, second = make("first"), make("second")
st.text(" ".join([first(), second(), first(), one(), two(), one()]))
"""


def test_two_cached_reads_never_share_entries(ui_env: Path) -> None:
    """Reads with the same arguments on the same connection (even made by one factory, so
    with one qualname) answer from their own entries."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(TWO_READS, default_timeout=30)
    at.run()
    assert_no_exception(at)
    assert [t.value for t in at.text] == ["first second first one two one"]
    at.run()  # now from the cache
    assert [t.value for t in at.text] == ["first second first one two one"]


BOUNDED_READS = """
import time

import streamlit as st

from components import cache, session

calls = []
opened = []
real_open = session.get_namespace


def counting_open():
    opened.append(1)
    return real_open()


session.get_namespace = counting_open


@cache.cached(lambda x: cache.CATALOG, max_entries=2, name="test.reads.bounded")
def bounded(ns, x):
    calls.append(x)
    return x


@cache.cached(lambda: cache.CATALOG, ttl=0.05, name="test.reads.brief")
def brief(ns):
    calls.append("brief")
    return "brief"


for x in (1, 2, 1, 3, 1, 2):  # 3 pushes out the least recent (2); then 2 pushes out 3
    bounded(x)
brief()
brief()
time.sleep(0.1)
brief()  # older than its ttl: read again
hits = len(opened)
bounded(1)
bounded(2)
session.get_namespace = real_open
st.text(f"{calls} {hits} {len(opened) - hits}")
"""


def test_a_read_keeps_its_newest_entries_and_reads_again_after_its_ttl(ui_env: Path) -> None:
    """A read keeps at most ``max_entries`` entries (the least recently used go first) and
    reads again once an entry is older than its ``ttl``; the namespace is opened only for a
    read that is made, not for an answer from the cache."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(BOUNDED_READS, default_timeout=30)
    at.run()
    assert_no_exception(at)
    assert [t.value for t in at.text] == ["[1, 2, 3, 2, 'brief', 'brief'] 6 0"]


def test_a_nested_read_without_a_name_is_refused() -> None:
    def make() -> object:
        @cache.cached(lambda: cache.CATALOG)
        def read(ns: object) -> str:
            return "x"

        return read

    with pytest.raises(ValueError, match="pass cached"):
        make()


# --- the engine's text behind the expander ---------------------------------------------------

ENGINE_ERRORS = """
import lance_namespace as ln

import backend
from components import feedback

ns = backend.connect({root!r})
values = ",".join(str(i) for i in range(1500))
feedback.run(
    ns.count_table_rows,
    ln.CountTableRowsRequest(id=["t"], predicate=f"id IN (SELECT {{values}})"),
    action="Counting rows",
)
feedback.run(
    ns.alter_table_drop_columns,
    ln.AlterTableDropColumnsRequest(id=["t"], columns=["nope"]),
    action="Dropping columns",
)
"""


def test_engine_text_is_one_line_with_the_raw_text_behind_the_expander(tmp_path: Path) -> None:
    import pyarrow as pa
    from streamlit.testing.v1 import AppTest

    from tests.support import create_table

    data = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "a": ["x", "y", "z"]})
    create_table(backend.connect(str(tmp_path)), ["t"], data)
    at = AppTest.from_string(ENGINE_ERRORS.format(root=str(tmp_path)), default_timeout=60)
    at.run()
    assert_no_exception(at)
    count, drop = alerts(at, "error")
    for shown in (count, drop):
        assert "\n" not in shown and len(shown) <= 400, shown
        assert "InvalidInput" not in shown and "Internal error" not in shown, shown
    assert count.startswith("Counting rows failed. Invalid input: the filter id IN (SELECT 0, 1, 2")
    assert "… (1,500 values), 1499)" in count, count
    columns = ", ".join(data.column_names)
    assert drop == (
        f"Dropping columns failed. Invalid input: column nope not found in table t; "
        f"columns: {columns}"
    )
    expanders = [e for e in at.expander if plain(e.label) == "The engine's message"]
    assert len(expanders) == 2
    (count_engine,), (drop_engine,) = (e.code for e in expanders)
    every_value = ", ".join(str(i) for i in range(1500))
    assert every_value in count_engine.value  # the engine's own text, whole
    assert "is not supported SQL in lance" in count_engine.value
    assert "Column nope does not exist in the dataset" in drop_engine.value
