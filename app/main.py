"""Router: every page of the console (app/nav.py), inside the frame shared by all of them."""

from app.nav import console_pages, run_frame

run_frame(console_pages())
