"""The sidebar search that every page shows: type a term, press Enter, land on it."""

from __future__ import annotations

import streamlit as st

from content.pages import GLOSSARY
from glossary import search

SIDEBAR_KEY = "sidebar_search"
_LAST_JUMP_KEY = "sidebar_search_last_jump"


def sidebar_search() -> None:
    """Search box in the sidebar; Enter jumps to the best match on the glossary page."""
    with st.sidebar:
        query = st.text_input(
            "Search the glossary",
            key=SIDEBAR_KEY,
            placeholder="e.g. KV cache, HBM, bandwith",
            type="search",
            max_chars=200,
            persist_state="session",  # keep the query across the page switch it triggers
            help="Opens the best-matching term and lists other matches here. The Glossary "
            "page's own box searches the same way and lists every match.",
        )
        query = (query or "").strip()
        if not query:
            st.session_state[_LAST_JUMP_KEY] = ""
            return
        results = search(query, limit=6)
        if not results:
            st.caption("No term matches that. Try an acronym (GQA) or a plainer word.")
            return
        if st.session_state.get(_LAST_JUMP_KEY) != query:
            st.session_state[_LAST_JUMP_KEY] = query
            st.switch_page(GLOSSARY.path, query_params={"term": results[0].id})
        if len(results) > 1:
            st.caption("Other matches")
        for term in results[1:]:
            st.page_link(GLOSSARY.path, label=term.title, query_params={"term": term.id})
