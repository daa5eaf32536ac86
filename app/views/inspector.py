import streamlit as st

st.title("inspector")
st.info("Coming soon.")
