"""Home page: what the guide is, the course as the place to start, the pages, and a glossary tour."""

from __future__ import annotations

import streamlit as st

from content import load_page

# The title first, before the glossary and the course are loaded: on a cold start the reader sees
# the page begin at once (bench.cold_start measures launch to this first heading).
page = load_page("home")
st.title(page.meta["title"])
st.markdown(f"**{page.meta['tagline']}**")  # a tagline, not a heading: the next heading is an h2


def _rest() -> None:
    from content.pages import GLOSSARY, PAGES
    from glossary import load_terms, terms_by_id
    from lessons import outline
    from ui.controls import first_preset, term_markdown
    from ui.lesson_view import LESSONS_PAGE, step_link

    by_id = terms_by_id()
    st.markdown(term_markdown(page.body))

    st.header("Start here: the course", divider="gray")
    lessons = outline()  # titles and minutes only: the Lessons page computes the numbers
    if lessons:
        first = lessons[0]
        st.page_link(
            LESSONS_PAGE.path,
            label=f"Lesson 1: {first.title} ({first.minutes} min)",
            icon=":material/play_circle:",
            query_params=step_link(first, 1),
        )
        st.caption(
            f"{len(lessons)} lessons, about {sum(lesson.minutes for lesson in lessons) / 60:.1f} hours: "
            "predict, then let the simulator answer."
        )
        for i, lesson in enumerate(lessons):
            if i % 2 == 0:
                columns = st.columns(2)
            columns[i % 2].page_link(
                LESSONS_PAGE.path,
                label=f"{lesson.number}. {lesson.title}",
                query_params=step_link(lesson, 1),
            )

    st.header("Pages", divider="gray")
    cards = [info for info in PAGES if not info.default]
    for i, info in enumerate(cards):
        if i % 3 == 0:  # one row of columns at a time, so a phone stacks the cards in reading order
            columns = st.columns(3)
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

    st.header("A glossary tour", divider="gray")
    st.caption(page.section("tour"))
    path = [by_id[i] for i in page.meta.get("start_here", []) if i in by_id]
    for step, term in enumerate(path, start=1):
        if step % 3 == 1:
            columns = st.columns(3)
        with columns[(step - 1) % 3], st.container(border=True):
            st.page_link(GLOSSARY.path, label=f"{step}. {term.title}", query_params={"term": term.id})
            st.caption(term.summary)

    terms = load_terms()
    categories = sorted({t.category for t in terms})
    st.caption(f"The glossary holds {len(terms)} terms across {len(categories)} categories.")


_rest()
