"""Browser end-to-end tests (Playwright + Debian Chromium against `streamlit run`)."""
