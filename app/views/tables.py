import streamlit as st

st.title("tables")
st.info("Coming soon.")
