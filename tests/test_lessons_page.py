"""The Lessons page in Streamlit's harness: the course index, every step of every lesson (predict
questions revealed), answering lesson 1 right and wrong, the summary with its recap, "Try another"
on every question with variants, a missing step, a planned sequence, review and the record."""

from __future__ import annotations

import pytest

from lessons import load_lessons
from tests import pages
from ui.lesson_view import PROGRESS_KEY, REVEALED_KEY, plain_prompt, widget_key

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
    key = widget_key(question)
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
        label = "Next →" if step is not lesson.steps[-1] else "Finish"  # Finish opens step=done
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


def test_a_missed_question_is_recapped_with_a_link_back_and_counted_as_missed_after_a_retry():
    """Lesson 1 wrong, then every question retried right: the first tries still count, and the
    summary recaps each missed question with a link back to its step."""
    lesson, at = _walk(right=False)
    record = at.session_state[PROGRESS_KEY]
    for question in lesson.questions:
        entry = record["answers"][f"{lesson.id}/{question.id}"]
        assert entry["first_correct"] is False and entry["attempts"] == 1
        assert f"{lesson.id}/{question.id}" in record["review"]
    links = [link.proto for link in at.get("page_link") if link.proto.label.startswith("Back to step")]
    assert len(links) == len(lesson.questions)
    assert all(f"lesson={lesson.id}" in link.query_string for link in links)


def test_try_again_draws_new_numbers_and_keeps_the_first_try():
    lesson = next(item for item in LESSONS if any(q.variants() for q in item.questions))
    number, step = next(
        (n, s) for n, s in enumerate(lesson.steps, 1) if any(q.variants() for q in s.questions)
    )
    question = next(q for q in step.questions if q.variants())
    at = open_page(lesson=lesson.id, step=str(number))
    if step.predict is not None and step.predict is not question:
        _answer(at, lesson, step.predict, right=True)
    _answer(at, lesson, question, right=False)
    label = next(b.label for b in at.button if b.label.startswith("Try again"))
    assert label == "Try again on new numbers"
    next(b for b in at.button if b.label == label).click()
    at.run()
    entry = at.session_state[PROGRESS_KEY]["answers"][f"{lesson.id}/{question.id}"]
    assert entry["open"] and entry["variant"] != question.variant_key
    variant = question.variant(entry["variant"])
    _answer(at, lesson, variant, right=True)
    entry = at.session_state[PROGRESS_KEY]["answers"][f"{lesson.id}/{question.id}"]
    assert entry["correct"] and not entry["first_correct"] and entry["attempts"] == 2
    assert any(variant.prompt[:40] in m.value for m in at.markdown)


def _steps_with_variants():
    return [
        (lesson, n, q)
        for lesson in LESSONS
        for n, s in enumerate(lesson.steps, 1)
        for q in s.questions
        if q.variants()
    ]


@pytest.mark.parametrize(
    ("lesson", "number", "question"),
    _steps_with_variants(),
    ids=[f"{lesson.id}/{q.id}" for lesson, _, q in _steps_with_variants()],
)
def test_try_another_works_on_every_question_with_variants(lesson, number, question):
    """Answer right, press "Try another": the same question comes back unanswered on other inputs,
    with a prompt of its own, and the right answer to that variant grades right."""
    at = open_page(lesson=lesson.id, step=str(number))
    step = lesson.steps[number - 1]
    if step.predict is not None and step.predict is not question:
        _answer(at, lesson, step.predict, right=True)
    for earlier in step.questions:  # a slide-like step asks in order; answer what comes first
        if earlier is question:
            break
        if earlier.kind != "predict":
            _answer(at, lesson, earlier, right=True)
    _answer(at, lesson, question, right=True)
    buttons = [b for b in at.button if b.key == f"another-{lesson.id}/{question.id}"]
    assert buttons, "no Try another button"
    buttons[0].click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    entry = at.session_state[PROGRESS_KEY]["answers"][f"{lesson.id}/{question.id}"]
    variant = question.variant(entry["variant"])
    assert entry["open"] and variant is not None and variant.inputs != question.inputs
    assert any(variant.prompt[:60] in m.value for m in at.markdown), variant.prompt[:60]
    _answer(at, lesson, variant, right=True)
    assert at.session_state[PROGRESS_KEY]["answers"][f"{lesson.id}/{question.id}"]["correct"]


def test_a_step_that_does_not_exist_says_so():
    lesson = LESSONS[0]
    at = open_page(lesson=lesson.id, step="99")
    assert not at.exception
    assert any("there is no step" in w.value for w in at.warning)
    assert not any(m.label == "Right at the first try" for m in at.metric)


def test_next_follows_a_planned_sequence():
    lesson_a, lesson_b = LESSONS[0], LESSONS[2]
    seq = f"{lesson_a.id}:2,{lesson_b.id}:3,{lesson_a.id}:1"
    at = open_page(lesson=lesson_a.id, step="2", seq=seq)
    assert not at.exception
    next(b for b in at.button if b.label == "Next →").click()
    at.run()
    assert at.query_params["lesson"] == lesson_b.id and at.query_params["step"] == "3"
    next(b for b in at.button if b.label == "Next →").click()
    at.run()
    assert at.query_params["lesson"] == lesson_a.id and at.query_params["step"] == "1"
    assert not any(b.label == "Next →" for b in at.button), "the end of the plan"


def test_review_asks_due_questions_on_new_numbers():
    from lessons import progress as course

    lesson = next(item for item in LESSONS if any(q.variants() for q in item.questions))
    question = next(q for q in lesson.questions if q.variants())
    record = course.empty()
    course.record_answer(
        record, f"{lesson.id}/{question.id}", variant=question.variant_key, response=0, correct=False, now=0.0
    )
    at = pages.AppTest.from_file(pages.APP, default_timeout=120)
    at.query_params["review"] = "1"
    at.session_state[PROGRESS_KEY] = record
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    entry = at.session_state[PROGRESS_KEY]["answers"][f"{lesson.id}/{question.id}"]
    assert entry["open"] and entry["variant"] != question.variant_key
    variant = question.variant(entry["variant"])
    _answer(at, lesson, variant, right=True)
    assert at.session_state[PROGRESS_KEY]["review"][f"{lesson.id}/{question.id}"]["box"] == 1


def test_the_record_lists_every_lesson_with_its_score():
    lesson, at = _walk(right=True)
    at.query_params.clear()
    at.query_params["record"] = "1"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.table[0].value
    assert list(table["Lesson"]) == [f"{item.number}. {item.title}" for item in LESSONS]
    row = table.iloc[0]
    n = len(lesson.questions)
    assert row["Right at the first try"] == f"{n} of {n}" and row["Completed"] != "—"


def test_plan_a_class_gives_links_a_handout_and_an_answer_key():
    at = open_page(plan="1")
    assert not at.exception
    downloads = at.get("download_button")
    assert len(downloads) == 3
    lesson = LESSONS[0]
    links = [link for link in at.get("page_link") if "step" in link.proto.query_string]
    assert len(links) >= len(lesson.steps)
    assert all("seq=" in link.proto.query_string for link in links)


def test_handout_has_no_answers_and_the_key_has_all_of_them():
    from ui.lesson_view import handout

    chosen = [(LESSONS[2], step, n) for n, step in enumerate(LESSONS[2].steps, start=1)]
    questions = handout(chosen, with_answers=False)
    key = handout(chosen, with_answers=True)
    assert "**Answer:**" not in questions and "[[" not in questions
    assert key.count("**Answer:**") == len(LESSONS[2].questions)


def test_an_unknown_lesson_falls_back_to_the_course_and_says_so_after_the_rerun():
    """The address is rewritten without the unknown id and the page reruns (the browser record
    arrives): the notice stays until the learner opens a lesson (issue 26)."""
    at = open_page(lesson="nope", step="x")
    assert not at.exception
    assert any("no lesson called “nope”" in w.value for w in at.warning)
    at.query_params.clear()
    at.run()
    assert any("no lesson called “nope”" in w.value for w in at.warning)


def test_an_empty_answer_is_said_until_the_learner_answers():
    """ "Choose or type an answer first." stays through later reruns (it vanished after about
    1.8 s when the browser's record arrived), and goes once an answer is submitted."""
    lesson = LESSONS[0]
    question = _ordered(lesson.steps[0])[0]
    key = widget_key(question)
    at = open_page(lesson=lesson.id, step="1")
    next(b for b in at.button if b.proto.form_id == f"form-{key}").click()
    at.run()
    assert any("answer first" in w.value for w in at.warning)
    at.run()  # a rerun the learner did not cause
    assert any("answer first" in w.value for w in at.warning)
    _answer(at, lesson, question, right=True)
    assert not any("answer first" in w.value for w in at.warning)


def test_a_choice_questions_radio_group_is_named_by_the_question():
    """The radio group's accessible name (its label) carries the question, not only "Your answer"."""
    lesson = LESSONS[0]
    question = next(q for q in _ordered(lesson.steps[0]) + list(lesson.questions) if q.options)
    number = next(n for n, s in enumerate(lesson.steps, start=1) if question in s.questions)
    at = open_page(lesson=lesson.id, step=str(number))
    label = at.radio(key=f"input-{widget_key(question)}").label
    assert plain_prompt(question.prompt)[:40] in label and "[[" not in label


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
