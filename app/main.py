"""Router: every page of the console (app/nav.py), inside the frame shared by all of them."""

from app.nav import console_pages, render_frame

render_frame(console_pages()).run()
