import streamlit as st

st.title("transactions")
st.info("Coming soon.")
