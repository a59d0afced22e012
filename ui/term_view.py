"""How one glossary term is drawn: title, names, summary, linked body, related, sources."""

from __future__ import annotations

import functools
import html
from urllib.parse import urlparse

import streamlit as st

from content.pages import GLOSSARY, PAGES, term_href
from glossary import Term, load_terms
from glossary.linking import autolink, build_matcher
from glossary.sources import is_secondary


@functools.lru_cache(maxsize=1)
def _matcher():
    return build_matcher(load_terms())


@functools.lru_cache(maxsize=512)
def linked_body(term: Term) -> str:
    """The term's body with other terms linked on first mention (cached per term)."""
    return autolink(term.body, term, load_terms(), lambda t: term_href(t.id), _matcher())


def _source_label(url: str) -> str:
    parsed = urlparse(url)
    host = parsed.netloc.removeprefix("www.")
    path = parsed.path.rstrip("/")
    tail = path.rsplit("/", 1)[-1] if path else ""
    return f"{host} › {tail}" if tail else host


def _taught_in(term: Term) -> None:
    """Links to the lesson steps that teach this term (the first step that links it)."""
    from lessons import lessons_teaching

    teaching = lessons_teaching(term.id)
    if not teaching:
        return
    lessons_page = next(p for p in PAGES if p.url_path == "lessons")
    for lesson in teaching:
        number = lesson.step_teaching(term.id)
        st.page_link(
            lessons_page.path,
            label=f"Taught in lesson {lesson.number}: {lesson.title} (step {number})",
            icon=":material/school:",
            query_params={"lesson": lesson.id, "step": str(number)},
        )


def render_term(term: Term, terms_by_id: dict[str, Term]) -> None:
    """Draw ``term`` in the main column."""
    st.page_link(GLOSSARY.path, label="All terms", icon=":material/arrow_back:", query_params={})
    st.title(term.title)
    badges = [f":blue-badge[{term.category_label}]"]
    badges += [f":gray-badge[{name}]" for name in term.aliases]
    st.markdown(" ".join(badges))
    st.markdown(f"**{term.summary}**")
    if term.diagram:
        from ui.diagram_view import show_diagram

        show_diagram(term.diagram, key=f"diagram-{term.id}")
    st.markdown(linked_body(term), unsafe_allow_html=True)

    if term.simulator is not None:
        page = next((p for p in PAGES if p.url_path == term.simulator.page), None)
        if page is not None:
            params = {"preset": term.simulator.preset} if term.simulator.preset else {}
            st.page_link(
                page.path, label=f"Try it: {page.title}", icon=":material/science:", query_params=params
            )

    _taught_in(term)

    related = [terms_by_id[r] for r in term.related if r in terms_by_id]
    if related:
        st.header("Related terms", divider="gray")
        columns = st.columns(min(len(related), 3))
        for i, other in enumerate(related):
            with columns[i % len(columns)]:
                st.page_link(
                    GLOSSARY.path, label=other.title, query_params={"term": other.id}, help=other.summary
                )

    st.header("Sources", divider="gray")
    st.markdown(
        "\n".join(
            f"- [{_source_label(url)}]({html.escape(url, quote=True)})"
            + (" (secondary source)" if is_secondary(url) else "")
            for url in term.sources
        )
    )
