"""Glossary page: search, filter by category, browse A–Z, and read one term (?term=<id>)."""

from __future__ import annotations

import html
from itertools import groupby

import streamlit as st

from content.pages import term_href
from glossary import CATEGORIES, load_terms, search, suggest, terms_by_id
from ui.term_view import render_term
from ui.url_state import seed_from_url, write_to_url

terms = load_terms()
by_id = terms_by_id()


def entry_line(term) -> str:
    link = f'<a href="{html.escape(term_href(term.id))}" target="_self">{html.escape(term.title)}</a>'
    return f"- **{link}** — {html.escape(term.summary)}"


requested = st.query_params.get("term")
if requested:
    term = by_id.get(requested)
    if term is not None:
        render_term(term, by_id)
        st.stop()
    st.title("Glossary")
    close = suggest(requested, limit=5)
    st.warning(
        f"There is no term with the id “{requested[:80]}”. "
        + ("Terms with a close name:" if close else "No term has a name close to it."),
        icon=":material/search_off:",
    )
    for match in close:
        st.page_link(
            "app_pages/glossary.py", label=match.title, query_params={"term": match.id}, help=match.summary
        )
    st.page_link("app_pages/glossary.py", label="Browse all terms", icon=":material/list:", query_params={})
    st.stop()

st.title("Glossary")
st.caption(
    f"{len(terms)} terms in {len(CATEGORIES)} categories. This box lists every matching term, best "
    "first, within the category picked; the sidebar's box searches the same way but opens the best "
    "match at once. Search ignores case, hyphens and plurals, knows acronyms, and forgives typos."
)
query = st.text_input(
    "Search terms",
    key="q",
    bind="query-params",
    type="search",
    live="250ms",
    max_chars=200,
    placeholder="Try: KV cache, GQA, HBM bandwidth, quantisation, tensr core",
)
left, right = st.columns([3, 2])
with left:
    category_ids = ["all", *CATEGORIES]
    rejected = seed_from_url("category", category_ids, "all")
    if rejected is not None:  # kept until the reader picks a category
        st.session_state["glossary_unknown_category"] = rejected[:60]
    category = st.selectbox(
        "Category",
        category_ids,
        format_func=lambda c: "All categories" if c == "all" else CATEGORIES[c],
        key="category",
    )
    write_to_url("category", category, "all")
    unknown_category = st.session_state.get("glossary_unknown_category")
    if unknown_category is not None and category == "all":
        st.warning(
            f"There is no category “{unknown_category}”, so every category is shown. The categories: "
            + ", ".join(CATEGORIES)
            + ".",
            icon=":material/search_off:",
        )
    elif unknown_category is not None:
        del st.session_state["glossary_unknown_category"]
with right:
    order = st.segmented_control(
        "Arrange", ["A–Z", "By category"], default="A–Z", key="arrange", bind="query-params"
    )

shown = search(query, limit=len(terms)) if query and query.strip() else terms
if category != "all":
    shown = [t for t in shown if t.category == category]

if query and query.strip():
    if not shown:
        st.info(
            "No term matches that search. Try an acronym (GQA), a plainer word, or clear the category filter."
        )
    else:
        st.caption(f"{len(shown)} matching term(s), best first.")
        st.markdown("\n".join(entry_line(t) for t in shown[:40]), unsafe_allow_html=True)
elif order == "By category":
    for cat, label in CATEGORIES.items():
        group = [t for t in shown if t.category == cat]
        if group:
            st.header(f"{label} ({len(group)})")
            st.markdown("\n".join(entry_line(t) for t in group), unsafe_allow_html=True)
else:

    def first_letter(term) -> str:
        char = term.title[0].upper()
        return char if char.isalpha() else "0–9"

    groups = [(letter, list(group)) for letter, group in groupby(shown, key=first_letter)]
    anchors = {letter: "letter-" + ("digits" if letter == "0–9" else letter.lower()) for letter, _ in groups}
    st.markdown(" · ".join(f"[{letter}](#{anchors[letter]})" for letter, _ in groups))
    for letter, group in groups:
        st.header(letter, anchor=anchors[letter])
        st.markdown("\n".join(entry_line(t) for t in group), unsafe_allow_html=True)
