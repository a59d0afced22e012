"""GPU Field Guide: the entry point. Builds the page list and the sidebar search."""

from __future__ import annotations

from pathlib import Path

import pandas  # noqa: F401  imported once here: two sessions' first st.dataframe raced on a lazy import
import streamlit as st

from content.pages import PAGES
from ui.housekeeping import collect_now_and_then
from ui.presenter import is_presenting, presenter_toggle
from ui.search_box import sidebar_search
from ui.state import note_page

ROOT = Path(__file__).resolve().parent

st.set_page_config(
    page_title="GPU Field Guide",
    page_icon=str(ROOT / "static" / "favicon.png"),  # a local file: a material icon is fetched from Google
    layout="wide",
    initial_sidebar_state="collapsed" if is_presenting() else "auto",
)

sections: dict[str, list[st.Page]] = {}
for info in PAGES:
    # The default page is served at "/"; its own name is kept free for the /home redirect below.
    url_path = f"{info.url_path}-page" if info.default else info.url_path
    page = st.Page(
        ROOT / info.path, title=info.title, icon=info.icon, url_path=url_path, default=info.default
    )
    sections.setdefault(info.section, []).append(page)
    if info.default:
        home = page
pages = [page for group in sections.values() for page in group]


def _to_home() -> None:
    """``/home`` (the home page's own name) answers with the home page, which lives at ``/``."""
    st.switch_page(home)


# Hidden from the page list: a typed or old link to /home is not "Page not found".
pages.append(st.Page(_to_home, title=home.title, url_path="home", visibility="hidden"))
# A flat page list: Streamlit's sectioned list nests <li> in a <div> (axe: list, listitem).
navigation = st.navigation(pages)
# Each page its own browser-tab title (what a screen reader announces first on arrival).
if navigation.url_path:  # the home page keeps the guide's name
    st.set_page_config(page_title=f"{navigation.title} · GPU Field Guide")
sidebar_search()
presenter_toggle()
note_page(navigation.url_path)
navigation.run()
collect_now_and_then()  # memory stays bounded; a page that stops early skips it, the next run pays
