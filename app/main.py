"""Router: every page of the console, and the connection sidebar shared by all of them."""

from pathlib import Path

import streamlit as st

from components.connection import render_connection_sidebar, render_health_banner

VIEWS = Path(__file__).parent / "views"

st.set_page_config(
    page_title="Lance Namespace Console", page_icon=":material/database:", layout="wide"
)
page = st.navigation(
    [
        st.Page(
            VIEWS / "tables.py",
            title="Namespaces & tables",
            icon=":material/folder_open:",
            url_path="tables",
            default=True,
        ),
        st.Page(
            VIEWS / "versions.py", title="Versions", icon=":material/history:", url_path="versions"
        ),
        st.Page(
            VIEWS / "indexes.py",
            title="Indexes",
            icon=":material/manage_search:",
            url_path="indexes",
        ),
        st.Page(
            VIEWS / "search.py",
            title="Search & tune",
            icon=":material/travel_explore:",
            url_path="search",
        ),
        st.Page(
            VIEWS / "transfer.py",
            title="Import & export",
            icon=":material/swap_vert:",
            url_path="transfer",
        ),
        st.Page(
            VIEWS / "transactions.py",
            title="Transactions",
            icon=":material/receipt_long:",
            url_path="transactions",
        ),
        st.Page(
            VIEWS / "inspector.py",
            title="HTTP inspector",
            icon=":material/lan:",
            url_path="inspector",
        ),
    ]
)
render_connection_sidebar()
render_health_banner()
page.run()
