"""AppTest: the Versions page's change log and row-level compare, on the sample namespace
(``sales.orders``: v1 create, v2 append, v3 delete; a v4 update added here), every figure
checked against the versions read with lance directly."""

from __future__ import annotations

from pathlib import Path

import lance
import pandas as pd
import pyarrow as pa

import backend
from components import state
from tests.ui.conftest import alerts, assert_no_exception, figures, texts, widget

ORDERS = {"ns": "sales", "table": "orders"}
TID = ["sales", "orders"]


def with_update(ui_env: Path) -> str:
    ds = backend.connect(str(ui_env), audit=False).open_dataset(TID)
    ds.update({"item": "'INK'"}, where="id = 2")  # v4
    return ds.uri


def at_version(uri: str, v: int) -> pa.Table:
    return lance.dataset(uri, version=v).to_table()


def test_change_log_lists_each_versions_change(make_app, ui_env) -> None:
    uri = with_update(ui_env)
    at = make_app("versions", query_params=ORDERS)
    assert not [d for d in at.dataframe if "rows_added" in d.value.columns]  # drawn when opened
    at.session_state[state.Versions.CHANGE_LOG_OPEN] = True
    at.run()
    assert_no_exception(at)
    grids = [d.value for d in at.dataframe if "rows_added" in d.value.columns]
    # no grid: the panel said why (an error or warning box), kept in the failure's message
    assert len(grids) == 1, (alerts(at, "error"), alerts(at, "warning"), alerts(at, "info"))
    grid = grids[0].set_index("version")
    assert list(grid.index) == [4, 3, 2, 1]
    assert grid["operation"].to_dict() == {1: "overwrite", 2: "append", 3: "delete", 4: "update"}
    tables = {v: at_version(uri, v) for v in range(1, 5)}
    assert grid["rows"].to_dict() == {v: t.num_rows for v, t in tables.items()}
    ids = {v: set(t.column("id").to_pylist()) for v, t in tables.items()}
    ids[0] = set()
    for v in (1, 2, 3):
        assert grid.loc[v, "rows_added"] == len(ids[v] - ids[v - 1]), v
        assert grid.loc[v, "rows_deleted"] == len(ids[v - 1] - ids[v]), v
    changed = [
        r
        for r in tables[4].to_pylist()
        if {"id": r["id"], "item": r["item"]} not in tables[3].to_pylist()
    ]
    assert (grid.loc[4, "rows_updated"], grid.loc[4, "rows_added"]) == (len(changed), 0)


def open_compare(at) -> None:
    at.session_state[state.Versions.MANAGE_OPEN] = True
    at.session_state[state.Versions.MANAGE_TAB] = "Compare"
    at.run()
    assert_no_exception(at)


def compare_rows(at, a: int, b: int, key: list[str]) -> None:
    widget(at.number_input, "versions.row_changes.form.", ".a").set_value(a)
    widget(at.number_input, "versions.row_changes.form.", ".b").set_value(b)
    widget(at.multiselect, "versions.row_changes.form.", ".key").set_value(key)
    widget(at.button, "FormSubmitter:versions.row_changes.form.", "-Compare rows").click().run()
    assert_no_exception(at)


def test_row_changes_need_a_key_then_show_the_rows(make_app, ui_env) -> None:
    uri = with_update(ui_env)
    at = make_app("versions", query_params=ORDERS)
    open_compare(at)
    compare_rows(at, 1, 4, [])
    (error,) = alerts(at, "error")
    assert "key" in error and "stable row ids" in error  # refused, never "no changes"
    assert not [m for m in at.metric if m.label == "Inserted"]

    compare_rows(at, 1, 4, ["id"])
    assert not alerts(at, "error")
    old, new = at_version(uri, 1), at_version(uri, 4)
    old_rows = {r["id"]: r for r in old.to_pylist()}
    new_rows = {r["id"]: r for r in new.to_pylist()}
    inserted = sorted(new_rows.keys() - old_rows.keys())
    deleted = sorted(old_rows.keys() - new_rows.keys())
    updated = sorted(k for k in new_rows.keys() & old_rows.keys() if new_rows[k] != old_rows[k])
    metrics = figures(at)
    assert (metrics["Inserted"], metrics["Updated"], metrics["Deleted"]) == (
        str(len(inserted)),
        str(len(updated)),
        str(len(deleted)),
    )
    assert "compared on the key id" in texts(at)
    (rows,) = [d.value for d in at.dataframe if "changed" in d.value.columns]
    assert rows["id"].tolist() == updated and rows["changed"].tolist() == ["item"] * len(updated)

    widget(at.button_group, f"{state.Versions.ROW_CHANGES_VIEW}.kind").set_value("inserted").run()
    assert_no_exception(at)
    shown = [d.value for d in at.dataframe if list(d.value.columns) == ["id", "item"]]
    assert [sorted(s["id"].tolist()) for s in shown] == [inserted]


def test_updated_rows_mark_their_changed_cells() -> None:
    """The updated rows' grid highlights, in each row, the cells of the columns that changed
    there, and shows every value as the unstyled grid would."""
    from components import change_log as view
    from components.common import MISSING

    frame = pd.DataFrame(
        {
            "changed": ["price", "name, price", "qty"],
            "id": [1, 2, 3],
            "name": ["a", "b", None],
            "price": [7.0, 0.1 + 0.2, float("nan")],
            "qty": [3, 4, 5],
        }
    )
    styled = view._mark_changed(frame)
    styled._compute()
    marked = {(r, frame.columns[c]) for (r, c), css in styled.ctx.items() if css}
    expected = {(r, col) for r, names in enumerate(frame["changed"]) for col in names.split(", ")}
    assert marked == expected
    shown = styled._translate(False, False)["body"]
    price = [row[1 + list(frame.columns).index("price")]["display_value"] for row in shown]
    assert price == ["7", "0.3", MISSING]  # not Styler's "7.000000", "0.300000", "nan"
