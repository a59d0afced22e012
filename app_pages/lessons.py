"""Lessons: the course index, one step at a time, the summary, review, the record and "Plan a class".

The address says where the reader is, and is written before anything is answered:
``?lesson=<id>&step=<n>`` opens a step (``step=done`` its summary; ``seq=`` a planned class's
order), ``?plan=1`` the class planner, ``?review=1`` the questions due for review, ``?record=1``
the printable record. Progress is kept in this browser (ui/lesson_view.py).
"""

from __future__ import annotations

import streamlit as st

from lessons import LessonError, load_lessons
from ui.lesson_view import (
    DONE,
    course_index,
    ensure_address,
    parse_sequence,
    plan_a_class,
    render_missing_step,
    render_record,
    render_review,
    render_step,
    render_summary,
    sequence_text,
    sync_browser,
)

try:
    lessons = load_lessons()
except LessonError as exc:  # a broken lesson file: say which, never a traceback
    st.error(f"The course could not be loaded: {exc}")
    st.stop()

UNKNOWN_LESSON_KEY = "lessons_unknown_id"  # an unknown ?lesson= id, said until a lesson opens
query = st.query_params
wanted = query.get("lesson")
if wanted and any(item.id == wanted for item in lessons):
    st.session_state.pop(UNKNOWN_LESSON_KEY, None)
lesson = next((item for item in lessons if item.id == wanted), None)
if query.get("plan"):
    ensure_address({"plan": "1"})
    plan_a_class(lessons)
elif query.get("review"):
    ensure_address({"review": "1"})
    render_review(lessons)
elif query.get("record"):
    ensure_address({"record": "1"})
    render_record(lessons)
elif lesson is None:
    # The address is rewritten without the unknown id (and the browser component reruns the
    # page), so the notice is kept in the session until the learner opens a lesson.
    if wanted:
        st.session_state[UNKNOWN_LESSON_KEY] = str(wanted)[:60]
    ensure_address({})
    if st.session_state.get(UNKNOWN_LESSON_KEY):
        st.warning(
            f"There is no lesson called “{st.session_state[UNKNOWN_LESSON_KEY]}”; here is the course.",
            icon=":material/search_off:",
        )
    sync_browser()
    course_index(lessons)
else:
    step = str(query.get("step") or "1").strip()
    sequence = parse_sequence(query.get("seq"), lessons)
    if step == DONE:
        ensure_address({"lesson": lesson.id, "step": DONE})
        render_summary(lesson, lessons)
    elif step.isdigit() and 1 <= int(step) <= len(lesson.steps):
        address = {"lesson": lesson.id, "step": step}
        if sequence:
            address["seq"] = sequence_text(sequence)
        ensure_address(address)
        render_step(lesson, int(step), sequence)
    else:
        render_missing_step(lesson, step)
