"""The Lessons page in Streamlit's harness: the course index, every step of every lesson (predict
questions revealed), answering lesson 1 right and wrong, the summary, and Plan a class."""

from __future__ import annotations

import pytest

from lessons import load_lessons
from tests import pages
from ui.lesson_view import REVEALED_KEY

PAGE = "app_pages/lessons.py"
LESSONS = load_lessons()
STEPS = [(lesson.id, n) for lesson in LESSONS for n in range(1, len(lesson.steps) + 1)]


def open_page(**query: str):
    return pages.open_page(PAGE, **query)


def test_the_course_index_lists_every_lesson_with_a_start_link():
    at = open_page()
    assert not at.exception
    titles = " ".join(m.value for m in at.markdown)
    for lesson in LESSONS:
        assert lesson.title in titles


@pytest.mark.parametrize(("lesson_id", "number"), STEPS, ids=[f"{i}-{n}" for i, n in STEPS])
def test_every_step_opens_and_draws_its_view_once_revealed(lesson_id, number):
    lesson = next(item for item in LESSONS if item.id == lesson_id)
    step = lesson.steps[number - 1]
    at = open_page(lesson=lesson_id, step=str(number))
    assert not at.exception, [e.value for e in at.exception]
    assert any(h.value == step.title for h in at.header)
    if step.predict is not None:  # the view waits for a prediction; the teacher can reveal it
        at.session_state[REVEALED_KEY] = {f"{lesson_id}/{step.predict.id}"}
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    if step.view is not None:
        assert at.get("plotly_chart") or at.dataframe or at.info, "the embedded view drew nothing"


def _ordered(step):
    """The step's questions in the order the page asks them (the predict question first)."""
    return ([step.predict] if step.predict else []) + [q for q in step.questions if q.kind != "predict"]


def _answer(at, lesson, question, right: bool) -> None:
    key = f"{lesson.id}/{question.id}"
    if question.is_numeric:
        at.number_input(key=f"input-{key}").set_value(question.answer if right else 1.5 * question.answer + 1)
    else:
        index = question.answer if right else (question.answer + 1) % len(question.options)
        at.radio(key=f"input-{key}").set_value(index)
    next(b for b in at.button if b.proto.form_id == f"form-{key}").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def _walk(right: bool):
    """Answer every question of lesson 1 in one session, step by step, then open the summary."""
    lesson = LESSONS[0]
    at = open_page(lesson=lesson.id, step="1")
    for step in lesson.steps:
        for question in _ordered(step):
            _answer(at, lesson, question, right)
            if right:
                assert any(s.value.startswith("**Right") for s in at.success), question.id
            else:  # the chosen option's own feedback, or how far off the number was
                shown = " ".join(w.value for w in at.warning)
                assert "Not quite" in shown or "Too high" in shown, question.id
                if not question.is_numeric:
                    wrong = question.options[(question.answer + 1) % len(question.options)]
                    assert wrong.feedback.split()[0] in shown
        label = "Next →" if step is not lesson.steps[-1] else "Finish"
        next(b for b in at.button if b.label == label).click()
        at.run()
        assert not at.exception
    return lesson, at


def test_lesson_1_answered_right_scores_full_marks():
    lesson, at = _walk(right=True)
    n = len(lesson.questions)
    assert pages.metrics(at)["Right at the first try"] == f"{n} of {n}"
    assert any("Everything right" in s.value for s in at.success)


def test_lesson_1_answered_wrong_lists_what_to_review():
    lesson, at = _walk(right=False)
    n = len(lesson.questions)
    assert pages.metrics(at)["Right at the first try"] == f"0 of {n}"
    review = next(m.value for m in at.markdown if "](glossary?term=" in m.value)
    missed_terms = {t for q in lesson.questions for t in q.terms}
    assert any(f"term={t})" in review for t in missed_terms)


def test_plan_a_class_gives_links_a_handout_and_an_answer_key():
    at = open_page(plan="1")
    assert not at.exception
    downloads = at.get("download_button")
    assert len(downloads) == 3
    lesson = LESSONS[0]
    assert sum(1 for link in at.get("page_link") if "step" in link.proto.query_string) >= len(lesson.steps)


def test_handout_has_no_answers_and_the_key_has_all_of_them():
    from ui.lesson_view import handout

    chosen = [(LESSONS[2], step, n) for n, step in enumerate(LESSONS[2].steps, start=1)]
    questions = handout(chosen, with_answers=False)
    key = handout(chosen, with_answers=True)
    assert "**Answer:**" not in questions and "[[" not in questions
    assert key.count("**Answer:**") == len(LESSONS[2].questions)


def test_an_unknown_lesson_falls_back_to_the_course():
    at = open_page(lesson="nope", step="x")
    assert not at.exception
    assert any("no lesson called" in i.value for i in at.info)


def test_a_term_page_links_the_lessons_that_teach_it():
    at = pages.open_page("app_pages/glossary.py", term="kv-cache")
    assert not at.exception
    links = [link.proto for link in at.get("page_link") if link.proto.label.startswith("Taught in lesson")]
    teaching = [lesson for lesson in LESSONS if "kv-cache" in lesson.terms]
    assert len(links) == len(teaching) >= 1
    assert all("lesson=" in link.query_string and "step=" in link.query_string for link in links)


def test_home_starts_the_course_one_click_away():
    at = pages.open_page(None)
    assert not at.exception
    first = next(link.proto for link in at.get("page_link") if link.proto.label.startswith("Lesson 1:"))
    assert f"lesson={LESSONS[0].id}" in first.query_string and "step=1" in first.query_string


def test_in_presenter_view_a_step_is_a_slide_words_left_chart_right():
    lesson = next(item for item in LESSONS if item.id == "memory-hierarchy")
    number = next(n for n, s in enumerate(lesson.steps, 1) if s.view is not None and s.predict is None)
    at = open_page(lesson=lesson.id, step=str(number), present="true")
    assert not at.exception
    columns = list(at.columns)
    holding = [i for i, c in enumerate(columns) if c.get("plotly_chart")]
    assert holding, "the chart sits in a column beside the words"
    left = columns[holding[0] - 1]  # the outermost column with the chart, and the one before it
    first_words = " ".join(lesson.steps[number - 1].body.split()[:4])
    assert not left.get("plotly_chart") and first_words in " ".join(m.value for m in left.markdown)
    # Outside presenter view the same step flows top to bottom: no column holds the chart.
    at = open_page(lesson=lesson.id, step=str(number))
    assert not at.exception and at.get("plotly_chart")
    assert not [c for c in at.columns if c.get("plotly_chart")]
