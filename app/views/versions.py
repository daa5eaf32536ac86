import streamlit as st

st.title("versions")
st.info("Coming soon.")
