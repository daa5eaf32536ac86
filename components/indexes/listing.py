"""The index list of a table and the hint that its indexes lag behind the data."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.services import index_overview as ixs
from backend.text import plural
from components import feedback
from components.common import dataframe


def render_index_table(overview: pd.DataFrame, *, key_prefix: str) -> None:
    """The table's indexes: type, columns, status, rows, coverage, size, segments, distance."""
    if overview.empty:
        st.info("This table has no indexes yet. Create one below.", icon=":material/info:")
        return
    shown = overview.drop(columns=["details", "uuid"])
    # scalar and FTS indexes have no distance: "—", as every value not known or not set
    dataframe(
        shown,
        sizes=["size_bytes"],
        hide_index=True,
        key=f"{key_prefix}.table",
        column_order=[
            "name",
            "type",
            "columns",
            "status",
            "indexed_rows",
            "unindexed_rows",
            "coverage",
            "size_bytes",
            "segments",
            "distance_type",
            "created_at",
        ],  # fmt: skip
        column_config={  # widths: every column fits a 1440 px window
            "name": st.column_config.TextColumn("Index", width=130),
            "type": st.column_config.TextColumn("Type", width=85),
            "columns": st.column_config.TextColumn("Columns", width=90),
            "status": st.column_config.TextColumn("Status", width=85),
            "indexed_rows": st.column_config.NumberColumn("Indexed", format="localized", width=75),
            "unindexed_rows": st.column_config.NumberColumn(
                "Unindexed", format="localized", width=80
            ),
            "coverage": st.column_config.ProgressColumn(
                "Coverage", min_value=0.0, max_value=1.0, format="percent", width=105
            ),
            "size_bytes": st.column_config.NumberColumn("Size", width=80),
            "segments": st.column_config.NumberColumn("Segments", format="%d", width=70),
            "distance_type": st.column_config.TextColumn("Distance", width=70),
            "created_at": st.column_config.DatetimeColumn(
                "Created", format="MM-DD HH:mm", width=95
            ),
        },
    )


def render_lag_warning(overview: pd.DataFrame) -> bool:
    """A warning naming every index that lags behind the data; True when one lags."""
    lag = ixs.lagging_indexes(overview)
    if lag.empty:
        return False
    parts = [
        f"{r.name} ({plural(int(r.unindexed_rows), 'unindexed row')})" for r in lag.itertuples()
    ]
    feedback.show(
        "warning",
        "Index lags behind the data: " + ", ".join(parts) + ". Queries scan the unindexed rows "
        "without the index. Optimize the indexes to add the new rows.",
    )
    return True
