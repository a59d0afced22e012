"""Home page: what the guide is, who it is for, a map of the pages and a path to start on."""

from __future__ import annotations

import streamlit as st

from content import load_page
from glossary import load_terms, terms_by_id
from ui.controls import first_preset
from ui.nav import GLOSSARY, PAGES

page = load_page("home")


by_id = terms_by_id()

st.title(page.meta["title"])
st.subheader(page.meta["tagline"])
st.markdown(page.body)

st.header("Start here", divider="gray")
st.caption("Twelve terms that build on each other, from the chip to a served model. About 20 minutes.")
path = [by_id[i] for i in page.meta.get("start_here", []) if i in by_id]
columns = st.columns(3)
for step, term in enumerate(path, start=1):
    with columns[(step - 1) % 3], st.container(border=True):
        st.page_link(GLOSSARY.path, label=f"{step}. {term.title}", query_params={"term": term.id})
        st.caption(term.summary)

st.header("Pages", divider="gray")
cards = [info for info in PAGES if not info.default]
columns = st.columns(3)
for i, info in enumerate(cards):
    with columns[i % 3], st.container(border=True):
        st.page_link(info.path, label=info.title, icon=info.icon)
        st.caption(info.blurb)
        example = first_preset(info)
        if example is not None:
            st.page_link(
                info.path,
                label=f"Try: {example['label']}",
                icon=":material/play_arrow:",
                query_params={"preset": example["id"]},
            )

terms = load_terms()
categories = sorted({t.category for t in terms})
st.caption(f"The glossary holds {len(terms)} terms across {len(categories)} categories.")
