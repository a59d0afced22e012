"""How a lesson is drawn: the course index, one step (prose, predict-then-reveal, live view, quiz),
the summary, and the "Plan a class" handout. The lessons page only wires these together.

Answers live in session state under ``ANSWERS_KEY``: ``{"<lesson>/<question>": {"response",
"correct", "first_correct", "attempts"}}``; the first attempt is what the score counts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import streamlit as st

from content import load_page
from content.pages import PAGES
from content.schema import page_params
from glossary import terms_by_id
from lessons import Lesson, Outline, Question, Step, grade, load_lessons, relative_error
from ui.controls import term_markdown
from ui.presenter import is_presenting
from ui.state import PageState, current_url
from ui.views import get_view

ANSWERS_KEY = "lesson_answers"
REVEALED_KEY = "lesson_revealed"
LESSONS_PAGE = next(p for p in PAGES if p.url_path == "lessons")


def answers() -> dict[str, dict[str, Any]]:
    """This session's answers (created on first use)."""
    return st.session_state.setdefault(ANSWERS_KEY, {})


def _qkey(lesson: Lesson, question: Question) -> str:
    return f"{lesson.id}/{question.id}"


def progress(lesson: Lesson) -> tuple[int, int, int]:
    """(answered, right at the first try, questions) for ``lesson`` in this session."""
    given = answers()
    answered = [given[_qkey(lesson, q)] for q in lesson.questions if _qkey(lesson, q) in given]
    return len(answered), sum(1 for a in answered if a["first_correct"]), len(lesson.questions)


def step_link(lesson: Lesson | Outline, number: int) -> dict[str, str]:
    """Query parameters that open step ``number`` (1-based) of ``lesson``."""
    return {"lesson": lesson.id, "step": str(number)}


# -- the course index ----------------------------------------------------------------------------


def course_index(lessons: Sequence[Lesson]) -> None:
    """Every lesson with its minutes, objectives and this session's progress."""
    page = load_page("lessons")
    st.title(page.meta["title"])
    st.markdown(term_markdown(page.body))
    total_minutes = sum(lesson.minutes for lesson in lessons)
    total_questions = sum(len(lesson.questions) for lesson in lessons)
    st.caption(f"{len(lessons)} lessons · about {total_minutes / 60:.1f} hours · {total_questions} questions")
    for lesson in lessons:
        answered, right, count = progress(lesson)
        with st.container(border=True):
            left, right_column = st.columns([5, 2], vertical_alignment="center")
            left.markdown(f"#### {lesson.number}. {lesson.title}")
            left.caption(f"{lesson.minutes} minutes · {len(lesson.steps)} steps · {count} questions")
            left.markdown("\n".join(f"- {objective}" for objective in lesson.objectives))
            if answered:
                right_column.progress(
                    answered / count, text=f"{answered} of {count} answered, {right} right first time"
                )
            right_column.page_link(
                LESSONS_PAGE.path,
                label="Continue" if answered else "Start",
                icon=":material/play_arrow:",
                query_params=step_link(lesson, 1),
            )
    st.page_link(
        LESSONS_PAGE.path, label="Plan a class", icon=":material/event_note:", query_params={"plan": "1"}
    )


# -- one step --------------------------------------------------------------------------------------


def _go(lesson_id: str, number: int) -> None:
    st.query_params["lesson"] = lesson_id
    st.query_params["step"] = str(number)


def _embed(lesson: Lesson, step: Step) -> None:
    view = step.view
    if view is None:
        return
    page_file = next(p for p in PAGES if p.url_path == view.page).file.stem
    preset = next(p for p in load_page(page_file).meta["presets"] if p["id"] == view.preset)
    ns = f"lesson-{lesson.id}-{step.id}"
    state = PageState(
        page_params()[view.page], [preset], ns=ns, url=False, initial=preset.get("params") or {}
    )
    with st.container(border=True):
        if view.controls:
            columns = st.columns(min(len(view.controls), 4))
            for i, key in enumerate(view.controls):
                state.widget(key, container=columns[i % len(columns)])
        get_view(view.page, view.view).render(state, st, ns)
        if view.caption:
            st.caption(term_markdown(view.caption))
        page = next(p for p in PAGES if p.url_path == view.page)
        st.page_link(
            page.path,
            label=f"Open in the full simulator: {page.title}",
            icon=":material/open_in_new:",
            query_params=state.query(),
        )


def _number_text(value: float, unit: str) -> str:
    if value != 0 and (abs(value) >= 1e6 or abs(value) < 1e-3):
        text = f"{value:,.3g}"
    elif abs(value) >= 100:
        text = f"{value:,.0f}"
    else:
        text = f"{value:,.3g}"
    return f"{text} {unit}" if unit and unit not in ("x", "count") else text


def _show_result(question: Question, record: dict[str, Any]) -> None:
    response = record["response"]
    if question.is_numeric:
        off = relative_error(question, response)
        verdict = "Right" if record["correct"] else ("Too high" if off > 0 else "Too low")
        how_far = "" if record["correct"] else f" — {abs(off):.0%} {'over' if off > 0 else 'under'}"
        (st.success if record["correct"] else st.warning)(
            f"**{verdict}.** You said {_number_text(response, question.unit)}; the model gives "
            f"{_number_text(question.answer, question.unit)}{how_far} "
            f"(within {question.tolerance:.0%} counts as right)."
        )
    else:
        chosen = question.options[response]
        if record["correct"]:
            st.success(f"**Right:** {term_markdown(chosen.text)}")
        else:
            st.warning(
                f"**Not quite:** {term_markdown(chosen.text)}\n\n{term_markdown(chosen.feedback)}\n\n"
                f"**The answer:** {term_markdown(question.options[question.answer].text)}"
            )
    st.markdown(term_markdown(question.explanation))


def _record(key: str, question: Question, response: Any) -> None:
    given = answers()
    correct = grade(question, response)
    previous = given.get(key)
    given[key] = {
        "response": response,
        "correct": correct,
        "first_correct": previous["first_correct"] if previous else correct,
        "attempts": (previous["attempts"] if previous else 0) + 1,
    }


def _question(lesson: Lesson, question: Question, number: int) -> bool:
    """Ask ``question``; returns whether it has been answered (or revealed by the teacher)."""
    key = _qkey(lesson, question)
    given = answers().get(key)
    revealed = key in st.session_state.get(REVEALED_KEY, set())
    label = "Predict first" if question.kind == "predict" else f"Question {number}"
    with st.container(border=True):
        st.markdown(f"**{label}.** {term_markdown(question.prompt)}")
        if given is None and not revealed:
            if is_presenting():
                for i, option in enumerate(question.options):
                    st.markdown(f"{chr(65 + i)}. {term_markdown(option.text)}")
                if st.button("Reveal the answer", key=f"reveal-{key}", type="primary"):
                    st.session_state.setdefault(REVEALED_KEY, set()).add(key)
                    st.rerun()
                return False
            with st.form(f"form-{key}", border=False, enter_to_submit=True):
                if question.is_numeric:
                    response = st.number_input(
                        f"Your answer ({question.unit})",
                        value=None,
                        step=None,
                        format="%g",
                        key=f"input-{key}",
                        placeholder="type a number, then press Enter",
                    )
                else:
                    response = st.radio(
                        "Your answer",
                        range(len(question.options)),
                        index=None,
                        format_func=lambda i: question.options[i].text,
                        key=f"input-{key}",
                    )
                submitted = st.form_submit_button(
                    "Commit my prediction" if question.kind == "predict" else "Check", type="primary"
                )
            if submitted:
                if response is None:
                    st.info("Choose or type an answer first.")
                    return False
                _record(key, question, int(response) if not question.is_numeric else float(response))
                st.rerun()
            return False
        if given is not None:
            _show_result(question, given)
            if not given["correct"] and st.button("Try again", key=f"retry-{key}"):
                del answers()[key]
                st.rerun()
        else:
            if question.is_numeric:
                st.success(f"**The model gives** {_number_text(question.answer, question.unit)}.")
            else:
                st.success(f"**The answer:** {term_markdown(question.options[question.answer].text)}")
            st.markdown(term_markdown(question.explanation))
        return True


def render_step(lesson: Lesson, number: int) -> None:
    """Step ``number`` (1-based) of ``lesson``, with previous/next navigation."""
    steps = lesson.steps
    step = steps[number - 1]
    top = st.columns([6, 2], vertical_alignment="center")
    top[0].page_link(LESSONS_PAGE.path, label="All lessons", icon=":material/arrow_back:", query_params={})
    with top[1]:
        st.caption(f"Lesson {lesson.number} of {len(load_lessons())} · {lesson.minutes} min")
    st.progress(number / len(steps), text=f"Step {number} of {len(steps)}")
    if not is_presenting():
        st.title(f"{lesson.number}. {lesson.title}")
        if number == 1:
            st.markdown(
                "**You will be able to:**\n" + "\n".join(f"- {objective}" for objective in lesson.objectives)
            )
    st.header(step.title, divider="gray")
    # On a projector the step is a slide: the words and the prediction on the left, the chart
    # large on the right, so one screen holds the step. Elsewhere they follow each other.
    if is_presenting():
        words, visual = st.columns([2, 3], gap="large")
    else:
        words = visual = st.container()
    predict = step.predict
    quiz_number = sum(
        1 for s in steps[: number - 1] for q in s.questions if q.kind != "predict"
    )  # numbering continues across steps
    unlocked = True
    with words:
        st.markdown(term_markdown(step.body))
        if predict is not None:
            unlocked = _question(lesson, predict, 0)
            if not unlocked:
                st.caption(
                    "Reveal the answer to show the chart."
                    if is_presenting()
                    else "Commit a prediction to see the chart and the answer."
                )
    if unlocked:
        with visual:
            _embed(lesson, step)
            if step.reveal:
                st.markdown(term_markdown(step.reveal))
            for question in step.questions:
                if question.kind != "predict":
                    quiz_number += 1
                    _question(lesson, question, quiz_number)
    nav = st.columns([1, 1, 3])
    if number > 1:
        nav[0].button(
            "← Previous", key="lesson-prev", on_click=_go, args=(lesson.id, number - 1), width="stretch"
        )
    if number < len(steps):
        nav[1].button(
            "Next →",
            key="lesson-next",
            type="primary",
            on_click=_go,
            args=(lesson.id, number + 1),
            width="stretch",
        )
    else:
        nav[1].button(
            "Finish",
            key="lesson-finish",
            type="primary",
            on_click=_go,
            args=(lesson.id, number + 1),
            width="stretch",
        )


def render_summary(lesson: Lesson, lessons: Sequence[Lesson]) -> None:
    """Score and "what to review" (the terms of the questions missed at the first try)."""
    answered, right, count = progress(lesson)
    st.page_link(LESSONS_PAGE.path, label="All lessons", icon=":material/arrow_back:", query_params={})
    st.title(f"{lesson.number}. {lesson.title}: done")
    cols = st.columns(3)
    cols[0].metric("Answered", f"{answered} of {count}")
    cols[1].metric("Right at the first try", f"{right} of {count}")
    cols[2].metric("Score", f"{right / count:.0%}" if count else "—")
    given = answers()
    missed = [
        q
        for q in lesson.questions
        if _qkey(lesson, q) in given and not given[_qkey(lesson, q)]["first_correct"]
    ]
    unanswered = [q for q in lesson.questions if _qkey(lesson, q) not in given]
    known = terms_by_id()
    review = [t for q in missed for t in q.terms if t in known]
    review = list(dict.fromkeys(review))
    if review:
        st.subheader("What to review", divider="gray")
        st.markdown(term_markdown(" · ".join(f"[[{t}]]" for t in review)))
    elif answered == count:
        st.success("Everything right at the first try.")
    if unanswered:
        first = next(
            i for i, s in enumerate(lesson.steps, start=1) if any(q in unanswered for q in s.questions)
        )
        st.page_link(
            LESSONS_PAGE.path,
            label=f"{len(unanswered)} question(s) left — go to step {first}",
            query_params=step_link(lesson, first),
        )
    following = [other for other in lessons if other.number == lesson.number + 1]
    if following:
        st.page_link(
            LESSONS_PAGE.path,
            label=f"Next lesson: {following[0].number}. {following[0].title}",
            icon=":material/arrow_forward:",
            query_params=step_link(following[0], 1),
        )


# -- planning a class ------------------------------------------------------------------------------

_LINK = re.compile(r"\[\[([a-z0-9-]+)(?:\|([^\]]+))?\]\]")


def _plain(text: str) -> str:
    """Term links as their words, for a printed handout."""
    known = terms_by_id()
    return _LINK.sub(
        lambda m: " ".join(
            (m.group(2) or (known[m.group(1)].title if m.group(1) in known else m.group(1))).split()
        ),
        text,
    )


def handout(chosen: Sequence[tuple[Lesson, Step, int]], *, with_answers: bool) -> str:
    """Markdown: the chosen steps' questions (and, for the key, answers and explanations)."""
    lines = ["# " + ("Answer key" if with_answers else "Questions"), ""]
    current = None
    for lesson, step, number in chosen:
        if lesson.id != current:
            lines += [f"## Lesson {lesson.number}: {lesson.title}", ""]
            current = lesson.id
        lines += [f"### Step {number}: {step.title}", ""]
        for question in step.questions:
            kind = "Predict" if question.kind == "predict" else "Question"
            lines.append(f"**{kind}.** {_plain(question.prompt)}")
            for i, option in enumerate(question.options):
                lines.append(f"- {chr(65 + i)}. {_plain(option.text)}")
            if question.is_numeric and not with_answers:
                lines.append(f"- Answer (in {question.unit}): ____________")
            if with_answers:
                if question.is_numeric:
                    lines.append(
                        f"- **Answer:** {_number_text(question.answer, question.unit)} "
                        f"(±{question.tolerance:.0%})"
                    )
                else:
                    lines.append(f"- **Answer:** {chr(65 + question.answer)}")
                lines.append(f"- {_plain(question.explanation)}")
            lines.append("")
    return "\n".join(lines)


def plan_a_class(lessons: Sequence[Lesson]) -> None:
    """Pick lessons and steps; get the ordered step links and a printable handout with its key."""
    page = load_page("lessons")
    st.page_link(LESSONS_PAGE.path, label="All lessons", icon=":material/arrow_back:", query_params={})
    st.title("Plan a class")
    st.markdown(term_markdown(page.section("plan")))
    by_id = {lesson.id: lesson for lesson in lessons}
    picked = st.multiselect(
        "Lessons",
        list(by_id),
        default=[lessons[0].id],
        format_func=lambda i: f"{by_id[i].number}. {by_id[i].title}",
        key="plan_lessons",
    )
    chosen: list[tuple[Lesson, Step, int]] = []
    for lesson_id in picked:
        lesson = by_id[lesson_id]
        titles = [f"{n}. {s.title}" for n, s in enumerate(lesson.steps, start=1)]
        keep = st.multiselect(
            f"Steps of lesson {lesson.number}", titles, default=titles, key=f"plan_steps_{lesson.id}"
        )
        chosen += [(lesson, s, n) for n, s in enumerate(lesson.steps, start=1) if titles[n - 1] in keep]
    if not chosen:
        st.info("Pick at least one lesson and step.")
        return
    minutes = sum(lesson.minutes / len(lesson.steps) for lesson, _, _ in chosen)  # spread evenly over steps
    st.subheader(f"The class: {len(chosen)} steps, about {math.ceil(minutes)} minutes", divider="gray")
    links = []
    for i, (lesson, step, number) in enumerate(chosen, start=1):
        url = current_url(step_link(lesson, number) | {"present": "true"})
        links.append(f"{i}. {lesson.title} — {step.title}: {url}")
        st.page_link(
            LESSONS_PAGE.path,
            label=f"{i}. Lesson {lesson.number}, step {number}: {step.title}",
            query_params=step_link(lesson, number) | {"present": "true"},
        )
    c1, c2, c3 = st.columns(3)
    c1.download_button(
        "Handout (questions)",
        handout(chosen, with_answers=False),
        "handout.md",
        "text/markdown",
        key="plan_handout",
    )
    c2.download_button(
        "Answer key", handout(chosen, with_answers=True), "answer-key.md", "text/markdown", key="plan_key"
    )
    c3.download_button("Step links", "\n".join(links), "class-links.txt", "text/plain", key="plan_links")
