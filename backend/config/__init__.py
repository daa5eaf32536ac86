"""The console's own configuration checks: pure functions over what a configuration file
holds (no I/O, no streamlit), shared by the launcher and the pages."""
