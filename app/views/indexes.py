import streamlit as st

st.title("indexes")
st.info("Coming soon.")
