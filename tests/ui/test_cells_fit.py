"""AppTest: grids whose cells used to be cut: the tables list (every column fits the page's
right-hand column at 1440 px), the schema's Type, the HTTP inspector's path and operation."""

from __future__ import annotations

import json

from tests.ui.conftest import assert_no_exception, open_page

ORDERS = {"ns": "sales", "table": "orders"}
# The right-hand column of "Namespaces & tables" at 1440 px (sidebar open) is ~650 px; the
# row checkbox takes ~33 px.
TABLES_COLUMN_PX = 650
CHECKBOX_PX = 33


def column_widths(frame_proto) -> dict[str, dict]:
    return json.loads(frame_proto.columns)


def test_tables_list_columns_fit_with_short_labels(make_app) -> None:
    at = make_app(query_params={"ns": "sales"})
    assert_no_exception(at)
    (grid,) = [d for d in at.dataframe if d.key and d.key.startswith("tables.list.grid.")]
    config = column_widths(grid.proto)
    shown = ["table", "rows", "size_bytes", "version", "indexes", "last_change", "health"]
    assert "state" not in grid.proto.column_order  # said by the Health column
    widths = [config[c]["width"] for c in shown]
    assert all(isinstance(w, int) for w in widths), widths
    assert CHECKBOX_PX + sum(widths) <= TABLES_COLUMN_PX
    # Labels short enough for their widths; the long meaning is in the help.
    assert config["size_bytes"]["label"] == "Size" and "on disk" in config["size_bytes"]["help"]
    assert config["last_change"]["label"] == "Changed (UTC)"
    assert config["health"]["label"] == "Health" and "Health panel" in config["health"]["help"]


def test_schema_type_gets_the_room(make_app) -> None:
    at = make_app(query_params={"ns": ["sales", "eu"], "table": "invoices"})
    schema = next(d for d in at.dataframe if "column" in d.value.columns)
    config = column_widths(schema.proto)
    assert config["type"]["width"] >= 2 * config["column"]["width"]
    assert config["type"]["help"]


def test_inspector_lists_paths_and_whole_operation_names(make_app, rest_server) -> None:
    from components.inspector import url_path

    assert url_path("http://127.0.0.1:9/v1/namespace/a%24b/list?limit=5") == (
        "/v1/namespace/a%24b/list"
    )
    at = make_app()
    at.button(key="conn.open").click().run()
    at.text_input(key="conn.form0.target").input(rest_server.url)
    at.text_input(key="conn.form0.name").input("srv")
    at.button(key="conn.form0.submit").click().run()
    open_page(at, "inspector")
    assert_no_exception(at)
    grid = next(d for d in at.dataframe if "method" in d.value.columns)
    frame = grid.value
    assert all(p.startswith("/v1/") and "?" not in p for p in frame["path"])
    assert any("?" in u for u in frame["url"])  # the query: in the exchange's detail
    order = list(grid.proto.column_order)
    assert order[-1] == "path" and "url" not in order
    config = column_widths(grid.proto)
    assert config["operation"]["width"] >= 7 * len("update_table_schema_metadata")
    # every exchange's time to the same tenth of a millisecond (not "15" beside "11.6")
    assert config["elapsed ms"]["type_config"]["format"] == "%.1f"


def test_console_grids_are_headed_in_words_data_grids_keep_their_names() -> None:
    """The one rule of a console-made grid's headers (``dataframe(..., words=True)``): the
    name in words, a capital first; a version's column and a name already capitalized as
    they are. A table's own columns are never passed through it."""
    from components.common import header_in_words

    assert [header_in_words(n) for n in ("key", "your value", "type_a", "kind", "v12")] == [
        "Key", "Your value", "Type a", "Kind", "v12",
    ]  # fmt: skip
    assert header_in_words("Seconds") == "Seconds" and header_in_words("_rowid") == "Rowid"
